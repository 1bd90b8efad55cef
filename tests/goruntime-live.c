/* goruntime-live.c: checks gort_read on a live Go process stopped with ptrace (driven by goruntime-live.sh). */
#include "config.h"
#include "gotop/goruntime.h"
#include "gotop/gopclntab.h"
#include "gotop/mem.h"
#include "gotop/util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * Usage:
 *   goruntime-live --offsets BINARY VERSION   print the offsets gort uses (DWARF when present;
 *                                             BINARY "-": the version table's)
 *   goruntime-live BINARY PID EXPECT [ROUNDS] check a running tests/goruntime-live.sh program
 * Prints "ok - ..." / "not ok - ..." / "# ..." lines; the script numbers them.
 *
 * EXPECT is written by the Go program: "V version", "A addr" (of main.curIter), and per
 * worker goroutine "W i tid goid xKEY xVALUE ... [syscall]" (hex, from pprof.ForLabels).
 * Each worker is locked to its thread (runtime.LockOSThread), so the thread's goroutine is
 * known; worker 3 blocks in read(2); worker 5 changes labels all the time ("iter" =
 * curIter while curIter >= 0); worker 6 runs crypto/md5 assembly that clobbers R14.
 */

#define MAX_THREADS 256
#define MAX_WORKERS 16

struct pair {
	char *k, *v;
	size_t kl, vl;
};

struct worker {
	int i;
	uint32_t tid;
	uint64_t goid;
	bool syscall;
	struct pair p[128];
	int np;
};

struct thread {
	uint32_t tid;
	bool attached, stopped;
	uint64_t r14, rsp;
};

static struct worker workers[MAX_WORKERS];
static int nworkers;
static char version[64];
static uint64_t cur_iter_addr;
static struct thread threads[MAX_THREADS];
static int nthreads;
static int failures;

static void result(bool good, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void result(bool good, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", good ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!good)
		failures++;
	fflush(stdout);
}

static char *unhex(const char *s, size_t *len)
{
	size_t n = strlen(s) / 2, i;
	char *out = xmalloc(n + 1);

	for (i = 0; i < n; i++) {
		unsigned v;

		sscanf(s + 2 * i, "%2x", &v);
		out[i] = (char)v;
	}
	out[n] = 0;
	*len = n;
	return out;
}

static int read_expect(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[65536];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *tok;

		line[strcspn(line, "\n")] = 0;
		if (line[0] == 'V')
			snprintf(version, sizeof(version), "%.60s", line + 2);
		else if (line[0] == 'A')
			cur_iter_addr = strtoull(line + 2, NULL, 10);
		if (line[0] != 'W' || nworkers >= MAX_WORKERS)
			continue;
		struct worker *w = &workers[nworkers++];

		strtok_r(line, " ", &save);
		w->i = atoi(strtok_r(NULL, " ", &save));
		w->tid = (uint32_t)strtoul(strtok_r(NULL, " ", &save), NULL, 10);
		w->goid = strtoull(strtok_r(NULL, " ", &save), NULL, 10);
		while ((tok = strtok_r(NULL, " ", &save))) {
			if (!strcmp(tok, "syscall")) {
				w->syscall = true;
				continue;
			}
			if (tok[0] != 'x' || w->np >= 128)
				continue;
			if (!w->p[w->np].k) {
				w->p[w->np].k = unhex(tok + 1, &w->p[w->np].kl);
			} else {
				w->p[w->np].v = unhex(tok + 1, &w->p[w->np].vl);
				w->np++;
			}
		}
	}
	fclose(f);
	return 0;
}

/* The expected form of a string as gort keeps it: cut at GORT_MAX_STRLEN, marked. */
static void stored(const char *s, size_t l, char *out, size_t *ol)
{
	size_t keep = l > GORT_MAX_STRLEN ? GORT_MAX_STRLEN : l;

	memcpy(out, s, keep);
	*ol = keep;
	if (keep < l) {
		memcpy(out + keep, GORT_TRUNC_MARK, strlen(GORT_TRUNC_MARK));
		*ol += strlen(GORT_TRUNC_MARK);
	}
}

static int cmp_bytes(const char *a, size_t al, const char *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);

	return c ? c : (al > bl) - (al < bl);
}

