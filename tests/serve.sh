#!/bin/sh
# serve.sh: `gotop-perf serve` read by the real client, `go tool pprof` fetching over HTTP,
# against `gotop-perf pprof` on the same process (the one code path both use, and its own
# oracle checks in go-memprof.sh) and against Go's own goroutine dump.
#
# For each Go release of GO_VERSIONS: tests/workloads/go/memprof.go idles after allocating,
# blocking and contending at known places; go tool pprof fetches its heap, allocs, block,
# mutex and goroutine profiles from the server, and every value of every column (total, each
# function's flat and cum) must be within 0.5% of `gotop-perf pprof NAME` read between two
# fetches (mutex counts grow in an idle go1.23+ program); the text forms (debug=1) are the
# same bytes; the headers are net/http/pprof's; /targets lists the process with its labels
# and /pid/PID/metrics counts its 10 goroutines parked in main.park and the heap profile's
# in-use bytes. goroutines.go parks goroutines at known places and dumps them itself
# (debug=2): every goroutine parked the same way in both of its dumps is in the server's
# goroutine?debug=2 between them with its id, state, stack and creator.
#
# On GO_VERSION: labels.go burns CPU under handler=alpha/beta/gamma 60/30/10: go tool pprof
# reads the server's CPU profile with its labels (the three handlers within 5 points of
# 60/30/10) and it agrees with `gotop-perf pprof cpu` over the same seconds (each hot
# function's and handler's share within 5 points); five scrapers at once share one session,
# each profile with as many samples as the others within 25%; once they are done and the
# session has lingered, the server holds no perf event and is back to its idle threads.
# wall.go computes 20% and sleeps 80% of its time under handler=checkout: go tool pprof
# reads the server's wall profile (wall/nanoseconds), whose on-CPU share of the handler is
# within 5 points of the workload's own account and within 8 of `gotop-perf pprof wall`'s
# over the same seconds.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/serve.sh"
. "$TOP_SRCDIR/tests/helpers/go-dump.sh"

need_perf
need_pprof
. "$TOP_SRCDIR/tests/helpers/pprofsums.sh"
command -v curl >/dev/null || skip_all "curl not found (setup.sh installs it)"
command -v jq >/dev/null || skip_all "jq not found (setup.sh installs it)"
plan_per_version 10 9

# A short linger: the idle check waits for the session to close.
if ! serve_start "$T/serve.log" --linger 2 --wall-hz 50; then
	diag_file "$T/serve.log"
	skip_all "the server did not start"
fi
diag "server at $srv"

# fetch URL FILE: go tool pprof fetches URL itself and writes what it read as a profile.
fetch() {
	pprof -proto -output "$2" "$1" >"$2.out" 2>&1 && [ -s "$2" ]
}

