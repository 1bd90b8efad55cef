/* symbolizer.h: addresses of one target process (user and kernel) to modules and frames. */
#ifndef GOTOP_SYMBOLIZER_H
#define GOTOP_SYMBOLIZER_H

#include <stdint.h>
#include <sys/types.h>

#include "gotop/symtab.h"

/* One mapping of the target (one line of /proc/PID/maps), or the kernel
 * ("[kernel.kallsyms]") or a kernel module ("[ext4]"). */
struct sym_module {
	const char *path;     /* as in /proc/PID/maps ("[vdso]", "" for anonymous) */
	const char *build_id; /* hex GNU build id, else Go build id, else NULL */
	uint64_t start, limit, pgoff; /* runtime [start, limit), file offset of start */
	struct symfile *sf;   /* NULL: no file to read symbols from */
	int id;               /* 0-based, unique within the symbolizer, stable */
	int nocode;           /* a mapping without execute permission when last looked up
			       * (data, an anonymous heap or stack): no frame is there */
};

struct symbolizer;

/* A symbolizer for process pid; used from one thread. Never fails (out of memory
 * is fatal): a process that cannot be read simply yields no symbols. Maps are read
 * on the first lookup. Caller frees with symbolizer_free. */
struct symbolizer *symbolizer_new(pid_t pid);
void symbolizer_free(struct symbolizer *s); /* accepts NULL */
/* A symbolizer with no process (replaying recorded samples): the mappings come from
 * the text of a saved /proc/PID/maps (len bytes), files are opened by their paths,
 * and exe (may be NULL) is the main executable's path. Never fails. */
struct symbolizer *symbolizer_new_offline(const char *maps_text, size_t len, const char *exe);

/* Resolves an address of the target (user or kernel). is_return: it is a return
 * address, so the call instruction before it is looked up (addr - 1). *mod (when
 * mod != NULL) is set to the module holding the address, or NULL; it is borrowed
 * until symbolizer_free (modules stay valid after the target exits or unmaps).
 * Returns the frame count (innermost inlined first, <= max); 0 when the module is
 * known but has no symbol there (the caller shows module+offset); -ENOENT when the
 * address is in no mapping (then *mod is NULL). */
int symbolizer_lookup(struct symbolizer *s, uint64_t addr, int is_return,
		      const struct sym_module **mod, struct sym_frame *out, int max);

/* Loads now what the first lookups would load: the main executable's symbol table and
 * .gopclntab (main), /proc/kallsyms (kernel). Call before sampling starts, so that the
 * cost does not fall inside the profiled time. */
void symbolizer_preload(struct symbolizer *s, int main, int kernel);

/* Starts reading /proc/kallsyms on a thread of its own (most of its CPU is
 * the kernel formatting the text), unless kernel symbols were loaded or started already.
 * A kernel lookup waits for it. Falls back to loading at once if no thread starts. */
void symbolizer_load_kernel_async(struct symbolizer *s);
/* Whether a kernel lookup would name frames without waiting: 1 when kernel symbols
 * are loaded (or failed to load: see symbolizer_kernel_status), 0 while they are
 * loading. Never blocks; starts the background load when nothing started it yet.
 * With it a caller can keep samples that have kernel frames until the names are
 * there, and show the user frames of the others meanwhile. */
int symbolizer_kernel_ready(struct symbolizer *s);

/* Reads kernel symbols from path (text in /proc/kallsyms format: tests, or a saved copy)
 * instead of /proc/kallsyms; NULL goes back to /proc/kallsyms. Ignored once kernel symbols
 * were loaded or started. path is copied. */
void symbolizer_set_kallsyms_path(struct symbolizer *s, const char *path);

/* A new mmap was seen: reload /proc/PID/maps on the next miss. */
void symbolizer_invalidate_maps(struct symbolizer *s);
/* Changes whenever a lookup could find a mapping it missed before: the maps were
 * read again, or a new mmap was seen. */
uint32_t symbolizer_maps_version(const struct symbolizer *s);
/* The time (CLOCK_MONOTONIC ns, as perf samples carry it) of the sample whose addresses
 * are looked up next: its leaf, where the CPU ran, was mapped then, so a miss on it reads
 * maps older than that again. */
void symbolizer_set_sample_time(struct symbolizer *s, uint64_t t_ns);
/* Whether a miss now would read the maps again (for a return address, or a leaf): a
 * caller that remembers a miss (with symbolizer_maps_version) looks again when it would.
 */
int symbolizer_miss_would_reload(const struct symbolizer *s, int is_return);

/* The symfile of the main executable (Go awareness: version, DWARF, gopclntab), or
 * NULL when it cannot be opened. Borrowed until symbolizer_free. */
struct symfile *symbolizer_main_file(struct symbolizer *s);

/* 1 when the process runs another executable than the one symbolizer_main_file
 * resolved (it has exec'd, or it was resolved before the exec of a command we
 * started): the next symbolizer_main_file resolves it again. The old symfile stays
 * valid until symbolizer_free. 0 when unchanged, not resolved yet, or not known.
 * One stat(2) of /proc/PID/exe. */
int symbolizer_main_changed(struct symbolizer *s);

/* How files are opened (tests): SYMBOLIZER_NO_MAP_FILES skips /proc/PID/map_files/,
 * as when gotop-perf lacks CAP_SYS_ADMIN. Set before the first lookup. */
#define SYMBOLIZER_NO_MAP_FILES 0x1
void symbolizer_set_flags(struct symbolizer *s, unsigned flags);

/* Why kernel addresses have no names, as a negative errno: 0 when kernel symbols
 * loaded (or none were needed yet, or they are still loading), -EPERM under
 * kptr_restrict, ... */
int symbolizer_kernel_status(const struct symbolizer *s);

struct symbolizer_stats {
	uint64_t lookups, no_mapping, no_symbol;
	uint64_t maps_loads, files_opened, files_failed;
};
void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *st);

#endif
