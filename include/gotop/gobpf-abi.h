/* gobpf-abi.h: what src/go/bpf/gobpf.bpf.c (run by the kernel at each sample) writes, and
 * its configuration; shared by the BPF program and src/go/gobpf.c. Linux types only. */
#ifndef GOTOP_GOBPF_ABI_H
#define GOTOP_GOBPF_ABI_H

#include <linux/types.h>

/* gobpf_rec.flags: which parts the program could read. */
#define GOBPF_REC_G 0x1      /* g[]: the g register's g (its fields, see below) */
#define GOBPF_REC_M 0x2      /* m[]: the fields of the m at maddr (g.m, or the thread's m
			      * known from earlier samples when the register is no g of it);
			      * not read when g.m is the thread's known m and the g is not
			      * one of its system stacks */
#define GOBPF_REC_CURG 0x4   /* curg[]: m.curg's fields (the register was not m.curg) */
#define GOBPF_REC_KREGS 0x8  /* sampled in the kernel: registers from the task's user entry */
#define GOBPF_REC_LBL 0x10   /* piece[]: the sampled goroutine's label set, as read at the
			      * sample (see gobpf_piece) */
#define GOBPF_REC_CONT 0x20  /* cont: the suspended goroutine's saved state and frames
			      * (see gobpf_cont) */

/* Field order of gobpf_rec.g / .curg and of gobpf_cfg.goff. */
enum { GOBPF_G_STACK_LO, GOBPF_G_STACK_HI, GOBPF_G_M, GOBPF_G_GOID, GOBPF_G_LABELS,
       GOBPF_G_STATUS, GOBPF_G_SCHED_PC, GOBPF_G_SCHED_SP, GOBPF_G_SCHED_BP, GOBPF_G_STARTPC,
       GOBPF_G_NFIELDS };
/* Field order of gobpf_rec.m and of gobpf_cfg.moff. */
enum { GOBPF_M_G0, GOBPF_M_PROCID, GOBPF_M_GSIGNAL, GOBPF_M_CURG, GOBPF_M_NFIELDS };

/* The largest g or m span the program copies (it reads one span per structure). */
#define GOBPF_SPAN_MAX 1024

/* Label sets: what the program copies of the label set of the goroutine it took for the
 * sample (m.curg's when read, else the register's g), so that the reader need not read
 * them later (each process_vm_readv costs more than the program's reads). A piece is
 * len bytes of the target at addr, at lbl[off]; the reader takes them as the answers to
 * its own reads of exactly (addr, len) (snap_piece, src/go/goruntime-int.h). Pieces, by
 * gobpf_cfg.lkind (runtime/pprof/label.go of the release):
 *   GOBPF_LBL_MAP (go1.19 to go1.23, labelMap is map[string]string): the 8-byte cell
 *     at g.labels (the *hmap), hsz bytes of the hmap, and, for a map of one bucket
 *     (B == 0, not growing), that bucket;
 *   GOBPF_LBL_SLICE (go1.24 on, labelMap{LabelSet{list []label}}): the 24-byte slice
 *     header at g.labels and, for 1 to GOBPF_LBL_PAIRS pairs, the pair array.
 * Then, once the set's pairs are copied, up to GOBPF_LBL_STRS of its strings that are
 * not constants (outside every range of gobpf_statics) and 1 to GOBPF_LBL_STR_MAX bytes
 * long, one piece each, in slots of GOBPF_LBL_STR_MAX bytes from GOBPF_LBL_STR_OFF:
 * strings made at run time (a tenant from a request) are read at the sample too, so
 * nothing of such a set is read later. Constants are read once per address by the
 * reader, longer or further strings later. */
enum { GOBPF_LBL_NONE, GOBPF_LBL_MAP, GOBPF_LBL_SLICE };
#define GOBPF_LBL_STRS 4
#define GOBPF_LBL_STR_MAX 64
#define GOBPF_LBL_PIECES (3 + GOBPF_LBL_STRS)
#define GOBPF_LBL_PAIRS 8     /* pairs of a slice set copied (32 bytes each) */
#define GOBPF_LBL_HMAP_MAX 64 /* hmap bytes: room at lbl[8], the bucket at lbl[72] */
#define GOBPF_LBL_BUCKET_MAX 280
#define GOBPF_LBL_STR_OFF (8 + GOBPF_LBL_HMAP_MAX + GOBPF_LBL_BUCKET_MAX)
#define GOBPF_LBL_BYTES (GOBPF_LBL_STR_OFF + GOBPF_LBL_STRS * GOBPF_LBL_STR_MAX)
struct gobpf_piece {
	__u64 addr;
	__u32 len, off;
};
/* The piece's bytes lie inside lbl (the reader's check: a record is untrusted). */
static inline int gobpf_piece_ok(const struct gobpf_piece *pc)
{
	return pc->off <= GOBPF_LBL_BYTES && pc->len <= GOBPF_LBL_BYTES - pc->off;
}

