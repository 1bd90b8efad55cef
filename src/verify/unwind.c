/* unwind.c: ground-truth unwinding with libunwind-ptrace. libunwind walks the stopped
 * thread's snapshot; for Go code, which has no .eh_frame and whose .debug_frame Debian's
 * libunwind cannot read on x86_64, this file hands it the unwind information itself. */
#include "config.h"

#include "gotop/unwind.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <gelf.h>
#include <libunwind-ptrace.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gopclntab.h"
#include "gotop/mem.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

/* Exported by libunwind-x86_64.so but not declared in its public headers; perf declares
 * it the same way (tools/perf/util/unwind-libunwind-local.c). It looks ip up in an
 * .eh_frame_hdr-style table of (start, FDE) pairs read through the address space's
 * accessors, and decodes the FDE and its CIE into *pi. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
					     unw_proc_info_t *pi, int need_unwind_info, void *arg);

/* Synthesized unwind information lives at addresses no user process can have
 * (non-canonical on x86-64), so it can never shadow the target's own memory. */
#define SYNTH_BASE 0xA5A5000000000000ULL
#define SYNTH_SLOTS 8
#define SYNTH_SLOT_SIZE 4096
#define MAX_FRAMES_HARD 1024

/* The .debug_frame of one Go file, indexed by FDE. */
struct dfde {
	uint64_t lo, hi;  /* link-time [lo, hi) */
	uint64_t fde_off; /* offset of the FDE in the section */
	uint64_t cie_off;
};
struct dframe {
	struct symfile *sf;
	Elf_Data *data;   /* NULL: the file has no usable .debug_frame */
	unsigned char ident[EI_NIDENT];
	struct dfde *fdes;
	size_t n;
};

struct unwinder {
	pid_t pid;
	struct symbolizer *sym;
	unw_addr_space_t as;
	void *upt; /* libunwind-ptrace's own state: its .eh_frame lookup for C code */
	struct gp_mem *mem; /* the live process's memory */
	struct dframe *df;
	size_t ndf;
	/* the snapshot being unwound */
	const struct thread_snapshot *ts;
	/* synthesized CIE + FDE + table, one slot per lookup in flight */
	uint8_t slot[SYNTH_SLOTS][SYNTH_SLOT_SIZE];
	size_t slot_len[SYNTH_SLOTS];
	unsigned next_slot;
	int noinfo; /* a lookup found no unwind information during this step */
	/* the last unwind ended at runtime.cgocallback and stepped past it (unwinder_beyond) */
	int beyond;
	uint64_t beyond_ip, beyond_sp, beyond_bp;
	struct unwinder_stats st;
};

/* libunwind calls the accessors with the argument given to unw_init_remote, except
 * inside _UPT_find_proc_info, which passes its own state to them. The unwinder being
 * run is therefore found here rather than through that argument. */
static __thread struct unwinder *cur;

/* --- byte emitters for the synthesized .eh_frame (LSB Core, "Exception Frames") --- */

struct emit {
	uint8_t *p;
	size_t len, cap;
	int overflow;
};

static void put(struct emit *e, const void *src, size_t n)
{
	if (e->len + n > e->cap) {
		e->overflow = 1;
		return;
	}
	memcpy(e->p + e->len, src, n);
	e->len += n;
}
static void put_u8(struct emit *e, uint8_t v) { put(e, &v, 1); }
static void put_u32(struct emit *e, uint32_t v) { put(e, &v, 4); }
static void put_u64(struct emit *e, uint64_t v) { put(e, &v, 8); }
static void put_uleb(struct emit *e, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		put_u8(e, b | (v ? 0x80 : 0));
	} while (v);
}
static void put_sleb(struct emit *e, int64_t v)
{
	/* Two's complement bits, shifted as unsigned with the sign copied in by hand
	 * (shifting a negative value right is implementation-defined in C). */
	uint64_t u = (uint64_t)v, sign = v < 0 ? ~(~0ULL >> 7) : 0;

	for (;;) {
		uint8_t b = u & 0x7f;
		u = (u >> 7) | sign;
		if ((u == 0 && !(b & 0x40)) || (u == ~0ULL && (b & 0x40))) {
			put_u8(e, b);
			return;
		}
		put_u8(e, b | 0x80);
	}
}
/* Pads an entry with DW_CFA_nop to a multiple of 8 and fills in its length word. */
static void end_entry(struct emit *e, size_t start)
{
	while ((e->len - start) % 8)
		put_u8(e, DW_CFA_nop);
	if (!e->overflow) {
		uint32_t len = (uint32_t)(e->len - start - 4);
		memcpy(e->p + start, &len, 4);
	}
}

