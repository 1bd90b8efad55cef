/* tui.c: the curses front end: the event loop (keys, snapshots, signals), drawing once
 * per turn the rows that changed (wnoutrefresh/doupdate), prompts, colours, restoring the
 * terminal on every way out (htop CRT.c, tmux server_client_loop). */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <curses.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/util.h"

#define MIN_COLS 80
#define MIN_LINES 24
#define CHROME_LINES 7           /* header 2, tabs, info, title, status, key bar */
#define STATUS_NS (10ULL * 1000000000ULL)

static int curses_on;
static int sig_pipe[2] = { -1, -1 };
static chtype attrs[UA_COUNT];
static chtype sel_attr, titlebar_attr;

static void shown_free(void);

static void tui_restore(void)
{
	if (curses_on) {
		curses_on = 0;
		endwin();
	}
	shown_free();
}

#ifndef __SANITIZE_ADDRESS__
static void on_crash(int sig)
{
	/* Not async-signal-safe, but the process is going down: a usable terminal
	 * matters more (htop CRT.c does the same). */
	tui_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}
#endif

/* The stop signals wake the loop through the self-pipe; a crash restores the terminal. */
static void install_signals(void)
{
	cli_wake_fd = sig_pipe[1];
	cli_install_signals();
#ifndef __SANITIZE_ADDRESS__
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_crash;
	sa.sa_flags = SA_RESETHAND;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGFPE, &sa, NULL);
	sigaction(SIGILL, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);
#endif
}

enum { P_NORMAL = 1, P_DIM, P_TITLE, P_HOT, P_WARM, P_MATCH, P_MARK, P_TREE, P_OK, P_ERR, P_TAB,
       P_TAB_ON, P_KEY, P_STATE, P_SEL, P_TITLEBAR, P_FL0, P_FL1, P_FL2, P_FL3, P_FL_SEL };

static void setup_colors(struct ui *ui)
{
	int i;

	for (i = 0; i < UA_COUNT; i++)
		attrs[i] = A_NORMAL;
	/* Without colour: bold, reverse and underline carry the meaning. */
	attrs[UA_HEAD] = A_BOLD;
	attrs[UA_TITLE] = A_BOLD;
	attrs[UA_HOT] = A_BOLD;
	attrs[UA_MATCH] = A_BOLD | A_UNDERLINE;
	attrs[UA_MARK] = A_BOLD;
	attrs[UA_ERR] = A_BOLD;
	attrs[UA_TAB] = A_REVERSE;
	attrs[UA_TAB_ON] = A_BOLD;
	attrs[UA_KEY] = A_BOLD;
	attrs[UA_STATE] = A_REVERSE | A_BOLD;
	attrs[UA_DIM] = A_DIM;
	attrs[UA_FL_SEL] = A_REVERSE | A_BOLD; /* flame frames: brackets tell them apart */
	sel_attr = A_REVERSE;
	titlebar_attr = A_REVERSE;
	if (!ui->color || !has_colors())
		return;
	start_color();
	use_default_colors();
	init_pair(P_DIM, COLOR_CYAN, -1);
	init_pair(P_TITLE, COLOR_GREEN, -1);
	init_pair(P_HOT, COLOR_RED, -1);
	init_pair(P_WARM, COLOR_YELLOW, -1);
	init_pair(P_MATCH, COLOR_BLACK, COLOR_YELLOW);
	init_pair(P_MARK, COLOR_MAGENTA, -1);
	init_pair(P_TREE, COLOR_BLUE, -1);
	init_pair(P_OK, COLOR_GREEN, -1);
	init_pair(P_ERR, COLOR_RED, -1);
	init_pair(P_TAB, COLOR_BLACK, COLOR_CYAN);
	init_pair(P_TAB_ON, COLOR_BLACK, COLOR_GREEN);
	init_pair(P_KEY, -1, -1);
	init_pair(P_STATE, COLOR_BLACK, COLOR_YELLOW);
	init_pair(P_SEL, COLOR_BLACK, COLOR_CYAN);
	init_pair(P_TITLEBAR, COLOR_BLACK, COLOR_GREEN);
	attrs[UA_DIM] = COLOR_PAIR(P_DIM);
	attrs[UA_TITLE] = COLOR_PAIR(P_TITLE) | A_BOLD;
	attrs[UA_HOT] = COLOR_PAIR(P_HOT) | A_BOLD;
	attrs[UA_WARM] = COLOR_PAIR(P_WARM);
	attrs[UA_MATCH] = COLOR_PAIR(P_MATCH);
	attrs[UA_MARK] = COLOR_PAIR(P_MARK) | A_BOLD;
	attrs[UA_TREE] = COLOR_PAIR(P_TREE);
	attrs[UA_OK] = COLOR_PAIR(P_OK);
	attrs[UA_ERR] = COLOR_PAIR(P_ERR) | A_BOLD;
	attrs[UA_TAB] = COLOR_PAIR(P_TAB);
	attrs[UA_TAB_ON] = COLOR_PAIR(P_TAB_ON) | A_BOLD;
	attrs[UA_KEY] = A_BOLD;
	attrs[UA_STATE] = COLOR_PAIR(P_STATE) | A_BOLD;
	init_pair(P_FL0, COLOR_BLACK, COLOR_YELLOW);
	init_pair(P_FL1, COLOR_BLACK, COLOR_RED);
	init_pair(P_FL2, COLOR_BLACK, COLOR_CYAN);
	init_pair(P_FL3, COLOR_BLACK, COLOR_MAGENTA);
	init_pair(P_FL_SEL, COLOR_WHITE, COLOR_BLUE);
	attrs[UA_FL0] = COLOR_PAIR(P_FL0);
	attrs[UA_FL1] = COLOR_PAIR(P_FL1);
	attrs[UA_FL2] = COLOR_PAIR(P_FL2);
	attrs[UA_FL3] = COLOR_PAIR(P_FL3);
	attrs[UA_FL_SEL] = COLOR_PAIR(P_FL_SEL) | A_BOLD;
	sel_attr = COLOR_PAIR(P_SEL);
	titlebar_attr = COLOR_PAIR(P_TITLEBAR);
}

