#!/bin/bash
# sweep-long.sh - the fault-injection long mode (opt-in): tests/e2e/fault-injection.sh over a
# few hundred injection points (17 call numbers x 2 errnos x 14 tool/operation pairs).
#   tests/fault/sweep-long.sh [BUILD_DIR]      # default: build/ in the source tree
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$ROOT/build}" && pwd)
make -s -C "$BUILD" dedisbench dedisgen dedisengine tests/fault/dedis-fault.so
FAULT_SWEEP=long top_srcdir=$ROOT top_builddir=$BUILD exec "$ROOT/tests/e2e/fault-injection.sh"
