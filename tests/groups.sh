#!/bin/sh
# groups.sh: event groups, in perf's two forms. {a,b} (each event samples on its own, its
# samples with their own stacks): on tests/workloads/evmix with phases shorter than a
# sampling period, the page-faults member's samples are in touch_pages, as perf record
# puts them; its total against getrusage(2); the views' member and share columns against
# go tool pprof; on a Go workload its samples carry their goroutine's labels.
# {a,b,c}:S (the leader samples, the members are read at each of its samples and their
# counts since the previous one go to the sample's stack): the members' totals against
# getrusage(2), their split by go tool pprof -sample_index on evmix's long phases, the
# views' member and ratio columns (also per pprof label) against go tool pprof; bad groups.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan 30
W=$TOP_BUILDDIR/tests/workloads/evmix

# col_total COLUMN [OPTIONS...]: the sum of a value column (1 samples, 2 the leader's, 3
# and 4 the members') of go tool pprof -raw on $P (lib.sh's pprof_total reads two-value
# profiles).
col_total() {
	ct=$1
	shift
	pprof -raw "$@" "$P" 2>/dev/null | awk -v col="$ct" '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 0 }
		s && /^ *[0-9]+( +[0-9]+)+:/ { sub(":", "", $col); t += $col }
		END { printf "%.0f\n", t }'
}
# share FUNC COLUMN [OPTIONS...]: FUNC's total (on the stack) over the whole, in percent.
share() {
	sf=$1 sc=$2
	shift 2
	awk -v a="$(col_total "$sc" -focus="^$sf\$" "$@")" -v b="$(col_total "$sc" "$@")" \
		'BEGIN { if (b > 0) printf "%.1f\n", 100 * a / b; else print 0 }'
}
# perf_share DATA FUNC: FUNC's share of the group member's samples in perf report --group
# (the second overhead column), from its own samples' instruction pointers.
perf_share() {
	perf report -i "$1" --group --stdio --sort sym 2>/dev/null |
		awk -v f="$2" '$1 ~ /%$/ && $2 ~ /%$/ && $NF == f { sub("%", "", $2); print $2; exit }'
}

# === {a,b}: every event samples ===
# evmix's phases scaled to 0.4, 0.2 and 0.4 ms: shorter than a sampling period at 1 kHz,
# so that a count read at the leader's next sample would mostly land in another phase.
P=$T/own.pb.gz
"$GOTOP_PERF" record -q -e '{cpu-clock,page-faults}' -o "$P" -- "$W" 3 "$T/own.stats" 0.01 \
	>"$T/out" 2>&1
rc=$?
check "record -e '{cpu-clock,page-faults}' exits 0 (got $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || diag_file "$T/out"
pprof -raw "$P" >"$T/raw" 2>"$T/raw.err"
check "the profile has a sample type per event (samples, cpu, page-faults)" \
	grep -q '^samples/count cpu/nanoseconds\[dflt\] page-faults/count$' "$T/raw"
own_pf=$(share touch_pages 3)
own_cpu=$(share touch_pages 2)
own_spin_pf=$(share spin_user 3)
own_spin_cpu=$(share spin_user 2)
# The oracle: perf record on the same workload puts each of the member's samples where it
# was taken.
perf_pf=""
if perf record -q -e '{cpu-clock,page-faults}' -o "$T/perf.data" -- "$W" 3 - 0.01 \
	>"$T/perf.out" 2>&1; then
	perf_pf=$(perf_share "$T/perf.data" touch_pages)
fi
diag "{cpu-clock,page-faults}, short phases: touch_pages ${own_pf}% of page faults (perf record: ${perf_pf:-?}%), ${own_cpu}% of cpu; spin_user ${own_spin_pf}% of page faults, ${own_spin_cpu}% of cpu"
check "touch_pages holds at least 95% of the page-faults samples (${own_pf}%)" \
	awk -v s="$own_pf" 'BEGIN { exit !(s >= 95) }'
if [ -n "$perf_pf" ]; then
	check "... as perf record --group puts them: ${perf_pf}%, within 3 points" \
		awk -v a="$own_pf" -v b="$perf_pf" 'BEGIN { exit !(b >= 95 && a - b <= 3 && b - a <= 3) }'
else
	skip "perf record failed: $(head -1 "$T/perf.out")"
fi
check "spin_user: a large share of cpu-clock (${own_spin_cpu}%) and almost no page faults (${own_spin_pf}%)" \
	awk -v c="$own_spin_cpu" -v f="$own_spin_pf" 'BEGIN { exit !(c >= 15 && f <= 2) }'
