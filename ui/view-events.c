/* view-events.c: the event picker: every event gotop-perf knows, whether this machine can
 * count it and why not, how many samples are kept for it; Enter switches sampling live. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/events.h"
#include "gotop/util.h"

#define PROBE_EVERY_NS (5ULL * 1000000000ULL)

struct evrow {
	char name[EVENT_NAME_MAX];
	const char *kind;
	int ok;                  /* 1 countable, 0 not, -1 unknown (raw) */
	char why[320];
	const char *help;
	uint64_t kept;
};

struct events {
	struct evrow *rows;
	size_t n;
	uint64_t probed_ns;
};

static struct events *events_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct events));
	return v->priv;
}

static void probe(struct ui *ui, struct events *e)
{
	size_t n, i;
	const struct event_desc *t = events_table(&n);

	free(e->rows);
	e->rows = xcalloc(n + 1, sizeof(*e->rows));
	e->n = 0;
	for (i = 0; i < n; i++) {
		struct evrow *r = &e->rows[e->n++];
		struct event_spec ev;

		snprintf(r->name, sizeof(r->name), "%s", t[i].name);
		r->kind = t[i].kind == EVENT_HARDWARE ? "hardware" : "software";
		r->help = t[i].help;
		if (events_parse(t[i].name, &ev) == 0)
			r->ok = events_probe(&ev, !ui->kernel, r->why, sizeof(r->why)) == 0;
	}
	e->probed_ns = util_now_ns();
}

static void events_update(struct ui *ui, struct view *v)
{
	struct events *e = events_of(v);
	size_t i, k;

	if (!e->rows || util_now_ns() - e->probed_ns > PROBE_EVERY_NS)
		probe(ui, e);
	for (i = 0; i < e->n; i++)
		e->rows[i].kept = 0;
	/* Events with data that the table does not list (raw events) get rows too. */
	for (k = 0; ui->snap && k < ui->snap->nevents; k++) {
		const struct live_event *le = ui->snap->events[k];

		for (i = 0; i < e->n; i++)
			if (!strcmp(e->rows[i].name, le->name))
				break;
		if (i == e->n) {
			e->rows = xrealloc(e->rows, (e->n + 1) * sizeof(*e->rows));
			memset(&e->rows[e->n], 0, sizeof(e->rows[0]));
			snprintf(e->rows[e->n].name, sizeof(e->rows[0].name), "%s", le->name);
			e->rows[e->n].kind = "raw";
			e->rows[e->n].ok = -1;
			e->rows[e->n].help = "raw PMU event";
			e->n++;
		}
		e->rows[i].kept = le->samples;
	}
}

static size_t events_nrows(struct ui *ui, struct view *v)
{
	return events_of(v)->n;
}

static uint64_t events_row_id(struct ui *ui, struct view *v, size_t i)
{
	const char *n = events_of(v)->rows[i].name;

	return util_hash(n, strlen(n), 3);
}

static void events_title(struct ui *ui, struct view *v, struct tline *l)
{
	tl_reset(l);
	tl_field(l, UA_HEAD, "  EVENT", 26, 0);
	tl_field(l, UA_HEAD, "KIND", 9, 0);
	tl_field(l, UA_HEAD, "HERE", 5, 0);
	tl_field(l, UA_HEAD, "KEPT", 9, TL_RIGHT);
	tl_put(l, UA_HEAD, "  DESCRIPTION / WHY NOT");
	if (!ui->batch)
		tl_pad(l, ui->width);
}

static void events_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct evrow *r = &events_of(v)->rows[i];
	int sampling = ui->snap && !strcmp(ui->snap->event, r->name);
	int viewing = !strcmp(ui_viewed_event(ui), r->name);
	char kept[32];

	tl_reset(l);
	tl_put(l, UA_MARK, sampling ? ">" : viewing ? "*" : " ");
	tl_put(l, UA_NORMAL, " ");
	tl_field(l, sampling ? UA_MARK : UA_NORMAL, r->name, 24, 0);
	tl_field(l, UA_DIM, r->kind, 9, 0);
	tl_field(l, r->ok > 0 ? UA_OK : r->ok == 0 ? UA_ERR : UA_DIM,
		 r->ok > 0 ? "yes" : r->ok == 0 ? "no" : "?", 5, 0);
	if (r->kept)
		snprintf(kept, sizeof(kept), "%llu", (unsigned long long)r->kept);
	else
		kept[0] = 0;
	tl_field(l, UA_NORMAL, kept, 9, TL_RIGHT);
	tl_put(l, UA_NORMAL, "  ");
	tl_field(l, r->ok == 0 ? UA_ERR : UA_NORMAL, r->ok == 0 ? r->why : r->help,
		 ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0), ui->batch ? TL_NOCUT : 0);
}

void ui_switch_event(struct ui *ui, const char *name)
{
	struct event_spec ev;
	char why[320];

	if (events_parse_why(name, &ev, why, sizeof(why))) {
		char e[400];

		if (why[0]) {
			ui_esc(ui, e, sizeof(e), why, strlen(why));
			ui_set_status(ui, UA_ERR, "%s", e);
		} else {
			ui_esc(ui, e, sizeof(e), name, strlen(name));
			ui_set_status(ui, UA_ERR, "unknown event '%s' (see the event list)", e);
		}
		return;
	}
	if (ui->snap && !strcmp(ui->snap->event, ev.name)) {
		ui->viewed[0] = 0;
		ui_set_status(ui, UA_OK, "already sampling %s", ev.name);
		return;
	}
	/* Look at what is sampled from now on; the old event's data stays ([ and ]). */
	ui->viewed[0] = 0;
	ui_request(ui, LIVE_REQ_EVENT, &ev, 0);
	ui_set_status(ui, UA_NORMAL, "switching to %s...", ev.name);
}

static int events_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct events *e = events_of(v);

	if (a != ACT_ENTER || v->sel >= e->n)
		return R_NONE;
	ui_switch_event(ui, e->rows[v->sel].name);
	ui->cur = ui->back;
	return R_MODEL | R_UPDATE | R_REDRAW;
}

static const char *events_empty(struct ui *ui, struct view *v)
{
	return "no events";
}

static void events_free(struct view *v)
{
	struct events *e = v->priv;

	if (e)
		free(e->rows);
	free(e);
	v->priv = NULL;
}

const struct view_ops view_events_ops = {
	.name = "Events",
	.batch_name = "events",
	.update = events_update,
	.nrows = events_nrows,
	.row_id = events_row_id,
	.title = events_title,
	.row = events_row,
	.action = events_action,
	.empty = events_empty,
	.free = events_free,
};
