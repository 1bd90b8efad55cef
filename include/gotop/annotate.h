/* annotate.h: one function of an ELF file as instructions and source lines, for the
 * annotate view: its code disassembled (disasm.h), each instruction's file:line and inline
 * chain (symtab.h: DWARF or .gopclntab), the source text found on disk, and the view's rows
 * made from per-address sample counts. */
#ifndef GOTOP_ANNOTATE_H
#define GOTOP_ANNOTATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/symtab.h"

/* The largest function annotated: more than any real function (Go's biggest generated
 * functions are a few hundred KB), and a bound on what a hostile symbol size makes us read. */
#define ANNOT_MAX_BYTES (4u << 20)
/* The largest source file read, and the longest line kept. */
#define ANNOT_MAX_SOURCE (16u << 20)

/* Longest stretch of source lines shown without code. */
#define ANNOT_MAX_SPAN 20000

/* Where source files are looked for, like go tool pprof's -source_path and -trim_path. */
struct annot_opts {
	const char *const *source_paths; /* directories searched (several allowed) */
	size_t nsource_paths;
	const char *const *trim_paths;   /* prefixes removed from recorded paths first */
	size_t ntrim_paths;
	const char *goroot;              /* the standard library's tree; NULL: $GOROOT, then
					  * /usr/local/go, /usr/lib/go */
};

/* The function holding link-time address vaddr: [*start, *end) and its name (borrowed
 * until symfile_free), from .gopclntab for Go code, else .symtab/.dynsym. 0, or -ENOENT. */
int annot_func_at(struct symfile *sf, uint64_t vaddr, uint64_t *start, uint64_t *end,
		  const char **name);
/* The function named name (exactly): .symtab first, else a scan of .gopclntab (stripped
 * Go). 0, or -ENOENT. */
int annot_func_named(struct symfile *sf, const char *name, uint64_t *start, uint64_t *end);

struct annot;

/* Decodes [start, end) of sf (link-time addresses) and looks up every instruction's
 * frames. sf is borrowed and must outlive the result; name is copied. Bytes that do not
 * decode become one-byte ".byte" entries (bad). Returns NULL with *err (when err is not
 * NULL) set: -EINVAL for an empty range, -EFBIG past ANNOT_MAX_BYTES, -ENOENT when the
 * file holds no bytes there, -EIO for a short read, -ENOSYS without a decoder. Caller
 * frees with annot_free. */
struct annot *annot_open(struct symfile *sf, uint64_t start, uint64_t end, const char *name,
			 const struct annot_opts *o, int *err);
void annot_free(struct annot *a); /* accepts NULL */

const char *annot_name(const struct annot *a); /* borrowed until annot_free */
uint64_t annot_start(const struct annot *a);
uint64_t annot_end(const struct annot *a);
/* Bytes that did not decode as instructions (a corrupt or data-filled function). */
size_t annot_nbad(const struct annot *a);
/* The memory the annotation holds, in bytes (instructions, frames, text, source files). */
size_t annot_memory(const struct annot *a);

struct annot_insn {
	uint64_t addr;           /* link-time */
	uint64_t target;         /* direct jump or call target, 0 when none */
	const char *target_name; /* the function at a target outside this one (calls, tail
				  * jumps): borrowed until symfile_free; NULL when none */
	uint32_t text;           /* offset of "mnemonic operands" in annot_text */
	uint32_t fr, nfr;        /* its frames: annot_frames()[fr .. fr + nfr), innermost
				  * inlined first, the function itself last; nfr 0: no line */
	uint8_t size, kind;      /* kind: enum disasm_kind */
	uint8_t bad;             /* a byte that does not decode (".byte 0xNN") */
	uint8_t jump_in;         /* a jump inside the function lands here */
};

size_t annot_ninsns(const struct annot *a);
const struct annot_insn *annot_insns(const struct annot *a);
/* The text of instruction i (borrowed until annot_free; our own, safe to print). */
const char *annot_text(const struct annot *a, size_t i);
/* All instructions' frames (strings borrowed until symfile_free; may hold any bytes:
 * escape before printing). */
const struct sym_frame *annot_frames(const struct annot *a);
/* The instruction holding addr, or -1. */
long annot_find(const struct annot *a, uint64_t addr);

/* The source file recorded as file, as found on disk: the path it was read from (borrowed
 * until annot_free), or NULL when none of the candidates is a readable regular file of at
 * most ANNOT_MAX_SOURCE bytes. Files are read once and cached. */
const char *annot_source_file(struct annot *a, const char *file);
/* Line `line` (1-based) of that file, without its newline, and *len its length; NULL when
 * the file was not found or is shorter. Bytes from disk: escape before printing. */
