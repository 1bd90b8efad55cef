#!/bin/sh
# Downloads Debian packages from the first suite that has them and unpacks them (dpkg -x)
# into a directory: Go toolchains for the tests, real Go services as targets.
#
# Usage: tests/helpers/debian-fetch.sh DEST "SUITE..." PACKAGE...
#
# SUITE... is a space-separated list tried in order (e.g. "sid trixie"); the first suite whose
# lists name the first PACKAGE is used for all of them. DEST must not exist; it is created
# only when every package was unpacked, so a present DEST is a complete one. Prints the suite
# used. The system's apt configuration and state are never touched: each suite gets a private
# deb822 sources file and private lists/cache directories under $GOTOP_GO_CACHE/apt (default
# /var/cache/gotop-perf/go/apt). Absolute symbolic links inside the packages are made relative
# so the tree works where it is unpacked. Callers serialise with flock on the cache's .lock.
# On failure prints one line on stderr and exits 1.

set -u

die() {
	echo "debian-fetch.sh: $*" >&2
	exit 1
}

[ $# -ge 3 ] || die "usage: debian-fetch.sh DEST \"SUITE...\" PACKAGE..."
dest=$1
suites=$2
shift 2
[ ! -e "$dest" ] || die "$dest exists"

. "$(dirname "$0")/cache.sh"
mkdir -p "$cache" || die "cannot create cache directory $cache"
command -v apt-get >/dev/null 2>&1 || die "apt-get not found"
command -v dpkg >/dev/null 2>&1 || die "dpkg not found"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "$keyring missing (install debian-archive-keyring)"

# apt_suite SUITE ARGS...: run apt-get against SUITE only, with private state.
apt_suite() {
	s=$1
	shift
	sdir=$cache/apt/$s
	apt-get -q \
		-o Dir::Etc::sourcelist="$sdir/sources.sources" \
		-o Dir::Etc::sourceparts="$sdir/sources.d" \
		-o Dir::State::Lists="$sdir/lists" \
		-o Dir::Cache="$sdir/cache" \
		-o Dir::Cache::archives="$sdir/cache/archives" \
		-o APT::Sandbox::User=root \
		-o Acquire::Languages=none \
		-o APT::Get::List-Cleanup=false \
		"$@"
}

# apt-cache with the same private state as apt_suite.
apt_cache_suite() {
	s=$1
	shift
	sdir=$cache/apt/$s
	apt-cache \
		-o Dir::Etc::sourcelist="$sdir/sources.sources" \
		-o Dir::Etc::sourceparts="$sdir/sources.d" \
		-o Dir::State::Lists="$sdir/lists" \
		-o Dir::Cache="$sdir/cache" \
		"$@"
}

prepare_suite() {
	s=$1
	sdir=$cache/apt/$s
	mkdir -p "$sdir/sources.d" "$sdir/lists/partial" "$sdir/cache/archives/partial" || return 1
	cat >"$sdir/sources.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $s
Components: main
Signed-By: $keyring
EOF
}

update_suite() {
	apt_suite "$1" update >"$cache/apt/$1/update.log" 2>&1 &&
		! grep -q '^[WE]:' "$cache/apt/$1/update.log"
}

# try_suite SUITE PACKAGE...: download the packages into $work; 0 on success.
try_suite() {
	s=$1
	shift
	prepare_suite "$s" || return 1
	stamp=$cache/apt/$s/updated
	# Lists are refreshed when missing or older than a week.
	if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mtime +7)" ]; then
		update_suite "$s" || return 1
		touch "$stamp"
	fi
	# Not in this suite's lists: skip it without another update (keeps failures quick).
	apt_cache_suite "$s" show "$1" >/dev/null 2>&1 || return 1
	for attempt in 1 2; do
		rm -f "$work"/*.deb
		if (cd "$work" && apt_suite "$s" download "$@") >"$work/download.log" 2>&1; then
			return 0
		fi
		# Lists may be stale (sid moves fast): refresh once and retry.
		[ $attempt -eq 1 ] || break
		update_suite "$s" || return 1
		touch "$stamp"
	done
	return 1
}

work=$(mktemp -d "$cache/.fetch.XXXXXX") || die "cannot create a temporary directory in $cache"
trap 'rm -rf "$work"' EXIT INT TERM

got=
for s in $suites; do
	if try_suite "$s" "$@"; then
		got=$s
		break
	fi
done
[ -n "$got" ] || die "$* not available from Debian (tried $suites)"

mkdir -p "$work/root" || die "cannot create $work/root"
for deb in "$work"/*.deb; do
	dpkg -x "$deb" "$work/root" || die "dpkg -x $deb failed"
done

find "$work/root" -type l | while read -r link; do
	target=$(readlink "$link")
	case $target in
	/*)
		dir=$(dirname "$link")
		rel=$(realpath -m --relative-to="$dir" "$work/root$target")
		ln -sfn "$rel" "$link"
		;;
	esac
done

mkdir -p "$(dirname "$dest")" && mv "$work/root" "$dest" || die "cannot move the packages into $dest"
echo "$got"
