/* test-disasm.c: the Capstone wrapper on hand-assembled x86-64 bytes, whose decoding is
 * fixed by the Intel SDM (opcode tables, ModRM with mod=00 rm=101 meaning [rip+disp32]). */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>

#include "gotop/disasm.h"

static void test_kinds_and_targets(void **state)
{
	/* mov rax,[rip+0x10]; call rel32 +5; jne rel8 -2; jmp rel8 0; ret; mov [rip+8],rcx */
	static const uint8_t b[] = { 0x48, 0x8b, 0x05, 0x10, 0, 0, 0, 0xe8, 5, 0, 0, 0,
				     0x75, 0xfe, 0xeb, 0x00, 0xc3, 0x48, 0x89, 0x0d, 8, 0, 0, 0 };
	const uint8_t *c = b;
	size_t n = sizeof(b);
	uint64_t a = 0x1000;
	struct disasm_insn in;
	struct disasm *d = disasm_open();

	(void)state;
	assert_non_null(d);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_string_equal(in.mnemonic, "mov");
	assert_int_equal(in.size, 7);
	assert_int_equal(in.kind, DISASM_OTHER);
	assert_int_equal(in.rip_ref, 0x1007 + 0x10);
	assert_false(in.rip_write);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_int_equal(in.kind, DISASM_CALL);
	assert_int_equal(in.target, 0x100c + 5);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_int_equal(in.kind, DISASM_CJUMP);
	assert_int_equal(in.target, 0x100c);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_int_equal(in.kind, DISASM_JUMP);
	assert_int_equal(in.target, 0x1010);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_int_equal(in.kind, DISASM_RET);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 1);
	assert_int_equal(in.rip_ref, 0x1018 + 8);
	assert_true(in.rip_write);
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), 0);
	disasm_close(d);
}

static void test_truncated(void **state)
{
	static const uint8_t b[] = { 0x48, 0x8b, 0x05, 0x10 }; /* mov cut inside disp32 */
	const uint8_t *c = b;
	size_t n = sizeof(b);
	uint64_t a = 0;
	struct disasm_insn in;
	struct disasm *d = disasm_open();

	(void)state;
	assert_int_equal(disasm_next(d, &c, &n, &a, &in), -EILSEQ);
	disasm_close(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_and_targets),
		cmocka_unit_test(test_truncated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
