/* goprof-build.c: runtime/pprof's profileBuilder, emulated from outside: the same frames,
 * locations, functions and mappings Go's own profile of a process would have, from the
 * target's .gopclntab instead of the runtime's symbol tables.
 *
 * Sources (runtime/pprof/proto.go and runtime/symtab.go, go1.19 to go1.27):
 * - allFrames(addr) expands one address with CallersFrames([]uintptr{addr}): one frame,
 *   the innermost function at addr - 1 (addr itself at a function's entry); nothing for
 *   runtime.goexit; a zero Frame (PC addr - 1, no function) where Go has no function.
 * - appendLocsForStack runs runtime_expandFinalInlineFrame on the stack first (the last
 *   pc may be cut from its inlined callers by the depth limit), then merges consecutive
 *   pcs into one location while the previous frame is inlined (Frame.Func nil) into the
 *   same physical function (same Entry) and not the same symbol (recursion): the "deck".
 *   Locations are cached by their first pc; a cached one is taken with as many pcs as it
 *   was made of.
 * - emitLocation: Address = the first frame's PC (a call pc), one Line per frame, the
 *   Function named by the raw symbol name (runtime_FrameSymbolName, go1.21+; Frame.Function
 *   in go1.19, also raw there), with its file and, go1.21+, its start line. The location's
 *   mapping is the first executable mapping holding the first pc (or the fake one); the
 *   mapping has HasFunctions when every lookup there succeeded.
 * - Frames.Next from go1.23: a physical pc inside inlined code, not followed by the
 *   virtual pc of its caller, brings that caller's virtual pc next (so frame-pointer
 *   stacks expand), skipping a wrapper unless the callee is a panic function
 *   (elideWrapperCalling: FuncID gopanic, sigpanic, panicwrap). Through go1.22 one frame per
 *   pc.
 * - FuncForPC(pc) looks pc itself up (not pc - 1), innermost inlined function first.
 */
#include "config.h"
#include "goprof-int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gopclntab.h"
#include "gotop/hashmap.h"
#include "gotop/util.h"

#define MAX_LEVELS 64  /* inline levels looked at per pc */
#define LOOKUP_TRIED 1 /* proto.go symbolizeFlag */
#define LOOKUP_FAILED 2

struct gpb_loc {
	uint64_t id;
	uint32_t npcs;
	unsigned first_result;
	struct gpb_frame first;
};

struct gpb {
	const struct gopcln *t;
	uint64_t bias;
	int go_minor;
	struct prof *p;
	struct gpb_map *maps;
	unsigned *mfuncs;
	size_t nmaps;
	int fake;            /* no executable mapping: one fake entry */
	struct hashmap locs; /* first pc -> index + 1 into locv */
	struct gpb_loc *locv;
	size_t nloc, loccap;
	struct hashmap funcs; /* name string id + 1 -> function id */
	/* the deck */
	uint64_t *dpcs;
	struct gpb_frame *dframes;
	size_t dn, dcap;
	unsigned dresult, dfirst_result;
	uint64_t *scratch;
	size_t scap;
};

int gpb_go_minor(const struct gpb *b)
{
	return b->go_minor;
}

struct prof *gpb_prof(struct gpb *b)
{
	return b->p;
}

struct gpb *gpb_new(const struct gopcln *t, uint64_t bias, int go_minor, const struct gpb_map *maps,
		    size_t nmaps)
{
	struct gpb *b = xcalloc(1, sizeof(*b));
	size_t i;

	b->t = t;
	b->bias = bias;
	b->go_minor = go_minor;
	b->p = prof_new();
	b->nmaps = nmaps ? nmaps : 1;
	b->fake = nmaps == 0;
	b->maps = xcalloc(b->nmaps, sizeof(*b->maps));
	b->mfuncs = xcalloc(b->nmaps, sizeof(*b->mfuncs));
	for (i = 0; i < nmaps; i++) {
		b->maps[i] = maps[i];
		b->maps[i].file = xstrdup(maps[i].file ? maps[i].file : "");
		b->maps[i].build_id = xstrdup(maps[i].build_id ? maps[i].build_id : "");
	}
	if (b->fake) {
		b->maps[0].file = xstrdup("");
		b->maps[0].build_id = xstrdup("");
	}
	return b;
}

