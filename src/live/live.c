/* live.c: the live session: a worker thread takes sample batches, feeds the aggregator,
 * keeps per-refresh deltas for the decaying window, and publishes snapshots by pointer
 * swap with reference counts (linux tools/perf/builtin-top.c splits the work the same way). */
#include "config.h"
#include "gotop/live.h"
#include "gotop/procinfo.h"
#include "gotop/util.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREAD_NAMES 65536
#define MAX_REQUESTS 64
/* History kept for the decaying window even when the window is shorter, so that a
 * longer window can be chosen without starting from nothing. The environment variable
 * GOTOP_PERF_MIN_HISTORY (seconds, 1 to LIVE_MAX_WINDOW) changes it, for the tests of
 * what the window forgets (tests/ui-batch.sh), which would otherwise run for minutes. */
#define MIN_HISTORY_S 60
/* The first refresh with data comes this soon after the start when the refresh interval
 * is longer, so that data shows soon after attaching; then the regular ones. */
#define FIRST_REFRESH_NS (100ull * 1000 * 1000)
/* A decaying window forgets: once the aggregator's profile holds at least this many
 * entries that no tick of the history touched, and at least half as many as those it
 * touched, the profile keeps only the touched ones (forget). The cumulative profile
 * keeps every stack it was ever given, so its memory grows while new stacks come, mostly
 * kernel paths under rare user addresses (BENCHMARKS.md, "Memory of the live UI and record over time"). A window shows none
 * of the old ones. */
#define FORGET_MIN_DEAD 2048
/* Over the memory limit (live_opts.max_mem), an event's profile with at least this many
 * entries keeps the half with the most samples, those of the history before the others
 * (shed). It sheds again only once it has grown by a quarter: the heap that is not the
 * profile's (symbol tables, the model) may be over the limit alone, and shedding then
 * must not go on until nothing is left. Without it, a Go service that labels each
 * request with its own value grows without end (BENCHMARKS.md, "Memory of the live UI and record over time"). */
#define SHED_MIN_ENTRIES 4096

/* One event as the worker tracks it. */
struct lev {
	char name[EVENT_NAME_MAX];
	struct prof *p;          /* borrowed from the aggregator */
	int64_t *last;           /* per sample index: values 0 and 1 at the last publication */
	size_t nlast, caplast;
	int dirty;               /* samples were added since the last publication */
	size_t shed_floor;       /* shed: not below this many entries */
	struct live_event *pub;  /* the last published data (the worker holds a reference) */
};

/* Sample value changes of one publication interval, for the decaying window. */
struct delta {
	uint32_t ev, idx;
	int64_t v[2];
};

struct tick {
	uint64_t t;              /* active time (running, not paused) at the end of the interval */
	size_t n;
	struct delta *d;
};

/* The thread names, shared by snapshots while unchanged. */
struct tnames {
	int refs;
	size_t n;
	struct live_thread t[];
};

struct request {
	uint64_t seq;
	enum live_req_kind kind;
	struct event_spec ev;
	uint64_t value;
};

struct live {
	struct live_opts o;
	struct session *s;
	struct agg *agg;         /* the session's */
	pid_t pid;               /* the target */
	pthread_t thread;
	int started;
	int efd;

	/* Protected by lock: the published snapshot, the requests, stop. */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct live_snapshot *cur;
	struct request req[MAX_REQUESTS];
	size_t nreq;
	uint64_t req_seq;
	int stop;

	/* Worker only. */
	struct event_spec event;
	int use_freq;
	uint64_t freq, period;
	int paused, exited, ready;
	unsigned window_s;
	unsigned min_history_s;  /* MIN_HISTORY_S */
	int rebuild_all;
	struct lev **levs;
	size_t nlevs;
	/* The heap profile's sample types (SESSION_MEM), published after the events. */
	struct live_event *mev[PROF_MAX_VALUES];
	size_t nmev;
	uint64_t mem_seq;
	struct live_mem mem;
	struct tick *ticks;      /* oldest first */
	size_t nticks, capticks;
	size_t win_first;        /* index of the first tick inside the window, last publication */
	uint64_t active_ns, last_active_mark;
	uint64_t start_ns, start_wall;
	uint64_t seq;
	uint64_t last_pub_ns, last_samples, last_self_cpu;
	uint64_t forgotten, forgotten_entries; /* see live_snapshot */
	uint64_t shed, shed_entries;           /* see live_snapshot */
	struct tnames *names;
	struct live_thread *renames;
	size_t nrenames;
	int names_changed, recheck_names;
	char comm[64];
	char *cmdline;
	uint64_t reply_seq;
	int reply_err;
	char reply[320];
};

/* --- reference counting --- */

static void event_put(struct live_event *e)
{
	if (e && __atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		prof_free(e->prof);
		free(e);
	}
}

