#!/bin/sh
# go-wall.sh: record --wall on a handler that computes about 20% and sleeps about 80% of its
# time (tests/workloads/go/wall.go, which measures its own split). go tool pprof on the
# wall profile: sample type wall/nanoseconds, and under -tagfocus=handler=checkout the
# states running + runnable hold the handler's computing share within 5 points of the
# workload's own figure, sleep the rest. 50 Hz for 12 s: about 600 snapshots, so a 5-point
# miss is 3 standard deviations of the sampling. Plain builds of each GO_VERSIONS release.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan_per_version 3
SRC=$TOP_SRCDIR/tests/workloads/go/wall.go

for v in $GO_VERSIONS; do
	bin=$T/wall-$v
	go_build_or_skip 3 "$v" plain "$SRC" "$bin" || continue
	"$bin" 14 >"$T/own-$v" 2>&1 &
	pid=$!
	track $pid
	sleep 1
	"$GOTOP_PERF" record -p $pid -d 12 --wall-hz 50 -o "$T/cpu-$v.pb.gz" -q 2>"$T/err-$v"
	rc=$?
	wait $pid
	wf=$T/cpu-$v.wall.pb.gz
	check "go$v: record --wall exits 0 and writes the wall profile (exit $rc)" test $rc = 0 -a -s "$wf"
	check "go$v: its sample type is wall/nanoseconds" \
		sh -c "GOROOT=$PPROF_GOROOT HOME=$T '$PPROF_GOROOT/bin/go' tool pprof -raw '$wf' 2>/dev/null |
			grep -q '^Samples:' && GOROOT=$PPROF_GOROOT HOME=$T '$PPROF_GOROOT/bin/go' tool pprof -raw '$wf' 2>/dev/null |
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
done
finish
