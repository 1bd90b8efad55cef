# tests/helpers/lib.sh: TAP helpers and shared setup for gotop-perf's shell tests (sourced, POSIX sh).

: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
: "${GOTOP_PERF:=$TOP_BUILDDIR/gotop-perf}"

tap_n=0
tap_failed=0
T=$(mktemp -d "${TMPDIR:-/tmp}/gotop-test.XXXXXX")
bg_pids=""

cleanup() {
	# Only processes that are still our own children: a pid whose process ended may
	# already belong to someone else (pid_max is 32768 on many machines, and wraps fast).
	for p in $bg_pids; do
		[ "$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | cut -d' ' -f2)" = "$$" ] && kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	rm -rf "$T" ${gp_wrap:+"$gp_wrap"}
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# GOTOP_WRAP="valgrind ...": gotop-perf runs under that command (tests/sanitize.sh), the
# workloads it starts do not. The wrapper execs, so its pid is gotop-perf's; it lives
# outside $T so that tests running gotop-perf as nobody can execute it.
if [ -n "${GOTOP_WRAP:-}" ]; then
	gp_wrap=$(mktemp "${TMPDIR:-/tmp}/gotop-wrap.XXXXXX")
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$GOTOP_WRAP" "$GOTOP_PERF" >"$gp_wrap"
	chmod 755 "$gp_wrap"
	GOTOP_PERF=$gp_wrap
fi

# The Go releases the per-release tests run on: the oldest supported, the last with the
# map label layout, the newest. GOTOP_GO_VERSIONS overrides it (tests/sanitize.sh: 1.23).
GO_VERSIONS=${GOTOP_GO_VERSIONS:-1.19 1.23 1.27}
# The one release of the tests that need a Go workload but not every release.
GO_VERSION=${GOTOP_GO_VERSION:-1.23}
# plan_per_version N [M]: the plan of a test with N checks per release of GO_VERSIONS and M more.
plan_per_version() { plan $(($(echo $GO_VERSIONS | wc -w) * $1 + ${2:-0})); }

# gp_slow: how many times a bound meant to catch a hang (not to measure) is stretched:
# under valgrind gotop-perf needs 15-20 times the CPU, and CI runs two such tests at once.
if [ -n "${GOTOP_WRAP:-}" ]; then gp_slow=4; else gp_slow=1; fi

plan() { echo "1..$1"; }
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $*"; }
not_ok() { tap_n=$((tap_n + 1)); echo "not ok $tap_n - $*"; tap_failed=1; }
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $*"; }
skip_all() { echo "1..0 # SKIP $*"; exit 0; }
# skip_n N REASON: N checks skipped for one reason.
skip_n() {
	skn=$1
	while [ "$skn" -gt 0 ]; do
		skip "$2"
		skn=$((skn - 1))
	done
}
diag() { echo "# $*"; }
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
	d=$1
	shift
	if "$@"; then ok "$d"; else not_ok "$d"; fi
}
# diag_file FILE: show a file's first lines as TAP comments (on failure).
diag_file() { sed -n '1,40p' "$1" | sed 's/^/#   /'; }

# encode TEXT OUT: a profile in protobuf text format (lines starting with # left out) to
# pprof's binary format, by protoc-c against pprof's own profile.proto; its errors in
# $T/encode.err.
: "${PROTOC_C:=protoc-c}"
: "${PPROF_PROTO:=/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto}"
encode() {
	grep -v '^#' "$1" | "$PROTOC_C" --proto_path="$(dirname "$PPROF_PROTO")" \
		--encode=perftools.profiles.Profile "$(basename "$PPROF_PROTO")" >"$2" 2>"$T/encode.err"
}

# A background process we must not leave behind.
track() { bg_pids="$bg_pids $1"; }

# Needs perf_event_open on our own children with the kernel included or not.
need_perf() {
	if ! "$GOTOP_PERF" list >"$T/list.txt" 2>&1; then
		skip_all "gotop-perf list failed: $(head -1 "$T/list.txt")"
	fi
	if ! grep -q '^cpu-clock .* yes ' "$T/list.txt"; then
		skip_all "cpu-clock cannot be sampled here: $(grep '^cpu-clock' "$T/list.txt")"
	fi
}

