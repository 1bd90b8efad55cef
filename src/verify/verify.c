/* verify.c: the verifier: after each stop (capture.c), compare the kernel's frame-pointer
 * chain and gotop-perf's repair of it with a full libunwind unwind of the same state
 * (unwind.c), per leaf function; the pacing, the verifying thread and the report. */
#include "config.h"

#include "gotop/verify.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gotop/arch.h"
#include "gotop/goread.h"
#include "gotop/goruntime.h"
#include "gotop/perfrec.h"
#include "gotop/procinfo.h"
#include "gotop/repair.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"

/* The kernel's default kernel.perf_event_max_stack (linux include/uapi/linux/perf_event.h
 * PERF_MAX_STACK_DEPTH). */
#define KERNEL_MAX_STACK 127
#define MAX_FRAMES 256
#define STOP_HIST_US 10000 /* stop-time histogram: 1 us buckets up to 10 ms, then one */
#define MAX_SHAPES 6
#define MCACHE 64 /* threads whose m is remembered (a thread keeps its m for its life) */

static uint64_t now_ns(void)
{
	return util_now_ns();
}

/* --- classification --- */

const char *verify_class_name(enum verify_class c)
{
	static const char *const names[VERIFY_NCLASS] = { "agrees", "caller missing", "duplicate frame",
							   "truncated", "different" };
	return c < VERIFY_NCLASS ? names[c] : "?";
}

static int same(const uint64_t *a, const uint64_t *b, size_t n)
{
	return memcmp(a, b, n * sizeof(*a)) == 0;
}

/* chain matches truth (both from some frame on): equal; or longer, where the truth
 * may go on (open); or shorter, where the chain was cut at the depth limit (cut). */
static int match(const uint64_t *c, size_t nc, const uint64_t *t, size_t nt, int open, int cut)
{
	if (nc >= nt)
		return same(c, t, nt) && (nc == nt || open);
	return cut && same(c, t, nc);
}

void verify_compare(const uint64_t *truth, size_t nt, int open, const uint64_t *chain, size_t nc,
		    size_t limit, struct verify_diff *d)
{
	size_t i = 0;
	int cut;

	memset(d, 0, sizeof(*d));
	/* Within the kernel's depth limit only. */
	if (nt > limit) {
		nt = limit;
		open = 1;
	}
	if (nc > limit)
		nc = limit;
	cut = nc == limit;
	if (match(chain, nc, truth, nt, open, cut))
		return; /* agrees */
	while (i < nt && i < nc && truth[i] == chain[i])
		i++;
	d->at = i;
	if (i == nc) {
		d->cls = VERIFY_TRUNCATED;
		return;
	}
	d->pc = chain[i];
	if (i == nt) {
		d->cls = VERIFY_DIFFERENT; /* frames past the outermost one */
		return;
	}
	if (match(chain + i, nc - i, truth + i + 1, nt - i - 1, open, cut)) {
		d->cls = VERIFY_MISSING;
		d->pc = truth[i];
		return;
	}
	if (match(chain + i + 1, nc - i - 1, truth + i, nt - i, open, cut)) {
		d->cls = VERIFY_DUPLICATE;
		return;
	}
	d->cls = VERIFY_DIFFERENT;
}

/* --- the verifier --- */

struct shape {
	char text[VERIFY_SHAPE_LEN];
	uint64_t n;
};

struct frow {
	struct verify_row r;
	struct shape raw[MAX_SHAPES], rep[MAX_SHAPES];
};

struct verifier {
	pid_t pid;
	struct verify_opts o;
	int stack_auto; /* o.sample_stack as record would choose: set from the main executable */
	struct symbolizer *sym;
	struct repair *rep;
	struct unwinder *uw;
	struct verify_capture cap;
	struct gort *gort;     /* the Go runtime's layout of the main executable, or NULL */
	struct symfile *go_file; /* the main executable gort was made for */
	struct { pid_t tid; uint64_t m; } mcache[MCACHE]; /* threads' m, found before */
	verify_result_fn result_fn;
	void *result_ctx;
	unsigned rnd;
	uint64_t start_ns, last_round_ns;

	pthread_mutex_t lock; /* guards everything below */
	struct frow *rows;
	size_t nrows, caprows;
	struct verify_report tot; /* rows unused here */
	uint32_t hist[STOP_HIST_US + 1];
	uint32_t ghist[STOP_HIST_US + 1], ohist[STOP_HIST_US + 1]; /* goroutine read, or not */

