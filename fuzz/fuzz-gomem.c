/* fuzz-gomem.c: libFuzzer harness for the profile bucket reader (gomem) and the profiles made of it (goprof) over a fake, changing target memory. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "fuzz.h"
#include "gomem-input.h"
#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/mem.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"

/*
 * Input: struct gmf_hdr (fuzz/gomem-input.h: the Go release, where the lists, cycle, lock,
 * rates and ticks are, which reads fail, which bytes change after which read), then the
 * memory of the fake process at GMF_BASE. Every read goes through fz_mem_read (fakemem.h), which
 * changes the memory as the flips say: counts moving between the reader's two reads, a
 * GC cycle, a flush holding the lock, a bucket linked in, a list made garbage. Each kind
 * is read, checked against what gomem.h promises, and with GMF_PROFILE turned into its
 * profile (no .gopclntab: unnamed frames), encoded and decoded again.
 */

static volatile uint64_t sink;

/* What gomem.h promises about a snapshot. */
static void check(const struct gomem_snap *s, int kind, size_t max)
{
	size_t i;

	if (s->kind != kind || s->n != s->st.kept || s->n > max ||
	    s->st.dropped != s->st.torn + s->st.bad || s->st.bad > 1 ||
	    s->n + s->st.bad > s->st.listed || s->st.tries < 1 || s->st.tries > 4)
		abort();
	for (i = 0; i < s->n; i++) {
		const struct gomem_bucket *b = &s->b[i];
		uint32_t k;

		if (b->nstk > GOMEM_MAX_STACK || (uint64_t)b->stk0 + b->nstk > s->npcs)
			abort();
		for (k = 0; k < b->nstk; k++) /* readable (ASan) */
			sink += s->pcs[b->stk0 + k];
		if (kind == GOMEM_HEAP) {
			/* published counts: bytes are count * size, frees never pass allocs */
			if (!b->size || (uint64_t)b->frees > (uint64_t)b->allocs ||
			    (uint64_t)b->alloc_bytes != (uint64_t)b->allocs * b->size ||
			    (uint64_t)b->free_bytes != (uint64_t)b->frees * b->size)
				abort();
		} else if (b->size) {
			abort();
		}
	}
}

/* The profile of a snapshot encodes, and decodes to the same number of sample types. */
static void check_profile(const struct gomem_snap *s, int go_minor)
{
	struct goprof_sym sym = { NULL, 0x1000, go_minor, 0 };
	struct prof *p = s->kind == GOMEM_HEAP ? goprof_heap_profile(&sym, s, NULL)
					       : goprof_contention_profile(&sym, s);
	struct prof *d;
	uint8_t *buf;
	size_t len;

	if (!p || prof_sample_types(p, NULL) != (s->kind == GOMEM_HEAP ? 4u : 2u))
		abort();
	if (pprof_encode(p, &buf, &len))
		abort();
	d = pprof_decode(buf, len);
	if (!d || prof_sample_types(d, NULL) != prof_sample_types(p, NULL))
		abort();
	prof_free(d);
	free(buf);
	prof_free(p);
}

static uint64_t var(uint32_t off)
{
	return off ? GMF_BASE + off : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct gmf_hdr h;
	struct fz_mem fk;
	struct gp_mem mem = { fz_mem_read, &fk, NULL };
	struct gomem_target t = { 0 };
	struct gomem_snap s;
	struct gomem *g;
	const uint8_t *bytes;
	size_t len, max;
	int kind, rc;
	int64_t x;

	fz_take(&f, &h, sizeof(h));
	bytes = fz_bytes(&f, GMF_MAX_MEM, &len);
	fz_mem_init(&fk, bytes, len, GMF_BASE, h.flip, GMF_NFLIPS, h.fail_mask);
	if (h.flags & GMF_READV)
		mem.readv = fz_mem_readv;
	t.mem = &mem;
	t.go_minor = 19 + h.go_minor % 9;
	t.v.mbuckets = GMF_BASE + h.mbuckets;
	t.v.bbuckets = var(h.bbuckets);
	t.v.xbuckets = var(h.xbuckets);
	t.v.mprofcycle = GMF_BASE + h.cycle;
	t.v.active_lock = var(h.lock);
	t.v.memprofilerate = var(h.memrate);
	t.v.blockprofilerate = var(h.blockrate);
	t.v.mutexprofilerate = var(h.mutexrate);
	t.v.ticks = var(h.ticks);
	t.v.ticks_val = h.ticks_val;
	g = gomem_new_from(&t);
	if (!g)
		abort();
	max = h.max ? h.max : GOMEM_MAX_BUCKETS;
	for (kind = GOMEM_HEAP; kind <= GOMEM_MUTEX; kind++) {
		rc = gomem_read(g, kind, h.max, &s);
		if (rc > 0)
			abort();
		if (rc)
			continue;
		check(&s, kind, max);
		if (h.flags & GMF_PROFILE)
			check_profile(&s, t.go_minor);
	}
	if (gomem_ticks(g, 0, &x) == 0 && x <= 0)
		abort();
	if (h.flags & GMF_ENABLE) /* a reader that cannot write: refused, nothing changed */
		if (gomem_enable(g, &x) == 0)
			abort();
	gomem_free(g);
	free(fk.mem);
	return 0;
}
