/* test-profile.c: unit tests of the in-memory profile (interning, dedup, samples with
 * labels, growth, clone, merge, reset, snapshots read on another thread). */
#include "config.h"
#include "gotop/profile.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>


/* A sample's stack (stored as 4-byte ids) as the 8-byte ids the adders take. */
static const uint64_t *wide(const struct prof_sample *s)
{
	static uint64_t buf[4][256];
	static int turn;
	uint64_t *b = buf[turn++ & 3];

	for (uint32_t i = 0; i < s->nlocs && i < 256; i++)
		b[i] = s->locs[i];
	return b;
}

static const char *S(const struct prof *p, uint32_t id)
{
	const char *s = prof_string(p, id, NULL);

	assert_non_null(s);
	return s;
}

static void test_strings(void **state)
{
	struct prof *p = prof_new();
	size_t len = 99;

	assert_int_equal(prof_nstrings(p), 1);
	assert_int_equal(prof_str(p, ""), 0);
	assert_int_equal(prof_str(p, NULL), 0);
	assert_string_equal(prof_string(p, 0, &len), "");
	assert_int_equal(len, 0);

	uint32_t a = prof_str(p, "main.main");
	uint32_t b = prof_str(p, "main.work");
	assert_int_not_equal(a, 0);
	assert_int_not_equal(a, b);
	assert_int_equal(prof_str(p, "main.main"), a);
	assert_int_equal(prof_strn(p, "main.mainXYZ", 9), a);
	assert_string_equal(S(p, a), "main.main");
	assert_string_equal(S(p, b), "main.work");
	assert_int_equal(prof_nstrings(p), 3);

	/* Bytes with NUL inside: a length-given string is its bytes, not a C string. */
	uint32_t n1 = prof_strn(p, "a\0b", 3);
	uint32_t n2 = prof_strn(p, "a\0c", 3);
	uint32_t n3 = prof_strn(p, "a", 1);
	uint32_t n4 = prof_strn(p, "a\0", 2);
	assert_int_not_equal(n1, n2);
	assert_int_not_equal(n1, n3);
	assert_int_not_equal(n3, n4);
	assert_int_not_equal(n1, n4);
	assert_int_equal(prof_strn(p, "a\0b", 3), n1);
	assert_int_equal(prof_str(p, "a"), n3);
	const char *s = prof_string(p, n1, &len);
	assert_int_equal(len, 3);
	assert_memory_equal(s, "a\0b", 3);
	assert_int_equal(s[3], '\0'); /* always NUL-terminated too */
	assert_int_equal(prof_strn(p, "\0", 1), prof_strn(p, "\0", 1));
	assert_int_not_equal(prof_strn(p, "\0", 1), 0);

	/* Bad ids. */
	len = 7;
	assert_null(prof_string(p, (uint32_t)prof_nstrings(p), &len));
	assert_int_equal(len, 0);
	assert_null(prof_string(p, UINT32_MAX, NULL));

	/* Pointers stay valid while the table grows. */
	const char *keep = prof_string(p, a, NULL);
	char buf[32];
	for (int i = 0; i < 20000; i++) {
		snprintf(buf, sizeof(buf), "s%d", i);
		prof_str(p, buf);
	}
	assert_ptr_equal(prof_string(p, a, NULL), keep);
	assert_string_equal(keep, "main.main");
	prof_free(p);
	prof_free(NULL);
}

static void test_metadata(void **state)
{
	struct prof *p = prof_new();
	struct prof_value_type types[5], pt;
	const struct prof_value_type *got;
	int64_t t, d, period;
	const uint32_t *cids;

	assert_int_equal(prof_sample_types(p, &got), 0);
	types[0] = (struct prof_value_type){prof_str(p, "samples"), prof_str(p, "count")};
	types[1] = (struct prof_value_type){prof_str(p, "cpu"), prof_str(p, "nanoseconds")};
	prof_set_sample_types(p, types, 2);
	assert_int_equal(prof_sample_types(p, &got), 2);
	assert_string_equal(S(p, got[1].type), "cpu");
	assert_string_equal(S(p, got[1].unit), "nanoseconds");
	/* More than PROF_MAX_VALUES are cut to the maximum. */
	for (int i = 0; i < 5; i++)
		types[i] = types[0];
	prof_set_sample_types(p, types, 5);
	assert_int_equal(prof_sample_types(p, NULL), PROF_MAX_VALUES);
	prof_set_sample_types(p, types, 2);

	prof_set_period(p, types[1], 1000000);
	prof_get_period(p, &pt, &period);
	assert_int_equal(pt.type, types[1].type);
	assert_int_equal(period, 1000000);
	prof_set_time(p, 1700000000123456789LL, 5000000000LL);
	prof_get_time(p, &t, &d);
	assert_int_equal(t, 1700000000123456789LL);
	assert_int_equal(d, 5000000000LL);
	prof_add_comment(p, "first");
	prof_add_comment(p, "second");
	assert_int_equal(prof_comments(p, &cids), 2);
	assert_string_equal(S(p, cids[0]), "first");
	assert_string_equal(S(p, cids[1]), "second");
	prof_set_default_sample_type(p, types[1].type);
	assert_int_equal(prof_default_sample_type(p), types[1].type);
	prof_free(p);
}

