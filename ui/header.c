/* header.c: the lines above the view: the target, its state and run time; the event, its
 * rate and what gotop-perf sees and costs (or, in `view`, the files and the sample type);
 * the data shown: cumulative or a window, what was forgotten, the focus, the baseline
 * and the search. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

#include "gotop/goprof.h"
#include "gotop/util.h"

static void fmt_elapsed(char *buf, size_t n, uint64_t ns)
{
	uint64_t s = ns / 1000000000ULL;

	snprintf(buf, n, "%llu:%02llu:%02llu", (unsigned long long)(s / 3600),
		 (unsigned long long)(s / 60 % 60), (unsigned long long)(s % 60));
}

/* The header's second line: the event and what gotop-perf sees and costs. In a narrow
 * terminal the fields that say least are left out, so that the memory figure (what the
 * limit counts, against the limit) always shows: lost while it is 0, then threads, then
 * samples/s, then gotop-perf's CPU. --batch prints them all. */
static void head_line2(struct ui *ui, struct tline *l2, const struct live_snapshot *s,
		       const char *rate)
{
	enum { F_SPS, F_LOST, F_DROPPED, F_THREADS, F_CPU, F_MEM, NF };
	/* Which field goes first, second, ... when the line is too wide. */
	static const int drop_order[] = { F_LOST, F_THREADS, F_SPS, F_CPU };
	char f[NF][96];
	int attr[NF], on[NF], w, k, i;
	size_t anon = (s->mem.anon + (1 << 19)) >> 20;

	snprintf(f[F_SPS], sizeof(f[F_SPS]), "%.0f samples/s  ", s->samples_per_s);
	attr[F_SPS] = UA_NORMAL;
	snprintf(f[F_LOST], sizeof(f[F_LOST]), "lost %llu  ", (unsigned long long)s->lost);
	attr[F_LOST] = s->lost ? UA_ERR : UA_NORMAL;
	snprintf(f[F_DROPPED], sizeof(f[F_DROPPED]), "labels dropped %llu  ",
		 (unsigned long long)s->ast.labels_dropped);
	attr[F_DROPPED] = UA_ERR;
	snprintf(f[F_THREADS], sizeof(f[F_THREADS]), "threads %u  ", s->sst.threads);
	attr[F_THREADS] = UA_NORMAL;
	snprintf(f[F_CPU], sizeof(f[F_CPU]), "gotop-perf CPU %.1f%%  ", s->self_cpu_pct);
	attr[F_CPU] = UA_NORMAL;
	/* The memory the limit counts (anonymous), against the limit. */
	if (s->max_mem)
		snprintf(f[F_MEM], sizeof(f[F_MEM]), "mem %zu/%zu MB", anon, s->max_mem >> 20);
	else
		snprintf(f[F_MEM], sizeof(f[F_MEM]), "mem %zu MB", anon);
	attr[F_MEM] = s->shed_entries ? UA_ERR : UA_NORMAL;
	w = (int)strlen(s->event) + 1 + (int)strlen(rate) + 2;
	if (strcmp(ui_viewed_event(ui), s->event))
		w += 10 + (int)strlen(ui_viewed_event(ui));
	for (k = 0; k < NF; k++) {
		on[k] = k != F_DROPPED || s->ast.labels_dropped;
		if (on[k])
			w += (int)strlen(f[k]);
	}
	for (i = 0; !ui->batch && w > ui->width && i < (int)GP_ARRAY_SIZE(drop_order); i++) {
		k = drop_order[i];
		if (k == F_LOST && s->lost)
			continue;
		on[k] = 0;
		w -= (int)strlen(f[k]);
	}
	tl_put(l2, UA_HEAD, s->event);
	tl_printf(l2, UA_NORMAL, " %s  ", rate);
	for (k = 0; k < NF; k++)
		if (on[k])
			tl_put(l2, attr[k], f[k]);
	if (strcmp(ui_viewed_event(ui), s->event))
		tl_printf(l2, UA_MARK, "  viewing %s", ui_viewed_event(ui));
}

/* Bytes in the units people read heaps in. */
static void fmt_bytes(char *buf, size_t n, double b)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	size_t u = 0;

	while (b >= 1024 && u + 1 < GP_ARRAY_SIZE(unit)) {
		b /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, unit[u]);
}

/* The header's second line while a sample type of the heap profile is viewed: the heap
 * in use (the profile's estimate), GC cycles a second, how old the data is. */
