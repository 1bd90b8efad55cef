/* test-agg.c: unit tests for the aggregator: samples with kernel frames held while kernel
 * symbols load (agg_opts.hold_kernel), folded afterwards into the same profile. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/goread.h"
#include "gotop/perfrec.h"
#include "gotop/profile.h"
#include "gotop/sampler.h"
#include "gotop/session.h"

/* A kernel in /proc/kallsyms format, and one user mapping whose file does not exist
 * (its frames are named app+0xOFFSET). */
static const char KSYMS[] = "ffffffff81000000 T _stext\n"
			    "ffffffff81000100 T do_syscall_64\n"
			    "ffffffff81000200 T ksys_read\n"
			    "ffffffff81000300 t read_zero\n"
			    "ffffffff81000400 T _etext\n";
static const char MAPS[] = "00400000-00500000 r-xp 00000000 00:00 0 /nonexistent/app\n";

/* ip, pid/tid, time, period, callchain (linux include/uapi/linux/perf_event.h order) */
static const struct perfrec_layout layout = {
	PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
		PERF_SAMPLE_CALLCHAIN,
	0, 0, 1,
};

struct batchbuf {
	uint64_t w[1024];
	size_t n;
};

static void add_sample(struct batchbuf *b, uint32_t tid, const uint64_t *kern, size_t nk,
		       const uint64_t *user, size_t nu)
{
	struct perf_event_header *h = (void *)&b->w[b->n];
	size_t start = b->n, i;

	b->n++;
	b->w[b->n++] = nu ? user[0] : kern[0];
	b->w[b->n++] = (uint64_t)100 | (uint64_t)tid << 32;
	b->w[b->n++] = 1000 + start;
	b->w[b->n++] = 1000000;
	b->w[b->n++] = (nk ? nk + 1 : 0) + (nu ? nu + 1 : 0);
	if (nk) {
		b->w[b->n++] = PERF_CONTEXT_KERNEL;
		for (i = 0; i < nk; i++)
			b->w[b->n++] = kern[i];
	}
	if (nu) {
		b->w[b->n++] = PERF_CONTEXT_USER;
		for (i = 0; i < nu; i++)
			b->w[b->n++] = user[i];
	}
	h->type = PERF_RECORD_SAMPLE;
	h->misc = nk ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	h->size = (uint16_t)((b->n - start) * 8);
}

/* The batch of event ev holding bb's records. */
static void batch_of(struct sample_batch *b, const struct batchbuf *bb, const struct event_spec *ev)
{
	memset(b, 0, sizeof(*b));
	b->layout = &layout;
	b->event = ev;
	b->data = (uint8_t *)bb->w;
	b->len = b->cap = bb->n * 8;
}

/* Four samples: user only; kernel and user (twice, other threads); kernel only. */
static void make_batch(struct batchbuf *bb, struct sample_batch *b, const struct event_spec *ev)
{
	static const uint64_t u1[] = { 0x401010, 0x402020, 0x403030 };
	static const uint64_t k1[] = { 0xffffffff81000300ULL, 0xffffffff81000210ULL,
				       0xffffffff81000120ULL };
	static const uint64_t k2[] = { 0xffffffff81000130ULL };

	memset(bb, 0, sizeof(*bb));
	add_sample(bb, 10, NULL, 0, u1, 3);
	add_sample(bb, 11, k1, 3, u1, 3);
	add_sample(bb, 12, k2, 1, u1 + 1, 2);
	add_sample(bb, 13, k1, 2, NULL, 0);
	batch_of(b, bb, ev);
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The profile as sorted text, one line per sample: frames leaf first, labels, values. */
static char *profile_text(const struct prof *p)
{
	char **lines = calloc(prof_nsamples(p) + 1, sizeof(char *));
	size_t i, j, k, n = prof_nsamples(p), total = 1;
	char *out;

	for (i = 0; i < n; i++) {
		struct prof_sample s;
		char buf[4096];
		size_t len = 0;

		assert_int_equal(prof_sample_at(p, i, &s), 0);
		buf[0] = 0;
		for (j = 0; j < s.nlocs; j++) {
			const struct prof_location *l = prof_location_at(p, s.locs[j] - 1);

			for (k = 0; k < l->nlines; k++) {
				const struct prof_function *f =
					prof_function_at(p, l->lines[k].function - 1);

				len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s;",
							prof_string(p, f->name, NULL));
			}
		}
		for (j = 0; j < s.nlabels; j++) {
			if (s.labels[j].str)
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s=%s",
							prof_string(p, s.labels[j].key, NULL),
							prof_string(p, s.labels[j].str, NULL));
			else
				len += (size_t)snprintf(buf + len, sizeof(buf) - len, " %s=%lld",
							prof_string(p, s.labels[j].key, NULL),
							(long long)s.labels[j].num);
		}
		snprintf(buf + len, sizeof(buf) - len, " %lld %lld", (long long)s.values[0],
			 (long long)s.values[1]);
		lines[i] = strdup(buf);
		total += strlen(buf) + 1;
	}
	qsort(lines, n, sizeof(char *), line_cmp);
	out = calloc(1, total);
	for (i = 0; i < n; i++) {
		strcat(out, lines[i]);
		strcat(out, "\n");
		free(lines[i]);
	}
	free(lines);
	return out;
}

