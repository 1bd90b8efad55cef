# tests/helpers/pprofsums.sh: profiles compared value by value through `go tool pprof -raw`
# (sourced after lib.sh and need_pprof, POSIX sh). go-memprof.sh compares gotop-perf's memory
# profiles with Go's own with them, serve.sh the server's answers with `gotop-perf pprof`'s.

# sums FILE COLUMN: "T total V", "F func V" (flat), "C func V" (cum) of a value column,
# from go tool pprof -raw; zero values left out (Go writes its empty buckets as zero
# samples, gotop-perf's writer leaves them out). With sums_exclude set (an awk regex), the
# samples with a function that matches it are left out (the goroutine of a request that
# a service's own net/http/pprof answers, which the other side never sees).
sums() {
	pprof -raw "$1" 2>/dev/null | awk -v col="$2" -v ex="${sums_exclude:-}" '
		/^Samples:/ { s = 1; getline; next }
		/^Locations/ { s = 0; l = 1; next }
		/^Mappings/ { l = 0; next }
		s && /^ *-?[0-9]+( +-?[0-9]+)*:/ {
			split($0, a, ":"); split(a[1], v, " "); ns++; val[ns] = v[col]; stk[ns] = a[2]
			next
		}
		l && /^ +[0-9]+: / {
			id = $1; sub(":", "", id); nf[id] = 0
			f = $3 ~ /^M=/ ? $4 : $3
			if (f != "") fn[id, ++nf[id]] = f
			next
		}
		l && /^ +[^ ]/ { fn[id, ++nf[id]] = $1; next }
		END {
			for (i = 1; i <= ns; i++) {
				n = split(stk[i], L, " ")
				if (ex != "") {
					drop = 0
					for (j = 1; j <= n; j++)
						for (k = 1; k <= nf[L[j]]; k++)
							if (fn[L[j], k] ~ ex) drop = 1
					if (drop) continue
				}
				t += val[i]
				split("", seen)
				for (j = 1; j <= n; j++)
					for (k = 1; k <= nf[L[j]]; k++) {
						name = fn[L[j], k]
						if (j == 1 && k == 1) flat[name] += val[i]
						if (!(name in seen)) { seen[name] = 1; cum[name] += val[i] }
					}
			}
			printf "T total %.0f\n", t
			for (f in flat) if (flat[f] != 0) printf "F %s %.0f\n", f, flat[f]
			for (f in cum) if (cum[f] != 0) printf "C %s %.0f\n", f, cum[f]
		}'
}

# within OURS GO1 [GO2]: every value of OURS within 0.5% of GO1's (or between GO1 and GO2),
# and every value of GO1 in OURS; prints the failures and the largest difference from GO1.
within() {
	awk -v tol=0.005 '
		FILENAME == ARGV[1] { o[$1 " " $2] = $3; next }
		FILENAME == ARGV[2] { g1[$1 " " $2] = $3; next }
		{ g2[$1 " " $2] = $3 }
		END {
			for (k in g1) if (!(k in o)) o[k] = 0
			for (k in o) {
				a = (k in g1) ? g1[k] : 0; b = (k in g2) ? g2[k] : a
				lo = a < b ? a : b; hi = a < b ? b : a
				d = a != 0 ? (o[k] - a) / a : (o[k] != 0)
				if (d < 0) d = -d
				if (d > worst) worst = d
				if (o[k] < lo - tol * (lo < 0 ? -lo : lo) || o[k] > hi + tol * (hi < 0 ? -hi : hi)) {
					bad++
					if (bad <= 5) printf "# %s: gotop-perf %s, Go %s%s\n", k, o[k], a, (k in g2) ? " .. " b : ""
				}
			}
			printf "# largest difference from Go: %.4f%%\n", worst * 100
			exit bad > 0
		}' "$1" "$2" "${3:-/dev/null}"
}

# compare NAME NCOLS OURS GO1 [GO2]: within, for every value column.
compare() {
	cmp_ok=0
	c=1
	while [ $c -le "$2" ]; do
		sums "$3" $c >"$T/o.sums"
		sums "$4" $c >"$T/g1.sums"
		if [ -n "${5:-}" ]; then sums "$5" $c >"$T/g2.sums"; else : >"$T/g2.sums"; fi
		if ! [ -s "$T/o.sums" ] || ! grep -q . "$T/g1.sums"; then
			diag "$1 column $c: nothing decoded"
			cmp_ok=1
		elif ! within "$T/o.sums" "$T/g1.sums" "$T/g2.sums" >"$T/within.out"; then
			diag "$1 column $c:"
			cat "$T/within.out"
			cmp_ok=1
		else
			[ $c -eq 1 ] && sed -n '$p' "$T/within.out"
		fi
		c=$((c + 1))
	done
	return $cmp_ok
}
