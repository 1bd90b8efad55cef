/* ingest.c: the ingest throughput benchmark (BENCHMARKS.md, "Ingest throughput"): records
 * a Go target's raw samples and the memory the Go reader touched, then replays them
 * through Go reading, symbolization, repair and aggregation with no target, timing the
 * replay on one core. */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/goread.h"
#include "gotop/session.h"
#include "gotop/goruntime.h"
#include "gotop/maps.h"
#include "gotop/mem.h"
#include "gotop/perfrec.h"
#include "gotop/pprof.h"
#include "gotop/sampler.h"
#include "gotop/symtab.h"
#include "gotop/util.h"

/*
 * Usage:
 *   ingest record PID SECONDS HZ FILE
 *       samples every thread of the Go process PID for SECONDS at HZ (cpu-clock, 1 KiB
 *       stack copies, kernel callchains when allowed: what `gotop-perf record` asks for).
 *       On the sampling thread, every sample's goroutine and labels are read with the
 *       library's reader (gort_read) through a memory reader that logs every byte it
 *       reads. FILE gets the raw records, the target's /proc/PID/maps, its executable's
 *       path and the logged memory (the last bytes read at each address).
 *   ingest replay FILE [-p PASSES] [-c COALESCE_MS] [-b SAMPLES] [--no-go] [--no-repair]
 *                 [-o PROFILE]
 *       replays the records PASSES times (default 5) in batches of SAMPLES samples
 *       (default 2000): for every sample the goroutine and labels are read from the
 *       logged memory (a mem_fake_new reader; one read per thread, g register and
 *       COALESCE_MS window of sample time, default 4 like --label-latency; 0: every
 *       sample), appended as the sampler's extra record, and the batch goes to
 *       agg_feed (symbolization, repair, folding into the profile). Symbol tables are
 *       loaded before the clock starts (agg_preload), as gotop-perf does before sampling.
 *       Prints one line per pass: "pass=N samples=S cpu=SECONDS rate=SAMPLES_PER_S".
 *       The first pass symbolizes every address; later passes find them cached, as a
 *       long-running session does. -o writes the profile (gzipped pprof) at the end, so
 *       that two builds' results can be compared (go tool pprof -raw).
 * The executable must still be at its recorded path for the replay.
 */

#define MAGIC "GTPINGS1"

/* ---------- the memory log ---------- */

struct memlog_ent {
	uint64_t addr, seq;
	uint32_t len, off; /* bytes at data + off */
};

struct memlog {
	pid_t pid;
	struct memlog_ent *ents;
	size_t n, cap;
	uint8_t *data;
	size_t dlen, dcap;
	uint64_t reads, bytes;
};

static int memlog_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct memlog *ml = ctx;
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t r = process_vm_readv(ml->pid, &local, 1, &remote, 1, 0);
	struct memlog_ent *e;

	if (r < 0)
		return -errno;
	if ((size_t)r != len)
		return -EFAULT;
	ml->reads++;
	ml->bytes += len;
	xgrow((void **)&ml->ents, &ml->cap, ml->n + 1, sizeof(*ml->ents));
	xgrow((void **)&ml->data, &ml->dcap, ml->dlen + len, 1);
	e = &ml->ents[ml->n];
	e->addr = addr;
	e->len = (uint32_t)len;
	e->off = (uint32_t)ml->dlen;
	e->seq = ml->n++;
	memcpy(ml->data + ml->dlen, buf, len);
	ml->dlen += len;
	return 0;
}

