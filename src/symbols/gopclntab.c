/* gopclntab.c: reader for Go's .gopclntab (Go 1.16 to 1.27): functions, files, lines, inlining, pcsp. */
#include "config.h"
#include "gotop/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

/*
 * Format facts, checked against the Go sources named next to each one and against
 * binaries built with Go 1.19 and 1.21 to 1.27 for amd64, arm64, 386, arm, s390x and
 * ppc64 (tests/test-gopclntab.c). Go 1.16-1.17 (magic 0xFFFFFFFA) follow the go1.16
 * sources and go1.24 debug/gosym; no toolchain was at hand, so only hand-built tables
 * test them.
 *
 * pcHeader (go1.19/go1.24/go1.27 runtime/symtab.go): magic u32, pad1 u8, pad2 u8,
 * minLC u8, ptrSize u8, then ptrSize words: nfunc, nfiles, [textStart: 1.18+],
 * funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset. Go 1.16/1.17
 * (magic 0xFFFFFFFA) have no textStart word. From Go 1.26 the textStart word is
 * kept but always 0 ("no longer stored as it requires a relocation").
 *
 * Magic numbers (go1.27 internal/abi/symtab.go): 0xFFFFFFFA Go 1.16-1.17,
 * 0xFFFFFFF0 Go 1.18-1.19, 0xFFFFFFF1 Go 1.20 and later (still the current one in 1.27).
 */

#define MAGIC_116 0xFFFFFFFAu
#define MAGIC_118 0xFFFFFFF0u
#define MAGIC_120 0xFFFFFFF1u

/* internal/abi/symtab.go (go1.24, go1.27): PCDATA_InlTreeIndex = 2, FUNCDATA_InlTree = 3;
 * the same numbers in go1.16 runtime/symtab.go (_PCDATA_InlTreeIndex, _FUNCDATA_InlTree). */
#define PCDATA_INLTREEINDEX 2
#define FUNCDATA_INLTREE 3

/* Inline chains deeper than this are treated as corrupt (the compiler's default
 * inlining budget never comes close). */
#define MAX_INLINE_DEPTH 256

/* A piece of the file as the program sees it: link-time address -> bytes. */
struct region {
	uint64_t addr, size;
	const uint8_t *data; /* size bytes; NULL for NOBITS (reads as zero) */
	bool exec, write;
};

struct gopcln {
	const uint8_t *data; /* the pclntab, len bytes */
	size_t len;
	uint64_t addr; /* link-time address of data[0]; 0 if unknown */
	uint32_t magic;
	unsigned ptrsize, quantum;
	bool swap; /* file byte order differs from ours */
	uint64_t text_start;
	uint64_t hdr_text_start; /* as written in the header (0 from Go 1.26) */
	size_t nfunc;
	size_t rec_end; /* end of the last _func record (with its pcdata/funcdata) */
	uint8_t wrapper_id; /* FuncIDWrapper, 0 if unknown */

	/* Offsets into data of the sub-tables and their ends. */
	size_t funcnametab, funcnametab_end;
	size_t cutab, cutab_end;
	size_t filetab, filetab_end;
	size_t pctab, pctab_end;
	size_t pcln; /* functab + _func records; ends at len */

	/* functab: nfunc pairs {entry, funcoff} then one final entry (the end PC); fields are
	 * 4 bytes from Go 1.18 (entryoff from textStart), ptrsize before (absolute entry). */
	unsigned ftab_field;

	/* _func layout (go1.16/go1.19/go1.24/go1.27 runtime/runtime2.go). */
	unsigned fn_entry_size; /* ptrsize for 1.16-1.17 (absolute entry), else 4 (entryOff) */
	unsigned fn_base;       /* offset of nameOff: fn_entry_size */
	int fn_startline;       /* offset of startLine (1.20+), -1 before */
	unsigned fn_funcid, fn_flag, fn_nfuncdata, fn_size;

	/* Inline tree records: 20 bytes up to Go 1.19, 16 from 1.20 (see inl_* below). */
	unsigned inl_size;

	/* Funcdata: from 1.18 u32 offsets from moduledata.gofunc; before, absolute pointers. */
	uint64_t gofunc;            /* link-time address, 0 if unknown */
	const uint8_t *gofunc_data; /* bytes at gofunc up to the end of its region */
	size_t gofunc_len;

	struct region *regions; /* sorted by addr; only with ELF */
	size_t nregions;

	char *version; /* "go1.24.4" */
	char *buildid;
};

static const char *const error_text[] = {
#define GOPCLN_ERR(name, errnum, text) text,
	GOPCLN_ERRORS
#undef GOPCLN_ERR
};

static const int error_errno[] = {
#define GOPCLN_ERR(name, errnum, text) errnum,
	GOPCLN_ERRORS
#undef GOPCLN_ERR
};

const char *gopcln_strerror(int err)
{
	unsigned e = err < 0 ? 0u - (unsigned)err : (unsigned)err;

	if (e >= GP_ARRAY_SIZE(error_text))
		return "unknown gopclntab error";
	return error_text[e];
}

/* ---- bounded little/big-endian reads ---- */

static inline uint32_t bswap32_if(bool swap, uint32_t v)
{
	return swap ? __builtin_bswap32(v) : v;
}

static inline uint64_t bswap64_if(bool swap, uint64_t v)
{
	return swap ? __builtin_bswap64(v) : v;
}

/* Callers check off + 4 <= len first. */
static inline uint32_t ld32(const struct gopcln *t, size_t off)
{
	uint32_t v;

	memcpy(&v, t->data + off, 4);
	return bswap32_if(t->swap, v);
}

static inline uint64_t ldword_raw(const uint8_t *p, unsigned ptrsize, bool swap)
{
	if (ptrsize == 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		return bswap64_if(swap, v);
	}
	uint32_t v;
	memcpy(&v, p, 4);
	return bswap32_if(swap, v);
}

/* Is [off, off+n) inside a buffer of len bytes? Overflow-safe. */
static inline bool in_bounds(size_t off, size_t n, size_t len)
{
	return off <= len && n <= len - off;
}

/* A NUL-terminated string at off inside data[lo, hi), or NULL. */
static const char *str_at(const struct gopcln *t, size_t lo, size_t hi, uint64_t off)
{
	if (off >= hi - lo)
		return NULL;
	const char *s = (const char *)t->data + lo + off;
	if (!memchr(s, 0, hi - lo - off))
		return NULL;
	return s;
}

/* ---- header ---- */

/* Parses and validates the header and the whole functab of data[0, len). Fills t
 * (except text_start and gofunc, which may need ELF). 0 or a GOPCLN_E_* code. */
