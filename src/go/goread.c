/* goread.c: reads each sample's goroutine and pprof labels on the sampling thread, as
 * close to the sample as possible (once per ring drain, for all of its samples at once),
 * and hands them on as an extra record. */
#include "config.h"
#include "gotop/goread.h"
#include "gotop/arch.h"
#include "gotop/gobpf.h"
#include "gotop/maps.h"
#include "gotop/mem.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The samples of one drain wait for its end (the sampler's end-of-drain call of the
 * hook), then are read together with gort_read_batch: a few vectored reads per drain
 * instead of a few reads per sample. Samples of one thread with the same g register
 * and stack pointer are read at the same moment anyway (the thread has run on since),
 * so one read serves them all; the memory itself is read once per address (pf_read). */
struct pend {
	uint64_t time;            /* sample time, CLOCK_MONOTONIC */
	struct goread_extra *x;   /* in the sampler's batch, held until the end of the drain */
	uint32_t tid;
	uint64_t ip, sp, greg;    /* user registers: they identify the BPF program's record */
	int cont;                 /* x is followed by room for a goread_cont */
};

#define PEND_MAX 65536 /* beyond this a drain's samples are read at once, in a batch of their own */
#define DEDUP_SLOTS 1024
/* BPF records not matched yet (their sample is in a later drain) are kept this long,
 * and at most this many. */
#define RECS_KEEP_NS 1000000000ULL
#define RECS_MAX 65536
/* A record is the sample's when it has the same thread and registers and comes at
 * most this much before it (the program runs just before the kernel writes the
 * sample: kernel/events/core.c __perf_event_overflow). */
#define MATCH_WINDOW_NS 2000000ULL

struct goread {
	struct gort *gort;
	struct gp_mem *mem;
	struct pend *pend;
	size_t npend, cappend;
	uint32_t *item;           /* per pending sample: index into in */
	size_t capitem;
	struct gort_sample *in;   /* distinct (tid, g register) of the drain */
	struct gort_result *res;
	int *rcs;
	size_t nin, capin;
	uint32_t dedup[DEDUP_SLOTS]; /* item + 1 by hash of (tid, greg, sp); 0: empty */
	/* The BPF program's records (gobpf): read at each drain's end, kept in the order
	 * they came, and found through a hash table of (tid, registers) built at each
	 * drain's end (index_recs): a lookup per sample costs less than sorting keys by
	 * (tid, time), and sorting the records themselves would move more memory than
	 * the copy out of the ring. */
	int use_snap;
	/* recs[i]: in the ring (gobpf_peek) until the drain's end; the few kept for a later
	 * drain are copied then (meta[i].own), before the ring's space is given back. */
	const struct gobpf_rec **recs;
	struct rec_meta *meta; /* meta[i]: what matching needs of recs[i] */
	size_t nrecs, caprecs, capmeta;
	uint32_t *head;        /* hash of (tid, registers) -> first meta index + 1 (0: none) */
	size_t nhead;          /* a power of two, at least twice nrecs */
	/* The executable's read-only mappings, for a program loaded after the reader was
	 * published (gobpf_set_statics). */
	uint64_t ro[GOBPF_STATIC_MAX][2];
	size_t nro;
};

/* Matching and dropping records read only these, never the records: a record is about
 * 900 bytes, written on another CPU and cold by then, so reading its time and matched
 * fields in the match and the compaction cost a cache miss each. */
struct rec_meta {
	uint64_t time, ip, sp, greg;
	uint32_t tid;
	uint8_t matched, own; /* own: recs[i] is a copy of ours (malloc), not in the ring */
	uint32_t next; /* the next record in the same hash chain + 1 (0: none) */
};

struct goread_slot {
	struct goread *gr;     /* published with release, read with acquire */
	pthread_mutex_t lock;  /* gort is single-threaded; samplers may be several */
	struct goread_stats st;
	/* The program, set under the lock once loaded, which may be after the samplers
	 * started (goread_slot_bpf): the reader takes its records from then on. */
	struct gobpf *bpf;
};

/* Frees the copies among records [a, b). */
static void recs_free(struct goread *gr, size_t a, size_t b)
{
	for (; a < b; a++)
		if (gr->meta[a].own)
			free((void *)gr->recs[a]);
}

