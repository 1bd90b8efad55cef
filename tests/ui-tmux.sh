#!/bin/sh
# ui-tmux.sh: the live UI end to end inside tmux (new-session -x 120 -y 40, send-keys,
# capture-pane): hot function, call tree, search, callers, event switching (software works,
# hardware says why not), snapshot read back by go tool pprof, resize, labels focus, colours,
# target exit, and the terminal restored on q and on SIGTERM.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
need_perf
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] ||
	skip_all "no terminfo entry for TERM=screen"
plan 53

W=$TOP_BUILDDIR/tests/workloads/cchains
SOCK=gotop-ui-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"

# A plain shell in a 120x40 pane, UTF-8, colours allowed. Sanitizer settings pass through:
# their reports must go to the files tests/sanitize.sh counts, not onto the screen.
tm new-session -d -s ui -x 120 -y 40 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' TSAN_OPTIONS='${TSAN_OPTIONS:-}' sh" ||
	skip_all "cannot start a tmux session"
wait_for 'ui-test\$' >/dev/null || skip_all "no shell prompt in tmux"
run "stty -g >'$T/stty.before'; echo before-marker"
wait_for '^before-marker' >/dev/null

# --- the hot function appears ---
run "'$GOTOP_PERF' -- '$W' 300"
check "the header appears (target, event, state)" wait_for '^gotop-perf PID [0-9]+ .*cchains 300 +running'
check "the hot function appears in Top" wait_for '^ +[0-9.]+% +[0-9.]+% +[0-9]+ hot_ab +cchains\.c:[0-9]+'
check "the key bar is there" wait_for '^q Quit h Help Tab View'
pane_e >"$T/color.txt"
check "colours by default" grep -q "$(printf '\033')\[3[0-7]m" "$T/color.txt"

# --- the call tree expands ---
# E follows the heaviest child: wait until hot_ab (2/3 of the work) leads Top.
leads() {
	awk '/SELF% +TOTAL%/ { getline; exit !($4 == "hot_ab") }' "$T/pane.txt" &&
		grep -Eq '^cumulative +[0-9]{3,} samples' "$T/pane.txt"
}
wait_cmd leads >/dev/null
keys 2
check "2 opens the call tree" wait_for 'CALL TREE \(top-down\)'
keys E
nested() {
	awk '{ n = $0; sub(/^ +[0-9.]+% +[0-9.]*%? +[0-9]+ /, "", n); match(n, /[^ ]/); d = RSTART; name = $NF }
		name == "chain_a" && !a { a = d }
		name == "chain_b" && a && d > a && !b { b = d }
		name == "hot_ab" && b && d > b { ok = 1 }
		END { exit !ok }' "$T/pane.txt"
}
check "E expands the hottest path down to hot_ab (chain_a > chain_b > hot_ab)" wait_cmd nested
keys C
check "C collapses it again" wait_cmd sh -c "! grep -q ' chain_b\$' '$T/pane.txt' && grep -q '__libc_start_call_main\|main' '$T/pane.txt'"

# --- search and callers ---
keys /
check "/ asks for a function" wait_for '^Search functions:'
tm send-keys -t ui -l hot_c
keys Enter
check "... the tree opens to the match" wait_for '^ +[0-9.]+% +[0-9.]+% +[0-9]+ +.* hot_c$'
check "... the info line shows the search" wait_for 'search: hot_c'
keys c
check "c shows the callers of the selected function" wait_for 'CALLERS OF hot_c \(bottom-up\)'
check "... chain_c calls it" wait_for ' chain_c$'
keys 1

