#!/bin/sh
# memlive.sh: the CPU the live memory views cost: gotop-perf --batch on the heap profile's
# inuse_space (Top, every second) against the same run with --no-memory, side by side, on
# bench/gobuckets.go with N buckets (default 50,000) and a GC cycle every MS ms (default
# 1000: the runtime publishes a changed profile each second). Usage (from a build
# directory): [WARM=30] sh ../bench/memlive.sh [N] [MS] [SECONDS] [ROUNDS] [GO_VERSION].
#
# Each run's CPU is gotop-perf's user + system time, all its threads, from /proc/PID/stat
# between WARM seconds after the start (the first read, which names every pc, and the
# symbol tables are behind) and WARM + SECONDS; the figure is the median over ROUNDS of the
# difference (memory on minus off), in % of a core.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
n=${1:-50000} ms=${2:-1000} secs=${3:-90} rounds=${4:-2} ver=${5:-1.23} warm=${WARM:-30}
work=$(mktemp -d /tmp/gotop-memlive.XXXXXX)
gp=
trap 'kill $gp 2>/dev/null; rm -rf "$work"' EXIT INT TERM
[ -x ./gotop-perf ] || { echo "run from a build directory" >&2; exit 1; }
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gobuckets.go" "$work/gobuckets" || exit 1
"$work/gobuckets" "$n" "$ms" >"$work/out" &
gp=$!
while ! grep -q ready "$work/out"; do sleep 0.2; done

cpu() { awk '{ sub(/^.*\) /, ""); print ($12 + $13) / 100 }' "/proc/$1/stat"; }
run() { # OPTIONS...: gotop-perf's CPU seconds over SECONDS after WARM
	./gotop-perf -p $gp --batch --view top --rows 25 -n $((warm + secs + 5)) "$@" \
		>"$work/batch" 2>/dev/null &
	lp=$!
	sleep "$warm"
	c0=$(cpu $lp)
	sleep "$secs"
	c1=$(cpu $lp)
	kill $lp
	wait $lp 2>/dev/null
	awk -v a="$c0" -v b="$c1" 'BEGIN { print b - a }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)], "(" v[1], "to", v[NR] ")" }'; }

r=0
while [ $r -lt "$rounds" ]; do
	on=$(run --sample-index inuse_space)
	cyc=$(awk '/^heap profile of GC cycle/ { c[$6] = 1 } END { print length(c) }' "$work/batch")
	off=$(run --no-memory)
	echo "round $r: on ${on}s off ${off}s over ${secs}s after ${warm}s; $cyc distinct GC cycles shown" >&2
	awk -v a="$on" -v b="$off" -v s="$secs" 'BEGIN { printf "%.2f\n", (a - b) / s * 100 }' >>"$work/diff"
	r=$((r + 1))
done
echo "$n buckets, a GC cycle every $ms ms, $secs s after $warm s: memory views cost $(median <"$work/diff") % of a core"
