/* fuzz-gosnap.c: libFuzzer harness for the snapshot of all goroutines (gosnap) over a fake, changing target memory. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakemem.h"
#include "fuzz.h"
#include "goruntime-input.h"
#include "gort-check.h"
#include "gosnap-input.h"
#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"
#include "gotop/gosnap.h"
#include "gotop/mem.h"

/*
 * Input: struct gsf_hdr (fuzz/gosnap-input.h: Go version, where allglen, allgptr, mheap_
 * and waitReasonStrings are, goexit, which reads fail, which bytes change after which
 * read), then an optional .gopclntab, then the memory of the fake process. The reader is
 * gosnap_new_from's: every read the snapshot makes goes through fz_mem_read (fakemem.h), which
 * changes the memory between reads as the flips say, so the list, the g's, stacks and
 * label sets change under the reader as a running program changes them.
 */

static volatile size_t sink;

/* gort_new's caches: see fuzz-goruntime.c (ASan's free stacks cost more than the run). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "malloc_context_size=0";
}

/* A string that reaches the terminal: NUL-terminated, short, printable. */
static void check_text(const char *t, size_t max)
{
	size_t i;

	if (!t)
		abort();
	for (i = 0; t[i]; i++)
		if (i >= max || (unsigned char)t[i] < 0x20 || (unsigned char)t[i] > 0x7e)
			abort();
}

/* What gosnap.h promises about a snapshot. */
static void check(const struct gosnap_result *r, size_t max_g)
{
	struct gosnap_group *gs = NULL;
	size_t i, ng, total = 0;
	uint32_t k;

	if (r->n != r->st.live || r->st.live + r->st.torn + r->st.bad > r->st.listed ||
	    r->st.listed > (max_g ? max_g : GOSNAP_MAX_G) || r->st.cut > r->n ||
	    r->st.repaired > r->n || r->st.unlinked > r->st.torn)
		abort();
	for (i = 0; i < r->n; i++) {
		const struct gosnap_g *g = &r->g[i];

		if (g->state > 11 || g->state == GOSNAP_IDLE || g->state == GOSNAP_DEAD ||
		    g->state == 11 || g->nframes > GOSNAP_MAX_FRAMES)
			abort();
		if ((g->flags & GOSNAP_NO_STACK) && (g->nframes || g->state != GOSNAP_RUNNING))
			abort();
		if (g->wait && g->state != GOSNAP_WAITING)
			abort();
		if (g->wait)
			check_text(g->wait, 64);
		check_text(gosnap_state_text(g), 64);
		if ((g->flags & GOSNAP_LABELS_BAD) && g->labels)
			abort();
		fz_check_labels(g->labels);
		for (k = 0; k < g->nframes; k++) { /* readable (ASan) */
			sink += r->pcs[g->frame0 + k];
			if (r->pcf[g->frame0 + k] & ~GOSNAP_PC_CALLEE_PANICS)
				abort();
		}
		if (g->goid == 1 && !(g->flags & GOSNAP_CREATOR_HIDDEN))
			abort();
	}
	for (k = 0; k < 2; k++) {
		ng = gosnap_group(r, (int)k, &gs);
		total = 0;
		for (i = 0; i < ng; i++) {
			if (gs[i].first >= r->n || !gs[i].count ||
			    (i && gs[i].count > gs[i - 1].count))
				abort();
			total += gs[i].count;
		}
		if (total != r->n)
			abort();
		free(gs);
		gs = NULL;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	struct gsf_hdr h;
	struct fz_mem fk;
	struct gp_mem mem = { fz_mem_read, &fk, NULL };
	struct gosnap_target t = { 0 };
	struct gosnap_result r;
	struct gopcln *pcln = NULL;
	struct gosnap *s;
	const uint8_t *bytes;
	uint8_t *pbuf = NULL;
	size_t len, plen, i, takes;
	int rc, err;

	fz_take(&f, &h, sizeof(h));
	bytes = fz_bytes(&f, h.pcln_len % (GSF_MAX_PCLN + 1), &plen);
	if ((h.flags & GSF_PCLN) && plen) {
		/* An exact-size copy: reads past it are ASan reports. */
		pbuf = malloc(plen);
		if (!pbuf)
			abort();
		memcpy(pbuf, bytes, plen);
		pcln = gopcln_open_buf(pbuf, plen, h.text_start, &err);
	}
	bytes = fz_bytes(&f, GSF_MAX_MEM, &len);
	fz_mem_init(&fk, bytes, len, GSF_BASE, h.flip, GSF_NFLIPS, h.fail_mask);
	if (h.flags & GSF_READV)
		mem.readv = fz_mem_readv;

	t.mem = &mem;
	t.gort = gort_new(grf_versions[h.version % GRF_NVERSIONS], NULL,
			  h.flags & GSF_ARM64 ? GORT_ARCH_ARM64 : GORT_ARCH_AMD64);
	if (t.gort && (h.flags & GSF_MHEAP))
		gort_set_runtime_vars(t.gort, 0,
				      GSF_BASE + h.mheap - gort_offsets(t.gort)->mheap_sweepgen);
	t.pcln = pcln;
	t.bias = h.bias;
	t.allglen = GSF_BASE + h.allglen;
	t.allgptr = GSF_BASE + h.allgptr;
	t.wait_strings = h.wait_strings ? GSF_BASE + h.wait_strings : 0;
	t.nwait = h.nwait;
	t.goexit_lo = h.goexit_lo;
	t.goexit_hi = h.goexit_hi;
	s = gosnap_new_from(&t);
	if (s) {
		takes = 1 + h.takes % GSF_MAX_TAKES;
		for (i = 0; i < takes; i++) {
			rc = gosnap_take(s, h.max_g, &r);
			if (rc > 0)
				abort();
			if (rc == 0)
				check(&r, h.max_g);
		}
		sink += gosnap_bias(s);
		gosnap_free(s);
	}
	gopcln_free(pcln);
	free(pbuf);
	free(fk.mem);
	return 0;
}
