/* gomem.c: the buckets of the Go runtime's memory, block and mutex profiles, read from a
 * live process without stopping it, as one moment.
 *
 * Format facts (runtime/mprof.go of go1.19 to go1.27, amd64):
 * - A bucket is a header {next, allnext, typ, hash, size, nstk} (six words), nstk stack
 *   words, then its record: memRecord for typ 1, blockRecord for 2 and 3. Buckets are made
 *   by newBucket (persistentalloc, never freed); the header and stack are written under
 *   profInsertLock before the bucket is stored to the list head (stkbucket), and never
 *   change after: a walk from a head read once sees complete buckets only.
 * - hash is stkbucket's: h += pc; h += h << 10; h ^= h >> 6 over the stack, then the same
 *   with size, then h += h << 3; h ^= h >> 11 (the same code in every release): a bucket
 *   read from garbage almost never matches it.
 * - Stacks hold at most maxStack = 32 words through go1.22; from go1.23 up to
 *   maxProfStackDepth (1024) + 2 (heap, go1.26+) or 1 + maxSkip (block and mutex).
 * - memRecord through go1.26: active {allocs, frees, alloc_bytes, free_bytes}, then
 *   future[3] of the same (128 bytes); go1.27 memRecordCycle is {allocs, frees} (64 bytes),
 *   bytes being count * bucket.size. blockRecord is {count float64, cycles int64}.
 * - mProfCycle (uint32): the cycle C is value >> 1 (wrapping at 3 << 25); mallocs count to
 *   future[(C+2)%3], sweep frees to future[(C+1)%3]; at mark termination C moves on and
 *   mProf_Flush adds future[C%3] to active; runtime.GC ends with mProf_PostSweep, which
 *   adds future[(C+1)%3]. Each flush holds profMemActiveLock over its whole walk.
 * - What runtime/pprof reports (memProfileInternal, go1.19-go1.22 MemProfile): it flushes
 *   future[C%3] into active itself, and when no bucket then has an active count (no GC
 *   cycle published yet) it adds every future cycle. An outside reader takes the same sums
 *   without writing: S = active + future[C%3], or active + all futures.
 * - Block and mutex records only grow (saveblockevent, saveBlockEventStack under
 *   profBlockLock).
 * - The runtime mutex (runtime2.go `type mutex struct { lockRankStruct; key uintptr }`) is
 *   held when key != 0 through go1.23 (lock_futex.go: mutex_locked 1, mutex_sleeping 2) and
 *   when key & 1 from go1.24 (lock_spinbit.go mutexLocked 0x001).
 * - runtime.ticks: go1.19 {lock, pad uint32, val uint64}, go1.21 {lock, val}, go1.22+
 *   {lock, startTicks, startTime, val}; ticksPerSecond (go1.22+) computes val as
 *   int64(float64(nowTicks - startTicks) * 1e9 / float64(nowTime - startTime)) once 100 ms
 *   have passed; tickspersecond (go1.19-go1.21) measures cputicks over usleep(100 ms).
 *   cputicks is RDTSC on amd64 (runtime/asm_amd64.s), nanotime CLOCK_MONOTONIC.
 */
#include "config.h"
#include "gotop/gomem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __x86_64__
#include <x86intrin.h>
#endif

#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"
#include "gotop/hashmap.h"
#include "gotop/mem.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

#define HDR 48 /* bucket header bytes */
#define PAGE 4096
#define WIN_PAGES 16
#define WIN_BYTES (WIN_PAGES * PAGE)
#define NWIN 8 /* windows kept: buckets of a few persistentalloc chunks */
#define TRIES 4
#define RUN_MAX (256u << 10)  /* bytes of one run of the second read */
#define RUN_GAP (16u << 10)   /* records this far apart share a run */
#define CYCLE_WRAP (3u << 25) /* mProfCycleWrap */
#define RATE_MAX (1LL << 40)  /* a MemProfileRate no program sets */

/* A copy of WIN_BYTES of the target, page by page (ok: the pages that could be read). */
struct win {
	uint64_t base;
	uint8_t *buf;
	uint32_t ok;
	uint64_t used;
	int valid;
};

/* The arrays of one kind's snapshot: the reader's, reused by every read of that kind. */
struct kbuf {
	struct gomem_bucket *b;
	size_t bcap;
	uint64_t *pcs;
	size_t pcap;
};

/* A run of the second read: target bytes [addr, addr + len), copied at off in runbuf. */
struct run {
	uint64_t addr;
	size_t len, off;
	int rc;
};

