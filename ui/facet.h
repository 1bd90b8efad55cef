/* facet.h: the part the views that split samples by the values of one label key share
 * (view-facets.c): the values under the focus with their shares and a group's members'
 * columns, the row of the samples without the key, the common cells, Enter to focus on a
 * value, search by hot function. Labels and Threads (view-facets.c) and the Goroutines
 * view's on-CPU mode (view-goroutines.c) are built on it. */
#ifndef GOTOP_UI_FACET_H
#define GOTOP_UI_FACET_H

#include "ui.h"

struct facet {
	char *key;               /* the key shown (key_len bytes, NUL-terminated too) */
	size_t key_len;
	struct model_value *vals; /* by value, descending */
	size_t n;
	struct model_totals tot;
	int64_t rest_value;      /* samples without the key */
	uint64_t rest_n;
	int has_rest;
	size_t rest_at;          /* its row, in value order among vals[] */
	/* A group's members: each value's totals of each member (vals' order, nxmodel a
	 * value), and those of the samples without the key. */
	int64_t *xv;
	size_t capxv;
	int64_t xrest[PROF_MAX_VALUES - 2];
};

void facet_set_key(struct facet *f, const char *key, size_t len);
/* The key's values under the focus (model_label_values), the members' and the rest;
 * none without a model. */
void facet_values(struct ui *ui, struct facet *f);
/* No values (the key kept); facet_fini frees everything. */
void facet_clear(struct facet *f);
void facet_fini(struct facet *f);
/* A row's identity: of a value (NULL: the samples without the key), under the key. */
uint64_t facet_value_id(const struct facet *f, const struct model_value *val);
/* The members' values of a value's row (NULL: the samples without the key), or NULL
 * when the event is not a group. */
const int64_t *facet_member_values(struct ui *ui, const struct facet *f,
				   const struct model_value *val);
/* A title line's first cells: SHARE%, SAMPLES and the members' headers. */
void facet_title_cells(struct ui *ui, struct tline *l);
/* A row's first cells: the share of value, the samples n, the members' values x (NULL:
 * none). */
void facet_count_cells(struct ui *ui, const struct facet *f, int64_t value, uint64_t n,
		       const int64_t *x, struct tline *l);
/* The value cell of the samples without the key ("(no KEY)"), width columns. */
void facet_rest_cell(struct ui *ui, const struct facet *f, int width, struct tline *l);
/* The last cell: a hot function (model index; -1: none). */
void facet_hot_fn(struct ui *ui, long fn, struct tline *l);
/* Enter on a value (NULL: the samples without the key, which cannot be focused): focus
 * the views on it and show Top, or, when it is focused already, take that focus away. */
int facet_focus(struct ui *ui, struct view *v, const struct facet *f, const struct model_value *val);
/* n and N: the next or previous row (of nrows) whose hot function (top_fn(v, row), -1:
 * none) holds the search text. R_* flags. */
int facet_find(struct ui *ui, struct view *v, size_t nrows, long (*top_fn)(struct view *v, size_t row),
	       int dir);

#endif
