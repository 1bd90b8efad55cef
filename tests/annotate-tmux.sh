#!/bin/sh
# annotate-tmux.sh: the Annotate view in the live UI inside tmux (as tests/ui-tmux.sh): a on
# the hot function opens its source with the hot line marked and the samples still coming,
# Tab and A switch to assembly and back, Enter hides inlined code, q goes back to Top, and
# the terminal is restored when gotop-perf quits.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
need_perf
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] ||
	skip_all "no terminfo entry for TERM=screen"
plan 11

W=$TOP_BUILDDIR/tests/workloads/hotloop
SRC=$TOP_SRCDIR/tests/workloads/hotloop.c
SOCK=gotop-ann-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"

tm new-session -d -s ui -x 160 -y 40 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' sh" ||
	skip_all "cannot start a tmux session"
wait_for 'ui-test\$' >/dev/null || skip_all "no shell prompt in tmux"
run "stty -g >'$T/stty.before'; echo before-marker"
wait_for '^before-marker' >/dev/null

site=$(grep -n -F '/* INLINE SITE */' "$SRC" | cut -d: -f1)
run "'$GOTOP_PERF' -- '$W' 300"
# The hot function: Top's first row, which is selected.
check "Top shows the workload" wait_for '^ +[0-9.]+% +[0-9.]+% +[0-9]+ (hl_loop|hl_mix|main) '
# The hot loop's function, found by a search (a opens a search hit): Top's first row
# depends on where this machine's timer puts the samples, and may be a function that is
# only inlined (shown "in" the function that inlines it).
hotfn=hl_loop
keys /
tm send-keys -t ui -l "$hotfn"
keys Enter
wait_for "search: $hotfn" >/dev/null
keys a
check "a opens the hot function ($hotfn) annotated, a hot line marked" \
	wait_for "^> +[0-9.]+% +[0-9.]+% +[0-9]+ +[-+]? *[0-9]+ "
check "... titled with the function and the mode" wait_for "LINE  SOURCE +$hotfn +self .*\\[source\\]"
# sum: the samples the view is made of (its info line); they grow while it is open. Not the
# function's own rows: on this VM's timer a function's samples can stop coming (they land
# in its caller), while the view still refreshes.
sum() { pane | awk '$1 == "cumulative" && $3 == "samples" { print $2 + 0; exit }'; }
n1=$(sum)
grows() {
	i=0
	while [ $i -lt 150 ]; do
		[ "$(sum)" -gt "$n1" ] && return 0
		sleep 0.2
		i=$((i + 1))
	done
	return 1
}
check "... and the samples keep coming (more than $n1)" grows
keys Tab
if wait_for '\[assembly\]' >/dev/null && wait_for '^ +hotloop\.c:[0-9]+ ' >/dev/null; then
	ok "Tab shows the instructions, with their source line between groups"
else
	not_ok "Tab shows the instructions, with their source line between groups"
fi
check "... and a jump with its target's direction and offset" \
	wait_for ' j[a-z]+ 0x[0-9a-f]+ (↑|↓) \+0x[0-9a-f]+'
keys A
check "A goes back to the source" wait_for '\[source\]'
keys q
check "q goes back to Top" wait_for 'SELF% +TOTAL% +SAMPLES FUNCTION'
# Inlined code: hl_inline's line that calls hl_mix, and Enter hides what it inlined.
keys /
tm send-keys -t ui -l hl_inline
keys Enter a
check "hl_inline shows hl_mix under line $site" wait_for "^ +[0-9.]+% +[0-9.]+% +[0-9]+ - +$site .*INLINE SITE"
# Enter on the line hides the code inlined at it: Down to its row (rows start at the
# function's first line), then Enter.
first=$(awk '/LINE  SOURCE/ { getline; sub(/^>/, " "); print $4; exit }' "$T/pane.txt")
keys g
i=$first
while [ "$i" -lt "$site" ]; do
	keys Down
	i=$((i + 1))
done
keys Enter
if wait_for "^ +[0-9.]+% +[0-9.]+% +[0-9]+ \+ +$site .*INLINE SITE" >/dev/null && ! grep -q 'hl_mix hotloop' "$T/pane.txt"; then
	ok "Enter hides the inlined code (+ on the line)"
else
	not_ok "Enter hides the inlined code (+ on the line)"
	diag_file "$T/pane.txt"
fi
keys q
wait_for 'SELF% +TOTAL% +SAMPLES FUNCTION' >/dev/null
keys q
wait_for 'ui-test\$ *$' >/dev/null
run "stty -g >'$T/stty.after'; echo after-marker"
wait_for '^after-marker' >/dev/null
check "q quits with the terminal restored" cmp -s "$T/stty.before" "$T/stty.after"
finish
