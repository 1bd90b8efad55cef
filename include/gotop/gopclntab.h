/* gopclntab.h: reader for Go's .gopclntab (function names, files, lines, inlined frames, pcsp). */
#ifndef GOTOP_GOPCLNTAB_H
#define GOTOP_GOPCLNTAB_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <gelf.h>

/* One reader per Go binary. After open it is immutable: every query below may be
 * called from several threads at once. No query allocates. */
struct gopcln;

/* Error codes of gopcln_open_*, with the errno set alongside: one list, so
 * gopcln_strerror can never disagree. */
#define GOPCLN_ERRORS                                                                           \
	GOPCLN_ERR(OK, 0, "no error")                                                          \
	GOPCLN_ERR(NOTFOUND, ENOENT, "no Go pclntab in this file")                             \
	GOPCLN_ERR(CORRUPT, EINVAL, "Go pclntab is corrupt or truncated")                      \
	GOPCLN_ERR(VERSION, ENOTSUP, "unsupported Go pclntab version (Go 1.2-1.15)")           \
	GOPCLN_ERR(NOTEXT, ENOENT, "cannot find the Go text start (moduledata, runtime.text)") \
	GOPCLN_ERR(ELF, EINVAL, "cannot read the ELF file")

enum {
#define GOPCLN_ERR(name, errnum, text) GOPCLN_E_##name,
	GOPCLN_ERRORS
#undef GOPCLN_ERR
	GOPCLN_E_COUNT
};

/* Opens the pclntab of an ELF file of any architecture. elf is borrowed and must outlive the
 * result. Locates it by section (.gopclntab, .data.rel.ro.gopclntab), by symbol
 * (runtime.pclntab), or by a validated scan; text start from the header, or for Go 1.26+
 * (textStart 0) from runtime.text / moduledata / .go.module. Returns NULL and sets *err (when
 * err is not NULL) to a GOPCLN_E_* code on failure (none found, corrupt, unsupported version);
 * errno is set too (ENOENT, EINVAL, ENOTSUP). Caller frees with gopcln_free. */
struct gopcln *gopcln_open_elf(Elf *elf, int *err);

/* Same from raw pclntab bytes (for fuzzing); data borrowed and must outlive the result.
 * text_start 0 means "take it from the header" (Go <= 1.25). Without ELF there is no
 * moduledata, so inlined frames are decoded only when the inline trees are inside the
 * buffer (Go 1.26+ keeps go:func.* in .gopclntab); otherwise only the physical function
 * is reported. Caller frees with gopcln_free. */
struct gopcln *gopcln_open_buf(const uint8_t *data, size_t len, uint64_t text_start, int *err);

/* Frees t and everything it owns. Accepts NULL. */
void gopcln_free(struct gopcln *t);

/* Text of a GOPCLN_E_* code; static, never NULL. */
const char *gopcln_strerror(int err);

/* The Go version of an ELF file from its build info alone (.go.buildinfo, or the blob in
 * its writable data), without locating the pclntab: cheap enough to ask of every program
 * of a machine (a list of the Go processes). NULL with errno ENOENT (not Go, or no build
 * info) or EINVAL (no ELF); else the caller frees. elf is borrowed. */
char *gopcln_elf_go_version(Elf *elf);
/* Go version from .go.buildinfo, e.g. "go1.24.4"; NULL if unknown. Borrowed until free. */
const char *gopcln_go_version(const struct gopcln *t);
/* Go build id from .note.go.buildid; NULL if none. Borrowed until free. */
const char *gopcln_build_id(const struct gopcln *t);
unsigned gopcln_ptrsize(const struct gopcln *t);  /* 4 or 8 */
unsigned gopcln_quantum(const struct gopcln *t);  /* minLC: 1 amd64, 4 arm64 */
/* Base of the functab's entry offsets (moduledata.text, runtime.text); for Go 1.16-1.17,
 * whose entries are absolute, runtime.text or the first function's entry. */
