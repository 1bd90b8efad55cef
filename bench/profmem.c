/* profmem.c: the heap that a profile and the live UI's model hold, for a given pprof file.
 *
 * The live UI's memory grows with the profile's entries (distinct stacks, labels, threads);
 * a long run on a large service is what shows it, but measuring one change that way takes
 * half an hour. This loads a pprof file that gotop-perf saved from such a run into a fresh
 * profile (the same entries, stacks, locations and labels), then builds the model and the
 * views' products over it as the live UI does (snapshot, model_update, flat, top-down
 * tree, label keys), and prints the allocator's in-use bytes (mallinfo2) after each step.
 *
 *   (bench/README.md has the compile line)
 *   build/profmem FILE.pb.gz
 */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "gotop/model.h"
#include "gotop/profile.h"
#include "profile.pb-c.h"

static size_t used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* RssAnon from /proc/self/status, in bytes: what --max-memory counts. */
static size_t rss_anon(void)
{
	char line[256];
	size_t kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "RssAnon: %zu kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

static size_t anon_base;

static uint8_t *slurp_gz(const char *path, size_t *len)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 20, n = 0;
	uint8_t *b = malloc(cap);
	int r;

	if (!f) {
		perror(path);
		exit(1);
	}
	while ((r = gzread(f, b + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)r;
		if (n == cap)
			b = realloc(b, cap *= 2);
	}
	gzclose(f);
	*len = n;
	return b;
}

static void step(const char *what, size_t base, size_t *last)
{
	size_t u = used();

	printf("%-30s heap %7.2f MB (%+7.2f)   anon %7.2f MB\n", what,
	       (double)(u - base) / 1e6, ((double)u - (double)*last) / 1e6,
	       ((double)rss_anon() - (double)anon_base) / 1e6);
	*last = u;
}

int main(int argc, char **argv)
{
	Perftools__Profiles__Profile *pp;
	struct prof *p, *snap;
	struct model *m;
	struct model_flat *rows;
	struct model_key *keys;
	struct model_tree *t;
	size_t len, base, last, i, maxl = 0, frames = 0;
	uint8_t *buf;
	uint32_t *sid;
	uint64_t *fid, *lid, *mid, *locs = NULL;
	struct prof_label *labs = NULL;
	struct prof_line *lines = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: profmem FILE.pb.gz\n");
		return 2;
	}
	buf = slurp_gz(argv[1], &len);
	pp = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!pp) {
		fprintf(stderr, "profmem: %s is not a profile\n", argv[1]);
		return 1;
	}
	sid = calloc(pp->n_string_table + 1, sizeof(*sid));
	fid = calloc(pp->n_function + 1, sizeof(*fid));
	lid = calloc(pp->n_location + 1, sizeof(*lid));
	mid = calloc(pp->n_mapping + 1, sizeof(*mid));
	for (i = 0; i < pp->n_location; i++)
		if (pp->location[i]->n_line > maxl)
			maxl = pp->location[i]->n_line;
	lines = calloc(maxl + 1, sizeof(*lines));
	base = last = used();
	anon_base = rss_anon();

	p = prof_new();
	for (i = 0; i < pp->n_string_table; i++)
		sid[i] = prof_str(p, pp->string_table[i]);
	{
		struct prof_value_type vt[PROF_MAX_VALUES];
		size_t n = pp->n_sample_type < PROF_MAX_VALUES ? pp->n_sample_type : PROF_MAX_VALUES;

		for (i = 0; i < n; i++) {
			vt[i].type = sid[pp->sample_type[i]->type];
			vt[i].unit = sid[pp->sample_type[i]->unit];
		}
		prof_set_sample_types(p, vt, n);
	}
	for (i = 0; i < pp->n_mapping; i++) {
		const Perftools__Profiles__Mapping *mp = pp->mapping[i];
		struct prof_mapping pm = { .start = mp->memory_start, .limit = mp->memory_limit,
					   .offset = mp->file_offset, .filename = sid[mp->filename],
					   .build_id = sid[mp->build_id],
					   .has_functions = mp->has_functions };

		if (mp->id <= pp->n_mapping)
			mid[mp->id] = prof_add_mapping(p, &pm);
	}
	for (i = 0; i < pp->n_function; i++) {
		const Perftools__Profiles__Function *f = pp->function[i];

		if (f->id <= pp->n_function)
			fid[f->id] = prof_add_function(p, sid[f->name], sid[f->system_name],
						       sid[f->filename], f->start_line);
	}
	for (i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];

		for (size_t k = 0; k < l->n_line; k++) {
			lines[k].function = l->line[k]->function_id <= pp->n_function
						    ? fid[l->line[k]->function_id] : 0;
			lines[k].line = l->line[k]->line;
		}
		if (l->id <= pp->n_location)
			lid[l->id] = prof_add_location(p, l->mapping_id <= pp->n_mapping
							  ? mid[l->mapping_id] : 0,
						       l->address, lines, l->n_line);
	}
	step("strings, mappings, functions, locs", base, &last);
	for (i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		int64_t v[PROF_MAX_VALUES] = { 0 };

		locs = realloc(locs, (s->n_location_id + 1) * sizeof(*locs));
		labs = realloc(labs, (s->n_label + 1) * sizeof(*labs));
		for (size_t k = 0; k < s->n_location_id; k++)
			locs[k] = s->location_id[k] <= pp->n_location ? lid[s->location_id[k]] : 0;
		for (size_t k = 0; k < s->n_label; k++) {
			labs[k] = (struct prof_label){ .key = sid[s->label[k]->key],
						       .str = sid[s->label[k]->str],
						       .num = s->label[k]->num,
						       .num_unit = sid[s->label[k]->num_unit] };
		}
		for (size_t k = 0; k < s->n_value && k < PROF_MAX_VALUES; k++)
			v[k] = s->value[k];
		frames += s->n_location_id;
		prof_add_sample(p, locs, s->n_location_id, v, labs, s->n_label);
	}
	step("samples", base, &last);
	printf("  %zu entries, %zu locations, %zu functions, mean depth %.1f\n",
	       prof_nsamples(p), prof_nlocations(p), prof_nfunctions(p),
	       (double)frames / (double)(pp->n_sample ? pp->n_sample : 1));
	snap = prof_snapshot(p);
	step("snapshot", base, &last);
	m = model_new(snap, 0);
	model_update(m, snap, 0, NULL, 0);
	step("model", base, &last);
	model_flat(m, &rows);
	step("+ flat (Top)", base, &last);
	t = model_tree_topdown(m);
	step("+ top-down tree (Tree)", base, &last);
	model_tree_free(t);
	model_label_keys(m, &keys);
	step("+ label keys (Labels)", base, &last);
	printf("total: heap %.2f MB, %.0f bytes per entry; anon %.2f MB, %.0f bytes per entry\n",
	       (double)(used() - base) / 1e6,
	       (double)(used() - base) / (double)(prof_nsamples(p) ? prof_nsamples(p) : 1),
	       (double)(rss_anon() - anon_base) / 1e6,
	       (double)(rss_anon() - anon_base) / (double)(prof_nsamples(p) ? prof_nsamples(p) : 1));
	model_free(m);
	prof_free(snap);
	prof_free(p);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	return 0;
}
