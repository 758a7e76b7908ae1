#!/bin/bash
# The io_uring engine on a 64 MiB loop device (root only): mixed random I/O at iodepth 32 over two
# regions with --verify both (every read and then every block checked), a write pass that reaches
# both regions' ends, and --hipri refused on a device whose queue cannot poll.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for a loop device"
command -v losetup >/dev/null 2>&1 || skip "losetup is not installed"
losetup -f >/dev/null 2>&1 || skip "no free loop device (losetup -f failed)"

mktmp /var/tmp
J="$E2E_TMP/r.json"
IMG="$E2E_TMP/disk.img"
truncate -s 64M "$IMG"
LOOP=$(losetup -f --show "$IMG" 2>/dev/null) || skip "cannot attach a loop device"
on_exit "losetup -d '$LOOP'"
[ -b "$LOOP" ] || fail "$LOOP is not a block device"
BLOCKS=$((64 * 1024 * 1024 / 4096))

RC=0
"$DEDISBENCH" --target "$LOOP" --procs 1 --size 4KiB -w --ioengine io_uring --quiet 2>"$E2E_TMP/err" || RC=$?
[ "$RC" -eq 2 ] && skip "io_uring is not available here: $(cat "$E2E_TMP/err")"
[ "$RC" -eq 0 ] || fail "a one-block io_uring run on $LOOP exited $RC: $(cat "$E2E_TMP/err")"

is_zero() { # BLOCK: is the 4 KiB block at that index all zeros?
	dd if="$LOOP" bs=4096 skip="$1" count=1 status=none iflag=direct | cmp -s -n 4096 - /dev/zero
}

# 1. One sequential write pass over both regions: each region's first and last blocks change.
dd if=/dev/zero of="$LOOP" bs=1M count=64 oflag=direct status=none
expect_ok --target "$LOOP" --procs 2 -w --ioengine io_uring --iodepth 32 --seed 5 --json "$J" --quiet
jcheck "$J" ".totals.ops == $BLOCKS and .config.ioengine == \"io_uring\" and .config.sync == \"direct\"" \
	"write pass on $LOOP: want $BLOCKS ops" '{ops: .totals.ops, config: .config}'
for b in 0 $((BLOCKS / 2 - 1)) $((BLOCKS / 2)) $((BLOCKS - 1)); do
	is_zero "$b" && fail "block $b of $LOOP is still zeros after the io_uring write pass"
done

# 2. Mixed uniform random I/O, 4x the device, iodepth 32, --verify both.
expect_ok --target "$LOOP" --procs 2 -m --access uniform --ioengine io_uring --iodepth 32 --size 256MiB \
	--verify both --json "$J" --quiet
jcheck "$J" ".status == \"ok\" and .verify.ok and .verify.read_mismatches == 0 and .verify.final_mismatches == 0" \
	"io_uring on $LOOP with --verify both: want no mismatch" .verify
jcheck "$J" ".verify.read_checks > $((BLOCKS * 3 / 2)) and .verify.final_checks == $BLOCKS" \
	"io_uring on $LOOP: want ~$((BLOCKS * 2)) reads checked and all $BLOCKS blocks" .verify
checked=$(jget "$J" .verify.read_checks)

# 3. Reads only (populated first), verified.
expect_ok --target "$LOOP" --procs 2 -r --access uniform --ioengine io_uring --iodepth 32 --verify online \
	--json "$J" --quiet
jcheck "$J" ".reads.ops == $BLOCKS and .verify.read_checks == $BLOCKS and .verify.ok" \
	"read run on $LOOP: want $BLOCKS reads verified" .verify

# 4. --hipri: a loop device has no poll queues (unless its queue says otherwise).
if [ "$(cat "/sys/block/$(basename "$LOOP")/queue/io_poll" 2>/dev/null || echo 0)" != 1 ]; then
	dd if=/dev/zero of="$LOOP" bs=1M count=64 oflag=direct status=none
	rm -f "$J"
	run_bench --target "$LOOP" --procs 2 -w --ioengine io_uring --hipri --json "$J"
	[ "$RC" -eq 2 ] || fail "--hipri on $LOOP exited $RC, want 2"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "--hipri refusal: want one line: $(cat "$E2E_TMP/err")"
	grep -q "hipri: $LOOP cannot poll for completions" "$E2E_TMP/err" ||
		fail "--hipri refusal does not say why: $(cat "$E2E_TMP/err")"
	[ ! -e "$J" ] || fail "--hipri refusal wrote --json"
	is_zero 0 && is_zero $((BLOCKS - 1)) || fail "--hipri refusal wrote to $LOOP"
fi

note "io_uring on $LOOP: write pass, mixed --verify both ($checked reads and $BLOCKS blocks checked), reads, --hipri"