void gpb_free(struct gpb *b)
{
	size_t i;

	if (!b)
		return;
	for (i = 0; i < b->nmaps; i++) {
		free((char *)b->maps[i].file);
		free((char *)b->maps[i].build_id);
	}
	free(b->maps);
	free(b->mfuncs);
	hashmap_free(&b->locs);
	hashmap_free(&b->funcs);
	free(b->locv);
	free(b->dpcs);
	free(b->dframes);
	free(b->scratch);
	prof_free(b->p);
	free(b);
}

struct prof *gpb_finish(struct gpb *b)
{
	struct prof *p = b->p;
	size_t i;

	for (i = 0; i < b->nmaps; i++) {
		struct prof_mapping m;

		memset(&m, 0, sizeof(m));
		m.start = b->maps[i].start;
		m.limit = b->maps[i].end;
		m.offset = b->maps[i].offset;
		m.filename = prof_str(p, b->maps[i].file);
		m.build_id = prof_str(p, b->maps[i].build_id);
		m.has_functions = b->mfuncs[i] == LOOKUP_TRIED;
		prof_add_mapping(p, &m);
	}
	b->p = NULL;
	gpb_free(b);
	return p;
}

/* ---- frames ---- */

/* The inline levels at pc (a runtime address), innermost first, and the physical
 * function; 0 when pc is in no Go function. */
static int levels(const struct gpb *b, uint64_t pc, struct gopcln_func *fn, struct gopcln_frame *lv)
{
	int n;

	if (!b->t || pc < b->bias || gopcln_find_func(b->t, pc - b->bias, fn))
		return 0;
	n = gopcln_frames(b->t, pc - b->bias, lv, MAX_LEVELS);
	if (n <= 0) { /* a function without tables: the function alone */
		memset(lv, 0, sizeof(*lv));
		lv->func = fn->name;
		lv->file = "?";
		lv->pc = pc - b->bias;
		n = 1;
	}
	return n;
}

static const char *file_of(const char *f)
{
	return f && strcmp(f, "?") ? f : "";
}

/* The frame for lv[k] of a function at entry (runtime address), at call pc. */
static void fill(const struct gpb *b, struct gpb_frame *f, const struct gopcln_frame *lv, int k,
		 int n, uint64_t entry, uint64_t pc)
{
	f->pc = pc;
	f->entry = entry;
	f->name = lv[k].func ? lv[k].func : "";
	f->file = file_of(lv[k].file);
	f->line = lv[k].line;
	f->start_line = b->go_minor >= 21 ? lv[k].start_line : 0;
	f->inlined = k < n - 1;
	f->funcid_wrapper = lv[k].wrapper;
}

/* elideWrapperCalling(callee): a wrapper is left out unless it called a panic function. */
static int elide_wrapper(const char *callee)
{
	return !callee ||
	       (strcmp(callee, "runtime.gopanic") && strcmp(callee, "runtime.sigpanic") &&
		strcmp(callee, "runtime.panicwrap"));
}

void gpb_frames(struct gpb *b, const uint64_t *pcs, size_t n,
		int (*cb)(void *arg, const struct gpb_frame *f), void *arg)
{
	struct gopcln_frame lv[MAX_LEVELS];
	struct gopcln_func fn;
	uint64_t next_pc = 0;
	size_t i = 0;

	while (next_pc || i < n) {
		struct gpb_frame f;
		uint64_t pc, entry;
		int nl, k;

		if (next_pc) {
			pc = next_pc;
			next_pc = 0;
		} else {
			pc = pcs[i++];
		}
		nl = levels(b, pc, &fn, lv);
		if (!nl)
			continue; /* not Go: no cgo symbolizer from outside */
		entry = fn.entry + b->bias;
		if (pc > entry) {
			pc--;
			nl = levels(b, pc, &fn, lv);
			if (!nl)
				continue;
		}
		fill(b, &f, lv, 0, nl, entry, pc);
		/* go1.23+: the caller a physical pc implies, unless the list has it next. */
		if (b->go_minor >= 23 && nl > 1 && i < n) {
			for (k = 1; k < nl; k++) {
				uint64_t vpc = lv[k].pc + b->bias + 1;

				if (pcs[i] == vpc)
					break;
				if (lv[k].wrapper && elide_wrapper(lv[0].func))
					continue;
				next_pc = vpc;
				break;
			}
		}
		if (cb(arg, &f))
			return;
	}
}

struct expand_arg {
	uint64_t *out;
	size_t n, max;
};

static int expand_cb(void *arg, const struct gpb_frame *f)
{
	struct expand_arg *a = arg;

	a->out[a->n++] = f->pc + 1;
	return a->n >= a->max;
}

