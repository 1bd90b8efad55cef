/* goroutines.c: the session's snapshots of every goroutine (gosnap.h), for the views and
 * commands that show the goroutines now. A thread of its own makes the reader (with a
 * symbolizer of its own: a symbolizer serves one thread), takes a snapshot when one is
 * asked for, names the pcs it holds, and publishes a copy by pointer swap under a mutex;
 * a consumer takes a reference under the same mutex. So the UI thread never reads the
 * target, and waits for a snapshot only when it asks to (--batch prints each refresh's). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/hashmap.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"
#include "session-int.h"

/* Inlined frames kept per pc. */
#define NAME_FRAMES 16

/* The frames of one pc: frames[first .. first + n) of the data's array. */
struct session_gname {
	uint64_t pc;
	uint32_t first, n;
};

/* The names of one pc, made once by the thread (strings borrowed from its symbolizer). */
struct named {
	int n;
	struct sym_frame f[NAME_FRAMES];
};

struct gsrc {
	pid_t pid;
	size_t max_g;
	pthread_t th;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t wake;      /* the thread: a snapshot is asked for, or stop */
	pthread_cond_t done;      /* the waiters: a snapshot was published */
	uint64_t asked, taken;    /* under lock: snapshots asked for and published */
	int stop;                 /* under lock */
	struct session_goroutines *cur; /* under lock */
	/* The thread's own. */
	struct symbolizer *sym;
	struct gosnap *snap;
	int reader_rc;            /* 0, or why there is no reader (session_goroutines.rc) */
	char reader_why[256];
	struct hashmap by_pc;     /* pc -> index + 1 into names */
	struct named *names;
	size_t nnames, capnames;
};

void session_goroutines_put(const struct session_goroutines *cd)
{
	struct session_goroutines *d = (struct session_goroutines *)cd;

	if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(d->r.g);
		free(d->r.pcs);
		free(d->names);
		free(d->frames);
		free(d);
	}
}

static const struct named *name_pc(struct gsrc *g, uint64_t pc)
{
	int created;
	uint64_t *slot = hashmap_put(&g->by_pc, pc, &created);
	struct named *nm;
	int n;

	if (!created)
		return &g->names[*slot - 1];
	xgrow((void **)&g->names, &g->capnames, g->nnames + 1, sizeof(*g->names));
	nm = &g->names[g->nnames++];
	*slot = g->nnames;
	n = symbolizer_lookup(g->sym, pc, 1, NULL, nm->f, NAME_FRAMES);
	nm->n = n > 0 ? n : 0;
	return nm;
}

