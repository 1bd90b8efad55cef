/* view-facets.c: the views that split samples by one dimension: Labels (a pprof label
 * key chosen among those seen), Goroutines and Threads; Enter focuses the other views on
 * the selected value (like go tool pprof -tagfocus). Goroutines are grouped by their start
 * function (the goroutine_fn label, src/profile/agg.c) and pprof labels, each group with
 * the number of goroutines it stands for; Enter on a group lists their ids, Enter on an id
 * focuses on it. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"

enum facet_kind { F_LABELS, F_GOROUTINES, F_THREADS };

/* Goroutines: a group of goroutine ids sharing a start function and label set. */
struct ggroup {
	uint64_t key;            /* hash of the start function and label text */
	const char *fn;          /* start function (borrowed from the model), NULL unknown */
	size_t fnlen;
	size_t rep;              /* a sample of its biggest goroutine: its labels */
	int64_t value;
	uint64_t n;
	size_t *mem;             /* indexes into vals, by value descending */
	size_t nmem;
	long top_fn;             /* hot function of its biggest goroutine */
};

/* A row of the Goroutines view: a group (v < 0), one of its ids (v: index into vals),
 * or the samples without an id (g == GROW_REST). */
#define GROW_REST ((size_t)-1)
struct grow {
	size_t g;
	long v;
};

struct gview_state {
	struct ggroup *grp;
	size_t ngrp;
	struct grow *rows;
	size_t nrows, caprows;
	struct hashmap expanded; /* group key -> 1 */
};

struct facet {
	enum facet_kind kind;
	struct model_key *keys;  /* Labels: string keys seen (borrowed names) */
	size_t nkeys;
	char *key;               /* the key shown (key_len bytes, NUL-terminated too) */
	size_t key_len;
	struct model_value *vals;
	size_t n;
	struct model_totals tot;
	int64_t rest_value;      /* samples without the key */
	uint64_t rest_n;
	int has_rest;
	size_t rest_at;          /* its row, in value order among vals[] */
	/* A group's members: each value's totals of each member (vals' order, nxmodel a
	 * value), and those of the samples without the key. */
	int64_t *xv;
	size_t capxv;
	int64_t xrest[PROF_MAX_VALUES - 2];
	/* Labels with a baseline (ui_base_*): the key's values in it, found by string. */
	struct model_value *bvals;
	size_t bn;
	struct model_totals btot;
	int64_t brest;           /* the baseline's samples without the key */
	struct hashmap bidx;     /* hash of a value (+ probe) -> index + 1 in bvals */
	struct gview_state gs;   /* Goroutines */
	/* Labels of a Go target with wall-clock data (view-wall.c): each value's wall time by
	 * state, shown beside its on-CPU share. */
	struct ui_wall_splits wall;
	int has_wall;
};


/* The value shown at row i, or NULL for the row of samples without the key. */
static const struct model_value *row_val(const struct facet *f, size_t i)
{
	if (f->has_rest && i >= f->rest_at)
		return i == f->rest_at ? NULL : i - 1 < f->n ? &f->vals[i - 1] : NULL;
	return i < f->n ? &f->vals[i] : NULL;
}

/* The value of a goroutine row: its id's, or NULL for a group or the samples without one. */
static const struct model_value *grow_val(const struct facet *f, size_t i)
{
	const struct grow *r = i < f->gs.nrows ? &f->gs.rows[i] : NULL;

	return r && r->g != GROW_REST && r->v >= 0 ? &f->vals[r->v] : NULL;
}

static const struct ggroup *grow_group(const struct facet *f, size_t i)
{
	const struct grow *r = i < f->gs.nrows ? &f->gs.rows[i] : NULL;

	return r && r->g != GROW_REST && r->v < 0 ? &f->gs.grp[r->g] : NULL;
}

static void set_key(struct facet *f, const char *key, size_t len)
{
	char *k = xmemdup0(key, len);

	free(f->key);
	f->key = k;
	f->key_len = len;
}

static int is_key(const struct facet *f, const struct model_key *k)
{
	return f->key_len == k->len && !memcmp(f->key, k->key, k->len);
}

