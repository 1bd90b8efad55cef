/* goruntime.h: the goroutine id and pprof labels of a sampled thread of a Go process. */
#ifndef GOTOP_GORUNTIME_H
#define GOTOP_GORUNTIME_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdw.h>

#include "gotop/gobpf-abi.h"
#include "gotop/mem.h"

enum { GORT_ARCH_AMD64 = 1, GORT_ARCH_ARM64 = 2 };

/* How g.labels points at the label set (see src/go/goruntime-int.h for the sources). */
enum gort_labels_kind {
	GORT_LABELS_MAP = 1,   /* Go 1.19-1.23: g.labels -> *labelMap -> hmap of map[string]string */
	GORT_LABELS_SLICE = 2, /* Go 1.24+: g.labels -> labelMap{list []{key, value string}} */
};

/* Byte offsets inside the Go runtime's structures, for one binary. A field that is
 * not known is 0 where 0 cannot be a valid answer (m_alllink, mheap_sweepgen). */
struct gort_offsets {
	int go_minor;                /* 19 for go1.19; 0 when the version could not be parsed */
	int labels_kind;             /* enum gort_labels_kind */
	/* runtime.g */
	uint32_t g_stack_lo, g_stack_hi, g_m, g_sched_sp, g_sched_pc, g_sched_bp;
	uint32_t g_atomicstatus, g_goid, g_labels;
	/* runtime.m */
	uint32_t m_g0, m_procid, m_gsignal, m_curg, m_alllink;
	/* runtime.mheap: sweepgen, for the label cache's GC epoch */
	uint32_t mheap_sweepgen;
	/* runtime.hmap and the bucket of map[string]string (GORT_LABELS_MAP) */
	uint32_t hmap_count, hmap_flags, hmap_b, hmap_hash0, hmap_buckets, hmap_oldbuckets;
	uint32_t bucket_keys, bucket_values, bucket_overflow, bucket_size;
	/* runtime.g, for the snapshot of all goroutines (include/gotop/gosnap.h) and the
	 * state a cgo call saved (entersyscall), which the verifier crosses; 0: unknown
	 * (g_syscallbp before go1.23, g_parent_goid before go1.21) */
	uint32_t g_waitsince, g_waitreason, g_gopc, g_startpc, g_parent_goid;
	uint32_t g_syscallsp, g_syscallpc, g_syscallbp;
	/* g.trackingSeq (uint8), incremented each time the goroutine stops running through
	 * casgstatus (go1.19 to go1.27 runtime/proc.go: every transition out of _Grunning
	 * but preemption's, casGToPreempted or casGToPreemptScan, and from go1.26 the fast
	 * path of reentersyscall into _Gsyscall): a parked goroutine whose count and saved
	 * registers did not change has not run since, short of those and of 256 stops.
	 * 0: unknown. */
	uint32_t g_trackingseq;
	/* g.lockedm (muintptr), set while the goroutine is locked to its thread
	 * (runtime.LockOSThread; go1.19-go1.27 runtime/proc.go dolockOSThread); Go's
	 * traceback prints ", locked to thread" then. 0: unknown. */
	uint32_t g_lockedm;
};

/* Where a cgo callback's goroutine left its frames below the C code (gobpf-abi.h,
 * GOBPF_CONT_CB): asmcgocall's frame on g0, its SP aligned down to 16 after SUBQ $frame,
 * with the depth of the goroutine's SP below stack.hi at off and the g at off + 8 (go1.19
 * and go1.21: SUBQ $64, 40(SP) and 48(SP); go1.22 to go1.27: SUBQ $16, 0(SP) and 8(SP),
 * where asmcgocall calls C through asmcgocall_landingpad; runtime/asm_amd64.s
 * asmcgocall), and the first frame record above that SP on the goroutine's stack, bp bytes
 * up: from go1.21 the assembler gives asmcgocall one at its SP (PUSHQ BP before MOVQ SP,
 * DX in a disassembly of go1.21, go1.22 and go1.23 binaries); go1.19's has none, and its
 * caller runtime.cgocall (runtime/cgocall.go, calling asmcgocall's ABI0 body directly)
 * keeps its own 0x28 above its SP in the 0x30-byte frame the go1.19 compiler gives it,
 * 0x30 above asmcgocall's SP. Used by the BPF program and the verifier alike. -ENOTSUP
 * for the releases not read: 1.20 (Debian has no golang-1.20 to read it from) and unknown
 * ones. */
