/* events.c: the event table (perf's names), parsing, probing, and permission diagnostics. */
#include "config.h"
#include "gotop/events.h"
#include "gotop/util.h"
#include "events-int.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

/* perf's generic cache events (linux tools/perf/util/parse-events.c: evsel__hw_cache,
 * evsel__hw_cache_op, evsel__hw_cache_result; tools/perf/util/evsel.c
 * evsel__is_cache_op_valid): config = cache | op << 8 | result << 16
 * (include/uapi/linux/perf_event.h, PERF_TYPE_HW_CACHE). The first name of each row
 * is perf list's; the others are the aliases perf accepts. */
static const char *const cache_names[PERF_COUNT_HW_CACHE_MAX][5] = {
	[PERF_COUNT_HW_CACHE_L1D] = { "L1-dcache", "l1-d", "l1d", "L1-data", NULL },
	[PERF_COUNT_HW_CACHE_L1I] = { "L1-icache", "l1-i", "l1i", "L1-instruction", NULL },
	[PERF_COUNT_HW_CACHE_LL] = { "LLC", "L2", NULL },
	[PERF_COUNT_HW_CACHE_DTLB] = { "dTLB", "d-tlb", "Data-TLB", NULL },
	[PERF_COUNT_HW_CACHE_ITLB] = { "iTLB", "i-tlb", "Instruction-TLB", NULL },
	[PERF_COUNT_HW_CACHE_BPU] = { "branch", "branches", "bpu", "btb", "bpc" },
	[PERF_COUNT_HW_CACHE_NODE] = { "node", NULL },
};
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][5] = {
	[PERF_COUNT_HW_CACHE_OP_READ] = { "load", "loads", "read", NULL },
	[PERF_COUNT_HW_CACHE_OP_WRITE] = { "store", "stores", "write", NULL },
	[PERF_COUNT_HW_CACHE_OP_PREFETCH] = { "prefetch", "prefetches", "speculative-read",
					      "speculative-load", NULL },
};
static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][5] = {
	[PERF_COUNT_HW_CACHE_RESULT_ACCESS] = { "refs", "Reference", "ops", "access", NULL },
	[PERF_COUNT_HW_CACHE_RESULT_MISS] = { "misses", "miss", NULL },
};

/* Which ops each cache has (evsel__is_cache_op_valid's table, bits by op). */
#define COP(x) (1u << PERF_COUNT_HW_CACHE_OP_##x)
static const unsigned cache_valid_ops[PERF_COUNT_HW_CACHE_MAX] = {
	[PERF_COUNT_HW_CACHE_L1D] = COP(READ) | COP(WRITE) | COP(PREFETCH),
	[PERF_COUNT_HW_CACHE_L1I] = COP(READ) | COP(PREFETCH),
	[PERF_COUNT_HW_CACHE_LL] = COP(READ) | COP(WRITE) | COP(PREFETCH),
	[PERF_COUNT_HW_CACHE_DTLB] = COP(READ) | COP(WRITE) | COP(PREFETCH),
	[PERF_COUNT_HW_CACHE_ITLB] = COP(READ),
	[PERF_COUNT_HW_CACHE_BPU] = COP(READ),
	[PERF_COUNT_HW_CACHE_NODE] = COP(READ) | COP(WRITE) | COP(PREFETCH),
};

/* Matches one of `names` at the start of s (case-insensitive, as perf's lexer), followed
 * by '-' or the end; the longest wins. The index, with *len its length, or -1. */
static int cache_word(const char *const names[5], const char *s, size_t *len)
{
	size_t best = 0, i;

	for (i = 0; i < 5 && names[i]; i++) {
		size_t l = strlen(names[i]);

		if (l > best && !strncasecmp(s, names[i], l) && (s[l] == '-' || s[l] == 0))
			best = l;
	}
	*len = best;
	return best ? 0 : -1;
}

static int cache_lookup(const char *s, size_t len, uint64_t *config)
{
	char buf[EVENT_NAME_MAX];
	unsigned c, o, r;
	size_t l;
	const char *p;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = 0;
	for (c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++) {
		if (cache_word(cache_names[c], buf, &l))
			continue;
		p = buf + l;
		if (*p++ != '-')
			continue;
		for (o = 0; o < PERF_COUNT_HW_CACHE_OP_MAX; o++) {
			const char *q;

			if (cache_word(cache_ops[o], p, &l))
				continue;
			q = p + l;
			/* perf: a missing result means accesses ("L1-dcache-loads"). */
			r = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
			if (*q == '-') {
				q++;
				for (r = 0; r < PERF_COUNT_HW_CACHE_RESULT_MAX; r++)
					if (!cache_word(cache_results[r], q, &l) && q[l] == 0)
						break;
				if (r == PERF_COUNT_HW_CACHE_RESULT_MAX)
					continue;
			} else if (*q) {
				continue;
			}
			if (!(cache_valid_ops[c] & (1u << o)))
				return -1;
			*config = c | (uint64_t)o << 8 | (uint64_t)r << 16;
			return 0;
		}
	}
	return -1;
}