# --- events: a software event switches, a hardware one says why not ---
row_of() { grep -n "^$1 " "$T/list.txt" | cut -d: -f1; }
# pick EVENT: in the open picker, moves to EVENT's row (as in gotop-perf list) and chooses it.
pick() {
	keys Home
	i=2
	while [ $i -lt "$(row_of "$1")" ]; do keys Down; i=$((i + 1)); done
	keys Enter
}
keys e
check "e opens the event picker" wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION'
pick task-clock
check "choosing task-clock switches sampling live" wait_for 'now sampling task-clock'
check "... the header shows the event" wait_for '^task-clock 1000 Hz'
check "... and its data arrives" wait_for '^ +[0-9.]+% +[0-9.]+% +[0-9]+ hot_(ab|c) '
keys e
check "the picker keeps cpu-clock's samples" wait_for '^ +cpu-clock +software +yes +[0-9]+ '
pick cycles
if grep -q '^cycles .* no ' "$T/list.txt"; then
	check "choosing cycles (no PMU here) says why and keeps task-clock" \
		wait_for 'cannot sample cycles \(still sampling task-clock\): not supported'
	check "... still sampling task-clock" wait_for '^task-clock 1000 Hz'
else
	check "choosing cycles switches (this machine counts it)" wait_for 'now sampling cycles'
	skip "cycles can be counted here: no failure to show"
fi

# --- snapshot ---
keys S
check "S asks where to save, with a default name" wait_for '^Save snapshot \(name\.folded: folded stacks\) to: cchains-(task-clock|cycles)-[0-9]{8}-[0-9]{6}\.pb\.gz'
keys C-u
tm send-keys -t ui -l "$T/snap.pb.gz"
keys Enter
check "... the status line shows the path" wait_for "saved [0-9]+ samples of [a-z-]+ to $T/snap.pb.gz"
if pprof_setup; then
	pprof -top "$T/snap.pb.gz" >"$T/snap.txt" 2>&1
	check "... and go tool pprof reads it (hot_ab in -top)" grep -q ' hot_ab$' "$T/snap.txt"
else
	skip "no Go toolchain for go tool pprof"
fi

# --- pause, zero, frequency, window ---
keys p
check "p pauses sampling (the header says so)" wait_for '^gotop-perf PID .* paused [0-9]+:'
keys p
check "... p again resumes" wait_for '^gotop-perf PID .* running [0-9]+:'
keys z
check "z zeroes the counts" wait_for 'counts zeroed'
keys F
check "F asks for a frequency" wait_for '^Samples per second per thread \(Hz\):'
tm send-keys -t ui -l 250
keys Enter
check "... and the header shows the new rate" wait_for '^task-clock 250 Hz'
keys w
check "w switches to a decaying window" wait_for '^last 10s +[0-9]+ samples \([0-9]+ since start\)'
keys w
check "... w again back to cumulative" wait_for '^cumulative +[0-9]+ samples'

# --- the Verifier view (V) ---
keys V
check "V opens the Verifier and starts it" wait_for '[0-9]+ comparisons: FP stacks wrong [0-9.]+% raw, [0-9.]+% after repair'
check "... with the threads' stop times" wait_for 'thread stops [0-9]+: p50 [0-9]+ us, p99 [0-9]+ us'
check "... and a row per leaf function (hot_ab)" wait_for '^hot_ab +[0-9]+ +[0-9.]+% +[0-9.]+%'
keys V
check "V in the view switches it off and keeps the counts" wait_for '^\(off\) [0-9]+ comparisons'
keys Escape
wait_for '^q Quit h Help' >/dev/null

# --- a screen drawn by its changes is the screen drawn whole ---
# Paused, the rows stop changing; a resize then draws every row anew (ui/tui.c draws only
# the characters that changed otherwise). Lines 1 and 2 (clock, rate) keep moving.
keys p
wait_for '^gotop-perf PID .* paused [0-9]+:' >/dev/null
settled() {
	sed 1,2d "$T/pane.txt" >"$T/now.txt"
	cmp -s "$T/now.txt" "$T/prev.txt" && return 0
	cp "$T/now.txt" "$T/prev.txt"
	sleep 1.2
	return 1
}
: >"$T/prev.txt"
wait_cmd settled >/dev/null
cp "$T/now.txt" "$T/rows.txt"
tm resize-window -t ui -x 119 -y 40
wait_for '^q Quit h Help' >/dev/null
tm resize-window -t ui -x 120 -y 40
check "a screen drawn by its changes is the one drawn whole after a resize" \
	wait_cmd sh -c "sed 1,2d '$T/pane.txt' | cmp -s - '$T/rows.txt'"
keys p
wait_for '^gotop-perf PID .* running [0-9]+:' >/dev/null

