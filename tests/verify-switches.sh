#!/bin/sh
# verify-switches.sh: the verifier past stack switches. On the switches workload (stack growth:
# runtime.morestack; large allocations: runtime.systemstack; cgo calls into C built without
# frame pointers: runtime.asmcgocall; a C -> Go callback: runtime.cgocallback), `gotop-perf
# verify` continues its ground truth, libunwind, on the suspended goroutine's stack from the
# state the switch saved (through cgocallback's frame: the state of the cgo call below the C
# code), as Go's traceback does.
# Checked per Go release of GO_VERSIONS: comparisons that cross a switch are counted; at most 1%
# of the repaired crossing stacks disagree with the truth; the crossing truths themselves follow
# Go's rule (a cgo call's C frames have, after runtime.cgocall, the Go caller of the call, as in
# Go's own profile; runtime.morestack is followed by the function whose prologue called it:
# main.growDeep, whose stack grows, or a function preempted there (runtime.newstack also
# serves preemption requests), then the goroutine's frames; a callback's runtime.cgocallback by runtime.cgocall, the
# _Cfunc_ wrapper and main.callbackLoop; the truth ends at runtime.goexit); at most 1% of the
# repaired callback stacks disagree; the target is left running, untraced, and stopped at
# most --max-stopped of the time.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v jq >/dev/null || skip_all "jq is not installed (setup.sh installs it)"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc: the workload calls C through cgo"
[ "$(uname -m)" = x86_64 ] || skip_all "the verifier unwinds amd64 threads"
plan_per_version 7
SRC=$TOP_SRCDIR/tests/workloads/go/switches.go

json() { jq -r "$2" "$1" 2>/dev/null; }

# crossings DUMP: "N CGO CGOOK GROW GROWOK TOP CB CBOK CBREP" over the comparisons whose
# truth crossed a switch (cross_at=): all; with c_inner; of those with the Go caller of the
# cgo call right after runtime.cgocall (main._Cfunc_c_outer and main.cgoLoop, or
# c_callback's main._Cfunc_c_callback and main.callbackLoop); through runtime.morestack; of
# those with main.growDeep right after it, or a named function and then the goroutine's
# frames up to runtime.goexit (both without the stops in a signal handler, whose
# truth goes through the kernel's signal frame by libc's CFI: where the signal came decides
# what follows); ending at runtime.goexit or at the verifier's 256
# frames (a recursion 2000 deep); through a callback's runtime.cgocallback; of those with
# runtime.cgocall, main._Cfunc_c_callback and main.callbackLoop right after it; of those
# whose repaired chain disagrees, stops in a signal handler apart (SIG): a repaired chain
# does not cross the kernel's signal frame (the truth does, by libc's CFI for it), on or
# off a callback, and the overall figure above counts those.
crossings() {
	awk '/^cmp / && / cross_at=/ {
		fn = ""
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^truth_fn=/) fn = substr($i, 10)
			if ($i ~ /^truth=/) nt = split($i, pcs, ",")
		}
		n++
		if (fn ~ /(^|;)c_inner;/) { c++
			if (fn ~ /;runtime\.cgocall;main\._Cfunc_c_(outer;main\.cgoLoop|callback;main\.callbackLoop);/) cok++ }
		if (fn ~ /;runtime\.morestack;/ && fn !~ /^runtime\.(cgoS|s)igtramp;/) { g++
			if (fn ~ /;runtime\.morestack;main\.growDeep;/ ||
			    fn ~ /;runtime\.morestack;[A-Za-z_][^;?]*\.[^;?]+;([A-Za-z_][^;?]*;)*runtime\.goexit$/) gok++ }
		if (fn ~ /;runtime\.goexit$/ || nt >= 256) top++
		if (fn ~ /;runtime\.cgocallback;/) { cb++
			if (fn ~ /;runtime\.cgocallback;runtime\.cgocall;main\._Cfunc_c_callback;main\.callbackLoop;/) cbok++
			if ($0 !~ / rep=agrees/) { if (fn ~ /^runtime\.(cgoS|s)igtramp;/) sig++; else cbrep++ } }
	} END { printf "%d %d %d %d %d %d %d %d %d %d\n", n, c, cok, g, gok, top, cb, cbok, cbrep, sig }' "$1"
}

