/* cputime.c: run a command and write its pid, then its CPU time (from wait4's rusage,
 * microsecond resolution) and wall time, for the benchmarks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage: cputime OUTFILE COMMAND [ARGS...]
 * OUTFILE gets "pid N" as soon as the command is started, then at its end
 * "user=S sys=S wall=S status=N" (user/sys of the command and of any children it waited
 * for, as getrusage/wait4 report them). Exit status: the command's, or 127 if it could
 * not run. SIGINT and SIGTERM are passed on to the command.
 */

static pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	struct rusage ru;
	struct sigaction sa;
	int status = 0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: cputime OUTFILE COMMAND [ARGS...]\n");
		return 2;
	}
	f = fopen(argv[1], "w");
	if (!f) {
		fprintf(stderr, "cputime: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	child = fork();
	if (child < 0) {
		fprintf(stderr, "cputime: fork: %s\n", strerror(errno));
		return 127;
	}
	if (child == 0) {
		fclose(f);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "cputime: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(f, "pid %d\n", (int)child);
	fflush(f);
	while (wait4(child, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "cputime: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	fprintf(f, "user=%.6f sys=%.6f wall=%.6f status=%d\n", tv_s(ru.ru_utime), tv_s(ru.ru_stime),
		(double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
		WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
