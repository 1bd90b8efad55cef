/* livewall.c: the live UI's wall-clock sampler. A thread of its own runs gowall_tick at the
 * rate asked for and, after each tick, publishes a prof_snapshot of the wall profile by
 * pointer swap under a mutex; the UI thread takes a reference under the same mutex (a
 * pointer copy), so it never waits while a snapshot of the goroutines is read. The
 * snapshots read the target with process_vm_readv only (gosnap.h): no thread of the target
 * is ever stopped. The thread has a symbolizer of its own: a symbolizer serves one thread
 * (gowall_new). */
#include "config.h"
#include "gotop/livewall.h"

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

struct livewall {
	pthread_t th;
	pthread_mutex_t lock;
	pthread_cond_t wake;       /* signalled to stop the thread's wait between ticks */
	int stop, zero;            /* under lock */
	struct livewall_data *cur; /* under lock */
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
	struct livewall_data **hist;
	size_t nhist, caphist;
	unsigned keep_s; /* the longest window asked for (under lock) */
	int hist_cut;    /* copies since the start or zero were let go (under lock) */
};

void livewall_put(const struct livewall_data *cd)
{
	struct livewall_data *d = (struct livewall_data *)cd;

	if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		prof_free(d->p);
		free(d);
	}
}

static struct livewall_data *hold(struct livewall_data *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
	return d;
}

const struct livewall_data *livewall_get(struct livewall *lw)
{
	return livewall_get_window(lw, 0, NULL);
}

const struct livewall_data *livewall_get_window(struct livewall *lw, unsigned window_s,
						const struct livewall_data **base)
{
	struct livewall_data *d, *b = NULL;

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
static struct livewall_data **hist_take(struct livewall *lw, size_t n)
{
	struct livewall_data **out = xmalloc((n ? n : 1) * sizeof(*out));

	if (n == 0)
		return out; /* the history may not exist yet: memcpy wants a pointer */
	memcpy(out, lw->hist, n * sizeof(*out));
	memmove(lw->hist, lw->hist + n, (lw->nhist - n) * sizeof(*lw->hist));
	lw->nhist -= n;
	return out;
}

static void hist_put(struct livewall_data **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		livewall_put(v[i]);
	free(v);
}

void livewall_zero(struct livewall *lw)
{
	if (!lw)
		return;
	pthread_mutex_lock(&lw->lock);
	lw->zero = 1;
	pthread_mutex_unlock(&lw->lock);
}

/* Makes the profile as it is now the one readers get. */
static void publish(struct livewall *lw, int gone)
{
	struct livewall_data *d = xcalloc(1, sizeof(*d)), *old, **gone_v = NULL;
	struct gowall_stats st;
	size_t ngone = 0;

	gowall_get_stats(lw->w, &st);
	d->p = prof_snapshot(gowall_profile(lw->w));
	d->hz = 1e9 / (double)lw->step;
	d->ticks = st.ticks - lw->base.ticks;
	d->failed = st.failed - lw->base.failed;
	d->torn = st.torn - lw->base.torn;
	d->at_ns = util_now_ns();
	d->span_ns = d->at_ns - lw->t0;
	d->gone = gone;
	d->refs = 1;
	pthread_mutex_lock(&lw->lock);
	old = lw->cur;
	lw->cur = d;
	if (!lw->nhist || d->at_ns >= lw->hist[lw->nhist - 1]->at_ns + 1000000000ULL) {
		uint64_t keep = (uint64_t)GP_MAX(lw->keep_s, LIVEWALL_MIN_HISTORY) + 2;
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
	livewall_put(old);
	if (gone_v)
		hist_put(gone_v, ngone);
}

static void *wall_main(void *arg)
{
	struct livewall *lw = arg;
	uint64_t step_min = lw->step, next = util_now_ns(), x = next | 1, cost[4] = { 0 };
	unsigned nt = 0;

	for (;;) {
		struct timespec ts;
		uint64_t c0;
		int stop, zero, rc;

		pthread_mutex_lock(&lw->lock);
		zero = lw->zero;
		lw->zero = 0;
		pthread_mutex_unlock(&lw->lock);
		c0 = util_thread_cpu_ns();
		if (zero) {
			struct livewall_data **v;
			size_t n;

			/* The history goes (its counts are above those after the zero); copies
			 * already published keep their own values (prof_snapshot). */
			pthread_mutex_lock(&lw->lock);
			n = lw->nhist;
			v = hist_take(lw, n);
			lw->hist_cut = 0;
			pthread_mutex_unlock(&lw->lock);
			hist_put(v, n);
			prof_reset_samples(gowall_profile(lw->w));
			gowall_get_stats(lw->w, &lw->base);
			lw->t0 = util_now_ns();
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

struct livewall *livewall_start(pid_t pid, double hz, double max_cpu, struct gowall_oncpu *oncpu,
				char *why, size_t whylen)
{
	struct livewall *lw = xcalloc(1, sizeof(*lw));
	pthread_condattr_t ca;
	int e;

	lw->hz = hz;
	lw->max_cpu = max_cpu;
	lw->step = (uint64_t)(1e9 / hz);
	lw->sym = symbolizer_new(pid);
	lw->w = gowall_new(pid, lw->sym, hz, why, whylen);
	if (!lw->w) {
		e = errno;
		symbolizer_free(lw->sym);
		free(lw);
		errno = e;
		return NULL;
	}
	if (oncpu)
		gowall_set_oncpu(lw->w, oncpu);
	lw->t0 = util_now_ns();
	pthread_mutex_init(&lw->lock, NULL);
	/* The waits are on CLOCK_MONOTONIC, util_now_ns's clock. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&lw->wake, &ca);
	pthread_condattr_destroy(&ca);
	e = pthread_create(&lw->th, NULL, wall_main, lw);
	if (!e)
		pthread_setname_np(lw->th, "gotop-wall"); /* as top -H and perf show threads */
	if (e) {
		snprintf(why, whylen, "cannot start the wall-clock thread: %s", strerror(e));
		pthread_cond_destroy(&lw->wake);
		pthread_mutex_destroy(&lw->lock);
		gowall_free(lw->w);
		symbolizer_free(lw->sym);
		free(lw);
		errno = e;
		return NULL;
	}
	return lw;
}

void livewall_stop(struct livewall *lw)
{
	size_t n;

	if (!lw)
		return;
	pthread_mutex_lock(&lw->lock);
	lw->stop = 1;
	pthread_cond_signal(&lw->wake);
	pthread_mutex_unlock(&lw->lock);
	pthread_join(lw->th, NULL);
	livewall_put(lw->cur);
	n = lw->nhist;
	hist_put(hist_take(lw, n), n);
	free(lw->hist);
	pthread_cond_destroy(&lw->wake);
	pthread_mutex_destroy(&lw->lock);
	gowall_free(lw->w);
	symbolizer_free(lw->sym);
	free(lw);
}
