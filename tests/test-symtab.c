/* test-symtab.c: ELF/DWARF/Go symbolization, kallsyms and the per-process symbolizer,
 * checked against eu-addr2line, nm, readelf and the programs' own view of their addresses. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "helpers/unit.h"

#include "gotop/kallsyms.h"
#include "gotop/maps.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

static char tmpdir[256];
static const char *libc_path(void);
static char fx_inl[512], fx_prog[512], fx_clang[512];
static int have_cc, have_clang, have_eu;

/* ---------- helpers ---------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

struct fsym {
	uint64_t addr, size;
	char name[256];
};

/* Defined function symbols of a file per nm (-D: dynamic ones), sorted by address. */
static struct fsym *nm_funcs(const char *path, int dynamic, size_t *n)
{
	char *out = capture("nm --defined-only -S %s '%s' 2>/dev/null", dynamic ? "-D" : "", path);
	struct fsym *v = NULL;
	size_t cap = 0;
	char *save = NULL;

	*n = 0;
	if (out == NULL)
		return NULL;
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, s;
		char type, name[256];
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, name) != 4)
			continue;
		if (type != 't' && type != 'T' && type != 'W' && type != 'i')
			continue;
		xgrow((void **)&v, &cap, *n + 1, sizeof(*v));
		v[*n].addr = a;
		v[*n].size = s;
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
		(*n)++;
	}
	free(out);
	return v;
}

/* Whether name is one of the names nm gives for address addr. */
static int is_alias(const struct fsym *v, size_t n, uint64_t addr, const char *name)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i].addr != addr)
			continue;
		/* nm -D prints versions as name@@GLIBC_2.2.5 */
		size_t l = strcspn(v[i].name, "@");
		if (strlen(name) == l && strncmp(v[i].name, name, l) == 0)
			return 1;
	}
	return 0;
}

struct a2l_frame {
	char func[256];
	char file[512];
	int line;
};
struct a2l {
	uint64_t addr;
	int n;
	struct a2l_frame f[16];
};

/* "FUNC at FILE:LINE[:COL]" as eu-addr2line --pretty-print and binutils addr2line -p
 * write it; binutils may append " (discriminator N)" and writes "?? ??:0" or "??:?". */
static void parse_frame(const char *s, struct a2l_frame *f)
{
	const char *at = strstr(s, " at ");
	memset(f, 0, sizeof(*f));
	if (strncmp(s, "?? ", 3) == 0 || at == NULL) {
		snprintf(f->func, sizeof(f->func), "%s", strncmp(s, "??", 2) == 0 ? "??" : s);
		snprintf(f->file, sizeof(f->file), "??");
		return;
	}
	snprintf(f->func, sizeof(f->func), "%.*s", (int)(at - s), s);
	const char *loc = at + 4;
	const char *slash = strrchr(loc, '/');
	const char *colon = strchr(slash ? slash : loc, ':');
	if (colon == NULL) {
		snprintf(f->file, sizeof(f->file), "%s", loc);
		return;
	}
	snprintf(f->file, sizeof(f->file), "%.*s", (int)(colon - loc), loc);
	f->line = atoi(colon + 1);
}

/* The two independent oracles. They disagree now and then (each has bugs with
 * GCC's DWARF 5 inline trees), so an answer is right when it equals either. */
static const char *const a2l_tools[2] = {
	"eu-addr2line --pretty-print -a -f -i",
	"addr2line -p -a -f -i",
};

/* Runs oracle `tool` on n addresses of file; results in address order. */
static struct a2l *addr2line(int tool, const char *file, const uint64_t *addrs, size_t n)
{
	char inpath[600];
	struct a2l *r = xcalloc(n ? n : 1, sizeof(*r));
	char *save = NULL;
	long cur = -1;

	snprintf(inpath, sizeof(inpath), "%s/addrs.txt", tmpdir);
	FILE *f = fopen(inpath, "w");
	assert_non_null(f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%llx\n", (unsigned long long)addrs[i]);
	fclose(f);
	/* eu-addr2line exits 1 when some address has no line: not an error here */
	char *out = capture("%s -e '%s' < '%s'; true", a2l_tools[tool], file, inpath);
	assert_non_null(out);
	for (char *line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "0x", 2) == 0) {
			cur++;
			assert_true((size_t)cur < n);
			char *colon = strchr(line, ':');
			assert_non_null(colon);
			r[cur].addr = strtoull(line, NULL, 16);
			assert_int_equal(r[cur].addr, addrs[cur]);
			parse_frame(colon + 2, &r[cur].f[0]);
			r[cur].n = 1;
		} else if (strncmp(line, " (inlined by) ", 14) == 0 && cur >= 0) {
			if (r[cur].n < 16)
				parse_frame(line + 14, &r[cur].f[r[cur].n++]);
		}
	}
	assert_int_equal(cur + 1, (long)n);
	free(out);
	return r;
}

static int compile(const char *out, const char *src_name, const char *src, const char *cc,
		   const char *flags)
{
	char path[600];

	snprintf(path, sizeof(path), "%s/%s", tmpdir, src_name);
	write_file(path, src);
	return run("%s %s -o '%s' '%s' >/dev/null 2>&1", cc, flags, out, path) == 0;
}

/* ---------- fixtures ---------- */

static const char inl_src[] =
	"#include <stdio.h>\n"
	"#include <stdlib.h>\n"
	"static inline int leaf(int x)\n"
	"{\n"
	"\tint r = x;\n"
	"\tfor (int i = 0; i < x; i++)\n"
	"\t\tr = r * 31 + i;\n"
	"\treturn r;\n"
	"}\n"
	"static inline int mid(int x)\n"
	"{\n"
	"\treturn leaf(x) ^ leaf(x + 1);\n"
	"}\n"
	"__attribute__((noinline)) int outer(int x)\n"
	"{\n"
	"\treturn mid(x) + 1;\n"
	"}\n"
	"static int table[64];\n"
	"__attribute__((noinline)) int other(int n)\n"
	"{\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\ts += mid(table[i & 63]) * i;\n"
	"\treturn s;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tint v = argc > 1 ? atoi(argv[1]) : 5;\n"
	"\tprintf(\"%d %d\\n\", outer(v), other(v));\n"
	"\treturn 0;\n"
	"}\n";

/* Prints where its functions live, as it sees them, then waits for stdin to close. */
static const char prog_src[] =
	"#include <stdio.h>\n"
	"#include <unistd.h>\n"
	"__attribute__((noinline)) int fx_alpha(int x) { return x * 3 + 1; }\n"
	"__attribute__((noinline)) static int fx_beta(int x) { return fx_alpha(x) ^ 7; }\n"
	"__attribute__((noinline)) int fx_gamma(int x) { return fx_beta(x) + fx_alpha(x); }\n"
	"int main(void)\n"
	"{\n"
	"\tchar c;\n"
	"\tprintf(\"%p %p %p %p %p\\n\", (void *)fx_alpha, (void *)fx_beta, (void *)fx_gamma,\n"
	"\t       (void *)main, (void *)getppid);\n"
	"\tfflush(stdout);\n"
	"\twhile (read(0, &c, 1) > 0)\n"
	"\t\t;\n"
	"\treturn fx_gamma(c);\n"
	"}\n";

static int group_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gotop-test-symtab.XXXXXX");
	if (mkdtemp(tmpdir) == NULL)
		return -1;
	have_eu = run("eu-addr2line --version >/dev/null 2>&1") == 0 &&
		  run("nm --version >/dev/null 2>&1") == 0;
	snprintf(fx_inl, sizeof(fx_inl), "%s/inl", tmpdir);
	snprintf(fx_prog, sizeof(fx_prog), "%s/prog", tmpdir);
	snprintf(fx_clang, sizeof(fx_clang), "%s/inl-clang", tmpdir);
	have_cc = compile(fx_inl, "inl.c", inl_src, "cc", "-O2 -g") &&
		  compile(fx_prog, "prog.c", prog_src, "cc", "-O1 -g -fPIE -pie -fno-omit-frame-pointer");
	/* clang: DWARF 5 without .debug_aranges, a different inliner. */
	have_clang = compile(fx_clang, "inl.c", inl_src, "clang-14", "-O2 -g") ||
		     compile(fx_clang, "inl.c", inl_src, "clang", "-O2 -g");
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	if (tmpdir[0])
		run("rm -rf '%s'", tmpdir);
	return 0;
}

