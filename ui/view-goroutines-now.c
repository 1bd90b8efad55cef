/* view-goroutines-now.c: the Goroutines view's "all goroutines now" mode: every goroutine
 * of the Go target read at each refresh without stopping it (include/gotop/gosnap.h),
 * grouped by stack and state or wait reason; Enter expands a group to its stack and
 * goroutine ids. Label focus filters (Enter in Labels, --tag) keep the goroutines carrying
 * the label. Stacks are as Go shows them (sym_go_hidden). The view's other modes (m) are
 * in view-goroutines.c and view-goroutines-wall.c. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/fname.h"
#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#define NAME_FRAMES 8
#define IDS_SHOWN 64

enum { ROW_GROUP, ROW_FRAME, ROW_IDS };

/* The columns, laid out to the width (tl_cols). WHERE starts with the group's + or -. */
enum { AC_COUNT, AC_STATE, AC_LONGEST, AC_WHERE, AC_LABELS, AC_N };
static const char *const ac_head[AC_N] = { "COUNT", "STATE", "LONGEST", "WHERE", "LABELS" };

struct grow {
	uint8_t kind;
	size_t group;
	uint32_t frame; /* ROW_FRAME: the frame (index in the stack) */
	int inl;        /* ROW_FRAME: the inlined function (0: innermost) */
};

struct named {
	int n;
	struct sym_frame f[NAME_FRAMES];
};

struct gall {
	int reader;                /* there is a reader (ui_goroutines_now) */
	char why[256];
	struct gosnap_result res;
	struct gosnap_result kept; /* the goroutines passing the filters (arrays owned) */
	struct gosnap_group *groups;
	size_t ngroups;
	struct hashmap expanded;   /* hash of a group's first stack -> 1 */
	struct grow *rows;
	size_t nrows, rowscap;
	struct hashmap by_pc;      /* pc -> index + 1 into names */
	struct named *names;
	size_t nnames, namescap;
	struct tl_col col[AC_N];   /* laid out for the rows of generation laid_gen */
	uint64_t gen, laid_gen;
	int laid_names, laid_width;
};

static struct gall *gall_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct gall));
	return v->priv;
}

static const struct named *name_pc(struct ui *ui, struct gall *a, uint64_t pc)
{
	int created;
	uint64_t *slot = hashmap_put(&a->by_pc, pc, &created);
	struct named *nm;

	if (!created)
		return &a->names[*slot - 1];
	xgrow((void **)&a->names, &a->namescap, a->nnames + 1, sizeof(*a->names));
	nm = &a->names[a->nnames++];
	*slot = a->nnames;
	nm->n = ui_goroutines_frames(ui, pc, nm->f, NAME_FRAMES);
	return nm;
}

/* Which frames of nm, the address kept.pcs[i], Go leaves out (sym_go_hidden). */
static uint32_t hidden(const struct gall *a, const struct named *nm, size_t i)
{
	return sym_go_hidden(nm->f, nm->n, a->kept.pcf[i] & GOSNAP_PC_CALLEE_PANICS);
}

/* A group's identity across refreshes: its state and stack. */
static uint64_t group_key(const struct gall *a, size_t gi)
{
	const struct gosnap_g *g = &a->kept.g[a->groups[gi].first];
	const char *s = gosnap_state_text(g);
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (; *s; s++)
		h = util_mix64(h ^ (unsigned char)*s);
	for (uint32_t i = 0; i < g->nframes; i++)
		h = util_mix64(h ^ a->kept.pcs[g->frame0 + i]);
	return h ? h : 1;
}

/* A goroutine's value of a label key (ui_labels_pass), or NULL. */
static const char *g_label(void *arg, const char *key, size_t klen, size_t *len)
{
	const struct gort_labels *l = arg;

	for (uint32_t k = 0; l && k < l->n; k++)
		if (l->pairs[k].klen == klen && !memcmp(l->pairs[k].key, key, klen)) {
			*len = l->pairs[k].vlen;
			return l->pairs[k].value;
		}
	return NULL;
}

