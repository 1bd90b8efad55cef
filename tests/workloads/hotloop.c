/* hotloop.c: functions whose hot spot is on one known source line, for the annotate view's
 * tests: hl_loop spends its time on the line marked HOT LOOP; hl_inline in code of
 * hl_mix inlined at the line marked INLINE SITE, on the line marked INLINED BODY. The
 * markers are what the tests look for, so the lines may move. Runs for argv[1] seconds
 * (default: until killed). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) uint64_t hl_mix(uint64_t x)
{
	x ^= x >> 29; x *= 0xbf58476d1ce4e5b9ULL; x ^= x >> 32; x *= 0x94d049bb133111ebULL; x ^= x >> 31; return x; /* INLINED BODY */
}

__attribute__((noinline)) uint64_t hl_loop(uint64_t n)
{
	uint64_t s = 1;

	for (uint64_t i = 0; i < n; i++) s = s * 6364136223846793005ULL + (i ^ (s >> 17)); /* HOT LOOP */
	return s;
}

__attribute__((noinline)) uint64_t hl_inline(uint64_t n)
{
	uint64_t s = 1;

	for (uint64_t i = 0; i < n; i++)
		s = hl_mix(s + i); /* INLINE SITE */
	return s;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0;
	struct timespec t0, t;
	volatile uint64_t sink = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		sink += hl_loop(20000000);
		sink += hl_inline(10000000);
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (secs > 0 && (double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 >= secs)
			break;
	}
	printf("%llu\n", (unsigned long long)sink);
	return 0;
}
