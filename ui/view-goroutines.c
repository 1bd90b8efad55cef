/* view-goroutines.c: the Goroutines view, in its first mode: on-CPU shares per goroutine
 * (the goroutine label, src/profile/agg.c), grouped by start function (the goroutine_fn
 * label) and pprof labels, each group with the number of goroutines it stands for; Enter
 * on a group lists their ids, Enter on an id focuses the other views on it (like go tool
 * pprof -tagfocus). Built on the facet views' common part (facet.h). Its other modes, m
 * switching: every goroutine now (view-goroutines-now.c) and wall time by state
 * (view-goroutines-wall.c). */
#include "config.h"
#include "facet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"

/* A group of goroutine ids sharing a start function and label set. */
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

/* A row: a group (v < 0), one of its ids (v: index into vals), or the samples without an
 * id (g == GROW_REST). */
#define GROW_REST ((size_t)-1)
struct grow {
	size_t g;
	long v;
};

/* The columns after the counts, laid out to the width (tl_cols). */
enum { GC_COUNT, GC_START, GC_LABELS, GC_HOT, GC_N };
static const char *const gc_head[GC_N] = { "GOROUTINES", "START FUNCTION", "LABELS",
					   "HOT FUNCTION" };

struct gview {
	struct facet f;          /* the goroutine label's values */
	struct tl_col col[GC_N];
	uint64_t gen, laid_gen;  /* the rows' generation, and the one laid out */
	int laid_names, laid_width;
	struct ggroup *grp;
	size_t ngrp;
	struct grow *rows;
	size_t nrows, caprows;
	struct hashmap expanded; /* group key -> 1 */
};

static struct gview *gview_of(struct view *v)
{
	if (!v->priv) {
		struct gview *g = xcalloc(1, sizeof(struct gview));

		facet_set_key(&g->f, "goroutine", 9);
		v->priv = g;
	}
	return v->priv;
}

/* The value of a row: its id's, or NULL for a group or the samples without one. */
static const struct model_value *grow_val(const struct gview *gv, size_t i)
{
	const struct grow *r = i < gv->nrows ? &gv->rows[i] : NULL;

	return r && r->g != GROW_REST && r->v >= 0 ? &gv->f.vals[r->v] : NULL;
}

static const struct ggroup *grow_group(const struct gview *gv, size_t i)
{
	const struct grow *r = i < gv->nrows ? &gv->rows[i] : NULL;

	return r && r->g != GROW_REST && r->v < 0 ? &gv->grp[r->g] : NULL;
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
			continue; /* the view's own column */
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

static void groups_free(struct gview *gv)
{
	size_t i;

	for (i = 0; i < gv->ngrp; i++)
		free(gv->grp[i].mem);
	free(gv->grp);
	gv->grp = NULL;
	gv->ngrp = 0;
	gv->nrows = 0;
}

static void grow_add(struct gview *gv, size_t g, long v)
{
	xgrow((void **)&gv->rows, &gv->caprows, gv->nrows + 1, sizeof(*gv->rows));
	gv->rows[gv->nrows].g = g;
	gv->rows[gv->nrows++].v = v;
}

/* Groups the goroutine ids (vals, by value descending) by start function and the label
 * set their representative sample carries (the set each spent most under). */
static void groups_make(struct ui *ui, struct gview *gv)
{
	const struct prof *p = model_prof(ui->model);
	struct hashmap idx = { 0 };
	char lt[1200];
	size_t i, cap = 0;

	for (i = 0; i < gv->f.n; i++) {
		const struct model_value *val = &gv->f.vals[i];
		struct ggroup *g;
		size_t fl = 0;
		const char *fn = sample_start_fn(p, val->rep, &fl);
		uint64_t key, *slot;
		int created;

		labels_text(ui, val->rep, lt, sizeof(lt));
		key = util_hash(lt, strlen(lt), fn ? util_hash(fn, fl, 3) : 4) | 1;
		slot = hashmap_put(&idx, key, &created);
		if (created) {
			xgrow((void **)&gv->grp, &cap, gv->ngrp + 1, sizeof(*gv->grp));
			g = &gv->grp[gv->ngrp];
			memset(g, 0, sizeof(*g));
			g->key = key;
			g->fn = fn;
			g->fnlen = fl;
			g->rep = val->rep;
			g->top_fn = val->top_fn; /* vals come by value: the first is the biggest */
			*slot = ++gv->ngrp;
		}
		g = &gv->grp[*slot - 1];
		g->value += val->value;
		g->n += val->n;
		g->mem = xrealloc(g->mem, (g->nmem + 1) * sizeof(*g->mem));
		g->mem[g->nmem++] = i;
	}
	hashmap_free(&idx);
	if (gv->ngrp > 1)
		qsort(gv->grp, gv->ngrp, sizeof(*gv->grp), group_cmp);
}

/* The rows: groups by value, the samples without an id among them, the ids of expanded
 * groups under theirs. */
static void groups_build(struct ui *ui, struct gview *gv)
{
	int rest_done = !gv->f.has_rest;
	size_t i, j;

	groups_free(gv);
	gv->gen++;
	groups_make(ui, gv);
	for (i = 0; i < gv->ngrp; i++) {
		const struct ggroup *g = &gv->grp[i];
		const uint64_t *e;

		if (!rest_done && g->value < gv->f.rest_value) {
			grow_add(gv, GROW_REST, -1);
			rest_done = 1;
		}
		grow_add(gv, i, -1);
		e = hashmap_get(&gv->expanded, g->key);
		if (e && *e)
			for (j = 0; j < g->nmem; j++)
				grow_add(gv, i, (long)g->mem[j]);
	}
	if (!rest_done)
		grow_add(gv, GROW_REST, -1);
}

static void gview_update(struct ui *ui, struct view *v)
{
	struct gview *gv = gview_of(v);

	facet_values(ui, &gv->f);
	groups_free(gv);
	if (ui->model)
		groups_build(ui, gv);
}

static size_t gview_nrows(struct ui *ui, struct view *v)
{
	return gview_of(v)->nrows;
}

static uint64_t gview_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct gview *gv = gview_of(v);
	const struct ggroup *g = grow_group(gv, i);

	if (g)
		return util_mix64(util_hash(gv->f.key, gv->f.key_len, 1) ^ g->key ^ 0x67727570ULL);
	return facet_value_id(&gv->f, grow_val(gv, i));
}

