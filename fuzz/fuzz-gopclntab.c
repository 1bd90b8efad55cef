/* fuzz-gopclntab.c: libFuzzer harness for the .gopclntab reader on raw table bytes (gopcln_open_buf and every query). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "gotop/gopclntab.h"

/*
 * Input: a flags byte (bit 0: pass the text start that follows instead of 0, "from the
 * header"), the text start (u64), then the pclntab bytes. Queries look at up to 256
 * functions spread over the table, at their entry, inside, at the end and just past it.
 */
#define MAX_PROBES 256

static volatile size_t sink;

/* Every string a query returns must be readable to its NUL. */
static void use_str(const char *s)
{
	if (!s)
		abort();
	sink += strlen(s);
}

static void probe(const struct gopcln *t, uint64_t pc)
{
	struct gopcln_func fn;
	struct gopcln_frame fr[8];
	int32_t d;
	uint64_t lo, hi;
	int n, i;

	if (gopcln_find_func(t, pc, &fn) == 0) {
		use_str(fn.name);
		if (pc < fn.entry || pc >= fn.end)
			abort(); /* gopclntab.h: the function containing pc */
	}
	n = gopcln_frames(t, pc, fr, 8);
	if (n > 8)
		abort();
	for (i = 0; i < n; i++) {
		use_str(fr[i].func);
		use_str(fr[i].file);
	}
	n = gopcln_frames(t, pc, fr, 1);
	if (n > 1)
		abort();
	if (gopcln_pcsp_row(t, pc, &d, &lo, &hi) == 0 && !(lo <= pc && pc < hi))
		abort(); /* the row holds pc */
	gopcln_pcsp(t, pc, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz f = { data, size };
	uint8_t flags = fz_u8(&f);
	uint64_t text = fz_u64(&f);
	struct gopcln *t;
	size_t n, len, i, step;
	const uint8_t *tab;
	uint8_t *copy;
	int err;

	tab = fz_bytes(&f, f.n, &len);
	/* An exact-size copy: reads past the table are ASan reports, not reads of the prefix. */
	copy = malloc(len ? len : 1);
	if (!copy)
		return 0;
	if (len)
		memcpy(copy, tab, len);
	t = gopcln_open_buf(copy, len, flags & 1 ? text : 0, &err);
	if (!t) {
		if (err <= 0 || err >= GOPCLN_E_COUNT)
			abort();
		use_str(gopcln_strerror(err));
		free(copy);
		return 0;
	}
	sink += gopcln_ptrsize(t) + gopcln_quantum(t) + gopcln_text_start(t) + gopcln_magic(t) +
		gopcln_addr(t) + gopcln_gofunc(t) + gopcln_wrapper_funcid(t);
	if (gopcln_go_version(t))
		use_str(gopcln_go_version(t));
	if (gopcln_build_id(t))
		use_str(gopcln_build_id(t));
	n = gopcln_nfunc(t);
	step = n > MAX_PROBES ? n / MAX_PROBES : 1;
	for (i = 0; i < n; i += step) {
		struct gopcln_func fn;

		if (gopcln_func_at(t, i, &fn) != 0)
			continue;
		use_str(fn.name);
		probe(t, fn.entry);
		probe(t, fn.entry + (fn.end - fn.entry) / 2);
		probe(t, fn.end - 1);
		probe(t, fn.end);
	}
	probe(t, 0);
	probe(t, text);
	probe(t, UINT64_MAX);
	struct gopcln_func fn;
	if (gopcln_func_at(t, n, &fn) == 0)
		abort(); /* past the table */
	gopcln_free(t);
	free(copy);
	return 0;
}
