#!/bin/sh
# hostile-live.sh: a live Go target whose g register and pprof label pointers are garbage
# (tests/workloads/go/garbageg), for each Go release of GO_VERSIONS: record, the live UI in --batch
# mode and verify keep running and exit 0, never give a sample a goroutine or labels that
# are not its own, show hostile bytes escaped, bound their memory, and leave the target
# running; the target itself survives all of it.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
[ "$(uname -m)" = x86_64 ] || skip_all "the garbageg workload is amd64 assembly"
NREC=8                       # checks per record run
NCHECK=$((5 + 2 * NREC))     # per Go version
plan_per_version $NCHECK
SRC=$TOP_SRCDIR/tests/workloads/go/garbageg
export LC_ALL=C # byte semantics for grep and awk
# Memory bound for gotop-perf itself (the issue 6 budget for the live UI).
MAXRSS_KB=65536

# info KEY: the value(s) of one line of the workload's -info file.
info() { sed -n "s/^$1 //p" "$T/info"; }

# cputicks PID: utime + stime of the process.
cputicks() { sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | awk '{ print $12 + $13 }'; }

# classify PROFILE: judges every sample of a gotop-perf profile (decoded by go tool pprof
# -raw) by its leaf function, the first frame outside the kernel: main.controlWork runs only
# on the control goroutine, main.spinRegs only on the regs goroutines (garbage R14), and
# main.labelsWork only on the labels goroutines (garbage g.labels). Prints lines
# "CLASS TOTAL RIGHT NOGOROUTINE WRONG" for ctl, regs and labels, then "okelsewhere N": samples
# with handler=ok on any goroutine but the control one. Wrong samples go to $T/wrong.txt.
# Label values may hold newlines; the numeric labels (goroutine, thread) come on a line of
# their own, last, which no value here can imitate.
classify() {
	pprof -raw "$1" 2>/dev/null | tr '\0' '@' >"$T/raw.txt"
	awk -v ctl="$(info control)" -v regs="$(info regs)" -v labs="$(info labels)" -v wrongf="$T/wrong.txt" '
		function flush(   cls, ok, h, w, hregs) {
			if (n == "")
				return
			ok = index(lab, " handler:[ok]") > 0
			hregs = index(lab, " handler:[regs]") > 0
			h = index(lab, " handler:[") > 0
			w = ""
			if (match(lab, / worker:\[r[0-9]\]/))
				w = substr(lab, RSTART + 10, 1)
			cls = ""
			if (leaf == "main.controlWork")
				cls = "ctl"
			else if (leaf == "main.spinRegs")
				cls = "regs"
			else if (leaf == "main.labelsWork")
				cls = "labels"
			if (ok && gor != ctl)
				okelse += n
			if (cls == "") {
				n = ""
				return
			}
			tot[cls] += n
			bad = 0
			if (cls == "ctl") {
				if (gor == "")
					none[cls] += n
				else if (gor == ctl && ok)
					right[cls] += n
				else if (gor != ctl || h)
					bad = 1
			} else if (cls == "regs") {
				if (gor == "")
					none[cls] += n
				else if (!(gor in isreg) || (h && !hregs) || (w != "" && isreg[gor] != w))
					bad = 1
				else
					right[cls] += n
			} else {
				if (gor == "")
					none[cls] += n
				else if (!(gor in islab) || ok || hregs || w != "")
					bad = 1
				else
					right[cls] += n
			}
			if (bad) {
				wrong[cls] += n
				print cls, n, "goroutine " (gor == "" ? "none" : gor), lab >wrongf
			}
			n = ""
		}
		BEGIN {
			k = split(regs, r, " ")
			for (i = 1; i <= k; i++)
				isreg[r[i]] = i - 1
			k = split(labs, r, " ")
			for (i = 1; i <= k; i++)
				islab[r[i]] = 1
			printf "" >wrongf
		}
		# First pass: the locations (id: address mapping function ...).
		NR == FNR {
			if (/^Locations/)
				loc = 1
			else if (loc && $1 ~ /^[0-9]+:$/ && $2 ~ /^0x/) {
				id = $1
				sub(":", "", id)
				fn[id] = $4
				kernel[id] = $2 ~ /^0xffff/
			}
			next
		}
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { flush(); s = 0; next }
		s && /^ +[0-9]+ +[0-9]+: [0-9 ]*$/ {
			flush()
			n = $1
			leaf = ""
			for (i = 3; i <= NF; i++)
				if (!kernel[$i]) {
					leaf = fn[$i]
					break
				}
			lab = ""
			gor = ""
			next
		}
		s && /^                (goroutine:\[[0-9]+\] )?thread:\[[0-9]+\]$/ {
			if (match($0, /goroutine:\[[0-9]+\]/))
				gor = substr($0, RSTART + 11, RLENGTH - 12)
			next
		}
		s { lab = lab " " $0 }
		END {
			flush()
			for (i = 1; i <= 3; i++) {
				c = i == 1 ? "ctl" : (i == 2 ? "regs" : "labels")
				print c, tot[c] + 0, right[c] + 0, none[c] + 0, wrong[c] + 0
			}
			print "okelsewhere", okelse + 0
		}' "$T/raw.txt" "$T/raw.txt"
}

