/* util.c: allocation wrappers, hashing, terminal-safe escaping, clocks and small file reads. */
#include "config.h"
#include "gotop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void (*fatal_hook)(void);

void util_set_fatal_hook(void (*hook)(void))
{
	fatal_hook = hook;
}

noreturn void fatal(const char *fmt, ...)
{
	va_list ap;

	if (fatal_hook) {
		void (*hook)(void) = fatal_hook;
		fatal_hook = NULL; /* a failing hook must not recurse */
		hook();
	}
	fputs("gotop-perf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(70);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		fatal("out of memory (%zu bytes)", n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (!p)
		fatal("out of memory (%zu x %zu bytes)", nmemb, size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		fatal("out of memory (%zu bytes)", n);
	return q;
}

void xgrow_slow(void **p, size_t *cap, size_t need, size_t elsize)
{
	size_t n = *cap ? *cap : 8;

	if (need <= *cap)
		return;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			fatal("array too large");
		n *= 2;
	}
	if (elsize && n > SIZE_MAX / elsize)
		fatal("array too large");
	*p = xrealloc(*p, n * elsize);
	*cap = n;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	return xmemdup0(s, strnlen(s, n));
}

char *xmemdup0(const void *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	return s;
}

uint64_t util_hash(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	size_t i = 0;

	/* 8 bytes at a time, then the tail: FNV-style multiply with a final avalanche. */
	for (; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return util_mix64(h ^ len);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 if invalid.
 * Rejects overlongs, surrogates and code points above U+10FFFF (RFC 3629). */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cpp)
{
	unsigned c = s[0];
	size_t len, i;
	uint32_t cp;

	if (c < 0x80) {
		*cpp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	/* C1 controls U+0080..U+009F are terminal controls too. */
	if (cp >= 0x80 && cp <= 0x9f)
		return 0;
	*cpp = cp;
	return len;
}

/* The escaped form of the character at s (at most n bytes) into tmp (8 bytes);
 * returns its length and sets *adv to the input bytes it consumed. */
static size_t escape_one(const unsigned char *s, size_t n, int utf8, char *tmp, size_t *adv)
{
	unsigned c = s[0];

	*adv = 1;
	if (c >= 0x20 && c < 0x7f) {
		tmp[0] = (char)c;
		return 1;
	}
	if (c == '\n' || c == '\t' || c == 0x1b) {
		tmp[0] = '\\';
		tmp[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'e';
		return 2;
	}
	if (c >= 0x80 && utf8) {
		uint32_t cp;
		size_t l = utf8_seq(s, n, &cp);

		if (l) {
			*adv = l;
			/* Bidirectional controls reorder what follows on the line (the
			 * "Trojan Source" trick, Unicode TR9 explicit formatting
			 * characters): show them, do not obey them. */
			if (cp == 0x061c || cp == 0x200e || cp == 0x200f ||
			    (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
				return (size_t)snprintf(tmp, 8, "\\u%04x", (unsigned)cp);
			memcpy(tmp, s, l);
			return l;
		}
	}
	return (size_t)snprintf(tmp, 8, "\\x%02x", c);
}

size_t util_escape(char *dst, size_t dstsz, const char *src, size_t srclen, int utf8)
{
	const unsigned char *s = (const unsigned char *)src;
	size_t o = 0, i, total = 0, adv, limit;
	char tmp[8];

	if (!dstsz)
		return 0;
	/* Printable ASCII (most names) is its own escape: copied when it fits. The live
	 * UI escapes every name it shows, at each refresh. */
	for (i = 0; i < srclen && s[i] >= 0x20 && s[i] < 0x7f; i++)
		;
	if (i == srclen && srclen < dstsz) {
		memcpy(dst, src, srclen);
		dst[srclen] = 0;
		return srclen;
	}
	for (i = 0; i < srclen; i += adv)
		total += escape_one(s + i, srclen - i, utf8, tmp, &adv);
	/* Everything fits: write it all. Else stop early enough for "..." and the NUL. */
	limit = total + 1 <= dstsz ? dstsz - 1 : (dstsz > 4 ? dstsz - 4 : 0);
	for (i = 0; i < srclen; i += adv) {
		size_t tlen = escape_one(s + i, srclen - i, utf8, tmp, &adv);

		if (o + tlen > limit)
			break;
		memcpy(dst + o, tmp, tlen);
		o += tlen;
	}
	if (i < srclen) {
		size_t k;

		for (k = 0; k < 3 && o + 1 < dstsz; k++)
			dst[o++] = '.';
	}
	dst[o] = 0;
	return o;
}

int util_go_minor(const char *v)
{
	const char *p;
	int minor = 0, digits = 0;

	if (!v)
		return -1;
	p = strstr(v, "go1.");
	if (!p || (p != v && p[-1] != ' '))
		return -1;
	for (p += 4; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
		minor = minor * 10 + (*p - '0');
	if (!digits || (*p >= '0' && *p <= '9'))
		return -1;
	return minor;
}

uint64_t util_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t util_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t util_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

char *util_read_file(const char *path, size_t maxlen, size_t *lenp)
{
	size_t len = 0, cap = 4096;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		ssize_t r;

		if (len == cap) {
			if (cap >= maxlen)
				break;
			cap = GP_MIN(cap * 2, maxlen);
			buf = xrealloc(buf, cap + 1);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	if (lenp)
		*lenp = len;
	return buf;
}
