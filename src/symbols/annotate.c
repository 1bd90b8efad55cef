/* annotate.c: one function as instructions and source lines. The code comes from the
 * file's PT_LOAD bytes (symfile_read), decoded by Capstone (disasm.h); each instruction's
 * frames from symfile_lookup, the one lookup the profile's locations use too, so that the
 * view's lines are the profile's; source files are searched the way go tool pprof does
 * (github.com/google/pprof internal/report/source.go openSourceFile: the recorded path,
 * then under each -source_path with -trim_path removed, then every suffix of the path). */
#include "config.h"
#include "gotop/annotate.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gotop/disasm.h"
#include "gotop/gopclntab.h"
#include "gotop/hashmap.h"
#include "gotop/util.h"

/* Inline chains longer than this keep their innermost frames and the function (as
 * symfile_lookup does). */
#define MAX_FRAMES 16

struct srcfile {
	char *recorded;          /* the path as the binary records it */
	char *found;             /* where it was read from, NULL when not found */
	char *text;
	size_t len;
	size_t *line_off;        /* line i (1-based) starts at line_off[i - 1] */
	size_t nlines;
};

struct annot {
	struct symfile *sf;
	char *name;
	uint64_t start, end;
	struct annot_insn *insns;
	size_t n, nbad;
	struct sym_frame *frames;
	size_t nframes;
	char *text;
	size_t ntext;
	struct srcfile *src;
	size_t nsrc;
	char **paths;            /* the options, copied */
	size_t npaths;
	char **trims;
	size_t ntrims;
	char **goroots;
	size_t ngoroots;
};

int annot_func_at(struct symfile *sf, uint64_t vaddr, uint64_t *start, uint64_t *end,
		  const char **name)
{
	struct gopcln *g = symfile_gopcln(sf);
	struct gopcln_func f;
	uint64_t s, size;
	const char *nm;

	if (g && gopcln_find_func(g, vaddr, &f) == 0 && f.end > f.entry) {
		*start = f.entry;
		*end = f.end;
		if (name)
			*name = f.name;
		return 0;
	}
	nm = symfile_symbol(sf, vaddr, &s, &size);
	if (!nm || !size)
		return -ENOENT;
	*start = s;
	*end = s + size;
	if (name)
		*name = nm;
	return 0;
}

int annot_func_named(struct symfile *sf, const char *name, uint64_t *start, uint64_t *end)
{
	uint64_t v = symfile_symbol_value(sf, name);
	struct gopcln *g;
	size_t i, n;

	if (v && annot_func_at(sf, v, start, end, NULL) == 0 && *start == v)
		return 0;
	g = symfile_gopcln(sf);
	n = g ? gopcln_nfunc(g) : 0;
	for (i = 0; i < n; i++) {
		struct gopcln_func f;

		if (gopcln_func_at(g, i, &f) == 0 && f.name && !strcmp(f.name, name) &&
		    f.end > f.entry) {
			*start = f.entry;
			*end = f.end;
			return 0;
		}
	}
	return -ENOENT;
}

static uint32_t add_text(struct annot *a, size_t *cap, const char *s)
{
	size_t l = strlen(s) + 1;
	uint32_t off = (uint32_t)a->ntext;

	xgrow((void **)&a->text, cap, a->ntext + l, 1);
	memcpy(a->text + a->ntext, s, l);
	a->ntext += l;
	return off;
}

static char **copy_strs(const char *const *v, size_t n)
{
	char **out = n ? xcalloc(n, sizeof(*out)) : NULL;

	for (size_t i = 0; i < n; i++)
		out[i] = xstrdup(v[i] ? v[i] : "");
	return out;
}

static void set_goroots(struct annot *a, const char *opt)
{
	const char *env = getenv("GOROOT");
	const char *c[4] = { opt, env && *env ? env : NULL, "/usr/local/go", "/usr/lib/go" };

	a->goroots = xcalloc(4, sizeof(*a->goroots));
	for (size_t i = 0; i < 4; i++)
		if (c[i])
			a->goroots[a->ngoroots++] = xstrdup(c[i]);
}

