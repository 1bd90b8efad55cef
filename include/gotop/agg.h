/* agg.h: the aggregator: decodes sample batches, symbolizes, adds Go goroutines and
 * labels, repairs frame-pointer stacks, and folds everything into one profile per event. */
#ifndef GOTOP_AGG_H
#define GOTOP_AGG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/gobpf.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"

struct agg;

struct agg_opts {
	pid_t pid;
	int repair;        /* repair frame-pointer chains (on by default) */
	int go;            /* read goroutine ids and pprof labels of Go targets */
	int kernel;        /* keep kernel frames */
	/* Samples with kernel frames wait (agg_flush) while kernel symbols load on a thread
	 * of their own (symbolizer_load_kernel_async), instead of the first such sample
	 * blocking until they are there. The others are folded at once. A caller that sets
	 * it must call agg_flush before it reads the profiles for the last time. */
	int hold_kernel;
	/* Kernel symbols from this file (/proc/kallsyms format) instead of /proc/kallsyms:
	 * tests, or a saved copy. NULL: /proc/kallsyms. */
	const char *kallsyms_path;
	/* Replaying recorded samples with no process (pid unused): the text of the target's
	 * saved /proc/PID/maps and its executable's path (symbolizer_new_offline). Goroutines
	 * and labels then come only from the batches' extra records. */
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
	uint64_t label_delay_p50_ns, label_delay_p99_ns; /* sample -> goroutine read */
	uint64_t go_snapshots, go_snap_missing, go_recs_kept; /* see goread_stats */
	uint64_t go_conts;     /* samples with their suspended goroutine's state (goread_stats) */
	uint64_t go_readvs, go_label_pieces, go_label_content; /* the same */
	uint64_t bpf_records, bpf_ring_full, bpf_runs, bpf_run_ns;
	struct gobpf_load bpf_load;
};

/* Never fails (out of memory is fatal). */
struct agg *agg_new(const struct agg_opts *o);
void agg_free(struct agg *a);

/* The hook to give the samplers (sampler_opts.hook, hook_arg) so that goroutines
 * and labels are read on the sampling thread right after each sample. The samplers
 * must be stopped before agg_free. fn is NULL when Go reading is off. */
void agg_sampler_hook(struct agg *a, sampler_hook_fn *fn, void **arg);
/* Loads the BPF program that reads each sample's goroutine at the sample (gobpf) for
 * a target of this Go version (goread_slot_bpf: any thread, also while samplers run),
 * for the samplers to attach (sampler_opts.bpf, sampler_set_bpf). ring_bytes: see
 * gobpf_new. The fd, or -errno with a one-line reason in why. */
int agg_go_bpf(struct agg *a, const char *go_version, size_t ring_bytes, char *why, size_t whylen);

/* Loads symbol tables (the executable's when main, kallsyms when the kernel is
 * sampled) and starts the Go reads before sampling, as perf does its set-up first.
 * main must be 0 while a command has not exec'd yet. */
void agg_preload(struct agg *a, int main);

/* Starts loading kernel symbols on their own thread now (with agg_opts.kernel), rather than
 * at the first sample with a kernel frame: for a caller that loads lazily, once its first
 * data is out. Does nothing once they are loaded or loading. */
void agg_kernel_prefetch(struct agg *a);

/* Offers each sample folded from now on to o (gowall.h: the stacks of running goroutines
 * for a wall-clock profile): its time, goroutine id and user chain after the repair, the
 * sampled pc first. o is borrowed; NULL stops. */
struct gowall_oncpu;
void agg_set_oncpu(struct agg *a, struct gowall_oncpu *o);

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
/* The Go version of the target's executable ("go1.24.4"), or NULL if not Go. */
const char *agg_go_version(struct agg *a);
/* Sets the time and duration of every profile. */
void agg_set_times(struct agg *a, int64_t start_wall_ns, int64_t duration_ns);

#endif
