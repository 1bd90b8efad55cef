/* evsrc.c: events named outside the fixed tables: a PMU's sysfs form and named events,
 * tracepoints in tracefs, vendor names through libpfm4; and the lists of the last two. */
#include "config.h"
#include "events-int.h"
#include "gotop/util.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *sysfs_root = "/sys/bus/event_source/devices";
static const char *tracefs_root; /* NULL: the default places */

void events_set_roots(const char *sysfs_pmus, const char *tracefs)
{
	sysfs_root = sysfs_pmus ? sysfs_pmus : "/sys/bus/event_source/devices";
	tracefs_root = tracefs;
}

static void say(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

/* A path component taken from the user's event name: letters, digits, '_', '-', '.',
 * not starting with '.', so that it names an entry of the directory and nothing else. */
static int safe_word(const char *s, size_t n)
{
	size_t i;

	if (n == 0 || n > 255 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-' || c == '.'))
			return 0;
	}
	return 1;
}

/* A small sysfs file's first line, or NULL with errno. Caller frees. */
static char *read_line(const char *path)
{
	char *s = util_read_file(path, 4096, NULL);

	if (s)
		s[strcspn(s, "\n")] = 0;
	return s;
}

/* --- sysfs PMUs (linux Documentation/ABI/testing/sysfs-bus-event_source-devices-format
 * and -events; tools/perf/util/pmu.c) --- */

/* A format file: "config:0-7", "config1:0-15", "config:0-7,21": the attr field and the
 * mask of its bits. 0 or -EINVAL. */
static int parse_format(const char *s, int *field, uint64_t *mask)
{
	const char *p;

	if (!strncmp(s, "config2:", 8)) {
		*field = 2;
		p = s + 8;
	} else if (!strncmp(s, "config1:", 8)) {
		*field = 1;
		p = s + 8;
	} else if (!strncmp(s, "config:", 7)) {
		*field = 0;
		p = s + 7;
	} else {
		return -EINVAL;
	}
	*mask = 0;
	for (;;) {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p || lo > 63)
			return -EINVAL;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi > 63 || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (; lo <= hi; lo++)
			*mask |= 1ULL << lo;
		if (*p != ',')
			break;
		p++;
	}
	return *p ? -EINVAL : 0;
}

/* Puts value's bits, lowest first, into the set bits of mask, lowest first
 * (tools/perf/util/pmu.c pmu_format_value). -ERANGE when value has more bits. */
static int spread(uint64_t value, uint64_t mask, uint64_t *out)
{
	uint64_t m;
	unsigned k = 0;

	for (m = mask; m; m &= m - 1, k++)
		if ((value >> k) & 1)
			*out |= 1ULL << __builtin_ctzll(m);
	if (k < 64 && (value >> k))
		return -ERANGE;
	return 0;
}

static int apply_terms(const char *pmu, const char *terms, int depth, struct event_spec *out,
		       char *why, size_t whylen);