static char dir[64];

static int setup(void **state)
{
	/* A wait for kernel symbols that nobody writes would hang: fail instead. */
	alarm(60);
	snprintf(dir, sizeof(dir), "/tmp/test-agg.XXXXXX");
	assert_non_null(mkdtemp(dir));
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	alarm(0);
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Options for an aggregator with no process: MAPS as the target's maps. */
static void offline_opts(struct agg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->pid = -1;
	o->offline_maps = MAPS;
	o->offline_maps_len = strlen(MAPS);
	o->offline_exe = "/nonexistent/app";
	o->go_reader = session_go_reader(); /* goread_extra records, as the session's samplers */
}

static struct agg *new_agg(int hold, const char *kallsyms_path)
{
	struct agg_opts o;

	offline_opts(&o);
	o.kernel = 1;
	o.hold_kernel = hold;
	o.kallsyms_path = kallsyms_path;
	return agg_new(&o);
}

/* The reference: kernel symbols from a plain file, no holding. */
static char *reference_profile(const struct sample_batch *b)
{
	char path[128];
	FILE *f;
	struct agg *a;
	struct agg_stats st;
	char *text;

	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(KSYMS, f);
	fclose(f);
	a = new_agg(0, path);
	agg_feed(a, b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.held, 0);
	text = profile_text(agg_profile(a, "cpu-clock"));
	agg_free(a);
	return text;
}

/* Opens the FIFO the kernel symbols are read from: the aggregator's loading thread
 * blocks in open() and read() until the test writes them, so "still loading" is a state
 * the test controls, not a race. */
static char *make_fifo(char *path, size_t len)
{
	snprintf(path, len, "%s/fifo", dir);
	unlink(path);
	assert_int_equal(mkfifo(path, 0600), 0);
	return path;
}

static void write_fifo(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* While kernel symbols load, samples with kernel frames are held: the profile has only
 * the user-only sample, and no kernel address shows up without its name. agg_flush
 * then folds them, and the result is the profile of an aggregator that waited. */
static void test_hold_then_flush(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg *a;
	struct agg_stats st;
	char fifo[128], *want, *got;
	const struct prof *p;
	size_t i;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	make_batch(&bb, &b, &ev);
	want = reference_profile(&b);
	assert_non_null(strstr(want, "read_zero;ksys_read;do_syscall_64;app+0x1010;"));

	a = new_agg(1, make_fifo(fifo, sizeof(fifo)));
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.held, 3);
	assert_int_equal(agg_flush(a, 0), 0); /* still loading: nothing folded */
	p = agg_profile(a, "cpu-clock");
	assert_non_null(p);
	assert_int_equal(prof_nsamples(p), 1);
	assert_int_equal(prof_total(p, 0), 1);
	for (i = 0; i < prof_nfunctions(p); i++) {
		const char *name = prof_string(p, prof_function_at(p, i)->name, NULL);

		assert_null(strstr(name, "kernel"));
		assert_null(strstr(name, "ffffffff"));
	}

	write_fifo(fifo, KSYMS);
	assert_int_equal(agg_flush(a, 1), 3);
	assert_int_equal(agg_flush(a, 1), 0);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.held, 0);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_string_equal(got, want);

	/* Nothing is held once the names are there. */
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 8);
	assert_int_equal(st.held, 0);
	free(got);

	/* Repeated samples (the stack and sample memos in agg.c) add to the same entries:
	 * three feeds give the first profile with every count tripled. */
	agg_feed(a, &b);
	got = profile_text(agg_profile(a, "cpu-clock"));
	for (char *q = want; (q = strstr(q, " 1 1000000")) != NULL; q += 10)
		memcpy(q, " 3 3000000", 10);
	assert_string_equal(got, want);
	free(got);
	free(want);
	agg_free(a);
}

