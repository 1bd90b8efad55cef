#!/bin/sh
# ui-wall.sh: the live UI's wall time of every goroutine on a handler that computes about 20%
# and sleeps about 80% of its time (tests/workloads/go/wall.go, which writes its own split to
# a file). The UI starts the workload, so both cover its whole life; the last --batch update
# (the target has exited) is compared with the workload's own figure:
#  - the Goroutines view's Wall mode, focused on handler=checkout (--tag), has its sleeping
#    stack in state sleep (WHERE the handler's own frame, not time.Sleep) and its computing
#    time as running or runnable, and their shares of the handler's wall time are within 10
#    points of its own split;
#  - the Labels view keeps SHARE% and SAMPLES and gives checkout RUN% + RUNQ% within 10
#    points of its own busy share, its top wait sleep.
# 50 Hz for 10 s: about 500 snapshots, so 10 points is 5 standard deviations of the
# sampling. --no-wall: no wall columns, and the Wall mode says why. 20,000 goroutines without
# --wall-hz: a lower rate, the same wall seconds (--wall-idle); without --wall-idle all
# 20,000, parked at every snapshot, are hidden and counted. Then in tmux at 80x24
# (the newest release only): 5 and m m reach the Wall mode, Enter expands the sleeping stack
# to the handler's own function and line, z zeroes the counts, m goes back to the on-CPU shares, q restores the
# terminal (canonical mode and echo on again).
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan_per_version 5 9
SRC=$TOP_SRCDIR/tests/workloads/go/wall.go

# section FILE ITERATION VIEW: the rows of one view of one iteration (after its title line).
section() {
	awk -v it="=== iteration $2 ===" -v v="$3" '
		$0 == it { i = 1; next }
		/^=== iteration / { i = 0 }
		i && $0 == v { s = 1; getline; next }
		i && s && (/^== / || /^$/) { s = 0 }
		i && s { print }' "$1"
}
within() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b > 5 && d <= t) }'; }

