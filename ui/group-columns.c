/* group-columns.c: the columns of an event group's members in the views: a model on each
 * member's value column (like go tool pprof -sample_index) beside the event's, and next to
 * it, for a group whose members sample on their own ({a,b}), the row's share of the
 * member (as perf report --group shows each event's overhead side by side), or for a
 * group read at its leader's samples ({a,b}:S) the ratio of each member to what it is
 * best read against. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

#include "gotop/events.h"
#include "gotop/util.h"

void ui_members_free(struct ui *ui)
{
	size_t k;

	for (k = 0; k < ui->nxmodel; k++) {
		model_free(ui->xmodel[k]);
		ui->xmodel[k] = NULL;
	}
	ui->nxmodel = 0;
}

void ui_members_rebuild(struct ui *ui, const struct model_filter *f, size_t nf)
{
	const struct prof_value_type *types;
	size_t n = ui->ev ? prof_sample_types(ui->ev->prof, &types) : 0, k;

	/* Columns 0 and 1 are the samples and the event; a group's members follow (agg.c).
	 * A decaying window's history keeps those two only (live.c, record_deltas): no
	 * member columns there rather than zeros. */
	n = n > 2 ? GP_MIN(n - 2, GP_ARRAY_SIZE(ui->xmodel)) : 0;
	if (ui->snap && ui->snap->window_s && !(ui->ev && ui->ev->mem))
		n = 0;
	for (k = n; k < ui->nxmodel; k++) {
		model_free(ui->xmodel[k]);
		ui->xmodel[k] = NULL;
	}
	for (k = 0; k < n; k++) {
		struct model **m = &ui->xmodel[k];

		if (*m && !model_update(*m, ui->ev->prof, ui->by_line, f, nf))
			continue;
		model_free(*m);
		*m = model_new_column(ui->ev->prof, ui->by_line, (int)(2 + k));
		model_set_filters(*m, f, nf);
	}
	ui->nxmodel = n;
}

/* The name of value column col of the viewed profile ("" when none). */
static const char *column_name(struct ui *ui, size_t col, const char **unit)
{
	const struct prof_value_type *types;
	size_t n = ui->ev ? prof_sample_types(ui->ev->prof, &types) : 0;
	const char *s;

	*unit = "";
	if (col >= n)
		return "";
	s = prof_string(ui->ev->prof, types[col].unit, NULL);
	*unit = s ? s : "";
	s = prof_string(ui->ev->prof, types[col].type, NULL);
	return s ? s : "";
}

/* Whether the viewed profile is a group whose members sample on their own: its member
 * columns are estimates from their own samples, and a ratio of two of them on a row
 * would divide estimates of different samples. Their shares are shown instead. */
static int own_samples(const struct ui *ui)
{
	/* The heap profile's alloc_rate is a rate, not a count of the event: its share. */
	if (ui->ev && ui->ev->mem)
		return 1;
	return ui->ev && ui->ev->name[0] == '{' && !events_name_sample_read(ui->ev->name);
}

enum ratio_kind {
	RATIO_PER_MS, RATIO_IPC, RATIO_PER_KI_LEAD, RATIO_PER_KI_MEMBER, RATIO_PER_EVENT,
	RATIO_USER_LEAD, RATIO_USER_MEMBER,
};

/* Whether the event of value column col is `name` (as --ratio names it): a member by its
 * name, the leader by the group's leader ("cpu-clock", whose column is "cpu"). */
static int column_is(struct ui *ui, size_t col, const char *name, size_t len)
{
	const char *u, *c = column_name(ui, col, &u);

	if (strlen(c) == len && !memcmp(c, name, len))
		return 1;
	/* The leader: the group's name "{leader,...}" starts with it (events.c parse_group). */
	if (col != 1 || !ui->ev || ui->ev->name[0] != '{')
		return 0;
	return !strncmp(ui->ev->name + 1, name, len) &&
	       (ui->ev->name[1 + len] == ',' || ui->ev->name[1 + len] == '}');
}

/* Which ratio member k gets, and for RATIO_PER_KI_MEMBER and RATIO_USER_MEMBER which
 * member divides. --ratio NUM/DEN first, then the known ones. */
static enum ratio_kind ratio_of(struct ui *ui, size_t k, size_t *instr)
{
	const char *lunit, *lead = column_name(ui, 1, &lunit), *u, *name = column_name(ui, 2 + k, &u);
	size_t j;

	if (ui->ratio && strchr(ui->ratio, '/')) {
		const char *slash = strchr(ui->ratio, '/'), *den = slash + 1;

		if (column_is(ui, 2 + k, ui->ratio, (size_t)(slash - ui->ratio))) {
			if (column_is(ui, 1, den, strlen(den)))
				return RATIO_USER_LEAD;
			for (j = 0; j < ui->nxmodel; j++)
				if (j != k && column_is(ui, 2 + j, den, strlen(den))) {
					*instr = j;
					return RATIO_USER_MEMBER;
				}
		}
	}

