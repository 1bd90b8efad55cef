/* test-events.c: unit tests for event names, raw codes, value types, and the real probe. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gotop/events.h"

#define GP_N(a) (sizeof(a) / sizeof((a)[0]))

static void test_parse(void **state)
{
	struct event_spec ev;

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	assert_int_equal(ev.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(events_parse("cpu-cycles", &ev), 0); /* perf alias */
	assert_string_equal(ev.name, "cycles");
	assert_int_equal(ev.type, PERF_TYPE_HARDWARE);
	assert_int_equal(events_parse("cs", &ev), 0);
	assert_string_equal(ev.name, "context-switches");
	assert_int_equal(events_parse("cache-misses:u", &ev), 0);
	assert_int_equal(ev.config, PERF_COUNT_HW_CACHE_MISSES);
	assert_int_equal(events_parse("r01c2", &ev), 0);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_int_equal(ev.config, 0x1c2);
	assert_string_equal(ev.name, "r1c2");
	/* Unknown: -ENOENT, or -ENODEV when no PMU could know it. */
	assert_true(events_parse("nonsense", &ev) < 0);
	assert_true(events_parse("r", &ev) < 0);
	assert_true(events_parse("rxyz", &ev) < 0);
	assert_int_equal(events_parse("cpu-clock:zz", &ev), -EINVAL);
	assert_int_equal(events_parse("", &ev), -EINVAL);
}

/* perf's modifiers (tools/perf/util/parse-events.c): the first of u/k/h excludes every
 * level, then each named one is counted; each p raises precise_ip, at most 3. */
