/* cli.c: what the commands share: messages, number parsing, the stop signals, the
 * sampling options of `record` and the live UI, and the display options of the live UI
 * and `view`. */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <langinfo.h>
#include <locale.h>
#include <unistd.h>

#include "gotop/events.h"
#include "gotop/pprof.h"
#include "gotop/repair.h"
#include "gotop/util.h"

volatile sig_atomic_t cli_stop_signal;
volatile sig_atomic_t cli_wake_fd = -1;

static void on_signal(int sig)
{
	int e = errno;

	cli_stop_signal = sig;
	if (cli_wake_fd >= 0 && write(cli_wake_fd, "s", 1) < 0) {
		/* the pipe is full: the loop wakes anyway */
	}
	errno = e;
}

void cli_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gotop-perf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_session_error(const struct session_err *e)
{
	cli_error("%s", e->why);
	switch (e->kind) {
	case SESSION_FAIL_USAGE:
		return EXIT_USAGE;
	case SESSION_FAIL_TARGET:
		return EXIT_TARGET;
	case SESSION_FAIL_PERM:
		return EXIT_PERM;
	case SESSION_FAIL_EVENT:
		return EXIT_EVENT;
	case SESSION_FAIL_SYSTEM:
	default:
		return EXIT_FAIL;
	}
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v == 0)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (*end == 's' && end[1] == 0)
		end++;
	if (*end || !(v > 0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_wall_hz(const char *s, double *hz)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || !(v > 0 && v <= 1000)) {
		cli_error("invalid --wall-hz '%s' (above 0, at most 1000)", s);
		return -1;
	}
	*hz = v;
	return 0;
}

void cli_sampling_finish(struct session_opts *s)
{
	if (s->nevents == 0) {
		events_parse("cpu-clock", &s->events[0]);
		s->nevents = 1;
	}
}

void cli_sampling_usage(FILE *f, size_t max_events)
{
	fprintf(f,
		"  -p, --pid PID          profile an existing process (all its threads, also new ones)\n"
		"  -e, --event EVENT      event to sample (default cpu-clock; see `gotop-perf list`)%s\n"
		"                         {a,b}: a group, each event sampled with its own stacks\n"
		"                         (where b happens); {a,b}:S: a sampled, b read at each of\n"
		"                         its samples (how much b per a: ratio columns)\n"
		"  -F, --freq HZ          samples per second per thread (default 1000)\n"
		"  -c, --count PERIOD     a sample every PERIOD events instead of -F\n"
		"      --stack-size BYTES user stack bytes copied per sample for the repair (default\n"
		"                         %d for Go 1.21 and newer, %d for the rest)\n"
		"      --no-repair        keep the kernel's frame-pointer chains as they are\n"
		"      --no-go            do not read goroutine ids and pprof labels\n"
		"      --no-bpf           (Go) read each sample's goroutine after the sample instead of\n"
		"                         at it (by a BPF program: needs CAP_BPF and CAP_PERFMON)\n"
		"      --label-latency MS (Go, without the BPF program) read each sample's goroutine\n"
		"                         and labels at most about MS ms after the sample (default 4);\n"
		"                         shorter is more exact, at one wakeup per MS\n",
		max_events > 1 ? "; repeatable" : "", REPAIR_STACK_GO, REPAIR_STACK_OTHER);
}

