/* symtab.h: symbols, source lines and inlined frames of one ELF file (symtab, DWARF, gopclntab). */
#ifndef GOTOP_SYMTAB_H
#define GOTOP_SYMTAB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <gelf.h>
#include <elfutils/libdw.h>

/* A symfile loads lazily and caches: use each from one thread at a time. */
struct symfile;
struct gopcln;

/* Opens an ELF file. For a target's file prefer /proc/PID/map_files/START-END or
 * /proc/PID/root/PATH (containers; deleted or replaced files): the symbolizer
 * decides. Nothing but the ELF header is read here; symbols, DWARF and gopclntab
 * load lazily on first use. Returns NULL and sets *err (if err != NULL) to a
 * negative errno: -ENOENT, -EACCES, ..., -ENOEXEC for a file that is not ELF.
 * Caller frees with symfile_free. */
struct symfile *symfile_open(const char *path, int *err);
/* The same from an open descriptor, which it takes ownership of (closed on failure
 * too). display_path is copied and only used for messages and debuglink lookups. */
struct symfile *symfile_open_fd(int fd, const char *display_path, int *err);
/* The same from an ELF image in memory (e.g. a [vdso] read from the target). Takes
 * ownership of buf, which must come from malloc (freed on failure too). */
struct symfile *symfile_open_memory(void *buf, size_t len, const char *display_path, int *err);
void symfile_free(struct symfile *sf); /* accepts NULL */

/* Display path given at open. Borrowed until symfile_free. */
const char *symfile_path(const struct symfile *sf);

/* Runtime address inside a mapping -> the file's link-time vaddr. The mapping starts
 * at map_start and maps the file from byte offset map_pgoff; the PT_LOAD segment
 * holding that file offset gives the load bias (PIE executables and shared libraries
 * as well as fixed-address executables). Returns 0, or -ENOENT when no PT_LOAD
 * segment holds the offset, -EINVAL when addr < map_start. */
int symfile_file_vaddr(const struct symfile *sf, uint64_t map_start, uint64_t map_pgoff,
		       uint64_t addr, uint64_t *vaddr);

/* One frame of a lookup. Strings are borrowed until symfile_free; file may be NULL
 * and line 0 when unknown. start_line is the line where the function is declared
 * (DW_AT_decl_line, or Go's funcdata startLine), 0 when unknown. */
struct sym_frame {
	const char *func;
	const char *file;
	int32_t line;
	int32_t start_line;
};

/* Frames at vaddr, innermost inlined first, the real (outermost) function last.
 * Returns the count (<= max); 0 when no symbol covers vaddr. When the chain is
 * longer than max, the innermost max-1 frames and the outermost are returned.
 * Names come from .gopclntab for Go code, else DWARF, else .symtab/.dynsym (with
 * DWARF file:line when there is a line table). Results are cached per address. */
int symfile_lookup(struct symfile *sf, uint64_t vaddr, struct sym_frame *out, int max);

/* The symbol (from .symtab/.dynsym only, no DWARF) covering vaddr: returns its name
 * (borrowed) and sets *start and *size (either may be NULL), or NULL when none. */
const char *symfile_symbol(struct symfile *sf, uint64_t vaddr, uint64_t *start, uint64_t *size);
/* Number of function symbols in the sorted table (loads it). */
size_t symfile_nsymbols(struct symfile *sf);

/* Build id: hex of the GNU build id note, else the Go build id string from
 * .note.go.buildid, else NULL. Borrowed until symfile_free. */
const char *symfile_build_id(const struct symfile *sf);

/* The ELF handle (borrowed; never NULL for an open symfile). */
Elf *symfile_elf(const struct symfile *sf);
/* Value (link-time address) of any symbol of .symtab by exact name, data symbols included
 * (runtime.allm, runtime.mheap_), or 0. A linear scan: for a few lookups at set-up. */
uint64_t symfile_symbol_value(const struct symfile *sf, const char *name);
/* DWARF of the file or of its separate debug file (/usr/lib/debug/.build-id/xx/yyy.debug,
 * then .gnu_debuglink), loaded lazily. Borrowed; NULL if there is none. It holds the
 * debugging information entries (types, functions) only: no line tables, location lists
 * or .debug_frame, which libdw would otherwise decompress on open (lookups use their
 * own handle with the line tables; symfile_cfi reads .debug_frame). */
Dwarf *symfile_dwarf(struct symfile *sf);
/* Call frame information: .eh_frame of the file, else .debug_frame (of the file or
 * its debug file), lazily. Borrowed; NULL if none. */
Dwarf_CFI *symfile_cfi(struct symfile *sf);
/* The Go function table, lazily; borrowed; NULL if the file is not Go (or its
 * .gopclntab cannot be read). */
struct gopcln *symfile_gopcln(struct symfile *sf);
/* "go1.22.3" etc.; NULL if not Go. Borrowed. */
const char *symfile_go_version(struct symfile *sf);
/* e_machine: EM_X86_64, EM_AARCH64, ... */
uint16_t symfile_machine(const struct symfile *sf);
/* e_type: ET_EXEC, ET_DYN, ... */
uint16_t symfile_type(const struct symfile *sf);
/* The PT_GNU_EH_FRAME segment (.eh_frame_hdr): its link-time vaddr and size. Returns 0,
 * or -ENOENT when the file has none. */
int symfile_eh_frame_hdr(const struct symfile *sf, uint64_t *vaddr, uint64_t *size);

/* Reads up to n bytes of the file's contents at link-time address vaddr (within one
 * PT_LOAD segment's file bytes) into buf. Returns the count read (short at the segment's
 * or the file's end), -ENOENT when no segment holds vaddr, or -errno. */
ssize_t symfile_read(const struct symfile *sf, uint64_t vaddr, void *buf, size_t n);

/* Lookup statistics, for benchmarks and tests. */
struct symfile_stats {
	uint64_t lookups, cache_hits;
	uint64_t go_hits, dwarf_hits, symtab_hits, misses;
};
void symfile_get_stats(const struct symfile *sf, struct symfile_stats *st);
/* Disables (0) or enables (1, default) the per-address cache (benchmarks). */
void symfile_set_cache(struct symfile *sf, int enabled);
/* Disables (0) or enables (1, default) DWARF for lookups (then symtab names only). */
void symfile_set_dwarf(struct symfile *sf, int enabled);
/* Disables (0) or enables (1, default) .gopclntab for lookups (then DWARF/symtab). */
void symfile_set_go(struct symfile *sf, int enabled);

#endif
