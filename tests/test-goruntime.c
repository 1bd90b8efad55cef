/* test-goruntime.c: unit tests for goruntime (g validation, labels, cache) on a fake Go process in fake memory. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gotop/goruntime.h"
#include "gotop/mem.h"
#include "gotop/util.h"

/*
 * The fake process: a heap at HEAP_BASE (g, m, stacks, labels, heap strings), a read-only
 * image at RO_BASE (static strings) and runtime.mheap_ at MHEAP_BASE. Structures are laid
 * out with the offsets gort uses for the version under test (table rows, which
 * tests/goruntime-live.sh checks against real binaries' DWARF).
 */
#define HEAP_BASE 0xc000000000ULL
#define HEAP_SIZE (4u << 20)
#define RO_BASE 0x400000ULL
#define RO_SIZE (64u << 10)
#define MHEAP_BASE 0x800000ULL
#define MHEAP_SIZE (72u << 10)

struct fake {
	uint8_t *heap, *ro, *mheap;
	uint64_t top, rotop;
	struct gp_mem *mem;
	struct gort *gr;
	const struct gort_offsets *o;
	uint64_t reads;  /* through counting_mem: single reads, and pieces of vectored ones */
	uint64_t readvs; /* vectored reads through counting_mem */
	uint64_t singles; /* single reads through counting_mem */
	bool bump_sweepgen; /* a GC cycle ends right after the next vectored read's first piece */
	struct gp_mem cmem;
};

struct fthread {
	uint32_t tid;
	uint64_t m, g0, gsignal, g;
	uint64_t sp, g0sp; /* inside the g's stack, inside g0's */
};

struct str {
	const char *p;
	size_t n;
};
#define S(lit) ((struct str){ lit, sizeof(lit) - 1 })

static uint8_t *where(struct fake *f, uint64_t addr, size_t n)
{
	if (addr >= HEAP_BASE && addr + n <= HEAP_BASE + HEAP_SIZE)
		return f->heap + (addr - HEAP_BASE);
	if (addr >= RO_BASE && addr + n <= RO_BASE + RO_SIZE)
		return f->ro + (addr - RO_BASE);
	if (addr >= MHEAP_BASE && addr + n <= MHEAP_BASE + MHEAP_SIZE)
		return f->mheap + (addr - MHEAP_BASE);
	fail_msg("write outside the fake memory at %#" PRIx64, addr);
	return NULL;
}

static void w64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(where(f, addr, 8), &v, 8);
}

static void w32(struct fake *f, uint64_t addr, uint32_t v)
{
	memcpy(where(f, addr, 4), &v, 4);
}

static void w8(struct fake *f, uint64_t addr, uint8_t v)
{
	*where(f, addr, 1) = v;
}

static uint64_t r64(struct fake *f, uint64_t addr)
{
	uint64_t v;

	memcpy(&v, where(f, addr, 8), 8);
	return v;
}

static uint32_t r32(struct fake *f, uint64_t addr)
{
	uint32_t v;

	memcpy(&v, where(f, addr, 4), 4);
	return v;
}

static uint64_t halloc(struct fake *f, size_t n)
{
	uint64_t a = HEAP_BASE + f->top;

	f->top += (n + 15) & ~(size_t)15;
	assert_true(f->top <= HEAP_SIZE);
	memset(f->heap + (a - HEAP_BASE), 0, n);
	return a;
}

static uint64_t hstr(struct fake *f, struct str s)
{
	uint64_t a;

	if (!s.n)
		return 0; /* Go's empty strings often have a nil pointer */
	a = halloc(f, s.n);
	memcpy(where(f, a, s.n), s.p, s.n);
	return a;
}

static uint64_t rostr(struct fake *f, struct str s)
{
	uint64_t a = RO_BASE + f->rotop;

	f->rotop += s.n;
	assert_true(f->rotop <= RO_SIZE);
	memcpy(f->ro + (a - RO_BASE), s.p, s.n);
	return a;
}

static int counting_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	f->reads++;
	f->singles++;
	return mem_read(f->mem, addr, buf, len);
}

static void counting_readv(void *ctx, struct mem_iov *iov, size_t n)
{
	struct fake *f = ctx;
	size_t i;

	f->readvs++;
	f->reads += n;
	for (i = 0; i < n; i++) {
		iov[i].rc = mem_read(f->mem, iov[i].addr, iov[i].buf, iov[i].len);
		if (i == 0 && f->bump_sweepgen) {
			uint64_t a = MHEAP_BASE + f->o->mheap_sweepgen;

			w32(f, a, r32(f, a) + 2);
			f->bump_sweepgen = false;
		}
	}
}

static struct fake *fake_new(const char *version)
{
	struct fake *f = calloc(1, sizeof(*f));
	struct mem_region r[3];

	f->heap = calloc(1, HEAP_SIZE);
	f->ro = calloc(1, RO_SIZE);
	f->mheap = calloc(1, MHEAP_SIZE);
	f->top = 4096; /* keep HEAP_BASE itself unused */
	r[0] = (struct mem_region){ HEAP_BASE, f->heap, HEAP_SIZE };
	r[1] = (struct mem_region){ RO_BASE, f->ro, RO_SIZE };
	r[2] = (struct mem_region){ MHEAP_BASE, f->mheap, MHEAP_SIZE };
	f->mem = mem_fake_new(r, 3);
	f->cmem = (struct gp_mem){ .read = counting_read, .ctx = f, .readv = counting_readv };
	f->gr = gort_new(version, NULL, GORT_ARCH_AMD64);
	assert_non_null(f->gr);
	f->o = gort_offsets(f->gr);
	return f;
}

static void fake_free(struct fake *f)
{
	gort_free(f->gr);
	mem_fake_free(f->mem);
	free(f->heap);
	free(f->ro);
	free(f->mheap);
	free(f);
}

static uint64_t make_g(struct fake *f, uint64_t m, uint64_t goid, uint32_t status, uint64_t *sp)
{
	uint64_t g = halloc(f, 512), stack = halloc(f, 8192);

	w64(f, g + f->o->g_stack_lo, stack);
	w64(f, g + f->o->g_stack_hi, stack + 8192);
	w64(f, g + f->o->g_m, m);
	w64(f, g + f->o->g_goid, goid);
	w32(f, g + f->o->g_atomicstatus, status);
	if (sp)
		*sp = stack + 4000;
	return g;
}

/* A thread with its m, g0, gsignal and a running goroutine goid. */
static void make_thread(struct fake *f, struct fthread *t, uint32_t tid, uint64_t goid)
{
	t->tid = tid;
	t->m = halloc(f, 1024);
	t->g0 = make_g(f, t->m, 0, 0, &t->g0sp);
	t->gsignal = make_g(f, t->m, 0, 0, NULL);
	t->g = make_g(f, t->m, goid, 2, &t->sp);
	w64(f, t->m + f->o->m_g0, t->g0);
	w64(f, t->m + f->o->m_gsignal, t->gsignal);
	w64(f, t->m + f->o->m_procid, tid);
	w64(f, t->m + f->o->m_curg, t->g);
}

/* go1.24+ labels: labelMap {list []label{key, value string}} (runtime/pprof/label.go). */
static uint64_t slice_labels_at(struct fake *f, uint64_t hdr, const struct str *kv, size_t npairs,
				bool ro)
{
	uint64_t arr = npairs ? halloc(f, 32 * npairs) : 0;
	size_t i;

	for (i = 0; i < npairs; i++) {
		const struct str *k = &kv[2 * i], *v = &kv[2 * i + 1];

		w64(f, arr + 32 * i, ro ? rostr(f, *k) : hstr(f, *k));
		w64(f, arr + 32 * i + 8, k->n);
		w64(f, arr + 32 * i + 16, ro ? rostr(f, *v) : hstr(f, *v));
		w64(f, arr + 32 * i + 24, v->n);
	}
	w64(f, hdr, arr);
	w64(f, hdr + 8, npairs);
	w64(f, hdr + 16, npairs);
	return hdr;
}

static uint64_t slice_labels(struct fake *f, const struct str *kv, size_t npairs, bool ro)
{
	return slice_labels_at(f, halloc(f, 24), kv, npairs, ro);
}

/* go1.19-go1.23 labels: g.labels -> cell -> hmap; buckets of map[string]string. */
static uint64_t bucket_new(struct fake *f, size_t n)
{
	return halloc(f, f->o->bucket_size * n);
}

static void bucket_put(struct fake *f, uint64_t b, int cell, uint8_t tophash, struct str k,
		       struct str v)
{
	w8(f, b + (uint64_t)cell, tophash);
	w64(f, b + f->o->bucket_keys + 16 * cell, hstr(f, k));
	w64(f, b + f->o->bucket_keys + 16 * cell + 8, k.n);
	w64(f, b + f->o->bucket_values + 16 * cell, hstr(f, v));
	w64(f, b + f->o->bucket_values + 16 * cell + 8, v.n);
}

static void bucket_link(struct fake *f, uint64_t b, uint64_t ovf)
{
	w64(f, b + f->o->bucket_overflow, ovf);
}

static uint64_t hmap_at(struct fake *f, uint64_t h, uint64_t count, uint8_t B, uint8_t flags,
			uint32_t hash0, uint64_t buckets, uint64_t oldbuckets)
{
	w64(f, h + f->o->hmap_count, count);
	w8(f, h + f->o->hmap_flags, flags);
	w8(f, h + f->o->hmap_b, B);
	w32(f, h + f->o->hmap_hash0, hash0);
	w64(f, h + f->o->hmap_buckets, buckets);
	w64(f, h + f->o->hmap_oldbuckets, oldbuckets);
	return h;
}

static uint64_t map_cell(struct fake *f, uint64_t hmap)
{
	uint64_t c = halloc(f, 8);

	w64(f, c, hmap);
	return c;
}

static void set_labels(struct fake *f, uint64_t g, uint64_t labels)
{
	w64(f, g + f->o->g_labels, labels);
}

/* "k=v,k=v" for plain ASCII sets. */
static void assert_labels(const struct gort_labels *l, const char *want)
{
	char got[4096] = "";
	size_t n = 0;
	uint32_t i;

	assert_non_null(l);
	for (i = 0; i < l->n; i++) {
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%.*s=%.*s", i ? "," : "",
				      (int)l->pairs[i].klen, l->pairs[i].key, (int)l->pairs[i].vlen,
				      l->pairs[i].value);
		assert_int_equal(l->pairs[i].key[l->pairs[i].klen], 0);
		assert_int_equal(l->pairs[i].value[l->pairs[i].vlen], 0);
	}
	assert_string_equal(got, want);
}

