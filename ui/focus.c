/* focus.c: the focus filters as the person set them (f, i, Enter on a label value, --focus,
 * --ignore, --tag, --thread): kept with their bytes so that they outlive snapshots, handed
 * to the model, shown on the info line, and applied to goroutines read from outside the
 * model (the Goroutines view's other modes) by the model's rule. */
#include "config.h"
#include "ui.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/util.h"

static void filter_free(struct ui_filter *f)
{
	free(f->key);
	free(f->str);
	memset(f, 0, sizeof(*f));
}

void ui_clear_filters(struct ui *ui)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++)
		filter_free(&ui->filters[i]);
	ui->nfilters = 0;
}

static void filter_remove(struct ui *ui, size_t i)
{
	filter_free(&ui->filters[i]);
	memmove(&ui->filters[i], &ui->filters[i + 1], (ui->nfilters - i - 1) * sizeof(ui->filters[0]));
	ui->nfilters--;
}

void ui_pop_filter(struct ui *ui)
{
	if (ui->nfilters)
		filter_remove(ui, ui->nfilters - 1);
}

static int bytes_eq(const char *a, size_t al, const char *b, size_t bl)
{
	return al == bl && !memcmp(a, b, al);
}

static int is_label_key(const struct ui_filter *f, const char *key, size_t key_len)
{
	return f->kind == MODEL_LABEL && bytes_eq(f->key, f->key_len, key, key_len);
}

void ui_remove_label_filter(struct ui *ui, const char *key, size_t key_len)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++)
		if (is_label_key(&ui->filters[i], key, key_len)) {
			filter_remove(ui, i);
			return;
		}
}

int ui_has_label_filter(const struct ui *ui, const char *key, size_t key_len, const char *str,
			size_t len, int64_t num)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		const struct ui_filter *f = &ui->filters[i];

		if (!is_label_key(f, key, key_len))
			continue;
		if (str ? (f->str && f->str_len == len && !memcmp(f->str, str, len))
			: (!f->str && f->num == num))
			return 1;
	}
	return 0;
}

void ui_add_filter(struct ui *ui, enum model_filter_kind kind, int exact, const char *key,
		   size_t key_len, const char *str, size_t len, int64_t num)
{
	struct ui_filter *f;
	size_t i;

	/* A label key has one focused value at a time: a new one replaces it. */
	for (i = 0; kind == MODEL_LABEL && i < ui->nfilters; i++)
		if (is_label_key(&ui->filters[i], key, key_len)) {
			filter_remove(ui, i);
			break;
		}
	if (ui->nfilters == UI_MAX_FILTERS)
		filter_remove(ui, 0);
	f = &ui->filters[ui->nfilters++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->exact = exact;
	/* Bytes, not C strings: a label key or value may hold NUL bytes. */
	if (key) {
		f->key = xmemdup0(key, key_len);
		f->key_len = key_len;
	}
	if (str) {
		f->str = xmemdup0(str, len);
		f->str_len = len;
	}
	f->num = num;
}

size_t ui_model_filters(const struct ui *ui, struct model_filter *f)
{
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		f[i].kind = ui->filters[i].kind;
		f[i].exact = ui->filters[i].exact;
		f[i].key = ui->filters[i].key;
		f[i].key_len = ui->filters[i].key_len;
		f[i].str = ui->filters[i].str;
		f[i].str_len = ui->filters[i].str_len;
		f[i].num = ui->filters[i].num;
	}
	return ui->nfilters;
}

uint64_t ui_filters_sig(const struct ui *ui)
{
	uint64_t h = 0x62617365ULL + ui->nfilters;
	size_t i;

	for (i = 0; i < ui->nfilters; i++) {
		const struct ui_filter *f = &ui->filters[i];

		h = util_mix64(h ^ ((uint64_t)f->kind << 8 | (uint64_t)f->exact) ^ (uint64_t)f->num);
		h = util_hash(f->key ? f->key : "", f->key_len, h);
		h = util_hash(f->str ? f->str : "", f->str_len, h);
	}
	return h ? h : 1;
}

void ui_filter_text(const struct ui *ui, size_t i, char *buf, size_t n)
{
	const struct ui_filter *f = &ui->filters[i];
	char a[256];

	switch (f->kind) {
	case MODEL_FOCUS:
	case MODEL_IGNORE:
		ui_escape(a, sizeof(a), f->str, f->str_len);
		snprintf(buf, n, "%s%s%s", f->kind == MODEL_IGNORE ? "-" : "", a, f->exact ? "" : "*");
		break;
	case MODEL_LABEL:
		ui_escape(a, sizeof(a), f->key, f->key_len);
		if (f->str) {
			char b[256];

			ui_escape(b, sizeof(b), f->str, f->str_len);
			snprintf(buf, n, "%s=%s", a, b);
		} else {
			snprintf(buf, n, "%s=%lld", a, (long long)f->num);
		}
		break;
	}
}

int ui_labels_pass(const struct ui *ui, const char *(*label)(void *arg, const char *key,
							       size_t klen, size_t *len),
		   void *arg, const char *skip, size_t skip_len)
{
	size_t i, j;

	for (i = 0; i < ui->nfilters; i++) {
		const struct ui_filter *f = &ui->filters[i];
		const char *v;
		size_t vl = 0;
		int any = 0;

		if (f->kind != MODEL_LABEL || !f->str ||
		    (skip && bytes_eq(f->key, f->key_len, skip, skip_len)))
			continue;
		v = label(arg, f->key, f->key_len, &vl);
		for (j = 0; j < ui->nfilters && v && !any; j++) {
			const struct ui_filter *o = &ui->filters[j];

			any = o->kind == MODEL_LABEL && o->str && is_label_key(o, f->key, f->key_len) &&
			      bytes_eq(v, vl, o->str, o->str_len);
		}
		if (!any)
			return 0;
	}
	return 1;
}
