/* maps.h: a process's memory mappings, parsed from /proc/PID/maps text. */
#ifndef GOTOP_MAPS_H
#define GOTOP_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* perms bits */
#define MAPS_R 0x1
#define MAPS_W 0x2
#define MAPS_X 0x4
#define MAPS_P 0x8 /* private (copy on write); shared when clear */

enum maps_kind {
	MAPS_KIND_FILE,     /* path names a file (starts with '/') */
	MAPS_KIND_ANON,     /* no path, or "[anon:NAME]" */
	MAPS_KIND_HEAP,     /* [heap] */
	MAPS_KIND_STACK,    /* [stack] or the old "[stack:TID]" */
	MAPS_KIND_VDSO,     /* [vdso] */
	MAPS_KIND_VSYSCALL, /* [vsyscall] */
	MAPS_KIND_OTHER,    /* anything else: [vvar], [uprobes], memfd:..., ... */
};

struct maps_entry {
	uint64_t start, end, pgoff; /* [start, end) runtime addresses; pgoff in bytes */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint8_t perms;   /* MAPS_R | MAPS_W | MAPS_X | MAPS_P */
	uint8_t kind;    /* enum maps_kind */
	uint8_t deleted; /* path ended with " (deleted)" (removed from maps' path) */
	const char *path; /* never NULL ("" for anonymous); borrowed until maps_free */
};

struct maps;

/* Parses the text of /proc/PID/maps (len bytes, need not be NUL-terminated).
 * Tolerant: malformed lines are skipped, entries are sorted by start, and an entry
 * that overlaps the previous one is dropped so that lookups stay well defined.
 * Never fails except for out of memory (fatal); caller frees with maps_free. */
struct maps *maps_parse(const char *text, size_t len);

/* Reads and parses /proc/PID/maps (pid <= 0: this process). Returns NULL with
 * errno set (ENOENT/ESRCH when the process is gone, EACCES, ...). */
struct maps *maps_load(pid_t pid);

void maps_free(struct maps *m); /* accepts NULL */

/* The entry holding addr (start <= addr < end), or NULL. O(log n). Borrowed. */
const struct maps_entry *maps_find(const struct maps *m, uint64_t addr);

size_t maps_count(const struct maps *m);
/* Entry i (0-based, sorted by start), or NULL when out of range. Borrowed. */
const struct maps_entry *maps_at(const struct maps *m, size_t i);

#endif
