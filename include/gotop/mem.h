/* mem.h: bounded reads of a target process's memory (or of a fake memory in tests). */
#ifndef GOTOP_MEM_H
#define GOTOP_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A memory reader. read() copies len bytes at addr into buf and returns 0, or
 * returns -errno (-EFAULT for an unmapped address) and leaves buf undefined.
 * Partial reads are failures. Everything read through it is untrusted. */
struct gp_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

static inline int mem_read(const struct gp_mem *m, uint64_t addr, void *buf, size_t len)
{
	return m->read(m->ctx, addr, buf, len);
}
int mem_read_u64(const struct gp_mem *m, uint64_t addr, uint64_t *out);
int mem_read_u32(const struct gp_mem *m, uint64_t addr, uint32_t *out);

/* A reader for a live process through process_vm_readv. Caller frees with
 * mem_pid_free. Returns NULL only when out of memory (which is fatal anyway). */
struct gp_mem *mem_pid_new(pid_t pid);
void mem_pid_free(struct gp_mem *m);

/* A fake memory for tests and fuzzing: a list of regions. The regions' bytes are
 * borrowed and must outlive the reader. */
struct mem_region {
	uint64_t addr;
	const void *data;
	size_t len;
};
struct gp_mem *mem_fake_new(const struct mem_region *regions, size_t n);
void mem_fake_free(struct gp_mem *m);

#endif
