/* profile.c: the in-memory pprof profile: interned strings and deduplicated mappings,
 * functions, locations and samples (open-addressing hash tables over append-only arrays
 * that snapshots share with the profile they were taken from). */
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
 * Append-only arrays whose entries never move: segment k holds SEG_FIRST << k entries,
 * so an index maps to (segment, offset) with one count of leading zeros. Snapshots read
 * entries below their own counts while the writer appends above them.
 */
#define SEG_BITS 8
#define SEG_MAX 32

struct segv {
	void *seg[SEG_MAX];
};

static inline void *segv_at(const struct segv *v, size_t i, size_t size)
{
	uint64_t j = (uint64_t)i + (1u << SEG_BITS);
	unsigned hb = 63 - (unsigned)__builtin_clzll(j);

	return (char *)v->seg[hb - SEG_BITS] + (j - ((uint64_t)1 << hb)) * size;
}

/* The slot of entry i, allocating its segment the first time. */
static void *segv_slot(struct segv *v, size_t i, size_t size)
{
	uint64_t j = (uint64_t)i + (1u << SEG_BITS);
	unsigned hb = 63 - (unsigned)__builtin_clzll(j);

	if (hb - SEG_BITS >= SEG_MAX)
		fatal("profile table too large");
	/* fatal() does not return (cppcheck does not see C11 noreturn) */
	// cppcheck-suppress arrayIndexOutOfBoundsCond
	if (!v->seg[hb - SEG_BITS])
		v->seg[hb - SEG_BITS] = xmalloc(size << hb);
	return segv_at(v, i, size);
}

