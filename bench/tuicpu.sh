#!/bin/bash
# tuicpu.sh: the own CPU of the interactive screens: gotop-perf's live UI and perf
# top's own TUI (not --stdio), each in a tmux pane of 200x50, attached at once to the same busy
# workload at the same event, rate and refresh (1 s). The terminal is tmux's; tmux's CPU is
# counted for neither.
#
# Usage: bench/tuicpu.sh GOTOP KIND BINARY [RATE] [ROUNDS]
#   KIND   c (BINARY is bench/spin.c built) or go (BINARY is labels.go built, 2 workers)
#   Each round: the workload starts, both attach, 3 s are skipped, 12 s measured.
# Prints one line per round: "gotop MS perftop MS ratio R", each figure the tool's CPU (its
# threads' schedstat) per 1000 samples of the workload (its CPU time times the rate), R
# gotop-perf's over perf top's; then the median of R.

set -u
gotop=$1 kind=$2 bin=$3 rate=${4:-1000} rounds=${5:-5}
sock=gotop-tuicpu-$$
command -v tmux >/dev/null || { echo "SKIP: tmux is not installed"; exit 0; }
trap 'tmux -L $sock kill-server 2>/dev/null' EXIT

. "$(dirname "$0")/cpulib.sh"

ratios=()
for r in $(seq 1 "$rounds"); do
	start_workload "$kind" "$bin"
	tmux -L $sock new-session -d -s g -x 200 -y 50 "$gotop -p $w -e cpu-clock -F $rate -d 1"
	tmux -L $sock new-session -d -s p -x 200 -y 50 "perf top -g -e cpu-clock -F $rate -p $w -d 1"
	sleep 3
	g=$(pgrep -f "^$gotop -p $w " | head -1)
	p=$(pgrep -f "^perf top -g -e cpu-clock -F $rate -p $w " | head -1)
	if [ -z "$g" ] || [ -z "$p" ]; then
		echo "round $r: a tool did not start (gotop-perf ${g:-none}, perf top ${p:-none})"
		tmux -L $sock kill-server 2>/dev/null
		kill $w 2>/dev/null
		wait 2>/dev/null
		continue
	fi
	a0=$(cpu_ns $g) b0=$(cpu_ns $p) w0=$(cpu_ns $w)
	sleep 12
	a1=$(cpu_ns $g) b1=$(cpu_ns $p) w1=$(cpu_ns $w)
	tmux -L $sock send-keys -t g q
	tmux -L $sock send-keys -t p q
	sleep 0.5
	tmux -L $sock kill-server 2>/dev/null
	kill $w 2>/dev/null
	wait 2>/dev/null
	line=$(round_line $((a1 - a0)) $((b1 - b0)) $((w1 - w0)) "$rate" gotop perftop ratio ab)
	echo "$line"
	ratios+=("$(echo "$line" | awk '{print $6}')")
done
printf '%s\n' "${ratios[@]}" | print_median 'ratio'