# record_and_judge V MODE PID [OPTION]: records PID for 5 s and makes NREC checks. Judging
# each kind of goroutine needs 20 samples of it: a machine too busy to give them in 5 s gets
# a longer recording (10 s, then 20 s) of the same target.
record_and_judge() {
	v=$1 m=$2 p=$3
	shift 3
	w="go$v $m"
	secs=5
	while :; do
		if [ -x /usr/bin/time ]; then
			timeout -k 5 $((secs + 55)) /usr/bin/time -f %M -o "$T/rss" "$GOTOP_PERF" record -v "$@" -p $p -d $secs \
				-o "$T/r.pb.gz" >"$T/rec.out" 2>&1
		else
			rm -f "$T/rss"
			timeout -k 5 $((secs + 55)) "$GOTOP_PERF" record -v "$@" -p $p -d $secs -o "$T/r.pb.gz" >"$T/rec.out" 2>&1
		fi
		rc=$?
		classify "$T/r.pb.gz" >"$T/classes"
		few=$(awk '$1 ~ /^(ctl|regs|labels)$/ && $2 < 20 { print $1 "=" $2 }' "$T/classes" | tr '\n' ' ')
		{ [ $rc -ne 0 ] || [ -z "$few" ] || [ $secs -ge 20 ]; } && break
		diag "$w: too few samples in $secs s ($few): again for $((secs * 2)) s"
		secs=$((secs * 2))
	done
	grep -o 'go: .*\|go at the sample.*' "$T/rec.out" | sed "s/^/# $w: /"
	check "$w: record exits 0 and the target keeps running (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && $(truth running $p)"
	[ $rc -eq 0 ] || diag_file "$T/rec.out"
	all=$(pprof_total "$T/r.pb.gz" 1)
	check "$w: go tool pprof reads the profile (${all:-0} samples)" [ "${all:-0}" -gt 0 ]
	set -- $(grep '^ctl ' "$T/classes")
	ct=$2 cr=$3 cn=$4 cw=$5
	set -- $(grep '^regs ' "$T/classes")
	rt=$2 rr=$3 rn=$4 rw=$5
	set -- $(grep '^labels ' "$T/classes")
	lt=$2 lr=$3 ln=$4 lw=$5
	oe=$(sed -n 's/^okelsewhere //p' "$T/classes")
	diag "$w: main.controlWork $ct samples: $cr own goroutine and handler=ok, $cn no goroutine, $cw wrong"
	diag "$w: main.spinRegs (garbage R14) $rt samples: $rr own goroutine and labels, $rn no goroutine, $rw wrong"
	diag "$w: main.labelsWork (garbage g.labels) $lt samples: $lr own goroutine, $ln no goroutine, $lw wrong"
	[ -s "$T/wrong.txt" ] && diag_file "$T/wrong.txt"
	check "$w: the control goroutine keeps its own samples: >= 90% of main.controlWork has goroutine $(info control) and handler=ok, none another ($cr of $ct, $cw wrong; need 20)" \
		awk -v r="${cr:-0}" -v t="${ct:-0}" -v w="${cw:-1}" 'BEGIN { exit !(t >= 20 && w == 0 && r >= 0.9 * t) }'
	check "$w: no main.spinRegs sample (garbage R14) gets another goroutine or labels ($rw of $rt wrong; need 20)" \
		sh -c "[ ${rt:-0} -ge 20 ] && [ ${rw:-1} -eq 0 ]"
	check "$w: no main.labelsWork sample (garbage g.labels) gets another goroutine or labels ($lw of $lt wrong; need 20)" \
		sh -c "[ ${lt:-0} -ge 20 ] && [ ${lw:-1} -eq 0 ]"
	check "$w: handler=ok is only ever on the control goroutine ($oe samples elsewhere)" [ "${oe:-1}" -eq 0 ]
	# The well-formed hostile set, read byte-exact (the profile holds what the target set;
	# escaping is the UI's job): proof that hostile bytes really went through.
	esc=$(printf 'garbage:[\033]0;pwned\007\033[2J\033[H]')
	nh=$(grep -acF "$esc" "$T/raw.txt")
	check "$w: hostile label bytes from the garbage goroutines' own memory are kept byte-exact ($nh samples)" [ "$nh" -gt 0 ]
	if [ -n "${GOTOP_WRAP:-}" ]; then
		skip "$w: record's max RSS is measured without valgrind (GOTOP_WRAP), which adds its own"
	elif [ -n "${GOTOP_UNDER_SANITIZER:-}" ]; then
		skip "$w: record's max RSS is measured without ASan, whose shadow memory and quarantine add their own"
	elif [ -s "$T/rss" ]; then
		rss=$(tail -1 "$T/rss")
		check "$w: record's memory stays bounded (max RSS $((rss / 1024)) MB, limit $((MAXRSS_KB / 1024)) MB)" [ "$rss" -lt $MAXRSS_KB ]
	else
		skip "$w: no /usr/bin/time to measure record's max RSS"
	fi
}

