/* view-help.c: the help screen, generated from the key table, and what the columns mean. */
#include "config.h"
#include "ui.h"

#include <string.h>

static const char *const notes[] = {
	"",
	"SELF%: share of the samples where the function itself was running (the leaf).",
	"TOTAL%: share of the samples with the function anywhere on the stack (once per sample).",
	"Shares are of the samples under the focus; the info line shows the focus and its share.",
	"Focus keeps only the samples with the function on the stack (pprof -focus), ignore drops",
	"them (-ignore); Enter in Labels, Goroutines or Threads focuses on a value (-tagfocus).",
	"Data is kept per event: switching events does not lose what was collected.",
	"Strings from the target are shown with control characters escaped (\\xNN).",
	"Wall time (Go; Goroutines m, Labels RUN% RUNQ% WAIT%): every goroutine read from outside",
	"at --wall-hz, each read adding one period to its stack and state: running on a thread,",
	"runnable (waiting for a CPU), or waiting (wait reason, syscall); since the start, z, or",
	"over the window. Not seen: goroutines born and gone between reads, waits shorter than a",
	"period, goroutines that ran while read (counted), a running goroutine's stack, C code of",
	"cgo calls (seen as syscall), threads running no Go code.",
};

static size_t help_nrows(struct ui *ui, struct view *v)
{
	return ui_help_nlines() + sizeof(notes) / sizeof(notes[0]);
}

static void help_update(struct ui *ui, struct view *v)
{
}

static uint64_t help_row_id(struct ui *ui, struct view *v, size_t i)
{
	return i + 1;
}

static void help_title(struct ui *ui, struct view *v, struct tline *l)
{
	tl_reset(l);
	tl_printf(l, UA_HEAD, "%s %s: keys  [views where a key works; otherwise everywhere]",
		  PACKAGE_NAME, PACKAGE_VERSION);
	if (!ui->batch)
		tl_pad(l, ui->width);
}

static void help_row(struct ui *ui, struct view *v, size_t i, struct tline *l)
{
	size_t nk = ui_help_nlines();

	if (i < nk) {
		ui_help_line(i, l);
		return;
	}
	tl_reset(l);
	tl_put(l, UA_DIM, notes[i - nk]);
}

const struct view_ops view_help_ops = {
	.update = help_update,
	.nrows = help_nrows,
	.row_id = help_row_id,
	.title = help_title,
	.row = help_row,
};
