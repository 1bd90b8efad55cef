#!/bin/sh
# ui-batch.sh: the live profiler's --batch mode (the views as text, like top -b) on the C chains
# workload and the Go demo; numbers checked against go tool pprof reading the same data (--save).
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan 52
W=$TOP_BUILDDIR/tests/workloads/cchains
out=$T/out
err=$T/err

# section FILE ITERATION VIEW: the rows of one view of one iteration (after its title line).
section() {
	awk -v it="=== iteration $2 ===" -v v="== $3 ==" '
		$0 == it { i = 1; next }
		/^=== iteration / { i = 0 }
		i && $0 == v { s = 1; getline; next }
		i && s && (/^== / || /^$/) { s = 0 }
		i && s { print }' "$1"
}

# --- C: Top, Tree, Callers, Threads ---
"$GOTOP_PERF" --batch -n 2 --rows 0 --view top,tree,callers,threads --save "$T/c.pb.gz" \
	-- "$W" 20 >"$out" 2>"$err"
rc=$?
check "batch -n 2 exits 0" [ $rc -eq 0 ]
check "... after exactly 2 iterations" sh -c "grep -q '^=== iteration 2 ===' '$out' && ! grep -q '^=== iteration 3' '$out'"
check "... with the header (pid, event, rate, state)" \
	grep -Eq '^cpu-clock 1000 Hz .*samples/s +lost [0-9]+ +threads [0-9]+' "$out"
section "$out" 2 Top >"$T/top.txt"
check "Top lists the hot function hot_ab" grep -Eq '^ +[0-9.]+% +[0-9.]+% +[0-9]+ hot_ab +cchains.c:[0-9]+' "$T/top.txt"
# The 2:1 split within (1.5, 2.6) needs about 2,000 samples (the ratio's standard deviation
# is then 0.1); a busy machine gives the workload a few hundred in 2 s, so the update is
# taken again over a longer span (up to 16 s) until it has them.
d=2
while :; do
	"$GOTOP_PERF" --batch -n 2 -d $d --rows 0 --view top -- "$W" $((d + 5)) >"$T/ratio" 2>&1
	n=$(sed -n 's/^cumulative  *\([0-9][0-9]*\) samples.*/\1/p' "$T/ratio" | tail -1)
	{ [ "${n:-0}" -ge 2000 ] || [ $d -ge 16 ]; } && break
	d=$((d * 2))
done
section "$T/ratio" 2 Top >"$T/ratio.txt"
ab=$(awk '$4 == "hot_ab" { sub("%", "", $1); print $1 }' "$T/ratio.txt")
c=$(awk '$4 == "hot_c" { sub("%", "", $1); print $1 }' "$T/ratio.txt")
check "... hot_ab has about twice hot_c's self share ($ab% vs $c% of ${n:-no} samples in $d s)" \
	awk -v a="$ab" -v c="$c" 'BEGIN { r = a / c; exit !(c > 0 && r > 1.5 && r < 2.6) }'
if pprof_setup; then
	# The same data through an independent decoder: every function's flat% and cum%.
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 "$T/c.pb.gz" 2>/dev/null | awk '
		/^ *flat +flat%/ { s = 1; next }
		s && NF >= 6 { f = $2; c = $5; sub("%", "", f); sub("%", "", c); print $6, f, c }' \
		>"$T/pprof.txt"
	# A name pprof prints on several rows ([unknown] for unsymbolized addresses) cannot
	# be matched to one of ours: only names that are unique in pprof's output count.
	awk 'function abs(x) { return x < 0 ? -x : x }
		NR == FNR { f[$1] = $2; c[$1] = $3; seen[$1]++; next }
		($4 in f) && seen[$4] == 1 { s = $1; t = $2; sub("%", "", s); sub("%", "", t); n++
			if (abs(s - f[$4]) > 0.06 || abs(t - c[$4]) > 0.06) {
				print "mismatch", $4, s, t, "pprof", f[$4], c[$4]; bad = 1 } }
		END { print n + 0; exit bad }' "$T/pprof.txt" "$T/top.txt" >"$T/cmp.txt"
	rc=$?
	n=$(tail -1 "$T/cmp.txt")
	if [ $rc -eq 0 ] && [ "$n" -ge 3 ]; then
		ok "Top's self% and total% equal go tool pprof -top on the saved snapshot ($n functions)"
	else
		not_ok "Top's self% and total% equal go tool pprof -top on the saved snapshot"
		diag_file "$T/cmp.txt"
	fi
