/* cpu.c: the server's CPU (/debug/pprof/profile) and wall-clock (/debug/pprof/wall)
 * profiles. Scrapers ask for a process's CPU profile over the same seconds at once (Parca and
 * Alloy each, several replicas of each): they share one profiling session per process, open
 * while any such request is at work, so that perf events are opened once and the cost does
 * not grow with the scrapers.
 *
 * A session's thread (share_main) is the only one that feeds its aggregator. A request
 * asks it for a mark: the thread drains the rings, folds every sample up to now, and hands
 * back a prof_snapshot of the cumulative profile. The request takes one mark at the start
 * of its window and one at its end; the snapshots share the profile's tables, so the
 * window is the end's values minus the start's, sample by sample (as the live UI's windows
 * of the wall profile are, session_wall_get). Labels, goroutines and threads are the
 * samples' own. A wall request needs the session's wall-clock sampler (SESSION_WALL, asked
 * for when the session is made): it takes a session of the process that has one, or opens
 * one and retires the session without it (which closes when its own windows end), so
 * that one set of perf events samples the process. The sampler's published copies
 * (session_wall_get) give the window as the marks give the CPU profile's.
 *
 * When the last request ends the session stays linger_ms for the next scrape (Alloy asks
 * for 14 s every 15 s), then closes: no perf event and no thread remain. A target that
 * exits ends the windows open on it with what was collected. */
#include "config.h"
#include "serve-int.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/goprof.h"
#include "gotop/gowall.h"
#include "gotop/pprof.h"
#include "gotop/procinfo.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/session.h"
#include "gotop/util.h"

/* How long a request waits for a wall-clock sampler's first copy. */
#define WALL_FIRST_MS 3000
/* A tick's running goroutines get their stacks from perf samples that come a drain or two
 * later (gowall.h: at most 2 s), so every copy of the wall profile lacks the running time
 * of its last ticks. A window from a copy that lacks them to one that lacks them counts
 * it all (the lag is the same at both ends); a window from the sampler's start would
 * miss the end's. The first copy of a new sampler is taken this long after its start. */
#define WALL_SETTLE_MS 2000
/* A request looks at its client and the target this often while its window is open. */
#define WAIT_SLICE_MS 250
/* Processes whose totals the metrics keep. */
#define TOTALS_MAX 256
/* A session kept open by scrapes that follow each other closely (each within linger_ms
 * of the last) is replaced by a new one after this long: its cumulative profile grows
 * with every new stack, as `record`'s does, and the new one starts empty. */
#define SESSION_MAX_AGE_S 600

enum { SH_STARTING, SH_READY, SH_FAILED };

/* A snapshot asked of a session's thread. */
struct mark {
	struct prof *snap;   /* the cumulative profile then (NULL: no sample yet) */
	uint64_t wall_ns;    /* when (CLOCK_REALTIME) */
	int done;
	struct mark *next;
};

struct share {
	struct cpu_shares *c;
	pid_t pid;
	uint64_t start;
	uint64_t opened_ns;
	struct session *s;
	const char *event;
	int wall;            /* SESSION_WALL was asked for */
	int wall_ok;         /* and its sampler runs (else info.wall_why says why not) */
	pthread_t th;
	/* under cpu_shares.lock */
	int state;
	int status;
	char why[512];
	int refs;
	int gone;            /* the target has exited */
	int retired;         /* open for SESSION_MAX_AGE_S: new requests open another */
	int quit;            /* the thread ends: no request may take the share */
	uint64_t idle_since;
	struct mark *marks;
	struct share *next;
};

struct pid_total {
	pid_t pid;
	uint64_t start, samples, lost, sessions;
};

struct cpu_shares {
	struct serve *srv;
	pthread_mutex_t lock;
	pthread_cond_t cv;   /* (CLOCK_MONOTONIC) marks done, states, threads ending */
	struct share *list;
	unsigned threads;
	struct pid_total totals[TOTALS_MAX];
	size_t ntotals;
};

struct cpu_shares *cpu_shares_new(struct serve *srv)
{
	struct cpu_shares *c = xcalloc(1, sizeof(*c));
	pthread_condattr_t ca;

	c->srv = srv;
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->cv, &ca);
	pthread_condattr_destroy(&ca);
	return c;
}

/* Waits on cv until abs_ns (CLOCK_MONOTONIC), under c->lock. */
static void wait_until(struct cpu_shares *c, uint64_t abs_ns)
{
	struct timespec ts = { (time_t)(abs_ns / 1000000000ULL), (long)(abs_ns % 1000000000ULL) };

	pthread_cond_timedwait(&c->cv, &c->lock, &ts);
}