static struct facet *facet_of(struct view *v)
{
	if (!v->priv) {
		struct facet *f = xcalloc(1, sizeof(struct facet));

		f->kind = v->id == VIEW_GOROUTINES ? F_GOROUTINES : v->id == VIEW_THREADS ? F_THREADS : F_LABELS;
		if (f->kind == F_GOROUTINES)
			set_key(f, "goroutine", 9);
		else if (f->kind == F_THREADS)
			set_key(f, "thread", 6);
		else
			set_key(f, "", 0);
		v->priv = f;
	}
	return v->priv;
}

void view_labels_set_key(struct view *v, const char *key, size_t len)
{
	set_key(facet_of(v), key, len);
}

/* Keys the Threads and Goroutines views show (goroutine_fn: gotop-perf's own label, the
 * Goroutines view's groups), not among the Labels view's pprof label keys. */
static int own_view_key(const struct model_key *k)
{
	return (k->len == 6 && !memcmp(k->key, "thread", 6)) ||
	       (k->len == 9 && !memcmp(k->key, "goroutine", 9)) ||
	       (k->len == 12 && !memcmp(k->key, "goroutine_fn", 12));
}

static uint64_t value_key(const struct model_value *v)
{
	return v->str ? util_hash(v->str, v->len, 1) : util_mix64((uint64_t)v->num) ^ 2;
}

/* A group's members: each value's share of each member, from the member's model (the
 * same key and filters), matched by the value itself. */
static void members_update(struct ui *ui, struct facet *f)
{
	size_t k, i, nx = ui->nxmodel;

	if (!nx)
		return;
	xgrow((void **)&f->xv, &f->capxv, f->n * nx + 1, sizeof(*f->xv));
	memset(f->xv, 0, (f->n * nx + 1) * sizeof(*f->xv));
	for (k = 0; k < nx; k++) {
		struct model_value *xv = NULL;
		struct model_totals xt;
		size_t xn = model_label_values(ui->xmodel[k], f->key, f->key_len, &xv, &xt);
		struct hashmap idx = { 0 };
		int64_t sum = 0;

		for (i = 0; i < xn; i++)
			*hashmap_put(&idx, value_key(&xv[i]), NULL) = i + 1;
		for (i = 0; i < f->n; i++) {
			uint64_t *j = hashmap_get(&idx, value_key(&f->vals[i]));

			if (j && *j) {
				f->xv[i * nx + k] = xv[*j - 1].value;
				sum += xv[*j - 1].value;
			}
		}
		f->xrest[k] = xt.value - sum;
		hashmap_free(&idx);
		free(xv);
	}
}

static void groups_build(struct ui *ui, struct facet *f);

static void facet_update(struct ui *ui, struct view *v)
{
	struct facet *f = facet_of(v);
	size_t i, nk = 0;
	int64_t sum = 0;
	uint64_t sumn = 0;

	free(f->vals);
	free(f->keys);
	free(f->bvals);
	hashmap_free(&f->bidx);
	f->vals = NULL;
	f->keys = NULL;
	f->bvals = NULL;
	f->n = f->nkeys = f->bn = 0;
	f->has_rest = 0;
	memset(&f->tot, 0, sizeof(f->tot));
	if (!ui->model)
		return;
	if (f->kind == F_LABELS) {
		struct model_key *all;
		size_t n = model_label_keys(ui->model, &all);
		int found = 0;

		/* Threads and goroutines have views of their own. */
		for (i = 0; i < n; i++)
			if (!own_view_key(&all[i]))
				all[nk++] = all[i];
		f->keys = all;
		f->nkeys = nk;
		for (i = 0; i < nk; i++)
			if (is_key(f, &f->keys[i]))
				found = 1;
		if (!found) {
			if (!nk)
				return;
			set_key(f, f->keys[0].key, f->keys[0].len);
		}
	}
	f->n = model_label_values(ui->model, f->key, f->key_len, &f->vals, &f->tot);
	members_update(ui, f);
	if (f->kind == F_LABELS && ui_base_all(ui) > 0) {
		int64_t bsum = 0;

		f->bn = model_label_values(ui->base_model, f->key, f->key_len, &f->bvals, &f->btot);
		for (i = 0; i < f->bn; i++) {
			uint64_t h = util_hash(f->bvals[i].str ? f->bvals[i].str : "", f->bvals[i].len,
					       (uint64_t)f->bvals[i].num), *slot;
			int created;

			bsum += f->bvals[i].value;
			while (!(slot = hashmap_put(&f->bidx, h, &created), created))
				h++;
			*slot = i + 1;
		}
		f->brest = f->btot.value - bsum;
	}
	for (i = 0; i < f->n; i++) {
		sum += f->vals[i].value;
		sumn += f->vals[i].n;
	}
	/* Goroutines too: without an id are the samples of no goroutine, and those of the
	 * young goroutines of a busy service (agg.c, "Goroutine ids and memory"), often most.
	 * Threads and goroutines: past AGG_SAMPLES_FULL entries, a sample with no entry keeps
	 * neither id (agg.c, "Threads and memory"). */
	if (f->n && f->tot.value > sum) {
		f->has_rest = 1;
		f->rest_value = f->tot.value - sum;
		f->rest_n = f->tot.count - sumn;
		for (f->rest_at = 0; f->rest_at < f->n && f->vals[f->rest_at].value >= f->rest_value;)
			f->rest_at++;
	}
	if (f->kind == F_GOROUTINES)
		groups_build(ui, f);
	if (f->kind == F_LABELS)
		f->has_wall = !ui_wall_splits_build(ui, &f->wall, f->key, f->key_len);
}

