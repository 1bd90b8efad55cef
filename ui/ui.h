/* ui.h: the live UI's internal interface: text lines, UI state, views and the key table,
 * shared by the curses front end (tui.c) and the plain-text batch mode. */
#ifndef GOTOP_UI_H
#define GOTOP_UI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/hashmap.h"
#include "gotop/live.h"
#include "gotop/model.h"

/* --- text lines with attributes (no curses here: tui.c maps attributes to colours) --- */

enum ui_attr {
	UA_NORMAL, UA_DIM, UA_HEAD, UA_TITLE, UA_HOT, UA_WARM, UA_MATCH, UA_MARK, UA_TREE,
	UA_OK, UA_ERR, UA_TAB, UA_TAB_ON, UA_KEY, UA_STATE,
	UA_FL0, UA_FL1, UA_FL2, UA_FL3, UA_FL_SEL, /* flame graph frames by package, the selected */
	UA_COUNT
};

#define TL_MAX 4096
#define TL_SEGS 32

struct tline {
	char buf[TL_MAX];
	size_t len;
	int cols;                /* display columns used */
	int nseg;
	struct { uint16_t start; uint8_t attr; } seg[TL_SEGS];
};

/* TL_CUT_NAME: a function name too wide loses its left end (package, receiver) first, cut
 * where a package path element or a name part starts when the rest still fits, so that
 * what stays is whole: "…(*Manager).Run", never "…ometheus/dis". */
enum { TL_RIGHT = 1, TL_CUT_LEFT = 2, TL_NOCUT = 4, TL_CUT_NAME = 8 };