/* ---------- comparisons with eu-addr2line ---------- */

struct cmp_result {
	size_t addrs, inlined, deep, mismatches, tools_disagree, only_eu, only_binutils;
};

/* Symbols of the file under test, for names that are aliases of each other (set by
 * a test that needs it; the tools pick different aliases for assembly functions). */
static struct fsym *aliases;
static size_t naliases;

static int alias_pair(const char *x, const char *y)
{
	for (size_t i = 0; i < naliases; i++) {
		size_t l = strcspn(aliases[i].name, "@");
		if (strlen(x) != l || strncmp(aliases[i].name, x, l) != 0)
			continue;
		for (size_t j = 0; j < naliases; j++) {
			size_t m = strcspn(aliases[j].name, "@");
			if (aliases[j].addr == aliases[i].addr && strlen(y) == m &&
			    strncmp(aliases[j].name, y, m) == 0)
				return 1;
		}
	}
	return 0;
}

static int same_frame(const struct sym_frame *f, const struct a2l_frame *a)
{
	const char *func = f->func ? f->func : "??";
	const char *file = f->file ? f->file : "??";
	if (strcmp(func, a->func) != 0) {
		char theirs[256];
		snprintf(theirs, sizeof(theirs), "%.*s", (int)strcspn(a->func, "@"), a->func);
		if (strcmp(func, theirs) != 0 && !alias_pair(func, theirs))
			return 0;
	}
	if (strcmp(file, a->file) != 0)
		return 0;
	return f->line == a->line;
}

static int same_chain(const struct sym_frame *fr, int k, const struct a2l *w)
{
	if (strcmp(w->f[0].func, "??") == 0)
		return k == 0;
	if (k != w->n)
		return 0;
	for (int j = 0; j < k; j++)
		if (!same_frame(&fr[j], &w->f[j]))
			return 0;
	return 1;
}

static int same_a2l(const struct a2l *a, const struct a2l *b)
{
	if (a->n != b->n)
		return 0;
	for (int j = 0; j < a->n; j++)
		if (strcmp(a->f[j].func, b->f[j].func) || strcmp(a->f[j].file, b->f[j].file) ||
		    a->f[j].line != b->f[j].line)
			return 0;
	return 1;
}

/* Looks up every address in sf and compares the whole chain (names, files, lines)
 * with eu-addr2line and binutils addr2line: it must equal at least one of them. */
static void compare_chains(struct symfile *sf, const char *path, const uint64_t *addrs, size_t n,
			   struct cmp_result *res)
{
	struct a2l *eu = addr2line(0, path, addrs, n);
	struct a2l *bu = addr2line(1, path, addrs, n);

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < n; i++) {
		struct sym_frame fr[16];
		int k = symfile_lookup(sf, addrs[i], fr, 16);
		int ok_eu = same_chain(fr, k, &eu[i]), ok_bu = same_chain(fr, k, &bu[i]);

		res->addrs++;
		if (k > 1)
			res->inlined++;
		if (k > 2)
			res->deep++;
		if (!same_a2l(&eu[i], &bu[i]))
			res->tools_disagree++;
		if (ok_eu && !ok_bu)
			res->only_eu++;
		if (ok_bu && !ok_eu)
			res->only_binutils++;
		if (!ok_eu && !ok_bu) {
			if (res->mismatches < 10) {
				print_message("# mismatch at 0x%llx (%s): ours %d frames\n",
					      (unsigned long long)addrs[i], path, k);
				for (int j = 0; j < k; j++)
					print_message("#   ours     %s at %s:%d\n", fr[j].func,
						      fr[j].file ? fr[j].file : "??", fr[j].line);
				for (int j = 0; j < eu[i].n; j++)
					print_message("#   eu       %s at %s:%d\n", eu[i].f[j].func,
						      eu[i].f[j].file, eu[i].f[j].line);
				for (int j = 0; j < bu[i].n; j++)
					print_message("#   binutils %s at %s:%d\n", bu[i].f[j].func,
						      bu[i].f[j].file, bu[i].f[j].line);
			}
			res->mismatches++;
		}
	}
	free(eu);
	free(bu);
}

static void print_result(const char *what, const struct cmp_result *r)
{
	print_message("# %s: %zu addresses, %zu inlined (%zu with >= 3 frames), %zu mismatches; "
		      "the tools disagree on %zu, we side with eu-addr2line on %zu and with "
		      "binutils on %zu of those\n",
		      what, r->addrs, r->inlined, r->deep, r->mismatches, r->tools_disagree, r->only_eu,
		      r->only_binutils);
}

/* Function entries and offsets into each function (from nm), for a file. */
static uint64_t *sample_addrs(const char *path, size_t *n, size_t max)
{
	size_t nf = 0, cap = 0;
	struct fsym *fs = nm_funcs(path, 0, &nf);
	uint64_t *a = NULL;

	*n = 0;
	for (size_t i = 0; i < nf && *n < max; i++) {
		uint64_t offs[5] = { 0, 1, fs[i].size / 3, fs[i].size / 2, fs[i].size - 1 };
		for (int k = 0; k < 5; k++) {
			if (k > 0 && (offs[k] == 0 || offs[k] >= fs[i].size))
				continue;
			xgrow((void **)&a, &cap, *n + 1, sizeof(*a));
			a[(*n)++] = fs[i].addr + offs[k];
		}
	}
	free(fs);
	return a;
}

static void test_inline_chain(void **state)
{
	(void)state;
	if (!have_cc || !have_eu)
		skip();
	int err = 1;
	struct symfile *sf = symfile_open(fx_inl, &err);
	assert_non_null(sf);
	assert_int_equal(err, 0);
	assert_non_null(symfile_dwarf(sf));

	/* every byte of outer() and other() */
	size_t nf = 0;
	struct fsym *fs = nm_funcs(fx_inl, 0, &nf);
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(fs[i].name, "outer") != 0 && strcmp(fs[i].name, "other") != 0)
			continue;
		for (uint64_t o = 0; o < fs[i].size; o++) {
			xgrow((void **)&addrs, &cap, n + 1, sizeof(*addrs));
			addrs[n++] = fs[i].addr + o;
		}
	}
	assert_true(n > 20);
	struct cmp_result r;
	compare_chains(sf, fx_inl, addrs, n, &r);
	print_result("gcc -O2 inline chains", &r);
	assert_int_equal(r.mismatches, 0);
	assert_true(r.deep > 0); /* leaf <- mid <- outer was found */

	/* the chain itself, at outer's entry: leaf, mid, outer */
	struct sym_frame fr[8];
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(fs[i].name, "outer") != 0)
			continue;
		int k = symfile_lookup(sf, fs[i].addr, fr, 8);
		if (k == 3) {
			assert_string_equal(fr[0].func, "leaf");
			assert_string_equal(fr[1].func, "mid");
			assert_string_equal(fr[2].func, "outer");
			assert_int_equal(fr[2].start_line, 14);
			/* max smaller than the chain: innermost, then the real function */
			k = symfile_lookup(sf, fs[i].addr, fr, 2);
			assert_int_equal(k, 2);
			assert_string_equal(fr[0].func, "leaf");
			assert_string_equal(fr[1].func, "outer");
		}
	}
	free(addrs);
	free(fs);
	symfile_free(sf);
}

static void test_inline_chain_clang(void **state)
{
	(void)state;
	if (!have_clang || !have_eu)
		skip();
	struct symfile *sf = symfile_open(fx_clang, NULL);
	assert_non_null(sf);
	size_t n = 0;
	uint64_t *addrs = sample_addrs(fx_clang, &n, 5000);
	size_t nf = 0;
	struct fsym *fs = nm_funcs(fx_clang, 0, &nf);
	for (size_t i = 0; i < nf; i++) {
		if (strcmp(fs[i].name, "other") != 0)
			continue;
		for (uint64_t o = 0; o < fs[i].size; o++) {
			addrs = xrealloc(addrs, (n + 1) * sizeof(*addrs));
			addrs[n++] = fs[i].addr + o;
		}
	}
	free(fs);
	struct cmp_result r;
	compare_chains(sf, fx_clang, addrs, n, &r);
	print_result("clang -O2 (DWARF 5, no .debug_aranges)", &r);
	assert_int_equal(r.mismatches, 0);
	assert_true(r.inlined > 0);
	free(addrs);
	symfile_free(sf);
}