static int cmp_name(const void *a, const void *b)
{
	const struct session_gname *x = a, *y = b;

	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* The names of every pc of d's stacks and of its goroutines' creators, sorted by pc. */
static void name_all(struct gsrc *g, struct session_goroutines *d)
{
	struct hashmap seen = { 0 };
	size_t nf = 0, capf = 0, cap = 0;

	for (size_t i = 0; i < d->r.n; i++) {
		const struct gosnap_g *gr = &d->r.g[i];

		for (uint32_t f = 0; f <= gr->nframes; f++) {
			uint64_t pc = f < gr->nframes ? d->r.pcs[gr->frame0 + f] : gr->gopc;
			const struct named *nm;
			int created;

			if (!pc)
				continue;
			hashmap_put(&seen, pc, &created);
			if (!created)
				continue;
			nm = name_pc(g, pc);
			xgrow((void **)&d->names, &cap, d->nnames + 1, sizeof(*d->names));
			xgrow((void **)&d->frames, &capf, nf + (size_t)nm->n + 1, sizeof(*d->frames));
			d->names[d->nnames++] = (struct session_gname){ pc, (uint32_t)nf, (uint32_t)nm->n };
			memcpy(d->frames + nf, nm->f, (size_t)nm->n * sizeof(*nm->f));
			nf += (size_t)nm->n;
		}
	}
	hashmap_free(&seen);
	if (d->nnames)
		qsort(d->names, d->nnames, sizeof(*d->names), cmp_name);
}

int session_goroutines_frames(const struct session_goroutines *d, uint64_t pc, struct sym_frame *f,
			      int max)
{
	size_t lo = 0, hi = d ? d->nnames : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct session_gname *nm = &d->names[mid];

		if (nm->pc == pc) {
			int n = (int)GP_MIN(nm->n, (uint32_t)(max > 0 ? max : 0));

			memcpy(f, d->frames + nm->first, (size_t)n * sizeof(*f));
			return n;
		}
		if (nm->pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Makes the reader, on the thread (its symbolizer is the thread's). */
static void make_reader(struct gsrc *g)
{
	struct symfile *sf;

	g->sym = symbolizer_new(g->pid);
	sf = symbolizer_main_file(g->sym);
	if (!sf) {
		g->reader_rc = -ENOEXEC;
		snprintf(g->reader_why, sizeof(g->reader_why), "cannot open the target's executable");
		return;
	}
	g->snap = gosnap_new(g->pid, sf, g->reader_why, sizeof(g->reader_why));
	if (!g->snap)
		g->reader_rc = -(errno ? errno : ENODEV);
}

/* One snapshot into new data (its reference the caller's). */
static struct session_goroutines *take(struct gsrc *g)
{
	struct session_goroutines *d = xcalloc(1, sizeof(*d));
	struct gosnap_result r;
	int rc;

	d->refs = 1;
	if (!g->snap) {
		d->rc = g->reader_rc;
		snprintf(d->why, sizeof(d->why), "%s", g->reader_why);
		return d;
	}
	d->reader = 1;
	rc = gosnap_take(g->snap, g->max_g, &r);
	if (rc) {
		d->rc = rc;
		snprintf(d->why, sizeof(d->why), "%s",
			 rc == -EAGAIN ? "the Go runtime has not started yet"
			 : rc == -ESRCH ? "the target has exited" : strerror(-rc));
		return d;
	}
	/* The reader's arrays change at its next snapshot: the data has copies. */
	d->r = r;
	d->r.g = xmalloc((r.n ? r.n : 1) * sizeof(*r.g));
	memcpy(d->r.g, r.g, r.n * sizeof(*r.g));
	{
		size_t npcs = 0;

		for (size_t i = 0; i < r.n; i++)
			npcs = GP_MAX(npcs, (size_t)r.g[i].frame0 + r.g[i].nframes);
		d->r.pcs = xmalloc((npcs ? npcs : 1) * sizeof(*r.pcs));
		memcpy(d->r.pcs, r.pcs, npcs * sizeof(*r.pcs));
	}
	name_all(g, d);
	return d;
}

static void *gsrc_main(void *arg)
{
	struct gsrc *g = arg;

	make_reader(g);
	pthread_mutex_lock(&g->lock);
	for (;;) {
		struct session_goroutines *d, *old;
		uint64_t asked;

		while (!g->stop && g->taken == g->asked)
			pthread_cond_wait(&g->wake, &g->lock);
		if (g->stop)
			break;
		asked = g->asked;
		pthread_mutex_unlock(&g->lock);
		d = take(g);
		pthread_mutex_lock(&g->lock);
		d->seq = asked;
		old = g->cur;
		g->cur = d;
		g->taken = asked;
		pthread_cond_broadcast(&g->done);
		pthread_mutex_unlock(&g->lock);
		session_goroutines_put(old);
		pthread_mutex_lock(&g->lock);
	}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

struct gsrc *gsrc_new(pid_t pid, size_t max_g)
{
	struct gsrc *g = xcalloc(1, sizeof(*g));
	pthread_condattr_t ca;

	g->pid = pid;
	g->max_g = max_g;
	pthread_mutex_init(&g->lock, NULL);
	/* The waits are on CLOCK_MONOTONIC, util_now_ns's clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g->wake, &ca);
	pthread_cond_init(&g->done, &ca);
	pthread_condattr_destroy(&ca);
	g->started = pthread_create(&g->th, NULL, gsrc_main, g) == 0;
	if (g->started)
		pthread_setname_np(g->th, "gotop-gsnap"); /* as top -H and perf show threads */
	return g;
}

static struct session_goroutines *hold(struct session_goroutines *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
	return d;
}

const struct session_goroutines *gsrc_get(struct gsrc *g, int wait_ms)
{
	struct session_goroutines *d;
	uint64_t want;

	pthread_mutex_lock(&g->lock);
	if (!g->started) {
		/* No thread: say so as a reader that could not be made. */
		pthread_mutex_unlock(&g->lock);
		d = xcalloc(1, sizeof(*d));
		d->refs = 1;
		d->rc = -EAGAIN;
		snprintf(d->why, sizeof(d->why), "cannot start the goroutine reader's thread");
		return d;
	}
	want = ++g->asked;
	pthread_cond_signal(&g->wake);
	if (wait_ms) {
		struct timespec ts;
		uint64_t until = util_now_ns() + (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000ULL;

		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		while (g->taken < want) {
			if (wait_ms < 0)
				pthread_cond_wait(&g->done, &g->lock);
			else if (pthread_cond_timedwait(&g->done, &g->lock, &ts) == ETIMEDOUT)
				break;
		}
	}
	d = hold(g->cur);
	pthread_mutex_unlock(&g->lock);
	return d;
}

void gsrc_free(struct gsrc *g)
{
	if (!g)
		return;
	if (g->started) {
		pthread_mutex_lock(&g->lock);
		g->stop = 1;
		pthread_cond_signal(&g->wake);
		pthread_mutex_unlock(&g->lock);
		pthread_join(g->th, NULL);
	}
	session_goroutines_put(g->cur);
	gosnap_free(g->snap);
	symbolizer_free(g->sym);
	hashmap_free(&g->by_pc);
	free(g->names);
	pthread_cond_destroy(&g->wake);
	pthread_cond_destroy(&g->done);
	pthread_mutex_destroy(&g->lock);
	free(g);
}
