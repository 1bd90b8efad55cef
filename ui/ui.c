/* ui.c: the UI state both front ends share: snapshots, the model of the viewed event,
 * focus filters, selection keeping, header lines, generic actions and snapshot saving. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gotop/fname.h"
#include "gotop/pprof.h"
#include "gotop/util.h"
#include "gotop/verify.h"

static const struct view_ops *const all_ops[VIEW_COUNT] = {
	[VIEW_TOP] = &view_top_ops,
	[VIEW_TREE] = &view_tree_ops,
	[VIEW_CALLERS] = &view_callers_ops,
	[VIEW_LABELS] = &view_labels_ops,
	[VIEW_GOROUTINES] = &view_goroutines_ops,
	[VIEW_THREADS] = &view_threads_ops,
	[VIEW_FLAME] = &view_flame_ops,
	[VIEW_EVENTS] = &view_events_ops,
	[VIEW_VERIFY] = &view_verify_ops,
	[VIEW_HELP] = &view_help_ops,
	[VIEW_ANNOTATE] = &view_annotate_ops,
};

void ui_init(struct ui *ui, int batch)
{
	int i;

	memset(ui, 0, sizeof(*ui));
	ui->batch = batch;
	ui->width = 80;
	ui->rows = 20;
	ui->target_status = -1;
	ui->window_len = 10;
	ui->batch_rows = 25;
	ui->batch_min_pct = 1.0;
	for (i = 0; i < VIEW_COUNT; i++) {
		ui->views[i].ops = all_ops[i];
		ui->views[i].id = (enum ui_view_id)i;
		ui->views[i].stale = 1;
	}
	ui->cur = ui->back = VIEW_TOP;
}

int ui_goroutines_mode(struct ui *ui, int mode)
{
	static const struct view_ops *const modes[UI_GMODES] = {
		&view_goroutines_ops, &view_goroutines_all_ops, &view_goroutines_wall_ops,
	};
	struct view *v = &ui->views[VIEW_GOROUTINES];
	const struct view_ops *to;

	if (mode < 0 || mode >= UI_GMODES) /* the next one: on-CPU, all now, wall */
		for (mode = 0; mode < UI_GMODES; mode++)
			if (v->ops == modes[mode]) {
				mode = (mode + 1) % UI_GMODES;
				break;
			}
	to = modes[mode % UI_GMODES];
	if (v->ops == to)
		return R_NONE;
	if (v->ops->free)
		v->ops->free(v);
	v->ops = to;
	v->sel = v->top = 0;
	v->have_sel_id = v->moved = 0;
	v->stale = 1;
	return R_UPDATE | R_REDRAW;
}

void ui_fini(struct ui *ui)
{
	int i;

	for (i = 0; i < VIEW_COUNT; i++)
		if (ui->views[i].ops->free)
			ui->views[i].ops->free(&ui->views[i]);
	verifier_free(ui->verifier); /* joins its thread: no target thread stays stopped */
	ui->verifier = NULL;
	livewall_stop(ui->wall); /* after the views: they let go of its data */
	ui->wall = NULL;
	model_free(ui->model);
	ui->model = NULL;
	ui_members_free(ui);
	ui_base_set(ui, NULL, NULL);
	ui_clear_filters(ui);
	free(ui->callers_fn);
	live_snapshot_put(ui->snap);
	ui->snap = NULL;
}

const char *ui_viewed_event(const struct ui *ui)
{
	if (ui->viewed[0])
		return ui->viewed;
	return ui->snap ? ui->snap->event : "";
}

void ui_set_status(struct ui *ui, int attr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
	va_end(ap);
	ui->status_attr = attr;
	ui->status_ns = util_now_ns();
}

const char *ui_esc(struct ui *ui, char *buf, size_t bufsz, const char *s, size_t len)
{
	ui_escape(buf, bufsz, s ? s : "", s ? len : 0);
	return buf;
}

const char *ui_fn_name(struct ui *ui, const struct model_fn *f, char *buf, size_t bufsz)
{
	int shrt = ui->names == UI_NAMES_SHORT || (ui->names == UI_NAMES_AUTO && !ui->batch);
	char *dm = fname_demangle(f->name, f->name_len);
	const char *s = dm ? dm : f->name;
	size_t n = dm ? strlen(dm) : f->name_len;
	char tmp[1024];

	if (shrt) {
		n = GP_MIN(fname_short(s, n, tmp, sizeof(tmp)), sizeof(tmp) - 1);
		s = tmp;
	}
	ui_escape(buf, bufsz, s, n);
	free(dm);
	return buf;
}

void ui_pct(char *buf, size_t n, int64_t part, int64_t total)
{
	double p = total > 0 ? 100.0 * (double)part / (double)total : 0.0;
	char tmp[8];
	int64_t tenths;
	size_t k = sizeof(tmp);

	if (!n)
		return;
	if (total <= 0 || p < 0 || p > 100) {
		snprintf(buf, n, "%5.1f%%", p);
		return;
	}
	/* "%5.1f%%" without printf, which is costly for two calls per row of every view at
	 * each refresh. Rounded from the exact ratio, halves up
	 * (printf rounds the double: 1/16 is 6.2 there, 6.3 here). */
	tenths = (int64_t)(((unsigned __int128)part * 2000 + (uint64_t)total) /
			   ((unsigned __int128)total * 2));
	tmp[--k] = '%';
	tmp[--k] = (char)('0' + tenths % 10);
	tmp[--k] = '.';
	tenths /= 10;
	do {
		tmp[--k] = (char)('0' + tenths % 10);
		tenths /= 10;
	} while (tenths);
	while (k > 2)
		tmp[--k] = ' ';
	k = GP_MIN(sizeof(tmp) - 2, n - 1);
	memcpy(buf, tmp + 2, k);
	buf[k] = 0;
}