void tl_reset(struct tline *l);
/* Appends text that is already safe to print (escaped or our own). */
void tl_put(struct tline *l, int attr, const char *s);
void tl_printf(struct tline *l, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Appends s in exactly width columns (padded, or cut with a marker); with TL_NOCUT,
 * width is a minimum. */
void tl_field(struct tline *l, int attr, const char *s, int width, int flags);
/* Appends bytes from the target, escaped (control characters never reach the terminal). */
void tl_untrusted(struct tline *l, int attr, const char *s, size_t len, int width, int flags);
/* util_escape for this terminal (UTF-8 or not), also neutralizing Unicode bidi
 * controls. Returns strlen(dst). Every string from the target goes through it. */
size_t ui_escape(char *dst, size_t dstsz, const char *src, size_t len);
/* Pads with spaces up to `cols` columns. */
void tl_pad(struct tline *l, int cols);
/* Bytes of s[0..n) that fit in maxcols columns (whole characters); *cols gets the
 * columns they take. */
size_t tl_fit(const char *s, size_t n, int maxcols, int *cols);
/* Display columns of a safe string. */
int tl_width(const char *s);
/* A column of a table laid out to the screen's width, as htop and perf top lay theirs out:
 * numbers keep their width, the names share the rest. */
struct tl_col {
	int min;  /* never narrower (0 with want 0: the column is left out) */
	int want; /* its widest cell or header: never wider */
	int prio; /* columns of a lower prio are narrowed first (labels before names) */
	int w;    /* its width, laid out */
};
/* Lays out n columns, gap columns apart, in width columns: each as wide as it wants when
 * all fit, else those of the lowest prio that can give narrowed first, the widest of them
 * first, one column at a time, never below their min. Returns the columns the table
 * takes. */
int tl_cols(struct tl_col *c, int n, int gap, int width);
extern int tl_utf8;      /* the terminal takes UTF-8 (set once at start) */

/* --- the views: one table (htop's screens, tmux's modes) --- */

/* Every view, one row V(id, ops, name, batch name, key, help, flags): the view VIEW_<id>
 * drawn by ops, named name in the tabs and in --batch's sections and batch name in --view;
 * key shows it from anywhere, with the help screen's line "name: help" (0 and "": no such
 * key, e.g. an overlay opened by a key of the table in keys.c where the bar wants it, or
 * Annotate, opened at a function); flags UI_VIEW_TAB: in the Tab cycle, numbered by its
 * key. A view with further modes (m cycles through them) has one row M(id, ops, batch
 * name) for each after its own. The --view list and its error, the tabs, the help screen,
 * the bottom bar and the view switching are all made from this table. */
#define UI_VIEWS(V, M)                                                                           \
	V(TOP, view_top_ops, "Top", "top", '1', "flat list of functions", UI_VIEW_TAB)           \
	V(TREE, view_tree_ops, "Tree", "tree", '2', "top-down call tree", UI_VIEW_TAB)           \
	V(CALLERS, view_callers_ops, "Callers", "callers", '3',                                  \
	  "who calls the selected function (bottom-up)", UI_VIEW_TAB)                           \
	V(LABELS, view_labels_ops, "Labels", "labels", '4', "shares by pprof label value",       \
	  UI_VIEW_TAB)                                                                           \
	V(GOROUTINES, view_goroutines_ops, "Goroutines", "goroutines", '5',                      \
	  "shares by start function and labels (Go targets)", UI_VIEW_TAB)                       \
	M(GOROUTINES, view_goroutines_all_ops, "goroutines-all")                                 \
	M(GOROUTINES, view_goroutines_wall_ops, "goroutines-wall")                               \
	V(THREADS, view_threads_ops, "Threads", "threads", '6', "shares by thread", UI_VIEW_TAB)  \
	V(FLAME, view_flame_ops, "Flame", "flame", '7',                                          \
	  "icicle graph, each frame as wide as its total share", UI_VIEW_TAB)                    \
	V(EVENTS, view_events_ops, "Events", "events", 0, "", 0)                                 \
	V(VERIFY, view_verify_ops, "Verifier", "verify", 0, "", 0)                               \
	V(HELP, view_help_ops, "Help", "help", 0, "", 0)                                         \
	V(ANNOTATE, view_annotate_ops, "Annotate", "annotate", 0, "", 0)

enum { UI_VIEW_TAB = 1 };

#define UI_VIEW_ENUM_(id, ops, name, batch, key, help, flags) VIEW_##id,
#define UI_VIEW_NONE_(...)
enum ui_view_id { UI_VIEWS(UI_VIEW_ENUM_, UI_VIEW_NONE_) VIEW_COUNT };

#define VB(v) (1u << (v))
#define UI_VIEW_TABBIT_(id, ops, name, batch, key, help, flags) \
	| (((flags) & UI_VIEW_TAB) ? VB(VIEW_##id) : 0u)
/* The views of the Tab cycle, and every view. */
#define VB_LISTS (0u UI_VIEWS(UI_VIEW_TABBIT_, UI_VIEW_NONE_))
#define VB_ALL 0xffffu

struct view_ops;
#define UI_VIEW_EXTERN_(id, ops, ...) extern const struct view_ops ops;
#define UI_MODE_EXTERN_(id, ops, batch) extern const struct view_ops ops;
UI_VIEWS(UI_VIEW_EXTERN_, UI_MODE_EXTERN_)

/* A row of the table (views.c): a view, or a further mode of one. */
struct ui_view_def {
	enum ui_view_id id;
	const struct view_ops *ops;
	const char *name;
	const char *batch_name;
	int key;
	unsigned flags;
};
/* The table's rows in its order, and how many. */
const struct ui_view_def *ui_view_defs(size_t *n);
/* The row whose batch name is name, or NULL. */
const struct ui_view_def *ui_view_by_name(const char *name);
/* Whether the view is one of the Tab cycle's (not an overlay). */
int ui_view_is_tab(enum ui_view_id id);
/* The batch names, as --view's help and error list them ("top, tree, ..."). */
const char *ui_view_names(void);
/* The view's name, as its tab says it. */
const char *ui_view_name(enum ui_view_id id);

/* --- actions and reactions --- */

enum ui_action {
	ACT_NONE,
	ACT_QUIT, ACT_NEXT_VIEW, ACT_PREV_VIEW, ACT_NEXT_MODE,
	ACT_UP, ACT_DOWN, ACT_PGUP, ACT_PGDN, ACT_HOME, ACT_END,
	ACT_ENTER, ACT_EXPAND, ACT_COLLAPSE, ACT_TOGGLE, ACT_EXPAND_HOT, ACT_COLLAPSE_ALL,
	ACT_SORT, ACT_BY_LINE,
	ACT_SEARCH, ACT_FIND_NEXT, ACT_FIND_PREV, ACT_FOCUS, ACT_IGNORE, ACT_UNFOCUS, ACT_POP_FOCUS,
	ACT_CALLERS,
	ACT_PREV_KEY, ACT_NEXT_KEY,
	ACT_PAUSE, ACT_ZERO, ACT_FREQ, ACT_WINDOW, ACT_WINDOW_LEN, ACT_SAVE,
	ACT_EVENT_DATA_PREV, ACT_EVENT_DATA_NEXT, ACT_EVENT_NAME,
	ACT_CLOSE, ACT_REDRAW,
	ACT_ANNOTATE, ACT_ANNOTATE_MODE,
	ACT_NAMES,
	ACT_FRAME_PREV, ACT_FRAME_NEXT, ACT_FRAME_UP, ACT_FRAME_DOWN, ACT_ZOOM, ACT_ZOOM_OUT,
	ACT_BASELINE,
	ACT_SHOW_IDLE, ACT_GROUP_BY, ACT_FOCUS_LABELS,
	ACT_COUNT,
};
/* Shows view id (its key, or a key of the table bound to it). */
#define ACT_VIEW(id) ((enum ui_action)(ACT_COUNT + (id)))

enum {
	R_NONE = 0,
	R_REDRAW = 1,            /* draw again */
	R_UPDATE = 2,            /* the current view recomputes its rows */
	R_MODEL = 4,             /* the model is rebuilt (filters, granularity, event) */
	R_QUIT = 8,
	R_CLOSE = 16,            /* the overlay shown is done: back to the view it came from */
};

/* --- views --- */

struct ui;
struct view;

/* The section printer of --batch (batch.c): "== title ==", the view's title line, rows. */
typedef void ui_section_fn(struct ui *ui, struct view *v, const char *title);

struct view_ops {
	void (*update)(struct ui *ui, struct view *v);
	size_t (*nrows)(struct ui *ui, struct view *v);
	uint64_t (*row_id)(struct ui *ui, struct view *v, size_t i);
	/* The line above the rows (column names, or the key chooser of Labels). */
	void (*title)(struct ui *ui, struct view *v, struct tline *l);
	void (*row)(struct ui *ui, struct view *v, size_t i, struct tline *l);
	/* View-specific actions; returns R_* flags (R_NONE also when not handled). */
	int (*action)(struct ui *ui, struct view *v, enum ui_action a);
	/* A message shown instead of rows when there are none, or NULL. */
	const char *(*empty)(struct ui *ui, struct view *v);
	/* The function (model index) under the selection, or -1. */
	long (*selected_fn)(struct ui *ui, struct view *v);
	/* The view is about to be shown (a key, Tab, --batch): what it needs first (the
	 * Verifier starts, Callers picks a function); R_* flags. */
	int (*enter)(struct ui *ui, struct view *v);
	/* A display option of the command line by its name (sort, callers, annotate, asm,
	 * source-path, trim-path, verify; value NULL for a switch): 0 when the view took it,
	 * 1 when it is not the view's, -1 when the value is bad (the status says why). */
	int (*option)(struct ui *ui, struct view *v, const char *name, const char *value);
	/* Opens the view at a function (raw name bytes, copied): Callers, Annotate. */
	void (*open_at)(struct ui *ui, struct view *v, const char *name, size_t len);
	/* --batch: prints the view through section, once or more (Labels: a section per
	 * key); NULL: one section named after the view. */
	void (*batch)(struct ui *ui, struct view *v, ui_section_fn *section);
	void (*free)(struct view *v);
	/* What the view says of its data beyond its rows (a reader's counts, the split of
	 * wall time by state), or NULL: at the end of the info line on the screen, after
	 * the column names of its title line in --batch. */
	void (*info)(struct ui *ui, struct view *v, struct tline *l);
	int cell_select;         /* the selection is a cell of a row (Flame): rows are not
				  * highlighted whole */
};

struct view {
	const struct view_ops *ops;
	const struct ui_view_def *def; /* its row in the table: the mode shown */
	enum ui_view_id id;
	size_t sel, top;
	uint64_t sel_id;
	int have_sel_id;
	int moved;               /* the person moved the selection: it follows its row; else
				  * it stays on the first row as the data changes (like top) */
	int stale;
	void *priv;
};

/* A focus filter as the person set it (strings owned, so it outlives snapshots; bytes
 * with their lengths, NUL-terminated too: label keys and values may hold NUL bytes). */
struct ui_filter {
	enum model_filter_kind kind;
	int exact;
	char *key;
	char *str;
	size_t key_len, str_len;
	int64_t num;
};

#define UI_MAX_FILTERS 16

struct ui {
	int batch;
	int width;               /* columns of a line (batch: very wide) */
	int rows;                /* lines available to view rows */
	int utf8, color;
	size_t batch_rows;       /* batch: rows per view (0: all) */
	double batch_min_pct;    /* batch: tree nodes below this share are left out */

	struct live *live;
	struct live_snapshot *snap;
	uint64_t snap_seq;
	char viewed[EVENT_NAME_MAX]; /* the event looked at ("" = the one being sampled) */
	const struct live_event *ev;
	struct model *model;
	const struct prof *model_prof;
	int by_line;
	/* A group's members (ui/group-columns.c): a model on each member's value column. */
	struct model *xmodel[PROF_MAX_VALUES - 2];
	size_t nxmodel;
	const char *ratio;       /* --ratio NUM/DEN: member NUM's ratio column divides by DEN */

	struct ui_filter filters[UI_MAX_FILTERS];
	size_t nfilters;
	char search[128];
	char event_filter[128];  /* the event picker's filter (/ there): tracepoints show under one */

	struct view views[VIEW_COUNT];
	enum ui_view_id cur, back;   /* back: where an overlay returns to */

	char status[400];
	int status_attr;
	uint64_t status_ns;
	uint64_t wait_seq;       /* the request whose answer goes to the status line */

	/* Target facts for the header and the default snapshot name. */
	int spawned;
	int target_status;       /* exit status of a command we started, -1 unknown */
	uint64_t freq_default;
	unsigned window_len;     /* seconds used when the decaying window is switched on */
	struct verifier *verifier; /* the session's, for the Verifier view (V): NULL until
				    * first switched on */
	const struct session_goroutines *goroutines; /* the latest snapshot of every goroutine
						      * taken from the session (sources.c) */
	pid_t target_pid;
	uint32_t stack_size;     /* the samplers' user-stack bytes: the verifier repairs with as many */
	int kernel;
	const char *save_dir;
	int names;               /* UI_NAMES_*: short or full function names */
	int batch_width;         /* --batch --width: lines at most ui->width columns where a
				  * view lays its columns out (ui_table_width) */
	const char *files;       /* `view`: the pprof files shown (no live session), else NULL */

	/* The baseline (B, --base): a profile the views compare with, its model under the
	 * same filters, and what they look up in it (ui_base_*). */
	struct prof *base_prof;
	struct model *base_model;
	char base_what[300];     /* escaped: "the screen at 12:03:04", a file name */
	uint64_t base_sig;       /* the filters the lookups below were made under */
	int64_t *base_self, *base_total; /* per function of base_model */
	size_t base_nfn;
	struct hashmap base_nodes; /* node id -> total + 1 in the baseline's tree */
	struct model_totals base_tot;

	/* The session's wall-clock sampler of a Go target runs (0: off, wall_why says why). */
	int wall;
	char wall_why[256];
	/* The Wall mode's choices, kept across modes: the goroutines idle all along shown
	 * too (a, --wall-idle), grouped by start function first (b, --wall-by start). */
	int wall_idle, wall_by_start;
};

/* Function names: short (fname.h) on the screen, whose columns are narrow, full in
 * --batch (what go tool pprof prints), until the person chooses. */
enum { UI_NAMES_AUTO, UI_NAMES_SHORT, UI_NAMES_FULL };

/* ui.c: the state both front ends share: snapshots, the model of the viewed event, the
 * status line, requests, and what every view formats with. */
void ui_init(struct ui *ui, int batch);
void ui_fini(struct ui *ui);
/* Takes a new snapshot when there is one; returns R_* flags describing what changed. */
int ui_refresh(struct ui *ui);
/* Rebuilds the model for the viewed event and the filters; marks views stale. */
void ui_rebuild(struct ui *ui);
void ui_set_status(struct ui *ui, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The event data being viewed (NULL when it has no samples yet). */
const char *ui_viewed_event(const struct ui *ui);
/* Asks the worker for a change (pause, zero, frequency, window, event); the answer goes to
 * the status line. */
void ui_request(struct ui *ui, enum live_req_kind kind, const struct event_spec *ev, uint64_t value);
/* A function's name as the views show it: demangled, short or full (ui->names), escaped.
 * Returns buf. ui_name: the same from a name's raw bytes (a goroutine reader's frame, a
 * start function label); every view names a function through one of the two. */
const char *ui_fn_name(struct ui *ui, const struct model_fn *f, char *buf, size_t bufsz);
const char *ui_name(struct ui *ui, const char *name, size_t len, char *buf, size_t bufsz);
/* Whether function names are short now: the screen's default, --batch's full (x, --names). */
int ui_short_names(const struct ui *ui);
/* The width a view lays its columns out in (tl_cols): the screen's, --width's in --batch,
 * else unbounded (--batch prints every cell whole). */
int ui_table_width(const struct ui *ui);
/* A cell of a table laid out by tl_cols (cols[0..n), UI_GAP apart): s (safe text) in
 * column k after the gap (none at the start of a line), cut to its width (flags as tl_field's;
 * TL_CUT_NAME for a function), the table's last column on the screen (and in --batch
 * --width) as wide as the line allows. Nothing for a column left out. ui_cell_pre: the
 * cell starts with pre in pre_attr (a tree's "+ " or "- "), which is never cut. */
#define UI_GAP 2
void ui_cell(struct ui *ui, struct tline *l, const struct tl_col *cols, int n, int k, int attr,
	     const char *s, int flags);
void ui_cell_pre(struct ui *ui, struct tline *l, const struct tl_col *cols, int n, int k,
		 const char *pre, int pre_attr, int attr, const char *s, int flags);
/* Where a goroutine waits, shown as WHERE by the Goroutines views: from its stack's
 * functions given innermost first (inlined ones too), the first of the program
 * (fname_go_kind), else the first of the standard library outside the machinery that
 * parks goroutines, else, for the runtime's own goroutines, the outermost frame but
 * runtime.goexit (its start function). Frames are named by an index of the caller's. */
struct ui_where {
	int kind;        /* the kind of best, -1: none yet */
	long best, last; /* -1: none */
};
void ui_where_init(struct ui_where *w);
void ui_where_add(struct ui_where *w, long idx, const char *name, size_t len);
/* The index of the frame to show, or -1 (no frame). */
long ui_where_pick(const struct ui_where *w);
/* Fills buf with a safe, escaped copy of target bytes. */
const char *ui_esc(struct ui *ui, char *buf, size_t bufsz, const char *s, size_t len);
/* Formats a percentage of total in 6 columns ("100.0%", " 12.5%", "  0.0%"). */
void ui_pct(char *buf, size_t n, int64_t part, int64_t total);
int ui_pct_attr(int64_t part, int64_t total);

/* views.c: the table of views, showing them, their modes and options, the selection. */
/* Sets up every view in its first mode, Top shown (ui_init); frees them (ui_fini). */
void ui_views_init(struct ui *ui);
void ui_views_free(struct ui *ui);
/* Shows view id: an overlay remembers the view to go back to; the view's enter op runs
 * and its rows are made when stale. R_* flags. */
int ui_show_view(struct ui *ui, enum ui_view_id id);
/* Back from an overlay to the view it was opened from. R_* flags. */
int ui_close_overlay(struct ui *ui);
/* Shows mode def (a row of the table) in its view; NULL: the view's next mode. R_* flags. */
int ui_view_mode(struct ui *ui, enum ui_view_id id, const struct ui_view_def *def);
/* Hands a display option to the views (view_ops.option): 0 when one took it, -1 when
 * the value is bad (the status says why) or no view knows the option. */
int ui_option(struct ui *ui, const char *name, const char *value);
/* Shows view id at a function (raw name bytes). R_* flags. */
int ui_open_at(struct ui *ui, enum ui_view_id id, const char *name, size_t len);
/* The tab line: the views of the Tab cycle, and the overlay shown. */
void ui_tabs(struct ui *ui, struct tline *l);
/* Remakes v's rows and keeps its selection on the same row. */
void ui_update_view(struct ui *ui, struct view *v);
/* Keeps v->sel on the row with v->sel_id after the rows changed. */
void ui_restore_sel(struct ui *ui, struct view *v);
void ui_remember_sel(struct ui *ui, struct view *v);
void ui_clamp(struct ui *ui, struct view *v);
/* Starts v at its first row again, following the top (a new function, key or mode). */
void ui_reset_sel(struct view *v);
/* The function under the selection of a function view, or -1. */
long ui_selected_fn(struct ui *ui, struct view *v);
/* The function with the most self value under the focus, or -1. */
long ui_hottest_fn(struct ui *ui);

/* actions.c: what an action does (one function each, htop Action.c); the view's own go to
 * its ops. R_* flags. The prompts (search, save, frequency, window) are opened by the
 * front end. */
int ui_action(struct ui *ui, enum ui_action a);

/* focus.c: focus filters, as the model takes them and as the info line shows them. */
void ui_add_filter(struct ui *ui, enum model_filter_kind kind, int exact, const char *key,
		   size_t key_len, const char *str, size_t len, int64_t num);
void ui_clear_filters(struct ui *ui);
/* Removes the last filter added. */
void ui_pop_filter(struct ui *ui);
void ui_remove_label_filter(struct ui *ui, const char *key, size_t key_len);
int ui_has_label_filter(const struct ui *ui, const char *key, size_t key_len, const char *str,
			size_t len, int64_t num);
/* The filters as the model takes them (f holds UI_MAX_FILTERS); returns how many. */
size_t ui_model_filters(const struct ui *ui, struct model_filter *f);
/* A hash of the filters: equal filters, equal hashes. Never 0. */
uint64_t ui_filters_sig(const struct ui *ui);
/* "-main.f*", "handler=api": filter i as the info line shows it (escaped). */
void ui_filter_text(const struct ui *ui, size_t i, char *buf, size_t n);
/* Whether a goroutine or wall sample with these labels passes the label focus filters
 * with string values, those on key skip aside (skip NULL: none): for each key filtered,
 * one of its values (model.h's rule). label(arg, key, klen, &len) gives the sample's value
 * of a key, or NULL. Numeric filters (thread, goroutine) are left out. */
int ui_labels_pass(const struct ui *ui, const char *(*label)(void *arg, const char *key,
							       size_t klen, size_t *len),
		   void *arg, const char *skip, size_t skip_len);

/* baseline.c: the baseline (B, --base): ui_base_set takes p (NULL clears it); what says
 * where it came from (raw bytes, escaped here). The lookups give a function's self and
 * total value, or a tree node's total (by model_node.id), in the baseline under the
 * current filters, and its total: 0, or -1 when there is no baseline or it lacks them
 * (then 0 values). */
void ui_base_set(struct ui *ui, struct prof *p, const char *what);
int ui_base_fn(struct ui *ui, const struct model_fn *f, int64_t *self, int64_t *total);
int ui_base_node(struct ui *ui, uint64_t id, int64_t *total);
int64_t ui_base_all(struct ui *ui);
/* "  12.5%  +3.1" (then, and the change in points of share) in buf; its attribute. */
int ui_base_delta(char *buf, size_t n, int64_t now, int64_t now_all, int64_t then, int64_t then_all,
		  int have);

/* header.c: the lines above the view: the target and the sampling (two), the data shown. */
void ui_header(struct ui *ui, struct tline *l1, struct tline *l2);
void ui_info_line(struct ui *ui, struct tline *l);

/* save.c: the default snapshot path (caller frees) and the save itself (message in the
 * status line): gzipped pprof, or folded stacks for a name ending in .folded. */
char *ui_default_save_path(struct ui *ui);
int ui_save(struct ui *ui, const char *path);

/* sources.c: what the views need beyond the live session's snapshots, asked of the
 * session, which owns and runs every source (session.h). The session of the live UI (NULL
 * for `view`, which shows files). */
struct session *ui_session(struct ui *ui);
/* Every goroutine of the target into *res, as the session's source read it (at the
 * refresh before on the screen, now in --batch; valid until the next call or ui_fini):
 * 0, or -errno with why (-ENODEV: no reader, the target is none or not Go; -EINPROGRESS
 * none read yet; -ESRCH gone; -EAGAIN not started). */
struct gosnap_result;
struct sym_frame;
int ui_goroutines_now(struct ui *ui, struct gosnap_result *res, char *why, size_t n);
/* The frames of a goroutine's pc (up to n, innermost first), as the source named them. */
int ui_goroutines_frames(struct ui *ui, uint64_t pc, struct sym_frame *f, int n);
/* Switches the session's verifier on (the session makes it at the first call) or off; the
 * status says how it went. R_* flags. */
int ui_verifier_switch(struct ui *ui);
/* Lets go of what the UI holds of the sources (ui_fini, after the views). */
void ui_sources_free(struct ui *ui);

/* view-events.c: asks the worker to sample another event (a perf name); the answer goes
 * to the status. */
void ui_switch_event(struct ui *ui, const char *name);

/* wall.c: wall time of a Go target's goroutines, for the Goroutines view's Wall mode and
 * the Labels view's columns. A goroutine's state falls in one of three classes: running
 * (on a thread), runnable (waiting for one: runnable or preempted), waiting (any other
 * state: a wait reason, syscall). */
enum { UI_WALL_RUNNING, UI_WALL_RUNNABLE, UI_WALL_WAITING, UI_WALL_CLASSES };
int ui_wall_class(const char *state, size_t len);
#define UI_WALL_REASONS 8
struct ui_wall_reason {
	uint32_t state;          /* string id of the state label's value */
	int64_t ns;
};
struct ui_wall_split {
	const char *val;         /* the label value (borrowed from the data's profile) */
	size_t len;
	int64_t ns[UI_WALL_CLASSES], total;
	struct ui_wall_reason reasons[UI_WALL_REASONS]; /* waiting, by reason (the first ones) */
	size_t nreasons;
};
struct ui_wall_splits {
	const struct session_wall *d, *base; /* held until the next build or free; base: the
					       * copy the window starts at (NULL: none) */
	struct ui_wall_split *v, rest; /* rest: the samples without the key */
	size_t n;
	struct hashmap idx;      /* hash of a value (+ probe) -> index + 1 */
};
/* The latest wall-clock data and (*base) the copy the live window starts at (NULL: none);
 * NULL without data. Held: session_wall_put both. */
const struct session_wall *ui_wall_data(struct ui *ui, const struct session_wall **base);
/* The samples of data d with wall time in the window (d's values less base's), under the
 * label focus filters except those on key skip (NULL: none). */
struct ui_wall_iter {
	const struct prof *p;    /* d's profile */
	const int64_t *cur, *base;
	size_t cs, bs, bn, i;
	uint32_t skey;           /* the state label's key (string id; 0: none) */
	const char *skip;
	size_t skip_len;
	int64_t full;            /* what a goroutine parked at every snapshot of the window
				  * counts (session_wall.wall_ns, less the base's) */
};
void ui_wall_iter_init(struct ui_wall_iter *it, const struct session_wall *d,
		       const struct session_wall *base, const char *skip, size_t skip_len);
/* The next sample: its index and sample, its wall time in the window and its state (the
 * string id of its state label's value); 1, or 0 at the end. */
int ui_wall_next(const struct ui *ui, struct ui_wall_iter *it, size_t *idx, struct prof_sample *s,
		 int64_t *ns, uint32_t *state);
/* How many goroutines a sample of the window stands for when each of them waited, in
 * state class cls, at every snapshot of the window (its wall time a whole multiple of
 * it.full): idle all along, the background loops that wait the whole time. 0 when any
 * ran, was runnable, or came or went within the window. */
int64_t ui_wall_idle(const struct ui_wall_iter *it, int64_t ns, int cls);
/* Adds ns of wall time in state (string id in p) to a split. */
void ui_wall_split_add(struct ui_wall_split *sp, const struct prof *p, uint32_t state, int64_t ns);
/* Splits the wall time of the latest data (within the live window when one is on) by the
 * values of key, under the label focus filters except those on key (model_label_values'
 * rule). 0, or -1 without data. */
int ui_wall_splits_build(struct ui *ui, struct ui_wall_splits *ws, const char *key, size_t klen);
void ui_wall_splits_free(struct ui_wall_splits *ws);
/* A value's split (val NULL: the samples without the key), or NULL. */
const struct ui_wall_split *ui_wall_split_find(const struct ui_wall_splits *ws, const char *val,
					       size_t len);
void ui_wall_top_reasons(const struct ui_wall_split *sp, struct ui_wall_reason top[2]);
/* The columns RUN% RUNQ% WAIT% (shares of the value's wall time) and its top two waits
 * (TOP WAITS, in --batch and on screens 120 columns wide or more):
 * headers, and a row's cells (sp NULL: no wall time; p: the data's profile). */
void ui_wall_title_cells(struct ui *ui, struct tline *l);
void ui_wall_cells(struct ui *ui, struct tline *l, const struct ui_wall_split *sp,
		   const struct prof *p);
/* --- keys (keys.c) --- */

struct ui_key {
	int key;                 /* curses key code or character */
	enum ui_action action;
	const char *keyname;     /* as shown in help and the bar; NULL: same row as the previous */
	const char *help;
	unsigned views;          /* VB() bits where the key works */
	const char *bar;         /* short label for the bottom bar, or NULL */
};
const struct ui_key *ui_keys(size_t *n);
/* The action of key in view, or ACT_NONE. */
enum ui_action ui_key_action(int key, enum ui_view_id view);
/* The help screen as lines (for the help view and --batch --view help). */
size_t ui_help_nlines(void);
void ui_help_line(size_t i, struct tline *l);
/* The bottom bar for a view. */
void ui_key_bar(struct ui *ui, struct tline *l);

/* --- the front ends: plain text (batch.c) and curses (tui.c) --- */
/* One update of the views in the comma-separated list as text on stdout (--batch of the
 * live UI and `view`), iteration iter. */
void batch_print_iteration(struct ui *ui, const char *views, uint64_t iter);
/* Whether a list names only views of the table: 0, or EXIT_USAGE after saying which
 * does not. */
int batch_check_views(const char *list);
/* Runs the curses UI until q or a signal; returns an exit code. */
int tui_run(struct ui *ui);

/* picker.c: the list of processes `gotop-perf` opens in a terminal without arguments:
 * scanned again each refresh (procs.h), filtered, its rows as text lines for tui_pick. */
struct picker;
struct picker *picker_new(void);
void picker_free(struct picker *pk);
/* Reads the processes again; 0 or -errno (/proc unreadable). */
int picker_scan(struct picker *pk);
/* Keeps the rows whose name, command, pid or Go version holds f (raw bytes). */
void picker_set_filter(struct picker *pk, const char *f);
const char *picker_filter(const struct picker *pk);
size_t picker_nrows(const struct picker *pk);
/* Whether row i is a process (not the line before the other programs); its pid (0: none);
 * whether it is a Go program. */
int picker_selectable(const struct picker *pk, size_t i);
pid_t picker_pid(const struct picker *pk, size_t i);
int picker_is_go(const struct picker *pk, size_t i);
/* The columns laid out in width (tl_cols), once per scan or filter; then the lines. */
void picker_layout(struct picker *pk, int width);
void picker_header(struct picker *pk, int width, struct tline *l1, struct tline *l2);
void picker_info(struct picker *pk, struct tline *l);
void picker_title(struct picker *pk, int width, struct tline *l);
void picker_row(struct picker *pk, size_t i, int width, struct tline *l);
/* The picker in the terminal until Enter (*pid the process chosen), q or a signal (*pid
 * 0); the terminal restored. An exit code. */
int tui_pick(struct ui *ui, struct picker *pk, pid_t *pid);

/* ui/group-columns.c: the columns of a group's members (an event "{a,b,c}"). Rebuilds the
 * member models with the main model's filters (ui_rebuild); frees them (ui_fini). */
void ui_members_rebuild(struct ui *ui, const struct model_filter *f, size_t nf);
void ui_members_free(struct ui *ui);
/* Member k's column header (its name) and the header of its ratio column into head. */
void ui_member_heads(struct ui *ui, size_t k, char *head, size_t hn, char *ratio, size_t rn);
/* Member k's ratio for a row whose event value is lead and members' values are x[]:
 * per ms of CPU (a clock leader), IPC (cycles and instructions), per 1000 instructions
 * (an instructions leader or member), else per event. "-" when the divisor is 0. For a
 * group whose members sample on their own ({a,b}, not {a,b}:S): x[k]'s share of the
 * member's total under the filters instead. */
void ui_member_ratio(struct ui *ui, size_t k, int64_t lead, const int64_t *x, char *buf, size_t n);
/* The members' columns as views show them, UI_MEMBER_W wide each: in a title line the
 * headers, in a row each member's value x[k] and its ratio (ui_member_ratio). */
#define UI_MEMBER_W 12
void ui_member_title_cells(struct ui *ui, struct tline *l);
/* The columns the members' cells take in a line: a value and a ratio each, or the value
 * alone for the heap profile's alloc_rate (a rate, whose share says little). */
int ui_member_cols(const struct ui *ui);
void ui_member_cells(struct ui *ui, struct tline *l, int64_t lead, const int64_t *x);

/* memory.c: a sample type of the target's heap profile in the views (live_event.mem):
 * whether one is viewed; the head of its value column ("BYTES", "OBJECTS"); the value in
 * 9 columns (exact in --batch); the baseline's value and the growth since in buf (then
 * and the change, in the unit), and its attribute. */
int ui_mem_viewed(const struct ui *ui);
const char *ui_mem_head(const struct ui *ui);
void ui_mem_value(struct ui *ui, struct tline *l, int64_t v);
int ui_mem_growth(struct ui *ui, char *buf, size_t n, int64_t now, int64_t then, int have);
/* A rate column's value (alloc_rate): exact in --batch, "1.5M/s" on the screen. */
void ui_mem_rate(struct ui *ui, char *buf, size_t n, int64_t bytes_per_s);

#endif
