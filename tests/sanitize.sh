#!/bin/bash
# tests/sanitize.sh: the memory and thread checks of issue 7, run by `setup.sh test` after the
# suite: an ASan+UBSan build runs the whole suite again (unit tests, fuzz corpora, every
# integration test, with one Go version); a clang --enable-fuzzing build runs each libFuzzer
# harness for GOTOP_FUZZ_TIME seconds (default 6) under ASan+UBSan; valgrind memcheck runs the
# whole suite again, unit tests and every integration test with gotop-perf under it (memory
# errors, definite and indirect leaks fail); cppcheck finds nothing; a ThreadSanitizer build
# runs the UI and record tests (the sampler -> aggregator -> UI hand-off).
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
# add_log LOG NAME: adds the counts of an automake test-suite.log, and names each failed test
# (with its log's first failing lines) so that a failure in a sanitizer build says what failed.
add_log() {
	local log=$1 name=$2
	set -- $(awk '/^# (PASS|XFAIL):/ { p += $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 } /^# SKIP:/ { s += $3 }
		END { printf "%d %d %d\n", p, f, s }' "$log" 2>/dev/null)
	pass=$((pass + ${1:-0})) fail=$((fail + ${2:-1})) skip=$((skip + ${3:-0}))
	[ -f "$log" ] || { say "FAILED - $name: no $log"; return; }
	[ "${2:-1}" = 0 ] && return
	grep -E '^(FAIL|ERROR|XPASS): ' "$log" | sort -u | sed "s/^/sanitize: $name: /"
	# Each failure with the comment lines before it (a test's diagnosis: the screen, the
	# figures), at most 40 of them.
	awk '/^#/ { if (n < 40) d[++n] = $0; next }
		/^(not ok|FAIL:)/ { for (i = 1; i <= n; i++) print d[i]; print }
		{ n = 0 }' "$log" | head -150 >&2
}
step() { # step NAME OK(0/1)
	if [ "$2" -eq 0 ]; then pass=$((pass + 1)); say "ok - $1"; else fail=$((fail + 1)); say "FAILED - $1"; fi
}

# configure_tree DIR ARGS...: configures an out-of-tree build (once).
configure_tree() {
	local dir=$1
	shift
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ]; then
		(cd "$dir" && "$SRC/configure" -q "$@" >configure.out 2>&1) || { cat "$dir/configure.out" >&2; return 1; }
	fi
}
# configure_build DIR ARGS...: an out-of-tree build of the library, the program and the tests.
configure_build() {
	local dir=$1
	configure_tree "$@" || return 1
	make -C "$dir" -s -j"$jobs" >"$dir/build.out" 2>&1 &&
		make -C "$dir" -s -j"$jobs" check TESTS= >>"$dir/build.out" 2>&1 || { tail -30 "$dir/build.out" >&2; return 1; }
}

UNITS=$(cd "$SRC" && ls tests/test-*.c | sed 's/\.c$//' | tr '\n' ' ')
# The integration tests are Makefile.am's INTEGRATION_TESTS (every `=` and `+=` of it):
# helper scripts live in tests/helpers, and no script in tests/ is run unless listed there.
# One Go version keeps the time down (the plain suite covers the others).
INTEG=$(awk '{ if (c) l = l " " $0; else l = $0; c = sub(/\\$/, "", l)
	if (!c) { if (l ~ /^INTEGRATION_TESTS \+?=/) { sub(/^INTEGRATION_TESTS \+?=/, "", l); printf "%s ", l }; l = "" } }' \
	"$SRC/Makefile.am" | tr -s ' \t' '  ')
# without LIST NAMES...: the words of LIST not among NAMES.
without() {
	local list=$1 t
	shift
	for t in $list; do
		case " $* " in *" $t "*) ;; *) printf '%s ' "$t" ;; esac
	done
}
# first LIST NAMES...: LIST with NAMES (those in it) at its front, in that order: make -j
# starts tests in list order, so the longest go first and none is left running alone at
# the end.
first() {
	local list=$1 t
	shift
	for t in "$@"; do
		case " $list " in *" $t "*) printf '%s ' "$t" ;; esac
	done
	without "$list" "$@"
}
FUZZ=$(cd "$SRC" && ls fuzz/fuzz-*.c | grep -v fuzz-main | sed 's/\.c$//' | tr '\n' ' ')
F=$WORK/fuzz P=$WORK/plain TS=$WORK/tsan
fuzz_cc=$(command -v clang || command -v clang-14 || true)

