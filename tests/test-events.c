/* test-events.c: unit tests for event names, raw codes, value types, and the real probe. */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "gotop/events.h"

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
	assert_int_equal(events_parse("nonsense", &ev), -EINVAL);
	assert_int_equal(events_parse("r", &ev), -EINVAL);
	assert_int_equal(events_parse("rxyz", &ev), -EINVAL);
	assert_int_equal(events_parse("cpu-clock:zz", &ev), -EINVAL);
	assert_int_equal(events_parse("", &ev), -EINVAL);
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
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_table_complete),
		cmocka_unit_test(test_value_types),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_explain),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