/* A Go function's frames by address range (gopcln_func_frames), as symfile_lookup gives
 * them (symtab.c lookup_uncached: "?" files are NULL): one pass over its line tables instead
 * of one lookup per instruction, which decodes them from the entry each time. */
struct range {
	uint64_t start, end;
	uint32_t fr, n;
};

struct ranges {
	struct range *r;
	size_t n, cap, cur;
	struct sym_frame *fr;
	size_t nfr, capfr;
};

static int add_range(void *arg, uint64_t start, uint64_t end, const struct gopcln_frame *fr, int n)
{
	struct ranges *rg = arg;
	struct range *r;

	xgrow((void **)&rg->r, &rg->cap, rg->n + 1, sizeof(*rg->r));
	xgrow((void **)&rg->fr, &rg->capfr, rg->nfr + (size_t)n, sizeof(*rg->fr));
	r = &rg->r[rg->n++];
	r->start = start;
	r->end = end;
	r->fr = (uint32_t)rg->nfr;
	r->n = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		struct sym_frame *o = &rg->fr[rg->nfr++];

		o->func = fr[i].func ? fr[i].func : "??";
		o->file = fr[i].file && strcmp(fr[i].file, "?") ? fr[i].file : NULL;
		o->line = fr[i].line;
		o->start_line = fr[i].start_line;
	}
	return 0;
}

static void go_ranges(struct annot *a, struct ranges *rg)
{
	struct gopcln *g = symfile_gopcln(a->sf);
	struct gopcln_func f;

	if (!g || gopcln_find_func(g, a->start, &f) || f.entry != a->start || f.end < a->end)
		return;
	if (gopcln_func_frames(g, a->start, MAX_FRAMES, add_range, rg)) {
		rg->n = 0; /* corrupt tables: each instruction is looked up on its own */
		rg->nfr = 0;
	}
}

/* The frames at addr (instructions come in address order). 0 outside every range. */
static int range_frames(struct ranges *rg, uint64_t addr, struct sym_frame *out)
{
	while (rg->cur < rg->n && rg->r[rg->cur].end <= addr)
		rg->cur++;
	if (rg->cur == rg->n || rg->r[rg->cur].start > addr)
		return 0;
	memcpy(out, rg->fr + rg->r[rg->cur].fr, rg->r[rg->cur].n * sizeof(*out));
	return (int)rg->r[rg->cur].n;
}

/* Reads the bytes of [start, end), decodes them and looks up each instruction's frames. */
static int decode(struct annot *a)
{
	size_t len = (size_t)(a->end - a->start), left, captext = 0, capins = 0, capfr = 0;
	uint8_t *code = xmalloc(len);
	const uint8_t *p = code;
	uint64_t addr = a->start;
	struct disasm *d;
	struct hashmap targets = { 0 };
	struct ranges rg = { 0 };
	ssize_t r;

	go_ranges(a, &rg);
	r = symfile_read(a->sf, a->start, code, len);
	if (r < 0 || (size_t)r < len) {
		free(code);
		free(rg.r);
		free(rg.fr);
		return r < 0 ? (int)r : -EIO;
	}
	d = disasm_open();
	if (!d) {
		free(code);
		free(rg.r);
		free(rg.fr);
		return -ENOSYS;
	}
	left = len;
	add_text(a, &captext, ""); /* offset 0: no text */
	while (left) {
		struct disasm_insn di;
		struct annot_insn *in;
		struct sym_frame fr[MAX_FRAMES];
		char buf[200];
		int k, nf;

		xgrow((void **)&a->insns, &capins, a->n + 1, sizeof(*a->insns));
		in = &a->insns[a->n];
		memset(in, 0, sizeof(*in));
		k = disasm_next(d, &p, &left, &addr, &di);
		if (k == 1) {
			in->addr = di.addr;
			in->size = di.size;
			in->kind = di.kind;
			in->target = di.target;
			snprintf(buf, sizeof(buf), "%s%s%s", di.mnemonic, di.ops[0] ? " " : "", di.ops);
		} else {
			/* Not an instruction: show the byte and go on after it, as objdump does. */
			in->addr = addr;
			in->size = 1;
			in->bad = 1;
			snprintf(buf, sizeof(buf), ".byte 0x%02x", *p);
			p++;
			left--;
			addr++;
			a->nbad++;
		}
		in->text = add_text(a, &captext, buf);
		nf = rg.n ? range_frames(&rg, in->addr, fr) : symfile_lookup(a->sf, in->addr, fr, MAX_FRAMES);
		if (nf > 0) {
			xgrow((void **)&a->frames, &capfr, a->nframes + (size_t)nf, sizeof(*a->frames));
			memcpy(a->frames + a->nframes, fr, (size_t)nf * sizeof(*fr));
			in->fr = (uint32_t)a->nframes;
			in->nfr = (uint32_t)nf;
			a->nframes += (size_t)nf;
		}
		if (in->target && (in->target < a->start || in->target >= a->end)) {
			uint64_t s, e;
			const char *nm = NULL;

			if (annot_func_at(a->sf, in->target, &s, &e, &nm) == 0 && s == in->target)
				in->target_name = nm;
			else if (in->kind == DISASM_CALL &&
				 symfile_lookup(a->sf, in->target, fr, MAX_FRAMES) > 0)
				in->target_name = fr[0].func;
		} else if (in->target) {
			*hashmap_put(&targets, in->target, NULL) = 1;
		}
		a->n++;
	}
	for (size_t i = 0; i < a->n; i++)
		a->insns[i].jump_in = hashmap_get(&targets, a->insns[i].addr) != NULL;
	hashmap_free(&targets);
	disasm_close(d);
	free(code);
	free(rg.r);
	free(rg.fr);
	return 0;
}

