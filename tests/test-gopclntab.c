/* test-gopclntab.c: the .gopclntab reader on hand-built tables, on real Go binaries (checked
 * against go tool addr2line, the binaries' DWARF and .debug_frame, and their stripped twins)
 * and on thousands of corrupted tables. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/unit.h"
#include <dwarf.h>
#include <elfutils/libdw.h>

#include "gotop/gopclntab.h"
#include "gotop/util.h"

/* ======================= hand-built tables ======================= */

/* A growable little/big-endian byte buffer. */
struct wbuf {
	uint8_t *p;
	size_t len, cap;
	bool be;
};

static void wb_bytes(struct wbuf *b, const void *src, size_t n)
{
	xgrow((void **)&b->p, &b->cap, b->len + n, 1);
	memcpy(b->p + b->len, src, n);
	b->len += n;
}

static void wb_u8(struct wbuf *b, uint8_t v)
{
	wb_bytes(b, &v, 1);
}

static void wb_uint(struct wbuf *b, uint64_t v, unsigned size)
{
	uint8_t tmp[8];

	for (unsigned i = 0; i < size; i++)
		tmp[b->be ? size - 1 - i : i] = (uint8_t)(v >> (8 * i));
	wb_bytes(b, tmp, size);
}

static void wb_put(struct wbuf *b, size_t at, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		b->p[at + (b->be ? size - 1 - i : i)] = (uint8_t)(v >> (8 * i));
}

static void wb_align(struct wbuf *b, unsigned a)
{
	while (b->len % a)
		wb_u8(b, 0);
}

