/* gomem.c: the CPU cost of one read of a Go process's heap profile buckets (src/go/gomem.c)
 * and of the profile made of it (src/go/goprof.c), for bench/gomem.sh.
 * Usage: gomem PID ROUNDS
 * Reads the heap list ROUNDS times 100 ms apart and prints per read the buckets kept and
 * dropped, the CPU time this process spent (CLOCK_PROCESS_CPUTIME_ID: user and system,
 * the system calls included), the reads and bytes; then the CPU of building and encoding
 * the /debug/pprof/heap answer once (symbolizing every distinct pc the first time). */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/pprof.h"
#include "gotop/symbolizer.h"

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct goprof_req req = { "heap", 0, 0, NULL };
	struct goprof_out out;
	struct goprof *gp;
	struct gomem *g;
	char why[512];
	pid_t pid;
	int rounds, r, err;
	uint64_t t0, t1;

	if (argc != 3)
		return 2;
	pid = atoi(argv[1]);
	rounds = atoi(argv[2]);
	gp = goprof_open(pid, &err, why, sizeof(why));
	if (!gp || !(g = goprof_gomem(gp))) {
		fprintf(stderr, "gomem: %s\n", gp ? "no heap profile found" : why);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		struct gomem_snap s;
		struct timespec ts = { 0, 100000000 };
		int rc;

		t0 = cpu_ns();
		rc = gomem_read(g, GOMEM_HEAP, 0, &s);
		t1 = cpu_ns();
		if (rc) {
			fprintf(stderr, "gomem_read: %d\n", rc);
			return 1;
		}
		printf("read %zu buckets %.3f ms cpu %" PRIu64 " readvs %" PRIu64 " bytes %" PRIu64
		       " dropped %u tries\n", s.n, (double)(t1 - t0) / 1e6, s.st.readvs, s.st.bytes,
		       s.st.dropped, s.st.tries);
		nanosleep(&ts, NULL);
	}
	t0 = cpu_ns();
	err = goprof_fetch(gp, &req, &out, why, sizeof(why));
	t1 = cpu_ns();
	if (err) {
		fprintf(stderr, "goprof_fetch: %s\n", why);
		return 1;
	}
	printf("profile %.3f ms cpu %zu bytes gzipped\n", (double)(t1 - t0) / 1e6, out.len);
	free(out.data);
	goprof_close(gp);
	return 0;
}
