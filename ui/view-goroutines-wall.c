/* view-goroutines-wall.c: the Goroutines view's Wall mode: wall time of every goroutine of
 * a Go target by stack and state (running, runnable, syscall or the wait reason), from the
 * live wall-clock profile as wall.c reads it (the window, the label focus). Rows group the
 * time by stack and state, as the all-goroutines mode (view-goroutines-now.c) groups
 * goroutines; Enter expands a row to its stack. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/profile.h"
#include "gotop/util.h"

enum { WROW_GROUP, WROW_FRAME };

struct wgroup {
	uint64_t key; /* group_key: the stack by function and the state */
	size_t rep;   /* the sample of the group with the most time: its stack and labels */
	int64_t rep_ns;
	uint32_t state; /* string id */
	int cls;
	int64_t ns;
	size_t first;   /* the group's first sample: the others' label sets compared with it */
	int mixed;      /* label sets differ: the row shows rep's */
};

struct wrow {
	uint8_t kind;
	size_t group;
	uint32_t loc;  /* WROW_FRAME: index in the stack, leaf first */
	uint32_t line; /* WROW_FRAME: the location's line (0: innermost inlined) */
};

struct wview {
	const struct session_wall *d, *base;
	struct wgroup *grp;
	size_t ngrp, capgrp;
	struct wrow *rows;
	size_t nrows, caprows;
	struct hashmap expanded; /* group key -> 1 */
	int64_t total, cls[UI_WALL_CLASSES];
	struct ui_wall_reason top[2];
};

static int bytes_eq(const char *a, size_t al, const char *b, size_t bl)
{
	return al == bl && !memcmp(a, b, al);
}

static struct wview *wv_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct wview));
	return v->priv;
}

