/* cli.h: shared pieces of the command line front end: exit codes, targets, commands. */
#ifndef GOTOP_CLI_H
#define GOTOP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit codes (documented in --help and gotop-perf.1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,       /* a run-time failure, e.g. the profile could not be written */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_TARGET = 3,     /* no such process, a kernel thread, or the command failed to start */
	EXIT_PERM = 4,       /* not permitted (perf_event_paranoid, capabilities, ptrace) */
	EXIT_EVENT = 5,      /* the event is unknown or this machine cannot count it */
};

/* The process being profiled: an existing PID, or a command we start. */
struct cli_target {
	pid_t pid;
	int spawned;         /* we forked it (-- COMMAND) */
	int go_fd;           /* write end of the pipe that lets the child exec */
	int err_fd;          /* read end: the child's errno if exec failed, EOF if it worked */
	int exit_status;     /* for spawned targets, after cli_target_reap */
};

/* Checks that pid can be profiled: exists, is not a kernel thread. On failure
 * prints one line and returns an EXIT_* code; 0 when fine. */
int cli_check_pid(pid_t pid);
/* Forks argv[0] stopped before exec (run cli_target_go after attaching). 0 or EXIT_*. */
int cli_target_spawn(struct cli_target *t, char **argv);
/* Lets a spawned child exec. */
void cli_target_go(struct cli_target *t);
/* Reaps a spawned child if it exited (non-blocking unless wait). */
void cli_target_reap(struct cli_target *t, int wait);

/* Whether the program is a Go binary: path (searched in PATH when it has no '/'), or
 * /proc/PID/exe when path is NULL. */
int cli_is_go_binary(const char *path, pid_t pid);

/* Prints "gotop-perf: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Parses a positive number with an optional unit-less suffix check; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);
int cli_parse_seconds(const char *s, double *out);

/* Signal flag set by SIGINT, SIGTERM, SIGHUP (installed by cli_install_signals). */
extern volatile int cli_stop_signal;
void cli_install_signals(void);

int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
/* The live UI (and --batch). */
int cmd_live(int argc, char **argv);

#endif