struct gomem {
	struct gomem_target t;
	struct gp_mem *own; /* t.mem when gomem_new made it */
	uint32_t words;     /* words of a memRecordCycle: 4, or 2 from go1.27 */
	uint32_t max_stk;
	struct win win[NWIN];
	uint64_t tick;
	uint8_t *scratch;
	size_t scratch_cap;
	int64_t ticks; /* the target's ticks per second once known */
	struct gomem_stats *st;
	/* scratch kept from read to read: no allocation, no fresh page, once warm */
	struct kbuf kb[4];
	uint8_t *rec1, *rec2, *bad, *runbuf;
	size_t rec1cap, rec2cap, badcap, runbufcap;
	struct run *runs;
	uint32_t *runof; /* the run of each record */
	size_t runscap, runofcap;
	struct mem_iov *iov;
	size_t iovcap;
	struct hsum *sums;
	size_t sumscap;
};

const struct gomem_target *gomem_target(const struct gomem *g)
{
	return &g->t;
}

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* stkbucket's hash (go1.19-go1.27 runtime/mprof.go). */
static uint64_t bucket_hash(const uint8_t *stk, uint64_t nstk, uint64_t size)
{
	uint64_t h = 0, i;

	for (i = 0; i < nstk; i++) {
		h += ld64(stk + 8 * i);
		h += h << 10;
		h ^= h >> 6;
	}
	h += size;
	h += h << 10;
	h ^= h >> 6;
	h += h << 3;
	h ^= h >> 11;
	return h;
}

static uint32_t rec_size(const struct gomem *g, int kind)
{
	return kind == GOMEM_HEAP ? 4 * g->words * 8 : 16;
}

/* ---- reading through windows ---- */

static void count_read(struct gomem *g, size_t bytes)
{
	if (g->st) {
		g->st->readvs++;
		g->st->bytes += bytes;
	}
}

static const uint8_t *win_hit(const struct win *w, uint64_t a, size_t len)
{
	uint64_t p0, p1, mask;

	if (!w->valid || a < w->base || a + len > w->base + WIN_BYTES || a + len < a)
		return NULL;
	p0 = (a - w->base) / PAGE;
	p1 = (a + len - 1 - w->base) / PAGE;
	mask = ((p1 - p0 + 1 >= 32) ? 0xffffffffu : ((1u << (p1 - p0 + 1)) - 1)) << p0;
	return (w->ok & mask) == mask ? w->buf + (a - w->base) : NULL;
}

/* The bytes [a, a + len) of the target (len < WIN_BYTES), valid until the next fetch, or
 * NULL when they cannot be read. Buckets are laid out by persistentalloc upwards in chunks,
 * and the list goes from the newest to older ones: the window read ends at the bucket and
 * reaches down, where the next buckets usually are. It is one read; when a page of it is
 * not mapped (the start of a chunk), the pages one by one. */
static const uint8_t *fetch(struct gomem *g, uint64_t a, size_t len)
{
	struct mem_iov iov[WIN_PAGES];
	struct win *w = NULL;
	const uint8_t *p;
	uint64_t top;
	size_t i, got = 0;

	if (!len || len >= WIN_BYTES || a + len < a)
		return NULL;
	for (i = 0; i < NWIN; i++) {
		if ((p = win_hit(&g->win[i], a, len))) {
			g->win[i].used = ++g->tick;
			return p;
		}
	}
	for (i = 0; i < NWIN; i++)
		if (!w || !g->win[i].valid || g->win[i].used < w->used)
			if (!w || w->valid)
				w = &g->win[i];
	if (!w->buf)
		w->buf = xmalloc(WIN_BYTES);
	top = ((a + len - 1) / PAGE + 1) * PAGE;
	w->base = top > WIN_BYTES ? top - WIN_BYTES : 0;
	w->valid = 1;
	w->used = ++g->tick;
	if (mem_read(g->t.mem, w->base, w->buf, WIN_BYTES) == 0) {
		w->ok = (uint32_t)((1ULL << WIN_PAGES) - 1);
		count_read(g, WIN_BYTES);
	} else {
		for (i = 0; i < WIN_PAGES; i++)
			iov[i] = (struct mem_iov){ w->base + i * PAGE, w->buf + i * PAGE, PAGE, 0 };
		mem_readv(g->t.mem, iov, WIN_PAGES);
		w->ok = 0;
		for (i = 0; i < WIN_PAGES; i++)
			if (iov[i].rc == 0) {
				w->ok |= 1u << i;
				got += PAGE;
			}
		count_read(g, got);
	}
	if ((p = win_hit(w, a, len)))
		return p;
	/* Pages around it are not mapped (or not readable): the bucket alone. */
	xgrow((void **)&g->scratch, &g->scratch_cap, len, 1);
	count_read(g, len);
	return mem_read(g->t.mem, a, g->scratch, len) == 0 ? g->scratch : NULL;
}

