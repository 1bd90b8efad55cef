#!/bin/bash
# owncpu-service.sh: gotop-perf's live UI and perf top attached at the same time to a real
# service, Debian's Prometheus, under a query load (two clients asking for its metrics, a
# query over every prometheus_* series and its label values, without pause). Each tool runs
# in a tmux pane of 200 x 50 at a 1 s refresh, 1 kHz cpu-clock with call graphs; after 5 s
# of start-up, each one's CPU (the sum of its threads' schedstat) over SECS seconds, per
# thread for gotop-perf: which of its parts costs what.
#
# Usage: bench/owncpu-service.sh GOTOP_PERF [SECS] [ROUNDS] [-- extra gotop-perf options]
# Prints one line per round and the median ratio gotop-perf / perf top.
set -u
here=$(cd "$(dirname "$0")" && pwd)
G=$(readlink -f "${1:?usage: owncpu-service.sh GOTOP_PERF [SECS] [ROUNDS] [-- OPTS]}")
SECS=${2:-30}
ROUNDS=${3:-3}
shift $(($# < 3 ? $# : 3))
[ "${1:-}" = -- ] && shift
command -v tmux >/dev/null && command -v perf >/dev/null && command -v curl >/dev/null ||
	{ echo "owncpu-service.sh: needs tmux, perf and curl" >&2; exit 1; }
PROM=$("$here/../tests/helpers/debian-service.sh" prometheus) || exit 1
D=$(mktemp -d)
trap 'tmux -L owncpu kill-server 2>/dev/null; kill $P $L1 $L2 2>/dev/null; rm -rf "$D"' EXIT
port=$((20000 + RANDOM % 20000))
printf 'global:\n  scrape_interval: 15s\nscrape_configs:\n  - job_name: self\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
	"$port" >"$D/prom.yml"
"$PROM" --config.file="$D/prom.yml" --web.listen-address=127.0.0.1:$port \
	--storage.tsdb.path="$D/data" >"$D/log" 2>&1 &
P=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/-/ready" && break; sleep 0.2; done

load() {
	while :; do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics"
		curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/query" \
			--data-urlencode 'query=sum by (__name__)({__name__=~"prometheus_.+"})'
		curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/label/__name__/values"
	done
}
load & L1=$!
load & L2=$!
sum() { awk '{ s += $1 } END { printf "%.0f\n", s }' /proc/$1/task/*/schedstat; }
threads() { for t in /proc/$1/task/*; do echo "$(cat "$t/comm") $(awk '{ print $1 }' "$t/schedstat")"; done | sort; }
for r in $(seq "$ROUNDS"); do
	tmux -L owncpu new-session -d -s g -x 200 -y 50 "$G -p $P -d 1 $*"
	tmux -L owncpu new-session -d -s p -x 200 -y 50 "perf top -g -e cpu-clock -F 1000 -p $P -d 1"
	sleep 5
	GP=$(pgrep -f "^$G -p $P" | head -1)
	PT=$(pgrep -f "^perf top -g -e cpu-clock -F 1000 -p $P" | head -1)
	threads "$GP" >"$D/g0"; p0=$(sum "$PT"); w0=$(sum $P)
	sleep "$SECS"
	threads "$GP" >"$D/g1"; p1=$(sum "$PT"); w1=$(sum $P)
	tmux -L owncpu kill-server 2>/dev/null
	join "$D/g0" "$D/g1" | awk -v p0="$p0" -v p1="$p1" -v w0="$w0" -v w1="$w1" -v r="$r" '
		{ d = ($3 - $2) / 1e6; t += d; s = s sprintf(" %s=%.1f", $1, d) }
		END { p = (p1 - p0) / 1e6; printf "round %d: gotop-perf %.1f ms (%s ), perf top %.1f ms, prometheus %.0f ms: ratio %.3f\n",
			r, t, s, p, (w1 - w0) / 1e6, t / p }'
	sleep 2
done | tee "$D/rounds"
awk '{ for (i = 1; i <= NF; i++) if ($i == "ratio") print $(i + 1) }' "$D/rounds" | sort -n |
	awk '{ v[NR] = $1 } END { if (NR) printf "median ratio %.3f (%d rounds)\n", v[int((NR + 1) / 2)], NR }'
