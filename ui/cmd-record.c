/* cmd-record.c: `gotop-perf record`: its options, a session on the target run to its end,
 * and the gzipped pprof profiles it writes. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/goread.h"
#include "gotop/gowall.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/session.h"
#include "gotop/util.h"

#define MAX_TIDS 256

struct record_opts {
	struct session_opts s;
	char **command;
	double duration;
	const char *output;
	pid_t tids[MAX_TIDS];
	size_t ntids;
	int verbose, quiet;
	int folded;              /* --format folded */
	int wall;                /* --wall: a wall-clock profile of every goroutine too */
	int heap;                /* --heap: the target's heap profile at the start and the end */
	double heap_every;       /* --heap-every: and every so many seconds (0: not) */
};

enum { OPT_HELP = 256, OPT_FORMAT, OPT_WALL, OPT_WALL_HZ, OPT_HEAP, OPT_HEAP_EVERY };

static const struct option long_opts[] = {
	CLI_SAMPLING_LONGOPTS,
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "tid", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "wall", no_argument, NULL, OPT_WALL },
	{ "wall-hz", required_argument, NULL, OPT_WALL_HZ },
	{ "heap", no_argument, NULL, OPT_HEAP },
	{ "heap-every", required_argument, NULL, OPT_HEAP_EVERY },
	{ NULL, 0, NULL, 0 },
};

static void record_usage(FILE *f)
{
	fputs("Usage: gotop-perf record (-p PID | -- COMMAND [ARGS...]) [OPTIONS]\n", f);
	cli_sampling_usage(f, SESSION_MAX_EVENTS);
	fputs("  -t, --tid TID          only these threads (repeatable; no new threads)\n"
	      "  -d, --duration SECONDS stop after this long (default: Ctrl-C or target exit);\n"
	      "                         a COMMAND still running then gets SIGTERM\n"
	      "  -o, --output FILE      gzipped pprof output (default gotop-perf.pb.gz); with several\n"
	      "                         events, one file per event: FILE with .EVENT before .pb.gz\n"
	      "      --format FORMAT    pprof (default) or folded: one line per stack, root;...;leaf\n"
	      "                         SAMPLES (flamegraph.pl, inferno, speedscope; default file\n"
	      "                         gotop-perf.folded)\n"
	      "      --wall             Go: also a wall-clock profile of every goroutine, on CPU or\n"
	      "                         not (FILE with .wall before .pb.gz), label state = running,\n"
	      "                         runnable, syscall or the wait reason; running goroutines\n"
	      "                         get the stack of their nearest perf sample\n"
	      "      --wall-hz HZ       snapshots of all goroutines per second (default 10)\n"
	      "      --heap             Go: the program's heap profile (as /debug/pprof/heap) at\n"
	      "                         the start and at the end: FILE with .heap0 and .heap\n"
	      "                         before .pb.gz (go tool pprof -base FILE.heap0.pb.gz\n"
	      "                         FILE.heap.pb.gz shows what grew)\n"
	      "      --heap-every SECONDS  --heap, and one every SECONDS between: FILE with\n"
	      "                         .heap1, .heap2, ... before .pb.gz\n"
	      "  -v, --verbose          print statistics at the end\n"
	      "  -q, --quiet            print errors only\n", f);
}

/* FILE.pb.gz -> FILE.EVENT.pb.gz (or FILE.EVENT when there is no .pb.gz suffix; the
 * same with .folded for folded stacks). A PMU form's slashes ("cpu/event=0x3c/") become
 * '_': the name stays one file. */
