#!/bin/sh
# cli.sh: --help, --version, list, man page, and command-line errors with their exit codes.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

plan 24
out=$T/out
"$GOTOP_PERF" --help >"$out" 2>&1
check "--help exits 0 and shows record usage" grep -q 'gotop-perf record (-p PID' "$out"
check "--help documents exit codes" grep -q 'Exit codes' "$out"
"$GOTOP_PERF" --version >"$out" 2>&1
check "--version prints the version" grep -Eq '^gotop-perf [0-9]+\.[0-9]+' "$out"

"$GOTOP_PERF" list >"$out" 2>&1
rc=$?
check "list exits 0" [ $rc -eq 0 ]
# Every event named in the issue is listed with a yes/no verdict.
missing=""
for e in cpu-clock task-clock page-faults minor-faults major-faults context-switches \
	cpu-migrations cycles instructions cache-references cache-misses branch-instructions \
	branch-misses bus-cycles ref-cycles; do
	grep -Eq "^$e +(software|hardware) +(yes|no) " "$out" || missing="$missing $e"
done
check "list shows every event with a verdict${missing:+ (missing:$missing)}" [ -z "$missing" ]
# A hardware event this machine cannot count says why, naming the event.
if grep -Eq '^cycles +hardware +no ' "$out"; then
	check "list says why cycles cannot be counted" grep -Eq '^cycles .*cycles: not supported' "$out"
else
	ok "cycles can be counted on this machine"
fi

"$GOTOP_PERF" record >"$out" 2>&1
rc=$?
check "record without a target exits 2" [ $rc -eq 2 ]
check "... and says what is missing" grep -q 'nothing to profile' "$out"
"$GOTOP_PERF" record -p 1 -F 0 >"$out" 2>&1
check "record -F 0 is a usage error (exit 2)" [ $? -eq 2 ]
"$GOTOP_PERF" record -e bogus-event -p 1 >"$out" 2>&1
rc=$?
check "unknown event exits 5 with a clear message" sh -c "[ $rc -eq 5 ] && grep -q \"unknown event 'bogus-event'\" '$out'"
"$GOTOP_PERF" record --nope >"$out" 2>&1
check "unknown option exits 2" [ $? -eq 2 ]
# --max-memory: 0 is no limit; anything else must be a number of MB.
"$GOTOP_PERF" --batch -n 1 --view top --max-memory 0 -- /bin/sh -c 'sleep 2' >"$out" 2>&1
check "--max-memory 0 (no limit) is accepted (exit $?)" [ $? -eq 0 ]
"$GOTOP_PERF" --batch -n 1 --max-memory 12x -p 1 >"$out" 2>&1
check "--max-memory 12x is a usage error (exit 2) naming it" \
	sh -c "[ $? -eq 2 ] && grep -q \"invalid memory limit '12x'\" '$out'"
# The same event twice (or under two of its names) would write one profile twice.
"$GOTOP_PERF" record -e cpu-clock -e cpu-clock -d 1 -o "$T/twice.pb.gz" -- /bin/sh -c 'sleep 2' >"$out" 2>&1
check "record -e cpu-clock -e cpu-clock is refused (exit 2) naming the event" \
	sh -c "[ $? -eq 2 ] && grep -q \"event 'cpu-clock' is given twice\" '$out' && [ ! -e '$T/twice.pb.gz' ]"
"$GOTOP_PERF" record -e page-faults -e faults -d 1 -o "$T/twice.pb.gz" -- /bin/sh -c 'sleep 2' >"$out" 2>&1
check "... and so is an event under two of its names (page-faults, faults)" \
	sh -c "[ $? -eq 2 ] && grep -q \"event 'faults' is given twice (as page-faults)\" '$out'"
check "man page exists and names the commands" grep -q 'record' "$TOP_BUILDDIR/doc/gotop-perf.1"
# The display options the live UI and view share: a bad value is the same usage error in
# both, before any target or file is looked at.
for cmd in live view; do
	for bad in "--sort size:invalid sort 'size'" "--rows -3:invalid number of rows '-3'" \
		"--min-pct 101:invalid percentage '101'" "--tag =x:invalid --tag '=x'"; do
		opt=${bad%%:*}
		if [ $cmd = live ]; then
			"$GOTOP_PERF" --batch $opt -p 1 >"$out" 2>&1
		else
			"$GOTOP_PERF" view --batch $opt "$T/none.pb.gz" >"$out" 2>&1
		fi
		rc=$?
		check "$cmd $opt: exit 2 and '${bad#*:}'" \
			sh -c "[ $rc -eq 2 ] && grep -qF \"${bad#*:}\" '$out' && [ \$(wc -l <'$out') -eq 1 ]"
	done
done
finish