int ui_pct_attr(int64_t part, int64_t total)
{
	double p = total > 0 ? 100.0 * (double)part / (double)total : 0.0;

	return p >= 10.0 ? UA_HOT : p >= 1.0 ? UA_WARM : UA_NORMAL;
}

/* --- model and views --- */

/* The UI's filters as the model takes them; returns how many. */
static size_t model_filters(const struct ui *ui, struct model_filter *f)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		f[i].kind = ui->filters[i].kind;
		f[i].exact = ui->filters[i].exact;
		f[i].key = ui->filters[i].key;
		f[i].key_len = ui->filters[i].key_len;
		f[i].str = ui->filters[i].str;
		f[i].str_len = ui->filters[i].str_len;
		f[i].num = ui->filters[i].num;
	}
	return ui->nfilters;
}

/* --- the baseline --- */

static uint64_t filters_sig(const struct ui *ui)
{
	uint64_t h = 0x62617365ULL + ui->nfilters;
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		const struct ui_filter *f = &ui->filters[i];

		h = util_mix64(h ^ ((uint64_t)f->kind << 8 | (uint64_t)f->exact) ^ (uint64_t)f->num);
		h = util_hash(f->key ? f->key : "", f->key_len, h);
		h = util_hash(f->str ? f->str : "", f->str_len, h);
	}
	return h ? h : 1;
}

static void base_lookups_free(struct ui *ui)
{
	free(ui->base_self);
	free(ui->base_total);
	ui->base_self = ui->base_total = NULL;
	ui->base_nfn = 0;
	hashmap_free(&ui->base_nodes);
	ui->base_sig = 0;
}

/* The baseline's flat profile and tree under the current filters, once per filter set. */
static void base_update(struct ui *ui)
{
	struct model_filter f[UI_MAX_FILTERS];
	struct model_flat *rows;
	size_t n, i;
	uint64_t sig = filters_sig(ui);

	if (!ui->base_model || ui->base_sig == sig)
		return;
	base_lookups_free(ui);
	model_set_filters(ui->base_model, f, model_filters(ui, f));
	n = model_flat(ui->base_model, &rows);
	ui->base_nfn = model_nfuncs(ui->base_model);
	ui->base_self = xcalloc(ui->base_nfn + 1, sizeof(*ui->base_self));
	ui->base_total = xcalloc(ui->base_nfn + 1, sizeof(*ui->base_total));
	for (i = 0; i < n; i++)
		if (rows[i].fn < ui->base_nfn) {
			ui->base_self[rows[i].fn] += rows[i].self;
			if (rows[i].total > ui->base_total[rows[i].fn])
				ui->base_total[rows[i].fn] = rows[i].total;
		}
	free(rows);
	model_totals(ui->base_model, &ui->base_tot);
	{
		struct model_tree *t = model_tree_topdown(ui->base_model);

		/* Node ids are path hashes: the same path has the same id in both trees. */
		for (i = 0; t && i < t->n; i++)
			*hashmap_put(&ui->base_nodes, t->nodes[i].id, NULL) = (uint64_t)t->nodes[i].total + 1;
		model_tree_free(t);
	}
	ui->base_sig = sig;
}

void ui_base_set(struct ui *ui, struct prof *p, const char *what)
{
	size_t i;

	base_lookups_free(ui);
	model_free(ui->base_model);
	prof_free(ui->base_prof);
	ui->base_model = NULL;
	ui->base_prof = p;
	ui->base_what[0] = 0;
	if (p) {
		ui->base_model = model_new(p, 0);
		ui_escape(ui->base_what, sizeof(ui->base_what), what, strlen(what));
		base_update(ui);
	}
	for (i = 0; i < VIEW_COUNT; i++)
		ui->views[i].stale = 1;
}

int ui_base_fn(struct ui *ui, const struct model_fn *f, int64_t *self, int64_t *total)
{
	long k;

	*self = *total = 0;
	if (!ui->base_model)
		return -1;
	base_update(ui);
	k = model_find_fn(ui->base_model, f->name, f->name_len);
	if (k < 0 || (size_t)k >= ui->base_nfn)
		return -1;
	*self = ui->base_self[k];
	*total = ui->base_total[k];
	return 0;
}

int ui_base_node(struct ui *ui, uint64_t id, int64_t *total)
{
	uint64_t *v;

	*total = 0;
	if (!ui->base_model)
		return -1;
	base_update(ui);
	v = hashmap_get(&ui->base_nodes, id);
	if (!v || !*v)
		return -1;
	*total = (int64_t)(*v - 1);
	return 0;
}

int64_t ui_base_all(struct ui *ui)
{
	if (!ui->base_model)
		return 0;
	base_update(ui);
	return ui->base_tot.value;
}

int ui_base_delta(char *buf, size_t n, int64_t now, int64_t now_all, int64_t then, int64_t then_all,
		  int have)
{
	double a = now_all > 0 ? 100.0 * (double)now / (double)now_all : 0;
	double b = then_all > 0 && have ? 100.0 * (double)then / (double)then_all : 0;
	double d = a - b;

	if (!have)
		snprintf(buf, n, "%7s %6s", "new", "");
	else
		snprintf(buf, n, "%6.1f%% %+6.1f", b, d);
	buf[GP_MIN(n - 1, (size_t)14)] = 0;
	return !have || d >= 1.0 ? UA_HOT : d <= -1.0 ? UA_OK : UA_DIM;
}

