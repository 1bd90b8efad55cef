#!/bin/bash
# verify-switches.sh: what crossing stack switches costs the verifier's stops: the time a
# thread of the target stays stopped, on a workload whose threads are often past a switch
# (tests/workloads/go/switches.go), with the build under test (--gotop: it reads the
# goroutine's state and up to 64 KB of its stack during the stop) and a build without it
# (--base, e.g. the commit before), side by side. Not part of make check. Needs ptrace.
#
# Usage: bench/verify-switches.sh --base PATH [--gotop PATH] [--rounds 3] [--seconds 15]
#                                 [--go 1.23] [--work DIR]
#
# Method: per round, one workload process; gotop-perf verify -p PID -d SECONDS --json with
# the defaults (20 comparisons a second), base and test build one after the other, in
# alternating order from round to round. Per run: comparisons, stop p50/p99 (us), share of
# wall time stopped; for the test build also the stops that read a goroutine (p50/p99) and
# the crossing comparisons. Output: DIR/raw.tsv and the medians per build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
rounds=3
seconds=15
gover=1.23
gotop=${GOTOP_PERF:-./gotop-perf}
base=
work=
while [ $# -gt 0 ]; do
	case $1 in
	--base) base=$2; shift ;;
	--gotop) gotop=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--go) gover=$2; shift ;;
	--work) work=$2; shift ;;
	*) echo "usage: bench/verify-switches.sh --base P [--gotop P] [--rounds N] [--seconds S] [--go V] [--work D]" >&2; exit 2 ;;
	esac
	shift
done
[ -n "$base" ] || { echo "verify-switches.sh: --base is required" >&2; exit 2; }
command -v jq >/dev/null || { echo "verify-switches.sh: needs jq" >&2; exit 1; }
work=${work:-$(mktemp -d)}
mkdir -p "$work"
bin=$work/switches-$gover
"$src/tests/helpers/go-build.sh" "$gover" cgo "$src/tests/workloads/go/switches.go" "$bin" || exit 1

raw=$work/raw.tsv
printf 'round\tbuild\tcomparisons\tp50_us\tp99_us\tshare_pct\tgor_stops\tgor_p50_us\tgor_p99_us\tother_p50_us\tother_p99_us\tcrossing\n' >"$raw"
run() { # ROUND NAME BINARY PID
	"$3" verify -q -p "$4" -d "$seconds" --json >"$work/$1-$2.json" 2>/dev/null
	jq -r --arg r "$1" --arg b "$2" '[$r, $b, .comparisons, .stops.p50_us, .stops.p99_us,
		.stops.stopped_share_pct, (.goroutine_stops.count // "-"), (.goroutine_stops.p50_us // "-"),
		(.goroutine_stops.p99_us // "-"), (.other_stops.p50_us // "-"), (.other_stops.p99_us // "-"),
		(.crossing.comparisons // "-")] | @tsv' "$work/$1-$2.json" >>"$raw"
}
for r in $(seq 1 "$rounds"); do
	"$bin" -d $((seconds * 2 + 30))s >/dev/null 2>&1 &
	pid=$!
	sleep 1
	if [ $((r % 2)) = 1 ]; then
		run "$r" base "$base" $pid
		run "$r" test "$gotop" $pid
	else
		run "$r" test "$gotop" $pid
		run "$r" base "$base" $pid
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
done
cat "$raw"
echo "medians:"
for b in base test; do
	awk -F'\t' -v b="$b" '
		function med(col,   n, i, j, t, v) { n = 0
			for (i = 1; i <= nr; i++) if (row[i, col] != "-") v[++n] = row[i, col] + 0
			for (i = 2; i <= n; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
			return n ? (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2) : "-" }
		NR > 1 && $2 == b { nr++; for (c = 3; c <= 12; c++) row[nr, c] = $c }
		END { printf "%s: comparisons %s, stop p50 %s us, p99 %s us, stopped %s%%; reading a goroutine: %s stops, p50 %s us, p99 %s us; others p50 %s us, p99 %s us; crossing %s\n",
			b, med(3), med(4), med(5), med(6), med(7), med(8), med(9), med(10), med(11), med(12) }' "$raw"
done
