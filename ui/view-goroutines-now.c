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

#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#define NAME_FRAMES 8
#define IDS_SHOWN 64

enum { ROW_GROUP, ROW_FRAME, ROW_IDS };

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

static void gall_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct gall *a = gall_of(v);

	tl_reset(l);
	tl_field(l, UA_HEAD, "COUNT", 7, TL_RIGHT);
	tl_put(l, UA_HEAD, "  ");
	tl_field(l, UA_HEAD, "STATE", 22, ui->batch ? TL_NOCUT : 0);
	tl_field(l, UA_HEAD, "LONGEST", 9, TL_RIGHT);
	tl_put(l, UA_HEAD, "  WHERE (all goroutines now; m: wall time)");
	if (a->reader)
		tl_printf(l, UA_DIM, "  %zu goroutines, %" PRIu64 " changed while read, %.1f ms",
			  a->res.n, a->res.st.torn, (double)a->res.st.ns / 1e6);
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

/* The innermost frame outside the runtime: where the goroutine's own code waits; for the
 * runtime's own goroutines, their start function (the frame below runtime.goexit). */
static const struct sym_frame *where(struct ui *ui, struct gall *a, const struct gosnap_g *g)
{
	const struct sym_frame *last = NULL;

	for (uint32_t f = 0; f < g->nframes; f++) {
		const struct named *nm = name_pc(ui, a, a->kept.pcs[g->frame0 + f]);
		uint32_t hide = hidden(a, nm, g->frame0 + f);

		for (int k = 0; k < nm->n; k++) {
			if (hide >> k & 1)
				continue;
			if (strncmp(nm->f[k].func, "runtime.", 8) != 0)
				return &nm->f[k];
			last = &nm->f[k];
		}
	}
	return last;
}

static void gall_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct gall *a = gall_of(v);
	const struct grow *r = &a->rows[i];
	const struct gosnap_group *gr = &a->groups[r->group];
	const struct gosnap_g *g = &a->kept.g[gr->first];
	char buf[512];

	tl_reset(l);
	if (r->kind == ROW_GROUP) {
		const struct sym_frame *w = where(ui, a, g);
		int open = is_open(a, r->group);

		tl_printf(l, UA_NORMAL, "%7zu  ", gr->count);
		tl_field(l, g->state == GOSNAP_RUNNING ? UA_HOT : UA_STATE, gosnap_state_text(g), 22,
			 ui->batch ? TL_NOCUT : 0);
		wait_text(buf, sizeof(buf), gr->max_wait);
		tl_field(l, UA_DIM, buf, 9, TL_RIGHT);
		tl_put(l, UA_TREE, open ? "  - " : "  + ");
		if (g->flags & GOSNAP_NO_STACK)
			tl_put(l, UA_DIM, "(running on a thread: stack not read)");
		else if (w)
			tl_untrusted(l, UA_NORMAL, w->func, strlen(w->func), 0, TL_NOCUT);
		if (g->labels && g->labels->n) {
			tl_put(l, UA_DIM, "  {");
			for (uint32_t k = 0; k < g->labels->n; k++) {
				const struct gort_label *p = &g->labels->pairs[k];

				tl_put(l, UA_DIM, k ? ", " : "");
				tl_untrusted(l, UA_DIM, p->key, p->klen, 0, TL_NOCUT);
				tl_put(l, UA_DIM, "=");
				tl_untrusted(l, UA_DIM, p->value, p->vlen, 0, TL_NOCUT);
			}
			tl_put(l, UA_DIM, gr->count > 1 ? "} (first's)" : "}");
		}
	} else if (r->kind == ROW_FRAME) {
		const struct named *nm = name_pc(ui, a, a->kept.pcs[g->frame0 + r->frame]);

		tl_put(l, UA_NORMAL, "                                          ");
		if (!nm->n) {
			tl_printf(l, UA_DIM, "%#" PRIx64, a->kept.pcs[g->frame0 + r->frame]);
			return;
		}
		tl_untrusted(l, UA_NORMAL, nm->f[r->inl].func, strlen(nm->f[r->inl].func), 0,
			     TL_NOCUT);
		if (nm->f[r->inl].file) {
			const char *f = strrchr(nm->f[r->inl].file, '/');

			f = f ? f + 1 : nm->f[r->inl].file;
			snprintf(buf, sizeof(buf), "  %s:%d", f, nm->f[r->inl].line);
			tl_untrusted(l, UA_DIM, buf, strlen(buf), 0, TL_NOCUT);
		}
	} else {
		size_t shown = 0, k;

		tl_put(l, UA_NORMAL, "                                          ");
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

static int gall_action(struct ui *ui, struct view *v, enum ui_action act)
{
	struct gall *a = gall_of(v);
	int created;
	uint64_t *slot;

	(void)ui;
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
	.action = gall_action, .empty = gall_empty, .free = gall_free,
};
