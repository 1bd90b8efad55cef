/* session.h: one profiling session of a target, the one owner of every source of data
 * about it: the target (attached or started); CPU samples (a sampler per event, the Go
 * reader at the sample and its BPF program, the aggregator, the drain); the wall-clock
 * sampler of every goroutine; snapshots of every goroutine; the verifier. A consumer
 * opens a session with only the sources it asks for, reads what they gather through the
 * functions below and never makes a reader itself; every profile comes out through
 * session_profile. `record`, the live UI and --batch, `goroutines` and `verify` all drive
 * one; they parse options and present. doc/design.md, "The session and its sources". */
#ifndef GOTOP_SESSION_H
#define GOTOP_SESSION_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/goread.h"
#include "gotop/gosnap.h"
#include "gotop/gowall.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/symtab.h"
#include "gotop/verify.h"

struct session;

#define SESSION_MAX_EVENTS 8

/* The sources a consumer asks for (session_opts.sources). */
#define SESSION_CPU 0x1        /* perf samples of events[]: samplers, Go reader, aggregator */
#define SESSION_WALL 0x2       /* Go: every goroutine at wall_hz into a wall-clock profile */
#define SESSION_GOROUTINES 0x4 /* Go: every goroutine now, on request (session_goroutines_get) */
#define SESSION_VERIFY 0x8     /* the verifier, made when first asked (session_verifier) */
#define SESSION_MEM 0x10       /* Go: the runtime's memory, block and mutex profiles, read
				* from its buckets (session_mem_get, session_mem_fetch) */

struct session_opts {
	unsigned sources;          /* SESSION_* (default SESSION_CPU) */
	/* The target: an existing process (pid), or a command to start (pid 0). */
	pid_t pid;
	const pid_t *tids;         /* with pid: only these threads, no new ones (ntids > 0);
	                              borrowed until session_free */
	size_t ntids;
	char **command;            /* argv, borrowed until session_free */
	int command_quiet;         /* the command's stdin, stdout and stderr are /dev/null */
	/* What is sampled, at which rate: one sampler per event, all at the same rate. */
	struct event_spec events[SESSION_MAX_EVENTS];
	size_t nevents;            /* at least 1 */
	int use_freq;              /* 1: freq samples per second per thread; 0: every period events */
	uint64_t freq, period;
	uint32_t stack_size;       /* user stack bytes per sample; 0: what the repair needs for
	                              the target (repair_stack_bytes) */
	int repair;                /* repair frame-pointer chains (agg_opts.repair) */
	int go;                    /* Go target: each sample's goroutine and pprof labels */
	int bpf;                   /* Go: read each sample's goroutine at the sample (gobpf) */
	unsigned label_latency_ms; /* Go without the BPF program: drain at least this often */
	/* How it is consumed. */
	int hold_kernel;           /* agg_opts.hold_kernel: first data without waiting for the
	                              kernel's symbols (the live UI) */
	int preload;               /* load the symbol tables and the BPF program before
	                              sampling starts, so that the profiled time does not
	                              include it and every sample is read at the sample
	                              (record); else the program loads while the first
	                              samples come (the live UI) */
	int notify;                /* the samplers signal an eventfd that session_run waits on */
	/* SESSION_WALL: snapshots a second (above 0, at most 1000); the share of a core the
	 * snapshots may take (0: no limit; a target with more goroutines than the rate allows
	 * is then read less often, each tick counting the longer interval); publish: a copy
	 * of the profile after every tick for session_wall_get (the live UI), else only the
	 * profile at the end (session_profile). */
	double wall_hz;
	double wall_max_cpu;
	int wall_publish;
#define SESSION_WALL_LIVE_MAX_CPU 0.05 /* the live UI's wall_max_cpu when no rate is given */
	/* SESSION_GOROUTINES: goroutines read per snapshot at most (0: GOSNAP_MAX_G). */
	size_t goroutines_max;
	/* SESSION_VERIFY: the verifier's options (NULL: verify_opts_default, with the stack
	 * bytes of a sample of this session); borrowed until session_free. */
	const struct verify_opts *verify;
	/* SESSION_MEM: with mem_publish, a thread polls the heap profile's cycle once a
	 * second and reads the profile each time the runtime publishes one (a GC cycle), at
	 * most mem_max_cpu of a core (0: no limit); each copy gets the allocation rate over
	 * the last mem_rate_s seconds (0: SESSION_MEM_RATE_S). Else the profile is read when
	 * asked for (session_mem_get with a wait). */
	int mem_publish;
	double mem_max_cpu;
	unsigned mem_rate_s;
	size_t mem_max_records; /* records read per profile at most (0: goprof's default) */
/* The live UI's mem_max_cpu: the thread's share; the worker's views of each copy and the
 * UI's model of the one shown take about as much again. */
#define SESSION_MEM_LIVE_MAX_CPU 0.005
#define SESSION_MEM_RATE_S 10
};

