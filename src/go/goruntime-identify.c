/* goruntime-identify.c: the goroutine a sampled thread was running. The g register
 * (R14 on amd64) at the sample names it when it can be trusted; else the thread's m
 * does, found by its tid in a cache filled from m reads and from runtime.allm. */
#include "config.h"
#include "goruntime-int.h"

#include <errno.h>
#include <string.h>

#define ALLM_MAX 8192                  /* m's followed on runtime.allm's list */
#define ALLM_INTERVAL_NS 50000000ULL   /* runtime.allm walked at most this often */

/* What the reader uses of an m. */
struct mview {
	uint64_t addr, g0, procid, gsignal, curg;
};

/* The g at addr from the current sample's snapshot, when it holds that g. */
static bool snap_g(const struct gort *gr, uint64_t addr, struct gview *v)
{
	const struct gobpf_rec *r = gr->snap;
	const __u64 *f;

	if (!r)
		return false;
	if ((r->flags & GOBPF_REC_G) && addr == r->greg)
		f = r->g;
	else if ((r->flags & GOBPF_REC_CURG) && addr == r->m[GOBPF_M_CURG])
		f = r->curg;
	else
		return false;
	v->addr = addr;
	v->stack_lo = f[GOBPF_G_STACK_LO];
	v->stack_hi = f[GOBPF_G_STACK_HI];
	v->m = f[GOBPF_G_M];
	v->goid = f[GOBPF_G_GOID];
	v->labels = f[GOBPF_G_LABELS];
	v->status = (uint32_t)f[GOBPF_G_STATUS];
	v->sched_sp = f[GOBPF_G_SCHED_SP];
	v->startpc = gr->off.g_startpc ? f[GOBPF_G_STARTPC] : 0;
	v->early = false; /* older than any read of this batch: no sweep-generation proof */
	v->snap = true;
	return true;
}

static int read_g(struct gort *gr, const struct gp_mem *mem, uint64_t addr, struct gview *v)
{
	const struct gort_offsets *o = &gr->off;
	int rc;

	if (!ptr_ok(addr))
		return -EFAULT;
	if (snap_g(gr, addr, v))
		return 0;
	v->snap = false;
	gr->pf_last_early = false;
	rc = mem_read(mem, addr, gr->gbuf, gr->gsz);
	if (rc)
		return rc;
	v->early = gr->pf_last_early;
	v->addr = addr;
	v->stack_lo = ld64(gr->gbuf, o->g_stack_lo);
	v->stack_hi = ld64(gr->gbuf, o->g_stack_hi);
	v->m = ld64(gr->gbuf, o->g_m);
	v->goid = ld64(gr->gbuf, o->g_goid);
	v->labels = ld64(gr->gbuf, o->g_labels);
	v->status = ld32(gr->gbuf, o->g_atomicstatus);
	v->sched_sp = o->g_sched_sp ? ld64(gr->gbuf, o->g_sched_sp) : 0;
	v->startpc = o->g_startpc ? ld64(gr->gbuf, o->g_startpc) : 0;
	return 0;
}

static int read_m(struct gort *gr, const struct gp_mem *mem, uint64_t addr, struct mview *v)
{
	const struct gort_offsets *o = &gr->off;
	const struct gobpf_rec *r = gr->snap;
	int rc;

	if (!ptr_ok(addr))
		return -EFAULT;
	if (r && (r->flags & GOBPF_REC_M) && addr == r->maddr) {
		v->addr = addr;
		v->g0 = r->m[GOBPF_M_G0];
		v->procid = r->m[GOBPF_M_PROCID];
		v->gsignal = r->m[GOBPF_M_GSIGNAL];
		v->curg = r->m[GOBPF_M_CURG];
		return 0;
	}
	rc = mem_read(mem, addr, gr->mbuf, gr->msz);
	if (rc)
		return rc;
	v->addr = addr;
	v->g0 = ld64(gr->mbuf, o->m_g0);
	v->procid = ld64(gr->mbuf, o->m_procid);
	v->gsignal = ld64(gr->mbuf, o->m_gsignal);
	v->curg = ld64(gr->mbuf, o->m_curg);
	return 0;
}

