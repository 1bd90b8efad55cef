/* test-perfrec.c: unit tests for PERF_RECORD_SAMPLE decoding, truncation and chain splitting. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/perfrec.h"

struct builder {
	uint64_t w[512];
	size_t n;
};

static void add(struct builder *b, uint64_t v)
{
	b->w[b->n++] = v;
}

static const uint64_t REGMASK = (1ULL << 6) | (1ULL << 7) | (1ULL << 8) | (1ULL << 22);

/* A sample as the kernel lays it out for the sampler's sample_type (linux
 * include/uapi/linux/perf_event.h): ip, pid/tid, time, cpu, period, callchain,
 * regs_user, stack_user. */
static struct perf_event_header *build(struct builder *b, size_t stack_bytes)
{
	struct perf_event_header *h = (void *)b->w;
	size_t i;

	b->n = 1;
	add(b, 0x401000);                       /* ip */
	add(b, (uint64_t)1234 | (uint64_t)1240 << 32); /* pid, tid */
	add(b, 999999);                         /* time */
	add(b, 1);                              /* cpu */
	add(b, 1000000);                        /* period */
	add(b, 6);                              /* nr */
	add(b, PERF_CONTEXT_KERNEL);
	add(b, 0xffffffff81000010ULL);
	add(b, 0xffffffff81000020ULL);
	add(b, PERF_CONTEXT_USER);
	add(b, 0x401000);
	add(b, 0x402000);
	add(b, PERF_SAMPLE_REGS_ABI_64);
	add(b, 0x7ffc0000); /* bp  (6) */
	add(b, 0x7ffb0000); /* sp  (7) */
	add(b, 0x401000);   /* ip  (8) */
	add(b, 0xc000001);  /* r14 (22) */
	add(b, stack_bytes);
	for (i = 0; i < stack_bytes / 8; i++)
		add(b, 0xabc0 + i);
	if (stack_bytes)
		add(b, stack_bytes / 2); /* dyn_size */
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(b->n * 8);
	return h;
}

static const struct perfrec_layout layout = {
	PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
	REGMASK, 0, 1,
};

static void test_parse(void **state)
{
	struct builder b;
	struct perf_sample s;
	struct perf_event_header *h = build(&b, 64);
	uint64_t user[8], kern[8];
	size_t nk, nu;

	assert_int_equal(perfrec_parse_sample(&layout, h, &s), 0);
	assert_int_equal(s.ip, 0x401000);
	assert_int_equal(s.pid, 1234);
	assert_int_equal(s.tid, 1240);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.period, 1000000);
	assert_int_equal(s.nr, 6);
	assert_int_equal(s.regs[6], 0x7ffc0000);
	assert_int_equal(s.regs[7], 0x7ffb0000);
	assert_int_equal(s.regs[22], 0xc000001);
	assert_int_equal(s.stack_size, 64);
	assert_int_equal(s.stack_dyn, 32);
	assert_int_equal(((const uint64_t *)s.stack)[1], 0xabc1);
	nu = perfrec_split_chain(&s, user, 8, kern, 8, &nk);
	assert_int_equal(nu, 2);
	assert_int_equal(nk, 2);
	assert_int_equal(user[1], 0x402000);
	assert_int_equal(kern[0], 0xffffffff81000010ULL);
}

static void test_truncated(void **state)
{
	struct builder b;
	struct perf_sample s;
	struct perf_event_header *h = build(&b, 64);
	uint16_t full = h->size, size;

	/* Every shorter record is rejected, none is read past its end. */
	for (size = sizeof(*h); size < full; size += 8) {
		h->size = size;
		assert_int_equal(perfrec_parse_sample(&layout, h, &s), -EINVAL);
	}
	h->size = full;
	/* A callchain length larger than the record. */
	b.w[6] = 1000;
	assert_int_equal(perfrec_parse_sample(&layout, h, &s), -EINVAL);
	b.w[6] = 6;
	/* A stack size larger than the record. */
	b.w[18] = 4096;
	assert_int_equal(perfrec_parse_sample(&layout, h, &s), -EINVAL);
}

static void test_no_user_regs(void **state)
{
	struct builder b;
	struct perf_sample s;
	struct perf_event_header *h = (void *)b.w;

	/* A kernel thread sample: abi NONE, no regs, stack size 0 (no dyn_size). */
	b.n = 1;
	add(&b, 0xffffffff81000010ULL);
	add(&b, 7 | (uint64_t)7 << 32);
	add(&b, 1);
	add(&b, 0);
	add(&b, 1);
	add(&b, 2);
	add(&b, PERF_CONTEXT_KERNEL);
	add(&b, 0xffffffff81000010ULL);
	add(&b, PERF_SAMPLE_REGS_ABI_NONE);
	add(&b, 0);
	h->type = PERF_RECORD_SAMPLE;
	h->size = (uint16_t)(b.n * 8);
	assert_int_equal(perfrec_parse_sample(&layout, h, &s), 0);
	assert_int_equal(s.regs_abi, 0);
	assert_int_equal(s.stack_size, 0);
	assert_null(s.stack);
}

