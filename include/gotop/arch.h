/* arch.h: facts of the machine architectures gotop-perf reads: perf's numbers for the
 * registers each sample records, x86-64's DWARF register numbers, and the user address
 * range. Each fact names its source. */
#ifndef GOTOP_ARCH_H
#define GOTOP_ARCH_H

#include <stdint.h>

/* The registers the sampler records with every sample (perf_event_attr.sample_regs_user),
 * by what they are for: the instruction pointer, the stack pointer, the frame pointer,
 * Go's g register (R14 on amd64, R28 on arm64: go1.24 cmd/compile/internal/ssa/_gen
 * AMD64Ops.go, ARM64Ops.go) and arm64's link register. The sampler asks perf for all of
 * them; the repair, the verifier and the Go reader find them in perf_sample.regs. */
enum sampler_reg { SREG_IP, SREG_SP, SREG_FP, SREG_G, SREG_LR, SREG_COUNT };

/* perf register number for a role on this build's architecture, or -1. Inline: the
 * repair and the Go reader ask for four of them at every sample. */
static inline int sampler_reg(enum sampler_reg role)
{
#if defined(__x86_64__)
	/* linux arch/x86/include/uapi/asm/perf_regs.h: bp 6, sp 7, ip 8, r14 22 */
	static const int8_t roles[SREG_COUNT] = { 8, 7, 6, 22, -1 };
#elif defined(__aarch64__)
	/* linux arch/arm64/include/uapi/asm/perf_regs.h: x0..x30, sp 31, pc 32 */
	static const int8_t roles[SREG_COUNT] = { 32, 31, 29, 28, 30 };
#else
	static const int8_t roles[SREG_COUNT] = { -1, -1, -1, -1, -1 };
#endif
	return (unsigned)role < SREG_COUNT ? roles[role] : -1;
}

/* x86-64 DWARF register numbers (System V psABI, "DWARF Register Number Mapping"):
 * 0 rax, 1 rdx, 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return
 * address column (rip). libunwind's UNW_X86_64_* numbers are the same. */
enum { X86_64_DW_RBP = 6, X86_64_DW_RSP = 7, X86_64_DW_RIP = 16, X86_64_DW_NREGS = 17 };

/* The end of the user address range on x86-64 with 4-level paging (linux
 * arch/x86/include/asm/page_64_types.h TASK_SIZE_MAX): no user stack lies above it. */
#define X86_64_USER_ADDR_END 0x00007ffffffff000ULL

#endif