struct cie_desc {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra;
	const uint8_t *init, *init_end; /* initial instructions */
};

/* Writes into slot s an .eh_frame CIE and one FDE for [lo, hi) (runtime addresses) with
 * the given instructions, and a one-entry search table behind them. The CIE uses
 * augmentation "zR" with absolute 8-byte pointers, so DW_CFA_set_loc operands keep the
 * 8-byte form they have in .debug_frame. Returns the table's offset, or -1. */
static long synth(struct unwinder *u, unsigned s, const struct cie_desc *c, uint64_t lo, uint64_t hi,
		  const uint8_t *ins, size_t nins, size_t *fde_off)
{
	struct emit e = { u->slot[s], 0, SYNTH_SLOT_SIZE, 0 };
	size_t cie = e.len, fde, table;

	put_u32(&e, 0);              /* length, filled in below */
	put_u32(&e, 0);              /* CIE id: 0 in .eh_frame */
	put_u8(&e, 1);               /* version */
	put(&e, "zR", 3);            /* augmentation, with its NUL */
	put_uleb(&e, c->code_align);
	put_sleb(&e, c->data_align);
	put_u8(&e, (uint8_t)c->ra);  /* version 1: one byte */
	put_uleb(&e, 1);             /* augmentation data length */
	put_u8(&e, DW_EH_PE_absptr); /* FDE pointer encoding */
	put(&e, c->init, (size_t)(c->init_end - c->init));
	end_entry(&e, cie);

	fde = e.len;
	put_u32(&e, 0);
	put_u32(&e, (uint32_t)(fde + 4 - cie)); /* CIE pointer: back from this field */
	put_u64(&e, lo);
	put_u64(&e, hi - lo);
	put_uleb(&e, 0); /* augmentation data length */
	put(&e, ins, nins);
	end_entry(&e, fde);

	table = e.len;
	put_u32(&e, 0);                 /* start_ip_offset, relative to di.start_ip */
	put_u32(&e, (uint32_t)fde);     /* fde_offset, relative to di.u.rti.segbase */
	if (e.overflow)
		return -1;
	u->slot_len[s] = e.len;
	*fde_off = fde;
	return (long)table;
}

/* Hands libunwind the synthesized slot: it reads the table and the entries back through
 * access_mem, exactly as it reads an .eh_frame_hdr table of the target. */
static int search_slot(unw_addr_space_t as, struct unwinder *u, unsigned s, long table, uint64_t lo,
		       uint64_t hi, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	unw_dyn_info_t di;

	memset(&di, 0, sizeof(di));
	/* IP_OFFSET: table start addresses are relative to start_ip, FDE offsets to
	 * segbase, so the slot need not be within 2 GB of the code. */
	di.format = UNW_INFO_FORMAT_IP_OFFSET;
	di.start_ip = lo;
	di.end_ip = hi;
	di.u.rti.segbase = SYNTH_BASE + (uint64_t)s * SYNTH_SLOT_SIZE;
	di.u.rti.table_data = di.u.rti.segbase + (uint64_t)table;
	di.u.rti.table_len = 8 / sizeof(unw_word_t); /* one 8-byte entry, in words */
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, arg);
}

/* --- .debug_frame of Go files --- */

static int cmp_dfde(const void *a, const void *b)
{
	const struct dfde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static Elf_Data *section_data(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, name) != 0)
			continue;
		/* Go compresses its DWARF (SHF_COMPRESSED, go1.24 cmd/link/internal/ld/dwarf.go
		 * compressSyms); libdw has usually decompressed it already. */
		if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

static struct dframe *dframe_get(struct unwinder *u, struct symfile *sf)
{
	struct dframe *d;
	Dwarf *dw;
	Elf *elf;
	Dwarf_Off off = 0, next;
	size_t cap = 0, ident_len;
	const char *id;