/* What each screen row shows, segment by segment, as draw_line last wrote it. Only the
 * characters that changed are written again (write_seg), and ncurses compares and sends
 * only the cells of a row between the first and the last one written (wnoutrefresh,
 * doupdate): a Top row whose counts changed costs those columns, not the terminal's
 * width. Erasing and writing every row cost in proportion to the screen's cells, several
 * times --batch's printing of every view (BENCHMARKS.md, "Own CPU against perf top"). */
#define PAD_SEG UINT16_MAX /* shown_seg.off of a highlighted row's padding (len: its width) */

struct shown_seg {
	uint16_t off, len; /* the bytes written, at shown_row.buf + off */
	int col;           /* the column they start at */
	chtype at;
};

struct shown_row {
	char *buf; /* the tline's text as it was */
	size_t cap;
	int nseg, end, valid; /* end: the column after the last cell written */
	unsigned frame;       /* the last draw that wrote or kept the row */
	struct shown_seg seg[TL_SEGS + 1];
};

static struct shown_row *rows_shown;
static int shown_lines, shown_cols;
static unsigned frame;

/* Forgets what the rows show (after an erase). */
static void shown_reset(void)
{
	int y;

	for (y = 0; y < shown_lines; y++)
		rows_shown[y].valid = 0;
}

static void shown_free(void)
{
	int y;

	for (y = 0; y < shown_lines; y++)
		free(rows_shown[y].buf);
	free(rows_shown);
	rows_shown = NULL;
	shown_lines = 0;
}

/* Segment k of what row r showed, when it was of now's kind (text or padding) at now's
 * column, in now's attribute and length, else NULL. */
static const struct shown_seg *seg_like(const struct shown_row *r, int k,
					const struct shown_seg *now)
{
	const struct shown_seg *o;

	if (!r || !r->valid || k >= r->nseg)
		return NULL;
	o = &r->seg[k];
	if ((o->off == PAD_SEG) != (now->off == PAD_SEG) || o->col != now->col || o->at != now->at ||
	    o->len != now->len)
		return NULL;
	return o;
}

/* Writes n bytes of text at (y, x) in attribute at. Printable ASCII goes in as cells
 * (wadd_wchnstr copies them; it neither decodes, wraps nor moves the cursor, and every
 * caller stays inside the row): waddnstr decodes and places each character on its own,
 * a large part of the screen thread's work on the Top view's changed counts.
 * Anything else, a UTF-8 ellipsis or bar, goes through addnstr, which decodes it. */
static void put_text(int y, int x, chtype at, const char *s, size_t n)
{
	cchar_t cells[256];
	wchar_t w[2] = { 0, 0 };
	size_t k;

	if (!n)
		return;
	for (k = 0; k < n; k++)
		if ((unsigned char)s[k] < 0x20 || (unsigned char)s[k] > 0x7e)
			break;
	if (k < n || n > sizeof(cells) / sizeof(cells[0])) {
		move(y, x);
		attrset(at);
		addnstr(s, (int)n);
		return;
	}
	/* One setcchar for the attribute and colour, then only the character changes: its
	 * first wide character, chars[0] in ncurses's cchar_t (curses.h), the rest stays 0. */
	w[0] = L' ';
	setcchar(&cells[0], w, at & ~A_COLOR, (short)PAIR_NUMBER(at), NULL);
	for (k = 0; k < n; k++) {
		cells[k] = cells[0];
		cells[k].chars[0] = (wchar_t)(unsigned char)s[k];
	}
	mvadd_wchnstr(y, x, cells, (int)n);
}

