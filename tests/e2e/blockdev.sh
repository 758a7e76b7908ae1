#!/bin/bash
# Block-device target on a 64 MiB loop device (root only): write then read in two regions, and
# the refusal of a device holding ext4 (unless --force) or mounted (even with --force) - by
# dedisbench and by dedisengine export, which writes a device in place; on a 4Kn loop device,
# O_DIRECT with a smaller block refused up front, on the device and on a file system on it.
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
MNT="$E2E_TMP/mnt"
mkdir "$MNT"
on_exit "losetup -d '$LOOP'"
on_exit "mountpoint -q '$MNT' && umount '$MNT'"
[ -b "$LOOP" ] || fail "$LOOP is not a block device"
SIZE=$((64 * 1024 * 1024))
OPS=$((SIZE / 4096))

is_zero() { # OFFSET_BLOCKS: is the 4 KiB block at that 4 KiB index all zeros?
	dd if="$LOOP" bs=4096 skip="$1" count=1 status=none iflag=direct | cmp -s -n 4096 - /dev/zero
}
is_zero 0 || fail "a fresh loop device is not zero"

# 1. Write over two disjoint regions (the whole device, one pass), then read it back.
expect_ok --target "$LOOP" --procs 2 --block-size 4096 -w --seed 3 --json "$J" --quiet
jcheck "$J" ".totals.ops == $OPS and .writes.ops == $OPS and .status == \"ok\"" \
	"block device write: want $OPS ops" '{ops: .totals.ops, status}'
jcheck "$J" '.workers | length == 2 and all(.[]; .ops == '$((OPS / 2))')' \
	"block device write: want $((OPS / 2)) ops per worker" '[.workers[].ops]'
jcheck "$J" ".config.target == \"$LOOP\"" "config.target is not $LOOP" .config.target
# Data landed in both regions: first and last block of each half are no longer zeros.
for b in 0 $((OPS / 2 - 1)) $((OPS / 2)) $((OPS - 1)); do
	is_zero "$b" && fail "block $b of $LOOP is still zeros after the write run"
done

expect_ok --target "$LOOP" --procs 2 --block-size 4096 -r --populate none --json "$J" --quiet
jcheck "$J" ".reads.ops == $OPS and .writes.ops == 0 and .status == \"ok\"" \
	"block device read: want $OPS reads" '{reads: .reads.ops, writes: .writes.ops}'
is_zero 0 && fail "the read run changed the device"
# a read-only device: a run that writes is refused up front (not an EPERM mid-run); reading works
if RO=$(losetup -r -f --show "$IMG" 2>/dev/null); then
	on_exit "losetup -d '$RO'"
	run_bench --target "$RO" --procs 2 -w --quiet
	[ "$RC" -eq 2 ] && grep -q "is a read-only device; this run writes to it" "$E2E_TMP/err" ||
		fail "a write run on read-only $RO: exit $RC: $(cat "$E2E_TMP/err")"
	expect_ok --target "$RO" --procs 2 -r --populate none --quiet
	# ...and so does replaying a trace of reads only (a write in the trace is refused)
	printf '1000 1 p 8 8 R 8 0 0000000000000000deadbeef12345678\n' >"$E2E_TMP/reads.trace"
	expect_ok replay "$E2E_TMP/reads.trace" --target "$RO" --json "$J" --quiet
	jcheck "$J" '.reads.ops == 1 and .writes.ops == 0 and .status == "ok"' "read-only replay on $RO" .
	printf '1000 1 p 8 8 W 8 0 0000000000000000deadbeef12345678\n' >"$E2E_TMP/writes.trace"
	run_bench replay "$E2E_TMP/writes.trace" --target "$RO" --quiet
	[ "$RC" -eq 2 ] && grep -q "is a read-only device; this run writes to it" "$E2E_TMP/err" ||
		fail "a replay that writes on read-only $RO: exit $RC: $(cat "$E2E_TMP/err")"
