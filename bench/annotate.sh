#!/bin/sh
# annotate.sh: how long the Annotate view takes to open a large function of a large binary
# (bench/annotate.c: cold, with the binary already open, a refresh, and objdump -d over the
# same bytes), on Debian's prometheus (100 MB, stripped Go) unless a binary is given.
#
# Usage: cd BUILD_DIR && SRC/bench/annotate.sh [BINARY] [ROUNDS]
#   Runs the function nearest to 100 KB (~102400), then the largest ("-"), then a small one.
set -u

here=$(cd "$(dirname "$0")" && pwd)
srcdir=$(dirname "$here")
builddir=$(pwd)
cc=${CC:-cc}
rounds=${2:-11}

die() {
	echo "annotate.sh: $*" >&2
	exit 1
}

[ -f "$builddir/libgotop.a" ] || die "run it from a build directory (no libgotop.a here)"
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$("$srcdir/tests/helpers/debian-service.sh" prometheus) || die "no prometheus package"
fi
# The libraries libgotop.a needs, as configure found them for the build directory.
libs=$(awk '/^(LIBDW|LIBELF|LIBUNWIND|ZLIB|PROTOBUF_C|LIBBPF|CAPSTONE|LIBPFM)_LIBS = / { sub(/^[^=]*= /, ""); printf "%s ", $0 }' \
	"$builddir/Makefile" 2>/dev/null)
work=$(mktemp -d "${TMPDIR:-/tmp}/gotop-annotate-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck disable=SC2086 # a list of linker flags
"$cc" -O2 -g -fno-omit-frame-pointer -I"$builddir" -I"$srcdir/include" -o "$work/annotate-bench" \
	"$here/annotate.c" "$builddir/libgotop.a" ${libs:--ldw -lelf -lz -lcapstone} -lpthread ||
	die "cannot build bench/annotate.c"
ls -l "$bin"
for f in '~102400' - '~100'; do
	"$work/annotate-bench" "$bin" "$f" "$rounds" || die "annotate-bench failed on $f"
	echo
done