# --- resize ---
tm resize-window -t ui -x 80 -y 24
check "at 80x24 the header still fits on its line" wait_for '^gotop-perf PID .* running [0-9]+:[0-9]{2}:[0-9]{2} *$'
check "... with rows and the key bar" wait_cmd sh -c "grep -q ' hot_ab ' '$T/pane.txt' && grep -q '^q Quit' '$T/pane.txt'"
tm resize-window -t ui -x 60 -y 20
check "below 80x24 it says what it needs" wait_for 'needs at least 80x24 \(this is 60x20\)'
tm resize-window -t ui -x 120 -y 40
check "back at 120x40 everything is drawn again" wait_for '^q Quit h Help'

# --- q leaves the terminal as it was ---
keys q
check "q quits back to the shell" wait_for '^before-marker'
run "stty -g >'$T/stty.after'; echo after-marker"
wait_for '^after-marker' >/dev/null
check "... with the terminal modes restored (stty -g)" cmp -s "$T/stty.before" "$T/stty.after"
check "... and the shell's screen back (the UI was on the alternate screen)" \
	sh -c "! grep -q 'gotop-perf PID' '$T/pane.txt'"

# --- SIGTERM restores the terminal too; the target's exit is shown ---
run "clear; '$GOTOP_PERF' -- '$W' 2"
wait_for ' hot_ab ' >/dev/null
check "the target's exit is shown and the data stays" wait_for 'target exited \(status 0\)'
shell=$(tm list-panes -t ui -F '#{pane_pid}')
gp=$(pgrep -P "$shell" | head -1)
if [ -n "$gp" ]; then
	kill -TERM "$gp"
	check "SIGTERM quits" wait_for 'ui-test\$ *$'
	run "stty -g >'$T/stty.after2'; echo after2-marker"
	wait_for '^after2-marker' >/dev/null
	check "... with the terminal restored" cmp -s "$T/stty.before" "$T/stty.after2"
else
	skip "cannot find gotop-perf's pid"
	skip "cannot find gotop-perf's pid"
fi

# --- colours, and NO_COLOR ---
run "clear; NO_COLOR=1 '$GOTOP_PERF' -- '$W' 300"
wait_for ' hot_ab ' >/dev/null
pane_e >"$T/nocolor.txt"
keys q
wait_for 'ui-test\$ *$' >/dev/null
check "NO_COLOR: attributes only, no colour" sh -c "! grep -q \"\$(printf '\\033')\\[[34][0-7]m\" '$T/nocolor.txt' && grep -q \"\$(printf '\\033')\\[7m\" '$T/nocolor.txt'"

# --- labels on the Go demo: Enter focuses Top on a value ---
GOW=$T/go
mkdir -p "$GOW"
if go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/demo.go" "$GOW/demo" >"$T/gob.err" 2>&1; then
	run "clear; '$GOTOP_PERF' -- '$GOW/demo'"
	wait_for ' go1\.23' >/dev/null
	keys 4
	check "Labels lists the demo's handler values" wait_for '^ +[0-9.]+% +[0-9]+  (search|checkout|login|inventory) '
	# Select the row of "search" and focus on it. The rows are sorted by share and may
	# reorder, and a slow build (TSan) may lag behind the keys: the cursor's "ROW/ROWS"
	# line and the row's name are read again before Enter, and the keys sent again (up to
	# 5 times) when the cursor is not on search. Under TSan the memory limit sheds most
	# entries all the time, and the cursor was seen to leave search between the last look
	# and Enter (Enter then acts on the row it is on): placed and Enter again, up to 3
	# times, each time said.
	wait_for '^ +[0-9.]+% +[0-9]+  search ' >/dev/null
	# search_row: the screen row of "search" under the column titles.
	search_row() { awk '/SHARE% +SAMPLES/ { s = NR; next } s && $3 == "search" { print NR - s; exit }' "$T/pane.txt"; }
	focused() { grep -Eq 'focus: handler=search \([0-9.]+% of [0-9]+\)' "$T/pane.txt"; }
	attempt=0
	while [ $attempt -lt 3 ]; do
		attempt=$((attempt + 1))
		try=0
		placed=
		while [ $try -lt 5 ]; do
			pane >"$T/pane.txt" 2>/dev/null
			n=$(search_row)
			keys g
			i=1
			while [ $i -lt "${n:-1}" ]; do keys j; i=$((i + 1)); done
			k=0
			while [ $k -lt 25 ]; do
				sleep 0.2
				pane >"$T/pane.txt" 2>/dev/null
				grep -Eq "^ *${n:-1}/[0-9]+ *\$" "$T/pane.txt" &&
					[ "$(search_row)" = "${n:-1}" ] &&
					placed=1 && break 2
				k=$((k + 1))
			done
			try=$((try + 1))
		done
		keys Enter
		[ -n "$placed" ] || diag "the Labels cursor did not reach search in 5 tries"
		wait_cmd focused && break
		diag "attempt $attempt: Enter did not focus on search (the screen above)"
		grep -Eq 'SHARE% +SAMPLES' "$T/pane.txt" || break
	done
	check "Enter focuses Top on handler=search" wait_cmd focused
	check "... Top under the focus: main.handleSearch holds most of it" wait_cmd awk '
		$4 == "main.handleSearch" { t = $2; sub("%", "", t); if (t + 0 > 40) ok = 1 } END { exit !ok }' "$T/pane.txt"
	keys q
	wait_for 'ui-test\$ *$' >/dev/null
