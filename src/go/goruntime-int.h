/* goruntime-int.h: what the files of the Go runtime reader share (private to src/go).
 *
 * The reader (include/gotop/goruntime.h) is split along the way a sample goes through it:
 *   goruntime.c          the reader's life (gort_new ... gort_free) and gort_read
 *   goruntime-layout.c   the offsets of g, m, mheap and the label map per Go version:
 *                        the built-in table, or read from the binary's DWARF
 *   goruntime-identify.c the goroutine a sampled thread ran: reads of g and m, the
 *                        thread -> m cache, runtime.allm
 *   goruntime-decode.c   a label set decoded from target memory (map or slice) and
 *                        interned
 *   goruntime-lcache.c   the label cache by g.labels address, with the proofs that an
 *                        entry still holds (GC sweep generation, fingerprints)
 *   goruntime-content.c  label sets known by the content the BPF program copied at the
 *                        sample; labels_of, which chooses between the two
 *   goruntime-batch.c    gort_read_batch: the same work for a drain's samples with few
 *                        vectored reads; gort_labels_batch: label sets alone, the same way
 */
#ifndef GOTOP_GORUNTIME_INT_H
#define GOTOP_GORUNTIME_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gotop/gobpf-abi.h"
#include "gotop/goruntime.h"
#include "gotop/mem.h"
#include "gotop/util.h"

/*
 * Sources of the format facts (Go source trees of each version, GOROOT/src):
 * - g, m, gobuf, stack: runtime/runtime2.go (`type g struct`, `type m struct`).
 * - goroutine status values: runtime/runtime2.go, _Grunning = 2, _Gsyscall = 3,
 *   _Gscan = 0x1000 (go1.19 L43-98, go1.27 L48-112).
 * - m.procid = gettid(): runtime/os_linux.go minit (go1.24 L404), 0 again in unminit (L412).
 * - g.labels: runtime/proflabel.go runtime_setProfLabel stores the *labelMap that
 *   runtime/pprof SetGoroutineLabels passes (runtime/pprof/runtime.go).
 * - go1.19-go1.23 runtime/pprof/label.go: `type labelMap map[string]string`, so g.labels
 *   points at a heap cell holding the map pointer (*hmap).
 * - go1.24-go1.25 runtime/pprof/label.go: `type labelMap struct{ LabelSet }`, LabelSet is
 *   `struct{ list []label }`, label is `{key, value string}`; go1.26+ the same layout via
 *   internal/runtime/pprof/label/labelset.go `Set{List []Label{Key, Value}}`. Labels()
 *   and mergeLabelSets keep the list sorted by key without duplicates.
 * - hmap and buckets: go1.19/go1.23 runtime/map.go: hmap {count int, flags uint8, B uint8,
 *   noverflow uint16, hash0 uint32, buckets, oldbuckets, nevacuate, extra}; bucketCnt 8;
 *   tophash emptyRest 0, emptyOne 1, evacuatedX 2, evacuatedY 3, evacuatedEmpty 4,
 *   minTopHash 5; flags iterator 1, oldIterator 2, hashWriting 4, sameSizeGrow 8. A bucket
 *   of map[string]string is tophash[8] @0, keys[8] @8, values[8] @136, overflow @264, 272 B
 *   (the linker's DWARF type bucket<string,string>, cmd/link/internal/ld/dwarf.go).
 * - DW_AT_go_kind = 0x2900 (go1.24 cmd/internal/dwarf/dwarf.go L309); kinds from
 *   internal/abi/type.go: Map = 21, Struct = 25.
 * - hash0 = fastrand() for every new map (go1.19 runtime/map.go makemap L295, L314).
 * - mheap_.sweepgen is incremented by 2 in gcSweep during the stop-the-world of mark
 *   termination, before any object freed by that cycle is swept and reused
 *   (runtime/mgc.go gcSweep: go1.19 L1497, go1.27 L2073; runtime/mheap.go sweepgen).
 * - g.m and m.curg are set together in execute and cleared together in dropg
 *   (go1.24 runtime/proc.go L3233, L4080).
 * - cgo calls run C code on g0's stack (go1.24 runtime/asm_amd64.s asmcgocall L887-913);
 *   vDSO calls move SP to g0's stack without changing g (sys_linux_amd64.s nanotime1 L223).
 */

#define G_RUNNING 2
#define G_SYSCALL 3
#define G_SCAN 0x1000

#define TOPHASH_MIN 5
#define BUCKET_CNT 8

#define MAP_COLLECT 256       /* live cells collected before sorting and cutting to 64 */
#define STRLEN_GARBAGE (1ULL << 31) /* a string length no label has: the read is garbage */
#define MAX_STATIC 16

