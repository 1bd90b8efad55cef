/* test-model.c: unit tests of the analysis behind the Labels and Goroutines views
 * (model_label_keys, model_label_values): shares, counts, hot function, the label set a
 * goroutine's row shows, and how filters on other keys and on the key itself apply. */
#include "config.h"
#include "gotop/model.h"
#include "gotop/profile.h"
#include "gotop/util.h"

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

/* A sample of `count` samples on the stack of functions fns (leaf first). */
static void add_stack(struct fixture *fx, const int *fns, size_t n, int64_t count)
{
	uint64_t stack[8];
	int64_t v[2] = {count, count * 1000};

	for (size_t i = 0; i < n; i++)
		stack[i] = fx->loc[fns[i]];
	prof_add_sample(fx->p, stack, n, v, NULL, 0);
}

/* The node reached from the root through the functions path (outermost first), with
 * the given total and self counts; its values are 1000 ns a sample. */
static const struct model_node *tree_path(const struct model *m, const struct model_tree *t,
					  const char *path, uint64_t total, uint64_t self)
{
	const struct model_node *n = &t->nodes[0];
	char buf[64], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		const struct model_node *next = NULL;

		for (uint32_t k = 0; k < n->nkids && !next; k++)
			if (!strcmp(model_fn(m, t->nodes[n->kids[k]].fn)->name, tok))
				next = &t->nodes[n->kids[k]];
		assert_non_null(next);
		assert_int_equal(next->depth, n->depth + 1);
		assert_int_equal(next->parent, (uint32_t)(n - t->nodes));
		n = next;
	}
	assert_int_equal(n->total_n, total);
	assert_int_equal(n->self_n, self);
	assert_int_equal(n->total, (int64_t)total * 1000);
	assert_int_equal(n->self, (int64_t)self * 1000);
	return n;
}

/* The top-down tree: a node per path from the root (a recursive function has one per
 * depth), totals counted once per sample, children by total. Then the profile grows and
 * the model is updated: the tree it extends must hold the new stacks and sums. */
static void test_tree_topdown(void **state)
{
	struct fixture fx;
	struct prof *s1, *s2;
	struct model *m;
	struct model_tree *t;
	const struct model_node *n, *f0a, *f0b;
	(void)state;

	fixture_init(&fx);
	add_stack(&fx, (const int[]){2, 1, 0}, 3, 3);
	add_stack(&fx, (const int[]){3, 1, 0}, 3, 1);
	add_stack(&fx, (const int[]){3, 0}, 2, 2);
	add_stack(&fx, (const int[]){1, 2, 1, 0}, 4, 1);
	s1 = prof_snapshot(fx.p);
	m = model_new(s1, 0);
	t = model_tree_topdown(m);
	assert_int_equal(t->n, 7); /* root f0 f0>f1 f0>f1>f2 f0>f1>f2>f1 f0>f1>f3 f0>f3 */
	assert_int_equal(t->nodes[0].total_n, 7);
	assert_int_equal(t->nodes[0].self_n, 0);
	f0a = tree_path(m, t, "f0", 7, 0);
	tree_path(m, t, "f0 f1", 5, 0);
	tree_path(m, t, "f0 f1 f2", 4, 3);
	tree_path(m, t, "f0 f1 f2 f1", 1, 1);
	tree_path(m, t, "f0 f1 f3", 1, 1);
	tree_path(m, t, "f0 f3", 2, 2);
	n = &t->nodes[f0a->kids[0]]; /* by total: f1 (5) before f3 (2) */
	assert_string_equal(model_fn(m, n->fn)->name, "f1");
	uint64_t id_f0 = f0a->id;
	model_tree_free(t);

	add_stack(&fx, (const int[]){2, 1, 0}, 3, 2);
	add_stack(&fx, (const int[]){1, 0}, 2, 4);
	add_stack(&fx, (const int[]){2, 3, 0}, 3, 6);
	s2 = prof_snapshot(fx.p);
	assert_int_equal(model_update(m, s2, 0, NULL, 0), 0);
	prof_free(s1);
	t = model_tree_topdown(m);
	assert_int_equal(t->n, 8);
	assert_int_equal(t->nodes[0].total_n, 19);
	f0b = tree_path(m, t, "f0", 19, 0);
	assert_int_equal(f0b->id, id_f0);
	tree_path(m, t, "f0 f1", 11, 4);
	tree_path(m, t, "f0 f1 f2", 6, 5);
	tree_path(m, t, "f0 f1 f2 f1", 1, 1);
	tree_path(m, t, "f0 f1 f3", 1, 1);
	tree_path(m, t, "f0 f3", 8, 2);
	tree_path(m, t, "f0 f3 f2", 6, 6);
	n = &t->nodes[f0b->kids[0]]; /* now f1 (11) before f3 (8) */
	assert_string_equal(model_fn(m, n->fn)->name, "f1");
	model_tree_free(t);

	/* Under a filter, fewer stacks: the tree is built for them alone. */
	struct model_filter f = {.kind = MODEL_IGNORE, .str = "f3", .exact = 1};

	model_set_filters(m, &f, 1);
	t = model_tree_topdown(m);
	assert_int_equal(t->n, 5);
	assert_int_equal(t->nodes[0].total_n, 10);
	tree_path(m, t, "f0 f1 f2", 6, 5);
	model_tree_free(t);
	model_set_filters(m, NULL, 0);
	t = model_tree_topdown(m);
	assert_int_equal(t->n, 8);
	tree_path(m, t, "f0 f3 f2", 6, 6);
	model_tree_free(t);
	model_free(m);
	prof_free(s2);
	prof_free(fx.p);
}

