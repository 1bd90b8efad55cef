#!/bin/bash
# run.sh: gotop-perf's benchmarks: the target's slowdown and the profilers' own CPU against
# perf record and perf top, and the cost of Go reading and stack repair; writes raw figures
# and a Markdown summary. Not part of make check.
#
# Usage: bench/run.sh [OPTIONS]            (from the build directory, or give --gotop)
#   --only LIST       comma-separated subset of: slowdown-c, slowdown-go, gocost, syscost,
#                     ingest, attach, memory (default: the first four; `slowdown` =
#                     slowdown-c,slowdown-go, `cost` = gocost,syscost, `full` = the slowdown
#                     runs with --modes tools, then ingest, attach and memory via
#                     bench/ingest-attach-memory.sh)
#   --memory-seconds S  length of the memory run (default 600; ingest-attach-memory.sh)
#   --rates LIST      sampling frequencies in Hz, comma-separated (default 1000,10000)
#   --modes LIST      slowdown runs to interleave, comma-separated (default alone,gotop,perf);
#                     also: gotop-nostack (gotop-perf --stack-size 8 --no-repair --no-go),
#                     perf-nocg (perf record without -g), perf-stack (perf record
#                     --call-graph dwarf,1024: copies stack and registers like gotop-perf),
#                     live (the live UI: gotop-perf -p PID --batch -d 1, text to a file),
#                     perftop (perf top -g --stdio -d 1 under script(1) for a terminal;
#                     it does not stop with its target, so it gets SIGINT when the workload
#                     exits); `tools` = alone,gotop,live,perf,perftop
#   --rounds N        interleaved rounds per configuration (default 5)
#   --seconds S       length of one workload run alone, in seconds (default 2.5)
#   --go VERSION      Go toolchain for the Go workloads (default 1.23)
#   --gotop PATH      the gotop-perf binary (default $GOTOP_PERF, else ./gotop-perf)
#   --work DIR        where binaries, outputs and raw.tsv go (default: a new /tmp/gotop-bench.*)
#   --nice N          autogroup nice of the benchmark's own session (default -10 as root, else 0;
#                     0 leaves the scheduler alone; see bench/README.md)
#   --warmup S        let the workload run S seconds of untimed work after the start signal,
#                     so that the profilers' start-up work (symbol tables) is not in the timed
#                     part: the steady-state slowdown (default 0)
#   --pin             pin the workload to the last CPU and the profiler to CPU 0 (taskset), to
#                     see what the profiler's own threads cost when they share the target's CPU
#   --quick           --rounds 3 --seconds 1.5 (a smoke run, about two minutes)
#   --summarize FILE  only print the summary of an earlier raw.tsv
#
# Output: DIR/raw.tsv (one line per run), DIR/results.md (the tables), the latter also on
# stdout. Exit status 0, or 1 when something needed is missing. The method is in
# bench/README.md.

set -u

here=$(cd "$(dirname "$0")" && pwd)
orig_args=("$@")
srcdir=$(dirname "$here")

only=slowdown-c,slowdown-go,gocost,syscost
rates=1000,10000
modes=alone,gotop,perf
rounds=5
seconds=2.5
gover=1.23
gotop=${GOTOP_PERF:-./gotop-perf}
work=
nice_set=
summarize=
pin=0
warmup=0
memsecs=600

die() {
	echo "bench/run.sh: $*" >&2
	exit 1
}

while [ $# -gt 0 ]; do
	case $1 in
	--only) only=$2; shift ;;
	--rates) rates=$2; shift ;;
	--modes) modes=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--go) gover=$2; shift ;;
	--gotop) gotop=$2; shift ;;
	--work) work=$2; shift ;;
	--nice) nice_set=$2; shift ;;
	--quick) rounds=3; seconds=1.5 ;;
	--pin) pin=1 ;;
	--warmup) warmup=$2; shift ;;
	--memory-seconds) memsecs=$2; shift ;;
	--summarize) summarize=$2; shift ;;
	-h | --help)
		sed -n '2,/^$/p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
	[ $# -gt 0 ] && shift
done

if [ -n "$summarize" ]; then
	[ -f "$summarize" ] || die "no such file: $summarize"
	exec awk -f "$here/summarize.awk" "$summarize"
fi

# The groups of --only: each word of the list, expanded.
expanded=
for w in ${only//,/ }; do
	case $w in
	slowdown) w=slowdown-c,slowdown-go ;;
	cost) w=gocost,syscost ;;
	full)
		w=slowdown-c,slowdown-go,ingest,attach,memory
		[ "$modes" = alone,gotop,perf ] && modes=tools
		;;
	esac
	expanded=$expanded${expanded:+,}$w