static int is_open(const struct gall *a, size_t gi)
{
	const uint64_t *e = hashmap_get(&a->expanded, group_key(a, gi));

	return e && *e;
}

static void gall_update(struct ui *ui, struct view *v)
{
	struct gall *a = gall_of(v);
	size_t i, n = 0;
	int rc;

	a->nrows = 0;
	a->why[0] = 0;
	a->gen++;
	rc = ui_goroutines_now(ui, &a->res, a->why, sizeof(a->why));
	a->reader = rc != -ENODEV;
	if (!a->reader)
		return;
	/* The goroutines under the label focus, in list order. */
	free(a->kept.g);
	a->kept = a->res;
	a->kept.g = xmalloc((a->res.n ? a->res.n : 1) * sizeof(*a->kept.g));
	for (i = 0; i < a->res.n; i++)
		if (ui_labels_pass(ui, g_label, (void *)a->res.g[i].labels, NULL, 0))
			a->kept.g[n++] = a->res.g[i];
	a->kept.n = n;
	free(a->groups);
	a->ngroups = gosnap_group(&a->kept, 0, &a->groups);
	for (i = 0; i < a->ngroups; i++) {
		const struct gosnap_g *g = &a->kept.g[a->groups[i].first];

		xgrow((void **)&a->rows, &a->rowscap, a->nrows + 1, sizeof(*a->rows));
		a->rows[a->nrows++] = (struct grow){ ROW_GROUP, i, 0, 0 };
		if (!is_open(a, i))
			continue;
		for (uint32_t f = 0; f < g->nframes; f++) {
			const struct named *nm = name_pc(ui, a, a->kept.pcs[g->frame0 + f]);
			uint32_t hide = hidden(a, nm, g->frame0 + f);

			for (int k = 0; k < (nm->n ? nm->n : 1); k++) {
				if (hide >> k & 1)
					continue;
				xgrow((void **)&a->rows, &a->rowscap, a->nrows + 1, sizeof(*a->rows));
				a->rows[a->nrows++] = (struct grow){ ROW_FRAME, i, f, k };
			}
		}
		xgrow((void **)&a->rows, &a->rowscap, a->nrows + 1, sizeof(*a->rows));
		a->rows[a->nrows++] = (struct grow){ ROW_IDS, i, 0, 0 };
	}
}

static size_t gall_nrows(struct ui *ui, struct view *v)
{
	(void)ui;
	return gall_of(v)->nrows;
}

static uint64_t gall_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct gall *a = gall_of(v);
	const struct grow *r = &a->rows[i];

	(void)ui;
	return util_mix64(group_key(a, r->group) ^ ((uint64_t)r->kind << 60) ^
			  ((uint64_t)r->frame << 8) ^ (uint64_t)r->inl);
}

static void wait_text(char *buf, size_t n, int64_t ns)
{
	double s = (double)ns / 1e9;

	if (ns < 0)
		snprintf(buf, n, "-");
	else if (s < 120)
		snprintf(buf, n, "%.0fs", s);
	else if (s < 7200)
		snprintf(buf, n, "%.0fm", s / 60);
	else
		snprintf(buf, n, "%.1fh", s / 3600);
}

/* Where the goroutine waits (ui_where): the first frame of the program, else of the
 * standard library outside the parking machinery, else its start function. */
static const struct sym_frame *where(struct ui *ui, struct gall *a, const struct gosnap_g *g)
{
	/* Each candidate by its pc and inlined frame, not by pointer: naming a pc may move
	 * a->names, so no pointer into it is kept across name_pc. */
	struct { uint32_t i; int k; } at[GOSNAP_MAX_FRAMES * NAME_FRAMES];
	struct ui_where w;
	long n = 0;

	ui_where_init(&w);
	for (uint32_t i = 0; i < g->nframes; i++) {
		const struct named *nm = name_pc(ui, a, a->kept.pcs[g->frame0 + i]);
		uint32_t hide = hidden(a, nm, g->frame0 + i);

		for (int k = 0; k < nm->n && n < (long)GP_ARRAY_SIZE(at); k++) {
			if (hide >> k & 1)
				continue;
			at[n].i = i;
			at[n].k = k;
			ui_where_add(&w, n++, nm->f[k].func, strlen(nm->f[k].func));
		}
		if (w.kind == FNAME_GO_PROGRAM)
			break;
	}
	n = ui_where_pick(&w);
	if (n < 0)
		return NULL;
	return &name_pc(ui, a, a->kept.pcs[g->frame0 + at[n].i])->f[at[n].k];
}

