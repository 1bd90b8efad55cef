# tests/helpers/godump.sh: Go's goroutine?debug=2 dump as lines to compare (sourced, POSIX sh).
# Used by go-goroutines.sh (Go's dump against `gotop-perf goroutines`) and serve.sh (Go's dump
# against the server's goroutine?debug=2).

# go_dump FILE: "ID<TAB>STATE<TAB>FUNC FUNC...<TAB>CREATOR" per goroutine of a debug=2 dump,
# with what runtime/traceback.go showframe leaves out of Go's own dump left out: unexported
# runtime.* frames, and the creator of goroutine 1.
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
		if (f ~ /^runtime\.[^A-Z]/) next
		fr = fr (fr == "" ? "" : " ") f
	}
	END { out() }' "$1"
}