struct goread_slot *goread_slot_new(void)
{
	struct goread_slot *slot = xcalloc(1, sizeof(*slot));

	pthread_mutex_init(&slot->lock, NULL);
	return slot;
}

void goread_slot_free(struct goread_slot *slot)
{
	if (!slot)
		return;
	if (slot->gr) {
		gort_free(slot->gr->gort);
		mem_pid_free(slot->gr->mem);
		free(slot->gr->pend);
		free(slot->gr->item);
		recs_free(slot->gr, 0, slot->gr->nrecs);
		free(slot->gr->recs);
		free(slot->gr->meta);
		free(slot->gr->head);
		free(slot->gr->in);
		free(slot->gr->res);
		free(slot->gr->rcs);
		free(slot->gr);
	}
	gobpf_free(slot->bpf);
	pthread_mutex_destroy(&slot->lock);
	free(slot);
}

/* Whether gr takes the records of program b: built for the same offsets. Records of a
 * program built for others (DWARF disagreeing with the table it was loaded from) would be
 * misread: then every sample is read the slow way. Under the slot's lock. */
static void use_bpf(struct goread *gr, struct gobpf *b)
{
	gr->use_snap = b && gobpf_offsets_match(b, gort_offsets(gr->gort));
	/* From now on the program copies the strings that are not constants. */
	if (gr->use_snap && gr->nro)
		gobpf_set_statics(b, (const uint64_t (*)[2])gr->ro, gr->nro);
}

int goread_slot_bpf(struct goread_slot *slot, const char *go_version, size_t ring_bytes, char *why,
		    size_t whylen)
{
	const struct gort_offsets *o;
	struct gobpf *b;
	struct goread *gr;

	pthread_mutex_lock(&slot->lock);
	b = slot->bpf;
	pthread_mutex_unlock(&slot->lock);
	if (b)
		return -EEXIST;
	/* The version table's offsets: what gort_new takes without DWARF. The reader
	 * published checks that its own agree (gobpf_offsets_match). */
	o = gort_table_offsets(go_version);
	if (!o) {
		int e = errno ? errno : ENOTSUP;

		snprintf(why, whylen, "no runtime offsets for %s: %s", go_version, strerror(e));
		return -e;
	}
	/* Loaded without the lock: the samplers read goroutines the slow way meanwhile. */
	b = gobpf_new(o, ring_bytes, why, whylen);
	if (!b)
		return -(errno ? errno : EINVAL);
	pthread_mutex_lock(&slot->lock);
	slot->bpf = b;
	gr = __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE);
	if (gr)
		use_bpf(gr, b);
	pthread_mutex_unlock(&slot->lock);
	return 0;
}

int goread_bpf_fd(struct goread_slot *slot)
{
	int fd;

	pthread_mutex_lock(&slot->lock);
	fd = slot->bpf ? gobpf_prog_fd(slot->bpf) : -1;
	pthread_mutex_unlock(&slot->lock);
	return fd;
}

int goread_publish(struct goread_slot *slot, pid_t pid, const char *go_version, Dwarf *dwarf,
		   int arch)
{
	struct goread *gr;
	struct gort *g;

	if (__atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE))
		return -EEXIST;
	g = gort_new(go_version, dwarf, arch);
	if (!g)
		return -(errno ? errno : ENOTSUP);
	gr = xcalloc(1, sizeof(*gr));
	gr->gort = g;
	gr->mem = mem_pid_new(pid);
	pthread_mutex_lock(&slot->lock);
	use_bpf(gr, slot->bpf);
	__atomic_store_n(&slot->gr, gr, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&slot->lock);
	return 0;
}

