#!/bin/sh
# go-repair.sh: the program from Go issue 73753 (seed 000): with repair, >= 99% of samples in
# main.leaf and main.duff have main.work as their parent; with --no-repair the chains are
# broken as the kernel's frame-pointer walk (and perf) gives them. Every Go release of GO_VERSIONS.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan_per_version 7
SRC=$TOP_SRCDIR/tests/workloads/go/leafduff.go

for v in $GO_VERSIONS; do
	bin=$T/leafduff-$v
	go_build_or_skip 7 "$v" plain "$SRC" "$bin" || continue
	"$GOTOP_PERF" record -v -d 3 -o "$T/rep-$v.pb.gz" -- "$bin" -d 4s >"$T/rep-$v.out" 2>&1
	# The stack copy is chosen by the release: Go 1.21 pushes BP first (repair_stack_bytes).
	want=1024
	[ "${v#1.}" -ge 21 ] && want=256
	got=$(sed -n 's/.*bytes (stacks of \([0-9]*\)).*/\1/p' "$T/rep-$v.out")
	check "go$v: record copies $want stack bytes per sample, the default for its release (${got:-none})" \
		[ "$got" = "$want" ]
	"$GOTOP_PERF" record -q --no-repair -d 3 -o "$T/raw-$v.pb.gz" -- "$bin" -d 4s >>"$T/out" 2>&1
	pprof_stacks "$T/rep-$v.pb.gz" >"$T/rep-$v.st"
	pprof_stacks "$T/raw-$v.pb.gz" >"$T/raw-$v.st"
	set -- $(parent_share "$T/rep-$v.st" main.leaf main.work)
	leaf=$1 leafn=$2
	set -- $(parent_share "$T/rep-$v.st" main.duff main.work)
	duff=$1 duffn=$2
	set -- $(parent_share "$T/raw-$v.st" main.leaf main.work)
	rawleaf=$1
	set -- $(parent_share "$T/raw-$v.st" main.duff main.work)
	rawduff=$1
	diag "go$v repaired: leaf->work $leaf% of ${leafn}ns, duff->work $duff% of ${duffn}ns; raw: leaf $rawleaf%, duff $rawduff%"
	check "go$v: main.leaf has samples (>= 20 ms)" [ "$leafn" -ge 20000000 ]
	check "go$v: repaired, main.leaf's parent is main.work in >= 99% ($leaf%)" \
		awk -v p="$leaf" 'BEGIN { exit !(p >= 99) }'
	check "go$v: repaired, main.duff's parent is main.work in >= 99% ($duff%)" \
		awk -v p="$duff" 'BEGIN { exit !(p >= 99) }'
	check "go$v: --no-repair, main.leaf skips main.work as the kernel walk does ($rawleaf% right)" \
		awk -v p="$rawleaf" 'BEGIN { exit !(p <= 10) }'
	# The raw chains are what perf itself records: compare with perf record -g.
	if command -v perf >/dev/null 2>&1 &&
	   perf record -q -g -e cpu-clock -F 1000 -o "$T/perf.data" -- "$bin" -d 2s >/dev/null 2>&1; then
		perf script -i "$T/perf.data" -F ip,sym 2>/dev/null | awk '
			/^$/ { if (n) { leaf = f[1]; if (leaf == "main.leaf") { t++; if (f[2] == "main.work") g++ } } n = 0; next }
			{ f[++n] = $2 }
			END { printf "%.2f\n", t ? 100 * g / t : 0 }' >"$T/perf-$v.share"
		pshare=$(cat "$T/perf-$v.share")
		check "go$v: perf -g agrees that main.leaf's parent is lost (perf $pshare%, ours raw $rawleaf%)" \
			awk -v a="$pshare" -v b="$rawleaf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 10) }'
	else
		skip "perf is not installed or cannot record here"
	fi
	# Duplicate frames (duff <- duff) are gone after repair.
	dups=$(awk '{ n = split($2, f, ";"); for (i = 1; i < n; i++) if (f[i] == f[i + 1] && f[i] ~ /^main\./) { print; break } }' "$T/rep-$v.st" | wc -l)
	check "go$v: no duplicate main.* frames after repair ($dups stacks have one)" [ "$dups" -eq 0 ]
done
finish