# tracefs_ready: tracefs is mounted (its events directory in /sys/kernel/tracing or
# /sys/kernel/debug/tracing), mounted here as root when it is not, as systemd does at boot
# (a fresh machine without systemd has none). It stays mounted: tests running beside this
# one may be using it. Status 1 with the reason in tracefs_why when it cannot be had.
tracefs_ready() {
	tracefs_why=""
	if [ -d /sys/kernel/tracing/events ] || [ -d /sys/kernel/debug/tracing/events ]; then
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		tracefs_why="tracefs is not mounted, and mounting it needs root (mount -t tracefs nodev /sys/kernel/tracing)"
		return 1
	fi
	mount -t tracefs nodev /sys/kernel/tracing 2>"$T/tracefs.err"
	[ -d /sys/kernel/tracing/events ] && return 0
	# Kernels before 4.1, or no /sys/kernel/tracing: tracefs appears in debugfs's tracing.
	[ -d /sys/kernel/debug/tracing ] || mount -t debugfs nodev /sys/kernel/debug 2>>"$T/tracefs.err"
	[ -d /sys/kernel/debug/tracing/events ] && return 0
	tracefs_why="tracefs is not mounted and could not be: $(head -1 "$T/tracefs.err")"
	return 1
}

# go_root VERSION: prints the GOROOT of a toolchain (installing it), or nothing.
go_root() { "$TOP_SRCDIR/tests/helpers/go-toolchain.sh" "$1" 2>"$T/go-toolchain.err"; }

# The pprof used to check our output: Go's own, from any available toolchain.
pprof_setup() {
	for v in ${GOTOP_PPROF_GO:-$GO_VERSION $GO_VERSIONS}; do
		r=$(go_root "$v") || continue
		if [ -x "$r/bin/go" ]; then
			PPROF_GOROOT=$r
			return 0
		fi
	done
	return 1
}
pprof() {
	GOROOT=$PPROF_GOROOT GOTOOLCHAIN=local GOCACHE="$T/gocache" HOME="$T" \
		PPROF_TMPDIR="$T" "$PPROF_GOROOT/bin/go" tool pprof "$@"
}

# need_pprof: the whole test is skipped without go tool pprof.
need_pprof() { pprof_setup || skip_all "no Go toolchain for go tool pprof: $(cat "$T/go-toolchain.err")"; }

# go_build VERSION VARIANT SRC OUT: builds a Go workload; 77 when no toolchain.
go_build() { "$TOP_SRCDIR/tests/helpers/go-build.sh" "$@"; }
# go_build_or_skip N VERSION VARIANT SRC OUT: go_build; when it fails, N checks are skipped
# with the reason (toolchain unavailable, or the build's first error line) and it returns 1.
go_build_or_skip() {
	gbs_n=$1
	shift
	go_build "$@" >"$T/build.err" 2>&1
	gbs_rc=$?
	[ $gbs_rc -eq 0 ] && return 0
	skip_n "$gbs_n" "$([ $gbs_rc -eq 77 ] && echo "Go $1 unavailable" || echo "go$1: build failed: $(head -1 "$T/build.err")")"
	return 1
}

