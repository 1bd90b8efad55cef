/* actions.c: what the actions of the key table do (htop Action.c): one function each,
 * returning reaction flags and never drawing (the loop draws once per turn). Actions no
 * function here takes (sort, expand, zoom, ...) are the shown view's, through its ops. */
#include "config.h"
#include "ui.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/util.h"

typedef int action_fn(struct ui *ui, struct view *v, enum ui_action a);

static int act_quit(struct ui *ui, struct view *v, enum ui_action a)
{
	return R_QUIT;
}

static int act_redraw(struct ui *ui, struct view *v, enum ui_action a)
{
	return R_REDRAW;
}

/* q and Esc in an overlay close it; Esc elsewhere clears the search. */
static int act_close(struct ui *ui, struct view *v, enum ui_action a)
{
	if (!ui_view_is_tab(ui->cur))
		return ui_close_overlay(ui);
	if (ui->search[0]) {
		ui->search[0] = 0;
		return R_REDRAW;
	}
	return R_NONE;
}

/* Tab and S-Tab: the next or previous view of the Tab cycle, in the table's order, from
 * the one shown or the one an overlay came from. */
static int act_cycle_view(struct ui *ui, struct view *v, enum ui_action a)
{
	enum ui_view_id tabs[VIEW_COUNT], from = ui_view_is_tab(ui->cur) ? ui->cur : ui->back;
	size_t n = 0, i, cur = 0, ndefs;
	const struct ui_view_def *d = ui_view_defs(&ndefs);

	for (i = 0; i < ndefs; i++)
		if (d[i].flags & UI_VIEW_TAB) {
			if (d[i].id == from)
				cur = n;
			tabs[n++] = d[i].id;
		}
	if (!n)
		return R_NONE;
	return ui_show_view(ui, tabs[(cur + (a == ACT_NEXT_VIEW ? 1 : n - 1)) % n]);
}

