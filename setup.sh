#!/bin/sh
# setup.sh: install what is missing, build, then run the demo (`demo`) or the tests (`test`).
#
#   ./setup.sh demo   Debian packages + a Go toolchain, build, and profile the bundled demo
#   ./setup.sh test   Debian packages + Go toolchains, build, and run `make check`
#   ./setup.sh build  only install and build
#
# Idempotent and quick when nothing is missing: packages are checked with dpkg-query and
# apt-get runs only for missing ones; configure runs only when the build is not configured.
# Needs root (or sudo) only when packages are missing.
set -eu

cd "$(dirname "$0")"
TOP=$(pwd)
BUILD=${GOTOP_BUILD_DIR:-$TOP/build}
mode=${1:-demo}

PACKAGES="build-essential autoconf automake pkg-config libelf-dev libdw-dev libunwind-dev
libncurses-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler libcmocka-dev
golang-github-google-pprof-dev elfutils tmux gdb strace jq curl valgrind cppcheck util-linux ca-certificates
libbpf-dev clang libclang-rt-14-dev libcapstone-dev libpfm4-dev libmicrohttpd-dev"

say() { echo "setup: $*" >&2; }

install_packages() {
	missing=""
	for p in $PACKAGES; do
		if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
			missing="$missing $p"
		fi
	done
	[ -z "$missing" ] && return 0
	say "installing:$missing"
	SUDO=""
	[ "$(id -u)" -ne 0 ] && SUDO=sudo
	$SUDO apt-get update -qq
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
}

build() {
	if [ ! -x "$TOP/configure" ] || [ "$TOP/configure.ac" -nt "$TOP/configure" ] ||
	   [ "$TOP/Makefile.am" -nt "$TOP/Makefile.in" ]; then
		say "autoreconf"
		(cd "$TOP" && autoreconf -fi >/dev/null 2>&1) || (cd "$TOP" && autoreconf -fi)
	fi
	mkdir -p "$BUILD"
	if [ ! -f "$BUILD/Makefile" ]; then
		say "configure"
		(cd "$BUILD" && "$TOP/configure" -q ${GOTOP_CONFIGURE_FLAGS:-})
	fi
	say "make"
	make -C "$BUILD" -s -j"$(nproc)" >/dev/null
}

go_toolchains() {
	for v in "$@"; do
		"$TOP/tests/helpers/go-toolchain.sh" "$v" >/dev/null || say "Go $v unavailable: tests that need it will SKIP"
	done
}

case $mode in
build)
	install_packages
	build
	;;
demo)
	install_packages
	go_toolchains 1.23
	build
	demo="$BUILD/demo"
	"$TOP/tests/helpers/go-build.sh" 1.23 plain "$TOP/tests/workloads/go/demo.go" "$demo"
	if [ -t 1 ] && [ -z "${GOTOP_DEMO_RECORD:-}" ] && "$BUILD/gotop-perf" --help | grep -q 'live profiler'; then
		exec "$BUILD/gotop-perf" -- "$demo"
	fi
	# Headless: record the demo for a few seconds and show the top functions.
	"$BUILD/gotop-perf" record -d "${GOTOP_DEMO_SECONDS:-5}" -o "$BUILD/demo.pb.gz" -- "$demo"
	goroot=$("$TOP/tests/helpers/go-toolchain.sh" 1.23)
	GOROOT=$goroot GOTOOLCHAIN=local "$goroot/bin/go" tool pprof -top -nodecount=25 "$BUILD/demo.pb.gz"
	;;
test)
	install_packages
	go_toolchains 1.19 1.23 1.27
	build
	status=0
	make -C "$BUILD" -s -j"$(nproc)" check >"$BUILD/check.out" 2>&1 || status=$?
	# Then the sanitizer builds (tests/sanitize.sh: ASan+UBSan, valgrind, cppcheck, TSan),
	# after the suite, whose measurements (coverage, label shares) want a quiet machine.
	# GOTOP_SANITIZE=0 skips them.
	san=""
	if [ "${GOTOP_SANITIZE:-1}" != 0 ]; then
		bash "$TOP/tests/sanitize.sh" "$TOP" "$BUILD/sanitize" >"$BUILD/sanitize.out" 2>&1 &
		san=$!
	fi
	grep -E '^(PASS|FAIL|SKIP|ERROR|XPASS|XFAIL):' "$BUILD/check.out" || true
	log="$BUILD/test-suite.log"
	if [ -f "$log" ]; then
		if [ $status -ne 0 ]; then
			sed -n '/^FAIL:\|^ERROR:/,$p' "$log" | head -200 >&2 || true
		fi
		counts=$(awk '/^# (PASS|XFAIL):/ { p += $3 } /^# (FAIL|ERROR|XPASS):/ { f += $3 } /^# SKIP:/ { s += $3 }
		     END { printf "%d %d %d\n", p, f, s }' "$log")
	else
		cat "$BUILD/check.out" >&2
		counts="0 1 0"
		status=1
	fi
	if [ -n "$san" ]; then
		wait $san || status=1
		grep -v '^[0-9]* passed' "$BUILD/sanitize.out" || true
		last=$(tail -1 "$BUILD/sanitize.out")
		case $last in
		*" passed, "*" failed, "*" skipped") counts="$counts $(echo "$last" | awk '{ print $1, $3, $5 }')" ;;
		*) counts="$counts 0 1 0"; status=1 ;;
		esac
	fi
	echo "$counts" | awk '{ for (i = 1; i <= NF; i += 3) { p += $i; f += $(i + 1); s += $(i + 2) } }
		END { printf "%d passed, %d failed, %d skipped\n", p, f, s }'
	exit $status
	;;
*)
	echo "usage: $0 demo|test|build" >&2
	exit 2
	;;
esac
