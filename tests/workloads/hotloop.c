/* hotloop.c: functions whose hot spot is on one known source line, for the annotate view's
 * tests: hl_loop spends its time on the line marked HOT LOOP; hl_inline in code of
 * hl_mix inlined at the line marked INLINE SITE, on the line marked INLINED BODY. The
 * markers are what the tests look for, so the lines may move. Runs for argv[1] seconds
 * (default: until killed); SIGALRM ends it, as reading a clock in the loop would put
 * samples in the vDSO. With argv[2], it runs hl_inline until then, hl_loop for a moment,
 * and renames the file argv[2] over argv[0] as it ends: the binary on disk is then not the
 * one that ran (a running executable cannot be written, and a test that renamed it from
 * outside could race the start). */
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

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

static volatile sig_atomic_t done;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

int main(int argc, char **argv)
{
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
	volatile uint64_t sink = 0;

	signal(SIGALRM, on_alarm);
	if (secs)
		alarm(secs);
	if (argc > 2) {
		/* Only hl_inline until the alarm, then hl_loop for a moment: a profiler's first
		 * look at hl_loop comes after the rename. */
		while (!done)
			sink += hl_inline(1000000);
		for (int k = 0; k < 10; k++)
			sink += hl_loop(20000000);
		if (rename(argv[2], argv[0]))
			perror("rename");
		return 0;
	}
	while (!done) {
		sink += hl_loop(20000000);
		sink += hl_inline(10000000);
	}
	return 0;
}