/* Separate debug info through .gnu_debuglink (objcopy --only-keep-debug, then strip),
 * and DWARF in SHF_COMPRESSED zlib sections: both answer as the original file does. */
static void test_debuglink_compressed(void **state)
{
	(void)state;
	char dir[600], stripped[700], debug[700], zdebug[700];
	if (!have_cc || run("objcopy --version >/dev/null 2>&1") != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/dl", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/inl", dir);
	snprintf(debug, sizeof(debug), "%s/inl.debug", dir);
	snprintf(zdebug, sizeof(zdebug), "%s/inl-z", tmpdir);
	assert_int_equal(run("mkdir -p '%s' && objcopy --only-keep-debug '%s' '%s' && "
			     "objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s' && "
			     "objcopy --compress-debug-sections=zlib-gabi '%s' '%s'",
			     dir, fx_inl, debug, debug, fx_inl, stripped, fx_inl, zdebug),
			 0);
	/* the test means something only if the copies really are stripped / compressed */
	assert_int_equal(run("readelf -SW '%s' | grep -q debug_info", stripped), 1);
	assert_int_equal(run("readelf -SW '%s' | grep -q symtab", stripped), 1);
	assert_int_equal(run("readelf -SW '%s' | grep debug_info | grep -q ' C '", zdebug), 0);

	struct symfile *orig = symfile_open(fx_inl, NULL);
	struct symfile *st = symfile_open(stripped, NULL);
	struct symfile *z = symfile_open(zdebug, NULL);
	assert_non_null(orig);
	assert_non_null(st);
	assert_non_null(z);
	assert_non_null(symfile_dwarf(st));
	assert_non_null(symfile_dwarf(z));
	size_t nf = 0, checked = 0;
	struct fsym *fs = nm_funcs(fx_inl, 0, &nf);
	for (size_t i = 0; i < nf; i++) {
		for (uint64_t o = 0; o < fs[i].size; o++) {
			struct sym_frame a[16], b[16], c[16];
			int ka = symfile_lookup(orig, fs[i].addr + o, a, 16);
			int kb = symfile_lookup(st, fs[i].addr + o, b, 16);
			int kc = symfile_lookup(z, fs[i].addr + o, c, 16);
			assert_true(ka > 0);
			assert_int_equal(ka, kb);
			assert_int_equal(ka, kc);
			for (int j = 0; j < ka; j++) {
				assert_string_equal(a[j].func, b[j].func);
				assert_string_equal(a[j].func, c[j].func);
				assert_int_equal(a[j].line, b[j].line);
				assert_int_equal(a[j].line, c[j].line);
				assert_string_equal(a[j].file ? a[j].file : "??", b[j].file ? b[j].file : "??");
				assert_string_equal(a[j].file ? a[j].file : "??", c[j].file ? c[j].file : "??");
			}
			checked++;
		}
	}
	/* the stripped file's static functions come from the debug file's .symtab */
	assert_int_equal(symfile_nsymbols(st), symfile_nsymbols(orig));

	/* Without a build id the debuglink CRC decides: the right file is taken, a
	 * changed one is refused. */
	char nb[700], nbs[700], nbd[700], src[700];
	snprintf(nb, sizeof(nb), "%s/inl-nobuildid", tmpdir);
	snprintf(nbs, sizeof(nbs), "%s/inl-nb", dir);
	snprintf(nbd, sizeof(nbd), "%s/inl-nb.debug", dir);
	snprintf(src, sizeof(src), "%s/inl.c", tmpdir);
	assert_int_equal(run("cc -O2 -g -Wl,--build-id=none -o '%s' '%s' && "
			     "objcopy --only-keep-debug '%s' '%s' && "
			     "objcopy --strip-all --add-gnu-debuglink='%s' '%s' '%s'",
			     nb, src, nb, nbd, nbd, nb, nbs),
			 0);
	struct symfile *x = symfile_open(nbs, NULL);
	assert_non_null(x);
	assert_null(symfile_build_id(x));
	assert_non_null(symfile_dwarf(x));
	symfile_free(x);
	assert_int_equal(run("printf x >> '%s'", nbd), 0);
	x = symfile_open(nbs, NULL);
	assert_non_null(x);
	assert_null(symfile_dwarf(x));
	symfile_free(x);
	print_message("# debuglink and zlib DWARF: %zu addresses agree with the original\n", checked);
	assert_true(checked > 100);
	free(fs);
	symfile_free(orig);
	symfile_free(st);
	symfile_free(z);
}

/* This very test program: several hundred functions of libgotop built -O2 -g. */
static void test_dwarf_self(void **state)
{
	(void)state;
	if (!have_eu)
		skip();
	char exe[4096];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(l > 0);
	exe[l] = '\0';
	struct symfile *sf = symfile_open(exe, NULL);
	assert_non_null(sf);
	if (symfile_dwarf(sf) == NULL) {
		symfile_free(sf);
		skip();
	}
	size_t n = 0;
	uint64_t *addrs = sample_addrs(exe, &n, 20000);
	assert_true(n > 300);
	struct cmp_result r;
	compare_chains(sf, exe, addrs, n, &r);
	print_result(exe, &r);
	assert_int_equal(r.mismatches, 0);

	/* the cache (grown and evicting by now) answers as an uncached lookup does */
	struct symfile *nc = symfile_open(exe, NULL);
	assert_non_null(nc);
	symfile_set_cache(nc, 0);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < n; i++) {
			struct sym_frame a[16], b[16];
			int ka = symfile_lookup(sf, addrs[i], a, 16);
			int kb = symfile_lookup(nc, addrs[i], b, 16);
			assert_int_equal(ka, kb);
			for (int j = 0; j < ka; j++) {
				assert_string_equal(a[j].func, b[j].func);
				assert_int_equal(a[j].line, b[j].line);
			}
		}
	}
	struct symfile_stats st;
	symfile_get_stats(sf, &st);
	assert_true(st.cache_hits > 0);
	symfile_get_stats(nc, &st);
	assert_int_equal(st.cache_hits, 0);
	symfile_free(nc);
	free(addrs);
	symfile_free(sf);
}

/* The C workload of the integration tests, when make check has built it. */
static void test_dwarf_cchains(void **state)
{
	(void)state;
	const char *bd = getenv("TOP_BUILDDIR");
	char path[4096];
	if (!have_eu || bd == NULL)
		skip();
	snprintf(path, sizeof(path), "%s/tests/workloads/cchains", bd);
	if (access(path, X_OK) != 0)
		skip();
	struct symfile *sf = symfile_open(path, NULL);
	assert_non_null(sf);
	size_t n = 0;
	uint64_t *addrs = sample_addrs(path, &n, 20000);
	struct cmp_result r;
	compare_chains(sf, path, addrs, n, &r);
	print_result(path, &r);
	assert_int_equal(r.mismatches, 0);
	free(addrs);
	symfile_free(sf);
}

/* libc through its separate debug file (/usr/lib/debug/.build-id/, Debian's
 * libc6-dbg), when installed: a large DWARF 5 file found by build id. */
static void test_dwarf_libc_debugfile(void **state)
{
	(void)state;
	const char *p = libc_path();
	char dbg[600];
	if (!have_eu || p[0] == '\0')
		skip();
	struct symfile *sf = symfile_open(p, NULL);
	assert_non_null(sf);
	const char *bid = symfile_build_id(sf);
	assert_non_null(bid);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid, bid + 2);
	if (access(dbg, R_OK) != 0) {
		print_message("# no %s (libc6-dbg not installed)\n", dbg);
		symfile_free(sf);
		skip();
	}
	assert_non_null(symfile_dwarf(sf));
	size_t nf = 0, n = 0, cap = 0;
	struct fsym *fs = nm_funcs(p, 1, &nf);
	uint64_t *addrs = NULL;
	for (size_t i = 0; i < nf; i += 3) {
		uint64_t offs[3] = { 0, fs[i].size / 2, fs[i].size > 0 ? fs[i].size - 1 : 0 };
		for (int k = 0; k < 3; k++) {
			if (k > 0 && offs[k] == 0)
				continue;
			xgrow((void **)&addrs, &cap, n + 1, sizeof(*addrs));
			addrs[n++] = fs[i].addr + offs[k];
		}
	}
	/* assembly functions have line info but no DWARF function: the name is a symbol
	 * alias there, which each tool picks in its own way */
	size_t nd = 0;
	struct fsym *ds = nm_funcs(dbg, 0, &nd);
	aliases = xmalloc((nf + nd + 1) * sizeof(*aliases));
	memcpy(aliases, fs, nf * sizeof(*fs));
	if (nd)
		memcpy(aliases + nf, ds, nd * sizeof(*ds));
	naliases = nf + nd;
	free(ds);
	struct cmp_result r;
	compare_chains(sf, p, addrs, n, &r);
	free(aliases);
	aliases = NULL;
	naliases = 0;
	print_result("libc.so.6 with its .build-id debug file", &r);
	assert_int_equal(r.mismatches, 0);
	assert_true(r.inlined > 0);
	free(addrs);
	free(fs);
	symfile_free(sf);
}

