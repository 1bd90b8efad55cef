/* wall.c: the session's wall-clock sampler, for its two kinds of consumer: record --wall,
 * which writes the profile at the end, and the live UI, which reads copies published after
 * each tick. A thread of its own runs gowall_tick at the rate asked for and, when it
 * publishes, makes a prof_snapshot of the wall profile and swaps it in by pointer under a
 * mutex; a reader takes a reference under the same mutex (a pointer copy), so it never
 * waits while a snapshot of the goroutines is read. The snapshots read the target with
 * process_vm_readv only (gosnap.h): no thread of the target is ever stopped. The thread
 * has a symbolizer of its own: a symbolizer serves one thread (gowall_new). It sets itself
 * up (the executable's tables, the runtime's list of goroutines) before its first tick,
 * so that the session's start, and the live session's first data, do not wait for it. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/gowall.h"
#include "gotop/profile.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"
#include "session-int.h"

struct wallsrc {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* signalled to stop the thread's wait between ticks */
	pthread_cond_t set_up;     /* signalled once the thread is set up, or failed to be */
	int stop, zero;            /* under lock */
	uint64_t zero_ns;          /* when zero was asked for (under lock) */
	int ready, ok;             /* under lock: the thread is set up (ok), or failed (why) */
	char why[256];
	pid_t pid;
	struct gowall_oncpu *oncpu;
	int joined;
	int publish;               /* copies for wallsrc_get after each tick */
	struct session_wall *cur;  /* under lock */
	struct symbolizer *sym;
	struct gowall *w;
	double hz;
	/* The share of a core the snapshots may take (0: no limit), and the mean interval
	 * between ticks that keeps them under it, never below 1/hz (ns; the wall thread's). */
	double max_cpu;
	uint64_t step;
	struct gowall_stats base; /* the counts at the last zero */
	uint64_t t0;              /* start or last zero, util_now_ns */
	/* One published copy a second, oldest first, for windows (under lock). */
	struct session_wall **hist;
	size_t nhist, caphist;
	unsigned keep_s; /* the longest window asked for (under lock) */
	int hist_cut;    /* copies since the start or zero were let go (under lock) */
};

void session_wall_put(const struct session_wall *cd)
{
	struct session_wall *d = (struct session_wall *)cd;

	if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		prof_free(d->p);
		free(d);
	}
}

static struct session_wall *hold(struct session_wall *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
	return d;
}

const struct session_wall *wallsrc_get(struct wallsrc *lw, unsigned window_s,
				       const struct session_wall **base)
{
	struct session_wall *d, *b = NULL;

	if (base)
		*base = NULL;
	if (!lw)
		return NULL;
	pthread_mutex_lock(&lw->lock);
	d = hold(lw->cur);
	if (window_s > lw->keep_s)
		lw->keep_s = window_s;
	if (d && base && window_s) {
		uint64_t w = (uint64_t)window_s * 1000000000ULL;

		/* The newest copy at least window_s older than d; else, when the history no
		 * longer starts at the start or zero, the oldest (a shorter window); else none:
		 * all of it is in the window. */
		for (size_t i = 0; i < lw->nhist && lw->hist[i] != d; i++) {
			if (lw->hist[i]->at_ns + w > d->at_ns) {
				if (!i && lw->hist_cut)
					b = lw->hist[0];
				break;
			}
			b = lw->hist[i];
		}
		*base = hold(b);
	}
	pthread_mutex_unlock(&lw->lock);
	return d;
}

/* Takes the n oldest copies out of the history (under lock) into a new array, which the
 * caller lets go of after the lock (hist_put): the UI never waits for their free. */
static struct session_wall **hist_take(struct wallsrc *lw, size_t n)
{
	struct session_wall **out = xmalloc((n ? n : 1) * sizeof(*out));

	if (n == 0)
		return out; /* the history may not exist yet: memcpy wants a pointer */
	memcpy(out, lw->hist, n * sizeof(*out));
	memmove(lw->hist, lw->hist + n, (lw->nhist - n) * sizeof(*lw->hist));
	lw->nhist -= n;
	return out;
}

static void hist_put(struct session_wall **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		session_wall_put(v[i]);
	free(v);
}

void wallsrc_zero(struct wallsrc *lw)
{
	if (!lw)
		return;
	pthread_mutex_lock(&lw->lock);
	lw->zero = 1;
	lw->zero_ns = util_now_ns();
	pthread_mutex_unlock(&lw->lock);
}