static void win_reset(struct gomem *g)
{
	size_t i;

	for (i = 0; i < NWIN; i++)
		g->win[i].valid = 0;
}

/* ---- the reader ---- */

struct gomem *gomem_new_from(const struct gomem_target *t)
{
	struct gomem *g;

	if (!t->mem || !t->v.mbuckets || t->go_minor < 19 || t->go_minor > 27) {
		errno = EINVAL;
		return NULL;
	}
	g = xcalloc(1, sizeof(*g));
	g->t = *t;
	g->words = t->go_minor >= 27 ? 2 : 4;
	g->max_stk = t->go_minor <= 22 ? 32 : GOMEM_MAX_STACK;
	return g;
}

void gomem_free(struct gomem *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < NWIN; i++)
		free(g->win[i].buf);
	for (i = 0; i < GP_ARRAY_SIZE(g->kb); i++) {
		free(g->kb[i].b);
		free(g->kb[i].pcs);
	}
	free(g->scratch);
	free(g->rec1);
	free(g->rec2);
	free(g->bad);
	free(g->runbuf);
	free(g->runs);
	free(g->runof);
	free(g->iov);
	free(g->sums);
	if (g->own)
		mem_pid_free(g->own);
	free(g);
}

static uint64_t list_var(const struct gomem *g, int kind)
{
	return kind == GOMEM_HEAP    ? g->t.v.mbuckets
	       : kind == GOMEM_BLOCK ? g->t.v.bbuckets
	       : kind == GOMEM_MUTEX ? g->t.v.xbuckets
				     : 0;
}

int gomem_rate(struct gomem *g, int kind, int64_t *rate)
{
	uint64_t a = kind == GOMEM_HEAP    ? g->t.v.memprofilerate
		     : kind == GOMEM_BLOCK ? g->t.v.blockprofilerate
		     : kind == GOMEM_MUTEX ? g->t.v.mutexprofilerate
					   : 0,
		 v;
	int rc;

	*rate = 0;
	if (!a)
		return -ENOENT;
	rc = mem_read_u64(g->t.mem, a, &v);
	if (rc)
		return rc;
	*rate = (int64_t)v;
	return 0;
}

/* A bucket header fit for the list of kind: its type, depth and hash (the stack must be
 * there to check the hash: stk NULL checks the rest). */
static int header_ok(const struct gomem *g, int kind, const uint8_t *h, const uint8_t *stk)
{
	uint64_t typ = ld64(h + 16), size = ld64(h + 32), nstk = ld64(h + 40);

	if (typ != (uint64_t)kind || nstk > g->max_stk)
		return 0;
	if ((kind == GOMEM_HEAP) != (size != 0))
		return 0;
	return !stk || bucket_hash(stk, nstk, size) == ld64(h + 24);
}

/* The sums of one heap record: S = active + future[idx] (cycle C's, as the runtime's
 * reader flushes it), all = active + every future. go1.27 keeps counts only. */
struct hsum {
	uint64_t s[4], all[4];
	uint8_t ok_s, ok_all; /* the invariants hold for what s (all) is made of */
};

static void heap_sums(const struct gomem *g, const uint8_t *rec, uint64_t size, uint32_t idx,
		      struct hsum *o)
{
	uint32_t w = g->words, i, k;
	uint64_t c[4][4] = { { 0 } }; /* active, future 0..2 */
	int slot_ok[4];

	for (k = 0; k < 4; k++)
		for (i = 0; i < w; i++)
			c[k][i] = ld64(rec + 8 * (k * w + i));
	if (w == 2)
		for (k = 0; k < 4; k++) {
			c[k][2] = c[k][0] * size;
			c[k][3] = c[k][1] * size;
		}
	for (i = 0; i < 4; i++) {
		o->s[i] = c[0][i] + c[1 + idx][i];
		o->all[i] = c[0][i] + c[1][i] + c[2][i] + c[3][i];
	}
	/* Every record keeps bytes = count * size (mProf_Malloc and mProf_Free add the
	 * bucket's size: go1.19-go1.26, two stores a reader may see one of), and frees never
	 * pass allocs in a published sum (an object's free counts to the cycle of its
	 * allocation or a later one). */
	for (k = 0; k < 4; k++)
		slot_ok[k] = c[k][2] == c[k][0] * size && c[k][3] == c[k][1] * size;
	o->ok_s = slot_ok[0] && slot_ok[1 + idx] && o->s[1] <= o->s[0];
	o->ok_all = slot_ok[0] && slot_ok[1] && slot_ok[2] && slot_ok[3] && o->all[1] <= o->all[0];
}

