#!/bin/sh
# annotate.sh: the Annotate view through --batch (--view annotate --annotate FUNC [--asm]) on
# workloads whose hot line is known (tests/workloads/hotloop.c, tests/workloads/go/hotline.go):
# the hot line and the loop's instructions hold the function's self samples, the lines sum to
# the function's self samples in Top of the same iteration, inlined code shows under the line
# that inlined it, and per line flat and cum equal go tool pprof -list (per instruction,
# -disasm) on the pprof file saved from the same data. Then what goes wrong: source missing, binary replaced, code bytes corrupt.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan_per_version 6 12
W=$TOP_BUILDDIR/tests/workloads/hotloop
GSRC=$TOP_SRCDIR/tests/workloads/go/hotline.go

# section FILE ITERATION VIEW: the rows of one view of one iteration (after its title line).
section() {
	awk -v it="=== iteration $2 ===" -v v="== $3 ==" '
		$0 == it { i = 1; next }
		/^=== iteration / { i = 0 }
		i && $0 == v { s = 1; getline; next }
		i && s && (/^== / || /^$/) { s = 0 }
		i && s { print }' "$1"
}
# HEX: an awk function (mawk has no strtonum).
HEX='function hex(x, i, r) { r = 0; x = tolower(x); for (i = 1; i <= length(x); i++) r = r * 16 + index("0123456789abcdef", substr(x, i, 1)) - 1; return r }'
# last FILE: the number of the last iteration printed.
last() { sed -n 's/^=== iteration \([0-9]*\) ===$/\1/p' "$1" | tail -1; }

# src_rows FILE: source rows (--ascii) as "L line self% total% samples" for the function's
# own lines and "I func file:line self% total% samples" for inlined code.
src_rows() {
	sed 's/^>/ /' "$1" | awk '$1 ~ /%$/ && $2 ~ /%$/ {
		s = $1; t = $2; sub("%", "", s); sub("%", "", t)
		if ($4 == "->") print "I", $5, $6, s, t, $3
		else if ($4 == "-" || $4 == "+") print "L", $5, s, t, $3
		else print "L", $4, s, t, $3 }'
}
# insn_rows FILE: instruction rows (--asm) as "address samples".
insn_rows() {
	sed 's/^>/ /' "$1" | awk '$1 ~ /%$/ && $2 ~ /%$/ && $4 ~ /^[0-9a-f]+$/ { print $4, $3 }'
}
# top_samples FILE FUNC: the SAMPLES column of FUNC in a Top section.
top_samples() { awk -v f="$2" '$4 == f { print $3; n = 1 } END { if (!n) print 0 }' "$1"; }
# marker FILE TEXT: the line of FILE holding the comment marker TEXT.
marker() { grep -n -F "$2" "$1" | head -1 | cut -d: -f1; }

# hot_ok ROWS LINE TOPSAMPLES: the line holds >= 90% of the self samples of the rows, which
# sum to the function's self samples in Top (and there are some).
hot_ok() {
	awk -v l="$2" -v top="$3" '$1 == "L" { s += $5; if ($2 == l) h += $5 }
		$1 == "I" { s += $6 }
		END { printf "line %d: %d of %d self samples, Top %d\n", l, h, s, top
		      exit !(s > 0 && s == top && h >= 0.9 * s) }' "$1"
}