else
	skip "no Go toolchain for go tool pprof"
fi
section "$out" 2 Tree >"$T/tree.txt"
# Indentation grows along main -> chain_a -> chain_b -> hot_ab.
check "Tree nests main > chain_a > chain_b > hot_ab" awk '
	{ n = $0; sub(/^ +[0-9.]+% +[0-9.]+% +[0-9]+ /, "", n); match(n, /[^ ]/); d = RSTART
	  name = $NF }
	name == "main" && !m { m = d }
	name == "chain_a" && m && d > m && !a { a = d }
	name == "chain_b" && a && d > a && !b { b = d }
	name == "hot_ab" && b && d > b { ok = 1 }
	END { exit !ok }' "$T/tree.txt"
section "$out" 2 Callers >"$T/callers.txt"
check "Callers start at the hottest function" sh -c "grep -q 'CALLERS OF hot_ab' '$out'"
check "... whose caller is chain_b, then chain_a" awk '
	$NF == "hot_ab" { h = NR } $NF == "chain_b" && h { b = NR } $NF == "chain_a" && b { ok = 1 }
	END { exit !ok }' "$T/callers.txt"
section "$out" 2 Threads >"$T/threads.txt"
check "Threads shows the thread by name" grep -Eq '100\.0% +[0-9]+ +[0-9]+ +cchains +hot_ab' "$T/threads.txt"

# --- an existing process (-p) ---
"$W" 20 &
wpid=$!
track $wpid
"$GOTOP_PERF" --batch -n 1 --view top -p $wpid >"$out" 2>"$err"
check "-p PID: batch shows the running process" sh -c "grep -q '^gotop-perf PID $wpid ' '$out' && grep -q ' hot_ab ' '$out'"
check "... and leaves it running" kill -0 $wpid
kill $wpid

# --- focus like pprof -focus, ignore like -ignore ---
# Two refreshes and every row: under a sanitizer on a loaded machine the first second may
# hold no sample of chain_c.
"$GOTOP_PERF" --batch -n 2 --rows 0 --view top --focus chain_c -- "$W" 20 >"$out" 2>"$err"
section "$out" 2 Top >"$T/top.txt"
# chain_c is in every sample kept; hot_c in nearly all (a sample may land in chain_c's own
# few instructions: seen once in 214 under TSan).
if grep -Eq '^ +[0-9.]+% +100\.0% +[0-9]+ chain_c ' "$T/top.txt" &&
	awk '$4 == "hot_c" { sub("%", "", $2); t = $2 + 0 } END { exit !(t >= 99) }' "$T/top.txt"; then
	ok "--focus chain_c: chain_c is 100% total, hot_c at least 99%"
else
	not_ok "--focus chain_c: chain_c is 100% total, hot_c at least 99%"
	diag_file "$T/top.txt"
fi
check "... and hot_ab is gone" sh -c "! grep -q ' hot_ab ' '$T/top.txt'"
check "... the info line names the focus" grep -q 'focus: chain_c\*' "$out"
"$GOTOP_PERF" --batch -n 2 --rows 0 --view top --ignore hot_ab -- "$W" 20 >"$out" 2>"$err"
section "$out" 2 Top >"$T/top.txt"
if ! grep -q ' hot_ab ' "$T/top.txt" && grep -q ' hot_c ' "$T/top.txt"; then
	ok "--ignore hot_ab drops its samples"
else
	not_ok "--ignore hot_ab drops its samples"
	diag_file "$T/top.txt"
fi

