#!/bin/sh
# view.sh: `gotop-perf view --batch` on fixed input, every view of the table: a profile
# with known shares (tests/views/cpu.txtpb, encoded with protoc-c against pprof's own
# profile.proto) checked against those shares, and Annotate on a sample placed at an
# instruction of the C chains workload (objdump and addr2line say where); a view of the
# table without a check here fails. Then Go's own profiles (CPU, heap with its four sample
# types, goroutine, mutex, block, several merged), each Top checked against go tool pprof
# -top on the same file, and folded stacks re-read and checked against go tool pprof
# -traces; corrupt and hostile files get one line.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

plan 39

# section FILE VIEW: the rows of one view (after its title line).
section() {
	awk -v v="== $2 ==" '
		$0 == v { s = 1; getline; next }
		s && (/^== / || /^$/) { s = 0 }
		s { print }' "$1"
}

# view NAME [OPTIONS]: the view NAME of the fixed profile, every row, as text in $T/NAME.out
# (its section's rows in $T/NAME.rows).
view() {
	vn=$1
	shift
	"$GOTOP_PERF" view --batch --rows 0 --min-pct 0 --view "$vn" "$@" "$F" >"$T/$vn.out" 2>&1
	section "$T/$vn.out" "$(sed -n 's/^== \(.*\) ==$/\1/p' "$T/$vn.out" | head -1)" >"$T/$vn.rows"
}

# has FILE AWK-CONDITION: some line of FILE meets the condition.
has() { awk "$2 { f = 1 } END { exit !f }" "$1"; }

# --- every view of the table on the fixed profile (tests/views/cpu.txtpb: 60, 30 and 10 ---
# --- samples of main.leafA, main.leafB and main.main, labels and ids on the first two) ---

