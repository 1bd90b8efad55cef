#!/bin/sh
# man.sh: the man page the build makes (doc/gotop-perf.1 from doc/gotop-perf.1.in and the key
# table): every option each command's --help prints is documented under that command, every
# option it documents is one the command takes, its INTERACTIVE COMMANDS are the help screen's
# keys, and groff renders it without a warning.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

plan 17
page=$TOP_BUILDDIR/doc/gotop-perf.1
out=$T/out

if [ ! -s "$page" ]; then
	not_ok "the build made $page"
	skip_n 12 "no man page"
	finish
fi
ok "the build made doc/gotop-perf.1"
check "... with no placeholder of the template left" sh -c "! grep -v '^\\.\\\\\"' '$page' | grep -n '@[A-Z_]*@'"

# The options each subsection of OPTIONS documents, one "SECTION OPTION" line per option in
# an item's tag (the line after .TP): -p and --pid of ".BI \-p ", \-\-pid " PID" in the
# section of ".SS "record: ..."" give "record -p" and "record --pid", and the pair "record -p,--pid".
awk '
	/^\.SH / { opts = ($2 == "OPTIONS") }
	/^\.SS / { s = tolower($2); gsub(/[^a-z]/, "", s)
		   if (s == "the") s = "live"; if (s == "without") s = "top"; next }
	/^\.TP/ { tag = 1; next }
	tag && opts {
		tag = 0; t = $0
		sub(/^\.[A-Z]+ /, "", t); gsub(/\\-/, "-", t); gsub(/\\f[A-Z]/, "", t)
		gsub(/[",]/, " ", t)
		n = split(t, w, " "); short = ""
		for (i = 1; i <= n; i++) {
			if (w[i] ~ /^-[A-Za-z0-9]$/) { short = w[i]; print s, w[i] }
			if (w[i] ~ /^--[a-z0-9-]+$/) { print s, w[i]; if (short != "") print s, short "," w[i] }
		}
	}
	{ tag = 0 }' "$page" >"$T/tags"

# missing HELPFILE SECTION...: the options HELPFILE prints (every --long word, and every
# "-X, --long" pair at the start of a line) that no tag of those sections documents.
missing() {
	mf=$1
	shift
	{
		grep -o -- '--[a-z][a-z0-9-]*' "$mf"
		sed -n 's/^ *\(-[A-Za-z0-9]\), \(--[a-z][a-z0-9-]*\).*/\1,\2/p' "$mf"
	} | sort -u | while read -r o; do
		found=0
		for s in "$@"; do
			grep -qx -- "$s $o" "$T/tags" && found=1
		done
		[ $found -eq 1 ] || printf ' %s' "$o"
	done
}

# help_check NAME SECTIONS -- ARGS...: what `gotop-perf ARGS` prints is documented there.
help_check() {
	hn=$1
	hs=$2
	shift 3
	"$GOTOP_PERF" "$@" >"$T/help.$hn" 2>&1
	m=$(missing "$T/help.$hn" $hs)
	n=$(grep -o -- '--[a-z][a-z0-9-]*' "$T/help.$hn" | sort -u | wc -l)
	check "every option of \`gotop-perf $*\` ($n) is an item of its section$([ -n "$m" ] && echo " (missing:$m)")" \
		[ "$n" -gt 0 -a -z "$m" ]
}
help_check top "top sampling live batch record verify view goroutines pprof serve list" -- --help
help_check live "sampling live batch" -- --batch --help
help_check record "sampling record" -- record --help
help_check verify "verify" -- verify --help
help_check view "view" -- view --help
help_check goroutines "goroutines" -- goroutines --help
help_check pprof "pprof" -- pprof --help
help_check serve "serve" -- serve --help
# -d is --refresh in the live profiler, --duration in record and verify.
check "-d is --refresh under the live profiler, --duration under record and verify" \
	sh -c "grep -qx 'live -d,--refresh' '$T/tags' && grep -qx 'record -d,--duration' '$T/tags' &&
		grep -qx 'verify -d,--duration' '$T/tags' && ! grep -q '^sampling -d' '$T/tags'"

# The other way round: every option the page documents for a command is one the command takes
# (getopt says "unrecognized option" for the others; no target is given, so nothing runs).
stale=""
while read -r s o; do
	case $o in --*,* | -*,* | --help | -h | --version | -V) continue ;; esac
	case $s in
	sampling) cmds="live record" ;;
	live | batch) cmds=live ;;
	record | verify | view | goroutines | pprof) cmds=$s ;;
	*) continue ;;
	esac
	for c in $cmds; do
		if [ "$c" = live ]; then
			"$GOTOP_PERF" --batch "$o" </dev/null >"$out" 2>&1
		else
			"$GOTOP_PERF" "$c" "$o" </dev/null >"$out" 2>&1
		fi
		grep -Eq 'unrecognized option|invalid option' "$out" && stale="$stale $c:$o"
	done
