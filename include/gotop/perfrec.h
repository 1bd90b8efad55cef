/* perfrec.h: decoding perf_event records (PERF_RECORD_SAMPLE and friends), bounds-checked. */
#ifndef GOTOP_PERFREC_H
#define GOTOP_PERFREC_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

#define PERFREC_MAX_REGS 64

/* What the records of one event look like: copied from its perf_event_attr. */
struct perfrec_layout {
	uint64_t sample_type;
	uint64_t regs_user_mask;
	uint64_t read_format;
	int sample_id_all;
};

/* A decoded sample. Pointers point into the record and are valid as long as it is. */
struct perf_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t id;
	uint64_t nr;          /* callchain entries, with PERF_CONTEXT_* markers */
	const uint64_t *chain;
	/* PERF_SAMPLE_READ with PERF_FORMAT_GROUP: read_nr counters (the leader first), the
	 * value of counter i at read_vals[i * read_stride] (ids or lost counts between). */
	uint64_t read_nr;
	const uint64_t *read_vals;
	uint32_t read_stride;
	uint64_t regs_abi;    /* PERF_SAMPLE_REGS_ABI_*; 0 = no user regs (kernel thread) */
	uint64_t regs_mask;   /* which regs[] are valid, by perf register number */
	uint64_t regs[PERFREC_MAX_REGS];
	uint64_t stack_size;  /* bytes copied ... */
	uint64_t stack_dyn;   /* ... of which valid (PERF_SAMPLE_STACK_USER dyn_size) */
	const uint8_t *stack; /* user stack from the sampled SP upward */
};

/* The sample_id_all trailer of non-sample records. */
struct perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
};

/* Decodes a PERF_RECORD_SAMPLE. 0, or -EINVAL when the record is malformed
 * (every length is checked against the record size). */
int perfrec_parse_sample(const struct perfrec_layout *l, const struct perf_event_header *h,
			 struct perf_sample *s);

/* Decodes the sample_id trailer of a non-sample record `body_size` bytes into the
 * record (after the header and the type's fixed fields). 0 or -EINVAL. */
int perfrec_parse_id(const struct perfrec_layout *l, const struct perf_event_header *h,
		     size_t body_size, struct perf_sample_id *id);

/* Splits a callchain into user frames: copies at most max user addresses (leaf
 * first) into out, skipping context markers and kernel frames. Kernel frames go to
 * kout (at most kmax) when kout != NULL. Returns the user count; *nk gets the
 * kernel count. */
size_t perfrec_split_chain(const struct perf_sample *s, uint64_t *out, size_t max,
			   uint64_t *kout, size_t kmax, size_t *nk);

#endif
