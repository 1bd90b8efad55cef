# summarize.awk: turns bench/run.sh's raw.tsv into Markdown tables (medians with min and max)
# and one verdict line per goal. Plain POSIX awk (Debian's default mawk has no asort).

BEGIN { FS = "\t" }

/^#/ { comment[++ncomment] = substr($0, 3); next }
$1 == "bench" { next }

# Keeps the values of one figure per key, in a flat array: vals[key, i], nvals[key].
function add(key, v) {
	if (v == "NA" || v == "")
		return
	nvals[key]++
	vals[key, nvals[key]] = v + 0
}
function sorted(key,    n, i, j, t) {
	n = nvals[key]
	for (i = 1; i <= n; i++)
		s[i] = vals[key, i]
	for (i = 2; i <= n; i++) {
		t = s[i]
		for (j = i - 1; j >= 1 && s[j] > t; j--)
			s[j + 1] = s[j]
		s[j + 1] = t
	}
	return n
}
function median(key,    n) {
	n = sorted(key)
	if (n == 0)
		return "NA"
	return (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
}
function vmin(key) { return sorted(key) ? s[1] : "NA" }
function vmax(key,    n) { n = sorted(key); return n ? s[n] : "NA" }
# "median (min to max)" with the given printf format.
function mmm(key, fmt,    m) {
	m = median(key)
	if (m == "NA")
		return "n/a"
	if (nvals[key] == 1)
		return sprintf(fmt, m)
	return sprintf(fmt " (" fmt " to " fmt ")", m, vmin(key), vmax(key))
}

$1 == "slowdown" {
	wl = $2; rate = $3; mode = $4; round = $5
	if (!((wl, rate) in seen_sd)) {
		seen_sd[wl, rate] = 1
		sd_order[++nsd] = wl SUBSEP rate
	}
	if (!((wl, rate, "m", mode) in seen_mode)) {
		seen_mode[wl, rate, "m", mode] = 1
		mlist[wl, rate] = mlist[wl, rate] " " mode
	}
	wall[wl, rate, mode, round] = $7
	cpu[wl, rate, mode, round] = $8
	rounds_of[wl, rate, round] = 1
	if (!((wl, rate, "r", round) in seen_round)) {
		seen_round[wl, rate, "r", round] = 1
		rlist[wl, rate] = rlist[wl, rate] " " round
	}
	k = wl SUBSEP rate SUBSEP mode
	add(k SUBSEP "wall", $7)
	add(k SUBSEP "cpu", $8)
	add(k SUBSEP "units", $6)
	if (mode != "alone" && $9 != "NA") {
		pc = ($9 + $10) * 1000
		add(k SUBSEP "pcpu", pc)
		add(k SUBSEP "pcpu_pct", ($9 + $10) / $8 * 100)
		if ($12 != "NA" && $12 > 0) {
			add(k SUBSEP "pk", pc / $12 * 1000)
			add(k SUBSEP "samples", $12)
			add(k SUBSEP "cover", $12 / ($8 * rate) * 100)
		} else if (mode == "perftop" && $8 > 0) {
			# perf top prints no sample total: estimated as target CPU s x rate (the
			# other tools' coverage is 99.5 to 100.1 %).
			add(k SUBSEP "pk", pc / ($8 * rate) * 1000)
			add(k SUBSEP "samples_est", $8 * rate)
		}
		pcr[wl, rate, mode, round] = pc
		add(k SUBSEP "lost", $13)
		if (NF >= 19 && $19 != "NA") {
			add(k SUBSEP "inrun", $19)
			add(k SUBSEP "inrun_pct", $19 / ($7 * 1000) * 100)
			add(k SUBSEP "inrun_ps", $19 / $7)
			inr[wl, rate, mode, round] = $19 / $7
		}
	}
	next
}

$1 == "syscost" {
	if (!($2 in seen_sc))
		sc_order[++nsc] = $2
	seen_sc[$2] = 1
	add("sc" SUBSEP $2, $7)
	next
}

$1 == "gocost" {
	rate = $3; cfg = $4; round = $5
	if (!(rate in seen_gc)) {
		seen_gc[rate] = 1
		gc_order[++ngc] = rate
	}
	if ($9 == "NA" || $12 == "NA" || $12 == 0)
		next
	k = rate SUBSEP cfg
	pc = ($9 + $10) * 1000
	add(k SUBSEP "pcpu", pc)
	add(k SUBSEP "samples", $12)
	add(k SUBSEP "pk", pc / $12 * 1000)
	add(k SUBSEP "lost", $13)
	add(k SUBSEP "ps", pc / $11)
	ms_s[rate, cfg, round] = pc / $11
	if ($14 != "NA")
		add(k SUBSEP "sk", $14 / $12 * 1000)
	if ($15 != "NA" && $15 > 0) {
		add(k SUBSEP "goid", $16 / $15 * 100)
		add(k SUBSEP "lab", $17 / $15 * 100)
	}
	if ($18 != "NA")
		add(k SUBSEP "rep", $18 / $12 * 100)
	# Per-sample CPU in microseconds, kept per round for paired differences.
	us[rate, cfg, round] = pc * 1000 / $12
	gc_rounds[rate, round] = 1
	if (!((rate, "r", round) in gc_seen_round)) {
		gc_seen_round[rate, "r", round] = 1
		gc_rlist[rate] = gc_rlist[rate] " " round
	}
	next
}

END {
	print "## Run"
	print ""
	for (i = 1; i <= ncomment; i++)
		print "- " comment[i]
	print ""

	for (i = 1; i <= nsd; i++) {
		split(sd_order[i], p, SUBSEP)
		wl = p[1]; rate = p[2]
		# Paired per-round slowdowns against the alone run of the same round.
		nr = split(rlist[wl, rate], rl, " ")
		nm = split(mlist[wl, rate], ml, " ")
		for (m = 1; m <= nm; m++) {
			mode = ml[m]
			if (mode == "alone")
				continue
			for (j = 1; j <= nr; j++) {
				r = rl[j]
				if ((wl, rate, mode, r) in wall && (wl, rate, "alone", r) in wall && wall[wl, rate, "alone", r] > 0) {
					add(wl SUBSEP rate SUBSEP mode SUBSEP "sdw", (wall[wl, rate, mode, r] / wall[wl, rate, "alone", r] - 1) * 100)
					add(wl SUBSEP rate SUBSEP mode SUBSEP "sdc", (cpu[wl, rate, mode, r] / cpu[wl, rate, "alone", r] - 1) * 100)
				}
				# Own CPU against perf top's in the same round (goal <= 1/3).
				if ((wl, rate, mode, r) in pcr && (wl, rate, "perftop", r) in pcr && pcr[wl, rate, "perftop", r] > 0)
					add(wl SUBSEP rate SUBSEP mode SUBSEP "vs_top", pcr[wl, rate, mode, r] / pcr[wl, rate, "perftop", r])
				if ((wl, rate, mode, r) in inr && (wl, rate, "perftop", r) in inr && inr[wl, rate, "perftop", r] > 0)
					add(wl SUBSEP rate SUBSEP mode SUBSEP "vs_top_s", inr[wl, rate, mode, r] / inr[wl, rate, "perftop", r])
			}
		}
		printf "## Slowdown and own CPU: %s workload (%s), cpu-clock at %d Hz\n\n", (wl == "c" ? "C" : "Go"),
			(wl == "c" ? "bench/spin.c, 1 thread" : "bench/gospin.go, 1 goroutine"), rate
		printf "Fixed work per run: %s units.\n\n", mmm(wl SUBSEP rate SUBSEP "alone" SUBSEP "units", "%d")
		hdr = "| |"; sep = "|---|"
		for (m = 1; m <= nm; m++) {
			hdr = hdr " " mode_name(ml[m]) " |"
			sep = sep "---|"
		}
		print hdr
		print sep
		row("workload wall time, s", "wall", "%.3f")
		row("workload CPU time (utime+stime), s", "cpu", "%.3f")
		row("slowdown, wall (paired per round), %", "sdw", "%+.1f")
		row("slowdown, workload CPU (paired), %", "sdc", "%+.1f")
		row("profiler CPU, ms per run", "pcpu", "%.1f")
		row("profiler CPU, % of the target's CPU", "pcpu_pct", "%.2f")
		row("profiler CPU while the workload ran, ms", "inrun", "%.1f")
		row("the same, % of one CPU over the workload's run", "inrun_pct", "%.1f")
		row("profiler CPU while the workload ran, ms per second", "inrun_ps", "%.1f")
		row("profiler CPU, ms per 1000 samples", "pk", "%.2f")
		row("profiler CPU per run / perf top's, same round", "vs_top", "%.3f")
		row("CPU per second while the workload ran / perf top's, same round", "vs_top_s", "%.3f")
		row("samples per run", "samples", "%.0f")
		row("samples per run, estimated (target CPU s x rate)", "samples_est", "%.0f")
		row("samples / (target CPU s x rate), %", "cover", "%.1f")
		row("lost records", "lost", "%.0f")
		print ""
		g = wl SUBSEP rate SUBSEP "gotop"; pf = wl SUBSEP rate SUBSEP "perf"
		gc = median(g SUBSEP "pcpu"); pcv = median(pf SUBSEP "pcpu")
		if (gc != "NA" && pcv != "NA")
			goals[++ngoals] = sprintf("Own CPU against perf record, %s, %d Hz: gotop-perf %.1f ms vs perf %.1f ms per run (%.2f vs %.2f ms per 1000 samples): %s",
				(wl == "c" ? "C" : "Go"), rate, gc, pcv, median(g SUBSEP "pk"), median(pf SUBSEP "pk"),
				verdict(gc <= pcv, g SUBSEP "pcpu", pf SUBSEP "pcpu"))
		# The live UI and record against perf record -g and perf top -g.
		split("gotop live", gm, " ")
		split("perf perftop", pm, " ")
		for (a = 1; a <= 2; a++)
			for (b = 1; b <= 2; b++) {
				ka = wl SUBSEP rate SUBSEP gm[a]; kb = wl SUBSEP rate SUBSEP pm[b]
				x = median(ka SUBSEP "sdw"); y = median(kb SUBSEP "sdw")
				if (x == "NA" || y == "NA" || !((wl, rate, "m", "perftop") in seen_mode))
					continue
				goals[++ngoals] = sprintf("Slowdown against perf, %s, %d Hz: %s %+.1f %% vs %s %+.1f %% (wall; CPU %+.1f %% vs %+.1f %%): %s",
					(wl == "c" ? "C" : "Go"), rate, mode_name(gm[a]), x, mode_name(pm[b]), y,
					median(ka SUBSEP "sdc"), median(kb SUBSEP "sdc"), verdict(x <= y, ka SUBSEP "sdw", kb SUBSEP "sdw"))
			}
		for (a = 1; a <= 2; a++) {
			ka = wl SUBSEP rate SUBSEP gm[a]
			x = median(ka SUBSEP "vs_top"); y = median(ka SUBSEP "vs_top_s")
			if (x == "NA")
				continue
			goals[++ngoals] = sprintf("Own CPU against perf top, %s, %d Hz: %s own CPU / perf top -g's (paired per round): %.3f per run (%.2f vs %.2f ms per 1000 samples), %s while the target ran (%.1f vs %.1f ms/s); goal <= 0.333: %s",
				(wl == "c" ? "C" : "Go"), rate, mode_name(gm[a]), x, median(ka SUBSEP "pk"), median(wl SUBSEP rate SUBSEP "perftop" SUBSEP "pk"),
				(y == "NA" ? "n/a" : sprintf("%.3f", y)), median(ka SUBSEP "inrun_ps"), median(wl SUBSEP rate SUBSEP "perftop" SUBSEP "inrun_ps"),
				(x <= 1 / 3 ? "met per run" : "NOT met per run") (y == "NA" ? "" : (y <= 1 / 3 ? ", met per second" : ", NOT met per second")))
		}
		gs = median(g SUBSEP "sdw"); ps = median(pf SUBSEP "sdw")
		if (gs != "NA" && ps != "NA")
			goals[++ngoals] = sprintf("Slowdown against perf record, %s, %d Hz: gotop-perf %+.1f %% vs perf %+.1f %% (wall; CPU %+.1f %% vs %+.1f %%): %s",
				(wl == "c" ? "C" : "Go"), rate, gs, ps, median(g SUBSEP "sdc"), median(pf SUBSEP "sdc"),
				verdict(gs <= ps, g SUBSEP "sdw", pf SUBSEP "sdw"))
	}

	for (i = 1; i <= ngc; i++) {
		rate = gc_order[i]
		printf "## Go reading and repair: labels workload (2 workers), cpu-clock at %d Hz\n\n", rate
		print "| gotop-perf record | CPU, ms per run | CPU, ms per second | samples | CPU, ms per 1000 samples | sampler thread, ms per 1000 | lost | with goroutine, % | labelled, % | repaired, % |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		for (c = 1; c <= 4; c++) {
			cfg = (c == 1) ? "full" : (c == 2) ? "nogo" : (c == 3) ? "norepair" : "none"
			name = (c == 1) ? "default (Go + repair)" : (c == 2) ? "--no-go" : (c == 3) ? "--no-repair" : "--no-go --no-repair"
			k = rate SUBSEP cfg
			printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", name, mmm(k SUBSEP "pcpu", "%.1f"), mmm(k SUBSEP "ps", "%.1f"),
				mmm(k SUBSEP "samples", "%.0f"), mmm(k SUBSEP "pk", "%.2f"), mmm(k SUBSEP "sk", "%.2f"),
				mmm(k SUBSEP "lost", "%.0f"), mmm(k SUBSEP "goid", "%.1f"), mmm(k SUBSEP "lab", "%.1f"),
				mmm(k SUBSEP "rep", "%.1f")
		}
		# Paired differences per round, in microseconds per sample.
		nr = split(gc_rlist[rate], rl, " ")
		for (j = 1; j <= nr; j++) {
			r = rl[j]
			if ((rate, "full", r) in us && (rate, "none", r) in us) {
				add(rate SUBSEP "d_both", us[rate, "full", r] - us[rate, "none", r])
				add(rate SUBSEP "d_both_s", ms_s[rate, "full", r] - ms_s[rate, "none", r])
			}
			if ((rate, "full", r) in us && (rate, "nogo", r) in us)
				add(rate SUBSEP "d_go", us[rate, "full", r] - us[rate, "nogo", r])
			if ((rate, "full", r) in us && (rate, "norepair", r) in us)
				add(rate SUBSEP "d_rep", us[rate, "full", r] - us[rate, "norepair", r])
			if ((rate, "norepair", r) in us && (rate, "none", r) in us)
				add(rate SUBSEP "d_goonly", us[rate, "norepair", r] - us[rate, "none", r])
			if ((rate, "nogo", r) in us && (rate, "none", r) in us)
				add(rate SUBSEP "d_reponly", us[rate, "nogo", r] - us[rate, "none", r])
		}
		print ""
		print "| cost per sample (paired per round), us | median (min to max) |"
		print "|---|---|"
		printf "| Go reading + repair (default minus --no-go --no-repair) | %s |\n", mmm(rate SUBSEP "d_both", "%.2f")
		printf "| the same in ms of CPU per second of wall time | %s |\n", mmm(rate SUBSEP "d_both_s", "%.1f")
		printf "| Go reading (default minus --no-go) | %s |\n", mmm(rate SUBSEP "d_go", "%.2f")
		printf "| repair (default minus --no-repair) | %s |\n", mmm(rate SUBSEP "d_rep", "%.2f")
		printf "| Go reading alone (--no-repair minus both off) | %s |\n", mmm(rate SUBSEP "d_goonly", "%.2f")
		printf "| repair alone (--no-go minus both off) | %s |\n", mmm(rate SUBSEP "d_reponly", "%.2f")
		print ""
		d = median(rate SUBSEP "d_both")
		lf = median(rate SUBSEP "full" SUBSEP "lost"); ln = median(rate SUBSEP "none" SUBSEP "lost")
		if (d != "NA")
			goals[++ngoals] = sprintf("Go reading and repair, %d Hz: cost %.2f us per sample (goal < 2): %s; lost records %s with both vs %s without: %s",
				rate, d, (d < 2) ? "met" : "NOT met", lf, ln, (lf <= ln) ? "no rise" : "RISE")
	}

	if (nsc) {
		print "## What the primitives cost on this machine (bench/syscost.c, CPU time per operation)"
		print ""
		print "| operation | us, median of the rounds (min to max) |"
		print "|---|---|"
		for (i = 1; i <= nsc; i++)
			printf "| %s | %s |\n", sc_order[i], mmm("sc" SUBSEP sc_order[i], "%.2f")
		print ""
	}

	if (ngoals) {
		print "## Goals"
		print ""
		for (i = 1; i <= ngoals; i++)
			print "- " goals[i]
		print ""
	}
}

function mode_name(m) {
	if (m == "gotop") return "gotop-perf record"
	if (m == "live") return "gotop-perf live --batch"
	if (m == "perftop") return "perf top -g"
	if (m == "gotop-nostack") return "gotop-perf --stack-size 8 --no-repair --no-go"
	if (m == "perf") return "perf record -g"
	if (m == "perf-nocg") return "perf record (no callchain)"
	if (m == "perf-stack") return "perf record --call-graph dwarf,1024"
	return m
}

function row(label, fig, fmt,    m, cells) {
	cells = ""
	for (m = 1; m <= nm; m++)
		cells = cells " | " (ml[m] == "alone" && fig !~ /^(wall|cpu)$/ ? "" : mmm(wl SUBSEP rate SUBSEP ml[m] SUBSEP fig, fmt))
	printf "| %s%s |\n", label, cells
}

# "met", or "NOT met" and whether the two ranges overlap (then the difference is within the
# run-to-run noise of this machine).
function verdict(ok, ka, kb) {
	if (ok)
		return "met"
	if (vmin(ka) <= vmax(kb) && vmin(kb) <= vmax(ka))
		return "NOT met on the medians, but the ranges overlap (within this machine's noise)"
	return "NOT met"
}
