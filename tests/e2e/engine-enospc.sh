#!/bin/bash
# A full chunk store (thin volume) fails cleanly with ENOSPC: dedisengine import and dedisbench
# exit 1 with one line naming it, fsck accepts the volume after, the blocks stored before the
# failure read back, and the volume stays usable. A discard on a file system that filled up under a
# sparse chunk store commits (the map and journal have their room from format) and says so; one whose
# commit fails says the blocks are unmapped but not durable. Overwrites through a sparse store whose
# file system is full reuse the blocks GC freed, and caches with no room to be created are ENOSPC
# (exit 1), not SIGBUS.
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

# Its report on a full device (stat --json > FILE on a full disk): exit 1 and one line, not 0
# with the figures lost.
for cmd in "stat --json" "fsck"; do
	rc=0
	# shellcheck disable=SC2086
	"$DEDISENGINE" $cmd "$vol" >/dev/full 2>"$T/full.err" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(cat "$T/full.err")" = "dedisengine: standard output: No space left on device" ] ||
		fail "$cmd into /dev/full: exit $rc, want 1 and one line: $(cat "$T/full.err")"
done

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

# 3. A sparse chunk store on a file system that fills up (a 16 MiB tmpfs of its own, root only):
# the import stops with ENOSPC, and a discard then still commits - it exited 1 "No space left on
# device" with the journal never allocated, after applying the discard to the working map.
sm="$T/small"
mkdir "$sm"
if mount -t tmpfs -o size=16M tmpfs "$sm" 2>/dev/null; then
	on_exit 'umount "$sm" 2>/dev/null'
	"$DEDISENGINE" format "$sm/w" --size 64MiB --preallocate sparse -q || fail "format on the small tmpfs failed"
	head -c $((40 << 20)) /dev/urandom >"$T/big40"
	rc=0
	"$DEDISENGINE" import "$sm/w" "$T/big40" -q 2>"$T/e" || rc=$?
	[ "$rc" -eq 1 ] && grep -q 'No space left' "$T/e" || fail "import into a full tmpfs: exit $rc: $(cat "$T/e")"
	before=$("$DEDISENGINE" stat "$sm/w" --json | jq .mapped_blocks)
	rc=0
	"$DEDISENGINE" discard "$sm/w" 0 1000 2>"$T/e" || rc=$?
	[ "$rc" -eq 0 ] || fail "discard on a full file system: exit $rc: $(cat "$T/e")"
	rm "$sm/w/state" # as after a power loss: only what is durable counts
	after=$("$DEDISENGINE" stat "$sm/w" --json | jq .mapped_blocks)
	[ "$after" -eq $((before - 1000)) ] || fail "after the discard and a power loss: $after mapped, want $((before - 1000))"
	"$DEDISENGINE" fsck "$sm/w" -q || fail "fsck after the discard on a full file system"
	umount "$sm"
	note "discard on a full file system: committed ($before -> $after mapped after a power loss)"

	# A sparse store whose file system fills with stale blocks (overwrites): the write's GC frees
	# them, and the retry takes one of them, whose file blocks are still there. The retry took the
	# cursor's next PBN, a hole, and the volume failed every write from then on, with 8 MiB live
	# in a 14 MiB file system.
	mount -t tmpfs -o size=14M tmpfs "$sm" || fail "mount of the small tmpfs failed"
	"$DEDISENGINE" format "$sm/r" --size 8MiB --data-size 32MiB --preallocate sparse -q || fail "format on the small tmpfs"
	head -c $((8 << 20)) /dev/urandom >"$T/r8a"
	head -c $((8 << 20)) /dev/urandom >"$T/r8b"
	for f in r8a r8b r8a r8b; do
		"$DEDISENGINE" import "$sm/r" "$T/$f" -q 2>"$T/e" || fail "overwrite with $f on a full file system: $(cat "$T/e")"
	done
	"$DEDISENGINE" stat "$sm/r" --json >"$T/r.json"
	jcheck "$T/r.json" '.gc_reclaimed >= 2048 and .mapped_blocks == 2048' "the overwrites on a full file system" .
	"$DEDISENGINE" export "$sm/r" "$T/r.out" -q
	cmp -s "$T/r8b" "$T/r.out" || fail "after overwrites on a full file system the volume does not read back the last"
	"$DEDISENGINE" fsck "$sm/r" -q || fail "fsck after overwrites on a full file system"
	reclaimed=$(jq .gc_reclaimed "$T/r.json")
	umount "$sm"
	note "4 x 8 MiB overwrites through a 14 MiB file system: the blocks GC freed reused ($reclaimed reclaimed)"

	# The caches that the first open creates, on a file system with no room left for them: exit 1
	# and one line naming ENOSPC (a store into a hole of their shared mappings killed it with SIGBUS,
	# 135, on every try), and the volume opens once there is room.
	mount -t tmpfs -o size=8M tmpfs "$sm" || fail "mount of the small tmpfs failed"
	"$DEDISENGINE" format "$sm/c" --size 64MiB --preallocate sparse -q || fail "format on the small tmpfs"
	dd if=/dev/zero of="$sm/filler" bs=64k 2>/dev/null || true
	rc=0
	"$DEDISENGINE" stat "$sm/c" >"$T/o" 2>"$T/e" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q 'No space left on device' "$T/e" ||
		fail "the first open with no room for its caches: exit $rc, want 1 and one line: $(cat "$T/e")"
	said=$(cat "$T/e")
	rm "$sm/filler"
	"$DEDISENGINE" stat "$sm/c" >/dev/null 2>"$T/e" || fail "stat once there is room again: $(cat "$T/e")"
	"$DEDISENGINE" fsck "$sm/c" -q || fail "fsck after the open that had no room"
	umount "$sm"
	note "caches with no room: exit 1 ($said)"
else
	note "not root: a discard on a full file system was not tried (it needs a tmpfs of its own)"
fi

# 4. A discard whose commit fails (an I/O error on the journal, then on the map): exit 1, and the
# message says what is true - unmapped in the working map, not durable.
SHIM=$top_builddir/tests/fault/dedis-fault.so
if [ -e "$SHIM" ]; then
	dv="$T/dv"
	"$DEDISENGINE" format "$dv" --size 8MiB -q
	head -c $((1 << 20)) /dev/urandom >"$T/mib"
	"$DEDISENGINE" import "$dv" "$T/mib" -q
	head -c 8 /dev/zero >"$T/fault.state"
	rc=0
	env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=1 DEDIS_FAULT_ERRNO=EIO DEDIS_FAULT_PATH=journal \
		DEDIS_FAULT_STATE="$T/fault.state" DEDIS_FAULT_LOG="$T/fault.log" \
		"$DEDISENGINE" discard "$dv" 0 10 2>"$T/e" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q 'unmapped but not made durable' "$T/e" ||
		fail "a discard whose commit failed: exit $rc: $(cat "$T/e")"
	note "a discard whose commit failed: $(cat "$T/e")"
fi
