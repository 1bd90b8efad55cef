/* gobpf.bpf.c: a BPF program the kernel runs at every sample of a Go target (attached
 * to the perf events with PERF_EVENT_IOC_SET_BPF): it copies the fields of the sampled
 * g, its m and m.curg that the Go runtime reader (src/go/goruntime*.c) needs to name
 * the goroutine and find its labels, at the moment of the sample, into a ring the
 * sampling thread reads later.
 * amd64 only (the g register is R14: Go's ABIInternal, cmd/compile/abi-internal.md).
 * Built with clang -target bpf; loaded by src/go/gobpf.c.
 *
 * Shaped for the verifier, whose work is the cost of attaching: the kernel checks every
 * path through a program when it is loaded. The parts called from several places are
 * global functions (verified once each, for any arguments, instead of once per path that
 * calls them), their arguments scalars (they find the record being built in a per-CPU
 * map), and the loops run through bpf_loop, whose callback is verified as one loop body
 * instead of once per iteration. A loop's index into the record is bpf_loop's own index,
 * not a counter kept in its context: a counter the verifier must track exactly makes
 * every iteration a new state to explore. Needs Linux 5.17 (bpf_loop); on older kernels
 * the load fails and goroutines are read after the sample instead (src/go/goread.c). */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#include "gotop/gobpf-abi.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_probe_read_user and the task helpers need it */

/* Sized by the loader (bpf_map__set_max_entries) before it loads the program. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} gobpf_ring SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, GOBPF_ST_NFIELDS);
	__type(key, __u32);
	__type(value, __u64);
} gobpf_stats SEC(".maps");

/* The target's read-only ranges, from the reader (gobpf-abi.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gobpf_statics);
} gobpf_statics SEC(".maps");

/* A thread's m, g0 and gsignal, fixed for the thread's life (runtime/proc.go
 * mcommoninit, malg): known, they spare the read of the m for a sample on a goroutine
 * (not on the m's system stacks). */
struct mcache {
	__u64 m, g0, gsignal;
};
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct mcache);
} gobpf_mcache SEC(".maps");

/* One g or m span at a time (the BPF stack is 512 bytes). */
struct span {
	__u8 b[GOBPF_SPAN_MAX];
};
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct span);
} gobpf_scratch SEC(".maps");

/* The record being built, in per-CPU memory (a perf event's program does not nest on a
 * CPU): the global functions below find it here, so that their arguments are scalars and
 * the kernel verifies each of them once, on its own, instead of once per path that calls
 * it; the whole record is then copied into the ring. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gobpf_rec);
} gobpf_recbuf SEC(".maps");

/* Filled in by the loader; read-only once loaded, so the verifier knows every offset. */
const volatile struct gobpf_cfg gobpf_cfg = {};

static __always_inline void count(__u32 k)
{
	__u64 *v = bpf_map_lookup_elem(&gobpf_stats, &k);

	if (v)
		*v += 1;
}

/* A global function (external linkage, never inlined) is verified once with arguments of
 * any value, not once per call path: what keeps the program cheap to load. */
#define GLOBAL __attribute__((noinline))

static __always_inline struct gobpf_rec *cur_rec(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gobpf_recbuf, &zero);
}

static __always_inline struct span *cur_span(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&gobpf_scratch, &zero);
}

static __always_inline __u64 ld64(const struct span *s, __u32 off)
{
	__u64 v;

	__builtin_memcpy(&v, s->b + off, 8);
	return v;
}

/* User addresses of amd64 (the lower half); anything else is not a g. */
static __always_inline int user_ptr(__u64 p)
{
	return p >= 4096 && p < (1ULL << 47) && !(p & 7);
}

/* String bytes may be anywhere in the lower half. */
static __always_inline int user_str(__u64 p)
{
	return p >= 4096 && p < (1ULL << 47);
}

/* Copies the fields of the g at addr into the record's g (curg 0) or curg (1). 0, or -1
 * when it is not readable. */
