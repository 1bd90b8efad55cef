/* goruntime-batch.c: gort_read_batch, the work of gort_read for all of a drain's
 * samples with a few vectored reads (process_vm_readv) instead of a few reads each; and
 * gort_labels_batch, its label rounds alone for goroutines read elsewhere (gosnap.c). */
#include "config.h"
#include "goruntime-int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The table is sized to the batches (pf_begin): a table larger than its batches needs
 * spreads their few entries over cache lines that are cold at every drain, and the
 * lookups then cost more than the reads they save. It doubles after a batch that
 * filled half of it, up to PF_SLOTS; entries beyond half of it are read on the spot. */
#define PF_SLOTS_MIN 256
#define PF_SLOTS 4096
#define PF_MAX_BYTES (4u << 20)
#define PF_ROUNDS 8

/*
 * gort_read_batch reads with few system calls. Its reads go through pf_read, which
 * serves them from a table of reads made for this batch:
 * - first, one vectored read of every sample's g (and of the m of samples on a known
 *   thread's system stack), with the GC sweep generation last;
 * - then the goroutines are identified as gort_read does (reads the first read did not
 *   cover are made on the spot);
 * - then their labels are worked out in rounds. In a round every read that is not in the
 *   table yet is only requested (PF_DRY: the caller gets zeros), and the sample's answer
 *   is thrown away; at the end of the round all requests are read with one vectored
 *   read, in the order they were made. A round thus goes one pointer deeper for every
 *   sample at once: g.labels again, the label set's header, its array or buckets, its
 *   strings. An answer is kept only from a pass that got every byte it asked for.
 * Reads of a sample's label set that the BPF program copied at the sample are answered
 * from its record (snap_piece) and never reach the table.
 * Every read still happens after the reads it depends on, so the label cache's proofs
 * hold as in gort_read (mem_readv reads pieces in order).
 */
static struct pf_ent *pf_slot(struct gort *g, uint64_t addr, uint32_t len)
{
	size_t j;

	for (j = util_mix64(addr ^ ((uint64_t)len << 48)) & (g->pf_slots - 1); g->pf[j].gen == g->pf_gen;
	     j = (j + 1) & (g->pf_slots - 1))
		if (g->pf[j].addr == addr && g->pf[j].len == len)
			break;
	return &g->pf[j];
}

/* Requests a read of len bytes at addr for the next pf_issue, with room for them in
 * pf_buf. NULL when the table or the buffer is full (then the read is made on the
 * spot). */
static struct pf_ent *pf_want(struct gort *g, uint64_t addr, uint32_t len)
{
	struct pf_ent *e = pf_slot(g, addr, len);

	if (e->gen == g->pf_gen)
		return e;
	if (g->pf_n >= g->pf_slots / 2 || g->pf_len + len > PF_MAX_BYTES) {
		g->pf_full = true;
		return NULL;
	}
	xgrow((void **)&g->pf_buf, &g->pf_bufcap, g->pf_len + len, 1);
	e->addr = addr;
	e->len = len;
	e->off = (uint32_t)g->pf_len;
	e->gen = g->pf_gen;
	e->rc = 0;
	e->ready = 0;
	e->early = 0;
	g->pf_len += (len + 7u) & ~7u;
	g->pf_n++;
	if (g->pf_nreq >= g->pf_reqcap) {
		size_t cap = g->pf_reqcap;

		xgrow((void **)&g->pf_req, &g->pf_reqcap, g->pf_nreq + 1, sizeof(*g->pf_req));
		xgrow((void **)&g->pf_reqent, &cap, g->pf_nreq + 1, sizeof(*g->pf_reqent));
	}
	g->pf_req[g->pf_nreq].addr = addr;
	g->pf_req[g->pf_nreq].len = len;
	g->pf_reqent[g->pf_nreq] = (uint32_t)(e - g->pf);
	g->pf_nreq++;
	return e;
}

