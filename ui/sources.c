/* sources.c: the UI side of the session's sources beyond the live session's snapshots:
 * every goroutine of the target now and the verifier (session.h). The session owns and
 * runs them; the views ask through these functions, and never make a reader. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/session.h"
#include "gotop/util.h"
#include "gotop/verify.h"

/* --batch prints each refresh's goroutines: it waits this long at most for them. The
 * screen never waits: it shows the snapshot asked for at the refresh before. */
#define BATCH_WAIT_MS 5000

struct session *ui_session(struct ui *ui)
{
	return ui->live ? live_session(ui->live) : NULL;
}

int ui_goroutines_now(struct ui *ui, struct gosnap_result *res, char *why, size_t n)
{
	struct session *s = ui_session(ui);
	const struct session_goroutines *d;

	memset(res, 0, sizeof(*res));
	if (!s || ui->target_pid <= 0) {
		snprintf(why, n, "no target process");
		return -ENODEV;
	}
	d = session_goroutines_get(s, ui->batch ? BATCH_WAIT_MS : 0);
	if (!d && !ui->goroutines) {
		snprintf(why, n, "reading every goroutine...");
		return -EINPROGRESS;
	}
	if (d) {
		session_goroutines_put(ui->goroutines);
		ui->goroutines = d;
	}
	d = ui->goroutines;
	if (!d->reader) {
		snprintf(why, n, "%s", d->why[0] ? d->why : "not a Go program: no goroutines");
		return -ENODEV;
	}
	if (d->rc) {
		snprintf(why, n, "%s", d->why);
		return d->rc;
	}
	*res = d->r;
	return 0;
}

int ui_goroutines_frames(struct ui *ui, uint64_t pc, struct sym_frame *f, int n)
{
	return session_goroutines_frames(ui->goroutines, pc, f, n);
}

int ui_verifier_switch(struct ui *ui)
{
	struct session *s = ui_session(ui);
	char why[256];
	int rc;

	if (ui->verifier && verifier_running(ui->verifier)) {
		verifier_stop(ui->verifier);
		ui_set_status(ui, UA_OK, "verifier off (its counts are kept; V starts it again)");
		return R_UPDATE | R_REDRAW;
	}
	if (!s) {
		ui_set_status(ui, UA_ERR, "no target process yet");
		return R_REDRAW;
	}
	if (!ui->verifier) {
		ui->verifier = session_verifier(s, why, sizeof(why));
		if (!ui->verifier) {
			ui_set_status(ui, UA_ERR, "%s", why);
			return R_REDRAW;
		}
	}
	/* Refused ptrace is said at once; profiling goes on without the verifier. */
	rc = verifier_probe(ui->verifier);
	if (rc == 0)
		rc = verifier_start(ui->verifier);
	if (rc < 0) {
		struct verify_report r;

		verifier_report(ui->verifier, &r);
		ui_set_status(ui, UA_ERR, "verifier: %s", r.error ? r.why : strerror(-rc));
		verify_report_free(&r);
	} else {
		ui_set_status(ui, UA_OK, "verifier on: stops one running thread at a time (V stops it)");
	}
	ui->views[VIEW_VERIFY].stale = 1;
	return R_UPDATE | R_REDRAW;
}

void ui_sources_free(struct ui *ui)
{
	/* The session stops and frees the verifier (no target thread stays stopped). */
	ui->verifier = NULL;
	session_goroutines_put(ui->goroutines);
	ui->goroutines = NULL;
}