static void test_dedup(void **state)
{
	struct prof *p = prof_new();
	struct prof_mapping m = {
		.id = 77, .start = 0x400000, .limit = 0x800000, .offset = 0x1000,
		.filename = prof_str(p, "/bin/x"), .build_id = prof_str(p, "abc"),
		.has_functions = 1,
	};

	uint64_t m1 = prof_add_mapping(p, &m);
	assert_int_equal(m1, 1);
	assert_int_equal(prof_mapping_at(p, 0)->id, 1); /* the argument's id is ignored */
	m.build_id = prof_str(p, "other"); /* not part of the key */
	m.has_line_numbers = 1;
	assert_int_equal(prof_add_mapping(p, &m), m1);
	assert_string_equal(S(p, prof_mapping_at(p, 0)->build_id), "abc");
	m.offset = 0;
	uint64_t m2 = prof_add_mapping(p, &m);
	assert_int_equal(m2, 2);
	m.offset = 0x1000;
	m.filename = prof_str(p, "/bin/y");
	assert_int_equal(prof_add_mapping(p, &m), 3);
	m.filename = prof_str(p, "/bin/x");
	m.limit++;
	assert_int_equal(prof_add_mapping(p, &m), 4);
	assert_int_equal(prof_nmappings(p), 4);
	assert_null(prof_mapping_at(p, 4));

	uint32_t fa = prof_str(p, "a"), fb = prof_str(p, "b"), file = prof_str(p, "a.go");
	uint64_t f1 = prof_add_function(p, fa, fa, file, 10);
	assert_int_equal(f1, 1);
	assert_int_equal(prof_add_function(p, fa, fa, file, 10), f1);
	assert_int_equal(prof_add_function(p, fa, fa, file, 11), 2);
	assert_int_equal(prof_add_function(p, fa, fb, file, 10), 3);
	assert_int_equal(prof_add_function(p, fa, fa, 0, 10), 4);
	assert_int_equal(prof_add_function(p, fb, fa, file, 10), 5);
	assert_int_equal(prof_nfunctions(p), 5);
	const struct prof_function *f = prof_function_at(p, 1);
	assert_int_equal(f->id, 2);
	assert_int_equal(f->name, fa);
	assert_int_equal(f->start_line, 11);
	assert_null(prof_function_at(p, 5));

	struct prof_line l2[2] = {{1, 100}, {2, 200}};
	struct prof_line l2r[2] = {{2, 200}, {1, 100}};
	uint64_t loc1 = prof_add_location(p, m1, 0x401000, l2, 2);
	assert_int_equal(loc1, 1);
	assert_int_equal(prof_add_location(p, m1, 0x401000, l2, 2), loc1);
	assert_int_equal(prof_add_location(p, m1, 0x401000, l2r, 2), 2);  /* order matters */
	assert_int_equal(prof_add_location(p, m1, 0x401000, l2, 1), 3);   /* fewer lines */
	assert_int_equal(prof_add_location(p, m1, 0x401000, NULL, 0), 4); /* no lines */
	assert_int_equal(prof_add_location(p, m1, 0x401000, NULL, 0), 4);
	assert_int_equal(prof_add_location(p, m2, 0x401000, l2, 2), 5);
	assert_int_equal(prof_add_location(p, m1, 0x401001, l2, 2), 6);
	l2[1].line = 201;
	assert_int_equal(prof_add_location(p, m1, 0x401000, l2, 2), 7);
	/* The location keeps its own copy of the lines. */
	const struct prof_location *l = prof_location_at(p, 0);
	assert_int_equal(l->id, 1);
	assert_int_equal(l->mapping, m1);
	assert_int_equal(l->address, 0x401000);
	assert_int_equal(l->nlines, 2);
	assert_int_equal(l->lines[0].function, 1);
	assert_int_equal(l->lines[1].line, 200);
	assert_int_equal(prof_location_at(p, 3)->nlines, 0);
	assert_int_equal(prof_nlocations(p), 7);
	assert_null(prof_location_at(p, 7));
	prof_free(p);
}

static struct prof_label slabel(struct prof *p, const char *k, const char *v)
{
	return (struct prof_label){.key = prof_str(p, k), .str = prof_str(p, v)};
}

static struct prof_label nlabel(struct prof *p, const char *k, int64_t n, const char *unit)
{
	return (struct prof_label){.key = prof_str(p, k), .num = n, .num_unit = prof_str(p, unit)};
}