	pthread_t thread;
	int running;
	int quit; /* set by another thread: __atomic loads and stores only */
};

void verify_opts_default(struct verify_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->rate = 20;
	o->max_stopped = 0.01;
	o->stack_copy = 65536;
}

struct verifier *verifier_new(pid_t pid, const struct verify_opts *o)
{
	struct verifier *v = xcalloc(1, sizeof(*v));

	v->pid = pid;
	if (o)
		v->o = *o;
	else
		verify_opts_default(&v->o);
	if (v->o.rate <= 0)
		v->o.rate = 20;
	if (v->o.max_stopped <= 0)
		v->o.max_stopped = 0.01;
	v->sym = symbolizer_new(pid);
	/* Chosen at the first comparison (stack_bytes), not now: a command may not have
	 * exec'd yet. */
	v->stack_auto = !v->o.sample_stack;
	v->rep = repair_new(v->sym);
	v->uw = unwinder_new(pid, v->sym);
	if (!v->uw) {
		verifier_free(v);
		errno = ENOMEM;
		return NULL;
	}
	v->rnd = (unsigned)(now_ns() ^ (uint64_t)getpid());
	v->start_ns = now_ns();
	pthread_mutex_init(&v->lock, NULL);
	return v;
}

void verifier_free(struct verifier *v)
{
	if (!v)
		return;
	verifier_stop(v);
	unwinder_free(v->uw);
	gort_free(v->gort);
	free(v->cap.gr.buf);
	repair_free(v->rep);
	symbolizer_free(v->sym);
	free(v->cap.buf);
	free(v->rows);
	pthread_mutex_destroy(&v->lock);
	free(v);
}

void verifier_set_result_fn(struct verifier *v, verify_result_fn fn, void *ctx)
{
	v->result_fn = fn;
	v->result_ctx = ctx;
}

/* Display name of a pc (the innermost function), escaped. */
static void pc_name(struct verifier *v, uint64_t pc, int is_return, char *buf, size_t len)
{
	const struct sym_module *mod = NULL;
	struct sym_frame f[8];
	int n = symbolizer_lookup(v->sym, pc, is_return, &mod, f, GP_ARRAY_SIZE(f));

	if (n > 0 && f[0].func) {
		util_escape(buf, len, f[0].func, strlen(f[0].func), 1);
	} else if (mod && mod->path && mod->path[0]) {
		const char *base = strrchr(mod->path, '/');
		char tmp[256];

		snprintf(tmp, sizeof(tmp), "%s+0x%llx", base ? base + 1 : mod->path,
			 (unsigned long long)(pc - mod->start + mod->pgoff));
		util_escape(buf, len, tmp, strlen(tmp), 1);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)pc);
	}
}

void verifier_pc_name(struct verifier *v, uint64_t pc, int is_return, char *buf, size_t len)
{
	pc_name(v, pc, is_return, buf, len);
}

/* The stack bytes a sample carries, as gotop-perf record chooses them for the program the
 * target runs now (repair_stack_bytes), when the user did not give --stack-size. */
static void stack_bytes(struct verifier *v)
{
	struct symfile *main_file;

	if (!v->stack_auto || (v->o.sample_stack && !symbolizer_main_changed(v->sym)))
		return;
	main_file = symbolizer_main_file(v->sym);
	v->o.sample_stack = repair_stack_bytes(main_file ? symfile_go_version(main_file) : NULL);
}

/* How many frames of the truth a frame-pointer chain is compared with: up to the C
 * library's process or thread entry when the truth has one, else all. glibc calls main
 * from __libc_start_call_main (2.34 and newer; __libc_start_main before) and a thread's
 * function from start_thread; below them, _start, __libc_start_main_impl and clone3 keep
 * no frame pointer on most distributions (Debian's glibc), so no frame-pointer walk, perf's
 * included, reaches them. A chain that stops at the entry is complete; one that goes on (a
 * C library built with frame pointers) is compared as far as the truth goes (open). */