for v in $GO_VERSIONS; do
	bin=$T/garbageg-$v
	go_build_or_skip $NCHECK "$v" plain "$SRC" "$bin" || continue
	rm -f "$T/info"
	"$bin" -d 300s -info "$T/info" >"$T/target.out" 2>&1 &
	pid=$!
	track $pid
	i=0
	while [ ! -s "$T/info" ] && [ $i -lt 100 ] && kill -0 $pid 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	if [ ! -s "$T/info" ]; then
		not_ok "go$v: the garbageg target starts"
		diag_file "$T/target.out"
		kill -9 $pid 2>/dev/null
		skip_n $((NCHECK - 1)) "go$v: no target"
		continue
	fi
	ok "go$v: the target runs with garbage g registers and g.labels (g.labels at byte $(info labels_offset), $(info sets) hostile label sets; goroutines: control $(info control), regs $(info regs), labels $(info labels))"

	# --- record, with the goroutine read at the sample (BPF, when the build and the
	# machine allow) and after it (--no-bpf: the read comes later, from user space) ---
	record_and_judge "$v" default $pid
	record_and_judge "$v" no-bpf $pid --no-bpf

	# --- the live UI, --batch ---
	timeout -k 5 60 "$GOTOP_PERF" --batch -n 3 --rows 0 --view top,tree,labels,goroutines,threads -p $pid \
		>"$T/ui.out" 2>"$T/ui.err"
	rc=$?
	# Goroutines are grouped by start function and labels: handler=ok is one goroutine's,
	# started at main.control.
	check "go$v: live --batch -n 3 exits 0 after 3 iterations, Goroutines lists handler=ok as the one goroutine of main.control (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q '^=== iteration 3 ===' '$T/ui.out' &&
			grep -Eq '^ +[0-9.]+% +[0-9]+ +\\+1 +main\\.control +handler=ok ' '$T/ui.out'"
	[ $rc -eq 0 ] || diag_file "$T/ui.err"
	check "go$v: ... shows the hostile labels escaped: no control byte ($(grep -c '[[:cntrl:]]' "$T/ui.out") lines), $(grep -c 'pwned' "$T/ui.out") lines with their text" \
		sh -c "! grep -q '[[:cntrl:]]' '$T/ui.out' && grep -q 'pwned' '$T/ui.out'"

	# --- verify: stops threads with garbage registers, unwinds them, lets them go ---
	t1=$(cputicks $pid)
	timeout -k 5 60 "$GOTOP_PERF" verify -p $pid -d 2 --rate 300 >"$T/ver.out" 2>&1
	rc=$?
	sleep 0.5
	t2=$(cputicks $pid)
	diag "go$v: verify: $(grep 'thread stops' "$T/ver.out")"
	check "go$v: verify exits 0 with a report, the target keeps running ($t1 -> $t2 ticks), none of its threads stopped or traced (exit $rc)" \
		sh -c "[ $rc -eq 0 ] && grep -q 'thread stops: [1-9]' '$T/ver.out' && [ ${t2:-0} -gt ${t1:-0} ] && $(truth running $pid)"
	[ $rc -eq 0 ] || diag_file "$T/ver.out"

	# --- the target survived: its runtime never tripped on the garbage ---
	kill -TERM $pid 2>/dev/null
	wait $pid
	rc=$?
	check "go$v: the target exits 0 on SIGTERM (exit $rc)" [ $rc -eq 0 ]
	[ $rc -eq 0 ] || diag_file "$T/target.out"
done
finish
