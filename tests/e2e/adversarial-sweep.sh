#!/bin/bash
# Issue 36's adversarial sweep, a small fixed-seed part of it (bench/perf/adversarial-sweep.sh):
# 20 path swaps by `nobody` into a root-owned victim during runs, 20 signals at random instants.
# Any case the sweep classes as a BUG (victim changed, created in or deleted; a hang; a JSON
# that lies; leftovers; a lock kept; a volume fsck or verify rejects) fails the test.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root: a second user (nobody) swaps paths under root's runs"
command -v setpriv >/dev/null 2>&1 || skip "no setpriv to run commands as nobody"
command -v python3 >/dev/null 2>&1 || skip "no python3 (the sweep's byte-level checks)"
mktmp
chmod 755 "$E2E_TMP" # nobody walks into the sweep's scratch below it
rc=0
bash "$top_srcdir/bench/perf/adversarial-sweep.sh" --build "$top_builddir" --swaps 20 --signals 20 \
	--seed 36 --scratch "$E2E_TMP" >"$E2E_TMP/out" || rc=$?
case $rc in
0) note "$(tail -n 2 "$E2E_TMP/out" | head -n 1)" ;;
77) skip "$(tail -n 1 "$E2E_TMP/out")" ;;
*) fail "the sweep found BUG cases (exit $rc):
$(grep -E '\| BUG|^(part|swap|signal) ' "$E2E_TMP/out")" ;;
esac