static int parse_header(struct gopcln *t, const uint8_t *data, size_t len)
{
	uint32_t m;

	t->data = data;
	t->len = len;
	if (len < 8 + 7 * 4)
		return GOPCLN_E_NOTFOUND;
	memcpy(&m, data, 4);
	/* The magic tells the byte order (go1.24 debug/gosym/pclntab.go does the same). */
	if (m == MAGIC_116 || m == MAGIC_118 || m == MAGIC_120)
		t->swap = false;
	else if (__builtin_bswap32(m) == MAGIC_116 || __builtin_bswap32(m) == MAGIC_118 ||
		 __builtin_bswap32(m) == MAGIC_120) {
		t->swap = true;
		m = __builtin_bswap32(m);
	} else if (m == 0xFFFFFFFBu || __builtin_bswap32(m) == 0xFFFFFFFBu) {
		return GOPCLN_E_VERSION; /* Go 1.2-1.15 */
	} else {
		return GOPCLN_E_NOTFOUND;
	}
	t->magic = m;
	if (data[4] != 0 || data[5] != 0)
		return GOPCLN_E_CORRUPT;
	t->quantum = data[6];
	t->ptrsize = data[7];
	if ((t->quantum != 1 && t->quantum != 2 && t->quantum != 4) ||
	    (t->ptrsize != 4 && t->ptrsize != 8))
		return GOPCLN_E_CORRUPT;

	unsigned ps = t->ptrsize;
	unsigned nwords = m == MAGIC_116 ? 7 : 8;
	if (!in_bounds(8, (size_t)nwords * ps, len))
		return GOPCLN_E_CORRUPT;
	uint64_t w[8] = { 0 };
	for (unsigned i = 0; i < nwords; i++)
		w[i] = ldword_raw(data + 8 + i * ps, ps, t->swap);
	uint64_t nfunc = w[0];
	unsigned o = 2;
	if (m != MAGIC_116)
		t->text_start = t->hdr_text_start = w[o++]; /* 0 from Go 1.26 */
	uint64_t fn = w[o], cu = w[o + 1], ft = w[o + 2], pc = w[o + 3], pl = w[o + 4];
	/* The linker writes the tables in this order (go1.24 cmd/link/internal/ld/pcln.go
	 * generatePCHeader and callers): funcnametab, cutab, filetab, pctab, functab. */
	size_t hdr_end = 8 + (size_t)nwords * ps;
	if (fn < hdr_end || cu < fn || ft < cu || pc < ft || pl < pc || pl >= len)
		return GOPCLN_E_CORRUPT;
	t->funcnametab = fn;
	t->funcnametab_end = cu;
	t->cutab = cu;
	t->cutab_end = ft;
	t->filetab = ft;
	t->filetab_end = pc;
	t->pctab = pc;
	t->pctab_end = pl;
	t->pcln = pl;

	if (m == MAGIC_116) {
		/* go1.16 runtime/runtime2.go _func: entry uintptr, nameoff int32, args int32,
		 * deferreturn u32, pcsp, pcfile, pcln, npcdata, cuOffset u32, funcID u8,
		 * [flag u8: 1.17; pad in 1.16], pad u8, nfuncdata u8. functab entries are
		 * {entry, funcoff uintptr} (go1.16 runtime/symtab.go functab). */
		t->ftab_field = ps;
		t->fn_entry_size = ps;
		t->fn_startline = -1;
		t->inl_size = 20;
	} else {
		/* go1.19 runtime/runtime2.go _func: entryoff u32 first; go1.20+ adds startLine
		 * i32 after cuOffset (golang/go#58474). functab is {entryoff, funcoff u32}. */
		t->ftab_field = 4;
		t->fn_entry_size = 4;
		t->fn_startline = m == MAGIC_120 ? (int)(4 + 4 * 8) : -1;
		t->inl_size = m == MAGIC_120 ? 16 : 20;
	}
	t->fn_base = t->fn_entry_size;
	/* after nameOff: args, deferreturn, pcsp, pcfile, pcln, npcdata, cuOffset (7 x 4) */
	unsigned after = t->fn_base + 4 + 7 * 4 + (m == MAGIC_120 ? 4 : 0);
	t->fn_funcid = after;
	t->fn_flag = after + 1;
	/* 1.16 has a zero pad byte where 1.17 put flag: reads as no flags */
	t->fn_nfuncdata = after + 3;
	t->fn_size = after + 4;

	/* functab: nfunc {entry, funcoff} pairs then the end PC (go1.24 debug/gosym
	 * pclntab.go: functabsize = (nfunctab*2 + 1) * functabFieldSize). */
	size_t avail = len - pl;
	if (nfunc == 0 || nfunc > avail / (2 * t->ftab_field))
		return GOPCLN_E_CORRUPT;
	t->nfunc = nfunc;
	if (!in_bounds(pl, (nfunc * 2 + 1) * t->ftab_field, len))
		return GOPCLN_E_CORRUPT;
	return 0;
}

/* functab field i (0-based, over the flat array of fields). */
static inline uint64_t ftab_field(const struct gopcln *t, size_t i)
{
	size_t off = t->pcln + i * t->ftab_field;

	if (t->ftab_field == 4)
		return ld32(t, off);
	return ldword_raw(t->data + off, 8, t->swap);
}

/* Entry PC of function i as stored (offset from textStart for 1.18+, absolute before). */
static inline uint64_t ftab_entry(const struct gopcln *t, size_t i)
{
	return ftab_field(t, 2 * i);
}

/* Checks every functab entry once, so that lookups can binary-search: entries must not
 * decrease, each _func record must be inside the table and agree with its functab entry
 * (the same checks as go1.24 runtime/symtab.go moduledataverify1). */
static int verify_functab(struct gopcln *t, size_t *rec_end)
{
	uint64_t prev = 0;
	size_t maxend = 0;
	uint32_t hist[256] = {0};

	for (size_t i = 0; i <= t->nfunc; i++) {
		uint64_t e = ftab_entry(t, i);
		if (e < prev)
			return GOPCLN_E_CORRUPT;
		prev = e;
		if (i == t->nfunc)
			break;
		uint64_t fo = ftab_field(t, 2 * i + 1);
		if (fo >= t->len - t->pcln || !in_bounds(t->pcln + fo, t->fn_size, t->len))
			return GOPCLN_E_CORRUPT;
		size_t f = t->pcln + fo;
		uint64_t fe = t->fn_entry_size == 4 ? ld32(t, f) : ldword_raw(t->data + f, 8, t->swap);
		if (fe != e)
			return GOPCLN_E_CORRUPT;
		/* end of the record with its pcdata and funcdata offsets (1.18+ layout) */
		uint64_t end = f + t->fn_size + 4 * ((uint64_t)ld32(t, f + t->fn_base + 24) + t->data[f + t->fn_nfuncdata]);
		if (end > maxend)
			maxend = end;
		hist[t->data[f + t->fn_funcid]]++;
	}
	if (rec_end)
		*rec_end = maxend;
	/* Every special FuncID names one runtime function (go1.24 internal/abi/symtab.go); only
	 * FuncIDWrapper is shared, by all autogenerated code. */
	uint32_t best = 1;
	t->wrapper_id = 0;
	for (unsigned i = 1; i < 256; i++)
		if (hist[i] > best) {
			best = hist[i];
			t->wrapper_id = (uint8_t)i;
		}
	return 0;
}

/* ---- function records ---- */

struct fn {
	size_t off; /* of the _func record in data */
	uint64_t entry, end;
	int32_t nameoff;
	uint32_t pcsp, pcfile, pcln, npcdata, cuoff;
	int32_t startline;
	uint8_t funcid, flag, nfuncdata;
};

/* Loads the record of function i; the record itself was bounds-checked at open. */
static int load_fn(const struct gopcln *t, size_t i, struct fn *f)
{
	size_t off = t->pcln + ftab_field(t, 2 * i + 1);
	size_t b = off + t->fn_base;

	f->off = off;
	f->entry = ftab_entry(t, i);
	f->end = ftab_entry(t, i + 1);
	if (t->magic != MAGIC_116) {
		f->entry += t->text_start;
		f->end += t->text_start;
	}
	f->nameoff = (int32_t)ld32(t, b);
	f->pcsp = ld32(t, b + 12);
	f->pcfile = ld32(t, b + 16);
	f->pcln = ld32(t, b + 20);
	f->npcdata = ld32(t, b + 24);
	f->cuoff = ld32(t, b + 28);
	f->startline = t->fn_startline >= 0 ? (int32_t)ld32(t, off + t->fn_startline) : 0;
	f->funcid = t->data[off + t->fn_funcid];
	f->flag = t->data[off + t->fn_flag];
	f->nfuncdata = t->data[off + t->fn_nfuncdata];
	/* pcdata and funcdata arrays must be inside the table too */
	uint64_t tail = (uint64_t)f->npcdata * 4 +
			(t->magic != MAGIC_116 ? (uint64_t)f->nfuncdata * 4 :
			 f->nfuncdata ? 4 + (uint64_t)f->nfuncdata * t->ptrsize : 0); /* 4: alignment pad */
	if (f->npcdata > 1024 || !in_bounds(off + t->fn_size, tail, t->len))
		return -EINVAL;
	return 0;
}

/* Index of the function containing pc, or -1. */
static ptrdiff_t find_index(const struct gopcln *t, uint64_t pc)
{
	uint64_t rel = pc;

	if (t->magic != MAGIC_116) {
		if (pc < t->text_start)
			return -1;
		rel = pc - t->text_start;
	}
	if (rel < ftab_entry(t, 0) || rel >= ftab_entry(t, t->nfunc))
		return -1;
	size_t lo = 0, hi = t->nfunc; /* entry[lo] <= rel < entry[hi] */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ftab_entry(t, mid) <= rel)
			lo = mid;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo;
}