GLOBAL int read_g(__u64 addr, __u32 curg)
{
	struct gobpf_rec *r = cur_rec();
	struct span *s = cur_span();
	__u64 *f;
	__u32 st;

	if (!r || !s || !user_ptr(addr) || bpf_probe_read_user(s->b, gobpf_cfg.gsz, (const void *)addr))
		return -1;
	f = curg ? r->curg : r->g;
	f[GOBPF_G_STACK_LO] = ld64(s, gobpf_cfg.goff[GOBPF_G_STACK_LO]);
	f[GOBPF_G_STACK_HI] = ld64(s, gobpf_cfg.goff[GOBPF_G_STACK_HI]);
	f[GOBPF_G_M] = ld64(s, gobpf_cfg.goff[GOBPF_G_M]);
	f[GOBPF_G_GOID] = ld64(s, gobpf_cfg.goff[GOBPF_G_GOID]);
	f[GOBPF_G_LABELS] = ld64(s, gobpf_cfg.goff[GOBPF_G_LABELS]);
	__builtin_memcpy(&st, s->b + gobpf_cfg.goff[GOBPF_G_STATUS], 4);
	f[GOBPF_G_STATUS] = st;
	f[GOBPF_G_SCHED_PC] = ld64(s, gobpf_cfg.goff[GOBPF_G_SCHED_PC]);
	f[GOBPF_G_SCHED_SP] = ld64(s, gobpf_cfg.goff[GOBPF_G_SCHED_SP]);
	f[GOBPF_G_SCHED_BP] = ld64(s, gobpf_cfg.goff[GOBPF_G_SCHED_BP]);
	f[GOBPF_G_STARTPC] = ld64(s, gobpf_cfg.goff[GOBPF_G_STARTPC]);
	return 0;
}

static __always_inline int read_m(struct gobpf_rec *r, struct span *s, __u64 addr)
{
	if (bpf_probe_read_user(s->b, gobpf_cfg.msz, (const void *)addr))
		return -1;
	r->m[GOBPF_M_G0] = ld64(s, gobpf_cfg.moff[GOBPF_M_G0]);
	r->m[GOBPF_M_PROCID] = ld64(s, gobpf_cfg.moff[GOBPF_M_PROCID]);
	r->m[GOBPF_M_GSIGNAL] = ld64(s, gobpf_cfg.moff[GOBPF_M_GSIGNAL]);
	r->m[GOBPF_M_CURG] = ld64(s, gobpf_cfg.moff[GOBPF_M_CURG]);
	return 0;
}

static __always_inline void put_piece(struct gobpf_rec *r, __u32 k, __u64 addr, __u32 len, __u32 off)
{
	if (k >= GOBPF_LBL_PIECES)
		return;
	r->piece[k].addr = addr;
	r->piece[k].len = len;
	r->piece[k].off = off;
	r->npieces = k + 1;
}

static __always_inline int is_const(const struct gobpf_statics *st, __u64 p, __u64 len)
{
	int k;

#pragma unroll
	for (k = 0; k < GOBPF_STATIC_MAX; k++)
		if ((__u32)k < st->n && p >= st->lo[k] && p + len <= st->hi[k])
			return 1;
	return 0;
}

/* What str_step needs between iterations (bpf_loop's context, on the caller's stack). */
struct str_ctx {
	__u32 npairs, map, k, j;
};

/* String i of the set (key 2p, value 2p+1 of pair p): copied into the next string slot
 * and piece when it is not a constant. 0 goes on, 1 stops (bpf_loop). */
static long str_step(__u64 i, void *arg)
{
	struct str_ctx *c = arg;
	struct gobpf_rec *r = cur_rec();
	const struct gobpf_statics *st;
	__u32 zero = 0, pair = (__u32)i / 2, off, j = c->j;
	__u64 p, len;

	st = bpf_map_lookup_elem(&gobpf_statics, &zero);
	if (!r || !st || pair >= c->npairs || pair >= GOBPF_LBL_PAIRS || j >= GOBPF_LBL_STRS)
		return 1;
	if (c->map) {
		/* tophash below minTopHash (5): an empty cell (runtime/map.go) */
		if (r->lbl[8 + GOBPF_LBL_HMAP_MAX + pair] < 5)
			return 0;
		off = 8 + GOBPF_LBL_HMAP_MAX + 16 * pair +
		      ((i & 1) ? gobpf_cfg.bucket_values : gobpf_cfg.bucket_keys);
	} else {
		off = 24 + 32 * pair + 16 * (i & 1);
	}
	if (off > GOBPF_LBL_STR_OFF - 16)
		return 0;
	__builtin_memcpy(&p, r->lbl + off, 8);
	__builtin_memcpy(&len, r->lbl + off + 8, 8);
	if (len == 0 || len > GOBPF_LBL_STR_MAX || !user_str(p) || is_const(st, p, len))
		return 0;
	if (bpf_probe_read_user(r->lbl + GOBPF_LBL_STR_OFF + j * GOBPF_LBL_STR_MAX, (__u32)len,
				(const void *)p))
		return 0;
	put_piece(r, c->k + j, p, (__u32)len, GOBPF_LBL_STR_OFF + j * GOBPF_LBL_STR_MAX);
	c->j = j + 1;
	return 0;
}

