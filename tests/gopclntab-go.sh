#!/bin/sh
# gopclntab-go.sh: tests/test-gopclntab on real Go binaries: each release of GOPCLN_TEST_GO
# (default 1.19 1.23 1.27) builds the inline workload and tests/workloads/go/leafduff.go
# plain, stripped, PIE and for arm64 (tests/helpers/go-build.sh, cached under
# tests/gopcln-data), and every function's lines, inlines and frame sizes are checked
# against go tool addr2line and the DWARF. make check-unit runs the same program on tables
# built by hand only: it builds no Go program.
: "${TOP_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${TOP_BUILDDIR:=$TOP_SRCDIR}"
GOPCLN_TEST_GO=${GOPCLN_TEST_GO:-1.19 1.23 1.27}
export GOPCLN_TEST_GO
exec sh "$TOP_SRCDIR/tests/helpers/tap-unit.sh" "$TOP_BUILDDIR/tests/test-gopclntab"
