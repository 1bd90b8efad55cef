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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fit_examples),
		cmocka_unit_test(test_fit_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
