/* gosnap.h: a snapshot of every goroutine of a live Go process, read from outside without
 * stopping it: id, state, wait reason, how long it waits, creator, start function, pprof
 * labels and the stack by frame pointers from g.sched. */
#ifndef GOTOP_GOSNAP_H
#define GOTOP_GOSNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/goruntime.h"

/* Goroutine states (runtime/runtime2.go, go1.19-go1.27: _Gidle 0 ... _Gpreempted 9). */
enum gosnap_state {
	GOSNAP_IDLE = 0,
	GOSNAP_RUNNABLE = 1,
	GOSNAP_RUNNING = 2,
	GOSNAP_SYSCALL = 3,
	GOSNAP_WAITING = 4,
	GOSNAP_DEAD = 6,
	GOSNAP_COPYSTACK = 8,
	GOSNAP_PREEMPTED = 9,
};

/* gosnap_g.flags */
#define GOSNAP_NO_STACK 0x1  /* running on a thread: its stack is the thread's, not read */
#define GOSNAP_STACK_CUT 0x2 /* the walk stopped early: limit, or a frame pointer off the
			      * stack (the frames shown are right, some may be missing) */
#define GOSNAP_REPAIRED 0x4  /* the parked pc was in a frameless spot: its caller was put
			      * back from the frame size (.gopclntab pcsp) */
#define GOSNAP_LABELS_BAD 0x8 /* g.labels was set but is no label set this reader can
			       * decode (garbage, or a layout it does not know): labels NULL */

struct gosnap_g {
	uint64_t goid, addr;      /* goroutine id; address of its g */
	uint32_t state;           /* enum gosnap_state (without the _Gscan bit) */
	uint32_t flags;           /* GOSNAP_* */
	const char *wait;         /* wait reason (static, printable) or NULL */
	int64_t wait_ns;          /* how long it has waited, -1 when the runtime does not
				   * know (g.waitsince is set at the first GC that sees it) */
	uint64_t gopc, startpc;   /* creating call's return address; start function's entry */
	uint64_t parent_goid;     /* creating goroutine (go1.21+), else 0 */
	const struct gort_labels *labels; /* NULL: none. Interned, valid until gosnap_free */
	uint32_t frame0, nframes; /* its stack: pcs[frame0 .. frame0 + nframes), innermost
				   * first, every one a return address (look up pc - 1) */
	uint32_t prev;            /* 1 + the index of this goroutine in the previous snapshot's
				   * result when it has not run since and its stack, state, wait
				   * reason and labels are as then; 0 otherwise */
};

struct gosnap_stats {
	uint64_t listed;      /* entries of the runtime's list of all g's read */
	uint64_t live;        /* goroutines kept (not dead, not idle) */
	uint64_t torn;        /* dropped: the g changed between the read and the check */
	uint64_t bad;         /* dropped: fields that no g has (garbage pointer, bad stack) */
	uint64_t cut;         /* stacks that ended early (GOSNAP_STACK_CUT) */
	uint64_t repaired;    /* GOSNAP_REPAIRED */
	uint64_t reused;      /* stacks taken from the previous snapshot: their goroutine had
			       * not run since (none read, nor the g again) */
	uint64_t readvs;      /* vectored reads of the target (system calls) */
	uint64_t bytes;       /* bytes read from the target */
	uint64_t ns;          /* wall time of the snapshot */
	int truncated;        /* more goroutines than the limit: the rest not read */
};

struct gosnap_result {
	struct gosnap_g *g;   /* n of them, in the runtime's list order */
	size_t n;
	uint64_t *pcs;        /* runtime addresses */
	struct gosnap_stats st;
};

struct gosnap;
struct symfile;

/* Limits: goroutines per snapshot, frames per stack, stack bytes read at once. */
#define GOSNAP_MAX_G (1u << 20)
#define GOSNAP_MAX_FRAMES 128

/* A reader for process pid running the Go executable sf (borrowed; must outlive the
 * reader). Finds runtime.allgs from .symtab or from the code (gort_vars_find).
 * NULL with errno: ENOTSUP not Go or a version without layouts, ENOENT no list of
 * goroutines found (a one-line reason in why), ESRCH the process is gone. */
struct gosnap *gosnap_new(pid_t pid, struct symfile *sf, char *why, size_t whylen);
void gosnap_free(struct gosnap *s); /* accepts NULL */

/* What a reader needs of its target. gosnap_new finds it in a live process; tests and
 * fuzzing (fuzz/fuzz-gosnap.c) hand it a fake memory. The decoding is the same. */
struct gp_mem;
struct gopcln;
struct gosnap_target {
	struct gp_mem *mem;             /* every read of the target; borrowed */
	struct gort *gort;              /* the runtime's layout (gort_new); the reader takes it
					 * over, even when gosnap_new_from fails */
	const struct gopcln *pcln;      /* borrowed; NULL: no frame sizes (frame pointers only) */
	uint64_t bias;                  /* runtime address - link-time address */
	uint64_t allglen, allgptr;      /* runtime addresses of runtime.allglen, allgptr */
	uint64_t wait_strings;          /* runtime.waitReasonStrings (runtime address), 0: none */
	uint32_t nwait;                 /* its entries */
	uint64_t goexit_lo, goexit_hi;  /* runtime.goexit (runtime addresses), 0: unknown */
};
/* A reader over t (copied). NULL with errno EINVAL when t has no memory or layout. */
struct gosnap *gosnap_new_from(const struct gosnap_target *t);

/* Reads every goroutine now into *out (its arrays are the reader's, valid until the next
 * gosnap_take or gosnap_free). Each goroutine is read, its stack walked, then its g read
 * again: one that changed meanwhile is dropped and counted (torn), except one running at
 * the first read (no stack read), kept as running as then. A goroutine that has not run
 * since the previous snapshot (the same saved registers, stack and g.trackingSeq) keeps
 * that snapshot's stack, unread. max_g
 * (0: GOSNAP_MAX_G) bounds the goroutines read. 0, or -errno (-ESRCH the process is gone, -EAGAIN the
 * runtime has no goroutine yet, -EINVAL the list is garbage). */
int gosnap_take(struct gosnap *s, size_t max_g, struct gosnap_result *out);

/* The state's name as Go's tracebacks print it (runtime/traceback.go gStatusStrings):
 * "runnable", "running", "syscall", "waiting", ... Static. */
const char *gosnap_state_name(uint32_t state);

/* Groups of goroutines with the same state (or wait reason), the same stack and, when
 * by_labels, the same label set, as goroutine?debug=1 groups them: biggest first, then in
 * list order. *out (caller frees) gets the groups; returns how many. */
struct gosnap_group {
	size_t first;     /* index in r->g of the group's first goroutine */
	size_t count;
	int64_t max_wait; /* the longest wait_ns, -1 unknown */
};
size_t gosnap_group(const struct gosnap_result *r, int by_labels, struct gosnap_group **out);
/* The text Go prints for a goroutine's state: its wait reason when waiting with one, else
 * gosnap_state_name. Static or the snapshot's (valid until gosnap_free). */
const char *gosnap_state_text(const struct gosnap_g *g);

/* The load bias of the executable (runtime address - link-time address). */
uint64_t gosnap_bias(const struct gosnap *s);

#endif
