/* cmd-record.c: `gotop-perf record`: sample a process and write gzipped pprof profiles. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/pprof.h"
#include "gotop/procinfo.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/util.h"

#define MAX_TIDS 256

struct record_opts {
	struct cli_sampling s;
	char **command;
	double duration;
	const char *output;
	pid_t tids[MAX_TIDS];
	size_t ntids;
	int verbose, quiet;
};

enum { OPT_HELP = 256 };

static const struct option long_opts[] = {
	CLI_SAMPLING_LONGOPTS,
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "tid", required_argument, NULL, 't' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void record_usage(FILE *f)
{
	fputs("Usage: gotop-perf record (-p PID | -- COMMAND [ARGS...]) [OPTIONS]\n", f);
	cli_sampling_usage(f, CLI_MAX_EVENTS);
	fputs("  -t, --tid TID          only these threads (repeatable; no new threads)\n"
	      "  -d, --duration SECONDS stop after this long (default: Ctrl-C or target exit);\n"
	      "                         a COMMAND still running then gets SIGTERM\n"
	      "  -o, --output FILE      gzipped pprof output (default gotop-perf.pb.gz); with several\n"
	      "                         events, one file per event: FILE with .EVENT before .pb.gz\n"
	      "  -v, --verbose          print statistics at the end\n"
	      "  -q, --quiet            print errors only\n", f);
}

/* FILE.pb.gz -> FILE.EVENT.pb.gz (or FILE.EVENT when there is no .pb.gz suffix). */
static char *output_for(const char *out, const char *event, int several)
{
	size_t len = strlen(out);
	const char *suf = ".pb.gz";
	size_t sl = strlen(suf);

	if (!several)
		return xstrdup(out);
	if (len > sl && !strcmp(out + len - sl, suf))
		return xasprintf("%.*s.%s%s", (int)(len - sl), out, event, suf);
	return xasprintf("%s.%s", out, event);
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	cli_sampling_init(&o->s);
	o->output = "gotop-perf.pb.gz";
	optind = 1;
	/* "+" stops at the first non-option so that -- COMMAND args stay intact. */
	while ((c = getopt_long(argc, argv, "+" CLI_SAMPLING_SHORTOPTS "d:o:t:vq", long_opts, NULL)) != -1) {
		uint64_t v;
		int r = cli_sampling_option(&o->s, c, optarg, CLI_MAX_EVENTS);

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
		case 'q':
			o->quiet = 1;
			break;
		case OPT_HELP:
			record_usage(stdout);
			exit(EXIT_OK);
		default:
			record_usage(stderr);
			return EXIT_USAGE;
		}
	}
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

