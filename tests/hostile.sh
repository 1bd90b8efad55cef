#!/bin/sh
# hostile.sh: broken and hostile targets: Go binaries with a corrupt .gopclntab or corrupt DWARF,
# hostile pprof labels in the written profile (bounded, byte-exact), and an executable replaced
# or deleted on disk while it runs. gotop-perf must keep running, exit 0 and name things right.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
plan 48
C=$TOP_BUILDDIR/tests/workloads/cchains
out=$T/out
err=$T/err
export LC_ALL=C # byte semantics for grep, awk and sed below

# run_bounded SECONDS CMD...: CMD, killed if it runs longer (a hang fails, not blocks, the test).
# Exit status: CMD's, or 124 / 137 from timeout.
run_bounded() {
	s=$1
	shift
	timeout -k 5 "$s" "$@"
}

# sect FILE NAME: "OFFSET SIZE" (hex, as readelf -SW prints them) of a section.
sect() { readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] //p' | awk -v n="$2" '$1 == n { print $4, $5 }'; }
# poke FILE OFFSET: stdin's bytes written over FILE at OFFSET (decimal).
poke() { dd of="$1" bs=65536 seek="$2" oflag=seek_bytes conv=notrunc status=none; }
# u64 FILE OFFSET: the little-endian 64-bit word at OFFSET, in decimal.
u64() { od -A n -t u8 -N 8 -j "$2" "$1" | tr -d ' '; }
# pattern N: N hostile bytes: terminal escapes, invalid UTF-8, a right-to-left override,
# newline and tab, and a NUL every 36 bytes (so that they read as many short strings).
pattern() {
	awk -v n="$1" 'BEGIN {
		b = "\033[2J\033[H\033]0;pwned\007\377\376\303(\342\200\256\n\tmain.fake"
		while (length(s) < n) s = s b sprintf("%c", 0)
		printf "%s", substr(s, 1, n) }'
}
# corrupt_sect FILE SECTION KEEP: hostile bytes over SECTION after its first KEEP bytes.
corrupt_sect() {
	set -- "$1" "$2" "$3" $(sect "$1" "$2")
	[ -n "$5" ] || return 1
	pattern $((0x$5 - $3)) | poke "$1" $((0x$4 + $3))
}

GOW=$T/go
mkdir -p "$GOW"
have_go=1
if ! go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/labels.go" "$GOW/labels" >"$T/gob.err" 2>&1 ||
	! go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/hostile.go" "$GOW/hostile" >>"$T/gob.err" 2>&1 ||
	! pprof_setup; then
	have_go=0
	why="Go $GO_VERSION toolchain or go tool pprof unavailable: $(tail -1 "$T/gob.err")"
fi

# --- corrupt .gopclntab and corrupt DWARF (the labels workload: main.alphaWork has 60% of
# the CPU by construction, handler=alpha its label) ---
# hdr:   the pcHeader's nfunc, nfiles and table offsets (which only external readers use;
#        the runtime's moduledata has its own copies) overwritten with huge values
# names: the function name table overwritten with escapes, invalid UTF-8 and an 8 KiB
#        name with no NUL (the runtime only reads names for tracebacks)
# dwz:   Go's zlib-compressed DWARF sections: their compressed data overwritten
# dw:    DWARF decompressed (objcopy), then .debug_line and .debug_frame overwritten and
#        .debug_info from a quarter of its length on
make_corrupt() {
	b=$GOW/$1
	cp "$GOW/labels" "$b" || return 1
	set -- "$1" $(sect "$b" .gopclntab)
	[ -n "$2" ] || return 1
	po=$((0x$2))
	# pcHeader (go1.20+ runtime/symtab.go): magic, pads, minLC, ptrSize (8 bytes), nfunc,
	# nfiles, textStart, funcnameOffset, cuOffset, filetabOffset, pctabOffset, pclnOffset.
	[ "$(od -A n -t x4 -N 4 -j $po "$b" | tr -d ' ')" = fffffff1 ] || return 1
	case $1 in
	hdr)
		printf '\377\377\377\377\377\377\377\177\377\377\377\377\377\377\377\377' | poke "$b" $((po + 8))
		awk 'BEGIN { for (i = 0; i < 40; i++) printf "%c", 255 - i }' | poke "$b" $((po + 32))
		;;
	names)
		fo=$(u64 "$b" $((po + 32)))
		co=$(u64 "$b" $((po + 40)))
		[ $((co - fo)) -gt 16384 ] || return 1
		{
			awk 'BEGIN { for (i = 0; i < 8192; i++) printf "%c", 27 + i % 3 }'
			pattern $((co - fo - 8192))
		} | poke "$b" $((po + fo))
		;;
	dwz)
		for s in .debug_info .debug_line .debug_frame .debug_abbrev .debug_loc .debug_ranges; do
			corrupt_sect "$b" $s 40 || return 1
		done
		;;
	dw)
		objcopy --decompress-debug-sections "$GOW/labels" "$b" || return 1
		corrupt_sect "$b" .debug_line 16 && corrupt_sect "$b" .debug_frame 16 || return 1
		set -- $(sect "$b" .debug_info)
		pattern $((0x$2 / 2)) | poke "$b" $((0x$1 + 0x$2 / 4))
		;;
	esac
}