/* Symbol tables alone (DWARF off): names equal nm's for entries and interiors. */
static void check_symtab_names(const char *path, int dynamic, size_t min_checked)
{
	struct symfile *sf = symfile_open(path, NULL);
	size_t nf = 0, checked = 0, bad = 0;
	struct fsym *fs;

	if (sf == NULL)
		skip();
	symfile_set_dwarf(sf, 0);
	fs = nm_funcs(path, dynamic, &nf);
	for (size_t i = 0; i < nf; i++) {
		if (fs[i].size == 0)
			continue;
		uint64_t offs[3] = { 0, fs[i].size / 2, fs[i].size - 1 };
		for (int k = 0; k < 3; k++) {
			struct sym_frame fr[4];
			uint64_t start = 0;
			int n = symfile_lookup(sf, fs[i].addr + offs[k], fr, 4);
			const char *sym = symfile_symbol(sf, fs[i].addr + offs[k], &start, NULL);
			checked++;
			/* A nested or overlapping symbol may own the interior: then the name must
			 * still be nm's name for the address our symbol starts at. */
			if (n != 1 || sym == NULL || strcmp(fr[0].func, sym) != 0 ||
			    !is_alias(fs, nf, start, sym) || start > fs[i].addr + offs[k] ||
			    (k == 0 && start != fs[i].addr)) {
				if (bad < 5)
					print_message("# %s: 0x%llx: ours %s, nm %s\n", path,
						      (unsigned long long)(fs[i].addr + offs[k]),
						      n > 0 ? fr[0].func : "(none)", fs[i].name);
				bad++;
			}
		}
	}
	print_message("# %s: %zu symtab lookups (%zu symbols), %zu wrong\n", path, checked,
		      symfile_nsymbols(sf), bad);
	assert_int_equal(bad, 0);
	assert_true(checked >= min_checked);
	free(fs);
	symfile_free(sf);
}

static void test_symtab_self(void **state)
{
	(void)state;
	char exe[4096];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(l > 0);
	exe[l] = '\0';
	check_symtab_names(exe, 0, 300);
}

static const char *libc_path(void)
{
	static char path[4096];
	struct maps *m = maps_load(0);
	const struct maps_entry *e = maps_find(m, (uint64_t)(uintptr_t)&getppid);
	path[0] = '\0';
	if (e)
		snprintf(path, sizeof(path), "%s", e->path);
	maps_free(m);
	return path;
}

static void test_symtab_libc(void **state)
{
	(void)state;
	const char *p = libc_path();
	if (p[0] == '\0')
		skip();
	check_symtab_names(p, 1, 1000);
	/* with DWARF allowed the answer is the same when there is no debug info */
	struct symfile *sf = symfile_open(p, NULL);
	assert_non_null(sf);
	assert_non_null(symfile_build_id(sf));
	char *out = capture("eu-readelf -n '%s' | awk '/Build ID:/ {print $3}'", p);
	if (out) {
		out[strcspn(out, "\n")] = '\0';
		assert_string_equal(symfile_build_id(sf), out);
		free(out);
	}
	assert_non_null(symfile_cfi(sf)); /* .eh_frame */
	assert_int_equal(symfile_machine(sf), EM_X86_64);
	assert_null(symfile_gopcln(sf));
	assert_null(symfile_go_version(sf));
	symfile_free(sf);
}

/* ---------- load bias, the symbolizer and live processes ---------- */

struct child {
	pid_t pid;
	int in_fd;
	uint64_t addr[5];
};

static int start_argv(char *const argv[], struct child *c)
{
	int in[2], out[2];
	char line[512];

	if (pipe(in) || pipe(out))
		return -1;
	c->pid = fork();
	if (c->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	c->in_fd = in[1];
	FILE *f = fdopen(out[0], "r");
	if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	unsigned long long a[5];
	if (sscanf(line, "%llx %llx %llx %llx %llx", &a[0], &a[1], &a[2], &a[3], &a[4]) != 5)
		return -1;
	for (int i = 0; i < 5; i++)
		c->addr[i] = a[i];
	return 0;
}

static int start_prog(const char *path, struct child *c)
{
	char *const argv[] = { (char *)path, NULL };
	return start_argv(argv, c);
}

static void stop_prog(struct child *c)
{
	int st;
	close(c->in_fd);
	waitpid(c->pid, &st, 0);
}

static const char *const prog_names[4] = { "fx_alpha", "fx_beta", "fx_gamma", "main" };

static void test_load_bias(void **state)
{
	(void)state;
	if (!have_cc)
		skip();
	struct child c;
	assert_int_equal(start_prog(fx_prog, &c), 0);

	/* nm + bias: the bias is where the pgoff-0 mapping of the PIE starts (its first
	 * PT_LOAD has p_vaddr 0, which readelf confirms) */
	struct maps *m = maps_load(c.pid);
	assert_non_null(m);
	uint64_t base = 0;
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_entry *e = maps_at(m, i);
		if (strcmp(e->path, fx_prog) == 0 && e->pgoff == 0) {
			base = e->start;
			break;
		}
	}
	assert_true(base != 0);
	char *first = capture("readelf -lW '%s' | awk '$1 == \"LOAD\" {print $3; exit}'", fx_prog);
	assert_non_null(first);
	uint64_t load0 = strtoull(first, NULL, 16);
	free(first);
	size_t nf = 0;
	struct fsym *fs = nm_funcs(fx_prog, 0, &nf);
	for (int k = 0; k < 4; k++) {
		int seen = 0;
		for (size_t i = 0; i < nf; i++)
			if (strcmp(fs[i].name, prog_names[k]) == 0) {
				assert_int_equal(fs[i].addr - load0 + base, c.addr[k]);
				seen = 1;
			}
		assert_true(seen);
	}
	free(fs);

	struct symbolizer *s = symbolizer_new(c.pid);
	struct sym_frame fr[8];
	const struct sym_module *mod;
	for (int k = 0; k < 4; k++) {
		int n = symbolizer_lookup(s, c.addr[k], 0, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, prog_names[k]);
		assert_non_null(fr[0].file);
		assert_true(fr[0].line > 0);
		assert_non_null(mod);
		assert_string_equal(mod->path, fx_prog);
		assert_true(c.addr[k] >= mod->start && c.addr[k] < mod->limit);
		/* a return address just past the entry belongs to the same function */
		n = symbolizer_lookup(s, c.addr[k] + 1, 1, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, prog_names[k]);
	}
	/* libc, through its own load bias: getppid per nm -D at the runtime address */
	int n = symbolizer_lookup(s, c.addr[4], 0, &mod, fr, 8);
	assert_int_equal(n, 1);
	assert_non_null(strstr(mod->path, "libc"));
	{
		size_t nl = 0;
		struct fsym *ls = nm_funcs(mod->path, 1, &nl);
		uint64_t lbase = 0;
		for (size_t i = 0; i < maps_count(m); i++) {
			const struct maps_entry *e = maps_at(m, i);
			if (strcmp(e->path, mod->path) == 0 && e->pgoff == 0) {
				lbase = e->start;
				break;
			}
		}
		assert_true(is_alias(ls, nl, c.addr[4] - lbase, "getppid"));
		/* the symbolizer's vaddr is nm's: its symbol starts exactly there */
		uint64_t sstart = 0;
		assert_non_null(symfile_symbol(mod->sf, c.addr[4] - lbase, &sstart, NULL));
		assert_int_equal(sstart, c.addr[4] - lbase);
		/* and the frames are what the file gives at that vaddr */
		struct sym_frame ff[8];
		int k = symfile_lookup(mod->sf, c.addr[4] - lbase, ff, 8);
		assert_int_equal(k, n);
		assert_string_equal(ff[0].func, fr[0].func);
		free(ls);
	}
	/* the module of a library keeps its build id */
	assert_non_null(mod->build_id);

	/* in no mapping */
	assert_int_equal(symbolizer_lookup(s, 0x10, 0, &mod, fr, 8), -ENOENT);
	assert_null(mod);

	/* the main file, and its build id per eu-readelf */
	struct symfile *mf = symbolizer_main_file(s);
	assert_non_null(mf);
	char *bid = capture("eu-readelf -n '%s' | awk '/Build ID:/ {print $3}'", fx_prog);
	if (bid && bid[0]) {
		bid[strcspn(bid, "\n")] = '\0';
		assert_string_equal(symfile_build_id(mf), bid);
	}
	free(bid);
	maps_free(m);

	/* After the target exits the modules stay valid and answers do not change: first
	 * as a zombie (its maps read empty), then reaped (no /proc entry). */
	close(c.in_fd);
	char statp[64], st[512];
	snprintf(statp, sizeof(statp), "/proc/%d/stat", (int)c.pid);
	for (int tries = 0; tries < 500; tries++) {
		FILE *sfp = fopen(statp, "r");
		assert_non_null(sfp);
		size_t got = fread(st, 1, sizeof(st) - 1, sfp);
		fclose(sfp);
		st[got] = '\0';
		char *rp = strrchr(st, ')');
		if (rp && rp[1] == ' ' && rp[2] == 'Z')
			break;
		usleep(10000);
	}
	for (int round = 0; round < 2; round++) {
		symbolizer_invalidate_maps(s);
		assert_int_equal(symbolizer_lookup(s, 0x20, 0, &mod, fr, 8), -ENOENT);
		n = symbolizer_lookup(s, c.addr[2], 0, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, "fx_gamma");
		if (round == 0) {
			int wst;
			waitpid(c.pid, &wst, 0);
		}
	}
	symbolizer_free(s);
}

