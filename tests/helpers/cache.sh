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
