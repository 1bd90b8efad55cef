/* goread.c: reads each sample's goroutine and pprof labels on the sampling thread, as
 * close to the sample as possible, and hands them on as an extra record. */
#include "config.h"
#include "gotop/goread.h"
#include "gotop/mem.h"
#include "gotop/sampler.h"
#include "gotop/util.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The last read per thread: samples of one thread drained together are read at the
 * same moment anyway (the thread has run on since), so one read serves them all. */
#define TIDCACHE 256
#define COALESCE_NS 200000 /* a drain takes microseconds; reads this close are one */

struct tidread {
	uint32_t tid;
	uint64_t when;
	struct goread_extra x;
};

struct goread {
	struct gort *gort;
	struct gp_mem *mem;
	struct tidread last[TIDCACHE];
};

struct goread_slot {
	struct goread *gr;     /* published with release, read with acquire */
	pthread_mutex_t lock;  /* gort is single-threaded; samplers may be several */
	struct goread_stats st;
};

struct goread_slot *goread_slot_new(void)
{
	struct goread_slot *slot = xcalloc(1, sizeof(*slot));

	pthread_mutex_init(&slot->lock, NULL);
	return slot;
}

void goread_slot_free(struct goread_slot *slot)
{
	if (!slot)
		return;
	if (slot->gr) {
		gort_free(slot->gr->gort);
		mem_pid_free(slot->gr->mem);
		free(slot->gr);
	}
	pthread_mutex_destroy(&slot->lock);
	free(slot);
}

int goread_publish(struct goread_slot *slot, pid_t pid, const char *go_version, Dwarf *dwarf,
		   int arch)
{
	struct goread *gr;
	struct gort *g;

	if (__atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE))
		return -EEXIST;
	g = gort_new(go_version, dwarf, arch);
	if (!g)
		return -(errno ? errno : ENOTSUP);
	gr = xcalloc(1, sizeof(*gr));
	gr->gort = g;
	gr->mem = mem_pid_new(pid);
	__atomic_store_n(&slot->gr, gr, __ATOMIC_RELEASE);
	return 0;
}

int goread_active(const struct goread_slot *slot)
{
	return __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE) != NULL;
}

static int log2_bucket(uint64_t v)
{
	int b = 0;

	while (v > 1 && b < 31) {
		v >>= 1;
		b++;
	}
	return b;
}

size_t goread_hook(void *arg, const struct perf_event_header *h, const struct perfrec_layout *layout,
		   void *extra)
{
	struct goread_slot *slot = arg;
	struct goread *gr = __atomic_load_n(&slot->gr, __ATOMIC_ACQUIRE);
	struct goread_extra *x = extra;
	struct perf_sample s;
	struct gort_result r;
	struct timespec now;
	int sp = sampler_reg(SREG_SP), g = sampler_reg(SREG_G);

	if (!gr || perfrec_parse_sample(layout, h, &s) || !s.regs_abi || sp < 0 || g < 0)
		return 0;
	memset(x, 0, sizeof(*x));
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&slot->lock);
	{
		uint64_t t = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
		struct tidread *c = &gr->last[s.tid % TIDCACHE];

		if (c->tid == s.tid && t - c->when < COALESCE_NS) {
			*x = c->x;
			slot->st.coalesced++;
		} else {
			x->rc = gort_read(gr->gort, gr->mem, s.tid, s.regs[g], s.regs[sp], &r);
			slot->st.reads++;
			if (x->rc == 0) {
				x->goid = r.goid;
				x->labels = r.labels;
			}
			x->flags = (uint32_t)r.flags;
			c->tid = s.tid;
			c->when = t;
			c->x = *x;
		}
		if (x->rc == 0) {
			slot->st.found++;
			if (x->labels && x->labels->n)
				slot->st.labelled++;
		}
		/* Sample times are CLOCK_MONOTONIC (the sampler sets use_clockid). */
		x->delay_ns = t > s.time ? t - s.time : 0;
		slot->st.delay_hist[log2_bucket(x->delay_ns)]++;
	}
	pthread_mutex_unlock(&slot->lock);
	return sizeof(*x);
}

void goread_get_stats(const struct goread_slot *slot, struct goread_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&slot->lock);
	*st = slot->st;
	pthread_mutex_unlock((pthread_mutex_t *)&slot->lock);
}

uint64_t goread_delay_quantile(const struct goread_stats *st, double q)
{
	uint64_t total = 0, acc = 0;
	int b;

	for (b = 0; b < 32; b++)
		total += st->delay_hist[b];
	if (!total)
		return 0;
	for (b = 0; b < 32; b++) {
		acc += st->delay_hist[b];
		if ((double)acc >= q * (double)total)
			return 2ULL << b; /* the bucket's upper bound */
	}
	return 2ULL << 31;
}
