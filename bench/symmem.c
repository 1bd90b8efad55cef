/* symmem.c: the memory of the symbol tables of a large Go binary, mapped or copied.
 *
 * Opens BINARY with the symbolizer's own API (include/gotop/symtab.h) in one of two ways:
 *   mapped  symfile_open: libelf over the file with ELF_C_READ_MMAP (what gotop-perf does for
 *           a target's executable); the tables are read in place from a read-only mapping
 *           of the whole file, clean file-backed pages;
 *   copied  the whole file read into a malloc'd buffer, then symfile_open_memory (as for a
 *           [vdso]): the same tables in anonymous memory.
 * Then it looks up a realistic set of addresses and reports the times and the memory:
 *   open_ms     CPU time of the open (copied: the read of the whole file included) to the
 *               loaded tables (symfile_gopcln and symfile_nsymbols: what gotop-perf's
 *               preload does), open_wall_ms its wall time; all other times are CPU times
 *               of the thread (CLOCK_THREAD_CPUTIME_ID), the machine being shared;
 *   first_ns    one lookup per address with the per-address cache (the first sight of each
 *               address in a live session), ns per address;
 *   lookup_ns   ns per address without the cache (symfile_set_cache 0): the cost of
 *               decoding .gopclntab for an address, median of ROUNDS passes;
 *   anon/file   RssAnon and RssFile of this process after the lookups (/proc/self/status);
 *   map_rss     for mapped: the Rss of the mapping of BINARY (smaps), i.e. how much of the
 *               file this process keeps resident, and map_incore: how much of it is in the
 *               page cache (mincore over the mapping), shared with the target's own pages;
 *   base_anon/base_file  the same two before the open (the program and its libraries).
 * The addresses: every function of .gopclntab at its entry, a quarter, half and three
 * quarters of its length, and its last byte ("funcs"), or with PROFILE (a gzipped pprof
 * profile gotop-perf recorded from the running binary; it is not PIE, so a location's
 * address is the link-time address) the main binary's locations of that profile
 * ("profile").
 *
 * Build (from the top of the tree, after the build of build/):
 *   cc -O2 -I include -o build/symmem bench/symmem.c build/libgotop.a \
 *      $(pkg-config --libs libdw libelf libunwind-ptrace zlib libprotobuf-c libbpf) -lpthread
 * Usage: build/symmem mapped|copied BINARY [funcs|PROFILE] [ROUNDS]
 * Prints one line "key=value ..." (run each mode in a process of its own, a few times, and
 * take medians: bench/results/service-memory.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "gotop/gopclntab.h"
#include "gotop/pprof.h"
#include "gotop/profile.h"
#include "gotop/symtab.h"

/* CPU time of this (only) thread: the machine the figures come from is shared, and its
 * wall times are several times the CPU times; wall_s for the open's wall time too. */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* RssAnon and RssFile of this process, kB. */
static void status_kb(long *anon, long *file)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	*anon = *file = -1;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "RssAnon: %ld", anon);
		sscanf(line, "RssFile: %ld", file);
	}
	fclose(f);
}

/* The mapping(s) of path in smaps: total size and Rss (kB), and how many of their pages are
 * in the page cache (mincore), kB. */
