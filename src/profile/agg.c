/* agg.c: the aggregator: sample batches -> symbolized, repaired, labelled stacks -> one
 * pprof profile per event. Runs on one thread (record's main loop or the UI's worker). */
#include "config.h"
#include "gotop/agg.h"
#include "gotop/hashmap.h"
#include "gotop/kallsyms.h"
#include "gotop/perfrec.h"
#include "gotop/repair.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/fname.h"
#include "gotop/util.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 256
#define MAX_INLINE 32
/* Labels of one sample: thread, goroutine, its start function and its pprof labels. */
#define MAX_LABELS (AGG_MAX_GO_LABELS + 3)
/* The stack memo: raw chains (after repair) of up to MEMO_FRAMES frames -> location ids,
 * direct-mapped. Most samples repeat a chain seen before, and one hash and compare is
 * cheaper than a map lookup per frame (BENCHMARKS.md, "Ingest rate"). */
#define MEMO_SLOTS 1024
#define MEMO_FRAMES 32
/* The sample memo: (stack, thread, goroutine, label set) -> the profile's sample index,
 * direct-mapped, so that a repeated sample adds its values without prof_add_sample's
 * hashing and compares. Sample indexes never change (prof_reset_samples keeps them). */
#define SMEMO_SLOTS 4096
/* Held samples (agg_opts.hold_kernel) kept at most; past it agg_feed waits for the
 * kernel symbols instead. Sized so that a high rate on many CPUs stays below it for the
 * time kallsyms takes to load. */
#define MAX_HELD_BYTES (16u << 20)
/* Goroutine start pcs whose names are kept (start_fn). */
#define START_FNS_MAX 65536

/* Label sets converted to prof labels, by the goruntime's interned pointer. */
struct labelset {
	const void *key;
	size_t n;
	struct prof_label *labels;
};

struct memo { /* a hit reads the first cache line and the addresses it compares */
	uint64_t hash;
	uint16_t nk, nu;  /* nk + nu == 0: empty */
	uint16_t nl;      /* loc[] used: nk + nu, less where location_for cut the chain */
	const uint32_t *stack; /* the profile's interned copy of loc[] once known, else NULL */
	uint64_t addr[MEMO_FRAMES]; /* kernel part, then user part */
	uint64_t loc[MEMO_FRAMES];
};

struct smemo {
	const uint32_t *stack; /* NULL: empty */
	const void *lset;      /* agg_go.labels when labelled */
	uint64_t goid;
	uint32_t startfn;      /* sample_labels.startfn */
	uint32_t tid, flags, idx;
	uint8_t dropped;       /* the ids the entry lacks (see "Threads and memory") */
};

struct evprof {
	char name[EVENT_NAME_MAX];
	uint32_t idx; /* in agg.evs */
	uint32_t nv;  /* values per sample: samples, the event's, and a group's members' */
	int per_member; /* a group whose members sample: a sample's value goes to its event's
			 * column, the others stay 0 (sampler.h, struct sample_batch) */
	struct memo *memo; /* MEMO_SLOTS, allocated at the first use */
	struct smemo *smemo; /* SMEMO_SLOTS, the same */
	struct prof *prof;
	struct hashmap locs;     /* address (| 1 << 63 for "is return address") -> location id */
	/* The same for addresses in no mapping when last looked up: looked up again each
	 * time (location_for), as the maps may have been read before the mapping came
	 * (a library mapped by ld.so right after the exec, its PERF_RECORD_MMAP2 in
	 * another CPU's ring than the sample). */
	struct hashmap unmapped;
	struct hashmap mappings; /* sym_module id + 1 -> mapping id */
	struct labelset *lsets;
	size_t nlsets, caplsets;
	struct hashmap lsidx; /* interned label set pointer -> index + 1 into lsets */
	uint32_t k_thread, k_goroutine, k_goroutine_fn;
	struct hashmap startfns; /* g.startpc -> string id of its function's name (start_fn) */
	int main_mapped; /* the main executable's mapping is mapping 1 (pprof's "File:") */
};

struct agg {
	struct agg_opts o;
	struct symbolizer *sym;
	int unmapped_seen; /* location_for met an address in no mapping (fold_sample) */
	struct repair *repair;
	/* Samples held while kernel symbols load (hold_kernel): struct held records, each
	 * followed by its frames and labels, 8-byte aligned. kready: kernel symbols are
	 * known to be there (nothing is held after that). */
	uint8_t *held;
	size_t held_len, held_cap;
	int kready;
	struct evprof **evs;
	size_t nevs;
	struct gseen *gseen; /* goid_keep's table, GOID_SLOTS entries once a goroutine is met */
	agg_sink_fn *sink;   /* agg_set_sink: each sample's user chain offered to it */
	void *sink_arg;
	struct agg_stats st;
};

/*
 * Goroutine ids and memory. Its goroutine id makes a sample a profile entry of its own, so
 * a service that starts a goroutine per request (net/http, gRPC) adds an entry for nearly
 * every sample, and record and the live UI grow for as long as they run (labels.go
 * -gopercall; BENCHMARKS.md, "Memory of the live UI and record over time"). Up to goid_all_max goroutines, every sample keeps
 * its goroutine's id. Past that, only goroutines seen running for AGG_GOID_OLD_NS keep
 * theirs: the workers, loops and long requests one can tell apart, not thousands of
 * short requests, whose samples are kept
 * with their labels but no goroutine id. The first sighting of each goroutine is in a
 * direct-mapped table; a goroutine whose slot another took is seen anew. Go never reuses
 * a goroutine id (go1.23 runtime/proc.go: newproc1 takes goids from sched.goidgen).
 */
#define GOID_SLOTS 65536
#define DROP_THREAD 1
#define DROP_GOID 2
#define DROP_LABELS 4