run_memprof() { # VERSION
	v=$1 bin=$T/memprof-$1 wd=$T/mp-$1
	go_build_or_skip 9 "$v" plain "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin" || return
	mkdir -p "$wd"
	"$bin" "$wd" -d 200s >"$wd/stdout" 2>"$wd/stderr" &
	pid=$!
	track $pid
	if ! wait_line "$wd/stdout" '^ready' 60; then
		skip_n 9 "go$v: memprof did not get ready: $(head -1 "$wd/stderr")"
		kill $pid 2>/dev/null
		return
	fi
	base=$srv/pid/$pid/debug/pprof

	curl -s "$srv/targets" >"$wd/targets.json"
	lab=$(jq -r --arg p "$pid" '.[] | select(.labels.pid == $p) |
		[.targets[0], .labels.comm, .labels.exe, .labels.go_version,
		 .labels.__metrics_path__, .labels.__profile_path_prefix__] | join(" ")' \
		"$wd/targets.json" 2>/dev/null)
	want="${srv#http://} $(basename "$bin" | cut -c1-15) $bin go$v /pid/$pid/metrics /pid/$pid"
	got=$(echo "$lab" | sed 's/ go1\.\([0-9]*\)[^ ]* / go1.\1 /')
	check "go$v: /targets lists the process: ${lab:-nothing}" test "$got" = "$want"

	for p in heap allocs block mutex goroutine; do
		cols=4
		case $p in block | mutex) cols=2 ;; goroutine) cols=1 ;; esac
		fetch "$base/$p" "$wd/srv1.$p.pb.gz"
		rc1=$?
		"$GOTOP_PERF" pprof $p -p $pid -o "$wd/ours.$p.pb.gz" 2>"$wd/ours.$p.err"
		rc=$?
		fetch "$base/$p" "$wd/srv2.$p.pb.gz"
		rc2=$?
		if [ $rc1 != 0 ] || [ $rc2 != 0 ] || [ $rc != 0 ]; then
			diag_file "$wd/srv1.$p.pb.gz.out"
			diag_file "$wd/ours.$p.err"
			not_ok "go$v: go tool pprof reads $p from the server (exit $rc1/$rc2), gotop-perf pprof $p (exit $rc)"
		elif compare "go$v $p" $cols "$wd/ours.$p.pb.gz" "$wd/srv1.$p.pb.gz" "$wd/srv2.$p.pb.gz" >"$wd/cmp.$p"; then
			ok "go$v: go tool pprof reads $p from the server: equal to gotop-perf pprof $p ($(tail -1 "$wd/cmp.$p" | sed 's/^# //'))"
		else
			cat "$wd/cmp.$p"
			not_ok "go$v: the server's $p differs from gotop-perf pprof $p"
		fi
	done

	# Headers as net/http/pprof sets them, and the debug=1 texts byte for byte.
	hd=$(curl -s -D - -o /dev/null "$base/heap" | tr -d '\r' | grep -Ei '^content-(type|disposition):' | sort | tr '\n' '|')
	hs=$(curl -s -D - -o /dev/null "$base/allocs?seconds=1" | tr -d '\r' | grep -Ei '^content-disposition:')
	ht=$(curl -s -D - -o /dev/null "$base/goroutine?debug=1" | tr -d '\r' | grep -Ei '^content-(type|disposition):' | tr '\n' '|')
	check "go$v: net/http/pprof's headers: $hd $hs $ht" \
		test "$hd" = 'Content-Disposition: attachment; filename="heap"|Content-Type: application/octet-stream|' \
		-a "$hs" = 'Content-Disposition: attachment; filename="allocs-delta"' \
		-a "$ht" = 'Content-Type: text/plain; charset=utf-8|'
	same=0
	for p in heap block goroutine; do
		curl -s "$base/$p?debug=1" >"$wd/srv.$p.1.txt"
		"$GOTOP_PERF" pprof $p -p $pid --debug 1 >"$wd/ours.$p.1.txt" 2>&1
		if cmp -s "$wd/srv.$p.1.txt" "$wd/ours.$p.1.txt" && [ -s "$wd/ours.$p.1.txt" ]; then
			same=$((same + 1))
		else
			diff "$wd/srv.$p.1.txt" "$wd/ours.$p.1.txt" | sed -n '1,10s/^/# /p'
		fi
	done
	check "go$v: heap, block and goroutine ?debug=1 are gotop-perf pprof --debug 1's bytes ($same of 3)" \
		test $same = 3

	# Metrics: the 10 goroutines parked in a channel receive, and the heap profile's sum.
	curl -s "$srv/pid/$pid/metrics" >"$wd/metrics"
	recv=$(awk '/^gotop_go_goroutines\{state="waiting",wait_reason="chan receive"\}/ { print $NF }' "$wd/metrics")
	inuse=$(awk '/^gotop_go_heap_inuse_bytes / { print $2 }' "$wd/metrics")
	want_inuse=$(sums "$wd/ours.heap.pb.gz" 4 | awk '$1 == "T" { print $3 }')
	check "go$v: metrics: $recv goroutines in chan receive (10), heap in use $inuse bytes (the profile's $want_inuse)" \
		test "${recv:-x}" = 10 -a "${inuse:-x}" = "${want_inuse:-y}"
	[ "${recv:-x}" = 10 ] || diag_file "$wd/metrics"
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

