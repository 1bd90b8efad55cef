/* goruntime-input.h: the input format of fuzz-goruntime (a fake Go process), shared with its seed maker. */
#ifndef GOTOP_FUZZ_GORUNTIME_INPUT_H
#define GOTOP_FUZZ_GORUNTIME_INPUT_H

#include <stdint.h>

/* The fake process memory is one region at GRF_BASE holding the bytes after the header. */
#define GRF_BASE 0xc000000000ULL
#define GRF_MAX_MEM (256u << 10)
#define GRF_NSAMPLES 4

/* flags */
#define GRF_ARM64 0x01       /* gort_new for arm64 (same layouts) */
#define GRF_VARS 0x02        /* gort_set_runtime_vars(allm, mheap) */
#define GRF_STATIC 0x04      /* the upper half of the memory is a static range */
#define GRF_BATCH 0x08       /* also gort_read_batch over the samples */
#define GRF_FLIP 0x10        /* between rounds, xor one byte of memory (a label changed) */
#define GRF_RESET 0x20       /* gort_reset between rounds */

/* All offsets are from GRF_BASE; little endian, packed. */
struct grf_sample {
	uint32_t tid;
	uint32_t g;  /* g register = GRF_BASE + g */
	uint32_t sp; /* 0: unknown */
} __attribute__((packed));

struct grf_hdr {
	uint8_t version; /* index into the harness's version list */
	uint8_t nsamples;
	uint8_t flags;
	uint8_t flip_xor;
	uint32_t flip_off;
	uint32_t allm;   /* GRF_BASE + allm: runtime.allm */
	uint32_t mheap;  /* mheap_.sweepgen lives at GRF_BASE + mheap */
	struct grf_sample s[GRF_NSAMPLES];
} __attribute__((packed));

/* The versions the harness picks from (mod the count). */
static const char *const grf_versions[] = {
	"go1.19.13", "go1.20.14", "go1.21.13", "go1.22.12", "go1.23.5",
	"go1.24.4",  "go1.25.12", "go1.26.10", "go1.27.3",  "devel go1.25-abcdef",
};
#define GRF_NVERSIONS (sizeof(grf_versions) / sizeof(grf_versions[0]))

#endif
