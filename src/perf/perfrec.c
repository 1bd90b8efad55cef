/* perfrec.c: bounds-checked decoding of PERF_RECORD_SAMPLE and the sample_id trailer. */
#include "config.h"
#include "gotop/perfrec.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

/* The fields before the callchain that the sampler asks for (sampler.c fill_attr). */
#define FIXED_FIELDS (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

struct cursor {
	const uint8_t *p, *end;
};

static int take_u64(struct cursor *c, uint64_t *v)
{
	if ((size_t)(c->end - c->p) < 8)
		return -EINVAL;
	memcpy(v, c->p, 8);
	c->p += 8;
	return 0;
}

static int skip(struct cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n)
		return -EINVAL;
	c->p += n;
	return 0;
}

/* PERF_SAMPLE_READ (linux include/uapi/linux/perf_event.h, struct read_format): without
 * PERF_FORMAT_GROUP { value; time_enabled?; time_running?; id?; lost? }, with it
 * { nr; time_enabled?; time_running?; { value; id?; lost? } cntr[nr] }. */
static int parse_read(const struct perfrec_layout *l, struct cursor *c, struct perf_sample *s)
{
	uint64_t f = l->read_format, times = 0, stride = 1, nr;

	times += (f & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0;
	times += (f & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0;
	stride += (f & PERF_FORMAT_ID) != 0;
	stride += (f & PERF_FORMAT_LOST) != 0;
	if (!(f & PERF_FORMAT_GROUP))
		return skip(c, (1 + times + stride - 1) * 8);
	if (take_u64(c, &nr) || skip(c, times * 8))
		return -EINVAL;
	/* The kernel's groups are small; a count past the record is corrupt. */
	if (nr > 64 || nr * stride > (uint64_t)(c->end - c->p) / 8)
		return -EINVAL;
	s->read_nr = nr;
	s->read_vals = (const uint64_t *)c->p;
	s->read_stride = (uint32_t)stride;
	c->p += nr * stride * 8;
	return 0;
}

int perfrec_parse_sample(const struct perfrec_layout *l, const struct perf_event_header *h,
			 struct perf_sample *s)
{
	struct cursor c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	uint64_t t = l->sample_type, v;

	if (h->size < sizeof(*h) || h->type != PERF_RECORD_SAMPLE)
		return -EINVAL;
	/* s->chain points into the record as u64s: the kernel writes records u64-aligned
	 * (linux kernel/events/core.c perf_prepare_sample rounds every variable part up to
	 * u64), so a record that is not comes from a corrupt ring (found by fuzz-perfrec). */
	if (((uintptr_t)h & 7) != 0)
		return -EINVAL;
	memset(s, 0, offsetof(struct perf_sample, regs));
	s->stack = NULL;
	s->stack_size = s->stack_dyn = 0;
	/* Field order: linux include/uapi/linux/perf_event.h, PERF_RECORD_SAMPLE. The
	 * IDENTIFIER comes first (a group whose events sample: sampler.c). */
	if ((t & PERF_SAMPLE_IDENTIFIER) && take_u64(&c, &s->id))
		return -EINVAL;
	t &= ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	if ((t & (PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
		  PERF_SAMPLE_READ)) == 0 &&
	    (t & FIXED_FIELDS) == FIXED_FIELDS) {
		/* What the sampler asks for: the five u64 before the callchain checked once,
		 * not field by field (every sample is parsed twice: by the sampler and by
		 * the aggregator). */
		const uint64_t *w = (const uint64_t *)c.p;

		if ((size_t)(c.end - c.p) < 5 * 8)
			return -EINVAL;
		s->ip = w[0];
		s->pid = (uint32_t)w[1];
		s->tid = (uint32_t)(w[1] >> 32);
		s->time = w[2];
		s->cpu = (uint32_t)w[3];
		s->period = w[4];
		c.p += 5 * 8;
		t &= ~(uint64_t)FIXED_FIELDS;
	}
	if ((t & PERF_SAMPLE_IP) && take_u64(&c, &s->ip))
		return -EINVAL;
	if (t & PERF_SAMPLE_TID) {
		if (take_u64(&c, &v))
			return -EINVAL;
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if ((t & PERF_SAMPLE_TIME) && take_u64(&c, &s->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ADDR) && take_u64(&c, &v))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && take_u64(&c, &s->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && take_u64(&c, &v))
		return -EINVAL;
	if (t & PERF_SAMPLE_CPU) {
		if (take_u64(&c, &v))
			return -EINVAL;
		s->cpu = (uint32_t)v;
	}
	if ((t & PERF_SAMPLE_PERIOD) && take_u64(&c, &s->period))
		return -EINVAL;
	if ((t & PERF_SAMPLE_READ) && parse_read(l, &c, s))
		return -EINVAL;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (take_u64(&c, &s->nr) || s->nr > (uint64_t)(c.end - c.p) / 8)
			return -EINVAL;
		s->chain = (const uint64_t *)c.p;
		c.p += s->nr * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t size;

		if ((size_t)(c.end - c.p) < 4)
			return -EINVAL;
		memcpy(&size, c.p, 4);
		if (skip(&c, 4 + (uint64_t)size))
			return -EINVAL;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		if (take_u64(&c, &v) || v > (uint64_t)(c.end - c.p) / 24 || skip(&c, v * 24))
			return -EINVAL;
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		if (take_u64(&c, &s->regs_abi))
			return -EINVAL;
		if (s->regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
			uint64_t mask = l->regs_user_mask, m;

			/* One u64 per set bit of the mask, lowest register first (linux
			 * kernel/events/core.c perf_output_sample_regs): visit the set bits
			 * only. (A popcount to check the length once is a libgcc call without
			 * -mpopcnt.) */
			s->regs_mask = mask;
			for (m = mask; m; m &= m - 1) {
				if (c.end - c.p < 8)
					return -EINVAL;
				memcpy(&s->regs[__builtin_ctzll(m)], c.p, 8);
				c.p += 8;
			}
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		if (take_u64(&c, &s->stack_size))
			return -EINVAL;
		if (s->stack_size) {
			if (s->stack_size > (uint64_t)(c.end - c.p))
				return -EINVAL;
			s->stack = c.p;
			c.p += s->stack_size;
			if (take_u64(&c, &s->stack_dyn))
				return -EINVAL;
			if (s->stack_dyn > s->stack_size)
				s->stack_dyn = s->stack_size;
		}
	}
	return 0;
}

int perfrec_parse_id(const struct perfrec_layout *l, const struct perf_event_header *h,
		     size_t body_size, struct perf_sample_id *id)
{
	struct cursor c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size };
	uint64_t t = l->sample_type, v;

	memset(id, 0, sizeof(*id));
	if (!l->sample_id_all || h->size < sizeof(*h) || skip(&c, body_size))
		return -EINVAL;
	/* struct sample_id order: TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER. */
	if (t & PERF_SAMPLE_TID) {
		if (take_u64(&c, &v))
			return -EINVAL;
		id->pid = (uint32_t)v;
		id->tid = (uint32_t)(v >> 32);
	}
	if ((t & PERF_SAMPLE_TIME) && take_u64(&c, &id->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && take_u64(&c, &v))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && take_u64(&c, &v))
		return -EINVAL;
	if (t & PERF_SAMPLE_CPU) {
		if (take_u64(&c, &v))
			return -EINVAL;
		id->cpu = (uint32_t)v;
	}
	return 0;
}

size_t perfrec_split_chain(const struct perf_sample *s, uint64_t *out, size_t max,
			   uint64_t *kout, size_t kmax, size_t *nk)
{
	uint64_t ctx = PERF_CONTEXT_USER, i;
	size_t nu = 0, nkk = 0;

	for (i = 0; i < s->nr; i++) {
		uint64_t a = s->chain[i];

		if (a >= PERF_CONTEXT_MAX) {
			ctx = a;
			continue;
		}
		if (ctx == PERF_CONTEXT_USER) {
			if (nu < max)
				out[nu++] = a;
		} else if (ctx == PERF_CONTEXT_KERNEL) {
			if (kout && nkk < kmax)
				kout[nkk++] = a;
		}
	}
	if (nk)
		*nk = nkk;
	return nu;
}