static const char *fn_name(const struct gopcln *t, int32_t nameoff)
{
	if (nameoff < 0)
		return NULL;
	return str_at(t, t->funcnametab, t->funcnametab_end, (uint64_t)nameoff);
}

/* ---- pc-value tables ---- */

/* Reads a uvarint of at most 5 bytes from [*p, end) (go1.24 runtime/symtab.go readvarint). */
static inline bool read_uvarint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;
	const uint8_t *q = *p;

	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (q >= end)
			return false;
		uint8_t b = *q++;
		v |= (uint32_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return true;
		}
	}
	return false;
}

/* Value of the pc-value table at pctab+off for a function starting at entry
 * (go1.24 runtime/symtab.go pcvalue and step): 0 and *val, -ENOENT when there is no
 * table or pc is past its end, -EINVAL when the table runs off the data. The row holding
 * pc spans [*row_start, *row_end) when those are not NULL. */
static int pcvalue_row(const struct gopcln *t, uint32_t off, uint64_t entry, uint64_t pc, int32_t *val,
		       uint64_t *row_start, uint64_t *row_end)
{
	if (off == 0)
		return -ENOENT;
	if (off >= t->pctab_end - t->pctab)
		return -EINVAL;
	const uint8_t *p = t->data + t->pctab + off;
	const uint8_t *end = t->data + t->pctab_end;
	uint64_t cur = entry;
	int32_t v = -1;

	/* Each step consumes at least two bytes, so the loop ends within the table. Most
	 * deltas fit in one byte (go1.24 step has the same fast path). */
	for (;;) {
		uint32_t uv, d;
		if (p >= end)
			return -EINVAL;
		uv = *p;
		/* A zero value delta ends the table, except for the first pair: Go tests
		 * "pc == entry" rather than "first", and so do we. */
		if (uv == 0 && cur != entry)
			return -ENOENT;
		if (uv < 0x80)
			p++;
		else if (!read_uvarint(&p, end, &uv))
			return -EINVAL;
		if (p >= end)
			return -EINVAL;
		d = *p;
		if (d < 0x80)
			p++;
		else if (!read_uvarint(&p, end, &d))
			return -EINVAL;
		/* int32 arithmetic wraps in Go; do it unsigned here */
		v = (int32_t)((uint32_t)v + ((uv >> 1) ^ -(uv & 1)));
		uint64_t prev = cur;
		cur += (uint32_t)(d * t->quantum);
		if (pc < cur) {
			*val = v;
			if (row_start)
				*row_start = prev;
			if (row_end)
				*row_end = cur;
			return 0;
		}
	}
}

static int pcvalue(const struct gopcln *t, uint32_t off, uint64_t entry, uint64_t pc, int32_t *val)
{
	return pcvalue_row(t, off, entry, pc, val, NULL, NULL);
}

/* pcdata table `table` of f at pc (go1.24 runtime/symtab.go pcdatavalue1). */
static int pcdata_value(const struct gopcln *t, const struct fn *f, uint32_t table, uint64_t pc, int32_t *val)
{
	if (table >= f->npcdata)
		return -ENOENT;
	return pcvalue(t, ld32(t, f->off + t->fn_size + table * 4), f->entry, pc, val);
}

static void file_of(const struct gopcln *t, const struct fn *f, int32_t fileno, int32_t ln,
		    const char **file, int32_t *line);

/* File and line at pc (go1.24 runtime/symtab.go funcline1 and funcfile). */
static void file_line(const struct gopcln *t, const struct fn *f, uint64_t pc, const char **file, int32_t *line)
{
	int32_t fileno, ln;

	*file = "?";
	*line = 0;
	if (pcvalue(t, f->pcfile, f->entry, pc, &fileno) < 0 || pcvalue(t, f->pcln, f->entry, pc, &ln) < 0)
		return;
	file_of(t, f, fileno, ln, file, line);
}

/* The file of file number fileno of f's compilation unit (the cutab), and line ln. */
static void file_of(const struct gopcln *t, const struct fn *f, int32_t fileno, int32_t ln,
		    const char **file, int32_t *line)
{
	*file = "?";
	*line = 0;
	if (fileno < 0 || ln < 0)
		return;
	uint64_t ci = ((uint64_t)f->cuoff + (uint32_t)fileno) * 4;
	if (!in_bounds(t->cutab + ci, 4, t->cutab_end))
		return;
	uint32_t fo = ld32(t, t->cutab + ci);
	if (fo == UINT32_MAX)
		return;
	const char *s = str_at(t, t->filetab, t->filetab_end, fo);
	if (!s)
		return;
	*file = s;
	*line = ln;
}

/* ---- funcdata ---- */

static const struct region *region_of(const struct gopcln *t, uint64_t addr)
{
	size_t lo = 0, hi = t->nregions;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct region *r = &t->regions[mid];
		if (addr < r->addr)
			hi = mid;
		else if (addr - r->addr >= r->size)
			lo = mid + 1;
		else
			return r;
	}
	return NULL;
}

/* Bytes at link-time address addr, with *avail bytes readable there; NULL if unmapped. */
static const uint8_t *addr_bytes(const struct gopcln *t, uint64_t addr, size_t *avail)
{
	const struct region *r = region_of(t, addr);

	if (!r || !r->data)
		return NULL;
	*avail = r->size - (addr - r->addr);
	return r->data + (addr - r->addr);
}

/* Funcdata i of f: a pointer to its bytes and how many may be read; NULL if none. */
static const uint8_t *funcdata(const struct gopcln *t, const struct fn *f, unsigned i, size_t *avail)
{
	if (i >= f->nfuncdata)
		return NULL;
	size_t p = f->off + t->fn_size + (size_t)f->npcdata * 4;
	if (t->magic != MAGIC_116) {
		/* go1.18+ runtime/symtab.go funcdata: u32 offsets from moduledata.gofunc,
		 * ^0 for none. */
		uint32_t o = ld32(t, p + i * 4);
		if (o == UINT32_MAX || !t->gofunc_data || o >= t->gofunc_len)
			return NULL;
		*avail = t->gofunc_len - o;
		return t->gofunc_data + o;
	}
	/* go1.16 runtime/symtab.go funcdata: pointers, aligned to ptrSize in memory after
	 * the pcdata offsets. */
	if (t->ptrsize == 8 && ((t->addr + p) & 4))
		p += 4;
	if (!in_bounds(p + (size_t)i * t->ptrsize, t->ptrsize, t->len))
		return NULL;
	uint64_t a = ldword_raw(t->data + p + (size_t)i * t->ptrsize, t->ptrsize, t->swap);
	if (a == 0)
		return NULL;
	return addr_bytes(t, a, avail);
}

/* One inline tree record (go1.19 runtime/symtab.go inlinedCall, 20 bytes:
 * parent i16, funcID u8, pad u8, file i32, line i32, func_ i32, parentPc i32;
 * go1.20+ runtime/symtabinl.go inlinedCall, 16 bytes: funcID u8, pad [3]u8,
 * nameOff i32, parentPc i32, startLine i32). */
struct inl {
	int32_t nameoff, parentpc, startline;
	uint8_t funcid;
};

static bool inl_at(const struct gopcln *t, const uint8_t *tree, size_t avail, int32_t idx, struct inl *out)
{
	uint32_t w[3];

	if (idx < 0 || !in_bounds((size_t)idx * t->inl_size, t->inl_size, avail))
		return false;
	const uint8_t *r = tree + (size_t)idx * t->inl_size;
	if (t->inl_size == 16) {
		memcpy(w, r + 4, 12);
		out->funcid = r[0];
		out->nameoff = (int32_t)bswap32_if(t->swap, w[0]);
		out->parentpc = (int32_t)bswap32_if(t->swap, w[1]);
		out->startline = (int32_t)bswap32_if(t->swap, w[2]);
	} else {
		memcpy(w, r + 12, 8);
		out->funcid = r[2];
		out->nameoff = (int32_t)bswap32_if(t->swap, w[0]);
		out->parentpc = (int32_t)bswap32_if(t->swap, w[1]);
		out->startline = 0;
	}
	return true;
}

/* Does go:func.* data at gd (glen bytes) fit this table? The inline trees of a sample of
 * functions must start with a record naming a function (an offset just after a NUL in
 * funcnametab) and pointing inside the caller. A wrong base fails this at once. */
