#!/bin/bash
# owncpu-pair.sh: the profiler's own CPU, for comparing two builds: both attached at once to
# the same busy workload, so that they see the same samples and the same machine. Rounds
# run one after the other (owncpu.sh) differ by up to 20 % on this VM for one build; run
# side by side, two copies of one build differed by at most 6 % (A/A check below).
#
# Usage: bench/owncpu-pair.sh MODE KIND BINARY RATE ROUNDS GOTOP_A GOTOP_B
#   MODE   record or live (the live UI with --batch, refreshing every second)
#   KIND   c (BINARY is bench/spin.c built) or go (BINARY is labels.go built, 2 workers)
#   Each round: the workload starts, A and B attach (A first in odd rounds, B first in
#   even ones), 3 s are skipped, 12 s measured.
#   OWNCPU_THREADS (environment): a pattern of thread names (/proc/PID/task/TID/comm);
#   only those threads are counted, e.g. "gotop-sampler".
#   OWNCPU_RECORD_ARGS (environment): more options for both records, e.g. "--wall".
#   GOTOP_B may be the word perftop: `perf top -g --stdio` at the same event and rate (in
#   either MODE; A then runs as MODE says), run under script(1) for a terminal as in
#   owncpu.sh; perf's own threads are counted, not script's. Side by side, both see the same seconds of a VM whose speed
#   drifts by 20 % and more between the rounds owncpu.sh runs one after the other.
# Prints one line per round: "A a_ms_per_1000 B b_ms_per_1000 B/A ratio", each figure the
# profiler's CPU (its threads' schedstat) per 1000 samples of the workload (its CPU time
# times the rate; both sample the same cpu-clock of the same threads), then the median
# of the ratios.

set -u
mode=$1 kind=$2 bin=$3 rate=$4 rounds=$5 A=$6 B=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

. "$(dirname "$0")/cpulib.sh"

ratios=()
for r in $(seq 1 "$rounds"); do
	start_workload "$kind" "$bin"
	order="A B"
	[ $((r % 2)) = 0 ] && order="B A"
	declare -A pid=()
	for who in $order; do
		[ $who = A ] && g=$A || g=$B
		case $g:$mode in
		perftop:*) script -qfc "perf top -g --stdio -e cpu-clock -F $rate -p $w -d 1" \
			"$work/$who.top" </dev/null >/dev/null 2>&1 & ;;
		*:record) "$g" record -p $w -e cpu-clock -F "$rate" -o "$work/$who.pb.gz" -d 17 \
			${OWNCPU_RECORD_ARGS:-} >/dev/null 2>&1 & ;;
		*:live) "$g" -p $w -e cpu-clock -F "$rate" --batch -d 1 -n 17 >/dev/null 2>&1 & ;;
		esac
		pid[$who]=$!
	done
	sleep 3
	# perf top: perf, the child of script(1), is the one measured and signalled.
	for who in A B; do
		[ $who = A ] && g=$A || g=$B
		if [ "$g" = perftop ]; then
			kid=$(cat /proc/${pid[$who]}/task/*/children 2>/dev/null | awk '{print $1}')
			[ -n "$kid" ] && pid[$who]=$kid
		fi
	done
	a0=$(cpu_ns ${pid[A]} "${OWNCPU_THREADS:-}")
	b0=$(cpu_ns ${pid[B]} "${OWNCPU_THREADS:-}")
	w0=$(cpu_ns $w)
	sleep 12
	a1=$(cpu_ns ${pid[A]} "${OWNCPU_THREADS:-}")
	b1=$(cpu_ns ${pid[B]} "${OWNCPU_THREADS:-}")
	w1=$(cpu_ns $w)
	kill -INT ${pid[A]} ${pid[B]} 2>/dev/null
	kill $w 2>/dev/null
	wait 2>/dev/null
	line=$(round_line $((a1 - a0)) $((b1 - b0)) $((w1 - w0)) "$rate" A B B/A ba)
	echo "$line"
	ratios+=("$(echo "$line" | awk '{print $6}')")
done
printf '%s\n' "${ratios[@]}" | print_median 'B/A'
