#!/bin/sh
# go-memprof-service.sh: `gotop-perf pprof heap` on a real service, Prometheus as Debian builds
# it (stripped, built by Debian's Go), against the service's own /debug/pprof/heap taken
# between two of gotop-perf's reads. The heap profile changes only when a GC cycle ends; a
# busy Prometheus ends one every few seconds, so a comparison counts when both reads saw the
# same profile cycle (gotop-perf -v says which), and it is tried up to 20 times. With `go
# tool pprof -raw` decoding both, every sample type's total and every function's flat and
# cum value must be within 0.5% of Prometheus's own; allocs likewise.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/pprofsums.sh"

[ -n "${GOTOP_WRAP:-}" ] && skip_all "under valgrind, symbolizing a 100 MB binary takes minutes"
command -v curl >/dev/null 2>&1 || skip_all "curl not found (setup.sh installs it)"
need_pprof
bin=$("$TOP_SRCDIR/tests/helpers/debian-service.sh" prometheus 2>"$T/fetch.err") ||
	skip_all "no Prometheus from Debian: $(head -1 "$T/fetch.err")"
plan 3

# Prometheus on a port of its own choosing; our requests move its heap.
if ! prometheus_start "$bin"; then
	skip_n 3 "Prometheus did not start"
	finish
fi
sleep 2

# cycle FILE: the profile cycle gotop-perf -v reported.
cycle() { sed -n 's/.*profile cycle \([0-9]*\).*/\1/p' "$1"; }

# same OURS GO: every value within 0.5% both ways; prints the largest difference.
same() {
	for c in 1 2 3 4; do
		sums "$1" $c >"$T/o"
		sums "$2" $c >"$T/g"
		awk 'FILENAME == ARGV[1] { o[$1 " " $2] = $3; next } { g[$1 " " $2] = $3 }
		     END { for (k in g) if (!(k in o)) o[k] = 0
			   for (k in o) { a = (k in g) ? g[k] : 0; d = a ? (o[k] - a) / a : (o[k] != 0)
					  if (d < 0) d = -d; if (d > w) w = d }
			   printf "%.4f\n", w * 100; exit w > 0.005 }' "$T/o" "$T/g" >"$T/w.$c" || return 1
		[ -s "$T/g" ] || return 1
	done
	return 0
}

for p in heap allocs; do
	done_p=0
	tries=0
	while [ $tries -lt 20 ] && [ $done_p -eq 0 ]; do
		tries=$((tries + 1))
		"$GOTOP_PERF" pprof $p -p $prom -v -o "$T/ours.pb.gz" 2>"$T/ours.err" || break
		curl -s -o "$T/go.pb.gz" "http://127.0.0.1:$port/debug/pprof/$p"
		"$GOTOP_PERF" pprof $p -p $prom -v -o "$T/ours2.pb.gz" 2>"$T/ours2.err" || break
		c1=$(cycle "$T/ours.err")
		c2=$(cycle "$T/ours2.err")
		[ -n "$c1" ] && [ "$c1" = "$c2" ] && [ -s "$T/go.pb.gz" ] && done_p=1
	done
	if [ $done_p -eq 0 ]; then
		diag_file "$T/ours.err"
		not_ok "Prometheus $p: no two reads in one profile cycle around its own in $tries tries"
	elif same "$T/ours.pb.gz" "$T/go.pb.gz"; then
		ok "Prometheus $p equals its own /debug/pprof/$p (cycle $c1, try $tries; largest difference $(sort -n "$T"/w.* | tail -1)%)"
	else
		for c in 1 2 3 4; do diag "column $c: largest difference $(cat "$T/w.$c" 2>/dev/null)%"; done
		not_ok "Prometheus $p differs from its own /debug/pprof/$p (cycle $c1)"
	fi
done

# The goroutine profile: as many goroutines as Prometheus's own, within the ones that start
# and end between the two reads (its own handler goroutine is in its profile, not ours).
"$GOTOP_PERF" pprof goroutine -p $prom -o "$T/g-ours.pb.gz" 2>"$T/g.err"
curl -s -o "$T/g-go.pb.gz" "http://127.0.0.1:$port/debug/pprof/goroutine"
go_n=$(sums "$T/g-go.pb.gz" 1 | awk '$1 == "T" { print $3 }')
our_n=$(sums "$T/g-ours.pb.gz" 1 | awk '$1 == "T" { print $3 }')
if [ -n "$our_n" ] && [ -n "$go_n" ] && [ "$our_n" -gt 0 ] &&
	[ $((our_n - go_n)) -le 3 ] && [ $((go_n - our_n)) -le 3 ]; then
	ok "Prometheus goroutine profile: $our_n goroutines, its own $go_n"
else
	diag_file "$T/g.err"
	not_ok "Prometheus goroutine profile: $our_n goroutines, its own $go_n"
fi
finish
