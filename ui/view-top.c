/* view-top.c: the Top view: a flat list of functions (or source lines) with self %,
 * total %, samples and where they are; sorted live without losing the selection. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"

enum { SORT_SELF, SORT_TOTAL, SORT_NAME, SORT_COUNT };
static const char *const sort_names[SORT_COUNT] = { "self", "total", "name" };

struct top {
	struct model_flat *rows;  /* sorted: rows[i] = mrows[order[i]] */
	struct model_flat *mrows; /* model_flat's order */
	uint32_t *order;
	size_t n, caprows, caporder;
	size_t norder; /* the rows the last sort ordered (order[0..norder)) */
	int sort;
	struct model_totals tot;
	/* A group: each member's total per row (of mrows), nxmodel a row, and the event's. */
	int64_t *xtot;
	size_t capxtot;
};

/* Column width of a member's value and of its ratio. */

static struct top *top_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct top));
	return v->priv;
}

static int name_cmp(const struct model_flat *x, const struct model_flat *y, const struct model *sort_model)
{
	const struct model_fn *a = model_fn(sort_model, x->fn), *b = model_fn(sort_model, y->fn);
	size_t l = GP_MIN(a->name_len, b->name_len);
	int c = memcmp(a->name, b->name, l);

	if (c)
		return c;
	if (a->name_len != b->name_len)
		return a->name_len < b->name_len ? -1 : 1;
	return (x->line > y->line) - (x->line < y->line);
}

static int cmp_self(const void *pa, const void *pb, void *m)
{
	const struct model_flat *x = pa, *y = pb;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return name_cmp(x, y, m);
}

static int cmp_total(const void *pa, const void *pb, void *m)
{
	const struct model_flat *x = pa, *y = pb;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return name_cmp(x, y, m);
}

static int cmp_name(const void *pa, const void *pb, void *m)
{
	return name_cmp(pa, pb, m);
}

struct sort_ctx {
	const struct model_flat *rows;
	int (*cmp)(const void *, const void *, void *);
	const struct model *m;
};

static int idx_cmp(const void *pa, const void *pb, void *arg)
{
	const struct sort_ctx *c = arg;

	return c->cmp(&c->rows[*(const uint32_t *)pa], &c->rows[*(const uint32_t *)pb], (void *)c->m);
}

/* Sorts t->mrows into t->rows, starting from the last sort's order. model_flat keeps its
 * rows from refresh to refresh and appends new ones (src/live/model.c, the kept flat
 * profile), so the last order, with the new rows after it, is nearly sorted, and an
 * insertion sort finishes it in about n comparisons where a full qsort_r needs n log n
 * at every refresh, a visible part of the screen thread's work (BENCHMARKS.md, "Own
 * CPU against perf top"). Rows in a new order (the model started again, another
 * sort key, a decaying window) would cost the insertion sort n^2: past 4n moves
 * qsort_r sorts. */
static void top_sort(struct ui *ui, struct top *t)
{
	struct sort_ctx c = { t->mrows,
			      t->sort == SORT_SELF ? cmp_self : t->sort == SORT_TOTAL ? cmp_total : cmp_name,
			      ui->model };
	uint32_t *ord;
	size_t i, moves = 0, budget = 4 * t->n + 64;

	if (!t->n || !ui->model) {
		t->norder = 0;
		return;
	}
	xgrow((void **)&t->order, &t->caporder, t->n, sizeof(*t->order));
	xgrow((void **)&t->rows, &t->caprows, t->n, sizeof(*t->rows));
	ord = t->order;
	if (t->norder > t->n)
		t->norder = 0; /* fewer rows than before: the model started again */
	for (i = t->norder; i < t->n; i++)
		ord[i] = (uint32_t)i;
	for (i = 1; i < t->n && moves <= budget; i++) {
		uint32_t x = ord[i];
		size_t j = i;

		while (j > 0 && idx_cmp(&ord[j - 1], &x, &c) > 0) {
			ord[j] = ord[j - 1];
			j--;
			moves++;
		}
		ord[j] = x;
	}
	if (moves > budget)
		qsort_r(ord, t->n, sizeof(*ord), idx_cmp, &c);
	for (i = 0; i < t->n; i++)
		t->rows[i] = t->mrows[ord[i]];
	t->norder = t->n;
}

static uint64_t flat_key(const struct model *m, const struct model_flat *r, int by_line)
{
	return util_mix64(model_fn(m, r->fn)->hash ^
			  (by_line ? (uint64_t)r->line * 0x9e3779b97f4a7c15ULL : 0));
}

/* A group's members: the same rows in each member's model (by function name and line,
 * whose indexes may differ between models), their totals beside the event's. */
