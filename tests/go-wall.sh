#!/bin/sh
# go-wall.sh: record --wall on a handler that computes about 20% and sleeps about 80% of its
# time (tests/workloads/go/wall.go, which measures its own split). The workload is record's
# command, so the recording and the workload's own figure cover the same window: its whole
# life (the handler's samples, the only ones with handler=checkout, are those of the loop
# it measures). go tool pprof on the wall profile: sample type wall/nanoseconds; under
# -tagfocus=handler=checkout the states running + runnable hold the handler's computing
# share within 5 points of the workload's own figure, sleep the rest; and its running time
# has the stack of a perf sample taken at the same time, not "[running]": at least half of
# it (a thread the kernel does not run has no sample: three busy loops beside it left 76 to
# 87%), and of that at least 95% has main.compute on the stack. 50 Hz for 12 s: about 600 snapshots, so a 5-point miss is 3
# standard deviations of the sampling. Its stacks are as Go's goroutine profiles have them:
# without runtime.goexit and the wrappers Go leaves out (the runtime's own goroutines are
# started through gowrapN closures from go1.22). Plain builds of each GO_VERSIONS release.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan_per_version 5
SRC=$TOP_SRCDIR/tests/workloads/go/wall.go

# running_ms FILE [FOCUS [IGNORE]]: milliseconds of handler=checkout in state running (whose
# stack has FOCUS and not IGNORE), as go tool pprof sums them.
running_ms() {
	pprof -unit=ms -tags -tagfocus=handler=checkout -tagfocus=state=running \
		${2:+-focus="$2"} ${3:+-ignore="$3"} "$1" 2>/dev/null |
		awk '/^ *handler: Total/ { v = $3; sub(/ms$/, "", v); print v + 0; exit }'
}

for v in $GO_VERSIONS; do
	bin=$T/wall-$v
	go_build_or_skip 5 "$v" plain "$SRC" "$bin" || continue
	"$GOTOP_PERF" record --wall-hz 50 -o "$T/cpu-$v.pb.gz" -- "$bin" 12 \
		>"$T/own-$v" 2>"$T/err-$v"
	rc=$?
	wf=$T/cpu-$v.wall.pb.gz
	check "go$v: record --wall exits 0 and writes the wall profile (exit $rc)" test $rc = 0 -a -s "$wf"
	[ $rc = 0 ] || diag_file "$T/err-$v"
	check "go$v: its sample type is wall/nanoseconds" \
		sh -c "GOROOT=$PPROF_GOROOT HOME=$T '$PPROF_GOROOT/bin/go' tool pprof -raw '$wf' 2>/dev/null |
			grep -A1 '^Samples:' | grep -q 'wall/nanoseconds'"
	own=$(awk '/^busy/ { printf "%.1f", 100 * $2 / ($2 + $4) }' "$T/own-$v")
	pprof -tags -tagfocus=handler=checkout "$wf" >"$T/tags-$v" 2>/dev/null
	ours=$(awk '/^ *state:/ { s = 1; next } /^ *[a-z_]+:/ { s = 0 }
		s && /%\)/ { p = $0; sub(/.*\( */, "", p); sub(/%.*/, "", p)
			if ($NF == "running" || $NF == "runnable") on += p; else off += p }
		END { printf "%.1f", on }' "$T/tags-$v")
	check "go$v: handler=checkout on CPU or runnable ${ours}% of its wall time, its own figure ${own}% (5 points)" \
		awk -v a="$ours" -v b="$own" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 5 && d <= 5) }'
	[ -n "$ours" ] || diag_file "$T/tags-$v"
	run=$(running_ms "$wf")
	stk=$(running_ms "$wf" '' '^\[running\]$')
	comp=$(running_ms "$wf" '^main\.compute$')
	check "go$v: ${stk:-?} of ${run:-?} ms of the handler running have a perf sample's stack (50%), ${comp:-?} main.compute (95% of those)" \
		awk -v c="${comp:-0}" -v s="${stk:-0}" -v r="${run:-0}" 'BEGIN { exit !(r > 0 && s >= 0.5 * r && c >= 0.95 * s) }'
	[ -n "$run" ] && [ "$run" != 0 ] || diag_file "$T/err-$v"
	pprof -traces "$wf" >"$T/traces-$v" 2>/dev/null
	ntr=$(grep -c '^-----' "$T/traces-$v")
	hid=$(grep -cE '^ +([0-9.]+[a-z]* +)?(runtime\.goexit|.*\.(gowrap|deferwrap)[0-9]+|.*-fm)$' \
		"$T/traces-$v")
	check "go$v: none of its $ntr stacks has a frame Go leaves out ($hid: runtime.goexit, gowrapN, deferwrapN, -fm)" \
		test "$ntr" -gt 1 -a "$hid" = 0
done
finish
