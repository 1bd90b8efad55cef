/* cmd-pprof.c: `gotop-perf pprof NAME -p PID`: what the process's own /debug/pprof/NAME
 * would answer, read from outside (src/go/goprof.c: heap, allocs, block, mutex,
 * goroutine), or gotop-perf's own CPU and wall-clock profiles (cpu, wall) through
 * `record`. The bytes go to a file or to stdout. The profiles are asked of a session with
 * only the memory source (session.h, SESSION_MEM). */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gotop/gomem.h"
#include "gotop/goprof.h"
#include "gotop/pprof.h"
#include "gotop/session.h"
#include "gotop/util.h"

enum { OPT_SECONDS = 0x400, OPT_DEBUG, OPT_ENABLE };

struct pprof_opts {
	const char *name;
	pid_t pid;
	const char *output;
	int seconds, seconds_set;
	int debug;
	int enable;
	int verbose;
};

static void usage(FILE *f)
{
	fputs("Usage: gotop-perf pprof NAME -p PID [-o FILE] [--seconds N] [--debug N]\n"
	      "What the Go program's own /debug/pprof/NAME would answer now, read from its\n"
	      "memory without code in it and without stopping it:\n"
	      "  heap, allocs   the runtime's heap profile (sampled allocations still in use and\n"
	      "                 in total, as of the last GC cycle; allocs shows alloc_space)\n"
	      "  block, mutex   blocking and mutex contention, when the program enabled them\n"
	      "  goroutine      every goroutine's stack (--debug 2: Go's dump, arguments shown\n"
	      "                 as (...))\n"
	      "  cpu, wall      gotop-perf's CPU (perf) and wall-clock (every goroutine) profiles\n"
	      "                 over --seconds (default 30), as `record` writes them\n"
	      "  -p, --pid PID            the Go process\n"
	      "  -o, --output FILE        write there (atomically); default stdout when it is not\n"
	      "                           a terminal\n"
	      "      --seconds N          heap, allocs, block, mutex, goroutine: the difference over\n"
	      "                           N seconds, as net/http/pprof's ?seconds=N\n"
	      "      --debug N            1: Go's text form (debug=1); 2: goroutine dump (debug=2);\n"
	      "                           0: gzipped protobuf (default)\n"
	      "      --enable-memprofile  heap, allocs: when the program keeps no heap profile\n"
	      "                           (MemProfileRate 0: it does not link runtime/pprof), write\n"
	      "                           Go's default rate 524288 into it first. The one thing\n"
	      "                           gotop-perf ever writes into a process; only allocations\n"
	      "                           made after it are profiled\n"
	      "  -v, --verbose            say how the read went (buckets, dropped, GC cycle)\n"
	      "Exit codes: 0 ok, 1 failure, 2 usage, 3 no such Go process, 4 permission denied,\n"
	      "6 the program keeps no heap profile (MemProfileRate 0).\n",
	      f);
}