static int lock_held(const struct gomem *g)
{
	uint64_t key;

	if (!g->t.v.active_lock || mem_read_u64(g->t.mem, g->t.v.active_lock, &key))
		return 0;
	return g->t.go_minor >= 24 ? (key & 1) != 0 : (uint32_t)key != 0;
}

/* One pass over the list: headers, stacks and records. Fills out->b (addr, size, stack)
 * and g->rec1 (rec_size bytes per bucket). A list that comes back on itself is found by
 * Brent's cycle detection (a bucket remembered at every power of two; no table) and cut
 * where its second round begins. */
static void walk(struct gomem *g, int kind, size_t max, uint64_t head, struct gomem_snap *out)
{
	struct kbuf *kb = &g->kb[kind];
	uint32_t rs = rec_size(g, kind);
	uint64_t a = head, tortoise = 0, power = 1, lam = 0;

	out->n = out->npcs = 0;
	while (a) {
		const uint8_t *p;
		uint64_t nstk;
		struct gomem_bucket *b;

		if (a == tortoise) {
			size_t i, mu = 0;

			out->st.loop = 1;
			/* buckets [mu, mu + lam) are the cycle, the rest repeats it */
			for (i = 0; i + lam < out->n; i++)
				if (out->b[i].addr == out->b[i + lam].addr) {
					mu = i;
					break;
				}
			if (mu + lam < out->n)
				out->n = mu + lam;
			break;
		}
		if (lam++ == power) {
			tortoise = a;
			power *= 2;
			lam = 1;
		}
		if (out->n >= max) {
			out->st.truncated = 1;
			break;
		}
		out->st.listed++;
		p = fetch(g, a, HDR);
		if (!p || !header_ok(g, kind, p, NULL)) {
			out->st.bad++;
			break;
		}
		nstk = ld64(p + 40);
		p = fetch(g, a, HDR + 8 * nstk + rs);
		if (!p || !header_ok(g, kind, p, p + HDR)) {
			out->st.bad++;
			break;
		}
		xgrow((void **)&kb->b, &kb->bcap, out->n + 1, sizeof(*kb->b));
		xgrow((void **)&kb->pcs, &kb->pcap, out->npcs + nstk + 1, sizeof(*kb->pcs));
		xgrow((void **)&g->rec1, &g->rec1cap, (out->n + 1) * rs, 1);
		out->b = kb->b;
		out->pcs = kb->pcs;
		b = &out->b[out->n];
		memset(b, 0, sizeof(*b));
		b->addr = a;
		b->size = ld64(p + 32);
		b->stk0 = (uint32_t)out->npcs;
		b->nstk = (uint32_t)nstk;
		memcpy(out->pcs + out->npcs, p + HDR, 8 * nstk);
		memcpy(g->rec1 + out->n * rs, p + HDR + 8 * nstk, rs);
		out->npcs += nstk;
		out->n++;
		a = ld64(p + 8);
	}
}

/* The second read of every record into g->rec2 (g->bad[i] set for one not read). The
 * records are gathered into runs of nearby memory (buckets lie close together, mostly in
 * list order), each run one piece of one vectored read: a few system calls and large
 * copies, where a piece per record costs the kernel a page lookup each. */