/* Writes text segment k of row y (now, its text at text), or only the characters that
 * differ from what the row showed there: a Top row is one segment from its counts to the
 * padded function name, and only its counts change from one refresh to the next. */
static void write_seg(int y, const struct shown_row *r, int k, const struct shown_seg *now,
		      const char *text)
{
	const struct shown_seg *o = seg_like(r, k, now);
	size_t i = 0, j = now->len;
	int ca = 0;

	if (o) {
		const char *old = r->buf + o->off;
		int cb, ob;

		while (i < j && old[i] == text[i])
			i++;
		if (i == j)
			return;
		while (j > i && old[j - 1] == text[j - 1])
			j--;
		/* Whole characters: the bytes around i and j are the same in both texts. */
		while (i > 0 && ((unsigned char)text[i] & 0xc0) == 0x80)
			i--;
		while (j < now->len && ((unsigned char)text[j] & 0xc0) == 0x80)
			j++;
		tl_fit(text, i, INT_MAX, &ca);
		tl_fit(text + i, j - i, INT_MAX, &cb);
		tl_fit(old + i, j - i, INT_MAX, &ob);
		if (cb != ob)
			j = now->len; /* the columns after the change moved: to the end */
	}
	put_text(y, now->col + ca, now->at, text + i, j - i);
}

/* Draws a line at row y, never past the right edge; base replaces the colours of a
 * highlighted line (the selection, the title bar). */
static void draw_line(int y, const struct tline *l, int highlight, chtype base)
{
	struct shown_row *r = y >= 0 && y < shown_lines ? &rows_shown[y] : NULL;
	struct shown_seg now[TL_SEGS + 1];
	int s, n = 0, used = 0;

	for (s = 0; s < l->nseg && used < COLS; s++) {
		size_t a = l->seg[s].start, b = s + 1 < l->nseg ? l->seg[s + 1].start : l->len, fit;
		int cols;
		chtype at = attrs[l->seg[s].attr];

		if (highlight)
			at = base | (at & (A_BOLD | A_UNDERLINE));
		fit = tl_fit(l->buf + a, b - a, COLS - used, &cols);
		now[n] = (struct shown_seg){ (uint16_t)a, (uint16_t)fit, used, at };
		write_seg(y, r, n, &now[n], l->buf + a);
		n++;
		used += cols;
	}
	if (highlight && used < COLS) {
		now[n] = (struct shown_seg){ PAD_SEG, (uint16_t)(COLS - used), used, base };
		if (!seg_like(r, n, &now[n])) {
			move(y, used);
			attrset(base);
			while (used < COLS) {
				addch(' ');
				used++;
			}
		}
		used = COLS;
		n++;
	}
	attrset(A_NORMAL);
	/* What the row showed past this text (not at COLS: the cursor has wrapped). */
	if (used < COLS && (!r || !r->valid || r->end > used)) {
		move(y, used);
		clrtoeol();
	}
	if (!r)
		return;
	xgrow((void **)&r->buf, &r->cap, l->len + 1, 1);
	memcpy(r->buf, l->buf, l->len);
	memcpy(r->seg, now, (size_t)n * sizeof(now[0]));
	r->nseg = n;
	r->end = used;
	r->valid = 1;
	r->frame = frame;
}

/* --- prompts --- */

enum prompt_kind { PR_NONE, PR_SEARCH, PR_SAVE, PR_FREQ, PR_WINDOW, PR_EVENT };

struct prompt {
	enum prompt_kind kind;
	const char *label;
	char buf[512];
	size_t len;
	int fresh;               /* the first character typed replaces the suggested text */
};

static struct prompt prompt;

static void prompt_open(enum prompt_kind kind, const char *label, const char *init)
{
	prompt.fresh = kind == PR_FREQ || kind == PR_WINDOW;
	prompt.kind = kind;
	prompt.label = label;
	snprintf(prompt.buf, sizeof(prompt.buf), "%s", init ? init : "");
	prompt.len = strlen(prompt.buf);
	curs_set(1);
}

static void prompt_close(void)
{
	prompt.kind = PR_NONE;
	curs_set(0);
}

