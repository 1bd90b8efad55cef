/* view-verify.c: the Verifier view: how often frame-pointer stacks are wrong, per leaf
 * function, raw and after repair, against libunwind; the functions least to be trusted first.
 * V switches the verifier on and off. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"
#include "gotop/verify.h"

/* Lines above the function rows: totals, stop times, a blank line. */
#define SUMMARY_ROWS 3

struct vview {
	struct verify_report rep;
	int have;
};

static struct vview *vv_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct vview));
	return v->priv;
}

static void verify_update(struct ui *ui, struct view *v)
{
	struct vview *w = vv_of(v);

	verify_report_free(&w->rep);
	w->have = 0;
	if (!ui->verifier)
		return;
	verifier_report(ui->verifier, &w->rep);
	w->have = 1;
}

static size_t verify_nrows(struct ui *ui, struct view *v)
{
	struct vview *w = vv_of(v);

	if (!w->have || (!w->rep.comparisons && !w->rep.error))
		return 0;
	return SUMMARY_ROWS + w->rep.nrows;
}

static uint64_t verify_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct vview *w = vv_of(v);

	if (i < SUMMARY_ROWS)
		return i + 1;
	return util_hash(w->rep.rows[i - SUMMARY_ROWS].func, strlen(w->rep.rows[i - SUMMARY_ROWS].func), 7);
}

static void verify_title(struct ui *ui, struct view *v, struct tline *l)
{
	tl_reset(l);
	tl_field(l, UA_HEAD, "FUNCTION (leaf)", 36, 0);
	tl_field(l, UA_HEAD, "N", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "RAW FP", 9, TL_RIGHT);
	tl_field(l, UA_HEAD, "REPAIRED", 9, TL_RIGHT);
	tl_put(l, UA_HEAD, "  MOST COMMON WRONG SHAPE");
	if (!ui->batch)
		tl_pad(l, ui->width);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static int wrong_attr(uint64_t wrong, uint64_t n)
{
	double p = pct(wrong, n);

	return p >= 20 ? UA_ERR : p > 1 ? UA_WARM : UA_OK;
}

static void verify_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct vview *w = vv_of(v);
	const struct verify_report *r = &w->rep;
	char buf[32];

	tl_reset(l);
	if (i == 0) {
		tl_printf(l, UA_NORMAL, "%s%llu comparisons: FP stacks wrong ",
			  verifier_running(ui->verifier) ? "" : "(off) ", (unsigned long long)r->comparisons);
		tl_printf(l, wrong_attr(r->raw_wrong, r->comparisons), "%.1f%% raw", pct(r->raw_wrong, r->comparisons));
		tl_put(l, UA_NORMAL, ", ");
		tl_printf(l, wrong_attr(r->rep_wrong, r->comparisons), "%.1f%% after repair",
			  pct(r->rep_wrong, r->comparisons));
		if (r->cross) {
			tl_printf(l, UA_NORMAL, "; past a stack switch %llu: ", (unsigned long long)r->cross);
			tl_printf(l, wrong_attr(r->cross_rep_wrong, r->cross), "%.1f%% after repair",
				  pct(r->cross_rep_wrong, r->cross));
		}
		if (r->error)
			tl_printf(l, UA_ERR, "  stopped: %s", r->why);
		return;
	}
	if (i == 1) {
		tl_printf(l, UA_DIM, "thread stops %llu: p50 %.0f us, p99 %.0f us, max %.0f us; target stopped %.3f%% of the time",
			  (unsigned long long)r->stops, (double)r->stop_p50_ns / 1e3, (double)r->stop_p99_ns / 1e3,
			  (double)r->stop_max_ns / 1e3, pct(r->stop_total_ns, r->wall_ns));
		return;
	}
	if (i == 2)
		return;
	{
		const struct verify_row *row = &r->rows[i - SUMMARY_ROWS];

		/* names were escaped when the verifier made them */
		tl_field(l, UA_NORMAL, row->func, 36, 0);
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)row->n);
		tl_field(l, UA_NORMAL, buf, 7, TL_RIGHT);
		snprintf(buf, sizeof(buf), "%.1f%%", pct(row->raw_wrong, row->n));
		tl_field(l, wrong_attr(row->raw_wrong, row->n), buf, 9, TL_RIGHT);
		snprintf(buf, sizeof(buf), "%.1f%%", pct(row->rep_wrong, row->n));
		tl_field(l, wrong_attr(row->rep_wrong, row->n), buf, 9, TL_RIGHT);
		tl_put(l, UA_NORMAL, "  ");
		if (row->raw_shape[0])
			tl_printf(l, UA_DIM, "raw: %s (%llu)", row->raw_shape, (unsigned long long)row->raw_shape_n);
		if (row->rep_shape[0])
			tl_printf(l, UA_WARM, "  repaired: %s (%llu)", row->rep_shape,
				  (unsigned long long)row->rep_shape_n);
	}
}

/* V in the view switches the verifier on and off. */
static int verify_action(struct ui *ui, struct view *v, enum ui_action a)
{
	return a == ACT_TOGGLE ? ui_verifier_switch(ui) : R_NONE;
}

/* V shows the view and starts the verifier. */
static int verify_enter(struct ui *ui, struct view *v)
{
	int r = ui->verifier && verifier_running(ui->verifier) ? R_NONE : ui_verifier_switch(ui);

	v->stale = 1;
	return r;
}

/* --verify: started with the session. */
static int verify_option(struct ui *ui, struct view *v, const char *name, const char *value)
{
	if (strcmp(name, "verify"))
		return 1;
	ui_verifier_switch(ui);
	return 0;
}

static const char *verify_empty(struct ui *ui, struct view *v)
{
	struct vview *w = vv_of(v);

	if (!ui->verifier)
		return "The verifier is off. V starts it: it stops one running thread at a time (ptrace, "
		       "tens of microseconds, under 1% of the time), unwinds it fully with libunwind and "
		       "compares the frame-pointer stack, raw and repaired.";
	if (w->have && w->rep.error)
		return w->rep.why;
	return "Waiting for a thread running user code...";
}

static void verify_free(struct view *v)
{
	struct vview *w = v->priv;

	if (w)
		verify_report_free(&w->rep);
	free(w);
	v->priv = NULL;
}

const struct view_ops view_verify_ops = {
	.update = verify_update,
	.nrows = verify_nrows,
	.row_id = verify_row_id,
	.title = verify_title,
	.row = verify_row,
	.action = verify_action,
	.empty = verify_empty,
	.enter = verify_enter,
	.option = verify_option,
	.free = verify_free,
};
