/* view-flame.c: the Flame view: an icicle graph of the top-down call tree (root at the
 * top), one text row per depth, each frame a box as wide as its total share of the zoomed
 * frame. Selection and zoom are kept by path identity (model_node.id), so a live refresh
 * redraws the graph without moving away from the selected frame. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/fname.h"
#include "gotop/util.h"

#define ZOOM_MAX 64

struct fbox {
	uint32_t node;
	int x0, x1;              /* columns [x0, x1) */
};

struct flame {
	struct model_tree *t;
	uint64_t zoom[ZOOM_MAX]; /* ids of the zoomed frames, outermost first */
	size_t nzoom;
	uint64_t sel_id;         /* the selected frame's id (0: the zoomed frame) */
	uint32_t root, sel;      /* node indexes of the zoomed and the selected frame */
	struct fbox *box;        /* every level's boxes, left to right */
	size_t nbox, capbox;
	size_t *lvl;             /* level k: box[lvl[k]] up to box[lvl[k + 1]] */
	size_t nlvl, caplvl;
	uint32_t *kids;          /* scratch: one node's children in name order */
	size_t capkids;
	int width;
};

static struct flame *flame_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct flame));
	return v->priv;
}

static long node_by_id(const struct model_tree *t, uint64_t id)
{
	size_t i;

	for (i = 0; t && i < t->n; i++)
		if (t->nodes[i].id == id)
			return (long)i;
	return -1;
}

static int name_cmp(const void *pa, const void *pb, void *arg)
{
	struct ui *ui = arg;
	const struct model_tree *t = ((struct flame *)ui->views[VIEW_FLAME].priv)->t;
	const struct model_fn *a = model_fn(ui->model, t->nodes[*(const uint32_t *)pa].fn);
	const struct model_fn *b = model_fn(ui->model, t->nodes[*(const uint32_t *)pb].fn);
	size_t l = GP_MIN(a->name_len, b->name_len);
	int c = memcmp(a->name, b->name, l);

	return c ? c : (a->name_len > b->name_len) - (a->name_len < b->name_len);
}

static void add_box(struct flame *f, uint32_t node, int x0, int x1)
{
	xgrow((void **)&f->box, &f->capbox, f->nbox + 1, sizeof(*f->box));
	f->box[f->nbox].node = node;
	f->box[f->nbox].x0 = x0;
	f->box[f->nbox].x1 = x1;
	f->nbox++;
}

/* Lays the tree below the zoomed frame out in f->width columns. A frame at value offset
 * off (from the left edge, in the profile's unit) with total v spans the columns
 * [off * W / T, (off + v) * W / T): each box is its share of the width to within one
 * column, and the boxes of a level never overlap. Children go in name order, as in
 * flamegraph.pl, so a live refresh does not reorder them; a frame's self time is the
 * blank under it, on the right. Boxes narrower than a column are left out. */
static void layout(struct ui *ui, struct flame *f)
{
	const struct model_node *nd = f->t->nodes;
	int64_t total = nd[f->root].total, *off = NULL;
	size_t cap = 0, start, end, b, k;

	f->nbox = f->nlvl = 0;
	xgrow((void **)&f->lvl, &f->caplvl, 2, sizeof(*f->lvl));
	f->lvl[0] = 0;
	if (total <= 0)
		return;
	add_box(f, f->root, 0, f->width);
	xgrow((void **)&off, &cap, 1, sizeof(*off));
	off[0] = 0;
	f->nlvl = 1;
	f->lvl[1] = 1;
	for (start = 0, end = 1; start < end; start = end, end = f->nbox) {
		for (b = start; b < end; b++) {
			const struct model_node *p = &nd[f->box[b].node];
			int64_t o = off[b];

			xgrow((void **)&f->kids, &f->capkids, p->nkids + 1, sizeof(*f->kids));
			memcpy(f->kids, p->kids, p->nkids * sizeof(*f->kids));
			qsort_r(f->kids, p->nkids, sizeof(*f->kids), name_cmp, ui);
			for (k = 0; k < p->nkids; k++) {
				const struct model_node *c = &nd[f->kids[k]];
				int x0 = (int)((__int128)o * f->width / total);
				int x1 = (int)((__int128)(o + c->total) * f->width / total);

				if (x1 > x0 && c->total > 0) {
					add_box(f, f->kids[k], x0, x1);
					xgrow((void **)&off, &cap, f->nbox, sizeof(*off));
					off[f->nbox - 1] = o;
				}
				o += c->total;
			}
		}
		if (f->nbox > end) {
			xgrow((void **)&f->lvl, &f->caplvl, f->nlvl + 2, sizeof(*f->lvl));
			f->lvl[++f->nlvl] = f->nbox;
		}
	}
	free(off);
}

