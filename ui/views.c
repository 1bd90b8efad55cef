/* views.c: the table of views (UI_VIEWS in ui.h) and what is done with a view as a whole:
 * showing it (an overlay remembers the view it was opened from), its modes, the display
 * options and functions handed to it, the tab line, and keeping its selection on its row
 * as the data changes. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

#define DEF_VIEW_(id_, ops_, name_, batch_, key_, help_, flags_)                               \
	{ .id = VIEW_##id_, .ops = &ops_, .name = name_, .batch_name = batch_, .key = key_,      \
	  .flags = flags_ },
#define DEF_MODE_(id_, ops_, batch_) { .id = VIEW_##id_, .ops = &ops_, .batch_name = batch_ },

static const struct ui_view_def defs[] = { UI_VIEWS(DEF_VIEW_, DEF_MODE_) };

/* A key works in the views of a bit mask (VB, VB_ALL): 16 views at most. */
_Static_assert(VIEW_COUNT <= 16, "more views than VB_ALL has bits");

const struct ui_view_def *ui_view_defs(size_t *n)
{
	*n = GP_ARRAY_SIZE(defs);
	return defs;
}

/* The view's own row (its first mode), which names it. */
static const struct ui_view_def *main_def(enum ui_view_id id)
{
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(defs); i++)
		if (defs[i].id == id)
			return &defs[i];
	return NULL;
}

const char *ui_view_name(enum ui_view_id id)
{
	const struct ui_view_def *d = main_def(id);

	return d ? d->name : "";
}

const struct ui_view_def *ui_view_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(defs); i++)
		if (!strcmp(name, defs[i].batch_name))
			return &defs[i];
	return NULL;
}

int ui_view_is_tab(enum ui_view_id id)
{
	return (VB(id) & VB_LISTS) != 0;
}

const char *ui_view_names(void)
{
	static char buf[512];
	size_t i, k = 0;

	if (buf[0])
		return buf;
	for (i = 0; i < GP_ARRAY_SIZE(defs) && k < sizeof(buf); i++)
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s", i ? ", " : "",
				      defs[i].batch_name);
	return buf;
}

void ui_views_init(struct ui *ui)
{
	int i;

	for (i = 0; i < VIEW_COUNT; i++) {
		ui->views[i].def = main_def((enum ui_view_id)i);
		ui->views[i].ops = ui->views[i].def->ops;
		ui->views[i].id = (enum ui_view_id)i;
		ui->views[i].stale = 1;
	}
	ui->cur = ui->back = VIEW_TOP;
}

void ui_views_free(struct ui *ui)
{
	int i;

	for (i = 0; i < VIEW_COUNT; i++)
		if (ui->views[i].ops->free)
			ui->views[i].ops->free(&ui->views[i]);
}

int ui_show_view(struct ui *ui, enum ui_view_id id)
{
	struct view *v = &ui->views[id];
	int r = R_REDRAW;

	if (ui_view_is_tab(ui->cur))
		ui->back = ui->cur;
	if (v->ops->enter)
		r |= v->ops->enter(ui, v);
	ui->cur = id;
	if (v->stale)
		ui_update_view(ui, v);
	return r;
}

int ui_close_overlay(struct ui *ui)
{
	if (ui_view_is_tab(ui->cur))
		return R_NONE;
	ui->cur = ui->back;
	if (ui->views[ui->cur].stale)
		ui_update_view(ui, &ui->views[ui->cur]);
	return R_REDRAW;
}

int ui_view_mode(struct ui *ui, enum ui_view_id id, const struct ui_view_def *def)
{
	struct view *v = &ui->views[id];

	if (!def) {
		/* The next mode: the view's next row, after the last its first. */
		def = v->def + 1;
		if (def == defs + GP_ARRAY_SIZE(defs) || def->id != id)
			def = main_def(id);
	}
	if (def->id != id || v->def == def)
		return R_NONE;
	if (v->ops->free)
		v->ops->free(v);
	v->ops = def->ops;
	v->def = def;
	ui_reset_sel(v);
	v->stale = 1;
	return R_UPDATE | R_REDRAW;
}

int ui_option(struct ui *ui, const char *name, const char *value)
{
	int i, r;

	for (i = 0; i < VIEW_COUNT; i++) {
		struct view *v = &ui->views[i];

		if (!v->ops->option)
			continue;
		r = v->ops->option(ui, v, name, value);
		if (r <= 0)
			return r;
	}
	ui_set_status(ui, UA_ERR, "no view takes the option %s", name);
	return -1;
}

int ui_open_at(struct ui *ui, enum ui_view_id id, const char *name, size_t len)
{
	struct view *v = &ui->views[id];

	if (v->ops->open_at)
		v->ops->open_at(ui, v, name, len);
	return ui_show_view(ui, id);
}

void ui_tabs(struct ui *ui, struct tline *l)
{
	enum ui_view_id on = ui_view_is_tab(ui->cur) ? ui->cur : ui->back;
	size_t i;

	tl_reset(l);
	for (i = 0; i < GP_ARRAY_SIZE(defs); i++) {
		if (!(defs[i].flags & UI_VIEW_TAB))
			continue;
		tl_printf(l, defs[i].id == on ? UA_TAB_ON : UA_TAB, " %c %s ", defs[i].key,
			  defs[i].name);
		tl_put(l, UA_NORMAL, " ");
	}
	if (!ui_view_is_tab(ui->cur))
		tl_printf(l, UA_TAB_ON, " %s ", ui_view_name(ui->cur));
}

/* --- the selection --- */

void ui_reset_sel(struct view *v)
{
	v->sel = v->top = 0;
	v->have_sel_id = 0;
	v->moved = 0;
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

long ui_selected_fn(struct ui *ui, struct view *v)
{
	if (!ui->model || v->stale || !v->ops->selected_fn)
		return -1;
	return v->ops->selected_fn(ui, v);
}

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
