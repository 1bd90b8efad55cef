/* test-hashmap.c: unit tests for hashmap (the 64-bit key to value map of agg.c and
 * model.c): lookups, growth, the key 0, keys that collide in the low bits. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdint.h>

#include "gotop/hashmap.h"

static void test_empty(void **state)
{
	struct hashmap m = { 0 };

	assert_null(hashmap_get(&m, 1));
	assert_null(hashmap_get(&m, 0));
	assert_int_equal(hashmap_count(&m), 0);
	hashmap_free(&m); /* an empty map frees nothing and stays usable */
	assert_null(hashmap_get(&m, 1));
}

static void test_put_get(void **state)
{
	struct hashmap m = { 0 };
	uint64_t *v;
	int created = -1;

	v = hashmap_put(&m, 42, &created);
	assert_non_null(v);
	assert_int_equal(created, 1);
	assert_int_equal(*v, 0); /* a new value starts at 0 */
	*v = 7;
	v = hashmap_put(&m, 42, &created);
	assert_int_equal(created, 0);
	assert_int_equal(*v, 7);
	assert_int_equal(*hashmap_get(&m, 42), 7);
	assert_null(hashmap_get(&m, 43));
	assert_int_equal(hashmap_count(&m), 1);
	hashmap_put(&m, 43, NULL); /* created may be NULL */
	assert_int_equal(hashmap_count(&m), 2);
	hashmap_free(&m);
	assert_int_equal(hashmap_count(&m), 0);
	assert_null(hashmap_get(&m, 42));
}

/* The key 0 marks empty slots in the table, so it is kept beside it: it must behave as
 * any other key, before and after growth. */
static void test_key_zero(void **state)
{
	struct hashmap m = { 0 };
	int created = -1;
	uint64_t k;

	*hashmap_put(&m, 0, &created) = 5;
	assert_int_equal(created, 1);
	assert_int_equal(hashmap_count(&m), 1);
	assert_int_equal(*hashmap_get(&m, 0), 5);
	assert_null(hashmap_get(&m, 1));
	assert_int_equal(*hashmap_put(&m, 0, &created), 5);
	assert_int_equal(created, 0);
	for (k = 1; k <= 5000; k++)
		*hashmap_put(&m, k, NULL) = k * 3;
	assert_int_equal(*hashmap_get(&m, 0), 5);
	assert_int_equal(hashmap_count(&m), 5001);
	hashmap_free(&m);
	assert_null(hashmap_get(&m, 0));
}

/* Many keys, through several doublings, including keys that differ only in their high
 * bits (addresses | 1 << 63, parent << 32 | fn) and the largest key. */
static void test_growth(void **state)
{
	struct hashmap m = { 0 };
	const size_t n = 100000;
	size_t i;
	int created;

	for (i = 0; i < n; i++) {
		*hashmap_put(&m, (uint64_t)i << 32, &created) = i; /* i == 0: the key 0 */
		assert_int_equal(created, 1);
		*hashmap_put(&m, (uint64_t)i | 1ULL << 63, &created) = i + 1;
		assert_int_equal(created, 1);
	}
	*hashmap_put(&m, UINT64_MAX, NULL) = 9;
	assert_int_equal(hashmap_count(&m), 2 * n + 1);
	for (i = 0; i < n; i++) {
		assert_int_equal(*hashmap_get(&m, (uint64_t)i << 32), i);
		assert_int_equal(*hashmap_get(&m, (uint64_t)i | 1ULL << 63), i + 1);
		assert_null(hashmap_get(&m, (uint64_t)i << 32 | 1));
	}
	assert_int_equal(*hashmap_get(&m, UINT64_MAX), 9);
	/* At most 3/4 full: a probe for an absent key always meets an empty slot. */
	assert_true(m.n * 4 <= m.cap * 3);
	hashmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_key_zero),
		cmocka_unit_test(test_growth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
