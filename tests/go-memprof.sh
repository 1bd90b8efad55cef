#!/bin/sh
# go-memprof.sh: `gotop-perf pprof` against Go's own profiles of the same process.
#
# tests/workloads/go/memprof.go allocates, blocks and contends at known places, writes its
# own heap, allocs, block, mutex and goroutine profiles (runtime/pprof WriteTo) and idles;
# gotop-perf then reads the same profiles from outside, and on SIGUSR1 the program writes
# heap, block and mutex again. With `go tool pprof -raw` as the decoder of both, every sample
# type's total and every function's flat and cum values must be within 0.5% of Go's first
# file (block and mutex: between Go's two files, as their counts only grow; from go1.23 the
# runtime's own lock contention goes on in the mutex profile). For Go 1.19, 1.23 and 1.27
# (GOTOP_GO_VERSIONS), plain, PIE and stripped; the variables found from the code are
# compared with .symtab on the unstripped binary. A program without runtime/pprof gives
# the one-line message and exit status 6, and with --enable-memprofile its allocations
# made after that appear.

. "$(dirname "$0")/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/pprofsums.sh"

need_pprof
VARIANTS="plain pie stripped"
# record --heap samples cpu-clock too
perf_ok=1
"$GOTOP_PERF" list 2>/dev/null | grep -q '^cpu-clock .* yes ' || perf_ok=0
# per release: 1 symtab check, 8 per variant (and record --heap on the plain build), 3 for
# the program without runtime/pprof
plan_per_version $((1 + 8 * 3 + 1 + 3))

