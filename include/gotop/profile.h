/* profile.h: an in-memory pprof profile (strings, mappings, functions, locations,
 * samples with values and labels): what `record` writes and what the UI shows. */
#ifndef GOTOP_PROFILE_H
#define GOTOP_PROFILE_H

#include <stddef.h>
#include <stdint.h>

/* Field meanings follow github.com/google/pprof/proto/profile.proto. Ids of
 * mappings, functions and locations are 1-based (0 means none), string ids are
 * indexes into the string table where 0 is always "". */
#define PROF_MAX_VALUES 4

struct prof;

struct prof_value_type {
	uint32_t type, unit; /* string ids */
};

struct prof_mapping {
	uint64_t id;
	uint64_t start, limit, offset;
	uint32_t filename, build_id; /* string ids */
	uint8_t has_functions, has_filenames, has_line_numbers, has_inline_frames;
};

struct prof_function {
	uint64_t id;
	uint32_t name, system_name, filename; /* string ids */
	int64_t start_line;
};

/* One line of a location. A location's lines go innermost first: lines[0] is the
 * deepest inlined function, the last one is the function the code belongs to. */
struct prof_line {
	uint64_t function; /* function id */
	int64_t line;
};

struct prof_location {
	uint64_t id;
	uint64_t mapping, address;
	uint32_t nlines;
	const struct prof_line *lines;
	uint8_t is_folded;
};

/* A label: string valued when str != 0, else numeric (num with unit num_unit). */
struct prof_label {
	uint32_t key, str;
	int64_t num;
	uint32_t num_unit;
};

struct prof_sample {
	uint32_t nlocs, nlabels;
	const uint32_t *locs; /* location ids, leaf first (interned: equal stacks, one array) */
	/* The stack's number in the profile's tables: 0 for no locations, else 1, 2, ... in
	 * the order stacks were first added. Equal stacks, equal numbers (and locs). */
	uint32_t stack;
	const struct prof_label *labels; /* sorted by (key, str, num) */
	int64_t values[PROF_MAX_VALUES];
};

/* Lifecycle. prof_new never fails (out of memory is fatal). prof_free accepts NULL. */
struct prof *prof_new(void);
void prof_free(struct prof *p);

/* Interns a string (bytes, may hold NUL when given a length) and returns its id.
 * The same bytes always give the same id. */
uint32_t prof_str(struct prof *p, const char *s);
uint32_t prof_strn(struct prof *p, const char *s, size_t len);
/* Borrowed, valid until prof_free. Sets *lenp when lenp != NULL. NULL for a bad id. */
const char *prof_string(const struct prof *p, uint32_t id, size_t *lenp);
size_t prof_nstrings(const struct prof *p);

/* Metadata. At most PROF_MAX_VALUES sample types. */
void prof_set_sample_types(struct prof *p, const struct prof_value_type *types, size_t n);
size_t prof_sample_types(const struct prof *p, const struct prof_value_type **types);
void prof_set_period(struct prof *p, struct prof_value_type type, int64_t period);
void prof_get_period(const struct prof *p, struct prof_value_type *type, int64_t *period);
void prof_set_time(struct prof *p, int64_t time_nanos, int64_t duration_nanos);
void prof_get_time(const struct prof *p, int64_t *time_nanos, int64_t *duration_nanos);
void prof_add_comment(struct prof *p, const char *text);
size_t prof_comments(const struct prof *p, const uint32_t **ids);
void prof_set_default_sample_type(struct prof *p, uint32_t type);
uint32_t prof_default_sample_type(const struct prof *p);

/* Adders return the id of an existing equal entry when there is one: mappings are
 * equal by (start, limit, offset, filename), functions by all fields, locations by
 * (mapping, address, lines). The id field of the argument is ignored. */
uint64_t prof_add_mapping(struct prof *p, const struct prof_mapping *m);
uint64_t prof_add_function(struct prof *p, uint32_t name, uint32_t system_name,
			   uint32_t filename, int64_t start_line);
uint64_t prof_add_location(struct prof *p, uint64_t mapping, uint64_t address,
			   const struct prof_line *lines, size_t nlines);

/* Adds values to the sample with these locations and labels (created if new). Labels
 * are copied and sorted; their order in the argument does not matter. values holds one
 * entry per sample type (one entry when none are set); NULL adds nothing. */
void prof_add_sample(struct prof *p, const uint64_t *locs, size_t nlocs,
		     const int64_t *values, const struct prof_label *labels, size_t nlabels);
/* The same, but when create is 0 only to a sample that exists: returns the sample's
 * index, or -1 when there is none and create is 0. */
long prof_add_to_sample(struct prof *p, const uint64_t *locs, size_t nlocs,
			const int64_t *values, const struct prof_label *labels, size_t nlabels,
			int create);