static size_t libc_entry_depth(struct verifier *v, const uint64_t *truth, size_t nt)
{
	static const char *const entries[] = { "__libc_start_call_main", "__libc_start_main",
					       "start_thread" };
	size_t i, k;
	int reloaded = 0;

	for (i = 1; i < nt; i++) {
		const struct sym_module *mod = NULL;
		struct sym_frame f[8];
		int n = symbolizer_lookup(v->sym, truth[i], 1, &mod, f, GP_ARRAY_SIZE(f));

		if (!mod && !reloaded) {
			/* libunwind found a frame there, so it is mapped: the maps were read
			 * before (a library loaded since, e.g. at a command's start). */
			symbolizer_invalidate_maps(v->sym);
			reloaded = 1;
			n = symbolizer_lookup(v->sym, truth[i], 1, &mod, f, GP_ARRAY_SIZE(f));
		}
		if (n <= 0 || !f[n - 1].func)
			continue;
		for (k = 0; k < GP_ARRAY_SIZE(entries); k++)
			if (!strcmp(f[n - 1].func, entries[k]))
				return i + 1;
	}
	return nt;
}

static void shape_text(struct verifier *v, const struct verify_diff *d, char *buf, size_t len)
{
	char name[128];

	switch (d->cls) {
	case VERIFY_MISSING:
		pc_name(v, d->pc, d->at > 0, name, sizeof(name));
		snprintf(buf, len, "caller missing: %s", name);
		break;
	case VERIFY_DUPLICATE:
		pc_name(v, d->pc, d->at > 0, name, sizeof(name));
		snprintf(buf, len, "duplicate frame: %s", name);
		break;
	case VERIFY_TRUNCATED:
		snprintf(buf, len, "truncated after %zu frames", d->at);
		break;
	case VERIFY_DIFFERENT:
		pc_name(v, d->pc, d->at > 0, name, sizeof(name));
		snprintf(buf, len, "different from frame %zu: %s", d->at, name);
		break;
	default:
		buf[0] = '\0';
	}
}

static void count_shape(struct shape *sh, const char *text)
{
	for (int i = 0; i < MAX_SHAPES; i++) {
		if (sh[i].n && strcmp(sh[i].text, text) == 0) {
			sh[i].n++;
			return;
		}
		if (!sh[i].n) {
			snprintf(sh[i].text, sizeof(sh[i].text), "%s", text);
			sh[i].n = 1;
			return;
		}
	}
	/* Table full: the rarest shape makes room (counts stay approximate only then). */
	int m = 0;
	for (int i = 1; i < MAX_SHAPES; i++)
		if (sh[i].n < sh[m].n)
			m = i;
	snprintf(sh[m].text, sizeof(sh[m].text), "%s", text);
	sh[m].n++;
}

static void account(struct verifier *v, const char *func, const struct verify_diff *draw,
		    const struct verify_diff *drep, int crossed)
{
	char sraw[VERIFY_SHAPE_LEN] = "", srep[VERIFY_SHAPE_LEN] = "";
	struct frow *row = NULL;

	if (draw->cls != VERIFY_AGREE)
		shape_text(v, draw, sraw, sizeof(sraw));
	if (drep->cls != VERIFY_AGREE)
		shape_text(v, drep, srep, sizeof(srep));
	pthread_mutex_lock(&v->lock);
	for (size_t i = 0; i < v->nrows; i++)
		if (strcmp(v->rows[i].r.func, func) == 0) {
			row = &v->rows[i];
			break;
		}
	if (!row) {
		if (v->nrows == v->caprows) {
			v->caprows = v->caprows ? v->caprows * 2 : 64;
			v->rows = xrealloc(v->rows, v->caprows * sizeof(*v->rows));
		}
		row = &v->rows[v->nrows++];
		memset(row, 0, sizeof(*row));
		snprintf(row->r.func, sizeof(row->r.func), "%s", func);
	}
	row->r.n++;
	row->r.raw_cls[draw->cls]++;
	row->r.rep_cls[drep->cls]++;
	v->tot.comparisons++;
	v->tot.raw_cls[draw->cls]++;
	v->tot.rep_cls[drep->cls]++;
	if (crossed) {
		v->tot.cross++;
		v->tot.cross_raw_wrong += draw->cls != VERIFY_AGREE;
		v->tot.cross_rep_wrong += drep->cls != VERIFY_AGREE;
	}
	if (draw->cls != VERIFY_AGREE) {
		row->r.raw_wrong++;
		v->tot.raw_wrong++;
		count_shape(row->raw, sraw);
	}
	if (drep->cls != VERIFY_AGREE) {
		row->r.rep_wrong++;
		v->tot.rep_wrong++;
		count_shape(row->rep, srep);
	}
	pthread_mutex_unlock(&v->lock);
}