size_t gpb_expand(struct gpb *b, const uint64_t *pcs, size_t n, uint64_t *out, size_t max)
{
	struct expand_arg a = { out, 0, max };

	if (max)
		gpb_frames(b, pcs, n, expand_cb, &a);
	return a.n;
}

const char *gpb_func_for_pc(struct gpb *b, uint64_t pc)
{
	struct gopcln_frame lv[MAX_LEVELS];
	struct gopcln_func fn;

	return levels(b, pc, &fn, lv) ? lv[0].func : NULL;
}

/* funcNamePiecesForPrint (go1.27 runtime/traceback.go; go1.21 knew the single-bracket
 * form only, which the general form gives the same answer for). */
const char *gpb_print_name(const struct gpb *b, const char *name, char *buf, size_t len)
{
	const char *i, *j, *k, *rbr = NULL, *lbr = NULL;
	int depth = 1;

	if (b->go_minor < 21 || !(i = strchr(name, '[')))
		return name;
	for (j = name + strlen(name) - 1; j > i && *j != ']'; j--)
		;
	if (j <= i)
		return name;
	for (k = i + 1; k < j; k++) {
		if (*k == '[') {
			depth++;
			if (depth != 1)
				continue;
			lbr = k;
			break;
		}
		if (*k == ']') {
			depth--;
			if (depth < 0)
				break;
			if (depth != 0)
				continue;
			rbr = k;
		}
	}
	if (!memchr(i + 1, '[', (size_t)(j - i - 1)) ||
	    (b->go_minor >= 21 && depth == 1 && !rbr && !lbr)) {
		snprintf(buf, len, "%.*s[...]%s", (int)(i - name), name, j + 1);
		return buf;
	}
	if (depth == 1 && rbr && lbr && lbr > rbr) {
		snprintf(buf, len, "%.*s[...]%.*s[...]%s", (int)(i - name), name,
			 (int)(lbr - rbr - 1), rbr + 1, j + 1);
		return buf;
	}
	return name;
}

/* ---- the deck and locations (proto.go pcDeck, emitLocation, appendLocsForStack) ---- */

static unsigned frame_result(const struct gpb_frame *f)
{
	return LOOKUP_TRIED |
	       (f->pc == 0 || !*f->name || !*f->file || f->line == 0 ? LOOKUP_FAILED : 0);
}

/* allFrames(addr): 0 for runtime.goexit (no frame), else 1 and the frame. */
static int all_frames(struct gpb *b, uint64_t addr, struct gpb_frame *f)
{
	struct gopcln_frame lv[MAX_LEVELS];
	struct gopcln_func fn;
	uint64_t pc = addr;
	int nl = levels(b, pc, &fn, lv);

	if (nl && pc > fn.entry + b->bias) {
		pc--;
		nl = levels(b, pc, &fn, lv);
	}
	if (!nl) {
		memset(f, 0, sizeof(*f));
		f->name = f->file = "";
		f->pc = addr - 1;
		f->inlined = 1; /* a zero Frame: Func nil */
		return 1;
	}
	fill(b, f, lv, 0, nl, fn.entry + b->bias, pc);
	return strcmp(f->name, "runtime.goexit") ? 1 : 0;
}

static void deck_reset(struct gpb *b)
{
	b->dn = 0;
	b->dresult = b->dfirst_result = 0;
}

static int deck_add(struct gpb *b, uint64_t pc, const struct gpb_frame *f, unsigned result)
{
	if (b->dn) {
		const struct gpb_frame *last = &b->dframes[b->dn - 1];

		if (!last->inlined || !last->entry || !f->entry || last->entry != f->entry ||
		    !strcmp(last->name, f->name))
			return 0;
	}
	if (b->dn + 1 > b->dcap) {
		b->dcap = b->dcap ? 2 * b->dcap : 16;
		b->dpcs = xrealloc(b->dpcs, b->dcap * sizeof(*b->dpcs));
		b->dframes = xrealloc(b->dframes, b->dcap * sizeof(*b->dframes));
	}
	b->dpcs[b->dn] = pc;
	b->dframes[b->dn] = *f;
	b->dn++;
	b->dresult |= result;
	if (b->dn == 1)
		b->dfirst_result = result;
	return 1;
}

