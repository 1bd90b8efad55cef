/* goprof.c: Go's /debug/pprof answers for a running process, made from outside: the heap,
 * allocs, block, mutex and goroutine profiles as runtime/pprof writes them (protobuf and
 * the debug=1 and debug=2 texts), net/http/pprof's ?seconds deltas, and goprof_fetch, the
 * one entry point for the pprof command and an HTTP server.
 *
 * Sources, go1.19 to go1.27 (each checked in Debian's golang-1.X-src):
 * - runtime/pprof/protomem.go writeHeapProto: period type space/bytes, period
 *   MemProfileRate, sample types alloc_objects/count, alloc_space/bytes,
 *   inuse_objects/count, inuse_space/bytes; leading frames whose FuncForPC name starts
 *   with "runtime." (go1.24+ also "internal/runtime/") are hidden, unless nothing would
 *   remain; values are scaleHeapSample's; the numeric label "bytes" is the object size
 *   (through go1.26 AllocBytes/AllocObjects, left out when 0; go1.27 ObjectSize always).
 *   Every bucket is a sample (memProfileInternal with inuseZero true).
 * - scaleHeapSample: (0, 0) when count or size is 0; (count, size) when rate <= 1; else
 *   scale = 1 / (1 - exp(-avg / rate)), avg = size / count, giving int64(count * scale)
 *   and int64(size * scale) (go1.27 passes the object size and multiplies by count, which
 *   is the same number since every bucket's bytes are count * size).
 * - runtime/pprof/pprof.go printCountCycleProfile (block "contention", mutex): period
 *   type contentions/count, period 1, sample types contentions/count and
 *   delay/nanoseconds = int64(cycles / (cyclesPerSecond / 1e9)); records sorted by cycles;
 *   block counts of 0 reported as 1 (blockProfileInternal); go1.19's writeMutex multiplies
 *   count and delay by the current SetMutexProfileFraction (the runtime scales from
 *   go1.21); from go1.23 stacks are frame-pointer return addresses expanded with
 *   expandInlinedFrames to at most profstackdepth (pprof_makeProfStack).
 * - writeHeapInternal debug=1: "heap profile: I: B [A: AB] @ heap/2*rate", a record per
 *   bucket (sorted by in-use bytes: descending through go1.22, ascending from go1.23),
 *   alloc bytes + 1 in the header when equal to in-use bytes (go1.21+), stacks by
 *   printStackRecord, then runtime.MemStats, through a tabwriter(1, 8, 1, '\t', 0).
 * - writeProfileInternal debug=1: "--- contention:" or "--- mutex:", "cycles/second=N",
 *   mutex "sampling period=N", "cycles count @ pcs" and printStackRecord(all frames).
 * - printCountProfile (goroutine): samples by stack and labels, sorted by count then
 *   key; debug=1 "goroutine profile: total N", "count @ pcs", "# labels: {"k":"v"}".
 *   Goroutines whose start function is in the runtime (isSystemGoroutine) are left out.
 * - goroutine debug=2 is runtime.Stack(all): goroutineheader, traceback2 with showframe
 *   (runtime frames hidden unless exported, wrappers elided), "created by".
 * - net/http/pprof serveDeltaProfile: p0 scaled by -1, merged with p1 (samples keyed by
 *   locations and labels, zero samples dropped), time of p1, duration p1 - p0.
 */
#include "config.h"
#include "gotop/goprof.h"
#include "goprof-int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gotop/gomem.h"
#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"
#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/maps.h"
#include "gotop/pprof.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#define MAX_LOCS 4096           /* locations per sample */
#define DEFAULT_STACK_DEPTH 128 /* GODEBUG profstackdepth's default (go1.23+) */
#define GOROUTINE_TRIES 4       /* snapshots for one goroutine profile (gosnap_take_whole) */

int goprof_http_status(int err)
{
	static const int st[] = {
#define GOPROF_ERR(name, status, text) status,
		GOPROF_ERRORS
#undef GOPROF_ERR
	};

	return err >= 0 && (size_t)err < GP_ARRAY_SIZE(st) ? st[err] : 500;
}

const char *goprof_strerror(int err)
{
	static const char *const tx[] = {
#define GOPROF_ERR(name, status, text) text,
		GOPROF_ERRORS
#undef GOPROF_ERR
	};

	return err >= 0 && (size_t)err < GP_ARRAY_SIZE(tx) ? tx[err] : "error";
}

/* ---- text ---- */

struct sb {
	char *buf;
	size_t len, cap;
};

static void sb_add(struct sb *s, const char *t, size_t n)
{
	xgrow((void **)&s->buf, &s->cap, s->len + n + 1, 1);
	memcpy(s->buf + s->len, t, n);
	s->len += n;
	s->buf[s->len] = 0;
}

static void __attribute__((format(printf, 2, 3))) sb_printf(struct sb *s, const char *fmt, ...)
{
	va_list ap;
	char small[512];
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		sb_add(s, small, (size_t)n);
		return;
	}
	xgrow((void **)&s->buf, &s->cap, s->len + (size_t)n + 1, 1);
	va_start(ap, fmt);
	vsnprintf(s->buf + s->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	s->len += (size_t)n;
}

/* Go's text/tabwriter with minwidth 1, tabwidth 8, padding 1, padchar '\t', flags 0, as
 * runtime/pprof uses it: tab-terminated cells of consecutive lines form columns, each as
 * wide as its widest cell plus one and padded with tabs to a multiple of 8; the cell after a
 * line's last tab is not aligned; a line of one cell ends the block (text/tabwriter Write,
 * Flush, format, writeLines, writePadding). */
struct tw_cell {
	size_t off, len;
	int width; /* runes */
};
struct tw {
	struct sb *out;
	struct sb text;
	struct tw_cell *cells;
	size_t ncells, ccap;
	size_t *line0; /* line i's cells are [line0[i], line0[i + 1]), the last one open */
	size_t nlines, lcap;
	size_t open; /* where the cell being written starts in text */
	int *widths;
	size_t nwidths, wcap;
};

static void tw_init(struct tw *w, struct sb *out)
{
	memset(w, 0, sizeof(*w));
	w->out = out;
	xgrow((void **)&w->line0, &w->lcap, 1, sizeof(size_t));
	w->line0[0] = 0;
	w->nlines = 1;
}

static int runes(const char *s, size_t n)
{
	int r = 0;
	size_t i;

	for (i = 0; i < n; i++)
		r += ((unsigned char)s[i] & 0xc0) != 0x80;
	return r;
}

static size_t tw_cells(const struct tw *w, size_t i)
{
	return (i + 1 < w->nlines ? w->line0[i + 1] : w->ncells) - w->line0[i];
}

