/* goruntime-vars.c: the addresses of the runtime's variables that name every m and every
 * goroutine (runtime.allm, runtime.allglen, runtime.allgptr) and the wait reasons' names
 * (runtime.waitReasonStrings), found without symbols: stripped binaries keep .gopclntab,
 * which still names the functions that use these variables, and their machine code refers
 * to them RIP-relatively. Each candidate is then checked against the target's memory.
 *
 * Format facts (runtime/proc.go, go1.19 L517-595, go1.27 L684-762):
 * - forEachGRace reads `allglen` and then `allgptr` (atomicAllG: "Readers should read
 *   allglen before allgptr"), and these are its first two memory operands: the first two
 *   RIP-relative operands of its code are allglen and allgptr, in that order.
 * - mcommoninit does `mp.alllink = allm` (a load of allm) and then
 *   `atomicstorep(unsafe.Pointer(&allm), ...)` (its address taken): allm is the one
 *   variable of mcommoninit both loaded and addressed (LEA). Its other operands are
 *   sched.lock (addressed only), writeBarrier (compared), fastrand seeds and debug fields
 *   (loaded only).
 * - waitReason.String (runtime/runtime2.go) is `if w < 0 || w >= waitReason(len(
 *   waitReasonStrings)) { return "unknown wait reason" }; return waitReasonStrings[w]`:
 *   a compare with the array's length as immediate, a LEA of the constant string, then a
 *   LEA of the array.
 * - (*mspan).ensureSwept (runtime/mgcsweep.go) starts with `sg := mheap_.sweepgen` and
 *   compares the span's generation with it in a loop: &mheap_.sweepgen is the one operand
 *   it loads twice or more and never takes by address (sweep.active, the other one it
 *   loads, is also passed by address).
 * Only amd64 code is decoded (include/gotop/disasm.h); arm64 binaries need their symbols.
 */
#include "config.h"
#include "goruntime-int.h"

#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "gotop/disasm.h"
#include "gotop/gopclntab.h"
#include "gotop/maps.h"
#include "gotop/symtab.h"

#define FN_BYTES 1024  /* bytes of a function decoded at most */
#define FN_REFS 64     /* RIP-relative operands kept per function */
#define WAIT_MAX 96    /* longest waitReasonStrings accepted (go1.27 has 47) */

#define ref gort_ref

/* The file bytes of [vaddr, vaddr + len) in an executable PT_LOAD segment, or NULL. */
static const uint8_t *code_bytes(Elf *elf, uint64_t vaddr, size_t *len)
{
	size_t nph, fsize, i;
	const char *raw = elf_rawfile(elf, &fsize);

	if (!raw || elf_getphdrnum(elf, &nph) != 0)
		return NULL;
	for (i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr < ph.p_vaddr || vaddr >= ph.p_vaddr + ph.p_filesz)
			continue;
		if (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset)
			return NULL;
		*len = GP_MIN(*len, (size_t)(ph.p_vaddr + ph.p_filesz - vaddr));
		return (const uint8_t *)raw + ph.p_offset + (vaddr - ph.p_vaddr);
	}
	return NULL;
}

/* The function named name, by a scan of the table (a few look-ups at set-up). */
static int find_func(const struct gopcln *t, const char *name, struct gopcln_func *out)
{
	size_t i, n = gopcln_nfunc(t);

	for (i = 0; i < n; i++)
		if (gopcln_func_at(t, i, out) == 0 && out->name && strcmp(out->name, name) == 0)
			return 0;
	return -ENOENT;
}

/* Bytes a memory operand reads or writes, from Capstone's Intel syntax ("qword ptr"). */
static uint8_t op_width(const char *ops)
{
	static const struct { const char *s; uint8_t w; } w[] = {
		{ "xmmword ptr", 16 }, { "qword ptr", 8 }, { "dword ptr", 4 },
		{ "word ptr", 2 },     { "byte ptr", 1 },
	};
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(w); i++)
		if (strstr(ops, w[i].s))
			return w[i].w;
	return 0;
}

