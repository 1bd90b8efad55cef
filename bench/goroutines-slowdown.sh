#!/bin/sh
# goroutines-slowdown.sh: the target's slowdown while all its goroutines are read at 10 Hz.
# Usage (from a build directory): sh ../bench/goroutines-slowdown.sh [GO_VERSION [ROUNDS]]
# Environment: N goroutines (default 10000), UNITS of work (default 1000000, about 2 s of CPU).
#
# The target is bench/gomany.go N UNITS: N goroutines parked 8 calls deep, half under pprof
# labels, then, at SIGUSR1, one goroutine (locked to its thread) doing a fixed amount of
# work; it prints the work's wall time, its thread's CPU time and the process's CPU time
# over the work, and exits. Each round runs it three times, in turn:
#   alone  nothing attached;
#   snap   bench/gosnap.c attached: gosnap_take every 100 ms and nothing else (the snapshot
#          alone, as the Goroutines view and record --wall make it);
#   wall   gotop-perf record --wall --wall-hz 10 -F 1 (the wall-clock profiler, with CPU
#          sampling at 1 Hz so that it does not count).
# The reader is attached 2 s before the work starts, so that its first snapshot (every label
# set decoded) is not in the window; the alone run waits the same 2 s. The order of the three
# rotates each round. Per round, the ratios snap/alone and wall/alone of: the worker's CPU
# time (what the work itself cost: the figure that holds on a busy machine), the process's
# CPU time, and the wall time (which also counts the CPU the reader took from the target:
# on a machine with fewer free CPUs than runnable threads it is mostly that). Median (min to
# max) over the rounds; 1.000 is no slowdown. Each reader runs under bench/cputime.c: its
# CPU over its life in % of one core.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
builddir=$(pwd)
ver=${1:-1.23}
rounds=${2:-7}
n=${N:-10000}
units=${UNITS:-1000000}
work=$(mktemp -d /tmp/gotop-gslow.XXXXXX)
tp=
rp=
trap 'kill $tp $rp 2>/dev/null; rm -rf "$work"' EXIT INT TERM
[ -x "$builddir/gotop-perf" ] && [ -f "$builddir/libgotop.a" ] ||
	{ echo "run from a build directory" >&2; exit 1; }
libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF|CAPSTONE|LIBPFM)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
	"$builddir/Makefile")
# shellcheck disable=SC2086 # a list of linker flags
${CC:-cc} -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/gosnap" \
	"$here/gosnap.c" "$builddir/libgotop.a" $libs -lpthread || exit 1
${CC:-cc} -O2 -o "$work/cputime" "$here/cputime.c" || exit 1
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gomany.go" "$work/gomany" || exit 1

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)], "(" v[1], "to", v[NR] ")" }'; }

# run MODE: one run of the target; appends "WALL WORKER_CPU PROCESS_CPU" (ns) to $work/t_MODE.
run() {
	"$work/gomany" "$n" "$units" >"$work/t.out" &
	tp=$!
	while ! grep -q ready "$work/t.out"; do sleep 0.1; done
	case $1 in
	snap) "$work/cputime" "$work/cpu" "$work/gosnap" "$tp" 1000000 >"$work/snap.out" \
		2>/dev/null & rp=$! ;;
	wall) "$work/cputime" "$work/cpu" "$builddir/gotop-perf" record -q -p "$tp" --wall \
		--wall-hz 10 -F 1 -o "$work/rec.pb.gz" >/dev/null 2>"$work/rec.err" & rp=$! ;;
	esac
	sleep 2
	kill -USR1 "$tp"
	wait "$tp"
	[ -n "$rp" ] && wait "$rp"
	tp=
	rp=
	if [ "$1" != alone ]; then
		sed -n 's/.*user=\([0-9.]*\) sys=\([0-9.]*\) wall=\([0-9.]*\).*/\1 \2 \3/p' "$work/cpu" |
			awk '{ printf "%.1f\n", 100 * ($1 + $2) / $3 }' >>"$work/cpu_$1"
	fi
	[ "$1" = snap ] && awk '/^snap/ && NR > 2 { print $4 }' "$work/snap.out" >>"$work/snapcpu"
	awk '/^done/ { print $2, $3, $4 }' "$work/t.out" >"$work/last"
	cat "$work/last" >>"$work/t_$1"
}

echo "$n goroutines, $units units, Go $ver, $rounds rounds; load average $(cut -d' ' -f1-3 /proc/loadavg)"
: >"$work/snapcpu"
r=0
while [ $r -lt "$rounds" ]; do
	case $((r % 3)) in
	0) order="alone snap wall" ;;
	1) order="snap wall alone" ;;
	*) order="wall alone snap" ;;
	esac
	for m in $order; do
		run $m
	done
	# one line per round: the three runs' wall and worker CPU, and the ratios to alone
	paste -d' ' "$work/t_alone" "$work/t_snap" "$work/t_wall" | tail -1 | awk -v r=$r '{
		printf "round %d: wall s / worker CPU s: alone %.3f / %.3f, snap %.3f / %.3f, wall %.3f / %.3f\n",
			r, $1 / 1e9, $2 / 1e9, $4 / 1e9, $5 / 1e9, $7 / 1e9, $8 / 1e9
		for (k = 1; k <= 3; k++) {
			print $(3 + k) / $k > "'"$work"'/r_snap_" k
			print $(6 + k) / $k > "'"$work"'/r_wall_" k
		}
	}'
	for k in 1 2 3; do
		cat "$work/r_snap_$k" >>"$work/rs$k"
		cat "$work/r_wall_$k" >>"$work/rw$k"
	done
	r=$((r + 1))
done
f() { awk '{ printf "%.4f\n", $1 }' "$1" | median; }
secs() { awk -v k="$1" '{ printf "%.3f\n", $k / 1e9 }' "$work/t_alone" | median; }
echo "alone: wall s $(secs 1), worker CPU s $(secs 2)"
echo "snap/alone: worker CPU $(f "$work/rs2"); process CPU $(f "$work/rs3"); wall $(f "$work/rs1")"
echo "wall/alone: worker CPU $(f "$work/rw2"); process CPU $(f "$work/rw3"); wall $(f "$work/rw1")"
echo "snapshot CPU ms (gosnap, steady state): $(median <"$work/snapcpu")"
echo "reader CPU, % of a core: snap $(median <"$work/cpu_snap"); wall $(median <"$work/cpu_wall")"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
