#!/bin/bash
# serve.sh: the cost of `gotop-perf serve`, its process's CPU. 1. Idle: the server alone for
# IDLE seconds after its start (no request), in ms of CPU per second (the schedstat of its
# threads), with its threads and perf events. 2. Each endpoint of a real service, Prometheus
# as Debian ships it (its own /debug/pprof is the oracle in tests/serve-oracle.sh): the
# server's CPU over 4 x ROUNDS requests in a row, per request, and the median time of one;
# one profile?seconds=14 and one wall?seconds=14. 3. A busy service
# (tests/workloads/go/labels.go, 2 workers): a 14 s CPU profile (a session at 1 kHz)
# against `gotop-perf record -d 14` on the same process (the sampling itself), in turn,
# ROUNDS times: both in ms of CPU per second of profile and the server's extra; then 1 and
# 10 scrapers at once of a SCRAPE_S s profile (default 14, a scraper's window every 15 s).
# Beyond idle, CPU is /proc/PID/stat's utime + stime (10 ms ticks; exited threads
# included: each connection's thread ends with it).
# Usage (from a build directory): bench/serve.sh [ROUNDS] [IDLE] [GO_VERSION]
set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(cd "$here/.." && pwd)
rounds=${1:-5} idle=${2:-30} ver=${3:-1.23} scrape=${SCRAPE_S:-14}
gp=$(pwd)/gotop-perf
[ -x "$gp" ] || { echo "run from a build directory" >&2; exit 1; }
work=$(mktemp -d /tmp/gotop-serve-bench.XXXXXX)
s= prom= w=
trap 'kill $s $prom $w 2>/dev/null; rm -rf "$work"' EXIT INT TERM
. "$here/cpulib.sh"

# A server on a port of the kernel's choosing; sets s and srv.
start_server() {
	"$gp" serve --listen 127.0.0.1:0 -q "$@" 2>"$work/serve.log" &
	s=$!
	for _ in $(seq 100); do
		srv=$(sed -n 's|^gotop-perf: serving \(http://[^/]*\)/.*|\1|p' "$work/serve.log" | head -1)
		[ -n "$srv" ] && return 0
		sleep 0.1
	done
	echo "the server did not start: $(head -1 "$work/serve.log")" >&2
	exit 1
}
# proc_ns PID: the CPU of the whole process, threads that have exited included
# (/proc/PID/stat utime + stime, in ticks of 1/CLK_TCK s): the server's connection threads
# end with their request.
hz=$(getconf CLK_TCK)
proc_ns() { awk -v hz="$hz" '{ sub(/^.*\) /, ""); printf "%.0f\n", ($12 + $13) * 1e9 / hz }' "/proc/$1/stat"; }
perf_fds() { ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'; }

echo "## idle server, $idle s"
start_server
sleep 2
c0=$(cpu_ns $s)
sleep "$idle"
c1=$(cpu_ns $s)
awk -v d=$((c1 - c0)) -v t="$idle" 'BEGIN { printf "idle: %.4f ms CPU per second\n", d / 1e6 / t }'
echo "idle: $(ls /proc/$s/task | wc -l) threads, $(perf_fds $s) perf events"

prom_bin=$("$srcdir/tests/helpers/debian-service.sh" prometheus 2>"$work/fetch.err") || {
	echo "no Prometheus: $(head -1 "$work/fetch.err")" >&2
	exit 1
}
mkdir -p "$work/prom"
printf 'global:\n  scrape_interval: 15s\n' >"$work/prom/prom.yml"
"$prom_bin" --config.file="$work/prom/prom.yml" --web.listen-address=127.0.0.1:0 \
	--storage.tsdb.path="$work/prom/data" >"$work/prom/log" 2>&1 &
prom=$!
sleep 5
reqs=$((rounds * 4))
echo "## one scrape of each endpoint of Prometheus (pid $prom): CPU over $reqs requests, median time"
b=$srv/pid/$prom/debug/pprof
# The first request opens the executable's tables: not counted, said apart.
c0=$(proc_ns $s)
t0=$(date +%s%N)
curl -s -o /dev/null "$b/goroutine"
t1=$(date +%s%N)
c1=$(proc_ns $s)
awk -v c=$((c1 - c0)) -v t=$((t1 - t0)) 'BEGIN { printf "first request (tables loaded): %.1f ms CPU, %.1f ms\n", c / 1e6, t / 1e6 }'
for u in heap allocs block mutex goroutine "goroutine?debug=1" "goroutine?debug=2" "heap?debug=1" \
	metrics targets; do
	case $u in metrics) url=$srv/pid/$prom/metrics ;; targets) url=$srv/targets ;; *) url=$b/$u ;; esac
	# The CPU of many requests in a row, divided (the ticks are 10 ms), and the median time
	# of one.
	c0=$(proc_ns $s)
	for _ in $(seq "$reqs"); do
		t0=$(date +%s%N)
		sz=$(curl -s -o /dev/null -w '%{size_download}' "$url")
		t1=$(date +%s%N)
		echo "$((t1 - t0)) $sz"
	done | sort -g >"$work/times"
	c1=$(proc_ns $s)
	awk -v u="$u" -v c=$((c1 - c0)) -v n="$reqs" '{ t[NR] = $1; z = $2 }
		END { printf "%-20s %7.2f ms CPU  %7.1f ms  %8d bytes\n", u, c / n / 1e6, t[int((NR + 1) / 2)] / 1e6, z }' "$work/times"
