#!/bin/sh
# serve-bad.sh: `gotop-perf serve` against bad input and hostile clients. Every garbage path
# and parameter gets its 4xx (400 garbage, 404 no such process or profile, 405, 413) with a
# one-line body; a process this server may not trace is 403 and not listed; the bearer
# token is required and checked; a remote address is refused without --allow-remote and a
# token; a slow reader gets its whole answer while others are served; a client that sends
# half a request is cut off after --timeout; a hundred clients at once get 200 or 503 and
# the server serves on; profiles beyond --max-profiles get 503; a target that exits during
# its profile gives what was collected; a client that leaves ends its profile; a server
# stopped (SIGTERM) or killed (SIGKILL) during a profile leaves its target running, no
# thread of it stopped or traced; the server stops with status 0 on SIGTERM (so that the
# sanitizers check it at its exit). Under ASan and valgrind (tests/sanitize.sh) the same.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/serve.sh"

need_perf
command -v curl >/dev/null || skip_all "curl not found (setup.sh installs it)"
command -v jq >/dev/null || skip_all "jq not found (setup.sh installs it)"
plan 17

bin=$T/memprof
if ! go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin" >"$T/build.err" 2>&1; then
	skip_all "no Go $GO_VERSION workload: $(head -1 "$T/build.err")"
fi
go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$T/labels" >"$T/build.err" 2>&1 ||
	skip_all "no Go $GO_VERSION workload: $(head -1 "$T/build.err")"
mkdir -p "$T/mp"
"$bin" "$T/mp" -d 300s >"$T/mp/stdout" 2>&1 &
mp=$!
track $mp
wait_line "$T/mp/stdout" '^ready' 60 || skip_all "memprof did not start"
"$T/labels" -d 300s -workers 1 >/dev/null 2>&1 &
lp=$!
track $lp

if ! serve_start "$T/serve.log" --timeout 3 --max-seconds 60 --max-profiles 4 \
	--max-connections 24 --max-per-ip 24 --linger 1; then
	diag_file "$T/serve.log"
	skip_all "the server did not start"
fi
srvp=$srv_pid

# ---- garbage ----
sleep 300 &
notgo=$!
track $notgo
# A pid no process has: the highest free one below pid_max.
nopid=$(($(cat /proc/sys/kernel/pid_max) - 1))
while [ -d /proc/$nopid ]; do nopid=$((nopid - 1)); done
long=$(head -c 40000 /dev/zero | tr '\0' a)
b=/pid/$mp/debug/pprof
cat >"$T/cases" <<EOF
400 /pid/abc/debug/pprof/heap
400 /pid/0/debug/pprof/heap
400 /pid/0012/debug/pprof/heap
400 /pid/99999999999/debug/pprof/heap
400 /pid/-1/debug/pprof/heap
400 /pid/%00/debug/pprof/heap
400 /pid/12x/debug/pprof/heap
404 /pid/$nopid/debug/pprof/heap
404 /pid/$notgo/debug/pprof/heap
404 /pid/2/debug/pprof/heap
404 /pid/$srvp/debug/pprof/heap
404 $b/nosuch
404 $b/threadcreate
404 $b/../../../../etc/passwd
404 $b/%2e%2e/%2e%2e/%2e%2e/etc/passwd
404 $b/..%2f..%2f..%2fetc%2fpasswd
404 /pid/$mp/debug/pprof/./heap/..
404 /pid/$mp/debug/pprof
404 /pid/$mp/metricsx
404 /etc/passwd
404 /debug/pprof/heap
404 /metrics
400 $b/heap?debug=abc
400 $b/heap?debug=3
400 $b/heap?debug=-1
400 $b/heap?debug=
400 $b/heap?debug
400 $b/heap?seconds=0
400 $b/heap?seconds=-5
400 $b/heap?seconds=1e3
400 $b/heap?seconds=99999999999
400 $b/heap?seconds=61
400 $b/heap?seconds=1&debug=1
400 $b/heap?seconds=1&seconds=2
400 $b/heap?foo=bar
400 $b/heap?gc=1
400 $b/goroutine?gc=0
400 $b/profile?seconds=100000
400 $b/profile?seconds=0
400 $b/profile?debug=1
400 $b/wall?seconds=x
400 $b/?debug=1
400 /targets?x=1
4xx $b/heap?$long
4xx /$long
EOF
bad=0
n=0
while read -r want path; do
	n=$((n + 1))
	code=$(curl -s --path-as-is -o "$T/body" -w '%{http_code}' --max-time 30 "$srv$path")
	lines=$(wc -l <"$T/body")
	ctl=$(tr -d '\n\t' <"$T/body" | LC_ALL=C grep -c '[[:cntrl:]]')
	case $want in 4xx) ok_code=$(echo "$code" | grep -c '^4[0-9][0-9]$') ;; *) ok_code=$([ "$code" = "$want" ] && echo 1 || echo 0) ;; esac
	if [ "$ok_code" != 1 ] || { [ "$want" != 4xx ] && { [ "$lines" != 1 ] || [ "$ctl" != 0 ]; }; }; then
		bad=$((bad + 1))
		diag "$(echo "$path" | cut -c1-80): $code (want $want), $lines lines: $(head -c 120 "$T/body")"
	fi