static bool gofunc_plausible(const struct gopcln *t, const uint8_t *gd, size_t glen)
{
	size_t checked = 0, step = t->nfunc / 1024 + 1;

	if (t->magic == MAGIC_116)
		return false;
	for (size_t i = 0; i < t->nfunc && checked < 64; i += step) {
		struct fn f;
		struct inl in;
		if (load_fn(t, i, &f) < 0 || f.nfuncdata <= FUNCDATA_INLTREE || f.npcdata <= PCDATA_INLTREEINDEX)
			continue;
		uint32_t o = ld32(t, f.off + t->fn_size + f.npcdata * 4 + FUNCDATA_INLTREE * 4);
		if (o == UINT32_MAX)
			continue;
		if (o >= glen || !inl_at(t, gd + o, glen - o, 0, &in))
			return false;
		if (in.nameoff < 0 || !fn_name(t, in.nameoff) ||
		    (in.nameoff > 0 && t->data[t->funcnametab + (size_t)in.nameoff - 1] != 0))
			return false;
		if (in.parentpc < 0 || (uint64_t)in.parentpc >= f.end - f.entry)
			return false;
		checked++;
	}
	return true;
}

/* Go 1.26+ keeps go:func.* inside .gopclntab right after the _func records (go1.26
 * cmd/link/internal/ld/data.go assigns "go:func.*" to the .gopclntab section; pcln.go
 * generates it after runtime.functab), aligned to the largest funcdata alignment: 8 or 16
 * in the binaries we checked. Tries each alignment, smallest first. Offset or 0. */
static size_t gofunc_guess(const struct gopcln *t)
{
	uint64_t prev = UINT64_MAX;

	for (uint64_t a = 4; a <= 64; a *= 2) {
		uint64_t g = (t->addr + t->rec_end + a - 1) & ~(a - 1);
		size_t o = (size_t)(g - t->addr);
		if (g == prev || o >= t->len)
			continue;
		prev = g;
		if (gofunc_plausible(t, t->data + o, t->len - o))
			return o;
	}
	return 0;
}

/* ---- public lookups ---- */

static void fill_func(const struct gopcln *t, const struct fn *f, struct gopcln_func *out)
{
	const char *name = fn_name(t, f->nameoff);

	out->entry = f->entry;
	out->end = f->end;
	out->name = name ? name : "?";
	out->funcid = f->funcid;
	out->flag = f->flag;
}

int gopcln_find_func(const struct gopcln *t, uint64_t pc, struct gopcln_func *out)
{
	struct fn f;
	ptrdiff_t i = find_index(t, pc);

	if (i < 0 || load_fn(t, (size_t)i, &f) < 0)
		return -ENOENT;
	fill_func(t, &f, out);
	return 0;
}

int gopcln_func_at(const struct gopcln *t, size_t i, struct gopcln_func *out)
{
	struct fn f;

	if (i >= t->nfunc)
		return -ENOENT;
	if (load_fn(t, i, &f) < 0)
		return -EINVAL;
	fill_func(t, &f, out);
	return 0;
}

int gopcln_frames(const struct gopcln *t, uint64_t pc, struct gopcln_frame *out, int max)
{
	struct fn f;
	ptrdiff_t i;

	if (max <= 0)
		return 0;
	i = find_index(t, pc);
	if (i < 0)
		return 0;
	if (load_fn(t, (size_t)i, &f) < 0)
		return -EINVAL;

	const char *fname = fn_name(t, f.nameoff);
	if (!fname)
		fname = "?";
	size_t tree_len = 0;
	const uint8_t *tree = NULL;
	if (f.npcdata > PCDATA_INLTREEINDEX)
		tree = funcdata(t, &f, FUNCDATA_INLTREE, &tree_len);

	/* go1.24 runtime/symtabinl.go inlineUnwinder: the innermost frame is at pc, each
	 * parent at entry + parentPc, until the index is -1 (the physical function). */
	int n = 0;
	uint64_t cur = pc;
	for (int depth = 0;; depth++) {
		int32_t idx = -1;
		struct inl in = {0};
		if (tree && pcdata_value(t, &f, PCDATA_INLTREEINDEX, cur, &idx) < 0)
			idx = -1;
		if (idx >= 0 && !inl_at(t, tree, tree_len, idx, &in))
			return -EINVAL;
		/* Keep the innermost max-1 frames and always the physical function. */
		if (n < max - 1 || idx < 0) {
			struct gopcln_frame *fr = &out[n++];
			fr->pc = cur;
			file_line(t, &f, cur, &fr->file, &fr->line);
			if (idx >= 0) {
				const char *s = fn_name(t, in.nameoff);
				fr->func = s ? s : "?";
				fr->start_line = in.startline;
				fr->funcid = in.funcid;
			} else {
				fr->func = fname;
				fr->start_line = f.startline;
				fr->funcid = f.funcid;
			}
			fr->wrapper = t->wrapper_id && fr->funcid == t->wrapper_id;
		}
		if (idx < 0)
			break;
		if (depth >= MAX_INLINE_DEPTH || in.parentpc < 0 || (uint64_t)in.parentpc >= f.end - f.entry)
			return -EINVAL;
		cur = f.entry + (uint64_t)in.parentpc;
	}
	return n;
}

/* ---- one function's frames in one pass ---- */

/* The decoding state of one pc-value table, row by row (the steps of pcvalue_row): the
 * current row is [start, next) with value v; state 0 while rows come, 1 past the table's
 * end or without a table (the value is then unknown, as pcvalue's -ENOENT). */
struct pcv {
	const uint8_t *p, *end;
	uint64_t entry, start, next;
	int32_t v;
	int state;
};

static void pcv_init(const struct gopcln *t, struct pcv *s, uint32_t off, uint64_t entry)
{
	memset(s, 0, sizeof(*s));
	s->entry = s->start = s->next = entry;
	s->v = -1;
	if (off == 0 || off >= t->pctab_end - t->pctab) {
		s->state = 1;
		s->next = UINT64_MAX;
		return;
	}
	s->p = t->data + t->pctab + off;
	s->end = t->data + t->pctab_end;
}

/* The next row. 0, or -EINVAL when the table runs off the data. */
static int pcv_step(const struct gopcln *t, struct pcv *s)
{
	uint32_t uv, d;

	if (s->state)
		return 0;
	if (s->p >= s->end)
		return -EINVAL;
	uv = *s->p;
	if (uv == 0 && s->next != s->entry) {
		s->state = 1;
		s->start = s->next;
		s->next = UINT64_MAX;
		return 0;
	}
	if (uv < 0x80)
		s->p++;
	else if (!read_uvarint(&s->p, s->end, &uv))
		return -EINVAL;
	if (s->p >= s->end)
		return -EINVAL;
	d = *s->p;
	if (d < 0x80)
		s->p++;
	else if (!read_uvarint(&s->p, s->end, &d))
		return -EINVAL;
	s->v = (int32_t)((uint32_t)s->v + ((uv >> 1) ^ -(uv & 1)));
	s->start = s->next;
	s->next += (uint32_t)(d * t->quantum);
	return 0;
}

/* Brings s to the row holding pc. */
static int pcv_seek(const struct gopcln *t, struct pcv *s, uint64_t pc)
{
	int r = 0;

	while (!r && !s->state && s->next <= pc)
		r = pcv_step(t, s);
	return r;
}

/* Frames cached per inlining site: the frames above the innermost one, which depend only on
 * the inline tree index (go1.24 runtime/symtabinl.go: each parent is at entry + parentPc). */
#define FF_SLOTS 256