/* Defaults: CPU samples; cpu-clock is left to the caller (nevents 0); 1000 Hz, repair, Go
 * reads with the BPF program, labels read within 4 ms without it; wall-clock snapshots at
 * 10 Hz. */
void session_opts_init(struct session_opts *o);

/* What failed, so that the caller can say it with the right exit status. */
enum session_fail {
	SESSION_FAIL_SYSTEM = 1,   /* pipe, fork, a thread: the machine's resources */
	SESSION_FAIL_USAGE,        /* an invalid PID */
	SESSION_FAIL_TARGET,       /* no such process or thread, a kernel thread, a command
	                              that did not start */
	SESSION_FAIL_PERM,         /* not permitted (perf_event_paranoid, capabilities) */
	SESSION_FAIL_EVENT,        /* the event is unknown here or cannot be counted */
};
struct session_err {
	enum session_fail kind;
	char why[512];             /* one line */
};

/* What the session decided about the target, valid from session_new on. */
struct session_info {
	pid_t pid;
	int spawned;               /* a command we started */
	int kernel;                /* kernel callchains are sampled */
	char kernel_why[256];      /* why not, when not */
	int go;                    /* Go reads set up from the start (a Go target, go on) */
	char go_version[64];       /* of the executable at the start; "" when not Go */
	int bpf;                   /* with go: the BPF program reads goroutines at the sample */
	char bpf_why[256];         /* with go and not bpf: why not */
	uint32_t stack_size;       /* user stack bytes copied per sample */
	/* SESSION_WALL, once session_wall_started returned: the sampler runs, or why not. */
	int wall;
	char wall_why[256];
};

/* Attaches to the process or starts the command (held before its exec), decides about
 * kernel callchains and whether it is Go, and with SESSION_CPU creates the aggregator
 * and, for a Go target, the Go reader and its BPF program. No perf event is open yet.
 * NULL with errno set and e filled on failure. Free with session_free. */
struct session *session_new(const struct session_opts *o, struct session_err *e);
/* Borrowed, valid until session_free. */
const struct session_info *session_info(const struct session *s);
const struct session_opts *session_options(const struct session *s);
/* Opens the events on every thread of the target (one sampler each; nothing without
 * SESSION_CPU). 0, or -errno with e filled. */
int session_open(struct session *s, struct session_err *e);
/* Starts the sampling threads (not once *stop is set, when stop is not NULL), lets a
 * started command exec, with preload loads its symbols, and starts the wall-clock
 * sampler's thread, which sets itself up (session_wall_started says how that went; it
 * failing fails nothing else). 0; 1 when *stop came first (nothing sampled, the command
 * never runs); -errno with e filled on failure. */
int session_start(struct session *s, const volatile int *stop, struct session_err *e);

/* How session_run ended. */
enum session_end { SESSION_END_STOP, SESSION_END_DURATION, SESSION_END_EXITED };
/* The drain loop: folds every batch into the aggregator as it comes, until *stop is set,
 * duration_s (0: none) has passed since session_start, or the target has exited. Waits
 * in ppoll(2) with waitmask (NULL: the thread's mask), so that a signal whose handler
 * sets *stop ends a wait at once when waitmask lets it in and the thread blocks it
 * otherwise. Reaps a started command that exits. */
enum session_end session_run(struct session *s, double duration_s, const volatile int *stop,
			     const sigset_t *waitmask);