static int prompt_accept(struct ui *ui)
{
	enum prompt_kind k = prompt.kind;
	char *text = prompt.buf, shown[1100];
	uint64_t v;
	int r = R_REDRAW;

	prompt_close();
	/* What the person typed, safe to echo in the status line. */
	ui_escape(shown, sizeof(shown), text, strlen(text));
	switch (k) {
	case PR_SEARCH:
		if (ui->cur == VIEW_EVENTS) {
			/* The picker's filter: its rows are rebuilt. */
			snprintf(ui->event_filter, sizeof(ui->event_filter), "%s", text);
			ui->views[ui->cur].sel = 0;
			r |= R_UPDATE;
			break;
		}
		snprintf(ui->search, sizeof(ui->search), "%s", text);
		if (ui->search[0]) {
			struct view *cv = &ui->views[ui->cur];

			/* Find from the row above so that a matching selected row stays. */
			if (cv->sel > 0)
				cv->sel--;
			r |= ui_action(ui, ACT_FIND_NEXT);
		}
		break;
	case PR_SAVE:
		if (*text)
			ui_save(ui, text);
		break;
	case PR_FREQ:
		if (cli_parse_u64(text, &v) || v > 1000000)
			ui_set_status(ui, UA_ERR, "invalid frequency '%s'", shown);
		else {
			ui_request(ui, LIVE_REQ_FREQ, NULL, v);
			ui_set_status(ui, UA_NORMAL, "setting %llu Hz...", (unsigned long long)v);
		}
		break;
	case PR_WINDOW:
		if (cli_parse_u64(text, &v) || v > LIVE_MAX_WINDOW)
			ui_set_status(ui, UA_ERR, "invalid window '%s' (1 to %d seconds)", shown, LIVE_MAX_WINDOW);
		else {
			ui->window_len = (unsigned)v;
			ui_request(ui, LIVE_REQ_WINDOW, NULL, v);
		}
		break;
	case PR_EVENT:
		if (*text) {
			ui_switch_event(ui, text);
			if (ui->cur == VIEW_EVENTS)
				r |= ui_close_overlay(ui);
			r |= R_UPDATE;
		}
		break;
	case PR_NONE:
		break;
	}
	return r;
}

static int prompt_key(struct ui *ui, int ch)
{
	int fresh = prompt.fresh;

	prompt.fresh = 0;
	switch (ch) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		return prompt_accept(ui);
	case 27:
	case 7: /* Ctrl-G */
		prompt_close();
		return R_REDRAW;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		/* Remove one character (its UTF-8 continuation bytes too). */
		while (prompt.len && ((unsigned char)prompt.buf[prompt.len - 1] & 0xc0) == 0x80)
			prompt.len--;
		if (prompt.len)
			prompt.len--;
		prompt.buf[prompt.len] = 0;
		return R_REDRAW;
	case 21: /* Ctrl-U */
		prompt.len = 0;
		prompt.buf[0] = 0;
		return R_REDRAW;
	case KEY_RESIZE:
		return R_UPDATE | R_REDRAW;
	default:
		if (fresh && ch >= 32 && ch < 256 && ch != 127)
			prompt.len = 0;
		if (ch >= 32 && ch < 256 && ch != 127 && prompt.len + 1 < sizeof(prompt.buf)) {
			prompt.buf[prompt.len++] = (char)ch;
			prompt.buf[prompt.len] = 0;
		}
		return R_REDRAW;
	}
}

/* --- drawing --- */

