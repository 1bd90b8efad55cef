#!/bin/sh
# record-cpp.sh: a C++ workload (tests/workloads/cppnames.cpp): its functions' names in the
# profile are demangled as c++filt demangles the symbol table's, with the mangled name as the
# system name (pprof's convention), also for a function of an anonymous namespace, whose
# DWARF name lacks its scope; the Top view prints them.
. "${TOP_SRCDIR:-$(dirname "$0")/..}/tests/helpers/lib.sh"

need_perf
need_pprof
command -v g++ >/dev/null 2>&1 || skip_all "no C++ compiler (g++)"
command -v c++filt >/dev/null 2>&1 || skip_all "no c++filt (binutils)"
plan 5
bin=$T/cppnames
g++ -O1 -g -fno-omit-frame-pointer -o "$bin" "$TOP_SRCDIR/tests/workloads/cppnames.cpp" 2>"$T/cc.err" ||
	{ diag_file "$T/cc.err"; skip_all "cannot build the C++ workload"; }

"$GOTOP_PERF" record -d 2 -o "$T/cpp.pb.gz" -- "$bin" 3 >"$T/out" 2>&1
rc=$?
check "record of a C++ program exits 0" [ $rc -eq 0 ]
pprof -raw "$T/cpp.pb.gz" >"$T/raw" 2>/dev/null
# Each hot function: its mangled name in the symbol table, c++filt's demangling of it, and
# the profile's -raw line naming it ("NAME FILE:LINE s=N(SYSTEM_NAME)").
nm "$bin" | awk '$3 ~ /^_Z/ { print $3 }' >"$T/mangled"
has_name() { grep -F "($2)" "$T/raw" | grep -qF " $1 "; }
for p in 4Cart5total 10accumulate 4Spincl; do
	m=$(grep -m1 -- "$p" "$T/mangled")
	d=$(echo "${m:-none}" | c++filt)
	check "$d: the profile's name is c++filt's, its system name the mangled one" has_name "$d" "${m:-none}"
done
"$GOTOP_PERF" view --batch --view top --rows 5 "$T/cpp.pb.gz" >"$T/top" 2>&1
check "view's Top prints the demangled names" grep -qF 'shop::Cart::total(int) const' "$T/top"
finish
