/* cli.h: what the commands share: exit codes, messages, number parsing, the stop signals,
 * the sampling options of `record` and the live UI, the display options of the live UI and
 * `view` (cli.c), and the commands (main.c's table). */
#ifndef GOTOP_CLI_H
#define GOTOP_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>

#include "gotop/model.h"
#include "gotop/session.h"

/* Exit codes (documented in --help and gotop-perf.1). */
enum {
	EXIT_OK = 0,
	EXIT_FAIL = 1,       /* a run-time failure, e.g. the profile could not be written */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_TARGET = 3,     /* no such process, a kernel thread, or the command failed to start */
	EXIT_PERM = 4,       /* not permitted (perf_event_paranoid, capabilities, ptrace) */
	EXIT_EVENT = 5,      /* the event is unknown or this machine cannot count it */
	EXIT_NOPROF = 6,     /* pprof: the program keeps no such profile (MemProfileRate 0) */
	EXIT_LISTEN = 7,     /* serve: the address cannot be listened on */
};

/* Prints "gotop-perf: <message>" on stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints why a session could not be set up or started; the exit code that says it. */
int cli_session_error(const struct session_err *e);
/* A positive number (decimal, 0x hex or 0 octal), nothing after it; 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *out);
/* Positive seconds, optionally followed by "s"; 0 or -1. */
int cli_parse_seconds(const char *s, double *out);

/* --wall-hz: snapshots of all goroutines per second, above 0 and at most 1000. 0, or -1
 * after saying why. */
int cli_parse_wall_hz(const char *s, double *hz);
/* Writes text's words on lines of at most 80 columns, each indented by indent spaces. */
void cli_wrap(FILE *f, const char *text, int indent);
/* Writes s as a JSON string; s is already free of control characters (util_escape). */
void cli_json_str(FILE *f, const char *s);

/* The stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT; SIGPIPE ignored): the handler sets
 * cli_stop_signal and, when cli_wake_fd is not -1, writes a byte to it (the curses loop's
 * self-pipe, which wakes its poll). */
extern volatile sig_atomic_t cli_stop_signal;
extern volatile sig_atomic_t cli_wake_fd;
void cli_install_signals(void);

/* The sampling options shared by `record` and the live UI: target, event(s), rate, stack
 * copy, Go. They fill a struct session_opts (session_opts_init first). */
enum { CLI_OPT_STACK = 0x200, CLI_OPT_NO_REPAIR, CLI_OPT_NO_GO, CLI_OPT_LATENCY, CLI_OPT_NO_BPF };
#define CLI_SAMPLING_SHORTOPTS "p:e:F:c:"
#define CLI_SAMPLING_LONGOPTS                                                  \
	{ "pid", required_argument, NULL, 'p' },                               \
	{ "event", required_argument, NULL, 'e' },                             \
	{ "freq", required_argument, NULL, 'F' },                              \
	{ "count", required_argument, NULL, 'c' },                             \
	{ "stack-size", required_argument, NULL, CLI_OPT_STACK },              \
	{ "no-repair", no_argument, NULL, CLI_OPT_NO_REPAIR },                 \
	{ "no-go", no_argument, NULL, CLI_OPT_NO_GO },                         \
	{ "label-latency", required_argument, NULL, CLI_OPT_LATENCY },         \
	{ "no-bpf", no_argument, NULL, CLI_OPT_NO_BPF }
/* Usage lines of the shared options (-e says "repeatable" when max_events > 1). */
void cli_sampling_usage(FILE *f, size_t max_events);
/* Handles getopt_long's result c when it is a shared option: 0 when handled, -1 when
 * it is not one of them, or an EXIT_* code after printing why the value is bad. */
int cli_sampling_option(struct session_opts *s, int c, const char *arg, size_t max_events);
/* Defaults what was not given (cpu-clock). */
void cli_sampling_finish(struct session_opts *s);

/* The display options shared by the live UI and `view`: what --batch prints and how, the
 * focus filters, the baseline, where snapshots go. They fill a struct cli_display
 * (cli_display_init first); cli_display_apply hands them to an initialised UI. */
