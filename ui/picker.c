/* picker.c: `gotop-perf` with no arguments in a terminal: a list of the running
 * processes this user may profile (include/gotop/procs.h), the Go programs first with
 * their version, CPU, goroutines and threads, sorted by CPU like htop, every other
 * program below them; / filters, Enter attaches the live UI to the selected process.
 * The rows are text lines (no curses here); the loop that draws them is tui_pick. It is
 * no view of the live UI's table (ui.h UI_VIEWS): it runs before there is a session, and
 * none of the live UI's keys has anything to act on. */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gotop/procs.h"
#include "gotop/util.h"

enum { PC_PID, PC_NAME, PC_GO, PC_CPU, PC_GOROUTINES, PC_THREADS, PC_COMMAND, PC_N };
static const char *const pc_head[PC_N] = { "PID", "NAME", "GO", "CPU%", "GOROUTINES", "THREADS",
					   "COMMAND" };

/* A row: an entry of the list, or the line between the Go programs and the others. */
#define ROW_OTHERS ((size_t)-1)

struct picker {
	struct procs *procs;
	const struct procs_entry *e;
	size_t n;
	size_t *rows;            /* indexes into e, or ROW_OTHERS */
	size_t nrows, caprows;
	size_t ngo, nother;      /* rows of each kind under the filter */
	char filter[128];
	int scanned;
	struct tl_col col[PC_N];
};

struct picker *picker_new(void)
{
	struct picker *pk = xcalloc(1, sizeof(*pk));

	pk->procs = procs_new(NULL, PROCS_GOROUTINES);
	return pk;
}

void picker_free(struct picker *pk)
{
	if (!pk)
		return;
	procs_free(pk->procs);
	free(pk->rows);
	free(pk);
}

static int matches(const struct picker *pk, const struct procs_entry *e)
{
	char pid[16];

	if (!pk->filter[0])
		return 1;
	snprintf(pid, sizeof(pid), "%d", (int)e->pid);
	return strstr(e->comm, pk->filter) || strstr(e->cmdline, pk->filter) ||
	       strstr(e->exe, pk->filter) || strstr(pid, pk->filter) ||
	       (e->go_version[0] && strstr(e->go_version, pk->filter));
}

static void row_add(struct picker *pk, size_t r)
{
	xgrow((void **)&pk->rows, &pk->caprows, pk->nrows + 1, sizeof(*pk->rows));
	pk->rows[pk->nrows++] = r;
}

/* The rows under the filter: the Go programs, the line, the others. */
static void rows_build(struct picker *pk)
{
	size_t i;

	pk->nrows = pk->ngo = pk->nother = 0;
	for (i = 0; i < pk->n; i++)
		if (pk->e[i].go_version[0] && matches(pk, &pk->e[i])) {
			row_add(pk, i);
			pk->ngo++;
		}
	for (i = 0; i < pk->n; i++)
		if (!pk->e[i].go_version[0] && matches(pk, &pk->e[i])) {
			if (!pk->nother++)
				row_add(pk, ROW_OTHERS);
			row_add(pk, i);
		}
}

int picker_scan(struct picker *pk)
{
	int rc = procs_scan(pk->procs);

	pk->n = procs_list(pk->procs, &pk->e);
	pk->scanned++;
	rows_build(pk);
	return rc;
}

void picker_set_filter(struct picker *pk, const char *f)
{
	snprintf(pk->filter, sizeof(pk->filter), "%s", f);
	rows_build(pk);
}

const char *picker_filter(const struct picker *pk)
{
	return pk->filter;
}

size_t picker_nrows(const struct picker *pk)
{
	return pk->nrows;
}

int picker_selectable(const struct picker *pk, size_t i)
{
	return i < pk->nrows && pk->rows[i] != ROW_OTHERS;
}

pid_t picker_pid(const struct picker *pk, size_t i)
{
	return picker_selectable(pk, i) ? pk->e[pk->rows[i]].pid : 0;
}

int picker_is_go(const struct picker *pk, size_t i)
{
	return picker_selectable(pk, i) && pk->e[pk->rows[i]].go_version[0];
}

/* A row's cells as text (escaped). */
struct pcells {
	char c[PC_N][PROCS_CMDLINE_MAX * 4 + 8];
};

static void cells(const struct procs_entry *e, struct pcells *c)
{
	snprintf(c->c[PC_PID], sizeof(c->c[PC_PID]), "%d", (int)e->pid);
	/* comm and cmdline are escaped already (procinfo, util_escape); again for an ASCII
	 * terminal and bidi controls. */
	ui_escape(c->c[PC_NAME], sizeof(c->c[PC_NAME]), e->comm, strlen(e->comm));
	ui_escape(c->c[PC_GO], sizeof(c->c[PC_GO]), e->go_version, strlen(e->go_version));
	if (e->cpu_pct < 0)
		snprintf(c->c[PC_CPU], sizeof(c->c[PC_CPU]), "-");
	else
		snprintf(c->c[PC_CPU], sizeof(c->c[PC_CPU]), "%.1f", e->cpu_pct);
	if (e->goroutines >= 0)
		snprintf(c->c[PC_GOROUTINES], sizeof(c->c[PC_GOROUTINES]), "%ld", e->goroutines);
	else
		c->c[PC_GOROUTINES][0] = 0;
	snprintf(c->c[PC_THREADS], sizeof(c->c[PC_THREADS]), "%ld", e->threads);
	ui_escape(c->c[PC_COMMAND], sizeof(c->c[PC_COMMAND]), e->cmdline[0] ? e->cmdline : e->exe,
		  strlen(e->cmdline[0] ? e->cmdline : e->exe));
}

