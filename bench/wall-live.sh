#!/bin/bash
# wall-live.sh: the live UI's cost of its wall-clock sampler (src/session/wall.c) on a Go
# target of N goroutines (bench/gomany.go: parked 8 calls deep, half labelled). Per round,
# two copies of the UI attach side by side to one target (A with the sampler at --wall-hz 10,
# given, so not lowered to the default's 5% of a core; B with --no-wall; the order alternates), both in --batch printing the Wall mode and
# Labels every second; 4 s are skipped (the first snapshot decodes every label set), 15 s
# measured. Prints per round each one's CPU in ms per second (its threads' schedstat), the
# sampler thread's own (threads named gotop-wall), and A - B; then the medians.
# Usage (from a build directory): bench/wall-live.sh [N] [ROUNDS] [GO_VERSION]
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
n=${1:-10000} rounds=${2:-3} ver=${3:-1.27}
gp=$(pwd)/gotop-perf
[ -x "$gp" ] || { echo "run from a build directory" >&2; exit 1; }
work=$(mktemp -d /tmp/gotop-wall-bench.XXXXXX)
trap 'kill $t $a $b 2>/dev/null; rm -rf "$work"' EXIT INT TERM
t= a= b=
. "$here/cpulib.sh"
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gomany.go" "$work/gomany" || exit 1

for r in $(seq 1 "$rounds"); do
	"$work/gomany" "$n" >"$work/out" &
	t=$!
	while ! grep -q ready "$work/out"; do sleep 0.2; done
	if [ $((r % 2)) = 1 ]; then
		"$gp" -p $t --batch -d 1 --wall-hz 10 --view goroutines-wall,labels >/dev/null 2>&1 &
		a=$!
		"$gp" -p $t --batch -d 1 --no-wall --view goroutines-wall,labels >/dev/null 2>&1 &
		b=$!
	else
		"$gp" -p $t --batch -d 1 --no-wall --view goroutines-wall,labels >/dev/null 2>&1 &
		b=$!
		"$gp" -p $t --batch -d 1 --wall-hz 10 --view goroutines-wall,labels >/dev/null 2>&1 &
		a=$!
	fi
	sleep 4
	a0=$(cpu_ns $a) b0=$(cpu_ns $b) s0=$(cpu_ns $a gotop-wall)
	sleep 15
	a1=$(cpu_ns $a) b1=$(cpu_ns $b) s1=$(cpu_ns $a gotop-wall)
	kill $a $b $t 2>/dev/null
	wait $a $b $t 2>/dev/null
	awk -v a=$((a1 - a0)) -v b=$((b1 - b0)) -v s=$((s1 - s0)) 'BEGIN {
		printf "round wall %.1f no-wall %.1f sampler %.1f diff %.1f ms/s\n",
			a / 15e6, b / 15e6, s / 15e6, (a - b) / 15e6 }' | tee -a "$work/rounds"
done
for k in 3 5 7 9; do
	awk -v k=$k '{ print $k }' "$work/rounds" | print_median "$(awk -v k=$k 'NR == 1 { print $(k - 1) }' "$work/rounds")"
done
