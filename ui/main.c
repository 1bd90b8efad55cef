/* main.c: gotop-perf's entry point: dispatches to the live UI, record, verify and list. */
#include "config.h"
#include "cli.h"
#include "gotop/gobpf-abi.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include "gotop/agg.h"
#include "gotop/events.h"
#include "gotop/sampler.h"
#include "gotop/procinfo.h"
#include "gotop/repair.h"
#include "gotop/util.h"
#include "gotop/symtab.h"

volatile int cli_stop_signal;

static void on_signal(int sig)
{
	cli_stop_signal = sig;
}

void cli_install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("gotop-perf: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v == 0)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (*end == 's' && end[1] == 0)
		end++;
	if (*end || !(v > 0) || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

void cli_sampling_init(struct cli_sampling *s)
{
	memset(s, 0, sizeof(*s));
	s->use_freq = 1;
	s->freq = 1000;
	s->repair = 1;
	s->go = 1;
	s->bpf = 1;
	s->label_latency_ms = 4;
}

void cli_sampling_finish(struct cli_sampling *s)
{
	if (s->nevents == 0) {
		events_parse("cpu-clock", &s->events[0]);
		s->nevents = 1;
	}
}

void cli_sampling_usage(FILE *f, size_t max_events)
{
	fprintf(f,
		"  -p, --pid PID          profile an existing process (all its threads, also new ones)\n"
		"  -e, --event EVENT      event to sample (default cpu-clock; see `gotop-perf list`)%s\n"
		"  -F, --freq HZ          samples per second per thread (default 1000)\n"
		"  -c, --count PERIOD     a sample every PERIOD events instead of -F\n"
		"      --stack-size BYTES user stack bytes copied per sample for the repair (default\n"
		"                         %d for Go 1.21 and newer, %d for the rest)\n"
		"      --no-repair        keep the kernel's frame-pointer chains as they are\n"
		"      --no-go            do not read goroutine ids and pprof labels\n"
		"      --no-bpf           (Go) read each sample's goroutine after the sample instead of\n"
		"                         at it (by a BPF program: needs CAP_BPF and CAP_PERFMON)\n"
		"      --label-latency MS (Go, without the BPF program) read each sample's goroutine\n"
		"                         and labels at most about MS ms after the sample (default 4);\n"
		"                         shorter is more exact, at one wakeup per MS\n",
		max_events > 1 ? "; repeatable" : "", REPAIR_STACK_GO, REPAIR_STACK_OTHER);
}

int cli_sampling_option(struct cli_sampling *s, int c, const char *arg, size_t max_events)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (cli_parse_u64(arg, &v) || v > 0x7fffffff) {
			cli_error("invalid PID '%s'", arg);
			return EXIT_USAGE;
		}
		s->pid = (pid_t)v;
		return 0;
	case 'e':
		if (s->nevents >= max_events || s->nevents >= CLI_MAX_EVENTS) {
			if (max_events == 1)
				cli_error("one event at a time here (switch events live with the e key)");
			else
				cli_error("at most %zu events", GP_MIN(max_events, (size_t)CLI_MAX_EVENTS));
			return EXIT_USAGE;
		}
		if (events_parse(arg, &s->events[s->nevents])) {
			cli_error("unknown event '%s' (see `gotop-perf list`)", arg);
			return EXIT_EVENT;
		}
		/* The same event twice would write the same profile twice (aliases too). */
		for (size_t i = 0; i < s->nevents; i++)
			if (s->events[i].type == s->events[s->nevents].type &&
			    s->events[i].config == s->events[s->nevents].config) {
				cli_error("event '%s' is given twice (as %s)", arg, s->events[i].name);
				return EXIT_USAGE;
			}
		s->nevents++;
		return 0;
	case 'F':
		if (cli_parse_u64(arg, &v) || v > 1000000) {
			cli_error("invalid frequency '%s'", arg);
			return EXIT_USAGE;
		}
		s->use_freq = 1;
		s->freq = v;
		return 0;
	case 'c':
		if (cli_parse_u64(arg, &v)) {
			cli_error("invalid period '%s'", arg);
			return EXIT_USAGE;
		}
		s->use_freq = 0;
		s->period = v;
		return 0;
	case CLI_OPT_STACK:
		if (cli_parse_u64(arg, &v) || v == 0 || v > 65528) {
			cli_error("invalid stack size '%s' (1 to 65528 bytes)", arg);
			return EXIT_USAGE;
		}
		s->stack_size = (uint32_t)((v + 7) & ~7ULL);
		return 0;
	case CLI_OPT_NO_REPAIR:
		s->repair = 0;
		return 0;
	case CLI_OPT_NO_GO:
		s->go = 0;
		return 0;
	case CLI_OPT_NO_BPF:
		s->bpf = 0;
		return 0;
	case CLI_OPT_LATENCY:
		if (cli_parse_u64(arg, &v) || v > 1000) {
			cli_error("invalid label latency '%s' (1 to 1000 ms)", arg);
			return EXIT_USAGE;
		}
		s->label_latency_ms = (unsigned)v;
		return 0;
	default:
		return -1;
	}
}