# list_ok PB FUNC ROWS: every own line's samples equal pprof -list's flat (samples) and its
# total% equals cum/Total within rounding; pprof shows at least the hot line.
list_ok() {
	pprof -sample_index=samples -list "^$2\$" "$1" 2>"$T/list.err" | awk '
		/^Total: / { tot = $2 }
		/^ +[.0-9]+ +[.0-9]+ +[0-9]+:/ { f = $1; c = $2; sub(":.*", "", $3)
			print "P", $3, (f == "." ? 0 : f), (c == "." ? 0 : c), tot }' >"$T/list.txt"
	awk 'function abs(x) { return x < 0 ? -x : x }
		$1 == "P" { f[$2] = $3; c[$2] = $4; tot = $5; np++; next }
		$1 == "L" && $2 > 0 { n++
			if (!($2 in f)) { if ($5 != 0 || $4 != 0) { print "line", $2, "not in pprof"; bad = 1 }; next }
			if ($5 != f[$2] || abs($4 - 100 * c[$2] / tot) > 0.06) {
				print "line", $2, "ours", $5, $4 "%", "pprof", f[$2], 100 * c[$2] / tot "%"; bad = 1 } }
		END { printf "%d lines, pprof %d\n", n, np; exit bad || !np || !n }' \
		"$T/list.txt" "$3" >"$T/listcmp.txt"
}

# --- C: the hot loop ---
"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view top,annotate --annotate hl_loop \
	--save "$T/c.pb.gz" -- "$W" 60 >"$T/c.out" 2>"$T/c.err"
rc=$?
check "C: batch --view annotate exits 0" [ $rc -eq 0 ]
it=$(last "$T/c.out")
section "$T/c.out" "$it" Annotate >"$T/c.ann"
section "$T/c.out" "$it" Top >"$T/c.top"
src_rows "$T/c.ann" >"$T/c.rows"
hot=$(marker "$TOP_SRCDIR/tests/workloads/hotloop.c" "/* HOT LOOP */")
if hot_ok "$T/c.rows" "$hot" "$(top_samples "$T/c.top" hl_loop)" >"$T/c.hot"; then
	ok "C: the loop's line holds >= 90% of hl_loop's self samples, lines sum to Top's ($(cat "$T/c.hot"))"
else
	not_ok "C: the loop's line holds >= 90% of hl_loop's self samples, lines sum to Top's ($(cat "$T/c.hot"))"
	diag_file "$T/c.ann"
fi
if pprof_setup; then
	if list_ok "$T/c.pb.gz" hl_loop "$T/c.rows"; then
		ok "C: lines equal go tool pprof -list on the saved file ($(tail -1 "$T/listcmp.txt"))"
	else
		not_ok "C: lines equal go tool pprof -list on the saved file"
		diag_file "$T/listcmp.txt"
		diag_file "$T/list.err"
	fi
else
	skip "no Go toolchain for go tool pprof"
fi

# Assembly: the loop is from the target of its backward jump to that jump (objdump's view).
"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view top,annotate --annotate hl_loop --asm \
	-- "$W" 60 >"$T/a.out" 2>"$T/a.err"
it=$(last "$T/a.out")
section "$T/a.out" "$it" Annotate >"$T/a.ann"
section "$T/a.out" "$it" Top >"$T/a.top"
insn_rows "$T/a.ann" >"$T/a.rows"
objdump -d --no-show-raw-insn --disassemble=hl_loop "$W" | awk "$HEX"'
	/^ +[0-9a-f]+:\tj[a-z]+ +[0-9a-f]+ </ { a = $1; sub(":", "", a); if (hex($3) < hex(a)) print $3, a }' \
	>"$T/loop.txt" 2>/dev/null