static void reread(struct gomem *g, int kind, const struct gomem_snap *s)
{
	uint32_t rs = rec_size(g, kind);
	size_t i, nruns = 0, total = 0;
	struct run *r = NULL;

	xgrow((void **)&g->runof, &g->runofcap, s->n + 1, sizeof(*g->runof));
	for (i = 0; i < s->n; i++) {
		uint64_t a = s->b[i].addr + HDR + 8 * (uint64_t)s->b[i].nstk;
		uint64_t lo = r ? GP_MIN(r->addr, a) : a;
		uint64_t hi = r ? GP_MAX(r->addr + r->len, a + rs) : a + rs;

		if (!r || hi - lo > RUN_MAX || a + rs + RUN_GAP < r->addr ||
		    a > r->addr + r->len + RUN_GAP) {
			xgrow((void **)&g->runs, &g->runscap, nruns + 1, sizeof(*g->runs));
			r = &g->runs[nruns++];
			lo = a;
			hi = a + rs;
		}
		r->addr = lo;
		r->len = (size_t)(hi - lo);
		g->runof[i] = (uint32_t)(nruns - 1);
	}
	for (i = 0; i < nruns; i++) {
		g->runs[i].off = total;
		total += g->runs[i].len;
	}
	xgrow((void **)&g->runbuf, &g->runbufcap, total + 1, 1);
	xgrow((void **)&g->iov, &g->iovcap, nruns + 1, sizeof(*g->iov));
	for (i = 0; i < nruns; i++)
		g->iov[i] = (struct mem_iov){ g->runs[i].addr, g->runbuf + g->runs[i].off,
					      g->runs[i].len, 0 };
	mem_readv(g->t.mem, g->iov, nruns);
	for (i = 0; i < nruns; i++)
		g->runs[i].rc = g->iov[i].rc;
	count_read(g, total);
	if (g->st && nruns > 1) /* mem_readv: a system call per 1024 pieces */
		g->st->readvs += (nruns - 1) / 1024;
	xgrow((void **)&g->rec2, &g->rec2cap, s->n * (size_t)rs + 1, 1);
	for (i = 0; i < s->n; i++) {
		const struct run *rr = &g->runs[g->runof[i]];
		uint64_t a = s->b[i].addr + HDR + 8 * (uint64_t)s->b[i].nstk;

		g->bad[i] = rr->rc != 0;
		if (!rr->rc)
			memcpy(g->rec2 + i * rs, g->runbuf + rr->off + (a - rr->addr), rs);
	}
}

static int read_cycle(struct gomem *g, uint32_t *c)
{
	int rc = mem_read_u32(g->t.mem, g->t.v.mprofcycle, c);

	if (!rc && (*c >> 1) >= CYCLE_WRAP)
		rc = -EINVAL;
	return rc;
}

int gomem_cycle(struct gomem *g, uint32_t *cycle)
{
	uint32_t c = 0;
	int rc = read_cycle(g, &c);

	*cycle = c >> 1;
	return rc;
}

/* Keeps the buckets not marked in drop, in order (their stacks stay where they are). */
static void compact(struct gomem_snap *s, const uint8_t *drop)
{
	size_t i, k = 0;

	for (i = 0; i < s->n; i++)
		if (!drop[i])
			s->b[k++] = s->b[i];
	s->n = k;
}

/* Buckets linked in front of head since it was read (a walk from the new head down to
 * it, bounded): a snapshot taken without them misses their counts. */
static uint64_t newer(struct gomem *g, int kind, uint64_t from, uint64_t head)
{
	uint64_t n = 0, a = from;

	while (a && a != head && n < 4096) {
		const uint8_t *p = fetch(g, a, HDR);

		if (!p || !header_ok(g, kind, p, NULL))
			break;
		n++;
		a = ld64(p + 8);
	}
	return n;
}