done
only=$expanded
modes=${modes//tools/alone,gotop,live,perf,perftop}
want() {
	case ",$only," in *",$1,"*) return 0 ;; esac
	return 1
}
for w in ${only//,/ }; do
	case $w in slowdown-c | slowdown-go | gocost | syscost | ingest | attach | memory) ;;
	*) die "unknown benchmark '$w'" ;; esac
done
for m in ${modes//,/ }; do
	case $m in alone | gotop | gotop-nostack | live | perf | perf-nocg | perf-stack | perftop) ;;
	*) die "unknown mode '$m'" ;; esac
done
case $rounds in '' | *[!0-9]*) die "--rounds wants a number" ;; esac
[ "$rounds" -ge 1 ] || die "--rounds wants at least 1"
awk -v s="$seconds" 'BEGIN { exit !(s + 0 > 0) }' || die "--seconds wants a positive number"
awk -v s="$warmup" 'BEGIN { exit !(s + 0 >= 0) }' || die "--warmup wants a number of seconds"

# --- own session and scheduling group ---------------------------------------------------
# The machine may be shared: with autogroup scheduling, nice(1) has no effect across
# sessions, so the benchmark runs in its own session whose autogroup gets --nice.
if [ -z "${GOTOP_BENCH_INNER:-}" ]; then
	export GOTOP_BENCH_INNER=1
	setsid "$0" "${orig_args[@]}" &
	inner=$!
	trap 'kill -TERM -- -$inner 2>/dev/null; kill -TERM $inner 2>/dev/null' INT TERM
	wait $inner
	rc=$?
	# wait returns early when a trapped signal arrives: wait for the cleanup too.
	while kill -0 $inner 2>/dev/null; do wait $inner; rc=$?; done
	exit $rc
fi

if [ -z "$nice_set" ]; then
	if [ "$(id -u)" = 0 ]; then nice_set=-10; else nice_set=0; fi
fi
if [ "$nice_set" != 0 ] && [ -w /proc/self/autogroup ]; then
	echo "$nice_set" >/proc/$$/autogroup 2>/dev/null ||
		echo "bench/run.sh: cannot set autogroup nice $nice_set; going on without" >&2
fi
autogroup=$(cat /proc/$$/autogroup 2>/dev/null || echo "no autogroup")

