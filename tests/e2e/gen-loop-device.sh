#!/bin/bash
# gen-loop-device.sh - dedisgen on a block device (a read-only loop device over an image of
# known content): the device's whole size is read, and gives the image file's distribution.
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
# the device and its image are one stream: same records, same sections
diff <(grep -v '^# source' "$E2E_TMP/dev.dist.65536") <(grep -v '^# source' "$E2E_TMP/img.dist") >&2 ||
	fail "device and image differ at 64 KiB"
note "loop device $DEV"
exit 0