/* Copies the strings of the set's npairs pairs (a map's one bucket, or a slice's array,
 * copied into r->lbl already as piece k - 1) that are not constants, into string slots
 * and pieces from k on (gobpf-abi.h). One read each. */
static __always_inline void read_strings(__u32 npairs, __u32 map, __u32 k)
{
	struct str_ctx c = { npairs, map, k, 0 };
	__u32 zero = 0;
	const struct gobpf_statics *st = bpf_map_lookup_elem(&gobpf_statics, &zero);

	if (st && st->n && npairs <= GOBPF_LBL_PAIRS)
		bpf_loop(2 * npairs, str_step, &c, 0);
}

/* Copies the label set at g.labels value L (gobpf-abi.h, "Label sets"): two reads for a
 * slice set, three for a map of one bucket, and one per string made at run time. */
GLOBAL int read_labels(__u64 L)
{
	struct gobpf_rec *r = cur_rec();
	__u64 h, data, len, cap, bk, old;
	__u32 sz;

	if (!r || gobpf_cfg.lkind == GOBPF_LBL_NONE || !user_ptr(L))
		return 0;
	if (gobpf_cfg.lkind == GOBPF_LBL_SLICE) {
		if (bpf_probe_read_user(r->lbl, 24, (const void *)L))
			return 0;
		put_piece(r, 0, L, 24, 0);
		r->flags |= GOBPF_REC_LBL;
		__builtin_memcpy(&data, r->lbl, 8);
		__builtin_memcpy(&len, r->lbl + 8, 8);
		__builtin_memcpy(&cap, r->lbl + 16, 8);
		if (len == 0 || len > cap || len > GOBPF_LBL_PAIRS || !user_ptr(data))
			return 0;
		sz = (__u32)len * 32;
		if (sz > GOBPF_LBL_PAIRS * 32 || bpf_probe_read_user(r->lbl + 24, sz, (const void *)data))
			return 0;
		put_piece(r, 1, data, sz, 24);
		read_strings((__u32)len, 0, 2);
		return 0;
	}
	if (bpf_probe_read_user(r->lbl, 8, (const void *)L))
		return 0;
	put_piece(r, 0, L, 8, 0);
	r->flags |= GOBPF_REC_LBL;
	__builtin_memcpy(&h, r->lbl, 8);
	sz = gobpf_cfg.hsz;
	if (!user_ptr(h) || sz == 0 || sz > GOBPF_LBL_HMAP_MAX ||
	    bpf_probe_read_user(r->lbl + 8, sz, (const void *)h))
		return 0;
	put_piece(r, 1, h, sz, 8);
	if (gobpf_cfg.hmap_b >= GOBPF_LBL_HMAP_MAX || gobpf_cfg.hmap_buckets + 8 > GOBPF_LBL_HMAP_MAX ||
	    gobpf_cfg.hmap_oldbuckets + 8 > GOBPF_LBL_HMAP_MAX)
		return 0;
	__builtin_memcpy(&bk, r->lbl + 8 + gobpf_cfg.hmap_buckets, 8);
	__builtin_memcpy(&old, r->lbl + 8 + gobpf_cfg.hmap_oldbuckets, 8);
	/* One bucket, not growing (runtime/map.go: B is log2 of the bucket count). */
	sz = gobpf_cfg.bucket_size;
	if (r->lbl[8 + gobpf_cfg.hmap_b] != 0 || old != 0 || !user_ptr(bk) || sz == 0 ||
	    sz > GOBPF_LBL_BUCKET_MAX || bpf_probe_read_user(r->lbl + 8 + GOBPF_LBL_HMAP_MAX, sz, (const void *)bk))
		return 0;
	put_piece(r, 2, bk, sz, 8 + GOBPF_LBL_HMAP_MAX);
	read_strings(8, 1, 3);
	return 0;
}

