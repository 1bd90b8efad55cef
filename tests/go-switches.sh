#!/bin/sh
# go-switches.sh: stacks that cross stacks. The switches workload grows goroutine stacks
# (runtime.morestack), allocates large slices (runtime.systemstack), calls C built without
# frame pointers (runtime.asmcgocall) and is called back from C; gotop-perf's stacks must go
# on past the switch to the suspended goroutine's frames, as Go's own profile of the same
# window does: at most 0.5% of the samples with a goroutine end at a switch, >= 99% of the
# C-side samples have the Go caller of the cgo call, the stack-copy samples carry
# main.growDeep at least as often as in Go's profile (less 2 points), and samples taken on g0
# carry the suspended goroutine's labels and id (an id left out only where the aggregator
# keeps none for short-lived goroutines); >= 99% of the samples in the callback's Go
# code (main.spinGo, C -> Go) have, below runtime.cgocallback, the cgo call's Go frames down
# to main.callbackLoop, as in Go's profile. --no-repair keeps the old chains. Every Go
# release of GO_VERSIONS.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
grep -q '^#define HAVE_GOBPF 1' "$TOP_BUILDDIR/config.h" ||
	skip_all "built without BPF support: the goroutine's state is copied at the sample by it"
command -v gcc >/dev/null 2>&1 || skip_all "no gcc: the workload calls C through cgo"
plan_per_version 9
SRC=$TOP_SRCDIR/tests/workloads/go/switches.go

# traces FILE: one line per trace of go tool pprof -traces, "WEIGHT ROLE GOID leaf;...;root"
# (WEIGHT in ns, ROLE and GOID "-" when the sample has no such label).
traces() {
	pprof -traces "$1" 2>/dev/null | awk '
		function val(v,   n) {
			n = v; sub(/[a-z]+$/, "", n)
			if (v ~ /ns$/) return n; if (v ~ /us$/) return n * 1e3
			if (v ~ /ms$/) return n * 1e6; if (v ~ /s$/) return n * 1e9
			return n
		}
		function out() { if (s != "") print w, role, goid, s; s = ""; role = "-"; goid = "-" }
		BEGIN { role = "-"; goid = "-" }
		/^-+\+/ { out(); next }
		/^ +role: / { role = $2; next }
		/^ +goroutine: / { goid = $2; next }
		/^ +[a-z_]+: / { next }
		/^ +[0-9.]+[a-z]* +[^ ]/ && $1 ~ /^[0-9.]+[a-z]*$/ { w = val($1); s = $2; next }
		/^             [^ ]/ && s != "" { s = s ";" $1 }
		END { out() }'
}

# shares FILE: "ENDS CSIDE CGOOD COPY CGROW CLAB CCLAB" from traces: percent of the samples
# with a goroutine that end at a switch; C-side ms and percent with their Go caller;
# stack-copy ms (copystack called by newstack: growth, not the GC's shrinking) and percent
# under main.growDeep; percent of the stack-copy samples labelled role=grow; percent of the
# C samples of main.cgoLoop labelled role=cgo (with a goroutine id);
# ms in the callback's Go code (main.spinGo) and percent of them whose stack goes on below
# runtime.cgocallback through runtime.cgocall and the _Cfunc_ wrapper to main.callbackLoop;
# the count of stack-copy traces labelled role=grow without a goroutine id.
shares() {
	awk '
		{ n = split($4, f, ";"); w = $1
		  if ($3 != "-") { withg += w; if (f[n] ~ /^runtime\.(morestack|systemstack|asmcgocall|mcall)$/) ends += w }
		  # C side: C frames of ours before any Go frame (the callback'"'"'s Go code excluded)
		  c = 0
		  for (i = 1; i <= n; i++) { if (f[i] ~ /^c_/) { c = 1; break } if (f[i] ~ /^(main|runtime)\./) break }
		  if (c) { cs += w; if ($4 ~ /;main\.(cgoLoop|callbackLoop);/) cg += w
		           if ($4 ~ /c_outer/) { co += w; if ($2 == "cgo" && $3 != "-") col += w } }
		  if ($4 ~ /runtime\.copystack;runtime\.newstack;/) { cp += w; if ($4 ~ /main\.growDeep/) cpg += w
		           if ($2 == "grow") { cpr += w; if ($3 == "-") cpn++ } }
		  if (f[1] == "main.spinGo") { cb += w
		           if ($4 ~ /;runtime\.cgocallback;(runtime\.[a-z_]+;)*runtime\.cgocall;main\._Cfunc_c_callback;main\.callbackLoop(;|$)/) cbg += w } }
		function pc(a, b) { return b ? 100 * a / b : 0 }
		END { printf "%.2f %d %.2f %d %.2f %.2f %.2f %d %.2f %d\n", pc(ends, withg), cs / 1e6, pc(cg, cs),
			cp / 1e6, pc(cpg, cp), pc(cpr, cp), pc(col, co), cb / 1e6, pc(cbg, cb), cpn }' "$1"
}

