/* test-pprof.c: unit tests of the pprof writer and reader: encode, decode again (ours and
 * protobuf-c's generated unpacker) and compare field by field; bad input; atomic gzipped
 * files; and `go tool pprof -raw/-traces/-top` reading our output when Go is present. */
#include "config.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "profile.pb-c.h"

/* ---------------------------------------------------------------------------------
 * Helpers.
 */

static const char *S(const struct prof *p, uint32_t id)
{
	const char *s = prof_string(p, id, NULL);

	assert_non_null(s);
	return s;
}

/* Names used by the full profile, checked again in go tool pprof's output. */
#define FN_LEAF "main.leafInlined"
#define FN_WORK "main.work"
#define FN_MAIN "main.main"
#define FN_HELPER "main.helper"
#define FN_LIBC "__libc_start_call_main"

/* A profile with every feature: 2 sample types, 2 mappings with build ids, functions
 * with file names, a location with 3 lines (2 inlined), string and numeric labels,
 * period, time, duration, comments, default sample type. */
static struct prof *build_full(void)
{
	struct prof *p = prof_new();
	struct prof_value_type types[2] = {
		{prof_str(p, "samples"), prof_str(p, "count")},
		{prof_str(p, "cpu"), prof_str(p, "nanoseconds")},
	};
	prof_set_sample_types(p, types, 2);
	prof_set_period(p, types[1], 1000000);
	prof_set_time(p, 1700000000000000000LL, 2500000000LL);
	prof_add_comment(p, "gotop-perf test profile");
	prof_add_comment(p, "second comment");
	prof_set_default_sample_type(p, types[1].type);

	struct prof_mapping exe = {
		.start = 0x400000, .limit = 0x4a0000, .offset = 0,
		.filename = prof_str(p, "/nonexistent/gotop-test-app"),
		.build_id = prof_str(p, "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"),
		.has_functions = 1, .has_filenames = 1, .has_line_numbers = 1, .has_inline_frames = 1,
	};
	struct prof_mapping libc = {
		.start = 0x7f0000000000, .limit = 0x7f0000190000, .offset = 0x26000,
		.filename = prof_str(p, "/nonexistent/libc.so.6"),
		.build_id = prof_str(p, "Go-style/build-id_123"),
		.has_functions = 1,
	};
	uint64_t m1 = prof_add_mapping(p, &exe);
	uint64_t m2 = prof_add_mapping(p, &libc);
	uint32_t file = prof_str(p, "/src/app/main.go");
	uint64_t fleaf = prof_add_function(p, prof_str(p, FN_LEAF), prof_str(p, FN_LEAF), file, 10);
	uint64_t fwork = prof_add_function(p, prof_str(p, FN_WORK), prof_str(p, FN_WORK), file, 20);
	uint64_t fmain = prof_add_function(p, prof_str(p, FN_MAIN), prof_str(p, FN_MAIN), file, 40);
	uint64_t fhelp = prof_add_function(p, prof_str(p, FN_HELPER), prof_str(p, FN_HELPER),
					   prof_str(p, "/src/app/helper.go"), 5);
	uint64_t flibc = prof_add_function(p, prof_str(p, FN_LIBC), 0, 0, 0);

	/* Innermost first: leafInlined inlined into helper inlined into work. */
	struct prof_line inl[3] = {{fleaf, 12}, {fhelp, 7}, {fwork, 25}};
	struct prof_line lmain = {fmain, 44};
	struct prof_line lwork = {fwork, 30};
	struct prof_line llibc = {flibc, 0};
	uint64_t loc_inl = prof_add_location(p, m1, 0x401234, inl, 3);
	uint64_t loc_work = prof_add_location(p, m1, 0x401300, &lwork, 1);
	uint64_t loc_main = prof_add_location(p, m1, 0x401500, &lmain, 1);
	uint64_t loc_libc = prof_add_location(p, m2, 0x7f0000029d90, &llibc, 1);

	uint32_t kthread = prof_str(p, "thread"), kgo = prof_str(p, "goroutine");
	uint32_t khandler = prof_str(p, "handler");
	struct prof_label la[3] = {
		{.key = kthread, .num = 1234},
		{.key = khandler, .str = prof_str(p, "alpha")},
		{.key = kgo, .num = 17},
	};
	struct prof_label lb[2] = {
		{.key = kthread, .num = 5678},
		{.key = khandler, .str = prof_str(p, "beta")},
	};
	uint64_t st1[] = {loc_inl, loc_main, loc_libc};
	uint64_t st2[] = {loc_work, loc_main, loc_libc};
	int64_t v[2] = {1, 1000000};
	for (int i = 0; i < 7; i++)
		prof_add_sample(p, st1, 3, v, la, 3);
	for (int i = 0; i < 3; i++)
		prof_add_sample(p, st2, 3, v, lb, 2);
	int64_t big[2] = {2, 2000000};
	prof_add_sample(p, st1, 3, big, lb, 2);
	return p;
}

