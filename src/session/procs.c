/* procs.c: the processes this user may profile, from /proc (or a tree laid out like it):
 * their command, threads, CPU between two scans (as htop and top count it, from utime and
 * stime of PID/stat), the Go version of their executable from its build info, and what
 * the kernel will let this user do to them, found the way the kernel decides it at the
 * attach rather than guessed from uids. */
#include "config.h"
#include "gotop/procs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gotop/gopclntab.h"
#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/procinfo.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#define PF_KTHREAD 0x00200000 /* linux include/linux/sched.h */
#define CAP_SYS_ADMIN_BIT 21  /* linux include/uapi/linux/capability.h */
#define CAP_PERFMON_BIT 38
#define PROCS_READER_BUDGET_NS 200000000LL /* new goroutine readers per scan, in time */

/* An executable seen before: its Go version, by what identifies the file. */
struct exe_ver {
	dev_t dev;
	ino_t ino;
	off_t size;
	time_t mtime;
	char ver[32];
};

/* What a scan keeps of a process for the next: its CPU time then, and the goroutine
 * reader of a Go process (PROCS_GOROUTINES). */
struct known {
	pid_t pid;
	uint64_t start;          /* starttime: a pid reused by another process differs */
	uint64_t cpu_ns;         /* its utime + stime at the last scan */
	int have_cpu;
	struct symfile *sf;
	struct gosnap *snap;
	int no_reader;           /* gosnap_new failed once: not tried again */
	unsigned scans;          /* scans that listed it */
	int seen;                /* in the last scan */
};

struct procs {
	char *root;
	unsigned flags;
	struct procs_entry *e;
	size_t n, cap;
	char **strs;             /* the entries' strings, freed at the next scan */
	size_t nstrs, capstrs;
	struct exe_ver *exes;
	size_t nexes, capexes;
	struct known *known;
	size_t nknown, capknown;
	struct hashmap known_idx; /* pid -> index + 1 in known */
	uint64_t last_ns;        /* time of the previous scan (0: none) */
	char why[160];
};

struct procs *procs_new(const char *root, unsigned flags)
{
	struct procs *p = xcalloc(1, sizeof(*p));

	p->root = xstrdup(root ? root : "/proc");
	p->flags = flags;
	return p;
}

static void strs_free(struct procs *p)
{
	for (size_t i = 0; i < p->nstrs; i++)
		free(p->strs[i]);
	p->nstrs = 0;
}

static void known_drop(struct known *k)
{
	gosnap_free(k->snap);
	symfile_free(k->sf);
	k->snap = NULL;
	k->sf = NULL;
}

void procs_free(struct procs *p)
{
	if (!p)
		return;
	strs_free(p);
	free(p->strs);
	for (size_t i = 0; i < p->nknown; i++)
		known_drop(&p->known[i]);
	free(p->known);
	hashmap_free(&p->known_idx);
	free(p->exes);
	free(p->e);
	free(p->root);
	free(p);
}

static const char *keep(struct procs *p, char *s)
{
	xgrow((void **)&p->strs, &p->capstrs, p->nstrs + 1, sizeof(*p->strs));
	p->strs[p->nstrs++] = s;
	return s;
}

/* root/pid/name (pid 0: root/name). */
static void path_of(const struct procs *p, pid_t pid, const char *name, char *buf, size_t n)
{
	if (pid)
		snprintf(buf, n, "%s/%d/%s", p->root, (int)pid, name);
	else
		snprintf(buf, n, "%s/%s", p->root, name);
}

/* Whether this user may sample any process: kernel.perf_event_paranoid 3 and above (a
 * Debian patch, and upstream's "disallow all" in Documentation/admin-guide/sysctl)
 * forbids perf_event_open without CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8); below it
 * a process this user may trace in PTRACE_MODE_READ can be sampled, user space at 2. The
 * sysctl and the capabilities are read under root (sys/kernel/perf_event_paranoid,
 * self/status CapEff) so that a test's tree can say them too. */
static int perf_allowed(struct procs *p)
{
	char path[4200], *text, *c;
	long paranoid = 2;
	unsigned long long caps = 0;

	path_of(p, 0, "sys/kernel/perf_event_paranoid", path, sizeof(path));
	if ((text = util_read_file(path, 64, NULL))) {
		paranoid = strtol(text, NULL, 10);
		free(text);
	}
	path_of(p, 0, "self/status", path, sizeof(path));
	if ((text = util_read_file(path, 65536, NULL))) {
		if ((c = strstr(text, "\nCapEff:")))
			caps = strtoull(c + 8, NULL, 16);
		free(text);
	}
	if (paranoid <= 2 || (caps >> CAP_PERFMON_BIT & 1) || (caps >> CAP_SYS_ADMIN_BIT & 1)) {
		p->why[0] = 0;
		return 1;
	}
	snprintf(p->why, sizeof(p->why),
		 "kernel.perf_event_paranoid=%ld and no CAP_PERFMON: no process can be sampled "
		 "(run as root, or set the sysctl to 2)", paranoid);
	return 0;
}