static int rd(struct fake *f, const struct fthread *t, uint64_t greg, uint64_t sp, struct gort_result *r)
{
	return gort_read(f->gr, &f->cmem, t->tid, greg, sp, r);
}

/* ---------------------------------------------------------------- offsets and versions */

static void test_versions(void **state)
{
	struct gort *g;

	g = gort_new("go1.24.4", NULL, GORT_ARCH_AMD64);
	assert_non_null(g);
	assert_string_equal(gort_offsets_source(g), "table go1.24");
	assert_int_equal(gort_offsets(g)->labels_kind, GORT_LABELS_SLICE);
	assert_int_equal(gort_offsets(g)->go_minor, 24);
	gort_free(g);

	g = gort_new("go1.23.5", NULL, GORT_ARCH_ARM64);
	assert_non_null(g);
	assert_string_equal(gort_offsets_source(g), "table go1.23");
	assert_int_equal(gort_offsets(g)->labels_kind, GORT_LABELS_MAP);
	gort_free(g);

	g = gort_new("devel go1.27-abcdef Tue Jan 1 2030", NULL, GORT_ARCH_AMD64);
	assert_non_null(g);
	assert_string_equal(gort_offsets_source(g), "table go1.27");
	gort_free(g);
	g = gort_new("go1.26rc1 X:boringcrypto", NULL, GORT_ARCH_AMD64);
	assert_non_null(g);
	assert_string_equal(gort_offsets_source(g), "table go1.26");
	gort_free(g);

	/* Unknown without DWARF: ENOTSUP, never a guess. */
	errno = 0;
	assert_null(gort_new("go1.99.1", NULL, GORT_ARCH_AMD64));
	assert_int_equal(errno, ENOTSUP);
	errno = 0;
	assert_null(gort_new("go1.18.10", NULL, GORT_ARCH_AMD64));
	assert_int_equal(errno, ENOTSUP);
	errno = 0;
	assert_null(gort_new("go1.2", NULL, GORT_ARCH_AMD64)); /* not 1.20 */
	assert_int_equal(errno, ENOTSUP);
	assert_null(gort_new("go1.240", NULL, GORT_ARCH_AMD64));
	assert_null(gort_new("xgo1.24", NULL, GORT_ARCH_AMD64));
	assert_null(gort_new("", NULL, GORT_ARCH_AMD64));
	assert_null(gort_new(NULL, NULL, GORT_ARCH_AMD64));
	errno = 0;
	assert_null(gort_new("go1.24.4", NULL, 7));
	assert_int_equal(errno, EINVAL);
	assert_non_null(gort_table_offsets("go1.19.8"));
	assert_null(gort_table_offsets("go1.17"));
	gort_free(NULL);
}

/* The table's rows must follow the struct changes the Go sources describe. */
static void test_table_history(void **state)
{
	const struct gort_offsets *o19 = gort_table_offsets("go1.19"), *o21 = gort_table_offsets("go1.21"),
				  *o23 = gort_table_offsets("go1.23"), *o24 = gort_table_offsets("go1.24"),
				  *o25 = gort_table_offsets("go1.25"), *o26 = gort_table_offsets("go1.26"),
				  *o27 = gort_table_offsets("go1.27");

	/* go1.21 runtime2.go: trace fields folded into gTraceState, parentGoid added: -16. */
	assert_int_equal(o21->g_labels, o19->g_labels - 16);
	/* go1.23: g.syscallbp added after syscallpc: +8 for everything after offset 128. */
	assert_int_equal(o23->g_goid, o21->g_goid + 8);
	assert_int_equal(o23->g_labels, o21->g_labels + 8);
	/* go1.24 changed labels to a slice, not the structs. */
	assert_int_equal(o24->g_labels, o23->g_labels);
	assert_int_equal(o24->labels_kind, GORT_LABELS_SLICE);
	assert_int_equal(o23->labels_kind, GORT_LABELS_MAP);
	/* go1.25: gobuf.ret removed (-8 after g.sched and after m.morebuf). */
	assert_int_equal(o25->g_goid, o24->g_goid - 8);
	assert_int_equal(o25->m_procid, o24->m_procid - 8);
	assert_int_equal(o25->m_curg, o24->m_curg - 8);
	assert_int_equal(o25->g_sched_bp, o24->g_sched_bp - 8);
	/* go1.26: fields added to g before labels (+8); 1.27 keeps 1.26's layout. */
	assert_int_equal(o26->g_labels, o25->g_labels + 8);
	assert_memory_equal(&o26->g_stack_lo, &o27->g_stack_lo,
			    offsetof(struct gort_offsets, bucket_size) - offsetof(struct gort_offsets, g_stack_lo));
}

/* ---------------------------------------------------------------- validation */

static void test_user_g(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	struct str kv[] = { S("handler"), S("alpha") };

	make_thread(f, &t, 1234, 77);
	set_labels(f, t.g, slice_labels(f, kv, 1, false));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(r.goid, 77);
	assert_int_equal(r.flags, 0);
	assert_labels(r.labels, "handler=alpha");
	/* Second time the thread's m is known: a single read of g, plus the label check. */
	f->reads = 0;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(r.goid, 77);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.fast_path, 1);
	assert_int_equal(st.via_register, 2);
	/* A syscall status is flagged; a scan bit is tolerated. */
	w32(f, t.g + f->o->g_atomicstatus, 3);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_true(r.flags & GORT_SYSCALL);
	w32(f, t.g + f->o->g_atomicstatus, 0x1002);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(r.goid, 77);
	/* Waiting, runnable, dead: no goroutine, never a stale one. */
	w32(f, t.g + f->o->g_atomicstatus, 4);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), -ENOENT);
	assert_int_equal(r.goid, 0);
	assert_null(r.labels);
	w32(f, t.g + f->o->g_atomicstatus, 6);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), -ENOENT);
	w32(f, t.g + f->o->g_atomicstatus, 2);
	/* SP outside the goroutine's stack (vDSO, C code): still the goroutine, flagged. */
	assert_int_equal(rd(f, &t, t.g, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 77);
	assert_true(r.flags & GORT_OFF_STACK);
	fake_free(f);
}

static void test_procid_mismatch(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct fthread t;

	make_thread(f, &t, 1234, 77);
	/* The same g with SP on its stack sampled on another thread: it ran there then and
	 * runs on its m's thread now. */
	t.tid = 999;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(r.goid, 77);
	assert_true(r.flags & GORT_LEFT);
	/* With SP elsewhere the register proves nothing. */
	assert_int_equal(rd(f, &t, t.g, t.g0sp, &r), -ENOENT);
	assert_int_equal(r.goid, 0);
	t.tid = 1234;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	/* The m now belongs to another thread (a cgo extra m moved on); this thread runs C
	 * code (SP elsewhere) with the old g still in R14. */
	w64(f, t.m + f->o->m_procid, 4321);
	assert_int_equal(rd(f, &t, t.g, t.g0sp + 100000, &r), -ENOENT);
	assert_int_equal(rd(f, &t, 0, t.sp, &r), -ENOENT);
	/* A g of another thread in the register, SP on its stack: the goroutine ran here
	 * when sampled and moved to that thread since: it is the answer (never this
	 * thread's current goroutine). Without SP on its stack it is not. */
	{
		struct fthread u;

		make_thread(f, &u, 5555, 88);
		w64(f, t.m + f->o->m_procid, 1234);
		assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
		assert_int_equal(rd(f, &t, u.g, u.sp, &r), 0);
		assert_int_equal(r.goid, 88);
		assert_true(r.flags & GORT_LEFT);
		assert_int_equal(rd(f, &t, u.g, t.sp, &r), -ENOENT);
		assert_int_equal(rd(f, &t, u.g0, u.g0sp, &r), -ENOENT);
	}
	/* A g that claims the m but is not its curg, SP on its own stack (a register older
	 * than the read: that goroutine ran then). Not the curg's. */
	w64(f, t.m + f->o->m_procid, 1234);
	{
		uint64_t osp, other = make_g(f, t.m, 78, 2, &osp);

		gort_reset(f->gr);
		assert_int_equal(rd(f, &t, other, osp, &r), -ENOENT);
		/* With SP on curg's stack the register is what is stale: curg it is. */
		assert_int_equal(rd(f, &t, other, t.sp, &r), 0);
		assert_int_equal(r.goid, 77);
		assert_true(r.flags & GORT_VIA_M);
	}
	/* curg whose m is another m. */
	w64(f, t.g + f->o->g_m, t.m + 8);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), -ENOENT);
	assert_int_equal(r.goid, 0);
	fake_free(f);
}

static void test_system_stack(void **state)
{
	struct fake *f = fake_new("go1.23.5");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;

	make_thread(f, &t, 42, 5);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 5);
	assert_true(r.flags & GORT_SYSTEM_STACK);
	assert_false(r.flags & GORT_OFF_STACK);
	assert_int_equal(rd(f, &t, t.gsignal, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 5);
	assert_true(r.flags & GORT_SYSTEM_STACK);
	/* Known thread: g0 costs one read of m and one of curg. */
	f->reads = 0;
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), 0);
	assert_int_equal(f->reads, 2);
	/* Scheduler or idle: no curg. */
	w64(f, t.m + f->o->m_curg, 0);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), -ENOENT);
	assert_true(r.flags & GORT_NO_G);
	gort_reset(f->gr);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), -ENOENT);
	assert_true(r.flags & GORT_NO_G);
	/* curg dead (runtime2.go _Gdead 6): not a goroutine the m serves. */
	w64(f, t.m + f->o->m_curg, t.g);
	w32(f, t.g + f->o->g_atomicstatus, 6);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), -ENOENT);
	/* curg suspended for the work the m does on g0 for it: its stack being copied
	 * (_Gcopystack 8, newstack), a GC assist (_Gwaiting 4): still the sample's. */
	w32(f, t.g + f->o->g_atomicstatus, 8);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 5);
	w32(f, t.g + f->o->g_atomicstatus, 4);
	assert_int_equal(rd(f, &t, t.g0, t.g0sp, &r), 0);
	w32(f, t.g + f->o->g_atomicstatus, 2);
	gort_get_stats(f->gr, &st);
	assert_true(st.system_stack >= 5);
	fake_free(f);
}

/* A register naming the thread's g0, gsignal or goroutine is believed only with SP on
 * that stack (or, for the goroutine, on g0's: vDSO and cgo calls): garbage in R14 that
 * happens to name them must not give a goroutine that did not run. */
