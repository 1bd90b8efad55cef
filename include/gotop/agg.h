/* agg.h: the aggregator: decodes sample batches, symbolizes, repairs frame-pointer
 * stacks, labels each sample with its thread and, when the session's Go reader read it,
 * its goroutine and pprof labels, and folds everything into one profile per event. It
 * reads nothing from the target but its maps and files: what was read at the sample comes
 * with the batch, and the session says how to read it (agg_opts.go_reader). */
#ifndef GOTOP_AGG_H
#define GOTOP_AGG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/profile.h"
#include "gotop/repair.h"
#include "gotop/sampler.h"

struct agg;
struct symbolizer;

/*
 * A sample's goroutine. The session gives the samplers a hook (its Go reader) that puts a
 * record after each sample it read (sampler.h, SAMPLER_RECORD_EXTRA). The aggregator does
 * not know that record's format: the session's go_reader turns it into an agg_go.
 */
#define AGG_GO_FOUND 0x1          /* the goroutine was found: goid and startpc are set */
#define AGG_GO_LABELS_DROPPED 0x2 /* its labels were left out by the reader (table full) */
#define AGG_MAX_GO_LABELS 64      /* pairs of a label set kept */
struct agg_go {
	uint32_t flags;           /* AGG_GO_* */
	uint64_t goid;
	uint64_t startpc;         /* the entry of its start function, 0 unknown */
	/* Its pprof label set, NULL for none (or an empty one): an identity the reader
	 * interned, one pointer per set, valid while the aggregator lives; go_reader.labels
	 * lists its pairs. */
	const void *labels;
	/* The goroutine's state where it was suspended at a stack switch the sample was taken
	 * beyond (repair_cross), NULL for none; valid during the call that gave it. */
	const struct repair_switch *cross;
};
struct agg_label {
	const char *key, *value;  /* not NUL-terminated */
	uint32_t klen, vlen;
};
struct agg_go_reader {
	/* The payload (len bytes, 8-byte aligned, valid during the call) of the record after
	 * a sample into *g; g->cross may point at *sw, or into the payload. 0, or -1 when it
	 * tells nothing of the sample. */
	int (*sample)(const void *payload, size_t len, struct agg_go *g, struct repair_switch *sw);
	/* The pairs of label set `set` (an agg_go.labels), at most max of them into out:
	 * how many. */
	size_t (*labels)(const void *set, struct agg_label *out, size_t max);
};

struct agg_opts {
	pid_t pid;
	int repair;        /* repair frame-pointer chains (on by default) */
	int kernel;        /* keep kernel frames */
	/* How to read the records the sampling hook put after the samples (borrowed, must
	 * outlive the aggregator; NULL: they are ignored and no sample has a goroutine). */
	const struct agg_go_reader *go_reader;
	/* Samples with kernel frames wait (agg_flush) while kernel symbols load on a thread
	 * of their own (symbolizer_load_kernel_async), instead of the first such sample
	 * blocking until they are there. The others are folded at once. A caller that sets
	 * it must call agg_flush before it reads the profiles for the last time. */
	int hold_kernel;
	/* Kernel symbols from this file (/proc/kallsyms format) instead of /proc/kallsyms:
	 * tests, or a saved copy. NULL: /proc/kallsyms. */
	const char *kallsyms_path;
	/* Replaying recorded samples with no process (pid unused): the text of the target's
	 * saved /proc/PID/maps and its executable's path (symbolizer_new_offline). */
	const char *offline_maps;
	size_t offline_maps_len;
	const char *offline_exe;
	/* Goroutines whose ids every sample keeps (0: AGG_GOID_ALL_MAX); past that many,
	 * only goroutines seen running for AGG_GOID_OLD_NS keep theirs (see agg.c). */
	uint32_t goid_all_max;
	/* Profile entries up to which every sample keeps its thread and goroutine ids (0:
	 * AGG_SAMPLES_FULL); past that many, a sample that has no entry yet loses them (see
	 * agg.c, "Threads and memory"). */
	uint32_t samples_full;
	/* Profile entries up to which a sample keeps its pprof labels (0: AGG_LABELS_FULL;
	 * it takes effect past samples_full only); past that many, a sample whose labels
	 * have no entry yet is counted without them (labels_dropped; see agg.c, "Label sets
	 * and memory"). */
	uint32_t labels_full;
};
#define AGG_SAMPLES_FULL 16384
#define AGG_LABELS_FULL 65536
#define AGG_GOID_ALL_MAX 1000
#define AGG_GOID_OLD_NS 1000000000ULL

