#!/bin/sh
# go-cgo-goroutines.sh: goroutines parked in Go code that C called back, against Go's own
# goroutine?debug=2 dump.
#
# The workload (tests/workloads/go/cgopark.go) parks four goroutines in Go functions C
# called back (crosscall2, runtime.cgocallback; one through a method value) and blocks one
# in read(2) inside C, then dumps its goroutines before gotop-perf reads them and again
# after. For every goroutine parked the same way in both dumps, `gotop-perf goroutines
# --json` must give the same id, state, frames (on past runtime.cgocallback into the cgo
# call and its Go callers) and creator, with no stack cut short, `gotop-perf pprof
# goroutine --debug 2` the same blocks, and --debug 1 the same records as Go's own goroutine
# profile written with the first dump. For each Go release of GO_VERSIONS (cgo callbacks:
# Go 1.19, 1.21 to 1.27).
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/go-dump.sh"

command -v jq >/dev/null || skip_all "jq is not installed (setup.sh installs it)"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc: the workload calls C through cgo"
[ "$(uname -m)" = x86_64 ] || skip_all "cgo callbacks are crossed on amd64 only"
plan_per_version 4
SRC=$TOP_SRCDIR/tests/workloads/go/cgopark.go

for v in $GO_VERSIONS; do
	bin=$T/cgopark-$v
	go_build_or_skip 4 "$v" cgo "$SRC" "$bin" || continue
	rd=$T/run-$v
	mkdir -p "$rd"
	"$bin" "$rd" >"$rd/out" 2>&1 &
	pid=$!
	track $pid
	i=0
	while [ ! -s "$rd/dump1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	"$GOTOP_PERF" goroutines -p $pid --json >"$rd/ours.json" 2>"$rd/ours.err"
	rc=$?
	"$GOTOP_PERF" pprof goroutine -p $pid --debug 2 >"$rd/ours.2" 2>>"$rd/ours.err"
	rc2=$?
	"$GOTOP_PERF" pprof goroutine -p $pid --debug 1 >"$rd/ours.1" 2>>"$rd/ours.err"
	rc2=$((rc2 + $?))
	kill -USR1 $pid
	i=0
	while [ ! -s "$rd/dump2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	tag="go$v"
	if [ $rc != 0 ] || [ $rc2 != 0 ] || ! jq -e . "$rd/ours.json" >/dev/null 2>&1 ||
		[ ! -s "$rd/dump2" ]; then
		not_ok "$tag: goroutines and pprof goroutine exit 0 (exit $rc/$rc2), both dumps written"
		diag_file "$rd/ours.err"
		skip_n 3 "$tag: no snapshot to compare"
		continue
	fi
	ok "$tag: goroutines and pprof goroutine exit 0, both dumps written"

	go_dump "$rd/dump1" | sort >"$rd/go1"
	go_dump "$rd/dump2" | sort >"$rd/go2"
	comm -12 "$rd/go1" "$rd/go2" | awk -F'\t' '$2 != "running" && $2 != "runnable"' >"$rd/parked"
	ours "$rd/ours.json" | sort >"$rd/ours"
	n=$(wc -l <"$rd/parked")
	# the callbacks' goroutines, seen by Go through the cgo call to main.callC
	ncb=$(grep -c 'main\._Cfunc_c_park main\.callC' "$rd/parked")
	missing=$(comm -23 "$rd/parked" "$rd/ours" | wc -l)
	cut=$(jq -r 'select(.stack_read and (.stack_complete | not)) | .id' "$rd/ours.json" | wc -l)
	if [ "$ncb" = 4 ] && [ "$missing" = 0 ] && [ "$cut" = 0 ]; then
		ok "$tag: $n parked goroutines ($ncb in callbacks from C) equal Go's dump, no stack cut short"
	else
		not_ok "$tag: $n parked goroutines ($ncb in callbacks from C) equal Go's dump ($missing differ), $cut stacks cut short"
		comm -23 "$rd/parked" "$rd/ours" | sed 's/^/# go:   /' | head -6
		for id in $(comm -23 "$rd/parked" "$rd/ours" | cut -f1 | head -6); do
			awk -F'\t' -v id="$id" '$1 == id { print "# ours: " $0 }' "$rd/ours"
		done
	fi

	cut -f1 "$rd/parked" >"$rd/parked.ids"
	dump_blocks "$rd/dump1" "$rd/parked.ids" >"$rd/go.blocks"
	dump_blocks "$rd/ours.2" "$rd/parked.ids" >"$rd/ours.blocks"
	nb=$(wc -l <"$rd/go.blocks")
	nd=$(comm -3 "$rd/go.blocks" "$rd/ours.blocks" | wc -l)
	check "$tag: pprof goroutine --debug 2: $nb parked goroutines' blocks equal Go's dump ($nd differ)" \
		test "$nb" -ge 5 -a "$nd" = 0
	[ "$nd" = 0 ] || comm -3 "$rd/go.blocks" "$rd/ours.blocks" | head -4 | cut -c1-400 | sed 's/^/# /'

	profile_records "$rd/dump1.1" >"$rd/go.records"
	profile_records "$rd/ours.1" >"$rd/ours.records"
	nr=$(wc -l <"$rd/go.records")
	nd=$(comm -3 "$rd/go.records" "$rd/ours.records" | wc -l)
	check "$tag: pprof goroutine --debug 1: $nr records (pcs, counts, frames) equal Go's ($nd differ)" \
		test "$nr" -ge 3 -a "$nd" = 0
	[ "$nd" = 0 ] || comm -3 "$rd/go.records" "$rd/ours.records" | head -4 | cut -c1-400 | sed 's/^/# /'
done

finish