int events_cache_name(size_t i, char *buf, size_t len)
{
	unsigned c, o, r;

	/* perf list's order: per cache, per valid op, accesses then misses. Its
	 * accesses are printed as "loads", "stores", "prefetches". */
	for (c = 0; c < PERF_COUNT_HW_CACHE_MAX; c++)
		for (o = 0; o < PERF_COUNT_HW_CACHE_OP_MAX; o++) {
			if (!(cache_valid_ops[c] & (1u << o)))
				continue;
			for (r = 0; r < PERF_COUNT_HW_CACHE_RESULT_MAX; r++) {
				if (i--)
					continue;
				if (r == PERF_COUNT_HW_CACHE_RESULT_ACCESS)
					snprintf(buf, len, "%s-%s", cache_names[c][0], cache_ops[o][1]);
				else
					snprintf(buf, len, "%s-%s-%s", cache_names[c][0], cache_ops[o][0],
						 cache_results[r][0]);
				return 0;
			}
		}
	return -ENOENT;
}

/* The modifier letters perf's lexer takes after the last ':' (parse-events.l, modifier_event).
 * gotop-perf honours u k h G H p; the rest perf means for counting or groups. */
#define MOD_CHARS "ukhpGH"

/* Applies a modifier string such as "u", "ppp", "kG" (parse-events.c, the event modifier):
 * the first of u/k/h excludes every level, then each clears its own; the same for G/H. */
static int apply_mods(const char *m, struct event_spec *out, char *why, size_t whylen)
{
	int ukh = 0, gh = 0;
	const char *p;

	for (p = m; *p; p++) {
		switch (*p) {
		case 'u':
		case 'k':
		case 'h':
			if (!ukh)
				out->exclude_user = out->exclude_kernel = out->exclude_hv = 1;
			ukh = 1;
			if (*p == 'u')
				out->exclude_user = 0;
			else if (*p == 'k')
				out->exclude_kernel = 0;
			else
				out->exclude_hv = 0;
			break;
		case 'G':
		case 'H':
			if (!gh)
				out->exclude_host = out->exclude_guest = 1;
			gh = 1;
			if (*p == 'G')
				out->exclude_guest = 0;
			else
				out->exclude_host = 0;
			break;
		case 'p':
			if (out->precise_ip == 3)
				goto bad;
			out->precise_ip++;
			break;
		default:
			goto bad;
		}
	}
	/* perf's 'u' also excludes the guest unless G or H is given; 'k' and 'h' leave it
	 * counted (parse-events.c, the event modifier; perf_guest is off for a process). */
	if (ukh && !gh)
		out->exclude_guest = strchr(m, 'u') != NULL;
	out->modified = (uint8_t)ukh;
	return 0;
bad:
	if (why)
		snprintf(why, whylen,
			 "bad modifier ':%.16s' (perf's modifiers: u k h, p pp ppp, G H)", m);
	return -EINVAL;
}

static int table_lookup(const char *name, size_t len, struct event_spec *out)
{
	size_t i;

	for (i = 0; i < GP_ARRAY_SIZE(table); i++) {
		if ((strlen(table[i].name) == len && !strncmp(table[i].name, name, len)) ||
		    alias_match(table[i].aliases, name, len)) {
			out->desc = &table[i];
			out->kind = table[i].kind;
			out->type = table[i].type;
			out->config = table[i].config;
			snprintf(out->name, sizeof(out->name), "%s", table[i].name);
			return 0;
		}
	}
	/* Raw PMU event: rNNNN, hex, as in perf list "rNNN [Raw hardware event descriptor]". */
	if (name[0] == 'r' && len > 1 && len <= 17 &&
	    strspn(name + 1, "0123456789abcdefABCDEF") >= len - 1) {
		char hex[17];

		memcpy(hex, name + 1, len - 1);
		hex[len - 1] = 0;
		out->kind = EVENT_RAW;
		out->type = PERF_TYPE_RAW;
		out->config = strtoull(hex, NULL, 16);
		snprintf(out->name, sizeof(out->name), "r%llx", (unsigned long long)out->config);
		return 0;
	}
	if (cache_lookup(name, len, &out->config) == 0) {
		out->kind = EVENT_CACHE;
		out->type = PERF_TYPE_HW_CACHE;
		snprintf(out->name, sizeof(out->name), "%.*s", (int)len, name);
		return 0;
	}
	return -ENOENT;
}