static void draw(struct ui *ui)
{
	struct tline l, l2;
	struct view *v = &ui->views[ui->cur];
	size_t n, i;
	int y;

	frame++;
	if (LINES != shown_lines || COLS != shown_cols) {
		shown_free();
		rows_shown = xcalloc((size_t)GP_MAX(LINES, 1), sizeof(*rows_shown));
		shown_lines = LINES;
		shown_cols = COLS;
		erase();
	}
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		char msg[128];

		snprintf(msg, sizeof(msg), "gotop-perf needs at least %dx%d (this is %dx%d); q quits",
			 MIN_COLS, MIN_LINES, COLS, LINES);
		erase();
		shown_reset();
		mvaddnstr(LINES / 2, 0, msg, COLS);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	ui_header(ui, &l, &l2);
	draw_line(0, &l, 0, 0);
	draw_line(1, &l2, 0, 0);
	ui_tabs(ui, &l);
	draw_line(2, &l, 0, 0);
	ui_info_line(ui, &l);
	draw_line(3, &l, 0, 0);
	v->ops->title(ui, v, &l);
	draw_line(4, &l, 1, titlebar_attr);

	n = v->ops->nrows(ui, v);
	if (!n && v->ops->empty) {
		tl_reset(&l);
		tl_put(&l, UA_DIM, "  ");
		tl_put(&l, UA_DIM, v->ops->empty(ui, v));
		draw_line(5, &l, 0, 0);
	}
	for (i = v->top, y = 5; i < n && y < 5 + ui->rows; i++, y++) {
		v->ops->row(ui, v, i, &l);
		draw_line(y, &l, i == v->sel && !v->ops->cell_select, sel_attr);
	}

	tl_reset(&l);
	if (prompt.kind != PR_NONE) {
		char shown[1100];

		tl_put(&l, UA_KEY, prompt.label);
		ui_escape(shown, sizeof(shown), prompt.buf, prompt.len);
		tl_put(&l, UA_NORMAL, shown);
		draw_line(LINES - 2, &l, 0, 0);
	} else {
		if (ui->status[0])
			tl_put(&l, ui->status_attr, ui->status);
		if (n) {
			char pos[48];
			int w;

			snprintf(pos, sizeof(pos), "%zu/%zu", v->sel + 1, n);
			w = (int)strlen(pos);
			if (l.cols + w + 2 <= COLS) {
				tl_pad(&l, COLS - w);
				tl_put(&l, UA_DIM, pos);
			}
		}
		draw_line(LINES - 2, &l, 0, 0);
	}
	ui_key_bar(ui, &l);
	draw_line(LINES - 1, &l, 0, 0);
	/* Rows drawn before and not now (a shorter list) are cleared. */
	for (y = 0; y < shown_lines; y++)
		if (rows_shown[y].valid && rows_shown[y].frame != frame) {
			move(y, 0);
			clrtoeol();
			rows_shown[y].valid = 0;
		}
	if (prompt.kind != PR_NONE) {
		char shown[1100];
		int x;

		ui_escape(shown, sizeof(shown), prompt.buf, prompt.len);
		x = tl_width(prompt.label) + tl_width(shown);
		move(LINES - 2, GP_MIN(x, COLS - 1));
	}
	wnoutrefresh(stdscr);
	doupdate();
}

static void layout(struct ui *ui)
{
	ui->width = COLS;
	ui->rows = GP_MAX(LINES - CHROME_LINES, 1);
}

static int handle_key(struct ui *ui, int ch)
{
	enum ui_action a;
	char *def;

	if (ch == KEY_RESIZE) {
		int i;

		/* Rows laid out for the width (the Flame's boxes) are laid out again, at once:
		 * `view` has no next refresh to do it. */
		layout(ui);
		for (i = 0; i < VIEW_COUNT; i++)
			ui->views[i].stale = 1;
		return R_UPDATE | R_REDRAW;
	}
	if (prompt.kind != PR_NONE)
		return prompt_key(ui, ch);
	a = ui_key_action(ch, ui->cur);
	switch (a) {
	case ACT_SEARCH:
		if (ui->cur == VIEW_EVENTS)
			prompt_open(PR_SEARCH, "Filter events: ", ui->event_filter);
		else
			prompt_open(PR_SEARCH, "Search functions: ", "");
		return R_REDRAW;
	case ACT_SAVE:
		def = ui_default_save_path(ui);
		prompt_open(PR_SAVE, "Save snapshot (name.folded: folded stacks) to: ", def);
		free(def);
		return R_REDRAW;
	case ACT_FREQ: {
		char cur[32];

		snprintf(cur, sizeof(cur), "%llu", ui->snap && ui->snap->use_freq
				? (unsigned long long)ui->snap->freq : (unsigned long long)ui->freq_default);
		prompt_open(PR_FREQ, "Samples per second per thread (Hz): ", cur);
		return R_REDRAW;
	}
	case ACT_WINDOW_LEN: {
		char cur[32];

		snprintf(cur, sizeof(cur), "%u", ui->window_len);
		prompt_open(PR_WINDOW, "Decaying window, seconds: ", cur);
		return R_REDRAW;
	}
	case ACT_EVENT_NAME:
		prompt_open(PR_EVENT, "Event (as perf writes it: cycles:u, sched:sched_switch, rNNNN): ", "");
		return R_REDRAW;
	case ACT_REDRAW:
		clearok(curscr, TRUE);
		return R_REDRAW;
	case ACT_NONE:
		if (ch >= 32 && ch < 127) {
			ui_set_status(ui, UA_DIM, "'%c' does nothing here: h for help", ch);
			return R_REDRAW;
		}
		return R_NONE;
	default:
		return ui_action(ui, a);
	}
}

/* Carries out R_MODEL and R_UPDATE at once, so that the next key sees fresh rows. */
static int apply(struct ui *ui, int r)
{
	if (r & R_MODEL)
		ui_rebuild(ui);
	if (r & (R_MODEL | R_UPDATE))
		ui_update_view(ui, &ui->views[ui->cur]);
	return r & (R_QUIT | R_REDRAW | R_UPDATE | R_MODEL);
}

