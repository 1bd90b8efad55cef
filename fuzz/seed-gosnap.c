/* seed-gosnap.c: writes fuzz-gosnap's seeds: a fake Go process with eight goroutines in each version's layout (see fuzz/README.md). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goruntime-input.h"
#include "gosnap-input.h"
#include "gotop/gopclntab.h"
#include "gotop/goruntime.h"

/*
 * Usage: seed-gosnap GOPCLNTAB-SEED DIR. GOPCLNTAB-SEED is an input of fuzz-gopclntab (a
 * flags byte, the text start, the table: tests/fuzz-corpus/gopclntab/inl-1.19-plain); its
 * functions give the stacks real pcs with real frame sizes. The goroutines, in allgs order:
 *   0 waiting (wait reason 2) with three labels, a stack of four frames up to goexit;
 *   1 running with the same labels (the label memo's hit): no stack;
 *   2 dead;
 *   3 in a system call (walked by frame sizes before go1.23, by frame pointers after);
 *   4 runnable, parked where BP is still the caller's: the caller put back (repaired);
 *   5 waiting, g.labels garbage and its frame pointer off the stack (labels bad, cut);
 *   6 a pointer to nothing (bad);
 *   7 as 0 (one group of two).
 * Stacks are laid out as Go's: the return address at SP + pcsp(pc), the saved BP below it,
 * the next frame's SP above it (cmd/compile/abi-internal.md "Frame layout"). The label set
 * is a labelMap slice (go1.24+) or a one-bucket map (go1.19-1.23), as seed-goruntime.c.
 */
#define LEN 0x000
#define PTR 0x008
#define SWEEP 0x010
#define ARR 0x040
#define WAITS 0x100 /* 4 string headers, then their bytes */
#define LAB 0x200
#define STR 0x300
#define GS 0x400
#define GSTRIDE 0x200
#define STK 0x1400
#define STKSZ 0x400
#define SIZE (STK + 8 * STKSZ)
#define NG 8

static uint8_t mem[SIZE];

static void w64(uint32_t off, uint64_t v)
{
	memcpy(mem + off, &v, 8);
}

static void w32(uint32_t off, uint32_t v)
{
	memcpy(mem + off, &v, 4);
}

static uint64_t A(uint32_t off)
{
	return GSF_BASE + off;
}

/* pcs of functions of the table whose frame (pcsp) is 16 to 128 bytes, link-time. */
static size_t pick_pcs(const struct gopcln *t, uint64_t *pcs, int32_t *d, size_t max)
{
	size_t n = 0, i, nf = gopcln_nfunc(t);
	struct gopcln_func f;

	for (i = 0; i < nf && n < max; i++) {
		uint64_t pc;

		if (gopcln_func_at(t, i, &f))
			continue;
		for (pc = f.entry + 1; pc < f.end; pc++) {
			int32_t sp;

			if (gopcln_pcsp(t, pc, &sp) == 0 && sp >= 16 && sp <= 128) {
				pcs[n] = pc;
				d[n++] = sp;
				break;
			}
		}
	}
	return n;
}

/* A stack at STK + i * STKSZ with frames pcs[0..n) then goexit's return address; returns
 * the innermost frame's SP and its BP in *bp. */
static uint64_t lay_stack(int i, const uint64_t *pcs, const int32_t *d, size_t n, uint64_t bias,
			  uint64_t goexit_ra, uint64_t *bp)
{
	uint32_t sp = STK + (uint32_t)i * STKSZ + 0x40, sp0 = sp;
	size_t k;

	*bp = A(sp + (uint32_t)d[0] - 8);
	for (k = 0; k < n; k++) {
		uint32_t fp = sp + (uint32_t)d[k] - 8, next = fp + 16;

		w64(fp + 8, k + 1 < n ? pcs[k + 1] + bias : goexit_ra);
		w64(fp, k + 1 < n ? A(next + (uint32_t)d[k + 1] - 8) : 0);
		sp = next;
	}
	return A(sp0);
}

