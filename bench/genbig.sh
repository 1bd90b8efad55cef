#!/bin/bash
# genbig.sh: generates and builds the large Go target of the attach benchmark: a
# program of many functions (DWARF, .symtab and .gopclntab all large) that burns CPU in
# main.hot, so a profiler's first symbolized refresh can be recognised. (The large C++
# target is clang-14 with libLLVM and libclang-cpp, see ingest-attach-memory.sh.)
#
# Usage: bench/genbig.sh go GOROOT OUT [NFUNCS]     (default 120000 functions)
# Skips the build when OUT exists. Exit status 0, or 1.

set -u
kind=$1
shift

die() {
	echo "genbig.sh: $*" >&2
	exit 1
}

case $kind in
go)
	goroot=$1 out=$2 n=${3:-120000}
	[ -x "$out" ] && exit 0
	d=$(mktemp -d /tmp/genbig-go.XXXXXX) || die "mktemp"
	files=16
	per=$(((n + files - 1) / files))
	for ((f = 0; f < files; f++)); do
		awk -v f=$f -v per=$per -v n=$n 'BEGIN {
			print "package main\n"
			lo = f * per; hi = lo + per; if (hi > n) hi = n
			for (i = lo; i < hi; i++) {
				printf "//go:noinline\nfunc f%d(x uint64) uint64 {\n", i
				printf "\tswitch x & 7 {\n"
				for (c = 0; c < 7; c++)
					printf "\tcase %d:\n\t\tx = x*%d + %d\n", c, 2 * (i + c) + 1, i * 7 + c
				printf "\tdefault:\n\t\tx ^= x >> %d\n\t}\n\treturn x\n}\n\n", (i % 31) + 1
			}
		}' >"$d/f$f.go"
	done
	awk -v n=$n 'BEGIN {
		print "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n"
		printf "var table = [...]func(uint64) uint64{\n"
		for (i = 0; i < n; i++)
			printf "\tf%d,\n", i
		print "}\n"
		print "//go:noinline"
		print "func hot(x uint64) uint64 {\n\tfor i := 0; i < 1000000; i++ {\n\t\tx ^= x << 13\n\t\tx ^= x >> 7\n\t\tx ^= x << 17\n\t}\n\treturn x\n}\n"
		print "func main() {"
		print "\td := 30 * time.Second"
		print "\tif len(os.Args) > 1 {\n\t\td, _ = time.ParseDuration(os.Args[1])\n\t}"
		print "\tvar x uint64 = 1"
		print "\tfor end := time.Now().Add(d); time.Now().Before(end); {"
		print "\t\tx = hot(x)"
		print "\t\tx = table[x%uint64(len(table))](x)"
		print "\t}"
		print "\tfmt.Println(x)"
		print "}"
	}' >"$d/main.go"
	(cd "$d" && printf 'module big\n\ngo 1.19\n' >go.mod &&
		GOROOT=$goroot GOTOOLCHAIN=local GOFLAGS=-mod=mod GOCACHE=/tmp/genbig-gocache \
			"$goroot/bin/go" build -o "$out" .) || die "go build failed in $d"
	rm -rf "$d"
	;;
*) die "usage: genbig.sh go GOROOT OUT [N]" ;;
esac