/*
 * Threads and memory. A sample's thread and goroutine ids make it an entry of its own
 * too, and the goroutines of a Go program move from thread to thread: the entries come to
 * outnumber the stacks many times, and new combinations keep turning up, so the profile,
 * and the memory, grew as long as it ran (BENCHMARKS.md, "Memory of the live UI and record over time"). Up to samples_full
 * entries (AGG_SAMPLES_FULL), every sample keeps its ids. Past that, a sample adds to its
 * entry if it has one, else it keeps no thread nor goroutine id (its pprof labels stay).
 * The profile then grows only with new stacks and label sets, and the entries it has keep
 * counting.
 *
 * Label sets and memory. A service that puts a request id in a pprof label makes a new
 * label set at nearly every sample (labels.go -reqid), and keeps doing so until the
 * reader's table of label sets is full (goruntime.c, INTERN_MAX_SETS). Past labels_full
 * entries (AGG_LABELS_FULL), a sample whose labels have no entry yet adds to its stack's
 * entry without labels, counted in labels_dropped. A set the profile never took is left
 * out before its strings and its map slot are made: with request ids, those took as much
 * of record's heap as the reader's table of sets. The live session sheds entries past
 * its memory limit (live.c), and new sets get entries again.
 */
struct gseen {
	uint64_t goid, first_ns; /* first_ns 0: empty */
};

/* One held sample. frames[nl] follow (location ids, or for the addresses still to
 * look up, the kernel address itself: location ids never have bit 63 set), then
 * labels[nlabels]. */
struct held {
	uint32_t ev;
	uint16_t nl, nlabels;
	uint32_t flags, size;
	int64_t values[PROF_MAX_VALUES];
};

/* held.flags, and what fold_sample counts once a sample is in the profile */
#define HELD_GO 0x1       /* Go sample (the hook read it) */
#define HELD_GOID 0x2     /* its goroutine was found */
#define HELD_LABELLED 0x4 /* it carried labels */
#define HELD_LABELS_DROPPED 0x8 /* its labels were left out (agg_stats.labels_dropped) */

struct agg *agg_new(const struct agg_opts *o)
{
	struct agg *a = xcalloc(1, sizeof(*a));

	a->o = *o;
	a->o.offline_maps = NULL; /* borrowed: only read here */
	a->o.offline_exe = NULL;
	a->o.kallsyms_path = NULL;
	if (o->offline_maps)
		a->sym = symbolizer_new_offline(o->offline_maps, o->offline_maps_len, o->offline_exe);
	else
		a->sym = symbolizer_new(o->pid);
	if (o->kallsyms_path)
		symbolizer_set_kallsyms_path(a->sym, o->kallsyms_path);
	return a;
}

/* Frees the maps that hold ids of e's profile: addresses, mappings, label sets. */
static void evprof_free_maps(struct evprof *e)
{
	size_t j;

	hashmap_free(&e->locs);
	hashmap_free(&e->startfns);
	hashmap_free(&e->unmapped);
	hashmap_free(&e->mappings);
	for (j = 0; j < e->nlsets; j++)
		free(e->lsets[j].labels);
	free(e->lsets);
	e->lsets = NULL;
	e->nlsets = e->caplsets = 0;
	hashmap_free(&e->lsidx);
}

void agg_free(struct agg *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nevs; i++) {
		struct evprof *e = a->evs[i];

		prof_free(e->prof);
		free(e->memo);
		free(e->smemo);
		evprof_free_maps(e);
		free(e);
	}
	free(a->evs);
	free(a->gseen);
	free(a->held);
	repair_free(a->repair);
	symbolizer_free(a->sym);
	free(a);
}

/* The event's profile state by name, or NULL. */
static struct evprof *evprof_find(const struct agg *a, const char *name)
{
	size_t i;

	for (i = 0; i < a->nevs; i++)
		if (!strcmp(a->evs[i]->name, name))
			return a->evs[i];
	return NULL;
}

static struct evprof *evprof_get(struct agg *a, const struct event_spec *ev)
{
	struct evprof *e = evprof_find(a, ev->name);
	struct prof_value_type vt[PROF_MAX_VALUES];
	const char *type, *unit;
	size_t k;

	if (e)
		return e;
	e = xcalloc(1, sizeof(*e));
	e->idx = (uint32_t)a->nevs;
	snprintf(e->name, sizeof(e->name), "%s", ev->name);
	e->prof = prof_new();
	/* Like Go's CPU profiles: samples/count and cpu/nanoseconds for cpu-clock;
	 * otherwise samples/count and <event>/count. */
	events_value_type(ev, &type, &unit);
	vt[0].type = prof_str(e->prof, "samples");
	vt[0].unit = prof_str(e->prof, "count");
	vt[1].type = prof_str(e->prof, type);
	vt[1].unit = prof_str(e->prof, unit);
	/* A group's members: one sample type each, so go tool pprof -sample_index=page-faults
	 * shows them: each member's own samples' periods when the members sample, their
	 * counts since the previous sample (the sampler's deltas) with sample_read. */
	e->nv = 2;
	e->per_member = ev->nmembers && !ev->sample_read;
	for (k = 0; k < ev->nmembers && e->nv < PROF_MAX_VALUES; k++) {
		events_member_value_type(&ev->members[k], &type, &unit);
		vt[e->nv].type = prof_str(e->prof, type);
		vt[e->nv].unit = prof_str(e->prof, unit);
		e->nv++;
	}
	prof_set_sample_types(e->prof, vt, e->nv);
	prof_set_default_sample_type(e->prof, vt[1].type);
	e->k_thread = prof_str(e->prof, "thread");
	e->k_goroutine = prof_str(e->prof, "goroutine");
	e->k_goroutine_fn = prof_str(e->prof, "goroutine_fn");
	a->evs = xrealloc(a->evs, (a->nevs + 1) * sizeof(*a->evs));
	a->evs[a->nevs++] = e;
	return e;
}

void agg_kernel_prefetch(struct agg *a)
{
	if (a->o.kernel)
		symbolizer_load_kernel_async(a->sym);
}

void agg_preload(struct agg *a, int main)
{
	symbolizer_preload(a->sym, main, a->o.kernel);
	if (main) {
		struct symfile *sf = symbolizer_main_file(a->sym);

		/* Repair's first lookup in the executable would read its CFI (a Go binary's
		 * compressed .debug_frame) on the sampling path: read it before sampling. */
		if (a->o.repair && sf)
			symfile_cfi(sf);
	}
}

struct symbolizer *agg_symbolizer(struct agg *a)
{
	return a->sym;
}

