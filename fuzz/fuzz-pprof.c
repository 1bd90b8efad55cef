/* fuzz-pprof.c: libFuzzer harness for the pprof decoder and writers: decode, then encode and decode again, which must be a fixed point; folded stacks of every value column. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"

/*
 * Input: a profile, gzipped or not. Whatever decodes is read through every accessor,
 * encoded, decoded and encoded again: pprof.h promises that a profile written by
 * pprof_encode decodes with its own ids, so the two encodings must be the same bytes.
 * A clone merged into itself exercises the writer on a profile it did not decode.
 */
static volatile uint64_t sink;

static void walk(const struct prof *p)
{
	const struct prof_value_type *types;
	size_t i, k, nt = prof_sample_types(p, &types);
	struct prof_sample s;

	for (i = 0; i < prof_nstrings(p); i++) {
		size_t len;
		const char *str = prof_string(p, (uint32_t)i, &len);

		if (!str)
			abort();
		for (k = 0; k < len; k++)
			sink += (uint8_t)str[k];
	}
	for (i = 0; i < prof_nmappings(p); i++)
		sink += prof_mapping_at(p, i)->start;
	for (i = 0; i < prof_nfunctions(p); i++)
		sink += (uint64_t)prof_function_at(p, i)->start_line;
	for (i = 0; i < prof_nlocations(p); i++) {
		const struct prof_location *l = prof_location_at(p, i);

		for (k = 0; k < l->nlines; k++)
			sink += (uint64_t)l->lines[k].line;
	}
	for (i = 0; i < prof_nsamples(p); i++) {
		if (prof_sample_at(p, i, &s) != 0)
			abort();
		for (k = 0; k < s.nlocs; k++)
			sink += s.locs[k];
		for (k = 0; k < s.nlabels; k++)
			sink += (uint64_t)s.labels[k].num;
	}
	for (i = 0; i < nt && i < PROF_MAX_VALUES; i++)
		sink += (uint64_t)prof_total(p, i);
}

/* Folded stacks (what `view --save X.folded` and `record --format folded` write) of every
 * value column: each line ends in a space and a number, and no line break or ';' comes
 * from a name (pprof.h). */
static void folded(const struct prof *p)
{
	size_t col, stride, i, nl;
	uint8_t *b;
	size_t n;

	prof_values(p, &stride);
	for (col = 0; col <= stride; col++) {
		int r = pprof_folded(p, col, &b, &n);

		if (col == stride) {
			if (r == 0 && prof_nsamples(p))
				abort(); /* not a value column */
			if (r == 0)
				free(b);
			continue;
		}
		if (r)
			abort();
		for (i = 0, nl = 0; i < n; i++) {
			if (b[i] < 0x20 && b[i] != '\n')
				abort();
			if (b[i] == '\n') {
				if (!i || b[i - 1] < '0' || b[i - 1] > '9')
					abort();
				nl++;
			}
		}
		if (n && b[n - 1] != '\n')
			abort();
		sink += nl;
		free(b);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof *p, *q, *c;
	uint8_t *b1 = NULL, *b2 = NULL, *b3 = NULL;
	size_t n1 = 0, n2 = 0, n3 = 0;

	p = pprof_decode(data, size);
	if (!p)
		return 0;
	walk(p);
	folded(p);
	if (pprof_encode(p, &b1, &n1) != 0)
		abort();
	q = pprof_decode(b1, n1);
	if (!q)
		abort(); /* our own output must decode */
	walk(q);
	if (pprof_encode(q, &b2, &n2) != 0)
		abort();
	if (n1 != n2 || memcmp(b1, b2, n1) != 0)
		abort(); /* encode(decode(encode(p))) == encode(p) */
	c = prof_clone(q);
	prof_merge(c, q);
	walk(c);
	if (pprof_encode(c, &b3, &n3) != 0)
		abort();
	prof_free(c);
	c = pprof_decode(b3, n3);
	if (!c)
		abort();
	prof_free(c);
	free(b1);
	free(b2);
	free(b3);
	prof_free(q);
	prof_free(p);
	return 0;
}