/* Makes the profile as it is now the one readers get. */
static void publish(struct wallsrc *lw, int gone)
{
	struct session_wall *d = xcalloc(1, sizeof(*d)), *old, **gone_v = NULL;
	struct gowall_stats st;
	size_t ngone = 0;

	gowall_get_stats(lw->w, &st);
	d->p = prof_snapshot(gowall_profile(lw->w));
	d->hz = 1e9 / (double)lw->step;
	d->ticks = st.ticks - lw->base.ticks;
	d->failed = st.failed - lw->base.failed;
	d->torn = st.torn - lw->base.torn;
	d->wall_ns = st.wall_ns - lw->base.wall_ns;
	d->at_ns = util_now_ns();
	d->span_ns = d->at_ns - lw->t0;
	d->gone = gone;
	d->refs = 1;
	pthread_mutex_lock(&lw->lock);
	old = lw->cur;
	lw->cur = d;
	if (!lw->nhist || d->at_ns >= lw->hist[lw->nhist - 1]->at_ns + 1000000000ULL) {
		uint64_t keep = (uint64_t)GP_MAX(lw->keep_s, SESSION_WALL_HISTORY) + 2;
		size_t n = 0;

		while (n < lw->nhist && lw->hist[n]->at_ns + keep * 1000000000ULL < d->at_ns)
			n++;
		gone_v = hist_take(lw, n);
		ngone = n;
		lw->hist_cut |= n > 0;
		xgrow((void **)&lw->hist, &lw->caphist, lw->nhist + 1, sizeof(*lw->hist));
		lw->hist[lw->nhist++] = hold(d);
	}
	pthread_mutex_unlock(&lw->lock);
	session_wall_put(old);
	if (gone_v)
		hist_put(gone_v, ngone);
}

/* The thread's set-up: its symbolizer and gowall; whether it worked goes to wallsrc_ready. */
static int set_up(struct wallsrc *lw)
{
	char why[sizeof(lw->why)];
	int ok;

	lw->sym = symbolizer_new(lw->pid);
	lw->w = gowall_new(lw->pid, lw->sym, lw->hz, why, sizeof(why));
	ok = lw->w != NULL;
	if (ok && lw->oncpu)
		gowall_set_oncpu(lw->w, lw->oncpu);
	lw->t0 = util_now_ns();
	pthread_mutex_lock(&lw->lock);
	lw->ready = 1;
	lw->ok = ok;
	if (!ok)
		memcpy(lw->why, why, sizeof(why));
	pthread_cond_broadcast(&lw->set_up);
	pthread_mutex_unlock(&lw->lock);
	return ok;
}

static void *wall_main(void *arg)
{
	struct wallsrc *lw = arg;
	uint64_t step_min = lw->step, next, x, cost[4] = { 0 };
	unsigned nt = 0;

	if (!set_up(lw))
		return NULL;
	next = util_now_ns();
	x = next | 1;
	for (;;) {
		struct timespec ts;
		uint64_t c0;
		uint64_t zero_ns;
		int stop, zero, rc;

		pthread_mutex_lock(&lw->lock);
		zero = lw->zero;
		zero_ns = lw->zero_ns;
		lw->zero = 0;
		stop = lw->stop; /* also while the thread set itself up: no tick after a stop */
		pthread_mutex_unlock(&lw->lock);
		if (stop)
			break;
		c0 = util_thread_cpu_ns();
		if (zero) {
			struct session_wall **v;
			size_t n;

			/* The history goes (its counts are above those after the zero); copies
			 * already published keep their own values (prof_snapshot). */
			pthread_mutex_lock(&lw->lock);
			n = lw->nhist;
			v = hist_take(lw, n);
			lw->hist_cut = 0;
			pthread_mutex_unlock(&lw->lock);
			hist_put(v, n);
			/* Counted from the user's zero on: the tick below counts the time since
			 * then, not since the tick before (a rate the cost lowered ticks seconds
			 * apart). */
			gowall_zero(lw->w, zero_ns);
			gowall_get_stats(lw->w, &lw->base);
			lw->t0 = zero_ns;
		}
		/* Each tick counts the time since the one before (gowall_tick), also after the
		 * rate was lowered. */
		rc = gowall_tick(lw->w);
		if (lw->max_cpu > 0) {
			uint64_t c = UINT64_MAX, want;

			/* A snapshot costs about its goroutines' count, and now and then much
			 * more: the first one names every frame, the first after a GC cycle
			 * decodes every label set again. The cheapest of the last four is the
			 * steady cost, which the rate follows. */
			cost[nt++ % 4] = util_thread_cpu_ns() - c0;
			for (unsigned k = 0; k < GP_MIN(nt, 4u); k++)
				c = GP_MIN(c, cost[k]);
			want = GP_MAX(step_min, (uint64_t)((double)c / lw->max_cpu));
			if (want > lw->step + lw->step / 8 || want + want / 8 < lw->step)
				lw->step = want;
		}
		if (lw->publish)
			publish(lw, rc == -ESRCH);
		if (rc == -ESRCH)
			break; /* the target is gone */
		next += gowall_interval(lw->step, &x);
		if (next < util_now_ns())
			next = util_now_ns(); /* late: no burst to catch up */
		ts.tv_sec = (time_t)(next / 1000000000ULL);
		ts.tv_nsec = (long)(next % 1000000000ULL);
		pthread_mutex_lock(&lw->lock);
		while (!lw->stop && pthread_cond_timedwait(&lw->wake, &lw->lock, &ts) != ETIMEDOUT)
			;
		stop = lw->stop;
		pthread_mutex_unlock(&lw->lock);
		if (stop)
			break;
	}
	return NULL;
}

