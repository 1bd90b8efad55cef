/* serve-int.h: what the server's files share: the server, a request's target and
 * parameters, an answer, and the entry points of each part (serve.c: HTTP, routing,
 * checks, the log; mem.c: the goprof answers; cpu.c: CPU and wall-clock profiles from
 * shared sessions; targets.c: the processes served and /targets; metrics.c:
 * /pid/PID/metrics). */
#ifndef GOTOP_SERVE_INT_H
#define GOTOP_SERVE_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/serve.h"

struct MHD_Daemon;
struct cpu_shares;
struct mem_pool;
struct procs;

struct serve {
	struct serve_opts o;        /* its strings are the server's copies */
	char *token, *advertise;
	struct MHD_Daemon *d;
	char addr[80];              /* HOST:PORT listened on */
	int wildcard;               /* listening on every address */
	volatile int stopping;      /* serve_stop has begun: requests end */
	pthread_mutex_t lock;       /* profiles, the log */
	unsigned profiles;          /* requests making a profile now */
	uint64_t requests;          /* answered, for the metrics */
	struct mem_pool *pool;      /* memory sessions kept between requests (mem.c) */
	struct cpu_shares *cpu;     /* sessions (cpu.c) */
	pthread_mutex_t procs_lock; /* procs: a scan and the copy of its entries; gover */
	struct procs *procs;        /* the local processes (procs.h), for /targets */
	struct serve_gover *gover;  /* Go versions of executables checked (GOVER_MAX) */
	size_t ngover, gover_next;
};

/* An executable a request's process ran, by identity, and its Go version ("" not Go):
 * the ELF's build info is read once per executable, not per request. */
#define GOVER_MAX 64
struct serve_gover {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	char ver[64];
};

/* The log callback with a formatted line (control characters escaped). */
void serve_log(struct serve *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A request, as routing made it: the process and what is asked. */
struct sreq {
	struct serve *s;
	pid_t pid;                  /* 0 for /targets and the root page */
	uint64_t start;             /* the process's start time (ticks): its identity */
	char go_version[64];
	const char *name;           /* profile name */
	int debug;
	int seconds;                /* 0: not given */
	int client_fd;              /* the connection's socket, to see the client leave */
	const char *host;           /* the Host header, or NULL */
};

/* The answer a handler makes: a status, a body (malloc'd, the answer's own) and how it is
 * sent. */
struct sanswer {
	int status;
	uint8_t *body;
	size_t len;
	const char *ctype;
	char filename[64];          /* Content-Disposition: attachment; filename="..." */
	int pprof_error;            /* an error of a /debug/pprof path: X-Go-Pprof: 1 */
	char note[200];             /* for the log line: the error, or what the answer holds */
};

/* An error answer: status and a one-line text (also the body, with a newline, as
 * net/http/pprof's serveError writes it). */
void answer_error(struct sanswer *a, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Text answers (the body copied). */
void answer_text(struct sanswer *a, const char *ctype, const char *text, size_t len);

/* Takes one of the max_profiles slots; 0, or -1 (then a has the 503). */
int serve_profile_begin(struct serve *s, struct sanswer *a);
void serve_profile_end(struct serve *s);
/* Whether the request should end now: the server stops, or the client has gone (its
 * socket hung up). */
int serve_request_over(const struct sreq *r);

/* mem.c: heap, allocs, block, mutex, goroutine through session_mem_fetch, on sessions
 * (SESSION_MEM) kept between requests of the same process. */
struct mem_pool *mem_pool_new(void);
void mem_pool_free(struct mem_pool *p);
struct session;
/* A session of the process (one kept idle, or a new one) for this thread alone until
 * mem_pool_put. NULL with *status (HTTP) and why. */
struct session *mem_pool_get(struct serve *s, const struct sreq *r, int *status, char *why,
			     size_t whylen);
/* Gives it back; with keep 0 it is freed (the process went or misbehaved). */
void mem_pool_put(struct serve *s, const struct sreq *r, struct session *ses, int keep);
void serve_goprof(const struct sreq *r, struct sanswer *a);

/* cpu.c: CPU (profile) and wall-clock (wall) profiles over r->seconds from one session
 * per process. */
struct cpu_shares *cpu_shares_new(struct serve *s);
/* Waits for every session's thread to end (after every request ended). */
void cpu_shares_free(struct cpu_shares *c);
void serve_cpu(const struct sreq *r, int wall, struct sanswer *a);
/* What the sessions of the process took so far (for its metrics). */
struct cpu_pid_stats {
	uint64_t samples, lost, sessions;
	int active;                 /* a session is open now */
};
void cpu_pid_stats(struct cpu_shares *c, pid_t pid, uint64_t start, struct cpu_pid_stats *st);

/* targets.c: the Go processes served, /targets and the root page. */
struct serve_target {
	pid_t pid;
	char comm[64];              /* escaped */
	char exe[512];              /* escaped */
	char go_version[64];
};
/* The Go processes this server may trace (only o.pid when given), from a scan of the
 * shared list of local processes (procs.h). Caller frees *out. How many. */
size_t serve_targets_list(struct serve *s, struct serve_target **out);
void serve_targets(const struct sreq *r, struct sanswer *a);
void serve_root(const struct sreq *r, struct sanswer *a);

/* metrics.c */
void serve_metrics(const struct sreq *r, struct sanswer *a);

/* A growing text (metrics, JSON, HTML). */
struct sbuf {
	char *buf;
	size_t len, cap;
};
void sbuf_add(struct sbuf *b, const char *s, size_t n);
void sbuf_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as the inside of a JSON string (s has no control character: util_escape's output). */
void sbuf_json(struct sbuf *b, const char *s);
/* s with &, <, >, ' and " as HTML entities. */
void sbuf_html(struct sbuf *b, const char *s);
/* Hands the text to the answer (200, ctype). */
void answer_sbuf(struct sanswer *a, const char *ctype, struct sbuf *b);

#endif