static void test_samples(void **state)
{
	struct prof *p = prof_new();
	struct prof_value_type types[2] = {
		{prof_str(p, "samples"), prof_str(p, "count")},
		{prof_str(p, "cpu"), prof_str(p, "nanoseconds")},
	};
	prof_set_sample_types(p, types, 2);
	uint64_t f = prof_add_function(p, prof_str(p, "f"), 0, 0, 0);
	struct prof_line line = {f, 1};
	uint64_t a = prof_add_location(p, 0, 0x10, &line, 1);
	uint64_t b = prof_add_location(p, 0, 0x20, &line, 1);
	uint64_t stack1[] = {a, b}, stack2[] = {b, a};
	int64_t v1[] = {1, 1000}, v2[] = {2, 3000};
	struct prof_label lab1[3] = {
		nlabel(p, "thread", 1234, ""), slabel(p, "handler", "alpha"), nlabel(p, "goroutine", 7, ""),
	};
	struct prof_label lab2[3] = {lab1[2], lab1[0], lab1[1]};
	struct prof_label lab3[3] = {lab1[1], lab1[2], lab1[0]};
	struct prof_sample s;

	prof_add_sample(p, stack1, 2, v1, lab1, 3);
	prof_add_sample(p, stack1, 2, v2, lab2, 3); /* same labels, another order */
	prof_add_sample(p, stack1, 2, v1, lab3, 3);
	assert_int_equal(prof_nsamples(p), 1);
	assert_int_equal(prof_sample_at(p, 0, &s), 0);
	assert_int_equal(s.values[0], 4);
	assert_int_equal(s.values[1], 5000);
	assert_int_equal(s.nlocs, 2);
	assert_int_equal(s.locs[0], a);
	assert_int_equal(s.locs[1], b);
	/* Labels are stored sorted by key id. */
	assert_int_equal(s.nlabels, 3);
	for (uint32_t i = 1; i < s.nlabels; i++)
		assert_true(s.labels[i - 1].key <= s.labels[i].key);
	/* The caller's array is not touched. */
	assert_int_equal(lab2[0].key, lab1[2].key);

	/* Different stack order, labels, label value, unit, kind: new samples. */
	prof_add_sample(p, stack2, 2, v1, lab1, 3);
	assert_int_equal(prof_nsamples(p), 2);
	prof_add_sample(p, stack1, 2, v1, lab1, 2);
	assert_int_equal(prof_nsamples(p), 3);
	struct prof_label lab4[3] = {lab1[0], lab1[1], nlabel(p, "goroutine", 8, "")};
	prof_add_sample(p, stack1, 2, v1, lab4, 3);
	assert_int_equal(prof_nsamples(p), 4);
	lab4[2] = nlabel(p, "goroutine", 7, "count");
	prof_add_sample(p, stack1, 2, v1, lab4, 3);
	assert_int_equal(prof_nsamples(p), 5);
	lab4[2] = slabel(p, "goroutine", "7");
	prof_add_sample(p, stack1, 2, v1, lab4, 3);
	assert_int_equal(prof_nsamples(p), 6);
	prof_add_sample(p, stack1, 2, v1, NULL, 0);
	prof_add_sample(p, stack1, 1, v1, NULL, 0);
	prof_add_sample(p, NULL, 0, v1, NULL, 0);
	prof_add_sample(p, NULL, 0, v1, NULL, 0);
	assert_int_equal(prof_nsamples(p), 9);
	/* Duplicate keys are allowed and kept. */
	struct prof_label dup[2] = {slabel(p, "k", "x"), slabel(p, "k", "x")};
	prof_add_sample(p, stack1, 2, v1, dup, 2);
	prof_add_sample(p, stack1, 2, v1, dup, 1);
	assert_int_equal(prof_nsamples(p), 11);
	/* NULL values: the sample exists, nothing added. */
	prof_add_sample(p, stack2, 1, NULL, NULL, 0);
	assert_int_equal(prof_nsamples(p), 12);
	assert_int_equal(prof_sample_at(p, 11, &s), 0);
	assert_int_equal(s.values[0], 0);

	assert_int_equal(prof_total(p, 0), 4 + 11 * 1);
	assert_int_equal(prof_total(p, 1), 5000 + 11 * 1000);
	assert_int_equal(prof_total(p, 2), 0);
	assert_int_equal(prof_total(p, 99), 0);
	assert_int_equal(prof_sample_at(p, 12, &s), -ERANGE);

	/* prof_sample_add: only with the sample's own interned stack. */
	int64_t add[2] = {3, 700};
	const uint32_t *locs0;
	assert_int_equal(prof_sample_at(p, 0, &s), 0);
	locs0 = s.locs;
	assert_int_equal(prof_sample_add(p, 0, locs0, 2, add, 2), 0);
	assert_int_equal(prof_sample_add(p, 0, locs0, 1, add, 2), -1);   /* other length */
	assert_int_equal(prof_sample_add(p, 0, (uint32_t[]){(uint32_t)a, (uint32_t)b}, 2, add, 2), -1);  /* equal, not interned */
	assert_int_equal(prof_sample_at(p, 1, &s), 0);
	assert_int_equal(prof_sample_add(p, 1, locs0, 2, add, 2), -1);   /* another sample's */
	assert_int_equal(prof_sample_add(p, 0, locs0, 2, add, 3), -1);   /* more than the types */
	assert_int_equal(prof_sample_add(p, 12, locs0, 2, add, 2), -1);
	assert_int_equal(prof_sample_add(p, 0, locs0, 2, add, 1), 0);    /* the count only */
	assert_int_equal(prof_sample_at(p, 0, &s), 0);
	assert_int_equal(s.values[0], 4 + 3 + 3);
	assert_int_equal(s.values[1], 5000 + 700);
	assert_int_equal(prof_total(p, 0), 4 + 11 * 1 + 6);
	prof_free(p);
}

/* Many entries: every table grows many times and lookups still find old entries. */
static void test_growth(void **state)
{
	struct prof *p = prof_new();
	enum { N = 50000 };
	char buf[64];
	uint64_t *locs = malloc(N * sizeof(*locs));
	int64_t one = 1;

	for (int i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "pkg.func%d", i);
		uint32_t name = prof_str(p, buf);
		assert_int_equal(name, (uint32_t)i + 1);
		uint64_t f = prof_add_function(p, name, name, 0, i);
		assert_int_equal(f, (uint64_t)i + 1);
		struct prof_line l = {f, i};
		locs[i] = prof_add_location(p, 0, 0x1000 + (uint64_t)i, &l, 1);
		assert_int_equal(locs[i], (uint64_t)i + 1);
	}
	/* 3 * N samples: stacks of 1..4 frames. */
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 3 * N; i++) {
			uint64_t st[4];
			size_t n = (size_t)(i % 4) + 1;
			for (size_t k = 0; k < n; k++)
				st[k] = locs[(i + (int)k * 7) % N];
			struct prof_label lab = {.key = prof_str(p, "thread"), .num = i / N};
			prof_add_sample(p, st, n, &one, &lab, 1);
		}
	assert_int_equal(prof_nsamples(p), 3 * N);
	assert_int_equal(prof_total(p, 0), 6 * N);
	for (size_t i = 0; i < prof_nsamples(p); i++) {
		struct prof_sample s;
		assert_int_equal(prof_sample_at(p, i, &s), 0);
		assert_int_equal(s.values[0], 2);
	}
	for (int i = 0; i < N; i += 997) {
		snprintf(buf, sizeof(buf), "pkg.func%d", i);
		assert_int_equal(prof_str(p, buf), (uint32_t)i + 1);
		struct prof_line l = {(uint64_t)i + 1, i};
		assert_int_equal(prof_add_location(p, 0, 0x1000 + (uint64_t)i, &l, 1), locs[i]);
	}
	assert_int_equal(prof_nstrings(p), N + 2);
	assert_int_equal(prof_nlocations(p), N);
	free(locs);
	prof_free(p);
}

