#!/bin/sh
# events.sh: events as perf users write them. The encoding of modifiers, generic cache
# events, sysfs PMU forms and tracepoints against perf's own parse (`perf stat -vv` prints
# the perf_event_attr it opens); vendor names through libpfm4 against the vendors' event
# codes for a forced CPU model; and live: cpu-clock:u has no kernel frame, cpu-clock:k
# only kernel frames, a write tracepoint's stacks end in the function that writes.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

plan 23
W=$TOP_BUILDDIR/tests/workloads/evmix

# --- the encoding, against perf ---
# "field value" lines of the first attr perf prints (perf shows only the fields set).
perf_attr() {
	perf stat -e "$1" -vv true 2>&1 | awk '
		/^perf_event_attr:/ { s = 1; next }
		s && /^-----/ { exit }
		s { print $1, $2 }'
}
# The fields compared.
FIELDS="type config config1 config2 exclude_user exclude_kernel exclude_host exclude_guest precise_ip"
attr_diff() {
	ev=$1
	"$GOTOP_PERF" list --attr "$ev" >"$T/ours" 2>&1 || { echo "$ev: ours failed: $(head -1 "$T/ours")"; return; }
	perf_attr "$ev" >"$T/theirs"
	[ -s "$T/theirs" ] || { echo "$ev: perf printed no attr"; return; }
	fields=$FIELDS
	# perf leaves exclude_hv to its own default without u/k/h modifiers.
	mods=${ev##*[:/]}
	case $mods in "$ev" | *[!ukhpGH]*) ;; *[ukh]*) fields="$fields exclude_hv" ;; esac
	for f in $fields; do
		a=$(awk -v f=$f '$1 == f { print $2 }' "$T/ours")
		b=$(awk -v f=$f '$1 == f { print $2 }' "$T/theirs")
		# perf omits zero fields and prints numbers in hex or decimal.
		[ "$(printf '%d' "${a:-0}")" = "$(printf '%d' "${b:-0}")" ] || echo "$ev: $f ours ${a:-0} perf ${b:-0}"
	done
}
if ! command -v perf >/dev/null 2>&1 || [ -z "$(perf_attr cpu-clock)" ]; then
	skip_n 7 "perf is not installed or does not print attrs (apt-get install linux-perf)"