static void tw_pad(struct tw *w, int textw, int cellw)
{
	int n;

	cellw = (cellw + 7) / 8 * 8;
	n = cellw - textw;
	for (n = (n + 7) / 8; n > 0; n--)
		sb_add(w->out, "\t", 1);
}

static void tw_write_lines(struct tw *w, size_t l0, size_t l1)
{
	size_t i, j;

	for (i = l0; i < l1; i++) {
		size_t nc = tw_cells(w, i);

		for (j = 0; j < nc; j++) {
			const struct tw_cell *c = &w->cells[w->line0[i] + j];

			sb_add(w->out, w->text.buf + c->off, c->len);
			if (j < w->nwidths)
				tw_pad(w, c->width, w->widths[j]);
		}
		if (i + 1 < w->nlines) /* the last buffered line has no newline yet */
			sb_add(w->out, "\n", 1);
	}
}

static size_t tw_format(struct tw *w, size_t l0, size_t l1)
{
	size_t col = w->nwidths, ln;

	for (ln = l0; ln < l1; ln++) {
		int width = 1; /* minwidth */

		if (col + 1 >= tw_cells(w, ln))
			continue;
		tw_write_lines(w, l0, ln);
		l0 = ln;
		for (; ln < l1; ln++) {
			const struct tw_cell *c;

			if (col + 1 >= tw_cells(w, ln))
				break;
			c = &w->cells[w->line0[ln] + col];
			if (c->width + 1 > width)
				width = c->width + 1;
		}
		xgrow((void **)&w->widths, &w->wcap, w->nwidths + 1, sizeof(int));
		w->widths[w->nwidths++] = width;
		tw_format(w, l0, ln);
		w->nwidths--;
		l0 = ln;
	}
	tw_write_lines(w, l0, l1);
	return l1;
}

static void tw_flush(struct tw *w)
{
	tw_format(w, 0, w->nlines);
	w->ncells = w->text.len = w->open = 0;
	w->nlines = 1;
	w->line0[0] = 0;
}

static void tw_add(struct tw *w, const char *s)
{
	for (; *s; s++) {
		size_t n;

		if (*s != '\t' && *s != '\n') {
			sb_add(&w->text, s, 1);
			continue;
		}
		xgrow((void **)&w->cells, &w->ccap, w->ncells + 1, sizeof(*w->cells));
		w->cells[w->ncells++] =
			(struct tw_cell){ w->open, w->text.len - w->open,
					  runes(w->text.buf ? w->text.buf + w->open : "",
						w->text.len - w->open) };
		w->open = w->text.len;
		if (*s == '\t')
			continue;
		n = tw_cells(w, w->nlines - 1);
		xgrow((void **)&w->line0, &w->lcap, w->nlines + 1, sizeof(size_t));
		w->line0[w->nlines++] = w->ncells;
		if (n == 1)
			tw_flush(w);
	}
}

static void __attribute__((format(printf, 2, 3))) tw_printf(struct tw *w, const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	buf = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(buf, (size_t)n + 1, fmt, ap);
	va_end(ap);
	tw_add(w, buf);
	free(buf);
}

static void tw_end(struct tw *w)
{
	tw_flush(w);
	free(w->text.buf);
	free(w->cells);
	free(w->line0);
	free(w->widths);
}

/* ---- the process ---- */

struct goprof {
	pid_t pid;
	struct symbolizer *sym;
	struct symfile *sf;
	struct goprof_sym gs;
	struct gomem *gm;
	int gm_err;
	char gm_why[256];
	struct gosnap *snap;
	size_t max_records;      /* goprof_set_max_records; 0: the readers' own limits */
};

struct goprof *goprof_open(pid_t pid, int *err, char *why, size_t whylen)
{
	struct goprof *p;
	const char *ver;
	int rc;

	if (kill(pid, 0) != 0 && errno == ESRCH) {
		snprintf(why, whylen, "no process %d", (int)pid);
		*err = GOPROF_E_TARGET;
		return NULL;
	}
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->sym = symbolizer_new(pid);
	p->sf = symbolizer_main_file(p->sym);
	if (!p->sf) {
		snprintf(why, whylen, "cannot open the executable of process %d", (int)pid);
		*err = GOPROF_E_TARGET;
		goto fail;
	}
	ver = symfile_go_version(p->sf);
	p->gs.pcln = symfile_gopcln(p->sf);
	if (!ver || !p->gs.pcln) {
		snprintf(why, whylen, "process %d is not a Go program (no Go build information)",
			 (int)pid);
		*err = GOPROF_E_TARGET;
		goto fail;
	}
	p->gs.go_minor = util_go_minor(ver);
	rc = gort_exe_bias(pid, p->sf, &p->gs.bias);
	if (rc) {
		snprintf(why, whylen, "cannot find the executable's mapping in process %d",
			 (int)pid);
		*err = GOPROF_E_TARGET;
		goto fail;
	}
	return p;
fail:
	goprof_close(p);
	return NULL;
}

void goprof_close(struct goprof *p)
{
	if (!p)
		return;
	gomem_free(p->gm);
	gosnap_free(p->snap);
	symbolizer_free(p->sym);
	free(p);
}

static int errno_kind(int e)
{
	return e == ESRCH || e == ENOTSUP  ? GOPROF_E_TARGET
	       : e == EPERM || e == EACCES ? GOPROF_E_PERM
					   : GOPROF_E_READ;
}

static struct gomem *need_gomem(struct goprof *p, int *err, char *why, size_t whylen)
{
	if (!p->gm && !p->gm_err) {
		p->gm = gomem_new(p->pid, p->sf, p->gm_why, sizeof(p->gm_why));
		if (!p->gm)
			p->gm_err = errno_kind(errno);
		else
			p->gs.profstackdepth = gomem_target(p->gm)->profstackdepth;
	}
	if (!p->gm) {
		*err = p->gm_err;
		snprintf(why, whylen, "process %d: %s", (int)p->pid, p->gm_why);
	}
	return p->gm;
}

void goprof_set_max_records(struct goprof *p, size_t max)
{
	p->max_records = max;
}

struct gomem *goprof_gomem(struct goprof *p)
{
	char why[256];
	int err;

	return need_gomem(p, &err, why, sizeof(why));
}

/* The executable mappings as runtime/pprof reads /proc/self/maps (parseProcSelfMaps):
 * 'x' permission, a file or [name]; inode 0 without a name left out; the GNU build id
 * of a file (elfBuildID), "" otherwise. */
