#!/bin/bash
# Verification without a ledger (issue 12, finding 3): a read pass over data an earlier run
# wrote identifies every block from its bytes (valid / zeros / garbage / another seed), and with
# that run's --seed checks each block holds the layout's content; the summary and JSON say how
# many blocks were checked and how; --verify that checks nothing fails (exit 1), never "ok".
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
T=$E2E_TMP/t
mkdir "$T" "$E2E_TMP/orig"
BS=4096
geom=(--procs 2 --file-size 1MiB --block-size $BS)
reread=("${geom[@]}" --mode read --populate none --keep --quiet)

# One sequential pass with seed 5, kept: every block holds its layout content.
expect_ok --target "$T" "${geom[@]}" --seed 5 --keep --quiet
cp "$T"/dedisbench.* "$E2E_TMP/orig/"
restore() { for i in 0 1; do cat "$E2E_TMP/orig/dedisbench.$i" >"$T/dedisbench.$i"; done; }

# 1. The finding: 16 bytes corrupted inside block 77, a read pass with --verify both and no
# ledger: the block is found (online and in the final pass), the run fails.
printf '0123456789abcdef' | dd of="$T/dedisbench.0" bs=1 seek=$((77 * BS + 200)) conv=notrunc status=none
run_bench --target "$T" "${reread[@]}" --verify both --json "$E2E_TMP/c.json"
[ "$RC" -eq 1 ] || fail "corrupted block 77, --verify both, no ledger: exit $RC, want 1: $(cat "$E2E_TMP/err")"
grep -q "verification failed: 2 mismatched blocks" "$E2E_TMP/err" || fail "stderr: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/c.json" '.verify.checked == 1024 and .verify.read_checks == 512 and .verify.final_checks == 512'
jcheck "$E2E_TMP/c.json" '.verify.how.identified == 1024 and .verify.how.ledger == 0 and .verify.unchecked == 0'
jcheck "$E2E_TMP/c.json" '.verify.found.garbage == 2 and .verify.found.foreign_seed == 1022 and .verify.found.a_foreign_seed == 5' \
	"the intact blocks are of seed 5 (this run's seed is random), block 77 is garbage" .verify.found
jcheck "$E2E_TMP/c.json" '.verify.ok == false and (.verify.mismatches | length) == 2'
# ... and the JSON's status says what the exit status says (it was "ok": the I/O went well)
jcheck "$E2E_TMP/c.json" '.status == "mismatch" and (.error | startswith("verification failed: 2 mismatched blocks; first: "))' \
	"status of a run that found corruption" '{status, error}'
jcheck "$E2E_TMP/c.json" "[.verify.mismatches[] | test(\"offset $((77 * BS)) of $T/dedisbench.0: expected an intact dedisbench block or zeros, found garbage\")] | all"
# ... and against the layout when the seed is given
run_bench --target "$T" "${reread[@]}" --verify final --seed 5 --json "$E2E_TMP/cs.json"
[ "$RC" -eq 1 ] || fail "corrupted block 77, --seed 5: exit $RC, want 1"
jcheck "$E2E_TMP/cs.json" '.verify.how.layout == 512 and .verify.layout_seed == 5 and .verify.found.valid == 511 and .verify.found.garbage == 1'
jcheck "$E2E_TMP/cs.json" "[.verify.mismatches[] | test(\"offset $((77 * BS)) .*expected content 0x[0-9a-f]+ \\\\(the layout's\\\\), found garbage\")] | all"
note "finding 3: corrupted block 77 found without a ledger ($(jget "$E2E_TMP/c.json" .verify.checked) checks, identified from the bytes)"

# 2. A clean target verifies clean both ways, every block checked, the summary says how.
restore
run_bench --target "$T" "${geom[@]}" --mode read --populate none --keep --verify both --json "$E2E_TMP/ok.json"
[ "$RC" -eq 0 ] || fail "clean target, no ledger: exit $RC: $(cat "$E2E_TMP/err")"
grep -q "^verify (both): 512 reads checked, 0 mismatched; final pass 512 blocks checked, 0 mismatched; ok$" "$E2E_TMP/out" ||
	fail "summary: $(grep -A2 '^verify' "$E2E_TMP/out")"
grep -q "^  how: 1024 identified from their bytes (no ledger); 0 not checkable$" "$E2E_TMP/out" ||
	fail "summary does not say how: $(grep -A2 '^verify' "$E2E_TMP/out")"
jcheck "$E2E_TMP/ok.json" '.verify.ok and .verify.complete and .verify.checked == 1024'
expect_ok --target "$T" "${reread[@]}" --verify both --seed 5 --json "$E2E_TMP/oks.json"
jcheck "$E2E_TMP/oks.json" '.verify.ok and .verify.how.layout == 1024 and .verify.found.valid == 1024'

