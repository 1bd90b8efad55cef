/* mem.h: bounded reads of a target process's memory (or of a fake memory in tests). */
#ifndef GOTOP_MEM_H
#define GOTOP_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One piece of a vectored read: len bytes at addr into buf; rc gets the piece's own
 * result (0, or -errno as for mem_read). */
struct mem_iov {
	uint64_t addr;
	void *buf;
	size_t len;
	int rc;
};

/* A memory reader. read() copies len bytes at addr into buf and returns 0, or
 * returns -errno (-EFAULT for an unmapped address) and leaves buf undefined.
 * Partial reads are failures. Everything read through it is untrusted.
 * readv (optional, NULL: one read per piece) reads many pieces at once, in order
 * (piece k is read before piece k+1), each with its own result. */
struct gp_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
	void (*readv)(void *ctx, struct mem_iov *iov, size_t n);
};

static inline int mem_read(const struct gp_mem *m, uint64_t addr, void *buf, size_t len)
{
	return m->read(m->ctx, addr, buf, len);
}
/* Reads the n pieces, in order; each piece's rc says how it went. For a live process
 * this is one process_vm_readv per 1024 pieces (more only after a piece fails). */
void mem_readv(const struct gp_mem *m, struct mem_iov *iov, size_t n);
/* Writes len bytes at addr, for a reader made by mem_pid_new (process_vm_writev) or
 * mem_fake_new_rw: 0, -EROFS for any other reader, or -errno. gotop-perf writes to a
 * target only when the user asks by name (gomem_enable, --enable-memprofile). */
int mem_write(const struct gp_mem *m, uint64_t addr, const void *buf, size_t len);
int mem_read_u64(const struct gp_mem *m, uint64_t addr, uint64_t *out);
int mem_read_u32(const struct gp_mem *m, uint64_t addr, uint32_t *out);

/* A reader for a live process through process_vm_readv (and process_vm_writev for
 * mem_write). Caller frees with
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
/* The same over regions whose bytes mem_write may change (data not const). */
struct gp_mem *mem_fake_new_rw(const struct mem_region *regions, size_t n);
void mem_fake_free(struct gp_mem *m);

#endif
