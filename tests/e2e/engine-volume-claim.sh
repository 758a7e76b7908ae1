#!/bin/bash
# What a run does to an existing engine volume (issue 36, item 2): a run that only reads never
# discards it (the README's check without a ledger reads the data written, it does not read
# zeros after wiping it); a volume holding data dedisbench did not write (dedisengine import) is
# refused without --force, to read or to write, as a foreign file is, and a read with --force
# leaves it unmarked; a volume dedisbench kept is known by its mark, or by its blocks without it;
# zeros where the seed's layout expects data are a mismatch.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp
cd "$E2E_TMP"
export DEDIS_LOCK_DIR=$E2E_TMP/locks
mkdir locks
geom=(--procs 2 --file-size 4MiB)
reread=("${geom[@]}" --mode read --populate none --keep)
mapped() { "$DEDISENGINE" stat "$1" --json | jq -r .mapped_blocks; }
# refused WANT ARGS...: exit 2 and one line on stderr matching WANT
refused() {
	local want=$1
	shift
	run_bench "$@"
	[ "$RC" -eq 2 ] || fail "dedisbench $*: exit $RC, want 2: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -Eq "$want" "$E2E_TMP/err" ||
		fail "dedisbench $*: stderr does not say '$want': $(cat "$E2E_TMP/err")"
}

# 1. The finding: written with seed 7 and kept, checked as the README checks without a ledger.
expect_ok --target engine:vol "${geom[@]}" --seed 7 --keep --quiet
[ "$(mapped vol)" -eq 2048 ] || fail "the written volume maps $(mapped vol) blocks, want 2048"
expect_ok --target engine:vol "${reread[@]}" --verify final --seed 7 --json check.json
jcheck check.json '.verify.ok and .verify.final_checks == 2048 and .verify.how.layout == 4096 and .verify.found.valid == 4096' \
	"every block read back holds seed 7's content" .verify
jcheck check.json '.engine.match and .engine.expected_known == false and .engine.observed.mapped_blocks == 2048'
[ "$(mapped vol)" -eq 2048 ] || fail "a read-only run discarded the volume: $(mapped vol) blocks mapped, want 2048"
# ... a read run without --keep, without --verify, leaves it too (it removes only what it formats)
expect_ok --target engine:vol "${geom[@]}" --mode read --populate none --size 1MiB --quiet
[ "$(mapped vol)" -eq 2048 ] || fail "a read run without --keep changed the volume: $(mapped vol) blocks mapped"

# 2. Zeros where the layout expects data are a mismatch, never a pass.
"$DEDISENGINE" discard vol 100 3 >/dev/null
run_bench --target engine:vol "${reread[@]}" --verify final --seed 7 --json zeros.json
[ "$RC" -eq 1 ] || fail "3 discarded blocks, --verify final --seed 7: exit $RC, want 1"
jcheck zeros.json '.verify.final_mismatches == 3 and .verify.found.zero == 6 and (.verify.mismatches[0] | test("at offset 409600 of vol: expected content 0x[0-9a-f]+ \\(the layout.s\\), found zeros"))'

# 3. Data dedisbench did not write (dedisengine import): refused to read and to write without
# --force, untouched; a read with --force is not a claim, so a later write is still refused.
head -c 4M /dev/urandom >foreign.img
"$DEDISENGINE" format imp --size 8MiB >/dev/null
"$DEDISENGINE" import imp foreign.img >/dev/null
"$DEDISENGINE" export imp imp.before >/dev/null
refused "^dedisbench: target engine:imp: it holds data dedisbench did not write; refusing to use it without --force$" \
	--target engine:imp "${geom[@]}" --mode read --populate none --time 1s
refused "target engine:imp: it holds data dedisbench did not write; refusing to overwrite it without --force" \
	--target engine:imp "${geom[@]}" --time 1s
expect_ok --target engine:imp "${geom[@]}" --mode read --populate none --time 1s --force --quiet
refused "refusing to overwrite it without --force" --target engine:imp "${geom[@]}" --time 1s
"$DEDISENGINE" export imp imp.after >/dev/null
cmp -s imp.before imp.after || fail "a refused or read-only run changed the imported volume"
# ... and with --force a write run takes it (cleared, then the run's own)
expect_ok --target engine:imp "${geom[@]}" --force --quiet --json forced.json
jcheck forced.json '.engine.match and .engine.expected_known'

# 4. A kept volume someone imported into afterwards is no longer dedisbench's alone.
expect_ok --target engine:vol "${geom[@]}" --seed 7 --keep --quiet
head -c 64K /dev/urandom >part.img
"$DEDISENGINE" import vol part.img >/dev/null
refused "target engine:vol: it holds data dedisbench did not write" --target engine:vol "${geom[@]}" --time 1s

# 5. dedisbench's own volume without its mark (the xattr lost in a copy): known by its blocks.
expect_ok --target engine:vol "${geom[@]}" --seed 7 --keep --quiet --force
unmark() { python3 -c 'import os; os.removexattr("vol", "user.dedis.run")' 2>/dev/null || true; }
unmark
expect_ok --target engine:vol "${reread[@]}" --verify final --seed 7 --quiet
unmark
expect_ok --target engine:vol "${geom[@]}" --quiet
note "read runs keep the volume, zeros where data was are mismatches, foreign volumes need --force, own ones known"