static size_t target_maps(struct goprof *p, struct gpb_map **out)
{
	struct maps *m = maps_load(p->pid);
	struct gpb_map *v = NULL;
	size_t i, n = 0, cap = 0;

	*out = NULL;
	if (!m)
		return 0;
	for (i = 0; i < maps_count(m); i++) {
		const struct maps_entry *e = maps_at(m, i);
		const struct sym_module *mod = NULL;
		struct sym_frame fr;

		if (!(e->perms & MAPS_X) || (e->inode == 0 && !e->path[0]))
			continue;
		xgrow((void **)&v, &cap, n + 1, sizeof(*v));
		v[n].start = e->start;
		v[n].end = e->end;
		v[n].offset = e->pgoff;
		v[n].file = xstrdup(e->path);
		v[n].build_id = "";
		if (e->path[0] == '/' &&
		    symbolizer_lookup(p->sym, e->start, 0, &mod, &fr, 1) >= 0 && mod &&
		    mod->build_id && !strchr(mod->build_id, '/'))
			v[n].build_id = mod->build_id;
		v[n].build_id = xstrdup(v[n].build_id);
		n++;
	}
	maps_free(m);
	*out = v;
	return n;
}

static void free_maps(struct gpb_map *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free((char *)v[i].file);
		free((char *)v[i].build_id);
	}
	free(v);
}

static struct gpb *builder(struct goprof *p, const struct goprof_sym *sym)
{
	struct gpb_map *maps = NULL;
	size_t n = p ? target_maps(p, &maps) : 0;
	struct gpb *b = gpb_new(sym->pcln, sym->bias, sym->go_minor, maps, n);

	free_maps(maps, n);
	return b;
}

/* ---- heap ---- */

/* Go's int64(f) on amd64: CVTTSD2SQ, which gives 0x8000000000000000 for NaN and for values
 * out of range (C leaves those undefined; garbage counts bring them). */
static int64_t go_int64(double f)
{
	if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0))
		return INT64_MIN;
	return (int64_t)f;
}