done <"$T/cases"
check "$n garbage paths and parameters: each its 4xx with a one-line body ($bad wrong)" test $bad = 0
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$srv$b/heap")
code2=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --data-binary @"$bin" "$srv$b/heap")
code3=$(curl -s -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @/dev/null "$srv$b/heap")
check "POST is 405, a request with a body 413 ($code, $code2, $code3)" \
	test "$code" = 405 -a "$code2" = 413 -a "$code3" = 413
check "... and the server still serves (/targets $(http "$srv/targets"))" \
	sh -c "kill -0 $srvp && [ \"\$(curl -s -o /dev/null -w '%{http_code}' '$srv/targets')\" = 200 ]"

# ---- who may be served ----
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$GOTOP_PERF" serve --listen 127.0.0.1:0 2>"$T/nobody.log" &
	np=$!
	track $np
	if wait_line "$T/nobody.log" '^gotop-perf: serving' 20; then
		nsrv=$(sed -n 's|^gotop-perf: serving \(http://[^/]*\)/.*|\1|p' "$T/nobody.log")
		c403=$(curl -s -o "$T/body" -w '%{http_code}' "$nsrv/pid/$mp/debug/pprof/heap")
		listed=$(curl -s "$nsrv/targets" | jq --arg p "$mp" '[.[] | select(.labels.pid == $p)] | length')
		check "as nobody: root's process is 403 ($c403: $(head -c 100 "$T/body")) and not in /targets ($listed)" \
			test "$c403" = 403 -a "$listed" = 0
	else
		diag_file "$T/nobody.log"
		not_ok "the server as nobody did not start"
	fi
	kill -TERM $np 2>/dev/null
	wait $np
else
	skip "needs root, the nobody user and setpriv"
fi

# ---- the token, and remote addresses ----
printf 'tok-%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/token"
chmod 600 "$T/token"
tok=$(head -1 "$T/token")
"$GOTOP_PERF" serve --listen 127.0.0.1:0 --token-file "$T/token" 2>"$T/tok.log" &
tp=$!
track $tp
if wait_line "$T/tok.log" '^gotop-perf: serving' 20; then
	tsrv=$(sed -n 's|^gotop-perf: serving \(http://[^/]*\)/.*|\1|p' "$T/tok.log")
	c1=$(curl -s -o /dev/null -w '%{http_code}' "$tsrv/targets")
	www=$(curl -s -D - -o /dev/null "$tsrv/targets" | tr -d '\r' | grep -i '^www-authenticate:')
	c2=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${tok}x" "$tsrv/targets")
	c3=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $(echo "$tok" | cut -c1-20)" "$tsrv/targets")
	c4=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Basic $tok" "$tsrv/targets")
	c5=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$tsrv/targets")
	c6=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$tsrv/pid/$mp/metrics")
	check "bearer token: none $c1 ($www), longer $c2, shorter $c3, Basic $c4: 401; right $c5, $c6: 200" \
		test "$c1$c2$c3$c4$c5$c6" = 401401401401200200 -a -n "$www"
else
	diag_file "$T/tok.log"
	not_ok "the server with a token did not start"
