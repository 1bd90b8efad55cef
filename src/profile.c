/* profile.c: the in-memory pprof profile: interned strings and deduplicated mappings,
 * functions, locations and samples, each in an open-addressing hash table. */
#include "config.h"
#include "gotop/profile.h"
#include "gotop/util.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------
 * Bump allocator. Blocks never move, so strings, location lines and sample keys keep
 * their addresses for the life of the profile (prof_string promises that).
 */
struct pool_block {
	struct pool_block *next;
	size_t used, cap;
	uint64_t data[]; /* 8-aligned */
};

struct pool {
	struct pool_block *head;
	size_t next_cap;
};

#define POOL_FIRST 4096
#define POOL_MAX_BLOCK (1u << 20)

static void *pool_alloc(struct pool *pl, size_t n)
{
	struct pool_block *b = pl->head;

	n = (n + 7) & ~(size_t)7;
	if (!b || b->cap - b->used < n) {
		size_t cap = pl->next_cap ? pl->next_cap : POOL_FIRST;

		if (cap < POOL_MAX_BLOCK)
			pl->next_cap = cap * 2;
		if (cap < n)
			cap = n;
		b = xmalloc(sizeof(*b) + cap);
		b->used = 0;
		b->cap = cap;
		b->next = pl->head;
		pl->head = b;
	}
	void *r = (char *)b->data + b->used;
	b->used += n;
	return r;
}

static void pool_free(struct pool *pl)
{
	struct pool_block *b = pl->head;

	while (b) {
		struct pool_block *next = b->next;
		free(b);
		b = next;
	}
	pl->head = NULL;
	pl->next_cap = 0;
}

/* ---------------------------------------------------------------------------------
 * Hashing: word at a time, finished with util_mix64 so the low bits used for the
 * slot index depend on every input bit.
 */
#define HASH_K 0x9e3779b97f4a7c15ULL

static inline uint64_t hash_word(uint64_t h, uint64_t v)
{
	return ((h << 5 | h >> 59) ^ v) * HASH_K;
}

static inline uint32_t hash_final(uint64_t h)
{
	h = util_mix64(h);
	return (uint32_t)(h ^ (h >> 32));
}

static uint32_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = hash_word(0x51ed270b27d8c5a9ULL, len);
	uint64_t w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = hash_word(h, w);
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = hash_word(h, w);
	}
	return hash_final(h);
}

/* ---------------------------------------------------------------------------------
 * Open-addressing table of entry indexes with linear probing. A slot holds the
 * entry's 32-bit hash (high half) and index + 1 (low half; 0 is empty), so probing
 * compares hashes without touching entries and growing never rehashes entries.
 */
struct htab {
	uint64_t *slots;
	uint32_t mask; /* capacity - 1; capacity is a power of two */
	uint32_t count;
};

#define HTAB_FIRST 64

static void htab_init(struct htab *h)
{
	h->slots = xcalloc(HTAB_FIRST, sizeof(*h->slots));
	h->mask = HTAB_FIRST - 1;
	h->count = 0;
}

static void htab_free(struct htab *h)
{
	free(h->slots);
	h->slots = NULL;
	h->mask = 0;
	h->count = 0;
}

static inline uint32_t slot_hash(uint64_t s)
{
	return (uint32_t)(s >> 32);
}

static inline uint32_t slot_index(uint64_t s)
{
	return (uint32_t)s - 1;
}

static void htab_grow(struct htab *h)
{
	size_t ncap = ((size_t)h->mask + 1) * 2;

	if (ncap > ((size_t)1 << 32))
		fatal("profile table too large");
	uint64_t *ns = xcalloc(ncap, sizeof(*ns));
	uint32_t nmask = (uint32_t)(ncap - 1);

	for (size_t i = 0; i <= h->mask; i++) {
		uint64_t s = h->slots[i];

		if (!s)
			continue;
		uint32_t j = slot_hash(s) & nmask;
		while (ns[j])
			j = (j + 1) & nmask;
		ns[j] = s;
	}
	free(h->slots);
	h->slots = ns;
	h->mask = nmask;
}

