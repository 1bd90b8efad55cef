/* goruntime-lcache.c: the label cache, by the address in g.labels. A label set never
 * changes once made (runtime/pprof builds a new one for every change), so an address
 * holds one set until the GC frees it: an entry stands while no GC cycle ended since it
 * was proved (mheap_.sweepgen), or while the set's fingerprint and heap strings still
 * read the same. */
#include "config.h"
#include "goruntime-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Heap strings of a cached set closer than CHUNK_GAP are read together, CHUNK_MAX bytes
 * at most. */
#define CHUNK_MAX 4096
#define CHUNK_GAP 512

void gort_lc_drop(struct gort *g, struct lc_entry *e)
{
	g->lc_tag[e - g->lc] = 0;
	free(e->fp);
	free(e->heap);
	free(e->chunks);
	memset(e, 0, sizeof(*e));
}

static struct lc_entry *lc_find(struct gort *g, uint64_t ptr)
{
	size_t base = (util_mix64(ptr) & (g->lc_sets - 1)) * LC_WAYS;
	const uint64_t *tag = &g->lc_tag[base];
	int i;

	for (i = 0; i < LC_WAYS; i++)
		if (tag[i] == ptr)
			return &g->lc[base + i];
	return NULL;
}

static size_t ghost_slot(const struct gort *g, uint64_t ptr)
{
	return (util_mix64(ptr) >> 20) & (g->lc_sets * LC_WAYS - 1);
}

/* Doubles the cache, every entry kept: the entries of a set go to the set of the same
 * index or to the one half the new size above it, which no other set sends entries to. */
static void lc_grow(struct gort *g)
{
	size_t sets = g->lc_sets * 2, i;
	struct lc_entry *lc = xcalloc(sets * LC_WAYS, sizeof(*lc));
	uint64_t *tag = xcalloc(sets * LC_WAYS, sizeof(*tag));

	free(g->lc_ghost);
	g->lc_ghost = xcalloc(sets * LC_WAYS, sizeof(*g->lc_ghost));
	g->lc_ghost_hits = 0;
	for (i = 0; i < g->lc_sets * LC_WAYS; i++) {
		size_t base, j;

		if (!g->lc_tag[i])
			continue;
		base = (util_mix64(g->lc_tag[i]) & (sets - 1)) * LC_WAYS;
		for (j = base; tag[j]; j++)
			;
		tag[j] = g->lc_tag[i];
		lc[j] = g->lc[i];
	}
	free(g->lc);
	free(g->lc_tag);
	g->lc = lc;
	g->lc_tag = tag;
	g->lc_sets = sets;
}

static struct lc_entry *lc_victim(struct gort *g, uint64_t ptr)
{
	size_t base = (util_mix64(ptr) & (g->lc_sets - 1)) * LC_WAYS;
	struct lc_entry *set = &g->lc[base], *v = &set[0];
	int i;

	for (i = 0; i < LC_WAYS; i++) {
		if (!g->lc_tag[base + i])
			return &set[i];
		if (set[i].used < v->used)
			v = &set[i];
	}
	g->lc_ghost[ghost_slot(g, g->lc_tag[v - g->lc])] = g->lc_tag[v - g->lc];
	gort_lc_drop(g, v);
	return v;
}

/* Sorts the entry's heap strings by address and groups neighbours into chunks. */
static void heap_chunks(struct lc_entry *e)
{
	uint32_t i, j;

	for (i = 1; i < e->nheap; i++) {
		struct heap_str t = e->heap[i];

		for (j = i; j > 0 && e->heap[j - 1].addr > t.addr; j--)
			e->heap[j] = e->heap[j - 1];
		e->heap[j] = t;
	}
	e->chunks = xcalloc(e->nheap ? e->nheap : 1, sizeof(*e->chunks));
	for (i = 0; i < e->nheap; i++) {
		struct heap_str *h = &e->heap[i];
		struct chunk *c = e->nchunk ? &e->chunks[e->nchunk - 1] : NULL;

		if (c && h->addr <= c->addr + c->len + CHUNK_GAP &&
		    h->addr + h->len - c->addr <= CHUNK_MAX) {
			c->len = (uint32_t)GP_MAX(c->len, h->addr + h->len - c->addr);
		} else {
			c = &e->chunks[e->nchunk++];
			c->addr = h->addr;
			c->len = h->len;
		}
		h->chunk = e->nchunk - 1;
	}
}

/* Enters the set just decoded from labels object ptr (set, its first nkeep pairs still in
 * the draft; fingerprint fp of fplen bytes), proved as of sweep generation sweepgen when
 * epoch. */
