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

struct repair_stats {
	uint64_t chains, changed;
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
};

/* Looks up the frame layout at pc. innermost: pc is the sampled pc (else a return
 * address, for which the call instruction is meant). */
typedef void (*repair_frame_fn)(void *ctx, uint64_t pc, int innermost, struct repair_frame *out);

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