static int parse_int(const char *s, int *out, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || !*s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse(int argc, char **argv, struct pprof_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "debug", required_argument, NULL, OPT_DEBUG },
		{ "enable-memprofile", no_argument, NULL, OPT_ENABLE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t pid = 0;
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:o:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (cli_parse_u64(optarg, &pid) || pid > INT32_MAX) {
				cli_error("-p: not a process id: %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_SECONDS:
			if (parse_int(optarg, &o->seconds, 1, 86400)) {
				cli_error(
					"--seconds: a whole number of seconds from 1 to 86400: %s",
					optarg);
				return EXIT_USAGE;
			}
			o->seconds_set = 1;
			break;
		case OPT_DEBUG:
			if (parse_int(optarg, &o->debug, 0, 2)) {
				cli_error("--debug: 0, 1 or 2: %s", optarg);
				return EXIT_USAGE;
			}
			break;
		case OPT_ENABLE:
			o->enable = 1;
			break;
		case 'v':
			o->verbose = 1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc || !pid) {
		cli_error(optind >= argc ? "which profile? heap, allocs, block, mutex, goroutine, "
					   "cpu or wall"
			  : !pid         ? "give the process: -p PID"
					 : "one profile name only");
		return EXIT_USAGE;
	}
	o->name = argv[optind];
	o->pid = (pid_t)pid;
	if (strcmp(o->name, "cpu") && strcmp(o->name, "wall") && strcmp(o->name, "heap") &&
	    strcmp(o->name, "allocs") && strcmp(o->name, "block") && strcmp(o->name, "mutex") &&
	    strcmp(o->name, "goroutine")) {
		cli_error("unknown profile '%s' (heap, allocs, block, mutex, goroutine, cpu, wall)",
			  o->name);
		return EXIT_USAGE;
	}
	if (o->enable && strcmp(o->name, "heap") && strcmp(o->name, "allocs")) {
		cli_error("--enable-memprofile goes with heap or allocs");
		return EXIT_USAGE;
	}
	if ((!strcmp(o->name, "cpu") || !strcmp(o->name, "wall")) && o->debug) {
		cli_error("--debug goes with heap, allocs, block, mutex or goroutine");
		return EXIT_USAGE;
	}
	if (o->seconds_set && o->debug) {
		cli_error("--seconds and --debug do not go together (as in net/http/pprof)");
		return EXIT_USAGE;
	}
	return 0;
}

/* Writes the answer: to the file, or to stdout (binary only when it is not a terminal;
 * text for a terminal with the target's control characters escaped). */
static int emit(const struct pprof_opts *o, const uint8_t *data, size_t len, int text)
{
	size_t i;

	if (o->output) {
		int w = pprof_write_bytes(o->output, data, len);

		if (w) {
			cli_error("cannot write %s: %s", o->output, strerror(-w));
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	if (!isatty(STDOUT_FILENO)) {
		if (fwrite(data, 1, len, stdout) != len || fflush(stdout)) {
			cli_error("cannot write the output: %s", strerror(errno));
			return EXIT_FAIL;
		}
		return EXIT_OK;
	}
	if (!text) {
		cli_error(
			"the profile is binary (gzipped protobuf): give -o FILE, redirect stdout, "
			"or --debug 1 for text");
		return EXIT_USAGE;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = data[i];

		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
	fflush(stdout);
	return EXIT_OK;
}

static int exit_for(int err)
{
	switch (err) {
	case GOPROF_E_REQUEST:
	case GOPROF_E_UNKNOWN:
		return EXIT_USAGE;
	case GOPROF_E_TARGET:
		return EXIT_TARGET;
	case GOPROF_E_OFF:
		return EXIT_NOPROF;
	case GOPROF_E_PERM:
		return EXIT_PERM;
	default:
		return EXIT_FAIL;
	}
}

/* --enable-memprofile: the one write into the target, and what it did. */
static int enable(struct session *s, const struct pprof_opts *o)
{
	int64_t old = 0;
	char why[512];
	int rc;

	rc = session_mem_enable(s, &old, why, sizeof(why));
	if (rc == -EEXIST) {
		fprintf(stderr,
			"gotop-perf: process %d already samples allocations "
			"(runtime.MemProfileRate %" PRId64 "): nothing written\n",
			(int)o->pid, old);
		return EXIT_OK;
	}
	if (rc == -ENOENT) {
		cli_error("%s", why);
		return EXIT_FAIL;
	}
	if (rc) {
		cli_error("process %d: cannot write runtime.MemProfileRate: %s", (int)o->pid,
			  strerror(-rc));
		return rc == -EPERM || rc == -EACCES ? EXIT_PERM : EXIT_FAIL;
	}
	fprintf(stderr,
		"gotop-perf: wrote runtime.MemProfileRate = %d into process %d: "
		"allocations from now on are sampled\n",
		GOMEM_DEFAULT_RATE, (int)o->pid);
	return EXIT_OK;
}

/* cpu and wall: `record -p PID -d SECONDS` into a temporary directory, then the file. */
static int via_record(const struct pprof_opts *o)
{
	const char *tmp = getenv("TMPDIR");
	char dir[4096], out[4200], pid[32], secs[32], *file;
	char *argv[12];
	int argc = 0, rc;
	uint8_t *data = NULL;
	size_t len = 0, cap = 0;
	FILE *f;

	if (!o->output && isatty(STDOUT_FILENO)) {
		cli_error(
			"the profile is binary (gzipped protobuf): give -o FILE or redirect stdout");
		return EXIT_USAGE;
	}
	snprintf(dir, sizeof(dir), "%s/gotop-perf-pprof.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		cli_error("cannot make a temporary directory: %s", strerror(errno));
		return EXIT_FAIL;
	}
	snprintf(out, sizeof(out), "%s/cpu.pb.gz", dir);
	snprintf(pid, sizeof(pid), "%d", (int)o->pid);
	snprintf(secs, sizeof(secs), "%d", o->seconds_set ? o->seconds : 30);
	argv[argc++] = "record";
	argv[argc++] = "-p";
	argv[argc++] = pid;
	argv[argc++] = "-d";
	argv[argc++] = secs;
	argv[argc++] = "-o";
	argv[argc++] = out;
	if (!strcmp(o->name, "wall"))
		argv[argc++] = "--wall";
	if (!o->verbose)
		argv[argc++] = "-q";
	argv[argc] = NULL;
	rc = cmd_record(argc, argv);
	file = !strcmp(o->name, "wall") ? xasprintf("%s/cpu.wall.pb.gz", dir) : xstrdup(out);
	if (rc == EXIT_OK) {
		f = fopen(file, "rbe");
		if (!f) {
			cli_error("no %s profile was written: %s", o->name, strerror(errno));
			rc = EXIT_FAIL;
		} else {
			for (;;) {
				size_t r;

				xgrow((void **)&data, &cap, len + 65536, 1);
				r = fread(data + len, 1, 65536, f);
				len += r;
				if (r < 65536)
					break;
			}
			fclose(f);
			rc = emit(o, data, len, 0);
		}
	}
	unlink(out);
	snprintf(out, sizeof(out), "%s/cpu.wall.pb.gz", dir);
	unlink(out);
	rmdir(dir);
	free(file);
	free(data);
	return rc;
}

int cmd_pprof(int argc, char **argv)
{
	struct goprof_req req = { 0 };
	struct goprof_out out;
	struct pprof_opts o;
	struct session_opts so;
	struct session_err serr;
	struct session *s;
	char why[512];
	int rc, err;

	rc = parse(argc, argv, &o);
	if (rc)
		return rc;
	cli_install_signals();
	if (!strcmp(o.name, "cpu") || !strcmp(o.name, "wall"))
		return via_record(&o);
	if (o.output) {
		int w = pprof_check_writable(o.output);

		if (w) {
			cli_error("cannot write %s: %s", o.output, strerror(-w));
			return EXIT_FAIL;
		}
	}
	if (kill(o.pid, 0) != 0 && errno == ESRCH) {
		cli_error("no process %d", (int)o.pid);
		return EXIT_TARGET;
	}
	session_opts_init(&so);
	so.sources = SESSION_MEM;
	so.pid = o.pid;
	s = session_new(&so, &serr);
	if (!s)
		return cli_session_error(&serr);
	if (o.enable && (rc = enable(s, &o)) != EXIT_OK) {
		session_free(s);
		return rc;
	}
	req.name = o.name;
	req.debug = o.debug;
	req.seconds = o.seconds;
	req.cancel = &cli_stop_signal;
	err = session_mem_fetch(s, &req, &out, why, sizeof(why));
	if (err != GOPROF_E_OK) {
		if (err == GOPROF_E_OFF)
			cli_error("%s; --enable-memprofile turns it on", why);
		else
			cli_error("%s", why);
		session_free(s);
		return exit_for(err);
	}
	if (o.verbose && strcmp(o.name, "goroutine"))
		fprintf(stderr,
			"gotop-perf: %s: %" PRIu64 " buckets kept, %" PRIu64 " dropped "
			"(%" PRIu64 " changed while read, %" PRIu64
			" unreadable)%s%s; profile cycle "
			"%u%s; %u tries; rate %" PRId64 "; %" PRIu64 " reads, %" PRIu64 " bytes, "
			"%.2f ms\n",
			o.name, out.st.kept, out.st.dropped, out.st.torn, out.st.bad,
			out.st.truncated ? ", limit reached" : "",
			out.st.loop ? ", list loops" : "", out.st.cycle,
			out.st.all_cycles ? " (no GC cycle yet: pending cycles added)" : "",
			out.st.tries, out.rate, out.st.readvs, out.st.bytes,
			(double)out.st.ns / 1e6);
	rc = emit(&o, out.data, out.len, o.debug != 0);
	free(out.data);
	session_free(s);
	return rc;
}
