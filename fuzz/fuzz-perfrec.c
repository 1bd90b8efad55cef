/* fuzz-perfrec.c: libFuzzer harness for perf ring records: ring_drain over a fake mmap, then the sample, sample_id and callchain decoders. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gotop/perfrec.h"
#include "gotop/ring.h"

/*
 * Input: a perfrec_layout (sample_type, regs_user_mask, read_format, sample_id_all), the
 * ring's data_tail (data_head is tail + the bytes that follow, like a kernel that wrote
 * them), then the record bytes. The data area is 4 KiB, so a tail near its end makes
 * records wrap and go through ring.c's scratch copy.
 */
#define DATA_SIZE 4096

/* Touches every byte a decoded pointer claims, so ASan checks the lengths. */
static uint64_t use_sample(const struct perf_sample *s)
{
	uint64_t sum = s->ip + s->pid + s->tid + s->time + s->cpu + s->period + s->id;
	uint64_t user[128], kern[128];
	size_t nk = 0, nu, i;

	for (i = 0; s->chain && i < s->nr; i++)
		sum += s->chain[i];
	for (i = 0; s->stack && i < s->stack_size; i++)
		sum += s->stack[i];
	if (s->stack_dyn > s->stack_size)
		abort(); /* perfrec.h: dyn_size counts valid bytes of the copy */
	nu = perfrec_split_chain(s, user, 128, kern, 128, &nk);
	if (nu > 128 || nk > 128)
		abort();
	for (i = 0; i < nu; i++)
		sum += user[i];
	nu = perfrec_split_chain(s, user, 3, NULL, 0, &nk);
	if (nu > 3)
		abort();
	return sum;
}

static void on_record(const struct perf_event_header *h, void *arg)
{
	const struct perfrec_layout *l = arg;
	struct perf_sample s;
	struct perf_sample_id id;
	volatile uint64_t sink;
	size_t body;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (perfrec_parse_sample(l, h, &s) == 0)
			sink = use_sample(&s);
		return;
	}
	/* Fixed fields before the sample_id trailer: every size up to the record's, so each
	 * record type's layout (linux include/uapi/linux/perf_event.h) is among them. */
	for (body = 0; body <= h->size; body += 8)
		if (perfrec_parse_id(l, h, body, &id) == 0)
			sink = id.pid + id.tid + id.time + id.cpu;
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct perfrec_layout l;
	struct ring r;
	uint8_t *map;
	const uint8_t *recs;
	size_t n, i;
	uint64_t tail;

	l.sample_type = fz_u64(&f);
	l.regs_user_mask = fz_u64(&f);
	l.read_format = fz_u64(&f);
	l.sample_id_all = fz_u8(&f) & 1;
	/* data_tail is ours to write, always u64-aligned like every record (linux
	 * kernel/events/ring_buffer.c): a misaligned tail is not a ring state */
	tail = fz_u16(&f) & ~7ULL;
	recs = fz_bytes(&f, DATA_SIZE, &n);

	map = calloc(1, 4096 + DATA_SIZE);
	if (!map)
		return 0;
	ring_init(&r, map, DATA_SIZE);
	for (i = 0; i < n; i++)
		r.data[(tail + i) & (DATA_SIZE - 1)] = recs[i];
	r.meta->data_tail = tail;
	r.meta->data_head = tail + n;
	ring_drain(&r, on_record, &l);
	if (r.meta->data_tail > r.meta->data_head)
		abort();
	ring_fini(&r);
	free(map);
	return 0;
}
