/* gobpf.c: loads src/go/bpf/gobpf.bpf.c (embedded at build time) with libbpf, for one
 * Go binary's offsets, and reads the ring of records it writes at each sample. */
#include "config.h"
#include "gotop/gobpf.h"
#include "gotop/util.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef HAVE_GOBPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "go/bpf/gobpf-obj.h" /* gobpf_obj[]: the compiled program (Makefile.am) */

/* The ring is read in place, not through libbpf's ring_buffer: that one gives the
 * consumer position back after each record, so a record had to be copied out before
 * its sample was matched, and those bytes, written by the kernel on another CPU, were
 * cold: the copy was a large part of the live UI's CPU. Layout of the map's mmap (linux
 * kernel/bpf/ringbuf.c, struct bpf_ringbuf and bpf_ringbuf_mmap_kern): page 0 holds
 * consumer_pos, the only writable page; page 1 producer_pos; the data follow, mapped
 * twice in a row so that a record that wraps is contiguous. Each record starts with
 * an 8-byte header (include/uapi/linux/bpf.h BPF_RINGBUF_HDR_SZ): its length, with
 * BPF_RINGBUF_BUSY_BIT set while reserved and BPF_RINGBUF_DISCARD_BIT when discarded,
 * and records are 8-byte aligned. */

struct gobpf {
	struct bpf_object *obj;
	int prog_fd, stats_fd, statics_fd, kregs;
	struct gobpf_load load;
	struct gobpf_cfg cfg;
	size_t page, ring_bytes;
	unsigned long *cons;       /* consumer_pos */
	const unsigned long *prod; /* producer_pos; the data at (char *)prod + page */
	unsigned long peeked;      /* the consumer position past the records peeked */
};

/* libbpf's last warning, for the one-line reason (library code never prints). */
static __thread char last_msg[256];

static int on_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_DEBUG) {
		char *nl;

		vsnprintf(last_msg, sizeof(last_msg), fmt, ap);
		nl = strchr(last_msg, '\n');
		if (nl)
			*nl = 0;
	}
	return 0;
}

/* The offsets the program needs, from the reader's. */
static int cfg_from(const struct gort_offsets *o, struct gobpf_cfg *c)
{
	uint32_t i, maxg = 0, maxm = 0;

	memset(c, 0, sizeof(*c));
	c->goff[GOBPF_G_STACK_LO] = o->g_stack_lo;
	c->goff[GOBPF_G_STACK_HI] = o->g_stack_hi;
	c->goff[GOBPF_G_M] = o->g_m;
	c->goff[GOBPF_G_GOID] = o->g_goid;
	c->goff[GOBPF_G_LABELS] = o->g_labels;
	c->goff[GOBPF_G_STATUS] = o->g_atomicstatus;
	c->goff[GOBPF_G_SCHED_PC] = o->g_sched_pc;
	c->goff[GOBPF_G_SCHED_SP] = o->g_sched_sp;
	c->goff[GOBPF_G_SCHED_BP] = o->g_sched_bp;
	c->goff[GOBPF_G_STARTPC] = o->g_startpc; /* 0 when unknown: the reader ignores it */
	c->moff[GOBPF_M_G0] = o->m_g0;
	c->moff[GOBPF_M_PROCID] = o->m_procid;
	c->moff[GOBPF_M_GSIGNAL] = o->m_gsignal;
	c->moff[GOBPF_M_CURG] = o->m_curg;
	for (i = 0; i < GOBPF_G_NFIELDS; i++)
		maxg = GP_MAX(maxg, c->goff[i] + 8);
	for (i = 0; i < GOBPF_M_NFIELDS; i++)
		maxm = GP_MAX(maxm, c->moff[i] + 8);
	if (maxg > GOBPF_SPAN_MAX || maxm > GOBPF_SPAN_MAX || !o->g_goid || !o->g_m || !o->m_procid)
		return -1;
	c->gsz = maxg;
	c->msz = maxm;
	/* The saved state of a goroutine suspended at a stack switch (gobpf_cont). */
	c->cont = o->g_sched_sp && o->g_sched_pc && o->g_sched_bp;
	/* cgo callbacks (GOBPF_CONT_CB): not copied for a release whose layout is not known. */
	{
		struct gort_cgocb l;

		if (gort_cgocb_layout(o, &l) == 0) {
			c->cb_frame = l.frame;
			c->cb_off = l.off;
			c->cb_bp = l.bp;
		}
	}
	/* Label sets (gobpf-abi.h): copied when their layout fits the record, else read
	 * by the reader as before. */
	if (o->labels_kind == GORT_LABELS_SLICE) {
		c->lkind = GOBPF_LBL_SLICE;
	} else if (o->labels_kind == GORT_LABELS_MAP && gort_hmap_read_size(o) <= GOBPF_LBL_HMAP_MAX &&
		   o->bucket_size && o->bucket_size <= GOBPF_LBL_BUCKET_MAX &&
		   o->bucket_keys + 128 <= o->bucket_size && o->bucket_values + 128 <= o->bucket_size) {
		/* Every hmap offset is below the read size (gort_hmap_read_size). */
		c->lkind = GOBPF_LBL_MAP;
		c->hsz = gort_hmap_read_size(o);
		c->hmap_b = o->hmap_b;
		c->hmap_buckets = o->hmap_buckets;
		c->hmap_oldbuckets = o->hmap_oldbuckets;
		c->bucket_size = o->bucket_size;
		c->bucket_keys = o->bucket_keys;
		c->bucket_values = o->bucket_values;
	}
	return 0;
}