/* The thread's slot, or (not known) the first slot of its set: callers check s->tid.
 * TID_WAYS slots per set, so threads whose tids hash alike all stay known: direct-mapped,
 * two of a process's threads that fall in one slot evict each other's m at every
 * sample, and even a dozen threads often have such a pair. */
struct tid_slot *gort_tid_slot(struct gort *g, uint32_t tid)
{
	struct tid_slot *set = &g->tids[util_mix64(tid) & (TID_SLOTS - TID_WAYS)];
	int w;

	for (w = 0; w < TID_WAYS; w++)
		if (set[w].tid == tid)
			return &set[w];
	return set;
}

static void tid_remember(struct gort *g, uint32_t tid, uint64_t m, uint64_t g0, uint64_t gsignal)
{
	struct tid_slot *s = gort_tid_slot(g, tid);

	if (s->tid != tid) {
		/* New: an empty way of the set, else one in turn (a full set means
		 * hundreds of threads; the evicted one is found through allm again). */
		int w;

		for (w = 0; w < TID_WAYS && s[w].tid; w++)
			;
		s += w < TID_WAYS ? w : (int)(g->tid_evict++ % TID_WAYS);
	}
	if (s->tid == tid && s->m == m && (!g0 || (s->g0 == g0 && s->gsignal == gsignal))) {
		if (!s->g0) { /* allm told only the m: keep what an m read adds */
			s->g0 = g0;
			s->gsignal = gsignal;
		}
		return;
	}
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->m = m;
	s->g0 = g0;
	s->gsignal = gsignal;
}

/* Statuses of a goroutine that exists: its g cannot have been reused (runtime/proc.go
 * gfput takes only _Gdead goroutines). runtime/runtime2.go: _Grunnable 1, _Grunning 2,
 * _Gsyscall 3, _Gwaiting 4, _Gpreempted 9. */
static bool status_alive(uint32_t st)
{
	st &= ~(uint32_t)G_SCAN;
	return (st >= 1 && st <= 4) || st == 9;
}

static bool status_live(uint32_t st)
{
	st &= ~(uint32_t)G_SCAN;
	return st == G_RUNNING || st == G_SYSCALL;
}

/* Statuses of the goroutine an m serves (m.curg, whose g.m is that m) while the m runs on
 * its system stack for it: besides running and in a syscall (cgo calls: entersyscall),
 * _Gcopystack 8 while newstack copies its stack, _Gwaiting 4 in a GC assist or a stack
 * scan, _Gpreempted 9 on the way to the scheduler (go1.19 to go1.27 runtime/stack.go
 * newstack, runtime/mgcmark.go gcAssistAlloc, runtime/preempt.go). */
static bool status_served(uint32_t st)
{
	st &= ~(uint32_t)G_SCAN;
	return status_live(st) || st == 4 || st == 8 || st == 9;
}

/* A goroutine in a cgo call (or a syscall) on its m: cgocall enters the syscall state and
 * asmcgocall saves its registers in g.sched before running C on the m's g0 stack (go1.19 to
 * go1.27 runtime/cgocall.go, asm_amd64.s gosave_systemstack_switch). The C code's SP need
 * not be inside g0's bounds as the runtime records them: on a thread with an OS stack of
 * unknown size they are an estimate of 16 KiB below mstart's frame (runtime/proc.go
 * mstart0). */
static bool in_cgo_call(const struct gview *gv)
{
	return (gv->status & ~(uint32_t)G_SCAN) == G_SYSCALL && gv->sched_sp >= gv->stack_lo &&
	       gv->sched_sp < gv->stack_hi;
}

