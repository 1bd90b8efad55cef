/* test-verify.c: unit tests of the verifier's classification, its copy of the kernel's
 * frame-pointer walk, one ptrace stop of a child process, and the unwind of a child
 * stopped in the [vdso]. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "gotop/procinfo.h"
#include "gotop/symbolizer.h"
#include "gotop/unwind.h"
#include "gotop/verify.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void cmp(const uint64_t *t, size_t nt, int open, const uint64_t *c, size_t nc, size_t limit,
		enum verify_class want, size_t at, uint64_t pc)
{
	struct verify_diff d;

	verify_compare(t, nt, open, c, nc, limit, &d);
	assert_int_equal(d.cls, want);
	if (want != VERIFY_AGREE) {
		assert_int_equal(d.at, at);
		assert_int_equal(d.pc, pc);
	}
}

static void test_compare(void **state)
{
	const uint64_t truth[] = { 10, 20, 30, 40, 50 };
	const uint64_t same[] = { 10, 20, 30, 40, 50 };
	const uint64_t missing[] = { 10, 30, 40, 50 };        /* the frameless leaf case */
	const uint64_t dup[] = { 10, 20, 20, 30, 40, 50 };    /* duff's fake frame */
	const uint64_t trunc[] = { 10, 20, 30 };
	const uint64_t diff[] = { 10, 20, 99, 40, 50 };
	const uint64_t longer[] = { 10, 20, 30, 40, 50, 77, 0 }; /* garbage above the root */
	const uint64_t miss_long[] = { 10, 30, 40, 50, 77 };
	(void)state;

	cmp(truth, N(truth), 0, same, N(same), 127, VERIFY_AGREE, 0, 0);
	cmp(truth, N(truth), 0, missing, N(missing), 127, VERIFY_MISSING, 1, 20);
	cmp(truth, N(truth), 0, dup, N(dup), 127, VERIFY_DUPLICATE, 2, 20);
	cmp(truth, N(truth), 0, trunc, N(trunc), 127, VERIFY_TRUNCATED, 3, 0);
	cmp(truth, N(truth), 0, diff, N(diff), 127, VERIFY_DIFFERENT, 2, 99);
	/* extra frames past the outermost one are wrong ... */
	cmp(truth, N(truth), 0, longer, N(longer), 127, VERIFY_DIFFERENT, 5, 77);
	/* ... unless the truth stopped at a stack switch and cannot judge them */
	cmp(truth, N(truth), 1, longer, N(longer), 127, VERIFY_AGREE, 0, 0);
	cmp(truth, N(truth), 1, miss_long, N(miss_long), 127, VERIFY_MISSING, 1, 20);
	cmp(truth, N(truth), 0, miss_long, N(miss_long), 127, VERIFY_DIFFERENT, 1, 30);
	/* only the first limit frames count (the kernel's perf_event_max_stack) */
	cmp(truth, N(truth), 0, trunc, N(trunc), 3, VERIFY_AGREE, 0, 0);
	cmp(truth, N(truth), 0, missing, 3, 3, VERIFY_MISSING, 1, 20);
	/* two callers missing is not "a caller missing" */
	{
		const uint64_t two[] = { 10, 40, 50 };
		cmp(truth, N(truth), 0, two, N(two), 127, VERIFY_DIFFERENT, 1, 40);
	}
	assert_string_equal(verify_class_name(VERIFY_MISSING), "caller missing");
	assert_string_equal(verify_class_name(VERIFY_NCLASS), "?");
}

static void test_fp_chain(void **state)
{
	/* A stack at 0x1000: frames at 0x1010 -> 0x1040 -> 0 (end). */
	uint64_t stack[16] = { 0 }, out[8];
	struct thread_snapshot ts;
	size_t n;
	(void)state;

	memset(&ts, 0, sizeof(ts));
	ts.regs[X86_64_DW_RSP] = 0x1000;
	ts.regs[X86_64_DW_RBP] = 0x1010;
	ts.regs[X86_64_DW_RIP] = 0xAAA;
	stack[2] = 0x1040; /* [0x1010] saved fp */
	stack[3] = 0xBBB;  /* [0x1018] return address */
	stack[8] = 0;      /* [0x1040] saved fp: the end */
	stack[9] = 0xCCC;  /* [0x1048] */
	ts.stack = (const uint8_t *)stack;
	ts.stack_len = sizeof(stack);
	/* pid 0 can never be read: words outside the copy fail, as unmapped memory would */
	n = verify_fp_chain(0, &ts, out, N(out));
	/* perf_callchain_user stores each return address, then fails to read at fp 0 */
	assert_int_equal(n, 3);
	assert_int_equal(out[0], 0xAAA);
	assert_int_equal(out[1], 0xBBB);
	assert_int_equal(out[2], 0xCCC);
	/* the depth limit */
	n = verify_fp_chain(0, &ts, out, 2);
	assert_int_equal(n, 2);
	/* a frame pointer outside user space ends the walk */
	ts.regs[X86_64_DW_RBP] = 0xffff800000000000ULL;
	n = verify_fp_chain(0, &ts, out, N(out));
	assert_int_equal(n, 1);
}

