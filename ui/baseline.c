/* baseline.c: the baseline (B, --base): a profile the views compare with (THEN% and
 * DELTA), its model under the same focus filters, and per function and tree node what
 * it held, looked up again only when the filters change. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

static void base_lookups_free(struct ui *ui)
{
	free(ui->base_self);
	free(ui->base_total);
	ui->base_self = ui->base_total = NULL;
	ui->base_nfn = 0;
	hashmap_free(&ui->base_nodes);
	ui->base_sig = 0;
}

/* The baseline's flat profile and tree under the current filters, once per filter set. */
static void base_update(struct ui *ui)
{
	struct model_filter f[UI_MAX_FILTERS];
	struct model_flat *rows;
	size_t n, i;
	uint64_t sig = ui_filters_sig(ui);

	if (!ui->base_model || ui->base_sig == sig)
		return;
	base_lookups_free(ui);
	model_set_filters(ui->base_model, f, ui_model_filters(ui, f));
	n = model_flat(ui->base_model, &rows);
	ui->base_nfn = model_nfuncs(ui->base_model);
	ui->base_self = xcalloc(ui->base_nfn + 1, sizeof(*ui->base_self));
	ui->base_total = xcalloc(ui->base_nfn + 1, sizeof(*ui->base_total));
	for (i = 0; i < n; i++)
		if (rows[i].fn < ui->base_nfn) {
			ui->base_self[rows[i].fn] += rows[i].self;
			if (rows[i].total > ui->base_total[rows[i].fn])
				ui->base_total[rows[i].fn] = rows[i].total;
		}
	free(rows);
	model_totals(ui->base_model, &ui->base_tot);
	{
		struct model_tree *t = model_tree_topdown(ui->base_model);

		/* Node ids are path hashes: the same path has the same id in both trees. */
		for (i = 0; t && i < t->n; i++)
			*hashmap_put(&ui->base_nodes, t->nodes[i].id, NULL) = (uint64_t)t->nodes[i].total + 1;
		model_tree_free(t);
	}
	ui->base_sig = sig;
}

void ui_base_set(struct ui *ui, struct prof *p, const char *what)
{
	size_t i;

	base_lookups_free(ui);
	model_free(ui->base_model);
	prof_free(ui->base_prof);
	ui->base_model = NULL;
	ui->base_prof = p;
	ui->base_what[0] = 0;
	if (p) {
		ui->base_model = model_new(p, 0);
		ui_escape(ui->base_what, sizeof(ui->base_what), what, strlen(what));
		base_update(ui);
	}
	for (i = 0; i < VIEW_COUNT; i++)
		ui->views[i].stale = 1;
}

int ui_base_fn(struct ui *ui, const struct model_fn *f, int64_t *self, int64_t *total)
{
	long k;

	*self = *total = 0;
	if (!ui->base_model)
		return -1;
	base_update(ui);
	k = model_find_fn(ui->base_model, f->name, f->name_len);
	if (k < 0 || (size_t)k >= ui->base_nfn)
		return -1;
	*self = ui->base_self[k];
	*total = ui->base_total[k];
	return 0;
}

int ui_base_node(struct ui *ui, uint64_t id, int64_t *total)
{
	uint64_t *v;

	*total = 0;
	if (!ui->base_model)
		return -1;
	base_update(ui);
	v = hashmap_get(&ui->base_nodes, id);
	if (!v || !*v)
		return -1;
	*total = (int64_t)(*v - 1);
	return 0;
}

int64_t ui_base_all(struct ui *ui)
{
	if (!ui->base_model)
		return 0;
	base_update(ui);
	return ui->base_tot.value;
}

int ui_base_delta(char *buf, size_t n, int64_t now, int64_t now_all, int64_t then, int64_t then_all,
		  int have)
{
	double a = now_all > 0 ? 100.0 * (double)now / (double)now_all : 0;
	double b = then_all > 0 && have ? 100.0 * (double)then / (double)then_all : 0;
	double d = a - b;

	if (!have)
		snprintf(buf, n, "%7s %6s", "new", "");
	else
		snprintf(buf, n, "%6.1f%% %+6.1f", b, d);
	buf[GP_MIN(n - 1, (size_t)14)] = 0;
	return !have || d >= 1.0 ? UA_HOT : d <= -1.0 ? UA_OK : UA_DIM;
}
