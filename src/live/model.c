/* model.c: flat profile, call trees, callers and label shares of a profile under focus
 * filters; the semantics follow go tool pprof (github.com/google/pprof internal/report:
 * flat = value where the function is the leaf, cum = value of samples with the function
 * anywhere on the stack, counted once per sample). */
#include "config.h"
#include "gotop/model.h"
#include "gotop/hashmap.h"
#include "gotop/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the model --- */

struct lfilter {                 /* a label filter resolved to string ids */
	uint32_t key;
	uint32_t str;            /* 0: numeric */
	int64_t num;
	int never;               /* names a key or value the profile does not hold */
};

/* What each sample gives the shares of one label key (model_label_values). A sample's
 * labels never change (profile.h: entries are append-only), so this is worked out once
 * per sample, and a refresh only adds values up in arrays. */
struct kval {
	uint32_t str;            /* string id, 0 for a numeric value */
	int64_t num;
};

struct kcache {
	uint32_t ksid;           /* the key's string id */
	uint64_t used;           /* m->clock when last asked for */
	size_t n, cap;           /* samples covered */
	uint32_t *slot;          /* per sample: index into vals + 1; 0: the key is absent */
	uint32_t *grp;           /* per sample: its (value, other string labels) group */
	uint32_t *tgrp;          /* per sample: its (value, leaf function) group, or NONE */
	struct kval *vals;
	size_t nvals, capvals;
	struct hashmap byname, bynum;
	uint32_t *grp_slot;      /* per group: its value */
	size_t *grp_rep;         /* per group: its first sample */
	size_t ngrp, capgrp;
	struct hashmap grps;
	uint32_t *tg_slot, *tg_fn;
	size_t ntg, captg;
	struct hashmap tgs;
};

#define KCACHE_MAX 4 /* keys kept: the Labels view's, threads, goroutines, one more */
#define KCACHE_IDLE 30 /* updates (about seconds in the live UI) a key's cache outlives its use */
#define NONE UINT32_MAX

/* The stacks a kept view (the flat list, the top-down tree) covers, a prefix of m->act,
 * and the value and count it took of each: a refresh adds only what each stack gained,
 * so it walks only the stacks that got samples. */
struct kept {
	uint32_t *act;
	int64_t *sval;
	uint64_t *scnt;
	size_t n, capact, capsval, capscnt;
};

struct model {
	const struct prof *p;
	int by_line;
	int vcol;
	int col_req;             /* model_new_column's column, or -1: the profile's event */
	uint64_t clock;

	struct model_fn *fns;
	size_t nfns, capfns;
	struct hashmap names;       /* name hash -> fn index + 1 (collisions probe hash + 1) */
	char **synth;            /* names made up for locations without lines */
	size_t nsynth, capsynth;

	/* Per location (index id - 1): its frames outermost first. */
	size_t nl;               /* locations built */
	size_t *loc_off, caplocoff;
	uint32_t *loc_fn;
	int64_t *loc_line;
	size_t caplocfr;

	/* Every sample of the profile, by its index there: the values (read in place from
	 * the snapshot: VAL, CNT) and its stack. A stack is the profile's own interned
	 * array of location ids (most samples share one with others that differ in labels,
	 * thread or goroutine), by the profile's number for it: sample k's is
	 * sloc[stk[k]], snl[stk[k]] ids long. The model keeps no copy of it: on a large
	 * service the stacks are most of the memory, and stack_frames expands one into
	 * frames when a walk needs them. */
	size_t ns, capns;
	const int64_t *pv; /* p's values (prof_values), pstride a sample */
	size_t pstride;
	uint32_t *stk;
	const uint32_t **sloc;
	uint32_t *snl;
	size_t nstk, capsloc, capsnl;
	uint32_t *sfr;           /* stack_frames' result */
	size_t capsfr;

	/* Label keys of each sample, as an interned set (model_label_keys): a set is the
	 * sample's distinct keys, with whether the first sample of the set had a numeric
	 * value for each. */
	uint32_t *kset;          /* per sample */
	size_t capkset;
	uint32_t *ks_off;        /* set i: ks_key[ks_off[i]] up to ks_key[ks_off[i + 1]] */
	uint32_t *ks_key;
	uint8_t *ks_num;
	size_t nks, capksoff, capkskey, capksnum, nkskey;
	struct hashmap kss;

	struct kcache *kc[KCACHE_MAX];

	/* Filters. */
	uint8_t **fmask;         /* per function filter: which functions match */
	enum model_filter_kind *fkind;
	size_t nfn_filters;
	struct lfilter *lf;      /* sorted by key */
	size_t nlf;
	uint8_t *pass;           /* per sample: nonzero and passing the filters */
	size_t cappass;
	uint8_t *sfpass;         /* per stack: passes the function filters */
	size_t capsfpass;
	/* Per stack: the values of its passing samples, and the stacks that have some. */
	int64_t *sval;
	uint64_t *scnt;
	size_t capsval, capscnt;
	uint32_t *act;
	size_t nact, capact;
	struct model_totals tot;

	/* The last top-down tree (model_tree_topdown): its nodes with their values, the
	 * node each stack it covers ends at, and the values it took of each. A refresh
	 * whose stacks with passing samples begin with the same ones (the cumulative
	 * profile: stacks only get added) finds only the new stacks' nodes, and adds what
	 * each stack gained along parent links: finding each frame's node again was most
	 * of the tree's cost, and the tree most of the live UI thread's. */
	struct model_node *tc_nodes;
	size_t tc_n, tc_cap;
	struct hashmap tc_kids;     /* parent << 32 | fn -> node */
	struct kept tc_kept;
	uint32_t *tc_leaf;       /* per covered stack: its last frame's node (0: the root) */
	size_t tc_capleaf;

