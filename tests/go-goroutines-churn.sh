#!/bin/sh
# go-goroutines-churn.sh: `gotop-perf goroutines` on a target that creates and ends
# goroutines at a high rate, whose stacks grow (copied by the runtime) and shrink under a GC
# every few milliseconds (tests/workloads/go/churn.go). Every run must succeed, and every
# complete stack of a worker must have the only shape a worker's stack can have: frames of
# the parking place, main.rec one or more times, main.worker, its go statement's closure,
# and nothing else: Go leaves out the closure's wrapper (main.main.funcN before go1.22,
# main.main.gowrapN after) and runtime.goexit, which --all-frames shows. Goroutines that
# ran while read are dropped and counted (torn), never shown, be it by their g or by their
# stack (a return address that follows no call to the frame below); memory stays bounded. Then the hostile target tests/workloads/go/garbageg, whose
# goroutines switch g.labels among garbage label sets all the time: every snapshot succeeds,
# no byte of the target reaches the output unescaped, and handler=ok (the control
# goroutine's label, which no hostile set carries) is on that goroutine only.
# For each Go release of GO_VERSIONS, plain builds.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v jq >/dev/null || skip_all "jq is not installed (setup.sh installs it)"
[ -x /usr/bin/time ] || skip_all "/usr/bin/time is not installed (GNU time, for the peak RSS)"
plan_per_version 6
SRC=$TOP_SRCDIR/tests/workloads/go/churn.go
runs=${GOTOP_CHURN_RUNS:-10}

for v in $GO_VERSIONS; do
	bin=$T/churn-$v
	go_build_or_skip 6 "$v" plain "$SRC" "$bin" || continue
	"$bin" &
	pid=$!
	track $pid
	sleep 1
	fails=0
	maxkb=0
	torn=0
	unlinked=0
	listed=0
	: >"$T/all-$v"
	: >"$T/allf-$v"
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
		# every other run with --all-frames: the wrapper and runtime.goexit, marked
		if [ $((i % 2)) = 0 ] &&
			"$GOTOP_PERF" goroutines -p $pid --json --all-frames >"$T/run.json" 2>"$T/err"; then
			jq -r 'select(.stack_complete) | [.frames[] |
				.func + (if .hidden then "!" else "" end)] | join(" ")' "$T/run.json" \
				>>"$T/allf-$v"
		fi
		"$GOTOP_PERF" goroutines -p $pid >"$T/text" 2>/dev/null &&
			torn=$((torn + $(sed -n 's/.*; \([0-9]*\) changed while read.*/\1/p' "$T/text"))) &&
			unlinked=$((unlinked + $(sed -n 's/.*dropped, \([0-9]*\) of them found by their stacks.*/\1/p' "$T/text"))) &&
			listed=$((listed + $(sed -n 's/^goroutines: \([0-9]*\) of.*/\1/p' "$T/text")))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	check "go$v: $runs snapshots of a churning target succeed with JSON ($fails failed)" \
		test "$fails" = 0

	# The worker stacks: from the first main.rec on, only this shape; with --all-frames,
	# the wrapper and runtime.goexit after it, marked hidden.
	shape() {
		awk -v re="$2" '
		{
			for (k = 1; k <= NF && $k != "main.rec"; k++) ;
			if (k > NF) { if ($0 ~ /main\.worker/) bad++; next }
			n++; s = ""
			for (; k <= NF; k++) s = s " " $k
			if (s !~ re) {
				bad++
				if (bad <= 5) print "# wrong: " $0
			}
		}
		END { printf "%d %d\n", n, bad }' "$1" >"$T/shape"
		grep '^#' "$T/shape"
		tail -1 "$T/shape"
	}
	set -- $(shape "$T/all-$v" '^( main\.rec)+ main\.worker main\.main\.func[0-9]+$')
	set -- "$@" $(shape "$T/allf-$v" \
		'^( main\.rec)+ main\.worker main\.main\.func[0-9]+ main\.main\.(func|gowrap)[0-9]+! runtime\.goexit!$')
	check "go$v: $1 complete worker stacks, all of the one possible shape ($2 wrong; with --all-frames $3, $4 wrong; $torn of $listed dropped as torn, $unlinked of them by their stacks)" \
		test "$1" -ge 500 -a "$2" = 0 -a "$3" -ge 200 -a "$4" = 0
	check "go$v: peak RSS of goroutines under 64 MB ($maxkb KB)" test "$maxkb" -gt 0 -a "$maxkb" -lt 65536

	gbin=$T/garbageg-$v
	if ! go_build "$v" plain "$TOP_SRCDIR/tests/workloads/go/garbageg" "$gbin" >"$T/gb.err" 2>&1; then
		skip_n 3 "go$v: garbageg does not build: $(head -1 "$T/gb.err")"
		continue
	fi
	"$gbin" -d 60s -info "$T/ginfo-$v" >/dev/null 2>&1 &
	gpid=$!
	track $gpid
	i=0
	while [ ! -s "$T/ginfo-$v" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	fails=0
	esc=0
	okmany=0
	i=0
	while [ $i -lt 10 ]; do
		i=$((i + 1))
		if ! "$GOTOP_PERF" goroutines -p $gpid --json >"$T/g.json" 2>"$T/g.err" ||
			! "$GOTOP_PERF" goroutines -p $gpid --labels >"$T/g.txt" 2>>"$T/g.err" ||
			! jq -e . "$T/g.json" >/dev/null 2>&1; then
			fails=$((fails + 1))
			diag_file "$T/g.err"
			continue
		fi
		LC_ALL=C grep -q "$(printf '\033')" "$T/g.json" "$T/g.txt" && esc=$((esc + 1))
		n=$(jq -r 'select(.labels.handler == "ok") | .id' "$T/g.json" | wc -l)
		[ "$n" -gt 1 ] && okmany=$((okmany + 1))
	done
	kill -9 $gpid 2>/dev/null
	wait $gpid 2>/dev/null
	check "go$v garbageg: 10 snapshots of goroutines with garbage labels succeed ($fails failed)" \
		test "$fails" = 0
	check "go$v garbageg: no escape byte of the target reaches the output ($esc runs did)" \
		test "$esc" = 0
	check "go$v garbageg: handler=ok only on the control goroutine ($okmany runs gave it to more)" \
		test "$okmany" = 0
done
finish
