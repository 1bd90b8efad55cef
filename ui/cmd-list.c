/* cmd-list.c: `gotop-perf list`: every known event and whether this machine can count it. */
#include "config.h"
#include "cli.h"

#include <stdio.h>
#include <string.h>

#include "gotop/events.h"

int cmd_list(int argc, char **argv)
{
	size_t n, i;
	const struct event_desc *t = events_table(&n);
	char why[256], kwhy[256];
	int kernel = events_kernel_allowed(kwhy, sizeof(kwhy));

	if (argc > 1) {
		cli_error("list takes no arguments");
		return EXIT_USAGE;
	}
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
	printf("%-24s %-9s %-5s %s\n", "rNNNN", "raw", "-", "raw PMU event code in hex (e.g. r01c2)");
	if (!kernel)
		printf("\nnote: %s\n", kwhy);
	return EXIT_OK;
}
