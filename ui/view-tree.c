/* view-tree.c: one expand/collapse tree widget serving two views: the top-down call tree
 * and the callers (bottom-up) tree of one function. Expansion and selection are kept by
 * path identity, so they survive every refresh (tmux mode-tree.c keeps state the same way). */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/hashmap.h"
#include "gotop/util.h"

/* A set of 64-bit node ids (path hashes). */
struct idset {
	uint64_t *slots; /* 0 is empty; id 0 is stored as 1 */
	size_t cap, n;
};

static uint64_t idkey(uint64_t id)
{
	return id ? id : 1;
}

static int idset_has(const struct idset *s, uint64_t id)
{
	size_t i;

	if (!s->cap)
		return 0;
	id = idkey(id);
	for (i = util_mix64(id) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == id)
			return 1;
	return 0;
}

static void idset_put(struct idset *s, uint64_t id);

static void idset_grow(struct idset *s)
{
	struct idset old = *s;
	size_t i;

	s->cap = old.cap ? old.cap * 2 : 64;
	s->slots = xcalloc(s->cap, sizeof(*s->slots));
	s->n = 0;
	for (i = 0; i < old.cap; i++)
		if (old.slots[i])
			idset_put(s, old.slots[i]);
	free(old.slots);
}

static void idset_put(struct idset *s, uint64_t id)
{
	size_t i;

	id = idkey(id);
	if ((s->n + 1) * 2 > s->cap)
		idset_grow(s);
	for (i = util_mix64(id) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == id)
			return;
	s->slots[i] = id;
	s->n++;
}

static void idset_del(struct idset *s, uint64_t id)
{
	size_t i, j;

	if (!s->cap)
		return;
	id = idkey(id);
	for (i = util_mix64(id) & (s->cap - 1); s->slots[i]; i = (i + 1) & (s->cap - 1))
		if (s->slots[i] == id)
			break;
	if (!s->slots[i])
		return;
	s->slots[i] = 0;
	s->n--;
	/* Re-insert the rest of the cluster (linear probing deletion). */
	for (j = (i + 1) & (s->cap - 1); s->slots[j]; j = (j + 1) & (s->cap - 1)) {
		uint64_t k = s->slots[j];

		s->slots[j] = 0;
		s->n--;
		idset_put(s, k);
	}
}

