#!/bin/sh
# gosnap.sh: the cost of one snapshot of every goroutine (gotop-perf goroutines, the
# Goroutines view) at 100, 10,000 and 100,000 goroutines, and the target's slowdown while it
# is read at 10 Hz. Usage (from a build directory): sh ../bench/gosnap.sh [GO_VERSION]
#
# The target is bench/gomany.go: N goroutines parked 8 calls deep, half under pprof labels
# (a set of their own each, as pprof.Do makes per request), and one goroutine counting loop
# iterations. bench/gosnap.c takes 11 snapshots 100 ms apart and prints the CPU time of each
# (CLOCK_PROCESS_CPUTIME_ID); the first, which decodes every label set, is reported apart.
# Slowdown, side by side: two such targets of 10,000 goroutines run at once; one is read at
# 10 Hz for 10 s. Per round, (read target's rate / other's) in those 10 s over the same ratio
# in the 10 s before; the median of 3 rounds. 1.000 is no slowdown.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
builddir=$(pwd)
ver=${1:-1.23}
work=$(mktemp -d /tmp/gotop-gosnap.XXXXXX)
trap 'kill $gp 2>/dev/null; rm -rf "$work"' EXIT INT TERM
gp=
[ -f "$builddir/libgotop.a" ] || { echo "run from a build directory" >&2; exit 1; }
libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF|CAPSTONE|LIBPFM)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
	"$builddir/Makefile")
# shellcheck disable=SC2086 # a list of linker flags
${CC:-cc} -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/gosnap" \
	"$here/gosnap.c" "$builddir/libgotop.a" $libs -lpthread || exit 1
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gomany.go" "$work/gomany" || exit 1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)], "(" v[1], "to", v[NR] ")" }'; }

for n in 100 10000 100000; do
	"$work/gomany" $n >"$work/out" &
	gp=$!
	while ! grep -q ready "$work/out"; do sleep 0.2; done
	"$work/gosnap" $gp 11 >"$work/snap" || exit 1
	first=$(awk '/^snap/ { print $4; exit }' "$work/snap")
	steady=$(awk '/^snap/ && NR > 2 { print $4 }' "$work/snap" | median)
	name=$(awk '/^name/ { print $5 }' "$work/snap")
	echo "$n goroutines: snapshot CPU ms: first $first, then $steady; naming the first: $name ms"
	echo "   $(awk '/^snap/ { print $7, "readvs,", $9, "bytes,", $11, "torn"; exit }' "$work/snap")"
	if [ $n = 10000 ]; then
		"$work/gomany" $n >"$work/out2" &
		gp2=$!
		while ! grep -q ready "$work/out2"; do sleep 0.2; done
		ratios=""
		for r in 1 2 3; do
			sleep 10.5
			a0=$(tail -10 "$work/out" | awk '{ s += $2 } END { print s }')
			b0=$(tail -10 "$work/out2" | awk '{ s += $2 } END { print s }')
			"$work/gosnap" $gp 100 >/dev/null
			a1=$(tail -10 "$work/out" | awk '{ s += $2 } END { print s }')
			b1=$(tail -10 "$work/out2" | awk '{ s += $2 } END { print s }')
			ratios="$ratios $(echo "$a1 $b1 $a0 $b0" | awk '{ printf "%.3f", ($1 / $2) / ($3 / $4) }')"
		done
		kill $gp2
		echo "   target's work rate while read at 10 Hz, side by side: $(echo $ratios | tr ' ' '\n' | median)"
	fi
	kill $gp
	wait $gp 2>/dev/null
done
