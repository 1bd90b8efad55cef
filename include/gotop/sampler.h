/* sampler.h: the sampling thread: perf_event_open on every thread of a target, ring
 * buffers drained into batches that a consumer takes. */
#ifndef GOTOP_SAMPLER_H
#define GOTOP_SAMPLER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/arch.h" /* sampler_reg: the registers each sample records */
#include "gotop/events.h"
#include "gotop/perfrec.h"

struct sampler;

/* A hook called on the sampling thread for every sample right after it is drained,
 * for reads that must happen close to the sample (the goroutine and its labels). It
 * may write up to SAMPLER_EXTRA_MAX bytes into extra; they follow the sample in its
 * batch as a record of type SAMPLER_RECORD_EXTRA. Returns the byte count (0: no
 * record). After each drain in which it returned a count, it is called once more with
 * h, layout and extra NULL: until that call returns, the extra bytes of the drain's
 * samples stay where they were written and no consumer sees them, so the hook may fill
 * them in then, for all of the drain's samples at once. That call returns nonzero when
 * the hook's work needs the next drain soon (within drain_ms), 0 when it may wait
 * (drain_idle_ms). It must not block; several samplers may call it concurrently. */
#define SAMPLER_RECORD_EXTRA 0x7f000001u
#define SAMPLER_EXTRA_MAX 512
typedef size_t (*sampler_hook_fn)(void *arg, const struct perf_event_header *h,
				  const struct perfrec_layout *layout, void *extra);

struct sampler_opts {
	pid_t pid;             /* target process */
	const pid_t *tids;     /* sample only these threads (no inheritance) when ntids > 0 */
	size_t ntids;
	struct event_spec event;
	int use_freq;          /* 1: `freq` samples per second per thread; 0: every `period` events */
	uint64_t freq, period;
	uint32_t stack_size;   /* user stack bytes copied per sample (multiple of 8, <= 65528); 0 = none */
	unsigned ring_pages;   /* data pages per CPU ring (power of two); 0 = sized from the rate */
	int kernel;            /* sample kernel callchains too (needs permission) */
	int enable_on_exec;    /* the target has not exec'd yet: start counting at exec */
	sampler_hook_fn hook;  /* optional, see above */
	void *hook_arg;
	unsigned drain_ms;     /* drain the rings at least this often (0: 500 ms, and a ring 3/4
	                          full); short intervals keep the hook's reads close to the
	                          samples, at a wakeup each */
	unsigned drain_idle_ms; /* when larger than drain_ms: the interval after a drain whose
	                          hook said it may wait (see above) or that found no sample;
	                          every wakeup costs, and the hook had nothing to read late */
	int bpf;               /* 1: attach the BPF_PROG_TYPE_PERF_EVENT program bpf_prog_fd to
	                          every event opened (PERF_EVENT_IOC_SET_BPF) */
	int bpf_prog_fd;
};

/* A batch of raw records (each a struct perf_event_header and body, 8-byte aligned,
 * back to back) from one event generation. A group's samples are rewritten in the
 * batch's copy: when its members sample (event->sample_read 0), the id each sample
 * starts with (PERF_SAMPLE_IDENTIFIER) is the index of the group's event that took it,
 * 0 the leader and k + 1 member k; with sample_read, each value read (PERF_SAMPLE_READ)
 * is the counter's count since the previous sample of the same thread and CPU. */
struct sample_batch {
	struct sample_batch *next;
	uint32_t gen;                        /* event generation: changes when the event does */
	const struct perfrec_layout *layout; /* borrowed, valid until sampler_free */
	const struct event_spec *event;      /* borrowed, valid until sampler_free */
	size_t len, cap;
	uint8_t *data;
};

