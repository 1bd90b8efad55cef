/* serve.c: the HTTP side of `gotop-perf serve`: libmicrohttpd's daemon (a listening thread
 * and a thread per connection, so a handler may wait out a profile's seconds), the bearer
 * token, the routes and the validation of every path and parameter, the permission check
 * a target must pass, net/http/pprof's headers and index page, and one log line per
 * request. The answers themselves are made in mem.c, cpu.c, targets.c and metrics.c.
 *
 * net/http/pprof's behaviour followed here (go1.19 to go1.27 net/http/pprof/pprof.go):
 * binary answers carry Content-Type application/octet-stream and Content-Disposition
 * attachment; filename="NAME" ("NAME-delta" for ?seconds, "profile" for the CPU profile);
 * debug=N answers are text/plain; charset=utf-8; every answer has X-Content-Type-Options:
 * nosniff; errors (serveError) are text/plain with X-Go-Pprof: 1 and the message and a
 * newline as body; an unknown profile is 404 "Unknown profile"; ?seconds that is not a
 * positive integer is 400; seconds with debug is 400. Stricter than Go: a parameter that
 * does not parse, a parameter no handler reads, a repeated one, or seconds above
 * --max-seconds are 400 (Go ignores or defaults them): a scraper's mistake shows at once.
 */
#include "config.h"
#include "serve-int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gelf.h>

#include "gotop/gopclntab.h"
#include "gotop/procinfo.h"
#include "gotop/procs.h"
#include "gotop/util.h"

/* Linux's PID_MAX_LIMIT on 64-bit (include/linux/threads.h): no pid is above it. */
#define PID_LIMIT 4194304
/* Request header bytes a connection may hold (libmicrohttpd answers 431 past it). */
#define CONN_MEMORY (32u << 10)
/* A URI kept for the log at most. */
#define LOG_URI_MAX 160

void serve_opts_init(struct serve_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->listen = SERVE_DEFAULT_LISTEN;
	o->max_connections = SERVE_DEFAULT_MAX_CONNECTIONS;
	o->max_per_ip = SERVE_DEFAULT_MAX_PER_IP;
	o->max_profiles = SERVE_DEFAULT_MAX_PROFILES;
	o->max_seconds = SERVE_DEFAULT_MAX_SECONDS;
	o->timeout_s = SERVE_DEFAULT_TIMEOUT_S;
	o->max_records = SERVE_DEFAULT_MAX_RECORDS;
	o->freq = SERVE_DEFAULT_FREQ;
	o->wall_hz = SERVE_DEFAULT_WALL_HZ;
	o->linger_ms = SERVE_DEFAULT_LINGER_MS;
}

/* ---- the log ---- */

void serve_log(struct serve *s, const char *fmt, ...)
{
	char raw[1024], line[1024];
	va_list ap;
	int n;

	if (!s->o.log)
		return;
	va_start(ap, fmt);
	n = vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	util_escape(line, sizeof(line), raw, GP_MIN((size_t)n, sizeof(raw) - 1), 1);
	pthread_mutex_lock(&s->lock);
	s->o.log(s->o.log_arg, line);
	pthread_mutex_unlock(&s->lock);
}

/* libmicrohttpd's own messages (a socket error, a connection refused for the limits). */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct serve *s = cls;
	char raw[512];
	int n = vsnprintf(raw, sizeof(raw), fmt, ap);

	if (n <= 0)
		return;
	while (n > 0 && (raw[n - 1] == '\n' || raw[n - 1] == '\r'))
		raw[--n] = 0;
	serve_log(s, "http: %s", raw);
}

/* ---- text ---- */

void sbuf_add(struct sbuf *b, const char *t, size_t n)
{
	xgrow((void **)&b->buf, &b->cap, b->len + n + 1, 1);
	memcpy(b->buf + b->len, t, n);
	b->len += n;
	b->buf[b->len] = 0;
}

