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

# The summary's verify section: an engine target checks reads unasked, so a run with reads has
# one, and a write-only run, which has nothing to check, none (no "NOTHING CHECKED" alarm).
vol="$E2E_TMP/vol-mem"
expect_ok --target "engine:$vol" --keep --procs 2 --file-size 4MiB --seed "$SEED" --size 8MiB
grep -q '^engine (mem index): .*: MATCH$' "$E2E_TMP/out" || fail "write-only run: no engine MATCH line: $(cat "$E2E_TMP/out")"
grep -q '^verify' "$E2E_TMP/out" && fail "write-only run, nothing asked: a verify section: $(grep -A1 '^verify' "$E2E_TMP/out")"
expect_ok --target "engine:$vol" --keep --procs 2 --file-size 4MiB --seed "$SEED" --size 8MiB -m
grep -qE '^verify \(reads, as on every engine target\): [1-9][0-9]* reads checked, 0 mismatched; ok$' "$E2E_TMP/out" ||
	fail "mixed run: want its reads verified, got: $(grep '^verify' "$E2E_TMP/out")"
note "summary: no verify section for a write-only engine run; reads checked in a mixed one"

# bdb keeps each index partition in its own Berkeley DB environment (bdb/env.<k>/); a volume
# formatted when all of them shared one (bdb/ itself) still opens as it was: fsck clean, its
# counters, its bytes read back, new writes deduplicated against its old entries.
tar -xzf "$top_srcdir/tests/e2e/data/engine/bdb-one-env-volume.tgz" -C "$E2E_TMP"
old="$E2E_TMP/vol"
[ -f "$old/bdb/index.0.db" ] && [ ! -e "$old/bdb/env.0" ] || fail "the fixture is not a one-environment volume"
"$DEDISENGINE" fsck "$old" >"$E2E_TMP/fsck" 2>&1 || fail "fsck of a one-environment bdb volume: $(cat "$E2E_TMP/fsck")"
"$DEDISENGINE" stat "$old" --json >"$E2E_TMP/old.json" || fail "stat of a one-environment bdb volume failed"
jcheck "$E2E_TMP/old.json" '.index_entries == 4 and .mapped_blocks == 8 and .physical_blocks == 4' \
	"one-environment volume: counters"
"$DEDISENGINE" export "$old" "$E2E_TMP/old.out" -q || fail "export of a one-environment bdb volume failed"
[ "$(head -c 32768 "$E2E_TMP/old.out" | sha256sum | cut -d' ' -f1)" = \
	3e8c5cbe76a67f56312c2e099acdd7221dbe40820e65b7d6881bfaf2048662f8 ] ||
	fail "one-environment volume: the bytes read back are not those written"
# the same 4 contents written again, in reverse block order, at blocks 0..7: every write a
# duplicate of an old entry, none of them in place
python3 - "$E2E_TMP/old.out" "$E2E_TMP/again" <<'PY'
import sys
b = open(sys.argv[1], "rb").read(32768)
open(sys.argv[2], "wb").write(b"".join(b[i * 4096:(i + 1) * 4096] for i in reversed(range(8))))
PY
"$DEDISENGINE" import "$old" "$E2E_TMP/again" -q || fail "import into a one-environment bdb volume failed"
"$DEDISENGINE" fsck "$old" >"$E2E_TMP/fsck" 2>&1 || fail "fsck after writing a one-environment volume: $(cat "$E2E_TMP/fsck")"
"$DEDISENGINE" stat "$old" --json >"$E2E_TMP/old2.json"
jcheck "$E2E_TMP/old2.json" ".index_entries == 4 and .physical_blocks == 4 and .duplicate_writes == $(jget "$E2E_TMP/old.json" .duplicate_writes) + 8" \
	"one-environment volume: rewriting its contents was not deduplicated against its entries"
[ ! -e "$old/bdb/env.0" ] || fail "opening a one-environment volume changed its layout"
new="$E2E_TMP/vol-bdb"
[ -f "$new/bdb/env.0/index.0.db" ] && [ -f "$new/bdb/env.7/index.15.db" ] && [ ! -e "$new/bdb/env.8" ] &&
	[ ! -e "$new/bdb/index.0.db" ] || fail "a new bdb volume does not have its 8 environments: $(ls "$new/bdb")"
note "one-environment (older) bdb volume: fsck clean, read back, rewrites deduplicated; new volumes: bdb/env.0..7"