/* Adds values to sample i (the index prof_add_to_sample returned): for a caller that knows
 * the sample is the same as one it added before. 0, or -ERANGE when there is no sample i. */
int prof_add_values(struct prof *p, size_t i, const int64_t *values);

/* Read access for the writer, the UI and tests. Pointers are borrowed and stay
 * valid until prof_free (entries never move), or for a snapshot until something is
 * added to it. Index i is 0-based; the entity with id k is at index k-1. */
/* The main executable's mapping (0: not known). pprof files list it first: go tool pprof
 * takes the first mapping for the main binary (github.com/google/pprof profile.proto:
 * "mapping[0] will be the main binary"). */
void prof_set_main_mapping(struct prof *p, uint64_t mapping);
uint64_t prof_main_mapping(const struct prof *p);
size_t prof_nmappings(const struct prof *p);
const struct prof_mapping *prof_mapping_at(const struct prof *p, size_t i);
size_t prof_nfunctions(const struct prof *p);
const struct prof_function *prof_function_at(const struct prof *p, size_t i);
size_t prof_nlocations(const struct prof *p);
const struct prof_location *prof_location_at(const struct prof *p, size_t i);
size_t prof_nsamples(const struct prof *p);
/* Fills *out (its pointers borrowed as above); returns 0, or -ERANGE. */
int prof_sample_at(const struct prof *p, size_t i, struct prof_sample *out);
/* Every sample's values at once (one per sample type, at least one): sample i's are at
 * [i * *stride, (i + 1) * *stride). Borrowed like the entries; NULL when there are no
 * samples. Cheaper than prof_sample_at for a reader that only wants the values. */
const int64_t *prof_values(const struct prof *p, size_t *stride);
/* Whether a and b share their tables: b is a and its snapshots, or snapshots of one
 * profile, so an index means the same entry in both (up to the smaller count). */
int prof_same_tables(const struct prof *a, const struct prof *b);
/* Replaces the values of sample i (one per sample type, one when none are set); its
 * stack and labels stay. 0, or -ERANGE. Allowed on a snapshot: values are its own. */
int prof_set_sample_values(struct prof *p, size_t i, const int64_t *values);
/* Adds add[0..n) to the first n values of sample i (n at most its sample types), when
 * its stack is the interned array locs of nlocs entries (prof_sample_at's locs). 0, or
 * -1 when it is not (or a bad index): a caller that remembered an index checks it so,
 * without copying the values out and back. Sums wrap, as prof_total's. */
int prof_sample_add(struct prof *p, size_t i, const uint32_t *locs, size_t nlocs,
		    const int64_t *add, size_t n);

/* Sum of value column `col` over all samples. */
int64_t prof_total(const struct prof *p, size_t col);

/* A deep copy with the same ids and metadata. Never fails; caller frees with prof_free. */
struct prof *prof_clone(const struct prof *p);
/* A copy for readers on other threads: it shares p's strings, mappings, functions,
 * locations and sample stacks and labels (append-only, never moved) and copies only the
 * counts, the sample values and the metadata, so it costs 8 bytes per sample and value
 * column. It keeps seeing p's entries as they were, while p's one writing thread goes on
 * adding to p (and may free it). Setting metadata or values on the copy is fine; adding
 * an entry to it (prof_str, prof_add_*, prof_merge into it) first turns it into a deep
 * copy. Never fails; caller frees with prof_free, on any thread. */
struct prof *prof_snapshot(const struct prof *p);
/* Adds everything in src to dst (dst != src): strings, mappings, functions and locations
 * get dst ids, samples are added with their values. When both have sample types, value
 * columns are matched by (type, unit) names and columns dst lacks are dropped; otherwise
 * by position. Metadata dst lacks (sample and period types, period, default sample type)
 * comes from src, comments are appended once, and the time span becomes the union. */
void prof_merge(struct prof *dst, const struct prof *src);
/* A new profile with p's metadata and only the samples i with keep[i], with their values,
 * stacks and labels, and only the strings, mappings, functions and locations these use,
 * so its ids differ from p's. With keep NULL it is prof_clone: every entry, the same ids.
 * newidx (NULL, or one entry per sample of p) gets each sample's index in the copy,
 * UINT32_MAX for those left out. p's main mapping stays the first. Never fails; caller
 * frees with prof_free. */
struct prof *prof_compact(const struct prof *p, const uint8_t *keep, uint32_t *newidx);
/* Marks in keep (one byte per sample) the half of p's samples (the larger half when odd)
 * that come first in this order: those with first[i] set (first may be NULL), then the
 * higher count (value 0), then the later index (the newer entry). */
void prof_keep_heaviest(const struct prof *p, const uint8_t *first, uint8_t *keep);
/* Sets every sample's values to zero and keeps every entry, so re-adding the same
 * stacks allocates nothing. pprof_encode leaves all-zero samples out. */
void prof_reset_samples(struct prof *p);

#endif
