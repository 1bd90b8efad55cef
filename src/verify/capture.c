/* capture.c: one stop of the verifier: ptrace-stop a thread, copy its registers, its stack
 * and the goroutine its m serves, let it go at once; and the kernel's frame-pointer walk
 * on such a copy. */
#include "config.h"

#include "gotop/verify.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gotop/arch.h"
#include "gotop/goread.h"
#include "gotop/goruntime.h"
#include "gotop/procinfo.h"
#include "gotop/util.h"

/* --- one stop --- */

static int collect_exit(pid_t tid)
{
	/* A traced thread that exits must be waited for, or it stays a zombie. Bounded:
	 * an exiting thread reports within milliseconds. */
	for (int i = 0; i < 200; i++) {
		int st;
		pid_t w = waitpid(tid, &st, __WALL | WNOHANG);

		if (w == tid || (w < 0 && errno == ECHILD))
			return -ESRCH;
		usleep(500);
	}
	return -ESRCH;
}

/* While a thread of the target is stopped, the verifier must run at once: on a busy
 * machine an ordinary thread waits a scheduler tick or more to be woken, and the
 * target waits with it. With CAP_SYS_NICE the stop
 * window runs at the lowest real-time priority; without it, as it is. */
static int boost(int on)
{
	struct sched_param sp = { .sched_priority = on ? 1 : 0 };

	return pthread_setschedparam(pthread_self(), on ? SCHED_FIFO : SCHED_OTHER, &sp) == 0;
}

static int capture(pid_t pid, pid_t tid, size_t stack_max, struct verify_capture *cap, int boosted);

/* Reads len bytes of the target at addr; 0 only when all were read. */
static int rd(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	if (!addr || addr >= X86_64_USER_ADDR_END)
		return -EFAULT;
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -EFAULT;
}

static uint64_t word(const uint8_t *buf, uint32_t off)
{
	uint64_t v;

	memcpy(&v, buf + off, 8);
	return v;
}

/* verify_goroutine holds what the BPF program copies (goread_cont). */
_Static_assert(sizeof(((struct verify_goroutine *)0)->ret) == 8 * GOREAD_CONT_FRAMES, "walk budget");
_Static_assert(sizeof(((struct verify_goroutine *)0)->words) == 8 * GOREAD_CONT_WORDS, "words at sp");

#define GR_STRUCT 512 /* most bytes of a g or m read (the fields used are in the first 256) */
#define GR_STACK_MAX (1ULL << 30) /* a goroutine stack larger than this is not one */

/* A word of the goroutine's stack: from the stop's copy, else read from the target. */
static int gword(pid_t pid, const struct verify_goroutine *gr, uint64_t addr, uint64_t *v)
{
	if (addr >= gr->base && addr - gr->base < gr->len && gr->len - (addr - gr->base) >= 8) {
		memcpy(v, gr->buf + (addr - gr->base), 8);
		return 0;
	}
	return rd(pid, addr, v, 8);
}

/* The words at g.sched.sp and the frame-pointer walk from g.sched.bp, by the BPF program's
 * rule (src/go/bpf/gobpf.bpf.c read_cont), so that the repaired chain is the one a sample
 * at this moment gets: each frame record inside the goroutine's stack and above the one
 * before, GOBPF_CONT_FRAMES in all; while newstack copies the stack (copying: status
 * _Gcopystack), the rest of them in the old stack the walk left into, which holds the same
 * frames until copystack frees it. */
