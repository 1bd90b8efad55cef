/* live.h: the live session: a worker thread that drives a profiling session (session.h)
 * and publishes immutable, reference-counted snapshots of its profiles for the UI. */
#ifndef GOTOP_LIVE_H
#define GOTOP_LIVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/agg.h"
#include "gotop/procinfo.h"
#include "gotop/events.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/session.h"

struct live;

struct live_opts {
	uint64_t refresh_ns;     /* how often a snapshot is published (>= 10 ms) */
	unsigned window_s;       /* 0: cumulative; else a decaying window of this many seconds */
	/* The anonymous memory gotop-perf may hold (bytes, 0: no limit): what it allocated
	 * and can give back, not the clean file pages of the binaries and symbol tables it
	 * maps, which the kernel drops when it needs them and which shedding cannot shrink.
	 * Past it, the profile entries with the fewest samples are forgotten (live.c, shed),
	 * and the snapshots count them. */
	size_t max_mem;
};

/* The default of live_opts.max_mem, in MB: above what a large service needs in a long
 * session, so that shedding stays for a profile that grows without end (a label value
 * per request). BENCHMARKS.md, "Memory on a large service (Prometheus)", has the figures
 * it was chosen from. */
#define LIVE_DEFAULT_MAX_MEM_MB 128

/* The most seconds a decaying window may span. */
#define LIVE_MAX_WINDOW 3600

/* One event's data in a snapshot. Shared by consecutive snapshots while it does not
 * change; never modified once published. */
struct live_event {
	int refs;                /* internal */
	char name[EVENT_NAME_MAX];
	struct prof *prof;       /* cumulative since start or zero, or the window's samples:
				  * a prof_snapshot of the aggregator's profile */
	uint64_t samples;        /* sum of value column 0 (sample count) in prof */
	int mem;                 /* a sample type of the target's heap profile (not sampled
				  * by gotop-perf: the runtime's, read at each GC cycle) */
};

/* An event's data holding p (taken, freed with the snapshot that holds it): for snapshots
 * made outside a session too, e.g. of pprof files. Never fails. */
struct live_event *live_event_new(const char *name, struct prof *p);

/* The view of sample type t of p (a profile of several, as Go's heap profile): a copy
 * whose value columns are (count, t), what the views read (column 0 counts, column 1 is
 * the value shown), the count being the "count" column of the same kind (inuse_objects
 * for inuse_space, contentions for delay), else t itself. With extra (one value per
 * sample of p), a third column extra_type/extra_unit. A new profile; caller frees. */
struct prof *live_type_view(const struct prof *p, size_t t, const int64_t *extra,
			    const char *extra_type, const char *extra_unit);

/* The target's heap profile in a snapshot (the session's memory source, SESSION_MEM):
 * its sample types are events with mem set; this says what goes with them. */
struct live_mem {
	int on;                  /* the source was asked for (a Go target) */
	int have;                /* a profile was read: the fields below */
	int err;                 /* GOPROF_E_*: why there is none (GOPROF_E_OFF: the program
				  * keeps no heap profile) */
	char why[256];           /* with err: one line */
	int64_t inuse_bytes;     /* inuse_space: the sampled estimate of the live heap */
	double gc_per_s;         /* GC cycles a second (< 0: not known yet) */
	uint64_t cycle_ns;       /* util_now_ns when its GC cycle was seen published */
	uint64_t rate_ns;        /* the span of the alloc_rate column (0: none yet) */
	uint32_t cycle;
	uint64_t dropped;        /* buckets left out of the read (changed while read) */
};

/* A thread of the target seen while the session ran (name from /proc, escaped). */
struct live_thread {
	pid_t tid;
	char comm[64];
};

struct live_snapshot {
	int refs;                /* internal */
	uint64_t seq;            /* increases with every publication */
	int periodic;            /* published by the refresh timer (not for a request) */
	pid_t pid;
	char comm[64];           /* escaped */
	char *cmdline;           /* escaped, may be "" */
	char *go_version;        /* NULL when the target is not Go */

	size_t nevents;          /* events with data, in the order first seen */
	struct live_event **events;

