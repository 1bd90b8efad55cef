/* ui.h: the live UI's internal interface: text lines, UI state, views and the key table,
 * shared by the curses front end (tui.c) and the plain-text batch mode. */
#ifndef GOTOP_UI_H
#define GOTOP_UI_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/hashmap.h"
#include "gotop/live.h"
#include "gotop/livewall.h"
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

enum { TL_RIGHT = 1, TL_CUT_LEFT = 2, TL_NOCUT = 4 };

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
extern int tl_utf8;      /* the terminal takes UTF-8 (set once at start) */

/* --- actions and reactions --- */

enum ui_action {
	ACT_NONE,
	ACT_QUIT, ACT_HELP, ACT_NEXT_VIEW, ACT_PREV_VIEW,
	ACT_VIEW_TOP, ACT_VIEW_TREE, ACT_VIEW_CALLERS, ACT_VIEW_LABELS, ACT_VIEW_GOROUTINES,
	ACT_VIEW_THREADS, ACT_EVENTS,
	ACT_UP, ACT_DOWN, ACT_PGUP, ACT_PGDN, ACT_HOME, ACT_END,
	ACT_ENTER, ACT_EXPAND, ACT_COLLAPSE, ACT_TOGGLE, ACT_EXPAND_HOT, ACT_COLLAPSE_ALL,
	ACT_SORT, ACT_SORT_SELF, ACT_SORT_TOTAL, ACT_SORT_NAME, ACT_BY_LINE,
	ACT_SEARCH, ACT_FIND_NEXT, ACT_FIND_PREV, ACT_FOCUS, ACT_IGNORE, ACT_UNFOCUS, ACT_POP_FOCUS,
	ACT_CALLERS,
	ACT_PREV_KEY, ACT_NEXT_KEY,
	ACT_PAUSE, ACT_ZERO, ACT_FREQ, ACT_WINDOW, ACT_WINDOW_LEN, ACT_SAVE,
	ACT_EVENT_DATA_PREV, ACT_EVENT_DATA_NEXT, ACT_EVENT_NAME,
	ACT_CLOSE, ACT_REDRAW, ACT_VERIFY,
	ACT_ANNOTATE, ACT_ANNOTATE_MODE,
	ACT_NAMES,
	ACT_VIEW_FLAME, ACT_FRAME_PREV, ACT_FRAME_NEXT, ACT_FRAME_UP, ACT_FRAME_DOWN, ACT_ZOOM,
	ACT_ZOOM_OUT, ACT_BASELINE,
	ACT_GOROUTINE_MODE,
};

enum {
	R_NONE = 0,
	R_REDRAW = 1,            /* draw again */
	R_UPDATE = 2,            /* the current view recomputes its rows */
	R_MODEL = 4,             /* the model is rebuilt (filters, granularity, event) */
	R_QUIT = 8,
};

/* --- views --- */

enum ui_view_id {
	VIEW_TOP, VIEW_TREE, VIEW_CALLERS, VIEW_LABELS, VIEW_GOROUTINES, VIEW_THREADS,
	VIEW_FLAME, VIEW_EVENTS, VIEW_VERIFY, VIEW_HELP, VIEW_ANNOTATE, VIEW_COUNT
};
#define VIEW_TABS 7      /* views 0..6 are in the Tab cycle; events, verifier, help, annotate
			  * are overlays */
#define VB(v) (1u << (v))
#define VB_LISTS (VB(VIEW_TOP) | VB(VIEW_TREE) | VB(VIEW_CALLERS) | VB(VIEW_LABELS) | \
		  VB(VIEW_GOROUTINES) | VB(VIEW_THREADS) | VB(VIEW_FLAME))
#define VB_ALL 0xffffu

struct ui;
struct view;

struct view_ops {
	const char *name;
	const char *batch_name;  /* for --view */
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
	void (*free)(struct view *v);
	int cell_select;         /* the selection is a cell of a row (Flame): rows are not
				  * highlighted whole */
};

