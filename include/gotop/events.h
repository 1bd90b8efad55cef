/* events.h: perf event names (software, hardware, raw), parsing, and whether this machine can count them. */
#ifndef GOTOP_EVENTS_H
#define GOTOP_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* How an event is named: perf's fixed names (software, hardware, generic cache), a raw
 * code, a PMU's sysfs form or named event, a vendor name encoded by libpfm4, a tracepoint. */
enum event_kind {
	EVENT_SOFTWARE,
	EVENT_HARDWARE,
	EVENT_RAW,
	EVENT_CACHE,
	EVENT_PMU,
	EVENT_VENDOR,
	EVENT_TRACEPOINT,
};

struct event_desc {
	const char *name;    /* perf's name, e.g. "cache-misses" */
	const char *aliases; /* space separated other perf names, or "" */
	enum event_kind kind;
	uint32_t type;       /* perf_event_attr.type */
	uint64_t config;
	const char *help;
	/* pprof: the value an event's period counts in: "nanoseconds" (cpu-clock,
	 * task-clock) or "count", and the type name for the second sample value. */
	const char *unit;
	const char *value_type;
};

/* Room for an event's name with its modifiers ("syscalls:sys_enter_rt_sigprocmask:u"). */
#define EVENT_NAME_MAX 64

/* A group's events at most: the leader and two members. A pprof sample holds four values
 * (PROF_MAX_VALUES): samples, the leader's, and one per member. */
#define EVENT_GROUP_MAX 3

/* A member of a group: the fields of struct event_spec that describe one event. */
struct event_member {
	const struct event_desc *desc;
	enum event_kind kind;
	uint32_t type;
	uint64_t config, config1, config2;
	uint8_t exclude_user, exclude_kernel, exclude_hv, exclude_host, exclude_guest;
	uint8_t precise_ip;
	uint8_t modified;
	char name[EVENT_NAME_MAX];
};

/* A parsed event: what perf_event_attr needs, and the name it is shown and saved under. */
struct event_spec {
	const struct event_desc *desc; /* the table row, or NULL for the other kinds */
	enum event_kind kind;
	uint32_t type;
	uint64_t config, config1, config2;
	/* perf's modifiers (linux tools/perf/util/parse-events.c, the event modifier):
	 * :u :k :h set the exclude bits of the levels not named, :G :H those of host or
	 * guest, each :p raises precise_ip (at most 3). Without :u/:k/:h (modified 0) the
	 * sampler decides about the kernel (permission, events_kernel_allowed). */
	uint8_t exclude_user, exclude_kernel, exclude_hv, exclude_host, exclude_guest;
	uint8_t precise_ip;
	uint8_t modified;
	char name[EVENT_NAME_MAX]; /* canonical: the table name, "rNNNN", or as written;
				    * with the modifiers as written ("cpu-clock:u"); a group
				    * "{leader,member,...}" */
	/* A group (perf's "{a,b,c}"): the fields above are the leader's. The events are
	 * scheduled together, and as in perf each one samples on its own, its samples with
	 * their own stacks. With sample_read (perf's "{a,b,c}:S") only the leader samples
	 * and the members are read at each of its samples (PERF_SAMPLE_READ). */
	uint8_t nmembers;
	uint8_t sample_read;
	char leader[EVENT_NAME_MAX];   /* a group's leader's own name */
	struct event_member members[EVENT_GROUP_MAX - 1];
};

/* The table of known events. Borrowed, static. */
const struct event_desc *events_table(size_t *n);

/* Parses an event as perf users write it (perf-list(1), linux
 * tools/perf/util/parse-events.c), with optional modifiers :u :k :h :p :pp :ppp :G :H:
 * - a table name or alias (cpu-clock, cycles, cs, ...), a raw "rNNNN" (hex);
 * - a generic cache event, CACHE-OP[-RESULT] as in perf (L1-dcache-load-misses,
 *   LLC-loads, dTLB-load-misses, branch-load-misses): PERF_TYPE_HW_CACHE;
 * - a PMU's sysfs form "pmu/term=value,.../" with the terms of the PMU's format files
 *   (and config, config1, config2, and the PMU's named events), or "pmu/name/";
 * - a tracepoint "subsystem:event" found in tracefs (PERF_TYPE_TRACEPOINT);
 * - a named event of a sysfs PMU ("tsc" of msr), or a vendor name libpfm4 encodes for
 *   this machine's PMU (INST_RETIRED:ANY_P; LIBPFM_FORCE_PMU selects another model).
 * 0; -EINVAL for a bad syntax or modifier, -ENOENT for a name nothing knows, -ENODEV
 * when what would know it is missing (no tracefs, no PMU); why (may be NULL) gets one
 * line saying which. */
int events_parse_why(const char *name, struct event_spec *out, char *why, size_t whylen);
/* How a name is decided: a PMU form by its slashes; perf's fixed names, raw codes and
 * cache events; then a name with a ':' is a tracepoint when tracefs has one by that name,
 * else a vendor name libpfm4 encodes for this machine's PMU; a bare name is a sysfs PMU's
 * named event, else a vendor name. When nothing has it, why says what was looked at and
 * what is missing: tracefs not mounted, no hardware PMU, or the PMUs libpfm4 knows the
 * name for.
 * A group "{a,b,c}" (perf's syntax, modifiers after '}' apply to each, and ":S" makes it
 * sample_read) parses each event as above; a group within a group, more than
 * EVENT_GROUP_MAX events, one event twice or ":S" on one event is -EINVAL. */
