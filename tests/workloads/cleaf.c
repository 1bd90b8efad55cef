/* cleaf: a C workload whose hot function is a frameless leaf, for CFI-based stack repair.
 *
 *   main -> top -> mid -> leaf     nearly all the CPU time, in leaf
 *
 * leaf is compiled without a frame pointer (and calls nothing), so while it runs RBP is
 * still mid's frame and the kernel's frame-pointer walk goes from leaf straight to top:
 * mid is skipped. Its .eh_frame CFI says where its return address is (CFA = RSP + 8), which
 * is what gotop-perf's repair uses to put mid back. The others keep their frame pointers
 * (Makefile.am builds with -fno-omit-frame-pointer).
 *
 * Usage: cleaf [SECONDS]   (default 3). Prints nothing.
 */
#include "config.h"

#include <stdlib.h>
#include <time.h>

unsigned long leaf(unsigned long x);
unsigned long mid(unsigned long x);
unsigned long top(unsigned long x);

__attribute__((noinline, optimize("omit-frame-pointer"))) unsigned long leaf(unsigned long x)
{
	unsigned long i;

	for (i = 0; i < 200000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) unsigned long mid(unsigned long x)
{
	volatile unsigned long keep = leaf(x);

	return keep + 1; /* work after the call: no tail call */
}

__attribute__((noinline)) unsigned long top(unsigned long x)
{
	volatile unsigned long keep = mid(x);

	return keep + 1;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3;
	struct timespec t0, t;
	unsigned long x = 88172645463325252UL;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		x = top(x);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return (int)(x & 1);
}
