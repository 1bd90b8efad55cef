/* sampler.c: the sampling thread: per-CPU inherited perf events on every thread of the
 * target, ring buffers drained into batches, thread churn and event switches handled. */
#include "config.h"
#include "gotop/sampler.h"
#include "gotop/hashmap.h"
#include "gotop/procinfo.h"
#include "gotop/ring.h"
#include "gotop/util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t regs_mask(void)
{
	uint64_t m = 0;
	int i;

	for (i = 0; i < SREG_COUNT; i++)
		if (sampler_reg((enum sampler_reg)i) >= 0)
			m |= 1ULL << sampler_reg((enum sampler_reg)i);
	return m;
}

#define BATCH_BYTES (256 * 1024)
#define QUEUE_MAX_BYTES (64u << 20) /* beyond this the consumer is behind: drop, count */
/* Rescans of /proc/PID/task start RESCAN_NS apart; each one that finds every thread
 * covered doubles the interval, up to RESCAN_MAX_NS (the thread count it updates lags by
 * as much). At a fixed short interval, rescans (open, getdents, /proc's dentry lookups)
 * were a noticeable part of the sampling thread's CPU. */
#define RESCAN_NS (200 * 1000000ULL)
#define RESCAN_MAX_NS (1600 * 1000000ULL)
/* Without a hook nothing needs the samples soon: the consumer flushes when it wants them
 * (sampler_flush) and a ring 3/4 full wakes the thread. Every wakeup costs CPU, and
 * frequent timer wakeups were most of the CPU of `record` (BENCHMARKS.md, "Own CPU against
 * perf top"). The rings have room for longer than this at the rate (ring_pages_for), or
 * wake the thread. */
#define DRAIN_DEFAULT_MS 500
#define FIRST_WINDOW_NS (1000 * 1000000ULL)
#define PUBLISH_NS (1000 * 1000000ULL)

/* One thread we opened events on: fds[i] is the event on cpus[i]; for a group, fds[i] is
 * the leader and mfds[i * nmembers + k] member k. A group's events sample on their own
 * (events_group_attr): each writes into the ring of its CPU's owner, as the leaders of
 * the other threads do. With sample_read only the leader samples and reads the others. */
struct tev {
	pid_t tid;
	int *fds;
	int *mfds;
};

/* One set of events (one event, one generation): the owners' rings per CPU. */
struct evset {
	uint32_t gen;
	struct event_spec event;
	struct perfrec_layout layout;
	struct perf_event_attr attr;
	struct perf_event_attr mattr[EVENT_GROUP_MAX - 1]; /* a group's members */
	size_t nm;           /* event.nmembers */
	int per_member;      /* a group whose members sample (not event.sample_read) */
	/* per_member: the id of each event opened (PERF_EVENT_IOC_ID; an inherited event's
	 * samples carry its parent's, linux kernel/events/core.c primary_event_id) -> 1 +
	 * the event's index in the group, 0 the leader. */
	struct hashmap ids;
	/* sample_read: a group's counts at the last sample of each event instance (thread and
	 * CPU): the key (tid << 32 | cpu) + 1 gives an index into lastv, 1 + nm values each. */
	struct hashmap last;
	uint64_t *lastv;
	size_t nlastv, caplastv;
	int use_freq;
	uint64_t freq, period;
	int *owner;          /* per CPU: the fd whose ring the others write into */
	void **maps;
	size_t map_len;
	int map_errno; /* errno of a ring's mmap that failed in this attempt, or 0 */
	int member_err; /* 1 + the group member whose perf_event_open failed, or 0 */
	struct ring *rings;
	struct tev *tevs;
	size_t ntevs, captevs;
};

struct sampler {
	struct sampler_opts o;
	pid_t *only_tids;
	int *cpus;
	size_t ncpus;
	int pidfd, wakefd;

	pthread_mutex_t lock; /* evset, stats, candidates */
	struct evset *cur;
	struct evset **old;   /* retired sets: layouts must outlive batches */
	size_t nold;
	uint32_t gen;

	pid_t *cand;          /* threads seen once by a rescan and not by inheritance */
	size_t ncand, capcand;
	pid_t *forked;        /* threads announced by PERF_RECORD_FORK (covered by inherit) */
	size_t nforked, capforked;
	uint64_t last_scan, rescan_ns;
	uint64_t last_publish;

	pthread_mutex_t qlock;
	pthread_cond_t qcond;
	struct sample_batch *qhead, *qtail, *pool;
	size_t qbytes;
	size_t wake_bytes;  /* sampler_set_wake_bytes: a wait in sampler_take ends at this many */
	int notify_fd;      /* sampler_set_notify_fd, or -1 */
	int kicked; /* sampler_kick: the next wait in sampler_take returns at once */
	unsigned drain_req, drain_idle_req; /* sampler_set_drain_ms, taken by the thread (atomic) */
	int hook_idle;      /* the hook's last end-of-drain call said the next drain may wait
			     * (written under lock, read atomically) */
	struct sample_batch *fill;
	/* During a drain with a hook, full batches wait here until the hook's end-of-drain
	 * call has completed their extra records. */
	int holding;
	struct sample_batch *hhead, *htail;

	pthread_t thread;
	int running, stop, exited, paused;
	struct sampler_stats st;
	clockid_t thread_clock;
};

static long perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group, unsigned long fl)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, fl);
}

static unsigned ring_pages_for(const struct sampler_opts *o, const struct event_spec *ev)
{
	/* Room for ~800 ms of samples at the requested rate per CPU, as a power of two, so
	 * that a busy CPU's ring (woken at 3/4, fill_attr) seldom wakes the thread before
	 * its drain interval: at a high rate a ring of a few pages loses records.
	 * For Go at 1 kHz (256-byte stack copies) that is 128 pages, with
	 * the header page the unprivileged share per CPU (kernel.perf_event_mlock_kb,
	 * default 516 KiB); evset_open halves it when refused. Half that room woke the
	 * sampling thread more often and cost it more CPU (BENCHMARKS.md, "Own CPU against perf top"). */
	uint64_t rate = o->use_freq ? o->freq : 1000;
	uint64_t bytes;
	unsigned pages = 16;

	/* A group whose members sample: each of its events at the rate. */
	if (ev->nmembers && !ev->sample_read)
		rate *= 1u + ev->nmembers;
	bytes = rate * (o->stack_size + 256) * 8 / 10;

	if (o->ring_pages)
		return o->ring_pages;
	while ((uint64_t)pages * 4096 < bytes && pages < 512)
		pages *= 2;
	return pages;
}

