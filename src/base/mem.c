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

void mem_readv(const struct gp_mem *m, struct mem_iov *iov, size_t n)
{
	size_t i;

	if (m->readv) {
		m->readv(m->ctx, iov, n);
		return;
	}
	for (i = 0; i < n; i++)
		iov[i].rc = mem_read(m, iov[i].addr, iov[i].buf, iov[i].len);
}

struct mem_pid {
	struct gp_mem mem;
	pid_t pid;
};

/* Wrap-around and non-canonical user addresses fail without a system call. */
static int pid_addr_ok(uint64_t addr, size_t len)
{
	return addr + len >= addr && addr + len <= 0x0000800000000000ULL;
}

static int pid_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct mem_pid *mp = ctx;
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t r;

	if (len == 0)
		return 0;
	if (!pid_addr_ok(addr, len))
		return -EFAULT;
	r = process_vm_readv(mp->pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	if ((size_t)r != len)
		return -EFAULT;
	return 0;
}

static int pid_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct mem_pid *mp = ctx;
	struct iovec local = { (void *)(uintptr_t)buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t r;

	if (len == 0)
		return 0;
	if (!pid_addr_ok(addr, len))
		return -EFAULT;
	r = process_vm_writev(mp->pid, &local, 1, &remote, 1, 0);
	if (r < 0)
		return -errno;
	return (size_t)r == len ? 0 : -EFAULT;
}

/* process_vm_readv(2) reads the remote pieces in order and stops at the first one it
 * cannot read: it returns the bytes read so far, or -1 with EFAULT when that is the
 * first piece (linux mm/process_vm_access.c process_vm_rw_core). So a short count
 * names the failing piece, and the reading goes on after it. */
#define PID_IOV_MAX 1024 /* UIO_MAXIOV */

static void pid_readv(void *ctx, struct mem_iov *iov, size_t n)
{
	struct mem_pid *mp = ctx;
	struct iovec local[PID_IOV_MAX], remote[PID_IOV_MAX];
	size_t idx[PID_IOV_MAX];
	size_t i = 0;

	while (i < n) {
		size_t k = 0, j;
		ssize_t r;

		for (; i < n && k < PID_IOV_MAX; i++) {
			if (iov[i].len == 0) {
				iov[i].rc = 0;
				continue;
			}
			if (!pid_addr_ok(iov[i].addr, iov[i].len)) {
				iov[i].rc = -EFAULT;
				continue;
			}
			local[k] = (struct iovec){ iov[i].buf, iov[i].len };
			remote[k] = (struct iovec){ (void *)(uintptr_t)iov[i].addr, iov[i].len };
			idx[k++] = i;
		}
		if (!k)
			break;
		r = process_vm_readv(mp->pid, local, k, remote, k, 0);
		if (r < 0 && errno != EFAULT) {
			int e = -errno;

			for (j = 0; j < k; j++)
				iov[idx[j]].rc = e;
			for (; i < n; i++)
				iov[i].rc = e;
			return;
		}
		if (r < 0)
			r = 0;
		for (j = 0; j < k && (size_t)r >= local[j].iov_len; j++) {
			iov[idx[j]].rc = 0;
			r -= (ssize_t)local[j].iov_len;
		}
		if (j < k) {
			/* Piece j failed; the ones after it were not tried: go on after it. */
			iov[idx[j]].rc = -EFAULT;
			i = idx[j] + 1;
		}
	}
}

struct gp_mem *mem_pid_new(pid_t pid)
{
	struct mem_pid *mp = xcalloc(1, sizeof(*mp));

	mp->pid = pid;
	mp->mem.read = pid_read;
	mp->mem.readv = pid_readv;
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
	int rw; /* mem_fake_new_rw: mem_write may change the regions' bytes */
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

static int fake_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	struct mem_fake *mf = ctx;
	size_t i;

	if (addr + len < addr)
		return -EFAULT;
	for (i = 0; i < mf->n; i++) {
		const struct mem_region *r = &mf->regions[i];

		if (addr >= r->addr && addr + len <= r->addr + r->len) {
			memcpy((char *)(uintptr_t)r->data + (addr - r->addr), buf, len);
			return 0;
		}
	}
	return -EFAULT;
}

struct gp_mem *mem_fake_new_rw(const struct mem_region *regions, size_t n)
{
	struct gp_mem *m = mem_fake_new(regions, n);

	((struct mem_fake *)m->ctx)->rw = 1;
	return m;
}

/* The readers are told apart by their read function: the struct has no write of its own,
 * so that gotop-perf's readers stay read-only by construction. */
int mem_write(const struct gp_mem *m, uint64_t addr, const void *buf, size_t len)
{
	if (m->read == pid_read)
		return pid_write(m->ctx, addr, buf, len);
	if (m->read == fake_read && ((struct mem_fake *)m->ctx)->rw)
		return fake_write(m->ctx, addr, buf, len);
	return -EROFS;
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