static void walk_goroutine(pid_t pid, int copying, struct verify_goroutine *gr)
{
	uint64_t bp = gr->bp, next = 0, jump = 0, pair[2];
	size_t i, n = 0;

	gr->cont = 0;
	gr->nret = 0;
	if (!gr->pc || gr->sp < gr->lo || gr->sp + sizeof(gr->words) > gr->hi)
		return;
	for (i = 0; i < GP_ARRAY_SIZE(gr->words); i++)
		if (gword(pid, gr, gr->sp + 8 * i, &gr->words[i]))
			return;
	gr->cont = 1;
	for (i = 0; i < GOBPF_CONT_FRAMES && i < GP_ARRAY_SIZE(gr->ret); i++) {
		if (bp < gr->sp || bp + 16 > gr->hi || (bp & 7))
			break;
		if (gword(pid, gr, bp, &next) || gword(pid, gr, bp + 8, &gr->ret[i]))
			break;
		n = i + 1;
		jump = next;
		if (next <= bp)
			break;
		bp = next;
	}
	gr->nret = n;
	if (!copying || !n || !jump || jump >= X86_64_USER_ADDR_END || (jump & 7) ||
	    (jump >= gr->sp && jump + 16 <= gr->hi))
		return;
	bp = jump;
	for (i = 0; i < GOBPF_CONT_FRAMES && gr->nret < GP_ARRAY_SIZE(gr->ret); i++) {
		if (rd(pid, bp, pair, sizeof(pair)))
			break;
		gr->ret[gr->nret++] = pair[1];
		if (pair[0] <= bp || (pair[0] & 7) || pair[0] + 16 > jump + (gr->hi - gr->lo))
			break;
		bp = pair[0];
	}
}

/* A thread in Go code of a cgo callback, on its goroutine g's stack at sp: the state the
 * goroutine left when it entered the cgo call, found as the BPF program finds it
 * (gobpf-abi.h GOBPF_CONT_CB, gort_cgocb_layout): from g0.sched.sp, the word there, and
 * asmcgocall's g0 frame, whose g must be g. Sets gr->pc, sp and bp (gr->sp and bp hold
 * g.sched's on entry) and returns 1; 0 when the thread is not in a callback of g. */
static int read_callback(pid_t pid, const struct gort_offsets *o, const uint8_t *mb, uint64_t g,
			 uint64_t sp, struct verify_goroutine *gr)
{
	struct gort_cgocb l;
	uint64_t g0 = word(mb, o->m_g0), s0, s1, a, pair[2], pc;

	if (gort_cgocb_layout(o, &l) || !g0 || (g0 & 7) || rd(pid, g0 + o->g_sched_sp, &s0, 8) ||
	    !s0 || (s0 & 7) || s0 >= X86_64_USER_ADDR_END || rd(pid, s0, &s1, 8) || s1 <= s0 ||
	    s1 >= X86_64_USER_ADDR_END || s1 < l.frame)
		return 0;
	a = ((s1 - l.frame) & ~15ULL) + l.off;
	if (a < s0 || rd(pid, a, pair, sizeof(pair)) || pair[1] != g || !pair[0] ||
	    pair[0] > gr->hi - gr->lo || (pair[0] & 7))
		return 0;
	a = gr->hi - pair[0];
	if (a <= sp || a - 8 < gr->lo || a + sizeof(gr->words) > gr->hi || rd(pid, a - 8, &pc, 8))
		return 0;
	if (gr->sp != a)
		gr->bp = a + l.bp;
	gr->pc = pc;
	gr->sp = a;
	gr->cb = 1;
	return 1;
}

/* Whether m (read into mb) is thread tid's m and g one of its goroutines (0: any). */
static int m_of(const struct gort_offsets *o, const uint8_t *mb, pid_t tid, uint64_t g)
{
	if (word(mb, o->m_procid) != (uint64_t)tid)
		return 0;
	return !g || word(mb, o->m_g0) == g || word(mb, o->m_gsignal) == g || word(mb, o->m_curg) == g;
}

/* The goroutine thread tid's m serves (m.curg), while the thread is stopped. Its m from the
 * g register (R14 in Go code, go1.17+ cmd/compile/abi-internal.md; C code called through cgo
 * keeps it, callee-saved, unless it uses R14 itself) when that is a g of this thread
 * (m.procid is tid and the g is m.g0, m.gsignal or m.curg), or else from hint; then curg.m
 * must be that m, the stopped SP off curg's stack (on g0, gsignal or in C code: a goroutine
 * running on its own stack needs no crossing, unless it runs a cgo callback: read_callback)
 * and its saved SP (g.sched.sp, or g.syscallsp of a cgo call) on it. The stack is copied
 * from the lower saved SP up, at most stack_max bytes and never past stack.hi. */
