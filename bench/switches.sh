#!/bin/bash
# switches.sh: what copying a suspended goroutine's state at the sample costs the BPF program
# (src/go/bpf/gobpf.bpf.c read_cont: g.sched, four stack words, a frame-pointer walk of up to
# 40 frames), measured as the program's run time per run, on a workload whose samples are
# often beyond a stack switch (tests/workloads/go/switches.go) and on one whose samples
# never are (labels.go). Not part of make check. Needs root (the program, and
# kernel.bpf_stats_enabled for its run time).
#
# Usage: bench/switches.sh --base PATH [--gotop PATH] [--rounds 5] [--seconds 4] [--go 1.23]
#                          [--rate 1000] [--work DIR]
#
# Method: each workload runs alone; gotop-perf record -v attaches to it by PID, the build
# under test (--gotop) and a build without the copy (--base, e.g. the parent commit), one
# after the other on the same workload process and in alternating order from round to
# round, so both see the same machine. Per run: the program's ns per run (bpf_prog_info
# run_time_ns / run_cnt), the samples, and how many samples got a suspended goroutine's
# state. Output: one line per run in DIR/raw.tsv, medians per workload and build.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
rounds=5
seconds=4
gover=1.23
rate=1000
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
	--rate) rate=$2; shift ;;
	--work) work=$2; shift ;;
	*) echo "usage: bench/switches.sh --base P [--gotop P] [--rounds N] [--seconds S] [--go V] [--rate R] [--work D]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench/switches.sh: needs root" >&2; exit 1; }
[ -x "$base" ] || { echo "bench/switches.sh: --base: no gotop-perf at '$base'" >&2; exit 1; }
[ -x "$gotop" ] || { echo "bench/switches.sh: no gotop-perf at $gotop" >&2; exit 1; }
work=${work:-$(mktemp -d /tmp/gotop-switches.XXXXXX)}
mkdir -p "$work"
"$src/tests/helpers/go-build.sh" "$gover" cgo "$src/tests/workloads/go/switches.go" "$work/switches" || exit 1
"$src/tests/helpers/go-build.sh" "$gover" plain "$src/tests/workloads/go/labels.go" "$work/labels" || exit 1

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
wpid=
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; [ -n "$wpid" ] && kill $wpid 2>/dev/null' EXIT

raw=$work/raw.tsv
{
	echo "# $(nproc) CPUs, kernel $(uname -r), loadavg at start $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
	printf 'workload\tbuild\tround\tns_per_run\tsamples\tconts\n'
} >"$raw"
for wl in switches labels; do
	for round in $(seq 1 "$rounds"); do
		case $wl in
		switches) "$work/switches" -d "$((2 * seconds + 6))s" >/dev/null 2>&1 & ;;
		labels) "$work/labels" -workers 2 -d "$((2 * seconds + 6))s" >/dev/null 2>&1 & ;;
		esac
		wpid=$!
		sleep 1
		order="test base"
		[ $((round % 2)) -eq 0 ] && order="base test"
		for b in $order; do
			bin=$gotop
			[ "$b" = base ] && bin=$base
			"$bin" record -v -F "$rate" -d "$seconds" -p "$wpid" -o "$work/p.pb.gz" >"$work/out" 2>&1
			nsr=$(sed -n 's/.*BPF program: [0-9]* runs, \([0-9]*\) ns per run.*/\1/p' "$work/out")
			smp=$(sed -n 's/.*cpu-clock: \([0-9]*\) samples.*/\1/p' "$work/out")
			conts=$(sed -n "s/.* \([0-9]*\) with a suspended goroutine's state.*/\1/p" "$work/out")
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$b" "$round" "${nsr:-NA}" "${smp:-NA}" "${conts:-0}" >>"$raw"
			echo "$wl round $round $b: ${nsr:-NA} ns per run, ${smp:-NA} samples, ${conts:-0} with state" >&2
		done
		wait "$wpid"
		wpid=
	done
done
awk -F'\t' '
function med(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	if (n == 0) return "NA"
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^#/ || $1 == "workload" || $4 == "NA" { next }
{ ns[$1, $2] = ns[$1, $2] " " $4; sh[$1, $2] = sh[$1, $2] " " ($5 ? 100 * $6 / $5 : 0); wls[$1] }
END {
	printf "| workload | build | program, ns per run | samples with a suspended goroutine, %% |\n|---|---|---|---|\n"
	for (w in wls) for (b = 1; b <= 2; b++) {
		bn = b == 1 ? "base" : "test"
		printf "| %s | %s | %.0f | %.1f |\n", w, bn, med(ns[w, bn]), med(sh[w, bn])
	}
}' "$raw"
echo "raw figures: $raw" >&2