	char event[EVENT_NAME_MAX]; /* the event being sampled */
	int use_freq;
	uint64_t freq, period;
	int paused, exited;
	unsigned window_s;       /* 0: cumulative */
	/* Samples (and profile entries) that a decaying window forgot since the start or the
	 * last zero: no sample came to them in the history the window keeps (the window, and
	 * at least the last minute; live.c, forget), so the cumulative profile lacks them. */
	uint64_t forgotten, forgotten_entries;
	/* Samples (and entries) forgotten to keep the anonymous memory under max_mem (the
	 * entries with the fewest samples; live.c, shed), since the start or the last zero. */
	uint64_t shed, shed_entries;
	size_t max_mem;          /* live_opts.max_mem */
	struct proc_mem mem;     /* gotop-perf's own memory at the publication */

	uint64_t elapsed_ns;     /* since the session started */
	uint64_t start_wall_ns;
	double samples_per_s;    /* over the last refresh */
	double self_cpu_pct;     /* gotop-perf's own CPU (all its threads), percent of one CPU */
	uint64_t lost;           /* samples lost by the kernel plus dropped by the sampler */
	struct sampler_stats sst;
	struct agg_stats ast;

	struct live_mem memory;  /* the heap profile's facts (its types are among events) */

	size_t nthreads;         /* every thread seen, sorted by tid */
	struct live_thread *threads;

	/* The answer to the last request handled (see live_request). */
	uint64_t reply_seq;
	int reply_err;           /* 0 or -errno */
	char reply[320];
};

/* Prepares the live session on s, an opened session (session_open) sampling one event,
 * which it takes over (freed by live_free, also when this fails); nothing runs yet. NULL
 * with errno set and a one-line reason in err on failure. */
struct live *live_new(const struct live_opts *o, struct session *s, char *err, size_t errlen);
/* Publishes a first, empty snapshot, starts the session (a command we started execs) and
 * the worker thread. 0, or -errno with e filled. */
int live_start(struct live *l, struct session_err *e);
/* Stops the worker and the sampler. Snapshots already taken stay valid. */
void live_stop(struct live *l);
/* Stops and frees everything, the session with it (a command we started is stopped).
 * Accepts NULL. Snapshots still held stay valid. */
void live_free(struct live *l);
/* What the session decided about the target. Borrowed, valid until live_free. */
const struct session_info *live_session_info(const struct live *l);
/* The session, for its sources beyond CPU samples (session.h: wall-clock copies,
 * goroutine snapshots, the verifier), whose functions any thread may call. The worker
 * feeds it: its other functions are the worker's. Borrowed, valid until live_free. */
struct session *live_session(struct live *l);
/* The exit status of a command we started once it has exited, else -1 (reaps it). For
 * the UI thread: the worker never touches the target. */
int live_target_status(struct live *l);

/* A file descriptor that becomes readable when a new snapshot is published; read 8
 * bytes from it (an eventfd) to clear it. Borrowed, valid until live_free. */
int live_fd(struct live *l);
/* The latest snapshot (never NULL once live_start returned). The caller holds a
 * reference and returns it with live_snapshot_put. */
struct live_snapshot *live_snapshot_get(struct live *l);
void live_snapshot_put(struct live_snapshot *s);
/* The data of an event in a snapshot, or NULL. Borrowed from the snapshot. */
const struct live_event *live_snapshot_event(const struct live_snapshot *s, const char *name);

/* Requests handled by the worker in order; each returns its sequence number, and a
 * snapshot whose reply_seq reaches it carries the outcome in reply / reply_err. */
enum live_req_kind {
	LIVE_REQ_EVENT,          /* switch to *ev at the current rate */
	LIVE_REQ_FREQ,           /* value: samples per second (frequency mode) */
	LIVE_REQ_PERIOD,         /* value: one sample every `value` events */
	LIVE_REQ_PAUSE,          /* value: 1 pause, 0 resume */
	LIVE_REQ_ZERO,           /* forget every count of every event */
	LIVE_REQ_WINDOW,         /* value: 0 cumulative, else seconds of the decaying window */
	LIVE_REQ_PUBLISH,        /* publish a snapshot now */
};
uint64_t live_request(struct live *l, enum live_req_kind kind, const struct event_spec *ev,
		      uint64_t value);

#endif