struct gort_cgocb {
	uint32_t frame, off, bp;
};
static inline int gort_cgocb_layout(const struct gort_offsets *o, struct gort_cgocb *l)
{
	if (o->go_minor == 19 || o->go_minor == 21) {
		l->frame = 64;
		l->off = 40;
		l->bp = o->go_minor == 19 ? 0x30 : 0;
		return 0;
	}
	if (o->go_minor >= 22 && o->go_minor <= 27) {
		l->frame = 16;
		l->off = 0;
		l->bp = 0;
		return 0;
	}
	return -ENOTSUP;
}

/* Limits on what is decoded from the target. */
#define GORT_MAX_LABELS 64      /* pairs kept per label set */
#define GORT_MAX_STRLEN 256     /* bytes kept per key or value, before the mark */
#define GORT_TRUNC_MARK "\xe2\x80\xa6" /* "…", appended to a cut key or value */

/* A decoded, interned label set. Identical sets are one object, so callers can compare
 * label sets by pointer. Keys and values are the target's raw bytes (they may hold NUL,
 * escape sequences, invalid UTF-8), each also NUL-terminated for convenience; escape them
 * for display (util_escape). Pairs are sorted by key bytes. */
#define GORT_TRUNC_PAIRS 1   /* more than GORT_MAX_LABELS pairs: the rest dropped */
#define GORT_TRUNC_STRING 2  /* a key or value was cut and ends with GORT_TRUNC_MARK */
struct gort_label {
	const char *key, *value;
	uint32_t klen, vlen;
};
struct gort_labels {
	uint32_t n;
	uint8_t truncated;           /* GORT_TRUNC_* bits */
	struct gort_label *pairs;
};

/* gort_result.flags */
#define GORT_SYSTEM_STACK 0x01   /* sampled on m.g0 or m.gsignal; m.curg's goroutine is given */
#define GORT_VIA_M 0x02          /* the g register was not usable; found via the thread's m */
#define GORT_SYSCALL 0x04        /* the goroutine is in a system call (status _Gsyscall) */
#define GORT_NO_G 0x08           /* with -ENOENT: the thread's m is known, it runs no goroutine */
#define GORT_LABELS_BAD 0x10     /* g.labels was set but could not be decoded (labels NULL) */
#define GORT_LABELS_DROPPED 0x20 /* the intern table is full: labels NULL */
#define GORT_OFF_STACK 0x40      /* g register was the goroutine, SP outside its stack
				  * (vDSO call on g0's stack, C code keeping R14) */
#define GORT_LEFT 0x80           /* the goroutine had left the thread by the read (parked,
				  * runnable, or running elsewhere): found by its stack */

struct gort_result {
	uint64_t goid;
	const struct gort_labels *labels; /* NULL: none. Borrowed, valid until gort_free */
	int flags;                        /* GORT_* above */
	uint64_t startpc;                 /* g.startpc (runtime2.go): the entry of the function
					   * the goroutine was started with; 0 unknown */
};

struct gort_stats {
	uint64_t reads, found, not_found, faults;
	uint64_t via_register, via_m_cache, via_allm, system_stack;
	uint64_t fast_path;          /* found with a single read of g (thread's m known) */
	uint64_t left;               /* found after it left the thread (parked or moved) */
	uint64_t label_lookups;      /* reads whose goroutine had g.labels != 0 */
	uint64_t label_hits_epoch;   /* cache hit proven by an unchanged GC sweep generation */
	uint64_t label_hits_checked; /* cache hit proven by re-reading the fingerprint */
	uint64_t label_hits_batch;   /* cache hit proven earlier in the same gort_read_batch */
	uint64_t label_hits_content; /* set known by its content as the BPF program copied it
				      * (constants by address; no cache entry, no decode) */
	uint64_t label_stale;        /* cached entry whose fingerprint no longer matched */
	uint64_t label_decodes, label_bad;
	uint64_t interned_sets, interned_bytes, allm_walks;
	uint64_t label_cache_slots;  /* entries the label cache has room for now */
	uint64_t batch_readvs;       /* vectored reads (mem_readv) made by gort_read_batch */
	uint64_t snapshots;          /* reads that took g and m from a sample-time snapshot */
	uint64_t snap_labels_moved;  /* of those, goroutines whose g.labels changed since */
	uint64_t label_pieces;       /* label-set reads answered by the program's copy */
};