check_view_top() {
	view top
	check "top: self and total of every function as placed (leafA 60/60, leafB 30/30, main 10/100, work 0/90)" \
		sh -c "awk '{ print \$4, \$1, \$2 }' '$T/top.rows' | sort | tr '\n' ' ' |
			grep -qx 'main.leafA 60.0% 60.0% main.leafB 30.0% 30.0% main.main 10.0% 100.0% main.work 0.0% 90.0% '"
	check "... by self, the hottest first, with its file and line" sh -c "head -1 '$T/top.rows' | grep -q ' main.leafA  *main.go:31$'"
}
check_view_tree() {
	view tree
	check "tree: main.main 100% > main.work 90% > main.leafA 60%, main.leafB 30%, each deeper than its caller" awk '
		{ n = $0; sub(/^ +[0-9.]+% +[0-9.]+% +[0-9]+ /, "", n); match(n, /[^ ]/); d[$NF] = RSTART; t[$NF] = $1 }
		END { exit !(t["main.main"] == "100.0%" && t["main.work"] == "90.0%" && t["main.leafA"] == "60.0%" &&
			t["main.leafB"] == "30.0%" && d["main.work"] > d["main.main"] && d["main.leafA"] > d["main.work"] &&
			d["main.leafB"] == d["main.leafA"]) }' "$T/tree.rows"
}
check_view_callers() {
	view callers
	check "callers: of the hottest function, main.leafA: main.work, then main.main, all 60 samples" sh -c "
		grep -q 'CALLERS OF main.leafA' '$T/callers.out' &&
		awk '{ print \$NF, \$(NF - 2) }' '$T/callers.rows' | tr '\n' ' ' | grep -qx 'main.leafA 60 main.work 60 main.main 60 '"
	view callers --callers main.work
	check "... --callers main.work: its 90 samples, called by main.main" sh -c "
		awk '{ print \$NF, \$(NF - 2) }' '$T/callers.rows' | tr '\n' ' ' | grep -qx 'main.work 90 main.main 90 '"
}
check_view_labels() {
	view labels
	check "labels: handler api 60%, db 30%, the samples without one 10%" sh -c "
		grep -q '^== Labels: handler ==' '$T/labels.out' &&
		awk '{ print \$1, \$2, \$3, \$4 }' '$T/labels.rows' | tr '\n' ' ' |
			grep -qx '60.0% 60 api main.leafA 30.0% 30 db main.leafB 10.0% 10 (no handler) '"
}
check_view_goroutines() {
	view goroutines
	check "goroutines: a group per start function and labels (main.worker, handler=api 60%, =db 30%), 10% without one" \
		has "$T/goroutines.rows" '$1 == "60.0%" && $3 == "+1" && $4 == "main.worker" && $5 == "handler=api" && $6 == "main.leafA" { n++ }
			$1 == "30.0%" && $3 == "+1" && $4 == "main.worker" && $5 == "handler=db" && $6 == "main.leafB" { n++ }
			$1 == "10.0%" && /[(]no goroutine[)]/ { n++ } n == 3'
}
check_view_goroutines_all() {
	view goroutines-all
	check "goroutines-all: a file has no process to read goroutines from, and says so" grep -q '^  (no target process)$' "$T/goroutines-all.rows"
}
check_view_goroutines_wall() {
	view goroutines-wall
	check "goroutines-wall: a file has no wall-clock sampler, and says so" grep -q '^  (no wall-clock sampler)$' "$T/goroutines-wall.rows"
}
check_view_threads() {
	view threads
	check "threads: 101 60%, 102 30%, 10% without a thread label (nothing said about memory: a file)" sh -c "
		awk '{ print \$1, \$3, \$4 }' '$T/threads.rows' | tr '\n' ' ' |
			grep -qx '60.0% 101 main.leafA 30.0% 102 main.leafB 10.0% (no thread) ' &&
		! grep -q 'combinations' '$T/threads.rows'"
}
check_view_flame() {
	view flame
	# A box of a level is a bracketed run as wide as its share of the 200 columns.
	check "flame: main.main the whole width, main.work 90%, main.leafA 60% before main.leafB 30% (within a column)" awk '
		function abs(v) { return v < 0 ? -v : v }
		function box(s, name,   i) { i = index(s, "[" name " "); if (!i) return -1; return index(substr(s, i), "]") }
		{ l[NR] = $0 }
		END { a = box(l[2], "main.main"); w = box(l[3], "main.work"); x = box(l[4], "main.leafA"); y = box(l[4], "main.leafB")
			exit !(a >= 190 && abs(w - 0.9 * a) <= 1 && abs(x - 0.6 * a) <= 1 && abs(y - 0.3 * a) <= 1 &&
				index(l[4], "[main.leafA") < index(l[4], "[main.leafB")) }' "$T/flame.rows"
}
check_view_events() {
	view events
	check "events: cpu-clock, a software event, can be counted here" has "$T/events.rows" '$1 == "cpu-clock" && $2 == "software" && $3 == "yes"'
}
check_view_verify() {
	view verify
	check "verify: off without a target, and says what V would do" grep -q '^  (The verifier is off\. V starts it' "$T/verify.rows"
}
check_view_help() {
	view help
	check "help: the keys 1 to 7 show Top, Tree, Callers, Labels, Goroutines, Threads and Flame" sh -c "
		awk '\$1 ~ /^[1-7]\$/ { printf \"%s %s \", \$1, \$2 }' '$T/help.rows' |
			grep -qx '1 Top: 2 Tree: 3 Callers: 4 Labels: 5 Goroutines: 6 Threads: 7 Flame: '"
}
check_view_annotate() {
	bin=$TOP_BUILDDIR/tests/workloads/cchains
	# A sample at hot_ab's third instruction, in a mapping where the address in the process
	# is the link-time one: objdump names the instruction, addr2line its line.
	addr=$(objdump -d --no-show-raw-insn --disassemble=hot_ab "$bin" 2>/dev/null |
		awk '/^ *[0-9a-f]+:/ { if (++n == 3) { sub(":", "", $1); print $1; exit } }')
	seg=$(readelf -lW "$bin" 2>/dev/null | awk '$1 == "LOAD" && / R E / { print $2, $3, $6; exit }')
	bid=$(readelf -n "$bin" 2>/dev/null | awk '/Build ID:/ { print $3 }')
	line=$(addr2line -e "$bin" "0x$addr" 2>/dev/null | sed 's/.*://; s/ .*//')
	if [ -z "$addr" ] || [ -z "$seg" ] || [ -z "$line" ]; then
		skip_n 2 "annotate: no cchains workload, objdump, readelf or addr2line ($bin)"
		return
	fi
	set -- $seg
	start=$(($1 & ~0xfff)) off=$(($2 & ~0xfff))
	cat >"$T/annot.txtpb" <<-EOF
		sample_type { type: 1 unit: 2 }
		sample { location_id: [1] value: [50] }
		mapping { id: 1 memory_start: $start memory_limit: $(($2 + $3 + 0x1000)) file_offset: $off filename: 3 build_id: 4 }
		location { id: 1 mapping_id: 1 address: 0x$addr line { function_id: 1 } }
		function { id: 1 name: 5 system_name: 5 }
		string_table: ""
		string_table: "samples"
		string_table: "count"
		string_table: "$bin"
		string_table: "$bid"
		string_table: "hot_ab"
	EOF
	encode "$T/annot.txtpb" "$T/annot.pb"
	"$GOTOP_PERF" view --batch --rows 0 --view annotate --asm "$T/annot.pb" >"$T/annot-asm.out" 2>&1
	check "annotate --asm: the instruction at 0x$addr (objdump's third of hot_ab) holds the 50 samples" \
		has "$T/annot-asm.out" '$1 == ">100.0%" && $2 == "100.0%" && $3 == 50 && $4 == "'"$addr"'"'
	"$GOTOP_PERF" view --batch --rows 0 --view annotate "$T/annot.pb" >"$T/annot.out" 2>&1
	check "annotate: so does its source line, $line (addr2line)" \
		has "$T/annot.out" '$1 == ">100.0%" && $3 == 50 && ($4 == "'"$line"'" || $5 == "'"$line"'")'
}

