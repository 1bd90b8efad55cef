/* save.c: snapshots as files (S, --save): the name suggested (the target, the event, the
 * time), and the viewed event's profile written as gzipped pprof with the period and
 * comments `record` writes, or as folded stacks for a name ending in .folded. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gotop/pprof.h"
#include "gotop/util.h"

static void sanitize(char *dst, size_t n, const char *src)
{
	size_t i, k = 0;

	for (i = 0; src[i] && k + 1 < n; i++) {
		char c = src[i];

		dst[k++] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			    c == '.' || c == '_' || c == '-') ? c : '_';
	}
	dst[k] = 0;
	if (!k)
		snprintf(dst, n, "target");
}

char *ui_default_save_path(struct ui *ui)
{
	char comm[64], ev[40], ts[32];
	time_t now = time(NULL);
	struct tm tm;

	sanitize(comm, sizeof(comm), ui->snap && ui->snap->comm[0] ? ui->snap->comm : "target");
	sanitize(ev, sizeof(ev), ui_viewed_event(ui));
	localtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y%m%d-%H%M%S", &tm);
	if (ui->save_dir && *ui->save_dir)
		return xasprintf("%s/%s-%s-%s.pb.gz", ui->save_dir, comm, ev, ts);
	return xasprintf("%s-%s-%s.pb.gz", comm, ev, ts);
}

int ui_save(struct ui *ui, const char *path)
{
	const struct live_event *ev = ui->ev;
	const struct prof_value_type *types;
	struct prof *p;
	char buf[600], full[PATH_MAX + 64];
	int r;

	if (!ev || !ui->snap) {
		ui_set_status(ui, UA_ERR, "nothing to save: no samples of %s yet", ui_viewed_event(ui));
		return -ENODATA;
	}
	p = prof_clone(ev->prof);
	if (ui->files)
		goto write; /* `view`: the files' own metadata */
	/* Period and comments as `record` writes them. */
	if (prof_sample_types(p, &types) >= 2) {
		struct prof_value_type pt = types[1];

		if (ui->snap->use_freq) {
			const char *unit = prof_string(p, pt.unit, NULL);

			prof_set_period(p, pt, unit && !strcmp(unit, "nanoseconds") && ui->snap->freq
						       ? (int64_t)(1000000000ULL / ui->snap->freq)
						       : (int64_t)ui->snap->freq);
		} else {
			prof_set_period(p, pt, (int64_t)ui->snap->period);
		}
	}
	snprintf(buf, sizeof(buf), "gotop-perf %s: event %s, %s %llu", PACKAGE_VERSION, ev->name,
		 ui->snap->use_freq ? "frequency (Hz)" : "period",
		 (unsigned long long)(ui->snap->use_freq ? ui->snap->freq : ui->snap->period));
	prof_add_comment(p, buf);
	if (ui->snap->cmdline && *ui->snap->cmdline)
		prof_add_comment(p, ui->snap->cmdline);
	if (ui->snap->go_version) {
		snprintf(buf, sizeof(buf), "go version %s", ui->snap->go_version);
		prof_add_comment(p, buf);
	}
	if (ui->snap->window_s) {
		snprintf(buf, sizeof(buf), "window: the last %u seconds", ui->snap->window_s);
		prof_add_comment(p, buf);
	} else if (ui->snap->forgotten_entries) {
		snprintf(buf, sizeof(buf),
			 "cumulative, less %llu samples in %llu entries that a decaying window forgot",
			 (unsigned long long)ui->snap->forgotten,
			 (unsigned long long)ui->snap->forgotten_entries);
		prof_add_comment(p, buf);
	}
	if (ui->snap->shed_entries) {
		snprintf(buf, sizeof(buf),
			 "less %llu samples in %llu entries with the fewest samples, forgotten to keep "
			 "gotop-perf under %zu MB of anonymous memory (--max-memory)",
			 (unsigned long long)ui->snap->shed, (unsigned long long)ui->snap->shed_entries,
			 ui->snap->max_mem >> 20);
		prof_add_comment(p, buf);
	}
write:
	/* A name ending in .folded asks for folded stacks (flame graph tools): of the sample
	 * counts live, of the sample type shown in `view`. */
	if (strlen(path) > 7 && !strcmp(path + strlen(path) - 7, ".folded"))
		r = pprof_write_folded(p, ui->files && prof_sample_types(p, NULL) >= 2 ? 1 : 0, path);
	else
		r = pprof_write_file(p, path);
	prof_free(p);
	if (r) {
		ui_set_status(ui, UA_ERR, "cannot save %s: %s", path, strerror(-r));
		return r;
	}
	if (path[0] != '/') {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)))
			snprintf(full, sizeof(full), "%s/%s", cwd, path);
		else
			snprintf(full, sizeof(full), "%s", path);
	} else {
		snprintf(full, sizeof(full), "%s", path);
	}
	{
		char esc[PATH_MAX + 64];

		ui_escape(esc, sizeof(esc), full, strlen(full));
		ui_set_status(ui, UA_OK, "saved %llu samples of %s to %s",
			      (unsigned long long)ev->samples, ev->name, esc);
	}
	return 0;
}
