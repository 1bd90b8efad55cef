#!/bin/sh
# ui-flame.sh: the Flame view (an icicle graph) on the C chains workload, whose tree is known
# (main -> chain_a -> chain_b -> hot_ab twice the work of main -> chain_c -> hot_c): in
# --batch, every frame's box is as wide as its total share in the Tree view of the same
# update; in tmux at 80x24, the 7 key, moving between frames, zoom in and out, a resize; in
# `view`, a resize that leaves the selected frame too narrow for a column.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan 16
W=$TOP_BUILDDIR/tests/workloads/cchains

# section FILE ITERATION VIEW: the rows of one view of one iteration (after its title line).
section() {
	awk -v it="=== iteration $2 ===" -v v="== $3 ==" '
		$0 == it { i = 1; next }
		/^=== iteration / { i = 0 }
		i && $0 == v { s = 1; getline; next }
		i && s && (/^== / || /^$/) { s = 0 }
		i && s { print }' "$1"
}

# --- batch: widths against the Tree's shares (200 columns) ---
"$GOTOP_PERF" --batch -n 4 --ascii --rows 0 --min-pct 0 --view flame,tree -- "$W" 20 \
	>"$T/out" 2>"$T/err"
rc=$?
check "batch --view flame,tree exits 0" [ $rc -eq 0 ]
# The names with brackets of their own ("[unknown] 0x...": the launcher's frames in the
# samples of the exec itself, and any frame without a module) lose them, so that a box's
# brackets are the only ones on a flame row.
unbracket() { sed 's/\[\(unknown\|vdso\|kernel\.kallsyms\)\]/(\1)/g'; }
section "$T/out" 4 Flame | unbracket >"$T/flame.txt"
section "$T/out" 4 Tree | unbracket >"$T/tree.txt"
check "the first row is one box 'all' 200 columns wide" \
	awk 'NR == 1 { exit !(length($0) == 200 && $0 ~ /^\[all +\]$/) }' "$T/flame.txt"
# Every box of the flame graph: "PATH<tab>WIDTH" (path of names from the root, without "all").
# A box whose name or an ancestor's is cut ("~", or no room for it) has no known path: left
# out (a busy machine's kernel frames, narrow boxes under "[asm~]").
tab=$(printf '\t')
awk '{
	d = NR - 1; n = length($0)
	for (i = 1; i <= n; i++) {
		c = substr($0, i, 1)
		if (c == "|") { x0 = i - 1; x1 = i; nm = "" }
		else if (c == "[") { j = index(substr($0, i), "]"); x0 = i - 1; x1 = i + j - 1
			nm = substr($0, i + 1, j - 2); sub(/ +$/, "", nm); i += j - 1 }
		else continue
		nb[d]++; X0[d, nb[d]] = x0; X1[d, nb[d]] = x1; P[d, nb[d]] = nm
		cut = nm == "" || nm ~ /~$/
		if (d > 0) for (k = 1; k <= nb[d - 1]; k++)
			if (X0[d - 1, k] <= x0 && x0 < X1[d - 1, k]) {
				P[d, nb[d]] = (d > 1 ? P[d - 1, k] ";" : "") nm
				cut = cut || C[d - 1, k]
			}
		C[d, nb[d]] = cut
		if (d > 0 && !cut) print P[d, nb[d]] "\t" x1 - x0
	}
}' "$T/flame.txt" | sort -t "$tab" -k1,1 >"$T/boxes"
# Every node of the tree: "PATH<tab>TOTAL%". --ascii's lines: the columns, 2 spaces per
# depth, "- " before a node with children and "  " before a leaf, the name.
awk '{ r = substr($0, 26); m = match(r, /[^ ]/)
	if (substr(r, m, 2) == "- ") { d = (m - 1) / 2; nm = substr(r, m + 2) } else { d = (m - 3) / 2; nm = substr(r, m) }
	p[d] = nm; s = p[0]; for (k = 1; k <= d; k++) s = s ";" p[k]
	t = $1; sub("%", "", t); print s "\t" t }' "$T/tree.txt" | sort -t "$tab" -k1,1 >"$T/nodes"
