/* unit.c: the shell commands of the cmocka unit tests that check against tools (objdump,
 * addr2line, readelf, go tool): run one, or take its output. */
#include "config.h"
#include "unit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include "gotop/util.h"

int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int r;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	r = system(cmd);
	return WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

char *capture(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	size_t len = 0, cap = 1 << 16;
	char *buf;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	f = popen(cmd, "r");
	if (!f)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		size_t r;

		if (len == cap)
			buf = xrealloc(buf, (cap *= 2) + 1);
		r = fread(buf + len, 1, cap - len, f);
		if (!r)
			break;
		len += r;
	}
	buf[len] = 0;
	if (pclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