void ui_rebuild(struct ui *ui)
{
	struct model_filter f[UI_MAX_FILTERS];
	size_t nf = model_filters(ui, f);
	int i;

	/* A later snapshot of the same event's profile extends the model: its cost follows
	 * what is new, not the whole profile (src/live/model.c). */
	if (!ui->ev || !ui->model || model_update(ui->model, ui->ev->prof, ui->by_line, f, nf)) {
		model_free(ui->model);
		ui->model = ui->ev ? model_new(ui->ev->prof, ui->by_line) : NULL;
		if (ui->model)
			model_set_filters(ui->model, f, nf);
	}
	ui->model_prof = ui->ev ? ui->ev->prof : NULL;
	ui_members_rebuild(ui, f, nf);
	for (i = 0; i < VIEW_COUNT; i++)
		ui->views[i].stale = 1;
}

int ui_refresh(struct ui *ui)
{
	struct live_snapshot *s, *old;
	const struct live_event *ev;
	int r = R_NONE;

	if (!ui->live)
		return R_NONE;
	s = live_snapshot_get(ui->live);
	if (!s)
		return R_NONE;
	if (ui->snap && s->seq == ui->snap_seq) {
		live_snapshot_put(s);
		return R_NONE;
	}
	old = ui->snap;
	ui->snap = s;
	ui->snap_seq = s->seq;
	r |= R_REDRAW;
	/* The first shed of the session (or since a zero) is said once on the status line;
	 * later ones show in the info line's count. */
	if (s->shed_entries && (!old || !old->shed_entries))
		ui_set_status(ui, UA_ERR,
			      "memory limit reached (%zu MB anonymous, --max-memory): the entries with "
			      "the fewest samples are being forgotten", s->max_mem >> 20);
	if (ui->wait_seq && s->reply_seq >= ui->wait_seq) {
		if (s->reply_seq == ui->wait_seq && s->reply[0])
			ui_set_status(ui, s->reply_err ? UA_ERR : UA_OK, "%s", s->reply);
		ui->wait_seq = 0;
	}
	ev = live_snapshot_event(s, ui_viewed_event(ui));
	ui->ev = ev;
	if ((ev ? ev->prof : NULL) != ui->model_prof) {
		/* Rebuilt here (not by the caller): the model may point into the old
		 * snapshot's data. */
		ui_rebuild(ui);
		r |= R_UPDATE;
	}
	live_snapshot_put(old);
	return r;
}

void ui_clamp(struct ui *ui, struct view *v)
{
	size_t n = v->ops->nrows(ui, v);
	size_t page = ui->rows > 0 ? (size_t)ui->rows : 1;

	if (n == 0) {
		v->sel = v->top = 0;
		return;
	}
	if (v->sel >= n)
		v->sel = n - 1;
	if (v->top > v->sel)
		v->top = v->sel;
	if (v->sel >= v->top + page)
		v->top = v->sel - page + 1;
	if (v->top + page > n)
		v->top = n > page ? n - page : 0;
}

void ui_remember_sel(struct ui *ui, struct view *v)
{
	size_t n = v->stale ? 0 : v->ops->nrows(ui, v);

	if (n && v->sel < n && v->ops->row_id) {
		v->sel_id = v->ops->row_id(ui, v, v->sel);
		v->have_sel_id = 1;
	}
}

void ui_restore_sel(struct ui *ui, struct view *v)
{
	size_t n = v->ops->nrows(ui, v), i;

	if (!v->moved) {
		v->sel = v->top = 0;
		return;
	}
	if (!v->have_sel_id || !v->ops->row_id)
		return;
	for (i = 0; i < n; i++) {
		if (v->ops->row_id(ui, v, i) == v->sel_id) {
			/* Keep the row where it was on the screen. */
			size_t off = v->sel >= v->top ? v->sel - v->top : 0;

			v->sel = i;
			v->top = i >= off ? i - off : 0;
			return;
		}
	}
}

void ui_update_view(struct ui *ui, struct view *v)
{
	v->ops->update(ui, v);
	v->stale = 0;
	ui_restore_sel(ui, v);
	ui_clamp(ui, v);
	ui_remember_sel(ui, v);
}

/* --- filters --- */

static void filter_free(struct ui_filter *f)
{
	free(f->key);
	free(f->str);
	memset(f, 0, sizeof(*f));
}

void ui_clear_filters(struct ui *ui)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++)
		filter_free(&ui->filters[i]);
	ui->nfilters = 0;
}

static void filter_remove(struct ui *ui, size_t i)
{
	filter_free(&ui->filters[i]);
	memmove(&ui->filters[i], &ui->filters[i + 1], (ui->nfilters - i - 1) * sizeof(ui->filters[0]));
	ui->nfilters--;
}

static int is_label_key(const struct ui_filter *f, const char *key, size_t key_len)
{
	return f->kind == MODEL_LABEL && f->key_len == key_len && !memcmp(f->key, key, key_len);
}

void ui_remove_label_filter(struct ui *ui, const char *key, size_t key_len)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++)
		if (is_label_key(&ui->filters[i], key, key_len)) {
			filter_remove(ui, i);
			return;
		}
}

int ui_has_label_filter(const struct ui *ui, const char *key, size_t key_len, const char *str,
			size_t len, int64_t num)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		const struct ui_filter *f = &ui->filters[i];

		if (!is_label_key(f, key, key_len))
			continue;
		if (str ? (f->str && f->str_len == len && !memcmp(f->str, str, len))
			: (!f->str && f->num == num))
			return 1;
	}
	return 0;
}