int goread_publish_file(struct goread_slot *slot, pid_t pid, struct symfile *sf)
{
	const char *ver = symfile_go_version(sf);
	struct goread *gr;
	struct maps *m;
	struct stat st;
	char exe[64];
	uint64_t bias = 0, allm, mheap;
	int have_bias = 0, r;

	if (!ver)
		return -ENOTSUP;
	r = goread_publish(slot, pid, ver, symfile_dwarf(sf),
			   symfile_machine(sf) == EM_AARCH64 ? GORT_ARCH_ARM64 : GORT_ARCH_AMD64);
	if (r)
		return r;
	gr = slot->gr;
	/* The executable's mappings: the load bias (PIE) and its read-only parts. */
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	m = maps_load(pid);
	pthread_mutex_lock(&slot->lock);
	if (m && stat(exe, &st) == 0) {
		for (size_t i = 0; i < maps_count(m); i++) {
			const struct maps_entry *me = maps_at(m, i);
			uint64_t vaddr;

			if (me->inode != (uint64_t)st.st_ino)
				continue;
			if (!have_bias && symfile_file_vaddr(sf, me->start, me->pgoff, me->start, &vaddr) == 0) {
				bias = me->start - vaddr;
				have_bias = 1;
			}
			if (!(me->perms & MAPS_W)) {
				gort_add_static_range(gr->gort, me->start, me->end);
				if (gr->nro < GOBPF_STATIC_MAX) {
					gr->ro[gr->nro][0] = me->start;
					gr->ro[gr->nro++][1] = me->end;
				}
			}
		}
	}
	allm = symfile_symbol_value(sf, "runtime.allm");
	mheap = symfile_symbol_value(sf, "runtime.mheap_");
	if ((!allm || !mheap) && symfile_gopcln(sf)) {
		/* Stripped: runtime.allm from the code that uses it, when the target's
		 * memory does not contradict it (it is 0 until the runtime starts), and
		 * runtime.mheap_ from where its sweepgen is. */
		struct gort_vars v;
		uint32_t sgoff = gort_offsets(gr->gort)->mheap_sweepgen;

		if (gort_vars_find(symfile_elf(sf), symfile_gopcln(sf), &v) == 0) {
			if (!allm && v.allm) {
				v.allm += bias;
				r = gort_vars_check(gr->gort, gr->mem, &v, GORT_VAR_ALLM);
				if (r == 0 || r == -EAGAIN)
					allm = v.allm - bias;
			}
			if (!mheap && v.sweepgen && sgoff && v.sweepgen > sgoff)
				mheap = v.sweepgen - sgoff;
		}
	}
	if (have_bias || symfile_type(sf) == ET_EXEC)
		gort_set_runtime_vars(gr->gort, allm ? allm + bias : 0, mheap ? mheap + bias : 0);
	use_bpf(gr, slot->bpf);
	pthread_mutex_unlock(&slot->lock);
	maps_free(m);
	return 0;
}

int goread_active(const struct goread_slot *slot)
{
	return __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE) != NULL;
}

static int log2_bucket(uint64_t v)
{
	int b = 0;

	while (v > 1 && b < 31) {
		v >>= 1;
		b++;
	}
	return b;
}

/* Takes record r, in the ring until the drain's end (gobpf_peek). */
static void add_rec(void *arg, const struct gobpf_rec *r)
{
	struct goread *gr = arg;

	xgrow((void **)&gr->recs, &gr->caprecs, gr->nrecs + 1, sizeof(*gr->recs));
	xgrow((void **)&gr->meta, &gr->capmeta, gr->nrecs + 1, sizeof(*gr->meta));
	gr->meta[gr->nrecs] = (struct rec_meta){ r->time, r->ip, r->sp, r->greg, r->tid, 0, 0, 0 };
	gr->recs[gr->nrecs++] = r;
}

/* A copy of record r that outlives the ring's: its fixed part and the label bytes its
 * pieces cover (the reader reads nothing else of them: snap_piece in
 * src/go/goruntime-int.h), in a whole record, the rest zero, since gort_read_batch
 * loads lines of each record up to its strings before reading it (snap_load): a copy
 * cut at its last byte would be read past its end. Few records outlive their drain, so
 * the whole-record copies cost little. */
static const struct gobpf_rec *rec_copy(const struct gobpf_rec *r)
{
	uint32_t used = gobpf_lbl_used(r);
	struct gobpf_rec *d = xcalloc(1, sizeof(*d));

	memcpy(d, r, offsetof(struct gobpf_rec, lbl) + used);
	return d;
}

static uint64_t rec_hash(uint32_t tid, uint64_t ip, uint64_t sp, uint64_t greg)
{
	return util_mix64(ip ^ util_mix64(sp ^ ((uint64_t)tid << 32)) ^ (greg * 0x9e3779b97f4a7c15ULL));
}