int gomem_read(struct gomem *g, int kind, size_t max, struct gomem_snap *out)
{
	uint64_t var = list_var(g, kind), head = 0, head2 = 0, t0 = util_now_ns();
	uint32_t rs = rec_size(g, kind), c0 = 0, c1 = 0;
	size_t i, changed;
	int rc = 0, tries;

	memset(out, 0, sizeof(*out));
	out->kind = kind;
	if (!var)
		return -ENOENT;
	if (!max || max > GOMEM_MAX_BUCKETS)
		max = GOMEM_MAX_BUCKETS;
	g->st = &out->st;
	for (tries = 1; tries <= TRIES; tries++) {
		int last = tries == TRIES, held, moved, all = 1;
		uint64_t late = 0;

		memset(&out->st, 0, sizeof(out->st));
		out->st.tries = (uint32_t)tries;
		win_reset(g);
		if (kind == GOMEM_HEAP && (rc = read_cycle(g, &c0)))
			break;
		rc = mem_read_u64(g->t.mem, var, &head);
		count_read(g, 8);
		if (rc)
			break;
		walk(g, kind, max, head, out);
		/* The moment the snapshot stands for: between the two reads. A flush of the
		 * heap profile holds profMemActiveLock over its whole walk: one in progress
		 * now could have reached some buckets of the first read and not others. */
		held = kind == GOMEM_HEAP && lock_held(g);
		if (mem_read_u64(g->t.mem, var, &head2))
			head2 = head;
		xgrow((void **)&g->bad, &g->badcap, out->n + 1, 1);
		reread(g, kind, out);
		if (kind == GOMEM_HEAP && (rc = read_cycle(g, &c1)))
			break;
		/* A new cycle (mark termination, then mProf_Flush) changes what is published;
		 * a bucket made meanwhile has counts of its own (block and mutex: new heap
		 * buckets only have pending counts). */
		moved = held || (kind == GOMEM_HEAP && c0 >> 1 != c1 >> 1);
		if (kind != GOMEM_HEAP && head2 != head) {
			if (!last)
				continue;
			late = newer(g, kind, head2, head);
		}
		if (moved) {
			if (!last)
				continue;
			rc = -EAGAIN;
			break;
		}
		if (kind == GOMEM_HEAP) {
			uint32_t idx = (c0 >> 1) % 3;

			xgrow((void **)&g->sums, &g->sumscap, out->n + 1, sizeof(*g->sums));
			for (i = 0; i < out->n; i++) {
				struct hsum h2, *h1 = &g->sums[i];

				heap_sums(g, g->rec1 + i * rs, out->b[i].size, idx, h1);
				heap_sums(g, g->rec2 + i * rs, out->b[i].size, idx, &h2);
				g->bad[i] = g->bad[i] || !h1->ok_s || !h2.ok_s ||
					    memcmp(h1->s, h2.s, sizeof(h2.s)) != 0;
				if (h1->s[0] || h1->s[1])
					all = 0;
			}
			/* Before any published cycle every pending count is reported, and
			 * those move with every malloc (Go's own reader sees them move
			 * too): a bucket is kept when its own record holds together. */
			if (all && out->n)
				for (i = 0; i < out->n; i++)
					g->bad[i] = !g->sums[i].ok_all;
		} else {
			for (i = 0; i < out->n; i++)
				g->bad[i] = g->bad[i] ||
					    memcmp(g->rec1 + i * rs, g->rec2 + i * rs, rs) != 0;
		}
		for (i = 0, changed = 0; i < out->n; i++)
			changed += g->bad[i] != 0;
		if (changed && !last)
			continue;
		/* This try stands: fill the counts, drop what changed. */
		out->st.cycle = c0 >> 1;
		out->st.all_cycles = kind == GOMEM_HEAP && all && out->n;
		for (i = 0; i < out->n; i++) {
			struct gomem_bucket *b = &out->b[i];

			if (kind == GOMEM_HEAP) {
				const uint64_t *v =
					out->st.all_cycles ? g->sums[i].all : g->sums[i].s;

				b->allocs = (int64_t)v[0];
				b->frees = (int64_t)v[1];
				b->alloc_bytes = (int64_t)v[2];
				b->free_bytes = (int64_t)v[3];
			} else {
				memcpy(&b->count, g->rec1 + i * rs, 8);
				b->cycles = (int64_t)ld64(g->rec1 + i * rs + 8);
			}
		}
		out->st.torn = changed + late;
		compact(out, g->bad);
		break;
	}
	g->st = NULL;
	if (rc) {
		memset(out, 0, sizeof(*out));
		out->kind = kind;
		return rc;
	}
	out->st.kept = out->n;
	out->st.dropped = out->st.torn + out->st.bad;
	gomem_rate(g, kind, &out->rate);
	if (kind != GOMEM_HEAP && gomem_ticks(g, 0, &out->ticks_per_sec))
		out->ticks_per_sec = 0;
	out->time_ns = (int64_t)util_wall_ns();
	out->st.ns = util_now_ns() - t0;
	return 0;
}

/* ---- CPU ticks, the write, and finding a live target ---- */

static uint64_t rdtsc(void)
{
#ifdef __x86_64__
	_mm_lfence();
	return __rdtsc();
#else
	return 0;
#endif
}

