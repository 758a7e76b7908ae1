#!/bin/bash
# A volume on read-only storage (a read-only bind mount of its directory, root only): stat and
# export read a clean volume and change nothing; the commands that write, a dedisbench run and a
# format there, and a volume that was not closed cleanly (its recovery writes), are refused with
# exit 2 and one line saying so.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
[ -x "$DEDISBENCH" ] || fail "no dedisbench binary at $DEDISBENCH"
mktmp
T="$E2E_TMP"
mkdir "$T/rw" "$T/ro"
mount --bind "$T/rw" "$T/ro" 2>/dev/null || skip "cannot bind-mount (not root?)"
on_exit 'umount "$T/ro"'
mount -o remount,bind,ro "$T/ro" || skip "cannot remount the bind mount read-only"

sums() { (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum); }
expect2() { # WHAT PATTERN CMD...: exit 2, one line on stderr matching PATTERN
	local what=$1 pat=$2 rc=0
	shift 2
	"$@" >"$T/o" 2>"$T/e" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -Eq -- "$pat" "$T/e" ||
		fail "$what: exit $rc, want 2 and one line matching /$pat/: $(cat "$T/e")"
}

head -c $((1 << 20)) /dev/urandom >"$T/data"
"$DEDISENGINE" format "$T/rw/v" --size 8MiB -q
"$DEDISENGINE" import "$T/rw/v" "$T/data" -q
"$DEDISENGINE" format "$T/rw/b" --size 8MiB --index bdb -q
good=$(sums "$T/rw")

"$DEDISENGINE" stat "$T/ro/v" --json >"$T/stat.json" 2>"$T/e" || fail "stat on read-only storage: $(cat "$T/e")"
jcheck "$T/stat.json" '.mapped_blocks == 256 and .index_entries == 256' "stat on read-only storage"
"$DEDISENGINE" export "$T/ro/v" "$T/out" -q 2>"$T/e" || fail "export on read-only storage: $(cat "$T/e")"
cmp -s -n $((1 << 20)) "$T/data" "$T/out" || fail "export on read-only storage does not read back the import"
for cmd in fsck gc; do
	expect2 "$cmd on read-only storage" "read-only storage: this command writes" "$DEDISENGINE" "$cmd" "$T/ro/v"
done
expect2 "import on read-only storage" "read-only storage" "$DEDISENGINE" import "$T/ro/v" "$T/data"
expect2 "discard on read-only storage" "read-only storage" "$DEDISENGINE" discard "$T/ro/v" 0 1
expect2 "stat of a bdb volume on read-only storage" "read-only storage: only a volume with the mem index" \
	"$DEDISENGINE" stat "$T/ro/b"
# a dedisbench run on it, and a format there, are bad input too (they failed once begun: exit 1)
expect2 "dedisbench on a volume on read-only storage" "is on read-only storage: a run opens the volume to write" \
	"$DEDISBENCH" --target "engine:$T/ro/v" --procs 1 --file-size 1MiB --quiet
expect2 "format on read-only storage" "Read-only file system" "$DEDISENGINE" format "$T/ro/new" --size 8MiB
[ "$(sums "$T/rw")" = "$good" ] || fail "a command on read-only storage changed the volume"
# A cache damaged in place fails its check there too, and its rebuild would write: refused, named.
cp "$T/rw/v/lbnmap" "$T/lbnmap.good"
head -c 4096 /dev/zero | dd of="$T/rw/v/lbnmap" bs=4096 conv=notrunc status=none
expect2 "export of a volume with a damaged cache on read-only storage" \
	"the lbnmap cache failed its check and its rebuild would write" "$DEDISENGINE" export "$T/ro/v" "$T/out3"
cp "$T/lbnmap.good" "$T/rw/v/lbnmap"
# Not closed cleanly (the clean flag, after the state page's magic, cleared): its recovery writes.
printf '\0\0\0\0' | dd of="$T/rw/v/state" bs=1 seek=8 conv=notrunc status=none
expect2 "stat of an unclean volume on read-only storage" "not closed cleanly" "$DEDISENGINE" stat "$T/ro/v"
expect2 "export of an unclean volume on read-only storage" "not closed cleanly" \
	"$DEDISENGINE" export "$T/ro/v" "$T/out2"
[ ! -e "$T/out2" ] || fail "a refused export created its output"
note "read-only storage: stat and export of a clean mem volume; writers, bdb and unclean volumes refused (exit 2)"
