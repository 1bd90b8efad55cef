/* mem.c: bounded reads of target memory through process_vm_readv, and a fake memory for tests. */
#include "config.h"
#include "gotop/mem.h"
#include "gotop/util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

int mem_read_u64(const struct gp_mem *m, uint64_t addr, uint64_t *out)
{
	return mem_read(m, addr, out, sizeof(*out));
}

int mem_read_u32(const struct gp_mem *m, uint64_t addr, uint32_t *out)
{
	return mem_read(m, addr, out, sizeof(*out));
}

struct mem_pid {
	struct gp_mem mem;
	pid_t pid;
};

static int pid_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_pid *mp = ctx;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t r;

	if (len == 0)
		return 0;
	/* Reject wrap-around and non-canonical user addresses without a syscall. */
	if (addr + len < addr || addr + len > 0x0000800000000000ULL)
		return -EFAULT;
	r = process_vm_readv(mp->pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	if ((size_t)r != len)
		return -EFAULT;
	return 0;
}

struct gp_mem *mem_pid_new(pid_t pid)
{
	struct mem_pid *mp = xcalloc(1, sizeof(*mp));

	mp->pid = pid;
	mp->mem.read = pid_read;
	mp->mem.ctx = mp;
	return &mp->mem;
}

void mem_pid_free(struct gp_mem *m)
{
	free(m ? m->ctx : NULL);
}

struct mem_fake {
	struct gp_mem mem;
	struct mem_region *regions;
	size_t n;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_fake *mf = ctx;
	size_t i;

	if (addr + len < addr)
		return -EFAULT;
	for (i = 0; i < mf->n; i++) {
		const struct mem_region *r = &mf->regions[i];

		if (addr >= r->addr && addr + len <= r->addr + r->len) {
			memcpy(buf, (const char *)r->data + (addr - r->addr), len);
			return 0;
		}
	}
	return -EFAULT;
}

struct gp_mem *mem_fake_new(const struct mem_region *regions, size_t n)
{
	struct mem_fake *mf = xcalloc(1, sizeof(*mf));

	mf->regions = xcalloc(n ? n : 1, sizeof(*regions));
	if (n)
		memcpy(mf->regions, regions, n * sizeof(*regions));
	mf->n = n;
	mf->mem.read = fake_read;
	mf->mem.ctx = mf;
	return &mf->mem;
}

void mem_fake_free(struct gp_mem *m)
{
	struct mem_fake *mf = m ? m->ctx : NULL;

	if (!mf)
		return;
	free(mf->regions);
	free(mf);
}
