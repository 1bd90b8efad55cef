/* wall.c: wall time of a Go target's goroutines, from the session's wall-clock profile
 * (session.h, session_wall_get): every goroutine sampled from outside at --wall-hz, each
 * snapshot adding one period of wall time to its stack under the label "state" (running,
 * runnable, syscall or the wait reason, gowall.h) and its pprof labels. What the Goroutines
 * view's Wall mode (view-goroutines-wall.c) and the Labels view's RUN% RUNQ% WAIT% columns
 * read: the samples of the window with the label focus filters applied (model.h's rule:
 * for each key filtered, one of its values), the split of a key's values by state, and
 * the columns. The time counts since the start or the last zero (z) or, with the live
 * window on, over its last seconds: the sampler's copies are cumulative, so a window is
 * the latest copy minus the one published that long before it, sample by sample. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/profile.h"
#include "gotop/util.h"

const struct session_wall *ui_wall_data(struct ui *ui, const struct session_wall **base)
{
	return session_wall_get(ui_session(ui), ui->snap ? ui->snap->window_s : 0, base);
}

/* --- samples of the wall profile --- */

static int bytes_eq(const char *a, size_t al, const char *b, size_t bl)
{
	return al == bl && !memcmp(a, b, al);
}

int ui_wall_class(const char *state, size_t len)
{
	if (bytes_eq(state, len, "running", 7))
		return UI_WALL_RUNNING;
	/* Preempted goroutines wait for a CPU like runnable ones (runtime/runtime2.go
	 * _Gpreempted: "stopped itself for a suspendG preemption"). */
	if (bytes_eq(state, len, "runnable", 8) || bytes_eq(state, len, "preempted", 9))
		return UI_WALL_RUNNABLE;
	return UI_WALL_WAITING;
}

/* The string value of label key in sample s (NULL: none). */
static const char *label_of(const struct prof *p, const struct prof_sample *s, const char *key,
			    size_t klen, size_t *len)
{
	for (uint32_t i = 0; i < s->nlabels; i++) {
		size_t kl;
		const char *k;

		if (!s->labels[i].str)
			continue;
		k = prof_string(p, s->labels[i].key, &kl);
		if (k && bytes_eq(k, kl, key, klen))
			return prof_string(p, s->labels[i].str, len);
	}
	return NULL;
}

struct label_arg {
	const struct prof *p;
	const struct prof_sample *s;
};

static const char *sample_label(void *arg, const char *key, size_t klen, size_t *len)
{
	const struct label_arg *la = arg;

	return label_of(la->p, la->s, key, klen, len);
}

/* The state label's string id in p (0: no sample has one). */
static uint32_t state_key(const struct prof *p)
{
	for (size_t i = 0; i < prof_nsamples(p); i++) {
		struct prof_sample s;

		if (prof_sample_at(p, i, &s))
			break;
		for (uint32_t k = 0; k < s.nlabels; k++) {
			size_t kl;
			const char *ks = prof_string(p, s.labels[k].key, &kl);

			if (ks && bytes_eq(ks, kl, "state", 5))
				return s.labels[k].key;
		}
	}
	return 0;
}

void ui_wall_iter_init(struct ui_wall_iter *it, const struct session_wall *d,
		       const struct session_wall *base, const char *skip, size_t skip_len)
{
	memset(it, 0, sizeof(*it));
	it->p = d->p;
	it->cur = prof_values(d->p, &it->cs);
	/* Copies of one profile share its tables: an index is the same sample in both. */
	if (base && prof_same_tables(d->p, base->p)) {
		it->base = prof_values(base->p, &it->bs);
		it->bn = it->base ? prof_nsamples(base->p) : 0;
	}
	it->skey = state_key(d->p);
	it->skip = skip;
	it->skip_len = skip_len;
	it->full = (int64_t)d->wall_ns - (it->base ? (int64_t)base->wall_ns : 0);
}

