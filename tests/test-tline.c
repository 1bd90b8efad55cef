/* test-tline.c: unit tests for the UI's text lines (ui/tline.c): columns of UTF-8 text and
 * where a text is cut, against a character-by-character count. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "ui.h"

/* The reference: one character at a time, as the terminal counts them. */
static size_t ref_fit(const char *s, size_t n, int maxcols, int *cols)
{
	size_t i = 0;
	int used = 0;

	while (i < n) {
		wchar_t wc;
		mbstate_t st;
		size_t r = 1;
		int w = 1;

		memset(&st, 0, sizeof(st));
		if (tl_utf8 && (unsigned char)s[i] >= 0x80) {
			r = mbrtowc(&wc, s + i, n - i, &st);
			if (r == (size_t)-1 || r == (size_t)-2 || r == 0)
				r = 1;
			else if ((w = wcwidth(wc)) < 0)
				w = 1;
		}
		if (used + w > maxcols)
			break;
		used += w;
		i += r;
	}
	*cols = used;
	return i;
}

static int utf8_locale(void)
{
	return setlocale(LC_CTYPE, "C.UTF-8") || setlocale(LC_CTYPE, "en_US.UTF-8");
}

static void test_fit_examples(void **state)
{
	int cols;

	if (!utf8_locale())
		skip();
	tl_utf8 = 1;
	/* ASCII longer than a word: cut at the column, not at a multiple of 8. */
	assert_int_equal(tl_fit("runtime.mallocgc", 16, 11, &cols), 11);
	assert_int_equal(cols, 11);
	/* A wide character (2 columns) that does not fit stays out whole. */
	assert_int_equal(tl_fit("abcdefg\xe4\xb8\xad", 10, 8, &cols), 7);
	assert_int_equal(cols, 7);
	assert_int_equal(tl_fit("abcdefg\xe4\xb8\xad", 10, 9, &cols), 10);
	assert_int_equal(cols, 9);
	/* A 3-byte one-column character after 8 ASCII bytes. */
	assert_int_equal(tl_width("tenant=a\xe2\x80\xa6"), 9);
	assert_int_equal(tl_width("\xe2\x94\x9c\xe2\x94\x80 main.main"), 12);
	assert_int_equal(tl_width(""), 0);
}

/* Random texts of ASCII, 2-, 3- and 4-byte characters (wide, combining, invalid), in a
 * UTF-8 and an ASCII terminal, cut at every column count. */
static void test_fit_random(void **state)
{
	static const char *const pieces[] = {
		"a", "main.", "runtime.gcBgMarkWorker", " ", "\xc3\xa9", "\xe4\xb8\xad",
		"\xe2\x80\xa6", "\xcc\x81" /* combining acute: 0 columns */, "\xf0\x9f\x98\x80",
		"\xff", "\xe4\xb8" /* cut short */, "0123456789abcdef",
	};
	char s[256];
	int round, utf8;

	if (!utf8_locale())
		skip();
	srand(6);
	for (utf8 = 0; utf8 <= 1; utf8++) {
		tl_utf8 = utf8;
		for (round = 0; round < 2000; round++) {
			size_t n = 0, k = (size_t)(rand() % 12);
			int maxcols;

			while (k--) {
				const char *p = pieces[rand() % (int)(sizeof(pieces) / sizeof(pieces[0]))];

				if (n + strlen(p) >= sizeof(s))
					break;
				memcpy(s + n, p, strlen(p));
				n += strlen(p);
			}
			s[n] = 0;
			for (maxcols = 0; maxcols <= (int)n + 1; maxcols++) {
				int want_cols, got_cols;
				size_t want = ref_fit(s, n, maxcols, &want_cols);

				assert_int_equal(tl_fit(s, n, maxcols, &got_cols), want);
				assert_int_equal(got_cols, want_cols);
			}
			if (!memchr(s, 0, n)) {
				int want_cols;

				ref_fit(s, n, INT_MAX, &want_cols);
				assert_int_equal(tl_width(s), want_cols);
			}
		}
	}
}