/* A sample taken off its goroutine's stack (on the m's g0 or gsignal stack, or in C code of
 * a cgo call) while that goroutine is suspended at a stack switch: runtime.systemstack,
 * asmcgocall (gosave_systemstack_switch), mcall and morestack save its pc, sp and bp in
 * g.sched (go1.19 to go1.27 runtime/asm_amd64.s); gogo and systemstack clear sched.sp
 * when the goroutine runs on, asmcgocall does not, so a copy is used only for a chain that
 * reaches one of the doors (src/stacks/repair.c repair_cross). The program copies, from the
 * goroutine it took for the sample (m.curg's, else the register's), when sched.sp is on
 * that goroutine's stack and the sampled SP is not: the saved registers, the first
 * GOBPF_CONT_WORDS words at sched.sp (where the return address of a frame not yet set up
 * is), and the frame-pointer walk from sched.bp, up to GOBPF_CONT_FRAMES return addresses,
 * each frame inside the goroutine's stack and above the last. goid names the goroutine
 * it was taken from. */
#define GOBPF_CONT_WORDS 4
#define GOBPF_CONT_FRAMES 40
/* A sample in Go code of a cgo callback (C -> Go: crosscall2, cgocallback), on its
 * goroutine's own stack: the goroutine's frames below the C code are those it left when
 * it entered asmcgocall. cgocallback pushed the goroutine's sched.pc of that moment just
 * below asmcgocall's SP and ran the callback below it (go1.19 to go1.27
 * runtime/asm_amd64.s cgocallback); asmcgocall had saved, on g0, the depth of that SP
 * below stack.hi and the g (its 'save depth in stack' words); g0.sched.sp is
 * cgocallback's SP on g0, whose first word is g0's sched.sp before the callback, where
 * asmcgocall had set up that frame. When the g there is the sample's goroutine, the
 * program fills cont with kind GOBPF_CONT_CB: pc is the pushed pc (runtime.
 * systemstack_switch), sp asmcgocall's SP on the goroutine's stack, bp sched.bp when
 * sched.sp still is that SP, else the frame record cb_bp bytes above it (gobpf_cfg).
 * cb_frame and cb_off are asmcgocall's g0 frame: its size below the aligned SP and where
 * depth and g are in it (cb_frame 0: not copied for this version). */
enum { GOBPF_CONT_SWITCH, GOBPF_CONT_CB };
struct gobpf_cont {
	__u64 goid, pc, sp, bp;
	__u64 stack[GOBPF_CONT_WORDS];
	__u32 n, kind;
	__u64 ret[GOBPF_CONT_FRAMES];
};

struct gobpf_rec {
	__u64 time;    /* bpf_ktime_get_ns: CLOCK_MONOTONIC, like the samples (use_clockid) */
	__u32 tid, flags;
	__u64 ip, sp, greg; /* user registers */
	__u64 g[GOBPF_G_NFIELDS];
	__u64 maddr;
	__u64 m[GOBPF_M_NFIELDS];
	__u64 curg[GOBPF_G_NFIELDS];
	__u32 npieces, pad;
	struct gobpf_piece piece[GOBPF_LBL_PIECES];
	struct gobpf_cont cont;
	__u8 lbl[GOBPF_LBL_BYTES];
};

/* The bytes of lbl the record's label pieces cover (0 without GOBPF_REC_LBL): all that
 * the reader reads of them. */
static inline __u32 gobpf_lbl_used(const struct gobpf_rec *r)
{
	__u32 k, used = 0;

	if (!(r->flags & GOBPF_REC_LBL))
		return 0;
	for (k = 0; k < r->npieces && k < GOBPF_LBL_PIECES; k++)
		if (gobpf_piece_ok(&r->piece[k]) && r->piece[k].off + r->piece[k].len > used)
			used = r->piece[k].off + r->piece[k].len;
	return used;
}

/* Set before the program is loaded (read-only then: the verifier sees constants). The
 * status word is 4 bytes; the rest are 8. */
struct gobpf_cfg {
	__u32 gsz, msz; /* bytes copied from a g and an m: every field offset + 8 fits */
	__u32 cont;     /* 1: copy the suspended goroutine's state (gobpf_cont) */
	__u32 cb_frame, cb_off, cb_bp; /* cgo callbacks (gobpf_cont, GOBPF_CONT_CB) */
	__u32 goff[GOBPF_G_NFIELDS];
	__u32 moff[GOBPF_M_NFIELDS];
	/* Label sets (GOBPF_LBL_*): hsz bytes of an hmap, where B, buckets and oldbuckets
	 * are in them, the bytes of a bucket and where its keys and values are
	 * (src/go/goruntime-decode.c map_fingerprint, map_walk_array). */
	__u32 lkind, hsz, hmap_b, hmap_buckets, hmap_oldbuckets, bucket_size, bucket_keys,
		bucket_values;
};

/* The target's read-only ranges (its executable's read-only mappings, where Go keeps
 * string constants): the one value of the array map gobpf_statics, set by the reader
 * once it knows them (n 0: not known yet, no string is copied). */
#define GOBPF_STATIC_MAX 4
struct gobpf_statics {
	__u64 lo[GOBPF_STATIC_MAX], hi[GOBPF_STATIC_MAX];
	__u32 n, pad;
};

/* Counters (per-CPU array gobpf_stats). */
enum { GOBPF_ST_RECORDS, GOBPF_ST_RING_FULL, GOBPF_ST_NFIELDS };

#endif
