/* mem.c: the server's heap, allocs, block, mutex and goroutine answers: session_mem_fetch,
 * the one code path of `gotop-perf pprof`, on a session of the process (SESSION_MEM: the
 * session owns the runtime's reader) kept between requests.
 *
 * Making the reader indexes the executable's tables and finds the runtime's variables from
 * its code (tens of ms for a large service), and a scraper asks for five profiles of each
 * process every 10 or 15 s: sessions are kept, idle, keyed by pid and start time (a pid
 * reused by another process is another key). A session's reader serves one request at a
 * time and a ?seconds answer holds it for those seconds, so each request takes an idle
 * session or opens one, and gives it back at its end. The idle ones are bounded in
 * number, and dropped when their process is gone or they were not used for a while, each
 * time one is given back: an idle server keeps what the last requests left and does
 * nothing on a timer. */
#include "config.h"
#include "serve-int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/goprof.h"
#include "gotop/procinfo.h"
#include "gotop/session.h"
#include "gotop/util.h"

#define POOL_IDLE_MAX 8
#define POOL_IDLE_NS (300 * 1000000000ULL)

struct mem_idle {
	pid_t pid;
	uint64_t start;
	uint64_t used_ns;
	struct session *s;
};

struct mem_pool {
	pthread_mutex_t lock;
	struct mem_idle idle[POOL_IDLE_MAX];
	size_t n;
};

struct mem_pool *mem_pool_new(void)
{
	struct mem_pool *p = xcalloc(1, sizeof(*p));

	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void mem_pool_free(struct mem_pool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		session_free(p->idle[i].s);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

struct session *mem_pool_get(struct serve *s, const struct sreq *r, int *status, char *why,
			     size_t whylen)
{
	struct mem_pool *p = s->pool;
	struct session *ses = NULL;
	struct session_opts so;
	struct session_err e;
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (i = p->n; i-- > 0;) {
		if (p->idle[i].pid == r->pid && p->idle[i].start == r->start) {
			ses = p->idle[i].s;
			p->idle[i] = p->idle[--p->n];
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (ses)
		return ses;
	session_opts_init(&so);
	so.sources = SESSION_MEM;
	so.pid = r->pid;
	so.mem_max_records = s->o.max_records;
	ses = session_new(&so, &e);
	if (!ses) {
		*status = e.kind == SESSION_FAIL_PERM ? 403 : e.kind == SESSION_FAIL_TARGET ? 404 : 500;
		snprintf(why, whylen, "%s", e.why);
	}
	return ses;
}

/* Whether process pid with that start time still runs. */
static int alive(pid_t pid, uint64_t start)
{
	struct proc_stat st;

	return !procinfo_stat(pid, 0, &st) && st.starttime_ticks == start;
}

void mem_pool_put(struct serve *s, const struct sreq *r, struct session *ses, int keep)
{
	struct mem_pool *p = s->pool;
	struct session *drop[POOL_IDLE_MAX + 1];
	uint64_t now = util_now_ns();
	size_t i, nd = 0, oldest = 0;

	if (!keep) {
		session_free(ses);
		return;
	}
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n;) {
		if (now - p->idle[i].used_ns > POOL_IDLE_NS ||
		    !alive(p->idle[i].pid, p->idle[i].start)) {
			drop[nd++] = p->idle[i].s;
			p->idle[i] = p->idle[--p->n];
			continue;
		}
		i++;
	}
	if (p->n == POOL_IDLE_MAX) {
		for (i = 1; i < p->n; i++)
			if (p->idle[i].used_ns < p->idle[oldest].used_ns)
				oldest = i;
		drop[nd++] = p->idle[oldest].s;
		p->idle[oldest] = p->idle[--p->n];
	}
	p->idle[p->n++] = (struct mem_idle){ r->pid, r->start, now, ses };
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < nd; i++)
		session_free(drop[i]);
}

void serve_goprof(const struct sreq *r, struct sanswer *a)
{
	struct goprof_req req;
	struct goprof_out out;
	struct session *ses;
	char why[512];
	int err, status;

	if (serve_profile_begin(r->s, a))
		return;
	ses = mem_pool_get(r->s, r, &status, why, sizeof(why));
	if (!ses) {
		answer_error(a, status, "%s", why);
		serve_profile_end(r->s);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.name = r->name;
	req.debug = r->debug;
	req.seconds = r->seconds;
	/* A ?seconds wait ends when the server stops (the answer is then a 503). */
	req.cancel = (volatile int *)&r->s->stopping;
	err = session_mem_fetch(ses, &req, &out, why, sizeof(why));
	mem_pool_put(r->s, r, ses,
		    err == GOPROF_E_OK || err == GOPROF_E_REQUEST || err == GOPROF_E_UNKNOWN ||
			    err == GOPROF_E_OFF);
	serve_profile_end(r->s);
	if (err != GOPROF_E_OK) {
		if (r->s->stopping)
			answer_error(a, 503, "the server is stopping");
		else if (err == GOPROF_E_OFF)
			answer_error(a, 404, "%s", why);
		else
			answer_error(a, goprof_http_status(err), "%s", why);
		return;
	}
	a->status = 200;
	a->body = out.data;
	a->len = out.len;
	a->ctype = out.content_type;
	snprintf(a->filename, sizeof(a->filename), "%s", out.filename);
	if (out.st.truncated)
		snprintf(a->note, sizeof(a->note), "cut at %zu records (--max-records)",
			 r->s->o.max_records);
}