# tag_values FILE KEY: "value percent" lines of pprof -tags for one key.
tag_values() {
	pprof -tags "$1" 2>/dev/null | awk -v k="$2" '
		$1 == k ":" && $2 == "Total" { s = 1; next } s && NF == 0 { s = 0 }
		s && match($0, /\( *[0-9.]+%\)/) { w = substr($0, RSTART + 1, RLENGTH - 3); sub(/^ */, "", w); print $NF, w }'
}

for v in hdr names dwz dw; do
	if [ $have_go = 0 ]; then
		skip_n 8 "$why"
		continue
	fi
	b=$GOW/$v
	if make_corrupt $v 2>"$err" && ! cmp -s "$b" "$GOW/labels" 2>/dev/null && "$b" -d 0.3s >/dev/null 2>&1; then
		ok "$v: the corrupted binary still runs ($(cmp -l "$b" "$GOW/labels" 2>/dev/null | wc -l) bytes changed)"
	else
		not_ok "$v: the corrupted binary still runs"
		diag_file "$err"
		skip_n 7 "$v: no corrupted binary"
		continue
	fi
	run_bounded 60 "$GOTOP_PERF" record -v -d 2 -o "$T/$v.pb.gz" -- "$b" -d 30s >"$out" 2>&1
	rc=$?
	check "$v: record exits 0 (no crash, no hang)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || diag_file "$out"
	n=$(pprof_total "$T/$v.pb.gz" 1)
	check "$v: go tool pprof reads the profile ($n samples)" [ "${n:-0}" -gt 0 ]
	pprof_flat "$T/$v.pb.gz" >"$T/flat.txt"
	hot=$(head -1 "$T/flat.txt")
	if [ $v = names ]; then
		# The names are garbage now; the grouping by function must still hold.
		check "$v: the hottest function (a garbage name now) still has about main.alphaWork's 60% flat (${hot##* }%)" \
			awk -v p="${hot##* }" 'BEGIN { exit !(p >= 40 && p <= 80) }'
	else
		check "$v: names still right: the hottest function is main.alphaWork ($hot)" \
			sh -c "echo '$hot' | grep -q '^main\\.alphaWork '"
	fi
	# Go awareness may give up on broken data, but never make up labels.
	tag_values "$T/$v.pb.gz" handler | sort -k2,2nr >"$T/tags.txt"
	if [ -s "$T/tags.txt" ]; then
		check "$v: handler labels, when read, are right (alpha the largest: $(head -1 "$T/tags.txt"))" \
			sh -c "head -1 '$T/tags.txt' | grep -q '^alpha ' && ! grep -qv '^\\(alpha\\|beta\\|gamma\\) ' '$T/tags.txt'"
	else
		ok "$v: no handler labels read (Go awareness off: $(grep -o 'go: [0-9]* samples' "$out"))"
	fi
	run_bounded 60 "$GOTOP_PERF" --batch -n 2 --rows 0 --view top,tree,labels --save "$T/$v-ui.pb.gz" \
		-- "$b" -d 30s >"$out" 2>"$err"
	rc=$?
	check "$v: live --batch -n 2 exits 0 after 2 iterations" \
		sh -c "[ $rc -eq 0 ] && grep -q '^=== iteration 2 ===' '$out'"
	[ $rc -eq 0 ] || diag_file "$err"
	check "$v: ... shows no control byte (names and labels escaped)" sh -c "! grep -q '[[:cntrl:]]' '$out'"
	check "$v: ... and its saved snapshot reads in go tool pprof" [ "$(pprof_total "$T/$v-ui.pb.gz" 1)" -gt 0 ]
done