#define TID_SLOTS 4096 /* thread -> m cache: 1024 sets */
#define TID_WAYS 4
/* The label cache starts with LC_SETS sets and doubles, up to LC_SETS_MAX, when the label
 * sets in use do not fit: when as many as a sixteenth of its entries were decoded again
 * soon after being evicted (gort.lc_ghost). A service with a label set per request has one
 * per goroutine serving one; a snapshot of all goroutines after a GC cycle proves a cached
 * set with a read or two, where a set no longer cached costs a read per pointer level.
 * Sets seen once (a sample per request) do not grow it. */
#define LC_SETS 512
#define LC_SETS_MAX 16384
#define LC_WAYS 8

/* A thread's m: fixed for the thread's life (m.procid == tid), and so are the m's g0
 * and gsignal (runtime/proc.go mcommoninit, malg). */
struct tid_slot {
	uint32_t tid;
	uint64_t m, g0, gsignal; /* g0/gsignal 0 when learnt from allm */
	/* [lo, hi) of g0's and gsignal's stacks once read (0, 0: not yet): allocated with
	 * the m and never moved (runtime/proc.go malg, mstart; runtime/signal_unix.go). */
	uint64_t sys_lo[2], sys_hi[2];
};

/* A string of a cached slice set outside the static ranges, re-compared on validation.
 * Strings close together are read with one read (a "chunk"). */
struct heap_str {
	uint64_t addr;
	uint32_t len;      /* bytes compared (the kept prefix) */
	uint32_t chunk;
	const char *bytes; /* inside the interned set */
};
struct chunk {
	uint64_t addr;
	uint32_t len;
};

/* A label cache entry; the g.labels it is for is gort.lc_tag at the same index. */
struct lc_entry {
	uint64_t used;
	const struct gort_labels *set; /* NULL: an empty label set */
	bool epoch_ok;
	uint32_t sweepgen;
	uint32_t checked_gen; /* the gort_read_batch (pf_gen) that last proved it; 0: none */
	uint32_t fplen;
	uint8_t *fp;
	uint32_t nheap, nchunk;
	struct heap_str *heap;
	struct chunk *chunks;
};

/* An interned set: one allocation holding the header, pairs and bytes. */
struct iset {
	uint64_t hash;
	size_t size;
	struct gort_labels l;
	struct gort_label pairs[];
};

/* A label set being decoded. */
struct dstr {
	uint64_t addr, len;
	uint32_t off, keep; /* kept bytes in dr.buf */
	bool cut;
};
struct dpair {
	struct dstr k, v;
};

/* A read served to one gort_read_batch (see pf_read): the bytes at pf_buf + off. */
struct pf_ent {
	uint64_t addr;
	uint32_t len, off;
	uint32_t gen;  /* the entry is empty unless gen == gort.pf_gen */
	int rc;
	uint8_t ready; /* 0: requested, not read yet */
	uint8_t early; /* read by the batch's first vectored read, before the sweep generation */
};
/* How gort_read_batch's reads are served (pf_read): not at all (gort_read), from the
 * table or on the spot, or only requested (a dry run of a round). */
enum { PF_OFF, PF_PASS, PF_DRY };

/* Label sets known by their content as the BPF program copied it (see set_key). */
#define HC_SLOTS 1024 /* a power of two; the table starts over when half of it is used */
#define HC_KEY_MAX (2 * GOBPF_LBL_PAIRS * (16 + GOBPF_LBL_STR_MAX))
#define HC_ARENA (256u << 10) /* key bytes; the table starts over when they would not fit */
struct hc_ent {
	uint64_t hash;
	uint32_t len; /* key bytes; 0: empty slot */
	uint32_t off; /* the key at hc_key + off */
	const struct gort_labels *set;
};

/* The last sample copy seen of a label set, by the set's address (see labels_of): a
 * request's goroutine keeps its set for the request's length, so that most samples
 * bring a copy equal to the one before, byte for byte. */
#define RAW_SLOTS 64 /* a power of two */
struct raw_ent {
	uint64_t ptr; /* g.labels; 0: empty slot */
	uint32_t npieces, used; /* npieces 0: the set was seen once, its bytes are not kept */
	const struct gort_labels *set;
	struct gobpf_piece piece[GOBPF_LBL_PIECES];
	uint8_t lbl[GOBPF_LBL_BYTES];
};

/* A string of the binary's read-only image, kept once read (see read_str). */
struct sstr {
	uint64_t addr;
	uint32_t len, off; /* bytes at ss_buf + off; len 0: empty slot */
};
#define SS_SLOTS 4096
#define SS_MAX (SS_SLOTS / 2)
#define SS_MAX_BYTES (1u << 20)