/* agg_feed folds the held samples by itself once the names have loaded. */
static void test_feed_folds_held(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b, empty;
	struct agg *a;
	struct agg_stats st;
	char fifo[128], *want, *got;
	int tries;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	make_batch(&bb, &b, &ev);
	want = reference_profile(&b);
	a = new_agg(1, make_fifo(fifo, sizeof(fifo)));
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.held, 3);
	write_fifo(fifo, KSYMS);
	memset(&empty, 0, sizeof(empty));
	empty.layout = &layout;
	empty.event = &ev;
	/* The loading thread finishes on its own time: wait for it, up to 20 s. */
	for (tries = 0; tries < 2000; tries++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		agg_feed(a, &empty);
		agg_get_stats(a, &st);
		if (!st.held)
			break;
		nanosleep(&ts, NULL);
	}
	assert_int_equal(st.held, 0);
	assert_int_equal(st.samples, 4);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_string_equal(got, want);
	free(got);
	free(want);
	agg_free(a);
}

/* Kernel symbols that cannot be read (kptr_restrict: every address 0): the held samples
 * are still folded, with their kernel frames as [kernel.kallsyms]+offset, as without
 * holding. */
static void test_hold_kernel_unreadable(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg *a;
	struct agg_stats st;
	char fifo[128], *got;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	make_batch(&bb, &b, &ev);
	a = new_agg(1, make_fifo(fifo, sizeof(fifo)));
	agg_feed(a, &b);
	write_fifo(fifo, "0000000000000000 T _stext\n0000000000000000 T do_syscall_64\n");
	assert_int_equal(agg_flush(a, 1), 3);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.held, 0);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_null(strstr(got, "do_syscall_64"));
	assert_non_null(strstr(got, "[kernel.kallsyms]"));
	free(got);
	agg_free(a);
}

/* Without hold_kernel nothing is held: the first kernel frame waits for the names. */
static void test_no_hold(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg *a;
	struct agg_stats st;
	char fifo[128];
	pid_t pid;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	make_batch(&bb, &b, &ev);
	make_fifo(fifo, sizeof(fifo));
	/* A writer that gives the names a little later: the aggregator waits for them. */
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(fifo, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || write(fd, KSYMS, strlen(KSYMS)) != (ssize_t)strlen(KSYMS))
			_exit(1);
		_exit(0);
	}
	a = new_agg(0, fifo);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.held, 0);
	assert_int_equal(agg_flush(a, 0), 0);
	agg_free(a);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* A Go sample at time t (ns) of goroutine goid, followed by the hook's extra record
 * (sampler.h SAMPLER_RECORD_EXTRA: a goread_extra) as the sampler writes it. */
/* agg_compact keeps the chosen entries with their counts; samples after it fold into
 * them, and the dropped ones come back as new entries. Refused while samples are held. */
