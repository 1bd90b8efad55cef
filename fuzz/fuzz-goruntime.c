/* fuzz-goruntime.c: libFuzzer harness for the goroutine id and pprof label decoder, fed a fake target memory (mem_fake_new). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "goruntime-input.h"
#include "gort-check.h"
#include "gotop/goruntime.h"
#include "gotop/mem.h"

/*
 * Input: struct grf_hdr (fuzz/goruntime-input.h: Go version, samples as g register and SP
 * offsets, runtime variables, what to change between rounds), then the memory of the fake
 * process. Two rounds of reads go through the same gort, so the thread and label caches
 * see both a hit and, with GRF_FLIP, memory that changed under them.
 */

static volatile size_t sink;

/* gort_reset drops 4096 cache entries with three free() each, and ASan records a stack
 * for every free, even of NULL: without those stacks the harness runs 2.4 times faster.
 * ASAN_OPTIONS=malloc_context_size=30 brings them back for a report. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "malloc_context_size=0";
}

static void check(int rc, const struct gort_result *r)
{
	if (rc > 0)
		abort();
	if (rc == 0)
		fz_check_labels(r->labels);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct grf_hdr h;
	struct mem_region reg;
	struct gp_mem *mem;
	struct gort *g;
	struct gort_sample smp[GRF_NSAMPLES];
	struct gort_result res[GRF_NSAMPLES];
	int rcs[GRF_NSAMPLES];
	const struct gort_offsets *o;
	const uint8_t *bytes;
	uint8_t *heap;
	size_t len, i, n;
	int round;

	fz_take(&f, &h, sizeof(h));
	bytes = fz_bytes(&f, GRF_MAX_MEM, &len);
	g = gort_new(grf_versions[h.version % GRF_NVERSIONS], NULL,
		     h.flags & GRF_ARM64 ? GORT_ARCH_ARM64 : GORT_ARCH_AMD64);
	if (!g)
		return 0;
	o = gort_offsets(g);
	/* A writable exact-size copy: reads past it are ASan reports. */
	heap = malloc(len ? len : 1);
	if (!heap)
		abort();
	if (len)
		memcpy(heap, bytes, len);
	reg = (struct mem_region){ GRF_BASE, heap, len };
	mem = mem_fake_new(&reg, 1);
	if (h.flags & GRF_VARS)
		gort_set_runtime_vars(g, h.allm ? GRF_BASE + h.allm : 0,
				      h.mheap ? GRF_BASE + h.mheap - o->mheap_sweepgen : 0);
	if (h.flags & GRF_STATIC)
		gort_add_static_range(g, GRF_BASE + len / 2, GRF_BASE + len);
	n = h.nsamples % (GRF_NSAMPLES + 1);
	for (i = 0; i < n; i++)
		smp[i] = (struct gort_sample){ h.s[i].tid, GRF_BASE + h.s[i].g,
					       h.s[i].sp ? GRF_BASE + h.s[i].sp : 0, NULL };
	for (round = 0; round < 2; round++) {
		for (i = 0; i < n; i++) {
			memset(&res[i], 0, sizeof(res[i]));
			check(gort_read(g, mem, smp[i].tid, smp[i].greg, smp[i].sp, &res[i]), &res[i]);
		}
		if (h.flags & GRF_BATCH) {
			gort_read_batch(g, mem, smp, n, res, rcs);
			for (i = 0; i < n; i++)
				check(rcs[i], &res[i]);
		}
		if ((h.flags & GRF_FLIP) && len)
			heap[h.flip_off % len] ^= h.flip_xor ? h.flip_xor : 1;
		if (h.flags & GRF_RESET)
			gort_reset(g);
	}
	struct gort_stats st;
	gort_get_stats(g, &st);
	sink += st.reads;
	gort_free(g);
	mem_fake_free(mem);
	free(heap);
	return 0;
}
