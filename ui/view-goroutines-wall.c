/* view-goroutines-wall.c: the Goroutines view's Wall mode: wall time of every goroutine of
 * a Go target by stack and state (running, runnable, syscall or the wait reason), from the
 * live wall-clock profile as wall.c reads it (the window, the label focus). It answers
 * where request time goes, as fgprof's and go tool pprof's users ask it:
 *  - the goroutines that waited at every snapshot of the window (the background loops, a
 *    select that shows its whole span) are left out and counted (a shows them: fgprof's
 *    full picture);
 *  - rows group the time by stack and state, WHERE naming the program's frame that waits
 *    (ui_where), as the all-goroutines mode (view-goroutines-now.c) groups goroutines;
 *    b groups by start function first (the goroutines a server starts per request
 *    together), each with the states of its time, Enter listing its stacks;
 *  - f focuses on a row's pprof labels (go tool pprof -tagfocus), as Enter in Labels does.
 * Enter expands a stack row to its frames. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/fname.h"
#include "gotop/profile.h"
#include "gotop/util.h"

enum { WROW_START, WROW_GROUP, WROW_FRAME };

#define WHERE_FRAMES 1024 /* frames (inlined ones too) looked at for WHERE */

/* The time of a stack and state. */
struct wgroup {
	uint64_t key; /* group_key: the stack by function and the state */
	size_t rep;   /* the sample of the group with the most time: its stack and labels */
	int64_t rep_ns;
	uint32_t state; /* string id */
	int cls;
	int64_t ns;
	size_t first;   /* the group's first sample: the others' label sets compared with it */
	int mixed;      /* label sets differ: the row shows rep's */
	size_t start;   /* its start function (index in starts) */
};

/* The time of a start function (b): its stacks' groups, by state. */
struct wstart {
	uint64_t key;       /* hash of the name (never 0) */
	const char *name;   /* borrowed from the data's profile; NULL: no frame */
	size_t len;
	int64_t ns;
	struct ui_wall_split split;
	size_t order;       /* its index before the sort */
};

struct wrow {
	uint8_t kind;
	size_t i;      /* WROW_START: index in starts; else in grp */
	uint32_t loc;  /* WROW_FRAME: index in the stack, leaf first */
	uint32_t line; /* WROW_FRAME: the location's line (0: innermost inlined) */
};

/* The columns, laid out to the width (tl_cols). */
enum { WC_WALL, WC_SHARE, WC_STATE, WC_WHERE, WC_LABELS, WC_N };

struct wview {
	const struct session_wall *d, *base;
	struct wgroup *grp;
	size_t ngrp, capgrp;
	struct wstart *starts;
	size_t nstarts, capstarts;
	struct wrow *rows;
	size_t nrows, caprows;
	struct hashmap expanded; /* group or start function key -> 1 */
	int64_t total;           /* the wall time shown */
	struct ui_wall_split all; /* the time shown, by state */
	int64_t idle_g;           /* goroutines left out: parked all along */
	int64_t idle_ns;
	struct tl_col col[WC_N];
	uint64_t gen, laid_gen;
	int laid_names, laid_width;
};

static const char *const wc_head[WC_N] = { "WALL s", "SHARE%", "STATE", "WHERE", "LABELS" };

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

