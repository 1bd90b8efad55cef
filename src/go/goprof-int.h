/* goprof-int.h: what the files of the /debug/pprof emulation share (private to src/go).
 *
 *   goprof-build.c  runtime/pprof's profileBuilder as seen from outside: runtime.Frames
 *                   over the target's .gopclntab, the location deck, mappings
 *   goprof.c        the profiles (heap, allocs, block, mutex, goroutine), their debug=1
 *                   and debug=2 text forms, deltas, and goprof_fetch
 */
#ifndef GOTOP_GOPROF_INT_H
#define GOTOP_GOPROF_INT_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/profile.h"

struct gopcln;

/* One frame as runtime.Frames.Next returns it (go1.19-go1.27 runtime/symtab.go). */
struct gpb_frame {
	uint64_t pc;         /* Frame.PC: the address less one when past the entry (a call pc) */
	uint64_t entry;      /* Frame.Entry: the physical function's entry; 0 when not Go */
	const char *name;    /* the symbol name (runtime_FrameSymbolName); "" when not Go */
	const char *file;    /* "" when not Go */
	int32_t line;
	int32_t start_line;
	uint8_t inlined;     /* Frame.Func == nil: an inlined call */
	uint8_t funcid_wrapper; /* FuncIDWrapper */
};

/* An executable mapping of the target, as runtime/pprof reads /proc/self/maps
 * (parseProcSelfMaps: 'x' in the permissions, a file or a [name], " (deleted)" cut). */
struct gpb_map {
	uint64_t start, end, offset;
	const char *file;     /* copied */
	const char *build_id; /* GNU build id (elfBuildID), "" when none; copied */
};

struct gpb;

/* A builder over the executable's .gopclntab t (borrowed), whose runtime addresses are
 * link-time + bias, for the rules of release go_minor. maps (copied) may be empty: then
 * one fake mapping, as Go does. Never fails. */
struct gpb *gpb_new(const struct gopcln *t, uint64_t bias, int go_minor,
		    const struct gpb_map *maps, size_t nmaps);
void gpb_free(struct gpb *b); /* accepts NULL */
/* The profile being built (strings, functions, locations: add samples to it). Borrowed. */
struct prof *gpb_prof(struct gpb *b);
/* Ends the profile: its mappings (with HasFunctions as Go sets it), handed to the caller
 * (free with prof_free); b is freed. */
struct prof *gpb_finish(struct gpb *b);

/* appendLocsForStack (go1.27 runtime/pprof/proto.go): the location ids of a stack of
 * return pcs, the last one expanded for inlining first (runtime_expandFinalInlineFrame).
 * Writes at most max into locs; returns how many. */
size_t gpb_locs(struct gpb *b, const uint64_t *stk, size_t n, uint64_t *locs, size_t max);

/* runtime.CallersFrames(pcs): calls cb for each frame in order until it returns nonzero.
 * From go1.23 a physical pc inside inlined code brings the frames it implies, as there. */
void gpb_frames(struct gpb *b, const uint64_t *pcs, size_t n,
		int (*cb)(void *arg, const struct gpb_frame *f), void *arg);
/* expandInlinedFrames (go1.23+ runtime/pprof/pprof.go): f.PC + 1 of each frame of
 * CallersFrames(pcs), at most max. Returns how many. */
size_t gpb_expand(struct gpb *b, const uint64_t *pcs, size_t n, uint64_t *out, size_t max);
/* runtime.FuncForPC(pc).Name(): the innermost function at pc itself (not pc - 1), or
 * NULL when pc is in no Go function. */
const char *gpb_func_for_pc(struct gpb *b, uint64_t pc);
/* The name runtime tracebacks print (funcNameForPrint: a generic function's shape
 * arguments as "[...]", go1.21+), into buf. */
const char *gpb_print_name(const struct gpb *b, const char *name, char *buf, size_t len);
/* The target's releases rules: go_minor. */
int gpb_go_minor(const struct gpb *b);

#endif
