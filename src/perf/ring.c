/* ring.c: perf ring buffer reader (acquire on data_head, release on data_tail, wrap copies). */
#include "config.h"
#include "gotop/ring.h"
#include "gotop/util.h"

#include <stdlib.h>
#include <string.h>

#define RING_SCRATCH (UINT16_MAX + 1)

void ring_init(struct ring *r, void *base, size_t data_size)
{
	memset(r, 0, sizeof(*r));
	r->meta = base;
	/* The data area starts one page after the control page, or at data_offset
	 * when the kernel reports it (linux include/uapi/linux/perf_event.h). */
	r->data = (uint8_t *)base + (r->meta->data_offset ? r->meta->data_offset : 4096);
	r->data_size = r->meta->data_size ? r->meta->data_size : data_size;
	r->scratch = xmalloc(RING_SCRATCH);
}

void ring_fini(struct ring *r)
{
	free(r->scratch);
	r->scratch = NULL;
}

uint64_t ring_pending(const struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);

	return head - r->meta->data_tail;
}

long ring_drain(struct ring *r, ring_cb cb, void *arg)
{
	/* The kernel writes records, then publishes data_head (smp_store_release);
	 * we read head with acquire, read the records, then publish data_tail with
	 * release so the kernel does not overwrite what we still read (linux
	 * tools/lib/perf/mmap.c, perf_mmap__read_head/write_tail). */
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	uint64_t mask = r->data_size - 1;
	long n = 0;

	while (tail < head) {
		struct perf_event_header hdr;
		uint64_t off = tail & mask;
		const struct perf_event_header *rec;

		if (head - tail < sizeof(hdr))
			break;
		/* The header itself may wrap (records are 8-byte aligned, so it
		 * does not in practice, but do not rely on the writer). */
		if (off + sizeof(hdr) <= r->data_size) {
			memcpy(&hdr, r->data + off, sizeof(hdr));
		} else {
			size_t first = r->data_size - off;

			memcpy(&hdr, r->data + off, first);
			memcpy((uint8_t *)&hdr + first, r->data, sizeof(hdr) - first);
		}
		/* The kernel writes records u64-aligned (linux kernel/events/core.c
		 * perf_prepare_sample): a size that is not would misalign every later one. */
		if (hdr.size < sizeof(hdr) || (hdr.size & 7) || hdr.size > head - tail ||
		    hdr.size > r->data_size) {
			r->bad++;
			tail = head;
			break;
		}
		if (off + hdr.size <= r->data_size) {
			rec = (const struct perf_event_header *)(r->data + off);
		} else {
			size_t first = r->data_size - off;

			memcpy(r->scratch, r->data + off, first);
			memcpy(r->scratch + first, r->data, hdr.size - first);
			rec = (const struct perf_event_header *)r->scratch;
		}
		cb(rec, arg);
		n++;
		tail += hdr.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}