/* Go's int64 arithmetic wraps; C's signed overflow is undefined (garbage counts). */
static int64_t sub64(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

void goprof_scale_heap(int64_t count, int64_t size, int64_t rate, int64_t *oc, int64_t *os)
{
	double avg, scale;

	if (count == 0 || size == 0) {
		*oc = *os = 0;
		return;
	}
	if (rate <= 1) {
		*oc = count;
		*os = size;
		return;
	}
	avg = (double)size / (double)count;
	scale = 1 / (1 - exp(-avg / (double)rate));
	*oc = go_int64((double)count * scale);
	*os = go_int64((double)size * scale);
}

static int runtime_name(int go_minor, const char *name)
{
	return !strncmp(name, "runtime.", 8) ||
	       (go_minor >= 24 && !strncmp(name, "internal/runtime/", 17));
}

static void vt(struct prof *p, struct prof_value_type *t, const char *type, const char *unit)
{
	t->type = prof_str(p, type);
	t->unit = prof_str(p, unit);
}

static struct prof *heap_profile(struct gpb *b, const struct goprof_sym *sym,
				 const struct gomem_snap *s, const char *default_type)
{
	struct prof *p = gpb_prof(b);
	struct prof_value_type types[4], period;
	uint64_t *locs = xmalloc(MAX_LOCS * sizeof(*locs));
	size_t i;

	vt(p, &types[0], "alloc_objects", "count");
	vt(p, &types[1], "alloc_space", "bytes");
	vt(p, &types[2], "inuse_objects", "count");
	vt(p, &types[3], "inuse_space", "bytes");
	vt(p, &period, "space", "bytes");
	prof_set_sample_types(p, types, 4);
	prof_set_period(p, period, s->rate);
	if (default_type)
		prof_set_default_sample_type(p, prof_str(p, default_type));
	for (i = 0; i < s->n; i++) {
		const struct gomem_bucket *r = &s->b[i];
		const uint64_t *stk = s->pcs + r->stk0;
		size_t n = r->nstk, k, nl = 0;
		int64_t v[4];
		struct prof_label lab = { prof_str(p, "bytes"), 0, 0, 0 };
		int hide;

		if (sym->go_minor <= 22) /* MemProfileRecord.Stack0 [32]uintptr */
			n = GP_MIN(n, (size_t)32);
		for (hide = 1; hide >= 0; hide--) {
			size_t from = 0;

			if (hide) {
				for (k = 0; k < n; k++) {
					const char *f = gpb_func_for_pc(b, stk[k]);

					if (f && runtime_name(sym->go_minor, f))
						continue;
					from = k;
					break;
				}
			}
			nl = gpb_locs(b, stk + from, n - from, locs, MAX_LOCS);
			if (nl)
				break;
		}
		goprof_scale_heap(r->allocs, r->alloc_bytes, s->rate, &v[0], &v[1]);
		goprof_scale_heap(sub64(r->allocs, r->frees), sub64(r->alloc_bytes, r->free_bytes),
				  s->rate, &v[2], &v[3]);
		if (sym->go_minor >= 27)
			lab.num = (int64_t)r->size;
		else
			lab.num = r->allocs > 0 ? r->alloc_bytes / r->allocs : 0;
		prof_add_sample(p, locs, nl, v, &lab, lab.num || sym->go_minor >= 27 ? 1 : 0);
	}
	prof_set_time(p, s->time_ns, 0);
	free(locs);
	return gpb_finish(b);
}

struct prof *goprof_heap_profile(const struct goprof_sym *sym, const struct gomem_snap *s,
				 const char *default_type)
{
	return heap_profile(builder(NULL, sym), sym, s, default_type);
}

/* ---- block and mutex ---- */

/* The records as runtime/pprof gets them: counts as BlockProfile reports them. */
static int64_t record_count(const struct gomem_snap *s, const struct gomem_bucket *r)
{
	int64_t c = go_int64(r->count);

	return s->kind == GOMEM_BLOCK && c == 0 ? 1 : c;
}

static int cmp_cycles_desc(const void *a, const void *b)
{
	const struct gomem_bucket *x = *(const struct gomem_bucket *const *)a;
	const struct gomem_bucket *y = *(const struct gomem_bucket *const *)b;

	return x->cycles < y->cycles ? 1 : x->cycles > y->cycles ? -1 : 0;
}

static const struct gomem_bucket **by_cycles(const struct gomem_snap *s)
{
	const struct gomem_bucket **v = xmalloc((s->n + 1) * sizeof(*v));
	size_t i;

	for (i = 0; i < s->n; i++)
		v[i] = &s->b[i];
	qsort(v, s->n, sizeof(*v), cmp_cycles_desc);
	return v;
}

static size_t stack_depth(const struct goprof_sym *sym)
{
	return sym->profstackdepth > 0 ? (size_t)sym->profstackdepth : DEFAULT_STACK_DEPTH;
}

/* A record's stack as runtime/pprof prints and encodes it: as stored through go1.22;
 * from go1.23 expanded for inlining, at most profstackdepth frames. */
static size_t record_stack(struct gpb *b, const struct goprof_sym *sym, const struct gomem_snap *s,
			   const struct gomem_bucket *r, uint64_t *out)
{
	const uint64_t *stk = s->pcs + r->stk0;

	if (sym->go_minor <= 22) {
		size_t n = GP_MIN((size_t)r->nstk, (size_t)32);

		memcpy(out, stk, n * sizeof(*out));
		return n;
	}
	return gpb_expand(b, stk, r->nstk, out, stack_depth(sym));
}

static struct prof *contention_profile(struct gpb *b, const struct goprof_sym *sym,
				       const struct gomem_snap *s)
{
	struct prof *p = gpb_prof(b);
	struct prof_value_type types[2], period;
	uint64_t *locs = xmalloc(MAX_LOCS * sizeof(*locs));
	uint64_t *stk = xmalloc((GOMEM_MAX_STACK + MAX_LOCS) * sizeof(*stk));
	const struct gomem_bucket **v = by_cycles(s);
	double ghz = (double)s->ticks_per_sec / 1e9;
	size_t i;

	vt(p, &types[0], "contentions", "count");
	vt(p, &types[1], "delay", "nanoseconds");
	vt(p, &period, "contentions", "count");
	prof_set_sample_types(p, types, 2);
	prof_set_period(p, period, 1);
	for (i = 0; i < s->n; i++) {
		const struct gomem_bucket *r = v[i];
		size_t n = record_stack(b, sym, s, r, stk), nl;
		int64_t val[2];
		double ns = ghz > 0 ? (double)r->cycles / ghz : 0;

		val[0] = record_count(s, r);
		if (sym->go_minor <= 19 && s->kind == GOMEM_MUTEX) { /* scaleMutexProfile */
			val[0] = (int64_t)((uint64_t)val[0] * (uint64_t)s->rate); /* wraps, as Go */
			ns *= (double)s->rate;
		}
		val[1] = go_int64(ns);
		nl = gpb_locs(b, stk, n, locs, MAX_LOCS);
		prof_add_sample(p, locs, nl, val, NULL, 0);
	}
	prof_set_time(p, s->time_ns, 0);
	free(v);
	free(stk);
	free(locs);
	return gpb_finish(b);
}

struct prof *goprof_contention_profile(const struct goprof_sym *sym, const struct gomem_snap *s)
{
	return contention_profile(builder(NULL, sym), sym, s);
}

/* ---- printStackRecord ---- */

struct psr {
	struct gpb *b;
	struct tw *w;
	int show, printed, go_minor;
};

static int psr_frame(void *arg, const struct gpb_frame *f)
{
	struct psr *a = arg;
	char nb[512];

	if (!*f->name) {
		a->show = 1;
		a->printed = 1;
		tw_printf(a->w, "#\t%#" PRIx64 "\n", f->pc);
		return 0;
	}
	if (!strcmp(f->name, "runtime.goexit") || !(a->show || !runtime_name(a->go_minor, f->name)))
		return 0;
	a->show = 1;
	a->printed = 1;
	/* fmt's %#x writes 0 as 0x0, C's as 0 (a frame at its entry: go1.19's
	 * systemstack_switch below a cgo callback) */
	tw_printf(a->w, "#\t%#" PRIx64 "\t%s+0x%" PRIx64 "\t%s:%d\n", f->pc,
		  gpb_print_name(a->b, f->name, nb, sizeof(nb)), f->pc - f->entry, f->file,
		  f->line);
	return 0;
}

/* printStackRecord(w, stk, allFrames): the frames of CallersFrames(stk), leading runtime
 * frames hidden unless allFrames (and shown after all when nothing else would be). */
static void print_stack(struct gpb *b, struct tw *w, const uint64_t *stk, size_t n, int all)
{
	struct psr a = { b, w, all, 0, gpb_go_minor(b) };

	gpb_frames(b, stk, n, psr_frame, &a);
	if (!a.show) {
		print_stack(b, w, stk, n, 1);
		return;
	}
	tw_add(w, "\n");
}

static void pcs_line(struct tw *w, const uint64_t *stk, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tw_printf(w, " %#" PRIx64, stk[i]);
	tw_add(w, "\n");
}

/* ---- debug=1 texts ---- */

static int64_t inuse_bytes(const struct gomem_bucket *r)
{
	return sub64(r->alloc_bytes, r->free_bytes);
}

static int cmp_inuse_desc(const void *a, const void *b)
{
	const struct gomem_bucket *x = *(const struct gomem_bucket *const *)a;
	const struct gomem_bucket *y = *(const struct gomem_bucket *const *)b;

	return inuse_bytes(x) < inuse_bytes(y) ? 1 : inuse_bytes(x) > inuse_bytes(y) ? -1 : 0;
}

static int cmp_inuse_asc(const void *a, const void *b)
{
	return cmp_inuse_desc(b, a);
}

/* VmHWM of /proc/PID/status: the peak resident set, what getrusage's ru_maxrss gives the
 * process itself (addMaxRSS). -1 when unknown. */
static int64_t max_rss(pid_t pid)
{
	char path[64], line[256];
	int64_t kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmHWM: %" SCNd64, &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

static void heap_text(struct gpb *b, const struct goprof_sym *sym, const struct gomem_snap *s,
		      pid_t pid, struct sb *out)
{
	const struct gomem_bucket **v = xmalloc((s->n + 1) * sizeof(*v));
	int64_t io = 0, ib = 0, ao = 0, ab = 0, rss;
	struct tw w;
	size_t i;

	tw_init(&w, out);
	for (i = 0; i < s->n; i++) {
		v[i] = &s->b[i];
		ao = (int64_t)((uint64_t)ao + (uint64_t)s->b[i].allocs);
		ab = (int64_t)((uint64_t)ab + (uint64_t)s->b[i].alloc_bytes);
		io = (int64_t)((uint64_t)io + (uint64_t)sub64(s->b[i].allocs, s->b[i].frees));
		ib = (int64_t)((uint64_t)ib + (uint64_t)inuse_bytes(&s->b[i]));
	}
	qsort(v, s->n, sizeof(*v), sym->go_minor >= 23 ? cmp_inuse_asc : cmp_inuse_desc);
	if (sym->go_minor >= 21 && ib == ab)
		ab = (int64_t)((uint64_t)ab + 1);
	tw_printf(&w,
		  "heap profile: %" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64
		  "] @ heap/%" PRId64 "\n",
		  io, ib, ao, ab, (int64_t)(2 * (uint64_t)s->rate));
	for (i = 0; i < s->n; i++) {
		const struct gomem_bucket *r = v[i];
		size_t n = sym->go_minor <= 22 ? GP_MIN((size_t)r->nstk, (size_t)32) : r->nstk;

		tw_printf(&w, "%" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @",
			  sub64(r->allocs, r->frees), inuse_bytes(r), r->allocs, r->alloc_bytes);
		pcs_line(&w, s->pcs + r->stk0, n);
		print_stack(b, &w, s->pcs + r->stk0, n, 0);
	}
	/* runtime.MemStats is the process's own accounting (ReadMemStats stops the world
	 * to add it up): not read from outside. */
	tw_add(&w, "\n# runtime.MemStats\n# (not read from outside: gotop-perf)\n");
	rss = max_rss(pid);
	if (rss >= 0)
		tw_printf(&w, "# MaxRSS = %" PRId64 "\n", rss);
	tw_end(&w);
	free(v);
}

static void contention_text(struct gpb *b, const struct goprof_sym *sym, const struct gomem_snap *s,
			    struct sb *out)
{
	const struct gomem_bucket **v = by_cycles(s);
	uint64_t *stk = xmalloc((GOMEM_MAX_STACK + MAX_LOCS) * sizeof(*stk));
	struct tw w;
	size_t i;

	tw_init(&w, out);
	tw_printf(&w, "--- %s:\n", s->kind == GOMEM_MUTEX ? "mutex" : "contention");
	tw_printf(&w, "cycles/second=%" PRId64 "\n", s->ticks_per_sec);
	if (s->kind == GOMEM_MUTEX)
		tw_printf(&w, "sampling period=%" PRId64 "\n", s->rate);
	for (i = 0; i < s->n; i++) {
		size_t n = record_stack(b, sym, s, v[i], stk);

		tw_printf(&w, "%" PRId64 " %" PRId64 " @", v[i]->cycles, record_count(s, v[i]));
		pcs_line(&w, stk, n);
		print_stack(b, &w, stk, n, 1);
	}
	tw_end(&w);
	free(stk);
	free(v);
}

/* ---- goroutines ---- */

/* elideWrapperCalling(callee): a wrapper frame is left out unless it called a panic
 * function (runtime/traceback.go; the rule is symtab.h's). */
static int elide_callee(const char *callee)
{
	return !sym_go_panic_func(callee);
}

/* isSystemGoroutine(gp, false): started in the runtime, but for runtime.main, coroutine
 * starts and the finalizer and cleanup goroutines while they run user code (not known
 * from outside: taken as system, as they are when idle). */
static int system_goroutine(struct gpb *b, uint64_t startpc)
{
	const char *f = gpb_func_for_pc(b, startpc);

	if (!f)
		return 0;
	if (!strcmp(f, "runtime.main") || !strcmp(f, "runtime.corostart") ||
	    !strcmp(f, "runtime.handleAsyncEvent"))
		return 0;
	return !strncmp(f, "runtime.", 8);
}

/* tracebackPCs over a frame-pointer stack of return addresses: every inlined level of
 * each as a "virtual" pc (uf.pc + 1), wrappers elided unless they called a panic
 * function; at most max. */
static size_t logical_stack(struct gpb *b, const struct goprof_sym *sym, const uint64_t *pcs,
			    size_t n, uint64_t *out, size_t max)
{
	struct gopcln_frame lv[64];
	const char *callee = NULL;
	size_t i, k = 0;

	for (i = 0; i < n && k < max; i++) {
		int nl, j;

		nl = sym->pcln && pcs[i] > sym->bias
			     ? gopcln_frames(sym->pcln, pcs[i] - 1 - sym->bias, lv, 64)
			     : 0;
		if (nl <= 0) {
			out[k++] = pcs[i];
			callee = NULL;
			continue;
		}
		for (j = 0; j < nl && k < max; j++) {
			if (!(lv[j].wrapper && elide_callee(callee)))
				out[k++] = lv[j].pc + sym->bias + 1;
			callee = lv[j].func;
		}
	}
	return k;
}

/* strconv.Quote, as fmt's %q writes a label key or value. */
static void go_quote(struct sb *s, const char *t, size_t n)
{
	size_t i;

	sb_add(s, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c == '"' || c == '\\') {
			sb_printf(s, "\\%c", c);
		} else if (c >= 0x20 && c < 0x7f) {
			sb_add(s, (const char *)&c, 1);
		} else if (c >= 0x80) {
			/* a valid UTF-8 sequence stays, a stray byte is escaped */
			size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0, j;

			for (j = 1; len && j < len; j++)
				if (i + j >= n || ((unsigned char)t[i + j] & 0xc0) != 0x80)
					len = 0;
			if (len && c < 0xf5) {
				sb_add(s, t + i, len);
				i += len - 1;
			} else {
				sb_printf(s, "\\x%02x", c);
			}
		} else {
			static const char esc[] = "abtnvfr";

			if (c >= 7 && c <= 13)
				sb_printf(s, "\\%c", esc[c - 7]);
			else
				sb_printf(s, "\\x%02x", c);
		}
	}
	sb_add(s, "\"", 1);
}

/* labelMap.String(): {"k":"v", ...}, pairs sorted as strings. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void labels_string(struct sb *s, const struct gort_labels *l)
{
	char **kv = xcalloc(l->n + 1, sizeof(*kv));
	uint32_t i;

	for (i = 0; i < l->n; i++) {
		struct sb one = { 0 };

		go_quote(&one, l->pairs[i].key, l->pairs[i].klen);
		sb_add(&one, ":", 1);
		go_quote(&one, l->pairs[i].value, l->pairs[i].vlen);
		kv[i] = one.buf;
	}
	qsort(kv, l->n, sizeof(*kv), cmp_str);
	sb_add(s, "{", 1);
	for (i = 0; i < l->n; i++) {
		if (i)
			sb_add(s, ", ", 2);
		sb_add(s, kv[i], strlen(kv[i]));
		free(kv[i]);
	}
	sb_add(s, "}", 1);
	free(kv);
}

struct gkey {
	char *key;      /* printCountProfile's key: "@ 0x.. 0x.." and the labels line */
	size_t first;   /* the goroutine it was first seen with */
	uint32_t s0, n; /* its logical stack in the stack buffer */
	int64_t count;
};

