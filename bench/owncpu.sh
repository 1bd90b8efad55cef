#!/bin/bash
# owncpu.sh: the profiler's own CPU in steady state per second and per
# 1000 samples once its start-up is over, for gotop-perf record, the live UI (--batch) and
# perf top -g, attached in turn to the same busy workload (interleaved rounds).
#
# Usage: bench/owncpu.sh GOTOP WORKDIR WORKLOAD_KIND BINARY [RATE] [ROUNDS] [SKIP_S] [MEASURE_S]
#   WORKLOAD_KIND  c (BINARY is bench/spin.c built) or go (BINARY is labels.go built, 2 workers)
#   defaults: 1000 Hz, 3 rounds, the first 2 s after attaching skipped, 6 s measured.
#   OWNCPU_TOOLS: the tools in each round (default "record live perftop"); "nogo" is
#   record --no-go, gotop-perf without its Go reads.
# Prints one line per run: "tool round prof_ms target_ms per_s per_1000" where prof_ms is the
# profiler's thread CPU over the measured window (all its threads and children, from
# /proc/PID/task/*/schedstat), target_ms the workload's, per_s the profiler's ms per second
# and per_1000 its ms per 1000 samples (samples = target CPU s x rate: every tool samples
# cpu-clock of the same threads; record and the live UI cover 99.5 to 100 % of that).

set -u
gotop=$1 work=$2 kind=$3 bin=$4
rate=${5:-1000} rounds=${6:-3} skip=${7:-2} measure=${8:-6}
mkdir -p "$work" || exit 1

# cpu_ns PID...: summed thread CPU (ns) of the processes and their children's threads.
cpu_ns() {
	local p s=0 a f kids
	for p in "$@"; do
		for f in /proc/"$p"/task/*/schedstat; do
			read -r a _ <"$f" 2>/dev/null && s=$((s + a))
		done
		kids=$(cat /proc/"$p"/task/*/children 2>/dev/null)
		[ -n "$kids" ] && s=$((s + $(cpu_ns $kids)))
	done
	echo $s
}

total=$((skip + measure + 3))
for r in $(seq 1 "$rounds"); do
	for tool in ${OWNCPU_TOOLS:-record live perftop}; do
		case $kind in
		c) "$bin" -n 100000000 >/dev/null 2>&1 & ;;
		go) "$bin" -workers 2 -d "$((total + 2))s" >/dev/null 2>&1 & ;;
		esac
		wpid=$!
		sleep 0.3
		case $tool in
		record) "$gotop" record -p "$wpid" -e cpu-clock -F "$rate" -o "$work/own.pb.gz" \
			-d "$total" >/dev/null 2>&1 & ;;
		live) "$gotop" -p "$wpid" -e cpu-clock -F "$rate" --batch -d 1 -n "$total" \
			>"$work/own-live.out" 2>/dev/null & ;;
		nogo) "$gotop" record --no-go -p "$wpid" -e cpu-clock -F "$rate" -o "$work/own.pb.gz" \
			-d "$total" >/dev/null 2>&1 & ;;
		perftop) script -qfc "perf top -g --stdio -e cpu-clock -F $rate -p $wpid -d 1" \
			"$work/own-top.out" </dev/null >/dev/null 2>&1 & ;;
		esac
		ppid=$!
		sleep "$skip"
		p0=$(cpu_ns "$ppid")
		w0=$(cpu_ns "$wpid")
		t0=$EPOCHREALTIME
		sleep "$measure"
		p1=$(cpu_ns "$ppid")
		w1=$(cpu_ns "$wpid")
		t1=$EPOCHREALTIME
		# perf top runs under script(1): its child gets the signal.
		[ $tool = perftop ] && kill -INT $(cat /proc/"$ppid"/task/*/children 2>/dev/null) 2>/dev/null
		kill -INT "$ppid" 2>/dev/null
		kill "$wpid" 2>/dev/null
		wait "$ppid" "$wpid" 2>/dev/null
		awk -v t=$tool -v r=$r -v p=$((p1 - p0)) -v w=$((w1 - w0)) -v a="$t0" -v b="$t1" -v hz="$rate" 'BEGIN {
			pm = p / 1e6; wm = w / 1e6; s = b - a
			printf "%s %d %.1f %.1f %.2f %.3f\n", t, r, pm, wm, pm / s, (wm > 0 ? pm / (wm / 1000 * hz) * 1000 : 0) }'
	done
done