# --- the target exits: the last iteration says so and batch ends by itself ---
"$GOTOP_PERF" --batch --view top -- "$W" 1.5 >"$out" 2>"$err"
rc=$?
check "target exit ends batch mode with 0" [ $rc -eq 0 ]
check "... the last header says the target exited" sh -c "tail -n +\$(grep -n '^=== iteration' '$out' | tail -1 | cut -d: -f1) '$out' | grep -q 'target exited'"
check "... and still shows the data" grep -q ' hot_ab ' "$out"

# --- the decaying window: the last second only ---
"$GOTOP_PERF" --batch -n 4 --view top -w 1 --save "$T/w.pb.gz" -- "$W" 20 >"$out" 2>"$err"
line=$(grep '^last 1s ' "$out" | tail -1)
check "-w 1: the info line says so" [ -n "$line" ]
check "... and holds fewer samples than since the start ($line)" sh -c "echo '$line' |
	awk '{ n = \$3; sub(/\\(/, \"\", \$5); exit !(n + 0 > 0 && n + 0 < \$5 + 0) }'"
if pprof_setup; then
	n=$(echo "$line" | awk '{ print $3 }')
	check "... and the saved snapshot holds exactly those ($n) samples" [ "$(pprof_total "$T/w.pb.gz" 1)" = "$n" ]
else
	skip "no Go toolchain for go tool pprof"
fi

# --- the decaying window forgets the stacks it no longer shows (src/live/live.c, forget) ---
# drift makes a stack no recent sample had at nearly every sample. With 2 s of history
# kept instead of 60 (GOTOP_PERF_MIN_HISTORY), the profile drops its old entries within
# seconds; what the window shows must not change by it.
D=$TOP_BUILDDIR/tests/workloads/drift
GOTOP_PERF_MIN_HISTORY=2 "$GOTOP_PERF" --batch -n 12 --view top -w 1 --save "$T/drift.pb.gz" \
	-- "$D" 60 >"$out" 2>"$err"
rc=$?
line=$(grep '^last 1s ' "$out" | tail -1)
check "-w 1 on ever-new stacks: exit 0, old entries forgotten ($line)" \
	sh -c "[ $rc -eq 0 ] && echo '$line' | grep -Eq 'since start, [1-9][0-9]* of them forgotten\)'"
[ $rc -eq 0 ] || diag_file "$err"
if pprof_setup; then
	n=$(echo "$line" | awk '{ print $3 }')
	got=$(pprof_total "$T/drift.pb.gz" 1)
	check "... and the saved window still holds exactly its $n samples ($got)" \
		sh -c "[ '${n:-0}' -gt 0 ] && [ '$got' = '$n' ]"
else
	skip "no Go toolchain for go tool pprof"
fi

# --- the memory limit: past it, the entries with the fewest samples go (live.c, shed) ---
# With a 1 MB limit the resident size is always over it: each time the profile reaches 4096 entries
# (SHED_MIN_ENTRIES), drift's nearly all new, it keeps half. What is shown and saved must
# still agree, and say what was forgotten.
"$GOTOP_PERF" --batch -n 12 --view top --max-memory 1 --save "$T/shed.pb.gz" \
	-- "$D" 60 >"$out" 2>"$err"
rc=$?
line=$(grep '^cumulative' "$out" | tail -1)
check "--max-memory 1 on ever-new stacks: exit 0, entries forgotten ($line)" \
	sh -c "[ $rc -eq 0 ] && echo '$line' | grep -Eq '^cumulative, less [1-9][0-9]* samples the memory limit forgot +[1-9][0-9]* samples'"
check "... the first shed is said once, naming the limit and what it counts" \
	sh -c "[ \$(grep -c 'memory limit reached (1 MB anonymous, --max-memory)' '$err') -eq 1 ]"
