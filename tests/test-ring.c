/* test-ring.c: unit tests for the perf ring reader over a fake mmap page, wrapping included. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/ring.h"

#define DATA 4096

struct fake {
	struct perf_event_mmap_page *meta;
	uint8_t *base;
	struct ring r;
};

static void fake_init(struct fake *f)
{
	f->base = aligned_alloc(4096, 4096 + DATA);
	memset(f->base, 0, 4096 + DATA);
	f->meta = (void *)f->base;
	f->meta->data_offset = 4096;
	f->meta->data_size = DATA;
	ring_init(&f->r, f->base, DATA);
}

static void fake_fini(struct fake *f)
{
	ring_fini(&f->r);
	free(f->base);
}

/* Writes a record of `size` bytes whose payload bytes are `fill`, as the kernel would
 * (wrapping at the end of the data area), and publishes the new head. */
static void put(struct fake *f, uint32_t type, uint16_t size, uint8_t fill)
{
	uint8_t rec[1024];
	struct perf_event_header h = { type, 0, size };
	uint64_t head = f->meta->data_head, i;

	memset(rec, fill, size);
	memcpy(rec, &h, sizeof(h));
	for (i = 0; i < size; i++)
		f->base[4096 + ((head + i) % DATA)] = rec[i];
	__atomic_store_n(&f->meta->data_head, head + size, __ATOMIC_RELEASE);
}

struct seen {
	int n;
	uint32_t types[64];
	uint16_t sizes[64];
	int payload_ok;
};

static void collect(const struct perf_event_header *h, void *arg)
{
	struct seen *s = arg;
	const uint8_t *p = (const uint8_t *)h;
	uint16_t i;

	s->types[s->n] = h->type;
	s->sizes[s->n] = h->size;
	for (i = sizeof(*h); i < h->size; i++)
		if (p[i] != (uint8_t)h->type)
			s->payload_ok = 0;
	s->n++;
}

static void test_simple(void **state)
{
	struct fake f;
	struct seen s = { .payload_ok = 1 };

	fake_init(&f);
	put(&f, 9, 64, 9);
	put(&f, 2, 40, 2);
	assert_int_equal(ring_pending(&f.r), 104);
	assert_int_equal(ring_drain(&f.r, collect, &s), 2);
	assert_int_equal(s.types[0], 9);
	assert_int_equal(s.sizes[1], 40);
	assert_true(s.payload_ok);
	assert_int_equal(f.meta->data_tail, 104);
	assert_int_equal(ring_pending(&f.r), 0);
	assert_int_equal(ring_drain(&f.r, collect, &s), 0);
	fake_fini(&f);
}

static void test_wrap(void **state)
{
	struct fake f;
	struct seen s = { .payload_ok = 1 };
	int i, total = 0;

	fake_init(&f);
	/* Many rounds of records whose sizes do not divide the ring: some wrap. */
	for (i = 0; i < 200; i++) {
		int k;

		s.n = 0;
		for (k = 0; k < 5; k++)
			put(&f, (uint32_t)(10 + k), (uint16_t)(8 * (3 + (i + k) % 50)), (uint8_t)(10 + k));
		assert_int_equal(ring_drain(&f.r, collect, &s), 5);
		for (k = 0; k < 5; k++) {
			assert_int_equal(s.types[k], 10 + k);
			assert_int_equal(s.sizes[k], 8 * (3 + (i + k) % 50));
		}
		total += 5;
	}
	assert_true(s.payload_ok);
	assert_true(f.meta->data_tail > 100 * DATA / 64); /* went around many times */
	assert_int_equal(f.r.bad, 0);
	(void)total;
	fake_fini(&f);
}

static void test_partial_and_corrupt(void **state)
{
	struct fake f;
	struct seen s = { .payload_ok = 1 };
	struct perf_event_header h = { 9, 0, 4 }; /* size < header: impossible */

	fake_init(&f);
	put(&f, 9, 64, 9);
	assert_int_equal(ring_drain(&f.r, collect, &s), 1);
	/* The kernel publishes whole records only: a header whose size is below the
	 * header's own is corruption, skipped and counted, and the reader goes on. */
	memcpy(f.base + 4096 + (f.meta->data_head % DATA), &h, sizeof(h));
	f.meta->data_head += 16;
	assert_int_equal(ring_drain(&f.r, collect, &s), 0);
	assert_int_equal(f.r.bad, 1);
	assert_int_equal(f.meta->data_tail, f.meta->data_head); /* skipped, not stuck */
	put(&f, 9, 24, 9);
	assert_int_equal(ring_drain(&f.r, collect, &s), 1);
	/* A size larger than what was published is corrupt too. */
	h.size = 512;
	memcpy(f.base + 4096 + (f.meta->data_head % DATA), &h, sizeof(h));
	f.meta->data_head += 16;
	assert_int_equal(ring_drain(&f.r, collect, &s), 0);
	assert_int_equal(f.r.bad, 2);
	fake_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple),
		cmocka_unit_test(test_wrap),
		cmocka_unit_test(test_partial_and_corrupt),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
