#!/bin/sh
# serve-readonly.sh: `gotop-perf serve` never writes to a target. The server runs under
# strace while a client asks for every endpoint of a Go service (heap, allocs, block,
# mutex, goroutine and its two texts, profile, wall, metrics, /targets): no
# process_vm_writev, no ptrace request that writes (POKE*, SET*), and every open of a
# process's /proc/PID/mem read-only; and, so that the check can fail, the target's memory was
# read (process_vm_readv or a /proc/PID/mem opened) and every answer was 200.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/serve.sh"

[ -n "${GOTOP_WRAP:-}" ] && skip_all "strace and valgrind do not nest"
[ -n "${GOTOP_UNDER_SANITIZER:-}" ] && skip_all "LeakSanitizer does not work under strace (ptrace)"
need_perf
command -v strace >/dev/null || skip_all "strace not found"
command -v curl >/dev/null || skip_all "curl not found (setup.sh installs it)"
bin=$T/pprofhttp
go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/pprofhttp.go" "$bin" >"$T/build.err" 2>&1 ||
	skip_all "no Go $GO_VERSION workload: $(head -1 "$T/build.err")"
plan 3

"$bin" -d 300s >"$T/ph.out" 2>"$T/ph.err" &
pid=$!
track $pid
wait_line "$T/ph.out" '^ready' 60 || skip_all "pprofhttp did not get ready: $(head -1 "$T/ph.err")"

# The server under strace: serve_start runs "$GOTOP_PERF" serve ARGS.
real=$GOTOP_PERF
cat >"$T/straced" <<EOS
#!/bin/sh
exec strace -f -qq -o "$T/strace.log" -e signal=none \
	-e trace=process_vm_writev,process_vm_readv,ptrace,open,openat,pwrite64,pwritev,pwritev2 \
	"$real" "\$@"
EOS
chmod +x "$T/straced"
GOTOP_PERF=$T/straced
if ! serve_start "$T/serve.log" --linger 1; then
	diag_file "$T/serve.log"
	skip_all "the server did not start under strace"
fi
GOTOP_PERF=$real
b=$srv/pid/$pid/debug/pprof
codes=
for u in "$b/heap" "$b/allocs" "$b/block" "$b/mutex" "$b/goroutine" "$b/goroutine?debug=1" \
	"$b/goroutine?debug=2" "$b/heap?debug=1" "$b/heap?seconds=1" "$b/profile?seconds=2" \
	"$b/wall?seconds=3" "$srv/pid/$pid/metrics" "$srv/targets" "$b/"; do
	codes="$codes $(curl -s -o /dev/null -w '%{http_code}' --max-time 120 "$u")"
done
# SIGTERM to the server itself (strace would detach and leave it running); strace exits
# with its status.
spid=$(pgrep -P "$srv_pid" | head -1)
kill -TERM "${spid:-$srv_pid}" 2>/dev/null
i=0
while kill -0 "$srv_pid" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
if kill -0 "$srv_pid" 2>/dev/null; then
	kill -9 ${spid:-} "$srv_pid" 2>/dev/null
	rc=124
else
	wait "$srv_pid"
	rc=$?
fi
check "every endpoint answered 200 under strace:$codes (server status $rc)" \
	sh -c "echo '$codes' | grep -qv ' [^2]' && test $rc = 0"

writes=$(grep -cE 'process_vm_writev\(|ptrace\(PTRACE_(POKE|SET)' "$T/strace.log")
memw=$(grep -E 'open(at)?\(.*"/proc/[0-9]+/(task/[0-9]+/)?mem"' "$T/strace.log" | grep -vc 'O_RDONLY')
pw=$(grep -cE 'pwrite' "$T/strace.log")
grep -E 'process_vm_writev\(|ptrace\(PTRACE_(POKE|SET)|pwrite' "$T/strace.log" | head -5 | sed 's/^/# /'
check "no write to the target: $writes process_vm_writev or ptrace writes, $memw /proc/PID/mem opened for writing, $pw pwrite" \
	test "$writes" = 0 -a "$memw" = 0 -a "$pw" = 0
reads=$(grep -cE 'process_vm_readv\(' "$T/strace.log")
opens=$(grep -cE 'open(at)?\(.*"/proc/[0-9]+/mem"' "$T/strace.log")
check "... while it read the target's memory ($reads process_vm_readv, $opens /proc/PID/mem opened)" \
	test $((reads + opens)) -gt 0
finish
