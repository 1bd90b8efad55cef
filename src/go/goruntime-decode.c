/* goruntime-decode.c: a label set read from the target and interned. g.labels points
 * at a map[string]string (Go 1.19 to 1.23) or a sorted slice of pairs (1.24 on); the
 * pairs are read into a draft, sorted, cut to GORT_MAX_LABELS, and interned so that
 * equal sets are one object. Everything read is untrusted: walks are bounded. */
#include "config.h"
#include "goruntime-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define HMAP_SAME_SIZE_GROW 8

/* Bounds on walks over untrusted memory. */
#define MAP_MAX_B 10          /* at most 1024 buckets per array */
#define MAP_MAX_BUCKETS 2048  /* buckets visited per map, overflow chains included */
#define MAP_MAX_CHAIN 16      /* overflow buckets per chain */
#define INTERN_MAX_SETS 100000
#define INTERN_MAX_BYTES (64u << 20)

/* --- strings --- */

static void buf_reserve(struct gort *g, size_t more)
{
	xgrow((void **)&g->buf, &g->bufcap, g->buflen + more, 1);
}

/* The slot of static string (addr, len): the entry holding it, or the empty slot where
 * it goes. */
static struct sstr *sstr_slot(struct gort *g, uint64_t addr, uint32_t len)
{
	size_t j;

	if (!g->ss)
		g->ss = xcalloc(SS_SLOTS, sizeof(*g->ss));
	for (j = util_mix64(addr ^ ((uint64_t)len << 48)) & (SS_SLOTS - 1); g->ss[j].len;
	     j = (j + 1) & (SS_SLOTS - 1))
		if (g->ss[j].addr == addr && g->ss[j].len == len)
			break;
	return &g->ss[j];
}

/* Reads keep bytes of string ptr into buf. Strings inside a static range (the binary's
 * read-only image: Go's string literals, such as the keys and values passed to
 * pprof.Labels) cannot change while the target lives: they are read once and kept. */
static int str_bytes(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint32_t keep,
		     char *buf)
{
	struct sstr *e;
	bool missed;
	int rc;

	if (!is_static(g, ptr, keep))
		return mem_read(mem, ptr, buf, keep);
	e = sstr_slot(g, ptr, keep);
	if (e->len) {
		memcpy(buf, g->ss_buf + e->off, keep);
		return 0;
	}
	missed = g->pf_missed;
	g->pf_missed = false;
	rc = mem_read(mem, ptr, buf, keep);
	/* Only bytes really read are kept (not a batch's placeholder, see pf_read). */
	if (rc == 0 && !g->pf_missed && g->ss_n < SS_MAX && g->ss_len + keep <= SS_MAX_BYTES) {
		xgrow((void **)&g->ss_buf, &g->ss_bufcap, g->ss_len + keep, 1);
		memcpy(g->ss_buf + g->ss_len, buf, keep);
		e->addr = ptr;
		e->len = keep;
		e->off = (uint32_t)g->ss_len;
		g->ss_len += keep;
		g->ss_n++;
	}
	g->pf_missed |= missed;
	return rc;
}

/* Reads a Go string {ptr, len} into the scratch buffer, keeping at most
 * GORT_MAX_STRLEN bytes and marking a cut. 0 or -1 (garbage). */
static int read_str(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint64_t len,
		    struct dstr *s)
{
	uint32_t keep;

	if (len >= STRLEN_GARBAGE || (len && (ptr < 4096 || ptr >= (1ULL << 56))))
		return -1;
	keep = (uint32_t)GP_MIN(len, (uint64_t)GORT_MAX_STRLEN);
	buf_reserve(g, keep + sizeof(GORT_TRUNC_MARK));
	if (keep && str_bytes(g, mem, ptr, keep, g->buf + g->buflen))
		return -1;
	s->addr = ptr;
	s->len = len;
	s->off = (uint32_t)g->buflen;
	s->keep = keep;
	s->cut = keep < len;
	g->buflen += keep;
	// cppcheck-suppress knownConditionTrueFalse ; len may exceed GORT_MAX_STRLEN
	if (s->cut) {
		memcpy(g->buf + g->buflen, GORT_TRUNC_MARK, sizeof(GORT_TRUNC_MARK) - 1);
		g->buflen += sizeof(GORT_TRUNC_MARK) - 1;
		g->dtrunc |= GORT_TRUNC_STRING;
	}
	return 0;
}

/* --- the draft: the pairs of the set being decoded --- */

/* Bytes of s in the scratch buffer, the cut mark included. */
static size_t dstr_len(const struct dstr *s)
{
	return s->keep + (s->cut ? sizeof(GORT_TRUNC_MARK) - 1 : 0);
}

