/* repair.c: frame-pointer callchain repair. An exact unwind of the first frames (Go's pcsp
 * table or the CFI, read against the sample's stack copy) is spliced into the kernel's
 * FP chain where both name the same return-address slot. */
#include "config.h"
#include "gotop/repair.h"
#include "gotop/arch.h"
#include "gotop/gopclntab.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How many frames the exact unwind follows before it must have met the kernel chain. */
#define UNWIND_MAX 8
/* A frame pointer this far from SP is not a frame of this stack (garbage from asm). */
#define FP_RANGE (64ULL << 20)

uint32_t repair_stack_bytes(const char *go_version)
{
	/* Go 1.21 and newer push BP before anything else and pop it last (go1.21
	 * cmd/internal/obj/x86/obj6.go L618-705: PUSHQ BP; MOVQ SP, BP; SUBQ), and only
	 * frameless leaves and NOFRAME assembly do without BP: the slots the repair reads
	 * are a few words above SP. Up to 1.20 the prologue is SUBQ $F, SP; MOVQ BP,
	 * F-8(SP), and between the two the slot is the whole frame up. C without frame
	 * pointers needs a deeper copy for its CFI unwind, which follows only as many
	 * frames as the copy holds. How the sizes were chosen (the verifier's counts of
	 * wrong stacks after repair at each size): doc/design.md, section 5. */
	return util_go_minor(go_version) >= 21 ? REPAIR_STACK_GO : REPAIR_STACK_OTHER;
}

static int stack_word(const struct repair_input *in, uint64_t addr, uint64_t *v)
{
	if (addr < in->sp || addr - in->sp > in->stack_len || in->stack_len - (addr - in->sp) < 8)
		return -1;
	memcpy(v, in->stack + (addr - in->sp), 8);
	return 0;
}

static size_t emit(uint64_t *out, size_t n, size_t max, uint64_t v)
{
	if (n < max)
		out[n++] = v;
	return n;
}

/* The splice of frame j's true return address with the kernel's chain read at slot i:
 * the leaf, the j return addresses of the exact unwind, then the kernel's chain after
 * slot i. */
static int splice(const struct repair_input *in, const uint64_t *t_ra, size_t j, size_t i,
		  uint64_t *out, size_t *nout, size_t max)
{
	size_t n = emit(out, 0, max, in->pc), k;

	for (k = 0; k < j; k++)
		n = emit(out, n, max, t_ra[k]);
	for (k = i + 1; k < in->n; k++)
		n = emit(out, n, max, in->chain[k]);
	*nout = n;
	if (i == j)
		return i == 0 || !memcmp(t_ra, in->chain + 1, j * 8) ? REPAIR_UNCHANGED
								    : REPAIR_INSERTED | REPAIR_DROPPED;
	return i < j ? REPAIR_INSERTED : REPAIR_DROPPED;
}

/* The kernel's chain: chain[i] (i >= 1) was read from slot[i-1] = fp_i + 8 (amd64
 * frame: saved BP at fp, RA at fp+8; arm64 frame record {x29, x30}). Only the part
 * where the slots go up the stack is kept: the frames of one stack lie above each
 * other, and so do the exact unwind's slots, so a frame pointer that points down the
 * stack (a loop, or garbage) begins a part where no true frame's slot can be met
 * except by a loop back into frames already passed. Increasing, the slots are walked
 * only as far as the one being matched: the frameless leaf's own slot lies below the
 * first, and walking the whole chain only to rule that out would cost a walk of every
 * frame of every sample. */
struct kwalk {
	uint64_t slot[UNWIND_MAX + 2];
	size_t n;
	uint64_t fp;
	int done;
};

/* Adds the next slot; 0 when there is none (the chain's end, the bound, a frame pointer
 * outside the stack copy or not above the last). */
static int kwalk_next(const struct repair_input *in, struct kwalk *k)
{
	uint64_t up = 0;

	if (k->done || k->n + 1 >= in->n || k->n >= UNWIND_MAX + 2)
		return 0;
	k->slot[k->n++] = k->fp + 8;
	if (stack_word(in, k->fp, &up) || up <= k->fp)
		k->done = 1;
	k->fp = up;
	return 1;
}