done
for u in "profile?seconds=14" "wall?seconds=14"; do
	c0=$(proc_ns $s)
	sz=$(curl -s -o /dev/null -w '%{size_download}' "$b/$u")
	c1=$(proc_ns $s)
	awk -v u="$u" -v c=$((c1 - c0)) -v z="$sz" 'BEGIN { printf "%-20s %7.2f ms CPU per second of profile, %d bytes\n", u, c / 1e6 / 14, z }'
	sleep 4 # the session closes (linger 3 s)
done
kill $prom 2>/dev/null
wait $prom 2>/dev/null
prom=

echo "## a busy Go service (labels.go, 2 workers): 14 s profiles, $rounds rounds"
"$srcdir/tests/helpers/go-build.sh" "$ver" plain "$srcdir/tests/workloads/go/labels.go" "$work/labels" || exit 1
"$work/labels" -workers 2 -d 3000s >/dev/null 2>&1 &
w=$!
sleep 1
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$work/serve.cpu"
: >"$work/record.cpu"
for r in $(seq "$rounds"); do
	c0=$(proc_ns $s)
	curl -s -o /dev/null "$srv/pid/$w/debug/pprof/profile?seconds=14"
	c1=$(proc_ns $s)
	echo "$((c1 - c0))" >>"$work/serve.cpu"
	sleep 4 # the session closes
	/usr/bin/time -f '%e %U %S' -o "$work/rec.time" "$gp" record -p $w -d 14 -o "$work/rec.pb.gz" \
		>/dev/null 2>&1
	awk '{ printf "%.0f\n", ($2 + $3) * 1e9 }' "$work/rec.time" >>"$work/record.cpu"
	echo "round $r: serve $(tail -1 "$work/serve.cpu") ns, record $(tail -1 "$work/record.cpu") ns"
done
ms=$(median <"$work/serve.cpu") mr=$(median <"$work/record.cpu")
awk -v a="$ms" -v b="$mr" -v n="$rounds" 'BEGIN {
	a /= 14e6; b /= 14e6
	printf "serve profile?seconds=14: %.2f ms CPU per second (median of %d)\n", a, n
	printf "record -d 14 (the same sampling, its start included): %.2f ms CPU per second\n", b
	printf "serve beyond record: %.2f ms per second = %.3f%% of a core\n", a - b, (a - b) / 10
}'
sleep 4
for k in 1 10; do
	for r in $(seq "$rounds"); do
		c0=$(proc_ns $s)
		for _ in $(seq $k); do
			curl -s -o /dev/null "$srv/pid/$w/debug/pprof/profile?seconds=$scrape" &
		done
		wait
		c1=$(proc_ns $s)
		echo "$((c1 - c0))"
		sleep 4
	done | sort -g | awk -v k=$k -v w="$scrape" '{ v[NR] = $1 } END { printf "%2d scrapers at once, %s s: %.1f ms server CPU (median of %d)\n", k, w, v[int((NR + 1) / 2)] / 1e6, NR }'
done
