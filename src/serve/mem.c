/* mem.c: the server's heap, allocs, block, mutex and goroutine answers: goprof_fetch, the
 * one code path of `gotop-perf pprof`, on a reader of the process kept between requests.
 *
 * Opening a reader indexes the executable's tables and finds the runtime's variables from
 * its code (tens of ms for a large service), and a scraper asks for five profiles of each
 * process every 10 or 15 s: readers are kept, idle, keyed by pid and start time (a pid
 * reused by another process is another key). A reader serves one thread at a time
 * (goprof.h) and a ?seconds answer holds its reader for those seconds, so each request
 * takes an idle reader or opens one, and gives it back at its end. The idle ones are
 * bounded in number, and dropped when their process is gone or they were not used for a
 * while, each time one is given back: an idle server keeps what the last requests left and
 * does nothing on a timer. */
#include "config.h"
#include "serve-int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/goprof.h"
#include "gotop/procinfo.h"
#include "gotop/util.h"

#define POOL_IDLE_MAX 8
#define POOL_IDLE_NS (300 * 1000000000ULL)

struct gp_idle {
	pid_t pid;
	uint64_t start;
	uint64_t used_ns;
	struct goprof *gp;
};

struct gp_pool {
	pthread_mutex_t lock;
	struct gp_idle idle[POOL_IDLE_MAX];
	size_t n;
};

struct gp_pool *gp_pool_new(void)
{
	struct gp_pool *p = xcalloc(1, sizeof(*p));

	pthread_mutex_init(&p->lock, NULL);
	return p;
}

void gp_pool_free(struct gp_pool *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->n; i++)
		goprof_close(p->idle[i].gp);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

struct goprof *gp_pool_get(struct serve *s, const struct sreq *r, int *err, char *why,
			   size_t whylen)
{
	struct gp_pool *p = s->pool;
	struct goprof *gp = NULL;
	size_t i;

	pthread_mutex_lock(&p->lock);
	for (i = p->n; i-- > 0;) {
		if (p->idle[i].pid == r->pid && p->idle[i].start == r->start) {
			gp = p->idle[i].gp;
			p->idle[i] = p->idle[--p->n];
			break;
		}
	}
	pthread_mutex_unlock(&p->lock);
	if (gp)
		return gp;
	gp = goprof_open(r->pid, err, why, whylen);
	if (gp)
		goprof_set_max_records(gp, s->o.max_records);
	return gp;
}

/* Whether process pid with that start time still runs. */
static int alive(pid_t pid, uint64_t start)
{
	struct proc_stat st;

	return !procinfo_stat(pid, 0, &st) && st.starttime_ticks == start;
}

void gp_pool_put(struct serve *s, const struct sreq *r, struct goprof *gp, int keep)
{
	struct gp_pool *p = s->pool;
	struct goprof *drop[POOL_IDLE_MAX + 1];
	uint64_t now = util_now_ns();
	size_t i, nd = 0, oldest = 0;

	if (!keep) {
		goprof_close(gp);
		return;
	}
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < p->n;) {
		if (now - p->idle[i].used_ns > POOL_IDLE_NS ||
		    !alive(p->idle[i].pid, p->idle[i].start)) {
			drop[nd++] = p->idle[i].gp;
			p->idle[i] = p->idle[--p->n];
			continue;
		}
		i++;
	}
	if (p->n == POOL_IDLE_MAX) {
		for (i = 1; i < p->n; i++)
			if (p->idle[i].used_ns < p->idle[oldest].used_ns)
				oldest = i;
		drop[nd++] = p->idle[oldest].gp;
		p->idle[oldest] = p->idle[--p->n];
	}
	p->idle[p->n++] = (struct gp_idle){ r->pid, r->start, now, gp };
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < nd; i++)
		goprof_close(drop[i]);
}

void serve_goprof(const struct sreq *r, struct sanswer *a)
{
	struct goprof_req req;
	struct goprof_out out;
	struct goprof *gp;
	char why[256];
	int err;

	if (serve_profile_begin(r->s, a))
		return;
	gp = gp_pool_get(r->s, r, &err, why, sizeof(why));
	if (!gp) {
		answer_error(a, goprof_http_status(err), "%s", why);
		serve_profile_end(r->s);
		return;
	}
	memset(&req, 0, sizeof(req));
	req.name = r->name;
	req.debug = r->debug;
	req.seconds = r->seconds;
	/* A ?seconds wait ends when the server stops (the answer is then a 503). */
	req.cancel = (volatile int *)&r->s->stopping;
	err = goprof_fetch(gp, &req, &out, why, sizeof(why));
	gp_pool_put(r->s, r, gp,
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