static void idset_clear(struct idset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

struct tree {
	int callers;
	struct model_tree *t;
	struct idset open;
	uint32_t *vis;
	size_t nvis, capvis;
	char *fn;                /* callers: raw name of the function shown */
	size_t fn_len;
	int fixed;               /* callers: fn came from --callers (--batch keeps it) */
	char *root_name;         /* callers: the function the expansions belong to */
	size_t root_len;
	/* A group's members: each node's total of each (nxmodel a node), matched by the
	 * node's id (its path's hash, the same in every model of the profile). */
	int64_t *xtot;
	size_t capxtot;
};


static struct tree *tree_of(struct view *v)
{
	if (!v->priv) {
		struct tree *t = xcalloc(1, sizeof(struct tree));

		t->callers = v->id == VIEW_CALLERS;
		v->priv = t;
	}
	return v->priv;
}

static int is_open(struct ui *ui, struct tree *t, const struct model_node *n)
{
	return ui->batch || idset_has(&t->open, n->id);
}

static void push(struct ui *ui, struct tree *t, uint32_t k, int64_t min)
{
	const struct model_node *n = &t->t->nodes[k];
	uint32_t i;

	if (ui->batch && n->total < min)
		return;
	xgrow((void **)&t->vis, &t->capvis, t->nvis + 1, sizeof(*t->vis));
	t->vis[t->nvis++] = k;
	if (!n->nkids || !is_open(ui, t, n))
		return;
	for (i = 0; i < n->nkids; i++)
		push(ui, t, n->kids[i], min);
}

static void flatten(struct ui *ui, struct tree *t)
{
	const struct model_node *root;
	int64_t min;
	uint32_t i;

	t->nvis = 0;
	if (!t->t || !t->t->n)
		return;
	root = &t->t->nodes[0];
	min = (int64_t)((double)root->total * ui->batch_min_pct / 100.0);
	if (t->callers) {
		if (root->total > 0)
			push(ui, t, 0, min);
		return;
	}
	for (i = 0; i < root->nkids; i++)
		push(ui, t, root->kids[i], min);
}

static struct model_tree *build(struct ui *ui, struct tree *t, struct model *m)
{
	long fn;

	if (!t->callers)
		return model_tree_topdown(m);
	if (!t->fn)
		return NULL;
	fn = model_find_fn(m, t->fn, t->fn_len);
	return fn >= 0 ? model_tree_callers(m, (uint32_t)fn) : NULL;
}

static void members_update(struct ui *ui, struct tree *t)
{
	size_t k, i, nx = ui->nxmodel;

	if (!nx || !t->t)
		return;
	xgrow((void **)&t->xtot, &t->capxtot, t->t->n * nx, sizeof(*t->xtot));
	memset(t->xtot, 0, t->t->n * nx * sizeof(*t->xtot));
	for (k = 0; k < nx; k++) {
		struct model_tree *xt = build(ui, t, ui->xmodel[k]);
		struct hashmap idx = { 0 };

		if (!xt)
			continue;
		for (i = 0; i < xt->n; i++)
			*hashmap_put(&idx, xt->nodes[i].id, NULL) = i + 1;
		for (i = 0; i < t->t->n; i++) {
			uint64_t *j = hashmap_get(&idx, t->t->nodes[i].id);

			if (j && *j)
				t->xtot[i * nx + k] = xt->nodes[*j - 1].total;
		}
		hashmap_free(&idx);
		model_tree_free(xt);
	}
}

static void tree_update(struct ui *ui, struct view *v)
{
	struct tree *t = tree_of(v);

	model_tree_free(t->t);
	t->t = NULL;
	if (ui->model) {
		if (!t->callers) {
			t->t = model_tree_topdown(ui->model);
		} else if (t->fn) {
			long fn = model_find_fn(ui->model, t->fn, t->fn_len);

			if (fn >= 0)
				t->t = model_tree_callers(ui->model, (uint32_t)fn);
			if (!t->root_name || t->root_len != t->fn_len ||
			    memcmp(t->root_name, t->fn, t->fn_len)) {
				/* A new function: start with its direct callers shown. */
				free(t->root_name);
				t->root_name = xstrndup(t->fn, t->fn_len);
				t->root_len = t->fn_len;
				idset_clear(&t->open);
				if (t->t)
					idset_put(&t->open, t->t->nodes[0].id);
			}
		}
	}
	members_update(ui, t);
	flatten(ui, t);
}

static size_t tree_nrows(struct ui *ui, struct view *v)
{
	return tree_of(v)->nvis;
}

static uint64_t tree_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct tree *t = tree_of(v);

	return t->t->nodes[t->vis[i]].id;
}

static void tree_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct tree *t = tree_of(v);

	tl_reset(l);
	tl_field(l, UA_HEAD, "TOTAL%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "SELF%", 8, TL_RIGHT);
	if (ui->base_model && !t->callers)
		tl_field(l, UA_HEAD, ui_mem_viewed(ui) ? "   THEN  DELTA" /* of the total value */
			 : " THEN%  DELTA", 15, TL_RIGHT); /* of TOTAL%, in points */
	tl_field(l, UA_HEAD, ui_mem_viewed(ui) ? ui_mem_head(ui) : "SAMPLES", 9, TL_RIGHT);
	ui_member_title_cells(ui, l);
	tl_put(l, UA_HEAD, " ");
	if (t->callers) {
		char name[600];

		tl_put(l, UA_HEAD, "CALLERS OF ");
		if (t->fn) {
			ui_esc(ui, name, sizeof(name), t->fn, t->fn_len);
			tl_put(l, UA_MARK, name);
		}
		tl_put(l, UA_HEAD, " (bottom-up)");
	} else {
		tl_put(l, UA_HEAD, "CALL TREE (top-down)");
	}
	if (!ui->batch)
		tl_pad(l, ui->width);
}