/* A profile with a bit of everything, built from names so two of them can be built
 * with different string orders. */
static struct prof *build(int variant)
{
	struct prof *p = prof_new();

	if (variant)
		prof_str(p, "zzz-first"); /* shifts every string id */
	struct prof_value_type types[2] = {
		{prof_str(p, "samples"), prof_str(p, "count")},
		{prof_str(p, "cpu"), prof_str(p, "nanoseconds")},
	};
	if (variant) {
		struct prof_value_type t = types[0];
		types[0] = types[1];
		types[1] = t;
	}
	prof_set_sample_types(p, types, 2);
	prof_set_period(p, (struct prof_value_type){prof_str(p, "cpu"), prof_str(p, "nanoseconds")},
			1000000);
	prof_set_time(p, variant ? 2000 : 1000, 500);
	prof_add_comment(p, variant ? "run B" : "run A");
	prof_add_comment(p, "shared");
	struct prof_mapping m = {.start = 0x400000, .limit = 0x500000,
				 .filename = prof_str(p, "/bin/app"),
				 .build_id = prof_str(p, "b1d"), .has_functions = 1};
	uint64_t mid = prof_add_mapping(p, &m);
	uint64_t fmain = prof_add_function(p, prof_str(p, "main"), prof_str(p, "main"),
					   prof_str(p, "app.c"), 1);
	uint64_t fwork = prof_add_function(p, prof_str(p, "work"), prof_str(p, "work"),
					   prof_str(p, "app.c"), 20);
	uint64_t finl = prof_add_function(p, prof_str(p, "inl"), prof_str(p, "inl"),
					  prof_str(p, "app.h"), 5);
	struct prof_line lmain = {fmain, 3};
	struct prof_line lwork[2] = {{finl, 6}, {fwork, 22}};
	uint64_t locmain = prof_add_location(p, mid, 0x401000, &lmain, 1);
	uint64_t locwork = prof_add_location(p, mid, 0x402000, lwork, 2);
	uint64_t st[2] = {locwork, locmain};
	struct prof_label lab[2] = {
		{.key = prof_str(p, "thread"), .num = 1234},
		{.key = prof_str(p, "handler"), .str = prof_str(p, "alpha")},
	};
	int64_t v[2] = {variant ? 1000 : 1, variant ? 1 : 1000};
	for (int i = 0; i < 3; i++)
		prof_add_sample(p, st, 2, v, lab, 2);
	prof_add_sample(p, st + 1, 1, v, lab, 1);
	return p;
}

/* Renders a profile by names (ids resolved), for comparing profiles whose ids differ. */
static char *render(const struct prof *p)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	const struct prof_value_type *types;
	size_t nt = prof_sample_types(p, &types);

	for (size_t i = 0; i < nt; i++)
		fprintf(f, "type %s/%s\n", S(p, types[i].type), S(p, types[i].unit));
	for (size_t i = 0; i < prof_nsamples(p); i++) {
		struct prof_sample s;
		prof_sample_at(p, i, &s);
		fprintf(f, "sample");
		for (size_t j = 0; j < nt; j++)
			fprintf(f, " %lld", (long long)s.values[j]);
		for (uint32_t j = 0; j < s.nlocs; j++) {
			const struct prof_location *l = prof_location_at(p, s.locs[j] - 1);
			const struct prof_mapping *m = prof_mapping_at(p, l->mapping - 1);
			fprintf(f, " @%llx[%s %s]", (unsigned long long)l->address, S(p, m->filename),
				S(p, m->build_id));
			for (uint32_t k = 0; k < l->nlines; k++) {
				const struct prof_function *fn =
					prof_function_at(p, l->lines[k].function - 1);
				fprintf(f, " %s:%s:%lld", S(p, fn->name), S(p, fn->filename),
					(long long)l->lines[k].line);
			}
		}
		for (uint32_t j = 0; j < s.nlabels; j++)
			fprintf(f, " {%s=%s/%lld}", S(p, s.labels[j].key), S(p, s.labels[j].str),
				(long long)s.labels[j].num);
		fprintf(f, "\n");
	}
	fclose(f);
	return out;
}