/* Records entry `index` in the empty slot `pos` found by a failed lookup, and keeps
 * the load at most 3/4. */
static void htab_insert(struct htab *h, uint32_t pos, uint32_t hash, uint32_t index)
{
	if (index >= UINT32_MAX - 1)
		fatal("profile table too large");
	h->slots[pos] = (uint64_t)hash << 32 | (uint64_t)(index + 1);
	h->count++;
	if ((uint64_t)h->count * 4 > ((uint64_t)h->mask + 1) * 3)
		htab_grow(h);
}

/* Looks up an entry: returns its index, or -1 with *pos set to the empty slot where
 * it belongs. eq is called only for slots whose hash matches. */
#define HTAB_FIND(h, hash, pos, eq_expr_of_idx)                                        \
	({                                                                             \
		uint32_t _j = (hash) & (h)->mask;                                      \
		int64_t _r = -1;                                                       \
		for (;;) {                                                             \
			uint64_t _s = (h)->slots[_j];                                  \
			if (!_s)                                                       \
				break;                                                 \
			if (slot_hash(_s) == (hash)) {                                 \
				uint32_t idx = slot_index(_s);                         \
				if (eq_expr_of_idx) {                                  \
					_r = idx;                                      \
					break;                                         \
				}                                                      \
			}                                                              \
			_j = (_j + 1) & (h)->mask;                                     \
		}                                                                      \
		*(pos) = _j;                                                           \
		_r;                                                                    \
	})

/* ---------------------------------------------------------------------------------
 * The profile.
 */
struct pstr {
	const char *s; /* NUL-terminated copy in the pool (may also hold NULs) */
	uint32_t len;
};

struct prof {
	struct pool pool;	  /* strings, location lines */
	struct pool sample_pool; /* sample keys: freed by prof_clear_samples */

	struct pstr *strs;
	size_t nstrs, cap_strs;
	struct htab str_tab;

	struct prof_mapping *maps;
	size_t nmaps, cap_maps;
	struct htab map_tab;

	struct prof_function *funcs;
	size_t nfuncs, cap_funcs;
	struct htab func_tab;

	struct prof_location *locs;
	size_t nlocs, cap_locs;
	struct htab loc_tab;

	struct prof_sample *samples;
	size_t nsamples, cap_samples;
	struct htab sample_tab;

	/* Sorted copy of the labels of the prof_add_sample call in progress. */
	struct prof_label *lab_scratch;
	size_t cap_lab_scratch;

	struct prof_value_type types[PROF_MAX_VALUES];
	size_t ntypes;
	struct prof_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	uint32_t *comments;
	size_t ncomments, cap_comments;
	uint32_t default_type;
};

struct prof *prof_new(void)
{
	struct prof *p = xcalloc(1, sizeof(*p));

	htab_init(&p->str_tab);
	htab_init(&p->map_tab);
	htab_init(&p->func_tab);
	htab_init(&p->loc_tab);
	htab_init(&p->sample_tab);
	prof_strn(p, "", 0); /* profile.proto: string_table[0] must always be "" */
	return p;
}

void prof_free(struct prof *p)
{
	if (!p)
		return;
	pool_free(&p->pool);
	pool_free(&p->sample_pool);
	htab_free(&p->str_tab);
	htab_free(&p->map_tab);
	htab_free(&p->func_tab);
	htab_free(&p->loc_tab);
	htab_free(&p->sample_tab);
	free(p->strs);
	free(p->maps);
	free(p->funcs);
	free(p->locs);
	free(p->samples);
	free(p->lab_scratch);
	free(p->comments);
	free(p);
}

/* --- strings --- */

uint32_t prof_strn(struct prof *p, const char *s, size_t len)
{
	uint32_t pos;

	if (len > UINT32_MAX - 1)
		len = UINT32_MAX - 1; /* a 4 GiB symbol is garbage: keep a prefix */
	if (!s) {
		if (len)
			return 0;
		s = "";
	}
	uint32_t h = hash_bytes(s, len);
	int64_t found = HTAB_FIND(&p->str_tab, h, &pos,
				  p->strs[idx].len == len && memcmp(p->strs[idx].s, s, len) == 0);
	if (found >= 0)
		return (uint32_t)found;

	char *copy = pool_alloc(&p->pool, len + 1);
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	xgrow((void **)&p->strs, &p->cap_strs, p->nstrs + 1, sizeof(*p->strs));
	uint32_t id = (uint32_t)p->nstrs++;
	p->strs[id].s = copy;
	p->strs[id].len = (uint32_t)len;
	htab_insert(&p->str_tab, pos, h, id);
	return id;
}

