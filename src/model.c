/* model.c: flat profile, call trees, callers and label shares of a profile under focus
 * filters; the semantics follow go tool pprof (github.com/google/pprof internal/report:
 * flat = value where the function is the leaf, cum = value of samples with the function
 * anywhere on the stack, counted once per sample). */
#include "config.h"
#include "gotop/model.h"
#include "gotop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- a small open-addressing map from 64-bit keys to 64-bit values --- */

struct hmap {
	uint64_t *keys, *vals;
	uint8_t *used;
	size_t cap, n;
};

static uint64_t *hmap_get(struct hmap *h, uint64_t key, int insert, int *created)
{
	size_t i;

	if (created)
		*created = 0;
	if (insert && (h->n + 1) * 4 > h->cap * 3) {
		struct hmap old = *h;
		size_t j;

		h->cap = old.cap ? old.cap * 2 : 256;
		h->keys = xcalloc(h->cap, sizeof(*h->keys));
		h->vals = xcalloc(h->cap, sizeof(*h->vals));
		h->used = xcalloc(h->cap, 1);
		h->n = 0;
		for (j = 0; j < old.cap; j++)
			if (old.used[j])
				*hmap_get(h, old.keys[j], 1, NULL) = old.vals[j];
		free(old.keys);
		free(old.vals);
		free(old.used);
	}
	if (!h->cap)
		return NULL;
	for (i = util_mix64(key) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
		if (!h->used[i]) {
			if (!insert)
				return NULL;
			h->used[i] = 1;
			h->keys[i] = key;
			h->vals[i] = 0;
			h->n++;
			if (created)
				*created = 1;
			return &h->vals[i];
		}
		if (h->keys[i] == key)
			return &h->vals[i];
	}
}

static void hmap_free(struct hmap *h)
{
	free(h->keys);
	free(h->vals);
	free(h->used);
	memset(h, 0, sizeof(*h));
}

/* --- the model --- */

struct lfilter {                 /* a label filter resolved to string ids */
	uint32_t key;
	uint32_t str;            /* 0: numeric */
	int64_t num;
	int never;               /* names a key or value the profile does not hold */
};

struct model {
	const struct prof *p;
	int by_line;
	int vcol;

	struct model_fn *fns;
	size_t nfns, capfns;
	struct hmap names;       /* name hash -> fn index + 1 (collisions probe hash + 1) */
	char **synth;            /* names made up for locations without lines */
	size_t nsynth, capsynth;

	/* Per location (index id - 1): its frames outermost first. */
	size_t *loc_off;
	uint32_t *loc_fn;
	int64_t *loc_line;

	/* Samples with a nonzero value. Their stacks, frames outermost (root) first, are
	 * stored once per distinct stack (the profile interns them; most samples share one
	 * with others that differ in labels, thread or goroutine): sample k's frames are
	 * fr[soff[stk[k]]] up to fr[soff[stk[k] + 1]]. A frame is an index into loc_fn /
	 * loc_line (4 bytes, not a copy: the model is rebuilt every refresh). */
	size_t ns;
	uint32_t *sidx;
	int64_t *val;
	uint64_t *cnt;
	uint32_t *stk;
	size_t *soff, nstk;
	uint32_t *fr;

	/* Filters. */
	uint8_t **fmask;         /* per function filter: which functions match */
	enum model_filter_kind *fkind;
	size_t nfn_filters;
	struct lfilter *lf;      /* sorted by key */
	size_t nlf;
	uint8_t *pass;
	struct model_totals tot;
};

/* The function of frame j. */
#define FR_FN(m, j) ((m)->loc_fn[(m)->fr[j]])
/* Sample k's frames: [FR_BEGIN, FR_END). */
#define FR_BEGIN(m, k) ((m)->soff[(m)->stk[k]])
#define FR_END(m, k) ((m)->soff[(m)->stk[k] + 1])

