/* kallsyms.h: kernel symbols from /proc/kallsyms, sorted for binary search. */
#ifndef GOTOP_KALLSYMS_H
#define GOTOP_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* Loads /proc/kallsyms (text symbols only: types t, T, w, W). Returns NULL and sets
 * *err (when err != NULL) to a negative errno: -EPERM when every address reads as 0
 * (kernel.kptr_restrict, or not root), -ENOENT when there is no /proc/kallsyms,
 * -ENODATA when it holds no text symbol. Caller frees with kallsyms_free. */
struct kallsyms *kallsyms_load(int *err);
/* The same from text in /proc/kallsyms format (tests); len bytes. */
struct kallsyms *kallsyms_parse(const char *text, size_t len, int *err);
void kallsyms_free(struct kallsyms *ks); /* accepts NULL */

/* The symbol holding addr: the one with the greatest address <= addr, if addr is
 * below the next symbol's address and within the kernel's or its module's text.
 * Returns the name and sets *module ("" for the core kernel, else e.g. "ext4")
 * and *offset (addr - symbol address); either may be NULL. NULL when none.
 * Strings borrowed until kallsyms_free. */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, const char **module,
			    uint64_t *offset);

size_t kallsyms_count(const struct kallsyms *ks);
/* The core kernel's text range [_stext or the lowest symbol, _etext]. */
void kallsyms_kernel_range(const struct kallsyms *ks, uint64_t *start, uint64_t *end);

/* The address range covered by the symbols of module ("" for the core kernel):
 * [lowest symbol, highest symbol + its size or a bounded tail). 0, or -ENOENT. */
int kallsyms_module_range(const struct kallsyms *ks, const char *module, uint64_t *start,
			  uint64_t *end);

/* Whether addr address on this machine's architecture (upper half of
 * the address space on x86_64 and arm64). */
static inline int kallsyms_is_kernel_addr(uint64_t addr)
{
	return (addr >> 63) != 0;
}

/* Hex GNU build id of the running kernel from /sys/kernel/notes; caller frees.
 * NULL with errno set when not available. */
char *kallsyms_kernel_build_id(void);

#endif