static int cmp_pairs(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	char xs[GORT_MAX_STRLEN + 8], ys[GORT_MAX_STRLEN + 8];
	size_t xl, yl;

	stored(x->k, x->kl, xs, &xl);
	stored(y->k, y->kl, ys, &yl);
	return cmp_bytes(xs, xl, ys, yl);
}

static void show(const char *what, const char *s, size_t l)
{
	char esc[4 * GORT_MAX_STRLEN + 64];

	util_escape(esc, sizeof(esc), s, l, 1);
	printf("#   %s \"%s\" (%zu bytes)\n", what, esc, l);
}

/* got equals the label set pairs[0..n) as gort must present it? */
static bool labels_match(const struct gort_labels *got, struct pair *pairs, int n, bool verbose)
{
	int keep = n > GORT_MAX_LABELS ? GORT_MAX_LABELS : n, i;
	uint8_t trunc = n > GORT_MAX_LABELS ? GORT_TRUNC_PAIRS : 0;

	qsort(pairs, (size_t)n, sizeof(*pairs), cmp_pairs);
	for (i = 0; i < keep; i++)
		if (pairs[i].kl > GORT_MAX_STRLEN || pairs[i].vl > GORT_MAX_STRLEN)
			trunc |= GORT_TRUNC_STRING;
	if (!got)
		return n == 0;
	if ((int)got->n != keep || got->truncated != trunc) {
		if (verbose)
			printf("#   got %u pairs (truncated %u), want %d (truncated %u)\n", got->n,
			       got->truncated, keep, trunc);
		return false;
	}
	for (i = 0; i < keep; i++) {
		char k[GORT_MAX_STRLEN + 8], v[GORT_MAX_STRLEN + 8];
		size_t kl, vl;

		stored(pairs[i].k, pairs[i].kl, k, &kl);
		stored(pairs[i].v, pairs[i].vl, v, &vl);
		if (cmp_bytes(k, kl, got->pairs[i].key, got->pairs[i].klen) ||
		    cmp_bytes(v, vl, got->pairs[i].value, got->pairs[i].vlen) ||
		    got->pairs[i].key[got->pairs[i].klen] || got->pairs[i].value[got->pairs[i].vlen]) {
			if (verbose) {
				show("want key", k, kl);
				show("got key", got->pairs[i].key, got->pairs[i].klen);
				show("want value", v, vl);
				show("got value", got->pairs[i].value, got->pairs[i].vlen);
			}
			return false;
		}
	}
	return true;
}

static struct worker *worker_of_tid(uint32_t tid)
{
	int i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].tid == tid)
			return &workers[i];
	return NULL;
}

static struct worker *worker_of_goid(uint64_t goid)
{
	int i;

	for (i = 0; i < nworkers; i++)
		if (workers[i].goid == goid)
			return &workers[i];
	return NULL;
}

/* ---------------------------------------------------------------- the binary */

struct binary {
	int fd;
	Elf *elf;
	Dwarf *dw;
	uint64_t allm, mheap; /* link-time addresses, 0 if no symbol */
	uint64_t allglen, allgptr, wait_strings; /* from .symtab, 0 if none */
	struct gort_vars vars; /* found by gort_vars_find from the code */
	int vars_rc;
	uint64_t min_vaddr;
	bool pie;
};

static int open_binary(const char *path, struct binary *b)
{
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t i, nph;

	memset(b, 0, sizeof(*b));
	elf_version(EV_CURRENT);
	b->fd = open(path, O_RDONLY);
	if (b->fd < 0)
		return -1;
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || !gelf_getehdr(b->elf, &eh))
		return -1;
	b->pie = eh.e_type == ET_DYN;
	b->min_vaddr = UINT64_MAX;
	elf_getphdrnum(b->elf, &nph);
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(b->elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_vaddr < b->min_vaddr)
			b->min_vaddr = ph.p_vaddr & ~0xfffULL;
	}
	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !(d = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(d, (int)i, &sym))
				continue;
			name = elf_strptr(b->elf, sh.sh_link, sym.st_name);
			if (name && !strcmp(name, "runtime.allm"))
				b->allm = sym.st_value;
			else if (name && !strcmp(name, "runtime.mheap_"))
				b->mheap = sym.st_value;
			else if (name && !strcmp(name, "runtime.allglen"))
				b->allglen = sym.st_value;
			else if (name && !strcmp(name, "runtime.allgptr"))
				b->allgptr = sym.st_value;
			else if (name && !strcmp(name, "runtime.waitReasonStrings"))
				b->wait_strings = sym.st_value;
		}
	}
	b->dw = dwarf_begin_elf(b->elf, DWARF_C_READ, NULL);
	{
		struct gopcln *t = gopcln_open_elf(b->elf, NULL);

		b->vars_rc = t ? gort_vars_find(b->elf, t, &b->vars) : -ENOENT;
		gopcln_free(t);
	}
	return 0;
}

