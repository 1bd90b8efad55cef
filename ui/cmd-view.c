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
#include <langinfo.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/pprof.h"
#include "gotop/util.h"

#define MAX_OPT_FILTERS 8

struct view_cli {
	char **files;
	size_t nfiles;
	const char *sample_index;
	const char *base;
	int batch;
	const char *views;
	long rows;
	const char *sort;
	double min_pct;
	const char *callers;
	const char *save;
	const char *out_dir;
	int no_color, ascii;
	struct { enum model_filter_kind kind; const char *key, *str; } filters[MAX_OPT_FILTERS];
	size_t nfilters;
};

enum {
	OPT_BATCH = 300, OPT_VIEW, OPT_ROWS, OPT_SORT, OPT_MIN_PCT, OPT_CALLERS, OPT_FOCUS,
	OPT_IGNORE, OPT_TAG, OPT_SAVE, OPT_NO_COLOR, OPT_ASCII, OPT_SAMPLE_INDEX, OPT_HELP,
	OPT_BASE,
};

static const struct option long_opts[] = {
	{ "batch", no_argument, NULL, OPT_BATCH },
	{ "view", required_argument, NULL, OPT_VIEW },
	{ "rows", required_argument, NULL, OPT_ROWS },
	{ "sort", required_argument, NULL, OPT_SORT },
	{ "min-pct", required_argument, NULL, OPT_MIN_PCT },
	{ "callers", required_argument, NULL, OPT_CALLERS },
	{ "focus", required_argument, NULL, OPT_FOCUS },
	{ "ignore", required_argument, NULL, OPT_IGNORE },
	{ "tag", required_argument, NULL, OPT_TAG },
	{ "save", required_argument, NULL, OPT_SAVE },
	{ "output-dir", required_argument, NULL, 'o' },
	{ "sample-index", required_argument, NULL, OPT_SAMPLE_INDEX },
	{ "base", required_argument, NULL, OPT_BASE },
	{ "no-color", no_argument, NULL, OPT_NO_COLOR },
	{ "ascii", no_argument, NULL, OPT_ASCII },
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
	      "      --save FILE        save the shown sample type (.folded: folded stacks, else\n"
	      "                         gzipped pprof)\n", f);
}

static int add_filter(struct view_cli *o, enum model_filter_kind kind, const char *key,
		      const char *str)
{
	if (o->nfilters == MAX_OPT_FILTERS) {
		cli_error("at most %d focus options", MAX_OPT_FILTERS);
		return EXIT_USAGE;
	}
	o->filters[o->nfilters].kind = kind;
	o->filters[o->nfilters].key = key;
	o->filters[o->nfilters].str = str;
	o->nfilters++;
	return 0;
}

