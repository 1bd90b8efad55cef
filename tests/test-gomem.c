/* test-gomem.c: the profile bucket reader (gomem) and the profiles made of it (goprof) on
 * fake process memories: the pending-cycle flush, each release's record, scaling against
 * values Go computed, reads torn by a flush or a GC cycle, hostile lists, the write. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gomem-input.h"
#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/mem.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"

/* Where the fake runtime keeps its variables (offsets from GMF_BASE). */
#define V_MBUCKETS 0x00
#define V_BBUCKETS 0x08
#define V_XBUCKETS 0x10
#define V_CYCLE 0x18
#define V_LOCK 0x20
#define V_MEMRATE 0x28
#define V_BLOCKRATE 0x30
#define V_MUTEXRATE 0x38
#define V_TICKS 0x40 /* ticksType, val at +24 */
#define V_END 0x80

static uint8_t image[64 << 10];

/* A memory whose reads can change it: the reads that succeed and hold the byte at `off`
 * are counted, and before the one after `after` of them, `val` (8 bytes) is poked there,
 * once, or before every one from then on (`every`): a count moving between two reads. */
struct live {
	struct gmf_img m;
	unsigned hits;
	unsigned after;
	uint32_t off;
	uint64_t val;
	int every, done;
	uint64_t step; /* with every: val grows by step each time (a counter going up) */
};

static int live_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct live *l = ctx;
	uint64_t at = GMF_BASE + l->off;

	if (addr < GMF_BASE || addr - GMF_BASE + len > l->m.cap) /* whole pages, as a process */
		return -EFAULT;
	if (l->after && addr <= at && at < addr + len && ++l->hits > l->after &&
	    (l->every || !l->done)) {
		gmf_w64(&l->m, l->off, l->val);
		l->val += l->step;
		l->done = 1;
	}
	memcpy(buf, l->m.mem + (addr - GMF_BASE), len);
	return 0;
}

static void img_init(struct live *l, int go_minor)
{
	memset(l, 0, sizeof(*l));
	memset(image, 0, sizeof(image));
	l->m.mem = image;
	l->m.cap = sizeof(image);
	l->m.go_minor = go_minor;
	gmf_put(&l->m, NULL, V_END);
}

static struct gomem *reader(struct live *l, struct gp_mem *mem)
{
	struct gomem_target t;

	memset(&t, 0, sizeof(t));
	mem->read = live_read;
	mem->ctx = l;
	mem->readv = NULL;
	t.mem = mem;
	t.go_minor = l->m.go_minor;
	t.v.mbuckets = GMF_BASE + V_MBUCKETS;
	t.v.bbuckets = GMF_BASE + V_BBUCKETS;
	t.v.xbuckets = GMF_BASE + V_XBUCKETS;
	t.v.mprofcycle = GMF_BASE + V_CYCLE;
	t.v.active_lock = GMF_BASE + V_LOCK;
	t.v.memprofilerate = GMF_BASE + V_MEMRATE;
	t.v.blockprofilerate = GMF_BASE + V_BLOCKRATE;
	t.v.mutexprofilerate = GMF_BASE + V_MUTEXRATE;
	t.v.ticks = GMF_BASE + V_TICKS;
	t.v.ticks_val = 24;
	return gomem_new_from(&t);
}

static const uint64_t stk1[] = { 0x401000, 0x402000, 0x403000 };
static const uint64_t stk2[] = { 0x404000 };

/* Two heap buckets, cycle C = 4 (pending slot 4 % 3 = 1). */
static uint64_t two_buckets(struct live *l, const uint64_t af1[4][2], const uint64_t af2[4][2])
{
	uint64_t rec[16], b1, b2;

	gmf_heap_rec(l->m.go_minor, 64, af1, rec);
	b1 = gmf_bucket(&l->m, 1, 64, stk1, 3, 0, rec);
	gmf_heap_rec(l->m.go_minor, 4096, af2, rec);
	b2 = gmf_bucket(&l->m, 1, 4096, stk2, 1, b1, rec);
	gmf_w64(&l->m, V_MBUCKETS, b2);
	gmf_w64(&l->m, V_CYCLE, 4 << 1);
	gmf_w64(&l->m, V_MEMRATE, 524288);
	return b2;
}