int cli_sampling_option(struct session_opts *s, int c, const char *arg, size_t max_events)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (cli_parse_u64(arg, &v) || v > 0x7fffffff) {
			cli_error("invalid PID '%s'", arg);
			return EXIT_USAGE;
		}
		s->pid = (pid_t)v;
		return 0;
	case 'e':
		if (s->nevents >= max_events || s->nevents >= SESSION_MAX_EVENTS) {
			if (max_events == 1)
				cli_error("one event at a time here (switch events live with the e key)");
			else
				cli_error("at most %zu events", GP_MIN(max_events, (size_t)SESSION_MAX_EVENTS));
			return EXIT_USAGE;
		}
		{
			char why[320];
			int r = events_parse_why(arg, &s->events[s->nevents], why, sizeof(why));

			if (r) {
				char e[400];

				/* The reason quotes the name: escaped like anything typed. */
				if (why[0]) {
					util_escape(e, sizeof(e), why, strlen(why), 1);
					cli_error("%s", e);
				} else {
					util_escape(e, sizeof(e), arg, strlen(arg), 1);
					cli_error("unknown event '%s' (see `gotop-perf list`)", e);
				}
				return r == -EINVAL ? EXIT_USAGE : EXIT_EVENT;
			}
		}
		/* The same event twice would write the same profile twice (aliases too). */
		for (size_t i = 0; i < s->nevents; i++)
			if (!strcmp(s->events[i].name, s->events[s->nevents].name)) {
				cli_error("event '%s' is given twice (as %s)", arg, s->events[i].name);
				return EXIT_USAGE;
			}
		s->nevents++;
		return 0;
	case 'F':
		if (cli_parse_u64(arg, &v) || v > 1000000) {
			cli_error("invalid frequency '%s'", arg);
			return EXIT_USAGE;
		}
		s->use_freq = 1;
		s->freq = v;
		return 0;
	case 'c':
		if (cli_parse_u64(arg, &v)) {
			cli_error("invalid period '%s'", arg);
			return EXIT_USAGE;
		}
		s->use_freq = 0;
		s->period = v;
		return 0;
	case CLI_OPT_STACK:
		if (cli_parse_u64(arg, &v) || v == 0 || v > 65528) {
			cli_error("invalid stack size '%s' (1 to 65528 bytes)", arg);
			return EXIT_USAGE;
		}
		s->stack_size = (uint32_t)((v + 7) & ~7ULL);
		return 0;
	case CLI_OPT_NO_REPAIR:
		s->repair = 0;
		return 0;
	case CLI_OPT_NO_GO:
		s->go = 0;
		return 0;
	case CLI_OPT_NO_BPF:
		s->bpf = 0;
		return 0;
	case CLI_OPT_LATENCY:
		if (cli_parse_u64(arg, &v) || v > 1000) {
			cli_error("invalid label latency '%s' (1 to 1000 ms)", arg);
			return EXIT_USAGE;
		}
		s->label_latency_ms = (unsigned)v;
		return 0;
	default:
		return -1;
	}
}

void cli_display_init(struct cli_display *d)
{
	memset(d, 0, sizeof(*d));
	d->rows = 25;
	d->min_pct = 1.0;
	d->views = "top,tree,labels";
}

int cli_display_filter(struct cli_display *d, enum model_filter_kind kind, const char *key,
		       const char *str, int64_t num)
{
	if (d->nfilters == CLI_MAX_FILTERS) {
		cli_error("at most %d focus options", CLI_MAX_FILTERS);
		return EXIT_USAGE;
	}
	d->filters[d->nfilters].kind = kind;
	d->filters[d->nfilters].key = key;
	d->filters[d->nfilters].str = str;
	d->filters[d->nfilters].num = num;
	d->nfilters++;
	return 0;
}

int cli_display_option(struct cli_display *d, int c, char *arg)
{
	char *end, *eq;
	uint64_t v;

	switch (c) {
	case CLI_OPT_BATCH:
		d->batch = 1;
		return 0;
	case CLI_OPT_VIEW:
		d->views = arg;
		return 0;
	case CLI_OPT_ROWS:
		errno = 0;
		d->rows = strtol(arg, &end, 10);
		if (errno || end == arg || *end || d->rows < 0) {
			cli_error("invalid number of rows '%s'", arg);
			return EXIT_USAGE;
		}
		return 0;
	case CLI_OPT_SORT:
		if (strcmp(arg, "self") && strcmp(arg, "total") && strcmp(arg, "name")) {
			cli_error("invalid sort '%s' (self, total or name)", arg);
			return EXIT_USAGE;
		}
		d->sort = arg;
		return 0;
	case CLI_OPT_MIN_PCT:
		d->min_pct = strtod(arg, &end);
		if (end == arg || *end || !(d->min_pct >= 0) || d->min_pct > 100) {
			cli_error("invalid percentage '%s'", arg);
			return EXIT_USAGE;
		}
		return 0;
	case CLI_OPT_CALLERS:
		d->callers = arg;
		return 0;
	case CLI_OPT_FOCUS:
	case CLI_OPT_IGNORE:
		return cli_display_filter(d, c == CLI_OPT_FOCUS ? MODEL_FOCUS : MODEL_IGNORE, NULL, arg, 0);
	case CLI_OPT_TAG:
		eq = strchr(arg, '=');
		if (!eq || eq == arg) {
			cli_error("invalid --tag '%s' (KEY=VALUE)", arg);
			return EXIT_USAGE;
		}
		*eq = 0;
		/* gotop-perf's thread and goroutine labels are numbers */
		if (!strcmp(arg, "thread") || !strcmp(arg, "goroutine")) {
			if (cli_parse_u64(eq + 1, &v)) {
				cli_error("invalid %s '%s'", arg, eq + 1);
				return EXIT_USAGE;
			}
			return cli_display_filter(d, MODEL_LABEL, arg, NULL, (int64_t)v);
		}
		return cli_display_filter(d, MODEL_LABEL, arg, eq + 1, 0);
	case CLI_OPT_SAVE:
		d->save = arg;
		return 0;
	case CLI_OPT_BASE:
		d->base = arg;
		return 0;
	case 'o':
		d->out_dir = arg;
		return 0;
	case CLI_OPT_NO_COLOR:
		d->no_color = 1;
		return 0;
	case CLI_OPT_ASCII:
		d->ascii = 1;
		return 0;
	case CLI_OPT_WIDTH:
		if (cli_parse_u64(arg, &v) || v < 40 || v > 2000) {
			cli_error("invalid width '%s' (40 to 2000 columns)", arg);
			return EXIT_USAGE;
		}
		d->width = (int)v;
		return 0;
	case CLI_OPT_NAMES:
		if (strcmp(arg, "short") && strcmp(arg, "full")) {
			cli_error("invalid --names '%s' (short or full)", arg);
			return EXIT_USAGE;
		}
		d->names = !strcmp(arg, "short") ? UI_NAMES_SHORT : UI_NAMES_FULL;
		return 0;
	case CLI_OPT_ANNOTATE:
		d->annotate = arg;
		return 0;
	case CLI_OPT_ASM:
		d->annotate_asm = 1;
		return 0;
	case CLI_OPT_SOURCE_PATH:
	case CLI_OPT_TRIM_PATH: {
		const char **list = c == CLI_OPT_SOURCE_PATH ? d->source_paths : d->trim_paths;
		size_t *n = c == CLI_OPT_SOURCE_PATH ? &d->nsource_paths : &d->ntrim_paths;

		if (*n == GP_ARRAY_SIZE(d->source_paths)) {
			cli_error("at most %zu %s options", *n,
				  c == CLI_OPT_SOURCE_PATH ? "--source-path" : "--trim-path");
			return EXIT_USAGE;
		}
		list[(*n)++] = arg;
		return 0;
	}
	default:
		return -1;
	}
}