	for (size_t i = 0; i < u->ndf; i++)
		if (u->df[i].sf == sf)
			return &u->df[i];
	u->df = xrealloc(u->df, (u->ndf + 1) * sizeof(*u->df));
	d = &u->df[u->ndf++];
	memset(d, 0, sizeof(*d));
	d->sf = sf;
	dw = symfile_dwarf(sf); /* decompresses the DWARF sections */
	elf = dw ? dwarf_getelf(dw) : NULL;
	if (!elf)
		return d;
	id = elf_getident(elf, &ident_len);
	if (!id || ident_len < EI_NIDENT)
		return d;
	memcpy(d->ident, id, EI_NIDENT);
	d->data = section_data(elf, ".debug_frame");
	if (!d->data || !d->data->d_buf)
		return d;
	/* Bounded by the section: every entry advances next past off, or it ends. */
	for (;;) {
		Dwarf_CFI_Entry ent;
		int rc = dwarf_next_cfi(d->ident, d->data, false, off, &next, &ent);

		if (rc > 0 || next == (Dwarf_Off)-1 || next <= off)
			break;
		if (rc == 0 && !dwarf_cfi_cie_p(&ent) && ent.fde.end - ent.fde.start >= 16) {
			uint64_t lo, len;

			/* .debug_frame FDE: initial_location and address_range, address-sized
			 * (8 on x86-64, DWARF 5 section 6.4.1) */
			memcpy(&lo, ent.fde.start, 8);
			memcpy(&len, ent.fde.start + 8, 8);
			if (len > 0 && lo + len > lo) {
				if (d->n == cap) {
					cap = cap ? cap * 2 : 1024;
					d->fdes = xrealloc(d->fdes, cap * sizeof(*d->fdes));
				}
				d->fdes[d->n++] = (struct dfde){ lo, lo + len, off, ent.fde.CIE_pointer };
			}
		}
		off = next;
	}
	qsort(d->fdes, d->n, sizeof(*d->fdes), cmp_dfde);
	return d;
}

static const struct dfde *dframe_find(const struct dframe *d, uint64_t vaddr)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->fdes[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || vaddr >= d->fdes[lo - 1].hi)
		return NULL;
	return &d->fdes[lo - 1];
}

/* The FDE of .debug_frame covering vaddr, rewritten into slot s. */
static int from_debug_frame(struct unwinder *u, unw_addr_space_t as, const struct dframe *d, uint64_t vaddr,
			    uint64_t bias, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	const struct dfde *f = dframe_find(d, vaddr);
	Dwarf_CFI_Entry fe, ce;
	Dwarf_Off next;
	struct cie_desc c;
	size_t fde_off;
	long table;
	unsigned s;

	if (!f)
		return -UNW_ENOINFO;
	if (dwarf_next_cfi(d->ident, d->data, false, f->fde_off, &next, &fe) != 0 || dwarf_cfi_cie_p(&fe) ||
	    dwarf_next_cfi(d->ident, d->data, false, f->cie_off, &next, &ce) != 0 || !dwarf_cfi_cie_p(&ce))
		return -UNW_ENOINFO;
	/* Go's CIE has no augmentation ("", go1.24 cmd/link/internal/ld/dwarf.go writeframes);
	 * one we do not understand could hide data before the instructions. */
	if (ce.cie.augmentation[0] != '\0' || ce.cie.return_address_register > 255)
		return -UNW_ENOINFO;
	c.code_align = ce.cie.code_alignment_factor;
	c.data_align = ce.cie.data_alignment_factor;
	c.ra = ce.cie.return_address_register;
	c.init = ce.cie.initial_instructions;
	c.init_end = ce.cie.initial_instructions_end;
	s = u->next_slot++ % SYNTH_SLOTS;
	table = synth(u, s, &c, f->lo + bias, f->hi + bias, fe.fde.start + 16, (size_t)(fe.fde.end - fe.fde.start - 16),
		      &fde_off);
	if (table < 0)
		return -UNW_ENOINFO;
	u->st.go_debug_frame++;
	return search_slot(as, u, s, table, f->lo + bias, f->hi + bias, ip, pi, need, arg);
}

/* A stripped Go file: one FDE for the pcsp row holding vaddr (go1.24 runtime/symtab.go
 * pcsp: the return address is at SP + delta, so CFA = SP + delta + 8). */