static void test_compact(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg *a;
	char path[128], fifo[128], *want, *kept, *got, *exp, *line, *save = NULL;
	uint8_t keep[4] = { 1, 0, 1, 0 };
	uint32_t idx[4];
	struct prof *before;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	make_batch(&bb, &b, &ev);
	want = reference_profile(&b); /* writes dir/kallsyms */
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	a = new_agg(0, path);
	agg_feed(a, &b);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 4);
	assert_int_equal(agg_compact(a, "no-such-event", keep, idx), -ENOENT);
	assert_int_equal(agg_compact(a, "cpu-clock", keep, idx), 0);
	assert_int_equal(idx[0], 0);
	assert_int_equal(idx[1], UINT32_MAX);
	assert_int_equal(idx[2], 1);
	assert_int_equal(idx[3], UINT32_MAX);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 2);
	kept = profile_text(agg_profile(a, "cpu-clock"));

	/* The same batch again: kept lines doubled, the others once (new entries). */
	agg_feed(a, &b);
	got = profile_text(agg_profile(a, "cpu-clock"));
	exp = calloc(1, strlen(want) + 1);
	for (line = strtok_r(want, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char l[4096], *q;

		snprintf(l, sizeof(l), "%s\n", line);
		if (strstr(kept, l) && (q = strstr(l, " 1 1000000")))
			memcpy(q, " 2 2000000", 10);
		strcat(exp, l);
	}
	assert_string_equal(got, exp);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 4);
	free(got);
	free(exp);
	free(kept);
	free(want);
	agg_free(a);

	/* Held samples hold location ids: no compaction until they are folded. */
	a = new_agg(1, make_fifo(fifo, sizeof(fifo)));
	agg_feed(a, &b);
	before = agg_profile(a, "cpu-clock");
	assert_int_equal(agg_compact(a, "cpu-clock", NULL, NULL), -EBUSY);
	assert_ptr_equal(agg_profile(a, "cpu-clock"), before);
	write_fifo(fifo, KSYMS);
	assert_int_equal(agg_flush(a, 1), 3);
	assert_int_equal(agg_compact(a, "cpu-clock", NULL, NULL), 0);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 4);
	agg_free(a);
}

static void add_go_sample_x(struct batchbuf *b, uint64_t t, uint64_t goid, uint32_t flags,
			    const struct gort_labels *gl);
/* The user stack (2 frames) of the next Go samples; NULL: the usual one. */
static const uint64_t *go_user;
/* The g.startpc of the next Go samples (0: none). */
static uint64_t go_startpc;

static void add_go_sample(struct batchbuf *b, uint64_t t, uint64_t goid)
{
	add_go_sample_x(b, t, goid, 0, NULL);
}

/* The same, with the read's GORT_* flags and label set. */
static void add_go_sample_x(struct batchbuf *b, uint64_t t, uint64_t goid, uint32_t flags,
			    const struct gort_labels *gl)
{
	static const uint64_t u[] = { 0x401010, 0x402020 };
	struct perf_event_header x = { SAMPLER_RECORD_EXTRA, 0,
				       (uint16_t)(sizeof(x) + ((sizeof(struct goread_extra) + 7) & ~7u)) };
	struct goread_extra gx;
	size_t at = b->n;

	add_sample(b, 10, NULL, 0, go_user ? go_user : u, 2);
	b->w[at + 3] = t; /* PERF_SAMPLE_TIME, after ip and tid */
	memset(&gx, 0, sizeof(gx));
	gx.goid = goid;
	gx.flags = flags;
	gx.labels = gl;
	gx.startpc = go_startpc;
	memcpy(&b->w[b->n], &x, sizeof(x));
	memcpy(&b->w[b->n + 1], &gx, sizeof(gx));
	b->n += x.size / 8;
}

/* How many samples of the profile carry this label text (e.g. " goroutine=4 "). */
static long count_with(const char *text, const char *label)
{
	long n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n'), *hit = strstr(l, label), *v;

		if (!hit || (end && hit > end))
			continue;
		/* "... <count> <period>": the next to last field */
		v = end ? end : l + strlen(l);
		while (v > l && v[-1] != ' ')
			v--;
		v--;
		while (v > l && v[-1] != ' ')
			v--;
		n += strtol(v, NULL, 10);
	}
	return n;
}

/* A sample whose labels were left out (the reader's table of label sets was full, or
 * past labels_full entries) is counted, and kept. */
