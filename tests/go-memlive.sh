#!/bin/sh
# go-memlive.sh: the live memory views (the session's heap profile source) on real Go
# processes, for Go 1.19, 1.23 and 1.27 (GOTOP_GO_VERSIONS):
# - tests/workloads/go/memprof.go writes its own heap profile and idles: --batch Top on
#   each of inuse_space, inuse_objects, alloc_space and alloc_objects equals Go's file
#   (every function's self value and the total within 0.5%, go tool pprof -raw decoding);
# - [ and ] switch the sample types in the terminal UI (tmux);
# - tests/workloads/go/memleak.go leaks at a rate it prints: against a heap profile taken
#   first (--base), main.leak's DELTA rises and never falls, and its alloc_rate column is
#   within 15% of the rate the program counts over the same span;
# - record --heap-every 1 writes FILE.heap1, heap2, ... beside heap0 and heap, which go tool
#   pprof reads, and -base heap0 shows main.leak grown;
# - a program without runtime/pprof: one line in the header says so, the CPU views show
#   its samples.

. "$(dirname "$0")/helpers/lib.sh"

need_perf
need_pprof
. "$TOP_SRCDIR/tests/helpers/pprofsums.sh"
tmux_ok=1
command -v tmux >/dev/null 2>&1 || tmux_ok=0
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] || tmux_ok=0
plan_per_version 9

# top_rows FILE: the last Top section of a --batch output as "FUNCTION VALUE RATE" lines
# (VALUE the shown sample type's self value, RATE the alloc_rate column); with a
# baseline, "FUNCTION VALUE RATE THEN DELTA".
top_rows() {
	awk '/^== Top ==/ { n = 0; delete r; top = 1; head = 1; next }
		/^(== |=== )/ { top = 0; next }
		top && head { base = ($0 ~ /THEN/); head = 0; next }
		top && NF >= 5 {
			if (base) r[++n] = $7 " " $5 " " $6 " " $3 " " $4
			else r[++n] = $5 " " $3 " " $4
		}
		END { for (i = 1; i <= n; i++) print r[i] }' "$1"
}

# same_as_go OURS GO: OURS ("FUNCTION VALUE ...") against GO (sums' "F func v" and "T total
# v"): every function within 0.5%, none missing on either side, and the totals.
same_as_go() {
	awk -v tol=0.005 '
		FILENAME == ARGV[1] { o[$1] = $2; ot += $2; next }
		$1 == "T" { gt = $3; next }
		$1 == "F" { g[$2] = $3 }
		function far(a, b) { return (a > b ? a - b : b - a) > tol * (b < 0 ? -b : b) }
		END {
			for (f in g) if (far(o[f] + 0, g[f])) { printf "# %s: ours %s, Go %s\n", f, o[f] + 0, g[f]; bad++ }
			for (f in o) if (o[f] != 0 && !(f in g)) { printf "# %s: ours %s, not in Go\n", f, o[f]; bad++ }
			if (far(ot, gt)) { printf "# total: ours %s, Go %s\n", ot, gt; bad++ }
			printf "# %d functions, total %s\n", length(g), gt
			exit bad > 0
		}' "$1" "$2"
}