/* The baseline's value of val (NULL: the samples without the key); 0, or -1 when the
 * baseline has none. */
static int base_value(const struct facet *f, const struct model_value *val, int64_t *out)
{
	uint64_t h, *slot;

	*out = 0;
	if (!val) {
		*out = f->brest;
		return f->brest > 0 ? 0 : -1;
	}
	h = util_hash(val->str ? val->str : "", val->len, (uint64_t)val->num);
	for (; (slot = hashmap_get(&f->bidx, h)); h++) {
		const struct model_value *b = &f->bvals[*slot - 1];

		if (!b->str == !val->str && b->len == val->len && b->num == val->num &&
		    (!b->str || !memcmp(b->str, val->str, val->len))) {
			*out = b->value;
			return 0;
		}
	}
	return -1;
}

static size_t facet_nrows(struct ui *ui, struct view *v)
{
	struct facet *f = facet_of(v);

	if (f->kind == F_GOROUTINES)
		return f->gs.nrows;
	return f->n + (size_t)f->has_rest;
}

/* The value at row i of any facet view (NULL: a group, or the samples without the key). */
static const struct model_value *any_val(const struct facet *f, size_t i)
{
	return f->kind == F_GOROUTINES ? grow_val(f, i) : row_val(f, i);
}

static uint64_t facet_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct facet *f = facet_of(v);
	uint64_t h = util_hash(f->key, f->key_len, 1);
	const struct model_value *val;

	if (f->kind == F_GOROUTINES && grow_group(f, i))
		return util_mix64(h ^ grow_group(f, i)->key ^ 0x67727570ULL);
	val = any_val(f, i);

	if (!val)
		return util_mix64(h ^ 0x6e6f6e65ULL);
	if (val->str)
		return util_mix64(h ^ util_hash(val->str, val->len, 2));
	return util_mix64(h ^ (uint64_t)val->num * 0x9e3779b97f4a7c15ULL);
}