/* Reads every request with one vectored read. */
static void pf_issue(struct gort *g, bool early)
{
	size_t i;

	if (!g->pf_nreq)
		return;
	for (i = 0; i < g->pf_nreq; i++)
		g->pf_req[i].buf = g->pf_buf + g->pf[g->pf_reqent[i]].off;
	mem_readv(g->pf_mem, g->pf_req, g->pf_nreq);
	g->pf_calls++;
	for (i = 0; i < g->pf_nreq; i++) {
		struct pf_ent *e = &g->pf[g->pf_reqent[i]];

		e->rc = g->pf_req[i].rc;
		e->ready = 1;
		e->early = early;
	}
	g->pf_nreq = 0;
}

/* The reader gort's code sees during gort_read_batch (ctx: the gort). */
static int pf_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct gort *g = ctx;
	const uint8_t *copy = snap_piece(g, addr, len);
	struct pf_ent *e;

	if (copy) {
		memcpy(buf, copy, len);
		g->pf_last_early = false; /* older than the batch */
		g->st.label_pieces++;
		return 0;
	}
	e = len <= UINT32_MAX ? pf_slot(g, addr, (uint32_t)len) : NULL;
	if (e && e->gen == g->pf_gen && e->ready) {
		if (e->rc == 0)
			memcpy(buf, g->pf_buf + e->off, len);
		g->pf_last_early = e->early;
		return e->rc;
	}
	if (g->pf_mode == PF_DRY && len <= UINT32_MAX && pf_want(g, addr, (uint32_t)len)) {
		g->pf_missed = true;
		memset(buf, 0, len);
		return 0;
	}
	g->pf_spot++;
	return mem_read(g->pf_mem, addr, buf, len);
}

/* Starts a batch. want: reads the batch is known to need, or 0; the table starts with
 * room for them (up to PF_SLOTS), not at PF_SLOTS_MIN, when a batch's size is known
 * beforehand (gort_labels_batch: a chunk's label sets, read once per GC cycle). */
static void pf_begin(struct gort *g, const struct gp_mem *mem, size_t want)
{
	uint32_t slots = g->pf ? g->pf_slots : PF_SLOTS_MIN;

	if (g->pf && g->pf_full && slots < PF_SLOTS)
		slots *= 2;
	while (slots < PF_SLOTS && slots / 2 < want)
		slots *= 2;
	if (!g->pf || slots != g->pf_slots) {
		g->pf_slots = slots;
		free(g->pf);
		g->pf = xcalloc(g->pf_slots, sizeof(*g->pf));
		g->pf_gen = 0;
	}
	g->pf_full = false;
	if (++g->pf_gen == 0) { /* wrapped: old entries could look current */
		memset(g->pf, 0, g->pf_slots * sizeof(*g->pf));
		g->pf_gen = 1;
	}
	g->pf_n = 0;
	g->pf_len = 0;
	g->pf_nreq = 0;
	g->pf_mem = mem;
	g->pf_mode = PF_PASS;
}

/*
 * Loads one word of every cache line of the snapshots that identify and labels_of read:
 * the g's, the m, the pieces and the label set up to its strings (the bucket or the pair
 * array). The BPF program wrote them at the sample, on the CPU the target ran on, so the
 * reader's first load of each line misses. Loaded where they are used, the misses come
 * one after the other, each behind the work of its sample; loaded here, with no load
 * depending on another, they overlap. __builtin_prefetch of the same lines does not do it: the
 * lines are not there yet when labels_of comes to them. Every snapshot is a whole
 * record (gort_sample.snap), so no load passes its end.
 */
static void snap_load(const struct gort_sample *in, size_t n)
{
	enum { FROM = offsetof(struct gobpf_rec, g),
	       TO = offsetof(struct gobpf_rec, lbl) + GOBPF_LBL_STR_OFF };
	uint64_t x = 0, w;
	size_t i, off;

	for (i = 0; i < n; i++) {
		const unsigned char *b = (const unsigned char *)in[i].snap;

		if (b)
			for (off = FROM; off + 8 <= TO; off += 64) {
				memcpy(&w, b + off, 8);
				x |= w;
			}
	}
	__asm__ volatile("" : : "r"(x));
}