uint32_t prof_str(struct prof *p, const char *s)
{
	if (!s)
		return 0;
	return prof_strn(p, s, strlen(s));
}

const char *prof_string(const struct prof *p, uint32_t id, size_t *lenp)
{
	if (id >= p->nstrs) {
		if (lenp)
			*lenp = 0;
		return NULL;
	}
	if (lenp)
		*lenp = p->strs[id].len;
	return p->strs[id].s;
}

size_t prof_nstrings(const struct prof *p)
{
	return p->nstrs;
}

/* --- metadata --- */

void prof_set_sample_types(struct prof *p, const struct prof_value_type *types, size_t n)
{
	if (n > PROF_MAX_VALUES)
		n = PROF_MAX_VALUES;
	for (size_t i = 0; i < n; i++)
		p->types[i] = types[i];
	p->ntypes = n;
}

size_t prof_sample_types(const struct prof *p, const struct prof_value_type **types)
{
	if (types)
		*types = p->types;
	return p->ntypes;
}

void prof_set_period(struct prof *p, struct prof_value_type type, int64_t period)
{
	p->period_type = type;
	p->period = period;
}

void prof_get_period(const struct prof *p, struct prof_value_type *type, int64_t *period)
{
	if (type)
		*type = p->period_type;
	if (period)
		*period = p->period;
}

void prof_set_time(struct prof *p, int64_t time_nanos, int64_t duration_nanos)
{
	p->time_nanos = time_nanos;
	p->duration_nanos = duration_nanos;
}

void prof_get_time(const struct prof *p, int64_t *time_nanos, int64_t *duration_nanos)
{
	if (time_nanos)
		*time_nanos = p->time_nanos;
	if (duration_nanos)
		*duration_nanos = p->duration_nanos;
}

static void add_comment_id(struct prof *p, uint32_t id)
{
	xgrow((void **)&p->comments, &p->cap_comments, p->ncomments + 1, sizeof(*p->comments));
	p->comments[p->ncomments++] = id;
}

void prof_add_comment(struct prof *p, const char *text)
{
	add_comment_id(p, prof_str(p, text));
}

size_t prof_comments(const struct prof *p, const uint32_t **ids)
{
	if (ids)
		*ids = p->comments;
	return p->ncomments;
}

void prof_set_default_sample_type(struct prof *p, uint32_t type)
{
	p->default_type = type;
}

uint32_t prof_default_sample_type(const struct prof *p)
{
	return p->default_type;
}

/* --- mappings, functions, locations --- */

uint64_t prof_add_mapping(struct prof *p, const struct prof_mapping *m)
{
	uint32_t pos;
	uint64_t h64 = hash_word(hash_word(hash_word(hash_word(0x6d61, m->start), m->limit),
					   m->offset),
				 m->filename);
	uint32_t h = hash_final(h64);
	int64_t found = HTAB_FIND(&p->map_tab, h, &pos,
				  p->maps[idx].start == m->start && p->maps[idx].limit == m->limit &&
					  p->maps[idx].offset == m->offset &&
					  p->maps[idx].filename == m->filename);
	if (found >= 0)
		return (uint64_t)found + 1;

	xgrow((void **)&p->maps, &p->cap_maps, p->nmaps + 1, sizeof(*p->maps));
	uint32_t i = (uint32_t)p->nmaps++;
	p->maps[i] = *m;
	p->maps[i].id = (uint64_t)i + 1;
	htab_insert(&p->map_tab, pos, h, i);
	return (uint64_t)i + 1;
}