struct view {
	const struct view_ops *ops;
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
	/* A group's members (ui/members.c): a model on each member's value column. */
	struct model *xmodel[PROF_MAX_VALUES - 2];
	size_t nxmodel;
	const char *ratio;       /* --ratio NUM/DEN: member NUM's ratio column divides by DEN */

	struct ui_filter filters[UI_MAX_FILTERS];
	size_t nfilters;
	char search[128];
	char event_filter[128];  /* the event picker's filter (/ there): tracepoints show under one */
	char *callers_fn;        /* raw name of the function the Callers view shows */
	size_t callers_len;

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
	struct verifier *verifier; /* the Verifier view's (V), NULL until first switched on */
	pid_t target_pid;
	uint32_t stack_size;     /* the samplers' user-stack bytes: the verifier repairs with as many */
	int kernel;
	const char *save_dir;
	int names;               /* UI_NAMES_*: short or full function names */
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

	/* The wall-clock sampler of a Go target (livewall.h; NULL: off, wall_why says why). */
	struct livewall *wall;
	char wall_why[256];
};

/* Function names: short (fname.h) on the screen, whose columns are narrow, full in
 * --batch (what go tool pprof prints), until the person chooses. */
enum { UI_NAMES_AUTO, UI_NAMES_SHORT, UI_NAMES_FULL };

/* ui.c: state shared by both front ends. */
void ui_init(struct ui *ui, int batch);
void ui_fini(struct ui *ui);
/* Takes a new snapshot when there is one; returns R_* flags describing what changed. */
int ui_refresh(struct ui *ui);
/* Rebuilds the model for the viewed event and the filters; marks views stale. */
void ui_rebuild(struct ui *ui);
void ui_update_view(struct ui *ui, struct view *v);
void ui_header(struct ui *ui, struct tline *l1, struct tline *l2);
void ui_info_line(struct ui *ui, struct tline *l);
void ui_tabs(struct ui *ui, struct tline *l);
void ui_set_status(struct ui *ui, int attr, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Generic handling of an action (movement, views, requests); returns R_* flags. The
 * prompts (search, save, frequency, window) are opened by the front end. */
int ui_action(struct ui *ui, enum ui_action a);
/* Keeps v->sel on the row with v->sel_id after the rows changed. */
void ui_restore_sel(struct ui *ui, struct view *v);
void ui_remember_sel(struct ui *ui, struct view *v);
void ui_clamp(struct ui *ui, struct view *v);
/* Focus filters. */
void ui_add_filter(struct ui *ui, enum model_filter_kind kind, int exact, const char *key,
		   size_t key_len, const char *str, size_t len, int64_t num);
void ui_clear_filters(struct ui *ui);
void ui_remove_label_filter(struct ui *ui, const char *key, size_t key_len);
int ui_has_label_filter(const struct ui *ui, const char *key, size_t key_len, const char *str,
			size_t len, int64_t num);
/* A function's name as the views show it: demangled, short or full (ui->names), escaped.
 * Returns buf. */
const char *ui_fn_name(struct ui *ui, const struct model_fn *f, char *buf, size_t bufsz);
/* The baseline: ui_base_set takes p (NULL clears it); what says where it came from (raw
 * bytes, escaped here). The lookups give a function's self and total value, or a tree
 * node's total (by model_node.id), in the baseline under the current filters, and its
 * total: 0, or -1 when there is no baseline or it lacks them (then 0 values). */
void ui_base_set(struct ui *ui, struct prof *p, const char *what);
int ui_base_fn(struct ui *ui, const struct model_fn *f, int64_t *self, int64_t *total);
int ui_base_node(struct ui *ui, uint64_t id, int64_t *total);
int64_t ui_base_all(struct ui *ui);
/* "  12.5%  +3.1" (then, and the change in points of share) in buf; its attribute. */
int ui_base_delta(char *buf, size_t n, int64_t now, int64_t now_all, int64_t then, int64_t then_all,
		  int have);
/* Fills buf with a safe, escaped copy of target bytes. */
const char *ui_esc(struct ui *ui, char *buf, size_t bufsz, const char *s, size_t len);
/* Formats a percentage of total in 6 columns ("100.0%", " 12.5%", "  0.0%"). */
void ui_pct(char *buf, size_t n, int64_t part, int64_t total);
int ui_pct_attr(int64_t part, int64_t total);
/* The event data being viewed (NULL when it has no samples yet). */
const char *ui_viewed_event(const struct ui *ui);
/* The callers view's function: set from the selection of Top or the tree. */
void ui_set_callers_fn(struct ui *ui, const char *name, size_t len);
/* The function with the most self value under the focus, or -1. */
long ui_hottest_fn(struct ui *ui);
/* The function under the selection of a function view, or -1. */
long ui_selected_fn(struct ui *ui, struct view *v);
/* Default snapshot path (caller frees) and the save itself (message in status). */
char *ui_default_save_path(struct ui *ui);
int ui_save(struct ui *ui, const char *path);
/* Requests. */
void ui_request(struct ui *ui, enum live_req_kind kind, const struct event_spec *ev, uint64_t value);

/* Views. */
extern const struct view_ops view_top_ops, view_tree_ops, view_callers_ops, view_labels_ops,
	view_goroutines_ops, view_threads_ops, view_events_ops, view_verify_ops, view_help_ops,
	view_annotate_ops, view_flame_ops;
/* The Goroutines view's "all goroutines now" mode (view-goroutines.c), its Wall mode
 * (view-wall.c), and the switch between them and the on-CPU shares (mode: UI_GMODE_*;
 * -1 goes to the next one). R_* flags. */
extern const struct view_ops view_goroutines_all_ops, view_goroutines_wall_ops;
enum { UI_GMODE_CPU, UI_GMODE_ALL, UI_GMODE_WALL, UI_GMODES };
int ui_goroutines_mode(struct ui *ui, int mode);

/* view-wall.c: wall time per value of a label key, for the Labels view's columns. A
 * goroutine's state falls in one of three classes: running (on a thread), runnable
 * (waiting for one: runnable or preempted), waiting (any other state: a wait reason,
 * syscall). */
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
	const struct livewall_data *d, *base; /* held until the next build or free; base: the
					       * copy the window starts at (NULL: none) */
	struct ui_wall_split *v, rest; /* rest: the samples without the key */
	size_t n;
	struct hashmap idx;      /* hash of a value (+ probe) -> index + 1 */
};
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
/* Switches the verifier on (creating it for the target) or off; R_* flags. */
int ui_verify_toggle(struct ui *ui);

