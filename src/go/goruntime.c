/* goruntime.c: goroutine id and pprof labels of a sampled thread, read from a Go process:
 * the reader's life and the entry point for one sample. What the other files of the
 * reader hold: goruntime-int.h. */
#include "config.h"
#include "gotop/goruntime.h"
#include "goruntime-int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct gort *gort_new(const char *go_version, Dwarf *dwarf, int arch)
{
	struct gort_offsets o;
	const char *source;
	struct gort *g;

	if (arch != GORT_ARCH_AMD64 && arch != GORT_ARCH_ARM64) {
		errno = EINVAL;
		return NULL;
	}
	source = gort_layout(go_version, dwarf, &o);
	if (!source)
		return NULL;

	g = xcalloc(1, sizeof(*g));
	g->off = o;
	g->source = source;
	g->arch = arch;
	{
		uint32_t gf[] = { o.g_stack_lo, o.g_stack_hi, o.g_m, o.g_sched_sp, o.g_sched_pc,
				  o.g_sched_bp, o.g_goid, o.g_labels, o.g_startpc };
		uint32_t mf[] = { o.m_g0, o.m_procid, o.m_gsignal, o.m_curg };

		g->gsz = GP_MAX(max_u32(gf, GP_ARRAY_SIZE(gf)) + 8, o.g_atomicstatus + 4);
		g->msz = max_u32(mf, GP_ARRAY_SIZE(mf)) + 8;
		g->hsz = gort_hmap_read_size(&o);
	}
	g->gbuf = xmalloc(g->gsz);
	g->mbuf = xmalloc(g->msz);
	if (o.labels_kind == GORT_LABELS_MAP)
		g->bucket = xmalloc(o.bucket_size);
	g->tids = xcalloc(TID_SLOTS, sizeof(*g->tids));
	g->lc_sets = LC_SETS;
	g->lc = xcalloc(g->lc_sets * LC_WAYS, sizeof(*g->lc));
	g->lc_tag = xcalloc(g->lc_sets * LC_WAYS, sizeof(*g->lc_tag));
	g->lc_ghost = xcalloc(g->lc_sets * LC_WAYS, sizeof(*g->lc_ghost));
	g->dp = xcalloc(MAP_COLLECT, sizeof(*g->dp));
	return g;
}

void gort_reset(struct gort *g)
{
	size_t i;

	if (!g)
		return;
	memset(g->tids, 0, TID_SLOTS * sizeof(*g->tids));
	for (i = 0; i < g->lc_sets * LC_WAYS; i++)
		gort_lc_drop(g, &g->lc[i]);
	memset(g->lc_ghost, 0, g->lc_sets * LC_WAYS * sizeof(*g->lc_ghost));
	g->lc_ghost_hits = 0;
	g->last_allm_walk = 0;
	if (g->ss)
		memset(g->ss, 0, SS_SLOTS * sizeof(*g->ss));
	g->ss_n = 0;
	g->ss_len = 0;
	if (g->hc)
		memset(g->hc, 0, HC_SLOTS * sizeof(*g->hc));
	g->hc_n = 0;
	g->hc_len = 0;
	free(g->raw);
	g->raw = NULL;
}

void gort_free(struct gort *g)
{
	size_t i;

	if (!g)
		return;
	gort_reset(g);
	for (i = 0; i < g->iset_cap; i++)
		free(g->iset[i]);
	free(g->iset);
	free(g->tids);
	free(g->lc);
	free(g->lc_tag);
	free(g->lc_ghost);
	free(g->dp);
	free(g->buf);
	free(g->gbuf);
	free(g->mbuf);
	free(g->bucket);
	free(g->batch);
	free(g->pending);
	free(g->pf);
	free(g->pf_buf);
	free(g->pf_req);
	free(g->pf_reqent);
	free(g->ss);
	free(g->ss_buf);
	free(g->hc);
	free(g->hc_key);
	free(g->raw);
	free(g);
}

const struct gort_offsets *gort_offsets(const struct gort *g)
{
	return &g->off;
}

const char *gort_offsets_source(const struct gort *g)
{
	return g->source;
}

void gort_set_runtime_vars(struct gort *g, uint64_t allm, uint64_t mheap)
{
	g->allm = allm;
	g->mheap = mheap;
}

/* Ranges that touch or overlap are kept as one: a Go executable's text and read-only data
 * are two adjacent mappings, and is_static runs for every string of every label set
 * known by its content (set_key). */
void gort_add_static_range(struct gort *g, uint64_t lo, uint64_t hi)
{
	int i;

	if (lo >= hi)
		return;
	for (i = 0; i < g->nstatic; i++)
		if (lo <= g->statics[i][1] && hi >= g->statics[i][0]) {
			g->statics[i][0] = GP_MIN(lo, g->statics[i][0]);
			g->statics[i][1] = GP_MAX(hi, g->statics[i][1]);
			return;
		}
	if (g->nstatic >= MAX_STATIC)
		return;
	g->statics[g->nstatic][0] = lo;
	g->statics[g->nstatic][1] = hi;
	g->nstatic++;
}

void gort_get_stats(const struct gort *g, struct gort_stats *out)
{
	*out = g->st;
	out->interned_sets = g->iset_n;
	out->interned_bytes = g->iset_bytes;
	out->label_cache_slots = g->lc_sets * LC_WAYS;
	out->batch_readvs = g->pf_calls;
}

/* Fills *out for a sample whose goroutine is cur (rc == 0) or not found (rc < 0): the
 * goroutine id, whether it is in a system call, and its labels (labels_of). */
int gort_finish(struct gort *gr, const struct gp_mem *mem, int rc, const struct gview *cur,
		int flags, bool have_sg, bool sg_before, uint32_t sg, struct gort_result *out)
{
	memset(out, 0, sizeof(*out));
	if (rc) {
		out->flags = flags;
		return rc;
	}
	out->goid = cur->goid;
	out->startpc = cur->startpc;
	if ((cur->status & ~(uint32_t)G_SCAN) == G_SYSCALL)
		flags |= GORT_SYSCALL;
	if (cur->labels) {
		rc = gort_labels_of(gr, mem, cur, have_sg, sg_before, sg, &out->labels, &flags);
		if (rc) {
			out->labels = NULL;
			out->flags = flags;
			gr->st.not_found++;
			return rc;
		}
	}
	out->flags = flags;
	gr->st.found++;
	return 0;
}

int gort_read(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
	      uint64_t sp, struct gort_result *out)
{
	struct gview cur;
	int flags, rc;

	rc = gort_identify(gr, mem, tid, greg, sp, &cur, &flags);
	return gort_finish(gr, mem, rc, &cur, flags, false, false, 0, out);
}