/* Opens and loads the object with one of its two programs. 0 or -errno. */
static int load(struct gobpf *b, size_t ring_bytes, int kregs)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "gotop_gobpf");
	struct bpf_program *pk, *pu;
	struct bpf_map *m;
	int rc;

	b->obj = bpf_object__open_mem(gobpf_obj, sizeof(gobpf_obj), &oo);
	if (!b->obj)
		return -errno;
	pk = bpf_object__find_program_by_name(b->obj, "gobpf_sample_k");
	pu = bpf_object__find_program_by_name(b->obj, "gobpf_sample_u");
	if (!pk || !pu)
		return -ENOENT;
	bpf_program__set_autoload(kregs ? pu : pk, false);
	m = bpf_object__find_map_by_name(b->obj, "gobpf_ring");
	if (!m || bpf_map__set_max_entries(m, (uint32_t)ring_bytes))
		return -EINVAL;
	/* The configuration is the object's only read-only datum (.rodata). */
	bpf_object__for_each_map(m, b->obj) {
		size_t sz = 0;

		if (!bpf_map__is_internal(m) || !strstr(bpf_map__name(m), ".rodata"))
			continue;
		if (!bpf_map__initial_value(m, &sz) || sz != sizeof(b->cfg) ||
		    bpf_map__set_initial_value(m, &b->cfg, sizeof(b->cfg)))
			return -EINVAL;
	}
	rc = bpf_object__load(b->obj);
	if (rc)
		return rc < 0 ? rc : -EINVAL;
	b->prog_fd = bpf_program__fd(kregs ? pk : pu);
	{
		/* What the verifier went through (Linux 5.16 on; 0 before). */
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (b->prog_fd >= 0 && bpf_obj_get_info_by_fd(b->prog_fd, &info, &len) == 0)
			b->load.verified_insns = info.verified_insns;
	}
	m = bpf_object__find_map_by_name(b->obj, "gobpf_stats");
	b->stats_fd = m ? bpf_map__fd(m) : -1;
	m = bpf_object__find_map_by_name(b->obj, "gobpf_statics");
	b->statics_fd = m ? bpf_map__fd(m) : -1;
	b->kregs = kregs;
	return b->prog_fd < 0 ? -EINVAL : 0;
}