F=$T/cpu.pb
if ! encode "$TOP_SRCDIR/tests/views/cpu.txtpb" "$F"; then
	diag_file "$T/encode.err"
	skip_n 17 "cannot encode the fixed profile ($PROTOC_C, $PPROF_PROTO)"
else
	# The views of the table, as --view's error lists them.
	"$GOTOP_PERF" view --batch --view '?' "$F" >/dev/null 2>"$T/names"
	names=$(sed -n "s/.*unknown view '?' (\(.*\))$/\1/p" "$T/names" | tr -d ',')
	missing=
	for n in $names; do
		command -v "check_view_$(echo "$n" | tr - _)" >/dev/null || missing="$missing $n"
	done
	check "every view of the table has a check here ($(echo $names | wc -w) views${missing:+; missing:$missing})" \
		[ -n "$names" -a -z "$missing" ]
	for n in top tree callers labels goroutines goroutines-all goroutines-wall threads flame events verify \
		help annotate; do
		"check_view_$(echo "$n" | tr - _)"
	done
fi

# A corrupt file and a hostile name: one line, exit 1, no control character on the terminal.
head -c 300 "$F" >"$T/cut.pprof"
"$GOTOP_PERF" view --batch "$T/cut.pprof" >"$T/bad.out" 2>"$T/bad.err"
rc=$?
check "a truncated profile: exit 1 and one line ($(head -1 "$T/bad.err"))" \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/bad.err') -eq 1 ] && [ ! -s '$T/bad.out' ]"
evil=$(printf '%s/x\033]0;owned\007.pprof' "$T")
printf 'not a profile' >"$evil"
"$GOTOP_PERF" view --batch "$evil" >"$T/evil.out" 2>"$T/evil.err"
rc=$?
check "a hostile file name: exit 1, one line, no control character" \
	sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$T/evil.err') -eq 1 ] && ! LC_ALL=C grep -q '[[:cntrl:]]' '$T/evil.err'"

# --- Go's own profiles, against go tool pprof ---
if ! pprof_setup; then
	skip_n 17 "no Go toolchain for go tool pprof: $(cat "$T/go-toolchain.err")"
	finish
