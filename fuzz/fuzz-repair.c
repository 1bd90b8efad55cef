/* fuzz-repair.c: libFuzzer harness for callchain repair (repair_core) on fuzzed registers, kernel chains, frame tables and stack copies, and for the crossing of a stack switch (repair_cross_core) on the same input taken as a goroutine's saved state. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gotop/repair.h"

/*
 * Input, little endian: arch (u8: even amd64, odd arm64), chain length n (u8, up to 127),
 * number of functions (u8, up to 16), room for the output (u8, 1-256); pc, sp, fp, lr (u64);
 * n kernel chain entries (u64); the functions {lo, hi, mark (u64), d1, d2 (i32), flags
 * (u32)}; the rest is the copy of the user stack from sp. A function answers the frame
 * lookup as tests/test-repair.c's do: sp_delta d1 before mark, d2 from it on.
 */
#define FN_TOP 1
#define FN_FP 2
#define FN_GO 4
#define FN_UNKNOWN 8
#define FN_FAKE 16 /* runtime.systemstack_switch */
#define MAX_FN 16
#define MAX_CHAIN 127
#define MAX_OUT 256

struct fn {
	uint64_t lo, hi, mark;
	int32_t d1, d2;
	uint32_t flags;
};

struct prog {
	struct fn fn[MAX_FN];
	size_t n;
	unsigned calls;
};

static void frame_fn(void *ctx, uint64_t pc, int innermost, struct repair_frame *out)
{
	struct prog *p = ctx;
	uint64_t look = innermost ? pc : pc - 1;
	size_t i;

	p->calls++;
	memset(out, 0, sizeof(*out));
	for (i = 0; i < p->n; i++) {
		const struct fn *f = &p->fn[i];

		if (look >= f->lo && look < f->hi && !(f->flags & FN_UNKNOWN)) {
			out->known = 1;
			out->sp_delta = look < f->mark ? f->d1 : f->d2;
			out->top = !!(f->flags & FN_TOP);
			out->fp_based = !!(f->flags & FN_FP);
			out->go = !!(f->flags & FN_GO);
			out->fake = !!(f->flags & FN_FAKE);
			return;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct repair_input in;
	struct prog p;
	uint64_t chain[MAX_CHAIN], out[MAX_OUT];
	size_t nout = 0, max, len, i;
	const uint8_t *stack;
	uint8_t *copy;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&p, 0, sizeof(p));
	in.arch = fz_u8(&f) & 1 ? REPAIR_ARM64 : REPAIR_AMD64;
	in.n = fz_u8(&f) % (MAX_CHAIN + 1);
	p.n = fz_u8(&f) % (MAX_FN + 1);
	max = (size_t)fz_u8(&f) + 1;
	in.pc = fz_u64(&f);
	in.sp = fz_u64(&f);
	in.fp = fz_u64(&f);
	in.lr = fz_u64(&f);
	for (i = 0; i < in.n; i++)
		chain[i] = fz_u64(&f);
	if (in.n)
		chain[0] = in.pc; /* repair.h: chain[0] == pc */
	for (i = 0; i < p.n; i++) {
		p.fn[i].lo = fz_u64(&f);
		p.fn[i].hi = fz_u64(&f);
		p.fn[i].mark = fz_u64(&f);
		p.fn[i].d1 = (int32_t)fz_u32(&f);
		p.fn[i].d2 = (int32_t)fz_u32(&f);
		p.fn[i].flags = fz_u32(&f);
	}
	stack = fz_bytes(&f, f.n, &len);
	/* An exact-size copy: a read past the stack copy is an ASan report. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	if (len)
		memcpy(copy, stack, len);
	in.stack = copy;
	in.stack_len = len;
	in.chain = chain;
	in.frame = frame_fn;
	in.ctx = &p;
	rc = repair_core(&in, out, &nout, max);
	if (rc < 0 || rc > 15 || nout > max)
		abort();
	if (rc == REPAIR_UNCHANGED && in.n <= max && (nout != in.n || memcmp(out, chain, in.n * 8)))
		abort(); /* unchanged means the kernel chain as it was */
	if (p.calls > 100000)
		abort(); /* every walk is bounded */
	/* The same registers, stack words and chain as a goroutine's state saved at a stack
	 * switch (repair.h, struct repair_switch): at most max frames, all from the input. */
	{
		struct repair_switch sw = { in.pc, in.sp, in.fp, (const uint64_t *)chain, in.n,
					    chain, in.n, (int)(in.pc & 1) };
		size_t k, nc = repair_cross_core(&sw, frame_fn, &p, out, max);

		if (nc > max)
			abort();
		for (k = 0; k < nc; k++) {
			size_t j = 0;

			while (j < in.n && chain[j] != out[k])
				j++;
			if (out[k] != in.pc && j == in.n)
				abort(); /* a frame that is neither the pc nor a word given */
		}
	}
	free(copy);
	return 0;
}