static void test_register_needs_sp(void **state)
{
	struct fake *f = fake_new("go1.27.1");
	struct gort_result r;
	struct fthread t, u;
	uint64_t elsewhere;

	make_thread(f, &t, 42, 5);
	make_thread(f, &u, 43, 6);
	elsewhere = u.sp; /* another thread's goroutine stack */
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0); /* learn the thread */
	assert_int_equal(r.goid, 5);
	assert_int_equal(rd(f, &t, t.g0, elsewhere, &r), -ENOENT);
	assert_int_equal(rd(f, &t, t.gsignal, elsewhere, &r), -ENOENT);
	assert_int_equal(rd(f, &t, t.g, elsewhere, &r), -ENOENT);
	/* The goroutine's register on g0's stack: a vDSO call, believed. */
	assert_int_equal(rd(f, &t, t.g, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 5);
	assert_true(r.flags & GORT_OFF_STACK);
	/* g0 with SP on the goroutine's stack: the register is wrong, SP proves curg. */
	assert_int_equal(rd(f, &t, t.g0, t.sp, &r), 0);
	assert_int_equal(r.goid, 5);
	assert_true(r.flags & GORT_VIA_M);
	/* The same on a thread seen first through the register naming g0. */
	gort_reset(f->gr);
	assert_int_equal(rd(f, &t, t.g0, elsewhere, &r), -ENOENT);
	fake_free(f);
}

static void test_bad_register(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	uint64_t junk;

	make_thread(f, &t, 7, 9);
	/* Never seen: nothing to fall back on. */
	assert_int_equal(rd(f, &t, 0, t.sp, &r), -ENOENT);
	assert_int_equal(rd(f, &t, 0x13, t.sp, &r), -ENOENT);        /* unaligned */
	assert_int_equal(rd(f, &t, 0x7f0000000000ULL, t.sp, &r), -EFAULT); /* unmapped */
	assert_int_equal(rd(f, &t, ~0ULL << 3, t.sp, &r), -ENOENT);  /* non-canonical */
	/* Readable garbage: a "g" whose m pointer is junk, or points at a fake m. */
	junk = halloc(f, 512);
	memset(where(f, junk, 512), 0xa5, 512);
	assert_int_equal(rd(f, &t, junk, t.sp, &r), -ENOENT);
	w64(f, junk + f->o->g_m, junk);
	assert_int_equal(rd(f, &t, junk, t.sp, &r), -ENOENT);
	/* Once the thread's m is known, a bad register falls back to m.curg. */
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(rd(f, &t, 0, 0, &r), 0);
	assert_int_equal(r.goid, 9);
	assert_true(r.flags & GORT_VIA_M);
	assert_int_equal(rd(f, &t, junk, t.sp, &r), 0);
	assert_int_equal(r.goid, 9);
	assert_true(r.flags & GORT_VIA_M);
	assert_int_equal(rd(f, &t, 0x7f0000000000ULL, t.sp, &r), 0);
	assert_int_equal(r.goid, 9);
	/* Without a usable register, SP decides: on g0's stack (C code of a cgo call) the
	 * goroutine is curg; elsewhere (another goroutine's stack) there is no answer. */
	assert_int_equal(rd(f, &t, 0, t.g0sp, &r), 0);
	assert_int_equal(r.goid, 9);
	assert_true(r.flags & GORT_SYSTEM_STACK);
	assert_int_equal(rd(f, &t, 0, junk + 8, &r), -ENOENT);
	/* ... and never for another thread. */
	t.tid = 8;
	assert_int_equal(rd(f, &t, 0, 0, &r), -ENOENT);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.via_m_cache, 4);
	assert_true(st.faults >= 1);
	fake_free(f);
}

static void test_allm(void **state)
{
	struct fake *f = fake_new("go1.27.3");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t[3];
	uint64_t allm = halloc(f, 8);
	int i;

	for (i = 0; i < 3; i++)
		make_thread(f, &t[i], 100 + (uint32_t)i, 10 + (uint64_t)i);
	w64(f, allm, t[2].m);
	w64(f, t[2].m + f->o->m_alllink, t[1].m);
	w64(f, t[1].m + f->o->m_alllink, t[0].m);
	gort_set_runtime_vars(f->gr, allm, 0);
	/* Threads never seen with a valid g register (cgo, C code): found through allm. */
	for (i = 0; i < 3; i++) {
		assert_int_equal(rd(f, &t[i], 0, 0, &r), 0);
		assert_int_equal(r.goid, 10 + (uint64_t)i);
		assert_true(r.flags & GORT_VIA_M);
	}
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.allm_walks, 1);
	assert_int_equal(st.via_allm, 1);
	assert_int_equal(st.via_m_cache, 2);
	/* A cycle in the list ends; an unknown thread stays unknown. */
	gort_reset(f->gr);
	w64(f, t[0].m + f->o->m_alllink, t[2].m);
	t[0].tid = 555;
	assert_int_equal(rd(f, &t[0], 0, 0, &r), -ENOENT);
	fake_free(f);
}

/* A process with many threads: every one is found through one walk of allm, whatever
 * its tid hashes to (direct-mapped, tids that hash alike evicted each other). */
static void test_allm_many(void **state)
{
	enum { N = 120 };
	struct fake *f = fake_new("go1.23.4");
	struct gort_result r;
	struct gort_stats st;
	static struct fthread t[N];
	uint64_t allm = halloc(f, 8), prev = 0;
	int i, found = 0;

	(void)state;
	for (i = 0; i < N; i++) {
		make_thread(f, &t[i], 40000 + 3 * (uint32_t)i, 1000 + (uint64_t)i);
		w64(f, t[i].m + f->o->m_alllink, prev);
		prev = t[i].m;
	}
	w64(f, allm, prev);
	gort_set_runtime_vars(f->gr, allm, 0);
	for (i = 0; i < N; i++)
		if (rd(f, &t[i], 0, 0, &r) == 0 && r.goid == 1000 + (uint64_t)i && (r.flags & GORT_VIA_M))
			found++;
	gort_get_stats(f->gr, &st);
	assert_int_equal(found, N);
	assert_int_equal(st.allm_walks, 1);
	fake_free(f);
}

/* ---------------------------------------------------------------- labels: slices */

static void test_slice_labels(void **state)
{
	struct fake *f = fake_new("go1.26.10");
	struct gort_result r;
	struct fthread t;
	/* Unsorted on purpose (the runtime sorts; garbage may not be): gort sorts by key. */
	struct str kv[] = { S("tenant"), S("acme"), S("handler"), S("alpha"), S(""), S("empty-key"),
			    S("empty-value"), S("") };

	make_thread(f, &t, 1, 2);
	set_labels(f, t.g, slice_labels(f, kv, 4, false));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "=empty-key,empty-value=,handler=alpha,tenant=acme");
	assert_int_equal(r.labels->truncated, 0);
	/* Empty list: no labels, not an error. */
	set_labels(f, t.g, slice_labels(f, NULL, 0, false));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_null(r.labels);
	assert_int_equal(r.flags & (GORT_LABELS_BAD | GORT_LABELS_DROPPED), 0);
	fake_free(f);
}

static void test_raw_bytes_and_truncation(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct fthread t;
	char longv[1000], longk[300];
	struct str kv[2 * 70];
	char names[70][16], vals[70][16];
	int i;

	make_thread(f, &t, 1, 2);
	memset(longv, 'v', sizeof(longv));
	memset(longk, 'k', sizeof(longk));
	kv[0] = S("esc\x1b[31m");
	kv[1] = S("nul\0byte\xff\xfe");
	kv[2] = (struct str){ longk, sizeof(longk) };
	kv[3] = S("x");
	kv[4] = S("long");
	kv[5] = (struct str){ longv, sizeof(longv) };
	set_labels(f, t.g, slice_labels(f, kv, 3, false));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_non_null(r.labels);
	assert_int_equal(r.labels->n, 3);
	assert_int_equal(r.labels->truncated, GORT_TRUNC_STRING);
	/* Raw bytes kept with their lengths, NUL included. */
	assert_int_equal(r.labels->pairs[0].klen, 8);
	assert_memory_equal(r.labels->pairs[0].key, "esc\x1b[31m", 8);
	assert_int_equal(r.labels->pairs[0].vlen, 10);
	assert_memory_equal(r.labels->pairs[0].value, "nul\0byte\xff\xfe", 10);
	/* Cut at GORT_MAX_STRLEN with the mark appended. */
	assert_int_equal(r.labels->pairs[1].klen, GORT_MAX_STRLEN + strlen(GORT_TRUNC_MARK));
	assert_memory_equal(r.labels->pairs[1].key + GORT_MAX_STRLEN, GORT_TRUNC_MARK,
			    strlen(GORT_TRUNC_MARK));
	assert_string_equal(r.labels->pairs[2].key, "long");
	assert_int_equal(r.labels->pairs[2].vlen, GORT_MAX_STRLEN + strlen(GORT_TRUNC_MARK));

	/* 70 labels (sorted, as Labels and mergeLabelSets keep them): the first 64 stay. */
	for (i = 0; i < 70; i++) {
		snprintf(names[i], sizeof(names[i]), "k%02d", i);
		snprintf(vals[i], sizeof(vals[i]), "v%d", i);
		kv[2 * i] = (struct str){ names[i], strlen(names[i]) };
		kv[2 * i + 1] = (struct str){ vals[i], strlen(vals[i]) };
	}
	set_labels(f, t.g, slice_labels(f, kv, 70, true));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(r.labels->n, GORT_MAX_LABELS);
	assert_int_equal(r.labels->truncated, GORT_TRUNC_PAIRS);
	assert_string_equal(r.labels->pairs[0].key, "k00");
	assert_string_equal(r.labels->pairs[63].key, "k63");
	assert_string_equal(r.labels->pairs[63].value, "v63");
	fake_free(f);
}

static void test_slice_garbage(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct fthread t;
	struct str kv[] = { S("a"), S("b"), S("c"), S("d") };
	uint64_t l;

	make_thread(f, &t, 1, 2);
	l = slice_labels(f, kv, 2, false);
	set_labels(f, t.g, l);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "a=b,c=d");