uint64_t gopcln_text_start(const struct gopcln *t);
/* The pclntab magic (0xFFFFFFFA, 0xFFFFFFF0, 0xFFFFFFF1). */
uint32_t gopcln_magic(const struct gopcln *t);
/* Number of functions in the table. */
size_t gopcln_nfunc(const struct gopcln *t);
/* Link-time address of the pclntab and of go:func.* (0 when unknown). */
uint64_t gopcln_addr(const struct gopcln *t);
uint64_t gopcln_gofunc(const struct gopcln *t);

struct gopcln_func {
	uint64_t entry, end; /* [entry, end): link-time addresses */
	const char *name;    /* borrowed until gopcln_free */
	uint8_t funcid, flag;
};
#define GOPCLN_FLAG_TOPFRAME 1 /* go1.24 internal/abi/symtab.go FuncFlag */
#define GOPCLN_FLAG_SPWRITE 2
#define GOPCLN_FLAG_ASM 4

/* FuncIDWrapper of this binary's Go release (21 in 1.19-1.21, 22 in 1.22-1.24, 23 from
 * 1.25: internal/abi/symtab.go), found as the funcID shared by the most functions; 0 if
 * none is. */
uint8_t gopcln_wrapper_funcid(const struct gopcln *t);

/* The function containing pc (a link-time address). 0, or -ENOENT. name borrowed until free. */
int gopcln_find_func(const struct gopcln *t, uint64_t pc, struct gopcln_func *out);

/* The i-th function of the table (0 <= i < gopcln_nfunc), in address order. 0, -ENOENT or
 * -EINVAL (corrupt entry). */
int gopcln_func_at(const struct gopcln *t, size_t i, struct gopcln_func *out);

struct gopcln_frame {
	const char *func; /* never NULL; "?" when the name cannot be read */
	const char *file; /* never NULL; "?" when unknown */
	int32_t line;       /* 0 when unknown */
	int32_t start_line; /* line of the func keyword (Go 1.20+), else 0 */
	uint8_t funcid;     /* internal/abi FuncID of the (inlined) function */
	uint8_t wrapper;    /* 1 for autogenerated code (FuncIDWrapper): method wrappers, eq/hash;
			     * Go's own tracebacks elide these (go1.24 runtime/traceback.go) */
	uint64_t pc;        /* where this level is: the pc asked for at the innermost, else the
			     * entry + parentPc of the inline tree (the "virtual" pc, minus one,
			     * that runtime.Callers gives for an inlined call: go1.24
			     * runtime/symtabinl.go inlineUnwinder.next) */
};

/* Frames at pc: innermost inlined function first, the real function last. Returns the number
 * written (<= max), 0 if pc is in no Go function, -errno on corrupt tables. For a return
 * address the CALLER passes pc-1. Strings borrowed until gopcln_free. */
int gopcln_frames(const struct gopcln *t, uint64_t pc, struct gopcln_frame *out, int max);

/* The frames of every address of the function holding pc, in one pass over its tables:
 * cb(arg, start, end, fr, n) for each range [start, end) whose addresses all have the frames
 * fr[0..n) that gopcln_frames (with this max) gives, in address order to the function's end.
 * A function of 100 KB has tens of thousands of instructions; gopcln_frames at each would
 * decode its tables from the entry every time. Returns 0, cb's first nonzero value, -ENOENT
 * when pc is in no Go function, -EINVAL on corrupt tables, -ENOMEM: unlike the queries
 * above it allocates (a cache of the frames of each inlining site). */
int gopcln_func_frames(const struct gopcln *t, uint64_t pc, int max,
		       int (*cb)(void *arg, uint64_t start, uint64_t end,
				 const struct gopcln_frame *fr, int n),
		       void *arg);

/* pcsp at pc: the SP delta of the frame (amd64: RA at [SP+delta]). 0 or -ENOENT/-EINVAL. */
int gopcln_pcsp(const struct gopcln *t, uint64_t pc, int32_t *spdelta);
/* The same, and the pcsp row holding pc: [*start, *end) share its SP delta (link-time
 * addresses; start and end may be NULL). */
int gopcln_pcsp_row(const struct gopcln *t, uint64_t pc, int32_t *spdelta, uint64_t *start, uint64_t *end);

#endif
