/* cmd-verify.c: `gotop-perf verify`: how often frame-pointer stacks are wrong, per
 * function, before and after repair, against a full libunwind unwind. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/procinfo.h"
#include "gotop/symbolizer.h"
#include "gotop/session.h"
#include "gotop/util.h"
#include "gotop/repair.h"
#include "gotop/goread.h"
#include "gotop/verify.h"

struct verify_cli {
	pid_t pid;
	char **command;
	double duration;
	struct verify_opts vo;
	int json, dump, once, quiet;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gotop-perf verify (-p PID | -- COMMAND [ARG...]) [options]\n"
		"\n"
		"Stops one running thread at a time (ptrace), builds its frame-pointer stack as the\n"
		"kernel would, gotop-perf's repair of it, and a full unwind with libunwind, and\n"
		"reports per function how often the frame-pointer stacks are wrong.\n"
		"\n"
		"  -p, --pid PID          the process to verify\n"
		"  -d, --duration SECS    stop after SECS seconds (default: until Ctrl-C or exit)\n"
		"      --rate N           comparisons per second (default 20)\n"
		"      --max-stopped PCT  longest share of wall time the target may spend stopped\n"
		"                         (default 1%%); the verifier slows down to stay below it\n"
		"      --stack-size BYTES stack bytes the repair may use, as in record (default as\n"
		"                         record: %d for Go 1.21 and newer, %d for the rest)\n"
		"      --json             the report as JSON on stdout\n"
		"      --dump             one line per comparison with the three stacks\n"
		"      --once             one comparison per thread of the process, in any state\n"
		"                         (e.g. a process stopped with SIGSTOP), then the report\n"
		"  -q, --quiet            no progress messages\n"
		"  -h, --help             this help\n"
		"\n"
		"Exit status: 0 done, 1 failure, 2 usage, 3 no such process, 4 ptrace not permitted.\n",
		REPAIR_STACK_GO, REPAIR_STACK_OTHER);
}

enum { OPT_RATE = 0x300, OPT_MAXSTOP, OPT_JSON, OPT_DUMP, OPT_ONCE, OPT_STACK };

static int parse_args(int argc, char **argv, struct verify_cli *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "rate", required_argument, NULL, OPT_RATE },
		{ "max-stopped", required_argument, NULL, OPT_MAXSTOP },
		{ "stack-size", required_argument, NULL, OPT_STACK },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "dump", no_argument, NULL, OPT_DUMP },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	uint64_t u;
	double d;

	memset(o, 0, sizeof(*o));
	verify_opts_default(&o->vo);
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:d:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, &u) || u == 0 || u > 0x7fffffff) {
				cli_error("bad PID '%s'", optarg);
				return EXIT_USAGE;
			}
			o->pid = (pid_t)u;
			break;
		case 'd':
			if (cli_parse_seconds(optarg, &o->duration) || o->duration <= 0) {
				cli_error("bad duration '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_RATE:
			if (cli_parse_seconds(optarg, &d) || d <= 0 || d > 10000) {
				cli_error("bad rate '%s' (comparisons per second, up to 10000)", optarg);
				return EXIT_USAGE;
			}
			o->vo.rate = d;
			break;
		case OPT_MAXSTOP: {
			char *end;

			d = strtod(optarg, &end);
			if (end == optarg || (*end && strcmp(end, "%")) || d <= 0 || d > 50) {
				cli_error("bad --max-stopped '%s' (a percentage, up to 50)", optarg);
				return EXIT_USAGE;
			}
			o->vo.max_stopped = d / 100;
			break;
		}
		case OPT_STACK:
			if (cli_parse_u64(optarg, &u) || u == 0 || u > 65528) {
				cli_error("bad stack size '%s' (1 to 65528 bytes)", optarg);
				return EXIT_USAGE;
			}
			o->vo.sample_stack = (size_t)((u + 7) & ~7ULL);
			break;
		case OPT_JSON:
			o->json = 1;
			break;
		case OPT_DUMP:
			o->dump = 1;
			break;
		case OPT_ONCE:
			o->once = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (!!o->pid == !!o->command) {
		cli_error("verify needs either -p PID or -- COMMAND");
		return EXIT_USAGE;
	}
	if (o->once && o->command) {
		cli_error("--once needs -p PID");
		return EXIT_USAGE;
	}
	return 0;
}

static void print_pcs(struct verifier *v, const char *tag, const uint64_t *pcs, size_t n)
{
	char name[128];

	printf(" %s=", tag);
	for (size_t i = 0; i < n; i++)
		printf("%s%llx", i ? "," : "", (unsigned long long)pcs[i]);
	printf(" %s_fn=", tag);
	for (size_t i = 0; i < n; i++) {
		verifier_pc_name(v, pcs[i], i > 0, name, sizeof(name));
		/* names are escaped: no spaces or control characters break the line's fields */
		for (char *c = name; *c; c++)
			if (*c == ' ' || *c == ';')
				*c = '_';
		printf("%s%s", i ? ";" : "", name);
	}
}

