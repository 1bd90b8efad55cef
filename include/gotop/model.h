/* model.h: the analysis behind the views: flat profile, top-down call tree, callers of a
 * function, and shares by label, thread or goroutine, of one profile under focus filters
 * (like go tool pprof -focus, -ignore and -tagfocus). No terminal I/O. */
#ifndef GOTOP_MODEL_H
#define GOTOP_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/profile.h"

struct model;

/* A function, by name (entries of the profile with the same name are one function).
 * Strings are raw bytes from the profile: escape them before printing. */
struct model_fn {
	const char *name;
	size_t name_len;
	const char *file;      /* source file, or NULL */
	const char *module;    /* mapping (executable or library) path, or NULL */
	uint64_t hash;         /* of the name: the same in every profile */
};

enum model_filter_kind {
	MODEL_FOCUS,           /* keep samples whose stack has a matching function */
	MODEL_IGNORE,          /* drop samples whose stack has a matching function */
	MODEL_LABEL,           /* keep samples carrying the label key=value */
};

/* Filters combine: every FOCUS must match, no IGNORE may, and for each label key at
 * least one of its LABEL filters must match (values of one key are alternatives).
 * Strings are bytes: key_len and str_len give their lengths (labels from a target may
 * hold NUL bytes); 0 means up to the NUL, so C strings need no length. */
struct model_filter {
	enum model_filter_kind kind;
	int exact;             /* FOCUS/IGNORE: the whole name (1) or a substring (0) */
	const char *key;       /* LABEL: the label key */
	const char *str;       /* FOCUS/IGNORE: name or substring; LABEL: string value, or
				* NULL for a numeric label */
	int64_t num;           /* LABEL: numeric value when str is NULL */
	size_t key_len, str_len;
};

struct model_totals {
	int64_t value, all_value;     /* event value (column 1, else 0) passing / all */
	uint64_t count, all_count;    /* samples (column 0) passing / all */
};

/* Builds the model of a profile. p is borrowed and must outlive the model (or its
 * replacement by model_update), unchanged (a snapshot): its values are read in place.
 * by_line: flat rows per (function, line) instead of per function. Never fails. */
struct model *model_new(const struct prof *p, int by_line);
/* Brings m up to p, a later snapshot of the profile m was built from (prof_same_tables,
 * with at least as many entries): only the new locations and samples are worked out, and
 * every sample's values are taken from p. p replaces the profile m borrows. The filters
 * become f[0..nf), as model_set_filters sets them (NULL, 0: none). Returns 0, or -1 when
 * p is not such a snapshot or by_line differs (m is left as it was): then build a new
 * model. Function indexes stay valid. */
int model_update(struct model *m, const struct prof *p, int by_line, const struct model_filter *f,
		 size_t nf);
void model_free(struct model *m);
const struct prof *model_prof(const struct model *m);

size_t model_nfuncs(const struct model *m);
/* Borrowed, valid until model_free. NULL for a bad index. */
const struct model_fn *model_fn(const struct model *m, uint32_t i);
/* Index of the function with exactly this name, or -1. */
long model_find_fn(const struct model *m, const char *name, size_t len);

/* Replaces the filters (copied). Label filters naming keys or values the profile does
 * not hold match nothing. */
void model_set_filters(struct model *m, const struct model_filter *f, size_t n);
void model_totals(const struct model *m, struct model_totals *t);

struct model_flat {
	uint32_t fn;
	int64_t line;          /* by_line: the row's line; else the line with the most self (the lowest of equals) */
	int64_t self, total;
	uint64_t self_n, total_n;
};
/* The flat profile (unsorted). Caller frees *rows. Returns the number of rows. */
size_t model_flat(struct model *m, struct model_flat **rows);

struct model_node {
	uint32_t fn;
	uint32_t parent;       /* node index; the root (index 0) is its own parent */
	uint32_t depth;        /* root 0, its children 1, ... */
	uint32_t nkids;
	const uint32_t *kids;  /* node indexes, by total descending then name */
	int64_t self, total;
	uint64_t self_n, total_n;
	uint64_t id;           /* hash of the path from the root: the same in every profile */
};

struct model_tree {
	size_t n;
	struct model_node *nodes; /* nodes[0] is a synthetic root holding the totals */
};

/* Top-down call tree of the samples passing the filters. Free with model_tree_free. Its
 * nodes are the model's own, to read only: the tree is valid until the next call on m
 * other than reads (a later model_tree_topdown, model_update, model_set_filters,
 * model_free). */
struct model_tree *model_tree_topdown(struct model *m);
/* Bottom-up tree of function fn: nodes[0] is fn itself (total: samples with fn on the
 * stack; self: with fn as leaf), its children are its callers, theirs their callers.
 * With recursion the innermost call of fn counts. */
struct model_tree *model_tree_callers(struct model *m, uint32_t fn);
void model_tree_free(struct model_tree *t);

/* A label key seen in the profile. */
struct model_key {
	const char *key;
	size_t len;
	int numeric;           /* values are numbers (thread, goroutine) */
	uint64_t count;        /* samples carrying it */
};
/* Label keys, sorted by name. Caller frees *keys (the strings are borrowed). */
size_t model_label_keys(struct model *m, struct model_key **keys);

struct model_value {
	const char *str;       /* string value (borrowed) or NULL when numeric */
	size_t len;
	int64_t num;
	int64_t value;
	uint64_t n;
	long top_fn;           /* leaf function with the most value, or -1 */
	size_t rep;            /* profile sample index of a sample with this value whose other
				* string labels are the set holding the most of its value */
};
/* Values of label key (key_len bytes, 0: up to the NUL) under the filters, except the
 * filters on that key itself (so the other values stay visible), by value descending.
 * Sets *t to the totals those values share. Caller frees *vals. */
size_t model_label_values(struct model *m, const char *key, size_t key_len,
			  struct model_value **vals, struct model_totals *t);

/* One address of a function's code that has samples (model_addresses). */
struct model_addr {
	uint64_t mapping;      /* the profile's mapping id, 0 when none */
	uint64_t address;      /* as the location holds it: the sampled instruction, or for a
				* caller's frame the return address */
	int is_return;         /* a caller's frame (not the sample's leaf) */
	int64_t self, total;   /* value: as the leaf / anywhere on the stack (once a sample) */
	uint64_t self_n, total_n;
};
/* The addresses of function fn's code: locations whose outermost frame is fn (its own
 * code, and code inlined into it), under the filters, unsorted. Caller frees *rows.
 * Returns the count. */
size_t model_addresses(struct model *m, uint32_t fn, struct model_addr **rows);
/* The function whose code holds the most samples of fn inlined into it (fn an inner frame
 * of its locations), or -1 when fn is nowhere inlined. */
long model_inlined_into(struct model *m, uint32_t fn);

#endif