static void members_update(struct ui *ui, struct top *t)
{
	size_t k, i, nx = ui->nxmodel;

	if (!nx || !t->n)
		return;
	xgrow((void **)&t->xtot, &t->capxtot, t->n * nx, sizeof(*t->xtot));
	memset(t->xtot, 0, t->n * nx * sizeof(*t->xtot));
	for (k = 0; k < nx; k++) {
		struct model_flat *xr = NULL;
		size_t xn = model_flat(ui->xmodel[k], &xr);
		struct hashmap idx = { 0 };

		for (i = 0; i < xn; i++)
			*hashmap_put(&idx, flat_key(ui->xmodel[k], &xr[i], ui->by_line), NULL) = i + 1;
		for (i = 0; i < t->n; i++) {
			uint64_t *j = hashmap_get(&idx, flat_key(ui->model, &t->mrows[i], ui->by_line));

			if (j && *j)
				t->xtot[i * nx + k] = xr[*j - 1].total;
		}
		hashmap_free(&idx);
		free(xr);
	}
}

static void top_update(struct ui *ui, struct view *v)
{
	struct top *t = top_of(v);

	free(t->mrows);
	t->mrows = NULL;
	t->n = 0;
	memset(&t->tot, 0, sizeof(t->tot));
	if (!ui->model) {
		t->norder = 0;
		return;
	}
	t->n = model_flat(ui->model, &t->mrows);
	model_totals(ui->model, &t->tot);
	members_update(ui, t);
	top_sort(ui, t);
}

static size_t top_nrows(struct ui *ui, struct view *v)
{
	return top_of(v)->n;
}

static uint64_t top_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct top *t = top_of(v);
	const struct model_fn *f = model_fn(ui->model, t->rows[i].fn);

	return util_mix64(f->hash ^ (ui->by_line ? (uint64_t)t->rows[i].line * 0x9e3779b97f4a7c15ULL : 0));
}

/* Column widths for a screen line; batch lines never cut names. */
static void widths(struct ui *ui, int *namew, int *locw)
{
	if (ui->batch) {
		*namew = 48;
		*locw = 0;
		return;
	}
	*locw = GP_MIN(30, ui->width / 4);
	*namew = ui->width - 24 - 1 - *locw - 1 - (ui->base_model ? 15 : 0) -
		 ui_member_cols(ui);
	if (*namew < 10)
		*namew = 10;
}

static void top_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct top *t = top_of(v);
	int namew, locw;

	widths(ui, &namew, &locw);
	tl_reset(l);
	tl_field(l, t->sort == SORT_SELF ? UA_MARK : UA_HEAD, "SELF%", 7, TL_RIGHT);
	tl_field(l, t->sort == SORT_TOTAL ? UA_MARK : UA_HEAD, "TOTAL%", 8, TL_RIGHT);
	if (ui->base_model)
		tl_field(l, UA_HEAD, ui_mem_viewed(ui) ? "   THEN  DELTA" /* of the self value */
			 : " THEN%  DELTA", 15, TL_RIGHT); /* of SELF%, in points */
	tl_field(l, UA_HEAD, ui_mem_viewed(ui) ? ui_mem_head(ui) : "SAMPLES", 9, TL_RIGHT);
	ui_member_title_cells(ui, l);
	tl_put(l, UA_HEAD, " ");
	tl_field(l, t->sort == SORT_NAME ? UA_MARK : UA_HEAD, ui->by_line ? "FUNCTION:LINE" : "FUNCTION",
		 namew, ui->batch ? TL_NOCUT : 0);
	tl_put(l, UA_HEAD, " ");
	if (ui->batch)
		tl_put(l, UA_HEAD, "LOCATION");
	else
		tl_field(l, UA_HEAD, "LOCATION", locw, 0);
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

/* "file.go:123", or the module (executable or library) when there is no file. */
static void location_text(struct ui *ui, const struct model_fn *f, int64_t line, char *buf, size_t n)
{
	char tmp[512];

	if (f->file) {
		ui_esc(ui, tmp, sizeof(tmp), base_name(f->file), strlen(base_name(f->file)));
		if (line > 0)
			snprintf(buf, n, "%s:%lld", tmp, (long long)line);
		else
			snprintf(buf, n, "%s", tmp);
	} else if (f->module) {
		ui_esc(ui, tmp, sizeof(tmp), base_name(f->module), strlen(base_name(f->module)));
		snprintf(buf, n, "%s", tmp);
	} else {
		buf[0] = 0;
	}
}

static int name_matches(struct ui *ui, const struct model_fn *f)
{
	return ui->search[0] && memmem(f->name, f->name_len, ui->search, strlen(ui->search));
}

