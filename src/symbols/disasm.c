/* disasm.c: x86-64 instructions through Capstone (capstone/capstone.h), with the few facts
 * callers need taken from its detail records: the kind of control transfer, a direct
 * target, and the address of a RIP-relative memory operand. */
#include "config.h"
#include "gotop/disasm.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "gotop/util.h"

struct disasm {
	csh handle;
	cs_insn *insn; /* one record reused by cs_disasm_iter, allocated once */
};

/* Capstone's functions, from the library opened at the first disassembler (util_dlsyms;
 * Linux tools/perf/util/capstone.c opens it the same way): its tables of every
 * architecture's instructions are relocated at load, which every start of gotop-perf would
 * pay, and most runs disassemble nothing. */
static struct {
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*close)(csh *handle);
	cs_err (*option)(csh handle, cs_opt_type type, size_t value);
	cs_insn *(*malloc)(csh handle);
	void (*free)(cs_insn *insn, size_t count);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address,
			    cs_insn *insn);
	bool (*insn_group)(csh handle, const cs_insn *insn, unsigned int group_id);
} cs;
static pthread_once_t cs_once = PTHREAD_ONCE_INIT;
static int cs_loaded;

static void cs_load(void)
{
	static const char *const names[] = { "cs_open", "cs_close", "cs_option", "cs_malloc",
					     "cs_free", "cs_disasm_iter", "cs_insn_group" };
	void **const slots[] = { (void **)&cs.open, (void **)&cs.close, (void **)&cs.option,
				 (void **)&cs.malloc, (void **)&cs.free, (void **)&cs.disasm_iter,
				 (void **)&cs.insn_group };
	char why[256];

	_Static_assert(GP_ARRAY_SIZE(names) == GP_ARRAY_SIZE(slots), "one slot a name");
	cs_loaded = util_dlsyms(CAPSTONE_SONAME, names, slots, GP_ARRAY_SIZE(names), why,
				sizeof(why)) == 0;
}

struct disasm *disasm_open(void)
{
	struct disasm *d;

	pthread_once(&cs_once, cs_load);
	if (!cs_loaded) {
		errno = ENOSYS;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (cs.open(CS_ARCH_X86, CS_MODE_64, &d->handle) != CS_ERR_OK) {
		free(d);
		errno = ENOSYS;
		return NULL;
	}
	cs.option(d->handle, CS_OPT_DETAIL, CS_OPT_ON);
	d->insn = cs.malloc(d->handle);
	if (!d->insn) {
		cs.close(&d->handle);
		free(d);
		errno = ENOMEM;
		return NULL;
	}
	return d;
}

void disasm_close(struct disasm *d)
{
	if (!d)
		return;
	cs.free(d->insn, 1);
	cs.close(&d->handle);
	free(d);
}

static uint8_t insn_kind(csh h, const cs_insn *in)
{
	if (cs.insn_group(h, in, CS_GRP_CALL))
		return DISASM_CALL;
	if (cs.insn_group(h, in, CS_GRP_RET) || cs.insn_group(h, in, CS_GRP_IRET))
		return DISASM_RET;
	if (cs.insn_group(h, in, CS_GRP_JUMP))
		return in->id == X86_INS_JMP || in->id == X86_INS_LJMP ? DISASM_JUMP
								       : DISASM_CJUMP;
	if (in->id == X86_INS_INT3 || in->id == X86_INS_UD2 || in->id == X86_INS_HLT)
		return DISASM_TRAP;
	return DISASM_OTHER;
}

int disasm_next(struct disasm *d, const uint8_t **code, size_t *len, uint64_t *addr,
		struct disasm_insn *out)
{
	const cs_insn *in = d->insn;
	const cs_x86 *x;

	if (*len == 0)
		return 0;
	if (!cs.disasm_iter(d->handle, code, len, addr, d->insn))
		return -EILSEQ;
	memset(out, 0, sizeof(*out));
	out->addr = in->address;
	out->size = in->size;
	out->kind = insn_kind(d->handle, in);
	snprintf(out->mnemonic, sizeof(out->mnemonic), "%s", in->mnemonic);
	snprintf(out->ops, sizeof(out->ops), "%s", in->op_str);
	x = &in->detail->x86;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_IMM && (out->kind == DISASM_CALL ||
					       out->kind == DISASM_JUMP ||
					       out->kind == DISASM_CJUMP))
			out->target = (uint64_t)op->imm;
		if (op->type == X86_OP_MEM && op->mem.base == X86_REG_RIP &&
		    op->mem.index == X86_REG_INVALID) {
			/* RIP-relative: relative to the next instruction. */
			out->rip_ref = in->address + in->size + (uint64_t)op->mem.disp;
			out->rip_write = (op->access & CS_AC_WRITE) != 0;
		}
	}
	return 1;
}