static void mem_line2(struct ui *ui, struct tline *l2, const struct live_snapshot *s)
{
	const struct live_mem *m = &s->memory;
	uint64_t now = util_now_ns();
	char b[32];

	tl_put(l2, UA_HEAD, ui_viewed_event(ui));
	fmt_bytes(b, sizeof(b), (double)m->inuse_bytes);
	tl_printf(l2, UA_NORMAL, "  heap in use %s", b);
	if (m->gc_per_s >= 0)
		tl_printf(l2, UA_NORMAL, "  GC %.2f/s", m->gc_per_s);
	tl_printf(l2, UA_NORMAL, "  data %.0fs old",
		  m->cycle_ns && now > m->cycle_ns ? (double)(now - m->cycle_ns) / 1e9 : 0.0);
	if (m->err)
		tl_printf(l2, UA_ERR, "  %s", m->why);
	if (m->dropped)
		tl_printf(l2, UA_ERR, "  %llu buckets dropped", (unsigned long long)m->dropped);
	tl_put(l2, UA_DIM, "  [ ] sample types");
}

/* `view`'s header: the files, and the sample type shown with its total. */
static void files_header(struct ui *ui, struct tline *l1, struct tline *l2)
{
	const struct prof_value_type *t;
	const struct prof *p = ui->ev ? ui->ev->prof : NULL;
	size_t nt = p ? prof_sample_types(p, &t) : 0;
	char buf[1024];

	tl_put(l1, UA_TITLE, "gotop-perf ");
	tl_put(l1, UA_HEAD, "view ");
	ui_escape(buf, sizeof(buf), ui->files, strlen(ui->files));
	tl_field(l1, UA_NORMAL, buf, ui->batch ? 0 : GP_MAX(ui->width - l1->cols, 0),
		 ui->batch ? TL_NOCUT : 0);
	if (!p || !nt)
		return;
	ui_escape(buf, sizeof(buf), ui_viewed_event(ui), strlen(ui_viewed_event(ui)));
	tl_put(l2, UA_HEAD, buf);
	{
		const char *unit = prof_string(p, t[nt - 1].unit, NULL);

		ui_escape(buf, sizeof(buf), unit ? unit : "", unit ? strlen(unit) : 0);
		tl_printf(l2, UA_NORMAL, " (%s)  total %lld", buf,
			  (long long)prof_total(p, nt - 1));
	}
	if (ui->snap->nevents > 1)
		tl_printf(l2, UA_DIM, "  %zu sample types: [ ] switch", ui->snap->nevents);
}

void ui_header(struct ui *ui, struct tline *l1, struct tline *l2)
{
	const struct live_snapshot *s = ui->snap;
	char state[96], el[32], rate[64];
	int w;

	tl_reset(l1);
	tl_reset(l2);
	if (!s)
		return;
	if (ui->files) {
		files_header(ui, l1, l2);
		return;
	}
	fmt_elapsed(el, sizeof(el), s->elapsed_ns);
	if (s->exited) {
		if (ui->target_status >= 0)
			snprintf(state, sizeof(state), "target exited (status %d)", ui->target_status);
		else
			snprintf(state, sizeof(state), "target exited");
	} else {
		snprintf(state, sizeof(state), "%s", s->paused ? "paused" : "running");
	}
	tl_put(l1, UA_TITLE, "gotop-perf ");
	tl_printf(l1, UA_HEAD, "PID %d ", (int)s->pid);
	/* cmdline and comm are escaped by procinfo already. */
	{
		char cmd[512];
		int room = ui->width - l1->cols - (int)strlen(state) - (int)strlen(el) - 4 -
			   (s->go_version ? (int)strlen(s->go_version) + 1 : 0);

		/* procinfo escaped control characters; this also handles ASCII terminals
		 * and bidi controls. */
		const char *c = s->cmdline && *s->cmdline ? s->cmdline : s->comm;

		ui_escape(cmd, sizeof(cmd), c, strlen(c));
		if (ui->batch)
			tl_field(l1, UA_NORMAL, cmd, 0, TL_NOCUT);
		else
			tl_field(l1, UA_NORMAL, cmd, GP_MIN(room, tl_width(cmd)), 0);
	}
	if (s->go_version)
		tl_printf(l1, UA_DIM, " %s", s->go_version);
	w = ui->batch ? l1->cols + 2 : ui->width - (int)strlen(state) - (int)strlen(el) - 1;
	tl_pad(l1, GP_MAX(w, l1->cols + 1));
	tl_put(l1, s->exited || s->paused ? UA_STATE : UA_OK, state);
	tl_printf(l1, UA_NORMAL, " %s", el);

	if (s->use_freq)
		snprintf(rate, sizeof(rate), "%llu Hz", (unsigned long long)s->freq);
	else
		snprintf(rate, sizeof(rate), "every %llu", (unsigned long long)s->period);
	if (ui->ev && ui->ev->mem)
		mem_line2(ui, l2, s);
	else
		head_line2(ui, l2, s, rate);
}