/* events_parse_why without the reason. */
int events_parse(const char *name, struct event_spec *out);

/* Sets type, config, config1, config2, the exclude bits and precise_ip of `a` from
 * the event; the caller sets the rest (and excludes the kernel where not permitted). */
struct perf_event_attr;
void events_attr(const struct event_spec *ev, struct perf_event_attr *a);
/* The same for a group's member i (0 .. nmembers-1). */
void events_member_attr(const struct event_member *m, struct perf_event_attr *a);
/* A group's sampling, as perf sets it up (linux tools/perf/util/evsel.c evsel__config,
 * tools/perf/util/record.c evsel__config_leader_sampling). events_group_attr adds to the
 * leader's attr `a` (sampling, side records and the rest set) what the group needs:
 * sample_read: PERF_SAMPLE_READ with PERF_FORMAT_GROUP; otherwise
 * PERF_SAMPLE_IDENTIFIER, so that each sample says which event took it.
 * events_group_member_attr sets member k's attr `m` from the leader's finished attr: the
 * member's event and modifiers, counted while the leader is (disabled 0, no
 * enable_on_exec), no side records (mmap, comm, task: the leader's cover the thread);
 * sampling at the leader's rate and with its sample_type, or, with sample_read, not
 * sampling at all (sample_period, sample_freq and freq 0). The caller then applies its
 * own policy (kernel exclusion) to each. Nothing for an event that is not a group. */
void events_group_attr(const struct event_spec *ev, struct perf_event_attr *a);
void events_group_member_attr(const struct event_spec *ev, size_t k,
			      const struct perf_event_attr *leader, struct perf_event_attr *m);

/* Whether an event's canonical name (struct event_spec.name) is a group read at its
 * leader's samples ("{a,b}:S"): the name alone, nothing looked up. */
int events_name_sample_read(const char *name);

/* Where the sysfs PMUs (default /sys/bus/event_source/devices) and tracefs (default
 * /sys/kernel/tracing, then /sys/kernel/debug/tracing) are: for tests, which build
 * fake ones (a tracefs root without an events directory is tracefs not mounted). NULL
 * restores the default. Not thread-safe: call before parsing. */
void events_set_roots(const char *sysfs_pmus, const char *tracefs);

/* perf's generic cache events that perf accepts (tools/perf/util/parse-events.c,
 * evsel__is_cache_op_valid), in perf list's order: the i-th name into buf. 0, or
 * -ENOENT past the last. */
int events_cache_name(size_t i, char *buf, size_t len);

/* Calls fn for every tracepoint "subsystem:event" whose name contains filter (NULL or
 * "": all), sorted, until fn (NULL: none, to count) returns nonzero. The count, or -ENODEV
 * when tracefs is not mounted (or not readable). */
int events_tracepoints(const char *filter, int (*fn)(void *arg, const char *name), void *arg);

/* Vendor events of this machine's hardware PMUs as libpfm4 names them: fn gets the PMU,
 * the event ("INST_RETIRED:ANY_P", one call per unit mask, or the bare event when it has
 * none) and its description, until it returns nonzero. The count, or -ENODEV with why
 * when libpfm4 finds no hardware PMU here (most virtual machines), -EIO when libpfm4
 * fails to start. */
int events_pmu_list(int (*fn)(void *arg, const char *pmu, const char *event, const char *desc),
		    void *arg, char *why, size_t whylen);

/* pprof value type and unit for samples of this event, e.g. ("cpu", "nanoseconds")
 * for cpu-clock, ("cycles", "count") for cycles. Borrowed strings. */
void events_value_type(const struct event_spec *ev, const char **type, const char **unit);
/* The pprof value type of a group's member: its name ("page-faults") and unit. */
void events_member_value_type(const struct event_member *m, const char **type, const char **unit);

/* Tries to open the event counting the calling thread (no sampling) to learn
 * whether this machine can count it now. 0 when it can, else -errno with a one
 * line reason in why (e.g. "not supported: no hardware PMU (ENOENT)"). */
int events_probe(const struct event_spec *ev, int exclude_kernel, char *why, size_t whylen);

/* A one-line reason for a perf_event_open failure of `ev` on target pid, naming
 * the sysctl or capability involved when permissions are the cause. */
void events_explain_error(const struct event_spec *ev, int err, pid_t pid, char *why, size_t whylen);

/* Kernel sampling policy: whether kernel callchains can be collected by this
 * process; when not, why says why (perf_event_paranoid value, missing capability). */
int events_kernel_allowed(char *why, size_t whylen);

/* True when the process has CAP_PERFMON or CAP_SYS_ADMIN (effective). */
int events_have_perfmon(void);

/* /proc/sys/kernel/perf_event_paranoid, or 2 (the default) if unreadable. */
int events_paranoid(void);

#endif
