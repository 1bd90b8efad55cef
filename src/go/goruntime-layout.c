/* goruntime-layout.c: where the Go runtime keeps what the reader reads, per binary: the
 * offsets of g, m and mheap fields and the label map's layout, from a built-in table per
 * Go version or from the binary's DWARF. */
#include "config.h"
#include "goruntime-int.h"

#include <dwarf.h>
#include <errno.h>
#include <string.h>

#define DW_AT_GO_KIND 0x2900
#define GO_KIND_MAP 21
#define GO_KIND_STRUCT 25

/* --- the built-in table --- */

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
 * morebuf); 1.26 added g fields before labels (+8). The g fields of the goroutine
 * snapshot (waitsince ... syscallbp) were read from the same DWARF for 1.19, 1.23, 1.24,
 * 1.26 and 1.27; 1.20-1.22 and 1.25 are inferred from those moves (1.21 parentGoid).
 * g.syscallsp and g.syscallpc follow g.sched in every release, then g.syscallbp from 1.23
 * (go1.19, go1.23 and go1.27 runtime/runtime2.go: "syscallbp = sched.bp to use in
 * fpTraceback"); 0 before 1.23. g.trackingSeq was read from the DWARF of binaries of
 * go1.19.8, 1.21.13, 1.22.12, 1.23.5, 1.24.4, 1.25.12, 1.26.10 and 1.27.3 (amd64); 0 for
 * 1.20, not read. g.lockedm was read from gdb's ptype /o of runtime.g in binaries of go1.19,
 * 1.21 to 1.27 (amd64); 1.20 as 1.19 (before labels). */
static const struct table_row table[] = {
	{ "table go1.19", { .go_minor = 19, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 360,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 336,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 296, .g_startpc = 312,
		.g_parent_goid = 0, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 0,
		.g_trackingseq = 189, .g_lockedm = 232, .mheap_sweepgen = 65848, MAP64 } },
	{ "table go1.20", { .go_minor = 20, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 360,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 0,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 296, .g_startpc = 312,
		.g_parent_goid = 0, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 0,
		.g_trackingseq = 0, .g_lockedm = 232, .mheap_sweepgen = 0, MAP64 } },
	{ "table go1.21", { .go_minor = 21, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 336,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 280, .g_startpc = 296,
		.g_parent_goid = 272, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 0,
		.g_trackingseq = 188, .g_lockedm = 208, .mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.22", { .go_minor = 22, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 280, .g_startpc = 296,
		.g_parent_goid = 272, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 0,
		.g_trackingseq = 191, .g_lockedm = 208, .mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.23", { .go_minor = 23, .labels_kind = GORT_LABELS_MAP,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 152, .g_goid = 160, .g_labels = 352,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.g_waitsince = 176, .g_waitreason = 184, .g_gopc = 288, .g_startpc = 304,
		.g_parent_goid = 280, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 128,
		.g_trackingseq = 199, .g_lockedm = 216, .mheap_sweepgen = 65856, MAP64 } },
	{ "table go1.24", { .go_minor = 24, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 104, .g_atomicstatus = 152, .g_goid = 160, .g_labels = 352,
		.m_g0 = 0, .m_procid = 72, .m_gsignal = 80, .m_curg = 192, .m_alllink = 328,
		.g_waitsince = 176, .g_waitreason = 184, .g_gopc = 288, .g_startpc = 304,
		.g_parent_goid = 280, .g_syscallsp = 112, .g_syscallpc = 120, .g_syscallbp = 128,
		.g_trackingseq = 199, .g_lockedm = 216,
		.mheap_sweepgen = 65856 } },
	{ "table go1.25", { .go_minor = 25, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 344,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 344,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 280, .g_startpc = 296,
		.g_parent_goid = 272, .g_syscallsp = 104, .g_syscallpc = 112, .g_syscallbp = 120,
		.g_trackingseq = 191, .g_lockedm = 208,
		.mheap_sweepgen = 65856 } },
	{ "table go1.26", { .go_minor = 26, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 352,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 352,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 288, .g_startpc = 304,
		.g_parent_goid = 280, .g_syscallsp = 104, .g_syscallpc = 112, .g_syscallbp = 120,
		.g_trackingseq = 191, .g_lockedm = 208,
		.mheap_sweepgen = 65856 } },
	{ "table go1.27", { .go_minor = 27, .labels_kind = GORT_LABELS_SLICE,
		.g_stack_lo = 0, .g_stack_hi = 8, .g_m = 48, .g_sched_sp = 56, .g_sched_pc = 64,
		.g_sched_bp = 96, .g_atomicstatus = 144, .g_goid = 152, .g_labels = 352,
		.m_g0 = 0, .m_procid = 64, .m_gsignal = 72, .m_curg = 184, .m_alllink = 352,
		.g_waitsince = 168, .g_waitreason = 176, .g_gopc = 288, .g_startpc = 304,
		.g_parent_goid = 280, .g_syscallsp = 104, .g_syscallpc = 112, .g_syscallbp = 120,
		.g_trackingseq = 191, .g_lockedm = 208,
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

/* --- the offsets read from the binary's DWARF --- */

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
		/* The cgo call's saved state, for the verifier's crossing (go1.19 runtime2.go);
		 * syscallbp from go1.23. */
		if (dw_field(g, "syscallsp", &v, 8) == 0)
			o->g_syscallsp = v;
		if (dw_field(g, "syscallpc", &v, 8) == 0)
			o->g_syscallpc = v;
		o->g_syscallbp = dw_field(g, "syscallbp", &v, 8) == 0 ? v : 0;
		if (have[DW_MHEAP] && dw_field(&die[DW_MHEAP], "sweepgen", &v, 4) == 0)
			o->mheap_sweepgen = v;
		/* For the snapshot of all goroutines: the table's values when absent. */
		if (dw_field(g, "waitsince", &v, 8) == 0)
			o->g_waitsince = v;
		if (dw_field(g, "waitreason", &v, 1) == 0)
			o->g_waitreason = v;
		if (dw_field(g, "gopc", &v, 8) == 0)
			o->g_gopc = v;
		if (dw_field(g, "startpc", &v, 8) == 0)
			o->g_startpc = v;
		if (dw_field(g, "parentGoid", &v, 8) == 0)
			o->g_parent_goid = v;
		if (dw_field(g, "trackingSeq", &v, 1) == 0)
			o->g_trackingseq = v;
		if (dw_field(g, "lockedm", &v, 8) == 0)
			o->g_lockedm = v;
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

/* --- the choice between them --- */

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

/* Offsets read from a binary are untrusted too: all must fall inside structures of
 * plausible size, and bucket cells inside the bucket. */
static bool offsets_sane(const struct gort_offsets *o)
{
	const uint32_t f[] = { o->g_stack_lo, o->g_stack_hi, o->g_m, o->g_sched_sp, o->g_sched_pc,
			       o->g_sched_bp, o->g_atomicstatus, o->g_goid, o->g_labels, o->m_g0,
			       o->m_procid, o->m_gsignal, o->m_curg, o->m_alllink,
			       o->g_waitsince, o->g_waitreason, o->g_gopc, o->g_startpc,
			       o->g_parent_goid, o->g_syscallsp, o->g_syscallpc, o->g_syscallbp,
			       o->g_trackingseq, o->g_lockedm };

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

/* The bytes read from an hmap: up to the last field the reader uses. */
uint32_t gort_hmap_read_size(const struct gort_offsets *o)
{
	const uint32_t f[] = { o->hmap_count, o->hmap_flags, o->hmap_b, o->hmap_hash0,
			       o->hmap_buckets, o->hmap_oldbuckets };

	return max_u32(f, GP_ARRAY_SIZE(f)) + 8;
}

const char *gort_layout(const char *go_version, Dwarf *dwarf, struct gort_offsets *o)
{
	int minor = util_go_minor(go_version);
	const struct table_row *row = table_find(minor);
	const char *source = NULL;

	memset(o, 0, sizeof(*o));
	if (row)
		*o = row->o;
	if (dwarf && dw_offsets(dwarf, o) == 0) {
		fill_labels_kind(o, minor);
		if (offsets_sane(o))
			source = "dwarf";
	}
	if (!source) {
		if (!row) {
			errno = ENOTSUP;
			return NULL;
		}
		source = row->source;
		*o = row->o;
	}
	o->go_minor = minor > 0 ? minor : 0;
	return source;
}
