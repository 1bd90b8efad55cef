/* events.c: the event table (perf's names), parsing, probing, and permission diagnostics. */
#include "config.h"
#include "gotop/events.h"
#include "gotop/util.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Names and configs follow linux tools/perf/util/parse-events.c (event_symbols_hw,
 * event_symbols_sw) and include/uapi/linux/perf_event.h. */
static const struct event_desc table[] = {
	{ "cpu-clock", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	  "CPU time, high-resolution per-CPU timer", "nanoseconds", "cpu" },
	{ "task-clock", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  "CPU time of the task", "nanoseconds", "cpu" },
	{ "page-faults", "faults", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	  "page faults", "count", "page-faults" },
	{ "minor-faults", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	  "page faults served without I/O", "count", "minor-faults" },
	{ "major-faults", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	  "page faults that needed I/O", "count", "major-faults" },
	{ "context-switches", "cs", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context switches", "count", "context-switches" },
	{ "cpu-migrations", "migrations", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  "moves between CPUs", "count", "cpu-migrations" },
	{ "alignment-faults", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	  "alignment faults", "count", "alignment-faults" },
	{ "emulation-faults", "", EVENT_SOFTWARE, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	  "emulation faults", "count", "emulation-faults" },
	{ "cycles", "cpu-cycles", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
	  "CPU cycles", "count", "cycles" },
	{ "instructions", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  "retired instructions", "count", "instructions" },
	{ "cache-references", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	  "last-level cache accesses", "count", "cache-references" },
	{ "cache-misses", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	  "last-level cache misses", "count", "cache-misses" },
	{ "branch-instructions", "branches", EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "retired branches", "count", "branch-instructions" },
	{ "branch-misses", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	  "mispredicted branches", "count", "branch-misses" },
	{ "bus-cycles", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES,
	  "bus cycles", "count", "bus-cycles" },
	{ "stalled-cycles-frontend", "idle-cycles-frontend", EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "cycles stalled in the front end", "count",
	  "stalled-cycles-frontend" },
	{ "stalled-cycles-backend", "idle-cycles-backend", EVENT_HARDWARE, PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, "cycles stalled in the back end", "count",
	  "stalled-cycles-backend" },
	{ "ref-cycles", "", EVENT_HARDWARE, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	  "reference cycles (not scaled by frequency)", "count", "ref-cycles" },
};

const struct event_desc *events_table(size_t *n)
{
	*n = GP_ARRAY_SIZE(table);
	return table;
}

static int alias_match(const char *aliases, const char *name, size_t len)
{
	const char *p = aliases;

	while (*p) {
		size_t l = strcspn(p, " ");

		if (l == len && !strncmp(p, name, len))
			return 1;
		p += l;
		while (*p == ' ')
			p++;
	}
	return 0;
}

int events_parse(const char *name, struct event_spec *out)
{
	size_t len = strcspn(name, ":"), i;

	memset(out, 0, sizeof(*out));
	if (len == 0 || len >= sizeof(out->name))
		return -EINVAL;
	/* perf's modifiers (:u :k :p ...) are accepted for familiarity; gotop-perf
	 * always samples user space and adds the kernel when permitted. */
	if (name[len] == ':' && strspn(name + len + 1, "ukhpPGH") != strlen(name + len + 1))
		return -EINVAL;
	for (i = 0; i < GP_ARRAY_SIZE(table); i++) {
		if ((strlen(table[i].name) == len && !strncmp(table[i].name, name, len)) ||
		    alias_match(table[i].aliases, name, len)) {
			out->desc = &table[i];
			out->type = table[i].type;
			out->config = table[i].config;
			snprintf(out->name, sizeof(out->name), "%s", table[i].name);
			return 0;
		}
	}
	/* Raw PMU event: rNNNN, hex, as in perf list "rNNN [Raw hardware event descriptor]". */
	if (name[0] == 'r' && len > 1 && len <= 17 &&
	    strspn(name + 1, "0123456789abcdefABCDEF") == len - 1) {
		char hex[17];

		memcpy(hex, name + 1, len - 1);
		hex[len - 1] = 0;
		out->type = PERF_TYPE_RAW;
		out->config = strtoull(hex, NULL, 16);
		snprintf(out->name, sizeof(out->name), "r%llx", (unsigned long long)out->config);
		return 0;
	}
	return -EINVAL;
}

void events_value_type(const struct event_spec *ev, const char **type, const char **unit)
{
	if (ev->desc) {
		*type = ev->desc->value_type;
		*unit = ev->desc->unit;
	} else {
		*type = ev->name;
		*unit = "count";
	}
}

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
				unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group, flags);
}

