/* gowall.c: wall-clock profiles from snapshots of every goroutine (gosnap.c). Each tick
 * every goroutine alive adds one period of wall time to the sample of its stack, state and
 * labels, as fgprof does from inside a Go program; here from outside, without code in the
 * target. Goroutines parked at the first read that changed before the check are dropped by
 * the snapshot (torn) and counted; running ones are kept (gosnap.c), so a tick does not
 * under-count running code. Running goroutines take the stack of a concurrent perf sample
 * (struct gowall_oncpu), else the frame "[running]". Sample type and labels follow
 * pprof's profile.proto; "state" is a label like Go's own profiles' string labels, so
 * `go tool pprof -tagfocus=state=running` or `-tags` split the time. */
#include "config.h"
#include "gotop/gowall.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/profile.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"

#define WALL_FRAMES 16  /* inlined frames per pc */
#define WALL_LABELS (GORT_MAX_LABELS + 1)

/*
 * The on-CPU table: requests, one per running goroutine and tick, each filled by the
 * aggregator with the chain of the goroutine's sample nearest the tick. Requests sit in
 * the bucket of their goroutine id, so the aggregator's cost per sample is one lock and a
 * scan of one bucket's ids, and a copy when a sample is nearer than the one kept. A
 * goroutine running at every tick has a request per tick until the aggregator is past
 * them (a drain interval, up to half a second, plus two windows and a tick): ONCPU_WAYS
 * covers that at 50 Hz. A request that finds its bucket full goes without ("[running]").
 */
#define ONCPU_BUCKETS 32
#define ONCPU_WAYS 64
#define ONCPU_FRAMES 64
/* A sample counts within a period of the tick, and at least this far: a running
 * goroutine's thread can wait that long for a CPU under load (CFS's sched_latency is 24 ms
 * on a few CPUs, and longer with more tasks: kernel/sched/fair.c), with no sample of it
 * meanwhile and its stack as it was. */
#define ONCPU_MIN_WINDOW_NS (50 * 1000000ULL)
/* A request waits at most this long for the aggregator, whatever its progress: a target
 * with no sample (its threads off CPU) moves no sample time forward. */
#define ONCPU_WAIT_NS (2 * 1000000000ULL)

struct oncpu_req {
	uint64_t t, dt; /* the tick's time; distance of the sample kept (UINT64_MAX: none) */
	uint32_t n;
	uint64_t pcs[ONCPU_FRAMES];
};

struct gowall_oncpu {
	pthread_mutex_t mu;
	uint64_t high;   /* latest sample time offered */
	uint64_t window; /* a sample counts within this distance of the tick */
	struct {
		uint32_t used;
		uint64_t goid[ONCPU_WAYS]; /* 0: free (Go's goroutine ids start at 1) */
		struct oncpu_req req[ONCPU_WAYS];
	} b[ONCPU_BUCKETS];
};

/* A running goroutine of a past tick waiting for its request. */
struct pending {
	uint64_t t;
	int64_t period; /* the wall time it counts: the period of its tick */
	uint32_t bucket, way;
	const struct gort_labels *labels; /* interned by the snapshot: valid until gosnap_free */
};

struct gowall {
	struct symbolizer *sym;
	struct gosnap *snap;
	struct prof *p;
	int64_t period;
	uint64_t mapping;
	uint64_t running_loc;
	struct hashmap loc_of;  /* pc -> location id */
	uint32_t k_state;
	struct gowall_stats st;
	uint64_t *locs;
	size_t locscap;
	struct gowall_oncpu *oncpu;
	struct pending *pend;
	size_t npend, pendcap;
	uint32_t v_running;
	uint64_t last_tick; /* util_now_ns of the last tick (0: none yet) */
	/* Per goroutine of the last snapshot, its sample + 1 (0: none): a goroutine that has
	 * not run since (gosnap_g.prev) adds to it without a lookup. sample_at is this
	 * tick's, swapped in at its end. */
	uint32_t *prev_sample, *sample_at;
	size_t nprev_sample, prev_samplecap, sample_atcap;
};

struct gowall *gowall_new(pid_t pid, struct symbolizer *sym, double hz, char *why, size_t whylen)
{
	struct symfile *sf = symbolizer_main_file(sym);
	struct prof_value_type t;
	struct prof_mapping m = { 0 };
	struct gowall *w;
	uint32_t fn;
	struct prof_line ln;

