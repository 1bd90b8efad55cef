/* spin.c: CPU-bound benchmark workload: a fixed amount of work through a known call chain,
 * started by SIGUSR1, reporting its own wall and CPU time. */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: spin [-t THREADS] [-n UNITS] [-W UNITS] [-w]
 *   -n UNITS    work units in all (default 1000); a unit is a fixed number of hash rounds
 *   -t THREADS  threads sharing the units (default 1)
 *   -W UNITS    untimed warm-up units first, on the main thread (default 0)
 *   -w          wait for SIGUSR1 before starting (so a profiler can attach first)
 * Prints one line: "units=N wall=SECONDS cpu=SECONDS" (cpu = utime+stime of the process
 * during the work, from getrusage), then exits.
 * Built with frame pointers and without inlining of the chain, so that FP callchains are
 * complete: main -> worker -> spin_outer -> spin_mid -> spin_leaf.
 */

#define ROUNDS_PER_UNIT 200000

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t spin_leaf(uint64_t x, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

__attribute__((noinline)) static uint64_t spin_mid(uint64_t x)
{
	int i;

	for (i = 0; i < 100; i++)
		x = spin_leaf(x + (uint64_t)i, ROUNDS_PER_UNIT / 200);
	return x;
}

__attribute__((noinline)) static uint64_t spin_outer(uint64_t x)
{
	x = spin_mid(x);
	return spin_mid(x ^ 0x9e3779b97f4a7c15ULL);
}

static long units_per_thread;

static void *worker(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg * 0x2545f4914f6cdd1dULL + 1;
	long u;

	for (u = 0; u < units_per_thread; u++)
		x = spin_outer(x);
	sink = x;
	return NULL;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	long units = 1000, nthreads = 1, warm = 0, t;
	int c, wait_sig = 0;
	pthread_t *th;
	struct timespec a, b;
	struct rusage r0, r1;
	sigset_t set;

	while ((c = getopt(argc, argv, "n:t:W:w")) != -1) {
		switch (c) {
		case 'n':
			units = atol(optarg);
			break;
		case 't':
			nthreads = atol(optarg);
			break;
		case 'W':
			warm = atol(optarg);
			break;
		case 'w':
			wait_sig = 1;
			break;
		default:
			fprintf(stderr, "usage: spin [-t THREADS] [-n UNITS] [-W UNITS] [-w]\n");
			return 2;
		}
	}
	if (units < 1 || nthreads < 1 || nthreads > 64 || warm < 0) {
		fprintf(stderr, "spin: bad -n or -t\n");
		return 2;
	}
	if (wait_sig) {
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		printf("ready\n");
		fflush(stdout);
		sigwait(&set, &sig);
	}
	if (warm) {
		units_per_thread = warm;
		worker((void *)0);
	}
	units_per_thread = (units + nthreads - 1) / nthreads;
	th = calloc((size_t)nthreads, sizeof(*th));
	if (!th)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &a);
	getrusage(RUSAGE_SELF, &r0);
	for (t = 1; t < nthreads; t++)
		if (pthread_create(&th[t], NULL, worker, (void *)(uintptr_t)t)) {
			fprintf(stderr, "spin: pthread_create failed\n");
			return 1;
		}
	worker((void *)0);
	for (t = 1; t < nthreads; t++)
		pthread_join(th[t], NULL);
	clock_gettime(CLOCK_MONOTONIC, &b);
	getrusage(RUSAGE_SELF, &r1);
	printf("units=%ld wall=%.6f cpu=%.6f\n", units_per_thread * nthreads,
	       (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
	       tv_s(r1.ru_utime) - tv_s(r0.ru_utime) + tv_s(r1.ru_stime) - tv_s(r0.ru_stime));
	free(th);
	return 0;
}
