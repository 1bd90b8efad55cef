/* cmd-serve.c: `gotop-perf serve`: its options, the server (src/serve/, serve.h) until a
 * stop signal, and the server's log on stderr, a line per request with the time. */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "gotop/serve.h"
#include "gotop/util.h"

enum {
	OPT_LISTEN = 0x500, OPT_REMOTE, OPT_TOKEN, OPT_ADVERTISE, OPT_MAX_PROFILES,
	OPT_MAX_SECONDS, OPT_MAX_CONN, OPT_MAX_PER_IP, OPT_TIMEOUT, OPT_MAX_RECORDS, OPT_WALL_HZ,
	OPT_LINGER,
};

/* A token shorter than this is refused: it would be guessed. */
#define TOKEN_MIN 16
#define TOKEN_MAX 4096

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: gotop-perf serve [--listen ADDR:PORT] [-p PID] [--token-file FILE] [OPTIONS]\n"
		"Serves every local Go process this user may trace over HTTP, as its own\n"
		"net/http/pprof would, read from outside: /pid/PID/debug/pprof/{profile,heap,\n"
		"allocs,block,mutex,goroutine,wall} (?seconds=N, ?debug=1|2), /pid/PID/metrics\n"
		"(Prometheus), and /targets (Prometheus HTTP service discovery) for Parca,\n"
		"Pyroscope/Alloy, Prometheus and go tool pprof. A line per request on stderr.\n"
		"  -l, --listen ADDR:PORT  where to listen (default %s; port 0: any); an\n"
		"                          address that is not loopback needs --allow-remote\n"
		"                          and --token-file\n"
		"  -p, --pid PID           only this process, also at /debug/pprof/ and /metrics\n"
		"      --allow-remote      allow listening on an address other hosts reach\n"
		"      --token-file FILE   every request must carry Authorization: Bearer TOKEN,\n"
		"                          the file's first line (at least %d characters)\n"
		"      --advertise HOST:PORT  the address /targets gives scrapers (default the\n"
		"                          one listened on)\n"
		"  -F, --freq HZ           CPU profiles: samples a second per thread (default %d)\n"
		"      --wall-hz HZ        wall profiles: snapshots of every goroutine a second\n"
		"                          (default %d)\n"
		"      --max-profiles N    profiles made at once; more get 503 (default %d)\n"
		"      --max-seconds N     the longest ?seconds (default %d)\n"
		"      --max-connections N connections at once (default %d), --max-per-ip N from\n"
		"                          one address (default %d)\n"
		"      --timeout SECONDS   close a connection idle this long (default %d)\n"
		"      --max-records N     goroutines or buckets read per answer (default %d)\n"
		"      --linger SECONDS    keep a process's CPU session this long after its last\n"
		"                          profile, for the next scrape (default %.0f)\n"
		"  -q, --quiet             log only errors (4xx and 5xx answers)\n"
		"Runs until SIGINT or SIGTERM. Exit codes: 0 stopped by a signal, 1 failure,\n"
		"2 usage (a remote address without --allow-remote and a token), 7 cannot listen.\n",
		SERVE_DEFAULT_LISTEN, TOKEN_MIN, SERVE_DEFAULT_FREQ, SERVE_DEFAULT_WALL_HZ,
		SERVE_DEFAULT_MAX_PROFILES, SERVE_DEFAULT_MAX_SECONDS, SERVE_DEFAULT_MAX_CONNECTIONS,
		SERVE_DEFAULT_MAX_PER_IP, SERVE_DEFAULT_TIMEOUT_S, SERVE_DEFAULT_MAX_RECORDS,
		SERVE_DEFAULT_LINGER_MS / 1000.0);
}

/* A whole number from min to max; 0 or -1 after saying why. */
static int number(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (cli_parse_u64(s, out) || *out < min || *out > max) {
		cli_error("%s: a whole number from %llu to %llu: %s", opt, (unsigned long long)min,
			  (unsigned long long)max, s);
		return -1;
	}
	return 0;
}

/* The token: the file's first line, without its line end. Refused when short, or with
 * bytes that are not printable. The file should be readable by its owner alone: said,
 * not refused (a secret mounted by an orchestrator may not be). */
static char *read_token(const char *path)
{
	struct stat st;
	size_t len, i;
	char *t;

	t = util_read_file(path, TOKEN_MAX, &len);
	if (!t) {
		cli_error("--token-file %s: %s", path, strerror(errno));
		return NULL;
	}
	for (i = 0; i < len && t[i] != '\n' && t[i] != '\r'; i++)
		;
	t[i] = 0;
	len = i;
	for (i = 0; i < len; i++) {
		if ((unsigned char)t[i] <= 0x20 || (unsigned char)t[i] >= 0x7f) {
			cli_error("--token-file %s: the token has a space, a control character or a "
				  "byte that is not ASCII",
				  path);
			free(t);
			return NULL;
		}
	}
	if (len < TOKEN_MIN) {
		cli_error("--token-file %s: the token has %zu characters, fewer than %d", path, len,
			  TOKEN_MIN);
		free(t);
		return NULL;
	}
	if (!stat(path, &st) && (st.st_mode & 077))
		cli_error("note: --token-file %s is readable by others than its owner (mode %o)",
			  path, (unsigned)(st.st_mode & 0777));
	return t;
}

struct logger {
	int quiet;
};

/* A line of the server's log: UTC time, then the line. With --quiet, answers below 400
 * and notes are left out (a line with " 4NN " or " 5NN " as its status is kept). */