	/* The last flat profile (model_flat), kept with its values: the stacks it covers
	 * (a prefix of m->act) and the values it took of each. A refresh adds what each
	 * stack gained since, so only the stacks that got samples are walked, not every
	 * stack at every refresh of the live UI. */
	struct model_flat *fl_rows;
	size_t fl_n, fl_cap;
	uint32_t *fl_byfn;       /* !by_line: function -> row + 1 */
	size_t fl_nbyfn, fl_capbyfn;
	struct hashmap fl_idx;      /* by_line: fn << 32 | line -> row + 1 */
	struct hashmap fl_lines;    /* !by_line: fn << 32 | line -> its self value so far */
	int64_t *fl_best;        /* per row: the self value of its line (INT64_MIN: none) */
	uint32_t *fl_stamp;      /* per row: the walk (fl_gen) that last counted it */
	size_t fl_capbest, fl_capstamp;
	uint32_t fl_gen;
	struct kept fl_kept;
};

/* Stack s's frames, outermost first, as indexes into loc_fn / loc_line: its location ids
 * (leaf first) walked backwards, each location's frames in turn. In m->sfr, valid until
 * the next call; returns their number. Ids without a location built take no frame. */
static size_t stack_frames(struct model *m, size_t s)
{
	const uint32_t *ids = m->sloc[s];
	size_t k, n = 0;

	for (k = m->snl[s]; k-- > 0;) {
		uint32_t id = ids[k];
		size_t a, b;

		if (id == 0 || id > m->nl)
			continue;
		a = m->loc_off[id - 1];
		b = m->loc_off[id];
		if (n + (b - a) > m->capsfr)
			xgrow((void **)&m->sfr, &m->capsfr, n + (b - a), sizeof(*m->sfr));
		while (a < b)
			m->sfr[n++] = (uint32_t)a++;
	}
	return n;
}

/* The function of stack s's leaf frame (its innermost), or UINT32_MAX for no frame. */
static uint32_t stack_leaf_fn(const struct model *m, size_t s)
{
	const uint32_t *ids = m->sloc[s];

	for (size_t k = 0; k < m->snl[s]; k++) {
		uint32_t id = ids[k];

		if (id && id <= m->nl && m->loc_off[id] > m->loc_off[id - 1])
			return m->loc_fn[m->loc_off[id] - 1];
	}
	return UINT32_MAX;
}

/* Sample k's value (the view's column, vcol) and count (column 0), in the profile. They
 * are read in place, not copied into arrays of the model at every refresh (a pass over
 * all samples, and memory that grew with the profile). */
#define VAL(m, k) ((m)->pv[(size_t)(k) * (m)->pstride + (size_t)(m)->vcol])
#define CNT(m, k) ((uint64_t)(m)->pv[(size_t)(k) * (m)->pstride])
/* Whether sample k has a value: samples that have none (a decaying window's, those
 * zeroed) take no part. */
#define NONZERO(m, k) (CNT(m, k) || VAL(m, k))

