#!/bin/sh
# goruntime-live.sh: goroutine ids and pprof labels read by gort from live Go processes (1.19 to 1.27).
#
# For each Go version and build variant (plain: DWARF offsets; stripped: table offsets; pie),
# a program whose goroutines are locked to threads under known labels writes its own account
# (thread, goroutine id, labels as pprof.ForLabels sees them); tests/goruntime-live stops its
# threads with ptrace and checks gort_read against that account. Also: the offsets gort takes
# from DWARF against gdb's `ptype /o`, and arm64 binaries' DWARF against the version table.
# GOTOP_GORT_VERSIONS overrides the versions; GOTOP_GORT_ROUNDS the stops per process.

. "${TOP_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}/tests/helpers/lib.sh"

CHECK=$TOP_BUILDDIR/tests/goruntime-live
versions=${GOTOP_GORT_VERSIONS:-1.19 1.23 1.24 1.26 1.27}
rounds=${GOTOP_GORT_ROUNDS:-40}

[ "$(uname -m)" = x86_64 ] || skip_all "the live check reads amd64 registers (R14) with ptrace"
[ -x "$CHECK" ] || skip_all "$CHECK not built"
if [ -r /proc/sys/kernel/yama/ptrace_scope ] && [ "$(id -u)" != 0 ] &&
	[ "$(cat /proc/sys/kernel/yama/ptrace_scope)" != 0 ]; then
	skip_all "ptrace of a child is not allowed (yama ptrace_scope)"
fi

# The workload: goroutines locked to threads, labels from pprof.Do (Go 1.19 API only).
cat >"$T/gortlive.go" <<'EOF'
// gortlive: goroutines locked to threads under known pprof labels, for tests/goruntime-live.
// Writes "V version", "A addr" (of curIter) and per worker "W i tid goid xKEY xVALUE ..."
// (hex) to the file named by its argument, then runs until killed.
package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

var sink uint64
var curIter int64 = -1
var garbage [][]byte

func goid() uint64 {
	var b [64]byte
	s := strings.TrimPrefix(string(b[:runtime.Stack(b[:], false)]), "goroutine ")
	n, _ := strconv.ParseUint(s[:strings.IndexByte(s, ' ')], 10, 64)
	return n
}

//go:noinline
func burn(n int) {
	x := uint64(n) | 1
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	atomic.AddUint64(&sink, x)
}

func describe(i int, tid int, id uint64, ctx context.Context) string {
	s := fmt.Sprintf("W %d %d %d", i, tid, id)
	pprof.ForLabels(ctx, func(k, v string) bool {
		s += " x" + hex.EncodeToString([]byte(k)) + " x" + hex.EncodeToString([]byte(v))
		return true
	})
	return s
}

func worker(i int, ready chan<- string) {
	runtime.LockOSThread()
	id := goid()
	tid := syscall.Gettid()
	base := []string{"worker", strconv.Itoa(i), "goid", strconv.FormatUint(id, 10)}
	ctx := context.Background()
	switch i {
	case 1: // more than 64 labels; a map of 16 buckets before go1.24
		for k := 0; k < 70; k++ {
			base = append(base, fmt.Sprintf("k%02d", k), fmt.Sprintf("v%d", k*k))
		}
	case 2: // bytes a terminal would act on, NUL, invalid UTF-8, empty, long
		base = append(base, "esc", "\x1b[31mred\x00nul\xff\xfe", "", "empty-key",
			"empty-value", "", "long", strings.Repeat("0123456789", 100),
			strings.Repeat("K", 300), "long-key")
	case 4: // nested: the parent's labels merged with the child's
		pprof.Do(ctx, pprof.Labels("outer", fmt.Sprint("heap-", id*7)), func(c context.Context) { ctx = c })
	}
	pprof.Do(ctx, pprof.Labels(base...), func(ctx context.Context) {
		switch i {
		case 3: // blocked in a system call for good
			ready <- describe(i, tid, id, ctx) + " syscall"
			var p [2]int
			syscall.Pipe(p[:])
			var b [1]byte
			syscall.Read(p[0], b[:])
		case 5: // new label sets all the time, with garbage so that the GC reuses their memory
			ready <- describe(i, tid, id, ctx)
			for n := int64(0); ; n++ {
				v := strconv.FormatInt(n%4+1000, 10) // heap strings of one length
				pprof.Do(ctx, pprof.Labels("iter", v, "iter2", strings.Repeat(v, 2)), func(context.Context) {
					atomic.StoreInt64(&curIter, n%4+1000)
					burn(200000)
					atomic.StoreInt64(&curIter, -1)
				})
				garbage = append(garbage, make([]byte, 4096))
				if len(garbage) > 256 {
					garbage = nil
				}
			}
		case 6: // assembly that uses R14 (the g register) as scratch: crypto/md5 block
			ready <- describe(i, tid, id, ctx)
			buf := make([]byte, 1<<20)
			for {
				sum := md5.Sum(buf)
				buf[0] = sum[0]
			}
		default:
			ready <- describe(i, tid, id, ctx)
			for {
				burn(1000000)
			}
		}
	})
}