int gopcln_func_frames(const struct gopcln *t, uint64_t pc, int max,
		       int (*cb)(void *arg, uint64_t start, uint64_t end,
				 const struct gopcln_frame *fr, int n),
		       void *arg)
{
	struct fn f;
	struct pcv file, line, inl;
	ptrdiff_t i;
	size_t tree_len = 0;
	const uint8_t *tree = NULL;
	const char *fname;
	struct gopcln_frame *cache = NULL, *fr = NULL;
	int32_t *ckey = NULL;
	int *cn = NULL, r = 0;
	uint64_t pos;

	if (max <= 0)
		return 0;
	i = find_index(t, pc);
	if (i < 0)
		return -ENOENT;
	if (load_fn(t, (size_t)i, &f) < 0)
		return -EINVAL;
	fname = fn_name(t, f.nameoff);
	if (!fname)
		fname = "?";
	if (f.npcdata > PCDATA_INLTREEINDEX)
		tree = funcdata(t, &f, FUNCDATA_INLTREE, &tree_len);
	pcv_init(t, &file, f.pcfile, f.entry);
	pcv_init(t, &line, f.pcln, f.entry);
	pcv_init(t, &inl, tree ? ld32(t, f.off + t->fn_size + PCDATA_INLTREEINDEX * 4) : 0, f.entry);
	fr = malloc((size_t)max * sizeof(*fr));
	cache = malloc((size_t)FF_SLOTS * (size_t)max * sizeof(*cache));
	ckey = malloc(FF_SLOTS * sizeof(*ckey));
	cn = malloc(FF_SLOTS * sizeof(*cn));
	if (!fr || !cache || !ckey || !cn) {
		r = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < FF_SLOTS; k++)
		ckey[k] = -1;
	for (pos = f.entry; pos < f.end;) {
		int32_t idx, fileno, ln;
		uint64_t end = f.end;
		int n = 0;

		if ((r = pcv_seek(t, &file, pos)) || (r = pcv_seek(t, &line, pos)) ||
		    (r = pcv_seek(t, &inl, pos)))
			goto out;
		end = GP_MIN(end, GP_MIN(file.next, GP_MIN(line.next, inl.next)));
		if (end <= pos)
			end = pos + 1;
		fileno = file.state ? -1 : file.v;
		ln = line.state ? -1 : line.v;
		idx = inl.state ? -1 : inl.v;
		/* The innermost frame from the rows; the rest as gopcln_frames finds them. */
		if (idx < 0) {
			fr[0].func = fname;
			fr[0].start_line = f.startline;
			fr[0].funcid = f.funcid;
			file_of(t, &f, fileno, ln, &fr[0].file, &fr[0].line);
			fr[0].wrapper = t->wrapper_id && fr[0].funcid == t->wrapper_id;
			n = 1;
		} else {
			int slot = idx % FF_SLOTS;

			if (ckey[slot] != idx) {
				/* gopcln_frames from the first parent: its frames are the chain
				 * above the innermost (which gopcln_frames would keep too). */
				struct inl in = { 0 };
				struct gopcln_frame *c = &cache[(size_t)slot * (size_t)max];
				int m;

				if (!inl_at(t, tree, tree_len, idx, &in) || in.parentpc < 0 ||
				    (uint64_t)in.parentpc >= f.end - f.entry) {
					r = -EINVAL;
					goto out;
				}
				c[0].func = fn_name(t, in.nameoff) ? fn_name(t, in.nameoff) : "?";
				c[0].start_line = in.startline;
				c[0].funcid = in.funcid;
				c[0].wrapper = t->wrapper_id && in.funcid == t->wrapper_id;
				m = max > 1 ? gopcln_frames(t, f.entry + (uint64_t)in.parentpc, c + 1, max - 1) : 0;
				if (m < 0) {
					r = m;
					goto out;
				}
				ckey[slot] = idx;
				cn[slot] = 1 + m;
			}
			n = cn[slot];
			memcpy(fr, &cache[(size_t)slot * (size_t)max], (size_t)n * sizeof(*fr));
			file_of(t, &f, fileno, ln, &fr[0].file, &fr[0].line);
		}
		r = cb(arg, pos, end, fr, n);
		if (r)
			goto out;
		pos = end;
	}
out:
	free(fr);
	free(cache);
	free(ckey);
	free(cn);
	return r;
}

int gopcln_pcsp(const struct gopcln *t, uint64_t pc, int32_t *spdelta)
{
	return gopcln_pcsp_row(t, pc, spdelta, NULL, NULL);
}

int gopcln_pcsp_row(const struct gopcln *t, uint64_t pc, int32_t *spdelta, uint64_t *start, uint64_t *end)
{
	struct fn f;
	ptrdiff_t i = find_index(t, pc);

	if (i < 0)
		return -ENOENT;
	if (load_fn(t, (size_t)i, &f) < 0)
		return -EINVAL;
	/* -ENOENT also when pc is in the padding after the function's last instruction */
	return pcvalue_row(t, f.pcsp, f.entry, pc, spdelta, start, end);
}

uint8_t gopcln_wrapper_funcid(const struct gopcln *t)
{
	return t->wrapper_id;
}

const char *gopcln_go_version(const struct gopcln *t)
{
	return t->version;
}

const char *gopcln_build_id(const struct gopcln *t)
{
	return t->buildid;
}

unsigned gopcln_ptrsize(const struct gopcln *t)
{
	return t->ptrsize;
}

unsigned gopcln_quantum(const struct gopcln *t)
{
	return t->quantum;
}

uint64_t gopcln_text_start(const struct gopcln *t)
{
	return t->text_start;
}

uint32_t gopcln_magic(const struct gopcln *t)
{
	return t->magic;
}

size_t gopcln_nfunc(const struct gopcln *t)
{
	return t->nfunc;
}

uint64_t gopcln_addr(const struct gopcln *t)
{
	return t->addr;
}

uint64_t gopcln_gofunc(const struct gopcln *t)
{
	return t->gofunc;
}

void gopcln_free(struct gopcln *t)
{
	if (!t)
		return;
	free(t->regions);
	free(t->version);
	free(t->buildid);
	free(t);
}

/* Entry offsets are added to the text start (Go 1.18+): the sum must not wrap, or a
 * function would end below its entry (found by fuzz-gopclntab). */
static bool text_fits(const struct gopcln *t)
{
	return t->magic == MAGIC_116 || ftab_entry(t, t->nfunc) <= UINT64_MAX - t->text_start;
}

static void set_err(int *err, int code)
{
	if (err)
		*err = code;
	errno = code > 0 && code < GOPCLN_E_COUNT ? error_errno[code] : EINVAL;
}

struct gopcln *gopcln_open_buf(const uint8_t *data, size_t len, uint64_t text_start, int *err)
{
	struct gopcln *t = xcalloc(1, sizeof(*t));
	int rc;

	if (!data) {
		rc = GOPCLN_E_NOTFOUND;
		goto fail;
	}
	rc = parse_header(t, data, len);
	if (rc)
		goto fail;
	if (text_start)
		t->text_start = text_start;
	rc = verify_functab(t, &t->rec_end);
	if (rc)
		goto fail;
	if (!text_fits(t)) {
		rc = GOPCLN_E_CORRUPT;
		goto fail;
	}
	if (t->magic == MAGIC_120 && t->hdr_text_start == 0) {
		size_t o = gofunc_guess(t);
		if (o) {
			t->gofunc_data = data + o;
			t->gofunc_len = len - o;
		}
	}
	if (err)
		*err = 0;
	return t;
fail:
	gopcln_free(t);
	set_err(err, rc);
	return NULL;
}

/* ---- ELF: locating the table, text start, moduledata, version, build id ---- */

/* What gopcln_open_elf learns about the file before building the reader. */
struct elfctx {
	Elf *elf;
	GElf_Ehdr eh;
	bool swap;
	unsigned ptrsize; /* from the ELF class */
	struct region *regions;
	size_t nregions, cap;
	/* RELATIVE relocations {offset, addend}, sorted, loaded on first need. */
	uint64_t (*rel)[2];
	size_t nrel;
	bool rel_loaded;
	/* symbols of interest (.symtab, gone after -s) */
	uint64_t sym_pclntab, sym_epclntab, sym_text, sym_gofunc, sym_moduledata;
	bool scan; /* the validated scan may run */
};