static void assert_same_prof(const struct prof *a, const struct prof *b)
{
	assert_int_equal(prof_nstrings(a), prof_nstrings(b));
	for (uint32_t i = 0; i < prof_nstrings(a); i++) {
		size_t la, lb;
		const char *sa = prof_string(a, i, &la), *sb = prof_string(b, i, &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(sa, sb, la);
	}
	assert_int_equal(prof_nmappings(a), prof_nmappings(b));
	for (size_t i = 0; i < prof_nmappings(a); i++)
		assert_memory_equal(prof_mapping_at(a, i), prof_mapping_at(b, i),
				    offsetof(struct prof_mapping, has_inline_frames) + 1);
	assert_int_equal(prof_nfunctions(a), prof_nfunctions(b));
	for (size_t i = 0; i < prof_nfunctions(a); i++) {
		const struct prof_function *x = prof_function_at(a, i), *y = prof_function_at(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->name, y->name);
		assert_int_equal(x->system_name, y->system_name);
		assert_int_equal(x->filename, y->filename);
		assert_int_equal(x->start_line, y->start_line);
	}
	assert_int_equal(prof_nlocations(a), prof_nlocations(b));
	for (size_t i = 0; i < prof_nlocations(a); i++) {
		const struct prof_location *x = prof_location_at(a, i), *y = prof_location_at(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->mapping, y->mapping);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->nlines, y->nlines);
		assert_int_equal(x->is_folded, y->is_folded);
		for (uint32_t k = 0; k < x->nlines; k++) {
			assert_int_equal(x->lines[k].function, y->lines[k].function);
			assert_int_equal(x->lines[k].line, y->lines[k].line);
		}
	}
	assert_int_equal(prof_nsamples(a), prof_nsamples(b));
	for (size_t i = 0; i < prof_nsamples(a); i++) {
		struct prof_sample x, y;
		prof_sample_at(a, i, &x);
		prof_sample_at(b, i, &y);
		assert_int_equal(x.nlocs, y.nlocs);
		assert_int_equal(x.nlabels, y.nlabels);
		assert_memory_equal(x.locs, y.locs, x.nlocs * sizeof(*x.locs));
		assert_memory_equal(x.values, y.values, sizeof(x.values));
		for (uint32_t k = 0; k < x.nlabels; k++) {
			assert_int_equal(x.labels[k].key, y.labels[k].key);
			assert_int_equal(x.labels[k].str, y.labels[k].str);
			assert_int_equal(x.labels[k].num, y.labels[k].num);
			assert_int_equal(x.labels[k].num_unit, y.labels[k].num_unit);
		}
	}
	const struct prof_value_type *ta, *tb;
	assert_int_equal(prof_sample_types(a, &ta), prof_sample_types(b, &tb));
	for (size_t i = 0; i < prof_sample_types(a, NULL); i++) {
		assert_int_equal(ta[i].type, tb[i].type);
		assert_int_equal(ta[i].unit, tb[i].unit);
	}
	struct prof_value_type pa, pb;
	int64_t xa, xb, ya, yb;
	prof_get_period(a, &pa, &xa);
	prof_get_period(b, &pb, &xb);
	assert_int_equal(pa.type, pb.type);
	assert_int_equal(pa.unit, pb.unit);
	assert_int_equal(xa, xb);
	prof_get_time(a, &xa, &ya);
	prof_get_time(b, &xb, &yb);
	assert_int_equal(xa, xb);
	assert_int_equal(ya, yb);
	const uint32_t *ca, *cb;
	assert_int_equal(prof_comments(a, &ca), prof_comments(b, &cb));
	if (prof_comments(a, NULL))
		assert_memory_equal(ca, cb, prof_comments(a, NULL) * sizeof(*ca));
	assert_int_equal(prof_default_sample_type(a), prof_default_sample_type(b));
}

static void test_clone(void **state)
{
	struct prof *a = build(0);
	prof_add_comment(a, "shared"); /* a repeated comment is kept twice */
	prof_set_default_sample_type(a, prof_str(a, "cpu"));
	uint32_t nul = prof_strn(a, "x\0y", 3);
	struct prof *c = prof_clone(a);

	assert_same_prof(a, c);
	size_t len;
	assert_memory_equal(prof_string(c, nul, &len), "x\0y", 3);
	assert_int_equal(len, 3);

	/* Independent: changing the clone leaves the original alone. */
	int64_t v[2] = {5, 5};
	uint64_t st[1] = {1};
	prof_add_sample(c, st, 1, v, NULL, 0);
	prof_str(c, "only in clone");
	assert_int_equal(prof_nsamples(c), prof_nsamples(a) + 1);
	assert_int_equal(prof_nstrings(c), prof_nstrings(a) + 1);
	assert_int_equal(prof_total(a, 0), 4);
	prof_free(a);
	assert_int_equal(prof_total(c, 0), 4 + 5);
	prof_free(c);

	/* Cloning an empty profile. */
	struct prof *e = prof_new();
	struct prof *ec = prof_clone(e);
	assert_same_prof(e, ec);
	prof_free(e);
	prof_free(ec);
}