static uint32_t fn_intern(struct model *m, const char *name, size_t len, const char *file,
			  const char *module)
{
	uint64_t h = util_hash(name, len, 0x6d6f64656cULL), probe = h;
	uint64_t *slot;
	int created;

	for (;;) {
		slot = hmap_get(&m->names, probe, 1, &created);
		if (created)
			break;
		{
			const struct model_fn *f = &m->fns[*slot - 1];

			if (f->name_len == len && !memcmp(f->name, name, len))
				return (uint32_t)(*slot - 1);
		}
		probe++;
	}
	xgrow((void **)&m->fns, &m->capfns, m->nfns + 1, sizeof(*m->fns));
	m->fns[m->nfns].name = name;
	m->fns[m->nfns].name_len = len;
	m->fns[m->nfns].file = file && *file ? file : NULL;
	m->fns[m->nfns].module = module && *module ? module : NULL;
	m->fns[m->nfns].hash = h;
	*slot = m->nfns + 1;
	return (uint32_t)m->nfns++;
}

static void build_locations(struct model *m)
{
	const struct prof *p = m->p;
	size_t nl = prof_nlocations(p), i, total = 0, cap = 0;

	m->loc_off = xcalloc(nl + 1, sizeof(*m->loc_off));
	for (i = 0; i < nl; i++) {
		const struct prof_location *l = prof_location_at(p, i);
		const struct prof_mapping *mp = l->mapping ? prof_mapping_at(p, l->mapping - 1) : NULL;
		const char *module = mp ? prof_string(p, mp->filename, NULL) : NULL;
		size_t k, n = l->nlines ? l->nlines : 1;

		m->loc_off[i] = total;
		xgrow((void **)&m->loc_fn, &cap, total + n, sizeof(*m->loc_fn));
		m->loc_line = xrealloc(m->loc_line, cap * sizeof(*m->loc_line));
		if (!l->nlines) {
			char *s = xasprintf("0x%llx", (unsigned long long)l->address);

			xgrow((void **)&m->synth, &m->capsynth, m->nsynth + 1, sizeof(*m->synth));
			m->synth[m->nsynth++] = s;
			m->loc_fn[total] = fn_intern(m, s, strlen(s), NULL, module);
			m->loc_line[total++] = 0;
			continue;
		}
		/* lines[0] is the innermost inlined function: outermost first means reversed. */
		for (k = l->nlines; k-- > 0;) {
			const struct prof_line *ln = &l->lines[k];
			const struct prof_function *f =
				ln->function ? prof_function_at(p, ln->function - 1) : NULL;
			size_t len = 0;
			const char *name = f ? prof_string(p, f->name, &len) : NULL;
			const char *file = f ? prof_string(p, f->filename, NULL) : NULL;

			if (!name || !len) {
				name = "??";
				len = 2;
			}
			m->loc_fn[total] = fn_intern(m, name, len, file, module);
			m->loc_line[total++] = ln->line;
		}
	}
	m->loc_off[nl] = total;
}

struct model *model_new(const struct prof *p, int by_line)
{
	struct model *m = xcalloc(1, sizeof(*m));
	const struct prof_value_type *types;
	size_t nsamp = prof_nsamples(p), i, nfr = 0, capfr = 0, nl = prof_nlocations(p), capst = 0;
	struct hmap stacks = { 0 }; /* the profile's interned stack -> index + 1 in soff */

	m->p = p;
	m->by_line = by_line;
	m->vcol = prof_sample_types(p, &types) >= 2 ? 1 : 0;
	build_locations(m);

