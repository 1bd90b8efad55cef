/* gomem.h: the Go runtime's memory (heap), block and mutex profiles of a live process,
 * read from outside without stopping it: the buckets that runtime/pprof would turn into
 * /debug/pprof/heap, allocs, block and mutex, as they are at one moment.
 *
 * A reader (struct gomem) is a data source: open it for a process, then read a snapshot of
 * one kind of bucket as often as wanted (gomem_read). Each snapshot carries what the
 * runtime itself would publish at that moment (the pending heap cycle flushed as Go's own
 * reader flushes it, without writing) and what the read could not keep. goprof.h turns a
 * snapshot into Go's pprof profile; a live view reads the snapshots directly. */
#ifndef GOTOP_GOMEM_H
#define GOTOP_GOMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <gelf.h>

/* The kinds of bucket, numbered as the runtime's bucketType (go1.19-go1.27
 * runtime/mprof.go: memProfile 1, blockProfile 2, mutexProfile 3). */
enum gomem_kind {
	GOMEM_HEAP = 1,
	GOMEM_BLOCK = 2,
	GOMEM_MUTEX = 3,
};

/* Limits of one read. A list longer than max buckets is cut (gomem_stats.truncated); a
 * stack deeper than GOMEM_MAX_STACK is garbage (no version records one). */
#define GOMEM_MAX_BUCKETS (1u << 20)
#define GOMEM_MAX_STACK (1024 + 8) /* maxProfStackDepth (go1.23+) plus the heap's two and
				    * a skip sentinel */
#define GOMEM_DEFAULT_RATE 524288  /* runtime.MemProfileRate's default: 512 * 1024 */

/* One bucket: a call stack and its counts. Heap counts are what memProfileInternal (go1.23+;
 * MemProfile before) would report now: the active cycle plus the pending one, or every
 * cycle when no GC has published one yet. */
struct gomem_bucket {
	uint64_t addr;          /* the bucket in the target */
	uint64_t size;          /* heap: the object size (bucket.size); 0 for block and mutex */
	uint32_t stk0, nstk;    /* its stack: pcs[stk0 .. stk0 + nstk), return addresses as
				 * the runtime stored them (see goprof.h for how Go reads them) */
	/* heap */
	int64_t allocs, frees;           /* objects */
	int64_t alloc_bytes, free_bytes; /* bytes (go1.27 keeps counts only: count * size) */
	/* block and mutex: blockRecord, as stored (go1.19 mutex counts are not yet scaled) */
	double count;
	int64_t cycles;
};

struct gomem_stats {
	uint64_t listed;      /* buckets on the list, as far as it was followed */
	uint64_t kept;        /* buckets in the snapshot */
	uint64_t dropped;     /* buckets left out: torn + bad */
	uint64_t torn;        /* their counts changed between the two reads of every try (block
			       * and mutex: events arriving faster than a read) */
	uint64_t bad;         /* a header or record no runtime writes (garbage, or memory
			       * reused): the bucket, and the list after it, are left out */
	uint32_t cycle;       /* heap: the profile cycle (mProfCycle >> 1) the counts are of */
	uint32_t tries;       /* reads made: more than one when a GC cycle or a flush of the
			       * heap profile (or a new bucket) came in between */
	int all_cycles;       /* heap: no GC cycle has published anything yet; every pending
			       * cycle was added, as the runtime does then */
	int truncated;        /* more buckets than the limit: the rest not read */
	int loop;             /* the list came back to a bucket already read (garbage) */
	uint64_t readvs;      /* system calls that read the target */
	uint64_t bytes;       /* bytes read */
	uint64_t ns;          /* wall time of the read */
};

struct gomem_snap {
	int kind;                   /* enum gomem_kind */
	struct gomem_bucket *b;     /* n buckets, in the runtime's list order (newest first) */
	size_t n;
	uint64_t *pcs;              /* every bucket's stack */
	size_t npcs;
	int64_t rate;               /* heap: runtime.MemProfileRate; block: blockprofilerate
				     * (CPU ticks); mutex: mutexprofilerate (1/rate sampled) */
	int64_t ticks_per_sec;      /* block and mutex: the runtime's CPU ticks per second
				     * (runtime.ticks), how Go turns cycles into nanoseconds;
				     * 0 when not known without measuring (gomem_ticks) */
	int64_t time_ns;            /* CLOCK_REALTIME of the read */
	struct gomem_stats st;
};

/* Where the runtime keeps the profiles in one binary (link-time addresses; 0 unknown). */
struct gomem_vars {
	uint64_t mbuckets, bbuckets, xbuckets; /* *bucket list heads (atomic.UnsafePointer) */
	uint64_t mprofcycle;                   /* mProfCycle: uint32 */
	uint64_t active_lock;                  /* profMemActiveLock: runtime.mutex */
	uint64_t memprofilerate;               /* MemProfileRate: int */
	uint64_t blockprofilerate;             /* blockprofilerate: uint64 (ticks) */
	uint64_t mutexprofilerate;             /* mutexprofilerate: uint64 */
	uint64_t ticks;                        /* runtime.ticks: ticksType */
	uint32_t ticks_val;                    /* offset of ticks.val in it, 0 unknown */
};