static int region_cmp(const void *a, const void *b)
{
	const struct region *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void add_region(struct elfctx *c, uint64_t addr, uint64_t size, const uint8_t *data, bool exec, bool write)
{
	if (size == 0 || addr + size < addr)
		return;
	xgrow((void **)&c->regions, &c->cap, c->nregions + 1, sizeof(*c->regions));
	c->regions[c->nregions++] = (struct region){addr, size, data, exec, write};
}

/* Sorts regions and drops any that overlap an earlier one, so lookups are unambiguous. */
static void finish_regions(struct elfctx *c)
{
	size_t n = 0;

	if (c->nregions)
		qsort(c->regions, c->nregions, sizeof(*c->regions), region_cmp);
	for (size_t i = 0; i < c->nregions; i++) {
		if (n && c->regions[i].addr < c->regions[n - 1].addr + c->regions[n - 1].size)
			continue;
		c->regions[n++] = c->regions[i];
	}
	c->nregions = n;
}

/* Regions from the allocated PROGBITS/NOBITS sections, or from PT_LOAD when the file has
 * no section headers. */
static void load_regions(struct elfctx *c)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(c->elf, &shstrndx) < 0)
		shstrndx = 0;
	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_TLS | SHF_COMPRESSED)))
			continue;
		bool exec = sh.sh_flags & SHF_EXECINSTR, write = sh.sh_flags & SHF_WRITE;
		if (sh.sh_type == SHT_NOBITS) {
			add_region(c, sh.sh_addr, sh.sh_size, NULL, exec, write);
			continue;
		}
		if (sh.sh_type != SHT_PROGBITS)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || d->d_size != sh.sh_size)
			continue;
		add_region(c, sh.sh_addr, sh.sh_size, d->d_buf, exec, write);
	}
	if (c->nregions == 0) {
		size_t nph;
		if (elf_getphdrnum(c->elf, &nph) < 0)
			nph = 0;
		for (size_t i = 0; i < nph; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(c->elf, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0)
				continue;
			Elf_Data *d = elf_getdata_rawchunk(c->elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_BYTE);
			if (!d || !d->d_buf)
				continue;
			add_region(c, ph.p_vaddr, GP_MIN(ph.p_filesz, ph.p_memsz), d->d_buf, ph.p_flags & PF_X,
				   ph.p_flags & PF_W);
		}
	}
	finish_regions(c);
}

static const struct region *ctx_region(const struct elfctx *c, uint64_t addr)
{
	struct gopcln tmp = {.regions = c->regions, .nregions = c->nregions};

	return region_of(&tmp, addr);
}

static const uint8_t *ctx_bytes(const struct elfctx *c, uint64_t addr, size_t *avail)
{
	struct gopcln tmp = {.regions = c->regions, .nregions = c->nregions};

	return addr_bytes(&tmp, addr, avail);
}

static int rel_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* R_*_RELATIVE for the architectures Go supports on Linux (glibc elf.h). */
static bool is_relative(unsigned machine, unsigned type)
{
	switch (machine) {
	case EM_X86_64: return type == R_X86_64_RELATIVE;
	case EM_AARCH64: return type == R_AARCH64_RELATIVE;
	case EM_386: return type == R_386_RELATIVE;
	case EM_ARM: return type == R_ARM_RELATIVE;
	case EM_PPC64: return type == R_PPC64_RELATIVE;
	case EM_S390: return type == R_390_RELATIVE;
	case EM_RISCV: return type == R_RISCV_RELATIVE;
	case EM_LOONGARCH: return type == R_LARCH_RELATIVE;
	case EM_MIPS: return type == R_MIPS_REL32;
	default: return false;
	}
}

/* Loads the RELATIVE relocations with explicit addends (PIE linked by an external linker
 * may leave the words themselves zero; Go's internal linker also writes the value in
 * place: go1.24 cmd/link/internal/amd64/asm.go adddynrel "we still apply it statically"). */
static void load_relocs(struct elfctx *c)
{
	Elf_Scn *scn = NULL;
	size_t cap = 0;

	c->rel_loaded = true;
	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || sh.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			if (!gelf_getrela(d, (int)i, &r))
				break;
			unsigned type = c->ptrsize == 8 ? GELF_R_TYPE(r.r_info) : ELF32_R_TYPE(r.r_info);
			if (!is_relative(c->eh.e_machine, type))
				continue;
			xgrow((void **)&c->rel, &cap, c->nrel + 1, sizeof(*c->rel));
			c->rel[c->nrel][0] = r.r_offset;
			c->rel[c->nrel][1] = (uint64_t)r.r_addend;
			c->nrel++;
		}
	}
	if (c->nrel)
		qsort(c->rel, c->nrel, sizeof(*c->rel), rel_cmp);
}

/* A pointer-sized word at link-time address addr: the file's bytes, or when they are
 * zero the addend of a RELATIVE relocation there. false if unmapped. */
static bool read_word(struct elfctx *c, uint64_t addr, uint64_t *out)
{
	size_t avail;
	const uint8_t *p = ctx_bytes(c, addr, &avail);

	if (!p || avail < c->ptrsize)
		return false;
	*out = ldword_raw(p, c->ptrsize, c->swap);
	if (*out)
		return true;
	if (!c->rel_loaded)
		load_relocs(c);
	size_t lo = 0, hi = c->nrel;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->rel[mid][0] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < c->nrel && c->rel[lo][0] == addr)
		*out = c->rel[lo][1];
	return true;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, out))
			continue;
		const char *n = elf_strptr(elf, shstrndx, out->sh_name);
		if (n && strcmp(n, name) == 0)
			return scn;
	}
	return NULL;
}

/* Bytes of a section by name (PROGBITS only), with its address. */
static const uint8_t *section_bytes(Elf *elf, const char *name, size_t *len, uint64_t *addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, name, &sh);

	if (!scn || sh.sh_type != SHT_PROGBITS || (sh.sh_flags & SHF_COMPRESSED))
		return NULL;
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || !d->d_buf || d->d_size != sh.sh_size)
		return NULL;
	*len = d->d_size;
	*addr = sh.sh_addr;
	return d->d_buf;
}

/* Picks up the few symbols we can use from .symtab (stripped by -s). */
static void load_symbols(struct elfctx *c)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 1; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(d, (int)i, &s))
				break;
			if (s.st_shndx == SHN_UNDEF)
				continue;
			const char *name = elf_strptr(c->elf, sh.sh_link, s.st_name);
			if (!name || (name[0] != 'r' && name[0] != 'g'))
				continue;
			/* Symbol names: go1.24 cmd/link/internal/ld/symtab.go and pcln.go. */
			if (strcmp(name, "runtime.pclntab") == 0)
				c->sym_pclntab = s.st_value;
			else if (strcmp(name, "runtime.epclntab") == 0)
				c->sym_epclntab = s.st_value;
			else if (strcmp(name, "runtime.text") == 0)
				c->sym_text = s.st_value;
			else if (strcmp(name, "go:func.*") == 0 || strcmp(name, "go.func.*") == 0)
				c->sym_gofunc = s.st_value;
			else if (strcmp(name, "runtime.firstmoduledata") == 0)
				c->sym_moduledata = s.st_value;
		}
	}
}

/* Tries data[0, len) as a pclntab; 0 if header and functab are consistent. */
static int try_table(struct gopcln *t, const uint8_t *data, size_t len)
{
	int rc = parse_header(t, data, len);

	return rc ? rc : verify_functab(t, &t->rec_end);
}

/* Finds the table by section, symbol or scan (otel ebpf-profiler searchGoPclntab and
 * doc/gopclntab.md describe the same order). */
static int locate_table(struct elfctx *c, struct gopcln *t)
{
	static const char *const names[] = {".gopclntab", ".data.rel.ro.gopclntab"};
	size_t len;
	uint64_t addr;
	int rc = GOPCLN_E_NOTFOUND;

	for (size_t i = 0; i < GP_ARRAY_SIZE(names); i++) {
		const uint8_t *p = section_bytes(c->elf, names[i], &len, &addr);
		if (p) {
			t->addr = addr;
			return try_table(t, p, len);
		}
	}
	if (c->sym_pclntab) {
		size_t avail;
		const uint8_t *p = ctx_bytes(c, c->sym_pclntab, &avail);
		if (p) {
			if (c->sym_epclntab > c->sym_pclntab && c->sym_epclntab - c->sym_pclntab <= avail)
				avail = c->sym_epclntab - c->sym_pclntab;
			t->addr = c->sym_pclntab;
			return try_table(t, p, avail);
		}
	}
	/* Validated scan of the non-executable regions: the header sits at a ptrSize-aligned
	 * address (go1.24 pcln.go generatePCHeader aligns runtime.pcheader to PtrSize). */
	for (size_t i = 0; c->scan && i < c->nregions; i++) {
		const struct region *r = &c->regions[i];
		if (!r->data || r->exec || r->size < 64)
			continue;
		for (uint64_t off = (4 - (r->addr & 3)) & 3; off + 64 <= r->size; off += 4) {
			uint32_t m;
			memcpy(&m, r->data + off, 4);
			m = bswap32_if(c->swap, m);
			if (m != MAGIC_116 && m != MAGIC_118 && m != MAGIC_120)
				continue;
			if (r->data[off + 7] != c->ptrsize || r->data[off + 4] || r->data[off + 5])
				continue;
			struct gopcln tmp = {0};
			rc = try_table(&tmp, r->data + off, r->size - off);
			if (rc == 0) {
				rc = try_table(t, r->data + off, r->size - off);
				t->addr = r->addr + off;
				return rc;
			}
		}
	}
	return GOPCLN_E_NOTFOUND;
}

