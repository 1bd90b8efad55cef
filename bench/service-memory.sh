#!/bin/bash
# service-memory.sh: gotop-perf's own memory on a large real Go service, Prometheus
# as Debian builds it (tests/helpers/debian-service.sh: a stripped binary of about 100 MB), under a
# steady query load, at 1 kHz, for DURATION seconds (default 1800).
#
# Two live UIs are attached side by side to the same Prometheus, each the interactive UI in a
# tmux pane of 80 x 24 on a tmux server of this script's own:
#   cum: default options (cumulative, default --max-memory)
#   win: -w 60 (a decaying window of 60 s)
# Every EVERY seconds (default 10: the sleep between probes, so the interval is EVERY plus
# what a probe takes, 18 s on a 2-CPU machine at load 20) it records, for each UI, RssAnon,
# RssFile, VmHWM, VmRSS from /proc/PID/status, and from the screen (tmux capture-pane) the
# header's "mem A/L MB" (cut at 80 columns: what is left of it) and samples/s, the info
# line's sample count, and whether the screen says anything was forgotten ("the memory
# limit forgot" / "the window forgot" / "memory limit reached" / "of them forgotten"). At the end each UI saves its data (S key) in WORKDIR: the pprof comments say
# whether the memory limit forgot anything (shed) over the whole run.
#
# Usage: bench/service-memory.sh [GOTOP] [WORKDIR]
#   GOTOP   default: ./build/gotop-perf of this tree, else gotop-perf in PATH
#   WORKDIR default: a new /tmp/gotop-svcmem.XXXX
# Environment: DURATION (s, 1800), EVERY (s, 10), RATE (Hz, 1000), LOADERS (concurrent
#   query loops, 2), LOAD_PAR (requests at a time per loop, 6), LOAD_PAUSE
#   (s between one loop's rounds, 0), PROM_GOMAXPROCS (6: on a 2-CPU machine shared with
#   other builds, Prometheus's GOMAXPROCS of 2 held it to a small share of the CPU),
#   EXTRA_OPTS (more options for both UIs, e.g. "--max-memory 0").
# Writes WORKDIR/service-memory.tsv (one row per UI per probe) and prints a summary.
# Everything it starts (Prometheus, the loads, its tmux server) is stopped at the end, also on
# INT/TERM.

set -u
here=$(cd "$(dirname "$0")/.." && pwd)
gotop=${1:-}
if [ -z "$gotop" ]; then
	if [ -x "$here/build/gotop-perf" ]; then gotop=$here/build/gotop-perf; else gotop=gotop-perf; fi
fi
gotop=$(command -v "$gotop") || { echo "service-memory.sh: no gotop-perf" >&2; exit 1; }
work=${2:-$(mktemp -d /tmp/gotop-svcmem.XXXX)}
mkdir -p "$work" || exit 1
DURATION=${DURATION:-1800}
EVERY=${EVERY:-10}
RATE=${RATE:-1000}
LOADERS=${LOADERS:-2}
LOAD_PAR=${LOAD_PAR:-6}
PROM_GOMAXPROCS=${PROM_GOMAXPROCS:-6}
LOAD_PAUSE=${LOAD_PAUSE:-0}
EXTRA_OPTS=${EXTRA_OPTS:-}
for c in tmux curl; do
	command -v $c >/dev/null 2>&1 || { echo "service-memory.sh: $c not found" >&2; exit 1; }
done
bin=$("$here/tests/helpers/debian-service.sh" prometheus) || exit 1