/* Whether /proc/PID/map_files/ can be opened here (CAP_SYS_ADMIN). */
static int can_open_map_files(void)
{
	struct maps *m = maps_load(0);
	const struct maps_entry *e = maps_find(m, (uint64_t)(uintptr_t)&can_open_map_files);
	char path[128];
	int fd = -1;
	if (e) {
		snprintf(path, sizeof(path), "/proc/self/map_files/%llx-%llx",
			 (unsigned long long)e->start, (unsigned long long)e->end);
		fd = open(path, O_RDONLY);
	}
	maps_free(m);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

/* The binary is deleted and another file takes its path while it runs. */
static void test_deleted_binary(void **state)
{
	(void)state;
	if (!have_cc)
		skip();
	if (!can_open_map_files()) {
		print_message("# /proc/PID/map_files needs CAP_SYS_ADMIN\n");
		skip();
	}
	char copy[600];
	snprintf(copy, sizeof(copy), "%s/prog-deleted", tmpdir);
	assert_int_equal(run("cp '%s' '%s'", fx_prog, copy), 0);
	struct child c;
	assert_int_equal(start_prog(copy, &c), 0);
	assert_int_equal(unlink(copy), 0);
	assert_int_equal(run("cp '%s' '%s'", fx_inl, copy), 0);

	struct maps *m = maps_load(c.pid);
	int deleted = 0;
	for (size_t i = 0; i < maps_count(m); i++)
		if (strcmp(maps_at(m, i)->path, copy) == 0 && maps_at(m, i)->deleted)
			deleted = 1;
	assert_true(deleted);
	maps_free(m);

	struct symbolizer *s = symbolizer_new(c.pid);
	struct sym_frame fr[8];
	const struct sym_module *mod;
	for (int k = 0; k < 4; k++) {
		int n = symbolizer_lookup(s, c.addr[k], 0, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, prog_names[k]);
	}
	symbolizer_free(s);

	/* Without /proc/PID/map_files (no CAP_SYS_ADMIN) the file now at that path is
	 * another one, whose names would be wrong; the executable itself is still open
	 * through /proc/PID/exe (same inode), so the names are the right ones. */
	s = symbolizer_new(c.pid);
	symbolizer_set_flags(s, SYMBOLIZER_NO_MAP_FILES);
	for (int k = 0; k < 4; k++) {
		int n = symbolizer_lookup(s, c.addr[k], 0, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, prog_names[k]);
	}
	symbolizer_free(s);
	stop_prog(&c);
}

/* The process execs: symbolizer_main_file first resolves the forked child (this test
 * program), then, once symbolizer_main_changed has seen /proc/PID/exe change, the
 * program it exec'd, whose symbols lookups then find (its mappings are reloaded). */
static void test_main_changed(void **state)
{
	(void)state;
	if (!have_cc)
		skip();
	int go[2], in[2], out[2];
	char self[4096], link[64], line[512], c = 'g';
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf;
		close(go[1]);
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (read(go[0], &buf, 1) != 1)
			_exit(127);
		execl(fx_prog, fx_prog, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	close(in[0]);
	close(out[1]);

	/* The forked child's executable as the kernel names it: this program, or under
	 * valgrind the tool's own executable (valgrind answers only /proc/self/exe itself). */
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	ssize_t n = readlink(link, self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	struct symbolizer *s = symbolizer_new(pid);
	struct symfile *before = symbolizer_main_file(s);
	assert_non_null(before);
	assert_string_equal(symfile_path(before), self);
	assert_int_equal(symbolizer_main_changed(s), 0);

	assert_int_equal(write(go[1], &c, 1), 1);
	close(go[1]);
	FILE *f = fdopen(out[0], "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f)); /* fx_prog runs */
	fclose(f);
	unsigned long long a[5];
	assert_int_equal(sscanf(line, "%llx %llx %llx %llx %llx", &a[0], &a[1], &a[2], &a[3], &a[4]), 5);

	assert_int_equal(symbolizer_main_changed(s), 1);
	struct symfile *after = symbolizer_main_file(s);
	assert_non_null(after);
	assert_string_equal(symfile_path(after), fx_prog);
	assert_int_equal(symbolizer_main_changed(s), 0);
	assert_string_equal(symfile_path(before), self); /* still valid */
	struct sym_frame fr[8];
	const struct sym_module *mod;
	for (int k = 0; k < 4; k++) {
		assert_int_equal(symbolizer_lookup(s, a[k], 0, &mod, fr, 8), 1);
		assert_string_equal(fr[0].func, prog_names[k]);
	}
	symbolizer_free(s);
	close(in[1]);
	int st;
	waitpid(pid, &st, 0);
}

/* A container's file: the program runs from a tmpfs mounted in its own mount
 * namespace, so its path does not exist outside; /proc/PID/root reaches it. */
static void test_mount_namespace(void **state)
{
	(void)state;
	char dir[600], script[4096];
	if (!have_cc || run("unshare --version >/dev/null 2>&1") != 0)
		skip();
	snprintf(dir, sizeof(dir), "%s/ns", tmpdir);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	snprintf(script, sizeof(script),
		 "mount -t tmpfs none '%s' && cp '%s' '%s/prog' && exec '%s/prog'", dir, fx_prog, dir, dir);
	char *const argv[] = { "/usr/bin/unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
			       script, NULL };
	struct child c;
	if (access(argv[0], X_OK) != 0 || start_argv(argv, &c) != 0) {
		print_message("# unshare --mount is not permitted here\n");
		skip();
	}
	char inside[700];
	snprintf(inside, sizeof(inside), "%s/prog", dir);
	assert_int_equal(access(inside, F_OK), -1); /* not visible from here */

	struct symbolizer *s = symbolizer_new(c.pid);
	symbolizer_set_flags(s, SYMBOLIZER_NO_MAP_FILES);
	struct sym_frame fr[8];
	const struct sym_module *mod;
	for (int k = 0; k < 4; k++) {
		int n = symbolizer_lookup(s, c.addr[k], 0, &mod, fr, 8);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].func, prog_names[k]);
		assert_string_equal(mod->path, inside);
	}
	symbolizer_free(s);
	stop_prog(&c);
}

/* [vdso]: read from the target; nm on a dump of our own (the same kernel image). */
static void test_vdso(void **state)
{
	(void)state;
	if (!have_cc)
		skip();
	uint64_t own = getauxval(AT_SYSINFO_EHDR);
	struct maps *mine = maps_load(0);
	const struct maps_entry *ve = maps_find(mine, own);
	if (own == 0 || ve == NULL || ve->kind != MAPS_KIND_VDSO) {
		maps_free(mine);
		skip();
	}
	char dump[600];
	snprintf(dump, sizeof(dump), "%s/vdso.so", tmpdir);
	FILE *f = fopen(dump, "wb");
	assert_non_null(f);
	fwrite((const void *)(uintptr_t)ve->start, 1, ve->end - ve->start, f);
	fclose(f);
	maps_free(mine);
	size_t nv = 0;
	struct fsym *vs = nm_funcs(dump, 1, &nv);
	char *first = capture("readelf -lW '%s' | awk '$1 == \"LOAD\" {print $3; exit}'", dump);
	assert_non_null(first);
	uint64_t load0 = strtoull(first, NULL, 16);
	free(first);
	assert_true(nv > 0);

	struct child c;
	assert_int_equal(start_prog(fx_prog, &c), 0);
	struct maps *m = maps_load(c.pid);
	uint64_t vstart = 0;
	for (size_t i = 0; i < maps_count(m); i++)
		if (maps_at(m, i)->kind == MAPS_KIND_VDSO)
			vstart = maps_at(m, i)->start;
	maps_free(m);
	assert_true(vstart != 0);
	struct symbolizer *s = symbolizer_new(c.pid);
	size_t checked = 0;
	for (size_t i = 0; i < nv; i++) {
		struct sym_frame fr[4];
		const struct sym_module *mod;
		uint64_t a = vstart + vs[i].addr - load0 + vs[i].size / 2;
		int n = symbolizer_lookup(s, a, 0, &mod, fr, 4);
		assert_int_equal(n, 1);
		assert_string_equal(mod->path, "[vdso]");
		assert_true(is_alias(vs, nv, vs[i].addr, fr[0].func));
		checked++;
	}
	print_message("# [vdso]: %zu symbols resolved in the target\n", checked);
	symbolizer_free(s);
	stop_prog(&c);
	free(vs);
}

/* ---------- Go ---------- */

static const char go_src[] =
	"package main\n"
	"\n"
	"import (\n"
	"\t\"fmt\"\n"
	"\t\"os\"\n"
	")\n"
	"\n"
	"func leaf(x int) int {\n"
	"\treturn x*31 + 7\n"
	"}\n"
	"\n"
	"func mid(x int) int {\n"
	"\treturn leaf(x) ^ leaf(x+1)\n"
	"}\n"
	"\n"
	"//go:noinline\n"
	"func work(n int) int {\n"
	"\ts := 0\n"
	"\tfor i := 0; i < n; i++ {\n"
	"\t\ts += mid(i)\n"
	"\t}\n"
	"\treturn s\n"
	"}\n"
	"\n"
	"func main() {\n"
	"\tfmt.Println(work(len(os.Args) * 1000))\n"
	"}\n";

/* Go binaries: names and lines from .gopclntab agree with Go's own DWARF as
 * eu-addr2line reads it; stripped (-s -w) binaries still resolve by .gopclntab. */
static void test_go_binary(void **state)
{
	(void)state;
	const char *src = getenv("TOP_SRCDIR");
	char *goroot = NULL;
	if (!have_eu)
		skip();
	if (src)
		goroot = capture("sh '%s/tests/helpers/go-toolchain.sh' 1.19 2>/dev/null", src);
	if (goroot == NULL || goroot[0] == '\0') {
		free(goroot);
		goroot = access("/usr/lib/go-1.19/bin/go", X_OK) == 0 ? xstrdup("/usr/lib/go-1.19") : NULL;
	}
	if (goroot == NULL)
		skip();
	goroot[strcspn(goroot, "\n")] = '\0';
	char dir[600], bin[700], stripped[700], srcpath[700];
	snprintf(dir, sizeof(dir), "%s/gosrc", tmpdir);
	snprintf(bin, sizeof(bin), "%s/gobin", tmpdir);
	snprintf(stripped, sizeof(stripped), "%s/gobin-stripped", tmpdir);
	snprintf(srcpath, sizeof(srcpath), "%s/main.go", dir);
	assert_int_equal(run("mkdir -p '%s'", dir), 0);
	write_file(srcpath, go_src);
	int r = run("cd '%s' && GOROOT='%s' GOTOOLCHAIN=local GO111MODULE=off GOFLAGS= GOCACHE='%s/gocache' "
		    "'%s/bin/go' build -o '%s' main.go >/dev/null 2>&1 && "
		    "GOROOT='%s' GOTOOLCHAIN=local GO111MODULE=off GOFLAGS= GOCACHE='%s/gocache' "
		    "'%s/bin/go' build -ldflags='-s -w' -o '%s' main.go >/dev/null 2>&1",
		    dir, goroot, tmpdir, goroot, bin, goroot, tmpdir, goroot, stripped);
	free(goroot);
	if (r != 0)
		skip();

	struct symfile *sf = symfile_open(bin, NULL);
	assert_non_null(sf);
	if (symfile_gopcln(sf) == NULL) {
		print_message("# the .gopclntab reader does not open this binary yet\n");
		symfile_free(sf);
		fail();
	}
	assert_non_null(symfile_go_version(sf));
	assert_true(strncmp(symfile_go_version(sf), "go1.19", 6) == 0);
	assert_non_null(symfile_build_id(sf));

	/* main.* and runtime functions: entries and interiors */
	size_t nf = 0, n = 0, cap = 0;
	struct fsym *fs = nm_funcs(bin, 0, &nf);
	uint64_t *addrs = NULL;
	for (size_t i = 0; i < nf; i++) {
		if (strncmp(fs[i].name, "main.", 5) != 0 && strncmp(fs[i].name, "runtime.mallocgc", 16) != 0 &&
		    strncmp(fs[i].name, "fmt.", 4) != 0)
			continue;
		for (uint64_t o = 0; o < fs[i].size; o += (fs[i].size > 64 ? 7 : 1)) {
			xgrow((void **)&addrs, &cap, n + 1, sizeof(*addrs));
			addrs[n++] = fs[i].addr + o;
		}
	}
	assert_true(n > 100);

	/* Oracles: Go's DWARF read through libdw (a decoder independent of the .gopclntab
	 * reader) for whole chains, and binutils addr2line for each frame's file:line and
	 * the outermost function's name (it names inlined Go frames after their caller;
	 * eu-addr2line finds no Go units without .debug_aranges). */
	struct symfile *dw = symfile_open(bin, NULL);
	assert_non_null(dw);
	symfile_set_go(dw, 0);
	assert_non_null(symfile_dwarf(dw));
	struct a2l *bu = addr2line(1, bin, addrs, n);
	size_t inlined = 0, bad_dwarf = 0, bad_bu = 0;
	for (size_t i = 0; i < n; i++) {
		struct sym_frame a[16], b[16];
		int ka = symfile_lookup(sf, addrs[i], a, 16);
		int kb = symfile_lookup(dw, addrs[i], b, 16);
		int ok = ka == kb && ka > 0;
		for (int j = 0; ok && j < ka; j++)
			ok = strcmp(a[j].func, b[j].func) == 0 && a[j].file && b[j].file &&
			     strcmp(a[j].file, b[j].file) == 0 && a[j].line == b[j].line;
		if (!ok) {
			if (bad_dwarf < 5)
				print_message("# 0x%llx: .gopclntab %d frames (%s), DWARF %d frames (%s)\n",
					      (unsigned long long)addrs[i], ka, ka > 0 ? a[0].func : "-", kb,
					      kb > 0 ? b[0].func : "-");
			bad_dwarf++;
		}
		ok = ka == bu[i].n && ka > 0 && strcmp(a[ka - 1].func, bu[i].f[ka - 1].func) == 0;
		for (int j = 0; ok && j < ka; j++)
			ok = a[j].file && strcmp(a[j].file, bu[i].f[j].file) == 0 && a[j].line == bu[i].f[j].line;
		if (!ok) {
			if (bad_bu < 5)
				print_message("# 0x%llx: .gopclntab %s at %s:%d; binutils %s at %s:%d (%d frames)\n",
					      (unsigned long long)addrs[i], ka > 0 ? a[0].func : "-",
					      ka > 0 && a[0].file ? a[0].file : "-", ka > 0 ? a[0].line : 0,
					      bu[i].f[0].func, bu[i].f[0].file, bu[i].f[0].line, bu[i].n);
			bad_bu++;
		}
		if (ka > 1)
			inlined++;
	}
	free(bu);
	struct symfile_stats st, st2;
	symfile_get_stats(sf, &st);
	symfile_get_stats(dw, &st2);
	print_message("# Go 1.19: %zu addresses (%zu inlined): .gopclntab vs Go DWARF %zu differ, "
		      "vs binutils addr2line %zu differ; %llu answered by .gopclntab, %llu by DWARF\n",
		      n, inlined, bad_dwarf, bad_bu, (unsigned long long)st.go_hits,
		      (unsigned long long)st2.dwarf_hits);
	assert_int_equal(bad_dwarf, 0);
	assert_int_equal(bad_bu, 0);
	assert_true(inlined > 0);
	assert_true(st.go_hits > 0);
	symfile_free(dw);

	/* stripped: same names as the unstripped binary */
	struct symfile *ss = symfile_open(stripped, NULL);
	assert_non_null(ss);
	assert_null(symfile_dwarf(ss));
	size_t same = 0;
	for (size_t i = 0; i < n; i++) {
		struct sym_frame a[8], b[8];
		int ka = symfile_lookup(sf, addrs[i], a, 8);
		int kb = symfile_lookup(ss, addrs[i], b, 8);
		assert_int_equal(ka, kb);
		for (int j = 0; j < ka; j++)
			assert_string_equal(a[j].func, b[j].func);
		same++;
	}
	assert_int_equal(same, n);
	free(addrs);
	free(fs);
	symfile_free(ss);
	symfile_free(sf);
}

/* ---------- broken input ---------- */

static void test_corrupt(void **state)
{
	(void)state;
	if (!have_cc)
		skip();
	int err = 0;
	char path[600];

	assert_null(symfile_open("/nonexistent/file", &err));
	assert_int_equal(err, -ENOENT);
	snprintf(path, sizeof(path), "%s/notelf", tmpdir);
	write_file(path, "#!/bin/sh\necho not an ELF file\n");
	assert_null(symfile_open(path, &err));
	assert_int_equal(err, -ENOEXEC);
	assert_null(symfile_open_memory(xstrdup("garbage"), 7, "x", &err));
	assert_int_equal(err, -ENOEXEC);
	symfile_free(NULL);

	/* Truncated and bit-flipped copies of a real binary with DWARF. */
	FILE *f = fopen(fx_inl, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long size = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *orig = xmalloc((size_t)size);
	assert_int_equal(fread(orig, 1, (size_t)size, f), (size_t)size);
	fclose(f);
	size_t nf = 0;
	struct fsym *fs = nm_funcs(fx_inl, 0, &nf);
	uint8_t *buf = xmalloc((size_t)size);
	unsigned seed = 777;
	int opened = 0, iters = 400;
	for (int it = 0; it < iters; it++) {
		size_t len = (size_t)size;
		memcpy(buf, orig, len);
		seed = seed * 1103515245u + 12345u;
		if (it % 3 == 0) {
			len = (seed >> 4) % len;
		} else {
			int flips = 1 + (int)((seed >> 8) % 64);
			for (int k = 0; k < flips; k++) {
				seed = seed * 1103515245u + 12345u;
				/* half the flips in the headers, where they hurt */
				size_t pos = (k & 1) ? (seed >> 4) % 256 : (seed >> 4) % len;
				buf[pos] ^= (uint8_t)(1u << ((seed >> 20) & 7));
			}
		}
		FILE *o = fopen(path, "wb");
		assert_non_null(o);
		fwrite(buf, 1, len, o);
		fclose(o);
		struct symfile *sf = symfile_open(path, &err);
		if (sf == NULL)
			continue;
		opened++;
		(void)symfile_build_id(sf);
		(void)symfile_dwarf(sf);
		(void)symfile_cfi(sf);
		(void)symfile_gopcln(sf);
		(void)symfile_nsymbols(sf);
		for (size_t i = 0; i < nf; i++) {
			struct sym_frame fr[8];
			uint64_t va;
			(void)symfile_lookup(sf, fs[i].addr, fr, 8);
			(void)symfile_lookup(sf, fs[i].addr + fs[i].size / 2, fr, 8);
			(void)symfile_file_vaddr(sf, 0x10000, 0, 0x10000 + fs[i].addr, &va);
		}
		symfile_free(sf);
		/* the same image from memory */
		void *mem = xmalloc(len ? len : 1);
		memcpy(mem, buf, len);
		sf = symfile_open_memory(mem, len, "mem", NULL);
		if (sf) {
			struct sym_frame fr[8];
			for (size_t i = 0; i < nf; i++)
				(void)symfile_lookup(sf, fs[i].addr + 1, fr, 8);
			symfile_free(sf);
		}
	}
	print_message("# corrupt ELF: %d variants, %d opened, no crash\n", iters, opened);
	free(buf);
	free(orig);
	free(fs);
}

/* ---------- kallsyms ---------- */

static void test_kallsyms_parse(void **state)
{
	(void)state;
	static const char text[] =
		"ffffffff81000000 T _text\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000000 t __pfx_startup\n"
		"ffffffff81000100 T startup_64\n"
		"ffffffff81000200 t helper\n"
		"ffffffff81002000 D some_data\n"
		"ffffffff81001000 T _etext\n"
		"garbage line\n"
		"ffffffffc0201000 t ext4_fill_super\t[ext4]\n"
		"ffffffffc0200000 t ext4_init\t[ext4]\n"
		"ffffffffc0300000 T nf_hook\t[nf_tables]\n";
	int err = 1;
	struct kallsyms *ks = kallsyms_parse(text, strlen(text), &err);
	const char *mod;
	uint64_t off, a, b;

	assert_non_null(ks);
	assert_int_equal(err, 0);
	const char *first = kallsyms_lookup(ks, 0xffffffff81000000ull, &mod, &off);
	assert_non_null(first);
	assert_true(strcmp(first, "_stext") == 0 || strcmp(first, "_text") == 0);
	assert_string_equal(mod, "");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000150ull, &mod, &off), "startup_64");
	assert_int_equal(off, 0x50);
	assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000fffull, NULL, NULL), "helper");
	/* past _etext in the core kernel: nothing */
	assert_null(kallsyms_lookup(ks, 0xffffffff81001500ull, NULL, NULL));
	assert_null(kallsyms_lookup(ks, 0xffffffff80000000ull, NULL, NULL));
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0200010ull, &mod, &off), "ext4_init");
	assert_string_equal(mod, "ext4");
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0201010ull, &mod, NULL), "ext4_fill_super");
	/* the last symbol of a module has a bounded tail */
	assert_null(kallsyms_lookup(ks, 0xffffffffc02f0000ull, NULL, NULL));
	assert_string_equal(kallsyms_lookup(ks, 0xffffffffc0300004ull, &mod, NULL), "nf_hook");
	assert_string_equal(mod, "nf_tables");
	kallsyms_kernel_range(ks, &a, &b);
	assert_int_equal(a, 0xffffffff81000000ull);
	assert_int_equal(b, 0xffffffff81001000ull);
	assert_int_equal(kallsyms_module_range(ks, "ext4", &a, &b), 0);
	assert_int_equal(a, 0xffffffffc0200000ull);
	assert_true(b > 0xffffffffc0201000ull);
	assert_int_equal(kallsyms_module_range(ks, "nope", &a, &b), -ENOENT);
	kallsyms_free(ks);

	/* The best alias wins whether the file is in address order (one pass) or not (sorted
	 * first): global before local, fewer leading underscores first. */
	static const char inorder[] =
		"ffffffff81000000 T _stext\n"
		"ffffffff81000010 t __pfx_do_work\n"
		"ffffffff81000010 t _do_work\n"
		"ffffffff81000010 T do_work\n"
		"ffffffff81000010 t do_work_alias\n"
		"ffffffff81000040 t __lock\n"
		"ffffffff81000040 t _lock\n"
		"ffffffff81000080 T _etext\n";
	static const char shuffled[] =
		"ffffffff81000040 t _lock\n"
		"ffffffff81000010 t do_work_alias\n"
		"ffffffff81000080 T _etext\n"
		"ffffffff81000010 T do_work\n"
		"ffffffff81000040 t __lock\n"
		"ffffffff81000000 T _stext\n"
		"ffffffff81000010 t __pfx_do_work\n"
		"ffffffff81000010 t _do_work\n";
	for (int k = 0; k < 2; k++) {
		const char *txt = k ? shuffled : inorder;

		ks = kallsyms_parse(txt, strlen(txt), &err);
		assert_non_null(ks);
		assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000018ull, NULL, &off), "do_work");
		assert_int_equal(off, 8);
		assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000040ull, NULL, NULL), "_lock");
		assert_string_equal(kallsyms_lookup(ks, 0xffffffff81000004ull, NULL, NULL), "_stext");
		kallsyms_free(ks);
	}

	/* kptr_restrict: every address reads as zero */
	static const char hidden[] = "0000000000000000 T _text\n0000000000000000 t foo\t[bar]\n";
	assert_null(kallsyms_parse(hidden, strlen(hidden), &err));
	assert_int_equal(err, -EPERM);
	assert_null(kallsyms_parse("", 0, &err));
	assert_int_equal(err, -ENODATA);
	kallsyms_free(NULL);
}