void ui_add_filter(struct ui *ui, enum model_filter_kind kind, int exact, const char *key,
		   size_t key_len, const char *str, size_t len, int64_t num)
{
	struct ui_filter *f;
	size_t i;

	/* A label key has one focused value at a time: a new one replaces it. */
	for (i = 0; kind == MODEL_LABEL && i < ui->nfilters; i++)
		if (is_label_key(&ui->filters[i], key, key_len)) {
			filter_remove(ui, i);
			break;
		}
	if (ui->nfilters == UI_MAX_FILTERS)
		filter_remove(ui, 0);
	f = &ui->filters[ui->nfilters++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->exact = exact;
	/* Bytes, not C strings: a label key or value may hold NUL bytes. */
	if (key) {
		f->key = xmemdup0(key, key_len);
		f->key_len = key_len;
	}
	if (str) {
		f->str = xmemdup0(str, len);
		f->str_len = len;
	}
	f->num = num;
}

static void filter_text(const struct ui_filter *f, char *buf, size_t n)
{
	char a[256];

	switch (f->kind) {
	case MODEL_FOCUS:
	case MODEL_IGNORE:
		ui_escape(a, sizeof(a), f->str, f->str_len);
		snprintf(buf, n, "%s%s%s", f->kind == MODEL_IGNORE ? "-" : "", a, f->exact ? "" : "*");
		break;
	case MODEL_LABEL:
		ui_escape(a, sizeof(a), f->key, f->key_len);
		if (f->str) {
			char b[256];

			ui_escape(b, sizeof(b), f->str, f->str_len);
			snprintf(buf, n, "%s=%s", a, b);
		} else {
			snprintf(buf, n, "%s=%lld", a, (long long)f->num);
		}
		break;
	}
}

void ui_set_callers_fn(struct ui *ui, const char *name, size_t len)
{
	free(ui->callers_fn);
	ui->callers_fn = xstrndup(name, len);
	ui->callers_len = len;
	ui->views[VIEW_CALLERS].stale = 1;
	ui->views[VIEW_CALLERS].have_sel_id = 0;
	ui->views[VIEW_CALLERS].moved = 0;
	ui->views[VIEW_CALLERS].sel = ui->views[VIEW_CALLERS].top = 0;
}

long ui_selected_fn(struct ui *ui, struct view *v)
{
	if (!ui->model || v->stale || !v->ops->selected_fn)
		return -1;
	return v->ops->selected_fn(ui, v);
}

/* --- header --- */

static void fmt_elapsed(char *buf, size_t n, uint64_t ns)
{
	uint64_t s = ns / 1000000000ULL;

	snprintf(buf, n, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
		 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
}

/* The header's second line: the event and what gotop-perf sees and costs. In a narrow
 * terminal the fields that say least are left out, so that the memory figure (what the
 * limit counts, against the limit) always shows: lost while it is 0, then threads, then
 * samples/s, then gotop-perf's CPU. --batch prints them all. */
static void head_line2(struct ui *ui, struct tline *l2, const struct live_snapshot *s,
		       const char *rate)
{
	enum { F_SPS, F_LOST, F_DROPPED, F_THREADS, F_CPU, F_MEM, NF };
	/* Which field goes first, second, ... when the line is too wide. */
	static const int drop_order[] = { F_LOST, F_THREADS, F_SPS, F_CPU };
	char f[NF][96];
	int attr[NF], on[NF], w, k, i;
	size_t anon = (s->mem.anon + (1 << 19)) >> 20;

	snprintf(f[F_SPS], sizeof(f[F_SPS]), "%.0f samples/s  ", s->samples_per_s);
	attr[F_SPS] = UA_NORMAL;
	snprintf(f[F_LOST], sizeof(f[F_LOST]), "lost %llu  ", (unsigned long long)s->lost);
	attr[F_LOST] = s->lost ? UA_ERR : UA_NORMAL;
	snprintf(f[F_DROPPED], sizeof(f[F_DROPPED]), "labels dropped %llu  ",
		 (unsigned long long)s->ast.labels_dropped);
	attr[F_DROPPED] = UA_ERR;
	snprintf(f[F_THREADS], sizeof(f[F_THREADS]), "threads %u  ", s->sst.threads);
	attr[F_THREADS] = UA_NORMAL;
	snprintf(f[F_CPU], sizeof(f[F_CPU]), "gotop-perf CPU %.1f%%  ", s->self_cpu_pct);
	attr[F_CPU] = UA_NORMAL;
	/* The memory the limit counts (anonymous), against the limit. */
	if (s->max_mem)
		snprintf(f[F_MEM], sizeof(f[F_MEM]), "mem %zu/%zu MB", anon, s->max_mem >> 20);
	else
		snprintf(f[F_MEM], sizeof(f[F_MEM]), "mem %zu MB", anon);
	attr[F_MEM] = s->shed_entries ? UA_ERR : UA_NORMAL;
	w = (int)strlen(s->event) + 1 + (int)strlen(rate) + 2;
	if (strcmp(ui_viewed_event(ui), s->event))
		w += 10 + (int)strlen(ui_viewed_event(ui));
	for (k = 0; k < NF; k++) {
		on[k] = k != F_DROPPED || s->ast.labels_dropped;
		if (on[k])
			w += (int)strlen(f[k]);
	}
	for (i = 0; !ui->batch && w > ui->width && i < (int)GP_ARRAY_SIZE(drop_order); i++) {
		k = drop_order[i];
		if (k == F_LOST && s->lost)
			continue;
		on[k] = 0;
		w -= (int)strlen(f[k]);
	}
	tl_put(l2, UA_HEAD, s->event);
	tl_printf(l2, UA_NORMAL, " %s  ", rate);
	for (k = 0; k < NF; k++)
		if (on[k])
			tl_put(l2, attr[k], f[k]);
	if (strcmp(ui_viewed_event(ui), s->event))
		tl_printf(l2, UA_MARK, "  viewing %s", ui_viewed_event(ui));
}

/* `view`'s header: the files, and the sample type shown with its total. */
static void files_header(struct ui *ui, struct tline *l1, struct tline *l2)
{
	const struct prof_value_type *t;
	const struct prof *p = ui->ev ? ui->ev->prof : NULL;
	size_t nt = p ? prof_sample_types(p, &t) : 0;
	char buf[1024];

	tl_put(l1, UA_TITLE, "gotop-perf ");
	tl_put(l1, UA_HEAD, "view ");
	ui_escape(buf, sizeof(buf), ui->files, strlen(ui->files));
	tl_field(l1, UA_NORMAL, buf, ui->batch ? 0 : GP_MAX(ui->width - l1->cols, 0),
		 ui->batch ? TL_NOCUT : 0);
	if (!p || !nt)
		return;
	ui_escape(buf, sizeof(buf), ui_viewed_event(ui), strlen(ui_viewed_event(ui)));
	tl_put(l2, UA_HEAD, buf);
	{
		const char *unit = prof_string(p, t[nt - 1].unit, NULL);

		ui_escape(buf, sizeof(buf), unit ? unit : "", unit ? strlen(unit) : 0);
		tl_printf(l2, UA_NORMAL, " (%s)  total %lld", buf,
			  (long long)prof_total(p, nt - 1));
	}
	if (ui->snap->nevents > 1)
		tl_printf(l2, UA_DIM, "  %zu sample types: [ ] switch", ui->snap->nevents);
}

void ui_header(struct ui *ui, struct tline *l1, struct tline *l2)
{
	const struct live_snapshot *s = ui->snap;
	char state[96], el[32], rate[64];
	int w;

	tl_reset(l1);
	tl_reset(l2);
	if (!s)
		return;
	if (ui->files) {
		files_header(ui, l1, l2);
		return;
	}
	fmt_elapsed(el, sizeof(el), s->elapsed_ns);
	if (s->exited) {
		if (ui->target_status >= 0)
			snprintf(state, sizeof(state), "target exited (status %d)", ui->target_status);
		else
			snprintf(state, sizeof(state), "target exited");
	} else {
		snprintf(state, sizeof(state), "%s", s->paused ? "paused" : "running");
	}
	tl_put(l1, UA_TITLE, "gotop-perf ");
	tl_printf(l1, UA_HEAD, "PID %d ", (int)s->pid);
	/* cmdline and comm are escaped by procinfo already. */
	{
		char cmd[512];
		int room = ui->width - l1->cols - (int)strlen(state) - (int)strlen(el) - 4 -
			   (s->go_version ? (int)strlen(s->go_version) + 1 : 0);

		/* procinfo escaped control characters; this also handles ASCII terminals
		 * and bidi controls. */
		const char *c = s->cmdline && *s->cmdline ? s->cmdline : s->comm;

		ui_escape(cmd, sizeof(cmd), c, strlen(c));
		if (ui->batch)
			tl_field(l1, UA_NORMAL, cmd, 0, TL_NOCUT);
		else
			tl_field(l1, UA_NORMAL, cmd, GP_MIN(room, tl_width(cmd)), 0);
	}
	if (s->go_version)
		tl_printf(l1, UA_DIM, " %s", s->go_version);
	w = ui->batch ? l1->cols + 2 : ui->width - (int)strlen(state) - (int)strlen(el) - 1;
	tl_pad(l1, GP_MAX(w, l1->cols + 1));
	tl_put(l1, s->exited || s->paused ? UA_STATE : UA_OK, state);
	tl_printf(l1, UA_NORMAL, " %s", el);

	if (s->use_freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)s->freq);
	else
		snprintf(rate, sizeof(rate), "every %llu", (unsigned long long)s->period);
	head_line2(ui, l2, s, rate);
}

void ui_info_line(struct ui *ui, struct tline *l)
{
	struct model_totals t;

	tl_reset(l);
	if (!ui->snap)
		return;
	if (ui->files)
		tl_put(l, UA_DIM, "files"); /* `view`: nothing is cumulative or forgotten */
	else if (ui->snap->window_s)
		tl_printf(l, UA_MARK, "last %us", ui->snap->window_s);
	else if (ui->snap->forgotten_entries || ui->snap->shed_entries)
		tl_printf(l, UA_MARK, "cumulative, less %llu samples %s",
			  (unsigned long long)(ui->snap->forgotten + ui->snap->shed),
			  !ui->snap->shed_entries ? "the window forgot"
			  : ui->snap->forgotten_entries ? "the window and the memory limit forgot"
							: "the memory limit forgot");
	else
		tl_put(l, UA_DIM, "cumulative");
	if (!ui->model) {
		tl_printf(l, UA_NORMAL, "  no samples of %s yet", ui_viewed_event(ui));
	} else {
		model_totals(ui->model, &t);
		tl_printf(l, UA_NORMAL, "  %llu samples", (unsigned long long)t.count);
		if (ui->snap->window_s) {
			tl_printf(l, UA_DIM, " (%llu since start", (unsigned long long)ui->snap->ast.samples);
			if (ui->snap->forgotten_entries || ui->snap->shed_entries)
				tl_printf(l, UA_DIM, ", %llu of them forgotten",
					  (unsigned long long)(ui->snap->forgotten + ui->snap->shed));
			tl_put(l, UA_DIM, ")");
		}
		if (ui->nfilters) {
			tl_put(l, UA_NORMAL, "  focus: ");
			for (size_t i = 0; i < ui->nfilters; i++) {
				char buf[600];

				filter_text(&ui->filters[i], buf, sizeof(buf));
				if (i)
					tl_put(l, UA_NORMAL, ", ");
				tl_put(l, UA_MARK, buf);
			}
			tl_printf(l, UA_NORMAL, " (%.1f%% of %llu)",
				  t.all_value ? 100.0 * (double)t.value / (double)t.all_value : 0.0,
				  (unsigned long long)t.all_count);
		}
	}
	if (ui->base_prof)
		tl_printf(l, UA_MARK, "  baseline: %s", ui->base_what);
	if (ui->search[0]) {
		char buf[512];

		ui_escape(buf, sizeof(buf), ui->search, strlen(ui->search));
		tl_put(l, UA_NORMAL, "  search: ");
		tl_put(l, UA_MATCH, buf);
	}
	if (!ui->batch && l->cols > ui->width) {
		/* Keep it on one line: the tail is cut by the screen. */
	}
}

void ui_tabs(struct ui *ui, struct tline *l)
{
	int i;
	enum ui_view_id on = ui->cur < VIEW_TABS ? ui->cur : ui->back;

	tl_reset(l);
	for (i = 0; i < VIEW_TABS; i++) {
		tl_printf(l, i == (int)on ? UA_TAB_ON : UA_TAB, " %d %s ", i + 1, ui->views[i].ops->name);
		tl_put(l, UA_NORMAL, " ");
	}
	if (ui->cur == VIEW_EVENTS)
		tl_put(l, UA_TAB_ON, " Events ");
	else if (ui->cur == VIEW_VERIFY)
		tl_put(l, UA_TAB_ON, " Verifier ");
	else if (ui->cur == VIEW_HELP)
		tl_put(l, UA_TAB_ON, " Help ");
}

/* --- requests and saving --- */

void ui_request(struct ui *ui, enum live_req_kind kind, const struct event_spec *ev, uint64_t value)
{
	if (!ui->live) {
		ui_set_status(ui, UA_ERR, "not sampling");
		return;
	}
	ui->wait_seq = live_request(ui->live, kind, ev, value);
}

static void sanitize(char *dst, size_t n, const char *src)
{
	size_t i, k = 0;

	for (i = 0; src[i] && k + 1 < n; i++) {
		char c = src[i];

		dst[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-') ? c : '_';
	}
	dst[k] = 0;
	if (!k)
		snprintf(dst, n, "target");
}

char *ui_default_save_path(struct ui *ui)
{
	char comm[64], ev[40], ts[32];
	time_t now = time(NULL);
	struct tm tm;

	sanitize(comm, sizeof(comm), ui->snap && ui->snap->comm[0] ? ui->snap->comm : "target");
	sanitize(ev, sizeof(ev), ui_viewed_event(ui));
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	if (ui->save_dir && *ui->save_dir)
		return xasprintf("%s/%s-%s-%s.pb.gz", ui->save_dir, comm, ev, ts);
	return xasprintf("%s-%s-%s.pb.gz", comm, ev, ts);
}

int ui_save(struct ui *ui, const char *path)
{
	const struct live_event *ev = ui->ev;
	const struct prof_value_type *types;
	struct prof *p;
	char buf[600], full[PATH_MAX + 64];
	int r;

	if (!ev || !ui->snap) {
		ui_set_status(ui, UA_ERR, "nothing to save: no samples of %s yet", ui_viewed_event(ui));
		return -ENODATA;
	}
	p = prof_clone(ev->prof);
	if (ui->files)
		goto write; /* `view`: the files' own metadata */
	/* Period and comments as `record` writes them. */
	if (prof_sample_types(p, &types) >= 2) {
		struct prof_value_type pt = types[1];

		if (ui->snap->use_freq) {
			const char *unit = prof_string(p, pt.unit, NULL);

			prof_set_period(p, pt, unit && !strcmp(unit, "nanoseconds") && ui->snap->freq
						       ? (int64_t)(1000000000ULL / ui->snap->freq)
						       : (int64_t)ui->snap->freq);
		} else {
			prof_set_period(p, pt, (int64_t)ui->snap->period);
		}
	}
	snprintf(buf, sizeof(buf), "gotop-perf %s: event %s, %s %llu", PACKAGE_VERSION, ev->name,
		 ui->snap->use_freq ? "frequency (Hz)" : "period",
		 (unsigned long long)(ui->snap->use_freq ? ui->snap->freq : ui->snap->period));
	prof_add_comment(p, buf);
	if (ui->snap->cmdline && *ui->snap->cmdline)
		prof_add_comment(p, ui->snap->cmdline);
	if (ui->snap->go_version) {
		snprintf(buf, sizeof(buf), "go version %s", ui->snap->go_version);
		prof_add_comment(p, buf);
	}
	if (ui->snap->window_s) {
		snprintf(buf, sizeof(buf), "window: the last %u seconds", ui->snap->window_s);
		prof_add_comment(p, buf);
	} else if (ui->snap->forgotten_entries) {
		snprintf(buf, sizeof(buf),
			 "cumulative, less %llu samples in %llu entries that a decaying window forgot",
			 (unsigned long long)ui->snap->forgotten,
			 (unsigned long long)ui->snap->forgotten_entries);
		prof_add_comment(p, buf);
	}
	if (ui->snap->shed_entries) {
		snprintf(buf, sizeof(buf),
			 "less %llu samples in %llu entries with the fewest samples, forgotten to keep "
			 "gotop-perf under %zu MB of anonymous memory (--max-memory)",
			 (unsigned long long)ui->snap->shed, (unsigned long long)ui->snap->shed_entries,
			 ui->snap->max_mem >> 20);
		prof_add_comment(p, buf);
	}
write:
	/* A name ending in .folded asks for folded stacks (flame graph tools): of the sample
	 * counts live, of the sample type shown in `view`. */
	if (strlen(path) > 7 && !strcmp(path + strlen(path) - 7, ".folded"))
		r = pprof_write_folded(p, ui->files && prof_sample_types(p, NULL) >= 2 ? 1 : 0, path);
	else
		r = pprof_write_file(p, path);
	prof_free(p);
	if (r) {
		ui_set_status(ui, UA_ERR, "cannot save %s: %s", path, strerror(-r));
		return r;
	}
	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)))
			snprintf(full, sizeof(full), "%s/%s", cwd, path);
		else
			snprintf(full, sizeof(full), "%s", path);
	} else {
		snprintf(full, sizeof(full), "%s", path);
	}
	{
		char esc[PATH_MAX + 64];

		ui_escape(esc, sizeof(esc), full, strlen(full));
		ui_set_status(ui, UA_OK, "saved %llu samples of %s to %s",
			      (unsigned long long)ev->samples, ev->name, esc);
	}
	return 0;
}