static void labels(const struct gort_offsets *o)
{
	static const char *const kv[] = { "handler", "/api/users", "region", "us-east",
					  "tenant", "\x1b[31mred\x1b[0m\x01" };
	uint64_t strs[6];
	uint32_t s = STR;
	size_t i;

	for (i = 0; i < 6; i++) {
		strs[i] = A(s);
		memcpy(mem + s, kv[i], strlen(kv[i]));
		s += (uint32_t)(strlen(kv[i]) + 7) & ~7u;
	}
	if (o->labels_kind == GORT_LABELS_SLICE) {
		w64(LAB, A(LAB + 32));
		w64(LAB + 8, 3);
		w64(LAB + 16, 3);
		for (i = 0; i < 3; i++) {
			w64(LAB + 32 + 32 * i, strs[2 * i]);
			w64(LAB + 32 + 32 * i + 8, strlen(kv[2 * i]));
			w64(LAB + 32 + 32 * i + 16, strs[2 * i + 1]);
			w64(LAB + 32 + 32 * i + 24, strlen(kv[2 * i + 1]));
		}
	} else {
		uint32_t hm = LAB + 8, b = LAB + 8 + 48;

		w64(LAB, A(hm));
		w64(hm + o->hmap_count, 3);
		w32(hm + o->hmap_hash0, 0x9e3779b9);
		w64(hm + o->hmap_buckets, A(b));
		for (i = 0; i < 3; i++) {
			mem[b + i] = (uint8_t)(5 + 17 * i);
			w64(b + o->bucket_keys + 16 * i, strs[2 * i]);
			w64(b + o->bucket_keys + 16 * i + 8, strlen(kv[2 * i]));
			w64(b + o->bucket_values + 16 * i, strs[2 * i + 1]);
			w64(b + o->bucket_values + 16 * i + 8, strlen(kv[2 * i + 1]));
		}
	}
}

static void make_g(int i, const struct gort_offsets *o, uint32_t status, uint64_t sp, uint64_t pc,
		   uint64_t bp, uint64_t lab)
{
	uint32_t g = GS + (uint32_t)i * GSTRIDE;
	uint64_t lo = A(STK + (uint32_t)i * STKSZ);

	w64(ARR + 8 * (uint32_t)i, A(g));
	w64(g + o->g_stack_lo, lo);
	w64(g + o->g_stack_hi, lo + STKSZ);
	w64(g + o->g_goid, 100 + (uint64_t)i);
	w32(g + o->g_atomicstatus, status);
	w64(g + o->g_labels, lab);
	if (status == 3 && o->g_syscallsp) {
		w64(g + o->g_syscallsp, sp);
		w64(g + o->g_syscallpc, pc);
		if (o->g_syscallbp)
			w64(g + o->g_syscallbp, bp);
	} else {
		w64(g + o->g_sched_sp, sp);
		w64(g + o->g_sched_pc, pc);
		w64(g + o->g_sched_bp, bp);
	}
	if (o->g_waitsince)
		w64(g + o->g_waitsince, 1000);
	if (o->g_waitreason)
		mem[g + o->g_waitreason] = 2;
	if (o->g_gopc)
		w64(g + o->g_gopc, 0x401000);
	if (o->g_startpc)
		w64(g + o->g_startpc, 0x402000);
	if (o->g_parent_goid)
		w64(g + o->g_parent_goid, 1);
}

static int write_seed(const char *dir, const char *name, const struct gsf_hdr *h,
		      const uint8_t *pcln, size_t plen)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(h, sizeof(*h), 1, f) != 1 || fwrite(pcln, plen, 1, f) != 1 ||
	    fwrite(mem, SIZE, 1, f) != 1 || fclose(f))
		return 1;
	return 0;
}