static int64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gomem_ticks(struct gomem *g, int measure, int64_t *out)
{
	uint64_t val, st_ticks, st_time;
	int64_t t0, t1;
	uint64_t c0, c1;

	*out = 0;
	if (g->ticks) {
		*out = g->ticks;
		return 0;
	}
	if (!g->t.v.ticks || !g->t.v.ticks_val)
		return -ENOENT;
	if (mem_read_u64(g->t.mem, g->t.v.ticks + g->t.v.ticks_val, &val))
		return -EFAULT;
	if ((int64_t)val < 0 || val > (1ULL << 40))
		return -EINVAL; /* no CPU ticks a trillion times a second */
	if (val) {
		g->ticks = *out = (int64_t)val;
		return 0;
	}
#ifndef __x86_64__
	return -ENOTSUP;
#else
	if (g->t.go_minor >= 22 && g->t.v.ticks_val == 24 &&
	    !mem_read_u64(g->t.mem, g->t.v.ticks + 8, &st_ticks) &&
	    !mem_read_u64(g->t.mem, g->t.v.ticks + 16, &st_time) && st_ticks && st_time) {
		/* ticksPerSecond's own computation, had it been called now (go1.22+
		 * runtime/runtime.go): the TSC is the machine's, shared by both processes. */
		c1 = rdtsc();
		t1 = mono_ns();
		/* startTime is a nanotime() of the target's start: positive, not after now */
		if (c1 > st_ticks && (int64_t)st_time > 0 && (int64_t)st_time <= t1 &&
		    t1 - (int64_t)st_time > 100000000) {
			double r = (double)(c1 - st_ticks) * 1e9 / (double)(t1 - (int64_t)st_time);

			if (!(r >= 1 && r <= (double)(1ULL << 40)))
				return -EINVAL;
			*out = (int64_t)r;
			return 0;
		}
	}
	if (!measure)
		return -EAGAIN;
	/* tickspersecond (go1.19-go1.21): cputicks across a 100 ms sleep. */
	t0 = mono_ns();
	c0 = rdtsc();
	usleep(100 * 1000);
	t1 = mono_ns();
	c1 = rdtsc();
	if (t1 == t0)
		t1++;
	*out = (int64_t)((c1 - c0) * 1000 * 1000 * 1000 / (uint64_t)(t1 - t0));
	return *out > 0 ? 0 : -EINVAL;
#endif
}

int gomem_enable(struct gomem *g, int64_t *old)
{
	uint64_t rate = GOMEM_DEFAULT_RATE;
	int rc = gomem_rate(g, GOMEM_HEAP, old);

	if (rc)
		return rc;
	if (*old != 0)
		return -EEXIST;
	return mem_write(g->t.mem, g->t.v.memprofilerate, &rate, sizeof(rate));
}

/* GODEBUG=profstackdepth=N in the target's environment (go1.23+ runtime/runtime1.go
 * dbgvars: default 128, at most maxProfStackDepth): the depth runtime/pprof expands block
 * and mutex stacks to (makeProfStack). 0 when not set. */
