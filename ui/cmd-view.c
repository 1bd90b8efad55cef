/* cmd-view.c: `gotop-perf view FILE...`: the live UI's views on pprof files (gotop-perf's
 * own, Go's CPU, heap, allocs, goroutine, mutex and block profiles, several merged), in
 * the terminal or as text with --batch. Each sample type of the files is shown as an
 * event of a fixed snapshot, so `[` and `]` switch between them (inuse_space,
 * alloc_objects, ...) as they switch between the events of a live session. */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/pprof.h"
#include "gotop/util.h"

struct view_cli {
	char **files;
	size_t nfiles;
	const char *sample_index;
	struct cli_display d;
};

enum { OPT_SAMPLE_INDEX = 300, OPT_HELP };

static const struct option long_opts[] = {
	CLI_DISPLAY_LONGOPTS,
	{ "sample-index", required_argument, NULL, OPT_SAMPLE_INDEX },
	{ "help", no_argument, NULL, OPT_HELP },
	{ NULL, 0, NULL, 0 },
};

static void view_usage(FILE *f)
{
	fputs("Usage: gotop-perf view [OPTIONS] [--base FILE] FILE [FILE...]\n"
	      "The live UI's views on pprof files (gzipped or not): gotop-perf's, Go's CPU, heap,\n"
	      "allocs, goroutine, mutex and block profiles; several files of one kind are merged.\n"
	      "[ and ] switch between the sample types (e.g. inuse_space, alloc_objects).\n"
	      "      --base FILE        compare with this profile (Top, Tree, Flame: share then,\n"
	      "                         and the change); B clears it\n"
	      "      --sample-index TYPE  the sample type shown first (default: the file's\n"
	      "                         default, else its last, as go tool pprof)\n"
	      "  -o, --output-dir DIR   where snapshots (S key) are saved\n"
	      "      --focus FUNC, --ignore FUNC, --tag KEY=VALUE   as in the live UI\n"
	      "      --no-color, --ascii\n"
	      "      --batch            print the views as text once, no terminal UI\n"
	      "      --view LIST        views to print (default top,tree,labels)\n"
	      "      --rows N, --sort KEY, --min-pct PCT, --callers FUNC   as in the live UI\n"
	      "      --width COLS, --names short|full   as in the live UI\n"
	      "      --annotate FUNC, --asm, --source-path DIR, --trim-path PREFIX   as in the\n"
	      "                         live UI (the binaries the profile names, found on disk)\n"
	      "      --save FILE        save the shown sample type (.folded: folded stacks, else\n"
	      "                         gzipped pprof)\n", f);
}

/* A flat getopt switch over the options of this command, after the shared ones; files
 * may come anywhere. */
static int parse_args(int argc, char **argv, struct view_cli *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	cli_display_init(&o->d);
	optind = 1;
	while ((c = getopt_long(argc, argv, CLI_DISPLAY_SHORTOPTS, long_opts, NULL)) != -1) {
		int r = cli_display_option(&o->d, c, optarg);

		if (r > 0)
			return r;
		if (r == 0)
			continue;
		switch (c) {
		case OPT_SAMPLE_INDEX:
			o->sample_index = optarg;
			break;
		case OPT_HELP:
			view_usage(stdout);
			exit(EXIT_OK);
		default:
			view_usage(stderr);
			return EXIT_USAGE;
		}
	}
	o->files = argv + optind;
	o->nfiles = (size_t)(argc - optind);
	if (!o->nfiles) {
		cli_error("view: no file given (gotop-perf view FILE...)");
		return EXIT_USAGE;
	}
	if (!o->d.batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
		cli_error("the UI needs a terminal; use --batch for text output");
		return EXIT_USAGE;
	}
	return 0;
}

/* One line on what is wrong with a file that pprof_read_file refused. */
static void file_error(const char *path, int err)
{
	char e[600];

	ui_escape(e, sizeof(e), path, strlen(path));
	if (err == EBADMSG)
		cli_error("%s: not a pprof profile, or a corrupt one", e);
	else if (err == EOVERFLOW)
		cli_error("%s: too large or too many sample types for a pprof profile (at most %d)",
			  e, PROF_MAX_VALUES);
	else
		cli_error("%s: %s", e, strerror(err));
}

static const char *type_name(const struct prof *p, size_t i)
{
	const struct prof_value_type *t;
	size_t n = prof_sample_types(p, &t);
	const char *s = i < n ? prof_string(p, t[i].type, NULL) : NULL;

	return s ? s : "";
}

static const char *unit_name(const struct prof *p, size_t i)
{
	const struct prof_value_type *t;
	size_t n = prof_sample_types(p, &t);
	const char *s = i < n ? prof_string(p, t[i].unit, NULL) : NULL;

	return s ? s : "";
}

/* Whether two profiles have the same sample types, in the same order. */
static int same_types(const struct prof *a, const struct prof *b)
{
	size_t i, n = prof_sample_types(a, NULL);

	if (n != prof_sample_types(b, NULL))
		return 0;
	for (i = 0; i < n; i++)
		if (strcmp(type_name(a, i), type_name(b, i)) || strcmp(unit_name(a, i), unit_name(b, i)))
			return 0;
	return 1;
}

