/* procinfo.c: /proc readers for target processes (tasks, stat, owner, command line, CPUs). */
#include "config.h"
#include "gotop/procinfo.h"
#include "gotop/util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define PF_KTHREAD 0x00200000 /* linux include/linux/sched.h */

int procinfo_parse_stat(const char *text, struct proc_stat *st)
{
	/* proc(5): "pid (comm) state ppid ..."; comm may hold spaces and ')' so
	 * the fields start after the LAST ')'. */
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	unsigned long long f[52];
	const char *p;
	char *end;
	int i;
	long tck = sysconf(_SC_CLK_TCK);

	memset(st, 0, sizeof(*st));
	if (!open || !close || close < open || close[1] != ' ' || !close[2])
		return -EINVAL;
	util_escape(st->comm, sizeof(st->comm), open + 1, (size_t)(close - open - 1), 1);
	st->state = close[2];
	p = close + 3;
	/* Fields 4.. (1-based in proc(5)); f[k] is field k+4. */
	for (i = 0; i < 49; i++) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		errno = 0;
		f[i] = strtoull(p, &end, 10);
		if (end == p) {
			/* signed fields may be negative */
			f[i] = (unsigned long long)strtoll(p, &end, 10);
			if (end == p)
				return -EINVAL;
		}
		p = end;
	}
	if (i < 19)
		return -EINVAL;
	if (tck <= 0)
		tck = 100;
	st->ppid = (pid_t)f[0];         /* field 4 */
	st->flags = (unsigned long)f[5]; /* field 9 */
	st->utime_ns = f[10] * (1000000000ULL / (unsigned long long)tck); /* 14 */
	st->stime_ns = f[11] * (1000000000ULL / (unsigned long long)tck); /* 15 */
	st->num_threads = (long)f[16];  /* field 20 */
	st->starttime_ticks = f[18];    /* field 22 */
	return 0;
}

int procinfo_stat(pid_t pid, pid_t tid, struct proc_stat *st)
{
	char path[64], *text;
	int r;

	if (tid > 0)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	text = util_read_file(path, 4096, NULL);
	if (!text)
		return -errno;
	r = procinfo_parse_stat(text, st);
	free(text);
	return r;
}

int procinfo_is_kthread(pid_t pid)
{
	struct proc_stat st;
	int r = procinfo_stat(pid, 0, &st);

	if (r)
		return r;
	return (st.flags & PF_KTHREAD) ? 1 : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

long procinfo_tasks(pid_t pid, pid_t **tids)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *v = NULL;
	size_t n = 0, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char *end;
		long t = strtol(de->d_name, &end, 10);

		if (*end || t <= 0)
			continue;
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		v[n++] = (pid_t)t;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_pid);
	*tids = v;
	return (long)n;
}

long procinfo_uid(pid_t pid)
{
	char path[64], *text, *p;
	long uid = -1;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	text = util_read_file(path, 65536, NULL);
	if (!text)
		return -1;
	p = strstr(text, "\nUid:");
	if (p)
		uid = strtol(p + 5, NULL, 10);
	free(text);
	return uid;
}

char *procinfo_cmdline(pid_t pid, size_t maxlen)
{
	char path[64], *raw, *out;
	size_t len, i;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	raw = util_read_file(path, maxlen, &len);
	if (!raw)
		return NULL;
	while (len && raw[len - 1] == 0)
		len--;
	for (i = 0; i < len; i++)
		if (raw[i] == 0)
			raw[i] = ' ';
	out = xmalloc(maxlen * 4 + 4);
	util_escape(out, maxlen * 4 + 4, raw, len, 1);
	free(raw);
	return out;
}

long procinfo_online_cpus(int **cpus)
{
	char *text = util_read_file("/sys/devices/system/cpu/online", 4096, NULL), *p;
	int *v = NULL;
	size_t n = 0, cap = 0;

	if (!text) {
		/* Fall back to 0..nprocs-1. */
		long np = sysconf(_SC_NPROCESSORS_ONLN), i;

		if (np <= 0)
			return -EINVAL;
		v = xcalloc((size_t)np, sizeof(*v));
		for (i = 0; i < np; i++)
			v[i] = (int)i;
		*cpus = v;
		return np;
	}
	/* cpulist format: "0-3,5,7-8" (linux Documentation/admin-guide/cputopology.rst). */
	p = text;
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b, c;

		if (end == p)
			break;
		b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (c = a; c <= b && c < 65536; c++) {
			xgrow((void **)&v, &cap, n + 1, sizeof(*v));
			v[n++] = (int)c;
		}
		p = end;
		if (*p == ',')
			p++;
	}
	free(text);
	*cpus = v;
	return (long)n;
}

uint64_t procinfo_self_cpu_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

int procinfo_self_mem(struct proc_mem *m)
{
	char *text = util_read_file("/proc/self/statm", 256, NULL);
	unsigned long long size, resident, shared;
	long page = sysconf(_SC_PAGESIZE);
	int r = -EIO;

	memset(m, 0, sizeof(*m));
	/* proc(5): "size resident shared text lib data dt", in pages. "shared" counts the
	 * resident file-backed and shmem pages (linux fs/proc/task_mmu.c, task_statm:
	 * MM_FILEPAGES + MM_SHMEMPAGES), so resident less shared is MM_ANONPAGES, the
	 * RssAnon of /proc/self/status, at a third of the cost of parsing that file. */
	if (text && sscanf(text, "%llu %llu %llu", &size, &resident, &shared) == 3 && page > 0) {
		m->resident = (size_t)resident * (size_t)page;
		m->file = (size_t)(shared <= resident ? shared : resident) * (size_t)page;
		m->anon = m->resident - m->file;
		r = 0;
	}
	free(text);
	return r;
}