# The member's total: its samples' periods, against what the kernel counted (getrusage).
# A period is the kernel's estimate at a sampling rate it keeps adjusting (-F), and page
# faults after the last sample are in none: a few percent either way.
pf=$(col_total 3)
minflt=$(awk '$1 == "minflt" { print $2 }' "$T/own.stats" 2>/dev/null)
check "the page-faults samples' periods sum to 90-103% of the process's page faults ($pf of ${minflt:-?})" \
	awk -v a="$pf" -v b="${minflt:-0}" 'BEGIN { exit !(b > 1000 && a >= 0.9 * b && a <= 1.03 * b) }'
# The same short phases with :S: the counts go where the leader's next sample falls, which
# is what the workload is built to show (and why {a,b} is the form for "where").
P=$T/read.pb.gz
"$GOTOP_PERF" record -q -e '{cpu-clock,page-faults}:S' -o "$P" -- "$W" 3 - 0.01 >"$T/out" 2>&1
read_pf=$(share touch_pages 3)
read_spin=$(share spin_user 3)
diag "{cpu-clock,page-faults}:S, short phases: touch_pages ${read_pf}%, spin_user ${read_spin}% of page faults"
check "the short phases tell the forms apart: with :S spin_user, which takes none, gets 10% or more (${read_spin}%)" \
	awk -v s="$read_spin" 'BEGIN { exit !(s >= 10) }'

# The views: a column per member and its share of the member (perf report --group's
# side-by-side overheads), against go tool pprof on the profile --save writes.
P=$T/ownb.pb.gz
"$GOTOP_PERF" --batch -n 3 -d 1 --rows 0 --min-pct 0 --view top,threads --save "$P" \
	-e '{cpu-clock,page-faults}' -- "$W" 6 - 0.01 >"$T/batch" 2>"$T/batch.err"
rc=$?
awk '/^gotop-perf PID/ { n++ } n == 3' "$T/batch" >"$T/last"
row=$(awk '$0 ~ /^== Top ==/ { s = 1 } s && $6 == "touch_pages" { print; exit }' "$T/last")
set -- $row
diag "batch Top row: $row"
want_pf=$(col_total 3 -focus='^touch_pages$')
all_pf=$(col_total 3)
want_pct=$(awk -v a="$want_pf" -v b="$all_pf" 'BEGIN { if (b > 0) printf "%.1f%%\n", 100 * a / b }')
check "Top: faults and faults% columns (batch exit $rc)" \
	grep -Eq '^ +SELF% +TOTAL% +SAMPLES +faults +faults% FUNCTION' "$T/last"
check "... touch_pages's faults are pprof's -sample_index=page-faults total of it, faults% its share ($4 = $want_pf, $5 = $want_pct)" \
	sh -c "[ '$4' = '$want_pf' ] && [ '$5' = '$want_pct' ] && [ '$want_pf' -gt 0 ]"
"$GOTOP_PERF" --batch -n 1 --ratio page-faults/cpu-clock -e '{cpu-clock,page-faults}' -- "$W" 1 \
	>"$T/out" 2>&1
rc=$?
check "--ratio with a group whose members sample: one line pointing at :S, exit 2 (got $rc)" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -q '{a,b}:S' '$T/out'"

# === {a,b,c}:S: the leader samples and reads the others ===
P=$T/g.pb.gz
G='{cpu-clock,page-faults,context-switches}:S'

# Until the target exits, so that its own counts (written at its end) cover the profile's.
"$GOTOP_PERF" record -q -e "$G" -o "$P" -- "$W" 3 "$T/stats" >"$T/out" 2>&1
rc=$?
if [ $rc -eq 5 ] && grep -q 'EINVAL' "$T/out"; then
	skip_n 20 "this kernel refuses groups read at each sample of inherited events: $(head -1 "$T/out")"
	finish
fi
check "record -e '$G' exits 0 (got $rc)" [ $rc -eq 0 ]
[ $rc -eq 0 ] || diag_file "$T/out"
pprof -raw "$P" >"$T/raw" 2>"$T/raw.err"
check "the profile has a sample type per member (samples, cpu, page-faults, context-switches)" \
	grep -q '^samples/count cpu/nanoseconds\[dflt\] page-faults/count context-switches/count$' "$T/raw"
pprof -top -sample_index=page-faults "$P" >"$T/top" 2>"$T/top.err"
rc=$?
check "go tool pprof -sample_index=page-faults reads it without a warning" \
	sh -c "[ $rc -eq 0 ] && [ ! -s '$T/top.err' ] && grep -q 'Type: page-faults' '$T/top'"

# Totals: the members' sums against what the kernel counted for the process (getrusage).
# Counts after the last sample are not in any sample: a few ms of 3 s.
pf=$(col_total 3)
cs=$(col_total 4)
minflt=$(awk '$1 == "minflt" { print $2 }' "$T/stats" 2>/dev/null)
csw=$(awk '$1 == "csw" { print $2 }' "$T/stats" 2>/dev/null)
diag "page-faults member $pf, getrusage minflt $minflt; context-switches member $cs, getrusage $csw"
check "the page-faults member sums to 90-101% of the process's page faults ($pf of ${minflt:-?})" \
	awk -v a="$pf" -v b="${minflt:-0}" 'BEGIN { exit !(b > 1000 && a >= 0.9 * b && a <= 1.01 * b) }'