/* memProfileInternal's sums: active + future[C % 3], bytes from the bucket's size. */
static void flush_emulation(int go_minor)
{
	const uint64_t af1[4][2] = { { 10, 4 }, { 100, 0 }, { 2, 1 }, { 300, 50 } };
	const uint64_t af2[4][2] = { { 0, 0 }, { 7, 0 }, { 1, 0 }, { 9, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;

	img_init(&l, go_minor);
	two_buckets(&l, af1, af2);
	g = reader(&l, &mem);
	assert_non_null(g);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.st.cycle, 4);
	assert_false(s.st.all_cycles);
	assert_int_equal(s.rate, 524288);
	/* newest first: the 4096-byte bucket */
	assert_int_equal(s.b[0].size, 4096);
	assert_int_equal(s.b[0].allocs, 1);
	assert_int_equal(s.b[0].frees, 0);
	assert_int_equal(s.b[0].alloc_bytes, 4096);
	assert_int_equal(s.b[1].allocs, 12);
	assert_int_equal(s.b[1].frees, 5);
	assert_int_equal(s.b[1].alloc_bytes, 12 * 64);
	assert_int_equal(s.b[1].free_bytes, 5 * 64);
	assert_int_equal(s.b[1].nstk, 3);
	assert_int_equal(s.pcs[s.b[1].stk0 + 2], 0x403000);
	assert_int_equal(s.st.dropped, 0);
	gomem_free(g);
}

static void test_flush_go119(void **state)
{
	(void)state;
	flush_emulation(19);
}

static void test_flush_go127(void **state)
{
	(void)state;
	flush_emulation(27);
}

/* No cycle published yet (every active and pending count 0): every cycle is added. */
static void test_all_cycles(void **state)
{
	const uint64_t af1[4][2] = { { 0, 0 }, { 3, 1 }, { 0, 0 }, { 5, 0 } };
	const uint64_t af2[4][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 2, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;

	(void)state;
	img_init(&l, 23);
	two_buckets(&l, af1, af2);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_true(s.st.all_cycles);
	assert_int_equal(s.b[1].allocs, 8);
	assert_int_equal(s.b[1].frees, 1);
	assert_int_equal(s.b[0].allocs, 2);
	gomem_free(g);
}

/* A flush (a bucket's published count moved) between the two reads: read again. */
static void test_torn_flush(void **state)
{
	const uint64_t af1[4][2] = { { 10, 4 }, { 0, 0 }, { 2, 1 }, { 0, 0 } };
	const uint64_t af2[4][2] = { { 1, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	uint64_t b2;

	(void)state;
	img_init(&l, 27);
	b2 = two_buckets(&l, af1, af2);
	g = reader(&l, &mem);
	/* between the two reads, b2's active allocs (its record's first word) becomes 5 */
	l.after = 1;
	l.off = (uint32_t)(b2 - GMF_BASE) + 48 + 8;
	l.val = 5;
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_true(s.st.tries >= 2);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.b[0].allocs, 5);
	assert_int_equal(s.st.torn, 0);
	gomem_free(g);
}

/* A GC cycle during the read (mProfCycle moved): read again. */
static void test_cycle_moves(void **state)
{
	const uint64_t af1[4][2] = { { 10, 4 }, { 0, 0 }, { 2, 1 }, { 0, 0 } };
	const uint64_t af2[4][2] = { { 1, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;

	(void)state;
	img_init(&l, 23);
	two_buckets(&l, af1, af2);
	g = reader(&l, &mem);
	{
		uint32_t c;

		assert_int_equal(gomem_cycle(g, &c), 0);
		assert_int_equal(c, 4);
	}
	l.after = 1;
	l.off = V_CYCLE;
	l.val = 5 << 1;
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.st.tries, 2);
	assert_int_equal(s.st.cycle, 5);
	/* C = 5: pending slot 2 */
	assert_int_equal(s.b[1].allocs, 10);
	gomem_free(g);
}

/* A flush holding profMemActiveLock at every read: no snapshot (-EAGAIN). */
static void test_lock_held(void **state)
{
	const uint64_t af[4][2] = { { 1, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;

	(void)state;
	img_init(&l, 24);
	two_buckets(&l, af, af);
	gmf_w64(&l.m, V_LOCK, 0x101); /* spinbit: mutexLocked */
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), -EAGAIN);
	gomem_free(g);
	/* go1.23 futex lock: 0 is free; a spinbit word with only waiters is free in 1.24 */
	gmf_w64(&l.m, V_LOCK, 0x100);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	gomem_free(g);
}

/* A torn record (allocs counted, alloc_bytes not yet: go1.19-go1.26 keep both): the
 * invariant catches it; a bucket torn at every try is dropped and counted. */
static void test_torn_record(void **state)
{
	const uint64_t af[4][2] = { { 10, 4 }, { 0, 0 }, { 2, 1 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	uint64_t b2;

	(void)state;
	img_init(&l, 21);
	b2 = two_buckets(&l, af, af);
	/* active.allocs of b2 counts up at every read, its bytes never */
	l.after = 1;
	l.every = 1;
	l.off = (uint32_t)(b2 - GMF_BASE) + 48 + 8;
	l.val = 11;
	l.step = 1;
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.st.tries, 4);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.st.torn, 1);
	assert_int_equal(s.st.dropped, 1);
	assert_int_equal(s.b[0].size, 64);
	gomem_free(g);
}

/* Hostile lists: a loop, a depth no runtime records, a hash that does not match, a
 * bucket of another kind, a list cut at max. */
static void test_hostile(void **state)
{
	uint64_t rec[16] = { 0 }, b[5], stk[40];
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	int i;

	(void)state;
	for (i = 0; i < 40; i++)
		stk[i] = 0x401000 + 16 * (uint64_t)i;
	img_init(&l, 22);
	gmf_w64(&l.m, V_CYCLE, 2);
	b[0] = gmf_bucket(&l.m, 1, 32, stk, 2, 0, rec);
	b[1] = gmf_bucket(&l.m, 1, 32, stk + 2, 2, b[0], rec);
	gmf_w64(&l.m, (uint32_t)(b[0] - GMF_BASE) + 8, b[1]); /* b0 -> b1 -> b0 */
	gmf_w64(&l.m, V_MBUCKETS, b[1]);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_true(s.st.loop);
	assert_int_equal(s.n, 2);
	gomem_free(g);

	/* 33 frames: go1.22 records 32 at most */
	img_init(&l, 22);
	gmf_w64(&l.m, V_CYCLE, 2);
	b[0] = gmf_bucket(&l.m, 1, 32, stk, 2, 0, rec);
	b[1] = gmf_bucket(&l.m, 1, 32, stk, 33, b[0], rec);
	gmf_w64(&l.m, V_MBUCKETS, b[1]);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.st.bad, 1);
	gomem_free(g);

	/* a wrong hash, then a block bucket on the heap list: the list ends at each */
	img_init(&l, 23);
	gmf_w64(&l.m, V_CYCLE, 2);
	b[0] = gmf_bucket(&l.m, 2, 0, stk, 2, 0, rec);
	b[1] = gmf_bucket(&l.m, 1, 32, stk, 2, b[0], rec);
	b[2] = gmf_bucket(&l.m, 1, 32, stk + 3, 2, b[1], rec);
	gmf_w64(&l.m, (uint32_t)(b[2] - GMF_BASE) + 24, 12345);
	gmf_w64(&l.m, V_MBUCKETS, b[2]);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.st.bad, 1);
	gmf_w64(&l.m, V_MBUCKETS, b[1]);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.st.bad, 1);

	/* five buckets, read at most two */
	img_init(&l, 23);
	gmf_w64(&l.m, V_CYCLE, 2);
	b[0] = 0;
	for (i = 0; i < 5; i++)
		b[0] = gmf_bucket(&l.m, 1, 32, stk + i, 3, b[0], rec);
	gmf_w64(&l.m, V_MBUCKETS, b[0]);
	gomem_free(g);
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 2, &s), 0);
	assert_int_equal(s.n, 2);
	assert_true(s.st.truncated);
	/* a head in no memory: the target gone */
	gmf_w64(&l.m, V_MBUCKETS, 0x1000);
	assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_int_equal(s.st.bad, 1);
	gomem_free(g);
}