/* --- generic actions --- */

long ui_hottest_fn(struct ui *ui)
{
	struct model_flat *rows;
	size_t n, i, best = 0;
	long fn = -1;

	if (!ui->model)
		return -1;
	n = model_flat(ui->model, &rows);
	for (i = 1; i < n; i++)
		if (rows[i].self > rows[best].self)
			best = i;
	if (n)
		fn = rows[best].fn;
	free(rows);
	return fn;
}

static int go_view(struct ui *ui, enum ui_view_id id)
{
	struct view *v = &ui->views[id];

	if (ui->cur < VIEW_TABS)
		ui->back = ui->cur;
	if (id == VIEW_CALLERS && !ui->callers_fn) {
		/* Callers of what? Of the selection in Top or the tree, else the hottest. */
		long fn = ui_selected_fn(ui, &ui->views[ui->back]);

		if (fn < 0)
			fn = ui_hottest_fn(ui);
		if (fn >= 0) {
			const struct model_fn *f = model_fn(ui->model, (uint32_t)fn);

			ui_set_callers_fn(ui, f->name, f->name_len);
		}
	}
	ui->cur = id;
	if (v->stale)
		ui_update_view(ui, v);
	return R_REDRAW;
}

static void move_sel(struct ui *ui, struct view *v, long delta)
{
	size_t n = v->ops->nrows(ui, v);
	long s = (long)v->sel + delta;

	if (!n)
		return;
	if (s < 0)
		s = 0;
	if (s >= (long)n)
		s = (long)n - 1;
	v->sel = (size_t)s;
}