static void close_binary(struct binary *b)
{
	if (b->dw)
		dwarf_end(b->dw);
	if (b->elf)
		elf_end(b->elf);
	if (b->fd > 0)
		close(b->fd);
	memset(b, 0, sizeof(*b));
}

static void free_workers(void)
{
	int i, j;

	for (i = 0; i < nworkers; i++)
		for (j = 0; j < 128; j++) {
			free(workers[i].p[j].k);
			free(workers[i].p[j].v);
		}
}

/* Load bias of the binary in pid, and its read-only mappings as static ranges. */
static uint64_t map_binary(pid_t pid, const char *path, struct gort *g, const struct binary *b)
{
	char mp[64], line[1024], real[PATH_MAX];
	uint64_t bias = 0;
	bool have_bias = false;
	FILE *f;

	if (!realpath(path, real))
		return 0;
	snprintf(mp, sizeof(mp), "/proc/%d/maps", (int)pid);
	f = fopen(mp, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[PATH_MAX];

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 4)
			continue;
		if (strcmp(file, real) != 0)
			continue;
		if (!have_bias && off == 0) {
			bias = b->pie ? lo - b->min_vaddr : 0;
			have_bias = true;
		}
		if (g && !strchr(perms, 'w'))
			gort_add_static_range(g, lo, hi);
	}
	fclose(f);
	return bias;
}

/* ---------------------------------------------------------------- offsets */

#define OFF_FIELDS(X) X(g_stack_lo) X(g_stack_hi) X(g_m) X(g_sched_sp) X(g_sched_pc) \
	X(g_sched_bp) X(g_syscallsp) X(g_syscallpc) X(g_syscallbp) X(g_atomicstatus) X(g_goid) \
	X(g_labels) X(m_g0) X(m_procid) X(m_gsignal) \
	X(m_curg) X(m_alllink) X(mheap_sweepgen) X(labels_kind) X(hmap_count) X(hmap_flags) \
	X(hmap_b) X(hmap_hash0) X(hmap_buckets) X(hmap_oldbuckets) X(bucket_keys) \
	X(bucket_values) X(bucket_overflow) X(bucket_size) X(g_waitsince) X(g_waitreason) \
	X(g_gopc) X(g_startpc) X(g_parent_goid) X(g_trackingseq) \
	X(g_lockedm)

static void print_offsets(const struct gort_offsets *o, const char *src)
{
	printf("source %s\n", src);
#define P(f) printf("%s %u\n", #f, (unsigned)o->f);
	OFF_FIELDS(P)
#undef P
}

static bool offsets_equal(const struct gort_offsets *a, const struct gort_offsets *b)
{
	bool same = true;

#define C(f) if (a->f != b->f) { printf("#   %s: dwarf %u, table %u\n", #f, (unsigned)a->f, (unsigned)b->f); same = false; }
	OFF_FIELDS(C)
#undef C
	return same;
}

/* ---------------------------------------------------------------- ptrace */

static void scan_threads(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((de = readdir(d)) && nthreads < MAX_THREADS) {
		uint32_t tid = (uint32_t)strtoul(de->d_name, NULL, 10);
		int i;

		if (!tid)
			continue;
		for (i = 0; i < nthreads; i++)
			if (threads[i].tid == tid)
				break;
		if (i < nthreads)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, 0) == 0) {
			threads[nthreads].tid = tid;
			threads[nthreads].attached = true;
			nthreads++;
		}
	}
	closedir(d);
}