# --- tools and binaries -----------------------------------------------------------------
case $gotop in /*) ;; *) gotop=$(pwd)/$gotop ;; esac
[ -x "$gotop" ] || die "no gotop-perf at $gotop (run from the build directory or give --gotop)"
"$gotop" --version >/dev/null 2>&1 || die "$gotop does not run"
if want slowdown-c || want slowdown-go; then
	command -v perf >/dev/null || die "perf is needed (Debian: linux-perf)"
	case ",$modes," in *,perftop,*)
		command -v script >/dev/null || die "perf top needs script(1) for a terminal (util-linux)" ;;
	esac
fi
cc=${CC:-cc}
command -v "$cc" >/dev/null || die "no C compiler ($cc)"

if [ -z "$work" ]; then
	work=$(mktemp -d /tmp/gotop-bench.XXXXXX) || die "cannot create a work directory"
fi
mkdir -p "$work/bin" "$work/out" || die "cannot create $work"
raw=$work/raw.tsv
ncpus=$(nproc)

pids_to_kill=
cleanup() {
	local p
	for p in $pids_to_kill; do kill -TERM "$p" 2>/dev/null; done
}
trap 'cleanup; exit 130' INT TERM

"$cc" -O2 -Wall -o "$work/bin/cputime" "$here/cputime.c" || die "cannot build cputime"
"$cc" -O2 -g -fno-omit-frame-pointer -pthread -o "$work/bin/spin" "$here/spin.c" ||
	die "cannot build spin"
if want syscost; then
	"$cc" -O2 -Wall -pthread -o "$work/bin/syscost" "$here/syscost.c" || die "cannot build syscost"
fi
have_go=0
if want slowdown-go || want gocost; then
	"$srcdir/tests/helpers/go-build.sh" "$gover" plain "$here/gospin.go" "$work/bin/gospin" &&
		"$srcdir/tests/helpers/go-build.sh" "$gover" plain "$srcdir/tests/workloads/go/labels.go" \
			"$work/bin/labels" && have_go=1
	[ $have_go = 1 ] || echo "bench/run.sh: no Go $gover toolchain: Go benchmarks skipped" >&2
fi
cputime=$work/bin/cputime
wl_pin=()
prof_pin=()
if [ $pin = 1 ]; then
	command -v taskset >/dev/null || die "--pin needs taskset (util-linux)"
	[ "$ncpus" -ge 2 ] || die "--pin needs at least 2 CPUs"
	wl_pin=(taskset -c $((ncpus - 1)))
	prof_pin=(taskset -c 0)
fi

# --- helpers ----------------------------------------------------------------------------
log() {
	printf '%s\n' "$*" >&2
}

# rotate N ITEMS...: the items, rotated left by N-1 places.
rotate() {
	local n=$1
	shift
	local a=("$@") k=$(((n - 1) % $#)) i
	for ((i = 0; i < ${#a[@]}; i++)); do
		printf '%s ' "${a[$(((i + k) % ${#a[@]}))]}"
	done
}

# wait_file_line FILE PATTERN TIMEOUT_S: waits until FILE has a line matching PATTERN.
wait_file_line() {
	local i=0 n
	n=$(awk -v t="$3" 'BEGIN { print int(t * 100) }')
	while [ $i -lt "$n" ]; do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}

# perf_fds PID: number of perf_event file descriptors PID holds.
perf_fds() {
	local n=0 f
	for f in /proc/"$1"/fd/*; do
		case $(readlink "$f" 2>/dev/null) in *perf_event*) n=$((n + 1)) ;; esac
	done
	echo $n
}

# wait_attached PID: waits until the profiler PID has at least one perf event per CPU
# open, then 0.3 s more for it to map the rings, synthesize and enable.
wait_attached() {
	local i=0
	while [ $i -lt 1000 ]; do
		kill -0 "$1" 2>/dev/null || return 1
		[ "$(perf_fds "$1")" -ge "$ncpus" ] && { sleep 0.3; return 0; }
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}

# task_cpu_ms PID: CPU time of all PID's live threads so far, in ms (from schedstat, ns resolution).
task_cpu_ms() {
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%.3f\n", s / 1e6 }'
}

# task_cpu_ns_builtin PID: the same in ns with bash builtins only (no fork: cheap enough to
# poll while the workload runs); prints nothing when PID is gone.
task_cpu_ns_builtin() {
	local f a s=0 n=0
	for f in /proc/"$1"/task/*/schedstat; do
		{ read -r a _ <"$f"; } 2>/dev/null || continue
		s=$((s + a))
		n=$((n + 1))
	done
	[ $n -gt 0 ] && echo $s
}

# watch_cpu PROFPID WLPID FILE: writes the profiler's thread CPU (ns) to FILE every 50 ms
# while the workload runs. The live UI exits with its target, so a reading taken after the
# workload's exit would miss its threads: the last reading before the exit is used.
watch_cpu() {
	local v
	while kill -0 "$2" 2>/dev/null; do
		v=$(task_cpu_ns_builtin "$1")
		[ -n "$v" ] && echo "$v" >"$3"
		sleep 0.05
	done
}