	if (!sf) {
		snprintf(why, whylen, "cannot open the executable of process %d", (int)pid);
		errno = ESRCH;
		return NULL;
	}
	if (!(hz > 0 && hz <= 1000)) {
		snprintf(why, whylen, "wall-clock rate must be above 0 and at most 1000 Hz");
		errno = EINVAL;
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->snap = gosnap_new(pid, sf, why, whylen);
	if (!w->snap) {
		int e = errno;

		free(w);
		errno = e;
		return NULL;
	}
	w->sym = sym;
	w->p = prof_new();
	w->period = (int64_t)(1e9 / hz);
	t.type = prof_str(w->p, "wall");
	t.unit = prof_str(w->p, "nanoseconds");
	prof_set_sample_types(w->p, &t, 1);
	prof_set_period(w->p, t, w->period);
	m.start = 0;
	m.limit = UINT64_MAX;
	m.filename = prof_str(w->p, symfile_path(sf));
	m.has_functions = m.has_filenames = m.has_line_numbers = m.has_inline_frames = 1;
	w->mapping = prof_add_mapping(w->p, &m);
	prof_set_main_mapping(w->p, w->mapping);
	fn = (uint32_t)prof_add_function(w->p, prof_str(w->p, "[running]"), prof_str(w->p, "[running]"),
					 0, 0);
	ln = (struct prof_line){ fn, 0 };
	w->running_loc = prof_add_location(w->p, w->mapping, 0, &ln, 1);
	w->k_state = prof_str(w->p, "state");
	w->v_running = prof_str(w->p, gosnap_state_name(GOSNAP_RUNNING));
	return w;
}

void gowall_free(struct gowall *w)
{
	if (!w)
		return;
	gosnap_free(w->snap);
	prof_free(w->p);
	hashmap_free(&w->loc_of);
	free(w->locs);
	free(w->prev_sample);
	free(w->sample_at);
	free(w->pend);
	free(w);
}

struct prof *gowall_profile(struct gowall *w)
{
	return w->p;
}

void gowall_get_stats(const struct gowall *w, struct gowall_stats *st)
{
	*st = w->st;
}

/* The location of return address pc (with leaf, of the sampled pc itself): its frames,
 * innermost inlined first. User addresses never have bit 63 set: it tells the two apart. */
static uint64_t location(struct gowall *w, uint64_t pc, int leaf)
{
	struct sym_frame fr[WALL_FRAMES];
	struct prof_line lines[WALL_FRAMES];
	int created, n, i;
	uint64_t *slot = hashmap_put(&w->loc_of, leaf ? pc | 1ULL << 63 : pc, &created);

	if (!created)
		return *slot;
	n = symbolizer_lookup(w->sym, pc, !leaf, NULL, fr, WALL_FRAMES);
	if (n <= 0) {
		char name[32];

		snprintf(name, sizeof(name), "%#llx", (unsigned long long)pc);
		fr[0] = (struct sym_frame){ .func = name };
		n = 1;
		lines[0].function = prof_add_function(w->p, prof_str(w->p, name), prof_str(w->p, name),
						      0, 0);
		lines[0].line = 0;
	} else {
		for (i = 0; i < n; i++) {
			uint32_t name = prof_str(w->p, fr[i].func);

			lines[i].function = prof_add_function(w->p, name, name,
							      prof_str(w->p, fr[i].file ? fr[i].file : ""),
							      fr[i].start_line);
			lines[i].line = fr[i].line;
		}
	}
	*slot = prof_add_location(w->p, w->mapping, leaf ? pc : pc - 1, lines, (size_t)n);
	return *slot;
}

/* The labels of a sample: state, then the goroutine's pprof labels. Returns how many. */
static size_t labels_of(struct gowall *w, uint32_t state, const struct gort_labels *gl,
			struct prof_label *lab)
{
	size_t nl = 0;

	lab[nl++] = (struct prof_label){ w->k_state, state, 0, 0 };
	for (uint32_t k = 0; gl && k < gl->n && nl < WALL_LABELS; k++) {
		const struct gort_label *p = &gl->pairs[k];

		lab[nl++] = (struct prof_label){ prof_strn(w->p, p->key, p->klen),
						 prof_strn(w->p, p->value, p->vlen), 0, 0 };
	}
	return nl;
}

struct gowall_oncpu *gowall_oncpu_new(void)
{
	struct gowall_oncpu *o = xcalloc(1, sizeof(*o));