static void mapping_kb(const char *path, long *size, long *rss, long *incore)
{
	char line[4096], *real = realpath(path, NULL);
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0;
	long pg = sysconf(_SC_PAGESIZE);

	*size = *rss = *incore = 0;
	if (!f || !real) {
		free(real);
		if (f)
			fclose(f);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char name[4096] = "";
		long v;

		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %4095s", &lo, &hi, name) >= 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = strcmp(name, real) == 0;
			if (in) {
				size_t n = (hi - lo) / (size_t)pg;
				unsigned char *vec = malloc(n);

				if (vec && mincore((void *)lo, hi - lo, vec) == 0)
					for (size_t i = 0; i < n; i++)
						*incore += (vec[i] & 1) ? pg / 1024 : 0;
				free(vec);
			}
			continue;
		}
		if (in && sscanf(line, "Size: %ld", &v) == 1)
			*size += v;
		else if (in && sscanf(line, "Rss: %ld", &v) == 1)
			*rss += v;
	}
	fclose(f);
	free(real);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *mode, *path, *set = "funcs";
	struct symfile *sf;
	struct gopcln *go;
	struct sym_frame fr[16];
	uint64_t *addrs = NULL;
	size_t naddrs = 0, cap = 0, nfunc, found = 0;
	double w0, t0, t_open, t_first, *rounds;
	long base_anon, base_file, anon, file, msize, mrss, mincore_kb, anon_open, file_open;
	int rounds_n = 5, err = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: symmem mapped|copied BINARY [funcs|PROFILE] [ROUNDS]\n");
		return 2;
	}
	mode = argv[1];
	path = argv[2];
	if (argc > 3)
		set = argv[3];
	if (argc > 4)
		rounds_n = atoi(argv[4]);
	if (rounds_n < 1)
		rounds_n = 1;
	status_kb(&base_anon, &base_file);

	w0 = wall_s();
	t0 = now_s();
	if (strcmp(mode, "mapped") == 0) {
		sf = symfile_open(path, &err);
	} else if (strcmp(mode, "copied") == 0) {
		struct stat st;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		char *buf;
		size_t got = 0;

		if (fd < 0 || fstat(fd, &st) != 0) {
			perror(path);
			return 1;
		}
		buf = malloc((size_t)st.st_size);
		if (!buf)
			return 1;
		while (got < (size_t)st.st_size) {
			ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
			if (r <= 0) {
				perror("read");
				return 1;
			}
			got += (size_t)r;
		}
		close(fd);
		sf = symfile_open_memory(buf, got, path, &err);
	} else {
		fprintf(stderr, "symmem: mode is mapped or copied\n");
		return 2;
	}
	if (!sf) {
		fprintf(stderr, "symmem: cannot open %s: %s\n", path, strerror(-err));
		return 1;
	}
	go = symfile_gopcln(sf);
	(void)symfile_nsymbols(sf);
	t_open = now_s() - t0;
	w0 = wall_s() - w0;
	if (!go) {
		fprintf(stderr, "symmem: %s has no .gopclntab\n", path);
		return 1;
	}
	status_kb(&anon_open, &file_open);
	nfunc = gopcln_nfunc(go);

	if (strcmp(set, "funcs") == 0) {
		for (size_t i = 0; i < nfunc; i++) {
			struct gopcln_func f;

			if (gopcln_func_at(go, i, &f) != 0 || f.end <= f.entry)
				continue;
			if (naddrs + 5 > cap) {
				cap = cap ? cap * 2 : 1 << 16;
				addrs = realloc(addrs, cap * sizeof(*addrs));
			}
			uint64_t len = f.end - f.entry;
			addrs[naddrs++] = f.entry;
			addrs[naddrs++] = f.entry + len / 4;
			addrs[naddrs++] = f.entry + len / 2;
			addrs[naddrs++] = f.entry + 3 * len / 4;
			addrs[naddrs++] = f.end - 1;
		}
	} else {
		/* A profile gotop-perf saved: its locations in the main binary (found by gopcln). */
		struct prof *p = pprof_read_file(set);
		size_t n;

		if (!p) {
			fprintf(stderr, "symmem: cannot read profile %s\n", set);
			return 1;
		}
		n = prof_nlocations(p);
		for (size_t i = 0; i < n; i++) {
			const struct prof_location *l = prof_location_at(p, i);
			struct gopcln_func f;

			if (!l || gopcln_find_func(go, l->address, &f) != 0)
				continue;
			if (naddrs + 1 > cap) {
				cap = cap ? cap * 2 : 1 << 12;
				addrs = realloc(addrs, cap * sizeof(*addrs));
			}
			addrs[naddrs++] = l->address;
		}
		prof_free(p);
		set = "profile";
	}
	if (!naddrs) {
		fprintf(stderr, "symmem: no addresses\n");
		return 1;
	}
	/* In address order, as the addresses of one refresh are not: shuffle (fixed seed) so
	 * that the pages the lookups touch are not read in file order. */
	qsort(addrs, naddrs, sizeof(*addrs), cmp_u64);
	srand(34);
	for (size_t i = naddrs - 1; i > 0; i--) {
		size_t j = (size_t)rand() % (i + 1);
		uint64_t t = addrs[i];
		addrs[i] = addrs[j];
		addrs[j] = t;
	}

	/* First sight of each address, with the cache (as a live session). */
	t0 = now_s();
	for (size_t i = 0; i < naddrs; i++)
		found += symfile_lookup(sf, addrs[i], fr, 16) > 0;
	t_first = now_s() - t0;

	/* The decoding cost: no cache, ROUNDS passes, median. */
	rounds = calloc((size_t)rounds_n, sizeof(*rounds));
	symfile_set_cache(sf, 0);
	for (int r = 0; r < rounds_n; r++) {
		t0 = now_s();
		for (size_t i = 0; i < naddrs; i++)
			(void)symfile_lookup(sf, addrs[i], fr, 16);
		rounds[r] = now_s() - t0;
	}
	qsort(rounds, (size_t)rounds_n, sizeof(*rounds), cmp_double);
	symfile_set_cache(sf, 1);

	status_kb(&anon, &file);
	mapping_kb(path, &msize, &mrss, &mincore_kb);
	printf("mode=%s set=%s nfunc=%zu addrs=%zu found=%zu open_ms=%.1f open_wall_ms=%.1f first_ns=%.0f "
	       "lookup_ns=%.0f lookup_ns_min=%.0f lookup_ns_max=%.0f "
	       "base_anon_kb=%ld base_file_kb=%ld open_anon_kb=%ld open_file_kb=%ld "
	       "anon_kb=%ld file_kb=%ld map_size_kb=%ld map_rss_kb=%ld map_incore_kb=%ld\n",
	       mode, set, nfunc, naddrs, found, t_open * 1e3, w0 * 1e3, t_first * 1e9 / (double)naddrs,
	       rounds[rounds_n / 2] * 1e9 / (double)naddrs, rounds[0] * 1e9 / (double)naddrs,
	       rounds[rounds_n - 1] * 1e9 / (double)naddrs, base_anon, base_file, anon_open,
	       file_open, anon, file, msize, mrss, mincore_kb);
	free(rounds);
	free(addrs);
	symfile_free(sf);
	return 0;
}
