#!/bin/sh
# go-goroutines.sh: `gotop-perf goroutines` against Go's own goroutine?debug=2 dump.
#
# The workload (tests/workloads/go/goroutines.go) parks goroutines in a channel receive and
# send, a select, sync.Mutex, sync.Cond, time.Sleep, a network read and a system call, spins
# one, each under labels kind=<place> it writes down itself. It dumps its goroutines
# (debug=2) before gotop-perf reads them and again after. Every goroutine parked the same
# way in both dumps must be read with the same id, state or wait reason, function names in
# order, and creator; labels must equal the workload's own account. Go's dump shows
# what runtime/traceback.go showframe shows: no unexported runtime.* frames, no wrappers,
# no creator for goroutine 1; the same filter is applied to gotop-perf's frames.
# The live UI's Goroutines view shows the same in its all-goroutines mode (--batch).
# For each Go release of GO_VERSIONS and each build: plain, PIE, stripped.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

command -v jq >/dev/null || skip_all "jq is not installed (setup.sh installs it)"
[ "$(uname -m)" = x86_64 ] || skip_all "runtime variables of stripped binaries are found on amd64 only"
plan_per_version 18 2
SRC=$TOP_SRCDIR/tests/workloads/go/goroutines.go

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
		if (f ~ /^runtime\.[^A-Z]/) next
		fr = fr (fr == "" ? "" : " ") f
	}
	END { out() }' "$1"
}

# ours FILE: the same from gotop-perf goroutines --json, with Go's filter applied.
ours() {
	jq -r 'select(.stack_read) |
		[(.id | tostring),
		 (if .wait_reason != "" then .wait_reason else .state end),
		 ([.frames[] | select((.wrapper // false) | not) | .func |
		   select(test("^runtime\\.[^A-Z]") | not)] | join(" ")),
		 (if .id == 1 or .created_by == null or
		     (.created_by.func | test("^runtime\\.[^A-Z]")) then ""
		  else .created_by.func end)] | @tsv' "$1"
}

# Bad targets: one clear line, the documented exit status.
sleep 60 &
sp=$!
track $sp
"$GOTOP_PERF" goroutines -p $sp >"$T/o" 2>"$T/e"
rc=$?
check "not a Go program: exit 1, one line saying so ($(head -1 "$T/e"))" \
	test $rc = 1 -a "$(wc -l <"$T/e")" = 1 -a ! -s "$T/o" -a -n "$(grep 'not a Go program' "$T/e")"
kill $sp 2>/dev/null
"$GOTOP_PERF" goroutines -p 999999999 >"$T/o" 2>"$T/e"
rc=$?
check "no such process: exit 3, one line ($(head -1 "$T/e"))" \
	test $rc = 3 -a "$(wc -l <"$T/e")" = 1

for v in $GO_VERSIONS; do
	for variant in plain pie stripped; do
		bin=$T/goroutines-$v-$variant
		go_build_or_skip 6 "$v" "$variant" "$SRC" "$bin" || continue
		rd=$T/run-$v-$variant
		mkdir -p "$rd"
		"$bin" "$rd" >"$rd/out" 2>&1 &
		pid=$!
		track $pid
		i=0
		while [ ! -s "$rd/dump1" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		"$GOTOP_PERF" goroutines -p $pid --json >"$rd/ours.json" 2>"$rd/ours.err"
		rc=$?
		"$GOTOP_PERF" goroutines -p $pid --labels >"$rd/ours.txt" 2>>"$rd/ours.err"
		rc2=$?
		# The live UI's Goroutines view in its all-goroutines mode, as text.
		"$GOTOP_PERF" --batch -n 1 -d 0.5 --view goroutines-all -p $pid >"$rd/view.txt" 2>&1
		kill -USR1 $pid
		i=0
		while [ ! -s "$rd/dump2" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		tag="go$v $variant"
		if [ $rc != 0 ] || [ $rc2 != 0 ] || ! jq -e . "$rd/ours.json" >/dev/null 2>&1 ||
			[ ! -s "$rd/dump2" ]; then
			not_ok "$tag: goroutines exits 0 with JSON (exit $rc/$rc2), both dumps written"
			diag_file "$rd/ours.err"
			skip_n 5 "$tag: no snapshot to compare"
			continue
		fi
		ok "$tag: goroutines exits 0 with JSON, both dumps written"

		go_dump "$rd/dump1" | sort >"$rd/go1"
		go_dump "$rd/dump2" | sort >"$rd/go2"
		# Parked in both dumps the same way (not running, not runnable).
		comm -12 "$rd/go1" "$rd/go2" | awk -F'\t' '$2 != "running" && $2 != "runnable"' >"$rd/parked"
		ours "$rd/ours.json" | sort >"$rd/ours"
		n=$(wc -l <"$rd/parked")
		missing=$(comm -23 "$rd/parked" "$rd/ours" | wc -l)
		if [ "$n" -ge 9 ] && [ "$missing" = 0 ]; then
			ok "$tag: $n parked goroutines: id, state, stack and creator equal Go's dump"
		else
			not_ok "$tag: $n parked goroutines: id, state, stack and creator equal Go's dump ($missing differ)"
			comm -23 "$rd/parked" "$rd/ours" | sed 's/^/# go:   /' | head -10
			for id in $(comm -23 "$rd/parked" "$rd/ours" | cut -f1 | head -10); do
				awk -F'\t' -v id="$id" '$1 == id { print "# ours: " $0 }' "$rd/ours"
			done
		fi

		# Labels: the workload's own account, and every kind of parking place seen.
		bad=0
		kinds=""
		while read -r _ id kind; do
			got=$(jq -r --argjson id "$id" 'select(.id == $id) | .labels | to_entries |
				map("\(.key)=\(.value)") | join(",")' "$rd/ours.json")
			if [ "$got" != "kind=$kind" ]; then
				echo "# goroutine $id: labels '$got', want 'kind=$kind'"
				bad=$((bad + 1))
			fi
			kinds="$kinds $kind"
		done <"$rd/labels"
		nl=$(wc -l <"$rd/labels")
		check "$tag: labels of $nl goroutines equal the workload's ($bad differ)" \
			test "$bad" = 0 -a "$nl" -ge 11

		# States of the places Go's dump cannot compare: the spinner runs (or waits for a
		# CPU); the syscall one is in a system call.
		spin=$(awk '$3 == "spin" { print $2 }' "$rd/labels")
		sys=$(awk '$3 == "syscall" { print $2 }' "$rd/labels")
		st_spin=$(jq -r --argjson id "$spin" 'select(.id == $id) | .state' "$rd/ours.json")
		st_sys=$(jq -r --argjson id "$sys" 'select(.id == $id) | .state' "$rd/ours.json")
		check "$tag: spinning goroutine $st_spin, blocked read(2) $st_sys" \
			test "$st_sys" = syscall -a \( "$st_spin" = running -o "$st_spin" = runnable \)

		# The live view: the receivers as one group of 3, where they wait, their labels.
		check "$tag: live Goroutines view (all): one row of 3 receivers in main.recvForever" \
			grep -Eq '^ +3  chan receive .* main\.recvForever  \{kind=chanrecv\}' "$rd/view.txt"

		# Groups: the three receivers under one label set are one group.
		check "$tag: text output groups the 3 identical receivers" \
			grep -q '^3 goroutines \[chan receive' "$rd/ours.txt"
	done
done

finish
