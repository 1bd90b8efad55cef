/* seed-gomem.c: writes fuzz-gomem's seeds: fake Go processes with heap, block and mutex buckets in each release's layout (see fuzz/README.md). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gomem-input.h"

/*
 * Usage: seed-gomem DIR. Each seed is a struct gmf_hdr and one memory: the runtime's
 * variables at the start (mbuckets 0x00, bbuckets 0x08, xbuckets 0x10, mProfCycle 0x18,
 * profMemActiveLock 0x20, MemProfileRate 0x28, blockprofilerate 0x30, mutexprofilerate
 * 0x38, ticks 0x40 with val at +24), then four heap buckets (one with three stack words
 * and counts in every cycle slot, one whose counts are all pending, a deep one, a large
 * object), two block buckets and one mutex bucket. The seeds: go1.19, 1.23 and 1.27 as they
 * are; go1.23 with no cycle published yet; go1.27 with a count moving between the two
 * reads, a GC cycle during the read and the flush lock held; go1.22 whose heap list loops;
 * go1.24 with a garbage depth.
 */

static uint8_t image[8192];

static void seed(const char *dir, const char *name, struct gmf_hdr *h, struct gmf_img *m)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(h, sizeof(*h), 1, f) != 1 || fwrite(m->mem, 1, m->len, f) != m->len) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* The memory of one release; returns the heap head's offset. */
static uint32_t build(struct gmf_img *m, int go_minor, int all_pending)
{
	const uint64_t stk[40] = { 0x401234, 0x402345, 0x403456, 0x404567, 0x405678 };
	uint64_t af[4][2], rec[16], b = 0, c;
	double count = 2.5;
	int i;

	memset(image, 0, sizeof(image));
	m->mem = image;
	m->cap = sizeof(image);
	m->len = 0;
	m->go_minor = go_minor;
	gmf_put(m, NULL, 0x80);
	for (i = 0; i < 4; i++) {
		uint64_t base = all_pending ? 0 : 10 * (uint64_t)(i + 1);

		af[0][0] = base;
		af[0][1] = base / 2;
		af[1][0] = 3;
		af[1][1] = 1;
		af[2][0] = 4;
		af[2][1] = 0;
		af[3][0] = all_pending ? 5 : 0;
		af[3][1] = 0;
		gmf_heap_rec(go_minor, i == 3 ? 1 << 20 : 64 << i, af, rec);
		b = gmf_bucket(m, 1, i == 3 ? 1 << 20 : 64 << i, stk + i, i == 2 ? 30 : 3, b, rec);
	}
	gmf_w64(m, 0x00, b);
	b = 0;
	for (i = 0; i < 2; i++) {
		memcpy(&rec[0], &count, 8);
		rec[1] = 123456789 * (uint64_t)(i + 1);
		b = gmf_bucket(m, 2, 0, stk + i, 4, b, rec);
	}
	gmf_w64(m, 0x08, b);
	rec[1] = 987654321;
	c = gmf_bucket(m, 3, 0, stk + 1, 2, 0, rec);
	gmf_w64(m, 0x10, c);
	gmf_w64(m, 0x18, 7 << 1);
	gmf_w64(m, 0x28, 524288);
	gmf_w64(m, 0x30, 1);
	gmf_w64(m, 0x38, 5);
	gmf_w64(m, 0x40 + 24, 2400000000ULL);
	return (uint32_t)(b - GMF_BASE);
}

static void header(struct gmf_hdr *h, int go_minor)
{
	memset(h, 0, sizeof(*h));
	h->go_minor = (uint8_t)(go_minor - 19);
	h->flags = GMF_PROFILE | GMF_READV | GMF_ENABLE;
	h->mbuckets = 0x00;
	h->bbuckets = 0x08;
	h->xbuckets = 0x10;
	h->cycle = 0x18;
	h->lock = 0x20;
	h->memrate = 0x28;
	h->blockrate = 0x30;
	h->mutexrate = 0x38;
	h->ticks = 0x40;
	h->ticks_val = 24;
}

int main(int argc, char **argv)
{
	static const int versions[] = { 19, 23, 27 };
	struct gmf_img m;
	struct gmf_hdr h;
	uint64_t head;
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-gomem DIR\n");
		return 2;
	}
	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		char name[64];

		build(&m, versions[i], 0);
		header(&h, versions[i]);
		snprintf(name, sizeof(name), "layout-1.%d", versions[i]);
		seed(argv[1], name, &h, &m);
	}
	build(&m, 23, 1);
	header(&h, 23);
	seed(argv[1], "all-pending-1.23", &h, &m);

	/* go1.27: a count moving, a GC cycle, the flush lock, at the reads that follow */
	build(&m, 27, 0);
	header(&h, 27);
	memcpy(&head, m.mem, 8);
	h.flip[0] = (struct fz_flip){ 3, 0x01, 0, (uint32_t)(head - GMF_BASE) + 48 + 3 * 8 };
	h.flip[1] = (struct fz_flip){ 40, 0x02, 0, 0x18 };
	h.flip[2] = (struct fz_flip){ 80, 0x01, 0, 0x20 };
	seed(argv[1], "changing-1.27", &h, &m);

	/* go1.22: the heap list loops back to its head */
	build(&m, 22, 0);
	header(&h, 22);
	memcpy(&head, m.mem, 8);
	{
		uint64_t b = head, next;

		for (;;) { /* the last bucket's allnext to the head */
			memcpy(&next, m.mem + (b - GMF_BASE) + 8, 8);
			if (!next)
				break;
			b = next;
		}
		gmf_w64(&m, (uint32_t)(b - GMF_BASE) + 8, head);
	}
	seed(argv[1], "loop-1.22", &h, &m);

	/* go1.24: a garbage depth in the second heap bucket */
	build(&m, 24, 0);
	header(&h, 24);
	memcpy(&head, m.mem, 8);
	{
		uint64_t next;

		memcpy(&next, m.mem + (head - GMF_BASE) + 8, 8);
		gmf_w64(&m, (uint32_t)(next - GMF_BASE) + 40, 1u << 30);
	}
	seed(argv[1], "depth-1.24", &h, &m);
	return 0;
}