/* The hash table of the records (after the drain's records were added). A chain holds
 * its records oldest first: those of one thread come in the order of their samples (the
 * program runs in the sampled thread), the kept ones of earlier drains before them. */
static void index_recs(struct goread *gr)
{
	size_t i, want = 64;

	while (want < 2 * gr->nrecs)
		want *= 2;
	if (want > gr->nhead) {
		free(gr->head);
		gr->head = xmalloc(want * sizeof(*gr->head));
		gr->nhead = want;
	}
	memset(gr->head, 0, gr->nhead * sizeof(*gr->head));
	for (i = gr->nrecs; i-- > 0;) {
		struct rec_meta *m = &gr->meta[i];
		uint32_t *h = &gr->head[rec_hash(m->tid, m->ip, m->sp, m->greg) & (gr->nhead - 1)];

		m->next = *h;
		*h = (uint32_t)i + 1;
	}
}

/* The BPF record of sample p: of the same thread, with the same registers, the
 * closest in time within the window and not taken by another sample (more than one
 * event may sample a thread at the same moment); it leaves its chain, so that the
 * samples of a hot loop (one pc, one stack pointer) find theirs first. Which of the two
 * times comes first depends on the kernel (the sample's time is taken in
 * perf_prepare_sample, which some versions run before the program). NULL when none
 * (ring full, no g register, the program not attached to the sample's event). */
static const struct gobpf_rec *match(struct goread *gr, const struct pend *p)
{
	uint32_t *link, *bestlink = NULL, i;
	uint64_t bestd = MATCH_WINDOW_NS + 1;

	if (!gr->nhead)
		return NULL;
	for (link = &gr->head[rec_hash(p->tid, p->ip, p->sp, p->greg) & (gr->nhead - 1)]; (i = *link);
	     link = &gr->meta[i - 1].next) {
		const struct rec_meta *m = &gr->meta[i - 1];
		uint64_t d = m->time > p->time ? m->time - p->time : p->time - m->time;

		if (m->tid != p->tid || m->greg != p->greg || m->sp != p->sp || m->ip != p->ip)
			continue;
		if (d >= bestd) {
			if (m->time > p->time)
				break; /* later ones are further still */
			continue;  /* too old, or an older one of a duplicate pair */
		}
		bestd = d;
		bestlink = link;
	}
	if (!bestlink)
		return NULL;
	i = *bestlink - 1;
	*bestlink = gr->meta[i].next;
	gr->meta[i].matched = 1;
	return gr->recs[i];
}

/* Drops matched records and those too old to find their sample, and copies those kept
 * out of the ring, whose space is given back next (gobpf_release). Returns how many it
 * copied. */
static size_t recs_compact(struct goread *gr, uint64_t now)
{
	size_t i, k = 0, copied = 0;

	for (i = 0; i < gr->nrecs; i++) {
		if (gr->meta[i].matched || gr->meta[i].time + RECS_KEEP_NS <= now) {
			recs_free(gr, i, i + 1);
			continue;
		}
		if (k != i) {
			gr->recs[k] = gr->recs[i];
			gr->meta[k] = gr->meta[i];
		}
		k++;
	}
	if (k > RECS_MAX) { /* the newest (the last to come) are the ones still to match */
		recs_free(gr, 0, k - RECS_MAX);
		memmove(gr->recs, gr->recs + (k - RECS_MAX), RECS_MAX * sizeof(*gr->recs));
		memmove(gr->meta, gr->meta + (k - RECS_MAX), RECS_MAX * sizeof(*gr->meta));
		k = RECS_MAX;
	}
	gr->nrecs = k;
	for (i = 0; i < k; i++)
		if (!gr->meta[i].own) {
			gr->recs[i] = rec_copy(gr->recs[i]);
			gr->meta[i].own = 1;
			copied++;
		}
	return copied;
}

