// garbageg_amd64.s: ABI0 assembly for the garbageg workload: the goroutine's g from TLS,
// and a CPU-burning loop that keeps R14 (the g register of ABIInternal code) and the other
// general registers loaded with garbage.
//
// R14 is undefined in ABI0 code, and the ABIInternal->ABI0 wrapper reloads it from TLS on
// return (go1.23 src/cmd/compile/abi-internal.md, "R14 | Current goroutine" and "In ABI0,
// these are undefined"). Assembly functions are never async safe points
// (go1.23 runtime/preempt.go isAsyncSafePoint, funcFlag_ASM), and the signal trampoline
// reloads R14 from TLS before any Go code runs (runtime/sys_linux_amd64.s sigtramp), so the
// runtime never looks at the garbage.

#include "textflag.h"

// func getg() uintptr: the current goroutine's g, from thread-local storage (the slot the
// runtime keeps g in: runtime/go_tls.h, MOVQ (TLS) is g(CX) of get_tls).
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ	(TLS), AX
	MOVQ	AX, ret+0(FP)
	RET

// func spinRegs(tab *uintptr, n, rounds uintptr) uint64
//
// tab holds n+8 words; tab[n+i] == tab[i]. Each round loads R14, R8-R13, R15 and BP from
// tab[k..k+8] (k cycling over 0..n-1) and then burns about 4096 multiply-add-rotate steps
// on AX with those registers held, so a sample taken anywhere in the loop sees them.
// The non-zero frame makes the assembler save BP in the prologue and restore it in the
// epilogue (cmd/internal/obj/x86/obj6.go preprocess: bpsize when framesize > 0), so the
// garbage BP never reaches the caller. Returns AX, so the work cannot be skipped.
TEXT ·spinRegs(SB), NOSPLIT, $8-32
	MOVQ	tab+0(FP), SI
	MOVQ	n+8(FP), CX
	MOVQ	rounds+16(FP), DI
	MOVQ	$0x9e3779b97f4a7c15, AX
	XORQ	DX, DX
	TESTQ	CX, CX
	JEQ	done
	TESTQ	DI, DI
	JEQ	done
loop:
	MOVQ	0(SI)(DX*8), R14
	MOVQ	8(SI)(DX*8), R8
	MOVQ	16(SI)(DX*8), R9
	MOVQ	24(SI)(DX*8), R10
	MOVQ	32(SI)(DX*8), R11
	MOVQ	40(SI)(DX*8), R12
	MOVQ	48(SI)(DX*8), R13
	MOVQ	56(SI)(DX*8), R15
	MOVQ	64(SI)(DX*8), BP
	MOVQ	$4096, BX
spin:
	IMUL3Q	$0x5851f42d, AX, AX
	ADDQ	$0x14057b7, AX
	ROLQ	$17, AX
	DECQ	BX
	JNZ	spin
	INCQ	DX
	CMPQ	DX, CX
	JB	next
	XORQ	DX, DX
next:
	DECQ	DI
	JNZ	loop
done:
	MOVQ	AX, ret+24(FP)
	RET