static void tree_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct tree *t = tree_of(v);
	const struct model_node *n = &t->t->nodes[t->vis[i]];
	const struct model_fn *f = model_fn(ui->model, n->fn);
	int64_t total = t->t->nodes[0].total;
	unsigned depth = t->callers ? n->depth : n->depth - 1;
	int members_w = ui_member_cols(ui);
	unsigned maxind = ui->batch ? 200 : (unsigned)GP_MAX(ui->width - 26 - 20 - members_w, 0) / 2 / 2;
	char pct[16], name[1100];
	const char *glyph;
	int namew;

	tl_reset(l);
	ui_pct(pct, sizeof(pct), n->total, total);
	tl_field(l, ui_pct_attr(n->total, total), pct, 7, TL_RIGHT);
	if (t->callers && t->vis[i] != 0) {
		tl_field(l, UA_DIM, "", 8, 0);
	} else {
		ui_pct(pct, sizeof(pct), n->self, total);
		tl_field(l, ui_pct_attr(n->self, total), pct, 8, TL_RIGHT);
	}
	if (ui->base_model && !t->callers) {
		int64_t bt;
		int have = !ui_base_node(ui, n->id, &bt);
		char d[32];
		int a = ui_mem_viewed(ui)
				? ui_mem_growth(ui, d, sizeof(d), n->total, bt, have)
				: ui_base_delta(d, sizeof(d), n->total, total, bt, ui_base_all(ui),
						have);

		tl_field(l, a, d, 15, TL_RIGHT | (ui->batch ? TL_NOCUT : 0));
	}
	if (ui_mem_viewed(ui))
		ui_mem_value(ui, l, n->total);
	else
		tl_printf(l, UA_NORMAL, "%9llu", (unsigned long long)n->total_n);
	if (ui->nxmodel) {
		const int64_t *x = &t->xtot[(size_t)t->vis[i] * ui->nxmodel];

		ui_member_cells(ui, l, n->total, x);
	}
	tl_put(l, UA_NORMAL, " ");
	if (depth > maxind) {
		/* Deep stacks: show the depth instead of running off the screen. */
		tl_printf(l, UA_TREE, "%*s[%u]", (int)(2 * (maxind > 3 ? maxind - 3 : 0)), "", depth);
		tl_pad(l, l->cols + 1);
	} else {
		tl_pad(l, l->cols + (int)(2 * depth));
	}
	if (ui->batch) {
		/* Children under --min-pct are not printed: no "open" sign for them. */
		int64_t min = (int64_t)((double)total * ui->batch_min_pct / 100.0);
		uint32_t k, shown = 0;

		for (k = 0; k < n->nkids; k++)
			shown += t->t->nodes[n->kids[k]].total >= min;
		glyph = shown ? (tl_utf8 ? "\xe2\x96\xbe " : "- ") : (tl_utf8 ? "\xc2\xb7 " : "  ");
	} else if (!n->nkids)
		glyph = tl_utf8 ? "\xc2\xb7 " : "  ";
	else if (is_open(ui, t, n))
		glyph = tl_utf8 ? "\xe2\x96\xbe " : "- ";
	else
		glyph = tl_utf8 ? "\xe2\x96\xb8 " : "+ ";
	tl_put(l, UA_TREE, glyph);
	ui_fn_name(ui, f, name, sizeof(name));
	namew = ui->batch ? 0 : ui->width - l->cols;
	tl_field(l, ui->search[0] && memmem(f->name, f->name_len, ui->search, strlen(ui->search))
			    ? UA_MATCH : UA_NORMAL,
		 name, namew, ui->batch ? TL_NOCUT : 0);
}

static long tree_selected_fn(struct ui *ui, struct view *v)
{
	struct tree *t = tree_of(v);

	return v->sel < t->nvis ? (long)t->t->nodes[t->vis[v->sel]].fn : -1;
}