void sbuf_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	xgrow((void **)&b->buf, &b->cap, b->len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void sbuf_json(struct sbuf *b, const char *t)
{
	for (; *t; t++) {
		if (*t == '"' || *t == '\\')
			sbuf_add(b, "\\", 1);
		sbuf_add(b, t, 1);
	}
}

void sbuf_html(struct sbuf *b, const char *t)
{
	for (; *t; t++) {
		switch (*t) {
		case '&': sbuf_add(b, "&amp;", 5); break;
		case '<': sbuf_add(b, "&lt;", 4); break;
		case '>': sbuf_add(b, "&gt;", 4); break;
		case '"': sbuf_add(b, "&#34;", 5); break;
		case '\'': sbuf_add(b, "&#39;", 5); break;
		default: sbuf_add(b, t, 1);
		}
	}
}

void answer_sbuf(struct sanswer *a, const char *ctype, struct sbuf *b)
{
	a->status = 200;
	a->ctype = ctype;
	a->body = (uint8_t *)(b->buf ? b->buf : xstrdup(""));
	a->len = b->len;
	b->buf = NULL;
	b->len = b->cap = 0;
}

void answer_text(struct sanswer *a, const char *ctype, const char *text, size_t len)
{
	a->status = 200;
	a->ctype = ctype;
	a->body = (uint8_t *)xmemdup0(text, len);
	a->len = len;
}

void answer_error(struct sanswer *a, int status, const char *fmt, ...)
{
	char raw[sizeof(a->note)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* The message may hold what a target or a client gave (a path, a name). */
	util_escape(a->note, sizeof(a->note), raw, strlen(raw), 1);
	free(a->body);
	a->status = status;
	a->ctype = "text/plain; charset=utf-8";
	a->filename[0] = 0;
	a->body = (uint8_t *)xasprintf("%s\n", a->note);
	a->len = strlen((char *)a->body);
}

/* ---- profiles at work, requests that end ---- */

int serve_profile_begin(struct serve *s, struct sanswer *a)
{
	int ok;

	pthread_mutex_lock(&s->lock);
	ok = s->profiles < s->o.max_profiles && !s->stopping;
	if (ok)
		s->profiles++;
	pthread_mutex_unlock(&s->lock);
	if (!ok)
		answer_error(a, 503, s->stopping ? "the server is stopping"
						 : "busy: %u profiles are being made (--max-profiles)",
			     s->o.max_profiles);
	return ok ? 0 : -1;
}

void serve_profile_end(struct serve *s)
{
	pthread_mutex_lock(&s->lock);
	s->profiles--;
	pthread_mutex_unlock(&s->lock);
}

int serve_request_over(const struct sreq *r)
{
	struct pollfd p = { r->client_fd, POLLRDHUP, 0 };

	if (__atomic_load_n(&r->s->stopping, __ATOMIC_ACQUIRE))
		return 1;
	/* A client that closed its side (or reset) will never read the answer. Only the
	 * hang-up events are asked: a pipelined request waiting is not one. */
	return r->client_fd >= 0 && poll(&p, 1, 0) > 0 &&
	       (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* ---- a request's life: its context from the URI to the log line ---- */

struct conn_req {
	uint64_t t0;
	char uri[LOG_URI_MAX + 8];   /* escaped, cut */
	char client[64];
	const char *method;
	int status;                  /* 0: no answer was made by us */
	size_t bytes;
	char note[200];
	int seen;
};

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
	struct conn_req *q = xcalloc(1, sizeof(*q));
	const union MHD_ConnectionInfo *ci;

	(void)cls;
	q->t0 = util_now_ns();
	util_escape(q->uri, sizeof(q->uri), uri, GP_MIN(strlen(uri), (size_t)LOG_URI_MAX), 1);
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(q->client, sizeof(q->client), "?");
	if (ci && ci->client_addr) {
		socklen_t len = ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
									: sizeof(struct sockaddr_in);
		char host[INET6_ADDRSTRLEN], port[16];

		if (!getnameinfo(ci->client_addr, len, host, sizeof(host), port, sizeof(port),
				 NI_NUMERICHOST | NI_NUMERICSERV))
			snprintf(q->client, sizeof(q->client),
				 ci->client_addr->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host,
				 port);
	}
	return q;
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls,
		      enum MHD_RequestTerminationCode toe)
{
	static const char *const ends[] = {
		[MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
		[MHD_REQUEST_TERMINATED_WITH_ERROR] = " (ended with an error)",
		[MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = " (timed out)",
		[MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = " (server stopping)",
		[MHD_REQUEST_TERMINATED_READ_ERROR] = " (read error)",
		[MHD_REQUEST_TERMINATED_CLIENT_ABORT] = " (client gone)",
	};
	struct serve *s = cls;
	struct conn_req *q = *req_cls;
	const char *end = (size_t)toe < GP_ARRAY_SIZE(ends) && ends[toe] ? ends[toe] : " (ended)";

	(void)c;
	if (!q)
		return;
	if (q->status)
		serve_log(s, "%s %s %s %d %zu %.0fms%s%s%s", q->client, q->method ? q->method : "-",
			  q->uri, q->status, q->bytes, (double)(util_now_ns() - q->t0) / 1e6,
			  q->note[0] ? ": " : "", q->note, end);
	else
		serve_log(s, "%s %s %s - - %.0fms: no answer made%s", q->client,
			  q->method ? q->method : "-", q->uri,
			  (double)(util_now_ns() - q->t0) / 1e6, end);
	pthread_mutex_lock(&s->lock);
	s->requests++;
	pthread_mutex_unlock(&s->lock);
	free(q);
	*req_cls = NULL;
}

/* ---- parameters ---- */

struct params {
	const char *allowed;         /* "seconds,debug,gc," of the route */
	int debug, seconds, gc;
	int have_debug, have_seconds, have_gc;
	int bad;
	char why[160];
};

/* A decimal number from 0 to 999999999, nothing else; -1 otherwise. */
static int small_uint(const char *v)
{
	int n = 0;
	size_t i;

	if (!v || !*v || strlen(v) > 9)
		return -1;
	for (i = 0; v[i]; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		n = n * 10 + (v[i] - '0');
	}
	return n;
}

static enum MHD_Result one_param(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct params *p = cls;
	char k[24];
	int *val, *have;

	(void)kind;
	if (p->bad)
		return MHD_NO;
	snprintf(k, sizeof(k), "%.20s,", key);
	if (!*key || strlen(key) > 16 || !strstr(p->allowed, k)) {
		char e[64];

		util_escape(e, sizeof(e), key, GP_MIN(strlen(key), (size_t)32), 1);
		snprintf(p->why, sizeof(p->why), "unknown parameter \"%s\"", e);
		p->bad = 1;
		return MHD_NO;
	}
	if (!strcmp(key, "debug")) {
		val = &p->debug;
		have = &p->have_debug;
	} else if (!strcmp(key, "seconds")) {
		val = &p->seconds;
		have = &p->have_seconds;
	} else {
		val = &p->gc;
		have = &p->have_gc;
	}
	if (*have) {
		snprintf(p->why, sizeof(p->why), "parameter \"%s\" given twice", key);
		p->bad = 1;
		return MHD_NO;
	}
	*have = 1;
	*val = small_uint(value);
	if (*val < 0) {
		snprintf(p->why, sizeof(p->why),
			 !strcmp(key, "seconds")
				 ? "invalid value for \"seconds\" - must be a positive integer"
				 : "invalid value for \"%s\" - must be a whole number",
			 key);
		p->bad = 1;
		return MHD_NO;
	}
	return MHD_YES;
}

/* Reads and checks the query against the route's allowed names. 0, or -1 with the 400. */
static int read_params(struct MHD_Connection *c, struct params *p, const char *allowed,
		       struct sanswer *a)
{
	memset(p, 0, sizeof(*p));
	p->allowed = allowed;
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, one_param, p);
	if (p->bad) {
		answer_error(a, 400, "%s", p->why);
		return -1;
	}
	return 0;
}

/* ---- the target of /pid/PID/... ---- */

/* Whether this server may serve process pid: it exists, is a process (not a kernel
 * thread, a zombie or the server), is the one -p named when one was, may be traced, and
 * runs Go. 0 with r filled, or the error in a. The trace check is the kernel's own: a
 * process's memory opens only under PTRACE_MODE_ATTACH (fs/proc/base.c mem_open,
 * mm_access: the same user or CAP_SYS_PTRACE, and kernel.yama.ptrace_scope), which every
 * answer needs (process_vm_readv checks the same mode); perf_event_open's check
 * (PTRACE_MODE_READ) is weaker. Only /proc/PID is looked at, for a pid already checked as a
 * number: no request names a file. */
/* The Go version of the executable process pid runs into ver ("" not Go), from its build
 * info as the list of processes reads it (gopcln_elf_go_version), once per executable
 * (device, inode, size and time). */
static void go_version(struct serve *s, pid_t pid, char *ver, size_t verlen)
{
	struct serve_gover *g = NULL;
	char path[64], *v;
	struct stat sb;
	size_t i;
	Elf *elf;
	int fd;

	ver[0] = 0;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &sb)) {
		close(fd);
		return;
	}
	pthread_mutex_lock(&s->procs_lock);
	for (i = 0; i < s->ngover; i++) {
		g = &s->gover[i];
		if (g->dev == (uint64_t)sb.st_dev && g->ino == (uint64_t)sb.st_ino &&
		    g->size == (uint64_t)sb.st_size &&
		    g->mtime_ns == (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec) {
			snprintf(ver, verlen, "%s", g->ver);
			pthread_mutex_unlock(&s->procs_lock);
			close(fd);
			return;
		}
	}
	pthread_mutex_unlock(&s->procs_lock);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && (v = gopcln_elf_go_version(elf))) {
		snprintf(ver, verlen, "%s", v);
		free(v);
	}
	elf_end(elf);
	close(fd);
	pthread_mutex_lock(&s->procs_lock);
	if (!s->gover)
		s->gover = xcalloc(GOVER_MAX, sizeof(*s->gover));
	if (s->ngover < GOVER_MAX)
		g = &s->gover[s->ngover++];
	else
		g = &s->gover[s->gover_next++ % GOVER_MAX];
	g->dev = (uint64_t)sb.st_dev;
	g->ino = (uint64_t)sb.st_ino;
	g->size = (uint64_t)sb.st_size;
	g->mtime_ns = (int64_t)sb.st_mtim.tv_sec * 1000000000LL + sb.st_mtim.tv_nsec;
	snprintf(g->ver, sizeof(g->ver), "%s", ver);
	pthread_mutex_unlock(&s->procs_lock);
}

static int check_target(struct serve *s, pid_t pid, struct sreq *r, struct sanswer *a)
{
	struct proc_stat st;
	char path[64];
	int fd, e;

	if (s->o.pid && pid != s->o.pid) {
		answer_error(a, 404, "process %d is not served here (serve -p %d)", (int)pid,
			     (int)s->o.pid);
		return -1;
	}
	if (pid == getpid() || procinfo_stat(pid, 0, &st) || (st.flags & 0x00200000) ||
	    st.state == 'Z' || st.state == 'X') {
		answer_error(a, 404, "no such Go process: %d", (int)pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		if (e == ENOENT || e == ESRCH)
			answer_error(a, 404, "no such Go process: %d", (int)pid);
		else
			answer_error(a, 403,
				     "not permitted to trace process %d (another user's, or "
				     "kernel.yama.ptrace_scope: the server needs CAP_SYS_PTRACE)",
				     (int)pid);
		return -1;
	}
	close(fd);
	go_version(s, pid, r->go_version, sizeof(r->go_version));
	if (!r->go_version[0]) {
		answer_error(a, 404, "process %d is not a Go program", (int)pid);
		return -1;
	}
	r->pid = pid;
	r->start = st.starttime_ticks;
	return 0;
}

/* "/pid/PID/REST": the pid (1 to PID_LIMIT, decimal, no leading zero) and REST. 0, or the
 * 400. */
static int parse_pid(const char *url, pid_t *pid, const char **rest, struct sanswer *a)
{
	const char *p = url + 5;
	long v = 0;
	int n = 0;

	while (p[n] >= '0' && p[n] <= '9' && n < 8) {
		v = v * 10 + (p[n] - '0');
		n++;
	}
	if (!n || (p[0] == '0') || v > PID_LIMIT || (p[n] && p[n] != '/')) {
		answer_error(a, 400, "not a process id in the path (/pid/PID/...)");
		return -1;
	}
	*pid = (pid_t)v;
	*rest = p + n;
	return 0;
}

/* ---- pages ---- */

static const struct {
	const char *name, *desc;
} profiles[] = {
	{ "allocs", "A sampling of all past memory allocations (read from the process's "
		    "heap profile)" },
	{ "block", "Stack traces that led to blocking on synchronization primitives (when the "
		   "program enabled them)" },
	{ "goroutine", "Stack traces of all current goroutines. Use debug=2 as a query "
		       "parameter to export in the same format as an unrecovered panic." },
	{ "heap", "A sampling of memory allocations of live objects, as of the last GC cycle." },
	{ "mutex", "Stack traces of holders of contended mutexes (when the program enabled "
		   "them)" },
	{ "profile", "CPU profile (perf_event_open, kernel frames when allowed). You can specify "
		     "the duration in the seconds GET parameter." },
	{ "wall", "Wall-clock profile of every goroutine, on CPU or not, label state. You can "
		  "specify the duration in the seconds GET parameter." },
};

/* The index page, laid out as net/http/pprof's (without its counts: each would be a
 * read of the process). */
static void index_page(const struct sreq *r, const char *prefix, struct sanswer *a)
{
	struct sbuf b = { 0 };
	size_t i;

	sbuf_printf(&b, "<html>\n<head>\n<title>%s/debug/pprof/</title>\n<style>\n"
			".profile-name{\n\tdisplay:inline-block;\n\twidth:6rem;\n}\n</style>\n"
			"</head>\n<body>\n%s/debug/pprof/ of process %d (%s), read from outside "
			"by gotop-perf\n<br>\n<p>Set debug=1 as a query parameter to export in "
			"legacy text format</p>\n<br>\nTypes of profiles available:\n<table>\n"
			"<thead><td>Profile</td></thead>\n",
		    prefix, prefix, (int)r->pid, r->go_version);
	for (i = 0; i < GP_ARRAY_SIZE(profiles); i++) {
		const char *q = strcmp(profiles[i].name, "profile") &&
						strcmp(profiles[i].name, "wall")
					? "?debug=1"
					: "";

		sbuf_printf(&b, "<tr><td><a href='%s%s'>%s</a></td></tr>\n", profiles[i].name, q,
			    profiles[i].name);
	}
	sbuf_printf(&b, "</table>\n<a href=\"goroutine?debug=2\">full goroutine stack dump</a>\n"
			"<br>\n<p>\nProfile Descriptions:\n<ul>\n");
	for (i = 0; i < GP_ARRAY_SIZE(profiles); i++) {
		sbuf_printf(&b, "<li><div class=profile-name>%s: </div> ", profiles[i].name);
		sbuf_html(&b, profiles[i].desc);
		sbuf_printf(&b, "</li>\n");
	}
	sbuf_printf(&b, "</ul>\n</p>\n</body>\n</html>");
	answer_sbuf(a, "text/html; charset=utf-8", &b);
}

/* /debug/pprof/NAME of process r->pid; the parameters checked as NAME reads them. */
static void pprof_route(struct MHD_Connection *c, struct sreq *r, const char *name,
			const char *prefix, struct sanswer *a)
{
	struct params p;

	a->pprof_error = 1;
	if (!*name) {
		if (!read_params(c, &p, "", a))
			index_page(r, prefix, a);
		return;
	}
	if (!strcmp(name, "profile") || !strcmp(name, "wall")) {
		if (read_params(c, &p, "seconds,", a))
			return;
		if (p.have_seconds && (p.seconds < 1 || (unsigned)p.seconds > r->s->o.max_seconds)) {
			answer_error(a, 400, "seconds: from 1 to %u (--max-seconds)",
				     r->s->o.max_seconds);
			return;
		}
		r->seconds = p.have_seconds ? p.seconds : SERVE_DEFAULT_SECONDS;
		if ((unsigned)r->seconds > r->s->o.max_seconds)
			r->seconds = (int)r->s->o.max_seconds;
		serve_cpu(r, !strcmp(name, "wall"), a);
		return;
	}
	if (strcmp(name, "heap") && strcmp(name, "allocs") && strcmp(name, "block") &&
	    strcmp(name, "mutex") && strcmp(name, "goroutine")) {
		answer_error(a, 404, "Unknown profile");
		return;
	}
	if (read_params(c, &p, strcmp(name, "heap") ? "seconds,debug," : "seconds,debug,gc,", a))
		return;
	if (p.have_gc && p.gc) {
		answer_error(a, 400, "gc=%d: a garbage collection cannot be started from outside "
				     "the process", p.gc);
		return;
	}
	if (p.have_seconds && (p.seconds < 1 || (unsigned)p.seconds > r->s->o.max_seconds)) {
		answer_error(a, 400,
			     p.seconds < 1
				     ? "invalid value for \"seconds\" - must be a positive integer"
				     : "seconds: at most %u (--max-seconds)",
			     r->s->o.max_seconds);
		return;
	}
	if (p.have_debug && p.debug > 2) {
		answer_error(a, 400, "debug: 0, 1 or 2");
		return;
	}
	if (p.have_seconds && p.debug) {
		answer_error(a, 400, "seconds and debug params are incompatible");
		return;
	}
	r->name = name;
	r->debug = p.debug;
	r->seconds = p.have_seconds ? p.seconds : 0;
	serve_goprof(r, a);
}

/* Every route. */
static void route(struct MHD_Connection *c, const char *url, struct sreq *r, struct sanswer *a)
{
	struct serve *s = r->s;
	struct params p;
	const char *rest;
	pid_t pid;
	char prefix[32];

	if (!strcmp(url, "/")) {
		if (!read_params(c, &p, "", a))
			serve_root(r, a);
		return;
	}
	if (!strcmp(url, "/targets")) {
		if (!read_params(c, &p, "", a))
			serve_targets(r, a);
		return;
	}
	if (!strncmp(url, "/debug/pprof/", 13) || !strcmp(url, "/metrics")) {
		if (!s->o.pid) {
			answer_error(a, 404,
				     "no process is served at %s: ask /pid/PID%s (/targets lists "
				     "them), or start the server with -p PID",
				     url[1] == 'm' ? "/metrics" : "/debug/pprof/",
				     url[1] == 'm' ? "/metrics" : "/debug/pprof/");
			return;
		}
		if (check_target(s, s->o.pid, r, a))
			return;
		if (url[1] == 'm') {
			if (!read_params(c, &p, "", a))
				serve_metrics(r, a);
		} else {
			pprof_route(c, r, url + 13, "", a);
		}
		return;
	}
	if (strncmp(url, "/pid/", 5)) {
		answer_error(a, 404, "not found (see / for what is served)");
		return;
	}
	if (parse_pid(url, &pid, &rest, a))
		return;
	if (strcmp(rest, "/metrics") && strncmp(rest, "/debug/pprof/", 13)) {
		answer_error(a, 404, "not found: /pid/PID/debug/pprof/ or /pid/PID/metrics");
		return;
	}
	if (check_target(s, pid, r, a))
		return;
	if (!strcmp(rest, "/metrics")) {
		if (!read_params(c, &p, "", a))
			serve_metrics(r, a);
		return;
	}
	snprintf(prefix, sizeof(prefix), "/pid/%d", (int)pid);
	pprof_route(c, r, rest + 13, prefix, a);
}

/* ---- the token ---- */

/* Whether the request carries "Authorization: Bearer TOKEN" with the server's token. The
 * comparison takes the same time whatever the bytes given (a timing attack learns
 * nothing but the token's length). */
static int authorized(struct serve *s, struct MHD_Connection *c)
{
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *t = s->token, *g;
	size_t tl, gl, i;
	unsigned diff;

	if (!t)
		return 1;
	if (!h || strncasecmp(h, "Bearer ", 7))
		return 0;
	g = h + 7;
	while (*g == ' ')
		g++;
	tl = strlen(t);
	gl = strlen(g);
	diff = tl != gl;
	for (i = 0; i < tl; i++)
		diff |= (unsigned char)t[i] ^ (unsigned char)(i < gl ? g[i] : 0);
	return diff == 0;
}

/* ---- the handler ---- */

/* Sends the answer with net/http/pprof's headers, and keeps what the log line says. */
static enum MHD_Result queue(struct MHD_Connection *c, struct conn_req *q, struct sanswer *a)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(a->len, a->body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(a->body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->ctype);
	if (a->status == 200 && a->filename[0]) {
		char cd[128];

		snprintf(cd, sizeof(cd), "attachment; filename=\"%s\"", a->filename);
		MHD_add_response_header(resp, "Content-Disposition", cd);
	}
	if (a->status != 200 && a->pprof_error)
		MHD_add_response_header(resp, "X-Go-Pprof", "1");
	if (a->status == 401)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Bearer realm=\"gotop-perf\"");
	if (a->status == 405)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (a->status == 503)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	q->status = a->status;
	q->bytes = a->len;
	snprintf(q->note, sizeof(q->note), "%s", a->note);
	ret = MHD_queue_response(c, (unsigned)a->status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload_data,
			      size_t *upload_data_size, void **req_cls)
{
	struct serve *s = cls;
	struct conn_req *q = *req_cls;
	struct sanswer a;
	struct sreq r;
	const union MHD_ConnectionInfo *ci;

	(void)version;
	(void)upload_data;
	if (!q)
		return MHD_NO;
	memset(&a, 0, sizeof(a));
	if (!q->seen) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_TRANSFER_ENCODING);

		q->seen = 1;
		q->method = !strcmp(method, "GET") ? "GET" : !strcmp(method, "HEAD") ? "HEAD" : "other";
		/* No request here has a body: one is refused before it is read (an answer
		 * queued now also ends the connection). Otherwise the answer is made at the
		 * second call, when the request is complete, so that the connection can be
		 * kept for the next (a scraper's five profiles). */
		if ((cl && strcmp(cl, "0")) || te) {
			answer_error(&a, 413, "a request with a body: nothing here takes one");
			return queue(c, q, &a);
		}
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	memset(&a, 0, sizeof(a));
	memset(&r, 0, sizeof(r));
	r.s = s;
	r.client_fd = -1;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		r.client_fd = ci->connect_fd;
	r.host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
	if (!authorized(s, c)) {
		answer_error(&a, 401, "a bearer token is needed (Authorization: Bearer TOKEN)");
	} else if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		answer_error(&a, 405, "method not allowed: GET or HEAD");
	} else if (s->stopping) {
		answer_error(&a, 503, "the server is stopping");
	} else {
		route(c, url, &r, &a);
	}
	if (!a.status)
		answer_error(&a, 500, "no answer");
	return queue(c, q, &a);
}

/* ---- the address ---- */

static int loopback(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;

		return IN6_IS_ADDR_LOOPBACK(a6) ||
		       (IN6_IS_ADDR_V4MAPPED(a6) && a6->s6_addr[12] == 127);
	}
	return 0;
}

static int wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	return sa->sa_family == AF_INET6 &&
	       IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
}