static void wb_uvarint(struct wbuf *b, uint32_t v)
{
	while (v >= 0x80) {
		wb_u8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	wb_u8(b, (uint8_t)v);
}

/* A pc-value table from (value, end offset) runs; returns its offset in pctab (the
 * encoding of go1.24 cmd/internal/obj/pcln.go funcpctab: zigzag value delta from -1,
 * then pc delta / quantum, 0 ends). */
static uint32_t wb_pctable(struct wbuf *pctab, unsigned quantum, const int32_t (*runs)[2], size_t n)
{
	uint32_t off = (uint32_t)pctab->len;
	int32_t prev = -1;
	int32_t pc = 0;

	for (size_t i = 0; i < n; i++) {
		int32_t d = runs[i][0] - prev;
		wb_uvarint(pctab, ((uint32_t)d << 1) ^ (uint32_t)(d >> 31));
		wb_uvarint(pctab, (uint32_t)(runs[i][1] - pc) / quantum);
		prev = runs[i][0];
		pc = runs[i][1];
	}
	wb_u8(pctab, 0);
	return off;
}

enum synth_fmt { SYN_116, SYN_118, SYN_120, SYN_126 };

struct synth_opts {
	enum synth_fmt fmt;
	bool be;
	unsigned ptrsize, quantum;
	uint64_t text; /* textStart; 0 for SYN_126 */
};

/* Function names, in funcnametab order. */
static const char synth_names[] = "main.alpha\0main.beta\0main.gamma\0main.delta";
enum { NAME_ALPHA = 0, NAME_BETA = 11, NAME_GAMMA = 21, NAME_DELTA = 32 };

/*
 * Two functions: main.alpha at text+0x00 (0x40 bytes) in a.go and main.beta at text+0x40
 * (0x20 bytes) in b.go. alpha: pcsp 0 on [0,4), 24 on [4,0x3c), 0 on [0x3c,0x40);
 * lines 10 on [0,0x10), 11, 12, 13 on each following 0x10. beta: no pcsp table, line 100.
 * For SYN_126 alpha also has an inline tree: index -1 on [0,0x20), 0 (main.gamma, parent
 * pc 0x08, startLine 50) on [0x20,0x30), 1 (main.delta, parent pc 0x24, startLine 60)
 * on [0x30,0x40).
 */
static uint8_t *synth_table(const struct synth_opts *o, size_t *len)
{
	struct wbuf h = {.be = o->be}, pct = {.be = o->be};
	unsigned ps = o->ptrsize, q = o->quantum;
	bool has_text = o->fmt != SYN_116;
	unsigned nwords = has_text ? 8 : 7;

	/* pctab: offset 0 is reserved for "no table" */
	wb_u8(&pct, 0);
	const int32_t sp_a[][2] = {{0, 4}, {24, 0x3c}, {0, 0x40}};
	const int32_t file_a[][2] = {{0, 0x40}};
	const int32_t line_a[][2] = {{10, 0x10}, {11, 0x20}, {12, 0x30}, {13, 0x40}};
	const int32_t inl_a[][2] = {{-1, 0x20}, {0, 0x30}, {1, 0x40}};
	const int32_t file_b[][2] = {{1, 0x20}};
	const int32_t line_b[][2] = {{100, 0x20}};
	uint32_t t_sp_a = wb_pctable(&pct, q, sp_a, 3);
	uint32_t t_file_a = wb_pctable(&pct, q, file_a, 1);
	uint32_t t_line_a = wb_pctable(&pct, q, line_a, 4);
	uint32_t t_inl_a = wb_pctable(&pct, q, inl_a, 3);
	uint32_t t_file_b = wb_pctable(&pct, q, file_b, 1);
	uint32_t t_line_b = wb_pctable(&pct, q, line_b, 1);

	/* header, patched below */
	wb_uint(&h, o->fmt == SYN_116 ? 0xFFFFFFFAu : o->fmt == SYN_118 ? 0xFFFFFFF0u : 0xFFFFFFF1u, 4);
	wb_u8(&h, 0);
	wb_u8(&h, 0);
	wb_u8(&h, (uint8_t)q);
	wb_u8(&h, (uint8_t)ps);
	size_t words = h.len;
	for (unsigned i = 0; i < nwords; i++)
		wb_uint(&h, 0, ps);
	size_t fn_off = h.len;
	wb_bytes(&h, synth_names, sizeof(synth_names));
	size_t cu_off = h.len;
	wb_align(&h, 4);
	cu_off = h.len;
	wb_uint(&h, 0, 4); /* file 0 -> "a.go" */
	wb_uint(&h, 5, 4); /* file 1 -> "b.go" */
	size_t ft_off = h.len;
	wb_bytes(&h, "a.go\0b.go", 10);
	size_t pc_off = h.len;
	wb_bytes(&h, pct.p, pct.len);
	wb_align(&h, ps);
	size_t pl_off = h.len;

	unsigned field = o->fmt == SYN_116 ? ps : 4;
	size_t ftab = h.len;
	for (unsigned i = 0; i < 5; i++)
		wb_uint(&h, 0, field);
	wb_align(&h, o->fmt == SYN_116 ? ps : 4);

	/* _func records (go1.16/go1.19/go1.24 runtime/runtime2.go) */
	uint64_t entries[3] = {0, 0x40, 0x60};
	if (o->fmt == SYN_116)
		for (int i = 0; i < 3; i++)
			entries[i] += o->text;
	size_t recs[2], fdata_at = 0;
	for (int i = 0; i < 2; i++) {
		wb_align(&h, o->fmt == SYN_116 ? ps : 4);
		recs[i] = h.len;
		wb_uint(&h, entries[i], o->fmt == SYN_116 ? ps : 4);
		wb_uint(&h, i == 0 ? NAME_ALPHA : NAME_BETA, 4);
		wb_uint(&h, 0, 4); /* args */
		wb_uint(&h, 0, 4); /* deferreturn */
		wb_uint(&h, i == 0 ? t_sp_a : 0, 4);
		wb_uint(&h, i == 0 ? t_file_a : t_file_b, 4);
		wb_uint(&h, i == 0 ? t_line_a : t_line_b, 4);
		bool inl = i == 0 && o->fmt == SYN_126;
		wb_uint(&h, inl ? 3 : 0, 4); /* npcdata */
		wb_uint(&h, 0, 4);           /* cuOffset */
		if (o->fmt >= SYN_120)
			wb_uint(&h, i == 0 ? 9 : 99, 4); /* startLine */
		wb_u8(&h, 0);                         /* funcID */
		wb_u8(&h, i == 1 ? 5 : 0);            /* flag: TopFrame|Asm on beta */
		wb_u8(&h, 0);
		wb_u8(&h, inl ? 4 : 0); /* nfuncdata */
		if (inl) {
			wb_uint(&h, 0, 4);
			wb_uint(&h, 0, 4);
			wb_uint(&h, t_inl_a, 4);
			for (int k = 0; k < 3; k++)
				wb_uint(&h, 0xFFFFFFFFu, 4);
			fdata_at = h.len;
			wb_uint(&h, 0, 4); /* funcdata[3] = inline tree offset from gofunc */
		}
	}
	for (int i = 0; i < 3; i++) {
		wb_put(&h, ftab + 2 * i * field, entries[i], field);
		if (i < 2)
			wb_put(&h, ftab + (2 * i + 1) * field, recs[i] - pl_off, field);
	}
	if (o->fmt == SYN_126) {
		/* go:func.* after the records, 8-aligned; the tree at offset 8 inside it */
		wb_align(&h, 8);
		size_t gofunc = h.len;
		wb_uint(&h, 0, 8);
		wb_put(&h, fdata_at, h.len - gofunc, 4);
		/* go1.24 runtime/symtabinl.go inlinedCall: funcID, pad[3], nameOff, parentPc, startLine */
		wb_uint(&h, 0, 4);
		wb_uint(&h, NAME_GAMMA, 4);
		wb_uint(&h, 0x08, 4);
		wb_uint(&h, 50, 4);
		wb_uint(&h, 0, 4);
		wb_uint(&h, NAME_DELTA, 4);
		wb_uint(&h, 0x24, 4);
		wb_uint(&h, 60, 4);
	}

	uint64_t w[8];
	unsigned k = 0;
	w[k++] = 2; /* nfunc */
	w[k++] = 2; /* nfiles */
	if (has_text)
		w[k++] = o->fmt == SYN_126 ? 0 : o->text;
	w[k++] = fn_off;
	w[k++] = cu_off;
	w[k++] = ft_off;
	w[k++] = pc_off;
	w[k++] = pl_off;
	for (unsigned i = 0; i < nwords; i++)
		wb_put(&h, words + i * ps, w[i], ps);
	free(pct.p);
	*len = h.len;
	return h.p;
}

static void check_synth(const struct synth_opts *o)
{
	size_t len;
	uint8_t *buf = synth_table(o, &len);
	int err = -1;
	uint64_t text = o->text;
	struct gopcln *t = gopcln_open_buf(buf, len, o->fmt == SYN_126 ? text : 0, &err);
	struct gopcln_frame fr[8];
	struct gopcln_func f;
	int32_t sp;

	assert_non_null(t);
	assert_int_equal(err, 0);
	assert_int_equal(gopcln_ptrsize(t), o->ptrsize);
	assert_int_equal(gopcln_quantum(t), o->quantum);
	assert_int_equal(gopcln_nfunc(t), 2);
	assert_true(gopcln_text_start(t) == (o->fmt == SYN_116 ? 0 : text));

	assert_int_equal(gopcln_find_func(t, text + 0x10, &f), 0);
	assert_string_equal(f.name, "main.alpha");
	assert_true(f.entry == text && f.end == text + 0x40);
	assert_int_equal(f.flag, 0);
	assert_int_equal(gopcln_find_func(t, text + 0x5f, &f), 0);
	assert_string_equal(f.name, "main.beta");
	assert_int_equal(f.flag, GOPCLN_FLAG_TOPFRAME | GOPCLN_FLAG_ASM);
	assert_int_equal(gopcln_find_func(t, text + 0x60, &f), -ENOENT);
	if (text)
		assert_int_equal(gopcln_find_func(t, text - 1, &f), -ENOENT);

	assert_int_equal(gopcln_pcsp(t, text, &sp), 0);
	assert_int_equal(sp, 0);
	assert_int_equal(gopcln_pcsp(t, text + 4, &sp), 0);
	assert_int_equal(sp, 24);
	assert_int_equal(gopcln_pcsp(t, text + 0x3b, &sp), 0);
	assert_int_equal(sp, 24);
	assert_int_equal(gopcln_pcsp(t, text + 0x3c, &sp), 0);
	assert_int_equal(sp, 0);
	assert_int_equal(gopcln_pcsp(t, text + 0x40, &sp), -ENOENT); /* beta has no table */
	assert_int_equal(gopcln_pcsp(t, text + 0x60, &sp), -ENOENT);

	assert_int_equal(gopcln_frames(t, text + 0x11, fr, 8), 1);
	assert_string_equal(fr[0].func, "main.alpha");
	assert_string_equal(fr[0].file, "a.go");
	assert_int_equal(fr[0].line, 11);
	assert_int_equal(fr[0].start_line, o->fmt >= SYN_120 ? 9 : 0);
	assert_int_equal(gopcln_frames(t, text + 0x50, fr, 8), 1);
	assert_string_equal(fr[0].func, "main.beta");
	assert_string_equal(fr[0].file, "b.go");
	assert_int_equal(fr[0].line, 100);
	assert_int_equal(gopcln_frames(t, text + 0x60, fr, 8), 0);

	if (o->fmt == SYN_126) {
		assert_int_equal(gopcln_frames(t, text + 0x34, fr, 8), 3);
		assert_string_equal(fr[0].func, "main.delta");
		assert_int_equal(fr[0].line, 13);
		assert_int_equal(fr[0].start_line, 60);
		assert_string_equal(fr[1].func, "main.gamma");
		assert_int_equal(fr[1].line, 12);
		assert_int_equal(fr[1].start_line, 50);
		assert_string_equal(fr[2].func, "main.alpha");
		assert_int_equal(fr[2].line, 10);
		assert_int_equal(fr[2].start_line, 9);
		/* too small an array keeps the innermost and the physical function */
		assert_int_equal(gopcln_frames(t, text + 0x34, fr, 2), 2);
		assert_string_equal(fr[0].func, "main.delta");
		assert_string_equal(fr[1].func, "main.alpha");
		assert_int_equal(gopcln_frames(t, text + 0x34, fr, 1), 1);
		assert_string_equal(fr[0].func, "main.alpha");
		assert_int_equal(gopcln_frames(t, text + 0x20, fr, 8), 2);
		assert_string_equal(fr[0].func, "main.gamma");
		assert_string_equal(fr[1].func, "main.alpha");
	}
	gopcln_free(t);

	/* every truncation fails cleanly (the functab and records are checked at open) */
	for (size_t n = 0; n < len; n += 1 + n / 16) {
		uint8_t *cut = xmalloc(n ? n : 1);
		memcpy(cut, buf, n);
		t = gopcln_open_buf(cut, n, 0, &err);
		if (t) {
			(void)gopcln_frames(t, text + 0x34, fr, 8);
			gopcln_free(t);
		} else {
			assert_true(err > 0 && err < GOPCLN_E_COUNT);
		}
		free(cut);
	}
	free(buf);
}

static void test_synthetic(void **state)
{
	(void)state;
	static const struct synth_opts cases[] = {
		{SYN_120, false, 8, 1, 0x401000}, {SYN_120, true, 8, 4, 0x11000}, {SYN_118, false, 8, 1, 0x401000},
		{SYN_118, false, 4, 4, 0x8000},   {SYN_116, false, 8, 1, 0x401000}, {SYN_116, true, 4, 2, 0x10000},
		{SYN_126, false, 8, 1, 0},        {SYN_126, true, 8, 4, 0},         {SYN_126, false, 8, 1, 0x1000},
	};
	for (size_t i = 0; i < GP_ARRAY_SIZE(cases); i++)
		check_synth(&cases[i]);
}

static void test_errors(void **state)
{
	(void)state;
	int err = 0;
	uint8_t junk[256] = {0xfb, 0xff, 0xff, 0xff, 0, 0, 1, 8};

	assert_null(gopcln_open_buf(NULL, 0, 0, &err));
	assert_int_equal(err, GOPCLN_E_NOTFOUND);
	assert_null(gopcln_open_buf(junk, sizeof(junk), 0, &err));
	assert_int_equal(err, GOPCLN_E_VERSION); /* Go 1.2-1.15 */
	junk[0] = 0xf1;
	junk[6] = 3; /* bad quantum */
	assert_null(gopcln_open_buf(junk, sizeof(junk), 0, &err));
	assert_int_equal(err, GOPCLN_E_CORRUPT);
	for (int e = 0; e < GOPCLN_E_COUNT; e++)
		assert_non_null(gopcln_strerror(e));
	assert_string_equal(gopcln_strerror(GOPCLN_E_OK), "no error");
	assert_non_null(gopcln_strerror(1000));
	gopcln_free(NULL);

	/* an ELF file without Go */
	int fd = open("/proc/self/exe", O_RDONLY);
	assert_true(fd >= 0);
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	assert_non_null(e);
	errno = 0;
	assert_null(gopcln_open_elf(e, &err));
	assert_int_equal(err, GOPCLN_E_NOTFOUND);
	assert_int_equal(errno, ENOENT);
	elf_end(e);
	close(fd);
	assert_null(gopcln_open_elf(NULL, &err));
	assert_int_equal(err, GOPCLN_E_ELF);
}

/* ======================= real Go binaries ======================= */

/* A test program with inlining three deep, closures, generics, methods and defer. */
static const char inl_prog[] =
	"package main\n"
	"\n"
	"import (\n"
	"\t\"fmt\"\n"
	"\t\"os\"\n"
	"\t\"sort\"\n"
	"\t\"strings\"\n"
	")\n"
	"\n"
	"type big struct{ a [16]int64 }\n"
	"\n"
	"var sink int64\n"
	"var bsink big\n"
	"\n"
	"//go:noinline\n"
	"func leaf(x int64) int64 { return x*3 + 1 }\n"
	"\n"
	"func inl3(x int64) int64 { return x ^ leaf(x) }\n"
	"\n"
	"func inl2(x int64) int64 {\n"
	"\ty := inl3(x)\n"
	"\treturn y + leaf(y)\n"
	"}\n"
	"\n"
	"func inl1(x int64) int64 { return inl2(x) * 2 }\n"
	"\n"
	"type num interface{ ~int64 | ~int32 }\n"
	"\n"
	"func sum[T num](xs []T) T {\n"
	"\tvar s T\n"
	"\tfor _, x := range xs {\n"
	"\t\ts += x\n"
	"\t}\n"
	"\treturn s\n"
	"}\n"
	"\n"
	"type acc struct{ n int64 }\n"
	"\n"
	"func (a *acc) add(x int64) { a.n += inl1(x) }\n"
	"\n"
	"//go:noinline\n"
	"func duff(b *big) big { c := *b; c.a[3] = sink; return c }\n"
	"\n"
	"//go:noinline\n"
	"func work(n int) int64 {\n"
	"\tvar a acc\n"
	"\tdefer func() { sink += a.n }()\n"
	"\tf := func(i int) { a.add(int64(i)) }\n"
	"\tfor i := 0; i < n; i++ {\n"
	"\t\tf(i)\n"
	"\t\tbsink = duff(&bsink)\n"
	"\t}\n"
	"\treturn a.n + sum([]int64{1, 2, 3}) + int64(sum([]int32{4, 5}))\n"
	"}\n"
	"\n"
	"func main() {\n"
	"\tn := 1000\n"
	"\tif len(os.Args) > 1 {\n"
	"\t\tn = len(os.Args[1])\n"
	"\t}\n"
	"\tsink = work(n)\n"
	"\ts := strings.Fields(\"c b a\")\n"
	"\tsort.Strings(s)\n"
	"\tfmt.Println(strings.Join(s, \",\"), sink)\n"
	"}\n";

static const char *srcdir(void)
{
	const char *s = getenv("TOP_SRCDIR");

	return s && *s ? s : NULL;
}

static const char *builddir(void)
{
	const char *s = getenv("TOP_BUILDDIR");

	return s && *s ? s : ".";
}

static void chomp(char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
}

/* Writes the inline test program under the build dir, keeping its mtime when unchanged. */
static const char *inl_source(void)
{
	static char path[4096];
	char *old = NULL;
	size_t oldlen = 0;

	snprintf(path, sizeof(path), "%s/tests/gopcln-data/inl.go", builddir());
	run("mkdir -p '%s/tests/gopcln-data'", builddir());
	old = util_read_file(path, 1 << 20, &oldlen);
	if (!old || oldlen != sizeof(inl_prog) - 1 || memcmp(old, inl_prog, oldlen) != 0) {
		FILE *f = fopen(path, "w");
		if (!f) {
			free(old);
			return NULL;
		}
		fwrite(inl_prog, 1, sizeof(inl_prog) - 1, f);
		fclose(f);
	}
	free(old);
	return path;
}

/* Builds src with tests/helpers/go-build.sh; 0, or 77 when the toolchain is unavailable. */
static int go_build(const char *ver, const char *variant, const char *src, char *out, size_t outsz)
{
	const char *base = strrchr(src, '/') ? strrchr(src, '/') + 1 : src;

	snprintf(out, outsz, "%s/tests/gopcln-data/%.*s-%s-%s", builddir(), (int)(strlen(base) - 3), base, ver, variant);
	return run("sh '%s/tests/helpers/go-build.sh' %s %s '%s' '%s' >/dev/null 2>&1", srcdir(), ver, variant, src, out);
}

/* An open Go binary and, when it has them, its DWARF and CFI. */
struct bin {
	const char *path;
	int fd;
	Elf *elf;
	struct gopcln *t;
	Dwarf *dw;
	Dwarf_CFI *cfi;
	uint16_t machine;
	/* compile units by address, for DWARF lookups (Go emits no .debug_aranges) */
	struct cu_range {
		uint64_t lo, hi;
		Dwarf_Off off;
	} *cus;
	size_t ncus, capcus;
};

static int cu_cmp(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static bool bin_open(struct bin *b, const char *path)
{
	int err = 0;
	GElf_Ehdr eh;

	memset(b, 0, sizeof(*b));
	b->path = path;
	elf_version(EV_CURRENT);
	b->fd = open(path, O_RDONLY);
	if (b->fd < 0)
		return false;
	b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL);
	if (!b->elf || !gelf_getehdr(b->elf, &eh))
		return false;
	b->machine = eh.e_machine;
	b->t = gopcln_open_elf(b->elf, &err);
	if (!b->t) {
		print_error("%s: %s\n", path, gopcln_strerror(err));
		return false;
	}
	/* DWARF through its own descriptor so the reader's Elf stays untouched */
	b->dw = dwarf_begin(b->fd, DWARF_C_READ);
	if (b->dw) {
		Dwarf_Off off = 0, next;
		size_t hsize;
		while (dwarf_nextcu(b->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
			Dwarf_Die cu;
			if (dwarf_offdie(b->dw, off + hsize, &cu)) {
				Dwarf_Addr base, lo, hi;
				ptrdiff_t r = 0;
				while ((r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0) {
					xgrow((void **)&b->cus, &b->capcus, b->ncus + 1, sizeof(*b->cus));
					b->cus[b->ncus++] = (struct cu_range){lo, hi, off + hsize};
				}
			}
			off = next;
		}
		if (b->ncus)
			qsort(b->cus, b->ncus, sizeof(*b->cus), cu_cmp);
		else {
			dwarf_end(b->dw);
			b->dw = NULL;
		}
		if (b->dw)
			b->cfi = dwarf_getcfi(b->dw);
	}
	return true;
}

static void bin_close(struct bin *b)
{
	gopcln_free(b->t);
	if (b->dw)
		dwarf_end(b->dw);
	if (b->elf)
		elf_end(b->elf);
	if (b->fd >= 0)
		close(b->fd);
	free(b->cus);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}

/* Frames at pc from DWARF: name, file, line per level, innermost first. */
#define MAXF 32
struct dframes {
	int n;
	const char *func[MAXF];
	const char *file[MAXF];
	int line[MAXF];
};

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	if (dwarf_attr_integrate(d, DW_AT_name, &a))
		return dwarf_formstring(&a);
	return NULL;
}

/* The DIEs whose ranges hold pc, outermost first: the physical subprogram and the
 * inlined subroutines nested in it (lexical blocks are skipped over). */
static int die_path(Dwarf_Die *parent, uint64_t pc, Dwarf_Die *path, int depth)
{
	Dwarf_Die child;

	if (depth >= MAXF || dwarf_child(parent, &child) != 0)
		return depth;
	do {
		int tag = dwarf_tag(&child);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		if (dwarf_haspc(&child, pc) != 1)
			continue;
		if (tag != DW_TAG_lexical_block)
			path[depth++] = child;
		return die_path(&child, pc, path, depth);
	} while (dwarf_siblingof(&child, &child) == 0);
	return depth;
}

/* Frames at pc from DWARF, innermost first: the innermost position from the line table,
 * each caller's from the DW_AT_call_file/line of the inlined subroutine it called. */
static bool dwarf_frames(struct bin *b, uint64_t pc, struct dframes *out)
{
	size_t lo = 0, hi = b->ncus;
	Dwarf_Die cu, path[MAXF];

	out->n = 0;
	while (lo < hi) { /* last range with lo <= pc */
		size_t mid = (lo + hi) / 2;
		if (b->cus[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo;
	while (i > 0 && !(b->cus[i - 1].lo <= pc && pc < b->cus[i - 1].hi))
		i--;
	if (i == 0 || !dwarf_offdie(b->dw, b->cus[i - 1].off, &cu))
		return false;
	Dwarf_Line *ln = dwarf_getsrc_die(&cu, pc);
	int line = 0;
	const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
	if (ln)
		dwarf_lineno(ln, &line);
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	dwarf_getsrcfiles(&cu, &files, &nfiles);
	int np = die_path(&cu, pc, path, 0);
	for (int k = np - 1; k >= 0; k--) {
		out->func[out->n] = die_name(&path[k]);
		out->file[out->n] = file;
		out->line[out->n] = line;
		out->n++;
		/* the caller's position is the call site of this inlined call */
		Dwarf_Attribute a;
		Dwarf_Word cf = 0, cl = 0;
		if (dwarf_attr(&path[k], DW_AT_call_file, &a))
			dwarf_formudata(&a, &cf);
		if (dwarf_attr(&path[k], DW_AT_call_line, &a))
			dwarf_formudata(&a, &cl);
		file = files && cf < nfiles ? dwarf_filesrc(files, cf, NULL, NULL) : NULL;
		line = (int)cl;
	}
	return out->n > 0 && out->line[0] > 0;
}

/* CFA offset from SP at pc per .debug_frame; false if none. */
static bool cfa_offset(struct bin *b, uint64_t pc, int64_t *off)
{
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t nops;
	bool ok = false;

	if (!b->cfi || dwarf_cfi_addrframe(b->cfi, pc, &fr) != 0)
		return false;
	/* Go's CIE defines the CFA on the stack pointer (writeframes DW_CFA_def_cfa), so
	 * whatever register libdw names here is SP. */
	if (dwarf_frame_cfa(fr, &ops, &nops) == 0 && nops == 1) {
		if (ops[0].atom == DW_OP_bregx) {
			*off = (int64_t)ops[0].number2;
			ok = true;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
			*off = (int64_t)ops[0].number;
			ok = true;
		}
	}
	free(fr);
	return ok;
}

/* PCs to check: every main.* function's entry, middle and last instruction, and the same
 * for every step-th other function. */
static uint64_t *sample_pcs(struct gopcln *t, size_t *n)
{
	size_t nf = gopcln_nfunc(t), step = nf / 150 + 1, cap = 0;
	unsigned q = gopcln_quantum(t);
	uint64_t *pcs = NULL;

	*n = 0;
	for (size_t i = 0; i < nf; i++) {
		struct gopcln_func f;
		if (gopcln_func_at(t, i, &f) != 0)
			continue;
		if (strncmp(f.name, "main.", 5) != 0 && i % step != 0)
			continue;
		uint64_t mid = f.entry + ((f.end - f.entry) / 2) / q * q;
		uint64_t cand[3] = {f.entry, mid, f.end - q};
		for (int k = 0; k < 3; k++) {
			if (cand[k] < f.entry || cand[k] >= f.end)
				continue;
			xgrow((void **)&pcs, &cap, *n + 1, sizeof(*pcs));
			pcs[(*n)++] = cand[k];
		}
	}
	return pcs;
}

/* go tool addr2line on pcs: name and file:line per pc (arrays of n strings, caller frees). */
static char *addr2line(const char *goroot, const char *bin, const uint64_t *pcs, size_t n, char ***names,
		       char ***poss)
{
	char inpath[4096];

	snprintf(inpath, sizeof(inpath), "%s.pcs", bin);
	FILE *f = fopen(inpath, "w");
	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", pcs[i]);
	fclose(f);
	char *out = capture("GOROOT='%s' GOTOOLCHAIN=local '%s/bin/go' tool addr2line '%s' < '%s'", goroot, goroot, bin,
			    inpath);
	unlink(inpath);
	if (!out)
		return NULL;
	*names = xcalloc(n, sizeof(char *));
	*poss = xcalloc(n, sizeof(char *));
	char *save = NULL, *line = strtok_r(out, "\n", &save);
	for (size_t i = 0; i < n && line; i++) {
		(*names)[i] = line;
		line = strtok_r(NULL, "\n", &save);
		(*poss)[i] = line ? line : "";
		line = strtok_r(NULL, "\n", &save);
	}
	return out;
}

/* Strips the GOROOT prefix Go records differently in DWARF and pclntab ("$GOROOT/src"). */
static const char *norm_file(const char *f, const char *goroot)
{
	size_t n = strlen(goroot);

	if (!f)
		return "?";
	if (strncmp(f, "./", 2) == 0)
		return f + 2;
	if (strncmp(f, "$GOROOT/", 8) == 0)
		return f + 8;
	if (strncmp(f, goroot, n) == 0 && f[n] == '/')
		return f + n + 1;
	return f;
}

/* Does a DWARF name match a pclntab name? Since Go 1.18 the linker writes funcnametab
 * names with everything from the first '[' to the last ']' replaced by "[...]" (go1.19
 * cmd/link/internal/ld/pcln.go generateFuncnametab nameParts); DWARF keeps the full name. */
static bool name_match(const char *dw, const char *pc)
{
	const char *e = strstr(pc, "[...]");
	const char *open = strchr(dw, '['), *close = strrchr(dw, ']');

	if (!e || !open || !close || close < open)
		return strcmp(dw, pc) == 0;
	return (size_t)(open - dw) == (size_t)(e - pc) && strncmp(dw, pc, (size_t)(e - pc)) == 0 &&
	       strcmp(close + 1, e + 5) == 0;
}

static unsigned go_minor(const char *v)
{
	return strncmp(v, "go1.", 4) == 0 ? (unsigned)atoi(v + 4) : 0;
}

/* A target architecture: GOARCH, pointer size, PC quantum (minLC: go1.27
 * cmd/internal/sys/arch.go MinLC), and whether calls leave the return address in a link
 * register (Arch.HasLR) rather than on the stack. */
struct arch {
	const char *goarch;
	unsigned ptrsize, quantum;
	bool haslr;
};

static const struct arch arch_amd64 = {"amd64", 8, 1, false}, arch_arm64 = {"arm64", 8, 4, true};
/* More architectures, built plain and stripped for the last Go release tested: 32-bit
 * little-endian and 64-bit big-endian with a 2-byte quantum (GOPCLN_TEST_ARCHES=all adds
 * arm and ppc64, and runs them for every release). */
static const struct arch other_arches[] = {
	{"386", 4, 1, false}, {"s390x", 8, 2, true}, {"arm", 4, 4, true}, {"ppc64", 8, 4, true},
};

struct go_case {
	const char *ver;
	bool last; /* the last release in the list */
	char goroot[4096];
	char gover[64];
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Index of the function holding pc (the reader's binary search, redone here). */
static size_t func_index(struct gopcln *t, uint64_t pc)
{
	size_t lo = 0, hi = gopcln_nfunc(t);

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		struct gopcln_func fm;
		assert_int_equal(gopcln_func_at(t, mid, &fm), 0);
		if (fm.entry <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* twin_path must give the same frames and pcsp as t at the same function and offset. */
static void compare_twin(const struct go_case *gc, struct gopcln *t, const uint64_t *pcs, size_t npcs,
			 const char *twin_path)
{
	struct bin tw;
	size_t checked = 0;

	assert_true(bin_open(&tw, twin_path));
	assert_null(tw.dw);
	assert_int_equal(gopcln_nfunc(tw.t), gopcln_nfunc(t));
	assert_string_equal(gopcln_go_version(tw.t), gc->gover);
	assert_non_null(gopcln_build_id(tw.t));
	assert_int_equal(gopcln_wrapper_funcid(tw.t), gopcln_wrapper_funcid(t));
	for (size_t i = 0; i < npcs; i++) {
		struct gopcln_frame a[MAXF], c[MAXF];
		struct gopcln_func fa, fc;
		assert_int_equal(gopcln_find_func(t, pcs[i], &fa), 0);
		assert_int_equal(gopcln_func_at(tw.t, func_index(t, pcs[i]), &fc), 0);
		assert_string_equal(fa.name, fc.name);
		uint64_t pc2 = fc.entry + (pcs[i] - fa.entry);
		int na = gopcln_frames(t, pcs[i], a, MAXF), nc = gopcln_frames(tw.t, pc2, c, MAXF);
		assert_int_equal(na, nc);
		for (int k = 0; k < na; k++) {
			assert_string_equal(a[k].func, c[k].func);
			assert_string_equal(a[k].file, c[k].file);
			assert_int_equal(a[k].line, c[k].line);
			assert_int_equal(a[k].start_line, c[k].start_line);
			assert_int_equal(a[k].wrapper, c[k].wrapper);
		}
		int32_t s1 = -1, s2 = -2;
		int r1 = gopcln_pcsp(t, pcs[i], &s1);
		assert_int_equal(r1, gopcln_pcsp(tw.t, pc2, &s2));
		if (r1 == 0)
			assert_int_equal(s1, s2);
		checked++;
	}
	print_message("# %s: %zu PCs equal to the unstripped binary\n", twin_path, checked);
	bin_close(&tw);
}

/* A copy of an ELF file with its section headers dropped (e_shoff, e_shnum and
 * e_shstrndx zeroed, at their elf.h Elf32_Ehdr/Elf64_Ehdr offsets; zero needs no byte
 * order), as some packers and sstrip leave them. */
static bool make_sectionless(const char *src, const char *dst)
{
	size_t len;
	char *img = util_read_file(src, 1 << 30, &len);
	bool ok = false;

	if (!img || len < sizeof(Elf64_Ehdr) || memcmp(img, ELFMAG, SELFMAG) != 0)
		goto out;
	if (img[EI_CLASS] == ELFCLASS64) {
		memset(img + offsetof(Elf64_Ehdr, e_shoff), 0, 8);
		memset(img + offsetof(Elf64_Ehdr, e_shnum), 0, 4); /* e_shnum, e_shstrndx */
	} else {
		memset(img + offsetof(Elf32_Ehdr, e_shoff), 0, 4);
		memset(img + offsetof(Elf32_Ehdr, e_shnum), 0, 4);
	}
	FILE *f = fopen(dst, "w");
	if (f) {
		ok = fwrite(img, 1, len, f) == len;
		ok = (fclose(f) == 0) && ok;
	}
out:
	free(img);
	return ok;
}

/* The reader on the raw .gopclntab bytes (gopcln_open_buf) agrees with the ELF reader:
 * all frames from Go 1.26 on (go:func.* is inside the section), else the physical
 * function with the innermost file:line (no inline trees without moduledata). */
static void compare_buf(struct bin *b, const uint64_t *pcs, size_t npcs)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	const uint8_t *data = NULL;
	size_t len = 0;

	if (elf_getshdrstrndx(b->elf, &shstrndx) < 0)
		return;
	while ((scn = elf_nextscn(b->elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(b->elf, shstrndx, sh.sh_name)) &&
		    (strcmp(name, ".gopclntab") == 0 || strcmp(name, ".data.rel.ro.gopclntab") == 0)) {
			Elf_Data *d = elf_getdata(scn, NULL);
			data = d->d_buf;
			len = d->d_size;
		}
	}
	if (!data)
		return;
	int err;
	struct gopcln *t = gopcln_open_buf(data, len, gopcln_text_start(b->t), &err);
	assert_non_null(t);
	assert_int_equal(gopcln_nfunc(t), gopcln_nfunc(b->t));
	/* Go 1.26+: magic 0xFFFFFFF1 and a zero textStart word (8 + 2 words into the header) */
	unsigned ps = gopcln_ptrsize(t);
	bool full = gopcln_magic(t) == 0xFFFFFFF1u && !memcmp(data + 8 + 2 * ps, "\0\0\0\0\0\0\0\0", ps);
	size_t same = 0;
	for (size_t i = 0; i < npcs; i++) {
		struct gopcln_frame a[MAXF], c[MAXF];
		int na = gopcln_frames(b->t, pcs[i], a, MAXF), nc = gopcln_frames(t, pcs[i], c, MAXF);
		assert_true(na >= 1 && nc >= 1);
		if (full) {
			assert_int_equal(na, nc);
			for (int k = 0; k < na; k++) {
				assert_string_equal(a[k].func, c[k].func);
				assert_int_equal(a[k].line, c[k].line);
			}
		} else {
			assert_int_equal(nc, 1);
			assert_string_equal(a[na - 1].func, c[0].func);
			assert_string_equal(a[0].file, c[0].file);
			assert_int_equal(a[0].line, c[0].line);
		}
		same++;
	}
	print_message("# %s: %zu PCs equal from the raw section (%s)\n", b->path, same,
		      full ? "with inlining" : "without inline trees");
	gopcln_free(t);
}

/* Checks one binary against go tool addr2line, its DWARF and CFI when it has them, and
 * (when twin is not NULL) frame by frame against its twin (the same program, stripped). */
static void check_binary(const struct go_case *gc, const char *path, const char *twin_path, const struct arch *ar)
{
	struct bin b;
	size_t npcs;

	assert_true(bin_open(&b, path));
	struct gopcln *t = b.t;
	assert_string_equal(gopcln_go_version(t), gc->gover);
	assert_int_equal(gopcln_ptrsize(t), ar->ptrsize);
	assert_int_equal(gopcln_quantum(t), ar->quantum);
	/* FuncIDWrapper per release (go1.19 runtime/symtab.go funcID_wrapper; go1.22 adds
	 * FuncID_corostart, go1.25 FuncID_runFinalizers/runCleanups in internal/abi/symtab.go) */
	unsigned minor = go_minor(gc->gover);
	assert_int_equal(gopcln_wrapper_funcid(t), minor <= 21 ? 21 : minor <= 24 ? 22 : 23);
	/* build id against go tool buildid */
	char *id = capture("GOROOT='%s' GOTOOLCHAIN=local '%s/bin/go' tool buildid '%s'", gc->goroot, gc->goroot, path);
	assert_non_null(id);
	chomp(id);
	assert_non_null(gopcln_build_id(t));
	assert_string_equal(gopcln_build_id(t), id);
	free(id);

	uint64_t *pcs = sample_pcs(t, &npcs);
	assert_true(npcs > 300);

	/* go tool addr2line: the physical function, and file:line of the innermost frame */
	char **names = NULL, **poss = NULL;
	char *a2l = addr2line(gc->goroot, path, pcs, npcs, &names, &poss);
	assert_non_null(a2l);
	size_t bad_a2l = 0, inlined = 0, dw_checked = 0, dw_bad = 0, cfa_checked = 0, cfa_bad = 0;
	size_t entry_sp_bad = 0, a2l_unknown = 0, dw_wrapper = 0;
	for (size_t i = 0; i < npcs; i++) {
		struct gopcln_frame fr[MAXF];
		int n = gopcln_frames(t, pcs[i], fr, MAXF);
		assert_true(n >= 1);
		if (n > 1)
			inlined++;
		char pos[4096];
		snprintf(pos, sizeof(pos), "%s:%d", fr[0].file, fr[0].line);
		if (fr[0].line == 0)
			snprintf(pos, sizeof(pos), "?:0");
		/* addr2line (debug/gosym) prints ":-1" where the line table has no value (":-7" on
		 * the 1.27 go:textfipsstart marker); the reader says "?" and 0 */
		bool same_pos = strcmp(poss[i] ? poss[i] : "", pos) == 0 ||
				(fr[0].line == 0 && poss[i] && poss[i][0] == ':' && poss[i][1] == '-');
		/* Linker marker symbols (go:textfipsstart) have no line table (offset 0): the
		 * runtime says "?" (go1.27 runtime/symtab.go pcvalue "if off == 0"), debug/gosym
		 * decodes pctab from its start and finds whatever the first table says. */
		if (fr[0].line == 0 && names[i] && strncmp(names[i], "go:", 3) == 0)
			same_pos = true;
		if (names[i] && strcmp(names[i], "?") == 0)
			a2l_unknown++;
		if (!names[i] || strcmp(names[i], fr[n - 1].func) != 0 || !same_pos) {
			if (bad_a2l++ < 5)
				print_message("# %s 0x%" PRIx64 ": addr2line %s %s, gopcln %s %s\n", path, pcs[i],
					      names[i] ? names[i] : "(none)", poss[i] ? poss[i] : "", fr[n - 1].func, pos);
		}
		struct gopcln_func f;
		assert_int_equal(gopcln_find_func(t, pcs[i], &f), 0);
		assert_string_equal(f.name, fr[n - 1].func);
		int32_t sp;
		int rc = gopcln_pcsp(t, pcs[i], &sp);
		/* 0 at entry (nothing pushed yet), or no table at all (markers like go:textfipsstart) */
		if (pcs[i] == f.entry && (rc == 0 ? sp != 0 : rc != -ENOENT) && entry_sp_bad++ < 5)
			print_message("# %s 0x%" PRIx64 " %s: pcsp at entry %d (rc %d)\n", path, pcs[i], f.name, sp, rc);

		/* DWARF: every level of the inline chain */
		struct dframes d;
		if (b.dw && dwarf_frames(&b, pcs[i], &d)) {
			bool same = d.n == n;
			for (int k = 0; same && k < n; k++)
				same = d.func[k] && name_match(d.func[k], fr[k].func) && d.line[k] == fr[k].line &&
				       strcmp(norm_file(d.file[k], gc->goroot), norm_file(fr[k].file, gc->goroot)) == 0;
			/* Go 1.19 DWARF describes a method inlined into its autogenerated pointer
			 * wrapper as one frame: the wrapper's name at the method's position. */
			if (!same && n == d.n + 1 && fr[n - 1].wrapper && go_minor(gc->gover) <= 20) {
				bool merged = d.func[d.n - 1] && strcmp(d.func[d.n - 1], fr[n - 1].func) == 0;
				for (int k = 0; merged && k < d.n; k++)
					merged = d.line[k] == fr[k].line &&
						 (k == d.n - 1 || (d.func[k] && name_match(d.func[k], fr[k].func)));
				if (merged) {
					dw_wrapper++;
					same = true;
				}
			}
			dw_checked++;
			if (!same && dw_bad++ < 5) {
				print_message("# %s 0x%" PRIx64 ": DWARF %d frames, gopcln %d:\n", path, pcs[i], d.n, n);
				for (int k = 0; k < d.n; k++)
					print_message("#   dwarf  %s %s:%d\n", d.func[k] ? d.func[k] : "?",
						      d.file[k] ? d.file[k] : "?", d.line[k]);
				for (int k = 0; k < n; k++)
					print_message("#   gopcln %s %s:%d\n", fr[k].func, fr[k].file, fr[k].line);
			}
		}
		/* .debug_frame: CFA = SP + pcsp, plus one word where CALL pushes the return
		 * address (go1.27 cmd/link/internal/ld/dwarf.go writeframes: "spdelta +=
		 * PtrSize" unless haslr) */
		int64_t cfa;
		if (cfa_offset(&b, pcs[i], &cfa)) {
			cfa_checked++;
			if (rc != 0 || cfa != (int64_t)sp + (ar->haslr ? 0 : ar->ptrsize)) {
				if (cfa_bad++ < 5)
					print_message("# %s 0x%" PRIx64 " (%s): CFA sp+%" PRId64 ", pcsp %d (rc %d)\n", path,
						      pcs[i], f.name, cfa, sp, rc);
			}
		}
	}
	print_message("# %s: %zu PCs (%zu inlined), addr2line mismatches %zu, DWARF %zu checked %zu bad"
		      " (%zu wrapper merges), CFA %zu checked %zu bad\n",
		      path, npcs, inlined, bad_a2l, dw_checked, dw_bad, dw_wrapper, cfa_checked, cfa_bad);
	if (a2l_unknown == npcs && b.dw && dw_checked > npcs / 2) {
		/* go1.19's debug/gosym does not find .data.rel.ro.gopclntab in PIE: DWARF checks it */
		print_message("# %s: go tool addr2line cannot read this binary; checked against DWARF only\n", path);
	} else {
		assert_int_equal(bad_a2l, 0);
	}
	assert_int_equal(dw_bad, 0);
	assert_int_equal(cfa_bad, 0);
	assert_int_equal(entry_sp_bad, 0);
	assert_true(inlined > 0);
	if (b.dw) {
		assert_true(dw_checked > npcs / 2);
		assert_true(cfa_checked > npcs / 2);
	}

	/* The stripped twin gives the same frames for the same function and offset, and so
	 * does a copy of it without section headers (found by scanning, moduledata by scan,
	 * version from the data segment, build id from PT_NOTE). */
	if (twin_path) {
		char nosec[4096];
		snprintf(nosec, sizeof(nosec), "%s-nosections", twin_path);
		assert_true(make_sectionless(twin_path, nosec));
		compare_twin(gc, t, pcs, npcs, twin_path);
		compare_twin(gc, t, pcs, npcs, nosec);
		unlink(nosec);
	}
	compare_buf(&b, pcs, npcs);

	/* main.work: frame set up after the prologue (pcsp > 0 somewhere, 0 at entry) */
	bool found = false;
	for (size_t i = 0; i < gopcln_nfunc(t); i++) {
		struct gopcln_func f;
		if (gopcln_func_at(t, i, &f) != 0 || strcmp(f.name, "main.work") != 0)
			continue;
		int32_t sp, maxsp = 0;
		assert_int_equal(gopcln_pcsp(t, f.entry, &sp), 0);
		assert_int_equal(sp, 0);
		for (uint64_t pc = f.entry; pc < f.end; pc += gopcln_quantum(t))
			if (gopcln_pcsp(t, pc, &sp) == 0 && sp > maxsp)
				maxsp = sp;
		assert_true(maxsp > 0);
		assert_int_equal(f.flag & GOPCLN_FLAG_ASM, 0);
		found = true;
	}
	assert_true(found);

	/* Some runtime functions carry the flags the repair code relies on. */
	struct gopcln_func f;
	for (size_t i = 0; i < gopcln_nfunc(t); i++)
		if (gopcln_func_at(t, i, &f) == 0 && strcmp(f.name, "runtime.goexit") == 0)
			assert_true(f.flag & GOPCLN_FLAG_TOPFRAME);

	/* Lookup cost (reported, never asserted). */
	if (ar == &arch_amd64 && twin_path) {
		struct gopcln_frame fr[MAXF];
		volatile int sinkn = 0;
		int reps = 200;
		double t0 = now_s();
		for (int r = 0; r < reps; r++)
			for (size_t i = 0; i < npcs; i++)
				sinkn += gopcln_frames(t, pcs[i], fr, MAXF);
		double t1 = now_s();
		for (int r = 0; r < reps; r++)
			for (size_t i = 0; i < npcs; i++) {
				int32_t sp;
				sinkn += gopcln_pcsp(t, pcs[i], &sp);
			}
		double t2 = now_s();
		print_message("# %s: gopcln_frames %.0f ns/call, gopcln_pcsp %.0f ns/call (%zu PCs x %d, %d)\n", path,
			      (t1 - t0) * 1e9 / (reps * (double)npcs), (t2 - t1) * 1e9 / (reps * (double)npcs), npcs,
			      reps, (int)sinkn);
	}
	free(names);
	free(poss);
	free(a2l);
	free(pcs);
	bin_close(&b);
}

static int go_setup(void **state)
{
	struct go_case *gc = *state;

	if (!srcdir())
		return 0;
	char *g = capture("sh '%s/tests/helpers/go-toolchain.sh' %s 2>/dev/null", srcdir(), gc->ver);
	if (!g)
		return 0;
	chomp(g);
	snprintf(gc->goroot, sizeof(gc->goroot), "%s", g);
	free(g);
	char *v = capture("GOROOT='%s' GOTOOLCHAIN=local GOENV=off '%s/bin/go' env GOVERSION", gc->goroot, gc->goroot);
	if (v) {
		chomp(v);
		snprintf(gc->gover, sizeof(gc->gover), "%s", v);
		free(v);
	} else {
		gc->goroot[0] = '\0';
	}
	return 0;
}

/* Builds src as a PIE linked by the system linker (cgo on, -linkmode=external), where the
 * C start-up code comes before runtime.text and moduledata words may be left to RELA
 * relocations. false when it cannot be built here (no gcc). */
static bool build_extpie(const struct go_case *gc, const char *src, bool strip, char *out, size_t outsz)
{
	struct stat a, b;

	snprintf(out, outsz, "%s/tests/gopcln-data/inl-%s-extpie%s", builddir(), gc->ver, strip ? "-stripped" : "");
	if (stat(out, &a) == 0 && stat(src, &b) == 0 && a.st_mtime > b.st_mtime)
		return true;
	/* the build cache tests/helpers/go-build.sh uses: CACHE/gocache-1.X for GOROOT CACHE/1.X/usr/lib/go-1.X */
	return run("cd '%s/tests/gopcln-data' && cache=$(cd '%s/../../../..' && pwd) && env GOROOT='%s' "
		   "GOTOOLCHAIN=local GO111MODULE=off GOFLAGS= GOENV=off GOPATH=\"$cache/gopath\" "
		   "GOCACHE=\"$cache/gocache-%s\" GOPROXY=off CGO_ENABLED=1 GOARCH=amd64 '%s/bin/go' build "
		   "-buildmode=pie -ldflags='-linkmode=external%s' -o '%s' '%s' >/dev/null 2>&1",
		   builddir(), gc->goroot, gc->goroot, gc->ver, gc->goroot, strip ? " -s -w" : "", out, src) == 0;
}

/* Builds src for another GOARCH (pure Go, internal linking). */
static bool build_arch(const struct go_case *gc, const char *src, const char *goarch, bool strip, char *out,
		       size_t outsz)
{
	struct stat a, b;

	snprintf(out, outsz, "%s/tests/gopcln-data/inl-%s-%s%s", builddir(), gc->ver, goarch, strip ? "-stripped" : "");
	if (stat(out, &a) == 0 && stat(src, &b) == 0 && a.st_mtime > b.st_mtime)
		return true;
	return run("cd '%s/tests/gopcln-data' && cache=$(cd '%s/../../../..' && pwd) && env GOROOT='%s' "
		   "GOTOOLCHAIN=local GO111MODULE=off GOFLAGS= GOENV=off GOPATH=\"$cache/gopath\" "
		   "GOCACHE=\"$cache/gocache-%s\" GOPROXY=off CGO_ENABLED=0 GOOS=linux GOARCH=%s '%s/bin/go' build "
		   "-ldflags='%s' -o '%s' '%s' >/dev/null 2>&1",
		   builddir(), gc->goroot, gc->goroot, gc->ver, goarch, gc->goroot, strip ? "-s -w" : "", out, src) == 0;
}

static void test_go(void **state)
{
	struct go_case *gc = *state;
	char src2[4096];
	static const char *const variants[] = {"plain", "stripped", "pie", "arm64", "arm64-stripped"};
	char bins[5][4096];

	if (!srcdir()) {
		print_message("# SKIP: TOP_SRCDIR not set (run through make check)\n");
		skip();
	}
	if (!gc->goroot[0]) {
		print_message("# SKIP: Go %s toolchain unavailable (tests/helpers/go-toolchain.sh)\n", gc->ver);
		skip();
	}
	const char *srcs[2] = {inl_source(), NULL};
	snprintf(src2, sizeof(src2), "%s/tests/workloads/go/leafduff.go", srcdir());
	if (access(src2, R_OK) == 0)
		srcs[1] = src2;
	assert_non_null(srcs[0]);
	/* GOPCLN_TEST_QUICK=1 (tests/sanitize.sh, under valgrind: about 4 minutes of CPU
	 * otherwise): the first program only, no other architectures, no external PIE. The
	 * plain and ASan suites check everything. */
	const char *quick_env = getenv("GOPCLN_TEST_QUICK");
	bool quick = quick_env && strcmp(quick_env, "1") == 0;
	for (int s = 0; s < (quick ? 1 : 2) && srcs[s]; s++) {
		for (int v = 0; v < 5; v++) {
			int rc = go_build(gc->ver, variants[v], srcs[s], bins[v], sizeof(bins[v]));
			if (rc == 77) {
				print_message("# SKIP: Go %s toolchain unavailable\n", gc->ver);
				skip();
			}
			assert_int_equal(rc, 0);
		}
		check_binary(gc, bins[0], bins[1], &arch_amd64); /* plain, with its stripped twin */
		check_binary(gc, bins[1], NULL, &arch_amd64);    /* stripped alone: addr2line still applies */
		check_binary(gc, bins[2], NULL, &arch_amd64);    /* PIE */
		check_binary(gc, bins[3], bins[4], &arch_arm64); /* arm64 and its stripped twin */
	}
	if (quick) {
		print_message("# GOPCLN_TEST_QUICK: one program, amd64 and arm64 only\n");
		return;
	}
	const char *all = getenv("GOPCLN_TEST_ARCHES");
	bool every = all && strcmp(all, "all") == 0;
	for (size_t a = 0; a < (every ? GP_ARRAY_SIZE(other_arches) : 2) && (every || gc->last); a++) {
		const struct arch *ar = &other_arches[a];
		char plain[4096], stripped[4096];
		if (build_arch(gc, srcs[0], ar->goarch, false, plain, sizeof(plain)) &&
		    build_arch(gc, srcs[0], ar->goarch, true, stripped, sizeof(stripped)))
			check_binary(gc, plain, stripped, ar);
		else
			print_message("# Go %s: cannot build for GOARCH=%s, not checked\n", gc->ver, ar->goarch);
	}
	char ext[2][4096];
	if (build_extpie(gc, srcs[0], false, ext[0], sizeof(ext[0])) &&
	    build_extpie(gc, srcs[0], true, ext[1], sizeof(ext[1])))
		check_binary(gc, ext[0], ext[1], &arch_amd64);
	else
		print_message("# Go %s: no externally linked PIE (cgo and gcc needed), that part not run\n", gc->ver);
}

/* ======================= garbage ======================= */

static bool go_cases; /* GOPCLN_TEST_GO named releases: test_go built their binaries */

/* xorshift64* */
static uint64_t rnd_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545F4914F6CDD1Dull;
}

/* Opens and queries a mutated copy of a table (exact-size heap copy so that sanitizers
 * see any read past the end). */
static void poke(const uint8_t *base, size_t len, uint64_t text, const uint64_t *pcs, size_t npcs, size_t *opened)
{
	uint8_t *buf = xmalloc(len ? len : 1);
	int err;

	memcpy(buf, base, len);
	struct gopcln *t = gopcln_open_buf(buf, len, text, &err);
	if (t) {
		(*opened)++;
		struct gopcln_frame fr[8];
		struct gopcln_func f;
		int32_t sp;
		for (size_t i = 0; i < npcs; i++) {
			uint64_t pc = pcs[i] + (rnd() % 3 == 0 ? rnd() % 64 : 0);
			(void)gopcln_frames(t, pc, fr, 8);
			(void)gopcln_pcsp(t, pc, &sp);
			if (gopcln_find_func(t, pc, &f) == 0)
				assert_non_null(f.name);
		}
		for (size_t i = 0; i < gopcln_nfunc(t) && i < 64; i++)
			(void)gopcln_func_at(t, rnd() % gopcln_nfunc(t), &f);
		gopcln_free(t);
	} else {
		assert_true(err > 0 && err < GOPCLN_E_COUNT);
	}
	free(buf);
}

static void fuzz_table(const uint8_t *tab, size_t len, uint64_t text, unsigned iters, size_t *opened)
{
	struct gopcln *t = gopcln_open_buf(tab, len, text, NULL);
	uint64_t *pcs = NULL;
	size_t npcs = 0, cap = 0;

	assert_non_null(t);
	size_t step = gopcln_nfunc(t) / 40 + 1;
	for (size_t i = 0; i < gopcln_nfunc(t); i += step) {
		struct gopcln_func f;
		if (gopcln_func_at(t, i, &f) == 0) {
			xgrow((void **)&pcs, &cap, npcs + 2, sizeof(*pcs));
			pcs[npcs++] = f.entry;
			pcs[npcs++] = f.entry + (f.end - f.entry) / 2;
		}
	}
	gopcln_free(t);
	uint8_t *m = xmalloc(len);
	for (unsigned it = 0; it < iters; it++) {
		memcpy(m, tab, len);
		size_t n = len;
		switch (rnd() % 6) {
		case 0: /* truncate */
			n = rnd() % len;
			break;
		case 1: /* flip bits anywhere */
			for (int k = 1 + rnd() % 8; k > 0; k--)
				m[rnd() % len] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 2: /* smash the header */
			m[8 + rnd() % 64 % (len - 8)] = (uint8_t)rnd();
			break;
		case 3: { /* random bytes in a pctab-sized window */
			size_t at = rnd() % len, w = 1 + rnd() % 32;
			for (size_t k = at; k < at + w && k < len; k++)
				m[k] = (uint8_t)rnd();
			break;
		}
		case 4: /* 0xff runs: huge varints and offsets */
			for (size_t k = rnd() % len, e = k + rnd() % 16; k < e && k < len; k++)
				m[k] = 0xff;
			break;
		default: /* flip bits after the functab (records, go:func.*) */
			for (int k = 1 + rnd() % 4; k > 0; k--)
				m[len / 2 + rnd() % (len - len / 2)] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		}
		poke(m, n, text, pcs, npcs, opened);
	}
	free(m);
	free(pcs);
}

/* Mutates the Go-specific contents of a real binary (pclntab, moduledata, build info,
 * notes), half of the time also dropping its section headers, and opens it through
 * gopcln_open_elf. */
static void fuzz_elf(const char *path, unsigned iters, size_t *opened)
{
	static const char *const names[] = {".gopclntab", ".data.rel.ro.gopclntab", ".go.module", ".noptrdata",
					    ".go.buildinfo", ".note.go.buildid", ".data", ".rodata"};
	size_t len;
	char *img = util_read_file(path, 1 << 30, &len);
	uint64_t ranges[16][2], pcs[64];
	size_t nr = 0, npcs = 0;

	assert_non_null(img);
	Elf *e = elf_memory(img, len);
	assert_non_null(e);
	struct gopcln *t = gopcln_open_elf(e, NULL);
	assert_non_null(t);
	for (size_t i = 0; i < gopcln_nfunc(t) && npcs < GP_ARRAY_SIZE(pcs); i += gopcln_nfunc(t) / 60 + 1) {
		struct gopcln_func f;
		if (gopcln_func_at(t, i, &f) == 0)
			pcs[npcs++] = f.entry + (f.end - f.entry) / 3;
	}
	gopcln_free(t);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	elf_getshdrstrndx(e, &shstrndx);
	while ((scn = elf_nextscn(e, scn)) && nr < GP_ARRAY_SIZE(ranges)) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !(n = elf_strptr(e, shstrndx, sh.sh_name)))
			continue;
		for (size_t k = 0; k < GP_ARRAY_SIZE(names); k++)
			if (strcmp(n, names[k]) == 0 && sh.sh_size > 0 && sh.sh_offset + sh.sh_size <= len) {
				ranges[nr][0] = sh.sh_offset;
				ranges[nr][1] = sh.sh_size;
				nr++;
			}
	}
	elf_end(e);
	assert_true(nr >= 3);

	char *m = xmalloc(len);
	for (unsigned it = 0; it < iters; it++) {
		memcpy(m, img, len);
		const uint64_t *r = ranges[rnd() % nr];
		int k = 1 + (int)(rnd() % 16);
		for (; k > 0; k--) {
			/* mostly near the start of the range: headers, functab, moduledata words */
			uint64_t at = r[0] + (rnd() % 2 ? rnd() % GP_MIN(r[1], 512) : rnd() % r[1]);
			m[at] = rnd() % 3 ? (char)(m[at] ^ (1 << (rnd() % 8))) : (char)rnd();
		}
		if (it % 2) {
			Elf64_Ehdr eh;
			memcpy(&eh, m, sizeof(eh));
			eh.e_shoff = 0;
			eh.e_shnum = 0;
			eh.e_shstrndx = 0;
			memcpy(m, &eh, sizeof(eh));
		}
		e = elf_memory(m, len);
		if (!e)
			continue;
		int err = 0;
		t = gopcln_open_elf(e, &err);
		if (t) {
			(*opened)++;
			struct gopcln_frame fr[8];
			int32_t sp;
			for (size_t i = 0; i < npcs; i++) {
				(void)gopcln_frames(t, pcs[i], fr, 8);
				(void)gopcln_pcsp(t, pcs[i], &sp);
			}
			const char *v = gopcln_go_version(t), *id = gopcln_build_id(t);
			if (v)
				assert_true(strlen(v) <= 128);
			if (id)
				assert_true(strlen(id) < 1024);
			gopcln_free(t);
		} else {
			assert_true(err > 0 && err < GOPCLN_E_COUNT);
		}
		elf_end(e);
	}
	free(m);
	free(img);
}

static void test_garbage(void **state)
{
	(void)state;
	size_t opened = 0;

	/* hand-built tables of every format */
	static const struct synth_opts cases[] = {
		{SYN_120, false, 8, 1, 0x401000}, {SYN_118, true, 4, 4, 0x8000}, {SYN_116, false, 8, 1, 0x401000},
		{SYN_126, false, 8, 4, 0},
	};
	for (size_t c = 0; c < GP_ARRAY_SIZE(cases); c++) {
		size_t len;
		uint8_t *tab = synth_table(&cases[c], &len);
		fuzz_table(tab, len, 0, 2000, &opened);
		free(tab);
	}
	/* real tables from the Go binaries test_go built (with GOPCLN_TEST_GO) */
	static const char *const vers[] = {"1.19", "1.23", "1.27"};
	size_t real = 0, elf_opened = 0, elfs = 0;
	for (size_t v = 0; go_cases && v < GP_ARRAY_SIZE(vers); v++) {
		static const char *const variants[] = {"stripped", "pie", "arm64-stripped"};
		for (size_t k = 0; k < GP_ARRAY_SIZE(variants); k++) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/tests/gopcln-data/inl-%s-%s", builddir(), vers[v], variants[k]);
			if (access(path, R_OK) == 0) {
				fuzz_elf(path, 150, &elf_opened);
				elfs++;
			}
		}
	}
	for (size_t v = 0; go_cases && v < GP_ARRAY_SIZE(vers); v++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/tests/gopcln-data/inl-%s-plain", builddir(), vers[v]);
		struct bin b;
		if (access(path, R_OK) != 0 || !bin_open(&b, path)) {
			if (access(path, R_OK) == 0)
				bin_close(&b);
			continue;
		}
		size_t len = 0;
		Elf_Scn *scn = NULL;
		size_t shstrndx;
		elf_getshdrstrndx(b.elf, &shstrndx);
		while ((scn = elf_nextscn(b.elf, scn))) {
			GElf_Shdr sh;
			gelf_getshdr(scn, &sh);
			const char *name = elf_strptr(b.elf, shstrndx, sh.sh_name);
			if (name && strcmp(name, ".gopclntab") == 0) {
				Elf_Data *d = elf_getdata(scn, NULL);
				len = d->d_size;
				uint8_t *copy = xmalloc(len);
				memcpy(copy, d->d_buf, len);
				uint64_t text = gopcln_text_start(b.t);
				fuzz_table(copy, len, text, 1500, &opened);
				free(copy);
				real++;
			}
		}
		bin_close(&b);
	}
	print_message("# garbage: %zu mutated tables opened cleanly (%zu real tables used); %zu of %zu mutated"
		      " ELF files opened\n", opened, real, elf_opened, elfs * 150);
}

int main(void)
{
	/* Go releases to test, as GOPCLN_TEST_GO lists them (e.g. "1.19 1.23 1.27":
	 * tests/gopclntab-go.sh, in make check). Without it none: the tables built by hand
	 * only, so that make check-unit builds no Go program. */
	static struct go_case cases[16];
	static char names[16][16];
	struct CMUnitTest tests[3 + 16];
	size_t n = 0, ncases = 0;
	char list[256];
	const char *env = getenv("GOPCLN_TEST_GO");

	snprintf(list, sizeof(list), "%s", env ? env : "");
	go_cases = list[0] != 0;
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_synthetic);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_errors);
	char *save = NULL;
	for (char *v = strtok_r(list, " ,", &save); v && ncases < GP_ARRAY_SIZE(cases); v = strtok_r(NULL, " ,", &save)) {
		cases[ncases].ver = v;
		snprintf(names[ncases], sizeof(names[ncases]), "go%s", v);
		tests[n++] = (struct CMUnitTest){names[ncases], test_go, go_setup, NULL, &cases[ncases]};
		ncases++;
	}
	if (ncases)
		cases[ncases - 1].last = true;
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_garbage);

	elf_version(EV_CURRENT);
	return _cmocka_run_group_tests("tests", tests, n, NULL, NULL);
}
