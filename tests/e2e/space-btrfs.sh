#!/bin/bash
# space-btrfs.sh - observed space savings on btrfs (zstd compression, a loop device): what the run
# reports the file system took equals, within 5 %, what compsize reads from btrfs itself.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for a loop device and a mount"
command -v losetup >/dev/null 2>&1 || skip "losetup is missing"
command -v mkfs.btrfs >/dev/null 2>&1 || skip "mkfs.btrfs is missing (apt-get install btrfs-progs)"
command -v compsize >/dev/null 2>&1 || skip "compsize is missing (apt-get install btrfs-compsize)"
grep -qw btrfs /proc/filesystems || skip "this kernel has no btrfs"
mktmp /var/tmp
truncate -s 1G "$E2E_TMP/img"
mkfs.btrfs -q "$E2E_TMP/img" >/dev/null 2>&1 || fail "mkfs.btrfs failed"
DEV=$(losetup -f --show "$E2E_TMP/img" 2>/dev/null) || skip "no loop device available"
on_exit "losetup -d '$DEV'"
mkdir "$E2E_TMP/mnt"
# compress-force: btrfs's own entropy heuristic (order-0 byte counts) would skip the synthetic
# blocks, whose filler is a per-block 2-byte pattern; forced, zstd compresses every extent.
mount -o compress-force=zstd "$DEV" "$E2E_TMP/mnt" || skip "cannot mount btrfs from $DEV"
on_exit "umount '$E2E_TMP/mnt'"
mkdir "$E2E_TMP/mnt/d"
J=$E2E_TMP/run.json
expect_ok -T "$E2E_TMP/mnt/d" -P 2 -F 32 --compress 4 --seed 7 --keep -j "$J"
grep -q '^space (statfs, file system of .*): logical 64.0 MiB, expected .* observed .*: efficiency [0-9.]*$' "$E2E_TMP/out" ||
	fail "no space line in the summary: $(grep -i space "$E2E_TMP/out")"
jcheck "$J" '.space.source == "statfs" and .space.basis == "dedup+zstd-1" and .space.logical_bytes == 67108864'
# the files are sparse (never preallocated on btrfs: prealloc extents are written uncompressed)
# and st_blocks counts them uncompressed: the whole logical size
jcheck "$J" '.space.allocated_bytes_after == 67108864'
observed=$(jget "$J" .space.observed_bytes)
disk=$(compsize -b "$E2E_TMP/mnt/d" | awk '$1 == "TOTAL" { print $3 }')
[ -n "$disk" ] && [ "$disk" -gt 0 ] || fail "compsize printed no disk usage: $(compsize -b "$E2E_TMP/mnt/d" 2>&1)"
note "observed $observed bytes, compsize disk usage $disk bytes"
within "$observed" "$disk" 5 || fail "observed $observed bytes is not within 5 % of compsize's $disk"
# efficiency is expected / observed; btrfs compresses (about 4:1 here) but does not deduplicate
# inline, so it keeps less than half of the logical bytes yet more than the ideal
eff=$(jget "$J" .space.efficiency)
expected=$(jget "$J" .space.expected_bytes)
within "$eff" "$(awk -v e="$expected" -v o="$observed" 'BEGIN { print e / o }')" 0.01 ||
	fail "efficiency $eff is not expected $expected / observed $observed"
fcmp "$observed" "<" 33554432 || fail "btrfs kept $observed bytes of 64 MiB compressible 4:1"
exit 0