/* Works out one item of a batch through pf_read (pmem): item k of arg's arrays. */
typedef void (*pf_item_fn)(struct gort *gr, const struct gp_mem *pmem, size_t k, void *arg);

/*
 * The label rounds of a batch (see above) for items pending[0..n), pending used as
 * scratch: each round runs one() for every item not answered yet with reads only
 * requested (PF_DRY), throws away the answer (and the statistics) of each item that
 * missed a read, and reads every request with one vectored read. What is still missing
 * after PF_ROUNDS rounds, or did not fit the table, is read on the spot. Leaves the
 * reader as gort_read expects it (PF_OFF).
 */
static void pf_rounds(struct gort *gr, const struct gp_mem *pmem, size_t *pending, size_t n,
		      pf_item_fn one, void *arg)
{
	size_t i;
	int round;

	gr->pf_mode = PF_DRY;
	for (round = 0; round < PF_ROUNDS && n; round++) {
		size_t k = 0;

		for (i = 0; i < n; i++) {
			struct gort_stats save = gr->st;

			gr->pf_missed = false;
			one(gr, pmem, pending[i], arg);
			if (gr->pf_missed) {
				gr->st = save;
				pending[k++] = pending[i];
			}
		}
		n = k;
		if (!gr->pf_nreq)
			break;
		pf_issue(gr, false);
	}
	gr->pf_mode = PF_PASS;
	gr->pf_missed = false;
	for (i = 0; i < n; i++)
		one(gr, pmem, pending[i], arg);
	gr->snap = NULL;
	gr->pf_mode = PF_OFF;
	gr->pf_nreq = 0;
}

/* Room for n items in the batch scratch (batch, pending). */
static void batch_room(struct gort *gr, size_t n)
{
	size_t cap = gr->batch_cap;

	if (n <= cap)
		return;
	xgrow((void **)&gr->batch, &cap, n, sizeof(*gr->batch));
	gr->pending = xrealloc(gr->pending, cap * sizeof(*gr->pending));
	gr->batch_cap = cap;
}

/* gort_read_batch's samples after identify: the goroutines to finish, with labels. */
struct finish_arg {
	const struct gort_sample *in;
	struct gort_result *out;
	int *rcs;
	bool have_sg, sg_around;
	uint32_t sg;
};

static void finish_one(struct gort *gr, const struct gp_mem *pmem, size_t k, void *arg)
{
	const struct finish_arg *a = arg;
	const struct batch_item *b = &gr->batch[k];

	gr->snap = a->in[k].snap;
	a->rcs[k] = gort_finish(gr, pmem, b->rc, &b->cur, b->flags, a->have_sg && b->cur.early,
				a->sg_around, a->sg, &a->out[k]);
}