static int wgroup_cmp(const void *a, const void *b)
{
	const struct wgroup *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int is_open(const struct wview *w, const struct wgroup *g)
{
	const uint64_t *e = hashmap_get(&w->expanded, g->key);

	return e && *e;
}

static void row_add(struct wview *w, struct wrow r)
{
	xgrow((void **)&w->rows, &w->caprows, w->nrows + 1, sizeof(*w->rows));
	w->rows[w->nrows++] = r;
}

/* Whether sample i has the label set of s. Labels are sorted (profile.h): equal sets are
 * equal arrays. */
static int same_labels(const struct prof *p, size_t i, const struct prof_sample *s)
{
	struct prof_sample f;

	if (prof_sample_at(p, i, &f) || f.nlabels != s->nlabels)
		return 0;
	for (uint32_t k = 0; k < s->nlabels; k++) {
		const struct prof_label *a = &f.labels[k], *b = &s->labels[k];

		if (a->key != b->key || a->str != b->str || a->num != b->num ||
		    a->num_unit != b->num_unit)
			return 0;
	}
	return 1;
}

/* A group's key: its stack by function and its state, never 0. Rows are stacks as a reader
 * names them: a running goroutine's stack comes from an on-CPU sample, whose leaf pc
 * differs from tick to tick within one function, and each pc is a location of its own. */
static uint64_t group_key(const struct prof *p, const struct prof_sample *s, uint32_t state)
{
	uint64_t h = util_mix64((uint64_t)state + 1);

	for (uint32_t k = 0; k < s->nlocs; k++) {
		const struct prof_location *loc = prof_location_at(p, s->locs[k] - 1);

		if (!loc || !loc->nlines) {
			h = util_mix64(h ^ ((uint64_t)s->locs[k] << 32));
			continue;
		}
		for (uint32_t j = 0; j < loc->nlines; j++)
			h = util_mix64(h ^ loc->lines[j].function);
	}
	return h ? h : 1;
}

/* The rows: a group's, and under an expanded group its stack's frames (inlined ones
 * too). */
static void rows_build(struct wview *w, const struct prof *p)
{
	for (size_t gi = 0; gi < w->ngrp; gi++) {
		struct prof_sample s;

		row_add(w, (struct wrow){ WROW_GROUP, gi, 0, 0 });
		if (!is_open(w, &w->grp[gi]) || prof_sample_at(p, w->grp[gi].rep, &s))
			continue;
		for (uint32_t k = 0; k < s.nlocs; k++) {
			const struct prof_location *loc = prof_location_at(p, s.locs[k] - 1);
			uint32_t n = loc && loc->nlines ? loc->nlines : 1;

			for (uint32_t j = 0; j < n; j++)
				row_add(w, (struct wrow){ WROW_FRAME, gi, k, j });
		}
	}
}

static void wall_update(struct ui *ui, struct view *v)
{
	struct wview *w = wv_of(v);
	const struct prof *p;
	struct hashmap idx = { 0 };
	struct ui_wall_split all = { 0 };
	struct ui_wall_iter it;
	struct prof_sample s;
	size_t i;
	int64_t ns;
	uint32_t st;

	session_wall_put(w->d);
	session_wall_put(w->base);
	w->d = ui_wall_data(ui, &w->base);
	w->ngrp = w->nrows = 0;
	w->total = 0;
	memset(w->cls, 0, sizeof(w->cls));
	memset(w->top, 0, sizeof(w->top));
	if (!w->d)
		return;
	p = w->d->p;
	ui_wall_iter_init(&it, w->d, w->base, NULL, 0);
	while (ui_wall_next(ui, &it, &i, &s, &ns, &st)) {
		struct wgroup *g;
		uint64_t key, *slot;
		int created;

		ui_wall_split_add(&all, p, st, ns);
		key = group_key(p, &s, st);
		slot = hashmap_put(&idx, key, &created);
		if (created) {
			size_t sl = 0;
			const char *ss = prof_string(p, st, &sl);

			xgrow((void **)&w->grp, &w->capgrp, w->ngrp + 1, sizeof(*w->grp));
			w->grp[w->ngrp] = (struct wgroup){
				.key = key, .rep = i, .first = i, .state = st,
				.cls = ui_wall_class(ss ? ss : "", sl),
			};
			*slot = ++w->ngrp;
		}
		g = &w->grp[*slot - 1];
		g->ns += ns;
		if (!g->mixed && g->first != i)
			g->mixed = !same_labels(p, g->first, &s);
		if (ns > g->rep_ns) {
			g->rep = i;
			g->rep_ns = ns;
		}
	}
	hashmap_free(&idx);
	w->total = all.total;
	memcpy(w->cls, all.ns, sizeof(w->cls));
	ui_wall_top_reasons(&all, w->top);
	if (w->ngrp > 1)
		qsort(w->grp, w->ngrp, sizeof(*w->grp), wgroup_cmp);
	rows_build(w, p);
}

static size_t wall_nrows(struct ui *ui, struct view *v)
{
	(void)ui;
	return wv_of(v)->nrows;
}

static uint64_t wall_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct wview *w = wv_of(v);
	const struct wrow *r = &w->rows[i];

	(void)ui;
	return util_mix64(w->grp[r->group].key ^ ((uint64_t)r->kind << 60) ^
			  ((uint64_t)r->loc << 16) ^ r->line);
}