sock=gotop-svcmem-$$
prom=
loadpids=
cleanup() {
	trap - EXIT INT TERM
	tmux -L "$sock" kill-server 2>/dev/null
	for p in $loadpids; do kill "$p" 2>/dev/null; done
	[ -n "$prom" ] && kill "$prom" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work/prom/data"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A free loopback port (Prometheus scrapes itself, so the port goes in its config).
port=
for p in $(shuf -i 20000-60000 -n 50); do
	if ! ss -Hltn "sport = :$p" | grep -q .; then port=$p; break; fi
done
[ -n "$port" ] || { echo "service-memory.sh: no free port" >&2; exit 1; }
mkdir -p "$work/prom"
cat >"$work/prom/prom.yml" <<EOF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: self
    static_configs:
      - targets: ['127.0.0.1:$port']
EOF
GOMAXPROCS=$PROM_GOMAXPROCS "$bin" --config.file="$work/prom/prom.yml" --web.listen-address="127.0.0.1:$port" \
	--storage.tsdb.path="$work/prom/data" >"$work/prom/log" 2>&1 &
prom=$!
i=0
until curl -sf -o /dev/null "http://127.0.0.1:$port/-/ready"; do
	i=$((i + 1))
	if [ $i -gt 150 ] || ! kill -0 $prom 2>/dev/null; then
		echo "service-memory.sh: Prometheus did not start" >&2
		tail -5 "$work/prom/log" >&2
		exit 1
	fi
	sleep 0.2
done
sleep 5 # a few scrapes, so that the queries have data

# load SECONDS N: a dashboard's requests, as one curl per round (few forks: the machine is
# shared): N's round is every query of the list below instant, over the last 5 minutes at a
# step of 1 s and of 5 s, and the /metrics page, LOAD_PAR requests at a time (curl -Z).
# The queries use rate, sum by, histogram_quantile, topk, max_over_time over a few of
# Prometheus's own metrics and over all of its series.
queries=(
	'sum by (handler) (rate(prometheus_http_requests_total[1m]))'
	'histogram_quantile(0.9, sum by (le, handler) (rate(prometheus_http_request_duration_seconds_bucket[1m])))'
	'sum by (__name__) (rate({__name__=~".+"}[1m]))'
	'histogram_quantile(0.99, sum by (le) (rate(prometheus_http_response_size_bytes_bucket[2m])))'
	'topk(10, count by (__name__) ({job="self"}))'
	'max_over_time({__name__=~"go_.+|process_.+|prometheus_tsdb_.+"}[1m])'
	'sum(rate(go_gc_duration_seconds_count[1m])) by (instance)'
)
load() {
	local end=$(($(date +%s) + $1)) u="http://127.0.0.1:$port" q now cfg=$work/load-$2.cfg
	while [ "$(date +%s)" -lt "$end" ] && kill -0 $prom 2>/dev/null; do
		now=$(date +%s)
		{
			for q in "${queries[@]}"; do
				q=${q//\"/\\\"}
				printf 'url = "%s/api/v1/query"\ndata-urlencode = "query=%s"\nnext\n' "$u" "$q"
				for st in 1 5; do
					printf 'url = "%s/api/v1/query_range"\ndata-urlencode = "query=%s"\n' "$u" "$q"
					printf 'data = "start=%s&end=%s&step=%s"\nnext\n' $((now - 300)) "$now" $st
				done
				printf 'url = "%s/metrics"\nnext\n' "$u"
			done
		} >"$cfg"
		curl -s -Z --parallel-max "$LOAD_PAR" -K "$cfg" >/dev/null 2>&1
		[ "$LOAD_PAUSE" = 0 ] || sleep "$LOAD_PAUSE"
	done
}
total=$((DURATION + 60))
for n in $(seq 1 "$LOADERS"); do
	load "$total" "$n" >/dev/null 2>&1 &
	loadpids="$loadpids $!"
done
sleep 5

# The two UIs, each in a session of its own of 80 x 24 (cwd WORKDIR: the S key saves there).
# `exec`, so that the pane's pid is gotop-perf's.
mkdir -p "$work/cum" "$work/win"
tmux -L "$sock" -f /dev/null new-session -d -s cum -x 80 -y 24 -c "$work/cum" \
	"exec '$gotop' -p $prom -F $RATE $EXTRA_OPTS 2>'$work/cum.err'" || exit 1
tmux -L "$sock" new-session -d -s win -x 80 -y 24 -c "$work/win" \
	"exec '$gotop' -p $prom -F $RATE -w 60 $EXTRA_OPTS 2>'$work/win.err'" || exit 1
sleep 1
declare -A gpid
for s in cum win; do
	gpid[$s]=$(tmux -L "$sock" display -p -t "$s" '#{pane_pid}')
	size=$(tmux -L "$sock" display -p -t "$s" '#{pane_width}x#{pane_height}')
	echo "# $s: gotop-perf pid ${gpid[$s]}, pane $size" >&2
done

status() { # PID: RssAnon RssFile VmHWM VmRSS (kB)
	awk '/^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 } /^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 }
	     END { printf "%s\t%s\t%s\t%s", a == "" ? "NA" : a, f == "" ? "NA" : f, h == "" ? "NA" : h, r == "" ? "NA" : r }' \
		/proc/"$1"/status 2>/dev/null || printf 'NA\tNA\tNA\tNA'
}

tsv=$work/service-memory.tsv
printf 't_s\tui\trss_anon_kb\trss_file_kb\tvm_hwm_kb\tvm_rss_kb\thdr_mem\tsamples_per_s\tshown_samples\tsince_start\tforgot_count\tforgotten_text\tprom_cpu_s\n' >"$tsv"
t0=$(date +%s)
t=0
while :; do
	pcpu=$(awk '{ printf "%.1f", ($14 + $15) / 100 }' /proc/$prom/stat 2>/dev/null)
	for s in cum win; do
		scr=$(tmux -L "$sock" capture-pane -p -t "$s" 2>/dev/null)
		printf '%s\n' "$scr" >"$work/screen-$s.txt"
		hm=$(printf '%s\n' "$scr" | sed -n '2s/.*CPU [0-9.]*%  *//p' | tr ' ' '_')
		sps=$(printf '%s\n' "$scr" | sed -n 's/.* \([0-9][0-9]*\) samples\/s.*/\1/p' | head -1)
		info=$(printf '%s\n' "$scr" | grep -aE '^(cumulative|last [0-9]+s)' | head -1)
		shown=$(printf '%s\n' "$info" | sed -n 's/.* \([0-9][0-9]*\) samples.*/\1/p' | head -1)
		since=$(printf '%s\n' "$info" | sed -n 's/.*(\([0-9][0-9]*\) since start.*/\1/p')
		fc=$(printf '%s\n' "$info" | sed -n 's/.*less \([0-9][0-9]*\) samples.*/\1/p; s/.*, \([0-9][0-9]*\) of them forgotten.*/\1/p' | head -1)
		ft=$(printf '%s\n' "$scr" | grep -aoE 'the memory limit forgot|the window and the memory limit forgot|the window forgot|memory limit reached|of them forgotten' | sort -u | paste -sd, -)
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$s" "$(status "${gpid[$s]}")" \
			"${hm:-NA}" "${sps:-NA}" "${shown:-NA}" "${since:-NA}" "${fc:-0}" "${ft:-none}" "${pcpu:-NA}" >>"$tsv"
	done
	[ "$t" -ge "$DURATION" ] && break
	sleep "$EVERY"
	t=$(($(date +%s) - t0))
	[ "$t" -gt "$DURATION" ] && t=$DURATION # the last probe is at DURATION (or just after)
done

# Save each UI's data (S) and read what its comments say; then quit (q).
for s in cum win; do
	cp "$work/screen-$s.txt" "$work/screen-$s-final.txt"
	tmux -L "$sock" send-keys -t "$s" S
	sleep 1
	tmux -L "$sock" send-keys -t "$s" Enter
done
sleep 3
for s in cum win; do
	tmux -L "$sock" capture-pane -p -t "$s" >"$work/screen-$s-saved.txt" 2>/dev/null
	tmux -L "$sock" send-keys -t "$s" q
done
sleep 2
saved=$(ls "$work"/cum/*.pb.gz "$work"/win/*.pb.gz 2>/dev/null)

# Summary.
{
	echo "== service-memory.sh: $(basename "$gotop") ($("$gotop" --version 2>/dev/null | head -1)) on $(basename "$bin") ($(stat -c %s "$bin") bytes)"
	echo "   ${DURATION} s, ${RATE} Hz, $LOADERS query loops of $LOAD_PAR at a time, Prometheus GOMAXPROCS=$PROM_GOMAXPROCS, probes every $EVERY s; Prometheus CPU $(tail -1 "$tsv" | cut -f13) s"
	awk -F'\t' -v dur="$DURATION" '
	NR == 1 { next }
	{ ui = $2; t = $1 + 0
	  a[ui, t] = $3; f[ui, t] = $4; h[ui] = $5; hm[ui, t] = $7; last[ui] = t
	  if ($3 + 0 > pa[ui]) pa[ui] = $3 + 0
	  if ($4 + 0 > pf[ui]) pf[ui] = $4 + 0
	  if ($8 != "NA") { n[ui]++; sps[ui, n[ui]] = $8 + 0 }
	  if ($12 != "none") fgt[ui] = $12
	  fc[ui] = $11; shown[ui] = $9; since[ui] = $10; ts[ui, ++nt[ui]] = t }
	function at(ui, want,   i, best, bt, d) {  # the probe nearest to want seconds
		best = ""; bt = 1e9
		for (i = 1; i <= nt[ui]; i++) { d = ts[ui, i] - want; if (d < 0) d = -d; if (d < bt) { bt = d; best = ts[ui, i] } }
		return best
	}
	function median(ui,   i, j, m, x, tmp) {
		m = n[ui]; for (i = 1; i <= m; i++) x[i] = sps[ui, i]
		for (i = 2; i <= m; i++) { tmp = x[i]; for (j = i - 1; j >= 1 && x[j] > tmp; j--) x[j + 1] = x[j]; x[j + 1] = tmp }
		return m ? (m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2) : "NA"
	}
	END {
		split("cum win", uis, " ")
		printf "%-4s", "ui"
		split("60 300 600 1200 1800", mins, " ")
		for (k = 1; k <= 5; k++) if (mins[k] <= dur) printf "  anon@%dm", mins[k] / 60
		printf "  anon@end  peak_anon  peak_file  VmHWM  hdr_mem@end  samples/s(median)  samples  forgotten\n"
		for (u = 1; u <= 2; u++) {
			ui = uis[u]; printf "%-4s", ui
			for (k = 1; k <= 5; k++) if (mins[k] <= dur) { tt = at(ui, mins[k]); printf "  %6.1fMB", a[ui, tt] / 1024 }
			printf "  %6.1fMB  %7.1fMB  %7.1fMB  %5.1fMB  %-11s  %17s  %s%s  %s\n",
				a[ui, last[ui]] / 1024, pa[ui] / 1024, pf[ui] / 1024, h[ui] / 1024, hm[ui, last[ui]], median(ui),
				shown[ui], (since[ui] != "NA" ? " (" since[ui] " since start)" : ""),
				(fgt[ui] == "" ? "no (screen)" : "yes: " fgt[ui] " (" fc[ui] " samples)")
		}
	}' "$tsv"
	for f in $saved; do
		printf '   saved %s: ' "${f#$work/}"
		if zcat "$f" 2>/dev/null | strings | grep -q 'forgotten to keep gotop-perf under'; then
			zcat "$f" | strings | grep -o 'less [0-9]* samples in [0-9]* entries with the fewest samples' | head -1
		else
			echo "nothing forgotten by the memory limit"
		fi
	done
	[ -n "$saved" ] || echo "   (no profile saved with S)"
	echo "   TSV: $tsv"
} | tee "$work/summary.txt"