static void log_line(void *arg, const char *line)
{
	const struct logger *lg = arg;
	char ts[32];
	struct tm tm;
	time_t now = time(NULL);

	if (lg->quiet) {
		const char *p = line;
		int keep = 0;

		while ((p = strchr(p, ' '))) {
			p++;
			if ((p[0] == '4' || p[0] == '5') && p[1] >= '0' && p[1] <= '9' &&
			    p[2] >= '0' && p[2] <= '9' && p[3] == ' ') {
				keep = 1;
				break;
			}
		}
		if (!keep)
			return;
	}
	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(stderr, "%s %s\n", ts, line);
}

int cmd_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "pid", required_argument, NULL, 'p' },
		{ "allow-remote", no_argument, NULL, OPT_REMOTE },
		{ "token-file", required_argument, NULL, OPT_TOKEN },
		{ "advertise", required_argument, NULL, OPT_ADVERTISE },
		{ "freq", required_argument, NULL, 'F' },
		{ "wall-hz", required_argument, NULL, OPT_WALL_HZ },
		{ "max-profiles", required_argument, NULL, OPT_MAX_PROFILES },
		{ "max-seconds", required_argument, NULL, OPT_MAX_SECONDS },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONN },
		{ "max-per-ip", required_argument, NULL, OPT_MAX_PER_IP },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "max-records", required_argument, NULL, OPT_MAX_RECORDS },
		{ "linger", required_argument, NULL, OPT_LINGER },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_opts o;
	struct logger lg = { 0 };
	struct serve *srv;
	enum serve_fail fail;
	const char *token_file = NULL;
	char why[512], *token = NULL;
	sigset_t stopsigs, old;
	uint64_t v;
	double d;
	int c;

	serve_opts_init(&o);
	optind = 1;
	while ((c = getopt_long(argc, argv, "l:p:F:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o.listen = optarg;
			break;
		case 'p':
			if (number("-p", optarg, 1, 4194304, &v))
				return EXIT_USAGE;
			o.pid = (pid_t)v;
			break;
		case OPT_REMOTE:
			o.remote = 1;
			break;
		case OPT_TOKEN:
			token_file = optarg;
			break;
		case OPT_ADVERTISE:
			if (!*optarg || strlen(optarg) > 255 ||
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					   "0123456789.-:[]") != strlen(optarg)) {
				cli_error("--advertise: HOST:PORT, not '%s'", optarg);
				return EXIT_USAGE;
			}
			o.advertise = optarg;
			break;
		case 'F':
			if (number("-F", optarg, 1, 100000, &v))
				return EXIT_USAGE;
			o.freq = v;
			break;
		case OPT_WALL_HZ:
			if (cli_parse_wall_hz(optarg, &o.wall_hz))
				return EXIT_USAGE;
			break;
		case OPT_MAX_PROFILES:
			if (number("--max-profiles", optarg, 1, 1024, &v))
				return EXIT_USAGE;
			o.max_profiles = (unsigned)v;
			break;
		case OPT_MAX_SECONDS:
			if (number("--max-seconds", optarg, 1, 86400, &v))
				return EXIT_USAGE;
			o.max_seconds = (unsigned)v;
			break;
		case OPT_MAX_CONN:
			if (number("--max-connections", optarg, 1, 4096, &v))
				return EXIT_USAGE;
			o.max_connections = (unsigned)v;
			break;
		case OPT_MAX_PER_IP:
			if (number("--max-per-ip", optarg, 1, 4096, &v))
				return EXIT_USAGE;
			o.max_per_ip = (unsigned)v;
			break;
		case OPT_TIMEOUT:
			if (number("--timeout", optarg, 1, 3600, &v))
				return EXIT_USAGE;
			o.timeout_s = (unsigned)v;
			break;
		case OPT_MAX_RECORDS:
			if (number("--max-records", optarg, 1, 1u << 20, &v))
				return EXIT_USAGE;
			o.max_records = (size_t)v;
			break;
		case OPT_LINGER:
			if (cli_parse_seconds(optarg, &d) || d > 3600) {
				cli_error("--linger: seconds from 0 to 3600: %s", optarg);
				return EXIT_USAGE;
			}
			o.linger_ms = (unsigned)(d * 1000);
			break;
		case 'q':
			lg.quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_error("serve takes no arguments ('%s')", argv[optind]);
		return EXIT_USAGE;
	}
	if (token_file) {
		token = read_token(token_file);
		if (!token)
			return EXIT_USAGE;
		o.token = token;
	}
	o.log = log_line;
	o.log_arg = &lg;
	/* The stop signals reach this thread alone, in sigsuspend: the server's threads,
	 * made now, inherit the mask that blocks them. */
	cli_install_signals();
	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGHUP);
	sigaddset(&stopsigs, SIGQUIT);
	pthread_sigmask(SIG_BLOCK, &stopsigs, &old);
	srv = serve_start(&o, &fail, why, sizeof(why));
	if (token) {
		memset(token, 0, strlen(token));
		free(token);
	}
	if (!srv) {
		cli_error("%s", why);
		return fail == SERVE_FAIL_USAGE ? EXIT_USAGE : fail == SERVE_FAIL_LISTEN ? EXIT_LISTEN
											: EXIT_FAIL;
	}
	fprintf(stderr, "gotop-perf: serving http://%s/%s%s (Ctrl-C stops)\n", serve_address(srv),
		o.pid ? "debug/pprof/ of process " : "",
		o.pid ? (snprintf(why, sizeof(why), "%d", (int)o.pid), why) : "");
	while (!cli_stop_signal)
		sigsuspend(&old);
	fprintf(stderr, "gotop-perf: stopping (signal %d)\n", (int)cli_stop_signal);
	serve_stop(srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return EXIT_OK;
}