run_variant() { # VERSION VARIANT
	v=$1 var=$2 bin=$T/memprof-$1-$2 d=$T/out-$1-$2
	nchecks=8
	[ "$var" = plain ] && nchecks=9
	go_build_or_skip $nchecks "$v" "$var" "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin" || return
	mkdir -p "$d"
	"$bin" "$d" -d 100s >"$d/stdout" 2>"$d/stderr" &
	pid=$!
	track $pid
	if ! wait_line "$d/stdout" '^ready' 60; then
		skip_n $nchecks "go$v $var: the workload did not get ready: $(head -1 "$d/stderr")"
		kill $pid 2>/dev/null
		return
	fi
	for p in heap allocs block mutex goroutine; do
		"$GOTOP_PERF" pprof $p -p $pid -o "$d/ours.$p.pb.gz" -v 2>"$d/ours.$p.err"
		echo $? >"$d/ours.$p.rc"
	done
	for p in heap block goroutine; do
		"$GOTOP_PERF" pprof $p -p $pid --debug 1 >"$d/ours.$p.1.txt" 2>&1
	done
	"$GOTOP_PERF" pprof goroutine -p $pid --debug 2 >"$d/ours.goroutine.txt" 2>&1
	if [ "$var" = plain ] && [ $perf_ok = 1 ]; then
		"$GOTOP_PERF" record --heap -p $pid -d 0.5 -o "$d/rec.pb.gz" 2>"$d/rec.err"
		echo $? >"$d/rec.rc"
	fi
	kill -USR1 $pid
	wait_line "$d/stdout" '^again' 30 || diag "go$v $var: no second set of Go's profiles"
	for p in heap allocs block mutex; do
		cols=4
		case $p in block | mutex) cols=2 ;; esac
		after=
		case $p in block | mutex) after=$d/$p.after.pprof ;; esac
		if [ "$(cat "$d/ours.$p.rc")" != 0 ]; then
			not_ok "go$v $var: pprof $p failed: $(head -1 "$d/ours.$p.err")"
		elif compare "go$v $var $p" $cols "$d/ours.$p.pb.gz" "$d/$p.pprof" $after; then
			ok "go$v $var: $p equals Go's own ($(head -1 "$d/ours.$p.err" | sed 's/gotop-perf: //'))"
		else
			not_ok "go$v $var: $p differs from Go's own"
		fi
	done
	# Goroutines: Go's file has its main goroutine writing it; both have the ten parked.
	sums "$d/ours.goroutine.pb.gz" 1 >"$T/o.sums"
	sums "$d/goroutine.pprof" 1 >"$T/g1.sums"
	op=$(awk '$1 == "C" && $2 == "main.park" { print $3 }' "$T/o.sums")
	gp=$(awk '$1 == "C" && $2 == "main.park" { print $3 }' "$T/g1.sums")
	ot=$(awk '$1 == "T" { print $3 }' "$T/o.sums")
	gt=$(awk '$1 == "T" { print $3 }' "$T/g1.sums")
	if [ "$(cat "$d/ours.goroutine.rc")" = 0 ] && [ "${op:-x}" = 10 ] && [ "$gp" = 10 ] &&
		[ "$ot" = "$gt" ]; then
		ok "go$v $var: goroutine profile: $ot goroutines, 10 in main.park, as Go's"
	else
		not_ok "go$v $var: goroutine profile: gotop-perf $ot goroutines ($op in main.park), Go $gt ($gp)"
	fi
	# record --heap: the idle heap at the start and at the end, both Go's.
	if [ "$var" = plain ] && [ $perf_ok = 0 ]; then
		skip "go$v plain: record --heap: cpu-clock cannot be sampled here"
	elif [ "$var" = plain ]; then
		if [ "$(cat "$d/rec.rc")" = 0 ] && [ -s "$d/rec.pb.gz" ] &&
			compare "go$v record heap0" 4 "$d/rec.heap0.pb.gz" "$d/heap.pprof" >"$d/rec.cmp" &&
			compare "go$v record heap" 4 "$d/rec.heap.pb.gz" "$d/heap.pprof" >>"$d/rec.cmp"; then
			ok "go$v plain: record --heap: FILE.heap0.pb.gz and FILE.heap.pb.gz equal Go's heap"
		else
			diag_file "$d/rec.err"
			diag_file "$d/rec.cmp"
			not_ok "go$v plain: record --heap (exit $(cat "$d/rec.rc"))"
		fi
	fi
	# The text forms: the heap's header and every record that is not zero (Go sorts
	# records of equal in-use bytes in no set order; the runtime.MemStats section is the
	# process's own), the block profile whole, and the parked goroutines' group (debug=1)
	# and dumps (debug=2, arguments aside) as Go's.
	if [ "$(sed -n 1p "$d/ours.heap.1.txt")" = "$(sed -n 1p "$d/heap.1.txt")" ] &&
		[ "$(text_records "$d/ours.heap.1.txt")" = "$(text_records "$d/heap.1.txt")" ] &&
		[ -n "$(text_records "$d/heap.1.txt")" ]; then
		ok "go$v $var: heap --debug 1 as Go's ($(text_records "$d/heap.1.txt" | wc -l) records)"
	else
		diff "$d/ours.heap.1.txt" "$d/heap.1.txt" | sed -n '1,20s/^/# /p'
		not_ok "go$v $var: heap --debug 1 differs from Go's"
	fi
	if cmp -s "$d/ours.block.1.txt" "$d/block.1.txt"; then
		ok "go$v $var: block --debug 1 is Go's, byte for byte"
	else
		diff "$d/ours.block.1.txt" "$d/block.1.txt" | sed -n '1,20s/^/# /p'
		not_ok "go$v $var: block --debug 1 differs from Go's"
	fi
	g1o=$(text_records "$d/ours.goroutine.1.txt" | grep 'main\.park')
	g1g=$(text_records "$d/goroutine.1.txt" | grep 'main\.park')
	g2o=$(dump_park "$d/ours.goroutine.txt")
	g2g=$(dump_park "$d/goroutine.txt")
	if [ -n "$g1o" ] && [ "$g1o" = "$g1g" ] && [ -n "$g2o" ] && [ "$g2o" = "$g2g" ]; then
		ok "go$v $var: goroutine --debug 1 and 2: the parked goroutines as Go's"
	else
		diag "debug=1: $g1o | Go: $g1g"
		diag "debug=2: $(echo "$g2o" | head -3) | Go: $(echo "$g2g" | head -3)"
		not_ok "go$v $var: goroutine --debug 1 or 2 differs from Go's"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