/* Stops every attached thread; reads r14 and rsp. */
static void stop_all(void)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].attached)
			ptrace(PTRACE_INTERRUPT, threads[i].tid, 0, 0);
	for (i = 0; i < nthreads; i++) {
		struct thread *t = &threads[i];
		struct user_regs_struct regs;
		int st;

		if (!t->attached)
			continue;
		for (;;) {
			if (waitpid((pid_t)t->tid, &st, __WALL) < 0 || WIFEXITED(st) || WIFSIGNALED(st)) {
				t->attached = false;
				break;
			}
			if (WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_STOP)
				break;
			/* A signal-delivery stop (SIGURG preemption...): deliver it, wait again. */
			ptrace(PTRACE_CONT, t->tid, 0, WIFSTOPPED(st) ? WSTOPSIG(st) : 0);
		}
		if (!t->attached)
			continue;
		t->stopped = true;
		if (ptrace(PTRACE_GETREGS, t->tid, 0, &regs) == 0) {
			t->r14 = regs.r14;
			t->rsp = regs.rsp;
		} else {
			t->r14 = t->rsp = 0;
		}
	}
}

static void resume_all(void)
{
	int i;

	for (i = 0; i < nthreads; i++)
		if (threads[i].attached && threads[i].stopped) {
			ptrace(PTRACE_CONT, threads[i].tid, 0, 0);
			threads[i].stopped = false;
		}
}

static void detach_all(void)
{
	int i;

	stop_all();
	for (i = 0; i < nthreads; i++)
		if (threads[i].attached)
			ptrace(PTRACE_DETACH, threads[i].tid, 0, 0);
}

/* ---------------------------------------------------------------- checks */

struct tally {
	int samples, found, none, wrong_goid, wrong_labels, worker_found, worker_samples;
	int syscall_found, syscall_flag, iter_checked, system_stack, via_m, asm_via_m;
	int per_worker[MAX_WORKERS];
	int fallback_same, fallback_diff, garbage_diff, table_diff, nocache_diff, batch_diff;
};

static bool same_result(int rca, const struct gort_result *a, int rcb, const struct gort_result *b,
			bool compare_label_ptr)
{
	/* -ENOENT and -EFAULT both mean "no goroutine". */
	if ((rca == 0) != (rcb == 0))
		return false;
	if (rca)
		return true;
	if (a->goid != b->goid)
		return false;
	if (compare_label_ptr)
		return a->labels == b->labels;
	if (!a->labels || !b->labels)
		return a->labels == b->labels;
	if (a->labels->n != b->labels->n || a->labels->truncated != b->labels->truncated)
		return false;
	for (uint32_t i = 0; i < a->labels->n; i++)
		if (cmp_bytes(a->labels->pairs[i].key, a->labels->pairs[i].klen, b->labels->pairs[i].key,
			      b->labels->pairs[i].klen) ||
		    cmp_bytes(a->labels->pairs[i].value, a->labels->pairs[i].vlen,
			      b->labels->pairs[i].value, b->labels->pairs[i].vlen))
			return false;
	return true;
}

/* Checks one sample's result against what the program says. */
static void check_sample(struct tally *t, const struct gp_mem *mem, const struct thread *th, int rc,
			 const struct gort_result *r)
{
	struct worker *w = worker_of_tid(th->tid);

	t->samples++;
	if (w)
		t->worker_samples++;
	if (rc) {
		t->none++;
		return;
	}
	t->found++;
	if (r->flags & GORT_SYSTEM_STACK)
		t->system_stack++;
	if (r->flags & GORT_VIA_M)
		t->via_m++;
	if (!w) {
		/* Another thread: never a worker's goroutine, never labels (nobody else has any). */
		if (worker_of_goid(r->goid)) {
			t->wrong_goid++;
			printf("# tid %u gave worker goid %" PRIu64 "\n", th->tid, r->goid);
		} else if (r->labels) {
			t->wrong_labels++;
			printf("# tid %u goid %" PRIu64 " has %u labels, want none\n", th->tid, r->goid,
			       r->labels->n);
		}
		return;
	}
	if (r->goid != w->goid) {
		t->wrong_goid++;
		printf("# worker %d tid %u: goid %" PRIu64 ", want %" PRIu64 "\n", w->i, th->tid, r->goid,
		       w->goid);
		return;
	}
	t->worker_found++;
	t->per_worker[w - workers]++;
	if (w->i == 6 && (r->flags & GORT_VIA_M))
		t->asm_via_m++;
	if (w->syscall) {
		t->syscall_found++;
		if (r->flags & GORT_SYSCALL)
			t->syscall_flag++;
	}
	if (w->i == 5) {
		/* Labels are {goid, worker} or {goid, iter, iter2, worker}; while curIter >= 0 the
		 * iteration is known exactly (set after the labels, reset before they go). */
		struct pair p[8];
		int64_t iter = -1;
		char v[32], v2[64];
		int n = w->np;
		bool good = false;

		memcpy(p, w->p, sizeof(p[0]) * (size_t)n);
		mem_read(mem, cur_iter_addr, &iter, sizeof(iter));
		if (iter >= 0) {
			snprintf(v, sizeof(v), "%" PRId64, iter);
			snprintf(v2, sizeof(v2), "%s%s", v, v);
			p[n++] = (struct pair){ "iter", v, 4, strlen(v) };
			p[n++] = (struct pair){ "iter2", v2, 5, strlen(v2) };
			good = labels_match(r->labels, p, n, true);
			t->iter_checked++;
		} else if (r->labels && r->labels->n == 4) {
			const struct gort_label *it = &r->labels->pairs[1], *it2 = &r->labels->pairs[2];

			good = it->vlen * 2 == it2->vlen && !memcmp(it->value, it2->value, it->vlen) &&
			       !memcmp(it->value, it2->value + it->vlen, it->vlen);
		} else {
			good = labels_match(r->labels, p, n, false);
		}
		if (!good) {
			t->wrong_labels++;
			printf("# worker 5 labels wrong (curIter %" PRId64 ")\n", iter);
		}
		return;
	}
	{
		struct pair p[128];

		memcpy(p, w->p, sizeof(p[0]) * (size_t)w->np);
		if (!labels_match(r->labels, p, w->np, true)) {
			t->wrong_labels++;
			printf("# worker %d labels differ\n", w->i);
		}
	}
}