check "... the header shows the memory counted against the limit" grep -Eq '  mem [0-9]+/1 MB$' "$out"
[ $rc -eq 0 ] || diag_file "$err"
if pprof_setup; then
	n=$(echo "$line" | awk '{ print $(NF - 1) }')
	got=$(pprof_total "$T/shed.pb.gz" 1)
	said=$(pprof -comments "$T/shed.pb.gz" 2>/dev/null | grep -c 'forgotten to keep gotop-perf under 1 MB of anonymous memory')
	check "... the saved profile holds exactly the $n samples shown ($got), and says what went" \
		sh -c "[ '${n:-0}' -gt 0 ] && [ '$got' = '$n' ] && [ '$said' = 1 ]"
else
	skip "no Go toolchain for go tool pprof"
fi

# --- events: what this machine can count ---
"$GOTOP_PERF" --batch -n 1 --view events -- "$W" 20 >"$out" 2>"$err"
check "events view: cpu-clock can be counted and is sampled" grep -Eq '^> cpu-clock +software +yes' "$out"
if grep -q '^cycles .* no ' "$T/list.txt"; then
	check "... cycles cannot, with the reason" grep -Eq '^  cycles +hardware +no .*not supported' "$out"
else
	check "... cycles can be counted here" grep -Eq '^  cycles +hardware +yes' "$out"
fi
"$GOTOP_PERF" --batch -n 1 --view top -e page-faults -- "$W" 20 >"$out" 2>"$err"
check "-e page-faults samples a software event" grep -q '^page-faults 1000 Hz' "$out"

# --- usage errors ---
"$GOTOP_PERF" --batch --view bogus -- "$W" 1 >"$out" 2>&1
check "unknown view: exit 2 naming it" sh -c "[ $? -eq 2 ] && grep -q \"unknown view 'bogus'\" '$out'"
"$GOTOP_PERF" bogus >"$out" 2>&1
check "unknown command: exit 2" sh -c "[ $? -eq 2 ] && grep -q \"unknown command 'bogus'\" '$out'"
"$GOTOP_PERF" -- "$W" 1 </dev/null >"$out" 2>&1
check "the UI without a terminal: exit 2, pointing at --batch" sh -c "[ $? -eq 2 ] && grep -q -- '--batch' '$out'"

