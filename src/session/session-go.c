/* session-go.c: the session's Go reader at the sample: the slot the samplers' hook reads
 * goroutines through (goread.h), the BPF program that reads them at the sample and its
 * loader thread, finding the Go runtime in the target's executable, and how the
 * aggregator reads what the hook put after each sample (struct agg_go_reader). */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/gobpf-abi.h"
#include "gotop/goread.h"
#include "gotop/symbolizer.h"
#include "gotop/symtab.h"
#include "gotop/util.h"
#include "session-int.h"

/* Drain interval while the BPF program reads goroutines at the sample: only label sets
 * are read at the drain, and they do not change (immutable Go objects). After a drain
 * that read nothing (the program copied the label sets and their strings made at run
 * time, the constants were known), the next may wait BPF_IDLE_DRAIN_MS, the interval
 * without Go (sampler_opts.drain_idle_ms): every wakeup of the sampling thread costs
 * (BENCHMARKS.md, "Own CPU against perf top"). */
#define BPF_DRAIN_MS 50
#define BPF_IDLE_DRAIN_MS 500
/* The program's ring (mapped twice into gotop-perf, so it counts double in its resident
 * size): room for two idle drains of records (struct gobpf_rec, with the label set's
 * copy and its run-time strings) at the sampling rate on every CPU (a thread is sampled
 * while it runs), from 256 KiB to 4 MiB. A full ring loses no sample: the sample is read
 * the slow way, and that read makes the next drain a short one. */
#define BPF_RING_MIN (256u << 10)
#define BPF_RING_MAX (4u << 20)

/* The samples of one idle drain on every CPU, twice over; a record and the ring's 8-byte
 * header each. */
static size_t bpf_ring_bytes(const struct session_opts *o)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t want = (o->use_freq ? o->freq : 1000) * (uint64_t)(ncpu > 0 ? ncpu : 1) * 2 *
			(sizeof(struct gobpf_rec) + 8) * BPF_IDLE_DRAIN_MS / 1000;
	size_t n = BPF_RING_MIN;

	while (n < want && n < BPF_RING_MAX)
		n <<= 1;
	return n;
}

/* Loads the BPF program and gives it to the samplers open by then (later ones take it from
 * go_so): drains may then wait longer, since only label sets are read at the drain. */
static void *bpf_main(void *arg)
{
	struct session *s = arg;
	char why[sizeof(s->info.bpf_why)];
	int fd;
	size_t i;

	fd = goread_slot_bpf(s->goslot, s->info.go_version, bpf_ring_bytes(&s->o), why, sizeof(why));
	if (fd == 0)
		fd = goread_bpf_fd(s->goslot);
	pthread_mutex_lock(&s->bpf_lock);
	if (fd >= 0) {
		s->go_so.bpf = 1;
		s->go_so.bpf_prog_fd = fd;
		s->go_so.drain_ms = GP_MAX(s->o.label_latency_ms, BPF_DRAIN_MS);
		s->go_so.drain_idle_ms = BPF_IDLE_DRAIN_MS;
		s->info.bpf = 1;
		s->info.bpf_why[0] = 0;
		for (i = 0; i < s->nsamplers; i++) {
			sampler_set_bpf(s->samplers[i], fd);
			sampler_set_drain_ms(s->samplers[i], s->go_so.drain_ms, s->go_so.drain_idle_ms);
		}
	} else {
		memcpy(s->info.bpf_why, why, sizeof(why));
	}
	pthread_mutex_unlock(&s->bpf_lock);
	return NULL;
}

/* Goroutines and labels of a Go target: read at each sample by the BPF program once it
 * is loaded, else right after it by the sampling thread. One program for every event. */
void session_go_setup(struct session *s)
{
	struct sampler_opts *so = &s->go_so;

	so->hook = goread_hook;
	so->hook_arg = s->goslot;
	/* Until the program is in (or without it), goroutines are read at the drain: it
	 * must come soon. */
	so->drain_ms = s->o.label_latency_ms;
	so->drain_idle_ms = 0;
	if (!s->o.bpf) {
		snprintf(s->info.bpf_why, sizeof(s->info.bpf_why), "--no-bpf");
		return;
	}
	snprintf(s->info.bpf_why, sizeof(s->info.bpf_why), "the BPF program was still loading");
	s->bpf_thread_on = pthread_create(&s->bpf_thread, NULL, bpf_main, s) == 0;
	if (!s->bpf_thread_on)
		bpf_main(s);
}

