#!/bin/bash
# attach.sh: time to the first data: from starting `gotop-perf -p PID --batch` to the
# first refresh that shows the target's hot function by name, on a running target.
#
# Usage: bench/attach.sh GOTOP PID FUNC [ROUNDS] [REFRESH] [EXTRA...]
#   FUNC     the hot function's name as the Top view prints it (e.g. main.hot)
#   ROUNDS   attaches, one after the other (default 5)
#   REFRESH  gotop-perf's -d (default: none given, so gotop-perf's default)
# Prints one line per round: "round=N first_output_ms=A first_symbol_ms=B cpu_ms=C",
# where A is the first line of any output, B the first line naming FUNC, both from just
# before gotop-perf is started, and C gotop-perf's CPU time up to B (from schedstat).

set -u
gotop=$1
pid=$2
func=$3
rounds=${4:-5}
refresh=${5:-}
shift 5 2>/dev/null || shift $#
extra=("$@")

dopt=()
[ -n "$refresh" ] && dopt=(-d "$refresh")
out=$(mktemp /tmp/attach.XXXXXX)
for r in $(seq 1 "$rounds"); do
	t0=$EPOCHREALTIME
	coproc GP { exec "$gotop" -p "$pid" --batch "${dopt[@]}" -n 60 --view top --rows 15 "${extra[@]}" 2>/dev/null; }
	gpid=$GP_PID
	first=
	sym=
	cpu=NA
	while IFS= read -r -t 30 line <&"${GP[0]}"; do
		now=$EPOCHREALTIME
		[ -z "$first" ] && first=$now
		case $line in *"$func"*)
			sym=$now
			cpu=$(cat /proc/"$gpid"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.1f", s / 1e6 }')
			break ;;
		esac
	done
	kill -INT "$gpid" 2>/dev/null
	wait "$gpid" 2>/dev/null
	awk -v t0="$t0" -v a="$first" -v b="$sym" -v r="$r" -v c="$cpu" 'BEGIN {
		printf "round=%d first_output_ms=%s first_symbol_ms=%s cpu_ms=%s\n", r,
			(a == "" ? "NA" : sprintf("%.1f", (a - t0) * 1000)),
			(b == "" ? "NA" : sprintf("%.1f", (b - t0) * 1000)), c }'
	sleep 0.5
done
rm -f "$out"
