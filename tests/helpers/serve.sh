# tests/helpers/serve.sh: start and stop `gotop-perf serve` for the serve tests and
# bench/serve.sh (sourced after lib.sh, POSIX sh).

# serve_start LOG [ARGS...]: starts the server on 127.0.0.1, a port of the kernel's choosing
# unless ARGS give --listen, with its log in LOG; sets srv_pid and srv (http://HOST:PORT).
# Status 1 when it did not say where it listens within 20 s (times gp_slow).
serve_start() {
	ss_log=$1
	shift
	case " $* " in
	*" --listen "* | *" -l "*) ;;
	*) set -- --listen 127.0.0.1:0 "$@" ;;
	esac
	"$GOTOP_PERF" serve "$@" 2>"$ss_log" &
	srv_pid=$!
	track $srv_pid
	srv=
	if ! wait_line "$ss_log" '^gotop-perf: serving http://' 20; then
		return 1
	fi
	srv=$(sed -n 's|^gotop-perf: serving \(http://[^/]*\)/.*|\1|p' "$ss_log" | head -1)
	[ -n "$srv" ]
}

# serve_stop: SIGTERM, then its exit status (0 expected); SIGKILL after 20 s (times gp_slow),
# status 124 then.
serve_stop() {
	kill -TERM "$srv_pid" 2>/dev/null
	ss_i=0
	while kill -0 "$srv_pid" 2>/dev/null && [ $ss_i -lt $((200 * gp_slow)) ]; do
		sleep 0.1
		ss_i=$((ss_i + 1))
	done
	if kill -0 "$srv_pid" 2>/dev/null; then
		kill -9 "$srv_pid" 2>/dev/null
		wait "$srv_pid" 2>/dev/null
		return 124
	fi
	wait "$srv_pid"
}

# http URL [CURL ARGS...]: GETs URL into $T/body; prints the status code (000: no answer).
http() {
	h_url=$1
	shift
	curl -s -o "$T/body" -w '%{http_code}' --max-time $((120 * gp_slow)) "$@" "$h_url" 2>/dev/null
}

# perf_fds PID: perf events the process holds open.
perf_fds() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'anon_inode:\[perf_event\]'
}