size_t gort_read_batch(struct gort *gr, const struct gp_mem *mem, const struct gort_sample *in,
		       size_t n, struct gort_result *out, int *rcs)
{
	const uint64_t reads_before = gr->pf_calls + gr->pf_spot;
	const struct gp_mem pmem = { pf_read, gr, NULL };
	uint64_t sgaddr = gr->mheap + gr->off.mheap_sweepgen;
	uint32_t sg = 0;
	bool have_sg = false, sg_around = false;
	size_t i, npend = 0;
	bool need_sg = false;
	struct finish_arg a = { in, out, rcs, false, false, 0 };

	batch_room(gr, n);
	pf_begin(gr, mem, 0);
	snap_load(in, n);
	/* Samples whose label sets were not copied at the sample (snap_piece) need the sweep
	 * generation, unless the snapshot's goroutines had no labels at all. */
	for (i = 0; i < n; i++) {
		const struct gobpf_rec *r = in[i].snap;

		if (!r || !(r->flags & GOBPF_REC_LBL))
			need_sg |= !r || !(r->flags & GOBPF_REC_G) || r->g[GOBPF_G_LABELS] ||
				   ((r->flags & GOBPF_REC_CURG) && r->curg[GOBPF_G_LABELS]);
	}
	/* The first read: every g the registers name, the m of samples on a known thread's
	 * system stack (via_register), and the sweep generation before and after them (8
	 * bytes before, 4 after: two entries of the table; sweepgen is a uint32 inside the
	 * large mheap_, runtime/mheap.go; both architectures are little-endian). A batch
	 * whose label sets were all copied at the sample has no use for it (labels_of). */
	need_sg = need_sg && gr->mheap && gr->off.mheap_sweepgen;
	if (need_sg)
		pf_want(gr, sgaddr, 8);
	for (i = 0; i < n; i++) {
		const struct tid_slot *s = gort_tid_slot(gr, in[i].tid);

		if (in[i].snap && (in[i].snap->flags & GOBPF_REC_G))
			continue; /* read at the sample */
		if (s->tid == in[i].tid && s->g0 && ptr_ok(s->m) &&
		    (in[i].greg == s->g0 || in[i].greg == s->gsignal))
			pf_want(gr, s->m, gr->msz);
		else if (ptr_ok(in[i].greg))
			pf_want(gr, in[i].greg, gr->gsz);
	}
	if (need_sg)
		pf_want(gr, sgaddr, 4);
	pf_issue(gr, true);
	for (i = 0; i < n; i++) {
		struct batch_item *b = &gr->batch[i];

		gr->snap = in[i].snap;
		if (gr->snap)
			gr->st.snapshots++;
		b->rc = gort_identify(gr, &pmem, in[i].tid, in[i].greg, in[i].sp, &b->cur, &b->flags);
		if (b->rc == 0 && b->cur.labels)
			gr->pending[npend++] = i;
		else
			rcs[i] = gort_finish(gr, &pmem, b->rc, &b->cur, b->flags, false, false, 0, &out[i]);
	}
	gr->snap = NULL;
	/* One read of the sweep generation, after every g was read, serves every g the
	 * first read got; a g read later (a slow path) reads its own. */
	if (npend && need_sg)
		have_sg = gort_read_sweepgen(gr, &pmem, &sg);
	if (have_sg) {
		uint8_t before[8];

		/* The same generation before the g's were read: g.labels of each g read then
		 * was observed after a read of sg, which is what the label cache's proofs need
		 * (labels_of); no GC cycle ended in between. */
		sg_around = pf_read(gr, sgaddr, before, 8) == 0 && ld32(before, 0) == sg;
	}
	a.have_sg = have_sg;
	a.sg_around = sg_around;
	a.sg = sg;
	pf_rounds(gr, &pmem, gr->pending, npend, finish_one, &a);
	return (size_t)(gr->pf_calls + gr->pf_spot - reads_before);
}

/* gort_labels_batch's goroutines: the label set of each view. */
struct labels_arg {
	const struct gview *views;
	bool have_sg, sg_before;
	uint32_t sg;
	const struct gort_labels **outs;
	int *flags, *rcs;
};

static void labels_one(struct gort *gr, const struct gp_mem *pmem, size_t k, void *arg)
{
	const struct labels_arg *a = arg;

	a->outs[k] = NULL;
	a->flags[k] = 0;
	a->rcs[k] = gort_labels_of(gr, pmem, &a->views[k], a->have_sg, a->sg_before, a->sg,
				   &a->outs[k], &a->flags[k]);
}

size_t gort_labels_batch(struct gort *gr, const struct gp_mem *mem, const struct gview *views,
			 size_t n, bool have_sg, bool sg_before, uint32_t sg,
			 const struct gort_labels **outs, int *flags, int *rcs)
{
	const uint64_t reads_before = gr->pf_calls + gr->pf_spot;
	const struct gp_mem pmem = { pf_read, gr, NULL };
	struct labels_arg a = { views, have_sg, sg_before, sg, outs, flags, rcs };
	size_t i;

	if (!n)
		return 0;
	batch_room(gr, n);
	/* A label set takes a few reads: its cell or header, its buckets or array, its
	 * strings (goruntime-decode.c). */
	pf_begin(gr, mem, 4 * n);
	gr->snap = NULL;
	for (i = 0; i < n; i++)
		gr->pending[i] = i;
	pf_rounds(gr, &pmem, gr->pending, n, labels_one, &a);
	return (size_t)(gr->pf_calls + gr->pf_spot - reads_before);
}
