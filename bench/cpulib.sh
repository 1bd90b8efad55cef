# cpulib.sh: shell functions shared by bench/owncpu-pair.sh and bench/tuicpu.sh (sourced).

# cpu_ns PID [PATTERN]: summed CPU (ns) of the threads of PID, those named PATTERN only
# (/proc/PID/task/TID/schedstat, its first field).
cpu_ns() {
	local s=0 a f
	for f in /proc/"$1"/task/*; do
		if [ -n "${2:-}" ] && ! grep -q -- "$2" "$f/comm" 2>/dev/null; then
			continue
		fi
		read -r a _ <"$f/schedstat" 2>/dev/null && s=$((s + a))
	done
	echo $s
}

# start_workload KIND BINARY: starts bench/spin.c built (c) or labels.go built with 2
# workers for 20 s (go) in the background, sets w to its pid and lets it start (0.3 s).
start_workload() {
	case $1 in
	c) "$2" -n 100000000 >/dev/null 2>&1 & ;;
	go) "$2" -workers 2 -d 20s >/dev/null 2>&1 & ;;
	esac
	w=$!
	sleep 0.3
}

# print_median LABEL: "median LABEL M over N rounds" for the numbers on stdin (one a line).
print_median() {
	grep -v '^$' | sort -g | awk -v label="$1" '{v[NR] = $1} END {
		if (NR) printf "median %s %.3f over %d rounds\n", label, NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2, NR }'
}

# round_line A_NS B_NS W_NS RATE NAME_A NAME_B LABEL DIR: one round's line,
# "NAME_A a NAME_B b LABEL r": each tool's CPU (A_NS, B_NS) per 1000 samples of the workload
# (its CPU time W_NS times RATE), and r, b / a (DIR ba) or a / b (DIR ab); "no samples" when
# a figure is missing.
round_line() {
	awk -v a="$1" -v b="$2" -v w="$3" -v hz="$4" -v na="$5" -v nb="$6" -v label="$7" -v dir="$8" 'BEGIN {
		n = w / 1e9 * hz
		if (n <= 0 || a <= 0 || b <= 0) { print "no samples"; exit }
		printf "%s %.3f %s %.3f %s %.3f\n", na, a / 1e6 / n * 1000, nb, b / 1e6 / n * 1000, label,
			dir == "ba" ? b / a : a / b }'
}