/* A group's cells: its state, longest wait, + or - and where it waits, its labels. */
struct acells {
	char count[24], longest[16], where[1104], labels[1300];
	const char *state;
	int where_dim, open;
};

static void group_cells(struct ui *ui, struct gall *a, size_t gi, struct acells *c)
{
	const struct gosnap_group *gr = &a->groups[gi];
	const struct gosnap_g *g = &a->kept.g[gr->first];
	const struct sym_frame *w = g->flags & GOSNAP_NO_STACK ? NULL : where(ui, a, g);
	char name[1100];
	size_t k = 0;

	memset(c, 0, sizeof(*c));
	snprintf(c->count, sizeof(c->count), "%zu", gr->count);
	c->state = gosnap_state_text(g);
	wait_text(c->longest, sizeof(c->longest), gr->max_wait);
	c->where_dim = !w;
	if (g->flags & GOSNAP_NO_STACK)
		snprintf(name, sizeof(name), "(running on a thread: stack not read)");
	else if (w)
		ui_name(ui, w->func, strlen(w->func), name, sizeof(name));
	else
		snprintf(name, sizeof(name), "(no stack)");
	snprintf(c->where, sizeof(c->where), "%s", name);
	c->open = is_open(a, gi);
	c->labels[0] = 0;
	for (uint32_t j = 0; g->labels && j < g->labels->n && k + 1 < sizeof(c->labels); j++) {
		const struct gort_label *p = &g->labels->pairs[j];
		char kb[300], vb[600];

		ui_esc(ui, kb, sizeof(kb), p->key, p->klen);
		ui_esc(ui, vb, sizeof(vb), p->value, p->vlen);
		k += (size_t)snprintf(c->labels + k, sizeof(c->labels) - k, "%s%s=%s", k ? " " : "",
				      kb, vb);
	}
	if (k && gr->count > 1 && k + 1 < sizeof(c->labels))
		snprintf(c->labels + k, sizeof(c->labels) - k, " (first's)");
}

/* The widths of the columns: each its widest cell and header, laid out to the width again
 * when the rows, the names or the width change. */
static void layout(struct ui *ui, struct gall *a)
{
	int want[AC_N] = { 0 }, k;
	struct acells c;

	if (a->laid_gen == a->gen && a->laid_names == ui_short_names(ui) &&
	    a->laid_width == ui_table_width(ui))
		return;
	for (size_t i = 0; i < a->ngroups; i++) {
		group_cells(ui, a, i, &c);
		want[AC_STATE] = GP_MAX(want[AC_STATE], tl_width(c.state));
		want[AC_LONGEST] = GP_MAX(want[AC_LONGEST], tl_width(c.longest));
		want[AC_WHERE] = GP_MAX(want[AC_WHERE], tl_width(c.where) + 2);
		want[AC_LABELS] = GP_MAX(want[AC_LABELS], tl_width(c.labels));
	}
	for (k = 0; k < AC_N; k++) {
		int head = tl_width(ac_head[k]);

		if (k == AC_LABELS && !want[k]) {
			a->col[k] = (struct tl_col){ 0 };
			continue;
		}
		a->col[k].want = GP_MAX(want[k], head);
		/* Counts and times whole; a state keeps a word or two ("chan receive"); the
		 * labels give first, down to a pair or so. */
		a->col[k].min = k == AC_COUNT || k == AC_LONGEST ? a->col[k].want
				: k == AC_STATE ? GP_MIN(a->col[k].want, 12)
				: k == AC_LABELS ? GP_MIN(a->col[k].want, 16)
						  : GP_MIN(a->col[k].want, head + 2);
		a->col[k].prio = k != AC_LABELS;
	}
	a->col[AC_COUNT].want = a->col[AC_COUNT].min = 7;
	tl_cols(a->col, AC_N, UI_GAP, ui_table_width(ui));
	a->laid_gen = a->gen;
	a->laid_names = ui_short_names(ui);
	a->laid_width = ui_table_width(ui);
}