/* Stops sampling: the wall-clock sampler and the verifier first, then each sampler drains
 * its rings a last time; with feed the batches left are folded into the aggregator, the running
 * goroutines of the last wall-clock ticks get their on-CPU stacks, and the profiles get
 * their time and duration; without it the batches are dropped. */
void session_stop(struct session *s, int feed);
/* Stops everything (the verifier's thread with it: no thread of the target stays
 * stopped), stops a started command that still runs, frees. Accepts NULL. */
void session_free(struct session *s);

/* The profiles a session makes, by what pprof names them. */
enum session_prof {
	SESSION_PROF_CPU,   /* event i's samples (opts.events order): sample types samples/count
			     * and the event's (cpu/nanoseconds for cpu-clock) */
	SESSION_PROF_WALL,  /* the wall-clock profile: wall/nanoseconds of every goroutine */
};
/* The profile `what` (event i of SESSION_PROF_CPU), after session_stop(s, 1), with its
 * metadata: the period, the time, and comments that say what made it (gotop-perf's
 * version, the event and its rate, the command line, the Go version). Empty, but with its
 * sample types, when no sample came. Borrowed, valid until session_free; any pprof writer
 * (pprof.h) writes it. NULL when the session has no such source. */
struct prof *session_profile(struct session *s, enum session_prof what, size_t i);
/* The target's command line as it was at session_start (escaped, at most 1024 bytes), or
 * NULL. Borrowed, valid until session_free. */
const char *session_cmdline(const struct session *s);
/* Statistics of event i's sampler, and of the aggregator (ast may be NULL). */
void session_stats(struct session *s, size_t i, struct sampler_stats *sst, struct agg_stats *ast);
/* Statistics of the Go reader at the sample (zero without one). */
void session_go_stats(struct session *s, struct goread_stats *st);
/* How an aggregator reads the records the session's Go reader puts after each sample
 * (agg_opts.go_reader): for a consumer that feeds one batches made that way outside a
 * session (bench/ingest.c replays recordings). Static. */
const struct agg_go_reader *session_go_reader(void);
/* Nanoseconds since session_start. */
uint64_t session_elapsed_ns(const struct session *s);
/* The target's Go version ("go1.24.4"), or NULL. The first time it is found in a target
 * that was not Go at the start (a command through a shell script), goroutines are read
 * from then on at the drain, within label_latency_ms of the sample. */
const char *session_go_version(struct session *s);
/* The aggregator, for a consumer that keeps views of its profiles (the live session).
 * Borrowed, valid until session_free; NULL without SESSION_CPU. */
struct agg *session_agg(struct session *s);

/* For a consumer that takes batches itself (the live session's worker thread). */
/* Folds the oldest batch of any event into the aggregator, waiting up to timeout_ms on
 * the first event's sampler when none is queued. 1 with the batch's event name in
 * *event (borrowed until session_free), 0 when none came. */
int session_feed_next(struct session *s, int timeout_ms, const char **event);
/* Drains the rings on the calling thread (sampler_flush), for every sample up to now. */
void session_flush(struct session *s);
/* Whether every sampler has seen the target exit. */
int session_exited(struct session *s);
/* See sampler_set_wake_bytes, sampler_kick; for every sampler. */
void session_set_wake_bytes(struct session *s, size_t bytes);
void session_kick(struct session *s);
/* Switches the first event to ev or its rate (sampler_set_event). 0 or -errno, err says
 * why. */
int session_set_event(struct session *s, const struct event_spec *ev, int use_freq,
		      uint64_t value, char *err, size_t errlen);
/* Pauses (1) or resumes (0) every sampler. */
void session_pause(struct session *s, int paused);
/* Reaps a started command if it has exited: its exit status (see target.h), or -1 while
 * it runs or when the target was attached to. Touches only the target: callable from
 * a thread other than the one feeding the session. */
int session_target_status(struct session *s);

/*
 * The sources beyond CPU samples. Each runs on a thread of its own and hands out
 * immutable data by reference, so that these functions may be called from any thread
 * (the UI's) while another feeds the session, and never wait for a reading of the target
 * unless asked to.
 */