struct sampler_stats {
	uint64_t samples;      /* PERF_RECORD_SAMPLE records delivered to batches */
	uint64_t lost;         /* samples the kernel dropped (PERF_RECORD_LOST) */
	uint64_t dropped;      /* samples dropped because the consumer fell behind */
	uint64_t throttled;    /* PERF_RECORD_THROTTLE events */
	uint64_t bad;          /* corrupt records skipped */
	uint64_t bytes;
	uint32_t threads;      /* threads of the target at the last scan */
	uint32_t fds;          /* perf events open */
	uint32_t bpf_attached; /* events given the BPF program (sampler_opts.bpf) */
	uint32_t bpf_failed;   /* events that refused it: their samples do without */
	uint64_t hook_drains;  /* drains that ended with the hook's end-of-drain call */
	uint64_t hook_idle;    /* of those, the calls that said the next drain may wait */
	uint64_t self_cpu_ns;  /* CPU time of the sampling thread */
	uint32_t gen;
	int paused;
	int target_exited;
	char event[EVENT_NAME_MAX];
	uint64_t freq, period;
	int use_freq;
};

/* Opens the events on every thread of the target (and maps the ring buffers) but
 * does not start the thread. On failure returns NULL with errno set and a one-line
 * reason in err. */
struct sampler *sampler_new(const struct sampler_opts *o, char *err, size_t errlen);
/* Starts the sampling thread. 0 or -errno. */
int sampler_start(struct sampler *s);
/* Takes the oldest batch, waiting up to timeout_ms (0: do not wait). NULL when none.
 * The caller returns it with sampler_batch_free. */
struct sample_batch *sampler_take(struct sampler *s, int timeout_ms);
/* From now on a wait in sampler_take lasts its timeout unless at least `bytes` are queued
 * (0, the default: until any batch is): for a consumer that takes its batches at its own
 * pace (a refresh), so that it does not wake for each: every wakeup costs the
 * consumer's thread CPU time. Kicks, the end of the sampling and the timeout still end
 * the wait. Any thread. */
void sampler_set_wake_bytes(struct sampler *s, size_t bytes);
/* What the live UI's worker uses: 2 MiB, about a second of a Go target's samples at
 * 1 kHz on 3 busy threads; more would only hold more memory. */
#define SAMPLER_LAZY_WAKE_BYTES (2u << 20)
/* Makes a wait in sampler_take (now or the next one) return at once, e.g. for a request
 * to the consumer thread. */
void sampler_kick(struct sampler *s);
/* From now on the sampler also writes to the eventfd `fd` (-1: none; borrowed) whenever a
 * wait in sampler_take would end (a batch queued as sampler_set_wake_bytes says, a kick,
 * the end of the sampling): for a consumer that waits in poll(2), for several samplers
 * at once and for signals. The consumer reads the fd to clear it. Any thread. */
void sampler_set_notify_fd(struct sampler *s, int fd);
/* Drains the rings on the calling thread and queues what they held, for a consumer
 * that wants every sample up to now (a refresh) without the thread waking often. */
void sampler_flush(struct sampler *s);
/* Changes the drain intervals (sampler_opts.drain_ms and drain_idle_ms; ms 0 is ignored)
 * from now on: for a command that execs a Go program after it started as something else
 * (a shell script), whose goroutines are read at the drain, and for a BPF program loaded
 * after the sampler started. Any thread. */
void sampler_set_drain_ms(struct sampler *s, unsigned ms, unsigned idle_ms);
/* Attaches BPF program prog_fd (sampler_opts.bpf) to the events open now and to those
 * opened from now on, when none is attached yet: for a program that loads while the
 * sampler runs. The program's fd must outlive the sampler. Any thread. */
void sampler_set_bpf(struct sampler *s, int prog_fd);
void sampler_batch_free(struct sampler *s, struct sample_batch *b);
/* Switches to another event or rate without stopping: opens the new events first;
 * if that fails, the current ones keep running and err says why. 0 or -errno. */
int sampler_set_event(struct sampler *s, const struct event_spec *ev, int use_freq,
		      uint64_t value, char *err, size_t errlen);
/* Pauses (1) or resumes (0) counting. */
int sampler_pause(struct sampler *s, int paused);
void sampler_get_stats(struct sampler *s, struct sampler_stats *st);
/* Whether the target has exited (the sampling thread then stops by itself after
 * draining what is left). */
int sampler_target_exited(struct sampler *s);
/* Stops the thread after a last drain; batches left can still be taken. */
void sampler_stop(struct sampler *s);
/* Closes everything. Accepts NULL. Batches taken and not freed must be freed before. */
void sampler_free(struct sampler *s);

#endif
