#!/bin/sh
# ui-service.sh: the Goroutines view at 80x24 on a real service: Prometheus as Debian
# packages it (a stripped Go binary), under a steady query load, in tmux.
#  - its three modes (on-CPU shares, all goroutines now, wall time): every column starts
#    where its name does, a space before it (tests/helpers/columns.awk), and no function
#    name holds a package path or is cut inside one (names as Prometheus's own goroutine
#    dump spells them, /debug/pprof/goroutine?debug=1, are the list of names);
#  - WHERE of the all-goroutines mode is never a runtime or internal/poll frame when the
#    goroutine's stack has a frame of the program: Enter opens each such row, whose stack
#    has none; and most WHEREs are the first program frame of a stack of Prometheus's own
#    dump (which hides the runtime's frames: runtime/pprof printStackRecord);
#  - the Wall mode hides the goroutines parked all along and says how many; a shows them
#    (more rows), b groups by start function.
# SKIP when Prometheus cannot be fetched from Debian.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
command -v curl >/dev/null 2>&1 || skip_all "curl not found (setup.sh installs it)"
need_perf
[ -n "${GOTOP_WRAP:-}" ] && skip_all "under valgrind, symbolizing a 100 MB binary takes minutes"
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] ||
	skip_all "no terminfo entry for TERM=screen"
bin=$("$TOP_SRCDIR/tests/helpers/debian-service.sh" prometheus 2>"$T/fetch.err") ||
	skip_all "no Prometheus from Debian: $(head -1 "$T/fetch.err")"
plan 11
COLS=$TOP_SRCDIR/tests/helpers/columns.awk

# Prometheus on a port of its own choosing, scraping nothing: the load is ours.
if ! prometheus_start "$bin"; then
	skip_n 11 "Prometheus did not start"
	finish
fi
URL=http://127.0.0.1:$port
load() {
	end=$(($(date +%s) + $1))
	while [ "$(date +%s)" -lt "$end" ] && kill -0 $prom 2>/dev/null; do
		curl -s -o /dev/null "$URL/metrics"
		curl -s -o /dev/null "$URL/api/v1/query" \
			--data-urlencode 'query=sum by (__name__)({__name__=~"prometheus_.+"})'
		curl -s -o /dev/null "$URL/api/v1/label/__name__/values"
	done
}
load 300 &
track $!

SOCK=gotop-svc-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"
tm new-session -d -s ui -x 80 -y 24 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' TSAN_OPTIONS='${TSAN_OPTIONS:-}' sh" ||
	{ skip_n 11 "cannot start a tmux session"; finish; }
wait_for 'ui-test\$' >/dev/null
run "'$GOTOP_PERF' -p $prom"
wait_for '^gotop-perf PID' >/dev/null
# one_line: the screen with the ellipsis as one byte (awk counts bytes).
one_line() { sed 's/\xe2\x80\xa6/~/g' "$T/pane.txt"; }
# dump: Prometheus's goroutines as Go prints them (the functions of every stack).
dump() {
	curl -s "$URL/debug/pprof/goroutine?debug=1" >>"$T/dump.txt"
	awk '$1 == "#" { f = $3; sub(/\+0x[0-9a-f]+$/, "", f); print f }' "$T/dump.txt" | sort -u >"$T/names.txt"
}
: >"$T/dump.txt"
dump
# columns TITLE RIGHT NAMES: the columns of the screen's table (columns.awk).
columns() {
	one_line >"$T/screen.txt"
	awk -v title="$1" -v right="$2" -v names="$3" -v known="$T/names.txt" -f "$COLS" \
		"$T/screen.txt" >"$T/cols.out" 2>&1 && return 0
	cat "$T/cols.out" >&2
	return 1
}

# --- on-CPU shares ---
keys 5
wait_for '^ SHARE% +SAMPLES +GOROUTINES +START FUNCTION' >/dev/null
sleep 3
check "on-CPU shares at 80x24: columns apart and at their names, no package path in a name" \
	wait_cmd columns '^ SHARE% +SAMPLES' 'SHARE%|SAMPLES' 'START FUNCTION|HOT FUNCTION'
pane >"$T/before-x.txt"
check "... net/http's connections as Top names them: http.(*conn).serve" \
	grep -q ' http\.(\*conn)\.serve ' "$T/pane.txt"

# --- all goroutines now ---
keys m
wait_for '^  COUNT  STATE +LONGEST  WHERE' >/dev/null
sleep 2
dump
pane >"$T/all.txt"
dump
check "all goroutines now at 80x24: columns apart and at their names, no package path in a name" \
	wait_cmd columns '^  COUNT  STATE' 'COUNT|LONGEST' 'WHERE'
# The WHEREs shown, and what Go's dump says of their stacks.
sed 's/\xe2\x80\xa6/~/g' "$T/all.txt" | awk '/^  COUNT  STATE/ { s = 1; w = index($0, "WHERE"); next }
	s && /^ *$/ { exit }
	s { c = substr($0, w); sub(/^[+-] /, "", c); sub(/  .*/, "", c); print c }' >"$T/where.txt"