/* The level and box of node k, or -1. */
static long box_of(const struct flame *f, uint32_t k, size_t *level)
{
	size_t l, b;

	for (l = 0; l < f->nlvl; l++)
		for (b = f->lvl[l]; b < f->lvl[l + 1]; b++)
			if (f->box[b].node == k) {
				if (level)
					*level = l;
				return (long)b;
			}
	return -1;
}

static void flame_update(struct ui *ui, struct view *v)
{
	struct flame *f = flame_of(v);
	size_t lvl;
	long k;

	model_tree_free(f->t);
	f->t = ui->model ? model_tree_topdown(ui->model) : NULL;
	f->nbox = f->nlvl = 0;
	f->width = GP_MAX(ui->width, 10);
	if (!f->t || !f->t->n)
		return;
	/* The zoom stays on the same path; a frame gone from the profile ends it there. */
	f->root = 0;
	while (f->nzoom && (k = node_by_id(f->t, f->zoom[f->nzoom - 1])) < 0)
		f->nzoom--;
	if (f->nzoom)
		f->root = (uint32_t)node_by_id(f->t, f->zoom[f->nzoom - 1]);
	layout(ui, f);
	/* A selected frame grown too narrow for a column hands the selection to its nearest
	 * ancestor that has a box; one gone from the profile, to the zoomed frame. */
	k = f->sel_id ? node_by_id(f->t, f->sel_id) : -1;
	while (k > 0 && (uint32_t)k != f->root && box_of(f, (uint32_t)k, &lvl) < 0)
		k = f->t->nodes[k].parent;
	if (k < 0 || box_of(f, (uint32_t)k, &lvl) < 0) {
		k = f->root;
		lvl = 0;
	}
	f->sel = (uint32_t)k;
	f->sel_id = f->t->nodes[k].id;
	v->sel = lvl;
}

static size_t flame_nrows(struct ui *ui, struct view *v)
{
	return flame_of(v)->nlvl;
}

static void share(char *buf, size_t n, int64_t part, int64_t total)
{
	char p[16];

	ui_pct(p, sizeof(p), part, total);
	snprintf(buf, n, "%s", p[0] == ' ' ? p + strspn(p, " ") : p);
}

/* The title line: the selected frame's full name and shares (of everything shown, and
 * of the zoomed frame), and the zoom. */
static void flame_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct flame *f = flame_of(v);
	const struct model_node *n;
	char name[1100], a[16], b[16], c[16];
	int names = ui->names;

	tl_reset(l);
	tl_put(l, UA_HEAD, "FLAME GRAPH ");
	if (!f->t || !f->nlvl) {
		tl_pad(l, ui->batch ? 0 : ui->width);
		return;
	}
	n = &f->t->nodes[f->sel];
	share(a, sizeof(a), n->total, f->t->nodes[0].total);
	share(b, sizeof(b), n->self, f->t->nodes[0].total);
	share(c, sizeof(c), n->total, f->t->nodes[f->root].total);
	if (f->sel == 0) {
		snprintf(name, sizeof(name), "all");
	} else {
		ui->names = UI_NAMES_FULL; /* the box may cut it: here it is whole */
		ui_fn_name(ui, model_fn(ui->model, n->fn), name, sizeof(name));
		ui->names = names;
	}
	tl_put(l, UA_MARK, name);
	tl_printf(l, UA_HEAD, "  total %s  self %s", a, b);
	if (ui->base_model) {
		int64_t bt;
		int have = !ui_base_node(ui, n->id, &bt);
		char d[32];
		int at = ui_base_delta(d, sizeof(d), n->total, f->t->nodes[0].total, bt, ui_base_all(ui),
				       have);

		tl_put(l, UA_HEAD, "  then/delta ");
		tl_put(l, at, d + strspn(d, " "));
	}
	if (f->root) {
		char z[600];

		ui_fn_name(ui, model_fn(ui->model, f->t->nodes[f->root].fn), z, sizeof(z));
		tl_printf(l, UA_HEAD, "  (%s of the zoomed %s)", c, z);
	}
	if (!ui->batch)
		tl_pad(l, ui->width);
}