/* Bytes of a ring of map_len (the header page and the data) at which the kernel wakes
 * its poller: 3/4 of the data (kernel/events/ring_buffer.c ring_buffer_init takes the
 * smaller of it and the data size). */
static uint32_t ring_watermark(size_t map_len)
{
	return (uint32_t)((map_len - 4096) / 4 * 3);
}

static void fill_attr(struct perf_event_attr *a, const struct sampler_opts *o,
		      const struct event_spec *ev, int use_freq, uint64_t value, int inherit)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	/* The event and its modifiers; the kernel only where permitted. */
	events_attr(ev, a);
	if (!o->kernel)
		a->exclude_kernel = 1;
	if (use_freq) {
		a->freq = 1;
		a->sample_freq = value;
	} else {
		a->sample_period = value;
	}
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = regs_mask();
	if (o->stack_size) {
		a->sample_type |= PERF_SAMPLE_STACK_USER;
		a->sample_stack_user = o->stack_size;
	}
	a->disabled = 1;
	a->inherit = inherit ? 1 : 0;
	/* A level not counted has no frames either: cpu-clock:u stacks end in user code,
	 * cpu-clock:k stacks are the kernel's alone. */
	a->exclude_callchain_kernel = a->exclude_kernel;
	a->exclude_callchain_user = a->exclude_user;
	a->mmap = 1;
	a->mmap2 = 1;
	a->task = 1;
	a->sample_id_all = 1;
	/* Woken at 3/4 of the ring (wakeup_watermark, set by evset_open for the ring
	 * size; the kernel's default is half); the drain interval (poll timeout) bounds
	 * the delay between a sample and the hook's read, whatever the number of
	 * threads and the rate. */
	a->watermark = 1;
	a->wakeup_watermark = 0;
	/* One clock for all: a group's members must have their leader's, and events that
	 * write into one ring the owner's (linux kernel/events/core.c perf_event_open,
	 * perf_event_set_output). */
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->enable_on_exec = o->enable_on_exec ? 1 : 0;
	events_group_attr(ev, a);
}

/* A group's member k, from the leader's finished attr: counted while the leader is (its
 * enable starts the group), sampling with it or read at its samples (events.h), and the
 * kernel only where permitted. */
static void fill_member_attr(struct perf_event_attr *m, const struct sampler_opts *o,
			     const struct evset *es, size_t k)
{
	events_group_member_attr(&es->event, k, &es->attr, m);
	if (!o->kernel)
		m->exclude_kernel = 1;
	m->exclude_callchain_kernel = m->exclude_kernel;
}

static void close_members(struct sampler *s, struct evset *es, struct tev *t)
{
	size_t i;

	if (!t->mfds)
		return;
	for (i = 0; i < s->ncpus * es->nm; i++)
		if (t->mfds[i] >= 0) {
			close(t->mfds[i]);
			t->mfds[i] = -1;
		}
}

static void evset_close(struct sampler *s, struct evset *es)
{
	size_t i, c;

	if (!es)
		return;
	for (i = 0; i < es->ntevs; i++) {
		for (c = 0; c < s->ncpus; c++)
			if (es->tevs[i].fds[c] >= 0 && es->tevs[i].fds[c] != es->owner[c])
				close(es->tevs[i].fds[c]);
		close_members(s, es, &es->tevs[i]);
		free(es->tevs[i].fds);
		free(es->tevs[i].mfds);
	}
	free(es->tevs);
	es->tevs = NULL;
	es->ntevs = es->captevs = 0;
	for (c = 0; c < s->ncpus; c++) {
		if (es->maps && es->maps[c] && es->maps[c] != MAP_FAILED) {
			ring_fini(&es->rings[c]);
			munmap(es->maps[c], es->map_len);
		}
		if (es->owner && es->owner[c] >= 0)
			close(es->owner[c]);
	}
	free(es->maps);
	free(es->rings);
	free(es->owner);
	hashmap_free(&es->ids);
	hashmap_free(&es->last);
	free(es->lastv);
	es->lastv = NULL;
	es->nlastv = es->caplastv = 0;
	es->maps = NULL;
	es->rings = NULL;
	es->owner = NULL;
}

/* Gives the event the BPF program (sampler_opts.bpf). An event that refuses it still
 * samples. */
static void attach_bpf(struct sampler *s, int fd)
{
	__atomic_fetch_add(ioctl(fd, PERF_EVENT_IOC_SET_BPF, s->o.bpf_prog_fd) == 0 ? &s->st.bpf_attached
										    : &s->st.bpf_failed,
			   1, __ATOMIC_RELAXED);
}

static struct tev *evset_find(struct evset *es, pid_t tid)
{
	size_t i;

	for (i = 0; i < es->ntevs; i++)
		if (es->tevs[i].tid == tid)
			return &es->tevs[i];
	return NULL;
}

/* per_member: notes the id of an event just opened as the group's event k (0 the
 * leader). 0 or -errno. */
static int note_id(struct evset *es, int fd, size_t k)
{
	uint64_t id;

	if (ioctl(fd, PERF_EVENT_IOC_ID, &id) != 0)
		return -errno;
	*hashmap_put(&es->ids, id, NULL) = k + 1;
	return 0;
}

/* Opens the event on one thread on every CPU, redirecting into the owners' rings
 * (creating and mapping the owners first). 0, -ESRCH when the thread is gone, or
 * another -errno. */