void ui_info_line(struct ui *ui, struct tline *l)
{
	struct model_totals t;

	tl_reset(l);
	if (!ui->snap)
		return;
	if (ui->files)
		tl_put(l, UA_DIM, "files"); /* `view`: nothing is cumulative or forgotten */
	else if (ui->ev && ui->ev->mem)
		tl_printf(l, UA_DIM, "heap profile of GC cycle %u", ui->snap->memory.cycle);
	else if (ui->snap->window_s)
		tl_printf(l, UA_MARK, "last %us", ui->snap->window_s);
	else if (ui->snap->forgotten_entries || ui->snap->shed_entries)
		tl_printf(l, UA_MARK, "cumulative, less %llu samples %s",
			  (unsigned long long)(ui->snap->forgotten + ui->snap->shed),
			  !ui->snap->shed_entries ? "the window forgot"
			  : ui->snap->forgotten_entries ? "the window and the memory limit forgot"
							: "the memory limit forgot");
	else
		tl_put(l, UA_DIM, "cumulative");
	if (!ui->model) {
		tl_printf(l, UA_NORMAL, "  no samples of %s yet", ui_viewed_event(ui));
	} else {
		model_totals(ui->model, &t);
		if (ui->ev && ui->ev->mem) {
			tl_printf(l, UA_NORMAL, "  %llu objects", (unsigned long long)t.count);
			if (ui->snap->memory.rate_ns)
				tl_printf(l, UA_DIM, ", alloc_rate over %.0fs",
					  (double)ui->snap->memory.rate_ns / 1e9);
			else
				tl_put(l, UA_DIM, ", alloc_rate at the next GC cycle");
		} else {
			tl_printf(l, UA_NORMAL, "  %llu samples", (unsigned long long)t.count);
		}
		if (ui->snap->window_s && !(ui->ev && ui->ev->mem)) {
			tl_printf(l, UA_DIM, " (%llu since start", (unsigned long long)ui->snap->ast.samples);
			if (ui->snap->forgotten_entries || ui->snap->shed_entries)
				tl_printf(l, UA_DIM, ", %llu of them forgotten",
					  (unsigned long long)(ui->snap->forgotten + ui->snap->shed));
			tl_put(l, UA_DIM, ")");
		}
		if (ui->nfilters) {
			tl_put(l, UA_NORMAL, "  focus: ");
			for (size_t i = 0; i < ui->nfilters; i++) {
				char buf[600];

				ui_filter_text(ui, i, buf, sizeof(buf));
				if (i)
					tl_put(l, UA_NORMAL, ", ");
				tl_put(l, UA_MARK, buf);
			}
			tl_printf(l, UA_NORMAL, " (%.1f%% of %llu)",
				  t.all_value ? 100.0 * (double)t.value / (double)t.all_value : 0.0,
				  (unsigned long long)t.all_count);
		}
	}
	if (ui->base_prof)
		tl_printf(l, UA_MARK, "  baseline: %s", ui->base_what);
	/* A Go program without runtime/pprof keeps no heap profile: said once here; the
	 * CPU views are the same. */
	if (ui->snap->memory.on && ui->snap->memory.err == GOPROF_E_OFF && !ui->snap->memory.have)
		tl_put(l, UA_DIM, "  memory: the program keeps no heap profile (MemProfileRate 0, "
				  "no runtime/pprof)");
	if (ui->search[0]) {
		char buf[512];

		ui_escape(buf, sizeof(buf), ui->search, strlen(ui->search));
		tl_put(l, UA_NORMAL, "  search: ");
		tl_put(l, UA_MATCH, buf);
	}
	if (!ui->batch && ui->views[ui->cur].ops->info) {
		tl_put(l, UA_NORMAL, "  ");
		ui->views[ui->cur].ops->info(ui, &ui->views[ui->cur], l);
	}
}