static int from_pcsp(struct unwinder *u, unw_addr_space_t as, struct gopcln *g, uint64_t vaddr, uint64_t bias,
		     unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	static const uint8_t init[] = {
		DW_CFA_def_cfa, X86_64_DW_RSP, 8,   /* CFA = rsp + 8 */
		DW_CFA_offset | X86_64_DW_RIP, 1,   /* return address at CFA - 8 (data align -8) */
	};
	struct cie_desc c = { 1, -8, X86_64_DW_RIP, init, init + sizeof(init) };
	uint8_t ins[16];
	struct emit e = { ins, 0, sizeof(ins), 0 };
	int32_t delta;
	uint64_t lo, hi;
	size_t fde_off;
	long table;
	unsigned s;

	if (gopcln_pcsp_row(g, vaddr, &delta, &lo, &hi) != 0 || delta < 0)
		return -UNW_ENOINFO;
	put_u8(&e, DW_CFA_def_cfa_offset);
	put_uleb(&e, (uint64_t)delta + 8);
	s = u->next_slot++ % SYNTH_SLOTS;
	table = synth(u, s, &c, lo + bias, hi + bias, ins, e.len, &fde_off);
	if (table < 0)
		return -UNW_ENOINFO;
	u->st.go_pcsp++;
	return search_slot(as, u, s, table, lo + bias, hi + bias, ip, pi, need, arg);
}

/* A module libunwind-ptrace finds no unwind information for although it has some: the
 * [vdso], which has no file to open (libunwind 1.6.2 _UPT_find_proc_info maps the
 * mapping's path), or a file deleted since (the symbolizer opened the very file mapped,
 * through /proc/PID/map_files). Its .eh_frame_hdr is read where the target has it mapped. LSB Core 5.0, "Exception Frame Header Format": version (1),
 * eh_frame_ptr_enc, fde_count_enc, table_enc, then the encoded eh_frame_ptr and
 * fde_count, then fde_count (initial location, FDE address) pairs sorted by location,
 * both relative to the header's start (DW_EH_PE_datarel | DW_EH_PE_sdata4). */
static int from_eh_frame_hdr(struct unwinder *u, unw_addr_space_t as, const struct sym_module *mod, unw_word_t ip,
			     unw_proc_info_t *pi, int need, void *arg)
{
	uint64_t hdr, size, vaddr;
	uint8_t h[12];
	uint32_t count;
	unw_dyn_info_t di;

	if (symfile_file_vaddr(mod->sf, mod->start, mod->pgoff, ip, &vaddr) != 0 ||
	    symfile_eh_frame_hdr(mod->sf, &hdr, &size) != 0 || size < sizeof(h))
		return -UNW_ENOINFO;
	hdr += ip - vaddr; /* the load bias */
	if (mem_read(u->mem, hdr, h, sizeof(h)) != 0)
		return -UNW_ENOINFO;
	/* Only the 4-byte eh_frame_ptr and fde_count that every linker writes. */
	if (h[0] != 1 || ((h[1] & 0x0f) != DW_EH_PE_udata4 && (h[1] & 0x0f) != DW_EH_PE_sdata4) ||
	    h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -UNW_ENOINFO;
	memcpy(&count, h + 8, 4);
	if (count == 0 || count > (size - sizeof(h)) / 8)
		return -UNW_ENOINFO;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mod->start;
	di.end_ip = mod->limit;
	di.u.rti.segbase = hdr;
	di.u.rti.table_data = hdr + sizeof(h);
	di.u.rti.table_len = (unw_word_t)count * 8 / sizeof(unw_word_t); /* in words */
	u->st.eh_frame_hdr++;
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, arg);
}

/* --- libunwind accessors --- */

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need, void *arg)
{
	struct unwinder *u = cur;
	const struct sym_module *mod = NULL;
	uint64_t vaddr;
	int rc;

	symbolizer_lookup(u->sym, ip, 0, &mod, NULL, 0);
	if (mod && mod->sf && symfile_file_vaddr(mod->sf, mod->start, mod->pgoff, ip, &vaddr) == 0) {
		struct gopcln *g = symfile_gopcln(mod->sf);
		struct gopcln_func fn;

		/* Go functions only; C code linked into a Go binary (cgo) has .eh_frame. */
		if (g && gopcln_find_func(g, vaddr, &fn) == 0) {
			struct dframe *d = dframe_get(u, mod->sf);
			uint64_t bias = ip - vaddr;

			if (d->data && from_debug_frame(u, as, d, vaddr, bias, ip, pi, need, arg) == 0)
				return 0;
			return from_pcsp(u, as, g, vaddr, bias, ip, pi, need, arg);
		}
	}
	u->st.native++;
	rc = _UPT_find_proc_info(as, ip, pi, need, u->upt);
	if (rc < 0 && mod && mod->sf)
		rc = from_eh_frame_hdr(u, as, mod, ip, pi, need, arg);
	if (rc < 0)
		u->noinfo = 1;
	return rc;
}

