#!/bin/sh
# record-cleaf.sh: stack repair for C code from the CFI (.eh_frame through libdw): in a
# frameless leaf the kernel's frame-pointer chain skips the caller; gotop-perf puts it back.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
plan 4
W=$TOP_BUILDDIR/tests/workloads/cleaf
# Confirm the premise: leaf really has no frame pointer setup (no push %rbp).
if objdump -d --no-show-raw-insn "$W" 2>/dev/null | awk '/<leaf>:/ { s = 1; next } s && /^$/ { exit } s' | grep -q 'push *%rbp'; then
	skip_all "the compiler kept a frame pointer in leaf"
fi
"$GOTOP_PERF" record -q -d 2 -o "$T/rep.pb.gz" -- "$W" 3 >"$T/out" 2>&1
check "record exits 0" [ $? -eq 0 ]
"$GOTOP_PERF" record -q --no-repair -d 2 -o "$T/raw.pb.gz" -- "$W" 3 >>"$T/out" 2>&1
share() {
	pprof_stacks "$1" | awk '{ n = split($2, f, ";"); i = 1
		while (i <= n && f[i] != "leaf") i++
		if (i > n) next
		t += $1; if (f[i + 1] == "mid" && f[i + 2] == "top") g += $1 }
		END { printf "%.2f %d\n", t ? 100 * g / t : 0, t }'
}
set -- $(share "$T/rep.pb.gz")
rep=$1 n=$2
set -- $(share "$T/raw.pb.gz")
raw=$1
diag "leaf <- mid <- top: repaired $rep% of ${n}ns, raw $raw%"
check "leaf has samples" [ "$n" -gt 100000000 ]
check "repaired: leaf's parent is mid (then top) in >= 99% ($rep%)" awk -v p="$rep" 'BEGIN { exit !(p >= 99) }'
check "--no-repair: the kernel chain skips mid in most samples ($raw% right)" awk -v p="$raw" 'BEGIN { exit !(p <= 20) }'
finish