# text_records FILE: the records of a debug=1 text, one line each (blank-line separated
# blocks, joined with |), the header, zero heap records and runtime.MemStats left out, sorted.
text_records() {
	awk 'BEGIN { RS = "" } { sub(/^[^\n]*profile: [^\n]*\n/, "") }
		!/^0: 0 \[0: 0\]/ && !/MemStats/ { gsub(/\n/, "|"); print }' "$1" | sort
}

# dump_park FILE: the debug=2 blocks of goroutines in main.park, the goroutine ids and
# argument values taken out (gotop-perf shows no arguments), sorted and counted.
dump_park() {
	awk 'BEGIN { RS = "" } /main\.park/ { gsub(/\n/, "|"); print }' "$1" |
		sed 's/^goroutine [0-9]* /goroutine N /; s/(\([^|]*\))|/()|/g' | sort | uniq -c
}

# The variables found from the code against .symtab (the unstripped build).
check_vars() { # VERSION
	bin=$T/memprof-$1-plain
	if ! [ -x "$bin" ]; then
		skip "go$1: no plain build to compare with .symtab"
		return
	fi
	"$TOP_BUILDDIR/tests/gomem-live" "$bin" >"$T/vars.$1" 2>&1
	bad=$(awk '$1 ~ /^runtime\./ && ($2 != $3 || $2 == "0") { print $1 }' "$T/vars.$1" | tr '\n' ' ')
	if [ -z "$bad" ] && grep -q '^runtime.mbuckets ' "$T/vars.$1"; then
		ok "go$1: the 9 runtime variables found from the code equal .symtab's"
	else
		diag_file "$T/vars.$1"
		not_ok "go$1: variables found from the code differ from .symtab: $bad"
	fi
}

# A program that does not link runtime/pprof: no heap profile, until asked.
check_off() { # VERSION
	v=$1 bin=$T/nomemprof-$1
	go_build_or_skip 3 "$v" plain "$TOP_SRCDIR/tests/workloads/go/nomemprof.go" "$bin" || return
	"$bin" -d 60s >"$T/nmp.out" 2>&1 &
	pid=$!
	track $pid
	if ! wait_line "$T/nmp.out" '^ready' 30; then
		skip_n 3 "go$v: nomemprof did not start"
		return
	fi
	"$GOTOP_PERF" pprof heap -p $pid -o "$T/nmp.pb.gz" >"$T/nmp.stdout" 2>"$T/nmp.err"
	rc=$?
	lines=$(wc -l <"$T/nmp.err")
	if [ $rc -eq 6 ] && [ "$lines" -eq 1 ] && grep -q 'keeps no heap profile' "$T/nmp.err" &&
		! [ -e "$T/nmp.pb.gz" ]; then
		ok "go$v: without runtime/pprof: exit 6, one line: $(cat "$T/nmp.err")"
	else
		diag_file "$T/nmp.err"
		not_ok "go$v: without runtime/pprof: exit $rc, $lines lines"
	fi
	"$GOTOP_PERF" pprof allocs -p $pid --enable-memprofile --seconds 2 -o "$T/nmp-on.pb.gz" \
		2>"$T/nmp-on.err"
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'wrote runtime.MemProfileRate = 524288' "$T/nmp-on.err"; then
		ok "go$v: --enable-memprofile wrote the rate and says so"
	else
		diag_file "$T/nmp-on.err"
		not_ok "go$v: --enable-memprofile: exit $rc"
	fi
	# 2 s of 64 KiB every 2 ms: about 60 MiB allocated in main.allocLoop, sampled at 512 KiB.
	al=$(sums "$T/nmp-on.pb.gz" 2 | awk '$1 == "C" && $2 == "main.allocLoop" { print $3 }')
	if [ "${al:-0}" -gt $((8 << 20)) ]; then
		ok "go$v: after --enable-memprofile, main.allocLoop allocated $al bytes in 2 s"
	else
		diag_file "$T/nmp-on.err"
		not_ok "go$v: after --enable-memprofile, main.allocLoop shows ${al:-nothing}"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

for v in $GO_VERSIONS; do
	for var in $VARIANTS; do
		run_variant "$v" "$var"
	done
	check_vars "$v"
	check_off "$v"
done
finish