struct annot *annot_open(struct symfile *sf, uint64_t start, uint64_t end, const char *name,
			 const struct annot_opts *o, int *err)
{
	struct annot *a;
	int e;

	if (end <= start) {
		e = -EINVAL;
		goto fail;
	}
	if (end - start > ANNOT_MAX_BYTES) {
		e = -EFBIG;
		goto fail;
	}
	a = xcalloc(1, sizeof(*a));
	a->sf = sf;
	a->name = xstrdup(name ? name : "?");
	a->start = start;
	a->end = end;
	if (o) {
		a->paths = copy_strs(o->source_paths, o->nsource_paths);
		a->npaths = o->nsource_paths;
		a->trims = copy_strs(o->trim_paths, o->ntrim_paths);
		a->ntrims = o->ntrim_paths;
	}
	set_goroots(a, o ? o->goroot : NULL);
	e = decode(a);
	if (e) {
		annot_free(a);
		goto fail;
	}
	return a;
fail:
	if (err)
		*err = e;
	errno = -e;
	return NULL;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void annot_free(struct annot *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nsrc; i++) {
		free(a->src[i].recorded);
		free(a->src[i].found);
		free(a->src[i].text);
		free(a->src[i].line_off);
	}
	free(a->src);
	free_strs(a->paths, a->npaths);
	free_strs(a->trims, a->ntrims);
	free_strs(a->goroots, a->ngoroots);
	free(a->insns);
	free(a->frames);
	free(a->text);
	free(a->name);
	free(a);
}

const char *annot_name(const struct annot *a)
{
	return a->name;
}

uint64_t annot_start(const struct annot *a)
{
	return a->start;
}

uint64_t annot_end(const struct annot *a)
{
	return a->end;
}

size_t annot_nbad(const struct annot *a)
{
	return a->nbad;
}

size_t annot_memory(const struct annot *a)
{
	size_t m = sizeof(*a) + a->n * sizeof(*a->insns) + a->nframes * sizeof(*a->frames) +
		   a->ntext;

	for (size_t i = 0; i < a->nsrc; i++)
		m += a->src[i].len + a->src[i].nlines * sizeof(size_t);
	return m;
}

size_t annot_ninsns(const struct annot *a)
{
	return a->n;
}

const struct annot_insn *annot_insns(const struct annot *a)
{
	return a->insns;
}

const char *annot_text(const struct annot *a, size_t i)
{
	return i < a->n ? a->text + a->insns[i].text : "";
}

const struct sym_frame *annot_frames(const struct annot *a)
{
	return a->frames;
}

