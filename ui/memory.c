/* memory.c: how the views show a sample type of the target's heap profile (the session's
 * memory source, events with live_event.mem): the value itself beside the shares (bytes
 * or objects, where CPU views count samples), and against the baseline the growth in
 * that unit, so that a leak reads as a DELTA that keeps rising. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <string.h>

#include "gotop/util.h"

int ui_mem_viewed(const struct ui *ui)
{
	return ui->ev && ui->ev->mem;
}

/* The unit of the value shown (column 1). */
static int in_bytes(const struct ui *ui)
{
	const struct prof_value_type *t;
	size_t n = ui->ev ? prof_sample_types(ui->ev->prof, &t) : 0;
	const char *u = n > 1 ? prof_string(ui->ev->prof, t[1].unit, NULL) : NULL;

	return u && !strcmp(u, "bytes");
}

const char *ui_mem_head(const struct ui *ui)
{
	return in_bytes(ui) ? "BYTES" : "OBJECTS";
}

/* A value in 8 columns at most: exact in --batch (what tests and scripts read), else
 * with a binary prefix for bytes and a decimal one for counts. */
static void text_in(const struct ui *ui, char *buf, size_t n, int64_t v, int sign, int bytes)
{
	static const char bin[] = "BKMGTP", dec[] = " kMGTP";
	double a = (double)(v < 0 ? -v : v);
	const char *pre = bytes ? bin : dec;
	double step = bytes ? 1024 : 1000;
	size_t u = 0;

	if (ui->batch || a < step) {
		snprintf(buf, n, sign ? "%+lld" : "%lld", (long long)v);
		return;
	}
	while (a >= step && u + 1 < strlen(pre)) {
		a /= step;
		u++;
	}
	snprintf(buf, n, "%s%.*f%c", v < 0 ? "-" : sign ? "+" : "", a < 10 ? 1 : 0, a, pre[u]);
}

static void value_text(const struct ui *ui, char *buf, size_t n, int64_t v, int sign)
{
	text_in(ui, buf, n, v, sign, in_bytes(ui));
}

void ui_mem_rate(struct ui *ui, char *buf, size_t n, int64_t bytes_per_s)
{
	size_t k;

	text_in(ui, buf, n, bytes_per_s, 0, 1);
	k = strlen(buf);
	if (!ui->batch && k + 3 < n)
		memcpy(buf + k, "/s", 3);
}

void ui_mem_value(struct ui *ui, struct tline *l, int64_t v)
{
	char buf[32];

	value_text(ui, buf, sizeof(buf), v, 0);
	tl_put(l, UA_NORMAL, " "); /* a space before a --batch value wider than the column */
	tl_field(l, UA_NORMAL, buf, 8, TL_RIGHT | (ui->batch ? TL_NOCUT : 0));
}

int ui_mem_growth(struct ui *ui, char *buf, size_t n, int64_t now, int64_t then, int have)
{
	char a[32], b[32];

	if (!have) {
		snprintf(buf, n, "%7s %6s", "new", "");
		return UA_HOT;
	}
	value_text(ui, a, sizeof(a), then, 0);
	value_text(ui, b, sizeof(b), now - then, 1);
	snprintf(buf, n, ui->batch ? " %7s %6s" : "%7s %6s", a, b);
	if (!ui->batch)
		buf[GP_MIN(n - 1, (size_t)14)] = 0;
	return now > then ? UA_HOT : now < then ? UA_OK : UA_DIM;
}