# start_profiler MODE RATE TARGETPID TAG [EXTRA...]: starts the profiler under cputime;
# sets prof_wrapper (the cputime pid) and prof_pid (the profiler's).
start_profiler() {
	local mode=$1 rate=$2 tpid=$3 tag=$4
	shift 4
	rm -f "$work/out/$tag.time"
	case $mode in
	gotop-nostack) set -- --stack-size 8 --no-repair --no-go "$@" ;;
	perf) set -- -g "$@" ;;
	perf-stack) set -- --call-graph dwarf,1024 "$@" ;;
	esac
	case $mode in
	live)
		"$cputime" "$work/out/$tag.time" "${prof_pin[@]}" "$gotop" -p "$tpid" -e cpu-clock -F "$rate" \
			--batch -d 1 --rows 25 "$@" >"$work/out/$tag.out" 2>"$work/out/$tag.log" &
		;;
	perftop)
		# perf top wants a terminal: script(1) gives it one; its screen goes to tag.out.
		"$cputime" "$work/out/$tag.time" "${prof_pin[@]}" script -qfc \
			"perf top -g --stdio -e cpu-clock -F $rate -p $tpid -d 1 $*" "$work/out/$tag.out" \
			</dev/null >"$work/out/$tag.log" 2>&1 &
		;;
	gotop*)
		"$cputime" "$work/out/$tag.time" "${prof_pin[@]}" "$gotop" record -p "$tpid" -e cpu-clock -F "$rate" \
			-o "$work/out/$tag.pb.gz" -v "$@" >"$work/out/$tag.log" 2>&1 &
		;;
	perf*)
		"$cputime" "$work/out/$tag.time" "${prof_pin[@]}" perf record "$@" -e cpu-clock -F "$rate" -p "$tpid" \
			-o "$work/out/$tag.data" >"$work/out/$tag.log" 2>&1 &
		;;
	esac
	prof_wrapper=$!
	pids_to_kill="$pids_to_kill $prof_wrapper"
	wait_file_line "$work/out/$tag.time" '^pid ' 5 || return 1
	prof_pid=$(awk '/^pid / { print $2 }' "$work/out/$tag.time")
	if [ "$mode" = perftop ]; then
		# The profiler is script's child.
		local i=0 c=
		while [ $i -lt 500 ] && [ -z "$c" ]; do
			c=$(cat /proc/"$prof_pid"/task/*/children 2>/dev/null | awk '{ print $1; exit }')
			[ -n "$c" ] || sleep 0.01
			i=$((i + 1))
		done
		[ -n "$c" ] || return 1
		prof_pid=$c
	fi
	wait_attached "$prof_pid"
}

# finish_profiler: waits (bounded) for the profiler to end after its target exited.
finish_profiler() {
	local i=0
	while kill -0 "$prof_wrapper" 2>/dev/null && [ $i -lt 6000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	if kill -0 "$prof_wrapper" 2>/dev/null; then
		log "  profiler did not stop after its target: interrupting it"
		kill -INT "$prof_pid" 2>/dev/null
		sleep 2
		kill -KILL "$prof_pid" 2>/dev/null
	fi
	wait "$prof_wrapper" 2>/dev/null
}

# prof_fields TAG MODE: prints "user sys wall samples lost sampler_ms go_samples goid
# labelled repaired" (NA where a tool does not say).
prof_fields() {
	local tag=$1 mode=$2 t
	t=$(awk '/^user=/ { gsub(/[a-z]+=/, ""); print $1, $2, $3 }' "$work/out/$tag.time" 2>/dev/null)
	[ -n "$t" ] || t="NA NA NA"
	case $mode in
	live)
		# The last batch header: "cpu-clock 1000 Hz  N samples/s  lost L ..." and
		# "cumulative  N samples".
		awk -v t="$t" '
			/samples\/s  lost / { for (i = 1; i <= NF; i++) if ($(i) == "lost") l = $(i+1) }
			/^cumulative / { for (i = 2; i < NF; i++) if ($(i+1) == "samples") s = $(i) }
			END { printf "%s %s %s NA NA NA NA NA\n", t, (s == "" ? "NA" : s), (l == "" ? "NA" : l) }' \
			"$work/out/$tag.out"
		;;
	perftop)
		# perf top prints no total: NA (the summary estimates samples from the target's CPU).
		echo "$t NA NA NA NA NA NA NA"
		;;
	gotop*)
		awk -v t="$t" '
			/ samples, .* lost,/ { for (i = 1; i <= NF; i++) { if ($(i) ~ /^samples,/) s = $(i-1); if ($(i) ~ /^lost,/) l = $(i-1) } }
			/sampler cpu/ { for (i = 1; i <= NF; i++) if ($(i) == "cpu") ms = $(i+1) }
			/^gotop-perf: aggregated/ {
				for (i = 1; i <= NF; i++) {
					if ($(i) == "go:") gs = $(i+1)
					if ($(i) == "goroutine,") gid = $(i-2)
					if ($(i) ~ /^labelled/) lab = $(i-1)
					if ($(i) == "repaired") rep = $(i-1)
				}
			}
			END { printf "%s %s %s %s %s %s %s %s\n", t, (s == "" ? "NA" : s), (l == "" ? "NA" : l),
				(ms == "" ? "NA" : ms), (gs == "" ? "NA" : gs), (gid == "" ? "NA" : gid),
				(lab == "" ? "NA" : lab), (rep == "" ? "NA" : rep) }' "$work/out/$tag.log"
		;;
	perf*)
		local s l
		s=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$work/out/$tag.log" | tail -1)
		l=$(perf report -i "$work/out/$tag.data" --stats 2>/dev/null |
			awk '/LOST events:/ { n += $3 } END { print n + 0 }')
		echo "$t ${s:-NA} ${l:-NA} NA NA NA NA NA"
		;;
	esac
}

# run_slowdown WL RATE MODE ROUND UNITS WARM: one workload run of UNITS (after WARM untimed
# units), alone or profiled.
run_slowdown() {
	local wl=$1 rate=$2 mode=$3 round=$4 units=$5 warm=$6 tag wpid res pf c0=0 c1=0 inrun=NA
	tag=$wl-$rate-$mode-$round
	case $wl in
	c) "${wl_pin[@]}" "$work/bin/spin" -w -n "$units" -W "$warm" >"$work/out/$tag.wl" 2>&1 & ;;
	go) "${wl_pin[@]}" "$work/bin/gospin" -w -n "$units" -warm "$warm" >"$work/out/$tag.wl" 2>&1 & ;;
	esac
	wpid=$!
	pids_to_kill="$pids_to_kill $wpid"
	if ! wait_file_line "$work/out/$tag.wl" '^ready' 10; then
		log "  $tag: workload did not start"
		kill "$wpid" 2>/dev/null
		return 1
	fi
	if [ "$mode" != alone ] && ! start_profiler "$mode" "$rate" "$wpid" "$tag"; then
		log "  $tag: profiler did not attach (see $work/out/$tag.log)"
		kill "$wpid" 2>/dev/null
		return 1
	fi
	local watcher=
	if [ "$mode" != alone ]; then
		c0=$(task_cpu_ms "$prof_pid")
		rm -f "$work/out/$tag.cpu"
		watch_cpu "$prof_pid" "$wpid" "$work/out/$tag.cpu" &
		watcher=$!
	fi
	kill -USR1 "$wpid"
	wait "$wpid"
	if [ "$mode" != alone ]; then
		c1=$(task_cpu_ms "$prof_pid")
		wait "$watcher"
		# The live UI's threads end with its target (the reading now misses them, or the
		# process is gone): the larger of the reading now and the last one before the exit.
		c1=$(awk -v a="$c1" '{ b = $1 / 1e6 } END { printf "%.3f\n", (b > a + 0 ? b : a) }' \
			"$work/out/$tag.cpu" 2>/dev/null || echo "$c1")
	fi
	# perf top does not stop when its target exits.
	[ "$mode" = perftop ] && kill -INT "$prof_pid" 2>/dev/null
	[ "$mode" != alone ] && finish_profiler
	res=$(awk '/^units=/ { gsub(/[a-z]+=/, ""); print $1, $2, $3 }' "$work/out/$tag.wl")
	[ -n "$res" ] || { log "  $tag: no result from the workload"; return 1; }
	if [ "$mode" = alone ]; then
		pf="NA NA NA NA NA NA NA NA NA NA"
	else
		pf=$(prof_fields "$tag" "$mode")
		inrun=$(awk -v a="$c0" -v b="$c1" 'BEGIN { if (a == "" || b == "" || b < a) print "NA"; else printf "%.3f\n", b - a }')
	fi
	printf 'slowdown\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$rate" "$mode" "$round" \
		"$(echo "$res" | tr ' ' '\t')" "$(echo "$pf" | tr ' ' '\t')" "$inrun" >>"$raw"
	log "  $tag: $res | $pf | in-run ${inrun} ms"
}

# calibrate WL: prints the units that take about --seconds alone.
calibrate() {
	local wl=$1 bin out
	case $wl in c) bin=$work/bin/spin ;; go) bin=$work/bin/gospin ;; esac
	out=$("$bin" -n 400 | awk '/^units=/ { gsub(/[a-z]+=/, ""); print $1, $2 }')
	awk -v r="$out" -v s="$seconds" 'BEGIN { split(r, a, " "); u = int(a[1] * s / a[2]); if (u < 50) u = 50; print u }'
}

# run_gocost RATE CONFIG ROUND: gotop-perf on the labels workload (2 workers, --seconds).
run_gocost() {
	local rate=$1 cfg=$2 round=$3 tag wpid pf extra=
	tag=gocost-$rate-$cfg-$round
	case $cfg in
	full) ;;
	nogo) extra=--no-go ;;
	norepair) extra=--no-repair ;;
	none) extra="--no-go --no-repair" ;;
	esac
	"${wl_pin[@]}" "$work/bin/labels" -workers 2 -d "${seconds}s" >"$work/out/$tag.wl" 2>&1 &
	wpid=$!
	pids_to_kill="$pids_to_kill $wpid"
	# shellcheck disable=SC2086
	if ! start_profiler "gotop-$cfg" "$rate" "$wpid" "$tag" $extra; then
		log "  $tag: gotop-perf did not attach (see $work/out/$tag.log)"
		wait "$wpid"
		return 1
	fi
	wait "$wpid"
	finish_profiler
	pf=$(prof_fields "$tag" gotop)
	printf 'gocost\tlabels\t%s\t%s\t%s\tNA\tNA\tNA\t%s\tNA\n' "$rate" "$cfg" "$round" \
		"$(echo "$pf" | tr ' ' '\t')" >>"$raw"
	log "  $tag: $pf"
}

# --- the run ----------------------------------------------------------------------------
{
	echo "# machine: $(nproc) CPUs, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)," \
		"kernel $(uname -r)"
	echo "# virtualization: vm $(systemd-detect-virt -v 2>/dev/null || echo none)$(grep -q hypervisor /proc/cpuinfo && echo ' (hypervisor flag set)'), container $(systemd-detect-virt -c 2>/dev/null || echo none)"
	echo "# loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "# scheduling: $autogroup"
	echo "# perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid), perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
	echo "# gotop-perf: $("$gotop" --version 2>&1 | head -1) (source $(git -C "$srcdir" describe --always --dirty 2>/dev/null || echo 'not a git checkout')), perf: $(perf --version 2>/dev/null), go $gover"
	echo "# rounds $rounds, seconds $seconds, rates $rates, modes $modes, pinned $pin, warm-up ${warmup}s, started $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'bench\twl\trate\tmode\tround\tunits\twl_wall\twl_cpu\tprof_user\tprof_sys\tprof_wall\tsamples\tlost\tsampler_ms\tgo_samples\twith_goid\tlabelled\trepaired\tprof_inrun_ms\n'
} >"$raw"

t0=$(date +%s)
for wl in c go; do
	want "slowdown-$wl" || continue
	[ $wl = go ] && [ $have_go = 0 ] && continue
	units=$(calibrate $wl)
	warm=$(awk -v u="$units" -v w="$warmup" -v s="$seconds" 'BEGIN { print int(u * w / s) }')
	log "slowdown-$wl: $units units per run (about ${seconds}s alone), $warm warm-up units"
	for rate in ${rates//,/ }; do
		for round in $(seq 1 "$rounds"); do
			# Rotate the order each round so that no mode always runs first or
			# right after another one.
			for mode in $(rotate "$round" ${modes//,/ }); do
				run_slowdown $wl "$rate" $mode "$round" "$units" "$warm"
			done
		done
	done
done
if want gocost && [ $have_go = 1 ]; then
	log "gocost: labels workload, 2 workers, ${seconds}s per run"
	for rate in ${rates//,/ }; do
		for round in $(seq 1 "$rounds"); do
			for cfg in $(rotate "$round" full nogo norepair none); do
				run_gocost "$rate" $cfg "$round"
			done
		done
	done
fi
if want syscost; then
	log "syscost: process_vm_readv and wakeup costs"
	for round in $(seq 1 "$rounds"); do
		"$work/bin/syscost" 20000 | while read -r name us; do
			printf 'syscost\t%s\tNA\tNA\t%s\tNA\t%s\n' "$name" "$round" "$us" >>"$raw"
		done
	done
fi
parts=
for w in ingest attach memory; do want $w && parts=$parts${parts:+,}$w; done
if [ -n "$parts" ]; then
	log "ingest, attach, memory: $parts (bench/ingest-attach-memory.sh)"
	"$here/ingest-attach-memory.sh" --gotop "$gotop" --work "$work" --parts "$parts" \
		--rounds "$rounds" --memory-seconds "$memsecs" --go "$gover" >"$work/ingest-attach-memory.md" ||
		log "bench/ingest-attach-memory.sh failed (see $work/ingest-attach-memory.md)"
fi
echo "# loadavg at end: $(cut -d' ' -f1-3 /proc/loadavg), $(($(date +%s) - t0)) s" >>"$raw"

awk -f "$here/summarize.awk" "$raw" >"$work/results.md"
[ -s "$work/ingest-attach-memory.md" ] && cat "$work/ingest-attach-memory.md" >>"$work/results.md"
cat "$work/results.md"
log "raw figures: $raw; summary: $work/results.md"
