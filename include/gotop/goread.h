/* goread.h: goroutine ids and pprof labels of samples, read from the target on the
 * sampling thread right after each ring drain (labels change as goroutines run on). */
#ifndef GOTOP_GOREAD_H
#define GOTOP_GOREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdw.h>

#include "gotop/gobpf.h"
#include "gotop/goruntime.h"
#include "gotop/perfrec.h"

/* What the hook appends after a sample (a SAMPLER_RECORD_EXTRA payload). */
struct goread_extra {
	uint64_t goid;
	const struct gort_labels *labels; /* interned: valid until goread_free */
	int32_t rc;                       /* gort_read's result: 0 found */
	uint32_t flags;                   /* GORT_* */
	uint64_t delay_ns;                /* from the sample's time to the read */
	uint64_t startpc;                 /* gort_result.startpc: the start function's entry */
};

/* The state of the sample's goroutine when it was suspended at a stack switch (systemstack,
 * asmcgocall, mcall, morestack) and the sample was taken beyond it, on the thread's system
 * stack or in C code: what the BPF program copied at the sample (gobpf-abi.h, gobpf_cont).
 * When the BPF program runs, the extra record holds one right after its goread_extra;
 * valid is 1 when it was copied, at the sample, from the goroutine the reader found for it
 * (same goid). ret[0..n) is the frame-pointer walk from bp; stack holds the words at sp.
 * A sample in Go code of a cgo callback gets, with cb set, the state its goroutine left
 * when it entered the cgo call the callback came through (asmcgocall's SP).
 * Without BPF nothing is copied: a goroutine's saved state read after the sample could
 * belong to a later switch. */
#define GOREAD_CONT_WORDS 4
#define GOREAD_CONT_FRAMES 40
struct goread_cont {
	uint64_t pc, sp, bp;
	uint64_t stack[GOREAD_CONT_WORDS];
	uint32_t n, valid;
	uint32_t cb, pad; /* cb: a cgo callback's goroutine below its C code (GOBPF_CONT_CB) */
	uint64_t ret[GOREAD_CONT_FRAMES];
};

/* The reader for one target; the hook does nothing until a reader is published. */
struct goread;
struct goread_slot;

/* A slot to hand to the sampler as hook_arg (never fails). Free it after every
 * sampler using it has stopped. */
struct goread_slot *goread_slot_new(void);
void goread_slot_free(struct goread_slot *slot); /* frees the published reader too */
/* Loads the BPF program that reads each sample's g, m and m.curg at the sample
 * (gobpf), for a Go target of this version (offsets from the version table), with a
 * ring of ring_bytes. Any thread, also while samplers run (the load takes a while): the
 * reader, published before or after, takes the program's records from then on when its
 * own offsets (DWARF's, when the binary has them) agree; samples of events the program is
 * not attached to yet are read after the sample. 0, or -errno with a one-line reason in
 * why (-ENOTSUP: built without BPF or no offsets; -EPERM; -EEXIST: loaded already). */
int goread_slot_bpf(struct goread_slot *slot, const char *go_version, size_t ring_bytes, char *why,
		    size_t whylen);
/* The program's fd for sampler_opts.bpf_prog_fd, or -1. */
int goread_bpf_fd(struct goread_slot *slot);

/* Creates the reader for a Go target and publishes it to the slot (release
 * ordering: the sampling threads start using it at their next sample). Returns 0,
 * -EEXIST if one is already published, or -errno from gort_new (e.g. -ENOTSUP for
 * an unknown Go version without DWARF). */
int goread_publish(struct goread_slot *slot, pid_t pid, const char *go_version, Dwarf *dwarf,
		   int arch);
/* The same, taking the version, DWARF, architecture, the runtime's variables
 * (runtime.allm, runtime.mheap_ from .symtab, moved by the load bias) and the
 * binary's read-only mappings from the target's executable file sf. */
struct symfile;
int goread_publish_file(struct goread_slot *slot, pid_t pid, struct symfile *sf);
/* Whether a reader is published. */
int goread_active(const struct goread_slot *slot);

/* The sampler hook (sampler_hook_fn) with a goread_slot as its argument. It queues each
 * sample and reads them all at the sampler's end-of-drain call (h == NULL); until then a
 * sample's goread_extra says rc -EAGAIN. That call returns 1 when it read the target's
 * memory, 0 when the BPF program's records and the caches answered everything (then
 * nothing is read late, and the next drain may wait: sampler_opts.drain_idle_ms). */
size_t goread_hook(void *slot, const struct perf_event_header *h,
		   const struct perfrec_layout *layout, void *extra);

struct goread_stats {
	uint64_t reads;     /* distinct (thread, g register) reads, made per drain by gort_read_batch */
	uint64_t coalesced; /* samples served by the same thread's read of the same drain */
	uint64_t found, labelled;
	uint64_t snapshots;    /* samples whose g and m came from the BPF program's record */
	uint64_t snap_missing; /* samples without one while the program ran (slow path) */
	uint64_t recs_kept;    /* records kept (copied) for a sample of a later drain */
	uint64_t readvs;       /* vectored reads (process_vm_readv) of gort_read_batch */
	uint64_t label_pieces; /* label-set reads answered by the program's copy instead */
	uint64_t label_content; /* label sets known by their content as the program copied it */
	uint64_t bpf_records, bpf_ring_full; /* written by the program; its ring full */
	uint64_t bpf_runs, bpf_run_ns;       /* gobpf_run_time */
	struct gobpf_load bpf_load;          /* gobpf_load_info */
	uint64_t conts;        /* samples given their suspended goroutine's state (goread_cont) */
	uint64_t delay_hist[32]; /* read delays: bucket k holds [2^k, 2^(k+1)) ns */
};
void goread_get_stats(const struct goread_slot *slot, struct goread_stats *st);
/* The delay (ns) below which a fraction q (0..1) of reads happened. */
uint64_t goread_delay_quantile(const struct goread_stats *st, double q);

#endif