#define BAD()                                                            \
	do {                                                             \
		gort_reset(f->gr);                                       \
		assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);           \
		assert_int_equal(r.goid, 2);                             \
		assert_null(r.labels);                                   \
		assert_true(r.flags & GORT_LABELS_BAD);                  \
	} while (0)
	w64(f, l + 8, 3); /* len > cap */
	BAD();
	w64(f, l + 8, 1ULL << 40);
	w64(f, l + 16, 1ULL << 40);
	BAD();
	w64(f, l + 8, 2);
	w64(f, l + 16, 2);
	w64(f, l, 0x7f0000000000ULL); /* array unmapped */
	BAD();
	w64(f, l, 0);
	BAD();
	w64(f, l, 3); /* unaligned */
	BAD();
	/* Strings: huge length, unmapped pointer. */
	l = slice_labels(f, kv, 2, false);
	set_labels(f, t.g, l);
	w64(f, r64(f, l) + 8, 1ULL << 40);
	BAD();
	w64(f, r64(f, l) + 8, 1);
	w64(f, r64(f, l) + 16, 0x7f0000000000ULL);
	BAD();
	/* The labels pointer itself. */
	set_labels(f, t.g, 0x7f0000000000ULL);
	BAD();
	set_labels(f, t.g, l + 4);
	BAD();
	set_labels(f, t.g, 0);
	gort_reset(f->gr);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_null(r.labels);
	assert_int_equal(r.flags, 0);
	fake_free(f);
}

/* ---------------------------------------------------------------- labels: maps */

static void test_map_buckets_overflow(void **state)
{
	struct fake *f = fake_new("go1.23.5");
	struct gort_result r;
	struct fthread t;
	uint64_t b = bucket_new(f, 4), ovf = bucket_new(f, 1), ovf2 = bucket_new(f, 1);
	char k[16][16], v[16][16];
	int i;

	make_thread(f, &t, 1, 2);
	for (i = 0; i < 16; i++) {
		snprintf(k[i], sizeof(k[i]), "k%02d", i);
		snprintf(v[i], sizeof(v[i]), "v%d", i);
	}
	/* 4 buckets (B=2) with holes (tophash 0 and 1), two chained overflow buckets. */
	bucket_put(f, b, 0, 200, (struct str){ k[0], 3 }, (struct str){ v[0], 2 });
	bucket_put(f, b, 3, 5, (struct str){ k[1], 3 }, (struct str){ v[1], 2 });
	w8(f, b + 1, 1);
	bucket_put(f, b + f->o->bucket_size, 7, 99, (struct str){ k[2], 3 }, (struct str){ v[2], 2 });
	for (i = 0; i < 8; i++)
		bucket_put(f, b + 3 * f->o->bucket_size, i, (uint8_t)(10 + i), (struct str){ k[3 + i], 3 },
			   (struct str){ v[3 + i], strlen(v[3 + i]) });
	bucket_link(f, b + 3 * f->o->bucket_size, ovf);
	bucket_put(f, ovf, 2, 255, (struct str){ k[11], 3 }, (struct str){ v[11], 3 });
	bucket_link(f, ovf, ovf2);
	bucket_put(f, ovf2, 0, 77, (struct str){ k[12], 3 }, (struct str){ v[12], 3 });
	set_labels(f, t.g, map_cell(f, hmap_at(f, halloc(f, 48), 13, 2, 0, 0x1234, b, 0)));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "k00=v0,k01=v1,k02=v2,k03=v3,k04=v4,k05=v5,k06=v6,k07=v7,k08=v8,"
				"k09=v9,k10=v10,k11=v11,k12=v12");
	/* A nil map and an empty one: no labels. */
	set_labels(f, t.g, map_cell(f, 0));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_null(r.labels);
	assert_int_equal(r.flags, 0);
	set_labels(f, t.g, map_cell(f, hmap_at(f, halloc(f, 48), 0, 0, 0, 1, 0, 0)));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_null(r.labels);
	assert_int_equal(r.flags, 0);
	fake_free(f);
}

/* A map caught growing (WithLabels inserts into a map made with the parent's size): the
 * old array holds the cells not yet evacuated; evacuated cells (tophash 2, 3, 4) still
 * hold their keys and must not be counted twice. */
static void test_map_growth(void **state)
{
	struct fake *f = fake_new("go1.21.13");
	struct gort_result r;
	struct fthread t;
	uint64_t nb = bucket_new(f, 4), ob = bucket_new(f, 2), h;

	make_thread(f, &t, 1, 2);
	/* old bucket 0: evacuated (its cells live on in the new array). */
	bucket_put(f, ob, 0, 2, S("a"), S("1"));
	bucket_put(f, ob, 1, 3, S("b"), S("2"));
	w8(f, ob + 2, 4);
	bucket_put(f, nb, 0, 50, S("a"), S("1"));
	bucket_put(f, nb + 2 * f->o->bucket_size, 4, 60, S("b"), S("2"));
	/* old bucket 1: not evacuated yet. */
	bucket_put(f, ob + f->o->bucket_size, 0, 70, S("c"), S("3"));
	bucket_put(f, ob + f->o->bucket_size, 5, 80, S("d"), S("4"));
	/* inserted after the growth started */
	bucket_put(f, nb + 3 * f->o->bucket_size, 1, 90, S("e"), S("5"));
	h = hmap_at(f, halloc(f, 48), 5, 2, 0, 7, nb, ob);
	set_labels(f, t.g, map_cell(f, h));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "a=1,b=2,c=3,d=4,e=5");
	/* Same-size growth: the old array has 2^B buckets too. */
	{
		uint64_t nb2 = bucket_new(f, 2), ob2 = bucket_new(f, 2);

		bucket_put(f, ob2 + f->o->bucket_size, 3, 9, S("x"), S("old"));
		bucket_put(f, nb2, 1, 9, S("y"), S("new"));
		h = hmap_at(f, halloc(f, 48), 2, 1, 8, 8, nb2, ob2);
		set_labels(f, t.g, map_cell(f, h));
		assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
		assert_labels(r.labels, "x=old,y=new");
	}
	fake_free(f);
}

static void test_map_garbage(void **state)
{
	struct fake *f = fake_new("go1.19.8");
	struct gort_result r;
	struct fthread t;
	uint64_t b = bucket_new(f, 2), h = halloc(f, 48), c;

	make_thread(f, &t, 1, 2);
	bucket_put(f, b, 0, 9, S("a"), S("1"));
	bucket_put(f, b + f->o->bucket_size, 0, 9, S("b"), S("2"));
	hmap_at(f, h, 2, 1, 0, 5, b, 0);
	c = map_cell(f, h);
	set_labels(f, t.g, c);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "a=1,b=2");
	/* count disagreeing with the cells (torn or garbage) */
	w64(f, h + f->o->hmap_count, 3);
	BAD();
	w64(f, h + f->o->hmap_count, 2);
	/* huge B */
	w8(f, h + f->o->hmap_b, 40);
	BAD();
	w8(f, h + f->o->hmap_b, 1);
	/* a cycle in an overflow chain */
	bucket_link(f, b, b);
	BAD();
	bucket_link(f, b, 0x7f0000000000ULL); /* unmapped overflow */
	BAD();
	bucket_link(f, b, 0);
	/* B = 0 with old buckets but no same-size flag: nonsense */
	w8(f, h + f->o->hmap_b, 0);
	w64(f, h + f->o->hmap_oldbuckets, b);
	BAD();
	w8(f, h + f->o->hmap_b, 1);
	w64(f, h + f->o->hmap_oldbuckets, 0);
	/* buckets unmapped; hmap unmapped */
	w64(f, h + f->o->hmap_buckets, 0x7f0000000000ULL);
	BAD();
	w64(f, h + f->o->hmap_buckets, b);
	w64(f, c, 0x7f0000000000ULL);
	BAD();
	w64(f, c, h);
	/* huge string in a cell */
	w64(f, b + f->o->bucket_values + 8, 1ULL << 50);
	BAD();
	fake_free(f);
}

/* ---------------------------------------------------------------- cache */

static void test_cache_and_interning(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r, r2;
	struct gort_stats st;
	struct fthread t, u;
	struct str kv[] = { S("handler"), S("alpha") };
	uint64_t l1, l2;

	make_thread(f, &t, 1, 2);
	make_thread(f, &u, 3, 4);
	l1 = slice_labels(f, kv, 1, false);
	l2 = slice_labels(f, kv, 1, true);
	set_labels(f, t.g, l1);
	set_labels(f, u.g, l2);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(rd(f, &u, u.g, u.sp, &r2), 0);
	/* Two label objects, equal content: one interned set, comparable by pointer. */
	assert_ptr_equal(r.labels, r2.labels);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r2), 0);
	assert_ptr_equal(r.labels, r2.labels);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_decodes, 2);
	assert_int_equal(st.label_hits_checked, 1);
	assert_int_equal(st.interned_sets, 1);
	/* More label objects than cache entries: evicted ones are decoded again, correctly. */
	{
		int i;
		char v[16];

		for (i = 0; i < 6000; i++) {
			struct str p[2] = { S("i"), { v, 0 } };

			p[1].n = (size_t)snprintf(v, sizeof(v), "%d", i % 50);
			set_labels(f, t.g, slice_labels(f, p, 1, false));
			assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
			assert_int_equal(r.labels->pairs[0].vlen, strlen(v));
			assert_memory_equal(r.labels->pairs[0].value, v, strlen(v));
			if (f->top > HEAP_SIZE - (64u << 10))
				f->top = 1u << 20; /* reuse memory: stale entries everywhere */
		}
		gort_get_stats(f->gr, &st);
		assert_int_equal(st.interned_sets, 51);
	}
	fake_free(f);
}

/* The label cache grows when its sets in use do not fit (sets evicted, then decoded
 * again: a snapshot of all goroutines cycling through more sets than it holds), and not
 * when each set is seen once (a sample per request). */
