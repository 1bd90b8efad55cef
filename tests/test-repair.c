/* test-repair.c: frame-pointer repair on synthetic stacks: amd64 (Go <=1.20 and >=1.21
 * prologues, frameless leaf, epilogue, duff fake frame, clobbered BP) and arm64; the live
 * layouts of this process's own code. */
#include "config.h"

#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gotop/repair.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"

/* A tiny program: functions [lo, hi) with a pcsp per pc range. */
struct fn {
	uint64_t lo, hi;
	/* pcsp by pc: sp_delta for pc < mark, sp_delta2 from mark on (prologue done) */
	uint64_t mark;
	int32_t d1, d2;
	int top;
	int fp_based; /* C with a frame pointer: CFA = RBP+16 */
};

static const struct fn *prog;
static size_t nprog;

static void frame_fn(void *ctx, uint64_t pc, int innermost, struct repair_frame *out)
{
	size_t i;
	uint64_t look = innermost ? pc : pc - 1;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < nprog; i++) {
		if (look >= prog[i].lo && look < prog[i].hi) {
			out->known = 1;
			out->sp_delta = look < prog[i].mark ? prog[i].d1 : prog[i].d2;
			out->top = prog[i].top;
			out->fp_based = prog[i].fp_based;
			return;
		}
	}
}

/* main.main 0x1000 (frame 0x28), main.work 0x2000 (frame 0x38), main.leaf 0x3000
 * (frameless). Return addresses: into main at 0x1010, into work at 0x2020.
 * amd64 layouts: RA at SP+pcsp, saved BP just below it. */
static const struct fn amd64_prog[] = {
	{ 0x1000, 0x1100, 0x1004, 0, 0x28, 0 },  /* main.main: prologue done at 0x1004 */
	{ 0x2000, 0x2100, 0x2004, 0, 0x38, 0 },  /* main.work */
	{ 0x3000, 0x3010, 0x3000, 0, 0, 0 },     /* main.leaf: frameless */
	{ 0x4000, 0x4100, 0x4004, 8, 8, 0 },     /* >=1.21 after PUSHQ BP: pcsp 8 */
	{ 0x9000, 0x9100, 0x9000, 0, 0, 1 },     /* goexit: top frame */
};

struct stack {
	uint64_t w[64];
	uint64_t sp;
};

static void put(struct stack *s, uint64_t addr, uint64_t v)
{
	s->w[(addr - s->sp) / 8] = v;
}

/* Builds the stack of main -> work -> (callee) with SP at sp_callee. Returns work's
 * BP (its frame set up) and fills the kernel-visible memory. */
static uint64_t build_amd64(struct stack *s, uint64_t callee_sp, uint64_t ra_into_work)
{
	/* callee_sp: the callee's SP at entry, RA into work at [callee_sp]. */
	uint64_t work_sp = callee_sp + 8;              /* work's SP after its prologue */
	uint64_t work_bp = work_sp + 0x38 - 8;         /* saved BP slot */
	uint64_t main_sp = work_sp + 0x38 + 8;
	uint64_t main_bp = main_sp + 0x28 - 8;

	s->sp = callee_sp;
	memset(s->w, 0, sizeof(s->w));
	put(s, callee_sp, ra_into_work);
	put(s, work_bp, main_bp);      /* work's saved BP = main's BP */
	put(s, work_bp + 8, 0x1010);   /* RA into main */
	put(s, main_bp, 0);            /* end of the chain */
	put(s, main_bp + 8, 0x9008);   /* RA into goexit */
	return work_bp;
}

static int run(enum repair_arch arch, uint64_t pc, uint64_t sp, uint64_t fp, uint64_t lr,
	       const struct stack *st, const uint64_t *chain, size_t n, uint64_t *out, size_t *nout)
{
	struct repair_input in = { arch, pc, sp, fp, lr, (const uint8_t *)st->w + (sp - st->sp),
				   sizeof(st->w) - (sp - st->sp), chain, n, frame_fn, NULL };

	return repair_core(&in, out, nout, 64);
}

