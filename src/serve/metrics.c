/* metrics.c: /pid/PID/metrics, in Prometheus's text exposition format (version 0.0.4:
 * https://prometheus.io/docs/instrumenting/exposition_formats/): what a scrape of a Go
 * process from outside can say about it, and what gotop-perf costs.
 *
 * - gotop_go_goroutines{state, wait_reason}: every goroutine the runtime lists (system ones
 *   too, unlike runtime.NumGoroutine), read from memory as goroutine?debug=2 is (gosnap.h);
 *   goroutines that ran while read are counted apart (gotop_go_goroutines_unread).
 * - gotop_go_heap_inuse_bytes and _objects, gotop_go_heap_alloc_bytes_total and
 *   _objects_total: the heap profile's sums as /debug/pprof/heap gives them (Go's estimates
 *   from the sampled allocations, scaleHeapSample), as of the last GC cycle; left out when
 *   the program samples no allocations (gotop_go_memprofile_rate_bytes 0).
 * - gotop_go_gc_cycles_total: GC cycles ended, as the heap profile counts them
 *   (runtime.mProfCycle >> 1, go1.19 to go1.27 runtime/mprof.go mProf_NextCycle, which
 *   every mark termination calls).
 * - gotop_perf_*: the samples and lost records of the server's sessions on the process, and
 *   the server's own CPU time and requests. */
#include "config.h"
#include "serve-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/gosnap.h"
#include "gotop/procinfo.h"
#include "gotop/session.h"
#include "gotop/util.h"

/* One series of goroutines. */
struct gstate {
	const char *state, *reason;
	uint64_t n;
};

static int cmp_gstate(const void *a, const void *b)
{
	const struct gstate *x = a, *y = b;
	int c = strcmp(x->state, y->state);

	return c ? c : strcmp(x->reason, y->reason);
}

/* A label value: backslash, double quote and newline escaped (the format's rule). */
static void label_value(struct sbuf *b, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			sbuf_add(b, "\\", 1);
		if (*v == '\n')
			sbuf_add(b, "\\n", 2);
		else
			sbuf_add(b, v, 1);
	}
}