/* A function name cut to a column keeps its end from a whole part on, and its width. */
static void test_cut_name(void **state)
{
	static const struct {
		const char *name;
		int width;
		const char *want;
	} t[] = {
		{ "discovery.(*Manager).Run", 30, "discovery.(*Manager).Run      " },
		{ "discovery.(*Manager).Run", 24, "discovery.(*Manager).Run" },
		{ "discovery.(*Manager).Run", 23, "~(*Manager).Run        " },
		{ "discovery.(*Manager).Run", 15, "~(*Manager).Run" },
		/* The next part starts too far (over a third of the width): cut in the name. */
		{ "discovery.(*Manager).Run", 14, "~*Manager).Run" },
		{ "runtime.unique_runtime_registerUniqueMapCleanup.gowrap1", 26,
		  "~rUniqueMapCleanup.gowrap1" },
		{ "github.com/prometheus/prometheus/discovery.(*Manager).Run", 30,
		  "~discovery.(*Manager).Run     " },
		/* No part starts late enough: the name itself is cut, at the column. */
		{ "main.handleSearchRequests", 12, "~rchRequests" },
	};
	struct tline l;
	size_t i;

	(void)state;
	tl_utf8 = 0;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		tl_reset(&l);
		tl_field(&l, UA_NORMAL, t[i].name, t[i].width, TL_CUT_NAME);
		if (strcmp(l.buf, t[i].want))
			fail_msg("%s in %d: \"%s\", want \"%s\"", t[i].name, t[i].width, l.buf,
				 t[i].want);
		assert_int_equal(l.cols, t[i].width);
	}
}

/* Columns laid out to a width: all they want when it fits, else the widest narrowed. */
static void test_cols(void **state)
{
	struct tl_col c[4];

	(void)state;
	/* 7 + 10 fixed, 30 and 20 wanted, gap 2: 73 fits in 80. */
	c[0] = (struct tl_col){ .min = 7, .want = 7 };
	c[1] = (struct tl_col){ .min = 10, .want = 10 };
	c[2] = (struct tl_col){ .min = 6, .want = 30, .prio = 1 };
	c[3] = (struct tl_col){ .min = 6, .want = 20, .prio = 1 };
	assert_int_equal(tl_cols(c, 4, 2, 80), 73);
	assert_int_equal(c[2].w, 30);
	assert_int_equal(c[3].w, 20);
	/* In 60: 13 columns less, all from the widest until both are equal, then turn about. */
	assert_int_equal(tl_cols(c, 4, 2, 60), 60);
	assert_int_equal(c[0].w, 7);
	assert_int_equal(c[1].w, 10);
	assert_int_equal(c[2].w + c[3].w, 37);
	assert_true(c[2].w - c[3].w <= 1 && c[2].w - c[3].w >= -1);
	/* Too narrow for the minimums: every column at its min, the width passed. */
	assert_int_equal(tl_cols(c, 4, 2, 20), 7 + 10 + 6 + 6 + 6);
	assert_int_equal(c[2].w, 6);
	/* A column that wants nothing is left out, gap too. */
	c[2] = (struct tl_col){ 0 };
	assert_int_equal(tl_cols(c, 4, 2, 80), 7 + 10 + 20 + 4);
	assert_int_equal(c[2].w, 0);
	/* A column of a lower prio gives first, down to its min, before the others. */
	c[2] = (struct tl_col){ .min = 6, .want = 30, .prio = 1 };
	c[3] = (struct tl_col){ .min = 12, .want = 20, .prio = 0 };
	assert_int_equal(tl_cols(c, 4, 2, 65), 65);
	assert_int_equal(c[3].w, 12);
	assert_int_equal(c[2].w, 30);
	assert_int_equal(tl_cols(c, 4, 2, 60), 60);
	assert_int_equal(c[3].w, 12);
	assert_int_equal(c[2].w, 25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_examples),
		cmocka_unit_test(test_fit_random),
		cmocka_unit_test(test_cut_name),
		cmocka_unit_test(test_cols),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