static void read_goroutine(pid_t pid, pid_t tid, const struct gort_offsets *o, uint64_t greg,
			   uint64_t sp, uint64_t hint, size_t stack_max, struct verify_goroutine *gr)
{
	uint8_t gb[GR_STRUCT], mb[GR_STRUCT];
	uint64_t m = 0, curg, base, top;
	uint32_t status, gsz, msz;
	int in_sched, in_sys;

	gr->have = 0;
	gr->len = 0;
	gr->m = 0;
	gr->g = 0;
	gr->cb = 0;
	/* Only as many bytes as the fields read need (a g or m may end a mapping), and none
	 * past the buffers: the offsets may come from the target's own DWARF. */
	gsz = GP_MAX(GP_MAX(GP_MAX(o->g_stack_lo, o->g_stack_hi), GP_MAX(o->g_m, o->g_sched_pc)),
		     GP_MAX(GP_MAX(o->g_sched_sp, o->g_sched_bp), GP_MAX(o->g_syscallpc, o->g_syscallsp)));
	gsz = GP_MAX(GP_MAX(gsz, o->g_syscallbp), o->g_atomicstatus) + 8;
	msz = GP_MAX(GP_MAX(o->m_curg, o->m_procid), GP_MAX(o->m_g0, o->m_gsignal)) + 8;
	if (!o->g_m || gsz > GR_STRUCT || msz > GR_STRUCT)
		return;
	if (greg && !(greg & 7) && rd(pid, greg + o->g_m, &m, 8) == 0 && m && !(m & 7) &&
	    rd(pid, m, mb, msz) == 0 && m_of(o, mb, tid, greg)) {
		/* found through the g register */
	} else if (hint && !(hint & 7) && rd(pid, hint, mb, msz) == 0 && m_of(o, mb, tid, 0)) {
		m = hint;
	} else {
		return;
	}
	gr->m = m;
	curg = word(mb, o->m_curg);
	if (!curg || (curg & 7) || rd(pid, curg, gb, gsz) != 0 || word(gb, o->g_m) != m)
		return;
	gr->g = curg;
	gr->lo = word(gb, o->g_stack_lo);
	gr->hi = word(gb, o->g_stack_hi);
	if (gr->lo >= gr->hi || gr->hi - gr->lo > GR_STACK_MAX)
		return;
	gr->pc = word(gb, o->g_sched_pc);
	gr->sp = word(gb, o->g_sched_sp);
	gr->bp = word(gb, o->g_sched_bp);
	gr->scpc = o->g_syscallpc ? word(gb, o->g_syscallpc) : 0;
	gr->scsp = o->g_syscallsp ? word(gb, o->g_syscallsp) : 0;
	gr->scbp = o->g_syscallbp ? word(gb, o->g_syscallbp) : 0;
	/* On its own stack only a cgo callback's goroutine is crossed. */
	if (sp >= gr->lo && sp < gr->hi) {
		if (!read_callback(pid, o, mb, curg, sp, gr))
			return;
		gr->scpc = gr->scsp = gr->scbp = 0;
	}
	in_sched = gr->pc && gr->sp >= gr->lo && gr->sp < gr->hi;
	in_sys = gr->scpc && gr->scsp >= gr->lo && gr->scsp < gr->hi;
	if (!in_sched && !in_sys)
		return;
	base = in_sched && in_sys ? GP_MIN(gr->sp, gr->scsp) : in_sched ? gr->sp : gr->scsp;
	top = GP_MIN(gr->hi, base + stack_max);
	if (gr->cap < top - base) {
		free(gr->buf);
		gr->buf = xmalloc(top - base);
		gr->cap = top - base;
	}
	{
		/* A partial copy (a page unmapped since) keeps what was read. */
		struct iovec l = { gr->buf, top - base }, r = { (void *)(uintptr_t)base, top - base };
		ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (got <= 0)
			return;
		gr->len = (size_t)got;
	}
	gr->base = base;
	gr->have = 1;
	/* _Gcopystack (8, go1.19 to go1.27 runtime/runtime2.go), the _Gscan bit cleared */
	status = (uint32_t)word(gb, o->g_atomicstatus);
	walk_goroutine(pid, (status & ~0x1000u) == 8, gr);
}

