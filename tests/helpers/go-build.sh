#!/bin/bash
# Build a single-file Go program (or a one-package directory) with Go toolchain VERSION in one of
# the test variants, offline.
#
# Usage: tests/helpers/go-build.sh VERSION VARIANT SRC OUT
#   VERSION  1.19, 1.23, ... (toolchain from tests/helpers/go-toolchain.sh)
#   VARIANT  plain           go build, as users build by default (static, non-PIE, symbols, DWARF)
#            stripped        -ldflags='-s -w' (no .symtab, no DWARF; gopclntab remains)
#            pie             -buildmode=pie (ET_DYN, internally linked, no cgo)
#            arm64           GOARCH=arm64, plain
#            arm64-stripped  GOARCH=arm64, -ldflags='-s -w'
#            cgo             plain with CGO_ENABLED=1 (for workloads that call C)
#   SRC      a single-file main package importing only std, or a directory holding one
#            main package importing only std (for workloads with assembly: a .s file can
#            only be built as part of a package directory)
#   OUT      the binary to write
#
# Skips the build when OUT is newer than SRC (every file in it, for a directory), the
# toolchain and this script.
# Exit status: 0 built (or up to date), 77 toolchain unavailable (the caller SKIPs), 1 error.
# Builds in GOPATH mode (GO111MODULE=off) so nothing is resolved over the network and the
# binary's file names are SRC's real path; GOCACHE is ${cache}/gocache-1.X.

set -u

die() {
	echo "go-build.sh: $*" >&2
	exit 1
}

[ $# -eq 4 ] || die "usage: go-build.sh VERSION plain|stripped|pie|arm64|arm64-stripped|cgo SRC OUT"
ver=$1
variant=$2
src=$3
out=$4

here=$(cd "$(dirname "$0")" && pwd)
[ -f "$src" ] || [ -d "$src" ] || die "no such source file or directory: $src"
case $variant in
plain | stripped | pie | arm64 | arm64-stripped | cgo) ;;
*) die "unknown variant '$variant'" ;;
esac

if ! goroot=$("$here/go-toolchain.sh" "$ver"); then
	echo "go-build.sh: go $ver toolchain unavailable" >&2
	exit 77
fi
# go-toolchain.sh prints CACHE/1.X/usr/lib/go-1.X; CACHE/1.X/.gotop-complete is its install stamp.
verdir=$(cd "$goroot/../../.." && pwd)
cache=$(dirname "$verdir")
stamp=$verdir/.gotop-complete

if [ -f "$out" ] && [ -z "$(find "$src" -newer "$out" -print 2>/dev/null | head -1)" ] &&
	[ "$out" -nt "$stamp" ] && [ "$out" -nt "$0" ]; then
	exit 0
fi

goarch=amd64
ldflags=
buildmode=
cgo=0
case $variant in
cgo) cgo=1 ;;
stripped) ldflags='-s -w' ;;
pie) buildmode=-buildmode=pie ;;
arm64) goarch=arm64 ;;
arm64-stripped)
	goarch=arm64
	ldflags='-s -w'
	;;
esac

outdir=$(dirname "$out")
mkdir -p "$outdir" "$cache/gocache-$ver" "$cache/gopath" || die "cannot create output or cache directories"
tmpout=$(mktemp "$(cd "$outdir" && pwd)/$(basename "$out").tmp.XXXXXX") ||
	die "cannot create temporary file next to $out"
# A file is built from an empty directory, so no go.mod or vendor dir around SRC is picked
# up; a directory is built as the local package "." from inside it (GOPATH mode accepts no
# absolute package path; it ignores go.mod, and vendor dirs outside GOPATH).
if [ -d "$src" ]; then
	builddir=$(cd "$src" && pwd)
	target=.
else
	builddir=$cache/gopath
	target=$(cd "$(dirname "$src")" && pwd)/$(basename "$src")
fi
trap 'rm -f "$tmpout"' EXIT INT TERM

# Internal linking makes -buildmode=pie work without cgo (measured on 1.19 to 1.27).
if ! (cd "$builddir" &&
	env GOROOT="$goroot" GOTOOLCHAIN=local GO111MODULE=off GOFLAGS='' GOENV=off \
		GOPATH="$cache/gopath" GOCACHE="$cache/gocache-$ver" GOPROXY=off GOSUMDB=off \
		CGO_ENABLED=$cgo GOOS=linux GOARCH=$goarch GOAMD64=v1 \
		"$goroot/bin/go" build $buildmode -ldflags="$ldflags" -o "$tmpout" "$target"); then
	die "go $ver $variant build of $src failed"
fi
mv -f "$tmpout" "$out" || die "cannot move binary to $out"