static void account_stop(struct verifier *v, const struct verify_capture *c)
{
	uint64_t us = c->stopped_ns / 1000;

	pthread_mutex_lock(&v->lock);
	v->tot.stops++;
	v->tot.stop_total_ns += c->stopped_ns;
	if (c->stopped_ns > v->tot.stop_max_ns)
		v->tot.stop_max_ns = c->stopped_ns;
	v->hist[us < STOP_HIST_US ? us : STOP_HIST_US]++;
	if (c->gr.have) {
		v->tot.gstops++;
		v->ghist[us < STOP_HIST_US ? us : STOP_HIST_US]++;
	} else {
		v->ohist[us < STOP_HIST_US ? us : STOP_HIST_US]++;
	}
	if (c->signal)
		v->tot.signals++;
	pthread_mutex_unlock(&v->lock);
}

static void bump(struct verifier *v, uint64_t *counter)
{
	pthread_mutex_lock(&v->lock);
	(*counter)++;
	pthread_mutex_unlock(&v->lock);
}

/* Builds the repair's view of the snapshot: a user-mode sample with the registers the
 * sampler asks the kernel for and the stack copy. */
static void repaired_chain(struct verifier *v, const struct thread_snapshot *ts, const uint64_t *raw, size_t nraw,
			   uint64_t *out, size_t *nout)
{
	struct perf_sample s;
	int ip = sampler_reg(SREG_IP), sp = sampler_reg(SREG_SP), fp = sampler_reg(SREG_FP);

	memcpy(out, raw, nraw * sizeof(*raw));
	*nout = nraw;
	if (ip < 0 || sp < 0 || fp < 0)
		return;
	memset(&s, 0, sizeof(s));
	s.pid = (uint32_t)v->pid;
	s.tid = (uint32_t)ts->tid;
	s.regs_abi = 2; /* PERF_SAMPLE_REGS_ABI_64 */
	s.regs_mask = (1ULL << ip) | (1ULL << sp) | (1ULL << fp);
	s.regs[ip] = ts->regs[X86_64_DW_RIP];
	s.regs[sp] = ts->regs[X86_64_DW_RSP];
	s.regs[fp] = ts->regs[X86_64_DW_RBP];
	/* The repair gets no more stack than a sample carries (--stack-size). */
	s.stack = ts->stack;
	s.stack_size = s.stack_dyn = GP_MIN(ts->stack_len, v->o.sample_stack);
	repair_chain(v->rep, &s, out, nout, MAX_FRAMES);
}

/* --- past a stack switch --- */

enum door { DOOR_NONE, DOOR_SYSTEMSTACK, DOOR_ASMCGOCALL, DOOR_MCALL, DOOR_MORESTACK,
	    DOOR_CGOCALLBACK };

/* The function pc is in (the outermost of its inlined frames), or "". */
static const char *func_at(struct verifier *v, uint64_t pc, int is_return)
{
	const struct sym_module *mod = NULL;
	struct sym_frame f[8];
	int n = symbolizer_lookup(v->sym, pc, is_return, &mod, f, GP_ARRAY_SIZE(f));

	return n > 0 && f[n - 1].func ? f[n - 1].func : "";
}

/* The four doors through which Go code runs on the thread's g0 stack, each saving the
 * goroutine's registers in g.sched (go1.19 to go1.27 runtime/asm_amd64.s). */
static enum door door_at(struct verifier *v, uint64_t pc, int is_return)
{
	const char *f = func_at(v, pc, is_return);

	if (!strcmp(f, "runtime.systemstack"))
		return DOOR_SYSTEMSTACK;
	if (!strcmp(f, "runtime.asmcgocall"))
		return DOOR_ASMCGOCALL;
	if (!strcmp(f, "runtime.mcall"))
		return DOOR_MCALL;
	if (!strcmp(f, "runtime.morestack"))
		return DOOR_MORESTACK;
	if (!strcmp(f, "runtime.cgocallback") && is_return)
		return DOOR_CGOCALLBACK;
	return DOOR_NONE;
}