static void test_amd64_leaf(void **state)
{
	struct stack st;
	uint64_t sp = 0x7000, out[64];
	size_t n;
	uint64_t work_bp = build_amd64(&st, sp, 0x2020);
	/* Kernel: pc, then *(BP+8) with BP = work's frame: skips work. */
	uint64_t chain[] = { 0x3004, 0x1010, 0x9008 };
	uint64_t want[] = { 0x3004, 0x2020, 0x1010, 0x9008 };

	prog = amd64_prog;
	nprog = 5;
	assert_int_equal(run(REPAIR_AMD64, 0x3004, sp, work_bp, 0, &st, chain, 3, out, &n),
			 REPAIR_INSERTED);
	assert_int_equal(n, 4);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_amd64_established(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	/* Sample in work itself after its prologue: SP = work's SP, BP = work's frame. */
	uint64_t work_bp = build_amd64(&st, 0x7000, 0x2020);
	uint64_t work_sp = 0x7008;
	uint64_t chain[] = { 0x2040, 0x1010, 0x9008 };

	prog = amd64_prog;
	nprog = 5;
	assert_int_equal(run(REPAIR_AMD64, 0x2040, work_sp, work_bp, 0, &st, chain, 3, out, &n),
			 REPAIR_UNCHANGED);
	assert_int_equal(n, 3);
	assert_memory_equal(out, chain, sizeof(chain));
}

static void test_amd64_prologue(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	/* work at its entry (pcsp 0): RA into main at [SP], BP still main's frame. */
	uint64_t work_bp = build_amd64(&st, 0x7000, 0x2020);
	uint64_t main_bp;
	uint64_t sp = work_bp + 8; /* SP at work's entry points at the RA into main */
	uint64_t chain[] = { 0x2000, 0x9008 };
	uint64_t want[] = { 0x2000, 0x1010, 0x9008 };

	memcpy(&main_bp, (uint8_t *)st.w + (work_bp - st.sp), 8);
	prog = amd64_prog;
	nprog = 5;
	assert_int_equal(run(REPAIR_AMD64, 0x2000, sp, main_bp, 0, &st, chain, 2, out, &n),
			 REPAIR_INSERTED);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_amd64_duff(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	/* In work between LEAQ -16(SP),BP and the call to duffcopy: BP is a fake frame
	 * below SP; the kernel read a stale RA into work from it, then work's frame. */
	uint64_t work_bp = build_amd64(&st, 0x7000, 0x2020);
	uint64_t work_sp = 0x7008;
	uint64_t chain[] = { 0x2050, 0x2060, 0x1010, 0x9008 };
	uint64_t want[] = { 0x2050, 0x1010, 0x9008 };

	(void)work_bp;
	prog = amd64_prog;
	nprog = 5;
	assert_int_equal(run(REPAIR_AMD64, 0x2050, work_sp, work_sp - 16, 0, &st, chain, 4, out, &n),
			 REPAIR_DROPPED);
	assert_int_equal(n, 3);
	assert_memory_equal(out, want, sizeof(want));
}

static void test_amd64_garbage_bp(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	uint64_t sp = 0x7000;
	/* Assembly used BP as a scratch register: the kernel chain is nonsense. */
	uint64_t chain[] = { 0x3004, 0xdeadbeef, 0x12345 };

	build_amd64(&st, sp, 0x2020);
	prog = amd64_prog;
	nprog = 5;
	assert_true(run(REPAIR_AMD64, 0x3004, sp, 0x4141414141414141ULL, 0, &st, chain, 3, out, &n) &
		    REPAIR_NOMATCH);
	/* What the exact unwind proved, nothing of the garbage. */
	assert_true(n >= 2);
	assert_int_equal(out[0], 0x3004);
	assert_int_equal(out[1], 0x2020);
	for (size_t i = 0; i < n; i++)
		assert_true(out[i] != 0xdeadbeef && out[i] != 0x12345);
}

static void test_amd64_unknown(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	uint64_t chain[] = { 0x5555, 0x1010 };

	build_amd64(&st, 0x7000, 0x2020);
	prog = amd64_prog;
	nprog = 5;
	assert_int_equal(run(REPAIR_AMD64, 0x5555, 0x7000, 0x7100, 0, &st, chain, 2, out, &n),
			 REPAIR_UNKNOWN);
	assert_memory_equal(out, chain, sizeof(chain));
}

/* arm64 (go1.24 prologue MOVD.W R30,-F(RSP); MOVD R29,-8(RSP); SUB $8,RSP,R29): LR at
 * [SP], the frame record {x29, x30} at SP-8; established iff x29 == SP-8. */
static const struct fn arm64_prog[] = {
	{ 0x1000, 0x1100, 0x1008, 0, 0x30, 0 }, /* main: frame 0x30 after the MOVD.W */
	{ 0x2000, 0x2100, 0x2008, 0, 0x40, 0 }, /* work: frame 0x40 */
	{ 0x3000, 0x3010, 0x3000, 0, 0, 0 },    /* leaf: frameless, RA in LR */
};

static void test_arm64(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	uint64_t work_sp = 0x7000, main_sp = work_sp + 0x40;
	uint64_t work_fp = work_sp - 8, main_fp = main_sp - 8;

	prog = arm64_prog;
	nprog = 3;
	st.sp = work_sp - 8;
	memset(st.w, 0, sizeof(st.w));
	put(&st, work_fp, main_fp);     /* work's frame record */
	put(&st, work_fp + 8, 0x1010);  /* LR saved at work's [SP]: RA into main */
	put(&st, main_fp, 0);
	put(&st, main_fp + 8, 0x9008);

	/* Frameless leaf: x29 is work's frame record; the kernel skips work. */
	{
		uint64_t chain[] = { 0x3004, 0x1010, 0x9008 };
		uint64_t want[] = { 0x3004, 0x2020, 0x1010, 0x9008 };

		assert_int_equal(run(REPAIR_ARM64, 0x3004, work_sp, work_fp, 0x2020, &st, chain, 3, out, &n),
				 REPAIR_INSERTED);
		assert_int_equal(n, 4);
		assert_memory_equal(out, want, sizeof(want));
	}
	/* In work with its frame set up: unchanged, LR never added (no duplicate). */
	{
		uint64_t chain[] = { 0x2040, 0x1010, 0x9008 };

		assert_int_equal(run(REPAIR_ARM64, 0x2040, work_sp, work_fp, 0x2044, &st, chain, 3, out, &n),
				 REPAIR_UNCHANGED);
		assert_int_equal(n, 3);
		assert_memory_equal(out, chain, sizeof(chain));
	}
}

/* C: a frameless leaf (CFI: CFA = RSP+8) under a caller that keeps RBP (CFA = RBP+16). */
static const struct fn c_prog[] = {
	{ 0x1000, 0x1100, 0x1000, 0, 0, 0, 1 },  /* top: fp-based */
	{ 0x2000, 0x2100, 0x2000, 0, 0, 0, 1 },  /* mid: fp-based */
	{ 0x3000, 0x3100, 0x3000, 0, 0, 0, 0 },  /* leaf: CFA = RSP+8 */
};

static void test_c_frameless_leaf(void **state)
{
	struct stack st;
	uint64_t out[64];
	size_t n;
	uint64_t sp = 0x7000, mid_bp = 0x7040, top_bp = 0x7080;
	/* Kernel: leaf's pc, then *(RBP+8) = mid's RA into top: mid skipped. */
	uint64_t chain[] = { 0x3010, 0x1020, 0x900 };
	uint64_t want[] = { 0x3010, 0x2030, 0x1020, 0x900 };

	st.sp = sp;
	memset(st.w, 0, sizeof(st.w));
	put(&st, sp, 0x2030);          /* leaf's RA into mid */
	put(&st, mid_bp, top_bp);
	put(&st, mid_bp + 8, 0x1020);  /* mid's RA into top */
	put(&st, top_bp, 0);
	put(&st, top_bp + 8, 0x900);
	prog = c_prog;
	nprog = 3;
	assert_int_equal(run(REPAIR_AMD64, 0x3010, sp, mid_bp, 0, &st, chain, 3, out, &n), REPAIR_INSERTED);
	assert_int_equal(n, 4);
	assert_memory_equal(out, want, sizeof(want));
}

/* Crossing a stack switch (repair_cross_core): the goroutine's saved state as the four
 * switches leave it (go1.19 to go1.27 runtime/asm_amd64.s). runtime.systemstack_switch at
 * 0x5000 (the fake pc they save), f suspended in its stack check at 0x6000 (frame not set
 * up), mcall's caller at 0x7000 (frame set up, pcsp 0x20). */
static void sw_frame(void *ctx, uint64_t pc, int innermost, struct repair_frame *out)
{
	(void)ctx;
	(void)innermost;
	memset(out, 0, sizeof(*out));
	if (pc >= 0x5000 && pc < 0x5100) {
		out->known = 1;
		out->fake = 1;
	} else if (pc >= 0x6000 && pc < 0x6100) {
		out->known = 1;
	} else if (pc >= 0x7000 && pc < 0x7100) {
		out->known = 1;
		out->sp_delta = 0x20;
	} else if (pc >= 0x8000 && pc < 0x8100) {
		out->known = 1;
		out->go = 1;
		out->cgocall = 1;
		out->sp_delta = 0x30;
	} else if (pc >= 0x8100 && pc < 0x8200) {
		out->known = 1;
		out->go = 1;
		out->sp_delta = 0x18;
	}
}

static void test_cross_switch(void **state)
{
	uint64_t out[8], ret[3] = { 0x1010, 0x9008, 0 };
	uint64_t stack[4] = { 0x2020, 0, 0, 0 };
	struct repair_switch sw = { 0x5008, 0xc000100000, 0xc000100040, stack, 4, ret, 3 };
	size_t n;

	(void)state;
	/* systemstack, asmcgocall without a frame of their own (go1.19): the fake pc is
	 * dropped, the return address into the caller is at sp, the walk from the caller's
	 * bp follows, and a zero return address ends it. */
	n = repair_cross_core(&sw, sw_frame, NULL, out, 8);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 0x2020);
	assert_int_equal(out[1], 0x1010);
	assert_int_equal(out[2], 0x9008);
	/* With a frame record pushed at sp (go1.23+): bp == sp, the walk starts with the
	 * return address; nothing twice. */
	ret[0] = 0x2020;
	ret[1] = 0x1010;
	stack[0] = 0xc000100040;
	stack[1] = 0x2020;
	sw.bp = sw.sp;
	n = repair_cross_core(&sw, sw_frame, NULL, out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 0x2020);
	assert_int_equal(out[1], 0x1010);
	/* After a cgo callback: bp is the caller's frame again, the record at sp holds it,
	 * the return address is the word after it. */
	ret[0] = 0x1010;
	ret[1] = 0;
	sw.bp = 0xc000100040;
	n = repair_cross_core(&sw, sw_frame, NULL, out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 0x2020);
	assert_int_equal(out[1], 0x1010);
	/* morestack: f keeps its pc; its caller is at sp. */
	sw.pc = 0x6010;
	stack[0] = 0x2020;
	n = repair_cross_core(&sw, sw_frame, NULL, out, 8);
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 0x6010);
	assert_int_equal(out[1], 0x2020);
	assert_int_equal(out[2], 0x1010);
	/* mcall: the caller's frame is set up; the walk from its bp gives its caller. */
	sw.pc = 0x7010;
	n = repair_cross_core(&sw, sw_frame, NULL, out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(out[0], 0x7010);
	assert_int_equal(out[1], 0x1010);
	/* Bounded by max; nothing without a saved pc. */
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 1), 1);
	sw.pc = 0;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 0);
}