static int cmp_gkey(const void *a, const void *b)
{
	const struct gkey *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->key, y->key);
}

struct gprofile {
	struct gkey *keys;
	size_t nkeys, total;
	uint64_t *stk;
	size_t nstk;
	uint64_t running; /* running on a thread: no stack from outside, not counted */
};

static void gprofile_free(struct gprofile *g)
{
	size_t i;

	for (i = 0; i < g->nkeys; i++)
		free(g->keys[i].key);
	free(g->keys);
	free(g->stk);
}

/* The records of goroutineProfileWithLabels and printCountProfile's grouping. */
static void group_goroutines(struct gpb *b, const struct goprof_sym *sym,
			     const struct gosnap_result *r, struct gprofile *out)
{
	size_t depth = sym->go_minor <= 22 ? 32 : stack_depth(sym), kcap = 0, scap = 0, i;
	struct hashmap idx = { 0 };
	uint64_t *tmp = xmalloc((depth + 1) * sizeof(*tmp));

	memset(out, 0, sizeof(*out));
	for (i = 0; i < r->n; i++) {
		const struct gosnap_g *g = &r->g[i];
		struct sb key = { 0 };
		size_t n, k;
		uint64_t h, *slot;
		int created;

		if (g->state == GOSNAP_DEAD || system_goroutine(b, g->startpc))
			continue;
		if (g->flags & GOSNAP_NO_STACK) {
			out->running++;
			continue;
		}
		n = logical_stack(b, sym, r->pcs + g->frame0, g->nframes, tmp, depth);
		sb_add(&key, "@", 1);
		for (k = 0; k < n; k++)
			sb_printf(&key, " %#" PRIx64, tmp[k]);
		if (g->labels) {
			sb_add(&key, "\n# labels: ", 11);
			labels_string(&key, g->labels);
		}
		out->total++;
		h = util_hash(key.buf, key.len, 0x676f72) | 1;
		for (slot = hashmap_put(&idx, h, &created); !created;
		     h++, slot = hashmap_put(&idx, h, &created))
			if (!strcmp(out->keys[*slot - 1].key, key.buf))
				break;
		if (!created) {
			out->keys[*slot - 1].count++;
			free(key.buf);
			continue;
		}
		xgrow((void **)&out->keys, &kcap, out->nkeys + 1, sizeof(*out->keys));
		xgrow((void **)&out->stk, &scap, out->nstk + n + 1, sizeof(*out->stk));
		memcpy(out->stk + out->nstk, tmp, n * sizeof(*tmp));
		out->keys[out->nkeys] =
			(struct gkey){ key.buf, i, (uint32_t)out->nstk, (uint32_t)n, 1 };
		out->nstk += n;
		*slot = ++out->nkeys;
	}
	qsort(out->keys, out->nkeys, sizeof(*out->keys), cmp_gkey);
	hashmap_free(&idx);
	free(tmp);
}

