/* session.c: one profiling session: the target, the sources a consumer asked for and
 * their life, CPU samples (a sampler per event, the aggregator, the drain loop), the
 * profiles out with their metadata, and the statistics (linux tools/perf/builtin-record.c
 * keeps the same pieces in one struct record). The Go reader is in session-go.c, the
 * wall-clock sampler in wall.c, snapshots of every goroutine in goroutines.c, the memory
 * profiles in mem.c. */
#include "config.h"
#include "gotop/session.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "gotop/procinfo.h"
#include "gotop/repair.h"
#include "gotop/target.h"
#include "gotop/util.h"
#include "session-int.h"

void session_opts_init(struct session_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sources = SESSION_CPU;
	o->use_freq = 1;
	o->freq = 1000;
	o->repair = 1;
	o->go = 1;
	o->bpf = 1;
	o->label_latency_ms = 4;
	o->wall_hz = 10;
}

static void fail(struct session_err *e, enum session_fail kind)
{
	e->kind = kind;
}

static void wall_start(struct session *s);

static int target_fail(int r, struct session_err *e)
{
	fail(e, r == -EINVAL ? SESSION_FAIL_USAGE
	      : (r == -ESRCH || r == -EOPNOTSUPP) ? SESSION_FAIL_TARGET : SESSION_FAIL_SYSTEM);
	return r;
}

struct session *session_new(const struct session_opts *o, struct session_err *e)
{
	struct session *s = xcalloc(1, sizeof(*s));
	struct agg_opts ao;
	int r, is_go;

	s->o = *o;
	s->efd = -1;
	pthread_mutex_init(&s->bpf_lock, NULL);
	pthread_mutex_init(&s->src_lock, NULL);
	if (o->pid)
		r = target_attach(&s->target, o->pid, o->tids, o->ntids, e->why, sizeof(e->why));
	else
		r = target_spawn(&s->target, o->command, o->command_quiet, e->why, sizeof(e->why));
	if (r) {
		target_fail(r, e);
		pthread_mutex_destroy(&s->bpf_lock);
		pthread_mutex_destroy(&s->src_lock);
		free(s);
		errno = -r;
		return NULL;
	}
	s->info.pid = s->target.pid;
	s->info.spawned = s->target.spawned;
	s->info.kernel = events_kernel_allowed(s->info.kernel_why, sizeof(s->info.kernel_why));

	/* Whether it is Go decides the Go reads, the stack bytes per sample (the verifier
	 * repairs with as many) and the wall-clock sampler; the goroutine snapshots find out
	 * for themselves. A command has not exec'd yet: its executable is read from the path. */
	is_go = (o->sources & (SESSION_CPU | SESSION_WALL | SESSION_VERIFY)) &&
		(o->go || !o->stack_size || (o->sources & SESSION_WALL)) &&
		target_is_go(o->pid ? NULL : o->command[0], s->target.pid, s->info.go_version,
			     sizeof(s->info.go_version));
	s->info.stack_size = o->stack_size ? o->stack_size
					   : repair_stack_bytes(is_go ? s->info.go_version : NULL);
	s->info.go = o->go && is_go;
	if (o->sources & SESSION_CPU) {
		memset(&ao, 0, sizeof(ao));
		ao.pid = s->target.pid;
		ao.repair = o->repair;
		ao.kernel = s->info.kernel;
		ao.hold_kernel = o->hold_kernel;
		ao.go_reader = session_go_reader();
		s->agg = agg_new(&ao);
		if (o->go)
			s->goslot = goread_slot_new();
		if (s->info.go)
			session_go_setup(s);
	}
	if ((o->sources & SESSION_WALL) && s->info.go && s->agg)
		s->oncpu = gowall_oncpu_new();
	return s;
}

const struct session_info *session_info(const struct session *s)
{
	return &s->info;
}

const struct session_opts *session_options(const struct session *s)
{
	return &s->o;
}

struct agg *session_agg(struct session *s)
{
	return s->agg;
}

