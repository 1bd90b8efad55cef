#!/bin/sh
# Moved to tests/helpers/go-toolchain.sh. This forward stays only for the unit tests (tests/test-*.c)
# that still run it by this path; remove it when they name tests/helpers/go-toolchain.sh.
exec sh "$(dirname "$0")/helpers/go-toolchain.sh" "$@"