# For each stack of the dump: its first frame of the program (main, or a path whose first
# element has a dot), or, with none, every frame (runtime ones may be WHERE then).
awk 'function short(n, q, r, pre, i, last) {
		gsub(/\/v[0-9]+\./, ".", n); gsub(/\/v[0-9]+\//, "/", n)
		q = index(n, "("); r = index(n, "["); if (r && (!q || r < q)) q = r
		pre = q ? substr(n, 1, q - 1) : n; last = 0
		for (i = 1; i <= length(pre); i++) if (substr(pre, i, 1) == "/") last = i
		return substr(n, last + 1) }
	function prog(n, first) {
		first = n; sub(/[\/.].*/, "", first)
		return n ~ /^main\./ || (index(n, first ".") == 1 && index(n, "/") > 0)
	}
	function flush(i) {
		if (!nf) return
		if (pf) print "P " pf
		else for (i = 1; i <= nf; i++) print "R " fr[i]
		nf = 0; pf = ""
	}
	/^[0-9]+ @ / { flush(); next }
	$1 == "#" { f = $3; sub(/\+0x[0-9a-f]+$/, "", f); fr[++nf] = short(f)
		if (!pf && prog(f)) pf = short(f); next }
	END { flush() }' "$T/dump.txt" | sort -u >"$T/stacks.txt"
# A runtime or internal/poll WHERE: its stack, Enter opens it (full names, x), has no frame
# of the program (main, or a path whose first element has a dot). Go's dump leaves such
# goroutines out (the runtime's own: runtime/pprof's goroutine profile hides them).
keys x
wait_for 'full function names' >/dev/null
# (row, down: wait_for and wait_cmd count with i)
checked=0
bad=
row=1
while [ $row -le 16 ]; do
	pane >"$T/p.txt"
	w=$(awk -v i=$row '/^  COUNT  STATE/ { s = NR; c = index($0, "WHERE"); next }
		s && NR == s + i { print substr($0, c) }' "$T/p.txt")
	case $w in
	"+ runtime."* | "+ internal/poll."*)
		keys Home
		down=1
		while [ $down -lt $row ]; do keys j; down=$((down + 1)); done
		keys Enter
		wait_for 'ids: [0-9]' >/dev/null
		pane >"$T/open.txt"
		# the open group's WHERE, then its frames up to its ids
		verdict=$(awk '/^  COUNT  STATE/ { s = 1; c = index($0, "WHERE"); next }
			s && substr($0, c, 2) == "- " { w = substr($0, c + 2); sub(/  .*/, "", w); o = 1; next }
			o && /ids:/ { exit }
			o { f = $1; first = f; sub(/[\/.].*/, "", first)
				if (f ~ /^main\./ || (index(f, first ".") == 1 && index(f, "/") > 0)) p = p " " f }
			END { print (w ~ /^(runtime|internal\/poll)\./ ? (p == "" ? "ok" : "bad " w ":" p) : "other") }' "$T/open.txt")
		case $verdict in
		ok) checked=$((checked + 1)) ;;
		bad*) bad="$bad ${verdict#bad }" ;;
		esac
		keys Enter
		;;
	esac
	row=$((row + 1))
done
check "a runtime or internal/poll WHERE only for a stack with no program frame ($checked such stacks opened${bad:+; not:$bad})" \
	sh -c "[ $checked -ge 1 ] && [ -z '$bad' ]"
keys x
prog_n=$(awk 'NR == FNR { if ($1 == "P") p[$2] = 1; next } p[$0] { n++ } END { print n + 0 }' \
	"$T/stacks.txt" "$T/where.txt")
all_n=$(wc -l <"$T/where.txt")
check "... and WHERE is the first program frame of a stack of the dump on most rows ($prog_n of $all_n)" \
	test "$prog_n" -ge 8
keys Home Enter
check "... Enter shows the whole stack, runtime frames too" wait_for '^ +runtime\.gopark  proc\.go:[0-9]+'
keys Enter

# --- wall time ---
keys m
wait_for '^WALL s +SHARE%' >/dev/null
sleep 4
check "Wall mode at 80x24: columns apart and at their names, no package path in a name" \
	wait_cmd columns '^WALL s  SHARE%' 'WALL s|SHARE%' 'WHERE'
hidden() { sed -n 's/.*  \([0-9][0-9]*\) idle all along hidden (a: all).*/\1/p' "$T/pane.txt"; }
check "... the goroutines parked all along are hidden, and the info line says how many" \
	wait_cmd sh -c "sed -n 4p '$T/pane.txt' | grep -Eq '  [1-9][0-9]* idle all along hidden \\(a: all\\)'"
h=$(hidden)
pane >"$T/wall-hidden.txt"
# rows_of FILE: the rows of the table, from the status line's "SELECTED/ROWS" (the screen
# may be full either way).
rows_of() { sed -n 's|.* [0-9][0-9]*/\([0-9][0-9]*\)$|\1|p' "$1" | tail -1 | grep . || echo 0; }
keys a
shown_all() {
	sed -n 4p "$T/pane.txt" | grep -q 'all goroutines (a: hide the idle)' &&
		[ "$(rows_of "$T/pane.txt")" -gt "$(rows_of "$T/wall-hidden.txt")" ]
}
check "... a shows them too: more rows (${h:-?} were hidden)" wait_cmd shown_all
keys a b
by_start() {
	grep -q 'START FUNCTION / WHERE' "$T/pane.txt" &&
		columns '^WALL s  SHARE%' 'WALL s|SHARE%' 'START FUNCTION / WHERE'
}
check "... b groups by start function, the rows laid out as before" wait_cmd by_start
keys x
full_names() {
	grep -q 'full function names' "$T/pane.txt" || return 1
	one_line >"$T/screen.txt"
	awk -v title='^WALL s  SHARE%' -v right='WALL s|SHARE%' -v names='START FUNCTION / WHERE' \
		-v known="$T/names.txt" -v full=1 -f "$COLS" "$T/screen.txt" >&2
}
check "x: full names, cut only where a path element or a part starts" wait_cmd full_names
keys q
wait_for 'ui-test\$ *$' >/dev/null
diag "on-CPU shares before x (80x24):"
diag_file "$T/before-x.txt"
finish