# --- hostile labels in the written profile: kept byte-exact (escaping is the UI's job,
# the file must hold what the program set), each key and value cut at GORT_MAX_STRLEN
# (256) bytes plus "…" (include/gotop/goruntime.h), at most GORT_MAX_LABELS (64) pairs.
# Go's own profile of the same run (-cpuprofile) holds the exact bytes to compare with. ---
if [ $have_go = 1 ]; then
	run_bounded 60 "$GOTOP_PERF" record -d 30 -o "$T/hl.pb.gz" -- "$GOW/hostile" -d 3s -cpuprofile "$T/go.pb.gz" \
		>"$out" 2>&1
	rc=$?
	check "hostile labels: record exits 0 when the target ends" sh -c "[ $rc -eq 0 ] && gzip -t '$T/hl.pb.gz' '$T/go.pb.gz'"
	ours=$(gzip -dc "$T/hl.pb.gz" | wc -c)
	theirs=$(gzip -dc "$T/go.pb.gz" | wc -c)
	check "... the 1 MiB value is bounded: our profile is $ours bytes, Go's own $theirs" \
		sh -c "[ $ours -lt 262144 ] && [ $theirs -gt 1048576 ]"
	# -raw prints each sample's labels as key:[value]; NUL bytes become @ for the shell.
	pprof -raw "$T/hl.pb.gz" 2>/dev/null | tr '\0' '@' >"$T/hl.raw"
	pprof -raw "$T/go.pb.gz" 2>/dev/null | tr '\0' '@' >"$T/go.raw"
	# The value ends where the next label (in key order) begins.
	big_ours=$(awk 'i = index($0, "big:[") { s = substr($0, i + 5); match(s, /\] [A-Za-z_]+:\[/); print substr(s, 1, RSTART - 1); exit }' "$T/hl.raw")
	big_go=$(awk 'i = index($0, "big:[") { print substr($0, i + 5, 256); exit }' "$T/go.raw")
	check "... the big value is cut to its first 256 bytes plus \"…\" (${#big_ours} bytes)" \
		test "x$big_go" != x -a "x$big_ours" = "x$big_go…"
	grep -ao "k[0-9][0-9]$(printf '\033')\[3[0-7]m:\[v[0-9][0-9]$(printf '\007')\]" "$T/hl.raw" | sort -u >"$T/k.ours"
	grep -ao "k[0-9][0-9]$(printf '\033')\[3[0-7]m:\[v[0-9][0-9]$(printf '\007')\]" "$T/go.raw" | sort -u >"$T/k.go"
	check "... the 64-pair set is whole and byte-exact ($(wc -l <"$T/k.ours") pairs, Go: $(wc -l <"$T/k.go"))" \
		sh -c "[ \$(wc -l <'$T/k.ours') -eq 64 ] && cmp -s '$T/k.ours' '$T/k.go'"
	nul='nul@key:[nul@value@]'
	check "... NUL bytes inside keys and values are kept" \
		sh -c "grep -aqF '$nul' '$T/hl.raw' && grep -aqF '$nul' '$T/go.raw'"
	esc=$(printf 'handler:[\033[2J\033[H\033[31mcleared\033[0m]')
	bad=$(printf 'bad-utf8:[\377\376\303(\342\202]')
	check "... escape sequences and invalid UTF-8 are kept byte-exact" \
		sh -c "grep -aqF '$esc' '$T/hl.raw' && grep -aqF '$esc' '$T/go.raw' &&
			grep -aqF '$bad' '$T/hl.raw' && grep -aqF '$bad' '$T/go.raw'"
else
	skip_n 6 "$why"
fi

# --- an executable replaced (mv) or deleted (rm) while it runs: the process keeps the old
# inode; the names must come from it. cleaf has other functions at the same offsets
# (leaf 0x1210 where cchains has hot_ab 0x1240), so reading the new file gives wrong names. ---
# names_ok PROFILE OLD NEW: the profile names the hot chain of OLD and nothing only NEW has.
names_ok() {
	pprof -top -nodecount=100000 "$1" 2>/dev/null | awk 'NF >= 6 && $1 ~ /[0-9]/ { print $6 }' | sort -u >"$T/names.txt"
	nm "$2" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u >"$T/old.txt"
	nm "$3" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u >"$T/new.txt"
	comm -13 "$T/old.txt" "$T/new.txt" >"$T/newonly.txt"
	grep -qx hot_ab "$T/names.txt" && grep -qx chain_b "$T/names.txt" && grep -qx chain_a "$T/names.txt" &&
		! grep -qxFf "$T/newonly.txt" "$T/names.txt"
}
L=$TOP_BUILDDIR/tests/workloads/cleaf
mkdir -p "$T/bin"
if [ $have_go = 0 ]; then
	skip_n 8 "$why"