/* One term of a PMU's form: "key=value", "key" (value 1), or a named event of the PMU. */
static int apply_term(const char *pmu, const char *t, size_t n, int depth, struct event_spec *out,
		      char *why, size_t whylen)
{
	const char *eq = memchr(t, '=', n);
	size_t klen = eq ? (size_t)(eq - t) : n;
	char key[256], val[64], path[4096];
	uint64_t v = 1, mask, *dst;
	int field, r;
	char *s, *end;

	if (!safe_word(t, klen)) {
		say(why, whylen, "%s: bad term '%.*s'", pmu, (int)GP_MIN(n, (size_t)64), t);
		return -EINVAL;
	}
	memcpy(key, t, klen);
	key[klen] = 0;
	if (eq) {
		size_t vlen = n - klen - 1;

		if (vlen == 0 || vlen >= sizeof(val)) {
			say(why, whylen, "%s: term '%s' needs a value", pmu, key);
			return -EINVAL;
		}
		memcpy(val, eq + 1, vlen);
		val[vlen] = 0;
		errno = 0;
		v = strtoull(val, &end, 0);
		if (*end || errno) {
			say(why, whylen, "%s: term '%s' has a bad value '%s' (a number, e.g. 0x3c)",
			    pmu, key, val);
			return -EINVAL;
		}
	}
	if (!strcmp(key, "config") || !strcmp(key, "config1") || !strcmp(key, "config2")) {
		dst = key[6] == '1' ? &out->config1 : key[6] == '2' ? &out->config2 : &out->config;
		*dst = v;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/%s/format/%s", sysfs_root, pmu, key);
	s = read_line(path);
	if (s) {
		r = parse_format(s, &field, &mask);
		free(s);
		if (r) {
			say(why, whylen, "%s: cannot read the format of '%s' (%s)", pmu, key, path);
			return -EINVAL;
		}
		dst = field == 1 ? &out->config1 : field == 2 ? &out->config2 : &out->config;
		*dst &= ~mask;
		if (spread(v, mask, dst)) {
			say(why, whylen, "%s: value 0x%llx does not fit term '%s' (%d bits)", pmu,
			    (unsigned long long)v, key, __builtin_popcountll(mask));
			return -ERANGE;
		}
		return 0;
	}
	/* A named event of the PMU: its file holds terms ("event=0x3c,umask=0x00"). */
	if (!eq && depth == 0) {
		snprintf(path, sizeof(path), "%s/%s/events/%s", sysfs_root, pmu, key);
		s = read_line(path);
		if (s) {
			r = apply_terms(pmu, s, depth + 1, out, why, whylen);
			free(s);
			return r;
		}
	}
	say(why, whylen, "PMU %s has no format term or event '%s' (see %s/%s/format and events)",
	    pmu, key, sysfs_root, pmu);
	return -ENOENT;
}

static int apply_terms(const char *pmu, const char *terms, int depth, struct event_spec *out,
		       char *why, size_t whylen)
{
	const char *p = terms;

	while (*p) {
		size_t n = strcspn(p, ",");
		int r;

		/* Terms the kernel leaves to the user ("umask=?") have no value here. */
		if (n && p[n - 1] == '?') {
			say(why, whylen, "%s: event '%s' needs a value the kernel leaves to the user",
			    pmu, terms);
			return -EINVAL;
		}
		if (n && (r = apply_term(pmu, p, n, depth, out, why, whylen)) != 0)
			return r;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
}

static int pmu_type(const char *pmu, uint32_t *type, char *why, size_t whylen)
{
	char path[4096], *s, *end;
	unsigned long v;

	snprintf(path, sizeof(path), "%s/%s/type", sysfs_root, pmu);
	s = read_line(path);
	if (!s) {
		int e = errno;

		if (e == ENOENT)
			say(why, whylen, "no PMU named '%s' on this machine (%s)", pmu, sysfs_root);
		else
			say(why, whylen, "cannot read %s: %s", path, strerror(e));
		return e == ENOENT ? -ENOENT : -e;
	}
	v = strtoul(s, &end, 10);
	free(s);
	if (end == s || v > UINT32_MAX) {
		say(why, whylen, "%s: bad type file", pmu);
		return -EINVAL;
	}
	*type = (uint32_t)v;
	return 0;
}

int evsrc_pmu_form(const char *base, struct event_spec *out, char *why, size_t whylen)
{
	size_t plen = strcspn(base, "/"), len = strlen(base);
	char pmu[256], terms[EVENT_NAME_MAX];
	int r;

	/* pmu/terms/ (perf-list(1), "Raw hardware event descriptor", the sysfs form). */
	if (len < plen + 2 || base[len - 1] != '/' || memchr(base + plen + 1, '/', len - plen - 2)) {
		say(why, whylen, "'%s': a PMU event is written pmu/term=value,.../", base);
		return -EINVAL;
	}
	if (!safe_word(base, plen)) {
		say(why, whylen, "'%s': bad PMU name", base);
		return -EINVAL;
	}
	memcpy(pmu, base, plen);
	pmu[plen] = 0;
	memcpy(terms, base + plen + 1, len - plen - 2);
	terms[len - plen - 2] = 0;
	if ((r = pmu_type(pmu, &out->type, why, whylen)) != 0)
		return r;
	if ((r = apply_terms(pmu, terms, 0, out, why, whylen)) != 0)
		return r;
	out->kind = EVENT_PMU;
	snprintf(out->name, sizeof(out->name), "%s", base);
	return 0;
}

static int sysfs_named(const char *base, struct event_spec *out, char *why, size_t whylen)
{
	DIR *d;
	struct dirent *e;
	int r = -ENOENT;

	if (!safe_word(base, strlen(base)) || strstr(base, ".scale") || strstr(base, ".unit"))
		return -ENOENT;
	d = opendir(sysfs_root);
	if (!d)
		return -ENOENT;
	/* perf looks a bare name up in every PMU's events (tools/perf/util/pmus.c). */
	while ((e = readdir(d)) != NULL) {
		char path[4096], *s;

		if (e->d_name[0] == '.' || !safe_word(e->d_name, strlen(e->d_name)))
			continue;
		snprintf(path, sizeof(path), "%s/%s/events/%s", sysfs_root, e->d_name, base);
		s = read_line(path);
		if (!s)
			continue;
		r = pmu_type(e->d_name, &out->type, why, whylen);
		if (!r)
			r = apply_terms(e->d_name, s, 1, out, why, whylen);
		free(s);
		if (!r) {
			out->kind = EVENT_PMU;
			snprintf(out->name, sizeof(out->name), "%s/%s/", e->d_name, base);
		}
		break;
	}
	closedir(d);
	return r;
}

/* --- tracefs (linux Documentation/trace/events.rst: events/SUBSYSTEM/EVENT/id is the
 * perf_event_attr.config of PERF_TYPE_TRACEPOINT) --- */

/* Where tracefs is mounted (its events directory is there), or NULL. */
static const char *tracefs_dir(void)
{
	static const char *const places[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	const char *one[1];
	const char *const *at = places;
	size_t i, n = GP_ARRAY_SIZE(places);
	char path[4096];

	if (tracefs_root) {
		one[0] = tracefs_root;
		at = one;
		n = 1;
	}
	for (i = 0; i < n; i++) {
		DIR *d;

		snprintf(path, sizeof(path), "%s/events", at[i]);
		d = opendir(path);
		if (d) {
			closedir(d);
			return at[i];
		}
	}
	return NULL;
}

#define TRACEFS_HINT "tracefs is not mounted (as root: mount -t tracefs nodev /sys/kernel/tracing)"

/* Whether base has a tracepoint's shape, "subsystem:event" of path components. */
static int tracepoint_shaped(const char *base)
{
	size_t slen = strcspn(base, ":");

	return base[slen] == ':' && safe_word(base, slen) &&
	       safe_word(base + slen + 1, strlen(base + slen + 1));
}

static int tracepoint(const char *base, struct event_spec *out, char *why, size_t whylen)
{
	size_t slen = strcspn(base, ":");
	const char *ev = base + slen + 1, *dir;
	char path[4096], *s, *end;
	unsigned long long id;

	if (!tracepoint_shaped(base))
		return -ENOENT; /* not a tracepoint name: a vendor one, perhaps */
	dir = tracefs_dir();
	if (!dir) {
		say(why, whylen, "%s: %s", base, TRACEFS_HINT);
		return -ENODEV;
	}
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", dir, (int)slen, base, ev);
	s = read_line(path);
	if (!s) {
		int e = errno;

		if (e == ENOENT)
			return -ENOENT;
		say(why, whylen, "%s: cannot read %s: %s%s", base, path, strerror(e),
		    e == EACCES ? " (tracefs needs root or its group)" : "");
		return -e;
	}
	id = strtoull(s, &end, 10);
	if (end == s || *end) {
		free(s);
		say(why, whylen, "%s: bad id in %s", base, path);
		return -EINVAL;
	}
	free(s);
	out->kind = EVENT_TRACEPOINT;
	out->type = PERF_TYPE_TRACEPOINT;
	out->config = id;
	snprintf(out->name, sizeof(out->name), "%s", base);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int events_tracepoints(const char *filter, int (*fn)(void *arg, const char *name), void *arg)
{
	const char *dir = tracefs_dir();
	char path[4096];
	char **names = NULL;
	size_t n = 0, cap = 0, i;
	DIR *d;
	struct dirent *e;
	int count = 0, stop = 0;

	if (!dir)
		return -ENODEV;
	snprintf(path, sizeof(path), "%s/events", dir);
	d = opendir(path);
	if (!d)
		return -ENODEV;
	while ((e = readdir(d)) != NULL) {
		DIR *sd;
		struct dirent *se;

		if (e->d_name[0] == '.' || !safe_word(e->d_name, strlen(e->d_name)))
			continue;
		snprintf(path, sizeof(path), "%s/events/%s", dir, e->d_name);
		sd = opendir(path);
		if (!sd)
			continue; /* a file: enable, header_page, ... */
		while ((se = readdir(sd)) != NULL) {
			char *name;

			if (se->d_name[0] == '.' || !safe_word(se->d_name, strlen(se->d_name)) ||
			    !strcmp(se->d_name, "enable") || !strcmp(se->d_name, "filter"))
				continue;
			if (se->d_type != DT_DIR && se->d_type != DT_UNKNOWN)
				continue;
			name = xasprintf("%s:%s", e->d_name, se->d_name);
			if (filter && *filter && !strstr(name, filter)) {
				free(name);
				continue;
			}
			xgrow((void **)&names, &cap, n + 1, sizeof(*names));
			names[n++] = name;
		}
		closedir(sd);
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		if (!stop) {
			count++;
			stop = fn ? fn(arg, names[i]) : 0;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

/* --- libpfm4 (perfmon/pfmlib.h, libpfm4's docs: pfm_get_os_event_encoding(3),
 * pfm_get_pmu_info(3); LIBPFM_FORCE_PMU, read at pfm_initialize, selects a model) --- */

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_init(void)
{
	pfm_status = pfm_initialize();
}

/* Whether libpfm4 found a hardware (core or uncore) PMU: its generic "perf" PMUs are
 * always there and are not one. */
static int pfm_have_hw(void)
{
	pfm_pmu_info_t pi;
	int i;

	pfm_for_all_pmus(i) {
		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(i, &pi) == PFM_SUCCESS && pi.is_present &&
		    pi.type != PFM_PMU_TYPE_OS_GENERIC)
			return 1;
	}
	return 0;
}

#define NO_PMU_HINT \
	"libpfm4 finds no hardware PMU on this machine (virtual machines often have none; " \
	"LIBPFM_FORCE_PMU=MODEL encodes for a CPU model)"

/* libpfm4's encoding of base for this machine's PMU (or the one LIBPFM_FORCE_PMU names):
 * 0; -ENOENT when none of them has the event; -EINVAL with why for libpfm4's other
 * refusals (a unit mask the event does not have); -EIO with why when libpfm4 did not
 * start. */
static int vendor_encode(const char *base, struct event_spec *out, char *why, size_t whylen)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	int r;

	pthread_once(&pfm_once, pfm_init);
	if (pfm_status != PFM_SUCCESS) {
		say(why, whylen, "unknown event '%s' (and libpfm4 did not start: %s)", base,
		    pfm_strerror(pfm_status));
		return -EIO;
	}
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	/* User and kernel levels: the sampler excludes the kernel where not permitted. */
	r = pfm_get_os_event_encoding(base, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (r == PFM_ERR_NOTFOUND)
		return -ENOENT;
	if (r != PFM_SUCCESS) {
		say(why, whylen, "%s: libpfm4: %s", base, pfm_strerror(r));
		return -EINVAL;
	}
	out->kind = EVENT_VENDOR;
	out->type = a.type;
	out->config = a.config;
	out->config1 = a.config1;
	out->config2 = a.config2;
	snprintf(out->name, sizeof(out->name), "%s", base);
	return 0;
}

/* The hardware PMUs whose tables have base's event (the name before its first ':'),
 * present on this machine or not (libpfm4 lists the events of every model it supports):
 * the first few names into buf ("skl, icl and 12 more"). Their count. Only for the reason
 * of a failure: it walks every event of every model. */
static int vendor_known_for(const char *base, char *buf, size_t len)
{
	size_t elen = strcspn(base, ":"), at = 0;
	pfm_pmu_info_t pi;
	int i, count = 0;

	buf[0] = 0;
	pfm_for_all_pmus(i) {
		int ev;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(i, &pi) != PFM_SUCCESS || pi.type == PFM_PMU_TYPE_OS_GENERIC)
			continue;
		for (ev = pi.first_event; ev != -1; ev = pfm_get_event_next(ev)) {
			pfm_event_info_t ei;

			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm_get_event_info(ev, PFM_OS_NONE, &ei) != PFM_SUCCESS || !ei.name ||
			    strlen(ei.name) != elen || strncasecmp(ei.name, base, elen))
				continue;
			if (count++ < 3 && at + 1 < len)
				at += (size_t)snprintf(buf + at, len - at, "%s%s",
						       count > 1 ? ", " : "", pi.name);
			break;
		}
	}
	if (count > 3 && at + 1 < len)
		snprintf(buf + at, len - at, " and %d more", count - 3);
	return count;
}

int evsrc_named(const char *base, struct event_spec *out, char *why, size_t whylen)
{
	int colon = strchr(base, ':') != NULL, tp = -ENOENT, r, known, hw;
	char pmus[96];
	const char *tp_part;

	/* What exists decides, not the ':' alone: "sched:sched_switch" and the vendor name
	 * "INST_RETIRED:ANY_P" look alike. */
	if (colon) {
		tp = tracepoint(base, out, why, whylen);
		if (tp != -ENOENT && tp != -ENODEV)
			return tp; /* found, or tracefs refused the read: its reason */
	} else {
		r = sysfs_named(base, out, why, whylen);
		if (r != -ENOENT)
			return r;
	}
	r = vendor_encode(base, out, why, whylen);
	if (r == 0 && why && whylen)
		why[0] = 0; /* tracefs's absence did not matter */
	if (r != -ENOENT)
		return r == -EIO ? -ENOENT : r;
	/* Nothing here has it: say what was looked at and what is missing. */
	hw = pfm_have_hw();
	known = vendor_known_for(base, pmus, sizeof(pmus));
	tp_part = !colon || !tracepoint_shaped(base) ? ""
		  : tp == -ENODEV ? "; no tracepoint could be looked up: " TRACEFS_HINT
				  : "; no tracepoint by that name either";
	if (known) {
		if (hw)
			say(why, whylen, "%s: not an event of this machine's PMU (libpfm4 knows it "
			    "for %s; see `gotop-perf list --pmu`)%s", base, pmus, tp_part);
		else
			say(why, whylen, "%s: not an event of this machine's PMU (no hardware PMU "
			    "here; libpfm4 knows it for %s; LIBPFM_FORCE_PMU=MODEL encodes for "
			    "one)%s", base, pmus, tp_part);
		return hw ? -ENOENT : -ENODEV;
	}
	if (tp == -ENODEV) {
		say(why, whylen, "%s: no tracepoint could be looked up: %s; and no PMU's table has "
		    "this name", base, TRACEFS_HINT);
		return -ENODEV;
	}
	say(why, whylen, "unknown event '%s': not a perf name, nor a PMU's event%s (see `gotop-perf "
	    "list`%s)", base, colon && tracepoint_shaped(base) ? " or tracepoint" : "",
	    hw ? ", `list --pmu`" : "");
	return -ENOENT;
}

int events_pmu_list(int (*fn)(void *arg, const char *pmu, const char *event, const char *desc),
		    void *arg, char *why, size_t whylen)
{
	pfm_pmu_info_t pi;
	int i, count = 0, any = 0;

	pthread_once(&pfm_once, pfm_init);
	if (pfm_status != PFM_SUCCESS) {
		say(why, whylen, "libpfm4 did not start: %s", pfm_strerror(pfm_status));
		return -EIO;
	}
	pfm_for_all_pmus(i) {
		int ev;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(i, &pi) != PFM_SUCCESS || !pi.is_present ||
		    pi.type == PFM_PMU_TYPE_OS_GENERIC)
			continue;
		any = 1;
		for (ev = pi.first_event; ev != -1; ev = pfm_get_event_next(ev)) {
			pfm_event_info_t ei;
			int k, umasks = 0;
			char name[256];

			memset(&ei, 0, sizeof(ei));
			ei.size = sizeof(ei);
			if (pfm_get_event_info(ev, PFM_OS_NONE, &ei) != PFM_SUCCESS)
				continue;
			for (k = 0; k < ei.nattrs; k++) {
				pfm_event_attr_info_t ai;

				memset(&ai, 0, sizeof(ai));
				ai.size = sizeof(ai);
				if (pfm_get_event_attr_info(ev, k, PFM_OS_NONE, &ai) != PFM_SUCCESS ||
				    ai.type != PFM_ATTR_UMASK)
					continue;
				umasks++;
				snprintf(name, sizeof(name), "%s:%s", ei.name, ai.name);
				count++;
				if (fn(arg, pi.name, name, ai.desc ? ai.desc : ""))
					return count;
			}
			if (!umasks) {
				count++;
				if (fn(arg, pi.name, ei.name, ei.desc ? ei.desc : ""))
					return count;
			}
		}
	}
	if (!any) {
		say(why, whylen, "%s", NO_PMU_HINT);
		return -ENODEV;
	}
	return count;
}