static void test_kallsyms_live(void **state)
{
	(void)state;
	int err = 0;
	struct kallsyms *ks = kallsyms_load(&err);
	if (ks == NULL) {
		print_message("# /proc/kallsyms: %s\n", strerror(-err));
		skip();
	}
	/* every 97th text symbol of the real file resolves to itself or an alias */
	char *text = util_read_file("/proc/kallsyms", 256u << 20, NULL);
	assert_non_null(text);
	size_t checked = 0, bad = 0, line = 0;
	char *save = NULL;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save), line++) {
		unsigned long long a;
		char type, name[512];
		if (line % 97 || sscanf(l, "%llx %c %511s", &a, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T')
			continue;
		uint64_t off = 1;
		const char *got = kallsyms_lookup(ks, a, NULL, &off);
		checked++;
		if (got == NULL || off != 0)
			bad++;
	}
	free(text);
	print_message("# kallsyms: %zu symbols, %zu checked, %zu bad\n", kallsyms_count(ks), checked, bad);
	assert_int_equal(bad, 0);
	assert_true(checked > 100);

	/* through a symbolizer: a kernel address gets the kernel module */
	uint64_t a, b;
	kallsyms_kernel_range(ks, &a, &b);
	struct symbolizer *s = symbolizer_new(getpid());
	struct sym_frame fr[4];
	const struct sym_module *mod;
	int n = symbolizer_lookup(s, a + 16, 0, &mod, fr, 4);
	assert_int_equal(n, 1);
	assert_string_equal(mod->path, "[kernel.kallsyms]");
	assert_string_equal(fr[0].func, kallsyms_lookup(ks, a + 16, NULL, NULL));
	symbolizer_free(s);
	kallsyms_free(ks);
	char *bid = kallsyms_kernel_build_id();
	if (bid)
		assert_true(strlen(bid) >= 16);
	free(bid);
}

/* ---------- cost ---------- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Prints the cost of a lookup (no assertion on time: the machine varies). */
static void test_cost(void **state)
{
	(void)state;
	char exe[4096];
	ssize_t l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(l > 0);
	exe[l] = '\0';
	size_t n = 0;
	uint64_t *addrs = sample_addrs(exe, &n, 20000);
	if (n == 0)
		skip();
	struct sym_frame fr[16];
	const char *const what[3] = { "symtab only", "DWARF lines+inlines", "DWARF, cached" };
	for (int mode = 0; mode < 3; mode++) {
		double t0 = now_s();
		struct symfile *sf = symfile_open(exe, NULL);
		assert_non_null(sf);
		symfile_set_dwarf(sf, mode != 0);
		symfile_set_cache(sf, mode == 2);
		/* the first pass loads tables and indexes each DWARF unit on first touch */
		for (size_t i = 0; i < n; i++)
			(void)symfile_lookup(sf, addrs[i], fr, 16);
		double t1 = now_s();
		int rounds = 20;
		for (int r = 0; r < rounds; r++)
			for (size_t i = 0; i < n; i++)
				(void)symfile_lookup(sf, addrs[i], fr, 16);
		double t2 = now_s();
		print_message("# cost %s: first pass %.2f ms (%.2f us/address), then %.3f us per lookup "
			      "(%zu addresses x %d)\n",
			      what[mode], (t1 - t0) * 1e3, (t1 - t0) * 1e6 / (double)n,
			      (t2 - t1) * 1e6 / (double)(n * (size_t)rounds), n, rounds);
		struct symfile_stats st;
		symfile_get_stats(sf, &st);
		print_message("#   %llu lookups, %llu cache hits\n", (unsigned long long)st.lookups,
			      (unsigned long long)st.cache_hits);
		symfile_free(sf);
	}
	free(addrs);
}

/* Go's rule for the frames its stacks leave out (sym_go_hidden): wrappers unless they called
 * a panic function, inlined ones too, and runtime.goexit (go1.23 runtime/traceback.go
 * tracebackPCs, elideWrapperCalling; runtime/pprof/proto.go allFrames). */
static void test_go_elide(void **state)
{
	struct sym_frame W = { .func = "main.(*T).M", .wrapper = 1 };
	struct sym_frame f = { .func = "main.T.M" }, g = { .func = "main.caller" };
	struct sym_frame pw = { .func = "runtime.panicwrap" }, gx = { .func = "runtime.goexit" };
	struct sym_frame a[4];

	(void)state;
	/* a wrapper with nothing inlined: hidden, unless what it called panics */
	a[0] = W;
	assert_int_equal(sym_go_hidden(a, 1, 0), 1);
	assert_int_equal(sym_go_hidden(a, 1, 1), 0);
	/* a method inlined into its wrapper: the method stays */
	a[0] = f;
	a[1] = W;
	assert_int_equal(sym_go_hidden(a, 2, 0), 2);
	/* a wrapper inlined into its caller, between two shown frames */
	a[0] = f;
	a[1] = W;
	a[2] = g;
	assert_int_equal(sym_go_hidden(a, 3, 0), 2);
	assert_int_equal(sym_go_elide(a, 3, 0), 2);
	assert_string_equal(a[0].func, "main.T.M");
	assert_string_equal(a[1].func, "main.caller");
	/* the frame before it is its callee: runtime.panicwrap keeps it, a wrapper does not */
	a[0] = pw;
	a[1] = W;
	assert_int_equal(sym_go_hidden(a, 2, 0), 0);
	a[0] = W;
	a[1] = W;
	assert_int_equal(sym_go_hidden(a, 2, 1), 2);
	assert_int_equal(sym_go_hidden(a, 2, 0), 3);
	assert_int_equal(sym_go_elide(a, 2, 0), 0);
	/* runtime.goexit, and nothing else of a plain function */
	a[0] = gx;
	assert_int_equal(sym_go_hidden(a, 1, 0), 1);
	a[0] = g;
	assert_int_equal(sym_go_hidden(a, 1, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inline_chain),
		cmocka_unit_test(test_inline_chain_clang),
		cmocka_unit_test(test_debuglink_compressed),
		cmocka_unit_test(test_dwarf_self),
		cmocka_unit_test(test_dwarf_cchains),
		cmocka_unit_test(test_dwarf_libc_debugfile),
		cmocka_unit_test(test_symtab_self),
		cmocka_unit_test(test_symtab_libc),
		cmocka_unit_test(test_load_bias),
		cmocka_unit_test(test_deleted_binary),
		cmocka_unit_test(test_mount_namespace),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_main_changed),
		cmocka_unit_test(test_go_binary),
		cmocka_unit_test(test_go_elide),
		cmocka_unit_test(test_corrupt),
		cmocka_unit_test(test_kallsyms_parse),
		cmocka_unit_test(test_kallsyms_live),
		cmocka_unit_test(test_cost),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