static const struct live_thread *thread_name(struct ui *ui, int64_t tid)
{
	size_t lo = 0, hi = ui->snap ? ui->snap->nthreads : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ui->snap->threads[mid].tid == tid)
			return &ui->snap->threads[mid];
		if (ui->snap->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Widths: share 7, samples 10, then the value column, then the rest. */
static int value_width(struct ui *ui, struct facet *f)
{
	if (ui->batch)
		return f->kind == F_LABELS ? 24 : f->kind == F_THREADS ? 26 : 10;
	if (f->kind == F_THREADS)
		return 26;
	if (f->kind == F_GOROUTINES)
		return 10;
	return GP_MAX(16, GP_MIN(32, ui->width / 4));
}

static void facet_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct facet *f = facet_of(v);
	int vw = value_width(ui, f);
	size_t i;

	tl_reset(l);
	tl_field(l, UA_HEAD, "SHARE%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "SAMPLES", 10, TL_RIGHT);
	ui_member_title_cells(ui, l);
	if (f->bvals)
		tl_field(l, UA_HEAD, " THEN%  DELTA", 15, TL_RIGHT); /* of SHARE%, in points */
	tl_put(l, UA_HEAD, "  ");
	if (f->kind == F_THREADS) {
		tl_field(l, UA_HEAD, "TID      NAME", vw, ui->batch ? TL_NOCUT : 0);
		tl_put(l, UA_HEAD, " HOT FUNCTION");
	} else if (f->kind == F_GOROUTINES) {
		tl_field(l, UA_HEAD, "GOROUTINES", vw, ui->batch ? TL_NOCUT : 0);
		tl_put(l, UA_HEAD, " START FUNCTION  LABELS  HOT FUNCTION");
	} else {
		char k[300];

		ui_esc(ui, k, sizeof(k), f->key, f->key_len);
		tl_field(l, UA_HEAD, !f->nkeys ? "VALUE" : k[0] ? k : "\"\"", vw, ui->batch ? TL_NOCUT : 0);
		/* After the value, so that the columns before it stay where they were. */
		if (f->has_wall)
			ui_wall_title_cells(ui, l);
		tl_put(l, UA_HEAD, " HOT FUNCTION");
		if (!ui->batch && f->nkeys) {
			/* The key chooser, right-aligned: every key, or "key i/n" when they
			 * do not fit. */
			struct tline keys;
			size_t cur = 0;
			int start;

			tl_reset(&keys);
			tl_put(&keys, UA_DIM, "  key:");
			for (i = 0; i < f->nkeys; i++) {
				int on = is_key(f, &f->keys[i]);

				if (on)
					cur = i;
				tl_put(&keys, UA_HEAD, " ");
				if (!f->keys[i].len)
					tl_put(&keys, on ? UA_TAB_ON : UA_TAB, "\"\"");
				else
					tl_untrusted(&keys, on ? UA_TAB_ON : UA_TAB, f->keys[i].key, f->keys[i].len,
						     (int)GP_MIN(f->keys[i].len, 24), 0);
			}
			if (keys.cols > ui->width - l->cols) {
				tl_reset(&keys);
				tl_printf(&keys, UA_DIM, "  key %zu/%zu (Left/Right): ", cur + 1, f->nkeys);
				if (!f->keys[cur].len)
					tl_put(&keys, UA_TAB_ON, "\"\"");
				else
					tl_untrusted(&keys, UA_TAB_ON, f->keys[cur].key, f->keys[cur].len,
						     (int)GP_MIN(f->keys[cur].len, 24), 0);
			}
			start = GP_MAX(l->cols, ui->width - keys.cols);
			tl_pad(l, start);
			for (int sg = 0; sg < keys.nseg; sg++) {
				size_t a = keys.seg[sg].start;
				size_t b = sg + 1 < keys.nseg ? keys.seg[sg + 1].start : keys.len;
				char piece[TL_MAX];

				memcpy(piece, keys.buf + a, b - a);
				piece[b - a] = 0;
				tl_put(l, keys.seg[sg].attr, piece);
			}
		}
	}
	if (!ui->batch)
		tl_pad(l, ui->width);
}

/* "handler=search tenant=acme" from a sample's string labels. */
static void labels_text(struct ui *ui, size_t sidx, char *buf, size_t n)
{
	const struct prof *p = model_prof(ui->model);
	struct prof_sample s;
	size_t k = 0;
	uint32_t i;

	buf[0] = 0;
	if (prof_sample_at(p, sidx, &s))
		return;
	for (i = 0; i < s.nlabels && k + 1 < n; i++) {
		char key[128], val[256];
		size_t kl, vl;
		const char *ks, *vs;

		if (!s.labels[i].str)
			continue;
		ks = prof_string(p, s.labels[i].key, &kl);
		if (kl == 12 && !memcmp(ks, "goroutine_fn", 12))
			continue; /* the Goroutines view's own column */
		vs = prof_string(p, s.labels[i].str, &vl);
		ui_esc(ui, key, sizeof(key), ks, kl);
		ui_esc(ui, val, sizeof(val), vs, vl);
		k += (size_t)snprintf(buf + k, n - k, "%s%s=%s", k ? " " : "", key, val);
	}
	if (k >= n)
		buf[n - 1] = 0;
}

/* The goroutine_fn label of a sample (src/profile/agg.c): its goroutine's start function. */
static const char *sample_start_fn(const struct prof *p, size_t sidx, size_t *len)
{
	struct prof_sample s;
	uint32_t i;

	if (prof_sample_at(p, sidx, &s))
		return NULL;
	for (i = 0; i < s.nlabels; i++) {
		size_t kl;
		const char *ks;

		if (!s.labels[i].str)
			continue;
		ks = prof_string(p, s.labels[i].key, &kl);
		if (ks && kl == 12 && !memcmp(ks, "goroutine_fn", 12))
			return prof_string(p, s.labels[i].str, len);
	}
	return NULL;
}

static int group_cmp(const void *a, const void *b)
{
	const struct ggroup *x = a, *y = b;

	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void groups_free(struct gview_state *gs)
{
	size_t i;

	for (i = 0; i < gs->ngrp; i++)
		free(gs->grp[i].mem);
	free(gs->grp);
	gs->grp = NULL;
	gs->ngrp = 0;
	gs->nrows = 0;
}

static void grow_add(struct gview_state *gs, size_t g, long v)
{
	xgrow((void **)&gs->rows, &gs->caprows, gs->nrows + 1, sizeof(*gs->rows));
	gs->rows[gs->nrows].g = g;
	gs->rows[gs->nrows++].v = v;
}

/* Groups the goroutine ids (vals, by value descending) by start function and the label
 * set their representative sample carries (the set each spent most under), then lays out
 * the rows: groups by value, the samples without an id among them, the ids of expanded
 * groups under theirs. */
static void groups_build(struct ui *ui, struct facet *f)
{
	struct gview_state *gs = &f->gs;
	const struct prof *p = model_prof(ui->model);
	struct hashmap idx = { 0 };
	char lt[1200];
	size_t i, j, cap = 0;
	int rest_done = !f->has_rest;

	groups_free(gs);
	for (i = 0; i < f->n; i++) {
		const struct model_value *val = &f->vals[i];
		struct ggroup *g;
		size_t fl = 0;
		const char *fn = sample_start_fn(p, val->rep, &fl);
		uint64_t key, *slot;
		int created;

		labels_text(ui, val->rep, lt, sizeof(lt));
		key = util_hash(lt, strlen(lt), fn ? util_hash(fn, fl, 3) : 4) | 1;
		slot = hashmap_put(&idx, key, &created);
		if (created) {
			xgrow((void **)&gs->grp, &cap, gs->ngrp + 1, sizeof(*gs->grp));
			g = &gs->grp[gs->ngrp];
			memset(g, 0, sizeof(*g));
			g->key = key;
			g->fn = fn;
			g->fnlen = fl;
			g->rep = val->rep;
			g->top_fn = val->top_fn; /* vals come by value: the first is the biggest */
			*slot = ++gs->ngrp;
		}
		g = &gs->grp[*slot - 1];
		g->value += val->value;
		g->n += val->n;
		g->mem = xrealloc(g->mem, (g->nmem + 1) * sizeof(*g->mem));
		g->mem[g->nmem++] = i;
	}
	hashmap_free(&idx);
	if (gs->ngrp > 1)
		qsort(gs->grp, gs->ngrp, sizeof(*gs->grp), group_cmp);
	for (i = 0; i < gs->ngrp; i++) {
		const struct ggroup *g = &gs->grp[i];
		const uint64_t *e;

		if (!rest_done && g->value < f->rest_value) {
			grow_add(gs, GROW_REST, -1);
			rest_done = 1;
		}
		grow_add(gs, i, -1);
		e = hashmap_get(&gs->expanded, g->key);
		if (e && *e)
			for (j = 0; j < g->nmem; j++)
				grow_add(gs, i, (long)g->mem[j]);
	}
	if (!rest_done)
		grow_add(gs, GROW_REST, -1);
}

/* A group's row: share, samples, the members' columns, its goroutines, start function,
 * labels, hot function. */
static void group_row(struct ui *ui, struct facet *f, const struct ggroup *g, struct tline *l)
{
	int flags = ui->batch ? TL_NOCUT : 0;
	const struct gview_state *gs = &f->gs;
	const uint64_t *e = hashmap_get(&gs->expanded, g->key);
	char pct[16], buf[1300], name[1100];
	int64_t x[PROF_MAX_VALUES] = { 0 }; /* the members' totals: sums over its ids */
	size_t k, j;

	tl_reset(l);
	ui_pct(pct, sizeof(pct), g->value, f->tot.value);
	tl_field(l, ui_pct_attr(g->value, f->tot.value), pct, 7, TL_RIGHT);
	tl_printf(l, UA_NORMAL, "%10llu", (unsigned long long)g->n);
	for (k = 0; k < ui->nxmodel && k < PROF_MAX_VALUES; k++)
		for (j = 0; j < g->nmem; j++)
			x[k] += f->xv[g->mem[j] * ui->nxmodel + k];
	ui_member_cells(ui, l, g->value, x);
	tl_put(l, UA_NORMAL, "  ");
	snprintf(buf, sizeof(buf), "%c%zu", e && *e ? '-' : '+', g->nmem);
	tl_field(l, UA_NORMAL, buf, value_width(ui, f), flags);
	tl_put(l, UA_NORMAL, " ");
	if (g->fn)
		ui_esc(ui, name, sizeof(name), g->fn, g->fnlen);
	else
		snprintf(name, sizeof(name), "(start unknown)");
	tl_put(l, g->fn ? UA_NORMAL : UA_DIM, name);
	tl_put(l, UA_NORMAL, "  ");
	labels_text(ui, g->rep, buf, sizeof(buf));
	if (buf[0]) {
		tl_put(l, UA_DIM, buf);
		tl_put(l, UA_NORMAL, "  ");
	}
	if (g->top_fn >= 0) {
		const struct model_fn *fn = model_fn(ui->model, (uint32_t)g->top_fn);

		tl_field(l, UA_NORMAL, ui_fn_name(ui, fn, name, sizeof(name)),
			 ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0), flags);
	}
}

static void facet_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct facet *f = facet_of(v);
	int vw = value_width(ui, f), flags = ui->batch ? TL_NOCUT : 0;
	char pct[16], buf[1200];
	const struct model_value *val = any_val(f, i);
	int64_t value = val ? val->value : f->rest_value;
	uint64_t cnt = val ? val->n : f->rest_n;
	int marked = 0;

	if (f->kind == F_GOROUTINES && grow_group(f, i)) {
		group_row(ui, f, grow_group(f, i), l);
		return;
	}
	tl_reset(l);
	ui_pct(pct, sizeof(pct), value, f->tot.value);
	tl_field(l, ui_pct_attr(value, f->tot.value), pct, 7, TL_RIGHT);
	tl_printf(l, UA_NORMAL, "%10llu", (unsigned long long)cnt);
	if (ui->nxmodel) {
		const int64_t *x = val ? &f->xv[(size_t)(val - f->vals) * ui->nxmodel] : f->xrest;

		ui_member_cells(ui, l, value, x);
	}
	if (f->bvals) {
		int64_t bv;
		int have = !base_value(f, val, &bv);
		char d[32];
		int a = ui_base_delta(d, sizeof(d), value, f->tot.value, bv, f->btot.value, have);

		tl_field(l, a, d, 15, TL_RIGHT);
	}
	tl_put(l, UA_NORMAL, "  ");
	if (val)
		marked = ui_has_label_filter(ui, f->key, f->key_len, val->str, val->len, val->num);
	if (!val) {
		char k[300];

		ui_esc(ui, k, sizeof(k), f->key, f->key_len);
		snprintf(buf, sizeof(buf), k[0] ? "(no %s)" : "(none)", k);
		tl_field(l, UA_DIM, buf, vw, flags);
	} else if (f->kind == F_THREADS) {
		const struct live_thread *t = thread_name(ui, val->num);

		char comm[300];

		if (t)
			ui_escape(comm, sizeof(comm), t->comm, strlen(t->comm));
		snprintf(buf, sizeof(buf), "%s%-8lld %s", marked ? "*" : "", (long long)val->num,
			 t ? comm : ui->files ? "" : "(exited)"); /* `view`: no names known */
		tl_field(l, marked ? UA_MARK : UA_NORMAL, buf, vw, flags);
	} else if (val->str) {
		char e[1100];

		ui_esc(ui, e, sizeof(e), val->str, val->len);
		snprintf(buf, sizeof(buf), "%s%s", marked ? "*" : "", e);
		tl_field(l, marked ? UA_MARK : UA_NORMAL, buf, vw, flags);
	} else {
		/* A goroutine id, under its group. */
		snprintf(buf, sizeof(buf), "%s%s%lld", f->kind == F_GOROUTINES ? "  " : "",
			 marked ? "*" : "", (long long)val->num);
		tl_field(l, marked ? UA_MARK : UA_NORMAL, buf, vw, flags);
	}
	if (f->kind == F_LABELS && f->has_wall) {
		/* A numeric value has no wall time: wall labels are strings. */
		const struct ui_wall_split *sp =
			val && !val->str ? NULL
					 : ui_wall_split_find(&f->wall, val ? val->str : NULL,
							      val ? val->len : 0);

		ui_wall_cells(ui, l, sp, f->wall.d->p);
	}
	tl_put(l, UA_NORMAL, " ");
	if (!val && f->kind == F_GOROUTINES && ui->snap && ui->snap->ast.goid_young)
		/* agg.c, "Goroutine ids and memory" */
		tl_printf(l, UA_DIM, "no goroutine, or one younger than %.0f s once over %d were seen%s",
			  AGG_GOID_OLD_NS / 1e9, AGG_GOID_ALL_MAX, ui->snap->ast.goid_dropped ? "; " : "");
	/* agg.c, "Threads and memory" */
	if (!val && ui->snap &&
	    ((f->kind == F_GOROUTINES && ui->snap->ast.goid_dropped) || f->kind == F_THREADS))
		tl_printf(l, UA_DIM, "%snew combinations once the profile held %d entries",
			  f->kind == F_GOROUTINES && !ui->snap->ast.goid_young ? "no goroutine, or " : "",
			  AGG_SAMPLES_FULL);
	if (val && f->kind == F_GOROUTINES) {
		labels_text(ui, val->rep, buf, sizeof(buf));
		if (buf[0]) {
			tl_put(l, UA_DIM, buf);
			tl_put(l, UA_NORMAL, "  ");
		}
	}
	if (val && val->top_fn >= 0) {
		const struct model_fn *fn = model_fn(ui->model, (uint32_t)val->top_fn);

		char name[1100];

		tl_field(l, UA_NORMAL, ui_fn_name(ui, fn, name, sizeof(name)),
			 ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0), flags);
	}
}

