/* test-gosnap.c: unit tests for the snapshot of all goroutines (gosnap) on a fake Go process: a stack of two moments is dropped, a stack of one kept. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"
#include "gotop/gosnap.h"
#include "gotop/mem.h"
#include "gotop/symtab.h"

/*
 * The fake process: the function table of a real Go 1.19 binary (the fuzz seed
 * tests/fuzz-corpus/gopclntab/inl-1.19-plain: a flags byte, the text start, the table), its
 * text as zeros except for the calls written before the return addresses the stacks hold,
 * and a heap at HEAP with the runtime's list of g's, the g's (go1.23's layout) and their
 * stacks. Four frames per stack: A parked after a call to runtime.mcall, B after a call to
 * A, C after a call to B, and the return address into "goexit" (the table's last
 * function) that C was started with.
 */
#define HEAP 0xc000000000ULL
#define HEAP_SIZE 0x10000
#define ALLGLEN 0x0
#define ALLGPTR 0x8
#define ARR 0x40
#define GS 0x400
#define GSTRIDE 0x200
#define STK 0x2000
#define STKSZ 0x800
#define GOVER "go1.23.5"

struct fake {
	uint8_t *pcln_file;
	size_t pcln_len;
	struct gopcln *pcln;
	uint64_t text_lo, text_hi;
	uint8_t *text, heap[HEAP_SIZE];
	const struct gort_offsets *o;
	struct gp_mem mem;
	/* A byte that changes once it has been read: the goroutine ran between the snapshot's
	 * two reads of its g. */
	uint64_t flip_addr;
	int flip_reads;
	/* the functions */
	struct gopcln_func mcall, a, b, c, x, gx;
	uint64_t ra0, ra1, ra2, rax; /* return addresses in A, B, C, and B after a call to X */
	int32_t d0;                  /* A's frame size at ra0 */
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;

	if (addr >= HEAP && addr + len <= HEAP + HEAP_SIZE) {
		memcpy(buf, f->heap + (addr - HEAP), len);
		if (f->flip_addr >= addr && f->flip_addr < addr + len && ++f->flip_reads == 1)
			f->heap[f->flip_addr - HEAP] ^= 1;
		return 0;
	}
	if (addr >= f->text_lo && addr + len <= f->text_hi) {
		memcpy(buf, f->text + (addr - f->text_lo), len);
		return 0;
	}
	return -EFAULT;
}

static void w64(struct fake *f, uint64_t addr, uint64_t v)
{
	assert_true(addr >= HEAP && addr + 8 <= HEAP + HEAP_SIZE);
	memcpy(f->heap + (addr - HEAP), &v, 8);
}

/* A direct call (E8 rel32) to target that returns to ra. */
static void call_at(struct fake *f, uint64_t ra, uint64_t target)
{
	int32_t rel = (int32_t)(target - ra);
	uint8_t *p = f->text + (ra - 5 - f->text_lo);

	p[0] = 0xe8;
	memcpy(p + 1, &rel, 4);
}

static int find(struct fake *f, const char *name, struct gopcln_func *out)
{
	for (size_t i = 0; i < gopcln_nfunc(f->pcln); i++)
		if (gopcln_func_at(f->pcln, i, out) == 0 && out->name && !strcmp(out->name, name))
			return 0;
	return -1;
}

/* A return address in fn at least 8 bytes in, whose frame size is 16 to 128, or 0. */
static uint64_t ra_in(struct fake *f, const struct gopcln_func *fn, int32_t *d)
{
	for (uint64_t pc = fn->entry + 8; pc < fn->end; pc++)
		if (gopcln_pcsp(f->pcln, pc, d) == 0 && *d >= 16 && *d <= 128)
			return pc;
	return 0;
}