static void test_merge(void **state)
{
	struct prof *a = build(0);
	struct prof *b = build(1); /* other string ids, sample type columns swapped */
	char *ra = render(a);
	char *rb = render(b);

	/* The same content by name: b's columns come out swapped. */
	assert_string_not_equal(ra, rb);

	prof_merge(a, b);
	assert_int_equal(prof_nsamples(a), 2);
	assert_int_equal(prof_nlocations(a), 2);
	assert_int_equal(prof_nfunctions(a), 3);
	assert_int_equal(prof_nmappings(a), 1);
	/* Columns matched by name: samples/count from b's column 1. */
	assert_int_equal(prof_total(a, 0), 4 + 4);
	assert_int_equal(prof_total(a, 1), 4000 + 4000);
	char *rm = render(a);
	/* Every value doubled, names unchanged. */
	assert_non_null(strstr(rm, "sample 6 6000 @402000[/bin/app b1d] inl:app.h:6 "
				   "work:app.c:22 @401000[/bin/app b1d] main:app.c:3 "
				   "{thread=/1234} {handler=alpha/0}") ?:
			strstr(rm, "sample 6 6000 @402000[/bin/app b1d] inl:app.h:6 "
				   "work:app.c:22 @401000[/bin/app b1d] main:app.c:3 "
				   "{handler=alpha/0} {thread=/1234}"));
	/* Time span: union of [1000, 1500) and [2000, 2500). */
	int64_t t, d;
	prof_get_time(a, &t, &d);
	assert_int_equal(t, 1000);
	assert_int_equal(d, 1500);
	/* Times from a decoded file may be anything: the span is held at the int64 range
	 * (the pprof fuzzer found INT64_MAX + a duration overflowing). */
	{
		struct prof *x = prof_new(), *y = prof_new();

		prof_set_time(x, INT64_MAX, 17444044798);
		prof_set_time(y, 5, 10);
		prof_merge(x, y);
		prof_get_time(x, &t, &d);
		assert_int_equal(t, 5);
		assert_int_equal(d, INT64_MAX - 5);
		prof_set_time(x, INT64_MIN, 1);
		prof_set_time(y, INT64_MAX, INT64_MAX);
		prof_merge(x, y);
		prof_get_time(x, &t, &d);
		assert_int_equal(t, INT64_MIN);
		assert_int_equal(d, INT64_MAX); /* INT64_MAX - INT64_MIN does not fit */
		prof_free(x);
		prof_free(y);
	}
	/* Comments: "run A", "shared", "run B" (shared once). */
	const uint32_t *c;
	assert_int_equal(prof_comments(a, &c), 3);
	assert_string_equal(S(a, c[2]), "run B");

	/* Merging into an empty profile gives the same content. */
	struct prof *e = prof_new();
	prof_merge(e, b);
	char *re = render(e);
	assert_string_equal(re, rb);
	/* Merging twice doubles values; no new entries. */
	prof_merge(e, b);
	assert_int_equal(prof_nsamples(e), prof_nsamples(b));
	assert_int_equal(prof_total(e, 0), 2 * prof_total(b, 0));

	free(ra);
	free(rb);
	free(rm);
	free(re);
	prof_free(a);
	prof_free(b);
	prof_free(e);
}

/* Sample lines of render(p) (they follow the "type" lines), one string per sample. */
static char **render_samples(const struct prof *p, size_t *n)
{
	char *r = render(p), *save = NULL, *line;
	char **out = calloc(prof_nsamples(p) + 1, sizeof(*out));

	*n = 0;
	for (line = strtok_r(r, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "sample", 6))
			out[(*n)++] = strdup(line);
	free(r);
	return out;
}

static void free_lines(char **l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(l[i]);
	free(l);
}

/* prof_compact keeps the chosen samples by content, and only what they use. */
/* prof_keep_heaviest: half the samples, the marked ones first, then by count, then the
 * newer of equals. */
static void test_keep_heaviest(void **state)
{
	struct prof *p = prof_new();
	uint64_t loc = prof_add_location(p, 0, 0x1000, NULL, 0);
	/* Counts by index; 0 and 5 are the history's (first). */
	int64_t counts[7] = {1, 9, 4, 4, 2, 0, 7};
	uint8_t first[7] = {1, 0, 0, 0, 0, 1, 0}, keep[7];
	struct prof_label l = {.key = prof_str(p, "req")};

	(void)state;
	for (int i = 0; i < 7; i++) {
		int64_t v[2] = {counts[i], counts[i] * 1000};

		l.num = i; /* an entry each */
		prof_add_sample(p, &loc, 1, v, &l, 1);
	}
	assert_int_equal(prof_nsamples(p), 7);
	memset(keep, 0xee, sizeof(keep));
	prof_keep_heaviest(p, first, keep);
	/* 4 of 7: 0 and 5 (first, whatever their counts), then 9 and 7. */
	assert_memory_equal(keep, ((uint8_t[7]){1, 1, 0, 0, 0, 1, 1}), 7);
	/* Without first: 9, 7 and the two 4s; of equal counts the newer stays. */
	memset(keep, 0xee, sizeof(keep));
	prof_keep_heaviest(p, NULL, keep);
	assert_memory_equal(keep, ((uint8_t[7]){0, 1, 1, 1, 0, 0, 1}), 7);
	/* Of an even number, exactly half; of two equal counts, the newer. */
	{
		struct prof *q = prof_new();
		uint64_t lq = prof_add_location(q, 0, 0x1000, NULL, 0);
		uint8_t k2[4];

		for (int i = 0; i < 4; i++) {
			int64_t v[2] = {(int64_t[4]){5, 3, 3, 1}[i], 0};
			struct prof_label lb = {.key = prof_str(q, "req"), .num = i};

			prof_add_sample(q, &lq, 1, v, &lb, 1);
		}
		prof_keep_heaviest(q, NULL, k2);
		assert_memory_equal(k2, ((uint8_t[4]){1, 0, 1, 0}), 4);
		prof_free(q);
	}
	prof_free(p);
}

