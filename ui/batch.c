/* batch.c: the plain-text front end (--batch of the live UI and of `view`, like top -b):
 * each update prints the header lines and then the views of --view's list as sections of
 * text ("== Top =="), which is what the tests read. Only the UI thread's stdout is used. */
#include "config.h"
#include "cli.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

static void print_line(const struct tline *l)
{
	/* Trailing blanks are padding, not content. */
	size_t n = l->len;

	while (n && l->buf[n - 1] == ' ')
		n--;
	fwrite(l->buf, 1, n, stdout);
	fputc('\n', stdout);
}

/* A section: its title, the view's title line and at most ui->batch_rows rows. */
static void section(struct ui *ui, struct view *v, const char *title)
{
	struct tline l;
	size_t n, i;

	printf("\n== %s ==\n", title);
	ui_update_view(ui, v);
	n = v->ops->nrows(ui, v);
	v->ops->title(ui, v, &l);
	if (v->ops->info) {
		/* After the column names, not after the last one's padding. */
		while (l.len && l.buf[l.len - 1] == ' ') {
			l.buf[--l.len] = 0;
			l.cols--;
		}
		tl_put(&l, UA_NORMAL, "  ");
		v->ops->info(ui, v, &l);
	}
	print_line(&l);
	if (!n && v->ops->empty) {
		printf("  (%s)\n", v->ops->empty(ui, v));
		return;
	}
	for (i = 0; i < n && (!ui->batch_rows || i < ui->batch_rows); i++) {
		v->ops->row(ui, v, i, &l);
		print_line(&l);
	}
	if (i < n)
		printf("  ... %zu more rows\n", n - i);
}

int batch_check_views(const char *list)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (!ui_view_by_name(tok)) {
			cli_error("unknown view '%s' (%s)", tok, ui_view_names());
			return EXIT_USAGE;
		}
	return 0;
}

void batch_print_iteration(struct ui *ui, const char *views, uint64_t iter)
{
	struct tline l1, l2;
	char buf[256], *save = NULL, *tok;

	ui_header(ui, &l1, &l2);
	printf("=== iteration %llu ===\n", (unsigned long long)iter);
	print_line(&l1);
	print_line(&l2);
	ui_info_line(ui, &l1);
	print_line(&l1);
	snprintf(buf, sizeof(buf), "%s", views);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		const struct ui_view_def *d = ui_view_by_name(tok);
		struct view *v;

		if (!d)
			continue; /* batch_check_views said so before the first update */
		v = &ui->views[d->id];
		ui_view_mode(ui, d->id, d); /* the mode the name asks for */
		if (v->ops->batch)
			v->ops->batch(ui, v, section);
		else
			section(ui, v, ui_view_name(d->id));
	}
	printf("\n");
	fflush(stdout);
}