int64_t ui_wall_idle(const struct ui_wall_iter *it, int64_t ns, int cls)
{
	/* A goroutine parked at every snapshot adds each snapshot's period to one sample,
	 * so exactly it.full (gowall.c); one that ran, or was not there at some snapshot,
	 * adds less, and goroutines of a sample add up. */
	if (cls != UI_WALL_WAITING || it->full <= 0 || ns < it->full || ns % it->full)
		return 0;
	return ns / it->full;
}

int ui_wall_next(const struct ui *ui, struct ui_wall_iter *it, size_t *idx, struct prof_sample *s,
		 int64_t *ns, uint32_t *state)
{
	while (it->skey && it->i < prof_nsamples(it->p)) {
		size_t i = it->i++;
		int64_t v = it->cur ? it->cur[i * it->cs] : 0;
		struct label_arg la = { it->p, s };

		if (i < it->bn)
			v -= it->base[i * it->bs];
		/* Numeric filters (thread, goroutine) name nothing a wall sample carries:
		 * ui_labels_pass leaves them out, as the all-goroutines mode does. */
		if (v <= 0 || prof_sample_at(it->p, i, s) ||
		    !ui_labels_pass(ui, sample_label, &la, it->skip, it->skip_len))
			continue;
		*idx = i;
		*ns = v;
		*state = 0;
		for (uint32_t k = 0; k < s->nlabels && !*state; k++)
			if (s->labels[k].key == it->skey)
				*state = s->labels[k].str;
		return 1;
	}
	return 0;
}

/* Adds ns of wall time in state (string id) to a split. */
void ui_wall_split_add(struct ui_wall_split *sp, const struct prof *p, uint32_t state, int64_t ns)
{
	size_t len = 0;
	const char *s = prof_string(p, state, &len);
	int c = ui_wall_class(s ? s : "", len);
	size_t i;

	sp->ns[c] += ns;
	sp->total += ns;
	if (c != UI_WALL_WAITING)
		return;
	for (i = 0; i < sp->nreasons && sp->reasons[i].state != state; i++)
		;
	if (i == sp->nreasons) {
		if (i == UI_WALL_REASONS)
			return; /* rare: counted in the waiting total only */
		sp->reasons[sp->nreasons++] = (struct ui_wall_reason){ state, 0 };
	}
	sp->reasons[i].ns += ns;
}

void ui_wall_top_reasons(const struct ui_wall_split *sp, struct ui_wall_reason top[2])
{
	memset(top, 0, 2 * sizeof(*top));
	for (size_t i = 0; i < sp->nreasons; i++) {
		const struct ui_wall_reason *r = &sp->reasons[i];

		if (r->ns > top[0].ns) {
			top[1] = top[0];
			top[0] = *r;
		} else if (r->ns > top[1].ns) {
			top[1] = *r;
		}
	}
}

void ui_wall_splits_free(struct ui_wall_splits *ws)
{
	session_wall_put(ws->d);
	session_wall_put(ws->base);
	free(ws->v);
	hashmap_free(&ws->idx);
	memset(ws, 0, sizeof(*ws));
}

static uint64_t value_hash(const char *s, size_t len)
{
	uint64_t h = util_hash(s, len, 0x77616c6c);

	return h ? h : 1;
}