struct gort;

/* Creates the reader for one Go binary. go_version is the buildinfo version
 * ("go1.24.4", "devel go1.25-..."); dwarf may be NULL (stripped binary): offsets then
 * come from a table keyed by the version (go1.19-go1.27). With DWARF, offsets come from
 * runtime.g, runtime.m, runtime.mheap and runtime/pprof.labelMap, and the version only
 * fills gaps. The layouts are the same on amd64 and arm64 (checked for every version).
 * Returns NULL with errno: ENOTSUP for a version the table lacks and no usable DWARF,
 * EINVAL for a bad arch. Caller frees with gort_free. One thread at a time. */
struct gort *gort_new(const char *go_version, Dwarf *dwarf, int arch);
void gort_free(struct gort *g);

/* The offsets in use (borrowed, valid until gort_free) and where they came from:
 * "dwarf" or "table go1.24" (static string). */
const struct gort_offsets *gort_offsets(const struct gort *g);
const char *gort_offsets_source(const struct gort *g);
/* The table's offsets for a version ("go1.24.4"), or NULL with errno ENOTSUP. Static. */
const struct gort_offsets *gort_table_offsets(const char *go_version);
/* Bytes of a label map's hmap the reader takes (every field it uses; GORT_LABELS_MAP). */
uint32_t gort_hmap_read_size(const struct gort_offsets *o);

/* Optional addresses of runtime variables in the target (0: unknown), from the symbol
 * table: runtime.allm lets samples of threads never seen with a valid g register find
 * their m; runtime.mheap_ gives the GC sweep generation, which lets the label cache
 * skip re-reading fingerprints until the next GC cycle. */
void gort_set_runtime_vars(struct gort *g, uint64_t allm, uint64_t mheap);
/* Runtime variables found from the code of the functions that use them, for binaries
 * without symbols (src/go/goruntime-vars.c says how). Link-time addresses; 0: not found. */
struct gort_vars {
	uint64_t allm;          /* runtime.allm: *m, the newest m, linked by m.alllink */
	uint64_t allglen;       /* runtime.allglen: uintptr, read before allgptr */
	uint64_t allgptr;       /* runtime.allgptr: **g, the array of every g */
	uint64_t wait_strings;  /* runtime.waitReasonStrings: [nwait]string */
	uint32_t nwait;
	uint64_t sweepgen;      /* &runtime.mheap_.sweepgen: runtime.mheap_ is this minus
				 * gort_offsets.mheap_sweepgen */
};
#define GORT_ALLG_MAX (1u << 22) /* goroutines a list may hold before it is called garbage */
enum { GORT_VAR_ALLM = 1, GORT_VAR_ALLGS = 2 };
struct gopcln;
/* Finds them in an amd64 Go binary by decoding the first instructions of
 * runtime.forEachGRace, runtime.mcommoninit, runtime.waitReason.String and
 * runtime.(*mspan).ensureSwept, which t names.
 * 0 when anything was found; -ENOENT none; -ENOTSUP another architecture; -EINVAL. */
int gort_vars_find(Elf *elf, const struct gopcln *t, struct gort_vars *out);
/* One RIP-relative memory operand of a function's code (gort_code_refs): the other
 * runtime readers (src/go/gomem-vars.c) find their variables the same way. */
struct gort_ref {
	uint64_t addr;       /* the link-time address it refers to */
	uint64_t at;         /* the instruction's offset from the function's entry */
	char mnemonic[16];   /* Capstone's: "mov", "lea", "cmp", ... */
	uint8_t width;       /* bytes the operand reads or writes; 0 for lea or not known */
	uint64_t imm;        /* the immediate of the latest cmp at or before it (0: none) */
};
/* The RIP-relative operands of the amd64 function name (from t), in code order, from its
 * first max_bytes bytes, at most max. Returns how many; -ENOENT no such function,
 * -ENOTSUP another architecture, -EINVAL, or -errno from Capstone. */