	if (nsamp >= UINT32_MAX || (m->loc_off && m->loc_off[nl] >= UINT32_MAX))
		fatal("profile too large");
	m->sidx = xcalloc(nsamp + 1, sizeof(*m->sidx));
	m->val = xcalloc(nsamp + 1, sizeof(*m->val));
	m->cnt = xcalloc(nsamp + 1, sizeof(*m->cnt));
	m->stk = xcalloc(nsamp + 1, sizeof(*m->stk));
	for (i = 0; i < nsamp; i++) {
		struct prof_sample s;
		size_t k;
		uint64_t *slot;
		int created;

		if (prof_sample_at(p, i, &s) || (!s.values[0] && !s.values[m->vcol]))
			continue;
		m->sidx[m->ns] = (uint32_t)i;
		m->val[m->ns] = s.values[m->vcol];
		m->cnt[m->ns] = (uint64_t)s.values[0];
		/* Equal stacks are one interned array (profile.h: samples point into shared
		 * tables), so the pointer and length identify the stack. */
		slot = hmap_get(&stacks, (uint64_t)(uintptr_t)s.locs ^ (uint64_t)s.nlocs << 48, 1,
				&created);
		if (!created) {
			m->stk[m->ns++] = (uint32_t)(*slot - 1);
			continue;
		}
		if (m->nstk >= UINT32_MAX - 1)
			fatal("profile too large");
		*slot = m->nstk + 1;
		m->stk[m->ns] = (uint32_t)m->nstk;
		xgrow((void **)&m->soff, &capst, m->nstk + 2, sizeof(*m->soff));
		m->soff[m->nstk++] = nfr;
		/* locs are leaf first: walk them backwards for outermost first. */
		for (k = s.nlocs; k-- > 0;) {
			uint64_t id = s.locs[k];
			size_t a, b;

			if (id == 0 || id > nl)
				continue;
			a = m->loc_off[id - 1];
			b = m->loc_off[id];
			xgrow((void **)&m->fr, &capfr, nfr + (b - a), sizeof(*m->fr));
			while (a < b)
				m->fr[nfr++] = (uint32_t)a++;
		}
		m->soff[m->nstk] = nfr;
		m->ns++;
	}
	hmap_free(&stacks);
	if (!m->soff)
		m->soff = xcalloc(1, sizeof(*m->soff));
	m->soff[m->nstk] = nfr;
	m->pass = xcalloc(m->ns + 1, 1);
	model_set_filters(m, NULL, 0);
	return m;
}

static void free_filters(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nfn_filters; i++)
		free(m->fmask[i]);
	free(m->fmask);
	free(m->fkind);
	free(m->lf);
	m->fmask = NULL;
	m->fkind = NULL;
	m->lf = NULL;
	m->nfn_filters = m->nlf = 0;
}

void model_free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	free_filters(m);
	for (i = 0; i < m->nsynth; i++)
		free(m->synth[i]);
	free(m->synth);
	free(m->fns);
	hmap_free(&m->names);
	free(m->loc_off);
	free(m->loc_fn);
	free(m->loc_line);
	free(m->sidx);
	free(m->val);
	free(m->cnt);
	free(m->stk);
	free(m->soff);
	free(m->fr);
	free(m->pass);
	free(m);
}

const struct prof *model_prof(const struct model *m)
{
	return m->p;
}

size_t model_nfuncs(const struct model *m)
{
	return m->nfns;
}

const struct model_fn *model_fn(const struct model *m, uint32_t i)
{
	return i < m->nfns ? &m->fns[i] : NULL;
}

long model_find_fn(const struct model *m, const char *name, size_t len)
{
	uint64_t probe = util_hash(name, len, 0x6d6f64656cULL);
	struct hmap *h = (struct hmap *)&m->names;
	uint64_t *slot;

	while ((slot = hmap_get(h, probe, 0, NULL))) {
		const struct model_fn *f = &m->fns[*slot - 1];

		if (f->name_len == len && !memcmp(f->name, name, len))
			return (long)(*slot - 1);
		probe++;
	}
	return -1;
}

#define NO_KEY UINT32_MAX

/* The string id of the len bytes at s (len 0: up to the NUL) in the profile (0 is ""),
 * or NO_KEY when it holds no such string. */
static uint32_t find_string(const struct prof *p, const char *s, size_t len)
{
	size_t n = prof_nstrings(p), i, l;

	if (!len)
		len = strlen(s);

	if (!len)
		return 0;
	for (i = 1; i < n; i++) {
		const char *t = prof_string(p, (uint32_t)i, &l);

		if (t && l == len && !memcmp(t, s, len))
			return (uint32_t)i;
	}
	return NO_KEY;
}