int ui_wall_splits_build(struct ui *ui, struct ui_wall_splits *ws, const char *key, size_t klen)
{
	struct ui_wall_iter it;
	struct prof_sample s;
	size_t cap = 0, i;
	int64_t ns;
	uint32_t state;

	ui_wall_splits_free(ws);
	ws->d = ui_wall_data(ui, &ws->base);
	if (!ws->d)
		return -1;
	ui_wall_iter_init(&it, ws->d, ws->base, key, klen);
	while (ui_wall_next(ui, &it, &i, &s, &ns, &state)) {
		const char *v;
		size_t vl = 0;
		uint64_t h, *slot;
		int created;

		v = label_of(it.p, &s, key, klen, &vl);
		if (!v) {
			ui_wall_split_add(&ws->rest, it.p, state, ns);
			continue;
		}
		/* Probe past other values with the same hash. */
		for (h = value_hash(v, vl);; h = h + 1 ? h + 1 : 1) {
			slot = hashmap_put(&ws->idx, h, &created);
			if (created || bytes_eq(ws->v[*slot - 1].val, ws->v[*slot - 1].len, v, vl))
				break;
		}
		if (created) {
			xgrow((void **)&ws->v, &cap, ws->n + 1, sizeof(*ws->v));
			memset(&ws->v[ws->n], 0, sizeof(*ws->v));
			ws->v[ws->n].val = v;
			ws->v[ws->n].len = vl;
			*slot = ++ws->n;
		}
		ui_wall_split_add(&ws->v[*slot - 1], it.p, state, ns);
	}
	return 0;
}

const struct ui_wall_split *ui_wall_split_find(const struct ui_wall_splits *ws, const char *val,
					       size_t len)
{
	if (!val)
		return ws->rest.total ? &ws->rest : NULL;
	for (uint64_t h = value_hash(val, len);; h = h + 1 ? h + 1 : 1) {
		const uint64_t *slot = hashmap_get(&ws->idx, h);

		if (!slot)
			return NULL;
		if (bytes_eq(ws->v[*slot - 1].val, ws->v[*slot - 1].len, val, len))
			return &ws->v[*slot - 1];
	}
}

/* The width of TOP WAITS: a narrow screen keeps its columns for the value and function. */
static int waits_width(const struct ui *ui)
{
	return ui->batch || ui->width >= 120 ? 24 : 0;
}

void ui_wall_cells(struct ui *ui, struct tline *l, const struct ui_wall_split *sp,
		   const struct prof *p)
{
	struct ui_wall_reason top[2];
	char pct[16], buf[160];
	size_t k = 0;

	if (!sp || sp->total <= 0) {
		tl_field(l, UA_DIM, "-", 7, TL_RIGHT);
		tl_field(l, UA_DIM, "-", 7, TL_RIGHT);
		if (waits_width(ui)) {
			tl_put(l, UA_NORMAL, "  ");
			tl_field(l, UA_DIM, "", waits_width(ui), ui->batch ? TL_NOCUT : 0);
		}
		return;
	}
	for (int c = 0; c < UI_WALL_CLASSES; c++) {
		ui_pct(pct, sizeof(pct), sp->ns[c], sp->total);
		tl_field(l, c == UI_WALL_WAITING ? UA_STATE : ui_pct_attr(sp->ns[c], sp->total),
			 pct, 7, TL_RIGHT);
	}
	if (!waits_width(ui))
		return;
	tl_put(l, UA_NORMAL, "  ");
	ui_wall_top_reasons(sp, top);
	buf[0] = 0;
	for (int i = 0; i < 2 && top[i].ns > 0; i++) {
		size_t sl = 0;
		const char *s = prof_string(p, top[i].state, &sl);
		char e[96];

		ui_esc(ui, e, sizeof(e), s, sl);
		ui_pct(pct, sizeof(pct), top[i].ns, sp->total);
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%s%s %s", i ? ", " : "", e,
				      pct + strspn(pct, " "));
		if (k >= sizeof(buf))
			break;
	}
	tl_field(l, UA_STATE, buf, waits_width(ui), ui->batch ? TL_NOCUT : 0);
}

void ui_wall_title_cells(struct ui *ui, struct tline *l)
{
	tl_field(l, UA_HEAD, "RUN%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "RUNQ%", 7, TL_RIGHT);
	tl_field(l, UA_HEAD, "WAIT%", 7, TL_RIGHT);
	if (waits_width(ui)) {
		tl_put(l, UA_HEAD, "  ");
		tl_field(l, UA_HEAD, "TOP WAITS", waits_width(ui), ui->batch ? TL_NOCUT : 0);
	}
}

