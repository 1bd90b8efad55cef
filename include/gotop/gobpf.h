/* gobpf.h: the BPF program that reads a Go target's g, m and m.curg at sample time
 * (src/go/bpf/gobpf.bpf.c), its loading and the ring of its records. */
#ifndef GOTOP_GOBPF_H
#define GOTOP_GOBPF_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/gobpf-abi.h"
#include "gotop/goruntime.h"

struct gobpf;

/* Loads the program for these offsets with a ring of ring_bytes (a power of two,
 * at least one page). NULL with errno and a one-line reason in err: ENOTSUP when
 * built without BPF support or for offsets it cannot take, EPERM without CAP_BPF and
 * CAP_PERFMON, or the loader's error. */
struct gobpf *gobpf_new(const struct gort_offsets *o, size_t ring_bytes, char *err, size_t errlen);
void gobpf_free(struct gobpf *b);
/* The program's fd, for PERF_EVENT_IOC_SET_BPF. */
int gobpf_prog_fd(const struct gobpf *b);
/* Whether the program reads the user registers of samples taken in the kernel. */
int gobpf_kernel_regs(const struct gobpf *b);
/* Whether the program was built for the same g and m offsets as o. */
int gobpf_offsets_match(const struct gobpf *b, const struct gort_offsets *o);
/* Tells the program the target's read-only ranges (at most GOBPF_STATIC_MAX are kept):
 * strings outside them are copied at the sample (gobpf-abi.h). 0 or -errno. */
int gobpf_set_statics(struct gobpf *b, const uint64_t (*ranges)[2], size_t n);
/* Calls fn for each record written since the last call, oldest first. The records stay
 * in the ring, valid until gobpf_release gives their space back to the program. Returns
 * the number of records. One thread at a time. */
size_t gobpf_peek(struct gobpf *b, void (*fn)(void *arg, const struct gobpf_rec *r), void *arg);
/* Gives the space of every record peeked so far back to the program. */
void gobpf_release(struct gobpf *b);
/* Records written, and samples that found the ring full, since loading. */
void gobpf_counts(const struct gobpf *b, uint64_t *records, uint64_t *ring_full);
/* What loading cost: the wall and CPU time of gobpf_new's load (the object, its maps and
 * the kernel's verifier; the calling thread's CPU, where the verifier runs), and the
 * instructions the verifier processed (0 before Linux 5.16, which does not report them). */
struct gobpf_load {
	uint64_t wall_ns, cpu_ns;
	uint32_t verified_insns;
};
void gobpf_load_info(const struct gobpf *b, struct gobpf_load *l);
/* The kernel's count of the program's runs and their total time in ns: kept only while
 * the sysctl kernel.bpf_stats_enabled is 1 (0 and 0 otherwise). 0 or -errno. */
int gobpf_run_time(const struct gobpf *b, uint64_t *runs, uint64_t *ns);

#endif