/* A colour per package: the name up to the first '.' after its last '/' (Go), or to
 * its first "::" (C++), so that a package's frames look alike. */
static int pkg_attr(const struct model_fn *fn)
{
	static const int attrs[] = { UA_FL0, UA_FL1, UA_FL2, UA_FL3 };
	const char *s = fn->name, *e = s + fn->name_len, *slash = s, *p;

	for (p = s; p < e && *p != '(' && *p != '['; p++)
		if (*p == '/')
			slash = p + 1;
	for (p = slash; p < e && *p != '.' && *p != ':' && *p != '('; p++)
		;
	return attrs[util_hash(s, (size_t)(p - s), 0x666c616d65ULL) % 4];
}

static int is_match(struct ui *ui, const struct model_fn *fn)
{
	return ui->search[0] && memmem(fn->name, fn->name_len, ui->search, strlen(ui->search));
}

/* A box: '[' the name, fitted (short form when the chosen one does not fit, then cut),
 * ']'; one column is '|', two are "[]". */
static void draw_box(struct ui *ui, struct flame *f, const struct fbox *bx, struct tline *l)
{
	const struct model_node *n = &f->t->nodes[bx->node];
	const struct model_fn *fn = bx->node ? model_fn(ui->model, n->fn) : NULL;
	int w = bx->x1 - bx->x0, attr;
	char name[1100];

	attr = bx->node == f->sel ? UA_FL_SEL : fn && is_match(ui, fn) ? UA_MATCH
			: fn ? pkg_attr(fn) : UA_FL0;
	tl_pad(l, bx->x0);
	if (w == 1) {
		tl_put(l, attr, "|");
		return;
	}
	if (!fn) {
		snprintf(name, sizeof(name), "all");
	} else {
		ui_fn_name(ui, fn, name, sizeof(name));
		if (tl_width(name) > w - 2 && ui->names != UI_NAMES_FULL) {
			int names = ui->names;

			ui->names = UI_NAMES_SHORT;
			ui_fn_name(ui, fn, name, sizeof(name));
			ui->names = names;
		}
	}
	tl_put(l, attr, "[");
	tl_field(l, attr, name, w - 2, 0);
	tl_put(l, attr, "]");
}

static void flame_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct flame *f = flame_of(v);
	size_t b;

	tl_reset(l);
	if (i >= f->nlvl)
		return;
	for (b = f->lvl[i]; b < f->lvl[i + 1]; b++)
		draw_box(ui, f, &f->box[b], l);
	tl_pad(l, ui->batch ? 0 : ui->width);
}

static long flame_selected_fn(struct ui *ui, struct view *v)
{
	struct flame *f = flame_of(v);

	return f->t && f->sel ? (long)f->t->nodes[f->sel].fn : -1;
}

static void select_box(struct view *v, struct flame *f, size_t b, size_t level)
{
	f->sel = f->box[b].node;
	f->sel_id = f->t->nodes[f->sel].id;
	v->sel = level;
	v->moved = 1;
}