int cli_display_start(const struct cli_display *d)
{
	int rc;

	if (d->batch && (rc = batch_check_views(d->views)))
		return rc;
	if (d->save && (rc = pprof_check_writable(d->save))) {
		cli_error("cannot write %s: %s", d->save, strerror(-rc));
		return EXIT_FAIL;
	}
	setlocale(LC_ALL, "");
	tl_utf8 = !d->ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	return 0;
}

void cli_display_apply(const struct cli_display *d, struct ui *ui)
{
	size_t i;

	ui->save_dir = d->out_dir;
	ui->batch_rows = (size_t)d->rows;
	ui->batch_min_pct = d->min_pct;
	ui->color = !d->no_color && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (d->batch) {
		/* One long page: every row a view has, and lines as wide as they need. */
		ui->width = 200;
		ui->rows = 1000000;
		if (d->width) {
			ui->width = d->width;
			ui->batch_width = 1;
		}
	}
	if (d->names)
		ui->names = d->names;
	/* The values were checked while parsing: every view option is taken. */
	if (d->sort)
		ui_option(ui, "sort", d->sort);
	if (d->callers)
		ui_option(ui, "callers", d->callers);
	if (d->annotate)
		ui_option(ui, "annotate", d->annotate);
	if (d->annotate_asm)
		ui_option(ui, "asm", NULL);
	for (i = 0; i < d->nsource_paths; i++)
		ui_option(ui, "source-path", d->source_paths[i]);
	for (i = 0; i < d->ntrim_paths; i++)
		ui_option(ui, "trim-path", d->trim_paths[i]);
	for (i = 0; i < d->nfilters; i++)
		ui_add_filter(ui, d->filters[i].kind, d->filters[i].kind == MODEL_LABEL, d->filters[i].key,
			      d->filters[i].key ? strlen(d->filters[i].key) : 0, d->filters[i].str,
			      d->filters[i].str ? strlen(d->filters[i].str) : 0, d->filters[i].num);
}

int cli_display_save(const struct cli_display *d, struct ui *ui)
{
	if (!d->save)
		return EXIT_OK;
	if (ui_save(ui, d->save)) {
		cli_error("%s", ui->status);
		return EXIT_FAIL;
	}
	fprintf(stderr, "gotop-perf: %s\n", ui->status);
	return EXIT_OK;
}

void cli_wrap(FILE *f, const char *text, int indent)
{
	const char *p = text;
	int col = 0;

	while (*p) {
		size_t w = strcspn(p, " ");

		if (col && col + 1 + (int)w > 80) {
			fputc('\n', f);
			col = 0;
		}
		if (!col)
			col = fprintf(f, "%*s", indent, "");
		else
			col += fprintf(f, " ");
		col += fprintf(f, "%.*s", (int)w, p);
		p += w;
		p += strspn(p, " ");
	}
	fputc('\n', f);
}

void cli_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", (unsigned char)*s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
