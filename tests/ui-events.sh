#!/bin/sh
# ui-events.sh: the event picker and the event prompt of the live UI, in tmux: tracepoints
# listed under a filter and sampled live (their stacks in the function that writes); a
# vendor name encoded for a forced CPU model, a bad modifier: each one status line, and the
# current event keeps running; a group typed at the prompt shows its member's columns (its
# share, or with :S its ratio); the terminal restored. 160 columns: the status line holds
# the whole reason.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v tmux >/dev/null 2>&1 || skip_all "tmux is not installed"
need_perf
[ -e /lib/terminfo/s/screen ] || [ -e /usr/share/terminfo/s/screen ] ||
	skip_all "no terminfo entry for TERM=screen"
tracefs_ready || skip_all "$tracefs_why"
"$GOTOP_PERF" list --tracepoints sys_enter_write | grep -qx 'syscalls:sys_enter_write' ||
	skip_all "this kernel has no syscalls:sys_enter_write tracepoint (CONFIG_FTRACE_SYSCALLS)"
plan 15

W=$TOP_BUILDDIR/tests/workloads/evmix
SOCK=gotop-uiev-test-$$
. "$TOP_SRCDIR/tests/helpers/tmux.sh"

# libpfm4 encodes vendor names for Skylake: they parse, and opening them here shows what
# happens without that PMU.
tm new-session -d -s ui -x 160 -y 40 \
	"env -i PATH='$PATH' HOME='$T' TERM=screen LANG=C.UTF-8 PS1='ui-test\$ ' LIBPFM_FORCE_PMU=skl \
		ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' TSAN_OPTIONS='${TSAN_OPTIONS:-}' sh" ||
	skip_all "cannot start a tmux session"
wait_for 'ui-test\$' >/dev/null || skip_all "no shell prompt in tmux"
run "stty -g >'$T/stty.before'; echo before-marker"
wait_for '^before-marker' >/dev/null

run "'$GOTOP_PERF' -- '$W' 300; stty -g >'$T/stty.after'; echo after-marker"
wait_for '^cpu-clock 1000 Hz' >/dev/null
keys e
wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION' >/dev/null
keys End
check "the picker points at the tracepoints without listing them" \
	wait_for '^ +subsystem:event +trace +[0-9]+ tracepoints: / filters them in'
keys /
tm send-keys -t ui -l sys_enter_wr
keys Enter
check "/ filters the picker: the write tracepoints are listed" \
	wait_for '^ +syscalls:sys_enter_write +trace '
check "... and nothing that does not match" sh -c "! grep -Eq '^ +(cpu-clock|task-clock|L1-dcache-loads) ' '$T/pane.txt'"
keys Home Enter
check "Enter samples the tracepoint live" wait_for '^syscalls:sys_enter_write 1000 Hz'
check "... its samples are in libc's write" wait_for '^ +100\.0% +100\.0% +[0-9]+ __GI___libc_write '
check "... called by write_null" wait_for '^ +0\.0% +100\.0% +0 write_null '
keys e
wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION' >/dev/null
check "the function search is not the picker's filter" sh -c "! grep -q 'search: sys_enter_wr' '$T/pane.txt'"
keys :
tm send-keys -t ui -l INST_RETIRED:ANY_P
keys Enter
check "a vendor name here: one status line naming the missing PMU" \
	wait_for 'cannot sample INST_RETIRED:ANY_P \(still sampling syscalls:sys_enter_write\): .*no hardware PMU'
check "... and the tracepoint keeps running" wait_for '^syscalls:sys_enter_write 1000 Hz'
keys e
wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION' >/dev/null
keys :
tm send-keys -t ui -l cpu-clock:zz
keys Enter
bad_mod() { wait_for "bad modifier ':zz'" && grep -q '^syscalls:sys_enter_write 1000 Hz' "$T/pane.txt"; }
check "a bad modifier: one status line, the event unchanged" bad_mod
# A group from the prompt: it is sampled live, and Top gets its member's columns.
keys e
wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION' >/dev/null
keys :
tm send-keys -t ui -l '{cpu-clock,page-faults}'
keys Enter
check "a group typed at the prompt is sampled live" wait_for '^\{cpu-clock,page-faults\} 1000 Hz'
check "... and Top shows its faults and faults% (its share of the page faults) columns" \
	wait_for '^ +SELF% +TOTAL% +SAMPLES +faults +faults% FUNCTION'
# The group read at its leader's samples: the ratio column instead.
keys e
wait_for 'EVENT +KIND +HERE +KEPT +DESCRIPTION' >/dev/null
keys :
tm send-keys -t ui -l '{cpu-clock,page-faults}:S'
keys Enter
check "{cpu-clock,page-faults}:S typed at the prompt is sampled live" \
	wait_for '^\{cpu-clock,page-faults\}:S 1000 Hz'
check "... and Top shows its faults and faults/ms columns" \
	wait_for '^ +SELF% +TOTAL% +SAMPLES +faults +faults/ms FUNCTION'
keys q
wait_for '^after-marker' >/dev/null
check "q quits with the terminal modes restored (stty -g)" cmp -s "$T/stty.before" "$T/stty.after"
finish