/* "HOST:PORT", "[V6]:PORT" or ":PORT" into a socket address. 0, or -1 with why. */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, char *why, size_t whylen)
{
	char host[256], port[16];
	const char *colon;
	struct addrinfo hints, *res = NULL;
	int rc;

	if (spec[0] == '[') {
		const char *end = strchr(spec, ']');

		if (!end || end[1] != ':' || (size_t)(end - spec - 1) >= sizeof(host))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(end - spec - 1), spec + 1);
		colon = end + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || (size_t)(colon - spec) >= sizeof(host) || memchr(spec, ':', (size_t)(colon - spec)))
			goto bad;
		snprintf(host, sizeof(host), "%.*s", (int)(colon - spec), spec);
	}
	if (!colon[1] || strlen(colon + 1) >= sizeof(port) || small_uint(colon + 1) < 0 ||
	    small_uint(colon + 1) > 65535)
		goto bad;
	snprintf(port, sizeof(port), "%s", colon + 1);
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc || !res) {
		snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -1;
	}
	memcpy(ss, res->ai_addr, GP_MIN((size_t)res->ai_addrlen, sizeof(*ss)));
	freeaddrinfo(res);
	return 0;
bad:
	snprintf(why, whylen, "--listen: HOST:PORT, [IPV6]:PORT or :PORT, not '%s'", spec);
	return -1;
}

