/* annotate.c: the time the Annotate view takes to open a large function of a large binary,
 * and to refresh it, next to objdump disassembling the same bytes.
 *
 * Opening is what the view does the first time it shows a function (ui/view-annotate.c):
 * open the file, read its function table (.gopclntab, or .symtab), find the function,
 * decode every instruction and look up its frames (annotate.h), turn counts into per
 * instruction sums and source rows. A refresh only redoes the last two: the disassembly is
 * kept. The counts are synthetic (one address in 8 with a sample, a few return addresses):
 * what they cost does not depend on where they came from.
 *
 *   cc -O2 -I include -I build -o build/annotate-bench bench/annotate.c build/libgotop.a \
 *      $(the libraries configure found: bench/README.md has the line)
 *   build/annotate-bench BINARY [FUNCTION | - | ~BYTES] [ROUNDS]
 *
 * FUNCTION "-" (or none) takes the largest function of a Go binary, "~BYTES" the one nearest
 * to that size. Prints the medians (min to max) of
 * ROUNDS rounds (default 11) of: open (cold: the binary too), open with the binary already
 * open (another function of it), refresh, and objdump -d over the function's address range
 * (--start-address/--stop-address), timed the same way. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gotop/annotate.h"
#include "gotop/gopclntab.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), dcmp);
	printf("%-28s %8.1f ms (%.1f to %.1f, %d rounds)\n", what, v[n / 2], v[0], v[n - 1], n);
}

/* The function of .gopclntab's table whose size is nearest to want bytes (0: the largest). */
static const char *pick(struct symfile *sf, uint64_t want, uint64_t *start, uint64_t *end)
{
	struct gopcln *g = symfile_gopcln(sf);
	static char name[512];
	size_t i, n = g ? gopcln_nfunc(g) : 0;

	*start = *end = 0;
	for (i = 0; i < n; i++) {
		struct gopcln_func f;

		uint64_t sz, best = *end - *start;

		if (gopcln_func_at(g, i, &f))
			continue;
		sz = f.end - f.entry;
		if (want ? (sz > want ? sz - want : want - sz) < (best > want ? best - want : want - best)
			 : sz > best) {
			*start = f.entry;
			*end = f.end;
			snprintf(name, sizeof(name), "%s", f.name);
		}
	}
	return *end > *start ? name : NULL;
}

/* One open as the view does it, cold: returns the annotation and its sums (kept for the
 * warm rounds). */
static struct annot *open_once(const char *path, uint64_t start, const char *name,
			       struct symfile **sfp)
{
	struct symfile *sf = symfile_open(path, NULL);
	uint64_t s, e;
	const char *nm;
	struct annot *a;

	if (!sf || annot_func_at(sf, start, &s, &e, &nm)) {
		fprintf(stderr, "annotate-bench: cannot find %s in %s\n", name, path);
		exit(1);
	}
	a = annot_open(sf, s, e, nm, NULL, NULL);
	if (!a) {
		fprintf(stderr, "annotate-bench: annot_open failed\n");
		exit(1);
	}
	*sfp = sf;
	return a;
}

static size_t refresh(const struct annot *a, struct annot_count *c, size_t nc)
{
	size_t n = annot_ninsns(a), nrows;
	int64_t *self = xcalloc(n, sizeof(*self)), *total = xcalloc(n, sizeof(*total));
	struct annot_row *rows;

	annot_attribute(a, c, nc, self, total, NULL);
	nrows = annot_source_rows(a, self, total, &rows);
	free(rows);
	free(self);
	free(total);
	return nrows;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL, *name;
	int rounds = argc > 3 ? atoi(argv[3]) : 11, r;
	double *cold, *warm, *objd, *kept;
	uint64_t start, end;
	struct symfile *sf;
	struct annot *a;
	struct annot_count *c;
	size_t nc = 0, i, nrows = 0;

	if (!path || rounds < 1) {
		fprintf(stderr, "usage: annotate-bench BINARY [FUNCTION] [ROUNDS]\n");
		return 2;
	}
	sf = symfile_open(path, NULL);
	if (!sf)
		return 1;
	if (argc > 2 && argv[2][0] != '-' && argv[2][0] != '~') {
		name = argv[2];
		if (annot_func_named(sf, name, &start, &end)) {
			fprintf(stderr, "annotate-bench: no function %s\n", name);
			return 1;
		}
	} else {
		name = pick(sf, argc > 2 && argv[2][0] == '~' ? strtoull(argv[2] + 1, NULL, 0) : 0,
			    &start, &end);
		if (!name)
			return 1;
	}
	name = xstrdup(name);
	symfile_free(sf);
	cold = xcalloc((size_t)rounds, sizeof(*cold));
	warm = xcalloc((size_t)rounds, sizeof(*warm));
	objd = xcalloc((size_t)rounds, sizeof(*objd));
	kept = xcalloc((size_t)rounds, sizeof(*kept));
	for (r = 0; r < rounds; r++) {
		char cmd[4096];
		double t0 = now_ms();

		a = open_once(path, start, name, &sf);
		if (!nc) {
			c = xcalloc(annot_ninsns(a) / 8 + 2, sizeof(*c));
			for (i = 0; i < annot_ninsns(a); i += 8)
				c[nc++] = (struct annot_count){ annot_insns(a)[i].addr, i % 64 == 8, 3, 5 };
		}
		nrows = refresh(a, c, nc);
		cold[r] = now_ms() - t0;
		t0 = now_ms();
		refresh(a, c, nc);
		warm[r] = now_ms() - t0;
		{
			/* Another function of a binary the view has open already: the file and
			 * its tables are loaded, the function is decoded. */
			struct annot *b;

			t0 = now_ms();
			b = annot_open(sf, annot_start(a), annot_end(a), name, NULL, NULL);
			refresh(b, c, nc);
			kept[r] = now_ms() - t0;
			annot_free(b);
		}
		if (!r)
			printf("%s: %s, %llu bytes, %zu instructions (%zu bad), %zu source rows, "
			       "%zu KB held\n", path, name, (unsigned long long)(end - start),
			       annot_ninsns(a), annot_nbad(a), nrows, annot_memory(a) >> 10);
		annot_free(a);
		symfile_free(sf);
		snprintf(cmd, sizeof(cmd), "objdump -d --no-show-raw-insn --start-address=0x%llx "
			 "--stop-address=0x%llx '%s' >/dev/null 2>&1", (unsigned long long)start,
			 (unsigned long long)end, path);
		t0 = now_ms();
		if (system(cmd) != 0)
			objd[r] = -1;
		else
			objd[r] = now_ms() - t0;
	}
	report("open (cold, to first rows)", cold, rounds);
	report("open, binary already open", kept, rounds);
	report("refresh (disassembly kept)", warm, rounds);
	report("objdump -d, same range", objd, rounds);
	free(c);
	free(cold);
	free(warm);
	free(objd);
	free(kept);
	free((char *)name);
	return 0;
}
