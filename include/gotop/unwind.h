/* unwind.h: ground-truth unwinding of a stopped thread with libunwind-ptrace, given the
 * unwind information libunwind lacks for Go code (.debug_frame or .gopclntab's pcsp). */
#ifndef GOTOP_UNWIND_H
#define GOTOP_UNWIND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/arch.h" /* X86_64_DW_*: the registers of a thread_snapshot */

struct symbolizer;

/* What a thread looked like while it was stopped: its registers and a copy of its stack
 * from SP upward. Everything in it came from the target and is untrusted. */
/* regs[] is indexed by x86-64 DWARF register number (X86_64_DW_*). */
struct thread_snapshot {
	pid_t tid;
	uint64_t regs[X86_64_DW_NREGS];
	const uint8_t *stack; /* bytes at regs[X86_64_DW_RSP] ... */
	size_t stack_len;     /* ... this many of them */
};

/* One unwinder per target process, used from one thread. sym is borrowed (modules,
 * files, Go tables) and must outlive it. NULL with errno when libunwind cannot create an
 * address space. */
struct unwinder;
struct unwinder *unwinder_new(pid_t pid, struct symbolizer *sym);
void unwinder_free(struct unwinder *u); /* accepts NULL */

/* Why an unwind ended. Only TOP and STOP are the true outermost frame; after the others
 * the stack goes on in a way no unwinder can follow (or it was cut). */
enum unwind_end {
	UNWIND_END_TOP,    /* a Go top frame: runtime.goexit, runtime.mstart (TopFrame) */
	UNWIND_END_STOP,   /* libunwind reports the end (no return address) */
	UNWIND_END_SWITCH, /* a Go function that switches stacks (SPWrite: mcall, systemstack),
			    * or the signal handler (runtime.sigtramp: the interrupted code is
			    * on another stack) */
	UNWIND_END_ERROR,  /* unw_step failed */
	UNWIND_END_NOINFO, /* no unwind information for the last frame (code without CFI,
			    * garbage): libunwind could only have guessed its caller */
	UNWIND_END_MAX,    /* max frames */
};

/* Unwinds the snapshot with libunwind (unw_init_remote, unw_step) into pcs: pcs[0] is
 * the stopped pc, then the return addresses, outermost last; the walk stops where Go's
 * own traceback stops (TopFrame and SPWrite functions), when libunwind reports the end,
 * or at max; *end says which. Memory outside the stack copy (code, .eh_frame, deeper
 * stack) is read from the live process. Returns the number of pcs, or -errno when not
 * even the first frame could be set up. */
int unwinder_unwind(struct unwinder *u, const struct thread_snapshot *ts, uint64_t *pcs, size_t max,
		    enum unwind_end *end);

/* After an unwind that ended at runtime.cgocallback as a caller (UNWIND_END_SWITCH): the
 * registers of the frame its frame returns to by its CFI, the goroutine's state at the cgo
 * call below the C code (pc: the fake runtime.systemstack_switch, a pc rather than a
 * return address). Returns 1 with them, 0 when the last unwind did not get there. */
int unwinder_beyond(const struct unwinder *u, uint64_t *ip, uint64_t *sp, uint64_t *bp);

struct unwinder_stats {
	uint64_t unwinds;
	uint64_t go_debug_frame; /* Go frames unwound from .debug_frame */
	uint64_t go_pcsp;        /* Go frames unwound from .gopclntab's pcsp (stripped) */
	uint64_t native;         /* frames left to libunwind's own lookup (.eh_frame) */
	uint64_t live_reads;     /* words read from the live process, outside the copy */
	uint64_t step_errors;    /* unw_step failed (the stack ends there) */
	uint64_t eh_frame_hdr;   /* lookups in a mapped .eh_frame_hdr libunwind-ptrace could not
				  * open (the [vdso]) */
	uint64_t no_info;        /* frames without unwind information (the stack ends there) */
};
void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *st);

#endif