/* A cgo callback's state (repair_switch.cb): runtime.cgocall at 0x8000, its Go callers at
 * 0x8100. */
static void test_cross_callback(void **state)
{
	uint64_t out[8], ret[3] = { 0x8110, 0x8120, 0 };
	uint64_t stack[4] = { 0x8010, 0x4000, 0xc000100100, 0 };
	struct repair_switch sw = { 0x5000, 0xc000100000, 0xc000100030, stack, 4, ret, 3, 1 };

	(void)state;
	/* go1.19: no record at asmcgocall's SP; cgocall's return address is there, the walk
	 * from cgocall's record gives the _Cfunc_ wrapper and its caller. */
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 3);
	assert_int_equal(out[0], 0x8010);
	assert_int_equal(out[1], 0x8110);
	assert_int_equal(out[2], 0x8120);
	/* go1.23 on: the record at asmcgocall's SP, the walk starts at cgocall. */
	ret[0] = 0x8010;
	ret[1] = 0x8110;
	ret[2] = 0x8120;
	sw.bp = sw.sp;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 3);
	assert_int_equal(out[0], 0x8010);
	assert_int_equal(out[2], 0x8120);
	/* A record read at the wrong place: no Go caller after cgocall, which ends it. */
	ret[1] = 0xc000100200;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 1);
	assert_int_equal(out[0], 0x8010);
	/* Not cgocall first, or a pushed pc that is not the fake one: not a cgo call's
	 * state, nothing (the same state as an ordinary switch's gives frames). */
	ret[0] = 0x1010;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 0);
	ret[0] = 0x8010;
	ret[1] = 0x8110;
	sw.pc = 0x7010;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 0);
	sw.cb = 0;
	assert_int_equal(repair_cross_core(&sw, sw_frame, NULL, out, 8), 4);
}