struct wallsrc *wallsrc_start(pid_t pid, double hz, double max_cpu, int publish,
			      struct gowall_oncpu *oncpu, char *why, size_t whylen)
{
	struct wallsrc *lw = xcalloc(1, sizeof(*lw));
	pthread_condattr_t ca;
	int e;

	if (!(hz > 0 && hz <= 1000)) {
		snprintf(why, whylen, "wall-clock rate must be above 0 and at most 1000 Hz");
		free(lw);
		errno = EINVAL;
		return NULL;
	}
	lw->pid = pid;
	lw->oncpu = oncpu;
	lw->hz = hz;
	lw->max_cpu = max_cpu;
	lw->publish = publish;
	lw->step = (uint64_t)(1e9 / hz);
	pthread_mutex_init(&lw->lock, NULL);
	/* The waits are on CLOCK_MONOTONIC, util_now_ns's clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lw->wake, &ca);
	pthread_condattr_destroy(&ca);
	pthread_cond_init(&lw->set_up, NULL);
	e = pthread_create(&lw->th, NULL, wall_main, lw);
	if (e) {
		snprintf(why, whylen, "cannot start the wall-clock thread: %s", strerror(e));
		pthread_cond_destroy(&lw->set_up);
		pthread_cond_destroy(&lw->wake);
		pthread_mutex_destroy(&lw->lock);
		free(lw);
		errno = e;
		return NULL;
	}
	pthread_setname_np(lw->th, "gotop-wall"); /* as top -H and perf show threads */
	return lw;
}

int wallsrc_ready(struct wallsrc *lw, char *why, size_t whylen)
{
	int ok;

	pthread_mutex_lock(&lw->lock);
	while (!lw->ready)
		pthread_cond_wait(&lw->set_up, &lw->lock);
	ok = lw->ok;
	if (!ok)
		snprintf(why, whylen, "%s", lw->why);
	pthread_mutex_unlock(&lw->lock);
	return ok;
}

void wallsrc_stop(struct wallsrc *lw)
{
	if (!lw || lw->joined)
		return;
	pthread_mutex_lock(&lw->lock);
	lw->stop = 1;
	pthread_cond_signal(&lw->wake);
	pthread_mutex_unlock(&lw->lock);
	pthread_join(lw->th, NULL);
	lw->joined = 1;
}

void wallsrc_flush(struct wallsrc *lw)
{
	if (lw->w)
		gowall_flush(lw->w);
}

struct prof *wallsrc_profile(struct wallsrc *lw)
{
	return lw->w ? gowall_profile(lw->w) : NULL;
}

double wallsrc_hz(const struct wallsrc *lw)
{
	return lw->hz;
}

void wallsrc_stats(struct wallsrc *lw, struct gowall_stats *st)
{
	if (lw->w)
		gowall_get_stats(lw->w, st);
	else
		memset(st, 0, sizeof(*st));
}

void wallsrc_free(struct wallsrc *lw)
{
	size_t n;

	if (!lw)
		return;
	wallsrc_stop(lw);
	session_wall_put(lw->cur);
	n = lw->nhist;
	hist_put(hist_take(lw, n), n);
	free(lw->hist);
	pthread_cond_destroy(&lw->set_up);
	pthread_cond_destroy(&lw->wake);
	pthread_mutex_destroy(&lw->lock);
	gowall_free(lw->w);
	symbolizer_free(lw->sym);
	free(lw);
}
