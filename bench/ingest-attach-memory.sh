#!/bin/bash
# ingest-attach-memory.sh: how gotop-perf takes data in: ingest throughput (a recorded Go
# target replayed with no target), time from attaching to the first data, memory over a
# long run; prints Markdown tables. Called by `bench/run.sh --only full` (which also runs
# the slowdown and own-CPU rounds of every tool, the live UI and perf top among them); can
# run alone. Not part of make check.
#
# Usage: bench/ingest-attach-memory.sh [--gotop PATH] [--work DIR] [--parts LIST] [--rounds N]
#                        [--memory-seconds S] [--go VERSION]
#   --parts LIST   comma-separated subset of ingest, attach, memory (default: all three)
#   --rounds N     replays and attaches per configuration (default 5)
#   --memory-seconds S   length of the memory run (default 600)
#   --go VERSION   Go toolchain for the Go targets (default 1.23)
# Run from the build directory (libgotop.a and config.h are taken from the directory of
# --gotop). Raw figures go to DIR/ingest.tsv and DIR/attach.tsv, tables to stdout.

set -u
here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
gotop=${GOTOP_PERF:-./gotop-perf}
work=
parts=ingest,attach,memory
rounds=5
memsecs=600
gover=1.23

die() {
	echo "bench/ingest-attach-memory.sh: $*" >&2
	exit 1
}
log() {
	printf '%s\n' "$*" >&2
}

while [ $# -gt 0 ]; do
	case $1 in
	--gotop) gotop=$2; shift ;;
	--work) work=$2; shift ;;
	--parts) parts=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--memory-seconds) memsecs=$2; shift ;;
	--go) gover=$2; shift ;;
	-h | --help) sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown option '$1'" ;;
	esac
	shift
