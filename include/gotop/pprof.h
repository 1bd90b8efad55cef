/* pprof.h: profile.proto encoding and decoding of a struct prof, and atomic gzipped files. */
#ifndef GOTOP_PPROF_H
#define GOTOP_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "gotop/profile.h"

/* Encodes p as profile.proto bytes (not gzipped). Samples whose values are all zero
 * are left out (so are all samples of a profile without sample types). On success *buf is the caller's to free() and 0 is returned;
 * otherwise -errno (-EOVERFLOW when the encoding would not fit in memory). */
int pprof_encode(const struct prof *p, uint8_t **buf, size_t *len);

/* Writes p as gzipped profile.proto to path atomically: to "path.tmp.XXXXXX" in the
 * same directory, fsync, rename. Never leaves a partial file at path nor a temporary
 * one behind. A symbolic link to a file stays: its target is replaced. A path that is
 * neither a file nor a directory (/dev/null, a FIFO) is written in place, not replaced.
 * 0 or -errno (e.g. -EACCES, -ENOENT, -ENOSPC, -EISDIR). */
int pprof_write_file(const struct prof *p, const char *path);

/* The gzipped encoding of p in memory (what pprof_write_file writes, for a caller that
 * sends it elsewhere: stdout, an HTTP answer). *buf is the caller's to free(); 0 or
 * -errno. */
int pprof_gzip(const struct prof *p, uint8_t **buf, size_t *len);
/* Writes len bytes to path atomically, as pprof_write_file does (for text or bytes made
 * elsewhere, e.g. a profile already gzipped). 0 or -errno. */
int pprof_write_bytes(const char *path, const uint8_t *buf, size_t len);

/* Folded stacks of value column col (a line "root;...;leaf VALUE" per distinct stack of
 * function names, the format of flamegraph.pl, inferno and speedscope; samples that
 * differ only in labels or addresses are one line; samples with value 0 are left out).
 * On success *buf (not NUL-terminated) is the caller's to free() and 0 is returned;
 * -EINVAL when col is not a value column, -ENOMEM. */
int pprof_folded(const struct prof *p, size_t col, uint8_t **buf, size_t *len);
/* Writes them to path atomically, as pprof_write_file does (not gzipped). 0 or -errno. */
int pprof_write_folded(const struct prof *p, size_t col, const char *path);

/* Checks up front that a file can be created in path's directory by creating and
 * removing a temporary file there (used before sampling starts); for a path written in
 * place, that it is writable. 0 or -errno; -EISDIR when path names a directory. */
int pprof_check_writable(const char *path);

/* Decodes a profile (gzipped or not) into a new prof; caller frees with prof_free.
 * Input is untrusted: every index and id is checked. NULL with errno set: EBADMSG for
 * malformed input (bad wire format, string index out of range, unknown or duplicate
 * id, value count not matching the sample types), EOVERFLOW for more than
 * PROF_MAX_VALUES sample types or an input past PPROF_MAX_DECODED bytes, or the
 * error from reading the file. Equal entries are folded and ids renumbered 1..n in
 * file order, so a profile written by pprof_encode decodes with its own ids. */
#define PPROF_MAX_DECODED ((size_t)1 << 30)
struct prof *pprof_read_file(const char *path);
struct prof *pprof_decode(const uint8_t *buf, size_t len);

#endif