/* A flat getopt switch, one case per option of long_opts; files may come anywhere. */
static int parse_args(int argc, char **argv, struct view_cli *o)
{
	int c, r;

	memset(o, 0, sizeof(*o));
	o->rows = 25;
	o->min_pct = 1.0;
	o->views = "top,tree,labels";
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:", long_opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case OPT_BATCH:
			o->batch = 1;
			break;
		case OPT_VIEW:
			o->views = optarg;
			break;
		case OPT_ROWS:
			errno = 0;
			o->rows = strtol(optarg, &end, 10);
			if (errno || *end || o->rows < 0) {
				cli_error("invalid number of rows '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_SORT:
			if (strcmp(optarg, "self") && strcmp(optarg, "total") && strcmp(optarg, "name")) {
				cli_error("invalid sort '%s' (self, total or name)", optarg);
				return EXIT_USAGE;
			}
			o->sort = optarg;
			break;
		case OPT_MIN_PCT:
			o->min_pct = strtod(optarg, &end);
			if (*end || !(o->min_pct >= 0) || o->min_pct > 100) {
				cli_error("invalid percentage '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_CALLERS:
			o->callers = optarg;
			break;
		case OPT_FOCUS:
		case OPT_IGNORE:
			r = add_filter(o, c == OPT_FOCUS ? MODEL_FOCUS : MODEL_IGNORE, NULL, optarg);
			if (r)
				return r;
			break;
		case OPT_TAG: {
			char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg) {
				cli_error("invalid --tag '%s' (KEY=VALUE)", optarg);
				return EXIT_USAGE;
			}
			*eq = 0;
			r = add_filter(o, MODEL_LABEL, optarg, eq + 1);
			if (r)
				return r;
			break;
		}
		case OPT_SAVE:
			o->save = optarg;
			break;
		case 'o':
			o->out_dir = optarg;
			break;
		case OPT_SAMPLE_INDEX:
			o->sample_index = optarg;
			break;
		case OPT_BASE:
			o->base = optarg;
			break;
		case OPT_NO_COLOR:
			o->no_color = 1;
			break;
		case OPT_ASCII:
			o->ascii = 1;
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
	if (!o->batch && (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))) {
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

/* The column that counts what sample type t measures: the "count" column of the same
 * kind (inuse_objects for inuse_space, alloc_objects for alloc_space, samples for cpu,
 * contentions for delay), else t itself. */
static size_t count_col(const struct prof *p, size_t t)
{
	size_t i, n = prof_sample_types(p, NULL);
	const char *tn = type_name(p, t), *us = strchr(tn, '_');
	size_t any = t;
	int found = 0;

	if (!strcmp(unit_name(p, t), "count"))
		return t;
	for (i = 0; i < n; i++) {
		if (strcmp(unit_name(p, i), "count"))
			continue;
		if (us && !strncmp(type_name(p, i), tn, (size_t)(us - tn) + 1))
			return i;
		if (!found) {
			any = i;
			found = 1;
		}
	}
	return any;
}

/* The view of sample type t: a copy of p whose value columns are (count, t), which is
 * what the model reads (column 0 counts, column 1 is the value shown). */
static struct prof *type_view(const struct prof *p, size_t t)
{
	const struct prof_value_type *types;
	size_t nt = prof_sample_types(p, &types), stride, i, c = count_col(p, t);
	const int64_t *v = prof_values(p, &stride);
	struct prof *q;
	struct prof_value_type vt[2];
	int64_t *old;

	(void)nt;
	old = v ? xmalloc(prof_nsamples(p) * stride * sizeof(*old)) : NULL;
	if (old)
		memcpy(old, v, prof_nsamples(p) * stride * sizeof(*old));
	q = prof_clone(p);
	vt[0] = types[c];
	vt[1] = types[t];
	prof_set_sample_types(q, vt, 2);
	for (i = 0; i < prof_nsamples(q); i++) {
		int64_t nv[2] = { old[i * stride + c], old[i * stride + t] };

		prof_set_sample_values(q, i, nv);
	}
	free(old);
	return q;
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
		s->events[s->nevents++] = live_event_new(type_name(p, i), type_view(p, i));
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
	size_t i;

	ui_init(ui, o->batch);
	ui->snap = s;
	ui->snap_seq = s->seq;
	ui->files = s->cmdline;
	ui->save_dir = o->out_dir;
	ui->batch_rows = (size_t)o->rows;
	ui->batch_min_pct = o->min_pct;
	ui->color = !o->no_color && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (o->sort)
		view_top_set_sort(&ui->views[VIEW_TOP], o->sort);
	if (o->callers)
		ui_set_callers_fn(ui, o->callers, strlen(o->callers));
	for (i = 0; i < o->nfilters; i++)
		ui_add_filter(ui, o->filters[i].kind, o->filters[i].kind == MODEL_LABEL, o->filters[i].key,
			      o->filters[i].key ? strlen(o->filters[i].key) : 0, o->filters[i].str,
			      strlen(o->filters[i].str), 0);
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
	if (rc)
		return rc;
	if (o.batch && (rc = batch_check_views(o.views)))
		return rc;
	if (o.save && (rc = pprof_check_writable(o.save))) {
		cli_error("cannot write %s: %s", o.save, strerror(-rc));
		return EXIT_FAIL;
	}
	setlocale(LC_ALL, "");
	tl_utf8 = !o.ascii && !strcmp(nl_langinfo(CODESET), "UTF-8");
	p = read_files(o.files, o.nfiles);
	if (!p)
		return EXIT_FAIL;
	s = files_snapshot(p, &o, &first);
	if (!s) {
		cli_error("no sample type '%s' in the profile", o.sample_index);
		return EXIT_USAGE;
	}
	setup_ui(&ui, &o, s);
	if (o.base) {
		struct prof *b = pprof_read_file(o.base);
		size_t i, nt;

		if (!b) {
			file_error(o.base, errno);
			ui_fini(&ui);
			return EXIT_FAIL;
		}
		/* The base's column of the sample type shown, when it has one by that name. */
		nt = prof_sample_types(b, NULL);
		for (i = 0; i < nt && strcmp(type_name(b, i), ui_viewed_event(&ui)); i++)
			;
		if (i < nt) {
			struct prof *q = type_view(b, i);

			prof_free(b);
			b = q;
		}
		ui_base_set(&ui, b, o.base);
	}
	if (o.batch) {
		ui.width = 200;
		ui.rows = 1000000;
		batch_print_iteration(&ui, o.views, 1, o.callers != NULL);
		rc = EXIT_OK;
		if (o.save) {
			if (ui_save(&ui, o.save)) {
				cli_error("%s", ui.status);
				rc = EXIT_FAIL;
			} else {
				fprintf(stderr, "gotop-perf: %s\n", ui.status);
			}
		}
	} else {
		cli_install_signals();
		rc = tui_run(&ui);
	}
	ui_fini(&ui);
	return rc;
}
