/* drift: a C workload whose stack keeps changing, so that nearly every sample is a stack
 * that no sample of the last seconds had: the decaying window's forgetting (src/live/live.c,
 * forget) has old entries to drop.
 *
 *   main -> a (x I) -> b (x J) -> c (x K) -> spin     I, J, K in 0..29
 *
 * a, b and c call themselves I, J and K times, so each (I, J, K) is a stack of its own;
 * spin runs about 0.3 ms, then the next triple comes. The 27,000 stacks take about 8 s
 * to go round, and come back in the same order.
 *
 * Usage: drift [SECONDS]   (default 3). Prints nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

#define DEPTH 30

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin(void)
{
	unsigned long i, x = sink;

	for (i = 0; i < 100000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
}

/* Each calls itself n more times, then the next level; the work after the call keeps
 * every frame (no tail call). */
__attribute__((noinline)) static void c(int n)
{
	if (n > 0)
		c(n - 1);
	else
		spin();
	sink++;
}

__attribute__((noinline)) static void b(int n, int k)
{
	if (n > 0)
		b(n - 1, k);
	else
		c(k);
	sink++;
}

__attribute__((noinline)) static void a(int n, int j, int k)
{
	if (n > 0)
		a(n - 1, j, k);
	else
		b(j, k);
	sink++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0, end = now() + secs;
	int i = 0, j = 0, k = 0;

	while (now() < end) {
		a(i, j, k);
		if (++k == DEPTH) {
			k = 0;
			if (++j == DEPTH) {
				j = 0;
				i = (i + 1) % DEPTH;
			}
		}
	}
	return 0;
}