static char *output_for(const char *out, const char *ev_name, int several, int folded)
{
	size_t len = strlen(out);
	const char *suf = folded ? ".folded" : ".pb.gz";
	size_t sl = strlen(suf);
	char event[EVENT_NAME_MAX], *p;

	if (!several)
		return xstrdup(out);
	snprintf(event, sizeof(event), "%s", ev_name);
	for (p = event; *p; p++)
		if (*p == '/')
			*p = '_';
	if (len > sl && !strcmp(out + len - sl, suf))
		return xasprintf("%.*s.%s%s", (int)(len - sl), out, event, suf);
	return xasprintf("%s.%s", out, event);
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	session_opts_init(&o->s);
	o->output = "gotop-perf.pb.gz";
	optind = 1;
	/* "+" stops at the first non-option so that -- COMMAND args stay intact. */
	while ((c = getopt_long(argc, argv, "+" CLI_SAMPLING_SHORTOPTS "d:o:t:vq", long_opts, NULL)) != -1) {
		uint64_t v;
		int r = cli_sampling_option(&o->s, c, optarg, SESSION_MAX_EVENTS);

		if (r > 0)
			return r;
		if (r == 0)
			continue;
		switch (c) {
		case 'd':
			if (cli_parse_seconds(optarg, &o->duration)) {
				cli_error("invalid duration '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case 't':
			if (o->ntids == MAX_TIDS || cli_parse_u64(optarg, &v) || v > 0x7fffffff) {
				cli_error("invalid thread id '%s'", optarg);
				return EXIT_USAGE;
			}
			o->tids[o->ntids++] = (pid_t)v;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case OPT_WALL:
			o->wall = 1;
			break;
		case OPT_HEAP:
			o->heap = 1;
			break;
		case OPT_HEAP_EVERY:
			if (cli_parse_seconds(optarg, &o->heap_every) || o->heap_every < 1) {
				cli_error("--heap-every: at least 1 second: %s", optarg);
				return EXIT_USAGE;
			}
			o->heap = 1;
			break;
		case OPT_WALL_HZ:
			o->wall = 1;
			if (cli_parse_wall_hz(optarg, &o->s.wall_hz))
				return EXIT_USAGE;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case OPT_FORMAT:
			if (strcmp(optarg, "pprof") && strcmp(optarg, "folded")) {
				cli_error("invalid format '%s' (pprof or folded)", optarg);
				return EXIT_USAGE;
			}
			o->folded = !strcmp(optarg, "folded");
			break;
		case OPT_HELP:
			record_usage(stdout);
			exit(EXIT_OK);
		default:
			record_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (o->folded && !strcmp(o->output, "gotop-perf.pb.gz"))
		o->output = "gotop-perf.folded";
	if (optind < argc)
		o->command = argv + optind;
	if (!o->s.pid == !o->command) {
		cli_error(o->s.pid ? "give either -p PID or a command, not both"
				   : "nothing to profile: give -p PID or -- COMMAND");
		return EXIT_USAGE;
	}
	if (o->ntids && !o->s.pid) {
		cli_error("-t needs -p");
		return EXIT_USAGE;
	}
	cli_sampling_finish(&o->s);
	return 0;
}

/* Fails before sampling when an output file cannot be written: EXIT_OK or EXIT_FAIL. */
static int check_outputs(const struct record_opts *o)
{
	size_t e;

	for (e = 0; e < o->s.nevents; e++) {
		char *path = output_for(o->output, o->s.events[e].name, o->s.nevents > 1, o->folded);
		int w = pprof_check_writable(path);

		if (w) {
			cli_error("cannot write %s: %s", path, strerror(-w));
			free(path);
			return EXIT_FAIL;
		}
		free(path);
	}
	return EXIT_OK;
}

/* The session on the target, its events open; notes on what it decided. NULL after
 * saying why, with the exit code in *rc. */
static struct session *open_session(struct record_opts *o, int *rc)
{
	const struct session_info *info;
	struct session_err err;
	struct session *s;

	o->s.tids = o->tids;
	o->s.ntids = o->ntids;
	o->s.command = o->command;
	o->s.preload = 1;
	o->s.notify = 1;
	/* The wall-clock sampler, at the rate asked for whatever it costs, for the profile at
	 * the end (no copies along the way). */
	if (o->wall)
		o->s.sources |= SESSION_WALL;
	/* The heap profiles, read when asked (no copies along the way). */
	if (o->heap)
		o->s.sources |= SESSION_MEM;
	s = session_new(&o->s, &err);
	if (!s) {
		*rc = cli_session_error(&err);
		return NULL;
	}
	info = session_info(s);
	if (!info->kernel && !o->quiet)
		cli_error("%s", info->kernel_why);
	if (session_open(s, &err)) {
		*rc = cli_session_error(&err);
		session_free(s);
		return NULL;
	}
	return s;
}

/* Samples until a stop signal, the duration or the target's exit. The stop signals are
 * taken only inside the wait (ppoll's mask): one that comes while batches are fed ends
 * the next wait at once instead of after its timeout (the other threads block every
 * signal). A stop signal that came after the last wait is delivered at the end. */
static enum session_end drain(struct session *s, double duration)
{
	sigset_t stopsigs, oldmask, waitmask;
	enum session_end end;

	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &oldmask);
	waitmask = oldmask;
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);
	end = session_run(s, duration, &cli_stop_signal, &waitmask);
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	return end;
}

/* The -v statistics of event e. */
static void print_stats(struct session *s, size_t e)
{
	const struct session_info *info = session_info(s);
	struct sampler_stats st;
	struct agg_stats as;
	struct goread_stats gs;

	session_stats(s, e, &st, &as);
	session_go_stats(s, &gs);
	fprintf(stderr,
		"gotop-perf: sampler cpu %.1f ms, %u fds, %llu bytes (stacks of %u), "
		"%llu throttled, %llu bad\n"
		"gotop-perf: aggregated %llu samples; %llu addresses (%llu without symbol); "
		"%llu chains cut at memory that is not code; "
		"go: %llu samples, %llu with goroutine, %llu labelled (%llu whose labels were "
		"dropped: too many label sets), read delay p50 %.0f us "
		"p99 %.0f us; %llu repaired, %llu continued past a stack switch\n",
		(double)st.self_cpu_ns / 1e6, st.fds, (unsigned long long)st.bytes,
		info->stack_size, (unsigned long long)st.throttled, (unsigned long long)st.bad,
		(unsigned long long)as.samples, (unsigned long long)as.addrs,
		(unsigned long long)as.unresolved, (unsigned long long)as.chain_cut,
		(unsigned long long)as.go_samples,
		(unsigned long long)as.with_goid, (unsigned long long)as.labelled,
		(unsigned long long)as.labels_dropped,
		(double)goread_delay_quantile(&gs, 0.5) / 1e3,
		(double)goread_delay_quantile(&gs, 0.99) / 1e3,
		(unsigned long long)as.repaired, (unsigned long long)as.crossed);
	if (info->go)
		fprintf(stderr,
			"gotop-perf: go at the sample (BPF): %s; %u events attached, %u refused; "
			"%llu records, %llu ring full, %llu kept for a later drain; "
			"%llu samples matched, %llu read after; "
			"%llu with a suspended goroutine's state; "
			"%llu label sets known by their copied content, %llu label-set "
			"reads copied at the sample, %llu batched reads; "
			"%llu of %llu drains read nothing later\n",
			info->bpf ? "on" : info->bpf_why, st.bpf_attached, st.bpf_failed,
			(unsigned long long)gs.bpf_records, (unsigned long long)gs.bpf_ring_full,
			(unsigned long long)gs.recs_kept, (unsigned long long)gs.snapshots,
			(unsigned long long)gs.snap_missing, (unsigned long long)gs.conts,
			(unsigned long long)gs.label_content,
			(unsigned long long)gs.label_pieces, (unsigned long long)gs.readvs,
			(unsigned long long)st.hook_idle, (unsigned long long)st.hook_drains);
	if (as.goroutines)
		fprintf(stderr,
			"gotop-perf: %llu goroutines; past the first %d, those younger than "
			"%.0f s keep no goroutine id: %llu samples\n",
			(unsigned long long)as.goroutines, AGG_GOID_ALL_MAX,
			AGG_GOID_OLD_NS / 1e9, (unsigned long long)as.goid_young);
	if (as.thread_dropped)
		fprintf(stderr,
			"gotop-perf: past %d profile entries, samples with no entry yet keep "
			"no thread id: %llu samples, nor goroutine id: %llu\n",
			AGG_SAMPLES_FULL, (unsigned long long)as.thread_dropped,
			(unsigned long long)as.goid_dropped);
	if (info->bpf)
		fprintf(stderr,
			"gotop-perf: BPF program loaded in %.1f ms (%.1f ms of CPU), "
			"%u instructions verified\n",
			(double)gs.bpf_load.wall_ns / 1e6, (double)gs.bpf_load.cpu_ns / 1e6,
			gs.bpf_load.verified_insns);
	if (gs.bpf_runs) /* kernel.bpf_stats_enabled=1 */
		fprintf(stderr, "gotop-perf: BPF program: %llu runs, %.0f ns per run\n",
			(unsigned long long)gs.bpf_runs, (double)gs.bpf_run_ns / (double)gs.bpf_runs);
}

/* Writes event e's profile to its file (or, when that fails, to $TMPDIR) and says so.
 * EXIT_OK or EXIT_FAIL. */
static int write_profile(struct session *s, size_t e, const struct record_opts *o)
{
	struct prof *p = session_profile(s, SESSION_PROF_CPU, e);
	struct sampler_stats st;
	char *path = output_for(o->output, o->s.events[e].name, o->s.nevents > 1, o->folded);
	int w, rc = EXIT_OK;

	/* Folded stacks count samples (value column 0), as flame graph tools expect. */
	w = o->folded ? pprof_write_folded(p, 0, path) : pprof_write_file(p, path);
	session_stats(s, e, &st, NULL);
	if (w) {
		/* The samples are not thrown away with the disk full or read-only: they go
		 * to $TMPDIR, and the message says where; the run still counts as failed. */
		const char *tmp = getenv("TMPDIR"), *base = strrchr(path, '/');
		char *fb = xasprintf("%s/gotop-perf.%d.%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
				     base ? base + 1 : path);
		int w2 = o->folded ? pprof_write_folded(p, 0, fb) : pprof_write_file(p, fb);

		if (w2 == 0)
			cli_error("cannot write %s: %s; profile saved to %s instead", path, strerror(-w), fb);
		else
			cli_error("cannot write %s: %s (nor %s: %s)", path, strerror(-w), fb, strerror(-w2));
		free(fb);
		rc = EXIT_FAIL;
	} else if (!o->quiet) {
		fprintf(stderr,
			"gotop-perf: %s: %llu samples, %llu lost, %llu dropped, %u threads, %.1f s -> %s\n",
			o->s.events[e].name, (unsigned long long)st.samples,
			(unsigned long long)st.lost, (unsigned long long)st.dropped,
			st.threads, (double)session_elapsed_ns(s) / 1e9, path);
	}
	if (o->verbose)
		print_stats(s, e);
	free(path);
	return rc;
}

/* After session_stop: the wall-clock profile (its running goroutines' stacks all in)
 * written to FILE.wall.pb.gz. EXIT_OK or EXIT_FAIL. */
static int write_wall(struct session *s, const struct record_opts *o)
{
	struct prof *p = session_profile(s, SESSION_PROF_WALL, 0);
	struct gowall_stats st;
	char *path;
	int w, rc = EXIT_OK;

	if (!p)
		return EXIT_OK;
	session_wall_stats(s, &st);
	path = output_for(o->output, "wall", 1, 0);
	w = pprof_write_file(p, path);
	if (w) {
		cli_error("cannot write %s: %s", path, strerror(-w));
		rc = EXIT_FAIL;
	} else if (!o->quiet) {
		fprintf(stderr, "gotop-perf: wall: %llu snapshots (%llu failed), %llu goroutine "
			"samples (%llu running, %llu with their perf stack), %llu dropped as "
			"changed while read, %.1f ms per snapshot -> %s\n",
			(unsigned long long)st.ticks, (unsigned long long)st.failed,
			(unsigned long long)st.samples, (unsigned long long)st.running,
			(unsigned long long)st.running_oncpu, (unsigned long long)st.torn,
			st.ticks ? (double)st.snap_ns / 1e6 / (double)st.ticks : 0.0, path);
	}
	free(path);
	return rc;
}

/* --heap: the target's heap profile, read from outside as `gotop-perf pprof heap` does
 * (the session's memory source), written to FILE.NAME.pb.gz (NAME heap0 at the start,
 * heap1, heap2, ... every --heap-every seconds, heap at the end). EXIT_OK, or EXIT_FAIL
 * after saying why. */
static int heap_profile(struct session *s, const struct record_opts *o, const char *name)
{
	const struct session_mem *d = session_mem_get(s, -1);
	char *path;
	int w;

	if (!d || !d->p) {
		cli_error("--heap: %s", d ? d->why : "no heap profile");
		session_mem_put(d);
		return EXIT_FAIL;
	}
	path = output_for(o->output, name, 1, 0);
	w = pprof_write_file(d->p, path);
	if (w)
		cli_error("cannot write %s: %s", path, strerror(-w));
	else if (!o->quiet)
		fprintf(stderr, "gotop-perf: %s: %zu samples, %llu buckets dropped as changed while "
			"read -> %s\n", name, prof_nsamples(d->p),
			(unsigned long long)d->st.dropped, path);
	free(path);
	session_mem_put(d);
	return w ? EXIT_FAIL : EXIT_OK;
}

/* Samples as drain does, with a heap profile every --heap-every seconds between. */
static enum session_end drain_heap(struct session *s, const struct record_opts *o, int *rc)
{
	enum session_end end;
	unsigned k = 0;

	if (!o->heap_every)
		return drain(s, o->duration);
	for (;;) {
		double until = o->heap_every * (double)++k;
		char name[32];

		if (o->duration > 0 && until >= o->duration)
			return drain(s, o->duration);
		end = drain(s, until);
		if (end != SESSION_END_DURATION)
			return end;
		snprintf(name, sizeof(name), "heap%u", k);
		if (heap_profile(s, o, name))
			*rc = EXIT_FAIL;
	}
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct session *s;
	struct session_err err;
	enum session_end end = SESSION_END_STOP;
	const char *cmdline;
	int rc, r, started;
	size_t e;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* From here a SIGINT or SIGTERM ends the recording with a profile, also while the
	 * events are opened and the symbol tables load (a second or more on large binaries). */
	cli_install_signals();
	rc = check_outputs(&o);
	if (rc)
		return rc;
	s = open_session(&o, &rc);
	if (!s)
		return rc;
	/* Stopped before sampling began: an empty profile, and a command is never run. */
	r = session_start(s, &cli_stop_signal, &err);
	if (r < 0) {
		rc = cli_session_error(&err);
		session_free(s);
		return rc;
	}
	started = r == 0;
	rc = EXIT_OK;
	cmdline = session_cmdline(s);
	if (!o.quiet && started)
		fprintf(stderr, "gotop-perf: recording PID %d (%s)%s\n", (int)session_info(s)->pid,
			cmdline ? cmdline : "?", o.duration > 0 ? "" : ": Ctrl-C to stop");
	if (started && o.wall && !session_info(s)->go)
		cli_error("--wall: not a Go program: no wall-clock profile");
	else if (started && o.wall && !session_wall_started(s))
		cli_error("--wall: %s", session_info(s)->wall_why);
	if (started && o.heap && heap_profile(s, &o, "heap0"))
		rc = EXIT_FAIL;
	if (started)
		end = o.heap ? drain_heap(s, &o, &rc) : drain(s, o.duration);
	/* The heap at the end, read before a started command is stopped. */
	if (started && o.heap && end == SESSION_END_EXITED)
		cli_error("--heap: the target exited: no heap profile at the end");
	else if (started && o.heap && heap_profile(s, &o, "heap"))
		rc = EXIT_FAIL;
	session_stop(s, 1);
	if (write_wall(s, &o) != EXIT_OK)
		rc = EXIT_FAIL;

	for (e = 0; e < o.s.nevents; e++)
		if (write_profile(s, e, &o) != EXIT_OK)
			rc = EXIT_FAIL;
	if (!o.quiet) {
		if (end == SESSION_END_EXITED)
			fprintf(stderr, "gotop-perf: note: the target exited; profile written\n");
		else if (cli_stop_signal)
			fprintf(stderr, "gotop-perf: stopped by signal %d%s; profile written\n", cli_stop_signal,
				started ? "" : " before sampling began");
	}
	session_free(s);
	return rc;
}
