/* cli.h: shared pieces of the command line front end: exit codes, targets, commands. */
#ifndef GOTOP_CLI_H
#define GOTOP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "gotop/events.h"

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
/* Stops a spawned command that still runs: SIGTERM, then SIGKILL after 2 s; reaps it. */
void cli_target_stop(struct cli_target *t);
/* Reaps a spawned child if it exited (non-blocking unless wait). */
void cli_target_reap(struct cli_target *t, int wait);

/* Options shared by `record` and the live UI: target, event(s), rate, stack copy, Go. */
#define CLI_MAX_EVENTS 8
struct cli_sampling {
	pid_t pid;
	struct event_spec events[CLI_MAX_EVENTS];
	size_t nevents;          /* 0 until -e: then cpu-clock by cli_sampling_finish */
	int use_freq;
	uint64_t freq, period;
	uint32_t stack_size;     /* --stack-size; 0: cli_stack_size chooses */
	int repair, go;
	int bpf;                 /* Go: read each sample's goroutine at the sample (gobpf) */
	unsigned label_latency_ms;
};
enum { CLI_OPT_STACK = 0x200, CLI_OPT_NO_REPAIR, CLI_OPT_NO_GO, CLI_OPT_LATENCY, CLI_OPT_NO_BPF };
/* Drain interval while the BPF program reads goroutines at the sample: only label
 * sets are read at the drain, and they do not change (immutable Go objects). After a
 * drain that read nothing (the program copied the label sets and their strings made at
 * run time, the constants were known), the next may wait CLI_BPF_IDLE_DRAIN_MS, the
 * interval without Go (sampler_opts.drain_idle_ms; issue 6: on a Go target at 1 kHz,
 * record's own CPU went from 3.68 to 2.73 ms per 1000 samples; 500 ms rather than 250:
 * the sampling thread woke 2 times a second instead of 5 on labels.go at 1 kHz, and
 * record took 0.91 of the CPU, paired over 5 rounds, the live UI 0.94). */
#define CLI_BPF_DRAIN_MS 50
#define CLI_BPF_IDLE_DRAIN_MS 500
/* Its ring (mapped twice into gotop-perf, so it counts double in its resident size):
 * room for two idle drains of records (struct gobpf_rec, 912 bytes with the label
 * set's copy and its run-time strings) at the sampling rate on every CPU (a thread is
 * sampled while it runs), from 256 KiB to 4 MiB. A full ring loses no sample: the
 * sample is read the slow way, and that read makes the next drain a short one. */
#define CLI_BPF_RING_MIN (256u << 10)
#define CLI_BPF_RING_MAX (4u << 20)
#define CLI_SAMPLING_SHORTOPTS "p:e:F:c:"
#define CLI_SAMPLING_LONGOPTS                                                  \
	{ "pid", required_argument, NULL, 'p' },                               \
	{ "event", required_argument, NULL, 'e' },                             \
	{ "freq", required_argument, NULL, 'F' },                              \
	{ "count", required_argument, NULL, 'c' },                             \
	{ "stack-size", required_argument, NULL, CLI_OPT_STACK },              \
	{ "no-repair", no_argument, NULL, CLI_OPT_NO_REPAIR },                 \
	{ "no-go", no_argument, NULL, CLI_OPT_NO_GO },                         \
	{ "label-latency", required_argument, NULL, CLI_OPT_LATENCY },         \
	{ "no-bpf", no_argument, NULL, CLI_OPT_NO_BPF }
/* Usage lines of the shared options (-e says "repeatable" when max_events > 1). */
void cli_sampling_usage(FILE *f, size_t max_events);
void cli_sampling_init(struct cli_sampling *s);
/* Handles getopt_long's result c when it is a shared option: 0 when handled, -1 when
 * it is not one of them, or an EXIT_* code after printing why the value is bad. */
int cli_sampling_option(struct cli_sampling *s, int c, const char *arg, size_t max_events);
/* Defaults what was not given (cpu-clock). */
void cli_sampling_finish(struct cli_sampling *s);

/* Whether the program is a Go binary: path (searched in PATH when it has no '/'), or
 * /proc/PID/exe when path is NULL. Its Go version goes to ver (verlen bytes). */
int cli_is_go_binary(const char *path, pid_t pid, char *ver, size_t verlen);
/* The user-stack bytes per sample: --stack-size, else what the repair needs for the
 * target (go_version: its Go release, NULL when it is not Go; see repair_stack_bytes). */
uint32_t cli_stack_size(const struct cli_sampling *s, const char *go_version);
/* Sets up Go reading for the samplers of a Go target (go_version): the hook, the
 * BPF program unless --no-bpf or it cannot load (why then says why), and the drain
 * interval. Call once, before the samplers are created; so gets the settings. */
struct agg;
struct sampler_opts;
void cli_go_sampling(const struct cli_sampling *s, struct agg *agg, const char *go_version,
		     struct sampler_opts *so, char *why, size_t whylen);

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
int cmd_verify(int argc, char **argv);
/* The live UI (and --batch). */
int cmd_live(int argc, char **argv);

#endif
