#!/bin/bash
# gobpf.sh: what reading goroutines and labels costs per sample, with the BPF program
# (src/go/bpf/gobpf.bpf.c: g, m and m.curg read in the kernel at each sample) and without it
# (--no-bpf: read by the sampling thread after each drain), on the labels workload.
# Not part of make check. Needs root (the program, and kernel.bpf_stats_enabled for its
# run time).
#
# Usage: bench/gobpf.sh [--rates 1000,10000] [--rounds 5] [--seconds 4] [--go 1.23]
#                       [--gotop PATH] [--work DIR]
#
# Method: the labels workload (2 workers, a new pprof.Do every ~1 ms) runs alone; gotop-perf
# record attaches to it by PID at each rate in four configurations, rotated
# from round to round: bpf (the default), nobpf (--no-bpf), nogo (--no-go: no Go reading)
# and none (--no-go --no-repair). gotop-perf's own CPU time is the CPU time of its threads
# (/proc/PID/task/*/schedstat) over --seconds of steady state: from 1 s after it starts (symbol tables
# and the program loaded) to 1 s before it stops. Per sample:
#   Go reading, user part   (CPU of the configuration - CPU of nogo, same round) / its samples
#   Go reading, kernel part the program's run time per run (bpf_prog_info.run_time_ns /
#                           run_cnt, with kernel.bpf_stats_enabled=1), spent in the target's
#                           context at each sample
#   repair                  (CPU of nogo - CPU of none, same round) / samples of nogo
# Output: one line per run in DIR/raw.tsv, and medians per rate and configuration.
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
rates=1000,10000
rounds=5
seconds=4
gover=1.23
gotop=${GOTOP_PERF:-./gotop-perf}
work=
while [ $# -gt 0 ]; do
	case $1 in
	--rates) rates=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--go) gover=$2; shift ;;
	--gotop) gotop=$2; shift ;;
	--work) work=$2; shift ;;
	*) echo "usage: bench/gobpf.sh [--rates R] [--rounds N] [--seconds S] [--go V] [--gotop P] [--work D]" >&2; exit 2 ;;
	esac
	shift
done
[ "$(id -u)" -eq 0 ] || { echo "bench/gobpf.sh: needs root" >&2; exit 1; }
gotop=$(cd "$(dirname "$gotop")" && pwd)/$(basename "$gotop")
[ -x "$gotop" ] || { echo "bench/gobpf.sh: no gotop-perf at $gotop" >&2; exit 1; }
work=${work:-$(mktemp -d /tmp/gotop-gobpf.XXXXXX)}
mkdir -p "$work"
GOROOT_=$("$src/tests/helpers/go-toolchain.sh" "$gover") || { echo "bench/gobpf.sh: no Go $gover" >&2; exit 1; }
GOROOT=$GOROOT_ GOTOOLCHAIN=local GO111MODULE=off GOCACHE=$work/gocache \
	"$GOROOT_/bin/go" build -o "$work/labels" "$src/tests/workloads/go/labels.go" || exit 1

old_stats=$(cat /proc/sys/kernel/bpf_stats_enabled)
echo 1 >/proc/sys/kernel/bpf_stats_enabled
trap 'echo "$old_stats" >/proc/sys/kernel/bpf_stats_enabled; kill $wpid 2>/dev/null' EXIT