static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	_UPT_put_unwind_info(as, pi, cur->upt);
}

static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO; /* no code registered at run time (_U_dyn_register) is supported */
}

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct unwinder *u = cur;
	const struct thread_snapshot *ts = u->ts;
	uint64_t sp = ts->regs[X86_64_DW_RSP];

	if (write)
		return -UNW_EREADONLYREG;
	if (addr >= SYNTH_BASE && addr - SYNTH_BASE < (uint64_t)SYNTH_SLOTS * SYNTH_SLOT_SIZE) {
		uint64_t off = addr - SYNTH_BASE;
		unsigned s = (unsigned)(off / SYNTH_SLOT_SIZE);
		uint64_t in = off % SYNTH_SLOT_SIZE;

		/* libunwind reads whole words, also for the last bytes of an entry */
		if (in >= u->slot_len[s])
			return -UNW_EINVAL;
		*val = 0;
		memcpy(val, u->slot[s] + in, GP_MIN((uint64_t)8, SYNTH_SLOT_SIZE - in));
		return 0;
	}
	if (addr >= sp && addr - sp < ts->stack_len && ts->stack_len - (addr - sp) >= 8) {
		memcpy(val, ts->stack + (addr - sp), 8);
		return 0;
	}
	u->st.live_reads++;
	return mem_read(u->mem, addr, val, 8) == 0 ? 0 : -UNW_EINVAL;
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	if (write || reg < 0 || reg >= X86_64_DW_NREGS)
		return -UNW_EBADREG;
	*val = cur->ts->regs[reg];
	return 0;
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write, void *arg)
{
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len, unw_word_t *off,
			     void *arg)
{
	return -UNW_ENOINFO; /* names come from the symbolizer */
}

static unw_accessors_t accessors = {
	.find_proc_info = acc_find_proc_info,
	.put_unwind_info = acc_put_unwind_info,
	.get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
	.access_mem = acc_access_mem,
	.access_reg = acc_access_reg,
	.access_fpreg = acc_access_fpreg,
	.resume = acc_resume,
	.get_proc_name = acc_get_proc_name,
};

struct unwinder *unwinder_new(pid_t pid, struct symbolizer *sym)
{
	struct unwinder *u = xcalloc(1, sizeof(*u));

	u->pid = pid;
	u->sym = sym;
	u->mem = mem_pid_new(pid);
	u->as = unw_create_addr_space(&accessors, 0);
	u->upt = _UPT_create(pid);
	if (!u->as || !u->upt) {
		unwinder_free(u);
		errno = ENOMEM;
		return NULL;
	}
	/* The synthesized slots are reused with other contents: nothing may be cached
	 * across lookups by address. */
	unw_set_caching_policy(u->as, UNW_CACHE_NONE);
	return u;
}

void unwinder_free(struct unwinder *u)
{
	if (!u)
		return;
	if (u->as)
		unw_destroy_addr_space(u->as);
	if (u->upt)
		_UPT_destroy(u->upt);
	for (size_t i = 0; i < u->ndf; i++)
		free(u->df[i].fdes);
	free(u->df);
	mem_pid_free(u->mem);
	free(u);
}

/* How Go's own traceback ends a stack at pc: after the outermost frames (TopFrame:
 * runtime.goexit, runtime.mstart), and at functions that write SP (SPWrite: mcall,
 * systemstack, morestack, gogo), past which "we might not even be on the stack we think
 * we are" (go1.24 internal/abi/symtab.go, runtime/traceback.go unwinder.resolveInternal). */