static void test_labels_dropped(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg_stats st;
	struct agg *a;

	(void)state;
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	offline_opts(&o);
	a = agg_new(&o);
	memset(&bb, 0, sizeof(bb));
	add_go_sample(&bb, 1000, 1);
	add_go_sample_x(&bb, 2000, 1, GORT_LABELS_DROPPED, NULL);
	add_go_sample_x(&bb, 3000, 2, GORT_LABELS_DROPPED | GORT_VIA_M, NULL);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 3);
	assert_int_equal(st.labels_dropped, 2);
	assert_int_equal(prof_total(agg_profile(a, "cpu-clock"), 0), 3);
	agg_free(a);

	/* Past labels_full entries, a set with no entry is counted without labels; sets
	 * that have one keep counting there. All on goroutine 1 and thread 10. */
	{
		struct gort_label p[3] = { { "req", "1", 3, 1 }, { "req", "2", 3, 1 },
					   { "req", "3", 3, 1 } };
		struct gort_labels r1 = { 1, 0, &p[0] }, r2 = { 1, 0, &p[1] }, r3 = { 1, 0, &p[2] };
		static const uint64_t other[] = { 0x403030, 0x402020 };
		char *got;

		offline_opts(&o);
		o.samples_full = o.labels_full = 2;
		a = agg_new(&o);
		memset(&bb, 0, sizeof(bb));
		add_go_sample_x(&bb, 1000, 1, 0, &r1);
		add_go_sample_x(&bb, 2000, 1, 0, &r2); /* full */
		add_go_sample_x(&bb, 3000, 1, 0, &r3); /* a set never taken: no labels */
		add_go_sample_x(&bb, 4000, 1, 0, &r1); /* its entry */
		add_go_sample_x(&bb, 5000, 1, 0, &r3); /* the entry without labels */
		go_user = other;
		add_go_sample_x(&bb, 6000, 1, 0, &r1); /* a set taken, a new stack: no labels */
		go_user = NULL;
		batch_of(&b, &bb, &ev);
		agg_feed(a, &b);
		agg_get_stats(a, &st);
		assert_int_equal(st.samples, 6);
		assert_int_equal(st.labels_dropped, 3);
		assert_int_equal(st.labelled, 3);
		assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 4);
		got = profile_text(agg_profile(a, "cpu-clock"));
		assert_int_equal(count_with(got, " req=1 "), 2);
		assert_int_equal(count_with(got, " req=2 "), 1);
		assert_int_equal(count_with(got, " req=3 "), 0);
		assert_int_equal(count_with(got, " req="), 3);
		/* The set never taken cost nothing: its value is not among the strings. */
		for (uint32_t i = 0; i < prof_nstrings(agg_profile(a, "cpu-clock")); i++)
			assert_string_not_equal(prof_string(agg_profile(a, "cpu-clock"), i, NULL), "3");
		free(got);
		agg_free(a);
	}
}

extern char __executable_start; /* the GNU linker's: where the executable starts */

/* After agg_compact (the live UI's memory limit) every string id the aggregator keeps is
 * of the new profile: a Go sample's own labels keep their keys (goroutine_fn was once
 * left with its id in the old table, naming another string of the new one). */
static void test_compact_label_keys(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg *a;
	struct gort_label p = { "handler", "search", 7, 6 };
	struct gort_labels gl = { 1, 0, &p };
	uint8_t keep[2] = { 0, 1 };
	static const uint64_t other[] = { 0x403030, 0x402020 };
	char *before, *after;

	char exe[1024], maps[1200];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	assert_true(n > 0);
	exe[n] = 0;
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	/* This test's own executable as the target's, mapped from its start at 0x400000:
	 * a start pc there is named by its symbols (this very function). */
	offline_opts(&o);
	snprintf(maps, sizeof(maps), "00400000-00800000 r-xp 00000000 00:00 0 %s\n", exe);
	o.offline_maps = maps;
	o.offline_maps_len = strlen(maps);
	o.offline_exe = exe;
	a = agg_new(&o);
	go_startpc = 0x400000 + (uint64_t)((uintptr_t)test_compact_label_keys -
					   (uintptr_t)&__executable_start);
	memset(&bb, 0, sizeof(bb));
	add_go_sample_x(&bb, 1000, 1, 0, &gl);
	go_user = other;
	add_go_sample_x(&bb, 2000, 2, 0, &gl);
	go_user = NULL;
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	before = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(count_with(before, " goroutine_fn="), 2);
	assert_int_equal(count_with(before, " handler=search"), 2);
	/* Keep the second entry only: the strings are laid out again. */
	assert_int_equal(agg_compact(a, "cpu-clock", keep, NULL), 0);
	memset(&bb, 0, sizeof(bb));
	add_go_sample_x(&bb, 3000, 1, 0, &gl);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	after = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 2);
	assert_int_equal(count_with(after, " goroutine_fn="), 2);
	assert_int_equal(count_with(after, " handler=search"), 2);
	assert_int_equal(count_with(after, " goroutine=1"), 1);
	go_startpc = 0;
	free(before);
	free(after);
	agg_free(a);
}