static int evset_add_thread(struct sampler *s, struct evset *es, pid_t tid)
{
	struct tev t;
	size_t c;
	int err = 0;

	t.tid = tid;
	t.fds = xmalloc(s->ncpus * sizeof(int));
	t.mfds = NULL;
	for (c = 0; c < s->ncpus; c++)
		t.fds[c] = -1;
	if (es->nm) {
		t.mfds = xmalloc(s->ncpus * es->nm * sizeof(int));
		for (c = 0; c < s->ncpus * es->nm; c++)
			t.mfds[c] = -1;
	}
	for (c = 0; c < s->ncpus; c++) {
		long fd = perf_open(&es->attr, tid, s->cpus[c], -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0) {
			err = -errno;
			break;
		}
		t.fds[c] = (int)fd;
		if (es->per_member && (err = note_id(es, (int)fd, 0)) != 0)
			break;
		for (size_t k = 0; k < es->nm; k++) {
			long mfd = perf_open(&es->mattr[k], tid, s->cpus[c], (int)fd,
					     PERF_FLAG_FD_CLOEXEC);

			if (mfd < 0) {
				err = -errno;
				es->member_err = (int)k + 1;
				break;
			}
			t.mfds[c * es->nm + k] = (int)mfd;
			if (es->per_member && (err = note_id(es, (int)mfd, k + 1)) != 0)
				break;
		}
		if (err)
			break;
		/* Before the event is enabled: its first sample already runs the program. A
		 * group's members that sample run it at their samples too. */
		if (s->o.bpf) {
			attach_bpf(s, (int)fd);
			for (size_t k = 0; es->per_member && k < es->nm; k++)
				attach_bpf(s, t.mfds[c * es->nm + k]);
		}
		if (es->owner[c] < 0) {
			void *m = mmap(NULL, es->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);

			if (m == MAP_FAILED) {
				err = -errno;
				es->map_errno = errno;
				break;
			}
			es->owner[c] = (int)fd;
			es->maps[c] = m;
			ring_init(&es->rings[c], m, es->map_len - 4096);
		} else if (ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, es->owner[c]) != 0) {
			err = -errno;
			break;
		}
		for (size_t k = 0; es->per_member && k < es->nm; k++)
			if (ioctl(t.mfds[c * es->nm + k], PERF_EVENT_IOC_SET_OUTPUT,
				  es->owner[c]) != 0) {
				err = -errno;
				break;
			}
		if (err)
			break;
	}
	if (err) {
		close_members(s, es, &t);
		for (c = 0; c < s->ncpus; c++)
			if (t.fds[c] >= 0 && t.fds[c] != es->owner[c])
				close(t.fds[c]);
		free(t.fds);
		free(t.mfds);
		return err;
	}
	xgrow((void **)&es->tevs, &es->captevs, es->ntevs + 1, sizeof(t));
	es->tevs[es->ntevs++] = t;
	return 0;
}

static void evset_enable(struct sampler *s, struct evset *es, int on)
{
	size_t i, c;

	for (i = 0; i < es->ntevs; i++)
		for (c = 0; c < s->ncpus; c++)
			if (es->tevs[i].fds[c] >= 0)
				ioctl(es->tevs[i].fds[c], on ? PERF_EVENT_IOC_ENABLE : PERF_EVENT_IOC_DISABLE, 0);
}

static int pid_in(const pid_t *v, size_t n, pid_t t)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == t)
			return 1;
	return 0;
}

/* Unmaps and closes the ring owners of a set with no thread yet (a retry). */
static void evset_unmap(struct sampler *s, struct evset *es)
{
	size_t c;

	for (c = 0; c < s->ncpus; c++) {
		if (es->owner[c] < 0)
			continue;
		ring_fini(&es->rings[c]);
		munmap(es->maps[c], es->map_len);
		close(es->owner[c]);
		es->owner[c] = -1;
		es->maps[c] = NULL;
	}
	es->map_errno = 0;
}

/* Opens an event set on the target's threads. Loops until the thread list is
 * stable so that a thread created while we attach is not missed. */
/* A set for event ev, its attributes filled, no thread opened yet. */
static struct evset *evset_alloc(struct sampler *s, const struct event_spec *ev, int use_freq,
				 uint64_t value)
{
	struct evset *es = xcalloc(1, sizeof(*es));
	unsigned pages = ring_pages_for(&s->o, ev);
	size_t c;

	es->event = *ev;
	es->use_freq = use_freq;
	if (use_freq)
		es->freq = value;
	else
		es->period = value;
	fill_attr(&es->attr, &s->o, ev, use_freq, value, s->o.ntids == 0);
	es->nm = ev->nmembers;
	es->per_member = ev->nmembers && !ev->sample_read;
	es->layout.read_format = es->attr.read_format;
	es->layout.sample_type = es->attr.sample_type;
	es->layout.regs_user_mask = es->attr.sample_regs_user;
	es->layout.sample_id_all = 1;
	es->map_len = (size_t)(pages + 1) * 4096;
	es->attr.wakeup_watermark = ring_watermark(es->map_len);
	for (c = 0; c < es->nm; c++)
		fill_member_attr(&es->mattr[c], &s->o, es, c);
	es->owner = xmalloc(s->ncpus * sizeof(int));
	es->maps = xcalloc(s->ncpus, sizeof(void *));
	es->rings = xcalloc(s->ncpus, sizeof(struct ring));
	for (c = 0; c < s->ncpus; c++)
		es->owner[c] = -1;
	return es;
}

/* Opens es on every thread of the target (or the given ones): threads started while
 * the list is read are found by the next round. 0 or -errno. */
static int evset_add_threads(struct sampler *s, struct evset *es)
{
	int round, r = 0;

	for (round = 0; round < 16; round++) {
		pid_t *tids = NULL;
		long n, i, added = 0;

		if (s->o.ntids) {
			tids = xmalloc(s->o.ntids * sizeof(pid_t));
			memcpy(tids, s->only_tids, s->o.ntids * sizeof(pid_t));
			n = (long)s->o.ntids;
		} else {
			n = procinfo_tasks(s->o.pid, &tids);
			if (n <= 0) {
				r = n < 0 ? (int)n : -ESRCH;
				free(tids);
				break;
			}
		}
		for (i = 0; i < n; i++) {
			if (evset_find(es, tids[i]))
				continue;
			r = evset_add_thread(s, es, tids[i]);
			if (r == -ESRCH && !s->o.ntids) {
				r = 0; /* it exited meanwhile */
				continue;
			}
			if (r) {
				if (r == -EPERM && es->map_errno == EPERM && es->map_len > 2 * 4096 &&
				    es->ntevs == 0) {
					/* perf_event_mlock_kb exhausted (on any CPU): retry
					 * with smaller rings. A refused perf_event_open is
					 * not about the rings: no retry. */
					evset_unmap(s, es);
					es->map_len = (es->map_len - 4096) / 2 + 4096;
					es->attr.wakeup_watermark = ring_watermark(es->map_len);
					i--;
					r = 0;
					continue;
				}
				break;
			}
			added++;
		}
		free(tids);
		if (r || s->o.ntids || added == 0)
			break;
	}
	if (!r && es->ntevs == 0)
		r = -ESRCH;
	return r;
}