int session_open(struct session *s, struct session_err *e)
{
	size_t i;

	if (!(s->o.sources & SESSION_CPU))
		return 0;
	/* A recording waits for the BPF program anyway (session_start): waited for here,
	 * every event gets it at its open. Attached later, the events a thread started
	 * meanwhile inherited would stay without it (see session_start). */
	if (s->o.preload && !s->target.spawned)
		session_go_join(s);
	/* Before the events take what the fd limit allows. */
	if (s->o.notify)
		s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (i = 0; i < s->o.nevents; i++) {
		struct sampler_opts so;

		memset(&so, 0, sizeof(so));
		so.pid = s->target.pid;
		so.tids = s->o.tids;
		so.ntids = s->o.ntids;
		so.event = s->o.events[i];
		so.use_freq = s->o.use_freq;
		so.freq = s->o.freq;
		so.period = s->o.period;
		so.stack_size = s->info.stack_size;
		so.kernel = s->info.kernel;
		so.enable_on_exec = s->target.spawned;
		pthread_mutex_lock(&s->bpf_lock);
		if (s->info.go) {
			so.hook = s->go_so.hook;
			so.hook_arg = s->go_so.hook_arg;
			so.bpf = s->go_so.bpf;
			so.bpf_prog_fd = s->go_so.bpf_prog_fd;
			so.drain_ms = s->go_so.drain_ms;
			so.drain_idle_ms = s->go_so.drain_idle_ms;
		} else if (s->o.go) {
			/* Idle until Go is found after an exec (a command through a script). */
			session_go_idle_hook(s, &so);
		}
		s->samplers[i] = sampler_new(&so, e->why, sizeof(e->why));
		if (s->samplers[i])
			s->nsamplers = i + 1;
		pthread_mutex_unlock(&s->bpf_lock);
		if (!s->samplers[i]) {
			int err = errno;

			fail(e, (err == EACCES || err == EPERM) ? SESSION_FAIL_PERM
			      : err == ESRCH ? SESSION_FAIL_TARGET : SESSION_FAIL_EVENT);
			errno = err;
			return -err;
		}
		if (s->efd >= 0)
			sampler_set_notify_fd(s->samplers[i], s->efd);
	}
	return 0;
}

int session_start(struct session *s, const volatile int *stop, struct session_err *e)
{
	size_t i;
	int r;

	/* Symbol tables and kallsyms are loaded now, not inside the profiled time, and the
	 * BPF program (loading meanwhile) is waited for: every sample is read at the sample. */
	if (s->o.preload && s->agg) {
		agg_preload(s->agg, !s->target.spawned);
		if (!s->target.spawned)
			session_go_look(s); /* the Go reads start before sampling */
		session_go_join(s);
	}
	s->start_ns = util_now_ns();
	s->start_wall = util_wall_ns();
	for (i = 0; i < s->nsamplers; i++) {
		if (stop && *stop)
			return 1;
		r = sampler_start(s->samplers[i]);
		if (r) {
			snprintf(e->why, sizeof(e->why), "cannot start the sampling thread: %s",
				 strerror(-r));
			fail(e, SESSION_FAIL_SYSTEM);
			return r;
		}
	}
	if (s->target.spawned) {
		/* The BPF program is in before the command runs: the threads it starts inherit
		 * their events, and an inherited event takes the program its parent had then
		 * (linux kernel/events/core.c inherit_event), never one attached later. */
		session_go_join(s);
		r = target_go(&s->target);
		if (r) {
			snprintf(e->why, sizeof(e->why), "cannot run %s: %s", s->o.command[0],
				 strerror(-r));
			fail(e, SESSION_FAIL_TARGET);
			return r;
		}
		if (s->o.preload && s->agg) {
			/* The command has exec'd: its symbols, and the Go reads. */
			agg_preload(s->agg, 1);
			session_go_look(s);
		}
	}
	wall_start(s);
	return 0;
}

uint64_t session_elapsed_ns(const struct session *s)
{
	return util_now_ns() - s->start_ns;
}