static void test_compact(void **state)
{
	struct prof *p = build(0);
	int64_t v1[2] = {7, 7000}, v2[2] = {9, 9000};
	struct prof_mapping lib = {.start = 0x7f0000, .limit = 0x7f1000,
				   .filename = prof_str(p, "/lib/libgone.so")};
	uint64_t mlib = prof_add_mapping(p, &lib);
	struct prof_line lgone = {prof_add_function(p, prof_str(p, "gone_fn"), prof_str(p, "gone_fn"),
						    prof_str(p, "gone.c"), 1), 4};
	uint64_t locgone = prof_add_location(p, mlib, 0x7f0010, &lgone, 1);
	struct prof_sample s0;
	struct prof_label gl = {.key = prof_str(p, "tenant"), .str = prof_str(p, "gone-tenant")};

	prof_set_main_mapping(p, 1);
	prof_set_default_sample_type(p, prof_str(p, "cpu"));
	assert_int_equal(prof_sample_at(p, 0, &s0), 0);
	/* Sample 2: only it uses libgone, gone_fn and the tenant label. */
	uint64_t st[3] = {locgone, s0.locs[0], s0.locs[1]};
	prof_add_sample(p, st, 3, v1, &gl, 1);
	/* Sample 3: like sample 0, other labels. */
	prof_add_sample(p, wide(&s0), s0.nlocs, v2, NULL, 0);
	assert_int_equal(prof_nsamples(p), 4);

	size_t nall, nkept;
	char **all = render_samples(p, &nall);
	uint8_t keep[4] = {1, 0, 0, 1};
	uint32_t idx[4];
	struct prof *c = prof_compact(p, keep, idx);
	char **kept = render_samples(c, &nkept);

	/* The kept samples, in order, equal by every name, value and label. */
	assert_int_equal(nall, 4);
	assert_int_equal(nkept, 2);
	assert_string_equal(kept[0], all[0]);
	assert_string_equal(kept[1], all[3]);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], UINT32_MAX);
	assert_int_equal(idx[2], UINT32_MAX);
	assert_int_equal(idx[3], 1);
	/* Nothing that only the dropped samples used. */
	assert_int_equal(prof_nmappings(c), 1);
	assert_int_equal(prof_nlocations(c), 2);
	assert_int_equal(prof_nfunctions(c), 3);
	for (uint32_t i = 0; i < prof_nstrings(c); i++) {
		assert_string_not_equal(S(c, i), "gone-tenant");
		assert_string_not_equal(S(c, i), "gone_fn");
		assert_string_not_equal(S(c, i), "/lib/libgone.so");
	}
	assert_true(prof_nstrings(c) < prof_nstrings(p));
	/* Metadata as in p; the main mapping first. */
	assert_int_equal(prof_main_mapping(c), 1);
	assert_string_equal(S(c, prof_mapping_at(c, 0)->filename), "/bin/app");
	assert_string_equal(S(c, prof_default_sample_type(c)), "cpu");
	{
		struct prof_value_type pt;
		int64_t per, t, d;
		const uint32_t *cm;

		prof_get_period(c, &pt, &per);
		assert_string_equal(S(c, pt.type), "cpu");
		assert_int_equal(per, 1000000);
		prof_get_time(c, &t, &d);
		assert_int_equal(t, 1000);
		assert_int_equal(d, 500);
		assert_int_equal(prof_comments(c, &cm), 2);
		assert_string_equal(S(c, cm[0]), "run A");
	}
	/* Samples 1 (1) and 2 (7) are gone. */
	assert_int_equal(prof_total(c, 0), prof_total(p, 0) - 1 - 7);
	/* The copy is a profile of its own: adding to it folds into the kept entries. */
	{
		struct prof_sample k;
		int64_t one[2] = {1, 1000};

		assert_int_equal(prof_sample_at(c, 1, &k), 0);
		prof_add_sample(c, wide(&k), k.nlocs, one, NULL, 0);
		assert_int_equal(prof_nsamples(c), 2);
		assert_int_equal(prof_sample_at(c, 1, &k), 0);
		assert_int_equal(k.values[0], 10);
	}
	free_lines(kept, nkept);
	prof_free(c);

	/* keep NULL: every sample; of a snapshot, the same. */
	{
		struct prof *snap = prof_snapshot(p);
		struct prof *whole = prof_compact(snap, NULL, NULL);
		char **w = render_samples(whole, &nkept);

		assert_int_equal(nkept, nall);
		for (size_t i = 0; i < nall; i++)
			assert_string_equal(w[i], all[i]);
		free_lines(w, nkept);
		prof_free(whole);
		prof_free(snap);
	}
	/* Nothing kept: an empty profile with the metadata. */
	{
		uint8_t none[4] = {0};
		struct prof *e = prof_compact(p, none, idx);

		assert_int_equal(prof_nsamples(e), 0);
		assert_int_equal(prof_nlocations(e), 0);
		assert_int_equal(prof_sample_types(e, NULL), 2);
		assert_int_equal(idx[3], UINT32_MAX);
		prof_free(e);
	}
	free_lines(all, nall);
	prof_free(p);
}

static void test_reset(void **state)
{
	struct prof *p = build(0);
	size_t ns = prof_nsamples(p);
	struct prof_sample s;

	prof_reset_samples(p);
	assert_int_equal(prof_nsamples(p), ns);
	assert_int_equal(prof_total(p, 0), 0);
	assert_int_equal(prof_total(p, 1), 0);
	assert_int_equal(prof_sample_at(p, 0, &s), 0);
	assert_int_equal(s.nlocs, 2);
	/* Same stacks again: accumulate from zero into the same entries. */
	int64_t v[2] = {3, 30};
	prof_add_sample(p, wide(&s), s.nlocs, v, s.labels, s.nlabels);
	assert_int_equal(prof_nsamples(p), ns);
	assert_int_equal(prof_total(p, 0), 3);
	prof_free(p);
}

/* A snapshot keeps what the profile held when it was taken, whatever the profile
 * does next, and owns its values. */