/* CPU time of this thread: the machine may be busy with other work. */
static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A reader that counts the reads (system calls) it passes on. */
struct counting {
	struct gp_mem mem;
	const struct gp_mem *inner;
	uint64_t n;
};

static int counting_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct counting *c = ctx;

	c->n++;
	return mem_read(c->inner, addr, buf, len);
}

/* A vectored read is one system call too (mem_readv). */
static void counting_readv(void *ctx, struct mem_iov *iov, size_t n)
{
	struct counting *c = ctx;

	c->n++;
	mem_readv(c->inner, iov, n);
}

/* Prints the offsets gort uses for BINARY (any architecture; "-": none, the table's). */
static int offsets_mode(const char *path, const char *ver)
{
	struct binary b;
	struct gort *g;
	int arch = GORT_ARCH_AMD64;

	memset(&b, 0, sizeof(b));
	if (strcmp(path, "-") != 0) {
		GElf_Ehdr eh;

		if (open_binary(path, &b) != 0) {
			fprintf(stderr, "cannot open %s\n", path);
			return 2;
		}
		if (gelf_getehdr(b.elf, &eh) && eh.e_machine == EM_AARCH64)
			arch = GORT_ARCH_ARM64;
	}
	g = gort_new(ver, b.dw, arch);
	if (!g) {
		fprintf(stderr, "gort_new: %s\n", strerror(errno));
		close_binary(&b);
		return 1;
	}
	print_offsets(gort_offsets(g), gort_offsets_source(g));
	gort_free(g);
	close_binary(&b);
	return 0;
}

