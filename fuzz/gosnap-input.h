/* gosnap-input.h: the input format of fuzz-gosnap (a fake Go process's goroutines), shared with its seed maker. */
#ifndef GOTOP_FUZZ_GOSNAP_INPUT_H
#define GOTOP_FUZZ_GOSNAP_INPUT_H

#include <stdint.h>

#include "fakemem.h"

/* The fake memory is one region at GSF_BASE holding the bytes after the header and the
 * .gopclntab; code addresses (pcs, goexit, text start) are free 64-bit values. */
#define GSF_BASE 0xc000000000ULL
#define GSF_MAX_MEM (256u << 10)
#define GSF_MAX_PCLN (64u << 10)
#define GSF_NFLIPS 4
#define GSF_MAX_TAKES 3

/* flags */
#define GSF_ARM64 0x01 /* gort_new for arm64 (same layouts) */
#define GSF_MHEAP 0x02 /* gort_set_runtime_vars(0, mheap): the label cache's GC epochs */
#define GSF_PCLN 0x04  /* open the .gopclntab bytes: frame sizes (repair, walk_exact) */
#define GSF_READV 0x08 /* the reader has a readv (pieces still read one by one, in order) */

/* Data addresses are offsets from GSF_BASE; little endian, packed. */
struct gsf_hdr {
	uint8_t version;       /* index into grf_versions (goruntime-input.h), mod its count */
	uint8_t flags;         /* GSF_* */
	uint8_t takes;         /* snapshots taken: 1 + takes % GSF_MAX_TAKES */
	uint8_t nwait;         /* entries of waitReasonStrings */
	uint32_t max_g;        /* gosnap_take's max_g */
	uint32_t allglen;      /* runtime.allglen */
	uint32_t allgptr;      /* runtime.allgptr */
	uint32_t mheap;        /* mheap_.sweepgen is at GSF_BASE + mheap */
	uint32_t wait_strings; /* runtime.waitReasonStrings, 0: none */
	uint32_t fail_mask;    /* read k (k < 32) fails with -EFAULT when bit k is set */
	uint32_t pcln_len;     /* .gopclntab bytes after the header (mod GSF_MAX_PCLN + 1) */
	uint64_t text_start;   /* its text start (link-time) */
	uint64_t bias;         /* runtime - link-time addresses */
	uint64_t goexit_lo, goexit_hi; /* runtime.goexit, runtime addresses */
	struct fz_flip flip[GSF_NFLIPS];
} __attribute__((packed));

#endif
