#!/bin/sh
# big-service.sh: the live UI on a large real Go service, Prometheus as Debian builds it (a
# stripped binary of about 100 MB), under a steady query load. Mapping that binary and its
# symbol tables makes tens of MB of gotop-perf's resident size clean file pages: the memory
# limit (--max-memory) counts only anonymous memory, so the live UI forgets nothing, and the
# header reports the memory the limit counts.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
[ -n "${GOTOP_WRAP:-}" ] && skip_all "under valgrind, symbolizing a 100 MB binary takes minutes"
command -v curl >/dev/null 2>&1 || skip_all "curl not found (setup.sh installs it)"
bin=$("$TOP_SRCDIR/tests/helpers/debian-service.sh" prometheus 2>"$T/fetch.err") ||
	skip_all "no Prometheus from Debian: $(head -1 "$T/fetch.err")"
plan 6

size=$(stat -c %s "$bin")
check "the target is a stripped binary of at least 100 MB ($size bytes)" \
	sh -c "[ $size -ge 100000000 ] && ! readelf -S '$bin' | grep -q ' .symtab '"

# Prometheus on a port of its own choosing, scraping nothing: the load is ours.
if ! prometheus_start "$bin"; then
	skip_n 6 "Prometheus did not start"
	finish
fi

# load SECONDS: queries and metrics pages, as a dashboard would ask them.
load() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ] && kill -0 $prom 2>/dev/null; do
		curl -s -o /dev/null "http://127.0.0.1:$port/metrics"
		curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/query" \
			--data-urlencode 'query=sum by (__name__)({__name__=~"prometheus_.+"})'
		curl -s -o /dev/null "http://127.0.0.1:$port/api/v1/label/__name__/values"
	done
}
load 120 &
track $!
load 120 &
track $!

# The live UI with its default limit, sampled from outside: the header's figure, and the
# process's own anonymous and file-backed memory at its largest.
limit=
n=20
lim_opt=
if [ -n "${GOTOP_UNDER_SANITIZER:-}" ]; then
	# ASan's shadow memory and quarantine are anonymous: no limit there.
	lim_opt="--max-memory 0"
	limit=0
fi
"$GOTOP_PERF" --batch -n $n -d 0.5 --view top --rows 5 $lim_opt -p $prom >"$T/out" 2>"$T/err" &
gp=$!
track $gp
# RssAnon is followed only until the last iteration is printed, whose header the check
# reads: what the process frees or its allocator keeps at exit comes later (much, under ASan).
peak_anon=0 peak_file=0 last=
while kill -0 $gp 2>/dev/null; do
	a=$(awk '/^RssAnon:/ { print $2 }' /proc/$gp/status 2>/dev/null)
	f=$(awk '/^RssFile:/ { print $2 }' /proc/$gp/status 2>/dev/null)
	[ -z "$last" ] && [ "${a:-0}" -gt $peak_anon ] && peak_anon=$a
	[ "${f:-0}" -gt $peak_file ] && peak_file=$f
	grep -q "^=== iteration $n ===" "$T/out" && last=1
	sleep 0.2
done
wait $gp
rc=$?
check "batch -n $n on Prometheus: exit 0, $n iterations" \
	sh -c "[ $rc -eq 0 ] && grep -q '^=== iteration $n ===' '$T/out'"
[ $rc -eq 0 ] || diag_file "$T/err"
samples=$(grep '^cumulative' "$T/out" | tail -1 | awk '{ print $(NF - 1) }')
check "... it sampled the service ($samples samples)" sh -c "[ '${samples:-0}' -gt 100 ]"
check "... and forgot nothing: every info line is plain 'cumulative'" \
	sh -c "! grep -E '^(cumulative, less|last )' '$T/out' | grep -q . && grep -q '^cumulative  ' '$T/out'"
hdr=$(grep '^cpu-clock ' "$T/out" | tail -1)
if [ -z "$limit" ]; then
	mem=$(echo "$hdr" | sed -n 's/.*  mem \([0-9]*\)\/\([0-9]*\) MB.*/\1 \2/p')
	limit=${mem#* }
	used=${mem% *}
else
	used=$(echo "$hdr" | sed -n 's/.*  mem \([0-9]*\) MB.*/\1/p')
fi
diag "header: $hdr; peak RssAnon ${peak_anon} kB, RssFile ${peak_file} kB"
# The header's figure is the anonymous memory: within 8 MB of the largest RssAnon seen up
# to it, as they are read at different moments; the resident size is tens of MB more.
if [ -n "${GOTOP_UNDER_SANITIZER:-}" ]; then
	skip "the header against RssAnon is judged without ASan, whose memory grows in steps between the two readings"
else
	check "... the header reports the memory the limit counts (mem ${used:-?} MB, limit ${limit:-?})" \
		awk -v u="${used:-x}" -v a="$peak_anon" 'BEGIN { exit !(u ~ /^[0-9]+$/ && u * 1024 <= a + 8192 && u * 1024 >= a - 8192) }'
fi
# File pages: the mapped binary and symbol tables, which the limit must not count.
check "... tens of MB of its resident size are file pages (${peak_file} kB), not counted" \
	sh -c "[ $peak_file -ge 16384 ]"
if [ "$limit" -gt 0 ] && [ $((peak_anon + peak_file)) -gt $((limit * 1024)) ]; then
	diag "resident size $(((peak_anon + peak_file) / 1024)) MB passed the $limit MB limit without a shed"
fi
finish
