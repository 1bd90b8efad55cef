/* view-annotate.c: the Annotate view: one function's source lines (self and total per line,
 * inlined code under the line that inlined it) or its instructions (share per instruction,
 * jumps and calls named), from every sample's exact address, updated live. The binary is
 * read as the target mapped it (annotate.h); the counts come from the model
 * (model_addresses), so focus filters apply as everywhere else. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/annotate.h"
#include "gotop/disasm.h"
#include "gotop/events.h"
#include "gotop/hashmap.h"
#include "gotop/util.h"

enum { AR_MSG, AR_SRC, AR_HDR, AR_INSN };

struct arow {
	uint8_t kind;
	uint32_t i; /* AR_MSG: message index; AR_SRC: source row; AR_HDR, AR_INSN: instruction */
};

#define MAX_MSGS 4
#define MAX_PATHS 16

struct ann {
	char *fn;                  /* raw name of the function shown */
	size_t fn_len;
	int asm_mode;
	const char *paths[MAX_PATHS], *trims[MAX_PATHS]; /* the options (borrowed: argv) */
	size_t npaths, ntrims;

	/* The binary, opened for one mapping of the profile, and the function's code in it
	 * (kept while the function and the mapping stay: the disassembly is done once). */
	struct symfile *sf;
	char *map_key;             /* path, build id, start, limit, offset */
	struct annot *a;

	struct annot_counts c;     /* the samples per instruction and source row */
	int have_source;
	char outer[256];           /* the function shown when the one asked for is only inlined */
	struct hashmap collapsed;  /* lines whose inlined rows are hidden */

	struct arow *rows;
	size_t nrows, caprows;
	char msgs[MAX_MSGS][512];
	int msg_attr[MAX_MSGS];
	size_t nmsgs;
	char err[400];             /* why there is nothing to show */
	struct model_totals tot;
	int64_t fn_self, fn_total;
};

static struct ann *ann_of(struct view *v)
{
	if (!v->priv)
		v->priv = xcalloc(1, sizeof(struct ann));
	return v->priv;
}

/* Shows a function (raw name bytes) from now on: its rows are made again, its inlined
 * lines shown. */
static void ann_open_at(struct ui *ui, struct view *v, const char *name, size_t len)
{
	struct ann *t = ann_of(v);

	v->stale = 1;
	if (t->fn && t->fn_len == len && !memcmp(t->fn, name, len))
		return;
	free(t->fn);
	t->fn = xmemdup0(name, len);
	t->fn_len = len;
	hashmap_free(&t->collapsed);
	memset(&t->collapsed, 0, sizeof(t->collapsed));
	ui_reset_sel(v);
}

/* --annotate FUNC, --asm, --source-path DIR and --trim-path PREFIX (the paths borrowed for
 * the run: they are argv's). */
static int ann_option(struct ui *ui, struct view *v, const char *name, const char *value)
{
	struct ann *t = ann_of(v);

	if (!strcmp(name, "annotate") && value) {
		ann_open_at(ui, v, value, strlen(value));
	} else if (!strcmp(name, "asm")) {
		t->asm_mode = 1;
		v->stale = 1;
	} else if (!strcmp(name, "source-path") && value && t->npaths < MAX_PATHS) {
		t->paths[t->npaths++] = value;
	} else if (!strcmp(name, "trim-path") && value && t->ntrims < MAX_PATHS) {
		t->trims[t->ntrims++] = value;
	} else {
		return 1;
	}
	return 0;
}

/* --batch without --annotate: the hottest function, chosen once. */
static void ann_batch(struct ui *ui, struct view *v, ui_section_fn *section)
{
	long fn = ann_of(v)->fn ? -1 : ui_hottest_fn(ui);

	if (fn >= 0) {
		const struct model_fn *f = model_fn(ui->model, (uint32_t)fn);

		ann_open_at(ui, v, f->name, f->name_len);
	}
	section(ui, v, ui_view_name(v->id));
}

