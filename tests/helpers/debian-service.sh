#!/bin/sh
# Prints the path of a real Go program that Debian builds (a stripped service such as
# prometheus), fetching and unpacking its package on first use.
#
# Usage: tests/helpers/debian-service.sh PACKAGE [BINARY]     (BINARY defaults to usr/bin/PACKAGE)
#
# The package comes from the newest suite that has it (sid, then trixie, then bookworm) and
# is unpacked by tests/helpers/debian-fetch.sh into ${GOTOP_GO_CACHE:-/var/cache/gotop-perf/go}/pkg/.
# Idempotent; concurrent callers are serialised with flock. On failure one line on stderr, 1.

set -u

die() {
	echo "debian-service.sh: $*" >&2
	exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: debian-service.sh PACKAGE [BINARY]"
pkg=$1
bin=${2:-usr/bin/$pkg}
case $pkg in
*/* | .*) die "bad package name '$pkg'" ;;
esac

. "$(dirname "$0")/cache.sh"
dest=$cache/pkg/$pkg
if [ -f "$dest/.gotop-complete" ] && [ -x "$dest/$bin" ]; then
	echo "$dest/$bin"
	exit 0
fi
cache_lock
if [ ! -f "$dest/.gotop-complete" ]; then
	rm -rf "$dest"
	got=$(GOTOP_GO_CACHE=$cache "$(dirname "$0")/debian-fetch.sh" "$dest" "sid trixie bookworm" "$pkg") ||
		exit 1
	echo "$got" >"$dest/.gotop-complete"
fi
[ -x "$dest/$bin" ] || die "package $pkg has no $bin"
echo "$dest/$bin"
