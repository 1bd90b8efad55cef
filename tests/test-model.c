/* test-model.c: unit tests of the analysis behind the Labels and Goroutines views
 * (model_label_keys, model_label_values): shares, counts, hot function, the label set a
 * goroutine's row shows, and how filters on other keys and on the key itself apply. */
#include "config.h"
#include "gotop/model.h"
#include "gotop/profile.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

struct fixture {
	struct prof *p;
	uint64_t loc[4]; /* functions f0..f3, one location each */
};

static struct prof_label slabel(struct prof *p, const char *k, const char *v)
{
	return (struct prof_label){.key = prof_str(p, k), .str = prof_str(p, v)};
}

static struct prof_label nlabel(struct prof *p, const char *k, int64_t n)
{
	return (struct prof_label){.key = prof_str(p, k), .num = n};
}

static void fixture_init(struct fixture *fx)
{
	struct prof_value_type types[2];
	char name[8];

	fx->p = prof_new();
	types[0] = (struct prof_value_type){prof_str(fx->p, "samples"), prof_str(fx->p, "count")};
	types[1] = (struct prof_value_type){prof_str(fx->p, "cpu"), prof_str(fx->p, "nanoseconds")};
	prof_set_sample_types(fx->p, types, 2);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		struct prof_line line = {prof_add_function(fx->p, prof_str(fx->p, name), 0, 0, 0), 1};

		fx->loc[i] = prof_add_location(fx->p, 0, 0x1000 + 0x10 * (uint64_t)i, &line, 1);
	}
}

/* A sample of `count` samples and count*1000 ns with leaf function `leaf` under f0. */
static void add(struct fixture *fx, int leaf, int64_t count, const struct prof_label *l, size_t nl)
{
	uint64_t stack[2] = {fx->loc[leaf], fx->loc[0]};
	int64_t v[2] = {count, count * 1000};

	prof_add_sample(fx->p, stack, leaf ? 2 : 1, v, l, nl);
}

/* "k=v k=v" of the string labels of profile sample i. */
static void set_text(const struct prof *p, size_t i, char *buf, size_t n)
{
	struct prof_sample s;
	size_t k = 0;

	buf[0] = 0;
	assert_int_equal(prof_sample_at(p, i, &s), 0);
	for (uint32_t j = 0; j < s.nlabels; j++)
		if (s.labels[j].str)
			k += (size_t)snprintf(buf + k, n - k, "%s%s=%s", k ? " " : "",
					      prof_string(p, s.labels[j].key, NULL),
					      prof_string(p, s.labels[j].str, NULL));
}

static const struct model_value *find_num(const struct model_value *v, size_t n, int64_t num)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].str && v[i].num == num)
			return &v[i];
	return NULL;
}

/* A worker goroutine serves requests under several label sets and spends a little time
 * unlabelled. Its row must show the set it spent most under, whatever order samples came
 * in and however its value splits across stacks. */
static void test_goroutine_label_set(void **state)
{
	struct fixture fx;
	struct prof *p;
	char buf[256];
	(void)state;

	fixture_init(&fx);
	p = fx.p;
	struct prof_label idle[] = {nlabel(p, "goroutine", 7)};
	struct prof_label a[] = {nlabel(p, "goroutine", 7), slabel(p, "handler", "search"),
				 slabel(p, "tenant", "acme")};
	struct prof_label b[] = {nlabel(p, "goroutine", 7), slabel(p, "handler", "login"),
				 slabel(p, "tenant", "acme")};
	struct prof_label other[] = {nlabel(p, "goroutine", 9), slabel(p, "handler", "login")};

	/* Goroutine 7: its heaviest single stack is unlabelled (3), handler=login has one
	 * stack of 2, handler=search is spread over three stacks of 2 (6 in all). */
	add(&fx, 1, 3, idle, 1);
	add(&fx, 2, 2, b, 3);
	add(&fx, 1, 2, a, 3);
	add(&fx, 2, 2, a, 3);
	add(&fx, 3, 2, a, 3);
	add(&fx, 3, 4, other, 2);

	struct model *m = model_new(p, 0);
	struct model_value *vals = NULL;
	struct model_totals t;
	size_t n = model_label_values(m, "goroutine", 0, &vals, &t);

	assert_int_equal(n, 2);
	/* By value descending: goroutine 7 (11 samples) before 9 (4). */
	assert_null(vals[0].str);
	assert_int_equal(vals[0].num, 7);
	assert_int_equal(vals[0].n, 11);
	assert_int_equal(vals[0].value, 11000);
	assert_int_equal(vals[1].num, 9);
	assert_int_equal(vals[1].n, 4);
	assert_int_equal(t.count, 15);
	assert_int_equal(t.all_count, 15);
	set_text(p, vals[0].rep, buf, sizeof(buf));
	assert_string_equal(buf, "handler=search tenant=acme");
	set_text(p, vals[1].rep, buf, sizeof(buf));
	assert_string_equal(buf, "handler=login");
	/* Hot function by leaf: in goroutine 7 f1 has 5, f2 4, f3 2 samples. */
	assert_true(vals[0].top_fn >= 0);
	const struct model_fn *fn = model_fn(m, (uint32_t)vals[0].top_fn);
	assert_string_equal(fn->name, "f1");
	fn = model_fn(m, (uint32_t)vals[1].top_fn);
	assert_string_equal(fn->name, "f3");
	free(vals);

	/* ...and once unlabelled time dominates, the row says so (no string labels). */
	add(&fx, 1, 20, idle, 1);
	model_free(m);
	m = model_new(p, 0);
	n = model_label_values(m, "goroutine", 0, &vals, &t);
	assert_int_equal(n, 2);
	assert_int_equal(vals[0].num, 7);
	assert_int_equal(vals[0].n, 31);
	set_text(p, vals[0].rep, buf, sizeof(buf));
	assert_string_equal(buf, "");
	free(vals);
	model_free(m);
	prof_free(p);
}