/* The kernel slot (slot[i], which gave chain[i + 1]) that is the true frame's return
 * address slot, with the same value when the stack copy holds it; -1: none. */
static long kernel_match(const struct repair_input *in, struct kwalk *k, uint64_t slot, int have,
			 uint64_t ra)
{
	size_t i;

	if (!slot)
		return -1;
	for (i = 0; i < k->n || kwalk_next(in, k); i++)
		if (k->slot[i] >= slot)
			return k->slot[i] == slot && (!have || in->chain[i + 1] == ra) ? (long)i : -1;
	return -1;
}

/* The kernel's chain as it is, cut to max. */
static size_t copy_chain(const struct repair_input *in, uint64_t *out, size_t max)
{
	size_t i;

	for (i = 0; i < in->n && i < max; i++)
		out[i] = in->chain[i];
	return i;
}

/* One frame of the exact unwind: where its return address lives. */
struct tframe {
	uint64_t slot;    /* the return address's stack slot; 0: in the link register */
	uint64_t ra;
	uint64_t next_sp; /* the caller's SP */
	int have;         /* the stack copy holds ra */
	int last;         /* a caller that keeps a frame pointer: the unwind ends with it */
};

/* Frame j of the exact unwind (layout f, at SP sp) into *t. -1 when the unwind cannot
 * go on from it. */
static int tframe_of(const struct repair_input *in, const struct repair_frame *f, size_t j,
		     uint64_t sp, int garbage_fp, struct tframe *t)
{
	memset(t, 0, sizeof(*t));
	if (j > 0 && f->known && f->fp_based && !garbage_fp) {
		/* A caller that keeps a frame pointer (C, CFA = RBP+16): the frames below it
		 * computed their CFA from SP and left the frame pointer alone, so it is still
		 * this caller's, and its return address is at FP+8, where the kernel's walk
		 * starts. */
		t->slot = in->fp + 8;
		t->have = stack_word(in, t->slot, &t->ra) == 0;
		t->last = 1;
		return 0;
	}
	if ((j > 0 && (!f->known || f->fp_based || f->top)) || f->sp_delta < 0)
		return -1;
	if (in->arch == REPAIR_AMD64) {
		/* RA at SP+pcsp; the caller's SP is just above it (go1.24
		 * runtime/traceback.go: fp = sp + spdelta + 8 on x86). */
		t->slot = sp + (uint64_t)f->sp_delta;
		t->have = stack_word(in, t->slot, &t->ra) == 0;
		t->next_sp = t->slot + 8;
	} else if (f->sp_delta == 0) {
		/* arm64 frameless (or before the prologue's store): the return address is
		 * still in LR; valid for the innermost frame only. */
		if (j > 0)
			return -1;
		t->ra = in->lr;
		t->have = 1;
		t->next_sp = sp;
	} else {
		/* arm64: LR saved at [SP] by MOVD.W R30,-F(RSP). */
		t->slot = sp;
		t->have = stack_word(in, t->slot, &t->ra) == 0;
		t->next_sp = sp + (uint64_t)f->sp_delta;
	}
	return 0;
}

/* What the exact unwind proved: ra[j] is frame j's return address when the stack copy
 * holds it (have[j]). */
struct unwound {
	uint64_t ra[UNWIND_MAX];
	int have[UNWIND_MAX];
	size_t n;
};

/* Unwinds exactly from the leaf f, frame by frame, and splices at the first true frame
 * whose slot the kernel also read: the outcome, or -1 when none met the kernel's chain
 * (u then holds the frames unwound). A frame's entry does not depend on the frames
 * after it, so stopping there gives what unwinding the whole stack first did, and a Go
 * stack usually meets the kernel's chain within its first frames. */
