/* serve.h: `gotop-perf serve`: an HTTP server (libmicrohttpd) that answers, for every local
 * Go process it may trace, what the process's own net/http/pprof would
 * (/pid/PID/debug/pprof/{profile,heap,allocs,block,mutex,goroutine,wall}, Go's headers and
 * index page; with one process given, the same at /debug/pprof/), lists those processes for
 * Prometheus HTTP service discovery (/targets) and exports metrics of each
 * (/pid/PID/metrics), so that Parca, Pyroscope/Alloy, Prometheus and `go tool pprof` scrape
 * processes that have no endpoint of their own. Memory, block, mutex and goroutine answers
 * come from goprof.h; CPU and wall-clock profiles from one profiling session per process
 * while any such request is at work, shared by every request (doc/design.md, "The server").
 *
 * The server runs on threads of its own (libmicrohttpd's: one listening, one per open
 * connection) and never prints: every request and every event of note goes to the log
 * callback as one line. */
#ifndef GOTOP_SERVE_H
#define GOTOP_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct serve;

/* A line to log (no newline at its end, no control character in it). Called from the
 * server's threads, one call at a time. */
typedef void serve_log_fn(void *arg, const char *line);

struct serve_opts {
	/* Where to listen: "HOST:PORT" (a name or a numeric IPv4 address), "[IPV6]:PORT", or
	 * ":PORT" for every address. Port 0 lets the kernel choose (serve_address says it). */
	const char *listen;        /* default SERVE_DEFAULT_LISTEN */
	int remote;                /* an address that is not loopback is refused unless set */
	const char *token;         /* the bearer token every request must carry (RFC 6750
				      "Authorization: Bearer TOKEN"); NULL: none, which only a
				      loopback address allows. Copied. */
	pid_t pid;                 /* > 0: only this process, answered at /debug/pprof/ too */
	const char *advertise;     /* HOST:PORT the targets of /targets name; NULL: the address
				      listened on (for a wildcard address, the Host the request
				      came to). Copied. */
	unsigned max_connections;  /* connections open at once (each has a thread) */
	unsigned max_per_ip;       /* ... from one client address */
	unsigned max_profiles;     /* requests making a profile at once; more get 503 */
	unsigned max_seconds;      /* ?seconds at most; more is a 400 */
	unsigned timeout_s;        /* a connection that sends or reads nothing this long is
				      closed */
	size_t max_records;        /* goroutines or buckets read per answer (bounds each
				      request's memory; goprof_set_max_records) */
	uint64_t freq;             /* CPU profiles: samples a second per thread */
	double wall_hz;            /* wall-clock profiles: snapshots of every goroutine a second */
	unsigned linger_ms;        /* a process's session stays this long after its last CPU or
				      wall request, for the next scrape */
	serve_log_fn *log;
	void *log_arg;
};

#define SERVE_DEFAULT_LISTEN "127.0.0.1:6060"
#define SERVE_DEFAULT_MAX_CONNECTIONS 64
#define SERVE_DEFAULT_MAX_PER_IP 32
#define SERVE_DEFAULT_MAX_PROFILES 16
#define SERVE_DEFAULT_MAX_SECONDS 300
#define SERVE_DEFAULT_TIMEOUT_S 30
#define SERVE_DEFAULT_MAX_RECORDS 100000
#define SERVE_DEFAULT_FREQ 1000
#define SERVE_DEFAULT_WALL_HZ 10
#define SERVE_DEFAULT_LINGER_MS 3000
/* The CPU profile's duration when the request gives none, as net/http/pprof's. */
#define SERVE_DEFAULT_SECONDS 30

/* Every field to its default. */
void serve_opts_init(struct serve_opts *o);

/* Why serve_start failed. */
enum serve_fail {
	SERVE_FAIL_USAGE = 1, /* the options: an address that does not parse, a remote one
				 without a token or without remote */
	SERVE_FAIL_LISTEN,    /* the address cannot be listened on (in use, not ours) */
	SERVE_FAIL_SYSTEM,    /* threads, memory */
};

/* Starts listening and serving. NULL with *fail set and a one-line reason in why. Stop and
 * free with serve_stop. */
struct serve *serve_start(const struct serve_opts *o, enum serve_fail *fail, char *why,
			  size_t whylen);
/* The address listened on, "HOST:PORT" with the port chosen when 0 was asked (borrowed,
 * valid until serve_stop). */
const char *serve_address(const struct serve *s);
/* Stops accepting, makes every request at work end (a profile under way answers 503),
 * waits for them, closes every session (no perf event, no thread of ours left), frees.
 * Accepts NULL. */
void serve_stop(struct serve *s);

#endif