/* A target that exits during the read: every read from then on fails as
 * process_vm_readv does for a process that is gone (ESRCH). */
static int gone_after;

static int gone_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	if (gone_after-- <= 0)
		return -ESRCH;
	return live_read(ctx, addr, buf, len);
}

static void test_exit_mid_read(void **state)
{
	const uint64_t af[4][2] = { { 10, 4 }, { 0, 0 }, { 2, 1 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	int n, rc;

	(void)state;
	for (n = 0; n < 40; n++) {
		img_init(&l, 23);
		two_buckets(&l, af, af);
		g = reader(&l, &mem);
		mem.read = gone_read;
		gone_after = n;
		rc = gomem_read(g, GOMEM_HEAP, 0, &s);
		/* gone before the end: the process is gone, or what was read whole is kept */
		assert_true(rc == -ESRCH || rc == 0);
		if (rc == 0) {
			assert_true(s.n <= 2);
		}
		gomem_free(g);
	}
}

/* Block and mutex: counts that keep growing during every read are dropped, counted. */
static void test_contention(void **state)
{
	double c1 = 3.0, c2 = 0.4;
	uint64_t rec[2], b1, b2;
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;

	(void)state;
	img_init(&l, 23);
	memcpy(&rec[0], &c1, 8);
	rec[1] = 3000000;
	b1 = gmf_bucket(&l.m, 2, 0, stk1, 3, 0, rec);
	memcpy(&rec[0], &c2, 8);
	rec[1] = 1000;
	b2 = gmf_bucket(&l.m, 2, 0, stk2, 1, b1, rec);
	gmf_w64(&l.m, V_BBUCKETS, b2);
	gmf_w64(&l.m, V_BLOCKRATE, 1);
	gmf_w64(&l.m, V_TICKS + 24, 2000000000); /* 2 GHz */
	g = reader(&l, &mem);
	assert_int_equal(gomem_read(g, GOMEM_BLOCK, 0, &s), 0);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.ticks_per_sec, 2000000000);
	assert_true(s.b[1].count == 3.0);
	assert_int_equal(s.b[1].cycles, 3000000);
	{
		struct goprof_sym sym = { NULL, 0, 23, 0 };
		struct prof *p = goprof_contention_profile(&sym, &s);
		struct prof_sample smp;
		const struct prof_value_type *vt;
		int64_t total = 0;
		size_t i;

		assert_int_equal(prof_sample_types(p, &vt), 2);
		assert_string_equal(prof_string(p, vt[1].type, NULL), "delay");
		for (i = 0; i < prof_nsamples(p); i++) {
			assert_int_equal(prof_sample_at(p, i, &smp), 0);
			total += smp.values[1];
		}
		/* 3e6 and 1e3 cycles at 2 GHz: 1.5 ms and 500 ns */
		assert_int_equal(total, 1500000 + 500);
		/* a count of 0.4 is reported as... int64(0.4) = 0, shown as 1 (block) */
		assert_int_equal(prof_total(p, 0), 3 + 1);
		prof_free(p);
	}
	/* b1's cycles grow before every read from the second on */
	l.after = 1;
	l.every = 1;
	l.off = (uint32_t)(b1 - GMF_BASE) + 48 + 3 * 8 + 8;
	l.val = 3000001;
	l.step = 1;
	assert_int_equal(gomem_read(g, GOMEM_BLOCK, 0, &s), 0);
	assert_int_equal(s.st.tries, 4);
	assert_int_equal(s.n, 1);
	assert_int_equal(s.st.torn, 1);
	gomem_free(g);
}

/* go1.19's writeMutex scales counts and delay by the current fraction; from go1.21 the
 * runtime stores them scaled. */
static void test_mutex_scaling(void **state)
{
	double c = 2.0;
	uint64_t rec[2], b;
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	int minor;

	(void)state;
	for (minor = 19; minor <= 21; minor += 2) {
		struct goprof_sym sym = { NULL, 0, minor, 0 };
		struct prof *p;

		img_init(&l, minor);
		memcpy(&rec[0], &c, 8);
		rec[1] = 1000000000;
		b = gmf_bucket(&l.m, 3, 0, stk2, 1, 0, rec);
		gmf_w64(&l.m, V_XBUCKETS, b);
		gmf_w64(&l.m, V_MUTEXRATE, 5);
		gmf_w64(&l.m, V_TICKS + 24, 1000000000);
		g = reader(&l, &mem);
		assert_int_equal(gomem_read(g, GOMEM_MUTEX, 0, &s), 0);
		assert_int_equal(s.rate, 5);
		p = goprof_contention_profile(&sym, &s);
		assert_int_equal(prof_total(p, 0), minor == 19 ? 10 : 2);
		assert_int_equal(prof_total(p, 1), minor == 19 ? 5000000000LL : 1000000000LL);
		prof_free(p);
		gomem_free(g);
	}
}

/* scaleHeapSample, against the values Go itself computes: go1.23's and go1.27's
 * functions copied into a Go program (count, object size, rate; then old and new form
 * results), run with Debian's golang-1.23. */
static const int64_t scale_cases[][7] = {
	{ 1, 16, 524288, 32768, 524296, 32768, 524296 },
	{ 3, 8192, 524288, 193, 1585183, 193, 1585183 },
	{ 1000, 1024, 524288, 512500, 524800166, 512500, 524800166 },
	{ 7, 1048576, 524288, 8, 8488876, 8, 8488876 },
	{ 5, 32768, 4096, 5, 163894, 5, 163894 },
	{ 12, 48, 1, 12, 576, 12, 576 },
	{ 12, 48, 0, 12, 576, 12, 576 },
	{ 0, 64, 524288, 0, 0, 0, 0 },
	{ 2, 0, 524288, 0, 0, 0, 0 },
	{ 123456, 24, 524288, 2696999200, 64727980811, 2696999200, 64727980811 },
	{ 1, 1073741824, 524288, 1, 1073741824, 1, 1073741824 },
	{ 999, 4096, 65536, 16488, 67537726, 16488, 67537726 },
};

static void test_scale(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(scale_cases) / sizeof(scale_cases[0]); i++) {
		const int64_t *c = scale_cases[i];
		int64_t n, b;

		goprof_scale_heap(c[0], c[0] * c[1], c[2], &n, &b);
		assert_int_equal(n, c[3]);
		assert_int_equal(b, c[4]);
	}
}