static int unwind_splice(const struct repair_input *in, const struct repair_frame *leaf,
			 int garbage_fp, struct unwound *u, uint64_t *out, size_t *nout, size_t max)
{
	struct repair_frame f = *leaf;
	uint64_t pc = in->pc, sp = in->sp;
	struct kwalk kw = { .n = 0, .fp = in->fp, .done = garbage_fp };
	struct tframe t;
	size_t j;

	u->n = 0;
	for (j = 0; j < UNWIND_MAX; j++) {
		if (j > 0)
			in->frame(in->ctx, pc, 0, &f);
		if (tframe_of(in, &f, j, sp, garbage_fp, &t))
			break;
		u->ra[u->n] = t.ra;
		u->have[u->n] = t.have;
		u->n++;
		long m = kernel_match(in, &kw, t.slot, t.have, t.ra);

		if (m >= 0)
			return splice(in, u->ra, u->n - 1, (size_t)m, out, nout, max);
		if (t.last || !t.have || t.ra == 0)
			break;
		pc = t.ra;
		sp = t.next_sp;
	}
	return -1;
}

/* The chain when the exact unwind never met the kernel's: the known ways the kernel
 * goes wrong without a match, else the kernel's chain as it is. */
static int no_match(const struct repair_input *in, const struct unwound *u, int garbage_fp,
		    uint64_t *out, size_t *nout, size_t max)
{
	size_t j, n;

	/* amd64 duffzero/duffcopy: the caller set BP to a fake frame below SP
	 * (cmd/compile amd64 ssa.go, "dummy frame pointer" before DUFFCOPY); the
	 * kernel read one stale slot from it, then continued with the real frame. */
	if (in->arch == REPAIR_AMD64 && !garbage_fp && in->fp < in->sp && u->n > 0 && u->have[0]) {
		for (size_t i = 2; i < in->n && i < 4; i++) {
			if (in->chain[i] != u->ra[0])
				continue;
			n = emit(out, 0, max, in->pc);
			for (j = i; j < in->n; j++)
				n = emit(out, n, max, in->chain[j]);
			*nout = n;
			return REPAIR_DROPPED;
		}
	}
	/* BP clobbered (assembly using it as a scratch register): the kernel chain is
	 * nonsense; keep what the exact unwind proved, truncated there. */
	if (garbage_fp && u->n > 0 && u->have[0]) {
		n = emit(out, 0, max, in->pc);
		for (j = 0; j < u->n && u->have[j] && u->ra[j]; j++)
			n = emit(out, n, max, u->ra[j]);
		*nout = n;
		return REPAIR_DROPPED | REPAIR_INSERTED | REPAIR_NOMATCH;
	}
	*nout = copy_chain(in, out, max);
	return REPAIR_NOMATCH;
}

int repair_core(const struct repair_input *in, uint64_t *out, size_t *nout, size_t max)
{
	struct repair_frame f;
	struct unwound u;
	int garbage_fp, res;

	*nout = 0;
	if (in->n == 0 || max == 0)
		return REPAIR_UNCHANGED;
	if (in->leaf)
		f = *in->leaf;
	else
		in->frame(in->ctx, in->pc, 1, &f);
	if (!f.known || f.fp_based || f.top) {
		*nout = copy_chain(in, out, max);
		return f.known ? REPAIR_UNCHANGED : REPAIR_UNKNOWN;
	}
	garbage_fp = in->fp == 0 || (in->fp & 7) || in->fp + FP_RANGE < in->sp ||
		     in->fp > in->sp + FP_RANGE;
	res = unwind_splice(in, &f, garbage_fp, &u, out, nout, max);
	return res >= 0 ? res : no_match(in, &u, garbage_fp, out, nout, max);
}

/* --- live targets: frame layouts from the symbolizer's files --- */

#define FCACHE 4096

struct fcache_ent {
	uint64_t key; /* pc << 1 | innermost (pc and pc|1 are different pcs) */
	struct repair_frame f;
	/* A pc in no mapping: symbolizer_maps_version + 1 when it was looked up (0: found). */
	uint32_t miss;
};

/* The cut at the outermost frame (top_cut) of chains seen before: a cut looks up every
 * frame of the chain, and a service's samples bring the same few chains again and
 * again. Keyed by the whole chain, which is compared, not only hashed: a wrong cut
 * would be a wrong stack. */
#define TCACHE 512
#define TCACHE_FRAMES 32

struct tcache_ent {
	uint64_t hash;
	uint32_t n, keep;
	uint64_t pc[TCACHE_FRAMES];
};

