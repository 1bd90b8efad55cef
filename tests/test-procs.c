/* test-procs.c: unit tests for the list of processes (src/session/procs.c) on a fake /proc
 * tree: which processes are listed and in what order (Go first, each part by CPU), the
 * CPU share between two scans, the Go version from a real Go executable's build info (this
 * test's own build tree has none: a Go binary is made by hand below from the layout of
 * go1.24 debug/buildinfo), the permission checks as the kernel makes them (an exe link
 * that cannot be read, a mem file that cannot be opened, perf_event_paranoid 3), and a
 * comm with control characters escaped. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gotop/procs.h"

static char root[256];

static void put(const char *rel, const char *text, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	fclose(f);
}

static void put_s(const char *rel, const char *text)
{
	put(rel, text, strlen(text));
}

static void mkdirs(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	assert_int_equal(mkdir(path, 0755) == 0 || errno == EEXIST, 1);
}

/* A minimal ELF64 executable with one section, .go.buildinfo, holding the build info
 * blob of go1.18 and later (go1.24 debug/buildinfo/buildinfo.go readRawBuildInfo: the
 * magic "\xff Go buildinf:", pointer size 8 at 14, flags 2 at 15: the version as a
 * varint-prefixed string at 32). */
static void make_go_elf(const char *path, const char *ver)
{
	unsigned char blob[64] = "\xff Go buildinf:";
	const char shstr[] = "\0.shstrtab\0.go.buildinfo";
	Elf64_Ehdr eh;
	Elf64_Shdr sh[3];
	size_t vl = strlen(ver), blen = 32 + 1 + vl;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	blob[14] = 8;
	blob[15] = 2;
	blob[32] = (unsigned char)vl;
	memcpy(blob + 33, ver, vl);
	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_EXEC;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(eh);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 3;
	eh.e_shstrndx = 1;
	eh.e_shoff = sizeof(eh) + sizeof(shstr) + sizeof(blob);
	memset(sh, 0, sizeof(sh));
	sh[1].sh_name = 1;
	sh[1].sh_type = SHT_STRTAB;
	sh[1].sh_offset = sizeof(eh);
	sh[1].sh_size = sizeof(shstr);
	sh[2].sh_name = 11;
	sh[2].sh_type = SHT_PROGBITS;
	sh[2].sh_flags = SHF_ALLOC | SHF_WRITE;
	sh[2].sh_addr = 0x500000;
	sh[2].sh_offset = sizeof(eh) + sizeof(shstr);
	sh[2].sh_size = blen;
	sh[2].sh_addralign = 16;
	assert_int_equal(fwrite(&eh, sizeof(eh), 1, f), 1);
	assert_int_equal(fwrite(shstr, sizeof(shstr), 1, f), 1);
	assert_int_equal(fwrite(blob, sizeof(blob), 1, f), 1);
	assert_int_equal(fwrite(sh, sizeof(sh), 1, f), 1);
	fclose(f);
}

/* A fake process: its stat (52 fields, as Linux 3.5 and later write it; utime in clock
 * ticks), status, cmdline, and its exe link to
 * target (NULL: none, as for another user's process) and a mem file (or not). */