static void top_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct top *t = top_of(v);
	const struct model_flat *r = &t->rows[i];
	const struct model_fn *f = model_fn(ui->model, r->fn);
	char pct[16], name[1100], loc[600];
	int namew, locw;

	widths(ui, &namew, &locw);
	tl_reset(l);
	ui_pct(pct, sizeof(pct), r->self, t->tot.value);
	tl_field(l, ui_pct_attr(r->self, t->tot.value), pct, 7, TL_RIGHT);
	ui_pct(pct, sizeof(pct), r->total, t->tot.value);
	tl_field(l, ui_pct_attr(r->total, t->tot.value), pct, 8, TL_RIGHT);
	if (ui->base_model) {
		int64_t bs, bt;
		int have = !ui_base_fn(ui, f, &bs, &bt);
		char d[32];
		int a = ui_mem_viewed(ui)
				? ui_mem_growth(ui, d, sizeof(d), r->self, bs, have)
				: ui_base_delta(d, sizeof(d), r->self, t->tot.value, bs,
						ui_base_all(ui), have);

		tl_field(l, a, d, 15, TL_RIGHT | (ui->batch ? TL_NOCUT : 0));
	}
	if (ui_mem_viewed(ui))
		ui_mem_value(ui, l, r->self);
	else
		tl_printf(l, UA_NORMAL, "%9llu", (unsigned long long)r->self_n);
	/* A group's members: the function's total of each (it and its callees, where a
	 * member's counts are as often in callees as in the function: page faults in the
	 * kernel), and the ratio to the event's total. */
	if (ui->nxmodel && i < t->norder) {
		const int64_t *x = &t->xtot[(size_t)t->order[i] * ui->nxmodel];

		ui_member_cells(ui, l, r->total, x);
	}
	tl_put(l, UA_NORMAL, " ");
	ui_fn_name(ui, f, name, sizeof(name) - 32);
	if (ui->by_line && r->line > 0)
		snprintf(name + strlen(name), 32, ":%lld", (long long)r->line);
	tl_field(l, name_matches(ui, f) ? UA_MATCH : UA_NORMAL, name, namew, ui->batch ? TL_NOCUT : 0);
	tl_put(l, UA_NORMAL, " ");
	location_text(ui, f, r->line, loc, sizeof(loc));
	if (ui->batch)
		tl_put(l, UA_DIM, loc);
	else
		tl_field(l, UA_DIM, loc, locw, TL_CUT_LEFT);
}

static long top_selected_fn(struct ui *ui, struct view *v)
{
	struct top *t = top_of(v);

	return v->sel < t->n ? (long)t->rows[v->sel].fn : -1;
}

static int top_find(struct ui *ui, struct view *v, int dir)
{
	struct top *t = top_of(v);
	size_t i, k;

	if (!ui->search[0] || !t->n)
		return R_NONE;
	for (k = 1; k <= t->n; k++) {
		i = dir > 0 ? (v->sel + k) % t->n : (v->sel + t->n - k % t->n) % t->n;
		if (name_matches(ui, model_fn(ui->model, t->rows[i].fn))) {
			v->sel = i;
			return R_REDRAW;
		}
	}
	{
		char e[300];

		ui_esc(ui, e, sizeof(e), ui->search, strlen(ui->search));
		ui_set_status(ui, UA_ERR, "no function matches \"%s\"", e);
	}
	return R_REDRAW;
}

static int top_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct top *t = top_of(v);

	switch (a) {
	case ACT_SORT:
		ui_remember_sel(ui, v);
		t->sort = (t->sort + 1) % SORT_COUNT;
		top_sort(ui, t);
		ui_restore_sel(ui, v);
		ui_set_status(ui, UA_OK, "sorted by %s", sort_names[t->sort]);
		return R_REDRAW;
	case ACT_BY_LINE:
		ui->by_line = !ui->by_line;
		v->have_sel_id = 0;
		ui_set_status(ui, UA_OK, "%s", ui->by_line ? "by source line" : "by function");
		return R_MODEL | R_UPDATE | R_REDRAW;
	case ACT_FIND_NEXT:
		return top_find(ui, v, 1);
	case ACT_FIND_PREV:
		return top_find(ui, v, -1);
	default:
		return R_NONE;
	}
}

static const char *top_empty(struct ui *ui, struct view *v)
{
	if (!ui->model)
		return "no samples yet (an idle target gives none: it must run on a CPU or cause the event)";
	return ui->nfilters ? "no sample passes the focus (u clears it)" : "no samples yet";
}

static void top_free(struct view *v)
{
	struct top *t = v->priv;

	if (t) {
		free(t->rows);
		free(t->mrows);
		free(t->order);
		free(t->xtot);
	}
	free(t);
	v->priv = NULL;
}

/* --sort self, total or name. */
static int top_option(struct ui *ui, struct view *v, const char *name, const char *value)
{
	int i;

	if (strcmp(name, "sort"))
		return 1;
	for (i = 0; i < SORT_COUNT; i++)
		if (value && !strcmp(value, sort_names[i])) {
			top_of(v)->sort = i;
			return 0;
		}
	ui_set_status(ui, UA_ERR, "invalid sort '%s' (self, total or name)", value ? value : "");
	return -1;
}

const struct view_ops view_top_ops = {
	.update = top_update,
	.nrows = top_nrows,
	.row_id = top_row_id,
	.title = top_title,
	.row = top_row,
	.action = top_action,
	.empty = top_empty,
	.selected_fn = top_selected_fn,
	.option = top_option,
	.free = top_free,
};
