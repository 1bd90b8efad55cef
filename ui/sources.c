/* sources.c: the readers the views need beyond the live session's snapshots: every
 * goroutine of the target now (gosnap.h, with a symbolizer of its own to name the frames)
 * and the verifier (verify.h). The UI owns one of each, made when a view first asks and
 * freed by ui_fini after the views; the views ask through these functions and never make a
 * reader, so that one owner (the session) can take them over here alone. */
#include "config.h"
#include "ui.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gotop/gosnap.h"
#include "gotop/symbolizer.h"
#include "gotop/util.h"
#include "gotop/verify.h"

struct ui_goroutines {
	struct symbolizer *sym;
	struct gosnap *snap;
	char why[256];           /* why there is no reader */
};

/* The goroutine reader of the target, made once; NULL when it cannot be (why says). */
static struct ui_goroutines *goroutines(struct ui *ui)
{
	struct ui_goroutines *g = ui->goroutines;
	struct symfile *sf;

	if (g)
		return g->snap ? g : NULL;
	g = ui->goroutines = xcalloc(1, sizeof(*g));
	g->sym = symbolizer_new(ui->target_pid);
	sf = symbolizer_main_file(g->sym);
	if (!sf)
		snprintf(g->why, sizeof(g->why), "cannot open the target's executable");
	else
		g->snap = gosnap_new(ui->target_pid, sf, g->why, sizeof(g->why));
	return g->snap ? g : NULL;
}

struct session *ui_session(struct ui *ui)
{
	return ui->live ? live_session(ui->live) : NULL;
}

int ui_goroutines_now(struct ui *ui, struct gosnap_result *res, char *why, size_t n)
{
	struct ui_goroutines *g;
	int rc;

	memset(res, 0, sizeof(*res));
	if (ui->target_pid <= 0) {
		snprintf(why, n, "no target process");
		return -ENODEV;
	}
	g = goroutines(ui);
	if (!g) {
		snprintf(why, n, "%s", ui->goroutines->why[0] ? ui->goroutines->why
							      : "not a Go program: no goroutines");
		return -ENODEV;
	}
	rc = gosnap_take(g->snap, 0, res);
	if (rc) {
		snprintf(why, n, "%s", rc == -EAGAIN ? "the Go runtime has not started yet"
				       : rc == -ESRCH ? "the target has exited" : strerror(-rc));
		memset(res, 0, sizeof(*res));
	}
	return rc;
}

int ui_goroutines_frames(struct ui *ui, uint64_t pc, struct sym_frame *f, int n)
{
	struct ui_goroutines *g = ui->goroutines;
	int k = g && g->sym ? symbolizer_lookup(g->sym, pc, 1, NULL, f, n) : 0;

	return k > 0 ? k : 0;
}

int ui_verifier_switch(struct ui *ui)
{
	pid_t pid = ui->snap ? ui->snap->pid : ui->target_pid;
	int rc;

	if (ui->verifier && verifier_running(ui->verifier)) {
		verifier_stop(ui->verifier);
		ui_set_status(ui, UA_OK, "verifier off (its counts are kept; V starts it again)");
		return R_UPDATE | R_REDRAW;
	}
	if (!pid) {
		ui_set_status(ui, UA_ERR, "no target process yet");
		return R_REDRAW;
	}
	if (!ui->verifier) {
		struct verify_opts vo;

		verify_opts_default(&vo);
		vo.sample_stack = ui->stack_size;
		ui->verifier = verifier_new(pid, &vo);
		if (!ui->verifier) {
			ui_set_status(ui, UA_ERR, "cannot set up libunwind: %s", strerror(errno));
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
	verifier_free(ui->verifier); /* joins its thread: no target thread stays stopped */
	ui->verifier = NULL;
	if (ui->goroutines) {
		gosnap_free(ui->goroutines->snap);
		symbolizer_free(ui->goroutines->sym);
		free(ui->goroutines);
		ui->goroutines = NULL;
	}
}