static void segv_free(struct segv *v)
{
	for (size_t k = 0; k < SEG_MAX; k++)
		free(v->seg[k]);
	memset(v, 0, sizeof(*v));
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
 * The profile. Its tables (strings, mappings, functions, locations, sample keys) are
 * append-only and shared with its snapshots (prof_snapshot); every profile has its own
 * counts, sample values and metadata, so a snapshot sees the tables as they were.
 */
struct pstr {
	const char *s; /* NUL-terminated copy in the pool (may also hold NULs) */
	uint32_t len;
};

/* What makes a sample distinct: its stack and labels. Values live in each profile. */
struct skey {
	uint32_t nlocs, nlabels;
	uint32_t stack; /* prof_sample.stack */
	const uint32_t *locs; /* 4-byte ids: the stacks are most of a large profile's memory */
	const struct prof_label *labels;
};

/* Interned byte arrays: samples with the same stack, or the same labels, point at one
 * copy (most samples differ from another only in one of the two). */
struct blob {
	const void *p;
	uint32_t len;
};

struct blobs {
	struct segv ents;
	uint32_t n;
	struct htab tab;
};

struct prof_tables {
	int refs;                /* the writing profile and its snapshots */
	struct pool pool;        /* strings, location lines, stacks, label sets */
	struct segv strs, maps, funcs, locs, keys;
	struct blobs stacks, labelsets;
	/* Lookups, used only by the one profile that adds entries. */
	struct htab str_tab, map_tab, func_tab, loc_tab, sample_tab;
};

struct prof {
	struct prof_tables *t;
	int snapshot;            /* must copy the tables before adding (copy on write) */
	size_t nstrs, nmaps, nfuncs, nlocs, nsamples;
	int64_t *vals;           /* sample i's values at [i * stride] */
	size_t stride, cap_vals;

	/* Sorted copy of the labels of the prof_add_sample call in progress, and its
	 * location ids narrowed to the stored width. */
	struct prof_label *lab_scratch;
	size_t cap_lab_scratch;
	uint32_t *loc_scratch;
	size_t cap_loc_scratch;

	struct prof_value_type types[PROF_MAX_VALUES];
	size_t ntypes;
	struct prof_value_type period_type;
	int64_t period;
	int64_t time_nanos, duration_nanos;
	uint32_t *comments;
	size_t ncomments, cap_comments;
	uint32_t default_type;
	uint64_t main_mapping;
};

static inline struct pstr *str_at(const struct prof_tables *t, size_t i)
{
	return segv_at(&t->strs, i, sizeof(struct pstr));
}

static inline struct prof_mapping *map_at(const struct prof_tables *t, size_t i)
{
	return segv_at(&t->maps, i, sizeof(struct prof_mapping));
}

static inline struct prof_function *func_at(const struct prof_tables *t, size_t i)
{
	return segv_at(&t->funcs, i, sizeof(struct prof_function));
}

static inline struct prof_location *loc_at(const struct prof_tables *t, size_t i)
{
	return segv_at(&t->locs, i, sizeof(struct prof_location));
}

static inline struct skey *key_at(const struct prof_tables *t, size_t i)
{
	return segv_at(&t->keys, i, sizeof(struct skey));
}

/* The pool's copy of len bytes at data, shared with every earlier equal array; its index
 * among b's arrays (in order of first use) in *index when index is not NULL. */
static const void *blob_intern(struct blobs *b, struct pool *pl, const void *data, size_t len,
			       uint32_t *index)
{
	uint32_t pos, h = hash_bytes(data, len);
	int64_t found = HTAB_FIND(&b->tab, h, &pos,
				  ((struct blob *)segv_at(&b->ents, idx, sizeof(struct blob)))->len == len &&
					  memcmp(((struct blob *)segv_at(&b->ents, idx, sizeof(struct blob)))->p,
						 data, len) == 0);
	if (index)
		*index = found >= 0 ? (uint32_t)found : b->n;
	if (found >= 0)
		return ((struct blob *)segv_at(&b->ents, (size_t)found, sizeof(struct blob)))->p;

	void *copy = pool_alloc(pl, len);
	memcpy(copy, data, len);
	struct blob *e = segv_slot(&b->ents, b->n, sizeof(*e));
	e->p = copy;
	e->len = (uint32_t)len;
	htab_insert(&b->tab, pos, h, b->n++);
	return copy;
}

static void blobs_free(struct blobs *b)
{
	segv_free(&b->ents);
	htab_free(&b->tab);
}

static struct prof_tables *tables_new(void)
{
	struct prof_tables *t = xcalloc(1, sizeof(*t));

	t->refs = 1;
	htab_init(&t->str_tab);
	htab_init(&t->map_tab);
	htab_init(&t->func_tab);
	htab_init(&t->loc_tab);
	htab_init(&t->sample_tab);
	htab_init(&t->stacks.tab);
	htab_init(&t->labelsets.tab);
	return t;
}

/* Snapshots are freed on other threads than the writer: the count is atomic. */
static void tables_put(struct prof_tables *t)
{
	if (!t || __atomic_sub_fetch(&t->refs, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	pool_free(&t->pool);
	segv_free(&t->strs);
	segv_free(&t->maps);
	segv_free(&t->funcs);
	segv_free(&t->locs);
	segv_free(&t->keys);
	htab_free(&t->str_tab);
	htab_free(&t->map_tab);
	htab_free(&t->func_tab);
	htab_free(&t->loc_tab);
	htab_free(&t->sample_tab);
	blobs_free(&t->stacks);
	blobs_free(&t->labelsets);
	free(t);
}

struct prof *prof_new(void)
{
	struct prof *p = xcalloc(1, sizeof(*p));

	p->t = tables_new();
	p->stride = 1;
	prof_strn(p, "", 0); /* profile.proto: string_table[0] must always be "" */
	return p;
}

void prof_free(struct prof *p)
{
	if (!p)
		return;
	tables_put(p->t);
	free(p->vals);
	free(p->lab_scratch);
	free(p->loc_scratch);
	free(p->comments);
	free(p);
}

/* A snapshot about to be added to becomes a deep copy of itself first: the tables it
 * shares belong to the profile that writes them. */
static void own_tables(struct prof *p)
{
	struct prof *c;

	if (!p->snapshot)
		return;
	c = prof_clone(p);
	tables_put(p->t);
	free(p->vals);
	free(p->lab_scratch);
	free(p->loc_scratch);
	free(p->comments);
	*p = *c;
	free(c);
}

static size_t nvalues(const struct prof *p)
{
	return p->ntypes ? p->ntypes : 1;
}

/* Keeps one value column per sample type (one when none are set). */
static void set_stride(struct prof *p)
{
	size_t n = nvalues(p), i, k;
	int64_t *v;

	if (n == p->stride)
		return;
	v = xcalloc(p->nsamples ? p->nsamples * n : 1, sizeof(*v));
	for (i = 0; i < p->nsamples; i++)
		for (k = 0; k < n && k < p->stride; k++)
			v[i * n + k] = p->vals[i * p->stride + k];
	free(p->vals);
	p->vals = v;
	p->cap_vals = p->nsamples ? p->nsamples * n : 1;
	p->stride = n;
}

/* --- strings --- */

uint32_t prof_strn(struct prof *p, const char *s, size_t len)
{
	struct prof_tables *t;
	uint32_t pos;

	own_tables(p);
	t = p->t;
	if (len > UINT32_MAX - 1)
		len = UINT32_MAX - 1; /* a 4 GiB symbol is garbage: keep a prefix */
	if (!s) {
		if (len)
			return 0;
		s = "";
	}
	uint32_t h = hash_bytes(s, len);
	int64_t found = HTAB_FIND(&t->str_tab, h, &pos,
				  str_at(t, idx)->len == len && memcmp(str_at(t, idx)->s, s, len) == 0);
	if (found >= 0)
		return (uint32_t)found;

	char *copy = pool_alloc(&t->pool, len + 1);
	if (len)
		memcpy(copy, s, len);
	copy[len] = '\0';
	uint32_t id = (uint32_t)p->nstrs;
	struct pstr *e = segv_slot(&t->strs, id, sizeof(*e));
	e->s = copy;
	e->len = (uint32_t)len;
	p->nstrs++;
	htab_insert(&t->str_tab, pos, h, id);
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
	const struct pstr *e = str_at(p->t, id);
	if (lenp)
		*lenp = e->len;
	return e->s;
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
	set_stride(p);
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
	uint32_t id = prof_str(p, text);

	add_comment_id(p, id);
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

void prof_set_main_mapping(struct prof *p, uint64_t mapping)
{
	p->main_mapping = mapping;
}

uint64_t prof_main_mapping(const struct prof *p)
{
	return p->main_mapping;
}

/* --- mappings, functions, locations --- */

uint64_t prof_add_mapping(struct prof *p, const struct prof_mapping *m)
{
	struct prof_tables *t;
	uint32_t pos;

	own_tables(p);
	t = p->t;
	uint64_t h64 = hash_word(hash_word(hash_word(hash_word(0x6d61, m->start), m->limit),
					   m->offset),
				 m->filename);
	uint32_t h = hash_final(h64);
	int64_t found = HTAB_FIND(&t->map_tab, h, &pos,
				  map_at(t, idx)->start == m->start && map_at(t, idx)->limit == m->limit &&
					  map_at(t, idx)->offset == m->offset &&
					  map_at(t, idx)->filename == m->filename);
	if (found >= 0)
		return (uint64_t)found + 1;

	uint32_t i = (uint32_t)p->nmaps;
	struct prof_mapping *e = segv_slot(&t->maps, i, sizeof(*e));
	*e = *m;
	e->id = (uint64_t)i + 1;
	p->nmaps++;
	htab_insert(&t->map_tab, pos, h, i);
	return (uint64_t)i + 1;
}

uint64_t prof_add_function(struct prof *p, uint32_t name, uint32_t system_name,
			   uint32_t filename, int64_t start_line)
{
	struct prof_tables *t;
	uint32_t pos;

	own_tables(p);
	t = p->t;
	uint64_t h64 = hash_word(hash_word(0x666e, (uint64_t)name << 32 | system_name),
				 (uint64_t)filename);
	uint32_t h = hash_final(hash_word(h64, (uint64_t)start_line));
	int64_t found = HTAB_FIND(&t->func_tab, h, &pos,
				  func_at(t, idx)->name == name && func_at(t, idx)->system_name == system_name &&
					  func_at(t, idx)->filename == filename &&
					  func_at(t, idx)->start_line == start_line);
	if (found >= 0)
		return (uint64_t)found + 1;

	uint32_t i = (uint32_t)p->nfuncs;
	struct prof_function *f = segv_slot(&t->funcs, i, sizeof(*f));
	f->id = (uint64_t)i + 1;
	f->name = name;
	f->system_name = system_name;
	f->filename = filename;
	f->start_line = start_line;
	p->nfuncs++;
	htab_insert(&t->func_tab, pos, h, i);
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
	struct prof_tables *t;
	uint32_t pos;

	own_tables(p);
	t = p->t;
	if (!lines)
		nlines = 0;
	if (nlines > UINT32_MAX)
		nlines = UINT32_MAX;
	uint64_t h64 = hash_word(hash_word(hash_word(0x6c6f, mapping), address), nlines);
	for (size_t i = 0; i < nlines; i++)
		h64 = hash_word(hash_word(h64, lines[i].function), (uint64_t)lines[i].line);
	uint32_t h = hash_final(h64);
	int64_t found = HTAB_FIND(&t->loc_tab, h, &pos,
				  loc_at(t, idx)->mapping == mapping && loc_at(t, idx)->address == address &&
					  loc_at(t, idx)->nlines == nlines &&
					  lines_equal(loc_at(t, idx)->lines, lines, nlines));
	if (found >= 0)
		return (uint64_t)found + 1;

	struct prof_line *copy = NULL;
	if (nlines) {
		copy = pool_alloc(&t->pool, nlines * sizeof(*copy));
		memcpy(copy, lines, nlines * sizeof(*copy));
	}
	uint32_t i = (uint32_t)p->nlocs;
	struct prof_location *l = segv_slot(&t->locs, i, sizeof(*l));
	l->id = (uint64_t)i + 1;
	l->mapping = mapping;
	l->address = address;
	l->nlines = (uint32_t)nlines;
	l->lines = copy;
	l->is_folded = 0;
	p->nlocs++;
	htab_insert(&t->loc_tab, pos, h, i);
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

static bool sample_equal(const struct skey *s, const uint32_t *locs, uint32_t nlocs,
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

void prof_add_sample(struct prof *p, const uint64_t *locs, size_t nlocs,
		     const int64_t *values, const struct prof_label *labels, size_t nlabels)
{
	prof_add_to_sample(p, locs, nlocs, values, labels, nlabels, 1);
}

long prof_add_to_sample(struct prof *p, const uint64_t *locs64, size_t nlocs,
			const int64_t *values, const struct prof_label *labels, size_t nlabels,
			int create)
{
	struct prof_tables *t;
	uint32_t pos, *locs;

	own_tables(p);
	t = p->t;
	if (!locs64)
		nlocs = 0;
	if (!labels)
		nlabels = 0;
	if (nlocs > UINT32_MAX)
		nlocs = UINT32_MAX;
	if (nlabels > UINT32_MAX)
		nlabels = UINT32_MAX;
	/* Location ids fit in 4 bytes: the location table holds fewer than 2^32 entries
	 * (htab_insert); a larger id names no location and is kept as 0 ("none"). */
	xgrow((void **)&p->loc_scratch, &p->cap_loc_scratch, nlocs + 1, sizeof(*p->loc_scratch));
	locs = p->loc_scratch;
	for (size_t i = 0; i < nlocs; i++)
		locs[i] = locs64[i] <= UINT32_MAX ? (uint32_t)locs64[i] : 0;

	struct prof_label *lab = NULL;
	if (nlabels) {
		if (nlabels > p->cap_lab_scratch)
			xgrow((void **)&p->lab_scratch, &p->cap_lab_scratch, nlabels,
			      sizeof(*p->lab_scratch));
		lab = p->lab_scratch;
		/* Zeroed padding: label sets are interned by their bytes. */
		memset(lab, 0, nlabels * sizeof(*lab));
		for (size_t i = 0; i < nlabels; i++) {
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

	int64_t found = HTAB_FIND(&t->sample_tab, h, &pos,
				  sample_equal(key_at(t, idx), locs, (uint32_t)nlocs, lab,
					       (uint32_t)nlabels));
	size_t si;
	if (found >= 0) {
		si = (size_t)found;
	} else if (!create) {
		return -1;
	} else {
		si = p->nsamples;
		struct skey *k = segv_slot(&t->keys, si, sizeof(*k));
		k->nlocs = (uint32_t)nlocs;
		k->nlabels = (uint32_t)nlabels;
		k->locs = NULL;
		k->stack = 0;
		if (nlocs) {
			k->locs = blob_intern(&t->stacks, &t->pool, locs, nlocs * sizeof(*locs),
					      &k->stack);
			k->stack++;
		}
		k->labels = nlabels ? blob_intern(&t->labelsets, &t->pool, lab,
						  nlabels * sizeof(*lab), NULL)
				    : NULL;
		xgrow((void **)&p->vals, &p->cap_vals, (si + 1) * p->stride, sizeof(*p->vals));
		memset(p->vals + si * p->stride, 0, p->stride * sizeof(*p->vals));
		p->nsamples++;
		htab_insert(&t->sample_tab, pos, h, (uint32_t)si);
	}
	if (values) {
		int64_t *v = p->vals + si * p->stride;

		/* unsigned: wraps instead of overflowing, as prof_total (values from a
		 * target's memory can be anything) */
		for (size_t i = 0; i < p->stride; i++)
			v[i] = (int64_t)((uint64_t)v[i] + (uint64_t)values[i]);
	}
	return (long)si;
}

int prof_add_values(struct prof *p, size_t i, const int64_t *values)
{
	int64_t *v;

	if (i >= p->nsamples)
		return -ERANGE;
	own_tables(p);
	v = p->vals + i * p->stride;
	for (size_t k = 0; k < p->stride; k++)
		v[k] += values[k];
	return 0;
}

/* --- read access --- */

size_t prof_nmappings(const struct prof *p)
{
	return p->nmaps;
}

const struct prof_mapping *prof_mapping_at(const struct prof *p, size_t i)
{
	return i < p->nmaps ? map_at(p->t, i) : NULL;
}

size_t prof_nfunctions(const struct prof *p)
{
	return p->nfuncs;
}

const struct prof_function *prof_function_at(const struct prof *p, size_t i)
{
	return i < p->nfuncs ? func_at(p->t, i) : NULL;
}

size_t prof_nlocations(const struct prof *p)
{
	return p->nlocs;
}

const struct prof_location *prof_location_at(const struct prof *p, size_t i)
{
	return i < p->nlocs ? loc_at(p->t, i) : NULL;
}

size_t prof_nsamples(const struct prof *p)
{
	return p->nsamples;
}

int prof_sample_at(const struct prof *p, size_t i, struct prof_sample *out)
{
	if (i >= p->nsamples)
		return -ERANGE;
	const struct skey *k = key_at(p->t, i);
	out->nlocs = k->nlocs;
	out->nlabels = k->nlabels;
	out->locs = k->locs;
	out->stack = k->stack;
	out->labels = k->labels;
	memset(out->values, 0, sizeof(out->values));
	memcpy(out->values, p->vals + i * p->stride, p->stride * sizeof(*p->vals));
	return 0;
}

const int64_t *prof_values(const struct prof *p, size_t *stride)
{
	*stride = p->stride;
	return p->nsamples ? p->vals : NULL;
}

int prof_same_tables(const struct prof *a, const struct prof *b)
{
	return a && b && a->t == b->t;
}

int prof_set_sample_values(struct prof *p, size_t i, const int64_t *values)
{
	if (i >= p->nsamples)
		return -ERANGE;
	memcpy(p->vals + i * p->stride, values, p->stride * sizeof(*p->vals));
	return 0;
}

int prof_sample_add(struct prof *p, size_t i, const uint32_t *locs, size_t nlocs,
		    const int64_t *add, size_t n)
{
	const struct skey *k;
	int64_t *v;

	if (i >= p->nsamples || n > p->stride)
		return -1;
	k = key_at(p->t, i);
	if (k->locs != locs || k->nlocs != nlocs)
		return -1;
	v = p->vals + i * p->stride;
	for (size_t c = 0; c < n; c++)
		v[c] = (int64_t)((uint64_t)v[c] + (uint64_t)add[c]);
	return 0;
}

int64_t prof_total(const struct prof *p, size_t col)
{
	uint64_t sum = 0; /* unsigned: wraps instead of overflowing */

	if (col >= p->stride)
		return 0;
	for (size_t i = 0; i < p->nsamples; i++)
		sum += (uint64_t)p->vals[i * p->stride + col];
	return (int64_t)sum;
}

/* --- whole-profile operations --- */

void prof_reset_samples(struct prof *p)
{
	if (p->nsamples)
		memset(p->vals, 0, p->nsamples * p->stride * sizeof(*p->vals));
}

struct prof *prof_snapshot(const struct prof *p)
{
	struct prof *c = xmalloc(sizeof(*c));
	size_t nv = p->nsamples * p->stride;

	*c = *p;
	c->snapshot = 1;
	__atomic_add_fetch(&p->t->refs, 1, __ATOMIC_ACQ_REL);
	c->vals = xmalloc((nv ? nv : 1) * sizeof(*c->vals));
	if (nv)
		memcpy(c->vals, p->vals, nv * sizeof(*c->vals));
	c->cap_vals = nv ? nv : 1;
	c->lab_scratch = NULL;
	c->cap_lab_scratch = 0;
	c->loc_scratch = NULL;
	c->cap_loc_scratch = 0;
	c->comments = NULL;
	c->ncomments = c->cap_comments = 0;
	for (size_t i = 0; i < p->ncomments; i++)
		add_comment_id(c, p->comments[i]);
	return c;
}

/* Where p's time span ends, held at the int64 range: both times may come from a decoded
 * file (the pprof fuzzer found INT64_MAX + a duration). */
static int64_t span_end(const struct prof *p)
{
	int64_t end;

	if (__builtin_add_overflow(p->time_nanos, p->duration_nanos, &end))
		end = p->duration_nanos > 0 ? INT64_MAX : INT64_MIN;
	return end;
}

/* Copying entries of src into dst: each src id maps to a dst id when first needed
 * (0: not yet; strings use NOT_MAPPED, since "" is id 0 on both sides), so that a copy of
 * some samples (prof_compact) takes only the strings, mappings, functions and locations
 * they use. */
#define NOT_MAPPED UINT32_MAX

struct xfer {
	struct prof *dst;
	const struct prof *src;
	uint32_t *smap;
	uint64_t *mmap, *fmap, *lmap; /* by src id; [0] stays 0 ("none") */
	struct prof_line *lines;
	size_t cap_lines;
	uint64_t *slocs;
	size_t cap_slocs;
	struct prof_label *slab;
	size_t cap_slab;
	int colmap[PROF_MAX_VALUES];
};

static void xfer_init(struct xfer *x, struct prof *dst, const struct prof *src)
{
	memset(x, 0, sizeof(*x));
	x->dst = dst;
	x->src = src;
	x->smap = xmalloc((src->nstrs ? src->nstrs : 1) * sizeof(*x->smap));
	memset(x->smap, 0xff, (src->nstrs ? src->nstrs : 1) * sizeof(*x->smap));
	x->mmap = xcalloc(src->nmaps + 1, sizeof(*x->mmap));
	x->fmap = xcalloc(src->nfuncs + 1, sizeof(*x->fmap));
	x->lmap = xcalloc(src->nlocs + 1, sizeof(*x->lmap));
}

static void xfer_free(struct xfer *x)
{
	free(x->smap);
	free(x->mmap);
	free(x->fmap);
	free(x->lmap);
	free(x->lines);
	free(x->slocs);
	free(x->slab);
}

static uint32_t xfer_str(struct xfer *x, uint32_t id)
{
	if (id >= x->src->nstrs)
		return 0;
	if (x->smap[id] == NOT_MAPPED) {
		const struct pstr *ps = str_at(x->src->t, id);

		x->smap[id] = prof_strn(x->dst, ps->s, ps->len);
	}
	return x->smap[id];
}

static uint64_t xfer_mapping(struct xfer *x, uint64_t id)
{
	if (id == 0 || id > x->src->nmaps)
		return 0;
	if (!x->mmap[id]) {
		struct prof_mapping m = *map_at(x->src->t, id - 1);

		m.filename = xfer_str(x, m.filename);
		m.build_id = xfer_str(x, m.build_id);
		x->mmap[id] = prof_add_mapping(x->dst, &m);
	}
	return x->mmap[id];
}

static uint64_t xfer_function(struct xfer *x, uint64_t id)
{
	if (id == 0 || id > x->src->nfuncs)
		return 0;
	if (!x->fmap[id]) {
		const struct prof_function *f = func_at(x->src->t, id - 1);

		x->fmap[id] = prof_add_function(x->dst, xfer_str(x, f->name), xfer_str(x, f->system_name),
						xfer_str(x, f->filename), f->start_line);
	}
	return x->fmap[id];
}

static uint64_t xfer_location(struct xfer *x, uint64_t id)
{
	const struct prof_location *l;
	uint64_t mid;

	if (id == 0 || id > x->src->nlocs)
		return 0;
	if (x->lmap[id])
		return x->lmap[id];
	l = loc_at(x->src->t, id - 1);
	/* Functions and the mapping first: their ids come in the order merge always gave. */
	mid = xfer_mapping(x, l->mapping);
	xgrow((void **)&x->lines, &x->cap_lines, l->nlines, sizeof(*x->lines));
	for (size_t k = 0; k < l->nlines; k++) {
		x->lines[k].function = xfer_function(x, l->lines[k].function);
		x->lines[k].line = l->lines[k].line;
	}
	x->lmap[id] = prof_add_location(x->dst, mid, l->address, x->lines, l->nlines);
	if (l->is_folded)
		loc_at(x->dst->t, x->lmap[id] - 1)->is_folded = 1;
	return x->lmap[id];
}

/* Adds src's sample i to dst with its values (by x->colmap); returns its dst index. */
static size_t xfer_sample(struct xfer *x, size_t i)
{
	const struct skey *s = key_at(x->src->t, i);
	const int64_t *sv = x->src->vals + i * x->src->stride;
	int64_t v[PROF_MAX_VALUES] = {0};

	xgrow((void **)&x->slocs, &x->cap_slocs, s->nlocs, sizeof(*x->slocs));
	xgrow((void **)&x->slab, &x->cap_slab, s->nlabels, sizeof(*x->slab));
	for (size_t k = 0; k < s->nlocs; k++)
		x->slocs[k] = xfer_location(x, s->locs[k]);
	for (size_t k = 0; k < s->nlabels; k++) {
		x->slab[k].key = xfer_str(x, s->labels[k].key);
		x->slab[k].str = xfer_str(x, s->labels[k].str);
		x->slab[k].num = s->labels[k].num;
		x->slab[k].num_unit = xfer_str(x, s->labels[k].num_unit);
	}
	for (size_t j = 0; j < x->src->stride; j++)
		if (x->colmap[j] >= 0)
			v[x->colmap[j]] += sv[j];
	return (size_t)prof_add_to_sample(x->dst, x->slocs, s->nlocs, v, x->slab, s->nlabels, 1);
}

/* Maps every string, mapping, function and location of src, in src order, strings first:
 * into an empty profile every id stays the same (prof_clone), as src holds no duplicates
 * to fold. */
static void xfer_all_entries(struct xfer *x)
{
	for (size_t i = 0; i < x->src->nstrs; i++)
		xfer_str(x, (uint32_t)i);
	for (size_t i = 1; i <= x->src->nmaps; i++)
		xfer_mapping(x, i);
	for (size_t i = 1; i <= x->src->nfuncs; i++)
		xfer_function(x, i);
	for (size_t i = 1; i <= x->src->nlocs; i++)
		xfer_location(x, i);
}

void prof_merge(struct prof *dst, const struct prof *src)
{
	struct xfer x;

	if (dst == src)
		return;
	xfer_init(&x, dst, src);
	xfer_all_entries(&x);
#define S(id) xfer_str(&x, id)

	/* Value columns: by (type, unit) name when both sides name them. */
	if (dst->ntypes == 0 && src->ntypes > 0 && dst->nsamples == 0) {
		struct prof_value_type vt[PROF_MAX_VALUES];

		for (size_t j = 0; j < src->ntypes; j++) {
			vt[j].type = S(src->types[j].type);
			vt[j].unit = S(src->types[j].unit);
		}
		prof_set_sample_types(dst, vt, src->ntypes);
	}
	for (size_t j = 0; j < PROF_MAX_VALUES; j++)
		x.colmap[j] = (int)j;
	if (dst->ntypes > 0 && src->ntypes > 0) {
		for (size_t j = 0; j < PROF_MAX_VALUES; j++) {
			x.colmap[j] = -1;
			if (j >= src->ntypes)
				continue;
			for (size_t k = 0; k < dst->ntypes; k++) {
				if (dst->types[k].type == S(src->types[j].type) &&
				    dst->types[k].unit == S(src->types[j].unit)) {
					x.colmap[j] = (int)k;
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
			int64_t end = GP_MAX(span_end(dst), span_end(src));

			dst->time_nanos = start;
			if (__builtin_sub_overflow(end, start, &dst->duration_nanos))
				dst->duration_nanos = INT64_MAX; /* only upwards: start <= both times */
		}
	}
#undef S

	for (size_t i = 0; i < src->nsamples; i++)
		xfer_sample(&x, i);
	xfer_free(&x);
}

struct prof *prof_compact(const struct prof *p, const uint8_t *keep, uint32_t *newidx)
{
	struct prof *c = prof_new();
	struct xfer x;

	xfer_init(&x, c, p);
	if (!keep)
		xfer_all_entries(&x);
	for (size_t j = 0; j < PROF_MAX_VALUES; j++)
		x.colmap[j] = (int)j;
	if (p->ntypes) {
		struct prof_value_type vt[PROF_MAX_VALUES];

		for (size_t j = 0; j < p->ntypes; j++) {
			vt[j].type = xfer_str(&x, p->types[j].type);
			vt[j].unit = xfer_str(&x, p->types[j].unit);
		}
		prof_set_sample_types(c, vt, p->ntypes);
	}
	c->period_type.type = xfer_str(&x, p->period_type.type);
	c->period_type.unit = xfer_str(&x, p->period_type.unit);
	c->period = p->period;
	c->time_nanos = p->time_nanos;
	c->duration_nanos = p->duration_nanos;
	c->default_type = xfer_str(&x, p->default_type);
	for (size_t i = 0; i < p->ncomments; i++)
		add_comment_id(c, xfer_str(&x, p->comments[i]));
	/* The main executable's mapping stays the first (prof_set_main_mapping). */
	c->main_mapping = xfer_mapping(&x, p->main_mapping);
	for (size_t i = 0; i < p->nsamples; i++) {
		if (keep && !keep[i]) {
			if (newidx)
				newidx[i] = UINT32_MAX;
			continue;
		}
		size_t k = xfer_sample(&x, i);
		if (newidx)
			newidx[i] = (uint32_t)k;
	}
	xfer_free(&x);
	return c;
}

struct rank {
	uint64_t key;            /* first << 63 | count */
	uint32_t idx;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return (x->idx < y->idx) - (x->idx > y->idx);
}

void prof_keep_heaviest(const struct prof *p, const uint8_t *first, uint8_t *keep)
{
	size_t n = p->nsamples, i;
	struct rank *r = xmalloc((n ? n : 1) * sizeof(*r));

	for (i = 0; i < n; i++) {
		int64_t c = p->vals[i * p->stride];

		r[i].key = c <= 0 ? 0 : (uint64_t)c & ((1ull << 63) - 1);
		if (first && first[i])
			r[i].key |= 1ull << 63;
		r[i].idx = (uint32_t)i;
	}
	qsort(r, n, sizeof(*r), rank_cmp);
	for (i = 0; i < n; i++)
		keep[r[i].idx] = i < n - n / 2;
	free(r);
}

struct prof *prof_clone(const struct prof *p)
{
	return prof_compact(p, NULL, NULL);
}
