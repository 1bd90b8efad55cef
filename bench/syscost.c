/* syscost.c: what the machine charges for the primitives the Go reader is built from:
 * process_vm_readv (one and several iovecs) and a thread wakeup, in microseconds of CPU. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: syscost [N]   (N iterations per figure, default 20000)
 * Forks a child that sleeps with a 4 KiB buffer, then times from the parent:
 *   vm_readv_8        one process_vm_readv of 8 bytes
 *   vm_readv_512      one process_vm_readv of 512 bytes (about a runtime.g)
 *   vm_readv_4x8      one process_vm_readv with 4 remote iovecs of 8 bytes
 *   wakeup            one eventfd write that wakes a thread blocked in poll, and its
 *                     answer back (a round trip: two wakeups, two context switches)
 *   timer_wakeup      one poll() that sleeps 1 ms on its timeout (N/40 of them), as a
 *                     sampling thread that drains every few milliseconds does
 * Prints "name microseconds" lines: CPU time of this process (both threads) per operation,
 * the median of 5 batches of N/5. CPU time, not wall time, so that other load on the
 * machine does not count.
 */

static char target_buf[4096];

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int efd_ping, efd_pong;

static void *ponger(void *arg)
{
	struct pollfd p = { efd_ping, POLLIN, 0 };
	uint64_t v;

	(void)arg;
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			return NULL;
		if (read(efd_ping, &v, sizeof(v)) != sizeof(v))
			continue;
		if (v == 2)
			return NULL;
		v = 1;
		if (write(efd_pong, &v, sizeof(v)) != sizeof(v))
			return NULL;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000, per, i;
	pid_t child;
	char buf[512];
	double t[5];
	int b, k;
	struct iovec local, remote[4], locals[4];
	const char *names[] = { "vm_readv_8", "vm_readv_512", "vm_readv_4x8", "wakeup",
				"timer_wakeup" };
	pthread_t th;
	uint64_t v;

	if (n < 5)
		n = 5;
	per = n / 5;
	memset(target_buf, 1, sizeof(target_buf));
	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	if (child < 0)
		return 1;
	efd_ping = eventfd(0, 0);
	efd_pong = eventfd(0, 0);
	pthread_create(&th, NULL, ponger, NULL);
	for (k = 0; k < 5; k++) {
		long iters = k == 4 ? (per / 40 > 0 ? per / 40 : 1) : per;

		for (b = 0; b < 5; b++) {
			double a = now_us();

			for (i = 0; i < iters; i++) {
				ssize_t r = 0;

				switch (k) {
				case 0:
				case 1:
					local.iov_base = buf;
					local.iov_len = k == 0 ? 8 : 512;
					remote[0].iov_base = target_buf;
					remote[0].iov_len = local.iov_len;
					r = process_vm_readv(child, &local, 1, remote, 1, 0);
					break;
				case 2: {
					int j;

					for (j = 0; j < 4; j++) {
						locals[j].iov_base = buf + 8 * j;
						locals[j].iov_len = 8;
						remote[j].iov_base = target_buf + 1024 * j;
						remote[j].iov_len = 8;
					}
					r = process_vm_readv(child, locals, 4, remote, 4, 0);
					break;
				}
				case 3:
					v = 1;
					if (write(efd_ping, &v, sizeof(v)) != sizeof(v) ||
					    read(efd_pong, &v, sizeof(v)) != sizeof(v))
						r = -1;
					break;
				case 4:
					r = poll(NULL, 0, 1);
					break;
				}
				if (r < 0) {
					fprintf(stderr, "syscost: %s: %s\n", names[k], strerror(errno));
					kill(child, SIGKILL);
					return 1;
				}
			}
			t[b] = (now_us() - a) / (double)iters;
		}
		qsort(t, 5, sizeof(t[0]), cmp_double);
		printf("%s %.2f\n", names[k], t[2]);
	}
	v = 2;
	if (write(efd_ping, &v, sizeof(v)) == sizeof(v))
		pthread_join(th, NULL);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return 0;
}