	pthread_mutex_init(&o->mu, NULL);
	return o;
}

void gowall_oncpu_free(struct gowall_oncpu *o)
{
	if (!o)
		return;
	pthread_mutex_destroy(&o->mu);
	free(o);
}

static uint32_t oncpu_bucket(uint64_t goid)
{
	return (uint32_t)((goid * 0x9e3779b97f4a7c15ULL) >> 59) & (ONCPU_BUCKETS - 1);
}

void gowall_oncpu_put(struct gowall_oncpu *o, uint64_t goid, uint64_t time_ns,
		      const uint64_t *pcs, size_t n)
{
	uint32_t b = oncpu_bucket(goid);

	pthread_mutex_lock(&o->mu);
	if (time_ns > o->high)
		o->high = time_ns;
	for (uint32_t i = 0; goid && n && o->b[b].used && i < ONCPU_WAYS; i++) {
		struct oncpu_req *r = &o->b[b].req[i];
		uint64_t d;

		if (o->b[b].goid[i] != goid)
			continue;
		d = time_ns > r->t ? time_ns - r->t : r->t - time_ns;
		if (d > o->window || d >= r->dt)
			continue;
		r->dt = d;
		r->n = (uint32_t)GP_MIN(n, (size_t)ONCPU_FRAMES);
		memcpy(r->pcs, pcs, r->n * sizeof(*pcs));
	}
	pthread_mutex_unlock(&o->mu);
}

/* The wall time each goroutine of the next tick counts, and the window its on-CPU sample
 * may come from. */
static void set_period(struct gowall *w, int64_t period_ns)
{
	if (period_ns <= 0)
		return;
	w->period = period_ns;
	if (w->oncpu) {
		pthread_mutex_lock(&w->oncpu->mu);
		w->oncpu->window = GP_MAX((uint64_t)w->period, ONCPU_MIN_WINDOW_NS);
		pthread_mutex_unlock(&w->oncpu->mu);
	}
}

void gowall_set_oncpu(struct gowall *w, struct gowall_oncpu *o)
{
	if (o) {
		pthread_mutex_lock(&o->mu);
		o->window = GP_MAX((uint64_t)w->period, ONCPU_MIN_WINDOW_NS);
		pthread_mutex_unlock(&o->mu);
	}
	w->oncpu = o;
}

/* A request for running goroutine goid at tick time t; 0, or -ENOSPC (its bucket full). */
static int oncpu_request(struct gowall *w, uint64_t goid, uint64_t t,
			 const struct gort_labels *labels)
{
	struct gowall_oncpu *o = w->oncpu;
	uint32_t b = oncpu_bucket(goid), i;

	pthread_mutex_lock(&o->mu);
	for (i = 0; i < ONCPU_WAYS && o->b[b].goid[i]; i++)
		;
	if (i < ONCPU_WAYS) {
		o->b[b].goid[i] = goid;
		o->b[b].used++;
		o->b[b].req[i].t = t;
		o->b[b].req[i].dt = UINT64_MAX;
		o->b[b].req[i].n = 0;
	}
	pthread_mutex_unlock(&o->mu);
	if (i == ONCPU_WAYS)
		return -ENOSPC;
	xgrow((void **)&w->pend, &w->pendcap, w->npend + 1, sizeof(*w->pend));
	w->pend[w->npend++] = (struct pending){ t, w->period, b, i, labels };
	return 0;
}

/* A running goroutine's sample: the chain pcs[0..n) (none: "[running]"). */
static void add_running(struct gowall *w, const uint64_t *pcs, size_t n,
			const struct gort_labels *labels, int64_t period)
{
	struct prof_label lab[WALL_LABELS];
	size_t nl = labels_of(w, w->v_running, labels, lab), nloc = 0;

	xgrow((void **)&w->locs, &w->locscap, n + 1, sizeof(*w->locs));
	if (!n)
		w->locs[nloc++] = w->running_loc;
	for (size_t f = 0; f < n; f++)
		w->locs[nloc++] = location(w, pcs[f], f == 0);
	prof_add_sample(w->p, w->locs, nloc, &period, lab, nl);
	w->st.samples++;
	w->st.running++;
	if (n)
		w->st.running_oncpu++;
}

/* Adds the pending goroutines whose window the aggregator has passed (all with all): a
 * sample a little later than the newest may still come from another CPU's ring, hence
 * two windows. */
static void resolve(struct gowall *w, int all)
{
	struct gowall_oncpu *o = w->oncpu;
	uint64_t pcs[ONCPU_FRAMES], now = util_now_ns();
	size_t i, keep = 0;

	for (i = 0; i < w->npend; i++) {
		struct pending *p = &w->pend[i];
		struct oncpu_req *r = &o->b[p->bucket].req[p->way];
		uint32_t n = 0;
		int ready;

		pthread_mutex_lock(&o->mu);
		ready = all || o->high >= p->t + 2 * o->window ||
			now >= p->t + ONCPU_WAIT_NS;
		if (ready) {
			n = r->n;
			memcpy(pcs, r->pcs, n * sizeof(*pcs));
			o->b[p->bucket].goid[p->way] = 0;
			o->b[p->bucket].used--;
		}
		pthread_mutex_unlock(&o->mu);
		if (ready)
			add_running(w, pcs, n, p->labels, p->period);
		else
			w->pend[keep++] = *p;
	}
	w->npend = keep;
}

void gowall_flush(struct gowall *w)
{
	if (w->oncpu)
		resolve(w, 1);
}

int gowall_tick(struct gowall *w)
{
	struct gosnap_result r;
	struct prof_label lab[WALL_LABELS];
	size_t i;
	/* The tick's time for the on-CPU samples: the snapshot's start, when the first
	 * goroutines are read (a snapshot the scheduler interrupts can end much later). */
	uint64_t t = util_now_ns();
	int rc;

	/* Each tick counts the time since the one before (the first 1/hz): a tick the
	 * machine delayed, or one of a caller that lowered its rate, counts the time that
	 * passed, so the wall seconds add up to the span. The callers draw their intervals
	 * at random, not in step with the program, so the states stay fairly weighed. */
	if (w->last_tick)
		set_period(w, (int64_t)(t - w->last_tick));
	w->last_tick = t;
	rc = gosnap_take(w->snap, 0, &r);

	w->st.ticks++;
	if (rc) {
		w->st.failed++;
		return rc;
	}
	w->st.torn += r.st.torn;
	w->st.snap_ns += r.st.ns;
	xgrow((void **)&w->sample_at, &w->sample_atcap, r.n, sizeof(*w->sample_at));
	for (i = 0; i < r.n; i++) {
		const struct gosnap_g *g = &r.g[i];
		size_t nl, nloc = 0;
		uint32_t prev = g->prev && g->prev <= w->nprev_sample ? w->prev_sample[g->prev - 1] : 0;
		long si;

		w->sample_at[i] = 0;
		if ((g->flags & GOSNAP_NO_STACK) && g->state == GOSNAP_RUNNING) {
			if (!w->oncpu || oncpu_request(w, g->goid, t, g->labels))
				add_running(w, NULL, 0, g->labels, w->period);
			continue;
		}
		/* The same goroutine as at the last tick, not run since: the same sample. */
		if (prev && prof_add_values(w->p, prev - 1, &w->period) == 0) {
			w->sample_at[i] = prev;
			w->st.samples++;
			continue;
		}
		xgrow((void **)&w->locs, &w->locscap, g->nframes + 1, sizeof(*w->locs));
		if (g->flags & GOSNAP_NO_STACK)
			w->locs[nloc++] = w->running_loc;
		for (uint32_t f = 0; f < g->nframes; f++)
			w->locs[nloc++] = location(w, r.pcs[g->frame0 + f], 0);
		nl = labels_of(w, prof_str(w->p, gosnap_state_text(g)), g->labels, lab);
		si = prof_add_to_sample(w->p, w->locs, nloc, &w->period, lab, nl, 1);
		w->sample_at[i] = si >= 0 && si < UINT32_MAX ? (uint32_t)si + 1 : 0;
		w->st.samples++;
	}
	{
		uint32_t *tmp = w->prev_sample;
		size_t cap = w->prev_samplecap;

		w->prev_sample = w->sample_at;
		w->prev_samplecap = w->sample_atcap;
		w->nprev_sample = r.n;
		w->sample_at = tmp;
		w->sample_atcap = cap;
	}
	if (w->oncpu)
		resolve(w, 0);
	return 0;
}