static const char *class_key(enum verify_class c)
{
	static const char *const keys[VERIFY_NCLASS] = { "agrees", "caller_missing", "duplicate_frame",
							  "truncated", "different" };
	return c < VERIFY_NCLASS ? keys[c] : "?";
}

static void on_result(void *ctx, const struct verify_result *r)
{
	struct verifier *v = ctx;

	printf("cmp tid=%d raw=%s rep=%s stop_us=%llu", (int)r->tid, class_key(r->draw.cls),
	       class_key(r->drep.cls), (unsigned long long)(r->stopped_ns / 1000));
	if (r->cross_at)
		printf(" cross_at=%zu", r->cross_at);
	print_pcs(v, "truth", r->truth, r->nt);
	print_pcs(v, "rawfp", r->raw, r->nraw);
	print_pcs(v, "repaired", r->rep, r->nrep);
	putchar('\n');
	fflush(stdout);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0;
}

static void json_classes(FILE *f, const uint64_t *cls)
{
	fputc('{', f);
	for (int c = 0; c < VERIFY_NCLASS; c++)
		fprintf(f, "%s\"%s\":%llu", c ? "," : "", class_key(c), (unsigned long long)cls[c]);
	fputc('}', f);
}

static void report_json(FILE *f, const struct verify_report *r, pid_t pid)
{
	fprintf(f, "{\"pid\":%d,\"seconds\":%.3f,\"comparisons\":%llu,", (int)pid, (double)r->wall_ns / 1e9,
		(unsigned long long)r->comparisons);
	fprintf(f, "\"raw_wrong\":%llu,\"raw_wrong_pct\":%.3f,\"repaired_wrong\":%llu,\"repaired_wrong_pct\":%.3f,",
		(unsigned long long)r->raw_wrong, pct(r->raw_wrong, r->comparisons),
		(unsigned long long)r->rep_wrong, pct(r->rep_wrong, r->comparisons));
	fputs("\"raw\":", f);
	json_classes(f, r->raw_cls);
	fputs(",\"repaired\":", f);
	json_classes(f, r->rep_cls);
	fprintf(f, ",\"stops\":{\"count\":%llu,\"p50_us\":%.1f,\"p99_us\":%.1f,\"max_us\":%.1f,"
		"\"stopped_share_pct\":%.4f},",
		(unsigned long long)r->stops, (double)r->stop_p50_ns / 1e3, (double)r->stop_p99_ns / 1e3,
		(double)r->stop_max_ns / 1e3, pct(r->stop_total_ns, r->wall_ns));
	fprintf(f, "\"goroutine_stops\":{\"count\":%llu,\"p50_us\":%.1f,\"p99_us\":%.1f},"
		"\"other_stops\":{\"count\":%llu,\"p50_us\":%.1f,\"p99_us\":%.1f},",
		(unsigned long long)r->gstops, (double)r->gstop_p50_ns / 1e3, (double)r->gstop_p99_ns / 1e3,
		(unsigned long long)(r->stops - r->gstops), (double)r->ostop_p50_ns / 1e3,
		(double)r->ostop_p99_ns / 1e3);
	fprintf(f, "\"crossing\":{\"comparisons\":%llu,\"raw_wrong\":%llu,\"raw_wrong_pct\":%.3f,"
		"\"repaired_wrong\":%llu,\"repaired_wrong_pct\":%.3f,\"missed\":%llu,\"walk_budget\":%llu},",
		(unsigned long long)r->cross, (unsigned long long)r->cross_raw_wrong,
		pct(r->cross_raw_wrong, r->cross), (unsigned long long)r->cross_rep_wrong,
		pct(r->cross_rep_wrong, r->cross),
		(unsigned long long)r->cross_missed, (unsigned long long)r->cross_budget);
	fprintf(f, "\"idle_rounds\":%llu,\"threads_gone\":%llu,\"signals_passed_on\":%llu,\"unwind_failed\":%llu,",
		(unsigned long long)r->idle_rounds, (unsigned long long)r->gone, (unsigned long long)r->signals,
		(unsigned long long)r->unwind_failed);
	fprintf(f, "\"unwind_info\":{\"go_debug_frame\":%llu,\"go_pcsp\":%llu,\"native\":%llu,\"live_reads\":%llu,"
		"\"step_errors\":%llu,\"eh_frame_hdr\":%llu,\"no_info\":%llu},",
		(unsigned long long)r->unwind.go_debug_frame, (unsigned long long)r->unwind.go_pcsp,
		(unsigned long long)r->unwind.native, (unsigned long long)r->unwind.live_reads,
		(unsigned long long)r->unwind.step_errors, (unsigned long long)r->unwind.eh_frame_hdr,
		(unsigned long long)r->unwind.no_info);
	fputs("\"error\":", f);
	cli_json_str(f, r->error ? r->why : "");
	fputs(",\"functions\":[", f);
	for (size_t i = 0; i < r->nrows; i++) {
		const struct verify_row *w = &r->rows[i];

		fprintf(f, "%s{\"function\":", i ? "," : "");
		cli_json_str(f, w->func);
		fprintf(f, ",\"comparisons\":%llu,\"raw_wrong\":%llu,\"raw_wrong_pct\":%.3f,\"repaired_wrong\":%llu,"
			"\"repaired_wrong_pct\":%.3f,\"raw\":",
			(unsigned long long)w->n, (unsigned long long)w->raw_wrong, pct(w->raw_wrong, w->n),
			(unsigned long long)w->rep_wrong, pct(w->rep_wrong, w->n));
		json_classes(f, w->raw_cls);
		fputs(",\"repaired\":", f);
		json_classes(f, w->rep_cls);
		fputs(",\"raw_shape\":", f);
		cli_json_str(f, w->raw_shape);
		fprintf(f, ",\"raw_shape_count\":%llu,\"repaired_shape\":", (unsigned long long)w->raw_shape_n);
		cli_json_str(f, w->rep_shape);
		fprintf(f, ",\"repaired_shape_count\":%llu}", (unsigned long long)w->rep_shape_n);
	}
	fputs("]}\n", f);
}

