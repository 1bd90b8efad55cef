/* test-annotate.c: one function as instructions, lines and source, on the hot-loop
 * workload compiled here; instructions are checked against objdump, lines and inline
 * chains against addr2line -i, and the rows against counts placed by hand. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/unit.h"

#include "gotop/annotate.h"
#include "gotop/disasm.h"
#include "gotop/gopclntab.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

static char tmpdir[256], bin[512], src[600], srcdir[512];
static int have_tools;

/* The line of src holding marker (1-based), or 0. */
static int marker_line(const char *marker)
{
	char *out = capture("grep -n -F '/* %s */' '%s' | head -1 | cut -d: -f1", marker, src);
	int l = out ? atoi(out) : 0;

	free(out);
	return l;
}

static int group_setup(void **state)
{
	const char *top = getenv("TOP_SRCDIR");
	char workload[600];

	(void)state;
	if (top)
		snprintf(workload, sizeof(workload), "%s/tests/workloads/hotloop.c", top);
	else
		snprintf(workload, sizeof(workload), "%.*s/workloads/hotloop.c",
			 (int)(strrchr(__FILE__, '/') ? strrchr(__FILE__, '/') - __FILE__ : 1),
			 strrchr(__FILE__, '/') ? __FILE__ : ".");
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gotop-test-annotate.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(srcdir, sizeof(srcdir), "%s/src", tmpdir);
	snprintf(src, sizeof(src), "%s/hotloop.c", srcdir);
	snprintf(bin, sizeof(bin), "%s/hotloop", tmpdir);
	have_tools = run("mkdir -p '%s' && cp '%s' '%s' && cd '%s' && cc -O1 -g -fno-omit-frame-pointer "
			 "-o '%s' '%s' 2>/dev/null", srcdir, workload, src, srcdir, bin, src) == 0 &&
		     run("objdump --version >/dev/null 2>&1 && addr2line --version >/dev/null 2>&1") == 0;
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	return 0;
}

static struct annot *open_fn(struct symfile *sf, const char *name, const struct annot_opts *o)
{
	uint64_t s, e;
	int err = 0;
	struct annot *a;

	assert_int_equal(annot_func_named(sf, name, &s, &e), 0);
	a = annot_open(sf, s, e, name, o, &err);
	assert_non_null(a);
	assert_int_equal(err, 0);
	return a;
}

/* Instruction addresses and mnemonics equal objdump's (Intel syntax). */
static void test_insns_match_objdump(void **state)
{
	const char *fns[] = { "hl_loop", "hl_inline", "main" };

	(void)state;
	if (!have_tools)
		skip();
	for (size_t f = 0; f < GP_ARRAY_SIZE(fns); f++) {
		struct symfile *sf = symfile_open(bin, NULL);
		struct annot *a = open_fn(sf, fns[f], NULL);
		char *out = capture("objdump -d -M intel --no-show-raw-insn --disassemble=%s '%s'",
				    fns[f], bin);
		char *save = NULL, *line;
		size_t i = 0;

		assert_non_null(out);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned long long addr;
			char mn[64];

			if (sscanf(line, " %llx:\t%63s", &addr, mn) != 2)
				continue;
			assert_true(i < annot_ninsns(a));
			assert_int_equal(annot_insns(a)[i].addr, addr);
			/* objdump's first word is the mnemonic (or a prefix such as "rep"). */
			assert_int_equal(strncmp(annot_text(a, i), mn, strlen(mn)), 0);
			i++;
		}
		assert_int_equal(i, annot_ninsns(a));
		assert_int_equal(annot_nbad(a), 0);
		free(out);
		annot_free(a);
		symfile_free(sf);
	}
}