# record_window V SECS: runs the workload of release V; its own profile (SIGUSR1 to SIGUSR2)
# spans gotop-perf's two recordings of SECS seconds, repaired and --no-repair side by side,
# started together. Sets reprc and rawrc.
record_window() {
	"$bin" -signals -cpuprofile "$T/go-$1.pprof" >"$T/wl-$1.out" 2>&1 &
	pid=$!
	track $pid
	i=0
	while [ $i -lt 100 ] && ! grep -q ready "$T/wl-$1.out"; do sleep 0.1; i=$((i + 1)); done
	kill -USR1 $pid
	"$GOTOP_PERF" record -v -p $pid -d "$2" -o "$T/rep-$1.pb.gz" >"$T/rep-$1.out" 2>&1 &
	rp=$!
	"$GOTOP_PERF" record -v --no-repair -p $pid -d "$2" -o "$T/raw-$1.pb.gz" >"$T/raw-$1.out" 2>&1
	rawrc=$?
	wait $rp
	reprc=$?
	kill -USR2 $pid
	wait $pid
}

for v in $GO_VERSIONS; do
	bin=$T/switches-$v
	go_build_or_skip 9 "$v" cgo "$SRC" "$bin" || continue
	# 4 s give about 100 ms of stack copying and 300 ms of C on a quiet machine; a busy
	# one (or valgrind, GOTOP_WRAP) gets longer windows, up to 4 times, until the checks
	# have 30 and 50 ms.
	secs=$((4 * gp_slow))
	while :; do
		record_window "$v" $secs
		traces "$T/rep-$v.pb.gz" >"$T/rep-$v.tr"
		set -- $(shares "$T/rep-$v.tr")
		{ [ $((reprc + rawrc)) -ne 0 ] || { [ "${2:-0}" -ge 50 ] && [ "${4:-0}" -ge 30 ]; } ||
		  [ $secs -ge $((16 * gp_slow)) ]; } && break
		diag "go$v: ${2:-0} ms of C and ${4:-0} ms of stack copying in $secs s: again for $((secs * 2)) s"
		secs=$((secs * 2))
	done
	check "go$v: both recordings exit 0 ($reprc, $rawrc)" [ $((reprc + rawrc)) -eq 0 ]
	on=$(sed -n 's/.*go at the sample (BPF): \([^;]*\);.*/\1/p' "$T/rep-$v.out")
	if [ "$on" != on ]; then
		skip_n 8 "go$v: the BPF program did not run: ${on:-no Go reader}"
		continue
	fi
	traces "$T/raw-$v.pb.gz" >"$T/raw-$v.tr"
	traces "$T/go-$v.pprof" >"$T/go-$v.tr"
	set -- $(shares "$T/rep-$v.tr")
	ends=$1 cms=$2 cgood=$3 cpms=$4 cpgrow=$5 cplab=$6 colab=$7 cbms=$8 cbgood=$9 cpnoid=${10}
	set -- $(shares "$T/raw-$v.tr")
	rawends=$1 rawcgood=$3 rawcpgrow=$5 rawcbgood=$9
	set -- $(shares "$T/go-$v.tr")
	gocpms=$4 gocpgrow=$5 gocbms=$8 gocbgood=$9
	diag "go$v ours: end at a switch $ends%, C side ${cms} ms with Go caller $cgood%, stack copy ${cpms} ms under growDeep $cpgrow% (labelled $cplab%), c_outer labelled cgo $colab%"
	diag "go$v --no-repair: end at a switch $rawends%, C side with Go caller $rawcgood%, stack copy under growDeep $rawcpgrow%"
	diag "go$v Go's profile: stack copy ${gocpms} ms under growDeep $gocpgrow%"
	diag "go$v callback's Go code: ours ${cbms} ms, $cbgood% down to the cgo call's caller; --no-repair $rawcbgood%; Go's ${gocbms} ms, $gocbgood%"
	diag "go$v: $(grep -o '[0-9]* continued past a stack switch' "$T/rep-$v.out"); $(grep -o '[0-9]* with a suspended goroutine.s state' "$T/rep-$v.out")"
	check "go$v: <= 0.5% of the samples with a goroutine end at a switch ($ends%)" \
		awk -v p="$ends" 'BEGIN { exit !(p <= 0.5) }'
	# The kernel's walk stops at the switch where the runtime clears BP there (morestack
	# from go1.21, mcall from go1.26); before, it ran on into the goroutine's frames.
	rawx=$(sed -n 's/.* \([0-9]*\) continued past a stack switch.*/\1/p' "$T/raw-$v.out")
	minends=0
	[ "${v#1.}" -ge 21 ] && minends=1
	check "go$v: --no-repair keeps the chains (${rawx:-none} continued past a switch; $rawends% end there, >= $minends%)" \
		awk -v x="${rawx:-none}" -v p="$rawends" -v m=$minends 'BEGIN { exit !(x == "0" && p >= m) }'
	check "go$v: >= 99% of the C-side samples have the Go caller of the cgo call ($cgood% of $cms ms, need >= 50 ms)" \
		awk -v p="$cgood" -v n="$cms" 'BEGIN { exit !(p >= 99 && n >= 50) }'
	check "go$v: >= 99% of the callback's Go samples go on below cgocallback to main.callbackLoop, as in Go's profile ($cbgood% of $cbms ms; Go's $gocbgood% of $gocbms ms)" \
		awk -v p="$cbgood" -v g="$gocbgood" -v n="$cbms" -v gn="$gocbms" \
			'BEGIN { exit !(p >= 99 && g >= 99 && n >= 50 && gn >= 50) }'
	check "go$v: stack-copy samples under main.growDeep as in Go's profile ($cpgrow% of $cpms ms; Go's $gocpgrow% of $gocpms ms)" \
		awk -v p="$cpgrow" -v g="$gocpgrow" -v n="$cpms" -v gn="$gocpms" \
			'BEGIN { exit !(p >= g - 2 && n >= 30 && gn >= 30) }'
	# The labels prove the goroutine was found on g0 (they are read from it at the
	# sample). Its id may be left out on purpose: past the first AGG_GOID_ALL_MAX
	# goroutines of a recording, only those running for a second keep theirs (agg.c,
	# "Goroutine ids and memory"), and this workload starts a growing goroutine every few
	# milliseconds, more on a quiet machine: every trace without an id must be one of the
	# samples record -v counts as kept without one.
	young=$(sed -n 's/.*keep no goroutine id: \([0-9]*\) samples.*/\1/p' "$T/rep-$v.out")
	check "go$v: stack-copy samples (on g0) carry role=grow ($cplab%), an id but for the young past the first goroutines ($cpnoid traces without, ${young:-0} such samples)" \
		awk -v p="$cplab" -v n="$cpnoid" -v y="${young:-0}" 'BEGIN { exit !(p >= 99 && n <= y) }'
	check "go$v: C samples of main.cgoLoop (on g0) carry role=cgo and a goroutine id ($colab%)" \
		awk -v p="$colab" 'BEGIN { exit !(p >= 99) }'
	# The goroutine id of a stack-copy sample is the goroutine whose stack grows: ids
	# also sampled in main.growSpin, on its own stack after the growth, and never the id of
	# a goroutine of another role (the cgo, callback and alloc goroutines live all along).
	awk '$4 ~ /runtime\.copystack;runtime\.newstack;/ && $3 != "-" { print $3 }' "$T/rep-$v.tr" | sort -u >"$T/cp-$v.ids"
	awk '$4 ~ /^main\.growSpin;/ && $3 != "-" { print $3 }' "$T/rep-$v.tr" | sort -u >"$T/gs-$v.ids"
	awk '$2 != "grow" && $2 != "-" && $3 != "-" { print $3 }' "$T/rep-$v.tr" | sort -u >"$T/ot-$v.ids"
	both=$(comm -12 "$T/cp-$v.ids" "$T/gs-$v.ids" | wc -l)
	other=$(comm -12 "$T/cp-$v.ids" "$T/ot-$v.ids" | wc -l)
	cpids=$(wc -l <"$T/cp-$v.ids")
	check "go$v: stack-copy goroutine ids are growing goroutines ($both of $cpids also sampled in main.growSpin, $other of another role)" \
		awk -v b="$both" -v o="$other" 'BEGIN { exit !(b >= 3 && o == 0) }'
done
finish