/* The ground truth past a door, into out: libunwind on the goroutine's stack copy from
 * the state the door saved. Go's traceback follows systemstack and morestack to
 * m.curg.sched (go1.23 runtime/traceback.go, unwinder.resolveInternal, unwindJumpStack),
 * and profiles a cgo call from m.curg.syscallpc and syscallsp (go1.19 to go1.27
 * runtime/proc.go sigprof), where cgocall entered the syscall state; mcall, which Go's
 * traceback does not cross, from g.sched like the others. The pc a systemstack or
 * asmcgocall door saves is runtime.systemstack_switch, which is no frame (Go's traceback
 * continues systemstack at its caller; the repair drops it): it is left out. Returns the
 * frames, 0 when the state is not in the copy or libunwind cannot start. */
static size_t cross_truth(struct verifier *v, const struct verify_capture *c, enum door d, uint64_t *out,
			  size_t max, enum unwind_end *end)
{
	const struct verify_goroutine *gr = &c->gr;
	uint64_t pc = gr->pc, sp = gr->sp, bp = gr->bp;
	struct thread_snapshot ts;
	int n;

	uint64_t tsp = c->ts.regs[X86_64_DW_RSP];

	if (d == DOOR_ASMCGOCALL && gr->scpc && gr->scsp >= gr->lo && gr->scsp < gr->hi) {
		pc = gr->scpc;
		sp = gr->scsp;
		bp = gr->scbp;
	}
	/* A callback: where libunwind's step through cgocallback's frame led, on the thread's
	 * own stack (unwinder_beyond), independent of the state read from g0. */
	if (d == DOOR_CGOCALLBACK && !unwinder_beyond(v->uw, &pc, &sp, &bp))
		return 0;
	memset(&ts, 0, sizeof(ts));
	if (pc && max >= 2 && sp >= gr->base && sp - gr->base < gr->len) {
		ts.stack = gr->buf + (sp - gr->base);
		ts.stack_len = gr->len - (sp - gr->base);
	} else if (pc && max >= 2 && d == DOOR_CGOCALLBACK && sp >= tsp && sp - tsp < c->ts.stack_len) {
		ts.stack = c->ts.stack + (sp - tsp);
		ts.stack_len = c->ts.stack_len - (sp - tsp);
	} else {
		return 0;
	}
	ts.tid = c->ts.tid;
	ts.regs[X86_64_DW_RIP] = pc;
	ts.regs[X86_64_DW_RSP] = sp;
	ts.regs[X86_64_DW_RBP] = bp;
	n = unwinder_unwind(v->uw, &ts, out, max, end);
	if (n <= 0)
		return 0;
	if (!strcmp(func_at(v, out[0], 0), "runtime.systemstack_switch")) {
		memmove(out, out + 1, (size_t)(n - 1) * sizeof(*out));
		n--;
	}
	return (size_t)n;
}

/* The repaired chain past the door, as gotop-perf record makes it from what the BPF
 * program copies at a sample: g.sched's pc, sp and bp, the words at sched.sp and the
 * frame-pointer walk from sched.bp, read during the stop (walk_goroutine). Returns 1
 * when the walk ended at its budget of GOREAD_CONT_FRAMES frames, which then limits the
 * depth the chain can have, as perf_event_max_stack does the kernel's. */
static int cross_repaired(struct verifier *v, const struct verify_goroutine *gr, uint64_t *rep,
			  size_t *nrep)
{
	struct repair_switch sw = { gr->pc, gr->sp, gr->bp, gr->words, GP_ARRAY_SIZE(gr->words), gr->ret,
				    gr->nret, gr->cb };

	if (!gr->cont)
		return 0;
	return repair_cross(v->rep, &sw, rep, nrep, MAX_FRAMES) > 0 && gr->nret == GOREAD_CONT_FRAMES;
}

/* A chain compared with a truth that crossed at frame at: Go's profile of a cgo call
 * starts at g.syscallpc, inside runtime.cgocall where it entered the syscall state, and
 * the repaired chain at the return address of its call of asmcgocall, a few instructions
 * on in the same function. The frame is the same; so is the function, which is what is
 * compared there: the truth takes the chain's pc when both name one function. */
static void same_frame(struct verifier *v, const uint64_t *truth, size_t nt, size_t at, const uint64_t *chain,
		       size_t nc, uint64_t *out)
{
	memcpy(out, truth, nt * sizeof(*truth));
	if (at < nt && at < nc && truth[at] != chain[at] &&
	    !strcmp(func_at(v, truth[at], 1), func_at(v, chain[at], 1)) && func_at(v, truth[at], 1)[0])
		out[at] = chain[at];
}

