/* gosnap.c: every goroutine of a live Go process, read without stopping it.
 *
 * The list is the runtime's: allglen, then allgptr (the order forEachGRace reads them in,
 * so that the length never exceeds the array: runtime/proc.go atomicAllG). Goroutines are
 * taken a chunk at a time, each step one vectored read for the whole chunk:
 *   1. the g's (status, stack bounds, sched, wait fields, labels pointer);
 *   2. the used part of each parked goroutine's stack, [sched.sp, stack.hi), up to
 *      STACK_READ bytes (a frame beyond is read on its own);
 *   3. the frame-pointer walk in those copies; label sets through the reader's cache, those
 *      not known yet all together, a vectored read per pointer level (gort_labels_batch);
 *   4. the g's again: a goroutine whose status, sched, stack bounds, id, labels or
 *      g.trackingSeq changed ran meanwhile, and its stack may mix two moments: it is
 *      dropped and counted; one running at either read (same id, same labels) is kept as
 *      running, without a stack;
 *   5. the stacks themselves (linked): a goroutine can run and park again where it was
 *      with the same saved registers, which step 4 does not see when g.trackingSeq does
 *      not tell (see same_moment); the frames read meanwhile are then another moment's,
 *      and their return addresses follow calls to other functions than the frames below
 *      them. Such a stack is dropped and counted too (torn, unlinked). The code before
 *      each return address is read and decoded once (one vectored read per new ones).
 *
 * Format facts:
 * - g.sched {sp, pc, ..., bp} is saved when a goroutine parks: mcall saves the caller's pc
 *   (a return address), sp and bp (runtime/asm_amd64.s mcall); gopreempt_m and park_m go
 *   through mcall; a goroutine in a system call has syscallsp/syscallpc and, from go1.23,
 *   syscallbp (runtime/proc.go reentersyscall, save). Before go1.23 the frame pointer of a
 *   goroutine in a system call is not saved: its stack is walked by frame sizes.
 * - Frames: BP points at the saved caller BP, the return address is at BP+8 (the Go
 *   amd64 frame layout, cmd/compile/abi-internal.md "Frame layout"); at a pc, the return
 *   address is at SP + pcsp(pc) (runtime/traceback.go, frame.fp = sp + spdelta).
 * - Every goroutine's stack ends at runtime.goexit, whose pc+1 newproc1 stores as the
 *   entry function's return address (runtime/proc.go newproc1, gostartcallfn); a reused g
 *   keeps a stale sched.bp, so the walk stops there rather than follow it.
 * - Status values: runtime/runtime2.go (_Gidle 0 ... _Gpreempted 9, go1.26 _Gleaked 10,
 *   _Gdeadextra 11; _Gscan 0x1000 is a bit set while the GC scans the stack).
 * - g.waitsince is runtime.nanotime() (CLOCK_MONOTONIC) set by the GC when it first sees a
 *   waiting goroutine (runtime/mgcmark.go markroot: gp.waitsince = work.tstart).
 */
#include "config.h"
#include "gotop/gosnap.h"
#include "goruntime-int.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gotop/disasm.h"
#include "gotop/gopclntab.h"
#include "gotop/hashmap.h"
#include "gotop/maps.h"
#include "gotop/symtab.h"

#define CHUNK 1024          /* goroutines per round of vectored reads */
#define STACK_READ 4096     /* stack bytes read at once per goroutine */
#define WAIT_MAX 96         /* wait reasons kept */
#define WAIT_LEN 48         /* bytes kept of each */
#define G_DEAD 6
#define G_STATE_MAX 11
#define LMEMO_MAX (1u << 20) /* label sets remembered by address */
/* g's lie in the heap's spans next to each other (runtime/malloc.go: one size class): those
 * at most a g apart are read as one piece, at most GRANGE_MAX bytes. Each piece of a vectored
 * read costs the kernel a walk of the target's page tables (process_vm_readv pins every
 * remote piece's pages on its own): a g a piece made the reads of g's most of a small
 * program's snapshot. A piece's bytes between g's are read and not used: at most a g per g
 * (GRANGE_SLACK - 1 of room in the bounce buffer). */
#define GRANGE_MAX (64u << 10)
#define GRANGE_SLACK 3

/* Runtime functions a stack is checked against (found by name in .gopclntab). A function
 * can be there twice: its ABI0 wrapper beside it (cmd/compile/abi-internal.md). */
enum rt_role {
	RT_GOEXIT,   /* every goroutine's stack ends with a return address into it */
	RT_PANIC,    /* gopanic, sigpanic, panicwrap: a wrapper calling them is shown */
	RT_PARK,     /* a parked goroutine's saved pc follows a call to one of them */
	RT_INJECTED, /* its caller's frame is at an interrupted pc, not after a call */
	RT_SWITCH,   /* systemstack_switch: the saved pc of a goroutine on the system stack */
	RT_CGOCB,    /* cgocallback: its frame on the goroutine's stack holds the cgo call's pc */
};
struct rtfn {
	uint64_t lo, hi; /* runtime addresses */
	uint8_t role;
};
#define RT_MAX 32
#define RA_MAX (1u << 20) /* return addresses remembered */

/* What a return address ra says of the frames around it, from .gopclntab and the code
 * before it (decoded once per address). */
struct rainfo {
	uint64_t ra;
	uint64_t entry;  /* entry of the function holding ra - 1 (runtime address), 0: no Go
			  * function */
	uint64_t target; /* target of a direct call ending at ra, 0: none */
	uint8_t fl;      /* RA_* */
};
#define RA_CODE 0x01     /* the code before ra was read (and decoded, when it could be) */
#define RA_INDIRECT 0x02 /* an indirect call ends at ra */
#define RA_TAILS 0x04    /* target may jump on to another function: assembly (reflectcall's
			  * dispatch, morestack_noctxt), or autogenerated code (method
			  * wrappers tail-call: cmd/compile/internal/reflectdata methodWrapper) */
#define RA_PARKS 0x08    /* target is a parking function (RT_PARK) */
#define RA_INJECTED 0x10 /* the function holding ra - 1 is RT_INJECTED */
#define RA_ENTRY 0x20    /* ra is a function's entry: no return address, a pc not run yet */

/* A g to read: its address and its place in the chunk. */
struct gspan {
	uint64_t addr;
	uint32_t i;
};

struct round;

struct gosnap {
	pid_t pid;
	struct round *round;           /* chunk's state, kept from snapshot to snapshot */
	struct gp_mem *mem;
	bool own_mem;                  /* mem is gosnap_new's process_vm_readv reader */
	struct gort *gort;
	const struct gopcln *pcln;
	uint64_t bias;
	uint64_t allglen, allgptr;     /* runtime addresses */
	uint64_t goexit_lo, goexit_hi; /* runtime.goexit, runtime addresses */
	struct rtfn rt[RT_MAX];        /* runtime functions a stack is checked against */
	size_t nrt;
	uint8_t wrapper_id;            /* FuncIDWrapper of the binary (gopcln), 0: unknown */
	struct disasm *dis;            /* decodes the call before each return address */
	struct hashmap ra_idx;         /* return address -> 1 + its index in ra */
	struct rainfo *ra;
	size_t nra, racap;
	uint8_t *code;                 /* CHUNK * 16 bytes: the code before return addresses */
	struct hashmap creators;       /* g.gopc -> 1 | 2 when its function is a wrapper */
	uint32_t gsz;                  /* bytes read of a g */
	uint32_t nwait;
	char wait[WAIT_MAX][WAIT_LEN];
	bool wait_read;
	uint64_t wait_addr;            /* waitReasonStrings, runtime address */

	/* chunk scratch, for nscratch goroutines: sized to the list (up to CHUNK) at the
	 * snapshot, so that a small program does not cost 4 MB of stack copies */
	size_t nscratch;
	uint8_t *g1, *g2;
	uint8_t *stk;
	struct mem_iov *iov;
	int *grc;                      /* per g of the chunk: its read's result */
	struct gspan *spans;           /* g's by address, for read_gs's coalesced reads */
	uint8_t *bounce;               /* those reads' bytes, GRANGE_SLACK * gsz a g */
	uint64_t *gptrs;
	size_t gptrs_cap, ngptrs; /* ngptrs: the entries read so far (gosnap_take) */
	/* a chunk's label sets not in lmemo, worked out together (gort_labels_batch) */
	struct gview *lview;
	const struct gort_labels **lset;
	int *lflags, *lrc;

