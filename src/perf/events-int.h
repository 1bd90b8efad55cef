/* events-int.h: inside the events module: the event sources that live outside the
 * fixed tables (sysfs PMUs, tracefs, libpfm4), shared by events.c and evsrc.c. */
#ifndef GOTOP_EVENTS_INT_H
#define GOTOP_EVENTS_INT_H

#include "gotop/events.h"

/* Each fills out's kind, type, config(s) and name from `base` (the event without its
 * modifiers): 0, or -errno with one line in why (see events_parse_why).
 * evsrc_pmu_form: "pmu/terms/". evsrc_named: any other name perf's tables do not have: a
 * tracepoint, a sysfs PMU's named event or a vendor name, as events_parse_why says. */
int evsrc_pmu_form(const char *base, struct event_spec *out, char *why, size_t whylen);
int evsrc_named(const char *base, struct event_spec *out, char *why, size_t whylen);

#endif
