/* goprof.h: what Go's net/http/pprof would answer for a running Go process, made from
 * outside: /debug/pprof/heap, allocs, block, mutex and goroutine, with ?debug=N and
 * ?seconds=N, as the same bytes a service's own endpoint gives (gzipped profile.proto or
 * the text forms), from the runtime's profile buckets (gomem.h) and goroutines (gosnap.h).
 *
 * One code path: `gotop-perf pprof` calls goprof_fetch, and so can an HTTP server; the
 * error kinds map to HTTP statuses (goprof_http_status). The live UI takes the profiles
 * themselves (goprof_profile). */
#ifndef GOTOP_GOPROF_H
#define GOTOP_GOPROF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gotop/gomem.h"
#include "gotop/profile.h"

/* Why a request failed (one list, so that the texts and statuses cannot disagree). */
#define GOPROF_ERRORS                                                                       \
	GOPROF_ERR(OK, 200, "ok")                                                          \
	GOPROF_ERR(REQUEST, 400, "bad request")               /* a parameter's value */      \
	GOPROF_ERR(UNKNOWN, 404, "unknown profile")           /* no profile of that name */  \
	GOPROF_ERR(TARGET, 404, "no such Go process")         /* gone, not Go, unsupported */ \
	GOPROF_ERR(OFF, 404, "profile not kept by the program") /* MemProfileRate 0 */       \
	GOPROF_ERR(PERM, 403, "not permitted")                /* cannot read its memory */   \
	GOPROF_ERR(READ, 500, "cannot read the profile")      /* garbage, changing too fast */

enum goprof_err {
#define GOPROF_ERR(name, status, text) GOPROF_E_##name,
	GOPROF_ERRORS
#undef GOPROF_ERR
};
/* The HTTP status of an error kind (net/http/pprof uses 400 and 404 alike), and its text. */
int goprof_http_status(int err);
const char *goprof_strerror(int err);

/* A process's profile sources: its executable's tables, the bucket reader and the
 * goroutine reader (made when first needed). One thread at a time. */
struct goprof;

/* Opens process pid. NULL with *err (GOPROF_E_TARGET, _PERM, _READ) and a one-line
 * reason in why. Caller frees with goprof_close. */
struct goprof *goprof_open(pid_t pid, int *err, char *why, size_t whylen);
void goprof_close(struct goprof *p); /* accepts NULL */
/* The bucket reader (borrowed, valid until goprof_close), for a data source that reads
 * snapshots itself (a live view). */
struct gomem *goprof_gomem(struct goprof *p);
/* Bounds what one answer reads, and so its memory: at most max goroutines per snapshot and
 * max buckets per read (0, the default: GOSNAP_MAX_G and GOMEM_MAX_BUCKETS). A profile cut
 * there holds the first ones read and says so (goprof_out.st.truncated). For a server,
 * whose requests must each stay within a bound. */
void goprof_set_max_records(struct goprof *p, size_t max);
/* Every goroutine now (gosnap_take, bounded as above), through the process's goroutine
 * reader (made at the first call): r's arrays are the reader's, valid until the next call
 * or goprof_close. 0, or -1 with *err and a one-line reason in why. */
struct gosnap_result;
int goprof_goroutines(struct goprof *p, struct gosnap_result *r, int *err, char *why,
		      size_t whylen);

/* A request, as net/http/pprof's query parameters. */
struct goprof_req {
	const char *name;      /* heap, allocs, block, mutex, goroutine */
	int debug;             /* 0: gzipped protobuf; 1: the legacy text; 2 (goroutine):
				* every goroutine as a traceback */
	int seconds;           /* > 0: the difference over that many seconds (heap, allocs,
				* block, mutex, goroutine); 0: now */
	volatile int *cancel;  /* optional: nonzero stops a --seconds wait (GOPROF_E_READ) */
};

/* The answer: data (caller frees with free()), and what it is. */
struct goprof_out {
	uint8_t *data;
	size_t len;
	const char *content_type;  /* "application/octet-stream" or "text/plain; charset=utf-8" */
	char filename[64];         /* what net/http/pprof's Content-Disposition names it */
	struct gomem_stats st;     /* of the (last) read of buckets; for goroutine only
				    * truncated is set (goprof_set_max_records) */
	int64_t rate;              /* the rate the profile was read with (see gomem_snap) */
};

/* Answers r for the process: the bytes Go's /debug/pprof/NAME?debug=D&seconds=S would
 * give now. GOPROF_E_OK, or an error kind with a one-line reason in why. The heap profile
 * of a program that samples no allocations (MemProfileRate 0: it does not link
 * runtime/pprof, or set the rate to 0) is GOPROF_E_OFF. A block or mutex profile the
 * program never enabled is empty, as Go's is. */
int goprof_fetch(struct goprof *p, const struct goprof_req *r, struct goprof_out *out,
		 char *why, size_t whylen);

/* The profile itself (heap, allocs, block, mutex, goroutine), as the debug=0 answer holds
 * it (caller frees with prof_free), for a view or a file. st and rate may be NULL. NULL
 * with *err and why as goprof_fetch. */
struct prof *goprof_profile(struct goprof *p, const char *name, struct gomem_stats *st,
			    int64_t *rate, int *err, char *why, size_t whylen);

/* The difference after - before, as net/http/pprof computes it for ?seconds (before
 * scaled by -1 and merged: samples by location and labels, zeros dropped). A new
 * profile; caller frees. */
struct prof *goprof_delta(const struct prof *before, const struct prof *after);

/* Building a profile from a snapshot read elsewhere (tests, fuzzing, a view holding its
 * own snapshots): the executable's .gopclntab (borrowed), the load bias, the release. */
struct gopcln;
struct goprof_sym {
	const struct gopcln *pcln;
	uint64_t bias;
	int go_minor;
	int profstackdepth;    /* go1.23+: GODEBUG profstackdepth, 0 for the default 128 */
};
/* The heap profile of s as writeHeapProto writes it (sample types alloc_objects,
 * alloc_space, inuse_objects, inuse_space; period space/bytes = the rate; label bytes);
 * default_type "alloc_space" for /allocs, NULL for /heap. Caller frees. */
struct prof *goprof_heap_profile(const struct goprof_sym *sym, const struct gomem_snap *s,
				 const char *default_type);
/* The block or mutex profile of s as printCountCycleProfile writes it (contentions/count,
 * delay/nanoseconds; go1.19 mutex counts scaled by the rate as writeMutex did). */
struct prof *goprof_contention_profile(const struct goprof_sym *sym, const struct gomem_snap *s);
/* Go's scaleHeapSample: the unsampled estimate of count objects of size bytes in total
 * (go1.19-go1.26: size the bytes, the mean object size size/count; go1.27 passes the
 * object size and multiplies). rate <= 1: unscaled. */
void goprof_scale_heap(int64_t count, int64_t size, int64_t rate, int64_t *out_count,
		       int64_t *out_size);

#endif