static void cell(struct ui *ui, struct gall *a, struct tline *l, int k, int attr, const char *s,
		 int flags)
{
	ui_cell(ui, l, a->col, AC_N, k, attr, s, flags);
}

static void gall_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct gall *a = gall_of(v);

	layout(ui, a);
	tl_reset(l);
	for (int k = 0; k < AC_N; k++)
		cell(ui, a, l, k, UA_HEAD, ac_head[k], k == AC_COUNT || k == AC_LONGEST ? TL_RIGHT : 0);
	if (!ui->batch)
		tl_pad(l, ui->width);
}

/* The reader's counts: after the info line (the screen), or the column names (--batch). */
static void gall_info(struct ui *ui, struct view *v, struct tline *l)
{
	struct gall *a = gall_of(v);

	if (a->reader)
		tl_printf(l, UA_DIM, "%zu goroutines now, %" PRIu64 " changed while read, %.1f ms; m: wall time",
			  a->res.n, a->res.st.torn, (double)a->res.st.ns / 1e6);
}

/* The column where the names of WHERE start (after its + or -). */
static int where_col(const struct gall *a)
{
	int c = 0;

	for (int k = 0; k < AC_WHERE; k++)
		c += a->col[k].w + (k && a->col[k].w ? UI_GAP : 0);
	return c + UI_GAP + 2;
}

static void gall_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct gall *a = gall_of(v);
	const struct grow *r = &a->rows[i];
	const struct gosnap_group *gr = &a->groups[r->group];
	const struct gosnap_g *g = &a->kept.g[gr->first];
	char buf[1100];

	tl_reset(l);
	layout(ui, a);
	if (r->kind == ROW_GROUP) {
		struct acells c;

		group_cells(ui, a, r->group, &c);
		cell(ui, a, l, AC_COUNT, UA_NORMAL, c.count, TL_RIGHT);
		cell(ui, a, l, AC_STATE, g->state == GOSNAP_RUNNING ? UA_HOT : UA_STATE, c.state, 0);
		cell(ui, a, l, AC_LONGEST, UA_DIM, c.longest, TL_RIGHT);
		ui_cell_pre(ui, l, a->col, AC_N, AC_WHERE, c.open ? "- " : "+ ", UA_TREE,
			    c.where_dim ? UA_DIM : UA_NORMAL, c.where, TL_CUT_NAME);
		cell(ui, a, l, AC_LABELS, UA_DIM, c.labels, 0);
	} else if (r->kind == ROW_FRAME) {
		const struct named *nm = name_pc(ui, a, a->kept.pcs[g->frame0 + r->frame]);

		tl_pad(l, where_col(a));
		if (!nm->n) {
			tl_printf(l, UA_DIM, "%#" PRIx64, a->kept.pcs[g->frame0 + r->frame]);
			return;
		}
		ui_name(ui, nm->f[r->inl].func, strlen(nm->f[r->inl].func), buf, sizeof(buf));
		tl_put(l, UA_NORMAL, buf);
		if (nm->f[r->inl].file) {
			const char *f = strrchr(nm->f[r->inl].file, '/');
			char loc[512];

			f = f ? f + 1 : nm->f[r->inl].file;
			snprintf(loc, sizeof(loc), "  %s:%d", f, nm->f[r->inl].line);
			tl_untrusted(l, UA_DIM, loc, strlen(loc), 0, TL_NOCUT);
		}
	} else {
		size_t shown = 0, k;

		tl_pad(l, where_col(a));
		tl_put(l, UA_DIM, "ids:");
		/* Every goroutine of the group, in list order: those equal to its first. */
		for (k = gr->first; k < a->kept.n && shown < IDS_SHOWN; k++) {
			const struct gosnap_g *o = &a->kept.g[k];

			if (o->nframes != g->nframes || strcmp(gosnap_state_text(o), gosnap_state_text(g)) ||
			    memcmp(a->kept.pcs + o->frame0, a->kept.pcs + g->frame0,
				   g->nframes * sizeof(uint64_t)))
				continue;
			tl_printf(l, UA_NORMAL, " %" PRIu64, o->goid);
			shown++;
		}
		if (gr->count > shown)
			tl_printf(l, UA_DIM, " ... %zu more", gr->count - shown);
	}
}

