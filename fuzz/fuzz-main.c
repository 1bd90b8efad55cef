/* fuzz-main.c: main of every harness: libFuzzer's set-up for a bounded run from the corpus (--enable-fuzzing), else a main replaying the corpus once; both print TAP. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

/*
 * The harness's name comes from its program name (fuzz/fuzz-NAME): its seed corpus is
 * $TOP_SRCDIR/tests/fuzz-corpus/NAME (TOP_SRCDIR is set by make check), else
 * FUZZ_CORPUS_ROOT/NAME, the source tree configure saw.
 */
static const char *harness_name(const char *argv0)
{
	const char *b = strrchr(argv0, '/');

	b = b ? b + 1 : argv0;
	return strncmp(b, "fuzz-", 5) == 0 ? b + 5 : b;
}

static void corpus_dir(const char *name, char *out, size_t len)
{
	const char *top = getenv("TOP_SRCDIR");

	if (top && *top)
		snprintf(out, len, "%s/tests/fuzz-corpus/%s", top, name);
	else
		snprintf(out, len, "%s/%s", FUZZ_CORPUS_ROOT, name);
}

#ifdef GOTOP_FUZZ_LIBFUZZER
/* Called by libFuzzer's main (compiler-rt FuzzerDriver.cpp) before it parses the command
 * line, which it may replace. */
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *tap_name;

/* libFuzzer ends a finished run with exit(0); a crash, leak, timeout or sanitizer report ends
 * with _Exit or abort, which skip this: then the plan has no result and the test fails. */
static void tap_ok(void)
{
	printf("ok 1 - %s: no finding\n", tap_name);
	fflush(stdout);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char seeds[4096], work[4096], art[4096], tflag[64];
	static char *args[16];
	const char *name = harness_name((*argv)[0]);
	const char *t = getenv("GOTOP_FUZZ_TIME");
	int ac = 0;

	if (*argc > 1) /* by hand: every libFuzzer flag and corpus as given */
		return 0;

	/* make check: GOTOP_FUZZ_TIME seconds (default 20) from the seeds; new inputs go to
	 * fuzz/corpus-NAME and findings to fuzz/NAME-crash-* in the build tree. */
	corpus_dir(name, seeds, sizeof(seeds));
	snprintf(work, sizeof(work), "fuzz/corpus-%s", name);
	snprintf(art, sizeof(art), "-artifact_prefix=fuzz/%s-", name);
	snprintf(tflag, sizeof(tflag), "-max_total_time=%d", t && atoi(t) > 0 ? atoi(t) : 20);
	mkdir("fuzz", 0777);
	if (mkdir(work, 0777) != 0 && errno != EEXIST) {
		printf("1..0 # SKIP cannot create %s: %s\n", work, strerror(errno));
		exit(0);
	}
	printf("1..1\n");
	fflush(stdout);
	tap_name = name;
	atexit(tap_ok);
	args[ac++] = (*argv)[0];
	args[ac++] = tflag;
	args[ac++] = "-timeout=30";
	args[ac++] = "-rss_limit_mb=2048";
	args[ac++] = "-malloc_limit_mb=1024";
	args[ac++] = "-print_final_stats=1";
	args[ac++] = art;
	args[ac++] = work;
	args[ac++] = seeds;
	args[ac] = NULL;
	*argc = ac;
	*argv = args;
	return 0;
}

#else /* replay: every corpus file once */

static int replay_file(const char *path, size_t *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0, k;

	if (!f)
		return -errno;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf) {
				fclose(f);
				return -ENOMEM;
			}
		}
		k = fread(buf + len, 1, cap - len, f);
		if (k == 0)
			break;
		len += k;
	}
	fclose(f);
	/* An exact-size copy, so that ASan or valgrind see a read past the input. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -ENOMEM;
	}
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	(*count)++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every regular file of dir, in name order (a stable log). */
static int replay_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0, i;
	int rc = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n] = strdup(e->d_name);
		if (!names[n])
			abort();
		n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), name_cmp);
	for (i = 0; i < n; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			int r = replay_file(path, count);

			if (r < 0 && !rc)
				rc = r;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	char dir[4096];
	size_t count = 0;
	int i, rc = 0;

	printf("1..1\n");
	fflush(stdout);
	if (argc > 1) { /* files or directories given by hand */
		for (i = 1; i < argc && !rc; i++) {
			struct stat st;

			if (stat(argv[i], &st) != 0)
				rc = -errno;
			else
				rc = S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count)
							 : replay_file(argv[i], &count);
		}
		snprintf(dir, sizeof(dir), "%s", argv[i - 1]);
	} else {
		corpus_dir(harness_name(argv[0]), dir, sizeof(dir));
		rc = replay_dir(dir, &count);
	}
	if (rc < 0 || count == 0) {
		printf("not ok 1 - %s: %s\n", dir, rc < 0 ? strerror(-rc) : "no inputs");
		return 1;
	}
	printf("ok 1 - %zu inputs\n", count);
	return 0;
}
#endif
