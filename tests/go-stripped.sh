#!/bin/sh
# go-stripped.sh: a stripped (-s -w) Go binary's top functions and stacks equal those of its
# unstripped twin (names, files and lines from .gopclntab); also for PIE. Every Go release of GO_VERSIONS.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan_per_version 4
SRC=$TOP_SRCDIR/tests/workloads/go/leafduff.go

# The program's own stacks (leaf in main.* or runtime.duffcopy) with at least 1% of the
# weight, as a sorted set of "leaf;...;root". Runtime background work (sysmon, GC) comes
# and goes between runs and is left out.
main_stacks() {
	pprof_stacks "$1" | awk '$2 ~ /^(main\.|runtime\.duffcopy;)/ { w[$2] += $1 } { t += $1 }
		END { for (s in w) if (w[s] >= 0.01 * t) print s }' | sort
}

for v in $GO_VERSIONS; do
	ok_build=1
	for variant in plain stripped pie; do
		go_build "$v" $variant "$SRC" "$T/ld-$v-$variant" >"$T/build.err" 2>&1 || ok_build=0
	done
	if [ $ok_build -eq 0 ]; then
		skip_n 4 "Go $v unavailable or build failed: $(head -1 "$T/build.err")"
		continue
	fi
	for variant in plain stripped pie; do
		"$GOTOP_PERF" record -q -d 2 -o "$T/$variant.pb.gz" -- "$T/ld-$v-$variant" -d 3s >"$T/out" 2>&1
		pprof_flat "$T/$variant.pb.gz" | awk '$1 ~ /^(main\.|runtime\.duff)/ && $2 >= 1 { print $1 }' | sort >"$T/$variant.top"
		main_stacks "$T/$variant.pb.gz" >"$T/$variant.stacks"
		pprof -traces -lines "$T/$variant.pb.gz" 2>/dev/null | grep -o 'main\.leaf [^ ]*leafduff.go:[0-9]*' | sort -u >"$T/$variant.lines"
	done
	diag "go$v top: $(tr '\n' ' ' <"$T/plain.top")| stripped: $(tr '\n' ' ' <"$T/stripped.top")"
	check "go$v: stripped has the same top functions as plain" cmp -s "$T/plain.top" "$T/stripped.top"
	check "go$v: stripped has the same main stacks as plain" cmp -s "$T/plain.stacks" "$T/stripped.stacks"
	check "go$v: stripped keeps file:line of main.leaf ($(head -1 "$T/stripped.lines"))" \
		sh -c "[ -s '$T/stripped.lines' ] && cmp -s '$T/plain.lines' '$T/stripped.lines'"
	check "go$v: PIE has the same top functions and stacks as plain" \
		sh -c "cmp -s '$T/plain.top' '$T/pie.top' && cmp -s '$T/plain.stacks' '$T/pie.stacks'"
	cmp -s "$T/plain.stacks" "$T/stripped.stacks" || { diff "$T/plain.stacks" "$T/stripped.stacks" | head -10 | sed 's/^/#   /'; }
done
finish