/* The heap profile's sample types, period, values and bytes label (go1.27 always; before,
 * only when the mean object size is not 0). */
static void test_heap_profile(void **state)
{
	const uint64_t af1[4][2] = { { 1000, 400 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	const uint64_t af2[4][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 }, { 0, 0 } };
	struct gp_mem mem;
	struct gomem_snap s;
	struct live l;
	struct gomem *g;
	int minor;

	(void)state;
	for (minor = 26; minor <= 27; minor++) {
		struct goprof_sym sym = { NULL, 0, minor, 0 };
		const struct prof_value_type *vt;
		struct prof_value_type pt;
		int64_t period, n, b;
		struct prof *p;
		size_t i, labelled = 0;

		img_init(&l, minor);
		two_buckets(&l, af1, af2);
		g = reader(&l, &mem);
		assert_int_equal(gomem_read(g, GOMEM_HEAP, 0, &s), 0);
		p = goprof_heap_profile(&sym, &s, "alloc_space");
		assert_int_equal(prof_sample_types(p, &vt), 4);
		assert_string_equal(prof_string(p, vt[0].type, NULL), "alloc_objects");
		assert_string_equal(prof_string(p, vt[3].type, NULL), "inuse_space");
		assert_string_equal(prof_string(p, prof_default_sample_type(p), NULL), "alloc_space");
		prof_get_period(p, &pt, &period);
		assert_string_equal(prof_string(p, pt.type, NULL), "space");
		assert_int_equal(period, 524288);
		goprof_scale_heap(1000, 64000, 524288, &n, &b);
		assert_int_equal(prof_total(p, 0), n);
		assert_int_equal(prof_total(p, 1), b);
		goprof_scale_heap(600, 38400, 524288, &n, &b);
		assert_int_equal(prof_total(p, 2), n);
		assert_int_equal(prof_total(p, 3), b);
		for (i = 0; i < prof_nsamples(p); i++) {
			struct prof_sample smp;

			prof_sample_at(p, i, &smp);
			labelled += smp.nlabels;
			if (smp.nlabels) {
				assert_string_equal(prof_string(p, smp.labels[0].key, NULL), "bytes");
				assert_true(smp.labels[0].num == 64 || smp.labels[0].num == 4096);
			}
		}
		/* the empty 4096-byte bucket: labelled from go1.27 only */
		assert_int_equal(labelled, minor >= 27 ? 2 : 1);
		prof_free(p);
		gomem_free(g);
	}
}

/* --enable-memprofile's write: only when the rate is 0, and only the rate. */
static void test_enable(void **state)
{
	struct mem_region r;
	struct gomem_target t;
	struct gomem *g;
	struct live l;
	int64_t old = -1, rate;
	uint8_t before[sizeof(image)];

	(void)state;
	img_init(&l, 21);
	gmf_w64(&l.m, V_CYCLE, 2);
	r.addr = GMF_BASE;
	r.data = image;
	r.len = l.m.len;
	memset(&t, 0, sizeof(t));
	t.go_minor = 21;
	t.v.mbuckets = GMF_BASE + V_MBUCKETS;
	t.v.mprofcycle = GMF_BASE + V_CYCLE;
	t.v.memprofilerate = GMF_BASE + V_MEMRATE;
	/* read-only memory: refused */
	t.mem = mem_fake_new(&r, 1);
	g = gomem_new_from(&t);
	assert_int_equal(gomem_enable(g, &old), -EROFS);
	gomem_free(g);
	mem_fake_free(t.mem);
	t.mem = mem_fake_new_rw(&r, 1);
	g = gomem_new_from(&t);
	memcpy(before, image, sizeof(image));
	assert_int_equal(gomem_enable(g, &old), 0);
	assert_int_equal(old, 0);
	assert_int_equal(gomem_rate(g, GOMEM_HEAP, &rate), 0);
	assert_int_equal(rate, GOMEM_DEFAULT_RATE);
	memcpy(before + V_MEMRATE, &rate, 8);
	assert_memory_equal(before, image, sizeof(image)); /* nothing else written */
	assert_int_equal(gomem_enable(g, &old), -EEXIST);
	assert_int_equal(old, GOMEM_DEFAULT_RATE);
	gomem_free(g);
	mem_fake_free(t.mem);
}

/* The ?seconds delta: after - before, zeros left out. */
static void test_delta(void **state)
{
	struct prof *a = prof_new(), *b = prof_new(), *d;
	struct prof_value_type vt[2];
	uint64_t loc1, loc2, f;
	struct prof_line line;
	int64_t v[2];
	uint8_t *buf;
	size_t len;

	(void)state;
	vt[0].type = prof_str(a, "contentions");
	vt[0].unit = prof_str(a, "count");
	vt[1].type = prof_str(a, "delay");
	vt[1].unit = prof_str(a, "nanoseconds");
	prof_set_sample_types(a, vt, 2);
	f = prof_add_function(a, prof_str(a, "main.f"), prof_str(a, "main.f"), 0, 0);
	line.function = f;
	line.line = 1;
	loc1 = prof_add_location(a, 0, 0x1000, &line, 1);
	loc2 = prof_add_location(a, 0, 0x2000, &line, 1);
	v[0] = 3;
	v[1] = 300;
	prof_add_sample(a, &loc1, 1, v, NULL, 0);
	prof_add_sample(a, &loc2, 1, v, NULL, 0);
	prof_set_time(a, 1000, 0);
	prof_merge(b, a);
	v[0] = 2;
	v[1] = 50;
	prof_add_sample(b, &loc1, 1, v, NULL, 0);
	prof_set_time(b, 5000, 0);
	d = goprof_delta(a, b);
	assert_int_equal(prof_total(d, 0), 2);
	assert_int_equal(prof_total(d, 1), 50);
	{
		int64_t t, dur;

		prof_get_time(d, &t, &dur);
		assert_int_equal(t, 5000);
		assert_int_equal(dur, 4000);
	}
	/* loc2's sample is zero: left out of the encoding */
	assert_int_equal(pprof_encode(d, &buf, &len), 0);
	free(buf);
	prof_free(a);
	prof_free(b);
	prof_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_flush_go119),   cmocka_unit_test(test_flush_go127),
		cmocka_unit_test(test_all_cycles),    cmocka_unit_test(test_torn_flush),
		cmocka_unit_test(test_cycle_moves),   cmocka_unit_test(test_lock_held),
		cmocka_unit_test(test_torn_record),   cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_exit_mid_read),
		cmocka_unit_test(test_contention),    cmocka_unit_test(test_mutex_scaling),
		cmocka_unit_test(test_scale),         cmocka_unit_test(test_heap_profile),
		cmocka_unit_test(test_enable),        cmocka_unit_test(test_delta),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
