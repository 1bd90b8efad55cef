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

/* Takes one snapshot and adds each goroutine as a sample worth one period (1e9/hz ns) of
 * wall time: its stack (running goroutines, whose stack is their thread's, get the frame
 * "[running]"), the label "state" (running, runnable, syscall, or the wait reason) and its
 * pprof labels. 0, or -errno from gosnap_take. */
int gowall_tick(struct gowall *w);

/* The profile (borrowed until gowall_free): sample type and period wall/nanoseconds. */
struct prof *gowall_profile(struct gowall *w);

struct gowall_stats {
	uint64_t ticks, failed, samples, torn, snap_ns;
};
void gowall_get_stats(const struct gowall *w, struct gowall_stats *st);

#endif
