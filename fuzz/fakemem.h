/* fakemem.h: the memory of a fake process for the harnesses of readers of a live target
 * (gosnap, gomem): one region of the input's bytes at a base address, which changes
 * between reads as the input's flips say (a goroutine that runs, a count that moves, a
 * list that grows while it is read), and whose first reads fail as its fail mask says. */
#ifndef GOTOP_FUZZ_FAKEMEM_H
#define GOTOP_FUZZ_FAKEMEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/mem.h"

/* Before read number `after` (0 = the first), byte `off` (mod the memory's size) is
 * xor'ed with xor (0: no change). Part of the inputs' layout: packed, little endian. */
struct fz_flip {
	uint16_t after;
	uint8_t xor;
	uint8_t pad;
	uint32_t off;
} __attribute__((packed));

struct fz_mem {
	uint8_t *mem;
	size_t len;
	uint64_t base;
	unsigned nreads;
	const struct fz_flip *flip;
	size_t nflips;
	uint32_t fail_mask; /* read k (k < 32) fails with -EFAULT when bit k is set */
};

/* m holds a copy of the len input bytes at base (a copy of its own: the flips change it). */
static inline void fz_mem_init(struct fz_mem *m, const uint8_t *bytes, size_t len, uint64_t base,
			       const struct fz_flip *flip, size_t nflips, uint32_t fail_mask)
{
	memset(m, 0, sizeof(*m));
	m->mem = malloc(len ? len : 1);
	if (!m->mem)
		abort();
	if (len)
		memcpy(m->mem, bytes, len);
	m->len = len;
	m->base = base;
	m->flip = flip;
	m->nflips = nflips;
	m->fail_mask = fail_mask;
}

/* A gp_mem read function (ctx: a struct fz_mem). */
static inline int fz_mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fz_mem *m = ctx;
	unsigned k = m->nreads++;
	uint64_t off = addr - m->base;
	size_t i;

	for (i = 0; i < m->nflips && m->len; i++)
		if (m->flip[i].xor && m->flip[i].after == k)
			m->mem[m->flip[i].off % m->len] ^= m->flip[i].xor;
	if ((k < 32 && (m->fail_mask >> k & 1)) || addr < m->base || off > m->len ||
	    len > m->len - off) {
		/* mem.h: a failed read leaves buf undefined; make it garbage, not zeros */
		if (len)
			memset(buf, 0xa5, len);
		return -EFAULT;
	}
	if (len)
		memcpy(buf, m->mem + off, len);
	return 0;
}

/* Its vectored form: each piece one read, as the kernel's process_vm_readv is not. */
static inline void fz_mem_readv(void *ctx, struct mem_iov *iov, size_t n)
{
	for (size_t i = 0; i < n; i++)
		iov[i].rc = fz_mem_read(ctx, iov[i].addr, iov[i].buf, iov[i].len);
}

#endif
