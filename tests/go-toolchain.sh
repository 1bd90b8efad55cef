#!/bin/sh
# Print the GOROOT of Go toolchain VERSION (e.g. 1.23), installing it from Debian's archive if missing.
#
# Usage: tests/go-toolchain.sh VERSION
#
# The toolchain is Debian's golang-1.X-go + golang-1.X-src, fetched with `apt-get download` and
# unpacked with `dpkg -x` into ${GOTOP_GO_CACHE:-/var/cache/gotop-perf/go}/1.X; the Go binary is
# static, so nothing else is needed.  Use it with GOROOT=<printed dir> GOTOOLCHAIN=local.
# The system's apt configuration and state are never touched: each suite gets a private deb822
# sources file and private lists/cache directories under the cache's apt/ folder.
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

if [ -n "${GOTOP_GO_CACHE:-}" ]; then
	cache=$GOTOP_GO_CACHE
elif mkdir -p /var/cache/gotop-perf/go 2>/dev/null && [ -w /var/cache/gotop-perf/go ]; then
	cache=/var/cache/gotop-perf/go
else
	cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gotop-perf/go
fi

dest=$cache/$ver
goroot=$dest/usr/lib/go-$ver

# Fast path: a complete install is marked by a stamp written last.
if [ -f "$dest/.gotop-complete" ] && [ -x "$goroot/bin/go" ]; then
	echo "$goroot"
	exit 0
fi

mkdir -p "$cache" || die "cannot create cache directory $cache"
command -v flock >/dev/null 2>&1 || die "flock(1) not found"
command -v apt-get >/dev/null 2>&1 || die "go $ver not installed and apt-get not found"
command -v dpkg >/dev/null 2>&1 || die "go $ver not installed and dpkg not found"

# One lock for the whole cache: installs are rare and the apt state dirs are shared.
exec 9>"$cache/.lock" || die "cannot open lock file $cache/.lock"
flock 9 || die "cannot lock $cache/.lock"

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

keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -r "$keyring" ] || die "go $ver not installed and $keyring missing (install debian-archive-keyring)"

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

# try_suite SUITE: download both packages of $ver into $work; 0 on success.
try_suite() {
	s=$1
	prepare_suite "$s" || return 1
	stamp=$cache/apt/$s/updated
	# Lists are refreshed when missing or older than a week.
	if [ ! -f "$stamp" ] || [ -n "$(find "$stamp" -mtime +7)" ]; then
		update_suite "$s" || return 1
		touch "$stamp"
	fi
	# Not in this suite's lists: skip it without another update (keeps failures quick).
	apt_cache_suite "$s" show "golang-$ver-go" >/dev/null 2>&1 || return 1
	for attempt in 1 2; do
		rm -f "$work"/*.deb
		if (cd "$work" && apt_suite "$s" download "golang-$ver-go" "golang-$ver-src") \
			>"$work/download.log" 2>&1; then
			return 0
		fi
		# Lists may be stale (sid moves fast): refresh once and retry.
		[ $attempt -eq 1 ] || break
		update_suite "$s" || return 1
		touch "$stamp"
	done
	return 1
}

work=$(mktemp -d "$cache/.install-$ver.XXXXXX") || die "cannot create temporary directory in $cache"
trap 'rm -rf "$work"' EXIT INT TERM

got=
for s in $suites; do
	if try_suite "$s"; then
		got=$s
		break
	fi
done
[ -n "$got" ] || die "go $ver is not available from Debian (tried $suites)"

mkdir -p "$work/root" || die "cannot create $work/root"
for deb in "$work"/*.deb; do
	dpkg -x "$deb" "$work/root" || die "dpkg -x $deb failed"
done

# Debian's packages link usr/lib/go-1.X/{src,...} to /usr/share/go-1.X/...: make absolute
# links relative so the tree works where it is unpacked.
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