/* A goroutine that left the thread between the sample and the read is still the one
 * sampled when it is alive and its stack holds the sampled SP: a live g is not reused
 * (runtime/proc.go gfput takes only _Gdead ones) and a stack moved since (copystack) no
 * longer holds SP. The rest rejects memory that only looks like a g (a register
 * pointing into the stack makes stack words pass for bounds): g is heap memory, never
 * inside its own stack; stacks are powers of two from 2 KiB (runtime/stack.go
 * stackalloc); g0 and gsignal have goid 0. */
static bool left_thread(const struct gview *gv, uint64_t greg, uint64_t sp)
{
	uint64_t n = gv->stack_hi - gv->stack_lo;

	return gv->goid && gv->goid < (1ULL << 48) && status_alive(gv->status) &&
	       gv->stack_hi > gv->stack_lo && !(gv->stack_lo & 7) && n >= 2048 && n <= (1ULL << 30) &&
	       !(n & (n - 1)) && sp >= gv->stack_lo && sp < gv->stack_hi &&
	       !(greg >= gv->stack_lo && greg < gv->stack_hi);
}

/* Whether sp is on the stack of the thread's g0 (which 0) or gsignal (1), whose address
 * is sysg: 1 yes, 0 no (or unreadable), or a hard error. A register naming g0 or gsignal,
 * or a goroutine with SP off its own stack, is only believed with SP on that stack:
 * garbage in the register proves nothing. The bounds are read once per thread. */
static int on_sys_stack(struct gort *gr, const struct gp_mem *mem, uint32_t tid, int which,
			uint64_t sysg, uint64_t sp)
{
	struct tid_slot *s = gort_tid_slot(gr, tid);
	bool mine = s->tid == tid && (which ? s->gsignal : s->g0) == sysg;
	struct gview v;

	if (!sp)
		return 1; /* nothing to check against (a caller without SP) */
	if (!mine || !s->sys_hi[which]) {
		int rc = read_g(gr, mem, sysg, &v);


		if (rc)
			return soft_error(rc) ? 0 : rc;
		if (mine && v.stack_hi > v.stack_lo) {
			s->sys_lo[which] = v.stack_lo;
			s->sys_hi[which] = v.stack_hi;
		}
		return sp >= v.stack_lo && sp < v.stack_hi;
	}
	return sp >= s->sys_lo[which] && sp < s->sys_hi[which];
}

/* m's current goroutine into *cur. 0, -ENOENT (*flags may get GORT_NO_G), or a hard error. */
static int curg_of(struct gort *gr, const struct gp_mem *mem, const struct mview *m,
		   struct gview *cur, int *flags)
{
	int rc;

	if (!m->curg) {
		*flags |= GORT_NO_G;
		return -ENOENT;
	}
	rc = read_g(gr, mem, m->curg, cur);
	if (rc)
		return soft_error(rc) ? -ENOENT : rc;
	if (cur->m != m->addr || !status_served(cur->status))
		return -ENOENT;
	return 0;
}

/* The register path once greg's g (*gv) is read and is neither the thread's known
 * goroutine nor one that parked: the m it names decides. Returns as via_register. */