/* The next (dir > 0) or previous match of the search in reading order. */
static int flame_find(struct ui *ui, struct view *v, struct flame *f, int dir)
{
	size_t lvl, n = f->nbox, k;
	long cur = box_of(f, f->sel, NULL);

	if (!ui->search[0] || !n)
		return R_NONE;
	for (k = 1; k <= n; k++) {
		size_t b = dir > 0 ? ((size_t)cur + k) % n : ((size_t)cur + n - k % n) % n;

		if (f->box[b].node && is_match(ui, model_fn(ui->model, f->t->nodes[f->box[b].node].fn))) {
			for (lvl = 0; lvl + 1 < f->nlvl && f->lvl[lvl + 1] <= b; lvl++)
				;
			select_box(v, f, b, lvl);
			return R_REDRAW;
		}
	}
	ui_set_status(ui, UA_ERR, "no frame matches");
	return R_REDRAW;
}

static int flame_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct flame *f = flame_of(v);
	size_t lvl = 0, b2;
	long b;

	if (!f->t || !f->nlvl)
		return R_NONE;
	b = box_of(f, f->sel, &lvl);
	if (b < 0)
		return R_NONE;
	switch (a) {
	case ACT_FRAME_PREV:
	case ACT_FRAME_NEXT:
		/* Along the level, across parents. */
		if (a == ACT_FRAME_PREV && (size_t)b > f->lvl[lvl])
			select_box(v, f, (size_t)b - 1, lvl);
		else if (a == ACT_FRAME_NEXT && (size_t)b + 1 < f->lvl[lvl + 1])
			select_box(v, f, (size_t)b + 1, lvl);
		return R_REDRAW;
	case ACT_FRAME_UP:
		if (lvl == 0)
			return R_REDRAW;
		/* The box above that covers this one's first column: its parent. */
		for (b2 = f->lvl[lvl - 1]; b2 < f->lvl[lvl]; b2++)
			if (f->box[b2].node == f->t->nodes[f->sel].parent)
				select_box(v, f, b2, lvl - 1);
		return R_REDRAW;
	case ACT_FRAME_DOWN: {
		/* The widest child. */
		long best = -1;

		if (lvl + 1 >= f->nlvl)
			return R_REDRAW;
		for (b2 = f->lvl[lvl + 1]; b2 < f->lvl[lvl + 2]; b2++)
			if (f->t->nodes[f->box[b2].node].parent == f->sel &&
			    (best < 0 || f->t->nodes[f->box[b2].node].total >
						 f->t->nodes[f->box[best].node].total))
				best = (long)b2;
		if (best >= 0)
			select_box(v, f, (size_t)best, lvl + 1);
		return R_REDRAW;
	}
	case ACT_ZOOM:
		if (f->sel == f->root || f->nzoom == ZOOM_MAX)
			return R_REDRAW;
		f->zoom[f->nzoom++] = f->sel_id;
		v->moved = 1;
		return R_UPDATE | R_REDRAW;
	case ACT_ZOOM_OUT:
		if (!f->nzoom) {
			ui_set_status(ui, UA_NORMAL, "not zoomed (Enter zooms into the selected frame)");
			return R_REDRAW;
		}
		f->nzoom--;
		v->moved = 1;
		return R_UPDATE | R_REDRAW;
	case ACT_FIND_NEXT:
		return flame_find(ui, v, f, 1);
	case ACT_FIND_PREV:
		return flame_find(ui, v, f, -1);
	default:
		return R_NONE;
	}
}

static const char *flame_empty(struct ui *ui, struct view *v)
{
	if (!ui->model)
		return "no samples yet";
	return ui->nfilters ? "no sample passes the focus (u clears it)" : "no samples yet";
}

static void flame_free(struct view *v)
{
	struct flame *f = v->priv;

	if (!f)
		return;
	model_tree_free(f->t);
	free(f->box);
	free(f->lvl);
	free(f->kids);
	free(f);
	v->priv = NULL;
}

const struct view_ops view_flame_ops = {
	.update = flame_update,
	.nrows = flame_nrows,
	.title = flame_title,
	.row = flame_row,
	.action = flame_action,
	.empty = flame_empty,
	.selected_fn = flame_selected_fn,
	.free = flame_free,
	.cell_select = 1,
};
