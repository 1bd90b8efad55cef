#!/bin/sh
# view.sh: `gotop-perf view` on Go's own profiles (CPU, heap with its four sample types,
# goroutine, mutex, block, several merged), each Top checked against go tool pprof -top on
# the same file; folded stacks re-read and checked against go tool pprof -traces; corrupt
# and hostile files get one line.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_pprof
plan 19
v=$GO_VERSION
bin=$T/profiles
go_build "$v" plain "$TOP_SRCDIR/tests/workloads/go/profiles.go" "$bin" >"$T/build.err" 2>&1
rc=$?
[ $rc -eq 77 ] && skip_all "Go $v unavailable"
[ $rc -ne 0 ] && { diag_file "$T/build.err"; skip_all "cannot build the Go workload"; }
mkdir -p "$T/a" "$T/b"
"$bin" -d 2s "$T/a" && "$bin" -d 1s -grow 4 "$T/b" || skip_all "the workload did not write its profiles"

# section FILE VIEW: the rows of one view (after its title line).
section() {
	awk -v v="== $2 ==" '
		$0 == v { s = 1; getline; next }
		s && (/^== / || /^$/) { s = 0 }
		s { print }' "$1"
}

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
# total"), DELTA the change.
lbin=$T/labels
if go_build "$v" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$lbin" >"$T/lbuild.err" 2>&1 &&
	"$lbin" -d 1s -cpuprofile "$T/la.pprof" && "$lbin" -d 1s -cpuprofile "$T/lb.pprof"; then
	tagpct() { pprof -top -tagfocus="handler=$2" "$1" 2>/dev/null |
		sed -n 's/^Showing nodes accounting for [^,]*, \([0-9.]*\)% of .*/\1/p'; }
	"$GOTOP_PERF" view --batch --view labels --base "$T/la.pprof" "$T/lb.pprof" >"$T/lbase.out" 2>&1
	section "$T/lbase.out" "Labels: handler" >"$T/lbase.rows"
	worst=0
	for h in alpha beta gamma; do
		a=$(tagpct "$T/la.pprof" $h)
		b=$(tagpct "$T/lb.pprof" $h)
		worst=$(awk -v h=$h -v a="${a:-x}" -v b="${b:-x}" -v w=$worst '$5 == h { t = $3; sub("%", "", t)
			d1 = t - a; d2 = $4 - (b - a); if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2
			m = d1 > d2 ? d1 : d2; f = 1 } END { if (!f || a == "x") m = 99; print (m > w ? m : w) }' "$T/lbase.rows")
	done
	check "Labels with --base: each handler's share then and its change equal go tool pprof -tagfocus's (worst $worst points)" \
		awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }'
	awk -v w="$worst" 'BEGIN { exit !(w <= 0.2) }' || diag_file "$T/lbase.out"
else
	skip "cannot build or run the labels workload"
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

# A corrupt file and a hostile name: one line, exit 1, no control character on the terminal.
head -c 300 "$T/a/cpu.pprof" >"$T/cut.pprof"
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