/* Maps the ring (see struct gobpf). 0 or -errno. */
static int ring_map(struct gobpf *b, size_t ring_bytes)
{
	struct bpf_map *m = bpf_object__find_map_by_name(b->obj, "gobpf_ring");
	int fd = m ? bpf_map__fd(m) : -1;
	void *p;

	if (fd < 0)
		return -ENOENT;
	b->page = (size_t)sysconf(_SC_PAGESIZE);
	b->ring_bytes = ring_bytes;
	p = mmap(NULL, b->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	b->cons = p;
	p = mmap(NULL, b->page + 2 * ring_bytes, PROT_READ, MAP_SHARED, fd, (off_t)b->page);
	if (p == MAP_FAILED) {
		int e = -errno;

		munmap(b->cons, b->page);
		b->cons = NULL;
		return e;
	}
	b->prod = p;
	b->peeked = __atomic_load_n(b->cons, __ATOMIC_ACQUIRE);
	return 0;
}

struct gobpf *gobpf_new(const struct gort_offsets *o, size_t ring_bytes, char *err, size_t errlen)
{
	struct gobpf *b;
	libbpf_print_fn_t old;
	uint64_t t0, c0;
	int rc;

	if (ring_bytes < 4096 || (ring_bytes & (ring_bytes - 1))) {
		snprintf(err, errlen, "BPF ring size %zu is not a power of two of at least a page", ring_bytes);
		errno = EINVAL;
		return NULL;
	}
	b = xcalloc(1, sizeof(*b));
	if (cfg_from(o, &b->cfg)) {
		snprintf(err, errlen, "the Go runtime's g and m offsets do not fit the BPF program");
		free(b);
		errno = ENOTSUP;
		return NULL;
	}
	last_msg[0] = 0;
	old = libbpf_set_print(on_print);
	t0 = util_now_ns();
	c0 = util_thread_cpu_ns();
	/* With the kernel-entry registers first; kernels without BTF or bpf_task_pt_regs
	 * (before 5.15) take the variant without them. */
	rc = load(b, ring_bytes, 1);
	if (rc) {
		bpf_object__close(b->obj);
		b->obj = NULL;
		rc = load(b, ring_bytes, 0);
	}
	if (!rc)
		rc = ring_map(b, ring_bytes);
	b->load.wall_ns = util_now_ns() - t0;
	b->load.cpu_ns = util_thread_cpu_ns() - c0;
	libbpf_set_print(old);
	if (rc) {
		/* The verifier's rejection is EACCES too: as root, say what the loader said. */
		if ((rc == -EPERM || rc == -EACCES) && geteuid() != 0)
			snprintf(err, errlen, "cannot load the BPF program: needs CAP_BPF and CAP_PERFMON (or root)");
		else
			snprintf(err, errlen, "cannot load the BPF program: %s%s%s", strerror(-rc),
				 last_msg[0] ? ": " : "", last_msg);
		gobpf_free(b);
		errno = -rc;
		return NULL;
	}
	return b;
}

void gobpf_free(struct gobpf *b)
{
	if (!b)
		return;
	if (b->prod)
		munmap((void *)b->prod, b->page + 2 * b->ring_bytes);
	if (b->cons)
		munmap(b->cons, b->page);
	bpf_object__close(b->obj);
	free(b);
}

int gobpf_prog_fd(const struct gobpf *b)
{
	return b->prog_fd;
}

int gobpf_kernel_regs(const struct gobpf *b)
{
	return b->kregs;
}

int gobpf_offsets_match(const struct gobpf *b, const struct gort_offsets *o)
{
	struct gobpf_cfg c;

	return cfg_from(o, &c) == 0 && memcmp(&c, &b->cfg, sizeof(c)) == 0;
}

size_t gobpf_peek(struct gobpf *b, void (*fn)(void *arg, const struct gobpf_rec *r), void *arg)
{
	const unsigned char *data = (const unsigned char *)b->prod + b->page;
	unsigned long pos = b->peeked, end = __atomic_load_n(b->prod, __ATOMIC_ACQUIRE);
	size_t n = 0;

	while (pos < end) {
		const uint32_t *hdr = (const uint32_t *)(data + (pos & (b->ring_bytes - 1)));
		/* Acquire: the record's bytes are written before its busy bit is cleared
		 * (bpf_ringbuf_commit). */
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		uint32_t size = len & ~(uint32_t)(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break; /* reserved, not committed yet: it and those after it wait */
		pos += (size + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
		if (!(len & BPF_RINGBUF_DISCARD_BIT) && size >= sizeof(struct gobpf_rec)) {
			fn(arg, (const struct gobpf_rec *)((const unsigned char *)hdr + BPF_RINGBUF_HDR_SZ));
			n++;
		}
	}
	b->peeked = pos;
	return n;
}

void gobpf_release(struct gobpf *b)
{
	__atomic_store_n(b->cons, b->peeked, __ATOMIC_RELEASE);
}

int gobpf_set_statics(struct gobpf *b, const uint64_t (*ranges)[2], size_t n)
{
	struct gobpf_statics st;
	uint32_t zero = 0;
	size_t i;

	if (b->statics_fd < 0)
		return -ENOENT;
	memset(&st, 0, sizeof(st));
	for (i = 0; i < n && st.n < GOBPF_STATIC_MAX; i++) {
		if (ranges[i][0] >= ranges[i][1])
			continue;
		st.lo[st.n] = ranges[i][0];
		st.hi[st.n] = ranges[i][1];
		st.n++;
	}
	return bpf_map_update_elem(b->statics_fd, &zero, &st, BPF_ANY) ? -errno : 0;
}

void gobpf_counts(const struct gobpf *b, uint64_t *records, uint64_t *ring_full)
{
	int ncpu = libbpf_num_possible_cpus();
	uint32_t k;

	uint64_t *v;

	*records = *ring_full = 0;
	if (b->stats_fd < 0 || ncpu <= 0)
		return;
	v = xcalloc((size_t)ncpu, sizeof(*v)); /* one value per possible CPU */
	for (k = 0; k < GOBPF_ST_NFIELDS; k++) {
		uint64_t sum = 0;
		int c;

		if (bpf_map_lookup_elem(b->stats_fd, &k, v) == 0)
			for (c = 0; c < ncpu; c++)
				sum += v[c];
		*(k == GOBPF_ST_RECORDS ? records : ring_full) = sum;
	}
	free(v);
}

void gobpf_load_info(const struct gobpf *b, struct gobpf_load *l)
{
	*l = b->load;
}

int gobpf_run_time(const struct gobpf *b, uint64_t *runs, uint64_t *ns)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);

	*runs = *ns = 0;
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(b->prog_fd, &info, &len))
		return -errno;
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
	return 0;
}

