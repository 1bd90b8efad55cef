/* events.h: perf event names (software, hardware, raw), parsing, and whether this machine can count them. */
#ifndef GOTOP_EVENTS_H
#define GOTOP_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum event_kind { EVENT_SOFTWARE, EVENT_HARDWARE, EVENT_RAW };

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

/* A parsed event: a table entry, or a raw event (desc NULL for raw). */
struct event_spec {
	const struct event_desc *desc;
	uint32_t type;
	uint64_t config;
	char name[32]; /* canonical name: the table name, or "rNNNN" */
};

/* The table of known events. Borrowed, static. */
const struct event_desc *events_table(size_t *n);

/* Parses a perf event name: a table name or alias (with an optional ":u"/":k"
 * modifier ignored), or a raw "rNNNN" (hex). 0, or -EINVAL for an unknown name. */
int events_parse(const char *name, struct event_spec *out);

/* pprof value type and unit for samples of this event, e.g. ("cpu", "nanoseconds")
 * for cpu-clock, ("cycles", "count") for cycles. Borrowed strings. */
void events_value_type(const struct event_spec *ev, const char **type, const char **unit);

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
