/* gowall.c: wall-clock profiles from snapshots of every goroutine (gosnap.c). Each tick
 * every goroutine alive adds one period of wall time to the sample of its stack, state and
 * labels, as fgprof does from inside a Go program; here from outside, without code in the
 * target. Goroutines that ran while read are dropped by the snapshot (torn), so a tick
 * slightly under-counts running code; they are counted. Sample type and labels follow
 * pprof's profile.proto; "state" is a label like Go's own profiles' string labels, so
 * `go tool pprof -tagfocus=state=running` or `-tags` split the time. */
#include "config.h"
#include "gotop/gowall.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/profile.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"

#define WALL_FRAMES 16  /* inlined frames per pc */
#define WALL_LABELS (GORT_MAX_LABELS + 1)

struct gowall {
	struct symbolizer *sym;
	struct gosnap *snap;
	struct prof *p;
	int64_t period;
	uint64_t mapping;
	uint64_t running_loc;
	struct hashmap loc_of;  /* pc -> location id */
	uint32_t k_state;
	struct gowall_stats st;
	uint64_t *locs;
	size_t locscap;
};

struct gowall *gowall_new(pid_t pid, struct symbolizer *sym, double hz, char *why, size_t whylen)
{
	struct symfile *sf = symbolizer_main_file(sym);
	struct prof_value_type t;
	struct prof_mapping m = { 0 };
	struct gowall *w;
	uint32_t fn;
	struct prof_line ln;

	if (!sf) {
		snprintf(why, whylen, "cannot open the executable of process %d", (int)pid);
		errno = ESRCH;
		return NULL;
	}
	if (!(hz > 0 && hz <= 1000)) {
		snprintf(why, whylen, "wall-clock rate must be above 0 and at most 1000 Hz");
		errno = EINVAL;
		return NULL;
	}
	w = xcalloc(1, sizeof(*w));
	w->snap = gosnap_new(pid, sf, why, whylen);
	if (!w->snap) {
		int e = errno;

		free(w);
		errno = e;
		return NULL;
	}
	w->sym = sym;
	w->p = prof_new();
	w->period = (int64_t)(1e9 / hz);
	t.type = prof_str(w->p, "wall");
	t.unit = prof_str(w->p, "nanoseconds");
	prof_set_sample_types(w->p, &t, 1);
	prof_set_period(w->p, t, w->period);
	m.start = 0;
	m.limit = UINT64_MAX;
	m.filename = prof_str(w->p, symfile_path(sf));
	m.has_functions = m.has_filenames = m.has_line_numbers = m.has_inline_frames = 1;
	w->mapping = prof_add_mapping(w->p, &m);
	prof_set_main_mapping(w->p, w->mapping);
	fn = (uint32_t)prof_add_function(w->p, prof_str(w->p, "[running]"), prof_str(w->p, "[running]"),
					 0, 0);
	ln = (struct prof_line){ fn, 0 };
	w->running_loc = prof_add_location(w->p, w->mapping, 0, &ln, 1);
	w->k_state = prof_str(w->p, "state");
	return w;
}

void gowall_free(struct gowall *w)
{
	if (!w)
		return;
	gosnap_free(w->snap);
	prof_free(w->p);
	hashmap_free(&w->loc_of);
	free(w->locs);
	free(w);
}

struct prof *gowall_profile(struct gowall *w)
{
	return w->p;
}

void gowall_get_stats(const struct gowall *w, struct gowall_stats *st)
{
	*st = w->st;
}

/* The location of return address pc: its frames, innermost inlined first. */
static uint64_t location(struct gowall *w, uint64_t pc)
{
	struct sym_frame fr[WALL_FRAMES];
	struct prof_line lines[WALL_FRAMES];
	int created, n, i;
	uint64_t *slot = hashmap_put(&w->loc_of, pc, &created);

	if (!created)
		return *slot;
	n = symbolizer_lookup(w->sym, pc, 1, NULL, fr, WALL_FRAMES);
	if (n <= 0) {
		char name[32];

		snprintf(name, sizeof(name), "%#llx", (unsigned long long)pc);
		fr[0] = (struct sym_frame){ .func = name };
		n = 1;
		lines[0].function = prof_add_function(w->p, prof_str(w->p, name), prof_str(w->p, name),
						      0, 0);
		lines[0].line = 0;
	} else {
		for (i = 0; i < n; i++) {
			uint32_t name = prof_str(w->p, fr[i].func);

			lines[i].function = prof_add_function(w->p, name, name,
							      prof_str(w->p, fr[i].file ? fr[i].file : ""),
							      fr[i].start_line);
			lines[i].line = fr[i].line;
		}
	}
	*slot = prof_add_location(w->p, w->mapping, pc - 1, lines, (size_t)n);
	return *slot;
}

int gowall_tick(struct gowall *w)
{
	struct gosnap_result r;
	struct prof_label lab[WALL_LABELS];
	size_t i;
	int rc = gosnap_take(w->snap, 0, &r);

	w->st.ticks++;
	if (rc) {
		w->st.failed++;
		return rc;
	}
	w->st.torn += r.st.torn;
	w->st.snap_ns += r.st.ns;
	for (i = 0; i < r.n; i++) {
		const struct gosnap_g *g = &r.g[i];
		size_t nl = 0, nloc = 0;

		xgrow((void **)&w->locs, &w->locscap, g->nframes + 1, sizeof(*w->locs));
		if (g->flags & GOSNAP_NO_STACK)
			w->locs[nloc++] = w->running_loc;
		for (uint32_t f = 0; f < g->nframes; f++)
			w->locs[nloc++] = location(w, r.pcs[g->frame0 + f]);
		lab[nl++] = (struct prof_label){ w->k_state, prof_str(w->p, gosnap_state_text(g)), 0, 0 };
		for (uint32_t k = 0; g->labels && k < g->labels->n && nl < WALL_LABELS; k++) {
			const struct gort_label *p = &g->labels->pairs[k];

			lab[nl++] = (struct prof_label){ prof_strn(w->p, p->key, p->klen),
							 prof_strn(w->p, p->value, p->vlen), 0, 0 };
		}
		prof_add_sample(w->p, w->locs, nloc, &w->period, lab, nl);
		w->st.samples++;
	}
	return 0;
}