/* Takes the terminal: curses on, the signal pipe, the colours. EXIT_OK, or the exit code
 * after saying why. A second call (the live UI after the picker) finds curses set up:
 * ncurses's initscr returns the screen it made (ncurses/base/lib_initscr.c), which the
 * refresh below takes back from endwin. */
static int screen_start(struct ui *ui)
{
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		cli_error("pipe: %s", strerror(errno));
		return EXIT_FAIL;
	}
	/* fatal() (out of memory) restores the terminal before it prints. */
	util_set_fatal_hook(tui_restore);
	if (!initscr()) {
		cli_error("cannot initialise the terminal (TERM=%s)", getenv("TERM") ? getenv("TERM") : "");
		return EXIT_FAIL;
	}
	curses_on = 1;
	install_signals();
	cbreak();
	noecho();
	nonl();
	intrflush(stdscr, FALSE);
	/* No scrolling optimisation: the rows change in place, so looking for lines that
	 * moved is work for nothing. */
	idlok(stdscr, FALSE);
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	/* ncurses 6.4 flushes its output at every cursor move until the screen has been left
	 * and entered once (ncurses/tty/lib_mvcur.c _nc_mvcur flushes while _endwin is
	 * ewInitial; only doupdate's resume sets ewRunning): a refresh went out in dozens of
	 * small writes instead of one. Done before anything is drawn. */
	refresh();
	endwin();
	refresh();
	setup_colors(ui);
	layout(ui);
	return EXIT_OK;
}

/* Gives the terminal back as it was. */
static void screen_stop(void)
{
	tui_restore();
	util_set_fatal_hook(NULL);
	cli_wake_fd = -1;
	close(sig_pipe[0]);
	close(sig_pipe[1]);
	sig_pipe[0] = sig_pipe[1] = -1;
}

int tui_run(struct ui *ui)
{
	struct pollfd pfd[3];
	int need = R_UPDATE | R_REDRAW, rc = EXIT_OK;

	if ((rc = screen_start(ui)))
		return rc;
	apply(ui, ui_refresh(ui) | R_UPDATE);

	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = ui->live ? live_fd(ui->live) : -1; /* `view`: no snapshots come */
	pfd[1].events = POLLIN;
	pfd[2].fd = sig_pipe[0];
	pfd[2].events = POLLIN;
	for (;;) {
		int ch, pr;

		if ((need & R_QUIT) || cli_stop_signal)
			break;
		if (need & (R_REDRAW | R_UPDATE | R_MODEL))
			draw(ui);
		need = 0;

		pr = poll(pfd, 3, 1000);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && (pfd[2].revents & POLLIN))
			break;
		if (pr > 0 && (pfd[1].revents & POLLIN)) {
			uint64_t v;

			if (read(pfd[1].fd, &v, sizeof(v)) < 0) {
				/* spurious wake-up */
			}
			/* The rows of the current view may point into the data of the old
			 * snapshot: recompute them before any key acts on them. */
			need |= apply(ui, ui_refresh(ui));
		}
		while ((ch = getch()) != ERR) {
			need |= apply(ui, handle_key(ui, ch));
			if (need & R_QUIT)
				break;
		}
		if (ui->spawned && ui->target_status < 0) {
			ui->target_status = live_target_status(ui->live);
			if (ui->target_status >= 0)
				need |= R_REDRAW;
		}
		if (ui->status[0] && util_now_ns() - ui->status_ns > STATUS_NS && !ui->wait_seq) {
			ui->status[0] = 0;
			need |= R_REDRAW;
		}
	}
	screen_stop();
	if (cli_stop_signal)
		rc = EXIT_OK;
	return rc;
}

/* --- the process picker (ui/picker.c) --- */

#define PICK_SCAN_NS 1000000000ULL /* a scan a second, as htop's default delay */

struct pick_state {
	size_t sel, top;
	pid_t sel_pid;           /* the process selected, kept across scans and filters */
	int moved;               /* the person moved the selection: it follows its process;
				  * else it stays on the first row (top's and htop's way) */
	int filtering;           /* / typed: keys edit the filter */
	size_t flen;
	char fbuf[128];
};

/* The selection on a process row: from sel in direction dir (+1, -1) past the line
 * between the Go programs and the others. */
static void pick_fix(struct picker *pk, struct pick_state *s, int dir)
{
	size_t n = picker_nrows(pk);

	if (!n) {
		s->sel = s->top = 0;
		return;
	}
	if (s->sel >= n)
		s->sel = n - 1;
	if (!picker_selectable(pk, s->sel)) {
		if (dir >= 0 && s->sel + 1 < n)
			s->sel++;
		else if (s->sel > 0)
			s->sel--;
		else if (s->sel + 1 < n)
			s->sel++;
	}
	s->sel_pid = picker_pid(pk, s->sel);
}

