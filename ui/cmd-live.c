/* cmd-live.c: `gotop-perf [-p PID | -- COMMAND]`: options, the live session on the target,
 * and the plain-text batch mode (like top -b); the curses UI is in tui.c. */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/events.h"
#include "gotop/live.h"
#include "gotop/pprof.h"
#include "gotop/util.h"

struct live_cli {
	struct session_opts s;
	char **command;
	double refresh;
	unsigned window;
	uint64_t max_memory_mb;
	struct cli_display d;
	uint64_t iterations;
	const char *ratio;
	int verify;
	int no_wall;
	int no_memory;
	const char *sample_index; /* the event or heap sample type viewed first */
	int wall_hz_set; /* --wall-hz given: that rate, whatever it costs */
	int wall_idle, wall_by_start;
};

enum {
	OPT_REFRESH = 300, OPT_MAX_MEMORY, OPT_THREAD, OPT_HELP, OPT_VERIFY, OPT_RATIO,
	OPT_WALL_HZ, OPT_NO_WALL, OPT_NO_MEMORY, OPT_SAMPLE_INDEX, OPT_WALL_IDLE, OPT_WALL_BY,
};

static const struct option long_opts[] = {
	CLI_SAMPLING_LONGOPTS,
	CLI_DISPLAY_LONGOPTS,
	{ "refresh", required_argument, NULL, OPT_REFRESH },
	{ "delay", required_argument, NULL, 'd' },
	{ "window", required_argument, NULL, 'w' },
	{ "max-memory", required_argument, NULL, OPT_MAX_MEMORY },
	{ "iterations", required_argument, NULL, 'n' },
	{ "thread", required_argument, NULL, OPT_THREAD },
	{ "ratio", required_argument, NULL, OPT_RATIO },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "wall-hz", required_argument, NULL, OPT_WALL_HZ },
	{ "no-wall", no_argument, NULL, OPT_NO_WALL },
	{ "no-memory", no_argument, NULL, OPT_NO_MEMORY },
	{ "sample-index", required_argument, NULL, OPT_SAMPLE_INDEX },
	{ "wall-idle", no_argument, NULL, OPT_WALL_IDLE },
	{ "wall-by", required_argument, NULL, OPT_WALL_BY },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

void cmd_live_options(FILE *f)
{
	cli_sampling_usage(f, 1);
	fputs("  -d, --refresh SECONDS  time between updates (default 1)\n"
	      "  -w, --window SECONDS   start with a decaying window of the last SECONDS\n"
	      "                         (default: cumulative; the w key toggles); its memory\n"
	      "                         stays flat: stacks it no longer shows are forgotten\n"
	      "      --max-memory MB    anonymous memory gotop-perf may hold (default "
	      GP_STR(LIVE_DEFAULT_MAX_MEM_MB) "; 0:\n"
	      "                         no limit; mapped binaries do not count): past it, the\n"
	      "                         entries with the fewest samples are forgotten, and counted\n"
	      "  -o, --output-dir DIR   where snapshots (S key) are saved (default: current dir)\n"
	      "      --focus FUNC       keep samples with a function containing FUNC (repeatable)\n"
	      "      --ignore FUNC      drop samples with a function containing FUNC (repeatable)\n"
	      "      --tag KEY=VALUE    keep samples with this pprof label (repeatable)\n"
	      "      --thread TID       keep samples of this thread\n"
	      "      --ratio NUM/DEN    {a,b}:S: member NUM's ratio column divides by DEN (an\n"
	      "                         event of the group) instead of the known ratio\n"
	      "      --no-color         no colours (also when NO_COLOR is set)\n"
	      "      --ascii            ASCII only, even on a UTF-8 terminal\n"
	      "      --names short|full function names as pprof shortens them (the screen's\n"
	      "                         default, x switches) or in full (--batch's default)\n"
	      "      --source-path DIR  annotate: also look for source files under DIR (repeatable)\n"
	      "      --trim-path PREFIX annotate: remove PREFIX from recorded source paths first\n"
	      "Batch mode (plain text on stdout, every refresh, like top -b):\n"
	      "      --batch            no terminal UI\n"
	      "  -n, --iterations N     stop after N updates (default: until the target exits)\n"
	      "      --view LIST        views to print, comma separated (default top,tree,labels):\n", f);
	cli_wrap(f, ui_view_names(), 25);
	fputs("      --rows N           rows per view (default 25; 0: all)\n"
	      "      --sort KEY         Top order: self, total or name (default self)\n"
	      "      --callers FUNC     the function of the callers view (default: the hottest)\n"
	      "      --annotate FUNC    the function of the annotate view (default: the hottest)\n"
	      "      --asm              the annotate view shows instructions, not source lines\n"
	      "      --min-pct PCT      tree nodes below PCT% are left out (default 1)\n"
	      "      --save FILE        at the end, save what the last update showed (gzipped pprof)\n"
	      "      --base FILE        start with a saved pprof file as the baseline (B key): Top,\n"
	      "                         Tree and Flame show the share then and the change\n"
	      "      --verify           start the verifier (V key; --view verify in batch mode)\n"
	      "      --wall-hz HZ       Go: snapshots of all goroutines per second for wall time\n"
	      "                         (Goroutines view, m; Labels' RUN% RUNQ% WAIT%; default 10)\n"
	      "      --no-wall          Go: no wall-clock snapshots of the goroutines\n"
	      "      --sample-index TYPE  view TYPE first: an event's data, or Go's heap profile\n"
	      "                         (inuse_space, inuse_objects, alloc_space, alloc_objects;\n"
	      "                         [ and ] switch)\n"
	      "      --no-memory        Go: do not read the runtime's heap profile\n"
	      "      --wall-idle        Wall mode: also the goroutines parked at every snapshot of\n"
	      "                         the window (hidden by default; the a key)\n"
	      "      --wall-by stack|start  Wall mode: rows by stack and state (default), or by\n"
	      "                         start function first (the b key)\n"
	      "A command started with -- gets /dev/null as stdin, stdout and stderr and is stopped\n"
	      "(SIGTERM) when gotop-perf quits.\n", f);
}