static void add_msg(struct ann *t, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add_msg(struct ann *t, int attr, const char *fmt, ...)
{
	va_list ap;

	if (t->nmsgs == MAX_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(t->msgs[t->nmsgs], sizeof(t->msgs[0]), fmt, ap);
	va_end(ap);
	t->msg_attr[t->nmsgs++] = attr;
}

static void add_row(struct ann *t, int kind, size_t i)
{
	xgrow((void **)&t->rows, &t->caprows, t->nrows + 1, sizeof(*t->rows));
	t->rows[t->nrows].kind = (uint8_t)kind;
	t->rows[t->nrows++].i = (uint32_t)i;
}

static void drop_code(struct ann *t)
{
	annot_free(t->a);
	t->a = NULL;
	symfile_free(t->sf);
	t->sf = NULL;
	free(t->map_key);
	t->map_key = NULL;
}

/* The binary of the mapping, kept while the mapping stays (annot_open_mapped); the reason
 * in t->err when it cannot be read. */
static int open_code(struct ui *ui, struct ann *t, const struct prof *p, const struct prof_mapping *mp)
{
	const char *path = prof_string(p, mp->filename, NULL), *bid = prof_string(p, mp->build_id, NULL);
	pid_t pid = ui->snap ? ui->snap->pid : ui->target_pid;
	char key[4400], e1[300], e2[120], e3[120], other[120] = "";

	if (!path || !*path || path[0] == '[') {
		snprintf(t->err, sizeof(t->err), "the code is in %s, not in a file",
			 path && *path ? ui_esc(ui, e1, sizeof(e1), path, strlen(path)) : "anonymous memory");
		return -1;
	}
	snprintf(key, sizeof(key), "%s|%s|%llx|%llx|%llx", path, bid ? bid : "",
		 (unsigned long long)mp->start, (unsigned long long)mp->limit,
		 (unsigned long long)mp->offset);
	if (t->map_key && !strcmp(t->map_key, key))
		return 0;
	drop_code(t);
	t->sf = annot_open_mapped(pid, path, bid, mp->start, mp->limit, other, sizeof(other));
	if (t->sf) {
		t->map_key = xstrdup(key);
		return 0;
	}
	ui_esc(ui, e1, sizeof(e1), path, strlen(path));
	if (errno == ESTALE)
		snprintf(t->err, sizeof(t->err),
			 "%s on disk is not the binary that ran (build id %s, on disk %s): no "
			 "instructions", e1, ui_esc(ui, e2, sizeof(e2), bid, strlen(bid)),
			 ui_esc(ui, e3, sizeof(e3), other, strlen(other)));
	else
		snprintf(t->err, sizeof(t->err), "cannot open %s: no instructions", e1);
	return -1;
}

/* Whether the event's samples land after the instruction that caused them (skid): every
 * hardware and raw event as gotop-perf samples it (perf_event_attr.precise_ip 0). */
static int has_skid(struct ui *ui)
{
	struct event_spec es;
	const char *name = ui_viewed_event(ui);

	return name && !events_parse(name, &es) && (!es.desc || es.desc->kind != EVENT_SOFTWARE);
}

/* The outermost frame of instruction i, or NULL. */
static const struct sym_frame *outer(const struct annot *a, size_t i)
{
	const struct annot_insn *in = &annot_insns(a)[i];

	return in->nfr ? &annot_frames(a)[in->fr + in->nfr - 1] : NULL;
}

static int same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* Whether instructions i and j run the same inlined line (or both none). */
static int same_inner(const struct annot *a, size_t i, size_t j)
{
	const struct annot_insn *x = &annot_insns(a)[i], *y = &annot_insns(a)[j];
	const struct sym_frame *fx = &annot_frames(a)[x->fr], *fy = &annot_frames(a)[y->fr];

	if ((x->nfr > 1) != (y->nfr > 1))
		return 0;
	return x->nfr <= 1 || (fx->line == fy->line && same_str(fx->func, fy->func) &&
			       same_str(fx->file, fy->file));
}

static int is_collapsed(const struct ann *t, int32_t line)
{
	const uint64_t *c = hashmap_get(&t->collapsed, (uint64_t)(uint32_t)line);

	return c && *c;
}

static void build_rows(struct ann *t)
{
	size_t i, n = t->a ? annot_ninsns(t->a) : 0;
	int collapsed = 0;

	t->nrows = 0;
	for (i = 0; i < t->nmsgs; i++)
		add_row(t, AR_MSG, i);
	if (!t->a)
		return;
	if (!t->asm_mode && t->have_source) {
		for (i = 0; i < t->c.nrows; i++) {
			if (t->c.rows[i].depth == 0)
				collapsed = is_collapsed(t, t->c.rows[i].line);
			else if (collapsed)
				continue;
			/* Code without a line (padding between functions) only when it has samples. */
			if (t->c.rows[i].line <= 0 && !t->c.rows[i].self && !t->c.rows[i].total)
				continue;
			add_row(t, AR_SRC, i);
		}
		return;
	}
	for (i = 0; i < n; i++) {
		const struct sym_frame *o = outer(t->a, i), *p = i ? outer(t->a, i - 1) : NULL;

		if (!i || !o != !p || (o && (o->line != p->line || !same_str(o->file, p->file) ||
					     !same_inner(t->a, i, i - 1))))
			add_row(t, AR_HDR, i);
		add_row(t, AR_INSN, i);
	}
}

/* The function's addresses with samples (model_addresses) as annotate.c takes them. A
 * function only inlined (no code of its own with samples) is shown in the function that
 * inlined it most, where its lines show under the lines that inline it. Caller frees. */
static size_t fn_samples(struct ui *ui, struct ann *t, uint32_t fn, const char *e,
			 struct annot_sample **out)
{
	struct model_addr *ad = NULL;
	size_t n = model_addresses(ui->model, fn, &ad), i;
	long outer;

	if (!n && (outer = model_inlined_into(ui->model, fn)) >= 0) {
		const struct model_fn *of = model_fn(ui->model, (uint32_t)outer);

		free(ad);
		ad = NULL;
		n = model_addresses(ui->model, (uint32_t)outer, &ad);
		ui_esc(ui, t->outer, sizeof(t->outer), of->name, of->name_len);
		add_msg(t, UA_DIM, "%s is inlined: shown in %s, under the lines that inline it", e,
			t->outer);
	}
	*out = xcalloc(n + 1, sizeof(**out));
	for (i = 0; i < n; i++)
		(*out)[i] = (struct annot_sample){ ad[i].mapping, ad[i].address, ad[i].is_return,
						   ad[i].self, ad[i].total, (int64_t)ad[i].self_n,
						   (int64_t)ad[i].total_n };
	free(ad);
	return n;
}

/* The code of the mapping with the most samples, its function at the hottest address
 * disassembled (kept while its bounds stay). *mp gets the mapping; 0, or -1 with t->err. */
static int load_code(struct ui *ui, struct ann *t, const struct annot_sample *s, size_t n,
		     const char *e, uint64_t *map, const struct prof_mapping **mp)
{
	const struct prof *p = model_prof(ui->model);
	uint64_t hot = 0, vaddr, start, end;
	const char *name = NULL, *path;
	char e2[300];
	int err = 0;

	if (!n || annot_hot_mapping(s, n, map, &hot)) {
		snprintf(t->err, sizeof(t->err), n ? "%s is in no mapped file" :
			 "%s has no code of its own with samples (it may be inlined into its callers: "
			 "annotate them)", e);
		return -1;
	}
	*mp = prof_mapping_at(p, *map - 1);
	if (!*mp || open_code(ui, t, p, *mp))
		return -1;
	if (symfile_file_vaddr(t->sf, (*mp)->start, (*mp)->offset, hot, &vaddr) ||
	    annot_func_at(t->sf, vaddr, &start, &end, &name)) {
		path = prof_string(p, (*mp)->filename, NULL);
		snprintf(t->err, sizeof(t->err), "no function symbol covers 0x%llx in %s (stripped?): "
			 "no bounds to disassemble", (unsigned long long)hot,
			 ui_esc(ui, e2, sizeof(e2), path ? path : "", path ? strlen(path) : 0));
		drop_code(t);
		return -1;
	}
	if (t->a && annot_start(t->a) == start && annot_end(t->a) == end)
		return 0;
	annot_free(t->a);
	t->a = annot_open(t->sf, start, end, name,
			  &(struct annot_opts){ t->paths, t->npaths, t->trims, t->ntrims, NULL }, &err);
	if (!t->a) {
		snprintf(t->err, sizeof(t->err), "cannot read the code of %s: %s", e,
			 err == -EIO ? "the file is shorter than its headers say" : strerror(-err));
		return -1;
	}
	return 0;
}

/* What the person should know about the counts: source not found, samples off the code,
 * bytes that are no instructions, skid. */
static void add_notes(struct ui *ui, struct ann *t)
{
	char e[256];

	for (size_t i = 0; i < t->c.nrows && !t->have_source; i++)
		if (t->c.rows[i].depth == 0 && t->c.rows[i].file)
			t->have_source = annot_source_file(t->a, t->c.rows[i].file) != NULL;
	if (!t->have_source) {
		const char *f = t->c.nrows && t->c.rows[0].file ? t->c.rows[0].file : "";

		ui_esc(ui, e, sizeof(e), f, strlen(f));
		add_msg(t, UA_ERR, "source not found: %s (--source-path, --trim-path); file:line with "
			"the instructions", *e ? e : "(no line table)");
	}
	if (t->c.missed)
		add_msg(t, UA_ERR, "%s of the samples are at addresses that are not instructions of "
			"this code (was the binary replaced?)",
			(ui_pct(e, sizeof(e), t->c.missed, t->tot.value), e));
	if (annot_nbad(t->a))
		add_msg(t, UA_ERR, "%zu bytes do not decode as instructions (shown as .byte)",
			annot_nbad(t->a));
	if (has_skid(ui))
		add_msg(t, UA_DIM, "%s is not a precise event: samples land a few instructions after "
			"the one that caused them (skid)", ui_viewed_event(ui));
}

/* The function's self and total value. */
static void fn_totals(struct ui *ui, struct ann *t, uint32_t fn)
{
	struct model_flat *flat = NULL;
	size_t nf = model_flat(ui->model, &flat), i;

	for (i = 0; i < nf; i++)
		if (flat[i].fn == fn) {
			t->fn_self = flat[i].self;
			t->fn_total = flat[i].total;
		}
	free(flat);
}

static void ann_update(struct ui *ui, struct view *v)
{
	struct ann *t = ann_of(v);
	struct annot_sample *s = NULL;
	const struct prof_mapping *mp;
	uint64_t map;
	size_t n;
	long fn;
	char e[256];

	t->nmsgs = 0;
	t->err[0] = 0;
	t->have_source = 0;
	t->outer[0] = 0;
	t->fn_self = t->fn_total = 0;
	annot_counts_free(&t->c);
	memset(&t->tot, 0, sizeof(t->tot));
	if (!t->fn) {
		snprintf(t->err, sizeof(t->err), "no function chosen (a on a function in Top, Tree or Callers)");
		goto out;
	}
	ui_esc(ui, e, sizeof(e), t->fn, t->fn_len);
	if (!ui->model || (fn = model_find_fn(ui->model, t->fn, t->fn_len)) < 0) {
		snprintf(t->err, sizeof(t->err), "no samples in %s yet", e);
		goto out;
	}
	model_totals(ui->model, &t->tot);
	fn_totals(ui, t, (uint32_t)fn);
	n = fn_samples(ui, t, (uint32_t)fn, e, &s);
	if (load_code(ui, t, s, n, e, &map, &mp))
		goto out;
	annot_count_samples(t->a, s, n, map, mp->start, mp->offset, &t->c);
	add_notes(ui, t);
out:
	free(s);
	if (t->err[0])
		add_msg(t, UA_ERR, "%s", t->err);
	build_rows(t);
}

static size_t ann_nrows(struct ui *ui, struct view *v)
{
	return ann_of(v)->nrows;
}

static uint64_t ann_row_id(struct ui *ui, struct view *v, size_t i)
{
	struct ann *t = ann_of(v);
	const struct arow *r = &t->rows[i];

	switch (r->kind) {
	case AR_SRC:
		return util_mix64((uint64_t)(uint32_t)t->c.rows[r->i].line << 8 | t->c.rows[r->i].depth |
				  (uint64_t)t->c.rows[r->i].first << 32);
	case AR_INSN:
	case AR_HDR:
		return util_mix64(annot_insns(t->a)[r->i].addr * 2 + (r->kind == AR_HDR));
	default:
		return r->i;
	}
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "";
}

static void ann_title(struct ui *ui, struct view *v, struct tline *l)
{
	struct ann *t = ann_of(v);
	char e[600], pct[16];

	tl_reset(l);
	tl_field(l, UA_HEAD, "SELF%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "TOTAL%", 8, TL_RIGHT);
	tl_field(l, UA_HEAD, "SAMPLES", 9, TL_RIGHT);
	tl_put(l, UA_HEAD, t->asm_mode || !t->have_source ? "  ADDRESS   INSTRUCTION  " : "   LINE  SOURCE  ");
	if (!t->fn)
		return;
	tl_put(l, UA_TITLE, ui_esc(ui, e, sizeof(e), t->fn, t->fn_len));
	if (t->outer[0])
		tl_printf(l, UA_DIM, " in %s", t->outer);
	ui_pct(pct, sizeof(pct), t->fn_self, t->tot.value);
	tl_printf(l, UA_DIM, "  self %s", pct);
	ui_pct(pct, sizeof(pct), t->fn_total, t->tot.value);
	tl_printf(l, UA_DIM, " total %s  [%s]", pct, t->asm_mode ? "assembly" : "source");
}

/* Appends a source line from disk: tabs expanded (8 columns), then escaped. */
static void put_source(struct ui *ui, struct ann *t, struct tline *l, const char *file, int32_t line)
{
	size_t len = 0, i, k = 0;
	const char *s = t->a ? annot_source_line(t->a, file, line, &len) : NULL;
	char buf[1024];

	if (!s)
		return;
	for (i = 0; i < len && k < sizeof(buf) - 8; i++) {
		if (s[i] == '\t') {
			do
				buf[k++] = ' ';
			while (k % 8 && k < sizeof(buf) - 8);
		} else {
			buf[k++] = s[i];
		}
	}
	tl_untrusted(l, UA_NORMAL, buf, k, ui->batch ? 0 : GP_MAX(ui->width - l->cols, 0),
		     ui->batch ? TL_NOCUT : 0);
}

static void put_counts(struct tline *l, int64_t self, int64_t total, int64_t n, int64_t all, int hot)
{
	char pct[16];

	ui_pct(pct, sizeof(pct), self, all);
	tl_put(l, hot ? UA_MARK : UA_NORMAL, hot ? ">" : " ");
	tl_field(l, self ? ui_pct_attr(self, all) : UA_DIM, pct, 6, TL_RIGHT);
	ui_pct(pct, sizeof(pct), total, all);
	tl_field(l, total ? ui_pct_attr(total, all) : UA_DIM, pct, 8, TL_RIGHT);
	tl_printf(l, n ? UA_NORMAL : UA_DIM, "%9lld ", (long long)n);
}

static void insn_row(struct ui *ui, struct ann *t, size_t i, struct tline *l)
{
	const struct annot_insn *in = &annot_insns(t->a)[i];
	char e[600];

	put_counts(l, t->c.self[i], t->c.total[i], t->c.self_n[i], t->tot.value, t->c.self[i] >= t->c.hot);
	tl_printf(l, UA_DIM, " %10llx ", (unsigned long long)in->addr);
	tl_put(l, in->jump_in ? UA_MARK : UA_NORMAL, in->jump_in ? (tl_utf8 ? "→" : ">") : " ");
	tl_put(l, in->bad ? UA_ERR : in->kind == DISASM_CALL ? UA_WARM : UA_NORMAL, annot_text(t->a, i));
	if (in->target && in->target >= annot_start(t->a) && in->target < annot_end(t->a))
		tl_printf(l, UA_TREE, " %s +0x%llx", in->target < in->addr ? (tl_utf8 ? "↑" : "^") : (tl_utf8 ? "↓" : "v"),
			  (unsigned long long)(in->target - annot_start(t->a)));
	else if (in->target_name)
		tl_printf(l, UA_TREE, " <%s>", ui_esc(ui, e, sizeof(e), in->target_name, strlen(in->target_name)));
}

static void ann_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	struct ann *t = ann_of(v);
	const struct arow *r = &t->rows[i];
	char e[600];

	tl_reset(l);
	if (r->kind == AR_MSG) {
		tl_put(l, t->msg_attr[r->i], "  ");
		tl_put(l, t->msg_attr[r->i], t->msgs[r->i]);
		return;
	}
	if (r->kind == AR_INSN) {
		insn_row(ui, t, r->i, l);
		return;
	}
	if (r->kind == AR_HDR) {
		const struct sym_frame *o = outer(t->a, r->i);
		const char *f = o && o->file ? o->file : "??";

		const struct annot_insn *in = &annot_insns(t->a)[r->i];

		tl_field(l, UA_DIM, "", 25, 0);
		tl_printf(l, UA_TREE, "%s:%d  ", ui_esc(ui, e, sizeof(e), base_name(f), strlen(base_name(f))),
			  o ? (int)o->line : 0);
		if (o && t->have_source)
			put_source(ui, t, l, o->file, o->line);
		if (in->nfr > 1) {
			/* Inlined code: the innermost function's line too. */
			const struct sym_frame *fi = &annot_frames(t->a)[in->fr];
			const char *fif = fi->file ? base_name(fi->file) : "??";

			tl_printf(l, UA_TREE, "  %s ", tl_utf8 ? "↳" : "->");
			tl_put(l, UA_WARM, ui_esc(ui, e, sizeof(e), fi->func ? fi->func : "?",
						  fi->func ? strlen(fi->func) : 1));
			tl_printf(l, UA_DIM, " %s:%d  ", ui_esc(ui, e, sizeof(e), fif, strlen(fif)),
				  (int)fi->line);
			if (t->have_source)
				put_source(ui, t, l, fi->file, fi->line);
		}
		return;
	}
	{
		const struct annot_row *sr = &t->c.rows[r->i], *sn = &t->c.rows_n[r->i];

		put_counts(l, sr->self, sr->total, sn->self, t->tot.value, sr->hot);
		if (sr->depth) {
			const char *f = sr->file ? base_name(sr->file) : "??";

			tl_printf(l, UA_TREE, "        %s ", tl_utf8 ? "↳" : "->");
			tl_put(l, UA_WARM, ui_esc(ui, e, sizeof(e), sr->func, strlen(sr->func)));
			tl_printf(l, UA_DIM, " %s:%d  ", ui_esc(ui, e, sizeof(e), f, strlen(f)), (int)sr->line);
			put_source(ui, t, l, sr->file, sr->line);
			return;
		}
		/* A line with inlined code says whether it is shown (-) or hidden (+). */
		if (r->i + 1 < t->c.nrows && t->c.rows[r->i + 1].depth)
			tl_put(l, UA_TREE, is_collapsed(t, sr->line) ? "+" : "-");
		else
			tl_put(l, UA_NORMAL, " ");
		tl_printf(l, sr->ninsn ? UA_NORMAL : UA_DIM, "%6d  ", (int)sr->line);
		put_source(ui, t, l, sr->file, sr->line);
	}
}

/* Whether row i is hot (marked). */
static int row_hot(struct ann *t, size_t i)
{
	const struct arow *r = &t->rows[i];

	if (r->kind == AR_SRC)
		return t->c.rows[r->i].hot;
	return r->kind == AR_INSN && t->c.self[r->i] >= t->c.hot;
}

static int ann_action(struct ui *ui, struct view *v, enum ui_action a)
{
	struct ann *t = ann_of(v);
	size_t k;

	switch (a) {
	case ACT_ANNOTATE_MODE: {
		/* Keep the place: the selected line's first instruction, or the instruction's line. */
		uint64_t addr = 0;
		int32_t line = 0;

		if (v->sel < t->nrows && t->a) {
			const struct arow *r = &t->rows[v->sel];

			if (r->kind == AR_SRC && t->c.rows[r->i].first != UINT32_MAX)
				addr = annot_insns(t->a)[t->c.rows[r->i].first].addr;
			else if (r->kind == AR_SRC)
				line = t->c.rows[r->i].line;
			else if (r->kind != AR_MSG && outer(t->a, r->i))
				line = outer(t->a, r->i)->line;
		}
		t->asm_mode = !t->asm_mode;
		build_rows(t);
		v->have_sel_id = 0;
		for (k = 0; k < t->nrows; k++) {
			const struct arow *r = &t->rows[k];

			if ((addr && r->kind == AR_INSN && annot_insns(t->a)[r->i].addr == addr) ||
			    (line && r->kind == AR_SRC && t->c.rows[r->i].depth == 0 && t->c.rows[r->i].line == line)) {
				v->sel = k;
				v->moved = 1;
				break;
			}
		}
		ui_set_status(ui, UA_OK, "%s", t->asm_mode ? "assembly" : "source");
		return R_REDRAW;
	}
	case ACT_TOGGLE:
		if (v->sel < t->nrows && t->rows[v->sel].kind == AR_SRC) {
			size_t i = t->rows[v->sel].i;
			uint64_t key;

			while (i > 0 && t->c.rows[i].depth)
				i--;
			key = (uint64_t)(uint32_t)t->c.rows[i].line;
			{
				uint64_t *c = hashmap_put(&t->collapsed, key, NULL);

				*c = !*c;
			}
			build_rows(t);
			for (k = 0; k < t->nrows; k++)
				if (t->rows[k].kind == AR_SRC && t->rows[k].i == i)
					v->sel = k;
		}
		return R_REDRAW;
	case ACT_FIND_NEXT:
	case ACT_FIND_PREV:
		for (k = 1; k <= t->nrows; k++) {
			size_t i = a == ACT_FIND_NEXT ? (v->sel + k) % t->nrows
						      : (v->sel + t->nrows - k % t->nrows) % t->nrows;

			if (row_hot(t, i)) {
				v->sel = i;
				return R_REDRAW;
			}
		}
		ui_set_status(ui, UA_ERR, "no hot line");
		return R_REDRAW;
	default:
		return R_NONE;
	}
}

static const char *ann_empty(struct ui *ui, struct view *v)
{
	return "nothing to annotate";
}

static void ann_free(struct view *v)
{
	struct ann *t = v->priv;

	if (!t)
		return;
	drop_code(t);
	free(t->fn);
	annot_counts_free(&t->c);
	free(t->rows);
	hashmap_free(&t->collapsed);
	free(t);
	v->priv = NULL;
}

const struct view_ops view_annotate_ops = {
	.update = ann_update,
	.nrows = ann_nrows,
	.row_id = ann_row_id,
	.title = ann_title,
	.row = ann_row,
	.action = ann_action,
	.empty = ann_empty,
	.option = ann_option,
	.open_at = ann_open_at,
	.batch = ann_batch,
	.free = ann_free,
};