# --- Go: labels, goroutines, escaping ---
GOW=$T/go
mkdir -p "$GOW"
if go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/demo.go" "$GOW/demo" >"$T/gob.err" 2>&1 && pprof_setup; then
	"$GOTOP_PERF" --batch -n 3 --rows 0 --view top,labels,goroutines --save "$T/demo.pb.gz" \
		-- "$GOW/demo" >"$out" 2>"$err"
	check "Go demo: the header shows the Go version" grep -Eq '^gotop-perf PID [0-9]+ .*demo go1\.23' "$out"
	# Every refresh's Top in its order: view-top.c sorts from the last refresh's order, by
	# insertion, or by qsort_r when that order is far off (the first refresh, --sort name).
	# top_sorted FILE self|name: rows of every iteration's Top; SELF% never rises, or names
	# (byte order, as name_cmp) never fall. Prints "ROWS BAD", then the rows out of order.
	top_sorted() {
		LC_ALL=C awk -v by="$2" '
			/^=== iteration / { it++; have = 0; next }
			/^== / { top = ($0 == "== Top =="); if (top) getline; have = 0; next }
			top && /^ +[0-9.]+%/ { n++; k = by == "self" ? $1 + 0 : $4 ""  # "" : a string, even "+0x5e000"
				if (have && (by == "self" ? k > prev : k < prev)) { bad++; out = out "\n" it ": " $0 }
				prev = k; have = 1 }
			END { printf "%d %d%s\n", n, bad, out; exit !(n >= 40 && !bad) }' "$1" >"$T/sorted.txt"
	}
	top_sorted "$out" self
	check "... every refresh's Top is sorted by self ($(head -1 "$T/sorted.txt") rows, out of order)" top_sorted "$out" self
	"$GOTOP_PERF" --batch -n 3 --rows 0 --view top --sort name -- "$GOW/demo" >"$T/byname.out" 2>"$err"
	top_sorted "$T/byname.out" name
	check "... and with --sort name, by name ($(head -1 "$T/sorted.txt") rows, out of order)" top_sorted "$T/byname.out" name
	# Started through a shell that execs it: Go is found after the exec, not latched as absent.
	"$GOTOP_PERF" --batch -n $((2 * gp_slow + 2)) --rows 0 --view labels -- /bin/sh -c "exec '$GOW/demo'" \
		>"$T/sh.out" 2>"$err"
	check "... also when a shell script execs it (header: go$GO_VERSION)" grep -Eq "^gotop-perf PID [0-9]+ .* go$GO_VERSION" "$T/sh.out"
	check "... and then Labels lists its handlers" grep -Eq '^ +[0-9.]+% +[0-9]+  search ' "$T/sh.out"
	section "$out" 3 "Labels: handler" | awk '$3 !~ /^\(no/ { print $3, $2 }' | sort >"$T/ours.txt"
	pprof -tags -sample_index=samples "$T/demo.pb.gz" 2>/dev/null | awk '
		/^ *handler: Total/ { s = 1; next } s && NF == 0 { s = 0 }
		s { v = $1; sub(/\.0$/, "", v); print $NF, v }' | sort >"$T/theirs.txt"
	check "Labels lists the demo's handlers" grep -q '^search ' "$T/ours.txt"
	if cmp -s "$T/ours.txt" "$T/theirs.txt" && [ -s "$T/ours.txt" ]; then
		ok "... with the sample counts go tool pprof -tags gives ($(tr '\n' ' ' <"$T/ours.txt"))"
	else
		not_ok "... with the sample counts go tool pprof -tags gives"
		diag_file "$T/ours.txt"
		diag "pprof:"
		diag_file "$T/theirs.txt"
	fi
	# Goroutines are grouped by start function and labels, with how many each group stands
	# for; a worker goroutine serves many requests: it is in the group of the label set it
	# spent most under.
	if grep -Eq '^ +[0-9.]+% +[0-9]+ +\+[0-9]+ +main\.worker +handler=[a-z]+ region=[a-z-]+ tenant=' "$out"; then
		ok "Goroutines shows goroutines by start function with their labels"
	else
		not_ok "Goroutines shows goroutines by start function with their labels"
		section "$out" 3 Goroutines >"$T/gor.txt"
		diag_file "$T/gor.txt"
	fi
	# Focus on one label value changes Top (pprof -tagfocus).
	"$GOTOP_PERF" --batch -n 3 --view top --sort total --tag handler=search --save "$T/search.pb.gz" \
		-- "$GOW/demo" >"$out" 2>"$err"
	check "--tag handler=search: the info line shows the focus" grep -q 'focus: handler=search' "$out"
	ours=$(section "$out" 3 Top | awk '$4 == "main.handleSearch" { sub("%", "", $2); print $2 }')
	theirs=$(pprof -top -nodecount=100000 -tagfocus=handler=search -relative_percentages "$T/search.pb.gz" 2>/dev/null |
		awk '$6 == "main.handleSearch" { sub("%", "", $5); print $5 }')
	check "... main.handleSearch's total share under the focus ($ours%) is pprof -tagfocus -relative_percentages's ($theirs%)" \
		awk -v a="$ours" -v b="$theirs" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 0.06 && d > -0.06) }'
else
	skip_n 10 "Go $GO_VERSION toolchain unavailable: $(tail -1 "$T/gob.err")"
fi