long annot_find(const struct annot *a, uint64_t addr)
{
	size_t lo = 0, hi = a->n;

	if (addr < a->start || addr >= a->end)
		return -1;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->insns[mid].addr + a->insns[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < a->n && a->insns[lo].addr <= addr ? (long)lo : -1;
}

/* --- source files --- */

/* Reads path when it is a regular file of at most ANNOT_MAX_SOURCE bytes (a device or a
 * FIFO named by a hostile binary is never opened for reading). */
static int read_source(struct srcfile *s, const char *path)
{
	struct stat st;
	int fd;
	size_t got = 0, i, cap = 0;

	if (strlen(path) >= 4096 || stat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > (off_t)ANNOT_MAX_SOURCE)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)ANNOT_MAX_SOURCE) {
		close(fd);
		return -1;
	}
	s->text = xmalloc((size_t)st.st_size + 1);
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, s->text + got, (size_t)st.st_size - got);

		if (r <= 0)
			break; /* shrunk meanwhile: keep what was read */
		got += (size_t)r;
	}
	close(fd);
	s->text[got] = 0;
	s->len = got;
	s->found = xstrdup(path);
	for (i = 0; i < got; i++) {
		if (i == 0 || s->text[i - 1] == '\n') {
			xgrow((void **)&s->line_off, &cap, s->nlines + 1, sizeof(*s->line_off));
			s->line_off[s->nlines++] = i;
		}
	}
	return 0;
}

static int try_path(struct srcfile *s, const char *dir, const char *rel)
{
	char buf[8192];

	if (!rel || !*rel)
		return -1;
	if (dir)
		snprintf(buf, sizeof(buf), "%s/%s", dir, rel);
	else
		snprintf(buf, sizeof(buf), "%s", rel);
	return read_source(s, buf);
}

/* The candidates, in pprof's order, then Go's standard library under each GOROOT: a
 * "$GOROOT/" path (-trimpath builds), or the part after a "/src/" of a toolchain
 * installed elsewhere. */
static void find_source(struct annot *a, struct srcfile *s)
{
	const char *f = s->recorded, *rel = f, *p;
	size_t i, j;

	for (i = 0; i < a->ntrims; i++) {
		size_t l = strlen(a->trims[i]);

		if (l && !strncmp(f, a->trims[i], l)) {
			rel = f + l;
			while (*rel == '/')
				rel++;
			break;
		}
	}
	if (rel == f && f[0] == '/' && !try_path(s, NULL, f))
		return;
	for (i = 0; i < a->npaths; i++) {
		if (!try_path(s, a->paths[i], rel))
			return;
		for (p = strchr(rel, '/'); p; p = strchr(p + 1, '/'))
			if (!try_path(s, a->paths[i], p + 1))
				return;
	}
	if (!strncmp(f, "$GOROOT/", 8)) {
		for (j = 0; j < a->ngoroots; j++)
			if (!try_path(s, a->goroots[j], f + 8))
				return;
	}
	for (p = strstr(f, "/src/"); p; p = strstr(p + 1, "/src/"))
		for (j = 0; j < a->ngoroots; j++)
			if (!try_path(s, a->goroots[j], p + 1))
				return;
}

static struct srcfile *source(struct annot *a, const char *file)
{
	struct srcfile *s;

	if (!file || !*file)
		return NULL;
	for (size_t i = 0; i < a->nsrc; i++)
		if (!strcmp(a->src[i].recorded, file))
			return &a->src[i];
	a->src = xrealloc(a->src, (a->nsrc + 1) * sizeof(*a->src));
	s = &a->src[a->nsrc++];
	memset(s, 0, sizeof(*s));
	s->recorded = xstrdup(file);
	find_source(a, s);
	return s;
}

const char *annot_source_file(struct annot *a, const char *file)
{
	struct srcfile *s = source(a, file);

	return s ? s->found : NULL;
}

const char *annot_source_line(struct annot *a, const char *file, int32_t line, size_t *len)
{
	struct srcfile *s = source(a, file);
	size_t b, e;

	if (!s || !s->found || line < 1 || (size_t)line > s->nlines)
		return NULL;
	b = s->line_off[line - 1];
	e = (size_t)line < s->nlines ? s->line_off[line] : s->len;
	while (e > b && (s->text[e - 1] == '\n' || s->text[e - 1] == '\r'))
		e--;
	*len = e - b;
	return s->text + b;
}

