/* procs.h: the running processes this user may profile, the Go ones with their version:
 * what the live UI's process picker lists and what `gotop-perf serve` offers as targets
 * (Prometheus HTTP service discovery). Read from /proc, or from a tree laid out like it. */
#ifndef GOTOP_PROCS_H
#define GOTOP_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* procs_entry.access: what this user may do to the process, as the kernel decides it at
 * the attach. PROCS_PERF: sample it with perf_event_open (the kernel's ptrace check in
 * PTRACE_MODE_READ, and kernel.perf_event_paranoid at most 2 or CAP_PERFMON);
 * PROCS_MEM: read its memory (PTRACE_MODE_ATTACH, which kernel.yama.ptrace_scope also
 * restricts), which Go awareness needs (goroutines, labels). */
enum { PROCS_PERF = 1, PROCS_MEM = 2 };

struct procs_entry {
	pid_t pid;
	uid_t uid;               /* its real uid */
	char comm[64];           /* /proc/PID/comm as procinfo escapes it: no control byte */
	const char *exe;         /* the executable's path as /proc/PID/exe links it (raw
				  * bytes, NUL-terminated; "" when unknown) */
	const char *cmdline;     /* the command line, NULs as spaces, escaped, at most
				  * PROCS_CMDLINE_MAX bytes */
	char go_version[32];     /* "go1.24.4" from its build info; "" not a Go program */
	double cpu_pct;          /* CPU of the process since the previous scan, in percent of
				  * one CPU (htop's CPU%); -1 at its first scan */
	long threads;
	long goroutines;         /* live goroutines (PROCS_GOROUTINES), -1 not known */
	unsigned access;         /* PROCS_PERF | PROCS_MEM */
};

#define PROCS_CMDLINE_MAX 512
/* Goroutines counted per process at most (PROCS_GOROUTINES): past it, -1. */
#define PROCS_MAX_G 10000

/* procs_new flags. PROCS_ALL: also the processes this user may not profile (access 0);
 * PROCS_GOROUTINES: count each Go process's goroutines (its list of goroutines read
 * through the goroutine reader, gosnap.h, bounded by PROCS_MAX_G; the reader of each
 * process is kept for the next scan). A reader is made from a process's second scan on,
 * a few per scan (each maps and indexes the executable): the first scans list every
 * process at once, their goroutines -1 until then. */
enum { PROCS_ALL = 1, PROCS_GOROUTINES = 2 };

struct procs;

/* A list of the processes under root ("/proc" when NULL; a test's fake tree laid out like
 * /proc: PID/stat, PID/status, PID/comm, PID/cmdline, PID/exe, PID/mem, and
 * sys/kernel/perf_event_paranoid and self/status for the permissions). Empty until
 * procs_scan. Never fails (out of memory is fatal). */
struct procs *procs_new(const char *root, unsigned flags);
void procs_free(struct procs *p); /* accepts NULL */

/* Reads the processes again: their CPU since the previous scan, the Go version of each
 * executable not seen before (by device, inode, size and time), their access. 0, or
 * -errno when root cannot be listed. */
int procs_scan(struct procs *p);
/* The same at time now (ns of a monotonic clock, util_now_ns): CPU shares are of the time
 * between two scans' now (tests give their own). */
int procs_scan_at(struct procs *p, uint64_t now);

/* The entries of the last scan (borrowed until the next procs_scan or procs_free): the Go
 * programs first, then the others, each part by CPU, the busiest first, then by pid.
 * Returns how many. */
size_t procs_list(const struct procs *p, const struct procs_entry **out);

/* Why this user can sample no process at all ("kernel.perf_event_paranoid=3 and no
 * CAP_PERFMON"), or "" (static or the list's; valid until procs_free). */
const char *procs_why(const struct procs *p);

#endif
