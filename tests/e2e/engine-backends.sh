#!/bin/bash
# A 4-process dedisbench run against the reference engine with each index backend (mem, bdb,
# bloom): the engine's view matches the generator's, reads return what was written, and the
# same seed and workload give the same logical results on every backend.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp

SEED=4242
JOB=(--keep --procs 4 --file-size 16MiB --access uniform --dist kernels --seed "$SEED" -q)
for ix in mem bdb bloom; do
	vol="$E2E_TMP/vol-$ix"
	# Write: 1.5 passes over 64 MiB, so blocks are overwritten and the chunk store fills (GC).
	run_bench --target "engine:$vol,index=$ix" "${JOB[@]}" --size 96MiB --json "$E2E_TMP/w-$ix.json"
	[ "$RC" -eq 0 ] || fail "$ix write run exited $RC: $(head -c 600 "$E2E_TMP/err")"
	w="$E2E_TMP/w-$ix.json"
	jcheck "$w" ".engine.index == \"$ix\"" "$ix: the JSON names another index" .engine
	jcheck "$w" '.engine.match == true' "$ix write run: expected and observed differ" .engine
	jcheck "$w" '.engine.observed.fsck_problems == 0' "$ix write run: fsck problems" .engine
	jcheck "$w" '.engine.expected.mapped_blocks > 0 and .engine.observed.logical_writes == 24576' \
		"$ix write run: not every write reached the engine" .engine
	jcheck "$w" '.engine.observed.overwrites > 0' "$ix write run: nothing was overwritten" .engine
	"$DEDISENGINE" fsck "$vol" >"$E2E_TMP/fsck" 2>&1 || fail "$ix: fsck after the write run: $(cat "$E2E_TMP/fsck")"
	"$DEDISENGINE" stat "$vol" --json >"$E2E_TMP/stat-$ix.json" || fail "$ix: stat failed"
	jcheck "$E2E_TMP/stat-$ix.json" \
		".mapped_blocks == $(jget "$w" .engine.observed.mapped_blocks) and .referenced_blocks == $(jget "$w" .engine.observed.distinct_blocks)" \
		"$ix: the volume's own counters disagree with the run's engine report"

	# Mixed: on the same (now discarded) volume, reads checked against the ledger.
	run_bench --target "engine:$vol" "${JOB[@]}" -m --size 48MiB --json "$E2E_TMP/m-$ix.json"
	[ "$RC" -eq 0 ] || fail "$ix mixed run exited $RC: $(head -c 600 "$E2E_TMP/err")"
	m="$E2E_TMP/m-$ix.json"
	jcheck "$m" '.engine.match == true and .engine.observed.fsck_problems == 0' "$ix mixed run does not match" .engine
	jcheck "$m" '.engine.read_checks > 0 and .engine.read_mismatches == 0' "$ix mixed run: reads not checked or wrong" .engine
	if [ "$ix" = bloom ]; then
		jcheck "$w" '.engine.observed.bloom_negatives > 0' "bloom: the filter avoided no lookup" .engine
	else
		jcheck "$w" '.engine.observed.bloom_negatives == 0' "$ix: bloom negatives without a Bloom filter" .engine
	fi
	note "$ix: write $(jq -c '.engine.observed | {mapped_blocks, distinct_blocks, bloom_negatives}' "$w"), mixed read checks $(jget "$m" .engine.read_checks): match"
done

# Same logical results from every backend: the counters that depend only on the workload (not
# unique vs duplicate writes: which of two racing workers stores a content first, and whether
# a GC pass dropped it in between, depends on timing).
LOGICAL='.engine | {expected, m: .observed.mapped_blocks, d: .observed.distinct_blocks, r: .observed.dedup_ratio,
	w: .observed.logical_writes, o: .observed.overwrites}'
for run in w m; do
	ref=$(jq -cS "$LOGICAL" "$E2E_TMP/$run-mem.json")
	for ix in bdb bloom; do
		got=$(jq -cS "$LOGICAL" "$E2E_TMP/$run-$ix.json")
		[ "$got" = "$ref" ] || fail "$run run: $ix gives $got, mem gives $ref"
	done
done
note "mem, bdb and bloom agree: $(jq -cS "$LOGICAL" "$E2E_TMP/w-mem.json")"
