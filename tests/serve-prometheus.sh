#!/bin/sh
# serve-prometheus.sh: a real Prometheus (Debian's package, a stripped Go service) finds the
# processes `gotop-perf serve` offers through HTTP service discovery (/targets) and scrapes
# their metrics (/pid/PID/metrics), with the server's bearer token in both, as the man page's
# configuration does. Its own API (/api/v1/targets) must show every kept target up, scraped
# at /pid/PID/metrics and labelled with pid, comm, exe and go_version; a query must read the
# memprof workload's 10 goroutines parked in a channel receive. Prometheus itself is one of
# the targets: a 100 MB stripped binary read from outside.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"
. "$TOP_SRCDIR/tests/helpers/serve.sh"

[ -n "${GOTOP_WRAP:-}" ] && skip_all "under valgrind, reading a 100 MB binary's tables takes minutes"
command -v curl >/dev/null || skip_all "curl not found (setup.sh installs it)"
command -v jq >/dev/null || skip_all "jq not found (setup.sh installs it)"
prom_bin=$("$TOP_SRCDIR/tests/helpers/debian-service.sh" prometheus 2>"$T/fetch.err") ||
	skip_all "no Prometheus from Debian: $(head -1 "$T/fetch.err")"
bin=$T/memprof
go_build "$GO_VERSION" plain "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin" >"$T/build.err" 2>&1 ||
	skip_all "no Go $GO_VERSION workload: $(head -1 "$T/build.err")"
go_build "$GO_VERSION" stripped "$TOP_SRCDIR/tests/workloads/go/memprof.go" "$bin-s" >"$T/build.err" 2>&1 ||
	skip_all "no Go $GO_VERSION workload: $(head -1 "$T/build.err")"
plan 6

mkdir -p "$T/a" "$T/b"
"$bin" "$T/a" -d 300s >"$T/a/stdout" 2>&1 &
mp=$!
track $mp
"$bin-s" "$T/b" -d 300s >"$T/b/stdout" 2>&1 &
ms=$!
track $ms
wait_line "$T/a/stdout" '^ready' 60 && wait_line "$T/b/stdout" '^ready' 60 ||
	skip_all "memprof did not start"

printf 'tok-%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$T/token"
chmod 600 "$T/token"
if ! serve_start "$T/serve.log" --token-file "$T/token"; then
	diag_file "$T/serve.log"
	skip_all "the server did not start"
fi

# Prometheus on a port of its own, its first configuration keeping no target: its pid is
# known only once it runs. Then the real one, with the three pids, by a reload (SIGHUP).
mkdir -p "$T/prom"
write_config() { # KEEP-REGEX
	cat >"$T/prom/prom.yml" <<EOF
global:
  scrape_interval: 5s
  scrape_timeout: 5s
scrape_configs:
  - job_name: gotop-perf
    authorization:
      credentials_file: $T/token
    http_sd_configs:
      - url: $srv/targets
        refresh_interval: 5s
        authorization:
          credentials_file: $T/token
    relabel_configs:
      - source_labels: [pid]
        regex: "$1"
        action: keep
EOF
}
write_config "none"
if ! prometheus_start "$prom_bin"; then
	skip_n 6 "Prometheus did not start"
	serve_stop
	finish
fi
write_config "$mp|$ms|$prom"
kill -HUP $prom
api=http://127.0.0.1:$port/api/v1

# Until the three are up (a scrape every 5 s; the first of Prometheus itself opens its
# 100 MB binary).
i=0
up=0
while [ $i -lt $((90 * gp_slow)) ]; do
	curl -s "$api/targets?state=active" >"$T/targets.json"
	up=$(jq '[.data.activeTargets[] | select(.scrapePool == "gotop-perf" and .health == "up")] | length' \
		"$T/targets.json" 2>/dev/null)
	[ "${up:-0}" = 3 ] && break
	sleep 1
	i=$((i + 1))
done
jq -r '.data.activeTargets[] | select(.scrapePool == "gotop-perf") |
	"\(.labels.pid) \(.health) \(.scrapeUrl) \(.lastError)"' "$T/targets.json" | sed 's/^/# /'
n=$(jq '[.data.activeTargets[] | select(.scrapePool == "gotop-perf")] | length' "$T/targets.json")
check "Prometheus discovers the 3 processes kept from /targets ($n)" test "$n" = 3
check "... and scrapes each of them as up ($up of 3)" test "${up:-0}" = 3
urls=$(jq -r --arg a "$mp" --arg b "$ms" --arg c "$prom" '.data.activeTargets[] |
	select(.scrapePool == "gotop-perf") |
	select(.scrapeUrl == ("'"$srv"'/pid/" + .labels.pid + "/metrics")) | .labels.pid' \
	"$T/targets.json" | sort -n | tr '\n' ' ')
check "... each at $srv/pid/PID/metrics (pids $urls)" \
	test "$urls" = "$(printf '%s\n' $mp $ms $prom | sort -n | tr '\n' ' ')"
labs=$(jq -r --arg p "$ms" '.data.activeTargets[] | select(.labels.pid == $p) |
	"\(.labels.comm) \(.labels.exe) \(.labels.go_version) \(.labels.service_name)"' "$T/targets.json")
comm=$(basename "$bin-s" | cut -c1-15)
check "... labelled comm, exe, go_version, service_name: $labs" \
	sh -c "echo '$labs' | grep -qxE '$comm $bin-s go$GO_VERSION(\\.[0-9]+)? $comm'"

# What Prometheus stored: the stripped workload's goroutines parked in main.park.
i=0
val=
while [ $i -lt $((30 * gp_slow)) ]; do
	val=$(curl -s "$api/query" --data-urlencode \
		"query=gotop_go_goroutines{pid=\"$ms\",wait_reason=\"chan receive\"}" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
	[ -n "$val" ] && break
	sleep 1
	i=$((i + 1))
done
check "a query reads the stripped workload's 10 goroutines in chan receive (${val:-none})" test "$val" = 10

kill $prom 2>/dev/null
wait $prom 2>/dev/null
serve_stop
rc=$?
check "the server stops on SIGTERM with status 0 ($rc; $(grep -c ' 200 ' "$T/serve.log") requests answered 200, $(grep -c ' 401 ' "$T/serve.log") 401)" \
	test $rc = 0
finish