fi
# dedisengine export writes a device in place: one smaller than the volume (it would fail
# part-way) and a read-only one are refused before anything is written
VOL="$E2E_TMP/vol"
"$DEDISENGINE" format "$VOL" --size 4MiB -q || fail "dedisengine format failed"
head -c 3M /dev/urandom >"$E2E_TMP/payload"
"$DEDISENGINE" import "$VOL" "$E2E_TMP/payload" -q || fail "dedisengine import failed"
"$DEDISENGINE" format "$E2E_TMP/bigvol" --size 128MiB -q || fail "dedisengine format of 128 MiB failed"
export_refused() { # WANT VOLUME DEVICE [OPTION]: exit 2, one line matching WANT, the device unchanged
	local want=$1 sum rc=0
	shift
	# a mounted file system may write its own device meanwhile: there the canary is the check
	mountpoint -q "$MNT" || sum=$(md5sum <"$2")
	"$DEDISENGINE" export "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "$want" "$E2E_TMP/err" ||
		fail "dedisengine export $*: exit $rc, want 2 and '$want': $(cat "$E2E_TMP/err")"
	mountpoint -q "$MNT" || [ "$(md5sum <"$2")" = "$sum" ] || fail "a refused export $* changed $2"
}
export_refused "$LOOP (67108864 bytes) is smaller than the volume (134217728 bytes)" "$E2E_TMP/bigvol" "$LOOP"
[ -n "${RO:-}" ] && export_refused "$RO is a read-only device" "$VOL" "$RO"
# a replay whose trace reaches past the device's end is refused before anything is written
printf '1000 1 p 131072 8 W 8 0 0000000000000000deadbeef12345678\n' >"$E2E_TMP/past.trace"
sum=$(md5sum <"$LOOP")
run_bench replay "$E2E_TMP/past.trace" --target "$LOOP" --quiet
[ "$RC" -eq 2 ] && grep -q "is smaller than the trace's extent (67112960 bytes)" "$E2E_TMP/err" ||
	fail "a trace past the device's end: exit $RC: $(cat "$E2E_TMP/err")"
[ "$(md5sum <"$LOOP")" = "$sum" ] || fail "a refused replay changed $LOOP"
# --file-size beyond the device's share per worker is refused, not quietly shrunk
run_bench --target "$LOOP" --procs 2 --file-size 64MiB -w --quiet
[ "$RC" -eq 2 ] && grep -q "holds 2 regions of at most 33554432 bytes, not --file-size 67108864" "$E2E_TMP/err" ||
	fail "--file-size 64MiB x 2 workers on a 64 MiB device: exit $RC: $(cat "$E2E_TMP/err")"
[ -b "$LOOP" ] || fail "$LOOP is gone after the runs"

