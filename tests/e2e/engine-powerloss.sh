#!/bin/bash
# Power loss on dedisengine: tests/powerloss records every write and sync the engine issues to its
# durable files during a random workload (writes, duplicates, NODEDUP hints, discards, flushes,
# GC, the closing checkpoint), then rebuilds the disk at random cut points (any subset of the
# unsynced writes lost, sector by sector) and reopens it: every block flushed reads back, every
# other block reads its old or a new content, fsck is clean. Once without compression, once with.
# Long mode: E2E_POWERLOSS_CUTS=N cut points per run (default 500), E2E_POWERLOSS_SEEDS=K runs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
PL="$top_builddir/tests/powerloss"
[ -x "$PL" ] || fail "no power-loss harness at $PL"
mktmp
# Thousands of fsyncs: on tmpfs when there is one (a cut point costs milliseconds there).
W="$E2E_TMP"
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	W=$(mktemp -d /dev/shm/dedis-powerloss.XXXXXX)
	on_exit "rm -rf '$W'"
fi

cuts=${E2E_POWERLOSS_CUTS:-500}
seeds=${E2E_POWERLOSS_SEEDS:-1}
seed=${E2E_SEED:-$$}
note "seed $seed (E2E_SEED=$seed repeats the workloads and cut points)"
total=0 bad=0
for ((k = 0; k < seeds; k++)); do
	for comp in none lz4; do
		d="$W/run-$k-$comp"
		mkdir "$d"
		rc=0
		"$PL" "$d" "$cuts" $((seed + k)) "$comp" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
		line=$(cat "$E2E_TMP/out")
		note "$comp, seed $((seed + k)): $line"
		[[ $line =~ ^([0-9]+)\ cut\ points,\ ([0-9]+)\ violations ]] ||
			fail "the harness printed no summary (exit $rc): $(head -c 800 "$E2E_TMP/err")"
		total=$((total + BASH_REMATCH[1]))
		bad=$((bad + BASH_REMATCH[2]))
		[ "$rc" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] || fail "the harness exited $rc: $(head -c 800 "$E2E_TMP/err")"
		[ "${BASH_REMATCH[2]}" -eq 0 ] || note "first violations: $(head -c 1500 "$E2E_TMP/err")"
		rm -rf "$d"
	done
done
echo "$total cut points, $bad violations"
[ "$total" -ge 1000 ] || [ -n "${E2E_POWERLOSS_CUTS:-}" ] || fail "only $total cut points"
[ "$bad" -eq 0 ] || fail "$bad of $total cut points left the volume inconsistent or reading garbage"