/* Every instruction's inline chain equals addr2line -i's: the same lines, innermost first. */
static void test_lines_match_addr2line(void **state)
{
	struct symfile *sf;
	struct annot *a;
	size_t i, inlined = 0;

	(void)state;
	if (!have_tools)
		skip();
	sf = symfile_open(bin, NULL);
	a = open_fn(sf, "hl_inline", NULL);
	for (i = 0; i < annot_ninsns(a); i++) {
		const struct annot_insn *in = &annot_insns(a)[i];
		char *out = capture("addr2line -i -e '%s' 0x%llx", bin, (unsigned long long)in->addr);
		char *save = NULL, *line;
		uint32_t k = 0;

		assert_non_null(out);
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			const char *colon = strrchr(line, ':');

			assert_non_null(colon);
			assert_true(k < in->nfr);
			assert_int_equal(annot_frames(a)[in->fr + k].line, atoi(colon + 1));
			k++;
		}
		assert_int_equal(k, in->nfr);
		inlined += in->nfr > 1;
		free(out);
	}
	assert_true(inlined >= 5); /* hl_mix's body */
	annot_free(a);
	symfile_free(sf);
}

/* Counts placed by hand come back on the lines and instructions they were put at. */
static void test_rows(void **state)
{
	struct symfile *sf;
	struct annot *a;
	struct annot_row *rows = NULL;
	struct annot_count c[4];
	int64_t *self, *total, missed = 0, sum = 0;
	size_t n, i, nrows, hot_row = SIZE_MAX;
	int hot = marker_line("HOT LOOP");
	long k;

	(void)state;
	if (!have_tools)
		skip();
	sf = symfile_open(bin, NULL);
	a = open_fn(sf, "hl_loop", NULL);
	n = annot_ninsns(a);
	self = xcalloc(n, sizeof(*self));
	total = xcalloc(n, sizeof(*total));
	/* The backward jump's target is the loop's first instruction. */
	for (i = 0; i < n && !(annot_insns(a)[i].kind == DISASM_CJUMP &&
			       annot_insns(a)[i].target < annot_insns(a)[i].addr); i++)
		;
	assert_true(i < n);
	k = annot_find(a, annot_insns(a)[i].target);
	assert_true(k >= 0 && annot_insns(a)[k].jump_in);
	c[0] = (struct annot_count){ annot_insns(a)[k].addr, 0, 90, 90 };
	/* 10 on an instruction of another line (the function's entry shares the loop's). */
	for (i = 0; i < n; i++) {
		const struct annot_insn *in = &annot_insns(a)[i];

		if (in->nfr && annot_frames(a)[in->fr + in->nfr - 1].line != hot)
			break;
	}
	assert_true(i < n);
	c[1] = (struct annot_count){ annot_insns(a)[i].addr, 0, 10, 10 };
	c[2] = (struct annot_count){ annot_insns(a)[k].addr + 1, 0, 5, 5 }; /* inside an insn */
	c[3] = (struct annot_count){ annot_end(a) + 100, 0, 7, 7 };       /* outside */
	assert_int_equal(annot_attribute(a, c, 4, self, total, &missed), 2);
	assert_int_equal(missed, 12);
	nrows = annot_source_rows(a, self, total, &rows);
	assert_true(nrows > 0);
	for (i = 0; i < nrows; i++) {
		sum += rows[i].self;
		assert_int_equal(rows[i].depth, 0);
		if (rows[i].line == hot)
			hot_row = i;
		if (i)
			assert_true(rows[i].line > rows[i - 1].line);
	}
	assert_int_equal(sum, 100);
	assert_true(hot_row != SIZE_MAX);
	assert_int_equal(rows[hot_row].self, 90);
	assert_true(rows[hot_row].hot);
	/* The source text of the line is the file's. */
	{
		size_t len = 0;
		const char *t = annot_source_line(a, rows[hot_row].file, hot, &len);

		assert_non_null(t);
		assert_non_null(memmem(t, len, "HOT LOOP", 8));
		assert_string_equal(annot_source_file(a, rows[hot_row].file), src);
	}
	free(rows);
	free(self);
	free(total);
	annot_free(a);
	symfile_free(sf);
}