static void test_cache_growth(void **state)
{
	enum { CYCLE = 6000 };
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	uint64_t *obj = calloc(CYCLE, sizeof(*obj)), slots0, dec0, hits0;
	char v[16];
	int i, pass;

	make_thread(f, &t, 1, 2);
	gort_get_stats(f->gr, &st);
	slots0 = st.label_cache_slots;
	assert_true(slots0 < CYCLE);
	/* Seen once each: 3 times as many sets as the cache holds. */
	for (i = 0; i < (int)(3 * slots0); i++) {
		struct str p[2] = { S("req"), { v, 0 } };

		p[1].n = (size_t)snprintf(v, sizeof(v), "%d", i % 97);
		set_labels(f, t.g, slice_labels(f, p, 1, false));
		assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
		if (f->top > HEAP_SIZE - (64u << 10))
			f->top = 1u << 20;
	}
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_cache_slots, slots0);
	/* A cycle over more sets than it holds, as snapshots make. */
	f->top = 1u << 20;
	for (i = 0; i < CYCLE; i++) {
		struct str p[2] = { S("req"), { v, 0 } };

		p[1].n = (size_t)snprintf(v, sizeof(v), "%d", i % 97);
		obj[i] = slice_labels(f, p, 1, false);
	}
	for (pass = 0; pass < 4; pass++) {
		gort_get_stats(f->gr, &st);
		dec0 = st.label_decodes;
		hits0 = st.label_hits_epoch + st.label_hits_checked;
		for (i = 0; i < CYCLE; i++) {
			set_labels(f, t.g, obj[i]);
			assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
			snprintf(v, sizeof(v), "%d", i % 97);
			assert_int_equal(r.labels->pairs[0].vlen, strlen(v));
			assert_memory_equal(r.labels->pairs[0].value, v, strlen(v));
		}
		gort_get_stats(f->gr, &st);
		print_message("pass %d: %" PRIu64 " decodes, %" PRIu64 " hits, %" PRIu64 " slots\n", pass,
			      st.label_decodes - dec0,
			      st.label_hits_epoch + st.label_hits_checked - hits0, st.label_cache_slots);
	}
	/* It grows in the second pass; the third still decodes what was evicted in the
	 * second before it grew; the last: nearly all hits. */
	assert_true(st.label_cache_slots > slots0);
	assert_true(st.label_cache_slots <= 4 * slots0);
	assert_true(st.label_decodes - dec0 < CYCLE / 20);
	free(obj);
	fake_free(f);
}

/* The same labels pointer, new contents (the GC freed the object and reused it). */
static void test_cache_invalidation_slice(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	struct str kv[] = { S("req"), S("1001"), S("route"), S("/a") };
	struct str kv2[] = { S("req"), S("1002"), S("route"), S("/b") };
	uint64_t l, val;

	make_thread(f, &t, 1, 2);
	l = slice_labels(f, kv, 2, false);
	set_labels(f, t.g, l);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1001,route=/a");
	/* 1. A heap string rewritten in place: same pointers, same lengths. */
	val = r64(f, r64(f, l) + 16);
	memcpy(where(f, val, 4), "1009", 4);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1009,route=/a");
	/* 2. A new array behind the same header address. */
	slice_labels_at(f, l, kv2, 2, false);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1002,route=/b");
	/* 3. Fewer labels. */
	w64(f, l + 8, 1);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1002");
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_stale, 3);
	assert_int_equal(st.label_decodes, 4);
	fake_free(f);
}

static void test_cache_invalidation_map(void **state)
{
	struct fake *f = fake_new("go1.22.12");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	uint64_t b = bucket_new(f, 1), h = halloc(f, 48), c;

	make_thread(f, &t, 1, 2);
	bucket_put(f, b, 0, 9, S("a"), S("1"));
	c = map_cell(f, hmap_at(f, h, 1, 0, 0, 111, b, 0));
	set_labels(f, t.g, c);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "a=1");
	/* Iterating the map (WithLabels copies the parent) sets flag bits: still a hit. */
	w8(f, h + f->o->hmap_flags, 3);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_hits_checked, 1);
	/* A new map at the same address: a new hash0 (makemap: fastrand). */
	bucket_put(f, b, 0, 9, S("a"), S("2"));
	hmap_at(f, h, 1, 0, 0, 222, b, 0);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "a=2");
	/* A new map elsewhere behind the same cell. */
	{
		uint64_t b2 = bucket_new(f, 1);

		bucket_put(f, b2, 4, 9, S("z"), S("26"));
		w64(f, c, hmap_at(f, halloc(f, 48), 1, 0, 0, 222, b2, 0));
	}
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "z=26");
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_stale, 2);
	fake_free(f);
}

/* With runtime.mheap_ known: an unchanged sweep generation proves the object unchanged
 * (nothing is freed before the next GC cycle ends), a new one forces the fingerprint. */
static void test_cache_epoch(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct gort_stats st;
	struct fthread t;
	struct str kv[] = { S("req"), S("1001") };
	uint64_t l, sg = MHEAP_BASE + f->o->mheap_sweepgen;

	assert_true(f->o->mheap_sweepgen > 0);
	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	make_thread(f, &t, 1, 2);
	w32(f, sg, 10);
	l = slice_labels(f, kv, 1, false);
	set_labels(f, t.g, l);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1001");
	/* Warm: the read of g and one of sweepgen, nothing else. */
	f->reads = 0;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(f->reads, 2);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_hits_epoch, 1);
	/* A GC cycle ends and the object is reused with other contents. */
	w32(f, sg, 12);
	slice_labels_at(f, l, (struct str[]){ S("req"), S("1002") }, 1, false);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1002");
	/* Another cycle, nothing changed: the fingerprint re-arms the entry. */
	w32(f, sg, 14);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1002");
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_stale, 1);
	assert_int_equal(st.label_hits_checked, 1);
	assert_int_equal(st.label_hits_epoch, 2);
	/* sweepgen unreadable: falls back to fingerprints. */
	gort_set_runtime_vars(f->gr, 0, 0x7f0000000000ULL);
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	assert_labels(r.labels, "req=1002");
	fake_free(f);
}

/* A batch gives what single reads give, with one sweepgen read for all. */
static void test_batch(void **state)
{
	struct fake *f = fake_new("go1.26.10");
	struct fthread t[4];
	struct gort_sample in[6];
	struct gort_result one[6], many[6];
	int rcs[6], i;
	char v[4][8];

	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	for (i = 0; i < 4; i++) {
		struct str kv[2] = { S("n"), { v[i], 0 } };

		kv[1].n = (size_t)snprintf(v[i], sizeof(v[i]), "%d", i);
		make_thread(f, &t[i], 10 + (uint32_t)i, 100 + (uint64_t)i);
		set_labels(f, t[i].g, slice_labels(f, kv, 1, false));
		in[i] = (struct gort_sample){ t[i].tid, t[i].g, t[i].sp, NULL };
	}
	w64(f, t[3].m + f->o->m_curg, 0);
	in[3].greg = t[3].g0; /* idle thread */
	in[4] = (struct gort_sample){ 77, 0, 0, NULL };               /* unknown thread */
	in[5] = (struct gort_sample){ t[1].tid, t[1].g0, t[1].g0sp, NULL }; /* system stack */
	for (i = 0; i < 6; i++) {
		int rc = gort_read(f->gr, &f->cmem, in[i].tid, in[i].greg, in[i].sp, &one[i]);

		assert_int_equal(rc, i == 3 || i == 4 ? -ENOENT : 0);
	}
	f->reads = 0;
	f->readvs = 0;
	gort_read_batch(f->gr, &f->cmem, in, 6, many, rcs);
	for (i = 0; i < 6; i++) {
		assert_int_equal(rcs[i], i == 3 || i == 4 ? -ENOENT : 0);
		assert_int_equal(many[i].goid, one[i].goid);
		assert_ptr_equal(many[i].labels, one[i].labels);
		assert_int_equal(many[i].flags, one[i].flags);
	}
	assert_int_equal(many[5].goid, 101);
	assert_string_equal(many[2].labels->pairs[0].value, "2");
	/* One vectored read: sweepgen; g of 0, 1, 2; m of 3 and of 5; sweepgen again. The
	 * curg of 5 is the g of 1, read already; every label set is a GC-epoch hit. */
	assert_int_equal(f->readvs, 1);
	assert_int_equal(f->reads, 7);
	fake_free(f);
}

/* A snapshot (gobpf_rec) of thread t as the BPF program would take it: the g at greg,
 * its m when with_m, and m.curg when greg is a system stack. */
static void snap_of(struct fake *f, const struct fthread *t, uint64_t greg, uint64_t sp, bool with_m,
		    struct gobpf_rec *r)
{
	const uint64_t gs[2] = { greg, r64(f, t->m + f->o->m_curg) };
	int i;

	memset(r, 0, sizeof(*r));
	r->tid = t->tid;
	r->greg = greg;
	r->sp = sp;
	for (i = 0; i < 2; i++) {
		__u64 *g = i ? r->curg : r->g;

		g[GOBPF_G_STACK_LO] = r64(f, gs[i] + f->o->g_stack_lo);
		g[GOBPF_G_STACK_HI] = r64(f, gs[i] + f->o->g_stack_hi);
		g[GOBPF_G_M] = r64(f, gs[i] + f->o->g_m);
		g[GOBPF_G_GOID] = r64(f, gs[i] + f->o->g_goid);
		g[GOBPF_G_LABELS] = r64(f, gs[i] + f->o->g_labels);
		g[GOBPF_G_STATUS] = r32(f, gs[i] + f->o->g_atomicstatus);
	}
	r->flags = GOBPF_REC_G;
	if (with_m) {
		r->flags |= GOBPF_REC_M;
		r->maddr = t->m;
		r->m[GOBPF_M_G0] = t->g0;
		r->m[GOBPF_M_PROCID] = t->tid;
		r->m[GOBPF_M_GSIGNAL] = t->gsignal;
		r->m[GOBPF_M_CURG] = gs[1];
		if (greg != gs[1])
			r->flags |= GOBPF_REC_CURG;
	}
}

/* Samples with a snapshot take their goroutine and g.labels from it, not from memory as it
 * is at the read: the goroutine may have other labels, or have left the thread, by then. */