/* The executable's PT_LOAD holding text_pc: its file offset range (first callback only:
 * dl_iterate_phdr reports the executable first). */
struct seg {
	uintptr_t pc;
	off_t off, pc_off;
	size_t len;
	int done;
};

static int find_seg(struct dl_phdr_info *info, size_t size, void *data)
{
	struct seg *sg = data;
	uintptr_t v = sg->pc - info->dlpi_addr;

	(void)size;
	if (sg->done++)
		return 1;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && v >= ph->p_vaddr && v < ph->p_vaddr + ph->p_filesz) {
			long pg = sysconf(_SC_PAGESIZE);

			sg->off = (off_t)(ph->p_offset & ~(uint64_t)(pg - 1));
			sg->pc_off = (off_t)(v - ph->p_vaddr + ph->p_offset);
			sg->len = (size_t)(ph->p_offset + ph->p_filesz - (uint64_t)sg->off);
		}
	}
	return 1;
}

/* The segment of sg mapped again from the file, at a new address. */
static void *map_again(const struct seg *sg)
{
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	void *m;

	assert_true(fd >= 0);
	m = mmap(NULL, sg->len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, sg->off);
	close(fd);
	assert_true(m != MAP_FAILED);
	return m;
}

/* A pc looked up before its mapping was read (its mmap record still in another CPU's
 * ring) must not stay unknown once the maps are read again. */