/* A profile's addresses of a function: the mapping with the most samples is chosen, its
 * samples land on their instructions (values and counts), another mapping's are left out,
 * those off the code are missed; the five hottest instructions are marked. */
static void test_samples(void **state)
{
	struct symfile *sf;
	struct annot *a;
	struct annot_counts c;
	char *seg;
	unsigned long long off = 0, vaddr = 0;
	uint64_t map = 0, hot = 0, start, pgoff, x, y;
	int64_t sum = 0, sum_n = 0;
	size_t n, i;

	(void)state;
	if (!have_tools)
		skip();
	sf = symfile_open(bin, NULL);
	a = open_fn(sf, "hl_loop", NULL);
	n = annot_ninsns(a);
	assert_true(n >= 6);
	/* A mapping of the executable segment where the runtime address is the link-time one
	 * (readelf -l: its file offset and address). */
	seg = capture("readelf -lW '%s' | awk '$1 == \"LOAD\" && $0 ~ / R E / { print $2, $3; exit }'", bin);
	assert_non_null(seg);
	assert_int_equal(sscanf(seg, "%llx %llx", &off, &vaddr), 2);
	free(seg);
	start = vaddr & ~0xfffULL;
	pgoff = off & ~0xfffULL;
	x = annot_insns(a)[0].addr;
	y = annot_insns(a)[1].addr;
	{
		struct annot_sample s[] = {
			{ 1, x, 0, 90, 90, 9, 9 },
			{ 1, y, 0, 10, 10, 1, 1 },
			{ 1, annot_end(a) + 100, 0, 7, 7, 1, 1 }, /* not this code */
			{ 2, y, 0, 50, 50, 5, 5 },                /* another mapping, fewer samples */
			{ 0, y, 0, 99, 99, 0, 0 },                /* no mapping */
		};

		assert_int_equal(annot_hot_mapping(s, 5, &map, &hot), 0);
		assert_int_equal(map, 1);
		assert_int_equal(hot, x);
		assert_int_equal(annot_hot_mapping(s + 4, 1, &map, &hot), -ENOENT);
		annot_count_samples(a, s, 5, 1, start, pgoff, &c);
	}
	assert_int_equal(c.self[0], 90);
	assert_int_equal(c.total[0], 90);
	assert_int_equal(c.self_n[0], 9);
	assert_int_equal(c.self[1], 10);
	assert_int_equal(c.total_n[1], 1);
	assert_int_equal(c.missed, 7);
	assert_int_equal(c.hot, 1); /* fewer than five instructions with samples */
	for (i = 0; i < c.nrows; i++) {
		sum += c.rows[i].self;
		sum_n += c.rows_n[i].self;
		assert_int_equal(c.rows[i].line, c.rows_n[i].line);
	}
	assert_int_equal(sum, 100);
	assert_int_equal(sum_n, 10);
	annot_counts_free(&c);
	{
		/* Six instructions with 1 to 6: the fifth largest, 2, is the mark. */
		struct annot_sample s[6];

		for (i = 0; i < 6; i++)
			s[i] = (struct annot_sample){ 1, annot_insns(a)[i].addr, 0, (int64_t)i + 1,
						      (int64_t)i + 1, 1, 1 };
		annot_count_samples(a, s, 6, 1, start, pgoff, &c);
		assert_int_equal(c.hot, 2);
		annot_counts_free(&c);
	}
	annot_free(a);
	symfile_free(sf);
}

