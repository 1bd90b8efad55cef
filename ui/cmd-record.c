/* cmd-record.c: `gotop-perf record`: sample a process and write gzipped pprof profiles. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/pprof.h"
#include "gotop/procinfo.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/util.h"

#define MAX_EVENTS 8
#define MAX_TIDS 256

struct record_opts {
	pid_t pid;
	char **command;
	struct event_spec events[MAX_EVENTS];
	size_t nevents;
	int use_freq;
	uint64_t freq, period;
	double duration;
	const char *output;
	pid_t tids[MAX_TIDS];
	size_t ntids;
	uint32_t stack_size;
	int repair, go, verbose, quiet;
	unsigned drain_ms;
};

enum { OPT_STACK = 256, OPT_NO_REPAIR, OPT_NO_GO, OPT_LATENCY, OPT_HELP };

static const struct option long_opts[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "event", required_argument, NULL, 'e' },
	{ "freq", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "duration", required_argument, NULL, 'd' },
	{ "output", required_argument, NULL, 'o' },
	{ "tid", required_argument, NULL, 't' },
	{ "stack-size", required_argument, NULL, OPT_STACK },
	{ "no-repair", no_argument, NULL, OPT_NO_REPAIR },
	{ "no-go", no_argument, NULL, OPT_NO_GO },
	{ "label-latency", required_argument, NULL, OPT_LATENCY },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void record_usage(FILE *f)
{
	fputs("Usage: gotop-perf record (-p PID | -- COMMAND [ARGS...]) [OPTIONS]\n"
	      "  -p, --pid PID          profile an existing process (all its threads, also new ones)\n"
	      "  -t, --tid TID          only these threads (repeatable; no new threads)\n"
	      "  -e, --event EVENT      event to sample (repeatable; default cpu-clock; see `list`)\n"
	      "  -F, --freq HZ          samples per second per thread (default 1000)\n"
	      "  -c, --count PERIOD     a sample every PERIOD events instead of -F\n"
	      "  -d, --duration SECONDS stop after this long (default: Ctrl-C or target exit)\n"
	      "  -o, --output FILE      gzipped pprof output (default gotop-perf.pb.gz); with several\n"
	      "                         events, one file per event: FILE with .EVENT before .pb.gz\n"
	      "      --stack-size BYTES user stack bytes copied per sample (default 1024)\n"
	      "      --no-repair        keep the kernel's frame-pointer chains as they are\n"
	      "      --no-go            do not read goroutine ids and pprof labels\n"
	      "      --label-latency MS (Go) read each sample's goroutine and labels at most about\n"
	      "                         MS ms after the sample (default 4); shorter is more exact,\n"
	      "                         at one wakeup per MS\n"
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
	o->use_freq = 1;
	o->freq = 1000;
	o->output = "gotop-perf.pb.gz";
	o->stack_size = 1024;
	o->repair = 1;
	o->go = 1;
	o->drain_ms = 4;
	optind = 1;
	/* "+" stops at the first non-option so that -- COMMAND args stay intact. */
	while ((c = getopt_long(argc, argv, "+p:e:F:c:d:o:t:vq", long_opts, NULL)) != -1) {
		uint64_t v;

		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, &v) || v > 0x7fffffff) {
				cli_error("invalid PID '%s'", optarg);
				return EXIT_USAGE;
			}
			o->pid = (pid_t)v;
			break;
		case 'e':
			if (o->nevents == MAX_EVENTS) {
				cli_error("at most %d events", MAX_EVENTS);
				return EXIT_USAGE;
			}
			if (events_parse(optarg, &o->events[o->nevents])) {
				cli_error("unknown event '%s' (see `gotop-perf list`)", optarg);
				return EXIT_EVENT;
			}
			o->nevents++;
			break;
		case 'F':
			if (cli_parse_u64(optarg, &v) || v > 1000000) {
				cli_error("invalid frequency '%s'", optarg);
				return EXIT_USAGE;
			}
			o->use_freq = 1;
			o->freq = v;
			break;
		case 'c':
			if (cli_parse_u64(optarg, &v)) {
				cli_error("invalid period '%s'", optarg);
				return EXIT_USAGE;
			}
			o->use_freq = 0;
			o->period = v;
			break;
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
		case OPT_STACK:
			if (cli_parse_u64(optarg, &v) || v > 65528) {
				cli_error("invalid stack size '%s' (1 to 65528 bytes)", optarg);
				return EXIT_USAGE;
			}
			o->stack_size = (uint32_t)((v + 7) & ~7ULL);
			break;
		case OPT_NO_REPAIR:
			o->repair = 0;
			break;
		case OPT_NO_GO:
			o->go = 0;
			break;
		case OPT_LATENCY:
			if (cli_parse_u64(optarg, &v) || v > 1000) {
				cli_error("invalid label latency '%s' (1 to 1000 ms)", optarg);
				return EXIT_USAGE;
			}
			o->drain_ms = (unsigned)v;
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
	if (!o->pid == !o->command) {
		cli_error(o->pid ? "give either -p PID or a command, not both"
				 : "nothing to profile: give -p PID or -- COMMAND");
		return EXIT_USAGE;
	}
	if (o->ntids && !o->pid) {
		cli_error("-t needs -p");
		return EXIT_USAGE;
	}
	if (o->nevents == 0) {
		events_parse("cpu-clock", &o->events[0]);
		o->nevents = 1;
	}
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
	if (o->use_freq)
		prof_set_period(p, pt, !strcmp(unit, "nanoseconds") ? (int64_t)(1000000000ULL / o->freq)
								 : (int64_t)o->freq);
	else
		prof_set_period(p, pt, (int64_t)o->period);
	snprintf(buf, sizeof(buf), "gotop-perf %s: event %s, %s %llu", PACKAGE_VERSION, ev->name,
		 o->use_freq ? "frequency (Hz)" : "period",
		 (unsigned long long)(o->use_freq ? o->freq : o->period));
	prof_add_comment(p, buf);
	if (cmdline && *cmdline)
		prof_add_comment(p, cmdline);
	if (gover) {
		snprintf(buf, sizeof(buf), "go version %s", gover);
		prof_add_comment(p, buf);
	}
	if (!o->repair)
		prof_add_comment(p, "frame-pointer repair off (--no-repair)");
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct cli_target target;
	struct sampler *samplers[MAX_EVENTS] = { 0 };
	struct agg *agg = NULL;
	struct agg_opts ao;
	char why[512], kwhy[256], *cmdline = NULL;
	uint64_t start_ns, start_wall;
	int rc, kernel, exited = 0, i, nev, go_target;
	size_t e;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	memset(&target, 0, sizeof(target));
	target.go_fd = target.err_fd = -1;

	/* Fail before sampling when the output cannot be written. */
	for (e = 0; e < o.nevents; e++) {
		char *path = output_for(o.output, o.events[e].name, o.nevents > 1);
		int w = pprof_check_writable(path);

		if (w) {
			cli_error("cannot write %s: %s", path, strerror(-w));
			free(path);
			return EXIT_FAIL;
		}
		free(path);
	}
	if (o.pid) {
		rc = cli_check_pid(o.pid);
		if (rc)
			return rc;
		for (e = 0; e < o.ntids; e++) {
			struct proc_stat st;

			if (procinfo_stat(o.pid, o.tids[e], &st)) {
				cli_error("no thread %d in process %d", (int)o.tids[e], (int)o.pid);
				return EXIT_TARGET;
			}
		}
		target.pid = o.pid;
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
	ao.repair = o.repair;
	ao.go = o.go;
	ao.kernel = kernel;
	agg = agg_new(&ao);
	go_target = o.go && cli_is_go_binary(o.pid ? NULL : o.command[0], target.pid);

	for (e = 0; e < o.nevents; e++) {
		struct sampler_opts so;

		memset(&so, 0, sizeof(so));
		so.pid = target.pid;
		so.tids = o.tids;
		so.ntids = o.ntids;
		so.event = o.events[e];
		so.use_freq = o.use_freq;
		so.freq = o.freq;
		so.period = o.period;
		so.stack_size = o.stack_size;
		so.kernel = kernel;
		so.enable_on_exec = target.spawned;
		if (go_target) {
			/* Goroutines and labels are read right after each sample. */
			agg_sampler_hook(agg, &so.hook, &so.hook_arg);
			so.drain_ms = o.drain_ms;
		}
		samplers[e] = sampler_new(&so, why, sizeof(why));
		if (!samplers[e]) {
			int err = errno;

			cli_error("%s", why);
			rc = (err == EACCES || err == EPERM) ? EXIT_PERM
			   : (err == ESRCH) ? EXIT_TARGET : EXIT_EVENT;
			goto out;
		}
	}

	cli_install_signals();
	start_ns = util_now_ns();
	start_wall = util_wall_ns();
	for (e = 0; e < o.nevents; e++) {
		int r = sampler_start(samplers[e]);

		if (r) {
			cli_error("cannot start the sampling thread: %s", strerror(-r));
			rc = EXIT_FAIL;
			goto out;
		}
	}
	if (target.spawned) {
		cli_target_go(&target);
		if (target.exit_status < 0) {
			cli_error("cannot run %s: %s", o.command[0], strerror(-target.exit_status));
			rc = EXIT_TARGET;
			goto out;
		}
	}
	if (go_target)
		agg_go_version(agg); /* starts the goroutine reads now, not at the first batch */
	cmdline = procinfo_cmdline(target.pid, 1024);
	if (!o.quiet)
		fprintf(stderr, "gotop-perf: recording PID %d (%s)%s\n", (int)target.pid,
			cmdline ? cmdline : "?", o.duration > 0 ? "" : ": Ctrl-C to stop");

	nev = (int)o.nevents;
	while (!cli_stop_signal) {
		int all_exited = 1;

		for (i = 0; i < nev; i++) {
			struct sample_batch *b = sampler_take(samplers[i], nev == 1 ? 100 : 20);

			if (b) {
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
	}
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
	for (e = 0; e < o.nevents; e++) {
		struct prof *p = agg_profile(agg, o.events[e].name);
		struct sampler_stats st;
		char *path = output_for(o.output, o.events[e].name, o.nevents > 1);
		int w;

		if (!p) {
			/* No sample at all: still write a valid, empty profile. */
			struct sample_batch empty;

			memset(&empty, 0, sizeof(empty));
			empty.event = &o.events[e];
			agg_feed(agg, &empty);
			p = agg_profile(agg, o.events[e].name);
			agg_set_times(agg, (int64_t)start_wall, (int64_t)(util_now_ns() - start_ns));
		}
		set_metadata(p, &o.events[e], &o, cmdline, agg_go_version(agg));
		w = pprof_write_file(p, path);
		sampler_get_stats(samplers[e], &st);
		if (w) {
			cli_error("cannot write %s: %s", path, strerror(-w));
			rc = EXIT_FAIL;
		} else if (!o.quiet) {
			fprintf(stderr,
				"gotop-perf: %s: %llu samples, %llu lost, %llu dropped, %u threads, %.1f s -> %s\n",
				o.events[e].name, (unsigned long long)st.samples,
				(unsigned long long)st.lost, (unsigned long long)st.dropped,
				st.threads, (double)(util_now_ns() - start_ns) / 1e9, path);
		}
		if (o.verbose) {
			struct agg_stats as;

			agg_get_stats(agg, &as);
			fprintf(stderr,
				"gotop-perf: sampler cpu %.1f ms, %u fds, %llu bytes, %llu throttled, %llu bad\n"
				"gotop-perf: aggregated %llu samples; %llu addresses (%llu without symbol); "
				"go: %llu samples, %llu with goroutine, %llu labelled, read delay p50 %.0f us "
				"p99 %.0f us; %llu repaired\n",
				(double)st.self_cpu_ns / 1e6, st.fds, (unsigned long long)st.bytes,
				(unsigned long long)st.throttled, (unsigned long long)st.bad,
				(unsigned long long)as.samples, (unsigned long long)as.addrs,
				(unsigned long long)as.unresolved, (unsigned long long)as.go_samples,
				(unsigned long long)as.with_goid, (unsigned long long)as.labelled,
				(double)as.label_delay_p50_ns / 1e3, (double)as.label_delay_p99_ns / 1e3,
				(unsigned long long)as.repaired);
		}
		free(path);
	}
	if (!o.quiet) {
		if (exited)
			fprintf(stderr, "gotop-perf: note: the target exited; profile written\n");
		else if (cli_stop_signal)
			fprintf(stderr, "gotop-perf: stopped by signal %d; profile written\n", cli_stop_signal);
	}
out:
	for (e = 0; e < o.nevents; e++)
		sampler_free(samplers[e]);
	agg_free(agg);
	free(cmdline);
	if (target.spawned) {
		if (target.go_fd >= 0)
			close(target.go_fd); /* the child sees EOF and exits without exec */
		cli_target_reap(&target, 1);
	}
	return rc;
}
