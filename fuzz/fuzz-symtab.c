/* fuzz-symtab.c: libFuzzer harness for ELF files: symbols, DWARF lines and inlines, build id, .gopclntab through the ELF, and CFI lookups. */
#include "config.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gotop/gopclntab.h"
#include "gotop/symtab.h"

/*
 * Input: an ELF file, opened from memory as a [vdso] image is (symfile_open_memory).
 * Addresses to look up come from the file's own symbols (up to 64 of .symtab/.dynsym),
 * its entry point and its Go functions: each is symbolized, given to the CFI the way
 * src/stacks/repair.c asks it (CFA from SP or FP), and mapped back through its PT_LOAD.
 */
#define MAX_ADDRS 64

static volatile size_t sink;

static void use_str(const char *s)
{
	if (s)
		sink += strlen(s);
}

/* As src/stacks/repair.c cfi_frame: where is the CFA at vaddr? */
static void cfi_probe(Dwarf_CFI *cfi, uint64_t vaddr)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Op *ops;
	size_t nops, i;

	if (dwarf_cfi_addrframe(cfi, vaddr, &frame) != 0)
		return;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0)
		for (i = 0; i < nops; i++)
			sink += ops[i].atom + ops[i].number;
	free(frame);
}

static void probe(struct symfile *sf, uint64_t a)
{
	struct sym_frame fr[8];
	uint64_t start, sz, vaddr;
	int n, i;
	Dwarf_CFI *cfi;

	n = symfile_lookup(sf, a, fr, 8);
	if (n < 0 || n > 8)
		abort();
	for (i = 0; i < n; i++) {
		if (!fr[i].func)
			abort(); /* symtab.h: a frame has a function name */
		use_str(fr[i].func);
		use_str(fr[i].file);
	}
	n = symfile_lookup(sf, a, fr, 1); /* the cached path, cut to one frame */
	if (n < 0 || n > 1)
		abort();
	use_str(symfile_symbol(sf, a, &start, &sz));
	cfi = symfile_cfi(sf);
	if (cfi)
		cfi_probe(cfi, a);
	if (symfile_file_vaddr(sf, a & ~0xfffULL, 0, a, &vaddr) == 0)
		sink += vaddr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct symfile *sf;
	struct gopcln *g;
	uint64_t addrs[MAX_ADDRS + 8];
	size_t na = 0, i;
	void *copy;
	Elf *elf;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	int err;

	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	if (size)
		memcpy(copy, data, size);
	sf = symfile_open_memory(copy, size, "fuzz.elf", &err); /* owns copy from here */
	if (!sf) {
		if (err >= 0)
			abort(); /* symtab.h: a negative errno */
		return 0;
	}
	use_str(symfile_path(sf));
	use_str(symfile_build_id(sf));
	use_str(symfile_go_version(sf));
	sink += symfile_machine(sf) + symfile_type(sf) + symfile_nsymbols(sf);
	elf = symfile_elf(sf);
	if (!elf)
		abort();
	if (gelf_getehdr(elf, &eh))
		addrs[na++] = eh.e_entry;
	/* function symbols of the file, read with libelf directly */
	while ((scn = elf_nextscn(elf, scn)) != NULL && na < MAX_ADDRS) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (int k = 0; d && na < MAX_ADDRS && gelf_getsym(d, k, &sym); k++) {
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value)
				continue;
			addrs[na++] = sym.st_value;
			if (sym.st_size > 1 && na < MAX_ADDRS)
				addrs[na++] = sym.st_value + sym.st_size / 2;
		}
	}
	g = symfile_gopcln(sf);
	if (g) {
		size_t n = gopcln_nfunc(g), step = n / 8 + 1;
		struct gopcln_func fn;

		for (i = 0; i < n && na < MAX_ADDRS + 8; i += step)
			if (gopcln_func_at(g, i, &fn) == 0)
				addrs[na++] = fn.entry + (fn.end - fn.entry) / 2;
	}
	for (i = 0; i < na; i++)
		probe(sf, addrs[i]);
	/* the same again without the cache, then with names from the symbol table only */
	symfile_set_cache(sf, 0);
	for (i = 0; i < na && i < 8; i++)
		probe(sf, addrs[i]);
	symfile_set_dwarf(sf, 0);
	symfile_set_go(sf, 0);
	for (i = 0; i < na && i < 8; i++)
		probe(sf, addrs[i]);
	struct symfile_stats st;
	symfile_get_stats(sf, &st);
	sink += st.lookups;
	symfile_free(sf);
	return 0;
}
