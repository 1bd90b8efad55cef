/* keys.c: the one key table: what each key does in which view; the help screen and the
 * bottom bar are generated from it (tmux key-bindings.c, htop Action.c). The keys that
 * show a view come from the table of views (UI_VIEWS in ui.h), spliced in here. */
#include "config.h"
#include "ui.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "gotop/util.h"

#define CTRL(c) ((c) & 0x1f)
#define V_OVERLAYS ((VB(VIEW_COUNT) - 1) & ~VB_LISTS) /* the views outside the Tab cycle */
#define V_FUNCS (VB(VIEW_TOP) | VB(VIEW_TREE) | VB(VIEW_CALLERS) | VB(VIEW_FLAME))
#define V_TREES (VB(VIEW_TREE) | VB(VIEW_CALLERS))
#define V_FACETS (VB(VIEW_LABELS) | VB(VIEW_GOROUTINES) | VB(VIEW_THREADS))

/* A view's key from the table of views: shows it from anywhere; its help line names it. */
#define VIEW_KEY_(id, ops, name, batch, key, help, flags) \
	{ (key) ? (key) : -1, ACT_VIEW(VIEW_##id), (key) ? (const char[]){ (key), 0 } : NULL, \
	  name ": " help, (key) ? VB_ALL : 0, NULL },
#define NO_KEY_(id, ops, batch)

/* The views' names, for the help screen (from the table here: keys-man links no view). */
#define VIEW_NAME_(id, ops, name, ...) [VIEW_##id] = name,
static const char *const view_names[VIEW_COUNT] = { UI_VIEWS(VIEW_NAME_, NO_KEY_) };

/* First match wins: entries for a view come before the general ones. */
static const struct ui_key keys[] = {
	/* Overlays: the help screen, the event picker, the verifier, Annotate. */
	{ 'q', ACT_CLOSE, "q Esc", "close this screen", V_OVERLAYS, "Close" },
	{ 27, ACT_CLOSE, NULL, NULL, V_OVERLAYS, NULL },
	{ KEY_F(10), ACT_CLOSE, NULL, NULL, V_OVERLAYS, NULL },
	{ 'h', ACT_CLOSE, NULL, NULL, VB(VIEW_HELP), NULL },
	{ '?', ACT_CLOSE, NULL, NULL, VB(VIEW_HELP), NULL },
	{ KEY_F(1), ACT_CLOSE, NULL, NULL, VB(VIEW_HELP), NULL },
	{ '\n', ACT_ENTER, "Enter", "sample this event from now on (data is kept per event)", VB(VIEW_EVENTS), "Switch" },
	{ '\r', ACT_ENTER, NULL, NULL, VB(VIEW_EVENTS), NULL },
	{ KEY_ENTER, ACT_ENTER, NULL, NULL, VB(VIEW_EVENTS), NULL },
	{ ':', ACT_EVENT_NAME, ":", "type an event name (e.g. a raw rNNNN)", VB(VIEW_EVENTS), "Name" },
	{ '/', ACT_SEARCH, "/", "filter the events by substring (tracepoints are listed under a filter)", VB(VIEW_EVENTS), "Filter" },
	{ '\t', ACT_ANNOTATE_MODE, "Tab A", "source lines / assembly", VB(VIEW_ANNOTATE), "Asm" },
	{ 'A', ACT_ANNOTATE_MODE, NULL, NULL, VB(VIEW_ANNOTATE), NULL },
	{ '\n', ACT_TOGGLE, "Enter", "show / hide the code inlined at the line", VB(VIEW_ANNOTATE), "Inlined" },
	{ '\r', ACT_TOGGLE, NULL, NULL, VB(VIEW_ANNOTATE), NULL },
	{ KEY_ENTER, ACT_TOGGLE, NULL, NULL, VB(VIEW_ANNOTATE), NULL },
	{ 'n', ACT_FIND_NEXT, "n N", "next / previous hot line or instruction", VB(VIEW_ANNOTATE), "Next hot" },
	{ 'N', ACT_FIND_PREV, NULL, NULL, VB(VIEW_ANNOTATE), NULL },
	{ 'V', ACT_TOGGLE, "V", "switch the verifier on / off (its counts are kept)", VB(VIEW_VERIFY), "On/off" },

	/* Everywhere. */
	{ 'q', ACT_QUIT, "q F10", "quit", VB_ALL, "Quit" },
	{ KEY_F(10), ACT_QUIT, NULL, NULL, VB_ALL, NULL },
	{ 'h', ACT_VIEW(VIEW_HELP), "h ? F1", "help (this screen)", VB_ALL, "Help" },
	{ '?', ACT_VIEW(VIEW_HELP), NULL, NULL, VB_ALL, NULL },
	{ KEY_F(1), ACT_VIEW(VIEW_HELP), NULL, NULL, VB_ALL, NULL },
	{ '\t', ACT_NEXT_VIEW, "Tab S-Tab", "next / previous view", VB_ALL, "View" },
	{ KEY_BTAB, ACT_PREV_VIEW, NULL, NULL, VB_ALL, NULL },
	UI_VIEWS(VIEW_KEY_, NO_KEY_)
	{ 'm', ACT_NEXT_MODE, "m", "Goroutines: on-CPU shares / all goroutines now / wall time by state",
	  VB(VIEW_GOROUTINES), "Mode" },
	{ 'a', ACT_SHOW_IDLE, "a", "Goroutines' Wall mode: also the goroutines idle all along (hidden at first: the background loops that wait the whole window)",
	  VB(VIEW_GOROUTINES), NULL },
	{ 'b', ACT_GROUP_BY, "b", "Goroutines' Wall mode: by stack and state / by start function (Enter: its stacks)",
	  VB(VIEW_GOROUTINES), NULL },
	{ 'f', ACT_FOCUS_LABELS, "f", "Goroutines: focus on the selected row's labels (on-CPU shares: as Enter)",
	  VB(VIEW_GOROUTINES), NULL },

	/* Flame: frames, not rows. */
	{ KEY_LEFT, ACT_FRAME_PREV, "Left Right", "previous / next frame of the level", VB(VIEW_FLAME), NULL },
	{ KEY_RIGHT, ACT_FRAME_NEXT, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ KEY_UP, ACT_FRAME_UP, "Up Down k j", "caller / widest callee", VB(VIEW_FLAME), NULL },
	{ 'k', ACT_FRAME_UP, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ KEY_DOWN, ACT_FRAME_DOWN, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ 'j', ACT_FRAME_DOWN, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ '\n', ACT_ZOOM, "Enter", "zoom into the frame (it takes the full width)", VB(VIEW_FLAME), "Zoom" },
	{ '\r', ACT_ZOOM, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ KEY_ENTER, ACT_ZOOM, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ KEY_BACKSPACE, ACT_ZOOM_OUT, "Backspace", "zoom out", VB(VIEW_FLAME), "Out" },
	{ 127, ACT_ZOOM_OUT, NULL, NULL, VB(VIEW_FLAME), NULL },
	{ CTRL('h'), ACT_ZOOM_OUT, NULL, NULL, VB(VIEW_FLAME), NULL },

	{ KEY_UP, ACT_UP, "Up Down k j", "move the selection", VB_ALL, NULL },
	{ 'k', ACT_UP, NULL, NULL, VB_ALL, NULL },
	{ KEY_DOWN, ACT_DOWN, NULL, NULL, VB_ALL, NULL },
	{ 'j', ACT_DOWN, NULL, NULL, VB_ALL, NULL },
	{ KEY_PPAGE, ACT_PGUP, "PgUp PgDn", "page up / down", VB_ALL, NULL },
	{ KEY_NPAGE, ACT_PGDN, NULL, NULL, VB_ALL, NULL },
	{ CTRL('b'), ACT_PGUP, NULL, NULL, VB_ALL, NULL },
	{ CTRL('f'), ACT_PGDN, NULL, NULL, VB_ALL, NULL },
	{ KEY_HOME, ACT_HOME, "Home End g G", "first / last row", VB_ALL, NULL },
	{ 'g', ACT_HOME, NULL, NULL, VB_ALL, NULL },
	{ KEY_END, ACT_END, NULL, NULL, VB_ALL, NULL },
	{ 'G', ACT_END, NULL, NULL, VB_ALL, NULL },

	/* Trees. */
	{ '\n', ACT_TOGGLE, "Enter Space", "expand / collapse the node", V_TREES, "Expand" },
	{ '\r', ACT_TOGGLE, NULL, NULL, V_TREES, NULL },
	{ KEY_ENTER, ACT_TOGGLE, NULL, NULL, V_TREES, NULL },
	{ ' ', ACT_TOGGLE, NULL, NULL, V_TREES, NULL },
	{ KEY_RIGHT, ACT_EXPAND, "Right + l", "expand", V_TREES, NULL },
	{ '+', ACT_EXPAND, NULL, NULL, V_TREES, NULL },
	{ 'l', ACT_EXPAND, NULL, NULL, V_TREES, NULL },
	{ KEY_LEFT, ACT_COLLAPSE, "Left -", "collapse (or go to the parent)", V_TREES, NULL },
	{ '-', ACT_COLLAPSE, NULL, NULL, V_TREES, NULL },
	{ 'E', ACT_EXPAND_HOT, "E *", "expand the hottest path below the selection (to where the time is spent)", V_TREES, "Hot path" },
	{ '*', ACT_EXPAND_HOT, NULL, NULL, V_TREES, NULL },
	{ 'C', ACT_COLLAPSE_ALL, "C", "collapse all", V_TREES, NULL },

	/* Top. */
	{ '\n', ACT_CALLERS, "Enter", "callers of the selected function (as c)", VB(VIEW_TOP), "Callers" },
	{ '\r', ACT_CALLERS, NULL, NULL, VB(VIEW_TOP), NULL },
	{ KEY_ENTER, ACT_CALLERS, NULL, NULL, VB(VIEW_TOP), NULL },
	{ 's', ACT_SORT, "s F6", "sort by self, total, name (selection kept)", VB(VIEW_TOP), "Sort" },
	{ KEY_F(6), ACT_SORT, NULL, NULL, VB(VIEW_TOP), NULL },
	{ '>', ACT_SORT, NULL, NULL, VB(VIEW_TOP), NULL },
	{ 'L', ACT_BY_LINE, "L", "functions or source lines", VB(VIEW_TOP), NULL },

	/* Function views. */
	{ 'c', ACT_CALLERS, "c", "callers of the selected function (bottom-up)", V_FUNCS, NULL },
	{ 'a', ACT_ANNOTATE, "a", "annotate the selected function: self and total per source line and instruction", V_FUNCS, "Annotate" },
	{ 'f', ACT_FOCUS, "f", "focus on the selected function (like pprof -focus)", V_FUNCS, "Focus" },
	{ 'i', ACT_IGNORE, "i", "ignore the selected function (like pprof -ignore)", V_FUNCS, NULL },

	/* Labels, goroutines, threads. */
	{ '\n', ACT_ENTER, "Enter f", "focus Top and Tree on the selected value (a goroutine group: list its ids)", V_FACETS, "Focus" },
	{ '\r', ACT_ENTER, NULL, NULL, V_FACETS, NULL },
	{ KEY_ENTER, ACT_ENTER, NULL, NULL, V_FACETS, NULL },
	{ 'f', ACT_ENTER, NULL, NULL, V_FACETS, NULL },
	{ KEY_LEFT, ACT_PREV_KEY, "Left Right", "previous / next label key", VB(VIEW_LABELS), "Key" },
	{ KEY_RIGHT, ACT_NEXT_KEY, NULL, NULL, VB(VIEW_LABELS), NULL },

	/* Search and focus. */
	{ '/', ACT_SEARCH, "/ F3", "search functions by substring", VB_LISTS, "Search" },
	{ KEY_F(3), ACT_SEARCH, NULL, NULL, VB_LISTS, NULL },
	{ 'n', ACT_FIND_NEXT, "n N", "next / previous match", VB_LISTS, NULL },
	{ 'N', ACT_FIND_PREV, NULL, NULL, VB_LISTS, NULL },
	{ 27, ACT_CLOSE, "Esc", "clear the search", VB_LISTS, NULL },
	{ 'u', ACT_UNFOCUS, "u", "remove every focus", VB_LISTS, NULL },
	{ KEY_BACKSPACE, ACT_POP_FOCUS, "Backspace", "remove the last focus", VB_LISTS, NULL },
	{ 127, ACT_POP_FOCUS, NULL, NULL, VB_LISTS, NULL },
	{ CTRL('h'), ACT_POP_FOCUS, NULL, NULL, VB_LISTS, NULL },

	/* Sampling. */
	{ 'e', ACT_VIEW(VIEW_EVENTS), "e", "event picker: what this machine can count; switch live", VB_ALL, "Event" },
	{ 'V', ACT_VIEW(VIEW_VERIFY), "V", "Verifier: how often FP stacks are wrong, per function (ptrace + libunwind)", VB_ALL, "Verify" },
	{ '[', ACT_EVENT_DATA_PREV, "[ ]", "the previous / next event's data, or the Go heap profile's sample types",
	  VB_ALL, NULL },
	{ ']', ACT_EVENT_DATA_NEXT, NULL, NULL, VB_ALL, NULL },
	{ 'F', ACT_FREQ, "F", "change the sampling frequency (Hz)", VB_ALL, NULL },
	{ 'p', ACT_PAUSE, "p", "pause / resume sampling", VB_ALL, "Pause" },
	{ 'z', ACT_ZERO, "z R", "zero the counts (every event)", VB_ALL, "Zero" },
	{ 'R', ACT_ZERO, NULL, NULL, VB_ALL, NULL },
	{ 'w', ACT_WINDOW, "w", "cumulative / decaying window (last N seconds)", VB_ALL, "Window" },
	{ 'W', ACT_WINDOW_LEN, "W", "set the window length in seconds", VB_ALL, NULL },
	{ 'S', ACT_SAVE, "S P", "save a snapshot (gzipped pprof)", VB_ALL, "Save" },
	{ 'P', ACT_SAVE, NULL, NULL, VB_ALL, NULL },
	{ 'B', ACT_BASELINE, "B", "mark what is on screen as the baseline (Top, Tree, Flame, Labels show the change against it); B again: clear", VB_ALL, NULL },
	{ 'x', ACT_NAMES, "x", "short / full function names (short: as pprof shortens them)", VB_ALL, NULL },
	{ CTRL('l'), ACT_REDRAW, "Ctrl-L", "redraw the screen", VB_ALL, NULL },
};

const struct ui_key *ui_keys(size_t *n)
{
	*n = GP_ARRAY_SIZE(keys);
	return keys;
}

enum ui_action ui_key_action(int key, enum ui_view_id view)
{
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(keys); i++)
		if (keys[i].key == key && (keys[i].views & VB(view)))
			return keys[i].action;
	return ACT_NONE;
}