/* After a scan or a filter: the same process selected, where it went. */
static void pick_follow(struct picker *pk, struct pick_state *s)
{
	size_t n = picker_nrows(pk);

	if (!s->moved)
		s->sel = 0;
	for (size_t i = 0; s->moved && s->sel_pid && i < n; i++)
		if (picker_pid(pk, i) == s->sel_pid) {
			s->sel = i;
			return;
		}
	pick_fix(pk, s, 1);
}

static void pick_draw(struct ui *ui, struct picker *pk, struct pick_state *s)
{
	struct tline l, l2;
	size_t n = picker_nrows(pk), i;
	int y, rows = GP_MAX(LINES - 6, 1);

	frame++;
	if (LINES != shown_lines || COLS != shown_cols) {
		shown_free();
		rows_shown = xcalloc((size_t)GP_MAX(LINES, 1), sizeof(*rows_shown));
		shown_lines = LINES;
		shown_cols = COLS;
		erase();
	}
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		char msg[128];

		snprintf(msg, sizeof(msg), "gotop-perf needs at least %dx%d (this is %dx%d); q quits",
			 MIN_COLS, MIN_LINES, COLS, LINES);
		erase();
		shown_reset();
		mvaddnstr(LINES / 2, 0, msg, COLS);
		wnoutrefresh(stdscr);
		doupdate();
		return;
	}
	if (s->sel < s->top)
		s->top = s->sel;
	if (s->sel >= s->top + (size_t)rows)
		s->top = s->sel - (size_t)rows + 1;
	if (s->top + (size_t)rows > n)
		s->top = n > (size_t)rows ? n - (size_t)rows : 0;
	picker_layout(pk, COLS);
	picker_header(pk, COLS, &l, &l2);
	draw_line(0, &l, 0, 0);
	draw_line(1, &l2, 0, 0);
	picker_info(pk, &l);
	draw_line(2, &l, 0, 0);
	picker_title(pk, COLS, &l);
	draw_line(3, &l, 1, titlebar_attr);
	if (!n) {
		tl_reset(&l);
		tl_put(&l, UA_DIM, picker_filter(pk)[0] ? "  no process matches the filter"
							: "  no process to profile");
		draw_line(4, &l, 0, 0);
	}
	for (i = s->top, y = 4; i < n && y < 4 + rows; i++, y++) {
		picker_row(pk, i, COLS, &l);
		draw_line(y, &l, i == s->sel && picker_selectable(pk, i), sel_attr);
	}
	tl_reset(&l);
	if (s->filtering) {
		char shown[600];

		tl_put(&l, UA_KEY, "Filter: ");
		ui_escape(shown, sizeof(shown), s->fbuf, s->flen);
		tl_put(&l, UA_NORMAL, shown);
	} else if (ui->status[0]) {
		tl_put(&l, ui->status_attr, ui->status);
	} else if (n) {
		char pos[48];

		snprintf(pos, sizeof(pos), "%zu/%zu", s->sel + 1, n);
		tl_pad(&l, COLS - (int)strlen(pos));
		tl_put(&l, UA_DIM, pos);
	}
	draw_line(LINES - 2, &l, 0, 0);
	tl_reset(&l);
	{
		static const char *const bar[][2] = { { "Enter", "Attach" }, { "/", "Filter" },
						      { "Esc", "Clear" }, { "q", "Quit" } };

		for (size_t k = 0; k < GP_ARRAY_SIZE(bar); k++) {
			tl_put(&l, UA_KEY, bar[k][0]);
			tl_put(&l, UA_NORMAL, " ");
			tl_put(&l, UA_TAB, bar[k][1]);
			tl_put(&l, UA_NORMAL, " ");
		}
		tl_pad(&l, COLS);
	}
	draw_line(LINES - 1, &l, 0, 0);
	for (y = 0; y < shown_lines; y++)
		if (rows_shown[y].valid && rows_shown[y].frame != frame) {
			move(y, 0);
			clrtoeol();
			rows_shown[y].valid = 0;
		}
	if (s->filtering) {
		char shown[600];

		ui_escape(shown, sizeof(shown), s->fbuf, s->flen);
		move(LINES - 2, GP_MIN(8 + tl_width(shown), COLS - 1));
	}
	wnoutrefresh(stdscr);
	doupdate();
}

