/* livewall.h: the live UI's wall-clock profile of a Go target: a thread that takes a
 * snapshot of every goroutine at a rate (gowall.h) and publishes, after each one, an
 * immutable copy of the profile for the UI thread, which never waits for a snapshot. */
#ifndef GOTOP_LIVEWALL_H
#define GOTOP_LIVEWALL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct gowall_oncpu;
struct livewall;
struct prof;

/* What the UI reads: a copy of the wall profile (prof_snapshot of gowall_profile, sample
 * type wall/nanoseconds, labels "state" and the pprof labels) and the sampler's counts.
 * Immutable; held with livewall_get, let go with livewall_put. */
struct livewall_data {
	struct prof *p;
	double hz;        /* the rate of the last ticks (below --wall-hz under max_cpu) */
	uint64_t ticks;   /* snapshots taken since the start or the last zero */
	uint64_t failed;  /* of them, those that read nothing (runtime not up, torn list) */
	uint64_t torn;    /* goroutines dropped because they ran while read */
	uint64_t span_ns; /* wall time the ticks cover */
	uint64_t at_ns;   /* when it was published (util_now_ns) */
	int gone;         /* the target has exited: no more ticks */
	int refs;         /* references (atomic): the livewall's own and each holder's */
};

/* Starts the sampler thread on Go process pid at hz snapshots a second (above 0, at most
 * 1000), with a symbolizer of its own. With max_cpu above 0, the snapshots take at most
 * that share of a core: a target with more goroutines than the rate allows is read less
 * often, each tick counting the longer interval (livewall_data.hz is the rate kept).
 * Running goroutines take their stacks from oncpu, which the session's aggregator fills
 * (borrowed, must outlive the livewall; NULL: they are "[running]"). NULL with errno and a
 * one-line reason in why. */
#define LIVEWALL_DEFAULT_MAX_CPU 0.05
struct livewall *livewall_start(pid_t pid, double hz, double max_cpu, struct gowall_oncpu *oncpu,
				char *why, size_t whylen);
/* Stops the thread (it never stops the target: nothing to resume) and frees everything
 * but data still held, which stays valid until its livewall_put. Accepts NULL. */
void livewall_stop(struct livewall *lw);
/* The latest data with a reference (NULL before the first snapshot). Takes the lock only
 * for a pointer copy: never waits for a snapshot. */
const struct livewall_data *livewall_get(struct livewall *lw);
/* The same, and in *base the data published window_s seconds before it (the oldest kept
 * since the start or the last zero when none is that old; NULL when there is none), held
 * too: its values subtracted from the latest's, sample by sample (the same tables, see
 * prof_snapshot), give the last window_s seconds. The thread keeps one copy a second for
 * the longest window asked for, at least LIVEWALL_MIN_HISTORY seconds. */
#define LIVEWALL_MIN_HISTORY 60
const struct livewall_data *livewall_get_window(struct livewall *lw, unsigned window_s,
						const struct livewall_data **base);
/* Lets go of d, on any thread, also after livewall_stop. Accepts NULL. */
void livewall_put(const struct livewall_data *d);
/* Asks the thread to start counting again from zero at its next tick (the z key). */
void livewall_zero(struct livewall *lw);

#endif
