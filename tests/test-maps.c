/* test-maps.c: unit tests of the /proc/PID/maps parser and address lookup. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "gotop/maps.h"

/* A maps file as Linux 6.x prints it for a PIE program (lines taken from a real
 * process, plus the cases the parser must handle), with bogus lines mixed in. */
static const char real_maps[] =
	"55fa3c1c0000-55fa3c1c2000 r--p 00000000 fe:00 247134                     /usr/bin/cat\n"
	"55fa3c1c2000-55fa3c1c7000 r-xp 00002000 fe:00 247134                     /usr/bin/cat\n"
	"55fa3c1c7000-55fa3c1ca000 r--p 00007000 fe:00 247134                     /usr/bin/cat\n"
	"55fa3c1ca000-55fa3c1cb000 r--p 00009000 fe:00 247134                     /usr/bin/cat\n"
	"55fa3c1cb000-55fa3c1cc000 rw-p 0000a000 fe:00 247134                     /usr/bin/cat\n"
	"55fa3d4f1000-55fa3d512000 rw-p 00000000 00:00 0                          [heap]\n"
	"this is not a maps line\n"
	"7f0a1c000000-7f0a1c021000 rw-p 00000000 00:00 0 \n"
	"7f0a1c021000-7f0a20000000 ---p 00000000 00:00 0\n"
	"7f0a2147f000-7f0a214a5000 r--p 00000000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0a214a5000-7f0a215fb000 r-xp 00026000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0a215fb000-7f0a2164e000 r--p 0017c000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0a2164e000-7f0a21652000 r--p 001cf000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0a21652000-7f0a21654000 rw-p 001d3000 fe:00 332835                     /usr/lib/x86_64-linux-gnu/libc.so.6\n"
	"7f0a21660000-7f0a21661000 r-xp 00001000 08:01 1234567                    /tmp/my lib/with spaces.so (deleted)\n"
	"7f0a21661000-7f0a21662000 r--s 00000000 00:01 2048                       /memfd:jit (deleted)\n"
	"7f0a21662000-7f0a21663000 rw-p 00000000 00:00 0                          [anon:go heap]\n"
	"7f0a21663000-7f0a21664000 r-xp 00000000 103:02 99                        /opt/app/bin/my app\n"
	"zzzz-7f0a21665000 r-xp 00000000 00:00 0\n"
	"7f0a21665000-7f0a21664000 r-xp 00000000 00:00 0\n"
	"7f0a21666000-7f0a21667000 rwxq 00000000 00:00 0\n"
	"7f0a2166e000-7f0a21672000 r--p 00000000 00:00 0                          [vvar]\n"
	"7f0a21672000-7f0a21674000 r-xp 00000000 00:00 0                          [vdso]\n"
	"7ffd5e8a1000-7ffd5e8c2000 rw-p 00000000 00:00 0                          [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

static const struct maps_entry *must_find(const struct maps *m, uint64_t a)
{
	const struct maps_entry *e = maps_find(m, a);
	assert_non_null(e);
	return e;
}