check "the context-switches member sums to 50-115% of the process's switches ($cs of ${csw:-?})" \
	awk -v a="$cs" -v b="${csw:-0}" 'BEGIN { exit !(b > 0 && a >= 0.5 * b && a <= 1.15 * b) }'

# The split: a share is the focused function's total (on the stack) over the whole.
tp_pf=$(share touch_pages 3)
tp_cpu=$(share touch_pages 2)
sp_pf=$(share spin_user 3)
sp_cpu=$(share spin_user 2)
diag "touch_pages: ${tp_pf}% of page faults, ${tp_cpu}% of cpu; spin_user: ${sp_pf}% of page faults, ${sp_cpu}% of cpu"
check "touch_pages holds at least 90% of the page-faults member (${tp_pf}%)" \
	awk -v s="$tp_pf" 'BEGIN { exit !(s >= 90) }'
check "... and its known share of cpu-clock, 40% (25-55%: ${tp_cpu}%)" \
	awk -v s="$tp_cpu" 'BEGIN { exit !(s >= 25 && s <= 55) }'
check "spin_user: a large share of cpu-clock (${sp_cpu}%) and almost no page faults (${sp_pf}%)" \
	awk -v c="$sp_cpu" -v f="$sp_pf" 'BEGIN { exit !(c >= 20 && f <= 5) }'

# The views: a column per member and its ratio to the event (per ms of CPU for cpu-clock;
# --ratio picks cs/faults), checked against go tool pprof on the profile --save writes (the
# data of the last update).
B=$T/b.pb.gz
"$GOTOP_PERF" --batch -n 3 -d 1 --rows 0 --min-pct 0 --view top,tree,threads --save "$B" \
	--ratio context-switches/page-faults -e "$G" -- "$W" 6 >"$T/batch" 2>"$T/batch.err"
rc=$?
# The last update's rows (the file holds three).
awk '/^gotop-perf PID/ { n++ } n == 3' "$T/batch" >"$T/last"
P=$B
row=$(awk '$0 ~ /^== Top ==/ { s = 1 } s && $8 == "touch_pages" { print; exit }' "$T/last")
set -- $row
diag "batch Top row: $row"
want_pf=$(col_total 3 -focus='^touch_pages$')
want_cpu=$(col_total 2 -focus='^touch_pages$')
want_ratio=$(awk -v f="$want_pf" -v c="$want_cpu" 'BEGIN { if (c > 0) printf "%.3g\n", f / (c / 1e6) }')
want_cs=$(col_total 4 -focus='^touch_pages$')
want_csr=$(awk -v f="$want_pf" -v c="$want_cs" 'BEGIN { if (f > 0) printf "%.3g\n", c / f }')
check "Top: faults, faults/ms, cs and (--ratio) cs/faults columns (batch exit $rc)" \
	grep -Eq '^ +SELF% +TOTAL% +SAMPLES +faults +faults/ms +cs +cs/faults FUNCTION' "$T/last"
check "... touch_pages's faults are pprof's total of it, its faults/ms page faults per ms of its CPU, cs/faults its switches per fault ($4 = $want_pf, $5 = $want_ratio, $7 = $want_csr)" \
	sh -c "[ '$4' = '$want_pf' ] && [ '$5' = '$want_ratio' ] && [ '$7' = '$want_csr' ] && [ '$want_pf' -gt 0 ]"
