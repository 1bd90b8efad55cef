/* gomem-input.h: the input format of fuzz-gomem (a fake Go process's profile buckets),
 * and the builder of such memories that its seed maker and tests/test-gomem.c share. */
#ifndef GOTOP_FUZZ_GOMEM_INPUT_H
#define GOTOP_FUZZ_GOMEM_INPUT_H

#include <stdint.h>
#include <string.h>

#include "fakemem.h"

/* The fake memory is one region at GMF_BASE: the bytes after the header. */
#define GMF_BASE 0x7f0000000000ULL
#define GMF_MAX_MEM (256u << 10)
#define GMF_NFLIPS 6

/* flags */
#define GMF_READV 0x01   /* the reader has a readv (pieces still read one by one) */
#define GMF_ENABLE 0x02  /* try gomem_enable (writes when the rate is 0) */
#define GMF_PROFILE 0x04 /* build the profiles (no .gopclntab: frames unnamed) */

/* Variables are offsets from GMF_BASE (0: none, but for mbuckets and the cycle). */
struct gmf_hdr {
	uint8_t go_minor;   /* 19 + go_minor % 9 */
	uint8_t flags;      /* GMF_* */
	uint16_t max;       /* gomem_read's max (0: the default) */
	uint32_t fail_mask; /* read k (k < 32) fails with -EFAULT when bit k is set */
	uint32_t mbuckets, bbuckets, xbuckets, cycle, lock, memrate, blockrate, mutexrate;
	uint32_t ticks;
	uint8_t ticks_val;
	uint8_t pad[3];
	struct fz_flip flip[GMF_NFLIPS];
} __attribute__((packed));

/* ---- building a fake memory ---- */

struct gmf_img {
	uint8_t *mem;   /* cap bytes, the region at GMF_BASE */
	uint32_t len, cap;
	int go_minor;
};

static inline uint32_t gmf_put(struct gmf_img *m, const void *p, uint32_t n)
{
	uint32_t off = (m->len + 7) & ~7u;

	if (off + n > m->cap)
		return 0;
	if (p)
		memcpy(m->mem + off, p, n);
	else
		memset(m->mem + off, 0, n);
	m->len = off + n;
	return off;
}

static inline void gmf_w64(struct gmf_img *m, uint32_t off, uint64_t v)
{
	memcpy(m->mem + off, &v, 8);
}

/* stkbucket's hash (go1.19-go1.27 runtime/mprof.go). */
static inline uint64_t gmf_hash(const uint64_t *stk, uint32_t n, uint64_t size)
{
	uint64_t h = 0;
	uint32_t i;

	for (i = 0; i < n; i++) {
		h += stk[i];
		h += h << 10;
		h ^= h >> 6;
	}
	h += size;
	h += h << 10;
	h ^= h >> 6;
	h += h << 3;
	h ^= h >> 11;
	return h;
}

/* Record words of a kind: heap 16 through go1.26 (active and three futures of four
 * words), 8 from go1.27 (two words each); block and mutex 2 (count float64, cycles). */
static inline uint32_t gmf_rec_words(int go_minor, int kind)
{
	return kind != 1 ? 2 : go_minor >= 27 ? 8 : 16;
}

/* A bucket of kind with its stack and record (rec_words words), linked to allnext (a
 * runtime address, 0: the end). Returns its runtime address, 0 when out of room. */
static inline uint64_t gmf_bucket(struct gmf_img *m, int kind, uint64_t size,
				  const uint64_t *stk, uint32_t n, uint64_t allnext,
				  const uint64_t *rec)
{
	uint32_t words = gmf_rec_words(m->go_minor, kind), off, i;
	uint64_t h[6] = { 0, allnext, (uint64_t)kind, gmf_hash(stk, n, size), size, n };

	off = gmf_put(m, h, sizeof(h));
	if (!off && m->len < sizeof(h))
		return 0;
	for (i = 0; i < n; i++)
		gmf_put(m, &stk[i], 8);
	for (i = 0; i < words; i++)
		gmf_put(m, rec ? &rec[i] : NULL, 8);
	return GMF_BASE + off;
}

/* A heap record from (allocs, frees) per cycle slot (active, future 0..2), bytes = count
 * * size through go1.26 as mProf_Malloc and mProf_Free keep them. */
static inline void gmf_heap_rec(int go_minor, uint64_t size, const uint64_t af[4][2],
				uint64_t *rec)
{
	int k, w = go_minor >= 27 ? 2 : 4;

	for (k = 0; k < 4; k++) {
		rec[k * w] = af[k][0];
		rec[k * w + 1] = af[k][1];
		if (w == 4) {
			rec[k * w + 2] = af[k][0] * size;
			rec[k * w + 3] = af[k][1] * size;
		}
	}
}

#endif