int main(int argc, char **argv)
{
	struct gort *g, *gtab, *gnocache, *gbatch;
	uint64_t batch_samples = 0, batch_reads = 0, batch_ns = 0;
	struct gort_stats st;
	struct binary b;
	struct tally t = { 0 };
	struct gp_mem *pmem, *mem;
	struct counting cm;
	uint64_t bias, ns = 0, nreads = 0, nsys = 0;
	int rounds, r, i;
	pid_t pid;

	if (argc == 4 && !strcmp(argv[1], "--offsets"))
		return offsets_mode(argv[2], argv[3]);
	if (argc < 4) {
		fprintf(stderr, "usage: goruntime-live BINARY PID EXPECT [ROUNDS]\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[2]);
	rounds = argc > 4 ? atoi(argv[4]) : 40;
	if (read_expect(argv[3]) || !version[0] || nworkers < 7) {
		result(false, "read the program's own account %s", argv[3]);
		return 1;
	}
	if (open_binary(argv[1], &b) != 0) {
		result(false, "open %s", argv[1]);
		return 1;
	}

	/* Offsets: DWARF when present, the version table always; they must agree. */
	gtab = gort_new(version, NULL, GORT_ARCH_AMD64);
	result(gtab != NULL, "%s: table offsets exist", version);
	if (!gtab)
		return 1;
	if (b.dw) {
		g = gort_new(version, b.dw, GORT_ARCH_AMD64);
		result(g && !strcmp(gort_offsets_source(g), "dwarf"), "offsets from DWARF");
		if (!g)
			return 1;
		result(offsets_equal(gort_offsets(g), gort_offsets(gtab)),
		       "DWARF offsets equal %s", gort_offsets_source(gtab));
	} else {
		g = gort_new(version, NULL, GORT_ARCH_AMD64);
		result(g && !strncmp(gort_offsets_source(g), "table go1.", 10),
		       "no DWARF: offsets from %s", g ? gort_offsets_source(g) : "?");
		if (!g)
			return 1;
	}
	/* The main reader gets everything the caller could know; gnocache neither the GC
	 * epoch nor the static ranges (fingerprints only). */
	gbatch = gort_new(version, b.dw, GORT_ARCH_AMD64);
	map_binary(pid, argv[1], gbatch, &b);
	bias = map_binary(pid, argv[1], g, &b);
	pmem = mem_pid_new(pid);
	/* The runtime's variables found from the code, without symbols: equal to .symtab's
	 * where it exists, and valid in the target's memory everywhere. */
	if (b.allglen && b.allm) {
		result(b.vars.allm == b.allm && b.vars.allglen == b.allglen &&
		       b.vars.allgptr == b.allgptr && b.vars.wait_strings == b.wait_strings &&
		       b.vars.sweepgen == b.mheap + gort_offsets(g)->mheap_sweepgen,
		       "code gives runtime.allm, allglen, allgptr, waitReasonStrings, "
		       "mheap_.sweepgen as .symtab does (allm %#" PRIx64 "/%#" PRIx64 ", sweepgen %#"
		       PRIx64 "/%#" PRIx64 ")", b.vars.allm, b.allm, b.vars.sweepgen,
		       b.mheap + gort_offsets(g)->mheap_sweepgen);
	} else {
		struct gort_vars rv = b.vars;
		int ra, rg;

		rv.allm += rv.allm ? bias : 0;
		rv.allglen += rv.allglen ? bias : 0;
		rv.allgptr += rv.allgptr ? bias : 0;
		ra = gort_vars_check(g, pmem, &rv, GORT_VAR_ALLM);
		rg = gort_vars_check(g, pmem, &rv, GORT_VAR_ALLGS);
		result(b.vars_rc == 0 && ra == 0 && rg == 0 && rv.nwait > 0,
		       "no symbols: allm, allgs and wait reasons found from the code and valid "
		       "(rc %d, allm %d, allgs %d, %u wait reasons)", b.vars_rc, ra, rg, rv.nwait);
		if (ra == 0)
			b.allm = b.vars.allm;
		/* runtime.mheap_ from its sweepgen: the GC epoch for the label cache. */
		{
			uint32_t sg = 1;
			uint32_t off = gort_offsets(g)->mheap_sweepgen;
			bool rd = b.vars.sweepgen > off &&
				  mem_read_u32(pmem, b.vars.sweepgen + bias, &sg) == 0;

			result(rd && sg % 2 == 0,
			       "no symbols: mheap_.sweepgen found from the code, an even generation (%u)", sg);
			if (b.vars.sweepgen > off)
				b.mheap = b.vars.sweepgen - off;
		}
	}
	gort_set_runtime_vars(gbatch, b.allm ? b.allm + bias : 0, b.mheap ? b.mheap + bias : 0);
	gort_set_runtime_vars(g, b.allm ? b.allm + bias : 0, b.mheap ? b.mheap + bias : 0);
	gnocache = gort_new(version, b.dw, GORT_ARCH_AMD64);
	gort_set_runtime_vars(gtab, b.allm ? b.allm + bias : 0, b.mheap ? b.mheap + bias : 0);
	gort_set_runtime_vars(gnocache, b.allm ? b.allm + bias : 0, 0);
	printf("# %s pie=%d dwarf=%d allm=%#" PRIx64 " mheap=%#" PRIx64 " bias=%#" PRIx64 "\n",
	       version, b.pie, b.dw != NULL, b.allm, b.mheap, bias);

	cm = (struct counting){ { .read = counting_read, .ctx = &cm, .readv = counting_readv }, pmem, 0 };
	mem = &cm.mem;
	for (r = 0; r < rounds; r++) {
		struct gort_sample in[MAX_THREADS];
		struct gort_result bres[MAX_THREADS];
		int brc[MAX_THREADS], nin = 0, slot[MAX_THREADS];

		scan_threads(pid);
		stop_all();
		/* The whole round as one batch, through a reader of its own. */
		for (i = 0; i < nthreads; i++) {
			slot[i] = -1;
			if (threads[i].attached) {
				slot[i] = nin;
				in[nin++] = (struct gort_sample){ threads[i].tid, threads[i].r14, threads[i].rsp, NULL };
			}
		}
		{
			uint64_t t0 = now_ns();

			cm.n = 0;
			gort_read_batch(gbatch, mem, in, (size_t)nin, bres, brc);
			batch_ns += now_ns() - t0;
			batch_reads += cm.n;
			batch_samples += (uint64_t)nin;
		}
		for (i = 0; i < nthreads; i++) {
			struct thread *th = &threads[i];
			struct gort_result res, res2;
			uint64_t t0;
			int rc, rc2;

			if (!th->attached)
				continue;
			t0 = now_ns();
			cm.n = 0;
			rc = gort_read(g, mem, th->tid, th->r14, th->rsp, &res);
			ns += now_ns() - t0;
			nsys += cm.n;
			nreads++;
			check_sample(&t, mem, th, rc, &res);
			if (slot[i] >= 0 && !same_result(rc, &res, brc[slot[i]], &bres[slot[i]], false))
				t.batch_diff++;
			/* The same thread without a usable g register: via the m of the thread. */
			rc2 = gort_read(g, mem, th->tid, 0, th->rsp, &res2);
			if (same_result(rc, &res, rc2, &res2, true))
				t.fallback_same++;
			else if (!(res.flags & GORT_OFF_STACK))
				t.fallback_diff++;
			/* A register holding garbage (readable memory that is no g). */
			rc2 = gort_read(g, mem, th->tid, th->rsp & ~7ULL, th->rsp, &res2);
			if (rc2 == 0 && !same_result(rc, &res, rc2, &res2, true))
				t.garbage_diff++;
			/* Table offsets and no cache help: the same answer. */
			rc2 = gort_read(gtab, mem, th->tid, th->r14, th->rsp, &res2);
			if (!same_result(rc, &res, rc2, &res2, false))
				t.table_diff++;
			rc2 = gort_read(gnocache, mem, th->tid, th->r14, th->rsp, &res2);
			if (!same_result(rc, &res, rc2, &res2, false))
				t.nocache_diff++;
		}
		resume_all();
		usleep(15000);
	}

	/* runtime.allm: a fresh reader that never saw a g register of the workers. */
	if (b.allm) {
		struct gort *ga = gort_new(version, b.dw, GORT_ARCH_AMD64);
		int good = 0, bad = 0;

		gort_set_runtime_vars(ga, b.allm + bias, 0);
		stop_all();
		for (i = 0; i < nthreads; i++) {
			struct gort_result ra, rb;
			int rca, rcb;

			if (!threads[i].attached || !worker_of_tid(threads[i].tid))
				continue;
			rca = gort_read(g, mem, threads[i].tid, threads[i].r14, threads[i].rsp, &ra);
			rcb = gort_read(ga, mem, threads[i].tid, 0, 0, &rb);
			if (rca == 0 && rcb == 0 && ra.goid == rb.goid && (rb.flags & GORT_VIA_M))
				good++;
			/* A thread stopped off its goroutine's stack (vDSO, C code) is
			 * proven only by the register: the m path without one cannot. */
			else if (rca == 0 && !(ra.flags & GORT_OFF_STACK) && (rcb != 0 || ra.goid != rb.goid)) {
				bad++;
				printf("# allm differs: tid %d register rc %d goid %" PRIu64 " flags %#x; allm rc %d goid %" PRIu64 " flags %#x\n",
				       (int)threads[i].tid, rca, ra.goid, ra.flags, rcb, rb.goid, rb.flags);
			}
		}
		resume_all();
		gort_get_stats(ga, &st);
		result(bad == 0 && good > 0 && st.allm_walks == 1,
		       "runtime.allm finds the m of never-seen threads (%d agree, %d differ, %" PRIu64
		       " walks)", good, bad, st.allm_walks);
		gort_free(ga);
	} else {
		printf("ok - # SKIP no runtime.allm (neither symbol nor code)\n");
	}
	detach_all();

	printf("# %d samples: %d found (%d on a system stack, %d via m), %d none; workers %d/%d "
	       "found; syscall worker %d found, %d flagged; iter checked %d\n",
	       t.samples, t.found, t.system_stack, t.via_m, t.none, t.worker_found, t.worker_samples,
	       t.syscall_found, t.syscall_flag, t.iter_checked);
	result(t.wrong_goid == 0, "never a wrong goroutine (%d wrong)", t.wrong_goid);
	result(t.wrong_labels == 0, "labels equal the program's own (%d wrong)", t.wrong_labels);
	/* A locked thread whose goroutine was preempted parks without one (stoplockedm), so
	 * not every worker sample has a goroutine; but each worker must be seen, labels and all. */
	{
		int seen = 0, want = 0;

		/* Without runtime.allm (stripped), the md5 worker's thread is known only if a
		 * sample caught it outside the assembly: not required. */
		for (i = 0; i < nworkers; i++) {
			if (workers[i].i == 6 && !b.allm)
				continue;
			want++;
			seen += t.per_worker[i] > 0;
		}
		result(seen == want && t.worker_found * 4 >= t.worker_samples,
		       "every worker found (%d of %d workers; %d of %d samples)", seen, want,
		       t.worker_found, t.worker_samples);
	}
	result(t.syscall_found > 0 && t.syscall_flag == t.syscall_found,
	       "goroutine blocked in a system call found and flagged (%d/%d)", t.syscall_flag,
	       t.syscall_found);
	result(t.iter_checked > 0, "worker with changing labels checked exactly (%d times)",
	       t.iter_checked);
	if (b.allm)
		result(t.asm_via_m > 0, "goroutine in assembly using R14 (crypto/md5) found via its m "
		       "(%d samples)", t.asm_via_m);
	else
		printf("# goroutine in assembly using R14 found via its m in %d samples\n", t.asm_via_m);
	result(t.fallback_diff == 0, "without the g register, the thread's m gives the same (%d same, %d differ)",
	       t.fallback_same, t.fallback_diff);
	result(t.garbage_diff == 0, "a garbage g register never gives another answer (%d differ)",
	       t.garbage_diff);
	result(t.table_diff == 0, "table offsets give the same answers (%d differ)", t.table_diff);
	result(t.batch_diff == 0, "gort_read_batch gives the same answers (%d differ)", t.batch_diff);
	result(t.nocache_diff == 0, "a reader without GC epoch or static ranges agrees (%d differ)",
	       t.nocache_diff);
	gort_get_stats(g, &st);
	printf("# main reader: %" PRIu64 " reads, %" PRIu64 " label lookups: %" PRIu64
	       " epoch hits, %" PRIu64 " checked hits, %" PRIu64 " stale, %" PRIu64 " decodes, %" PRIu64
	       " bad; %" PRIu64 " sets interned; %" PRIu64 " fast path\n",
	       st.reads, st.label_lookups, st.label_hits_epoch, st.label_hits_checked, st.label_stale,
	       st.label_decodes, st.label_bad, st.interned_sets, st.fast_path);
	printf("# first gort_read of each sample: %.2f reads (system calls), %.0f ns CPU on average\n",
	       nreads ? (double)nsys / nreads : 0.0, nreads ? (double)ns / nreads : 0.0);
	printf("# gort_read_batch of a whole round: %.2f reads (system calls) and %.0f ns CPU per "
	       "sample\n", batch_samples ? (double)batch_reads / batch_samples : 0.0,
	       batch_samples ? (double)batch_ns / batch_samples : 0.0);
	gort_get_stats(gnocache, &st);
	printf("# reader without epoch: %" PRIu64 " label lookups: %" PRIu64 " checked hits, %" PRIu64
	       " stale, %" PRIu64 " decodes\n",
	       st.label_lookups, st.label_hits_checked, st.label_stale, st.label_decodes);
	mem_pid_free(pmem);
	gort_free(g);
	gort_free(gtab);
	gort_free(gnocache);
	gort_free(gbatch);
	close_binary(&b);
	free_workers();
	return failures ? 1 : 0;
}