static int via_g_m(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
		   uint64_t sp, const struct gview *gv, struct gview *cur, int *flags)
{
	struct mview mv;
	int rc;

	rc = read_m(gr, mem, gv->m, &mv);
	if (rc)
		return soft_error(rc) ? 1 : rc;
	if (mv.procid != tid) {
		/* A real g of another thread: the goroutine moved on since the sample (the
		 * registers are older than this read). Falling back to this thread's current
		 * goroutine could name one that did not run then. */
		if (mv.procid && greg == mv.curg && status_live(gv->status) && left_thread(gv, greg, sp)) {
			/* It runs on that thread now, and ran on this one when sampled. */
			*cur = *gv;
			*flags |= GORT_LEFT;
			gr->st.left++;
			return 0;
		}
		if (mv.procid && (greg == mv.curg || greg == mv.g0 || greg == mv.gsignal))
			return -ENOENT;
		return 1;
	}
	/* m.procid == tid proves this m belongs to the thread (the m is fixed for the
	 * thread's life), whatever else the register turns out to be. */
	tid_remember(gr, tid, mv.addr, mv.g0, mv.gsignal);
	if (greg == mv.curg) {
		*cur = *gv;
		if (!status_live(gv->status))
			return -ENOENT;
		/* Off its stack, the goroutine is believed only on the m's g0 stack (vDSO
		 * calls, C code of cgo calls keeping R14, see below); elsewhere the register
		 * is stale or garbage that happens to name the thread's goroutine now. */
		if (sp && (sp < cur->stack_lo || sp >= cur->stack_hi)) {
			rc = on_sys_stack(gr, mem, tid, 0, mv.g0, sp);
			if (rc < 0)
				return rc;
			if (rc == 0 && !in_cgo_call(cur))
				return 1;
		}
	} else if (greg == mv.g0 || greg == mv.gsignal) {
		rc = on_sys_stack(gr, mem, tid, greg == mv.gsignal, greg, sp);
		if (rc < 0)
			return rc;
		if (!rc)
			return 1;
		*flags |= GORT_SYSTEM_STACK;
		gr->st.system_stack++;
		rc = curg_of(gr, mem, &mv, cur, flags);
		if (rc)
			return rc;
		return 0;
	} else {
		return 1;
	}
	/* On a user g, SP may legitimately be on g0's stack: vDSO calls run there without
	 * switching g (runtime/sys_linux_amd64.s nanotime1), C code of cgo calls may keep
	 * the old R14 (checked above). */
	if (sp && (sp < cur->stack_lo || sp >= cur->stack_hi))
		*flags |= GORT_OFF_STACK;
	return 0;
}

/* The register path. 0 found, -ENOENT no goroutine, 1 the register is not a g of this
 * thread (try the m cache), another negative: hard error. *fault set when greg pointed
 * at unreadable memory. */
static int via_register(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
			uint64_t sp, struct gview *cur, int *flags, bool *fault)
{
	const struct tid_slot *s = gort_tid_slot(gr, tid);
	struct gview gv;
	struct mview mv;
	int rc;

	if (!ptr_ok(greg))
		return 1;
	/* System stack of a known thread, one read: g0 and gsignal belong to one m for
	 * good, so the register needs no read of its own; the m gives the goroutine. */
	if (s->tid == tid && s->g0 && (greg == s->g0 || greg == s->gsignal)) {
		rc = read_m(gr, mem, s->m, &mv);
		if (rc && !soft_error(rc))
			return rc;
		if (rc == 0 && mv.procid == tid && mv.g0 == s->g0 && mv.gsignal == s->gsignal) {
			rc = on_sys_stack(gr, mem, tid, greg == s->gsignal, greg, sp);
			if (rc < 0)
				return rc;
			if (!rc)
				return 1; /* not on it: the register is garbage; try the m */
			*flags |= GORT_SYSTEM_STACK;
			gr->st.system_stack++;
			gr->st.fast_path++;
			return curg_of(gr, mem, &mv, cur, flags);
		}
	}
	rc = read_g(gr, mem, greg, &gv);
	if (rc) {
		if (!soft_error(rc))
			return rc;
		*fault = true;
		return 1;
	}
	/* Fast path, one read: the thread's m is known, and g says it runs on that m with
	 * SP inside its stack. A stack is run by one thread at a time, and g.m is set and
	 * cleared together with m.curg (runtime/proc.go execute, dropg), so g is the
	 * thread's goroutine. A stale register fails the test (g.m or the stack differ);
	 * for an m lent to another thread (cgo extra m) the stack differs. */
	if (s->tid == tid && s->m && s->g0 && gv.m == s->m && greg != s->g0 &&
	    greg != s->gsignal && sp >= gv.stack_lo && sp < gv.stack_hi && status_live(gv.status)) {
		*cur = gv;
		gr->st.fast_path++;
		return 0;
	}
	/* The goroutine parked between the sample and this read (g.m is nil): still the
	 * goroutine that was sampled if it is alive and its stack holds the sampled SP
	 * (see left_thread). */
	if (gv.m == 0 && left_thread(&gv, greg, sp)) {
		uint32_t st = gv.status & ~(uint32_t)G_SCAN;

		if (st == 1 || st == 4 || st == 9) {
			*cur = gv;
			*flags |= GORT_LEFT;
			gr->st.left++;
			return 0;
		}
	}
	return via_g_m(gr, mem, tid, greg, sp, &gv, cur, flags);
}