else
	skip_n 4 "Go $GO_VERSION toolchain unavailable"
fi

# --- the Goroutines view's modes: m shows every goroutine now; Enter opens a group ---
if go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/goroutines.go" "$GOW/goroutines" \
	>"$T/gob.err" 2>&1; then
	mkdir -p "$T/gr"
	run "clear; '$GOTOP_PERF' -- '$GOW/goroutines' '$T/gr'"
	wait_for ' go1\.' >/dev/null
	keys 5
	keys m
	check "5, m: every goroutine now, the 3 receivers as one group" \
		wait_for '^ +3  chan receive .* main\.recvForever'
	keys Home
	keys Enter
	# (as Go shows it, in the screen's short names: down to pprof.Do, without park's go
	# statement wrapper (main.park.gowrap1 from go1.22; main.park.func1 is the closure
	# pprof.Do runs, which Go shows) and runtime.goexit)
	check "... Enter opens the group: its stack as Go shows it and its 3 ids" wait_cmd sh -c \
		"grep -q ' main.recvForever  goroutines.go:[0-9]' '$T/pane.txt' &&
		 grep -Eq ' (runtime/)?pprof\.Do  ' '$T/pane.txt' &&
		 ! grep -Eq 'runtime\.goexit|main\.park\.gowrap[0-9]' '$T/pane.txt' &&
		 grep -Eq 'ids: [0-9]+ [0-9]+ [0-9]+\$' '$T/pane.txt'"
	# f: the focus on the row's labels (the receivers' kind=chanrecv), as Enter in Labels.
	keys f
	check "... f focuses on the group's labels: kind=chanrecv, and only its goroutines stay" wait_cmd sh -c \
		"grep -q 'focus: kind=chanrecv' '$T/pane.txt' && grep -q ' main.recvForever ' '$T/pane.txt' &&
		 ! grep -q ' main.sendForever ' '$T/pane.txt'"
	keys u
	keys m
	wait_for 'WALL s +SHARE%' >/dev/null # the Wall mode (tests/ui-wall.sh), then back
	keys m
	check "... m twice more (Wall, then on-CPU): on-CPU shares by start function" wait_for 'GOROUTINES +START FUNCTION +LABELS +HOT FUNCTION'
	keys Home
	keys Enter
	check "... Enter on a start function's row lists its goroutine ids under it" wait_cmd sh -c \
		"grep -Eq '^ +[0-9.]+% +[0-9]+ +-[0-9]+ +[a-z]' '$T/pane.txt' &&
		 grep -Eq '^ +[0-9.]+% +[0-9]+ +[0-9]+ ' '$T/pane.txt'"
	keys q
	wait_for 'ui-test\$ *$' >/dev/null
else
	skip_n 5 "Go $GO_VERSION toolchain unavailable"
fi
finish