/* A row's cells after the counts, as text (escaped): its goroutine count or id, start
 * function, labels and hot function. */
struct gcells {
	char count[32], start[1100], labels[1300], hot[1100];
	int start_dim;
};

static void group_cells(struct ui *ui, struct gview *gv, const struct ggroup *g, struct gcells *c)
{
	const uint64_t *e = hashmap_get(&gv->expanded, g->key);

	memset(c, 0, sizeof(*c));
	snprintf(c->count, sizeof(c->count), "%c%zu", e && *e ? '-' : '+', g->nmem);
	if (g->fn)
		ui_name(ui, g->fn, g->fnlen, c->start, sizeof(c->start));
	else
		snprintf(c->start, sizeof(c->start), "(start unknown)");
	c->start_dim = !g->fn;
	labels_text(ui, g->rep, c->labels, sizeof(c->labels));
	c->hot[0] = 0;
	if (g->top_fn >= 0)
		ui_fn_name(ui, model_fn(ui->model, (uint32_t)g->top_fn), c->hot, sizeof(c->hot));
}

static void id_cells(struct ui *ui, struct gview *gv, const struct model_value *val, struct gcells *c)
{
	const struct facet *f = &gv->f;
	int marked = ui_has_label_filter(ui, f->key, f->key_len, val->str, val->len, val->num);

	memset(c, 0, sizeof(*c));
	snprintf(c->count, sizeof(c->count), "  %s%lld", marked ? "*" : "", (long long)val->num);
	c->start[0] = 0;
	c->start_dim = 0;
	labels_text(ui, val->rep, c->labels, sizeof(c->labels));
	c->hot[0] = 0;
	if (val->top_fn >= 0)
		ui_fn_name(ui, model_fn(ui->model, (uint32_t)val->top_fn), c->hot, sizeof(c->hot));
}

/* The columns' widths: the widest cell of each (and its header), laid out in what the
 * counts leave. Names are measured as shown, short or full: made again when that or the
 * width changes, as when the rows do. */