struct agg_stats {
	uint64_t samples;      /* samples folded */
	uint64_t lost;         /* from PERF_RECORD_LOST in the stream */
	uint64_t bad;          /* records that failed to decode */
	uint64_t go_samples;   /* samples whose leaf is in Go code */
	uint64_t with_goid;    /* ... for which a goroutine was found */
	uint64_t labelled;     /* ... which carried pprof labels */
	uint64_t labels_dropped; /* ... whose labels were left out: the reader's table of label
				  * sets was full (GORT_LABELS_DROPPED), or the set had no entry
				  * past labels_full entries */
	uint64_t goroutines;   /* distinct goroutines found (about: see agg.c, goid_keep) */
	uint64_t goid_young;   /* samples whose goroutine id was not kept: it was younger
				* than AGG_GOID_OLD_NS after goid_all_max goroutines */
	uint64_t thread_dropped; /* samples that kept no thread id: past samples_full entries */
	uint64_t goid_dropped;   /* ... nor goroutine id */
	uint64_t repaired;     /* stacks changed by the repair */
	uint64_t crossed;      /* stacks continued past a stack switch (repair_cross) */
	uint64_t addrs;        /* distinct addresses symbolized */
	uint64_t unresolved;   /* of which without a symbol */
	uint64_t chain_cut;    /* samples whose user chain was cut at an address in memory
				* that is not code (location_for) */
	uint64_t held;         /* samples waiting for kernel symbols (hold_kernel), not yet
				* in any profile nor in samples */
};

/* Never fails (out of memory is fatal). */
struct agg *agg_new(const struct agg_opts *o);
void agg_free(struct agg *a);

/* Loads symbol tables (the executable's when main, kallsyms when the kernel is
 * sampled) before sampling, as perf does its set-up first. main must be 0 while a
 * command has not exec'd yet. */
void agg_preload(struct agg *a, int main);
/* The aggregator's symbolizer of the target (borrowed, valid until agg_free; used from
 * the thread that feeds the aggregator only): the session finds the Go runtime with it. */
struct symbolizer *agg_symbolizer(struct agg *a);

/* Starts loading kernel symbols on their own thread now (with agg_opts.kernel), rather than
 * at the first sample with a kernel frame: for a caller that loads lazily, once its first
 * data is out. Does nothing once they are loaded or loading. */
void agg_kernel_prefetch(struct agg *a);

/* Offers each sample folded from now on (a group's leader's only: a member's, a page
 * fault, says nothing of what runs) to fn, on the thread that feeds: its time (the
 * samplers' clock), its goroutine (0: none found) and its user chain after the repair,
 * the sampled pc first, valid during the call. The session attaches the wall-clock
 * sampler's table of running goroutines this way. fn NULL stops; set it while nothing
 * feeds the aggregator. */
typedef void agg_sink_fn(void *arg, uint64_t goid, uint64_t time_ns, const uint64_t *pcs,
			 size_t n);
void agg_set_sink(struct agg *a, agg_sink_fn *fn, void *arg);

/* Folds every record of the batch into the profile of the batch's event. */
void agg_feed(struct agg *a, const struct sample_batch *b);

/* Folds the samples held for kernel symbols (agg_opts.hold_kernel) into their profiles
 * once the symbols are loaded; with wait, waits for them first. agg_feed does it too
 * (without waiting). Returns how many samples it folded. */
size_t agg_flush(struct agg *a, int wait);

/* Replaces the profile of an event by prof_compact(profile, keep, newidx): only the
 * samples with keep[i] stay (see prof_compact for newidx), and the aggregator's caches of
 * the old profile's ids start again. Pointers to the old profile (agg_profile) are then
 * invalid; its snapshots stay valid. For a live view that forgets what it no longer
 * shows (a decaying window). 0, -ENOENT (no such event), or -EBUSY while samples are
 * held for kernel symbols (agg_opts.hold_kernel): nothing changed then. */
int agg_compact(struct agg *a, const char *event_name, const uint8_t *keep, uint32_t *newidx);
/* Profiles by event, in the order events were first seen. Borrowed, valid until
 * agg_free; agg_feed may change them (the UI works on copies). */
size_t agg_nprofiles(const struct agg *a);
struct prof *agg_profile_at(struct agg *a, size_t i, const char **event_name);
/* The profile of an event by name, or NULL. */
struct prof *agg_profile(struct agg *a, const char *event_name);

void agg_get_stats(const struct agg *a, struct agg_stats *st);
/* Sets the time and duration of every profile. */
void agg_set_times(struct agg *a, int64_t start_wall_ns, int64_t duration_ns);

#endif
