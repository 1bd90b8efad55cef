/* main.c: gotop-perf's entry point: a table of its commands, --help and --version. */
#include "config.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct command {
	const char *name;         /* NULL: the live UI, which takes no command word */
	int (*run)(int argc, char **argv);
	const char *synopsis;     /* after "gotop-perf " in --help */
	const char *summary;      /* what it does, for --help */
};

static const struct command commands[] = {
	{ NULL, cmd_live,
	  "[OPTIONS] (-p PID | -- COMMAND [ARGS...])   live profiler\n"
	  "                  [-e EVENT] [-F HZ | -c PERIOD] [-d SECONDS] [-w SECONDS] [-o DIR]\n"
	  "                  [--focus FUNC] [--ignore FUNC] [--tag KEY=VALUE] [--thread TID]\n"
	  "                  [--no-repair] [--no-go] [--no-color] [--ascii]\n"
	  "                  [--batch [-n N] [--view LIST] [--rows N] [--sort KEY]]\n",
	  "The live profiler opens a terminal UI (h or ? shows the keys); --batch prints the same\n"
	  "views as text every refresh, like top -b. Its options are below.\n" },
	{ "record", cmd_record,
	  "record (-p PID | -- COMMAND [ARGS...]) [-e EVENT]... [-F HZ | -c PERIOD]\n"
	  "                         [-d SECONDS] [-o FILE] [-t TID]... [--stack-size BYTES]\n"
	  "                         [--no-repair] [--no-go] [-v] [-q]\n",
	  "record writes a gzipped pprof profile (default gotop-perf.pb.gz) for `go tool pprof`;\n"
	  "without -d it runs until Ctrl-C or until the target exits.\n" },
	{ "verify", cmd_verify,
	  "verify (-p PID | -- COMMAND [ARGS...]) [-d SECONDS] [--rate N] [--json]\n",
	  "verify compares frame-pointer stacks (raw and repaired) with a full libunwind unwind\n"
	  "of threads it stops one at a time, and reports per function how often they are wrong\n"
	  "(gotop-perf verify --help).\n" },
	{ "view", cmd_view, "view [--batch] [--sample-index TYPE] FILE [FILE...]\n",
	  "view opens the same UI (or --batch text) on pprof files: gotop-perf's and Go's CPU,\n"
	  "heap, allocs, goroutine, mutex and block profiles (gotop-perf view --help).\n" },
	{ "goroutines", cmd_goroutines, "goroutines -p PID [--json] [--labels] [--max N]\n",
	  "goroutines prints every goroutine of a running Go program (state, wait reason, labels,\n"
	  "stack, creator), read without stopping it, grouped like goroutine?debug=1.\n" },
	{ "pprof", cmd_pprof,
	  "pprof NAME -p PID [-o FILE] [--seconds N] [--debug N] [--enable-memprofile]\n",
	  "pprof writes what the Go program's own /debug/pprof/NAME would answer (heap, allocs,\n"
	  "block, mutex, goroutine), read from its memory; cpu and wall are gotop-perf's\n"
	  "(gotop-perf pprof --help). --enable-memprofile writes Go's default MemProfileRate\n"
	  "into a program that keeps no heap profile: the one write into a target.\n" },
	{ "serve", cmd_serve,
	  "serve [--listen ADDR:PORT] [-p PID] [--token-file FILE] [--allow-remote]\n",
	  "serve answers over HTTP, for every local Go process, what its own net/http/pprof\n"
	  "would (/pid/PID/debug/pprof/...), its metrics and a /targets list for Prometheus\n"
	  "service discovery: Parca, Pyroscope/Alloy and Prometheus scrape it (gotop-perf\n"
	  "serve --help).\n" },
	{ "list", cmd_list, "list [--pmu | --tracepoints [FILTER] | --attr EVENT]\n",
	  "list prints every event gotop-perf knows and whether this machine can count it;\n"
	  "--pmu the vendor events of this machine's PMU (libpfm4), --tracepoints those of\n"
	  "tracefs, --attr how an event is encoded (perf_event_attr fields).\n" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s gotop-perf %s", i ? "      " : "Usage:", commands[i].synopsis);
	fputs("       gotop-perf --help | --version\n", f);
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s%s", i < 2 ? "\n" : "", commands[i].summary);
	fputc('\n', f);
	fputs("The live profiler's options:\n", f);
	cmd_live_options(f);
	fputs("\n"
	      "Exit codes: 0 success (also when the target exits during the run), 1 failure,\n"
	      "2 usage error, 3 no such target, 4 permission denied, 5 event not available,\n"
	      "6 (pprof) the program keeps no such profile, 7 (serve) cannot listen.\n"
	      "See gotop-perf(1).\n", f);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		/* In a terminal, the running processes to choose from; else the usage. */
		if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO))
			return cmd_pick();
		usage(stderr);
		return EXIT_USAGE;
	}
	for (i = 0; i < NCOMMANDS; i++)
		if (commands[i].name && !strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return EXIT_OK;
	}
	/* Anything else is the live UI's command line. */
	return cmd_live(argc, argv);
}
