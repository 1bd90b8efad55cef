/* sigcount: two threads spin while a third sends them real-time signals with tgkill, to check
 * that a tracer passes every signal on (real-time signals are queued, never merged:
 * signal(7)). Usage: sigcount OUTFILE [N [SECONDS]]: sends N signals (default 20000) spread
 * over SECONDS (default 3), waits until all arrived or 2 s more, writes "sent received" to
 * OUTFILE and exits. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t received[2];
static volatile int done;
static volatile pid_t tids[2];
static volatile unsigned long sink;

static void on_rt(int sig)
{
	(void)sig;
	received[syscall(SYS_gettid) == tids[1]]++;
}

static void *spin(void *arg)
{
	sigset_t rt;

	/* main blocked the signal before creating us: only the spinners take it */
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	pthread_sigmask(SIG_UNBLOCK, &rt, NULL);
	tids[(long)arg] = (pid_t)syscall(SYS_gettid);
	while (!done)
		for (int i = 0; i < 1000; i++)
			sink += (unsigned long)i;
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { 0 };
	pthread_t t[2];
	long n = argc > 2 ? atol(argv[2]) : 20000, sent = 0;
	double secs = argc > 3 ? atof(argv[3]) : 3;
	struct timespec gap = { 0, (long)(secs * 1e9 / (double)(n > 0 ? n : 1)) };
	FILE *f;

	if (argc < 2) {
		fprintf(stderr, "usage: sigcount OUTFILE [N [SECONDS]]\n");
		return 2;
	}
	sa.sa_handler = on_rt;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGRTMIN, &sa, NULL);
	/* the sender itself never takes the signals */
	sigset_t rt;
	sigemptyset(&rt);
	sigaddset(&rt, SIGRTMIN);
	pthread_sigmask(SIG_BLOCK, &rt, NULL);
	for (long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, spin, (void *)i);
	usleep(300000);
	for (long i = 0; i < n; i++) {
		while (!tids[i % 2])
			usleep(1000);
		if (syscall(SYS_tgkill, getpid(), tids[i % 2], SIGRTMIN) == 0)
			sent++;
		if (gap.tv_nsec)
			nanosleep(&gap, NULL);
	}
	for (int w = 0; w < 200 && received[0] + received[1] < sent; w++)
		usleep(10000);
	done = 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %d\n", sent, (int)(received[0] + received[1]));
	return fclose(f) != 0;
}