static void fake(int pid, const char *comm, char state, unsigned long flags, unsigned long utime,
		 int threads, const char *target, int mem)
{
	char dir[32], buf[512], rel[64];
	int n;

	snprintf(dir, sizeof(dir), "%d", pid);
	mkdirs(dir);
	n = snprintf(buf, sizeof(buf),
		     "%d (%s) %c 1 %d %d 0 -1 %lu 0 0 0 0 %lu 0 0 0 20 0 %d 0 %d"
		     " 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		     pid, comm, state, pid, pid, flags, utime, threads, 1000 + pid);
	snprintf(rel, sizeof(rel), "%d/stat", pid);
	put(rel, buf, (size_t)n);
	n = snprintf(buf, sizeof(buf), "Name:\t%s\nUid:\t1000\t1000\t1000\t1000\n", comm);
	snprintf(rel, sizeof(rel), "%d/status", pid);
	put(rel, buf, (size_t)n);
	n = snprintf(buf, sizeof(buf), "%s%c--flag%c", comm, 0, 0);
	snprintf(rel, sizeof(rel), "%d/cmdline", pid);
	put(rel, buf, (size_t)n);
	if (target) {
		char path[512];

		snprintf(path, sizeof(path), "%s/%d/exe", root, pid);
		unlink(path);
		assert_int_equal(symlink(target, path), 0);
	}
	if (mem) {
		snprintf(rel, sizeof(rel), "%d/mem", pid);
		put(rel, "", 0);
	}
}

static void set_utime(int pid, unsigned long utime)
{
	fake(pid, pid == 101 ? "gosvc" : pid == 102 ? "gobusy" : pid == 201 ? "cprog" : "other",
	     'S', 0, utime, 3, NULL, 0);
}

static int setup(void **state)
{
	char path[512];

	(void)state;
	snprintf(root, sizeof(root), "%s/gotop-procs-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(root));
	mkdirs("sys");
	mkdirs("sys/kernel");
	put("sys/kernel/perf_event_paranoid", "2\n", 2);
	mkdirs("self");
	put_s("self/status", "Name:\ttest\nCapEff:\t0000000000000000\n");
	snprintf(path, sizeof(path), "%s/go-bin", root);
	make_go_elf(path, "go1.24.4");
	snprintf(path, sizeof(path), "%s/c-bin", root);
	put("c-bin", "\x7f" "ELF not really", 14);
	/* Two Go processes, a C one, one of another user (no exe link), a kernel thread, a
	 * zombie, and one whose comm holds an escape sequence and a newline. */
	snprintf(path, sizeof(path), "%s/go-bin", root);
	fake(101, "gosvc", 'S', 0, 100, 12, path, 1);
	fake(102, "gobusy", 'R', 0, 100, 20, path, 1);
	fake(103, "gonomem", 'S', 0, 100, 4, path, 0);
	snprintf(path, sizeof(path), "%s/c-bin", root);
	fake(201, "cprog", 'S', 0, 100, 1, path, 1);
	fake(202, "evil\x1b[2J\n", 'S', 0, 100, 1, path, 1);
	fake(301, "other", 'S', 0, 100, 1, NULL, 0);
	fake(2, "kthreadd", 'S', 0x00200000, 0, 1, NULL, 0);
	fake(401, "zombie", 'Z', 0, 0, 1, path, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

static const struct procs_entry *find(const struct procs_entry *e, size_t n, int pid)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].pid == pid)
			return &e[i];
	return NULL;
}

static void test_list(void **state)
{
	struct procs *p = procs_new(root, 0);
	const struct procs_entry *e, *x;
	long tck = sysconf(_SC_CLK_TCK);
	size_t n;

	(void)state;
	assert_int_equal(procs_scan_at(p, 1000000000ULL), 0);
	n = procs_list(p, &e);
	/* Not listed: another user's process (its exe link cannot be read), the kernel
	 * thread, the zombie. */
	assert_int_equal(n, 5);
	assert_null(find(e, n, 301));
	assert_null(find(e, n, 2));
	assert_null(find(e, n, 401));
	/* Go first, then the others; no CPU share at the first scan. */
	assert_string_equal(e[0].go_version, "go1.24.4");
	assert_string_equal(e[1].go_version, "go1.24.4");
	assert_string_equal(e[2].go_version, "go1.24.4");
	assert_string_equal(e[3].go_version, "");
	assert_true(e[0].cpu_pct < 0);
	x = find(e, n, 101);
	assert_non_null(x);
	assert_string_equal(x->comm, "gosvc");
	assert_int_equal(x->threads, 12);
	assert_int_equal(x->uid, 1000);
	assert_int_equal(x->access, PROCS_PERF | PROCS_MEM);
	assert_string_equal(x->cmdline, "gosvc --flag");
	/* Memory not readable (Yama, another mode of the check): listed, no Go reading. */
	assert_int_equal(find(e, n, 103)->access, PROCS_PERF);
	/* Control characters never come out as they are. */
	x = find(e, n, 202);
	assert_non_null(x);
	assert_null(strchr(x->comm, '\x1b'));
	assert_null(strchr(x->comm, '\n'));
	assert_null(strchr(x->cmdline, '\x1b'));

	/* Half a second later: gobusy used 0.5 s of CPU (100%), gosvc 0.1 s (20%), cprog
	 * 0.25 s (50%): Go by CPU first, then the others by CPU. */
	fake(102, "gobusy", 'R', 0, 100 + (unsigned long)tck / 2, 20, NULL, 0);
	fake(101, "gosvc", 'S', 0, 100 + (unsigned long)tck / 10, 12, NULL, 0);
	fake(201, "cprog", 'S', 0, 100 + (unsigned long)tck / 4, 1, NULL, 0);
	assert_int_equal(procs_scan_at(p, 1500000000ULL), 0);
	n = procs_list(p, &e);
	assert_int_equal(n, 5);
	assert_int_equal(e[0].pid, 102);
	assert_int_equal(e[1].pid, 101);
	assert_int_equal(e[2].pid, 103);
	assert_int_equal(e[3].pid, 201);
	assert_int_equal(e[4].pid, 202);
	assert_true(e[0].cpu_pct > 99.9 && e[0].cpu_pct < 100.1);
	assert_true(e[1].cpu_pct > 19.9 && e[1].cpu_pct < 20.1);
	assert_true(e[2].cpu_pct == 0);
	assert_true(e[3].cpu_pct > 49.9 && e[3].cpu_pct < 50.1);
	procs_free(p);
	set_utime(102, 100);
	set_utime(101, 100);
	set_utime(201, 100);
}

static void test_all_and_paranoid(void **state)
{
	struct procs *p = procs_new(root, PROCS_ALL);
	const struct procs_entry *e;
	size_t n;

	(void)state;
	assert_int_equal(procs_scan_at(p, 1), 0);
	n = procs_list(p, &e);
	/* PROCS_ALL: another user's process too, with no access. */
	assert_int_equal(n, 6);
	assert_int_equal(find(e, n, 301)->access, 0);
	assert_string_equal(procs_why(p), "");
	/* perf_event_paranoid 3 without CAP_PERFMON: nothing can be sampled, and why. */
	put("sys/kernel/perf_event_paranoid", "3\n", 2);
	assert_int_equal(procs_scan_at(p, 2), 0);
	n = procs_list(p, &e);
	assert_int_equal(find(e, n, 101)->access & PROCS_PERF, 0);
	assert_non_null(strstr(procs_why(p), "perf_event_paranoid=3"));
	procs_free(p);
	/* ... with CAP_PERFMON (bit 38) it can again. */
	put_s("self/status", "Name:\ttest\nCapEff:\t0000004000000000\n");
	p = procs_new(root, 0);
	assert_int_equal(procs_scan_at(p, 1), 0);
	n = procs_list(p, &e);
	assert_int_equal(find(e, n, 101)->access & PROCS_PERF, PROCS_PERF);
	assert_string_equal(procs_why(p), "");
	procs_free(p);
	put("sys/kernel/perf_event_paranoid", "2\n", 2);
	put_s("self/status", "Name:\ttest\nCapEff:\t0000000000000000\n");
}

static void test_missing_root(void **state)
{
	struct procs *p = procs_new("/nonexistent/proc", 0);
	const struct procs_entry *e;

	(void)state;
	assert_int_equal(procs_scan(p), -ENOENT);
	assert_int_equal(procs_list(p, &e), 0);
	procs_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_list),
		cmocka_unit_test(test_all_and_paranoid),
		cmocka_unit_test(test_missing_root),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