static void report_text(FILE *f, const struct verify_report *r, pid_t pid)
{
	fprintf(f, "verified PID %d for %.1f s: %llu comparisons (%llu rounds found no running thread, "
		"%llu threads exited first)\n",
		(int)pid, (double)r->wall_ns / 1e9, (unsigned long long)r->comparisons,
		(unsigned long long)r->idle_rounds, (unsigned long long)r->gone);
	fprintf(f, "thread stops: %llu, p50 %.0f us, p99 %.0f us, max %.0f us; the target had a thread "
		"stopped %.3f%% of the time\n",
		(unsigned long long)r->stops, (double)r->stop_p50_ns / 1e3, (double)r->stop_p99_ns / 1e3,
		(double)r->stop_max_ns / 1e3, pct(r->stop_total_ns, r->wall_ns));
	fprintf(f, "frame-pointer stacks wrong: %.1f%% raw (as perf shows them), %.1f%% after repair\n",
		pct(r->raw_wrong, r->comparisons), pct(r->rep_wrong, r->comparisons));
	if (r->cross || r->cross_missed)
		fprintf(f, "past a stack switch: %llu comparisons, wrong %.1f%% raw, %.1f%% after repair "
			"(%llu more ended at a switch with no goroutine read; %llu repaired compared to "
			"the %d frames the goroutine's walk keeps)\n",
			(unsigned long long)r->cross, pct(r->cross_raw_wrong, r->cross),
			pct(r->cross_rep_wrong, r->cross), (unsigned long long)r->cross_missed,
			(unsigned long long)r->cross_budget, GOREAD_CONT_FRAMES);
	if (r->gstops)
		fprintf(f, "stops that read a goroutine's stack: %llu, p50 %.0f us, p99 %.0f us; the others: "
			"p50 %.0f us, p99 %.0f us\n",
			(unsigned long long)r->gstops, (double)r->gstop_p50_ns / 1e3,
			(double)r->gstop_p99_ns / 1e3, (double)r->ostop_p50_ns / 1e3,
			(double)r->ostop_p99_ns / 1e3);
	for (int k = 0; k < 2; k++) {
		const uint64_t *cls = k ? r->rep_cls : r->raw_cls;

		fprintf(f, "  %-9s", k ? "repaired:" : "raw:");
		for (int c = 0; c < VERIFY_NCLASS; c++)
			fprintf(f, "%s %s %llu", c ? "," : "", verify_class_name(c), (unsigned long long)cls[c]);
		fputc('\n', f);
	}
	if (r->error)
		fprintf(f, "verifier stopped: %s\n", r->why);
	if (!r->nrows)
		return;
	fprintf(f, "\n%-40s %7s %10s %10s  %s\n", "FUNCTION (leaf)", "N", "RAW WRONG", "REPAIRED", "MOST COMMON WRONG SHAPE (raw / repaired)");
	for (size_t i = 0; i < r->nrows; i++) {
		const struct verify_row *w = &r->rows[i];

		fprintf(f, "%-40.40s %7llu %9.1f%% %9.1f%%  %s", w->func, (unsigned long long)w->n,
			pct(w->raw_wrong, w->n), pct(w->rep_wrong, w->n), w->raw_shape[0] ? w->raw_shape : "-");
		if (w->raw_shape[0])
			fprintf(f, " (%llu)", (unsigned long long)w->raw_shape_n);
		if (w->rep_shape[0])
			fprintf(f, " / %s (%llu)", w->rep_shape, (unsigned long long)w->rep_shape_n);
		fputc('\n', f);
	}
}

