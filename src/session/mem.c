/* mem.c: the session's memory profiles: the runtime's heap, block and mutex buckets read
 * from outside (goprof.h, gomem.h). One reader per session, guarded by a mutex (a reader
 * serves one thread at a time): `pprof` and `record --heap` ask through it on their own
 * thread; the live views get copies from a thread of its own, which polls the heap
 * profile's cycle (one 4-byte read) once a second and reads the buckets only when the
 * runtime has published a new cycle (the counts change at a GC cycle and at no other
 * time: go1.19-go1.27 runtime/mprof.go, mProf_Flush), within a share of a core. Copies
 * are published by pointer swap under a mutex, as the goroutine snapshots are. */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"
#include "session-int.h"

/* How often the cycle is polled: a 4-byte read; the time a cycle is seen published is
 * the data's age and the allocation rate's span, known within it. Copies kept for the
 * allocation rate at most. */
#define POLL_NS 250000000ULL
#define HIST_MAX 64
/* A reader that could not be made is tried again this often (a command not yet exec'd, a
 * runtime not yet up), REOPEN_MAX times at most (symbols are costly to load). */
#define REOPEN_NS 5000000000ULL
#define REOPEN_MAX 6

struct memsrc {
	pid_t pid;
	int publish;
	double max_cpu;
	uint64_t rate_ns;
	size_t max_records;       /* goprof_set_max_records (0: its default) */
	/* The reader, made at the first read. */
	pthread_mutex_t rd;
	struct goprof *gp;
	int open_err;
	char open_why[256];
	uint64_t open_ns;
	unsigned opens;           /* tries; a target not Go after REOPEN_MAX is left alone */
	/* The thread and what it publishes. */
	pthread_t th;
	int started, tried;        /* under lock (the thread is made at the first copy asked) */
	pthread_mutex_t lock;
	pthread_cond_t wake, done;
	uint64_t asked, taken;    /* under lock */
	int stop;                 /* under lock */
	struct session_mem *cur;  /* under lock */
	double gc_per_s;          /* under lock: of the polls so far (< 0: not known) */
	uint64_t seq;
	/* The thread's own: copies for the rate (oldest first), the cycles polled. */
	struct session_mem *hist[HIST_MAX];
	size_t nhist;
	struct { uint64_t ns; uint32_t cycle; } polls[4 * SESSION_MEM_RATE_S + 1];
	size_t npolls;
	uint32_t last_cycle;
	uint64_t last_cycle_ns;
	int have_cycle;
	int pending;              /* a cycle published and not read yet (the share of a core) */
};