fi
kill -TERM $tp 2>/dev/null
wait $tp
"$GOTOP_PERF" serve --listen 0.0.0.0:0 >/dev/null 2>"$T/r1" &
r1p=$!
sleep 0.5
"$GOTOP_PERF" serve --listen 0.0.0.0:0 --allow-remote >/dev/null 2>"$T/r2" &
r2p=$!
printf 'short\n' >"$T/short"
"$GOTOP_PERF" serve --token-file "$T/short" >/dev/null 2>"$T/r3" &
r3p=$!
wait $r1p
e1=$?
wait $r2p
e2=$?
wait $r3p
e3=$?
check "refused with status 2 and one line: a remote address without --allow-remote ($e1: $(cat "$T/r1")), without a token ($e2), a short token ($e3)" \
	test "$e1$e2$e3" = 222 -a "$(cat "$T/r1" "$T/r2" "$T/r3" | wc -l)" = 3
ip=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | head -1)
if [ -n "$ip" ]; then
	"$GOTOP_PERF" serve --listen "$ip:0" --allow-remote --token-file "$T/token" 2>"$T/rem.log" &
	rp=$!
	track $rp
	if wait_line "$T/rem.log" '^gotop-perf: serving' 20; then
		rsrv=$(sed -n 's|^gotop-perf: serving \(http://[^/]*\)/.*|\1|p' "$T/rem.log")
		c1=$(curl -s -o /dev/null -w '%{http_code}' "$rsrv/targets")
		c2=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $tok" "$rsrv/targets")
		check "on $rsrv with --allow-remote and a token: 401 without it ($c1), 200 with it ($c2)" \
			test "$c1$c2" = 401200
	else
		diag_file "$T/rem.log"
		not_ok "the server on $ip did not start"
	fi
	kill -TERM $rp 2>/dev/null
	wait $rp
else
	skip "no address other than loopback on this machine"
fi

# ---- slow and many clients ----
curl -s -o "$T/fast" "$srv$b/heap?debug=1"
size=$(wc -c <"$T/fast")
curl -s -o "$T/slow" --limit-rate 1k "$srv$b/heap?debug=1" &
slowp=$!
sleep 1
mid=$(curl -s -o /dev/null -w '%{http_code}' "$srv$b/goroutine")
slow_running=$(kill -0 $slowp 2>/dev/null && echo yes || echo no)
wait $slowp
got=$(wc -c <"$T/slow")
diag "the slow reader was still reading when the other was answered: $slow_running"
check "a reader at 1 KB/s gets all of its $size bytes ($got), and another request meanwhile is answered ($mid)" \
	test "$got" = "$size" -a "$size" -gt 2000 -a "$mid" = 200