/* f: focus on the labels of the selected group's first goroutine, as Enter on each value
 * in Labels would. */
static int focus_labels(struct ui *ui, struct gall *a, size_t gi)
{
	const struct gosnap_g *g = &a->kept.g[a->groups[gi].first];
	char shown[400];
	size_t k = 0;

	shown[0] = 0;
	for (uint32_t j = 0; g->labels && j < g->labels->n; j++) {
		const struct gort_label *p = &g->labels->pairs[j];
		char kb[100], vb[100];

		if (ui_has_label_filter(ui, p->key, p->klen, p->value, p->vlen, 0))
			continue;
		ui_remove_label_filter(ui, p->key, p->klen);
		ui_add_filter(ui, MODEL_LABEL, 1, p->key, p->klen, p->value, p->vlen, 0);
		ui_esc(ui, kb, sizeof(kb), p->key, p->klen);
		ui_esc(ui, vb, sizeof(vb), p->value, p->vlen);
		if (k < sizeof(shown))
			k += (size_t)snprintf(shown + k, sizeof(shown) - k, "%s%s=%s", k ? " " : "",
					      kb, vb);
	}
	if (!k) {
		ui_set_status(ui, UA_ERR, "no pprof label on this row to focus on");
		return R_REDRAW;
	}
	ui_set_status(ui, UA_OK, "focused on %s (u clears; Backspace removes the last focus)", shown);
	return R_MODEL | R_UPDATE | R_REDRAW;
}

static int gall_action(struct ui *ui, struct view *v, enum ui_action act)
{
	struct gall *a = gall_of(v);
	int created;
	uint64_t *slot;

	if (act == ACT_SHOW_IDLE || act == ACT_GROUP_BY) {
		ui_set_status(ui, UA_DIM, "a and b are the Wall mode's (m)");
		return R_REDRAW;
	}
	if (act == ACT_FOCUS_LABELS && v->sel < a->nrows)
		return focus_labels(ui, a, a->rows[v->sel].group);
	if (v->sel >= a->nrows || (act != ACT_ENTER && act != ACT_TOGGLE && act != ACT_EXPAND &&
				   act != ACT_COLLAPSE))
		return R_NONE;
	slot = hashmap_put(&a->expanded, group_key(a, a->rows[v->sel].group), &created);
	if (act == ACT_EXPAND)
		*slot = 1;
	else if (act == ACT_COLLAPSE)
		*slot = 0;
	else
		*slot = !*slot;
	return R_UPDATE | R_REDRAW;
}

static const char *gall_empty(struct ui *ui, struct view *v)
{
	struct gall *a = gall_of(v);

	if (!a->reader)
		return a->why;
	if (a->res.n && !a->kept.n)
		return "no goroutine carries the focused labels";
	return a->why[0] ? a->why : "no goroutine";
}

static void gall_free(struct view *v)
{
	struct gall *a = v->priv;

	if (a) {
		free(a->kept.g);
		free(a->groups);
		free(a->rows);
		free(a->names);
		hashmap_free(&a->expanded);
		hashmap_free(&a->by_pc);
	}
	free(a);
	v->priv = NULL;
}

const struct view_ops view_goroutines_all_ops = {
	.update = gall_update,
	.nrows = gall_nrows, .row_id = gall_row_id, .title = gall_title, .row = gall_row,
	.action = gall_action, .empty = gall_empty, .free = gall_free, .info = gall_info,
};