static int facet_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct facet *f = facet_of(v);
	const struct model_value *val;
	size_t i, cur = 0;
	char kb[300];

	if (f->kind == F_GOROUTINES && grow_group(f, v->sel) &&
	    (a == ACT_ENTER || a == ACT_TOGGLE || a == ACT_EXPAND || a == ACT_COLLAPSE)) {
		/* Enter on a group lists its goroutine ids under it (or hides them). */
		uint64_t *slot = hashmap_put(&f->gs.expanded, grow_group(f, v->sel)->key, NULL);

		*slot = a == ACT_EXPAND ? 1 : a == ACT_COLLAPSE ? 0 : !*slot;
		groups_build(ui, f);
		return R_REDRAW;
	}
	if (f->kind == F_GOROUTINES && (a == ACT_COLLAPSE || a == ACT_TOGGLE) &&
	    grow_val(f, v->sel)) {
		/* On an id: hide its group's ids and select the group. */
		size_t g = f->gs.rows[v->sel].g;

		*hashmap_put(&f->gs.expanded, f->gs.grp[g].key, NULL) = 0;
		groups_build(ui, f);
		for (i = 0; i < f->gs.nrows; i++)
			if (f->gs.rows[i].g == g && f->gs.rows[i].v < 0)
				v->sel = i;
		return R_REDRAW;
	}
	switch (a) {
	case ACT_ENTER:
		val = any_val(f, v->sel);
		if (!val) {
			if (f->has_rest)
				ui_set_status(ui, UA_ERR, "samples without the label cannot be focused");
			return R_REDRAW;
		}
		ui_esc(ui, kb, sizeof(kb), f->key, f->key_len);
		if (ui_has_label_filter(ui, f->key, f->key_len, val->str, val->len, val->num)) {
			/* Enter on the focused value takes the focus away again. */
			ui_remove_label_filter(ui, f->key, f->key_len);
			ui_rebuild(ui);
			ui_update_view(ui, v);
			ui_set_status(ui, UA_OK, "focus on %s removed", kb);
			return R_REDRAW;
		}
		ui_add_filter(ui, MODEL_LABEL, 1, f->key, f->key_len, val->str, val->str ? val->len : 0,
			      val->num);
		ui_rebuild(ui);
		/* A new focus, a new list: Top starts at its first row. */
		ui->views[VIEW_TOP].moved = 0;
		{
			char vb[300];

			if (val->str)
				ui_esc(ui, vb, sizeof(vb), val->str, val->len);
			else
				snprintf(vb, sizeof(vb), "%lld", (long long)val->num);
			ui_set_status(ui, UA_OK, "focused on %s=%s (u clears; Backspace removes the last focus)",
				      kb, vb);
		}
		ui_action(ui, ACT_VIEW_TOP);
		return R_REDRAW;
	case ACT_PREV_KEY:
	case ACT_NEXT_KEY:
		if (f->kind != F_LABELS || !f->nkeys)
			return R_NONE;
		for (i = 0; i < f->nkeys; i++)
			if (is_key(f, &f->keys[i]))
				cur = i;
		cur = (cur + (a == ACT_NEXT_KEY ? 1 : f->nkeys - 1)) % f->nkeys;
		set_key(f, f->keys[cur].key, f->keys[cur].len);
		v->sel = v->top = 0;
		v->have_sel_id = 0;
		ui_update_view(ui, v);
		return R_REDRAW;
	case ACT_FIND_NEXT:
	case ACT_FIND_PREV:
		/* Search is for functions; here it finds the value whose hot function matches. */
		for (size_t k = 1, rows = facet_nrows(ui, v); k <= rows && ui->search[0]; k++) {
			size_t j = a == ACT_FIND_NEXT ? (v->sel + k) % rows : (v->sel + rows - k % rows) % rows;
			const struct model_value *jv = any_val(f, j);
			const struct ggroup *jg = f->kind == F_GOROUTINES ? grow_group(f, j) : NULL;
			long top = jv ? jv->top_fn : jg ? jg->top_fn : -1;
			const struct model_fn *fn =
				top >= 0 ? model_fn(ui->model, (uint32_t)top) : NULL;

			if (fn && memmem(fn->name, fn->name_len, ui->search, strlen(ui->search))) {
				v->sel = j;
				return R_REDRAW;
			}
		}
		return R_NONE;
	default:
		return R_NONE;
	}
}

