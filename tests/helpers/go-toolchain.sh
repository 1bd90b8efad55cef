#!/bin/sh
# Print the GOROOT of Go toolchain VERSION (e.g. 1.23), installing it from Debian's archive if missing.
#
# Usage: tests/helpers/go-toolchain.sh VERSION
#
# The toolchain is Debian's golang-1.X-go + golang-1.X-src, fetched and unpacked by
# tests/helpers/debian-fetch.sh into ${GOTOP_GO_CACHE:-/var/cache/gotop-perf/go}/1.X; the Go binary is
# static, so nothing else is needed.  Use it with GOROOT=<printed dir> GOTOOLCHAIN=local.
# Idempotent; when the toolchain is present it returns without any apt call.  Concurrent callers
# are serialised with flock.  On failure prints one line on stderr and exits 1.

set -u

die() {
	echo "go-toolchain.sh: $*" >&2
	exit 1
}

[ $# -eq 1 ] || die "usage: go-toolchain.sh VERSION (e.g. 1.23)"
ver=$1
case $ver in
1.[0-9] | 1.[0-9][0-9]) ;;
*) die "bad version '$ver' (want 1.N)" ;;
esac

. "$(dirname "$0")/cache.sh"

dest=$cache/$ver
goroot=$dest/usr/lib/go-$ver

# Fast path: a complete install is marked by a stamp written last.
if [ -f "$dest/.gotop-complete" ] && [ -x "$goroot/bin/go" ]; then
	echo "$goroot"
	exit 0
fi

cache_lock

# Another caller may have finished while we waited.
if [ -f "$dest/.gotop-complete" ] && [ -x "$goroot/bin/go" ]; then
	echo "$goroot"
	exit 0
fi

# Which Debian suites carry golang-1.X (measured May 2025, see shared/notes/feasibility.md);
# the others are tried afterwards in case a version moved.
case $ver in
1.19) first=bookworm ;;
1.22 | 1.23) first=bookworm-backports ;;
1.24) first=trixie ;;
1.25) first=trixie-backports ;;
*) first=sid ;;
esac
suites="$first"
for s in bookworm bookworm-backports trixie trixie-backports sid; do
	[ "$s" = "$first" ] || suites="$suites $s"
done

work=$(mktemp -d "$cache/.install-$ver.XXXXXX") || die "cannot create temporary directory in $cache"
trap 'rm -rf "$work"' EXIT INT TERM
got=$(GOTOP_GO_CACHE=$cache "$(dirname "$0")/debian-fetch.sh" "$work/root" "$suites" \
	"golang-$ver-go" "golang-$ver-src") || die "go $ver is not available from Debian (tried $suites)"

[ -x "$work/root/usr/lib/go-$ver/bin/go" ] || die "go $ver from $got has no usr/lib/go-$ver/bin/go"
v=$(GOROOT="$work/root/usr/lib/go-$ver" GOTOOLCHAIN=local GOFLAGS='' GO111MODULE=off \
	"$work/root/usr/lib/go-$ver/bin/go" env GOVERSION 2>/dev/null)
case $v in
"go$ver" | "go$ver".* | "go$ver"rc* | "go$ver"beta*) ;;
*) die "go $ver from $got does not run (go env GOVERSION said '$v')" ;;
esac

# GOROOT is baked into nothing we rely on (we always set GOROOT), so the tree can be moved.
rm -rf "$dest"
mv "$work/root" "$dest" || die "cannot move toolchain into $dest"
echo "$got $v" >"$dest/.gotop-complete"
echo "$goroot"
