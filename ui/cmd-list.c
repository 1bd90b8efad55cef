/* cmd-list.c: `gotop-perf list`: every known event and whether this machine can count it;
 * the vendor events of this machine's PMU (--pmu), the tracepoints (--tracepoints), and
 * how an event is encoded (--attr). */
#include "config.h"
#include "cli.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "gotop/events.h"
#include "gotop/util.h"

/* Text from sysfs, tracefs or libpfm4's tables goes to the terminal escaped. */
static void put_esc(const char *s, int width)
{
	char e[1024];

	util_escape(e, sizeof(e), s, strlen(s), 1);
	printf("%-*s", width, e);
}

static int pmu_line(void *arg, const char *pmu, const char *event, const char *desc)
{
	put_esc(pmu, 0);
	fputs("::", stdout);
	put_esc(event, 40);
	putchar(' ');
	put_esc(desc, 0);
	putchar('\n');
	return 0;
}

static int tp_line(void *arg, const char *name)
{
	put_esc(name, 0);
	putchar('\n');
	return 0;
}

/* The attr fields an event sets, one "field value" per line, as perf stat -vv names them
 * (tools/perf/util/perf_event_attr_fprintf.c), so the two can be compared. A group's
 * sampling fields as it is sampled at perf record's rate (-F 4000): the leader's
 * sample_type and read_format bits, and each member's sampling. */
static int print_attr(const char *name)
{
	struct perf_event_attr a, lead, m;
	struct event_spec ev;
	char why[320], e[400];

	if (events_parse_why(name, &ev, why, sizeof(why))) {
		util_escape(e, sizeof(e), why[0] ? why : name, strlen(why[0] ? why : name), 1);
		cli_error("%s", e);
		return EXIT_EVENT;
	}
	memset(&a, 0, sizeof(a));
	events_attr(&ev, &a);
	printf("name %s\ntype %u\nconfig %#llx\nconfig1 %#llx\nconfig2 %#llx\n", ev.name, a.type,
	       (unsigned long long)a.config, (unsigned long long)a.config1,
	       (unsigned long long)a.config2);
	printf("exclude_user %u\nexclude_kernel %u\nexclude_hv %u\nexclude_host %u\n"
	       "exclude_guest %u\nprecise_ip %u\n",
	       a.exclude_user, a.exclude_kernel, a.exclude_hv, a.exclude_host, a.exclude_guest,
	       a.precise_ip);
	if (ev.nmembers) {
		lead = a;
		lead.freq = 1;
		lead.sample_freq = 4000;
		lead.disabled = 1;
		lead.mmap = lead.comm = lead.task = 1;
		events_group_attr(&ev, &lead);
		printf("sample_read %u\nsample_identifier %u\nread_format_group %u\n",
		       !!(lead.sample_type & PERF_SAMPLE_READ),
		       !!(lead.sample_type & PERF_SAMPLE_IDENTIFIER),
		       !!(lead.read_format & PERF_FORMAT_GROUP));
	}
	for (size_t k = 0; k < ev.nmembers; k++) {
		events_group_member_attr(&ev, k, &lead, &m);
		printf("member %s type %u config %#llx exclude_user %u exclude_kernel %u "
		       "sample_read %u read_format_group %u freq %u sample_freq %llu disabled %u "
		       "mmap %u\n",
		       ev.members[k].name, m.type, (unsigned long long)m.config, m.exclude_user,
		       m.exclude_kernel, !!(m.sample_type & PERF_SAMPLE_READ),
		       !!(m.read_format & PERF_FORMAT_GROUP), m.freq,
		       (unsigned long long)m.sample_freq, m.disabled, m.mmap);
	}
	return EXIT_OK;
}

static void usage(void)
{
	cli_error("usage: gotop-perf list [--pmu | --tracepoints [FILTER] | --attr EVENT]");
}

int cmd_list(int argc, char **argv)
{
	size_t n, i;
	const struct event_desc *t = events_table(&n);
	char why[256], kwhy[256], name[EVENT_NAME_MAX];
	int kernel, r;

	if (argc > 1 && !strcmp(argv[1], "--pmu") && argc == 2) {
		r = events_pmu_list(pmu_line, NULL, why, sizeof(why));
		if (r < 0) {
			cli_error("%s", why);
			return EXIT_EVENT;
		}
		return EXIT_OK;
	}
	if (argc > 1 && !strcmp(argv[1], "--tracepoints") && argc <= 3) {
		r = events_tracepoints(argc == 3 ? argv[2] : NULL, tp_line, NULL);
		if (r < 0) {
			cli_error("no tracepoints: tracefs is not mounted (as root: mount -t tracefs "
				  "nodev /sys/kernel/tracing) or not readable");
			return EXIT_EVENT;
		}
		return EXIT_OK;
	}
	if (argc == 3 && !strcmp(argv[1], "--attr"))
		return print_attr(argv[2]);
	if (argc > 1) {
		usage();
		return EXIT_USAGE;
	}
	kernel = events_kernel_allowed(kwhy, sizeof(kwhy));
	printf("%-24s %-9s %-5s %s\n", "EVENT", "KIND", "HERE", "DESCRIPTION / WHY NOT");
	for (i = 0; i < n; i++) {
		struct event_spec ev;
		int ok;

		events_parse(t[i].name, &ev);
		ok = events_probe(&ev, !kernel, why, sizeof(why)) == 0;
		printf("%-24s %-9s %-5s %s", t[i].name,
		       t[i].kind == EVENT_HARDWARE ? "hardware" : "software", ok ? "yes" : "no",
		       ok ? t[i].help : why);
		if (*t[i].aliases)
			printf("  (also: %s)", t[i].aliases);
		putchar('\n');
	}
	for (i = 0; events_cache_name(i, name, sizeof(name)) == 0; i++) {
		struct event_spec ev;
		int ok;

		events_parse(name, &ev);
		ok = events_probe(&ev, !kernel, why, sizeof(why)) == 0;
		printf("%-24s %-9s %-5s %s\n", name, "cache", ok ? "yes" : "no",
		       ok ? "generic cache event" : why);
	}
	printf("%-24s %-9s %-5s %s\n", "rNNNN", "raw", "-", "raw PMU event code in hex (e.g. r01c2)");
	printf("%-24s %-9s %-5s %s\n", "pmu/term=value,.../", "pmu", "-",
	       "a PMU's sysfs form (/sys/bus/event_source/devices/PMU/format, events)");
	printf("%-24s %-9s %-5s %s\n", "VENDOR_EVENT:UMASK", "vendor", "-",
	       "the CPU vendor's names through libpfm4 (list --pmu)");
	r = events_tracepoints(NULL, NULL, NULL);
	if (r >= 0)
		snprintf(why, sizeof(why), "%d tracepoints (list --tracepoints [FILTER])", r);
	else
		snprintf(why, sizeof(why), "tracefs is not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
	printf("%-24s %-9s %-5s %s\n", "subsystem:event", "trace", "-", why);
	printf("modifiers: EVENT:u user only, :k kernel only, :h hypervisor, :p :pp :ppp precise, "
	       ":G guest, :H host\n");
	if (!kernel)
		printf("\nnote: %s\n", kwhy);
	return EXIT_OK;
}