# Half a request, then silence: cut off after --timeout 3.
host=${srv#http://}
perl -MIO::Socket::INET -e '
	my ($h, $p) = split(/:/, $ARGV[0]);
	my $s = IO::Socket::INET->new(PeerAddr => $h, PeerPort => $p) or die "connect: $!";
	print $s "GET /targets HTTP/1.1\r\nHost: x\r\n";
	my $t0 = time; my $buf; my $n = sysread($s, $buf, 100);
	printf "%d %d\n", time - $t0, defined $n ? $n : -1;' "$host" >"$T/slowloris" 2>&1 &
slp=$!
i=0
while kill -0 $slp 2>/dev/null && [ $i -lt $((300 * gp_slow)) ]; do
	sleep 0.1
	i=$((i + 1))
done
kill $slp 2>/dev/null
wait $slp 2>/dev/null
check "half a request is cut off after --timeout 3 (closed after $(cut -d' ' -f1 "$T/slowloris") s)" \
	awk '{ exit !($1 >= 2 && $1 <= 20 && $2 <= 0) }' "$T/slowloris"
# Each asks for a 2 s delta: past --max-connections 24 connections are refused, past
# --max-profiles 4 requests are told 503.
cps=
mkdir -p "$T/many"
for k in $(seq 1 100); do
	curl -s -o /dev/null -w '%{http_code}\n' --max-time $((60 * gp_slow)) "$srv$b/heap?seconds=2" >"$T/many/$k" 2>/dev/null &
	cps="$cps $!"
done
wait $cps
sum=$(cat "$T"/many/* | sort | uniq -c | awk '{ printf "%s x%s ", $2, $1 }')
n200=$(cat "$T"/many/* | grep -c '^200$')
other=$(cat "$T"/many/* | grep -vcE '^(200|503|000)$')
check "100 clients at once: ${sum}(at least 4 of 200, nothing but 200, 503 or refused)" \
	test "$n200" -ge 4 -a "$other" = 0
alive=$(http "$srv/targets")
check "... and the server serves on (/targets $alive)" test "$alive" = 200
cps=
for k in 1 2 3 4 5 6 7 8; do
	curl -s -o /dev/null -w '%{http_code}\n' "$srv/pid/$lp/debug/pprof/profile?seconds=3" >"$T/prof.$k" &
	cps="$cps $!"
done
wait $cps
p200=$(cat "$T"/prof.* | grep -c '^200$')
p503=$(cat "$T"/prof.* | grep -c '^503$')
check "8 CPU profiles at once, --max-profiles 4: $p200 answered, $p503 told 503" \
	test "$p200" = 4 -a "$p503" = 4

# ---- a target that exits, a client that leaves ----
# (16 s under valgrind, where the server takes seconds to set up a session.)
"$T/labels" -d $((4 * gp_slow))s -workers 1 >/dev/null 2>&1 &
ep=$!
t0=$(date +%s)
code=$(curl -s -o "$T/exit.pb.gz" -w '%{http_code}' --max-time $((60 * gp_slow)) "$srv/pid/$ep/debug/pprof/profile?seconds=50")
took=$(($(date +%s) - t0))
wait $ep
nsamp=$(if [ -s "$T/exit.pb.gz" ] && pprof_setup; then pprof_total "$T/exit.pb.gz" 1; else echo 0; fi)
check "a target that exits $((4 * gp_slow)) s into a 50 s profile: $code after $took s, $nsamp samples" \
	test "$code" = 200 -a "$took" -lt 40 -a "${nsamp:-0}" -gt 0
grep -q "process $ep has exited\|exited after" "$T/serve.log" || diag "no line about the exit in the log"
curl -s -o /dev/null --max-time 2 "$srv/pid/$lp/debug/pprof/profile?seconds=30"
i=0
while ! grep -q "pid/$lp/debug/pprof/profile?seconds=30 503 .*the client left" "$T/serve.log" &&
	[ $i -lt $((100 * gp_slow)) ]; do
	sleep 0.1
	i=$((i + 1))
done
i=0
while [ "$(perf_fds $srvp)" != 0 ] && [ $i -lt $((100 * gp_slow)) ]; do
	sleep 0.1
	i=$((i + 1))
done
check "a client that leaves ends its profile (logged: $(grep -c 'the client left' "$T/serve.log")), the session closes ($(perf_fds $srvp) perf events)" \
	sh -c "grep -q 'seconds=30 503 .*the client left' '$T/serve.log' && [ $(perf_fds $srvp) = 0 ]"

# ---- stopped and killed during a profile ----
curl -s -o /dev/null -w '%{http_code}' --max-time $((60 * gp_slow)) "$srv/pid/$lp/debug/pprof/wall?seconds=40" >"$T/term.code" &
cp=$!
i=0
while [ "$(perf_fds $srvp)" = 0 ] && [ $i -lt $((100 * gp_slow)) ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1
t0=$(date +%s)
serve_stop
rc=$?
took=$(($(date +%s) - t0))
wait $cp
msg="SIGTERM during a wall profile: status $rc after $took s, the client told $(cat "$T/term.code"), the target runs on untraced"
if [ $rc = 0 ] && [ $took -le $((10 * gp_slow)) ] && grep -qE '^(503|000)$' "$T/term.code" && running $lp; then
	ok "$msg"
else
	not_ok "$msg"
fi
serve_start "$T/serve2.log" --linger 1 || diag_file "$T/serve2.log"
curl -s -o /dev/null --max-time $((60 * gp_slow)) "$srv/pid/$lp/debug/pprof/wall?seconds=40" &
cp=$!
i=0
while [ "$(perf_fds $srv_pid)" = 0 ] && [ $i -lt $((100 * gp_slow)) ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 2
kill -9 $srv_pid
wait $srv_pid 2>/dev/null
wait $cp
sleep 0.5
states=$(thread_states $lp | sort | uniq -c | tr '\n' ' ')
check "SIGKILL during a wall profile: the target runs on, no thread stopped or traced ($states)" running $lp

# The last server, stopped cleanly: the sanitizers look at it at its exit.
serve_start "$T/serve3.log" || diag_file "$T/serve3.log"
http "$srv/pid/$mp/debug/pprof/goroutine?debug=2" >/dev/null
serve_stop
rc=$?
check "a server stopped with SIGTERM exits with status 0 ($rc)" test $rc = 0
kill $mp $lp $notgo 2>/dev/null
finish