static int go_end(struct unwinder *u, uint64_t pc, int *cgocb)
{
	const struct sym_module *mod = NULL;
	uint64_t vaddr;
	struct gopcln *g;
	struct gopcln_func fn;

	symbolizer_lookup(u->sym, pc, 0, &mod, NULL, 0);
	if (!mod || !mod->sf || symfile_file_vaddr(mod->sf, mod->start, mod->pgoff, pc, &vaddr) != 0)
		return -1;
	g = symfile_gopcln(mod->sf);
	if (!g || gopcln_find_func(g, vaddr, &fn) != 0)
		return -1;
	/* The signal handler's entry is a TopFrame too, but above it is the interrupted code
	 * on another stack (sigaltstack: "TEXT runtime·sigtramp(SB),NOSPLIT|TOPFRAME|NOFRAME",
	 * go1.24 runtime/sys_linux_amd64.s), not the end of the stack. */
	if ((fn.flag & GOPCLN_FLAG_TOPFRAME) &&
	    (!strncmp(fn.name, "runtime.sigtramp", 16) || !strncmp(fn.name, "runtime.cgoSigtramp", 19)))
		return UNWIND_END_SWITCH;
	if (fn.flag & GOPCLN_FLAG_TOPFRAME)
		return UNWIND_END_TOP;
	if (fn.flag & GOPCLN_FLAG_SPWRITE) {
		*cgocb = !strcmp(fn.name, "runtime.cgocallback");
		return UNWIND_END_SWITCH;
	}
	return -1;
}

int unwinder_unwind(struct unwinder *u, const struct thread_snapshot *ts, uint64_t *pcs, size_t max,
		    enum unwind_end *end)
{
	unw_cursor_t c;
	size_t n = 0;
	int rc;

	if (max > MAX_FRAMES_HARD)
		max = MAX_FRAMES_HARD;
	cur = u;
	u->ts = ts;
	u->beyond = 0;
	u->st.unwinds++;
	unw_flush_cache(u->as, 0, 0);
	rc = unw_init_remote(&c, u->as, u);
	if (rc < 0) {
		cur = NULL;
		return -EINVAL;
	}
	*end = UNWIND_END_MAX;
	while (n < max) {
		unw_word_t ip;

		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || ip == 0) {
			*end = UNWIND_END_STOP;
			break;
		}
		pcs[n++] = ip;
		int cgocb = 0, e = go_end(u, n == 1 ? ip : ip - 1, &cgocb);

		if (e >= 0) {
			*end = (enum unwind_end)e;
			/* A callback's frame on the goroutine's stack returns to the pc it pushed
			 * there, the goroutine's sched.pc at the cgo call, as Go's traceback
			 * takes it (go1.19 to go1.27 runtime/traceback.go, cgocallback's SPWrite
			 * flag cleared): one step by its CFI gives that frame's pc and SP. */
			if (cgocb && n > 1 && unw_step(&c) > 0 && !u->noinfo) {
				unw_word_t r[3];

				if (unw_get_reg(&c, UNW_REG_IP, &r[0]) == 0 &&
				    unw_get_reg(&c, UNW_REG_SP, &r[1]) == 0 &&
				    unw_get_reg(&c, UNW_X86_64_RBP, &r[2]) == 0) {
					u->beyond = 1;
					u->beyond_ip = r[0];
					u->beyond_sp = r[1];
					u->beyond_bp = r[2];
				}
			}
			break;
		}
		u->noinfo = 0;
		rc = unw_step(&c); /* may set u->noinfo (find_proc_info) */
		// cppcheck-suppress knownConditionTrueFalse
		if (rc >= 0 && u->noinfo) {
			/* libunwind found no unwind information for this frame and guessed
			 * the caller, or the end, from RBP (libunwind 1.6.2
			 * src/x86_64/Gstep.c): not a truth. A second guess in a row may also
			 * read a local it never set. */
			*end = UNWIND_END_NOINFO;
			u->st.no_info++;
			break;
		}
		if (rc <= 0) {
			*end = rc < 0 ? UNWIND_END_ERROR : UNWIND_END_STOP;
			if (rc < 0)
				u->st.step_errors++;
			break;
		}
	}
	cur = NULL;
	return (int)n;
}

int unwinder_beyond(const struct unwinder *u, uint64_t *ip, uint64_t *sp, uint64_t *bp)
{
	if (!u->beyond)
		return 0;
	*ip = u->beyond_ip;
	*sp = u->beyond_sp;
	*bp = u->beyond_bp;
	return 1;
}

void unwinder_get_stats(const struct unwinder *u, struct unwinder_stats *st)
{
	*st = u->st;
}
