#!/bin/sh
# goroutines-slowdown.sh: the target's slowdown while all its goroutines are read at 10 Hz.
# Usage (from a build directory): sh ../bench/goroutines-slowdown.sh [GO_VERSION [PAIRS]]
# Environment: N goroutines (default 10000).
#
# The target is bench/gomany.go N chunks SECONDS: N goroutines parked 8 calls deep, half
# under pprof labels, and one goroutine locked to its thread doing fixed chunks of work
# (about 20 ms each) and noting each chunk's wall-clock span and CPU time, until the script
# tells it to stop (SIGUSR1). The reader is
# attached all along but runs only in every other second: the script stops it (SIGSTOP)
# and lets it go on (SIGCONT) in turns, PAIRS times (default 30), and notes the windows.
# Readers, one run each:
#   none   sleep(1): nothing read; the method's own error (1.000 expected);
#   snap   bench/gosnap.c: gosnap_take every 100 ms and nothing else (the snapshot alone,
#          as the Goroutines view and record --wall make it);
#   wall   gotop-perf record --wall --wall-hz 10 -F 1 (the wall-clock profiler, with CPU
#          sampling at 1 Hz so that it does not count).
#   heap   bench/gomem.c: the heap profile's buckets read every 100 ms (the live memory
#          views read them once per GC cycle, paced to 0.5% of a core: this is far more),
#          with HEAP_BUCKETS buckets in the target (GOMANY_BUCKETS, default 50000).
# Readers: READERS (default "none snap wall").
# The first snapshot (every label set decoded) is taken 2 s before the work starts.
#
# Why windows and not whole runs: on a shared machine the same work's CPU time drifts by
# several % from minute to minute (other load sharing caches and memory), so runs with and
# without a reader, a minute apart, resolve a slowdown of 3 % at best. Each window with the
# reader is compared with the two windows without it on either side, a second away; the
# drift cancels, and the median over PAIRS windows resolves a fraction of a %.
# Per window with the reader: the mean CPU time of its chunks over the mean of the chunks in
# the two neighbouring windows (what the work itself cost: the figure that holds on a busy
# machine), and the same for the chunks' wall time (which also counts the CPU the reader
# took from the target when no CPU was free). Chunks within 50 ms of a switch are left out.
# Printed: median, quartiles, and mean +- twice its standard error; 1.000 is no slowdown.
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
builddir=$(pwd)
ver=${1:-1.23}
pairs=${2:-30}
n=${N:-10000}
work=$(mktemp -d /tmp/gotop-gslow.XXXXXX)
tp=
rp=
trap 'kill -CONT $rp 2>/dev/null; kill $tp $rp 2>/dev/null; rm -rf "$work"' EXIT INT TERM
[ -x "$builddir/gotop-perf" ] && [ -f "$builddir/libgotop.a" ] ||
	{ echo "run from a build directory" >&2; exit 1; }
libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF|CAPSTONE|LIBPFM)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
	"$builddir/Makefile")
# shellcheck disable=SC2086 # a list of linker flags
${CC:-cc} -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/gosnap" \
	"$here/gosnap.c" "$builddir/libgotop.a" $libs -lpthread || exit 1
# shellcheck disable=SC2086
${CC:-cc} -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/gomem" \
	"$here/gomem.c" "$builddir/libgotop.a" $libs -lpthread -lm || exit 1
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$here/gomany.go" "$work/gomany" || exit 1

# ticks PID: the process's user + system CPU in clock ticks (proc(5) stat fields 14, 15).
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
hz=$(getconf CLK_TCK)

