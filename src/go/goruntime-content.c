/* goruntime-content.c: label sets known by their content, as the BPF program copied
 * them at the sample, and labels_of, which answers a sample's labels from that content
 * when it can and from the label cache (goruntime-lcache.c) otherwise. */
#include "config.h"
#include "goruntime-int.h"

#include <stdlib.h>
#include <string.h>

/*
 * A label set is decided by its strings. A string constant (in a static range) is
 * decided by its address and length, since the bytes there never change; a string
 * made at run time by its bytes, when the BPF program copied them at the sample.
 * Services label each request through pprof.Do, which makes a new set, at a new
 * address, for every request, with constant keys, constant or run-time values; the
 * label cache, keyed by address, then decodes every one of them, and spends its time
 * choosing the entries to replace.
 * For a sample whose set the program copied whole, set_key makes that content into a
 * key, and a table maps keys to the interned set the first set with the key decoded to.
 */
_Static_assert(BUCKET_CNT <= GOBPF_LBL_PAIRS, "set_key: a bucket's pairs fit in the key");

/* A set's key as it is built: its bytes and their running hash, folded word by word as
 * they are appended (util_hash_words), so that the key is not read again to be hashed. */
struct skey {
	uint8_t *k; /* HC_KEY_MAX bytes */
	uint32_t n;
	uint32_t piece; /* where the next copied string's piece should be (snap_piece_at) */
	uint64_t h;
};

static inline void skey_word(struct skey *s, uint64_t w)
{
	memcpy(s->k + s->n, &w, 8);
	s->n += 8;
	s->h = util_hash_words(s->h, &w, 1);
}

/* key_str for a string made at run time: the length with the top bit set and the bytes
 * of the sample's copy. False when the program did not copy them. */
static bool key_str_copied(const struct gort *g, uint64_t p, uint64_t len, struct skey *s)
{
	const uint8_t *b;
	uint64_t bh;

	if (len > GOBPF_LBL_STR_MAX || !(b = snap_piece_at(g, s->piece, p, len)))
		return false;
	s->piece++;
	bh = util_hash(b, len, 0);
	skey_word(s, len | (1ULL << 63));
	memcpy(s->k + s->n, b, len);
	s->n += (uint32_t)len;
	s->h = util_hash_words(s->h, &bh, 1);
	return true;
}

/* Appends string {p, len} to key s: 16 bytes (address, length) for a constant, else its
 * copy (key_str_copied). False when neither (garbage, or not copied). Inline: the
 * constant is the usual case, four times per sample on a set of two pairs. */
static inline bool key_str(const struct gort *g, uint64_t p, uint64_t len, struct skey *s)
{
	if (len >= STRLEN_GARBAGE)
		return false;
	if (len && !is_static(g, p, GP_MIN(len, (uint64_t)GORT_MAX_STRLEN)))
		return key_str_copied(g, p, len, s);
	skey_word(s, p);
	skey_word(s, len);
	return true;
}

/* The key of set ptr from the sample's copy, into k (HC_KEY_MAX bytes): its length when
 * the copy holds the whole set (one bucket of a go1.19 to go1.23 map, not growing; a
 * go1.24+ slice of up to GOBPF_LBL_PAIRS pairs) and every string is a constant or was
 * copied, else 0. Map cells are taken in bucket order, slices in list order. */
static uint32_t set_key(const struct gort *g, uint64_t ptr, uint8_t *k, uint64_t *hash)
{
	const struct gort_offsets *o = &g->off;
	const uint8_t *c;
	struct skey s = { k, 0, 0, 0xcbf29ce484222325ULL };
	uint32_t pairs = 0, i;

	if (o->labels_kind == GORT_LABELS_MAP) {
		const uint32_t bkeys = o->bucket_keys, bvals = o->bucket_values;
		const uint8_t *hm, *b;
		uint64_t h;

		if (!(c = snap_piece_at(g, 0, ptr, 8)) || !ptr_ok(h = ld64(c, 0)) ||
		    !(hm = snap_piece_at(g, 1, h, g->hsz)))
			return 0;
		if (hm[o->hmap_b] != 0 || ld64(hm, o->hmap_oldbuckets) ||
		    ld64(hm, o->hmap_count) > BUCKET_CNT ||
		    !(b = snap_piece_at(g, 2, ld64(hm, o->hmap_buckets), o->bucket_size)) ||
		    ld64(b, o->bucket_overflow))
			return 0;
		s.piece = 3;
		for (i = 0; i < BUCKET_CNT; i++) {
			if (b[i] < TOPHASH_MIN)
				continue;
			if (!key_str(g, ld64(b, bkeys + 16 * i), ld64(b, bkeys + 16 * i + 8), &s) ||
			    !key_str(g, ld64(b, bvals + 16 * i), ld64(b, bvals + 16 * i + 8), &s))
				return 0;
			pairs++;
		}
		if (pairs != ld64(hm, o->hmap_count))
			return 0; /* torn or garbage */
	} else {
		const uint8_t *a;
		uint64_t len;

		if (!(c = snap_piece_at(g, 0, ptr, 24)))
			return 0;
		len = ld64(c, 8);
		if (len == 0 || len > GOBPF_LBL_PAIRS || len > ld64(c, 16) ||
		    !(a = snap_piece_at(g, 1, ld64(c, 0), 32 * len)))
			return 0;
		s.piece = 2;
		for (i = 0; i < len; i++)
			if (!key_str(g, ld64(a, 32 * i), ld64(a, 32 * i + 8), &s) ||
			    !key_str(g, ld64(a, 32 * i + 16), ld64(a, 32 * i + 24), &s))
				return 0;
		pairs = (uint32_t)len;
	}
	*hash = util_mix64(s.h ^ s.n);
	return pairs ? s.n : 0;
}

