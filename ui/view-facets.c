/* view-facets.c: the views that split samples by the values of one label key (a facet):
 * Labels (a pprof label key chosen among those seen) and Threads (gotop-perf's thread
 * label); Enter focuses the other views on the selected value (like go tool pprof
 * -tagfocus). Also the part such views share (facet.h), on which the Goroutines view's
 * on-CPU mode is built (view-goroutines.c). */
#include "config.h"
#include "facet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"

/* --- the common part --- */

void facet_set_key(struct facet *f, const char *key, size_t len)
{
	char *k = xmemdup0(key, len);

	free(f->key);
	f->key = k;
	f->key_len = len;
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

void facet_clear(struct facet *f)
{
	free(f->vals);
	f->vals = NULL;
	f->n = 0;
	f->has_rest = 0;
	memset(&f->tot, 0, sizeof(f->tot));
}

void facet_values(struct ui *ui, struct facet *f)
{
	size_t i;
	int64_t sum = 0;
	uint64_t sumn = 0;

	facet_clear(f);
	if (!ui->model)
		return;
	f->n = model_label_values(ui->model, f->key, f->key_len, &f->vals, &f->tot);
	members_update(ui, f);
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
}

void facet_fini(struct facet *f)
{
	free(f->vals);
	free(f->xv);
	free(f->key);
	memset(f, 0, sizeof(*f));
}

uint64_t facet_value_id(const struct facet *f, const struct model_value *val)
{
	uint64_t h = util_hash(f->key, f->key_len, 1);

	if (!val)
		return util_mix64(h ^ 0x6e6f6e65ULL);
	if (val->str)
		return util_mix64(h ^ util_hash(val->str, val->len, 2));
	return util_mix64(h ^ (uint64_t)val->num * 0x9e3779b97f4a7c15ULL);
}

const int64_t *facet_member_values(struct ui *ui, const struct facet *f,
				   const struct model_value *val)
{
	if (!ui->nxmodel)
		return NULL;
	return val ? &f->xv[(size_t)(val - f->vals) * ui->nxmodel] : f->xrest;
}

void facet_title_cells(struct ui *ui, struct tline *l)
{
	tl_reset(l);
	tl_field(l, UA_HEAD, "SHARE%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "SAMPLES", 10, TL_RIGHT);
	ui_member_title_cells(ui, l);
}

void facet_count_cells(struct ui *ui, const struct facet *f, int64_t value, uint64_t n,
		       const int64_t *x, struct tline *l)
{
	char pct[16];

	ui_pct(pct, sizeof(pct), value, f->tot.value);
	tl_field(l, ui_pct_attr(value, f->tot.value), pct, 7, TL_RIGHT);
	tl_printf(l, UA_NORMAL, "%10llu", (unsigned long long)n);
	if (x)
		ui_member_cells(ui, l, value, x);
}

void facet_rest_cell(struct ui *ui, const struct facet *f, int width, struct tline *l)
{
	char k[300], buf[320];

	ui_esc(ui, k, sizeof(k), f->key, f->key_len);
	snprintf(buf, sizeof(buf), k[0] ? "(no %s)" : "(none)", k);
	tl_field(l, UA_DIM, buf, width, ui->batch ? TL_NOCUT : 0);
}

/* A hot function cell: function fn of model m (the baseline's for a value gone). */
static void hot_fn_cell(struct ui *ui, struct model *m, long fn, int attr, struct tline *l)
{
	char name[1100];

	if (fn < 0)
		return;
	tl_field(l, attr, ui_fn_name(ui, model_fn(m, (uint32_t)fn), name, sizeof(name)),
		 ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0), ui->batch ? TL_NOCUT : 0);
}

void facet_hot_fn(struct ui *ui, long fn, struct tline *l)
{
	hot_fn_cell(ui, ui->model, fn, UA_NORMAL, l);
}

int facet_focus(struct ui *ui, struct view *v, const struct facet *f, const struct model_value *val)
{
	char kb[300], vb[300];

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
	if (val->str)
		ui_esc(ui, vb, sizeof(vb), val->str, val->len);
	else
		snprintf(vb, sizeof(vb), "%lld", (long long)val->num);
	ui_add_filter(ui, MODEL_LABEL, 1, f->key, f->key_len, val->str, val->str ? val->len : 0,
		      val->num);
	ui_rebuild(ui);
	/* A new focus, a new list: Top starts at its first row. */
	ui->views[VIEW_TOP].moved = 0;
	ui_set_status(ui, UA_OK, "focused on %s=%s (u clears; Backspace removes the last focus)", kb, vb);
	return ui_action(ui, ACT_VIEW(VIEW_TOP));
}

int facet_find(struct ui *ui, struct view *v, size_t nrows, long (*top_fn)(struct view *v, size_t row),
	       int dir)
{
	/* Search is for functions; here it finds the value whose hot function matches. */
	for (size_t k = 1; k <= nrows && ui->search[0]; k++) {
		size_t j = dir > 0 ? (v->sel + k) % nrows : (v->sel + nrows - k % nrows) % nrows;
		long top = top_fn(v, j);
		const struct model_fn *fn = top >= 0 ? model_fn(ui->model, (uint32_t)top) : NULL;

		if (fn && memmem(fn->name, fn->name_len, ui->search, strlen(ui->search))) {
			v->sel = j;
			return R_REDRAW;
		}
	}
	return R_NONE;
}

/* --- Labels and Threads --- */

struct fview {
	struct facet f;
	int threads;             /* Threads (the thread label), else Labels */
	struct model_key *keys;  /* Labels: string keys seen (borrowed names) */
	size_t nkeys;
	/* Labels with a baseline (ui_base_*): the key's values in it, found by string. */
	struct model_value *bvals;
	size_t bn;
	struct model_totals btot;
	int64_t brest;           /* the baseline's samples without the key */
	struct hashmap bidx;     /* hash of a value (+ probe) -> index + 1 in bvals */
	/* The baseline's values with no sample now (as pprof -diff_base lists a function
	 * gone), after the rows of the values seen: indexes in bvals, by its value, GONE_REST
	 * for the baseline's samples without the key when none are left. */
	size_t *gone;
	size_t ngone;
	/* Labels of a Go target with wall-clock data (wall.c): each value's wall time by
	 * state, shown beside its on-CPU share. */
	struct ui_wall_splits wall;
	int has_wall;
};

static struct fview *fview_of(struct view *v)
{
	if (!v->priv) {
		struct fview *fv = xcalloc(1, sizeof(struct fview));

		fv->threads = v->id == VIEW_THREADS;
		if (fv->threads)
			facet_set_key(&fv->f, "thread", 6);
		else
			facet_set_key(&fv->f, "", 0);
		v->priv = fv;
	}
	return v->priv;
}

/* The value shown at row i, or NULL for the row of samples without the key. */
static const struct model_value *row_val(const struct facet *f, size_t i)
{
	if (f->has_rest && i >= f->rest_at)
		return i == f->rest_at ? NULL : i - 1 < f->n ? &f->vals[i - 1] : NULL;
	return i < f->n ? &f->vals[i] : NULL;
}

#define GONE_REST ((size_t)-1)

/* Labels with a baseline: the value at row i, any row (NULL: the samples without the
 * key); *gone is set for the rows after those of the values seen, the baseline's values
 * gone. */
static const struct model_value *fview_val(const struct fview *fv, size_t i, int *gone)
{
	size_t seen = fv->f.n + (size_t)fv->f.has_rest;

	*gone = i >= seen && i - seen < fv->ngone;
	if (!*gone)
		return row_val(&fv->f, i);
	return fv->gone[i - seen] == GONE_REST ? NULL : &fv->bvals[fv->gone[i - seen]];
}

static int is_key(const struct facet *f, const struct model_key *k)
{
	return f->key_len == k->len && !memcmp(f->key, k->key, k->len);
}

/* Keys the Threads and Goroutines views show (goroutine_fn: gotop-perf's own label, the
 * Goroutines view's groups), not among the Labels view's pprof label keys. */
static int own_view_key(const struct model_key *k)
{
	return (k->len == 6 && !memcmp(k->key, "thread", 6)) ||
	       (k->len == 9 && !memcmp(k->key, "goroutine", 9)) ||
	       (k->len == 12 && !memcmp(k->key, "goroutine_fn", 12));
}

/* Labels: the keys seen, the one shown kept while it is among them. 0, or -1 when there
 * is none. */
static int labels_keys(struct ui *ui, struct fview *fv)
{
	struct model_key *all;
	size_t n = model_label_keys(ui->model, &all), nk = 0, i;

	/* Threads and goroutines have views of their own. */
	for (i = 0; i < n; i++)
		if (!own_view_key(&all[i]))
			all[nk++] = all[i];
	fv->keys = all;
	fv->nkeys = nk;
	for (i = 0; i < nk; i++)
		if (is_key(&fv->f, &fv->keys[i]))
			return 0;
	if (!nk)
		return -1;
	facet_set_key(&fv->f, fv->keys[0].key, fv->keys[0].len);
	return 0;
}

static uint64_t base_hash(const struct model_value *v)
{
	return util_hash(v->str ? v->str : "", v->len, (uint64_t)v->num);
}

/* The index in bvals of the baseline's entry for val, or -1 when it has none. */
static long base_index(const struct fview *fv, const struct model_value *val)
{
	uint64_t h, *slot;

	for (h = base_hash(val); (slot = hashmap_get(&fv->bidx, h)); h++) {
		const struct model_value *b = &fv->bvals[*slot - 1];

		if (!b->str == !val->str && b->len == val->len && b->num == val->num &&
		    (!b->str || !memcmp(b->str, val->str, val->len)))
			return (long)(*slot - 1);
	}
	return -1;
}

/* The baseline's value of val (NULL: the samples without the key); 0, or -1 when the
 * baseline has none. */
static int base_value(const struct fview *fv, const struct model_value *val, int64_t *out)
{
	long k;

	*out = 0;
	if (!val) {
		*out = fv->brest;
		return fv->brest > 0 ? 0 : -1;
	}
	k = base_index(fv, val);
	if (k < 0)
		return -1;
	*out = fv->bvals[k].value;
	return 0;
}

/* Labels with a baseline: the key's values in it, indexed by value, and those gone. */
static void labels_base(struct ui *ui, struct fview *fv)
{
	int64_t bsum = 0;
	char *seen;
	int rest_gone;
	size_t i;

	fv->bn = model_label_values(ui->base_model, fv->f.key, fv->f.key_len, &fv->bvals, &fv->btot);
	for (i = 0; i < fv->bn; i++) {
		uint64_t h = base_hash(&fv->bvals[i]), *slot;
		int created;

		bsum += fv->bvals[i].value;
		while (!(slot = hashmap_put(&fv->bidx, h, &created), created))
			h++;
		*slot = i + 1;
	}
	fv->brest = fv->btot.value - bsum;
	seen = xcalloc(fv->bn + 1, 1);
	for (i = 0; i < fv->f.n; i++) {
		long k = base_index(fv, &fv->f.vals[i]);

		if (k >= 0)
			seen[k] = 1;
	}
	fv->gone = xcalloc(fv->bn + 1, sizeof(*fv->gone));
	rest_gone = fv->brest > 0 && !fv->f.has_rest;
	for (i = 0; i <= fv->bn; i++) {
		/* The samples without the key in their place by value, as a value's. */
		if (rest_gone && (i == fv->bn || fv->bvals[i].value < fv->brest)) {
			fv->gone[fv->ngone++] = GONE_REST;
			rest_gone = 0;
		}
		if (i < fv->bn && !seen[i] && fv->bvals[i].value > 0)
			fv->gone[fv->ngone++] = i;
	}
	free(seen);
}

static void fview_update(struct ui *ui, struct view *v)
{
	struct fview *fv = fview_of(v);

	free(fv->keys);
	free(fv->bvals);
	free(fv->gone);
	hashmap_free(&fv->bidx);
	fv->keys = NULL;
	fv->bvals = NULL;
	fv->gone = NULL;
	fv->nkeys = fv->bn = fv->ngone = 0;
	fv->has_wall = 0;
	if (ui->model && !fv->threads && labels_keys(ui, fv)) {
		facet_clear(&fv->f); /* no label key: nothing to show */
		return;
	}
	facet_values(ui, &fv->f);
	if (!ui->model || fv->threads)
		return;
	if (ui_base_all(ui) > 0)
		labels_base(ui, fv);
	fv->has_wall = !ui_wall_splits_build(ui, &fv->wall, fv->f.key, fv->f.key_len);
}

static size_t fview_nrows(struct ui *ui, struct view *v)
{
	struct fview *fv = fview_of(v);

	return fv->f.n + (size_t)fv->f.has_rest + fv->ngone;
}

static uint64_t fview_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct fview *fv = fview_of(v);
	int gone;

	return facet_value_id(&fv->f, fview_val(fv, i, &gone));
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

/* The value column's width (share 7, samples 10, then it, then the rest). */
static int value_width(struct ui *ui, const struct fview *fv)
{
	if (fv->threads)
		return 26;
	return ui->batch ? 24 : GP_MAX(16, GP_MIN(32, ui->width / 4));
}

/* Labels on a screen: every key, right-aligned after the titles, the one shown marked,
 * or "key i/n" when they do not fit. */
static void key_chooser(struct ui *ui, const struct fview *fv, struct tline *l)
{
	struct tline keys;
	size_t i, cur = 0;
	int start;

	tl_reset(&keys);
	tl_put(&keys, UA_DIM, "  key:");
	for (i = 0; i < fv->nkeys; i++) {
		int on = is_key(&fv->f, &fv->keys[i]);

		if (on)
			cur = i;
		tl_put(&keys, UA_HEAD, " ");
		if (!fv->keys[i].len)
			tl_put(&keys, on ? UA_TAB_ON : UA_TAB, "\"\"");
		else
			tl_untrusted(&keys, on ? UA_TAB_ON : UA_TAB, fv->keys[i].key, fv->keys[i].len,
				     (int)GP_MIN(fv->keys[i].len, 24), 0);
	}
	if (keys.cols > ui->width - l->cols) {
		tl_reset(&keys);
		tl_printf(&keys, UA_DIM, "  key %zu/%zu (Left/Right): ", cur + 1, fv->nkeys);
		if (!fv->keys[cur].len)
			tl_put(&keys, UA_TAB_ON, "\"\"");
		else
			tl_untrusted(&keys, UA_TAB_ON, fv->keys[cur].key, fv->keys[cur].len,
				     (int)GP_MIN(fv->keys[cur].len, 24), 0);
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

static void fview_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct fview *fv = fview_of(v);
	int vw = value_width(ui, fv);
	char k[300];

	facet_title_cells(ui, l);
	if (fv->bvals)
		tl_field(l, UA_HEAD, " THEN%  DELTA", 15, TL_RIGHT); /* of SHARE%, in points */
	tl_put(l, UA_HEAD, "  ");
	if (fv->threads) {
		tl_field(l, UA_HEAD, "TID      NAME", vw, ui->batch ? TL_NOCUT : 0);
		tl_put(l, UA_HEAD, " HOT FUNCTION");
	} else {
		ui_esc(ui, k, sizeof(k), fv->f.key, fv->f.key_len);
		tl_field(l, UA_HEAD, !fv->nkeys ? "VALUE" : k[0] ? k : "\"\"", vw, ui->batch ? TL_NOCUT : 0);
		/* After the value, so that the columns before it stay where they were. */
		if (fv->has_wall)
			ui_wall_title_cells(ui, l);
		tl_put(l, UA_HEAD, " HOT FUNCTION");
		if (!ui->batch && fv->nkeys)
			key_chooser(ui, fv, l);
	}
	if (!ui->batch)
		tl_pad(l, ui->width);
}

/* A value's cell: a thread's id and name, or the label's value; * marks a focused one. */
static void value_cell(struct ui *ui, const struct fview *fv, const struct model_value *val,
		       int width, struct tline *l)
{
	int marked = ui_has_label_filter(ui, fv->f.key, fv->f.key_len, val->str, val->len, val->num);
	int attr = marked ? UA_MARK : UA_NORMAL, flags = ui->batch ? TL_NOCUT : 0;
	char buf[1200], e[1100];

	if (fv->threads) {
		const struct live_thread *t = thread_name(ui, val->num);

		if (t)
			ui_escape(e, sizeof(e), t->comm, strlen(t->comm));
		snprintf(buf, sizeof(buf), "%s%-8lld %s", marked ? "*" : "", (long long)val->num,
			 t ? e : ui->files ? "" : "(exited)"); /* `view`: no names known */
	} else if (val->str) {
		ui_esc(ui, e, sizeof(e), val->str, val->len);
		snprintf(buf, sizeof(buf), "%s%s", marked ? "*" : "", e);
	} else {
		snprintf(buf, sizeof(buf), "%s%lld", marked ? "*" : "", (long long)val->num);
	}
	tl_field(l, attr, buf, width, flags);
}

static void fview_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct fview *fv = fview_of(v);
	const struct facet *f = &fv->f;
	static const int64_t none[PROF_MAX_VALUES - 2];
	int gone;
	const struct model_value *val = fview_val(fv, i, &gone);
	int64_t value = gone ? 0 : val ? val->value : f->rest_value;

	tl_reset(l);
	if (gone)
		facet_count_cells(ui, f, 0, 0, ui->nxmodel ? none : NULL, l);
	else
		facet_count_cells(ui, f, value, val ? val->n : f->rest_n,
				  facet_member_values(ui, f, val), l);
	if (fv->bvals) {
		int64_t bv;
		int have = !base_value(fv, val, &bv);
		char d[32];
		int a = ui_base_delta(d, sizeof(d), value, f->tot.value, bv, fv->btot.value, have);

		tl_field(l, a, d, 15, TL_RIGHT);
	}
	tl_put(l, UA_NORMAL, "  ");
	if (!val)
		facet_rest_cell(ui, f, value_width(ui, fv), l);
	else
		value_cell(ui, fv, val, value_width(ui, fv), l);
	if (!fv->threads && fv->has_wall) {
		/* A numeric value has no wall time: wall labels are strings. */
		const struct ui_wall_split *sp =
			val && !val->str ? NULL
					 : ui_wall_split_find(&fv->wall, val ? val->str : NULL,
							      val ? val->len : 0);

		ui_wall_cells(ui, l, sp, fv->wall.d->p);
	}
	tl_put(l, UA_NORMAL, " ");
	/* agg.c, "Threads and memory"; a file (`view`) may have no thread label at all. */
	if (!val && fv->threads && ui->snap && !ui->files)
		tl_printf(l, UA_DIM, "new combinations once the profile held %d entries",
			  AGG_SAMPLES_FULL);
	if (gone && val)
		hot_fn_cell(ui, ui->base_model, val->top_fn, UA_DIM, l);
	else if (val)
		facet_hot_fn(ui, val->top_fn, l);
}

/* The hot function of a row in the model's numbering; none for a value gone. */
static long fview_top_fn(struct view *v, size_t row)
{
	int gone;
	const struct model_value *val = fview_val(fview_of(v), row, &gone);

	return val && !gone ? val->top_fn : -1;
}

static int fview_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct fview *fv = fview_of(v);
	size_t i, cur = 0;

	switch (a) {
	case ACT_ENTER:
	{
		int gone;
		const struct model_value *val = fview_val(fv, v->sel, &gone);

		/* Focused, the other views would show nothing: they list what is sampled now. */
		if (gone) {
			ui_set_status(ui, UA_ERR, "no sample of this value now: nothing to focus on");
			return R_REDRAW;
		}
		return facet_focus(ui, v, &fv->f, val);
	}
	case ACT_PREV_KEY:
	case ACT_NEXT_KEY:
		if (fv->threads || !fv->nkeys)
			return R_NONE;
		for (i = 0; i < fv->nkeys; i++)
			if (is_key(&fv->f, &fv->keys[i]))
				cur = i;
		cur = (cur + (a == ACT_NEXT_KEY ? 1 : fv->nkeys - 1)) % fv->nkeys;
		facet_set_key(&fv->f, fv->keys[cur].key, fv->keys[cur].len);
		v->sel = v->top = 0;
		v->have_sel_id = 0;
		ui_update_view(ui, v);
		return R_REDRAW;
	case ACT_FIND_NEXT:
	case ACT_FIND_PREV:
		return facet_find(ui, v, fview_nrows(ui, v), fview_top_fn, a == ACT_FIND_NEXT ? 1 : -1);
	default:
		return R_NONE;
	}
}