/* --- counts to rows --- */

size_t annot_attribute(const struct annot *a, const struct annot_count *c, size_t n,
		       int64_t *self, int64_t *total, int64_t *missed)
{
	size_t i, hit = 0;

	for (i = 0; i < n; i++) {
		long k = annot_find(a, c[i].is_return ? c[i].addr - 1 : c[i].addr);

		if (k < 0 || (!c[i].is_return && a->insns[k].addr != c[i].addr)) {
			if (missed)
				*missed += c[i].self ? c[i].self : c[i].total;
			continue;
		}
		self[k] += c[i].self;
		total[k] += c[i].total;
		hit++;
	}
	return hit;
}

/* The outermost frame of instruction i (the function's own line), or NULL. */
static const struct sym_frame *outer(const struct annot *a, size_t i)
{
	const struct annot_insn *in = &a->insns[i];

	return in->nfr ? &a->frames[in->fr + in->nfr - 1] : NULL;
}

static int same_file(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

/* Sort key of a source row: the main file's lines first (g 0), each followed by the rows
 * of code inlined at it (depth 1, by first instruction); then other files' lines. */
struct row_key {
	int g;
	int32_t line;
	uint8_t depth;
	uint32_t first;
	size_t i;
};

static int key_cmp(const void *pa, const void *pb)
{
	const struct row_key *x = pa, *y = pb;

	if (x->g != y->g)
		return x->g < y->g ? -1 : 1;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Keeps the five largest positive values seen in best[] (largest first). */
static void top5_add(int64_t best[5], int64_t v)
{
	for (size_t j = 0; j < 5 && v > 0; j++)
		if (v > best[j]) {
			int64_t t = best[j];

			best[j] = v;
			v = t;
		}
}

/* The function's file (that of its first instruction with a line) and the span of its
 * lines there, from the line that declares the function when it is near (DWARF
 * decl_line, Go's startLine), so the signature shows. NULL when no instruction has a line. */
static const char *main_span(const struct annot *a, int32_t *lo, int32_t *hi)
{
	const char *main_file = NULL;
	size_t i;

	*lo = INT32_MAX;
	*hi = 0;
	for (i = 0; i < a->n && !main_file; i++)
		if (outer(a, i) && outer(a, i)->file && outer(a, i)->line > 0)
			main_file = outer(a, i)->file;
	for (i = 0; i < a->n; i++) {
		const struct sym_frame *o = outer(a, i);

		if (o && o->line > 0 && same_file(o->file, main_file)) {
			*lo = GP_MIN(*lo, o->line);
			*hi = GP_MAX(*hi, o->line);
		}
	}
	for (i = 0; i < a->n; i++) {
		const struct sym_frame *o = outer(a, i);

		if (o && o->start_line > 0 && o->start_line < *lo && *lo - o->start_line < 64 &&
		    same_file(o->file, main_file)) {
			*lo = o->start_line;
			break;
		}
	}
	return main_file;
}

/* The source rows being made: rows by a key (line, file, inlined function), index + 1. */
struct rowset {
	struct annot_row *rows;
	size_t n, cap;
	struct hashmap idx;
};

/* The row of key, made as tmpl when it is new. */
static struct annot_row *row_for(struct rowset *rs, uint64_t key, const struct annot_row *tmpl)
{
	int created;
	uint64_t *slot = hashmap_put(&rs->idx, key, &created);

	if (created) {
		xgrow((void **)&rs->rows, &rs->cap, rs->n + 1, sizeof(*rs->rows));
		rs->rows[rs->n] = *tmpl;
		*slot = ++rs->n;
	}
	return &rs->rows[*slot - 1];
}

static uint64_t str_hash(const char *s, uint64_t seed)
{
	return util_hash(s ? s : "", s ? strlen(s) : 0, seed);
}

/* Instruction i's counts into its line's row and, for inlined code, the row under that
 * line of its innermost (function, file, line). */
static void count_insn(const struct annot *a, struct rowset *rs, const char *main_file, size_t i,
		       int64_t self, int64_t total)
{
	const struct annot_insn *in = &a->insns[i];
	const struct sym_frame *o = outer(a, i), *inner;
	int32_t line = o ? o->line : 0;
	struct annot_row *r;
	uint64_t key;

	/* Rows of the main file are keyed by line; other files' by their name too. */
	key = (uint64_t)(uint32_t)line;
	if (!o || !same_file(o->file, main_file))
		key |= ((str_hash(o ? o->file : NULL, 1) | 1) & 0x7fffffffULL) << 32;
	r = row_for(rs, key, &(struct annot_row){ .file = o ? o->file : NULL, .line = line,
						   .first = UINT32_MAX });
	if (r->first == UINT32_MAX)
		r->first = (uint32_t)i;
	r->ninsn++;
	r->total += total;
	if (in->nfr <= 1) {
		r->self += self;
		return;
	}
	inner = &a->frames[in->fr];
	key = util_mix64(key ^ str_hash(inner->func, 2) ^ str_hash(inner->file, 3) ^
			 (uint64_t)(uint32_t)inner->line << 7) | 1ULL << 63;
	r = row_for(rs, key, &(struct annot_row){ .file = inner->file, .line = inner->line,
						   .func = inner->func ? inner->func : "?",
						   .depth = 1, .first = (uint32_t)i });
	r->ninsn++;
	r->self += self;
	r->total += total;
}

/* The rows in the order of annot_source_rows: the main file's lines, each followed by the
 * code inlined at it (an inlined row belongs to the line of its first instruction), then
 * other files' lines. */
static void sort_rows(const struct annot *a, struct rowset *rs, const char *main_file)
{
	struct row_key *k = xmalloc((rs->n + 1) * sizeof(*k));
	struct annot_row *sorted = xmalloc((rs->n + 1) * sizeof(*sorted));
	const struct annot_row *rows = rs->rows;
	size_t i;

	for (i = 0; i < rs->n; i++) {
		const struct sym_frame *o = rows[i].first != UINT32_MAX ? outer(a, rows[i].first) : NULL;

		k[i].g = rows[i].depth ? (!o || !same_file(o->file, main_file))
				       : !same_file(rows[i].file, main_file);
		k[i].line = rows[i].depth ? (o ? o->line : 0) : rows[i].line;
		k[i].depth = rows[i].depth;
		k[i].first = rows[i].first;
		k[i].i = i;
	}
	qsort(k, rs->n, sizeof(*k), key_cmp);
	for (i = 0; i < rs->n; i++)
		sorted[i] = rows[k[i].i];
	free(k);
	free(rs->rows);
	rs->rows = sorted;
}

size_t annot_source_rows(const struct annot *a, const int64_t *self, const int64_t *total,
			 struct annot_row **rowsp)
{
	struct rowset rs = { 0 };
	int32_t lo, hi;
	const char *main_file = main_span(a, &lo, &hi);
	int64_t best[5] = { 0 };
	size_t i;

	/* Every line of the span, code or not, so the source reads as a whole. */
	if (main_file && hi >= lo && hi - lo < ANNOT_MAX_SPAN)
		for (int32_t l = lo; l <= hi; l++)
			row_for(&rs, (uint64_t)(uint32_t)l, &(struct annot_row){
				.file = main_file, .line = l, .first = UINT32_MAX });
	for (i = 0; i < a->n; i++)
		count_insn(a, &rs, main_file, i, self[i], total[i]);
	hashmap_free(&rs.idx);
	sort_rows(a, &rs, main_file);
	/* The hottest lines: the five largest self values among the function's own lines and
	 * the inlined ones. */
	for (i = 0; i < rs.n; i++)
		top5_add(best, rs.rows[i].self);
	for (i = 0; i < rs.n; i++)
		rs.rows[i].hot = rs.rows[i].self > 0 && rs.rows[i].self >= best[4] && best[0] > 0;
	*rowsp = rs.rows;
	return rs.n;
}

/* --- a function's samples --- */

/* Opens path (a regular file only: a device a process maps is never read) as a symfile. */
static struct symfile *open_regular(const char *path)
{
	struct stat st;
	int fd;

	if (strlen(path) >= 4096 || stat(path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	return fd < 0 ? NULL : symfile_open_fd(fd, path, NULL);
}

struct symfile *annot_open_mapped(pid_t pid, const char *path, const char *build_id,
				  uint64_t start, uint64_t limit, char *other, size_t othersz)
{
	char cand[4][4200];
	int ncand = 0, mismatch = 0;

	if (pid > 0) {
		snprintf(cand[ncand++], sizeof(cand[0]), "/proc/%d/map_files/%llx-%llx", (int)pid,
			 (unsigned long long)start, (unsigned long long)limit);
		/* Without CAP_SYS_ADMIN map_files is refused; the executable is still
		 * reachable (its build id says whether it is this mapping's file). */
		snprintf(cand[ncand++], sizeof(cand[0]), "/proc/%d/exe", (int)pid);
		snprintf(cand[ncand++], sizeof(cand[0]), "/proc/%d/root%s", (int)pid, path);
	}
	snprintf(cand[ncand++], sizeof(cand[0]), "%s", path);
	for (int i = 0; i < ncand; i++) {
		struct symfile *sf = open_regular(cand[i]);
		const char *fb;

		if (!sf)
			continue;
		fb = symfile_build_id(sf);
		if (build_id && *build_id && fb && strcmp(fb, build_id)) {
			mismatch = 1;
			if (othersz)
				snprintf(other, othersz, "%s", fb);
			symfile_free(sf);
			continue;
		}
		return sf;
	}
	errno = mismatch ? ESTALE : ENOENT;
	return NULL;
}

int annot_hot_mapping(const struct annot_sample *s, size_t n, uint64_t *mapping, uint64_t *addr)
{
	struct hashmap per = { 0 };
	uint64_t best = 0, best_map = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		uint64_t *c = hashmap_put(&per, s[i].mapping, NULL);

		*c += (uint64_t)s[i].total_n;
		if (*c > best) {
			best = *c;
			best_map = s[i].mapping;
		}
	}
	hashmap_free(&per);
	if (!best_map)
		return -ENOENT;
	best = 0;
	for (i = 0; i < n; i++)
		if (s[i].mapping == best_map && (uint64_t)s[i].total_n >= best) {
			best = (uint64_t)s[i].total_n;
			*addr = s[i].addr - (uint64_t)s[i].is_return;
		}
	*mapping = best_map;
	return 0;
}

void annot_count_samples(const struct annot *a, const struct annot_sample *s, size_t n,
			 uint64_t mapping, uint64_t start, uint64_t offset, struct annot_counts *c)
{
	struct annot_count *cv = xmalloc((n + 1) * sizeof(*cv)), *cn = xmalloc((n + 1) * sizeof(*cn));
	size_t i, nc = 0, ni = a->n;
	int64_t best[5] = { 0 };
	uint64_t vaddr;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++) {
		if (s[i].mapping != mapping || symfile_file_vaddr(a->sf, start, offset, s[i].addr, &vaddr))
			continue;
		cv[nc] = (struct annot_count){ vaddr, s[i].is_return, s[i].self, s[i].total };
		cn[nc++] = (struct annot_count){ vaddr, s[i].is_return, s[i].self_n, s[i].total_n };
	}
	c->self = xcalloc(ni + 1, sizeof(*c->self));
	c->total = xcalloc(ni + 1, sizeof(*c->total));
	c->self_n = xcalloc(ni + 1, sizeof(*c->self_n));
	c->total_n = xcalloc(ni + 1, sizeof(*c->total_n));
	annot_attribute(a, cv, nc, c->self, c->total, &c->missed);
	annot_attribute(a, cn, nc, c->self_n, c->total_n, NULL);
	free(cv);
	free(cn);
	c->nrows = annot_source_rows(a, c->self, c->total, &c->rows);
	annot_source_rows(a, c->self_n, c->total_n, &c->rows_n);
	for (i = 0; i < ni; i++)
		top5_add(best, c->self[i]);
	c->hot = best[4] > 0 ? best[4] : best[0] > 0 ? 1 : INT64_MAX;
}

void annot_counts_free(struct annot_counts *c)
{
	free(c->self);
	free(c->total);
	free(c->self_n);
	free(c->total_n);
	free(c->rows);
	free(c->rows_n);
	memset(c, 0, sizeof(*c));
}
