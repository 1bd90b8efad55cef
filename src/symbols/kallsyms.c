/* kallsyms.c: loads /proc/kallsyms into a sorted table of kernel text symbols. */
#include "config.h"
#include "gotop/kallsyms.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

#define KALLSYMS_MAX_TEXT (256u << 20)
/* The last symbol of a module has no successor in that module: assume it is no
 * longer than this. */
#define KALLSYMS_TAIL (64u << 10)

/* 16 bytes: a kernel has over 100,000 text symbols, held for the whole session. */
struct ksym {
	uint64_t addr;
	uint32_t name;     /* offset into names */
	uint32_t mod : 24; /* index into mods; 0 = core kernel ("") */
	uint32_t rank : 8; /* among aliases at one address, the highest is kept */
};
#define KALLSYMS_MAX_MODS (1u << 24)

struct kallsyms {
	struct ksym *s;
	size_t n;
	char *names;
	size_t names_len;
	char **mods;
	size_t nmods;
	uint64_t kstart, kend;
};

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static uint32_t add_name(struct kallsyms *ks, size_t *cap, const char *s, size_t len)
{
	uint32_t off = (uint32_t)ks->names_len;

	xgrow((void **)&ks->names, cap, ks->names_len + len + 1, 1);
	memcpy(ks->names + ks->names_len, s, len);
	ks->names[ks->names_len + len] = '\0';
	ks->names_len += len + 1;
	return off;
}

static uint32_t add_module(struct kallsyms *ks, size_t *cap, const char *s, size_t len)
{
	/* Module symbols come in runs: compare with the last few first. */
	for (size_t i = ks->nmods; i > 0 && i + 8 > ks->nmods; i--)
		if (strlen(ks->mods[i - 1]) == len && memcmp(ks->mods[i - 1], s, len) == 0)
			return (uint32_t)(i - 1);
	for (size_t i = 0; i < ks->nmods; i++)
		if (strlen(ks->mods[i]) == len && memcmp(ks->mods[i], s, len) == 0)
			return (uint32_t)i;
	if (ks->nmods >= KALLSYMS_MAX_MODS)
		return 0; /* not expected of a kernel: the symbols count as the core's */
	xgrow((void **)&ks->mods, cap, ks->nmods + 1, sizeof(*ks->mods));
	ks->mods[ks->nmods] = xstrndup(s, len);
	return (uint32_t)ks->nmods++;
}

/* Format, linux kernel/kallsyms.c s_show(): "%px %c %s\t[%s]\n" for module symbols,
 * "%px %c %s\n" otherwise; addresses print as zeros under kptr_restrict. */
struct kallsyms *kallsyms_parse(const char *text, size_t len, int *err)
{
	struct kallsyms *ks = xcalloc(1, sizeof(*ks));
	size_t scap = 0, ncap = 0, mcap = 0;
	const char *p = text, *end = text ? text + len : text;
	int nonzero = 0, any = 0;
	uint64_t stext = 0, etext = 0;

	add_module(ks, &mcap, "", 0);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		const char *q = p;
		uint64_t addr = 0;
		int digits = 0;