static struct prof *goroutine_profile(struct gpb *b, const struct gosnap_result *r,
				      const struct gprofile *gp)
{
	struct prof *p = gpb_prof(b);
	struct prof_value_type t;
	uint64_t *locs = xmalloc(MAX_LOCS * sizeof(*locs));
	size_t i;

	vt(p, &t, "goroutine", "count");
	prof_set_sample_types(p, &t, 1);
	prof_set_period(p, t, 1);
	for (i = 0; i < gp->nkeys; i++) {
		const struct gkey *k = &gp->keys[i];
		const struct gort_labels *l = r->g[k->first].labels;
		struct prof_label lab[GORT_MAX_LABELS];
		size_t nl = gpb_locs(b, gp->stk + k->s0, k->n, locs, MAX_LOCS), j, nlab = 0;
		int64_t v = k->count;

		for (j = 0; l && j < l->n && j < GORT_MAX_LABELS; j++)
			lab[nlab++] = (struct prof_label){
				prof_strn(p, l->pairs[j].key, l->pairs[j].klen),
				prof_strn(p, l->pairs[j].value, l->pairs[j].vlen), 0, 0
			};
		prof_add_sample(p, locs, nl, &v, lab, nlab);
	}
	prof_set_time(p, (int64_t)util_wall_ns(), 0);
	free(locs);
	return gpb_finish(b);
}

static void goroutine_text1(struct gpb *b, const struct gprofile *gp, struct sb *out)
{
	struct tw w;
	size_t i;

	tw_init(&w, out);
	tw_printf(&w, "goroutine profile: total %zu\n", gp->total);
	for (i = 0; i < gp->nkeys; i++) {
		tw_printf(&w, "%" PRId64 " %s\n", gp->keys[i].count, gp->keys[i].key);
		print_stack(b, &w, gp->stk + gp->keys[i].s0, gp->keys[i].n, 0);
	}
	tw_end(&w);
}

/* showfuncinfo at traceback level 1 (runtime/traceback.go): wrappers elided, runtime
 * frames hidden unless exported (runtime.X), runtime.gopanic shown past the first frame,
 * names without a dot hidden. */
static int show_frame(const char *name, int first, int wrapper, const char *callee)
{
	if (wrapper && elide_callee(callee))
		return 0;
	if (!strcmp(name, "runtime.gopanic") && !first)
		return 1;
	if (!strchr(name, '.'))
		return 0;
	return strncmp(name, "runtime.", 8) || (name[8] >= 'A' && name[8] <= 'Z');
}

/* printcreatedby: none for goroutine 1 or a wrapper creator (GOSNAP_CREATOR_HIDDEN), nor for
 * a creator in the runtime's unexported functions (showframe). */
static void creator_line(struct gpb *b, const struct goprof_sym *sym, const struct gosnap_g *g,
			 struct sb *out)
{
	struct gopcln_frame lv[64];
	struct gopcln_func fn;
	uint64_t pc = g->gopc, tracepc;
	char nb[512];
	int nl;

	if (!pc || (g->flags & GOSNAP_CREATOR_HIDDEN) || pc < sym->bias ||
	    gopcln_find_func(sym->pcln, pc - sym->bias, &fn))
		return;
	if (!show_frame(fn.name, 0, 0, NULL))
		return;
	tracepc = pc > fn.entry + sym->bias ? pc - 1 : pc;
	nl = gopcln_frames(sym->pcln, tracepc - sym->bias, lv, 64);
	sb_printf(out, "created by %s",
		  !strcmp(fn.name, "runtime.gopanic") && sym->go_minor >= 21
			  ? "panic"
			  : gpb_print_name(b, fn.name, nb, sizeof(nb)));
	if (sym->go_minor >= 21 && g->parent_goid)
		sb_printf(out, " in goroutine %" PRIu64, g->parent_goid);
	sb_printf(out, "\n\t%s:%d", nl > 0 ? lv[0].file : "?", nl > 0 ? lv[0].line : 0);
	if (pc > fn.entry + sym->bias)
		sb_printf(out, " +%#" PRIx64, pc - fn.entry - sym->bias);
	sb_add(out, "\n", 1);
}

/* traceback at level 1 for one goroutine: its frames as Go prints them (arguments are not
 * read from outside: every frame shows "(...)"). */