static int compare_snapshot(struct verifier *v, const struct verify_capture *c)
{
	uint64_t truth[MAX_FRAMES], raw[MAX_FRAMES], rep[MAX_FRAMES], t2[MAX_FRAMES];
	size_t nraw, nrep, at = 0, replimit = KERNEL_MAX_STACK;
	enum unwind_end end;
	enum door d = DOOR_NONE;
	int nt, open, crossed = 0, budget = 0;
	size_t ncmp;
	struct verify_diff draw, drep;
	char func[128];

	nt = unwinder_unwind(v->uw, &c->ts, truth, MAX_FRAMES, &end);
	if (nt > 0 && end == UNWIND_END_SWITCH)
		d = door_at(v, truth[nt - 1], nt > 1);
	if (d != DOOR_NONE && c->gr.have) {
		enum unwind_end e2;
		size_t n2 = cross_truth(v, c, d, truth + nt, MAX_FRAMES - (size_t)nt, &e2);

		if (n2 > 0) {
			at = (size_t)nt;
			nt += (int)n2;
			end = e2;
			crossed = 1;
		}
	}
	/* the unwinder's counters, for reports taken from other threads */
	pthread_mutex_lock(&v->lock);
	unwinder_get_stats(v->uw, &v->tot.unwind);
	/* An m with no goroutine (the scheduler, after dropg) has nothing to cross: Go's
	 * traceback stops there too (m.curg nil). */
	if (d != DOOR_NONE && !crossed && !(c->gr.m && !c->gr.g))
		v->tot.cross_missed++;
	pthread_mutex_unlock(&v->lock);
	if (nt <= 0) {
		bump(v, &v->tot.unwind_failed);
		return 0;
	}
	nraw = verify_fp_chain(v->pid, &c->ts, raw, KERNEL_MAX_STACK);
	stack_bytes(v);
	repaired_chain(v, &c->ts, raw, nraw, rep, &nrep);
	if (c->gr.have)
		budget = cross_repaired(v, &c->gr, rep, &nrep);
	if (budget && nrep < replimit)
		replimit = nrep;
	/* Past a stack switch or an unwind error the truth is unknown, not ended. */
	open = end != UNWIND_END_TOP && end != UNWIND_END_STOP;
	ncmp = libc_entry_depth(v, truth, (size_t)nt);
	if (ncmp < (size_t)nt)
		open = 1;
	if (crossed) {
		same_frame(v, truth, ncmp, at, raw, nraw, t2);
		verify_compare(t2, ncmp, open, raw, nraw, KERNEL_MAX_STACK, &draw);
		same_frame(v, truth, ncmp, at, rep, nrep, t2);
		verify_compare(t2, ncmp, open, rep, nrep, replimit, &drep);
	} else {
		verify_compare(truth, ncmp, open, raw, nraw, KERNEL_MAX_STACK, &draw);
		verify_compare(truth, ncmp, open, rep, nrep, KERNEL_MAX_STACK, &drep);
	}
	pc_name(v, truth[0], 0, func, sizeof(func));
	account(v, func, &draw, &drep, crossed);
	if (crossed && budget && ncmp > nrep)
		bump(v, &v->tot.cross_budget);
	if (v->result_fn) {
		struct verify_result r = { c->ts.tid, truth, raw, rep, (size_t)nt, nraw, nrep, draw, drep,
					   c->stopped_ns, at };
		v->result_fn(v->result_ctx, &r);
	}
	return 1;
}

/* The Go runtime's layout for the program the target runs now (NULL when it is not Go):
 * with it the stops read the goroutine a thread's m serves, for the crossing. */
static void go_layout(struct verifier *v)
{
	struct symfile *mf = symbolizer_main_file(v->sym);
	const char *ver;

	if (mf == v->go_file)
		return;
	gort_free(v->gort);
	v->gort = NULL;
	v->go_file = mf;
	memset(v->mcache, 0, sizeof(v->mcache));
	ver = mf ? symfile_go_version(mf) : NULL;
	if (ver && ver[0])
		v->gort = gort_new(ver, symfile_dwarf(mf), GORT_ARCH_AMD64);
}