		p = nl ? nl + 1 : end;
		while (q < eol && hexval(*q) >= 0 && digits < 17) {
			addr = addr << 4 | (uint64_t)hexval(*q);
			q++;
			digits++;
		}
		if (digits == 0 || digits > 16 || q + 3 > eol || *q != ' ' || q[2] != ' ')
			continue;
		char type = q[1];
		q += 3;
		const char *name = q;
		while (q < eol && *q != '\t' && *q != ' ')
			q++;
		size_t nlen = (size_t)(q - name);
		if (nlen == 0 || nlen > 4096)
			continue;
		any++;
		if (addr != 0)
			nonzero = 1;
		if (nlen == 6 && memcmp(name, "_stext", 6) == 0)
			stext = addr;
		if (nlen == 6 && memcmp(name, "_etext", 6) == 0)
			etext = addr;
		if (type != 't' && type != 'T')
			continue;
		if (nlen == 6 && memcmp(name, "_etext", 6) == 0)
			continue; /* a marker past the last function, not a function */
		uint32_t mod = 0;
		while (q < eol && (*q == '\t' || *q == ' '))
			q++;
		if (q < eol && *q == '[') {
			const char *m = ++q;
			while (q < eol && *q != ']')
				q++;
			if (q > m)
				mod = add_module(ks, &mcap, m, (size_t)(q - m));
		}
		if (ks->names_len + nlen + 1 > UINT32_MAX)
			break;
		xgrow((void **)&ks->s, &scap, ks->n + 1, sizeof(*ks->s));
		struct ksym *s = &ks->s[ks->n++];
		s->addr = addr;
		s->name = add_name(ks, &ncap, name, nlen);
		s->mod = mod;
		/* Among aliases prefer global (T), then fewer leading underscores. */
		size_t us = 0;
		while (us < nlen && us < 8 && name[us] == '_')
			us++;
		s->rank = (uint32_t)((type == 'T' ? 16 : 0) + (8 - (int)us));
	}
	if (any && !nonzero) {
		kallsyms_free(ks);
		if (err)
			*err = -EPERM;
		errno = EPERM;
		return NULL;
	}
	if (ks->n == 0) {
		kallsyms_free(ks);
		if (err)
			*err = -ENODATA;
		errno = ENODATA;
		return NULL;
	}
	/* One symbol per address, the best-ranked alias. /proc/kallsyms lists addresses in
	 * order (the core kernel, then modules above it): then one pass picks it, and the
	 * sort (a large part of the parse) is needed only for a file out of order. */
	size_t out = 0, i;
	for (i = 1; i < ks->n && ks->s[i - 1].addr <= ks->s[i].addr; i++)
		;
	if (i < ks->n)
		qsort(ks->s, ks->n, sizeof(*ks->s), ksym_cmp);
	for (i = 0; i < ks->n; i++) {
		if (out > 0 && ks->s[out - 1].addr == ks->s[i].addr) {
			if (ksym_cmp(&ks->s[i], &ks->s[out - 1]) < 0)
				ks->s[out - 1] = ks->s[i];
			continue;
		}
		ks->s[out++] = ks->s[i];
	}
	ks->n = out;
	/* Held for the session: give back what growing left over. */
	ks->s = xrealloc(ks->s, ks->n * sizeof(*ks->s));
	ks->names = xrealloc(ks->names, ks->names_len ? ks->names_len : 1);
	ks->kstart = stext;
	ks->kend = etext;
	if (ks->kstart == 0 || ks->kend <= ks->kstart) {
		/* No markers: the core kernel's symbols span it. */
		ks->kstart = UINT64_MAX;
		ks->kend = 0;
		for (i = 0; i < ks->n; i++) {
			if (ks->s[i].mod != 0)
				continue;
			ks->kstart = GP_MIN(ks->kstart, ks->s[i].addr);
			ks->kend = GP_MAX(ks->kend, ks->s[i].addr + 1);
		}
	}
	if (err)
		*err = 0;
	return ks;
}

struct kallsyms *kallsyms_load(int *err)
{
	size_t len = 0;
	char *text = util_read_file("/proc/kallsyms", KALLSYMS_MAX_TEXT, &len);
	struct kallsyms *ks;

	if (text == NULL) {
		int e = errno;
		if (err)
			*err = -e;
		return NULL;
	}
	ks = kallsyms_parse(text, len, err);
	free(text);
	return ks;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (ks == NULL)
		return;
	for (size_t i = 0; i < ks->nmods; i++)
		free(ks->mods[i]);
	free(ks->mods);
	free(ks->names);
	free(ks->s);
	free(ks);
}