static uint64_t func_id(struct gpb *b, const struct gpb_frame *f)
{
	uint32_t name = prof_str(b->p, f->name);
	uint64_t *slot = hashmap_put(&b->funcs, (uint64_t)name + 1, NULL);

	if (!*slot)
		*slot = prof_add_function(b->p, name, name, prof_str(b->p, f->file), f->start_line);
	return *slot;
}

static uint64_t emit(struct gpb *b)
{
	struct prof_line lines[MAX_LEVELS * 4];
	uint64_t addr, mapping = 0, id;
	struct gpb_loc *l;
	size_t i, nl;

	if (!b->dn)
		return 0;
	addr = b->dpcs[0];
	nl = GP_MIN(b->dn, GP_ARRAY_SIZE(lines));
	for (i = 0; i < nl; i++) {
		lines[i].function = func_id(b, &b->dframes[i]);
		lines[i].line = b->dframes[i].line;
	}
	for (i = 0; i < b->nmaps; i++)
		if ((b->maps[i].start <= addr && addr < b->maps[i].end) || b->fake) {
			mapping = i + 1;
			b->mfuncs[i] |= b->dresult;
			break;
		}
	id = prof_add_location(b->p, mapping, b->dframes[0].pc, lines, nl);
	xgrow((void **)&b->locv, &b->loccap, b->nloc + 1, sizeof(*b->locv));
	l = &b->locv[b->nloc++];
	l->id = id;
	l->npcs = (uint32_t)b->dn;
	l->first = b->dframes[0];
	l->first_result = b->dfirst_result;
	*hashmap_put(&b->locs, addr, NULL) = b->nloc;
	deck_reset(b);
	return id;
}

/* runtime_expandFinalInlineFrame (go1.21+ runtime/symtab.go; go1.19 checks wrappers on
 * the inlined levels only and always keeps the physical one). Writes into b->scratch. */
static size_t expand_final(struct gpb *b, const uint64_t *stk, size_t n, const uint64_t **out)
{
	struct gopcln_frame lv[MAX_LEVELS];
	struct gopcln_func fn;
	const char *callee = NULL;
	size_t m;
	int nl, k;

	*out = stk;
	if (!n)
		return 0;
	nl = levels(b, stk[n - 1] - 1, &fn, lv);
	if (nl <= 1)
		return n;
	xgrow((void **)&b->scratch, &b->scap, n + (size_t)nl, sizeof(*b->scratch));
	memcpy(b->scratch, stk, (n - 1) * sizeof(*stk));
	m = n - 1;
	for (k = 0; k < nl; k++) {
		int physical = k == nl - 1;

		if (lv[k].wrapper && elide_wrapper(callee) && !(physical && b->go_minor < 21))
			; /* ignore wrappers */
		else
			b->scratch[m++] = lv[k].pc + b->bias + 1;
		callee = lv[k].func;
	}
	*out = b->scratch;
	return m;
}

size_t gpb_locs(struct gpb *b, const uint64_t *stk0, size_t n0, uint64_t *locs, size_t max)
{
	const uint64_t *stk;
	size_t n = expand_final(b, stk0, n0, &stk), i = 0, k = 0;
	uint64_t *slot, id;
	struct gpb_frame f;

	deck_reset(b);
	while (i < n) {
		uint64_t addr = stk[i];

		slot = hashmap_get(&b->locs, addr);
		if (slot) {
			/* a copy: emit below may move b->locv */
			const struct gpb_loc l = b->locv[*slot - 1];

			if (b->dn && deck_add(b, addr, &l.first, l.first_result)) {
				i++;
				continue;
			}
			if ((id = emit(b)) && k < max)
				locs[k++] = id;
			if (k < max)
				locs[k++] = l.id;
			i += GP_MIN((size_t)l.npcs, n - i); /* Go would panic past the end */
			continue;
		}
		if (!all_frames(b, addr, &f)) { /* runtime.goexit */
			if ((id = emit(b)) && k < max)
				locs[k++] = id;
			i++;
			continue;
		}
		if (deck_add(b, addr, &f, frame_result(&f))) {
			i++;
			continue;
		}
		if ((id = emit(b)) && k < max)
			locs[k++] = id;
		slot = hashmap_get(&b->locs, addr);
		if (slot) {
			const struct gpb_loc *l = &b->locv[*slot - 1];

			if (k < max)
				locs[k++] = l->id;
			i += GP_MIN((size_t)l->npcs, n - i);
		} else {
			deck_add(b, addr, &f, frame_result(&f));
			i++;
		}
	}
	if ((id = emit(b)) && k < max)
		locs[k++] = id;
	return k;
}