oracle() { # VERSION
	v=$1 bin=$T/memprof-$1 d=$T/mp-$1
	go_build_or_skip 4 "$v" plain "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin" || return
	mkdir -p "$d"
	"$bin" "$d" -d 100s >"$d/stdout" 2>"$d/stderr" &
	pid=$!
	track $pid
	if ! wait_line "$d/stdout" '^ready' 60; then
		skip_n 4 "go$v: memprof did not get ready: $(head -1 "$d/stderr")"
		return
	fi
	col=1
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		"$GOTOP_PERF" -p $pid --batch --sample-index $t --view top --rows 0 -n 2 \
			>"$d/$t.txt" 2>"$d/$t.err"
		top_rows "$d/$t.txt" >"$d/$t.rows"
		sums "$d/heap.pprof" $col >"$d/$t.go"
		if [ -s "$d/$t.rows" ] && same_as_go "$d/$t.rows" "$d/$t.go" >"$d/$t.cmp"; then
			ok "go$v: live Top on $t equals Go's heap profile ($(tail -1 "$d/$t.cmp" | sed 's/^# //'))"
		else
			diag_file "$d/$t.cmp"
			diag_file "$d/$t.txt"
			not_ok "go$v: live Top on $t differs from Go's heap profile"
		fi
		col=$((col + 1))
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

keys_test() { # VERSION BIN PID
	if [ $tmux_ok = 0 ]; then
		skip "go$1: [ and ]: no tmux or no terminfo for screen"
		return
	fi
	SOCK=gotop-memlive-$$-$1
	. "$TOP_SRCDIR/tests/helpers/tmux.sh"
	tm new-session -d -s ui -x 160 -y 40 \
		"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' sh" || {
		skip "go$1: [ and ]: cannot start a tmux session"
		return
	}
	wait_for 'ui-test\$' >/dev/null
	run "'$GOTOP_PERF' -p $3 --sample-index inuse_space"
	if wait_for '^inuse_space +heap in use' >/dev/null && wait_for ' BYTES +alloc_rate' >/dev/null &&
		keys '[' && wait_for '^inuse_objects +heap in use' >/dev/null &&
		wait_for ' OBJECTS +alloc_rate' >/dev/null &&
		keys ']' && keys ']' && wait_for '^cpu-clock .*samples/s' >/dev/null &&
		keys ']' && wait_for '^alloc_objects +heap in use' >/dev/null; then
		ok "go$1: [ and ] switch inuse_space, inuse_objects, cpu-clock, alloc_objects"
	else
		not_ok "go$1: [ and ] do not switch the sample types"
	fi
	keys q
	tm kill-server 2>/dev/null
}

leak() { # VERSION
	v=$1 bin=$T/memleak-$1 d=$T/leak-$1
	go_build_or_skip 4 "$v" plain "$TOP_SRCDIR/tests/workloads/go/memleak.go" "$bin" || return
	mkdir -p "$d"
	"$bin" -d 60s >"$d/stdout" 2>"$d/stderr" &
	pid=$!
	track $pid
	if ! wait_line "$d/stdout" '^ready' 60; then
		skip_n 4 "go$v: memleak did not get ready: $(head -1 "$d/stderr")"
		return
	fi
	"$GOTOP_PERF" pprof heap -p $pid -o "$d/base.pb.gz" 2>"$d/base.err"
	sleep 2
	"$GOTOP_PERF" -p $pid --batch --sample-index inuse_space --base "$d/base.pb.gz" \
		--view top --rows 5 -n 5 >"$d/live.txt" 2>"$d/live.err"
	end_ns=$(date +%s%N)
	# main.leak's DELTA at each update: it never falls, and it rises (an update may show the
	# same GC cycle as the one before when reads are paced to a share of a core).
	awk '/^== Top ==/ { top = 1; next } /^(== |=== )/ { top = 0 }
		top && $7 == "main.leak" { print $4 + 0 }' "$d/live.txt" >"$d/deltas"
	if [ "$(wc -l <"$d/deltas")" -ge 4 ] &&
		awk 'NR == 1 { f = $1 } NR > 1 && $1 < p { bad = 1 } $1 != p { n++ } { p = $1 }
			END { exit bad || p <= f || n < 3 }' "$d/deltas"; then
		ok "go$v: against the heap taken first, main.leak's DELTA rises: $(tr '\n' ' ' <"$d/deltas")"
	else
		diag_file "$d/live.txt"
		not_ok "go$v: main.leak's DELTA does not rise: $(tr '\n' ' ' <"$d/deltas")"
	fi
	# Its alloc_rate against the bytes it counted over the same span: the last update's
	# "alloc_rate over Ss", ending when its data was published ("data As old") before the
	# run ended. A leak's pace drifts (its GC cycles grow, a busy machine takes turns), so
	# the windows must match; they do within a second, hence the 15%.
	rate=$(top_rows "$d/live.txt" | awk '$1 == "main.leak" { print $3 }')
	span=$(awk '/alloc_rate over/ { s = $0; sub(/.*alloc_rate over /, "", s); sub(/s.*/, "", s) }
		END { print s + 0 }' "$d/live.txt")
	age=$(awk '/ data [0-9]+s old/ { a = $0; sub(/.* data /, "", a); sub(/s old.*/, "", a) }
		END { print a + 0 }' "$d/live.txt")
	want=$(awk -v end="$end_ns" -v span="$span" -v age="$age" '
		$1 == "leaked" { b[++n] = $2; t[n] = $3 }
		END {
			t1 = end - age * 1e9; t0 = t1 - span * 1e9
			for (i = 1; i <= n; i++) { if (!f && t[i] >= t0) f = i; if (t[i] <= t1) l = i }
			if (f && l > f) printf "%.0f", (b[l] - b[f]) / ((t[l] - t[f]) / 1e9)
		}' "$d/stdout")
	if [ -n "$rate" ] && [ -n "$want" ] &&
		awk -v a="$rate" -v b="$want" 'BEGIN { d = (a - b) / b; exit !(d < 0.15 && d > -0.15) }'; then
		ok "go$v: main.leak's alloc_rate $rate bytes/s over ${span}s, the program counts $want"
	else
		diag_file "$d/live.txt"
		not_ok "go$v: main.leak's alloc_rate ${rate:-none} over ${span}s, the program counts ${want:-?}"
	fi
	# record --heap-every 1 for 3.5 s: heap0, heap1..heap3, heap, each read by go tool pprof.
	# main.leak's growth from heap0 to heap against what the program counted between its
	# first and last count inside the recording (1.5 s or more of the 3.5): a busy machine
	# slows its millisecond sleeps, and so its leak, several times.
	t_s=$(date +%s%N)
	"$GOTOP_PERF" record -p $pid -d 3.5 --heap-every 1 -o "$d/rec.pb.gz" 2>"$d/rec.err"
	rc=$?
	t_e=$(date +%s%N)
	counted=$(awk -v t0="$t_s" -v t1="$t_e" '$1 == "leaked" && $3 >= t0 && $3 <= t1 {
		if (!f) { f = 1; b0 = $2 } b1 = $2 } END { printf "%.0f\n", b1 - b0 }' "$d/stdout")
	nread=0
	for h in heap0 heap1 heap2 heap3 heap; do
		pprof -raw "$d/rec.$h.pb.gz" >/dev/null 2>&1 && nread=$((nread + 1))
	done
	grew=$(pprof -top -sample_index=inuse_space -unit=B -base "$d/rec.heap0.pb.gz" \
		"$d/rec.heap.pb.gz" 2>/dev/null | awk '$NF == "main.leak" { sub(/B$/, "", $1); print $1 + 0 }')
	if [ $rc -eq 0 ] && [ $nread -eq 5 ] && ! [ -e "$d/rec.heap4.pb.gz" ] &&
		[ "${counted:-0}" -gt 0 ] && [ "${grew:-0}" -ge $((counted / 2)) ]; then
		ok "go$v: record --heap-every 1 -d 3.5: 5 heap profiles go tool pprof reads; main.leak grew $grew B (the program counted $counted B in 1.5 s or more of it)"
	else
		diag_file "$d/rec.err"
		not_ok "go$v: record --heap-every: exit $rc, $nread of 5 read, main.leak grew ${grew:-?} B (the program counted ${counted:-?} B)"
	fi
	keys_test "$v" "$bin" $pid
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

# A program without runtime/pprof: one line says so; the CPU views are as ever.
off() { # VERSION
	v=$1 bin=$T/nomemprof-$1
	go_build_or_skip 1 "$v" plain "$TOP_SRCDIR/tests/workloads/go/nomemprof.go" "$bin" || return
	"$bin" -d 60s >"$T/nmp.out" 2>&1 &
	pid=$!
	track $pid
	if ! wait_line "$T/nmp.out" '^ready' 30; then
		skip "go$v: nomemprof did not start"
		return
	fi
	"$GOTOP_PERF" -p $pid --batch --view top -n 3 >"$T/nmp.txt" 2>"$T/nmp.err"
	said=$(grep -c 'memory: the program keeps no heap profile' "$T/nmp.txt")
	rows=$(awk '/^== Top ==/ { n = 0; top = 1; next } /^(== |=== )/ { top = 0 }
		top && $1 ~ /%$/ && $3 ~ /^[0-9]+$/ { n++ } END { print n + 0 }' "$T/nmp.txt")
	if [ "$said" -ge 1 ] && [ "$(grep -c 'keeps no heap profile' "$T/nmp.txt")" = "$said" ] &&
		grep -q '^cpu-clock ' "$T/nmp.txt" && grep -q ' SAMPLES ' "$T/nmp.txt" &&
		[ "$rows" -ge 1 ] && ! [ -s "$T/nmp.err" ]; then
		ok "go$v: without runtime/pprof: one header line says so, Top has $rows CPU rows"
	else
		diag_file "$T/nmp.txt"
		diag_file "$T/nmp.err"
		not_ok "go$v: without runtime/pprof: said $said times, $rows CPU rows"
	fi
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
}

for v in $GO_VERSIONS; do
	oracle "$v"
	leak "$v"
	off "$v"
done
finish