void session_mem_put(const struct session_mem *cd)
{
	struct session_mem *d = (struct session_mem *)cd;

	if (d && __atomic_sub_fetch(&d->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		prof_free(d->p);
		free(d->alloc_rate);
		free(d);
	}
}

static struct session_mem *hold(struct session_mem *d)
{
	if (d)
		__atomic_add_fetch(&d->refs, 1, __ATOMIC_ACQ_REL);
	return d;
}

/* The reader, under rd: made now when it is not yet and the last try is old enough. */
static struct goprof *reader(struct memsrc *m, int *err, char *why, size_t whylen)
{
	uint64_t now = util_now_ns();

	if (!m->gp && (!m->open_ns || now - m->open_ns >= REOPEN_NS) && m->opens < REOPEN_MAX) {
		m->open_ns = now;
		m->opens++;
		m->gp = goprof_open(m->pid, &m->open_err, m->open_why, sizeof(m->open_why));
		if (m->gp && m->max_records)
			goprof_set_max_records(m->gp, m->max_records);
	}
	if (!m->gp) {
		*err = m->open_err;
		snprintf(why, whylen, "%s", m->open_why);
	}
	return m->gp;
}

/* The column of p named type, or -1. */
static int column(const struct prof *p, const char *type)
{
	const struct prof_value_type *t;
	size_t n = prof_sample_types(p, &t);

	for (size_t i = 0; i < n; i++) {
		const char *s = prof_string(p, t[i].type, NULL);

		if (s && !strcmp(s, type))
			return (int)i;
	}
	return -1;
}

/* A sample's identity across profiles read apart: its pcs and its labels (the bytes
 * label tells buckets of one stack apart by object size). */
static uint64_t sample_key(const struct prof *p, const struct prof_sample *s)
{
	uint64_t h = 0x6d656d;

	for (uint32_t i = 0; i < s->nlocs; i++) {
		const struct prof_location *l = prof_location_at(p, s->locs[i] - 1);
		uint64_t a = l ? l->address : 0;

		h = util_hash(&a, sizeof(a), h);
	}
	for (uint32_t i = 0; i < s->nlabels; i++) {
		size_t kl = 0;
		const char *k = prof_string(p, s->labels[i].key, &kl);

		h = util_hash(k ? k : "", kl, h);
		h = util_hash(&s->labels[i].num, sizeof(s->labels[i].num), h);
	}
	return h ? h : 1;
}

/* The allocation rate of each sample of d against base, an earlier copy: the growth of
 * alloc_space over the time between the cycles. A bucket new since base counts from 0,
 * as the runtime starts it. */
static void alloc_rates(struct session_mem *d, const struct session_mem *base)
{
	int ca = column(d->p, "alloc_space"), cb = base->p ? column(base->p, "alloc_space") : -1;
	struct hashmap was = { 0 };
	size_t n = prof_nsamples(d->p);
	double dt;

	if (ca < 0 || cb < 0 || d->cycle_ns <= base->cycle_ns)
		return;
	dt = (double)(d->cycle_ns - base->cycle_ns) / 1e9;
	for (size_t i = 0; i < prof_nsamples(base->p); i++) {
		struct prof_sample s;
		int created;
		uint64_t *slot;

		if (prof_sample_at(base->p, i, &s))
			break;
		slot = hashmap_put(&was, sample_key(base->p, &s), &created);
		*slot = (created ? 0 : *slot) + (uint64_t)s.values[cb];
	}
	d->alloc_rate = xcalloc(n ? n : 1, sizeof(*d->alloc_rate));
	for (size_t i = 0; i < n; i++) {
		struct prof_sample s;
		const uint64_t *then;
		int64_t grew;

		if (prof_sample_at(d->p, i, &s))
			break;
		then = hashmap_get(&was, sample_key(d->p, &s));
		grew = s.values[ca] - (then ? (int64_t)*then : 0);
		d->alloc_rate[i] = grew > 0 ? (int64_t)((double)grew / dt) : 0;
	}
	d->rate_ns = d->cycle_ns - base->cycle_ns;
	hashmap_free(&was);
}

/* GC cycles a second over the cycles polled. */
static double gc_rate(const struct memsrc *m)
{
	if (m->npolls < 2)
		return -1;
	uint64_t dt = m->polls[m->npolls - 1].ns - m->polls[0].ns;
	uint32_t dc = (m->polls[m->npolls - 1].cycle - m->polls[0].cycle) & 0x7fffffffu;

	return dt ? (double)dc * 1e9 / (double)dt : -1;
}

/* The cycle now (under rd): 1 when it moved since the last poll (or is the first). */
static int poll_cycle(struct memsrc *m)
{
	struct gomem *g;
	uint32_t c;
	uint64_t now = util_now_ns();
	int err;
	char why[256];

	if (!reader(m, &err, why, sizeof(why)) || !(g = goprof_gomem(m->gp)) ||
	    gomem_cycle(g, &c))
		return 1; /* read anyway: the read says why it cannot */
	if (m->npolls == GP_ARRAY_SIZE(m->polls)) {
		memmove(m->polls, m->polls + 1, (m->npolls - 1) * sizeof(*m->polls));
		m->npolls--;
	}
	m->polls[m->npolls].ns = now;
	m->polls[m->npolls++].cycle = c;
	if (m->have_cycle && c == m->last_cycle)
		return 0;
	m->have_cycle = 1;
	m->last_cycle = c;
	m->last_cycle_ns = now;
	return 1;
}

/* One read into a new copy (its reference the caller's). */
static struct session_mem *take(struct memsrc *m)
{
	struct session_mem *d = xcalloc(1, sizeof(*d));
	int c;

	d->refs = 1;
	d->gc_per_s = -1;
	pthread_mutex_lock(&m->rd);
	if (reader(m, &d->err, d->why, sizeof(d->why)))
		d->p = goprof_profile(m->gp, "heap", &d->st, &d->mem_rate, &d->err, d->why,
				      sizeof(d->why));
	d->read_ns = util_now_ns();
	d->cycle = d->st.cycle;
	if (!m->have_cycle || m->last_cycle != d->cycle) {
		/* Read without a poll before (pprof, record): the cycle is as old as this. */
		m->have_cycle = d->p != NULL;
		m->last_cycle = d->cycle;
		m->last_cycle_ns = d->read_ns;
	}
	d->cycle_ns = m->last_cycle_ns;
	d->gc_per_s = gc_rate(m);
	pthread_mutex_unlock(&m->rd);
	if (d->p && (c = column(d->p, "inuse_space")) >= 0)
		d->inuse_bytes = prof_total(d->p, (size_t)c);
	/* The names of the allocation rate's column (live.c), interned while p is ours: a
	 * copy of p that shares its tables can then name the column. Not in what record and
	 * pprof write, which is Go's answer. */
	if (d->p && m->publish) {
		prof_str(d->p, "alloc_rate");
		prof_str(d->p, "bytes/s");
	}
	return d;
}

/* Keeps d for the rates of later copies and gives it the rate against the newest copy
 * at least rate_ns older (the oldest when none is). */
static void add_history(struct memsrc *m, struct session_mem *d)
{
	const struct session_mem *base = NULL;

	if (!d->p)
		return;
	for (size_t i = 0; i < m->nhist; i++)
		if (i == 0 || m->hist[i]->cycle_ns + m->rate_ns <= d->cycle_ns)
			base = m->hist[i];
	if (base)
		alloc_rates(d, base);
	/* Copies older than the one that base would be next time go. */
	while (m->nhist > 1 && m->hist[1]->cycle_ns + m->rate_ns <= d->cycle_ns) {
		session_mem_put(m->hist[0]);
		memmove(m->hist, m->hist + 1, (m->nhist - 1) * sizeof(*m->hist));
		m->nhist--;
	}
	if (m->nhist == HIST_MAX) {
		session_mem_put(m->hist[0]);
		memmove(m->hist, m->hist + 1, (m->nhist - 1) * sizeof(*m->hist));
		m->nhist--;
	}
	m->hist[m->nhist++] = hold(d);
}

static void publish(struct memsrc *m, struct session_mem *d, uint64_t asked)
{
	struct session_mem *old;

	pthread_mutex_lock(&m->lock);
	d->seq = ++m->seq;
	old = m->cur;
	m->cur = d;
	if (asked > m->taken)
		m->taken = asked;
	pthread_cond_broadcast(&m->done);
	pthread_mutex_unlock(&m->lock);
	session_mem_put(old);
}

static void *memsrc_main(void *arg)
{
	struct memsrc *m = arg;
	uint64_t next_read = 0, next_poll = util_now_ns(), cost[4] = { 0 };
	unsigned ncost = 0;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		struct session_mem *d;
		uint64_t asked, now, c0, c;
		int due = 0;

		while (!m->stop && m->taken == m->asked) {
			struct timespec ts;

			if (!m->publish) {
				pthread_cond_wait(&m->wake, &m->lock);
				continue;
			}
			now = util_now_ns();
			if (now >= next_poll)
				break;
			ts.tv_sec = (time_t)(next_poll / 1000000000ULL);
			ts.tv_nsec = (long)(next_poll % 1000000000ULL);
			pthread_cond_timedwait(&m->wake, &m->lock, &ts);
		}
		if (m->stop)
			break;
		asked = m->asked;
		pthread_mutex_unlock(&m->lock);
		now = util_now_ns();
		if (m->publish && now >= next_poll) {
			next_poll = now + POLL_NS;
			double gc;

			pthread_mutex_lock(&m->rd);
			m->pending |= poll_cycle(m);
			gc = gc_rate(m);
			pthread_mutex_unlock(&m->rd);
			pthread_mutex_lock(&m->lock);
			m->gc_per_s = gc;
			pthread_mutex_unlock(&m->lock);
			/* Within the share of a core: a cycle published meanwhile is read later. */
			due = m->pending && now >= next_read;
		}
		if (due || asked != m->taken) {
			int err;
			char why[8];

			/* The reader is made first: loading the symbols once is no read's cost. */
			pthread_mutex_lock(&m->rd);
			reader(m, &err, why, sizeof(why));
			pthread_mutex_unlock(&m->rd);
			c0 = util_thread_cpu_ns();
			d = take(m);
			m->pending = 0;
			if (m->publish)
				add_history(m, d);
			/* The first read names every pc (no pace after it); later ones name the
			 * new pcs only: the cheapest of the last four is the steady cost, which
			 * the pace follows. */
			cost[ncost++ % 4] = util_thread_cpu_ns() - c0;
			c = UINT64_MAX;
			for (unsigned k = 0; k < GP_MIN(ncost, 4u); k++)
				c = GP_MIN(c, cost[k]);
			if (m->max_cpu > 0 && ncost > 1)
				next_read = util_now_ns() + (uint64_t)((double)c / m->max_cpu);
			/* A target gone or without a profile: polled at the reopen pace. */
			if (!d->p && m->publish)
				next_poll = util_now_ns() + REOPEN_NS;
			publish(m, d, asked);
		}
		pthread_mutex_lock(&m->lock);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct memsrc *memsrc_new(pid_t pid, int publish, double max_cpu, unsigned rate_s,
			  size_t max_records)
{
	struct memsrc *m = xcalloc(1, sizeof(*m));
	pthread_condattr_t ca;

	m->pid = pid;
	m->max_records = max_records;
	m->publish = publish;
	m->max_cpu = max_cpu;
	m->rate_ns = (uint64_t)rate_s * 1000000000ULL;
	m->gc_per_s = -1;
	pthread_mutex_init(&m->rd, NULL);
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_cond_init(&m->done, &ca);
	pthread_condattr_destroy(&ca);
	return m;
}

/* The thread, made at the first copy asked for: what only fetches (`pprof`, the server's
 * sessions kept between requests) reads on its own thread and keeps none. */
static int thread_up(struct memsrc *m)
{
	int up;

	pthread_mutex_lock(&m->lock);
	if (!m->tried) {
		m->tried = 1;
		m->started = pthread_create(&m->th, NULL, memsrc_main, m) == 0;
		if (m->started)
			pthread_setname_np(m->th, "gotop-gomem");
	}
	up = m->started;
	pthread_mutex_unlock(&m->lock);
	return up;
}

const struct session_mem *memsrc_get(struct memsrc *m, int wait_ms)
{
	struct session_mem *d;
	uint64_t want;

	if (!thread_up(m)) {
		/* No thread: read on the caller's. */
		d = take(m);
		return d;
	}
	pthread_mutex_lock(&m->lock);
	if (!m->publish || wait_ms) {
		want = ++m->asked;
		pthread_cond_signal(&m->wake);
	} else {
		want = m->taken;
	}
	if (wait_ms) {
		struct timespec ts;
		uint64_t until = util_now_ns() + (uint64_t)(wait_ms > 0 ? wait_ms : 0) * 1000000ULL;

		ts.tv_sec = (time_t)(until / 1000000000ULL);
		ts.tv_nsec = (long)(until % 1000000000ULL);
		while (m->taken < want) {
			if (wait_ms < 0)
				pthread_cond_wait(&m->done, &m->lock);
			else if (pthread_cond_timedwait(&m->done, &m->lock, &ts) == ETIMEDOUT)
				break;
		}
	}
	d = hold(m->cur);
	pthread_mutex_unlock(&m->lock);
	return d;
}

double memsrc_gc_rate(struct memsrc *m)
{
	double r;

	pthread_mutex_lock(&m->lock);
	r = m->gc_per_s;
	pthread_mutex_unlock(&m->lock);
	return r;
}

int memsrc_fetch(struct memsrc *m, const struct goprof_req *r, struct goprof_out *out,
		 char *why, size_t whylen)
{
	int err = GOPROF_E_OK;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&m->rd);
	if (reader(m, &err, why, whylen))
		err = goprof_fetch(m->gp, r, out, why, whylen);
	pthread_mutex_unlock(&m->rd);
	return err;
}

int memsrc_borrow(struct memsrc *m, void (*fn)(struct goprof *gp, void *arg), void *arg, char *why,
		  size_t whylen)
{
	int err = GOPROF_E_OK;

	pthread_mutex_lock(&m->rd);
	if (reader(m, &err, why, whylen))
		fn(m->gp, arg);
	pthread_mutex_unlock(&m->rd);
	return err;
}

int memsrc_enable(struct memsrc *m, int64_t *old, char *why, size_t whylen)
{
	struct gomem *g = NULL;
	int err, rc;

	pthread_mutex_lock(&m->rd);
	if (reader(m, &err, why, whylen))
		g = goprof_gomem(m->gp);
	if (!g) {
		if (m->gp)
			snprintf(why, whylen, "cannot find the heap profile of process %d",
				 (int)m->pid);
		rc = -ENOENT;
	} else {
		rc = gomem_enable(g, old);
	}
	pthread_mutex_unlock(&m->rd);
	return rc;
}

void memsrc_free(struct memsrc *m)
{
	int started;

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	started = m->started;
	m->stop = 1;
	pthread_cond_signal(&m->wake);
	pthread_mutex_unlock(&m->lock);
	if (started)
		pthread_join(m->th, NULL);
	session_mem_put(m->cur);
	for (size_t i = 0; i < m->nhist; i++)
		session_mem_put(m->hist[i]);
	goprof_close(m->gp);
	pthread_cond_destroy(&m->wake);
	pthread_cond_destroy(&m->done);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->rd);
	free(m);
}