static void live_usage(FILE *f)
{
	fputs("Usage: gotop-perf [OPTIONS] (-p PID | -- COMMAND [ARGS...])\n"
	      "The live profiler: a terminal UI (press h for the keys), or text with --batch.\n", f);
	cmd_live_options(f);
}

/* A flat getopt switch, one case per option of long_opts. */
static int parse_args(int argc, char **argv, struct live_cli *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	session_opts_init(&o->s);
	cli_display_init(&o->d);
	o->refresh = 1.0;
	o->max_memory_mb = LIVE_DEFAULT_MAX_MEM_MB;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+" CLI_SAMPLING_SHORTOPTS CLI_DISPLAY_SHORTOPTS "d:w:n:",
				long_opts, NULL)) != -1) {
		uint64_t v;
		double d;
		int r = cli_sampling_option(&o->s, c, optarg, 1);

		if (r < 0)
			r = cli_display_option(&o->d, c, optarg);
		if (r > 0)
			return r;
		if (r == 0)
			continue;
		switch (c) {
		case 'd':
		case OPT_REFRESH:
			if (cli_parse_seconds(optarg, &o->refresh) || o->refresh < 0.05 || o->refresh > 3600) {
				cli_error("invalid refresh '%s' (0.05 to 3600 seconds)", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'w':
			if (cli_parse_seconds(optarg, &d) || d < 1 || d > LIVE_MAX_WINDOW) {
				cli_error("invalid window '%s' (1 to %d seconds)", optarg, LIVE_MAX_WINDOW);
				return EXIT_USAGE;
			}
			o->window = (unsigned)d;
			break;
		case OPT_MAX_MEMORY:
			if (!strcmp(optarg, "0")) /* cli_parse_u64 takes only positive numbers */
				o->max_memory_mb = 0;
			else if (cli_parse_u64(optarg, &o->max_memory_mb) ||
				 o->max_memory_mb > (1u << 20)) {
				cli_error("invalid memory limit '%s' (MB, 0 to %u; 0: no limit)", optarg,
					  1u << 20);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (cli_parse_u64(optarg, &o->iterations)) {
				cli_error("invalid number of iterations '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_THREAD:
			if (cli_parse_u64(optarg, &v) || v > 0x7fffffff) {
				cli_error("invalid thread id '%s'", optarg);
				return EXIT_USAGE;
			}
			r = cli_display_filter(&o->d, MODEL_LABEL, "thread", NULL, (int64_t)v);
			if (r)
				return r;
			break;
		case OPT_RATIO:
			if (!strchr(optarg, '/') || optarg[0] == '/' || !strchr(optarg, '/')[1]) {
				cli_error("--ratio takes NUM/DEN, two events of the group");
				return EXIT_USAGE;
			}
			o->ratio = optarg;
			break;
		case OPT_VERIFY:
			o->verify = 1;
			break;
		case OPT_WALL_HZ:
			if (cli_parse_wall_hz(optarg, &o->s.wall_hz))
				return EXIT_USAGE;
			o->wall_hz_set = 1;
			break;
		case OPT_NO_WALL:
			o->no_wall = 1;
			break;
		case OPT_NO_MEMORY:
			o->no_memory = 1;
			break;
		case OPT_SAMPLE_INDEX:
			o->sample_index = optarg;
			break;
		case OPT_WALL_IDLE:
			o->wall_idle = 1;
			break;
		case OPT_WALL_BY:
			if (strcmp(optarg, "stack") && strcmp(optarg, "start")) {
				cli_error("invalid --wall-by '%s' (stack or start)", optarg);
				return EXIT_USAGE;
			}
			o->wall_by_start = !strcmp(optarg, "start");
			break;
		case OPT_HELP:
			live_usage(stdout);
			exit(EXIT_OK);
		default:
			live_usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		/* Without "--" a word here is a mistyped command, not something to run. */
		if (strcmp(argv[optind - 1], "--") != 0) {
			cli_error("unknown command '%s' (see --help)", argv[optind]);
			return EXIT_USAGE;
		}
		o->command = argv + optind;
	}
	cli_sampling_finish(&o->s);
	if (o->ratio && o->s.nevents && o->s.events[0].nmembers && !o->s.events[0].sample_read) {
		cli_error("--ratio is for a group read at its leader's samples ({a,b}:S); "
			  "{a,b} shows each member's share");
		return EXIT_USAGE;
	}
	if (!o->s.pid == !o->command) {
		cli_error(o->s.pid ? "give either -p PID or a command, not both"
				 : "nothing to profile: give -p PID or -- COMMAND");
		return EXIT_USAGE;
	}
	if (!o->d.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cli_error("the live UI needs a terminal; use --batch for text output");
		return EXIT_USAGE;
	}
	return 0;
}

static int run_batch(struct ui *ui, struct live_cli *o)
{
	uint64_t iter = 0, said_ns = 0;
	struct pollfd p = { live_fd(ui->live), POLLIN, 0 };

	while (!cli_stop_signal) {
		uint64_t v;
		int r;

		/* A refresh, the target's exit (the worker publishes it) or a signal (poll is
		 * never restarted, signal(7)) ends the wait; the timeout is a backstop. */
		poll(&p, 1, 1000);
		if (read(p.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			break;
		if (ui->target_status < 0)
			ui->target_status = live_target_status(ui->live);
		r = ui_refresh(ui);
		/* What the screen shows on its status line as an error (the memory limit
		 * reached) goes to stderr once. */
		if (ui->status_attr == UA_ERR && ui->status_ns != said_ns) {
			said_ns = ui->status_ns;
			cli_error("%s", ui->status);
		}
		/* One iteration per refresh (not for the answers to requests). */
		if (!(r & R_REDRAW) || !ui->snap || !(ui->snap->periodic || ui->snap->exited))
			continue;
		batch_print_iteration(ui, o->d.views, ++iter);
		if (ui->snap->exited || (o->iterations && iter >= o->iterations))
			break;
	}
	/* The data of the last iteration printed: the same snapshot. */
	return cli_display_save(&o->d, ui);
}

/* --- entry --- */

/* The session on the target, handed to the live session, started. EXIT_OK, or the exit
 * code after saying why. */
static int start_live(struct live_cli *o, struct live **out)
{
	struct session_err err;
	struct session *s;
	struct live_opts lo;
	struct live *live;

	o->s.command = o->command;
	o->s.command_quiet = 1; /* the screen is ours */
	o->s.hold_kernel = 1;   /* first data without waiting for the kernel's symbols */
	/* The views' sources beyond CPU samples. The wall-clock sampler starts with the
	 * session, not when its view is first shown: the Labels view sets its wall columns
	 * beside on-CPU shares counted from the start, and both must cover the same span. It
	 * only reads the target (gosnap.h). Unless a rate is asked for, it takes at most
	 * SESSION_WALL_LIVE_MAX_CPU of a core: it is on without being asked, and a snapshot's
	 * cost grows with the goroutines. Goroutine snapshots and the verifier start when a
	 * view first asks. */
	o->s.sources = SESSION_CPU | SESSION_GOROUTINES | SESSION_VERIFY;
	if (!o->no_wall)
		o->s.sources |= SESSION_WALL;
	o->s.wall_max_cpu = o->wall_hz_set ? 0 : SESSION_WALL_LIVE_MAX_CPU;
	o->s.wall_publish = 1;
	/* The runtime's heap profile, read at each GC cycle within a share of a core: its
	 * sample types are events of the snapshots ([ and ]). */
	if (!o->no_memory)
		o->s.sources |= SESSION_MEM;
	o->s.mem_publish = 1;
	o->s.mem_max_cpu = SESSION_MEM_LIVE_MAX_CPU;
	s = session_new(&o->s, &err);
	if (!s) {
		int rc = cli_session_error(&err);

		if (o->command && err.kind == SESSION_FAIL_SYSTEM)
			cli_error("cannot start %s", o->command[0]);
		return rc;
	}
	if (session_open(s, &err)) {
		session_free(s);
		return cli_session_error(&err);
	}
	memset(&lo, 0, sizeof(lo));
	lo.refresh_ns = (uint64_t)(o->refresh * 1e9);
	lo.window_s = o->window;
	lo.max_mem = (size_t)o->max_memory_mb << 20;
	live = live_new(&lo, s, err.why, sizeof(err.why));
	if (!live) {
		cli_error("%s", err.why);
		return EXIT_FAIL;
	}
	cli_install_signals();
	if (live_start(live, &err)) {
		live_free(live);
		return cli_session_error(&err);
	}
	*out = live;
	return EXIT_OK;
}

/* The UI's settings from the command line and the session. */
static void setup_ui(struct ui *ui, const struct live_cli *o, struct live *live)
{
	const struct session_info *info = live_session_info(live);

	ui_init(ui, o->d.batch);
	ui->live = live;
	ui->kernel = info->kernel;
	ui->freq_default = o->s.freq;
	ui->spawned = info->spawned;
	ui->ratio = o->ratio;
	if (o->window)
		ui->window_len = o->window;
	cli_display_apply(&o->d, ui);
	if (!info->kernel)
		ui_set_status(ui, UA_DIM, "%s", info->kernel_why);
	ui->target_pid = info->pid;
	ui->stack_size = info->stack_size;
	ui->wall_idle = o->wall_idle;
	ui->wall_by_start = o->wall_by_start;
	/* The session's wall-clock sampler, or why there is none. It sets itself up on its own
	 * thread while the worker's first data come. */
	ui->wall = session_wall_started(live_session(live));
	if (o->no_wall)
		snprintf(ui->wall_why, sizeof(ui->wall_why), "wall-clock snapshots off (--no-wall)");
	else
		snprintf(ui->wall_why, sizeof(ui->wall_why), "%s", info->wall_why);
	if (!info->wall && !o->no_wall && info->go && o->d.batch)
		cli_error("wall clock: %s", info->wall_why); /* profiling goes on without it */
	if (o->sample_index)
		snprintf(ui->viewed, sizeof(ui->viewed), "%s", o->sample_index);
	if (o->verify) {
		ui_option(ui, "verify", NULL);
		if (o->d.batch && ui->status_attr == UA_ERR)
			cli_error("%s", ui->status); /* profiling goes on without it */
	}
}

int cmd_live(int argc, char **argv)
{
	struct live_cli o;
	struct live *live = NULL;
	struct prof *base = NULL;
	struct ui ui;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc || (rc = cli_display_start(&o.d)))
		return rc;
#ifdef M_MMAP_THRESHOLD
	/* The live session rebuilds its model at every refresh. With glibc's adaptive
	 * threshold such ever-larger blocks come from the heap and fragment it: large blocks
	 * are mapped and unmapped instead (glibc malloc(3), mallopt; BENCHMARKS.md, "Memory of the live UI and record over time"). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
#endif
	if (o.d.base && !(base = pprof_read_file(o.d.base))) {
		cli_error("%s: %s", o.d.base, errno == EBADMSG ? "not a pprof profile, or a corrupt one"
							       : strerror(errno));
		return EXIT_FAIL;
	}
	rc = start_live(&o, &live);
	if (rc) {
		prof_free(base);
		return rc;
	}
	setup_ui(&ui, &o, live);
	if (base && o.sample_index) {
		/* A heap profile's column of the sample type viewed, as `view --base` takes it. */
		const struct prof_value_type *t;
		size_t nt = prof_sample_types(base, &t), i;

		for (i = 0; i < nt; i++) {
			const char *n = prof_string(base, t[i].type, NULL);

			if (n && !strcmp(n, o.sample_index)) {
				struct prof *q = live_type_view(base, i, NULL, NULL, NULL);

				prof_free(base);
				base = q;
				break;
			}
		}
	}
	if (base)
		ui_base_set(&ui, base, o.d.base);
	rc = o.d.batch ? run_batch(&ui, &o) : tui_run(&ui);
	ui_fini(&ui);
	live_free(live); /* also stops a command still running */
	return rc;
}
