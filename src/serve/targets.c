/* targets.c: the processes the server offers: /targets, the Prometheus HTTP service
 * discovery list (https://prometheus.io/docs/prometheus/latest/http_sd/: a JSON array of
 * {"targets": ["HOST:PORT"], "labels": {...}}), whose labels say where each process's
 * profiles and metrics are (__profile_path_prefix__ as Alloy's pyroscope.scrape reads it,
 * __metrics_path__ as Prometheus reads it), and the root page, the same list for a person.
 *
 * The processes are the shared list of local processes (procs.h), the one the live UI's
 * process picker shows: those that are Go programs and whose memory this server may open
 * (PROCS_MEM, the check every read of a request makes, check_target in serve.c). */
#include "config.h"
#include "serve-int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/procs.h"
#include "gotop/util.h"

size_t serve_targets_list(struct serve *s, struct serve_target **out)
{
	const struct procs_entry *e;
	struct serve_target *v = NULL;
	size_t n = 0, cap = 0, ne, i;

	*out = NULL;
	pthread_mutex_lock(&s->procs_lock);
	if (procs_scan(s->procs)) {
		pthread_mutex_unlock(&s->procs_lock);
		return 0;
	}
	ne = procs_list(s->procs, &e);
	for (i = 0; i < ne; i++) {
		struct serve_target *t;

		if (!e[i].go_version[0] || !(e[i].access & PROCS_MEM) ||
		    (s->o.pid && e[i].pid != s->o.pid))
			continue;
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		t = &v[n++];
		memset(t, 0, sizeof(*t));
		t->pid = e[i].pid;
		snprintf(t->comm, sizeof(t->comm), "%s", e[i].comm);
		util_escape(t->exe, sizeof(t->exe), e[i].exe, strlen(e[i].exe), 1);
		snprintf(t->go_version, sizeof(t->go_version), "%s", e[i].go_version);
	}
	pthread_mutex_unlock(&s->procs_lock);
	*out = v;
	return n;
}

/* The HOST:PORT scrapers are to use: --advertise, else the address listened on, else (a
 * wildcard address) the Host the request came to when it looks like one. */
static void advertised(const struct sreq *r, char *buf, size_t len)
{
	struct serve *s = r->s;
	const char *h = r->host;
	size_t i;

	if (s->advertise) {
		snprintf(buf, len, "%s", s->advertise);
		return;
	}
	snprintf(buf, len, "%s", s->addr);
	if (!s->wildcard || !h || !*h || strlen(h) >= len || strlen(h) > 255)
		return;
	for (i = 0; h[i]; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]",
			    h[i]))
			return;
	snprintf(buf, len, "%s", h);
}

void serve_targets(const struct sreq *r, struct sanswer *a)
{
	struct serve_target *v;
	struct sbuf b = { 0 };
	char addr[300];
	size_t n, i;

	n = serve_targets_list(r->s, &v);
	advertised(r, addr, sizeof(addr));
	sbuf_add(&b, "[", 1);
	for (i = 0; i < n; i++) {
		sbuf_printf(&b, "%s\n  {\"targets\": [\"", i ? "," : "");
		sbuf_json(&b, addr);
		sbuf_printf(&b,
			    "\"], \"labels\": {\"__metrics_path__\": \"/pid/%d/metrics\", "
			    "\"__profile_path_prefix__\": \"/pid/%d\", \"pid\": \"%d\", \"comm\": \"",
			    (int)v[i].pid, (int)v[i].pid, (int)v[i].pid);
		sbuf_json(&b, v[i].comm);
		sbuf_add(&b, "\", \"service_name\": \"", 20);
		sbuf_json(&b, v[i].comm);
		sbuf_add(&b, "\", \"exe\": \"", 11);
		sbuf_json(&b, v[i].exe);
		sbuf_add(&b, "\", \"go_version\": \"", 18);
		sbuf_json(&b, v[i].go_version);
		sbuf_add(&b, "\"}}", 3);
	}
	sbuf_add(&b, n ? "\n]\n" : "]\n", n ? 3 : 2);
	free(v);
	answer_sbuf(a, "application/json", &b);
	snprintf(a->note, sizeof(a->note), "%zu targets", n);
}

void serve_root(const struct sreq *r, struct sanswer *a)
{
	struct serve_target *v;
	struct sbuf b = { 0 };
	size_t n, i;

	n = serve_targets_list(r->s, &v);
	sbuf_printf(&b, "<html>\n<head>\n<title>gotop-perf serve</title>\n</head>\n<body>\n"
			"<p>gotop-perf %s serve: %zu Go process%s, read from outside. "
			"<a href=\"/targets\">/targets</a> lists them for Prometheus HTTP service "
			"discovery.</p>\n<table>\n<thead><td>PID</td><td>command</td><td>Go</td>"
			"<td>executable</td><td></td></thead>\n",
		    PACKAGE_VERSION, n, n == 1 ? "" : "es");
	for (i = 0; i < n; i++) {
		sbuf_printf(&b, "<tr><td><a href='/pid/%d/debug/pprof/'>%d</a></td><td>", (int)v[i].pid,
			    (int)v[i].pid);
		sbuf_html(&b, v[i].comm);
		sbuf_add(&b, "</td><td>", 9);
		sbuf_html(&b, v[i].go_version);
		sbuf_add(&b, "</td><td>", 9);
		sbuf_html(&b, v[i].exe);
		sbuf_printf(&b, "</td><td><a href='/pid/%d/metrics'>metrics</a></td></tr>\n",
			    (int)v[i].pid);
	}
	sbuf_printf(&b, "</table>\n</body>\n</html>\n");
	free(v);
	answer_sbuf(a, "text/html; charset=utf-8", &b);
}