static void select_node(struct ui *ui, struct view *v, struct tree *t, uint32_t k)
{
	size_t i;

	/* Open every ancestor so the node is visible. */
	for (uint32_t p = t->t->nodes[k].parent; p != 0; p = t->t->nodes[p].parent)
		idset_put(&t->open, t->t->nodes[p].id);
	if (t->callers && k != 0)
		idset_put(&t->open, t->t->nodes[0].id);
	flatten(ui, t);
	for (i = 0; i < t->nvis; i++)
		if (t->vis[i] == k) {
			v->sel = i;
			if (v->sel < v->top || v->sel >= v->top + (size_t)GP_MAX(ui->rows, 1))
				v->top = v->sel > (size_t)ui->rows / 2 ? v->sel - (size_t)ui->rows / 2 : 0;
			break;
		}
}

/* Preorder over the whole tree (not only the visible part), for search. */
static void preorder(struct tree *t, uint32_t k, uint32_t **out, size_t *n, size_t *cap)
{
	const struct model_node *nd = &t->t->nodes[k];
	uint32_t i;

	xgrow((void **)out, cap, *n + 1, sizeof(**out));
	(*out)[(*n)++] = k;
	for (i = 0; i < nd->nkids; i++)
		preorder(t, nd->kids[i], out, n, cap);
}

static int tree_find(struct ui *ui, struct view *v, struct tree *t, int dir)
{
	uint32_t *order = NULL, cur;
	size_t n = 0, cap = 0, pos = 0, i, k;
	size_t slen = strlen(ui->search);

	if (!slen || !t->t || !t->nvis)
		return R_NONE;
	if (t->callers) {
		preorder(t, 0, &order, &n, &cap);
	} else {
		for (i = 0; i < t->t->nodes[0].nkids; i++)
			preorder(t, t->t->nodes[0].kids[i], &order, &n, &cap);
	}
	cur = t->vis[GP_MIN(v->sel, t->nvis - 1)];
	for (i = 0; i < n; i++)
		if (order[i] == cur)
			pos = i;
	for (k = 1; k <= n; k++) {
		size_t j = dir > 0 ? (pos + k) % n : (pos + n - k % n) % n;
		const struct model_fn *f = model_fn(ui->model, t->t->nodes[order[j]].fn);

		if (memmem(f->name, f->name_len, ui->search, slen)) {
			select_node(ui, v, t, order[j]);
			free(order);
			return R_REDRAW;
		}
	}
	free(order);
	{
		char e[300];

		ui_esc(ui, e, sizeof(e), ui->search, slen);
		ui_set_status(ui, UA_ERR, "no function matches \"%s\"", e);
	}
	return R_REDRAW;
}

static int tree_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct tree *t = tree_of(v);
	const struct model_node *n;
	uint32_t k;

	if (!t->t || !t->nvis)
		return R_NONE;
	if (v->sel >= t->nvis)
		v->sel = t->nvis - 1;
	k = t->vis[v->sel];
	n = &t->t->nodes[k];
	switch (a) {
	case ACT_TOGGLE:
		if (!n->nkids)
			return R_NONE;
		if (idset_has(&t->open, n->id))
			idset_del(&t->open, n->id);
		else
			idset_put(&t->open, n->id);
		break;
	case ACT_EXPAND:
		if (!n->nkids)
			return R_NONE;
		if (idset_has(&t->open, n->id)) {
			v->sel++;
			return R_REDRAW;
		}
		idset_put(&t->open, n->id);
		break;
	case ACT_COLLAPSE:
		if (n->nkids && idset_has(&t->open, n->id)) {
			idset_del(&t->open, n->id);
			break;
		}
		if (k != 0 && (n->parent != 0 || t->callers))
			select_node(ui, v, t, n->parent);
		return R_REDRAW;
	case ACT_EXPAND_HOT:
		/* Follow the heaviest child while it outweighs the node's own samples:
		 * the path ends where the time is spent. */
		while (n->nkids && t->t->nodes[n->kids[0]].total >= n->self) {
			idset_put(&t->open, n->id);
			k = n->kids[0];
			n = &t->t->nodes[k];
		}
		select_node(ui, v, t, k);
		return R_REDRAW;
	case ACT_COLLAPSE_ALL:
		idset_clear(&t->open);
		while (k != 0 && t->t->nodes[k].parent != 0)
			k = t->t->nodes[k].parent;
		if (t->callers) {
			k = 0;
			idset_put(&t->open, t->t->nodes[0].id);
		}
		flatten(ui, t);
		select_node(ui, v, t, k);
		return R_REDRAW;
	case ACT_FIND_NEXT:
		return tree_find(ui, v, t, 1);
	case ACT_FIND_PREV:
		return tree_find(ui, v, t, -1);
	default:
		return R_NONE;
	}
	flatten(ui, t);
	return R_REDRAW;
}