static int cycle_event(struct ui *ui, int dir)
{
	const struct live_snapshot *s = ui->snap;
	size_t i, cur = 0;

	if (!s || !s->nevents) {
		ui_set_status(ui, UA_ERR, "no event has data yet");
		return R_REDRAW;
	}
	for (i = 0; i < s->nevents; i++)
		if (!strcmp(s->events[i]->name, ui_viewed_event(ui)))
			cur = i;
	cur = (cur + s->nevents + (size_t)(dir > 0 ? 1 : s->nevents - 1)) % s->nevents;
	/* Looking at the event being sampled means following it. */
	if (!strcmp(s->events[cur]->name, s->event))
		ui->viewed[0] = 0;
	else
		snprintf(ui->viewed, sizeof(ui->viewed), "%s", s->events[cur]->name);
	ui->ev = live_snapshot_event(s, ui_viewed_event(ui));
	ui_set_status(ui, UA_OK, "viewing %s%s", s->events[cur]->name,
		      ui->files ? "" : strcmp(s->events[cur]->name, s->event) ? " (kept data; not sampling it)" : "");
	return R_MODEL | R_UPDATE | R_REDRAW;
}

/* A flat switch, one case per action (enum ui_action); the view's own go to its ops. */
int ui_action(struct ui *ui, enum ui_action a)
{
	struct view *v = &ui->views[ui->cur];
	long page = ui->rows > 1 ? ui->rows - 1 : 1;
	int r = R_NONE;

	/* Never act on rows computed from data that is gone. */
	if (v->stale)
		ui_update_view(ui, v);
	switch (a) {
	case ACT_NONE:
		return R_NONE;
	case ACT_QUIT:
		return R_QUIT;
	case ACT_REDRAW:
		return R_REDRAW;
	case ACT_HELP:
		return go_view(ui, VIEW_HELP);
	case ACT_EVENTS:
		ui->views[VIEW_EVENTS].stale = 1;
		return go_view(ui, VIEW_EVENTS);
	case ACT_VERIFY:
		/* V shows the view and starts the verifier; V in the view switches it. */
		if (ui->cur != VIEW_VERIFY) {
			r = ui->verifier && verifier_running(ui->verifier) ? R_NONE : ui_verify_toggle(ui);
			ui->views[VIEW_VERIFY].stale = 1;
			return r | go_view(ui, VIEW_VERIFY);
		}
		return ui_verify_toggle(ui);
	case ACT_CLOSE:
		if (ui->cur >= VIEW_TABS) {
			ui->cur = ui->back;
			if (ui->views[ui->cur].stale)
				ui_update_view(ui, &ui->views[ui->cur]);
			return R_REDRAW;
		}
		if (ui->search[0]) {
			ui->search[0] = 0;
			return R_REDRAW;
		}
		return R_NONE;
	case ACT_NEXT_VIEW:
	case ACT_PREV_VIEW: {
		enum ui_view_id base = ui->cur < VIEW_TABS ? ui->cur : ui->back;

		return go_view(ui, (enum ui_view_id)((base + (a == ACT_NEXT_VIEW ? 1 : VIEW_TABS - 1)) % VIEW_TABS));
	}
	case ACT_VIEW_TOP:
		return go_view(ui, VIEW_TOP);
	case ACT_VIEW_TREE:
		return go_view(ui, VIEW_TREE);
	case ACT_VIEW_CALLERS:
		return go_view(ui, VIEW_CALLERS);
	case ACT_VIEW_LABELS:
		return go_view(ui, VIEW_LABELS);
	case ACT_VIEW_GOROUTINES:
		return go_view(ui, VIEW_GOROUTINES);
	case ACT_VIEW_THREADS:
		return go_view(ui, VIEW_THREADS);
	case ACT_VIEW_FLAME:
		return go_view(ui, VIEW_FLAME);
	case ACT_GOROUTINE_MODE:
		return ui_goroutines_mode(ui, -1);
	case ACT_UP:
		move_sel(ui, v, -1);
		v->moved = v->sel > 0;
		break;
	case ACT_DOWN:
		move_sel(ui, v, 1);
		v->moved = 1;
		break;
	case ACT_PGUP:
		move_sel(ui, v, -page);
		v->moved = v->sel > 0;
		break;
	case ACT_PGDN:
		move_sel(ui, v, page);
		v->moved = 1;
		break;
	case ACT_HOME:
		/* Back on the first row: it follows the top again. */
		v->sel = 0;
		v->moved = 0;
		break;
	case ACT_END:
		move_sel(ui, v, LONG_MAX / 2);
		v->moved = 1;
		break;
	case ACT_PAUSE:
		if (ui->snap) {
			ui_request(ui, LIVE_REQ_PAUSE, NULL, !ui->snap->paused);
			ui_set_status(ui, UA_NORMAL, ui->snap->paused ? "resuming..." : "pausing...");
		}
		return R_REDRAW;
	case ACT_ZERO:
		ui_request(ui, LIVE_REQ_ZERO, NULL, 0);
		livewall_zero(ui->wall);
		ui_set_status(ui, UA_NORMAL, "zeroing...");
		return R_REDRAW;
	case ACT_WINDOW:
		if (ui->snap)
			ui_request(ui, LIVE_REQ_WINDOW, NULL, ui->snap->window_s ? 0 : ui->window_len);
		return R_REDRAW;
	case ACT_EVENT_DATA_PREV:
	case ACT_EVENT_DATA_NEXT:
		return cycle_event(ui, a == ACT_EVENT_DATA_NEXT ? 1 : -1);
	case ACT_FOCUS:
	case ACT_IGNORE: {
		long fn = ui_selected_fn(ui, v);
		const struct model_fn *f;

		if (fn < 0) {
			ui_set_status(ui, UA_ERR, "no function selected");
			return R_REDRAW;
		}
		f = model_fn(ui->model, (uint32_t)fn);
		ui_add_filter(ui, a == ACT_FOCUS ? MODEL_FOCUS : MODEL_IGNORE, 1, NULL, 0, f->name,
			      f->name_len, 0);
		return R_MODEL | R_UPDATE | R_REDRAW;
	}
	case ACT_BASELINE: {
		char what[64];
		time_t now = time(NULL);
		struct tm tm;

		if (ui->base_prof) {
			ui_base_set(ui, NULL, NULL);
			ui_set_status(ui, UA_OK, "baseline cleared");
			return R_UPDATE | R_REDRAW;
		}
		if (!ui->ev) {
			ui_set_status(ui, UA_ERR, "nothing to compare with: no samples yet");
			return R_REDRAW;
		}
		localtime_r(&now, &tm);
		strftime(what, sizeof(what), "the screen at %H:%M:%S", &tm);
		ui_base_set(ui, prof_clone(ui->ev->prof), what);
		ui_set_status(ui, UA_OK, "baseline: %s; B clears it", what);
		return R_UPDATE | R_REDRAW;
	}
	case ACT_NAMES: {
		int shrt = ui->names == UI_NAMES_SHORT || (ui->names == UI_NAMES_AUTO && !ui->batch);

		ui->names = shrt ? UI_NAMES_FULL : UI_NAMES_SHORT;
		ui_set_status(ui, UA_OK, "%s", shrt ? "full function names"
						    : "short function names (as pprof shortens them)");
		return R_REDRAW;
	}
	case ACT_UNFOCUS:
		if (!ui->nfilters)
			return R_NONE;
		ui_clear_filters(ui);
		ui_set_status(ui, UA_OK, "focus cleared");
		return R_MODEL | R_UPDATE | R_REDRAW;
	case ACT_POP_FOCUS:
		if (!ui->nfilters)
			return R_NONE;
		filter_remove(ui, ui->nfilters - 1);
		return R_MODEL | R_UPDATE | R_REDRAW;
	case ACT_ANNOTATE: {
		/* The selected function, else the hottest; samples keep coming while it is open. */
		long fn = ui_selected_fn(ui, v);
		const struct model_fn *f;

		if (fn < 0)
			fn = ui_hottest_fn(ui);
		if (fn < 0) {
			ui_set_status(ui, UA_ERR, "no function to annotate yet");
			return R_REDRAW;
		}
		f = model_fn(ui->model, (uint32_t)fn);
		view_annotate_set_fn(&ui->views[VIEW_ANNOTATE], f->name, f->name_len);
		ui->views[VIEW_ANNOTATE].stale = 1;
		return go_view(ui, VIEW_ANNOTATE);
	}
	case ACT_CALLERS: {
		long fn = ui_selected_fn(ui, v);
		const struct model_fn *f;

		if (fn < 0)
			return R_NONE;
		f = model_fn(ui->model, (uint32_t)fn);
		ui_set_callers_fn(ui, f->name, f->name_len);
		return go_view(ui, VIEW_CALLERS);
	}
	default:
		if (v->ops->action) {
			size_t before = v->sel;

			r = v->ops->action(ui, v, a);
			/* A view that moved the selection (search, hot path, parent) pins it. */
			if (v->sel != before)
				v->moved = 1;
		}
		break;
	}
	ui_clamp(ui, v);
	ui_remember_sel(ui, v);
	return r | R_REDRAW;
}