/* The goroutine's state saved at the stack switch the sample is beyond, or below the C code
 * of the cgo callback the sample is in (cb_state) (gobpf-abi.h, gobpf_cont): its
 * registers from g.sched (f: the g's fields), the words at sched.sp,
 * and its frame-pointer chain from sched.bp. Each frame ({saved BP, return address},
 * amd64) lies inside the goroutine's stack and above the one before, so the walk ends on
 * the stack's first frame (BP 0 at its start, runtime/proc.go newproc1) and cannot loop.
 * While newstack copies the stack (status _Gcopystack: 8, go1.19 to go1.27
 * runtime/runtime2.go), g.stack and g.sched already name the new stack but the frames
 * adjustframe has not reached yet still link into the old one, which holds the same frames
 * until copystack frees it (go1.19 to go1.27 runtime/stack.go copystack: gp.stack = new,
 * adjustframe from the innermost frame out, stackfree(old)): the walk follows that link
 * for the rest of the GOBPF_CONT_FRAMES, upward within the new stack's size (the old one
 * is at most half of it), 16 bytes a read (the window is short and rare).
 * The stack is read in chunks of CONT_CHUNK bytes from a frame on (never past the stack's
 * end): a read's fixed cost dominates whatever its size, and Go frames are small, so a
 * chunk holds several. The scratch span holds the chunk (the g and m are read by then). */
#define CONT_CHUNK 512

/* A cgo callback's goroutine (gobpf-abi.h, GOBPF_CONT_CB): finds asmcgocall's SP on the
 * goroutine's stack from g0 (lo, hi: the goroutine's stack, gaddr its address) and copies
 * the pushed pc and the words at that SP into r->cont. Returns that SP, or 0 when the
 * sample is not in a callback of this goroutine. Four reads, each checked against the
 * stacks. */
static __always_inline __u64 cb_state(struct gobpf_rec *r, __u64 lo, __u64 hi, __u64 sp, __u64 gaddr,
				      __u64 g0)
{
	__u64 s0, s1, a, pair[2], w[5];

	if (!user_ptr(g0) || !user_ptr(gaddr) ||
	    bpf_probe_read_user(&s0, 8, (const void *)(g0 + gobpf_cfg.goff[GOBPF_G_SCHED_SP])) ||
	    !user_ptr(s0) || bpf_probe_read_user(&s1, 8, (const void *)s0) || !user_ptr(s1) ||
	    s1 <= s0 || s1 < gobpf_cfg.cb_frame)
		return 0;
	a = ((s1 - gobpf_cfg.cb_frame) & ~15ULL) + gobpf_cfg.cb_off;
	if (a < s0 || bpf_probe_read_user(pair, sizeof(pair), (const void *)a) ||
	    pair[1] != gaddr || pair[0] == 0 || pair[0] > hi - lo || (pair[0] & 7))
		return 0;
	a = hi - pair[0];
	if (a <= sp || a - 8 < lo || a + 8 * GOBPF_CONT_WORDS > hi ||
	    bpf_probe_read_user(w, sizeof(w), (const void *)(a - 8)))
		return 0;
	r->cont.pc = w[0];
	__builtin_memcpy(r->cont.stack, &w[1], sizeof(r->cont.stack));
	return a;
}

/* The frame-pointer walks' state between iterations (bpf_loop's context). */
struct walk_ctx {
	__u64 bp, ssp, hi;     /* the next frame record; the walk's bounds */
	__u64 clo, clen;       /* the chunk of the stack in the scratch span */
	__u64 jump, lim;       /* the last link; on the old stack, the bound of a link */
	__u32 n;               /* return addresses copied */
};

/* One frame on the old stack while newstack copies it (see above), after the n found on
 * the new one. */
static long old_step(__u64 i, void *arg)
{
	struct walk_ctx *c = arg;
	struct gobpf_rec *r = cur_rec();
	__u64 pair[2], idx = c->n;

	if (!r || idx >= GOBPF_CONT_FRAMES || bpf_probe_read_user(pair, sizeof(pair), (const void *)c->bp))
		return 1;
	r->cont.ret[idx] = pair[1];
	r->cont.n = c->n = idx + 1;
	if (pair[0] <= c->bp || (pair[0] & 7) || pair[0] + 16 > c->lim)
		return 1;
	c->bp = pair[0];
	return 0;
}

/* One frame of the walk from sched.bp on the goroutine's stack, read in chunks (see
 * above). */