static void test_snapshot(void **state)
{
	struct prof *p = build(0);
	struct prof *want = prof_clone(p);
	struct prof *s = prof_snapshot(p);
	struct prof_sample x;
	char buf[64];
	int64_t v[2] = {7, 70};

	assert_same_prof(s, want);
	/* The writer goes on: more values on old samples, and new entries of every kind,
	 * enough to fill new segments of the tables. */
	assert_int_equal(prof_sample_at(p, 0, &x), 0);
	prof_add_sample(p, wide(&x), x.nlocs, v, x.labels, x.nlabels);
	for (int i = 0; i < 5000; i++) {
		snprintf(buf, sizeof(buf), "later%d", i);
		uint32_t name = prof_str(p, buf);
		uint64_t f = prof_add_function(p, name, name, 0, i);
		struct prof_line l = {f, i};
		uint64_t loc = prof_add_location(p, 1, 0x9000 + (uint64_t)i, &l, 1);
		struct prof_mapping m = {.start = (uint64_t)i << 20, .limit = ((uint64_t)i + 1) << 20,
					 .filename = name};
		prof_add_mapping(p, &m);
		prof_add_sample(p, &loc, 1, v, x.labels, x.nlabels);
	}
	prof_set_time(p, 1, 2);
	prof_add_comment(p, "later");
	assert_same_prof(s, want);
	prof_reset_samples(p);
	assert_same_prof(s, want);

	/* A snapshot of a snapshot, with values of its own. */
	struct prof *s2 = prof_snapshot(s);
	int64_t w[2] = {2, 20};
	prof_reset_samples(s2);
	assert_int_equal(prof_set_sample_values(s2, 1, w), 0);
	assert_int_equal(prof_set_sample_values(s2, prof_nsamples(s2), w), -ERANGE);
	assert_int_equal(prof_total(s2, 0), 2);
	assert_int_equal(prof_total(s2, 1), 20);
	assert_int_equal(prof_total(s, 1), prof_total(want, 1));
	assert_int_equal(prof_sample_at(s2, 1, &x), 0);
	assert_int_equal(x.values[1], 20);

	/* The writer may be freed first. */
	prof_free(p);
	assert_same_prof(s, want);

	/* Adding to a snapshot turns it into a deep copy with the same ids. */
	uint32_t id = prof_str(s, "only in the snapshot");
	assert_int_equal(id, prof_nstrings(want));
	assert_int_equal(prof_sample_at(s2, 0, &x), 0);
	prof_add_sample(s, wide(&x), x.nlocs, v, x.labels, x.nlabels);
	assert_int_equal(prof_nsamples(s), prof_nsamples(want));
	assert_int_equal(prof_total(s, 0), prof_total(want, 0) + 7);
	prof_free(want);
	want = prof_clone(s);
	assert_same_prof(s, want);
	assert_int_equal(prof_total(s2, 1), 20);
	prof_free(s2);
	prof_free(s);
	prof_free(want);
}

/* The live UI's pattern: one thread adds to a profile and publishes snapshots, another
 * reads them (under ThreadSanitizer with --enable-tsan, no report). */
struct pubsub {
	pthread_mutex_t lock;
	struct prof *cur;
	int done;
	int64_t checked;
};

static void *reader(void *arg)
{
	struct pubsub *ps = arg;

	for (;;) {
		struct prof *s;
		int done;

		pthread_mutex_lock(&ps->lock);
		s = ps->cur;
		ps->cur = NULL;
		done = ps->done;
		pthread_mutex_unlock(&ps->lock);
		if (!s) {
			if (done)
				return NULL;
			sched_yield();
			continue;
		}
		/* Every sample i was added i + 1 times with stack {i + 1} and a label naming it. */
		for (size_t i = 0; i < prof_nsamples(s); i++) {
			struct prof_sample x;
			const struct prof_location *l;
			const struct prof_function *f;
			char buf[32];

			if (prof_sample_at(s, i, &x) || x.nlocs != 1 || x.locs[0] != i + 1 || x.nlabels != 1)
				abort();
			l = prof_location_at(s, x.locs[0] - 1);
			f = l ? prof_function_at(s, l->lines[0].function - 1) : NULL;
			snprintf(buf, sizeof(buf), "f%zu", i);
			/* No cmocka assertion off the main thread: abort fails the test. */
			if (!f || !prof_string(s, f->name, NULL) || strcmp(prof_string(s, f->name, NULL), buf) ||
			    !prof_string(s, x.labels[0].str, NULL) ||
			    strcmp(prof_string(s, x.labels[0].str, NULL), buf) || x.values[0] != (int64_t)i + 1)
				abort();
		}
		ps->checked += (int64_t)prof_nsamples(s);
		prof_free(s);
	}
}

static void test_snapshot_threads(void **state)
{
	struct pubsub ps = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct prof *p = prof_new();
	pthread_t th;
	enum { N = 3000 };
	char buf[32];
	int64_t one = 1;

	assert_int_equal(pthread_create(&th, NULL, reader, &ps), 0);
	for (size_t i = 0; i < N; i++) {
		snprintf(buf, sizeof(buf), "f%zu", i);
		uint32_t name = prof_str(p, buf);
		struct prof_line ln = {prof_add_function(p, name, name, 0, 0), 1};
		uint64_t loc = prof_add_location(p, 0, 0x1000 + i, &ln, 1);
		struct prof_label lab = {.key = prof_str(p, "fn"), .str = name};

		for (size_t k = 0; k <= i; k++)
			prof_add_sample(p, &loc, 1, &one, &lab, 1);
		if (i % 50 == 0) {
			struct prof *s = prof_snapshot(p), *old;

			pthread_mutex_lock(&ps.lock);
			old = ps.cur;
			ps.cur = s;
			pthread_mutex_unlock(&ps.lock);
			prof_free(old);
		}
	}
	prof_free(p); /* the last snapshot outlives its writer */
	pthread_mutex_lock(&ps.lock);
	ps.done = 1;
	pthread_mutex_unlock(&ps.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_true(ps.checked > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_metadata),
		cmocka_unit_test(test_dedup),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_clone),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_compact),
		cmocka_unit_test(test_keep_heaviest),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_snapshot),
		cmocka_unit_test(test_snapshot_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