static volatile unsigned long sink;

static void test_capture_child(void **state)
{
	struct verify_capture cap;
	struct proc_stat st;
	pid_t child = fork();
	int rc, status;
	(void)state;

	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* also when an assertion ends the test */
		for (;;)
			sink++;
	}
	usleep(50000);
	memset(&cap, 0, sizeof(cap));
	rc = verify_capture(child, child, 4096, &cap);
	if (rc == -EPERM) {
		kill(child, SIGKILL);
		waitpid(child, &status, 0);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(cap.ts.tid, child);
	assert_true(cap.ts.stack_len > 0);
	assert_true(cap.ts.regs[X86_64_DW_RIP] != 0);
	assert_true(cap.stopped_ns > 0);
	/* released: not traced, not stopped, and it goes on running */
	usleep(20000);
	assert_int_equal(procinfo_stat(child, 0, &st), 0);
	assert_true(st.state == 'R' || st.state == 'S');
	/* a second stop of the same thread works (the first detached cleanly) */
	assert_int_equal(verify_capture(child, child, 4096, &cap), 0);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	/* a thread that no longer exists */
	assert_int_equal(verify_capture(child, child, 4096, &cap), -ESRCH);
	free(cap.buf);
}

static __attribute__((noinline)) void vdso_loop(void)
{
	for (;;) {
		struct timespec t;

		clock_gettime(CLOCK_MONOTONIC, &t);
		sink += (int)t.tv_nsec;
	}
}

/* The [vdso] has no file, so libunwind-ptrace finds no unwind information for it and
 * guessed the caller from RBP; the unwinder reads the .eh_frame_hdr the target has
 * mapped instead. A child calling clock_gettime in a loop is stopped until it is
 * found in the [vdso] a few times; each time the unwind must go through the vDSO and
 * clock_gettime to vdso_loop and on to the end of the stack. */
static void test_unwind_vdso(void **state)
{
	struct verify_capture cap;
	struct symbolizer *sym;
	struct unwinder *uw;
	struct unwinder_stats st;
	pid_t child = fork();
	int status, hits = 0, tries, rc;
	(void)state;

	assert_true(child >= 0);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		vdso_loop();
	}
	usleep(50000);
	memset(&cap, 0, sizeof(cap));
	sym = symbolizer_new(child);
	uw = unwinder_new(child, sym);
	assert_non_null(uw);
	for (tries = 0; tries < 3000 && hits < 5; tries++) {
		const struct sym_module *mod = NULL;
		uint64_t pcs[64];
		enum unwind_end end;
		int n, in_loop = 0;

		rc = verify_capture(child, child, 8192, &cap);
		if (rc == -EPERM)
			break;
		assert_int_equal(rc, 0);
		symbolizer_lookup(sym, cap.ts.regs[X86_64_DW_RIP], 0, &mod, NULL, 0);
		if (!mod || strcmp(mod->path, "[vdso]") != 0)
			continue;
		hits++;
		n = unwinder_unwind(uw, &cap.ts, pcs, 64, &end);
		assert_true(n >= 3);
		for (int i = 1; i < n; i++) {
			struct sym_frame f[4];
			int k = symbolizer_lookup(sym, pcs[i], 1, &mod, f, 4);

			if (k > 0 && strcmp(f[k - 1].func, "vdso_loop") == 0)
				in_loop = 1;
		}
		if (!in_loop || end != UNWIND_END_STOP) {
			for (int i = 0; i < n; i++) {
				struct sym_frame f[4];
				int k = symbolizer_lookup(sym, pcs[i], i > 0, &mod, f, 4);
				print_message("# %d %#llx %s %s\n", i, (unsigned long long)pcs[i], mod ? mod->path : "?",
					      k > 0 ? f[k - 1].func : "?");
			}
			print_message("# end %d\n", (int)end);
		}
		assert_true(in_loop);
		assert_int_equal(end, UNWIND_END_STOP);
	}
	unwinder_get_stats(uw, &st);
	unwinder_free(uw);
	symbolizer_free(sym);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	free(cap.buf);
	if (rc == -EPERM)
		skip();
	if (hits == 0) {
		/* e.g. under valgrind, which hides the vDSO from the program it runs */
		print_message("# SKIP: the child was never stopped in the [vdso] in %d tries\n", tries);
		skip();
	}
	assert_true(st.eh_frame_hdr > 0);
	assert_int_equal(st.no_info, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compare),
		cmocka_unit_test(test_fp_chain),
		cmocka_unit_test(test_capture_child),
		cmocka_unit_test(test_unwind_vdso),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