/* The Go version of the executable at path (st: its stat), from the files seen before or
 * its build info. */
static const char *exe_version(struct procs *p, const char *path, const struct stat *st)
{
	struct exe_ver *x;
	Elf *elf;
	char *v;
	int fd;

	for (size_t i = 0; i < p->nexes; i++) {
		x = &p->exes[i];
		if (x->dev == st->st_dev && x->ino == st->st_ino && x->size == st->st_size &&
		    x->mtime == st->st_mtime)
			return x->ver;
	}
	xgrow((void **)&p->exes, &p->capexes, p->nexes + 1, sizeof(*p->exes));
	x = &p->exes[p->nexes++];
	*x = (struct exe_ver){ st->st_dev, st->st_ino, st->st_size, st->st_mtime, "" };
	/* Opening /proc/PID/exe opens the file the process runs, even one since deleted or
	 * replaced on disk. */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return x->ver;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (v = gopcln_elf_go_version(elf))) {
		snprintf(x->ver, sizeof(x->ver), "%s", v);
		free(v);
	}
	elf_end(elf);
	close(fd);
	return x->ver;
}

static struct known *known_get(struct procs *p, pid_t pid, uint64_t start)
{
	int created;
	uint64_t *slot = hashmap_put(&p->known_idx, (uint64_t)pid, &created);
	struct known *k;

	if (!created) {
		k = &p->known[*slot - 1];
		if (k->start == start)
			return k;
		known_drop(k); /* the pid of another process now */
		*k = (struct known){ .pid = pid, .start = start };
		return k;
	}
	xgrow((void **)&p->known, &p->capknown, p->nknown + 1, sizeof(*p->known));
	k = &p->known[p->nknown];
	*k = (struct known){ .pid = pid, .start = start };
	*slot = ++p->nknown;
	return k;
}

/* The processes gone since the last scan lose what was kept of them. */
static void known_sweep(struct procs *p)
{
	size_t j = 0;

	hashmap_free(&p->known_idx);
	memset(&p->known_idx, 0, sizeof(p->known_idx));
	for (size_t i = 0; i < p->nknown; i++) {
		if (!p->known[i].seen) {
			known_drop(&p->known[i]);
			continue;
		}
		p->known[i].seen = 0;
		p->known[j] = p->known[i];
		*hashmap_put(&p->known_idx, (uint64_t)p->known[j].pid, NULL) = j + 1;
		j++;
	}
	p->nknown = j;
}

/* Live goroutines of a Go process, through a reader kept from scan to scan (it reuses
 * the stacks of goroutines that have not run since); -1 when they cannot be read. */