static int target_alive(pid_t pid)
{
	struct proc_stat st;

	if (procinfo_stat(pid, 0, &st) != 0)
		return 0;
	return st.state != 'Z' && st.state != 'X';
}

int cmd_verify(int argc, char **argv)
{
	struct verify_cli o;
	struct session_opts so;
	struct session_err err;
	struct session *s;
	char why[256];
	struct verifier *v = NULL;
	struct verify_report rep;
	uint64_t start;
	pid_t pid;
	int rc, exited = 0;

	rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	/* A session with only the verifier, on the process or the command it starts. */
	session_opts_init(&so);
	so.sources = SESSION_VERIFY;
	so.pid = o.pid;
	so.command = o.command;
	so.verify = &o.vo;
	s = session_new(&so, &err);
	if (!s)
		return cli_session_error(&err);
	if (session_start(s, NULL, &err)) {
		rc = cli_session_error(&err);
		goto out;
	}
	pid = session_info(s)->pid;
	v = session_verifier(s, why, sizeof(why));
	if (!v) {
		cli_error("%s", why);
		rc = EXIT_FAIL;
		goto out;
	}
	if (o.dump)
		verifier_set_result_fn(v, on_result, v);
	cli_install_signals();
	/* Say at once when ptrace is refused, before any progress message. */
	if (verifier_probe(v) < 0) {
		verifier_report(v, &rep);
		cli_error("%s", rep.why);
		rc = rep.error == -ESRCH ? EXIT_TARGET : EXIT_PERM;
		verify_report_free(&rep);
		goto out;
	}
	if (!o.quiet && !o.once)
		fprintf(stderr, "gotop-perf: verifying PID %d at %.0f comparisons/s%s\n", (int)pid, o.vo.rate,
			o.duration > 0 ? "" : ": Ctrl-C to stop");
	start = util_now_ns();
	if (o.once) {
		(void)verifier_pass(v); /* the report says how it went */
	} else {
		while (!cli_stop_signal) {
			verifier_pace(v, &cli_stop_signal);
			if (cli_stop_signal)
				break;
			if (o.duration > 0 && (double)(util_now_ns() - start) / 1e9 >= o.duration)
				break;
			rc = verifier_round(v, 0);
			if (rc < 0 && rc != -ESRCH)
				break;
			session_target_status(s); /* reaps a command we started */
			if (!target_alive(pid)) {
				exited = 1;
				break;
			}
		}
	}
	verifier_report(v, &rep);
	if (rep.error) {
		cli_error("%s", rep.why);
		rc = rep.error == -ESRCH ? EXIT_TARGET : EXIT_PERM;
	} else {
		rc = EXIT_OK;
	}
	if (rep.error == 0 || rep.comparisons) {
		if (o.json)
			report_json(stdout, &rep, pid);
		else
			report_text(stdout, &rep, pid);
	}
	if (exited && !o.quiet)
		fprintf(stderr, "gotop-perf: process %d exited; report covers its run\n", (int)pid);
	verify_report_free(&rep);
out:
	session_free(s); /* the verifier, then a command we started */
	return rc;
}