void gort_lc_put(struct gort *g, uint64_t ptr, bool epoch, uint32_t sweepgen, const uint8_t *fp,
		 uint32_t fplen, const struct gort_labels *set, uint32_t nkeep)
{
	uint64_t *ghost = &g->lc_ghost[ghost_slot(g, ptr)];
	struct lc_entry *e;

	if (*ghost == ptr) {
		*ghost = 0;
		if (++g->lc_ghost_hits >= g->lc_sets * LC_WAYS / 16 && g->lc_sets < LC_SETS_MAX)
			lc_grow(g);
	}
	e = lc_victim(g, ptr);

	g->lc_tag[e - g->lc] = ptr;
	e->used = ++g->lc_clock;
	e->set = set;
	e->epoch_ok = epoch;
	e->sweepgen = sweepgen;
	e->checked_gen = g->pf_mode != PF_OFF ? g->pf_gen : 0;
	e->fplen = fplen;
	e->fp = xmalloc(fplen);
	memcpy(e->fp, fp, fplen);
	/* A slice's strings are not covered by its fingerprint: heap strings may be freed
	 * and reused at the same address. A map's hash0 identifies the map, which keeps its
	 * strings alive. */
	if (g->off.labels_kind == GORT_LABELS_SLICE && set) {
		e->heap = xcalloc(2 * (size_t)nkeep, sizeof(*e->heap));
		for (uint32_t i = 0; i < nkeep; i++) {
			const struct dpair *d = &g->dp[i];
			const struct gort_label *q = &set->pairs[i];

			if (d->k.keep && !is_static(g, d->k.addr, d->k.keep))
				e->heap[e->nheap++] = (struct heap_str){ d->k.addr, d->k.keep, 0, q->key };
			if (d->v.keep && !is_static(g, d->v.addr, d->v.keep))
				e->heap[e->nheap++] = (struct heap_str){ d->v.addr, d->v.keep, 0, q->value };
		}
		heap_chunks(e);
	}
}

/* Heap strings of the entry's set still hold the bytes we decoded? Those the BPF
 * program copied at the sample are compared with the copy, without a read. */
static int heap_strings_same(const struct gort *g, const struct gp_mem *mem,
			     const struct lc_entry *e)
{
	char tmp[CHUNK_MAX];
	const uint8_t *p;
	uint32_t c, i = 0;

	for (i = 0; i < e->nheap && (p = snap_piece(g, e->heap[i].addr, e->heap[i].len)); i++)
		if (memcmp(p, e->heap[i].bytes, e->heap[i].len))
			return 1;
	if (i == e->nheap)
		return 0;
	i = 0;
	for (c = 0; c < e->nchunk; c++) {
		int rc = mem_read(mem, e->chunks[c].addr, tmp, e->chunks[c].len);

		if (rc)
			return rc;
		for (; i < e->nheap && e->heap[i].chunk == c; i++)
			if (memcmp(tmp + (e->heap[i].addr - e->chunks[c].addr), e->heap[i].bytes,
				   e->heap[i].len))
				return 1;
	}
	return 0;
}

/* The GC sweep generation into *sg: true when known (see labels_of). */
bool gort_read_sweepgen(struct gort *g, const struct gp_mem *mem, uint32_t *sg)
{
	return g->mheap && g->off.mheap_sweepgen &&
	       mem_read_u32(mem, g->mheap + g->off.mheap_sweepgen, sg) == 0;
}

/* Reads g.labels of gv again into *ptr, after the sweep generation was read: what
 * proves the set at *ptr reachable in that generation. 0 or a negative errno. */
static int labels_again(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
			uint64_t *ptr, bool *epoch)
{
	bool missed = g->pf_missed;
	int rc;

	g->pf_missed = false;
	rc = mem_read_u64(mem, gv->addr + g->off.g_labels, ptr);
	if (rc)
		return rc;
	/* In a batch's dry run the value is only requested: go on as if it had not changed
	 * (the usual case), so that the label set's first read is requested in the same
	 * vectored read, after it. The answer of a dry run is discarded. */
	if (g->pf_missed) {
		*ptr = gv->labels;
	} else if (gv->snap && *ptr != gv->labels) {
		/* The snapshot is the sample's; the goroutine has other labels now. The
		 * sample's set is still at gv->labels unless a GC cycle freed it since:
		 * nothing proves it either way, so the cache entry's fingerprint (or a
		 * decode) decides. */
		*ptr = gv->labels;
		*epoch = false;
		g->st.snap_labels_moved++;
	}
	g->pf_missed |= missed;
	return 0;
}