int events_paranoid(void)
{
	char *s = util_read_file("/proc/sys/kernel/perf_event_paranoid", 64, NULL);
	int v = 2;

	if (s) {
		v = atoi(s);
		free(s);
	}
	return v;
}

static int have_cap(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) != 0)
		return 0;
	return (data[cap / 32].effective >> (cap % 32)) & 1;
}

#ifndef CAP_PERFMON
#define CAP_PERFMON 38 /* linux include/uapi/linux/capability.h, since 5.8 */
#endif

int events_have_perfmon(void)
{
	return have_cap(CAP_PERFMON) || have_cap(CAP_SYS_ADMIN);
}

int events_kernel_allowed(char *why, size_t whylen)
{
	int paranoid = events_paranoid();

	/* linux kernel/events/core.c perf_allow_kernel(): kernel sampling needs
	 * paranoid <= 1 or CAP_PERFMON (CAP_SYS_ADMIN before 5.8). */
	if (paranoid <= 1 || events_have_perfmon())
		return 1;
	snprintf(why, whylen,
		 "kernel callchains off: kernel.perf_event_paranoid=%d and no CAP_PERFMON "
		 "(run as root, grant CAP_PERFMON, or set the sysctl to 1)", paranoid);
	return 0;
}

int events_probe(const struct event_spec *ev, int exclude_kernel, char *why, size_t whylen)
{
	struct perf_event_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = ev->type;
	attr.config = ev->config;
	attr.disabled = 1;
	attr.exclude_kernel = exclude_kernel ? 1 : 0;
	attr.exclude_hv = 1;
	fd = sys_perf_event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		events_explain_error(ev, e, 0, why, whylen);
		return -e;
	}
	close((int)fd);
	if (why && whylen)
		why[0] = 0;
	return 0;
}

void events_explain_error(const struct event_spec *ev, int err, pid_t pid, char *why, size_t whylen)
{
	int paranoid = events_paranoid();
	int hw = ev->type == PERF_TYPE_HARDWARE || ev->type == PERF_TYPE_RAW ||
		 ev->type == PERF_TYPE_HW_CACHE;

	if (!why || !whylen)
		return;
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (hw)
			snprintf(why, whylen,
				 "%s: not supported on this machine: no hardware PMU counts it "
				 "(perf_event_open: %s; virtual machines often have none)",
				 ev->name, strerror(err));
		else
			snprintf(why, whylen, "%s: not supported by this kernel (perf_event_open: %s)",
				 ev->name, strerror(err));
		break;
	case EINVAL:
		snprintf(why, whylen, "%s: the kernel rejected the event settings (EINVAL)%s", ev->name,
			 ev->type == PERF_TYPE_RAW ? ": check the raw event code" : "");
		break;
	case EACCES:
	case EPERM:
		if (paranoid >= 3 && !events_have_perfmon())
			snprintf(why, whylen,
				 "%s: permission denied: kernel.perf_event_paranoid=%d forbids perf_event_open "
				 "for unprivileged users (set it to 2 or lower, or grant CAP_PERFMON)",
				 ev->name, paranoid);
		else if (pid > 0)
			snprintf(why, whylen,
				 "%s: permission denied for PID %d: profiling another user's process needs "
				 "root or CAP_PERFMON and CAP_SYS_PTRACE (kernel.perf_event_paranoid=%d)",
				 ev->name, (int)pid, paranoid);
		else
			snprintf(why, whylen,
				 "%s: permission denied (kernel.perf_event_paranoid=%d; needs CAP_PERFMON "
				 "or a lower sysctl value)",
				 ev->name, paranoid);
		break;
	case ESRCH:
		snprintf(why, whylen, "no process or thread with id %d", (int)pid);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(why, whylen, "%s: out of file descriptors (raise ulimit -n)", ev->name);
		break;
	case EBUSY:
		snprintf(why, whylen, "%s: the PMU is busy (another exclusive user)", ev->name);
		break;
	default:
		snprintf(why, whylen, "%s: perf_event_open failed: %s", ev->name, strerror(err));
		break;
	}
}
