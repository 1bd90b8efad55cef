#!/bin/sh
# gomem.sh: the CPU cost of reading a Go process's heap profile from outside (gotop-perf
# pprof heap, record --heap) at 1,000, 10,000 and 100,000 buckets. Usage (from a build
# directory): sh ../bench/gomem.sh [GO_VERSION].
#
# The target is bench/gobuckets.go: N distinct allocation stacks, every allocation
# recorded, published by a GC cycle, then idle. bench/gomem.c reads the heap list 11 times
# 100 ms apart and prints the CPU time of each read (CLOCK_PROCESS_CPUTIME_ID, the system
# calls included); the median of the last ten is reported (the first read, whose buffers are new, is in the range), and the CPU of making and
# gzipping the /debug/pprof/heap answer once (which names every distinct pc).
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
builddir=$(pwd)
ver=${1:-1.23}
work=$(mktemp -d /tmp/gotop-gomem.XXXXXX)
trap 'kill $gp 2>/dev/null; rm -rf "$work"' EXIT INT TERM
gp=
[ -f "$builddir/libgotop.a" ] || { echo "run from a build directory" >&2; exit 1; }
libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF|CAPSTONE|LIBPFM)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
	"$builddir/Makefile")
# shellcheck disable=SC2086 # a list of linker flags
${CC:-cc} -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/gomem" \
	"$here/gomem.c" "$builddir/libgotop.a" $libs -lpthread -lm -lstdc++ || exit 1
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gobuckets.go" "$work/gobuckets" || exit 1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)], "(" v[1], "to", v[NR] ")" }'; }

for n in 1000 10000 100000; do
	"$work/gobuckets" $n >"$work/out" &
	gp=$!
	while ! grep -q ready "$work/out"; do sleep 0.2; done
	"$work/gomem" $gp 11 >"$work/read" || exit 1
	steady=$(awk '/^read/ && NR > 1 { print $4 }' "$work/read" | median)
	echo "$n buckets (read $(awk '/^read/ { print $2; exit }' "$work/read")): read CPU ms $steady"
	echo "   $(awk '/^read/ { print $7, "readvs,", $9, "bytes,", $11, "dropped,", $13, "tries"; exit }' "$work/read");" \
		"the answer: $(awk '/^profile/ { print $2, "ms CPU,", $5, "bytes" }' "$work/read")"
	kill $gp
	wait $gp 2>/dev/null
done