/* Checks cache entry e, for labels object ptr, against the target: its fingerprint and
 * heap strings still read the same. 1: it holds (*out set, the entry proved as of
 * sweepgen when epoch); 0: it was stale and is dropped, or a batch's dry run left it as
 * it is (g->pf_missed); or a hard error. */
static int lc_check(struct gort *g, const struct gp_mem *mem, struct lc_entry *e, uint64_t ptr,
		    bool epoch, uint32_t sweepgen, const struct gort_labels **out)
{
	uint8_t fp[24 + 32 * GORT_MAX_LABELS];
	uint32_t fplen = 0, n = 0;
	uint64_t data = 0, len = 0;
	int rc;

	rc = gort_read_fingerprint(g, mem, ptr, fp, &fplen, &data, &len, &n);
	if (rc == 0 && fplen == e->fplen && memcmp(fp, e->fp, fplen) == 0) {
		rc = heap_strings_same(g, mem, e);
		if (g->pf_missed)
			return 0; /* a dry run (pf_read): keep the entry as it is */
		if (rc == 0) {
			e->used = ++g->lc_clock;
			e->epoch_ok = epoch;
			e->sweepgen = sweepgen;
			e->checked_gen = g->pf_mode != PF_OFF ? g->pf_gen : 0;
			g->st.label_hits_checked++;
			*out = e->set;
			return 1;
		}
	}
	if (g->pf_missed)
		return 0;
	if (rc < 0 && !soft_error(rc))
		return rc;
	g->st.label_stale++;
	gort_lc_drop(g, e);
	return 0;
}

/* Labels of goroutine gv (whose g.labels is ptr != 0) by the label cache. *sg, when
 * have_sg, is the sweep generation read after gv was read (else it is read here);
 * sg_before: the same value was also read before gv was. */
int gort_labels_cached(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		       bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		       int *flags)
{
	uint32_t sweepgen = 0;
	uint64_t ptr = gv->labels;
	bool epoch = false;
	struct lc_entry *e;
	int rc;

	g->st.label_lookups++;
	if (!ptr_ok(ptr)) {
		g->st.label_bad++;
		*flags |= GORT_LABELS_BAD;
		return 0;
	}
	if (gv->snap && copied_at_sample(g, ptr)) {
		/* The set as it was at the sample is in the snapshot: its fingerprint is
		 * compared with the copy (snap_piece), which needs no proof that the set is still
		 * reachable now. The proof (a read of g.labels after one of the sweep
		 * generation) would only mark the entry for samples without a snapshot, at the
		 * cost of one more vectored read per batch. */
		epoch = false;
	} else if (have_sg) {
		sweepgen = sg;
		epoch = true;
	} else {
		epoch = gort_read_sweepgen(g, mem, &sweepgen);
	}
	if (epoch) {
		e = lc_find(g, ptr);
		if (e && e->epoch_ok && e->sweepgen == sweepgen && !gv->snap) {
			/* g.labels was read before sweepgen, and the entry's sweepgen before the
			 * read that proved its object reachable: no GC cycle ended in between, so
			 * the object at ptr cannot have been freed and replaced. A snapshot's
			 * g.labels may be older than the entry's proof: no shortcut for it. */
			e->used = ++g->lc_clock;
			g->st.label_hits_epoch++;
			*out = e->set;
			return 0;
		}
		/* Observe reachability again after the sweepgen read, unless g.labels was
		 * read between two reads that gave this same sweep generation: it was then
		 * observed after one already (gort_read_batch). */
		if (!(have_sg && sg_before)) {
			rc = labels_again(g, mem, gv, &ptr, &epoch);
			if (rc)
				return soft_error(rc) ? 0 : rc;
		}
		if (!ptr)
			return 0;
		if (!ptr_ok(ptr)) {
			g->st.label_bad++;
			*flags |= GORT_LABELS_BAD;
			return 0;
		}
	}
	e = lc_find(g, ptr);
	if (e && g->pf_mode != PF_OFF && e->checked_gen == g->pf_gen) {
		/* Proved (or decoded) already in this batch, whose reads all stand for one
		 * moment: the same bytes would be compared again. */
		e->used = ++g->lc_clock;
		g->st.label_hits_batch++;
		*out = e->set;
		return 0;
	}
	if (e) {
		rc = lc_check(g, mem, e, ptr, epoch, sweepgen, out);
		if (rc != 0 || g->pf_missed)
			return rc < 0 ? rc : 0;
	}
	return gort_labels_decode(g, mem, ptr, epoch, sweepgen, out, flags);
}