static void test_modifiers(void **state)
{
	struct event_spec ev;
	char why[256];

	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	assert_int_equal(ev.modified, 0);
	assert_int_equal(ev.exclude_user | ev.exclude_kernel, 0);
	assert_int_equal(ev.exclude_hv, 1); /* perf's default: no hypervisor, no guest */
	assert_int_equal(ev.exclude_guest, 1);
	assert_int_equal(events_parse("cpu-clock:u", &ev), 0);
	assert_string_equal(ev.name, "cpu-clock:u");
	assert_int_equal(ev.modified, 1);
	assert_int_equal(ev.exclude_user, 0);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_int_equal(ev.exclude_hv, 1);
	assert_int_equal(ev.exclude_guest, 1);
	assert_int_equal(events_parse("cycles:k", &ev), 0);
	assert_int_equal(ev.exclude_user, 1);
	assert_int_equal(ev.exclude_kernel, 0);
	assert_int_equal(ev.exclude_guest, 0); /* perf: only u excludes the guest */
	assert_int_equal(events_parse("cycles:uk", &ev), 0);
	assert_int_equal(ev.exclude_user | ev.exclude_kernel, 0);
	assert_int_equal(ev.exclude_hv, 1);
	assert_int_equal(events_parse("instructions:ppp", &ev), 0);
	assert_int_equal(ev.precise_ip, 3);
	assert_int_equal(ev.modified, 0);
	assert_int_equal(events_parse("instructions:upp", &ev), 0);
	assert_int_equal(ev.precise_ip, 2);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_int_equal(events_parse("cycles:G", &ev), 0);
	assert_int_equal(ev.exclude_guest, 0);
	assert_int_equal(ev.exclude_host, 1);
	assert_int_equal(events_parse("cycles:H", &ev), 0);
	assert_int_equal(ev.exclude_guest, 1);
	assert_int_equal(ev.exclude_host, 0);
	assert_int_equal(events_parse_why("cycles:pppp", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "modifier"));
	assert_int_equal(events_parse_why("cpu-clock:x", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad modifier ':x'"));
	assert_int_equal(events_parse_why("cpu-clock:", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why(":u", &ev, why, sizeof(why)), -EINVAL);
}

/* Expected configs from the enums of linux include/uapi/linux/perf_event.h
 * (PERF_TYPE_HW_CACHE: id | op << 8 | result << 16), not from the parser's tables. */
#define HWC(c, o, r) (PERF_COUNT_HW_CACHE_##c | PERF_COUNT_HW_CACHE_OP_##o << 8 | \
		      (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##r << 16)
static void test_cache(void **state)
{
	static const struct {
		const char *name;
		uint64_t config;
	} c[] = {
		{ "L1-dcache-load-misses", HWC(L1D, READ, MISS) },
		{ "L1-dcache-loads", HWC(L1D, READ, ACCESS) },
		{ "L1-dcache-stores", HWC(L1D, WRITE, ACCESS) },
		{ "L1-dcache-prefetch-misses", HWC(L1D, PREFETCH, MISS) },
		{ "L1-icache-load-misses", HWC(L1I, READ, MISS) },
		{ "LLC-load-misses", HWC(LL, READ, MISS) },
		{ "LLC-loads", HWC(LL, READ, ACCESS) },
		{ "LLC-store-misses", HWC(LL, WRITE, MISS) },
		{ "dTLB-load-misses", HWC(DTLB, READ, MISS) },
		{ "dTLB-store-misses", HWC(DTLB, WRITE, MISS) },
		{ "iTLB-load-misses", HWC(ITLB, READ, MISS) },
		{ "branch-load-misses", HWC(BPU, READ, MISS) },
		{ "branch-loads", HWC(BPU, READ, ACCESS) },
		{ "node-load-misses", HWC(NODE, READ, MISS) },
		{ "l1d-load-miss", HWC(L1D, READ, MISS) },     /* perf's aliases */
		{ "L2-loads", HWC(LL, READ, ACCESS) },
		{ "Data-TLB-read-misses", HWC(DTLB, READ, MISS) },
	};
	struct event_spec ev;
	char name[EVENT_NAME_MAX];
	size_t i;

	for (i = 0; i < GP_N(c); i++) {
		assert_int_equal(events_parse(c[i].name, &ev), 0);
		assert_int_equal(ev.type, PERF_TYPE_HW_CACHE);
		assert_int_equal(ev.kind, EVENT_CACHE);
		assert_true(ev.config == c[i].config);
	}
	assert_int_equal(events_parse("LLC-load-misses:u", &ev), 0);
	assert_true(ev.config == HWC(LL, READ, MISS));
	assert_int_equal(ev.exclude_kernel, 1);
	/* Ops the cache does not have (evsel__is_cache_op_valid), and bad words. */
	assert_int_equal(events_parse("L1-icache-stores", &ev), -ENOENT);
	assert_int_equal(events_parse("iTLB-stores", &ev), -ENOENT);
	assert_int_equal(events_parse("branch-store-misses", &ev), -ENOENT);
	assert_int_equal(events_parse("L1-dcache-load-hits", &ev), -ENOENT);
	/* The listed names all parse, to distinct configs: 2 results per valid op, and the
	 * valid ops are 3+2+3+3+1+1+3. */
	for (i = 0; events_cache_name(i, name, sizeof(name)) == 0; i++) {
		assert_int_equal(events_parse(name, &ev), 0);
		assert_int_equal(ev.type, PERF_TYPE_HW_CACHE);
	}
	assert_int_equal(i, 2 * 16);
}

static char sysroot[256];

static void put(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", sysroot, rel);
	for (char *p = path + strlen(sysroot) + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(path, 0755);
			*p = '/';
		}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A fake sysfs PMU with the format of linux arch/x86/events/intel/core.c (event
 * config:0-7, umask config:8-15, inv config:23, cmask config:24-31, ldlat config1:0-15),
 * a format split in two ranges, named events, and a fake tracefs. */
static int fake_setup(void **state)
{
	char cmd[300];

	snprintf(sysroot, sizeof(sysroot), "%s/gotop-test-events.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(sysroot));
	put("pmus/cpu/type", "4\n");
	put("pmus/cpu/format/event", "config:0-7\n");
	put("pmus/cpu/format/umask", "config:8-15\n");
	put("pmus/cpu/format/inv", "config:23\n");
	put("pmus/cpu/format/cmask", "config:24-31\n");
	put("pmus/cpu/format/ldlat", "config1:0-15\n");
	put("pmus/cpu/format/split", "config2:0-3,32-35\n");
	put("pmus/cpu/events/cpu-cycles", "event=0x3c\n");
	put("pmus/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("pmus/cpu/events/mem-loads.scale", "1\n");
	put("pmus/cpu/events/needs-value", "event=0x10,umask=?\n");
	put("pmus/uncore_x/type", "17\n");
	put("pmus/uncore_x/format/event", "config:0-7\n");
	put("pmus/uncore_x/events/clockticks", "event=0xff\n");
	put("tracing/events/sched/sched_switch/id", "316\n");
	put("tracing/events/sched/sched_wakeup/id", "317\n");
	put("tracing/events/syscalls/sys_enter_write/id", "840\n");
	/* A tracepoint whose name is also a vendor name libpfm4 knows (skl, forced in main). */
	put("tracing/events/INST_RETIRED/ANY_P/id", "999\n");
	put("tracing/events/enable", "0\n");
	put("notracing/README", "no events directory: tracefs not mounted\n");
	snprintf(cmd, sizeof(cmd), "%s/pmus", sysroot);
	{
		static char pmus[300], tr[300];

		snprintf(pmus, sizeof(pmus), "%s/pmus", sysroot);
		snprintf(tr, sizeof(tr), "%s/tracing", sysroot);
		events_set_roots(pmus, tr);
	}
	return 0;
}

static int fake_teardown(void **state)
{
	char cmd[300];

	events_set_roots(NULL, NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sysroot);
	if (system(cmd) != 0)
		return -1;
	return 0;
}

static void test_pmu_form(void **state)
{
	struct event_spec ev;
	char why[256];

	assert_int_equal(events_parse("cpu/event=0x3c,umask=0x0/", &ev), 0);
	assert_int_equal(ev.type, 4);
	assert_int_equal(ev.kind, EVENT_PMU);
	assert_true(ev.config == 0x3c);
	assert_string_equal(ev.name, "cpu/event=0x3c,umask=0x0/");
	/* perf writes a PMU form's modifiers right after it; ":u" is taken too. */
	assert_int_equal(events_parse("cpu/event=0xd1,umask=0x20,inv,cmask=2/u", &ev), 0);
	assert_true(ev.config == (0xd1 | 0x20 << 8 | 1u << 23 | 2u << 24));
	assert_int_equal(ev.exclude_kernel, 1);
	assert_string_equal(ev.name, "cpu/event=0xd1,umask=0x20,inv,cmask=2/u");
	assert_int_equal(events_parse("cpu/event=0x3c/:k", &ev), 0);
	assert_int_equal(ev.exclude_user, 1);
	/* A named event of the PMU, and terms after it. */
	assert_int_equal(events_parse("cpu/mem-loads/", &ev), 0);
	assert_true(ev.config == (0xcd | 0x1 << 8));
	assert_true(ev.config1 == 3);
	assert_int_equal(events_parse("cpu/cpu-cycles,cmask=1/", &ev), 0);
	assert_true(ev.config == (0x3c | 1u << 24));
	/* Bits spread over two ranges, lowest first (tools/perf/util/pmu.c). */
	assert_int_equal(events_parse("cpu/split=0x5a/", &ev), 0);
	assert_true(ev.config2 == (0xaULL | 0x5ULL << 32));
	assert_int_equal(events_parse("cpu/config=0x1234,config1=7/", &ev), 0);
	assert_true(ev.config == 0x1234 && ev.config1 == 7);
	/* Errors: one line naming the fault. */
	assert_int_equal(events_parse_why("cpu/event=0x100/", &ev, why, sizeof(why)), -ERANGE);
	assert_non_null(strstr(why, "does not fit"));
	assert_int_equal(events_parse_why("cpu/bogus=1/", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "bogus"));
	assert_int_equal(events_parse_why("cpu/event=zz/", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("nopmu/event=1/", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "no PMU named 'nopmu'"));
	assert_int_equal(events_parse_why("../cpu/event=1/", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("cpu/event=1", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("cpu/../../x/", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("cpu/needs-value/", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("cpu/event=1/q", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "bad modifier"));
}

static void test_sysfs_named(void **state)
{
	struct event_spec ev;

	assert_int_equal(events_parse("clockticks", &ev), 0);
	assert_int_equal(ev.type, 17);
	assert_true(ev.config == 0xff);
	assert_string_equal(ev.name, "uncore_x/clockticks/");
	assert_int_equal(events_parse("clockticks:u", &ev), 0);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_int_not_equal(events_parse("mem-loads.scale", &ev), 0);
}

static int count_tp(void *arg, const char *name)
{
	char *seen = arg;

	strcat(seen, name);
	strcat(seen, " ");
	return 0;
}

static void test_tracepoints(void **state)
{
	struct event_spec ev;
	char seen[256] = "";

	assert_int_equal(events_parse("sched:sched_switch", &ev), 0);
	assert_int_equal(ev.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(ev.kind, EVENT_TRACEPOINT);
	assert_true(ev.config == 316);
	assert_int_equal(events_parse("syscalls:sys_enter_write:u", &ev), 0);
	assert_true(ev.config == 840);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_string_equal(ev.name, "syscalls:sys_enter_write:u");
	assert_int_not_equal(events_parse("sched:nope", &ev), 0);
	assert_int_not_equal(events_parse("sched:../../x", &ev), 0);
	assert_int_equal(events_tracepoints("sched", count_tp, seen), 2);
	assert_string_equal(seen, "sched:sched_switch sched:sched_wakeup ");
	assert_int_equal(events_tracepoints(NULL, NULL, NULL), 4);
}

/* What a name with a ':' is, by what exists: a tracepoint when tracefs has it, else a
 * vendor name libpfm4 encodes here (skl, forced in main), and the reason names what is
 * missing when nothing has it. */
static void test_decide(void **state)
{
	char pmus[300], none[300], why[320];
	struct event_spec ev;

	/* tracefs has INST_RETIRED:ANY_P: the tracepoint is taken. */
	assert_int_equal(events_parse("INST_RETIRED:ANY_P", &ev), 0);
	assert_int_equal(ev.kind, EVENT_TRACEPOINT);
	assert_true(ev.config == 999);
	/* tracefs has no such tracepoint: the vendor name. */
	if (events_parse_why("BR_MISP_RETIRED:ALL_BRANCHES", &ev, why, sizeof(why))) {
		print_message("SKIP: libpfm4 does not know skl here: %s\n", why);
		skip();
	}
	assert_int_equal(ev.kind, EVENT_VENDOR);
	assert_true((ev.config & 0xffff) == 0xc5);
	/* Neither: no tracepoint, no PMU's table. */
	assert_int_equal(events_parse_why("sched:nope", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "unknown event 'sched:nope'"));
	assert_non_null(strstr(why, "tracepoint"));
	/* Known to other PMUs only (AMD's, with an Intel one here): which ones, and that no
	 * tracepoint has it. */
	assert_int_equal(events_parse_why("RETIRED_INSTRUCTIONS:u", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "not an event of this machine's PMU"));
	assert_non_null(strstr(why, "libpfm4 knows it for amd64"));

	/* tracefs not mounted (a root without events/). */
	snprintf(pmus, sizeof(pmus), "%s/pmus", sysroot);
	snprintf(none, sizeof(none), "%s/notracing", sysroot);
	events_set_roots(pmus, none);
	assert_int_equal(events_parse_why("INST_RETIRED:ANY_P", &ev, why, sizeof(why)), 0);
	assert_int_equal(ev.kind, EVENT_VENDOR);
	assert_true((ev.config & 0xffff) == 0xc0);
	assert_string_equal(why, "");
	assert_int_equal(events_parse("MEM_LOAD_RETIRED:L3_MISS:u", &ev), 0);
	assert_int_equal(ev.kind, EVENT_VENDOR);
	/* A name only a tracepoint could be: tracefs's absence is the reason. */
	assert_int_equal(events_parse_why("sched:sched_switch", &ev, why, sizeof(why)), -ENODEV);
	assert_non_null(strstr(why, "tracefs is not mounted"));
	assert_non_null(strstr(why, "no PMU's table has this name"));
	/* A vendor name of other PMUs: both. */
	assert_int_equal(events_parse_why("RETIRED_INSTRUCTIONS", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "libpfm4 knows it for amd64"));
	assert_null(strstr(why, "tracefs")); /* no ':': it could not be a tracepoint */
	/* A bad unit mask of an event this PMU has: libpfm4's reason, not tracefs's. */
	assert_int_equal(events_parse_why("INST_RETIRED:NO_SUCH_UMASK", &ev, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "libpfm4"));
	/* perf's names do not depend on either. */
	assert_int_equal(events_parse("cpu-clock:u", &ev), 0);
	assert_int_equal(ev.kind, EVENT_SOFTWARE);
	assert_int_equal(events_parse_why("bogus-event", &ev, why, sizeof(why)), -ENOENT);
	assert_non_null(strstr(why, "unknown event 'bogus-event'"));
}

/* libpfm4 with LIBPFM_FORCE_PMU=skl (set in main before libpfm4 starts): the codes of the
 * Intel SDM's Skylake event table, which libpfm4's lib/events/intel_skl_events.h carries:
 * INST_RETIRED.ANY_P event 0xc0 umask 0x00, BR_MISP_RETIRED.ALL_BRANCHES 0xc5 umask
 * 0x00, MEM_LOAD_RETIRED.L3_MISS 0xd1 umask 0x20. PERF_TYPE_RAW, config event | umask << 8. */
static void test_vendor_skl(void **state)
{
	struct event_spec ev;
	char why[256];

	if (events_parse_why("INST_RETIRED:ANY_P", &ev, why, sizeof(why))) {
		print_message("SKIP: libpfm4 does not know skl here: %s\n", why);
		skip();
	}
	assert_int_equal(ev.kind, EVENT_VENDOR);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_true((ev.config & 0xffff) == 0xc0);
	assert_int_equal(events_parse("BR_MISP_RETIRED:ALL_BRANCHES", &ev), 0);
	assert_true((ev.config & 0xffff) == 0xc5);
	assert_int_equal(events_parse("MEM_LOAD_RETIRED:L3_MISS:u", &ev), 0);
	assert_true((ev.config & 0xffff) == 0x20d1);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_string_equal(ev.name, "MEM_LOAD_RETIRED:L3_MISS:u");
	assert_int_equal(events_parse_why("INST_RETIRED:NO_SUCH_UMASK", &ev, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "libpfm4"));
	assert_int_equal(events_parse("NO_SUCH_EVENT_AT_ALL", &ev), -ENOENT);
}

/* perf's group syntax (parse-events.y group_def): the leader's fields, the members', one
 * name; modifiers after '}' go to each event. */
static void test_group(void **state)
{
	struct event_spec ev;
	char why[256];

	assert_int_equal(events_parse("{cpu-clock,faults,cs}", &ev), 0);
	assert_string_equal(ev.name, "{cpu-clock,page-faults,context-switches}");
	assert_string_equal(ev.leader, "cpu-clock");
	assert_int_equal(ev.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(ev.nmembers, 2);
	assert_int_equal(ev.members[0].config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_string_equal(ev.members[0].name, "page-faults");
	assert_int_equal(ev.members[1].config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_int_equal(events_parse("{cycles,instructions:k}:u", &ev), 0);
	assert_string_equal(ev.name, "{cycles,instructions:k}:u");
	assert_int_equal(ev.exclude_kernel, 1);
	assert_int_equal(ev.members[0].exclude_kernel, 1); /* the group's u last */
	assert_int_equal(ev.members[0].exclude_user, 0);
	/* A PMU form's commas stay its own. */
	assert_int_equal(events_parse("{cpu-clock,software/config=2,config1=0/}", &ev), 0);
	assert_int_equal(ev.nmembers, 1);
	assert_int_equal(ev.members[0].config, 2);
	assert_int_equal(events_parse_why("{cpu-clock}", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("{cpu-clock,cs,faults,task-clock}", &ev, why, sizeof(why)),
			 -EINVAL);
	assert_non_null(strstr(why, "at most 3"));
	assert_int_equal(events_parse_why("{cs,context-switches}", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "twice"));
	assert_int_equal(events_parse_why("{cpu-clock,{cs}}", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("{cpu-clock,cs", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("{cpu-clock,cs}u", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("{cpu-clock,,cs}", &ev, why, sizeof(why)), -EINVAL);
	assert_int_equal(events_parse_why("{cpu-clock,cs}:zz", &ev, why, sizeof(why)), -EINVAL);
	assert_int_not_equal(events_parse_why("{cpu-clock,nonsense}", &ev, why, sizeof(why)), 0);
	/* Without :S every event samples; :S is the group's (perf's sample_read), the other
	 * modifiers beside it go to each event. */
	assert_int_equal(events_parse("{cpu-clock,faults}", &ev), 0);
	assert_int_equal(ev.sample_read, 0);
	assert_false(events_name_sample_read(ev.name));
	assert_int_equal(events_parse("{cpu-clock,faults}:S", &ev), 0);
	assert_int_equal(ev.sample_read, 1);
	assert_string_equal(ev.name, "{cpu-clock,page-faults}:S");
	assert_true(events_name_sample_read(ev.name));
	assert_int_equal(ev.exclude_kernel, 0);
	assert_int_equal(events_parse("{cycles,instructions}:uS", &ev), 0);
	assert_int_equal(ev.sample_read, 1);
	assert_int_equal(ev.exclude_kernel, 1);
	assert_int_equal(ev.members[0].exclude_kernel, 1);
	assert_string_equal(ev.name, "{cycles,instructions}:uS");
	assert_true(events_name_sample_read(ev.name));
	assert_false(events_name_sample_read("{cycles,instructions}:u"));
	assert_false(events_name_sample_read("syscalls:sys_enter_write:u"));
	/* :S on one event says where it goes. */
	assert_int_equal(events_parse_why("cpu-clock:S", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "{a,b}:S"));
	assert_int_equal(events_parse_why("{cpu-clock:S,cs}", &ev, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "{a,b}:S"));
	assert_int_equal(events_parse_why("{cpu-clock,cs}:Sz", &ev, why, sizeof(why)), -EINVAL);
}

/* The attrs of a group's events against perf's, as `perf record -vv -e GROUP` prints them
 * (perf 6.1, linux tools/perf/util/evsel.c evsel__config and record.c
 * evsel__config_leader_sampling). {cpu-clock,page-faults}: leader sample_type
 * IP|TID|TIME|ID|PERIOD, read_format ID|LOST, disabled, mmap, comm, enable_on_exec;
 * member sample_type IP|TID|TIME|ID|PERIOD, { sample_period, sample_freq } 4000, freq 1,
 * inherit 1, not disabled, no mmap, comm or enable_on_exec. {cpu-clock,page-faults}:S:
 * leader sample_type IP|TID|TIME|READ|ID|PERIOD, read_format ID|GROUP|LOST; member the
 * leader's sample_type, no sample_period or sample_freq, no freq. (perf's ID is
 * IDENTIFIER here: the same id at a fixed place, events.c.) */
static void test_group_attrs(void **state)
{
	const uint64_t base = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_PERIOD;
	struct perf_event_attr lead, m;
	struct event_spec ev;

	assert_int_equal(events_parse("{cpu-clock,page-faults}", &ev), 0);
	memset(&lead, 0, sizeof(lead));
	events_attr(&ev, &lead);
	lead.sample_type = base;
	lead.freq = 1;
	lead.sample_freq = 4000;
	lead.disabled = lead.inherit = lead.mmap = lead.comm = lead.task = 1;
	lead.enable_on_exec = 1;
	events_group_attr(&ev, &lead);
	assert_true(lead.sample_type == (base | PERF_SAMPLE_IDENTIFIER));
	assert_true((lead.read_format & PERF_FORMAT_GROUP) == 0);
	events_group_member_attr(&ev, 0, &lead, &m);
	assert_int_equal(m.type, PERF_TYPE_SOFTWARE);
	assert_true(m.config == PERF_COUNT_SW_PAGE_FAULTS);
	assert_true(m.sample_type == lead.sample_type); /* one layout for the one ring */
	assert_int_equal(m.freq, 1);
	assert_true(m.sample_freq == 4000);
	assert_int_equal(m.inherit, 1);
	assert_int_equal(m.disabled, 0);
	assert_int_equal(m.enable_on_exec, 0);
	assert_int_equal(m.mmap + m.comm + m.task, 0);

	assert_int_equal(events_parse("{cpu-clock,page-faults}:S", &ev), 0);
	memset(&lead, 0, sizeof(lead));
	events_attr(&ev, &lead);
	lead.sample_type = base;
	lead.freq = 1;
	lead.sample_freq = 4000;
	lead.disabled = lead.inherit = lead.mmap = 1;
	events_group_attr(&ev, &lead);
	assert_true(lead.sample_type == (base | PERF_SAMPLE_READ));
	assert_true(lead.read_format & PERF_FORMAT_GROUP);
	events_group_member_attr(&ev, 0, &lead, &m);
	assert_true(m.config == PERF_COUNT_SW_PAGE_FAULTS);
	assert_true(m.sample_type == lead.sample_type);
	assert_int_equal(m.freq, 0);
	assert_true(m.sample_period == 0);
	assert_int_equal(m.disabled, 0);
	assert_int_equal(m.mmap, 0);

	/* A member's own modifiers: its exclude bits and the callchain levels they leave. */
	assert_int_equal(events_parse("{cpu-clock,page-faults:u}", &ev), 0);
	memset(&lead, 0, sizeof(lead));
	events_attr(&ev, &lead);
	events_group_attr(&ev, &lead);
	events_group_member_attr(&ev, 0, &lead, &m);
	assert_int_equal(m.exclude_kernel, 1);
	assert_int_equal(m.exclude_callchain_kernel, 1);
	assert_int_equal(lead.exclude_kernel, 0);
	/* Not a group: nothing added. */
	assert_int_equal(events_parse("cpu-clock", &ev), 0);
	memset(&lead, 0, sizeof(lead));
	events_group_attr(&ev, &lead);
	assert_true(lead.sample_type == 0 && lead.read_format == 0);
}

static void test_table_complete(void **state)
{
	/* Every event the issue names is known. */
	static const char *names[] = { "cpu-clock", "task-clock", "page-faults", "minor-faults",
		"major-faults", "context-switches", "cpu-migrations", "cycles", "instructions",
		"cache-references", "cache-misses", "branch-instructions", "branch-misses",
		"bus-cycles", "ref-cycles" };
	size_t i;
	struct event_spec ev;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(events_parse(names[i], &ev), 0);
}

static void test_value_types(void **state)
{
	struct event_spec ev;
	const char *t, *u;

	events_parse("cpu-clock", &ev);
	events_value_type(&ev, &t, &u);
	assert_string_equal(t, "cpu");
	assert_string_equal(u, "nanoseconds");
	events_parse("cycles", &ev);
	events_value_type(&ev, &t, &u);
	assert_string_equal(t, "cycles");
	assert_string_equal(u, "count");
}

/* The real kernel: software events count here; hardware ones either count (bare
 * metal) or fail with a reason naming the event and the cause. */
static void test_probe(void **state)
{
	struct event_spec ev;
	char why[256];
	int r;

	events_parse("cpu-clock", &ev);
	r = events_probe(&ev, 1, why, sizeof(why));
	if (r == -EACCES || r == -EPERM) {
		print_message("SKIP: perf_event_open not permitted here: %s\n", why);
		skip();
	}
	assert_int_equal(r, 0);
	events_parse("cycles", &ev);
	r = events_probe(&ev, 1, why, sizeof(why));
	if (r != 0) {
		assert_non_null(strstr(why, "cycles"));
		if (r == -ENOENT || r == -EOPNOTSUPP || r == -ENODEV)
			assert_non_null(strstr(why, "not supported"));
	}
}

static void test_explain(void **state)
{
	struct event_spec ev;
	char why[256];

	events_parse("cpu-clock", &ev);
	events_explain_error(&ev, EACCES, 1, why, sizeof(why));
	/* Names the sysctl and a capability. */
	assert_non_null(strstr(why, "perf_event_paranoid"));
	assert_non_null(strstr(why, "CAP_"));
	events_explain_error(&ev, ESRCH, 4242, why, sizeof(why));
	assert_non_null(strstr(why, "4242"));
	/* A PMU that refuses :pp: x86 says EOPNOTSUPP (linux arch/x86/events/core.c
	 * x86_pmu_hw_config), others EINVAL. The reason names precise sampling. */
	assert_int_equal(events_parse("cycles:pp", &ev), 0);
	events_explain_error(&ev, EINVAL, 1, why, sizeof(why));
	assert_non_null(strstr(why, "cycles:pp: the PMU refuses precise sampling (precise_ip=2"));
	events_explain_error(&ev, EOPNOTSUPP, 1, why, sizeof(why));
	assert_non_null(strstr(why, "refuses precise sampling"));
	/* A group the kernel refuses: the reason says what it needs (reading a group at
	 * each sample of inherited events, :S), or that the group was refused. */
	assert_int_equal(events_parse("{cpu-clock,faults}:S", &ev), 0);
	events_explain_error(&ev, EINVAL, 1, why, sizeof(why));
	assert_non_null(strstr(why, "Linux 6.12"));
	assert_int_equal(events_parse("{cpu-clock,faults}", &ev), 0);
	events_explain_error(&ev, EINVAL, 1, why, sizeof(why));
	assert_null(strstr(why, "Linux 6.12"));
	assert_non_null(strstr(why, "rejected the group"));
}

int main(void)
{
	/* Before libpfm4 starts (at the first vendor name): encode for Skylake. */
	setenv("LIBPFM_FORCE_PMU", "skl", 1);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_cache),
		cmocka_unit_test(test_group),
		cmocka_unit_test(test_group_attrs),
		cmocka_unit_test_setup_teardown(test_pmu_form, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_sysfs_named, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_tracepoints, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(test_decide, fake_setup, fake_teardown),
		cmocka_unit_test(test_vendor_skl),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_value_types),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_explain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
