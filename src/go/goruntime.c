/* goruntime.c: goroutine id and pprof labels of a sampled thread, read from a Go process. */
#include "config.h"
#include "gotop/goruntime.h"
#include "gotop/util.h"

#include <dwarf.h>
#include <errno.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
#define HMAP_SAME_SIZE_GROW 8
#define BUCKET_CNT 8
#define DW_AT_GO_KIND 0x2900
#define GO_KIND_MAP 21
#define GO_KIND_STRUCT 25

/* Bounds on walks over untrusted memory. */
#define MAP_MAX_B 10          /* at most 1024 buckets per array */
#define MAP_MAX_BUCKETS 2048  /* buckets visited per map, overflow chains included */
#define MAP_MAX_CHAIN 16      /* overflow buckets per chain */
#define MAP_COLLECT 256       /* live cells collected before sorting and cutting to 64 */
#define STRLEN_GARBAGE (1ULL << 31)
#define ALLM_MAX 8192
#define ALLM_INTERVAL_NS 50000000ULL
#define MAX_STATIC 16

#define TID_SLOTS 4096 /* thread -> m cache: 1024 sets */
#define TID_WAYS 4
#define LC_SETS 1024
#define LC_WAYS 4
#define INTERN_MAX_SETS 100000
#define INTERN_MAX_BYTES (64u << 20)

/* ---------------------------------------------------------------- offset table */

struct table_row {
	const char *source;
	struct gort_offsets o;
};

/* The common map layout (64-bit), go1.19-go1.23 runtime/map.go; checked against DWARF. */
#define MAP64 .hmap_count = 0, .hmap_flags = 8, .hmap_b = 9, .hmap_hash0 = 12, \
	.hmap_buckets = 16, .hmap_oldbuckets = 24, .bucket_keys = 8, .bucket_values = 136, \
	.bucket_overflow = 264, .bucket_size = 272

/* Every row but 1.20 was read from the DWARF (runtime.g, runtime.m, runtime.mheap) of
 * binaries built by go1.19.8, 1.21.13, 1.22.12, 1.23.5, 1.24.4, 1.25.12, 1.26.10 and
 * 1.27.3 for amd64 and for arm64: both gave the same numbers. tests/goruntime-live.sh
 * checks again that DWARF and table agree. 1.20 is inferred (no toolchain at hand): g and
 * m as in 1.19, whose runtime2.go fields up to labels 1.20 keeps; alllink and sweepgen
 * unknown. Changes: 1.21 moved labels (-16, gTraceState/parentGoid); 1.23 added
 * g.syscallbp (+8 from 128); 1.25 removed gobuf.ret (-8 after sched, and in m after
 * morebuf); 1.26 added g fields before labels (+8). */
