/* repair.h: frame-pointer callchain repair: put back the caller the kernel's FP walk
 * skips in frameless leaves, prologues and epilogues, and drop Go's duff* duplicate frame. */
#ifndef GOTOP_REPAIR_H
#define GOTOP_REPAIR_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/perfrec.h"

struct repair;
struct symbolizer;

/* The symbolizer is borrowed (it finds the function and its frame size at a pc) and
 * must outlive the repair. Never fails. */
struct repair *repair_new(struct symbolizer *sym);
void repair_free(struct repair *r);

/* Repairs the user part of a sample's kernel FP callchain in place: chain[0] is the
 * sampled user pc, *n entries, room for max. Returns 1 when the chain changed, 0 when
 * it was left as it is (already right, or not enough information). */
int repair_chain(struct repair *r, const struct perf_sample *s, uint64_t *chain, size_t *n,
		 size_t max);

/* The user-stack bytes a sample should copy for the repair of this target, when the user
 * did not choose: go_version is the main executable's Go release ("go1.23.4"), NULL or ""
 * when it is not Go. The kernel copies them at every sample and gotop-perf moves them
 * twice, so fewer is cheaper; the repair reads the return-address slots of the frames
 * below the first one that keeps a frame pointer, and for a clobbered frame pointer as
 * many frames as the copy holds. */
#define REPAIR_STACK_GO 256
#define REPAIR_STACK_OTHER 1024
uint32_t repair_stack_bytes(const char *go_version);

/* The state a goroutine was suspended in at a stack switch, copied at the sample
 * (goread.h, goread_cont): its saved pc, sp and bp (g.sched), the words at sp, and the
 * frame-pointer walk from bp (ret[0] = *(bp + 8), ...). */
struct repair_switch {
	uint64_t pc, sp, bp;
	const uint64_t *stack; /* words at sp */
	size_t nstack;
	const uint64_t *ret;
	size_t n;
	/* A cgo callback's goroutine (goread_cont.cb): pc is the one cgocallback pushed (the
	 * fake systemstack_switch), sp and the words at it asmcgocall's, where the goroutine
	 * entered the cgo call the callback came through. */
	int cb;
};

/* Continues a chain (after repair_chain) that reaches a stack switch (runtime.systemstack,
 * asmcgocall, mcall or morestack) on the suspended goroutine's stack, as Go's traceback
 * does: the chain is cut after the switch's frame and the goroutine's frames follow. With
 * sw->cb the chain of a cgo callback is cut after runtime.cgocallback instead, and the
 * goroutine's frames below the cgo call follow (the C frames between are on g0, out of
 * the sample's stack copy). Returns 1 when it did, 0 when the chain has no switch (or
 * the state no frame). */
int repair_cross(struct repair *r, const struct repair_switch *sw, uint64_t *chain, size_t *n,
		 size_t max);

struct repair_stats {
	uint64_t chains, changed;
	uint64_t crossed;    /* chains continued past a stack switch (repair_cross) */
	uint64_t inserted;   /* skipped callers put back */
	uint64_t dropped;    /* spurious frames removed (duff fake frame, garbage BP) */
	uint64_t unknown;    /* no frame information at the pc (left as is) */
	uint64_t nomatch;    /* kernel chain and unwind never met (left as is or truncated) */
};
void repair_get_stats(const struct repair *r, struct repair_stats *st);

/* --- the architecture-independent core, exposed for unit tests on synthetic data --- */

enum repair_arch { REPAIR_AMD64, REPAIR_ARM64 };

/* Frame layout at a pc, from Go's pcsp table or the CFI. */
struct repair_frame {
	int known;         /* 0: no information at this pc */
	int fp_based;      /* CFA is computed from the frame pointer: the frame is set up */
	int32_t sp_delta;  /* amd64: return address at SP+sp_delta; arm64: frame size (pcsp) */
	int top;           /* the outermost frame (goexit, mstart; mcall as a caller): stop here */
	int go;            /* the layout came from Go's pcsp table */
	int sw;            /* a stack switch: systemstack, asmcgocall, mcall, morestack */
	int fake;          /* runtime.systemstack_switch: the pc a switch saves, no frame */
	int cgocb;         /* runtime.cgocallback: a cgo callback's Go frames end here */
	int cgocall;       /* runtime.cgocall: the first frame below a callback's C code */
	int schedule;      /* runtime.schedule: below it m.curg is the goroutine it picks */
};


/* Looks up the frame layout at pc. innermost: pc is the sampled pc (else a return
 * address, for which the call instruction is meant). */
typedef void (*repair_frame_fn)(void *ctx, uint64_t pc, int innermost, struct repair_frame *out);

/* The layout repair_chain uses at pc of r's process: from the file mapped there, cached
 * per pc once a mapping was found. */
void repair_frame_at(struct repair *r, uint64_t pc, int innermost, struct repair_frame *out);

/* The goroutine's frames after a switch (see repair_cross), into out (room for max): the
 * saved pc unless it is the fake one, its caller from the stack when its frame is not set
 * up (sp_delta 0: morestack's caller in its stack check, systemstack_switch), then the
 * frame-pointer walk. A callback's (sw->cb) must have the fake pc and start at
 * runtime.cgocall (else 0), and ends there unless a Go frame follows. Returns how many. */
size_t repair_cross_core(const struct repair_switch *sw, repair_frame_fn frame, void *ctx,
			 uint64_t *out, size_t max);

struct repair_input {
	enum repair_arch arch;
	uint64_t pc, sp, fp, lr;   /* lr: arm64 only */
	const uint8_t *stack;      /* copy of the user stack from sp */
	uint64_t stack_len;        /* valid bytes in the copy */
	const uint64_t *chain;     /* kernel user chain, chain[0] == pc */
	size_t n;
	repair_frame_fn frame;
	void *ctx;
	const struct repair_frame *leaf; /* frame(ctx, pc, 1) when already looked up, or NULL */
};

enum repair_outcome {
	REPAIR_UNCHANGED = 0,
	REPAIR_INSERTED = 1,   /* one or more skipped callers put back */
	REPAIR_DROPPED = 2,    /* spurious frames removed */
	REPAIR_UNKNOWN = 4,    /* no frame information at pc */
	REPAIR_NOMATCH = 8,    /* the unwind and the kernel chain never met */
};

/* Computes the repaired chain into out (room for max). Returns a mask of
 * REPAIR_* outcomes and sets *nout. out may not alias in->chain. */
int repair_core(const struct repair_input *in, uint64_t *out, size_t *nout, size_t max);

#endif