/* A key while the filter is typed: it narrows the list as it is typed (htop's F4). */
static void pick_filter_key(struct picker *pk, struct pick_state *s, int ch)
{
	switch (ch) {
	case '\n':
	case '\r':
	case KEY_ENTER:
		s->filtering = 0;
		curs_set(0);
		return;
	case 27:
		s->flen = 0;
		s->fbuf[0] = 0;
		s->filtering = 0;
		curs_set(0);
		break;
	case KEY_BACKSPACE:
	case 127:
	case 8:
		while (s->flen && ((unsigned char)s->fbuf[s->flen - 1] & 0xc0) == 0x80)
			s->flen--;
		if (s->flen)
			s->flen--;
		s->fbuf[s->flen] = 0;
		break;
	case 21: /* Ctrl-U */
		s->flen = 0;
		s->fbuf[0] = 0;
		break;
	default:
		if (ch < 32 || ch >= 256 || ch == 127 || s->flen + 1 >= sizeof(s->fbuf))
			return;
		s->fbuf[s->flen++] = (char)ch;
		s->fbuf[s->flen] = 0;
		break;
	}
	picker_set_filter(pk, s->fbuf);
	pick_follow(pk, s);
}

/* A key of the list; 1 when the picker is done (*pid set on Enter). */
static int pick_key(struct ui *ui, struct picker *pk, struct pick_state *s, int ch, pid_t *pid)
{
	size_t n = picker_nrows(pk);
	long page = GP_MAX(LINES - 7, 1);
	int dir = 1;

	switch (ch) {
	case 'q':
	case KEY_F(10):
		return 1;
	case 27:
		if (!s->flen)
			return 0;
		s->flen = 0;
		s->fbuf[0] = 0;
		picker_set_filter(pk, "");
		pick_follow(pk, s);
		return 0;
	case '/':
	case KEY_F(3):
	case KEY_F(4):
		s->filtering = 1;
		curs_set(1);
		return 0;
	case '\n':
	case '\r':
	case KEY_ENTER:
		if (!picker_selectable(pk, s->sel)) {
			ui_set_status(ui, UA_ERR, "no process selected");
			return 0;
		}
		*pid = picker_pid(pk, s->sel);
		return 1;
	case KEY_UP:
	case 'k':
		s->sel = s->sel ? s->sel - 1 : 0;
		dir = -1;
		break;
	case KEY_DOWN:
	case 'j':
		s->sel++;
		break;
	case KEY_PPAGE:
		s->sel = s->sel > (size_t)page ? s->sel - (size_t)page : 0;
		dir = -1;
		break;
	case KEY_NPAGE:
		s->sel += (size_t)page;
		break;
	case KEY_HOME:
	case 'g':
		s->sel = 0;
		break;
	case KEY_END:
	case 'G':
		s->sel = n ? n - 1 : 0;
		dir = -1;
		break;
	case 12: /* Ctrl-L */
		clearok(curscr, TRUE);
		return 0;
	default:
		if (ch >= 32 && ch < 127)
			ui_set_status(ui, UA_DIM, "'%c' does nothing here: Enter attaches, / filters, q quits", ch);
		return 0;
	}
	if (s->sel >= n && n)
		s->sel = n - 1;
	pick_fix(pk, s, dir);
	/* Back on the first process: following the top again. */
	s->moved = s->sel != (picker_selectable(pk, 0) ? 0u : 1u);
	return 0;
}

int tui_pick(struct ui *ui, struct picker *pk, pid_t *pid)
{
	struct pick_state s = { 0 };
	struct pollfd pfd[2];
	uint64_t next;
	int rc, done = 0;

	*pid = 0;
	if ((rc = screen_start(ui)))
		return rc;
	picker_scan(pk);
	pick_fix(pk, &s, 1);
	/* The first CPU shares need a second scan: soon after the first. */
	next = util_now_ns() + PICK_SCAN_NS / 3;
	pfd[0].fd = STDIN_FILENO;
	pfd[0].events = POLLIN;
	pfd[1].fd = sig_pipe[0];
	pfd[1].events = POLLIN;
	while (!done && !cli_stop_signal) {
		uint64_t now = util_now_ns();
		int ch, pr;

		if (now >= next) {
			picker_scan(pk);
			pick_follow(pk, &s);
			next = now + PICK_SCAN_NS;
		}
		if (ui->status[0] && now - ui->status_ns > STATUS_NS)
			ui->status[0] = 0;
		pick_draw(ui, pk, &s);
		pr = poll(pfd, 2, (int)((next - GP_MIN(next, util_now_ns())) / 1000000) + 1);
		if (pr < 0 && errno != EINTR)
			break;
		if (pr > 0 && (pfd[1].revents & POLLIN))
			break;
		while (!done && (ch = getch()) != ERR) {
			if (ch == KEY_RESIZE)
				continue;
			if (s.filtering)
				pick_filter_key(pk, &s, ch);
			else
				done = pick_key(ui, pk, &s, ch, pid);
		}
	}
	screen_stop();
	if (cli_stop_signal)
		*pid = 0;
	return EXIT_OK;
}