static void layout(struct ui *ui, struct gview *gv)
{
	struct gcells c;
	struct tline l;
	size_t i;
	int k, want[GC_N] = { 0 };

	if (gv->laid_gen == gv->gen && gv->laid_names == ui_short_names(ui) &&
	    gv->laid_width == ui_table_width(ui))
		return;
	for (i = 0; i < gv->nrows; i++) {
		const struct ggroup *g = grow_group(gv, i);
		const struct model_value *val = grow_val(gv, i);

		if (g)
			group_cells(ui, gv, g, &c);
		else if (val)
			id_cells(ui, gv, val, &c);
		else
			continue; /* the rest row spans the names' columns */
		want[GC_COUNT] = GP_MAX(want[GC_COUNT], tl_width(c.count));
		want[GC_START] = GP_MAX(want[GC_START], tl_width(c.start));
		want[GC_LABELS] = GP_MAX(want[GC_LABELS], tl_width(c.labels));
		want[GC_HOT] = GP_MAX(want[GC_HOT], tl_width(c.hot));
	}
	facet_title_cells(ui, &l);
	for (k = 0; k < GC_N; k++) {
		int head = tl_width(gc_head[k]);

		/* No labels anywhere: no LABELS column. */
		if (k == GC_LABELS && !want[k]) {
			gv->col[k] = (struct tl_col){ 0 };
			continue;
		}
		gv->col[k].want = GP_MAX(want[k], head);
		gv->col[k].min = k == GC_COUNT ? gv->col[k].want : GP_MIN(gv->col[k].want, head);
		/* The labels give first, down to a pair or so, then the names share. */
		if (k == GC_LABELS)
			gv->col[k].min = GP_MIN(gv->col[k].want, 16);
		gv->col[k].prio = k != GC_LABELS;
	}
	tl_cols(gv->col, GC_N, UI_GAP, ui_table_width(ui) - l.cols - UI_GAP);
	gv->laid_gen = gv->gen;
	gv->laid_names = ui_short_names(ui);
	gv->laid_width = ui_table_width(ui);
}

static void cell(struct ui *ui, struct gview *gv, struct tline *l, int k, int attr, const char *s,
		 int flags)
{
	ui_cell(ui, l, gv->col, GC_N, k, attr, s, flags);
}

static void gview_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct gview *gv = gview_of(v);

	layout(ui, gv);
	facet_title_cells(ui, l);
	for (int k = 0; k < GC_N; k++)
		cell(ui, gv, l, k, UA_HEAD, gc_head[k], 0);
	if (!ui->batch)
		tl_pad(l, ui->width);
}

static void cells_row(struct ui *ui, struct gview *gv, const struct gcells *c, int count_attr,
		      struct tline *l)
{
	cell(ui, gv, l, GC_COUNT, count_attr, c->count, 0);
	cell(ui, gv, l, GC_START, c->start_dim ? UA_DIM : UA_NORMAL, c->start, TL_CUT_NAME);
	cell(ui, gv, l, GC_LABELS, UA_DIM, c->labels, 0);
	cell(ui, gv, l, GC_HOT, UA_NORMAL, c->hot, TL_CUT_NAME);
}

/* A group's row: share, samples, the members' columns, its goroutines, start function,
 * labels, hot function. */
static void group_row(struct ui *ui, struct gview *gv, const struct ggroup *g, struct tline *l)
{
	int64_t x[PROF_MAX_VALUES] = { 0 }; /* the members' totals: sums over its ids */
	struct gcells c;
	size_t k, j;

	for (k = 0; k < ui->nxmodel && k < PROF_MAX_VALUES; k++)
		for (j = 0; j < g->nmem; j++)
			x[k] += gv->f.xv[g->mem[j] * ui->nxmodel + k];
	facet_count_cells(ui, &gv->f, g->value, g->n, x, l);
	group_cells(ui, gv, g, &c);
	cells_row(ui, gv, &c, UA_NORMAL, l);
}

/* The row of the samples without a goroutine id: why they have none (agg.c, "Goroutine
 * ids and memory", "Threads and memory"), across the names' columns. */
static void rest_row(struct ui *ui, struct gview *gv, struct tline *l)
{
	const struct facet *f = &gv->f;
	const struct agg_stats *st = ui->snap ? &ui->snap->ast : NULL;
	char k[300], buf[600];

	facet_count_cells(ui, f, f->rest_value, f->rest_n, facet_member_values(ui, f, NULL), l);
	cell(ui, gv, l, GC_COUNT, UA_DIM, "", 0);
	ui_esc(ui, k, sizeof(k), f->key, f->key_len);
	snprintf(buf, sizeof(buf), "(no %s)", k);
	tl_put(l, UA_NORMAL, "  ");
	tl_put(l, UA_DIM, buf);
	buf[0] = 0;
	if (st && st->goid_young)
		snprintf(buf, sizeof(buf), "no goroutine, or one younger than %.0f s once over %d were seen%s",
			 AGG_GOID_OLD_NS / 1e9, AGG_GOID_ALL_MAX, st->goid_dropped ? "; " : "");
	if (st && st->goid_dropped)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf),
			 "%snew combinations once the profile held %d entries",
			 !st->goid_young ? "no goroutine, or " : "", AGG_SAMPLES_FULL);
	if (buf[0]) {
		tl_put(l, UA_NORMAL, "  ");
		tl_field(l, UA_DIM, buf, ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0),
			 ui->batch ? TL_NOCUT : 0);
	}
}