int verify_capture(pid_t pid, pid_t tid, size_t stack_max, struct verify_capture *cap)
{
	int boosted = boost(1), rc = capture(pid, tid, stack_max, cap, boosted);

	if (boosted)
		boost(0);
	return rc;
}

static int capture(pid_t pid, pid_t tid, size_t stack_max, struct verify_capture *cap, int boosted)
{
	struct user_regs_struct r;
	int status, sig = 0, rc;
	uint64_t t0;

	cap->signal = 0;
	cap->group_stop = 0;
	cap->stopped_ns = 0;
	cap->gr.have = 0;
	cap->gr.m = 0;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		int err = errno;
		struct proc_stat st;

		/* An exiting thread refuses to be traced with EPERM (linux kernel/ptrace.c
		 * ptrace_attach: PF_EXITING, 0x4 in /proc/PID/stat's flags, linux
		 * include/linux/sched.h): that is a thread gone, not a permission. */
		if (err == EPERM && (procinfo_stat(pid, tid, &st) != 0 || st.state == 'Z' || st.state == 'X' ||
				     (st.flags & 0x4)))
			return -ESRCH;
		return -err;
	}
	t0 = util_now_ns();
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0) {
		rc = -errno;
		if (rc == -ESRCH)
			return collect_exit(tid);
		/* Not stopped yet, so PTRACE_DETACH would fail; the interrupt never came, so
		 * waiting for the stop below is the way out. Unreachable in practice. */
	}
	for (;;) {
		pid_t w = waitpid(tid, &status, __WALL);

		if (w < 0) {
			if (errno == EINTR)
				continue; /* a signal for gotop-perf: finish the stop first */
			return -errno;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			/* The interrupt (SIGTRAP), or a group stop that is in effect
			 * (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU: ptrace(2) "group-stop"). */
			cap->group_stop = WSTOPSIG(status) != SIGTRAP;
		} else if ((status >> 16) == 0) {
			/* A signal arrived first (signal-delivery-stop): its registers are the
			 * interrupted user state all the same. Pass it on at detach. */
			sig = WSTOPSIG(status);
		}
		break;
	}
	/* The thread stopped at most now. Boosted, the verifier wakes within microseconds of
	 * the stop, so the stop is timed from here: the wait before it was the thread
	 * getting to its stop (a runnable thread waiting for a CPU is not held up by us).
	 * Not boosted, the whole time since the interrupt counts, an upper bound. */
	if (boosted)
		t0 = util_now_ns();
	rc = 0;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0) {
		rc = -errno;
	} else {
		struct thread_snapshot *ts = &cap->ts;
		ssize_t got;

		/* x86-64 DWARF register order (System V psABI): rax rdx rcx rbx rsi rdi rbp
		 * rsp r8-r15, then rip as the return-address column. */
		uint64_t regs[X86_64_DW_NREGS] = { r.rax, r.rdx, r.rcx, r.rbx, r.rsi, r.rdi, r.rbp, r.rsp, r.r8,
						r.r9,  r.r10, r.r11, r.r12, r.r13, r.r14, r.r15, r.rip };
		memcpy(ts->regs, regs, sizeof(regs));
		ts->tid = tid;
		if (cap->cap < stack_max) {
			free(cap->buf);
			cap->buf = xmalloc(stack_max);
			cap->cap = stack_max;
		}
		{
			/* Stops at the first unmapped page: a partial copy is fine. */
			struct iovec l = { cap->buf, stack_max }, rm = { (void *)(uintptr_t)r.rsp, stack_max };
			got = stack_max ? process_vm_readv(pid, &l, 1, &rm, 1, 0) : 0;
		}
		ts->stack = cap->buf;
		ts->stack_len = got > 0 ? (size_t)got : 0;
		if (cap->go)
			read_goroutine(pid, tid, cap->go, r.r14, r.rsp, cap->m_hint, stack_max, &cap->gr);
	}
	if (ptrace(PTRACE_DETACH, tid, NULL, (void *)(uintptr_t)sig) < 0 && errno == ESRCH) {
		/* Killed while stopped (the process exited): nothing left to release, but as
		 * its tracer we must reap it, or the whole process stays a zombie. */
		rc = collect_exit(tid);
	}
	cap->stopped_ns = util_now_ns() - t0;
	cap->signal = sig;
	return rc;
}