# wait_for_threads PID N: until the process has at least N threads (max ~5 s).
wait_for_threads() {
	i=0
	while [ $i -lt 50 ]; do
		n=$(ls "/proc/$1/task" 2>/dev/null | wc -l)
		[ "$n" -ge "$2" ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# running PID: the process exists, is not a zombie, and no thread of it is stopped or traced.
running() {
	[ -d "/proc/$1" ] || return 1
	! thread_states "$1" | grep -q '^[TtZX]$' && untraced "$1"
}
# untraced PID: no thread of the process has a tracer or is in a tracing stop.
untraced() {
	! grep -h TracerPid "/proc/$1"/task/*/status 2>/dev/null | awk '$2 != 0 { f = 1 } END { exit !f }' &&
		! thread_states "$1" | grep -q '^t$'
}
# thread_states PID: the state letter of each thread (/proc/PID/task/*/stat), one a line.
thread_states() {
	for st in /proc/"$1"/task/*/stat; do
		sed 's/.*) //' "$st" 2>/dev/null | cut -d' ' -f1
	done
}
# truth COMMAND...: "true" or "false", as the command succeeds, for a condition inside sh -c.
truth() { if "$@"; then echo true; else echo false; fi; }
# cmd_pids PROGRAM [ARGS...]: the pids of processes whose command line is PROGRAM ARGS (with
# only PROGRAM: PROGRAM with any arguments), from ps.
cmd_pids() {
	ps -eo pid=,args= | awk -v cmd="$*" -v any=$(($# == 1)) '
		{ pid = $1; sub(/^ *[0-9]+ /, "")
		  if ($0 == cmd || (any && index($0, cmd " ") == 1)) print pid }'
}

# wait_line FILE ERE [SECONDS]: until a line of FILE matches ERE (a program saying it is
# ready), at most SECONDS (10 unless given, times gp_slow); status 1 when none did.
wait_line() {
	_wl=0
	while ! grep -Eq "$2" "$1" 2>/dev/null; do
		[ $_wl -lt $((${3:-10} * 10 * gp_slow)) ] || return 1
		sleep 0.1
		_wl=$((_wl + 1))
	done
}
finish() { exit $tap_failed; }

# pprof_total FILE [COLUMN [OPTIONS...]]: sum of sample value COLUMN (1-based, default 2) from
# `go tool pprof -raw` (an independent decoder of our output); OPTIONS such as
# -tagfocus=handler=. select samples.
pprof_total() {
	ptf=$1 ptc=${2:-2}
	shift
	[ $# -gt 0 ] && shift
	pprof -raw "$@" "$ptf" 2>/dev/null | awk -v col="$ptc" '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 0 }
		s && /^ *[0-9]+ +[0-9]+:/ { sub(":", "", $col); t += $col }
		END { printf "%.0f\n", t }'
}

# pprof_flat FILE [OPTIONS...]: "function flat%" lines from `go tool pprof -top`.
pprof_flat() {
	f=$1
	shift
	pprof -top -nodecount=100000 "$@" "$f" 2>/dev/null | awk '
		/^ *flat +flat%/ { s = 1; next }
		s && NF >= 6 { p = $2; sub("%", "", p); print $6, p }'
}

# pprof_stacks FILE [OPTIONS...]: one line per trace of `go tool pprof -traces`:
# "WEIGHT leaf;caller;...;root" with WEIGHT in the profile's unit (ns for cpu).
pprof_stacks() {
	f=$1
	shift
	pprof -traces "$@" "$f" 2>/dev/null | awk '
		function val(v,   n) {
			n = v; sub(/[a-z]+$/, "", n)
			if (v ~ /ns$/) return n; if (v ~ /us$/) return n * 1e3
			if (v ~ /ms$/) return n * 1e6; if (v ~ /s$/) return n * 1e9
			return n
		}
		/^-+\+/ { if (s != "") print w, s; s = ""; next }
		/^ +[0-9.]+[a-z]* +[^ ]/ && $1 ~ /^[0-9.]+[a-z]*$/ { w = val($1); s = $2; next }
		/^             [^ ]/ && s != "" { s = s ";" $1 }
		END { if (s != "") print w, s }'
}

# parent_share STACKS FUNC PARENT: percent of FUNC's weight (FUNC as the first non-kernel
# frame) whose next frame is PARENT; runtime.duffcopy/duffzero under FUNC count as FUNC.
parent_share() {
	awk -v fn="$2" -v parent="$3" '
		{ n = split($2, fr, ";"); i = 1
		  while (i <= n && fr[i] !~ /^(main|runtime)\./) i++    # skip kernel frames
		  if (fr[i] == "runtime.duffcopy" || fr[i] == "runtime.duffzero") i++
		  if (fr[i] != fn) next
		  tot += $1; if (fr[i + 1] == parent) good += $1 }
		END { if (tot == 0) print "0 0"; else printf "%.2f %d\n", 100 * good / tot, tot }' "$1"
}

# prometheus_start BIN: Debian's Prometheus (tests/helpers/debian-service.sh) on a port of
# its own choosing, its files under $T/prom: with the configuration a test wrote to
# $T/prom/prom.yml, else one scraping nothing. Sets prom (its PID, tracked) and port.
# Returns 1, its log in the diagnostics, when it did not listen in time.
prometheus_start() {
	mkdir -p "$T/prom"
	[ -f "$T/prom/prom.yml" ] || printf 'global:\n  scrape_interval: 15s\n' >"$T/prom/prom.yml"
	"$1" --config.file="$T/prom/prom.yml" --web.listen-address=127.0.0.1:0 \
		--storage.tsdb.path="$T/prom/data" >"$T/prom/log" 2>&1 &
	prom=$!
	track $prom
	port=
	ps_i=0
	while [ $ps_i -lt $((150 * gp_slow)) ] && [ -z "$port" ]; do
		port=$(sed -n 's/.*msg="Listening on".*address=127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$T/prom/log")
		[ -n "$port" ] || sleep 0.2
		ps_i=$((ps_i + 1))
	done
	[ -n "$port" ] && return 0
	diag_file "$T/prom/log"
	return 1
}