int main(int argc, char **argv)
{
	static const int vers[] = { 0, 4, 8 }; /* go1.19, go1.23, go1.27 */
	static const char *const waits[] = { "", "GC assist marking", "chan receive",
					     "select\x1b[2J" };
	static uint8_t in[GSF_MAX_PCLN + 9];
	uint64_t pcs[8], text, bias = 0x10000;
	int32_t d[8];
	struct gopcln *t;
	struct gopcln_func gx;
	size_t plen, npc, v, i;
	uint8_t *pcln;
	FILE *f;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: seed-gosnap GOPCLNTAB-SEED DIR\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f)
		return 1;
	plen = fread(in, 1, sizeof(in), f);
	fclose(f);
	if (plen < 10)
		return 1;
	memcpy(&text, in + 1, 8);
	if (!(in[0] & 1))
		text = 0;
	pcln = in + 9;
	plen -= 9;
	t = gopcln_open_buf(pcln, plen, text, &err);
	if (!t || (npc = pick_pcs(t, pcs, d, 4)) < 4 || gopcln_func_at(t, gopcln_nfunc(t) - 1, &gx))
		return 1;
	/* goexit: the table's last function (a cut table need not have runtime.goexit) */
	for (v = 0; v < sizeof(vers) / sizeof(vers[0]); v++) {
		const char *ver = grf_versions[vers[v]];
		const struct gort_offsets *o = gort_table_offsets(ver);
		uint64_t sp, bp, gra = gx.entry + bias + 1;
		char name[64];

		if (!o || o->g_syscallbp + 8 > GSTRIDE || o->g_labels + 8 > GSTRIDE)
			return 1;
		memset(mem, 0, sizeof(mem));
		w64(LEN, NG);
		w64(PTR, A(ARR));
		w64(SWEEP, 8);
		for (i = 0; i < 4; i++) {
			uint32_t s = WAITS + 64 + 16 * (uint32_t)i;

			w64(WAITS + 16 * (uint32_t)i, A(s));
			w64(WAITS + 16 * (uint32_t)i + 8, strlen(waits[i]));
			memcpy(mem + s, waits[i], strlen(waits[i]));
		}
		labels(o);
		sp = lay_stack(0, pcs, d, 4, bias, gra, &bp);
		make_g(0, o, 4, sp, pcs[0] + bias, bp, A(LAB));
		make_g(1, o, 2, 0, 0, 0, A(LAB));
		make_g(2, o, 6, 0, 0, 0, 0);
		sp = lay_stack(3, pcs + 1, d + 1, 3, bias, gra, &bp);
		make_g(3, o, 3, sp, pcs[1] + bias, bp, 0);
		sp = lay_stack(4, pcs, d, 4, bias, gra, &bp);
		/* BP still the caller's: the first frame's pointer is one frame out */
		bp = A((uint32_t)(sp - GSF_BASE) + (uint32_t)d[0] + 8 + (uint32_t)d[1] - 8);
		make_g(4, o, 1, sp, pcs[0] + bias, bp, 0);
		make_g(5, o, 4, A(STK + 5 * STKSZ + 0x40), pcs[2] + bias, A(0x40000000), A(WAITS));
		w64(ARR + 8 * 6, A(SIZE + 0x100000));
		sp = lay_stack(7, pcs, d, 4, bias, gra, &bp);
		make_g(7, o, 4, sp, pcs[0] + bias, bp, A(LAB));
		for (i = 0; i < 3; i++) {
			static const uint8_t flags[] = { GSF_PCLN, GSF_PCLN | GSF_MHEAP | GSF_READV,
							 GSF_MHEAP };
			struct gsf_hdr h = {
				.version = (uint8_t)vers[v], .flags = flags[i], .takes = (uint8_t)i,
				.nwait = 4, .max_g = i == 2 ? 5 : 0, .allglen = LEN, .allgptr = PTR,
				.mheap = SWEEP, .wait_strings = WAITS, .pcln_len = (uint32_t)plen,
				.text_start = text, .bias = bias, .goexit_lo = gx.entry + bias,
				.goexit_hi = gx.end + bias,
			};

			if (i == 1) {
				/* goroutine 0's status changes between the two reads of its g
				 * (torn); the list grows by one entry before the next snapshot */
				h.flip[0] = (struct fz_flip){ 9, 0x01, 0, GS + o->g_atomicstatus };
				h.flip[1] = (struct fz_flip){ 40, 0x01, 0, LEN };
				h.flip[2] = (struct fz_flip){ 50, 0x10, 0, LAB };
			}
			snprintf(name, sizeof(name), "fake-%s-%zu", ver, i);
			if (write_seed(argv[2], name, &h, pcln, plen))
				return 1;
		}
	}
	gopcln_free(t);
	return 0;
}