done
case $gotop in /*) ;; *) gotop=$(pwd)/$gotop ;; esac
[ -x "$gotop" ] || die "no gotop-perf at $gotop"
builddir=$(dirname "$gotop")
[ -f "$builddir/libgotop.a" ] || die "no libgotop.a next to $gotop"
[ -n "$work" ] || work=$(mktemp -d /tmp/gotop-bench-iam.XXXXXX)
mkdir -p "$work/bin" "$work/out" || die "cannot create $work"
want() {
	case ",$parts," in *",$1,"*) return 0 ;; esac
	return 1
}
cc=${CC:-cc}

# stats FILE COLUMN: "median (min to max)" of a whitespace-separated column, 1 decimal.
stats() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v f="${3:-%.1f}" '
		$c != "NA" && $c != "" { v[++n] = $c }
		END {
			if (!n) { print "n/a"; exit }
			m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			if (n == 1) printf f "\n", m
			else printf f " (" f " to " f ")\n", m, v[1], v[n]
		}'
}
# medval FILE COLUMN: the median alone.
medval() {
	sort -g -k"$2","$2" "$1" | awk -v c="$2" '$c != "NA" && $c != "" { v[++n] = $c }
		END { if (!n) print "NA"; else print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2 }'
}

echo "## Ingest, attach and memory (bench/ingest-attach-memory.sh)"
echo
echo "- started $(date -u +%Y-%m-%dT%H:%M:%SZ), source $(git -C "$srcdir" describe --always --dirty 2>/dev/null || echo '?'), loadavg $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs"
echo

labels=$work/bin/labels
have_go=0
if want ingest || want memory || want attach; then
	"$srcdir/tests/helpers/go-build.sh" "$gover" plain "$srcdir/tests/workloads/go/labels.go" "$labels" && have_go=1
	[ $have_go = 1 ] || log "ingest-attach-memory.sh: no Go $gover toolchain: Go parts skipped"
fi

# --- 3. ingest throughput ----------------------------------------------------------------
if want ingest && [ $have_go = 1 ]; then
	log "ingest: recording 4 s of the labels workload (2 workers) at 10 kHz"
	# The libraries libgotop.a needs, as configure found them for the build directory.
	libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
		"$builddir/Makefile" 2>/dev/null)
	# shellcheck disable=SC2086 # a list of linker flags
	"$cc" -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/bin/ingest" \
		"$here/ingest.c" "$builddir/libgotop.a" ${libs:--ldw -lelf -lz} -lpthread || die "cannot build ingest"
	"$labels" -workers 2 -d 8s >/dev/null 2>&1 &
	lp=$!
	sleep 0.5
	"$work/bin/ingest" record "$lp" 4 10000 "$work/out/ingest.rec" 2>"$work/out/ingest-record.log" ||
		log "ingest: recording failed (see $work/out/ingest-record.log)"
	kill "$lp" 2>/dev/null
	wait "$lp" 2>/dev/null
	tsv=$work/ingest.tsv
	: >"$tsv"
	passes=6
	for r in $(seq 1 "$rounds"); do
		for cfg in default every nogo norepair; do
			case $cfg in
			default) opt=() ;;
			every) opt=(-c 0) ;;
			nogo) opt=(--no-go) ;;
			norepair) opt=(--no-repair) ;;
			esac
			"$work/bin/ingest" replay "$work/out/ingest.rec" -p $passes "${opt[@]}" \
				>"$work/out/ingest-$cfg-$r.out" 2>"$work/out/ingest-$cfg-$r.err"
			# cold = pass 1; warm = the median of passes 2..P of this process
			awk -v cfg=$cfg -v r=$r -F'[ =]' '
				/^pass=/ { for (i = 1; i < NF; i += 2) v[$(i)] = $(i + 1)
					if (v["pass"] == 1) { cold = v["rate"]; n = v["samples"] } else w[++k] = v["rate"] }
				/^stats/ { for (i = 2; i < NF; i += 2) st[$(i)] = $(i + 1) }
				END {
					for (i = 2; i <= k; i++) { t = w[i]; for (j = i - 1; j >= 1 && w[j] > t; j--) w[j + 1] = w[j]; w[j + 1] = t }
					warm = (k % 2) ? w[(k + 1) / 2] : (w[k / 2] + w[k / 2 + 1]) / 2
					printf "%s %s %s %s %s %s %s %s\n", cfg, r, n, cold, warm,
						(st["go"] ? st["labelled"] / st["go"] * 100 : "NA"),
						(st["samples"] ? st["repaired"] / st["samples"] * 100 : "NA"),
						(st["samples"] ? st["gort_reads"] / st["samples"] * 100 : "NA")
				}' "$work/out/ingest-$cfg-$r.out" >>"$tsv"
		done
	done
	rec_line=$(grep -a 'samples,' "$work/out/ingest-record.log" | head -1)
	setup=$(grep -a 'set-up' "$work/out/ingest-default-1.err" | sed 's/.*) //')
	echo "### 3. Ingest throughput (bench/ingest.c: record, then replay with no target)"
	echo
	echo "Recording: ${rec_line#ingest: }. Replay set-up (symbol tables, kallsyms, Go reader, not timed): $setup."
	echo "Rate = samples replayed / CPU time of the replaying thread; cold = first pass (every address symbolized),"
	echo "warm = median of passes 2 to $passes of the same process (addresses cached, as in a long session)."
	echo "Figures: median over $rounds processes (min to max)."
	echo
	echo "| replay | samples per pass | cold, samples/s | warm, samples/s | labelled, % of Go samples | repaired, % | Go reads, % of samples |"
	echo "|---|---|---|---|---|---|---|"
	for cfg in default every nogo norepair; do
		case $cfg in
		default) name="Go reading (one read per thread and 4 ms, like the sampler) + repair" ;;
		every) name="Go reading of every sample + repair" ;;
		nogo) name="no Go reading, repair" ;;
		norepair) name="Go reading, no repair" ;;
		esac
		grep "^$cfg " "$tsv" >"$tsv.$cfg"
		printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$name" "$(stats "$tsv.$cfg" 3 %.0f)" \
			"$(stats "$tsv.$cfg" 4 %.0f)" "$(stats "$tsv.$cfg" 5 %.0f)" "$(stats "$tsv.$cfg" 6)" \
			"$(stats "$tsv.$cfg" 7)" "$(stats "$tsv.$cfg" 8)"
	done
	echo
	w=$(medval "$tsv.default" 5)
	c=$(medval "$tsv.default" 4)
	echo "- Goal (>= 1,000,000 samples/s on one core, default replay): warm $w, cold $c: $(awk -v w="$w" -v c="$c" 'BEGIN { print (w >= 1e6 ? "met warm" : "NOT met warm") (c >= 1e6 ? ", met cold" : ", NOT met cold") }')"
	echo
fi

# --- 4. attach to first data -------------------------------------------------------------
if want attach; then
	tsv=$work/attach.tsv
	: >"$tsv"
	targets=()
	if [ $have_go = 1 ]; then
		goroot=$("$srcdir/tests/helpers/go-toolchain.sh" "$gover" 2>/dev/null)
		if [ -n "$goroot" ] && "$here/genbig.sh" go "$goroot" "$work/bin/biggo" >"$work/out/genbig-go.log" 2>&1; then
			targets+=("go")
		else
			log "attach: could not build the large Go program (see $work/out/genbig-go.log)"
		fi
	fi
	# The large C++ program: clang-14 (its code is in libLLVM-14 and libclang-cpp, about
	# 170 MB of C++), compiling a generated C file of many functions at -O2 for minutes.
	clang=$(command -v clang-14 || command -v clang)
	if [ -n "$clang" ]; then
		awk 'BEGIN { for (i = 0; i < 12000; i++) printf "unsigned long f%d(unsigned long x) { for (int i = 0; i < %d; i++) { x = x * %d + (x >> %d); if (x & 1) x ^= %d; } return x; }\n", i, i % 7 + 3, 2 * i + 1, i % 31 + 1, i
			print "int main(void) { return 0; }" }' >"$work/out/clangload.c"
		targets+=("clang")
	else
		log "attach: no clang-14 for the C++ target"
	fi
	echo "### 4. Attach to first data (bench/attach.sh)"
	echo
	echo "From just before \`gotop-perf -p PID --batch\` is started to the first output line naming the"
	echo "target's hot function (the first refresh showing symbols). $rounds attaches each, one after the other,"
	echo "to the same running target; median (min to max), ms."
	echo
	echo "| target | size | refresh | first output, ms | first symbolized refresh, ms | gotop-perf CPU until then, ms |"
	echo "|---|---|---|---|---|---|"
	for t in "${targets[@]}"; do
		case $t in
		go)
			bin=$work/bin/biggo func=main.hot name="Go, generated (bench/genbig.sh)"
			"$bin" 600s >/dev/null 2>&1 &
			tp=$!
			size=$(stat -c %s "$bin" | awk '{ printf "%.0f MB", $1 / 1e6 }')
			;;
		clang)
			# A mangled llvm:: name in the Top view (names are not demangled).
			bin=$(readlink -f "$clang") func=_ZN4llvm name="C++, $(basename "$bin") -O2 -c (libLLVM, libclang-cpp)"
			"$clang" -O2 -c -o /dev/null "$work/out/clangload.c" >/dev/null 2>&1 &
			tp=$!
			size=$(ldd "$bin" | awk '/LLVM|clang-cpp/ { print $3 }' | xargs stat -L -c %s "$bin" |
				awk '{ s += $1 } END { printf "%.0f MB with its C++ libraries", s / 1e6 }')
			;;
		esac
		sleep 1
		for d in default 0.1; do
			rf=
			[ $d = default ] || rf=$d
			"$here/attach.sh" "$gotop" "$tp" "$func" "$rounds" "$rf" >"$work/out/attach-$t-$d.out"
			sed 's/[a-z_]*=//g' "$work/out/attach-$t-$d.out" >"$work/out/attach-$t-$d.tsv"
			printf '| %s | %s | %s | %s | %s | %s |\n' "$name" \
				"$size" "$([ $d = default ] && echo "default (-d 1)" || echo "-d $d")" \
				"$(stats "$work/out/attach-$t-$d.tsv" 2)" "$(stats "$work/out/attach-$t-$d.tsv" 3)" \
				"$(stats "$work/out/attach-$t-$d.tsv" 4)"
			awk -v t=$t -v d=$d '{ print t, d, $0 }' "$work/out/attach-$t-$d.tsv" >>"$tsv"
		done
		kill "$tp" 2>/dev/null
		wait "$tp" 2>/dev/null
	done
	echo
	for t in "${targets[@]}"; do
		m=$(medval "$work/out/attach-$t-default.tsv" 3)
		echo "- Goal (< 300 ms to the first symbolized refresh, default settings), $t: $m ms: $(awk -v m="$m" 'BEGIN { print (m != "NA" && m < 300) ? "met" : "NOT met" }')"
	done
	echo
fi

# --- 5. memory ---------------------------------------------------------------------------
if want memory && [ $have_go = 1 ]; then
	log "memory: ${memsecs}s at 1 kHz on 16 busy threads (live --batch and record side by side)"
	"$here/memory.sh" "$gotop" "$work/mem" "$labels" "$memsecs" 16 1000 10 >/dev/null
	tsv=$work/mem/memory.tsv
	echo "### 5. Memory (bench/memory.sh): ${memsecs} s at 1 kHz, labels workload with 16 busy threads (GOMAXPROCS=16)"
	echo
	echo "Resident size (VmRSS) every 10 s; gotop-perf live --batch (-d 1) and gotop-perf record attached"
	echo "to the same target at the same time."
	echo
	echo "| time, s | live --batch RSS, MB | record RSS, MB | samples so far (live) |"
	echo "|---|---|---|---|"
	awk -F'\t' -v S="$memsecs" 'NR > 1 && ($1 <= 12 || ($1 % 60) < 10 || $1 >= S - 10) {
		printf "| %s | %.1f | %.1f | %s |\n", $1, $2 / 1024, $4 / 1024, $6 }' "$tsv"
	echo
	awk -F'\t' -v S="$memsecs" 'NR > 1 && $2 != "NA" {
			t[++n] = $1; l[n] = $2; r[n] = $4
		}
		END {
			# Least-squares slope over the second half of the run, KB per minute.
			for (i = 1; i <= n; i++) if (t[i] >= S / 2) { k++; sx += t[i]; sy += l[i]; sz += r[i]; sxx += t[i] * t[i]; sxy += t[i] * l[i]; sxz += t[i] * r[i] }
			d = k * sxx - sx * sx
			sl = d ? (k * sxy - sx * sy) / d * 60 : 0
			sr = d ? (k * sxz - sx * sz) / d * 60 : 0
			printf "- Goal (< 64 MB and flat): live %.1f MB at the end, growing %.0f KB/min over the second half; record %.1f MB, %.0f KB/min: %s\n",
				l[n] / 1024, sl, r[n] / 1024, sr,
				(l[n] < 65536 && r[n] < 65536 ? "under 64 MB" : "NOT under 64 MB") ((sl < 100 && sr < 100) ? ", flat (< 100 KB/min)" : ", NOT flat")
		}' "$tsv"
	echo
fi

# --- 6. verifier ---------------------------------------------------------------------------
echo "### 6. Verifier cost"
echo
echo "| figure | value |"
echo "|---|---|"
echo "| target stopped time per comparison, p50 / p99 | not measured yet (the verifier is being written) |"
echo "| share of wall time stopped | not measured yet |"
echo
