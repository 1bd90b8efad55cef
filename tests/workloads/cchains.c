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
 * The length of a round varies at random (a unit of 0.5 to 1.5 times CCHAINS_UNIT, the same for
 * both hot functions of the round). With a fixed length, a round took about 0.67 ms here, two
 * thirds of a 1 kHz sampling period: the samples fall at only two phases of the round, which
 * drift slowly, so the split of a short profile depends on where they drift (CI saw 2.6 to
 * 3.25). Made to take 1 ms, the fixed round gave 1.12 to 2.10 in 14 profiles of 3 s; the
 * random length gave 1.89 to 2.23 in 8.
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

#define CCHAINS_UNIT 200000UL	/* mean iterations of one unit of hot work, roughly 0.2 ms */

unsigned long hot_ab(unsigned long seed, unsigned long unit);
unsigned long hot_c(unsigned long seed, unsigned long unit);
unsigned long chain_b(unsigned long seed, unsigned long unit);
unsigned long chain_a(unsigned long seed, unsigned long unit);
unsigned long chain_c(unsigned long seed, unsigned long unit);

/* Results end here so the compiler must compute them. */
volatile unsigned long cchains_sink;

/* The two hot loops are the same code; only the iteration count differs. */
__attribute__((noinline, noclone)) unsigned long
hot_ab(unsigned long seed, unsigned long unit)
{
	volatile unsigned long acc = seed | 1;

	for (unsigned long i = 0; i < 2 * unit; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

__attribute__((noinline, noclone)) unsigned long
hot_c(unsigned long seed, unsigned long unit)
{
	volatile unsigned long acc = seed | 1;

	for (unsigned long i = 0; i < unit; i++)
		acc = acc * 6364136223846793005UL + 1442695040888963407UL;
	return acc;
}

__attribute__((noinline, noclone)) unsigned long
chain_b(unsigned long seed, unsigned long unit)
{
	return hot_ab(seed, unit) ^ 0x5a5a;
}

__attribute__((noinline, noclone)) unsigned long
chain_a(unsigned long seed, unsigned long unit)
{
	return chain_b(seed + 1, unit) + 3;
}

__attribute__((noinline, noclone)) unsigned long
chain_c(unsigned long seed, unsigned long unit)
{
	return hot_c(seed + 2, unit) + 5;
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
	unsigned long rng = 0x9e3779b97f4a7c15UL;

	if (!(seconds > 0) || seconds > 86400)
		seconds = 3.0;
	end = now() + seconds;
	while (now() < end) {
		unsigned long unit;

		/* xorshift64 (Marsaglia 2003); unit uniform in [UNIT/2, 3*UNIT/2) */
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		unit = CCHAINS_UNIT / 2 + rng % CCHAINS_UNIT;
		seed = chain_a(seed, unit);
		seed = chain_c(seed, unit);
	}
	cchains_sink = seed;
	return 0;
}
