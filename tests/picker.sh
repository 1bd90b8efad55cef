#!/bin/sh
# picker.sh: gotop-perf without arguments. In a terminal (tmux, 80x24) it lists the running
# processes to profile: two Go workloads (tests/workloads/go/goroutines.go under two names)
# with their Go version (as `go version` reads it from the binary) and goroutines (between
# the count of their own goroutine dump, which leaves out the runtime's own, and that plus
# the runtime's few), above a C workload (cchains) whose name holds an escape sequence,
# shown escaped; / filters; Enter attaches the live UI to the process
# chosen (its header names its PID). Without a terminal: the usage and exit status 2.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan 10
W=$TOP_BUILDDIR/tests/workloads/cchains

# --- no terminal: the usage, as before ---
"$GOTOP_PERF" </dev/null >"$T/out" 2>"$T/err"
rc=$?
check "no arguments, no terminal: exit 2 and the usage on stderr" \
	sh -c "[ $rc -eq 2 ] && grep -q '^Usage: gotop-perf' '$T/err' && [ ! -s '$T/out' ]"

command -v tmux >/dev/null 2>&1 || { skip_n 9 "tmux is not installed"; finish; }
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] ||
	{ skip_n 9 "no terminfo entry for TERM=screen"; finish; }
GOW=$T/go
mkdir -p "$GOW" "$T/a" "$T/b"
if ! go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/goroutines.go" "$GOW/gpick-a" \
	>"$T/gob.err" 2>&1; then
	skip_n 9 "Go $GO_VERSION toolchain unavailable"
	finish
fi
cp "$GOW/gpick-a" "$GOW/gpick-b"
"$GOW/gpick-a" "$T/a" >/dev/null 2>&1 &
ga=$!
track $ga
"$GOW/gpick-b" "$T/b" >/dev/null 2>&1 &
gb=$!
track $gb
# A C program whose name (comm) holds an escape sequence.
evil=$(printf '\033[31mevil')
cp "$W" "$T/$evil"
"$T/$evil" 300 >/dev/null 2>&1 &
ev=$!
track $ev
wait_line "$T/a/dump1" goroutine 30 >/dev/null
wait_line "$T/b/dump1" goroutine 30 >/dev/null
own=$(grep -c '^goroutine [0-9]* \[' "$T/a/dump1")
# The oracle of the version: go version reads the binary's build info too.
ver=$(GOTOOLCHAIN=local GOCACHE="$T/gocache" HOME="$T" "$(go_root "$GO_VERSION")/bin/go" version \
	"$GOW/gpick-a" 2>/dev/null | awk '{ print $2 }')

SOCK=gotop-pick-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"
tm new-session -d -s ui -x 80 -y 24 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' TSAN_OPTIONS='${TSAN_OPTIONS:-}' sh" ||
	{ skip_n 9 "cannot start a tmux session"; finish; }
wait_for 'ui-test\$' >/dev/null
run "'$GOTOP_PERF'"
check "in a terminal: the picker, its columns" \
	wait_for '^ *PID  NAME +GO +CPU%  GOROUTINES  THREADS  COMMAND'
# order: this test's processes (all named under $T) and the line of the other programs, in
# the screen's order.
order() {
	awk -v a=$ga -v b=$gb -v e=$ev '$1 == a { print "go" } $1 == b { print "go" }
		$1 == e { print "c" } /other programs:/ { print "line" }' "$T/pane.txt" | tr '\n' ' '
}
listed() { [ "$(order)" = "go go line c " ]; }
go_version() {
	[ -n "$ver" ] && awk -v p=$ga -v v="$ver" '$1 == p && $2 == "gpick-a" && $3 == v { f = 1 }
		END { exit !f }' "$T/pane.txt"
}
# The goroutines column (5th field) of gpick-a: its reader is made at its second scan.
count_ok() {
	n=$(awk -v p=$ga '$1 == p { print $5 }' "$T/pane.txt")
	[ -n "$n" ] && [ "$n" -ge "$own" ] && [ "$n" -le $((own + 12)) ]
}
escaped() {
	awk -v p=$ev '$1 == p' "$T/pane.txt" | grep -qF '\e[31mevil' &&
		! pane_e | grep -qF "$evil"
}
unfiltered() { grep -q 'Go programs by CPU, then the others' "$T/pane.txt" && ! grep -q 'filter:' "$T/pane.txt"; }
only_b() {
	awk -v p=$gb '$1 == p' "$T/pane.txt" | grep -q . && ! awk -v p=$ga '$1 == p' "$T/pane.txt" | grep -q . &&
		grep -q '1 Go, 0 other' "$T/pane.txt"
}
keys /
tm send-keys -t ui -l "$(basename "$T")"
keys Enter
check "/ (this test's directory): both Go workloads above the line of the other programs, the C one below" \
	wait_cmd listed
check "... each Go one with its Go version, as go version reads it ($ver)" wait_cmd go_version
check "... gpick-a's goroutines: its own dump's $own, plus at most the runtime's own" wait_cmd count_ok
check "... the name with an escape sequence shown escaped, its sequence not obeyed" wait_cmd escaped
keys Escape
check "Esc clears the filter: the other processes are back" wait_cmd unfiltered
keys /
tm send-keys -t ui -l gpick-b
keys Enter
check "/ gpick-b: only it" wait_cmd only_b
keys Enter
check "Enter attaches the live UI to it" wait_for "^gotop-perf PID $gb /.*/gpick"
check "... Go aware (its Go version in the header)" wait_for "^gotop-perf PID $gb .* go1\\."
keys q
wait_for 'ui-test\$ *$' >/dev/null
finish