uint64_t prof_add_function(struct prof *p, uint32_t name, uint32_t system_name,
			   uint32_t filename, int64_t start_line)
{
	uint32_t pos;
	uint64_t h64 = hash_word(hash_word(0x666e, (uint64_t)name << 32 | system_name),
				 (uint64_t)filename);
	uint32_t h = hash_final(hash_word(h64, (uint64_t)start_line));
	int64_t found = HTAB_FIND(&p->func_tab, h, &pos,
				  p->funcs[idx].name == name && p->funcs[idx].system_name == system_name &&
					  p->funcs[idx].filename == filename &&
					  p->funcs[idx].start_line == start_line);
	if (found >= 0)
		return (uint64_t)found + 1;

	xgrow((void **)&p->funcs, &p->cap_funcs, p->nfuncs + 1, sizeof(*p->funcs));
	uint32_t i = (uint32_t)p->nfuncs++;
	struct prof_function *f = &p->funcs[i];
	f->id = (uint64_t)i + 1;
	f->name = name;
	f->system_name = system_name;
	f->filename = filename;
	f->start_line = start_line;
	htab_insert(&p->func_tab, pos, h, i);
	return f->id;
}

static bool lines_equal(const struct prof_line *a, const struct prof_line *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].function != b[i].function || a[i].line != b[i].line)
			return false;
	return true;
}

uint64_t prof_add_location(struct prof *p, uint64_t mapping, uint64_t address,
			   const struct prof_line *lines, size_t nlines)
{
	uint32_t pos;

	if (!lines)
		nlines = 0;
	if (nlines > UINT32_MAX)
		nlines = UINT32_MAX;
	uint64_t h64 = hash_word(hash_word(hash_word(0x6c6f, mapping), address), nlines);
	for (size_t i = 0; i < nlines; i++)
		h64 = hash_word(hash_word(h64, lines[i].function), (uint64_t)lines[i].line);
	uint32_t h = hash_final(h64);
	int64_t found = HTAB_FIND(&p->loc_tab, h, &pos,
				  p->locs[idx].mapping == mapping && p->locs[idx].address == address &&
					  p->locs[idx].nlines == nlines &&
					  lines_equal(p->locs[idx].lines, lines, nlines));
	if (found >= 0)
		return (uint64_t)found + 1;

	struct prof_line *copy = NULL;
	if (nlines) {
		copy = pool_alloc(&p->pool, nlines * sizeof(*copy));
		memcpy(copy, lines, nlines * sizeof(*copy));
	}
	xgrow((void **)&p->locs, &p->cap_locs, p->nlocs + 1, sizeof(*p->locs));
	uint32_t i = (uint32_t)p->nlocs++;
	struct prof_location *l = &p->locs[i];
	l->id = (uint64_t)i + 1;
	l->mapping = mapping;
	l->address = address;
	l->nlines = (uint32_t)nlines;
	l->lines = copy;
	l->is_folded = 0;
	htab_insert(&p->loc_tab, pos, h, i);
	return l->id;
}

/* --- samples --- */

/* Label order: (key, str, num), then num_unit so that equal-looking labels with
 * different units stay distinct. */
static inline int label_cmp(const struct prof_label *a, const struct prof_label *b)
{
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->str != b->str)
		return a->str < b->str ? -1 : 1;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	if (a->num_unit != b->num_unit)
		return a->num_unit < b->num_unit ? -1 : 1;
	return 0;
}

static int label_qsort_cmp(const void *a, const void *b)
{
	return label_cmp(a, b);
}