#else /* !HAVE_GOBPF */

struct gobpf *gobpf_new(const struct gort_offsets *o, size_t ring_bytes, char *err, size_t errlen)
{
	snprintf(err, errlen, "built without BPF support (configure found no libbpf or clang)");
	errno = ENOTSUP;
	return NULL;
}

void gobpf_free(struct gobpf *b)
{
}

int gobpf_prog_fd(const struct gobpf *b)
{
	return -1;
}

int gobpf_kernel_regs(const struct gobpf *b)
{
	return 0;
}

int gobpf_offsets_match(const struct gobpf *b, const struct gort_offsets *o)
{
	return 0;
}

int gobpf_set_statics(struct gobpf *b, const uint64_t (*ranges)[2], size_t n)
{
	return -ENOTSUP;
}

size_t gobpf_peek(struct gobpf *b, void (*fn)(void *arg, const struct gobpf_rec *r), void *arg)
{
	return 0;
}

void gobpf_release(struct gobpf *b)
{
}

void gobpf_counts(const struct gobpf *b, uint64_t *records, uint64_t *ring_full)
{
	*records = *ring_full = 0;
}

void gobpf_load_info(const struct gobpf *b, struct gobpf_load *l)
{
	memset(l, 0, sizeof(*l));
}

int gobpf_run_time(const struct gobpf *b, uint64_t *runs, uint64_t *ns)
{
	*runs = *ns = 0;
	return -ENOTSUP;
}

#endif