static int act_next_mode(struct ui *ui, struct view *v, enum ui_action a)
{
	return ui_view_mode(ui, ui->cur, NULL);
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

/* Up, down, a page, the first or last row. A selection moved off the first row follows
 * its row as the data changes; back on the first row it follows the top again. */
static int act_move(struct ui *ui, struct view *v, enum ui_action a)
{
	long page = ui->rows > 1 ? ui->rows - 1 : 1;

	switch (a) {
	case ACT_UP:
	case ACT_PGUP:
		move_sel(ui, v, a == ACT_UP ? -1 : -page);
		v->moved = v->sel > 0;
		break;
	case ACT_DOWN:
	case ACT_PGDN:
		move_sel(ui, v, a == ACT_DOWN ? 1 : page);
		v->moved = 1;
		break;
	case ACT_HOME:
		v->sel = 0;
		v->moved = 0;
		break;
	default:
		move_sel(ui, v, LONG_MAX / 2);
		v->moved = 1;
		break;
	}
	return R_NONE;
}

static int act_pause(struct ui *ui, struct view *v, enum ui_action a)
{
	if (ui->snap) {
		ui_request(ui, LIVE_REQ_PAUSE, NULL, !ui->snap->paused);
		ui_set_status(ui, UA_NORMAL, ui->snap->paused ? "resuming..." : "pausing...");
	}
	return R_REDRAW;
}

static int act_zero(struct ui *ui, struct view *v, enum ui_action a)
{
	ui_request(ui, LIVE_REQ_ZERO, NULL, 0);
	session_wall_zero(ui_session(ui));
	ui_set_status(ui, UA_NORMAL, "zeroing...");
	return R_REDRAW;
}

static int act_window(struct ui *ui, struct view *v, enum ui_action a)
{
	if (ui->snap)
		ui_request(ui, LIVE_REQ_WINDOW, NULL, ui->snap->window_s ? 0 : ui->window_len);
	return R_REDRAW;
}

/* [ and ]: the data kept for another event (or sample type, in `view`). */
static int act_event_data(struct ui *ui, struct view *v, enum ui_action a)
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
	cur = (cur + s->nevents + (a == ACT_EVENT_DATA_NEXT ? 1 : s->nevents - 1)) % s->nevents;
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

/* f and i: keep or drop the samples with the selected function (pprof -focus, -ignore). */
static int act_focus(struct ui *ui, struct view *v, enum ui_action a)
{
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

static int act_unfocus(struct ui *ui, struct view *v, enum ui_action a)
{
	if (!ui->nfilters)
		return R_NONE;
	if (a == ACT_POP_FOCUS) {
		ui_pop_filter(ui);
	} else {
		ui_clear_filters(ui);
		ui_set_status(ui, UA_OK, "focus cleared");
	}
	return R_MODEL | R_UPDATE | R_REDRAW;
}

/* B: what is on screen becomes the baseline; B again clears it. */
static int act_baseline(struct ui *ui, struct view *v, enum ui_action a)
{
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

static int act_names(struct ui *ui, struct view *v, enum ui_action a)
{
	int shrt = ui_short_names(ui);

	ui->names = shrt ? UI_NAMES_FULL : UI_NAMES_SHORT;
	ui_set_status(ui, UA_OK, "%s", shrt ? "full function names"
					    : "short function names (as pprof shortens them)");
	return R_REDRAW;
}

/* a: Annotate at the selected function, else the hottest; samples keep coming while it is
 * open. */
static int act_annotate(struct ui *ui, struct view *v, enum ui_action a)
{
	long fn = ui_selected_fn(ui, v);
	const struct model_fn *f;

	if (fn < 0)
		fn = ui_hottest_fn(ui);
	if (fn < 0) {
		ui_set_status(ui, UA_ERR, "no function to annotate yet");
		return R_REDRAW;
	}
	f = model_fn(ui->model, (uint32_t)fn);
	return ui_open_at(ui, VIEW_ANNOTATE, f->name, f->name_len);
}

/* c (Enter in Top): the callers of the selected function. */
static int act_callers(struct ui *ui, struct view *v, enum ui_action a)
{
	long fn = ui_selected_fn(ui, v);
	const struct model_fn *f;

	if (fn < 0)
		return R_NONE;
	f = model_fn(ui->model, (uint32_t)fn);
	return ui_open_at(ui, VIEW_CALLERS, f->name, f->name_len);
}

/* An action's function; MOVES: it moves the selection, which is then kept in the rows
 * and remembered (as after the view's own actions). */
enum { MOVES = 1 };
static const struct {
	action_fn *fn;
	unsigned flags;
} acts[ACT_COUNT] = {
	[ACT_QUIT] = { act_quit },
	[ACT_REDRAW] = { act_redraw },
	[ACT_CLOSE] = { act_close },
	[ACT_NEXT_VIEW] = { act_cycle_view },
	[ACT_PREV_VIEW] = { act_cycle_view },
	[ACT_NEXT_MODE] = { act_next_mode },
	[ACT_UP] = { act_move, MOVES },
	[ACT_DOWN] = { act_move, MOVES },
	[ACT_PGUP] = { act_move, MOVES },
	[ACT_PGDN] = { act_move, MOVES },
	[ACT_HOME] = { act_move, MOVES },
	[ACT_END] = { act_move, MOVES },
	[ACT_PAUSE] = { act_pause },
	[ACT_ZERO] = { act_zero },
	[ACT_WINDOW] = { act_window },
	[ACT_EVENT_DATA_PREV] = { act_event_data },
	[ACT_EVENT_DATA_NEXT] = { act_event_data },
	[ACT_FOCUS] = { act_focus },
	[ACT_IGNORE] = { act_focus },
	[ACT_UNFOCUS] = { act_unfocus },
	[ACT_POP_FOCUS] = { act_unfocus },
	[ACT_BASELINE] = { act_baseline },
	[ACT_NAMES] = { act_names },
	[ACT_ANNOTATE] = { act_annotate },
	[ACT_CALLERS] = { act_callers },
};

int ui_action(struct ui *ui, enum ui_action a)
{
	struct view *v = &ui->views[ui->cur];
	size_t before = v->sel;
	int r;

	/* Never act on rows computed from data that is gone. */
	if (v->stale)
		ui_update_view(ui, v);
	if (a == ACT_NONE)
		return R_NONE;
	if (a >= ACT_VIEW(0) && a < ACT_VIEW(VIEW_COUNT))
		return ui_show_view(ui, (enum ui_view_id)(a - ACT_VIEW(0)));
	if (a < ACT_COUNT && acts[a].fn && !(acts[a].flags & MOVES))
		return acts[a].fn(ui, v, a);
	if (a < ACT_COUNT && acts[a].fn) {
		r = acts[a].fn(ui, v, a);
	} else {
		r = v->ops->action ? v->ops->action(ui, v, a) : R_NONE;
		/* A view that moved the selection (search, hot path, parent) pins it. */
		if (v->sel != before)
			v->moved = 1;
	}
	ui_clamp(ui, v);
	ui_remember_sel(ui, v);
	if (r & R_CLOSE)
		r = (r & ~R_CLOSE) | ui_close_overlay(ui);
	return r | R_REDRAW;
}