static int one(struct verifier *v, pid_t tid)
{
	unsigned slot = (unsigned)tid % MCACHE;
	int rc;

	go_layout(v);
	v->cap.go = v->gort ? gort_offsets(v->gort) : NULL;
	v->cap.m_hint = v->mcache[slot].tid == tid ? v->mcache[slot].m : 0;
	rc = verify_capture(v->pid, tid, v->o.stack_copy, &v->cap);
	if (rc == 0 && v->cap.gr.m) {
		v->mcache[slot].tid = tid;
		v->mcache[slot].m = v->cap.gr.m;
	}

	if (rc == -ESRCH) {
		bump(v, &v->tot.gone);
		return 0;
	}
	if (v->cap.stopped_ns)
		account_stop(v, &v->cap);
	if (rc < 0)
		return rc;
	return compare_snapshot(v, &v->cap);
}

static void set_error(struct verifier *v, int rc)
{
	pthread_mutex_lock(&v->lock);
	v->tot.error = rc;
	verify_explain_eperm(v->pid, rc, v->tot.why, sizeof(v->tot.why));
	pthread_mutex_unlock(&v->lock);
}

int verifier_round(struct verifier *v, pid_t tid)
{
	pid_t *tids = NULL, pick = tid;
	int rc;

	v->last_round_ns = now_ns();
	if (!pick) {
		size_t nrun = 0;

		long n = procinfo_tasks(v->pid, &tids);
		if (n == -ENOENT || n == -ESRCH) {
			bump(v, &v->tot.gone); /* the process is gone: the caller sees it too */
			return -ESRCH;
		}
		if (n < 0) {
			set_error(v, (int)n);
			return (int)n;
		}
		/* Keep the threads running now (state R) and choose one at random. */
		for (long i = 0; i < n; i++) {
			struct proc_stat st;

			if (procinfo_stat(v->pid, tids[i], &st) == 0 && st.state == 'R')
				tids[nrun++] = tids[i];
		}
		if (nrun)
			pick = tids[rand_r(&v->rnd) % nrun];
		free(tids);
		if (!pick) {
			bump(v, &v->tot.idle_rounds);
			return 0;
		}
	}
	rc = one(v, pick);
	if (rc < 0 && rc != -ESRCH)
		set_error(v, rc);
	return rc;
}

int verifier_probe(struct verifier *v)
{
	int rc = verify_capture(v->pid, v->pid, 0, &v->cap);

	if (v->cap.stopped_ns)
		account_stop(v, &v->cap);
	if (rc == -ESRCH) /* the main thread may have exited alone: the others tell */
		return 0;
	if (rc < 0)
		set_error(v, rc);
	return rc;
}

int verifier_pass(struct verifier *v)
{
	pid_t *tids = NULL;
	long n = procinfo_tasks(v->pid, &tids);
	int made = 0;

	if (n < 0) {
		set_error(v, (int)n);
		return (int)n;
	}
	for (long i = 0; i < n; i++) {
		int rc = one(v, tids[i]);

		if (rc < 0) {
			free(tids);
			set_error(v, rc);
			return rc;
		}
		made += rc;
	}
	free(tids);
	return made;
}

void verifier_pace(struct verifier *v, volatile int *quit)
{
	for (;;) {
		uint64_t now = now_ns(), due = v->last_round_ns + (uint64_t)(1e9 / v->o.rate), stopped, wall;

		pthread_mutex_lock(&v->lock);
		stopped = v->tot.stop_total_ns;
		pthread_mutex_unlock(&v->lock);
		/* Under the budget: the stopped time so far must stay below max_stopped of
		 * the time elapsed since the start. */
		wall = (uint64_t)((double)stopped / v->o.max_stopped);
		if (v->start_ns + wall > due)
			due = v->start_ns + wall;
		if (now >= due || (quit && __atomic_load_n(quit, __ATOMIC_ACQUIRE)))
			return;
		uint64_t left = due - now;
		if (left > 20000000)
			left = 20000000; /* wake up every 20 ms to look at *quit */
		struct timespec ts = { (time_t)(left / 1000000000), (long)(left % 1000000000) };
		nanosleep(&ts, NULL);
	}
}

static void *verifier_main(void *arg)
{
	struct verifier *v = arg;
	sigset_t all;

	/* Signals belong to the main thread; waitpid here restarts after them anyway. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	while (!__atomic_load_n(&v->quit, __ATOMIC_ACQUIRE)) {
		verifier_pace(v, &v->quit);
		if (__atomic_load_n(&v->quit, __ATOMIC_ACQUIRE))
			break;
		int rc = verifier_round(v, 0);

		if (rc < 0 && rc != -ESRCH)
			break; /* the error and its explanation are in the report */
	}
	return NULL;
}

