/* seed-goruntime.c: writes fuzz-goruntime's seeds: fake Go processes laid out with each version's offsets (see fuzz/README.md). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "goruntime-input.h"
#include "gotop/goruntime.h"

/*
 * One thread (tid 100) with its m, g0, gsignal and a running goroutine (goid 42) carrying
 * three labels (one with an escape sequence), in the layout of the version's table row:
 * g.labels -> labelMap {list []label} (go1.24+) or -> *hmap of one bucket (go1.19-1.23),
 * the layouts src/go/goruntime-int.h cites. Stacks are only compared with SP, so they lie outside
 * the memory, which stays about 3 KiB.
 */
#define M 0x000
#define G0 0x200
#define GSIG 0x400
#define G 0x600
#define LAB 0x800
#define STR 0xa00
#define SWEEP 0xc00
#define ALLM 0xc08
#define SIZE 0xc10
#define STK_G 0x100000
#define STK_G0 0x200000

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
	return GRF_BASE + off;
}

static void make_g(uint32_t g, const struct gort_offsets *o, uint64_t goid, uint32_t status, uint32_t stk)
{
	w64(g + o->g_stack_lo, A(stk));
	w64(g + o->g_stack_hi, A(stk + 8192));
	w64(g + o->g_m, A(M));
	w64(g + o->g_goid, goid);
	w32(g + o->g_atomicstatus, status);
}

int main(int argc, char **argv)
{
	static const char *const kv[] = { "handler", "/api/users", "region", "us-east",
					  "tenant", "\x1b[31mred\x1b[0m\x01" };
	static const int vers[] = { 0, 4, 5, 8 }; /* go1.19, go1.23, go1.24, go1.27 */
	char path[4096];
	size_t v, i;

	if (argc != 2) {
		fprintf(stderr, "usage: seed-goruntime DIR\n");
		return 2;
	}
	for (v = 0; v < sizeof(vers) / sizeof(vers[0]); v++) {
		const char *ver = grf_versions[vers[v]];
		const struct gort_offsets *o = gort_table_offsets(ver);
		uint32_t s = STR;
		uint64_t strs[6];

		if (!o)
			return 1;
		memset(mem, 0, sizeof(mem));
		w64(M + o->m_g0, A(G0));
		w64(M + o->m_gsignal, A(GSIG));
		w64(M + o->m_procid, 100);
		w64(M + o->m_curg, A(G));
		make_g(G0, o, 0, 0, STK_G0);
		make_g(GSIG, o, 0, 0, STK_G0 + 0x10000);
		make_g(G, o, 42, 2, STK_G);
		for (i = 0; i < 6; i++) {
			strs[i] = A(s);
			memcpy(mem + s, kv[i], strlen(kv[i]));
			s += (uint32_t)(strlen(kv[i]) + 7) & ~7u;
		}
		w64(G + o->g_labels, A(LAB));
		if (o->labels_kind == GORT_LABELS_SLICE) {
			/* labelMap {list []label{key, value string}}, sorted by key */
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
			/* cell -> hmap {count 3, B 0, buckets} -> one bucket */
			uint32_t hm = LAB + 8, b = LAB + 8 + 48;

			w64(LAB, A(hm));
			w64(hm + o->hmap_count, 3);
			w32(hm + o->hmap_hash0, 0x9e3779b9);
			w64(hm + o->hmap_buckets, A(b));
			for (i = 0; i < 3; i++) {
				mem[b + i] = (uint8_t)(5 + 17 * i); /* tophash >= minTopHash */
				w64(b + o->bucket_keys + 16 * i, strs[2 * i]);
				w64(b + o->bucket_keys + 16 * i + 8, strlen(kv[2 * i]));
				w64(b + o->bucket_values + 16 * i, strs[2 * i + 1]);
				w64(b + o->bucket_values + 16 * i + 8, strlen(kv[2 * i + 1]));
			}
		}
		w64(SWEEP, 8);
		w64(ALLM, A(M));
		for (i = 0; i < 3; i++) {
			static const uint8_t flags[] = { GRF_VARS | GRF_BATCH, GRF_VARS | GRF_FLIP | GRF_STATIC,
							 GRF_ARM64 | GRF_RESET | GRF_BATCH };
			struct grf_hdr h = {
				.version = (uint8_t)vers[v], .nsamples = 4, .flags = flags[i],
				.flip_xor = 0x20, .flip_off = STR + 1, .allm = ALLM, .mheap = SWEEP,
				.s = {
					{ 100, G, STK_G + 4000 },      /* on the goroutine */
					{ 100, G0, STK_G0 + 100 },     /* on the system stack */
					{ 100, 0x1230, STK_G + 2000 }, /* g register garbage: via m */
					{ 101, G, STK_G + 4000 },      /* another thread's g */
				},
			};
			FILE *f;

			snprintf(path, sizeof(path), "%s/fake-%s-%zu", argv[1], ver, i);
			f = fopen(path, "wb");
			if (!f || fwrite(&h, sizeof(h), 1, f) != 1 || fwrite(mem, SIZE, 1, f) != 1 || fclose(f))
				return 1;
		}
	}
	return 0;
}
