/* verify.h: the verifier: stop one thread at a time, build its frame-pointer chain, the
 * repaired chain and a full libunwind unwind from the same stopped state, and count per
 * function how often the cheap stacks are wrong. */
#ifndef GOTOP_VERIFY_H
#define GOTOP_VERIFY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/unwind.h"

/* --- one stop --- */

struct gort_offsets;

/* The goroutine a stopped thread's m serves while the thread runs on another stack (g0,
 * gsignal, C code of a cgo call): read during the stop, since the goroutine moves on once
 * the thread does. Everything in it came from the target and is untrusted. */
struct verify_goroutine {
	int have;                     /* 1: the fields below were read during the stop */
	uint64_t g, m;                /* m.curg and its m */
	uint64_t lo, hi;              /* its stack, [g.stack.lo, g.stack.hi) */
	uint64_t pc, sp, bp;          /* g.sched: systemstack, asmcgocall, mcall, morestack */
	uint64_t scpc, scsp, scbp;    /* g.syscallpc/sp/bp: a cgo call (0: none) */
	/* what the BPF program copies at a sample (gobpf.bpf.c read_cont), read the same way:
	 * cont 1 when words and the frame-pointer walk ret[0..nret) from g.sched.bp are set */
	int cont;
	int cb;                       /* pc, sp, bp: a cgo callback's goroutine below its C code */
	uint64_t words[4];
	uint64_t ret[40];
	size_t nret;
	uint8_t *buf;                 /* its stack from base, len bytes */
	size_t cap, len;
	uint64_t base;
};

struct verify_capture {
	struct thread_snapshot ts; /* ts.stack points into buf */
	uint8_t *buf;
	size_t cap;
	uint64_t stopped_ns; /* from the stop (or, without CAP_SYS_NICE, from PTRACE_INTERRUPT)
			      * to the end of PTRACE_DETACH */
	int signal;          /* a signal that arrived during the stop and was passed on */
	int group_stop;      /* the thread was (and stays) in a group stop (SIGSTOP) */
	/* Set by the caller: the runtime's layout of a Go target (NULL: the goroutine is not
	 * read), and the thread's m when an earlier stop found it (0: none). */
	const struct gort_offsets *go;
	uint64_t m_hint;
	struct verify_goroutine gr; /* gr.buf reused between calls (free it with free) */
};

/* Stops thread tid of process pid with PTRACE_SEIZE + PTRACE_INTERRUPT, copies its
 * registers and up to stack_max bytes of its stack, with cap->go also the state of the
 * goroutine its m serves when the thread is off that goroutine's stack (cap->gr: the m
 * from the g register, R14, or from cap->m_hint; up to stack_max bytes of the goroutine's
 * stack from its saved SP), and lets it go with PTRACE_DETACH
 * (re-injecting a signal that arrived meanwhile; a group-stopped thread stays stopped).
 * cap is reused between calls (free buf with free). Returns 0, or -errno: -ESRCH (the
 * thread exited), -EPERM (not permitted: see verify_explain_eperm), -EBUSY (another
 * tracer). On every path the thread is left running or as it was. */
int verify_capture(pid_t pid, pid_t tid, size_t stack_max, struct verify_capture *cap);

/* Why ptrace is refused for pid, one line for the user (ptrace_scope, capabilities,
 * another tracer, another user). */
void verify_explain_eperm(pid_t pid, int err, char *buf, size_t len);

/* The kernel's frame-pointer walk on a snapshot, as perf_callchain_user does it
 * (linux arch/x86/events/core.c): the pc, then the return address above each saved
 * frame pointer, until a frame cannot be read or max entries. Words outside the stack
 * copy are read from the live process. Returns the count. */
size_t verify_fp_chain(pid_t pid, const struct thread_snapshot *ts, uint64_t *out, size_t max);

/* --- classification --- */

enum verify_class {
	VERIFY_AGREE,
	VERIFY_MISSING,   /* a caller is missing (the frameless leaf / prologue case) */
	VERIFY_DUPLICATE, /* an extra frame (Go's duff* fake frame) */
	VERIFY_TRUNCATED, /* the chain stops early */
	VERIFY_DIFFERENT, /* anything else */
	VERIFY_NCLASS
};
const char *verify_class_name(enum verify_class c); /* "agrees", "caller missing", ... */

struct verify_diff {
	enum verify_class cls;
	size_t at;   /* index of the first difference */
	uint64_t pc; /* MISSING: the missing frame (truth[at]); DUPLICATE: the extra one
		      * (chain[at]); DIFFERENT: chain[at]; else 0 */
};

/* Compares a chain with the ground truth. Both start at the stopped pc. Within limit
 * frames (the kernel's perf_event_max_stack), a chain equal to the truth's first limit
 * frames agrees. open: the truth's last frame is not the outermost one (the unwind
 * stopped at a stack switch), so frames of the chain past it are not judged; else extra
 * frames past the outermost frame make the chain DIFFERENT. */
void verify_compare(const uint64_t *truth, size_t nt, int open, const uint64_t *chain, size_t nc,
		    size_t limit, struct verify_diff *d);

/* --- the verifier --- */