/* A filter on another key narrows the values; a filter on the key itself does not hide
 * the key's other values (so they stay selectable), as the header promises. */
static void test_values_under_filters(void **state)
{
	struct fixture fx;
	struct prof *p;
	(void)state;

	fixture_init(&fx);
	p = fx.p;
	struct prof_label l1[] = {nlabel(p, "goroutine", 1), slabel(p, "handler", "search")};
	struct prof_label l2[] = {nlabel(p, "goroutine", 2), slabel(p, "handler", "login")};
	struct prof_label l3[] = {nlabel(p, "goroutine", 2), slabel(p, "handler", "search")};
	struct prof_label none[] = {nlabel(p, "goroutine", 3)};

	add(&fx, 1, 5, l1, 2);
	add(&fx, 2, 3, l2, 2);
	add(&fx, 1, 1, l3, 2);
	add(&fx, 2, 4, none, 1);

	struct model *m = model_new(p, 0);
	struct model_key *keys = NULL;
	size_t nk = model_label_keys(m, &keys);

	assert_int_equal(nk, 2);
	assert_int_equal(keys[0].len, strlen("goroutine"));
	assert_memory_equal(keys[0].key, "goroutine", keys[0].len);
	assert_true(keys[0].numeric);
	assert_int_equal(keys[0].count, 13);
	assert_memory_equal(keys[1].key, "handler", keys[1].len);
	assert_false(keys[1].numeric);
	assert_int_equal(keys[1].count, 9);
	free(keys);

	struct model_filter f = {.kind = MODEL_LABEL, .key = "handler", .str = "search"};
	struct model_value *vals = NULL;
	struct model_totals t;
	size_t n;

	model_set_filters(m, &f, 1);
	n = model_label_values(m, "goroutine", 0, &vals, &t);
	assert_int_equal(n, 2); /* goroutine 3 has no handler=search sample */
	assert_int_equal(find_num(vals, n, 1)->n, 5);
	assert_int_equal(find_num(vals, n, 2)->n, 1);
	assert_null(find_num(vals, n, 3));
	assert_int_equal(t.count, 6);
	assert_int_equal(t.all_count, 13);
	free(vals);

	/* Values of handler under handler=search: login stays listed. */
	n = model_label_values(m, "handler", 0, &vals, &t);
	assert_int_equal(n, 2);
	assert_int_equal(vals[0].len, 6);
	assert_memory_equal(vals[0].str, "search", 6);
	assert_int_equal(vals[0].n, 6);
	assert_memory_equal(vals[1].str, "login", 5);
	assert_int_equal(vals[1].n, 3);
	/* The totals are all samples passing the other filters (none here), so the view's
	 * "(no handler)" row is the 4 of goroutine 3. */
	assert_int_equal(t.count, 13);
	free(vals);

	/* A key the profile lacks has no values. */
	n = model_label_values(m, "tenant", 0, &vals, &t);
	assert_int_equal(n, 0);
	free(vals);
	model_free(m);
	prof_free(p);
}

/* Keys and values are bytes: two keys that differ only after a NUL are two keys, and a
 * filter on a value holding NUL bytes selects exactly that value. */
static void test_nul_bytes(void **state)
{
	struct fixture fx;
	struct prof *p;
	(void)state;

	fixture_init(&fx);
	p = fx.p;
	struct prof_label a[] = {{.key = prof_strn(p, "k\0a", 3), .str = prof_strn(p, "v\0x", 3)}};
	struct prof_label a2[] = {{.key = prof_strn(p, "k\0a", 3), .str = prof_strn(p, "v\0y", 3)}};
	struct prof_label b[] = {{.key = prof_strn(p, "k\0b", 3), .str = prof_strn(p, "w", 1)}};

	add(&fx, 1, 5, a, 1);
	add(&fx, 2, 2, a2, 1);
	add(&fx, 3, 7, b, 1);

	struct model *m = model_new(p, 0);
	struct model_value *vals = NULL;
	struct model_totals t;
	size_t n = model_label_values(m, "k\0b", 3, &vals, &t);

	assert_int_equal(n, 1);
	assert_int_equal(vals[0].len, 1);
	assert_memory_equal(vals[0].str, "w", 1);
	assert_int_equal(vals[0].n, 7);
	free(vals);
	n = model_label_values(m, "k\0a", 3, &vals, &t);
	assert_int_equal(n, 2);
	assert_int_equal(vals[0].len, 3);
	assert_memory_equal(vals[0].str, "v\0x", 3);
	free(vals);
	/* As a C string the key is "k": no such key. */
	n = model_label_values(m, "k\0a", 0, &vals, &t);
	assert_int_equal(n, 0);
	free(vals);

	struct model_filter f = {.kind = MODEL_LABEL, .key = "k\0a", .key_len = 3, .str = "v\0y", .str_len = 3};
	model_set_filters(m, &f, 1);
	model_totals(m, &t);
	assert_int_equal(t.count, 2);
	f.str_len = 0; /* "v": no such value, nothing passes */
	model_set_filters(m, &f, 1);
	model_totals(m, &t);
	assert_int_equal(t.count, 0);
	model_free(m);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_goroutine_label_set),
		cmocka_unit_test(test_values_under_filters),
		cmocka_unit_test(test_nul_bytes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