static uint32_t fn_intern(struct model *m, const char *name, size_t len, const char *file,
			  const char *module)
{
	uint64_t h = util_hash(name, len, 0x6d6f64656cULL), probe = h;
	uint64_t *slot;
	int created;

	for (;;) {
		slot = hashmap_put(&m->names, probe, &created);
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

/* The frames of the locations the model has not seen yet. */
static void build_locations(struct model *m)
{
	const struct prof *p = m->p;
	size_t nl = prof_nlocations(p), i, total;

	if (nl <= m->nl && m->loc_off)
		return;
	xgrow((void **)&m->loc_off, &m->caplocoff, nl + 1, sizeof(*m->loc_off));
	total = m->nl ? m->loc_off[m->nl] : 0;
	for (i = m->nl; i < nl; i++) {
		const struct prof_location *l = prof_location_at(p, i);
		const struct prof_mapping *mp = l->mapping ? prof_mapping_at(p, l->mapping - 1) : NULL;
		const char *module = mp ? prof_string(p, mp->filename, NULL) : NULL;
		size_t k, n = l->nlines ? l->nlines : 1;

		m->loc_off[i] = total;
		if (total + n > m->caplocfr) {
			xgrow((void **)&m->loc_fn, &m->caplocfr, total + n, sizeof(*m->loc_fn));
			m->loc_line = xrealloc(m->loc_line, m->caplocfr * sizeof(*m->loc_line));
		}
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
	m->nl = nl;
	if (total >= UINT32_MAX)
		fatal("profile too large");
}

/* The label key set of sample s (model_label_keys). */
static uint32_t kset_of(struct model *m, const struct prof_sample *s)
{
	uint32_t keys[64], nk = 0, i;
	uint8_t num[64];
	uint64_t h = 0x6b657973ULL, *slot;
	int created;

	for (i = 0; i < s->nlabels && nk < 64; i++) {
		/* Labels are sorted by key: a key counts once per sample even when repeated. */
		if (i && s->labels[i - 1].key == s->labels[i].key)
			continue;
		keys[nk] = s->labels[i].key;
		num[nk++] = !s->labels[i].str;
		h = util_mix64(h ^ s->labels[i].key);
	}
	for (;; h++) {
		slot = hashmap_put(&m->kss, h, &created);
		if (created)
			break;
		i = (uint32_t)(*slot - 1);
		if (m->ks_off[i + 1] - m->ks_off[i] == nk &&
		    !memcmp(m->ks_key + m->ks_off[i], keys, nk * sizeof(*keys)))
			return i;
	}
	xgrow((void **)&m->ks_off, &m->capksoff, m->nks + 2, sizeof(*m->ks_off));
	xgrow((void **)&m->ks_key, &m->capkskey, m->nkskey + nk + 1, sizeof(*m->ks_key));
	xgrow((void **)&m->ks_num, &m->capksnum, m->nkskey + nk + 1, sizeof(*m->ks_num));
	if (!m->nks)
		m->ks_off[0] = 0;
	memcpy(m->ks_key + m->nkskey, keys, nk * sizeof(*keys));
	memcpy(m->ks_num + m->nkskey, num, nk);
	m->nkskey += nk;
	m->ks_off[m->nks + 1] = (uint32_t)m->nkskey;
	*slot = m->nks + 1;
	return (uint32_t)m->nks++;
}

/* Brings the model up to m->p: the new locations and samples, every sample's values. */
static void extend(struct model *m)
{
	const struct prof *p = m->p;
	size_t nsamp = prof_nsamples(p), i;

	build_locations(m);
	if (nsamp >= UINT32_MAX)
		fatal("profile too large");
	if (nsamp > m->capns)
		xgrow((void **)&m->stk, &m->capns, nsamp, sizeof(*m->stk));
	xgrow((void **)&m->kset, &m->capkset, nsamp + 1, sizeof(*m->kset));
	for (i = m->ns; i < nsamp; i++) {
		struct prof_sample s;
		uint32_t st;

		prof_sample_at(p, i, &s);
		m->kset[i] = kset_of(m, &s);
		/* The profile numbers its distinct stacks in order of first use (profile.h),
		 * and snapshots share the numbering: the model's stack index is that number. */
		st = s.stack;
		if (st >= UINT32_MAX - 1)
			fatal("profile too large");
		if (st >= m->nstk) {
			xgrow((void **)&m->sloc, &m->capsloc, (size_t)st + 1, sizeof(*m->sloc));
			xgrow((void **)&m->snl, &m->capsnl, (size_t)st + 1, sizeof(*m->snl));
			memset(m->sloc + m->nstk, 0, (st + 1 - m->nstk) * sizeof(*m->sloc));
			memset(m->snl + m->nstk, 0, (st + 1 - m->nstk) * sizeof(*m->snl));
			m->nstk = (size_t)st + 1;
		}
		if (!m->sloc[st]) {
			m->sloc[st] = s.locs;
			m->snl[st] = s.nlocs;
		}
		m->stk[i] = st;
	}
	m->ns = nsamp;
	m->pv = prof_values(p, &m->pstride);
	xgrow((void **)&m->pass, &m->cappass, nsamp + 1, 1);
	xgrow((void **)&m->sfpass, &m->capsfpass, m->nstk + 1, 1);
	xgrow((void **)&m->sval, &m->capsval, m->nstk + 1, sizeof(*m->sval));
	xgrow((void **)&m->scnt, &m->capscnt, m->nstk + 1, sizeof(*m->scnt));
	xgrow((void **)&m->act, &m->capact, m->nstk + 1, sizeof(*m->act));
}

static void kcache_free(struct kcache *c);
static void flat_reset(struct model *m);
static void kept_free(struct kept *k);

/* The value column: the one asked for when the profile has it, else the event's (1), or
 * the sample count when that is all there is. */
static int value_column(const struct prof *p, int col)
{
	const struct prof_value_type *types;
	size_t n = prof_sample_types(p, &types);

	if (col >= 0 && (size_t)col < n)
		return col;
	return n >= 2 ? 1 : 0;
}

struct model *model_new(const struct prof *p, int by_line)
{
	return model_new_column(p, by_line, -1);
}

struct model *model_new_column(const struct prof *p, int by_line, int col)
{
	struct model *m = xcalloc(1, sizeof(*m));

	m->p = p;
	m->by_line = by_line;
	m->col_req = col;
	m->vcol = value_column(p, col);
	extend(m);
	model_set_filters(m, NULL, 0);
	return m;
}

int model_update(struct model *m, const struct prof *p, int by_line, const struct model_filter *f,
		 size_t nf)
{
	size_t i;

	if (!prof_same_tables(m->p, p) || by_line != m->by_line ||
	    m->vcol != value_column(p, m->col_req) ||
	    prof_nsamples(p) < m->ns || prof_nlocations(p) < m->nl)
		return -1;
	m->p = p;
	extend(m);
	/* One pass over the samples with the caller's filters, not an update without them
	 * and a second pass to set them. */
	model_set_filters(m, f, nf);
	/* A key's cache not asked for in the last KCACHE_IDLE updates goes: a view the
	 * user left need not keep 12 bytes per sample. */
	m->clock++;
	for (i = 0; i < KCACHE_MAX; i++) {
		if (m->kc[i] && m->kc[i]->used + KCACHE_IDLE < m->clock) {
			kcache_free(m->kc[i]);
			m->kc[i] = NULL;
		}
	}
	return 0;
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

static void kcache_free(struct kcache *c)
{
	if (!c)
		return;
	free(c->slot);
	free(c->grp);
	free(c->tgrp);
	free(c->vals);
	hashmap_free(&c->byname);
	hashmap_free(&c->bynum);
	free(c->grp_slot);
	free(c->grp_rep);
	hashmap_free(&c->grps);
	free(c->tg_slot);
	free(c->tg_fn);
	hashmap_free(&c->tgs);
	free(c);
}

void model_free(struct model *m)
{
	size_t i;

	if (!m)
		return;
	free_filters(m);
	for (i = 0; i < m->nsynth; i++)
		free(m->synth[i]);
	for (i = 0; i < KCACHE_MAX; i++)
		kcache_free(m->kc[i]);
	free(m->synth);
	free(m->fns);
	hashmap_free(&m->names);
	free(m->loc_off);
	free(m->loc_fn);
	free(m->loc_line);
	free(m->stk);
	free(m->sloc);
	free(m->snl);
	free(m->sfr);
	free(m->kset);
	free(m->ks_off);
	free(m->ks_key);
	free(m->ks_num);
	hashmap_free(&m->kss);
	free(m->pass);
	free(m->sfpass);
	free(m->sval);
	free(m->scnt);
	free(m->act);
	free(m->tc_nodes);
	hashmap_free(&m->tc_kids);
	free(m->tc_leaf);
	kept_free(&m->tc_kept);
	flat_reset(m);
	free(m->fl_rows);
	free(m->fl_byfn);
	free(m->fl_best);
	free(m->fl_stamp);
	kept_free(&m->fl_kept);
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
	const uint64_t *slot;

	while ((slot = hashmap_get(&m->names, probe))) {
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

/* Whether stack s passes the function filters. */
static int stack_passes(struct model *m, size_t s)
{
	size_t i, j, n = m->nfn_filters ? stack_frames(m, s) : 0;

	for (i = 0; i < m->nfn_filters; i++) {
		int hit = 0;

		for (j = 0; j < n && !hit; j++)
			hit = m->fmask[i][m->loc_fn[m->sfr[j]]];
		if (m->fkind[i] == MODEL_FOCUS ? !hit : hit)
			return 0;
	}
	return 1;
}

/* Whether sample k passes, ignoring label filters on except_key (NO_KEY: none). */
static int sample_passes(const struct model *m, size_t k, uint32_t except_key)
{
	size_t i, j;

	if (!m->sfpass[m->stk[k]])
		return 0;
	if (m->nlf) {
		struct prof_sample s;

		if (prof_sample_at(m->p, k, &s))
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
	for (k = 0; k < m->nstk; k++) {
		m->sfpass[k] = (uint8_t)stack_passes(m, k);
		m->sval[k] = 0;
		m->scnt[k] = 0;
	}
	memset(&m->tot, 0, sizeof(m->tot));
	m->nact = 0;
	for (k = 0; k < m->ns; k++) {
		uint32_t st = m->stk[k];

		m->pass[k] = NONZERO(m, k) && sample_passes(m, k, NO_KEY);
		m->tot.all_value += VAL(m, k);
		m->tot.all_count += CNT(m, k);
		if (!m->pass[k])
			continue;
		m->tot.value += VAL(m, k);
		m->tot.count += CNT(m, k);
		if (!m->sval[st] && !m->scnt[st])
			m->act[m->nact++] = st;
		m->sval[st] += VAL(m, k);
		m->scnt[st] += CNT(m, k);
	}
}

void model_totals(const struct model *m, struct model_totals *t)
{
	*t = m->tot;
}

/* Flat, trees and callers depend on a sample's stack and values only: they walk each
 * stack with passing samples once, with the sum of their values (m->act, m->sval,
 * m->scnt), in the order the stacks first got a passing sample. */

/* --- kept views --- */

static void kept_free(struct kept *k)
{
	free(k->act);
	free(k->sval);
	free(k->scnt);
}

/* Whether k still covers a prefix of m->act and, with no_loss, none of its stacks lost
 * value; then k has room for all of m->act. Otherwise k covers nothing, and the view
 * starts again. */
static int kept_extends(const struct model *m, struct kept *k, int no_loss)
{
	size_t a;
	int ok = k->n <= m->nact && (!k->n || !memcmp(k->act, m->act, k->n * sizeof(*m->act)));

	for (a = 0; ok && no_loss && a < k->n; a++)
		ok = m->sval[m->act[a]] >= k->sval[a] && m->scnt[m->act[a]] >= k->scnt[a];
	if (!ok)
		k->n = 0;
	xgrow((void **)&k->act, &k->capact, m->nact + 1, sizeof(*k->act));
	xgrow((void **)&k->sval, &k->capsval, m->nact + 1, sizeof(*k->sval));
	xgrow((void **)&k->scnt, &k->capscnt, m->nact + 1, sizeof(*k->scnt));
	return ok;
}

/* What stack m->act[a] gained since k took its values (all of them for a stack k does
 * not cover yet) into *v and *c, and k takes them. 0: a covered stack that did not
 * change. The caller sets k->n = m->nact after its pass. */
static int kept_gain(const struct model *m, struct kept *k, size_t a, int64_t *v, uint64_t *c)
{
	uint32_t st = m->act[a];

	if (a >= k->n) {
		k->act[a] = st;
		k->sval[a] = 0;
		k->scnt[a] = 0;
	} else if (m->sval[st] == k->sval[a] && m->scnt[st] == k->scnt[a]) {
		return 0;
	}
	*v = m->sval[st] - k->sval[a];
	*c = m->scnt[st] - k->scnt[a];
	k->sval[a] = m->sval[st];
	k->scnt[a] = m->scnt[st];
	return 1;
}

/* --- flat --- */

/* Forgets the kept flat profile (its arrays stay allocated). */
static void flat_reset(struct model *m)
{
	m->fl_n = 0;
	if (m->fl_byfn)
		memset(m->fl_byfn, 0, m->fl_nbyfn * sizeof(*m->fl_byfn));
	hashmap_free(&m->fl_idx);
	hashmap_free(&m->fl_lines);
}

/* Adds value v and count c of stack st to the kept rows: to each function (or line) of
 * the stack once, and to the leaf's self. A function's line (not by_line) is the one
 * with the most self, the lowest line on a tie: that depends on the sums only, so adding
 * in steps gives what one pass over the whole profile gives. */
static void flat_add(struct model *m, uint32_t st, int64_t v, uint64_t c)
{
	size_t j, n = stack_frames(m, st);

	if (++m->fl_gen == 0) { /* wrapped: no row may keep a stamp of this walk */
		memset(m->fl_stamp, 0, m->fl_n * sizeof(*m->fl_stamp));
		m->fl_gen = 1;
	}
	for (j = 0; j < n; j++) {
		uint32_t fn = m->loc_fn[m->sfr[j]], row;
		int64_t line = m->loc_line[m->sfr[j]];
		struct model_flat *r;
		uint64_t *slot = NULL;

		if (!m->by_line) {
			row = m->fl_byfn[fn];
		} else {
			slot = hashmap_put(&m->fl_idx, (uint64_t)fn << 32 | (uint32_t)line, NULL);
			row = (uint32_t)*slot;
		}
		if (!row) {
			if (m->fl_n >= UINT32_MAX - 1)
				fatal("profile too large");
			xgrow((void **)&m->fl_rows, &m->fl_cap, m->fl_n + 1, sizeof(*m->fl_rows));
			xgrow((void **)&m->fl_stamp, &m->fl_capstamp, m->fl_n + 1, sizeof(*m->fl_stamp));
			xgrow((void **)&m->fl_best, &m->fl_capbest, m->fl_n + 1, sizeof(*m->fl_best));
			memset(&m->fl_rows[m->fl_n], 0, sizeof(m->fl_rows[m->fl_n]));
			m->fl_rows[m->fl_n].fn = fn;
			m->fl_rows[m->fl_n].line = line;
			m->fl_stamp[m->fl_n] = 0;
			m->fl_best[m->fl_n] = INT64_MIN;
			row = (uint32_t)++m->fl_n;
			if (!m->by_line)
				m->fl_byfn[fn] = row;
			else
				*slot = row;
		}
		r = &m->fl_rows[row - 1];
		if (m->fl_stamp[row - 1] != m->fl_gen) {
			/* Once per stack, however often the function recurs. */
			m->fl_stamp[row - 1] = m->fl_gen;
			r->total += v;
			r->total_n += c;
		}
		if (j + 1 == n) {
			r->self += v;
			r->self_n += c;
			if (!m->by_line) {
				uint64_t *acc = hashmap_put(&m->fl_lines, (uint64_t)fn << 32 | (uint32_t)line, NULL);
				int64_t *best = &m->fl_best[row - 1];

				*acc += (uint64_t)v;
				if ((int64_t)*acc > *best || ((int64_t)*acc == *best && line < r->line)) {
					*best = (int64_t)*acc;
					r->line = line;
				}
			}
		}
	}
}

size_t model_flat(struct model *m, struct model_flat **rowsp)
{
	size_t a;

	/* The kept rows extend when the stacks covered are a prefix of m->act's and none
	 * lost value (the cumulative profile; a filter that only adds samples): a row's
	 * line is not a sum. Anything else (other stacks, a decaying window) starts again. */
	if (!kept_extends(m, &m->fl_kept, 1))
		flat_reset(m);
	if (!m->by_line && m->fl_nbyfn < m->nfns + 1) {
		xgrow((void **)&m->fl_byfn, &m->fl_capbyfn, m->nfns + 1, sizeof(*m->fl_byfn));
		memset(m->fl_byfn + m->fl_nbyfn, 0, (m->nfns + 1 - m->fl_nbyfn) * sizeof(*m->fl_byfn));
		m->fl_nbyfn = m->nfns + 1;
	}
	for (a = 0; a < m->nact; a++) {
		int64_t v;
		uint64_t c;

		if (kept_gain(m, &m->fl_kept, a, &v, &c))
			flat_add(m, m->act[a], v, c);
	}
	m->fl_kept.n = m->nact;
	*rowsp = NULL;
	if (m->fl_n) {
		*rowsp = xmalloc(m->fl_n * sizeof(**rowsp));
		memcpy(*rowsp, m->fl_rows, m->fl_n * sizeof(**rowsp));
	}
	return m->fl_n;
}

/* --- trees --- */

struct tree_impl {
	struct model_tree pub;
	size_t cap;
	uint32_t *kidbuf;
	const struct model *m;
	int borrowed; /* pub.nodes are the model's tc_nodes, not the tree's own */
};

/* Node nodes[i] (i > 0) for function fn under nodes[parent], its values zero. */
static void node_init(const struct model *m, struct model_node *nodes, size_t i, uint32_t parent,
		      uint32_t fn)
{
	struct model_node *n = &nodes[i];

	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	n->depth = nodes[parent].depth + 1;
	n->id = util_mix64(nodes[parent].id * 0x100000001b3ULL ^ m->fns[fn].hash);
}

static uint32_t tree_add(struct tree_impl *t, uint32_t parent, uint32_t fn)
{
	xgrow((void **)&t->pub.nodes, &t->cap, t->pub.n + 1, sizeof(*t->pub.nodes));
	if (t->pub.n) {
		node_init(t->m, t->pub.nodes, t->pub.n, parent, fn);
	} else {
		memset(&t->pub.nodes[0], 0, sizeof(t->pub.nodes[0]));
		t->pub.nodes[0].fn = fn;
	}
	return (uint32_t)t->pub.n++;
}

static uint32_t tree_child(struct tree_impl *t, struct hashmap *kids, uint32_t parent, uint32_t fn)
{
	int created;
	uint64_t *slot = hashmap_put(kids, (uint64_t)parent << 32 | fn, &created);

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

/* The cached node under parent for function fn, added when new. */
static uint32_t tc_child(struct model *m, uint32_t parent, uint32_t fn)
{
	int created;
	uint64_t *slot = hashmap_put(&m->tc_kids, (uint64_t)parent << 32 | fn, &created);

	if (!created)
		return (uint32_t)*slot;
	if (m->tc_n >= UINT32_MAX)
		fatal("profile too large");
	xgrow((void **)&m->tc_nodes, &m->tc_cap, m->tc_n + 1, sizeof(*m->tc_nodes));
	node_init(m, m->tc_nodes, m->tc_n, parent, fn);
	*slot = m->tc_n;
	return (uint32_t)m->tc_n++;
}

struct model_tree *model_tree_topdown(struct model *m)
{
	struct tree_impl *t = tree_new(m);
	struct model_node *nodes;
	size_t a, j;

	/* Nodes are made in the order of m->act, so when it extends the stacks covered,
	 * the kept nodes are those a tree built anew would make first, at the same
	 * indexes, and a node's values are sums: adding each stack's difference, lost
	 * value too (a decaying window), gives the tree built anew. Other stacks (other
	 * filters, a window's stacks without value) start again. */
	if (!kept_extends(m, &m->tc_kept, 0)) {
		hashmap_free(&m->tc_kids);
		m->tc_n = 0;
	}
	if (!m->tc_n) {
		xgrow((void **)&m->tc_nodes, &m->tc_cap, 1, sizeof(*m->tc_nodes));
		memset(&m->tc_nodes[0], 0, sizeof(m->tc_nodes[0]));
		m->tc_nodes[0].id = 0x746f70646f776eULL;
		m->tc_n = 1;
	}
	xgrow((void **)&m->tc_leaf, &m->tc_capleaf, m->nact + 1, sizeof(*m->tc_leaf));
	/* What each stack gained on every node of its path, the root's included. */
	for (a = 0; a < m->nact; a++) {
		uint32_t st = m->act[a], cur;
		int64_t v;
		uint64_t c;

		if (a >= m->tc_kept.n) {
			size_t n = stack_frames(m, st);

			for (cur = 0, j = 0; j < n; j++)
				cur = tc_child(m, cur, m->loc_fn[m->sfr[j]]);
			m->tc_leaf[a] = cur;
		}
		if (!kept_gain(m, &m->tc_kept, a, &v, &c))
			continue;
		cur = m->tc_leaf[a];
		m->tc_nodes[cur].self += v;
		m->tc_nodes[cur].self_n += c;
		for (;;) {
			m->tc_nodes[cur].total += v;
			m->tc_nodes[cur].total_n += c;
			if (!cur)
				break;
			cur = m->tc_nodes[cur].parent;
		}
	}
	m->tc_kept.n = m->nact;

	/* The tree is the cache itself, not a copy: on a large profile a copy at every
	 * refresh doubled what the Tree view holds. Its child lists are made anew. */
	t->pub.n = t->cap = m->tc_n;
	nodes = t->pub.nodes = m->tc_nodes;
	t->borrowed = 1;
	for (a = 0; a < m->tc_n; a++) {
		nodes[a].nkids = 0;
		nodes[a].kids = NULL;
	}
	tree_finish(t);
	return &t->pub;
}

struct model_tree *model_tree_callers(struct model *m, uint32_t fn)
{
	struct tree_impl *t = tree_new(m);
	struct hashmap kids = { 0 };
	size_t a, j;

	tree_add(t, 0, fn);
	if (fn < m->nfns)
		t->pub.nodes[0].id = util_mix64(m->fns[fn].hash ^ 0x63616c6c657273ULL);
	for (a = 0; fn < m->nfns && a < m->nact; a++) {
		uint32_t st = m->act[a], cur = 0;
		size_t b = stack_frames(m, st), pos;
		int64_t v = m->sval[st];
		uint64_t c = m->scnt[st];

		if (!b)
			continue;
		for (pos = b; pos-- > 0;)
			if (m->loc_fn[m->sfr[pos]] == fn)
				break;
		if (pos == (size_t)-1)
			continue;
		t->pub.nodes[0].total += v;
		t->pub.nodes[0].total_n += c;
		if (pos + 1 == b) {
			t->pub.nodes[0].self += v;
			t->pub.nodes[0].self_n += c;
		}
		for (j = pos; j-- > 0;) {
			struct model_node *n;

			cur = tree_child(t, &kids, cur, m->loc_fn[m->sfr[j]]);
			n = &t->pub.nodes[cur];
			n->total += v;
			n->total_n += c;
		}
		/* A caller node's self: stacks that start there (the outermost frame). */
		if (cur) {
			t->pub.nodes[cur].self += v;
			t->pub.nodes[cur].self_n += c;
		}
	}
	hashmap_free(&kids);
	tree_finish(t);
	return &t->pub;
}

void model_tree_free(struct model_tree *pub)
{
	struct tree_impl *t = (struct tree_impl *)pub;

	if (!t)
		return;
	if (!t->borrowed)
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
	struct hashmap idx = { 0 };
	struct model_key *keys = NULL;
	uint64_t *sum = xcalloc(m->nks + 1, sizeof(*sum));
	uint8_t *seen = xcalloc(m->nks + 1, 1);
	size_t n = 0, cap = 0, k, j;

	for (k = 0; k < m->ns; k++) {
		if (!NONZERO(m, k))
			continue;
		sum[m->kset[k]] += CNT(m, k);
		seen[m->kset[k]] = 1;
	}
	for (k = 0; k < m->nks; k++) {
		if (!seen[k])
			continue;
		for (j = m->ks_off[k]; j < m->ks_off[k + 1]; j++) {
			int created;
			uint64_t *slot = hashmap_put(&idx, m->ks_key[j], &created);

			if (created) {
				xgrow((void **)&keys, &cap, n + 1, sizeof(*keys));
				memset(&keys[n], 0, sizeof(keys[n]));
				keys[n].key = prof_string(m->p, m->ks_key[j], &keys[n].len);
				if (!keys[n].key)
					keys[n].key = "";
				keys[n].numeric = m->ks_num[j];
				*slot = n++;
			}
			keys[*slot].count += sum[k];
		}
	}
	hashmap_free(&idx);
	free(sum);
	free(seen);
	if (n)
		qsort(keys, n, sizeof(*keys), key_cmp);
	*keysp = keys;
	return n;
}

/* The cache of key ksid, made (in place of the one asked for least recently) if new. */
static struct kcache *kcache_for(struct model *m, uint32_t ksid)
{
	size_t i, old = 0;
	struct kcache *c;

	for (i = 0; i < KCACHE_MAX; i++) {
		if (m->kc[i] && m->kc[i]->ksid == ksid) {
			m->kc[i]->used = m->clock;
			return m->kc[i];
		}
		if (!m->kc[i] || (m->kc[old] && m->kc[i]->used < m->kc[old]->used))
			old = i;
	}
	kcache_free(m->kc[old]);
	c = m->kc[old] = xcalloc(1, sizeof(*c));
	c->ksid = ksid;
	c->used = m->clock;
	return c;
}

/* Works out the contribution of the samples the cache does not cover yet. */
static void kcache_extend(struct model *m, struct kcache *c)
{
	size_t k;
	uint32_t i;

	if (c->n >= m->ns)
		return;
	if (m->ns > c->cap) {
		xgrow((void **)&c->slot, &c->cap, m->ns, sizeof(*c->slot));
		c->grp = xrealloc(c->grp, c->cap * sizeof(*c->grp));
		c->tgrp = xrealloc(c->tgrp, c->cap * sizeof(*c->tgrp));
	}
	for (k = c->n; k < m->ns; k++) {
		const struct prof_label *l = NULL;
		struct prof_sample s;
		uint64_t *slot, set = 0x9e3779b97f4a7c15ULL;
		uint32_t v, leaf;
		int created;

		c->slot[k] = 0;
		c->grp[k] = c->tgrp[k] = NONE;
		if (prof_sample_at(m->p, k, &s))
			continue;
		/* One value per key and sample: the first (labels are sorted). */
		for (i = 0; i < s.nlabels && !l; i++)
			if (s.labels[i].key == c->ksid)
				l = &s.labels[i];
		if (!l)
			continue;
		slot = l->str ? hashmap_put(&c->byname, l->str, &created)
			      : hashmap_put(&c->bynum, (uint64_t)l->num, &created);
		if (created) {
			xgrow((void **)&c->vals, &c->capvals, c->nvals + 1, sizeof(*c->vals));
			c->vals[c->nvals] = (struct kval){ l->str, l->str ? 0 : l->num };
			*slot = c->nvals++;
		}
		v = (uint32_t)*slot;
		c->slot[k] = v + 1;
		/* The sample's other string labels as one set (labels are sorted, so equal sets
		 * hash alike): a goroutine's row shows the set it spent most under. */
		for (i = 0; i < s.nlabels; i++)
			if (s.labels[i].str && s.labels[i].key != c->ksid)
				set = util_mix64(set ^ ((uint64_t)s.labels[i].key << 32 | s.labels[i].str));
		slot = hashmap_put(&c->grps, util_mix64(set ^ (uint64_t)v), &created);
		if (created) {
			if (c->ngrp + 1 > c->capgrp) {
				xgrow((void **)&c->grp_slot, &c->capgrp, c->ngrp + 1, sizeof(*c->grp_slot));
				c->grp_rep = xrealloc(c->grp_rep, c->capgrp * sizeof(*c->grp_rep));
			}
			c->grp_slot[c->ngrp] = v;
			c->grp_rep[c->ngrp] = k;
			*slot = c->ngrp++;
		}
		c->grp[k] = (uint32_t)*slot;
		leaf = stack_leaf_fn(m, m->stk[k]);
		if (leaf == UINT32_MAX)
			continue;
		slot = hashmap_put(&c->tgs, (uint64_t)v << 32 | leaf, &created);
		if (created) {
			if (c->ntg + 1 > c->captg) {
				xgrow((void **)&c->tg_slot, &c->captg, c->ntg + 1, sizeof(*c->tg_slot));
				c->tg_fn = xrealloc(c->tg_fn, c->captg * sizeof(*c->tg_fn));
			}
			c->tg_slot[c->ntg] = v;
			c->tg_fn[c->ntg] = leaf;
			*slot = c->ntg++;
		}
		c->tgrp[k] = (uint32_t)*slot;
	}
	c->n = m->ns;
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
	struct model_value *vals = NULL;
	struct kcache *c;
	int64_t *vsum, *gsum, *tsum, *best;
	uint64_t *vn;
	uint32_t *out;
	uint8_t *vseen, *gseen, *tseen;
	size_t n = 0, k;

	memset(t, 0, sizeof(*t));
	t->all_value = m->tot.all_value;
	t->all_count = m->tot.all_count;
	*valsp = NULL;
	if (ksid == NO_KEY)
		return 0;
	c = kcache_for(m, ksid);
	kcache_extend(m, c);
	vsum = xcalloc(c->nvals + 1, sizeof(*vsum));
	vn = xcalloc(c->nvals + 1, sizeof(*vn));
	vseen = xcalloc(c->nvals + 1, 1);
	gsum = xcalloc(c->ngrp + 1, sizeof(*gsum));
	gseen = xcalloc(c->ngrp + 1, 1);
	tsum = xcalloc(c->ntg + 1, sizeof(*tsum));
	tseen = xcalloc(c->ntg + 1, 1);
	for (k = 0; k < m->ns; k++) {
		uint32_t v;

		/* Without label filters, passing is the same for every key (m->pass). */
		if (m->nlf ? !NONZERO(m, k) || !sample_passes(m, k, ksid) : !m->pass[k])
			continue;
		t->value += VAL(m, k);
		t->count += CNT(m, k);
		if (!c->slot[k])
			continue;
		v = c->slot[k] - 1;
		vsum[v] += VAL(m, k);
		vn[v] += CNT(m, k);
		vseen[v] = 1;
		gsum[c->grp[k]] += VAL(m, k);
		gseen[c->grp[k]] = 1;
		if (c->tgrp[k] != NONE) {
			tsum[c->tgrp[k]] += VAL(m, k);
			tseen[c->tgrp[k]] = 1;
		}
	}
	out = xcalloc(c->nvals + 1, sizeof(*out));
	for (k = 0; k < c->nvals; k++)
		n += vseen[k];
	vals = xcalloc(n + 1, sizeof(*vals));
	n = 0;
	for (k = 0; k < c->nvals; k++) {
		struct model_value *mv;

		if (!vseen[k])
			continue;
		mv = &vals[n];
		if (c->vals[k].str) {
			mv->str = prof_string(m->p, c->vals[k].str, &mv->len);
			if (!mv->str)
				mv->str = "";
		}
		mv->num = c->vals[k].num;
		mv->value = vsum[k];
		mv->n = vn[k];
		mv->top_fn = -1;
		out[k] = (uint32_t)n++;
	}
	/* Each value's set and leaf function with the most of its value (ties: the one
	 * seen first). */
	best = xmalloc((n + 1) * sizeof(*best));
	for (k = 0; k < n; k++)
		best[k] = INT64_MIN;
	for (k = 0; k < c->ngrp; k++) {
		uint32_t o = out[c->grp_slot[k]];

		if (gseen[k] && gsum[k] > best[o]) {
			best[o] = gsum[k];
			vals[o].rep = c->grp_rep[k];
		}
	}
	for (k = 0; k < n; k++)
		best[k] = INT64_MIN;
	for (k = 0; k < c->ntg; k++) {
		uint32_t o = out[c->tg_slot[k]];

		if (tseen[k] && tsum[k] > best[o]) {
			best[o] = tsum[k];
			vals[o].top_fn = c->tg_fn[k];
		}
	}
	free(vsum);
	free(vn);
	free(vseen);
	free(gsum);
	free(gseen);
	free(tsum);
	free(tseen);
	free(out);
	free(best);
	if (n)
		qsort(vals, n, sizeof(*vals), value_cmp);
	*valsp = vals;
	return n;
}

/* --- the addresses of one function's code (the annotate view) --- */

size_t model_addresses(struct model *m, uint32_t fn, struct model_addr **rowsp)
{
	struct hashmap idx = { 0 };
	struct model_addr *rows = NULL;
	size_t n = 0, cap = 0, a, k;

	for (a = 0; a < m->nact; a++) {
		uint32_t st = m->act[a];
		const uint32_t *ids = m->sloc[st];
		size_t nseen = 0;
		uint32_t seen[32];
		int leaf = 1;

		/* Location ids, leaf first: the first is the sampled pc, the others callers'
		 * return addresses. */
		for (k = 0; k < m->snl[st]; k++) {
			uint32_t id = ids[k];
			uint64_t key, *row;
			size_t j;
			int ret, created, dup = 0;

			if (id == 0 || id > m->nl || m->loc_off[id] == m->loc_off[id - 1])
				continue;
			ret = !leaf;
			leaf = 0;
			/* fn's code: a location whose outermost frame (its first) is fn. */
			if (m->loc_fn[m->loc_off[id - 1]] != fn)
				continue;
			key = (uint64_t)id | (uint64_t)ret << 63;
			/* Once per sample, as pprof counts cum (recursion repeats an address). */
			for (j = 0; j < nseen && !dup; j++)
				dup = seen[j] == (id | (uint32_t)ret << 31);
			if (dup)
				continue;
			if (nseen < GP_ARRAY_SIZE(seen))
				seen[nseen++] = id | (uint32_t)ret << 31;
			row = hashmap_put(&idx, key, &created);
			if (created) {
				const struct prof_location *l = prof_location_at(m->p, id - 1);

				xgrow((void **)&rows, &cap, n + 1, sizeof(*rows));
				memset(&rows[n], 0, sizeof(*rows));
				rows[n].mapping = l->mapping;
				rows[n].address = l->address;
				rows[n].is_return = ret;
				*row = ++n;
			}
			rows[*row - 1].total += m->sval[st];
			rows[*row - 1].total_n += m->scnt[st];
			if (!ret) {
				rows[*row - 1].self += m->sval[st];
				rows[*row - 1].self_n += m->scnt[st];
			}
		}
	}
	hashmap_free(&idx);
	*rowsp = rows;
	return n;
}

long model_inlined_into(struct model *m, uint32_t fn)
{
	struct hashmap per = { 0 };
	uint64_t best = 0;
	long out = -1;
	size_t a, k;

	for (a = 0; a < m->nact; a++) {
		uint32_t st = m->act[a];

		for (k = 0; k < m->snl[st]; k++) {
			uint32_t id = m->sloc[st][k];
			size_t j;

			if (id == 0 || id > m->nl)
				continue;
			/* The location's inner frames (after its first, the function it is in). */
			for (j = m->loc_off[id - 1] + 1; j < m->loc_off[id]; j++) {
				uint32_t outer = m->loc_fn[m->loc_off[id - 1]];
				uint64_t *c;

				if (m->loc_fn[j] != fn || outer == fn)
					continue;
				c = hashmap_put(&per, outer, NULL);
				*c += m->scnt[st];
				if (*c > best) {
					best = *c;
					out = outer;
				}
				break;
			}
		}
	}
	hashmap_free(&per);
	return out;
}