static void traceback(struct gpb *b, const struct goprof_sym *sym, const struct gosnap_result *r,
		      const struct gosnap_g *g, struct sb *out)
{
	struct gopcln_frame lv[64];
	struct gopcln_func fn;
	char **fr = NULL, nb[512];
	size_t nfr = 0, cap = 0, i, f;
	int pass;

	for (pass = 0; pass < 2 && !nfr; pass++) {
		const char *callee = NULL;
		size_t n = 0;

		for (i = 0; i < g->nframes; i++) {
			uint64_t pc = r->pcs[g->frame0 + i], sympc;
			int nl, j;

			if (!sym->pcln || pc <= sym->bias ||
			    gopcln_find_func(sym->pcln, pc - sym->bias, &fn))
				continue;
			sympc = pc > fn.entry + sym->bias ? pc - 1 : pc;
			nl = gopcln_frames(sym->pcln, sympc - sym->bias, lv, 64);
			for (j = 0; j < nl; j++) {
				struct sb t = { 0 };
				int physical = j == nl - 1;
				const char *c = callee;

				callee = lv[j].func;
				if (!strcmp(lv[j].func, "runtime.goexit") && physical)
					continue; /* a top frame: Go's unwinder ends there */
				if (!pass && !show_frame(lv[j].func, n == 0, lv[j].wrapper, c))
					continue;
				n++;
				sb_printf(&t, "%s(...)\n\t%s:%d",
					  !strcmp(lv[j].func, "runtime.gopanic")
						  ? "panic"
						  : gpb_print_name(b, lv[j].func, nb, sizeof(nb)),
					  lv[j].file, lv[j].line);
				if (physical && pc > fn.entry + sym->bias)
					sb_printf(&t, " +%#" PRIx64, pc - fn.entry - sym->bias);
				sb_add(&t, "\n", 1);
				xgrow((void **)&fr, &cap, nfr + 1, sizeof(*fr));
				fr[nfr++] = t.buf;
			}
		}
	}
	if (sym->go_minor >= 21 && nfr > 100) { /* tracebackInnerFrames, tracebackOuterFrames */
		for (f = 0; f < 50; f++)
			sb_add(out, fr[f], strlen(fr[f]));
		sb_printf(out, "...%zu frames elided...\n", nfr - 100);
		for (f = nfr - 50; f < nfr; f++)
			sb_add(out, fr[f], strlen(fr[f]));
	} else {
		for (f = 0; f < nfr && f < 100; f++)
			sb_add(out, fr[f], strlen(fr[f]));
		if (nfr >= 100)
			sb_add(out, "...additional frames elided...\n", 31);
	}
	if (g->flags & GOSNAP_STACK_CUT)
		sb_add(out, "...additional frames not read (gotop-perf)...\n", 46);
	for (f = 0; f < nfr; f++)
		free(fr[f]);
	free(fr);
	creator_line(b, sym, g, out);
}

/* runtime.Stack(buf, true) (goroutine?debug=2): every goroutine but the runtime's. */
static void goroutine_text2(struct gpb *b, const struct goprof_sym *sym,
			    const struct gosnap_result *r, struct sb *out)
{
	size_t i, shown = 0;

	for (i = 0; i < r->n; i++) {
		const struct gosnap_g *g = &r->g[i];
		int64_t minutes = -1;

		if (g->state == GOSNAP_DEAD || system_goroutine(b, g->startpc))
			continue;
		if (shown++)
			sb_add(out, "\n", 1);
		sb_printf(out, "goroutine %" PRIu64 " [%s", g->goid, gosnap_state_text(g));
		if ((g->state == GOSNAP_WAITING || g->state == GOSNAP_SYSCALL) && g->wait_ns >= 0)
			minutes = g->wait_ns / 60000000000LL;
		if (minutes >= 1)
			sb_printf(out, ", %" PRId64 " minutes", minutes);
		/* go1.19-go1.27 runtime/traceback.go goroutineheader */
		if (g->flags & GOSNAP_LOCKED)
			sb_add(out, ", locked to thread", 18);
		sb_add(out, "]:\n", 3);
		if (g->flags & GOSNAP_NO_STACK) {
			sb_add(out, "\tgoroutine running on other thread; stack unavailable\n", 54);
			creator_line(b, sym, g, out);
			continue;
		}
		traceback(b, sym, r, g, out);
	}
}

/* ---- profiles by name, deltas, answers ---- */

enum { P_HEAP, P_ALLOCS, P_BLOCK, P_MUTEX, P_GOROUTINE };
static const char *const names[] = { "heap", "allocs", "block", "mutex", "goroutine" };

