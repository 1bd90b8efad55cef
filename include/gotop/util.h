/* util.h: allocation wrappers, hashing, growable arrays and safe text escaping. */
#ifndef GOTOP_UTIL_H
#define GOTOP_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdnoreturn.h>

#define GP_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define GP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GP_MAX(a, b) ((a) > (b) ? (a) : (b))
/* A macro's value as a string literal (for help texts that quote a default). */
#define GP_STR_(x) #x
#define GP_STR(x) GP_STR_(x)

/* Out of memory is fatal: these never return NULL. Before exiting they run the
 * hook set with util_set_fatal_hook (the UI uses it to restore the terminal). */
void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows *p to hold at least `need` elements of `elsize` bytes; *cap is updated.
 * Doubles the capacity so appends are amortized O(1). Inline, since nearly every call
 * finds room (there are several calls per sample on the sampling path). */
void xgrow_slow(void **p, size_t *cap, size_t need, size_t elsize);
static inline void xgrow(void **p, size_t *cap, size_t need, size_t elsize)
{
	if (need > *cap)
		xgrow_slow(p, cap, need, elsize);
}
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* The n bytes at s, NUL bytes included, with a NUL after them. */
char *xmemdup0(const void *s, size_t n);
/* Formatted allocation; caller frees. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void util_set_fatal_hook(void (*hook)(void));
/* Runs the fatal hook, prints "gotop-perf: <message>" to stderr and exits 70. */
noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* 64-bit hash of a byte string (FNV-1a folded with a murmur finalizer). */
uint64_t util_hash(const void *data, size_t len, uint64_t seed);
static inline uint64_t util_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
/* Folds the n words at v into h, a word at a time (for the caches keyed by a stack's
 * addresses; the caller mixes the low bits it indexes with, e.g. h ^ h >> 31). */
static inline uint64_t util_hash_words(uint64_t h, const uint64_t *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ v[i]) * 0x9e3779b97f4a7c15ULL;
	return h;
}

/* Copies src[0..srclen) into dst (NUL-terminated, at most dstsz bytes) so that it is
 * safe to print on a terminal: control characters (C0, DEL, C1) become \xNN or \n,
 * \t, \e forms, invalid UTF-8 bytes become \xNN, bidirectional controls (U+202A-E,
 * U+2066-9, U+200E/F, U+061C) become \uNNNN, backslash stays as is. Valid UTF-8
 * is kept when utf8 is nonzero, else every non-ASCII byte is escaped. Output that does
 * not fit is cut at a character boundary and ends with "...". Returns strlen(dst). */
size_t util_escape(char *dst, size_t dstsz, const char *src, size_t srclen, int utf8);

/* The minor release of a Go version string as the buildinfo holds it: "go1.24.4",
 * "go1.24rc1", "go1.24", "devel go1.25-abcdef ...", "go1.24.4 X:boringcrypto" give 24;
 * anything else (NULL included) -1. */
int util_go_minor(const char *version);

/* Monotonic and wall clocks in nanoseconds, and the calling thread's CPU time (0 when the
 * clock cannot be read). */
uint64_t util_now_ns(void);
uint64_t util_wall_ns(void);
uint64_t util_thread_cpu_ns(void);

/* Reads a whole small file (e.g. under /proc) into a NUL-terminated buffer; caller
 * frees. Reads at most maxlen bytes. Returns NULL with errno set on failure. */
char *util_read_file(const char *path, size_t maxlen, size_t *lenp);

#endif