static const char *fview_empty(struct ui *ui, struct view *v)
{
	struct fview *fv = fview_of(v);

	if (!ui->model)
		return "no samples yet";
	if (fv->threads)
		return "no samples under the focus";
	if (!fv->nkeys)
		return ui->snap && ui->snap->go_version
			? "no pprof labels seen (Go code sets them with pprof.Do or pprof.SetGoroutineLabels)"
			: "no labels seen (pprof labels come from Go targets)";
	return "no sample carries this key under the focus";
}

static long fview_selected_fn(struct ui *ui, struct view *v)
{
	return fview_top_fn(v, v->sel);
}

static void fview_free(struct view *v)
{
	struct fview *fv = v->priv;

	if (fv) {
		facet_fini(&fv->f);
		free(fv->keys);
		free(fv->bvals);
		free(fv->gone);
		hashmap_free(&fv->bidx);
		ui_wall_splits_free(&fv->wall);
	}
	free(fv);
	v->priv = NULL;
}

/* --batch: a section for every label key. */
static void labels_batch(struct ui *ui, struct view *v, ui_section_fn *section)
{
	struct fview *fv = fview_of(v);
	struct { char *key; size_t len; } *names;
	size_t nk, k;

	ui_update_view(ui, v);
	nk = fv->nkeys;
	if (!nk) {
		section(ui, v, ui_view_name(v->id));
		return;
	}
	/* Copies: the keys are the update's, replaced at the next one. */
	names = xcalloc(nk, sizeof(*names));
	for (k = 0; k < nk; k++) {
		names[k].key = xmemdup0(fv->keys[k].key, fv->keys[k].len);
		names[k].len = fv->keys[k].len;
	}
	for (k = 0; k < nk; k++) {
		char e[300], title[320];

		ui_escape(e, sizeof(e), names[k].key, names[k].len);
		snprintf(title, sizeof(title), "%s: %s", ui_view_name(v->id), e[0] ? e : "\"\"");
		facet_set_key(&fv->f, names[k].key, names[k].len);
		section(ui, v, title);
	}
	for (k = 0; k < nk; k++)
		free(names[k].key);
	free(names);
}

/* Labels and Threads are one view over different keys. */
#define FVIEW_OPS                                                              \
	.update = fview_update, .nrows = fview_nrows, .row_id = fview_row_id,  \
	.title = fview_title, .row = fview_row, .action = fview_action,         \
	.empty = fview_empty, .selected_fn = fview_selected_fn, .free = fview_free

const struct view_ops view_labels_ops = { FVIEW_OPS, .batch = labels_batch };
const struct view_ops view_threads_ops = { FVIEW_OPS };