r=$(join -t "$tab" "$T/boxes" "$T/nodes" | awk -F '\t' '{ n++; d = $2 - $3 * 2; if (d < 0) d = -d; if (d > m) m = d }
	END { printf "%.2f %d\n", m + 0, n }')
nb=$(wc -l <"$T/boxes")
check "every named box is as wide as its frame's total share, to a column (worst $r of $nb boxes)" \
	awk -v w="${r% *}" -v n="${r#* }" -v b="$nb" 'BEGIN { exit !(w <= 1.2 && n >= 5 && n == b) }'
# The workload's 2:1 split, with room for a busy machine's noise (2.5 to 2.9 seen at load 20).
# Taken from the fourth update, so that a busy machine still gives it hundreds of samples;
# the boxes and the tree are shown when it fails.
two_to_one() {
	awk -F "$tab" '$1 ~ /;chain_a;chain_b;hot_ab$/ { a = $2 } $1 ~ /;chain_c;hot_c$/ { c = $2 }
		END { r = c ? a / c : 0; exit !(r > 1.3 && r < 4) }' "$T/boxes" && return 0
	diag_file "$T/boxes"
	diag_file "$T/tree.txt"
	return 1
}
check "... hot_ab's box under chain_b is the wider, about twice hot_c's" two_to_one
[ -s "$T/boxes" ] || diag_file "$T/flame.txt"

# --- tmux: 80x24 ---
if ! command -v tmux >/dev/null 2>&1 ||
	! { [ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ]; }; then
	skip_n 12 "tmux or TERM=screen's terminfo is not installed"
	finish
fi
SOCK=gotop-flame-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"
tm new-session -d -s ui -x 80 -y 24 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' sh" ||
	{ skip_n 12 "cannot start a tmux session"; finish; }
wait_for 'ui-test\$' >/dev/null
tm send-keys -t ui -l "'$GOTOP_PERF' -- '$W' 300"
keys Enter
wait_for '^gotop-perf PID' >/dev/null
keys 7
check "7 shows the Flame view at 80x24, its first row one box 'all' 80 columns wide" \
	wait_for '^\[all +\]$'
check "... the tabs name it" grep -q ' 7 Flame' "$T/pane.txt"
# Down twice from the root: __libc_start_call_main, then main (the widest callees), once
# the samples show the whole tree (hot_ab's box) and the start-up's are a sliver: in the first
# refreshes of a busy machine the exec's own frames can be the widest callee of the root.
wait_for '^\[hot_ab' >/dev/null
wait_for '^\[__libc_start_call_main {40,}\]' >/dev/null
down_main() { keys Down && wait_for '^FLAME GRAPH __libc_start_call_main +total' && keys Down &&
	wait_for '^FLAME GRAPH main +total'; }
check "Down selects the widest callee: __libc_start_call_main, then main" down_main
keys Down
check "... Down again: chain_a (the heavier branch)" wait_for '^FLAME GRAPH chain_a +total'
zoomed_in() { wait_for '^\[chain_a +\]$' && grep -q 'of the zoomed chain_a' "$T/pane.txt"; }
zoomed_out() {
	wait_for '^\[all +\]$' && grep -q '^FLAME GRAPH chain_a' "$T/pane.txt" &&
		! grep -q 'of the zoomed' "$T/pane.txt"
}
keys Enter
check "Enter zooms: chain_a takes the full width, the title says so" zoomed_in
keys BSpace
check "Backspace zooms out: the root again, chain_a still selected" zoomed_out
# A baseline: B marks the screen; the Flame title and Top then compare with it.
marked() {
	wait_for '^FLAME GRAPH chain_a +total [0-9.]+%.*then/delta +[0-9.]+% +[-+][0-9.]+' &&
		grep -q 'baseline: the screen at' "$T/pane.txt"
}
keys B
check "B marks the baseline: the info line says so, the title gives the share then and the change" marked
keys 1
check "... and Top has the THEN% and DELTA columns, hot_ab in them" \
	wait_for '^ +[0-9.]+% +[0-9.]+% +[0-9.]+% +[-+][0-9.]+ +[0-9]+ hot_ab'
keys B 7
tm resize-window -t ui -x 120 -y 40 2>/dev/null || tm resize-pane -t ui -x 120 -y 40
check "a resize to 120x40 redraws the root 120 columns wide" wait_for '^\[all {115,}\]$'
tm resize-window -t ui -x 80 -y 24 2>/dev/null || tm resize-pane -t ui -x 80 -y 24
keys q
check "back at 80x24, q quits to the shell" wait_for 'ui-test\$ *$'

# A frame grown too narrow for a column (tests/views/narrow.txtpb: a branch a column wide at
# 200 columns, none at 80): in `view`, with no refresh to come, a resize lays the boxes out
# again at once, and the selection goes to the frame's nearest ancestor that has a box.
if ! encode "$TOP_SRCDIR/tests/views/narrow.txtpb" "$T/narrow.pb"; then
	diag_file "$T/encode.err"
	skip_n 2 "cannot encode the narrow profile ($PROTOC_C, $PPROF_PROTO)"
	finish
fi
tm resize-window -t ui -x 200 -y 30 2>/dev/null || tm resize-pane -t ui -x 200 -y 30
run "'$GOTOP_PERF' view '$T/narrow.pb'"
wait_for '^gotop-perf view' >/dev/null
keys 7
wait_for '^\[all {190,}\]$' >/dev/null
keys Down Down Left Down
check "view at 200 columns: Down Down Left Down selects a_tinier, one column at the left edge" \
	wait_for '^FLAME GRAPH a_tinier +total 0\.5%'
tm resize-window -t ui -x 80 -y 24 2>/dev/null || tm resize-pane -t ui -x 80 -y 24
at80() { wait_for '^FLAME GRAPH main +total 100\.0%' && grep -Eq '^\[all {75}\]$' "$T/pane.txt"; }
check "... at 80 columns: laid out again, the selection on main (a_tinier's nearest ancestor with a box)" at80
keys q
finish