struct gort {
	struct gort_offsets off;
	const char *source;
	int arch;
	uint32_t gsz, msz; /* bytes read from a g, from an m */
	uint32_t hsz;      /* bytes read from an hmap (gort_hmap_read_size), once */
	const struct gobpf_rec *snap; /* the current sample's snapshot (gort_read_batch) */
	uint64_t allm, mheap;
	uint64_t last_allm_walk;
	uint64_t statics[MAX_STATIC][2];
	int nstatic;

	struct tid_slot *tids;
	unsigned tid_evict; /* round robin over a full set's ways */
	struct lc_entry *lc;
	/* The g.labels each lc entry is for (0: free), apart from the entries: a lookup
	 * reads one cache line of tags instead of the set's entries (LC_WAYS of them,
	 * cold at each drain). */
	uint64_t *lc_tag;
	uint64_t lc_clock;
	size_t lc_sets; /* a power of two, LC_SETS to LC_SETS_MAX */
	/* The g.labels of evicted entries, direct-mapped, as many slots as entries; a set
	 * decoded again while its address is still here would have been a hit in a larger
	 * cache (lc_ghost_hits, since the last growth). */
	uint64_t *lc_ghost;
	size_t lc_ghost_hits;

	struct iset **iset; /* open addressing on hash */
	size_t iset_cap, iset_n, iset_bytes;

	/* decoding scratch */
	struct dpair *dp;
	uint32_t dn;
	uint8_t dtrunc;
	char *buf;
	size_t buflen, bufcap;
	uint8_t *gbuf, *mbuf, *bucket;

	/* gort_read_batch scratch */
	struct batch_item *batch;
	size_t batch_cap;
	size_t *pending;

	/* gort_read_batch's reads: requested while decoding (PF_DRY), then read together */
	struct pf_ent *pf;
	uint32_t pf_slots;           /* a power of two; at most half are used */
	uint32_t pf_gen, pf_n;
	bool pf_full;                /* a request found the table full: grow it */
	uint8_t *pf_buf;
	size_t pf_len, pf_bufcap;
	struct mem_iov *pf_req;
	uint32_t *pf_reqent;
	size_t pf_nreq, pf_reqcap;
	const struct gp_mem *pf_mem; /* the real reader */
	int pf_mode;
	bool pf_missed;              /* a read of the current sample was only requested */
	bool pf_last_early;          /* the last read came from the batch's first read */
	uint64_t pf_calls;           /* vectored reads issued */
	uint64_t pf_spot;            /* reads made on the spot (not served, not requested) */

	/* label sets by their content as copied at the sample (set_key) */
	struct hc_ent *hc;
	uint8_t *hc_key;
	uint32_t hc_n, hc_len;
	struct raw_ent *raw; /* RAW_SLOTS of them, once a set was known by its content */

	/* strings of the static ranges already read: immutable, never read again */
	struct sstr *ss;
	uint32_t ss_n;
	char *ss_buf;
	size_t ss_len, ss_bufcap;

	struct gort_stats st;
};

struct gview {
	uint64_t addr, stack_lo, stack_hi, m, goid, labels;
	uint64_t sched_sp; /* g.sched.sp: non-zero while suspended at a stack switch */
	uint64_t startpc;  /* g.startpc: the entry of the goroutine's start function, 0 unknown */
	uint32_t status;
	bool early; /* read by gort_read_batch's first read, before its sweep generation */
	bool snap;  /* from the sample's snapshot (gort_sample.snap): as of the sample */
};

struct batch_item {
	struct gview cur;
	int rc, flags;
};

/* A pointer read from the target that may be dereferenced: aligned, above the zero
 * page, below the top of a 56-bit address space. */
static inline bool ptr_ok(uint64_t p)
{
	return p >= 4096 && p < (1ULL << 56) && (p & 7) == 0;
}

static inline uint64_t ld64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static inline uint32_t ld32(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static inline uint32_t max_u32(const uint32_t *v, size_t n)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m = GP_MAX(m, v[i]);
	return m;
}

/* Errors that mean "this candidate is garbage", not "the target is gone". */
static inline bool soft_error(int rc)
{
	return rc == -EFAULT || rc == -EIO || rc == -EINVAL;
}

/* Whether [addr, addr + len) lies inside one static range (gort_add_static_range): bytes
 * that never change while the target lives. */
static inline bool is_static(const struct gort *g, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < g->nstatic; i++)
		if (addr >= g->statics[i][0] && addr + len <= g->statics[i][1] && addr + len >= addr)
			return true;
	return false;
}