static size_t same_models(struct model *a, struct model *b);

/* The flat row of function name, checked against the expected counts and line. */
static void flat_row(struct model *m, const char *name, uint64_t total, uint64_t self, int64_t line)
{
	struct model_flat *rows;
	size_t n = model_flat(m, &rows), i;

	for (i = 0; i < n && strcmp(model_fn(m, rows[i].fn)->name, name); i++)
		;
	assert_true(i < n);
	assert_int_equal(rows[i].total_n, total);
	assert_int_equal(rows[i].self_n, self);
	assert_int_equal(rows[i].total, (int64_t)total * 1000);
	assert_int_equal(rows[i].self, (int64_t)self * 1000);
	if (line)
		assert_int_equal(rows[i].line, line);
	free(rows);
}

/* The flat profile and the top-down tree are kept between refreshes and gain what the
 * stacks gained (or lost, in a window): they must equal those built anew at every step
 * (same_models compares the trees), the line of a function (the one with the most self,
 * the lowest on a tie) included. */
static void test_flat_incremental(void **state)
{
	struct fixture fx;
	struct prof *s1, *s2, *s3, *s4, *s5;
	struct model *m, *fresh;
	(void)state;

	fixture_init(&fx);
	uint64_t g = prof_add_function(fx.p, prof_str(fx.p, "g"), 0, 0, 0);
	struct prof_line l20 = {g, 20}, l10 = {g, 10};
	uint64_t loc20 = prof_add_location(fx.p, 0, 0x2000, &l20, 1);
	uint64_t loc10 = prof_add_location(fx.p, 0, 0x2010, &l10, 1);
	int64_t v5[2] = {5, 5000}, v1[2] = {1, 1000}, v2[2] = {2, 2000};

	prof_add_sample(fx.p, (const uint64_t[]){loc20, fx.loc[0]}, 2, v5, NULL, 0);
	prof_add_sample(fx.p, (const uint64_t[]){loc10, fx.loc[0]}, 2, v5, NULL, 0);
	s1 = prof_snapshot(fx.p);
	m = model_new(s1, 0);
	flat_row(m, "g", 10, 10, 10); /* 5 and 5: the lower line */
	flat_row(m, "f0", 10, 0, 0);

	/* More on a stack it has: line 20 leads. */
	prof_add_sample(fx.p, (const uint64_t[]){loc20, fx.loc[0]}, 2, v1, NULL, 0);
	s2 = prof_snapshot(fx.p);
	assert_int_equal(model_update(m, s2, 0, NULL, 0), 0);
	prof_free(s1);
	flat_row(m, "g", 11, 11, 20);
	flat_row(m, "f0", 11, 0, 0);
	flat_row(m, "g", 11, 11, 20); /* asked twice, nothing new: the same */
	fresh = model_new(s2, 0);
	flat_row(fresh, "g", 11, 11, 20);
	model_free(fresh);

	/* A new stack, recursion in it: counted once per stack. */
	prof_add_sample(fx.p, (const uint64_t[]){loc10, fx.loc[1], fx.loc[0], fx.loc[1], fx.loc[0]}, 5,
			v2, NULL, 0);
	s3 = prof_snapshot(fx.p);
	assert_int_equal(model_update(m, s3, 0, NULL, 0), 0);
	prof_free(s2);
	flat_row(m, "g", 13, 13, 10); /* line 10: 7, line 20: 6 */
	flat_row(m, "f0", 13, 0, 0);
	flat_row(m, "f1", 2, 0, 0);
	fresh = model_new(s3, 0);
	same_models(m, fresh);
	model_free(fresh);

	/* Under a filter, then without: other stacks, so it starts again. */
	struct model_filter f = {.kind = MODEL_FOCUS, .str = "f1", .exact = 1};

	model_set_filters(m, &f, 1);
	flat_row(m, "g", 2, 2, 10);
	model_set_filters(m, NULL, 0);
	flat_row(m, "g", 13, 13, 10);

	/* A window: the same stacks, values down, so it starts again too (adding the
	 * differences would keep line 10, which led before). */
	s4 = prof_snapshot(fx.p);
	prof_reset_samples(s4);
	prof_set_sample_values(s4, 0, (const int64_t[]){3, 3000}); /* line 20 */
	prof_set_sample_values(s4, 1, v1);                         /* line 10 */
	prof_set_sample_values(s4, 2, v1);                         /* line 10, under f1 */
	assert_int_equal(model_update(m, s4, 0, NULL, 0), 0);
	prof_free(s3);
	flat_row(m, "g", 5, 5, 20);
	flat_row(m, "f0", 5, 0, 0);
	flat_row(m, "f1", 1, 0, 0);
	fresh = model_new(s4, 0);
	same_models(m, fresh);
	model_free(fresh);

	/* An update under a filter: the filter holds at once. */
	s5 = prof_snapshot(fx.p);
	assert_int_equal(model_update(m, s5, 0, &f, 1), 0); /* under the f1 filter */
	prof_free(s4);
	flat_row(m, "g", 2, 2, 10);
	model_set_filters(m, NULL, 0);
	flat_row(m, "g", 13, 13, 10);
	model_free(m);
	prof_free(s5);
	prof_free(fx.p);
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

/* --- model_update against model_new --- */

static uint64_t rnd_state = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

/* nl more locations: a line, two lines (an inlined call) or none (an address only). */
static void add_locations(struct prof *p, uint64_t *locs, size_t *nlocs, size_t nl)
{
	for (size_t i = 0; i < nl; i++) {
		char name[32];
		struct prof_line lines[2];
		uint32_t nlines = rnd(3);

		for (uint32_t j = 0; j < nlines; j++) {
			snprintf(name, sizeof(name), "fn%u", rnd(40));
			lines[j] = (struct prof_line){prof_add_function(p, prof_str(p, name), 0, 0, 0),
						      (int64_t)rnd(5) + 1};
		}
		locs[*nlocs] = prof_add_location(p, 0, 0x1000 + 0x10 * (uint64_t)*nlocs, lines, nlines);
		(*nlocs)++;
	}
}

/* n samples with random stacks (recursion included) and labels. */
static void add_random(struct prof *p, const uint64_t *locs, size_t nlocs, size_t n)
{
	static const char *handlers[] = {"search", "login", "checkout"};

	for (size_t i = 0; i < n; i++) {
		uint64_t stack[8];
		struct prof_label l[2];
		size_t depth = 1 + rnd(8), nl = 0;
		int64_t v[2];

		for (size_t j = 0; j < depth; j++)
			stack[j] = locs[rnd((uint32_t)GP_MIN(nlocs, 12 + 4 * j))];
		if (rnd(4))
			l[nl++] = nlabel(p, "goroutine", rnd(10));
		if (rnd(3))
			l[nl++] = slabel(p, "handler", handlers[rnd(3)]);
		v[0] = 1 + rnd(3);
		v[1] = v[0] * 1000 + rnd(999);
		prof_add_sample(p, stack, depth, v, l, nl);
	}
}

static int flat_cmp(const void *a, const void *b, void *arg)
{
	const struct model_flat *x = a, *y = b;
	int c = strcmp(model_fn(arg, x->fn)->name, model_fn(arg, y->fn)->name);

	return c ? c : (x->line > y->line) - (x->line < y->line);
}

static int node_cmp(const void *a, const void *b)
{
	const struct model_node *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* Compared in node order of their ids; sorted copies, since a top-down tree's nodes are
 * the model's own (model.h). */
static void same_trees(struct model_tree *ta, struct model_tree *tb)
{
	struct model_node *a, *b;

	assert_int_equal(ta->n, tb->n);
	a = malloc(ta->n * sizeof(*a));
	b = malloc(tb->n * sizeof(*b));
	memcpy(a, ta->nodes, ta->n * sizeof(*a));
	memcpy(b, tb->nodes, tb->n * sizeof(*b));
	qsort(a, ta->n, sizeof(*a), node_cmp);
	qsort(b, tb->n, sizeof(*b), node_cmp);
	for (size_t i = 0; i < ta->n; i++) {
		assert_int_equal(a[i].id, b[i].id);
		assert_int_equal(a[i].total, b[i].total);
		assert_int_equal(a[i].self, b[i].self);
		assert_int_equal(a[i].total_n, b[i].total_n);
		assert_int_equal(a[i].self_n, b[i].self_n);
		assert_int_equal(a[i].depth, b[i].depth);
	}
	free(a);
	free(b);
	model_tree_free(ta);
	model_tree_free(tb);
}

/* a (updated) and b (built anew) must answer every question alike. Returns the flat
 * profile's row count. */
static size_t same_models(struct model *a, struct model *b)
{
	struct model_totals ta, tb;
	struct model_flat *fa, *fb;
	struct model_key *ka, *kb;
	size_t n, i, rows;
	char sa[256], sb[256];

	model_totals(a, &ta);
	model_totals(b, &tb);
	assert_memory_equal(&ta, &tb, sizeof(ta));
	rows = n = model_flat(a, &fa);
	assert_int_equal(model_flat(b, &fb), n);
	qsort_r(fa, n, sizeof(*fa), flat_cmp, a);
	qsort_r(fb, n, sizeof(*fb), flat_cmp, b);
	for (i = 0; i < n; i++) {
		assert_string_equal(model_fn(a, fa[i].fn)->name, model_fn(b, fb[i].fn)->name);
		assert_int_equal(fa[i].line, fb[i].line);
		assert_int_equal(fa[i].self, fb[i].self);
		assert_int_equal(fa[i].total, fb[i].total);
		assert_int_equal(fa[i].self_n, fb[i].self_n);
		assert_int_equal(fa[i].total_n, fb[i].total_n);
	}
	same_trees(model_tree_topdown(a), model_tree_topdown(b));
	if (n)
		same_trees(model_tree_callers(a, fa[n / 2].fn), model_tree_callers(b, fb[n / 2].fn));
	free(fa);
	free(fb);
	n = model_label_keys(a, &ka);
	assert_int_equal(model_label_keys(b, &kb), n);
	for (i = 0; i < n; i++) {
		assert_int_equal(ka[i].len, kb[i].len);
		assert_memory_equal(ka[i].key, kb[i].key, ka[i].len);
		assert_int_equal(ka[i].numeric, kb[i].numeric);
		assert_int_equal(ka[i].count, kb[i].count);
	}
	free(ka);
	free(kb);
	for (const char *const *key = (const char *const[]){"goroutine", "handler", "tenant", NULL}; *key; key++) {
		struct model_value *va, *vb;
		size_t nv = model_label_values(a, *key, 0, &va, &ta);

		assert_int_equal(model_label_values(b, *key, 0, &vb, &tb), nv);
		assert_memory_equal(&ta, &tb, sizeof(ta));
		for (i = 0; i < nv; i++) {
			assert_int_equal(va[i].len, vb[i].len);
			assert_memory_equal(va[i].str ? va[i].str : "", vb[i].str ? vb[i].str : "", va[i].len);
			assert_int_equal(va[i].num, vb[i].num);
			assert_int_equal(va[i].value, vb[i].value);
			assert_int_equal(va[i].n, vb[i].n);
			assert_int_equal(va[i].top_fn >= 0, vb[i].top_fn >= 0);
			if (va[i].top_fn >= 0)
				assert_string_equal(model_fn(a, (uint32_t)va[i].top_fn)->name,
						    model_fn(b, (uint32_t)vb[i].top_fn)->name);
			set_text(model_prof(a), va[i].rep, sa, sizeof(sa));
			set_text(model_prof(b), vb[i].rep, sb, sizeof(sb));
			assert_string_equal(sa, sb);
		}
		free(va);
		free(vb);
	}
	return rows;
}

/* Both models under each filter set in turn; *rows gets the unfiltered flat row count. */
static void same_under_filters(struct model *a, struct model *b, size_t *rows)
{
	static const struct model_filter sets[][2] = {
		{{.kind = MODEL_FOCUS, .str = "fn1"}},
		{{.kind = MODEL_IGNORE, .str = "fn2", .exact = 1}},
		{{.kind = MODEL_LABEL, .key = "handler", .str = "login"},
		 {.kind = MODEL_FOCUS, .str = "fn3"}},
		{{.kind = MODEL_LABEL, .key = "goroutine", .num = 4}},
	};
	static const size_t nf[] = {1, 1, 2, 1};

	*rows = same_models(a, b);
	for (size_t i = 0; i < sizeof(nf) / sizeof(nf[0]); i++) {
		model_set_filters(a, sets[i], nf[i]);
		model_set_filters(b, sets[i], nf[i]);
		same_models(a, b);
	}
	model_set_filters(a, NULL, 0);
}

/* The live UI extends one model from snapshot to snapshot (model_update). Whatever the
 * profile gained in between (locations, functions, stacks, label values) and however its
 * values changed (a decaying window zeroes most of them), the updated model must answer
 * like one built from the last snapshot. */
static void test_update_equals_rebuild(void **state)
{
	struct prof *p = prof_new(), *s1, *s2, *s3, *other;
	struct prof_value_type types[2];
	uint64_t locs[200];
	size_t nlocs = 0, rows1, rows2;
	struct model *m, *fresh;
	struct model_value *vals;
	struct model_totals t;
	(void)state;

	types[0] = (struct prof_value_type){prof_str(p, "samples"), prof_str(p, "count")};
	types[1] = (struct prof_value_type){prof_str(p, "cpu"), prof_str(p, "nanoseconds")};
	prof_set_sample_types(p, types, 2);
	add_locations(p, locs, &nlocs, 30);
	add_random(p, locs, nlocs, 300);
	s1 = prof_snapshot(p);
	m = model_new(s1, 0);
	/* Caches the update has to extend. */
	assert_int_not_equal(model_label_values(m, "goroutine", 0, &vals, &t), 0);
	free(vals);
	assert_int_not_equal(model_label_values(m, "handler", 0, &vals, &t), 0);
	free(vals);

	/* And the top-down tree's shape and the flat profile, which the update extends. */
	model_tree_free(model_tree_topdown(m));
	struct model_flat *rows;
	model_flat(m, &rows);
	free(rows);

	add_locations(p, locs, &nlocs, 60);
	add_random(p, locs, nlocs, 600);
	s2 = prof_snapshot(p);
	assert_int_equal(model_update(m, s2, 0, NULL, 0), 0);
	prof_free(s1); /* the model must hold nothing of it any more */
	fresh = model_new(s2, 0);
	same_under_filters(m, fresh, &rows1);
	model_free(fresh);
	assert_true(rows1 > 20);

	/* A window: the same entries, most values zero, the rest changed. */
	s3 = prof_snapshot(p);
	prof_reset_samples(s3);
	for (size_t i = 0; i < prof_nsamples(s3); i += 7) {
		int64_t v[2] = {2, 1500};

		prof_set_sample_values(s3, i, v);
	}
	assert_int_equal(model_update(m, s3, 0, NULL, 0), 0);
	prof_free(s2);
	fresh = model_new(s3, 0);
	same_under_filters(m, fresh, &rows2);
	model_free(fresh);
	assert_true(rows2 > 0 && rows2 < rows1);

	/* Not a snapshot of the same profile, or by line: a new model is needed. */
	other = prof_clone(s3);
	assert_int_equal(model_update(m, other, 0, NULL, 0), -1);
	assert_int_equal(model_update(m, s3, 1, NULL, 0), -1);
	prof_free(other);
	model_free(m);
	prof_free(s3);
	prof_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_goroutine_label_set),
		cmocka_unit_test(test_values_under_filters),
		cmocka_unit_test(test_nul_bytes),
		cmocka_unit_test(test_update_equals_rebuild),
		cmocka_unit_test(test_tree_topdown),
		cmocka_unit_test(test_flat_incremental),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
