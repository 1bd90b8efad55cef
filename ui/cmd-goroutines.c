/* cmd-goroutines.c: `gotop-perf goroutines -p PID`: every goroutine of a running Go program
 * now, read from outside without stopping it (src/go/gosnap.c), grouped by stack and state
 * like `go tool pprof` on goroutine?debug=1, or one JSON object per goroutine. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gosnap.h"
#include "gotop/hashmap.h"
#include "gotop/session.h"
#include "gotop/util.h"

#define NAME_MAX_FRAMES 16 /* inlined frames kept per pc */

enum { OPT_JSON = 0x300, OPT_LABELS, OPT_MAX };

/* The frames of one pc (innermost inlined first), named once per run. */
struct named {
	int n;
	struct sym_frame f[NAME_MAX_FRAMES];
};

struct run {
	const struct session_goroutines *d; /* the session's snapshot, its pcs named */
	const struct gosnap_result *r;
	struct hashmap by_pc; /* pc -> index + 1 into names */
	struct named *names;
	size_t nnames, namescap;
	int labels;
};

static void usage(FILE *f)
{
	fputs("Usage: gotop-perf goroutines -p PID [--json] [--labels] [--max N]\n"
	      "Every goroutine of a running Go program, read from outside without stopping it:\n"
	      "state or wait reason, how long it has waited (when the runtime knows), pprof\n"
	      "labels, stack and creator, grouped by identical stack and state, biggest first.\n"
	      "  -p, --pid PID   the Go process\n"
	      "      --json      one JSON object per goroutine and line instead of groups\n"
	      "      --labels    group by labels too, and show them\n"
	      "      --max N     read at most N goroutines (default 1048576)\n", f);
}

static const struct named *name_pc(struct run *run, uint64_t pc)
{
	int created;
	uint64_t *slot = hashmap_put(&run->by_pc, pc, &created);
	struct named *nm;
	int n;

	if (!created)
		return &run->names[*slot - 1];
	xgrow((void **)&run->names, &run->namescap, run->nnames + 1, sizeof(*run->names));
	nm = &run->names[run->nnames++];
	*slot = run->nnames;
	n = session_goroutines_frames(run->d, pc, nm->f, NAME_MAX_FRAMES);
	nm->n = n > 0 ? n : 0;
	return nm;
}

/* Text from the target made safe for a terminal and for JSON. */
static const char *safe(const char *s, char *buf, size_t len)
{
	if (!s)
		return "?";
	util_escape(buf, len, s, strlen(s), 1);
	return buf;
}

static void print_wait(FILE *f, int64_t ns)
{
	double s = (double)ns / 1e9;

	if (s < 120)
		fprintf(f, "%.0fs", s);
	else if (s < 7200)
		fprintf(f, "%.0f minutes", s / 60);
	else
		fprintf(f, "%.1f hours", s / 3600);
}

static void print_labels(FILE *f, const struct gort_labels *l, bool json)
{
	char k[4 * GORT_MAX_STRLEN + 16], v[4 * GORT_MAX_STRLEN + 16];
	uint32_t i;

	fputc('{', f);
	for (i = 0; l && i < l->n; i++) {
		util_escape(k, sizeof(k), l->pairs[i].key, l->pairs[i].klen, 1);
		util_escape(v, sizeof(v), l->pairs[i].value, l->pairs[i].vlen, 1);
		if (json) {
			fputs(i ? "," : "", f);
			cli_json_str(f, k);
			fputc(':', f);
			cli_json_str(f, v);
		} else {
			fprintf(f, "%s%s=%s", i ? ", " : "", k, v);
		}
	}
	fputc('}', f);
}

/* The creating function: the physical function of gopc, as Go prints it (runtime/
 * traceback.go printcreatedby1: funcname(findfunc(gopc))). */
static const struct sym_frame *creator(struct run *run, const struct gosnap_g *g)
{
	const struct named *nm;

	if (!g->gopc)
		return NULL;
	nm = name_pc(run, g->gopc);
	return nm->n ? &nm->f[nm->n - 1] : NULL;
}

