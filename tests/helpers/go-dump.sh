# go-dump.sh: Go's goroutine dumps (goroutine?debug=2, runtime.Stack) and gotop-perf's
# goroutines --json, made comparable, for the tests that check one against the other.
# Sourced after lib.sh.

# go_dump FILE: "ID<TAB>STATE<TAB>FUNC FUNC...<TAB>CREATOR" per goroutine of a debug=2 dump.
go_dump() {
	awk '
	function out() { if (id != "") printf "%s\t%s\t%s\t%s\n", id, st, fr, cr; id = "" }
	/^goroutine [0-9]+ \[/ {
		out(); id = $2; st = $0
		sub(/^goroutine [0-9]+ \[/, "", st); sub(/\]:$/, "", st); sub(/, .*/, "", st)
		fr = ""; cr = ""; next
	}
	/^created by / { c = $3; if (id != 1) cr = c; next }
	/^\t/ || /^$/ { next }
	id != "" {
		f = $0; sub(/\([^()]*\)$/, "", f)
		if (f == "panic") f = "runtime.gopanic" # traceback.go printFuncName
		if (f ~ /^runtime\.[^A-Z]/) next
		fr = fr (fr == "" ? "" : " ") f
	}
	END { out() }' "$1"
}

# ours FILE: the same from gotop-perf goroutines --json, the runtime's unexported
# functions and names without a dot (cgo's _cgoexp_ wrappers) taken out: Go's dump hides
# them (runtime/traceback.go showfuncinfo), gotop-perf shows them as Go's profiles do.
ours() {
	jq -r 'select(.stack_read) |
		[(.id | tostring),
		 (if .wait_reason != "" then .wait_reason else .state end),
		 ([.frames[] | .func | select(test("^runtime\\.[^A-Z]") or (test("\\.") | not) | not)] |
		  join(" ")),
		 (if .created_by == null or (.created_by.func | test("^runtime\\.[^A-Z]")) then ""
		  else .created_by.func end)] | @tsv' "$1"
}

# dump_blocks FILE IDS: the debug=2 blocks of the goroutines IDS (a file of ids), one line
# each ("|" for newlines), arguments taken out (gotop-perf reads none: "(...)"), and the
# header's ", locked to thread" (gotop-perf does not read g.lockedm).
dump_blocks() {
	awk -v ids="$2" 'BEGIN { while ((getline l <ids) > 0) want[l] = 1; RS = "" }
		$1 == "goroutine" && ($2 in want) {
			sub(/, locked to thread\]:/, "]:")
			n = split($0, L, "\n"); s = ""
			for (i = 1; i <= n; i++) {
				if (i > 1 && L[i] !~ /^\t/ && L[i] !~ /^created by /)
					sub(/\([^()]*\)$/, "()", L[i])
				s = s (i > 1 ? "|" : "") L[i]
			}
			print s
		}' "$1" | sort
}

# profile_records FILE: the records of a debug=1 goroutine profile (one line each, "|" for
# newlines) but those of goroutines that ran while the profiles were taken (main.main, the
# dumping goroutine 1; main.spin of tests/workloads/go/goroutines.go), sorted.
profile_records() {
	awk 'BEGIN { RS = "" } { sub(/^goroutine profile: [^\n]*\n/, "") }
		!/main\.(main|dump|spin)\+/ { gsub(/\n/, "|"); print }' "$1" | sort
}