# Tree: the touch_pages nodes (nearly always one, under mix_round; a stack cut short on a
# loaded machine adds another) hold what pprof counts with it on the stack. It calls
# nothing that calls it back, so the nodes do not nest and their sum is its total.
tree_pf=$(awk '/^== Tree ==/ { s = 1; next } /^== / { s = 0 } s && $NF == "touch_pages" { t += $4; n++ }
	END { printf "%d %d\n", t, n }' "$T/last")
set -- $tree_pf
check "Tree: touch_pages's nodes have its faults ($1 in $2 nodes = $want_pf)" [ "$1" = "$want_pf" ]
[ "$1" = "$want_pf" ] || awk '/^== Tree ==/ { s = 1 } /^== Threads/ { s = 0 } s' "$T/last" | diag_file /dev/stdin
all_pf=$(col_total 3)
trow=$(awk '/^== Threads ==/ { s = 1; getline; getline; print; exit }' "$T/last")
set -- $trow
check "Threads: the thread's faults are the profile's ($3 = $all_pf)" [ "$3" = "$all_pf" ]
P=$T/g.pb.gz

# Per goroutine label, on a Go service: tests/workloads/go/pagefaults.go's handler=touch
# takes the page faults, handler=spin the CPU (40 ms of thread CPU each, in turns). The
# Labels view's faults and faults/ms against go tool pprof -tagfocus on the --save file;
# without :S, the page-faults samples' own labels.
GOW=$T/go
if go_build_or_skip 5 "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/pagefaults.go" "$GOW/pagefaults"; then
	P=$T/lo.pb.gz
	"$GOTOP_PERF" record -q -e '{cpu-clock,page-faults}' -o "$P" -- "$GOW/pagefaults" -d 3s \
		>"$T/out" 2>&1
	rc=$?
	t_pf=$(col_total 3 -tagfocus=handler=touch)
	all_pf=$(col_total 3)
	diag "{cpu-clock,page-faults}: handler=touch $t_pf of $all_pf page faults (record exit $rc)"
	check "{cpu-clock,page-faults}: the page-faults samples of handler=touch are at least 95% ($t_pf of $all_pf)" \
		awk -v a="${t_pf:-0}" -v b="${all_pf:-0}" 'BEGIN { exit !(b > 1000 && a >= 0.95 * b) }'
	t_cpu=$(col_total 2 -tagfocus=handler=spin)
	all_cpu=$(col_total 2)
	check "... and the cpu-clock samples keep theirs: handler=spin has 25-75% of cpu ($t_cpu of $all_cpu)" \
		awk -v a="${t_cpu:-0}" -v b="${all_cpu:-0}" 'BEGIN { exit !(b > 0 && a >= 0.25 * b && a <= 0.75 * b) }'
	P=$T/l.pb.gz
	"$GOTOP_PERF" --batch -n 3 -d 1 --rows 0 --view labels --save "$P" \
		-e '{cpu-clock,page-faults}:S' -- "$GOW/pagefaults" -d 6s >"$T/batch" 2>"$T/batch.err"
	rc=$?
	awk '/^gotop-perf PID/ { n++ } n == 3' "$T/batch" >"$T/last"
	row() { awk -v h="$1" '/^== Labels: handler ==/ { s = 1 } s && $5 == h { print; exit }' "$T/last"; }
	set -- $(row touch)
	t_pf=$3 t_ratio=$4
	set -- $(row spin)
	s_pf=$3
	want_pf=$(col_total 3 -tagfocus=handler=touch)
	want_cpu=$(col_total 2 -tagfocus=handler=touch)
	want_ratio=$(awk -v f="$want_pf" -v c="$want_cpu" 'BEGIN { if (c > 0) printf "%.3g\n", f / (c / 1e6) }')
	all_pf=$(col_total 3)
	diag "handler=touch: $t_pf faults ($t_ratio/ms), handler=spin: $s_pf faults, of $all_pf"
	check "Labels: handler=touch's faults and faults/ms are pprof's -tagfocus ($t_pf = $want_pf, $t_ratio = $want_ratio; exit $rc)" \
		sh -c "[ '$t_pf' = '$want_pf' ] && [ '$t_ratio' = '$want_ratio' ] && [ '${want_pf:-0}' -gt 0 ]"
	check "... handler=touch holds at least 90% of the page faults ($t_pf of $all_pf)" \
		awk -v a="${t_pf:-0}" -v b="${all_pf:-0}" 'BEGIN { exit !(b > 0 && a >= 0.9 * b) }'
	check "... handler=spin at most 5% ($s_pf of $all_pf)" \
		awk -v a="${s_pf:-0}" -v b="${all_pf:-0}" 'BEGIN { exit !(b > 0 && a <= 0.05 * b) }'
	P=$T/g.pb.gz
fi

# Hardware: {cycles,instructions}:S and its IPC column, where a PMU counts them.
if "$GOTOP_PERF" list | grep -q '^cycles .* yes '; then
	"$GOTOP_PERF" --batch -n 2 -d 1 --rows 3 --view top -e '{cycles,instructions}:S' -- "$W" 3 \
		>"$T/hw" 2>&1
	check "{cycles,instructions}:S: Top has an instructions and an IPC column" \
		grep -Eq '^ +SELF% +TOTAL% +SAMPLES +instructions +IPC FUNCTION' "$T/hw"
else
	skip "no hardware PMU here: {cycles,instructions} cannot be sampled (its encoding: events.sh)"
fi

# Bad groups: one line each, usage errors.
"$GOTOP_PERF" record -e '{cpu-clock,cs,page-faults,task-clock}' -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
rc=$?
check "a group of four: one line, exit 2 (got $rc)" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -q 'at most 3' '$T/out'"
"$GOTOP_PERF" record -e '{cpu-clock,cpu-clock}' -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
rc=$?
check "an event twice in a group: one line, exit 2 (got $rc)" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -q 'twice' '$T/out'"
finish
