#!/bin/bash
# Rewrite the behaviour-lock outputs (tests/golden/expected) from a build, after a change of
# output that is meant: tests/golden/regen.sh BUILD_DIR (e.g. build), then review `git diff
# tests/golden` and commit it with the change. Cases this machine cannot run (io_uring, a loop
# device without root) keep their stored files; regenerate those as root where io_uring works.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
[ -x "$build/dedisbench" ] || { echo "$0: no dedisbench in $build" >&2; exit 2; }
top_srcdir=$src top_builddir=$build GOLDEN_WRITE=$src/tests/golden/expected \
	bash "$src/tests/e2e/golden-outputs.sh"