else
	cp "$C" "$T/bin/replaced"
	cp "$C" "$T/bin/deleted"
	"$T/bin/replaced" 60 &
	rpid=$!
	track $rpid
	"$T/bin/deleted" 60 &
	dpid=$!
	track $dpid
	sleep 0.3
	cp "$L" "$T/bin/new" && mv -f "$T/bin/new" "$T/bin/replaced"
	rm -f "$T/bin/deleted"
	check "replaced and deleted: the maps say (deleted)" \
		sh -c "grep -q 'replaced (deleted)' /proc/$rpid/maps && grep -q 'bin/deleted (deleted)' /proc/$dpid/maps"
	run_bounded 30 "$GOTOP_PERF" record -q -p $rpid -d 1.5 -o "$T/rep.pb.gz" >"$out" 2>&1
	check "replaced binary: record exits 0" [ $? -eq 0 ]
	check "... names from the running (old) file: hot_ab < chain_b < chain_a, none of cleaf's" \
		names_ok "$T/rep.pb.gz" "$C" "$L"
	run_bounded 30 "$GOTOP_PERF" record -q -p $dpid -d 1.5 -o "$T/del.pb.gz" >"$out" 2>&1
	check "deleted binary: record exits 0" [ $? -eq 0 ]
	check "... names still right" names_ok "$T/del.pb.gz" "$C" "$L"
	# More refreshes under valgrind, where the first may come before any sample.
	run_bounded $((30 * gp_slow)) "$GOTOP_PERF" --batch -n $gp_slow --view top -p $rpid >"$out" 2>"$err"
	if grep -q ' hot_ab ' "$out" && ! grep -q ' leaf ' "$out"; then
		ok "replaced binary: the live --batch Top shows hot_ab, not cleaf's leaf"
	else
		not_ok "replaced binary: the live --batch Top shows hot_ab, not cleaf's leaf"
		diag_file "$out"
	fi
	kill -9 $rpid $dpid 2>/dev/null

	# A Go program replaced by another Go program (its DWARF and gopclntab are read too).
	cp "$GOW/labels" "$T/bin/gorep"
	"$T/bin/gorep" -d 30s &
	gpid=$!
	track $gpid
	sleep 0.3
	cp "$GOW/hostile" "$T/bin/new" && mv -f "$T/bin/new" "$T/bin/gorep"
	run_bounded 30 "$GOTOP_PERF" record -q -p $gpid -d 1.5 -o "$T/gorep.pb.gz" >"$out" 2>&1
	rc=$?
	pprof_flat "$T/gorep.pb.gz" >"$T/flat.txt"
	check "replaced Go binary: record exits 0, the hottest function is main.alphaWork ($(head -1 "$T/flat.txt"))" \
		sh -c "[ $rc -eq 0 ] && head -1 '$T/flat.txt' | grep -q '^main\\.alphaWork '"
	tag_values "$T/gorep.pb.gz" handler | sort -k2,2nr >"$T/tags.txt"
	check "... and its labels are read (handler=alpha the largest: $(head -1 "$T/tags.txt"))" \
		grep -q '^alpha ' "$T/tags.txt" -m1
	kill -9 $gpid 2>/dev/null
fi

# Unprivileged: without CAP_SYS_ADMIN /proc/PID/map_files/ is closed, yet /proc/PID/exe
# still opens the very file the process runs.
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -le 2 ]; then
	nb="setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all"
	chmod 777 "$T" "$T/bin"
	cp "$C" "$T/bin/nbdel"
	chmod 755 "$T/bin/nbdel"
	$nb "$T/bin/nbdel" 30 &
	npid=$!
	track $npid
	sleep 0.3
	rm -f "$T/bin/nbdel"
	run_bounded $((30 * gp_slow)) $nb "$GOTOP_PERF" record -q -p $npid -d 1.5 -o "$T/nbdel.pb.gz" >"$out" 2>&1
	rc=$?
	check "unprivileged, own deleted binary: record exits 0 (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || diag_file "$out"
	if names_ok "$T/nbdel.pb.gz" "$C" "$L"; then
		ok "... names still right (through /proc/PID/exe)"
	else
		not_ok "... names still right through /proc/PID/exe (got $(head -3 "$T/names.txt" | tr '\n' ' '))"
	fi
	kill -9 $npid 2>/dev/null
else
	skip "needs root, the nobody user, setpriv and perf_event_paranoid <= 2"
	skip "needs root, the nobody user, setpriv and perf_event_paranoid <= 2"
fi
finish