int cli_check_pid(pid_t pid)
{
	int k;

	if (pid <= 0) {
		cli_error("invalid PID %d", (int)pid);
		return EXIT_USAGE;
	}
	if (kill(pid, 0) != 0 && errno == ESRCH) {
		cli_error("no process with PID %d", (int)pid);
		return EXIT_TARGET;
	}
	k = procinfo_is_kthread(pid);
	if (k == -ENOENT || k == -ESRCH) {
		cli_error("no process with PID %d", (int)pid);
		return EXIT_TARGET;
	}
	if (k == 1) {
		cli_error("PID %d is a kernel thread: gotop-perf profiles user processes", (int)pid);
		return EXIT_TARGET;
	}
	return 0;
}

int cli_target_spawn(struct cli_target *t, char **argv)
{
	int p[2], e[2];
	pid_t pid, parent = getpid();
	char c;

	memset(t, 0, sizeof(*t));
	t->go_fd = t->err_fd = -1;
	/* p: the parent says "exec now"; e: the child reports an exec failure
	 * (close-on-exec, so EOF means the exec worked). */
	if (pipe2(p, O_CLOEXEC) || pipe2(e, O_CLOEXEC)) {
		cli_error("pipe: %s", strerror(errno));
		return EXIT_FAIL;
	}
	pid = fork();
	if (pid < 0) {
		cli_error("fork: %s", strerror(errno));
		return EXIT_FAIL;
	}
	if (pid == 0) {
		int err;

		close(p[1]);
		close(e[0]);
		/* When gotop-perf dies without stopping the command (SIGKILL, a crash), the
		 * command gets SIGTERM as at a normal end (cli_target_stop) instead of running on
		 * unwatched: a demo orphaned that way ran on through a CI run. The signal comes
		 * when the forking thread ends, which is the main thread, the last to end;
		 * a parent already gone before the prctl is caught by getppid. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		/* An ignored signal stays ignored across exec: the command gets SIGPIPE as usual. */
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		err = errno;
		if (write(e[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[0]);
	close(e[1]);
	t->pid = pid;
	t->spawned = 1;
	t->go_fd = p[1];
	t->err_fd = e[0];
	return 0;
}

void cli_target_go(struct cli_target *t)
{
	char c = 'g';
	int err = 0;

	if (t->go_fd < 0)
		return;
	if (write(t->go_fd, &c, 1) != 1) {
		/* the child is gone; reaped later */
	}
	close(t->go_fd);
	t->go_fd = -1;
	if (read(t->err_fd, &err, sizeof(err)) == (ssize_t)sizeof(err) && err)
		t->exit_status = -err;
	close(t->err_fd);
	t->err_fd = -1;
}

void cli_target_reap(struct cli_target *t, int wait)
{
	int status;

	if (!t->spawned)
		return;
	/* Look before reaping (WNOWAIT), and reap only an exit. The verifier's thread traces
	 * the command's threads; a tracer in the real parent's thread group counts as no
	 * reparenting, so a wait here would also take the ptrace stop meant for it (linux
	 * kernel/exit.c wait_consider_task) and leave that thread stopped for good, the
	 * verifier waiting (seen under valgrind in CI: --batch --verify of a command). */
	for (;;) {
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, (id_t)t->pid, &si, WEXITED | WNOWAIT | (wait ? 0 : WNOHANG)) < 0) {
			if (errno == EINTR)
				continue;
			if (errno == ECHILD)
				t->spawned = 0; /* reaped by the verifier's thread (its exit while traced) */
			return;
		}
		if (si.si_pid != t->pid)
			return; /* WNOHANG: nothing to report */
		if (si.si_code == CLD_EXITED || si.si_code == CLD_KILLED || si.si_code == CLD_DUMPED)
			break;
		if (!wait)
			return; /* a stop: the tracer's to take */
		{
			struct timespec ts = { 0, 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	if (waitpid(t->pid, &status, 0) == t->pid) {
		t->spawned = 0;
		if (t->exit_status >= 0)
			t->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	} else if (errno == ECHILD) {
		t->spawned = 0;
	}
}

int cli_is_go_binary(const char *path, pid_t pid, char *ver, size_t verlen)
{
	char buf[4096];
	struct symfile *sf;
	int go, err;

	if (!path) {
		snprintf(buf, sizeof(buf), "/proc/%d/exe", (int)pid);
	} else if (strchr(path, '/')) {
		snprintf(buf, sizeof(buf), "%s", path);
	} else {
		const char *p = getenv("PATH");

		buf[0] = 0;
		while (p && *p) {
			size_t l = strcspn(p, ":");

			snprintf(buf, sizeof(buf), "%.*s/%s", (int)l, p, path);
			if (access(buf, X_OK) == 0)
				break;
			buf[0] = 0;
			p += l + (p[l] == ':');
		}
	}
	ver[0] = 0;
	if (!buf[0] || !(sf = symfile_open(buf, &err)))
		return 0;
	go = symfile_go_version(sf) != NULL;
	snprintf(ver, verlen, "%s", go ? symfile_go_version(sf) : "");
	symfile_free(sf);
	return go;
}

uint32_t cli_stack_size(const struct cli_sampling *s, const char *go_version)
{
	return s->stack_size ? s->stack_size : repair_stack_bytes(go_version);
}

static size_t bpf_ring_bytes(const struct cli_sampling *s)
{
	/* The samples of one idle drain on every CPU, twice over; a record and the ring's
	 * 8-byte header. */
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t want = (s->use_freq ? s->freq : 1000) * (uint64_t)(ncpu > 0 ? ncpu : 1) * 2 *
			(sizeof(struct gobpf_rec) + 8) * CLI_BPF_IDLE_DRAIN_MS / 1000;
	size_t n = CLI_BPF_RING_MIN;

	while (n < want && n < CLI_BPF_RING_MAX)
		n <<= 1;
	return n;
}

void cli_go_sampling(const struct cli_sampling *s, struct agg *agg, const char *go_version,
		     struct sampler_opts *so, char *why, size_t whylen)
{
	int fd = -1;

	why[0] = 0;
	agg_sampler_hook(agg, &so->hook, &so->hook_arg);
	if (!s->bpf)
		snprintf(why, whylen, "--no-bpf");
	else
		fd = agg_go_bpf(agg, go_version, bpf_ring_bytes(s), why, whylen);
	so->bpf = fd >= 0;
	so->bpf_prog_fd = fd;
	/* Without the program, goroutines are read at the drain: it must come soon. */
	so->drain_ms = fd >= 0 ? GP_MAX(s->label_latency_ms, CLI_BPF_DRAIN_MS) : s->label_latency_ms;
	so->drain_idle_ms = fd >= 0 ? CLI_BPF_IDLE_DRAIN_MS : 0;
}

void cli_target_stop(struct cli_target *t)
{
	int i;

	if (!t->spawned)
		return;
	if (t->go_fd >= 0) {
		close(t->go_fd); /* the child sees EOF and exits without exec */
		t->go_fd = -1;
	}
	cli_target_reap(t, 0);
	if (!t->spawned)
		return;
	kill(t->pid, SIGTERM);
	for (i = 0; i < 200 && t->spawned; i++) {
		struct timespec ts = { 0, 10000000L };

		nanosleep(&ts, NULL);
		cli_target_reap(t, 0);
	}
	if (t->spawned) {
		kill(t->pid, SIGKILL);
		cli_target_reap(t, 1);
	}
}

static void usage(FILE *f)
{
	fputs("Usage: gotop-perf [OPTIONS] (-p PID | -- COMMAND [ARGS...])   live profiler\n"
	      "                  [-e EVENT] [-F HZ | -c PERIOD] [-d SECONDS] [-w SECONDS] [-o DIR]\n"
	      "                  [--focus FUNC] [--ignore FUNC] [--tag KEY=VALUE] [--thread TID]\n"
	      "                  [--no-repair] [--no-go] [--no-color] [--ascii]\n"
	      "                  [--batch [-n N] [--view LIST] [--rows N] [--sort KEY]]\n"
	      "       gotop-perf record (-p PID | -- COMMAND [ARGS...]) [-e EVENT]... [-F HZ | -c PERIOD]\n"
	      "                         [-d SECONDS] [-o FILE] [-t TID]... [--stack-size BYTES]\n"
	      "                         [--no-repair] [--no-go] [-v] [-q]\n"
	      "       gotop-perf verify (-p PID | -- COMMAND [ARGS...]) [-d SECONDS] [--rate N] [--json]\n"
	      "       gotop-perf list\n"
	      "       gotop-perf --help | --version\n"
	      "\n"
	      "The live profiler opens a terminal UI (h or ? shows the keys); --batch prints the same\n"
	      "views as text every refresh, like top -b. Its options:\n"
	      "  -p PID            an existing process (every thread, also new ones)\n"
	      "  -- COMMAND        start COMMAND (stdin/stdout/stderr: /dev/null; SIGTERM on quit)\n"
	      "  -e EVENT          first event to sample (default cpu-clock); the e key switches live\n"
	      "  -F HZ, -c PERIOD  samples per second per thread (default 1000), or every PERIOD events\n"
	      "  -d SECONDS        refresh interval (default 1; also --refresh)\n"
	      "  -w SECONDS        start with a decaying window of the last SECONDS (w key toggles;\n"
	      "                    memory stays flat: stacks it no longer shows are forgotten)\n"
	      "  --max-memory MB   anonymous memory it may hold (default 96; 0: no limit; mapped\n"
	      "                    binaries do not count): past it, the entries with the fewest\n"
	      "                    samples are forgotten, and counted\n"
	      "  -o DIR            where snapshots (S key) are saved (default: the current directory)\n"
	      "  --focus FUNC, --ignore FUNC, --tag KEY=VALUE, --thread TID   start focused\n"
	      "  --no-color        no colours (NO_COLOR is respected too); --ascii: no UTF-8\n"
	      "  --batch           text on stdout every refresh; -n N stops after N updates;\n"
	      "                    --view top,tree,callers,labels,goroutines,threads,events,help\n"
	      "                    (default top,tree,labels); --rows N (default 25, 0: all);\n"
	      "                    --sort self|total|name; --callers FUNC; --min-pct PCT (tree);\n"
	      "                    --save FILE (the last update's data, gzipped pprof)\n"
	      "\n"
	      "record writes a gzipped pprof profile (default gotop-perf.pb.gz) for `go tool pprof`;\n"
	      "without -d it runs until Ctrl-C or until the target exits.\n"
	      "verify compares frame-pointer stacks (raw and repaired) with a full libunwind unwind\n"
	      "of threads it stops one at a time, and reports per function how often they are wrong\n"
	      "(gotop-perf verify --help).\n"
	      "list prints every event gotop-perf knows and whether this machine can count it.\n"
	      "\n"
	      "Exit codes: 0 success (also when the target exits during the run), 1 failure,\n"
	      "2 usage error, 3 no such target, 4 permission denied, 5 event not available.\n"
	      "See gotop-perf(1).\n", f);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "verify"))
		return cmd_verify(argc - 1, argv + 1);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return EXIT_OK;
	}
	if (argc >= 2 && (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V"))) {
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		return EXIT_OK;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	return cmd_live(argc, argv);
}
