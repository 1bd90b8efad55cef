/* evmix: a C workload whose events each come from one known function, for the tests of
 * event modifiers, tracepoints and groups.
 *
 *   main -> mix_round -> spin_user     40 ms of pure user-space CPU (no system call)
 *   main -> mix_round -> write_null    20 ms of write(2)s of 64 bytes to /dev/null
 *   main -> mix_round -> touch_pages   40 ms of mapping fresh anonymous memory, writing
 *                                      one byte per page (a page fault each), unmapping
 *
 * Nearly all of the process's write system calls are made from write_null, and nearly
 * all of its page faults after start-up are taken in touch_pages. The phases last tens of
 * sampling periods, so that a group member's count since the previous sample (taken in
 * the same phase but at the phase's first sample) goes to the phase's function: at
 * 1 kHz, 1 ms of a 40 ms phase goes to the next one. The phases are timed
 * in the thread's CPU time: 40%, 20%, 40% of the round's CPU whatever the machine's load.
 *
 * Built with -O1 -g -fno-omit-frame-pointer -fno-inline (Makefile.am); every function is
 * global and noinline so that frame-pointer walks see each caller.
 *
 * Usage: evmix [SECONDS [STATS [SCALE]]]   (default 3 s; fractions allowed). With STATS
 * (or "-" for none), writes "minflt N" and "csw N" there at the end: the page faults and
 * context switches getrusage(2) counted for the process. SCALE multiplies the phases'
 * lengths (default 1): at 0.01 they last 0.4, 0.2 and 0.4 ms, shorter than a sampling
 * period at 1 kHz, so that a member's count since the leader's previous sample no longer
 * belongs to the phase the sample falls in (what perf's {a,b}:S gives), while a member's
 * own samples still do.
 */

#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long evmix_sink;

static double clock_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* The phases are measured in the thread's CPU time: on a busy machine a phase still
 * spans as many samples of a CPU clock event. */
static double cpu_now(void)
{
	return clock_s(CLOCK_THREAD_CPUTIME_ID);
}

__attribute__((noinline, noclone)) void spin_user(double secs)
{
	double end = cpu_now() + secs;
	volatile unsigned long acc = 1;

	do {
		for (unsigned long i = 0; i < 20000; i++)
			acc = acc * 2862933555777941757UL + 3037000493UL;
	} while (cpu_now() < end);
	evmix_sink += acc;
}

__attribute__((noinline, noclone)) void write_null(int fd, double secs)
{
	static const char buf[64];
	double end = cpu_now() + secs;

	do {
		for (int i = 0; i < 20; i++)
			if (write(fd, buf, sizeof(buf)) < 0)
				evmix_sink++;
	} while (cpu_now() < end);
}

__attribute__((noinline, noclone)) void touch_pages(double secs)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t pages = 64;
	double end = cpu_now() + secs;

	do {
		volatile char *p = mmap(NULL, pages * (size_t)ps, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return;
		for (size_t i = 0; i < pages; i++)
			p[i * (size_t)ps] = 1;
		munmap((void *)p, pages * (size_t)ps);
	} while (cpu_now() < end);
}

__attribute__((noinline, noclone)) void mix_round(int fd, double scale)
{
	spin_user(0.040 * scale);
	write_null(fd, 0.020 * scale);
	touch_pages(0.040 * scale);
	evmix_sink++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0, end = now() + secs;
	double scale = argc > 3 ? atof(argv[3]) : 1.0;
	int fd = open("/dev/null", O_WRONLY);
	struct rusage ru;
	FILE *f;

	if (fd < 0)
		return 1;
	while (now() < end)
		mix_round(fd, scale > 0 ? scale : 1.0);
	close(fd);
	if (argc > 2 && strcmp(argv[2], "-") && getrusage(RUSAGE_SELF, &ru) == 0 &&
	    (f = fopen(argv[2], "w")) != NULL) {
		fprintf(f, "minflt %ld\ncsw %ld\n", ru.ru_minflt, ru.ru_nvcsw + ru.ru_nivcsw);
		fclose(f);
	}
	return 0;
}