void cpu_shares_free(struct cpu_shares *c)
{
	struct share *sh;

	if (!c)
		return;
	/* Every request has ended: the threads linger. Wake them; they see stopping. */
	pthread_mutex_lock(&c->lock);
	for (sh = c->list; sh; sh = sh->next)
		if (sh->state == SH_READY)
			session_kick(sh->s);
	while (c->threads)
		wait_until(c, util_now_ns() + 100000000ULL);
	pthread_mutex_unlock(&c->lock);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* ---- the totals the metrics report ---- */

static struct pid_total *total_of(struct cpu_shares *c, pid_t pid, uint64_t start, int add)
{
	struct proc_stat st;
	size_t i;

	for (i = 0; i < c->ntotals; i++)
		if (c->totals[i].pid == pid && c->totals[i].start == start)
			return &c->totals[i];
	if (!add)
		return NULL;
	if (c->ntotals == TOTALS_MAX) {
		/* Processes gone make room; else the oldest entry goes. */
		for (i = 0; i < c->ntotals;) {
			if (procinfo_stat(c->totals[i].pid, 0, &st) ||
			    st.starttime_ticks != c->totals[i].start) {
				c->totals[i] = c->totals[--c->ntotals];
				continue;
			}
			i++;
		}
		if (c->ntotals == TOTALS_MAX)
			memmove(c->totals, c->totals + 1, --c->ntotals * sizeof(*c->totals));
	}
	c->totals[c->ntotals] = (struct pid_total){ .pid = pid, .start = start };
	return &c->totals[c->ntotals++];
}

void cpu_pid_stats(struct cpu_shares *c, pid_t pid, uint64_t start, struct cpu_pid_stats *st)
{
	struct pid_total *t;
	struct share *sh;

	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&c->lock);
	t = total_of(c, pid, start, 0);
	if (t) {
		st->samples = t->samples;
		st->lost = t->lost;
		st->sessions = t->sessions;
	}
	for (sh = c->list; sh; sh = sh->next) {
		struct sampler_stats ss;

		if (sh->pid != pid || sh->start != start || sh->state != SH_READY)
			continue;
		session_stats(sh->s, 0, &ss, NULL);
		st->samples += ss.samples;
		st->lost += ss.lost + ss.dropped;
		st->sessions++;
		st->active = 1;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- the session's thread ---- */

/* Every sample up to now folded, and a snapshot of the profile for each mark. */
static void serve_marks(struct cpu_shares *c, struct share *sh, struct mark *m)
{
	struct agg *agg = session_agg(sh->s);
	struct prof *p;
	uint64_t now = util_wall_ns();

	session_flush(sh->s);
	while (session_feed_next(sh->s, 0, NULL))
		;
	agg_flush(agg, 0);
	/* With its period and comments (the session's, as `record` writes them). */
	p = session_profile(sh->s, SESSION_PROF_CPU, 0);
	pthread_mutex_lock(&c->lock);
	for (; m; m = m->next) {
		m->snap = prof_snapshot(p);
		m->wall_ns = now;
		m->done = 1;
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
}

static void *share_main(void *arg)
{
	struct share *sh = arg;
	struct cpu_shares *c = sh->c;
	struct serve *srv = c->srv;
	struct sampler_stats ss;
	struct pid_total *t;
	struct mark *m;

	/* Batches are taken when a mark asks or about every second, not as each comes:
	 * every wakeup of this thread costs. */
	session_set_wake_bytes(sh->s, SAMPLER_LAZY_WAKE_BYTES);
	for (;;) {
		uint64_t now = util_now_ns(), linger = (uint64_t)srv->o.linger_ms * 1000000ULL;
		int timeout = 1000, exited;

		pthread_mutex_lock(&c->lock);
		if (!sh->refs && (sh->gone || sh->retired || srv->stopping ||
				  now - sh->idle_since >= linger)) {
			struct share **pp;

			sh->quit = 1;
			for (pp = &c->list; *pp; pp = &(*pp)->next)
				if (*pp == sh) {
					*pp = sh->next;
					break;
				}
			pthread_mutex_unlock(&c->lock);
			break;
		}
		if (!sh->refs)
			timeout = (int)GP_MAX((linger - (now - sh->idle_since)) / 1000000ULL, 1ULL);
		m = sh->marks;
		sh->marks = NULL;
		pthread_mutex_unlock(&c->lock);
		if (m) {
			serve_marks(c, sh, m);
		} else {
			session_feed_next(sh->s, timeout, NULL);
			while (session_feed_next(sh->s, 0, NULL))
				;
		}
		exited = session_exited(sh->s);
		pthread_mutex_lock(&c->lock);
		if (exited && !sh->gone) {
			sh->gone = 1;
			pthread_cond_broadcast(&c->cv);
		}
		pthread_mutex_unlock(&c->lock);
	}
	/* Nothing refers to the share any more. */
	session_stop(sh->s, 0);
	session_stats(sh->s, 0, &ss, NULL);
	pthread_mutex_lock(&c->lock);
	t = total_of(c, sh->pid, sh->start, 1);
	t->samples += ss.samples;
	t->lost += ss.lost + ss.dropped;
	t->sessions++;
	pthread_mutex_unlock(&c->lock);
	serve_log(srv, "process %d: session closed: %llu samples, %llu lost, %.1f s",
		  (int)sh->pid, (unsigned long long)ss.samples,
		  (unsigned long long)(ss.lost + ss.dropped),
		  (double)session_elapsed_ns(sh->s) / 1e9);
	session_free(sh->s);
	free(sh);
	pthread_mutex_lock(&c->lock);
	c->threads--;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/* ---- a request's side ---- */

/* Opens the session: attached to the process, cpu-clock at the server's rate, the Go
 * reader, symbols loaded before the first sample; with sh->wall the wall-clock sampler,
 * publishing a copy after each tick. 0, or -1 with sh->status and why. */
static int share_open(struct cpu_shares *c, struct share *sh)
{
	struct session_opts so;
	struct session_err e;
	int r;

	session_opts_init(&so);
	so.pid = sh->pid;
	events_parse("cpu-clock", &so.events[0]);
	so.nevents = 1;
	so.freq = c->srv->o.freq;
	so.preload = 1;
	if (sh->wall) {
		so.sources |= SESSION_WALL;
		so.wall_hz = c->srv->o.wall_hz;
		so.wall_publish = 1;
	}
	sh->s = session_new(&so, &e);
	if (sh->s && session_open(sh->s, &e) == 0 && (r = session_start(sh->s, NULL, &e)) == 0) {
		sh->event = session_options(sh->s)->events[0].name;
		if (sh->wall)
			sh->wall_ok = session_wall_started(sh->s);
		return 0;
	}
	sh->status = e.kind == SESSION_FAIL_PERM     ? 403
		     : e.kind == SESSION_FAIL_TARGET ? 404
		     : e.kind == SESSION_FAIL_EVENT  ? 501
						     : 500;
	snprintf(sh->why, sizeof(sh->why), "%s", e.why);
	session_free(sh->s);
	sh->s = NULL;
	return -1;
}

static void share_put(struct cpu_shares *c, struct share *sh);

/* The session of the process (with the wall-clock sampler when wall), made when there is
 * none, with a reference for the caller. NULL with the error in a. */
static struct share *share_get(struct cpu_shares *c, const struct sreq *r, int wall,
			       struct sanswer *a)
{
	struct share *sh;
	int rc;

	pthread_mutex_lock(&c->lock);
	for (sh = c->list; sh; sh = sh->next) {
		if (sh->state == SH_READY &&
		    util_now_ns() - sh->opened_ns > SESSION_MAX_AGE_S * 1000000000ULL)
			sh->retired = 1;
		if (sh->pid != r->pid || sh->start != r->start || sh->quit || sh->gone ||
		    sh->retired || sh->state == SH_FAILED)
			continue;
		if (!wall || sh->wall)
			break;
		/* The one made now replaces it: its windows end in it, new ones go to the
		 * new session, which samples CPU too. */
		sh->retired = 1;
	}
	if (sh) {
		sh->refs++;
		while (sh->state == SH_STARTING)
			wait_until(c, util_now_ns() + 1000000000ULL);
		if (sh->state == SH_FAILED) {
			answer_error(a, sh->status, "process %d: %s", (int)r->pid, sh->why);
			pthread_mutex_unlock(&c->lock);
			share_put(c, sh);
			return NULL;
		}
		pthread_mutex_unlock(&c->lock);
		return sh;
	}
	sh = xcalloc(1, sizeof(*sh));
	sh->c = c;
	sh->pid = r->pid;
	sh->start = r->start;
	sh->wall = wall;
	sh->state = SH_STARTING;
	sh->refs = 1;
	sh->next = c->list;
	c->list = sh;
	pthread_mutex_unlock(&c->lock);

	rc = share_open(c, sh);
	pthread_mutex_lock(&c->lock);
	if (!rc) {
		sh->opened_ns = util_now_ns();
		rc = pthread_create(&sh->th, NULL, share_main, sh);
		if (rc) {
			snprintf(sh->why, sizeof(sh->why), "cannot start a thread: %s", strerror(rc));
			sh->status = 500;
		} else {
			pthread_detach(sh->th);
			pthread_setname_np(sh->th, "gotop-serve-cpu");
			c->threads++;
		}
	}
	sh->state = rc ? SH_FAILED : SH_READY;
	if (rc) {
		/* Unlinked now: the next request tries again. Waiters hold references; the
		 * last reference frees it. */
		struct share **pp;

		for (pp = &c->list; *pp; pp = &(*pp)->next)
			if (*pp == sh) {
				*pp = sh->next;
				break;
			}
		sh->quit = 1;
		if (sh->s) {
			session_free(sh->s);
			sh->s = NULL;
		}
		answer_error(a, sh->status, "process %d: %s", (int)r->pid, sh->why);
	}
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->lock);
	if (rc) {
		share_put(c, sh);
		return NULL;
	}
	serve_log(c->srv, "process %d: session opened (%s at %llu Hz%s%s)", (int)r->pid,
		  sh->event, (unsigned long long)c->srv->o.freq,
		  session_info(sh->s)->bpf ? ", goroutines read at the sample" : "",
		  sh->wall_ok ? ", wall clock" : "");
	return sh;
}

static void share_put(struct cpu_shares *c, struct share *sh)
{
	int free_it;

	pthread_mutex_lock(&c->lock);
	sh->refs--;
	if (!sh->refs)
		sh->idle_since = util_now_ns();
	/* A share that failed has no thread: its last reference frees it. */
	free_it = sh->state == SH_FAILED && !sh->refs;
	if (sh->state == SH_READY && !sh->refs)
		session_kick(sh->s);
	pthread_mutex_unlock(&c->lock);
	if (free_it)
		free(sh);
}

/* A snapshot of the cumulative profile now (through the session's thread). */
static struct prof *share_mark(struct cpu_shares *c, struct share *sh, uint64_t *wall_ns)
{
	struct mark m;

	memset(&m, 0, sizeof(m));
	pthread_mutex_lock(&c->lock);
	m.next = sh->marks;
	/* On the stack: the session's thread takes the list and marks each done, and this
	 * waits for that before it returns. */
	sh->marks = &m; // cppcheck-suppress autoVariables
	session_kick(sh->s);
	while (!m.done)
		wait_until(c, util_now_ns() + 1000000000ULL);
	pthread_mutex_unlock(&c->lock);
	*wall_ns = m.wall_ns;
	return m.snap;
}

/* The latest copy of the wall profile, waiting for the first one (and for the session's
 * first WALL_SETTLE_MS). */
static const struct session_wall *wall_copy(struct share *sh)
{
	const struct session_wall *d = NULL;
	uint64_t end, settle = sh->opened_ns + WALL_SETTLE_MS * 1000000ULL;

	while (util_now_ns() < settle) {
		uint64_t left = settle - util_now_ns();
		struct timespec ts = { (time_t)(left / 1000000000ULL), (long)(left % 1000000000ULL) };

		nanosleep(&ts, NULL);
	}
	end = util_now_ns() + WALL_FIRST_MS * 1000000ULL;
	while (!(d = session_wall_get(sh->s, 0, NULL)) && util_now_ns() < end) {
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
	}
	return d;
}

/* end minus base, sample by sample (both snapshots of one profile: the same tables), into
 * end. */
static struct prof *window(struct prof *base, struct prof *end)
{
	const int64_t *vb, *ve;
	size_t sb, se, i, k, n;
	int64_t v[PROF_MAX_VALUES];

	if (!base)
		return end;
	if (!prof_same_tables(base, end)) {
		struct prof *d = goprof_delta(base, end);

		prof_free(end);
		return d;
	}
	n = GP_MIN(prof_nsamples(base), prof_nsamples(end));
	vb = prof_values(base, &sb);
	for (i = 0; i < n; i++) {
		ve = prof_values(end, &se);
		for (k = 0; k < se && k < PROF_MAX_VALUES; k++)
			v[k] = ve[i * se + k] - (k < sb ? vb[i * sb + k] : 0);
		prof_set_sample_values(end, i, v);
	}
	return end;
}

/* Waits out the window: until its end, the target's exit, the server's stop or the
 * client's leaving. 0 at the end or exit, -1 otherwise. */
static int wait_window(struct cpu_shares *c, struct share *sh, const struct sreq *r,
		       uint64_t end_ns)
{
	for (;;) {
		uint64_t now = util_now_ns();
		struct pollfd p = { r->client_fd, POLLRDHUP, 0 };
		int gone;

		pthread_mutex_lock(&c->lock);
		gone = sh->gone;
		pthread_mutex_unlock(&c->lock);
		if (gone || now >= end_ns)
			return 0;
		if (serve_request_over(r))
			return -1;
		/* Sleeps on the client's socket: its hang-up ends the wait at once. */
		poll(&p, r->client_fd >= 0 ? 1 : 0,
		     (int)GP_MIN((end_ns - now) / 1000000ULL + 1, (uint64_t)WAIT_SLICE_MS));
	}
}

void serve_cpu(const struct sreq *r, int wall, struct sanswer *a)
{
	struct cpu_shares *c = r->s->cpu;
	const struct session_wall *w0 = NULL, *w1 = NULL;
	struct prof *p0 = NULL, *p1 = NULL, *p;
	uint64_t t0, t1, m0;
	struct share *sh;
	int gone, rc;
	char buf[256];

	if (serve_profile_begin(r->s, a))
		return;
	sh = share_get(c, r, wall, a);
	if (!sh) {
		serve_profile_end(r->s);
		return;
	}
	if (wall && !sh->wall_ok) {
		answer_error(a, 500, "process %d: no wall-clock profile: %s", (int)r->pid,
			     session_info(sh->s)->wall_why);
		goto out;
	}
	p0 = share_mark(c, sh, &t0);
	if (wall)
		w0 = wall_copy(sh);
	m0 = util_now_ns();
	pthread_mutex_lock(&c->lock);
	gone = sh->gone;
	pthread_mutex_unlock(&c->lock);
	if (gone) {
		answer_error(a, 404, "process %d has exited", (int)r->pid);
		goto out;
	}
	if (wall && !w0) {
		answer_error(a, 500, "process %d: the wall-clock sampler made no snapshot",
			     (int)r->pid);
		goto out;
	}
	rc = wait_window(c, sh, r, m0 + (uint64_t)r->seconds * 1000000000ULL);
	if (rc) {
		answer_error(a, 503, r->s->stopping ? "the server is stopping" : "the client left");
		goto out;
	}
	p1 = share_mark(c, sh, &t1);
	if (wall)
		w1 = session_wall_get(sh->s, 0, NULL);
	pthread_mutex_lock(&c->lock);
	gone = sh->gone;
	pthread_mutex_unlock(&c->lock);
	if (wall) {
		p = window(w0->p, prof_snapshot(w1->p));
		prof_set_time(p, (int64_t)(util_wall_ns() - (util_now_ns() - w0->at_ns)),
			      (int64_t)(w1->at_ns - w0->at_ns));
		snprintf(buf, sizeof(buf), "gotop-perf %s serve: wall clock of every goroutine, "
			 "%.1f Hz; %llu snapshots, %llu goroutines dropped as changed while read",
			 PACKAGE_VERSION, w1->hz, (unsigned long long)(w1->ticks - w0->ticks),
			 (unsigned long long)(w1->torn - w0->torn));
		prof_add_comment(p, buf);
		snprintf(buf, sizeof(buf), "go version %s", r->go_version);
		prof_add_comment(p, buf);
	} else {
		p = window(p0, p1);
		p1 = NULL;
		prof_set_time(p, (int64_t)t0, (int64_t)(t1 - t0));
	}
	rc = pprof_gzip(p, &a->body, &a->len);
	prof_free(p);
	if (rc) {
		answer_error(a, 500, "cannot encode the profile: %s", strerror(-rc));
		goto out;
	}
	a->status = 200;
	a->ctype = "application/octet-stream";
	snprintf(a->filename, sizeof(a->filename), "%s", wall ? "wall" : "profile");
	if (gone)
		snprintf(a->note, sizeof(a->note), "the process exited after %.1f s",
			 (double)(t1 - t0) / 1e9);
out:
	session_wall_put(w0);
	session_wall_put(w1);
	prof_free(p0);
	prof_free(p1);
	share_put(c, sh);
	serve_profile_end(r->s);
}