/* Finds them from the code of the runtime functions that use them (amd64, the names
 * from .gopclntab; the same code in go1.19 to go1.27: src/go/gomem-vars.c cites it). 0
 * when the heap's list and cycle were found, -ENOENT when not, -ENOTSUP another
 * architecture, -EINVAL. */
struct gopcln;
int gomem_vars_find(Elf *elf, const struct gopcln *t, struct gomem_vars *out);

/* What a reader needs of its target. gomem_new finds it in a live process; tests and
 * fuzzing hand it a fake memory. Addresses are runtime addresses (link-time + bias). */
struct gp_mem;
struct gomem_target {
	struct gp_mem *mem;  /* every read of the target; borrowed */
	int go_minor;        /* 19 for go1.19: the layouts and rules of that release */
	struct gomem_vars v; /* runtime addresses */
	int profstackdepth;  /* GODEBUG profstackdepth (go1.23+: 128 unless set); 0 default */
};

struct gomem;
struct symfile;

/* A reader for process pid running the Go executable sf (borrowed; must outlive the
 * reader). Each variable comes from .symtab when present, else from the code, and is
 * checked in the target (a head bucket's type and hash, a plausible rate and cycle).
 * NULL with errno and a one-line reason in why: ENOTSUP not Go, another architecture or
 * a release before go1.19; ENOENT the profile's variables not found; ESRCH the process is
 * gone; EPERM not allowed to read it. */
struct gomem *gomem_new(pid_t pid, struct symfile *sf, char *why, size_t whylen);
/* A reader over t (copied; t->mem stays the caller's). NULL with errno EINVAL when t has
 * no memory, no heap list or a release outside go1.19-go1.27. */
struct gomem *gomem_new_from(const struct gomem_target *t);
void gomem_free(struct gomem *g); /* accepts NULL */

/* The runtime addresses in use (borrowed, valid until gomem_free). */
const struct gomem_target *gomem_target(const struct gomem *g);

/* The heap profile's cycle now (mProfCycle >> 1): it moves when a GC cycle ends and
 * publishes new counts, so a view reads the buckets again only then (one 4-byte read).
 * 0 or -errno. */
int gomem_cycle(struct gomem *g, uint32_t *cycle);

/* The rates now: runtime.MemProfileRate, blockprofilerate, mutexprofilerate. 0 or -errno
 * (-ENOENT: that variable was not found). */
int gomem_rate(struct gomem *g, int kind, int64_t *rate);

/* Reads a snapshot of the buckets of one kind into *out; its arrays are the reader's,
 * reused by the next read of the same kind: valid until then or gomem_free. The list is walked from its head; every bucket's header, stack and
 * record are read, and then every record again: a bucket whose counts changed in between
 * was being written. For the heap, the profile cycle is read before and after, and the
 * runtime's flush lock between the reads; a cycle that moved, a flush running or a count
 * that changed means the read mixed two moments and is made again (up to 4 tries; then the
 * changed buckets are dropped and counted). Block and mutex counts only grow, so counts
 * equal in both reads are the counts at one moment between them. max (0:
 * GOMEM_MAX_BUCKETS) bounds the buckets. 0, or -errno: -ESRCH the process is gone, -EFAULT
 * the list head cannot be read, -ENOENT that kind's list was not found. */
int gomem_read(struct gomem *g, int kind, size_t max, struct gomem_snap *out);

/* The target's CPU ticks per second (runtime.ticks.val, how the runtime turns block and
 * mutex cycles into time). When the target has not computed it yet, the value it would
 * compute now: go1.22+ from ticks.startTicks and startTime, the way ticksPerSecond does;
 * else, with measure, gotop-perf measures the TSC over 100 ms as tickspersecond does
 * (the call then sleeps). 0, -EAGAIN (not known without measure), or -errno. */
int gomem_ticks(struct gomem *g, int measure, int64_t *out);

/* Writes the runtime's default rate (GOMEM_DEFAULT_RATE) into runtime.MemProfileRate: the
 * one write gotop-perf makes into a target, only when the user asks (--enable-memprofile).
 * A program that does not link runtime/pprof runs with rate 0 (the linker sets
 * disableMemoryProfiling; go1.21+ schedinit, go1.19 defaultMemProfileRate): from this
 * write on, mallocgc samples its allocations. Only when the rate is 0; *old gets the rate
 * found. 0, -EEXIST (the rate was not 0: nothing written), or -errno from the write. */
int gomem_enable(struct gomem *g, int64_t *old);

#endif