static int env_profstackdepth(pid_t pid)
{
	char path[64], *buf = NULL;
	size_t cap = 0, len = 0, i;
	int depth = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	for (;;) {
		size_t r;

		xgrow((void **)&buf, &cap, len + 4096 + 1, 1);
		r = fread(buf + len, 1, 4096, f);
		len += r;
		if (r < 4096 || len > (1u << 20))
			break;
	}
	fclose(f);
	buf[len] = 0;
	for (i = 0; i < len; i += strlen(buf + i) + 1) {
		const char *e = buf + i, *p;

		if (strncmp(e, "GODEBUG=", 8) != 0)
			continue;
		for (p = e + 8; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			if (!strncmp(p, "profstackdepth=", 15))
				depth = atoi(p + 15);
	}
	free(buf);
	return depth < 0 ? 0 : GP_MIN(depth, 1024);
}

/* A variable of sf: its symbol when present, else the code's candidate. */
static uint64_t sym_or(const struct symfile *sf, const char *name, uint64_t found)
{
	uint64_t v = symfile_symbol_value(sf, name);

	return v ? v : found;
}

/* A list head that is nil or points at a bucket of kind (its hash checked). */
static int head_ok(struct gomem *g, int kind, uint64_t var)
{
	uint64_t head, nstk;
	const uint8_t *p;

	if (mem_read_u64(g->t.mem, var, &head))
		return 0;
	if (!head)
		return 1;
	p = fetch(g, head, HDR);
	if (!p || !header_ok(g, kind, p, NULL))
		return 0;
	nstk = ld64(p + 40);
	p = fetch(g, head, HDR + 8 * nstk + rec_size(g, kind));
	return p && header_ok(g, kind, p, p + HDR);
}

/* Checks every candidate in the target and forgets those that are not what they should be. */
static int check_vars(struct gomem *g, char *why, size_t whylen)
{
	struct gomem_vars *v = &g->t.v;
	uint64_t x;
	uint32_t c;
	int64_t r;
	int rc = read_cycle(g, &c);

	if (rc == -ESRCH || rc == -EPERM) {
		snprintf(why, whylen, "%s",
			 rc == -ESRCH ? "the process is gone" : "not permitted to read its memory");
		return rc;
	}
	if (rc) {
		snprintf(why, whylen, "runtime.mProfCycle is not where expected");
		return -ENOENT;
	}
	if (!head_ok(g, GOMEM_HEAP, v->mbuckets)) {
		snprintf(why, whylen, "runtime.mbuckets does not hold the heap profile's buckets");
		return -ENOENT;
	}
	if (v->bbuckets && !head_ok(g, GOMEM_BLOCK, v->bbuckets))
		v->bbuckets = 0;
	if (v->xbuckets && !head_ok(g, GOMEM_MUTEX, v->xbuckets))
		v->xbuckets = 0;
	if (v->memprofilerate && (gomem_rate(g, GOMEM_HEAP, &r) || r < 0 || r > RATE_MAX))
		v->memprofilerate = 0;
	if (v->blockprofilerate && (gomem_rate(g, GOMEM_BLOCK, &r) || r < 0))
		v->blockprofilerate = 0;
	if (v->mutexprofilerate && (gomem_rate(g, GOMEM_MUTEX, &r) || r < 0))
		v->mutexprofilerate = 0;
	if (v->ticks && mem_read_u64(g->t.mem, v->ticks + v->ticks_val, &x))
		v->ticks = 0;
	if (v->active_lock && mem_read_u64(g->t.mem, v->active_lock, &x))
		v->active_lock = 0;
	win_reset(g);
	return 0;
}

struct gomem *gomem_new(pid_t pid, struct symfile *sf, char *why, size_t whylen)
{
	const char *ver = symfile_go_version(sf);
	struct gomem_target t = { 0 };
	struct gomem_vars *v = &t.v;
	struct gomem *g;
	uint64_t bias = 0;
	int rc;

	if (!ver) {
		snprintf(why, whylen, "not a Go program (no Go build information)");
		errno = ENOTSUP;
		return NULL;
	}
	t.go_minor = util_go_minor(ver);
	if (t.go_minor < 19 || t.go_minor > 27) {
		snprintf(why, whylen, "%s: memory profiles are read from go1.19 to go1.27", ver);
		errno = ENOTSUP;
		return NULL;
	}
	rc = gort_exe_bias(pid, sf, &bias);
	if (rc) {
		snprintf(why, whylen, "cannot find the executable's mapping in process %d",
			 (int)pid);
		errno = rc == -ENOENT ? ESRCH : -rc;
		return NULL;
	}
	/* The code first (every build), the symbol table over it when there is one. */
	if (symfile_gopcln(sf))
		gomem_vars_find(symfile_elf(sf), symfile_gopcln(sf), v);
	v->mbuckets = sym_or(sf, "runtime.mbuckets", v->mbuckets);
	v->bbuckets = sym_or(sf, "runtime.bbuckets", v->bbuckets);
	v->xbuckets = sym_or(sf, "runtime.xbuckets", v->xbuckets);
	v->mprofcycle = sym_or(sf, "runtime.mProfCycle", v->mprofcycle);
	v->active_lock = sym_or(sf, "runtime.profMemActiveLock", v->active_lock);
	v->memprofilerate = sym_or(sf, "runtime.MemProfileRate", v->memprofilerate);
	v->blockprofilerate = sym_or(sf, "runtime.blockprofilerate", v->blockprofilerate);
	v->mutexprofilerate = sym_or(sf, "runtime.mutexprofilerate", v->mutexprofilerate);
	if (symfile_symbol_value(sf, "runtime.ticks")) {
		v->ticks = symfile_symbol_value(sf, "runtime.ticks");
		if (!v->ticks_val) /* see the runtime.ticks fact above */
			v->ticks_val = t.go_minor == 19   ? 16
				       : t.go_minor == 21 ? 8
				       : t.go_minor >= 22 ? 24
							  : 0;
	}
	if (!v->mbuckets || !v->mprofcycle) {
		snprintf(why, whylen, "cannot find the runtime's heap profile (runtime.mbuckets)");
		errno = symfile_machine(sf) != EM_X86_64 ? ENOTSUP : ENOENT;
		return NULL;
	}
	{
		uint64_t *all[] = { &v->mbuckets,         &v->bbuckets,         &v->xbuckets,
				    &v->mprofcycle,       &v->active_lock,      &v->memprofilerate,
				    &v->blockprofilerate, &v->mutexprofilerate, &v->ticks };
		size_t i;

		for (i = 0; i < GP_ARRAY_SIZE(all); i++)
			if (*all[i])
				*all[i] += bias;
	}
	t.mem = mem_pid_new(pid);
	t.profstackdepth = env_profstackdepth(pid);
	g = gomem_new_from(&t);
	g->own = t.mem;
	rc = check_vars(g, why, whylen);
	if (rc) {
		gomem_free(g);
		errno = -rc;
		return NULL;
	}
	return g;
}
