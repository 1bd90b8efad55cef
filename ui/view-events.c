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
	int ok;                  /* 1 countable, 0 not, -1 unknown (raw, tracepoint), -2 a note */
	char why[320];
	const char *help;
	uint64_t kept;
};

struct events {
	struct evrow *rows;
	size_t n, cap;
	uint64_t probed_ns;
	char filter[128];        /* ui->event_filter when the rows were made */
	char note[128];          /* the text of the note row (ok -2) */
};

/* Tracepoints are thousands: the picker lists them only under a filter, at most this many. */
#define TRACEPOINTS_SHOWN 500

static struct events *events_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct events));
	return v->priv;
}

static struct evrow *add_row(struct events *e, const char *name, const char *kind, const char *help)
{
	struct evrow *r;

	xgrow((void **)&e->rows, &e->cap, e->n + 1, sizeof(*e->rows));
	r = &e->rows[e->n++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->kind = kind;
	r->help = help;
	return r;
}

static int matches(const struct events *e, const char *name)
{
	return !e->filter[0] || strstr(name, e->filter) != NULL;
}

static void probe_row(struct ui *ui, struct evrow *r)
{
	struct event_spec ev;

	if (events_parse(r->name, &ev) == 0)
		r->ok = events_probe(&ev, !ui->kernel, r->why, sizeof(r->why)) == 0;
}

static int add_tracepoint(void *arg, const char *name)
{
	struct events *e = arg;
	struct evrow *r = add_row(e, name, "trace", "tracepoint");

	r->ok = -1;
	return 0;
}

static void probe(struct ui *ui, struct events *e)
{
	size_t n, i, first_tp;
	const struct event_desc *t = events_table(&n);
	char name[EVENT_NAME_MAX];
	int ntp;

	e->n = 0;
	snprintf(e->filter, sizeof(e->filter), "%s", ui->event_filter);
	for (i = 0; i < n; i++) {
		if (!matches(e, t[i].name))
			continue;
		probe_row(ui, add_row(e, t[i].name,
				      t[i].kind == EVENT_HARDWARE ? "hardware" : "software", t[i].help));
	}
	for (i = 0; events_cache_name(i, name, sizeof(name)) == 0; i++)
		if (matches(e, name))
			probe_row(ui, add_row(e, name, "cache", "generic cache event"));
	first_tp = e->n;
	if (e->filter[0]) {
		ntp = events_tracepoints(e->filter, add_tracepoint, e);
		if (ntp > TRACEPOINTS_SHOWN) {
			e->n = first_tp + TRACEPOINTS_SHOWN;
			snprintf(e->note, sizeof(e->note), "%d more tracepoints match: refine the filter (/)",
				 ntp - TRACEPOINTS_SHOWN);
			add_row(e, "...", "", e->note)->ok = -2;
		}
	} else {
		ntp = events_tracepoints(NULL, NULL, NULL);
		if (ntp >= 0)
			snprintf(e->note, sizeof(e->note), "%d tracepoints: / filters them in", ntp);
		else
			snprintf(e->note, sizeof(e->note),
				 "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		add_row(e, "subsystem:event", "trace", e->note)->ok = -2;
	}
	e->probed_ns = util_now_ns();
}

static void events_update(struct ui *ui, struct view *v)
{
	struct events *e = events_of(v);
	size_t i, k;

	if (!e->rows || util_now_ns() - e->probed_ns > PROBE_EVERY_NS || strcmp(e->filter, ui->event_filter))
		probe(ui, e);
	for (i = 0; i < e->n; i++)
		e->rows[i].kept = 0;
	/* Events with data that the table does not list (raw events) get rows too. */
	for (k = 0; ui->snap && k < ui->snap->nevents; k++) {
		const struct live_event *le = ui->snap->events[k];

		for (i = 0; i < e->n; i++)
			if (!strcmp(e->rows[i].name, le->name))
				break;
		if (i == e->n && matches(e, le->name))
			add_row(e, le->name, "other", "an event named by its code or form")->ok = -1;
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
	tl_field(l, UA_HEAD, "  EVENT", 34, 0);
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
	tl_field(l, sampling ? UA_MARK : UA_NORMAL, r->name, 32, 0);
	tl_field(l, UA_DIM, r->kind, 9, 0);
	tl_field(l, r->ok > 0 ? UA_OK : r->ok == 0 ? UA_ERR : UA_DIM,
		 r->ok > 0 ? "yes" : r->ok == 0 ? "no" : r->ok == -1 ? "?" : "", 5, 0);
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

	if (a != ACT_ENTER || v->sel >= e->n || e->rows[v->sel].ok == -2)
		return R_NONE;
	ui_switch_event(ui, e->rows[v->sel].name);
	return R_CLOSE | R_MODEL | R_UPDATE | R_REDRAW;
}

/* Its rows are made again each time it is opened: the samples kept per event, and the
 * probe when it is older than PROBE_EVERY_NS. */
static int events_enter(struct ui *ui, struct view *v)
{
	v->stale = 1;
	return R_NONE;
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
	.update = events_update,
	.nrows = events_nrows,
	.row_id = events_row_id,
	.title = events_title,
	.row = events_row,
	.action = events_action,
	.empty = events_empty,
	.enter = events_enter,
	.free = events_free,
};