/* The entry for key k of n bytes (hash h), or the empty slot where it goes. */
static struct hc_ent *hc_slot(struct gort *g, const uint8_t *k, uint32_t n, uint64_t h)
{
	size_t j;

	if (!g->hc) {
		g->hc = xcalloc(HC_SLOTS, sizeof(*g->hc));
		g->hc_key = xmalloc(HC_ARENA);
	}
	for (j = h & (HC_SLOTS - 1); g->hc[j].len; j = (j + 1) & (HC_SLOTS - 1))
		if (g->hc[j].hash == h && g->hc[j].len == n && memcmp(g->hc_key + g->hc[j].off, k, n) == 0)
			break;
	return &g->hc[j];
}

/* Remembers that key k (n bytes, hash h) decodes to set. */
static void hc_add(struct gort *g, const uint8_t *k, uint32_t n, uint64_t h,
		   const struct gort_labels *set)
{
	struct hc_ent *e;

	if (g->hc_n >= HC_SLOTS / 2 || g->hc_len + n > HC_ARENA) {
		memset(g->hc, 0, HC_SLOTS * sizeof(*g->hc));
		g->hc_n = 0;
		g->hc_len = 0;
	}
	e = hc_slot(g, k, n, h);
	if (e->len)
		return;
	e->off = g->hc_len;
	memcpy(g->hc_key + e->off, k, n);
	e->hash = h;
	e->len = n;
	e->set = set;
	g->hc_n++;
	g->hc_len += n;
}

/* The raw entry of set ptr: its slot, whether or not it holds ptr. */
static struct raw_ent *raw_slot(struct gort *g, uint64_t ptr)
{
	if (!g->raw)
		g->raw = xcalloc(RAW_SLOTS, sizeof(*g->raw));
	return &g->raw[util_mix64(ptr) & (RAW_SLOTS - 1)];
}

/* Remembers that the snapshot r's copy of set ptr is set. */
static void raw_put(struct raw_ent *e, uint64_t ptr, const struct gobpf_rec *r, uint32_t used,
		    const struct gort_labels *set)
{
	e->ptr = ptr;
	e->npieces = GP_MIN(r->npieces, (uint32_t)GOBPF_LBL_PIECES);
	e->used = used;
	e->set = set;
	memcpy(e->piece, r->piece, e->npieces * sizeof(*e->piece));
	memcpy(e->lbl, r->lbl, used);
}

/* Labels of goroutine gv (whose g.labels is != 0): by their content when the sample's
 * copy of the set holds it, else by the label cache. The content is first compared, byte
 * for byte, with the last copy of the same set (raw_ent): equal copies are the same set,
 * found without building its key (set_key, hc_slot). A set's bytes are kept from its
 * second copy on: a set seen once only leaves its address, which costs a store where
 * keeping its bytes cost a copy of them and a pass over the pieces (gobpf_lbl_used):
 * a set that lives one request is seldom seen twice, and copying every set's bytes cost
 * more than the equal copies saved. */
int gort_labels_of(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		   bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		   int *flags)
{
	uint8_t key[HC_KEY_MAX];
	uint64_t h = 0;
	uint32_t n = 0, used = 0;
	struct raw_ent *re = NULL;
	int rc;

	if (gv->snap && copied_at_sample(g, gv->labels)) {
		const struct gobpf_rec *r = g->snap;

		re = raw_slot(g, gv->labels);
		if (re->ptr != gv->labels) {
			/* First seen: only its address is kept, and no bytes (npieces 0). */
			re->ptr = gv->labels;
			re->npieces = 0;
			re = NULL;
		} else {
			used = gobpf_lbl_used(r);
			if (re->npieces == GP_MIN(r->npieces, (uint32_t)GOBPF_LBL_PIECES) &&
			    re->used == used &&
			    memcmp(re->piece, r->piece, re->npieces * sizeof(*r->piece)) == 0 &&
			    memcmp(re->lbl, r->lbl, used) == 0) {
				g->st.label_lookups++;
				g->st.label_hits_content++;
				*out = re->set;
				return 0;
			}
		}
		if ((n = set_key(g, gv->labels, key, &h))) {
			const struct hc_ent *e;

			e = hc_slot(g, key, n, h);
			if (e->len) {
				g->st.label_lookups++;
				g->st.label_hits_content++;
				*out = e->set;
				if (re)
					raw_put(re, gv->labels, r, used, e->set);
				return 0;
			}
		}
	}
	rc = gort_labels_cached(g, mem, gv, have_sg, sg_before, sg, out, flags);
	/* Not from a batch's dry run (whose answer is thrown away), nor a set that was
	 * garbage or could not be kept. */
	if (n && rc == 0 && !g->pf_missed && *out &&
	    !(*flags & (GORT_LABELS_BAD | GORT_LABELS_DROPPED))) {
		hc_add(g, key, n, h, *out);
		if (re)
			raw_put(re, gv->labels, g->snap, used, *out);
	}
	return rc;
}