/* Goroutine ids and memory (agg.c): every sample keeps its goroutine id up to
 * goid_all_max goroutines; past that, only goroutines first seen at least
 * AGG_GOID_OLD_NS before the sample do. The samples of the others stay, without an id. */
static void test_goroutine_ids(void **state)
{
	const uint64_t s = AGG_GOID_OLD_NS;
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg_stats st;
	struct agg *a;
	char *got;

	(void)state;
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	offline_opts(&o);
	o.goid_all_max = 3;
	a = agg_new(&o);
	memset(&bb, 0, sizeof(bb));
	add_go_sample(&bb, 10 * s, 1);          /* goroutines 1 to 3: within the 3 */
	add_go_sample(&bb, 10 * s, 2);
	add_go_sample(&bb, 10 * s, 3);
	add_go_sample(&bb, 10 * s + s / 10, 4); /* the 4th, new: no id */
	add_go_sample(&bb, 11 * s + s / 2, 1);  /* 1.5 s old: its id */
	add_go_sample(&bb, 11 * s, 4);          /* 0.9 s old: no id */
	add_go_sample(&bb, 11 * s + s / 5, 4);  /* 1.1 s old: its id */
	add_go_sample(&bb, 12 * s, 5);          /* new: no id */
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 8);
	assert_int_equal(st.with_goid, 8);
	assert_int_equal(st.goroutines, 5);
	assert_int_equal(st.goid_young, 3);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(count_with(got, " goroutine=1 "), 2);
	assert_int_equal(count_with(got, " goroutine=2 "), 1);
	assert_int_equal(count_with(got, " goroutine=3 "), 1);
	assert_int_equal(count_with(got, " goroutine=4 "), 1);
	assert_int_equal(count_with(got, " goroutine=5 "), 0);
	assert_int_equal(count_with(got, " thread=10 "), 8); /* nothing is lost */
	assert_int_equal(count_with(got, " thread=10 3 "), 3); /* the three without an id, one entry */
	free(got);
	agg_free(a);

	/* Under the limit (the default, AGG_GOID_ALL_MAX) a new goroutine keeps its id. */
	o.goid_all_max = 0;
	a = agg_new(&o);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.goid_young, 0);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(count_with(got, " goroutine=5 "), 1);
	assert_int_equal(count_with(got, " goroutine=4 "), 3);
	free(got);
	agg_free(a);
}

/* Past samples_full profile entries, a sample adds to its entry if it has one, else it
 * keeps no thread nor goroutine id (agg.c, "Threads and memory"): the entries already
 * there go on counting, new combinations are counted without the ids. */