struct repair {
	struct symbolizer *sym;
	struct fcache_ent cache[FCACHE];
	struct tcache_ent tcache[TCACHE];
	struct repair_stats st;
};

struct repair *repair_new(struct symbolizer *sym)
{
	struct repair *r = xcalloc(1, sizeof(*r));

	r->sym = sym;
	return r;
}

void repair_free(struct repair *r)
{
	free(r);
}

void repair_get_stats(const struct repair *r, struct repair_stats *st)
{
	*st = r->st;
}

/* CFI (C and C++ code, .eh_frame/.debug_frame through libdw): where is the CFA? */
static void cfi_frame(Dwarf_CFI *cfi, uint64_t vaddr, struct repair_frame *out)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops;

	if (dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0)
		return;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops == 1) {
		/* CFA = rsp + off, or based on rbp (x86-64 DWARF register numbers, arch.h). */
		if (ops[0].atom == DW_OP_breg0 + X86_64_DW_RSP ||
		    (ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_DW_RSP)) {
			int64_t off = ops[0].atom == DW_OP_bregx ? (int64_t)ops[0].number2
								 : (int64_t)ops[0].number;

			out->known = 1;
			out->sp_delta = (int32_t)(off - 8); /* RA at CFA-8 */
		} else if (ops[0].atom == DW_OP_breg0 + X86_64_DW_RBP ||
			   (ops[0].atom == DW_OP_bregx && ops[0].number == X86_64_DW_RBP)) {
			out->known = 1;
			out->fp_based = 1;
		}
	}
	free(frame);
}

static void live_frame(void *ctx, uint64_t pc, int innermost, struct repair_frame *out)
{
	struct repair *r = ctx;
	uint64_t key = (pc << 1) | (innermost ? 1 : 0), look = innermost ? pc : pc - 1, vaddr;
	/* Two ways per set, the newest first: direct-mapped, two hot pcs of one slot
	 * evict each other, and a miss (a symbolizer lookup and a pcsp or CFI decode)
	 * costs far more than a second compare. */
	struct fcache_ent *e = &r->cache[util_mix64(key) & (FCACHE - 2)];
	const struct sym_module *mod = NULL;

	/* A pc in no mapping is remembered only while the maps are as they were: its mmap
	 * may still be unread in another CPU's ring, and a miss kept for good would leave
	 * every later sample at that pc unrepaired. */
	for (int k = 0; k < 2; k++) {
		if (e[k].key == key && key &&
		    (!e[k].miss || (e[k].miss == symbolizer_maps_version(r->sym) + 1 &&
				    !symbolizer_miss_would_reload(r->sym, !innermost)))) {
			*out = e[k].f;
			return;
		}
	}
	memset(out, 0, sizeof(*out));
	symbolizer_lookup(r->sym, pc, !innermost, &mod, NULL, 0);
	if (mod == NULL) {
		struct fcache_ent *m = e[0].key == key ? &e[0] : e[1].key == key ? &e[1] : NULL;

		if (!m) {
			e[1] = e[0];
			m = e;
		}
		m->key = key;
		m->f = *out;
		m->miss = symbolizer_maps_version(r->sym) + 1;
		return;
	}
	if (mod && mod->sf && symfile_file_vaddr(mod->sf, mod->start, mod->pgoff, look, &vaddr) == 0) {
		struct gopcln *g = symfile_gopcln(mod->sf);
		int mcall = 0;

		if (g) {
			struct gopcln_func fn;
			int32_t d;

			if (gopcln_find_func(g, vaddr, &fn) == 0 && gopcln_pcsp(g, vaddr, &d) == 0) {
				out->known = 1;
				out->go = 1;
				out->sp_delta = d;
				out->top = (fn.flag & GOPCLN_FLAG_TOPFRAME) != 0;
				/* SP-writing functions (morestack, systemstack, gogo) switch
				 * stacks: their callers' frames are elsewhere. */
				if (!innermost && (fn.flag & GOPCLN_FLAG_SPWRITE))
					out->known = 0;
				mcall = !strcmp(fn.name, "runtime.mcall");
				out->sw = mcall || !strcmp(fn.name, "runtime.systemstack") ||
					  !strcmp(fn.name, "runtime.asmcgocall") ||
					  !strcmp(fn.name, "runtime.morestack");
				out->fake = !strcmp(fn.name, "runtime.systemstack_switch");
				out->cgocb = !strcmp(fn.name, "runtime.cgocallback");
				out->cgocall = !strcmp(fn.name, "runtime.cgocall");
				out->schedule = !strcmp(fn.name, "runtime.schedule");
			}
		}
		if (!out->known) {
			Dwarf_CFI *cfi = symfile_cfi(mod->sf);

			if (cfi)
				cfi_frame(cfi, vaddr, out);
		}
		/* Go's traceback stops at an SP-writing caller, but follows systemstack and
		 * morestack to the goroutine's stack (go1.23 runtime/traceback.go, the
		 * unwindJumpStack case); the kernel's walk follows them the same way. mcall's
		 * function runs on g0 and never returns to it, and mcall leaves BP pointing
		 * into the goroutine it switched from (go1.19 to 1.27 asm_amd64.s), so the walk
		 * went on into the frames of a goroutine that may already run elsewhere, which
		 * Go's profile never shows; a preempted one's lacked the caller of a frameless
		 * function. The stack ends
		 * there; also when mcall is the leaf, as in Go's (which stops at any
		 * SP-writing leaf when profiling): past its switch to g0, SP no longer leads
		 * to its caller. Only the goroutine's state copied at the sample continues
		 * it (repair_cross). */
		if (mcall)
			out->top = 1;
	}
	if (e[1].key == key) {
		e[1] = e[0]; /* a miss of this pc found now: it moves to the front */
	} else if (e[0].key != key) {
		e[1] = e[0];
	}
	e->key = key;
	e->f = *out;
	e->miss = 0;
}

