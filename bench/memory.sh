#!/bin/bash
# memory.sh: gotop-perf's resident size over a long run on a busy
# multi-threaded Go target, for the live UI (--batch) and `record` attached side by side.
#
# Usage: bench/memory.sh GOTOP WORKDIR LABELS_BINARY [SECONDS] [THREADS] [RATE] [EVERY] [BEFORE]
#   defaults: 600 s, 16 busy threads (GOMAXPROCS=THREADS, THREADS workers), 1000 Hz,
#   RSS read every 10 s from /proc/PID/status (VmRSS, VmHWM).
#   BEFORE: another gotop-perf binary (e.g. the previous build) whose live UI is attached
#   to the same target at the same time, for a paired before/after.
# Writes WORKDIR/memory.tsv: t_s, live_rss_kb, live_hwm_kb, record_rss_kb, record_hwm_kb,
# live_samples (from the batch header), then before_rss_kb, before_hwm_kb with BEFORE, and
# prints it; the live UI's last data goes to WORKDIR/mem-live.pb.gz and record's profile to
# WORKDIR/mem-record.pb.gz (their distinct stacks x label sets are what the profiles hold
# in memory).
# MEMORY_PROBES="60 180 360" (environment): also attach `record -d T` for each T at the
# start, writing WORKDIR/mem-record-T.pb.gz: the profile the long `record` held at T s
# (same target, same start), so that its distinct samples at T can be counted
# (`go tool pprof -raw`) and set against the RSS column at T.
# MEMORY_WINDOW=SECONDS (environment): also attach a live UI with a decaying window of that
# many seconds (`-w`), which forgets the stacks the window no longer shows (src/live/live.c,
# forget): columns window_rss_kb, window_hwm_kb last, its data in WORKDIR/mem-window.pb.gz.
# MEMORY_TARGET_ARGS (environment): more arguments for the labels workload, e.g.
# "-gopercall" for a goroutine per unit of work, as a goroutine-per-request server, or
# "-reqid" for a label value per unit, as a service that labels by request id.
# The live UIs run with the default memory limit (--max-memory 48). For the same build
# without it as BEFORE, a script: exec GOTOP --max-memory 0 "$@".

set -u
gotop=$1
work=$2
labels=$3
secs=${4:-600}
threads=${5:-16}
rate=${6:-1000}
every=${7:-10}
before=${8:-}

mkdir -p "$work" || exit 1
tsv=$work/memory.tsv
GOMAXPROCS=$threads "$labels" -workers "$threads" -d "$((secs + 20))s" ${MEMORY_TARGET_ARGS:-} \
	>"$work/mem-target.out" 2>&1 &
tpid=$!
sleep 1
"$gotop" -p "$tpid" -F "$rate" --batch -d 1 -n "$((secs + 5))" --rows 10 --save "$work/mem-live.pb.gz" \
	>"$work/mem-live.out" 2>"$work/mem-live.err" &
lpid=$!
"$gotop" record -p "$tpid" -F "$rate" -d "$((secs + 5))" -o "$work/mem-record.pb.gz" -v \
	>"$work/mem-record.log" 2>&1 &
rpid=$!
ppids=
for T in ${MEMORY_PROBES:-}; do
	"$gotop" record -p "$tpid" -F "$rate" -d "$T" -o "$work/mem-record-$T.pb.gz" -q \
		>"$work/mem-record-$T.log" 2>&1 &
	ppids="$ppids $!"
done
bpid=
if [ -n "$before" ]; then
	"$before" -p "$tpid" -F "$rate" --batch -d 1 -n "$((secs + 5))" --rows 10 \
		>"$work/mem-before.out" 2>"$work/mem-before.err" &
	bpid=$!
fi

wpid=
if [ -n "${MEMORY_WINDOW:-}" ]; then
	"$gotop" -p "$tpid" -F "$rate" --batch -d 1 -n "$((secs + 5))" --rows 10 -w "$MEMORY_WINDOW" \
		--save "$work/mem-window.pb.gz" >"$work/mem-window.out" 2>"$work/mem-window.err" &
	wpid=$!
fi

rss() {
	awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { printf "%s\t%s", (r == "" ? "NA" : r), (h == "" ? "NA" : h) }' \
		/proc/"$1"/status 2>/dev/null || printf 'NA\tNA'
}

printf 't_s\tlive_rss_kb\tlive_hwm_kb\trecord_rss_kb\trecord_hwm_kb\tlive_samples%s%s\n' \
	"${bpid:+	before_rss_kb	before_hwm_kb}" "${wpid:+	window_rss_kb	window_hwm_kb}" >"$tsv"
t0=$(date +%s)
t=0
while [ "$t" -le "$secs" ]; do
	s=$(grep -a 'samples/s' "$work/mem-live.out" 2>/dev/null | tail -1)
	n=$(grep -a '^cumulative' "$work/mem-live.out" 2>/dev/null | tail -1 | awk '{ for (i = 1; i < NF; i++) if ($(i+1) == "samples") n = $(i) } END { print n }')
	printf '%s\t%s\t%s\t%s%s%s\n' "$t" "$(rss $lpid)" "$(rss $rpid)" "${n:-NA}" \
		"${bpid:+	$(rss $bpid)}" "${wpid:+	$(rss $wpid)}" >>"$tsv"
	sleep "$every"
	t=$(($(date +%s) - t0))
done
kill -INT "$lpid" "$rpid" $bpid $wpid 2>/dev/null
kill "$tpid" 2>/dev/null
wait "$lpid" "$rpid" $bpid $wpid $ppids "$tpid" 2>/dev/null
cat "$tsv"