/* The current sample's snapshot holds a copy of label set ptr, made at the sample
 * (GOBPF_REC_LBL: its first piece is the set's cell or header at g.labels). */
static inline bool copied_at_sample(const struct gort *g, uint64_t ptr)
{
	const struct gobpf_rec *r = g->snap;

	return r && (r->flags & GOBPF_REC_LBL) && r->npieces && r->piece[0].addr == ptr;
}

/* The bytes of piece k of r (k < its pieces) when it is the read (addr, len), else NULL. */
static inline const uint8_t *piece_bytes(const struct gobpf_rec *r, uint32_t k, uint64_t addr,
					 size_t len)
{
	const struct gobpf_piece *pc = &r->piece[k];

	return pc->addr == addr && pc->len == len && gobpf_piece_ok(pc) ? r->lbl + pc->off : NULL;
}

/* The len bytes at addr as the BPF program read them at the current sample, when its
 * copy of the label set holds exactly that read: they answer it. Served straight from
 * the record (at most GOBPF_LBL_PIECES compares), not through the table: entering every
 * piece of every sample there cost more than the reads it saved. */
static inline const uint8_t *snap_piece(const struct gort *g, uint64_t addr, size_t len)
{
	const struct gobpf_rec *r = g->snap;
	uint32_t k;

	if (!r || !(r->flags & GOBPF_REC_LBL))
		return NULL;
	for (k = 0; k < r->npieces && k < GOBPF_LBL_PIECES; k++) {
		const uint8_t *b = piece_bytes(r, k, addr, len);

		if (b)
			return b;
	}
	return NULL;
}

/* snap_piece, trying piece hint first: the program copies a set's pieces in the order
 * set_key reads them (src/go/bpf/gobpf.bpf.c read_labels: a map's cell, hmap and bucket, a
 * slice's header and array, then the strings it copied, in pair order), so that each is
 * found without a scan. */
static inline const uint8_t *snap_piece_at(const struct gort *g, uint32_t hint, uint64_t addr,
					   size_t len)
{
	const struct gobpf_rec *r = g->snap;
	const uint8_t *b;

	if (r && hint < r->npieces && hint < GOBPF_LBL_PIECES && (r->flags & GOBPF_REC_LBL) &&
	    (b = piece_bytes(r, hint, addr, len)))
		return b;
	return snap_piece(g, addr, len);
}

/* goruntime-layout.c: the offsets for a binary of go_version into *o, from its DWARF
 * when usable, else from the table. The source ("dwarf", "table go1.NN"), or NULL with
 * errno ENOTSUP when neither knows the version. */
const char *gort_layout(const char *go_version, Dwarf *dwarf, struct gort_offsets *o);

/* goruntime-identify.c */
struct tid_slot *gort_tid_slot(struct gort *g, uint32_t tid);
int gort_identify(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
		  uint64_t sp, struct gview *cur, int *flags);

/* goruntime.c */
int gort_finish(struct gort *gr, const struct gp_mem *mem, int rc, const struct gview *cur,
		int flags, bool have_sg, bool sg_before, uint32_t sg, struct gort_result *out);

/* goruntime-decode.c */
int gort_read_fingerprint(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint8_t *fp,
			  uint32_t *fplen, uint64_t *data, uint64_t *len, uint32_t *n);
int gort_labels_decode(struct gort *g, const struct gp_mem *mem, uint64_t ptr, bool epoch,
		       uint32_t sweepgen, const struct gort_labels **out, int *flags);

/* goruntime-lcache.c */
void gort_lc_drop(struct gort *g, struct lc_entry *e);
void gort_lc_put(struct gort *g, uint64_t ptr, bool epoch, uint32_t sweepgen, const uint8_t *fp,
		 uint32_t fplen, const struct gort_labels *set, uint32_t nkeep);
bool gort_read_sweepgen(struct gort *g, const struct gp_mem *mem, uint32_t *sg);
int gort_labels_cached(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		       bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		       int *flags);

/* goruntime-content.c */
int gort_labels_of(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		   bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		   int *flags);

/* goruntime-batch.c: the label sets of views[0..n) (each with labels != 0, not from a
 * sample's snapshot) as gort_labels_of(views[k], have_sg, sg_before, sg) gives them, into
 * outs[k], flags[k] and rcs[k], with a vectored read per pointer level for all of them
 * (the label rounds of gort_read_batch). Returns the reads made (system calls). */
size_t gort_labels_batch(struct gort *gr, const struct gp_mem *mem, const struct gview *views,
			 size_t n, bool have_sg, bool sg_before, uint32_t sg,
			 const struct gort_labels **outs, int *flags, int *rcs);

#endif