/* The drain's read for (tid, greg, sp): an existing one, or a new one. */
static uint32_t item_for(struct goread *gr, uint32_t tid, uint64_t greg, uint64_t sp,
			 const struct gobpf_rec *snap)
{
	size_t j = 0, k = DEDUP_SLOTS;

	if (!snap) { /* a snapshot is its sample's own: not shared */
		for (j = util_mix64(greg ^ ((uint64_t)tid << 40) ^ util_mix64(sp)) & (DEDUP_SLOTS - 1), k = 0;
		     gr->dedup[j] && k < DEDUP_SLOTS; j = (j + 1) & (DEDUP_SLOTS - 1), k++) {
			const struct gort_sample *in = &gr->in[gr->dedup[j] - 1];

			/* SP too: whether a goroutine is believed depends on it (a stale or
			 * garbage register is checked against the goroutine's stack). */
			if (in->tid == tid && in->greg == greg && in->sp == sp && !in->snap)
				return gr->dedup[j] - 1;
		}
	}
	if (gr->nin >= gr->capin) {
		size_t cap = gr->capin;
		size_t c2 = cap;

		xgrow((void **)&gr->in, &gr->capin, gr->nin + 1, sizeof(*gr->in));
		xgrow((void **)&gr->res, &cap, gr->nin + 1, sizeof(*gr->res));
		xgrow((void **)&gr->rcs, &c2, gr->nin + 1, sizeof(*gr->rcs));
	}
	gr->in[gr->nin] = (struct gort_sample){ tid, greg, sp, snap };
	if (k < DEDUP_SLOTS && gr->nin < DEDUP_SLOTS / 2)
		gr->dedup[j] = (uint32_t)gr->nin + 1;
	return (uint32_t)gr->nin++;
}

/* The suspended goroutine's state of a sample from its BPF record, when the program
 * copied it from the goroutine the reader found (gobpf-abi.h, gobpf_cont). */
static void cont_fill(struct goread_slot *slot, struct goread_cont *c, const struct gobpf_rec *r,
		      const struct goread_extra *x)
{
	uint32_t n;

	memset(c, 0, sizeof(*c));
	if (!r || !(r->flags & GOBPF_REC_CONT) || x->rc != 0 || r->cont.goid != x->goid)
		return;
	_Static_assert(GOREAD_CONT_WORDS == GOBPF_CONT_WORDS, "stack words differ");
	n = GP_MIN(r->cont.n, (uint32_t)GOREAD_CONT_FRAMES);
	c->pc = r->cont.pc;
	c->sp = r->cont.sp;
	c->bp = r->cont.bp;
	memcpy(c->stack, r->cont.stack, sizeof(c->stack));
	memcpy(c->ret, r->cont.ret, n * sizeof(c->ret[0]));
	c->n = n;
	c->valid = 1;
	c->cb = r->cont.kind == GOBPF_CONT_CB;
	slot->st.conts++;
}

/* Reads every waiting sample's goroutine and labels and fills in their extra records.
 * Called with the slot's lock held. Returns the reads of the target it made
 * (gort_read_batch). */
static size_t flush(struct goread_slot *slot, struct goread *gr)
{
	uint64_t t;
	size_t i, reads;

	if (!gr->npend)
		return 0;
	/* The program's record of a sample is written before the sample, so every sample
	 * drained so far has its record in the ring by now. */
	if (gr->use_snap) {
		gobpf_peek(slot->bpf, add_rec, gr);
		index_recs(gr);
	}
	xgrow((void **)&gr->item, &gr->capitem, gr->npend, sizeof(*gr->item));
	for (i = 0; i < gr->npend; i++) {
		const struct pend *p = &gr->pend[i];
		const struct gobpf_rec *snap = gr->use_snap ? match(gr, p) : NULL;

		gr->item[i] = item_for(gr, p->tid, p->greg, p->sp, snap);
		if (snap)
			slot->st.snapshots++;
		else if (gr->use_snap)
			slot->st.snap_missing++;
	}
	t = util_now_ns(); /* the reads happen right after */
	reads = gort_read_batch(gr->gort, gr->mem, gr->in, gr->nin, gr->res, gr->rcs);
	slot->st.reads += gr->nin;
	slot->st.coalesced += gr->npend - gr->nin;
	for (i = 0; i < gr->npend; i++) {
		const struct pend *p = &gr->pend[i];
		const struct gort_sample *in = &gr->in[gr->item[i]];
		const struct gort_result *r = &gr->res[gr->item[i]];
		struct goread_extra *x = p->x;

		memset(x, 0, sizeof(*x));
		x->rc = gr->rcs[gr->item[i]];
		if (x->rc == 0) {
			x->goid = r->goid;
			x->labels = r->labels;
			x->startpc = r->startpc;
			slot->st.found++;
			if (x->labels && x->labels->n)
				slot->st.labelled++;
		}
		x->flags = (uint32_t)r->flags;
		if (p->cont)
			cont_fill(slot, (struct goread_cont *)(x + 1), in->snap, x);
		/* Sample times are CLOCK_MONOTONIC (the sampler sets use_clockid). A
		 * snapshot's g and g.labels are the sample's own. */
		x->delay_ns = in->snap || t <= p->time ? 0 : t - p->time;
		slot->st.delay_hist[log2_bucket(x->delay_ns)]++;
	}
	if (gr->use_snap) {
		slot->st.recs_kept += recs_compact(gr, t);
		gobpf_release(slot->bpf);
	}
	gr->npend = 0;
	gr->nin = 0;
	memset(gr->dedup, 0, sizeof(gr->dedup));
	return reads;
}