static void test_live_late_mapping(void **state)
{
	struct symbolizer *sym = symbolizer_new(getpid());
	struct repair *r = repair_new(sym);
	struct repair_frame f;
	struct seg sg = { .pc = (uintptr_t)&test_cross_switch };
	uint64_t pc2;
	void *m, *m2, *m3;

	(void)state;
	/* The control: this function's own entry, whose CFI gives the return address at SP. */
	repair_frame_at(r, (uint64_t)sg.pc, 1, &f);
	assert_true(f.known);
	assert_false(f.go);
	assert_int_equal(f.sp_delta, 0);
	/* The same code mapped again from the file, at a new address. */
	dl_iterate_phdr(find_seg, &sg);
	assert_true(sg.len > 0);
	m = map_again(&sg);
	pc2 = (uint64_t)(uintptr_t)m + (uint64_t)(sg.pc_off - sg.off);
	/* Looked up before the maps are read again (unknown, unless the symbolizer's reload
	 * interval has passed already), then after the mmap is seen. */
	repair_frame_at(r, pc2, 1, &f);
	symbolizer_invalidate_maps(sym);
	repair_frame_at(r, pc2, 1, &f);
	assert_true(f.known);
	assert_int_equal(f.sp_delta, 0);
	/* Mapped at a third address, its mmap never seen (its record read before the maps
	 * were, or lost). A sample's leaf there, newer than the maps: they are read again. */
	m2 = map_again(&sg);
	pc2 = (uint64_t)(uintptr_t)m2 + (uint64_t)(sg.pc_off - sg.off);
	usleep(2000);
	symbolizer_set_sample_time(sym, util_now_ns());
	usleep(2000);
	repair_frame_at(r, pc2, 1, &f);
	assert_true(f.known);
	/* A return address at a fourth (no sample time proves it mapped): known once the
	 * maps would be read again anyway. */
	m3 = map_again(&sg);
	pc2 = (uint64_t)(uintptr_t)m3 + (uint64_t)(sg.pc_off - sg.off) + 1;
	repair_frame_at(r, pc2, 0, &f);
	usleep(250 * 1000); /* the symbolizer's reload interval, 200 ms */
	repair_frame_at(r, pc2, 0, &f);
	assert_true(f.known);
	munmap(m3, sg.len);
	munmap(m2, sg.len);
	munmap(m, sg.len);
	repair_free(r);
	symbolizer_free(sym);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_amd64_leaf),
		cmocka_unit_test(test_amd64_established),
		cmocka_unit_test(test_amd64_prologue),
		cmocka_unit_test(test_amd64_duff),
		cmocka_unit_test(test_amd64_garbage_bp),
		cmocka_unit_test(test_amd64_unknown),
		cmocka_unit_test(test_arm64),
		cmocka_unit_test(test_c_frameless_leaf),
		cmocka_unit_test(test_cross_switch),
		cmocka_unit_test(test_cross_callback),
		cmocka_unit_test(test_live_late_mapping),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