static int ent_by_addr(const void *a, const void *b)
{
	const struct memlog_ent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int ent_by_seq(const void *a, const void *b)
{
	const struct memlog_ent *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merges the log into disjoint regions; where reads overlap, the latest bytes win. */
static struct mem_region *memlog_regions(struct memlog *ml, size_t *nout)
{
	struct mem_region *rg = NULL;
	size_t n = 0, cap = 0, i = 0, j, k;

	qsort(ml->ents, ml->n, sizeof(*ml->ents), ent_by_addr);
	while (i < ml->n) {
		uint64_t lo = ml->ents[i].addr, hi = lo + ml->ents[i].len;
		uint8_t *buf;

		for (j = i + 1; j < ml->n && ml->ents[j].addr <= hi; j++)
			if (ml->ents[j].addr + ml->ents[j].len > hi)
				hi = ml->ents[j].addr + ml->ents[j].len;
		buf = xmalloc(hi - lo);
		/* Apply in read order, so that the last read of a byte wins. */
		qsort(ml->ents + i, j - i, sizeof(*ml->ents), ent_by_seq);
		for (k = i; k < j; k++)
			memcpy(buf + (ml->ents[k].addr - lo), ml->data + ml->ents[k].off, ml->ents[k].len);
		xgrow((void **)&rg, &cap, n + 1, sizeof(*rg));
		rg[n].addr = lo;
		rg[n].len = hi - lo;
		rg[n].data = buf;
		n++;
		i = j;
	}
	*nout = n;
	return rg;
}

/* ---------- the file ---------- */

static void put(FILE *f, const void *p, size_t n)
{
	if (n && fwrite(p, 1, n, f) != n) {
		perror("ingest: write");
		exit(1);
	}
}

static void put64(FILE *f, uint64_t v)
{
	put(f, &v, 8);
}

static void putblob(FILE *f, const void *p, size_t n)
{
	put64(f, n);
	put(f, p, n);
}

struct rd {
	const uint8_t *p, *end;
};

static uint64_t get64(struct rd *r)
{
	uint64_t v;

	if (r->end - r->p < 8) {
		fprintf(stderr, "ingest: truncated file\n");
		exit(1);
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

static const uint8_t *getblob(struct rd *r, size_t *n)
{
	const uint8_t *p;

	*n = get64(r);
	if ((size_t)(r->end - r->p) < *n) {
		fprintf(stderr, "ingest: truncated file\n");
		exit(1);
	}
	p = r->p;
	r->p += *n;
	return p;
}

/* ---------- the target's Go runtime ---------- */

/* The reader of a non-PIE Go executable (what goread_publish_file sets up), its
 * read-only mappings taken from the maps text. NULL when exe is not Go. */
static struct gort *gort_for(const char *exe, const char *maps_text, size_t maps_len,
			     struct symfile **sfp)
{
	struct symfile *sf = symfile_open(exe, NULL);
	struct gort *g;
	struct maps *m;
	const char *ver;
	size_t i;

	*sfp = sf;
	if (!sf || !(ver = symfile_go_version(sf)))
		return NULL;
	if (symfile_type(sf) != ET_EXEC) {
		fprintf(stderr, "ingest: %s is not a non-PIE executable\n", exe);
		return NULL;
	}
	g = gort_new(ver, symfile_dwarf(sf),
		     symfile_machine(sf) == EM_AARCH64 ? GORT_ARCH_ARM64 : GORT_ARCH_AMD64);
	if (!g)
		return NULL;
	gort_set_runtime_vars(g, symfile_symbol_value(sf, "runtime.allm"),
			      symfile_symbol_value(sf, "runtime.mheap_"));
	m = maps_parse(maps_text, maps_len);
	for (i = 0; i < maps_count(m); i++) {
		const struct maps_entry *e = maps_at(m, i);

		if (!strcmp(e->path, exe) && !(e->perms & MAPS_W))
			gort_add_static_range(g, e->start, e->end);
	}
	maps_free(m);
	return g;
}

/* ---------- record ---------- */

struct rec_ctx {
	struct gort *gort;
	struct gp_mem mem;
	uint64_t found, reads;
};

static size_t record_hook(void *arg, const struct perf_event_header *h,
			  const struct perfrec_layout *layout, void *extra)
{
	struct rec_ctx *c = arg;
	struct perf_sample s;
	struct gort_result r;
	int sp = sampler_reg(SREG_SP), g = sampler_reg(SREG_G);

	/* h == NULL: the sampler's end-of-drain call (only after a nonzero return). */
	if (!h || perfrec_parse_sample(layout, h, &s) || !s.regs_abi || sp < 0 || g < 0)
		return 0;
	c->reads++;
	if (gort_read(c->gort, &c->mem, s.tid, s.regs[g], s.regs[sp], &r) == 0)
		c->found++;
	return 0;
}

static int do_record(pid_t pid, double seconds, uint64_t hz, const char *out)
{
	struct sampler_opts so;
	struct sampler *smp;
	struct memlog ml;
	struct rec_ctx ctx;
	struct symfile *sf;
	struct mem_region *rg;
	struct perfrec_layout layout;
	char path[64], exe[4096], why[256];
	uint8_t *recs = NULL;
	size_t reclen = 0, reccap = 0, maps_len, nrg, i;
	char *maps_text;
	uint64_t t0, samples = 0;
	int have_layout = 0, kernel;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0) {
		perror("ingest: readlink exe");
		return 1;
	}
	exe[n] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	maps_text = util_read_file(path, SIZE_MAX, &maps_len);
	if (!maps_text) {
		perror("ingest: maps");
		return 1;
	}
	memset(&layout, 0, sizeof(layout));
	memset(&ml, 0, sizeof(ml));
	ml.pid = pid;
	memset(&ctx, 0, sizeof(ctx));
	ctx.mem.read = memlog_read;
	ctx.mem.ctx = &ml;
	ctx.gort = gort_for(exe, maps_text, maps_len, &sf);
	if (!ctx.gort) {
		fprintf(stderr, "ingest: %s: not a Go executable this benchmark can read\n", exe);
		return 1;
	}
	kernel = events_kernel_allowed(why, sizeof(why));
	memset(&so, 0, sizeof(so));
	so.pid = pid;
	if (events_parse("cpu-clock", &so.event)) {
		fprintf(stderr, "ingest: no cpu-clock event\n");
		return 1;
	}
	so.use_freq = 1;
	so.freq = hz;
	so.stack_size = 1024;
	so.kernel = kernel;
	so.hook = record_hook;
	so.hook_arg = &ctx;
	so.drain_ms = 4;
	smp = sampler_new(&so, why, sizeof(why));
	if (!smp) {
		fprintf(stderr, "ingest: %s\n", why);
		return 1;
	}
	if (sampler_start(smp)) {
		fprintf(stderr, "ingest: cannot start the sampler\n");
		return 1;
	}
	t0 = util_now_ns();
	while ((double)(util_now_ns() - t0) / 1e9 < seconds && !sampler_target_exited(smp)) {
		struct sample_batch *b = sampler_take(smp, 100);

		if (!b)
			continue;
		if (!have_layout) {
			layout = *b->layout;
			have_layout = 1;
		}
		xgrow((void **)&recs, &reccap, reclen + b->len, 1);
		memcpy(recs + reclen, b->data, b->len);
		reclen += b->len;
		sampler_batch_free(smp, b);
	}
	sampler_stop(smp);
	for (struct sample_batch *b; (b = sampler_take(smp, 0));) {
		xgrow((void **)&recs, &reccap, reclen + b->len, 1);
		memcpy(recs + reclen, b->data, b->len);
		reclen += b->len;
		sampler_batch_free(smp, b);
	}
	{
		struct sampler_stats st;

		sampler_get_stats(smp, &st);
		samples = st.samples;
		fprintf(stderr, "ingest: %llu samples, %llu lost, %llu bytes of records; %llu Go reads "
			"(%llu found), %llu memory reads of %llu bytes\n",
			(unsigned long long)st.samples, (unsigned long long)st.lost,
			(unsigned long long)reclen, (unsigned long long)ctx.reads,
			(unsigned long long)ctx.found, (unsigned long long)ml.reads,
			(unsigned long long)ml.bytes);
	}
	sampler_free(smp);
	if (!have_layout || !samples) {
		fprintf(stderr, "ingest: no samples\n");
		return 1;
	}
	rg = memlog_regions(&ml, &nrg);
	f = fopen(out, "wb");
	if (!f) {
		perror(out);
		return 1;
	}
	put(f, MAGIC, 8);
	put64(f, layout.sample_type);
	put64(f, layout.regs_user_mask);
	put64(f, layout.read_format);
	put64(f, (uint64_t)layout.sample_id_all);
	put64(f, (uint64_t)kernel);
	putblob(f, exe, strlen(exe));
	putblob(f, maps_text, maps_len);
	put64(f, nrg);
	for (i = 0; i < nrg; i++) {
		put64(f, rg[i].addr);
		putblob(f, rg[i].data, rg[i].len);
	}
	putblob(f, recs, reclen);
	if (fclose(f)) {
		perror(out);
		return 1;
	}
	fprintf(stderr, "ingest: %zu memory regions; wrote %s\n", nrg, out);
	return 0;
}

/* ---------- replay ---------- */

struct tidslot {
	uint32_t tid;
	uint64_t greg, window;
	struct goread_extra x;
};
#define TIDSLOTS 256

static double thread_cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int do_replay(int argc, char **argv)
{
	const char *file = argv[0];
	unsigned passes = 5, pass;
	double coalesce_ms = 4;
	size_t batch_samples = 2000, i, nrg, maps_len, exe_len, reclen, flen;
	int go = 1, repair = 1, kernel;
	struct perfrec_layout layout;
	struct event_spec ev;
	struct mem_region *rg;
	struct gp_mem *fake;
	struct symfile *sf = NULL;
	struct gort *gort;
	struct agg_opts ao;
	struct agg *agg;
	struct agg_stats ast;
	struct sample_batch b;
	struct tidslot *slots;
	const uint8_t *recs;
	const char *maps_text;
	char *exe, *fbuf;
	struct rd r;
	double t, pre;
	uint64_t gort_calls = 0, no_regs = 0;
	int sp = sampler_reg(SREG_SP), greg = sampler_reg(SREG_G);
	const char *out = NULL;

	for (i = 1; i < (size_t)argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < (size_t)argc)
			passes = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < (size_t)argc)
			coalesce_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "-b") && i + 1 < (size_t)argc)
			batch_samples = (size_t)atol(argv[++i]);
		else if (!strcmp(argv[i], "--no-go"))
			go = 0;
		else if (!strcmp(argv[i], "--no-repair"))
			repair = 0;
		else if (!strcmp(argv[i], "-o") && i + 1 < (size_t)argc)
			out = argv[++i];
		else {
			fprintf(stderr, "ingest: unknown replay option %s\n", argv[i]);
			return 2;
		}
	}
	fbuf = util_read_file(file, SIZE_MAX, &flen);
	if (!fbuf || flen < 8 || memcmp(fbuf, MAGIC, 8)) {
		fprintf(stderr, "ingest: %s: not a recording\n", file);
		return 1;
	}
	r.p = (const uint8_t *)fbuf + 8;
	r.end = (const uint8_t *)fbuf + flen;
	layout.sample_type = get64(&r);
	layout.regs_user_mask = get64(&r);
	layout.read_format = get64(&r);
	layout.sample_id_all = (int)get64(&r);
	kernel = (int)get64(&r);
	{
		const uint8_t *p = getblob(&r, &exe_len);

		exe = xmalloc(exe_len + 1);
		memcpy(exe, p, exe_len);
		exe[exe_len] = '\0';
	}
	maps_text = (const char *)getblob(&r, &maps_len);
	nrg = get64(&r);
	rg = xcalloc(nrg ? nrg : 1, sizeof(*rg));
	for (i = 0; i < nrg; i++) {
		rg[i].addr = get64(&r);
		rg[i].data = getblob(&r, &rg[i].len);
	}
	recs = getblob(&r, &reclen);
	fake = mem_fake_new(rg, nrg);
	events_parse("cpu-clock", &ev);

	pre = thread_cpu_s();
	gort = go ? gort_for(exe, maps_text, maps_len, &sf) : NULL;
	if (go && !gort) {
		fprintf(stderr, "ingest: cannot set up the Go reader for %s\n", exe);
		return 1;
	}
	memset(&ao, 0, sizeof(ao));
	ao.repair = repair;
	ao.kernel = kernel;
	ao.offline_maps = maps_text;
	ao.offline_maps_len = maps_len;
	ao.offline_exe = exe;
	ao.go_reader = session_go_reader(); /* the extra records are the session's reader's */
	agg = agg_new(&ao);
	agg_preload(agg, 1);
	fprintf(stderr, "ingest: set-up (symbol tables%s, Go reader) %.1f ms CPU\n",
		kernel ? ", kallsyms" : "", (thread_cpu_s() - pre) * 1e3);

	memset(&b, 0, sizeof(b));
	b.layout = &layout;
	b.event = &ev;
	b.cap = 0;
	b.data = NULL;
	slots = xcalloc(TIDSLOTS, sizeof(*slots));
	for (pass = 1; pass <= passes; pass++) {
		size_t off = 0, ns = 0, total = 0;
		double c0 = thread_cpu_s(), w0 = (double)util_now_ns();

		memset(slots, 0, TIDSLOTS * sizeof(*slots));
		b.len = 0;
		while (off + sizeof(struct perf_event_header) <= reclen) {
			const struct perf_event_header *h = (const void *)(recs + off);
			size_t sz = ((size_t)h->size + 7u) & ~(size_t)7u;

			if (h->size < sizeof(*h) || off + sz > reclen)
				break;
			off += sz;
			if (h->type == SAMPLER_RECORD_EXTRA)
				continue; /* none in recordings; the replay makes its own */
			xgrow((void **)&b.data, &b.cap, b.len + sz + 8 + SAMPLER_EXTRA_MAX, 1);
			memcpy(b.data + b.len, h, h->size);
			/* From here on the copy: records in the file need not be 8-byte aligned,
			 * and the parser wants them aligned as the kernel writes them. */
			h = (const void *)(b.data + b.len);
			b.len += sz;
			if (h->type != PERF_RECORD_SAMPLE)
				continue;
			ns++;
			total++;
			if (gort && sp >= 0 && greg >= 0) {
				struct perf_sample s;
				struct perf_event_header *x = (void *)(b.data + b.len);
				struct goread_extra *gx = (void *)(x + 1);

				if (perfrec_parse_sample(&layout, h, &s) || !s.regs_abi) {
					no_regs++;
				} else {
					struct tidslot *c = &slots[s.tid % TIDSLOTS];
					uint64_t win = coalesce_ms > 0 ? (uint64_t)((double)s.time / (coalesce_ms * 1e6)) : 0;

					if (coalesce_ms > 0 && c->tid == s.tid && c->greg == s.regs[greg] &&
					    c->window == win) {
						*gx = c->x;
					} else {
						struct gort_result gr;

						memset(gx, 0, sizeof(*gx));
						gx->rc = gort_read(gort, fake, s.tid, s.regs[greg], s.regs[sp], &gr);
						gort_calls++;
						if (gx->rc == 0) {
							gx->goid = gr.goid;
							gx->labels = gr.labels;
						}
						gx->flags = (uint32_t)gr.flags;
						c->tid = s.tid;
						c->greg = s.regs[greg];
						c->window = win;
						c->x = *gx;
					}
					x->type = SAMPLER_RECORD_EXTRA;
					x->misc = 0;
					x->size = (uint16_t)((sizeof(*x) + sizeof(*gx) + 7) & ~(size_t)7);
					b.len += x->size;
				}
			}
			if (ns >= batch_samples) {
				agg_feed(agg, &b);
				b.len = 0;
				ns = 0;
			}
		}
		if (b.len)
			agg_feed(agg, &b);
		b.len = 0;
		t = thread_cpu_s() - c0;
		printf("pass=%u samples=%zu cpu=%.6f wall=%.6f rate=%.0f\n", pass, total, t,
		       ((double)util_now_ns() - w0) / 1e9, t > 0 ? (double)total / t : 0);
		fflush(stdout);
	}
	agg_get_stats(agg, &ast);
	printf("stats samples=%llu go=%llu goid=%llu labelled=%llu repaired=%llu addrs=%llu "
	       "unresolved=%llu bad=%llu gort_reads=%llu no_regs=%llu\n",
	       (unsigned long long)ast.samples, (unsigned long long)ast.go_samples,
	       (unsigned long long)ast.with_goid, (unsigned long long)ast.labelled,
	       (unsigned long long)ast.repaired, (unsigned long long)ast.addrs,
	       (unsigned long long)ast.unresolved, (unsigned long long)ast.bad,
	       (unsigned long long)gort_calls, (unsigned long long)no_regs);
	if (out && agg_nprofiles(agg) && pprof_write_file(agg_profile_at(agg, 0, NULL), out))
		fprintf(stderr, "ingest: cannot write %s\n", out);
	agg_free(agg);
	gort_free(gort);
	symfile_free(sf);
	mem_fake_free(fake);
	free(slots);
	free(b.data);
	free(rg);
	free(exe);
	free(fbuf);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 6 && !strcmp(argv[1], "record"))
		return do_record((pid_t)atoi(argv[2]), atof(argv[3]), strtoull(argv[4], NULL, 10),
				 argv[5]);
	if (argc >= 3 && !strcmp(argv[1], "replay"))
		return do_replay(argc - 2, argv + 2);
	fprintf(stderr, "usage: ingest record PID SECONDS HZ FILE | ingest replay FILE [-p PASSES] "
		"[-c COALESCE_MS] [-b SAMPLES] [--no-go] [--no-repair]\n");
	return 2;
}
