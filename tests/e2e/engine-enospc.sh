#!/bin/bash
# A full chunk store (thin volume) fails cleanly with ENOSPC: dedisengine import and dedisbench
# exit 1 with one line naming it, fsck accepts the volume after, the blocks stored before the
# failure read back, and the volume stays usable.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp
T="$E2E_TMP"

# 1. import of 8 MiB of random (all unique) data into a 64 MiB volume with a 4 MiB chunk store.
vol="$T/thin"
"$DEDISENGINE" format "$vol" --size 64MiB --data-size 4MiB -q || fail "format of a thin volume failed"
head -c $((8 << 20)) /dev/urandom >"$T/rand"
rc=0
"$DEDISENGINE" import "$vol" "$T/rand" >"$T/imp.out" 2>"$T/imp.err" || rc=$?
[ "$rc" -eq 1 ] || fail "import into a full chunk store exited $rc, want 1: $(cat "$T/imp.err")"
[ "$(wc -l <"$T/imp.err")" -eq 1 ] || fail "want one error line, got: $(cat "$T/imp.err")"
grep -Eq 'No space left on device|ENOSPC' "$T/imp.err" || fail "the error does not name ENOSPC: $(cat "$T/imp.err")"
"$DEDISENGINE" fsck "$vol" >"$T/fsck" 2>&1 || fail "fsck after ENOSPC: $(cat "$T/fsck")"
"$DEDISENGINE" stat "$vol" --json >"$T/stat.json" || fail "stat after ENOSPC failed"
mapped=$(jget "$T/stat.json" .mapped_blocks)
# Every block of the 4 MiB store holds one of the file's blocks; the one that did not fit is not mapped.
[ "$mapped" -eq 1024 ] || fail "after ENOSPC $mapped blocks are mapped, want the 1024 that fit"
jcheck "$T/stat.json" '.physical_blocks == 1024 and .referenced_blocks == 1024 and .unique_writes == 1024' \
	"the counters after ENOSPC"
"$DEDISENGINE" export "$vol" "$T/out" -q || fail "export after ENOSPC failed"
cmp -n $((mapped * 4096)) "$T/rand" "$T/out" || fail "the $mapped blocks stored before ENOSPC do not read back"
cmp -i $((mapped * 4096)):0 -n $(((64 << 20) - mapped * 4096)) "$T/out" /dev/zero ||
	fail "blocks past the failure are not zeros (the failed write left something mapped)"
note "import: exit 1 ($(cat "$T/imp.err")); $mapped blocks stored and read back; fsck clean"

# Still usable: discard what is there, collect it, and the store takes 4 MiB again.
"$DEDISENGINE" discard "$vol" 0 1024 -q || fail "discard after ENOSPC failed"
"$DEDISENGINE" gc "$vol" --json >"$T/gc.json" || fail "gc after ENOSPC failed"
"$DEDISENGINE" stat "$vol" --json >"$T/stat2.json"
jcheck "$T/stat2.json" '.mapped_blocks == 0 and .physical_blocks == 0' "discard + gc did not free the store"
tail -c $((4 << 20)) "$T/rand" >"$T/second"
"$DEDISENGINE" import "$vol" "$T/second" -q 2>"$T/imp2.err" || fail "import after gc failed: $(cat "$T/imp2.err")"
"$DEDISENGINE" export "$vol" "$T/out" -q
cmp -n $((4 << 20)) "$T/second" "$T/out" || fail "the import after gc does not read back"
"$DEDISENGINE" fsck "$vol" >"$T/fsck" 2>&1 || fail "fsck after re-import: $(cat "$T/fsck")"

# 2. dedisbench on a pre-formatted thin volume: 4 x 16 MiB of unique content into an 8 MiB store.
echo "0 1000000" >"$T/unique.dist"
bvol="$T/bthin"
"$DEDISENGINE" format "$bvol" --size 64MiB --data-size 8MiB -q || fail "format of the bench volume failed"
run_bench --target "engine:$bvol" --procs 4 --file-size 16MiB --access seq --dist "$T/unique.dist" --seed 5 \
	--json "$T/b.json"
[ "$RC" -eq 1 ] || fail "dedisbench on a full chunk store exited $RC, want 1: $(head -c 600 "$T/err")"
[ "$(wc -l <"$T/err")" -eq 1 ] || fail "dedisbench: want one error line, got: $(cat "$T/err")"
grep -q 'No space left on device' "$T/err" || fail "dedisbench's error does not name ENOSPC: $(cat "$T/err")"
jcheck "$T/b.json" '.status == "failed" and (.error | test("No space left on device"))' "JSON status/error"
jcheck "$T/b.json" '.totals.ops >= 2048 and .totals.ops < 16384' "the writes that fitted are reported, and the run stopped"
jcheck "$T/b.json" '.engine.observed.mapped_blocks == 2048 and .engine.observed.fsck_problems == 0' \
	"the engine holds the 2048 blocks that fit" .engine
"$DEDISENGINE" fsck "$bvol" >"$T/fsck" 2>&1 || fail "fsck after dedisbench's ENOSPC: $(cat "$T/fsck")"
note "dedisbench: exit 1 ($(cat "$T/err")); fsck clean"
