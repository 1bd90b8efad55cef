/* gowall.h: wall-clock profiles of a Go process: every goroutine sampled at a rate from
 * outside (include/gotop/gosnap.h), one pprof sample of wall/nanoseconds per goroutine and
 * tick, labelled with its state and its pprof labels. */
#ifndef GOTOP_GOWALL_H
#define GOTOP_GOWALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gowall;
struct prof;
struct symbolizer;

/* A wall-clock profiler of process pid at hz snapshots a second. sym (borrowed, used from
 * the caller's thread only) names the frames. NULL with errno and a one-line reason in why
 * (see gosnap_new). */
struct gowall *gowall_new(pid_t pid, struct symbolizer *sym, double hz, char *why, size_t whylen);
void gowall_free(struct gowall *w); /* accepts NULL */

/* Takes one snapshot and adds each goroutine as a sample worth the wall time since the
 * previous tick (the first: 1e9/hz ns): its stack (a running goroutine's from its perf
 * sample, see gowall_set_oncpu, else the frame "[running]"), the label "state" (running,
 * runnable, syscall, or the wait reason) and its pprof labels. 0, or -errno from
 * gosnap_take. */
int gowall_tick(struct gowall *w);

/* The interval to the next tick for a mean of step ns: drawn uniformly from
 * [step/2, 3 step/2) with the xorshift state *x (never 0), so that ticks are never in step
 * with a program that works and sleeps at the sampling period (at a fixed 10 Hz a 100 ms
 * request loop would be seen in one phase only). */
static inline uint64_t gowall_interval(uint64_t step, uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return step / 2 + *x % step;
}

/* Zeroes the profile's counts; the next tick counts the time since since_ns (util_now_ns
 * of the user's zero), not since the tick before it. */
void gowall_zero(struct gowall *w, uint64_t since_ns);

/* The profile (borrowed until gowall_free): sample type and period wall/nanoseconds. */
struct prof *gowall_profile(struct gowall *w);

struct gowall_stats {
	uint64_t ticks, failed, samples, torn, snap_ns;
	/* The wall time the ticks that read the goroutines counted, each its period: what a
	 * goroutine alive and parked at every one of them adds to its sample (ns). */
	uint64_t wall_ns;
	/* Running goroutines' samples (gowall_set_oncpu): all of them, and those that got
	 * the stack of an on-CPU sample rather than "[running]". */
	uint64_t running, running_oncpu;
};
void gowall_get_stats(const struct gowall *w, struct gowall_stats *st);

/*
 * On-CPU stacks for running goroutines. A running goroutine's stack is its thread's, so a
 * snapshot has none; the perf samples have it. The aggregator (another thread) offers each
 * sample's user chain and goroutine id to a gowall_oncpu, and gowall takes for each
 * running goroutine of a tick the chain of that goroutine's sample nearest the tick,
 * within one period (at least 50 ms: its thread may wait for a CPU). Samples reach the
 * aggregator a drain interval late, so a tick's running goroutines wait (bounded) until
 * the aggregator is past the tick's window, or until gowall_flush.
 */
struct gowall_oncpu;
struct gowall_oncpu *gowall_oncpu_new(void); /* never fails (out of memory is fatal) */
void gowall_oncpu_free(struct gowall_oncpu *o); /* accepts NULL */
/* A sample at time_ns (CLOCK_MONOTONIC, as the samplers' clock) of goroutine goid (0: not
 * known; the time still counts), pcs[0..n) its user chain, the sampled pc first, then
 * return addresses (runtime addresses). Thread-safe; no allocation. */
void gowall_oncpu_put(struct gowall_oncpu *o, uint64_t goid, uint64_t time_ns,
		      const uint64_t *pcs, size_t n);
/* From now on w's running goroutines take their stacks from o (borrowed; NULL: stop). */
void gowall_set_oncpu(struct gowall *w, struct gowall_oncpu *o);
/* Adds the running goroutines still waiting for an on-CPU sample: call once the
 * aggregator has been given every sample (after the samplers' last drain). */
void gowall_flush(struct gowall *w);

#endif