void repair_frame_at(struct repair *r, uint64_t pc, int innermost, struct repair_frame *out)
{
	live_frame(r, pc, innermost, out);
}

/* How many frames of chain pc[0..n) to keep: the outermost Go frames (runtime.goexit,
 * runtime.mstart: the TopFrame flag, go1.24 internal/abi/symtab.go) end the stack; the
 * kernel's walk goes on into whatever the frame pointer slot above them holds; a chain
 * also ends at runtime.mcall (live_frame), and a leaf that is such a frame is the whole
 * stack, as in Go's traceback. Only Go stacks have them: a chain whose leaf (leaf, the
 * frame at pc[0]) and its next callers are not Go is kept whole without hashing it,
 * which would be all of the cut's cost on C code. */
/* How many frames below a leaf outside Go a Go caller is looked for (see top_cut). */
#define VDSO_DEPTH 3

static size_t top_cut(struct repair *r, const struct repair_frame *leaf, const uint64_t *pc,
		      size_t n)
{
	struct tcache_ent *e = NULL;
	uint64_t h = 0;
	size_t i, keep = n;

	if (!leaf->go) {
		struct repair_frame f1;

		/* A leaf in the vDSO, called from Go on g0 (nanotime1), is Go's stack all
		 * the same: a caller among the next few says (the vDSO's clock_gettime
		 * calls a helper of its own, so the Go frame may be the third). */
		for (i = 1; i < n && i <= VDSO_DEPTH; i++) {
			live_frame(r, pc[i], 0, &f1);
			if (f1.go)
				break;
		}
		if (i >= n || i > VDSO_DEPTH)
			return n;
	}
	if (leaf->top)
		return 1;
	if (n <= TCACHE_FRAMES) {
		h = util_hash_words(n, pc, n);
		h ^= h >> 29;
		e = &r->tcache[h & (TCACHE - 1)];
		if (e->hash == h && e->n == n && memcmp(e->pc, pc, n * sizeof(*pc)) == 0)
			return e->keep;
	}
	for (i = 1; i < n; i++) {
		struct repair_frame f;

		live_frame(r, pc[i], 0, &f);
		if (f.top) {
			keep = i + 1;
			break;
		}
	}
	if (e) {
		e->hash = h;
		e->n = (uint32_t)n;
		e->keep = (uint32_t)keep;
		memcpy(e->pc, pc, n * sizeof(*pc));
	}
	return keep;
}

