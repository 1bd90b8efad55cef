/* procinfo.h: facts about a target process from /proc: threads, CPU time, command, owner. */
#ifndef GOTOP_PROCINFO_H
#define GOTOP_PROCINFO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_stat {
	char comm[64];       /* escaped for display: no control characters */
	char state;
	pid_t ppid;
	unsigned long flags; /* PF_* */
	uint64_t utime_ns, stime_ns; /* includes threads that exited */
	long num_threads;
	uint64_t starttime_ticks;
};

/* Parses /proc/PID/stat (or /proc/PID/task/TID/stat when tid > 0). 0 or -errno. */
int procinfo_stat(pid_t pid, pid_t tid, struct proc_stat *st);
/* Parses the text of a stat file (exposed for tests). 0 or -EINVAL. */
int procinfo_parse_stat(const char *text, struct proc_stat *st);
/* Whether pid is a kernel thread (PF_KTHREAD). 1, 0, or -errno. */
int procinfo_is_kthread(pid_t pid);
/* Thread ids of pid, sorted; caller frees *tids. Returns count or -errno. */
long procinfo_tasks(pid_t pid, pid_t **tids);
/* Real uid owning pid, or -1. */
long procinfo_uid(pid_t pid);
/* Command line with NULs as spaces, escaped, at most maxlen bytes; caller frees. NULL if gone. */
char *procinfo_cmdline(pid_t pid, size_t maxlen);
/* Online CPU numbers from /sys/devices/system/cpu/online; caller frees. Count or -errno. */
long procinfo_online_cpus(int **cpus);
/* CPU time (user+system) the calling process used, in ns. */
uint64_t procinfo_self_cpu_ns(void);
/* The calling process's resident memory, in bytes. */
struct proc_mem {
	size_t resident;     /* all resident pages */
	size_t anon;         /* anonymous: what it allocated and can give back (heap, stacks) */
	size_t file;         /* file-backed and shared: mapped binaries and symbol tables, clean
			      * pages the kernel may drop and read again */
};
/* Fills *m from /proc/self/statm (proc(5)). 0, or -EIO with *m zeroed. */
int procinfo_self_mem(struct proc_mem *m);

#endif