else
	bad=""
	for ev in cpu-clock:u task-clock:k page-faults cs:uk cycles:k instructions:pp cycles:G \
		cycles:H cycles:u r1c2 'software/config=3/' 'software/config=0/u'; do
		bad="$bad$(attr_diff "$ev")"
	done
	check "modifiers, raw and PMU forms encode as perf encodes them${bad:+ ($bad)}" [ -z "$bad" ]
	bad=""
	n=0
	for ev in $("$GOTOP_PERF" list | awk '$2 == "cache" { print $1 }') LLC-load-misses:u dTLB-load-misses:k; do
		bad="$bad$(attr_diff "$ev")"
		n=$((n + 1))
	done
	check "the $n generic cache events encode as perf encodes them${bad:+ ($bad)}" [ -z "$bad" ] && [ $n -ge 32 ]
	if ! tracefs_ready; then
		skip "$tracefs_why"
	elif "$GOTOP_PERF" list --tracepoints sched_switch | grep -qx 'sched:sched_switch'; then
		bad="$(attr_diff sched:sched_switch)$(attr_diff syscalls:sys_enter_write:u)"
		check "tracepoints encode as perf encodes them (id from tracefs)${bad:+ ($bad)}" [ -z "$bad" ]
	else
		skip "this kernel has no sched:sched_switch tracepoint"
	fi
	# A group: each of perf's attr blocks (leader, then members) against ours.
	grp='{task-clock,page-faults:u,cs}'
	# Numbers as perf and list --attr print them (hex or decimal), in any awk.
	num='function num(v,   n, i, d) { if (v !~ /^0x/) return v + 0
		n = 0; v = tolower(substr(v, 3))
		for (i = 1; i <= length(v); i++) { d = index("0123456789abcdef", substr(v, i, 1)) - 1; n = n * 16 + d }
		return n }'
	perf stat -e "$grp" -vv true 2>&1 | awk "$num"'
		/^perf_event_attr:/ { if (n++) print t, c, k; t = 0; c = 0; k = 0; s = 1; next }
		s && /^-----/ { s = 0 }
		s && $1 == "type" { t = $2 } s && $1 == "config" { c = num($2) } s && $1 == "exclude_kernel" { k = $2 }
		END { if (n) print t, c, k }' | head -3 >"$T/theirs"
	"$GOTOP_PERF" list --attr "$grp" | awk "$num"'
		$1 == "type" { t = $2 } $1 == "config" { c = $2 } $1 == "exclude_kernel" { k = $2 }
		$1 == "precise_ip" { print t, num(c), k }
		$1 == "member" { print $4, num($6), $10 }' >"$T/ours"
	check "a group's attrs, leader and members, are perf's ($(tr '\n' ';' <"$T/ours"))" \
		sh -c "[ \$(wc -l <'$T/ours') -eq 3 ] && cmp -s '$T/ours' '$T/theirs'"
	# A group's sampling against perf record's attrs (leader, then member): "config read
	# group sampling": PERF_SAMPLE_READ in sample_type, PERF_FORMAT_GROUP in read_format,
	# a sample_freq of its own. Without :S each event samples and no sample reads; with
	# :S the samples read the group and the member does not sample.
	for grp in '{cpu-clock,page-faults}' '{cpu-clock,page-faults}:S'; do
		perf record -vv -e "$grp" -o "$T/perf.data" -- true 2>&1 | awk "$num"'
			function out() { if (k++ < 2) print c, r, g, f }
			/^perf_event_attr:/ { if (n++) out(); c = 0; r = 0; g = 0; f = 0; s = 1; next }
			/^sys_perf_event_open/ { s = 0 }
			s && $1 == "config" { c = num($2) }
			s && $1 == "sample_type" { r = $2 ~ /(^|\|)READ(\||$)/ }
			s && $1 == "read_format" { g = $2 ~ /(^|\|)GROUP(\||$)/ }
			s && /sample_period, sample_freq/ { f = $NF + 0 > 0 }
			END { if (n) out() }' >"$T/theirs"
		"$GOTOP_PERF" list --attr "$grp" | awk "$num"'
			$1 == "config" { c = $2 } $1 == "precise_ip" { lc = num(c) }
			$1 == "sample_read" { r = $2 } $1 == "read_format_group" { g = $2 }
			$1 == "member" { m = num($6) " " $12 " " $14 " " ($18 > 0) }
			END { print lc, r, g, 1; print m }' >"$T/ours"
		check "$grp samples as perf record's attrs say (ours $(tr '\n' ';' <"$T/ours") perf $(tr '\n' ';' <"$T/theirs"))" \
			sh -c "[ \$(wc -l <'$T/theirs') -eq 2 ] && cmp -s '$T/ours' '$T/theirs'"
	done
	named=$(ls /sys/bus/event_source/devices/*/events 2>/dev/null | grep -v ':$' | grep -Ev '\.(scale|unit)$' | head -1)
	if [ -n "$named" ]; then
		bad="$(attr_diff "$named")"
		check "a named sysfs event ($named) encodes as perf encodes it${bad:+ ($bad)}" [ -z "$bad" ]
	else
		skip "no PMU here has named events in sysfs"
	fi
fi

# --- bad input: one clear line, the right exit status ---
"$GOTOP_PERF" record -e cpu-clock:zz -d 1 -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
rc=$?
check "a bad modifier is one clear error, exit 2 (got $rc)" \
	sh -c "[ $rc -eq 2 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -q \"bad modifier ':zz'\" '$T/out'"
"$GOTOP_PERF" record -e 'cpu/bogus=1/' -d 1 -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
rc=$?
check "an unknown PMU or term is one clear error, exit 5 (got $rc)" \
	sh -c "[ $rc -eq 5 ] && [ \$(wc -l <'$T/out') -eq 1 ]"
printf 'cpu-clock:\033[31m' >"$T/evname"
"$GOTOP_PERF" record -e "$(cat "$T/evname")" -d 1 -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
check "a control character in an event name is not echoed" sh -c "! grep -q \"\$(printf '\\033')\" '$T/out'"

# A kernel-only event where kernel sampling is not allowed: the reason, exit 4 (permission).
if [ "$(id -u)" -eq 0 ] && id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null &&
	[ "$(cat /proc/sys/kernel/perf_event_paranoid)" -ge 2 ]; then
	chmod 777 "$T"
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \
		"$GOTOP_PERF" record -e cpu-clock:k -d 1 -o "$T/nb.pb.gz" -- "$W" 1 >"$T/out" 2>&1
	rc=$?
	check "cpu-clock:k without kernel sampling: says why, exit 4 (got $rc)" \
		sh -c "[ $rc -eq 4 ] && grep -q 'cpu-clock:k: counts the kernel only, and .*perf_event_paranoid' '$T/out'"
else
	skip "needs root, the nobody user, setpriv and kernel.perf_event_paranoid >= 2"
fi

# Several events, one a PMU form: one file each, its slashes not taken for directories.
mkdir -p "$T/multi"
"$GOTOP_PERF" record -q -e 'software/config=0/' -e cs -d 1 -o "$T/multi/m.pb.gz" -- "$W" 1.5 >"$T/out" 2>&1
rc=$?
check "record -e software/config=0/ -e cs: a file per event (exit $rc: $(ls "$T/multi" | tr '\n' ' '))" \
	sh -c "[ $rc -eq 0 ] && [ -s '$T/multi/m.software_config=0_.pb.gz' ] && [ -s '$T/multi/m.context-switches.pb.gz' ]"

# --- libpfm4: the vendors' codes for a forced model ---
# Intel SDM, Skylake: INST_RETIRED.ANY_P event 0xC0 umask 0x00, MEM_LOAD_RETIRED.L3_MISS
# 0xD1 umask 0x20. AMD PPR for family 17h: PMCx0C0 retired instructions, PMCx076 cycles
# not in halt. The raw config is event | umask << 8 (PERF_TYPE_RAW, type 4).
code() { LIBPFM_FORCE_PMU=$1 "$GOTOP_PERF" list --attr "$2" 2>&1 | awk '
	$1 == "type" { t = $2 } $1 == "config" { c = $2 } END { printf "%s %#x\n", t, c % 65536 }'; }
got="$(code skl INST_RETIRED:ANY_P)/$(code skl MEM_LOAD_RETIRED:L3_MISS)"
check "skl: INST_RETIRED:ANY_P is raw 0xc0, MEM_LOAD_RETIRED:L3_MISS raw 0x20d1 (got $got)" \
	[ "$got" = "4 0xc0/4 0x20d1" ]
got="$(code amd64_fam17h_zen2 RETIRED_INSTRUCTIONS)/$(code amd64_fam17h_zen2 CYCLES_NOT_IN_HALT)"
check "AMD zen2: RETIRED_INSTRUCTIONS is raw 0xc0, CYCLES_NOT_IN_HALT raw 0x76 (got $got)" \
	[ "$got" = "4 0xc0/4 0x76" ]
LIBPFM_FORCE_PMU=skl "$GOTOP_PERF" list --pmu >"$T/pmu" 2>&1
check "list --pmu with a forced model lists its events with descriptions" \
	grep -Eq '^skl::INST_RETIRED:ANY_P +[A-Z][a-z]' "$T/pmu"
if "$GOTOP_PERF" list | grep -q '^cycles .* yes '; then
	skip_n 3 "this machine has a hardware PMU: the no-PMU messages cannot be seen here"
else
	"$GOTOP_PERF" list --pmu >"$T/pmu" 2>&1
	rc=$?
	check "list --pmu without a PMU says so (exit $rc)" sh -c "[ $rc -eq 5 ] && grep -q 'no hardware PMU' '$T/pmu'"
	"$GOTOP_PERF" record -e INST_RETIRED:ANY_P -d 1 -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
	rc=$?
	check "a vendor name without a PMU: one line naming the missing PMU, exit 5 (got $rc)" \
		sh -c "[ $rc -eq 5 ] && [ \$(wc -l <'$T/out') -eq 1 ] && grep -q 'no hardware PMU' '$T/out'"
	LIBPFM_FORCE_PMU=skl "$GOTOP_PERF" record -e INST_RETIRED:ANY_P -d 1 -o "$T/x.pb.gz" -- "$W" 1 >"$T/out" 2>&1
	rc=$?
	check "encoded for skl, opening it here reports the missing PMU, exit 5 (got $rc)" \
		sh -c "[ $rc -eq 5 ] && grep -q 'INST_RETIRED:ANY_P: not supported on this machine: no hardware PMU' '$T/out'"
fi

# --- live: modifiers and tracepoints on the workload ---
need_pprof
cpu_ok=$("$GOTOP_PERF" list | grep -c '^cpu-clock .* yes ')
kern=$(truth "$GOTOP_PERF" list | grep -q '^note: kernel callchains off' && echo no || echo yes)
# Locations of a profile: "kernel user" counts of the sampled frames' addresses, from
# go tool pprof -raw (kernel addresses are the upper half on x86-64).
frames() {
	pprof -raw "$1" 2>/dev/null | awk '
		/^Locations/ { s = 1; next } /^Mappings/ { s = 0 }
		s && $2 ~ /^0x/ { if (length($2) == 18 && substr($2, 3, 4) == "ffff") k++; else u++ }
		END { printf "%d %d\n", k, u }'
}
if [ "$cpu_ok" -eq 0 ]; then
	skip_n 5 "cpu-clock cannot be sampled here"
else
	for ev in cpu-clock cpu-clock:u; do
		"$GOTOP_PERF" record -q -e $ev -d 2 -o "$T/$ev.pb.gz" -- "$W" 2.5 >"$T/out-$ev" 2>&1
	done
	set -- $(frames "$T/cpu-clock:u.pb.gz")
	check "cpu-clock:u: user frames ($2), not one kernel frame ($1)" [ "$1" -eq 0 -a "$2" -gt 3 ]
	if [ "$kern" = yes ]; then
		set -- $(frames "$T/cpu-clock.pb.gz")
		check "cpu-clock (the control) does have kernel frames here ($1)" [ "$1" -gt 0 ]
		"$GOTOP_PERF" record -q -e cpu-clock:k -d 2 -o "$T/k.pb.gz" -- "$W" 2.5 >"$T/out-k" 2>&1
		set -- $(frames "$T/k.pb.gz")
		check "cpu-clock:k: kernel frames ($1), not one user frame ($2)" [ "$1" -gt 3 -a "$2" -eq 0 ]
	else
		skip_n 2 "kernel sampling is not permitted here"
	fi
	if ! tracefs_ready; then
		skip_n 2 "$tracefs_why"
	elif "$GOTOP_PERF" list --tracepoints sys_enter_write | grep -qx 'syscalls:sys_enter_write'; then
		"$GOTOP_PERF" record -q -e syscalls:sys_enter_write -d 2 -o "$T/tp.pb.gz" -- "$W" 2.5 >"$T/out" 2>&1
		rc=$?
		pprof_stacks "$T/tp.pb.gz" >"$T/stacks"
		# Every stack: the libc wrapper of write(2), called by write_null, under the kernel's
		# frames of the system call when the kernel's part is kept.
		tot=$(awk '{ t += $1 } END { print t + 0 }' "$T/stacks")
		good=$(awk '{ n = split($2, f, ";"); for (i = 2; i <= n; i++) if (f[i] == "write_null") break
			if (i <= n && f[i - 1] ~ /write/) g += $1 } END { print g + 0 }' "$T/stacks")
		diag "sys_enter_write: $good of $tot in a write of write_null"
		[ "$good" -eq "$tot" ] || diag_file "$T/stacks"
		check "syscalls:sys_enter_write: every stack ends in write_null's write ($good of $tot)" \
			sh -c "[ $rc -eq 0 ] && [ $tot -gt 100 ] && [ $good -eq $tot ]"
		pprof -raw "$T/tp.pb.gz" >"$T/raw" 2>&1
		check "the pprof sample type is the tracepoint" grep -q '^samples/count syscalls:sys_enter_write/count' "$T/raw"
	else
		skip_n 2 "this kernel has no syscalls:sys_enter_write tracepoint (CONFIG_FTRACE_SYSCALLS)"
	fi
fi
finish
