/* ui.c: the UI state both front ends share: its life, snapshots and the model of the
 * viewed event, the status line, requests to the worker, and the formatting every view
 * uses (function names, shares). The rest of the shared UI is by concern: the views and
 * their selection (views.c), actions (actions.c), focus filters (focus.c), the baseline
 * (baseline.c), the header lines (header.c), saving (save.c). */
#include "config.h"
#include "ui.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/fname.h"
#include "gotop/util.h"

void ui_init(struct ui *ui, int batch)
{
	memset(ui, 0, sizeof(*ui));
	ui->batch = batch;
	ui->width = 80;
	ui->rows = 20;
	ui->target_status = -1;
	ui->window_len = 10;
	ui->batch_rows = 25;
	ui->batch_min_pct = 1.0;
	ui_views_init(ui);
}

void ui_fini(struct ui *ui)
{
	ui_views_free(ui);
	ui_sources_free(ui); /* after the views: they let go of its data */
	model_free(ui->model);
	ui->model = NULL;
	ui_members_free(ui);
	ui_base_set(ui, NULL, NULL);
	ui_clear_filters(ui);
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

const char *ui_name(struct ui *ui, const char *name, size_t len, char *buf, size_t bufsz)
{
	char *dm = fname_demangle(name, len);
	const char *s = dm ? dm : name;
	size_t n = dm ? strlen(dm) : len;
	char tmp[1024];

	if (ui_short_names(ui)) {
		n = GP_MIN(fname_short(s, n, tmp, sizeof(tmp)), sizeof(tmp) - 1);
		s = tmp;
	}
	ui_escape(buf, bufsz, s, n);
	free(dm);
	return buf;
}

const char *ui_fn_name(struct ui *ui, const struct model_fn *f, char *buf, size_t bufsz)
{
	return ui_name(ui, f->name, f->name_len, buf, bufsz);
}

int ui_short_names(const struct ui *ui)
{
	return ui->names == UI_NAMES_SHORT || (ui->names == UI_NAMES_AUTO && !ui->batch);
}

int ui_table_width(const struct ui *ui)
{
	return ui->batch && !ui->batch_width ? INT_MAX / 4 : ui->width;
}

void ui_cell_pre(struct ui *ui, struct tline *l, const struct tl_col *cols, int n, int k,
		 const char *pre, int pre_attr, int attr, const char *s, int flags)
{
	int w = cols[k].w, j, pw;

	if (!w)
		return;
	for (j = k + 1; j < n && !cols[j].w; j++)
		;
	if (k || l->cols)
		tl_put(l, UA_NORMAL, "  ");
	if (j == n && (!ui->batch || ui->batch_width))
		w = GP_MAX(w, ui->width - l->cols);
	pw = pre ? tl_width(pre) : 0;
	if (pw) {
		tl_put(l, pre_attr, pre);
		w = GP_MAX(w - pw, 0);
	}
	tl_field(l, attr, s, w, flags);
}

void ui_cell(struct ui *ui, struct tline *l, const struct tl_col *cols, int n, int k, int attr,
	     const char *s, int flags)
{
	ui_cell_pre(ui, l, cols, n, k, NULL, 0, attr, s, flags);
}

void ui_where_init(struct ui_where *w)
{
	w->kind = -1;
	w->best = w->last = -1;
}

void ui_where_add(struct ui_where *w, long idx, const char *name, size_t len)
{
	int k = (int)fname_go_kind(name, len);

	if (k >= FNAME_GO_STD && k > w->kind) {
		w->kind = k;
		w->best = idx;
	}
	if (len != 14 || memcmp(name, "runtime.goexit", 14) != 0)
		w->last = idx;
}

long ui_where_pick(const struct ui_where *w)
{
	return w->best >= 0 ? w->best : w->last;
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

void ui_rebuild(struct ui *ui)
{
	struct model_filter f[UI_MAX_FILTERS];
	size_t nf = ui_model_filters(ui, f);
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

void ui_request(struct ui *ui, enum live_req_kind kind, const struct event_spec *ev, uint64_t value)
{
	if (!ui->live) {
		ui_set_status(ui, UA_ERR, "not sampling");
		return;
	}
	ui->wait_seq = live_request(ui->live, kind, ev, value);
}