static void test_thread_ids_past_full(void **state)
{
	static const uint64_t sa[] = { 0x401010, 0x402020 }, sb[] = { 0x402020, 0x403030 };
	static const struct { uint32_t tid; const uint64_t *stack; } in[] = {
		{ 1, sa }, { 2, sa }, { 1, sb }, /* three entries: full */
		{ 1, sa },                        /* its entry: thread 1 */
		{ 3, sa }, { 4, sa }, { 3, sa }, /* no entry: stack a, no thread */
		{ 2, sb },                        /* no entry: stack b, no thread */
		{ 2, sa },                        /* its entry: thread 2 */
	};
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg_stats st;
	struct agg *a;
	char *got;
	size_t i;

	(void)state;
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	offline_opts(&o);
	o.samples_full = 3;
	a = agg_new(&o);
	memset(&bb, 0, sizeof(bb));
	for (i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		add_sample(&bb, in[i].tid, NULL, 0, in[i].stack, 2);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.samples, 9);
	assert_int_equal(st.thread_dropped, 4);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 5);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(count_with(got, " thread=1 "), 3);
	assert_int_equal(count_with(got, " thread=2 "), 2);
	assert_int_equal(count_with(got, " thread=3 "), 0);
	assert_int_equal(count_with(got, " thread=4 "), 0);
	assert_int_equal(count_with(got, "; 3 "), 3); /* stack a without a thread: one entry */
	assert_int_equal(count_with(got, "; 1 "), 1); /* stack b without a thread */
	free(got);
	agg_free(a);

	/* Under the default limit every sample keeps its thread. */
	o.samples_full = 0;
	a = agg_new(&o);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.thread_dropped, 0);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 6);
	agg_free(a);

	/* Goroutines (all on thread 10): a new combination keeps no goroutine id either. */
	o.samples_full = 2;
	a = agg_new(&o);
	memset(&bb, 0, sizeof(bb));
	add_go_sample(&bb, 1, 1);
	add_go_sample(&bb, 2, 2); /* full */
	add_go_sample(&bb, 3, 1); /* its entry */
	add_go_sample(&bb, 4, 3); /* no entry: neither id */
	add_go_sample(&bb, 5, 4);
	add_go_sample(&bb, 6, 3);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	agg_get_stats(a, &st);
	assert_int_equal(st.thread_dropped, 3);
	assert_int_equal(st.goid_dropped, 3);
	assert_int_equal(prof_nsamples(agg_profile(a, "cpu-clock")), 3);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_int_equal(count_with(got, " goroutine=1 "), 2);
	assert_int_equal(count_with(got, " goroutine=2 "), 1);
	assert_int_equal(count_with(got, " goroutine="), 3);
	assert_int_equal(count_with(got, " thread=10 "), 3);
	free(got);
	agg_free(a);
}

int agg_marker_fn(int x);
__attribute__((noinline)) int agg_marker_fn(int x)
{
	return x * 3 + 1;
}

/* An address in no mapping when first seen (the maps were read before a library was
 * mapped, its PERF_RECORD_MMAP2 in another CPU's ring) gets its names once it is
 * mapped: the [unknown] location is not kept for it. Uses this process as the target:
 * this program's file is mapped again, at an address first free. */
static void test_unmapped_then_mapped(void **state)
{
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg *a;
	struct stat st;
	char line[512], *got;
	uint64_t fn = (uint64_t)(uintptr_t)&agg_marker_fn, fileoff = 0, ip;
	int fd, found = 0;
	void *base;
	FILE *f;

	(void)state;
	assert_int_equal(agg_marker_fn(1), 4);
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;

		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) == 3 && fn >= lo && fn < hi) {
			fileoff = fn - lo + off;
			found = 1;
		}
	}
	fclose(f);
	assert_true(found);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	/* Far from where mmap places things by itself (top-down below the stack), so that
	 * nothing the aggregator allocates lands there meanwhile. */
	base = mmap((void *)0x5a0000000000ULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	assert_true(base == (void *)0x5a0000000000ULL);
	munmap(base, (size_t)st.st_size); /* now free: nothing is mapped there */
	ip = (uint64_t)(uintptr_t)base + fileoff;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	memset(&o, 0, sizeof(o));
	o.pid = getpid();
	a = agg_new(&o);
	memset(&bb, 0, sizeof(bb));
	add_sample(&bb, 10, NULL, 0, &ip, 1);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	got = profile_text(agg_profile(a, "cpu-clock"));
	assert_non_null(strstr(got, "[unknown] 0x"));
	free(got);

	/* Mapped now, and announced by a PERF_RECORD_MMAP2 (only its type is read). */
	assert_true(mmap(base, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd,
			 0) == base);
	memset(&bb, 0, sizeof(bb));
	{
		struct perf_event_header mh = { PERF_RECORD_MMAP2, 0, 8 };

		memcpy(&bb.w[0], &mh, sizeof(mh));
	}
	bb.n = 1;
	add_sample(&bb, 10, NULL, 0, &ip, 1);
	b.len = b.cap = bb.n * 8;
	agg_feed(a, &b);
	got = profile_text(agg_profile(a, "cpu-clock"));
	if (!strstr(got, "agg_marker_fn;"))
		print_message("# profile:\n%s", got);
	assert_non_null(strstr(got, "agg_marker_fn;"));
	free(got);
	agg_free(a);
	munmap(base, (size_t)st.st_size);
	close(fd);
}