# 2. A device holding ext4 is refused without --force, and left untouched.
command -v mkfs.ext4 >/dev/null 2>&1 || skip "mkfs.ext4 is not installed (device runs passed)"
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 $LOOP failed"
blkid_type() { blkid -p -o value -s TYPE "$LOOP" 2>/dev/null || true; }
[ "$(blkid_type)" = ext4 ] || fail "blkid does not see the ext4 just made"
rm -f "$J"
run_bench --target "$LOOP" --procs 2 -w --json "$J"
[ "$RC" -eq 2 ] || fail "ext4 device without --force: exit $RC, want 2"
[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "ext4 refusal: want 1 stderr line: $(cat "$E2E_TMP/err")"
grep -q ext4 "$E2E_TMP/err" || fail "ext4 refusal does not name ext4: $(cat "$E2E_TMP/err")"
grep -q -- --force "$E2E_TMP/err" || fail "ext4 refusal does not mention --force: $(cat "$E2E_TMP/err")"
[ ! -e "$J" ] || fail "ext4 refusal created the --json file"
[ "$(blkid_type)" = ext4 ] || fail "the ext4 signature is gone after a refused run"
command -v fsck.ext4 >/dev/null 2>&1 && { fsck.ext4 -n -f "$LOOP" >/dev/null 2>&1 ||
	fail "the ext4 filesystem is damaged after a refused run"; }

# dedisengine export onto it: refused without --force, then written with it
export_refused "$LOOP holds a ext4 filesystem signature; refusing to overwrite it without --force" "$VOL" "$LOOP"
[ "$(blkid_type)" = ext4 ] || fail "the ext4 signature is gone after a refused export"
"$DEDISENGINE" export "$VOL" "$LOOP" --force -q || fail "dedisengine export --force onto $LOOP failed"
cmp -n 3145728 "$E2E_TMP/payload" "$LOOP" || fail "export --force did not write the volume onto $LOOP"
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 $LOOP failed"

# ...and --force runs on it.
expect_ok --target "$LOOP" --procs 2 -w --force --json "$J" --quiet
jcheck "$J" ".totals.ops == $OPS and .config.force == true" "--force run: want $OPS ops" '{ops: .totals.ops}'

# 3. A mounted device is refused even with --force.
mkfs.ext4 -q -F "$LOOP" >/dev/null 2>&1 || fail "mkfs.ext4 $LOOP failed"
rm -f "$J"
if mount "$LOOP" "$MNT" 2>/dev/null; then
	echo keep >"$MNT/canary"
	sync
	run_bench --target "$LOOP" --procs 2 -w --force --json "$J"
	[ "$RC" -eq 2 ] || fail "mounted device with --force: exit $RC, want 2"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "mounted refusal: want 1 stderr line: $(cat "$E2E_TMP/err")"
	grep -q mount "$E2E_TMP/err" || fail "mounted refusal does not say mounted: $(cat "$E2E_TMP/err")"
	[ ! -e "$J" ] || fail "mounted refusal created the --json file"
	export_refused "$LOOP is mounted on $MNT; unmount it first" "$VOL" "$LOOP" --force
	umount "$MNT"
	[ "$(blkid_type)" = ext4 ] || fail "the ext4 signature is gone after a refused mounted run"
	mount -o ro "$LOOP" "$MNT" || fail "the filesystem no longer mounts after a refused run"
	[ "$(cat "$MNT/canary")" = keep ] || fail "the mounted filesystem's content changed"
	umount "$MNT"
else
	note "mounted-device case skipped: cannot mount ext4 here"
fi

# 4. 4 KiB logical sectors (4Kn): O_DIRECT below 4 KiB fails every transfer with EINVAL, so a
# direct run with a smaller block is bad input, on the device and on files of a file system on it.
IMG4="$E2E_TMP/disk4k.img"
truncate -s 64M "$IMG4"
if ! LOOP4=$(losetup -f --show --sector-size 4096 "$IMG4" 2>/dev/null); then
	note "4Kn case skipped: losetup --sector-size 4096 failed"
else
	on_exit "losetup -d '$LOOP4'"
	MNT4="$E2E_TMP/mnt4"
	mkdir "$MNT4"
	on_exit "mountpoint -q '$MNT4' && umount '$MNT4'"
	[ "$(blockdev --getss "$LOOP4")" -eq 4096 ] || fail "$LOOP4 does not have 4096-byte sectors"
	refused_direct() { # WANT ARGS...: exit 2, one line matching WANT
		local want=$1
		shift
		# (a distribution in the original DEDISbench format: no block size of its own, so any -b)
		printf '0 1000\n1 100\n' >"$E2E_TMP/anybs.dist"
		run_bench "$@" --dist "$E2E_TMP/anybs.dist" --quiet
		[ "$RC" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q -- "$want" "$E2E_TMP/err" ||
			fail "dedisbench $*: exit $RC, want 2 and '$want': $(cat "$E2E_TMP/err")"
	}
	for io in "--sync direct" "--ioengine libaio" "--ioengine io_uring"; do
		# shellcheck disable=SC2086 # two words
		refused_direct "--block-size 2048 is not a multiple of $LOOP4's 4096-byte sectors" \
			--target "$LOOP4" --procs 2 -w --block-size 2048 $io
	done
	is_zero4() { dd if="$LOOP4" bs=4096 count=1 status=none | cmp -s -n 4096 - /dev/zero; }
	is_zero4 || fail "a refused direct run wrote to $LOOP4"
	if mkfs.ext4 -q -F "$LOOP4" >/dev/null 2>&1 && mount "$LOOP4" "$MNT4" 2>/dev/null; then
		mkdir "$MNT4/d"
		: >"$MNT4/f"
		want="--block-size 512 is not a multiple of the 4096 bytes O_DIRECT needs on"
		refused_direct "$want $MNT4/d" --target "$MNT4/d" --procs 2 --file-size 1MiB -w --block-size 512 --sync direct
		refused_direct "$want $MNT4/d" --target "$MNT4/d" --procs 2 --file-size 1MiB -w --block-size 512 --ioengine libaio
		[ -z "$(ls -A "$MNT4/d")" ] || fail "a refused direct run left files: $(ls -A "$MNT4/d")"
		refused_direct "$want $MNT4/f" --target "$MNT4/f" --procs 1 --file-size 1MiB -w --block-size 512 --sync direct
		[ ! -s "$MNT4/f" ] || fail "a refused direct run wrote to $MNT4/f"
		refused_direct "$want engine:$MNT4/vol" --target "engine:$MNT4/vol" --procs 1 --file-size 1MiB -w \
			--block-size 512 --sync direct
		[ ! -e "$MNT4/vol" ] || fail "a refused direct run made the volume $MNT4/vol"
		# dedisengine's own --direct on a volume of 512-byte blocks there
		"$DEDISENGINE" format "$MNT4/vol" --size 4MiB --block-size 512 -q || fail "format on $MNT4 failed"
		rc=0
		"$DEDISENGINE" import --direct "$MNT4/vol" "$E2E_TMP/payload" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "the volume $MNT4/vol has 512-byte blocks, and O_DIRECT there needs multiples of 4096" \
			"$E2E_TMP/err" || fail "import --direct on a 4Kn file system: exit $rc: $(cat "$E2E_TMP/err")"
		"$DEDISENGINE" stat "$MNT4/vol" --json >"$E2E_TMP/stat.json" || fail "stat after a refused import failed"
		jcheck "$E2E_TMP/stat.json" '.logical_writes == 0' "a refused import --direct wrote blocks"
		# a block size that fits is taken
		expect_ok --target "$MNT4/d" --procs 2 --file-size 1MiB -w --block-size 4096 --sync direct --quiet
		umount "$MNT4"
	else
		note "4Kn file-system case skipped: cannot make or mount ext4 on $LOOP4"
	fi
fi

note "loop device $LOOP: $OPS-op write and read over 2 regions; ext4 and mounted refusals hold (dedisbench and dedisengine export); 4Kn direct refusals"