/* SESSION_WALL: what the wall-clock sampler publishes after each tick (opts.wall_publish):
 * a copy of the wall profile (prof_snapshot; sample type wall/nanoseconds, labels "state"
 * and the pprof labels, gowall.h) and its counts. Immutable; held with session_wall_get,
 * let go with session_wall_put. */
struct session_wall {
	struct prof *p;
	double hz;        /* the rate of the last ticks (below wall_hz under wall_max_cpu) */
	uint64_t ticks;   /* snapshots taken since the start or the last zero */
	uint64_t failed;  /* of them, those that read nothing (runtime not up, torn list) */
	uint64_t torn;    /* goroutines dropped because they ran while read */
	uint64_t span_ns; /* wall time the ticks cover */
	uint64_t wall_ns; /* what a goroutine parked at every snapshot counts over them
			   * (gowall_stats.wall_ns): a sample whose wall time (within a
			   * window: less the base's) is a whole multiple of it holds only
			   * goroutines that waited there at every snapshot */
	uint64_t at_ns;   /* when it was published (util_now_ns) */
	int gone;         /* the target has exited: no more ticks */
	int refs;         /* references (atomic): the sampler's own and each holder's */
};
/* The latest data with a reference (NULL before the first tick or without the sampler),
 * and in *base (when base is not NULL and window_s > 0) the data published window_s
 * seconds before it (the oldest kept since the start or the last zero when none is that
 * old; NULL when there is none), held too: its values subtracted from the latest's,
 * sample by sample (the same tables, see prof_snapshot), give the last window_s seconds.
 * The sampler keeps one copy a second for the longest window asked for, at least
 * SESSION_WALL_HISTORY seconds. Takes a lock only for pointer copies. */
#define SESSION_WALL_HISTORY 60
const struct session_wall *session_wall_get(struct session *s, unsigned window_s,
					    const struct session_wall **base);
/* Lets go of d, on any thread, also after session_free. Accepts NULL. */
void session_wall_put(const struct session_wall *d);
/* Waits until the wall-clock sampler's thread has set itself up (its own symbolizer, the
 * runtime's list of goroutines) and says whether it runs: 1, or 0 with info.wall_why set
 * (not asked, not Go, or what failed). Call it on one thread, after session_start. */
int session_wall_started(struct session *s);
/* Asks the sampler to count again from zero at its next tick (the z key). */
void session_wall_zero(struct session *s);
/* The sampler's counts since the start (for record's report); zero without it. */
void session_wall_stats(struct session *s, struct gowall_stats *st);

/* SESSION_GOROUTINES: every goroutine of the target at one moment, read from outside
 * without stopping it (gosnap.h), with the names of its pcs. Immutable; held with
 * session_goroutines_get, let go with session_goroutines_put. The labels and wait reasons
 * it points at, and the names, stay valid until session_free. */
struct session_goroutines {
	int rc;            /* 0, or -errno: of making the reader (reader 0: gosnap_new's, as
			    * -ENOTSUP not Go, -ESRCH gone; -ENOEXEC the executable cannot be
			    * opened) or of the snapshot (-ESRCH gone, -EAGAIN the runtime not up,
			    * -EINVAL the list is garbage) */
	int reader;        /* a reader was made: rc is the snapshot's */
	char why[256];     /* with rc: one line */
	struct gosnap_result r; /* its arrays are the data's own */
	uint64_t seq;      /* increases with every snapshot */
	/* internal: the names of r's pcs (session_goroutines_frames) */
	struct session_gname *names;
	size_t nnames;
	struct sym_frame *frames;
	int refs;
};
/* Asks for a snapshot now and returns the latest held (NULL when none was taken yet): with
 * wait_ms 0 at once, else waiting up to wait_ms (< 0: as long as it takes) for the one
 * asked now. The reader is made (on the source's thread) at the first call. NULL without
 * SESSION_GOROUTINES. */
const struct session_goroutines *session_goroutines_get(struct session *s, int wait_ms);
/* Lets go of d, on any thread. Accepts NULL. */
void session_goroutines_put(const struct session_goroutines *d);
/* The frames of pc (a return address of d's stacks, or a goroutine's gopc), innermost
 * inlined first, up to max into f: how many (0: none known). */