if [ -s "$T/loop.txt" ]; then
	read -r lo hi <"$T/loop.txt"
	top=$(top_samples "$T/a.top" hl_loop)
	res=$(awk -v lo="$lo" -v hi="$hi" -v top="$top" "$HEX"'
		{ a = hex($1); s += $2; if (a >= hex(lo) && a <= hex(hi)) h += $2 }
		END { printf "%d of %d in %s-%s, Top %d", h, s, lo, hi, top; exit !(s > 0 && s == top && h >= 0.9 * s) }' \
		"$T/a.rows")
	if [ $? -eq 0 ]; then
		ok "C: the loop's instructions hold >= 90% of hl_loop's self samples ($res)"
	else
		not_ok "C: the loop's instructions hold >= 90% of hl_loop's self samples ($res)"
		diag_file "$T/a.ann"
	fi
else
	not_ok "C: objdump finds hl_loop's backward jump"
fi
check "C: assembly mode names the source line between groups" \
	grep -Eq "^ +hotloop\.c:$hot +for \(uint64_t i" "$T/a.ann"

# Inlined: hl_mix's body under hl_inline's line that inlined it, with all of hl_mix's samples.
"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view top,annotate --annotate hl_inline \
	-- "$W" 60 >"$T/i.out" 2>"$T/i.err"
it=$(last "$T/i.out")
section "$T/i.out" "$it" Annotate >"$T/i.ann"
section "$T/i.out" "$it" Top >"$T/i.top"
src_rows "$T/i.ann" >"$T/i.rows"
site=$(marker "$TOP_SRCDIR/tests/workloads/hotloop.c" "/* INLINE SITE */")
body=$(marker "$TOP_SRCDIR/tests/workloads/hotloop.c" "/* INLINED BODY */")
mix=$(top_samples "$T/i.top" hl_mix)
check "C: hl_mix's line $body shows under hl_inline's line $site with Top's $mix samples of hl_mix" \
	awk -v site="$site" -v body="hotloop.c:$body" -v mix="$mix" '
		$1 == "L" { prev = $2 }
		$1 == "I" && $2 == "hl_mix" && $3 == body && prev == site && $6 == mix && mix > 0 { ok = 1 }
		END { exit !ok }' "$T/i.rows"

# --- Go: every release, plain and stripped ---
# (pprof_setup once: it loops over a variable of its own name, v.)
if pprof_setup; then have_pprof=true; else have_pprof=false; fi
for gv in $GO_VERSIONS; do
	if ! go_build_or_skip 6 "$gv" plain "$GSRC" "$T/hl-$gv" ||
		! go_build_or_skip 6 "$gv" stripped "$GSRC" "$T/hl-$gv-s"; then
		continue
	fi
	if [ "$have_pprof" != true ]; then
		skip_n 6 "no Go toolchain for go tool pprof"
		continue
	fi
	ghot=$(marker "$GSRC" "// HOT LOOP")
	for variant in plain stripped; do
		bin=$T/hl-$gv
		[ $variant = stripped ] && bin=$T/hl-$gv-s
		"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view top,annotate --annotate main.hotLoop \
			--save "$T/g.pb.gz" -- "$bin" -d 60s >"$T/g.out" 2>"$T/g.err"
		it=$(last "$T/g.out")
		section "$T/g.out" "$it" Annotate >"$T/g.ann"
		section "$T/g.out" "$it" Top >"$T/g.top"
		src_rows "$T/g.ann" >"$T/g.rows"
		if hot_ok "$T/g.rows" "$ghot" "$(top_samples "$T/g.top" main.hotLoop)" >"$T/g.hot"; then
			ok "go$gv $variant: the hot line holds >= 90% of main.hotLoop's self samples ($(cat "$T/g.hot"))"
		else
			not_ok "go$gv $variant: the hot line holds >= 90% of main.hotLoop's self samples ($(cat "$T/g.hot"))"
			diag_file "$T/g.ann"
		fi
		if list_ok "$T/g.pb.gz" main.hotLoop "$T/g.rows"; then
			ok "go$gv $variant: lines equal go tool pprof -list ($(tail -1 "$T/listcmp.txt"))"
		else
			not_ok "go$gv $variant: lines equal go tool pprof -list"
			diag_file "$T/listcmp.txt"
			diag_file "$T/list.err"
		fi
	done
	# Assembly: each instruction's samples equal go tool pprof -disasm's flat (it reads the
	# saved file's addresses and mapping, and disassembles the binary it names).
	"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view annotate --annotate main.hotLoop --asm \
		--save "$T/gd.pb.gz" -- "$T/hl-$gv" -d 60s >"$T/gd.out" 2>"$T/gd.err"
	it=$(last "$T/gd.out")
	section "$T/gd.out" "$it" Annotate >"$T/gd.ann"
	insn_rows "$T/gd.ann" >"$T/gd.rows"
	# (-disasm matches the regexp against objdump's symbols: no anchors.)
	pprof -sample_index=samples -disasm 'main\.hotLoop' "$T/gd.pb.gz" 2>"$T/dis.err" |
		awk '/^ +[.0-9]+ +[.0-9]+ +[0-9a-f]+: / { a = $3; sub(":", "", a); print a, ($1 == "." ? 0 : $1) }' \
		>"$T/gd.pprof"
	if awk 'FILENAME == ARGV[1] { p[$1] = $2; np++; ps += $2; next } { o[$1] = $2; os += $2 }
		END { for (a in p) if (p[a] != o[a] + 0) { print "0x" a, "pprof", p[a], "ours", o[a] + 0; bad = 1 }
		      printf "%d instructions, %d samples\n", np, ps; exit bad || !np || ps != os || !ps }' \
		"$T/gd.pprof" "$T/gd.rows" >"$T/discmp.txt"; then
		ok "go$gv plain: per instruction samples equal go tool pprof -disasm ($(tail -1 "$T/discmp.txt"))"
	else
		not_ok "go$gv plain: per instruction samples equal go tool pprof -disasm"
		diag_file "$T/discmp.txt"
		diag_file "$T/dis.err"
		diag_file "$T/gd.ann"
	fi
	# Inlined main.mix under main.inlined's call line, equal to pprof -list's cum there.
	"$GOTOP_PERF" --batch --ascii -n 3 --rows 0 --view top,annotate --annotate main.inlined \
		--save "$T/gi.pb.gz" -- "$T/hl-$gv-s" -d 60s >"$T/gi.out" 2>"$T/gi.err"
	it=$(last "$T/gi.out")
	section "$T/gi.out" "$it" Annotate >"$T/gi.ann"
	section "$T/gi.out" "$it" Top >"$T/gi.top"
	src_rows "$T/gi.ann" >"$T/gi.rows"
	gsite=$(marker "$GSRC" "// INLINE SITE")
	gbody=$(marker "$GSRC" "// INLINED BODY")
	mix=$(top_samples "$T/gi.top" main.mix)
	if awk -v site="$gsite" -v body="hotline.go:$gbody" -v mix="$mix" '
		$1 == "L" { prev = $2 }
		$1 == "I" && $2 == "main.mix" && $3 == body && prev == site && $6 == mix && mix > 0 { ok = 1 }
		END { exit !ok }' "$T/gi.rows" && list_ok "$T/gi.pb.gz" main.inlined "$T/gi.rows"; then
		ok "go$gv stripped: main.mix's line under main.inlined's line $gsite, $mix samples as Top; lines equal pprof -list"
	else
		not_ok "go$gv stripped: main.mix's line under main.inlined's line $gsite, as Top and pprof -list"
		diag_file "$T/gi.ann"
		diag_file "$T/listcmp.txt"
	fi
done

# --- what goes wrong ---
# Source missing: the binary records a file that is gone. One line says so; the instructions
# follow under file:line. --source-path finds a copy elsewhere.
if go_build_or_skip 3 "$GO_VERSION" plain "$GSRC" "$T/ms-bin.tmp"; then
	mkdir -p "$T/gone" "$T/elsewhere"
	cp "$GSRC" "$T/gone/hotline.go"
	cp "$GSRC" "$T/elsewhere/hotline.go"
	go_build "$GO_VERSION" plain "$T/gone/hotline.go" "$T/ms-bin" >"$T/build.err" 2>&1
	rm -rf "$T/gone"
	"$GOTOP_PERF" --batch --ascii -n 2 --rows 0 --view annotate --annotate main.hotLoop \
		-- "$T/ms-bin" -d 60s >"$T/ms.out" 2>"$T/ms.err"
	rc=$?
	check "missing source: exit 0 and one line says the source was not found" \
		sh -c "[ $rc -eq 0 ] && [ \$(grep -c 'source not found: .*gone/hotline.go' '$T/ms.out') -eq 2 ]"
	check "... and the instructions follow under hotline.go:$(marker "$GSRC" "// HOT LOOP")" \
		sh -c "grep -Eq '^ +hotline\.go:$(marker "$GSRC" "// HOT LOOP") *$' '$T/ms.out' &&
			grep -Eq '^[> ] +[0-9.]+% +[0-9.]+% +[0-9]+ +[0-9a-f]+ ' '$T/ms.out'"
	"$GOTOP_PERF" --batch --ascii -n 1 --rows 0 --view annotate --annotate main.hotLoop \
		--source-path "$T/elsewhere" -- "$T/ms-bin" -d 60s >"$T/sp.out" 2>"$T/sp.err"
	check "... --source-path DIR finds it there" \
		sh -c "grep -q '// HOT LOOP' '$T/sp.out' && ! grep -q 'source not found' '$T/sp.out'"
fi

# A binary replaced on disk after it ran: the workload renames another program over itself as
# it exits, and runs hl_loop only just before, so the view opens the file only at the update
# after the exit (-d 30: there is no other); its build id is not the mapping's.
mkdir -p "$T/rb"
cp "$W" "$T/rb/hl"
cp "$TOP_BUILDDIR/tests/workloads/cchains" "$T/rb/other"
"$GOTOP_PERF" --batch --ascii -n 2 -d 30 --rows 0 --view annotate --annotate hl_loop \
	-- "$T/rb/hl" 2 "$T/rb/other" >"$T/rb.out" 2>"$T/rb.err"
rc=$?
check "replaced binary: exit 0 and one line says the file on disk is not the binary that ran" \
	sh -c "[ $rc -eq 0 ] && grep -q 'rb/hl on disk is not the binary that ran (build id [0-9a-f]*, on disk [0-9a-f]*)' '$T/rb.out'"

# Corrupt code bytes: the same binary (same build id) with hl_loop's bytes overwritten by 0xff.
cp "$W" "$T/rb/hl"
cp "$W" "$T/rb/bad"
off=$(objdump -F -d --disassemble=hl_loop "$W" | sed -n 's/.*File Offset: 0x\([0-9a-f]*\).*/\1/p' | head -1)
size=$(nm -S "$W" | awk "$HEX"' $4 == "hl_loop" { print hex($2) }')
head -c "$size" /dev/zero | tr '\000' '\377' |
	dd of="$T/rb/bad" bs=1 seek=$((0x$off)) conv=notrunc 2>/dev/null
"$GOTOP_PERF" --batch --ascii -n 2 -d 30 --rows 0 --view annotate --annotate hl_loop --asm \
	-- "$T/rb/hl" 2 "$T/rb/bad" >"$T/cb.out" 2>"$T/cb.err"
rc=$?
check "corrupt code: exit 0, one line counts the bytes that do not decode ($size)" \
	sh -c "[ $rc -eq 0 ] && grep -q '^  $size bytes do not decode as instructions' '$T/cb.out'"
# The last iteration's rows: an earlier one (the first data, out early) may show them too.
section "$T/cb.out" "$(last "$T/cb.out")" Annotate >"$T/cb.last"
check "... each byte is a .byte 0xff row, and the samples are on them" \
	sh -c "[ \$(grep -c ' \.byte 0xff\$' '$T/cb.last') -eq $size ] &&
		grep -Eq '^> +[0-9.]+% +[0-9.]+% +[1-9][0-9]* +[0-9a-f]+  \.byte 0xff\$' '$T/cb.last'" ||
	diag_file "$T/cb.out"
finish