static void test_batch_snapshot(void **state)
{
	struct fake *f = fake_new("go1.24.2");
	const struct str a[2] = { S("handler"), S("alpha") }, b[2] = { S("handler"), S("beta") };
	struct gobpf_rec snaps[5];
	struct gort_sample in[5];
	struct gort_result out[5];
	struct gort_stats st;
	struct fthread t, u;
	uint64_t la, lb, other;
	int rcs[5], i;

	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	make_thread(f, &t, 42, 7);
	make_thread(f, &u, 43, 8);
	la = slice_labels(f, a, 1, false);
	lb = slice_labels(f, b, 1, false);
	/* At the sample: goroutine 7 under handler=alpha, on its stack (0); on g0 with
	 * goroutine 7 as curg (1); thread 43's m not in the snapshot (2). */
	set_labels(f, t.g, la);
	snap_of(f, &t, t.g, t.sp, true, &snaps[0]);
	snap_of(f, &t, t.g0, t.g0sp, true, &snaps[1]);
	set_labels(f, u.g, lb);
	snap_of(f, &u, u.g, u.sp, false, &snaps[2]);
	/* A sample whose snapshot names a g that is garbage now (3): the program read a
	 * real g at the sample; at the read its memory is zero. */
	other = make_g(f, t.m, 9, 2, NULL);
	snap_of(f, &t, other, r64(f, other + f->o->g_stack_lo) + 100, true, &snaps[3]);
	w64(f, other + f->o->g_goid, 0);
	w64(f, other + f->o->g_m, 0);
	/* Garbage in the register (assembly using R14): the program read the thread's m,
	 * known from an earlier sample, and its curg, goroutine 7 then (4). */
	snap_of(f, &t, t.g0, t.sp, true, &snaps[4]);
	snaps[4].greg = 0x5000; /* unmapped */
	snaps[4].flags &= ~(uint32_t)GOBPF_REC_G;
	assert_true(snaps[4].flags & GOBPF_REC_CURG);
	/* By the read, goroutine 7 runs under handler=beta and m.curg is another g. */
	set_labels(f, t.g, lb);
	w64(f, t.m + f->o->m_curg, make_g(f, t.m, 11, 2, NULL));
	for (i = 0; i < 5; i++)
		in[i] = (struct gort_sample){ snaps[i].tid, snaps[i].greg, snaps[i].sp, &snaps[i] };
	gort_read_batch(f->gr, &f->cmem, in, 5, out, rcs);
	assert_int_equal(rcs[0], 0);
	assert_int_equal(out[0].goid, 7);
	assert_labels(out[0].labels, "handler=alpha"); /* memory says beta by now */
	assert_int_equal(rcs[1], 0);
	assert_int_equal(out[1].goid, 7); /* memory's curg is goroutine 11 by now */
	assert_true(out[1].flags & GORT_SYSTEM_STACK);
	assert_labels(out[1].labels, "handler=alpha");
	assert_int_equal(rcs[2], 0);
	assert_int_equal(out[2].goid, 8); /* the m read from memory: procid still 43 */
	assert_labels(out[2].labels, "handler=beta");
	assert_int_equal(rcs[3], 0);
	assert_int_equal(out[3].goid, 9);
	assert_int_equal(rcs[4], 0);
	assert_int_equal(out[4].goid, 7); /* memory's curg is goroutine 11 by now */
	assert_true(out[4].flags & GORT_VIA_M);
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.snapshots, 5);
	assert_true(st.snap_labels_moved >= 1); /* goroutine 7's labels moved since */
	/* Without snapshots the same samples read memory as it is now. */
	for (i = 0; i < 4; i++)
		in[i].snap = NULL;
	gort_read_batch(f->gr, &f->cmem, in, 4, out, rcs);
	assert_int_equal(out[0].goid, 7);
	assert_labels(out[0].labels, "handler=beta");
	assert_int_equal(out[1].goid, 11);
	assert_int_not_equal(rcs[3], 0); /* g 9 is gone */
	fake_free(f);
}

/* Adds to snapshot r the copy the BPF program makes of a label set: n pieces of the fake
 * memory as it is now (src/go/bpf/gobpf.bpf.c, include/gotop/gobpf-abi.h). */
static void copy_label_set(struct fake *f, struct gobpf_rec *r, const uint64_t *addr,
			   const uint32_t *len, uint32_t n)
{
	uint32_t i, off = 0;

	for (i = 0; i < n; i++) {
		assert_true(off + len[i] <= GOBPF_LBL_BYTES);
		r->piece[i] = (struct gobpf_piece){ addr[i], len[i], off };
		memcpy(r->lbl + off, where(f, addr[i], len[i]), len[i]);
		off += len[i];
	}
	r->npieces = n;
	r->flags |= GOBPF_REC_LBL;
}

/* Adds to snapshot r, as the BPF program does, the strings of label set `set` that are
 * not in the read-only image, up to GOBPF_LBL_STRS of 1 to GOBPF_LBL_STR_MAX bytes. */
static void copy_heap_strings(struct fake *f, struct gobpf_rec *r, bool map, uint64_t set)
{
	uint64_t hdr[2 * GOBPF_LBL_PAIRS];
	uint32_t n = 0, i, j = 0;

	if (map) {
		uint64_t b = r64(f, r64(f, set) + f->o->hmap_buckets);

		for (i = 0; i < 8; i++) {
			if (*where(f, b + i, 1) < 5)
				continue;
			hdr[n++] = b + f->o->bucket_keys + 16 * i;
			hdr[n++] = b + f->o->bucket_values + 16 * i;
		}
	} else {
		for (i = 0; i < r64(f, set + 8); i++) {
			hdr[n++] = r64(f, set) + 32 * i;
			hdr[n++] = r64(f, set) + 32 * i + 16;
		}
	}
	for (i = 0; i < n && j < GOBPF_LBL_STRS; i++) {
		uint64_t p = r64(f, hdr[i]), len = r64(f, hdr[i] + 8);
		uint32_t off = GOBPF_LBL_STR_OFF + j * GOBPF_LBL_STR_MAX;

		if (!len || len > GOBPF_LBL_STR_MAX || (p >= RO_BASE && p < RO_BASE + RO_SIZE))
			continue;
		r->piece[r->npieces++] = (struct gobpf_piece){ p, (uint32_t)len, off };
		memcpy(r->lbl + off, where(f, p, len), len);
		j++;
	}
}

/* Moves the strings of bucket b's cell to the read-only image (string constants). */
static void bucket_cell_ro(struct fake *f, uint64_t b, int cell)
{
	uint64_t a[2] = { b + f->o->bucket_keys + 16 * cell, b + f->o->bucket_values + 16 * cell };
	int i;

	for (i = 0; i < 2; i++) {
		struct str s = { (const char *)where(f, r64(f, a[i]), r64(f, a[i] + 8)),
				 (size_t)r64(f, a[i] + 8) };

		w64(f, a[i], rostr(f, s));
	}
}

/* The address of the bytes of the tenant value in set (made by copied_set). */
static uint64_t tenant_bytes(struct fake *f, bool map, uint64_t set)
{
	return map ? r64(f, r64(f, r64(f, set) + f->o->hmap_buckets) + f->o->bucket_values + 16 * 6)
		   : r64(f, r64(f, set) + 32 + 16);
}

/* A label set of two pairs at a new address, with the strings of set `like` (0: new
 * strings, constants when ro); its copy's pieces into addr and len, their count returned. */
static uint32_t copied_set(struct fake *f, bool map, bool ro, uint64_t like, uint64_t *set,
			   uint64_t *addr, uint32_t *len)
{
	const struct str kv[4] = { S("handler"), S("alpha"), S("tenant"), S("acme") };
	static uint32_t hash0 = 1000;

	if (map) {
		uint64_t b = bucket_new(f, 1), h = halloc(f, 48);

		if (like) {
			memcpy(where(f, b, f->o->bucket_size),
			       where(f, r64(f, r64(f, like) + f->o->hmap_buckets), f->o->bucket_size),
			       f->o->bucket_size);
		} else {
			bucket_put(f, b, 2, 9, kv[0], kv[1]);
			bucket_put(f, b, 6, 9, kv[2], kv[3]);
			if (ro) {
				bucket_cell_ro(f, b, 2);
				bucket_cell_ro(f, b, 6);
			}
		}
		*set = map_cell(f, hmap_at(f, h, 2, 0, 0, hash0++, b, 0));
		addr[0] = *set, len[0] = 8;
		addr[1] = h, len[1] = gort_hmap_read_size(f->o);
		addr[2] = b, len[2] = f->o->bucket_size;
		return 3;
	}
	if (like) {
		uint64_t arr = halloc(f, 64);

		memcpy(where(f, arr, 64), where(f, r64(f, like), 64), 64);
		*set = halloc(f, 24);
		w64(f, *set, arr);
		w64(f, *set + 8, 2);
		w64(f, *set + 16, 2);
	} else {
		*set = slice_labels(f, kv, 2, ro);
	}
	addr[0] = *set, len[0] = 24;
	addr[1] = r64(f, *set), len[1] = 64;
	return 2;
}

/* The label-copy tests' start: the heap and the read-only range known, a thread whose g
 * holds a set made by copied_set (ro: its strings constants). Returns its piece count. */
static uint32_t copied_thread(struct fake *f, struct fthread *t, bool map, bool ro, uint64_t *set,
			      uint64_t *addr, uint32_t *len)
{
	uint32_t n;

	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	gort_add_static_range(f->gr, RO_BASE, RO_BASE + RO_SIZE);
	make_thread(f, t, 42, 7);
	n = copied_set(f, map, ro, 0, set, addr, len);
	set_labels(f, t->g, *set);
	return n;
}

/* Samples whose label sets the BPF program copied are answered from the copies: with
 * string constants, a batch reads nothing at all once the constants are known (and
 * gort_read_batch says so, so that the sampler's next drain may wait), even when the set
 * is gone by then. Heap strings the program did not copy are read at the batch, and the
 * batch says that; those it copied are not, and sets are known by their content. */