func main() {
	debug.SetGCPercent(20) // frequent GC cycles: freed label sets get reused
	const n = 7
	ready := make(chan string)
	for i := 0; i < n; i++ {
		go worker(i, ready)
	}
	lines := []string{"V " + runtime.Version(), fmt.Sprintf("A %d", uintptr(unsafe.Pointer(&curIter)))}
	for i := 0; i < n; i++ {
		lines = append(lines, <-ready)
	}
	os.WriteFile(os.Args[1]+".tmp", []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	os.Rename(os.Args[1]+".tmp", os.Args[1])
	time.Sleep(time.Hour)
}
EOF

# report PREFIX FILE: the checker's "ok - ..." lines as this script's TAP lines.
report() {
	while IFS= read -r line; do
		case $line in
		"ok - # SKIP "*) skip "$1: ${line#ok - # SKIP }" ;;
		"ok - "*) ok "$1: ${line#ok - }" ;;
		"not ok - "*) not_ok "$1: ${line#not ok - }" ;;
		"#"*) echo "$line" ;;
		esac
	done <"$2"
}

# gdb_offset BINARY TYPE FIELD: the offset gdb gives for a top-level field of a Go struct.
gdb_offsets() {
	timeout 120 gdb -nx -batch -ex 'set language c' -ex "ptype /o '$2'" "$1" 2>/dev/null |
		awk -v t="$3" '
		# Top-level members are indented by 4 spaces after the "*/".
		/^\/\* +[0-9]+ +\| +[0-9]+ \*\/    [^ ]/ {
			name = $NF; sub(";", "", name); sub(/^\*+/, "", name)
			print t "_" name, $2
		}'
}

have_gdb=no
command -v gdb >/dev/null 2>&1 && have_gdb=yes

for v in $versions; do
	for variant in plain stripped pie; do
		bin=$T/gortlive-$v-$variant
		go_build "$v" "$variant" "$T/gortlive.go" "$bin" 2>"$T/build.err"
		rc=$?
		if [ $rc = 77 ]; then
			skip "go $v $variant: no Go $v toolchain"
			continue
		elif [ $rc != 0 ]; then
			not_ok "go $v $variant: build"
			diag_file "$T/build.err"
			continue
		fi
		out=$T/account-$v-$variant
		GOMAXPROCS=8 "$bin" "$out" >/dev/null 2>&1 &
		pid=$!
		track $pid
		i=0
		while [ ! -s "$out" ] && [ $i -lt 100 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		if [ ! -s "$out" ]; then
			not_ok "go $v $variant: the workload started"
			kill -9 $pid 2>/dev/null
			continue
		fi
		timeout 300 "$CHECK" "$bin" $pid "$out" "$rounds" >"$T/check.out" 2>&1
		crc=$?
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		report "go $v $variant" "$T/check.out"
		if [ $crc != 0 ] && ! grep -q '^not ok' "$T/check.out"; then
			not_ok "go $v $variant: checker exited $crc"
			diag_file "$T/check.out"
		fi

		# An independent reading of the DWARF: gdb's layout of runtime.g and runtime.m.
		if [ $variant = plain ]; then
			if [ $have_gdb = no ]; then
				skip "go $v: gdb not installed"
			else
				"$CHECK" --offsets "$bin" "go$v" >"$T/ours" 2>&1
				{
					gdb_offsets "$bin" runtime.g g
					gdb_offsets "$bin" runtime.m m
				} >"$T/gdb"
				bad=0
				for f in g_m g_syscallsp g_syscallpc g_goid g_labels g_atomicstatus g_lockedm m_g0 m_procid m_gsignal m_curg m_alllink; do
					ours=$(awk -v f="$f" '$1 == f { print $2 }' "$T/ours")
					theirs=$(awk -v f="$f" '$1 == f { print $2 }' "$T/gdb")
					if [ -z "$ours" ] || [ "$ours" != "$theirs" ]; then
						echo "# $f: gort $ours, gdb $theirs"
						bad=1
					fi
				done
				if [ $bad = 0 ]; then
					ok "go $v: runtime.g/m offsets equal gdb's ptype /o"
				else
					not_ok "go $v: runtime.g/m offsets equal gdb's ptype /o"
				fi
			fi
		fi
	done

	# arm64: the same layout, read from an arm64 binary's DWARF, equals the version table.
	abin=$T/gortlive-$v-arm64
	if go_build "$v" arm64 "$T/gortlive.go" "$abin" 2>"$T/build.err"; then
		"$CHECK" --offsets "$abin" "go$v" >"$T/arm64-dwarf" 2>&1
		"$CHECK" --offsets - "go$v" >"$T/arm64-table" 2>&1
		if grep -q '^source dwarf' "$T/arm64-dwarf" &&
			[ "$(sed 1d "$T/arm64-dwarf")" = "$(sed 1d "$T/arm64-table")" ]; then
			ok "go $v arm64: DWARF offsets equal the table"
		else
			not_ok "go $v arm64: DWARF offsets equal the table"
			diff "$T/arm64-dwarf" "$T/arm64-table" | sed 's/^/# /'
		fi
	else
		skip "go $v arm64: build failed or no toolchain"
	fi
done

plan $tap_n
finish