/* A sample in inlined code: a row under the caller's line that inlined it. */
static void test_inlined_rows(void **state)
{
	struct symfile *sf;
	struct annot *a;
	struct annot_row *rows = NULL;
	int64_t *self, *total;
	size_t n, i, nrows;
	int site = marker_line("INLINE SITE"), body = marker_line("INLINED BODY"), seen = 0;
	long k = -1;

	(void)state;
	if (!have_tools)
		skip();
	sf = symfile_open(bin, NULL);
	a = open_fn(sf, "hl_inline", NULL);
	n = annot_ninsns(a);
	self = xcalloc(n, sizeof(*self));
	total = xcalloc(n, sizeof(*total));
	for (i = 0; i < n; i++) {
		const struct annot_insn *in = &annot_insns(a)[i];

		if (in->nfr > 1 && annot_frames(a)[in->fr].line == body) {
			self[i] = total[i] = 1;
			k = (long)i;
		}
	}
	assert_true(k >= 0);
	nrows = annot_source_rows(a, self, total, &rows);
	for (i = 0; i < nrows; i++) {
		if (rows[i].depth != 1 || rows[i].line != body)
			continue;
		assert_string_equal(rows[i].func, "hl_mix");
		assert_true(rows[i].self > 0);
		/* it follows the inlining line (or another inlined row of it) */
		for (size_t j = i; j-- > 0;)
			if (rows[j].depth == 0) {
				assert_int_equal(rows[j].line, site);
				assert_int_equal(rows[j].self, 0);
				assert_true(rows[j].total >= rows[i].total);
				break;
			}
		seen++;
	}
	assert_int_equal(seen, 1);
	free(rows);
	free(self);
	free(total);
	annot_free(a);
	symfile_free(sf);
}

/* Source moved away: not found at the recorded path; found with --source-path (by suffix)
 * and with --trim-path; a source path holding a directory or nothing is no match. */
static void test_source_paths(void **state)
{
	char moved[600], file[700];
	const char *paths[2], *trims[1];
	struct annot_opts o = { 0 };
	struct symfile *sf;
	struct annot *a;

	(void)state;
	if (!have_tools)
		skip();
	snprintf(moved, sizeof(moved), "%s/moved", tmpdir);
	assert_int_equal(run("rm -rf '%s' && mv '%s' '%s'", moved, srcdir, moved), 0);
	snprintf(file, sizeof(file), "%s/hotloop.c", moved);
	sf = symfile_open(bin, NULL);
	a = open_fn(sf, "hl_loop", NULL);
	assert_null(annot_source_file(a, src));
	assert_null(annot_source_line(a, src, 1, &(size_t){ 0 }));
	annot_free(a);
	paths[0] = "/nonexistent";
	paths[1] = moved;
	o.source_paths = paths;
	o.nsource_paths = 2;
	a = open_fn(sf, "hl_loop", &o);
	assert_string_equal(annot_source_file(a, src), file);
	annot_free(a);
	trims[0] = srcdir;
	o.trim_paths = trims;
	o.ntrim_paths = 1;
	o.source_paths = paths + 1;
	o.nsource_paths = 1;
	a = open_fn(sf, "hl_loop", &o);
	assert_string_equal(annot_source_file(a, src), file);
	annot_free(a);
	symfile_free(sf);
	assert_int_equal(run("mv '%s' '%s'", moved, srcdir), 0);
}

/* Code bytes overwritten with 0xff (FF /7 is no instruction: Intel SDM opcode map, group
 * 5): every byte is a ".byte", nothing is lost or read past the function. */