static void label_copy(const char *version, bool map)
{
	struct fake *f = fake_new(version);
	struct fthread t;
	struct gobpf_rec rec;
	struct gort_sample in;
	struct gort_result out;
	struct gort_stats st;
	uint64_t addr[3], set, set2, heap, acme, decodes, hits;
	uint32_t len[3], n;
	int rc, i;

	n = copied_thread(f, &t, map, true, &set, addr, len);
	snap_of(f, &t, t.g, t.sp, true, &rec);
	copy_label_set(f, &rec, addr, len, n);
	in = (struct gort_sample){ t.tid, t.g, t.sp, &rec };
	/* The constants are read once. */
	assert_true(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc) > 0);
	assert_int_equal(rc, 0);
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	/* By the next drain the goroutine has no labels and the set's memory is zero: the
	 * copy still answers, and nothing is read. */
	set_labels(f, t.g, 0);
	memset(where(f, addr[1], len[1]), 0, len[1]);
	memset(where(f, set, len[0]), 0, len[0]);
	f->reads = 0;
	assert_int_equal(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc), 0);
	assert_int_equal(f->reads, 0);
	assert_int_equal(rc, 0);
	assert_int_equal(out.goid, 7);
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	/* A new set with the same constants (the next pprof.Do) is known by its string
	 * headers: no read, no decode. */
	memcpy(where(f, addr[1], len[1]), rec.lbl + rec.piece[1].off, len[1]);
	memcpy(where(f, set, len[0]), rec.lbl, len[0]);
	n = copied_set(f, map, true, set, &set2, addr, len);
	set_labels(f, t.g, set2);
	snap_of(f, &t, t.g, t.sp, true, &rec);
	copy_label_set(f, &rec, addr, len, n);
	gort_get_stats(f->gr, &st);
	decodes = st.label_decodes;
	hits = st.label_hits_content;
	assert_int_equal(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc), 0);
	assert_int_equal(f->reads, 0);
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_decodes, decodes);
	assert_int_equal(st.label_hits_content, ++hits);
	/* Heap strings are read at the batch: at the set's decode, and for a slice at every
	 * batch (heap_strings_same); a map's hash0 keeps its strings alive. */
	n = copied_set(f, map, false, 0, &heap, addr, len);
	set_labels(f, t.g, heap);
	snap_of(f, &t, t.g, t.sp, true, &rec);
	copy_label_set(f, &rec, addr, len, n);
	assert_true(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc) > 0);
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	f->reads = 0;
	if (map) {
		assert_int_equal(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc), 0);
		assert_int_equal(f->reads, 0);
	} else {
		assert_true(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc) > 0);
		assert_true(f->reads > 0);
	}
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	/* Without the copy the set is read at the batch. */
	rec.flags &= ~(uint32_t)GOBPF_REC_LBL;
	f->reads = 0;
	assert_true(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc) > 0);
	assert_true(f->reads > 0);
	assert_labels(out.labels, "handler=alpha,tenant=acme");
	/* Heap strings are never known by their headers: a new set with the same headers,
	 * whose bytes are another string by now (memory freed and reused), is read again. */
	acme = tenant_bytes(f, map, heap);
	memcpy(where(f, acme, 4), "emca", 4);
	n = copied_set(f, map, false, heap, &set2, addr, len);
	set_labels(f, t.g, set2);
	snap_of(f, &t, t.g, t.sp, true, &rec);
	copy_label_set(f, &rec, addr, len, n);
	assert_true(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc) > 0);
	assert_labels(out.labels, "handler=alpha,tenant=emca");
	gort_get_stats(f->gr, &st);
	assert_int_equal(st.label_hits_content, hits);
	/* Strings made at run time that the program copied too: nothing is read, and the
	 * next set with the same bytes in new strings is known by its content. */
	for (i = 0; i < 3; i++) {
		n = copied_set(f, map, false, 0, &set2, addr, len);
		if (i == 2)
			memcpy(where(f, tenant_bytes(f, map, set2), 4), "acne", 4);
		set_labels(f, t.g, set2);
		snap_of(f, &t, t.g, t.sp, true, &rec);
		copy_label_set(f, &rec, addr, len, n);
		copy_heap_strings(f, &rec, map, set2);
		assert_int_equal(rec.npieces, n + 4);
		f->reads = 0;
		gort_get_stats(f->gr, &st);
		decodes = st.label_decodes;
		assert_int_equal(gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc), 0);
		assert_int_equal(f->reads, 0);
		assert_labels(out.labels, i == 2 ? "handler=alpha,tenant=acne" : "handler=alpha,tenant=acme");
		gort_get_stats(f->gr, &st);
		/* The first and the one with other bytes are decoded (from the copy). */
		assert_int_equal(st.label_decodes, decodes + (i != 1));
		assert_int_equal(st.label_hits_content, hits + (i == 1));
		hits = st.label_hits_content;
	}
	fake_free(f);
}

static void test_batch_label_copy(void **state)
{
	(void)state;
	label_copy("go1.23.5", true);
	label_copy("go1.24.2", false);
}

/* The copies of one set address in four batches: the same bytes twice, then another set
 * at the same address (the first freed; its heap string's memory reused, and for a map a
 * new hash0, as makemap draws one), then the first bytes again. The second copy is known
 * by its key, and its bytes are kept: a copy equal to them gives the same set without
 * its key (src/go/goruntime.c labels_of); any other byte (batch 2) gives the labels the
 * bytes say, never the remembered set. */
static void label_copy_same_address(const char *version, bool map)
{
	static const char *const tenant[4] = { "acme", "acme", "acne", "acme" };
	struct fake *f = fake_new(version);
	struct fthread t;
	struct gobpf_rec rec;
	struct gort_sample in;
	struct gort_result out;
	struct gort_stats st;
	uint64_t addr[3], set, str, decodes[4], hits[4];
	uint32_t len[3], n;
	int rc, k;

	n = copied_thread(f, &t, map, false, &set, addr, len);
	str = tenant_bytes(f, map, set);
	for (k = 0; k < 4; k++) {
		char want[64];

		memcpy(where(f, str, 4), tenant[k], 4);
		if (map)
			w32(f, addr[1] + f->o->hmap_hash0, k == 2 ? 77 : 76);
		snap_of(f, &t, t.g, t.sp, true, &rec);
		copy_label_set(f, &rec, addr, len, n);
		copy_heap_strings(f, &rec, map, set);
		in = (struct gort_sample){ t.tid, t.g, t.sp, &rec };
		gort_read_batch(f->gr, &f->cmem, &in, 1, &out, &rc);
		assert_int_equal(rc, 0);
		snprintf(want, sizeof(want), "handler=alpha,tenant=%s", tenant[k]);
		assert_labels(out.labels, want);
		gort_get_stats(f->gr, &st);
		decodes[k] = st.label_decodes;
		hits[k] = st.label_hits_content;
	}
	/* Decoded in batches 0 and 2 only; known by content in 1 and 3 (the key of batch 0's
	 * set). */
	assert_int_equal(decodes[1], decodes[0]);
	assert_true(decodes[2] > decodes[1]);
	assert_int_equal(decodes[3], decodes[2]);
	assert_int_equal(hits[1], hits[0] + 1);
	assert_int_equal(hits[2], hits[1]);
	assert_int_equal(hits[3], hits[2] + 1);
	fake_free(f);
}

static void test_batch_label_copy_same_address(void **state)
{
	(void)state;
	label_copy_same_address("go1.23.5", true);
	label_copy_same_address("go1.24.2", false);
}

static uint64_t xorshift(uint64_t *s);

/* New label sets decoded by a batch: every sample's label set is read one level deeper
 * per vectored read, and the answers are those of single reads by another reader. */
static void batch_decode(const char *version, bool map, uint64_t want_readvs, bool gc,
			 uint64_t want_pieces)
{
	struct fake *f = fake_new(version);
	struct gort *ref = gort_new(version, NULL, GORT_ARCH_AMD64);
	struct fthread t[4];
	struct gort_sample in[5];
	struct gort_result one, many[5];
	int rcs[5], i;
	char v[4][8];

	assert_non_null(ref);
	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	gort_set_runtime_vars(ref, 0, MHEAP_BASE);
	for (i = 0; i < 4; i++) {
		struct str kv[4] = { S("handler"), { v[i], 0 }, S("tenant"), S("acme") };

		kv[1].n = (size_t)snprintf(v[i], sizeof(v[i]), "h%d", i);
		make_thread(f, &t[i], 10 + (uint32_t)i, 100 + (uint64_t)i);
		if (map) {
			uint64_t b = bucket_new(f, 1);

			bucket_put(f, b, 3, 9, kv[2], kv[3]);
			bucket_put(f, b, 5, 9, kv[0], kv[1]);
			set_labels(f, t[i].g, map_cell(f, hmap_at(f, halloc(f, 48), 2, 0, 0,
								   1000 + (uint32_t)i, b, 0)));
		} else {
			set_labels(f, t[i].g, slice_labels(f, kv, 2, false));
		}
		in[i] = (struct gort_sample){ t[i].tid, t[i].g, t[i].sp, NULL };
	}
	in[4] = in[2]; /* the same sample twice: one request */
	/* The threads' m's are known from earlier samples (a thread's first read also reads
	 * its m on the spot). */
	for (i = 0; i < 4; i++) {
		uint64_t l = r64(f, t[i].g + f->o->g_labels);

		set_labels(f, t[i].g, 0);
		assert_int_equal(gort_read(f->gr, f->mem, t[i].tid, t[i].g, t[i].sp, &one), 0);
		set_labels(f, t[i].g, l);
	}
	f->singles = 0;
	f->readvs = 0;
	f->reads = 0;
	f->bump_sweepgen = gc;
	gort_read_batch(f->gr, &f->cmem, in, 5, many, rcs);
	for (i = 0; i < 5; i++) {
		char want[64];

		assert_int_equal(rcs[i], 0);
		assert_int_equal(gort_read(ref, f->mem, in[i].tid, in[i].greg, in[i].sp, &one), 0);
		assert_int_equal(many[i].goid, one.goid);
		assert_int_equal(many[i].flags, one.flags);
		snprintf(want, sizeof(want), "handler=h%d,tenant=acme", i == 4 ? 2 : i);
		assert_labels(many[i].labels, want);
		assert_labels(one.labels, want);
	}
	/* No single reads: all went through the vectored ones. */
	assert_int_equal(f->readvs, want_readvs);
	assert_int_equal(f->singles, 0);
	assert_int_equal(f->reads, want_pieces);
	{
		struct gort_stats st;

		gort_get_stats(f->gr, &st);
		assert_int_equal(st.batch_readvs, want_readvs);
		assert_int_equal(st.label_decodes, 4);
		assert_int_equal(st.label_lookups, 5);
	}
	/* Warm: epoch hits, one vectored read. */
	f->readvs = 0;
	gort_read_batch(f->gr, &f->cmem, in, 5, many, rcs);
	assert_int_equal(f->readvs, 1);
	assert_labels(many[0].labels, "handler=h0,tenant=acme");
	gort_free(ref);
	fake_free(f);
}

static void test_batch_decode(void **state)
{
	/* Sweepgen, 4 g's, sweepgen; 4 headers; 4 pair arrays; 16 strings (each set has its
	 * own heap copies). g.labels is not read again: it was read between two reads of
	 * the same sweep generation. */
	batch_decode("go1.26.10", false, 4, false, 6 + 4 + 4 + 16);
	/* The same, cell, hmap and bucket in turn for maps. */
	batch_decode("go1.22.12", true, 5, false, 6 + 4 + 4 + 4 + 16);
	/* A GC cycle ends between the two sweepgen reads: g.labels is read again, after
	 * them, with the first read of each set. */
	batch_decode("go1.26.10", false, 4, true, 6 + 8 + 4 + 16);
}