/* Batch helpers: the Top view's sort order by name ("self", "total", "name"); the
 * Labels view's key. 0, or -1 when unknown. */
int view_top_set_sort(struct view *v, const char *name);
void view_labels_set_key(struct view *v, const char *key, size_t len);
/* The label keys of the last update (borrowed, valid until the next update). */
size_t view_labels_keys(struct view *v, const struct model_key **keys);
/* The Annotate view's function (raw name bytes, copied), mode (1: assembly), and source
 * search options (--source-path when trim is 0, --trim-path; path borrowed for the run). */
void view_annotate_set_fn(struct view *v, const char *name, size_t len);
const char *view_annotate_fn(struct view *v);
void view_annotate_set_asm(struct view *v, int on);
void view_annotate_add_path(struct view *v, int trim, const char *path);
/* Asks the worker to sample another event (a perf name); the answer goes to the status. */
void ui_switch_event(struct ui *ui, const char *name);

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

/* --- batch (cmd-live.c) and curses (tui.c) --- */
/* Batch output (cmd-live.c, also for `view`): one update of the views in the
 * comma-separated list; whether a list names only known views (EXIT_USAGE after saying
 * which is not, else 0). */
void batch_print_iteration(struct ui *ui, const char *views, uint64_t iter, int callers_fixed);
int batch_check_views(const char *list);
/* Runs the curses UI until q or a signal; returns an exit code. */
int tui_run(struct ui *ui);

/* ui/members.c: the columns of a group's members (an event "{a,b,c}"). Rebuilds the
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
void ui_member_cells(struct ui *ui, struct tline *l, int64_t lead, const int64_t *x);

#endif