/* A return address in memory that is not code (here an anonymous rw- mapping, as a Go
 * thread's first frame can give: its frame pointer is stale from clone), or where nothing
 * is ever mapped, ends the user chain:
 * it and the frames after it are not in the profile, through the memo (the same stack
 * twice) and past it (a chain longer than the memo keeps). A leaf there stays. */
static void test_chain_cut_at_data(void **state)
{
	static const char maps[] = "00400000-00500000 r-xp 00000000 00:00 0 /nonexistent/app\n"
				   "00600000-00700000 rw-p 00000000 00:00 0\n";
	uint64_t u[40];
	static const uint64_t leaf[] = { 0x65e000 };
	struct event_spec ev;
	struct batchbuf bb;
	struct sample_batch b;
	struct agg_opts o;
	struct agg_stats st;
	struct agg *a;
	char *got;
	size_t i;

	(void)state;
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	offline_opts(&o);
	o.offline_maps = maps;
	o.offline_maps_len = strlen(maps);
	a = agg_new(&o);
	u[0] = 0x401010;
	u[1] = 0x402020;
	u[2] = 0x65e000; /* in the rw- mapping */
	u[3] = 0x403030;
	memset(&bb, 0, sizeof(bb));
	add_sample(&bb, 10, NULL, 0, u, 4);
	add_sample(&bb, 10, NULL, 0, u, 4); /* the memo's hit */
	add_sample(&bb, 11, NULL, 0, leaf, 1);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	/* 36 frames: more than the memo keeps (agg.c MEMO_FRAMES); the data address at 20. */
	for (i = 0; i < 36; i++)
		u[i] = 0x401000 + 0x10 * i;
	u[20] = 0x600040;
	memset(&bb, 0, sizeof(bb));
	add_sample(&bb, 12, NULL, 0, u, 36);
	/* Where nothing is ever mapped: not canonical (text read as an address), page 0. */
	u[0] = 0x404040;
	u[1] = 0x22656d6361223a22ULL;
	u[2] = 0x402020;
	add_sample(&bb, 13, NULL, 0, u, 3);
	u[1] = 0x20;
	add_sample(&bb, 14, NULL, 0, u, 3);
	batch_of(&b, &bb, &ev);
	agg_feed(a, &b);
	got = profile_text(agg_profile(a, "cpu-clock"));
	agg_get_stats(a, &st);
	if (!strstr(got, "app+0x1010;app+0x2020; thread=10 2 ") || strstr(got, "app+0x3030"))
		print_message("# profile:\n%s", got);
	assert_non_null(strstr(got, "app+0x1010;app+0x2020; thread=10 2 "));
	assert_null(strstr(got, "app+0x3030"));
	assert_memory_equal(got, "+0x5e000; thread=11 1 ", 22); /* the leaf, sorted first */
	assert_non_null(strstr(got, "app+0x1130; thread=12 1 "));   /* frame 19, the last */
	assert_null(strstr(got, "app+0x1150"));
	assert_non_null(strstr(got, "\napp+0x4040; thread=13 1 "));
	assert_non_null(strstr(got, "\napp+0x4040; thread=14 1 "));
	assert_null(strstr(got, "[unknown]"));
	assert_int_equal(st.chain_cut, 5);
	free(got);
	agg_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_hold_then_flush, setup, teardown),
		cmocka_unit_test_setup_teardown(test_feed_folds_held, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hold_kernel_unreadable, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_hold, setup, teardown),
		cmocka_unit_test(test_unmapped_then_mapped),
		cmocka_unit_test(test_goroutine_ids),
		cmocka_unit_test(test_labels_dropped),
		cmocka_unit_test(test_thread_ids_past_full),
		cmocka_unit_test(test_chain_cut_at_data),
		cmocka_unit_test_setup_teardown(test_compact, setup, teardown),
		cmocka_unit_test(test_compact_label_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