/* The RIP-relative operands of a function's code, in order, up to max and the first
 * max_bytes bytes. Returns how many. */
static int func_refs(struct disasm *d, Elf *elf, const struct gopcln_func *f, size_t max_bytes,
		     struct ref *refs, int max)
{
	size_t len = GP_MIN((size_t)(f->end - f->entry), max_bytes);
	const uint8_t *code = code_bytes(elf, f->entry, &len);
	uint64_t addr = f->entry, imm = 0;
	int n = 0;

	if (!code || f->end <= f->entry)
		return 0;
	while (n < max) {
		struct disasm_insn in;
		uint64_t at = addr;
		int rc = disasm_next(d, &code, &len, &addr, &in);

		if (rc == 0)
			break;
		if (rc < 0) { /* not code (padding): skip a byte */
			code++;
			len--;
			addr++;
			continue;
		}
		if (!strcmp(in.mnemonic, "cmp")) {
			const char *c = strrchr(in.ops, ',');

			imm = c ? strtoull(c + 1, NULL, 0) : 0;
		}
		if (!in.rip_ref)
			continue;
		refs[n].addr = in.rip_ref;
		refs[n].at = at - f->entry;
		snprintf(refs[n].mnemonic, sizeof(refs[n].mnemonic), "%.15s", in.mnemonic);
		refs[n].width = strcmp(in.mnemonic, "lea") ? op_width(in.ops) : 0;
		refs[n].imm = imm;
		n++;
	}
	return n;
}

static int refs_of(struct disasm *d, Elf *elf, const struct gopcln *t, const char *name,
		   struct ref *refs)
{
	struct gopcln_func f;

	return find_func(t, name, &f) == 0 ? func_refs(d, elf, &f, FN_BYTES, refs, FN_REFS) : 0;
}

int gort_code_refs(Elf *elf, const struct gopcln *t, const char *name, size_t max_bytes,
		   struct gort_ref *refs, int max)
{
	struct gopcln_func f;
	struct disasm *d;
	GElf_Ehdr eh;
	int n;