struct verify_opts {
	double rate;           /* comparisons per second (default 20) */
	double max_stopped;    /* share of wall time a thread of the target may be stopped
				* (default 0.01): the loop waits when it would exceed it */
	size_t stack_copy;     /* bytes of stack copied during the stop (default 65536) */
	size_t sample_stack;   /* of which the repair may use as much as a sample carries
				* (sampler_opts.stack_size); 0 (default): as gotop-perf record
				* chooses for the target (repair_stack_bytes) */
	int all_threads;       /* verifier_pass: every thread, any state (a stopped process) */
};
void verify_opts_default(struct verify_opts *o);

struct verifier;

/* A verifier of process pid, with its own symbolizer, repair and unwinder. */
struct verifier *verifier_new(pid_t pid, const struct verify_opts *o);
void verifier_free(struct verifier *v); /* stops the thread first; accepts NULL */

/* Called after each comparison (from the verifying thread) with the three stacks; for
 * the --dump output and tests. */
struct verify_result {
	pid_t tid;
	const uint64_t *truth, *raw, *rep;
	size_t nt, nraw, nrep;
	struct verify_diff draw, drep;
	uint64_t stopped_ns;
	size_t cross_at; /* truth[cross_at] is the first frame past a stack switch; 0: none */
};
typedef void (*verify_result_fn)(void *ctx, const struct verify_result *r);
void verifier_set_result_fn(struct verifier *v, verify_result_fn fn, void *ctx);
/* The function at pc (innermost inlined one), escaped for printing; from the verifying
 * thread only (the result function). is_return: pc is a return address. */
void verifier_pc_name(struct verifier *v, uint64_t pc, int is_return, char *buf, size_t len);

/* One comparison on a thread that is running user code, chosen at random (tid 0), or on
 * tid. Returns 1 when a comparison was made, 0 when no thread was running, -errno on a
 * ptrace failure that stops the verifier (-EPERM, -EBUSY). */
int verifier_round(struct verifier *v, pid_t tid);

/* Whether ptrace works on the process: stops its main thread once (a few tens of us)
 * without comparing. 0, or -errno with the report's error and explanation set. */
int verifier_probe(struct verifier *v);

/* One comparison on every thread of the process, whatever its state (tests, and
 * processes stopped with SIGSTOP). Returns the comparisons made or -errno. */
int verifier_pass(struct verifier *v);

/* Runs rounds at opts.rate on a background thread until verifier_stop; 0 or -errno. */
int verifier_start(struct verifier *v);
void verifier_stop(struct verifier *v);
int verifier_running(struct verifier *v);

/* Paces the caller's own loop: sleeps until the next round is due under opts.rate and
 * opts.max_stopped, or until *quit becomes non-zero. */
void verifier_pace(struct verifier *v, volatile int *quit);

/* --- the report --- */

#define VERIFY_SHAPE_LEN 160

struct verify_row {
	char func[128];          /* the leaf function (escaped) */
	uint64_t n;              /* comparisons */
	uint64_t raw_wrong, rep_wrong;
	uint64_t raw_cls[VERIFY_NCLASS], rep_cls[VERIFY_NCLASS];
	char raw_shape[VERIFY_SHAPE_LEN]; /* the most common wrong shape, "" if none */
	uint64_t raw_shape_n;
	char rep_shape[VERIFY_SHAPE_LEN];
	uint64_t rep_shape_n;
};

struct verify_report {
	uint64_t comparisons, raw_wrong, rep_wrong;
	uint64_t raw_cls[VERIFY_NCLASS], rep_cls[VERIFY_NCLASS];
	uint64_t stops, stop_p50_ns, stop_p99_ns, stop_max_ns, stop_total_ns;
	uint64_t wall_ns;           /* since the verifier started */
	uint64_t idle_rounds;       /* no thread was running user code */
	uint64_t gone;              /* the thread exited before or during the stop */
	uint64_t signals;           /* signals passed on after a stop */
	uint64_t unwind_failed;     /* libunwind could not even start */
	/* Comparisons whose truth crossed a stack switch (runtime.systemstack, asmcgocall,
	 * mcall, morestack) onto the suspended goroutine's stack, and of them the wrong
	 * chains; cross_missed: the truth ended at such a switch with no goroutine read;
	 * cross_budget: repaired chains compared only as deep as they go, the goroutine's
	 * frame-pointer walk having used its whole budget (GOREAD_CONT_FRAMES, as at a sample)
	 * with the truth deeper. */
	uint64_t cross, cross_raw_wrong, cross_rep_wrong, cross_missed, cross_budget;
	/* Stops that also read a goroutine's state and stack, and the others, side by side. */
	uint64_t gstops, gstop_p50_ns, gstop_p99_ns, ostop_p50_ns, ostop_p99_ns;
	struct unwinder_stats unwind; /* where the ground truth's unwind info came from */
	int error;                  /* -errno that stopped the verifier, 0 */
	char why[256];              /* its explanation */
	struct verify_row *rows;    /* sorted: most wrong raw stacks first */
	size_t nrows;
};

/* A consistent copy of the counts so far (callable from any thread while the
 * background thread runs). Free with verify_report_free. */
void verifier_report(struct verifier *v, struct verify_report *r);
void verify_report_free(struct verify_report *r);

#endif