static const struct table_row table[] = {
	{ "table go1.19", { .go_minor = 19, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 360,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 336,
		.mheap_sweepgen = 65848, MAP64 } },
	{ "table go1.20", { .go_minor = 20, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 360,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 0,
		.mheap_sweepgen = 0, MAP64 } },
	{ "table go1.21", { .go_minor = 21, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 336,
		.mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.22", { .go_minor = 22, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.23", { .go_minor = 23, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 152, .g_goid = 160, .g_labels = 352,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.24", { .go_minor = 24, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 152, .g_goid = 160, .g_labels = 352,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.mheap_sweepgen = 65856 } },
	{ "table go1.25", { .go_minor = 25, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 344,
		.mheap_sweepgen = 65856 } },
	{ "table go1.26", { .go_minor = 26, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 352,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 352,
		.mheap_sweepgen = 65856 } },
	{ "table go1.27", { .go_minor = 27, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 352,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 352,
		.mheap_sweepgen = 65856 } },
};

static const struct table_row *table_find(int minor)
{
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(table); i++)
		if (table[i].o.go_minor == minor)
			return &table[i];
	return NULL;
}

const struct gort_offsets *gort_table_offsets(const char *go_version)
{
	const struct table_row *row = table_find(util_go_minor(go_version));

	if (!row) {
		errno = ENOTSUP;
		return NULL;
	}
	return &row->o;
}

/* ---------------------------------------------------------------- DWARF */

enum { DW_G, DW_M, DW_MHEAP, DW_LABELMAP, DW_NFIND };
static const char *const dw_names[DW_NFIND] = {
	"runtime.g", "runtime.m", "runtime.mheap", "runtime/pprof.labelMap",
};

static bool dw_has_go_kind(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	return dwarf_attr(die, DW_AT_GO_KIND, &a) != NULL;
}

/* Finds the top-level DIEs named in dw_names (structures; labelMap: the DIE carrying
 * DW_AT_go_kind). Go puts a type in the compile unit of its package. */
static void dw_scan(Dwarf *dw, Dwarf_Die *found, bool *have)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int left = DW_NFIND;

	while (left > 0 && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				int tag = dwarf_tag(&die);
				const char *name;
				int i;

				if (tag != DW_TAG_structure_type && tag != DW_TAG_typedef)
					continue;
				name = dwarf_diename(&die);
				if (!name || strncmp(name, "runtime", 7) != 0)
					continue;
				for (i = 0; i < DW_NFIND; i++) {
					if (have[i] || strcmp(name, dw_names[i]) != 0)
						continue;
					if (i == DW_LABELMAP ? !dw_has_go_kind(&die)
							     : tag != DW_TAG_structure_type)
						continue;
					found[i] = die;
					have[i] = true;
					left--;
				}
			} while (left > 0 && dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
}

/* Offset and (peeled) type of member `name` of structure st. 0 or -1. */
static int dw_member(Dwarf_Die *st, const char *name, uint32_t *off, Dwarf_Die *type)
{
	Dwarf_Die child;

	if (dwarf_child(st, &child) != 0)
		return -1;
	do {
		Dwarf_Attribute a;
		Dwarf_Word w;
		const char *n;

		if (dwarf_tag(&child) != DW_TAG_member)
			continue;
		n = dwarf_diename(&child);
		if (!n || strcmp(n, name) != 0)
			continue;
		if (!dwarf_attr(&child, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &w) != 0 || w > 1u << 20)
			return -1;
		*off = (uint32_t)w;
		if (type) {
			Dwarf_Die t;

			if (!dwarf_attr_integrate(&child, DW_AT_type, &a) ||
			    !dwarf_formref_die(&a, &t) || dwarf_peel_type(&t, type) != 0)
				return -1;
		}
		return 0;
	} while (dwarf_siblingof(&child, &child) == 0);
	return -1;
}

/* Like dw_member, and checks that the member is `size` bytes (when DWARF says). */
static int dw_field(Dwarf_Die *st, const char *name, uint32_t *off, Dwarf_Word size)
{
	Dwarf_Die t;
	Dwarf_Word sz;

	if (dw_member(st, name, off, &t) != 0)
		return -1;
	if (dwarf_aggregate_size(&t, &sz) == 0 && sz != size)
		return -1;
	return 0;
}

/* st.outer.inner, e.g. g.sched.sp. */
static int dw_nested(Dwarf_Die *st, const char *outer, const char *inner, uint32_t *off)
{
	Dwarf_Die t;
	uint32_t a, b;

	if (dw_member(st, outer, &a, &t) != 0 || dwarf_tag(&t) != DW_TAG_structure_type ||
	    dw_field(&t, inner, &b, 8) != 0)
		return -1;
	*off = a + b;
	return 0;
}

/* The 4-byte goroutine status: a uint32 up to go1.19, atomic.Uint32 {_ noCopy; value}
 * from go1.20. */
static int dw_status(Dwarf_Die *g, uint32_t *off)
{
	Dwarf_Die t;
	Dwarf_Word sz;
	uint32_t a, b;

	if (dw_member(g, "atomicstatus", &a, &t) != 0)
		return -1;
	if (dwarf_tag(&t) == DW_TAG_structure_type) {
		if (dw_field(&t, "value", &b, 4) != 0)
			return -1;
		*off = a + b;
		return 0;
	}
	if (dwarf_aggregate_size(&t, &sz) == 0 && sz != 4)
		return -1;
	*off = a;
	return 0;
}

/* Pointee of a pointer type (peeled). */
static int dw_deref(Dwarf_Die *ptr, Dwarf_Die *out)
{
	Dwarf_Attribute a;
	Dwarf_Die t;

	if (dwarf_tag(ptr) != DW_TAG_pointer_type ||
	    !dwarf_attr_integrate(ptr, DW_AT_type, &a) || !dwarf_formref_die(&a, &t))
		return -1;
	return dwarf_peel_type(&t, out) == 0 ? 0 : -1;
}

/* The map layout reached from labelMap (a typedef of *hash<string,string>, the linker's
 * synthesized hmap). */
static int dw_map_layout(Dwarf_Die *labelmap, struct gort_offsets *o)
{
	Dwarf_Die p, h, bp, b;
	uint32_t dummy;

	if (dwarf_peel_type(labelmap, &p) != 0 || dw_deref(&p, &h) != 0)
		return -1;
	if (dw_field(&h, "count", &o->hmap_count, 8) || dw_field(&h, "flags", &o->hmap_flags, 1) ||
	    dw_field(&h, "B", &o->hmap_b, 1) || dw_field(&h, "hash0", &o->hmap_hash0, 4) ||
	    dw_member(&h, "oldbuckets", &o->hmap_oldbuckets, NULL) ||
	    dw_member(&h, "buckets", &o->hmap_buckets, &bp) || dw_deref(&bp, &b))
		return -1;
	if (dw_member(&b, "tophash", &dummy, NULL) || dummy != 0 ||
	    dw_member(&b, "keys", &o->bucket_keys, NULL) ||
	    (dw_member(&b, "values", &o->bucket_values, NULL) &&
	     dw_member(&b, "elems", &o->bucket_values, NULL)) ||
	    dw_member(&b, "overflow", &o->bucket_overflow, NULL))
		return -1;
	{
		Dwarf_Word sz;

		if (dwarf_aggregate_size(&b, &sz) != 0 || sz > 4096)
			return -1;
		o->bucket_size = (uint32_t)sz;
	}
	return 0;
}

/* Fills o from DWARF (on top of the table's values). 0, or -1 when runtime.g/runtime.m
 * are missing or odd; o may then be half-filled. */
static int dw_offsets(Dwarf *dw, struct gort_offsets *o)
{
	Dwarf_Die die[DW_NFIND];
	bool have[DW_NFIND] = { false };
	Dwarf_Die *g = &die[DW_G], *m = &die[DW_M];

	dw_scan(dw, die, have);
	if (!have[DW_G] || !have[DW_M])
		return -1;
	if (dw_nested(g, "stack", "lo", &o->g_stack_lo) || dw_nested(g, "stack", "hi", &o->g_stack_hi) ||
	    dw_field(g, "m", &o->g_m, 8) || dw_nested(g, "sched", "sp", &o->g_sched_sp) ||
	    dw_nested(g, "sched", "pc", &o->g_sched_pc) || dw_nested(g, "sched", "bp", &o->g_sched_bp) ||
	    dw_status(g, &o->g_atomicstatus) || dw_field(g, "goid", &o->g_goid, 8) ||
	    dw_field(g, "labels", &o->g_labels, 8))
		return -1;
	if (dw_field(m, "g0", &o->m_g0, 8) || dw_field(m, "procid", &o->m_procid, 8) ||
	    dw_field(m, "gsignal", &o->m_gsignal, 8) || dw_field(m, "curg", &o->m_curg, 8))
		return -1;
	/* Optional: keep the table's value (or 0) when DWARF lacks them. */
	{
		uint32_t v;

		if (dw_field(m, "alllink", &v, 8) == 0)
			o->m_alllink = v;
		if (have[DW_MHEAP] && dw_field(&die[DW_MHEAP], "sweepgen", &v, 4) == 0)
			o->mheap_sweepgen = v;
	}
	if (have[DW_LABELMAP]) {
		Dwarf_Attribute a;
		Dwarf_Word kind = 0;

		dwarf_formudata(dwarf_attr(&die[DW_LABELMAP], DW_AT_GO_KIND, &a), &kind);
		if (kind == GO_KIND_MAP) {
			if (dw_map_layout(&die[DW_LABELMAP], o) != 0)
				return -1;
			o->labels_kind = GORT_LABELS_MAP;
		} else if (kind == GO_KIND_STRUCT) {
			o->labels_kind = GORT_LABELS_SLICE;
		}
	}
	return 0;
}

/* ---------------------------------------------------------------- the reader */

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
#define CHUNK_MAX 4096
#define CHUNK_GAP 512

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

struct batch_item;

/* A read served to one gort_read_batch (see pf_read): the bytes at pf_buf + off. */
struct pf_ent {
	uint64_t addr;
	uint32_t len, off;
	uint32_t gen;  /* the entry is empty unless gen == gort.pf_gen */
	int rc;
	uint8_t ready; /* 0: requested, not read yet */
	uint8_t early; /* read by the batch's first vectored read, before the sweep generation */
};
/* The table is sized to the batches (pf_begin): a table larger than its batches needs
 * spreads their few entries over cache lines that are cold at every drain (issue 6:
 * pf_slot was 8.6 % of gotop-perf's CPU on a Go target at 1 kHz with 4096 slots). It
 * doubles after a batch that filled half of it, up to PF_SLOTS; entries beyond half
 * of it are read on the spot. */
#define PF_SLOTS_MIN 256
#define PF_SLOTS 4096
#define PF_MAX_BYTES (4u << 20)
#define PF_ROUNDS 8
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
	 * cold at each drain; lc_find was 4.5 % of gotop-perf's CPU on a Go target at
	 * 1 kHz). */
	uint64_t *lc_tag;
	uint64_t lc_clock;

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

static bool ptr_ok(uint64_t p)
{
	return p >= 4096 && p < (1ULL << 56) && (p & 7) == 0;
}

static uint64_t ld64(const uint8_t *b, uint32_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static uint32_t ld32(const uint8_t *b, uint32_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint32_t max_u32(const uint32_t *v, size_t n)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < n; i++)
		m = GP_MAX(m, v[i]);
	return m;
}

/* Offsets read from a binary are untrusted too: all must fall inside structures of
 * plausible size, and bucket cells inside the bucket. */
/* Versions before 1.24 hold a map; a parsed version decides when DWARF had no labelMap
 * (runtime/pprof not linked in); the map layout is then the one of runtime/map.go. */
static void fill_labels_kind(struct gort_offsets *o, int minor)
{
	if (!o->labels_kind)
		o->labels_kind = minor > 0 && minor < 24 ? GORT_LABELS_MAP : GORT_LABELS_SLICE;
	if (o->labels_kind == GORT_LABELS_MAP && !o->bucket_size) {
		struct gort_offsets m = { MAP64 };

		o->hmap_count = m.hmap_count;
		o->hmap_flags = m.hmap_flags;
		o->hmap_b = m.hmap_b;
		o->hmap_hash0 = m.hmap_hash0;
		o->hmap_buckets = m.hmap_buckets;
		o->hmap_oldbuckets = m.hmap_oldbuckets;
		o->bucket_keys = m.bucket_keys;
		o->bucket_values = m.bucket_values;
		o->bucket_overflow = m.bucket_overflow;
		o->bucket_size = m.bucket_size;
	}
}

static bool offsets_sane(const struct gort_offsets *o)
{
	const uint32_t f[] = { o->g_stack_lo, o->g_stack_hi, o->g_m, o->g_sched_sp, o->g_sched_pc,
			       o->g_sched_bp, o->g_atomicstatus, o->g_goid, o->g_labels, o->m_g0,
			       o->m_procid, o->m_gsignal, o->m_curg, o->m_alllink };

	if (max_u32(f, GP_ARRAY_SIZE(f)) > 4096 || o->mheap_sweepgen > (1u << 20))
		return false;
	if (o->labels_kind == GORT_LABELS_MAP &&
	    (o->bucket_size > 4096 || o->bucket_keys < BUCKET_CNT ||
	     o->bucket_keys + 16 * BUCKET_CNT > o->bucket_size ||
	     o->bucket_values + 16 * BUCKET_CNT > o->bucket_size ||
	     o->bucket_overflow + 8 > o->bucket_size || o->hmap_count > 48 ||
	     o->hmap_flags > 48 || o->hmap_b > 48 || o->hmap_hash0 > 48 ||
	     o->hmap_buckets > 48 || o->hmap_oldbuckets > 48))
		return false;
	return true;
}

struct gort *gort_new(const char *go_version, Dwarf *dwarf, int arch)
{
	const struct table_row *row;
	struct gort_offsets o;
	const char *source;
	struct gort *g;
	int minor;

	if (arch != GORT_ARCH_AMD64 && arch != GORT_ARCH_ARM64) {
		errno = EINVAL;
		return NULL;
	}
	minor = util_go_minor(go_version);
	row = table_find(minor);
	memset(&o, 0, sizeof(o));
	if (row)
		o = row->o;
	source = NULL;
	if (dwarf && dw_offsets(dwarf, &o) == 0) {
		fill_labels_kind(&o, minor);
		if (offsets_sane(&o))
			source = "dwarf";
	}
	if (!source) {
		if (!row) {
			errno = ENOTSUP;
			return NULL;
		}
		source = row->source;
		o = row->o;
	}
	o.go_minor = minor > 0 ? minor : 0;

	g = xcalloc(1, sizeof(*g));
	g->off = o;
	g->source = source;
	g->arch = arch;
	{
		uint32_t gf[] = { o.g_stack_lo, o.g_stack_hi, o.g_m, o.g_sched_sp, o.g_sched_pc,
				  o.g_sched_bp, o.g_goid, o.g_labels };
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
	g->lc = xcalloc((size_t)LC_SETS * LC_WAYS, sizeof(*g->lc));
	g->lc_tag = xcalloc((size_t)LC_SETS * LC_WAYS, sizeof(*g->lc_tag));
	g->dp = xcalloc(MAP_COLLECT, sizeof(*g->dp));
	return g;
}

static void lc_drop(struct gort *g, struct lc_entry *e)
{
	g->lc_tag[e - g->lc] = 0;
	free(e->fp);
	free(e->heap);
	free(e->chunks);
	memset(e, 0, sizeof(*e));
}

void gort_reset(struct gort *g)
{
	size_t i;

	if (!g)
		return;
	memset(g->tids, 0, TID_SLOTS * sizeof(*g->tids));
	for (i = 0; i < (size_t)LC_SETS * LC_WAYS; i++)
		lc_drop(g, &g->lc[i]);
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
	out->batch_readvs = g->pf_calls;
}

static bool is_static(const struct gort *g, uint64_t addr, uint64_t len)
{
	int i;

	for (i = 0; i < g->nstatic; i++)
		if (addr >= g->statics[i][0] && addr + len <= g->statics[i][1] && addr + len >= addr)
			return true;
	return false;
}

/* ---------------------------------------------------------------- g and m */

struct gview {
	uint64_t addr, stack_lo, stack_hi, m, goid, labels;
	uint32_t status;
	bool early; /* read by gort_read_batch's first read, before its sweep generation */
	bool snap;  /* from the sample's snapshot (gort_sample.snap): as of the sample */
};

struct batch_item {
	struct gview cur;
	int rc, flags;
};

struct mview {
	uint64_t addr, g0, procid, gsignal, curg;
};

/* The g at addr from the current sample's snapshot, when it holds that g. */
static bool snap_g(const struct gort *gr, uint64_t addr, struct gview *v)
{
	const struct gobpf_rec *r = gr->snap;
	const __u64 *f;

	if (!r)
		return false;
	if ((r->flags & GOBPF_REC_G) && addr == r->greg)
		f = r->g;
	else if ((r->flags & GOBPF_REC_CURG) && addr == r->m[GOBPF_M_CURG])
		f = r->curg;
	else
		return false;
	v->addr = addr;
	v->stack_lo = f[GOBPF_G_STACK_LO];
	v->stack_hi = f[GOBPF_G_STACK_HI];
	v->m = f[GOBPF_G_M];
	v->goid = f[GOBPF_G_GOID];
	v->labels = f[GOBPF_G_LABELS];
	v->status = (uint32_t)f[GOBPF_G_STATUS];
	v->early = false; /* older than any read of this batch: no sweep-generation proof */
	v->snap = true;
	return true;
}

static int read_g(struct gort *gr, const struct gp_mem *mem, uint64_t addr, struct gview *v)
{
	const struct gort_offsets *o = &gr->off;
	int rc;

	if (!ptr_ok(addr))
		return -EFAULT;
	if (snap_g(gr, addr, v))
		return 0;
	v->snap = false;
	gr->pf_last_early = false;
	rc = mem_read(mem, addr, gr->gbuf, gr->gsz);
	if (rc)
		return rc;
	v->early = gr->pf_last_early;
	v->addr = addr;
	v->stack_lo = ld64(gr->gbuf, o->g_stack_lo);
	v->stack_hi = ld64(gr->gbuf, o->g_stack_hi);
	v->m = ld64(gr->gbuf, o->g_m);
	v->goid = ld64(gr->gbuf, o->g_goid);
	v->labels = ld64(gr->gbuf, o->g_labels);
	v->status = ld32(gr->gbuf, o->g_atomicstatus);
	return 0;
}

static int read_m(struct gort *gr, const struct gp_mem *mem, uint64_t addr, struct mview *v)
{
	const struct gort_offsets *o = &gr->off;
	const struct gobpf_rec *r = gr->snap;
	int rc;

	if (!ptr_ok(addr))
		return -EFAULT;
	if (r && (r->flags & GOBPF_REC_M) && addr == r->maddr) {
		v->addr = addr;
		v->g0 = r->m[GOBPF_M_G0];
		v->procid = r->m[GOBPF_M_PROCID];
		v->gsignal = r->m[GOBPF_M_GSIGNAL];
		v->curg = r->m[GOBPF_M_CURG];
		return 0;
	}
	rc = mem_read(mem, addr, gr->mbuf, gr->msz);
	if (rc)
		return rc;
	v->addr = addr;
	v->g0 = ld64(gr->mbuf, o->m_g0);
	v->procid = ld64(gr->mbuf, o->m_procid);
	v->gsignal = ld64(gr->mbuf, o->m_gsignal);
	v->curg = ld64(gr->mbuf, o->m_curg);
	return 0;
}

/* The thread's slot, or (not known) the first slot of its set: callers check s->tid.
 * TID_WAYS slots per set, so threads whose tids hash alike all stay known: direct-mapped,
 * a dozen threads collided in about 1 process of 60 (goruntime-live found one whose m
 * was then never found). */
static struct tid_slot *tid_slot(struct gort *g, uint32_t tid)
{
	struct tid_slot *set = &g->tids[util_mix64(tid) & (TID_SLOTS - TID_WAYS)];
	int w;

	for (w = 0; w < TID_WAYS; w++)
		if (set[w].tid == tid)
			return &set[w];
	return set;
}

static void tid_remember(struct gort *g, uint32_t tid, uint64_t m, uint64_t g0, uint64_t gsignal)
{
	struct tid_slot *s = tid_slot(g, tid);

	if (s->tid != tid) {
		/* New: an empty way of the set, else one in turn (a full set means
		 * hundreds of threads; the evicted one is found through allm again). */
		int w;

		for (w = 0; w < TID_WAYS && s[w].tid; w++)
			;
		s += w < TID_WAYS ? w : (int)(g->tid_evict++ % TID_WAYS);
	}
	if (s->tid == tid && s->m == m && (!g0 || (s->g0 == g0 && s->gsignal == gsignal))) {
		if (!s->g0) { /* allm told only the m: keep what an m read adds */
			s->g0 = g0;
			s->gsignal = gsignal;
		}
		return;
	}
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->m = m;
	s->g0 = g0;
	s->gsignal = gsignal;
}

/* Statuses of a goroutine that exists: its g cannot have been reused (runtime/proc.go
 * gfput takes only _Gdead goroutines). runtime/runtime2.go: _Grunnable 1, _Grunning 2,
 * _Gsyscall 3, _Gwaiting 4, _Gpreempted 9. */
static bool status_alive(uint32_t st)
{
	st &= ~(uint32_t)G_SCAN;
	return (st >= 1 && st <= 4) || st == 9;
}

static bool status_live(uint32_t st)
{
	st &= ~(uint32_t)G_SCAN;
	return st == G_RUNNING || st == G_SYSCALL;
}

/* A goroutine that left the thread between the sample and the read is still the one
 * sampled when it is alive and its stack holds the sampled SP: a live g is not reused
 * (runtime/proc.go gfput takes only _Gdead ones) and a stack moved since (copystack) no
 * longer holds SP. The rest rejects memory that only looks like a g (a register
 * pointing into the stack makes stack words pass for bounds): g is heap memory, never
 * inside its own stack; stacks are powers of two from 2 KiB (runtime/stack.go
 * stackalloc); g0 and gsignal have goid 0. */
static bool left_thread(const struct gview *gv, uint64_t greg, uint64_t sp)
{
	uint64_t n = gv->stack_hi - gv->stack_lo;

	return gv->goid && gv->goid < (1ULL << 48) && status_alive(gv->status) &&
	       gv->stack_hi > gv->stack_lo && !(gv->stack_lo & 7) && n >= 2048 && n <= (1ULL << 30) &&
	       !(n & (n - 1)) && sp >= gv->stack_lo && sp < gv->stack_hi &&
	       !(greg >= gv->stack_lo && greg < gv->stack_hi);
}

/* Errors that mean "this candidate is garbage", not "the target is gone". */
static bool soft_error(int rc)
{
	return rc == -EFAULT || rc == -EIO || rc == -EINVAL;
}

/* Whether sp is on the stack of the thread's g0 (which 0) or gsignal (1), whose address
 * is sysg: 1 yes, 0 no (or unreadable), or a hard error. A register naming g0 or gsignal,
 * or a goroutine with SP off its own stack, is only believed with SP on that stack:
 * garbage in the register proves nothing. The bounds are read once per thread. */
static int on_sys_stack(struct gort *gr, const struct gp_mem *mem, uint32_t tid, int which,
			uint64_t sysg, uint64_t sp)
{
	struct tid_slot *s = tid_slot(gr, tid);
	bool mine = s->tid == tid && (which ? s->gsignal : s->g0) == sysg;
	struct gview v;
	int rc;

	if (!sp)
		return 1; /* nothing to check against (a caller without SP) */
	if (!mine || !s->sys_hi[which]) {
		rc = read_g(gr, mem, sysg, &v);
		if (rc)
			return soft_error(rc) ? 0 : rc;
		if (mine && v.stack_hi > v.stack_lo) {
			s->sys_lo[which] = v.stack_lo;
			s->sys_hi[which] = v.stack_hi;
		}
		return sp >= v.stack_lo && sp < v.stack_hi;
	}
	return sp >= s->sys_lo[which] && sp < s->sys_hi[which];
}

/* m's current goroutine into *cur. 0, -ENOENT (*flags may get GORT_NO_G), or a hard error. */
static int curg_of(struct gort *gr, const struct gp_mem *mem, const struct mview *m,
		   struct gview *cur, int *flags)
{
	int rc;

	if (!m->curg) {
		*flags |= GORT_NO_G;
		return -ENOENT;
	}
	rc = read_g(gr, mem, m->curg, cur);
	if (rc)
		return soft_error(rc) ? -ENOENT : rc;
	if (cur->m != m->addr || !status_live(cur->status))
		return -ENOENT;
	return 0;
}

/* The register path. 0 found, -ENOENT no goroutine, 1 the register is not a g of this
 * thread (try the m cache), another negative: hard error. *fault set when greg pointed
 * at unreadable memory. */
static int via_register(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
			uint64_t sp, struct gview *cur, int *flags, bool *fault)
{
	const struct tid_slot *s = tid_slot(gr, tid);
	struct gview gv;
	struct mview mv;
	int rc;

	if (!ptr_ok(greg))
		return 1;
	/* System stack of a known thread, one read: g0 and gsignal belong to one m for
	 * good, so the register needs no read of its own; the m gives the goroutine. */
	if (s->tid == tid && s->g0 && (greg == s->g0 || greg == s->gsignal)) {
		rc = read_m(gr, mem, s->m, &mv);
		if (rc && !soft_error(rc))
			return rc;
		if (rc == 0 && mv.procid == tid && mv.g0 == s->g0 && mv.gsignal == s->gsignal) {
			rc = on_sys_stack(gr, mem, tid, greg == s->gsignal, greg, sp);
			if (rc < 0)
				return rc;
			if (!rc)
				return 1; /* not on it: the register is garbage; try the m */
			*flags |= GORT_SYSTEM_STACK;
			gr->st.system_stack++;
			gr->st.fast_path++;
			return curg_of(gr, mem, &mv, cur, flags);
		}
	}
	rc = read_g(gr, mem, greg, &gv);
	if (rc) {
		if (!soft_error(rc))
			return rc;
		*fault = true;
		return 1;
	}
	/* Fast path, one read: the thread's m is known, and g says it runs on that m with
	 * SP inside its stack. A stack is run by one thread at a time, and g.m is set and
	 * cleared together with m.curg (runtime/proc.go execute, dropg), so g is the
	 * thread's goroutine. A stale register fails the test (g.m or the stack differ);
	 * for an m lent to another thread (cgo extra m) the stack differs. */
	if (s->tid == tid && s->m && s->g0 && gv.m == s->m && greg != s->g0 &&
	    greg != s->gsignal && sp >= gv.stack_lo && sp < gv.stack_hi && status_live(gv.status)) {
		*cur = gv;
		gr->st.fast_path++;
		return 0;
	}
	/* The goroutine parked between the sample and this read (g.m is nil): still the
	 * goroutine that was sampled if it is alive and its stack holds the sampled SP
	 * (see left_thread). */
	if (gv.m == 0 && left_thread(&gv, greg, sp)) {
		uint32_t st = gv.status & ~(uint32_t)G_SCAN;

		if (st == 1 || st == 4 || st == 9) {
			*cur = gv;
			*flags |= GORT_LEFT;
			gr->st.left++;
			return 0;
		}
	}
	rc = read_m(gr, mem, gv.m, &mv);
	if (rc)
		return soft_error(rc) ? 1 : rc;
	if (mv.procid != tid) {
		/* A real g of another thread: the goroutine moved on since the sample (the
		 * registers are older than this read). Falling back to this thread's current
		 * goroutine could name one that did not run then. */
		if (mv.procid && greg == mv.curg && status_live(gv.status) && left_thread(&gv, greg, sp)) {
			/* It runs on that thread now, and ran on this one when sampled. */
			*cur = gv;
			*flags |= GORT_LEFT;
			gr->st.left++;
			return 0;
		}
		if (mv.procid && (greg == mv.curg || greg == mv.g0 || greg == mv.gsignal))
			return -ENOENT;
		return 1;
	}
	/* m.procid == tid proves this m belongs to the thread (the m is fixed for the
	 * thread's life), whatever else the register turns out to be. */
	tid_remember(gr, tid, mv.addr, mv.g0, mv.gsignal);
	if (greg == mv.curg) {
		*cur = gv;
		if (!status_live(gv.status))
			return -ENOENT;
		/* Off its stack, the goroutine is believed only on the m's g0 stack (vDSO
		 * calls, C code of cgo calls keeping R14, see below); elsewhere the register
		 * is stale or garbage that happens to name the thread's goroutine now. */
		if (sp && (sp < cur->stack_lo || sp >= cur->stack_hi)) {
			rc = on_sys_stack(gr, mem, tid, 0, mv.g0, sp);
			if (rc <= 0)
				return rc < 0 ? rc : 1;
		}
	} else if (greg == mv.g0 || greg == mv.gsignal) {
		rc = on_sys_stack(gr, mem, tid, greg == mv.gsignal, greg, sp);
		if (rc < 0)
			return rc;
		if (!rc)
			return 1;
		*flags |= GORT_SYSTEM_STACK;
		gr->st.system_stack++;
		rc = curg_of(gr, mem, &mv, cur, flags);
		if (rc)
			return rc;
		return 0;
	} else {
		return 1;
	}
	/* On a user g, SP may legitimately be on g0's stack: vDSO calls run there without
	 * switching g (runtime/sys_linux_amd64.s nanotime1), C code of cgo calls may keep
	 * the old R14 (checked above). */
	if (sp && (sp < cur->stack_lo || sp >= cur->stack_hi))
		*flags |= GORT_OFF_STACK;
	return 0;
}

/* Rebuilds tid -> m from runtime.allm (linked by m.alllink). */
static void walk_allm(struct gort *gr, const struct gp_mem *mem)
{
	uint64_t m, now = util_now_ns();
	int i;

	if (!gr->allm || !gr->off.m_alllink)
		return;
	if (gr->last_allm_walk && now - gr->last_allm_walk < ALLM_INTERVAL_NS)
		return;
	gr->last_allm_walk = now;
	gr->st.allm_walks++;
	if (mem_read_u64(mem, gr->allm, &m))
		return;
	for (i = 0; i < ALLM_MAX && ptr_ok(m); i++) {
		uint64_t procid, next;

		if (mem_read_u64(mem, m + gr->off.m_procid, &procid) ||
		    mem_read_u64(mem, m + gr->off.m_alllink, &next))
			return;
		if (procid && procid < (1ULL << 32))
			tid_remember(gr, (uint32_t)procid, m, 0, 0);
		m = next;
	}
}

/* The m cache path: 0, -ENOENT, 1 (thread unknown), or a hard error. */
static int via_m(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t sp,
		 struct gview *cur, int *flags)
{
	struct tid_slot *s = tid_slot(gr, tid);
	struct mview mv;
	int rc;

	if (s->tid != tid || !s->m)
		return 1;
	rc = read_m(gr, mem, s->m, &mv);
	if (rc && !soft_error(rc))
		return rc;
	if (rc || mv.procid != tid) {
		/* The thread exited and its tid was reused, or an extra m moved on. */
		memset(s, 0, sizeof(*s));
		return 1;
	}
	tid_remember(gr, tid, mv.addr, mv.g0, mv.gsignal); /* m.procid proved it */
	*flags |= GORT_VIA_M;
	rc = curg_of(gr, mem, &mv, cur, flags);
	if (rc || !sp || (sp >= cur->stack_lo && sp < cur->stack_hi))
		return rc;
	/* The register told nothing, so SP must: on curg's stack (assembly that uses R14
	 * as scratch), or on the m's system stacks (C code of a cgo call runs on g0's,
	 * runtime/asm_amd64.s asmcgocall; signal handlers on gsignal's). Anything else may
	 * be a goroutine that ran at sample time and is gone now: no answer. */
	{
		int i;

		for (i = 0; i < 2; i++) {
			rc = on_sys_stack(gr, mem, tid, i, i ? mv.gsignal : mv.g0, sp);
			if (rc < 0)
				return rc;
			if (rc) {
				*flags |= GORT_SYSTEM_STACK;
				gr->st.system_stack++;
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* ---------------------------------------------------------------- label decoding */

static void buf_reserve(struct gort *g, size_t more)
{
	xgrow((void **)&g->buf, &g->bufcap, g->buflen + more, 1);
}

/* The slot of static string (addr, len): the entry holding it, or the empty slot where
 * it goes. */
static struct sstr *sstr_slot(struct gort *g, uint64_t addr, uint32_t len)
{
	size_t j;

	if (!g->ss)
		g->ss = xcalloc(SS_SLOTS, sizeof(*g->ss));
	for (j = util_mix64(addr ^ ((uint64_t)len << 48)) & (SS_SLOTS - 1); g->ss[j].len;
	     j = (j + 1) & (SS_SLOTS - 1))
		if (g->ss[j].addr == addr && g->ss[j].len == len)
			break;
	return &g->ss[j];
}

/* Reads keep bytes of string ptr into buf. Strings inside a static range (the binary's
 * read-only image: Go's string literals, such as the keys and values passed to
 * pprof.Labels) cannot change while the target lives: they are read once and kept. */
static int str_bytes(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint32_t keep,
		     char *buf)
{
	struct sstr *e;
	bool missed;
	int rc;

	if (!is_static(g, ptr, keep))
		return mem_read(mem, ptr, buf, keep);
	e = sstr_slot(g, ptr, keep);
	if (e->len) {
		memcpy(buf, g->ss_buf + e->off, keep);
		return 0;
	}
	missed = g->pf_missed;
	g->pf_missed = false;
	rc = mem_read(mem, ptr, buf, keep);
	/* Only bytes really read are kept (not a batch's placeholder, see pf_read). */
	if (rc == 0 && !g->pf_missed && g->ss_n < SS_MAX && g->ss_len + keep <= SS_MAX_BYTES) {
		xgrow((void **)&g->ss_buf, &g->ss_bufcap, g->ss_len + keep, 1);
		memcpy(g->ss_buf + g->ss_len, buf, keep);
		e->addr = ptr;
		e->len = keep;
		e->off = (uint32_t)g->ss_len;
		g->ss_len += keep;
		g->ss_n++;
	}
	g->pf_missed |= missed;
	return rc;
}

/* Reads a Go string {ptr, len} into the scratch buffer, keeping at most
 * GORT_MAX_STRLEN bytes and marking a cut. 0 or -1 (garbage). */
static int read_str(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint64_t len,
		    struct dstr *s)
{
	uint32_t keep;

	if (len >= STRLEN_GARBAGE || (len && (ptr < 4096 || ptr >= (1ULL << 56))))
		return -1;
	keep = (uint32_t)GP_MIN(len, (uint64_t)GORT_MAX_STRLEN);
	buf_reserve(g, keep + sizeof(GORT_TRUNC_MARK));
	if (keep && str_bytes(g, mem, ptr, keep, g->buf + g->buflen))
		return -1;
	s->addr = ptr;
	s->len = len;
	s->off = (uint32_t)g->buflen;
	s->keep = keep;
	s->cut = keep < len;
	g->buflen += keep;
	if (s->cut) {
		memcpy(g->buf + g->buflen, GORT_TRUNC_MARK, sizeof(GORT_TRUNC_MARK) - 1);
		g->buflen += sizeof(GORT_TRUNC_MARK) - 1;
		g->dtrunc |= GORT_TRUNC_STRING;
	}
	return 0;
}

static size_t dstr_len(const struct dstr *s)
{
	return s->keep + (s->cut ? sizeof(GORT_TRUNC_MARK) - 1 : 0);
}

static int cmp_dstr(const struct gort *g, const struct dstr *a, const struct dstr *b)
{
	size_t la = dstr_len(a), lb = dstr_len(b);
	int c = memcmp(g->buf + a->off, g->buf + b->off, GP_MIN(la, lb));

	if (c)
		return c;
	if (la != lb)
		return la < lb ? -1 : 1;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int cmp_pair(const struct gort *g, const struct dpair *a, const struct dpair *b)
{
	int c = cmp_dstr(g, &a->k, &b->k);

	return c ? c : cmp_dstr(g, &a->v, &b->v);
}

/* Sorts the drafted pairs by key (then value): a canonical order for interning. Map
 * iteration order is random; slices are already sorted (Labels, mergeLabelSets), so
 * insertion sort is linear there, and at most MAP_COLLECT pairs are ever sorted. */
static void draft_sort(struct gort *g)
{
	uint32_t i, j;

	for (i = 1; i < g->dn; i++) {
		struct dpair t = g->dp[i];

		for (j = i; j > 0 && cmp_pair(g, &g->dp[j - 1], &t) > 0; j--)
			g->dp[j] = g->dp[j - 1];
		g->dp[j] = t;
	}
}

static void draft_reset(struct gort *g)
{
	g->dn = 0;
	g->dtrunc = 0;
	g->buflen = 0;
}

/* Adds the pair of the string headers at kh (key) and vh (value): {ptr, len} each. */
static int draft_add(struct gort *g, const struct gp_mem *mem, const uint8_t *kh, const uint8_t *vh)
{
	struct dpair *p;

	if (g->dn >= MAP_COLLECT) {
		g->dtrunc |= GORT_TRUNC_PAIRS;
		return 0;
	}
	p = &g->dp[g->dn];
	if (read_str(g, mem, ld64(kh, 0), ld64(kh, 8), &p->k) ||
	    read_str(g, mem, ld64(vh, 0), ld64(vh, 8), &p->v))
		return -1;
	g->dn++;
	return 0;
}

/* Collects the live cells of one bucket array of 2^lg buckets (with overflow chains). */
static int map_walk_array(struct gort *g, const struct gp_mem *mem, uint64_t arr, unsigned lg,
			  uint32_t *visited)
{
	const struct gort_offsets *o = &g->off;
	uint64_t nb = 1ULL << lg, i;

	if (!ptr_ok(arr))
		return -1;
	for (i = 0; i < nb; i++) {
		uint64_t b = arr + i * o->bucket_size;
		int chain;

		for (chain = 0; b; chain++) {
			int c;

			if (chain > MAP_MAX_CHAIN || ++*visited > MAP_MAX_BUCKETS || !ptr_ok(b) ||
			    mem_read(mem, b, g->bucket, o->bucket_size))
				return -1;
			for (c = 0; c < BUCKET_CNT; c++) {
				if (g->bucket[c] < TOPHASH_MIN)
					continue;
				if (draft_add(g, mem, g->bucket + o->bucket_keys + 16 * c,
					      g->bucket + o->bucket_values + 16 * c))
					return -1;
			}
			b = ld64(g->bucket, o->bucket_overflow);
		}
	}
	return 0;
}

/* The map fingerprint: what identifies one immutable label map. hash0 is random per
 * map (makemap: h.hash0 = fastrand()). The iterator flag bits change when someone
 * ranges over the map (WithLabels copies the parent's map) and are left out. */
struct map_fp {
	uint64_t hmap, count, buckets, oldbuckets;
	uint32_t hash0;
	uint8_t b, grow;
	uint8_t pad[2];
};

uint32_t gort_hmap_read_size(const struct gort_offsets *o)
{
	const uint32_t f[] = { o->hmap_count, o->hmap_flags, o->hmap_b, o->hmap_hash0,
			       o->hmap_buckets, o->hmap_oldbuckets };

	return max_u32(f, GP_ARRAY_SIZE(f)) + 8;
}

static int map_fingerprint(struct gort *g, const struct gp_mem *mem, uint64_t cell,
			   struct map_fp *fp)
{
	const struct gort_offsets *o = &g->off;
	uint32_t hsz = g->hsz;
	uint8_t h[64];
	int rc;

	memset(fp, 0, sizeof(*fp));
	if (hsz > sizeof(h))
		return -EINVAL;
	rc = mem_read_u64(mem, cell, &fp->hmap);
	if (rc)
		return rc;
	if (!fp->hmap)
		return 0; /* a nil labelMap */
	if (!ptr_ok(fp->hmap))
		return -EFAULT;
	rc = mem_read(mem, fp->hmap, h, hsz);
	if (rc)
		return rc;
	fp->count = ld64(h, o->hmap_count);
	fp->b = h[o->hmap_b];
	fp->grow = h[o->hmap_flags] & HMAP_SAME_SIZE_GROW;
	fp->hash0 = ld32(h, o->hmap_hash0);
	fp->buckets = ld64(h, o->hmap_buckets);
	fp->oldbuckets = ld64(h, o->hmap_oldbuckets);
	return 0;
}

static int decode_map(struct gort *g, const struct gp_mem *mem, const struct map_fp *fp)
{
	uint32_t visited = 0;

	if (!fp->hmap || fp->count == 0)
		return 0;
	if (fp->b > MAP_MAX_B || fp->count > (uint64_t)MAP_MAX_BUCKETS * BUCKET_CNT ||
	    (fp->b == 0 && fp->oldbuckets && !fp->grow))
		return -1;
	if (map_walk_array(g, mem, fp->buckets, fp->b, &visited))
		return -1;
	/* During growth the old array holds the cells not yet evacuated; evacuated ones
	 * have tophash 2-4 and are skipped, so nothing is counted twice. */
	if (fp->oldbuckets &&
	    map_walk_array(g, mem, fp->oldbuckets, fp->grow ? fp->b : fp->b - 1u, &visited))
		return -1;
	if (g->dn != fp->count && !(g->dtrunc & GORT_TRUNC_PAIRS))
		return -1; /* torn or garbage */
	return 0;
}

/* The slice fingerprint is the labelMap header {data, len, cap} and the pair array. */
static int decode_slice(struct gort *g, const struct gp_mem *mem, const uint8_t *hdr,
			const uint8_t *arr, uint32_t n, uint64_t len)
{
	uint32_t i;

	(void)hdr;
	for (i = 0; i < n; i++)
		if (draft_add(g, mem, arr + 32 * i, arr + 32 * i + 16))
			return -1;
	if (len > n)
		g->dtrunc |= GORT_TRUNC_PAIRS;
	return 0;
}

/* ---------------------------------------------------------------- interning */

static uint64_t draft_hash(const struct gort *g, uint32_t n)
{
	uint64_t h = util_mix64(n ^ ((uint64_t)g->dtrunc << 32));
	uint32_t i;

	for (i = 0; i < n; i++) {
		h = util_hash(g->buf + g->dp[i].k.off, dstr_len(&g->dp[i].k), h);
		h = util_hash(g->buf + g->dp[i].v.off, dstr_len(&g->dp[i].v), h ^ 0x9e3779b97f4a7c15ULL);
	}
	return h;
}

static bool iset_equal(const struct gort *g, const struct iset *s, uint32_t n)
{
	uint32_t i;

	if (s->l.n != n || s->l.truncated != g->dtrunc)
		return false;
	for (i = 0; i < n; i++) {
		const struct dpair *p = &g->dp[i];
		const struct gort_label *q = &s->l.pairs[i];

		if (q->klen != dstr_len(&p->k) || q->vlen != dstr_len(&p->v) ||
		    memcmp(q->key, g->buf + p->k.off, q->klen) ||
		    memcmp(q->value, g->buf + p->v.off, q->vlen))
			return false;
	}
	return true;
}

static void iset_grow(struct gort *g)
{
	size_t ncap = g->iset_cap ? g->iset_cap * 2 : 256, i;
	struct iset **n = xcalloc(ncap, sizeof(*n));

	for (i = 0; i < g->iset_cap; i++) {
		struct iset *s = g->iset[i];
		size_t j;

		if (!s)
			continue;
		for (j = s->hash & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
			;
		n[j] = s;
	}
	free(g->iset);
	g->iset = n;
	g->iset_cap = ncap;
}

/* The interned set equal to the draft (first n pairs). NULL when the table is full. */
static const struct gort_labels *intern(struct gort *g, uint32_t n)
{
	uint64_t h = draft_hash(g, n);
	size_t j, size, bytes = 0;
	struct iset *s;
	char *p;
	uint32_t i;

	if (g->iset_cap) {
		for (j = h & (g->iset_cap - 1); g->iset[j]; j = (j + 1) & (g->iset_cap - 1))
			if (g->iset[j]->hash == h && iset_equal(g, g->iset[j], n))
				return &g->iset[j]->l;
	}
	for (i = 0; i < n; i++)
		bytes += dstr_len(&g->dp[i].k) + dstr_len(&g->dp[i].v) + 2;
	size = sizeof(*s) + n * sizeof(s->pairs[0]) + bytes;
	if (g->iset_n >= INTERN_MAX_SETS || g->iset_bytes + size > INTERN_MAX_BYTES)
		return NULL;
	if ((g->iset_n + 1) * 2 > g->iset_cap)
		iset_grow(g);
	s = xmalloc(size);
	s->hash = h;
	s->size = size;
	s->l.n = n;
	s->l.truncated = g->dtrunc;
	s->l.pairs = s->pairs;
	p = (char *)&s->pairs[n];
	for (i = 0; i < n; i++) {
		const struct dpair *d = &g->dp[i];
		struct gort_label *q = &s->pairs[i];

		q->klen = (uint32_t)dstr_len(&d->k);
		memcpy(p, g->buf + d->k.off, q->klen);
		p[q->klen] = '\0';
		q->key = p;
		p += q->klen + 1;
		q->vlen = (uint32_t)dstr_len(&d->v);
		memcpy(p, g->buf + d->v.off, q->vlen);
		p[q->vlen] = '\0';
		q->value = p;
		p += q->vlen + 1;
	}
	for (j = h & (g->iset_cap - 1); g->iset[j]; j = (j + 1) & (g->iset_cap - 1))
		;
	g->iset[j] = s;
	g->iset_n++;
	g->iset_bytes += size;
	return &s->l;
}

/* ---------------------------------------------------------------- label cache */

static const uint8_t *snap_piece(const struct gort *g, uint64_t addr, size_t len);
static inline const uint8_t *snap_piece_at(const struct gort *g, uint32_t hint, uint64_t addr,
					   size_t len);

static struct lc_entry *lc_find(struct gort *g, uint64_t ptr)
{
	size_t base = (util_mix64(ptr) & (LC_SETS - 1)) * LC_WAYS;
	const uint64_t *tag = &g->lc_tag[base];
	int i;

	for (i = 0; i < LC_WAYS; i++)
		if (tag[i] == ptr)
			return &g->lc[base + i];
	return NULL;
}

static struct lc_entry *lc_victim(struct gort *g, uint64_t ptr)
{
	size_t base = (util_mix64(ptr) & (LC_SETS - 1)) * LC_WAYS;
	struct lc_entry *set = &g->lc[base], *v = &set[0];
	int i;

	for (i = 0; i < LC_WAYS; i++) {
		if (!g->lc_tag[base + i])
			return &set[i];
		if (set[i].used < v->used)
			v = &set[i];
	}
	lc_drop(g, v);
	return v;
}

/* Heap strings of the entry's set still hold the bytes we decoded? Those the BPF
 * program copied at the sample are compared with the copy, without a read. */
static int heap_strings_same(const struct gort *g, const struct gp_mem *mem,
			     const struct lc_entry *e)
{
	char tmp[CHUNK_MAX];
	const uint8_t *p;
	uint32_t c, i = 0;
	int rc;

	for (i = 0; i < e->nheap && (p = snap_piece(g, e->heap[i].addr, e->heap[i].len)); i++)
		if (memcmp(p, e->heap[i].bytes, e->heap[i].len))
			return 1;
	if (i == e->nheap)
		return 0;
	i = 0;
	for (c = 0; c < e->nchunk; c++) {
		rc = mem_read(mem, e->chunks[c].addr, tmp, e->chunks[c].len);
		if (rc)
			return rc;
		for (; i < e->nheap && e->heap[i].chunk == c; i++)
			if (memcmp(tmp + (e->heap[i].addr - e->chunks[c].addr), e->heap[i].bytes,
				   e->heap[i].len))
				return 1;
	}
	return 0;
}

/* Sorts the entry's heap strings by address and groups neighbours into chunks. */
static void heap_chunks(struct lc_entry *e)
{
	uint32_t i, j;

	for (i = 1; i < e->nheap; i++) {
		struct heap_str t = e->heap[i];

		for (j = i; j > 0 && e->heap[j - 1].addr > t.addr; j--)
			e->heap[j] = e->heap[j - 1];
		e->heap[j] = t;
	}
	e->chunks = xcalloc(e->nheap ? e->nheap : 1, sizeof(*e->chunks));
	for (i = 0; i < e->nheap; i++) {
		struct heap_str *h = &e->heap[i];
		struct chunk *c = e->nchunk ? &e->chunks[e->nchunk - 1] : NULL;

		if (c && h->addr <= c->addr + c->len + CHUNK_GAP &&
		    h->addr + h->len - c->addr <= CHUNK_MAX) {
			c->len = (uint32_t)GP_MAX(c->len, h->addr + h->len - c->addr);
		} else {
			c = &e->chunks[e->nchunk++];
			c->addr = h->addr;
			c->len = h->len;
		}
		h->chunk = e->nchunk - 1;
	}
}

/* Reads the current fingerprint bytes of labels object ptr into fp (up to cap bytes);
 * *fplen gets their length. For slices also returns the header fields. */
static int read_fingerprint(struct gort *g, const struct gp_mem *mem, uint64_t ptr, uint8_t *fp,
			    uint32_t *fplen, uint64_t *data, uint64_t *len, uint32_t *n)
{
	int rc;

	if (g->off.labels_kind == GORT_LABELS_MAP) {
		struct map_fp m;

		rc = map_fingerprint(g, mem, ptr, &m);
		if (rc)
			return rc;
		memcpy(fp, &m, sizeof(m));
		*fplen = sizeof(m);
		return 0;
	}
	/* labelMap{Set{List}}: the list header is at offset 0 (see the top comment). */
	rc = mem_read(mem, ptr, fp, 24);
	if (rc)
		return rc;
	*data = ld64(fp, 0);
	*len = ld64(fp, 8);
	if (*len > ld64(fp, 16) || *len >= STRLEN_GARBAGE)
		return -EINVAL;
	*n = (uint32_t)GP_MIN(*len, (uint64_t)GORT_MAX_LABELS);
	*fplen = 24 + 32 * *n;
	if (*n) {
		if (!ptr_ok(*data))
			return -EFAULT;
		rc = mem_read(mem, *data, fp + 24, 32 * *n);
		if (rc)
			return rc;
	}
	return 0;
}

/* Decodes labels object ptr into an interned set, and a cache entry. */
static int labels_decode(struct gort *g, const struct gp_mem *mem, uint64_t ptr, bool epoch,
			 uint32_t sweepgen, const struct gort_labels **out, int *flags)
{
	uint8_t fp[24 + 32 * GORT_MAX_LABELS];
	uint32_t fplen = 0, n = 0, i, nkeep;
	uint64_t data = 0, len = 0;
	struct lc_entry *e;
	const struct gort_labels *set = NULL;
	int rc;

	g->st.label_decodes++;
	draft_reset(g);
	rc = read_fingerprint(g, mem, ptr, fp, &fplen, &data, &len, &n);
	if (rc == 0) {
		if (g->off.labels_kind == GORT_LABELS_MAP) {
			struct map_fp m;

			memcpy(&m, fp, sizeof(m));
			rc = decode_map(g, mem, &m) ? -EINVAL : 0;
		} else {
			rc = decode_slice(g, mem, fp, fp + 24, n, len) ? -EINVAL : 0;
		}
	}
	if (g->pf_missed) {
		/* A batch's dry run (pf_read): the bytes were placeholders, the answer is
		 * thrown away; keep nothing of it. */
		*out = NULL;
		return 0;
	}
	if (rc) {
		g->st.label_bad++;
		*flags |= GORT_LABELS_BAD;
		return soft_error(rc) ? 0 : rc;
	}
	draft_sort(g);
	nkeep = g->dn;
	if (nkeep > GORT_MAX_LABELS) {
		nkeep = GORT_MAX_LABELS;
		g->dtrunc |= GORT_TRUNC_PAIRS;
	}
	/* Only the kept pairs decide the string mark (a map reads more cells than it keeps). */
	g->dtrunc &= (uint8_t)~GORT_TRUNC_STRING;
	for (i = 0; i < nkeep; i++)
		if (g->dp[i].k.cut || g->dp[i].v.cut)
			g->dtrunc |= GORT_TRUNC_STRING;
	if (nkeep) {
		set = intern(g, nkeep);
		if (!set) {
			*flags |= GORT_LABELS_DROPPED;
			*out = NULL;
			return 0;
		}
	}
	*out = set;

	e = lc_victim(g, ptr);
	g->lc_tag[e - g->lc] = ptr;
	e->used = ++g->lc_clock;
	e->set = set;
	e->epoch_ok = epoch;
	e->sweepgen = sweepgen;
	e->checked_gen = g->pf_mode != PF_OFF ? g->pf_gen : 0;
	e->fplen = fplen;
	e->fp = xmalloc(fplen);
	memcpy(e->fp, fp, fplen);
	/* A slice's strings are not covered by its fingerprint: heap strings may be freed
	 * and reused at the same address. A map's hash0 identifies the map, which keeps its
	 * strings alive. */
	if (g->off.labels_kind == GORT_LABELS_SLICE && set) {
		e->heap = xcalloc(2 * (size_t)nkeep, sizeof(*e->heap));
		for (i = 0; i < nkeep; i++) {
			const struct dpair *d = &g->dp[i];
			const struct gort_label *q = &set->pairs[i];

			if (d->k.keep && !is_static(g, d->k.addr, d->k.keep))
				e->heap[e->nheap++] = (struct heap_str){ d->k.addr, d->k.keep, 0, q->key };
			if (d->v.keep && !is_static(g, d->v.addr, d->v.keep))
				e->heap[e->nheap++] = (struct heap_str){ d->v.addr, d->v.keep, 0, q->value };
		}
		heap_chunks(e);
	}
	return 0;
}

/* The GC sweep generation into *sg: true when known (see labels_of). */
static bool read_sweepgen(struct gort *g, const struct gp_mem *mem, uint32_t *sg)
{
	return g->mheap && g->off.mheap_sweepgen &&
	       mem_read_u32(mem, g->mheap + g->off.mheap_sweepgen, sg) == 0;
}

/* The current sample's snapshot holds a copy of label set ptr, made at the sample
 * (GOBPF_REC_LBL: its first piece is the set's cell or header at g.labels). */
static bool copied_at_sample(const struct gort *g, uint64_t ptr)
{
	const struct gobpf_rec *r = g->snap;

	return r && (r->flags & GOBPF_REC_LBL) && r->npieces && r->piece[0].addr == ptr;
}

/* ---------------------------------------------------------------- sets by content */

/*
 * A label set is decided by its strings. A string constant (in a static range) is
 * decided by its address and length, since the bytes there never change; a string
 * made at run time by its bytes, when the BPF program copied them at the sample.
 * Services label each request through pprof.Do, which makes a new set, at a new
 * address, for every request, with constant keys, constant or run-time values; the
 * label cache, keyed by address, then decodes every one of them (issue 6: on labels.go
 * at 1 kHz, a new set every other sample; labels_of was 11 % of gotop-perf's CPU, half
 * of its own time in choosing the entries to replace). For a sample whose set the
 * program copied whole, set_key makes that content into a key, and a table maps keys
 * to the interned set the first set with the key decoded to.
 */
_Static_assert(BUCKET_CNT <= GOBPF_LBL_PAIRS, "set_key: a bucket's pairs fit in the key");

/* A set's key as it is built: its bytes and their running hash, folded word by word as
 * they are appended (util_hash_words), so that the key is not read again to be hashed. */
struct skey {
	uint8_t *k; /* HC_KEY_MAX bytes */
	uint32_t n;
	uint32_t piece; /* where the next copied string's piece should be (snap_piece_at) */
	uint64_t h;
};

static inline void skey_word(struct skey *s, uint64_t w)
{
	memcpy(s->k + s->n, &w, 8);
	s->n += 8;
	s->h = util_hash_words(s->h, &w, 1);
}

/* key_str for a string made at run time: the length with the top bit set and the bytes
 * of the sample's copy. False when the program did not copy them. */
static bool key_str_copied(const struct gort *g, uint64_t p, uint64_t len, struct skey *s)
{
	const uint8_t *b;
	uint64_t bh;

	if (len > GOBPF_LBL_STR_MAX || !(b = snap_piece_at(g, s->piece, p, len)))
		return false;
	s->piece++;
	bh = util_hash(b, len, 0);
	skey_word(s, len | (1ULL << 63));
	memcpy(s->k + s->n, b, len);
	s->n += (uint32_t)len;
	s->h = util_hash_words(s->h, &bh, 1);
	return true;
}

/* Appends string {p, len} to key s: 16 bytes (address, length) for a constant, else its
 * copy (key_str_copied). False when neither (garbage, or not copied). Inline: the
 * constant is the usual case, four times per sample on a set of two pairs. */
static inline bool key_str(const struct gort *g, uint64_t p, uint64_t len, struct skey *s)
{
	if (len >= STRLEN_GARBAGE)
		return false;
	if (len && !is_static(g, p, GP_MIN(len, (uint64_t)GORT_MAX_STRLEN)))
		return key_str_copied(g, p, len, s);
	skey_word(s, p);
	skey_word(s, len);
	return true;
}

/* The key of set ptr from the sample's copy, into k (HC_KEY_MAX bytes): its length when
 * the copy holds the whole set (one bucket of a go1.19 to go1.23 map, not growing; a
 * go1.24+ slice of up to GOBPF_LBL_PAIRS pairs) and every string is a constant or was
 * copied, else 0. Map cells are taken in bucket order, slices in list order. */
static uint32_t set_key(const struct gort *g, uint64_t ptr, uint8_t *k, uint64_t *hash)
{
	const struct gort_offsets *o = &g->off;
	const uint8_t *c, *hm, *b, *a;
	struct skey s = { k, 0, 0, 0xcbf29ce484222325ULL };
	uint32_t pairs = 0, i;

	if (o->labels_kind == GORT_LABELS_MAP) {
		const uint32_t bkeys = o->bucket_keys, bvals = o->bucket_values;
		uint64_t h;

		if (!(c = snap_piece_at(g, 0, ptr, 8)) || !ptr_ok(h = ld64(c, 0)) ||
		    !(hm = snap_piece_at(g, 1, h, g->hsz)))
			return 0;
		if (hm[o->hmap_b] != 0 || ld64(hm, o->hmap_oldbuckets) ||
		    ld64(hm, o->hmap_count) > BUCKET_CNT ||
		    !(b = snap_piece_at(g, 2, ld64(hm, o->hmap_buckets), o->bucket_size)) ||
		    ld64(b, o->bucket_overflow))
			return 0;
		s.piece = 3;
		for (i = 0; i < BUCKET_CNT; i++) {
			if (b[i] < TOPHASH_MIN)
				continue;
			if (!key_str(g, ld64(b, bkeys + 16 * i), ld64(b, bkeys + 16 * i + 8), &s) ||
			    !key_str(g, ld64(b, bvals + 16 * i), ld64(b, bvals + 16 * i + 8), &s))
				return 0;
			pairs++;
		}
		if (pairs != ld64(hm, o->hmap_count))
			return 0; /* torn or garbage */
	} else {
		uint64_t len;

		if (!(c = snap_piece_at(g, 0, ptr, 24)))
			return 0;
		len = ld64(c, 8);
		if (len == 0 || len > GOBPF_LBL_PAIRS || len > ld64(c, 16) ||
		    !(a = snap_piece_at(g, 1, ld64(c, 0), 32 * len)))
			return 0;
		s.piece = 2;
		for (i = 0; i < len; i++)
			if (!key_str(g, ld64(a, 32 * i), ld64(a, 32 * i + 8), &s) ||
			    !key_str(g, ld64(a, 32 * i + 16), ld64(a, 32 * i + 24), &s))
				return 0;
		pairs = (uint32_t)len;
	}
	*hash = util_mix64(s.h ^ s.n);
	return pairs ? s.n : 0;
}

/* The entry for key k of n bytes (hash h), or the empty slot where it goes. */
static struct hc_ent *hc_slot(struct gort *g, const uint8_t *k, uint32_t n, uint64_t h)
{
	size_t j;

	if (!g->hc) {
		g->hc = xcalloc(HC_SLOTS, sizeof(*g->hc));
		g->hc_key = xmalloc(HC_ARENA);
	}
	for (j = h & (HC_SLOTS - 1); g->hc[j].len; j = (j + 1) & (HC_SLOTS - 1))
		if (g->hc[j].hash == h && g->hc[j].len == n && memcmp(g->hc_key + g->hc[j].off, k, n) == 0)
			break;
	return &g->hc[j];
}

/* Remembers that key k (n bytes, hash h) decodes to set. */
static void hc_add(struct gort *g, const uint8_t *k, uint32_t n, uint64_t h,
		   const struct gort_labels *set)
{
	struct hc_ent *e;

	if (g->hc_n >= HC_SLOTS / 2 || g->hc_len + n > HC_ARENA) {
		memset(g->hc, 0, HC_SLOTS * sizeof(*g->hc));
		g->hc_n = 0;
		g->hc_len = 0;
	}
	e = hc_slot(g, k, n, h);
	if (e->len)
		return;
	e->off = g->hc_len;
	memcpy(g->hc_key + e->off, k, n);
	e->hash = h;
	e->len = n;
	e->set = set;
	g->hc_n++;
	g->hc_len += n;
}

/* Labels of goroutine gv (whose g.labels is ptr != 0) by the label cache. *sg, when
 * have_sg, is the sweep generation read after gv was read (else it is read here);
 * sg_before: the same value was also read before gv was. */
static int labels_cached(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		     bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		     int *flags)
{
	uint8_t fp[24 + 32 * GORT_MAX_LABELS];
	uint32_t fplen = 0, n = 0, sweepgen = 0;
	uint64_t data = 0, len = 0, ptr = gv->labels;
	bool epoch = false;
	struct lc_entry *e;
	int rc;

	g->st.label_lookups++;
	if (!ptr_ok(ptr)) {
		g->st.label_bad++;
		*flags |= GORT_LABELS_BAD;
		return 0;
	}
	if (gv->snap && copied_at_sample(g, ptr)) {
		/* The set as it was at the sample is in the snapshot: its fingerprint is
		 * compared with the copy (snap_piece), which needs no proof that the set is still
		 * reachable now. The proof (a read of g.labels after one of the sweep
		 * generation) would only mark the entry for samples without a snapshot, at the
		 * cost of one more vectored read per batch. */
		epoch = false;
	} else if (have_sg) {
		sweepgen = sg;
		epoch = true;
	} else {
		epoch = read_sweepgen(g, mem, &sweepgen);
	}
	if (epoch) {
		e = lc_find(g, ptr);
		if (e && e->epoch_ok && e->sweepgen == sweepgen && !gv->snap) {
			/* g.labels was read before sweepgen, and the entry's sweepgen before the
			 * read that proved its object reachable: no GC cycle ended in between, so
			 * the object at ptr cannot have been freed and replaced. A snapshot's
			 * g.labels may be older than the entry's proof: no shortcut for it. */
			e->used = ++g->lc_clock;
			g->st.label_hits_epoch++;
			*out = e->set;
			return 0;
		}
		/* Observe reachability again after the sweepgen read, unless g.labels was
		 * read between two reads that gave this same sweep generation: it was then
		 * observed after one already (gort_read_batch). */
		if (!(have_sg && sg_before)) {
			bool missed = g->pf_missed;

			g->pf_missed = false;
			rc = mem_read_u64(mem, gv->addr + g->off.g_labels, &ptr);
			if (rc)
				return soft_error(rc) ? 0 : rc;
			/* In a batch's dry run the value is only requested: go on as if it had
			 * not changed (the usual case), so that the label set's first read is
			 * requested in the same vectored read, after it. The answer of a dry
			 * run is discarded. */
			if (g->pf_missed) {
				ptr = gv->labels;
			} else if (gv->snap && ptr != gv->labels) {
				/* The snapshot is the sample's; the goroutine has other labels
				 * now. The sample's set is still at gv->labels unless a GC
				 * cycle freed it since: nothing proves it either way, so the
				 * cache entry's fingerprint (or a decode) decides. */
				ptr = gv->labels;
				epoch = false;
				g->st.snap_labels_moved++;
			}
			g->pf_missed |= missed;
		}
		if (!ptr)
			return 0;
		if (!ptr_ok(ptr)) {
			g->st.label_bad++;
			*flags |= GORT_LABELS_BAD;
			return 0;
		}
	}
	e = lc_find(g, ptr);
	if (e && g->pf_mode != PF_OFF && e->checked_gen == g->pf_gen) {
		/* Proved (or decoded) already in this batch, whose reads all stand for one
		 * moment: the same bytes would be compared again. */
		e->used = ++g->lc_clock;
		g->st.label_hits_batch++;
		*out = e->set;
		return 0;
	}
	if (e) {
		rc = read_fingerprint(g, mem, ptr, fp, &fplen, &data, &len, &n);
		if (rc == 0 && fplen == e->fplen && memcmp(fp, e->fp, fplen) == 0) {
			rc = heap_strings_same(g, mem, e);
			if (g->pf_missed)
				return 0; /* a dry run (pf_read): keep the entry as it is */
			if (rc == 0) {
				e->used = ++g->lc_clock;
				e->epoch_ok = epoch;
				e->sweepgen = sweepgen;
				e->checked_gen = g->pf_mode != PF_OFF ? g->pf_gen : 0;
				g->st.label_hits_checked++;
				*out = e->set;
				return 0;
			}
		}
		if (g->pf_missed)
			return 0;
		if (rc < 0 && !soft_error(rc))
			return rc;
		g->st.label_stale++;
		lc_drop(g, e);
	}
	return labels_decode(g, mem, ptr, epoch, sweepgen, out, flags);
}

/* The raw entry of set ptr: its slot, whether or not it holds ptr. */
static struct raw_ent *raw_slot(struct gort *g, uint64_t ptr)
{
	if (!g->raw)
		g->raw = xcalloc(RAW_SLOTS, sizeof(*g->raw));
	return &g->raw[util_mix64(ptr) & (RAW_SLOTS - 1)];
}

/* Remembers that the snapshot r's copy of set ptr is set. */
static void raw_put(struct raw_ent *e, uint64_t ptr, const struct gobpf_rec *r, uint32_t used,
		    const struct gort_labels *set)
{
	e->ptr = ptr;
	e->npieces = GP_MIN(r->npieces, (uint32_t)GOBPF_LBL_PIECES);
	e->used = used;
	e->set = set;
	memcpy(e->piece, r->piece, e->npieces * sizeof(*e->piece));
	memcpy(e->lbl, r->lbl, used);
}

/* Labels of goroutine gv (whose g.labels is != 0): by their content when the sample's
 * copy of the set holds it, else by the label cache. The content is first compared, byte
 * for byte, with the last copy of the same set (raw_ent): equal copies are the same set,
 * found without building its key (set_key, hc_slot). A set's bytes are kept from its
 * second copy on: a set seen once only leaves its address, which costs a store where
 * keeping its bytes cost a copy of them and a pass over the pieces (gobpf_lbl_used). On
 * labels.go at 1 kHz, whose sets live about 1 ms of CPU, 7 % of copies equal the last
 * one, and keeping every set's bytes took 210 of labels_of's 790 instructions per
 * sample (callgrind; issue 6). */
static int labels_of(struct gort *g, const struct gp_mem *mem, const struct gview *gv,
		     bool have_sg, bool sg_before, uint32_t sg, const struct gort_labels **out,
		     int *flags)
{
	uint8_t key[HC_KEY_MAX];
	uint64_t h = 0;
	uint32_t n = 0, used = 0;
	struct raw_ent *re = NULL;
	int rc;

	if (gv->snap && copied_at_sample(g, gv->labels)) {
		const struct gobpf_rec *r = g->snap;

		re = raw_slot(g, gv->labels);
		if (re->ptr != gv->labels) {
			/* First seen: only its address is kept, and no bytes (npieces 0). */
			re->ptr = gv->labels;
			re->npieces = 0;
			re = NULL;
		} else {
			used = gobpf_lbl_used(r);
			if (re->npieces == GP_MIN(r->npieces, (uint32_t)GOBPF_LBL_PIECES) &&
			    re->used == used &&
			    memcmp(re->piece, r->piece, re->npieces * sizeof(*r->piece)) == 0 &&
			    memcmp(re->lbl, r->lbl, used) == 0) {
				g->st.label_lookups++;
				g->st.label_hits_content++;
				*out = re->set;
				return 0;
			}
		}
		if ((n = set_key(g, gv->labels, key, &h))) {
			const struct hc_ent *e;

			e = hc_slot(g, key, n, h);
			if (e->len) {
				g->st.label_lookups++;
				g->st.label_hits_content++;
				*out = e->set;
				if (re)
					raw_put(re, gv->labels, r, used, e->set);
				return 0;
			}
		}
	}
	rc = labels_cached(g, mem, gv, have_sg, sg_before, sg, out, flags);
	/* Not from a batch's dry run (whose answer is thrown away), nor a set that was
	 * garbage or could not be kept. */
	if (n && rc == 0 && !g->pf_missed && *out &&
	    !(*flags & (GORT_LABELS_BAD | GORT_LABELS_DROPPED))) {
		hc_add(g, key, n, h, *out);
		if (re)
			raw_put(re, gv->labels, g->snap, used, *out);
	}
	return rc;
}

/* ---------------------------------------------------------------- entry point */

/* Finds the goroutine of one sample into *cur: 0 or a negative errno, *flags set. */
static int identify(struct gort *gr, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
		    uint64_t sp, struct gview *cur, int *flags)
{
	bool fault = false;
	int rc;

	gr->st.reads++;
	*flags = 0;
	rc = via_register(gr, mem, tid, greg, sp, cur, flags, &fault);
	if (rc == 0) {
		gr->st.via_register++;
	} else if (rc == 1) {
		*flags = 0;
		rc = via_m(gr, mem, tid, sp, cur, flags);
		if (rc == 0) {
			gr->st.via_m_cache++;
		} else if (rc == 1 && gr->allm) {
			walk_allm(gr, mem);
			rc = via_m(gr, mem, tid, sp, cur, flags);
			if (rc == 0)
				gr->st.via_allm++;
		}
		if (rc == 1)
			rc = fault ? -EFAULT : -ENOENT;
	}
	if (rc == -EFAULT)
		gr->st.faults++;
	else if (rc)
		gr->st.not_found++;
	return rc;
}

/* Fills *out for a sample whose goroutine is cur (rc == 0) or not found (rc < 0). */
static int finish(struct gort *gr, const struct gp_mem *mem, int rc, const struct gview *cur,
		  int flags, bool have_sg, bool sg_before, uint32_t sg, struct gort_result *out)
{
	memset(out, 0, sizeof(*out));
	if (rc) {
		out->flags = flags;
		return rc;
	}
	out->goid = cur->goid;
	if ((cur->status & ~(uint32_t)G_SCAN) == G_SYSCALL)
		flags |= GORT_SYSCALL;
	if (cur->labels) {
		rc = labels_of(gr, mem, cur, have_sg, sg_before, sg, &out->labels, &flags);
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

	rc = identify(gr, mem, tid, greg, sp, &cur, &flags);
	return finish(gr, mem, rc, &cur, flags, false, false, 0, out);
}

/* ---------------------------------------------------------------- batched reads */

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
 * piece of every sample there cost more than the reads it saved (issue 6: pf_slot was
 * 6 % of gotop-perf's CPU on a Go target at 1 kHz). */
static const uint8_t *snap_piece(const struct gort *g, uint64_t addr, size_t len)
{
	const struct gobpf_rec *r = g->snap;
	const uint8_t *b;
	uint32_t k;

	if (!r || !(r->flags & GOBPF_REC_LBL))
		return NULL;
	for (k = 0; k < r->npieces && k < GOBPF_LBL_PIECES; k++)
		if ((b = piece_bytes(r, k, addr, len)))
			return b;
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

static void pf_begin(struct gort *g, const struct gp_mem *mem)
{
	if (!g->pf || (g->pf_full && g->pf_slots < PF_SLOTS)) {
		g->pf_slots = g->pf ? 2 * g->pf_slots : PF_SLOTS_MIN;
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
 * depending on another, they overlap. Issue 6, labels.go at 1 kHz, perf record of
 * gotop-perf: labels_of was 17 % of its CPU, two thirds of that in loads of the bucket
 * and the copy of its bytes; with the lines loaded here first, labels_of and this
 * function together were 12 % where they had been 19 %, and the sampling thread's CPU
 * 0.85 of before (bench/owncpu-pair.sh, 8 rounds). __builtin_prefetch of the same lines
 * changed nothing: the lines were not there yet when labels_of came to them. Every
 * snapshot is a whole record (gort_sample.snap), so no load passes its end.
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
	int round;

	if (n > gr->batch_cap) {
		size_t cap = gr->batch_cap;

		xgrow((void **)&gr->batch, &cap, n, sizeof(*gr->batch));
		gr->pending = xrealloc(gr->pending, cap * sizeof(*gr->pending));
		gr->batch_cap = cap;
	}
	pf_begin(gr, mem);
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
		const struct tid_slot *s = tid_slot(gr, in[i].tid);

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
		b->rc = identify(gr, &pmem, in[i].tid, in[i].greg, in[i].sp, &b->cur, &b->flags);
		if (b->rc == 0 && b->cur.labels)
			gr->pending[npend++] = i;
		else
			rcs[i] = finish(gr, &pmem, b->rc, &b->cur, b->flags, false, false, 0, &out[i]);
	}
	gr->snap = NULL;
	/* One read of the sweep generation, after every g was read, serves every g the
	 * first read got; a g read later (a slow path) reads its own. */
	if (npend && need_sg)
		have_sg = read_sweepgen(gr, &pmem, &sg);
	if (have_sg) {
		uint8_t before[8];

		/* The same generation before the g's were read: g.labels of each g read then
		 * was observed after a read of sg, which is what the label cache's proofs need
		 * (labels_of); no GC cycle ended in between. */
		sg_around = pf_read(gr, sgaddr, before, 8) == 0 && ld32(before, 0) == sg;
	}
	gr->pf_mode = PF_DRY;
	for (round = 0; round < PF_ROUNDS && npend; round++) {
		size_t k = 0;

		for (i = 0; i < npend; i++) {
			struct batch_item *b = &gr->batch[gr->pending[i]];
			struct gort_stats save = gr->st;
			int rc;

			gr->pf_missed = false;
			gr->snap = in[gr->pending[i]].snap;
			rc = finish(gr, &pmem, b->rc, &b->cur, b->flags, have_sg && b->cur.early,
				    sg_around, sg, &out[gr->pending[i]]);
			if (gr->pf_missed) {
				gr->st = save;
				gr->pending[k++] = gr->pending[i];
			} else {
				rcs[gr->pending[i]] = rc;
			}
		}
		npend = k;
		if (!gr->pf_nreq)
			break;
		pf_issue(gr, false);
	}
	/* What is still missing (deep maps, a full table) is read on the spot. */
	gr->pf_mode = PF_PASS;
	gr->pf_missed = false;
	for (i = 0; i < npend; i++) {
		struct batch_item *b = &gr->batch[gr->pending[i]];

		gr->snap = in[gr->pending[i]].snap;
		rcs[gr->pending[i]] = finish(gr, &pmem, b->rc, &b->cur, b->flags,
					     have_sg && b->cur.early, sg_around, sg,
					     &out[gr->pending[i]]);
	}
	gr->snap = NULL;
	gr->pf_mode = PF_OFF;
	gr->pf_nreq = 0;
	return (size_t)(gr->pf_calls + gr->pf_spot - reads_before);
}
