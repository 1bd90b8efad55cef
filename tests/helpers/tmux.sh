# tmux.sh: driving the live UI in a tmux pane, for the tests that do (sourced after lib.sh).
# The caller sets SOCK (a tmux server of its own) and starts a session named "ui".
tm() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tm kill-server 2>/dev/null; cleanup' EXIT

# pane: the screen as text; pane_e: with attributes (colours) as escape sequences.
pane() { tm capture-pane -p -t ui; }
pane_e() { tm capture-pane -e -p -t ui; }
# crashed: the screen shows a crash report (a sanitizer's or the shell's). Every wait then
# fails at once: a UI that crashed early made each later check wait its full 30 s.
crashed() {
	grep -Eq 'runtime error:|(Address|Thread|Leak|UndefinedBehavior)Sanitizer|Segmentation fault' "$T/pane.txt"
}
# wait_for PATTERN: polls the screen (extended regex) for up to about 30 s (times gp_slow:
# under valgrind the UI may take that long to show what it has).
wait_for() {
	i=0
	while [ $i -lt $((150 * gp_slow)) ]; do
		pane >"$T/pane.txt" 2>/dev/null
		grep -Eq -- "$1" "$T/pane.txt" && return 0
		crashed && break
		sleep 0.2
		i=$((i + 1))
	done
	diag "waited in vain for: $1"
	diag_file "$T/pane.txt"
	return 1
}
# wait_cmd COMMAND...: polls until COMMAND (reading $T/pane.txt) succeeds.
wait_cmd() {
	i=0
	while [ $i -lt $((150 * gp_slow)) ]; do
		pane >"$T/pane.txt" 2>/dev/null
		"$@" && return 0
		crashed && break
		sleep 0.2
		i=$((i + 1))
	done
	diag_file "$T/pane.txt"
	return 1
}
keys() { tm send-keys -t ui "$@"; }
# run COMMAND: types a shell command line in the pane.
run() { tm send-keys -t ui -l "$*"; tm send-keys -t ui Enter; }