static long walk_step(__u64 i, void *arg)
{
	struct walk_ctx *c = arg;
	struct gobpf_rec *r = cur_rec();
	struct span *s = cur_span();
	__u64 bp = c->bp, off, next, ret, len, idx = i;

	if (!r || !s || idx >= GOBPF_CONT_FRAMES || bp < c->ssp || bp + 16 > c->hi || (bp & 7))
		return 1;
	if (bp < c->clo || bp + 16 > c->clo + c->clen) {
		len = c->hi - bp;
		if (len > CONT_CHUNK)
			len = CONT_CHUNK;
		if (len < 16 || bpf_probe_read_user(s->b, (__u32)len, (const void *)bp))
			return 1;
		c->clo = bp;
		c->clen = len;
	}
	off = bp - c->clo;
	if (off > CONT_CHUNK - 16)
		return 1;
	__builtin_memcpy(&next, s->b + off, 8);
	__builtin_memcpy(&ret, s->b + off + 8, 8);
	r->cont.ret[idx] = ret;
	c->n = idx + 1;
	c->jump = next;
	if (next <= bp)
		return 1;
	c->bp = next;
	return 0;
}

/* The suspended goroutine's state (see above), from the record's g (curg 0) or curg (1):
 * sp is the sampled SP, gaddr the goroutine's address, g0 the thread's g0 (0: unknown). */
GLOBAL int read_cont(__u32 curg, __u64 sp, __u64 gaddr, __u64 g0)
{
	struct gobpf_rec *r = cur_rec();
	struct span *s = cur_span();
	struct walk_ctx w = {};
	__u64 lo, hi, ssp, bp, status, goid;
	__u32 kind = GOBPF_CONT_SWITCH;
	const __u64 *f;

	if (!r || !s || !gobpf_cfg.cont)
		return 0;
	f = curg ? r->curg : r->g;
	lo = f[GOBPF_G_STACK_LO];
	hi = f[GOBPF_G_STACK_HI];
	ssp = f[GOBPF_G_SCHED_SP];
	bp = f[GOBPF_G_SCHED_BP];
	status = f[GOBPF_G_STATUS];
	goid = f[GOBPF_G_GOID];
	if (lo >= hi)
		return 0;
	if (sp >= lo && sp < hi) {
		/* On the goroutine's own stack: only a cgo callback is continued. */
		__u64 a = gobpf_cfg.cb_frame ? cb_state(r, lo, hi, sp, gaddr, g0) : 0;

		if (!a)
			return 0;
		kind = GOBPF_CONT_CB;
		if (ssp != a)
			bp = a + gobpf_cfg.cb_bp;
		ssp = a;
	} else {
		if (ssp < lo || ssp + 8 * GOBPF_CONT_WORDS > hi)
			return 0;
		r->cont.pc = f[GOBPF_G_SCHED_PC];
		if (bpf_probe_read_user(r->cont.stack, sizeof(r->cont.stack), (const void *)ssp))
			return 0;
	}
	r->cont.goid = goid;
	r->cont.sp = ssp;
	r->cont.bp = bp;
	r->cont.kind = kind;
	w.bp = bp;
	w.ssp = ssp;
	w.hi = hi;
	bpf_loop(GOBPF_CONT_FRAMES, walk_step, &w, 0);
	r->cont.n = w.n;
	r->flags |= GOBPF_REC_CONT;
	/* The old stack, when the walk left the new one while newstack copies it. */
	if (kind != GOBPF_CONT_SWITCH || (status & ~0x1000ULL) != 8 || !w.n || !user_ptr(w.jump) ||
	    (w.jump >= ssp && w.jump + 16 <= hi))
		return 0;
	w.lim = w.jump + (hi - lo);
	w.bp = w.jump;
	bpf_loop(GOBPF_CONT_FRAMES, old_step, &w, 0);
	return 0;
}