/* The columns laid out to the width: numbers whole, the name and Go version as wide as
 * their widest, the command line the rest. */
void picker_layout(struct picker *pk, int width)
{
	struct pcells *c = xmalloc(sizeof(*c));
	int want[PC_N] = { 0 };

	for (size_t i = 0; i < pk->nrows; i++) {
		if (pk->rows[i] == ROW_OTHERS)
			continue;
		cells(&pk->e[pk->rows[i]], c);
		for (int k = 0; k < PC_N; k++)
			want[k] = GP_MAX(want[k], tl_width(c->c[k]));
	}
	free(c);
	for (int k = 0; k < PC_N; k++) {
		int head = tl_width(pc_head[k]);

		pk->col[k].want = GP_MAX(want[k], head);
		pk->col[k].min = k == PC_NAME ? GP_MIN(pk->col[k].want, 8)
				 : k == PC_COMMAND ? GP_MIN(pk->col[k].want, 10)
						   : pk->col[k].want;
	}
	tl_cols(pk->col, PC_N, 2, width);
}

static int right(int k)
{
	return k == PC_PID || k == PC_CPU || k == PC_GOROUTINES || k == PC_THREADS;
}

static void cell(struct picker *pk, struct tline *l, int width, int k, int attr, const char *s)
{
	int w = pk->col[k].w;

	if (k)
		tl_put(l, UA_NORMAL, "  ");
	if (k == PC_N - 1)
		w = GP_MAX(w, width - l->cols);
	tl_field(l, attr, s, w, right(k) ? TL_RIGHT : 0);
}

void picker_title(struct picker *pk, int width, struct tline *l)
{
	tl_reset(l);
	for (int k = 0; k < PC_N; k++)
		cell(pk, l, width, k, UA_HEAD, pc_head[k]);
	tl_pad(l, width);
}

void picker_row(struct picker *pk, size_t i, int width, struct tline *l)
{
	struct pcells *c;
	const struct procs_entry *e;

	tl_reset(l);
	if (i >= pk->nrows)
		return;
	if (pk->rows[i] == ROW_OTHERS) {
		tl_printf(l, UA_DIM, "  other programs: %zu (Enter attaches without Go awareness)",
			  pk->nother);
		return;
	}
	e = &pk->e[pk->rows[i]];
	c = xmalloc(sizeof(*c));
	cells(e, c);
	for (int k = 0; k < PC_N; k++) {
		int attr = UA_NORMAL;

		if (k == PC_GO || k == PC_COMMAND)
			attr = UA_DIM;
		else if (k == PC_CPU && e->cpu_pct >= 0)
			attr = ui_pct_attr((int64_t)(e->cpu_pct * 10), 1000);
		else if (k == PC_NAME && e->go_version[0])
			attr = UA_HEAD;
		cell(pk, l, width, k, attr, c->c[k]);
	}
	free(c);
}

/* The two header lines: what this is and how many, then what limits the list. */
void picker_header(struct picker *pk, int width, struct tline *l1, struct tline *l2)
{
	char right[96];
	const char *why = procs_why(pk->procs);

	tl_reset(l1);
	tl_reset(l2);
	tl_put(l1, UA_TITLE, "gotop-perf ");
	tl_put(l1, UA_HEAD, "pick a process to profile");
	snprintf(right, sizeof(right), "%zu Go, %zu other", pk->ngo, pk->nother);
	tl_pad(l1, GP_MAX(width - (int)strlen(right), l1->cols + 2));
	tl_put(l1, UA_NORMAL, right);
	if (why[0])
		tl_put(l2, UA_ERR, why);
	else if (geteuid() == 0)
		tl_put(l2, UA_DIM, "as root: every process");
	else
		tl_put(l2, UA_DIM, "the processes you may trace (ptrace access, perf_event_paranoid)");
}

void picker_info(struct picker *pk, struct tline *l)
{
	char buf[600];

	tl_reset(l);
	if (!pk->filter[0]) {
		tl_put(l, UA_DIM, "Go programs by CPU, then the others; / filters");
		return;
	}
	ui_escape(buf, sizeof(buf), pk->filter, strlen(pk->filter));
	tl_put(l, UA_NORMAL, "filter: ");
	tl_put(l, UA_MATCH, buf);
	tl_printf(l, UA_DIM, "  (%zu of %zu)", pk->ngo + pk->nother, pk->n);
}

/* The picker in the terminal, then the live UI on the process chosen, as `gotop-perf -p
 * PID` would start it. */
int cmd_pick(void)
{
	struct picker *pk;
	struct ui ui;
	pid_t pid = 0;
	int rc;

	struct cli_display d;

	cli_display_init(&d);
	if ((rc = cli_display_start(&d))) /* the locale: UTF-8 or not */
		return rc;
	pk = picker_new();
	ui_init(&ui, 0);
	ui.color = !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	rc = tui_pick(&ui, pk, &pid);
	ui_fini(&ui);
	picker_free(pk);
	if (rc || !pid)
		return rc;
	{
		char arg[16], *argv[4];

		snprintf(arg, sizeof(arg), "%d", (int)pid);
		argv[0] = (char *)"gotop-perf";
		argv[1] = (char *)"-p";
		argv[2] = arg;
		argv[3] = NULL;
		fprintf(stderr, "gotop-perf: attaching to PID %d...\n", (int)pid);
		return cmd_live(3, argv);
	}
}