static void tnames_put(struct tnames *t)
{
	if (t && __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(t);
}

void live_snapshot_put(struct live_snapshot *s)
{
	size_t i;

	if (!s || __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	for (i = 0; i < s->nevents; i++)
		event_put(s->events[i]);
	free(s->events);
	/* The thread array is the tail of a shared struct tnames. */
	if (s->threads)
		tnames_put((struct tnames *)((char *)s->threads - offsetof(struct tnames, t)));
	free(s->cmdline);
	free(s->go_version);
	free(s);
}

struct live_snapshot *live_snapshot_get(struct live *l)
{
	struct live_snapshot *s;

	pthread_mutex_lock(&l->lock);
	s = l->cur;
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&l->lock);
	return s;
}

const struct live_event *live_snapshot_event(const struct live_snapshot *s, const char *name)
{
	size_t i;

	for (i = 0; s && i < s->nevents; i++)
		if (!strcmp(s->events[i]->name, name))
			return s->events[i];
	return NULL;
}

int live_fd(struct live *l)
{
	return l->efd;
}

/* --- the worker's bookkeeping --- */

static struct lev *lev_by_name(struct live *l, const char *name)
{
	size_t i, n = agg_nprofiles(l->agg);

	/* The aggregator adds profiles in the order events are first seen. */
	while (l->nlevs < n) {
		struct lev *e = xcalloc(1, sizeof(*e));
		const char *en;

		e->p = agg_profile_at(l->agg, l->nlevs, &en);
		snprintf(e->name, sizeof(e->name), "%s", en);
		l->levs = xrealloc(l->levs, (l->nlevs + 1) * sizeof(*l->levs));
		l->levs[l->nlevs++] = e;
	}
	for (i = 0; i < l->nlevs; i++)
		if (!strcmp(l->levs[i]->name, name))
			return l->levs[i];
	return NULL;
}

/* Folds the samples the aggregator held while kernel symbols loaded (wait: waits for
 * them); they count as new data. */
static void flush_held(struct live *l, int wait)
{
	size_t k;

	if (!agg_flush(l->agg, wait))
		return;
	lev_by_name(l, "");
	for (k = 0; k < l->nlevs; k++)
		l->levs[k]->dirty = 1;
}

/* Folds the next batch (waiting up to timeout_ms for one) and marks its event dirty;
 * whether one came. */
static int feed(struct live *l, int timeout_ms)
{
	const char *name;
	struct lev *e;

	if (!session_feed_next(l->s, timeout_ms, &name))
		return 0;
	e = lev_by_name(l, name);
	if (e)
		e->dirty = 1;
	return 1;
}

/* Active time: runs while sampling, stands still while paused or after the target
 * exited, so that the decaying window freezes instead of draining. */
static void advance_active(struct live *l, uint64_t now)
{
	if (!l->paused && !l->exited)
		l->active_ns += now - l->last_active_mark;
	l->last_active_mark = now;
}

static void ticks_clear(struct live *l)
{
	size_t i;

	for (i = 0; i < l->nticks; i++)
		free(l->ticks[i].d);
	l->nticks = 0;
	l->win_first = 0;
}

/* Records what changed since the last publication as one tick. */
static void record_deltas(struct live *l)
{
	struct tick t = { l->active_ns, 0, NULL };
	size_t cap = 0, k, i;

	for (k = 0; k < l->nlevs; k++) {
		struct lev *e = l->levs[k];
		size_t n = prof_nsamples(e->p);

		if (!e->dirty)
			continue;
		if (n > e->nlast) {
			xgrow((void **)&e->last, &e->caplast, 2 * n, sizeof(int64_t));
			memset(e->last + 2 * e->nlast, 0, 2 * (n - e->nlast) * sizeof(int64_t));
			e->nlast = n;
		}
		for (i = 0; i < n; i++) {
			struct prof_sample s;
			int64_t d0, d1;

			prof_sample_at(e->p, i, &s);
			d0 = s.values[0] - e->last[2 * i];
			d1 = s.values[1] - e->last[2 * i + 1];
			if (!d0 && !d1)
				continue;
			xgrow((void **)&t.d, &cap, t.n + 1, sizeof(*t.d));
			t.d[t.n].ev = (uint32_t)k;
			t.d[t.n].idx = (uint32_t)i;
			t.d[t.n].v[0] = d0;
			t.d[t.n].v[1] = d1;
			t.n++;
			e->last[2 * i] = s.values[0];
			e->last[2 * i + 1] = s.values[1];
		}
	}
	if (t.n) {
		/* Kept for up to an hour: no room to spare. */
		t.d = xrealloc(t.d, t.n * sizeof(*t.d));
		xgrow((void **)&l->ticks, &l->capticks, l->nticks + 1, sizeof(*l->ticks));
		l->ticks[l->nticks++] = t;
	}
	/* Forget what no window can reach any more. */
	{
		uint64_t keep = (uint64_t)GP_MAX(l->window_s, l->min_history_s) * 1000000000ULL;
		size_t drop = 0;

		while (drop < l->nticks && l->active_ns > keep && l->ticks[drop].t < l->active_ns - keep)
			free(l->ticks[drop++].d);
		if (drop) {
			memmove(l->ticks, l->ticks + drop, (l->nticks - drop) * sizeof(*l->ticks));
			l->nticks -= drop;
			l->win_first = l->win_first > drop ? l->win_first - drop : 0;
		}
	}
}

/* Event k's profile keeps only the samples keep[] marks (agg_compact); the bookkeeping
 * by sample index follows, and the history's deltas of the others go. What went is
 * counted in *gone_samples and *gone_n. 0, or the aggregator's -errno (nothing changed). */
static int compact_lev(struct live *l, size_t k, const uint8_t *keep, uint64_t *gone_samples,
		       uint64_t *gone_n)
{
	struct lev *e = l->levs[k];
	size_t n = prof_nsamples(e->p), i, j, stride, nn;
	uint32_t *idx = xmalloc((n ? n : 1) * sizeof(*idx));
	const int64_t *v = prof_values(e->p, &stride);
	uint64_t gone = 0, gone_entries = 0;
	int64_t *last;
	int r;

	for (i = 0; i < n; i++) {
		if (!keep[i]) {
			gone += (uint64_t)v[i * stride];
			gone_entries++;
		}
	}
	r = agg_compact(l->agg, e->name, keep, idx);
	if (r) {
		free(idx);
		return r;
	}
	e->p = agg_profile(l->agg, e->name);
	nn = prof_nsamples(e->p);
	last = xcalloc(2 * (nn ? nn : 1), sizeof(*last));
	for (i = 0; i < e->nlast; i++) {
		if (idx[i] != UINT32_MAX) {
			last[2 * idx[i]] = e->last[2 * i];
			last[2 * idx[i] + 1] = e->last[2 * i + 1];
		}
	}
	free(e->last);
	e->last = last;
	e->nlast = nn;
	e->caplast = 2 * (nn ? nn : 1);
	for (i = 0; i < l->nticks; i++) {
		struct tick *t = &l->ticks[i];
		size_t out = 0;

		for (j = 0; j < t->n; j++) {
			struct delta d = t->d[j];

			if (d.ev == k) {
				d.idx = d.idx < n ? idx[d.idx] : UINT32_MAX;
				if (d.idx == UINT32_MAX)
					continue;
			}
			t->d[out++] = d;
		}
		t->n = out;
	}
	free(idx);
	*gone_samples += gone;
	*gone_n += gone_entries;
	e->dirty = 1;
	l->rebuild_all = 1;
	return 0;
}

/* Which of event k's n entries a tick of the history touched (caller frees); their
 * number in *used. */
static uint8_t *touched_entries(const struct live *l, size_t k, size_t n, size_t *used)
{
	uint8_t *t = xcalloc(n ? n : 1, 1);
	size_t i, j;

	*used = 0;
	for (i = 0; i < l->nticks; i++) {
		for (j = 0; j < l->ticks[i].n; j++) {
			const struct delta *d = &l->ticks[i].d[j];

			if (d->ev == k && d->idx < n && !t[d->idx]) {
				t[d->idx] = 1;
				(*used)++;
			}
		}
	}
	return t;
}

/* With a decaying window, the entries no tick of the history touched go (see
 * FORGET_MIN_DEAD), and the memory they held is given back. */
static void forget(struct live *l)
{
	size_t k;
	int any = 0;

	for (k = 0; k < l->nlevs; k++) {
		size_t n = prof_nsamples(l->levs[k]->p), used;
		uint8_t *keep;

		if (n < FORGET_MIN_DEAD)
			continue;
		keep = touched_entries(l, k, n, &used);
		if (n - used >= FORGET_MIN_DEAD && 2 * (n - used) >= used &&
		    !compact_lev(l, k, keep, &l->forgotten, &l->forgotten_entries))
			any = 1;
		free(keep);
	}
	if (any)
		malloc_trim(0); /* glibc: free pages inside the heap go back too */
}

/* Over the memory limit, each event's profile that is large enough keeps the half of its
 * entries with the most samples (see SHED_MIN_ENTRIES). The anonymous memory is read from
 * /proc/self/statm, a few microseconds; glibc's mallinfo2 would be exact for the heap but
 * walks every free chunk with the arenas locked, tens of milliseconds on a large heap. */
static void shed(struct live *l)
{
	struct proc_mem m;
	size_t k, used;
	int any = 0;

	if (!l->o.max_mem || procinfo_self_mem(&m) || m.anon <= l->o.max_mem)
		return;
	for (k = 0; k < l->nlevs; k++) {
		struct lev *e = l->levs[k];
		size_t n = prof_nsamples(e->p);
		uint8_t *touched, *keep;

		if (n < SHED_MIN_ENTRIES || n < e->shed_floor)
			continue;
		touched = touched_entries(l, k, n, &used);
		keep = xmalloc(n);
		prof_keep_heaviest(e->p, touched, keep);
		free(touched);
		if (!compact_lev(l, k, keep, &l->shed, &l->shed_entries)) {
			any = 1;
			e->shed_floor = prof_nsamples(e->p) + prof_nsamples(e->p) / 4;
		}
		free(keep);
	}
	if (any)
		malloc_trim(0);
}

struct live_event *live_event_new(const char *name, struct prof *p)
{
	struct live_event *e = xcalloc(1, sizeof(*e));

	e->refs = 1;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->prof = p;
	e->samples = (uint64_t)prof_total(p, 0);
	return e;
}

static void set_times(struct live *l, struct prof *p, uint64_t now)
{
	uint64_t dur = now - l->start_ns;

	if (l->window_s) {
		uint64_t w = (uint64_t)l->window_s * 1000000000ULL;

		if (dur > w) {
			prof_set_time(p, (int64_t)(l->start_wall + (dur - w)), (int64_t)w);
			return;
		}
	}
	prof_set_time(p, (int64_t)l->start_wall, (int64_t)dur);
}

/* New data for every event whose view changed. */
static void rebuild_events(struct live *l, uint64_t now)
{
	size_t k, i, first;
	int moved;

	if (!l->window_s) {
		for (k = 0; k < l->nlevs; k++) {
			struct lev *e = l->levs[k];

			if (!e->dirty && e->pub && !l->rebuild_all)
				continue;
			event_put(e->pub);
			e->pub = live_event_new(e->name, prof_snapshot(e->p));
			set_times(l, e->pub->prof, now);
		}
		return;
	}

	/* Decaying window: the ticks newer than active - window. */
	{
		uint64_t w = (uint64_t)l->window_s * 1000000000ULL;

		for (first = 0; first < l->nticks; first++)
			if (l->active_ns <= w || l->ticks[first].t > l->active_ns - w)
				break;
	}
	moved = first != l->win_first;
	l->win_first = first;
	for (k = 0; k < l->nlevs; k++) {
		struct lev *e = l->levs[k];
		size_t n = prof_nsamples(e->p);
		int64_t *sum;
		struct prof *c;

		if (!e->dirty && !moved && e->pub && !l->rebuild_all)
			continue;
		sum = xcalloc(2 * (n ? n : 1), sizeof(int64_t));
		for (i = first; i < l->nticks; i++) {
			const struct tick *t = &l->ticks[i];
			size_t j;

			for (j = 0; j < t->n; j++) {
				if (t->d[j].ev != k || t->d[j].idx >= n)
					continue;
				sum[2 * t->d[j].idx] += t->d[j].v[0];
				sum[2 * t->d[j].idx + 1] += t->d[j].v[1];
			}
		}
		/* Same entries and ids as the cumulative profile, window values. */
		c = prof_snapshot(e->p);
		prof_reset_samples(c);
		for (i = 0; i < n; i++) {
			int64_t v[PROF_MAX_VALUES] = { sum[2 * i], sum[2 * i + 1] };

			if (v[0] || v[1])
				prof_set_sample_values(c, i, v);
		}
		free(sum);
		event_put(e->pub);
		e->pub = live_event_new(e->name, c);
		set_times(l, c, now);
	}
}

static int tid_cmp(const void *a, const void *b)
{
	const struct live_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Whether a known thread's name changed; the new name is queued in l->renames. */
static int renamed(struct live *l, const struct live_thread *t)
{
	struct proc_stat st;

	if (procinfo_stat(l->pid, t->tid, &st) || !strcmp(st.comm, t->comm))
		return 0;
	l->renames = xrealloc(l->renames, (l->nrenames + 1) * sizeof(*l->renames));
	l->renames[l->nrenames].tid = t->tid;
	snprintf(l->renames[l->nrenames].comm, sizeof(l->renames[0].comm), "%s", st.comm);
	l->nrenames++;
	l->names_changed = 1;
	return 1;
}

/* Names of threads not seen before (threads come and go: keep the names of the gone). */
static void update_threads(struct live *l)
{
	pid_t *tids = NULL;
	long n, i;
	size_t added = 0, old = l->names ? l->names->n : 0;
	struct tnames *t;

	n = procinfo_tasks(l->pid, &tids);
	if (n <= 0) {
		free(tids);
		return;
	}
	for (i = 0; i < n; i++) {
		struct live_thread key = { tids[i], "" }, *known = NULL;

		if (old)
			known = bsearch(&key, l->names->t, old, sizeof(key), tid_cmp);
		if (known) {
			if (l->recheck_names || l->seq % 5 == 0)
				renamed(l, known);
			continue;
		}
		tids[added++] = tids[i];
	}
	if (l->names_changed && !added) {
		/* A known thread has a new name (threads rename themselves; a command we
		 * started takes its name at exec): a new copy for the next snapshots. */
		t = xmalloc(sizeof(*t) + old * sizeof(t->t[0]));
		t->refs = 1;
		t->n = old;
		memcpy(t->t, l->names->t, old * sizeof(t->t[0]));
		for (i = 0; i < (long)l->nrenames; i++) {
			struct live_thread *x = bsearch(&l->renames[i], t->t, old, sizeof(t->t[0]), tid_cmp);

			if (x)
				*x = l->renames[i];
		}
		l->nrenames = 0;
		l->names_changed = 0;
		tnames_put(l->names);
		l->names = t;
	}
	if (!added || old + added > MAX_THREAD_NAMES) {
		free(tids);
		return;
	}
	t = xmalloc(sizeof(*t) + (old + added) * sizeof(t->t[0]));
	t->refs = 1;
	t->n = old + added;
	if (old)
		memcpy(t->t, l->names->t, old * sizeof(t->t[0]));
	for (i = 0; i < (long)added; i++) {
		struct proc_stat st;

		t->t[old + i].tid = tids[i];
		if (procinfo_stat(l->pid, tids[i], &st) == 0)
			snprintf(t->t[old + i].comm, sizeof(t->t[0].comm), "%s", st.comm);
		else
			snprintf(t->t[old + i].comm, sizeof(t->t[0].comm), "?");
	}
	qsort(t->t, t->n, sizeof(t->t[0]), tid_cmp);
	for (i = 0; i < (long)l->nrenames; i++) {
		struct live_thread *x = bsearch(&l->renames[i], t->t, t->n, sizeof(t->t[0]), tid_cmp);

		if (x)
			*x = l->renames[i];
	}
	l->nrenames = 0;
	l->names_changed = 0;
	tnames_put(l->names);
	l->names = t;
	free(tids);
}

static void update_target(struct live *l)
{
	struct proc_stat st;
	char *c;

	if (l->exited)
		return;
	if (procinfo_stat(l->pid, 0, &st) == 0) {
		/* A new process name (exec): thread names are read again. */
		l->recheck_names = strcmp(l->comm, st.comm) != 0;
		snprintf(l->comm, sizeof(l->comm), "%s", st.comm);
	}
	/* The command line changes at exec, which mostly changes the name too: it is read
	 * again when the name changed, until a command we started is ready (it shows our
	 * own command line until it has exec'd), and every 10th refresh for an exec that
	 * kept the name: reading it at every refresh was a visible part of the live UI's
	 * CPU at low sampling rates. */
	if (!l->cmdline || l->recheck_names || !l->ready || l->seq % 10 == 0) {
		c = procinfo_cmdline(l->pid, 1024);
		if (c) {
			free(l->cmdline);
			l->cmdline = c;
		}
	}
	update_threads(l);
	l->recheck_names = 0;
}

static const char *type_name(const struct prof *p, size_t i)
{
	const struct prof_value_type *t;
	size_t n = prof_sample_types(p, &t);
	const char *s = i < n ? prof_string(p, t[i].type, NULL) : NULL;

	return s ? s : "";
}

static const char *unit_name(const struct prof *p, size_t i)
{
	const struct prof_value_type *t;
	size_t n = prof_sample_types(p, &t);
	const char *s = i < n ? prof_string(p, t[i].unit, NULL) : NULL;

	return s ? s : "";
}

/* The column that counts what sample type t measures: the "count" column of the same
 * kind (inuse_objects for inuse_space, alloc_objects for alloc_space, samples for cpu,
 * contentions for delay), else t itself. */
static size_t count_col(const struct prof *p, size_t t)
{
	size_t i, n = prof_sample_types(p, NULL);
	const char *tn = type_name(p, t), *us = strchr(tn, '_');
	size_t any = t;
	int found = 0;

	if (!strcmp(unit_name(p, t), "count"))
		return t;
	for (i = 0; i < n; i++) {
		if (strcmp(unit_name(p, i), "count"))
			continue;
		if (us && !strncmp(type_name(p, i), tn, (size_t)(us - tn) + 1))
			return i;
		if (!found) {
			any = i;
			found = 1;
		}
	}
	return any;
}

/* The id of string str in p, or 0 when p does not hold it (a scan: a profile holds a few
 * strings per function). */
static uint32_t find_string(const struct prof *p, const char *str)
{
	for (size_t i = 1; i < prof_nstrings(p); i++) {
		const char *s = prof_string(p, (uint32_t)i, NULL);

		if (s && !strcmp(s, str))
			return (uint32_t)i;
	}
	return 0;
}

struct prof *live_type_view(const struct prof *p, size_t t, const int64_t *extra,
			    const char *extra_type, const char *extra_unit)
{
	const struct prof_value_type *types;
	size_t stride, i, c = count_col(p, t), n = prof_nsamples(p);
	const int64_t *v = prof_values(p, &stride);
	struct prof *q;
	struct prof_value_type vt[3];
	int64_t *old;

	prof_sample_types(p, &types);
	old = v ? xmalloc((n ? n : 1) * stride * sizeof(*old)) : NULL;
	if (old)
		memcpy(old, v, n * stride * sizeof(*old));
	vt[0] = types[c];
	vt[1] = types[t];
	if (extra) {
		vt[2].type = find_string(p, extra_type);
		vt[2].unit = find_string(p, extra_unit);
	}
	/* A copy sharing p's tables costs only its values; one that must intern the third
	 * column's names is a deep copy (the heap source interns them for this). */
	if (!extra || (vt[2].type && vt[2].unit)) {
		q = prof_snapshot(p);
	} else {
		q = prof_clone(p);
		vt[2].type = prof_str(q, extra_type);
		vt[2].unit = prof_str(q, extra_unit);
	}
	prof_set_sample_types(q, vt, extra ? 3 : 2);
	for (i = 0; old && i < n; i++) {
		int64_t nv[3] = { old[i * stride + c], old[i * stride + t], extra ? extra[i] : 0 };

		prof_set_sample_values(q, i, nv);
	}
	free(old);
	return q;
}

/* The session's latest heap profile, when a new one came: an event per sample type,
 * each with the allocation rate beside. On the worker's thread; the reading of the
 * target is the source's own thread's. */
static void update_mem(struct live *l)
{
	const struct session_mem *d;
	size_t k, nt;
	int64_t *rate;

	if (!(session_options(l->s)->sources & SESSION_MEM))
		return;
	l->mem.on = 1;
	l->mem.gc_per_s = session_mem_gc_rate(l->s);
	d = session_mem_get(l->s, 0);
	if (!d || d->seq == l->mem_seq) {
		session_mem_put(d);
		return;
	}
	l->mem_seq = d->seq;
	l->mem.err = d->err;
	snprintf(l->mem.why, sizeof(l->mem.why), "%s", d->why);
	if (!d->p) {
		/* None kept, or the target is gone: the last events stay, said stale by age. */
		session_mem_put(d);
		return;
	}
	l->mem.have = 1;
	l->mem.inuse_bytes = d->inuse_bytes;
	l->mem.cycle_ns = d->cycle_ns;
	l->mem.rate_ns = d->alloc_rate ? d->rate_ns : 0;
	l->mem.cycle = d->cycle;
	l->mem.dropped = d->st.dropped;
	for (k = 0; k < l->nmev; k++)
		event_put(l->mev[k]);
	nt = GP_MIN(prof_sample_types(d->p, NULL), GP_ARRAY_SIZE(l->mev));
	/* The column is there from the first copy, zero until a second one gives a rate. */
	rate = d->alloc_rate ? d->alloc_rate : xcalloc(prof_nsamples(d->p) + 1, sizeof(*rate));
	for (k = 0; k < nt; k++) {
		struct prof *q = live_type_view(d->p, k, rate, "alloc_rate", "bytes/s");

		l->mev[k] = live_event_new(type_name(d->p, k), q);
		l->mev[k]->mem = 1;
	}
	l->nmev = nt;
	if (rate != d->alloc_rate)
		free(rate);
	session_mem_put(d);
}

static void publish(struct live *l, int periodic)
{
	struct live_snapshot *s = xcalloc(1, sizeof(*s)), *old;
	uint64_t now = util_now_ns(), cpu = procinfo_self_cpu_ns();
	double dt;
	size_t k;

	flush_held(l, 0);
	advance_active(l, now);
	record_deltas(l);
	if (l->window_s)
		forget(l);
	shed(l);
	rebuild_events(l, now);
	for (k = 0; k < l->nlevs; k++)
		l->levs[k]->dirty = 0;
	l->rebuild_all = 0;
	update_target(l);

	s->refs = 1;
	s->seq = ++l->seq;
	s->periodic = periodic;
	s->pid = l->pid;
	snprintf(s->comm, sizeof(s->comm), "%s", l->comm);
	s->cmdline = xstrdup(l->cmdline ? l->cmdline : "");
	session_stats(l->s, 0, &s->sst, &s->ast);
	/* Only after the first sample: before the exec of a command we started, the
	 * executable is still our own. */
	if (l->ready || s->ast.samples) {
		const char *v = session_go_version(l->s);

		if (v)
			s->go_version = xstrdup(v);
	}
	update_mem(l);
	s->memory = l->mem;
	s->nevents = l->nlevs + l->nmev;
	s->events = xcalloc(s->nevents ? s->nevents : 1, sizeof(*s->events));
	for (k = 0; k < s->nevents; k++) {
		s->events[k] = k < l->nlevs ? l->levs[k]->pub : l->mev[k - l->nlevs];
		__atomic_add_fetch(&s->events[k]->refs, 1, __ATOMIC_ACQ_REL);
	}
	snprintf(s->event, sizeof(s->event), "%s", l->event.name);
	s->use_freq = l->use_freq;
	s->freq = l->freq;
	s->period = l->period;
	s->paused = l->paused;
	s->exited = l->exited;
	s->window_s = l->window_s;
	s->forgotten = l->forgotten;
	s->forgotten_entries = l->forgotten_entries;
	s->shed = l->shed;
	s->shed_entries = l->shed_entries;
	s->max_mem = l->o.max_mem;
	procinfo_self_mem(&s->mem);
	s->elapsed_ns = now - l->start_ns;
	s->start_wall_ns = l->start_wall;
	dt = (double)(now - l->last_pub_ns) / 1e9;
	if (dt > 0.001) {
		s->samples_per_s = (double)(s->sst.samples - l->last_samples) / dt;
		s->self_cpu_pct = (double)(cpu - l->last_self_cpu) / 1e9 / dt * 100.0;
	}
	l->last_pub_ns = now;
	l->last_samples = s->sst.samples;
	l->last_self_cpu = cpu;
	s->lost = s->sst.lost + s->sst.dropped;
	if (l->names) {
		__atomic_add_fetch(&l->names->refs, 1, __ATOMIC_ACQ_REL);
		s->nthreads = l->names->n;
		s->threads = l->names->t;
	}
	s->reply_seq = l->reply_seq;
	s->reply_err = l->reply_err;
	snprintf(s->reply, sizeof(s->reply), "%s", l->reply);

	pthread_mutex_lock(&l->lock);
	old = l->cur;
	l->cur = s;
	pthread_mutex_unlock(&l->lock);
	live_snapshot_put(old);
	{
		uint64_t one = 1;

		if (write(l->efd, &one, sizeof(one)) < 0) {
			/* the counter is saturated: the reader is awake anyway */
		}
	}
}

static void reply(struct live *l, uint64_t seq, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply(struct live *l, uint64_t seq, int err, const char *fmt, ...)
{
	va_list ap;

	l->reply_seq = seq;
	l->reply_err = err;
	va_start(ap, fmt);
	vsnprintf(l->reply, sizeof(l->reply), fmt, ap);
	va_end(ap);
}

static void zero(struct live *l)
{
	size_t k;

	flush_held(l, 1); /* held samples are from before the zero too */
	ticks_clear(l);
	for (k = 0; k < l->nlevs; k++) {
		struct lev *e = l->levs[k];
		size_t n = prof_nsamples(e->p);
		uint8_t *none = xcalloc(n ? n : 1, 1);

		/* Every entry goes, and its memory with it; when the aggregator cannot now,
		 * the entries stay with zero counts. */
		if (compact_lev(l, k, none, &l->forgotten, &l->forgotten_entries)) {
			prof_reset_samples(e->p);
			if (e->nlast)
				memset(e->last, 0, 2 * e->nlast * sizeof(int64_t));
		}
		free(none);
		e->dirty = 1;
	}
	l->forgotten = l->forgotten_entries = 0;
	l->shed = l->shed_entries = 0;
	for (k = 0; k < l->nlevs; k++)
		l->levs[k]->shed_floor = 0;
	malloc_trim(0);
	l->rebuild_all = 1;
}

static void handle(struct live *l, const struct request *r)
{
	switch (r->kind) {
	case LIVE_REQ_EVENT:
	case LIVE_REQ_FREQ:
	case LIVE_REQ_PERIOD: {
		const struct event_spec *ev = r->kind == LIVE_REQ_EVENT ? &r->ev : &l->event;
		int use_freq = r->kind == LIVE_REQ_EVENT ? l->use_freq : r->kind == LIVE_REQ_FREQ;
		uint64_t value = r->kind == LIVE_REQ_EVENT ? (l->use_freq ? l->freq : l->period) : r->value;
		char err[256];
		int rc;

		if (l->exited) {
			reply(l, r->seq, -ESRCH, "the target has exited: nothing to sample");
			break;
		}
		err[0] = 0;
		rc = session_set_event(l->s, ev, use_freq, value, err, sizeof(err));
		if (rc) {
			const char *why = err[0] ? err : strerror(-rc);
			size_t nl = strlen(ev->name);

			/* The reason usually names the event already. */
			if (!strncmp(why, ev->name, nl) && !strncmp(why + nl, ": ", 2))
				why += nl + 2;
			if (r->kind == LIVE_REQ_EVENT)
				reply(l, r->seq, rc, "cannot sample %s (still sampling %s): %s", ev->name,
				      l->event.name, why);
			else
				reply(l, r->seq, rc, "cannot change the rate of %s (unchanged): %s",
				      ev->name, why);
			break;
		}
		l->event = *ev;
		l->use_freq = use_freq;
		if (use_freq)
			l->freq = value;
		else
			l->period = value;
		if (r->kind == LIVE_REQ_EVENT)
			reply(l, r->seq, 0, "now sampling %s", ev->name);
		else
			reply(l, r->seq, 0, "%s: %s %llu", ev->name, use_freq ? "frequency (Hz)" : "period",
			      (unsigned long long)value);
		break;
	}
	case LIVE_REQ_PAUSE:
		if (l->exited) {
			reply(l, r->seq, -ESRCH, "the target has exited");
			break;
		}
		advance_active(l, util_now_ns());
		session_pause(l->s, r->value != 0);
		l->paused = r->value != 0;
		reply(l, r->seq, 0, l->paused ? "paused" : "resumed");
		break;
	case LIVE_REQ_ZERO:
		zero(l);
		reply(l, r->seq, 0, "counts zeroed");
		break;
	case LIVE_REQ_WINDOW:
		l->window_s = (unsigned)GP_MIN(r->value, (uint64_t)LIVE_MAX_WINDOW);
		l->rebuild_all = 1;
		if (l->window_s)
			reply(l, r->seq, 0, "window: last %u s", l->window_s);
		else
			reply(l, r->seq, 0, "window: cumulative");
		break;
	case LIVE_REQ_PUBLISH:
		reply(l, r->seq, 0, "%s", "");
		break;
	}
}

/* Every sample up to now, from the rings at once, for a refresh: the sampling thread
 * itself drains only every 500 ms (or at 3/4 of a ring) and hands batches on every second,
 * so that it wakes seldom. */
static void take_all(struct live *l)
{
	session_flush(l->s);
	while (feed(l, 0))
		;
}

static void *worker(void *arg)
{
	struct live *l = arg;
	sigset_t all;
	uint64_t next = util_now_ns() + l->o.refresh_ns;
	/* One early refresh as soon as there is data (0: done or not wanted). */
	uint64_t early = l->o.refresh_ns > 2 * FIRST_REFRESH_NS ? l->start_ns + FIRST_REFRESH_NS : 0;
	int lazy = 0;

	/* Signals (Ctrl-C, SIGWINCH) are for the UI thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);

	for (;;) {
		struct request req[MAX_REQUESTS];
		size_t nreq, i;
		uint64_t now = util_now_ns();
		/* Past the early time, a batch arriving wakes the wait anyway. Requests and
		 * stop kick the wait (session_kick): it lasts until the refresh is due. */
		uint64_t due = early && now < early && early < next ? early : next;
		int wait_ms = now >= due ? 0 : (int)GP_MIN((due - now) / 1000000 + 1, 1000);

		if (!early && !lazy) {
			/* After the first data, batches wait for the refresh (take_all) unless
			 * many come: the worker would wake for each one besides the refresh. */
			session_set_wake_bytes(l->s, SAMPLER_LAZY_WAKE_BYTES);
			lazy = 1;
		}
		if (!l->exited) {
			if (feed(l, wait_ms)) {
				/* folded */
			} else if (session_exited(l->s)) {
				/* The sampler drained the rings before it stopped. */
				while (feed(l, 0))
					;
				flush_held(l, 1);
				advance_active(l, util_now_ns());
				l->exited = 1;
				next = 0;
			}
		} else {
			struct timespec ts;

			pthread_mutex_lock(&l->lock);
			if (!l->stop && !l->nreq) {
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += (long)wait_ms * 1000000L;
				ts.tv_sec += ts.tv_nsec / 1000000000L;
				ts.tv_nsec %= 1000000000L;
				pthread_cond_timedwait(&l->cond, &l->lock, &ts);
			}
			pthread_mutex_unlock(&l->lock);
		}

		pthread_mutex_lock(&l->lock);
		if (l->stop) {
			pthread_mutex_unlock(&l->lock);
			break;
		}
		nreq = l->nreq;
		memcpy(req, l->req, nreq * sizeof(req[0]));
		l->nreq = 0;
		pthread_mutex_unlock(&l->lock);

		for (i = 0; i < nreq; i++)
			handle(l, &req[i]);
		now = util_now_ns();
		if (early && now >= early && !l->exited) {
			size_t k;

			take_all(l);
			for (k = 0; k < l->nlevs && !l->levs[k]->dirty; k++)
				;
			if (k < l->nlevs) {
				early = 0;
				if (now < next) {
					publish(l, 1);
					/* The first data is out: the kernel's symbols load now
					 * rather than at the first kernel frame, which on a
					 * target that seldom enters the kernel may come at any
					 * time, costing CPU in the steady state with its
					 * samples held meanwhile. */
					agg_kernel_prefetch(l->agg);
					continue;
				}
			}
		}
		if (nreq || now >= next) {
			if (now >= next && !l->exited)
				take_all(l);
			publish(l, now >= next);
			if (now >= next) {
				agg_kernel_prefetch(l->agg); /* as above (then a no-op) */
				next = (next && now - next < l->o.refresh_ns) ? next + l->o.refresh_ns
									    : now + l->o.refresh_ns;
			}
		}
	}
	return NULL;
}

/* --- public --- */

struct live *live_new(const struct live_opts *o, struct session *s, char *err, size_t errlen)
{
	struct live *l = xcalloc(1, sizeof(*l));
	const struct session_opts *so = session_options(s);

	l->o = *o;
	if (l->o.refresh_ns < 10000000ULL)
		l->o.refresh_ns = 10000000ULL;
	l->s = s;
	l->agg = session_agg(s);
	l->pid = session_info(s)->pid;
	l->efd = -1;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->efd < 0) {
		int e = errno;

		snprintf(err, errlen, "eventfd: %s", strerror(e));
		live_free(l);
		errno = e;
		return NULL;
	}
	l->event = so->events[0];
	l->use_freq = so->use_freq;
	l->freq = so->freq;
	l->period = so->period;
	l->window_s = GP_MIN(o->window_s, LIVE_MAX_WINDOW);
	l->min_history_s = MIN_HISTORY_S;
	{
		const char *h = getenv("GOTOP_PERF_MIN_HISTORY");
		char *end = NULL;
		unsigned long v = h && *h ? strtoul(h, &end, 10) : 0;

		if (v >= 1 && v <= LIVE_MAX_WINDOW && !*end)
			l->min_history_s = (unsigned)v;
	}
	return l;
}

int live_start(struct live *l, struct session_err *e)
{
	int r;

	l->start_ns = l->last_active_mark = l->last_pub_ns = util_now_ns();
	l->start_wall = util_wall_ns();
	l->last_self_cpu = procinfo_self_cpu_ns();
	/* A command we started is ready once it has exec'd: until then its executable is
	 * still our own. */
	l->ready = !session_info(l->s)->spawned;
	if (l->ready)
		session_go_version(l->s);
	/* A first, empty snapshot: the UI can draw its frame at once. */
	publish(l, 0);
	r = session_start(l->s, NULL, e);
	if (r)
		return r;
	if (!l->ready) {
		/* The goroutine reads start now rather than at the first sample. */
		l->ready = 1;
		session_go_version(l->s);
		/* A snapshot shows the command as it exec'd. */
		live_request(l, LIVE_REQ_PUBLISH, NULL, 0);
	}
	r = pthread_create(&l->thread, NULL, worker, l);
	if (r) {
		snprintf(e->why, sizeof(e->why), "cannot start the worker thread: %s", strerror(r));
		e->kind = SESSION_FAIL_SYSTEM;
		return -r;
	}
	pthread_setname_np(l->thread, "gotop-worker"); /* as top -H and perf show threads */
	l->started = 1;
	return 0;
}

const struct session_info *live_session_info(const struct live *l)
{
	return session_info(l->s);
}

struct session *live_session(struct live *l)
{
	return l->s;
}

int live_target_status(struct live *l)
{
	return session_target_status(l->s);
}

uint64_t live_request(struct live *l, enum live_req_kind kind, const struct event_spec *ev,
		      uint64_t value)
{
	uint64_t seq;

	pthread_mutex_lock(&l->lock);
	seq = ++l->req_seq;
	if (l->nreq == MAX_REQUESTS) {
		/* The worker is far behind: the oldest request gives way. */
		memmove(l->req, l->req + 1, (MAX_REQUESTS - 1) * sizeof(l->req[0]));
		l->nreq--;
	}
	l->req[l->nreq].seq = seq;
	l->req[l->nreq].kind = kind;
	if (ev)
		l->req[l->nreq].ev = *ev;
	l->req[l->nreq].value = value;
	l->nreq++;
	pthread_cond_signal(&l->cond);
	pthread_mutex_unlock(&l->lock);
	if (l->s)
		session_kick(l->s);
	return seq;
}

void live_stop(struct live *l)
{
	if (!l)
		return;
	if (l->started) {
		pthread_mutex_lock(&l->lock);
		l->stop = 1;
		pthread_cond_signal(&l->cond);
		pthread_mutex_unlock(&l->lock);
		session_kick(l->s);
		pthread_join(l->thread, NULL);
		l->started = 0;
	}
	if (l->s)
		session_stop(l->s, 0);
}

void live_free(struct live *l)
{
	size_t k;

	if (!l)
		return;
	live_stop(l);
	for (k = 0; k < l->nlevs; k++) {
		event_put(l->levs[k]->pub);
		free(l->levs[k]->last);
		free(l->levs[k]);
	}
	free(l->levs);
	for (k = 0; k < l->nmev; k++)
		event_put(l->mev[k]);
	ticks_clear(l);
	free(l->ticks);
	tnames_put(l->names);
	free(l->renames);
	free(l->cmdline);
	live_snapshot_put(l->cur);
	session_free(l->s); /* the snapshots' profiles are copies: they stay valid */
	if (l->efd >= 0)
		close(l->efd);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	free(l);
}
