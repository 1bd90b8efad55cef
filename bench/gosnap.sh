#!/bin/sh
# gosnap.sh: the cost of one snapshot of every goroutine (gotop-perf goroutines, the
# Goroutines view) at 100, 10,000 and 100,000 goroutines. Usage (from a build directory):
# sh ../bench/gosnap.sh [GO_VERSION]. The target's slowdown while read at 10 Hz is
# bench/goroutines-slowdown.sh's.
#
# The target is bench/gomany.go: N goroutines parked 8 calls deep, half under pprof labels
# (a set of their own each, as pprof.Do makes per request), and one goroutine counting loop
# iterations. bench/gosnap.c takes 11 snapshots 100 ms apart and prints the CPU time of each
# (CLOCK_PROCESS_CPUTIME_ID); the first, which decodes every label set, is reported apart.
# Then the same with a garbage collection before every snapshot (GOMANY_GC_MS): a label set
# cached at an address may have been freed since, so each is proved again.
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
	kill $gp
	wait $gp 2>/dev/null
	# The same with a garbage collection every 50 ms: every snapshot comes after one, and
	# each label set cached before it has to be proved again (it may have been freed).
	GOMANY_GC_MS=50 "$work/gomany" $n >"$work/out" &
	gp=$!
	while ! grep -q ready "$work/out"; do sleep 0.2; done
	"$work/gosnap" $gp 11 >"$work/snap" || exit 1
	gc=$(awk '/^snap/ && NR > 2 { print $4 }' "$work/snap" | median)
	echo "   after a GC cycle each: $gc ms; $(awk '/^snap/ && NR > 2 { t += $11; n++ } END { printf "%.0f torn per snapshot", t / n }' "$work/snap")"
	kill $gp
	wait $gp 2>/dev/null
done