	/* g.labels -> its set (pointer | 1; 1: none; 0: undecodable): proving a cached set
	 * still holds costs the label cache a read each time, and a service has a set per
	 * request. Label sets are never changed once stored (runtime/pprof: a new labelMap
	 * per WithLabels), so an entry holds while the object at g.labels cannot have been
	 * freed: within one GC sweep generation (lmemo_sg), when every g.labels was read
	 * between two reads of it that agree; else for one snapshot. */
	struct hashmap lmemo;
	uint32_t lmemo_sg;
	bool lmemo_epoch;

	/* results */
	struct gosnap_g *out;
	size_t nout, outcap;
	uint64_t *pcs;
	uint8_t *pcf;                  /* per pc: GOSNAP_PC_* */
	size_t npcs, pcscap, pcfcap;
	struct gsnap_key *key;         /* per out: the g as read (stack_key) */
	uint32_t *outpos;              /* per out: its place in the runtime's list */
	size_t keycap, poscap;

	/* The previous snapshot's results, whose stacks a goroutine that has not run since
	 * takes instead of a read (stack_key): the runtime's list only grows, in order
	 * (runtime/proc.go allgadd), so a g keeps its place in it, and prev_at[i] is the
	 * previous result at place i + 1 (0: none). */
	struct gosnap_g *pout;
	size_t npout, poutcap;
	uint64_t *ppcs;
	uint8_t *ppcf;
	size_t pnpcs, ppcscap, ppcfcap;
	struct gsnap_key *pkey;
	size_t pkeycap;
	uint32_t *prev_at;
	size_t nprev_at, prev_atcap;
};

const char *gosnap_state_name(uint32_t st)
{
	static const char *const names[] = { "idle", "runnable", "running", "syscall", "waiting",
					     "moribund", "dead", "enqueue", "copystack",
					     "preempted", "leaked", "waiting for cgo callback" };

	return st < GP_ARRAY_SIZE(names) ? names[st] : "unknown";
}

uint64_t gosnap_bias(const struct gosnap *s)
{
	return s->bias;
}

/* The runtime functions of struct rtfn, and goexit, from the function table. */
static void find_runtime(struct gosnap *s)
{
	static const struct {
		const char *name;
		uint8_t role;
	} names[] = {
		{ "runtime.goexit", RT_GOEXIT },
		/* go1.19-go1.27 runtime/traceback.go elideWrapperCalling */
		{ "runtime.gopanic", RT_PANIC },
		{ "runtime.sigpanic", RT_PANIC },
		{ "runtime.panicwrap", RT_PANIC },
		/* Where a goroutine's saved pc can be (go1.19-go1.27): after the call to mcall
		 * (gopark, gosched, preemption through asyncPreempt2, exitsyscall's slow path:
		 * runtime/proc.go, preempt.go; asm_amd64.s mcall saves its caller's pc), to
		 * morestack (stack growth and preemption at a stack check: asm_amd64.s morestack
		 * saves f's pc), or to entersyscall or entersyscallblock (the caller's pc as
		 * syscallpc: proc.go reentersyscall, entersyscallblock). */
		{ "runtime.mcall", RT_PARK },
		{ "runtime.morestack", RT_PARK },
		{ "runtime.morestack_noctxt", RT_PARK },
		{ "runtime.entersyscall", RT_PARK },
		{ "runtime.entersyscallblock", RT_PARK },
		/* Calls the runtime makes to look like calls: a signal handler pushes the
		 * interrupted pc as the return address of asyncPreempt and of sigpanic0, which
		 * jumps to sigpanic (runtime/signal_amd64.go pushCall, asm_amd64.s sigpanic0),
		 * and debugCallV2 (a debugger's injected call); cgocallback pushes
		 * systemstack_switch's pc above its frame on the goroutine's stack (asm_amd64.s
		 * cgocallback). */
		{ "runtime.asyncPreempt", RT_INJECTED },
		{ "runtime.sigpanic0", RT_INJECTED },
		{ "runtime.sigpanic", RT_INJECTED },
		{ "runtime.debugCallV2", RT_INJECTED },
		{ "runtime.cgocallback", RT_INJECTED },
		{ "runtime.cgocallback", RT_CGOCB },
		/* a goroutine on the system stack (GC work, stopping the world) has the fake
		 * pc gosave_systemstack_switch stores: the entry (go1.19) or entry + 8 */
		{ "runtime.systemstack_switch", RT_SWITCH },
	};
	struct gopcln_func f;
	size_t i, k, n = s->pcln ? gopcln_nfunc(s->pcln) : 0;

	for (i = 0; i < n; i++) {
		if (gopcln_func_at(s->pcln, i, &f) != 0 || !f.name || strncmp(f.name, "runtime.", 8))
			continue;
		for (k = 0; k < GP_ARRAY_SIZE(names); k++) {
			if (strcmp(f.name, names[k].name) != 0 || s->nrt == RT_MAX)
				continue;
			s->rt[s->nrt++] = (struct rtfn){ f.entry + s->bias, f.end + s->bias,
							 names[k].role };
			if (names[k].role == RT_GOEXIT && !s->goexit_lo) {
				s->goexit_lo = f.entry + s->bias;
				s->goexit_hi = f.end + s->bias;
			}
		}
	}
}

/* Whether addr is in a runtime function of this role. */
static bool in_role(const struct gosnap *s, uint64_t addr, uint8_t role)
{
	for (size_t k = 0; k < s->nrt; k++)
		if (s->rt[k].role == role && addr >= s->rt[k].lo && addr < s->rt[k].hi)
			return true;
	return false;
}

struct gosnap *gosnap_new_from(const struct gosnap_target *t)
{
	struct gosnap *s;

	if (!t->mem || !t->gort) {
		gort_free(t->gort);
		errno = EINVAL;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->mem = t->mem;
	s->gort = t->gort;
	s->pcln = t->pcln;
	s->bias = t->bias;
	s->allglen = t->allglen;
	s->allgptr = t->allgptr;
	if (t->wait_strings && t->nwait) {
		/* Read at the first snapshot: PIE data is relocated at start-up. */
		s->nwait = GP_MIN(t->nwait, (uint32_t)WAIT_MAX);
		s->wait_addr = t->wait_strings;
	}
	s->wrapper_id = t->pcln ? gopcln_wrapper_funcid(t->pcln) : 0;
	find_runtime(s);
	if (t->goexit_lo) {
		s->goexit_lo = t->goexit_lo;
		s->goexit_hi = t->goexit_hi;
	}
	if (s->pcln) {
		s->dis = disasm_open(); /* NULL: stacks are not checked against the code */
		s->code = xmalloc(CHUNK * 16);
	}
	{
		const struct gort_offsets *o = gort_offsets(s->gort);
		const uint32_t fl[] = { o->g_stack_lo, o->g_stack_hi, o->g_sched_sp, o->g_sched_pc,
					o->g_sched_bp, o->g_atomicstatus, o->g_goid, o->g_labels,
					o->g_waitsince, o->g_waitreason, o->g_gopc, o->g_startpc,
					o->g_parent_goid, o->g_syscallsp, o->g_syscallpc,
					o->g_syscallbp, o->g_trackingseq, o->g_lockedm };

		s->gsz = max_u32(fl, GP_ARRAY_SIZE(fl)) + 8;
	}
	s->iov = xmalloc((CHUNK + 2) * sizeof(*s->iov));
	s->grc = xmalloc(CHUNK * sizeof(*s->grc));
	s->spans = xmalloc(CHUNK * sizeof(*s->spans));
	return s;
}

/* Finds the target in process pid, then the reader is gosnap_new_from's, over
 * process_vm_readv. */
struct gosnap *gosnap_new(pid_t pid, struct symfile *sf, char *why, size_t whylen)
{
	const char *ver = symfile_go_version(sf);
	struct gosnap_target t = { 0 };
	struct gort_vars v = { 0 };
	struct gosnap *s;
	int rc;