static void wall_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct wview *w = wv_of(v);
	char pct[16];

	tl_reset(l);
	tl_field(l, UA_HEAD, "WALL s", 9, TL_RIGHT);
	tl_field(l, UA_HEAD, "SHARE%", 8, TL_RIGHT);
	tl_put(l, UA_HEAD, "  ");
	tl_field(l, UA_HEAD, "STATE", 22, ui->batch ? TL_NOCUT : 0);
	tl_put(l, UA_HEAD, "  WHERE (wall time of every goroutine; m: on-CPU shares)");
	if (!w->d)
		return;
	tl_put(l, UA_DIM, "  ");
	for (int c = 0; c < UI_WALL_CLASSES; c++) {
		static const char *const names[] = { "running", "runnable", "waiting" };

		ui_pct(pct, sizeof(pct), w->cls[c], w->total);
		tl_printf(l, UA_DIM, "%s%s %s", c ? ", " : "", names[c], pct + strspn(pct, " "));
	}
	for (int i = 0; i < 2 && w->top[i].ns > 0; i++) {
		size_t sl = 0;
		const char *s = prof_string(w->d->p, w->top[i].state, &sl);

		ui_pct(pct, sizeof(pct), w->top[i].ns, w->total);
		tl_put(l, UA_DIM, i ? ", " : " (");
		tl_untrusted(l, UA_DIM, s ? s : "", sl, 0, TL_NOCUT);
		tl_printf(l, UA_DIM, " %s", pct + strspn(pct, " "));
	}
	if (w->top[0].ns > 0)
		tl_put(l, UA_DIM, ")");
	if (w->base)
		tl_printf(l, UA_DIM,
			  "; the last %.0f s: %llu snapshots at %.3g Hz, %llu goroutines "
			  "changed while read",
			  (double)(w->d->at_ns - w->base->at_ns) / 1e9,
			  (unsigned long long)(w->d->ticks - w->base->ticks), w->d->hz,
			  (unsigned long long)(w->d->torn - w->base->torn));
	else
		tl_printf(l, UA_DIM,
			  "; %llu snapshots at %.3g Hz over %.1f s since the start or z, "
			  "%llu goroutines changed while read",
			  (unsigned long long)w->d->ticks, w->d->hz, (double)w->d->span_ns / 1e9,
			  (unsigned long long)w->d->torn);
}

/* The innermost frame outside the runtime of a stack: where the goroutine's own code
 * waits (the all-goroutines mode's rule); NULL when all of it is the runtime's. */
static const char *where(const struct prof *p, const struct prof_sample *s, size_t *len)
{
	const char *last = NULL;
	size_t last_len = 0;

	for (uint32_t k = 0; k < s->nlocs; k++) {
		const struct prof_location *loc = prof_location_at(p, s->locs[k] - 1);

		for (uint32_t j = 0; loc && j < loc->nlines; j++) {
			const struct prof_function *fn =
				prof_function_at(p, loc->lines[j].function - 1);
			const char *name = fn ? prof_string(p, fn->name, len) : NULL;

			if (!name)
				continue;
			if (*len < 8 || memcmp(name, "runtime.", 8) != 0)
				return name;
			if (!bytes_eq(name, *len, "runtime.goexit", 14)) {
				last = name;
				last_len = *len;
			}
		}
	}
	*len = last_len;
	return last;
}

static void group_row(struct ui *ui, struct wview *w, const struct wgroup *g, struct tline *l)
{
	const struct prof *p = w->d->p;
	struct prof_sample s;
	char pct[16];
	size_t sl = 0, nl = 0;
	const char *st = prof_string(p, g->state, &sl), *name;
	uint32_t shown = 0;

	tl_printf(l, UA_NORMAL, "%9.2f", (double)g->ns / 1e9);
	ui_pct(pct, sizeof(pct), g->ns, w->total);
	tl_field(l, ui_pct_attr(g->ns, w->total), pct, 8, TL_RIGHT);
	tl_put(l, UA_NORMAL, "  ");
	tl_untrusted(l,
		     g->cls == UI_WALL_RUNNING    ? UA_HOT
		     : g->cls == UI_WALL_RUNNABLE ? UA_WARM
						  : UA_STATE,
		     st ? st : "", sl, 22, ui->batch ? TL_NOCUT : 0);
	tl_put(l, UA_TREE, is_open(w, g) ? "  - " : "  + ");
	if (prof_sample_at(p, g->rep, &s))
		return;
	name = where(p, &s, &nl);
	if (name && bytes_eq(name, nl, "[running]", 9))
		tl_put(l, UA_DIM, "(running on a thread: no perf sample of it near the read)");
	else if (name)
		tl_untrusted(l, UA_NORMAL, name, nl, 0, TL_NOCUT);
	/* Its labels (those of the sample with the most time): a group is a stack and a
	 * state, whatever the labels, as in the all-goroutines mode. */
	for (uint32_t k = 0; k < s.nlabels; k++) {
		size_t kl, vl;
		const char *ks = prof_string(p, s.labels[k].key, &kl);
		const char *vs = s.labels[k].str ? prof_string(p, s.labels[k].str, &vl) : NULL;

		if (!ks || !vs || bytes_eq(ks, kl, "state", 5))
			continue;
		tl_put(l, UA_DIM, shown++ ? ", " : "  {");
		tl_untrusted(l, UA_DIM, ks, kl, 0, TL_NOCUT);
		tl_put(l, UA_DIM, "=");
		tl_untrusted(l, UA_DIM, vs, vl, 0, TL_NOCUT);
	}
	if (shown)
		tl_put(l, UA_DIM, g->mixed ? "} (most's)" : "}");
}

