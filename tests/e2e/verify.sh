#!/bin/bash
# --verify: blocks corrupted on disk between a write run and a verifying run (a kept --ledger) are
# found with offset, expected content and what is there (zeros, garbage, another valid block).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
T=$E2E_TMP/target
L=$E2E_TMP/ledger
mkdir "$T"
BS=4096

# a full sequential pass, so every block is in the ledger
expect_ok --target "$T" --procs 2 --file-size 4MiB --access seq --size 8MiB --seed 21 --keep --quiet --ledger "$L"
[ -s "$L" ] || fail "--ledger $L was not written"

# A clean verifying run: every block checked, nothing wrong, the seed taken from the ledger.
expect_ok --target "$T" --procs 2 --file-size 4MiB --mode read --populate none --access seq --size 8MiB \
	--verify both --ledger "$L" --keep --quiet --json "$E2E_TMP/clean.json"
jcheck "$E2E_TMP/clean.json" '.verify.ok and .verify.final_checks > 0 and .verify.read_checks == 2048'
jcheck "$E2E_TMP/clean.json" '.config.seed == 21' "the seed comes from the ledger"

# Corrupt three blocks of worker 1's file: garbage in block 10, zeros in block 20, and block 30
# replaced by a copy of block 31 (a valid block of another content).
F1=$T/dedisbench.1
printf 'garbage!' | dd of="$F1" bs=1 seek=$((10 * BS + 100)) conv=notrunc status=none
dd if=/dev/zero of="$F1" bs=$BS seek=20 count=1 conv=notrunc status=none
dd if="$F1" of="$F1" bs=$BS skip=31 seek=30 count=1 conv=notrunc status=none

# final: a pass over every block after the run finds all three, with offsets
run_bench --target "$T" --procs 2 --file-size 4MiB --mode read --populate none --access seq --size 4KiB \
	--verify final --ledger "$L" --keep --quiet --json "$E2E_TMP/final.json"
[ "$RC" -eq 1 ] || fail "a corrupted target must fail verification (exit 1), got $RC: $(cat "$E2E_TMP/err")"
grep -q "verification failed: 3 mismatched blocks" "$E2E_TMP/err" || fail "stderr: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/final.json" '.verify.final_mismatches == 3 and .status == "mismatch"'
for want in "offset $((10 * BS)) of $F1: expected content 0x[0-9a-f]+, found garbage" \
	"offset $((20 * BS)) of $F1: expected content 0x[0-9a-f]+, found zeros" \
	"offset $((30 * BS)) of $F1: expected content 0x[0-9a-f]+, found content 0x[0-9a-f]+"; do
	jq -e --arg re "$want" '[.verify.mismatches[] | test($re)] | any' "$E2E_TMP/final.json" >/dev/null ||
		fail "no mismatch matching '$want' in $(jq -c .verify.mismatches "$E2E_TMP/final.json")"
done
note "final pass: $(jget "$E2E_TMP/final.json" .verify.final_checks) blocks checked, 3 corruptions found with offsets"

# online: reads of the corrupted blocks catch them as they happen (worker 1 reads blocks 0..39)
run_bench --target "$T" --procs 2 --file-size 4MiB --mode read --populate none --access seq --size 320KiB \
	--verify online --ledger "$L" --keep --quiet --json "$E2E_TMP/online.json"
[ "$RC" -eq 1 ] || fail "online verification must fail on the corrupted blocks, got $RC"
jcheck "$E2E_TMP/online.json" '.verify.read_mismatches == 3 and .verify.read_checks == 80'
jcheck "$E2E_TMP/online.json" '[.verify.mismatches[] | test("read at offset")] | all'

# the original's INI key: integritycheck = 3 is --verify both
printf '[execution]\nintegritycheck = 3\n' >"$E2E_TMP/v.ini"
run_bench -f "$E2E_TMP/v.ini" --target "$T" --procs 2 --file-size 4MiB --mode read --populate none --size 4KiB \
	--ledger "$L" --keep --quiet --json "$E2E_TMP/ini.json"
jcheck "$E2E_TMP/ini.json" '.config.verify == "both" and .verify.final_mismatches == 3'

# Any pattern, mixed, several workers, libaio: a clean target verifies clean.
rm -f "$T"/dedisbench.* "$L"
expect_ok --target "$T" --procs 3 --file-size 4MiB --mode mixed --access nurand --size 24MiB --verify both \
	--quiet --json "$E2E_TMP/mixed.json"
jcheck "$E2E_TMP/mixed.json" '.verify.ok and .verify.read_checks > 1000 and .verify.final_checks == 3072'
note "mixed NURand, 3 workers: $(jget "$E2E_TMP/mixed.json" .verify.read_checks) reads and every block verified"