fi
v=$GO_VERSION
bin=$T/profiles
go_build "$v" plain "$TOP_SRCDIR/tests/workloads/go/profiles.go" "$bin" >"$T/build.err" 2>&1
rc=$?
if [ $rc -ne 0 ] || ! { mkdir -p "$T/a" "$T/b" && "$bin" -d 2s "$T/a" && "$bin" -d 1s -grow 4 "$T/b"; }; then
	[ $rc -ne 0 ] && [ $rc -ne 77 ] && diag_file "$T/build.err"
	skip_n 17 "Go $v: cannot build or run the profiles workload"
	finish
fi

# topcmp NAME OPTS -- FILES: Top's SELF% and TOTAL% of every function against pprof's
# flat% and cum%; prints the worst difference in points, and how many functions were
# compared (at least one with a share of 5% or more, else -1).
topcmp() {
	name=$1
	shift
	opts=
	while [ "$1" != -- ]; do opts="$opts $1"; shift; done
	shift
	# shellcheck disable=SC2086
	"$GOTOP_PERF" view --batch --view top --rows 0 $opts "$@" >"$T/$name.out" 2>"$T/$name.err"
	section "$T/$name.out" Top | awk '{ s = $1; t = $2; sub("%", "", s); sub("%", "", t); print $4, s, t }' |
		sort >"$T/$name.ours"
	pio=$(echo "$opts" | sed -n 's/.*--sample-index \([a-z_]*\).*/-sample_index=\1/p')
	# shellcheck disable=SC2086
	pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 $pio "$@" 2>/dev/null | awk '
		/^ *flat +flat%/ { s = 1; next }
		s && NF >= 6 { f = $2; c = $5; sub("%", "", f); sub("%", "", c); print $6, f, c }' |
		sort >"$T/$name.pprof"
	join "$T/$name.ours" "$T/$name.pprof" | awk '
		{ n++; d = $2 - $4; if (d < 0) d = -d; e = $3 - $5; if (e < 0) e = -e
		  if (d > m) m = d; if (e > m) m = e; if ($4 >= 5) big = 1 }
		END { printf "%.2f %d\n", m + 0, big ? n : -1 }'
}

# within LINE: the worst difference is at most 0.1 points over at least 3 functions.
within() { awk -v w="${1% *}" -v n="${1#* }" 'BEGIN { exit !(w <= 0.1 && n >= 3) }'; }

r=$(topcmp cpu -- "$T/a/cpu.pprof")
check "CPU profile: Top's self and total shares equal go tool pprof -top's within 0.1 points (worst, functions: $r)" within "$r"
check "... main.burnA and main.burnB are there" sh -c "grep -q '^main.burnA ' '$T/cpu.ours' && grep -q '^main.burnB ' '$T/cpu.ours'"
for t in alloc_objects alloc_space inuse_objects inuse_space; do
	r=$(topcmp "heap-$t" --sample-index "$t" -- "$T/a/heap.pprof")
	check "heap profile, $t: Top equals go tool pprof -top -sample_index=$t within 0.1 points ($r)" within "$r"
done
check "... the header names the sample type and that there are four" \
	grep -q '^inuse_space (bytes)  total [0-9]*  4 sample types' "$T/heap-inuse_space.out"
r=$(topcmp merged -- "$T/a/cpu.pprof" "$T/b/cpu.pprof")
check "two CPU profiles merged: Top equals go tool pprof -top of both ($r)" within "$r"
for k in goroutine mutex block; do
	r=$(topcmp "$k" -- "$T/a/$k.pprof")
	check "$k profile: Top equals go tool pprof -top within 0.1 points ($r)" \
		awk -v w="${r% *}" -v n="${r#* }" 'BEGIN { exit !(w <= 0.1 && n >= 1) }'
done

# A baseline (--base): the heap of a run whose main.keepB keeps 16 blocks against one that
# keeps 80. Top's THEN% is pprof's flat% in the base file, DELTA the difference of the two.
pct() { pprof -top -nodecount=100000 -sample_index=inuse_space "$1" 2>/dev/null |
	awk -v f="$2" '$6 == f { p = $2; sub("%", "", p); print p }'; }
"$GOTOP_PERF" view --batch --view top,tree,flame --rows 0 --sample-index inuse_space \
	--base "$T/a/heap.pprof" "$T/b/heap.pprof" >"$T/base.out" 2>"$T/base.err"