	if (!strcmp(lunit, "nanoseconds"))
		return RATIO_PER_MS;
	if (!strcmp(lead, "cycles") && !strcmp(name, "instructions"))
		return RATIO_IPC;
	if (!strcmp(lead, "instructions"))
		return RATIO_PER_KI_LEAD;
	for (j = 0; j < ui->nxmodel; j++)
		if (j != k && !strcmp(column_name(ui, 2 + j, &u), "instructions")) {
			*instr = j;
			return RATIO_PER_KI_MEMBER;
		}
	return RATIO_PER_EVENT;
}

/* A short name for a header: perf's shortest alias ("faults", "cs"), else the name. Only
 * the table is looked at: a header is drawn at every refresh, and parsing any other name
 * would read sysfs or tracefs each time. */
static void short_name(const char *name, char *buf, size_t n)
{
	size_t nt, i;
	const struct event_desc *t = events_table(&nt);
	const char *p;

	snprintf(buf, n, "%s", name);
	for (i = 0; i < nt && strcmp(t[i].name, name); i++)
		;
	if (i == nt)
		return;
	for (p = t[i].aliases; *p;) {
		size_t l = strcspn(p, " ");

		if (l && l < strlen(buf) && l < n)
			snprintf(buf, n, "%.*s", (int)l, p);
		p += l;
		while (*p == ' ')
			p++;
	}
}

void ui_member_heads(struct ui *ui, size_t k, char *head, size_t hn, char *ratio, size_t rn)
{
	const char *u, *lead = column_name(ui, 1, &u);
	char name[EVENT_NAME_MAX];
	size_t instr = 0;

	short_name(column_name(ui, 2 + k, &u), name, sizeof(name));

	snprintf(head, hn, "%s", name);
	if (own_samples(ui)) {
		snprintf(ratio, rn, "%s%%", name);
		return;
	}
	switch (ratio_of(ui, k, &instr)) {
	case RATIO_PER_MS:
		snprintf(ratio, rn, "%s/ms", name);
		break;
	case RATIO_IPC:
		snprintf(ratio, rn, "IPC");
		break;
	case RATIO_PER_KI_LEAD:
	case RATIO_PER_KI_MEMBER:
		snprintf(ratio, rn, "%s/1k-instr", name);
		break;
	case RATIO_PER_EVENT:
		snprintf(ratio, rn, "%s/%s", name, lead);
		break;
	case RATIO_USER_LEAD:
	case RATIO_USER_MEMBER: {
		char den[EVENT_NAME_MAX];

		short_name(strchr(ui->ratio, '/') + 1, den, sizeof(den));
		snprintf(ratio, rn, "%s/%s", name, den);
		break;
	}
	}
}

void ui_member_ratio(struct ui *ui, size_t k, int64_t lead, const int64_t *x, char *buf, size_t n)
{
	size_t instr = 0;
	double num = (double)x[k], den;

	if (own_samples(ui)) {
		struct model_totals t;

		model_totals(ui->xmodel[k], &t);
		ui_pct(buf, n, x[k], t.value);
		return;
	}
	switch (ratio_of(ui, k, &instr)) {
	case RATIO_PER_MS:
		den = (double)lead / 1e6;
		break;
	case RATIO_IPC:
	case RATIO_PER_EVENT:
	case RATIO_USER_LEAD:
		den = (double)lead;
		break;
	case RATIO_USER_MEMBER:
		den = (double)x[instr];
		break;
	case RATIO_PER_KI_LEAD:
		den = (double)lead / 1e3;
		break;
	default:
		den = (double)x[instr] / 1e3;
		break;
	}
	if (den <= 0)
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.3g", num / den);
}

void ui_member_title_cells(struct ui *ui, struct tline *l)
{
	for (size_t k = 0; k < ui->nxmodel; k++) {
		char head[EVENT_NAME_MAX + 16], ratio[EVENT_NAME_MAX + 16];

		ui_member_heads(ui, k, head, sizeof(head), ratio, sizeof(ratio));
		tl_put(l, UA_HEAD, " ");
		tl_field(l, UA_HEAD, head, UI_MEMBER_W, TL_RIGHT);
		if (ui_mem_viewed(ui))
			continue;
		tl_put(l, UA_HEAD, " ");
		tl_field(l, UA_HEAD, ratio, UI_MEMBER_W, TL_RIGHT);
	}
}

void ui_member_cells(struct ui *ui, struct tline *l, int64_t lead, const int64_t *x)
{
	for (size_t k = 0; k < ui->nxmodel; k++) {
		char num[32];

		if (ui_mem_viewed(ui)) {
			ui_mem_rate(ui, num, sizeof(num), x[k]);
			tl_put(l, UA_NORMAL, " ");
			tl_field(l, UA_NORMAL, num, UI_MEMBER_W, TL_RIGHT);
			continue;
		}
		snprintf(num, sizeof(num), "%lld", (long long)x[k]);
		tl_put(l, UA_NORMAL, " ");
		tl_field(l, UA_NORMAL, num, UI_MEMBER_W, TL_RIGHT);
		ui_member_ratio(ui, k, lead, x, num, sizeof(num));
		tl_put(l, UA_NORMAL, " ");
		tl_field(l, UA_NORMAL, num, UI_MEMBER_W, TL_RIGHT);
	}
}

int ui_member_cols(const struct ui *ui)
{
	return (int)ui->nxmodel * (ui_mem_viewed(ui) ? 1 : 2) * (UI_MEMBER_W + 1);
}