static int parse_group(const char *name, struct event_spec *out, char *why, size_t whylen);

int events_parse_why(const char *name, struct event_spec *out, char *why, size_t whylen)
{
	size_t len = strlen(name), blen;
	const char *colon = strrchr(name, ':'), *mods = "";
	char base[EVENT_NAME_MAX];
	int r, pmu_mods = 0;

	memset(out, 0, sizeof(*out));
	/* perf's defaults without modifiers: no hypervisor, no guest. */
	out->exclude_hv = 1;
	out->exclude_guest = 1;
	if (why && whylen)
		why[0] = 0;
	if (len == 0 || len >= EVENT_NAME_MAX) {
		if (why)
			snprintf(why, whylen, "an event name has 1 to %d characters", EVENT_NAME_MAX - 1);
		return -EINVAL;
	}
	if (name[0] == '{')
		return parse_group(name, out, why, whylen);
	/* The modifiers follow the last ':' when they are modifier letters; a tracepoint
	 * or a vendor name has ':' of its own ("sched:sched_switch:u"). A PMU form has them
	 * right after its last '/' ("cpu/event=0x3c/u", parse-events.y event_pmu); ":u"
	 * there is taken too. */
	blen = len;
	if (strchr(name, '/')) {
		const char *slash = strrchr(name, '/');

		blen = (size_t)(slash + 1 - name);
		mods = slash[1] == ':' ? slash + 2 : slash + 1;
		pmu_mods = 1;
	} else if (colon && colon[1] && strspn(colon + 1, MOD_CHARS) == strlen(colon + 1)) {
		blen = (size_t)(colon - name);
		mods = colon + 1;
	} else if (colon) {
		/* A fixed name or a PMU form before the first ':' takes only modifiers. */
		size_t first = strcspn(name, ":");
		struct event_spec t;

		if (colon[1] && strspn(colon + 1, MOD_CHARS "S") == strlen(colon + 1) &&
		    strchr(colon + 1, 'S')) {
			if (why)
				snprintf(why, whylen, "':S' reads a group's members at its leader's "
					 "samples: it follows a group, {a,b}:S");
			return -EINVAL;
		}
		if ((first > 0 && name[first - 1] == '/') || table_lookup(name, first, &t) == 0) {
			if (why)
				snprintf(why, whylen,
					 "bad modifier ':%.16s' (perf's modifiers: u k h, p pp ppp, G H)",
					 name + first + 1);
			return -EINVAL;
		}
	}
	if (blen == 0) {
		if (why)
			snprintf(why, whylen, "no event before the modifiers");
		return -EINVAL;
	}
	memcpy(base, name, blen);
	base[blen] = 0;
	/* perf's fixed names first: none has a ':' or a '/', so no tracepoint or PMU form
	 * is one, and perf encodes them as generic events whatever the PMU calls them. */
	if (strchr(base, '/'))
		r = evsrc_pmu_form(base, out, why, whylen);
	else if (table_lookup(base, blen, out) == 0)
		r = 0;
	else
		r = evsrc_named(base, out, why, whylen);
	if (r)
		return r;
	if ((r = apply_mods(mods, out, why, whylen)) != 0)
		return r;
	if (*mods) {
		size_t n = strlen(out->name);

		if (n + 1 + strlen(mods) >= sizeof(out->name)) {
			if (why)
				snprintf(why, whylen, "event name too long with its modifiers");
			return -EINVAL;
		}
		snprintf(out->name + n, sizeof(out->name) - n, "%s%s", pmu_mods ? "" : ":", mods);
	}
	return 0;
}

/* perf's group "{a,b,c}[:mods]" (parse-events.y, group_def): each event on its own, the
 * modifiers after '}' added to each, but S, which is the group's: its leader samples
 * and reads the others (parse-events.c, the event modifier: sample_read). Commas inside
 * a PMU form's slashes are its own. */