static void print_group(struct run *run, const struct gosnap_group *gr, FILE *f)
{
	const struct gosnap_g *g = &run->r->g[gr->first];
	const struct sym_frame *c;
	char b1[512], b2[512];
	uint32_t i;
	int k;

	fprintf(f, "%zu goroutine%s [%s", gr->count, gr->count == 1 ? "" : "s", gosnap_state_text(g));
	if (gr->max_wait >= 0) {
		fputs(", longest ", f);
		print_wait(f, gr->max_wait);
	}
	fputs("]", f);
	if (gr->count == 1)
		fprintf(f, " goroutine %" PRIu64, g->goid);
	fputc('\n', f);
	if (run->labels && g->labels && g->labels->n) {
		fputs("  labels: ", f);
		print_labels(f, g->labels, false);
		fputc('\n', f);
	}
	if (g->flags & GOSNAP_NO_STACK)
		fputs("  (running on a thread now: stack not read)\n", f);
	for (i = 0; i < g->nframes; i++) {
		const struct named *nm = name_pc(run, run->r->pcs[g->frame0 + i]);

		if (!nm->n)
			fprintf(f, "  %#" PRIx64 "\n", run->r->pcs[g->frame0 + i]);
		for (k = 0; k < nm->n; k++)
			fprintf(f, "  %s\n      %s:%d\n", safe(nm->f[k].func, b1, sizeof(b1)),
				safe(nm->f[k].file, b2, sizeof(b2)), nm->f[k].line);
	}
	if (g->flags & GOSNAP_STACK_CUT)
		fputs("  ...\n", f);
	if ((c = creator(run, g))) {
		fprintf(f, "  created by %s", safe(c->func, b1, sizeof(b1)));
		if (g->parent_goid)
			fprintf(f, " in goroutine %" PRIu64, g->parent_goid);
		fprintf(f, "\n      %s:%d\n", safe(c->file, b2, sizeof(b2)), c->line);
	}
	fputc('\n', f);
}

static void print_json(struct run *run, const struct gosnap_g *g, FILE *f)
{
	const struct sym_frame *c;
	char b[512];
	uint32_t i;
	int k, first = 1;

	fprintf(f, "{\"id\":%" PRIu64 ",\"state\":", g->goid);
	cli_json_str(f, gosnap_state_name(g->state));
	fputs(",\"wait_reason\":", f);
	cli_json_str(f, g->wait ? g->wait : "");
	if (g->wait_ns >= 0)
		fprintf(f, ",\"wait_seconds\":%.3f", (double)g->wait_ns / 1e9);
	else
		fputs(",\"wait_seconds\":null", f);
	fputs(",\"labels\":", f);
	print_labels(f, g->labels, true);
	if (g->flags & GOSNAP_LABELS_BAD)
		fputs(",\"labels_unreadable\":true", f);
	fprintf(f, ",\"stack_read\":%s,\"stack_complete\":%s,\"frames\":[",
		g->flags & GOSNAP_NO_STACK ? "false" : "true",
		g->flags & (GOSNAP_STACK_CUT | GOSNAP_NO_STACK) ? "false" : "true");
	for (i = 0; i < g->nframes; i++) {
		const struct named *nm = name_pc(run, run->r->pcs[g->frame0 + i]);

		if (!nm->n) {
			fprintf(f, "%s{\"func\":\"?\",\"pc\":%" PRIu64 "}", first ? "" : ",",
				run->r->pcs[g->frame0 + i]);
			first = 0;
		}
		for (k = 0; k < nm->n; k++) {
			fputs(first ? "{\"func\":" : ",{\"func\":", f);
			cli_json_str(f, safe(nm->f[k].func, b, sizeof(b)));
			fputs(",\"file\":", f);
			cli_json_str(f, safe(nm->f[k].file, b, sizeof(b)));
			fprintf(f, ",\"line\":%d%s}", nm->f[k].line,
				nm->f[k].wrapper ? ",\"wrapper\":true" : "");
			first = 0;
		}
	}
	fputs("],\"created_by\":", f);
	if ((c = creator(run, g))) {
		fputs("{\"func\":", f);
		cli_json_str(f, safe(c->func, b, sizeof(b)));
		fputs(",\"file\":", f);
		cli_json_str(f, safe(c->file, b, sizeof(b)));
		fprintf(f, ",\"line\":%d,\"goroutine\":%" PRIu64 "}", c->line, g->parent_goid);
	} else {
		fputs("null", f);
	}
	fputs("}\n", f);
}

