/* target.c: the profiled process: attach to a PID, or start a command held before its
 * exec, let it run, reap it, stop it. */
#include "config.h"
#include "gotop/target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gotop/procinfo.h"
#include "gotop/symtab.h"

static void target_clear(struct target *t)
{
	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
}

int target_attach(struct target *t, pid_t pid, const pid_t *tids, size_t ntids, char *why,
		  size_t whylen)
{
	size_t i;
	int k;

	target_clear(t);
	if (pid <= 0) {
		snprintf(why, whylen, "invalid PID %d", (int)pid);
		return -EINVAL;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		snprintf(why, whylen, "no process with PID %d", (int)pid);
		return -ESRCH;
	}
	k = procinfo_is_kthread(pid);
	if (k == -ENOENT || k == -ESRCH) {
		snprintf(why, whylen, "no process with PID %d", (int)pid);
		return -ESRCH;
	}
	if (k == 1) {
		snprintf(why, whylen, "PID %d is a kernel thread: gotop-perf profiles user processes",
			 (int)pid);
		return -EOPNOTSUPP;
	}
	for (i = 0; i < ntids; i++) {
		struct proc_stat st;

		if (procinfo_stat(pid, tids[i], &st)) {
			snprintf(why, whylen, "no thread %d in process %d", (int)tids[i], (int)pid);
			return -ESRCH;
		}
	}
	t->pid = pid;
	return 0;
}

/* The child between fork and exec: waits for the word to exec (go), with null (>= 0) as
 * its stdin, stdout and stderr. Reports an exec failure's errno on err. */
static void __attribute__((noreturn)) child(char **argv, pid_t parent, int go, int err, int null)
{
	char c;
	int e;

	/* When gotop-perf dies without stopping the command (SIGKILL, a crash), the command
	 * gets SIGTERM as at a normal end (target_stop) instead of running on unwatched:
	 * a demo orphaned that way ran on through a CI run. The signal comes when the
	 * forking thread ends, which is the main thread, the last to end; a parent already
	 * gone before the prctl is caught by getppid. */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
		_exit(127);
	if (read(go, &c, 1) != 1)
		_exit(127);
	if (null >= 0)
		for (e = 0; e < 3; e++)
			dup2(null, e); /* the copies are not close-on-exec */
	/* An ignored signal stays ignored across exec: the command gets SIGPIPE as usual. */
	signal(SIGPIPE, SIG_DFL);
	execvp(argv[0], argv);
	e = errno;
	if (write(err, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

int target_spawn(struct target *t, char **argv, int quiet, char *why, size_t whylen)
{
	int p[2], e[2], null = -1, err;
	pid_t pid, parent = getpid();

	target_clear(t);
	if (quiet && (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		err = errno;
		snprintf(why, whylen, "/dev/null: %s", strerror(err));
		return -err;
	}
	/* p: the parent says "exec now"; e: the child reports an exec failure
	 * (close-on-exec, so EOF means the exec worked). */
	if (pipe2(p, O_CLOEXEC)) {
		err = errno;
		snprintf(why, whylen, "pipe: %s", strerror(err));
		goto fail_null;
	}
	if (pipe2(e, O_CLOEXEC)) {
		err = errno;
		snprintf(why, whylen, "pipe: %s", strerror(err));
		goto fail_p;
	}
	/* Output buffered now would be written twice, once by each process. */
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		err = errno;
		snprintf(why, whylen, "fork: %s", strerror(err));
		close(e[0]);
		close(e[1]);
		goto fail_p;
	}
	if (pid == 0) {
		close(p[1]);
		close(e[0]);
		child(argv, parent, p[0], e[1], null);
	}
	close(p[0]);
	close(e[1]);
	if (null >= 0)
		close(null);
	t->pid = pid;
	t->spawned = 1;
	t->go_fd = p[1];
	t->err_fd = e[0];
	return 0;
fail_p:
	close(p[0]);
	close(p[1]);
fail_null:
	if (null >= 0)
		close(null);
	return -err;
}

int target_go(struct target *t)
{
	char c = 'g';
	int err = 0;

	if (t->go_fd < 0)
		return 0;
	if (write(t->go_fd, &c, 1) != 1) {
		/* the child is gone; reaped later */
	}
	close(t->go_fd);
	t->go_fd = -1;
	if (read(t->err_fd, &err, sizeof(err)) == (ssize_t)sizeof(err) && err)
		t->exit_status = -err;
	close(t->err_fd);
	t->err_fd = -1;
	return t->exit_status < 0 ? t->exit_status : 0;
}

void target_reap(struct target *t, int wait)
{
	int status;

	if (!t->spawned)
		return;
	/* Look before reaping (WNOWAIT), and reap only an exit. The verifier's thread traces
	 * the command's threads; a tracer in the real parent's thread group counts as no
	 * reparenting, so a wait here would also take the ptrace stop meant for it (linux
	 * kernel/exit.c wait_consider_task) and leave that thread stopped for good, the
	 * verifier waiting (seen under valgrind in CI: --batch --verify of a command). */
	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOWAIT | (wait ? 0 : WNOHANG)) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				t->spawned = 0; /* reaped by the verifier's thread (its exit while traced) */
			return;
		}
		if (si.si_pid != t->pid)
			return; /* WNOHANG: nothing to report */
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
			break;
		if (!wait)
			return; /* a stop: the tracer's to take */
		{
			struct timespec ts = { 0, 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (waitpid(t->pid, &status, 0) == t->pid) {
		t->spawned = 0;
		if (t->exit_status >= 0)
			t->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	} else if (errno == ECHILD) {
		t->spawned = 0;
	}
}

void target_stop(struct target *t)
{
	int i;

	if (!t->spawned)
		return;
	if (t->go_fd >= 0) {
		close(t->go_fd); /* the child sees EOF and exits without exec */
		t->go_fd = -1;
	}
	if (t->err_fd >= 0) {
		close(t->err_fd);
		t->err_fd = -1;
	}
	target_reap(t, 0);
	if (!t->spawned)
		return;
	kill(t->pid, SIGTERM);
	for (i = 0; i < 200 && t->spawned; i++) {
		struct timespec ts = { 0, 10000000L };

		nanosleep(&ts, NULL);
		target_reap(t, 0);
	}
	if (t->spawned) {
		kill(t->pid, SIGKILL);
		target_reap(t, 1);
	}
}

int target_is_go(const char *path, pid_t pid, char *ver, size_t verlen)
{
	char buf[4096];
	struct symfile *sf;
	int go, err;

	if (!path) {
		snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
	} else if (strchr(path, '/')) {
		snprintf(buf, sizeof(buf), "%s", path);
	} else {
		const char *p = getenv("PATH");

		buf[0] = 0;
		while (p && *p) {
			size_t l = strcspn(p, ":");

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, p, path);
			if (access(buf, X_OK) == 0)
				break;
			buf[0] = 0;
			p += l + (p[l] == ':');
		}
	}
	ver[0] = 0;
	if (!buf[0] || !(sf = symfile_open(buf, &err)))
		return 0;
	go = symfile_go_version(sf) != NULL;
	snprintf(ver, verlen, "%s", go ? symfile_go_version(sf) : "");
	symfile_free(sf);
	return go;
}