const char *annot_source_line(struct annot *a, const char *file, int32_t line, size_t *len);

/* One address of the function with samples (link-time address). is_return: a caller's
 * frame, whose address is the return address, so the call before it (addr - 1) gets it. */
struct annot_count {
	uint64_t addr;
	int is_return;
	int64_t self, total;
};

/* Adds each count to the instruction it belongs to: self[i] and total[i] (ninsns entries
 * each, added to, not cleared). A leaf address must be an instruction's first byte and a
 * return address follow an instruction of the function; those that do not (a binary
 * that is not the one that ran, or a count of another function) go to *missed (their
 * self, or total when they have no self; may be NULL). Returns the number of counts that
 * matched. */
size_t annot_attribute(const struct annot *a, const struct annot_count *c, size_t n,
		       int64_t *self, int64_t *total, int64_t *missed);

/* A row of the source mode. */
struct annot_row {
	const char *file;        /* as recorded (borrowed until symfile_free) */
	int32_t line;
	uint8_t depth;           /* 0: the function's own line; 1: code inlined at the line
				  * above (func is the innermost inlined function) */
	uint8_t hot;             /* among the lines holding the most self (marked) */
	const char *func;        /* depth 1: the inlined function; else NULL */
	int64_t self, total;     /* self: samples whose innermost frame is this line */
	uint32_t ninsn;          /* instructions on the line (0: source only) */
	uint32_t first;          /* the first of them (an index into annot_insns) */
};

/* The source mode's rows from per-instruction sums (annot_attribute): every line of the
 * function's file from its first line to its last (past ANNOT_MAX_SPAN lines, only the
 * lines with code), then lines of other files, each followed by the inlined lines it holds
 * in the order of their first instruction. A line's total is the sum of its instructions'
 * (so pprof's cum, except that a sample with two frames on one line counts twice); the
 * hottest lines (up to 5 with self) are marked. Caller frees *rows. Returns the count. */
size_t annot_source_rows(const struct annot *a, const int64_t *self, const int64_t *total,
			 struct annot_row **rows);

/* One address of a function with samples, as a profile holds it: its mapping (an id; 0:
 * none), its address in the process, and the samples there: values and counts, with the
 * address as the leaf (self) and anywhere (total, once per sample). is_return: as in
 * struct annot_count. */
struct annot_sample {
	uint64_t mapping;
	uint64_t addr;
	int is_return;
	int64_t self, total, self_n, total_n;
};

/* The mapping holding most of the samples (by total_n) and its hottest address (a return
 * address less one: inside the call). 0, or -ENOENT when none is in a mapping. */
int annot_hot_mapping(const struct annot_sample *s, size_t n, uint64_t *mapping, uint64_t *addr);

/* A function's samples per instruction and per source row, as the Annotate view shows
 * them. */
struct annot_counts {
	int64_t *self, *total;     /* per instruction (annot_ninsns): values */
	int64_t *self_n, *total_n; /* per instruction: sample counts */
	struct annot_row *rows;    /* the source rows with values (annot_source_rows) */
	struct annot_row *rows_n;  /* the same rows with counts */
	size_t nrows;
	int64_t missed;            /* values at addresses that are no instruction of a */
	int64_t hot;               /* the fifth largest self value (the largest five are marked
				    * hot; 1 when fewer have samples, INT64_MAX when none) */
};
/* Counts the samples of s in mapping `mapping` (mapped at start, file offset offset: their
 * addresses made link-time ones with symfile_file_vaddr) on a's instructions and source
 * rows. c is overwritten: free it with annot_counts_free. */
void annot_count_samples(const struct annot *a, const struct annot_sample *s, size_t n,
			 uint64_t mapping, uint64_t start, uint64_t offset, struct annot_counts *c);
void annot_counts_free(struct annot_counts *c); /* accepts a zeroed c */

/* The file a mapping of process pid came from, opened (a regular file only: a device a
 * process maps is never read): the very file mapped (/proc/PID/map_files/START-LIMIT,
 * which also reaches a file deleted or replaced since), the executable, path in the
 * process's root, path; pid 0: path only. A candidate whose build id is not build_id
 * (when given) is another binary and is passed over. Caller frees with symfile_free.
 * NULL with errno ENOENT when none opened, ESTALE when only other binaries did (their
 * build id, escaped by the caller before it is shown, in other[othersz]). */
struct symfile *annot_open_mapped(pid_t pid, const char *path, const char *build_id,
				  uint64_t start, uint64_t limit, char *other, size_t othersz);

#endif