if go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/hostile.go" "$GOW/hostile" >"$T/gob.err" 2>&1; then
	# More refreshes under valgrind, where the first ones may come before any label is read.
	"$GOTOP_PERF" --batch -n $((2 * gp_slow)) --rows 0 --view top,labels,goroutines -- "$GOW/hostile" -d 10s \
		>"$out" 2>"$err"
	check "hostile labels: no escape or control byte reaches the output" \
		sh -c "! LC_ALL=C grep -q '[[:cntrl:]]' '$out'"
	if grep -q '\\x1b\|\\e' "$out"; then
		ok "... they are shown escaped"
	else
		not_ok "... they are shown escaped"
		tail -40 "$out" | LC_ALL=C tr -d '\000-\010\013-\037' >"$T/tail.txt"
		diag_file "$T/tail.txt"
	fi
	# Keys are bytes: "nul\0key" is its own key with its own value, not "nul". Rows are in
	# share order, the samples without the key ("(no ...)") among them.
	check "... a key holding a NUL byte has its own section and value (nul\\x00key: nul\\x00value\\x00)" \
		sh -c "grep -A3 '^== Labels: nul\\\\x00key ==' '$out' | grep -q '^ .*%  *[0-9][0-9]*  nul\\\\x00value\\\\x00 '"
	check "... and no right-to-left override either" sh -c "! grep -q \"\$(printf '\\342\\200\\256')\" '$out' && grep -q 'u202e\\|xe2\\\\x80\\\\xae' '$out'"
else
	skip_n 4 "Go $GO_VERSION toolchain unavailable"
fi
# A goroutine per request (labels.go -gopercall, about 1000 new goroutines a second): past
# the first 1000 goroutines, those younger than a second keep no id (agg.c). Their samples
# are the Goroutines view's row without an id, in share order, and the row says why. The
# run is long enough for a loaded machine or a sanitizer's build, which see a few hundred
# goroutines a second: past the 1000th the young ones' samples soon outnumber the rest.
if [ -n "${GOTOP_WRAP:-}" ]; then
	skip "goroutine per request: not under valgrind, for CI's time (the ASan pass runs it)"
elif go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$GOW/labels" >"$T/gob.err" 2>&1; then
	"$GOTOP_PERF" --batch -n 20 --rows 3 --view goroutines -- "$GOW/labels" -gopercall \
		-workers 2 -d 60s >"$out" 2>"$err"
	last=$(awk '/^== Goroutines ==/ { n = NR } END { print n + 2 }' "$out")
	check "goroutine per request: the Goroutines view's first row is the samples without an id, saying why" \
		sh -c "sed -n '${last}p' '$out' | grep -q '(no goroutine) .*younger than 1 s once over 1000'"
	sed -n "${last}p" "$out" | grep -q 'younger than' || diag_file "$out"
else
	skip "Go $GO_VERSION toolchain unavailable"
fi
# A label value per request (labels.go -reqid) makes a new profile entry at nearly every
# sample: the profile that grows without end the memory limit is for. Past the limit
# (anonymous memory) the live UI sheds, says so once, and keeps running. Long enough for
# a loaded machine, where fewer samples a second reach the limit later.
if [ -n "${GOTOP_WRAP:-}" ]; then
	skip "label per request: not under valgrind, for CI's time (the ASan pass runs it)"
elif go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$GOW/labels" >"$T/gob.err" 2>&1; then
	"$GOTOP_PERF" --batch -n 20 --rows 3 --view top --max-memory 1 -- "$GOW/labels" -reqid \
		-workers 2 -d 60s >"$out" 2>"$err"
	rc=$?
	line=$(grep '^cumulative' "$out" | tail -1)
	check "label per request, --max-memory 1: exit 0, the limit forgot entries ($line)" \
		sh -c "[ $rc -eq 0 ] && echo '$line' | grep -Eq '^cumulative, less [1-9][0-9]* samples the memory limit forgot'"
	grep -q 'memory limit forgot' "$out" || diag_file "$err"
else
	skip "Go $GO_VERSION toolchain unavailable"
fi
# The Verifier view in batch mode (--verify --view verify).
"$GOTOP_PERF" --batch -n 3 -d 0.7 --verify --view verify -- "$W" 300 >"$out" 2>"$err"
check "--verify --view verify: totals, raw and repaired" \
	grep -Eq '^[0-9]+ comparisons: FP stacks wrong [0-9.]+% raw, [0-9.]+% after repair' "$out"
check "... and a row per leaf function of the C workload (hot_ab)" grep -Eq '^hot_ab +[0-9]+ +[0-9.]+% +[0-9.]+%' "$out"
finish
