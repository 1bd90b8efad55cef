/* hashmap.h: the map from 64-bit keys to 64-bit values behind the tables keyed by ids,
 * addresses and pointers (the aggregator's locations and label sets, the view model's
 * functions, stacks, tree nodes and label values). */
#ifndef GOTOP_HASHMAP_H
#define GOTOP_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/util.h"

/*
 * A zero-filled struct is an empty map (struct hashmap m = { 0 }); hashmap_free empties
 * it again. Open addressing with linear probing from util_mix64(key), a power-of-two
 * capacity doubled before it is 3/4 full: the keys are ids and addresses whose low bits
 * alone cluster. An empty slot holds the key 0, so that a probe reads one array and no
 * flags beside it; the key 0 itself is kept past the table's end (vals[cap]). The
 * aggregator probes once per address it has not memoized (agg.c's stack memo), so the
 * probe loops are inline here like xgrow's test, and only growth is out of line.
 * Entries are never removed. A value starts at 0. A value pointer is borrowed: valid
 * until the next hashmap_put or hashmap_free on the same map.
 */
struct hashmap {
	uint64_t *keys; /* cap slots, 0: empty */
	uint64_t *vals; /* cap + 1: vals[cap] is the key 0's */
	size_t cap;
	size_t n;       /* keys in keys[] (the key 0 not counted) */
	int has_zero;   /* the key 0 is in the map */
};

/* hashmap_put's growth and its key 0 (see hashmap_put). */
uint64_t *hashmap_put_slow(struct hashmap *m, uint64_t key, int *created);

/* The value of key, or NULL when the map does not hold it. */
static inline uint64_t *hashmap_get(const struct hashmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	if (!key)
		return m->has_zero ? &m->vals[m->cap] : NULL;
	for (i = util_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key)
			return &m->vals[i];
		if (!m->keys[i])
			return NULL;
	}
}

/* The value of key, added as 0 when the map does not hold it; *created (when not NULL)
 * says whether it was added. Never fails (out of memory is fatal: xcalloc). */
static inline uint64_t *hashmap_put(struct hashmap *m, uint64_t key, int *created)
{
	size_t i;

	if (!key || (m->n + 1) * 4 > m->cap * 3)
		return hashmap_put_slow(m, key, created);
	for (i = util_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->keys[i] == key) {
			if (created)
				*created = 0;
			return &m->vals[i];
		}
		if (!m->keys[i]) {
			m->keys[i] = key;
			m->n++;
			if (created)
				*created = 1;
			return &m->vals[i];
		}
	}
}

/* The number of keys the map holds. */
static inline size_t hashmap_count(const struct hashmap *m)
{
	return m->n + (m->has_zero != 0);
}

/* Frees the tables and leaves m an empty map. */
void hashmap_free(struct hashmap *m);

#endif
