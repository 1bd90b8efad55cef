/* session-int.h: the session's own state, shared by its files: session.c (the target, CPU
 * samples, the drain, profiles out, the verifier), session-go.c (the Go reader at the
 * sample and its BPF program), wall.c (the wall-clock sampler) and goroutines.c
 * (snapshots of every goroutine). Not a public header. */
#ifndef GOTOP_SESSION_INT_H
#define GOTOP_SESSION_INT_H

#include <pthread.h>
#include <stdint.h>

#include "gotop/session.h"
#include "gotop/target.h"

struct wallsrc;
struct gsrc;
struct memsrc;

struct session {
	struct session_opts o;
	struct session_info info;
	struct target target;
	struct agg *agg;         /* SESSION_CPU */
	struct sampler *samplers[SESSION_MAX_EVENTS];
	size_t nsamplers;
	int efd;                 /* opts.notify: the samplers' eventfd, or -1 */
	uint64_t start_ns, start_wall;
	char *cmdline;           /* session_cmdline, read at its first call */
	int cmdline_read;
	unsigned meta_done;      /* profiles whose metadata session_profile has set: bit i of
				  * event i, bit SESSION_MAX_EVENTS of the wall profile */

	/* The Go reader at the sample (session-go.c), SESSION_CPU of a Go target. The
	 * samplers read goroutines through the slot; the Go settings of the samplers (hook,
	 * BPF program, drain) are in go_so. The BPF program loads on a thread of its own
	 * (bpf_main): the kernel's verifier and the ring's pages take long enough to delay
	 * the first samples, which meanwhile read their goroutines after the sample. The
	 * lock orders the loader's attaching against the samplers' creation: go_so, info.bpf
	 * and bpf_why are written under it. */
	struct goread_slot *goslot;
	struct sampler_opts go_so;
	pthread_mutex_t bpf_lock;
	pthread_t bpf_thread;
	int bpf_thread_on;
	int go_late;             /* Go found after the start: the drain interval was changed */
	/* The Go runtime of the target's executable as the aggregator's symbolizer sees it
	 * (go_look, on the thread that feeds): looked for, found (its version), and when a
	 * look that found none was last made. */
	int go_checked;
	char *go_version;
	uint64_t go_checked_ns;

	struct wallsrc *wall;    /* SESSION_WALL, from session_start */
	int wall_known;          /* session_wall_started has waited for it: info.wall says */
	struct gowall_oncpu *oncpu; /* its running goroutines' stacks, from the aggregator */
	struct gsrc *gor;        /* SESSION_GOROUTINES, from the first session_goroutines_get */
	struct verifier *verifier; /* SESSION_VERIFY, from the first session_verifier */
	struct memsrc *mem;      /* SESSION_MEM, from the first session_mem_* call */
	pthread_mutex_t src_lock; /* guards the making of gor and verifier (any thread) */
};

/* session-go.c */
/* The Go reads of a Go target: the slot, the samplers' hook, the BPF program's loader. */
void session_go_setup(struct session *s);
/* The hook of a sampler of a session that reads Go but found no Go yet (a command through a
 * script): idle until a reader is published. */
void session_go_idle_hook(struct session *s, struct sampler_opts *so);
/* Waits for the BPF program's loader, so that info says whether it loaded. */
void session_go_join(struct session *s);
/* Looks for the Go runtime in the target's executable (at most once a second while none
 * is found: the target may exec) and publishes the reader to the samplers when found. On
 * the thread that feeds the aggregator. */
void session_go_look(struct session *s);
void session_go_free(struct session *s);

/* wall.c: the wall-clock sampler: a thread that ticks gowall at a rate. */
struct wallsrc *wallsrc_start(pid_t pid, double hz, double max_cpu, int publish,
			      struct gowall_oncpu *oncpu, char *why, size_t whylen);
/* Waits until the thread has set itself up: 1, or 0 with why it could not (gowall_new). */
int wallsrc_ready(struct wallsrc *w, char *why, size_t whylen);
/* Stops the thread (no tick after it); the profile stays. Accepts NULL. */
void wallsrc_stop(struct wallsrc *w);
/* After wallsrc_stop and the last samples fed: the running goroutines still waiting for
 * their on-CPU samples are added (gowall_flush). */
void wallsrc_flush(struct wallsrc *w);
/* The profile (borrowed, valid until wallsrc_free; NULL when the thread could not set
 * itself up); its rate asked for; its counts. */
struct prof *wallsrc_profile(struct wallsrc *w);
double wallsrc_hz(const struct wallsrc *w);
void wallsrc_stats(struct wallsrc *w, struct gowall_stats *st);
const struct session_wall *wallsrc_get(struct wallsrc *w, unsigned window_s,
				       const struct session_wall **base);
void wallsrc_zero(struct wallsrc *w);
void wallsrc_free(struct wallsrc *w); /* stops first; accepts NULL */

/* goroutines.c: snapshots of every goroutine on a thread of their own. */
struct gsrc *gsrc_new(pid_t pid, size_t max_g);
const struct session_goroutines *gsrc_get(struct gsrc *g, int wait_ms);
void gsrc_free(struct gsrc *g); /* joins the thread; accepts NULL */

/* mem.c: the memory profiles' reader and, when publishing, its polling thread. */
struct memsrc *memsrc_new(pid_t pid, int publish, double max_cpu, unsigned rate_s,
			  size_t max_records);
const struct session_mem *memsrc_get(struct memsrc *m, int wait_ms);
int memsrc_fetch(struct memsrc *m, const struct goprof_req *r, struct goprof_out *out,
		 char *why, size_t whylen);
double memsrc_gc_rate(struct memsrc *m);
int memsrc_enable(struct memsrc *m, int64_t *old, char *why, size_t whylen);
int memsrc_borrow(struct memsrc *m, void (*fn)(struct goprof *gp, void *arg), void *arg, char *why,
		  size_t whylen);
void memsrc_free(struct memsrc *m); /* joins the thread; accepts NULL */

#endif