done <"$T/tags"
check "every option the page documents is taken by its command${stale:+ (not taken:$stale)}" [ -z "$stale" ]

# groff: no warning of any kind (-ww), and man renders it.
if command -v groff >/dev/null 2>&1; then
	groff -man -Tutf8 -ww -z "$page" >"$out" 2>&1
	check "groff -man -ww renders it without a warning" [ ! -s "$out" ]
	[ -s "$out" ] && diag_file "$out"
	# Plain text, one line per paragraph (no filling or hyphenation at a line's end).
	groff -man -Tascii -P-cbou -rLL=5000n "$page" 2>/dev/null >"$T/page.txt"
	check "... and as text it has the sections of a man page" sh -c \
		"for h in NAME SYNOPSIS DESCRIPTION OPTIONS 'INTERACTIVE COMMANDS' ENVIRONMENT 'EXIT STATUS' 'BUGS AND LIMITATIONS'; do grep -qx \"\$h\" '$T/page.txt' || exit 1; done"
else
	skip_n 2 "groff is not installed"
fi
if command -v man >/dev/null 2>&1; then
	MANWIDTH=80 man -l "$page" >"$out" 2>&1
	check "man -l renders it (exit $?)" grep -q 'INTERACTIVE COMMANDS' "$out"
else
	skip "man is not installed"
fi

# INTERACTIVE COMMANDS against the help screen: the same keys, texts and views, in the same
# order. The help view of --batch prints the screen's rows: the key column (16 wide), the text,
# the views in brackets; the notes after the first empty row are not keys.
if [ ! -s "$T/page.txt" ]; then
	skip_n 2 "no text rendering (groff)"
elif ! "$GOTOP_PERF" list 2>/dev/null | grep -q '^cpu-clock .* yes '; then
	skip_n 2 "cpu-clock cannot be sampled here: no help view to compare with"
else
	"$GOTOP_PERF" --batch -n 1 --rows 0 --view help -- /bin/sleep 2 >"$out" 2>"$T/err"
	awk '$0 == "== Help ==" { s = 1; getline; next }
	     s && $0 == "" { exit }
	     s { k = substr($0, 1, 16); sub(/ +$/, "", k); print k "\t" substr($0, 17) }' "$out" |
		sed 's/  */ /g; s/^ //; s/ $//; s/\t /\t/' >"$T/help-keys"
	# Each entry: its tag at column 8, its text at column 22 (.TP 14n in a section's 7n), on
	# the tag's line, or on the next when the tag is wider.
	awk '/^INTERACTIVE COMMANDS$/ { s = 1; next }
	     s && /^[A-Z]/ { exit }
	     s && /^       [^ ]/ {
		if (e != "") print e
		if (length($0) > 21 && substr($0, 21, 1) == " ") {
			k = substr($0, 8, 14); sub(/ +$/, "", k); e = k "\t" substr($0, 22)
		} else {
			e = substr($0, 8)
		}
		next
	     }
	     s && /^                     [^ ]/ && e != "" { e = e (e ~ /\t/ ? " " : "\t") substr($0, 22) }
	     END { if (e != "") print e }' "$T/page.txt" |
		sed -n '/\t/p' | sed 's/  */ /g; s/ $//; s/\t /\t/' >"$T/man-keys"
	nk=$(wc -l <"$T/help-keys")
	check "the help view lists the keys ($nk)" [ "$nk" -gt 10 ]
	[ "$nk" -gt 10 ] || diag_file "$T/err"
	if diff "$T/help-keys" "$T/man-keys" >"$T/keys.diff"; then
		ok "INTERACTIVE COMMANDS lists every key of the help screen, in its order ($(wc -l <"$T/man-keys") entries)"
	else
		not_ok "INTERACTIVE COMMANDS lists every key of the help screen, in its order"
		diag_file "$T/keys.diff"
	fi
fi
finish
