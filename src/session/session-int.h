/* session-int.h: the session's own state, shared by its files: session.c (the target, CPU
 * samples, the drain) and session-go.c (the Go reader at the sample and its BPF program).
 * Not a public header. */
#ifndef GOTOP_SESSION_INT_H
#define GOTOP_SESSION_INT_H

#include <pthread.h>
#include <stdint.h>

#include "gotop/session.h"
#include "gotop/target.h"

struct session {
	struct session_opts o;
	struct session_info info;
	struct target target;
	struct agg *agg;         /* SESSION_CPU */
	struct sampler *samplers[SESSION_MAX_EVENTS];
	size_t nsamplers;
	int efd;                 /* opts.notify: the samplers' eventfd, or -1 */
	uint64_t start_ns, start_wall;

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

#endif
