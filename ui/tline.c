/* tline.c: lines of text with attribute segments, measured in display columns, shared by
 * the curses screen and the plain-text batch output. */
#include "config.h"
#include "ui.h"

#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <wchar.h>

#include "gotop/util.h"

int tl_utf8;

void tl_reset(struct tline *l)
{
	l->len = 0;
	l->buf[0] = 0;
	l->cols = 0;
	l->nseg = 0;
}

static void set_attr(struct tline *l, int attr)
{
	if (l->nseg && l->seg[l->nseg - 1].attr == attr)
		return;
	if (l->nseg && l->seg[l->nseg - 1].start == l->len) {
		l->seg[l->nseg - 1].attr = (uint8_t)attr;
		return;
	}
	if (l->nseg == TL_SEGS)
		return; /* the rest keeps the last attribute */
	l->seg[l->nseg].start = (uint16_t)l->len;
	l->seg[l->nseg].attr = (uint8_t)attr;
	l->nseg++;
}

/* Columns of one character starting at s (n bytes left); *clen gets its byte length. */
static int char_cols(const char *s, size_t n, size_t *clen)
{
	wchar_t wc;
	mbstate_t st;
	size_t r;
	int w;

	if ((unsigned char)*s < 0x80 || !tl_utf8) {
		*clen = 1;
		return 1;
	}
	memset(&st, 0, sizeof(st));
	r = mbrtowc(&wc, s, n, &st);
	if (r == (size_t)-1 || r == (size_t)-2 || r == 0) {
		*clen = 1;
		return 1;
	}
	*clen = r;
	w = wcwidth(wc);
	return w < 0 ? 1 : w;
}

int tl_width(const char *s)
{
	int cols;

	tl_fit(s, strlen(s), INT_MAX, &cols);
	return cols;
}

static void append(struct tline *l, const char *s, size_t n, int cols)
{
	if (l->len + n >= TL_MAX)
		n = 0; /* a line never exceeds the buffer; the caller cut it before */
	memcpy(l->buf + l->len, s, n);
	l->len += n;
	l->buf[l->len] = 0;
	l->cols += cols;
}

void tl_put(struct tline *l, int attr, const char *s)
{
	size_t n = strlen(s);

	if (l->len + n >= TL_MAX)
		n = TL_MAX - 1 - l->len;
	set_attr(l, attr);
	/* Cut at a character boundary. */
	while (n && ((unsigned char)s[n] & 0xc0) == 0x80 && s[n])
		n--;
	{
		char tmp[TL_MAX];

		memcpy(tmp, s, n);
		tmp[n] = 0;
		append(l, tmp, n, tl_width(tmp));
	}
}