int session_goroutines_frames(const struct session_goroutines *d, uint64_t pc, struct sym_frame *f,
			      int max);

/* SESSION_VERIFY: the verifier of the target (verify.h), made at the first call with
 * opts.verify; the caller starts, stops and reads it, the session frees it. Borrowed,
 * valid until session_free. NULL, with a one-line reason in why, without SESSION_VERIFY
 * or when it cannot be made. */
struct verifier *session_verifier(struct session *s, char *why, size_t whylen);

/* SESSION_MEM: the target's heap profile as its /debug/pprof/heap would answer at one
 * moment (goprof.h), and what the live views say beside it. Immutable; held with
 * session_mem_get, let go with session_mem_put. */
struct session_mem {
	int err;           /* GOPROF_E_OK, or why there is no profile (GOPROF_E_OFF: the
			    * program keeps none, MemProfileRate 0; _TARGET: not Go, gone) */
	char why[256];     /* with err: one line */
	struct prof *p;    /* the heap profile (alloc_objects, alloc_space, inuse_objects,
			    * inuse_space), NULL with err */
	int64_t *alloc_rate; /* per sample of p: alloc_space bytes a second over rate_ns,
			      * NULL before a second copy */
	uint64_t rate_ns;  /* the span the rates are over */
	struct gomem_stats st; /* of the read */
	int64_t mem_rate;  /* runtime.MemProfileRate at the read */
	uint32_t cycle;    /* the profile cycle (GC cycles, mod 2^31) */
	double gc_per_s;   /* GC cycles a second over the last SESSION_MEM_RATE_S seconds
			    * polled (< 0: not known yet) */
	int64_t inuse_bytes; /* inuse_space of p: the sampled estimate of the live heap */
	uint64_t cycle_ns; /* util_now_ns when the cycle was first seen: the data's age */
	uint64_t read_ns;  /* util_now_ns of the read */
	uint64_t seq;      /* increases with every copy */
	int refs;
};
/* Asks for a read now and returns the latest copy (NULL before the first): with wait_ms 0
 * at once, else waiting up to wait_ms (< 0: as long as it takes) for the one asked. With
 * mem_publish, wait_ms 0 asks nothing: the thread reads at each published cycle. The
 * source (its thread, the reader) is made at the first call. NULL without SESSION_MEM. */
const struct session_mem *session_mem_get(struct session *s, int wait_ms);
/* Lets go of d, on any thread, also after session_free. Accepts NULL. */
void session_mem_put(const struct session_mem *d);
/* With mem_publish: GC cycles a second over the last SESSION_MEM_RATE_S seconds of polls,
 * as of the last poll (< 0: not known yet). */
double session_mem_gc_rate(struct session *s);
/* What the target's /debug/pprof/NAME would answer (goprof_fetch: heap, allocs, block,
 * mutex, goroutine; ?debug, ?seconds), through the source's reader, on the calling thread.
 * GOPROF_E_OK, or an error kind with why. GOPROF_E_TARGET without SESSION_MEM. */
int session_mem_fetch(struct session *s, const struct goprof_req *r, struct goprof_out *out,
		      char *why, size_t whylen);
/* Calls fn with the source's reader (goprof.h), on the calling thread and under the lock
 * every read of it takes, for what no /debug/pprof answer holds (the server's metrics:
 * goprof_goroutines, the heap profile's sums). GOPROF_E_OK once fn ran; else why the
 * reader cannot be made, and fn is not called. GOPROF_E_TARGET without SESSION_MEM. */
int session_mem_borrow(struct session *s, void (*fn)(struct goprof *gp, void *arg), void *arg,
		       char *why, size_t whylen);
/* --enable-memprofile: gomem_enable through the source's reader (the one write into a
 * target, only when the user asks). 0, -EEXIST (*old the rate found, nothing written),
 * -ENOENT (no reader: why says so) or -errno. */
int session_mem_enable(struct session *s, int64_t *old, char *why, size_t whylen);

#endif