static const char *tree_empty(struct ui *ui, struct view *v)
{
	struct tree *t = tree_of(v);

	if (!ui->model)
		return "no samples yet";
	if (t->callers && !t->fn)
		return "select a function in Top or Tree and press c";
	if (t->callers && !t->t)
		return "the function has no samples here";
	return ui->nfilters ? "no sample passes the focus (u clears it)" : "no samples yet";
}

static void tree_free(struct view *v)
{
	struct tree *t = v->priv;

	if (!t)
		return;
	model_tree_free(t->t);
	idset_clear(&t->open);
	free(t->vis);
	free(t->xtot);
	free(t->root_name);
	free(t->fn);
	free(t);
	v->priv = NULL;
}

/* Callers: shows the callers of a function from now on. */
static void callers_open_at(struct ui *ui, struct view *v, const char *name, size_t len)
{
	struct tree *t = tree_of(v);

	free(t->fn);
	t->fn = xstrndup(name, len);
	t->fn_len = len;
	v->stale = 1;
	ui_reset_sel(v);
}

/* --callers FUNC: the function, kept in --batch. */
static int callers_option(struct ui *ui, struct view *v, const char *name, const char *value)
{
	if (strcmp(name, "callers") || !value)
		return 1;
	callers_open_at(ui, v, value, strlen(value));
	tree_of(v)->fixed = 1;
	return 0;
}

/* Callers of what? Of the selection in the view it is opened from (ui_show_view set
 * ui->back), else of the hottest function. */
static int callers_enter(struct ui *ui, struct view *v)
{
	long fn;

	if (tree_of(v)->fn)
		return R_NONE;
	fn = ui_selected_fn(ui, &ui->views[ui->back]);
	if (fn < 0)
		fn = ui_hottest_fn(ui);
	if (fn >= 0) {
		const struct model_fn *f = model_fn(ui->model, (uint32_t)fn);

		callers_open_at(ui, v, f->name, f->name_len);
	}
	return R_NONE;
}

/* --batch without --callers: the hottest function of each update. */
static void callers_batch(struct ui *ui, struct view *v, ui_section_fn *section)
{
	long fn = tree_of(v)->fixed ? -1 : ui_hottest_fn(ui);

	if (fn >= 0) {
		const struct model_fn *f = model_fn(ui->model, (uint32_t)fn);

		callers_open_at(ui, v, f->name, f->name_len);
	}
	section(ui, v, ui_view_name(v->id));
}

const struct view_ops view_tree_ops = {
	.update = tree_update,
	.nrows = tree_nrows,
	.row_id = tree_row_id,
	.title = tree_title,
	.row = tree_row,
	.action = tree_action,
	.empty = tree_empty,
	.selected_fn = tree_selected_fn,
	.free = tree_free,
};

const struct view_ops view_callers_ops = {
	.update = tree_update,
	.nrows = tree_nrows,
	.row_id = tree_row_id,
	.title = tree_title,
	.row = tree_row,
	.action = tree_action,
	.empty = tree_empty,
	.selected_fn = tree_selected_fn,
	.enter = callers_enter,
	.option = callers_option,
	.open_at = callers_open_at,
	.batch = callers_batch,
	.free = tree_free,
};
