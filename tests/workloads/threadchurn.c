/* threadchurn: one long-lived busy thread plus a stream of short-lived threads that burn CPU and exit.
 *
 * Used to check that the sampler follows threads that appear and disappear: the CPU time
 * it attributes to the process should cover (nearly) all of utime+stime in /proc/PID/stat,
 * which the kernel keeps summing for threads that have already exited.
 *
 *   steady_worker   runs for the whole lifetime, always busy
 *   churn_worker    each burns 20 to 50 ms of its own CPU time (CLOCK_THREAD_CPUTIME_ID),
 *                   then exits; main keeps CHURN_LIVE of them alive at a time, replacing
 *                   each as soon as it ends, so a new thread starts every few ms
 *
 * Both burn in burn_cpu(). Built with -O1 -g -fno-omit-frame-pointer (Makefile.am).
 * Usage: threadchurn [SECONDS]   (default 3; fractions allowed). Prints nothing.
 */

#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#define CHURN_LIVE 3	/* short-lived threads alive at once */

void burn_cpu(unsigned long iterations);
void *steady_worker(void *arg);
void *churn_worker(void *arg);

volatile unsigned long threadchurn_sink;
static atomic_int stop_steady;

__attribute__((noinline)) void
burn_cpu(unsigned long iterations)
{
	volatile unsigned long acc = iterations | 1;

	for (unsigned long i = 0; i < iterations; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	threadchurn_sink += acc;
}

static double
clock_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void *
steady_worker(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_steady))
		burn_cpu(100000);
	return NULL;
}

/* arg carries the CPU time to burn, in milliseconds. */
__attribute__((noinline)) void *
churn_worker(void *arg)
{
	double budget = (double)(unsigned long)arg / 1000.0;
	double start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);

	while (clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start < budget)
		burn_cpu(20000);
	return NULL;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 3.0;
	pthread_t steady;
	pthread_t live[CHURN_LIVE];
	int running[CHURN_LIVE] = { 0 };
	unsigned int rng = 12345;
	double end;
	int n = 0;

	if (!(seconds > 0) || seconds > 86400)
		seconds = 3.0;
	end = clock_seconds(CLOCK_MONOTONIC) + seconds;
	if (pthread_create(&steady, NULL, steady_worker, NULL) != 0)
		return 1;

	/* live[] is a ring: join the oldest churner, start its replacement in the same slot. */
	while (clock_seconds(CLOCK_MONOTONIC) < end) {
		int slot = n % CHURN_LIVE;
		unsigned long ms;

		if (running[slot])
			pthread_join(live[slot], NULL);
		rng = rng * 1103515245u + 12345u;
		ms = 20 + (rng >> 16) % 31;
		running[slot] = pthread_create(&live[slot], NULL, churn_worker, (void *)ms) == 0;
		if (!running[slot])
			break;
		n++;
	}
	for (int i = 0; i < CHURN_LIVE; i++)
		if (running[i])
			pthread_join(live[i], NULL);
	atomic_store(&stop_steady, 1);
	pthread_join(steady, NULL);
	return 0;
}
