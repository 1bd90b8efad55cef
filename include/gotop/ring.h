/* ring.h: reading records from a perf_event mmap ring buffer with correct memory ordering. */
#ifndef GOTOP_RING_H
#define GOTOP_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

/* A ring: the mmapped control page followed by data_size bytes (a power of two). */
struct ring {
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t data_size;
	uint8_t *scratch; /* for records that wrap; UINT16_MAX + 1 bytes */
	uint64_t bad;     /* corrupt headers seen (the rest of the ring was skipped) */
};

/* Sets up r over an mmap of 1 + 2^n pages at base. Allocates the scratch buffer. */
void ring_init(struct ring *r, void *base, size_t data_size);
void ring_fini(struct ring *r);

/* Called once per record; the record is contiguous (copied to scratch when it
 * wrapped) and valid only during the call. */
typedef void (*ring_cb)(const struct perf_event_header *h, void *arg);

/* Delivers every complete record between data_tail and data_head, then releases
 * the space to the kernel. Returns the number of records delivered. A header with
 * an impossible size makes it skip to head and count r->bad. */
long ring_drain(struct ring *r, ring_cb cb, void *arg);

/* Bytes waiting to be read. */
uint64_t ring_pending(const struct ring *r);

#endif