size_t goread_hook(void *arg, const struct perf_event_header *h, const struct perfrec_layout *layout,
		   void *extra)
{
	struct goread_slot *slot = arg;
	struct goread *gr = __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE);
	struct goread_extra *x = extra;
	struct perf_sample s;
	int sp = sampler_reg(SREG_SP), g = sampler_reg(SREG_G), ip = sampler_reg(SREG_IP), cont;

	if (!gr)
		return 0;
	if (!h) {
		/* The end of a drain: every sample's extra record is still the sampler's. */
		size_t reads;

		pthread_mutex_lock(&slot->lock);
		reads = flush(slot, gr);
		pthread_mutex_unlock(&slot->lock);
		return reads != 0;
	}
	if (perfrec_parse_sample(layout, h, &s) || !s.regs_abi || sp < 0 || g < 0 || ip < 0)
		return 0;
	memset(x, 0, sizeof(*x));
	x->rc = -EAGAIN; /* until the end of the drain */
	pthread_mutex_lock(&slot->lock);
	if (gr->npend >= PEND_MAX)
		flush(slot, gr);
	cont = gr->use_snap;
	xgrow((void **)&gr->pend, &gr->cappend, gr->npend + 1, sizeof(*gr->pend));
	gr->pend[gr->npend++] = (struct pend){ s.time, x, s.tid, s.regs[ip], s.regs[sp], s.regs[g], cont };
	pthread_mutex_unlock(&slot->lock);
	/* Room for the suspended goroutine's state, known only once the sample's BPF record
	 * is matched at the drain's end. */
	return sizeof(*x) + (cont ? sizeof(struct goread_cont) : 0);
}

void goread_get_stats(const struct goread_slot *slot, struct goread_stats *st)
{
	const struct goread *gr = __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE);

	pthread_mutex_lock((pthread_mutex_t *)&slot->lock);
	*st = slot->st;
	if (gr) { /* gort is read under the lock, as flush uses it */
		struct gort_stats gs;

		gort_get_stats(gr->gort, &gs);
		st->readvs = gs.batch_readvs;
		st->label_pieces = gs.label_pieces;
		st->label_content = gs.label_hits_content;
	}
	if (slot->bpf) {
		gobpf_counts(slot->bpf, &st->bpf_records, &st->bpf_ring_full);
		gobpf_run_time(slot->bpf, &st->bpf_runs, &st->bpf_run_ns);
		gobpf_load_info(slot->bpf, &st->bpf_load);
	}
	pthread_mutex_unlock((pthread_mutex_t *)&slot->lock);
}

uint64_t goread_delay_quantile(const struct goread_stats *st, double q)
{
	uint64_t total = 0, acc = 0;
	int b;

	for (b = 0; b < 32; b++)
		total += st->delay_hist[b];
	if (!total)
		return 0;
	for (b = 0; b < 32; b++) {
		acc += st->delay_hist[b];
		if ((double)acc >= q * (double)total)
			return 2ULL << b; /* the bucket's upper bound */
	}
	return 2ULL << 31;
}