/* Rebuilds tid -> m from runtime.allm (linked by m.alllink). */
static void walk_allm(struct gort *gr, const struct gp_mem *mem)
{
	uint64_t m, now = util_now_ns();
	int i;

	if (!gr->allm || !gr->off.m_alllink)
		return;
	if (gr->last_allm_walk && now - gr->last_allm_walk < ALLM_INTERVAL_NS)
		return;
	gr->last_allm_walk = now;
	gr->st.allm_walks++;
	if (mem_read_u64(mem, gr->allm, &m))
		return;
	for (i = 0; i < ALLM_MAX && ptr_ok(m); i++) {
		uint64_t procid, next;

		if (mem_read_u64(mem, m + gr->off.m_procid, &procid) ||
		    mem_read_u64(mem, m + gr->off.m_alllink, &next))
			return;
		if (procid && procid < (1ULL << 32))
			tid_remember(gr, (uint32_t)procid, m, 0, 0);
		m = next;
	}
}

/* The m cache path: 0, -ENOENT, 1 (thread unknown), or a hard error. */
static int via_m(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t sp,
		 struct gview *cur, int *flags)
{
	struct tid_slot *s = gort_tid_slot(gr, tid);
	struct mview mv;
	int rc;

	if (s->tid != tid || !s->m)
		return 1;
	rc = read_m(gr, mem, s->m, &mv);
	if (rc && !soft_error(rc))
		return rc;
	if (rc || mv.procid != tid) {
		/* The thread exited and its tid was reused, or an extra m moved on. */
		memset(s, 0, sizeof(*s));
		return 1;
	}
	tid_remember(gr, tid, mv.addr, mv.g0, mv.gsignal); /* m.procid proved it */
	*flags |= GORT_VIA_M;
	rc = curg_of(gr, mem, &mv, cur, flags);
	if (rc || !sp || (sp >= cur->stack_lo && sp < cur->stack_hi))
		return rc;
	/* The register told nothing, so SP must: on curg's stack (assembly that uses R14
	 * as scratch), or on the m's system stacks (C code of a cgo call runs on g0's,
	 * runtime/asm_amd64.s asmcgocall; signal handlers on gsignal's). Anything else may
	 * be a goroutine that ran at sample time and is gone now: no answer. */
	{
		int i;

		for (i = 0; i < 2; i++) {
			rc = on_sys_stack(gr, mem, tid, i, i ? mv.gsignal : mv.g0, sp);
			if (rc < 0)
				return rc;
			if (rc) {
				*flags |= GORT_SYSTEM_STACK;
				gr->st.system_stack++;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* Finds the goroutine of one sample into *cur: 0 or a negative errno, *flags set. */
int gort_identify(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
		  uint64_t sp, struct gview *cur, int *flags)
{
	bool fault = false;
	int rc;

	gr->st.reads++;
	*flags = 0;
	rc = via_register(gr, mem, tid, greg, sp, cur, flags, &fault);
	if (rc == 0) {
		gr->st.via_register++;
	} else if (rc == 1) {
		*flags = 0;
		rc = via_m(gr, mem, tid, sp, cur, flags);
		if (rc == 0) {
			gr->st.via_m_cache++;
		} else if (rc == 1 && gr->allm) {
			walk_allm(gr, mem);
			rc = via_m(gr, mem, tid, sp, cur, flags);
			if (rc == 0)
				gr->st.via_allm++;
		}
		if (rc == 1)
			rc = fault ? -EFAULT : -ENOENT;
	}
	if (rc == -EFAULT)
		gr->st.faults++;
	else if (rc)
		gr->st.not_found++;
	return rc;
}