static void print_groups(struct run *run, FILE *f)
{
	struct gosnap_group *gs;
	size_t ngs = gosnap_group(run->r, run->labels, &gs), i;

	for (i = 0; i < ngs; i++)
		print_group(run, &gs[i], f);
	free(gs);
}

int cmd_goroutines(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "labels", no_argument, NULL, OPT_LABELS },
		{ "max", required_argument, NULL, OPT_MAX },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run run = { 0 };
	struct session_opts so;
	struct session_err err;
	struct session *s;
	const struct gosnap_result *res;
	uint64_t pid = 0, max = 0;
	int c, json = 0, rc;
	size_t i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, &pid) || pid > INT32_MAX) {
				cli_error("-p: not a process id: %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_LABELS:
			run.labels = 1;
			break;
		case OPT_MAX:
			if (cli_parse_u64(optarg, &max) || max > GOSNAP_MAX_G) {
				cli_error("--max: a number of goroutines up to %u: %s", GOSNAP_MAX_G,
					  optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!pid || optind < argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
		cli_error("no process %" PRIu64, pid);
		return EXIT_TARGET;
	}
	/* A session with only the goroutine snapshots: one, taken now. */
	session_opts_init(&so);
	so.sources = SESSION_GOROUTINES;
	so.pid = (pid_t)pid;
	so.goroutines_max = (size_t)max;
	s = session_new(&so, &err);
	if (!s)
		return cli_session_error(&err);
	run.d = session_goroutines_get(s, -1);
	if (!run.d || !run.d->reader) {
		if (run.d && run.d->rc == -ENOEXEC)
			cli_error("cannot open the executable of process %" PRIu64, pid);
		else
			cli_error("process %" PRIu64 ": %s", pid, run.d ? run.d->why : "no reader");
		rc = !run.d || run.d->rc == -ENOEXEC || run.d->rc == -ESRCH ? EXIT_TARGET : EXIT_FAIL;
		session_goroutines_put(run.d);
		session_free(s);
		return rc;
	}
	rc = run.d->rc;
	if (rc) {
		cli_error("process %" PRIu64 ": cannot read its goroutines: %s", pid,
			  rc == -EAGAIN ? "the Go runtime has not started yet"
			  : rc == -EINVAL ? "the runtime's list of goroutines is garbage"
					  : strerror(-rc));
		session_goroutines_put(run.d);
		session_free(s);
		return rc == -ESRCH ? EXIT_TARGET : rc == -EPERM ? EXIT_PERM : EXIT_FAIL;
	}
	res = &run.d->r;
	run.r = res;
	if (json) {
		for (i = 0; i < res->n; i++)
			print_json(&run, &res->g[i], stdout);
	} else {
		printf("goroutines: %zu of %" PRIu64 " listed; %" PRIu64 " changed while read "
		       "(dropped), %" PRIu64 " stacks cut short; read in %.1f ms%s\n\n",
		       res->n, res->st.listed, res->st.torn, res->st.cut, (double)res->st.ns / 1e6,
		       res->st.truncated ? " (limit reached: more not read)" : "");
		print_groups(&run, stdout);
	}
	fflush(stdout);
	hashmap_free(&run.by_pc);
	free(run.names);
	session_goroutines_put(run.d);
	session_free(s);
	return EXIT_OK;
}