/* Why es could not be opened (r, -errno), in err. */
static void evset_explain(const struct sampler *s, const struct evset *es, int r, char *err,
			  size_t errlen)
{
	const struct event_spec *ev = &es->event;

	if ((r == -EPERM || r == -ENOMEM) && es->map_errno == -r) {
		/* Even a one-page ring was refused: locked memory, not the event. */
		char *kb = util_read_file("/proc/sys/kernel/perf_event_mlock_kb", 32, NULL);

		if (kb)
			kb[strcspn(kb, "\n")] = '\0';
		snprintf(err, errlen,
			 "%s: cannot map a ring buffer: locked memory used up "
			 "(kernel.perf_event_mlock_kb=%s per CPU, then ulimit -l; raise either, or "
			 "run as root)",
			 ev->name, kb ? kb : "?");
		free(kb);
	} else if (es->member_err) {
		/* Name the member, as a lone event of it would be named. */
		struct event_spec one;

		memset(&one, 0, sizeof(one));
		one.type = ev->members[es->member_err - 1].type;
		one.kind = ev->members[es->member_err - 1].kind;
		snprintf(one.name, sizeof(one.name), "%s", ev->members[es->member_err - 1].name);
		events_explain_error(&one, -r, s->o.pid, err, errlen);
	} else {
		events_explain_error(ev, -r, s->o.pid, err, errlen);
	}
}

static struct evset *evset_open(struct sampler *s, const struct event_spec *ev, int use_freq,
				uint64_t value, char *err, size_t errlen)
{
	struct evset *es;
	int r;

	if (ev->exclude_user && !s->o.kernel) {
		char kwhy[256];

		if (events_kernel_allowed(kwhy, sizeof(kwhy)))
			snprintf(kwhy, sizeof(kwhy), "kernel sampling is off");
		snprintf(err, errlen, "%s: counts the kernel only, and %s", ev->name, kwhy);
		errno = EACCES;
		return NULL;
	}
	es = evset_alloc(s, ev, use_freq, value);
	r = evset_add_threads(s, es);
	if (r) {
		evset_explain(s, es, r, err, errlen);
		evset_close(s, es);
		free(es);
		errno = -r;
		return NULL;
	}
	es->gen = ++s->gen;
	return es;
}

/* --- batches --- */

static struct sample_batch *batch_get(struct sampler *s)
{
	struct sample_batch *b;

	pthread_mutex_lock(&s->qlock);
	b = s->pool;
	if (b)
		s->pool = b->next;
	pthread_mutex_unlock(&s->qlock);
	if (!b) {
		b = xcalloc(1, sizeof(*b));
		b->cap = BATCH_BYTES;
		b->data = xmalloc(b->cap);
	}
	b->next = NULL;
	b->len = 0;
	return b;
}

static uint64_t count_samples(const struct sample_batch *b)
{
	size_t off = 0;
	uint64_t n = 0;

	while (off + sizeof(struct perf_event_header) <= b->len) {
		const struct perf_event_header *h = (const void *)(b->data + off);

		if (h->size < sizeof(*h)) /* never loop on a broken batch */
			break;
		if (h->type == PERF_RECORD_SAMPLE)
			n++;
		off += (h->size + 7u) & ~7u;
	}
	return n;
}