/* Field by field, ids included. */
static void assert_same_prof(const struct prof *a, const struct prof *b)
{
	assert_int_equal(prof_nstrings(a), prof_nstrings(b));
	for (uint32_t i = 0; i < prof_nstrings(a); i++) {
		size_t la, lb;
		const char *sa = prof_string(a, i, &la), *sb = prof_string(b, i, &lb);
		assert_int_equal(la, lb);
		assert_memory_equal(sa, sb, la);
	}
	assert_int_equal(prof_nmappings(a), prof_nmappings(b));
	for (size_t i = 0; i < prof_nmappings(a); i++) {
		const struct prof_mapping *x = prof_mapping_at(a, i), *y = prof_mapping_at(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->start, y->start);
		assert_int_equal(x->limit, y->limit);
		assert_int_equal(x->offset, y->offset);
		assert_int_equal(x->filename, y->filename);
		assert_int_equal(x->build_id, y->build_id);
		assert_int_equal(x->has_functions, y->has_functions);
		assert_int_equal(x->has_filenames, y->has_filenames);
		assert_int_equal(x->has_line_numbers, y->has_line_numbers);
		assert_int_equal(x->has_inline_frames, y->has_inline_frames);
	}
	assert_int_equal(prof_nfunctions(a), prof_nfunctions(b));
	for (size_t i = 0; i < prof_nfunctions(a); i++) {
		const struct prof_function *x = prof_function_at(a, i), *y = prof_function_at(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->name, y->name);
		assert_int_equal(x->system_name, y->system_name);
		assert_int_equal(x->filename, y->filename);
		assert_int_equal(x->start_line, y->start_line);
	}
	assert_int_equal(prof_nlocations(a), prof_nlocations(b));
	for (size_t i = 0; i < prof_nlocations(a); i++) {
		const struct prof_location *x = prof_location_at(a, i), *y = prof_location_at(b, i);
		assert_int_equal(x->id, y->id);
		assert_int_equal(x->mapping, y->mapping);
		assert_int_equal(x->address, y->address);
		assert_int_equal(x->nlines, y->nlines);
		for (uint32_t k = 0; k < x->nlines; k++) {
			assert_int_equal(x->lines[k].function, y->lines[k].function);
			assert_int_equal(x->lines[k].line, y->lines[k].line);
		}
	}
	const struct prof_value_type *ta, *tb;
	size_t nt = prof_sample_types(a, &ta);
	assert_int_equal(nt, prof_sample_types(b, &tb));
	for (size_t i = 0; i < nt; i++) {
		assert_int_equal(ta[i].type, tb[i].type);
		assert_int_equal(ta[i].unit, tb[i].unit);
	}
	assert_int_equal(prof_nsamples(a), prof_nsamples(b));
	for (size_t i = 0; i < prof_nsamples(a); i++) {
		struct prof_sample x, y;
		assert_int_equal(prof_sample_at(a, i, &x), 0);
		assert_int_equal(prof_sample_at(b, i, &y), 0);
		assert_int_equal(x.nlocs, y.nlocs);
		for (uint32_t k = 0; k < x.nlocs; k++)
			assert_int_equal(x.locs[k], y.locs[k]);
		for (size_t k = 0; k < nt; k++)
			assert_int_equal(x.values[k], y.values[k]);
		assert_int_equal(x.nlabels, y.nlabels);
		for (uint32_t k = 0; k < x.nlabels; k++) {
			assert_int_equal(x.labels[k].key, y.labels[k].key);
			assert_int_equal(x.labels[k].str, y.labels[k].str);
			assert_int_equal(x.labels[k].num, y.labels[k].num);
			assert_int_equal(x.labels[k].num_unit, y.labels[k].num_unit);
		}
	}
	struct prof_value_type pa, pb;
	int64_t xa, xb, ya, yb;
	prof_get_period(a, &pa, &xa);
	prof_get_period(b, &pb, &xb);
	assert_int_equal(pa.type, pb.type);
	assert_int_equal(pa.unit, pb.unit);
	assert_int_equal(xa, xb);
	prof_get_time(a, &xa, &ya);
	prof_get_time(b, &xb, &yb);
	assert_int_equal(xa, xb);
	assert_int_equal(ya, yb);
	const uint32_t *ca, *cb;
	size_t nc = prof_comments(a, &ca);
	assert_int_equal(nc, prof_comments(b, &cb));
	for (size_t i = 0; i < nc; i++)
		assert_int_equal(ca[i], cb[i]);
	assert_int_equal(prof_default_sample_type(a), prof_default_sample_type(b));
}

/* ---------------------------------------------------------------------------------
 * Encode / decode.
 */

static void test_roundtrip(void **state)
{
	struct prof *p = build_full();
	uint8_t *buf;
	size_t len;

	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	assert_true(len > 100);
	struct prof *q = pprof_decode(buf, len);
	assert_non_null(q);
	assert_same_prof(p, q);
	/* Spot checks by name, so a bug shared by both sides of the comparison shows. */
	assert_int_equal(prof_nsamples(q), 3);
	assert_int_equal(prof_total(q, 0), 12);
	assert_int_equal(prof_total(q, 1), 12000000);
	const struct prof_location *l = prof_location_at(q, 0);
	assert_int_equal(l->nlines, 3);
	assert_string_equal(S(q, prof_function_at(q, l->lines[0].function - 1)->name), FN_LEAF);
	assert_string_equal(S(q, prof_function_at(q, l->lines[2].function - 1)->name), FN_WORK);

	/* Encoding the decoded profile gives the same bytes. */
	uint8_t *buf2;
	size_t len2;
	assert_int_equal(pprof_encode(q, &buf2, &len2), 0);
	assert_int_equal(len, len2);
	assert_memory_equal(buf, buf2, len);
	free(buf2);
	free(buf);
	prof_free(q);
	prof_free(p);
}