static int is_open(const struct wview *w, uint64_t key)
{
	const uint64_t *e = hashmap_get(&w->expanded, key);

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

/* The name of function id fid of p (NULL: none). */
static const char *fn_name(const struct prof *p, uint32_t fid, size_t *len)
{
	const struct prof_function *fn = fid ? prof_function_at(p, fid - 1) : NULL;

	return fn ? prof_string(p, fn->name, len) : NULL;
}

/* The goroutine's start function: the outermost frame of its stack but runtime.goexit (as
 * Go's goroutine dumps end a stack at the function a go statement started). */
static const char *start_fn(const struct prof *p, const struct prof_sample *s, size_t *len)
{
	for (uint32_t k = s->nlocs; k-- > 0;) {
		const struct prof_location *loc = prof_location_at(p, s->locs[k] - 1);

		for (uint32_t j = loc ? loc->nlines : 0; j-- > 0;) {
			const char *name = fn_name(p, loc->lines[j].function, len);

			if (name && !bytes_eq(name, *len, "runtime.goexit", 14))
				return name;
		}
	}
	*len = 0;
	return NULL;
}

/* Where the stack waits (ui_where): the program's frame, else the standard library's
 * outside the parking machinery, else the start function. */
static const char *where(const struct prof *p, const struct prof_sample *s, size_t *len)
{
	struct ui_where w;
	const char *names[WHERE_FRAMES] = { 0 };
	size_t lens[WHERE_FRAMES] = { 0 };
	long n = 0, at;

	ui_where_init(&w);
	for (uint32_t k = 0; k < s->nlocs && w.kind != FNAME_GO_PROGRAM; k++) {
		const struct prof_location *loc = prof_location_at(p, s->locs[k] - 1);

		for (uint32_t j = 0; loc && j < loc->nlines && n < WHERE_FRAMES; j++) {
			names[n] = fn_name(p, loc->lines[j].function, &lens[n]);
			if (!names[n])
				continue;
			ui_where_add(&w, n, names[n], lens[n]);
			n++;
		}
	}
	at = ui_where_pick(&w);
	*len = at >= 0 ? lens[at] : 0;
	return at >= 0 ? names[at] : NULL;
}

static uint64_t start_key(const char *name, size_t len)
{
	uint64_t h = name ? util_hash(name, len, 0x73746172) : 0x6e6f6e65;

	return h ? h : 1;
}

static int start_cmp(const void *a, const void *b)
{
	const struct wstart *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* A stack group's rows: its own and, expanded, its stack's frames (inlined ones too). */
static void group_rows(struct wview *w, const struct prof *p, size_t gi)
{
	struct prof_sample s;

	row_add(w, (struct wrow){ WROW_GROUP, gi, 0, 0 });
	if (!is_open(w, w->grp[gi].key) || prof_sample_at(p, w->grp[gi].rep, &s))
		return;
	for (uint32_t k = 0; k < s.nlocs; k++) {
		const struct prof_location *loc = prof_location_at(p, s.locs[k] - 1);
		uint32_t n = loc && loc->nlines ? loc->nlines : 1;

		for (uint32_t j = 0; j < n; j++)
			row_add(w, (struct wrow){ WROW_FRAME, gi, k, j });
	}
}

/* The rows: by stack and state, biggest first; or (b) start functions, biggest first,
 * each followed when expanded by its stack groups. */
static void rows_build(struct ui *ui, struct wview *w, const struct prof *p)
{
	w->nrows = 0;
	w->gen++;
	if (!ui->wall_by_start) {
		for (size_t gi = 0; gi < w->ngrp; gi++)
			group_rows(w, p, gi);
		return;
	}
	for (size_t si = 0; si < w->nstarts; si++) {
		row_add(w, (struct wrow){ WROW_START, si, 0, 0 });
		if (!is_open(w, w->starts[si].key))
			continue;
		for (size_t gi = 0; gi < w->ngrp; gi++)
			if (w->grp[gi].start == si)
				group_rows(w, p, gi);
	}
}

/* The start functions of the groups (b), sorted; each group's start set to its index. */
static void starts_build(struct wview *w, const struct prof *p)
{
	struct hashmap idx = { 0 };
	size_t *order;

	w->nstarts = 0;
	for (size_t gi = 0; gi < w->ngrp; gi++) {
		struct wgroup *g = &w->grp[gi];
		struct prof_sample s;
		const char *name = NULL;
		size_t len = 0;
		uint64_t key, *slot;
		int created;

		if (!prof_sample_at(p, g->rep, &s))
			name = start_fn(p, &s, &len);
		key = start_key(name, len);
		slot = hashmap_put(&idx, key, &created);
		if (created) {
			xgrow((void **)&w->starts, &w->capstarts, w->nstarts + 1, sizeof(*w->starts));
			memset(&w->starts[w->nstarts], 0, sizeof(*w->starts));
			w->starts[w->nstarts] = (struct wstart){ .key = key, .name = name, .len = len };
			*slot = ++w->nstarts;
		}
		g->start = *slot - 1;
		w->starts[g->start].ns += g->ns;
		ui_wall_split_add(&w->starts[g->start].split, p, g->state, g->ns);
	}
	hashmap_free(&idx);
	/* Sorted, and the groups' indexes moved with them. */
	order = xmalloc((w->nstarts ? w->nstarts : 1) * sizeof(*order));
	for (size_t i = 0; i < w->nstarts; i++)
		w->starts[i].order = i;
	if (w->nstarts > 1)
		qsort(w->starts, w->nstarts, sizeof(*w->starts), start_cmp);
	for (size_t i = 0; i < w->nstarts; i++)
		order[w->starts[i].order] = i;
	for (size_t gi = 0; gi < w->ngrp; gi++)
		w->grp[gi].start = order[w->grp[gi].start];
	free(order);
}

static void wall_update(struct ui *ui, struct view *v)
{
	struct wview *w = wv_of(v);
	const struct prof *p;
	struct hashmap idx = { 0 };
	struct ui_wall_iter it;
	struct prof_sample s;
	size_t i;
	int64_t ns;
	uint32_t st;

	session_wall_put(w->d);
	session_wall_put(w->base);
	w->d = ui_wall_data(ui, &w->base);
	w->ngrp = w->nrows = w->nstarts = 0;
	w->total = w->idle_g = w->idle_ns = 0;
	memset(&w->all, 0, sizeof(w->all));
	w->gen++;
	if (!w->d)
		return;
	p = w->d->p;
	ui_wall_iter_init(&it, w->d, w->base, NULL, 0);
	while (ui_wall_next(ui, &it, &i, &s, &ns, &st)) {
		struct wgroup *g;
		uint64_t key, *slot;
		int created, cls;
		size_t sl = 0;
		const char *ss = prof_string(p, st, &sl);
		int64_t idle;

		cls = ui_wall_class(ss ? ss : "", sl);
		idle = ui_wall_idle(&it, ns, cls);
		if (idle && !ui->wall_idle) {
			w->idle_g += idle;
			w->idle_ns += ns;
			continue;
		}
		ui_wall_split_add(&w->all, p, st, ns);
		key = group_key(p, &s, st);
		slot = hashmap_put(&idx, key, &created);
		if (created) {
			xgrow((void **)&w->grp, &w->capgrp, w->ngrp + 1, sizeof(*w->grp));
			w->grp[w->ngrp] = (struct wgroup){
				.key = key, .rep = i, .first = i, .state = st, .cls = cls,
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
	w->total = w->all.total;
	if (w->ngrp > 1)
		qsort(w->grp, w->ngrp, sizeof(*w->grp), wgroup_cmp);
	starts_build(w, p);
	rows_build(ui, w, p);
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
	uint64_t key = r->kind == WROW_START ? w->starts[r->i].key : w->grp[r->i].key;

	(void)ui;
	return util_mix64(key ^ ((uint64_t)r->kind << 60) ^ ((uint64_t)r->loc << 16) ^ r->line);
}

/* A row's cells as text (escaped). */
struct wcells {
	char wall[24], share[16], state[160], where[1104], labels[1300], pre[8];
	int state_attr, where_dim, share_attr;
};

static void labels_of(struct ui *ui, const struct prof *p, const struct prof_sample *s, int mixed,
		      char *buf, size_t n)
{
	size_t k = 0;

	buf[0] = 0;
	/* The labels of the sample with the most time: a group is a stack and a state,
	 * whatever the labels, as in the all-goroutines mode. */
	for (uint32_t j = 0; j < s->nlabels && k + 1 < n; j++) {
		size_t kl, vl;
		const char *ks = prof_string(p, s->labels[j].key, &kl);
		const char *vs = s->labels[j].str ? prof_string(p, s->labels[j].str, &vl) : NULL;
		char kb[300], vb[600];

		if (!ks || !vs || bytes_eq(ks, kl, "state", 5))
			continue;
		ui_esc(ui, kb, sizeof(kb), ks, kl);
		ui_esc(ui, vb, sizeof(vb), vs, vl);
		k += (size_t)snprintf(buf + k, n - k, "%s%s=%s", k ? " " : "", kb, vb);
	}
	if (k && mixed && k + 1 < n)
		snprintf(buf + k, n - k, " (most's)");
}

static void group_cells(struct ui *ui, struct wview *w, const struct wgroup *g, struct wcells *c)
{
	const struct prof *p = w->d->p;
	struct prof_sample s;
	size_t sl = 0, nl = 0;
	const char *st = prof_string(p, g->state, &sl), *name = NULL;
	char nb[1100];

	memset(c, 0, sizeof(*c));
	snprintf(c->wall, sizeof(c->wall), "%.2f", (double)g->ns / 1e9);
	ui_pct(c->share, sizeof(c->share), g->ns, w->total);
	c->share_attr = ui_pct_attr(g->ns, w->total);
	ui_esc(ui, c->state, sizeof(c->state), st ? st : "", sl);
	c->state_attr = g->cls == UI_WALL_RUNNING ? UA_HOT : g->cls == UI_WALL_RUNNABLE ? UA_WARM
											 : UA_STATE;
	c->labels[0] = 0;
	c->where_dim = 0;
	if (!prof_sample_at(p, g->rep, &s)) {
		name = where(p, &s, &nl);
		labels_of(ui, p, &s, g->mixed, c->labels, sizeof(c->labels));
	}
	if (name && bytes_eq(name, nl, "[running]", 9)) {
		snprintf(nb, sizeof(nb), "(running on a thread: no perf sample of it near the read)");
		c->where_dim = 1;
	} else if (name) {
		ui_name(ui, name, nl, nb, sizeof(nb));
	} else {
		snprintf(nb, sizeof(nb), "(no stack)");
		c->where_dim = 1;
	}
	snprintf(c->where, sizeof(c->where), "%s", nb);
	snprintf(c->pre, sizeof(c->pre), "%s%s ", ui->wall_by_start ? "  " : "",
		 is_open(w, g->key) ? "-" : "+");
}

/* A start function's cells: its time, and the state most of it is in with its share. */
static void start_cells(struct ui *ui, struct wview *w, const struct wstart *st, struct wcells *c)
{
	const struct prof *p = w->d->p;
	int64_t best = -1;
	uint32_t best_state = 0;
	int best_cls = 0;
	char nb[1100], pct[16];

	memset(c, 0, sizeof(*c));
	snprintf(c->wall, sizeof(c->wall), "%.2f", (double)st->ns / 1e9);
	ui_pct(c->share, sizeof(c->share), st->ns, w->total);
	c->share_attr = ui_pct_attr(st->ns, w->total);
	/* Running and runnable are classes of their own; waiting is by reason. */
	for (int k = 0; k < UI_WALL_WAITING; k++)
		if (st->split.ns[k] > best) {
			best = st->split.ns[k];
			best_cls = k;
		}
	for (size_t r = 0; r < st->split.nreasons; r++)
		if (st->split.reasons[r].ns > best) {
			best = st->split.reasons[r].ns;
			best_state = st->split.reasons[r].state;
			best_cls = UI_WALL_WAITING;
		}
	ui_pct(pct, sizeof(pct), best, st->ns);
	if (best_cls == UI_WALL_WAITING) {
		size_t sl = 0;
		const char *s = prof_string(p, best_state, &sl);
		char e[120];

		ui_esc(ui, e, sizeof(e), s ? s : "", sl);
		snprintf(c->state, sizeof(c->state), "%s %s", e, pct + strspn(pct, " "));
	} else {
		snprintf(c->state, sizeof(c->state), "%s %s",
			 best_cls == UI_WALL_RUNNING ? "running" : "runnable", pct + strspn(pct, " "));
	}
	c->state_attr = best_cls == UI_WALL_RUNNING ? UA_HOT : best_cls == UI_WALL_RUNNABLE ? UA_WARM
											      : UA_STATE;
	if (st->name)
		ui_name(ui, st->name, st->len, nb, sizeof(nb));
	else
		snprintf(nb, sizeof(nb), "(no stack)");
	c->where_dim = !st->name;
	snprintf(c->where, sizeof(c->where), "%s", nb);
	snprintf(c->pre, sizeof(c->pre), "%s ", is_open(w, st->key) ? "-" : "+");
	c->labels[0] = 0;
}

/* The columns' widths, from the widest cell of each and its header, laid out to the width
 * again when the rows, the names or the width change. */
static void layout(struct ui *ui, struct wview *w)
{
	int want[WC_N] = { 0 }, k;
	struct wcells c;

	if (w->laid_gen == w->gen && w->laid_names == ui_short_names(ui) &&
	    w->laid_width == ui_table_width(ui))
		return;
	for (size_t i = 0; w->d && i < w->nrows; i++) {
		const struct wrow *r = &w->rows[i];

		if (r->kind == WROW_FRAME)
			continue;
		if (r->kind == WROW_START)
			start_cells(ui, w, &w->starts[r->i], &c);
		else
			group_cells(ui, w, &w->grp[r->i], &c);
		want[WC_WALL] = GP_MAX(want[WC_WALL], tl_width(c.wall));
		want[WC_STATE] = GP_MAX(want[WC_STATE], tl_width(c.state));
		want[WC_WHERE] = GP_MAX(want[WC_WHERE], tl_width(c.pre) + tl_width(c.where));
		want[WC_LABELS] = GP_MAX(want[WC_LABELS], tl_width(c.labels));
	}
	for (k = 0; k < WC_N; k++) {
		const char *h = k == WC_WHERE && ui->wall_by_start ? "START FUNCTION / WHERE" : wc_head[k];
		int head = tl_width(h);

		if (k == WC_LABELS && !want[k]) {
			w->col[k] = (struct tl_col){ 0 };
			continue;
		}
		w->col[k].want = GP_MAX(want[k], head);
		w->col[k].min = k == WC_WALL || k == WC_SHARE ? w->col[k].want
				: k == WC_STATE ? GP_MIN(w->col[k].want, 12)
				: k == WC_LABELS ? GP_MIN(w->col[k].want, 16)
						  : GP_MIN(w->col[k].want, head + 2);
		w->col[k].prio = k != WC_LABELS;
	}
	w->col[WC_SHARE].want = w->col[WC_SHARE].min = 6;
	tl_cols(w->col, WC_N, UI_GAP, ui_table_width(ui));
	w->laid_gen = w->gen;
	w->laid_names = ui_short_names(ui);
	w->laid_width = ui_table_width(ui);
}

static void cell(struct ui *ui, struct wview *w, struct tline *l, int k, int attr, const char *s,
		 int flags)
{
	ui_cell(ui, l, w->col, WC_N, k, attr, s, flags);
}

static void wall_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct wview *w = wv_of(v);

	layout(ui, w);
	tl_reset(l);
	for (int k = 0; k < WC_N; k++)
		cell(ui, w, l, k, UA_HEAD,
		     k == WC_WHERE && ui->wall_by_start ? "START FUNCTION / WHERE" : wc_head[k],
		     k == WC_WALL || k == WC_SHARE ? TL_RIGHT : 0);
	if (!ui->batch)
		tl_pad(l, ui->width);
}

/* What the rows leave out and how to see it, then the split of the time shown by state
 * and the sampler's counts: on the info line, or after the column names in --batch. */
static void wall_info(struct ui *ui, struct view *v, struct tline *l)
{
	struct wview *w = wv_of(v);
	struct ui_wall_reason top[2];
	char pct[16];

	if (!w->d)
		return;
	if (w->idle_g)
		tl_printf(l, UA_MARK, "%lld idle all along hidden (a: all)",
			  (long long)w->idle_g);
	else
		tl_put(l, UA_DIM, ui->wall_idle ? "all goroutines (a: hide the idle)"
						: "none idle all along");
	tl_put(l, UA_DIM, ui->wall_by_start ? "; b: by stack" : "; b: by start function");
	tl_put(l, UA_DIM, "; ");
	for (int c = 0; c < UI_WALL_CLASSES; c++) {
		static const char *const names[] = { "running", "runnable", "waiting" };

		ui_pct(pct, sizeof(pct), w->all.ns[c], w->total);
		tl_printf(l, UA_DIM, "%s%s %s", c ? ", " : "", names[c], pct + strspn(pct, " "));
	}
	ui_wall_top_reasons(&w->all, top);
	for (int i = 0; i < 2 && top[i].ns > 0; i++) {
		size_t sl = 0;
		const char *s = prof_string(w->d->p, top[i].state, &sl);

		ui_pct(pct, sizeof(pct), top[i].ns, w->total);
		tl_put(l, UA_DIM, i ? ", " : " (");
		tl_untrusted(l, UA_DIM, s ? s : "", sl, 0, TL_NOCUT);
		tl_printf(l, UA_DIM, " %s", pct + strspn(pct, " "));
	}
	if (top[0].ns > 0)
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

static void wall_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct wview *w = wv_of(v);
	const struct wrow *r = &w->rows[i];
	const struct prof *p = w->d->p;
	const struct prof_location *loc;
	struct prof_sample s;
	struct wcells c;
	size_t nl = 0, fl = 0;
	const char *name, *file;
	char buf[1100];
	int at;

	tl_reset(l);
	layout(ui, w);
	if (r->kind != WROW_FRAME) {
		if (r->kind == WROW_START)
			start_cells(ui, w, &w->starts[r->i], &c);
		else
			group_cells(ui, w, &w->grp[r->i], &c);
		cell(ui, w, l, WC_WALL, UA_NORMAL, c.wall, TL_RIGHT);
		cell(ui, w, l, WC_SHARE, c.share_attr, c.share, TL_RIGHT);
		cell(ui, w, l, WC_STATE, c.state_attr, c.state, 0);
		ui_cell_pre(ui, l, w->col, WC_N, WC_WHERE, c.pre, UA_TREE,
			    c.where_dim ? UA_DIM : UA_NORMAL, c.where, TL_CUT_NAME);
		cell(ui, w, l, WC_LABELS, UA_DIM, c.labels, 0);
		return;
	}
	/* A frame: under WHERE's names. */
	at = w->col[WC_WALL].w + UI_GAP + w->col[WC_SHARE].w + UI_GAP + w->col[WC_STATE].w + UI_GAP +
	     2 + (ui->wall_by_start ? 2 : 0);
	tl_pad(l, at);
	if (prof_sample_at(p, w->grp[r->i].rep, &s) || r->loc >= s.nlocs)
		return;
	loc = prof_location_at(p, s.locs[r->loc] - 1);
	if (!loc || r->line >= loc->nlines) {
		tl_printf(l, UA_DIM, "%#llx", loc ? (unsigned long long)loc->address : 0ULL);
		return;
	}
	name = fn_name(p, loc->lines[r->line].function, &nl);
	if (name)
		ui_name(ui, name, nl, buf, sizeof(buf));
	tl_put(l, UA_NORMAL, name ? buf : "?");
	{
		const struct prof_function *fn =
			prof_function_at(p, loc->lines[r->line].function - 1);

		file = fn ? prof_string(p, fn->filename, &fl) : NULL;
	}
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

/* f: focus on the labels of the selected row's goroutines (those of the sample with the
 * most time), as Enter on each value in Labels would. */
static int focus_labels(struct ui *ui, struct wview *w, const struct wrow *r)
{
	const struct prof *p = w->d->p;
	struct prof_sample s;
	char shown[400];
	size_t k = 0;

	if (r->kind == WROW_START || prof_sample_at(p, w->grp[r->i].rep, &s)) {
		ui_set_status(ui, UA_ERR, "f focuses on a stack row's labels (b: by stack)");
		return R_REDRAW;
	}
	shown[0] = 0;
	for (uint32_t j = 0; j < s.nlabels; j++) {
		size_t kl, vl;
		const char *ks = prof_string(p, s.labels[j].key, &kl);
		const char *vs = s.labels[j].str ? prof_string(p, s.labels[j].str, &vl) : NULL;
		char kb[100], vb[100];

		if (!ks || !vs || bytes_eq(ks, kl, "state", 5) ||
		    ui_has_label_filter(ui, ks, kl, vs, vl, 0))
			continue;
		ui_remove_label_filter(ui, ks, kl);
		ui_add_filter(ui, MODEL_LABEL, 1, ks, kl, vs, vl, 0);
		ui_esc(ui, kb, sizeof(kb), ks, kl);
		ui_esc(ui, vb, sizeof(vb), vs, vl);
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

static int wall_action(struct ui *ui, struct view *v, enum ui_action act)
{
	struct wview *w = wv_of(v);
	uint64_t *slot, key;
	const struct wrow *r;
	int created;

	switch (act) {
	case ACT_SHOW_IDLE:
		ui->wall_idle = !ui->wall_idle;
		ui_set_status(ui, UA_OK, "%s", ui->wall_idle ? "every goroutine, those idle all along too"
							     : "goroutines idle all along hidden");
		return R_UPDATE | R_REDRAW;
	case ACT_GROUP_BY:
		ui->wall_by_start = !ui->wall_by_start;
		ui_reset_sel(v);
		ui_set_status(ui, UA_OK, "%s", ui->wall_by_start ? "by start function (Enter: its stacks)"
							   : "by stack and state");
		return R_UPDATE | R_REDRAW;
	default:
		break;
	}
	if (v->sel >= w->nrows)
		return R_NONE;
	r = &w->rows[v->sel];
	if (act == ACT_FOCUS_LABELS)
		return focus_labels(ui, w, r);
	if (act != ACT_ENTER && act != ACT_TOGGLE && act != ACT_EXPAND && act != ACT_COLLAPSE)
		return R_NONE;
	key = r->kind == WROW_START ? w->starts[r->i].key : w->grp[r->i].key;
	slot = hashmap_put(&w->expanded, key, &created);
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
	if (w->idle_g)
		return "every goroutine waited all along (a shows them)";
	return "no goroutine carries the focused labels";
}

static void wall_free(struct view *v)
{
	struct wview *w = v->priv;

	if (w) {
		session_wall_put(w->d);
		session_wall_put(w->base);
		free(w->grp);
		free(w->starts);
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
	.info = wall_info,
};
