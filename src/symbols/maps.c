/* maps.c: parser for /proc/PID/maps and address lookup in the parsed mappings. */
#include "config.h"
#include "gotop/maps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

/* /proc/PID/maps of a huge process stays far below this; anything larger is garbage. */
#define MAPS_MAX_TEXT (256u << 20)

struct maps {
	struct maps_entry *e;
	size_t n;
	char *strings; /* all paths, NUL-separated */
};

/* Line format, linux fs/proc/task_mmu.c show_map_vma():
 *   "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu " then padding, then the path.
 * Paths are escaped by seq_file_path() for "\n" only; " (deleted)" is appended by
 * d_path() for unlinked files. */

static int parse_hex(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (p < end) {
		int d;
		char c = *p;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			break;
		if (n >= 16)
			return -1; /* more than 64 bits */
		v = v << 4 | (uint64_t)d;
		n++;
		p++;
	}
	if (n == 0)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

static int parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int n = 0;

	while (p < end && *p >= '0' && *p <= '9') {
		if (v > (UINT64_MAX - 9) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*p - '0');
		n++;
		p++;
	}
	if (n == 0)
		return -1;
	*pp = p;
	*out = v;
	return 0;
}

static int expect(const char **pp, const char *end, char c)
{
	if (*pp >= end || **pp != c)
		return -1;
	(*pp)++;
	return 0;
}

static void skip_spaces(const char **pp, const char *end)
{
	while (*pp < end && (**pp == ' ' || **pp == '\t'))
		(*pp)++;
}

static uint8_t classify(const char *path, size_t len)
{
	if (len == 0)
		return MAPS_KIND_ANON;
	if (path[0] == '/')
		return MAPS_KIND_FILE;
	if (len == 6 && memcmp(path, "[heap]", 6) == 0)
		return MAPS_KIND_HEAP;
	if (len >= 6 && memcmp(path, "[stack", 6) == 0 && path[len - 1] == ']')
		return MAPS_KIND_STACK;
	if (len == 6 && memcmp(path, "[vdso]", 6) == 0)
		return MAPS_KIND_VDSO;
	if (len == 10 && memcmp(path, "[vsyscall]", 10) == 0)
		return MAPS_KIND_VSYSCALL;
	if (len >= 6 && memcmp(path, "[anon:", 6) == 0)
		return MAPS_KIND_ANON;
	return MAPS_KIND_OTHER;
}

/* Parses one line [p, end) into *e; the path is copied to *strp. 0 or -1. */
static int parse_line(const char *p, const char *end, struct maps_entry *e, char **strp)
{
	uint64_t start, stop, pgoff, maj, min, inode;
	uint8_t perms = 0;
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;

	if (parse_hex(&p, end, &start) || expect(&p, end, '-') || parse_hex(&p, end, &stop))
		return -1;
	if (stop <= start)
		return -1;
	if (expect(&p, end, ' ') || end - p < 4)
		return -1;
	if (p[0] == 'r')
		perms |= MAPS_R;
	else if (p[0] != '-')
		return -1;
	if (p[1] == 'w')
		perms |= MAPS_W;
	else if (p[1] != '-')
		return -1;
	if (p[2] == 'x')
		perms |= MAPS_X;
	else if (p[2] != '-')
		return -1;
	if (p[3] == 'p')
		perms |= MAPS_P;
	else if (p[3] != 's')
		return -1;
	p += 4;
	if (expect(&p, end, ' ') || parse_hex(&p, end, &pgoff) || expect(&p, end, ' '))
		return -1;
	if (parse_hex(&p, end, &maj) || expect(&p, end, ':') || parse_hex(&p, end, &min))
		return -1;
	if (maj > UINT32_MAX || min > UINT32_MAX)
		return -1;
	if (expect(&p, end, ' ') || parse_dec(&p, end, &inode))
		return -1;
	if (p < end && *p != ' ' && *p != '\t')
		return -1;
	skip_spaces(&p, end);
	/* The path runs to the end of the line and may hold spaces. */
	size_t plen = (size_t)(end - p);
	while (plen > 0 && (p[plen - 1] == '\r'))
		plen--;
	e->deleted = 0;
	if (plen > dlen && memcmp(p + plen - dlen, deleted, dlen) == 0) {
		e->deleted = 1;
		plen -= dlen;
	}
	memcpy(*strp, p, plen);
	(*strp)[plen] = '\0';
	e->path = *strp;
	*strp += plen + 1;

	e->start = start;
	e->end = stop;
	e->pgoff = pgoff;
	e->inode = inode;
	e->dev_major = (uint32_t)maj;
	e->dev_minor = (uint32_t)min;
	e->perms = perms;
	e->kind = classify(e->path, plen);
	return 0;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct maps_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

struct maps *maps_parse(const char *text, size_t len)
{
	struct maps *m = xcalloc(1, sizeof(*m));
	size_t cap = 0, nlines = 0;
	const char *p, *end;
	char *str;
	int sorted = 1;

	if (text == NULL)
		len = 0;
	end = text ? text + len : text;
	for (p = text; p < end; p++)
		if (*p == '\n')
			nlines++;
	cap = nlines + 1;
	m->e = xcalloc(cap, sizeof(*m->e));
	/* Paths are copied out of the text: their total length is below len + lines. */
	m->strings = xmalloc(len + cap + 1);
	str = m->strings;

	p = text;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		char *save = str;

		if (m->n < cap && parse_line(p, eol, &m->e[m->n], &str) == 0) {
			if (m->n > 0 && cmp_entry(&m->e[m->n - 1], &m->e[m->n]) > 0)
				sorted = 0;
			m->n++;
		} else {
			str = save;
		}
		p = nl ? nl + 1 : end;
	}
	if (!sorted)
		qsort(m->e, m->n, sizeof(*m->e), cmp_entry);
	/* Drop entries that overlap their predecessor: the kernel never produces them. */
	size_t out = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (out > 0 && m->e[i].start < m->e[out - 1].end)
			continue;
		m->e[out++] = m->e[i];
	}
	m->n = out;
	return m;
}

struct maps *maps_load(pid_t pid)
{
	char path[64];
	size_t len = 0;
	char *text;
	struct maps *m;

	if (pid <= 0)
		snprintf(path, sizeof(path), "/proc/self/maps");
	else
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	text = util_read_file(path, MAPS_MAX_TEXT, &len);
	if (text == NULL)
		return NULL;
	/* A zombie or a kernel thread has an empty maps file. */
	m = maps_parse(text, len);
	free(text);
	return m;
}

void maps_free(struct maps *m)
{
	if (m == NULL)
		return;
	free(m->e);
	free(m->strings);
	free(m);
}

const struct maps_entry *maps_find(const struct maps *m, uint64_t addr)
{
	size_t lo = 0, hi;

	if (m == NULL || m->n == 0)
		return NULL;
	hi = m->n;
	/* First entry whose start > addr; the candidate is the one before it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->e[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct maps_entry *e = &m->e[lo - 1];
	return addr < e->end ? e : NULL;
}

size_t maps_count(const struct maps *m)
{
	return m ? m->n : 0;
}

const struct maps_entry *maps_at(const struct maps *m, size_t i)
{
	if (m == NULL || i >= m->n)
		return NULL;
	return &m->e[i];
}