# run READER: one run; prints the ratios.
run() {
	secs=$((3 * pairs + 30)) # a bound: the script ends the work after the last window
	if [ "$1" = heap ]; then
		GOMANY_BUCKETS=${HEAP_BUCKETS:-50000} "$work/gomany" "$n" chunks "$secs" >"$work/t.out" &
	else
		"$work/gomany" "$n" chunks "$secs" >"$work/t.out" &
	fi
	tp=$!
	while ! grep -q ready "$work/t.out"; do sleep 0.1; done
	case $1 in
	none) sleep 100000 & rp=$! ;;
	snap) "$work/gosnap" "$tp" 1000000 >/dev/null 2>&1 & rp=$! ;;
	wall) "$builddir/gotop-perf" record -q -p "$tp" --wall --wall-hz 10 -F 1 \
		-o "$work/rec.pb.gz" >/dev/null 2>"$work/rec.err" & rp=$! ;;
	heap) "$work/gomem" "$tp" 1000000 >/dev/null 2>&1 & rp=$! ;;
	esac
	sleep 2
	kill -STOP "$rp"
	kill -USR1 "$tp"
	sleep 1
	: >"$work/win"
	# The reader's CPU over the windows (it runs in no other): read outside them, so that
	# the windows with the reader hold no more of the script's own work than the others.
	k0=$(ticks "$rp")
	i=0
	while [ $i -lt $((2 * pairs + 1)) ]; do
		t0=$(date +%s%N)
		if [ $((i % 2)) = 1 ]; then
			kill -CONT "$rp"
			sleep 1
			kill -STOP "$rp"
			echo "on $t0 $(date +%s%N)" >>"$work/win"
		else
			sleep 1
			echo "off $t0 $(date +%s%N)" >>"$work/win"
		fi
		i=$((i + 1))
	done
	on_ticks=$(($(ticks "$rp") - k0))
	kill -USR1 "$tp"
	wait "$tp"
	tp=
	kill -CONT "$rp"
	kill "$rp" 2>/dev/null
	wait "$rp" 2>/dev/null
	rp=
	cat "$work/win" "$work/t.out" | awk -v name="$1" -v on_ticks="$on_ticks" -v hz="$hz" -v pairs="$pairs" '
	$1 == "on" || $1 == "off" { w++; kind[w] = $1; ws[w] = $2 + 50e6; we[w] = $3; next }
	$1 == "chunk" {
		# the window holding the whole chunk, away from the switches
		for (k = 1; k <= w; k++)
			if ($2 >= ws[k] && $3 <= we[k]) {
				cpu[k] += $4; wall[k] += $3 - $2; nc[k]++
				break
			}
	}
	function sort(a, n,   i, j, t) {
		for (i = 2; i <= n; i++)
			for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	}
	function report(what, a, n,   i, s, ss, m, se) {
		sort(a, n)
		for (i = 1; i <= n; i++) { s += a[i]; ss += a[i] * a[i] }
		m = s / n
		se = n > 1 ? sqrt((ss - n * m * m) / (n - 1) / n) : 0
		printf "  %s: median %.4f (quartiles %.4f to %.4f), mean %.4f +- %.4f\n", what,
			a[int((n + 1) / 2)], a[int((n + 3) / 4)], a[int((3 * n + 1) / 4)], m, 2 * se
	}
	END {
		for (k = 2; k < w; k++) {
			if (kind[k] != "on" || !nc[k] || !nc[k - 1] || !nc[k + 1])
				continue
			off_cpu = (cpu[k - 1] / nc[k - 1] + cpu[k + 1] / nc[k + 1]) / 2
			off_wall = (wall[k - 1] / nc[k - 1] + wall[k + 1] / nc[k + 1]) / 2
			n++
			rc[n] = cpu[k] / nc[k] / off_cpu
			rw[n] = wall[k] / nc[k] / off_wall
			chunks += nc[k]
		}
		printf "%s: %d windows with the reader (of %d), %.0f chunks each, the reader %.1f%% of a core\n",
			name, n, pairs, chunks / (n ? n : 1), 100 * on_ticks / hz / pairs
		if (n) {
			report("worker CPU", rc, n)
			report("worker wall", rw, n)
		}
	}'
}

echo "$n goroutines, Go $ver, $pairs windows of 1 s with each reader; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for r in ${READERS:-none snap wall}; do
	run "$r"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