static int setup(void **state)
{
	const char *src = getenv("TOP_SRCDIR");
	char path[4096];
	struct fake *f;
	uint64_t text = 0;
	int32_t d;
	FILE *fp;
	int err;

	if (!src)
		src = ".";
	snprintf(path, sizeof(path), "%s/tests/fuzz-corpus/gopclntab/inl-1.19-plain", src);
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	f->pcln_file = malloc(1 << 20);
	assert_non_null(f->pcln_file);
	fp = fopen(path, "rb");
	if (!fp) {
		fprintf(stderr, "# %s: cannot open (TOP_SRCDIR)\n", path);
		return -1;
	}
	f->pcln_len = fread(f->pcln_file, 1, 1 << 20, fp);
	fclose(fp);
	assert_true(f->pcln_len > 9);
	if (f->pcln_file[0] & 1)
		memcpy(&text, f->pcln_file + 1, 8);
	f->pcln = gopcln_open_buf(f->pcln_file + 9, f->pcln_len - 9, text, &err);
	assert_non_null(f->pcln);
	assert_int_equal(find(f, "runtime.mcall", &f->mcall), 0);
	assert_int_equal(gopcln_func_at(f->pcln, gopcln_nfunc(f->pcln) - 1, &f->gx), 0);
	/* A, B, C and X: the first four other functions with a frame of 16 to 128 bytes */
	{
		struct gopcln_func *pick[] = { &f->a, &f->b, &f->c, &f->x };
		size_t k = 0;

		for (size_t i = 0; i + 1 < gopcln_nfunc(f->pcln) && k < 4; i++)
			if (gopcln_func_at(f->pcln, i, pick[k]) == 0 &&
			    pick[k]->entry != f->mcall.entry && ra_in(f, pick[k], &d))
				k++;
		assert_int_equal(k, 4);
	}
	f->text_lo = UINT64_MAX;
	for (size_t i = 0; i < gopcln_nfunc(f->pcln); i++) {
		struct gopcln_func fn;

		if (gopcln_func_at(f->pcln, i, &fn) == 0) {
			f->text_lo = fn.entry < f->text_lo ? fn.entry : f->text_lo;
			f->text_hi = fn.end > f->text_hi ? fn.end : f->text_hi;
		}
	}
	f->text = calloc(1, f->text_hi - f->text_lo);
	assert_non_null(f->text);
	f->ra0 = ra_in(f, &f->a, &f->d0);
	f->ra1 = ra_in(f, &f->b, &d);
	f->ra2 = ra_in(f, &f->c, &d);
	assert_true(f->ra0 && f->ra1 && f->ra2);
	f->rax = f->ra1 + 5 < f->b.end ? f->ra1 + 5 : f->ra1 - 5;
	call_at(f, f->ra0, f->mcall.entry);
	call_at(f, f->ra1, f->a.entry);
	call_at(f, f->ra2, f->b.entry);
	call_at(f, f->rax, f->x.entry);
	f->o = gort_table_offsets(GOVER);
	assert_non_null(f->o);
	assert_true(f->o->g_trackingseq && f->o->g_trackingseq + 8 <= GSTRIDE);
	f->mem = (struct gp_mem){ fake_read, f, NULL };
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fake *f = *state;

	if (!f)
		return 0;
	gopcln_free(f->pcln);
	free(f->pcln_file);
	free(f->text);
	free(f);
	return 0;
}

/* Goroutine i, parked at (sp, pc, bp), started at startpc. */
static void make_g(struct fake *f, int i, uint32_t status, uint64_t sp, uint64_t pc, uint64_t bp,
		   uint64_t startpc)
{
	const struct gort_offsets *o = f->o;
	uint64_t g = HEAP + GS + (uint64_t)i * GSTRIDE, lo = HEAP + STK + (uint64_t)i * STKSZ;
	uint32_t st = status;

	w64(f, HEAP + ARR + 8 * (uint64_t)i, g);
	w64(f, g + o->g_stack_lo, lo);
	w64(f, g + o->g_stack_hi, lo + STKSZ);
	w64(f, g + o->g_goid, 10 + (uint64_t)i);
	memcpy(f->heap + (g - HEAP) + o->g_atomicstatus, &st, 4);
	w64(f, g + o->g_sched_sp, sp);
	w64(f, g + o->g_sched_pc, pc);
	w64(f, g + o->g_sched_bp, bp);
	w64(f, g + o->g_startpc, startpc);
	w64(f, g + o->g_gopc, f->c.entry + 1);
}

/* The stack of goroutine i: frames ra0 (A), r1, ra2 (C), goexit; returns the bp to save. */
static uint64_t lay_stack(struct fake *f, int i, uint64_t r1, uint64_t *sp)
{
	uint64_t lo = HEAP + STK + (uint64_t)i * STKSZ, bp0, bp1, bp2;

	*sp = lo + 0x100;
	bp0 = *sp + (uint64_t)f->d0 - 8; /* ra0's return address at SP + pcsp */
	bp1 = bp0 + 16 + 32;
	bp2 = bp1 + 16 + 48;
	w64(f, bp0, bp1);
	w64(f, bp0 + 8, r1);
	w64(f, bp1, bp2);
	w64(f, bp1 + 8, f->ra2);
	w64(f, bp2, 0);
	w64(f, bp2 + 8, f->gx.entry + 1);
	return bp0;
}

static struct gosnap *snap_of(struct fake *f, int ng)
{
	struct gosnap_target t = { 0 };

	w64(f, HEAP + ALLGLEN, (uint64_t)ng);
	w64(f, HEAP + ALLGPTR, HEAP + ARR);
	t.mem = &f->mem;
	t.gort = gort_new(GOVER, NULL, GORT_ARCH_AMD64);
	t.pcln = f->pcln;
	t.allglen = HEAP + ALLGLEN;
	t.allgptr = HEAP + ALLGPTR;
	t.goexit_lo = f->gx.entry;
	t.goexit_hi = f->gx.end;
	return gosnap_new_from(&t);
}

static const struct gosnap_g *by_id(const struct gosnap_result *r, uint64_t goid)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->g[i].goid == goid)
			return &r->g[i];
	return NULL;
}

/* A stack whose frames all follow calls to the frames below is kept; the same stack with
 * one return address from another moment (B's, after its call to another function) is
 * dropped and counted, though its g did not change. */