/* A goroutine id's row, under its group: its labels and hot function. */
static void id_row(struct ui *ui, struct gview *gv, const struct model_value *val, struct tline *l)
{
	const struct facet *f = &gv->f;
	int marked = ui_has_label_filter(ui, f->key, f->key_len, val->str, val->len, val->num);
	struct gcells c;

	facet_count_cells(ui, f, val->value, val->n, facet_member_values(ui, f, val), l);
	id_cells(ui, gv, val, &c);
	cells_row(ui, gv, &c, marked ? UA_MARK : UA_NORMAL, l);
}

static void gview_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct gview *gv = gview_of(v);
	const struct ggroup *g = grow_group(gv, i);
	const struct model_value *val = grow_val(gv, i);

	tl_reset(l);
	layout(ui, gv);
	if (g)
		group_row(ui, gv, g, l);
	else if (val)
		id_row(ui, gv, val, l);
	else
		rest_row(ui, gv, l);
}

static long gview_top_fn(struct view *v, size_t row)
{
	struct gview *gv = gview_of(v);
	const struct model_value *val = grow_val(gv, row);
	const struct ggroup *g = grow_group(gv, row);

	return val ? val->top_fn : g ? g->top_fn : -1;
}

static int gview_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct gview *gv = gview_of(v);
	int open;
	size_t i;

	if (a == ACT_SHOW_IDLE || a == ACT_GROUP_BY) {
		ui_set_status(ui, UA_DIM, "a and b are the Wall mode's (m m)");
		return R_REDRAW;
	}
	if (a == ACT_FOCUS_LABELS)
		a = ACT_ENTER;
	open = a == ACT_ENTER || a == ACT_TOGGLE || a == ACT_EXPAND || a == ACT_COLLAPSE;

	if (open && grow_group(gv, v->sel)) {
		/* Enter on a group lists its goroutine ids under it (or hides them). */
		uint64_t *slot = hashmap_put(&gv->expanded, grow_group(gv, v->sel)->key, NULL);

		*slot = a == ACT_EXPAND ? 1 : a == ACT_COLLAPSE ? 0 : !*slot;
		groups_build(ui, gv);
		return R_REDRAW;
	}
	if ((a == ACT_COLLAPSE || a == ACT_TOGGLE) && grow_val(gv, v->sel)) {
		/* On an id: hide its group's ids and select the group. */
		size_t g = gv->rows[v->sel].g;

		*hashmap_put(&gv->expanded, gv->grp[g].key, NULL) = 0;
		groups_build(ui, gv);
		for (i = 0; i < gv->nrows; i++)
			if (gv->rows[i].g == g && gv->rows[i].v < 0)
				v->sel = i;
		return R_REDRAW;
	}
	switch (a) {
	case ACT_ENTER:
		return facet_focus(ui, v, &gv->f, grow_val(gv, v->sel));
	case ACT_FIND_NEXT:
	case ACT_FIND_PREV:
		return facet_find(ui, v, gv->nrows, gview_top_fn, a == ACT_FIND_NEXT ? 1 : -1);
	default:
		return R_NONE;
	}
}

static const char *gview_empty(struct ui *ui, struct view *v)
{
	if (!ui->model)
		return "no samples yet";
	if (!ui->snap || !ui->snap->go_version)
		return "not a Go program: no goroutines";
	if (!ui->snap->ast.with_goid)
		return "no goroutine found in the samples yet (--no-go, or an unsupported Go version)";
	return "no goroutine under the focus";
}

static long gview_selected_fn(struct ui *ui, struct view *v)
{
	return gview_top_fn(v, v->sel);
}

static void gview_free(struct view *v)
{
	struct gview *gv = v->priv;

	if (gv) {
		facet_fini(&gv->f);
		groups_free(gv);
		free(gv->rows);
		hashmap_free(&gv->expanded);
	}
	free(gv);
	v->priv = NULL;
}

const struct view_ops view_goroutines_ops = {
	.update = gview_update,
	.nrows = gview_nrows,
	.row_id = gview_row_id,
	.title = gview_title,
	.row = gview_row,
	.action = gview_action,
	.empty = gview_empty,
	.selected_fn = gview_selected_fn,
	.free = gview_free,
};