/* Ends the consumer's wait, in sampler_take and on the notify fd. Called with qlock held. */
static void wake_consumer(struct sampler *s)
{
	const uint64_t one = 1;

	pthread_cond_broadcast(&s->qcond);
	/* An eventfd refuses a write (EAGAIN) only when its count is at the maximum, and
	 * it is readable then anyway (eventfd(2)). */
	if (s->notify_fd >= 0 && write(s->notify_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		s->notify_fd = -1;
}

/* Hands a batch to the consumer. Called with s->lock held. */
static void batch_queue(struct sampler *s, struct sample_batch *b)
{
	b->next = NULL; /* a held batch (drain) still points at the next one held */
	pthread_mutex_lock(&s->qlock);
	if (s->qbytes + b->len > QUEUE_MAX_BYTES) {
		uint64_t n = count_samples(b);

		b->next = s->pool;
		s->pool = b;
		pthread_mutex_unlock(&s->qlock);
		s->st.dropped += n;
		return;
	}
	if (s->qtail)
		s->qtail->next = b;
	else
		s->qhead = b;
	s->qtail = b;
	s->qbytes += b->len;
	if (s->qbytes >= s->wake_bytes)
		wake_consumer(s);
	pthread_mutex_unlock(&s->qlock);
}

/* Publishes the batch being filled (or holds it, see struct sampler). Called with
 * s->lock held. */
static void batch_publish(struct sampler *s)
{
	struct sample_batch *b = s->fill;

	if (!b || b->len == 0)
		return;
	s->fill = NULL;
	b->next = NULL;
	if (s->holding) {
		if (s->htail)
			s->htail->next = b;
		else
			s->hhead = b;
		s->htail = b;
		return;
	}
	batch_queue(s, b);
}

/* Appends a record; `reserve` more bytes must fit after it in the same batch (a
 * sample and its extra record are never split between batches). */
static void batch_append_r(struct sampler *s, struct evset *es, const struct perf_event_header *h,
			   size_t reserve)
{
	size_t sz = ((size_t)h->size + 7u) & ~(size_t)7u;

	if (s->fill && (s->fill->gen != es->gen || s->fill->len + sz + reserve > s->fill->cap))
		batch_publish(s);
	if (!s->fill) {
		s->fill = batch_get(s);
		s->fill->gen = es->gen;
		s->fill->layout = &es->layout;
		s->fill->event = &es->event;
	}
	if (sz > s->fill->cap) { /* cannot happen: records are < 64 KiB */
		s->st.bad++;
		return;
	}
	memcpy(s->fill->data + s->fill->len, h, h->size);
	s->fill->len += sz;
}

static void batch_append(struct sampler *s, struct evset *es, const struct perf_event_header *h)
{
	batch_append_r(s, es, h, 0);
}

/* --- the thread --- */

struct drain_ctx {
	struct sampler *s;
	struct evset *es;
	int hooked; /* the hook returned an extra record in this drain */
};

/* A group's sample in the batch (at rec, a copy of the ring's): each counter's value becomes
 * its count since the last sample of the same event instance (thread and CPU), so that the
 * consumer adds it to the sample's stack and labels. The kernel gives running totals (for
 * an inherited event, those of the thread's own copy). The first sample of an instance
 * keeps its total: the count since the event was opened on it. */
static void group_deltas(struct evset *es, uint8_t *rec)
{
	struct perf_sample ps;
	uint64_t *slot, *last, *v;
	size_t i, nv = 1 + es->nm;
	int created;

	if (perfrec_parse_sample(&es->layout, (struct perf_event_header *)rec, &ps) ||
	    ps.read_nr != nv || ps.read_stride != 1)
		return;
	slot = hashmap_put(&es->last, ((uint64_t)ps.tid << 32 | ps.cpu) + 1, &created);
	if (created) {
		xgrow((void **)&es->lastv, &es->caplastv, es->nlastv + nv, sizeof(uint64_t));
		*slot = es->nlastv;
		memset(es->lastv + es->nlastv, 0, nv * sizeof(uint64_t));
		es->nlastv += nv;
	}
	last = es->lastv + *slot;
	v = (uint64_t *)(uintptr_t)ps.read_vals; /* rec is the batch's own copy */
	for (i = 0; i < nv; i++) {
		uint64_t now = v[i];

		v[i] = now >= last[i] ? now - last[i] : now;
		last[i] = now;
	}
}

/* per_member: the group's event that took a sample (h, in the ring): 0 the leader, k + 1
 * member k, from the id the sample starts with (PERF_SAMPLE_IDENTIFIER), or -1 when the
 * id is none of the set's. */
static int64_t sample_event(const struct evset *es, const struct perf_event_header *h)
{
	uint64_t id, *k;

	if (h->size < sizeof(*h) + sizeof(id))
		return -1;
	memcpy(&id, h + 1, sizeof(id));
	k = hashmap_get(&es->ids, id);
	return k ? (int64_t)*k - 1 : -1;
}

/* The batch's copy of the record just appended (h, in the ring). */
static uint8_t *appended(struct sampler *s, const struct perf_event_header *h)
{
	return s->fill->data + s->fill->len - (((size_t)h->size + 7u) & ~(size_t)7u);
}

/* Called with s->lock held. */
static void on_record(const struct perf_event_header *h, void *arg)
{
	struct drain_ctx *d = arg;
	struct sampler *s = d->s;
	int64_t ev = 0;

	s->st.bytes += h->size;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		/* A group whose members sample: the batch's copy says which event took the
		 * sample, in place of the id (sampler.h). */
		if (d->es->per_member && (ev = sample_event(d->es, h)) < 0) {
			s->st.bad++; /* every fd's id is noted before it is enabled */
			break;
		}
		s->st.samples++;
		if (s->o.hook) {
			struct perf_event_header *x;
			size_t n;

			/* The hook writes its extra record in place, after the sample: the
			 * batch keeps room for the largest, and is held until the end of the
			 * drain (see drain), so the hook may finish it then. */
			batch_append_r(s, d->es, h, sizeof(*x) + SAMPLER_EXTRA_MAX);
			if (d->es->per_member)
				memcpy(appended(s, h) + sizeof(*h), &ev, sizeof(ev));
			else if (d->es->nm)
				group_deltas(d->es, appended(s, h));
			if (s->fill->len + sizeof(*x) + SAMPLER_EXTRA_MAX > s->fill->cap)
				break;
			x = (struct perf_event_header *)(s->fill->data + s->fill->len);
			n = s->o.hook(s->o.hook_arg, h, &d->es->layout, x + 1);
			if (n > 0 && n <= SAMPLER_EXTRA_MAX) {
				x->type = SAMPLER_RECORD_EXTRA;
				x->misc = 0;
				x->size = (uint16_t)((sizeof(*x) + n + 7) & ~(size_t)7);
				s->fill->len += x->size;
				d->hooked = 1;
			}
			break;
		}
		batch_append(s, d->es, h);
		if (d->es->per_member)
			memcpy(appended(s, h) + sizeof(*h), &ev, sizeof(ev));
		else if (d->es->nm)
			group_deltas(d->es, appended(s, h));
		break;
	case PERF_RECORD_LOST:
		/* struct { header; u64 id; u64 lost; sample_id } */
		if (h->size >= sizeof(*h) + 16) {
			uint64_t lost;

			memcpy(&lost, (const uint8_t *)(h + 1) + 8, 8);
			s->st.lost += lost;
		}
		batch_append(s, d->es, h);
		break;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* struct { header; u32 pid, ppid, tid, ptid; u64 time; sample_id } */
		if (h->size >= sizeof(*h) + 16) {
			uint32_t f[4];

			memcpy(f, h + 1, sizeof(f));
			if (h->type == PERF_RECORD_FORK && f[0] == (uint32_t)s->o.pid) {
				xgrow((void **)&s->forked, &s->capforked, s->nforked + 1, sizeof(pid_t));
				s->forked[s->nforked++] = (pid_t)f[2];
			} else if (h->type == PERF_RECORD_EXIT) {
				struct tev *t = evset_find(d->es, (pid_t)f[2]);

				/* Close our events on a thread that exited, but keep the
				 * ring owners: the others write into their buffers. */
				if (t) {
					size_t c;

					close_members(s, d->es, t);
					for (c = 0; c < s->ncpus; c++) {
						if (t->fds[c] >= 0 && t->fds[c] != d->es->owner[c]) {
							close(t->fds[c]);
							t->fds[c] = -1;
						}
					}
				}
			}
		}
		batch_append(s, d->es, h);
		break;
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_COMM:
		batch_append(s, d->es, h);
		break;
	default:
		break;
	}
}

/* Drains every ring. With a hook, the batches filled meanwhile are held until the hook's
 * end-of-drain call (h == NULL) has returned: it may complete the extra records of the
 * drain's samples then, all at once. Called with s->lock held. */
static void drain(struct sampler *s, struct evset *es)
{
	struct drain_ctx d = { s, es, 0 };
	size_t c;

	s->holding = s->o.hook != NULL;
	for (c = 0; c < s->ncpus; c++) {
		if (!es->maps[c])
			continue;
		ring_drain(&es->rings[c], on_record, &d);
	}
	if (d.hooked) {
		int idle = s->o.hook(s->o.hook_arg, NULL, NULL, NULL) == 0;

		__atomic_store_n(&s->hook_idle, idle, __ATOMIC_RELAXED);
		s->st.hook_drains++;
		s->st.hook_idle += (uint64_t)idle;
	} else if (s->o.hook) {
		/* No sample, so nothing for the hook to complete: the next drain may wait as
		 * after one whose hook read nothing, so that the thread seldom wakes while
		 * attached to an idle Go process. */
		__atomic_store_n(&s->hook_idle, 1, __ATOMIC_RELAXED);
	}
	s->holding = 0;
	while (s->hhead) {
		struct sample_batch *b = s->hhead;

		s->hhead = b->next;
		batch_queue(s, b);
	}
	s->htail = NULL;
}

/* Threads the inheritance could not cover (created while we attached): a thread
 * seen by two rescans in a row that is neither ours nor announced by a FORK
 * record gets its own events. Called with s->lock held, after a drain. Sets the
 * interval to the next rescan. */
static void rescan(struct sampler *s, struct evset *es)
{
	pid_t *tids = NULL, *newcand = NULL;
	size_t nnew = 0, capnew = 0;
	long n, i, added = 0;

	n = procinfo_tasks(s->o.pid, &tids);
	if (n < 0)
		return;
	s->st.threads = (uint32_t)n;
	for (i = 0; i < n; i++) {
		pid_t t = tids[i];

		if (evset_find(es, t) || pid_in(s->forked, s->nforked, t))
			continue;
		if (pid_in(s->cand, s->ncand, t)) {
			added++;
			if (evset_add_thread(s, es, t) == 0 && !s->paused) {
				size_t c;
				struct tev *tv = evset_find(es, t);

				for (c = 0; c < s->ncpus; c++)
					ioctl(tv->fds[c], PERF_EVENT_IOC_ENABLE, 0);
			}
			continue;
		}
		xgrow((void **)&newcand, &capnew, nnew + 1, sizeof(pid_t));
		newcand[nnew++] = t;
	}
	free(s->cand);
	s->cand = newcand;
	s->ncand = nnew;
	s->capcand = capnew;
	if (added || nnew)
		s->rescan_ns = RESCAN_NS;
	else if (s->rescan_ns < RESCAN_MAX_NS)
		s->rescan_ns *= 2;
	/* Keep the fork list bounded to live threads. */
	{
		size_t k = 0, j;

		for (j = 0; j < s->nforked; j++)
			if (pid_in(tids, (size_t)n, s->forked[j]))
				s->forked[k++] = s->forked[j];
		s->nforked = k;
	}
	free(tids);
}

static int target_gone(struct sampler *s)
{
	if (s->pidfd >= 0) {
		struct pollfd p = { s->pidfd, POLLIN, 0 };

		return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
	}
	return kill(s->o.pid, 0) != 0 && errno == ESRCH;
}

/* The sampling thread's wait between drains. The drain interval is a bound, not a period:
 * sleep 3/4 of it and let the kernel end the sleep anywhere in the last quarter (timer
 * slack, prctl(2) PR_SET_TIMERSLACK; hrtimers expire between the soft and the hard time,
 * linux kernel/time/hrtimer.c), so that the wakeup can share an interrupt that comes
 * anyway (such as the cpu-clock sampling timer): drains then come between 3/4 of the
 * interval and the interval (scheduling delays aside), not at the interval and the
 * default slack after it. */
struct drain_wait {
	unsigned drain_ms; /* in effect; 0 until the first turn */
	uint64_t interval_ns;
	struct timespec sleep_ts;
};

/* The drain interval for this turn: sampler_set_drain_ms's, else the option's, or the
 * longer idle one (of the same source) while the hook says the target is idle. Sets the sleep and the timer
 * slack when it changes. */
static void drain_wait_update(struct sampler *s, struct drain_wait *w)
{
	unsigned want = __atomic_load_n(&s->drain_req, __ATOMIC_RELAXED), idle = s->o.drain_idle_ms;

	if (want)
		idle = __atomic_load_n(&s->drain_idle_req, __ATOMIC_RELAXED);
	else
		want = s->o.drain_ms ? s->o.drain_ms : DRAIN_DEFAULT_MS;
	if (idle > want && __atomic_load_n(&s->hook_idle, __ATOMIC_RELAXED))
		want = idle;
	if (want == w->drain_ms)
		return;
	w->drain_ms = want;
	w->interval_ns = w->drain_ms * 1000000ULL;
	w->sleep_ts.tv_sec = (time_t)(w->interval_ns * 3 / 4 / 1000000000ULL);
	w->sleep_ts.tv_nsec = (long)(w->interval_ns * 3 / 4 % 1000000000ULL);
	prctl(PR_SET_TIMERSLACK, (unsigned long)(w->interval_ns / 4), 0, 0, 0);
}

/* What the sampling thread polls: the wake eventfd (pfd[0]), the ring of each CPU's owner
 * fd, and the target's pidfd when there is one (last, at pidx). The set changes only with
 * the event set, so it is built once per generation. Called with s->lock held. */
struct poll_set {
	struct pollfd *pfd; /* ncpus + 2 */
	size_t np;
	uint32_t gen;
	int pidx; /* -1: no pidfd */
};

static void poll_set_update(struct sampler *s, struct poll_set *p)
{
	if (s->cur->gen != p->gen) {
		size_t c;

		p->gen = s->cur->gen;
		p->np = 0;
		p->pfd[p->np].fd = s->wakefd;
		p->pfd[p->np++].events = POLLIN;
		for (c = 0; c < s->ncpus; c++) {
			if (s->cur->owner[c] >= 0) {
				p->pfd[p->np].fd = s->cur->owner[c];
				p->pfd[p->np++].events = POLLIN;
			}
		}
		if (s->pidfd >= 0) {
			p->pfd[p->np].fd = s->pidfd;
			p->pfd[p->np++].events = POLLIN;
		}
	}
	p->pidx = s->pidfd >= 0 ? (int)p->np - 1 : -1;
}

/* After a wait: drains the rings, looks for new threads when it is time (all of the
 * process's threads, not a -t list), drains once more if the target is gone (the last
 * samples of exiting threads), and hands the batch on. Returns whether the thread
 * stops. Called with s->lock held. */
static int drain_turn(struct sampler *s, int gone)
{
	uint64_t now;
	int stop;

	drain(s, s->cur);
	if (!s->o.ntids && !gone) {
		now = util_now_ns();
		if (now - s->last_scan >= s->rescan_ns) {
			rescan(s, s->cur);
			s->last_scan = now;
		}
	}
	if (gone) {
		drain(s, s->cur);
		s->exited = 1;
		s->st.target_exited = 1;
	}
	stop = s->stop || gone;
	/* Hand the batch on every second (full ones go at once): short drain intervals are
	 * for the hook's reads, the consumer need not wake for each. The thread's CPU time
	 * (a system call, not the vDSO) is taken as often. */
	now = util_now_ns();
	if (stop || now - s->last_publish >= PUBLISH_NS) {
		struct timespec ts;

		batch_publish(s);
		s->last_publish = now;
		if (clock_gettime(s->thread_clock, &ts) == 0)
			s->st.self_cpu_ns = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
	}
	return stop;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	sigset_t all;
	struct poll_set ps = { NULL, 0, 0, -1 };
	struct drain_wait w = { 0, 0, { 0, 0 } };
	/* Until the first sample is delivered, drain every few ms whatever the interval: the
	 * first data need not wait for a long one. Only in the first second: attached to an
	 * idle process, the thread would keep waking that often (BENCHMARKS.md, "Attach to
	 * first data" and "Own CPU against perf top"). */
	const struct timespec first_ts = { 0, 4000000L };
	const uint64_t first_until = util_now_ns() + FIRST_WINDOW_NS;

	/* Signals are for the main thread (Ctrl-C, SIGTERM, SIGWINCH). */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	pthread_getcpuclockid(pthread_self(), &s->thread_clock);
	ps.pfd = xcalloc(s->ncpus + 2, sizeof(*ps.pfd));
	for (;;) {
		size_t c;
		int stop, gone, first;

		drain_wait_update(s, &w);
		pthread_mutex_lock(&s->lock);
		first = s->st.samples == 0 && w.interval_ns > 4000000ULL && /* drains may run elsewhere too */
			util_now_ns() < first_until;
		poll_set_update(s, &ps);
		pthread_mutex_unlock(&s->lock);

		for (c = 0; c < ps.np; c++)
			ps.pfd[c].revents = 0;
		ppoll(ps.pfd, ps.np, first ? &first_ts : &w.sleep_ts, NULL);
		if (ps.pfd[0].revents & POLLIN) {
			uint64_t v;

			if (read(s->wakefd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		/* A pidfd is readable once the process has exited (pidfd_open(2)). */
		if (ps.pidx >= 0)
			gone = (ps.pfd[ps.pidx].revents & (POLLIN | POLLHUP)) != 0;
		else
			gone = target_gone(s);
		pthread_mutex_lock(&s->lock);
		stop = drain_turn(s, gone);
		pthread_mutex_unlock(&s->lock);
		if (stop)
			break;
	}
	free(ps.pfd);
	pthread_mutex_lock(&s->qlock);
	s->running = 0;
	wake_consumer(s);
	pthread_mutex_unlock(&s->qlock);
	return NULL;
}

/* --- public --- */

struct sampler *sampler_new(const struct sampler_opts *o, char *err, size_t errlen)
{
	struct sampler *s = xcalloc(1, sizeof(*s));
	struct rlimit rl;
	long n;
	int e;

	s->o = *o;
	if (o->ntids) {
		s->only_tids = xmalloc(o->ntids * sizeof(pid_t));
		memcpy(s->only_tids, o->tids, o->ntids * sizeof(pid_t));
		s->o.tids = s->only_tids;
	}
	if (s->o.stack_size > 65528)
		s->o.stack_size = 65528;
	s->o.stack_size &= ~7u;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->qlock, NULL);
	pthread_cond_init(&s->qcond, NULL);
	s->notify_fd = -1;
	s->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	s->pidfd = (int)syscall(SYS_pidfd_open, o->pid, 0);
	/* One event per thread and CPU: raise the fd limit as far as allowed. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	n = procinfo_online_cpus(&s->cpus);
	if (n <= 0) {
		snprintf(err, errlen, "cannot read the list of online CPUs");
		e = EINVAL;
		goto fail;
	}
	s->ncpus = (size_t)n;
	s->cur = evset_open(s, &o->event, o->use_freq, o->use_freq ? o->freq : o->period, err, errlen);
	if (!s->cur) {
		e = errno;
		goto fail;
	}
	s->st.threads = (uint32_t)s->cur->ntevs;
	s->last_scan = util_now_ns();
	s->rescan_ns = RESCAN_NS;
	return s;
fail:
	sampler_free(s);
	errno = e;
	return NULL;
}

int sampler_start(struct sampler *s)
{
	int r;

	/* A command not yet exec'd is counted from its exec on, by the kernel: enabled now,
	 * its execve would be sampled with the launcher's user stack (gotop-perf's own pcs,
	 * in no mapping of the command). */
	if (!s->o.enable_on_exec)
		evset_enable(s, s->cur, 1);
	s->running = 1;
	r = pthread_create(&s->thread, NULL, sampler_main, s);
	if (r) {
		s->running = 0;
		return -r;
	}
	pthread_setname_np(s->thread, "gotop-sampler"); /* as top -H and perf show threads */
	return 0;
}

static void wake(struct sampler *s)
{
	uint64_t one = 1;

	if (write(s->wakefd, &one, sizeof(one)) < 0) {
		/* the counter saturates: the thread is awake anyway */
	}
}

/* Whether a wait in sampler_take goes on: too little queued, sampling on, no kick.
 * Called with qlock held. */
static int take_waits(const struct sampler *s)
{
	return (!s->qhead || s->qbytes < s->wake_bytes) && s->running && !s->kicked;
}

struct sample_batch *sampler_take(struct sampler *s, int timeout_ms)
{
	struct sample_batch *b;

	pthread_mutex_lock(&s->qlock);
	if (timeout_ms > 0 && take_waits(s)) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += timeout_ms / 1000;
		ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		while (take_waits(s))
			if (pthread_cond_timedwait(&s->qcond, &s->qlock, &ts) == ETIMEDOUT)
				break;
	}
	if (timeout_ms > 0) /* a kick ends one wait, and only a wait takes it */
		s->kicked = 0;
	b = s->qhead;
	if (b) {
		s->qhead = b->next;
		if (!s->qhead)
			s->qtail = NULL;
		s->qbytes -= b->len;
		b->next = NULL;
	}
	pthread_mutex_unlock(&s->qlock);
	return b;
}

void sampler_set_wake_bytes(struct sampler *s, size_t bytes)
{
	pthread_mutex_lock(&s->qlock);
	s->wake_bytes = GP_MIN(bytes, (size_t)QUEUE_MAX_BYTES / 2);
	pthread_mutex_unlock(&s->qlock);
}

void sampler_kick(struct sampler *s)
{
	pthread_mutex_lock(&s->qlock);
	s->kicked = 1;
	wake_consumer(s);
	pthread_mutex_unlock(&s->qlock);
}

void sampler_set_notify_fd(struct sampler *s, int fd)
{
	pthread_mutex_lock(&s->qlock);
	s->notify_fd = fd;
	pthread_mutex_unlock(&s->qlock);
}

void sampler_set_drain_ms(struct sampler *s, unsigned ms, unsigned idle_ms)
{
	if (!ms)
		return;
	__atomic_store_n(&s->drain_idle_req, idle_ms, __ATOMIC_RELAXED);
	__atomic_store_n(&s->drain_req, ms, __ATOMIC_RELAXED);
	wake(s);
}

void sampler_set_bpf(struct sampler *s, int prog_fd)
{
	size_t i, c;

	pthread_mutex_lock(&s->lock);
	if (!s->o.bpf) {
		s->o.bpf = 1;
		s->o.bpf_prog_fd = prog_fd;
		for (i = 0; i < s->cur->ntevs; i++)
			for (c = 0; c < s->ncpus; c++) {
				const struct tev *t = &s->cur->tevs[i];

				if (t->fds[c] >= 0)
					attach_bpf(s, t->fds[c]);
				/* A group's members that sample (evset_add_thread). */
				for (size_t k = 0; s->cur->per_member && k < s->cur->nm; k++)
					if (t->mfds[c * s->cur->nm + k] >= 0)
						attach_bpf(s, t->mfds[c * s->cur->nm + k]);
			}
	}
	pthread_mutex_unlock(&s->lock);
}

void sampler_flush(struct sampler *s)
{
	pthread_mutex_lock(&s->lock);
	drain(s, s->cur);
	batch_publish(s);
	s->last_publish = util_now_ns();
	pthread_mutex_unlock(&s->lock);
}

void sampler_batch_free(struct sampler *s, struct sample_batch *b)
{
	if (!b)
		return;
	pthread_mutex_lock(&s->qlock);
	b->next = s->pool;
	s->pool = b;
	pthread_mutex_unlock(&s->qlock);
}

int sampler_set_event(struct sampler *s, const struct event_spec *ev, int use_freq, uint64_t value,
		      char *err, size_t errlen)
{
	struct evset *es, *old;

	if (s->exited) {
		snprintf(err, errlen, "the target has exited");
		return -ESRCH;
	}
	/* Open the new set before touching the old one: if it fails, nothing changes. */
	pthread_mutex_lock(&s->lock);
	es = evset_open(s, ev, use_freq, value, err, errlen);
	if (!es) {
		int e = errno;

		pthread_mutex_unlock(&s->lock);
		return -e;
	}
	old = s->cur;
	evset_enable(s, old, 0);
	drain(s, old);
	batch_publish(s);
	if (!s->paused)
		evset_enable(s, es, 1);
	s->cur = es;
	s->rescan_ns = RESCAN_NS; /* the new set was opened on the threads listed now */
	free(s->forked);
	s->forked = NULL;
	s->nforked = s->capforked = 0;
	evset_close(s, old);
	/* Keep the retired set: batches in flight point at its layout and event. */
	s->old = xrealloc(s->old, (s->nold + 1) * sizeof(*s->old));
	s->old[s->nold++] = old;
	pthread_mutex_unlock(&s->lock);
	wake(s);
	return 0;
}

int sampler_pause(struct sampler *s, int paused)
{
	pthread_mutex_lock(&s->lock);
	s->paused = paused;
	evset_enable(s, s->cur, !paused);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

void sampler_get_stats(struct sampler *s, struct sampler_stats *st)
{
	size_t i, c;
	uint32_t fds = 0;

	pthread_mutex_lock(&s->lock);
	*st = s->st;
	for (c = 0; c < s->ncpus; c++)
		if (s->cur->maps[c])
			st->bad += s->cur->rings[c].bad;
	st->gen = s->cur->gen;
	st->paused = s->paused;
	snprintf(st->event, sizeof(st->event), "%s", s->cur->event.name);
	st->use_freq = s->cur->use_freq;
	st->freq = s->cur->freq;
	st->period = s->cur->period;
	for (i = 0; i < s->cur->ntevs; i++) {
		for (c = 0; c < s->ncpus; c++)
			fds += s->cur->tevs[i].fds[c] >= 0;
		for (c = 0; s->cur->tevs[i].mfds && c < s->ncpus * s->cur->nm; c++)
			fds += s->cur->tevs[i].mfds[c] >= 0; /* a group's members */
	}
	st->fds = fds;
	st->bpf_attached = __atomic_load_n(&s->st.bpf_attached, __ATOMIC_RELAXED);
	st->bpf_failed = __atomic_load_n(&s->st.bpf_failed, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&s->lock);
}

int sampler_target_exited(struct sampler *s)
{
	int r;

	pthread_mutex_lock(&s->lock);
	r = s->exited;
	pthread_mutex_unlock(&s->lock);
	return r;
}

void sampler_stop(struct sampler *s)
{
	if (!s || !s->thread)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = 1;
	pthread_mutex_unlock(&s->lock);
	wake(s);
	pthread_join(s->thread, NULL);
	s->thread = 0;
	pthread_mutex_lock(&s->lock);
	evset_enable(s, s->cur, 0);
	drain(s, s->cur);
	batch_publish(s);
	pthread_mutex_unlock(&s->lock);
}

void sampler_free(struct sampler *s)
{
	struct sample_batch *b, *n;
	size_t i;

	if (!s)
		return;
	sampler_stop(s);
	if (s->cur) {
		evset_close(s, s->cur);
		free(s->cur);
	}
	for (i = 0; i < s->nold; i++)
		free(s->old[i]);
	free(s->old);
	for (b = s->qhead; b; b = n) {
		n = b->next;
		free(b->data);
		free(b);
	}
	for (b = s->pool; b; b = n) {
		n = b->next;
		free(b->data);
		free(b);
	}
	if (s->fill) {
		free(s->fill->data);
		free(s->fill);
	}
	if (s->pidfd >= 0)
		close(s->pidfd);
	if (s->wakefd >= 0)
		close(s->wakefd);
	free(s->cand);
	free(s->forked);
	free(s->cpus);
	free(s->only_tids);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->qlock);
	pthread_cond_destroy(&s->qcond);
	free(s);
}