	if (!elf || !t || !name || max <= 0 || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	if (find_func(t, name, &f))
		return -ENOENT;
	d = disasm_open();
	if (!d)
		return -errno;
	n = func_refs(d, elf, &f, max_bytes, refs, max);
	disasm_close(d);
	return n;
}

int gort_vars_find(Elf *elf, const struct gopcln *t, struct gort_vars *out)
{
	struct ref refs[FN_REFS];
	struct disasm *d;
	GElf_Ehdr eh;
	int n, i, j;

	memset(out, 0, sizeof(*out));
	if (!elf || !t || !gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_machine != EM_X86_64)
		return -ENOTSUP;
	d = disasm_open();
	if (!d)
		return -errno;

	n = refs_of(d, elf, t, "runtime.forEachGRace", refs);
	if (n >= 2 && refs[0].addr != refs[1].addr && !strcmp(refs[0].mnemonic, "mov") &&
	    !strcmp(refs[1].mnemonic, "mov")) {
		out->allglen = refs[0].addr;
		out->allgptr = refs[1].addr;
	}

	n = refs_of(d, elf, t, "runtime.mcommoninit", refs);
	for (i = 0; i < n && !out->allm; i++) {
		if (strcmp(refs[i].mnemonic, "mov") != 0)
			continue;
		for (j = 0; j < n; j++)
			if (refs[j].addr == refs[i].addr && !strcmp(refs[j].mnemonic, "lea")) {
				out->allm = refs[i].addr;
				break;
			}
	}

	n = refs_of(d, elf, t, "runtime.waitReason.String", refs);
	if (n >= 2 && !strcmp(refs[1].mnemonic, "lea") && refs[1].imm > 0 &&
	    refs[1].imm <= WAIT_MAX) {
		out->wait_strings = refs[1].addr;
		out->nwait = (uint32_t)refs[1].imm;
	}

	n = refs_of(d, elf, t, "runtime.(*mspan).ensureSwept", refs);
	for (i = 0; i < n && !out->sweepgen; i++) {
		int loads = 0, lea = 0;

		for (j = 0; j < n; j++) {
			if (refs[j].addr != refs[i].addr)
				continue;
			loads += !strcmp(refs[j].mnemonic, "mov");
			lea += !strcmp(refs[j].mnemonic, "lea");
		}
		if (loads >= 2 && !lea)
			out->sweepgen = refs[i].addr;
	}
	disasm_close(d);
	return out->allm || out->allglen || out->wait_strings || out->sweepgen ? 0 : -ENOENT;
}

/* A g as far as its fixed fields go: a stack of sane size and a known status. */
static bool g_plausible(struct gort *g, const struct gp_mem *mem, uint64_t addr)
{
	const struct gort_offsets *o = &g->off;
	uint64_t lo, hi;
	uint32_t st;

	if (!ptr_ok(addr) || mem_read_u64(mem, addr + o->g_stack_lo, &lo) ||
	    mem_read_u64(mem, addr + o->g_stack_hi, &hi) ||
	    mem_read_u32(mem, addr + o->g_atomicstatus, &st))
		return false;
	if ((st & ~(uint32_t)G_SCAN) > 11)
		return false;
	/* A dead g may have had its stack freed (lo = hi = 0). */
	return (lo == 0 && hi == 0) || (lo < hi && hi - lo <= (1ULL << 30));
}

int gort_vars_check(struct gort *g, const struct gp_mem *mem, const struct gort_vars *v,
		    int which)
{
	const struct gort_offsets *o = &g->off;
	uint64_t m, g0, back, len, arr, gp;
	int i;

	if (which == GORT_VAR_ALLM) {
		if (!v->allm)
			return -ENOENT;
		if (mem_read_u64(mem, v->allm, &m))
			return -EFAULT;
		if (m == 0)
			return -EAGAIN; /* the runtime has not started yet */
		/* An m's g0 points back at it (runtime/proc.go allocm, mcommoninit). */
		if (!ptr_ok(m) || mem_read_u64(mem, m + o->m_g0, &g0) || !ptr_ok(g0) ||
		    mem_read_u64(mem, g0 + o->g_m, &back) || back != m || !g_plausible(g, mem, g0))
			return -EINVAL;
		return 0;
	}
	if (which == GORT_VAR_ALLGS) {
		if (!v->allglen || !v->allgptr)
			return -ENOENT;
		if (mem_read_u64(mem, v->allglen, &len) || mem_read_u64(mem, v->allgptr, &arr))
			return -EFAULT;
		if (len == 0)
			return -EAGAIN;
		if (len > GORT_ALLG_MAX || !ptr_ok(arr))
			return -EINVAL;
		for (i = 0; i < 4 && (uint64_t)i < len; i++)
			if (mem_read_u64(mem, arr + 8 * (uint64_t)i, &gp) || !g_plausible(g, mem, gp))
				return -EINVAL;
		return 0;
	}
	return -EINVAL;
}

int gort_exe_bias(pid_t pid, struct symfile *sf, uint64_t *bias)
{
	struct maps *m = maps_load(pid);
	char exe[64];
	struct stat st;
	size_t i;
	int rc = -ENOENT;

	*bias = 0;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (!m)
		return -errno;
	if (stat(exe, &st) == 0) {
		for (i = 0; i < maps_count(m); i++) {
			const struct maps_entry *me = maps_at(m, i);
			uint64_t vaddr;

			if (me->inode != (uint64_t)st.st_ino)
				continue;
			if (symfile_file_vaddr(sf, me->start, me->pgoff, me->start, &vaddr) == 0) {
				*bias = me->start - vaddr;
				rc = 0;
				break;
			}
		}
	}
	maps_free(m);
	if (rc && symfile_type(sf) == ET_EXEC)
		rc = 0; /* not PIE: no bias */
	return rc;
}