static void test_sample_id(void **state)
{
	uint64_t w[8];
	struct perf_event_header *h = (void *)w;
	struct perf_sample_id id;

	/* PERF_RECORD_EXIT: pid, ppid, tid, ptid (u32 each), time, then sample_id. */
	h->type = PERF_RECORD_EXIT;
	h->size = 8 + 16 + 8 + 24;
	w[1] = 0;
	w[2] = 0;
	w[3] = 5;
	w[4] = (uint64_t)10 | (uint64_t)11 << 32; /* TID */
	w[5] = 777;                               /* TIME */
	w[6] = 1;                                 /* CPU */
	assert_int_equal(perfrec_parse_id(&layout, h, 24, &id), 0);
	assert_int_equal(id.pid, 10);
	assert_int_equal(id.tid, 11);
	assert_int_equal(id.time, 777);
	assert_int_equal(id.cpu, 1);
	assert_int_equal(perfrec_parse_id(&layout, h, 40, &id), -EINVAL);
}

/* PERF_SAMPLE_READ with PERF_FORMAT_GROUP (and the times and ids, to check the stride):
 * after the period, { nr; time_enabled; time_running; { value; id; } cntr[nr] }
 * (linux include/uapi/linux/perf_event.h, struct read_format), then the callchain. */
static void test_group_read(void **state)
{
	static const struct perfrec_layout gl = {
		PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN,
		0, PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID, 1,
	};
	struct builder b;
	struct perf_event_header *h = (void *)b.w;
	struct perf_sample s;

	b.n = 1;
	add(&b, 0x401000);
	add(&b, (uint64_t)7 | (uint64_t)8 << 32);
	add(&b, 5);
	add(&b, 1);
	add(&b, 1000);
	add(&b, 3);         /* nr */
	add(&b, 111);       /* time_enabled */
	add(&b, 222);       /* time_running */
	add(&b, 5000);      /* leader value, id */
	add(&b, 41);
	add(&b, 17);        /* member 1 */
	add(&b, 42);
	add(&b, 3);         /* member 2 */
	add(&b, 43);
	add(&b, 2);         /* callchain */
	add(&b, PERF_CONTEXT_USER);
	add(&b, 0x401000);
	h->type = PERF_RECORD_SAMPLE;
	h->misc = PERF_RECORD_MISC_USER;
	h->size = (uint16_t)(b.n * 8);
	assert_int_equal(perfrec_parse_sample(&gl, h, &s), 0);
	assert_int_equal(s.read_nr, 3);
	assert_int_equal(s.read_stride, 2);
	assert_int_equal(s.read_vals[0], 5000);
	assert_int_equal(s.read_vals[1 * s.read_stride], 17);
	assert_int_equal(s.read_vals[2 * s.read_stride], 3);
	assert_int_equal(s.nr, 2);
	assert_int_equal(s.chain[1], 0x401000);
	/* A count past the record is corrupt. */
	b.w[6] = 30;
	assert_int_equal(perfrec_parse_sample(&gl, h, &s), -EINVAL);
	/* Without PERF_SAMPLE_READ nothing is read. */
	assert_int_equal(perfrec_parse_sample(&layout, build(&b, 0), &s), 0);
	assert_int_equal(s.read_nr, 0);
}

/* A group whose events sample (sampler.c): PERF_SAMPLE_IDENTIFIER is the record's first
 * u64, before the fields the sampler always asks for (include/uapi/linux/perf_event.h). */
static void test_identifier(void **state)
{
	struct perfrec_layout il = layout;
	struct builder b, c;
	struct perf_sample s, t;
	struct perf_event_header *h, *plain = build(&c, 64);

	il.sample_type |= PERF_SAMPLE_IDENTIFIER;
	build(&b, 64);
	memmove(&b.w[2], &b.w[1], (b.n - 1) * 8);
	b.w[1] = 2; /* the sampler's index of the event that took it */
	b.n++;
	h = (void *)b.w;
	h->size = (uint16_t)(b.n * 8);
	assert_int_equal(perfrec_parse_sample(&il, h, &s), 0);
	assert_int_equal(s.id, 2);
	/* Everything after it as without it. */
	assert_int_equal(perfrec_parse_sample(&layout, plain, &t), 0);
	assert_int_equal(s.ip, t.ip);
	assert_int_equal(s.tid, t.tid);
	assert_int_equal(s.time, t.time);
	assert_int_equal(s.period, t.period);
	assert_int_equal(s.nr, t.nr);
	assert_int_equal(s.regs[7], t.regs[7]);
	assert_int_equal(s.stack_dyn, t.stack_dyn);
	assert_memory_equal(s.stack, t.stack, 64);
	/* Only the id: too short. */
	h->size = 16;
	assert_int_equal(perfrec_parse_sample(&il, h, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_no_user_regs),
		cmocka_unit_test(test_sample_id),
		cmocka_unit_test(test_group_read),
		cmocka_unit_test(test_identifier),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