static uint64_t mapping_for(struct evprof *e, const struct sym_module *mod)
{
	uint64_t *slot = hashmap_put(&e->mappings, (uint64_t)mod->id + 1, NULL);

	if (!*slot) {
		struct prof_mapping m;

		memset(&m, 0, sizeof(m));
		m.start = mod->start;
		m.limit = mod->limit;
		m.offset = mod->pgoff;
		m.filename = prof_str(e->prof, mod->path ? mod->path : "");
		m.build_id = mod->build_id ? prof_str(e->prof, mod->build_id) : 0;
		m.has_functions = 1;
		m.has_filenames = 1;
		m.has_line_numbers = 1;
		m.has_inline_frames = 1;
		*slot = prof_add_mapping(e->prof, &m);
	}
	return *slot;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* location_for's slot value for a return address in memory that is not code. */
#define LOC_NOT_CODE UINT64_MAX
/* location_for's answer (and slot value) for a return address into a frame that Go's
 * traceback leaves out: the chain goes on without it. */
#define LOC_SKIP (UINT64_MAX - 1)

/* An address no user mapping holds on x86_64: in page 0 (mapped only with
 * vm.mmap_min_addr 0), or not canonical (bits 63 to 47 neither all 0 nor all 1: linux
 * Documentation/arch/x86/x86_64/mm.rst). Kernel addresses are canonical. */
static int never_mapped(uint64_t addr)
{
	uint64_t top = addr >> 47;

	return addr < 4096 || (top != 0 && top != 0x1ffff);
}

/* The location of one address (symbolized once per address and event). 0 for a return
 * address in a mapping that is not executable (an anonymous heap or stack, data) or where
 * nothing can be mapped (never_mapped): the frame-pointer chain went past its last
 * frame, e.g. at a thread's first frame, whose frame pointer is whatever the register
 * held at clone, and the caller cuts the chain there (such frames showed as "+0x368aa0"
 * and "demo+0x11cf00" in the Go demo's profile). */
static uint64_t location_for(struct agg *a, struct evprof *e, uint64_t addr, int is_return)
{
	uint64_t key = (addr & ~(1ULL << 63)) | ((uint64_t)(is_return != 0) << 63), *slot, *um;
	struct sym_frame fr[MAX_INLINE];
	struct prof_line lines[MAX_INLINE];
	const struct sym_module *mod = NULL;
	uint64_t mapping = 0;
	int n;

	slot = hashmap_put(&e->locs, key, NULL);
	/* the location id stored for this address (0: none yet); cppcheck takes the
	 * returned id for the condition itself */
	if (*slot)
		return *slot == LOC_NOT_CODE ? 0 : *slot; // cppcheck-suppress identicalInnerCondition
	if (is_return && never_mapped(addr)) {
		*slot = LOC_NOT_CODE;
		return 0;
	}
	/* In no mapping when last looked up: again only once the maps may have changed
	 * (the value is the location id, and the maps version above bit 32). */
	um = hashmap_get(&e->unmapped, key);
	if (um && *um && (uint32_t)(*um >> 32) == symbolizer_maps_version(a->sym) &&
	    !symbolizer_miss_would_reload(a->sym, is_return)) {
		a->unmapped_seen = 1;
		return *um & 0xffffffffu;
	}
	n = symbolizer_lookup(a->sym, addr, is_return, &mod, fr, MAX_INLINE);
	if (um && *um) {
		if (!mod) {
			*um = (*um & 0xffffffffu) | (uint64_t)symbolizer_maps_version(a->sym) << 32;
			a->unmapped_seen = 1;
			return *um & 0xffffffffu;
		}
		*um = 0; /* found now: a location with its names */
	} else {
		a->st.addrs++;
	}
	if (mod && mod->nocode && is_return) { /* a leaf is kept: the CPU ran there */
		*slot = LOC_NOT_CODE;
		return 0;
	}
	if (mod) {
		mapping = mapping_for(e, mod);
		/* Which mapping is the main binary does not depend on where the first
		 * sample happened to land. */
		if (!prof_main_mapping(e->prof) && mod->sf && mod->sf == symbolizer_main_file(a->sym))
			prof_set_main_mapping(e->prof, mapping);
	}
	if (n > 0) {
		int i;

		/* Go's traceback ends a goroutine's stack at its start function, never
		 * showing runtime.goexit, the return address its start function was given
		 * (go1.23 runtime/proc.go newproc1: gostartcallfn). Ending ours there too
		 * makes stacks from gotop-perf and from the service's own profiles look
		 * alike and merge. A leaf in goexit stays. */
		if (is_return && fr[n - 1].func && !strcmp(fr[n - 1].func, "runtime.goexit")) {
			*slot = LOC_NOT_CODE;
			return 0;
		}
		/* Autogenerated code (method wrappers, the closures of go and defer statements
		 * with arguments, "F.gowrapN" and "F.deferwrapN" from Go 1.22) is left out as
		 * Go's stacks leave it out (sym_go_elide), except as the leaf: the CPU ran
		 * there. A location is one address's, whatever called it, so a wrapper that
		 * called runtime.panicwrap is left out too, which Go shows. A wrapper frame
		 * with functions inlined into it keeps those; an address with nothing else
		 * is skipped. */
		if (is_return && !(n = sym_go_elide(fr, n, 0))) {
			*slot = LOC_SKIP;
			return LOC_SKIP;
		}
		for (i = 0; i < n; i++) {
			const char *fn = fr[i].func ? fr[i].func : "??";
			uint32_t sysname = prof_str(e->prof, fn), name = sysname;
			char *dm;

			/* pprof's convention (profile.proto Function: name is "name of the
			 * function, in human-readable form if available", system_name "as
			 * identified by the system, e.g. mangled"). */
			if (fn[0] == '_' && fn[1] == 'Z' && (dm = fname_demangle(fn, strlen(fn)))) {
				name = prof_str(e->prof, dm);
				free(dm);
			}
			lines[i].function = prof_add_function(e->prof, name, sysname,
							      fr[i].file ? prof_str(e->prof, fr[i].file) : 0,
							      fr[i].start_line);
			lines[i].line = fr[i].line;
		}
	} else {
		char buf[512];

		/* No symbol: keep the address visible as module+offset. */
		a->st.unresolved++;
		if (mod)
			snprintf(buf, sizeof(buf), "%s+0x%llx", base_name(mod->path),
				 (unsigned long long)(addr - mod->start + mod->pgoff));
		else
			snprintf(buf, sizeof(buf), "[unknown] 0x%llx", (unsigned long long)addr);
		lines[0].function = prof_add_function(e->prof, prof_str(e->prof, buf),
						      prof_str(e->prof, buf), 0, 0);
		lines[0].line = 0;
		n = 1;
	}
	if (!mod) {
		uint64_t id = prof_add_location(e->prof, mapping, addr, lines, (size_t)n);

		*hashmap_put(&e->unmapped, key, NULL) = id | (uint64_t)symbolizer_maps_version(a->sym) << 32;
		a->unmapped_seen = 1;
		return id;
	}
	*slot = prof_add_location(e->prof, mapping, addr, lines, (size_t)n);
	return *slot;
}

static const struct prof_label *labels_for(struct agg *a, struct evprof *e, const void *set,
					   size_t *n, int known_only)
{
	struct agg_label pairs[AGG_MAX_GO_LABELS];
	uint64_t key = (uint64_t)(uintptr_t)set;
	uint64_t *slot = known_only ? hashmap_get(&e->lsidx, key) : hashmap_put(&e->lsidx, key, NULL);
	struct labelset *ls;
	size_t i;

	if (!slot) {
		*n = 0;
		return NULL;
	}
	if (*slot) {
		ls = &e->lsets[*slot - 1];
		*n = ls->n;
		return ls->labels;
	}
	xgrow((void **)&e->lsets, &e->caplsets, e->nlsets + 1, sizeof(*e->lsets));
	ls = &e->lsets[e->nlsets++];
	*slot = e->nlsets;
	ls->key = set;
	ls->n = a->o.go_reader->labels(set, pairs, AGG_MAX_GO_LABELS);
	ls->labels = xcalloc(ls->n ? ls->n : 1, sizeof(struct prof_label));
	for (i = 0; i < ls->n; i++) {
		ls->labels[i].key = prof_strn(e->prof, pairs[i].key, pairs[i].klen);
		ls->labels[i].str = prof_strn(e->prof, pairs[i].value, pairs[i].vlen);
		if (!ls->labels[i].str) /* an empty value must stay a string label */
			ls->labels[i].str = prof_str(e->prof, "\"\"");
	}
	*n = ls->n;
	return ls->labels;
}

/* Whether e's profile is past labels_full entries (see "Label sets and memory"). */
static int labels_full(const struct agg *a, const struct evprof *e)
{
	return prof_nsamples(e->prof) >= (a->o.labels_full ? a->o.labels_full : AGG_LABELS_FULL);
}

/* Counts one sample folded into the profile: flags as held.flags, dropped as
 * add_sample's. */
static void count_sample(struct agg *a, unsigned flags, unsigned dropped)
{
	a->st.go_samples += (flags & HELD_GO) != 0;
	a->st.with_goid += (flags & HELD_GOID) != 0;
	a->st.labelled += (flags & HELD_LABELLED) && !(dropped & DROP_LABELS);
	a->st.labels_dropped += (flags & HELD_LABELS_DROPPED) || (dropped & DROP_LABELS);
	a->st.thread_dropped += (dropped & DROP_THREAD) != 0;
	a->st.goid_dropped += (dropped & DROP_GOID) != 0;
	a->st.samples++;
}

/* Adds one sample whose frames are all location ids. Returns the index of its profile
 * entry; *dropped gets DROP_THREAD and DROP_GOID for the ids the entry lacks (see "Threads
 * and memory"). */
static long add_sample(struct agg *a, struct evprof *e, const uint64_t *locs, size_t nl,
		       const int64_t *values, const struct prof_label *labels, size_t nlabels,
		       unsigned flags, unsigned *dropped)
{
	uint32_t full = a->o.samples_full ? a->o.samples_full : AGG_SAMPLES_FULL;
	struct prof_label rest[MAX_LABELS];
	size_t i, k = 0;
	long idx;

	*dropped = 0;
	if (prof_nsamples(e->prof) < full || nlabels > GP_ARRAY_SIZE(rest)) {
		count_sample(a, flags, 0);
		return prof_add_to_sample(e->prof, locs, nl, values, labels, nlabels, 1);
	}
	idx = prof_add_to_sample(e->prof, locs, nl, values, labels, nlabels, 0);
	if (idx >= 0) {
		count_sample(a, flags, 0);
		return idx; /* an entry with its ids */
	}
	for (i = 0; i < nlabels; i++) {
		if (labels[i].key == e->k_thread && !labels[i].str)
			*dropped |= DROP_THREAD;
		else if (labels[i].key == e->k_goroutine && !labels[i].str)
			*dropped |= DROP_GOID;
		else
			rest[k++] = labels[i];
	}
	if (k && labels_full(a, e)) {
		idx = prof_add_to_sample(e->prof, locs, nl, values, rest, k, 0);
		if (idx >= 0) {
			count_sample(a, flags, *dropped);
			return idx;
		}
		*dropped |= DROP_LABELS;
		k = 0;
	}
	count_sample(a, flags, *dropped);
	return prof_add_to_sample(e->prof, locs, nl, values, rest, k, 1);
}

/* Keeps a sample until the kernel symbols are there (agg_flush). */
static void hold(struct agg *a, struct evprof *e, const uint64_t *frames, size_t nl,
		 const int64_t *values, const struct prof_label *labels, size_t nlabels,
		 unsigned flags)
{
	struct held h;
	size_t size = sizeof(h) + nl * sizeof(uint64_t) + nlabels * sizeof(struct prof_label);

	size = (size + 7u) & ~(size_t)7u;
	memset(&h, 0, sizeof(h));
	h.ev = e->idx;
	h.nl = (uint16_t)nl;
	h.nlabels = (uint16_t)nlabels;
	h.flags = flags;
	h.size = (uint32_t)size;
	memcpy(h.values, values, sizeof(h.values));
	xgrow((void **)&a->held, &a->held_cap, a->held_len + size, 1);
	memcpy(a->held + a->held_len, &h, sizeof(h));
	memcpy(a->held + a->held_len + sizeof(h), frames, nl * sizeof(uint64_t));
	memcpy(a->held + a->held_len + sizeof(h) + nl * sizeof(uint64_t), labels,
	       nlabels * sizeof(struct prof_label));
	a->held_len += size;
	a->st.held++;
}

/* Whether the kernel symbols are there; with hold_kernel the first call starts their
 * loading on a thread. */
static int kernel_ready(struct agg *a)
{
	if (!a->kready && symbolizer_kernel_ready(a->sym))
		a->kready = 1;
	return a->kready;
}

size_t agg_flush(struct agg *a, int wait)
{
	uint64_t frames[2 * MAX_FRAMES];
	struct prof_label labels[MAX_LABELS];
	size_t off = 0, n = 0;
	uint8_t *buf;
	size_t len;

	if (!a->held_len)
		return 0;
	if (!kernel_ready(a)) {
		if (!wait)
			return 0;
		symbolizer_preload(a->sym, 0, 1); /* joins the loading thread */
		a->kready = 1;
	}
	buf = a->held;
	len = a->held_len;
	a->held = NULL;
	a->held_len = a->held_cap = 0;
	while (off + sizeof(struct held) <= len) {
		struct held h;
		struct evprof *e;
		size_t i;
		unsigned dropped;

		memcpy(&h, buf + off, sizeof(h));
		e = a->evs[h.ev];
		memcpy(frames, buf + off + sizeof(h), h.nl * sizeof(uint64_t));
		memcpy(labels, buf + off + sizeof(h) + h.nl * sizeof(uint64_t),
		       h.nlabels * sizeof(struct prof_label));
		/* Positions and is_return as fold_sample gave them (see there). */
		for (i = 0; i < h.nl; i++)
			if (frames[i] >> 63)
				frames[i] = location_for(a, e, frames[i], i > 0);
		add_sample(a, e, frames, h.nl, h.values, labels, h.nlabels, h.flags, &dropped);
		off += h.size;
		n++;
	}
	free(buf);
	a->st.held = 0;
	return n;
}

/* Whether a sample at time t (ns) keeps goroutine goid's id: see "Goroutine ids and memory". */
static int goid_keep(struct agg *a, uint64_t goid, uint64_t t)
{
	uint32_t all = a->o.goid_all_max ? a->o.goid_all_max : AGG_GOID_ALL_MAX;
	struct gseen *e;

	if (!a->gseen)
		a->gseen = xcalloc(GOID_SLOTS, sizeof(*a->gseen));
	e = &a->gseen[util_mix64(goid) & (GOID_SLOTS - 1)];
	if (e->goid != goid || !e->first_ns) {
		e->goid = goid;
		e->first_ns = t ? t : 1;
		a->st.goroutines++;
	}
	return a->st.goroutines <= all || (t > e->first_ns && t - e->first_ns >= AGG_GOID_OLD_NS);
}

static struct smemo *smemo_slot(struct evprof *e, const uint32_t *stack, uint32_t tid,
				 uint64_t goid, const void *lset, unsigned flags)
{
	uint64_t h = ((uint64_t)(uintptr_t)stack ^ (uint64_t)tid << 32 ^ goid ^
		      (uint64_t)(uintptr_t)lset * 31 ^ flags) * 0x9e3779b97f4a7c15ULL;

	if (!e->smemo)
		e->smemo = xcalloc(SMEMO_SLOTS, sizeof(*e->smemo));
	return &e->smemo[h >> 52 & (SMEMO_SLOTS - 1)];
}

/*
 * Folding one sample, in the order fold_sample takes the steps: read and repair its call
 * chain (chain_read), make sure the executable is the profile's first mapping
 * (map_main_first), decide whether it waits for the kernel symbols (hold_for_kernel),
 * turn its addresses into location ids (locate_memo, or locate), label it (thread,
 * goroutine, label set: sample_labels), then hold it or add it to its profile entry
 * (add_located, through the sample memo).
 */

/* A sample's call chain as the steps see it: kern[nk] (leaf first), then user[nu]. */
struct chain {
	uint64_t user[MAX_FRAMES], kern[MAX_FRAMES];
	size_t nu, nk;
};

/* Reads s's call chain: the kernel part only with agg_opts.kernel; the user part starts at
 * the sampled user pc and is repaired (agg_opts.repair, repair.h) where the frame-pointer
 * chain lost frames. */
static void chain_read(struct agg *a, const struct perf_sample *s, const struct agg_go *gx,
		       struct chain *c)
{
	c->nk = 0;
	c->nu = perfrec_split_chain(s, c->user, MAX_FRAMES, c->kern, MAX_FRAMES, &c->nk);
	if (!a->o.kernel)
		c->nk = 0;
	if (a->o.repair && c->nu > 0 && s->regs_abi) {
		if (!a->repair)
			a->repair = repair_new(a->sym);
		if (repair_chain(a->repair, s, c->user, &c->nu, MAX_FRAMES) > 0)
			a->st.repaired++;
		/* Past a stack switch, the suspended goroutine's frames (repair_cross). */
		if (gx && gx->cross &&
		    repair_cross(a->repair, gx->cross, c->user, &c->nu, MAX_FRAMES) > 0)
			a->st.crossed++;
	}
}

/* pprof takes the first mapping for the main binary: the executable's mapping goes into
 * e's profile before any other (kernel, libraries), from the first user frame in it. */
static void map_main_first(struct agg *a, struct evprof *e, const struct chain *c)
{
	struct symfile *mainf;
	size_t i;

	if (e->main_mapped)
		return;
	mainf = symbolizer_main_file(a->sym);
	for (i = 0; i < c->nu && !e->main_mapped; i++) {
		const struct sym_module *mod = NULL;

		symbolizer_lookup(a->sym, c->user[i], 0, &mod, NULL, 0);
		if (mod && (!mainf || mod->sf == mainf)) {
			mapping_for(e, mod);
			e->main_mapped = 1;
		}
	}
	if (!mainf)
		e->main_mapped = 1;
}

/* Whether the sample waits for the kernel symbols (agg_opts.hold_kernel): a kernel address
 * (the kernel part, or a bad one in the user part) would otherwise wait for kallsyms. The
 * sample's other frames are resolved now (a later mmap cannot change them). Past
 * MAX_HELD_BYTES held, this waits for the names and nothing more is held. */
static int hold_for_kernel(struct agg *a, const struct chain *c)
{
	int defer;
	size_t i;

	if (!a->o.hold_kernel || a->kready)
		return 0;
	defer = c->nk > 0;
	for (i = 0; i < c->nu && !defer; i++)
		defer = kallsyms_is_kernel_addr(c->user[i]);
	if (defer && kernel_ready(a))
		defer = 0;
	if (defer && a->held_len >= MAX_HELD_BYTES) {
		agg_flush(a, 1);
		defer = 0;
	}
	return defer;
}

/* The location ids of c's frames into locs, each address looked up (location_for); a
 * frame's is_return is (position > 0), which agg_flush relies on. With defer, kernel
 * addresses stay as they are for agg_flush (struct held). Returns how many: fewer than
 * nk + nu when a return address is not code and the chain ends before it. */
static size_t locate(struct agg *a, struct evprof *e, const struct chain *c, int defer,
		     uint64_t *locs)
{
	size_t i, nl = 0;

	for (i = 0; i < c->nk; i++, nl++)
		locs[nl] = defer && kallsyms_is_kernel_addr(c->kern[i]) ? c->kern[i]
			   : location_for(a, e, c->kern[i], nl > 0);
	for (i = 0; i < c->nu; i++, nl++) {
		if (!(locs[nl] = defer && kallsyms_is_kernel_addr(c->user[i]) ? c->user[i]
				 : location_for(a, e, c->user[i], nl > 0)))
			break;
		if (locs[nl] == LOC_SKIP)
			nl--;
	}
	return nl;
}

/* The location ids of a chain of 1 to MEMO_FRAMES frames, through e's stack memo: *lp
 * gets the memo's ids on a hit (not copied: a sample the sample memo finds never reads
 * them), else locs, filled by locate. Returns the memo entry now holding the chain, or
 * NULL when a frame was in no mapping: not remembered, as the address may be found in a
 * mapping later. */
static struct memo *locate_memo(struct agg *a, struct evprof *e, const struct chain *c,
				uint64_t *locs, const uint64_t **lp, size_t *nl)
{
	uint64_t h = util_hash_words(util_hash_words(c->nk << 8 | c->nu, c->kern, c->nk),
				     c->user, c->nu);
	struct memo *m;

	h ^= h >> 31;
	if (!e->memo)
		e->memo = xcalloc(MEMO_SLOTS, sizeof(*e->memo));
	m = &e->memo[h & (MEMO_SLOTS - 1)];
	if (m->hash == h && m->nk == c->nk && m->nu == c->nu &&
	    !memcmp(m->addr, c->kern, c->nk * sizeof(uint64_t)) &&
	    !memcmp(m->addr + c->nk, c->user, c->nu * sizeof(uint64_t))) {
		*lp = m->loc;
		*nl = m->nl;
		return m;
	}
	a->unmapped_seen = 0;
	*lp = locs;
	*nl = locate(a, e, c, 0, locs);
	if (a->unmapped_seen) {
		m->hash = 0;
		return NULL;
	}
	m->hash = h;
	m->nk = (uint16_t)c->nk;
	m->nu = (uint16_t)c->nu;
	m->nl = (uint16_t)*nl;
	memcpy(m->addr, c->kern, c->nk * sizeof(uint64_t));
	memcpy(m->addr + c->nk, c->user, c->nu * sizeof(uint64_t));
	memcpy(m->loc, locs, *nl * sizeof(uint64_t));
	m->stack = NULL;
	return m;
}

/* What a sample is labelled with, and with its stack, the key of its sample memo entry:
 * the labels follow from (tid, goroutine, label set, flags). */
struct sample_labels {
	struct prof_label labels[MAX_LABELS];
	size_t n;
	unsigned flags;   /* as held.flags */
	uint64_t goid;    /* 0: no goroutine label */
	uint32_t startfn; /* the goroutine_fn label's string id, 0: none */
	const void *lset; /* the goroutine's label set when its labels are in labels[] */
};

static void label_num(struct sample_labels *sl, uint32_t key, int64_t num)
{
	sl->labels[sl->n].key = key;
	sl->labels[sl->n].str = 0;
	sl->labels[sl->n].num = num;
	sl->labels[sl->n++].num_unit = 0;
}

/* The goroutine's pprof labels: past labels_full entries, a set the profile has no labels
 * of has no entry: left out now, it costs no strings nor map (see "Label sets and
 * memory"). */
static void label_set(struct agg *a, struct evprof *e, const void *set, struct sample_labels *sl)
{
	size_t n, k;
	const struct prof_label *pl = labels_for(a, e, set, &n, labels_full(a, e));

	if (!pl) {
		sl->flags |= HELD_LABELS_DROPPED;
		return;
	}
	sl->flags |= HELD_LABELLED;
	sl->lset = set;
	for (k = 0; k < n && sl->n < GP_ARRAY_SIZE(sl->labels); k++)
		sl->labels[sl->n++] = pl[k];
}

/* The function the user part of chain c (innermost first) called from its frame in
 * function wrap, as Go's traceback names it: the function inlined into wrap at that frame
 * when there is one (a func literal the wrapper inlined), else the outermost frame of the
 * address before wrap's. A string id, or 0 when the chain does not show wrap near its
 * outer end. */
static uint32_t wrapped_fn(struct agg *a, struct evprof *e, const char *wrap, const uint64_t *user,
			   size_t nu)
{
	struct sym_frame fr[MAX_INLINE];
	const struct sym_module *mod;
	size_t k, stop = nu > 4 ? nu - 4 : 1;
	int n;

	/* Outermost first: runtime.goexit's return address, the wrapper's, its callee's. */
	for (k = nu; k-- > stop;) {
		n = symbolizer_lookup(a->sym, user[k], 1, &mod, fr, MAX_INLINE);
		if (n <= 0 || !fr[n - 1].func || strcmp(fr[n - 1].func, wrap))
			continue;
		if (n > 1)
			return fr[n - 2].func ? prof_str(e->prof, fr[n - 2].func) : 0;
		n = symbolizer_lookup(a->sym, user[k - 1], k - 1 > 0, &mod, fr, MAX_INLINE);
		if (n <= 0 || !fr[n - 1].func || fr[n - 1].wrapper)
			return 0;
		return prof_str(e->prof, fr[n - 1].func);
	}
	return 0;
}

/* The name of the goroutine's start function as Go's traceback shows it (the last frame
 * before "created by"), a string id of e's profile (0: not found). Go's start pcs are
 * function entries (go1.23 runtime/proc.go newproc1 stores fn.fn, a funcval's code
 * pointer), so the address itself is looked up, not the one before it; the outermost
 * frame is the function that holds it. A go statement with arguments starts a wrapper
 * (FuncIDWrapper, "F.gowrapN" from Go 1.22), which Go's traceback leaves out (see
 * location_for): its callee is named instead, found in the sample's own chain (user,
 * nu). Once per address; a wrapper whose callee no chain showed yet keeps its own name
 * until one does. */
static uint32_t start_fn(struct agg *a, struct evprof *e, uint64_t startpc, const uint64_t *user,
			 size_t nu)
{
	struct sym_frame fr[MAX_INLINE];
	const struct sym_module *mod = NULL;
	uint64_t *slot = hashmap_get(&e->startfns, startpc);
	uint32_t id;
	int n;

	if (slot && *slot)
		return (uint32_t)*slot;
	n = symbolizer_lookup(a->sym, startpc, 0, &mod, fr, MAX_INLINE);
	if (n <= 0 || !fr[n - 1].func)
		return 0; /* not kept: the maps may come later */
	/* A program has as many start pcs as functions it starts goroutines with; a g.startpc
	 * the target scribbled on must not grow the map without end. */
	if (hashmap_count(&e->startfns) >= START_FNS_MAX)
		return prof_str(e->prof, fr[n - 1].func);
	slot = hashmap_put(&e->startfns, startpc, NULL);
	if (!fr[n - 1].wrapper) {
		*slot = prof_str(e->prof, fr[n - 1].func);
		return (uint32_t)*slot;
	}
	id = wrapped_fn(a, e, fr[n - 1].func, user, nu);
	if (id)
		*slot = id;
	return id ? id : prof_str(e->prof, fr[n - 1].func);
}

/* The sample's labels: its thread, and for a Go sample its goroutine (when goid_keep keeps
 * the id: see "Goroutine ids and memory") and the goroutine's label set. The goroutine
 * and its labels were read at or right after the sample, on the sampling thread (the
 * session's Go reader): reading them now would see later labels. */
static void sample_labels(struct agg *a, struct evprof *e, const struct perf_sample *s,
			  const struct agg_go *gx, const struct chain *c, struct sample_labels *sl)
{
	sl->n = 0;
	sl->flags = 0;
	sl->goid = 0;
	sl->startfn = 0;
	sl->lset = NULL;
	label_num(sl, e->k_thread, s->tid);
	if (!gx)
		return;
	sl->flags |= HELD_GO;
	if (gx->flags & AGG_GO_LABELS_DROPPED)
		sl->flags |= HELD_LABELS_DROPPED;
	if (!(gx->flags & AGG_GO_FOUND))
		return;
	sl->flags |= HELD_GOID;
	if (goid_keep(a, gx->goid, s->time)) {
		sl->goid = gx->goid;
		label_num(sl, e->k_goroutine, (int64_t)gx->goid);
	} else {
		a->st.goid_young++;
	}
	/* gotop-perf's own string label goroutine_fn: the goroutine's start function, read
	 * at the sample (the goroutine may be gone by any later read); kept without the
	 * id too, so that the share of a function's goroutines counts young ones. */
	if (gx->startpc && (sl->startfn = start_fn(a, e, gx->startpc, c->user, c->nu)) != 0) {
		sl->labels[sl->n].key = e->k_goroutine_fn;
		sl->labels[sl->n].str = sl->startfn;
		sl->labels[sl->n].num = 0;
		sl->labels[sl->n++].num_unit = 0;
	}
	if (gx->labels)
		label_set(a, e, gx->labels, sl);
}

/* Adds a located sample to e's profile. With its stack interned (ms->stack), a sample the
 * sample memo knows adds its values to the entry's index without add_sample's hashing and
 * compares; otherwise add_sample, and the memos learn the entry's interned stack and
 * index for the next samples. */
static void add_located(struct agg *a, struct evprof *e, struct memo *ms, const uint64_t *lp,
			size_t nl, const int64_t *values, uint32_t tid,
			const struct sample_labels *sl)
{
	struct smemo *sm;
	struct prof_sample ps;
	unsigned dropped;
	long idx;

	if (ms && ms->stack) {
		sm = smemo_slot(e, ms->stack, tid, sl->goid ^ sl->startfn, sl->lset, sl->flags);
		if (sm->stack == ms->stack && sm->tid == tid && sm->goid == sl->goid &&
		    sm->startfn == sl->startfn && sm->lset == sl->lset && sm->flags == sl->flags &&
		    prof_sample_add(e->prof, sm->idx, ms->stack, nl, values, e->nv) == 0) {
			count_sample(a, sl->flags, sm->dropped);
			return;
		}
	}
	idx = add_sample(a, e, lp, nl, values, sl->labels, sl->n, sl->flags, &dropped);
	if (!ms || idx < 0 || prof_sample_at(e->prof, (size_t)idx, &ps) != 0 || ps.nlocs != nl)
		return;
	if (!ms->stack)
		ms->stack = ps.locs;
	if (ms->stack != ps.locs)
		return;
	sm = smemo_slot(e, ms->stack, tid, sl->goid ^ sl->startfn, sl->lset, sl->flags);
	sm->stack = ps.locs;
	sm->tid = tid;
	sm->goid = sl->goid;
	sm->startfn = sl->startfn;
	sm->lset = sl->lset;
	sm->flags = sl->flags;
	sm->idx = (uint32_t)idx;
	sm->dropped = (uint8_t)dropped;
}

static void fold_sample(struct agg *a, struct evprof *e, const struct perf_sample *s,
			const struct agg_go *gx)
{
	struct chain c;
	struct sample_labels sl;
	uint64_t locs[2 * MAX_FRAMES];
	const uint64_t *lp = locs; /* the location ids: locs, or the stack memo's own */
	struct memo *ms = NULL;
	size_t nl, k;
	int64_t values[PROF_MAX_VALUES] = { 0 };
	int defer;

	symbolizer_set_sample_time(a->sym, s->time);
	chain_read(a, s, gx, &c);
	map_main_first(a, e, &c);
	defer = hold_for_kernel(a, &c);
	if (!defer && c.nk + c.nu <= MEMO_FRAMES && c.nk + c.nu > 0)
		ms = locate_memo(a, e, &c, locs, &lp, &nl);
	else
		nl = locate(a, e, &c, defer, locs);
	if (nl < c.nk + c.nu)
		a->st.chain_cut++;
	sample_labels(a, e, s, gx, &c, &sl);
	/* Running goroutines are the leader's samples' only: a member's (a page fault) says
	 * nothing of what runs. */
	if (a->sink && (!e->per_member || s->id == 0))
		a->sink(a->sink_arg, gx && (gx->flags & AGG_GO_FOUND) ? gx->goid : 0, s->time, c.user,
			c.nu);
	values[0] = 1;
	if (e->per_member) {
		/* The group's event that took it (the sampler's index in the id): its period
		 * goes to its own column, and the sample counts among the group's. */
		values[1 + s->id] = (int64_t)s->period;
	} else {
		values[1] = (int64_t)s->period;
		/* sample_read: the members' counts after the leader's (perfrec: read_vals[0] is
		 * the leader's own count, the sample's period already holds what it sampled). */
		for (k = 2; k < e->nv && k - 1 < s->read_nr; k++)
			values[k] = (int64_t)s->read_vals[(k - 1) * s->read_stride];
	}
	if (defer)
		hold(a, e, lp, nl, values, sl.labels, sl.n, sl.flags);
	else
		add_located(a, e, ms, lp, nl, values, s->tid, &sl);
}

void agg_feed(struct agg *a, const struct sample_batch *b)
{
	struct evprof *e = evprof_get(a, b->event);
	size_t off = 0;

	if (a->held_len)
		agg_flush(a, 0);

	while (off + sizeof(struct perf_event_header) <= b->len) {
		const struct perf_event_header *h = (const void *)(b->data + off);
		struct perf_sample s;

		if (h->size < sizeof(*h) || off + h->size > b->len) {
			a->st.bad++;
			break;
		}
		switch (h->type) {
		case PERF_RECORD_SAMPLE: {
			const struct perf_event_header *nx = (const void *)(b->data + off +
								  (((size_t)h->size + 7u) & ~(size_t)7u));
			const struct agg_go *gx = NULL;
			struct agg_go gxv;
			struct repair_switch sw;

			/* The sampler puts the hook's record right after its sample; the session's
			 * reader says what it holds. */
			if (a->o.go_reader && (const uint8_t *)nx + sizeof(*nx) <= b->data + b->len &&
			    nx->type == SAMPLER_RECORD_EXTRA && nx->size >= sizeof(*nx) &&
			    (const uint8_t *)nx + nx->size <= b->data + b->len &&
			    a->o.go_reader->sample(nx + 1, nx->size - sizeof(*nx), &gxv, &sw) == 0)
				gx = &gxv;
			if (perfrec_parse_sample(b->layout, h, &s) == 0 &&
			    (!e->per_member || s.id + 1 < e->nv))
				fold_sample(a, e, &s, gx);
			else
				a->st.bad++;
			break;
		}
		case PERF_RECORD_LOST:
			if (h->size >= sizeof(*h) + 16) {
				uint64_t lost;

				memcpy(&lost, (const uint8_t *)(h + 1) + 8, 8);
				a->st.lost += lost;
			}
			break;
		case PERF_RECORD_MMAP:
		case PERF_RECORD_MMAP2:
			symbolizer_invalidate_maps(a->sym);
			break;
		default:
			break;
		}
		off += ((size_t)h->size + 7u) & ~(size_t)7u;
	}
}

void agg_set_sink(struct agg *a, agg_sink_fn *fn, void *arg)
{
	a->sink = fn;
	a->sink_arg = arg;
}

size_t agg_nprofiles(const struct agg *a)
{
	return a->nevs;
}

int agg_compact(struct agg *a, const char *event_name, const uint8_t *keep, uint32_t *newidx)
{
	struct evprof *e = evprof_find(a, event_name);

	if (!e)
		return -ENOENT;
	/* Held samples carry location ids of this profile (struct held). */
	if (a->held_len)
		return -EBUSY;
	{
		struct prof *c = prof_compact(e->prof, keep, newidx);

		prof_free(e->prof);
		e->prof = c;
	}
	/* Everything that holds the old profile's ids, indexes or interned stacks starts
	 * again; it fills from the next samples. */
	if (e->memo)
		memset(e->memo, 0, MEMO_SLOTS * sizeof(*e->memo));
	if (e->smemo)
		memset(e->smemo, 0, SMEMO_SLOTS * sizeof(*e->smemo));
	evprof_free_maps(e);
	/* The keys of the labels the aggregator adds, as ids of the new profile's strings:
	 * an id kept from the old one names another string there. */
	e->k_thread = prof_str(e->prof, "thread");
	e->k_goroutine = prof_str(e->prof, "goroutine");
	e->k_goroutine_fn = prof_str(e->prof, "goroutine_fn");
	/* The main executable's mapping was kept as the first one (prof_compact); when it
	 * was not known yet, the next sample adds it first. */
	e->main_mapped = prof_main_mapping(e->prof) != 0;
	return 0;
}

struct prof *agg_profile_at(struct agg *a, size_t i, const char **event_name)
{
	if (i >= a->nevs)
		return NULL;
	if (event_name)
		*event_name = a->evs[i]->name;
	return a->evs[i]->prof;
}

struct prof *agg_profile(struct agg *a, const char *event_name)
{
	struct evprof *e = evprof_find(a, event_name);

	return e ? e->prof : NULL;
}

void agg_get_stats(const struct agg *a, struct agg_stats *st)
{
	*st = a->st;
}

void agg_set_times(struct agg *a, int64_t start_wall_ns, int64_t duration_ns)
{
	size_t i;

	for (i = 0; i < a->nevs; i++)
		prof_set_time(a->evs[i]->prof, start_wall_ns, duration_ns);
}