static void test_parse_real(void **state)
{
	(void)state;
	struct maps *m = maps_parse(real_maps, strlen(real_maps));
	const struct maps_entry *e;

	/* 25 lines, 4 bogus */
	assert_int_equal(maps_count(m), 21);

	e = maps_at(m, 0);
	assert_int_equal(e->start, 0x55fa3c1c0000ull);
	assert_int_equal(e->end, 0x55fa3c1c2000ull);
	assert_int_equal(e->perms, MAPS_R | MAPS_P);
	assert_int_equal(e->kind, MAPS_KIND_FILE);
	assert_string_equal(e->path, "/usr/bin/cat");
	assert_int_equal(e->dev_major, 0xfe);
	assert_int_equal(e->dev_minor, 0);
	assert_int_equal(e->inode, 247134);
	assert_int_equal(e->deleted, 0);

	e = maps_at(m, 1);
	assert_int_equal(e->perms, MAPS_R | MAPS_X | MAPS_P);
	assert_int_equal(e->pgoff, 0x2000);

	e = must_find(m, 0x55fa3d4f1000ull);
	assert_int_equal(e->kind, MAPS_KIND_HEAP);
	assert_string_equal(e->path, "[heap]");

	e = must_find(m, 0x7f0a1c000000ull);
	assert_int_equal(e->kind, MAPS_KIND_ANON);
	assert_string_equal(e->path, "");
	e = must_find(m, 0x7f0a1c021000ull);
	assert_int_equal(e->kind, MAPS_KIND_ANON);
	assert_int_equal(e->perms, MAPS_P);

	e = must_find(m, 0x7f0a214a5000ull + 0x1234);
	assert_string_equal(e->path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	assert_int_equal(e->pgoff, 0x26000);
	assert_int_equal(e->perms & MAPS_X, MAPS_X);

	e = must_find(m, 0x7f0a21660800ull);
	assert_string_equal(e->path, "/tmp/my lib/with spaces.so");
	assert_int_equal(e->deleted, 1);
	assert_int_equal(e->dev_major, 8);
	assert_int_equal(e->dev_minor, 1);
	assert_int_equal(e->inode, 1234567);
	assert_int_equal(e->kind, MAPS_KIND_FILE);

	e = must_find(m, 0x7f0a21661000ull);
	assert_string_equal(e->path, "/memfd:jit");
	assert_int_equal(e->deleted, 1);
	assert_int_equal(e->perms, MAPS_R); /* shared */

	e = must_find(m, 0x7f0a21662000ull);
	assert_int_equal(e->kind, MAPS_KIND_ANON);
	assert_string_equal(e->path, "[anon:go heap]");

	e = must_find(m, 0x7f0a21663000ull);
	assert_string_equal(e->path, "/opt/app/bin/my app");
	assert_int_equal(e->dev_major, 0x103);
	assert_int_equal(e->dev_minor, 2);

	e = must_find(m, 0x7f0a2166e000ull);
	assert_int_equal(e->kind, MAPS_KIND_OTHER);
	e = must_find(m, 0x7f0a21673fffull);
	assert_int_equal(e->kind, MAPS_KIND_VDSO);
	e = must_find(m, 0x7ffd5e8c1fffull);
	assert_int_equal(e->kind, MAPS_KIND_STACK);
	e = must_find(m, 0xffffffffff600000ull);
	assert_int_equal(e->kind, MAPS_KIND_VSYSCALL);
	assert_int_equal(e->perms, MAPS_X | MAPS_P);
	maps_free(m);
}

static void test_find_boundaries(void **state)
{
	(void)state;
	struct maps *m = maps_parse(real_maps, strlen(real_maps));

	assert_null(maps_find(m, 0));
	assert_null(maps_find(m, 0x55fa3c1c0000ull - 1));
	assert_ptr_equal(maps_find(m, 0x55fa3c1c0000ull), maps_at(m, 0));
	assert_ptr_equal(maps_find(m, 0x55fa3c1c1fffull), maps_at(m, 0));
	/* end is exclusive: the next entry starts there */
	assert_ptr_equal(maps_find(m, 0x55fa3c1c2000ull), maps_at(m, 1));
	assert_ptr_equal(maps_find(m, 0x55fa3c1cbfffull), maps_at(m, 4));
	/* gap after the last /usr/bin/cat page */
	assert_null(maps_find(m, 0x55fa3c1cc000ull));
	assert_null(maps_find(m, 0x7f0a21654000ull));
	assert_null(maps_find(m, 0x7f0a21674000ull));
	assert_non_null(maps_find(m, 0xffffffffff600fffull));
	assert_null(maps_find(m, 0xffffffffff601000ull));
	assert_null(maps_find(m, UINT64_MAX));
	assert_null(maps_at(m, maps_count(m)));

	/* every entry: first byte, last byte */
	for (size_t i = 0; i < maps_count(m); i++) {
		const struct maps_entry *e = maps_at(m, i);
		assert_ptr_equal(maps_find(m, e->start), e);
		assert_ptr_equal(maps_find(m, e->end - 1), e);
		if (i > 0)
			assert_true(maps_at(m, i - 1)->end <= e->start);
	}
	maps_free(m);
}

static void test_unsorted_overlap(void **state)
{
	(void)state;
	static const char t[] =
		"3000-4000 r-xp 00000000 00:00 0  c\n"
		"1000-2000 r-xp 00000000 00:00 0  a\n"
		"1800-2800 r-xp 00000000 00:00 0  overlaps-a\n"
		"2000-3000 r-xp 00000000 00:00 0  b\r\n";
	struct maps *m = maps_parse(t, strlen(t));

	assert_int_equal(maps_count(m), 3);
	assert_string_equal(maps_at(m, 0)->path, "a");
	assert_string_equal(maps_at(m, 1)->path, "b");
	assert_string_equal(maps_at(m, 2)->path, "c");
	assert_int_equal(maps_at(m, 0)->kind, MAPS_KIND_OTHER);
	assert_string_equal(must_find(m, 0x2fff)->path, "b");
	maps_free(m);
}

static void test_empty_and_garbage(void **state)
{
	(void)state;
	struct maps *m = maps_parse("", 0);
	assert_int_equal(maps_count(m), 0);
	assert_null(maps_find(m, 0x1000));
	maps_free(m);
	m = maps_parse(NULL, 0);
	assert_int_equal(maps_count(m), 0);
	maps_free(m);
	maps_free(NULL);
	assert_null(maps_find(NULL, 1));

	/* random bytes and random mutations of a real text: no crash, sane output */
	char buf[sizeof(real_maps)];
	unsigned seed = 12345;
	for (int iter = 0; iter < 3000; iter++) {
		size_t len = sizeof(real_maps) - 1;
		memcpy(buf, real_maps, len);
		int flips = 1 + iter % 40;
		for (int k = 0; k < flips; k++) {
			seed = seed * 1103515245u + 12345u;
			size_t pos = (seed >> 8) % len;
			seed = seed * 1103515245u + 12345u;
			if (iter & 1)
				buf[pos] = (char)((seed >> 16) & 0xff);
			else
				buf[pos] = " -:0123456789abcdef\n"[(seed >> 16) % 20];
		}
		if (iter % 7 == 0)
			len = (seed >> 4) % len;
		m = maps_parse(buf, len);
		for (size_t i = 0; i < maps_count(m); i++) {
			const struct maps_entry *e = maps_at(m, i);
			assert_true(e->start < e->end);
			assert_non_null(e->path);
			if (i > 0)
				assert_true(maps_at(m, i - 1)->end <= e->start);
			assert_ptr_equal(maps_find(m, e->start), e);
		}
		maps_free(m);
	}
}

static int here(void)
{
	return 42;
}

/* Whether the kernel's own line for addr in /proc/self/maps says [stack]: under valgrind
 * the main thread runs on a stack valgrind mapped itself, which the kernel does not label. */
static int kernel_says_stack(uintptr_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int stack = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && addr >= lo && addr < hi) {
			stack = strstr(line, "[stack]") != NULL;
			break;
		}
	}
	fclose(f);
	return stack;
}