static int parse_group(const char *name, struct event_spec *out, char *why, size_t whylen)
{
	const char *end = strchr(name, '}'), *p = name + 1, *mods = "";
	struct event_spec one;
	size_t n = 0, k, namelen;
	char emods[EVENT_NAME_MAX]; /* the modifiers of each event: mods without S */
	int r, sample_read = 0;

	if (!end || strchr(name + 1, '{') || strchr(end + 1, '}')) {
		if (why)
			snprintf(why, whylen, "a group is written {event,event,...} (no group within)");
		return -EINVAL;
	}
	if (end[1]) {
		if (end[1] != ':' || !end[2]) {
			if (why)
				snprintf(why, whylen, "after a group's '}' only :modifiers");
			return -EINVAL;
		}
		mods = end + 2;
	}
	for (k = 0, n = 0; mods[k] && n + 1 < sizeof(emods); k++) {
		if (mods[k] == 'S')
			sample_read = 1;
		else
			emods[n++] = mods[k];
	}
	emods[n] = 0;
	n = 0;
	memset(out, 0, sizeof(*out));
	namelen = 1;
	snprintf(out->name, sizeof(out->name), "{");
	while (p < end) {
		char item[EVENT_NAME_MAX];
		size_t len = 0;
		int slashes = 0;

		while (p + len < end && (p[len] != ',' || slashes % 2))
			slashes += p[len++] == '/';
		if (len == 0 || len + 1 + strlen(mods) >= sizeof(item)) {
			if (why)
				snprintf(why, whylen, "an empty or too long event in the group");
			return -EINVAL;
		}
		if (n == EVENT_GROUP_MAX) {
			if (why)
				snprintf(why, whylen, "a group holds at most %d events", EVENT_GROUP_MAX);
			return -EINVAL;
		}
		memcpy(item, p, len);
		item[len] = 0;
		if ((r = events_parse_why(item, &one, why, whylen)) != 0)
			return r;
		if (*emods && (r = apply_mods(emods, &one, why, whylen)) != 0)
			return r;
		for (k = 0; k < n; k++)
			if (!strcmp(k ? out->members[k - 1].name : out->leader, one.name)) {
				if (why)
					snprintf(why, whylen, "%s is twice in the group", one.name);
				return -EINVAL;
			}
		if (n == 0) {
			char gname[EVENT_NAME_MAX];

			memcpy(gname, out->name, sizeof(gname));
			*out = one;
			memcpy(out->name, gname, sizeof(gname));
			snprintf(out->leader, sizeof(out->leader), "%s", one.name);
		} else {
			struct event_member *m = &out->members[n - 1];

			m->desc = one.desc;
			m->kind = one.kind;
			m->type = one.type;
			m->config = one.config;
			m->config1 = one.config1;
			m->config2 = one.config2;
			m->exclude_user = one.exclude_user;
			m->exclude_kernel = one.exclude_kernel;
			m->exclude_hv = one.exclude_hv;
			m->exclude_host = one.exclude_host;
			m->exclude_guest = one.exclude_guest;
			m->precise_ip = one.precise_ip;
			m->modified = one.modified;
			snprintf(m->name, sizeof(m->name), "%s", one.name);
		}
		namelen += strlen(one.name) + 1;
		if (namelen + 1 + (*mods ? strlen(mods) + 1 : 0) >= sizeof(out->name)) {
			if (why)
				snprintf(why, whylen, "the group's name is too long (%d characters at most)",
					 EVENT_NAME_MAX - 1);
			return -EINVAL;
		}
		strcat(out->name, n ? "," : "");
		strcat(out->name, one.name);
		n++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (n < 2) {
		if (why)
			snprintf(why, whylen, "a group needs two events or more");
		return -EINVAL;
	}
	out->nmembers = (uint8_t)(n - 1);
	out->sample_read = (uint8_t)sample_read;
	strcat(out->name, "}");
	if (*mods) {
		strcat(out->name, ":");
		strcat(out->name, mods);
	}
	return 0;
}

int events_parse(const char *name, struct event_spec *out)
{
	return events_parse_why(name, out, NULL, 0);
}

void events_attr(const struct event_spec *ev, struct perf_event_attr *a)
{
	a->type = ev->type;
	a->config = ev->config;
	a->config1 = ev->config1;
	a->config2 = ev->config2;
	a->exclude_user = ev->exclude_user;
	a->exclude_kernel = ev->exclude_kernel;
	a->exclude_hv = ev->exclude_hv;
	a->exclude_host = ev->exclude_host;
	a->exclude_guest = ev->exclude_guest;
	a->precise_ip = ev->precise_ip;
}

void events_member_attr(const struct event_member *m, struct perf_event_attr *a)
{
	a->type = m->type;
	a->config = m->config;
	a->config1 = m->config1;
	a->config2 = m->config2;
	a->exclude_user = m->exclude_user;
	a->exclude_kernel = m->exclude_kernel;
	a->exclude_hv = m->exclude_hv;
	a->exclude_host = m->exclude_host;
	a->exclude_guest = m->exclude_guest;
	a->precise_ip = m->precise_ip;
}

void events_group_attr(const struct event_spec *ev, struct perf_event_attr *a)
{
	if (!ev->nmembers)
		return;
	if (ev->sample_read) {
		/* perf_event_open(2): the sample's read is { nr; values[nr] }, the leader's
		 * first. */
		a->sample_type |= PERF_SAMPLE_READ;
		a->read_format |= PERF_FORMAT_GROUP;
	} else {
		/* perf sets PERF_SAMPLE_ID for more than one event (evsel__config via
		 * evsel__set_sample_id); IDENTIFIER is the same id at a fixed place, the
		 * record's first u64 (include/uapi/linux/perf_event.h). */
		a->sample_type |= PERF_SAMPLE_IDENTIFIER;
	}
}

void events_group_member_attr(const struct event_spec *ev, size_t k,
			      const struct perf_event_attr *leader, struct perf_event_attr *m)
{
	if (k >= ev->nmembers)
		return;
	*m = *leader;
	events_member_attr(&ev->members[k], m);
	m->disabled = 0;
	m->enable_on_exec = 0;
	m->mmap = m->mmap2 = m->comm = m->comm_exec = m->task = 0;
	m->exclude_callchain_kernel = m->exclude_kernel;
	m->exclude_callchain_user = m->exclude_user;
	if (ev->sample_read) {
		m->freq = 0;
		m->sample_freq = 0; /* the union with sample_period */
		m->write_backward = 0;
	}
}

int events_name_sample_read(const char *name)
{
	const char *end = name[0] == '{' ? strrchr(name, '}') : NULL;

	return end && end[1] == ':' && strchr(end + 2, 'S') != NULL;
}

void events_member_value_type(const struct event_member *m, const char **type, const char **unit)
{
	/* The member's name, not its table type ("cpu" for cpu-clock): sample types must
	 * differ for go tool pprof -sample_index to pick one. */
	*type = m->name;
	*unit = m->desc ? m->desc->unit : "count";
}

void events_value_type(const struct event_spec *ev, const char **type, const char **unit)
{
	if (ev->desc) {
		*type = ev->desc->value_type;
		*unit = ev->desc->unit;
	} else {
		*type = ev->nmembers ? ev->leader : ev->name;
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
	events_attr(ev, &attr);
	attr.disabled = 1;
	if (exclude_kernel)
		attr.exclude_kernel = 1;
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
		if (ev->precise_ip && err == EOPNOTSUPP)
			snprintf(why, whylen, "%s: the PMU refuses precise sampling (precise_ip=%u)",
				 ev->name, ev->precise_ip);
		else if (hw)
			snprintf(why, whylen,
				 "%s: not supported on this machine: no hardware PMU counts it "
				 "(perf_event_open: %s; virtual machines often have none)",
				 ev->name, strerror(err));
		else
			snprintf(why, whylen, "%s: not supported by this kernel (perf_event_open: %s)",
				 ev->name, strerror(err));
		break;
	case EINVAL:
		if (ev->precise_ip)
			snprintf(why, whylen,
				 "%s: the PMU refuses precise sampling (precise_ip=%u; try fewer :p)",
				 ev->name, ev->precise_ip);
		else if (ev->nmembers && ev->sample_read)
			snprintf(why, whylen,
				 "%s: the kernel rejected the group (EINVAL): reading a group at "
				 "each sample of inherited events needs Linux 6.12 or later",
				 ev->name);
		else if (ev->nmembers)
			snprintf(why, whylen,
				 "%s: the kernel rejected the group (EINVAL): its events may not "
				 "sample together", ev->name);
		else
			snprintf(why, whylen, "%s: the kernel rejected the event settings (EINVAL)%s",
				 ev->name,
				 ev->type == PERF_TYPE_RAW ? ": check the raw event code"
				 : ev->kind == EVENT_PMU ? ": this PMU may not sample, or not "
							   "with these terms"
							 : "");
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