static void set_metadata(struct prof *p, const struct event_spec *ev, const struct record_opts *o,
			 const char *cmdline, const char *gover)
{
	const char *type, *unit;
	struct prof_value_type pt;
	char buf[512];

	events_value_type(ev, &type, &unit);
	pt.type = prof_str(p, type);
	pt.unit = prof_str(p, unit);
	/* Period: for cpu-clock at F Hz a sample stands for 1e9/F ns of CPU, as in Go's
	 * own profiles; with -c it is the fixed event count. */
	if (o->s.use_freq)
		prof_set_period(p, pt, !strcmp(unit, "nanoseconds") ? (int64_t)(1000000000ULL / o->s.freq)
								 : (int64_t)o->s.freq);
	else
		prof_set_period(p, pt, (int64_t)o->s.period);
	snprintf(buf, sizeof(buf), "gotop-perf %s: event %s, %s %llu", PACKAGE_VERSION, ev->name,
		 o->s.use_freq ? "frequency (Hz)" : "period",
		 (unsigned long long)(o->s.use_freq ? o->s.freq : o->s.period));
	prof_add_comment(p, buf);
	if (cmdline && *cmdline)
		prof_add_comment(p, cmdline);
	if (gover) {
		snprintf(buf, sizeof(buf), "go version %s", gover);
		prof_add_comment(p, buf);
	}
	if (!o->s.repair)
		prof_add_comment(p, "frame-pointer repair off (--no-repair)");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct cli_target target;
	struct sampler *samplers[CLI_MAX_EVENTS] = { 0 };
	struct agg *agg = NULL;
	struct agg_opts ao;
	char why[512], kwhy[256], *cmdline = NULL, gover[64], bpf_why[256];
	struct sampler_opts go_so;
	uint64_t start_ns, start_wall;
	uint32_t stack_bytes;
	int rc, kernel, exited = 0, i, nev, is_go, go_target, started = 0, go_late = 0;
	int efd = -1; /* the samplers' notify fd */
	sigset_t stopsigs, oldmask, waitmask;
	size_t e;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	memset(&target, 0, sizeof(target));
	target.go_fd = target.err_fd = -1;
	/* From here a SIGINT or SIGTERM ends the recording with a profile, also while the
	 * events are opened and the symbol tables load (a second or more on large binaries). */
	cli_install_signals();

	/* Fail before sampling when the output cannot be written. */
	for (e = 0; e < o.s.nevents; e++) {
		char *path = output_for(o.output, o.s.events[e].name, o.s.nevents > 1);
		int w = pprof_check_writable(path);

		if (w) {
			cli_error("cannot write %s: %s", path, strerror(-w));
			free(path);
			return EXIT_FAIL;
		}
		free(path);
	}
	if (o.s.pid) {
		rc = cli_check_pid(o.s.pid);
		if (rc)
			return rc;
		for (e = 0; e < o.ntids; e++) {
			struct proc_stat st;

			if (procinfo_stat(o.s.pid, o.tids[e], &st)) {
				cli_error("no thread %d in process %d", (int)o.tids[e], (int)o.s.pid);
				return EXIT_TARGET;
			}
		}
		target.pid = o.s.pid;
	} else {
		rc = cli_target_spawn(&target, o.command);
		if (rc)
			return rc;
	}

	kernel = events_kernel_allowed(kwhy, sizeof(kwhy));
	if (!kernel && !o.quiet)
		cli_error("%s", kwhy);

	memset(&ao, 0, sizeof(ao));
	ao.pid = target.pid;
	ao.repair = o.s.repair;
	ao.go = o.s.go;
	ao.kernel = kernel;
	agg = agg_new(&ao);
	/* Whether it is Go decides the Go reads and the stack bytes per sample. */
	is_go = (o.s.go || !o.s.stack_size) &&
		cli_is_go_binary(o.s.pid ? NULL : o.command[0], target.pid, gover, sizeof(gover));
	go_target = o.s.go && is_go;
	stack_bytes = cli_stack_size(&o.s, is_go ? gover : NULL);
	if (go_target) {
		/* Goroutines and labels: read at each sample by the BPF program, else right
		 * after it by the sampling thread. One program for every event. */
		memset(&go_so, 0, sizeof(go_so));
		cli_go_sampling(&o.s, agg, gover, &go_so, bpf_why, sizeof(bpf_why));
		if (!go_so.bpf && o.verbose)
			fprintf(stderr, "gotop-perf: note: goroutines read after each sample, not at it: %s\n",
				bpf_why);
	}

	/* Before the events take what the fd limit allows. */
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	for (e = 0; e < o.s.nevents; e++) {
		struct sampler_opts so;

		memset(&so, 0, sizeof(so));
		so.pid = target.pid;
		so.tids = o.tids;
		so.ntids = o.ntids;
		so.event = o.s.events[e];
		so.use_freq = o.s.use_freq;
		so.freq = o.s.freq;
		so.period = o.s.period;
		so.stack_size = stack_bytes;
		so.kernel = kernel;
		so.enable_on_exec = target.spawned;
		if (go_target) {
			so.hook = go_so.hook;
			so.hook_arg = go_so.hook_arg;
			so.bpf = go_so.bpf;
			so.bpf_prog_fd = go_so.bpf_prog_fd;
			so.drain_ms = go_so.drain_ms;
			so.drain_idle_ms = go_so.drain_idle_ms;
		} else if (o.s.go) {
			/* Idle until Go is found after an exec (a command through a script). */
			agg_sampler_hook(agg, &so.hook, &so.hook_arg);
		}
		samplers[e] = sampler_new(&so, why, sizeof(why));
		if (!samplers[e]) {
			int err = errno;

			cli_error("%s", why);
			rc = (err == EACCES || err == EPERM) ? EXIT_PERM
			   : (err == ESRCH) ? EXIT_TARGET : EXIT_EVENT;
			goto out;
		}
		sampler_set_notify_fd(samplers[e], efd);
	}

	/* Symbol tables and kallsyms are loaded now, not inside the profiled time. */
	agg_preload(agg, !target.spawned);
	start_ns = util_now_ns();
	start_wall = util_wall_ns();
	/* Stopped before sampling began: an empty profile, and a command is never run. */
	for (e = 0; e < o.s.nevents && !cli_stop_signal; e++) {
		int r = sampler_start(samplers[e]);

		if (r) {
			cli_error("cannot start the sampling thread: %s", strerror(-r));
			rc = EXIT_FAIL;
			goto out;
		}
	}
	started = e == o.s.nevents;
	if (target.spawned && started) {
		cli_target_go(&target);
		if (target.exit_status < 0) {
			cli_error("cannot run %s: %s", o.command[0], strerror(-target.exit_status));
			rc = EXIT_TARGET;
			goto out;
		}
	}
	if (target.spawned && started)
		agg_preload(agg, 1); /* the command has exec'd: its symbols, and the Go reads */
	cmdline = procinfo_cmdline(target.pid, 1024);
	if (!o.quiet && started)
		fprintf(stderr, "gotop-perf: recording PID %d (%s)%s\n", (int)target.pid,
			cmdline ? cmdline : "?", o.duration > 0 ? "" : ": Ctrl-C to stop");

	nev = (int)o.s.nevents;
	/* The stop signals are taken only inside the wait (ppoll's mask): one that comes
	 * while batches are fed ends the next wait at once instead of after its timeout
	 * (the other threads block every signal). */
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &oldmask);
	waitmask = oldmask;
	sigdelset(&waitmask, SIGINT);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGHUP);
	while (!cli_stop_signal) {
		int all_exited = 1;
		/* A wait ends with a batch (the sampling threads hand them on every second, or
		 * full: sampler_set_notify_fd), a signal, the end of the sampling or of -d, and
		 * after 1 s at most (a command's exit, a Go runtime found after an exec). The
		 * main thread woke 4 times a second before, for Ctrl-C, at about 50 us of CPU
		 * each (issue 6). A batch is taken as soon as it is full, still in the cache:
		 * taken up to 250 ms later, the main thread's CPU on the C workload (1 KiB
		 * stacks) at 1 kHz was 25 to 32 % higher. Without the eventfd (no fd left),
		 * every 250 ms. */
		int wait_ms = efd >= 0 ? 1000 : 250;
		struct pollfd p = { efd, POLLIN, 0 };
		struct timespec ts;

		if (o.duration > 0) {
			double left = o.duration - (double)(util_now_ns() - start_ns) / 1e9;

			wait_ms = left <= 0 ? 0 : (int)GP_MIN((double)wait_ms, left * 1000 + 1);
		}
		ts.tv_sec = wait_ms / 1000;
		ts.tv_nsec = (long)(wait_ms % 1000) * 1000000L;
		if (ppoll(efd >= 0 ? &p : NULL, efd >= 0, &ts, &waitmask) > 0) {
			uint64_t v;

			if (read(efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				break;
		}
		for (i = 0; i < nev; i++) {
			struct sample_batch *b = sampler_take(samplers[i], 0);

			for (; b; b = sampler_take(samplers[i], 0)) {
				agg_feed(agg, b);
				sampler_batch_free(samplers[i], b);
			}
			if (!sampler_target_exited(samplers[i]))
				all_exited = 0;
		}
		if (o.duration > 0 && (double)(util_now_ns() - start_ns) / 1e9 >= o.duration)
			break;
		if (all_exited) {
			exited = 1;
			break;
		}
		cli_target_reap(&target, 0);
		if (o.s.go && !go_target && !go_late && agg_go_version(agg)) {
			/* Its goroutines are read at the drain now: as cli_go_sampling without BPF. */
			go_late = 1;
			for (i = 0; i < nev; i++)
				sampler_set_drain_ms(samplers[i], o.s.label_latency_ms);
		}
	}
	/* A stop signal that came after the last wait is delivered here. */
	pthread_sigmask(SIG_SETMASK, &oldmask, NULL);
	for (i = 0; i < nev; i++) {
		struct sample_batch *b;

		sampler_stop(samplers[i]);
		while ((b = sampler_take(samplers[i], 0))) {
			agg_feed(agg, b);
			sampler_batch_free(samplers[i], b);
		}
	}
	agg_set_times(agg, (int64_t)start_wall, (int64_t)(util_now_ns() - start_ns));

	rc = EXIT_OK;
	for (e = 0; e < o.s.nevents; e++) {
		struct prof *p = agg_profile(agg, o.s.events[e].name);
		struct sampler_stats st;
		char *path = output_for(o.output, o.s.events[e].name, o.s.nevents > 1);
		int w;

		if (!p) {
			/* No sample at all: still write a valid, empty profile. */
			struct sample_batch empty;

			memset(&empty, 0, sizeof(empty));
			empty.event = &o.s.events[e];
			agg_feed(agg, &empty);
			p = agg_profile(agg, o.s.events[e].name);
			agg_set_times(agg, (int64_t)start_wall, (int64_t)(util_now_ns() - start_ns));
		}
		set_metadata(p, &o.s.events[e], &o, cmdline, agg_go_version(agg));
		w = pprof_write_file(p, path);
		sampler_get_stats(samplers[e], &st);
		if (w) {
			/* The samples are not thrown away with the disk full or read-only: they go
			 * to $TMPDIR, and the message says where; the run still counts as failed. */
			const char *tmp = getenv("TMPDIR"), *base = strrchr(path, '/');
			char *fb = xasprintf("%s/gotop-perf.%d.%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
					     base ? base + 1 : path);
			int w2 = pprof_write_file(p, fb);

			if (w2 == 0)
				cli_error("cannot write %s: %s; profile saved to %s instead", path, strerror(-w), fb);
			else
				cli_error("cannot write %s: %s (nor %s: %s)", path, strerror(-w), fb, strerror(-w2));
			free(fb);
			rc = EXIT_FAIL;
		} else if (!o.quiet) {
			fprintf(stderr,
				"gotop-perf: %s: %llu samples, %llu lost, %llu dropped, %u threads, %.1f s -> %s\n",
				o.s.events[e].name, (unsigned long long)st.samples,
				(unsigned long long)st.lost, (unsigned long long)st.dropped,
				st.threads, (double)(util_now_ns() - start_ns) / 1e9, path);
		}
		if (o.verbose) {
			struct agg_stats as;

			agg_get_stats(agg, &as);
			fprintf(stderr,
				"gotop-perf: sampler cpu %.1f ms, %u fds, %llu bytes (stacks of %u), "
				"%llu throttled, %llu bad\n"
				"gotop-perf: aggregated %llu samples; %llu addresses (%llu without symbol); "
				"%llu chains cut at memory that is not code; "
				"go: %llu samples, %llu with goroutine, %llu labelled (%llu whose labels were "
				"dropped: too many label sets), read delay p50 %.0f us "
				"p99 %.0f us; %llu repaired\n",
				(double)st.self_cpu_ns / 1e6, st.fds, (unsigned long long)st.bytes,
				stack_bytes, (unsigned long long)st.throttled, (unsigned long long)st.bad,
				(unsigned long long)as.samples, (unsigned long long)as.addrs,
				(unsigned long long)as.unresolved, (unsigned long long)as.chain_cut,
				(unsigned long long)as.go_samples,
				(unsigned long long)as.with_goid, (unsigned long long)as.labelled,
				(unsigned long long)as.labels_dropped,
				(double)as.label_delay_p50_ns / 1e3, (double)as.label_delay_p99_ns / 1e3,
				(unsigned long long)as.repaired);
			if (go_target)
				fprintf(stderr,
					"gotop-perf: go at the sample (BPF): %s; %u events attached, %u refused; "
					"%llu records, %llu ring full, %llu kept for a later drain; "
					"%llu samples matched, %llu read after; "
					"%llu label sets known by their copied content, %llu label-set "
					"reads copied at the sample, %llu batched reads; "
					"%llu of %llu drains read nothing later\n",
					go_so.bpf ? "on" : bpf_why, st.bpf_attached, st.bpf_failed,
					(unsigned long long)as.bpf_records, (unsigned long long)as.bpf_ring_full,
					(unsigned long long)as.go_recs_kept, (unsigned long long)as.go_snapshots,
					(unsigned long long)as.go_snap_missing,
					(unsigned long long)as.go_label_content,
					(unsigned long long)as.go_label_pieces, (unsigned long long)as.go_readvs,
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
			if (as.bpf_runs) /* kernel.bpf_stats_enabled=1 */
				fprintf(stderr, "gotop-perf: BPF program: %llu runs, %.0f ns per run\n",
					(unsigned long long)as.bpf_runs, (double)as.bpf_run_ns / (double)as.bpf_runs);
		}
		free(path);
	}
	if (!o.quiet) {
		if (exited)
			fprintf(stderr, "gotop-perf: note: the target exited; profile written\n");
		else if (cli_stop_signal)
			fprintf(stderr, "gotop-perf: stopped by signal %d%s; profile written\n", cli_stop_signal,
				started ? "" : " before sampling began");
	}
out:
	for (e = 0; e < o.s.nevents; e++)
		sampler_free(samplers[e]);
	if (efd >= 0)
		close(efd);
	agg_free(agg);
	free(cmdline);
	/* A command still running when recording ends (-d, a signal) is stopped. */
	cli_target_stop(&target);
	return rc;
}
