#!/bin/bash
# attach-cost.sh: what attaching to a busy Go process costs: the BPF program's load (wall and
# CPU time, instructions the kernel's verifier processed), the time to the live UI's first
# refresh naming the hot function (attach.sh), and a short `record`'s own CPU against perf
# record's. With --base, a second build is measured in the same rounds, in turn, so that the
# two are compared on the same machine state.
#
# Usage: bench/attach-cost.sh [--gotop PATH] [--base PATH] [--rounds N] [--go 1.23]
#                             [--seconds 0.3] [--work DIR]
#
# Method: bench/gospin.go (one labelled goroutine, busy) runs for the whole benchmark. Each
# round, for each build in turn: `record -v -p PID -d SECONDS` (its CPU time from wait4,
# bench/cputime.c; the load figures from its -v line), `perf record -g -p PID -- sleep
# SECONDS` (its CPU the same way), and bench/attach.sh's one attach. Medians over the rounds,
# with min and max. Needs root (the program, perf on another process).
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
gotop=${GOTOP_PERF:-./gotop-perf}
base=
rounds=7
gover=1.23
secs=0.3
work=
while [ $# -gt 0 ]; do
	case $1 in
	--gotop) gotop=$2; shift ;;
	--base) base=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--go) gover=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--work) work=$2; shift ;;
	*) echo "usage: bench/attach-cost.sh [--gotop P] [--base P] [--rounds N] [--go V] [--seconds S] [--work D]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench/attach-cost.sh: needs root" >&2; exit 1; }
work=${work:-$(mktemp -d /tmp/gotop-attach.XXXXXX)}
mkdir -p "$work"
"${CC:-cc}" -O2 -o "$work/cputime" "$here/cputime.c" || exit 1
"$src/tests/helpers/go-build.sh" "$gover" plain "$here/gospin.go" "$work/gospin" >/dev/null ||
	{ echo "bench/attach-cost.sh: cannot build gospin with Go $gover" >&2; exit 1; }
"$work/gospin" -n 1000000000 >/dev/null 2>&1 &
wpid=$!
trap 'kill $wpid 2>/dev/null' EXIT
sleep 0.5
have_perf=1
command -v perf >/dev/null 2>&1 || have_perf=0

# cpu_of OUT: user+sys seconds of the command cputime ran, in ms.
cpu_of() { sed -n 's/.*user=\([0-9.]*\) sys=\([0-9.]*\).*/\1 \2/p' "$1" | awk '{ printf "%.1f\n", ($1 + $2) * 1000 }'; }

raw=$work/raw.tsv
printf 'build\tround\tload_ms\tload_cpu_ms\tverified\trecord_cpu_ms\tperf_cpu_ms\tfirst_named_ms\tattach_cpu_ms\n' >"$raw"
for r in $(seq 1 "$rounds"); do
	for b in "$gotop" ${base:+"$base"}; do
		name=$([ "$b" = "$gotop" ] && echo new || echo base)
		"$work/cputime" "$work/ct" "$b" record -v -p $wpid -d "$secs" -o "$work/r.pb.gz" >/dev/null 2>"$work/rec.err"
		rc=$(cpu_of "$work/ct")
		set -- $(sed -n 's/.*BPF program loaded in \([0-9.]*\) ms (\([0-9.]*\) ms of CPU), \([0-9]*\) instructions.*/\1 \2 \3/p' "$work/rec.err") NA NA NA
		lw=$1 lc=$2 vi=$3
		pc=NA
		if [ $have_perf = 1 ]; then
			"$work/cputime" "$work/ct" perf record -q -g -p $wpid -o "$work/perf.data" -- sleep "$secs" >/dev/null 2>&1
			pc=$(cpu_of "$work/ct")
		fi
		set -- $("$here/attach.sh" "$b" $wpid main.leaf 1 | sed -n 's/.*first_symbol_ms=\([0-9.NA]*\) cpu_ms=\([0-9.NA]*\).*/\1 \2/p') NA NA
		printf '%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$r" "$lw" "$lc" "$vi" "$rc" "$pc" "$1" "$2" >>"$raw"
	done
done
echo "# $(nproc) CPUs, kernel $(uname -r), loadavg $(cut -d' ' -f1-3 /proc/loadavg), Go $gover, $rounds rounds ($raw)"
awk -F'\t' 'NR > 1 { for (c = 3; c <= 9; c++) if ($c != "NA") v[$1, c, ++n[$1, c]] = $c; b[$1] = 1 }
	function med(k, c,   i, j, t, m, a) {
		m = n[k, c]; if (!m) return "NA"
		for (i = 1; i <= m; i++) a[i] = v[k, c, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return sprintf("%s (%s to %s)", m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2, a[1], a[m])
	}
	END {
		split("x x load_ms load_cpu_ms verified record_cpu_ms perf_record_cpu_ms first_named_ms attach_cpu_ms", h, " ")
		for (k in b) for (c = 3; c <= 9; c++) printf "%s %s %s\n", k, h[c], med(k, c)
	}' "$raw" | sort