	if (!ver) {
		snprintf(why, whylen, "not a Go program (no Go build information)");
		errno = ENOTSUP;
		return NULL;
	}
	t.pcln = symfile_gopcln(sf);
	t.gort = gort_new(ver, symfile_dwarf(sf),
			  symfile_machine(sf) == EM_AARCH64 ? GORT_ARCH_ARM64 : GORT_ARCH_AMD64);
	if (!t.gort || !t.pcln) {
		snprintf(why, whylen, "%s: no layout of the Go runtime's structures for this version",
			 ver);
		rc = -ENOTSUP;
		goto fail;
	}
	rc = gort_exe_bias(pid, sf, &t.bias);
	if (rc) {
		snprintf(why, whylen, "cannot find the executable's mapping in process %d",
			 (int)pid);
		rc = rc == -ENOENT ? -ESRCH : rc;
		goto fail;
	}
	t.mem = mem_pid_new(pid);
	/* Symbols first; the code of the functions that use them otherwise. */
	gort_vars_find(symfile_elf(sf), t.pcln, &v);
	if (symfile_symbol_value(sf, "runtime.allglen")) {
		v.allglen = symfile_symbol_value(sf, "runtime.allglen");
		v.allgptr = symfile_symbol_value(sf, "runtime.allgptr");
	}
	if (symfile_symbol_value(sf, "runtime.waitReasonStrings"))
		v.wait_strings = symfile_symbol_value(sf, "runtime.waitReasonStrings");
	if (!v.allglen || !v.allgptr) {
		snprintf(why, whylen, "cannot find the runtime's list of goroutines (runtime.allgs)");
		rc = -ENOENT;
		goto fail;
	}
	v.allglen += t.bias;
	v.allgptr += t.bias;
	rc = gort_vars_check(t.gort, t.mem, &v, GORT_VAR_ALLGS);
	if (rc && rc != -EAGAIN) {
		snprintf(why, whylen, "the runtime's list of goroutines is not where expected (%s)",
			 strerror(-rc));
		rc = rc == -EFAULT ? -ESRCH : -ENOENT;
		goto fail;
	}
	if (symfile_symbol_value(sf, "runtime.mheap_"))
		gort_set_runtime_vars(t.gort, 0, symfile_symbol_value(sf, "runtime.mheap_") + t.bias);
	else if (v.sweepgen && gort_offsets(t.gort)->mheap_sweepgen &&
		 v.sweepgen > gort_offsets(t.gort)->mheap_sweepgen)
		gort_set_runtime_vars(t.gort, 0,
				      v.sweepgen - gort_offsets(t.gort)->mheap_sweepgen + t.bias);
	t.allglen = v.allglen;
	t.allgptr = v.allgptr;
	if (v.wait_strings && v.nwait) {
		t.wait_strings = v.wait_strings + t.bias;
		t.nwait = v.nwait;
	}
	s = gosnap_new_from(&t);
	s->pid = pid;
	s->own_mem = true;
	return s;
fail:
	gort_free(t.gort);
	if (t.mem)
		mem_pid_free(t.mem);
	errno = -rc;
	return NULL;
}

void gosnap_free(struct gosnap *s)
{
	if (!s)
		return;
	gort_free(s->gort);
	if (s->mem && s->own_mem)
		mem_pid_free(s->mem);
	free(s->round);
	free(s->g1);
	free(s->g2);
	free(s->stk);
	free(s->iov);
	free(s->grc);
	free(s->spans);
	free(s->bounce);
	free(s->gptrs);
	free(s->lview);
	free(s->lset);
	free(s->lflags);
	free(s->lrc);
	free(s->out);
	free(s->pcs);
	free(s->pcf);
	free(s->ppcf);
	hashmap_free(&s->creators);
	hashmap_free(&s->ra_idx);
	free(s->ra);
	free(s->code);
	disasm_close(s->dis);
	free(s->key);
	free(s->outpos);
	free(s->pout);
	free(s->ppcs);
	free(s->pkey);
	free(s->prev_at);
	hashmap_free(&s->lmemo);
	free(s);
}

/* The wait reasons' names, read once from the target's waitReasonStrings: short strings
 * of the binary's read-only data; anything not printable ASCII becomes '?'. */
static void read_wait_names(struct gosnap *s)
{
	uint64_t hdr[WAIT_MAX][2];
	uint32_t i;

	s->wait_read = true;
	if (!s->nwait || mem_read(s->mem, s->wait_addr, hdr, s->nwait * 16u)) {
		s->nwait = 0;
		return;
	}
	for (i = 0; i < s->nwait; i++) {
		size_t len = GP_MIN(hdr[i][1], (uint64_t)WAIT_LEN - 1), k;
		char *w = s->wait[i];

		if (!len || !ptr_ok(hdr[i][0] & ~7ULL) || mem_read(s->mem, hdr[i][0], w, len)) {
			w[0] = 0; /* a failed read leaves the buffer undefined (mem.h) */
			continue;
		}
		for (k = 0; k < len; k++)
			if (w[k] < 0x20 || w[k] > 0x7e)
				w[k] = '?';
		w[len] = 0;
	}
}

/* A goroutine's view from one read of its g. */
struct gsnap_fields {
	uint64_t lo, hi, sp, pc, bp, goid, labels, gopc, startpc, parent, waitsince;
	uint32_t status;
	uint8_t reason, tseq, locked;
};

/* What decides a parked goroutine's stack: where it is suspended, its stack's bounds, and
 * g.trackingSeq, which counts its stops (include/gotop/goruntime.h). A goroutine whose key
 * did not change between two snapshots has not run between them (short of 256 runs that
 * end suspended exactly where it was, a case the check cannot see), and nothing else
 * writes a parked goroutine's frames: the GC moves a stack only by copying it
 * (runtime/stack.go copystack), which changes the bounds and sched.sp. */
struct gsnap_key {
	uint64_t sp, pc, bp, lo, hi, goid;
	uint32_t status;
	uint8_t tseq, pad[3];
};

static void stack_key(const struct gsnap_fields *f, struct gsnap_key *k)
{
	memset(k, 0, sizeof(*k));
	k->sp = f->sp;
	k->pc = f->pc;
	k->bp = f->bp;
	k->lo = f->lo;
	k->hi = f->hi;
	k->goid = f->goid;
	k->status = f->status;
	k->tseq = f->tseq;
}

static void fields(const struct gort_offsets *o, const uint8_t *b, struct gsnap_fields *f)
{
	f->lo = ld64(b, o->g_stack_lo);
	f->hi = ld64(b, o->g_stack_hi);
	f->status = ld32(b, o->g_atomicstatus) & ~(uint32_t)G_SCAN;
	f->goid = ld64(b, o->g_goid);
	f->labels = ld64(b, o->g_labels);
	f->gopc = o->g_gopc ? ld64(b, o->g_gopc) : 0;
	f->startpc = o->g_startpc ? ld64(b, o->g_startpc) : 0;
	f->parent = o->g_parent_goid ? ld64(b, o->g_parent_goid) : 0;
	f->waitsince = o->g_waitsince ? ld64(b, o->g_waitsince) : 0;
	f->reason = o->g_waitreason ? b[o->g_waitreason] : 0;
	f->tseq = o->g_trackingseq ? b[o->g_trackingseq] : 0;
	f->locked = o->g_lockedm && ld64(b, o->g_lockedm) != 0;
	if (f->status == GOSNAP_SYSCALL && o->g_syscallsp) {
		f->sp = ld64(b, o->g_syscallsp);
		f->pc = ld64(b, o->g_syscallpc);
		f->bp = o->g_syscallbp ? ld64(b, o->g_syscallbp) : 0;
	} else {
		f->sp = ld64(b, o->g_sched_sp);
		f->pc = ld64(b, o->g_sched_pc);
		f->bp = ld64(b, o->g_sched_bp);
	}
}

/* The same goroutine, parked at the same place, with the same labels, and not run between
 * the two reads as far as g.trackingSeq tells: it counts every stop through casgstatus,
 * not preemption (casGToPreempted), nor from go1.26 a system call entered by
 * reentersyscall's fast path, nor 256 stops (a uint8) (include/gotop/goruntime.h). A
 * goroutine that ran and stopped again one of those ways at the same place passes this:
 * linked() then checks its stack. */
static bool same_moment(const struct gsnap_fields *a, const struct gsnap_fields *b)
{
	return a->status == b->status && a->sp == b->sp && a->pc == b->pc && a->bp == b->bp &&
	       a->lo == b->lo && a->hi == b->hi && a->goid == b->goid && a->labels == b->labels &&
	       a->tseq == b->tseq;
}

/* A goroutine running at the second read (runnable at the first, preempted and put back,
 * or woken meanwhile) is kept as running, without the stack read before it ran: that stack
 * may have changed since. Dropping it would drop, as above, the goroutines that run
 * (a busy program's goroutines go from running to runnable and back all the time). */
static bool ran_since(const struct gsnap_fields *a, const struct gsnap_fields *b)
{
	return b->status == GOSNAP_RUNNING && a->goid == b->goid && a->labels == b->labels;
}

/* A stack walk over one goroutine's copy of its stack. */
struct walk {
	struct gosnap *s;
	const uint8_t *buf;
	uint64_t buf_lo;
	size_t buf_len;
	uint64_t lo, hi;
	int reads;
};

/* The word at addr of the goroutine's stack: from the copy, else read (bounded). */
static int stack_word(struct walk *w, uint64_t addr, uint64_t *v)
{
	if (addr < w->lo || addr + 8 > w->hi || (addr & 7))
		return -EFAULT;
	if (addr >= w->buf_lo && addr + 8 <= w->buf_lo + w->buf_len) {
		memcpy(v, w->buf + (addr - w->buf_lo), 8);
		return 0;
	}
	if (++w->reads > GOSNAP_MAX_FRAMES)
		return -E2BIG;
	return mem_read_u64(w->s->mem, addr, v);
}

/* Whether the code at addr (a pc to look up) is runtime.gopanic, sigpanic or panicwrap. */
static bool in_panic(const struct gosnap *s, uint64_t addr)
{
	return in_role(s, addr, RT_PANIC);
}

void gosnap_pc_flags(const struct gosnap *s, const uint64_t *pcs, size_t n, int leaf,
		     uint8_t *pcf)
{
	for (size_t i = 0; i < n; i++)
		pcf[i] = i && in_panic(s, pcs[i - 1] - (i - 1 || !leaf)) ? GOSNAP_PC_CALLEE_PANICS : 0;
}

static void push_pc(struct gosnap *s, struct gosnap_g *g, uint64_t pc)
{
	xgrow((void **)&s->pcs, &s->pcscap, s->npcs + 1, sizeof(*s->pcs));
	xgrow((void **)&s->pcf, &s->pcfcap, s->npcs + 1, sizeof(*s->pcf));
	/* Every pc of a parked stack is a return address: the one below's function is at
	 * its pc - 1. */
	s->pcf[s->npcs] = g->nframes && in_panic(s, s->pcs[s->npcs - 1] - 1)
				  ? GOSNAP_PC_CALLEE_PANICS
				  : 0;
	s->pcs[s->npcs++] = pc;
	g->nframes++;
}

/* Whether Go prints no "created by" line for goroutine goid created at gopc: goroutine 1
 * (created by the runtime's start-up through the ABI wrapper of runtime.newproc), or a
 * creating function of autogenerated code (go1.19-go1.27 runtime/traceback.go
 * printcreatedby: showframe of findfunc(gopc) with a normal callee, which elides a
 * wrapper). Go's rule also leaves out the runtime's own unexported creators; they stay
 * here, as the runtime's frames stay in the stacks (runtime/pprof's profiles keep them). */
static bool creator_hidden(struct gosnap *s, uint64_t goid, uint64_t gopc)
{
	struct gopcln_func f;
	uint64_t *slot;
	int created;

	if (goid == 1)
		return true;
	if (!s->pcln || !s->wrapper_id || gopc < s->bias)
		return false;
	if (s->creators.n > (1u << 16))
		hashmap_free(&s->creators); /* a program has few go statements */
	slot = hashmap_put(&s->creators, gopc, &created);
	if (created)
		*slot = 1 | (gopcln_find_func(s->pcln, gopc - s->bias, &f) == 0 &&
			     f.funcid == s->wrapper_id ? 2 : 0);
	return *slot & 2;
}

static bool is_goexit(const struct gosnap *s, uint64_t ra)
{
	return ra > s->goexit_lo && ra <= s->goexit_hi;
}

/* The SP delta of the frame at runtime pc (return address at SP + delta), or -1. */
static int64_t frame_delta(const struct gosnap *s, uint64_t pc)
{
	int32_t d;

	if (!s->pcln || pc < s->bias || gopcln_pcsp(s->pcln, pc - s->bias, &d) != 0 || d < 0 ||
	    d > (1 << 20))
		return -1;
	return d;
}

/* Walks by frame sizes alone (no frame pointer saved: a system call before go1.23). pc at
 * a function's entry (not a return address) is kept as entry + 1, as Go's tracebacks do
 * (go1.19 traceback.go gentraceback "pc == f.entry()", go1.21+ unwinder.symPC), its frame
 * size that of the entry. */
static void walk_exact(struct walk *w, struct gosnap_g *g, uint64_t pc, uint64_t sp)
{
	struct gosnap *s = w->s;
	struct gopcln_func f;

	if (s->pcln && pc >= s->bias && gopcln_find_func(s->pcln, pc - s->bias, &f) == 0 &&
	    f.entry + s->bias == pc) {
		int64_t d = frame_delta(s, pc);
		uint64_t ra;

		push_pc(s, g, pc + 1);
		if (d < 0 || stack_word(w, sp + (uint64_t)d, &ra) || !ra) {
			g->flags |= GOSNAP_STACK_CUT;
			return;
		}
		sp += (uint64_t)d + 8;
		pc = ra;
	}
	push_pc(s, g, pc);
	while (g->nframes < GOSNAP_MAX_FRAMES) {
		int64_t d = frame_delta(s, pc);
		uint64_t ra;

		if (d < 0 || stack_word(w, sp + (uint64_t)d, &ra) || !ra) {
			g->flags |= GOSNAP_STACK_CUT;
			return;
		}
		push_pc(s, g, ra);
		if (is_goexit(s, ra))
			return;
		sp += (uint64_t)d + 8;
		pc = ra;
	}
	g->flags |= GOSNAP_STACK_CUT;
}

/* Walks the frame-pointer chain from a parked goroutine's (pc, sp, bp). The parked pc's
 * frame is checked first: when its return address is not at BP+8 (a frameless function,
 * a prologue or an epilogue: BP is still the caller's), the caller is put back from the
 * frame size, as repair.c does for samples. Every frame pointer must lie on the stack,
 * above the one before. */
static void walk_fp(struct walk *w, struct gosnap_g *g, uint64_t pc, uint64_t sp, uint64_t bp)
{
	struct gosnap *s = w->s;
	int64_t d = frame_delta(s, pc);
	uint64_t fp = bp, prev = sp, ra, next;

	push_pc(s, g, pc);
	if (d >= 0 && sp + (uint64_t)d != bp + 8) {
		if (stack_word(w, sp + (uint64_t)d, &ra) || !ra) {
			g->flags |= GOSNAP_STACK_CUT;
			return;
		}
		push_pc(s, g, ra);
		g->flags |= GOSNAP_REPAIRED;
		if (is_goexit(s, ra))
			return;
	}
	while (g->nframes < GOSNAP_MAX_FRAMES) {
		if (fp < prev || stack_word(w, fp, &next) || stack_word(w, fp + 8, &ra) || !ra) {
			g->flags |= GOSNAP_STACK_CUT;
			return;
		}
		push_pc(s, g, ra);
		if (is_goexit(s, ra))
			return;
		if (in_role(s, ra - 1, RT_CGOCB)) {
			/* Go code called back from C: cgocallback called cgocallbackg on the
			 * goroutine's stack below a frame the size of its own, whose return
			 * address is the goroutine's saved pc in the cgo call (go1.19-go1.27
			 * runtime/asm_amd64.s cgocallback: "push" return PC on the g stack).
			 * cgocallbackg's saved BP is the C code's: Go's unwinder goes on by
			 * frame sizes from there, and so does this walk. */
			int64_t cd = frame_delta(s, ra);
			uint64_t csp = fp + 16;

			if (cd < 0 || stack_word(w, csp + (uint64_t)cd, &ra) || !ra) {
				g->flags |= GOSNAP_STACK_CUT;
				return;
			}
			/* (go1.19's saved pc is systemstack_switch's entry) */
			walk_exact(w, g, ra, csp + (uint64_t)cd + 8);
			return;
		}
		prev = fp + 16;
		fp = next;
	}
	g->flags |= GOSNAP_STACK_CUT;
}

/* Whether function f (of .gopclntab) may jump on to another function instead of calling
 * it: assembly, or autogenerated code. */
static bool fn_tails(const struct gosnap *s, const struct gopcln_func *f)
{
	return (f->flag & GOPCLN_FLAG_ASM) || (s->wrapper_id && f->funcid == s->wrapper_id);
}

/* The index in s->ra of return address ra's facts, made from .gopclntab when new (the code
 * before it is read later, by read_calls). */
static uint32_t ra_info(struct gosnap *s, uint64_t ra)
{
	struct gopcln_func f;
	struct rainfo *ri;
	uint64_t *slot;
	int created;

	slot = hashmap_put(&s->ra_idx, ra, &created);
	if (!created)
		return (uint32_t)*slot - 1;
	xgrow((void **)&s->ra, &s->racap, s->nra + 1, sizeof(*s->ra));
	*slot = ++s->nra;
	ri = &s->ra[s->nra - 1];
	memset(ri, 0, sizeof(*ri));
	ri->ra = ra;
	if (ra > s->bias && gopcln_find_func(s->pcln, ra - 1 - s->bias, &f) == 0) {
		ri->entry = f.entry + s->bias;
		if (in_role(s, ri->entry, RT_INJECTED))
			ri->fl |= RA_INJECTED;
	}
	if (ra >= s->bias && gopcln_find_func(s->pcln, ra - s->bias, &f) == 0 &&
	    f.entry + s->bias == ra)
		ri->fl |= RA_ENTRY;
	return (uint32_t)(s->nra - 1);
}

/* Decodes the call that ends at ra from code[0..16), the bytes before ra (the last avail
 * of them read: those after the entry of ra's function): direct (E8
 * rel32) or indirect (FF /2, maybe after a REX prefix), the only calls Go's amd64 code
 * has. x86 code cannot be read backwards: each length is tried, and more than one call
 * may end at ra. */
static void decode_call(struct gosnap *s, struct rainfo *ri, uint64_t ra, const uint8_t *code,
			size_t avail)
{
	struct gopcln_func f;
	struct disasm_insn in;

	for (size_t len = 2; len <= 15 && len <= avail; len++) {
		const uint8_t *c = code + 16 - len;
		uint64_t addr = ra - len;
		size_t left = len;

		if (!(len == 5 && c[0] == 0xe8) && c[0] != 0xff &&
		    !(c[0] >= 0x40 && c[0] <= 0x4f && c[1] == 0xff))
			continue;
		if (disasm_next(s->dis, &c, &left, &addr, &in) != 1 || in.kind != DISASM_CALL ||
		    in.size != len)
			continue;
		if (!in.target)
			ri->fl |= RA_INDIRECT;
		else if (!ri->target)
			ri->target = in.target;
	}
	if (ri->target) {
		if (ri->target >= s->bias && gopcln_find_func(s->pcln, ri->target - s->bias, &f) == 0 &&
		    fn_tails(s, &f))
			ri->fl |= RA_TAILS;
		if (in_role(s, ri->target, RT_PARK))
			ri->fl |= RA_PARKS;
	}
}

/* Reads and decodes the code before the return addresses whose facts lack it: one
 * vectored read per CHUNK of them. An address whose code cannot be read keeps no call. */
static void read_calls(struct gosnap *s, struct gosnap_stats *st)
{
	size_t i = 0, k;

	while (i < s->nra) {
		size_t idx[CHUNK], n = 0;

		for (; i < s->nra && n < CHUNK; i++) {
			const struct rainfo *ri = &s->ra[i];
			size_t len;

			if (ri->fl & RA_CODE)
				continue;
			s->ra[i].fl |= RA_CODE;
			/* a return address is at least a call's length into its function, and
			 * the call is the function's code: nothing before its entry is read */
			if (!ri->entry || ri->entry + 2 > ri->ra)
				continue;
			len = (size_t)GP_MIN(ri->ra - ri->entry, (uint64_t)16);
			idx[n] = i;
			memset(s->code + 16 * n, 0, 16);
			s->iov[n] = (struct mem_iov){ ri->ra - len, s->code + 16 * n + 16 - len, len, 0 };
			st->bytes += len;
			n++;
		}
		if (!n)
			continue;
		mem_readv(s->mem, s->iov, n);
		st->readvs++;
		for (k = 0; k < n; k++)
			if (s->iov[k].rc == 0)
				decode_call(s, &s->ra[idx[k]], s->ra[idx[k]].ra, s->code + 16 * k,
					    s->iov[k].len);
	}
}

/* Whether goroutine g's stack (s->pcs from g->frame0, g->nframes long) can be one moment's: each frame's return
 * address follows a call to the frame below (a direct call to its function's entry, to a
 * function that may jump on, or an indirect call), and the innermost one a call to where
 * the runtime parks a goroutine. A goroutine that ran while its stack was read and parked
 * again with the same saved registers (which the second read of its g cannot see) left
 * frames of another moment on the stack: their return addresses follow calls to other
 * functions. The outermost return address, into runtime.goexit, is given to the start
 * function (runtime/proc.go newproc1, gostartcallfn), and a goroutine not run yet has its
 * start function's entry as its saved pc. Without .gopclntab or Capstone nothing is
 * checked. */
static bool linked(struct gosnap *s, const struct gosnap_g *g, bool entry0)
{
	const struct rainfo *ri, *callee = NULL;
	const uint64_t *pcs;
	uint32_t k;

	if (!s->pcln || !s->dis || g->nframes == 0)
		return true;
	pcs = s->pcs + g->frame0; /* s->pcs is NULL while no stack was kept */
	for (k = 0; k < g->nframes; k++, callee = ri) {
		uint64_t *slot = hashmap_get(&s->ra_idx, pcs[k]);

		if (!slot)
			return false; /* forgotten meanwhile (RA_MAX): cannot say */
		ri = &s->ra[*slot - 1];
		if (!ri->entry)
			return false; /* not Go code */
		if (k == 0) {
			if (in_role(s, pcs[0] - 1, RT_SWITCH))
				continue;
			if (entry0 ? ri->entry == g->startpc : (ri->fl & RA_PARKS) != 0)
				continue;
			return false;
		}
		if (is_goexit(s, pcs[k])) {
			struct gopcln_func f;

			if (k + 1 != g->nframes)
				return false;
			if (!g->startpc || callee->entry == g->startpc)
				return true;
			/* a start function that jumps on (a wrapper's tail call) */
			return g->startpc >= s->bias &&
			       gopcln_find_func(s->pcln, g->startpc - s->bias, &f) == 0 &&
			       fn_tails(s, &f);
		}
		if (callee->fl & RA_INJECTED)
			continue;
		if (ri->fl & RA_INDIRECT)
			continue;
		if (ri->target && (ri->target == callee->entry || (ri->fl & RA_TAILS)))
			continue;
		return false;
	}
	return true;
}

static int64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_gspan(const void *x, const void *y)
{
	const struct gspan *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Reads the g's sel[0..nsel) of gptrs into buf (g i at buf + i * gsz); s->grc[i] says how
 * each went. g's next to each other are read as one piece (GRANGE_MAX); a piece that fails
 * (an unmapped page between two g's, or a g that is not one) is read again g by g, so that
 * each g's result is its own. With sg (the reader knows runtime.mheap_), the GC sweep
 * generation is read in the same vectored read before and after the g's (pieces are read
 * in order): when both agree and no g needed a read of its own, every g.labels read in
 * between was reachable in that generation, which lets the label cache answer without a
 * read of its own (goruntime-lcache.c). *sg_ok says so. */
static void read_gs(struct gosnap *s, const uint64_t *gptrs, const uint32_t *sel, size_t nsel,
		    uint8_t *buf, struct gosnap_stats *st, uint32_t *sg, bool *sg_ok)
{
	struct gort *gr = s->gort;
	uint32_t sg2 = 0;
	size_t i, j, k = 0, used = 0, first, nr, again = 0;
	bool with_sg = sg && gr->mheap && gr->off.mheap_sweepgen;

	if (!nsel && !with_sg) {
		if (sg_ok)
			*sg_ok = false;
		return;
	}
	for (i = 0; i < nsel; i++)
		s->spans[i] = (struct gspan){ gptrs[sel[i]], sel[i] };
	qsort(s->spans, nsel, sizeof(*s->spans), cmp_gspan);
	if (with_sg)
		s->iov[k++] = (struct mem_iov){ gr->mheap + gr->off.mheap_sweepgen, sg, 4, 0 };
	first = k;
	for (i = 0; i < nsel; i = j) {
		uint64_t lo = s->spans[i].addr, hi = lo + s->gsz;

		for (j = i + 1; j < nsel; j++) {
			uint64_t a = s->spans[j].addr;

			if (a > hi + s->gsz || a + s->gsz - lo > GRANGE_MAX || a + s->gsz < a)
				break;
			hi = GP_MAX(hi, a + s->gsz);
		}
		if (hi < lo || used + (hi - lo) > (size_t)GRANGE_SLACK * s->gsz * s->nscratch) {
			/* wraps, or no room left (cannot happen: see GRANGE_SLACK): g by g */
			hi = lo + s->gsz;
			j = i + 1;
		}
		s->iov[k++] = (struct mem_iov){ lo, s->bounce + used, (size_t)(hi - lo), 0 };
		used += (size_t)(hi - lo);
	}
	nr = k - first;
	if (with_sg)
		s->iov[k++] = (struct mem_iov){ gr->mheap + gr->off.mheap_sweepgen, &sg2, 4, 0 };
	mem_readv(s->mem, s->iov, k);
	st->readvs++;
	st->bytes += nsel * s->gsz;
	if (sg_ok)
		*sg_ok = with_sg && s->iov[0].rc == 0 && s->iov[k - 1].rc == 0 && *sg == sg2;
	/* Each g from its piece (the pieces hold the sorted g's in order). */
	for (i = 0, j = first; i < nsel; i++) {
		const struct gspan *g = &s->spans[i];

		while (j < first + nr && g->addr >= s->iov[j].addr + s->iov[j].len)
			j++;
		if (j < first + nr && s->iov[j].rc == 0 && g->addr >= s->iov[j].addr &&
		    g->addr + s->gsz <= s->iov[j].addr + s->iov[j].len) {
			memcpy(buf + (size_t)g->i * s->gsz,
			       (uint8_t *)s->iov[j].buf + (g->addr - s->iov[j].addr), s->gsz);
			s->grc[g->i] = 0;
		} else {
			s->grc[g->i] = 1; /* read again, alone */
			again++;
		}
	}
	if (!again)
		return;
	if (sg_ok)
		*sg_ok = false; /* read after the second sweep generation */
	for (i = 0, k = 0; i < nsel; i++)
		if (s->grc[sel[i]] == 1)
			s->iov[k++] = (struct mem_iov){ gptrs[sel[i]], buf + (size_t)sel[i] * s->gsz,
							s->gsz, 0 };
	mem_readv(s->mem, s->iov, k);
	st->readvs++;
	for (i = 0, k = 0; i < nsel; i++)
		if (s->grc[sel[i]] == 1)
			s->grc[sel[i]] = s->iov[k++].rc;
}

/* Whether a g's fields can be a live goroutine's. */
static bool g_sane(const struct gsnap_fields *f)
{
	if (f->status > G_STATE_MAX)
		return false;
	if (f->status == G_DEAD || f->status == GOSNAP_IDLE)
		return true;
	return f->lo < f->hi && f->hi - f->lo <= (1ULL << 30) && f->goid > 0;
}

/* The previous snapshot's result for the goroutine at place pos of the list, g at addr,
 * when it has not run since (stack_key), or NULL. */
static const struct gosnap_g *unchanged(const struct gosnap *s, size_t pos, uint64_t addr,
					const struct gsnap_key *k)
{
	uint32_t p;

	if (!gort_offsets(s->gort)->g_trackingseq || pos >= s->nprev_at || !(p = s->prev_at[pos]))
		return NULL;
	p--;
	if (s->pout[p].addr != addr || (s->pout[p].flags & GOSNAP_NO_STACK) ||
	    memcmp(&s->pkey[p], k, sizeof(*k)) != 0)
		return NULL;
	return &s->pout[p];
}

/* Keeps result j at place keep (keep <= j). */
static void keep_out(struct gosnap *s, size_t keep, size_t j)
{
	s->out[keep] = s->out[j];
	s->key[keep] = s->key[j];
	s->outpos[keep] = s->outpos[j];
}

/* One round of reads (chunk): the goroutines gptrs[0..n), at places base.. of the
 * runtime's list, their fields at the first read (f1), which are wanted (alive and sane),
 * the previous snapshot's result of those that have not run since (prev), and where each
 * one's stack was read to (stk_off, into s->stk, by the first nst pieces of s->iov). */
struct round {
	const uint64_t *gptrs;
	size_t base, n, nst;
	struct gsnap_fields f1[CHUNK];
	const struct gosnap_g *prev[CHUNK];
	bool want[CHUNK], entry0[CHUNK];
	size_t stk_off[CHUNK];
};

/* The fields of every g at the first read, and which are wanted. */
static void round_select(struct gosnap *s, struct round *r, struct gosnap_stats *st)
{
	const struct gort_offsets *o = gort_offsets(s->gort);

	for (size_t i = 0; i < r->n; i++) {
		r->want[i] = false;
		if (s->grc[i]) {
			if (ptr_ok(r->gptrs[i]))
				st->bad++;
			continue;
		}
		fields(o, s->g1 + i * s->gsz, &r->f1[i]);
		if (!g_sane(&r->f1[i])) {
			st->bad++;
			continue;
		}
		if (r->f1[i].status == G_DEAD || r->f1[i].status == GOSNAP_IDLE ||
		    r->f1[i].status == 11 /* _Gdeadextra */)
			continue;
		r->want[i] = true;
	}
}

/* The used part of each parked stack that has changed since the last snapshot, with one
 * vectored read. */
static void round_stacks(struct gosnap *s, struct round *r, struct gosnap_stats *st)
{
	size_t i, used = 0;

	r->nst = 0;
	for (i = 0; i < r->n; i++) {
		const struct gsnap_fields *f = &r->f1[i];
		struct gsnap_key k;
		uint64_t len;

		r->prev[i] = NULL;
		if (!r->want[i] || f->status == GOSNAP_RUNNING)
			continue;
		stack_key(f, &k);
		r->prev[i] = unchanged(s, r->base + i, r->gptrs[i], &k);
		if (r->prev[i])
			continue; /* its stack as the last snapshot read it */
		if (f->sp < f->lo || f->sp >= f->hi) {
			/* copystack, or torn: the check decides */
			continue;
		}
		len = GP_MIN(f->hi - f->sp, (uint64_t)STACK_READ);
		/* Copies end to end, not 4 KB apart: at a 4 KB stride every copy's first
		 * words fall in the same few cache sets and the walk misses on each. */
		r->stk_off[i] = used;
		s->iov[r->nst++] = (struct mem_iov){ f->sp, s->stk + used, (size_t)len, 0 };
		used += (size_t)(len + 63) & ~(size_t)63;
	}
	if (r->nst) {
		mem_readv(s->mem, s->iov, r->nst);
		st->readvs++;
		for (i = 0; i < r->nst; i++)
			st->bytes += s->iov[i].len;
	}
}

/* The label sets not in the memo, each decoded as a goroutine of the round that has it
 * finds it, but together: one vectored read per pointer level for all of them instead of
 * a read per level per set (a first snapshot after a GC cycle decodes every set again).
 * The memo then answers every goroutine. Between the two reads of the g's, so the check
 * still drops a goroutine whose labels changed. */
static void round_labels(struct gosnap *s, const struct round *r, bool sg_ok, uint32_t sg)
{
	size_t i, nmiss = 0;

	for (i = 0; i < r->n; i++) {
		int created;

		if (!r->want[i] || !r->f1[i].labels)
			continue;
		hashmap_put(&s->lmemo, r->f1[i].labels, &created);
		if (created)
			s->lview[nmiss++] = (struct gview){ .addr = r->gptrs[i],
							    .labels = r->f1[i].labels,
							    .goid = r->f1[i].goid,
							    .status = r->f1[i].status };
	}
	gort_labels_batch(s->gort, s->mem, s->lview, nmiss, sg_ok, sg_ok, sg, s->lset, s->lflags,
			  s->lrc);
	for (i = 0; i < nmiss; i++) {
		const struct gort_labels *l = s->lset[i];

		if (s->lrc[i] || (s->lflags[i] & (GORT_LABELS_BAD | GORT_LABELS_DROPPED)))
			l = NULL;
		/* pointer | 1 when decoded; bare NULL (0) stands for undecodable */
		*hashmap_get(&s->lmemo, s->lview[i].labels) =
			(uint64_t)(uintptr_t)l | (s->lflags[i] ? 0 : 1);
	}
}

/* A new result for goroutine i of the round, from its fields at the first read. */
static struct gosnap_g *round_result(struct gosnap *s, const struct round *r, size_t i,
				     int64_t now)
{
	const struct gsnap_fields *f = &r->f1[i];
	struct gosnap_g *g;

	xgrow((void **)&s->out, &s->outcap, s->nout + 1, sizeof(*s->out));
	xgrow((void **)&s->key, &s->keycap, s->nout + 1, sizeof(*s->key));
	xgrow((void **)&s->outpos, &s->poscap, s->nout + 1, sizeof(*s->outpos));
	stack_key(f, &s->key[s->nout]);
	s->outpos[s->nout] = (uint32_t)(r->base + i);
	g = &s->out[s->nout++];
	memset(g, 0, sizeof(*g));
	g->addr = r->gptrs[i];
	g->goid = f->goid;
	g->state = f->status;
	g->gopc = f->gopc;
	g->startpc = f->startpc;
	g->parent_goid = f->parent;
	if (creator_hidden(s, g->goid, g->gopc))
		g->flags |= GOSNAP_CREATOR_HIDDEN;
	if (f->locked)
		g->flags |= GOSNAP_LOCKED;
	g->wait_ns = f->waitsince > 0 && f->waitsince <= (uint64_t)now
			     ? now - (int64_t)f->waitsince
			     : -1;
	if (g->state == GOSNAP_WAITING && f->reason && f->reason < s->nwait && s->wait[f->reason][0])
		g->wait = s->wait[f->reason];
	g->frame0 = (uint32_t)s->npcs;
	if (f->labels) {
		uint64_t memo = *hashmap_get(&s->lmemo, f->labels);

		g->labels = (const struct gort_labels *)(uintptr_t)(memo & ~1ULL);
		if (!(memo & 1))
			g->flags |= GOSNAP_LABELS_BAD;
	}
	return g;
}

/* g's stack as the previous snapshot read it (prev): it has not run since. */
static void reuse_stack(struct gosnap *s, struct gosnap_g *g, const struct gosnap_g *prev)
{
	xgrow((void **)&s->pcs, &s->pcscap, s->npcs + prev->nframes, sizeof(*s->pcs));
	xgrow((void **)&s->pcf, &s->pcfcap, s->npcs + prev->nframes, sizeof(*s->pcf));
	memcpy(s->pcs + s->npcs, s->ppcs + prev->frame0, prev->nframes * sizeof(*s->pcs));
	memcpy(s->pcf + s->npcs, s->ppcf + prev->frame0, prev->nframes * sizeof(*s->pcf));
	s->npcs += prev->nframes;
	g->nframes = prev->nframes;
	g->flags |= prev->flags & (GOSNAP_STACK_CUT | GOSNAP_REPAIRED);
	if (g->labels == prev->labels && g->wait == prev->wait && g->flags == prev->flags)
		g->prev = (uint32_t)(prev - s->pout) + 1;
}

/* Walks goroutine i's stack from the copy read (the kth piece of s->iov onwards holds
 * it, *k moves on), and notes the facts of each return address for the check. */
static void round_walk(struct gosnap *s, struct round *r, size_t i, struct gosnap_g *g, size_t *k)
{
	const struct gort_offsets *o = gort_offsets(s->gort);
	const struct gsnap_fields *f = &r->f1[i];
	struct walk w;
	uint32_t ri0;

	memset(&w, 0, sizeof(w));
	w.s = s;
	w.lo = f->lo;
	w.hi = f->hi;
	if (f->sp >= f->lo && f->sp < f->hi) {
		w.buf = s->stk + r->stk_off[i];
		w.buf_lo = f->sp;
		/* the stack read's result, found by its buffer */
		w.buf_len = 0;
		for (; *k < r->nst; (*k)++)
			if (s->iov[*k].buf == s->stk + r->stk_off[i]) {
				w.buf_len = s->iov[*k].rc ? 0 : s->iov[*k].len;
				break;
			}
	}
	if (!f->pc)
		g->flags |= GOSNAP_STACK_CUT;
	else if (g->state == GOSNAP_SYSCALL && !o->g_syscallbp)
		walk_exact(&w, g, f->pc, f->sp);
	else
		walk_fp(&w, g, f->pc, f->sp, f->bp);
	r->entry0[i] = false;
	if (!s->dis || !g->nframes)
		return;
	/* The facts of each return address, for the check (linked). A goroutine not run yet
	 * is suspended at its start function's entry, which is no return address: it is
	 * kept as entry + 1, as Go's tracebackPCs does for a pc with no call before it, so
	 * that pc - 1 names it. */
	ri0 = ra_info(s, s->pcs[g->frame0]);
	if (s->ra[ri0].fl & RA_ENTRY) {
		s->pcs[g->frame0]++;
		r->entry0[i] = true;
		if (g->nframes > 1)
			s->pcf[g->frame0 + 1] =
				in_panic(s, s->pcs[g->frame0] - 1) ? GOSNAP_PC_CALLEE_PANICS : 0;
	}
	for (uint32_t fi = 0; fi < g->nframes; fi++)
		ra_info(s, s->pcs[g->frame0 + fi]);
}

/* The check: the g's read again, and a goroutine that changed meanwhile dropped from the
 * results first.. (one per wanted goroutine of the round, in order). Those running at the
 * first read are kept as they were then, without a stack (see same_running), and those
 * whose stack was reused were not read again. */
static void round_check(struct gosnap *s, struct round *r, size_t first, struct gosnap_stats *st)
{
	const struct gort_offsets *o = gort_offsets(s->gort);
	uint32_t sel[CHUNK];
	size_t i, nsel = 0, keep = first, j = first;

	for (i = 0; i < r->n; i++)
		if (r->want[i] && r->f1[i].status != GOSNAP_RUNNING && !r->prev[i])
			sel[nsel++] = (uint32_t)i;
	read_gs(s, r->gptrs, sel, nsel, s->g2, st, NULL, NULL);
	if (s->dis)
		read_calls(s, st);
	for (i = 0; i < r->n; i++) {
		struct gsnap_fields f2;
		struct gosnap_g *g;

		if (!r->want[i])
			continue;
		g = &s->out[j++];
		/* Not read again: its stack was not read either. */
		if (r->prev[i]) {
			st->cut += !!(g->flags & GOSNAP_STACK_CUT);
			st->repaired += !!(g->flags & GOSNAP_REPAIRED);
			st->reused++;
			keep_out(s, keep++, j - 1);
			continue;
		}
		/* A goroutine running at the first read is kept as it was then, without a
		 * stack: none of it was read, so none can be torn, and its sched is stale by
		 * nature (systemstack, morestack and preemption write it, and a stack copy
		 * moves its bounds, while it runs: runtime/asm_amd64.s, runtime/stack.go).
		 * Dropping it when it parked or switched stacks meanwhile would drop running
		 * goroutines more often the longer a snapshot takes, and bias a wall profile
		 * against the code that runs. */
		if (r->f1[i].status == GOSNAP_RUNNING) {
			keep_out(s, keep++, j - 1);
			continue;
		}
		if (s->grc[i] == 0) {
			fields(o, s->g2 + i * s->gsz, &f2);
			if (same_moment(&r->f1[i], &f2)) {
				if (!linked(s, g, r->entry0[i])) {
					st->torn++;
					st->unlinked++;
					continue;
				}
				/* counted when kept: the stats are the result's */
				st->cut += !!(g->flags & GOSNAP_STACK_CUT);
				st->repaired += !!(g->flags & GOSNAP_REPAIRED);
				keep_out(s, keep++, j - 1);
				continue;
			}
			if (ran_since(&r->f1[i], &f2)) {
				g->state = GOSNAP_RUNNING;
				g->flags = (g->flags & (GOSNAP_LABELS_BAD | GOSNAP_CREATOR_HIDDEN |
							GOSNAP_LOCKED)) |
					   GOSNAP_NO_STACK;
				g->nframes = 0;
				g->wait = NULL;
				g->wait_ns = -1;
				keep_out(s, keep++, j - 1);
				continue;
			}
		}
		st->torn++;
	}
	/* The frames of a dropped goroutine stay in pcs, unreferenced. */
	s->nout = keep;
}

/* Reads the n goroutines gptrs[0..n), at places base.. of the runtime's list: the g's,
 * the stacks that changed, the label sets not known yet; walks and labels each; then reads
 * the g's again and keeps those that did not change meanwhile. */
static void chunk(struct gosnap *s, const uint64_t *gptrs, size_t base, size_t n, int64_t now,
		  struct gosnap_stats *st)
{
	struct round *r;
	uint32_t sg = 0, sel[CHUNK];
	size_t i, k = 0, first = s->nout;
	bool sg_ok;

	if (!s->round)
		s->round = xmalloc(sizeof(*s->round));
	r = s->round;
	r->gptrs = gptrs;
	r->base = base;
	r->n = n;
	for (i = 0; i < n; i++)
		sel[i] = (uint32_t)i;
	read_gs(s, gptrs, sel, n, s->g1, st, &sg, &sg_ok);
	if (!sg_ok || !s->lmemo_epoch || sg != s->lmemo_sg || s->lmemo.n > LMEMO_MAX) {
		/* A new generation, or no proof: the memo starts over (and lasts one
		 * chunk only without a proof). */
		hashmap_free(&s->lmemo);
		s->lmemo_epoch = sg_ok;
		s->lmemo_sg = sg;
	}
	round_select(s, r, st);
	round_stacks(s, r, st);
	round_labels(s, r, sg_ok, sg);
	for (i = 0; i < n; i++) {
		struct gosnap_g *g;

		if (!r->want[i])
			continue;
		g = round_result(s, r, i, now);
		if (g->state == GOSNAP_RUNNING)
			g->flags |= GOSNAP_NO_STACK;
		else if (r->prev[i])
			reuse_stack(s, g, r->prev[i]);
		else
			round_walk(s, r, i, g, &k);
	}
	round_check(s, r, first, st);
}

/* Makes this snapshot's results the previous ones (unchanged), for the n places of the
 * list it read. The result handed out stays where it is (now the previous one) until the
 * next snapshot, which reads it and writes into the older arrays. */
static void remember(struct gosnap *s, size_t n)
{
	size_t k;

#define SWAP(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)
	SWAP(s->out, s->pout);
	SWAP(s->outcap, s->poutcap);
	SWAP(s->pcs, s->ppcs);
	SWAP(s->pcscap, s->ppcscap);
	SWAP(s->pcf, s->ppcf);
	SWAP(s->pcfcap, s->ppcfcap);
	SWAP(s->key, s->pkey);
	SWAP(s->keycap, s->pkeycap);
#undef SWAP
	s->npout = s->nout;
	s->pnpcs = s->npcs;
	s->nout = s->npcs = 0;
	xgrow((void **)&s->prev_at, &s->prev_atcap, n, sizeof(*s->prev_at));
	memset(s->prev_at, 0, n * sizeof(*s->prev_at));
	s->nprev_at = n;
	for (k = 0; k < s->npout; k++)
		if (s->outpos[k] < n)
			s->prev_at[s->outpos[k]] = (uint32_t)k + 1;
}

int gosnap_take(struct gosnap *s, size_t max_g, struct gosnap_result *out)
{
	struct gosnap_stats st = { 0 };
	uint64_t len, arr, t0 = util_now_ns();
	int64_t now;
	size_t off, n;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!max_g || max_g > GOSNAP_MAX_G)
		max_g = GOSNAP_MAX_G;
	if (!s->wait_read)
		read_wait_names(s);
	if (s->nra > RA_MAX) {
		/* a program has far fewer call sites: these are garbage's */
		hashmap_free(&s->ra_idx);
		s->nra = 0;
	}
	/* Length before pointer (runtime/proc.go atomicAllG): one vectored read, whose
	 * pieces are read in order. */
	s->iov[0] = (struct mem_iov){ s->allglen, &len, 8, 0 };
	s->iov[1] = (struct mem_iov){ s->allgptr, &arr, 8, 0 };
	mem_readv(s->mem, s->iov, 2);
	rc = s->iov[0].rc ? s->iov[0].rc : s->iov[1].rc;
	if (rc)
		return rc == -EFAULT ? -ESRCH : rc;
	if (len == 0)
		return -EAGAIN;
	if (len > GORT_ALLG_MAX || !ptr_ok(arr))
		return -EINVAL;
	n = (size_t)len;
	if (n > max_g) {
		n = max_g;
		st.truncated = 1;
	}
	/* The list only grows, and its entries never change (runtime/proc.go allgadd: "allgs
	 * contains all Gs ever created ... never shrinks"; a new array is a copy with more
	 * room): the entries known from the last snapshot are not read again. */
	if (n < s->ngptrs)
		s->ngptrs = 0; /* a list that shrank is no runtime's: read it all */
	if (n > s->ngptrs) {
		xgrow((void **)&s->gptrs, &s->gptrs_cap, n, sizeof(*s->gptrs));
		rc = mem_read(s->mem, arr + 8 * s->ngptrs, s->gptrs + s->ngptrs, (n - s->ngptrs) * 8);
		st.readvs++;
		st.bytes += (n - s->ngptrs) * 8;
		if (rc) {
			s->ngptrs = 0;
			return rc == -EFAULT ? -EINVAL : rc;
		}
		s->ngptrs = n;
	}
	st.listed = n;
	if (GP_MIN(n, (size_t)CHUNK) > s->nscratch) {
		s->nscratch = GP_MIN(n, (size_t)CHUNK);
		s->g1 = xrealloc(s->g1, s->nscratch * s->gsz);
		s->bounce = xrealloc(s->bounce, (size_t)GRANGE_SLACK * s->nscratch * s->gsz);
		s->g2 = xrealloc(s->g2, s->nscratch * s->gsz);
		s->stk = xrealloc(s->stk, s->nscratch * STACK_READ);
		s->lview = xrealloc(s->lview, s->nscratch * sizeof(*s->lview));
		s->lset = xrealloc(s->lset, s->nscratch * sizeof(*s->lset));
		s->lflags = xrealloc(s->lflags, s->nscratch * sizeof(*s->lflags));
		s->lrc = xrealloc(s->lrc, s->nscratch * sizeof(*s->lrc));
	}
	s->nout = 0;
	s->npcs = 0;
	now = now_mono();
	for (off = 0; off < n; off += CHUNK)
		chunk(s, s->gptrs + off, off, GP_MIN((size_t)CHUNK, n - off), now, &st);
	st.live = s->nout;
	st.ns = util_now_ns() - t0;
	out->g = s->out;
	out->n = s->nout;
	out->pcs = s->pcs;
	out->pcf = s->pcf;
	out->st = st;
	remember(s, n);
	return 0;
}

const char *gosnap_state_text(const struct gosnap_g *g)
{
	return g->wait ? g->wait : gosnap_state_name(g->state);
}

static uint64_t group_hash(const struct gosnap_result *r, const struct gosnap_g *g, int by_labels)
{
	uint64_t h = util_mix64(g->state + 1);
	const char *st = gosnap_state_text(g);
	uint32_t i;

	for (; *st; st++)
		h = util_mix64(h ^ (unsigned char)*st);
	for (i = 0; i < g->nframes; i++)
		h = util_mix64(h ^ r->pcs[g->frame0 + i]);
	if (by_labels)
		h = util_mix64(h ^ (uint64_t)(uintptr_t)g->labels);
	return h ? h : 1;
}

static bool same_group(const struct gosnap_result *r, const struct gosnap_g *a,
		       const struct gosnap_g *b, int by_labels)
{
	return a->nframes == b->nframes && strcmp(gosnap_state_text(a), gosnap_state_text(b)) == 0 &&
	       (!by_labels || a->labels == b->labels) &&
	       memcmp(r->pcs + a->frame0, r->pcs + b->frame0, a->nframes * sizeof(uint64_t)) == 0;
}

static int cmp_groups(const void *x, const void *y)
{
	const struct gosnap_group *a = x, *b = y;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return a->first < b->first ? -1 : a->first > b->first;
}

size_t gosnap_group(const struct gosnap_result *r, int by_labels, struct gosnap_group **out)
{
	struct hashmap idx = { 0 };
	struct gosnap_group *gs = NULL;
	size_t ngs = 0, cap = 0, i;

	for (i = 0; i < r->n; i++) {
		const struct gosnap_g *g = &r->g[i];
		uint64_t h = group_hash(r, g, by_labels), *slot;
		int created;

		/* Equal hashes of different groups probe on at h + 1, ... */
		for (;;) {
			slot = hashmap_put(&idx, h, &created);
			if (created || same_group(r, &r->g[gs[*slot - 1].first], g, by_labels))
				break;
			h = h + 1 ? h + 1 : 1;
		}
		if (created) {
			xgrow((void **)&gs, &cap, ngs + 1, sizeof(*gs));
			gs[ngs] = (struct gosnap_group){ i, 0, -1 };
			*slot = ++ngs;
		}
		gs[*slot - 1].count++;
		gs[*slot - 1].max_wait = GP_MAX(gs[*slot - 1].max_wait, g->wait_ns);
	}
	hashmap_free(&idx);
	if (ngs)
		qsort(gs, ngs, sizeof(*gs), cmp_groups);
	*out = gs;
	return ngs;
}

int gosnap_take_whole(struct gosnap *s, size_t max_g, struct gosnap_result *out, int tries)
{
	int rc, k;

	for (k = 1;; k++) {
		rc = gosnap_take(s, max_g, out);
		if (rc || !out->st.torn || k >= tries)
			return rc;
	}
}
