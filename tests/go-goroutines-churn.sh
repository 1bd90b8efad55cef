#!/bin/sh
# go-goroutines-churn.sh: `gotop-perf goroutines` on a target that creates and ends
# goroutines at a high rate, whose stacks grow (copied by the runtime) and shrink under a GC
# every few milliseconds (tests/workloads/go/churn.go). Every run must succeed, and every
# complete stack of a worker must have the only shape a worker's stack can have: frames of
# the parking place, main.rec one or more times, main.worker, its go statement's closure
# (and its wrapper: main.main.funcN before go1.22, main.main.gowrapN after),
# runtime.goexit. Goroutines that ran while read are dropped and counted (torn), never
# shown; memory stays bounded. For each Go release of GO_VERSIONS, plain builds.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v jq >/dev/null || skip_all "jq is not installed (setup.sh installs it)"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed (GNU time, for the peak RSS)"
plan_per_version 3
SRC=$TOP_SRCDIR/tests/workloads/go/churn.go
runs=${GOTOP_CHURN_RUNS:-10}

for v in $GO_VERSIONS; do
	bin=$T/churn-$v
	go_build_or_skip 3 "$v" plain "$SRC" "$bin" || continue
	"$bin" &
	pid=$!
	track $pid
	sleep 1
	fails=0
	maxkb=0
	torn=0
	listed=0
	: >"$T/all-$v"
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		if ! /usr/bin/time -f "%M" -o "$T/rss" "$GOTOP_PERF" goroutines -p $pid --json \
			>"$T/run.json" 2>"$T/err" || ! jq -e . "$T/run.json" >/dev/null 2>&1; then
			fails=$((fails + 1))
			diag_file "$T/err"
			continue
		fi
		kb=$(tail -1 "$T/rss")
		[ "$kb" -gt "$maxkb" ] && maxkb=$kb
		jq -r 'select(.stack_complete) | [.frames[] | .func] | join(" ")' "$T/run.json" \
			>>"$T/all-$v"
		"$GOTOP_PERF" goroutines -p $pid >"$T/text" 2>/dev/null &&
			torn=$((torn + $(sed -n 's/.*; \([0-9]*\) changed while read.*/\1/p' "$T/text"))) &&
			listed=$((listed + $(sed -n 's/^goroutines: \([0-9]*\) of.*/\1/p' "$T/text")))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	check "go$v: $runs snapshots of a churning target succeed with JSON ($fails failed)" \
		test "$fails" = 0

	# The worker stacks: from the first main.rec on, only this shape.
	awk '
	{
		for (k = 1; k <= NF && $k != "main.rec"; k++) ;
		if (k > NF) { if ($0 ~ /main\.worker/) bad++; next }
		n++; s = ""
		for (; k <= NF; k++) s = s " " $k
		if (s !~ /^( main\.rec)+ main\.worker( main\.main\.func[0-9]+)+( main\.main\.gowrap[0-9]+)? runtime\.goexit$/) {
			bad++
			if (bad <= 5) print "# wrong: " $0
		}
	}
	END { printf "%d %d\n", n, bad }' "$T/all-$v" >"$T/shape"
	grep '^#' "$T/shape"
	set -- $(tail -1 "$T/shape")
	check "go$v: $1 complete worker stacks, all of the one possible shape ($2 wrong; $torn of $listed dropped as torn)" \
		test "$1" -ge 500 -a "$2" = 0
	check "go$v: peak RSS of goroutines under 64 MB ($maxkb KB)" test "$maxkb" -gt 0 -a "$maxkb" -lt 65536
done
finish
