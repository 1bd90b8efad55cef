/* disasm.h: x86-64 machine code decoded by Capstone, one instruction at a time.
 *
 * One decoder for everything that reads instructions: the annotate view (mnemonics,
 * operands, jump and call targets) and the Go runtime reader, which finds data symbols of
 * stripped binaries from the RIP-relative operands of the functions that use them. */
#ifndef GOTOP_DISASM_H
#define GOTOP_DISASM_H

#include <stddef.h>
#include <stdint.h>

enum disasm_kind {
	DISASM_OTHER,
	DISASM_JUMP,  /* unconditional jmp */
	DISASM_CJUMP, /* conditional jump, loop, jrcxz */
	DISASM_CALL,
	DISASM_RET,
	DISASM_TRAP, /* int3, ud2, hlt: no fall-through */
};

struct disasm_insn {
	uint64_t addr;
	uint8_t size;
	uint8_t kind;      /* enum disasm_kind */
	uint64_t target;   /* direct jump or call target; 0 when indirect or none */
	uint64_t rip_ref;  /* address a RIP-relative memory operand refers to; 0 when none */
	int rip_write;     /* that operand is written (mov to memory, xchg, ...) */
	char mnemonic[32]; /* Intel syntax, as objdump -M intel and perf annotate print */
	char ops[160];
};

struct disasm;

/* A decoder for x86-64; NULL with errno set when Capstone cannot be opened. */
struct disasm *disasm_open(void);
void disasm_close(struct disasm *d); /* accepts NULL */

/* Decodes the instruction at *code (*len bytes left, at address *addr) into *out and
 * advances all three past it. Returns 1 for an instruction, 0 at the end of the bytes,
 * -EILSEQ when the bytes at *code are not an instruction (the caller may skip a byte). */
int disasm_next(struct disasm *d, const uint8_t **code, size_t *len, uint64_t *addr,
		struct disasm_insn *out);

#endif