/* A batch whose reads all fail, or whose memory is garbage, answers as single reads do. */
static void test_batch_garbage(void **state)
{
	const char *versions[] = { "go1.19.8", "go1.24.4" };
	uint64_t seed = 0x2545f4914f6cdd1dULL;
	size_t vi;

	for (vi = 0; vi < 2; vi++) {
		struct fake *f = fake_new(versions[vi]);
		struct gort *ref = gort_new(versions[vi], NULL, GORT_ARCH_AMD64);
		struct fthread t[8];
		struct gort_sample in[8];
		struct gort_result one, many[8];
		int rcs[8], i, n;
		size_t k;

		for (k = 1u << 20; k + 8 <= HEAP_SIZE; k += 8) {
			uint64_t x = xorshift(&seed);

			if (x & 1)
				x = HEAP_BASE + (x >> 8) % HEAP_SIZE;
			memcpy(f->heap + k, &x, 8);
		}
		gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
		gort_set_runtime_vars(ref, 0, MHEAP_BASE);
		for (i = 0; i < 8; i++) {
			f->top = 4096 + (uint64_t)i * 8192; /* below the garbage */
			make_thread(f, &t[i], 1 + (uint32_t)i, 2 + (uint64_t)i);
			in[i] = (struct gort_sample){ t[i].tid, t[i].g, t[i].sp, NULL };
		}
		for (n = 0; n < 300; n++) {
			for (i = 0; i < 8; i++) {
				uint64_t l = HEAP_BASE + (1u << 20) +
					     (xorshift(&seed) % (HEAP_SIZE - (1u << 20)));

				set_labels(f, t[i].g, l & ~7ULL);
				if (xorshift(&seed) % 5 == 0)
					in[i].greg = t[i].g0;
				else
					in[i].greg = t[i].g;
			}
			gort_read_batch(f->gr, &f->cmem, in, 8, many, rcs);
			for (i = 0; i < 8; i++) {
				int rc = gort_read(ref, f->mem, in[i].tid, in[i].greg, in[i].sp, &one);

				assert_int_equal(rcs[i], rc);
				assert_int_equal(many[i].goid, one.goid);
				assert_int_equal(many[i].flags, one.flags);
				/* Interned in two readers: equal content, not equal pointers. */
				assert_int_equal(!many[i].labels, !one.labels);
				if (one.labels) {
					uint32_t p;

					assert_int_equal(many[i].labels->n, one.labels->n);
					for (p = 0; p < one.labels->n; p++) {
						assert_int_equal(many[i].labels->pairs[p].klen,
								 one.labels->pairs[p].klen);
						assert_memory_equal(many[i].labels->pairs[p].key,
								    one.labels->pairs[p].key,
								    one.labels->pairs[p].klen);
					}
				}
			}
		}
		gort_free(ref);
		fake_free(f);
	}
}

/* mem_readv on a live process (this one): pieces in order, each with its own result. */
static void test_mem_readv_pid(void **state)
{
	static const char text[] = "0123456789abcdef";
	struct gp_mem *m = mem_pid_new(getpid());
	char a[4], b[8], c[16], d[4];
	struct mem_iov iov[5] = {
		{ (uint64_t)(uintptr_t)text, a, 4, 1 },
		{ 4096, b, 8, 1 },                    /* unmapped */
		{ (uint64_t)(uintptr_t)text, c, 16, 1 },
		{ 0xffff800000000000ULL, d, 4, 1 }, /* not a user address */
		{ (uint64_t)(uintptr_t)(text + 12), d, 4, 1 },
	};

	mem_readv(m, iov, 5);
	assert_int_equal(iov[0].rc, 0);
	assert_int_equal(iov[1].rc, -EFAULT);
	assert_int_equal(iov[2].rc, 0);
	assert_int_equal(iov[3].rc, -EFAULT);
	assert_int_equal(iov[4].rc, 0);
	assert_memory_equal(a, "0123", 4);
	assert_memory_equal(c, text, 16);
	assert_memory_equal(d, "cdef", 4);
	mem_pid_free(m);
}

/* Static strings (the binary's read-only image) are not re-read on validation. */
static void test_static_strings(void **state)
{
	struct fake *f = fake_new("go1.24.4");
	struct gort_result r;
	struct fthread t;
	struct str kv[] = { S("handler"), S("alpha"), S("tenant"), S("acme") };
	uint64_t reads_heap, reads_ro;

	make_thread(f, &t, 1, 2);
	set_labels(f, t.g, slice_labels(f, kv, 2, false));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	f->reads = 0;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	reads_heap = f->reads;
	gort_add_static_range(f->gr, RO_BASE, RO_BASE + RO_SIZE);
	set_labels(f, t.g, slice_labels(f, kv, 2, true));
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	f->reads = 0;
	assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
	reads_ro = f->reads;
	assert_labels(r.labels, "handler=alpha,tenant=acme");
	/* g, header, array; plus one chunk for the four neighbouring heap strings. */
	assert_int_equal(reads_ro, 3);
	assert_int_equal(reads_heap, 4);
	fake_free(f);
}

/* ---------------------------------------------------------------- garbage everywhere */

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void test_random_memory(void **state)
{
	const char *versions[] = { "go1.19.8", "go1.24.4" };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;
	size_t vi;

	for (vi = 0; vi < 2; vi++) {
		struct fake *f = fake_new(versions[vi]);
		struct fthread t;
		struct gort_result r;
		size_t i;
		int n;

		make_thread(f, &t, 1, 2);
		/* Random bytes with many plausible pointers into the heap. */
		for (i = 1u << 20; i + 8 <= HEAP_SIZE; i += 8) {
			uint64_t v = xorshift(&seed);

			if (v & 1)
				v = HEAP_BASE + (v >> 8) % HEAP_SIZE;
			if ((v & 6) == 2)
				v = (v >> 40) & 0xff;
			memcpy(f->heap + i, &v, 8);
		}
		gort_set_runtime_vars(f->gr, HEAP_BASE + (1u << 20), MHEAP_BASE);
		for (n = 0; n < 20000; n++) {
			uint64_t g = HEAP_BASE + (1u << 20) + (xorshift(&seed) % (HEAP_SIZE - (1u << 20)));
			int rc;

			rc = gort_read(f->gr, f->mem, 1 + (uint32_t)(xorshift(&seed) % 3), g & ~7ULL,
				       g, &r);
			assert_true(rc == 0 || rc == -ENOENT || rc == -EFAULT);
			if (rc == 0)
				assert_true(r.goid == 2); /* only the real thread 1 can be found */
		}
		/* The real goroutine with garbage labels. */
		for (n = 0; n < 2000; n++) {
			uint64_t l = HEAP_BASE + (1u << 20) + (xorshift(&seed) % (HEAP_SIZE - (1u << 20)));

			set_labels(f, t.g, l & ~7ULL);
			assert_int_equal(rd(f, &t, t.g, t.sp, &r), 0);
			assert_int_equal(r.goid, 2);
		}
		fake_free(f);
	}
}

/* ---------------------------------------------------------------- cost */

static double bench(struct fake *f, const struct fthread *t, uint64_t greg, uint64_t sp, int n)
{
	struct timespec a, b;
	struct gort_result r;
	int i;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	for (i = 0; i < n; i++)
		if (gort_read(f->gr, f->mem, t->tid, greg, sp, &r) != 0)
			fail();
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / n;
}

/* Prints the CPU cost of a warm gort_read in fake memory (no system calls): the
 * decoding and cache work only. No assertion on time. */
static void test_cost(void **state)
{
	struct str kv[] = { S("handler"), S("alpha"), S("tenant"), S("acme"), S("route"), S("/api/v1/users") };
	const int n = 200000;
	struct fake *f;
	struct fthread t;
	uint64_t b, h;
	double epoch, checked, ro, map, g0;

	f = fake_new("go1.24.4");
	make_thread(f, &t, 1, 2);
	set_labels(f, t.g, slice_labels(f, kv, 3, false));
	checked = bench(f, &t, t.g, t.sp, n);
	gort_set_runtime_vars(f->gr, 0, MHEAP_BASE);
	epoch = bench(f, &t, t.g, t.sp, n);
	g0 = bench(f, &t, t.g0, t.g0sp, n);
	gort_set_runtime_vars(f->gr, 0, 0);
	gort_add_static_range(f->gr, RO_BASE, RO_BASE + RO_SIZE);
	set_labels(f, t.g, slice_labels(f, kv, 3, true));
	ro = bench(f, &t, t.g, t.sp, n);
	fake_free(f);

	f = fake_new("go1.23.5");
	make_thread(f, &t, 1, 2);
	b = bucket_new(f, 1);
	bucket_put(f, b, 0, 9, kv[0], kv[1]);
	bucket_put(f, b, 1, 9, kv[2], kv[3]);
	bucket_put(f, b, 2, 9, kv[4], kv[5]);
	h = hmap_at(f, halloc(f, 48), 3, 0, 0, 5, b, 0);
	set_labels(f, t.g, map_cell(f, h));
	map = bench(f, &t, t.g, t.sp, n);
	fake_free(f);
	printf("# warm gort_read in fake memory, ns: slice+GC epoch %.0f, slice+fingerprint "
	       "(heap strings) %.0f, slice+fingerprint (static strings) %.0f, map+fingerprint %.0f, "
	       "g0->curg+epoch %.0f\n", epoch, checked, ro, map, g0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_versions),
		cmocka_unit_test(test_table_history),
		cmocka_unit_test(test_user_g),
		cmocka_unit_test(test_procid_mismatch),
		cmocka_unit_test(test_system_stack),
		cmocka_unit_test(test_bad_register),
		cmocka_unit_test(test_register_needs_sp),
		cmocka_unit_test(test_allm),
		cmocka_unit_test(test_allm_many),
		cmocka_unit_test(test_slice_labels),
		cmocka_unit_test(test_raw_bytes_and_truncation),
		cmocka_unit_test(test_slice_garbage),
		cmocka_unit_test(test_map_buckets_overflow),
		cmocka_unit_test(test_map_growth),
		cmocka_unit_test(test_map_garbage),
		cmocka_unit_test(test_cache_and_interning),
		cmocka_unit_test(test_cache_growth),
		cmocka_unit_test(test_cache_invalidation_slice),
		cmocka_unit_test(test_cache_invalidation_map),
		cmocka_unit_test(test_cache_epoch),
		cmocka_unit_test(test_static_strings),
		cmocka_unit_test(test_batch),
		cmocka_unit_test(test_batch_snapshot),
		cmocka_unit_test(test_batch_label_copy),
		cmocka_unit_test(test_batch_label_copy_same_address),
		cmocka_unit_test(test_batch_decode),
		cmocka_unit_test(test_batch_garbage),
		cmocka_unit_test(test_mem_readv_pid),
		cmocka_unit_test(test_random_memory),
		cmocka_unit_test(test_cost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