static long goroutines(struct known *k, const char *exe_path, int64_t *budget_ns)
{
	struct gosnap_result r;
	char why[256];
	uint64_t t0;
	int err;

	if (k->no_reader)
		return -1;
	if (!k->snap) {
		/* Opening a reader maps and indexes the executable: tens of ms for a large
		 * service. Not at a process's first scan (the list comes first), and within
		 * a budget per scan, the others at the next scans. */
		if (!k->scans || *budget_ns <= 0)
			return -1;
		t0 = util_now_ns();
		k->sf = symfile_open(exe_path, &err);
		k->snap = k->sf ? gosnap_new(k->pid, k->sf, why, sizeof(why)) : NULL;
		*budget_ns -= (int64_t)(util_now_ns() - t0);
		if (!k->snap) {
			known_drop(k);
			k->no_reader = 1;
			return -1;
		}
	}
	if (gosnap_take(k->snap, PROCS_MAX_G, &r) || r.st.truncated)
		return -1;
	return (long)(r.n + r.st.torn);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct procs_entry *x = a, *y = b;
	int gx = x->go_version[0] != 0, gy = y->go_version[0] != 0;

	if (gx != gy)
		return gy - gx;
	if (x->cpu_pct != y->cpu_pct)
		return x->cpu_pct > y->cpu_pct ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* One process into a new entry; 0, or -1 when it is not to be listed (gone, a kernel
 * thread, a zombie, this process, or one this user may not profile without PROCS_ALL). */
static int scan_one(struct procs *p, pid_t pid, int perf_ok, uint64_t dt, int64_t *budget_ns)
{
	char path[4200], link[4096], *text;
	struct proc_stat st;
	struct procs_entry e;
	struct stat sb;
	struct known *k;
	ssize_t ln;
	size_t len;
	int fd;

	path_of(p, pid, "stat", path, sizeof(path));
	text = util_read_file(path, 4096, NULL);
	if (!text)
		return -1;
	if (procinfo_parse_stat(text, &st)) {
		free(text);
		return -1;
	}
	free(text);
	if ((st.flags & PF_KTHREAD) || st.state == 'Z' || st.state == 'X' || pid == getpid())
		return -1;
	memset(&e, 0, sizeof(e));
	e.pid = pid;
	e.threads = st.num_threads;
	e.goroutines = -1;
	snprintf(e.comm, sizeof(e.comm), "%s", st.comm);
	/* The kernel's own check: /proc/PID/exe reads only with ptrace access in
	 * PTRACE_MODE_READ_FSCREDS (fs/proc/base.c proc_exe_link, proc_fd_access_allowed),
	 * the mode perf_event_open checks a target in (kernel/events/core.c,
	 * PTRACE_MODE_READ_REALCREDS; the same credentials for a program not setuid). */
	path_of(p, pid, "exe", path, sizeof(path));
	ln = readlink(path, link, sizeof(link) - 1);
	if (ln >= 0 && perf_ok)
		e.access |= PROCS_PERF;
	link[ln > 0 ? ln : 0] = 0;
	if (!e.access && !(p->flags & PROCS_ALL))
		return -1;
	e.exe = keep(p, xstrdup(link));
	/* Reading its memory: /proc/PID/mem opens only with PTRACE_MODE_ATTACH_FSCREDS
	 * (fs/proc/base.c mem_open, mm_access), which Yama's ptrace_scope restricts too. */
	path_of(p, pid, "mem", path, sizeof(path));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		e.access |= PROCS_MEM;
		close(fd);
	}
	path_of(p, pid, "status", path, sizeof(path));
	if ((text = util_read_file(path, 65536, NULL))) {
		const char *u = strstr(text, "\nUid:");

		e.uid = u ? (uid_t)strtoul(u + 5, NULL, 10) : (uid_t)-1;
		free(text);
	}
	path_of(p, pid, "cmdline", path, sizeof(path));
	if ((text = util_read_file(path, PROCS_CMDLINE_MAX, &len))) {
		char *out = xmalloc(PROCS_CMDLINE_MAX * 4 + 4);

		while (len && text[len - 1] == 0)
			len--;
		for (size_t i = 0; i < len; i++)
			if (text[i] == 0)
				text[i] = ' ';
		util_escape(out, PROCS_CMDLINE_MAX * 4 + 4, text, len, 1);
		free(text);
		e.cmdline = keep(p, out);
	} else {
		e.cmdline = "";
	}
	path_of(p, pid, "exe", path, sizeof(path));
	if (e.access && stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		snprintf(e.go_version, sizeof(e.go_version), "%s", exe_version(p, path, &sb));
	k = known_get(p, pid, st.starttime_ticks);
	k->seen = 1;
	e.cpu_pct = -1;
	if (dt && k->have_cpu)
		e.cpu_pct = st.utime_ns + st.stime_ns >= k->cpu_ns
				    ? 100.0 * (double)(st.utime_ns + st.stime_ns - k->cpu_ns) / (double)dt
				    : 0;
	k->cpu_ns = st.utime_ns + st.stime_ns;
	k->have_cpu = 1;
	if ((p->flags & PROCS_GOROUTINES) && e.go_version[0] && (e.access & PROCS_MEM))
		e.goroutines = goroutines(k, path, budget_ns);
	k->scans++;
	xgrow((void **)&p->e, &p->cap, p->n + 1, sizeof(*p->e));
	p->e[p->n++] = e;
	return 0;
}

int procs_scan_at(struct procs *p, uint64_t now)
{
	DIR *d = opendir(p->root);
	struct dirent *de;
	uint64_t dt = p->last_ns && now > p->last_ns ? now - p->last_ns : 0;
	int64_t budget_ns = PROCS_READER_BUDGET_NS;
	int perf_ok;

	if (!d)
		return -errno;
	strs_free(p);
	p->n = 0;
	perf_ok = perf_allowed(p);
	while ((de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0 || end == de->d_name)
			continue;
		scan_one(p, (pid_t)pid, perf_ok, dt, &budget_ns);
	}
	closedir(d);
	known_sweep(p);
	p->last_ns = now;
	if (p->n > 1)
		qsort(p->e, p->n, sizeof(*p->e), entry_cmp);
	return 0;
}

int procs_scan(struct procs *p)
{
	return procs_scan_at(p, util_now_ns());
}

size_t procs_list(const struct procs *p, const struct procs_entry **out)
{
	*out = p->e;
	return p->n;
}

const char *procs_why(const struct procs *p)
{
	return p->why;
}