/* moduledata word indexes (ptrSize words; go1.19/go1.24/go1.26/go1.27 runtime/symtab.go
 * moduledata): pcHeader 0, funcnametab 1-3, cutab 4-6, filetab 7-9, pctab 10-12,
 * pclntable 13-15, ftab 16-18, findfunctab 19, minpc 20, maxpc 21, text 22, etext 23. */
#define MD_PCHEADER 0
#define MD_FUNCNAMETAB 1
#define MD_FTAB 16
#define MD_MINPC 20
#define MD_TEXT 22
/* gofunc: word 38 in 1.18-1.19; 40 in 1.20-1.26 (covctrs, ecovctrs added in 1.20);
 * 43 in 1.27 (types, typedesclen, etypes; itaboffset, itabsize). From 1.26 epclntab
 * follows gofunc, which lets us find it without knowing the release. */
#define MD_GOFUNC_118 38
#define MD_GOFUNC_120 40
#define MD_MAXWORDS 64

/* Does a moduledata at addr describe our table? */
static bool moduledata_matches(struct elfctx *c, const struct gopcln *t, uint64_t md)
{
	uint64_t w0, w1, wf;

	return read_word(c, md + MD_PCHEADER * c->ptrsize, &w0) && w0 == t->addr &&
	       read_word(c, md + MD_FUNCNAMETAB * c->ptrsize, &w1) && w1 == t->addr + t->funcnametab &&
	       read_word(c, md + MD_FTAB * c->ptrsize, &wf) && wf == t->addr + t->pcln;
}

/* Finds runtime.firstmoduledata: by symbol, by the .go.module section (Go 1.26+,
 * go1.26 cmd/link/internal/ld/data.go), or by scanning writable data for a word equal
 * to the pclntab address followed by funcnametab's (the notes' inl.py method). */
static uint64_t find_moduledata(struct elfctx *c, const struct gopcln *t)
{
	GElf_Shdr sh;

	if (!t->addr)
		return 0;
	if (c->sym_moduledata && moduledata_matches(c, t, c->sym_moduledata))
		return c->sym_moduledata;
	if (find_section(c->elf, ".go.module", &sh) && moduledata_matches(c, t, sh.sh_addr))
		return sh.sh_addr;
	/* moduledata is writable data: .noptrdata up to 1.25, .go.module from 1.26 (seen in
	 * plain, PIE and externally linked amd64/arm64 binaries of 1.19, 1.24 and 1.27). */
	for (size_t i = 0; i < c->nregions; i++) {
		const struct region *r = &c->regions[i];
		if (!r->data || r->exec || !r->write)
			continue;
		uint64_t a = (r->addr + c->ptrsize - 1) & ~(uint64_t)(c->ptrsize - 1);
		for (; a - r->addr + 2 * c->ptrsize <= r->size; a += c->ptrsize) {
			const uint8_t *p = r->data + (a - r->addr);
			if (ldword_raw(p, c->ptrsize, c->swap) != t->addr)
				continue;
			if (moduledata_matches(c, t, a))
				return a;
		}
	}
	/* PIE linked externally: the words may be zero in the file, only in relocations. */
	if (!c->rel_loaded)
		load_relocs(c);
	for (size_t i = 0; i < c->nrel; i++)
		if (c->rel[i][1] == t->addr && moduledata_matches(c, t, c->rel[i][0]))
			return c->rel[i][0];
	return 0;
}

/* Is go:func.* at link-time address g plausible for t? */
static bool gofunc_ok(const struct elfctx *c, const struct gopcln *t, uint64_t g)
{
	size_t avail;
	const uint8_t *p = g ? ctx_bytes(c, g, &avail) : NULL;

	return p && gofunc_plausible(t, p, avail);
}

/* gofunc from moduledata at md, or 0. */
static uint64_t moduledata_gofunc(struct elfctx *c, const struct gopcln *t, uint64_t md)
{
	uint64_t v, prev;

	if (t->magic == MAGIC_118)
		return read_word(c, md + MD_GOFUNC_118 * c->ptrsize, &v) && gofunc_ok(c, t, v) ? v : 0;
	if (t->magic != MAGIC_120)
		return 0;
	if (t->hdr_text_start != 0)
		return read_word(c, md + MD_GOFUNC_120 * c->ptrsize, &v) && gofunc_ok(c, t, v) ? v : 0;
	/* Go 1.26+: go:func.* sits inside .gopclntab after the _func records and is followed
	 * in moduledata by epclntab (go1.26/go1.27 cmd/link/internal/ld/symtab.go add
	 * "go:func.*" then "runtime.epclntab"; the field moved from word 40 to 43 in 1.27). */
	uint64_t lo = t->addr + t->rec_end, hi = t->addr + t->len;
	for (unsigned w = MD_GOFUNC_120; w + 1 < MD_MAXWORDS; w++) {
		if (!read_word(c, md + w * c->ptrsize, &prev) || !read_word(c, md + (w + 1) * c->ptrsize, &v))
			break;
		if (prev >= lo && prev < hi && v >= prev && v <= hi && gofunc_ok(c, t, prev))
			return prev;
	}
	return 0;
}

/* Reads a uvarint (up to 64 bits) from [*p, end). */
static bool read_uvarint64(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	const uint8_t *q = *p;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (q >= end)
			return false;
		uint8_t b = *q++;
		v |= (uint64_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return true;
		}
	}
	return false;
}

/* A copy of a version string if it looks like one (printable, short), else NULL. */
static char *version_copy(const uint8_t *s, uint64_t n)
{
	if (n == 0 || n > 128)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return NULL;
	return xstrndup((const char *)s, n);
}

/* Decodes the build info blob at p (avail bytes) at link-time address addr
 * (go1.24 debug/buildinfo/buildinfo.go readRawBuildInfo): "\xff Go buildinf:", ptrSize at
 * 14, flags at 15; flags&2: varint-prefixed version string at 32; else pointers at 16 to
 * Go string headers {data, len}. */
static char *parse_buildinfo(struct elfctx *c, const uint8_t *p, size_t avail)
{
	static const char magic[14] = "\xff Go buildinf:";

	if (avail < 32 || memcmp(p, magic, sizeof(magic)) != 0)
		return NULL;
	unsigned ps = p[14], flags = p[15];
	if (flags & 2) {
		const uint8_t *q = p + 32, *end = p + avail;
		uint64_t n;
		if (!read_uvarint64(&q, end, &n) || n > (uint64_t)(end - q))
			return NULL;
		return version_copy(q, n);
	}
	if (ps != c->ptrsize)
		return NULL;
	/* Pointer form (before Go 1.18); the flag's byte order matches the file's. */
	uint64_t hdr = ldword_raw(p + 16, ps, c->swap), sptr, slen;
	if (!read_word(c, hdr, &sptr) || !read_word(c, hdr + ps, &slen))
		return NULL;
	size_t sav;
	const uint8_t *s = ctx_bytes(c, sptr, &sav);
	if (!s || slen > sav)
		return NULL;
	return version_copy(s, slen);
}

