/* target.h: the process a session profiles: an existing process it attaches to, or a
 * command it starts held before exec, so that counting can begin at the exec. */
#ifndef GOTOP_TARGET_H
#define GOTOP_TARGET_H

#include <stddef.h>
#include <sys/types.h>

struct target {
	pid_t pid;
	int spawned;         /* we forked it and have not reaped it yet */
	int go_fd;           /* write end of the pipe that lets the child exec; -1 when done */
	int err_fd;          /* read end: the child's errno if exec failed, EOF if it worked */
	int exit_status;     /* a spawned command's after target_reap: its exit code, 128 +
	                        the signal that ended it, or -errno when exec failed */
};

/* Attaches to the existing process pid: checks that it exists, is not a kernel thread,
 * and that each of tids (ntids may be 0) is one of its threads. 0, or -EINVAL (pid not
 * positive), -ESRCH (no such process or thread) or -EOPNOTSUPP (a kernel thread), with a
 * one-line reason in why. */
int target_attach(struct target *t, pid_t pid, const pid_t *tids, size_t ntids, char *why,
		  size_t whylen);
/* Forks argv[0] held before its exec (target_go lets it run, once the events are open).
 * With quiet its stdin, stdout and stderr are /dev/null. The child gets SIGTERM when
 * the calling thread ends first. 0, or -errno with a one-line reason in why. */
int target_spawn(struct target *t, char **argv, int quiet, char *why, size_t whylen);
/* Lets a spawned child exec and waits until it has (or failed to). 0, or -errno when
 * the exec failed (also in exit_status). Does nothing for an attached process. */
int target_go(struct target *t);
/* Reaps a spawned child if it exited (blocking until it does with wait). Only exits are
 * taken: ptrace stops stay for the tracer (the verifier's thread). */
void target_reap(struct target *t, int wait);
/* Stops a spawned command that still runs: one never let exec exits at once, the others
 * get SIGTERM, then SIGKILL after 2 s; reaps it. Does nothing for an attached process. */
void target_stop(struct target *t);

/* Whether a program is a Go binary: path (searched in PATH when it has no '/'), or
 * /proc/PID/exe when path is NULL. Its Go version goes to ver (verlen bytes, "" when
 * not Go). */
int target_is_go(const char *path, pid_t pid, char *ver, size_t verlen);

#endif
