/* test-util.c: unit tests for util (escaping, hashing, growth) and mem (fake memory). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "gotop/mem.h"
#include "gotop/util.h"

static void esc(const char *in, size_t len, int utf8, const char *want, size_t dstsz)
{
	char out[256];

	util_escape(out, dstsz, in, len, utf8);
	assert_string_equal(out, want);
}

static void test_escape_controls(void **state)
{
	esc("plain", 5, 1, "plain", 256);
	/* A terminal escape sequence from a hostile label value. */
	esc("\x1b[2J\x1b]0;pwned\x07", 14, 1, "\\e[2J\\e]0;pwned\\x07", 256);
	esc("a\nb\tc", 5, 1, "a\\nb\\tc", 256);
	esc("nul\0byte", 8, 1, "nul\\x00byte", 256);
	esc("\x7f", 1, 1, "\\x7f", 256);
}

static void test_escape_utf8(void **state)
{
	esc("h\xc3\xa9llo", 6, 1, "h\xc3\xa9llo", 256);   /* é kept */
	esc("h\xc3\xa9llo", 6, 0, "h\\xc3\\xa9llo", 256); /* ASCII terminal */
	esc("\xff\xfe", 2, 1, "\\xff\\xfe", 256);          /* invalid */
	esc("\xc0\xaf", 2, 1, "\\xc0\\xaf", 256);          /* overlong '/' */
	esc("\xed\xa0\x80", 3, 1, "\\xed\\xa0\\x80", 256); /* surrogate */
	esc("\xc2\x9b", 2, 1, "\\xc2\\x9b", 256);          /* C1 CSI */
	esc("\xe2\x82", 2, 1, "\\xe2\\x82", 256);          /* truncated sequence */
	esc("a\xe2\x80\xae" "b", 5, 1, "a\\u202eb", 256);      /* RIGHT-TO-LEFT OVERRIDE */
	esc("\xe2\x81\xa6x\xe2\x81\xa9", 7, 1, "\\u2066x\\u2069", 256); /* isolates */
	esc("\xe2\x80\x8f", 3, 1, "\\u200f", 256);          /* RLM */
	esc("\xe2\x80\x94", 3, 1, "\xe2\x80\x94", 256);   /* an em dash stays */
}

static void test_escape_truncation(void **state)
{
	char out[8];
	size_t n = util_escape(out, sizeof(out), "abcdefghijkl", 12, 1);

	assert_int_equal(n, strlen(out));
	assert_true(n < sizeof(out));
	assert_string_equal(out, "abcd...");
	/* An escape is never cut in half. */
	n = util_escape(out, sizeof(out), "ab\x1b\x1b\x1b\x1b", 6, 1);
	assert_string_equal(out, "ab\\e...");
	esc("abc", 3, 1, "abc", 4); /* exactly fits */
	esc("abcd", 4, 1, "...", 4); /* one byte too many: the plain-ASCII copy must not take it */
	esc("abc\x01", 4, 1, "...", 4); /* the escape does not fit either */
}

static void test_hash(void **state)
{
	assert_int_equal(util_hash("abc", 3, 0), util_hash("abc", 3, 0));
	assert_true(util_hash("abc", 3, 0) != util_hash("abd", 3, 0));
	assert_true(util_hash("abc", 3, 0) != util_hash("abc", 3, 1));
	assert_true(util_hash("abcdefgh1", 9, 0) != util_hash("abcdefgh2", 9, 0));
}

static void test_grow(void **state)
{
	int *v = NULL;
	size_t cap = 0, i;

	for (i = 0; i < 1000; i++) {
		xgrow((void **)&v, &cap, i + 1, sizeof(*v));
		v[i] = (int)i;
	}
	assert_true(cap >= 1000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(v[i], (int)i);
	free(v);
}

/* Go release strings as buildinfo holds them; a minor is whole digits after "go1.". */
static void test_go_minor(void **state)
{
	(void)state;
	assert_int_equal(util_go_minor("go1.24.4"), 24);
	assert_int_equal(util_go_minor("go1.21rc2"), 21);
	assert_int_equal(util_go_minor("go1.19"), 19);
	assert_int_equal(util_go_minor("devel go1.25-abcdef Tue Jan 1 2030"), 25);
	assert_int_equal(util_go_minor("go1.24.4 X:boringcrypto"), 24);
	assert_int_equal(util_go_minor(NULL), -1);
	assert_int_equal(util_go_minor(""), -1);
	assert_int_equal(util_go_minor("go2.1"), -1);
	assert_int_equal(util_go_minor("xgo1.22"), -1);   /* not a word of its own */
	assert_int_equal(util_go_minor("go1."), -1);
	assert_int_equal(util_go_minor("go1.12345"), -1); /* more than 4 digits */
}

/* xstrndup stops at a NUL; xmemdup0 keeps every byte and ends them with one. */
static void test_dup(void **state)
{
	char *a = xstrndup("ab\0cd", 5), *b = xmemdup0("ab\0cd", 5);

	(void)state;
	assert_string_equal(a, "ab");
	assert_memory_equal(b, "ab\0cd", 6);
	free(a);
	free(b);
}

static void test_fake_mem(void **state)
{
	uint64_t words[2] = { 0x1122334455667788ULL, 42 };
	struct mem_region r = { 0x1000, words, sizeof(words) };
	struct gp_mem *m = mem_fake_new(&r, 1);
	uint64_t v;
	uint32_t w;

	assert_int_equal(mem_read_u64(m, 0x1000, &v), 0);
	assert_true(v == 0x1122334455667788ULL);
	assert_int_equal(mem_read_u32(m, 0x1008, &w), 0);
	assert_int_equal(w, 42);
	assert_int_equal(mem_read_u64(m, 0x1009, &v), -EFAULT); /* crosses the end */
	assert_int_equal(mem_read_u64(m, 0xff8, &v), -EFAULT);
	assert_int_equal(mem_read_u64(m, UINT64_MAX - 3, &v), -EFAULT); /* wraps */
	mem_fake_free(m);
}

static void test_pid_mem(void **state)
{
	static const char secret[] = "read me through process_vm_readv";
	char buf[sizeof(secret)];
	struct gp_mem *m = mem_pid_new(getpid());

	assert_int_equal(mem_read(m, (uint64_t)(uintptr_t)secret, buf, sizeof(buf)), 0);
	assert_memory_equal(buf, secret, sizeof(secret));
	assert_int_equal(mem_read(m, 8, buf, 8), -EFAULT);
	assert_int_equal(mem_read(m, 0xffff800000000000ULL, buf, 8), -EFAULT);
	mem_pid_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_controls),
		cmocka_unit_test(test_dup),
		cmocka_unit_test(test_go_minor),
		cmocka_unit_test(test_escape_utf8),
		cmocka_unit_test(test_escape_truncation),
		cmocka_unit_test(test_hash),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_fake_mem),
		cmocka_unit_test(test_pid_mem),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