raw=$work/raw.tsv
{
	echo "# $(nproc) CPUs, kernel $(uname -r), loadavg at start $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
	printf 'rate\tcfg\tround\tcpu_ms\tsamples\tmatched\tafter\tbpf_runs\tbpf_ns_per_run\tpurity\n'
} >"$raw"
# cpu_ns PID: "TID NS" per thread of the process: CPU time so far in ns (schedstat's first
# field: nanoseconds, where /proc/PID/stat has 10 ms ticks).
cpu_ns() { for f in /proc/"$1"/task/*/schedstat; do t=${f%/schedstat}; echo "${t##*/} $(cut -d' ' -f1 "$f" 2>/dev/null)"; done; }
wpid=
for rate in ${rates//,/ }; do
	for round in $(seq 1 "$rounds"); do
		set -- bpf nobpf nogo none
		for _ in $(seq 2 "$round"); do set -- "${@:2}" "$1"; done # rotate
		for cfg in "$@"; do
			case $cfg in bpf) extra= ;; nobpf) extra=--no-bpf ;; nogo) extra=--no-go ;;
			none) extra="--no-go --no-repair" ;; esac
			"$work/labels" -workers 2 -d "$((seconds + 4))s" >/dev/null 2>&1 &
			wpid=$!
			sleep 0.5
			# shellcheck disable=SC2086
			"$gotop" record -v $extra -F "$rate" -d "$((seconds + 2))" -p "$wpid" \
				-o "$work/p.pb.gz" >"$work/out" 2>&1 &
			gpid=$!
			sleep 1
			c0=$(cpu_ns "$gpid")
			sleep "$seconds"
			c1=$(cpu_ns "$gpid")
			wait "$gpid"
			wait "$wpid"
			# Threads present at both ends (a thread that ends takes its time along).
			cpu=$(printf '%s\n--\n%s\n' "$c0" "$c1" | awk '$1 == "--" { e = 1; next }
				!e { a[$1] = $2; next } ($1 in a) && $2 != "" { t += $2 - a[$1] } END { printf "%.1f", t / 1e6 }')
			# Samples in the measured window: the run's, in proportion (a steady rate).
			samples=$(sed -n 's/.*cpu-clock: \([0-9]*\) samples, .*, \([0-9.]*\) s ->.*/\1 \2/p' "$work/out" |
				awk -v s="$seconds" '{ printf "%d", $1 * s / $2 }')
			matched=$(sed -n 's/.* \([0-9]*\) samples matched.*/\1/p' "$work/out")
			after=$(sed -n 's/.* \([0-9]*\) read after.*/\1/p' "$work/out")
			runs=$(sed -n 's/.*BPF program: \([0-9]*\) runs, \([0-9]*\) ns per run.*/\1/p' "$work/out")
			nsr=$(sed -n 's/.*BPF program: \([0-9]*\) runs, \([0-9]*\) ns per run.*/\2/p' "$work/out")
			pur=NA
			[ "${cfg#no}" = "$cfg" ] || [ "$cfg" = nobpf ] && pur=$(GOROOT=$GOROOT_ GOTOOLCHAIN=local HOME=$work PPROF_TMPDIR=$work \
				"$GOROOT_/bin/go" tool pprof -top -relative_percentages -tagfocus=handler=gamma \
				"$work/p.pb.gz" 2>/dev/null | awk '$NF == "main.gammaWork" { print $2 + 0 }')
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rate" "$cfg" "$round" "${cpu:-NA}" \
				"${samples:-NA}" "${matched:-NA}" "${after:-NA}" "${runs:-0}" "${nsr:-NA}" "${pur:-NA}" >>"$raw"
			echo "rate $rate round $round $cfg: cpu ${cpu} ms, ${samples} samples, bpf ${nsr:-NA} ns/run, purity ${pur}%" >&2
		done
	done
done
# Medians, and the per-sample cost against nogo of the same round.
awk -F'\t' '
function med(list,   n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	if (n == 0) return "NA"
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
/^#/ || $1 == "rate" { next }
{ cpu[$1, $2, $3] = $4; smp[$1, $2, $3] = $5; ns[$1, $2, $3] = $9; pur[$1, $2, $3] = $10; rates[$1]; rnd[$3] }
END {
	printf "| rate | config | gotop-perf CPU, ms/s | Go reading, user, us/sample | Go reading, BPF in kernel, us/sample | repair, us/sample | Go reading + repair, us/sample | purity (1 ms units), %% |\n"
	printf "|---|---|---|---|---|---|---|---|\n"
	for (r in rates) for (c = 1; c <= 2; c++) {
		cfg = c == 1 ? "bpf" : "nobpf"
		lc = ""; lu = ""; lk = ""; lr = ""; lt = ""; lp = ""
		for (k in rnd) {
			if (!((r, cfg, k) in cpu) || !((r, "nogo", k) in cpu) || !((r, "none", k) in cpu) ||
			    smp[r, cfg, k] + 0 == 0 || smp[r, "nogo", k] + 0 == 0) continue
			u = (cpu[r, cfg, k] - cpu[r, "nogo", k]) * 1000 / smp[r, cfg, k]
			kn = cfg == "bpf" && ns[r, cfg, k] != "NA" ? ns[r, cfg, k] / 1000 : 0
			rp = (cpu[r, "nogo", k] - cpu[r, "none", k]) * 1000 / smp[r, "nogo", k]
			lc = lc " " cpu[r, cfg, k] / SECONDS; lu = lu " " u; lk = lk " " kn; lr = lr " " rp
			lt = lt " " (u + kn + rp); lp = lp " " pur[r, cfg, k]
		}
		printf "| %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", r, cfg, med(lc), med(lu), med(lk), med(lr), med(lt), med(lp)
	}
}' SECONDS="$seconds" "$raw"
echo "raw figures: $raw" >&2