/*
 * Crossing a stack switch. Go code runs on the thread's g0 stack through four doors, each
 * saving the goroutine's registers in g.sched (go1.19 to go1.27 runtime/asm_amd64.s):
 * - systemstack and asmcgocall call gosave_systemstack_switch: pc is the fake
 *   runtime.systemstack_switch, sp the door's SP (its return address into its caller at
 *   [sp], or above the frame record it pushed there), bp the BP at the call;
 * - mcall saves its caller's return pc, the caller's SP and BP (the caller's frame is set
 *   up: the walk from bp goes on from the caller's caller);
 * - morestack saves the pc in f's stack check (f's frame not set up yet: f's caller is at
 *   [sp]) and BP, f's caller's frame pointer (m.morebuf holds the same caller's pc and sp,
 *   not needed then).
 * Go's traceback follows systemstack and morestack to m.curg when curg.m is this m (go1.23
 * runtime/traceback.go, unwinder.resolveInternal, unwindJumpStack), hiding morestack's
 * frame, and profiles a cgo call from curg.syscallpc (go1.23 runtime/proc.go sigprof).
 * Here every door keeps its frame, so the stack says where the time went, and all four
 * are crossed. What the kernel's walk gave after the door is dropped: where the door left
 * BP pointing into the goroutine (go1.19 morestack) it skipped frames, and where BP was
 * reset (morestack from go1.23, mcall in go1.27) nothing follows.
 */
size_t repair_cross_core(const struct repair_switch *sw, repair_frame_fn frame, void *ctx,
			 uint64_t *out, size_t max)
{
	struct repair_frame f;
	size_t n = 0, i;

	if (!sw->pc || max == 0)
		return 0;
	frame(ctx, sw->pc, 1, &f);
	/* A callback's state starts with the pc cgocallback pushed, the goroutine's sched.pc of
	 * the cgo call (go1.19 to go1.27 runtime/asm_amd64.s): the fake systemstack_switch,
	 * whose entry (go1.19) or entry + 8 (go1.23 on) is looked up as a pc, not as a return
	 * address (entry - 1 is the end of the function before it, runtime.mcall). Anything
	 * else is not a cgo call's state. */
	if (sw->cb && !f.fake)
		return 0;
	if (!f.fake)
		out[n++] = sw->pc;
	/* The frame at pc not set up: the switching function's return address is at sp, or
	 * above the frame record it pushed there (the assembler gives asmcgocall and
	 * systemstack one where they make calls: go1.23 and go1.27 binaries, not go1.19's).
	 * With bp pointing at that record the walk's first return address is this one; after
	 * a cgo callback bp is the caller's frame again (go1.23 on, runtime/cgocall.go
	 * cgocallbackg reenters the syscall with the saved syscallbp), which the record
	 * holds: the return address is the word after it. */
	if ((f.fake || (f.known && !f.fp_based && f.sp_delta == 0)) && sw->bp != sw->sp &&
	    sw->nstack > 0 && n < max) {
		if (sw->nstack > 1 && sw->stack[0] == sw->bp)
			out[n++] = sw->stack[1];
		else
			out[n++] = sw->stack[0];
	}
	for (i = 0; i < sw->n && n < max && sw->ret[i]; i++)
		out[n++] = sw->ret[i];
	/* Below a callback's C code the first frame is runtime.cgocall, which called
	 * asmcgocall; a frame record elsewhere than where it was looked for (gobpf.c
	 * cfg_from) gives no Go caller after it, and the stack then ends at cgocall. */
	if (sw->cb && n > 0) {
		frame(ctx, out[0], 0, &f);
		if (!f.cgocall)
			return 0;
		if (n > 1) {
			frame(ctx, out[1], 0, &f);
			if (!f.go)
				n = 1;
		}
	}
	return n;
}

