#!/bin/bash
# dedisengine's compression and hints end to end: a run on engine:DIR,compress=lz4 with content
# that compresses 4:1 stores fragments and the launcher's own recompression of the live contents
# matches the engine's physical bytes (within 3 %); every block reads back (--verify both).
# --hints stores fresh unique content unindexed (NODEDUP) and still matches. Bad option values
# are refused with exit 2 and nothing written.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp
T="$E2E_TMP"

run_bench --target "engine:$T/vz,compress=lz4" --procs 2 --file-size 16MiB --access uniform --dist kernels \
	--compress 4 --size 48MiB --seed 11 --verify both --keep --json "$T/z.json" -q
[ "$RC" -eq 0 ] || fail "the compressed run exited $RC: $(head -c 600 "$T/err")"
jcheck "$T/z.json" '.engine.match == true and .engine.compress == "lz4"' "compressed run does not match" .engine
jcheck "$T/z.json" '.engine.observed.compressed_fragments > 0' "nothing was stored compressed" .engine
jcheck "$T/z.json" '(.engine.physical_deviation | fabs) <= 0.03' "physical bytes off by more than 3 %" .engine
# 4:1 content: the live contents take well under half of their logical size
jcheck "$T/z.json" '.engine.observed.physical_bytes * 2 < .engine.expected.distinct_blocks * 4096' \
	"compressed contents take more than half their size" .engine
"$DEDISENGINE" stat "$T/vz" --json >"$T/st.json" || fail "stat failed"
jcheck "$T/st.json" ".physical_bytes == $(jget "$T/z.json" .engine.observed.physical_bytes) and .compress == \"lz4\"" \
	"stat --json disagrees with the run's report"
"$DEDISENGINE" fsck "$T/vz" -q || fail "fsck of the compressed volume"
# The same volume after a simulated power loss (its caches gone): rebuilt, same bytes stored.
rm -f "$T/vz/state" "$T/vz/lbnmap" "$T/vz/refs"
"$DEDISENGINE" fsck "$T/vz" -q || fail "fsck after rebuilding the caches"
"$DEDISENGINE" stat "$T/vz" --json >"$T/st2.json"
jcheck "$T/st2.json" ".physical_bytes == $(jget "$T/st.json" .physical_bytes) and .mapped_blocks == $(jget "$T/st.json" .mapped_blocks)" \
	"the rebuilt volume holds other data"

# Hints: a unique-only distribution, every write NODEDUP, nothing indexed.
echo "0 1000000" >"$T/unique.dist"
run_bench --target "engine:$T/vh" --procs 2 --file-size 8MiB --access seq --dist "$T/unique.dist" --hints --keep \
	--seed 12 --json "$T/h.json" -q
[ "$RC" -eq 0 ] || fail "the hinted run exited $RC: $(head -c 600 "$T/err")"
jcheck "$T/h.json" '.engine.match == true' "hinted run does not match" .engine
jcheck "$T/h.json" '.engine.observed.nodedup_writes == .engine.observed.unique_writes and .engine.observed.nodedup_writes == 4096' \
	"not every unique write was stored NODEDUP" .engine
jcheck "$T/h.json" '.engine.observed.index_entries == 0 and .engine.observed.index_lookups == 0' \
	"NODEDUP writes touched the index" .engine
# Without hints the same job indexes every block.
run_bench --target "engine:$T/vn" --procs 2 --file-size 8MiB --access seq --dist "$T/unique.dist" \
	--seed 12 --json "$T/n.json" -q
jcheck "$T/n.json" '.engine.observed.nodedup_writes == 0 and .engine.observed.index_entries == 4096' \
	"without --hints the writes were not indexed" .engine

# Refusals: exit 2, nothing created.
rc=0; "$DEDISENGINE" format "$T/bad" --size 1MiB --compress zstd 2>"$T/e1" || rc=$?
[ "$rc" -eq 2 ] && [ ! -e "$T/bad" ] || fail "format --compress zstd: exit $rc, $(cat "$T/e1")"
run_bench --target "engine:$T/bad2,compress=zstd" --procs 1 --file-size 1MiB --size 1MiB -q
[ "$RC" -eq 2 ] && [ ! -e "$T/bad2" ] || fail "compress=zstd: exit $RC"
grep -q "compress='zstd' is not one of none|lz4" "$T/err" || fail "compress=zstd: $(cat "$T/err")"
run_bench --target "engine:$T/vh,compress=lz4" --procs 1 --file-size 1MiB --size 1MiB -q
[ "$RC" -eq 2 ] || fail "compress=lz4 on an uncompressed volume: exit $RC"
grep -q "formatted with compress=none" "$T/err" || fail "compress mismatch: $(cat "$T/err")"
note "compressed run within $(jget "$T/z.json" .engine.physical_deviation) of the expected bytes; hints ok"