section "$T/base.out" Top >"$T/base.top"
for f in main.keepA main.keepB; do
	then=$(pct "$T/a/heap.pprof" "$f")
	now=$(pct "$T/b/heap.pprof" "$f")
	got=$(awk -v f="$f" '$6 == f { t = $3; sub("%", "", t); print t, $4 }' "$T/base.top")
	check "--base: $f's share then and its change equal go tool pprof's on both files ($got; pprof: $then then, $now now)" \
		awk -v g="$got" -v a="$then" -v b="$now" 'BEGIN { split(g, x, " ")
			d1 = x[1] - a; d2 = x[2] - (b - a); if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
			exit !(g != "" && a != "" && d1 <= 0.1 && d2 <= 0.2) }'
done
known_change() {
	awk '$6 == "main.keepB" { exit !($4 + 0 > 20) }' "$T/base.top" &&
		section "$T/base.out" Tree | awk '$NF == "main.keepB" { ok = $4 + 0 > 20 } END { exit !ok }' &&
		grep -q 'baseline: .*a/heap.pprof' "$T/base.out"
}
check "... the known change: main.keepB up by more than 20 points in Top and Tree, the baseline named" known_change

# Labels with a baseline: two runs of the labels workload, Go's own CPU profiles with pprof
# labels. THEN% of each handler is its share in the base (go tool pprof -tagfocus's "% of
# total"; none when the focus matches no sample), DELTA the change. A handler seen in one
# profile only (a short run may give gamma's tenth none) is "new", or gone: 0% now.
lbin=$T/labels
if go_build "$v" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$lbin" >"$T/lbuild.err" 2>&1 &&
	"$lbin" -d 1s -cpuprofile "$T/la.pprof" && "$lbin" -d 1s -cpuprofile "$T/lb.pprof"; then
	tagpct() { pprof -top -nodefraction=0 -nodecount=1000000 -tagfocus="handler=$2" "$1" 2>&1 | sed -n \
		-e 's/^Showing nodes accounting for [^,]*, \([0-9.]*\)% of .*/\1/p' \
		-e 's/.*TagFocus expression matched no samples.*/0/p'; }
	# The worst difference from pprof of the handler rows in the section on stdin (99: a
	# handler or pprof's figure missing).
	worst_of() {
		w=0
		for h in alpha beta gamma; do
			a=$(tagpct "$1" $h)
			b=$(tagpct "$2" $h)
			w=$(awk -v h=$h -v a="${a:-x}" -v b="${b:-x}" -v w="$w" '
				{ s = $1; sub("%", "", s) }
				$3 == "new" && $4 == h { t = 0; d = s; f = 1 }
				$3 != "new" && $5 == h { t = $3; sub("%", "", t); d = $4; f = 1 }
				END { m = 99
					if (f && a != "x" && b != "x") {
						d1 = t - a; d2 = d - (b - a); if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
						m = d1 > d2 ? d1 : d2 }
					print (m > w ? m : w) }' "$3")
		done
		echo "$w"
	}
	"$GOTOP_PERF" view --batch --view labels --base "$T/la.pprof" "$T/lb.pprof" >"$T/lbase.out" 2>&1
	section "$T/lbase.out" "Labels: handler" >"$T/lbase.rows"
	worst=$(worst_of "$T/la.pprof" "$T/lb.pprof" "$T/lbase.rows")
	check "Labels with --base: each handler's share then and its change equal go tool pprof -tagfocus's (worst $worst points)" \
		awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }'
	awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }' || diag_file "$T/lbase.out"
	# gamma gone: the second profile is the first without it (pprof -tagignore writes it).
	if pprof -proto -tagignore=handler=gamma "$T/la.pprof" >"$T/lnog.pprof" 2>/dev/null; then
		"$GOTOP_PERF" view --batch --view labels --base "$T/la.pprof" "$T/lnog.pprof" >"$T/lgone.out" 2>&1
		section "$T/lgone.out" "Labels: handler" >"$T/lgone.rows"
		worst=$(worst_of "$T/la.pprof" "$T/lnog.pprof" "$T/lgone.rows")
		gone_row() {
			awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }' &&
				awk '$1 == "0.0%" && $2 == 0 && $4 < 0 && $5 == "gamma" && $6 == "main.gammaWork" { f = 1 }
					END { exit !f }' "$T/lgone.rows"
		}
		check "... a handler gone: its row, 0% now, its share then and its change as pprof's (worst $worst points)" \
			gone_row
		gone_row || diag_file "$T/lgone.out"
		"$GOTOP_PERF" view --batch --view labels --base "$T/lnog.pprof" "$T/la.pprof" >"$T/lnew.out" 2>&1
		section "$T/lnew.out" "Labels: handler" >"$T/lnew.rows"
		worst=$(worst_of "$T/lnog.pprof" "$T/la.pprof" "$T/lnew.rows")
		check "... and the other way, a new handler: \"new\", its share as pprof's (worst $worst points)" \
			awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }'
		# The samples without a handler gone: a base with the profiles workload's (no
		# labels at all) against the labelled samples alone (pprof -tagfocus writes both).
		if pprof -proto "$T/la.pprof" "$T/a/cpu.pprof" >"$T/lrest.pprof" 2>/dev/null &&
			pprof -proto -tagfocus='handler=.*' "$T/la.pprof" >"$T/lonly.pprof" 2>/dev/null; then
			then=$(pprof -top -nodefraction=0 -nodecount=1000000 -tagignore='handler=.*' "$T/lrest.pprof" 2>/dev/null |
				sed -n 's/^Showing nodes accounting for [^,]*, \([0-9.]*\)% of .*/\1/p')
			"$GOTOP_PERF" view --batch --view labels --base "$T/lrest.pprof" "$T/lonly.pprof" >"$T/lrest.out" 2>&1
			got=$(section "$T/lrest.out" "Labels: handler" | awk '$5 == "(no" && $6 == "handler)" { print $1, $2, $3, $4 }')
			check "... so are the samples without a handler: (no handler) 0% now, then and its change as pprof's ($got; pprof: ${then:-none})" \
				awk -v g="$got" -v a="${then:-x}" 'BEGIN { split(g, x, " "); t = x[3]; sub("%", "", t)
					d1 = t - a; d2 = x[4] + a; if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
					exit !(a != "x" && a > 1 && x[1] == "0.0%" && x[2] == 0 && d1 <= 0.1 && d2 <= 0.1) }'
		else
			skip "go tool pprof -proto could not merge the profiles"
		fi
	else
		skip_n 3 "go tool pprof -proto -tagignore failed"
	fi
