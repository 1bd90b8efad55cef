/* evmix: a C workload whose events each come from one known function, for the tests of
 * event modifiers, tracepoints and groups.
 *
 *   main -> mix_round -> spin_user     pure user-space CPU (no system call)
 *   main -> mix_round -> write_null    write(2) of 64 bytes to /dev/null, in a loop
 *   main -> mix_round -> touch_pages   maps 256 KiB of fresh anonymous memory, writes
 *                                      one byte per page (a page fault each), unmaps it
 *
 * A round runs each once. Nearly all of the process's write system calls are made from
 * write_null, and nearly all of its page faults after start-up are taken in touch_pages:
 * that is what the tests check stacks and group members against. spin_user makes most of
 * the user CPU, so a user-only event's samples are mostly there.
 *
 * Built with -O1 -g -fno-omit-frame-pointer -fno-inline (Makefile.am); every function is
 * global and noinline so that frame-pointer walks see each caller.
 *
 * Usage: evmix [SECONDS]   (default 3; fractions allowed). Prints nothing.
 */

#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long evmix_sink;

__attribute__((noinline, noclone)) void spin_user(unsigned long n)
{
	volatile unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++)
		acc = acc * 2862933555777941757UL + 3037000493UL;
	evmix_sink += acc;
}

__attribute__((noinline, noclone)) void write_null(int fd, int n)
{
	static const char buf[64];

	for (int i = 0; i < n; i++)
		if (write(fd, buf, sizeof(buf)) < 0)
			evmix_sink++;
}

__attribute__((noinline, noclone)) void touch_pages(size_t pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, pages * (size_t)ps, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < pages; i++)
		p[i * (size_t)ps] = 1;
	munmap((void *)p, pages * (size_t)ps);
}

__attribute__((noinline, noclone)) void mix_round(int fd)
{
	spin_user(200000);
	write_null(fd, 50);
	touch_pages(64);
	evmix_sink++;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0, end = now() + secs;
	int fd = open("/dev/null", O_WRONLY);

	if (fd < 0)
		return 1;
	while (now() < end)
		mix_round(fd);
	close(fd);
	return 0;
}