/* protobuf-c's generated unpacker is an independent reader of our bytes. */
static void test_protobuf_c_reads_it(void **state)
{
	struct prof *p = build_full();
	uint8_t *buf;
	size_t len;

	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	Perftools__Profiles__Profile *pb = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(pb);

	assert_int_equal(pb->n_string_table, prof_nstrings(p));
	assert_string_equal(pb->string_table[0], "");
	for (size_t i = 0; i < pb->n_string_table; i++)
		assert_string_equal(pb->string_table[i], S(p, (uint32_t)i));

	const struct prof_value_type *types;
	assert_int_equal(pb->n_sample_type, prof_sample_types(p, &types));
	for (size_t i = 0; i < pb->n_sample_type; i++) {
		assert_int_equal(pb->sample_type[i]->type, types[i].type);
		assert_int_equal(pb->sample_type[i]->unit, types[i].unit);
	}
	assert_string_equal(pb->string_table[pb->sample_type[1]->type], "cpu");

	assert_int_equal(pb->n_mapping, 2);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pb->mapping[i];
		const struct prof_mapping *e = prof_mapping_at(p, i);
		assert_int_equal(m->id, e->id);
		assert_int_equal(m->memory_start, e->start);
		assert_int_equal(m->memory_limit, e->limit);
		assert_int_equal(m->file_offset, e->offset);
		assert_int_equal(m->filename, e->filename);
		assert_int_equal(m->build_id, e->build_id);
		assert_int_equal(!!m->has_functions, e->has_functions);
		assert_int_equal(!!m->has_filenames, e->has_filenames);
		assert_int_equal(!!m->has_line_numbers, e->has_line_numbers);
		assert_int_equal(!!m->has_inline_frames, e->has_inline_frames);
	}
	assert_string_equal(pb->string_table[pb->mapping[0]->build_id],
			    "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678");
	assert_int_equal(pb->mapping[1]->file_offset, 0x26000);

	assert_int_equal(pb->n_function, prof_nfunctions(p));
	for (size_t i = 0; i < pb->n_function; i++) {
		const Perftools__Profiles__Function *f = pb->function[i];
		const struct prof_function *e = prof_function_at(p, i);
		assert_int_equal(f->id, e->id);
		assert_int_equal(f->name, e->name);
		assert_int_equal(f->system_name, e->system_name);
		assert_int_equal(f->filename, e->filename);
		assert_int_equal(f->start_line, e->start_line);
	}

	assert_int_equal(pb->n_location, prof_nlocations(p));
	for (size_t i = 0; i < pb->n_location; i++) {
		const Perftools__Profiles__Location *l = pb->location[i];
		const struct prof_location *e = prof_location_at(p, i);
		assert_int_equal(l->id, e->id);
		assert_int_equal(l->mapping_id, e->mapping);
		assert_int_equal(l->address, e->address);
		assert_int_equal(l->n_line, e->nlines);
		for (size_t k = 0; k < l->n_line; k++) {
			assert_int_equal(l->line[k]->function_id, e->lines[k].function);
			assert_int_equal(l->line[k]->line, e->lines[k].line);
		}
		assert_false(l->is_folded);
	}
	/* Innermost first. */
	assert_string_equal(pb->string_table[pb->function[pb->location[0]->line[0]->function_id - 1]->name],
			    FN_LEAF);

	assert_int_equal(pb->n_sample, prof_nsamples(p));
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pb->sample[i];
		struct prof_sample e;
		prof_sample_at(p, i, &e);
		assert_int_equal(s->n_location_id, e.nlocs);
		for (size_t k = 0; k < s->n_location_id; k++)
			assert_int_equal(s->location_id[k], e.locs[k]);
		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[0], e.values[0]);
		assert_int_equal(s->value[1], e.values[1]);
		assert_int_equal(s->n_label, e.nlabels);
		for (size_t k = 0; k < s->n_label; k++) {
			assert_int_equal(s->label[k]->key, e.labels[k].key);
			assert_int_equal(s->label[k]->str, e.labels[k].str);
			/* String labels carry no num (profile.proto: at most one is present). */
			assert_int_equal(s->label[k]->num, e.labels[k].str ? 0 : e.labels[k].num);
			assert_int_equal(s->label[k]->num_unit, e.labels[k].num_unit);
		}
	}
	/* The first sample: 7 x (1, 1ms) + nothing else with those labels. */
	assert_int_equal(pb->sample[0]->value[0], 7);
	assert_int_equal(pb->sample[0]->value[1], 7000000);
	assert_int_equal(pb->sample[0]->n_label, 3);

	struct prof_value_type pt;
	int64_t period, t, d;
	prof_get_period(p, &pt, &period);
	prof_get_time(p, &t, &d);
	assert_non_null(pb->period_type);
	assert_int_equal(pb->period_type->type, pt.type);
	assert_int_equal(pb->period_type->unit, pt.unit);
	assert_int_equal(pb->period, 1000000);
	assert_int_equal(pb->time_nanos, 1700000000000000000LL);
	assert_int_equal(pb->duration_nanos, 2500000000LL);
	assert_int_equal(pb->n_comment, 2);
	assert_string_equal(pb->string_table[pb->comment[0]], "gotop-perf test profile");
	assert_string_equal(pb->string_table[pb->comment[1]], "second comment");
	assert_string_equal(pb->string_table[pb->default_sample_type], "cpu");
	assert_int_equal(pb->drop_frames, 0);
	assert_int_equal(pb->keep_frames, 0);

	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(buf);
	prof_free(p);
}

static void test_nul_and_edge_values(void **state)
{
	struct prof *p = prof_new();
	struct prof_value_type t = {prof_str(p, "v"), prof_strn(p, "u\0nit", 5)};
	prof_set_sample_types(p, &t, 1);
	uint32_t name = prof_strn(p, "f\0g", 3);
	uint64_t f = prof_add_function(p, name, prof_strn(p, "\0", 1), 0, -5);
	struct prof_line l = {f, -1};
	uint64_t loc = prof_add_location(p, 0, UINT64_MAX, &l, 1);
	uint64_t loc2 = prof_add_location(p, 0, 0, NULL, 0);
	struct prof_label lab[2] = {
		{.key = prof_str(p, "neg"), .num = INT64_MIN, .num_unit = prof_str(p, "bytes")},
		{.key = prof_strn(p, "k\0", 2), .str = prof_strn(p, "v\0v", 3)},
	};
	uint64_t st[2] = {loc, loc2};
	int64_t v = -42;
	prof_add_sample(p, st, 2, &v, lab, 2);
	v = INT64_MAX;
	prof_add_sample(p, NULL, 0, &v, NULL, 0);
	prof_set_time(p, -1, INT64_MAX);

	uint8_t *buf;
	size_t len;
	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	struct prof *q = pprof_decode(buf, len);
	assert_non_null(q);
	assert_same_prof(p, q);
	size_t sl;
	assert_memory_equal(prof_string(q, name, &sl), "f\0g", 3);
	assert_int_equal(sl, 3);
	free(buf);
	prof_free(q);
	prof_free(p);
}