int verifier_start(struct verifier *v)
{
	int rc;

	if (v->running)
		return 0;
	__atomic_store_n(&v->quit, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&v->lock);
	v->tot.error = 0;
	v->tot.why[0] = '\0';
	pthread_mutex_unlock(&v->lock);
	rc = pthread_create(&v->thread, NULL, verifier_main, v);
	if (rc)
		return -rc;
	pthread_setname_np(v->thread, "gotop-verify"); /* as top -H and perf show threads */
	v->running = 1;
	return 0;
}

void verifier_stop(struct verifier *v)
{
	if (!v->running)
		return;
	__atomic_store_n(&v->quit, 1, __ATOMIC_RELEASE);
	pthread_join(v->thread, NULL);
	v->running = 0;
}

int verifier_running(struct verifier *v)
{
	int err;

	pthread_mutex_lock(&v->lock);
	err = v->tot.error;
	pthread_mutex_unlock(&v->lock);
	return v->running && !err;
}

static uint64_t percentile(const uint32_t *hist, uint64_t total, double q)
{
	uint64_t want = (uint64_t)((double)total * q), seen = 0;

	if (total == 0)
		return 0;
	if (want >= total)
		want = total - 1;
	for (size_t i = 0; i <= STOP_HIST_US; i++) {
		seen += hist[i];
		if (seen > want)
			return (uint64_t)i * 1000 + 500; /* the bucket's middle */
	}
	return (uint64_t)STOP_HIST_US * 1000;
}

static double wrong_share(const struct verify_row *r)
{
	return r->n ? (double)r->raw_wrong / (double)r->n : 0;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct verify_row *x = a, *y = b;
	double wx = wrong_share(x), wy = wrong_share(y);

	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(x->func, y->func);
}

static void best_shape(const struct shape *sh, char *out, uint64_t *n)
{
	int m = -1;

	for (int i = 0; i < MAX_SHAPES; i++)
		if (sh[i].n && (m < 0 || sh[i].n > sh[m].n))
			m = i;
	if (m < 0) {
		out[0] = '\0';
		*n = 0;
		return;
	}
	snprintf(out, VERIFY_SHAPE_LEN, "%s", sh[m].text);
	*n = sh[m].n;
}

void verifier_report(struct verifier *v, struct verify_report *r)
{
	pthread_mutex_lock(&v->lock);
	*r = v->tot;
	r->rows = xcalloc(v->nrows ? v->nrows : 1, sizeof(*r->rows));
	r->nrows = v->nrows;
	for (size_t i = 0; i < v->nrows; i++) {
		r->rows[i] = v->rows[i].r;
		best_shape(v->rows[i].raw, r->rows[i].raw_shape, &r->rows[i].raw_shape_n);
		best_shape(v->rows[i].rep, r->rows[i].rep_shape, &r->rows[i].rep_shape_n);
	}
	r->stop_p50_ns = percentile(v->hist, v->tot.stops, 0.50);
	r->stop_p99_ns = percentile(v->hist, v->tot.stops, 0.99);
	{
		uint64_t others = v->tot.stops - v->tot.gstops, mx = v->tot.stop_max_ns;

		r->gstop_p50_ns = GP_MIN(percentile(v->ghist, v->tot.gstops, 0.50), mx);
		r->gstop_p99_ns = GP_MIN(percentile(v->ghist, v->tot.gstops, 0.99), mx);
		r->ostop_p50_ns = GP_MIN(percentile(v->ohist, others, 0.50), mx);
		r->ostop_p99_ns = GP_MIN(percentile(v->ohist, others, 0.99), mx);
	}
	/* bucket middles can pass the largest value seen */
	r->stop_p50_ns = GP_MIN(r->stop_p50_ns, r->stop_max_ns);
	r->stop_p99_ns = GP_MIN(r->stop_p99_ns, r->stop_max_ns);
	pthread_mutex_unlock(&v->lock);
	r->wall_ns = now_ns() - v->start_ns;
	qsort(r->rows, r->nrows, sizeof(*r->rows), cmp_rows);
}

void verify_report_free(struct verify_report *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}