static void wall_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct wview *w = wv_of(v);
	const struct wrow *r = &w->rows[i];
	const struct wgroup *g = &w->grp[r->group];
	const struct prof *p = w->d->p;
	const struct prof_location *loc;
	const struct prof_function *fn;
	struct prof_sample s;
	size_t nl = 0, fl = 0;
	const char *name, *file;
	char buf[64];

	tl_reset(l);
	if (r->kind == WROW_GROUP) {
		group_row(ui, w, g, l);
		return;
	}
	tl_put(l, UA_NORMAL, "                                         ");
	if (prof_sample_at(p, g->rep, &s) || r->loc >= s.nlocs)
		return;
	loc = prof_location_at(p, s.locs[r->loc] - 1);
	if (!loc || r->line >= loc->nlines) {
		tl_printf(l, UA_DIM, "%#llx", loc ? (unsigned long long)loc->address : 0ULL);
		return;
	}
	fn = prof_function_at(p, loc->lines[r->line].function - 1);
	name = fn ? prof_string(p, fn->name, &nl) : NULL;
	tl_untrusted(l, UA_NORMAL, name ? name : "?", name ? nl : 1, 0, TL_NOCUT);
	file = fn ? prof_string(p, fn->filename, &fl) : NULL;
	if (file && fl) {
		const char *b = memrchr(file, '/', fl);

		if (b) {
			fl -= (size_t)(b + 1 - file);
			file = b + 1;
		}
		tl_put(l, UA_DIM, "  ");
		tl_untrusted(l, UA_DIM, file, fl, 0, TL_NOCUT);
		snprintf(buf, sizeof(buf), ":%lld", (long long)loc->lines[r->line].line);
		tl_put(l, UA_DIM, buf);
	}
}

static int wall_action(struct ui *ui, struct view *v, enum ui_action act)
{
	struct wview *w = wv_of(v);
	uint64_t *slot;
	int created;

	(void)ui;
	if (v->sel >= w->nrows ||
	    (act != ACT_ENTER && act != ACT_TOGGLE && act != ACT_EXPAND && act != ACT_COLLAPSE))
		return R_NONE;
	slot = hashmap_put(&w->expanded, w->grp[w->rows[v->sel].group].key, &created);
	if (act == ACT_EXPAND)
		*slot = 1;
	else if (act == ACT_COLLAPSE)
		*slot = 0;
	else
		*slot = !*slot;
	return R_UPDATE | R_REDRAW;
}

static const char *wall_empty(struct ui *ui, struct view *v)
{
	struct wview *w = wv_of(v);

	if (!ui->wall)
		return ui->wall_why[0] ? ui->wall_why : "no wall-clock sampler";
	if (!w->d || !w->d->ticks)
		return "no snapshot of the goroutines yet";
	if (w->d->ticks == w->d->failed)
		return w->d->gone ? "the target has exited" : "the Go runtime has not started yet";
	return "no goroutine carries the focused labels";
}

static void wall_free(struct view *v)
{
	struct wview *w = v->priv;

	if (w) {
		session_wall_put(w->d);
		session_wall_put(w->base);
		free(w->grp);
		free(w->rows);
		hashmap_free(&w->expanded);
	}
	free(w);
	v->priv = NULL;
}

const struct view_ops view_goroutines_wall_ops = {
	.update = wall_update,
	.nrows = wall_nrows,
	.row_id = wall_row_id,
	.title = wall_title,
	.row = wall_row,
	.action = wall_action,
	.empty = wall_empty,
	.free = wall_free,
};