static void test_zero_samples_left_out(void **state)
{
	struct prof *p = build_full();
	uint8_t *buf;
	size_t len;

	prof_reset_samples(p);
	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	struct prof *q = pprof_decode(buf, len);
	assert_non_null(q);
	assert_int_equal(prof_nsamples(q), 0);
	assert_int_equal(prof_nlocations(q), prof_nlocations(p));
	free(buf);
	prof_free(q);
	prof_free(p);

	/* An empty profile encodes to a valid one: just string_table[0]. */
	p = prof_new();
	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	assert_int_equal(len, 2);
	assert_int_equal(buf[0], 6 << 3 | 2);
	assert_int_equal(buf[1], 0);
	q = pprof_decode(buf, len);
	assert_non_null(q);
	assert_same_prof(p, q);
	free(buf);
	prof_free(q);
	prof_free(p);
}

/* --- hand-made wire bytes, for what our encoder never writes --- */

struct hb {
	uint8_t b[4096];
	size_t n;
};

static void hb_varint(struct hb *h, uint64_t v)
{
	while (v >= 0x80) {
		h->b[h->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	h->b[h->n++] = (uint8_t)v;
}

static void hb_int(struct hb *h, unsigned field, uint64_t v)
{
	hb_varint(h, field << 3);
	hb_varint(h, v);
}

static void hb_bytes(struct hb *h, unsigned field, const void *p, size_t n)
{
	hb_varint(h, field << 3 | 2);
	hb_varint(h, n);
	memcpy(h->b + h->n, p, n);
	h->n += n;
}

static void hb_msg(struct hb *h, unsigned field, const struct hb *m)
{
	hb_bytes(h, field, m->b, m->n);
}

static void hb_str(struct hb *h, const char *s)
{
	hb_bytes(h, 6, s, strlen(s));
}

/* A valid profile written the other ways the format allows: fields out of order,
 * unpacked repeated scalars, sparse ids, unknown fields of every wire type, a
 * duplicated string. */
static void build_unusual(struct hb *h, int variant)
{
	struct hb m = {0}, s = {0}, l = {0}, ln = {0}, lab = {0}, f = {0}, vt = {0};

	h->n = 0;
	/* sample first: refers to things that come later */
	hb_int(&s, 1, 700); /* location_id, unpacked */
	hb_int(&s, 1, 900);
	hb_int(&s, 2, 5); /* value, unpacked */
	hb_int(&lab, 1, 4); /* key "thread" */
	hb_int(&lab, 3, 99);
	hb_msg(&s, 3, &lab);
	hb_msg(h, 2, &s);
	/* unknown fields: varint 20, fixed64 21, bytes 22, fixed32 23 */
	hb_int(h, 20, 1);
	hb_varint(h, 21 << 3 | 1);
	memcpy(h->b + h->n, "12345678", 8);
	h->n += 8;
	hb_bytes(h, 22, "xyz", 3);
	hb_varint(h, 23 << 3 | 5);
	memcpy(h->b + h->n, "1234", 4);
	h->n += 4;
	hb_str(h, "");
	hb_str(h, "samples");
	hb_str(h, "count");
	hb_str(h, "fn");
	hb_str(h, "thread");
	hb_str(h, "fn"); /* index 5: a duplicate */
	hb_int(&m, 1, 42);
	hb_int(&m, 2, 0x1000);
	hb_int(&m, 3, 0x2000);
	hb_int(&m, 9, 1);
	hb_msg(h, 3, &m);
	hb_int(&f, 1, 1000);
	hb_int(&f, 2, 3);
	hb_msg(h, 5, &f);
	hb_int(&f, 1, 1);
	hb_msg(h, 5, &f); /* same content, other id: folded */
	hb_int(&l, 1, 900);
	hb_int(&l, 2, 42);
	hb_int(&l, 3, 0x1500);
	hb_int(&ln, 1, variant ? 1001 : 1000); /* 1001: no such function */
	hb_int(&ln, 2, 77);
	hb_msg(&l, 4, &ln);
	hb_msg(h, 4, &l);
	l.n = 0;
	hb_int(&l, 1, 700);
	hb_int(&l, 3, 0x1600);
	hb_msg(h, 4, &l);
	hb_int(&vt, 1, 1);
	hb_int(&vt, 2, 2);
	hb_msg(h, 1, &vt);
	hb_int(h, 13, 3); /* comment, unpacked */
	hb_int(h, 13, 5);
	hb_int(h, 7, 1); /* drop_frames: read, not kept */
}

static void test_decode_unusual(void **state)
{
	struct hb h;

	build_unusual(&h, 0);
	struct prof *p = pprof_decode(h.b, h.n);
	assert_non_null(p);
	assert_int_equal(prof_nsamples(p), 1);
	struct prof_sample s;
	prof_sample_at(p, 0, &s);
	assert_int_equal(s.values[0], 5);
	assert_int_equal(s.nlocs, 2);
	/* File location 700 came second: prof id 2; 900 is prof id 1. */
	assert_int_equal(s.locs[0], 2);
	assert_int_equal(s.locs[1], 1);
	const struct prof_location *l = prof_location_at(p, 0);
	assert_int_equal(l->address, 0x1500);
	assert_int_equal(l->mapping, 1);
	assert_int_equal(l->nlines, 1);
	assert_int_equal(l->lines[0].line, 77);
	assert_string_equal(S(p, prof_function_at(p, l->lines[0].function - 1)->name), "fn");
	assert_int_equal(prof_location_at(p, 1)->mapping, 0);
	assert_int_equal(prof_nfunctions(p), 1);
	assert_int_equal(prof_mapping_at(p, 0)->has_line_numbers, 1);
	assert_int_equal(prof_mapping_at(p, 0)->has_functions, 0);
	assert_int_equal(s.nlabels, 1);
	assert_string_equal(S(p, s.labels[0].key), "thread");
	assert_int_equal(s.labels[0].num, 99);
	const uint32_t *c;
	assert_int_equal(prof_comments(p, &c), 2);
	assert_string_equal(S(p, c[0]), "fn");
	assert_int_equal(c[0], c[1]); /* the duplicate string folds into one id */
	prof_free(p);

	build_unusual(&h, 1); /* a line naming a function that does not exist */
	errno = 0;
	assert_null(pprof_decode(h.b, h.n));
	assert_int_equal(errno, EBADMSG);
}

/* Decodes and expects failure with errno e. */
static void expect_bad(const struct hb *h, int e)
{
	errno = 0;
	struct prof *p = pprof_decode(h->b, h->n);
	if (p) {
		prof_free(p);
		fail_msg("decoded a bad profile of %zu bytes", h->n);
	}
	assert_int_equal(errno, e);
}

static void test_decode_bad(void **state)
{
	struct hb h = {0}, m = {0}, s = {0}, vt = {0};

	/* No string table: string_table[0] must be "". */
	h.n = 0;
	expect_bad(&h, EBADMSG);
	hb_str(&h, "x");
	expect_bad(&h, EBADMSG);
	/* A string index past the table. */
	h.n = 0;
	hb_str(&h, "");
	hb_int(&vt, 1, 1);
	hb_msg(&h, 1, &vt);
	expect_bad(&h, EBADMSG);
	/* Negative string index (int64 -1). */
	h.n = 0;
	hb_str(&h, "");
	hb_int(&h, 14, UINT64_MAX);
	expect_bad(&h, EBADMSG);
	/* Mapping id 0; duplicate mapping ids (out of order). */
	h.n = 0;
	hb_str(&h, "");
	m.n = 0;
	hb_int(&m, 2, 5);
	hb_msg(&h, 3, &m);
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	for (int i = 0; i < 3; i++) {
		m.n = 0;
		hb_int(&m, 1, i == 2 ? 3 : 3 - (uint64_t)i); /* ids 3, 2, 3 */
		hb_int(&m, 2, (uint64_t)i);
		hb_msg(&h, 3, &m);
	}
	expect_bad(&h, EBADMSG);
	/* A location with an unknown mapping. */
	h.n = 0;
	hb_str(&h, "");
	m.n = 0;
	hb_int(&m, 1, 1);
	hb_int(&m, 2, 9);
	hb_msg(&h, 4, &m);
	expect_bad(&h, EBADMSG);
	/* A sample with an unknown location; with too few values. */
	h.n = 0;
	hb_str(&h, "");
	s.n = 0;
	hb_int(&s, 1, 1);
	hb_msg(&h, 2, &s);
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	vt.n = 0;
	hb_msg(&h, 1, &vt);
	s.n = 0;
	hb_msg(&h, 2, &s);
	expect_bad(&h, EBADMSG);
	/* More sample types than PROF_MAX_VALUES. */
	h.n = 0;
	hb_str(&h, "");
	for (int i = 0; i <= PROF_MAX_VALUES; i++)
		hb_msg(&h, 1, &vt);
	expect_bad(&h, EOVERFLOW);
	/* Wire-level damage: group wire type, field 0, an 11-byte varint, a length past
	 * the end, a scalar field sent as bytes. */
	h.n = 0;
	hb_str(&h, "");
	hb_varint(&h, 20 << 3 | 3);
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	hb_varint(&h, 0);
	hb_varint(&h, 0);
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	hb_varint(&h, 9 << 3);
	for (int i = 0; i < 10; i++)
		h.b[h.n++] = 0xff;
	h.b[h.n++] = 0x01;
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	hb_varint(&h, 6 << 3 | 2);
	hb_varint(&h, 1000);
	expect_bad(&h, EBADMSG);
	h.n = 0;
	hb_str(&h, "");
	hb_bytes(&h, 9, "ab", 2);
	expect_bad(&h, EBADMSG);
	/* Bad gzip: magic then garbage; truncated stream; trailing garbage. */
	h.n = 0;
	memcpy(h.b, "\x1f\x8b\x08\x00garbage-garbage", 20);
	h.n = 20;
	expect_bad(&h, EBADMSG);
}

/* Every prefix and many single-byte corruptions of a real profile, plain and gzipped:
 * each either decodes or fails with EBADMSG, never crashes (run under ASan with
 * --enable-asan). */
static void test_decode_damaged(void **state)
{
	struct prof *p = build_full();
	uint8_t *buf;
	size_t len;
	char path[] = "/tmp/gotop-test-pprof-XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pprof_encode(p, &buf, &len), 0);
	assert_int_equal(pprof_write_file(p, path), 0);
	prof_free(p);

	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static uint8_t gz[1 << 16];
	size_t gzlen = fread(gz, 1, sizeof(gz), f);
	fclose(f);
	unlink(path);
	assert_true(gzlen > 20 && gzlen < sizeof(gz));

	for (int pass = 0; pass < 2; pass++) {
		const uint8_t *src = pass ? gz : buf;
		size_t n = pass ? gzlen : len;
		uint8_t *copy = malloc(n);
		size_t ok = 0;

		for (size_t cut = 0; cut < n; cut++) {
			memcpy(copy, src, cut);
			errno = 0;
			struct prof *q = pprof_decode(copy, cut);
			if (q) {
				ok++;
				prof_free(q);
			} else {
				assert_true(errno == EBADMSG || errno == EOVERFLOW);
			}
		}
		uint32_t seed = 12345;
		for (int i = 0; i < 4000; i++) {
			memcpy(copy, src, n);
			seed = seed * 1103515245 + 12345;
			size_t at = (seed >> 8) % n;
			seed = seed * 1103515245 + 12345;
			copy[at] ^= (uint8_t)(1 + (seed >> 16) % 255);
			errno = 0;
			struct prof *q = pprof_decode(copy, n);
			if (q) {
				/* Whatever decoded must encode again. */
				uint8_t *b2;
				size_t l2;
				assert_int_equal(pprof_encode(q, &b2, &l2), 0);
				free(b2);
				prof_free(q);
			} else {
				assert_true(errno == EBADMSG || errno == EOVERFLOW);
			}
		}
		free(copy);
		/* Truncated gzip never decodes; a truncated message sometimes ends on a
		 * field boundary and is then a valid, smaller profile. */
		if (pass)
			assert_int_equal(ok, 0);
	}
	free(buf);
}

/* ---------------------------------------------------------------------------------
 * Files.
 */

static char *make_tmpdir(void)
{
	char *d = strdup("/tmp/gotop-test-pprof-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* Number of directory entries other than . and .. */
static int count_entries(const char *dir, const char *must_not_contain)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (must_not_contain && strstr(e->d_name, must_not_contain))
			fail_msg("leftover file %s/%s", dir, e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

static char *read_all(const char *path, size_t *lenp)
{
	FILE *f = fopen(path, "rb");
	char *b = NULL;
	size_t n = 0, cap = 0, r;

	if (!f)
		return NULL;
	do {
		if (cap - n < 4096) {
			cap = cap * 2 + 8192;
			b = realloc(b, cap + 1);
		}
		r = fread(b + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	b[n] = '\0';
	if (lenp)
		*lenp = n;
	return b;
}

static void test_write_file(void **state)
{
	char *dir = make_tmpdir();
	char path[512], other[512];
	struct prof *p = build_full();
	mode_t old = umask(022);

	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	assert_int_equal(pprof_check_writable(path), 0);
	assert_int_equal(count_entries(dir, NULL), 0); /* the probe file is gone */
	assert_int_equal(pprof_write_file(p, path), 0);
	assert_int_equal(count_entries(dir, ".tmp."), 1);

	size_t n;
	char *b = read_all(path, &n);
	assert_non_null(b);
	/* gzip magic and deflate method: RFC 1952 (31, 139, 8). */
	assert_true(n > 18);
	assert_int_equal((uint8_t)b[0], 0x1f);
	assert_int_equal((uint8_t)b[1], 0x8b);
	assert_int_equal((uint8_t)b[2], 8);
	free(b);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* 0666 less the umask */

	struct prof *q = pprof_read_file(path);
	assert_non_null(q);
	assert_same_prof(p, q);
	prof_free(q);

	/* gzip(1) decompresses it to exactly pprof_encode's bytes. */
	uint8_t *enc;
	size_t enclen;
	assert_int_equal(pprof_encode(p, &enc, &enclen), 0);
	snprintf(other, sizeof(other), "%s/plain.pb", dir);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "gzip -dc < '%s' > '%s'", path, other);
	if (system(cmd) == 0) {
		b = read_all(other, &n);
		assert_int_equal(n, enclen);
		assert_memory_equal(b, enc, n);
		free(b);
		/* The plain encoding is read too. */
		q = pprof_read_file(other);
		assert_non_null(q);
		assert_same_prof(p, q);
		prof_free(q);
		unlink(other);
	} else {
		printf("# gzip(1) not usable: skipped the independent gunzip check\n");
	}
	free(enc);

	/* Replacing an existing file. */
	prof_reset_samples(p);
	assert_int_equal(pprof_write_file(p, path), 0);
	q = pprof_read_file(path);
	assert_non_null(q);
	assert_int_equal(prof_nsamples(q), 0);
	prof_free(q);
	assert_int_equal(count_entries(dir, ".tmp."), 1);

	/* Errors: missing directory, path is a directory, empty path, missing file. */
	snprintf(other, sizeof(other), "%s/no/such/dir/out.pb.gz", dir);
	assert_int_equal(pprof_check_writable(other), -ENOENT);
	assert_int_equal(pprof_write_file(p, other), -ENOENT);
	assert_int_equal(pprof_check_writable(dir), -EISDIR);
	assert_int_equal(pprof_write_file(p, dir), -EISDIR);
	assert_int_equal(pprof_check_writable(""), -ENOENT);
	errno = 0;
	assert_null(pprof_read_file(other));
	assert_int_equal(errno, ENOENT);
	/* A relative path (directory "."). */
	char cwd[512];
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(dir), 0);
	assert_int_equal(pprof_write_file(p, "rel.pb.gz"), 0);
	assert_int_equal(chdir(cwd), 0);
	snprintf(other, sizeof(other), "%s/rel.pb.gz", dir);
	q = pprof_read_file(other);
	assert_non_null(q);
	prof_free(q);
	assert_int_equal(count_entries(dir, ".tmp."), 2);

	/* A symbolic link to a file stays a link; its target gets the profile. */
	char link[600], target[600];
	snprintf(target, sizeof(target), "%s/target.pb.gz", dir);
	snprintf(link, sizeof(link), "%s/link.pb.gz", dir);
	assert_int_equal(pprof_write_file(p, target), 0);
	assert_int_equal(symlink("target.pb.gz", link), 0);
	prof_add_sample(p, NULL, 0, (const int64_t[]){5, 6}, NULL, 0);
	assert_int_equal(pprof_check_writable(link), 0);
	assert_int_equal(pprof_write_file(p, link), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	q = pprof_read_file(target);
	assert_non_null(q);
	assert_int_equal(prof_nsamples(q), 1);
	prof_free(q);

	/* A path that is not a file (/dev/null, a FIFO) is written in place, never replaced
	 * by one: renaming over /dev/null as root turned it into a file. */
	char fifo[600];
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	/* Nobody reading: an error at once (the UI's save must not hang), the FIFO kept. */
	assert_int_equal(pprof_write_file(p, fifo), -ENXIO);
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	int rfd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader */
	assert_true(rfd >= 0);
	assert_int_equal(pprof_check_writable(fifo), 0);
	assert_int_equal(pprof_write_file(p, fifo), 0); /* a small profile: fits the pipe */
	assert_int_equal(stat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	uint8_t pipebuf[4096];
	ssize_t got = read(rfd, pipebuf, sizeof(pipebuf));
	assert_true(got > 18);
	assert_int_equal(pipebuf[0], 0x1f);
	assert_int_equal(pipebuf[1], 0x8b);
	close(rfd);
	assert_int_equal(count_entries(dir, ".tmp."), 5); /* no temporary file beside the FIFO */
	struct stat nst;
	assert_int_equal(stat("/dev/null", &nst), 0);
	if (S_ISCHR(nst.st_mode)) {
		assert_int_equal(pprof_check_writable("/dev/null"), 0);
		assert_int_equal(pprof_write_file(p, "/dev/null"), 0);
		assert_int_equal(stat("/dev/null", &nst), 0);
		assert_true(S_ISCHR(nst.st_mode));
	}

	umask(old);
	prof_free(p);
	rm_rf(dir);
	free(dir);
}

/* Ends a forked child, first freeing what it inherited: valgrind checks a child for leaks
 * at its _exit too, and a leak there makes the child's exit status valgrind's error code. */
static _Noreturn void child_exit(struct prof *p, char *dir, int code)
{
	prof_free(p);
	free(dir);
	_exit(code);
}

/* An unwritable directory gives -EACCES. Root passes permission checks, so as root
 * the check runs in a child that has become nobody (65534). */
static void test_unwritable_dir(void **state)
{
	char *dir = make_tmpdir();
	char path[512];
	struct prof *p = build_full();

	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	assert_int_equal(chmod(dir, 0555), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (geteuid() == 0 &&
		    (setgroups(0, NULL) || setgid(65534) || setuid(65534)))
			child_exit(p, dir, 99);
		int a = pprof_check_writable(path);
		int b = pprof_write_file(p, path);
		child_exit(p, dir, a == -EACCES && b == -EACCES ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 99)
		printf("# could not become nobody: -EACCES not checked\n");
	else
		assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(count_entries(dir, NULL), 0);
	chmod(dir, 0755);
	prof_free(p);
	rm_rf(dir);
	free(dir);
}

/* A write that fails half way (file size limit: EFBIG) leaves the old file untouched
 * and no temporary file behind. */
static void test_failed_write_is_atomic(void **state)
{
	char *dir = make_tmpdir();
	char path[512];
	struct prof *p = prof_new();

	/* A profile far bigger than the limit, even gzipped. */
	struct prof_value_type t = {prof_str(p, "samples"), prof_str(p, "count")};
	prof_set_sample_types(p, &t, 1);
	char name[64];
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "f%d-%x", i, i * 2654435761u);
		uint64_t f = prof_add_function(p, prof_str(p, name), 0, 0, 0);
		struct prof_line l = {f, i};
		uint64_t loc = prof_add_location(p, 0, (uint64_t)i * 977, &l, 1);
		int64_t v = i + 1;
		prof_add_sample(p, &loc, 1, &v, NULL, 0);
	}
	snprintf(path, sizeof(path), "%s/out.pb.gz", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("old contents", f);
	fclose(f);

	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {4096, 4096};
		signal(SIGXFSZ, SIG_IGN);
		if (setrlimit(RLIMIT_FSIZE, &rl))
			child_exit(p, dir, 99);
		child_exit(p, dir, pprof_write_file(p, path) == -EFBIG ? 0 : 1);
	}
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	char *b = read_all(path, NULL);
	assert_string_equal(b, "old contents");
	free(b);
	assert_int_equal(count_entries(dir, ".tmp."), 1);
	prof_free(p);
	rm_rf(dir);
	free(dir);
}

/* ---------------------------------------------------------------------------------
 * go tool pprof reads what we write.
 */

/* Runs argv with stdout and stderr into files; returns the exit status or -1. */
static int run(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (o < 0 || e < 0 || nul < 0)
			_exit(126);
		dup2(nul, 0);
		dup2(o, 1);
		dup2(e, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static const char *srcdir(void)
{
	static char buf[4096];
	const char *s = getenv("TOP_SRCDIR");

	if (s)
		return s;
	/* Run by hand: the source tree is where this file was compiled from. */
	snprintf(buf, sizeof(buf), "%s", __FILE__);
	char *slash = strrchr(buf, '/');
	if (!slash)
		return NULL;
	strcpy(slash, "/..");
	return buf;
}

/* GOROOT of Go 1.23 from tests/helpers/go-toolchain.sh, or NULL. */
static char *go_root(const char *tmp)
{
	const char *src = srcdir();
	char script[4200], out[600], err[600];

	if (!src)
		return NULL;
	snprintf(script, sizeof(script), "%s/tests/helpers/go-toolchain.sh", src);
	if (access(script, R_OK) != 0)
		return NULL;
	snprintf(out, sizeof(out), "%s/goroot.out", tmp);
	snprintf(err, sizeof(err), "%s/goroot.err", tmp);
	char *argv[] = {"sh", script, "1.23", NULL};
	if (run(argv, out, err) != 0)
		return NULL;
	char *r = read_all(out, NULL);
	if (!r)
		return NULL;
	r[strcspn(r, "\n")] = '\0';
	char gobin[4200];
	snprintf(gobin, sizeof(gobin), "%s/bin/go", r);
	if (!*r || access(gobin, X_OK) != 0) {
		free(r);
		return NULL;
	}
	return r;
}

/* Runs `go tool pprof FLAGS... FILE`, requires exit 0 and an empty stderr, and
 * returns stdout (caller frees). */
static char *go_pprof(const char *goroot, const char *tmp, const char *file, const char *flag1,
		      const char *flag2)
{
	char gobin[600], out[600], err[600];

	snprintf(gobin, sizeof(gobin), "%s/bin/go", goroot);
	snprintf(out, sizeof(out), "%s/pprof.out", tmp);
	snprintf(err, sizeof(err), "%s/pprof.err", tmp);
	char *argv[8];
	int n = 0;
	argv[n++] = gobin;
	argv[n++] = "tool";
	argv[n++] = "pprof";
	argv[n++] = (char *)flag1;
	if (flag2)
		argv[n++] = (char *)flag2;
	argv[n++] = (char *)file;
	argv[n] = NULL;
	int rc = run(argv, out, err);
	char *e = read_all(err, NULL);
	char *o = read_all(out, NULL);
	assert_non_null(o);
	assert_non_null(e);
	if (rc != 0 || *e)
		fail_msg("go tool pprof %s %s: exit %d, stderr: %s", flag1, flag2 ? flag2 : "", rc, e);
	free(e);
	return o;
}

static void assert_contains(const char *hay, const char *needle, const char *what)
{
	if (!strstr(hay, needle))
		fail_msg("%s: \"%s\" not found in:\n%s", what, needle, hay);
}

static void test_go_tool_pprof(void **state)
{
	char *dir = make_tmpdir();
	char *goroot = go_root(dir);

	if (!goroot) {
		printf("# SKIP tests/helpers/go-toolchain.sh 1.23 gave no Go toolchain\n");
		rm_rf(dir);
		free(dir);
		skip();
		return;
	}
	char gocache[600], file[600];
	snprintf(gocache, sizeof(gocache), "%s/gocache", dir);
	setenv("GOROOT", goroot, 1);
	setenv("GOTOOLCHAIN", "local", 1);
	setenv("GOCACHE", gocache, 1);
	setenv("GO111MODULE", "off", 1);
	setenv("GOFLAGS", "-mod=mod", 1);
	/* Nothing to fetch or symbolize: every mapping says it has functions already. */
	setenv("PPROF_BINARY_PATH", dir, 1);
	setenv("PPROF_TMPDIR", dir, 1);
	setenv("HOME", dir, 1);

	struct prof *p = build_full();
	snprintf(file, sizeof(file), "%s/test.pb.gz", dir);
	assert_int_equal(pprof_write_file(p, file), 0);

	/* -raw: every table as pprof parsed it. */
	char *o = go_pprof(goroot, dir, file, "-raw", NULL);
	assert_contains(o, "PeriodType: cpu nanoseconds", "-raw");
	assert_contains(o, "Period: 1000000", "-raw");
	assert_contains(o, "samples/count cpu/nanoseconds[dflt]", "-raw");
	assert_contains(o, "Duration: 2.5s", "-raw");
	assert_contains(o, "gotop-perf test profile", "-raw");
	assert_contains(o, FN_LEAF " /src/app/main.go:12", "-raw");
	assert_contains(o, FN_HELPER " /src/app/helper.go:7", "-raw");
	assert_contains(o, "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "-raw");
	assert_contains(o, "Go-style/build-id_123", "-raw");
	assert_contains(o, "/nonexistent/libc.so.6", "-raw");
	assert_contains(o, "handler:[alpha]", "-raw");
	assert_contains(o, "thread:[1234]", "-raw");
	assert_contains(o, "goroutine:[17]", "-raw");
	/* The three samples with their values. */
	assert_contains(o, "          7    7000000: 1 3 4 \n", "-raw");
	assert_contains(o, "          3    3000000: 2 3 4 \n", "-raw");
	assert_contains(o, "          2    2000000: 1 3 4 \n", "-raw");
	assert_contains(o, "0x401234 M=1 " FN_LEAF " /src/app/main.go:12", "-raw");
	assert_contains(o, "0x7f0000000000/0x7f0000190000/0x26000 /nonexistent/libc.so.6", "-raw");
	free(o);

	/* -traces: each stack with its labels; inlined frames marked. */
	o = go_pprof(goroot, dir, file, "-traces", NULL);
	assert_contains(o, " handler:  alpha\n", "-traces");
	assert_contains(o, " handler:  beta\n", "-traces");
	assert_contains(o, " thread:  1234\n", "-traces");
	assert_contains(o, " thread:  5678\n", "-traces");
	assert_contains(o, " goroutine:  17\n", "-traces");
	/* The exact chains, leaf first, inlined frames of one location marked. */
	assert_contains(o, "       7ms   " FN_LEAF " (inline)\n"
			   "             " FN_HELPER " (inline)\n"
			   "             " FN_WORK "\n"
			   "             " FN_MAIN "\n"
			   "             " FN_LIBC "\n", "-traces");
	assert_contains(o, "       3ms   " FN_WORK "\n"
			   "             " FN_MAIN "\n"
			   "             " FN_LIBC "\n", "-traces");
	assert_contains(o, "Build ID: a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", "-traces");
	free(o);

	/* -top: totals in both sample types. */
	o = go_pprof(goroot, dir, file, "-top", NULL);
	assert_contains(o, "Type: cpu", "-top");
	assert_contains(o, "Total samples = 12ms", "-top");
	assert_contains(o, "Showing nodes accounting for 12ms, 100% of 12ms total", "-top");
	assert_contains(o, FN_LEAF, "-top");
	assert_contains(o, FN_WORK, "-top");
	free(o);
	o = go_pprof(goroot, dir, file, "-top", "-sample_index=samples");
	assert_contains(o, "Type: samples", "-top -sample_index=samples");
	assert_contains(o, "of 12 total", "-top -sample_index=samples");
	free(o);

	prof_free(p);
	free(goroot);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_protobuf_c_reads_it),
		cmocka_unit_test(test_nul_and_edge_values),
		cmocka_unit_test(test_zero_samples_left_out),
		cmocka_unit_test(test_decode_unusual),
		cmocka_unit_test(test_decode_bad),
		cmocka_unit_test(test_decode_damaged),
		cmocka_unit_test(test_write_file),
		cmocka_unit_test(test_unwritable_dir),
		cmocka_unit_test(test_failed_write_is_atomic),
		cmocka_unit_test(test_go_tool_pprof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