static void test_two_moments(void **state)
{
	struct fake *f = *state;
	struct gosnap_result r;
	const struct gosnap_g *g;
	struct gosnap *s;
	uint64_t sp, bp;

	bp = lay_stack(f, 0, f->ra1, &sp);
	make_g(f, 0, GOSNAP_WAITING, sp, f->ra0, bp, f->c.entry);
	bp = lay_stack(f, 1, f->rax, &sp);
	make_g(f, 1, GOSNAP_WAITING, sp, f->ra0, bp, f->c.entry);
	s = snap_of(f, 2);
	assert_non_null(s);
	assert_int_equal(gosnap_take(s, 0, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.st.torn, 1);
	assert_int_equal(r.st.unlinked, 1);
	g = by_id(&r, 10);
	assert_non_null(g);
	assert_int_equal(g->nframes, 4);
	assert_true(r.pcs[g->frame0] == f->ra0 && r.pcs[g->frame0 + 1] == f->ra1 &&
		    r.pcs[g->frame0 + 2] == f->ra2 && r.pcs[g->frame0 + 3] == f->gx.entry + 1);
	assert_null(by_id(&r, 11));
	/* The next snapshot takes the kept stack over unread; the other is checked again. */
	assert_int_equal(gosnap_take(s, 0, &r), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.st.reused, 1);
	assert_int_equal(r.st.unlinked, 1);
	gosnap_free(s);
}

/* A reader of one parked goroutine whose g.trackingSeq changes once it has been read: it
 * ran between the two reads of its g and parked again with the same saved registers. */
static struct gosnap *ran_once(struct fake *f)
{
	uint64_t sp, bp;

	bp = lay_stack(f, 0, f->ra1, &sp);
	make_g(f, 0, GOSNAP_WAITING, sp, f->ra0, bp, f->c.entry);
	f->flip_addr = HEAP + GS + f->o->g_trackingseq;
	f->flip_reads = 0;
	return snap_of(f, 1);
}

/* A goroutine that changed only g.trackingSeq between the two reads of its g is dropped. */
static void test_tracking_seq(void **state)
{
	struct fake *f = *state;
	struct gosnap_result r;
	struct gosnap *s = ran_once(f);

	assert_non_null(s);
	assert_int_equal(gosnap_take(s, 0, &r), 0);
	assert_int_equal(r.n, 0);
	assert_int_equal(r.st.torn, 1);
	assert_int_equal(r.st.unlinked, 0);
	f->flip_addr = 0;
	gosnap_free(s);
}

/* gosnap_take_whole reads again while a goroutine was dropped as torn: the goroutine that
 * ran between the two reads of its g (its g.trackingSeq changed) is in the second take. A
 * stack of two moments that stays so is dropped in every take, and the tries end. */
static void test_take_whole(void **state)
{
	struct fake *f = *state;
	struct gosnap_result r;
	struct gosnap *s = ran_once(f);
	uint64_t sp, bp;

	assert_non_null(s);
	assert_int_equal(gosnap_take_whole(s, 0, &r, 3), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.st.torn, 0);
	assert_int_equal(by_id(&r, 10)->nframes, 4);
	f->flip_addr = 0;
	gosnap_free(s);

	bp = lay_stack(f, 1, f->rax, &sp);
	make_g(f, 1, GOSNAP_WAITING, sp, f->ra0, bp, f->c.entry);
	s = snap_of(f, 2);
	assert_non_null(s);
	assert_int_equal(gosnap_take_whole(s, 0, &r, 3), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.st.unlinked, 1);
	assert_null(by_id(&r, 11));
	gosnap_free(s);
}

/* A goroutine not run yet is suspended at its start function's entry with goexit's
 * return address above: kept, its first pc made entry + 1 (a pc to look up less one). A
 * stack ending in goexit below another function than the start function is not one
 * goroutine's. */
static void test_not_run_yet(void **state)
{
	struct fake *f = *state;
	uint64_t lo = HEAP + STK, sp = lo + 0x200;
	struct gosnap_result r;
	const struct gosnap_g *g;
	struct gosnap *s;

	w64(f, sp, f->gx.entry + 1);
	make_g(f, 0, GOSNAP_RUNNABLE, sp, f->c.entry, 0, f->c.entry);
	w64(f, lo + STKSZ + 0x200, f->gx.entry + 1);
	make_g(f, 1, GOSNAP_RUNNABLE, lo + STKSZ + 0x200, f->c.entry, 0, f->b.entry);
	s = snap_of(f, 2);
	assert_non_null(s);
	assert_int_equal(gosnap_take(s, 0, &r), 0);
	g = by_id(&r, 10);
	assert_non_null(g);
	assert_int_equal(g->nframes, 2);
	assert_true(r.pcs[g->frame0] == f->c.entry + 1 && r.pcs[g->frame0 + 1] == f->gx.entry + 1);
	assert_null(by_id(&r, 11));
	assert_int_equal(r.st.unlinked, 1);
	gosnap_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_moments),
		cmocka_unit_test(test_tracking_seq),
		cmocka_unit_test(test_take_whole),
		cmocka_unit_test(test_not_run_yet),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
