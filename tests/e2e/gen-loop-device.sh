#!/bin/bash
# gen-loop-device.sh - dedisgen on a block device (a read-only loop device over an image of
# known content): the device's whole size is read, and gives the image file's distribution; a
# partition given beside its disk (or added with -k) is refused (counted twice), two partitions
# are not.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for a loop device"
command -v losetup >/dev/null 2>&1 || skip "losetup is missing"
mktmp /var/tmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
IMG=$E2E_TMP/img
pat() { head -c "$2" /dev/zero | tr '\0' "$1"; }
{ pat A 8192; pat B 4096; pat A 4096; } >"$IMG"  # A x3, B x1
truncate -s 1M "$IMG"                           # + 252 zero blocks of 4 KiB
DEV=$(losetup -r -f --show "$IMG" 2>/dev/null) || skip "no loop device available"
on_exit "losetup -d '$DEV'"
"$DEDISGEN" -d "$DEV" -b 4096,65536 -o "$E2E_TMP/dev.dist" -q || fail "device scan exited $?"
records() { sed '/^\[/,$d' "$1" | grep -v '^#' | tr '\n' ' '; }
section() { sed -n "/^\[$2 /,/^\[/p" "$1" | grep -v '^[#[]' | tr '\n' ' '; }
got=$(records "$E2E_TMP/dev.dist.4096")
[ "$got" = "0 1 2 1 251 1 " ] || fail "device records at 4096: '$got'"
# block order: A(new) A B(new) A Z(new) Z x251: three new blocks, two lone duplicates of A, a zero run
got=$(section "$E2E_TMP/dev.dist.4096" locality)
[ "$got" = "analysed 256 0 duplicates 253 0 new 0 3 3 dup 0 2 2 dup 7 1 251 copy 0 2 2 zero 7 1 251 " ] ||
	fail "device locality at 4096: '$got'"
grep -qx "# zero-blocks: 252" "$E2E_TMP/dev.dist.4096" || fail "zero blocks"
grep -qx "# bytes: 1048576" "$E2E_TMP/dev.dist.4096" || fail "bytes: $(grep bytes "$E2E_TMP/dev.dist.4096")"
"$DEDISGEN" "$IMG" -b 65536 -q >"$E2E_TMP/img.dist" || fail "image scan exited $?"
# the device and its image are one stream: same records, same sections ([alignment 1] and
# [cdc 1] are measured at the first block size only: 4096 there, 65536 here)
first_size_only() { grep -v '^# source' "$1" | sed '/^\[\(alignment\|cdc\) /,$d'; }
diff <(first_size_only "$E2E_TMP/dev.dist.65536") <(first_size_only "$E2E_TMP/img.dist") >&2 ||
	fail "device and image differ at 64 KiB"
# A partition given beside its disk: the walk reads each device once by its number, and a
# partition has its own, so its blocks would count twice - refused (exit 2, nothing written).
# An MBR with two 1 MiB partitions, at 1 and 2 MiB; the nodes are made here (no udev needed).
PIMG=$E2E_TMP/parted.img
truncate -s 4M "$PIMG"
python3 - "$PIMG" <<'PY' || fail "cannot write the partition table"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    entries = b"".join(struct.pack("<B3sB3sII", 0, b"\0" * 3, 0x83, b"\0" * 3, start, 2048)
                       for start in (2048, 4096))
    f.seek(446)
    f.write(entries + b"\0" * 32 + b"\x55\xaa")
PY
PDEV=$(losetup -r -P -f --show "$PIMG" 2>/dev/null) || PDEV=
[ -z "$PDEV" ] || on_exit "losetup -d '$PDEV'"
n=$(basename "${PDEV:-none}")
# where the kernel's own scan did not add them (seen on 6.x), partx adds them by ioctl
[ -z "$PDEV" ] || [ -r "/sys/block/$n/${n}p2/dev" ] || partx -a "$PDEV" 2>/dev/null || true
if [ -n "$PDEV" ] && [ -r "/sys/block/$n/${n}p2/dev" ]; then
	for p in 1 2; do
		# shellcheck disable=SC2046 # MAJOR MINOR
		mknod "$E2E_TMP/part$p" b $(tr : ' ' <"/sys/block/$n/${n}p$p/dev") || fail "mknod of ${n}p$p failed"
	done
	rc=0
	"$DEDISGEN" -d "$PDEV" "$E2E_TMP/part2" -o "$E2E_TMP/twice.dist" -q 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] &&
		grep -q "$E2E_TMP/part2 is a partition of the device $PDEV: its blocks would be counted twice" "$E2E_TMP/err" ||
		fail "a disk and its partition: exit $rc, want 2: $(cat "$E2E_TMP/err")"
	[ ! -e "$E2E_TMP/twice.dist" ] || fail "a refused scan wrote its output"
	# two partitions of one disk are disjoint: 1 MiB each, 2 MiB read
	"$DEDISGEN" -d "$E2E_TMP/part1" "$E2E_TMP/part2" -o "$E2E_TMP/parts.dist" -q || fail "two partitions: exit $?"
	grep -qx "# bytes: 2097152" "$E2E_TMP/parts.dist" || fail "two partitions: $(grep bytes "$E2E_TMP/parts.dist")"
	# -k continues one stream: a partition of a disk the DB holds, or the disk through another
	# node, would count twice as well
	"$DEDISGEN" -d "$PDEV" --db "$E2E_TMP/db" -o "$E2E_TMP/disk.dist" -q || fail "scan of $PDEV into --db: exit $?"
	# shellcheck disable=SC2046 # MAJOR MINOR
	mknod "$E2E_TMP/disknode" b $(tr : ' ' <"/sys/block/$n/dev") || fail "mknod of $n failed"
	for again in "$E2E_TMP/part2" "$E2E_TMP/disknode"; do
		rc=0
		"$DEDISGEN" -d "$again" --db "$E2E_TMP/db" -k -o "$E2E_TMP/twice.dist" -q 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "already holds an analysis of the device $PDEV, .* $again: -k would count" \
			"$E2E_TMP/err" || fail "-k $again after $PDEV: exit $rc, want 2: $(cat "$E2E_TMP/err")"
		[ ! -e "$E2E_TMP/twice.dist" ] || fail "a refused -k scan wrote its output"
	done
	note "a disk and its partition refused (one scan and -k); two partitions read once each"
else
	note "partition case skipped: no partitions after losetup -P (and partx -a)"
fi
note "loop device $DEV"
exit 0
