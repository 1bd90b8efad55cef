#!/bin/bash
# tests/sanitize.sh: the memory and thread checks of issue 7, run by `setup.sh test` beside the
# suite: an ASan+UBSan build runs the whole suite again (unit tests, fuzz corpora, every
# integration test, with one Go version); valgrind memcheck runs the unit tests and a
# real recording (definite and indirect leaks fail); cppcheck finds nothing; a ThreadSanitizer
# build runs the UI and record tests (the sampler -> aggregator -> UI hand-off).
#
# Usage: tests/sanitize.sh TOP_SRCDIR WORKDIR
# Prints one line per step and ends with "N passed, N failed, N skipped"; exit 1 on a failure.
set -u
SRC=$(cd "${1:?usage: sanitize.sh TOP_SRCDIR WORKDIR}" && pwd)
WORK=${2:?usage: sanitize.sh TOP_SRCDIR WORKDIR}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
pass=0 fail=0 skip=0
jobs=$(nproc)

say() { echo "sanitize: $*"; }
# add_log LOG: adds the counts of an automake test-suite.log.
add_log() {
	set -- $(awk '/^# (PASS|XFAIL):/ { p += $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 } /^# SKIP:/ { s += $3 }
		END { printf "%d %d %d\n", p, f, s }' "$1" 2>/dev/null)
	pass=$((pass + ${1:-0})) fail=$((fail + ${2:-1})) skip=$((skip + ${3:-0}))
}
step() { # step NAME OK(0/1)
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); say "ok - $1"; else fail=$((fail + 1)); say "FAILED - $1"; fi
}

# configure_build DIR ARGS...: an out-of-tree build of the library, the program and the tests.
configure_build() {
	local dir=$1
	shift
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$dir" && "$SRC/configure" -q "$@" >configure.out 2>&1) || { cat "$dir/configure.out" >&2; return 1; }
	fi
	make -C "$dir" -s -j"$jobs" >"$dir/build.out" 2>&1 &&
		make -C "$dir" -s -j"$jobs" check TESTS= >>"$dir/build.out" 2>&1 || { tail -30 "$dir/build.out" >&2; return 1; }
}

UNITS=$(cd "$SRC" && ls tests/test-*.c | sed 's/\.c$//' | tr '\n' ' ')
# Under valgrind, the unit tests that do not build and scan whole Go toolchains' binaries
# (those run under ASan): valgrind is 20-50 times slower. test-maps reads its own
# /proc/self/maps, which valgrind lays out its own way, and test-pprof's unwritable-directory
# case behaves differently under it; both run under ASan+UBSan (leaks included).
VG_UNITS=$(echo "$UNITS" | tr ' ' '\n' | grep -v -e test-gopclntab -e test-symtab -e test-goruntime -e test-maps -e test-pprof |
	tr '\n' ' ')