const char *session_go_version(struct session *s)
{
	const char *v;

	session_go_look(s);
	v = s->go_version;
	if (v && s->o.go && !s->info.go && !s->go_late) {
		/* Its goroutines are read at the drain now: as go_setup without the BPF program. */
		s->go_late = 1;
		for (size_t i = 0; i < s->nsamplers; i++)
			sampler_set_drain_ms(s->samplers[i], s->o.label_latency_ms, 0);
	}
	return v;
}

/* Folds one batch: on the thread that feeds, which is the one that looks for Go too. */
static void feed_batch(struct session *s, const struct sample_batch *b)
{
	session_go_look(s);
	agg_feed(s->agg, b);
}

/* Folds every batch queued; whether every sampler has seen the target exit. */
static int feed_all(struct session *s)
{
	int all_exited = 1;
	size_t i;

	for (i = 0; i < s->nsamplers; i++) {
		struct sample_batch *b;

		while ((b = sampler_take(s->samplers[i], 0))) {
			feed_batch(s, b);
			sampler_batch_free(s->samplers[i], b);
		}
		if (!sampler_target_exited(s->samplers[i]))
			all_exited = 0;
	}
	return all_exited;
}

enum session_end session_run(struct session *s, double duration_s, const volatile int *stop,
			     const sigset_t *waitmask)
{
	while (!*stop) {
		/* A wait ends with a batch (the sampling threads hand them on every second, or
		 * full: sampler_set_notify_fd), a signal, the end of the sampling or of the
		 * duration, and after 1 s at most (a command's exit, a Go runtime found after
		 * an exec). A batch is taken as soon as it is full, still in the cache, and
		 * the thread does not wake for nothing (BENCHMARKS.md, "Own CPU against perf top"). Without the
		 * eventfd (no fd left), every 250 ms. */
		int wait_ms = s->efd >= 0 ? 1000 : 250;
		struct pollfd p = { s->efd, POLLIN, 0 };
		struct timespec ts;

		if (duration_s > 0) {
			double left = duration_s - (double)session_elapsed_ns(s) / 1e9;

			wait_ms = left <= 0 ? 0 : (int)GP_MIN((double)wait_ms, left * 1000 + 1);
		}
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
		if (ppoll(s->efd >= 0 ? &p : NULL, s->efd >= 0, &ts, waitmask) > 0) {
			uint64_t v;

			if (read(s->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		if (feed_all(s)) {
			if (duration_s > 0 && (double)session_elapsed_ns(s) / 1e9 >= duration_s)
				return SESSION_END_DURATION;
			return SESSION_END_EXITED;
		}
		if (duration_s > 0 && (double)session_elapsed_ns(s) / 1e9 >= duration_s)
			return SESSION_END_DURATION;
		target_reap(&s->target, 0);
		if (s->o.go && !s->info.go && !s->go_late)
			session_go_version(s);
	}
	return SESSION_END_STOP;
}

void session_stop(struct session *s, int feed)
{
	size_t i;

	/* No snapshot nor stop of a thread after the sampling ends. */
	wallsrc_stop(s->wall);
	if (s->verifier)
		verifier_stop(s->verifier);
	session_go_join(s);
	for (i = 0; i < s->nsamplers; i++) {
		struct sample_batch *b;

		sampler_stop(s->samplers[i]);
		while ((b = sampler_take(s->samplers[i], 0))) {
			if (feed)
				feed_batch(s, b);
			sampler_batch_free(s->samplers[i], b);
		}
	}
	if (s->agg)
		agg_set_sink(s->agg, NULL, NULL);
	if (!feed)
		return;
	/* Every sample is in: the running goroutines still waiting for theirs get them. */
	if (s->wall)
		wallsrc_flush(s->wall);
	if (s->agg)
		agg_set_times(s->agg, (int64_t)s->start_wall, (int64_t)session_elapsed_ns(s));
}

void session_free(struct session *s)
{
	size_t i;

	if (!s)
		return;
	/* The verifier first: its thread lets go of any thread of the target it holds. */
	verifier_free(s->verifier);
	gsrc_free(s->gor);
	memsrc_free(s->mem);
	wallsrc_free(s->wall);
	session_go_join(s);
	for (i = 0; i < s->nsamplers; i++)
		sampler_stop(s->samplers[i]);
	/* A command still running when the session ends (a duration, a signal) is stopped. */
	target_stop(&s->target);
	for (i = 0; i < s->nsamplers; i++)
		sampler_free(s->samplers[i]);
	if (s->efd >= 0)
		close(s->efd);
	agg_free(s->agg);
	gowall_oncpu_free(s->oncpu);
	session_go_free(s);
	free(s->cmdline);
	pthread_mutex_destroy(&s->bpf_lock);
	pthread_mutex_destroy(&s->src_lock);
	free(s);
}

const char *session_cmdline(const struct session *cs)
{
	struct session *s = (struct session *)cs;

	if (!s->cmdline_read) {
		s->cmdline = procinfo_cmdline(s->target.pid, 1024);
		s->cmdline_read = 1;
	}
	return s->cmdline;
}

/* What made a profile, as its comments say (go tool pprof -comments). */
static void comments(struct session *s, struct prof *p, const char *first)
{
	const char *cmdline = session_cmdline(s), *gover = session_go_version(s);
	char buf[512];

	prof_add_comment(p, first);
	if (cmdline && *cmdline)
		prof_add_comment(p, cmdline);
	if (gover) {
		snprintf(buf, sizeof(buf), "go version %s", gover);
		prof_add_comment(p, buf);
	}
}

/* Event i's profile (empty, but with its sample types and time, when no sample came) with
 * its period and comments. */
static struct prof *cpu_profile(struct session *s, size_t i)
{
	const struct event_spec *ev = &s->o.events[i];
	struct prof *p = agg_profile(s->agg, ev->name);
	const char *type, *unit;
	struct prof_value_type pt;
	char buf[512];

	if (!p) {
		/* No sample at all: still a valid, empty profile. */
		struct sample_batch empty;

		memset(&empty, 0, sizeof(empty));
		empty.event = ev;
		agg_feed(s->agg, &empty);
		p = agg_profile(s->agg, ev->name);
		agg_set_times(s->agg, (int64_t)s->start_wall, (int64_t)session_elapsed_ns(s));
	}
	if (s->meta_done & (1u << i))
		return p;
	s->meta_done |= 1u << i;
	events_value_type(ev, &type, &unit);
	pt.type = prof_str(p, type);
	pt.unit = prof_str(p, unit);
	/* Period: for cpu-clock at F Hz a sample stands for 1e9/F ns of CPU, as in Go's
	 * own profiles; with -c it is the fixed event count. */
	if (s->o.use_freq)
		prof_set_period(p, pt, !strcmp(unit, "nanoseconds") ? (int64_t)(1000000000ULL / s->o.freq)
								 : (int64_t)s->o.freq);
	else
		prof_set_period(p, pt, (int64_t)s->o.period);
	snprintf(buf, sizeof(buf), "gotop-perf %s: event %s, %s %llu", PACKAGE_VERSION, ev->name,
		 s->o.use_freq ? "frequency (Hz)" : "period",
		 (unsigned long long)(s->o.use_freq ? s->o.freq : s->o.period));
	comments(s, p, buf);
	if (!s->o.repair)
		prof_add_comment(p, "frame-pointer repair off (--no-repair)");
	return p;
}

/* The wall-clock profile with its comments. */
static struct prof *wall_profile(struct session *s)
{
	struct prof *p = wallsrc_profile(s->wall);
	struct gowall_stats st;
	char buf[256];

	if (s->meta_done & (1u << SESSION_MAX_EVENTS))
		return p;
	s->meta_done |= 1u << SESSION_MAX_EVENTS;
	wallsrc_stats(s->wall, &st);
	snprintf(buf, sizeof(buf), "gotop-perf %s: wall clock of every goroutine, %.1f Hz; "
		 "%llu snapshots, %llu goroutines dropped as changed while read", PACKAGE_VERSION,
		 wallsrc_hz(s->wall), (unsigned long long)st.ticks, (unsigned long long)st.torn);
	comments(s, p, buf);
	return p;
}

struct prof *session_profile(struct session *s, enum session_prof what, size_t i)
{
	switch (what) {
	case SESSION_PROF_CPU:
		return s->agg && i < s->o.nevents ? cpu_profile(s, i) : NULL;
	case SESSION_PROF_WALL:
		return session_wall_started(s) ? wall_profile(s) : NULL;
	}
	return NULL;
}

void session_stats(struct session *s, size_t i, struct sampler_stats *sst, struct agg_stats *ast)
{
	if (i < s->nsamplers)
		sampler_get_stats(s->samplers[i], sst);
	else
		memset(sst, 0, sizeof(*sst));
	if (ast) {
		if (s->agg)
			agg_get_stats(s->agg, ast);
		else
			memset(ast, 0, sizeof(*ast));
	}
}

int session_feed_next(struct session *s, int timeout_ms, const char **event)
{
	struct sample_batch *b = NULL;
	size_t i;

	for (i = 0; i < s->nsamplers && !b; i++)
		if ((b = sampler_take(s->samplers[i], 0)))
			break;
	if (!b && timeout_ms > 0 && s->nsamplers)
		b = sampler_take(s->samplers[i = 0], timeout_ms);
	if (!b)
		return 0;
	feed_batch(s, b);
	if (event)
		*event = b->event->name;
	sampler_batch_free(s->samplers[i], b);
	return 1;
}

void session_flush(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nsamplers; i++)
		sampler_flush(s->samplers[i]);
}

int session_exited(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nsamplers; i++)
		if (!sampler_target_exited(s->samplers[i]))
			return 0;
	return s->nsamplers > 0;
}

void session_set_wake_bytes(struct session *s, size_t bytes)
{
	size_t i;

	for (i = 0; i < s->nsamplers; i++)
		sampler_set_wake_bytes(s->samplers[i], bytes);
}

void session_kick(struct session *s)
{
	size_t i;

	for (i = 0; i < s->nsamplers; i++)
		sampler_kick(s->samplers[i]);
}

int session_set_event(struct session *s, const struct event_spec *ev, int use_freq,
		      uint64_t value, char *err, size_t errlen)
{
	if (!s->nsamplers)
		return -ENODEV;
	return sampler_set_event(s->samplers[0], ev, use_freq, value, err, errlen);
}

void session_pause(struct session *s, int paused)
{
	size_t i;

	for (i = 0; i < s->nsamplers; i++)
		sampler_pause(s->samplers[i], paused);
}

int session_target_status(struct session *s)
{
	if (!s->info.spawned)
		return -1;
	target_reap(&s->target, 0);
	return s->target.spawned || s->target.exit_status < 0 ? -1 : s->target.exit_status;
}

/* --- the sources beyond CPU samples --- */

/* The wall-clock table of running goroutines takes each sample the aggregator folds. */
static void oncpu_sink(void *arg, uint64_t goid, uint64_t time_ns, const uint64_t *pcs, size_t n)
{
	gowall_oncpu_put(arg, goid, time_ns, pcs, n);
}

/* Starts the wall-clock sampler of a Go target, its running goroutines' stacks from the
 * perf samples the aggregator folds: once the target runs its own executable. */
static void wall_start(struct session *s)
{
	if (!(s->o.sources & SESSION_WALL))
		return;
	if (!s->info.go) {
		snprintf(s->info.wall_why, sizeof(s->info.wall_why), "not a Go program: no goroutines");
		return;
	}
	s->wall = wallsrc_start(s->target.pid, s->o.wall_hz, s->o.wall_max_cpu, s->o.wall_publish,
				s->oncpu, s->info.wall_why, sizeof(s->info.wall_why));
	/* Before anything feeds the aggregator; samples find no request in the table until
	 * the thread's first tick. */
	if (s->wall && s->oncpu)
		agg_set_sink(s->agg, oncpu_sink, s->oncpu);
}

int session_wall_started(struct session *s)
{
	if (s->wall && !s->wall_known) {
		s->info.wall = wallsrc_ready(s->wall, s->info.wall_why, sizeof(s->info.wall_why));
		s->wall_known = 1;
	}
	return s->info.wall;
}

const struct session_wall *session_wall_get(struct session *s, unsigned window_s,
					    const struct session_wall **base)
{
	if (base)
		*base = NULL;
	return s && s->wall ? wallsrc_get(s->wall, window_s, base) : NULL;
}

void session_wall_zero(struct session *s)
{
	if (s && s->wall)
		wallsrc_zero(s->wall);
}

void session_wall_stats(struct session *s, struct gowall_stats *st)
{
	if (s->wall)
		wallsrc_stats(s->wall, st);
	else
		memset(st, 0, sizeof(*st));
}

const struct session_goroutines *session_goroutines_get(struct session *s, int wait_ms)
{
	struct gsrc *g;

	if (!s || !(s->o.sources & SESSION_GOROUTINES))
		return NULL;
	pthread_mutex_lock(&s->src_lock);
	if (!s->gor)
		s->gor = gsrc_new(s->target.pid, s->o.goroutines_max);
	g = s->gor;
	pthread_mutex_unlock(&s->src_lock);
	return gsrc_get(g, wait_ms);
}

struct verifier *session_verifier(struct session *s, char *why, size_t whylen)
{
	struct verifier *v;

	if (!(s->o.sources & SESSION_VERIFY)) {
		snprintf(why, whylen, "the verifier was not asked for");
		return NULL;
	}
	pthread_mutex_lock(&s->src_lock);
	if (!s->verifier) {
		struct verify_opts vo;

		if (s->o.verify) {
			vo = *s->o.verify;
		} else {
			verify_opts_default(&vo);
			vo.sample_stack = s->info.stack_size;
		}
		s->verifier = verifier_new(s->target.pid, &vo);
		if (!s->verifier)
			snprintf(why, whylen, "cannot set up libunwind: %s", strerror(errno));
	}
	v = s->verifier;
	pthread_mutex_unlock(&s->src_lock);
	return v;
}

/* The memory source, made at the first call (any thread). */
static struct memsrc *mem_of(struct session *s)
{
	struct memsrc *m;

	if (!s || !(s->o.sources & SESSION_MEM))
		return NULL;
	pthread_mutex_lock(&s->src_lock);
	if (!s->mem)
		s->mem = memsrc_new(s->target.pid, s->o.mem_publish, s->o.mem_max_cpu,
				    s->o.mem_rate_s ? s->o.mem_rate_s : SESSION_MEM_RATE_S,
				    s->o.mem_max_records);
	m = s->mem;
	pthread_mutex_unlock(&s->src_lock);
	return m;
}

const struct session_mem *session_mem_get(struct session *s, int wait_ms)
{
	struct memsrc *m = mem_of(s);

	return m ? memsrc_get(m, wait_ms) : NULL;
}

double session_mem_gc_rate(struct session *s)
{
	return s && s->mem ? memsrc_gc_rate(s->mem) : -1;
}

int session_mem_fetch(struct session *s, const struct goprof_req *r, struct goprof_out *out,
		      char *why, size_t whylen)
{
	struct memsrc *m = mem_of(s);

	if (!m) {
		memset(out, 0, sizeof(*out));
		snprintf(why, whylen, "the memory profiles were not asked for");
		return GOPROF_E_TARGET;
	}
	return memsrc_fetch(m, r, out, why, whylen);
}

int session_mem_borrow(struct session *s, void (*fn)(struct goprof *gp, void *arg), void *arg,
		       char *why, size_t whylen)
{
	struct memsrc *m = mem_of(s);

	if (!m) {
		snprintf(why, whylen, "the memory profiles were not asked for");
		return GOPROF_E_TARGET;
	}
	return memsrc_borrow(m, fn, arg, why, whylen);
}

int session_mem_enable(struct session *s, int64_t *old, char *why, size_t whylen)
{
	struct memsrc *m = mem_of(s);

	if (!m) {
		snprintf(why, whylen, "the memory profiles were not asked for");
		return -ENOENT;
	}
	return memsrc_enable(m, old, why, whylen);
}