last=
for v in $GO_VERSIONS; do
	bin=$T/wall-$v
	go_build_or_skip 5 "$v" plain "$SRC" "$bin" || continue
	last=$v
	"$GOTOP_PERF" --batch --rows 0 -d 1 --wall-hz 50 --view goroutines-wall,labels \
		--tag handler=checkout -- "$bin" 10 "$T/own-$v" >"$T/out-$v" 2>"$T/err-$v"
	rc=$?
	it=$(grep -c '^=== iteration' "$T/out-$v")
	section "$T/out-$v" "$it" "== Goroutines ==" >"$T/wall-$v.txt"
	section "$T/out-$v" "$it" "== Labels: handler ==" >"$T/labels-$v.txt"
	own=$(awk '/^busy/ { printf "%.1f", 100 * $2 / ($2 + $4) }' "$T/own-$v")
	check "go$v: --batch --view goroutines-wall,labels exits 0, the workload wrote its split (exit $rc, busy $own%)" \
		test $rc = 0 -a -n "$own" -a -s "$T/wall-$v.txt"
	# Rows: WALL s, SHARE%, STATE, + WHERE, LABELS. WHERE is the program's frame that
	# waits: the handler's closure, not time.Sleep (the runtime's, for Go).
	check "go$v: Wall mode: checkout's handler in state sleep, WHERE its own frame; its computing running" \
		sh -c "grep -Eq '^ +[0-9.]+ +[0-9.]+% +sleep +\\+ main\\.main\\.func1 +handler=checkout\$' '$T/wall-$v.txt' &&
			grep -Eq '^ +[0-9.]+ +[0-9.]+% +running +\\+ .* handler=checkout\$' '$T/wall-$v.txt'"
	ours=$(awk '/ handler=checkout$/ { all += $1; if ($3 == "running" || $3 == "runnable") on += $1 }
		END { if (all) printf "%.1f", 100 * on / all }' "$T/wall-$v.txt")
	check "go$v: ... running + runnable ${ours}% of checkout's wall time, its own figure ${own}% (10 points)" \
		within "$ours" "$own" 10
	[ -n "$ours" ] || diag_file "$T/out-$v"
	check "go$v: Labels keeps SHARE%, SAMPLES and the value first, then RUN% RUNQ% WAIT% TOP WAITS" \
		grep -Eq '^ SHARE% +SAMPLES  handler +RUN% +RUNQ% +WAIT% +TOP WAITS +HOT FUNCTION' "$T/out-$v"
	lab=$(awk '$NF == "main.compute" && $3 ~ /^\*?checkout$/ && $7 == "sleep" {
		r = $4; q = $5; sub("%", "", r); sub("%", "", q); printf "%.1f", r + q }' "$T/labels-$v.txt")
	check "go$v: Labels: checkout RUN% + RUNQ% ${lab}%, top wait sleep, its own figure ${own}% (10 points)" \
		within "$lab" "$own" 10
	[ -n "$lab" ] || diag_file "$T/labels-$v.txt"
done

# --no-wall: the views say so and the Labels columns are the on-CPU ones only.
if [ -n "$last" ]; then
	"$GOTOP_PERF" --batch --no-wall -n 2 -d 0.5 --view goroutines-wall,labels \
		-- "$T/wall-$last" 3 >"$T/nowall" 2>&1
	check "--no-wall: the Wall mode says the snapshots are off, Labels has no RUN% column" \
		sh -c "grep -q 'wall-clock snapshots off (--no-wall)' '$T/nowall' &&
			grep -q '^ SHARE% *SAMPLES' '$T/nowall' && ! grep -q 'RUN%' '$T/nowall'"
	check "--wall-hz 0 is refused with one line" \
		sh -c "! '$GOTOP_PERF' --batch --wall-hz 0 -- true >/dev/null 2>'$T/hz.err' &&
			test \$(wc -l <'$T/hz.err') = 1 && grep -q 'invalid --wall-hz' '$T/hz.err'"
	# 20,000 parked goroutines: without --wall-hz the sampler keeps its snapshots under 5% of
	# a core, at most 10 Hz, and each snapshot counts the interval since the one before:
	# the wall seconds add up to the goroutines times the span whatever the rate (a busy
	# machine lowers it; goroutines that did not run since the last snapshot are not read
	# again, so an idle one may keep 10 Hz). Only the first snapshot and the span's edges
	# are off; a fixed period of 1/10 s at a lowered rate would count a fifth or less.
	if [ -n "${GOTOP_WRAP:-}" ]; then
		# Under valgrind one snapshot of 20,000 takes seconds: the rate falls to a
		# snapshot or two in the run, too few to add up the time.
		skip_n 2 "20,000 goroutines: measured without valgrind (GOTOP_WRAP), where a snapshot takes seconds"
	elif go_build "$last" plain "$TOP_SRCDIR/bench/gomany.go" "$T/gomany" >"$T/gomany.err" 2>&1; then
		"$T/gomany" 20000 >"$T/gomany.out" 2>&1 &
		gm=$!
		track $gm
		wait_line "$T/gomany.out" ready 30
		"$GOTOP_PERF" -p $gm --batch --rows 0 -d 1 -n $((12 * gp_slow)) --view goroutines-wall \
			--wall-idle >"$T/many" 2>&1
		# Without --wall-idle: the 20,000 parked at every snapshot are left out and
		# counted (their wall time a whole multiple of the snapshots' span).
		"$GOTOP_PERF" -p $gm --batch --rows 0 -d 1 -n $((3 * gp_slow)) --view goroutines-wall \
			>"$T/many-idle" 2>&1
		kill $gm 2>/dev/null
		hid=$(sed -n 's/.*  \([0-9][0-9]*\) idle all along hidden (a: all).*/\1/p' "$T/many-idle" | tail -1)
		check "... without --wall-idle the goroutines parked all along are hidden and counted (${hid:-none} of 20,000)" \
			awk -v h="${hid:-0}" 'BEGIN { exit !(h >= 20000 && h <= 20050) }'
		[ -n "$hid" ] || diag_file "$T/many-idle"
		set -- $(awk '/^=== iteration /{ s = 0; r = ""; sp = "" }
			/snapshots at/ { match($0, /at [0-9.]+ Hz/); r = substr($0, RSTART + 3, RLENGTH - 6)
				match($0, /over [0-9.]+ s/); sp = substr($0, RSTART + 5, RLENGTH - 7) }
			/^ *[0-9.]+ +[0-9.]+% / { s += $1 }
			END { if (sp > 0) printf "%s %.0f\n", r, s / sp }' "$T/many")
		check "20,000 goroutines, no --wall-hz: at most 10 snapshots a second (${1:-none} Hz), wall time $2 goroutines x span (20,000 +- 20%)" \
			awk -v r="${1:-11}" -v g="${2:-0}" 'BEGIN { exit !(r <= 10 && g >= 16000 && g <= 24000) }'
		[ -n "${2:-}" ] || diag_file "$T/many"
	else
		skip_n 2 "cannot build bench/gomany.go: $(head -1 "$T/gomany.err")"
	fi
else
	skip_n 4 "no Go toolchain"
fi

# --- tmux: 80x24 ---
if [ -z "$last" ]; then
	skip_n 5 "no Go toolchain"
	finish
fi
if ! command -v tmux >/dev/null 2>&1 ||
	! { [ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ]; }; then
	skip_n 5 "tmux or TERM=screen's terminfo is not installed"
	finish
fi
SOCK=gotop-wall-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"
tm new-session -d -s ui -x 80 -y 24 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' sh" ||
	{ skip_n 5 "cannot start a tmux session"; finish; }
wait_for 'ui-test\$' >/dev/null
tm send-keys -t ui -l "'$GOTOP_PERF' --tag handler=checkout -- '$T/wall-$last' 300"
keys Enter
wait_for '^gotop-perf PID' >/dev/null
keys 5 m m
# Under the focus the sleeping stack is the biggest row, selected first (once the first
# snapshots are past, where the running row may lead).
sleep_first() {
	awk '/WALL s +SHARE%/ { getline; f = $0 ~ /^ +[0-9.]+ +[0-9.]+% +sleep +\+ main\.main\.func1 / }
		END { exit !f }' "$T/pane.txt"
}
check "5 m m: the Wall mode, checkout's sleeping handler first" wait_cmd sleep_first
keys Enter
check "... Enter expands it: the handler's closure main.main.func1 at its line of wall.go" \
	wait_for 'main\.main\.func1 +wall\.go:[0-9]+'
# z zeroes: the handler sleeps 80% of the time, so its sleep row holds about 0.8 s a second.
# Once past 3 s, z counts it again from the zero: the first figure below the one before
# holds no more than the seconds since the key (one goroutine, counted from the zero on,
# not from the snapshot before it), whenever the UI gets to show it.
sleep_row() { awk '$3 == "sleep" && $4 == "-" { s = $1 + 0 } END { print s + 0 }' "$T/pane.txt"; }
sleep_ge() { awk -v s="$(sleep_row)" -v x="$1" 'BEGIN { exit !(s >= x) }'; }
zeroed() {
	zs=$(sleep_row) zd=$(awk -v t0="$2" -v t="$(date +%s.%N)" 'BEGIN { printf "%.2f", t - t0 }')
	awk -v s="$zs" -v b="$1" -v d="$zd" 'BEGIN { exit !(s > 0 && s < b && s <= d + 0.1) }'
}
wait_cmd sleep_ge 3 >/dev/null || diag "the expanded sleep row never showed 3 s (it shows $(sleep_row) s)"
zb=$(sleep_row) zt=$(date +%s.%N)
keys z
wait_cmd zeroed "$zb" "$zt"
zok=$?
check "... z zeroes its wall time: the sleep row back from $zb s to at most the time since ($zs s at $zd s)" \
	[ $zok -eq 0 ]
keys m
check "... m again: back to the on-CPU shares (GOROUTINES column)" wait_for 'GOROUTINES +START FUNCTION'
keys q
restored() {
	wait_for 'ui-test\$ *$' >/dev/null && run "stty -a | tr ' ' '\n' | grep -Ex -- '-?(icanon|echo)' | tr '\n' ' '; echo" &&
		wait_for '^icanon echo *$'
}
check "q quits to the shell, the terminal in canonical mode with echo" restored
finish