else
	skip_n 4 "cannot build or run the labels workload"
fi

# Folded stacks of the shown sample type: re-read, each stack's total equals the sum of
# go tool pprof -traces' stacks of the same functions (root first).
"$GOTOP_PERF" view --batch --view top --save "$T/cpu.folded" "$T/a/cpu.pprof" >/dev/null 2>"$T/fold.err"
rc=$?
check "view --save FILE.folded exits 0" [ $rc -eq 0 ]
awk '{ n = $NF; $NF = ""; sub(/ $/, ""); gsub(/ [^;]*/, ""); t[$0] += n } END { for (s in t) printf "%s %.0f\n", s, t[s] }' "$T/cpu.folded" |
	sort >"$T/fold.ours"
pprof_stacks "$T/a/cpu.pprof" | awk '{ n = split($2, f, ";"); s = f[n]; for (i = n - 1; i >= 1; i--) s = s ";" f[i]
	t[s] += $1 } END { for (s in t) printf "%s %.0f\n", s, t[s] }' | sort >"$T/fold.pprof"
check "... every stack's value equals go tool pprof -traces' ($(wc -l <"$T/fold.pprof") stacks)" \
	sh -c "[ -s '$T/fold.pprof' ] && cmp -s '$T/fold.ours' '$T/fold.pprof'"
cmp -s "$T/fold.ours" "$T/fold.pprof" || diff "$T/fold.ours" "$T/fold.pprof" | diag_file /dev/stdin

finish