# The trees of the steps after ASan are built while ASan's build and tests run, at the lowest
# CPU priority: many of those tests wait (workloads of fixed length, screens polled), and the
# builds take their idle time, not theirs. Each step waits for its tree: built() gives the
# build's status, 0 when it succeeded.
prebuild() {
	renice -n 19 -p $BASHPID >/dev/null 2>&1
	if [ -n "$fuzz_cc" ]; then
		configure_tree "$F" CC="$fuzz_cc" --enable-fuzzing &&
			make -C "$F" -s -j"$jobs" >"$F/build.out" 2>&1 && make -C "$F" -s -j"$jobs" $FUZZ >>"$F/build.out" 2>&1
		echo $? >"$WORK/fuzz.built"
	fi
	if command -v valgrind >/dev/null; then
		configure_build "$P"
		echo $? >"$WORK/plain.built"
	fi
	configure_build "$TS" --enable-tsan
	echo $? >"$WORK/tsan.built"
}
built() {
	while [ ! -s "$WORK/$1.built" ] && kill -0 "$prebuild_pid" 2>/dev/null; do
		sleep 1
	done
	[ "$(cat "$WORK/$1.built" 2>/dev/null)" = 0 ]
}
rm -f "$WORK"/*.built

# --- ASan + UBSan ---
# Every unit test, the fuzz corpora and every integration test but those whose code the
# others run under ASan already, left out for CI's 40 minutes: the goroutine snapshots and
# the wall sampler (ui-wall, ui-tmux, test-gosnap, fuzz-gosnap), the Events view
# (ui-tmux's e), Go's tables of every release (test-gopclntab), and the --batch views,
# which valgrind and TSan run below. goruntime-live reads the oldest and the newest Go
# release's processes (the plain suite, five), verify-truth stops its targets 4 times (8).
ASAN_INTEG=$(first "$(without "$INTEG" tests/go-goroutines.sh tests/go-goroutines-churn.sh tests/go-wall.sh \
	tests/go-cgo-goroutines.sh tests/ui-events.sh tests/gopclntab-go.sh tests/ui-batch.sh)" \
	tests/serve-bad.sh tests/verify.sh tests/verify-truth.sh tests/ui-wall.sh tests/groups.sh)
B=$WORK/asan
prebuild &
prebuild_pid=$!
if configure_build "$B" --enable-asan; then
	# Reports go to files (tests send gotop-perf's stderr to temporary files): one per process.
	rm -rf "$B/reports" && mkdir -p "$B/reports"
	GOTOP_UNDER_SANITIZER=1 ASAN_OPTIONS=detect_leaks=1:exitcode=86:log_path=$B/reports/asan \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$B/reports/ubsan \
		GOTOP_GO_VERSIONS=1.23 GOTOP_GORT_VERSIONS="1.19 1.27" GOTOP_VERIFY_ROUNDS=4 \
		make -C "$B" -s -j"$jobs" check TESTS="$ASAN_INTEG $UNITS $FUZZ" >"$B/check.out" 2>&1
	add_log "$B/test-suite.log" ASan+UBSan
	# LeakSanitizer cannot run in a process that is being traced (verify.sh attaches strace
	# to a workload on purpose): that note is not a finding.
	reports=$(grep -L 'LeakSanitizer does not work under ptrace' "$B"/reports/* 2>/dev/null | wc -l)
	step "ASan+UBSan: no sanitizer report from any process ($reports reports)" $([ "$reports" -eq 0 ]; echo $?)
	[ "$reports" -eq 0 ] || head -40 $(grep -L 'LeakSanitizer does not work under ptrace' "$B"/reports/*) >&2
else
	step "ASan+UBSan build" 1
fi

# --- libFuzzer: each harness fuzzes for a bounded time under ASan+UBSan ---
# A clang build with --enable-fuzzing: `make all` (the generated sources), then the harnesses,
# not the unit tests and workloads. Run without
# arguments, a harness fuzzes for GOTOP_FUZZ_TIME seconds starting from its seeds
# (tests/fuzz-corpus/NAME, which libFuzzer only reads: it writes new inputs to the first corpus
# directory, fuzz/corpus-NAME in the build tree) and prints "ok 1 - NAME: no finding"; a crash,
# leak, timeout or UBSan report ends it without that line and leaves fuzz/NAME-crash-* (leak-,
# timeout-, oom-) behind: the input that reproduces it (fuzz/fuzz-main.c).
ftime=${GOTOP_FUZZ_TIME:-6}
if [ -z "$fuzz_cc" ]; then
	skip=$((skip + 1))
	say "SKIP - libFuzzer: clang is not installed"
elif ! built fuzz; then
	tail -30 "$F/build.out" >&2
	step "libFuzzer build (CC=$fuzz_cc --enable-fuzzing)" 1
else
	# Every run starts from the seeds alone, with no finding of an earlier run left over.
	make -C "$F" -s clean-fuzz
	running=0
	for h in $FUZZ; do
		n=${h#fuzz/fuzz-}
		(cd "$F" && TOP_SRCDIR=$SRC GOTOP_FUZZ_TIME=$ftime UBSAN_OPTIONS=print_stacktrace=1 "./$h" \
			>"fuzz/$n.out" 2>&1; echo $? >"fuzz/$n.rc") &
		running=$((running + 1))
		if [ $running -ge "$jobs" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
	for h in $FUZZ; do
		n=${h#fuzz/fuzz-}
		rc=$(cat "$F/fuzz/$n.rc" 2>/dev/null || echo none)
		execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$F/fuzz/$n.out" | tail -1)
		found=$(cd "$F/fuzz" && ls | grep -E "^$n-(crash|leak|timeout|oom|slow-unit)-" | head -1)
		step "libFuzzer $n: $ftime s, ${execs:-?} executions, no crash, leak or UBSan report (exit $rc)" \
			$([ "$rc" = 0 ] && [ -z "$found" ] && grep -q "^ok 1 - $n: no finding" "$F/fuzz/$n.out"; echo $?)
		if [ "$rc" != 0 ] || [ -n "$found" ]; then
			sed -n '/ERROR: \|runtime error: \|^==[0-9]*== *ERROR/,/^SUMMARY:/p' "$F/fuzz/$n.out" | head -40 >&2
			[ -z "$found" ] || say "reproduce with: $F/$h $F/fuzz/$found"
		fi
	done
fi

# --- valgrind memcheck ---
if command -v valgrind >/dev/null && built plain; then
	# libbpf 1.1 zeroes a union bpf_attr only up to the last field the command uses and passes
	# that size (libbpf bpf.c, e.g. bpf_map_create); valgrind 3.19's bpf(2) wrapper checks
	# fields past it, which the kernel does not read: libbpf's bytes, not a finding of ours.
	cat >"$WORK/valgrind.supp" <<-'EOF'
	{
	   libbpf-attr-past-size-expected_attach_type
	   Memcheck:Param
	   bpf(attr->expected_attach_type)
	   fun:syscall
	   obj:*/libbpf.so*
	}
	{
	   libbpf-attr-past-size-prog_ifindex
	   Memcheck:Param
	   bpf(attr->prog_ifindex)
	   fun:syscall
	   obj:*/libbpf.so*
	}
	EOF
	# --read-inline-info=no: valgrind reads no inline frames from the libraries' debug
	# information (only its reports' traces lose them): 0.12 s less per process, of 0.65 s
	# for `gotop-perf --version`, over 150 processes. --vgdb=no: no gdbserver, so no
	# /tmp/vgdb-pipe-*-PID files; a killed process leaves its own behind, and a later
	# process as nobody with the same PID could not create its file and ended with
	# "error 13 Permission denied" (hostile.sh 47 in CI).
	VG_OPTS="--error-exitcode=97 --read-inline-info=no --vgdb=no --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --suppressions=$WORK/valgrind.supp"
	VG="valgrind -q $VG_OPTS"
	# Every unit test, one at a time beside the integration tests below (which wait on
	# their workloads a good part of the time), the longest first. test-gopclntab checks
	# one Go release's binaries, not three, and of them one program for amd64 and arm64
	# only (GOPCLN_TEST_QUICK): it took 4 minutes of CPU otherwise, and CI has 20 minutes
	# (ASan and the plain suite check everything).
	VG_UNITS="tests/test-gopclntab $(echo "$UNITS" | tr ' ' '\n' | grep -v test-gopclntab | tr '\n' ' ')"
	(
		for u in $VG_UNITS; do
			n=$(basename "$u")
			(cd "$P" && GOPCLN_TEST_GO=1.23 GOPCLN_TEST_QUICK=1 CMOCKA_MESSAGE_OUTPUT=TAP TOP_SRCDIR=$SRC TOP_BUILDDIR=$P \
				$VG "./$u" >"$P/$n.vg" 2>&1; echo $? >"$P/$n.vgrc")
		done
	) &
	vg_units=$!
	# Every integration test with gotop-perf under memcheck (tests/helpers/lib.sh's GOTOP_WRAP); the
	# workloads it starts run natively (valgrind does not follow exec). gotop-perf needs 15-20
	# times the CPU (record -d 1 of cchains: 6.4 s instead of 0.37), so the tests bound runs
	# generously and skip figures that need gotop-perf's own speed or memory under
	# GOTOP_UNDER_SANITIZER / GOTOP_WRAP, each with the reason. One log per process,
	# without -q so that it says how the process ended, in a directory anyone may write to
	# (some tests run gotop-perf as nobody).
	# Left out here, run under ASan above: the tests whose every check is a share of samples
	# taken at the sample (stacks past Go's stack switches, goroutine start functions, the
	# verifier's crossings), which gotop-perf at a twentieth of its speed cannot take.
	# Left out too, for CI's 40 minutes, what ASan runs above: the live sessions of a
	# minute or more under valgrind (ui-tmux, faults, hostile-live, annotate, view, verify
	# and verify-truth's ptrace rounds, man's hundred short runs) and the event, memory, picker and server tests, whose
	# parsers and readers the unit tests here and ASan's runs cover (the server's bad
	# input, serve-bad, stays), and the six ASan leaves out. Also left to ASan: go-bpf and
	# go-repair, whose Go recording record-go, go-stripped and go-labels run here too (the
	# repair itself: test-repair here, fuzz-repair above).
	VG_INTEG=$(first "$(without "$INTEG" tests/go-goroutines.sh tests/go-goroutines-churn.sh tests/go-wall.sh \
		tests/go-cgo-goroutines.sh tests/ui-events.sh tests/gopclntab-go.sh tests/go-switches.sh \
		tests/verify-switches.sh tests/go-start.sh tests/ui-tmux.sh tests/faults.sh \
		tests/hostile-live.sh tests/annotate.sh tests/view.sh tests/verify.sh tests/man.sh \
		tests/verify-truth.sh tests/events.sh tests/groups.sh tests/go-memprof.sh \
		tests/go-memprof-service.sh tests/go-memlive.sh tests/ui-service.sh tests/picker.sh \
		tests/serve.sh tests/serve-prometheus.sh tests/serve-oracle.sh tests/serve-readonly.sh \
		tests/go-bpf.sh tests/go-repair.sh)" \
		tests/hostile.sh tests/serve-bad.sh tests/bad-input.sh tests/ui-wall.sh tests/record-go.sh)
	R=$P/reports
	rm -rf "$R" && mkdir -p "$R" && chmod 1777 "$R"
	GOTOP_WRAP="valgrind $VG_OPTS --child-silent-after-fork=yes --log-file=$R/vg.%p" GOTOP_UNDER_SANITIZER=1 \
		GOTOP_GO_VERSIONS=1.23 GOTOP_VERIFY_ROUNDS=2 make -C "$P" -s -j"$jobs" check TESTS="$VG_INTEG" >"$P/check.out" 2>&1
	wait $vg_units
	for u in $VG_UNITS; do
		n=$(basename "$u")
		rc=$(cat "$P/$n.vgrc" 2>/dev/null || echo none)
		step "valgrind: $n (exit $rc)" $([ "$rc" = 0 ] && ! grep -q '^==[0-9]*== ' "$P/$n.vg"; echo $?)
		[ "$rc" = 0 ] || grep -E '^(not ok|==[0-9]+== )' "$P/$n.vg" | head -20 >&2
	done
	add_log "$P/test-suite.log" valgrind
	# A finding: any memory error; a definite or indirect leak of a process that ended by
	# itself. A process a test kills with a signal it does not handle (yet: a slow start
	# under valgrind) dies wherever it is, and what it was building then counts as lost.
	vg_findings() {
		for f in "$R"/vg.*; do
			[ -f "$f" ] && awk '
				/Process terminating with default action of signal/ { sig = 1 }
				/are (definitely|indirectly) lost in loss record/ { leaks++ }
				/ERROR SUMMARY: [0-9]+ errors/ { errs = $4 + 0; summary = 1 }
				/^==[0-9]+== (Invalid|Conditional jump|Use of uninitialised|Syscall param|Mismatched|Source and destination|Jump to|Argument)/ { memerr++ }
				END { bad = summary ? (errs - leaks > 0 || (!sig && leaks > 0)) : memerr > 0; exit !bad }' "$f" &&
				echo "$f"
		done
	}
	reports=$(vg_findings | wc -l)
	step "valgrind: no memory error or leak in any gotop-perf process of the integration tests ($(ls "$R" | wc -l) processes, $reports reports)" \
		$([ "$reports" -eq 0 ]; echo $?)
	[ "$reports" -eq 0 ] || grep -h -A12 -E '^==[0-9]+== [A-Z].*(Invalid|uninitialised|lost in loss record)' $(vg_findings) | head -60 >&2