/* The address of the listening socket, as HOST:PORT. */
static void bound_address(struct serve *s)
{
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_LISTEN_FD);
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	char host[INET6_ADDRSTRLEN], port[16];

	if (!di || getsockname(di->listen_fd, (struct sockaddr *)&ss, &len) ||
	    getnameinfo((struct sockaddr *)&ss, len, host, sizeof(host), port, sizeof(port),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		snprintf(s->addr, sizeof(s->addr), "?");
		return;
	}
	snprintf(s->addr, sizeof(s->addr), ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host,
		 port);
}

struct serve *serve_start(const struct serve_opts *o, enum serve_fail *fail, char *why,
			  size_t whylen)
{
	struct sockaddr_storage ss;
	struct serve *s;
	unsigned flags;

	memset(&ss, 0, sizeof(ss));
	if (parse_listen(o->listen ? o->listen : SERVE_DEFAULT_LISTEN, &ss, why, whylen)) {
		*fail = SERVE_FAIL_USAGE;
		return NULL;
	}
	if (!loopback((struct sockaddr *)&ss) && (!o->remote || !o->token || !*o->token)) {
		snprintf(why, whylen,
			 "%s is not a loopback address: listening there needs --allow-remote "
			 "and a bearer token (--token-file)",
			 o->listen);
		*fail = SERVE_FAIL_USAGE;
		return NULL;
	}
	if (o->max_profiles == 0 || o->max_connections == 0 || o->max_seconds == 0 ||
	    o->freq == 0 || !(o->wall_hz > 0)) {
		snprintf(why, whylen, "a limit of 0 serves nothing");
		*fail = SERVE_FAIL_USAGE;
		return NULL;
	}
	s = xcalloc(1, sizeof(*s));
	s->o = *o;
	s->token = o->token && *o->token ? xstrdup(o->token) : NULL;
	s->advertise = o->advertise ? xstrdup(o->advertise) : NULL;
	s->o.token = s->token;
	s->o.advertise = s->advertise;
	s->o.listen = NULL;
	s->wildcard = wildcard((struct sockaddr *)&ss);
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->procs_lock, NULL);
	s->procs = procs_new(NULL, 0);
	s->pool = mem_pool_new();
	s->cpu = cpu_shares_new(s);
	/* A thread per connection: a handler waits out a profile's seconds on its own
	 * thread, and an idle server is one thread asleep in poll(2), with no timer. */
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
		MHD_USE_ERROR_LOG;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	s->d = MHD_start_daemon(
		flags, 0, NULL, NULL, handle, s, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, s,
		MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)o->max_per_ip,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
		MHD_OPTION_URI_LOG_CALLBACK, uri_log, s, MHD_OPTION_NOTIFY_COMPLETED, completed, s,
		MHD_OPTION_END);
	if (!s->d) {
		snprintf(why, whylen, "cannot listen on %s: %s", o->listen ? o->listen : SERVE_DEFAULT_LISTEN,
			 errno ? strerror(errno) : "libmicrohttpd refused it");
		*fail = SERVE_FAIL_LISTEN;
		cpu_shares_free(s->cpu);
		mem_pool_free(s->pool);
		procs_free(s->procs);
		pthread_mutex_destroy(&s->procs_lock);
		pthread_mutex_destroy(&s->lock);
		free(s->token);
		free(s->advertise);
		free(s);
		return NULL;
	}
	bound_address(s);
	return s;
}

const char *serve_address(const struct serve *s)
{
	return s->addr;
}

void serve_stop(struct serve *s)
{
	if (!s)
		return;
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	/* Joins the connections' threads, whose handlers see stopping and end. */
	MHD_stop_daemon(s->d);
	cpu_shares_free(s->cpu);
	mem_pool_free(s->pool);
	procs_free(s->procs);
	free(s->gover);
	pthread_mutex_destroy(&s->procs_lock);
	pthread_mutex_destroy(&s->lock);
	if (s->token) {
		/* Not left in freed memory. */
		memset(s->token, 0, strlen(s->token));
		free(s->token);
	}
	free(s->advertise);
	free(s);
}