for v in $GO_VERSIONS; do
	bin=$T/switches-$v
	go_build_or_skip 7 "$v" cgo "$SRC" "$bin" || continue
	# 100 crossing comparisons make 1% one odd stack: about 10 s at 100 per second on a quiet
	# machine (40% of the threads running are past a switch); a busy one gets longer runs.
	secs=$((10 * gp_slow))
	while :; do
		"$bin" -d $((secs * 3 + 30))s >"$T/wl-$v.out" 2>&1 &
		pid=$!
		track $pid
		sleep 0.5
		"$GOTOP_PERF" verify -q -p $pid -d $secs --rate 100 --dump --json >"$T/v-$v.out" 2>"$T/v-$v.err"
		rc=$?
		grep '^{' "$T/v-$v.out" >"$T/v-$v.json"
		n=$(json "$T/v-$v.json" '.crossing.comparisons // 0')
		{ [ $rc -ne 0 ] || [ "${n:-0}" -ge 100 ] || [ $secs -ge $((40 * gp_slow)) ]; } && break
		kill $pid 2>/dev/null
		wait $pid 2>/dev/null
		diag "go$v: only ${n:-0} crossing comparisons in $secs s: again for $((secs * 2)) s"
		secs=$((secs * 2))
	done
	run=$(truth running $pid)
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	check "go$v: verify exits 0 with a JSON report ($rc)" \
		sh -c "[ $rc -eq 0 ] && jq -e .crossing.comparisons '$T/v-$v.json' >/dev/null"
	tot=$(json "$T/v-$v.json" '.comparisons // 0')
	rawp=$(json "$T/v-$v.json" '.crossing.raw_wrong_pct // 0')
	repw=$(json "$T/v-$v.json" '.crossing.repaired_wrong // 0')
	repp=$(json "$T/v-$v.json" '.crossing.repaired_wrong_pct // 100')
	missed=$(json "$T/v-$v.json" '.crossing.missed // 0')
	budget=$(json "$T/v-$v.json" '.crossing.walk_budget // 0')
	share=$(json "$T/v-$v.json" '.stops.stopped_share_pct // 100')
	diag "go$v: $tot comparisons, ${n:-0} crossing a switch: raw wrong $rawp%, repaired wrong $repp% ($repw); $missed ended at a switch with no goroutine read; $budget repaired compared to the walk's 40 frames"
	diag "go$v: stops $(json "$T/v-$v.json" '"p50 \(.stops.p50_us) us, p99 \(.stops.p99_us) us; reading a goroutine: \(.goroutine_stops.count), p50 \(.goroutine_stops.p50_us) us, p99 \(.goroutine_stops.p99_us) us; the others p50 \(.other_stops.p50_us) us, p99 \(.other_stops.p99_us) us"')"
	grep '^cmp ' "$T/v-$v.out" | grep ' cross_at=' | grep -v 'rep=agrees' | head -3 |
		sed 's/ truth=[^ ]*//; s/ rawfp=[^ ]*//; s/ rawfp_fn=[^ ]*//; s/ repaired=[^ ]*//' |
		sed -E 's/(main\.growDeep;)+/main.growDeep...;/g' | cut -c1-400 | while read -r l; do diag "disagrees: $l"; done
	check "go$v: comparisons crossing a switch are counted (${n:-0}, need 100)" [ "${n:-0}" -ge 100 ]
	check "go$v: <= 1% of the repaired crossing stacks disagree with the truth ($repp%, $repw of ${n:-0})" \
		awk -v p="$repp" -v n="${n:-0}" 'BEGIN { exit !(n > 0 && p <= 1) }'
	set -- $(crossings "$T/v-$v.out")
	diag "go$v: crossing truths: $1; through c_inner $2, with the cgo call's Go caller after runtime.cgocall $3; through morestack $4, with main.growDeep or a named caller up to goexit after it $5; ending at runtime.goexit $6"
	check "go$v: crossing truths follow Go's rule: C under the cgo call's Go caller ($3 of $2), morestack under its caller ($5 of $4)" \
		sh -c "[ ${2:-0} -gt 0 ] && [ ${4:-0} -gt 0 ] && [ ${3:-0} -eq ${2:-0} ] && [ ${5:-0} -eq ${4:-0} ]"
	# The truth goes on to the goroutine's first frame unless the unwind stops early (a
	# frame without unwind information).
	check "go$v: >= 90% of the crossing truths end at runtime.goexit or 256 frames (${6:-0} of ${1:-0})" \
		awk -v a="${6:-0}" -v b="${1:-0}" 'BEGIN { exit !(b > 0 && a >= 0.9 * b) }'
	diag "go$v: callback truths crossing runtime.cgocallback: $7; with cgocall, _Cfunc_c_callback, callbackLoop after it $8; repaired disagreeing $9, and ${10} more stopped in a signal handler"
	check "go$v: callback truths cross cgocallback to main.callbackLoop ($8 of $7) and <= 1% of their repaired stacks disagree ($9)" \
		awk -v n="${7:-0}" -v ok="${8:-0}" -v bad="${9:-0}" 'BEGIN { exit !(n >= 20 && ok == n && bad <= 0.01 * n) }'
	check "go$v: the target keeps running, untraced, stopped $share% of the time (<= 1%)" \
		sh -c "$run && awk -v s='$share' 'BEGIN { exit !(s <= 1) }'"
done
finish