static int profile_index(const char *name)
{
	size_t i;

	for (i = 0; name && i < GP_ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return (int)i;
	return -1;
}

static int kind_of(int which)
{
	return which == P_BLOCK ? GOMEM_BLOCK : which == P_MUTEX ? GOMEM_MUTEX : GOMEM_HEAP;
}

/* A snapshot of the buckets for profile which; the errors goprof_fetch documents. */
static int read_snap(struct goprof *p, int which, struct gomem_snap *s, int *err, char *why,
		     size_t whylen)
{
	struct gomem *gm = need_gomem(p, err, why, whylen);
	int rc;

	if (!gm)
		return -1;
	rc = gomem_read(gm, kind_of(which), p->max_records, s);
	if (rc == -ENOENT && which != P_HEAP) {
		/* No list: the program has no such events (blockevent or mutexevent not
		 * linked): an empty profile, as Go's. */
		memset(s, 0, sizeof(*s));
		s->kind = kind_of(which);
		s->time_ns = (int64_t)util_wall_ns();
		return 0;
	}
	if (rc) {
		*err = errno_kind(-rc);
		snprintf(why, whylen, "process %d: cannot read the %s profile: %s", (int)p->pid,
			 names[which],
			 rc == -EAGAIN
				 ? "a GC cycle or a flush of the profile ran during every read"
				 : strerror(-rc));
		return -1;
	}
	/* A target that never turned its cycles into time: measure as it would (100 ms). */
	if (which > P_ALLOCS && s->n && !s->ticks_per_sec)
		gomem_ticks(gm, 1, &s->ticks_per_sec);
	/* Rate 0: mallocgc samples nothing. A program that does not link runtime/pprof
	 * (disableMemoryProfiling) may hold a bucket or two from before schedinit set it
	 * (go1.27: mProfStackInit's own allocation), which no one will ever look at. */
	if (which <= P_ALLOCS && s->rate == 0) {
		*err = GOPROF_E_OFF;
		snprintf(why, whylen,
			 "process %d keeps no heap profile: runtime.MemProfileRate is 0 "
			 "(the program does not link runtime/pprof)",
			 (int)p->pid);
		return -1;
	}
	return 0;
}

int goprof_goroutines(struct goprof *p, struct gosnap_result *r, int *err, char *why,
		      size_t whylen)
{
	int rc;

	if (!p->snap) {
		char w[256];

		p->snap = gosnap_new(p->pid, p->sf, w, sizeof(w));
		if (!p->snap) {
			*err = errno_kind(errno);
			snprintf(why, whylen, "process %d: %s", (int)p->pid, w);
			return -1;
		}
	}
	/* Go's goroutine profile and dumps stop the world and list every goroutine; read
	 * without stopping the process, one that changed while read is dropped (torn), and
	 * taken again by the next read. */
	rc = gosnap_take_whole(p->snap, p->max_records, r, GOROUTINE_TRIES);
	if (rc) {
		*err = errno_kind(-rc);
		snprintf(why, whylen, "process %d: cannot read its goroutines: %s", (int)p->pid,
			 rc == -EAGAIN ? "the Go runtime has not started yet" : strerror(-rc));
		return -1;
	}
	return 0;
}

struct prof *goprof_profile(struct goprof *p, const char *name, struct gomem_stats *st,
			    int64_t *rate, int *err, char *why, size_t whylen)
{
	int which = profile_index(name);
	struct gomem_snap s;
	struct prof *out;

	if (st)
		memset(st, 0, sizeof(*st));
	if (rate)
		*rate = 0;
	if (which < 0) {
		*err = GOPROF_E_UNKNOWN;
		snprintf(why, whylen, "Unknown profile");
		return NULL;
	}
	if (which == P_GOROUTINE) {
		struct gosnap_result r;
		struct gprofile gp;
		struct gpb *b;

		if (goprof_goroutines(p, &r, err, why, whylen))
			return NULL;
		if (st)
			st->truncated = r.st.truncated;
		b = builder(p, &p->gs);
		group_goroutines(b, &p->gs, &r, &gp);
		out = goroutine_profile(b, &r, &gp);
		gprofile_free(&gp);
		return out;
	}
	if (read_snap(p, which, &s, err, why, whylen))
		return NULL;
	if (which <= P_ALLOCS)
		out = heap_profile(builder(p, &p->gs), &p->gs, &s,
				   which == P_ALLOCS ? "alloc_space" : NULL);
	else
		out = contention_profile(builder(p, &p->gs), &p->gs, &s);
	if (st)
		*st = s.st;
	if (rate)
		*rate = s.rate;
	return out;
}

struct prof *goprof_delta(const struct prof *before, const struct prof *after)
{
	struct prof *neg = prof_clone(before), *out = prof_clone(after);
	size_t i, ntypes = prof_sample_types(before, NULL), k;
	int64_t t1, d1, t0, d0;

	if (!ntypes)
		ntypes = 1;
	for (i = 0; i < prof_nsamples(neg); i++) {
		struct prof_sample s;
		int64_t v[PROF_MAX_VALUES];

		if (prof_sample_at(neg, i, &s))
			continue;
		for (k = 0; k < ntypes && k < PROF_MAX_VALUES; k++)
			v[k] = -s.values[k];
		prof_set_sample_values(neg, i, v);
	}
	prof_merge(out, neg);
	prof_get_time(after, &t1, &d1);
	prof_get_time(before, &t0, &d0);
	prof_set_time(out, t1, t1 - t0);
	prof_free(neg);
	return out;
}

/* Sleeps s seconds, a tenth at a time so that a cancel is seen; 0 or -1 when cancelled. */
static int wait_seconds(int s, volatile int *cancel)
{
	int i;

	for (i = 0; i < s * 10; i++) {
		struct timespec ts = { 0, 100000000 };

		if (cancel && *cancel)
			return -1;
		nanosleep(&ts, NULL);
	}
	return cancel && *cancel ? -1 : 0;
}

static void answer_text(struct goprof_out *out, struct sb *s)
{
	out->data = (uint8_t *)s->buf;
	out->len = s->len;
	out->content_type = "text/plain; charset=utf-8";
	out->filename[0] = 0;
	if (!out->data) {
		out->data = (uint8_t *)xstrdup("");
		out->len = 0;
	}
}

static int answer_prof(struct goprof_out *out, struct prof *pr, const char *fname, char *why,
		       size_t whylen)
{
	int rc = pprof_gzip(pr, &out->data, &out->len);

	prof_free(pr);
	if (rc) {
		snprintf(why, whylen, "cannot encode the profile: %s", strerror(-rc));
		return GOPROF_E_READ;
	}
	out->content_type = "application/octet-stream";
	snprintf(out->filename, sizeof(out->filename), "%s", fname);
	return GOPROF_E_OK;
}

int goprof_fetch(struct goprof *p, const struct goprof_req *r, struct goprof_out *out, char *why,
		 size_t whylen)
{
	int which = profile_index(r->name), err = GOPROF_E_OK;
	struct prof *pr, *p0;
	struct gomem_snap s;

	memset(out, 0, sizeof(*out));
	if (which < 0) {
		snprintf(why, whylen, "Unknown profile");
		return GOPROF_E_UNKNOWN;
	}
	if (r->seconds < 0 || r->debug < 0) {
		snprintf(why, whylen,
			 r->seconds < 0
				 ? "invalid value for \"seconds\" - must be a positive integer"
				 : "invalid value for \"debug\"");
		return GOPROF_E_REQUEST;
	}
	if (r->seconds > 0) {
		char fname[64];

		if (r->debug) {
			snprintf(why, whylen, "seconds and debug params are incompatible");
			return GOPROF_E_REQUEST;
		}
		p0 = goprof_profile(p, r->name, NULL, NULL, &err, why, whylen);
		if (!p0)
			return err;
		if (wait_seconds(r->seconds, r->cancel)) {
			prof_free(p0);
			snprintf(why, whylen, "interrupted");
			return GOPROF_E_READ;
		}
		pr = goprof_profile(p, r->name, &out->st, &out->rate, &err, why, whylen);
		if (!pr) {
			prof_free(p0);
			return err;
		}
		{
			struct prof *d = goprof_delta(p0, pr);

			prof_free(p0);
			prof_free(pr);
			snprintf(fname, sizeof(fname), "%s-delta", r->name);
			return answer_prof(out, d, fname, why, whylen);
		}
	}
	if (r->debug == 0) {
		pr = goprof_profile(p, r->name, &out->st, &out->rate, &err, why, whylen);
		return pr ? answer_prof(out, pr, r->name, why, whylen) : err;
	}
	/* the text forms */
	{
		struct sb text = { 0 };

		if (which == P_GOROUTINE) {
			struct gosnap_result gr;
			struct gpb *b;

			if (goprof_goroutines(p, &gr, &err, why, whylen))
				return err;
			out->st.truncated = gr.st.truncated;
			b = builder(p, &p->gs);
			if (r->debug >= 2) {
				goroutine_text2(b, &p->gs, &gr, &text);
			} else {
				struct gprofile gp;

				group_goroutines(b, &p->gs, &gr, &gp);
				goroutine_text1(b, &gp, &text);
				gprofile_free(&gp);
			}
			gpb_free(b);
		} else {
			struct gpb *b;

			if (read_snap(p, which, &s, &err, why, whylen))
				return err;
			b = builder(p, &p->gs);
			if (which <= P_ALLOCS)
				heap_text(b, &p->gs, &s, p->pid, &text);
			else
				contention_text(b, &p->gs, &s, &text);
			gpb_free(b);
			out->st = s.st;
			out->rate = s.rate;
		}
		answer_text(out, &text);
	}
	return GOPROF_E_OK;
}