static int lf_cmp(const void *a, const void *b)
{
	const struct lfilter *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

static int label_matches(const struct prof_sample *s, const struct lfilter *f)
{
	uint32_t i;

	if (f->never)
		return 0;
	for (i = 0; i < s->nlabels; i++) {
		const struct prof_label *l = &s->labels[i];

		if (l->key != f->key)
			continue;
		if (f->str ? l->str == f->str : (!l->str && l->num == f->num))
			return 1;
	}
	return 0;
}

/* Whether sample k passes, ignoring label filters on except_key (NO_KEY: none). */
static int sample_passes(const struct model *m, size_t k, uint32_t except_key)
{
	size_t i, j;

	for (i = 0; i < m->nfn_filters; i++) {
		int hit = 0;

		for (j = FR_BEGIN(m, k); j < FR_END(m, k) && !hit; j++)
			hit = m->fmask[i][FR_FN(m, j)];
		if (m->fkind[i] == MODEL_FOCUS ? !hit : hit)
			return 0;
	}
	if (m->nlf) {
		struct prof_sample s;

		if (prof_sample_at(m->p, m->sidx[k], &s))
			return 0;
		for (i = 0; i < m->nlf;) {
			/* The filters on the key being split are left out (faceting). */
			int skip = except_key != NO_KEY && m->lf[i].key == except_key, any = 0;

			for (j = i; j < m->nlf && m->lf[j].key == m->lf[i].key; j++)
				if (!any && !skip)
					any = label_matches(&s, &m->lf[j]);
			if (!any && !skip)
				return 0;
			i = j;
		}
	}
	return 1;
}

void model_set_filters(struct model *m, const struct model_filter *f, size_t n)
{
	size_t i, k;

	free_filters(m);
	for (i = 0; i < n; i++) {
		if (f[i].kind == MODEL_LABEL) {
			struct lfilter lf = { 0, 0, f[i].num, 0 };

			lf.key = f[i].key ? find_string(m->p, f[i].key, f[i].key_len) : NO_KEY;
			if (f[i].str) {
				/* An empty string value is stored as "\"\"" by the aggregator. */
				lf.str = find_string(m->p, f[i].str, f[i].str_len);
				lf.never = lf.str == NO_KEY || lf.str == 0;
			}
			lf.never |= lf.key == NO_KEY;
			m->lf = xrealloc(m->lf, (m->nlf + 1) * sizeof(*m->lf));
			m->lf[m->nlf++] = lf;
		} else {
			uint8_t *mask = xcalloc(m->nfns + 1, 1);
			const char *s = f[i].str ? f[i].str : "";
			size_t len = f[i].str_len ? f[i].str_len : strlen(s);

			for (k = 0; k < m->nfns; k++) {
				const struct model_fn *fn = &m->fns[k];

				mask[k] = f[i].exact ? (fn->name_len == len && !memcmp(fn->name, s, len))
						     : memmem(fn->name, fn->name_len, s, len) != NULL;
			}
			m->fmask = xrealloc(m->fmask, (m->nfn_filters + 1) * sizeof(*m->fmask));
			m->fkind = xrealloc(m->fkind, (m->nfn_filters + 1) * sizeof(*m->fkind));
			m->fmask[m->nfn_filters] = mask;
			m->fkind[m->nfn_filters++] = f[i].kind;
		}
	}
	if (m->nlf)
		qsort(m->lf, m->nlf, sizeof(*m->lf), lf_cmp);
	memset(&m->tot, 0, sizeof(m->tot));
	for (k = 0; k < m->ns; k++) {
		m->pass[k] = (uint8_t)sample_passes(m, k, NO_KEY);
		m->tot.all_value += m->val[k];
		m->tot.all_count += m->cnt[k];
		if (m->pass[k]) {
			m->tot.value += m->val[k];
			m->tot.count += m->cnt[k];
		}
	}
}

void model_totals(const struct model *m, struct model_totals *t)
{
	*t = m->tot;
}

/* --- flat --- */

size_t model_flat(struct model *m, struct model_flat **rowsp)
{
	struct model_flat *rows = NULL;
	size_t nrows = 0, cap = 0, k, j;
	size_t *stamp = NULL, capst = 0;
	int64_t *best = NULL;
	size_t capbest = 0;
	struct hmap idx = { 0 }, lines = { 0 };

	for (k = 0; k < m->ns; k++) {
		if (!m->pass[k])
			continue;
		for (j = FR_BEGIN(m, k); j < FR_END(m, k); j++) {
			uint32_t fn = FR_FN(m, j);
			int64_t line = m->loc_line[m->fr[j]];
			uint64_t key = m->by_line ? ((uint64_t)fn << 32 | (uint32_t)line) : fn;
			int created;
			uint64_t *slot = hmap_get(&idx, key, 1, &created);
			struct model_flat *r;

			if (created) {
				xgrow((void **)&rows, &cap, nrows + 1, sizeof(*rows));
				xgrow((void **)&stamp, &capst, nrows + 1, sizeof(*stamp));
				xgrow((void **)&best, &capbest, nrows + 1, sizeof(*best));
				memset(&rows[nrows], 0, sizeof(rows[nrows]));
				rows[nrows].fn = fn;
				rows[nrows].line = line;
				stamp[nrows] = 0;
				best[nrows] = INT64_MIN;
				*slot = nrows++;
			}
			r = &rows[*slot];
			if (stamp[*slot] != k + 1) {
				/* Once per sample, however often the function recurs. */
				stamp[*slot] = k + 1;
				r->total += m->val[k];
				r->total_n += m->cnt[k];
			}
			if (j + 1 == FR_END(m, k)) {
				r->self += m->val[k];
				r->self_n += m->cnt[k];
				if (!m->by_line) {
					uint64_t *acc = hmap_get(&lines, (uint64_t)fn << 32 | (uint32_t)line, 1, NULL);

					*acc += (uint64_t)m->val[k];
					if ((int64_t)*acc > best[*slot]) {
						best[*slot] = (int64_t)*acc;
						r->line = line;
					}
				}
			}
		}
	}
	hmap_free(&idx);
	hmap_free(&lines);
	free(stamp);
	free(best);
	*rowsp = rows;
	return nrows;
}

/* --- trees --- */

struct tree_impl {
	struct model_tree pub;
	size_t cap;
	uint32_t *kidbuf;
	const struct model *m;
};

static uint32_t tree_add(struct tree_impl *t, uint32_t parent, uint32_t fn)
{
	struct model_node *n;

	xgrow((void **)&t->pub.nodes, &t->cap, t->pub.n + 1, sizeof(*t->pub.nodes));
	n = &t->pub.nodes[t->pub.n];
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	if (t->pub.n) {
		const struct model_node *p = &t->pub.nodes[parent];

		n->depth = p->depth + 1;
		n->id = util_mix64(p->id * 0x100000001b3ULL ^ t->m->fns[fn].hash);
	}
	return (uint32_t)t->pub.n++;
}

static uint32_t tree_child(struct tree_impl *t, struct hmap *kids, uint32_t parent, uint32_t fn)
{
	int created;
	uint64_t *slot = hmap_get(kids, (uint64_t)parent << 32 | fn, 1, &created);

	if (created)
		*slot = tree_add(t, parent, fn);
	return (uint32_t)*slot;
}

static int kid_cmp(const void *a, const void *b, void *arg)
{
	const struct tree_impl *sort_tree = arg;
	const struct model_node *x = &sort_tree->pub.nodes[*(const uint32_t *)a];
	const struct model_node *y = &sort_tree->pub.nodes[*(const uint32_t *)b];
	const struct model_fn *fx, *fy;
	size_t l;
	int c;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	fx = &sort_tree->m->fns[x->fn];
	fy = &sort_tree->m->fns[y->fn];
	l = GP_MIN(fx->name_len, fy->name_len);
	c = memcmp(fx->name, fy->name, l);
	if (c)
		return c;
	return (fx->name_len > fy->name_len) - (fx->name_len < fy->name_len);
}

static void tree_finish(struct tree_impl *t)
{
	size_t i, *pos;
	struct model_node *nodes = t->pub.nodes;

	t->kidbuf = xcalloc(t->pub.n + 1, sizeof(*t->kidbuf));
	pos = xcalloc(t->pub.n + 1, sizeof(*pos));
	for (i = 1; i < t->pub.n; i++)
		nodes[nodes[i].parent].nkids++;
	/* Children of each node are contiguous in kidbuf. */
	{
		size_t acc = 0;

		for (i = 0; i < t->pub.n; i++) {
			pos[i] = acc;
			acc += nodes[i].nkids;
		}
	}
	for (i = 1; i < t->pub.n; i++)
		t->kidbuf[pos[nodes[i].parent]++] = (uint32_t)i;
	for (i = 0; i < t->pub.n; i++) {
		uint32_t *k = t->kidbuf + pos[i] - nodes[i].nkids;

		nodes[i].kids = k;
	}
	for (i = 0; i < t->pub.n; i++)
		if (nodes[i].nkids > 1)
			qsort_r((void *)nodes[i].kids, nodes[i].nkids, sizeof(uint32_t), kid_cmp, t);
	free(pos);
}

static struct tree_impl *tree_new(const struct model *m)
{
	struct tree_impl *t = xcalloc(1, sizeof(*t));

	t->m = m;
	return t;
}

struct model_tree *model_tree_topdown(struct model *m)
{
	struct tree_impl *t = tree_new(m);
	struct hmap kids = { 0 };
	size_t k, j;

	tree_add(t, 0, 0);
	t->pub.nodes[0].id = 0x746f70646f776eULL;
	for (k = 0; k < m->ns; k++) {
		uint32_t cur = 0;

		if (!m->pass[k])
			continue;
		t->pub.nodes[0].total += m->val[k];
		t->pub.nodes[0].total_n += m->cnt[k];
		for (j = FR_BEGIN(m, k); j < FR_END(m, k); j++) {
			struct model_node *n;

			cur = tree_child(t, &kids, cur, FR_FN(m, j));
			n = &t->pub.nodes[cur];
			n->total += m->val[k];
			n->total_n += m->cnt[k];
		}
		t->pub.nodes[cur].self += m->val[k];
		t->pub.nodes[cur].self_n += m->cnt[k];
	}
	hmap_free(&kids);
	tree_finish(t);
	return &t->pub;
}

struct model_tree *model_tree_callers(struct model *m, uint32_t fn)
{
	struct tree_impl *t = tree_new(m);
	struct hmap kids = { 0 };
	size_t k, j;

	tree_add(t, 0, fn);
	if (fn < m->nfns)
		t->pub.nodes[0].id = util_mix64(m->fns[fn].hash ^ 0x63616c6c657273ULL);
	for (k = 0; fn < m->nfns && k < m->ns; k++) {
		size_t a = FR_BEGIN(m, k), b = FR_END(m, k), pos;
		uint32_t cur = 0;

		if (!m->pass[k] || a == b)
			continue;
		for (pos = b; pos-- > a;)
			if (FR_FN(m, pos) == fn)
				break;
		if (pos == (size_t)-1 || pos < a || FR_FN(m, pos) != fn)
			continue;
		t->pub.nodes[0].total += m->val[k];
		t->pub.nodes[0].total_n += m->cnt[k];
		if (pos + 1 == b) {
			t->pub.nodes[0].self += m->val[k];
			t->pub.nodes[0].self_n += m->cnt[k];
		}
		for (j = pos; j-- > a;) {
			struct model_node *n;

			cur = tree_child(t, &kids, cur, FR_FN(m, j));
			n = &t->pub.nodes[cur];
			n->total += m->val[k];
			n->total_n += m->cnt[k];
		}
		/* A caller node's self: stacks that start there (the outermost frame). */
		if (cur) {
			t->pub.nodes[cur].self += m->val[k];
			t->pub.nodes[cur].self_n += m->cnt[k];
		}
	}
	hmap_free(&kids);
	tree_finish(t);
	return &t->pub;
}

void model_tree_free(struct model_tree *pub)
{
	struct tree_impl *t = (struct tree_impl *)pub;

	if (!t)
		return;
	free(t->pub.nodes);
	free(t->kidbuf);
	free(t);
}

/* --- labels --- */

static int key_cmp(const void *a, const void *b)
{
	const struct model_key *x = a, *y = b;
	size_t l = GP_MIN(x->len, y->len);
	int c = memcmp(x->key, y->key, l);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

size_t model_label_keys(struct model *m, struct model_key **keysp)
{
	struct hmap idx = { 0 };
	struct model_key *keys = NULL;
	size_t n = 0, cap = 0, k;
	uint32_t i;

	for (k = 0; k < m->ns; k++) {
		struct prof_sample s;

		if (prof_sample_at(m->p, m->sidx[k], &s))
			continue;
		for (i = 0; i < s.nlabels; i++) {
			int created;
			uint64_t *slot = hmap_get(&idx, s.labels[i].key, 1, &created);

			if (created) {
				xgrow((void **)&keys, &cap, n + 1, sizeof(*keys));
				memset(&keys[n], 0, sizeof(keys[n]));
				keys[n].key = prof_string(m->p, s.labels[i].key, &keys[n].len);
				if (!keys[n].key)
					keys[n].key = "";
				keys[n].numeric = !s.labels[i].str;
				*slot = n++;
			}
			/* A key counts once per sample even when repeated. */
			if (i == 0 || s.labels[i - 1].key != s.labels[i].key)
				keys[*slot].count += m->cnt[k];
		}
	}
	hmap_free(&idx);
	if (n)
		qsort(keys, n, sizeof(*keys), key_cmp);
	*keysp = keys;
	return n;
}

static int value_cmp(const void *a, const void *b)
{
	const struct model_value *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	if (x->str && y->str) {
		size_t l = GP_MIN(x->len, y->len);
		int c = memcmp(x->str, y->str, l);

		return c ? c : (x->len > y->len) - (x->len < y->len);
	}
	return (x->num > y->num) - (x->num < y->num);
}

size_t model_label_values(struct model *m, const char *key, size_t key_len,
			  struct model_value **valsp, struct model_totals *t)
{
	uint32_t ksid = find_string(m->p, key, key_len);
	struct hmap byname = { 0 }, bynum = { 0 }, top = { 0 }, sets = { 0 };
	struct model_value *vals = NULL;
	int64_t *repv = NULL, *topv = NULL;
	size_t n = 0, cap = 0, caprep = 0, captop = 0, k;
	uint32_t i;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < m->ns; k++) {
		struct prof_sample s;
		uint32_t leaf;

		t->all_value += m->val[k];
		t->all_count += m->cnt[k];
		if (ksid == NO_KEY || !sample_passes(m, k, ksid) || prof_sample_at(m->p, m->sidx[k], &s))
			continue;
		t->value += m->val[k];
		t->count += m->cnt[k];
		leaf = FR_END(m, k) > FR_BEGIN(m, k) ? FR_FN(m, FR_END(m, k) - 1) : UINT32_MAX;
		/* The sample's other string labels as one set (labels are sorted, so equal sets
		 * hash alike): a goroutine's row shows the set it spent most under. */
		uint64_t set = 0x9e3779b97f4a7c15ULL;
		for (i = 0; i < s.nlabels; i++)
			if (s.labels[i].str && s.labels[i].key != ksid)
				set = util_mix64(set ^ ((uint64_t)s.labels[i].key << 32 | s.labels[i].str));
		for (i = 0; i < s.nlabels; i++) {
			const struct prof_label *l = &s.labels[i];
			int created;
			uint64_t *slot;
			struct model_value *v;

			if (l->key != ksid)
				continue;
			slot = l->str ? hmap_get(&byname, l->str, 1, &created)
				      : hmap_get(&bynum, (uint64_t)l->num, 1, &created);
			if (created) {
				xgrow((void **)&vals, &cap, n + 1, sizeof(*vals));
				xgrow((void **)&repv, &caprep, n + 1, sizeof(*repv));
				xgrow((void **)&topv, &captop, n + 1, sizeof(*topv));
				memset(&vals[n], 0, sizeof(vals[n]));
				if (l->str) {
					vals[n].str = prof_string(m->p, l->str, &vals[n].len);
					if (!vals[n].str)
						vals[n].str = "";
				}
				vals[n].num = l->num;
				vals[n].top_fn = -1;
				repv[n] = INT64_MIN;
				topv[n] = INT64_MIN;
				*slot = n++;
			}
			v = &vals[*slot];
			v->value += m->val[k];
			v->n += m->cnt[k];
			uint64_t *inset = hmap_get(&sets, util_mix64(set ^ (uint64_t)*slot), 1, NULL);

			*inset += (uint64_t)m->val[k];
			if ((int64_t)*inset > repv[*slot]) {
				repv[*slot] = (int64_t)*inset;
				v->rep = m->sidx[k];
			}
			if (leaf != UINT32_MAX) {
				uint64_t *acc = hmap_get(&top, (uint64_t)*slot << 32 | leaf, 1, NULL);

				*acc += (uint64_t)m->val[k];
				if ((int64_t)*acc > topv[*slot]) {
					topv[*slot] = (int64_t)*acc;
					v->top_fn = leaf;
				}
			}
			break; /* one value per key and sample */
		}
	}
	hmap_free(&byname);
	hmap_free(&bynum);
	hmap_free(&top);
	hmap_free(&sets);
	free(repv);
	free(topv);
	if (n)
		qsort(vals, n, sizeof(*vals), value_cmp);
	*valsp = vals;
	return n;
}