# The whole suite: every integration test and the fuzz corpora; one Go version keeps the time
# down (the plain suite covers the others).
INTEG=$(cd "$SRC" && ls tests/*.sh | grep -v -e '/lib\.sh$' -e '/go-build\.sh$' -e '/go-toolchain\.sh$' \
	-e '/tap-unit\.sh$' -e '/sanitize\.sh$' | tr '\n' ' ')
FUZZ=$(cd "$SRC" && ls fuzz/fuzz-*.c | grep -v fuzz-main | sed 's/\.c$//' | tr '\n' ' ')

# --- ASan + UBSan ---
B=$WORK/asan
if configure_build "$B" --enable-asan; then
	# Reports go to files (tests send gotop-perf's stderr to temporary files): one per process.
	rm -rf "$B/reports" && mkdir -p "$B/reports"
	GOTOP_UNDER_SANITIZER=1 ASAN_OPTIONS=detect_leaks=1:exitcode=86:log_path=$B/reports/asan \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$B/reports/ubsan \
		GOTOP_GO_VERSIONS=1.23 make -C "$B" -s -j"$jobs" check TESTS="$UNITS $FUZZ $INTEG" >"$B/check.out" 2>&1
	add_log "$B/test-suite.log"
	# LeakSanitizer cannot run in a process that is being traced (verify.sh attaches strace
	# to a workload on purpose): that note is not a finding.
	reports=$(grep -L 'LeakSanitizer does not work under ptrace' "$B"/reports/* 2>/dev/null | wc -l)
	step "ASan+UBSan: no sanitizer report from any process ($reports reports)" $([ "$reports" -eq 0 ]; echo $?)
	[ "$reports" -eq 0 ] || head -40 $(grep -L 'LeakSanitizer does not work under ptrace' "$B"/reports/*) >&2
else
	step "ASan+UBSan build" 1
fi

# --- valgrind memcheck ---
P=$WORK/plain
if command -v valgrind >/dev/null && configure_build "$P"; then
	VG="valgrind -q --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect"
	for u in $VG_UNITS; do
		(cd "$P" && CMOCKA_MESSAGE_OUTPUT=TAP TOP_SRCDIR=$SRC TOP_BUILDDIR=$P $VG "./$u" >"$P/$(basename "$u").vg" 2>&1)
		rc=$?
		step "valgrind: $(basename "$u") ($rc)" $([ $rc -ne 97 ] && ! grep -q '^==[0-9]*== ' "$P/$(basename "$u").vg"; echo $?)
	done
	# A whole recording: sampler thread, Go reads, repair, aggregation, pprof writing.
	(cd "$P" && $VG ./gotop-perf record -q -d 2 -o "$P/vg.pb.gz" -- ./tests/workloads/cchains 10 >"$P/record.vg" 2>&1)
	rc=$?
	step "valgrind: gotop-perf record (exit $rc, errors and leaks fail)" $([ $rc -eq 0 ]; echo $?)
	[ $rc -eq 0 ] || head -40 "$P/record.vg" >&2
	(cd "$P" && $VG ./gotop-perf verify -q -d 2 --rate 50 -- ./tests/workloads/cchains 10 >"$P/verify.vg" 2>&1)
	rc=$?
	step "valgrind: gotop-perf verify (exit $rc, errors and leaks fail)" $([ $rc -eq 0 ]; echo $?)
	[ $rc -eq 0 ] || head -40 "$P/verify.vg" >&2
else
	skip=$((skip + 1))
	say "SKIP - valgrind not installed or build failed"
fi

# --- cppcheck ---
if command -v cppcheck >/dev/null; then
	cppcheck -q --enable=warning,portability --inline-suppr --error-exitcode=1 -I "$SRC/include" -I "$SRC/ui" \
		--std=c11 -D__linux__ -D__x86_64__ -Dnoreturn=_Noreturn --suppress=missingIncludeSystem \
		"$SRC/src" "$SRC/ui" >"$WORK/cppcheck.out" 2>&1
	rc=$?
	step "cppcheck --enable=warning,portability: no findings" $rc
	[ $rc -eq 0 ] || cat "$WORK/cppcheck.out" >&2
else
	skip=$((skip + 1))
	say "SKIP - cppcheck not installed"
fi

# --- ThreadSanitizer: the sampler, the aggregator, the live UI's worker and the verifier ---
B=$WORK/tsan
if configure_build "$B" --enable-tsan; then
	rm -rf "$B/reports" && mkdir -p "$B/reports"
	TSAN_OPTIONS=halt_on_error=0:exitcode=66:second_deadlock_stack=1:log_path=$B/reports/tsan GOTOP_GO_VERSIONS=1.23 \
		make -C "$B" -s -j"$jobs" check TESTS="tests/record-c.sh tests/ui-batch.sh tests/ui-tmux.sh" \
		>"$B/check.out" 2>&1
	add_log "$B/test-suite.log"
	reports=$(ls "$B/reports" | wc -l)
	step "TSan: no data race or lock-order report in the UI and record tests ($reports reports)" \
		$([ "$reports" -eq 0 ]; echo $?)
	[ "$reports" -eq 0 ] || head -60 "$B"/reports/* >&2
else
	step "TSan build" 1
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