/* The views a key works in, for its help line: the views' names, "all views" for the
 * Tab cycle's, nothing for every view. */
static const char *views_text(unsigned v, char *buf, size_t n)
{
	size_t k = 0;
	int i;

	buf[0] = 0;
	if ((v & VB_ALL) == VB_ALL)
		return buf;
	if (v == VB_LISTS)
		return "all views";
	for (i = 0; i < VIEW_COUNT && k < n; i++)
		if (v & VB(i))
			k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? ", " : "",
					      view_names[i]);
	return buf;
}

/* Help entries are the table rows that carry a key name. */
static const struct ui_key *help_entry(size_t i)
{
	size_t k, seen = 0;

	for (k = 0; k < GP_ARRAY_SIZE(keys); k++) {
		if (!keys[k].keyname)
			continue;
		if (seen++ == i)
			return &keys[k];
	}
	return NULL;
}

size_t ui_help_nlines(void)
{
	size_t k, n = 0;

	for (k = 0; k < GP_ARRAY_SIZE(keys); k++)
		n += keys[k].keyname != NULL;
	return n;
}

void ui_help_line(size_t i, struct tline *l)
{
	const struct ui_key *k = help_entry(i);
	char buf[160];
	const char *v;

	tl_reset(l);
	if (!k)
		return;
	tl_field(l, UA_KEY, k->keyname, 16, 0);
	tl_put(l, UA_NORMAL, " ");
	tl_put(l, UA_NORMAL, k->help);
	v = views_text(k->views, buf, sizeof(buf));
	if (*v)
		tl_printf(l, UA_DIM, "  [%s]", v);
}

void ui_key_bar(struct ui *ui, struct tline *l)
{
	size_t k, j;

	tl_reset(l);
	for (k = 0; k < GP_ARRAY_SIZE(keys); k++) {
		char key[16];
		int need, dup = 0;

		if (!keys[k].bar || !(keys[k].views & VB(ui->cur)))
			continue;
		/* A label shown once, for the first entry that applies. */
		for (j = 0; j < k; j++)
			if (keys[j].bar && (keys[j].views & VB(ui->cur)) && !strcmp(keys[j].bar, keys[k].bar))
				dup = 1;
		if (dup || (ui_key_action(keys[k].key, ui->cur) != keys[k].action))
			continue;
		snprintf(key, sizeof(key), "%s", keys[k].keyname ? keys[k].keyname : "?");
		{
			char *sp = strchr(key, ' ');

			if (sp)
				*sp = 0;
		}
		need = tl_width(key) + 1 + tl_width(keys[k].bar) + 1;
		if (l->cols + need > ui->width)
			break;
		tl_put(l, UA_KEY, key);
		tl_put(l, UA_NORMAL, " ");
		tl_put(l, UA_TAB, keys[k].bar);
		tl_put(l, UA_NORMAL, " ");
	}
	tl_pad(l, ui->width);
}