static char *read_buildinfo(struct elfctx *c)
{
	size_t len;
	uint64_t addr;
	const uint8_t *p = section_bytes(c->elf, ".go.buildinfo", &len, &addr);

	if (p)
		return parse_buildinfo(c, p, len);
	/* Without sections: 16-aligned in the writable data (go1.24 debug/buildinfo). */
	for (size_t i = 0; i < c->nregions; i++) {
		const struct region *r = &c->regions[i];
		if (!r->data || !r->write)
			continue;
		for (uint64_t a = (r->addr + 15) & ~(uint64_t)15; a - r->addr + 32 <= r->size; a += 16) {
			const uint8_t *q = r->data + (a - r->addr);
			if (q[0] != 0xff || memcmp(q, "\xff Go buildinf:", 14) != 0)
				continue;
			char *v = parse_buildinfo(c, q, r->size - (a - r->addr));
			if (v)
				return v;
		}
	}
	return NULL;
}

/* The Go build id: an ELF note named "Go" of type 4 (go1.24 cmd/link/internal/ld/elf.go
 * ELF_NOTE_GOBUILDID_TAG), in .note.go.buildid. */
static char *note_buildid(Elf_Data *d)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (d && off < d->d_size && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)d->d_buf + name_off;
		/* name "Go\0\0" with namesz 4 (go1.24 cmd/link/internal/ld/elf.go ELF_NOTE_GO_NAME) */
		if (nh.n_type == 4 && (nh.n_namesz == 3 || nh.n_namesz == 4) && memcmp(name, "Go", 3) == 0 && nh.n_descsz > 0 &&
		    nh.n_descsz < 1024)
			return xstrndup((const char *)d->d_buf + desc_off, nh.n_descsz);
	}
	return NULL;
}

static char *read_buildid(struct elfctx *c)
{
	Elf_Scn *scn = NULL;
	char *id = NULL;

	while (!id && (scn = elf_nextscn(c->elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE)
			id = note_buildid(elf_getdata(scn, NULL));
	}
	if (id)
		return id;
	size_t nph;
	if (elf_getphdrnum(c->elf, &nph) < 0)
		return NULL;
	for (size_t i = 0; !id && i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(c->elf, (int)i, &ph) && ph.p_type == PT_NOTE && ph.p_filesz)
			id = note_buildid(elf_getdata_rawchunk(c->elf, (int64_t)ph.p_offset, ph.p_filesz,
							       ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR));
	}
	return id;
}

/* Is text start ts plausible: the first and last function inside executable regions? */
static bool text_start_ok(const struct elfctx *c, const struct gopcln *t, uint64_t ts)
{
	const struct region *r0 = ctx_region(c, ts + ftab_entry(t, 0));
	const struct region *r1 = ctx_region(c, ts + ftab_entry(t, t->nfunc) - 1);

	return ts && r0 && r0->exec && r1 && r1->exec;
}

/* Last resort for a stripped Go 1.26+ binary without moduledata: the ELF entry point is
 * _rt0_<arch>_linux for internally linked programs (go1.26 runtime/rt0_linux_*.s). */
static uint64_t text_start_from_entry(const struct elfctx *c, struct gopcln *t)
{
	for (size_t i = 0; i < t->nfunc; i++) {
		struct fn f;
		if (load_fn(t, i, &f) < 0)
			continue;
		const char *name = fn_name(t, f.nameoff);
		if (!name || strncmp(name, "_rt0_", 5) != 0 || !strstr(name, "_linux"))
			continue;
		uint64_t e = ftab_entry(t, i);
		if (c->eh.e_entry >= e && text_start_ok(c, t, c->eh.e_entry - e))
			return c->eh.e_entry - e;
	}
	return 0;
}

/* May the file be scanned for a pclntab? Not when section headers show it is not Go, so
 * that the C libraries a Go program maps are not scanned: Go links write .note.go.buildid
 * and .go.buildinfo (go1.24 cmd/link/internal/ld/elf.go, data.go; kept by external links
 * and -s -w), usually .gopclntab too. */
static bool maybe_go(Elf *elf)
{
	static const char *const names[] = {".gopclntab", ".data.rel.ro.gopclntab", ".go.buildinfo",
					    ".note.go.buildid"};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool any = false;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return true;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh))
			continue;
		any = true;
		if (!(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (size_t i = 0; i < GP_ARRAY_SIZE(names); i++)
			if (strcmp(n, names[i]) == 0)
				return true;
	}
	return !any; /* no section headers at all: scan */
}

struct gopcln *gopcln_open_elf(Elf *elf, int *err)
{
	struct elfctx c = {.elf = elf};
	struct gopcln *t = xcalloc(1, sizeof(*t));
	uint64_t md = 0;
	int rc;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &c.eh)) {
		rc = GOPCLN_E_ELF;
		goto fail;
	}
	c.ptrsize = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4;
	{
		const uint16_t one = 1;
		uint8_t host_le;
		memcpy(&host_le, &one, 1);
		c.swap = (c.eh.e_ident[EI_DATA] == ELFDATA2LSB) != (host_le == 1);
	}
	load_symbols(&c);
	c.scan = maybe_go(elf);
	if (!c.scan && !c.sym_pclntab) {
		rc = GOPCLN_E_NOTFOUND;
		goto fail;
	}
	load_regions(&c);
	rc = locate_table(&c, t);
	if (rc)
		goto fail;
	t->version = read_buildinfo(&c);
	t->buildid = read_buildid(&c);

	if (t->magic == MAGIC_116) {
		/* Entries are absolute; report runtime.text, else the first function. */
		t->text_start = c.sym_text ? c.sym_text : ftab_entry(t, 0);
	} else {
		/* Go 1.26+ writes textStart 0 (go1.26 runtime/symtab.go pcHeader); an externally
		 * linked PIE may also leave it to a relocation. */
		if (!text_start_ok(&c, t, t->text_start)) {
			uint64_t ts = 0;
			if (c.sym_text && text_start_ok(&c, t, c.sym_text))
				ts = c.sym_text;
			if (!ts && (md = find_moduledata(&c, t)) != 0) {
				uint64_t v;
				if (read_word(&c, md + MD_TEXT * c.ptrsize, &v) && text_start_ok(&c, t, v))
					ts = v;
			}
			if (!ts)
				ts = text_start_from_entry(&c, t);
			if (!ts && c.nregions) {
				rc = GOPCLN_E_NOTEXT;
				goto fail;
			}
			t->text_start = ts;
		}
		if (!text_fits(t)) {
			rc = GOPCLN_E_CORRUPT;
			goto fail;
		}
		/* funcdata base: the go:func.* symbol, else moduledata.gofunc. */
		if (c.sym_gofunc && ctx_region(&c, c.sym_gofunc))
			t->gofunc = c.sym_gofunc;
		if (!t->gofunc) {
			if (!md)
				md = find_moduledata(&c, t);
			if (md)
				t->gofunc = moduledata_gofunc(&c, t, md);
		}
		if (!t->gofunc && t->magic == MAGIC_120 && t->hdr_text_start == 0 && t->addr) {
			size_t o = gofunc_guess(t);
			if (o)
				t->gofunc = t->addr + o;
		}
		if (t->gofunc) {
			size_t avail;
			const uint8_t *p = ctx_bytes(&c, t->gofunc, &avail);
			if (p) {
				t->gofunc_data = p;
				t->gofunc_len = avail;
			} else {
				t->gofunc = 0;
			}
		}
	}
	/* Go 1.16-1.17 funcdata are absolute pointers: keep the address map. */
	t->regions = c.regions;
	t->nregions = c.nregions;
	c.regions = NULL;
	free(c.rel);
	if (err)
		*err = 0;
	return t;
fail:
	free(c.regions);
	free(c.rel);
	gopcln_free(t);
	set_err(err, rc);
	return NULL;
}

char *gopcln_elf_go_version(Elf *elf)
{
	struct elfctx c = {.elf = elf};
	char *v;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &c.eh)) {
		errno = EINVAL;
		return NULL;
	}
	c.ptrsize = gelf_getclass(elf) == ELFCLASS64 ? 8 : 4;
	{
		const uint16_t one = 1;
		uint8_t host_le;
		memcpy(&host_le, &one, 1);
		c.swap = (c.eh.e_ident[EI_DATA] == ELFDATA2LSB) != (host_le == 1);
	}
	/* Not Go by its section headers: nothing to scan for (a C program, a library). */
	if (!maybe_go(elf)) {
		errno = ENOENT;
		return NULL;
	}
	load_regions(&c);
	v = read_buildinfo(&c);
	free(c.regions);
	free(c.rel);
	if (!v)
		errno = ENOENT;
	return v;
}