const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **module,
			    uint64_t *offset)
{
	size_t lo = 0, hi;

	if (ks == NULL || ks->n == 0)
		return NULL;
	hi = ks->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ks->s[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct ksym *s = &ks->s[lo - 1];
	uint64_t limit = lo < ks->n ? ks->s[lo].addr : UINT64_MAX;
	/* The core kernel's text ends at _etext; a symbol whose successor is elsewhere
	 * (another module, or past _etext) gets a bounded tail. */
	if (s->mod == 0 && s->addr < ks->kend)
		limit = GP_MIN(limit, ks->kend);
	else if (lo >= ks->n || ks->s[lo].mod != s->mod || s->mod == 0)
		limit = GP_MIN(limit, s->addr + KALLSYMS_TAIL);
	if (addr >= limit)
		return NULL;
	if (module)
		*module = ks->mods[s->mod];
	if (offset)
		*offset = addr - s->addr;
	return ks->names + s->name;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return ks ? ks->n : 0;
}

void kallsyms_kernel_range(const struct kallsyms *ks, uint64_t *start, uint64_t *end)
{
	*start = ks ? ks->kstart : 0;
	*end = ks ? ks->kend : 0;
}

int kallsyms_module_range(const struct kallsyms *ks, const char *module, uint64_t *start,
			  uint64_t *end)
{
	size_t m;

	if (ks == NULL || module == NULL)
		return -ENOENT;
	for (m = 0; m < ks->nmods; m++)
		if (strcmp(ks->mods[m], module) == 0)
			break;
	if (m == ks->nmods)
		return -ENOENT;
	if (m == 0 && ks->kend > ks->kstart) {
		*start = ks->kstart;
		*end = ks->kend;
		return 0;
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	for (size_t i = 0; i < ks->n; i++) {
		if (ks->s[i].mod != m)
			continue;
		lo = GP_MIN(lo, ks->s[i].addr);
		uint64_t lim = i + 1 < ks->n && ks->s[i + 1].mod == m ? ks->s[i + 1].addr
								       : ks->s[i].addr + KALLSYMS_TAIL;
		if (i + 1 < ks->n && ks->s[i + 1].addr < lim)
			lim = ks->s[i + 1].addr;
		hi = GP_MAX(hi, lim);
	}
	if (lo == UINT64_MAX)
		return -ENOENT;
	*start = lo;
	*end = hi;
	return 0;
}

char *kallsyms_kernel_build_id(void)
{
	size_t len = 0;
	char *buf = util_read_file("/sys/kernel/notes", 1u << 16, &len);
	char *out = NULL;
	size_t off = 0;

	if (buf == NULL)
		return NULL;
	/* A sequence of ELF notes (Elf64_Nhdr: namesz, descsz, type as 32-bit words),
	 * name and desc each padded to 4 bytes (linux kernel/ksysfs.c notes_read). */
	while (off + 12 <= len) {
		uint32_t nh[3];
		memcpy(nh, buf + off, sizeof(nh));
		size_t namesz = nh[0], descsz = nh[1];
		size_t name_off = off + 12;
		size_t desc_off = name_off + ((namesz + 3) & ~(size_t)3);
		size_t next = desc_off + ((descsz + 3) & ~(size_t)3);
		if (namesz > len || descsz > len || next > len || next <= off)
			break;
		if (nh[2] == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 &&
		    memcmp(buf + name_off, "GNU", 4) == 0 && descsz > 0 && descsz <= 64) {
			static const char digits[] = "0123456789abcdef";
			out = xmalloc(descsz * 2 + 1);
			for (size_t i = 0; i < descsz; i++) {
				uint8_t b = (uint8_t)buf[desc_off + i];
				out[2 * i] = digits[b >> 4];
				out[2 * i + 1] = digits[b & 15];
			}
			out[descsz * 2] = '\0';
			break;
		}
		off = next;
	}
	free(buf);
	if (out == NULL)
		errno = ENOENT;
	return out;
}