int repair_cross(struct repair *r, const struct repair_switch *sw, uint64_t *chain, size_t *n,
		 size_t max)
{
	struct repair_frame f, leaf;
	uint64_t cont[128];
	size_t i, nc, keep;
	int picked = 0;

	for (i = 0; i < *n; i++) {
		live_frame(r, chain[i], i == 0, &f);
		if (sw->cb ? f.cgocb : f.sw)
			break;
		picked |= f.schedule;
	}
	if (i >= *n || i + 1 >= max)
		return 0;
	/* Below the door the scheduler ran (park_m, goschedImpl, goexit0 and newstack's
	 * preemption call schedule): it dropped the goroutine that came through the door, and
	 * m.curg, once execute sets it, is the goroutine picked next, whose saved state is
	 * where that one will resume, not the door's caller (go1.19 to go1.27
	 * runtime/proc.go: dropg, schedule, execute). The stack ends at the door, as Go's. */
	if (picked && !sw->cb)
		return 0;
	nc = repair_cross_core(sw, live_frame, r, cont, GP_MIN(max - i - 1, GP_ARRAY_SIZE(cont)));
	if (nc == 0)
		return 0;
	/* The goroutine's stack ends where Go's do (goexit: top_cut). */
	live_frame(r, cont[0], 1, &leaf);
	keep = top_cut(r, &leaf, cont, nc);
	memcpy(chain + i + 1, cont, keep * sizeof(*chain));
	*n = i + 1 + keep;
	r->st.crossed++;
	return 1;
}

int repair_chain(struct repair *r, const struct perf_sample *s, uint64_t *chain, size_t *n,
		 size_t max)
{
	struct repair_input in;
	struct repair_frame leaf;
	uint64_t out[256];
	size_t nout = 0;
	int ip = sampler_reg(SREG_IP), sp = sampler_reg(SREG_SP), fp = sampler_reg(SREG_FP);
	int lr = sampler_reg(SREG_LR), res;
	size_t keep;

	if (*n == 0 || ip < 0 || sp < 0 || fp < 0 || !(s->regs_mask & (1ULL << sp)))
		return 0;
	memset(&in, 0, sizeof(in));
#if defined(__aarch64__)
	in.arch = REPAIR_ARM64;
#else
	in.arch = REPAIR_AMD64;
#endif
	in.pc = chain[0];
	in.sp = s->regs[sp];
	in.fp = s->regs[fp];
	in.lr = lr >= 0 ? s->regs[lr] : 0;
	/* Looked up here once for the repair and the top cut. */
	live_frame(r, chain[0], 1, &leaf);
	r->st.chains++;
	/* Only a sample taken in user mode has registers that belong to chain[0]. One taken
	 * in the kernel is not repaired, but its user chain ends where Go's stacks end all
	 * the same (top_cut): an interrupt while the user leaf was runtime.mcall went on
	 * past it (go-labels.sh under valgrind). */
	if (s->regs[ip] != chain[0]) {
		keep = top_cut(r, &leaf, chain, *n);
		if (keep >= *n)
			return 0;
		r->st.dropped++;
		r->st.changed++;
		*n = keep;
		return 1;
	}
	in.stack = s->stack;
	in.stack_len = s->stack ? s->stack_dyn : 0;
	in.chain = chain;
	in.n = *n;
	in.frame = live_frame;
	in.ctx = r;
	in.leaf = &leaf;
	if (*n > GP_ARRAY_SIZE(out))
		*n = GP_ARRAY_SIZE(out);
	res = repair_core(&in, out, &nout, GP_MIN(max, GP_ARRAY_SIZE(out)));
	if (res & REPAIR_UNKNOWN)
		r->st.unknown++;
	if (res & REPAIR_NOMATCH)
		r->st.nomatch++;
	if (res & REPAIR_INSERTED)
		r->st.inserted++;
	if (res & REPAIR_DROPPED)
		r->st.dropped++;
	if (!(res & (REPAIR_INSERTED | REPAIR_DROPPED))) {
		memcpy(out, chain, *n * sizeof(*chain));
		nout = *n;
	}
	keep = nout ? top_cut(r, &leaf, out, nout) : 0;
	if (keep < nout) {
		nout = keep;
		res |= REPAIR_DROPPED;
	}
	if (!(res & (REPAIR_INSERTED | REPAIR_DROPPED)))
		return 0;
	r->st.changed++;
	memcpy(chain, out, nout * sizeof(*chain));
	*n = nout;
	return 1;
}
