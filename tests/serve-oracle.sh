#!/bin/sh
# serve-oracle.sh: what `gotop-perf serve` answers for a Go process against what the process's
# own net/http/pprof answers, the oracle. For each Go release of GO_VERSIONS,
# tests/workloads/go/pprofhttp.go (allocations, blocking, contention and parked goroutines
# at known places, then idle) serves its own /debug/pprof; for Prometheus (Debian's package,
# a busy, stripped service) its own /debug/pprof. For heap, allocs, block, mutex and
# goroutine, its own answer is fetched, then the server's, then its own again: decoded by
# `go tool pprof -raw`, every column's total and every function's flat and cum value of the
# server's answer must lie within 0.5% of the range of the two own answers (block and
# mutex counts only grow; the heap profile moves at each GC cycle's end: a busy Prometheus
# ends one every few seconds, so a comparison is tried up to 10 times). The goroutines of
# an own request's connection (net/http.(*conn).serve, (*connReader).backgroundRead) are
# left out of both sides: the server never sees them.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/serve.sh"

need_pprof
. "$TOP_SRCDIR/tests/helpers/pprofsums.sh"
command -v curl >/dev/null || skip_all "curl not found (setup.sh installs it)"
plan_per_version 5 5

if ! serve_start "$T/serve.log"; then
	diag_file "$T/serve.log"
	skip_all "the server did not start"
fi
diag "server at $srv"

# oracle NAME PROFILE OWN_BASE SRV_BASE TRIES: own, server, own, compared; 0 when equal.
oracle() {
	o_name=$1 o_p=$2 o_own=$3 o_srv=$4 o_tries=$5
	cols=4
	case $o_p in block | mutex) cols=2 ;; goroutine) cols=1 ;; esac
	sums_exclude=
	[ "$o_p" = goroutine ] &&
		sums_exclude='^net/http[.]([(][*]conn[)][.]serve|[(][*]connReader[)][.]backgroundRead)$'
	o_i=1
	while [ $o_i -le "$o_tries" ]; do
		d=$T/$o_name.$o_p.$o_i
		c1=$(curl -s -o "$d.own1" -w '%{http_code}' --max-time 60 "$o_own/$o_p")
		c2=$(curl -s -o "$d.srv" -w '%{http_code}' --max-time 60 "$o_srv/$o_p")
		c3=$(curl -s -o "$d.own2" -w '%{http_code}' --max-time 60 "$o_own/$o_p")
		if [ "$c1$c2$c3" != 200200200 ]; then
			diag "$o_name $o_p: HTTP $c1 (own) $c2 (server) $c3 (own)"
			[ "$c2" = 200 ] || diag_file "$d.srv"
		elif compare "$o_name $o_p" $cols "$d.srv" "$d.own1" "$d.own2" >"$d.cmp"; then
			o_res="within its own two answers; $(tail -1 "$d.cmp" | sed "s/^# largest difference from Go/from the first/"); try $o_i"
			sums_exclude=
			return 0
		fi
		o_i=$((o_i + 1))
	done
	cat "$d.cmp" 2>/dev/null
	sums_exclude=
	return 1
}

for v in $GO_VERSIONS; do
	bin=$T/pprofhttp-$v
	go_build_or_skip 5 "$v" plain "$TOP_SRCDIR/tests/workloads/go/pprofhttp.go" "$bin" || continue
	"$bin" -d 300s >"$T/ph-$v.out" 2>"$T/ph-$v.err" &
	pid=$!
	track $pid
	if ! wait_line "$T/ph-$v.out" '^ready' 60; then
		skip_n 5 "go$v: pprofhttp did not get ready: $(head -1 "$T/ph-$v.err")"
		kill $pid 2>/dev/null
		continue
	fi
	port=$(awk '/^ready/ { print $3 }' "$T/ph-$v.out")
	for p in heap allocs block mutex goroutine; do
		if oracle "go$v" $p "http://127.0.0.1:$port/debug/pprof" "$srv/pid/$pid/debug/pprof" 3; then
			ok "go$v: the server's $p equals the process's own net/http/pprof $p ($o_res)"
		else
			not_ok "go$v: the server's $p differs from the process's own net/http/pprof $p"
		fi
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
done

# Prometheus: its own /debug/pprof against the server's.
if [ -n "${GOTOP_WRAP:-}" ]; then
	skip_n 5 "under valgrind, reading a 100 MB binary's tables takes minutes"
elif ! prom_bin=$("$TOP_SRCDIR/tests/helpers/debian-service.sh" prometheus 2>"$T/fetch.err"); then
	skip_n 5 "no Prometheus from Debian: $(head -1 "$T/fetch.err")"
else
	if ! prometheus_start "$prom_bin"; then
		skip_n 5 "Prometheus did not start"
	else
		sleep 2
		for p in heap allocs block mutex goroutine; do
			if oracle prometheus $p "http://127.0.0.1:$port/debug/pprof" "$srv/pid/$prom/debug/pprof" 10; then
				ok "Prometheus: the server's $p equals its own /debug/pprof/$p ($o_res)"
			else
				not_ok "Prometheus: the server's $p differs from its own /debug/pprof/$p"
			fi
		done
	fi
	kill $prom 2>/dev/null
	wait $prom 2>/dev/null
fi
serve_stop
finish
