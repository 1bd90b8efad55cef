#!/bin/sh
# go-start.sh: the Goroutines view groups goroutines by start function. The workload
# (tests/workloads/go/gostart.go) starts two goroutines per request with `go handle(i, &wg)`
# (a go statement with arguments: Go runs a wrapper, F.gowrapN from Go 1.22, which its own
# traceback leaves out) and three long-lived `go worker(k)`. Checks, on the last refresh of
# --batch: the top row is main.handle, standing for at least half of and at most the
# goroutines the workload says it started (each spins 15 ms at 1000 Hz: nearly all are
# sampled); its share is Top's total share of main.handle within 2 points; and the start
# function of every goroutine alive at the end that both name (the workers) is the one in
# Go's own goroutine dump (the last frame before "created by"), read from the saved profile's
# goroutine_fn and goroutine labels with go tool pprof -raw. For each Go release of
# GO_VERSIONS, plain builds; then once with --no-bpf, where the reader takes g.startpc from
# its own read of the g after the sample (the same goroutine: same g, goid and stack).
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan_per_version 4 1
SRC=$TOP_SRCDIR/tests/workloads/go/gostart.go

for v in $GO_VERSIONS; do
	bin=$T/gostart-$v
	go_build_or_skip 4 "$v" plain "$SRC" "$bin" || continue
	rm -f "$T/info" "$T/dump"
	"$GOTOP_PERF" --batch -n 8 --rows 0 --view top,goroutines --sort total \
		--save "$T/p-$v.pb.gz" -- "$bin" -d 4s -info "$T/info" -dump "$T/dump" \
		>"$T/out" 2>"$T/err"
	rc=$?
	started=$(cat "$T/info" 2>/dev/null)
	# The last refresh's sections.
	awk '/^=== iteration/ { n = NR } { l[NR] = $0 } END { for (i = n; i <= NR; i++) print l[i] }' \
		"$T/out" >"$T/last"
	top=$(awk '/^== Goroutines ==/ { s = 1; getline; getline; print; exit }' "$T/last")
	set -- $top
	gshare=${1%\%}
	count=${3#[+-]}
	gfn=$4
	tshare=$(awk '/^== Top ==/ { s = 1; next } /^== / { s = 0 }
		s && $4 == "main.handle" { sub("%", "", $2); print $2; exit }' "$T/last")
	if [ $rc -eq 0 ] && [ "$gfn" = main.handle ]; then
		ok "go$v: the Goroutines view's top row is main.handle ($top)"
	else
		not_ok "go$v: the Goroutines view's top row is main.handle (exit $rc: $top)"
		diag_file "$T/err"
		sed -n '/^== Goroutines ==/,$p' "$T/last" >"$T/g.txt"
		diag_file "$T/g.txt"
	fi
	check "go$v: it stands for $count goroutines of the $started the workload started (at least half, at most all)" \
		sh -c "[ -n '$started' ] && [ '$count' -ge \$(($started / 2)) ] 2>/dev/null && [ '$count' -le '$started' ]"
	check "go$v: its share ($gshare%) is Top's total share of main.handle ($tshare%) within 2 points" \
		awk -v a="$gshare" -v b="$tshare" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d < 2 && d > -2) }'

	# Go's dump: goroutine id -> the last function before "created by".
	awk '/^goroutine [0-9]+ / { id = $2; last = ""; next }
		/^created by / { if (last != "") print id, last; next }
		/^[^\t]/ && NF { f = $0; sub(/\(.*$/, "", f); last = f }' "$T/dump" | LC_ALL=C sort >"$T/theirs"
	pprof -raw "$T/p-$v.pb.gz" 2>/dev/null | awk '
		/goroutine_fn:\[/ { f = $0; sub(/.*goroutine_fn:\[/, "", f); sub(/\].*/, "", f); next }
		/goroutine:\[/ && f != "" { g = $0; sub(/.*goroutine:\[/, "", g); sub(/\].*/, "", g);
			print g, f }
		{ f = "" }' | LC_ALL=C sort -u >"$T/ours"
	LC_ALL=C join "$T/theirs" "$T/ours" >"$T/both"
	n=$(wc -l <"$T/both")
	bad=$(awk '$2 != $3' "$T/both" | wc -l)
	if [ "$n" -ge 3 ] && [ "$bad" -eq 0 ]; then
		ok "go$v: the start functions of $n goroutines alive at the end are Go's dump's ($(awk '{ print $3 }' "$T/both" | sort -u | tr '\n' ' '))"
	else
		not_ok "go$v: the start functions of goroutines alive at the end are Go's dump's ($n compared, $bad differ)"
		diag_file "$T/both"
		diag_file "$T/theirs"
	fi
	last=$bin
	lastv=$v
done

if [ -z "${last:-}" ]; then
	skip "--no-bpf: no Go toolchain"
else
	rm -f "$T/info"
	"$GOTOP_PERF" --batch -n 8 --rows 0 --no-bpf --view goroutines -- "$last" -d 4s \
		-info "$T/info" >"$T/out" 2>"$T/err"
	started=$(cat "$T/info" 2>/dev/null)
	top=$(awk '/^=== iteration/ { n = NR } { l[NR] = $0 } END { for (i = n; i <= NR; i++) print l[i] }' \
		"$T/out" | awk '/^== Goroutines ==/ { getline; getline; print; exit }')
	set -- $top
	count=${3#[+-]}
	check "go$lastv --no-bpf: the top row is main.handle, $count goroutines of the $started started" \
		sh -c "[ '$4' = main.handle ] && [ -n '$started' ] && [ '$count' -ge \$(($started / 2)) ] 2>/dev/null && [ '$count' -le '$started' ]"
fi
finish