static const char *facet_empty(struct ui *ui, struct view *v)
{
	struct facet *f = facet_of(v);

	if (!ui->model)
		return "no samples yet";
	switch (f->kind) {
	case F_LABELS:
		if (!f->nkeys)
			return ui->snap && ui->snap->go_version
				? "no pprof labels seen (Go code sets them with pprof.Do or pprof.SetGoroutineLabels)"
				: "no labels seen (pprof labels come from Go targets)";
		return "no sample carries this key under the focus";
	case F_GOROUTINES:
		if (!ui->snap || !ui->snap->go_version)
			return "not a Go program: no goroutines";
		if (!ui->snap->ast.with_goid)
			return "no goroutine found in the samples yet (--no-go, or an unsupported Go version)";
		return "no goroutine under the focus";
	case F_THREADS:
		return "no samples under the focus";
	}
	return "";
}

static long facet_selected_fn(struct ui *ui, struct view *v)
{
	struct facet *f = facet_of(v);
	const struct model_value *val = any_val(f, v->sel);

	if (f->kind == F_GOROUTINES && grow_group(f, v->sel))
		return grow_group(f, v->sel)->top_fn;
	return val ? val->top_fn : -1;
}

static void facet_free(struct view *v)
{
	struct facet *f = v->priv;

	if (f) {
		free(f->vals);
		free(f->xv);
		free(f->keys);
		free(f->key);
		free(f->bvals);
		hashmap_free(&f->bidx);
		groups_free(&f->gs);
		free(f->gs.rows);
		hashmap_free(&f->gs.expanded);
		ui_wall_splits_free(&f->wall);
	}
	free(f);
	v->priv = NULL;
}

size_t view_labels_keys(struct view *v, const struct model_key **keys)
{
	struct facet *f = facet_of(v);

	*keys = f->keys;
	return f->nkeys;
}

/* Labels, Goroutines and Threads are one facet view over different keys. */
#define FACET_OPS(display, batch)                                              \
	{                                                                      \
		.name = display, .batch_name = batch, .update = facet_update,  \
		.nrows = facet_nrows, .row_id = facet_row_id,                   \
		.title = facet_title, .row = facet_row, .action = facet_action, \
		.empty = facet_empty, .selected_fn = facet_selected_fn,         \
		.free = facet_free,                                             \
	}

const struct view_ops view_labels_ops = FACET_OPS("Labels", "labels");
const struct view_ops view_goroutines_ops = FACET_OPS("Goroutines", "goroutines");
const struct view_ops view_threads_ops = FACET_OPS("Threads", "threads");