void verify_explain_eperm(pid_t pid, int err, char *buf, size_t len)
{
	char path[64], *status, *line;
	long tracer = 0, scope = -1;
	char *s;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	status = util_read_file(path, 1 << 16, NULL);
	if (status && (line = strstr(status, "\nTracerPid:")) != NULL)
		tracer = strtol(line + 11, NULL, 10);
	free(status);
	s = util_read_file("/proc/sys/kernel/yama/ptrace_scope", 64, NULL);
	if (s)
		scope = strtol(s, NULL, 10);
	free(s);
	if (err == -ESRCH || err == -ENOENT || procinfo_uid(pid) < 0) {
		snprintf(buf, len, "process %d is gone", (int)pid);
	} else if (tracer > 0) {
		char comm[64] = "?";
		struct proc_stat st;

		if (procinfo_stat((pid_t)tracer, 0, &st) == 0)
			snprintf(comm, sizeof(comm), "%s", st.comm);
		snprintf(buf, len, "process %d is already traced by process %ld (%s), e.g. a debugger; "
			 "only one tracer at a time", (int)pid, tracer, comm);
	} else if (scope >= 3) {
		snprintf(buf, len, "ptrace is disabled for everyone: kernel.yama.ptrace_scope is 3");
	} else if (scope >= 1 && geteuid() != 0) {
		snprintf(buf, len, "ptrace not permitted: kernel.yama.ptrace_scope is %ld; run as root, grant "
			 "CAP_SYS_PTRACE, or set it to 0", scope);
	} else if ((uid_t)procinfo_uid(pid) != geteuid()) {
		snprintf(buf, len, "ptrace not permitted: process %d belongs to another user; run as root or "
			 "with CAP_SYS_PTRACE", (int)pid);
	} else {
		snprintf(buf, len, "ptrace not permitted on process %d (%s): it may be non-dumpable "
			 "(prctl PR_SET_DUMPABLE) or protected by a security module; CAP_SYS_PTRACE is needed",
			 (int)pid, strerror(-err));
	}
}

/* --- the kernel's walk --- */

static int read_word(pid_t pid, const struct thread_snapshot *ts, uint64_t addr, uint64_t *v)
{
	uint64_t sp = ts->regs[X86_64_DW_RSP];

	if (addr >= sp && addr - sp < ts->stack_len && ts->stack_len - (addr - sp) >= 8) {
		memcpy(v, ts->stack + (addr - sp), 8);
		return 0;
	}
	struct iovec l = { v, 8 }, r = { (void *)(uintptr_t)addr, 8 };
	return process_vm_readv(pid, &l, 1, &r, 1, 0) == 8 ? 0 : -EFAULT;
}

size_t verify_fp_chain(pid_t pid, const struct thread_snapshot *ts, uint64_t *out, size_t max)
{
	/* linux arch/x86/events/core.c perf_callchain_user: store regs->ip, then while the
	 * frame at fp is a valid user address and both words read, store the return
	 * address (whatever it is, 0 included) and follow the saved frame pointer. */
	uint64_t fp = ts->regs[X86_64_DW_RBP];
	size_t n = 0;

	if (max == 0)
		return 0;
	out[n++] = ts->regs[X86_64_DW_RIP];
	while (n < max) {
		uint64_t next, ra;

		if (fp >= X86_64_USER_ADDR_END - 16)
			break;
		if (read_word(pid, ts, fp, &next) || read_word(pid, ts, fp + 8, &ra))
			break;
		out[n++] = ra;
		fp = next;
	}
	return n;
}