/* Reads and merges the files. NULL after saying why. */
static struct prof *read_files(char **files, size_t n)
{
	struct prof *all = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		struct prof *p = pprof_read_file(files[i]);

		if (!p) {
			file_error(files[i], errno);
			prof_free(all);
			return NULL;
		}
		if (!all) {
			all = p;
			continue;
		}
		if (!same_types(all, p)) {
			char a[600], b[600];

			ui_escape(a, sizeof(a), files[i], strlen(files[i]));
			ui_escape(b, sizeof(b), files[0], strlen(files[0]));
			cli_error("%s: its sample types differ from those of %s: profiles of one kind "
				  "merge (CPU with CPU, heap with heap)", a, b);
			prof_free(p);
			prof_free(all);
			return NULL;
		}
		prof_merge(all, p);
		prof_free(p);
	}
	return all;
}

/* A snapshot holding one event per sample type of p (which it takes). *first gets the
 * index of the type to show first. NULL when sample_index names no type. */
static struct live_snapshot *files_snapshot(struct prof *p, const struct view_cli *o, size_t *first)
{
	struct live_snapshot *s = xcalloc(1, sizeof(*s));
	size_t nt = prof_sample_types(p, NULL), i, len = 0;
	const char *def = prof_string(p, prof_default_sample_type(p), NULL);
	int64_t dur;

	s->refs = 1;
	s->seq = 1;
	s->exited = 1;
	snprintf(s->comm, sizeof(s->comm), "%s", o->files[0]);
	for (i = 0; i < o->nfiles; i++)
		len += strlen(o->files[i]) + 1;
	s->cmdline = xcalloc(1, len + 1);
	for (i = 0; i < o->nfiles; i++) {
		if (i)
			strcat(s->cmdline, " ");
		strcat(s->cmdline, o->files[i]);
	}
	prof_get_time(p, NULL, &dur);
	s->elapsed_ns = dur > 0 ? (uint64_t)dur : 0;
	*first = nt ? nt - 1 : 0;
	if (nt < 1) {
		s->events = xcalloc(1, sizeof(*s->events));
		s->events[s->nevents++] = live_event_new("samples", p);
		snprintf(s->event, sizeof(s->event), "samples");
		*first = 0;
		return s;
	}
	s->events = xcalloc(nt, sizeof(*s->events));
	for (i = 0; i < nt; i++) {
		if (def && *def && !strcmp(def, type_name(p, i)))
			*first = i;
		s->events[s->nevents++] =
			live_event_new(type_name(p, i), live_type_view(p, i, NULL, NULL, NULL));
	}
	if (o->sample_index) {
		for (i = 0; i < nt && strcmp(o->sample_index, type_name(p, i)); i++)
			;
		if (i == nt) {
			prof_free(p);
			live_snapshot_put(s);
			return NULL;
		}
		*first = i;
	}
	snprintf(s->event, sizeof(s->event), "%s", s->events[*first]->name);
	prof_free(p);
	return s;
}

static void setup_ui(struct ui *ui, const struct view_cli *o, struct live_snapshot *s)
{
	ui_init(ui, o->d.batch);
	ui->snap = s;
	ui->snap_seq = s->seq;
	ui->files = s->cmdline;
	cli_display_apply(&o->d, ui);
	ui->ev = live_snapshot_event(s, s->event);
	ui_rebuild(ui);
}

int cmd_view(int argc, char **argv)
{
	struct view_cli o;
	struct live_snapshot *s;
	struct prof *p;
	struct ui ui;
	size_t first;
	int rc;

	rc = parse_args(argc, argv, &o);
	if (rc || (rc = cli_display_start(&o.d)))
		return rc;
	p = read_files(o.files, o.nfiles);
	if (!p)
		return EXIT_FAIL;
	s = files_snapshot(p, &o, &first);
	if (!s) {
		cli_error("no sample type '%s' in the profile", o.sample_index);
		return EXIT_USAGE;
	}
	setup_ui(&ui, &o, s);
	if (o.d.base) {
		struct prof *b = pprof_read_file(o.d.base);
		size_t i, nt;

		if (!b) {
			file_error(o.d.base, errno);
			ui_fini(&ui);
			return EXIT_FAIL;
		}
		/* The base's column of the sample type shown, when it has one by that name. */
		nt = prof_sample_types(b, NULL);
		for (i = 0; i < nt && strcmp(type_name(b, i), ui_viewed_event(&ui)); i++)
			;
		if (i < nt) {
			struct prof *q = live_type_view(b, i, NULL, NULL, NULL);

			prof_free(b);
			b = q;
		}
		ui_base_set(&ui, b, o.d.base);
	}
	if (o.d.batch) {
		batch_print_iteration(&ui, o.d.views, 1);
		rc = cli_display_save(&o.d, &ui);
	} else {
		rc = tui_run(&ui);
	}
	ui_fini(&ui);
	return rc;
}
