# tests/helpers/cache.sh: sourced by the helpers that keep what they download (go-toolchain.sh,
# debian-fetch.sh, debian-service.sh): sets cache to $GOTOP_GO_CACHE, else
# /var/cache/gotop-perf/go where it can be written, else the user's cache directory.
if [ -n "${GOTOP_GO_CACHE:-}" ]; then
	cache=$GOTOP_GO_CACHE
elif mkdir -p /var/cache/gotop-perf/go 2>/dev/null && [ -w /var/cache/gotop-perf/go ]; then
	cache=/var/cache/gotop-perf/go
else
	cache=${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/gotop-perf/go
fi

# cache_lock: takes the cache's one lock (fd 9) for the rest of the script: installs are
# rare, and the apt state under $cache/apt is shared by every suite's downloads.
cache_lock() {
	mkdir -p "$cache" || die "cannot create cache directory $cache"
	command -v flock >/dev/null 2>&1 || die "flock(1) not found"
	exec 9>"$cache/.lock" || die "cannot open lock file $cache/.lock"
	flock 9 || die "cannot lock $cache/.lock"
}