static void head(struct sbuf *b, const char *name, const char *type, const char *help)
{
	sbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void goroutines(struct sbuf *b, const struct gosnap_result *r)
{
	struct gstate *v = NULL;
	size_t n = 0, cap = 0, i, k;

	for (i = 0; i < r->n; i++) {
		const struct gosnap_g *g = &r->g[i];
		const char *st = gosnap_state_name(g->state), *why = g->wait ? g->wait : "";

		for (k = 0; k < n; k++)
			if (!strcmp(v[k].state, st) && !strcmp(v[k].reason, why))
				break;
		if (k == n) {
			xgrow((void **)&v, &cap, n + 1, sizeof(*v));
			v[n++] = (struct gstate){ st, why, 0 };
		}
		v[k].n++;
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_gstate);
	head(b, "gotop_go_goroutines", "gauge",
	     "Goroutines of the process by state and wait reason, read from its memory.");
	for (k = 0; k < n; k++) {
		sbuf_add(b, "gotop_go_goroutines{state=\"", 27);
		label_value(b, v[k].state);
		sbuf_add(b, "\",wait_reason=\"", 15);
		label_value(b, v[k].reason);
		sbuf_printf(b, "\"} %llu\n", (unsigned long long)v[k].n);
	}
	head(b, "gotop_go_goroutines_unread", "gauge",
	     "Goroutines left out of the last read: they ran while it was made.");
	sbuf_printf(b, "gotop_go_goroutines_unread %llu\n", (unsigned long long)r->st.torn);
	free(v);
}

/* The heap profile's sums; 0, or -1 when it cannot be read. */
static int heap(struct sbuf *b, struct gomem *gm, size_t max)
{
	struct gomem_snap s;
	int64_t io = 0, ib = 0, ao = 0, ab = 0, c, y;
	size_t i;

	if (!gm || gomem_read(gm, GOMEM_HEAP, max, &s))
		return -1;
	head(b, "gotop_go_memprofile_rate_bytes", "gauge",
	     "runtime.MemProfileRate: one allocation sampled per that many bytes (0: none).");
	sbuf_printf(b, "gotop_go_memprofile_rate_bytes %lld\n", (long long)s.rate);
	head(b, "gotop_go_gc_cycles_total", "counter",
	     "GC cycles ended, as the heap profile counts them (runtime.mProfCycle).");
	sbuf_printf(b, "gotop_go_gc_cycles_total %u\n", s.st.cycle);
	if (s.rate <= 0)
		return 0;
	for (i = 0; i < s.n; i++) {
		const struct gomem_bucket *r = &s.b[i];

		goprof_scale_heap(r->allocs, r->alloc_bytes, s.rate, &c, &y);
		ao += c;
		ab += y;
		goprof_scale_heap(r->allocs - r->frees, r->alloc_bytes - r->free_bytes, s.rate, &c,
				  &y);
		io += c;
		ib += y;
	}
	head(b, "gotop_go_heap_inuse_bytes", "gauge",
	     "Bytes of live heap objects as of the last GC cycle (the heap profile's inuse_space).");
	sbuf_printf(b, "gotop_go_heap_inuse_bytes %lld\n", (long long)ib);
	head(b, "gotop_go_heap_inuse_objects", "gauge",
	     "Live heap objects as of the last GC cycle (the heap profile's inuse_objects).");
	sbuf_printf(b, "gotop_go_heap_inuse_objects %lld\n", (long long)io);
	head(b, "gotop_go_heap_alloc_bytes_total", "counter",
	     "Bytes allocated since the start (the heap profile's alloc_space).");
	sbuf_printf(b, "gotop_go_heap_alloc_bytes_total %lld\n", (long long)ab);
	head(b, "gotop_go_heap_alloc_objects_total", "counter",
	     "Objects allocated since the start (the heap profile's alloc_objects).");
	sbuf_printf(b, "gotop_go_heap_alloc_objects_total %lld\n", (long long)ao);
	return 0;
}

/* What the process's reader gives the metrics (session_mem_borrow): its goroutines and
 * the heap profile's sums, written while the reader is held. */
struct metrics_read {
	struct sbuf *b;
	size_t max_records;
	struct sanswer *a;
	int ok;
};

static void read_process(struct goprof *gp, void *arg)
{
	struct metrics_read *m = arg;
	struct gosnap_result gr;
	char why[256];
	int err;

	m->ok = goprof_goroutines(gp, &gr, &err, why, sizeof(why)) == 0;
	if (m->ok)
		goroutines(m->b, &gr);
	else
		snprintf(m->a->note, sizeof(m->a->note), "no goroutines: %.150s", why);
	if (heap(m->b, goprof_gomem(gp), m->max_records) == 0)
		m->ok = 1;
}

void serve_metrics(const struct sreq *r, struct sanswer *a)
{
	struct serve *s = r->s;
	struct cpu_pid_stats cs;
	struct sbuf b = { 0 };
	struct metrics_read m = { &b, s->o.max_records, a, 0 };
	struct session *ses;
	uint64_t t0 = util_now_ns(), reqs;
	char why[512];
	int status, err;

	ses = mem_pool_get(s, r, &status, why, sizeof(why));
	if (!ses) {
		answer_error(a, status, "%s", why);
		return;
	}
	head(&b, "gotop_go_info", "gauge", "The Go process: its Go version.");
	sbuf_add(&b, "gotop_go_info{version=\"", 23);
	label_value(&b, r->go_version);
	sbuf_add(&b, "\"} 1\n", 5);
	err = session_mem_borrow(ses, read_process, &m, why, sizeof(why));
	mem_pool_put(s, r, ses, err == GOPROF_E_OK && m.ok);
	if (err != GOPROF_E_OK) {
		free(b.buf);
		answer_error(a, goprof_http_status(err), "%s", why);
		return;
	}

	cpu_pid_stats(s->cpu, r->pid, r->start, &cs);
	head(&b, "gotop_perf_samples_total", "counter",
	     "CPU samples gotop-perf took of the process for its CPU and wall profiles.");
	sbuf_printf(&b, "gotop_perf_samples_total %llu\n", (unsigned long long)cs.samples);
	head(&b, "gotop_perf_lost_total", "counter",
	     "Samples lost: the kernel's ring was full (lost records) or gotop-perf fell behind.");
	sbuf_printf(&b, "gotop_perf_lost_total %llu\n", (unsigned long long)cs.lost);
	head(&b, "gotop_perf_sessions_total", "counter",
	     "Profiling sessions opened on the process (one serves every request at once).");
	sbuf_printf(&b, "gotop_perf_sessions_total %llu\n", (unsigned long long)cs.sessions);
	head(&b, "gotop_perf_session_active", "gauge", "1 while a session samples the process.");
	sbuf_printf(&b, "gotop_perf_session_active %d\n", cs.active);
	pthread_mutex_lock(&s->lock);
	reqs = s->requests;
	pthread_mutex_unlock(&s->lock);
	head(&b, "gotop_perf_cpu_seconds_total", "counter",
	     "CPU time gotop-perf serve used, user and system, for every process it serves.");
	sbuf_printf(&b, "gotop_perf_cpu_seconds_total %.3f\n",
		    (double)procinfo_self_cpu_ns() / 1e9);
	head(&b, "gotop_perf_requests_total", "counter", "Requests gotop-perf serve answered.");
	sbuf_printf(&b, "gotop_perf_requests_total %llu\n", (unsigned long long)reqs);
	head(&b, "gotop_perf_metrics_read_seconds", "gauge",
	     "How long reading the process for this answer took.");
	sbuf_printf(&b, "gotop_perf_metrics_read_seconds %.6f\n",
		    (double)(util_now_ns() - t0) / 1e9);
	answer_sbuf(a, "text/plain; version=0.0.4; charset=utf-8", &b);
}