static __always_inline int sample(struct bpf_perf_event_data *ctx, int kregs)
{
	struct gobpf_rec *r;
	struct span *s;
	struct mcache *mc, nmc;
	__u32 tid;
	__u64 ip, sp, greg, g0;

	if ((ctx->regs.cs & 3) == 3) {
		ip = ctx->regs.rip;
		sp = ctx->regs.rsp;
		greg = ctx->regs.r14;
	} else if (kregs) {
		/* In the kernel: the user registers saved at entry (what perf's
		 * PERF_SAMPLE_REGS_USER reports too). */
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

		if (!u || bpf_probe_read_kernel(&ip, 8, &u->rip) || bpf_probe_read_kernel(&sp, 8, &u->rsp) ||
		    bpf_probe_read_kernel(&greg, 8, &u->r14))
			return 1;
	} else {
		return 1;
	}
	r = cur_rec();
	s = cur_span();
	if (!r || !s)
		return 1;
	r->time = bpf_ktime_get_ns();
	tid = (__u32)bpf_get_current_pid_tgid();
	r->tid = tid;
	r->flags = kregs && (ctx->regs.cs & 3) != 3 ? GOBPF_REC_KREGS : 0;
	r->ip = ip;
	r->sp = sp;
	r->greg = greg;
	r->maddr = 0;
	r->npieces = 0;
	r->pad = 0;
	r->cont.n = 0;
	r->cont.kind = GOBPF_CONT_SWITCH;
	if (read_g(greg, 0) == 0)
		r->flags |= GOBPF_REC_G;
	/* A user-memory read costs more than the rest of the program: the m is read only
	 * when the thread's m is not known, or the register is not a goroutine
	 * running on it on its own stack (off it, in C code of a cgo call, the reader needs
	 * m.curg as it was at the sample to believe the register). */
	mc = bpf_map_lookup_elem(&gobpf_mcache, &tid);
	if ((r->flags & GOBPF_REC_G) && mc && mc->m == r->g[GOBPF_G_M] && greg != mc->g0 &&
	    greg != mc->gsignal && sp >= r->g[GOBPF_G_STACK_LO] && sp < r->g[GOBPF_G_STACK_HI])
		goto labels;
	/* The register's g.m, or, when the register is no g of this thread (assembly
	 * using R14 as scratch, C code), the thread's m known from earlier samples. */
	if (mc && (!(r->flags & GOBPF_REC_G) || r->g[GOBPF_G_M] != mc->m))
		r->maddr = mc->m;
	else if (r->flags & GOBPF_REC_G)
		r->maddr = r->g[GOBPF_G_M];
	else
		goto out;
	if (!user_ptr(r->maddr) || read_m(r, s, r->maddr))
		goto labels;
	r->flags |= GOBPF_REC_M;
	if (r->m[GOBPF_M_PROCID] == tid) {
		nmc.m = r->maddr;
		nmc.g0 = r->m[GOBPF_M_G0];
		nmc.gsignal = r->m[GOBPF_M_GSIGNAL];
		bpf_map_update_elem(&gobpf_mcache, &tid, &nmc, BPF_ANY);
	} else if (mc && r->maddr == mc->m) {
		/* The thread ended and its id was reused: learn the new m from g.m. */
		bpf_map_delete_elem(&gobpf_mcache, &tid);
	}
	/* The register is not the m's goroutine (a system stack, or garbage): the reader
	 * then takes m.curg, as it was at the sample (runtime/proc.go). */
	if (greg != r->m[GOBPF_M_CURG] && read_g(r->m[GOBPF_M_CURG], 1) == 0)
		r->flags |= GOBPF_REC_CURG;
labels:
	/* The goroutine the reader takes: m.curg when it was read, else the register's. */
	g0 = mc ? mc->g0 : (r->flags & GOBPF_REC_M) ? r->m[GOBPF_M_G0] : 0;
	if (r->flags & GOBPF_REC_CURG) {
		read_labels(r->curg[GOBPF_G_LABELS]);
		read_cont(1, sp, r->m[GOBPF_M_CURG], g0);
	} else if (r->flags & GOBPF_REC_G) {
		read_labels(r->g[GOBPF_G_LABELS]);
		read_cont(0, sp, greg, g0);
	}
out:
	if (bpf_ringbuf_output(&gobpf_ring, r, sizeof(*r), 0)) {
		count(GOBPF_ST_RING_FULL);
		return 1; /* the sample itself goes on; user space reads the slow way */
	}
	count(GOBPF_ST_RECORDS);
	return 1; /* 1: the kernel writes the sample as usual */
}

/* With the kernel-entry registers (needs BTF: bpf_get_current_task_btf). */
SEC("perf_event")
int gobpf_sample_k(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 1);
}

/* Without them: samples taken in the kernel get no record. */
SEC("perf_event")
int gobpf_sample_u(struct bpf_perf_event_data *ctx)
{
	return sample(ctx, 0);
}