static void test_load_self(void **state)
{
	(void)state;
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	int local = 0;
	struct maps *m = maps_load(0);

	assert_true(n > 0);
	exe[n] = '\0';
	assert_non_null(m);
	assert_true(maps_count(m) > 5);

	const struct maps_entry *e = maps_find(m, (uint64_t)(uintptr_t)&here);
	assert_non_null(e);
	assert_true(e->perms & MAPS_X);
	assert_string_equal(e->path, exe);
	assert_int_equal(e->kind, MAPS_KIND_FILE);

	e = maps_find(m, (uint64_t)(uintptr_t)&local);
	assert_non_null(e);
	if (kernel_says_stack((uintptr_t)&local))
		assert_int_equal(e->kind, MAPS_KIND_STACK);
	else
		printf("# the kernel does not label this thread's stack [stack] (valgrind?): kind not checked\n");

	e = maps_find(m, (uint64_t)(uintptr_t)&getppid);
	assert_non_null(e);
	assert_non_null(strstr(e->path, "libc"));
	maps_free(m);

	struct maps *p = maps_load(getpid());
	assert_non_null(p);
	maps_free(p);
}

static void test_load_missing(void **state)
{
	(void)state;
	/* pid_max is at most 4194304 (linux include/linux/threads.h PID_MAX_LIMIT) */
	errno = 0;
	assert_null(maps_load(4194304 + 7));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_real),
		cmocka_unit_test(test_find_boundaries),
		cmocka_unit_test(test_unsorted_overlap),
		cmocka_unit_test(test_empty_and_garbage),
		cmocka_unit_test(test_load_self),
		cmocka_unit_test(test_load_missing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