# goroutine?debug=2 against Go's own dump (go-goroutines.sh's comparison).
run_dump() { # VERSION
	v=$1 bin=$T/goroutines-$1 wd=$T/gr-$1
	go_build_or_skip 1 "$v" plain "$TOP_SRCDIR/tests/workloads/go/goroutines.go" "$bin" || return
	mkdir -p "$wd"
	"$bin" "$wd" >"$wd/out" 2>&1 &
	pid=$!
	track $pid
	i=0
	while [ ! -s "$wd/dump1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	code=$(http "$srv/pid/$pid/debug/pprof/goroutine?debug=2")
	cp "$T/body" "$wd/srv.txt"
	kill -USR1 $pid
	i=0
	while [ ! -s "$wd/dump2" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 $pid 2>/dev/null
	wait $pid 2>/dev/null
	go_dump "$wd/dump1" | sort >"$wd/go1"
	go_dump "$wd/dump2" | sort >"$wd/go2"
	comm -12 "$wd/go1" "$wd/go2" | awk -F'\t' '$2 != "running" && $2 != "runnable"' >"$wd/parked"
	go_dump "$wd/srv.txt" | sort >"$wd/ours"
	n=$(wc -l <"$wd/parked")
	missing=$(comm -23 "$wd/parked" "$wd/ours" | wc -l)
	check "go$v: goroutine?debug=2 (HTTP $code): $n parked goroutines with the id, state, stack and creator of Go's own dump ($missing differ)" \
		test "$code" = 200 -a "$n" -ge 9 -a "$missing" = 0
	comm -23 "$wd/parked" "$wd/ours" | sed 's/^/# go:   /' | head -5
}

for v in $GO_VERSIONS; do
	run_memprof "$v"
	run_dump "$v"
done

# ---- CPU: labels, and against gotop-perf pprof cpu over the same seconds ----

# label_shares FILE: "value share%" of handler over the samples that carry one.
label_shares() {
	pprof -tags -tagfocus=handler=. "$1" 2>/dev/null | awk '
		/^ *handler:/ { h = 1; next } /^ *[a-z_]+:/ { h = 0 }
		h && /%/ { v = $NF; p = $0; sub(/.*\(/, "", p); sub(/%.*/, "", p); print v, p }' | sort
}
# close_shares A B POINTS: the same values, each share within POINTS.
close_shares() {
	awk -v pts="$3" 'FILENAME == ARGV[1] { a[$1] = $2; next } { b[$1] = $2 }
		END { for (k in a) { if (!(k in b)) exit 1; d = a[k] - b[k]; if (d < 0) d = -d; if (d > pts) exit 1 }
		      for (k in b) if (!(k in a)) exit 1 }' "$1" "$2"
}

v=$GO_VERSION
bin=$T/labels-$v
if go_build_or_skip 5 "$v" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$bin"; then
	"$bin" -d 300s -workers 2 >"$T/labels.out" 2>&1 &
	lp=$!
	track $lp
	sleep 1
	# The same 8 seconds from both (each starts its window once its set-up is done).
	fetch "$srv/pid/$lp/debug/pprof/profile?seconds=8" "$T/srv.cpu.pb.gz" &
	fp=$!
	"$GOTOP_PERF" pprof cpu -p $lp --seconds 8 -o "$T/ours.cpu.pb.gz" 2>"$T/ours.cpu.err"
	rc=$?
	wait $fp
	frc=$?
	label_shares "$T/srv.cpu.pb.gz" >"$T/srv.labels"
	label_shares "$T/ours.cpu.pb.gz" >"$T/ours.labels"
	printf 'alpha 60\nbeta 30\ngamma 10\n' >"$T/want.labels"
	ns=$(pprof_total "$T/srv.cpu.pb.gz" 1)
	msg="go$v: go tool pprof reads the server's CPU profile (exit $frc), $ns samples, labels kept: handler $(tr '\n' ' ' <"$T/srv.labels")(60/30/10 within 5 points)"
	if [ $frc = 0 ] && [ "${ns:-0}" -gt 200 ] && close_shares "$T/srv.labels" "$T/want.labels" 5; then
		ok "$msg"
	else
		diag_file "$T/srv.cpu.pb.gz.out"
		not_ok "$msg"
	fi
	pprof_flat "$T/srv.cpu.pb.gz" | grep -E '^main\.(alpha|beta|gamma)Work ' | sort >"$T/srv.flat"
	pprof_flat "$T/ours.cpu.pb.gz" | grep -E '^main\.(alpha|beta|gamma)Work ' | sort >"$T/ours.flat"
	diag "server: $(tr '\n' ' ' <"$T/srv.flat")| gotop-perf pprof cpu: $(tr '\n' ' ' <"$T/ours.flat")"
	msg="go$v: the server's CPU profile equals gotop-perf pprof cpu (exit $rc): hot functions and handlers within 5 points"
	if [ $rc = 0 ] && [ "$(wc -l <"$T/srv.flat")" = 3 ] && close_shares "$T/srv.flat" "$T/ours.flat" 5 &&
		close_shares "$T/srv.labels" "$T/ours.labels" 5; then
		ok "$msg"
	else
		diag "handlers: server $(tr '\n' ' ' <"$T/srv.labels")| gotop-perf pprof $(tr '\n' ' ' <"$T/ours.labels")"
		diag_file "$T/ours.cpu.err"
		not_ok "$msg"
	fi
	hdr=$(curl -s -D - -o /dev/null "$srv/pid/$lp/debug/pprof/profile?seconds=1" | tr -d '\r' | grep -i '^content-disposition:')
	check "go$v: the CPU profile's header: $hdr" test "$hdr" = 'Content-Disposition: attachment; filename="profile"'

	# Five scrapers at once: one session, profiles alike.
	sleep 3
	opened0=$(grep -c "process $lp: session opened" "$T/serve.log")
	cps=
	for k in 1 2 3 4 5; do
		curl -s -o "$T/share.$k.pb.gz" -w '%{http_code}\n' "$srv/pid/$lp/debug/pprof/profile?seconds=4" >"$T/share.$k.code" &
		cps="$cps $!"
	done
	wait $cps
	opened=$(($(grep -c "process $lp: session opened" "$T/serve.log") - opened0))
	codes=$(cat "$T"/share.*.code | sort -u | tr '\n' ' ')
	for k in 1 2 3 4 5; do pprof_total "$T/share.$k.pb.gz" 1; done >"$T/share.n"
	spread=$(awk '{ s += $1; n++; v[n] = $1 } END { m = s / n; w = 0
		for (i = 1; i <= n; i++) { d = (v[i] - m) / m; if (d < 0) d = -d; if (d > w) w = d }
		printf "%.0f", 100 * w }' "$T/share.n")
	check "go$v: five scrapers at once: answers $codes, $opened session opened, samples $(tr '\n' ' ' <"$T/share.n")(within 25% of their mean: $spread%)" \
		test "$codes" = "200 " -a "$opened" = 1 -a "${spread:-100}" -le 25

	# Idle again: the session closes after its linger, no perf event, the idle threads.
	i=0
	while [ "$(perf_fds $srv_pid)" != 0 ] && [ $i -lt $((100 * gp_slow)) ]; do
		sleep 0.1
		i=$((i + 1))
	done
	fds=$(perf_fds $srv_pid)
	thr=$(ls /proc/$srv_pid/task | wc -l)
	check "go$v: idle again: $fds perf events, $thr threads (2: main and the listener)" \
		test "$fds" = 0 -a "$thr" -le 2
	[ "$thr" -le 2 ] || for t in /proc/$srv_pid/task/*; do diag "thread $(cat $t/comm)"; done
	kill $lp 2>/dev/null
fi

# ---- wall ----
# 50 snapshots a second for the server (serve --wall-hz): 1000 in its 20 s, its share of a
# 20% handler is then within 1.3 points (one standard deviation); `gotop-perf pprof wall`
# takes record's 10 a second, 200 in the same 20 s (2.8 points), so the two are compared
# within 8 points, and the server's with the workload's own figure within 5.
bin=$T/wall-$v
if go_build_or_skip 3 "$v" plain "$TOP_SRCDIR/tests/workloads/go/wall.go" "$bin"; then
	"$bin" 30 "$T/wall.own" &
	wp=$!
	track $wp
	sleep 1
	fetch "$srv/pid/$wp/debug/pprof/wall?seconds=20" "$T/srv.wall.pb.gz" &
	fp=$!
	"$GOTOP_PERF" pprof wall -p $wp --seconds 20 -o "$T/ours.wall.pb.gz" 2>"$T/ours.wall.err"
	rc=$?
	wait $fp
	frc=$?
	wait $wp
	# on_cpu FILE: the handler's running + runnable share of its wall time.
	on_cpu() {
		pprof -tags -tagfocus=handler=checkout "$1" 2>/dev/null | awk '
			/^ *state:/ { s = 1; next } /^ *[a-z_]+:/ { s = 0 }
			s && /%\)/ { p = $0; sub(/.*\( */, "", p); sub(/%.*/, "", p)
				if ($NF == "running" || $NF == "runnable") on += p }
			END { printf "%.1f", on }'
	}
	st=$(pprof -raw "$T/srv.wall.pb.gz" 2>/dev/null | grep -A1 '^Samples:' | tail -1)
	check "go$v: go tool pprof reads the server's wall profile (exit $frc): sample type $st" \
		sh -c "[ $frc = 0 ] && echo '$st' | grep -q 'wall/nanoseconds'"
	a=$(on_cpu "$T/srv.wall.pb.gz")
	b=$(on_cpu "$T/ours.wall.pb.gz")
	own=$(awk '/^busy/ { printf "%.1f", 100 * $2 / ($2 + $4) }' "$T/wall.own")
	check "go$v: handler=checkout on CPU ${a}% of its wall time in the server's wall profile, ${own}% by its own account (5 points)" \
		awk -v a="$a" -v b="$own" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 5 && d <= 5) }'
	check "go$v: ... and ${b}% in gotop-perf pprof wall's over the same seconds (exit $rc; 8 points)" \
		awk -v a="$a" -v b="$b" -v rc=$rc 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(rc == 0 && b > 5 && d <= 8) }'
fi

serve_stop
rc=$?
check "the server stops on SIGTERM with status 0 (status $rc)" test $rc = 0
grep -c ' GET ' "$T/serve.log" | sed 's/^/# requests logged: /'
finish
