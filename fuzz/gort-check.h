/* gort-check.h: the checks of a decoded label set, shared by the harnesses that decode
 * labels (fuzz-goruntime, fuzz-gosnap). */
#ifndef GOTOP_FUZZ_GORT_CHECK_H
#define GOTOP_FUZZ_GORT_CHECK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/goruntime.h"

/* Where the bytes are summed, so that reading them is not optimised away. */
static volatile size_t fz_label_sink;

/* What goruntime.h promises about a decoded label set; abort() when it is broken. */
static inline void fz_check_labels(const struct gort_labels *l)
{
	uint32_t i;

	if (!l)
		return;
	if (l->n > GORT_MAX_LABELS || (l->n && !l->pairs))
		abort();
	for (i = 0; i < l->n; i++) {
		const struct gort_label *p = &l->pairs[i];

		if (p->klen > GORT_MAX_STRLEN + sizeof(GORT_TRUNC_MARK) ||
		    p->vlen > GORT_MAX_STRLEN + sizeof(GORT_TRUNC_MARK))
			abort();
		if (p->key[p->klen] != 0 || p->value[p->vlen] != 0)
			abort(); /* NUL-terminated for convenience */
		/* every byte readable (ASan) */
		for (uint32_t k = 0; k < p->klen; k++)
			fz_label_sink += (uint8_t)p->key[k];
		for (uint32_t k = 0; k < p->vlen; k++)
			fz_label_sink += (uint8_t)p->value[k];
		if (i && memcmp(l->pairs[i - 1].key, p->key,
				l->pairs[i - 1].klen < p->klen ? l->pairs[i - 1].klen : p->klen) > 0)
			abort(); /* sorted by key bytes */
	}
}

#endif
