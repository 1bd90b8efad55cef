#!/bin/sh
# tap-unit.sh: runs a cmocka unit test for automake's TAP driver. cmocka 1.1.5 reports a
# skipped test as "not ok N # SKIP", which the driver counts as a failure: rewrite it to
# "ok N # SKIP" (the reason printed by the test stays). The test's exit status is kept.
out=$(mktemp "${TMPDIR:-/tmp}/tap-unit.XXXXXX") || exit 99
"$@" >"$out" 2>&1
rc=$?
sed 's/^not ok \([0-9][0-9]*\)\(.*\) # SKIP/ok \1\2 # SKIP/' "$out"
rm -f "$out"
exit $rc