#define CLI_MAX_FILTERS 8
struct ui;
struct cli_display {
	int batch;
	const char *views; /* --view's list */
	long rows;
	const char *sort;
	double min_pct;
	const char *callers;
	const char *save;
	const char *base;
	const char *out_dir;
	int no_color, ascii;
	int width;               /* --width (--batch): lay columns out in this many, 0 unbounded */
	int names;               /* --names: UI_NAMES_SHORT or UI_NAMES_FULL, 0 the default */
	const char *annotate;    /* the Annotate view's function, its mode, and where sources are */
	int annotate_asm;
	const char *source_paths[16], *trim_paths[16];
	size_t nsource_paths, ntrim_paths;
	struct {
		enum model_filter_kind kind;
		const char *key, *str; /* str NULL: the label's value is the number num */
		int64_t num;
	} filters[CLI_MAX_FILTERS];
	size_t nfilters;
};
enum {
	CLI_OPT_BATCH = 0x220, CLI_OPT_VIEW, CLI_OPT_ROWS, CLI_OPT_SORT, CLI_OPT_MIN_PCT,
	CLI_OPT_CALLERS, CLI_OPT_FOCUS, CLI_OPT_IGNORE, CLI_OPT_TAG, CLI_OPT_SAVE, CLI_OPT_BASE,
	CLI_OPT_NO_COLOR, CLI_OPT_ASCII, CLI_OPT_ANNOTATE, CLI_OPT_ASM, CLI_OPT_SOURCE_PATH,
	CLI_OPT_TRIM_PATH, CLI_OPT_WIDTH, CLI_OPT_NAMES,
};
#define CLI_DISPLAY_SHORTOPTS "o:"
#define CLI_DISPLAY_LONGOPTS                                                   \
	{ "batch", no_argument, NULL, CLI_OPT_BATCH },                         \
	{ "view", required_argument, NULL, CLI_OPT_VIEW },                     \
	{ "rows", required_argument, NULL, CLI_OPT_ROWS },                     \
	{ "sort", required_argument, NULL, CLI_OPT_SORT },                     \
	{ "min-pct", required_argument, NULL, CLI_OPT_MIN_PCT },               \
	{ "callers", required_argument, NULL, CLI_OPT_CALLERS },               \
	{ "focus", required_argument, NULL, CLI_OPT_FOCUS },                   \
	{ "ignore", required_argument, NULL, CLI_OPT_IGNORE },                 \
	{ "tag", required_argument, NULL, CLI_OPT_TAG },                       \
	{ "save", required_argument, NULL, CLI_OPT_SAVE },                     \
	{ "base", required_argument, NULL, CLI_OPT_BASE },                     \
	{ "output-dir", required_argument, NULL, 'o' },                        \
	{ "no-color", no_argument, NULL, CLI_OPT_NO_COLOR },                   \
	{ "ascii", no_argument, NULL, CLI_OPT_ASCII },                         \
	{ "annotate", required_argument, NULL, CLI_OPT_ANNOTATE },             \
	{ "asm", no_argument, NULL, CLI_OPT_ASM },                             \
	{ "source-path", required_argument, NULL, CLI_OPT_SOURCE_PATH },       \
	{ "trim-path", required_argument, NULL, CLI_OPT_TRIM_PATH },           \
	{ "width", required_argument, NULL, CLI_OPT_WIDTH },                   \
	{ "names", required_argument, NULL, CLI_OPT_NAMES }
void cli_display_init(struct cli_display *d);
/* As cli_sampling_option, for the display options. */
int cli_display_option(struct cli_display *d, int c, char *arg);
/* Adds a focus filter (a command's own options, e.g. --thread): 0 or EXIT_USAGE. */
int cli_display_filter(struct cli_display *d, enum model_filter_kind kind, const char *key,
		       const char *str, int64_t num);
/* What comes first once the options are parsed: --view's list and --save's file checked,
 * the locale taken (UTF-8 or not, --ascii). 0, or the exit code after saying why. */
int cli_display_start(const struct cli_display *d);
/* Sets what the options say on a UI after ui_init: the views' options through ui_option,
 * the filters, and a page as wide and long as --batch wants. */
void cli_display_apply(const struct cli_display *d, struct ui *ui);
/* The end of --batch: --save writes what the last update showed and says so on stderr.
 * EXIT_OK, or EXIT_FAIL after saying why. */
int cli_display_save(const struct cli_display *d, struct ui *ui);

/* The commands, dispatched by main.c. */
int cmd_record(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_goroutines(int argc, char **argv);
int cmd_pprof(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_view(int argc, char **argv);
/* The live UI (and --batch). */
int cmd_live(int argc, char **argv);
/* The live UI's options, as its --help and gotop-perf --help print them. */
void cmd_live_options(FILE *f);
/* `gotop-perf` alone in a terminal: the process picker, then the live UI on the process
 * chosen (ui/picker.c). */
int cmd_pick(void);

#endif