int gort_code_refs(Elf *elf, const struct gopcln *t, const char *name, size_t max_bytes,
		   struct gort_ref *refs, int max);
/* Checks candidates (addresses moved by the load bias) against the target's memory and the
 * reader's layouts: GORT_VAR_ALLM, *allm is an m whose g0 points back at it;
 * GORT_VAR_ALLGS, allglen is a plausible count and allgptr's first entries are g's.
 * 0 valid; -EAGAIN the runtime has not filled it yet; -EINVAL not what it should be;
 * -EFAULT unreadable; -ENOENT no candidate. */
int gort_vars_check(struct gort *g, const struct gp_mem *mem, const struct gort_vars *v,
		    int which);

/* The load bias of process pid's executable sf (runtime address - link-time address),
 * from the mapping of its file (the same inode); 0 for a non-PIE executable. 0, or
 * -ENOENT (no mapping of the file: not that program any more), -errno reading the maps. */
struct symfile;
int gort_exe_bias(pid_t pid, struct symfile *sf, uint64_t *bias);

/* Declares [lo, hi) of the target immutable while it lives (read-only segments of the
 * binary): label strings there need no re-validation. Up to 16 ranges; ranges that touch
 * or overlap one already declared are merged into it. */
void gort_add_static_range(struct gort *g, uint64_t lo, uint64_t hi);

/* Reads the goroutine id and labels for a sample of thread tid whose g register (R14
 * on amd64, R28 on arm64) held greg and whose stack pointer was sp (0: unknown).
 * Validates the g: m.procid == tid, g is m.g0, m.gsignal or m.curg, curg.m == m, status
 * running or syscall; on g0/gsignal the goroutine is m.curg (GORT_SYSTEM_STACK). Once
 * the thread's m is known, a g on that m with sp inside its stack needs one read.
 * When greg is no g of the thread (cgo C code, assembly using R14), the thread's m from
 * an earlier sample (or runtime.allm) gives m.curg, accepted only when sp is on curg's
 * stack or on the m's g0/gsignal stack (GORT_VIA_M). A g register naming a g of another
 * thread means that goroutine moved since the sample: -ENOENT.
 * Memory is read at call time, registers are from sample time: a goroutine that exits
 * in between and whose g is reused at once on the same thread is not detectable.
 * Returns 0 and fills *out; -ENOENT when no goroutine can be established (never a
 * guess; out->flags may say GORT_NO_G); -EFAULT when the g register pointed at
 * unreadable memory and nothing else helped; another -errno from the reader (-ESRCH:
 * the process is gone). */
int gort_read(struct gort *g, const struct gp_mem *mem, uint32_t tid, uint64_t greg,
	      uint64_t sp, struct gort_result *out);

/* gort_read for many samples at once (e.g. one ring drain), with the same results.
 * Cheaper: one read of the GC sweep generation, after all g's were read, serves every
 * sample's label cache check. rcs[i] gets what gort_read would return for in[i].
 * Returns the number of reads of the target made (a vectored read counts once): 0 when
 * every answer came from the snapshots and caches, so nothing of the samples was read
 * after them. */
struct gort_sample {
	uint32_t tid;
	uint64_t greg, sp;
	/* Optional: the g at greg, its m and m.curg as the BPF program read them at the
	 * sample (src/go/bpf/gobpf.bpf.c), taken instead of reading them now, so that the
	 * goroutine and its g.labels are the sample's, not what runs at the read. Its
	 * offsets must be the reader's (gobpf_offsets_match). Label sets are still read
	 * at the call, from the sample's g.labels. All sizeof(struct gobpf_rec) bytes of
	 * it must be readable: gort_read_batch loads lines of each before it reads them. */
	const struct gobpf_rec *snap;
};
size_t gort_read_batch(struct gort *g, const struct gp_mem *mem, const struct gort_sample *in,
		       size_t n, struct gort_result *out, int *rcs);

/* Forgets cached threads and label fingerprints (not the interned label sets, which
 * stay valid until gort_free): call when the target process is replaced. */
void gort_reset(struct gort *g);

void gort_get_stats(const struct gort *g, struct gort_stats *out);

#endif