void tl_printf(struct tline *l, int attr, const char *fmt, ...)
{
	char buf[TL_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	tl_put(l, attr, buf);
}

void tl_pad(struct tline *l, int cols)
{
	static const char spaces[] = "                                                                ";

	/* Spaces that start a line are text of its own (a segment), which the screen
	 * draws: an indent. */
	if (!l->nseg && l->cols < cols)
		set_attr(l, UA_NORMAL);
	while (l->cols < cols && l->len + 1 < TL_MAX) {
		int k = GP_MIN(cols - l->cols, (int)sizeof(spaces) - 1);

		append(l, spaces, (size_t)k, k);
	}
}

void tl_field(struct tline *l, int attr, const char *s, int width, int flags)
{
	size_t n = strlen(s), i, cl;
	int cols = tl_width(s);
	const char *mark = tl_utf8 ? "\xe2\x80\xa6" : "~";

	set_attr(l, attr);
	if (width < 0)
		width = 0;
	if (cols <= width || (flags & TL_NOCUT)) {
		if ((flags & TL_RIGHT) && cols < width) {
			int start = l->cols;

			tl_pad(l, start + width - cols);
		}
		if (l->len + n < TL_MAX)
			append(l, s, n, cols);
		if (!(flags & TL_RIGHT))
			tl_pad(l, l->cols + (width > cols ? width - cols : 0));
		return;
	}
	if (width == 0)
		return;
	if (flags & TL_CUT_NAME) {
		/* Keep the end. The cut never falls inside the package path (up to the '.'
		 * after its last '/'): it moves on to where a path element or the name
		 * starts. In the name, it moves on to where a part starts (after '.', at '(')
		 * when that costs at most a third of the width, else it stays. */
		int skip = cols - (width - 1), lost = 0;
		size_t pkg = 0, j;

		for (j = 0; j < n && s[j] != '(' && s[j] != '['; j++)
			if (s[j] == '/')
				pkg = j + 1;
		while (pkg < n && s[pkg] != '.' && s[pkg] != '(')
			pkg++;
		for (i = 0; i < n && skip > 0;) {
			skip -= char_cols(s + i, n - i, &cl);
			i += cl;
		}
		for (j = i; j < n; j++) {
			if ((j && (s[j - 1] == '/' || s[j - 1] == '.')) || s[j] == '(')
				break;
			lost += char_cols(s + j, n - j, &cl) > 0;
		}
		if (j < n && (i < pkg || lost <= width / 3))
			i = j;
		{
			int start = l->cols;

			append(l, mark, strlen(mark), 1);
			append(l, s + i, n - i, tl_width(s + i));
			tl_pad(l, start + width);
		}
		return;
	}
	if (flags & TL_CUT_LEFT) {
		/* Keep the end: skip characters until the rest fits after the marker. */
		int skip = cols - (width - 1);

		for (i = 0; i < n && skip > 0;) {
			skip -= char_cols(s + i, n - i, &cl);
			i += cl;
		}
		append(l, mark, strlen(mark), 1);
		append(l, s + i, n - i, tl_width(s + i));
		tl_pad(l, l->cols); /* no-op; keeps columns exact when a wide char was split */
		return;
	}
	{
		int used = 0;

		for (i = 0; i < n;) {
			int w = char_cols(s + i, n - i, &cl);

			if (used + w > width - 1)
				break;
			used += w;
			i += cl;
		}
		append(l, s, i, used);
		append(l, mark, strlen(mark), 1);
		if (used + 1 < width) {
			int target = l->cols + (width - used - 1);

			tl_pad(l, target);
		}
	}
}

/* Target strings are escaped by util_escape (control characters, invalid UTF-8 and
 * bidirectional controls), keeping UTF-8 only on a UTF-8 terminal. */
size_t ui_escape(char *dst, size_t dstsz, const char *src, size_t len)
{
	return util_escape(dst, dstsz, src ? src : "", src ? len : 0, tl_utf8);
}

void tl_untrusted(struct tline *l, int attr, const char *s, size_t len, int width, int flags)
{
	char buf[1024];

	ui_escape(buf, sizeof(buf), s, len);
	tl_field(l, attr, buf, width, flags);
}

size_t tl_fit(const char *s, size_t n, int maxcols, int *cols)
{
	size_t i = 0, cl;
	int used = 0;

	/* Eight ASCII bytes at a time, eight columns: nearly all the screen shows is ASCII,
	 * and this loop is the screen thread's hottest (BENCHMARKS.md, "Own CPU against perf top"). */
	while (n - i >= 8 && maxcols - used >= 8) {
		uint64_t w8;

		memcpy(&w8, s + i, 8);
		if (w8 & 0x8080808080808080ull)
			break;
		i += 8;
		used += 8;
	}
	while (i < n) {
		int w = char_cols(s + i, n - i, &cl);

		if (used + w > maxcols)
			break;
		used += w;
		i += cl;
	}
	if (cols)
		*cols = used;
	return i;
}

int tl_cols(struct tl_col *c, int n, int gap, int width)
{
	int used = 0, shown = 0, i;

	for (i = 0; i < n; i++) {
		c[i].w = c[i].want > c[i].min ? c[i].want : c[i].min;
		if (c[i].w) {
			used += c[i].w;
			shown++;
		}
	}
	used += shown > 1 ? gap * (shown - 1) : 0;
	while (used > width) {
		int k = -1;

		/* Of the lowest prio that can give, the widest; the later one of equals (the
		 * first columns are what a row is about). */
		for (i = 0; i < n; i++)
			if (c[i].w > c[i].min &&
			    (k < 0 || c[i].prio < c[k].prio ||
			     (c[i].prio == c[k].prio && c[i].w >= c[k].w)))
				k = i;
		if (k < 0)
			break;
		c[k].w--;
		used--;
	}
	return used;
}