static void test_corrupt_bytes(void **state)
{
	char bad[600];
	uint64_t s, e, off;
	struct symfile *sf;
	struct annot *a;
	int err = 0;
	char *out;

	(void)state;
	if (!have_tools)
		skip();
	sf = symfile_open(bin, NULL);
	assert_int_equal(annot_func_named(sf, "hl_loop", &s, &e), 0);
	/* The file offset of hl_loop: in this non-PIE/PIE build text is mapped at offset ==
	 * vaddr - (segment vaddr - segment offset); objdump -F prints it. */
	out = capture("objdump -F -d --disassemble=hl_loop '%s' | grep -o 'File Offset: 0x[0-9a-f]*' "
		      "| head -1 | cut -d' ' -f3", bin);
	assert_non_null(out);
	off = strtoull(out, NULL, 16);
	free(out);
	symfile_free(sf);
	snprintf(bad, sizeof(bad), "%s/corrupt", tmpdir);
	assert_int_equal(run("cp '%s' '%s' && head -c %llu /dev/zero | tr '\\000' '\\377' | "
			     "dd of='%s' bs=1 seek=%llu conv=notrunc 2>/dev/null", bin, bad,
			     (unsigned long long)(e - s), bad, (unsigned long long)off), 0);
	sf = symfile_open(bad, NULL);
	a = annot_open(sf, s, e, "hl_loop", NULL, &err);
	assert_non_null(a);
	assert_int_equal(annot_nbad(a), e - s);
	assert_int_equal(annot_ninsns(a), e - s);
	assert_string_equal(annot_text(a, 0), ".byte 0xff");
	annot_free(a);
	/* A range past the file's bytes, an empty one and a huge one fail cleanly. */
	assert_null(annot_open(sf, s, s, "x", NULL, &err));
	assert_int_equal(err, -EINVAL);
	assert_null(annot_open(sf, s, s + ANNOT_MAX_BYTES + 1, "x", NULL, &err));
	assert_int_equal(err, -EFBIG);
	assert_null(annot_open(sf, 0x7fff00000000ULL, 0x7fff00000010ULL, "x", NULL, &err));
	assert_int_equal(err, -ENOENT);
	symfile_free(sf);
}


/* Go: the frames annot_open finds in one pass over a function's tables
 * (gopcln_func_frames) equal symfile_lookup's at every instruction, for every function of
 * a Go binary (inlined code included), plain and stripped. */
static void test_go_frames_equal_lookup(void **state)
{
	const char *top = getenv("TOP_SRCDIR");
	const char *variants[] = { "plain", "stripped" };

	(void)state;
	if (!top || !have_tools)
		skip();
	for (size_t v = 0; v < GP_ARRAY_SIZE(variants); v++) {
		char gobin[700];
		struct symfile *sf;
		struct gopcln *g;
		size_t i, nfn, checked = 0, inl = 0;

		snprintf(gobin, sizeof(gobin), "%s/hotline-%s", tmpdir, variants[v]);
		if (run("'%s/tests/helpers/go-build.sh' 1.23 %s '%s/tests/workloads/go/hotline.go' "
			"'%s' >/dev/null 2>&1", top, variants[v], top, gobin) != 0)
			skip();
		sf = symfile_open(gobin, NULL);
		assert_non_null(sf);
		g = symfile_gopcln(sf);
		assert_non_null(g);
		nfn = gopcln_nfunc(g);
		for (i = 0; i < nfn; i++) {
			struct gopcln_func f;
			struct annot *a;

			if (gopcln_func_at(g, i, &f) || f.end <= f.entry)
				continue;
			a = annot_open(sf, f.entry, f.end, f.name, NULL, NULL);
			assert_non_null(a);
			for (size_t k = 0; k < annot_ninsns(a); k++) {
				const struct annot_insn *in = &annot_insns(a)[k];
				struct sym_frame fr[16];
				int n = symfile_lookup(sf, in->addr, fr, 16);

				assert_int_equal(n, in->nfr);
				for (int j = 0; j < n; j++) {
					const struct sym_frame *x = &annot_frames(a)[in->fr + (uint32_t)j];

					assert_string_equal(x->func, fr[j].func);
					assert_int_equal(x->line, fr[j].line);
					assert_true(x->file == fr[j].file ||
						    (x->file && fr[j].file && !strcmp(x->file, fr[j].file)));
				}
				inl += n > 1;
				checked++;
			}
			annot_free(a);
		}
		print_message("# %s: %zu instructions of %zu functions, %zu in inlined code\n",
			      variants[v], checked, nfn, inl);
		assert_true(checked > 10000 && inl > 100);
		symfile_free(sf);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insns_match_objdump),
		cmocka_unit_test(test_lines_match_addr2line),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_inlined_rows),
		cmocka_unit_test(test_source_paths),
		cmocka_unit_test(test_corrupt_bytes),
		cmocka_unit_test(test_go_frames_equal_lookup),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
