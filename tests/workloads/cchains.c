/* cchains: a C workload with known call chains and a known 2:1 CPU split between them.
 *
 * Chains (leaf last), each round of the loop in main running both once:
 *
 *   main -> chain_a -> chain_b -> hot_ab     about 2/3 of the CPU time
 *   main -> chain_c -> hot_c                 about 1/3 of the CPU time
 *
 * hot_ab runs twice as many iterations of the same loop body as hot_c, so the split comes
 * from the iteration counts, not from timing. chain_a, chain_b and chain_c spend almost
 * nothing themselves; nearly every sample has hot_ab or hot_c as its leaf.
 *
 * Built with -O1 -g -fno-omit-frame-pointer -fno-inline (Makefile.am). All functions are
 * global and noinline/noclone, so their names are in .symtab unchanged, and each hot function
 * keeps a frame (push %rbp; mov %rsp,%rbp, with its accumulator in a volatile local), so a
 * frame-pointer walk from inside the hot loop finds every caller. Each chain function does
 * work after its call returns, so no call becomes a tail call.
 *
 * Usage: cchains [SECONDS]   (default 3; fractions allowed). Prints nothing.
 */

#include "config.h"

#include <stdlib.h>
#include <time.h>

#define CCHAINS_UNIT 200000UL	/* iterations of one unit of hot work, roughly 0.2 ms */

unsigned long hot_ab(unsigned long seed);
unsigned long hot_c(unsigned long seed);
unsigned long chain_b(unsigned long seed);
unsigned long chain_a(unsigned long seed);
unsigned long chain_c(unsigned long seed);

/* Results end here so the compiler must compute them. */
volatile unsigned long cchains_sink;

/* The two hot loops are the same code; only the iteration count differs. */
__attribute__((noinline, noclone)) unsigned long
hot_ab(unsigned long seed)
{
	volatile unsigned long acc = seed | 1;

	for (unsigned long i = 0; i < 2 * CCHAINS_UNIT; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

__attribute__((noinline, noclone)) unsigned long
hot_c(unsigned long seed)
{
	volatile unsigned long acc = seed | 1;

	for (unsigned long i = 0; i < CCHAINS_UNIT; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

__attribute__((noinline, noclone)) unsigned long
chain_b(unsigned long seed)
{
	return hot_ab(seed) ^ 0x5a5a;
}

__attribute__((noinline, noclone)) unsigned long
chain_a(unsigned long seed)
{
	return chain_b(seed + 1) + 3;
}

__attribute__((noinline, noclone)) unsigned long
chain_c(unsigned long seed)
{
	return hot_c(seed + 2) + 5;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? strtod(argv[1], NULL) : 3.0;
	double end;
	unsigned long seed = 1;

	if (!(seconds > 0) || seconds > 86400)
		seconds = 3.0;
	end = now() + seconds;
	while (now() < end) {
		seed = chain_a(seed);
		seed = chain_c(seed);
	}
	cchains_sink = seed;
	return 0;
}