static int cmp_dstr(const struct gort *g, const struct dstr *a, const struct dstr *b)
{
	size_t la = dstr_len(a), lb = dstr_len(b);
	int c = memcmp(g->buf + a->off, g->buf + b->off, GP_MIN(la, lb));

	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int cmp_pair(const struct gort *g, const struct dpair *a, const struct dpair *b)
{
	int c = cmp_dstr(g, &a->k, &b->k);

	return c ? c : cmp_dstr(g, &a->v, &b->v);
}

/* Sorts the drafted pairs by key (then value): a canonical order for interning. Map
 * iteration order is random; slices are already sorted (Labels, mergeLabelSets), so
 * insertion sort is linear there, and at most MAP_COLLECT pairs are ever sorted. */
static void draft_sort(struct gort *g)
{
	uint32_t i, j;

	for (i = 1; i < g->dn; i++) {
		struct dpair t = g->dp[i];

		for (j = i; j > 0 && cmp_pair(g, &g->dp[j - 1], &t) > 0; j--)
			g->dp[j] = g->dp[j - 1];
		g->dp[j] = t;
	}
}

static void draft_reset(struct gort *g)
{
	g->dn = 0;
	g->dtrunc = 0;
	g->buflen = 0;
}

/* Adds the pair of the string headers at kh (key) and vh (value): {ptr, len} each. */
static int draft_add(struct gort *g, const struct gp_mem *mem, const uint8_t *kh, const uint8_t *vh)
{
	struct dpair *p;

	if (g->dn >= MAP_COLLECT) {
		g->dtrunc |= GORT_TRUNC_PAIRS;
		return 0;
	}
	p = &g->dp[g->dn];
	if (read_str(g, mem, ld64(kh, 0), ld64(kh, 8), &p->k) ||
	    read_str(g, mem, ld64(vh, 0), ld64(vh, 8), &p->v))
		return -1;
	g->dn++;
	return 0;
}

/* Collects the live cells of one bucket array of 2^lg buckets (with overflow chains). */
static int map_walk_array(struct gort *g, const struct gp_mem *mem, uint64_t arr, unsigned lg,
			  uint32_t *visited)
{
	const struct gort_offsets *o = &g->off;
	uint64_t nb = 1ULL << lg, i;

	if (!ptr_ok(arr))
		return -1;
	for (i = 0; i < nb; i++) {
		uint64_t b = arr + i * o->bucket_size;
		int chain;

		for (chain = 0; b; chain++) {
			int c;

			if (chain > MAP_MAX_CHAIN || ++*visited > MAP_MAX_BUCKETS || !ptr_ok(b) ||
			    mem_read(mem, b, g->bucket, o->bucket_size))
				return -1;
			for (c = 0; c < BUCKET_CNT; c++) {
				if (g->bucket[c] < TOPHASH_MIN)
					continue;
				if (draft_add(g, mem, g->bucket + o->bucket_keys + 16 * c,
					      g->bucket + o->bucket_values + 16 * c))
					return -1;
			}
			b = ld64(g->bucket, o->bucket_overflow);
		}
	}
	return 0;
}

/* The map fingerprint: what identifies one immutable label map. hash0 is random per
 * map (makemap: h.hash0 = fastrand()). The iterator flag bits change when someone
 * ranges over the map (WithLabels copies the parent's map) and are left out. */
struct map_fp {
	uint64_t hmap, count, buckets, oldbuckets;
	uint32_t hash0;
	uint8_t b, grow;
	/* Zero: the fingerprint is compared and kept as bytes. */
	uint8_t pad[2]; // cppcheck-suppress unusedStructMember
};

static int map_fingerprint(struct gort *g, const struct gp_mem *mem, uint64_t cell,
			   struct map_fp *fp)
{
	const struct gort_offsets *o = &g->off;
	uint32_t hsz = g->hsz;
	uint8_t h[64];
	int rc;

	memset(fp, 0, sizeof(*fp));
	if (hsz > sizeof(h))
		return -EINVAL;
	rc = mem_read_u64(mem, cell, &fp->hmap);
	if (rc)
		return rc;
	if (!fp->hmap)
		return 0; /* a nil labelMap */
	if (!ptr_ok(fp->hmap))
		return -EFAULT;
	rc = mem_read(mem, fp->hmap, h, hsz);
	if (rc)
		return rc;
	fp->count = ld64(h, o->hmap_count);
	fp->b = h[o->hmap_b];
	fp->grow = h[o->hmap_flags] & HMAP_SAME_SIZE_GROW;
	fp->hash0 = ld32(h, o->hmap_hash0);
	fp->buckets = ld64(h, o->hmap_buckets);
	fp->oldbuckets = ld64(h, o->hmap_oldbuckets);
	return 0;
}

static int decode_map(struct gort *g, const struct gp_mem *mem, const struct map_fp *fp)
{
	uint32_t visited = 0;

	if (!fp->hmap || fp->count == 0)
		return 0;
	if (fp->b > MAP_MAX_B || fp->count > (uint64_t)MAP_MAX_BUCKETS * BUCKET_CNT ||
	    (fp->b == 0 && fp->oldbuckets && !fp->grow))
		return -1;
	if (map_walk_array(g, mem, fp->buckets, fp->b, &visited))
		return -1;
	/* During growth the old array holds the cells not yet evacuated; evacuated ones
	 * have tophash 2-4 and are skipped, so nothing is counted twice. */
	if (fp->oldbuckets &&
	    map_walk_array(g, mem, fp->oldbuckets, fp->grow ? fp->b : fp->b - 1u, &visited))
		return -1;
	if (g->dn != fp->count && !(g->dtrunc & GORT_TRUNC_PAIRS))
		return -1; /* torn or garbage */
	return 0;
}

/* The slice fingerprint is the labelMap header {data, len, cap} and the pair array. */
static int decode_slice(struct gort *g, const struct gp_mem *mem, const uint8_t *hdr,
			const uint8_t *arr, uint32_t n, uint64_t len)
{
	uint32_t i;

	(void)hdr;
	for (i = 0; i < n; i++)
		if (draft_add(g, mem, arr + 32 * i, arr + 32 * i + 16))
			return -1;
	if (len > n)
		g->dtrunc |= GORT_TRUNC_PAIRS;
	return 0;
}

/* --- interning --- */

static uint64_t draft_hash(const struct gort *g, uint32_t n)
{
	uint64_t h = util_mix64(n ^ ((uint64_t)g->dtrunc << 32));
	uint32_t i;

	for (i = 0; i < n; i++) {
		h = util_hash(g->buf + g->dp[i].k.off, dstr_len(&g->dp[i].k), h);
		h = util_hash(g->buf + g->dp[i].v.off, dstr_len(&g->dp[i].v), h ^ 0x9e3779b97f4a7c15ULL);
	}
	return h;
}

static bool iset_equal(const struct gort *g, const struct iset *s, uint32_t n)
{
	uint32_t i;

	if (s->l.n != n || s->l.truncated != g->dtrunc)
		return false;
	for (i = 0; i < n; i++) {
		const struct dpair *p = &g->dp[i];
		const struct gort_label *q = &s->l.pairs[i];

		if (q->klen != dstr_len(&p->k) || q->vlen != dstr_len(&p->v) ||
		    memcmp(q->key, g->buf + p->k.off, q->klen) ||
		    memcmp(q->value, g->buf + p->v.off, q->vlen))
			return false;
	}
	return true;
}

static void iset_grow(struct gort *g)
{
	size_t ncap = g->iset_cap ? g->iset_cap * 2 : 256, i;
	struct iset **n = xcalloc(ncap, sizeof(*n));

	for (i = 0; i < g->iset_cap; i++) {
		struct iset *s = g->iset[i];
		size_t j;

		if (!s)
			continue;
		for (j = s->hash & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = s;
	}
	free(g->iset);
	g->iset = n;
	g->iset_cap = ncap;
}

/* The interned set equal to the draft (first n pairs). NULL when the table is full. */
static const struct gort_labels *intern(struct gort *g, uint32_t n)
{
	uint64_t h = draft_hash(g, n);
	size_t j, size, bytes = 0;
	struct iset *s;
	char *p;
	uint32_t i;

	if (g->iset_cap) {
		for (j = h & (g->iset_cap - 1); g->iset[j]; j = (j + 1) & (g->iset_cap - 1))
			if (g->iset[j]->hash == h && iset_equal(g, g->iset[j], n))
				return &g->iset[j]->l;
	}
	for (i = 0; i < n; i++)
		bytes += dstr_len(&g->dp[i].k) + dstr_len(&g->dp[i].v) + 2;
	size = sizeof(*s) + n * sizeof(s->pairs[0]) + bytes;
	if (g->iset_n >= INTERN_MAX_SETS || g->iset_bytes + size > INTERN_MAX_BYTES)
		return NULL;
	if ((g->iset_n + 1) * 2 > g->iset_cap)
		iset_grow(g);
	s = xmalloc(size);
	s->hash = h;
	s->size = size;
	s->l.n = n;
	s->l.truncated = g->dtrunc;
	s->l.pairs = s->pairs;
	p = (char *)&s->pairs[n];
	for (i = 0; i < n; i++) {
		const struct dpair *d = &g->dp[i];
		struct gort_label *q = &s->pairs[i];

		q->klen = (uint32_t)dstr_len(&d->k);
		memcpy(p, g->buf + d->k.off, q->klen);
		p[q->klen] = '\0';
		q->key = p;
		p += q->klen + 1;
		q->vlen = (uint32_t)dstr_len(&d->v);
		memcpy(p, g->buf + d->v.off, q->vlen);
		p[q->vlen] = '\0';
		q->value = p;
		p += q->vlen + 1;
	}
	for (j = h & (g->iset_cap - 1); g->iset[j]; j = (j + 1) & (g->iset_cap - 1))
		;
	g->iset[j] = s;
	g->iset_n++;
	g->iset_bytes += size;
	return &s->l;
}

/* --- a label set, from its g.labels --- */

/* Reads the current fingerprint bytes of labels object ptr into fp (up to cap bytes);
 * *fplen gets their length. For slices also returns the header fields. */
int gort_read_fingerprint(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint8_t *fp,
			  uint32_t *fplen, uint64_t *data, uint64_t *len, uint32_t *n)
{
	int rc;

	if (g->off.labels_kind == GORT_LABELS_MAP) {
		struct map_fp m;

		rc = map_fingerprint(g, mem, ptr, &m);
		if (rc)
			return rc;
		memcpy(fp, &m, sizeof(m));
		*fplen = sizeof(m);
		return 0;
	}
	/* labelMap{Set{List}}: the list header is at offset 0 (goruntime-int.h, the sources). */
	rc = mem_read(mem, ptr, fp, 24);
	if (rc)
		return rc;
	*data = ld64(fp, 0);
	*len = ld64(fp, 8);
	if (*len > ld64(fp, 16) || *len >= STRLEN_GARBAGE)
		return -EINVAL;
	*n = (uint32_t)GP_MIN(*len, (uint64_t)GORT_MAX_LABELS);
	*fplen = 24 + 32 * *n;
	if (*n) {
		if (!ptr_ok(*data))
			return -EFAULT;
		rc = mem_read(mem, *data, fp + 24, 32 * *n);
		if (rc)
			return rc;
	}
	return 0;
}

/* Decodes labels object ptr into an interned set, and a cache entry (gort_lc_put). */
int gort_labels_decode(struct gort *g, const struct gp_mem *mem, uint64_t ptr, bool epoch,
		       uint32_t sweepgen, const struct gort_labels **out, int *flags)
{
	uint8_t fp[24 + 32 * GORT_MAX_LABELS];
	uint32_t fplen = 0, n = 0, i, nkeep;
	uint64_t data = 0, len = 0;
	const struct gort_labels *set = NULL;
	int rc;

	g->st.label_decodes++;
	draft_reset(g);
	rc = gort_read_fingerprint(g, mem, ptr, fp, &fplen, &data, &len, &n);
	if (rc == 0) {
		if (g->off.labels_kind == GORT_LABELS_MAP) {
			struct map_fp m;

			memcpy(&m, fp, sizeof(m));
			rc = decode_map(g, mem, &m) ? -EINVAL : 0;
		} else {
			rc = decode_slice(g, mem, fp, fp + 24, n, len) ? -EINVAL : 0;
		}
	}
	if (g->pf_missed) {
		/* A batch's dry run (pf_read): the bytes were placeholders, the answer is
		 * thrown away; keep nothing of it. */
		*out = NULL;
		return 0;
	}
	if (rc) {
		g->st.label_bad++;
		*flags |= GORT_LABELS_BAD;
		return soft_error(rc) ? 0 : rc;
	}
	draft_sort(g);
	nkeep = g->dn;
	if (nkeep > GORT_MAX_LABELS) {
		nkeep = GORT_MAX_LABELS;
		g->dtrunc |= GORT_TRUNC_PAIRS;
	}
	/* Only the kept pairs decide the string mark (a map reads more cells than it keeps). */
	g->dtrunc &= (uint8_t)~GORT_TRUNC_STRING;
	for (i = 0; i < nkeep; i++)
		if (g->dp[i].k.cut || g->dp[i].v.cut)
			g->dtrunc |= GORT_TRUNC_STRING;
	if (nkeep) {
		set = intern(g, nkeep);
		if (!set) {
			*flags |= GORT_LABELS_DROPPED;
			*out = NULL;
			return 0;
		}
	}
	*out = set;
	gort_lc_put(g, ptr, epoch, sweepgen, fp, fplen, set, nkeep);
	return 0;
}