# 3. What only the layout can tell: a block moved to another offset (a misdirected write) is an
# intact block, but not the one that belongs there.
dd if="$E2E_TMP/orig/dedisbench.1" of="$T/dedisbench.1" bs=$BS skip=78 seek=90 count=1 conv=notrunc status=none
expect_ok --target "$T" "${reread[@]}" --verify final --json "$E2E_TMP/m.json"
jcheck "$E2E_TMP/m.json" '.verify.ok and .verify.found.foreign_seed == 512' "without the seed a moved block is intact data"
run_bench --target "$T" "${reread[@]}" --verify final --seed 5 --json "$E2E_TMP/ms.json"
[ "$RC" -eq 1 ] || fail "a moved block with --seed 5: exit $RC, want 1"
jcheck "$E2E_TMP/ms.json" "(.verify.mismatches | length) == 1 and (.verify.mismatches[0] | test(\"offset $((90 * BS)) of $T/dedisbench.1: expected content 0x[0-9a-f]+ \\\\(the layout's\\\\), found content 0x[0-9a-f]+$\"))"
restore

# 4. A block of another run (seed 6): intact but foreign - wrong when the data's seed is given.
mkdir "$E2E_TMP/t6"
expect_ok --target "$E2E_TMP/t6" "${geom[@]}" --seed 6 --keep --quiet
dd if="$E2E_TMP/t6/dedisbench.0" of="$T/dedisbench.0" bs=$BS skip=3 seek=100 count=1 conv=notrunc status=none
run_bench --target "$T" "${reread[@]}" --verify final --seed 5 --json "$E2E_TMP/f.json"
[ "$RC" -eq 1 ] || fail "a block of seed 6 with --seed 5: exit $RC, want 1"
jcheck "$E2E_TMP/f.json" '.verify.found.foreign_seed == 1 and .verify.found.a_foreign_seed == 6 and .verify.found.valid == 511'
jcheck "$E2E_TMP/f.json" ".verify.mismatches[0] | test(\"offset $((100 * BS)) .*found content 0x[0-9a-f]+ of another seed \\\\(6\\\\)\")"
restore

# 5. --verify that can check nothing is an error: a kept ledger that records no write (its run
# only read) leaves nothing known about any block.
expect_ok --target "$T" "${reread[@]}" --ledger "$E2E_TMP/empty.ledger"
run_bench --target "$T" "${reread[@]}" --verify final --ledger "$E2E_TMP/empty.ledger" --json "$E2E_TMP/z.json"
[ "$RC" -eq 1 ] || fail "--verify that checked nothing: exit $RC, want 1"
grep -q "^dedisbench: --verify final checked no block" "$E2E_TMP/err" || fail "stderr: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/z.json" '.verify.checked == 0 and .verify.unchecked == 512 and .verify.ok == false'
jcheck "$E2E_TMP/z.json" '.status == "mismatch" and (.error | startswith("--verify final checked no block"))' \
	"status of a verification that checked nothing" '{status, error}'
# ... and online verification of a run without reads is refused up front
run_bench --target "$T" "${geom[@]}" --keep --verify online
[ "$RC" -eq 2 ] || fail "--verify online on a write run: exit $RC, want 2"
note "clean targets verify clean; moved and foreign blocks caught with the seed; nothing checked = exit 1"

# 6. Issue 36 item 3: the header names how a block was built, so --compress R data verifies
# without repeating --compress (or with another R), and its payload is still checked in full.
mkdir "$E2E_TMP/c4"
expect_ok --target "$E2E_TMP/c4" "${geom[@]}" --seed 5 --compress 4 --keep --quiet
for extra in "" "--compress 2"; do
	# shellcheck disable=SC2086
	run_bench --target "$E2E_TMP/c4" "${reread[@]}" --verify final --seed 5 $extra --json "$E2E_TMP/c4.json"
	[ "$RC" -eq 0 ] || fail "--compress 4 data checked with --seed 5 ${extra:-alone}: exit $RC: $(head -3 "$E2E_TMP/err")"
	jcheck "$E2E_TMP/c4.json" '.verify.ok and .verify.how.layout == 512 and .verify.found.valid == 512'
done
expect_ok --target "$E2E_TMP/c4" "${reread[@]}" --verify final --json "$E2E_TMP/c4i.json"
jcheck "$E2E_TMP/c4i.json" '.verify.found.foreign_seed == 512 and .verify.found.a_foreign_seed == 5'
printf 'x' | dd of="$E2E_TMP/c4/dedisbench.1" bs=1 seek=$((33 * BS + 4000)) conv=notrunc status=none
run_bench --target "$E2E_TMP/c4" "${reread[@]}" --verify final --seed 5 --json "$E2E_TMP/c4x.json"
[ "$RC" -eq 1 ] || fail "a changed filler byte in --compress 4 data: exit $RC, want 1"
jcheck "$E2E_TMP/c4x.json" '.verify.found.garbage == 1 and .verify.found.valid == 511'
note "item 3: --compress 4 data verifies without --compress (header names R); a changed filler byte is caught"