static void sort_labels(struct prof_label *l, size_t n)
{
	if (n > 16) {
		qsort(l, n, sizeof(*l), label_qsort_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct prof_label t = l[i];
		size_t j = i;

		while (j > 0 && label_cmp(&l[j - 1], &t) > 0) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = t;
	}
}

static bool sample_equal(const struct prof_sample *s, const uint64_t *locs, uint32_t nlocs,
			 const struct prof_label *labels, uint32_t nlabels)
{
	if (s->nlocs != nlocs || s->nlabels != nlabels)
		return false;
	if (nlocs && memcmp(s->locs, locs, nlocs * sizeof(*locs)) != 0)
		return false;
	for (uint32_t i = 0; i < nlabels; i++)
		if (label_cmp(&s->labels[i], &labels[i]) != 0)
			return false;
	return true;
}

static size_t nvalues(const struct prof *p)
{
	return p->ntypes ? p->ntypes : 1;
}

void prof_add_sample(struct prof *p, const uint64_t *locs, size_t nlocs,
		     const int64_t *values, const struct prof_label *labels, size_t nlabels)
{
	uint32_t pos;

	if (!locs)
		nlocs = 0;
	if (!labels)
		nlabels = 0;
	if (nlocs > UINT32_MAX)
		nlocs = UINT32_MAX;
	if (nlabels > UINT32_MAX)
		nlabels = UINT32_MAX;

	struct prof_label *lab = NULL;
	if (nlabels) {
		if (nlabels > p->cap_lab_scratch)
			xgrow((void **)&p->lab_scratch, &p->cap_lab_scratch, nlabels,
			      sizeof(*p->lab_scratch));
		lab = p->lab_scratch;
		for (size_t i = 0; i < nlabels; i++) {
			/* Field by field: the copy's padding stays as allocated, and
			 * comparisons never look at it. */
			lab[i].key = labels[i].key;
			lab[i].str = labels[i].str;
			lab[i].num = labels[i].num;
			lab[i].num_unit = labels[i].num_unit;
		}
		sort_labels(lab, nlabels);
	}

	/* Four independent lanes: the multiply chain of one lane would be the
	 * bottleneck on deep stacks. */
	uint64_t h64 = hash_word(hash_word(0x7361, nlocs), nlabels);
	uint64_t h1 = 1, h2 = 2, h3 = 3;
	size_t i4 = nlocs & ~(size_t)3;
	for (size_t i = 0; i < i4; i += 4) {
		h64 = hash_word(h64, locs[i]);
		h1 = hash_word(h1, locs[i + 1]);
		h2 = hash_word(h2, locs[i + 2]);
		h3 = hash_word(h3, locs[i + 3]);
	}
	for (size_t i = i4; i < nlocs; i++)
		h64 = hash_word(h64, locs[i]);
	h64 = hash_word(hash_word(hash_word(h64, h1), h2), h3);
	for (size_t i = 0; i < nlabels; i++) {
		h64 = hash_word(h64, (uint64_t)lab[i].key << 32 | lab[i].str);
		h64 = hash_word(h64, (uint64_t)lab[i].num);
		h64 = hash_word(h64, lab[i].num_unit);
	}
	uint32_t h = hash_final(h64);

	int64_t found = HTAB_FIND(&p->sample_tab, h, &pos,
				  sample_equal(&p->samples[idx], locs, (uint32_t)nlocs, lab,
					       (uint32_t)nlabels));
	struct prof_sample *s;
	if (found >= 0) {
		s = &p->samples[found];
	} else {
		uint64_t *lcopy = NULL;
		struct prof_label *labcopy = NULL;

		if (nlocs) {
			lcopy = pool_alloc(&p->sample_pool, nlocs * sizeof(*lcopy));
			memcpy(lcopy, locs, nlocs * sizeof(*lcopy));
		}
		if (nlabels) {
			labcopy = pool_alloc(&p->sample_pool, nlabels * sizeof(*labcopy));
			memcpy(labcopy, lab, nlabels * sizeof(*labcopy));
		}
		xgrow((void **)&p->samples, &p->cap_samples, p->nsamples + 1, sizeof(*p->samples));
		uint32_t i = (uint32_t)p->nsamples++;
		s = &p->samples[i];
		memset(s, 0, sizeof(*s));
		s->nlocs = (uint32_t)nlocs;
		s->nlabels = (uint32_t)nlabels;
		s->locs = lcopy;
		s->labels = labcopy;
		htab_insert(&p->sample_tab, pos, h, i);
	}
	if (values) {
		size_t n = nvalues(p);
		for (size_t i = 0; i < n; i++)
			s->values[i] += values[i];
	}
}

/* --- read access --- */

size_t prof_nmappings(const struct prof *p)
{
	return p->nmaps;
}

const struct prof_mapping *prof_mapping_at(const struct prof *p, size_t i)
{
	return i < p->nmaps ? &p->maps[i] : NULL;
}

size_t prof_nfunctions(const struct prof *p)
{
	return p->nfuncs;
}

const struct prof_function *prof_function_at(const struct prof *p, size_t i)
{
	return i < p->nfuncs ? &p->funcs[i] : NULL;
}

size_t prof_nlocations(const struct prof *p)
{
	return p->nlocs;
}

const struct prof_location *prof_location_at(const struct prof *p, size_t i)
{
	return i < p->nlocs ? &p->locs[i] : NULL;
}

size_t prof_nsamples(const struct prof *p)
{
	return p->nsamples;
}

int prof_sample_at(const struct prof *p, size_t i, struct prof_sample *out)
{
	if (i >= p->nsamples)
		return -ERANGE;
	*out = p->samples[i];
	return 0;
}

int64_t prof_total(const struct prof *p, size_t col)
{
	uint64_t sum = 0; /* unsigned: wraps instead of overflowing */

	if (col >= PROF_MAX_VALUES)
		return 0;
	for (size_t i = 0; i < p->nsamples; i++)
		sum += (uint64_t)p->samples[i].values[col];
	return (int64_t)sum;
}

/* --- whole-profile operations --- */

void prof_reset_samples(struct prof *p)
{
	for (size_t i = 0; i < p->nsamples; i++)
		memset(p->samples[i].values, 0, sizeof(p->samples[i].values));
}

void prof_clear_samples(struct prof *p)
{
	pool_free(&p->sample_pool);
	htab_free(&p->sample_tab);
	htab_init(&p->sample_tab);
	free(p->samples);
	p->samples = NULL;
	p->nsamples = 0;
	p->cap_samples = 0;
}

void prof_merge(struct prof *dst, const struct prof *src)
{
	if (dst == src)
		return;

	/* Strings first: everything else refers to them. */
	uint32_t *smap = xmalloc(src->nstrs * sizeof(*smap));
	for (size_t i = 0; i < src->nstrs; i++)
		smap[i] = prof_strn(dst, src->strs[i].s, src->strs[i].len);
#define S(id) ((id) < src->nstrs ? smap[id] : 0)

	/* Value columns: by (type, unit) name when both sides name them. */
	int colmap[PROF_MAX_VALUES];
	if (dst->ntypes == 0 && src->ntypes > 0 && dst->nsamples == 0) {
		for (size_t j = 0; j < src->ntypes; j++) {
			dst->types[j].type = S(src->types[j].type);
			dst->types[j].unit = S(src->types[j].unit);
		}
		dst->ntypes = src->ntypes;
	}
	for (size_t j = 0; j < PROF_MAX_VALUES; j++)
		colmap[j] = (int)j;
	if (dst->ntypes > 0 && src->ntypes > 0) {
		for (size_t j = 0; j < PROF_MAX_VALUES; j++) {
			colmap[j] = -1;
			if (j >= src->ntypes)
				continue;
			for (size_t k = 0; k < dst->ntypes; k++) {
				if (dst->types[k].type == S(src->types[j].type) &&
				    dst->types[k].unit == S(src->types[j].unit)) {
					colmap[j] = (int)k;
					break;
				}
			}
		}
	}

	if (dst->period_type.type == 0 && dst->period_type.unit == 0 && dst->period == 0) {
		dst->period_type.type = S(src->period_type.type);
		dst->period_type.unit = S(src->period_type.unit);
		dst->period = src->period;
	}
	if (dst->default_type == 0)
		dst->default_type = S(src->default_type);
	for (size_t i = 0; i < src->ncomments; i++) {
		uint32_t c = S(src->comments[i]);
		bool have = false;

		for (size_t k = 0; k < dst->ncomments && !have; k++)
			have = dst->comments[k] == c;
		if (!have)
			add_comment_id(dst, c);
	}
	if (src->time_nanos || src->duration_nanos) {
		if (dst->time_nanos == 0 && dst->duration_nanos == 0) {
			dst->time_nanos = src->time_nanos;
			dst->duration_nanos = src->duration_nanos;
		} else {
			int64_t start = GP_MIN(dst->time_nanos, src->time_nanos);
			int64_t end = GP_MAX(dst->time_nanos + dst->duration_nanos,
					     src->time_nanos + src->duration_nanos);
			dst->time_nanos = start;
			dst->duration_nanos = end - start;
		}
	}

	/* Id maps are indexed by source id; slot 0 stays 0 ("none"). */
	uint64_t *mmap = xcalloc(src->nmaps + 1, sizeof(*mmap));
	for (size_t i = 0; i < src->nmaps; i++) {
		struct prof_mapping m = src->maps[i];

		m.filename = S(m.filename);
		m.build_id = S(m.build_id);
		mmap[i + 1] = prof_add_mapping(dst, &m);
	}
	uint64_t *fmap = xcalloc(src->nfuncs + 1, sizeof(*fmap));
	for (size_t i = 0; i < src->nfuncs; i++) {
		const struct prof_function *f = &src->funcs[i];

		fmap[i + 1] = prof_add_function(dst, S(f->name), S(f->system_name), S(f->filename),
						f->start_line);
	}
	uint64_t *lmap = xcalloc(src->nlocs + 1, sizeof(*lmap));
	struct prof_line *lines = NULL;
	size_t cap_lines = 0;
	for (size_t i = 0; i < src->nlocs; i++) {
		const struct prof_location *l = &src->locs[i];

		xgrow((void **)&lines, &cap_lines, l->nlines, sizeof(*lines));
		for (size_t k = 0; k < l->nlines; k++) {
			uint64_t fid = l->lines[k].function;
			lines[k].function = fid <= src->nfuncs ? fmap[fid] : 0;
			lines[k].line = l->lines[k].line;
		}
		uint64_t mid = l->mapping <= src->nmaps ? mmap[l->mapping] : 0;
		lmap[i + 1] = prof_add_location(dst, mid, l->address, lines, l->nlines);
		if (l->is_folded)
			dst->locs[lmap[i + 1] - 1].is_folded = 1;
	}
	free(lines);

	uint64_t *slocs = NULL;
	size_t cap_slocs = 0;
	struct prof_label *slab = NULL;
	size_t cap_slab = 0;
	for (size_t i = 0; i < src->nsamples; i++) {
		const struct prof_sample *s = &src->samples[i];
		int64_t v[PROF_MAX_VALUES] = {0};

		xgrow((void **)&slocs, &cap_slocs, s->nlocs, sizeof(*slocs));
		xgrow((void **)&slab, &cap_slab, s->nlabels, sizeof(*slab));
		for (size_t k = 0; k < s->nlocs; k++)
			slocs[k] = s->locs[k] <= src->nlocs ? lmap[s->locs[k]] : 0;
		for (size_t k = 0; k < s->nlabels; k++) {
			slab[k].key = S(s->labels[k].key);
			slab[k].str = S(s->labels[k].str);
			slab[k].num = s->labels[k].num;
			slab[k].num_unit = S(s->labels[k].num_unit);
		}
		for (size_t j = 0; j < PROF_MAX_VALUES; j++)
			if (colmap[j] >= 0)
				v[colmap[j]] += s->values[j];
		prof_add_sample(dst, slocs, s->nlocs, v, slab, s->nlabels);
	}
#undef S
	free(slocs);
	free(slab);
	free(lmap);
	free(fmap);
	free(mmap);
	free(smap);
}

struct prof *prof_clone(const struct prof *p)
{
	struct prof *c = prof_new();

	/* Merging into an empty profile re-adds every entry in order, so every id stays
	 * the same: the source holds no duplicates to fold. */
	prof_merge(c, p);
	c->ntypes = p->ntypes;
	memcpy(c->types, p->types, sizeof(c->types));
	c->period_type = p->period_type;
	c->period = p->period;
	c->time_nanos = p->time_nanos;
	c->duration_nanos = p->duration_nanos;
	c->default_type = p->default_type;
	free(c->comments);
	c->comments = NULL;
	c->ncomments = c->cap_comments = 0;
	for (size_t i = 0; i < p->ncomments; i++)
		add_comment_id(c, p->comments[i]);
	return c;
}