void session_go_idle_hook(struct session *s, struct sampler_opts *so)
{
	so->hook = goread_hook;
	so->hook_arg = s->goslot;
}

void session_go_join(struct session *s)
{
	if (s->bpf_thread_on) {
		pthread_join(s->bpf_thread, NULL);
		s->bpf_thread_on = 0;
	}
}

/* A look that found no Go is repeated at most once a second while samples come, when
 * /proc/PID/exe is another file by then: the process may exec (a command started
 * through a shell script that execs the service). Latching the first answer also
 * lost Go for a whole run once in CI (the live UI on the Go demo, under TSan; the
 * cause was not found: a look before the exec would see gotop-perf's own file). */
#define GO_RECHECK_NS (1000ull * 1000 * 1000)

void session_go_look(struct session *s)
{
	struct symbolizer *sym;
	struct symfile *sf;
	const char *ver;

	if (!s->agg)
		return;
	sym = agg_symbolizer(s->agg);
	if (s->go_checked) {
		uint64_t now;

		if (s->go_version)
			return;
		now = util_now_ns();
		if (now - s->go_checked_ns < GO_RECHECK_NS)
			return;
		s->go_checked_ns = now;
		if (!symbolizer_main_changed(sym))
			return;
	}
	s->go_checked = 1;
	s->go_checked_ns = util_now_ns();
	sf = symbolizer_main_file(sym);
	if (!sf)
		return;
	ver = symfile_go_version(sf);
	if (!ver)
		return;
	s->go_version = xstrdup(ver);
	if (s->goslot)
		goread_publish_file(s->goslot, s->target.pid, sf);
}

void session_go_free(struct session *s)
{
	session_go_join(s);
	goread_slot_free(s->goslot);
	s->goslot = NULL;
	free(s->go_version);
	s->go_version = NULL;
}

void session_go_stats(struct session *s, struct goread_stats *st)
{
	if (s->goslot)
		goread_get_stats(s->goslot, st);
	else
		memset(st, 0, sizeof(*st));
}

/* --- the aggregator's view of the hook's records --- */

/* The hook's record (goread_extra, then with the BPF program a goread_cont). The sampler
 * writes records 8-byte aligned, and the hook wrote these structs there: the stack words
 * and frames of the state past a switch are used in place. */
static int go_sample(const void *payload, size_t len, struct agg_go *g, struct repair_switch *sw)
{
	const struct goread_extra *x = payload;
	const struct goread_cont *c;

	if (len < sizeof(*x))
		return -1;
	memset(g, 0, sizeof(*g));
	if (x->flags & GORT_LABELS_DROPPED)
		g->flags |= AGG_GO_LABELS_DROPPED;
	if (x->rc != 0)
		return 0;
	g->flags |= AGG_GO_FOUND;
	g->goid = x->goid;
	g->startpc = x->startpc;
	g->labels = x->labels && x->labels->n ? x->labels : NULL;
	/* The suspended goroutine's state, when the reader had room for it. */
	if (len < sizeof(*x) + sizeof(*c))
		return 0;
	c = (const struct goread_cont *)(x + 1);
	if (!c->valid)
		return 0;
	*sw = (struct repair_switch){ c->pc, c->sp, c->bp, c->stack, GOREAD_CONT_WORDS, c->ret,
				      GP_MIN(c->n, GOREAD_CONT_FRAMES), c->cb != 0 };
	g->cross = sw;
	return 0;
}

static size_t go_labels(const void *set, struct agg_label *out, size_t max)
{
	const struct gort_labels *l = set;
	size_t i, n = GP_MIN((size_t)l->n, max);

	for (i = 0; i < n; i++)
		out[i] = (struct agg_label){ l->pairs[i].key, l->pairs[i].value, l->pairs[i].klen,
					     l->pairs[i].vlen };
	return n;
}

_Static_assert(sizeof(struct goread_extra) % 8 == 0, "goread_cont follows 8-byte aligned");
_Static_assert(AGG_MAX_GO_LABELS >= GORT_MAX_LABELS, "every pair a label set keeps");

static const struct agg_go_reader reader = { go_sample, go_labels };

const struct agg_go_reader *session_go_reader(void)
{
	return &reader;
}
