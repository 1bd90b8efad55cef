/* gosnap.c: the CPU cost of one snapshot of every goroutine (src/go/gosnap.c) of a live Go
 * process, for bench/gosnap.sh. Usage: gosnap PID ROUNDS
 * Takes ROUNDS snapshots 100 ms apart and prints per snapshot the goroutines read, the CPU
 * time this process spent in it (CLOCK_PROCESS_CPUTIME_ID: user and system), the system
 * calls (vectored reads) and bytes read, and the goroutines dropped as torn. Naming the
 * frames is measured apart ("name"): the first time every distinct pc, as a view does once. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/symbolizer.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct symbolizer *sym;
	struct gosnap *s;
	struct symfile *sf;
	char why[256];
	pid_t pid;
	int rounds, r;

	if (argc != 3)
		return 2;
	pid = atoi(argv[1]);
	rounds = atoi(argv[2]);
	sym = symbolizer_new(pid);
	sf = symbolizer_main_file(sym);
	if (!sf || !(s = gosnap_new(pid, sf, why, sizeof(why)))) {
		fprintf(stderr, "gosnap: %s\n", sf ? why : "no executable");
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		struct gosnap_result res;
		uint64_t t0 = cpu_ns(), t1;
		int rc = gosnap_take(s, 0, &res);

		t1 = cpu_ns();
		if (rc) {
			fprintf(stderr, "gosnap_take: %d\n", rc);
			return 1;
		}
		printf("snap %zu goroutines %.3f ms cpu %" PRIu64 " readvs %" PRIu64 " bytes %" PRIu64
		       " torn %" PRIu64 " cut\n", res.n, (double)(t1 - t0) / 1e6, res.st.readvs,
		       res.st.bytes, res.st.torn, res.st.cut);
		if (r == 0) {
			struct hashmap seen = { 0 };
			struct sym_frame fr[16];
			size_t i, distinct = 0;
			int created;

			t0 = cpu_ns();
			for (i = 0; i < res.n; i++)
				for (uint32_t k = 0; k < res.g[i].nframes; k++) {
					uint64_t pc = res.pcs[res.g[i].frame0 + k];

					hashmap_put(&seen, pc, &created);
					if (created) {
						distinct++;
						symbolizer_lookup(sym, pc, 1, NULL, fr, 16);
					}
				}
			t1 = cpu_ns();
			printf("name %zu distinct pcs %.3f ms cpu\n", distinct, (double)(t1 - t0) / 1e6);
			hashmap_free(&seen);
		}
		usleep(100000);
	}
	gosnap_free(s);
	symbolizer_free(sym);
	return 0;
}