else
	skip=$((skip + 1))
	say "SKIP - valgrind not installed or build failed"
fi

# --- cppcheck ---
# SEC() places the BPF program's objects in ELF sections (libbpf bpf_helpers.h, a system
# header cppcheck does not read); it does not change the code.
if command -v cppcheck >/dev/null; then
	cppcheck -q --enable=warning,portability --inline-suppr --error-exitcode=1 -I "$SRC/include" -I "$SRC/ui" \
		--std=c11 -D__linux__ -D__x86_64__ -Dnoreturn=_Noreturn '-DSEC(name)=' --suppress=missingIncludeSystem \
		"$SRC/src" "$SRC/ui" >"$WORK/cppcheck.out" 2>&1
	rc=$?
	step "cppcheck --enable=warning,portability: no findings" $rc
	[ $rc -eq 0 ] || cat "$WORK/cppcheck.out" >&2
else
	skip=$((skip + 1))
	say "SKIP - cppcheck not installed"
fi

# --- ThreadSanitizer: the sampler, the aggregator, the live UI's worker and the verifier ---
B=$TS
wait $prebuild_pid
if built tsan; then
	rm -rf "$B/reports" && mkdir -p "$B/reports"
	TSAN_OPTIONS=halt_on_error=0:exitcode=66:second_deadlock_stack=1:log_path=$B/reports/tsan GOTOP_GO_VERSIONS=1.23 \
		make -C "$B" -s -j"$jobs" check TESTS="tests/record-c.sh tests/ui-batch.sh tests/ui-tmux.sh" \
		>"$B/check.out" 2>&1
	add_log "$B/test-suite.log" TSan
	reports=$(ls "$B/reports" | wc -l)
	step "TSan: no data race or lock-order report in the UI and record tests ($reports reports)" \
		$([ "$reports" -eq 0 ]; echo $?)
	[ "$reports" -eq 0 ] || head -60 "$B"/reports/* >&2
else
	step "TSan build" 1
fi

echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ]
