/* hashmap.c: the growth of the 64-bit key to value map (its lookups are inline in
 * hashmap.h). */
#include "config.h"
#include "gotop/hashmap.h"

#include <stdlib.h>
#include <string.h>

/* The first capacity: small, as the view model keeps several maps per filter and view. */
#define HASHMAP_FIRST 256

/* Doubles m's capacity and puts every key back. */
static void hashmap_grow(struct hashmap *m)
{
	struct hashmap old = *m;
	size_t j;

	m->cap = old.cap ? old.cap * 2 : HASHMAP_FIRST;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap + 1, sizeof(*m->vals));
	m->n = 0;
	for (j = 0; j < old.cap; j++)
		if (old.keys[j])
			*hashmap_put(m, old.keys[j], NULL) = old.vals[j];
	if (old.cap)
		m->vals[m->cap] = old.vals[old.cap];
	free(old.keys);
	free(old.vals);
}

uint64_t *hashmap_put_slow(struct hashmap *m, uint64_t key, int *created)
{
	if ((m->n + 1) * 4 > m->cap * 3)
		hashmap_grow(m);
	if (key)
		return hashmap_put(m, key, created); /* room now: the inline probe */
	if (created)
		*created = !m->has_zero;
	m->has_zero = 1;
	return &m->vals[m->cap];
}

void hashmap_free(struct hashmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
