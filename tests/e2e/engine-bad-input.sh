#!/bin/bash
# Bad input to dedisengine and to dedisbench's engine target: a corrupted superblock is refused by
# every command and by dedisbench, format never overwrites a volume, bad options and argument
# counts are refused, as are an export into and an import from the volume's own files - each with
# exit 2, one line on stderr, and nothing created or changed; a
# damaged bdb index page or durable map chunk is a clean failure (exit 1) that names it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp
T="$E2E_TMP"

sums() { # a checksum of every file of a volume, names included
	(cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum)
}
# content: the volume's files except the shared state page (every open/close rewrites its clean
# flag, lock and flush count), plus the counters stat reports from that page.
content() {
	sums "$1" | grep -v ' \./state$'
	"$DEDISENGINE" stat "$1" --json
}

# expect2 WHAT PATTERN CMD...: exit 2, exactly one line on stderr matching PATTERN, nothing on stdout.
expect2() {
	local what=$1 pat=$2 rc=0
	shift 2
	"$@" >"$T/o" 2>"$T/e" || rc=$?
	[ "$rc" -eq 2 ] || fail "$what: exit $rc, want 2 ($*): $(head -c 400 "$T/e")"
	[ "$(wc -l <"$T/e")" -eq 1 ] || fail "$what: want one line on stderr, got: $(cat "$T/e")"
	grep -Eqi -- "$pat" "$T/e" || fail "$what: stderr does not match /$pat/: $(cat "$T/e")"
	[ ! -s "$T/o" ] || fail "$what: wrote to stdout: $(head -c 200 "$T/o")"
}

vol="$T/vol"
"$DEDISENGINE" format "$vol" --size 8MiB -q || fail "format failed"
head -c $((1 << 20)) /dev/urandom >"$T/data"
"$DEDISENGINE" import "$vol" "$T/data" -q || fail "import failed"
good=$(sums "$vol")

# 1. format over an existing volume is refused and leaves it intact.
expect2 "format over a volume" "already holds a volume" "$DEDISENGINE" format "$vol" --size 16MiB
# the command line (found by tests/fuzz/fuzz_engine_cli): an unknown letter in a cluster is named,
# not the argument before it; an empty --plot is bad input, not a failure of stat
expect2 "an unknown letter before a known one" "unknown option '-Z'" "$DEDISENGINE" -Zq stat "$vol"
expect2 "stat --plot ''" "--plot: empty value" "$DEDISENGINE" stat "$vol" --plot ''
expect2 "format over a volume with other options" "already holds a volume" \
	"$DEDISENGINE" format "$vol" --size 8MiB --index bdb --block-size 8192
[ "$(sums "$vol")" = "$good" ] || fail "a refused format changed the volume"
"$DEDISENGINE" export "$vol" "$T/out" -q && cmp -s -n $((1 << 20)) "$T/data" "$T/out" ||
	fail "the volume does not read back after a refused format"
good=$(sums "$vol") # export opened and closed it

# 1b. A volume another process has open - a stat or an export, which take no run lock, hold the
# shared flock on its superblock that every open holds - is "in use by another command": fsck and
# gc, which need it alone, exit 2 and change nothing. They exited 1, which for fsck says
# "inconsistent": a stat running alongside made a consistent volume fail its check.
if command -v flock >/dev/null 2>&1; then
	exec 9<"$vol/superblock"
	flock -s 9
	expect2 "fsck while a reader has the volume open" "in use by another process" "$DEDISENGINE" fsck "$vol"
	expect2 "gc while a reader has the volume open" "in use by another process" "$DEDISENGINE" gc "$vol"
	flock -u 9
	exec 9<&-
	[ "$(sums "$vol")" = "$good" ] || fail "a refused fsck or gc changed the volume"
	"$DEDISENGINE" fsck "$vol" -q || fail "fsck of the volume once nobody else has it open exited $?"
	good=$(sums "$vol")
fi

# 2. A flipped byte in the superblock: every command and dedisbench refuse, nothing changes.
cp "$vol/superblock" "$T/sb.good"
off=$(((RANDOM % 64) + 8))
b=$(od -An -tu1 -j "$off" -N1 "$vol/superblock" | tr -d ' ')
printf '%b' "$(printf '\\%03o' $((b ^ 0x5a)))" | dd of="$vol/superblock" bs=1 seek="$off" conv=notrunc status=none
cmp -s "$vol/superblock" "$T/sb.good" && fail "the byte flip did not change the superblock"
bad=$(sums "$vol")
CSUM='checksum|corrupt'
expect2 "stat on a corrupted superblock (byte $off)" "$CSUM" "$DEDISENGINE" stat "$vol"
expect2 "stat --json on a corrupted superblock" "$CSUM" "$DEDISENGINE" stat "$vol" --json
expect2 "fsck on a corrupted superblock" "$CSUM" "$DEDISENGINE" fsck "$vol"
expect2 "import on a corrupted superblock" "$CSUM" "$DEDISENGINE" import "$vol" "$T/data"
expect2 "export on a corrupted superblock" "$CSUM" "$DEDISENGINE" export "$vol" "$T/never"
[ ! -e "$T/never" ] || fail "export on a corrupted superblock created its output file"
expect2 "gc on a corrupted superblock" "$CSUM" "$DEDISENGINE" gc "$vol"
expect2 "discard on a corrupted superblock" "$CSUM" "$DEDISENGINE" discard "$vol" 0 1
expect2 "format over a corrupted volume" "volume|superblock" "$DEDISENGINE" format "$vol" --size 8MiB
expect2 "dedisbench on a corrupted superblock" "$CSUM" \
	"$DEDISBENCH" --target "engine:$vol" --procs 1 --file-size 4MiB --size 1MiB -q
[ "$(sums "$vol")" = "$bad" ] || fail "a refused command changed the volume with the corrupted superblock"
# A truncated superblock too (cut inside its checksummed fields; the file is padded to 4 KiB).
head -c 40 "$T/sb.good" >"$vol/superblock"
expect2 "stat on a truncated superblock" "superblock" "$DEDISENGINE" stat "$vol"
expect2 "dedisbench on a truncated superblock" "superblock" \
	"$DEDISBENCH" --target "engine:$vol" --procs 1 --file-size 4MiB --size 1MiB -q
cp "$T/sb.good" "$vol/superblock"
[ "$(sums "$vol")" = "$good" ] || fail "the refused commands changed the volume's other files"
"$DEDISENGINE" fsck "$vol" -q >/dev/null 2>&1 || fail "the restored volume does not pass fsck"
good=$(sums "$vol")
note "corrupted superblock (byte $off): refused by stat, fsck, import, export, gc, discard, format, dedisbench"

# 3. Bad options and argument counts: exit 2, one line, nothing created.
nv="$T/new"
while IFS='|' read -r pat args; do
	# shellcheck disable=SC2086 # word splitting of the argument list is intended
	expect2 "dedisengine $args" "$pat" "$DEDISENGINE" $args
	[ ! -e "$nv" ] || fail "dedisengine $args created $nv"
done <<EOF
index|format $nv --size 8MiB --index foo
block size|format $nv --size 8MiB --block-size 3000
block size|format $nv --size 8MiB --block-size 128KiB
hash|format $nv --size 8MiB --hash md5
preallocate|format $nv --size 8MiB --preallocate thick
preallocated chunk store needs|format $nv --size 900TiB --preallocate full
needs about .* of memory for its map, references|format $nv --size 1PiB --preallocate sparse
size|format $nv
size|format $nv --size lots
--size 0: zero is not a size|format $nv --size 0
--data-size 0: zero is not a size|format $nv --size 8MiB --data-size 0
the data size, 1 bytes, is less than one 4096-byte block|format $nv --size 8MiB --data-size 1
volume size, 6000 bytes, is not a whole number of 4096-byte blocks|format $nv --size 6000
volume size, 1000 bytes, is less than one 4096-byte block|format $nv --size 1000
^dedisengine: --size: 18446744073709551615 bytes is more than a volume holds \(at most 2\^40 - 1 blocks of 4096 bytes: 4503599627366400 bytes\)$|format $nv --size 18446744073709551615B
--data-size: 562949953421312 bytes is more than a volume holds \(at most 2\^40 - 1 blocks of 512 bytes|format $nv --size 1MiB --data-size 512TiB --block-size 512
whole number of 8192-byte blocks|format $nv --size 1MiB --block-size 8KiB --data-size 1052672
data size, 6000 bytes, is not a whole number|format $nv --size 8MiB --data-size 6000
option|format $nv --size 8MiB --frobnicate
argument|format $nv extra --size 8MiB
argument|format
argument|stat
argument|stat $nv extra
argument|import $nv
argument|discard $nv 0
argument|export $nv
command|frobnicate $nv
command|
volume|stat $nv
volume|import $nv $T/data
--commit-every: '4294967296' is too large|import $nv $T/data --commit-every 4294967296
EOF
# --preallocate full that passes the room check but runs out while allocating (the map and the
# journal take room too): one line, exit 2, and the half-made volume removed. It needs a small file
# system of its own: a 12 MiB tmpfs mounted here (root only).
sm="$T/small"
mkdir "$sm"
if mount -t tmpfs -o size=12M tmpfs "$sm" 2>/dev/null; then
	rc=0
	"$DEDISENGINE" format "$sm/v" --size 12MiB --data-size $((12 * 1048576 - 4096)) --preallocate full \
		>"$T/o" 2>"$T/e" || rc=$?
	left=$(ls -A "$sm")
	umount "$sm"
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] && grep -q "cannot preallocate" "$T/e" ||
		fail "a full preallocation that runs out: exit $rc, stderr: $(cat "$T/e")"
	[ -z "$left" ] || fail "a full preallocation that ran out left: $left"
	note "a full preallocation that runs out part way: exit 2, nothing left"
else
	note "not root: a full preallocation that runs out part way was not tried (it needs a tmpfs of its own)"
fi

# The map and the journal are allocated at format in every mode, and the caches (the mem table
# alone is 32 MiB a GiB) with all their room at the first open: a file system without room for them
# refuses the format up front (exit 2, nothing left), where a sparse volume's first commit, or
# later its first open (every open, "No space left on device"), failed.
# 4 GiB on 4 MiB: no room for the map and journal; 1 GiB on 12 MiB: for them (3 MiB) but not the
# caches (35 MiB).
for case in 4GiB:4 1GiB:12; do
	mount -t tmpfs -o size="${case#*:}M" tmpfs "$sm" 2>/dev/null || break
	rc=0
	"$DEDISENGINE" format "$sm/v" --size "${case%:*}" --preallocate sparse >"$T/o" 2>"$T/e" || rc=$?
	left=$(ls -A "$sm")
	umount "$sm"
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$T/e")" -eq 1 ] &&
		grep -q "needs .* beside its chunk store (the map and journal, and .* MiB of caches its first open makes), its file system has ${case#*:} MiB free" "$T/e" ||
		fail "a format of ${case%:*} without room for its map, journal and caches: exit $rc, stderr: $(cat "$T/e")"
	[ -z "$left" ] || fail "a format without room for its map, journal and caches left: $left"
	note "no room for the map, journal and caches: $(cat "$T/e")"
done

# dedisbench's engine target on a file system without room for the volume: refused before the
# format, and the message's two figures agree with the refusal (it read "12 MiB free, the volume
# needs 12 MiB": the need was rounded down like the room).
if mount -t tmpfs -o size=12M tmpfs "$sm" 2>/dev/null; then
	run_bench --target "engine:$sm/vol" --procs 2 --file-size 6MiB -w --quiet
	left=$(ls -A "$sm")
	umount "$sm"
	[ "$RC" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] ||
		fail "an engine target without room: exit $RC: $(cat "$E2E_TMP/err")"
	read -r free need < <(sed -n 's/.*: \([0-9]*\) MiB free, the volume needs \([0-9]*\) MiB$/\1 \2/p' "$E2E_TMP/err")
	[ -n "$need" ] && [ "$free" -lt "$need" ] ||
		fail "an engine target without room: the figures do not say why: $(cat "$E2E_TMP/err")"
	[ -z "$left" ] || fail "a refused engine target left: $left"
fi

# Format into a regular file: it is not a directory (it said "is not empty"), and the file stays.
printf 'keep\n' >"$T/plain"
expect2 "format into a regular file" "plain is not a directory" "$DEDISENGINE" format "$T/plain" --size 8MiB
[ "$(cat "$T/plain")" = keep ] || fail "a refused format changed the regular file"
# A volume missing a durable file, or with one shorter than format made it: refused naming the
# file (it was exit 1 "cannot open the volume: No such file or directory", and fsck of a cut
# map "Input/output error"), and nothing is written.
for f in map journal data.0 data.7; do
	rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && rm "$T/dv/$f"
	before=$(sums "$T/dv")
	expect2 "stat without $f" "dv: the volume's $f is missing" "$DEDISENGINE" stat "$T/dv"
	expect2 "fsck without $f" "dv: the volume's $f is missing" "$DEDISENGINE" fsck "$T/dv"
	[ "$(sums "$T/dv")" = "$before" ] || fail "a refused open of a volume without $f changed it"
done
# the journal too, even emptied (it passed fsck, exit 0): format allocates it whole
for f in map data.0 journal; do
	rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && truncate -s $([ $f = journal ] && echo 0 || echo 8192) "$T/dv/$f"
	expect2 "fsck with $f cut short" "dv: the volume's $f is shorter than format made it" "$DEDISENGINE" fsck "$T/dv"
	expect2 "export with $f cut short" "the volume's $f is shorter" "$DEDISENGINE" export "$T/dv" "$T/dv.out"
done
# A cache cut short (the volume closed cleanly) is not trusted but rebuilt from the durable files,
# as after a power loss: it was exit 1 "cannot open the volume: Invalid argument" for ever, or with
# a stale errno ("No such file or directory" on an export to a new file).
"$DEDISENGINE" export "$vol" "$T/want" -q || fail "export of the volume failed"
for f in lbnmap refs index.mem state dirty locks; do
	rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && truncate -s 10 "$T/dv/$f"
	rm -f "$T/dv.out"
	"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || fail "export with the cache $f cut short: $(cat "$T/e")"
	cmp -s "$T/want" "$T/dv.out" || fail "with the cache $f cut short the volume reads back other data"
	"$DEDISENGINE" fsck "$T/dv" -q 2>"$T/e" || fail "fsck after the cache $f was cut short: $(cat "$T/e")"
done
for idx in bdb bloom; do
	rm -rf "$T/dv" && "$DEDISENGINE" format "$T/dv" --size 8MiB --index $idx -q && "$DEDISENGINE" import "$T/dv" "$T/data" -q
	for f in bdb/counters bloom; do
		[ -e "$T/dv/$f" ] || continue
		truncate -s 10 "$T/dv/$f"
		rm -f "$T/dv.out"
		"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || fail "$idx: export with $f cut short: $(cat "$T/e")"
		cmp -s "$T/want" "$T/dv.out" || fail "$idx: with $f cut short the volume reads back other data"
	done
done
note "caches cut short (lbnmap refs index.mem state dirty locks, bdb counters, bloom): rebuilt, data intact"
# A cache damaged in place (the volume closed cleanly) fails its check at the next open and is
# rebuilt from the durable files, the command saying so: one zeroed page of lbnmap exported 512
# blocks of zeros with exit 0, stat kept its counts, fsck said INCONSISTENT and repaired nothing.
mapped=$("$DEDISENGINE" stat "$vol" --json | jq .mapped_blocks)
for damage in lbnmap:0:zero lbnmap:0:random refs:0:random index.mem:mid:random state:0:random state:1:random; do
	IFS=: read -r f page how <<<"$damage"
	rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && rm -f "$T/dv.out"
	[ "$page" = mid ] && page=$(($(stat -c %s "$T/dv/$f") / 8192))
	head -c 4096 "/dev/$([ "$how" = zero ] && echo zero || echo urandom)" |
		dd of="$T/dv/$f" bs=4096 seek="$page" conv=notrunc status=none
	"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || fail "export with a $how page in $f: $(cat "$T/e")"
	cmp -s "$T/want" "$T/dv.out" || fail "with a $how page $page in the cache $f the volume reads back other data"
	grep -Eq "dv: (the (index|$f) cache.* failed its check|the $f cache is not this volume's); rebuilt from the durable files" "$T/e" ||
		fail "export with a $how page $page in $f: no word of the rebuild: $(cat "$T/e")"
	"$DEDISENGINE" fsck "$T/dv" >"$T/o" 2>&1 || fail "fsck after a $how page in $f was rebuilt: $(cat "$T/o")"
	[ "$("$DEDISENGINE" stat "$T/dv" --json | jq .mapped_blocks)" = "$mapped" ] ||
		fail "stat after a $how page in $f: mapped blocks wrong"
done
rm -rf "$T/dv" && cp -a "$vol" "$T/dv"
head -c 4096 /dev/zero | dd of="$T/dv/lbnmap" bs=4096 seek=0 conv=notrunc status=none
"$DEDISENGINE" fsck "$T/dv" >"$T/o" 2>&1 || fail "fsck of a damaged lbnmap: $(cat "$T/o")"
grep -q "^.*dv: the lbnmap cache failed its check; rebuilt from the durable files$" "$T/o" ||
	fail "fsck does not say the lbnmap cache was rebuilt: $(cat "$T/o")"
note "caches damaged in place (lbnmap refs index.mem state): checked at open, rebuilt, said so, data intact"
# Berkeley DB's own files are the index's too: a database whose meta page fails its checksum
# when the open reads it is damage to a cache, rebuilt from the durable files (it was exit 1
# "cannot open the volume: Invalid argument" on every open). fsck's walk: below.
rm -rf "$T/dv" && "$DEDISENGINE" format "$T/dv" --size 8MiB --index bdb -q && "$DEDISENGINE" import "$T/dv" "$T/data" -q
head -c 4096 /dev/urandom | dd of="$T/dv/bdb/env.0/index.0.db" bs=4096 seek=0 conv=notrunc status=none
rm -f "$T/dv.out"
"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || fail "export with a bdb meta page damaged: $(cat "$T/e")"
grep -q "rebuilt from the durable files" "$T/e" || fail "export with a bdb meta page damaged: no word of a rebuild: $(cat "$T/e")"
cmp -s "$T/want" "$T/dv.out" || fail "after a rebuild of a damaged bdb database the volume reads back other data"
note "a bdb database's meta page failing its checksum at the open: rebuilt, data intact"
# A bdb database page zeroed loses entries without a checksum error: fsck lists what is wrong, and
# as every problem is in the caches (references, index, counters), rebuilds them and checks again
# (it said INCONSISTENT, exit 1, and repaired nothing).
rm -rf "$T/dv" && "$DEDISENGINE" format "$T/dv" --size 8MiB --index bdb -q && "$DEDISENGINE" import "$T/dv" "$T/data" -q
head -c 4096 /dev/zero | dd of="$T/dv/bdb/env.0/index.0.db" bs=4096 seek=1 conv=notrunc status=none
"$DEDISENGINE" fsck "$T/dv" >"$T/o" 2>"$T/e" || fail "fsck of a bdb index page zeroed: $(cat "$T/o" "$T/e")"
grep -Eq "dv: the caches had [1-9][0-9]* problems; rebuilt from the durable files" "$T/o" &&
	grep -q "reference word .*/indexed, expected .*/unindexed" "$T/o" && tail -1 "$T/o" | grep -q "dv: consistent" ||
	fail "fsck of a bdb index page zeroed: want its problems, the rebuild and a consistent volume: $(cat "$T/o")"
# A cache damaged and the durable map too: nothing rebuilt from the damaged map, the caches (all
# that is left of it) kept, the open fails naming the map's damage (it exported zeros, exit 0).
rm -rf "$T/dv" && cp -a "$vol" "$T/dv"
head -c 4096 /dev/zero | dd of="$T/dv/lbnmap" bs=4096 conv=notrunc status=none
head -c 4096 /dev/zero | dd of="$T/dv/map" bs=4096 seek=1 conv=notrunc status=none
cp "$T/dv/lbnmap" "$T/lbnmap.before"
rc=0
"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || rc=$?
[ "$rc" -eq 1 ] && grep -q "the durable map's chunk 0 .* does not match" "$T/e" ||
	fail "export with lbnmap and map damaged: exit $rc, want 1 naming the map's chunk: $(cat "$T/e")"
cmp -s "$T/lbnmap.before" "$T/dv/lbnmap" || fail "the caches were rebuilt from a damaged durable map"
note "fsck rebuilds caches whose only problems are theirs; never from a damaged durable map"
# A format killed before its superblock leaves only durable files (5 of 25 kill -9 tries left a
# lone map): stat says so, and a format clears them and makes the volume (it said "not empty").
rm -rf "$T/hm" && mkdir "$T/hm" && cp "$vol/map" "$T/hm/map"
expect2 "stat of a half-made volume" "hm holds no volume \\(a format of it did not finish" "$DEDISENGINE" stat "$T/hm"
"$DEDISENGINE" format "$T/hm" --size 8MiB -q 2>"$T/e" || fail "format over its own half-made volume: $(cat "$T/e")"
"$DEDISENGINE" fsck "$T/hm" -q || fail "fsck of a volume formatted over a half-made one"
rm -rf "$T/hm" && mkdir "$T/hm" && cp "$vol/map" "$T/hm/map" && echo keep >"$T/hm/notes"
expect2 "format into a directory with a map and another file" "not empty" "$DEDISENGINE" format "$T/hm" --size 8MiB
[ "$(cat "$T/hm/notes")" = keep ] && [ -f "$T/hm/map" ] || fail "a refused format removed files"
# A link planted where a volume's file belongs is never followed: a durable file's is refused
# (exit 2; a data file's link had the file it named overwritten by a dedisbench run), a cache's
# replaced by a rebuilt cache; the linked file is untouched either way.
head -c $((1 << 20)) /dev/urandom >"$T/victim" && cp "$T/victim" "$T/victim.orig"
rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && rm "$T/dv/data.0" && ln -s ../victim "$T/dv/data.0"
expect2 "a volume whose data.0 is a link" "data.0 is a symbolic link" "$DEDISENGINE" import "$T/dv" "$T/data"
expect2 "dedisbench on a volume whose data.0 is a link" "data.0 is a symbolic link" \
	"$DEDISBENCH" --target "engine:$T/dv" --procs 2 --file-size 2MiB --quiet
for f in lbnmap refs state; do
	rm -rf "$T/dv" && cp -a "$vol" "$T/dv" && rm "$T/dv/$f" && ln -s ../victim "$T/dv/$f"
	"$DEDISENGINE" export "$T/dv" "$T/dv.out" -q 2>"$T/e" || fail "export with the cache $f a link: $(cat "$T/e")"
	cmp -s "$T/want" "$T/dv.out" || fail "with the cache $f a link the volume reads back other data"
	[ ! -L "$T/dv/$f" ] || fail "the cache $f is still a link after an open"
	rm -f "$T/dv.out"
done
cmp -s "$T/victim" "$T/victim.orig" || fail "a file linked from inside a volume was written"
note "links inside a volume: a durable file's refused, a cache's rebuilt; the linked file untouched"
# dedisbench's engine:LINK works on the directory it names and removes the volume it formatted
# there (it was left behind); engine:DANGLING is refused (exit 2, it failed after starting).
mkdir "$T/realv" && ln -s realv "$T/linkv"
"$DEDISBENCH" --target "engine:$T/linkv" --procs 2 --file-size 2MiB --quiet 2>"$T/e" ||
	fail "dedisbench on engine:LINK: $(cat "$T/e")"
[ -z "$(ls -A "$T/realv")" ] || fail "dedisbench on engine:LINK left its volume: $(ls -A "$T/realv")"
ln -s nowhere "$T/dangling"
expect2 "an engine option given twice" "engine option index given twice" \
	"$DEDISBENCH" --target "engine:$T/twice,index=mem,index=bdb" --procs 1 --file-size 1MiB
[ ! -e "$T/twice" ] || fail "a refused engine target was created"
expect2 "dedisbench on engine:DANGLING" "is a symbolic link to nothing" \
	"$DEDISBENCH" --target "engine:$T/dangling" --procs 1 --file-size 1MiB --json "$T/dj.json"
[ ! -e "$T/dj.json" ] && [ ! -e "$T/nowhere" ] || fail "a refused engine:DANGLING wrote something"
rm -rf "$T/dv" "$T/dv.out" "$T/want" "$T/victim" "$T/victim.orig" "$T/realv" "$T/linkv" "$T/dangling"

gc0=$(content "$vol")
strict0=$(sums "$vol")
expect2 "import of a missing file" "nonexistent" "$DEDISENGINE" import "$vol" "$T/nonexistent"
expect2 "import of a directory" "is a directory" "$DEDISENGINE" import "$vol" "$T"
head -c $((9 << 20)) /dev/zero >"$T/big"
expect2 "import of a file larger than the volume" "fit" "$DEDISENGINE" import "$vol" "$T/big"
expect2 "discard outside the volume" "outside" "$DEDISENGINE" discard "$vol" 2000 100
expect2 "discard with a non-number" "START|LEN|number" "$DEDISENGINE" discard "$vol" x 1
# These are refused before the volume is opened: not even the state page may change.
# An export into the volume's own directory would rename its output over the volume's files (the
# superblock, the map: exit 0, then the volume was gone), and so would stat --plot's PNG; an import from it reads the volume while
# writing it. Any file of the volume - by a link too - or a new name inside its directory: refused.
ln -s "$vol" "$T/vlink"
ln "$vol/map" "$T/maplink"
for out in "$vol/superblock" "$vol/map" "$vol/journal" "$vol/data.0" "$vol/state" "$vol/newfile" "$vol" \
	"$T/vlink/map" "$T/maplink" "$vol/../vol/lbnmap"; do
	expect2 "export into $out" "file of the volume" "$DEDISENGINE" export "$vol" "$out"
	expect2 "import from $out" "file of the volume" "$DEDISENGINE" import "$vol" "$out"
	# stat --plot renames its PNG over the name the same way (it once replaced the superblock)
	expect2 "stat --plot $out" "file of the volume" "$DEDISENGINE" stat "$vol" --plot "$out"
done
rm "$T/vlink" "$T/maplink"
[ ! -e "$vol/newfile" ] || fail "a refused export created a file in the volume"
[ "$(sums "$vol")" = "$strict0" ] || fail "refused import/discard/export changed a file of the volume"
[ "$(content "$vol")" = "$gc0" ] || fail "refused commands changed the volume"
good=$(sums "$vol")

# 4. dedisbench's engine target: bad spec, wrong index, wrong block size - exit 2, nothing written.
expect2 "dedisbench index=nope" "index" "$DEDISBENCH" --target "engine:$nv,index=nope" --procs 1 --file-size 4MiB -q
[ ! -e "$nv" ] || fail "dedisbench index=nope created $nv"
expect2 "dedisbench index=blo (a prefix of bloom)" "index" "$DEDISBENCH" --target "engine:$nv,index=blo" --procs 1 --file-size 4MiB -q
[ ! -e "$nv" ] || fail "dedisbench index=blo created $nv"
expect2 "dedisbench unknown engine option" "engine option|index=" \
	"$DEDISBENCH" --target "engine:$nv,foo=bar" --procs 1 --file-size 4MiB -q
expect2 "dedisbench engine: without a directory" "engine:DIR" "$DEDISBENCH" --target "engine:" --procs 1 --file-size 4MiB -q
[ ! -e "$nv" ] || fail "a refused dedisbench created $nv"
# a block larger than any volume takes (dedisbench's own limit is 1 MiB): bad input before
# anything is made, not the run failure (exit 1) that formatting the new volume would report
printf '0 1000\n1 100\n' >"$T/anybs.dist" # (the original DEDISbench format: any -b)
expect2 "dedisbench --block-size 128KiB on a new volume" "block-size.*64 KiB" \
	"$DEDISBENCH" --target "engine:$nv" --procs 1 --file-size 4MiB --block-size 128KiB --dist "$T/anybs.dist" --json "$T/bs.json" -q
[ ! -e "$nv" ] && [ ! -e "$T/bs.json" ] || fail "the refused --block-size 128KiB run created $nv or its JSON"
expect2 "dedisbench --block-size 8192 on a 4 KiB volume" "block" \
	"$DEDISBENCH" --target "engine:$vol" --procs 1 --file-size 4MiB --block-size 8192 --dist "$T/anybs.dist" --size 1MiB -q
expect2 "dedisbench index=bdb on a mem volume" "index" \
	"$DEDISBENCH" --target "engine:$vol,index=bdb" --procs 1 --file-size 4MiB --size 1MiB -q
expect2 "dedisbench needing more than the volume" "volume|need" \
	"$DEDISBENCH" --target "engine:$vol" --procs 4 --file-size 4MiB --size 1MiB -q
[ "$(sums "$vol")" = "$good" ] || fail "a refused dedisbench run changed the volume"
"$DEDISENGINE" export "$vol" "$T/out" -q && cmp -s -n $((1 << 20)) "$T/data" "$T/out" ||
	fail "the volume does not read back after the refused runs"
note "bad options, argument counts and engine target specs: exit 2, one line, nothing created or changed"

# 5. A directory that holds something else is never formatted (a volume's directory is all the
# volume's: a run that formatted it removes it whole), by dedisengine or by a dedisbench run.
mkdir "$T/busy" && printf 'notes\n' >"$T/busy/notes.txt" && ln -s "$T/data" "$T/busy/data.0"
data_sum=$(md5sum <"$T/data")
expect2 "format into a non-empty directory" "not empty" "$DEDISENGINE" format "$T/busy" --size 8MiB
expect2 "dedisbench on a non-empty directory" "not empty" \
	"$DEDISBENCH" --target "engine:$T/busy" --procs 1 --file-size 4MiB --size 1MiB -q
[ "$(ls -A "$T/busy" | tr '\n' ' ')" = "data.0 notes.txt " ] && [ -L "$T/busy/data.0" ] ||
	fail "a refused format touched the directory: $(ls -A "$T/busy")"
[ "$(md5sum <"$T/data")" = "$data_sum" ] || fail "the file a link in the directory names was changed"
# an empty directory is fine, and a run that formatted it leaves it as it found it
mkdir "$T/empty"
expect_ok --target "engine:$T/empty" --procs 1 --file-size 4MiB --size 1MiB -q
[ -d "$T/empty" ] && [ -z "$(ls -A "$T/empty")" ] || fail "the run did not leave the empty directory empty"
expect_ok --target "engine:$T/fresh" --procs 1 --file-size 4MiB --size 1MiB -q
[ ! -e "$T/fresh" ] || fail "the run left the volume directory it created"
note "non-empty directories never formatted; runs remove exactly what they formatted"

# A bdb index page damaged on disk (the bytes fuzz_engine found crashing libdb 5.3 with SIGBUS):
# page checksums refuse it when it is read in - no signal; stderr names the check and the file,
# without libdb's tens of follow-up lines - and the index, a cache, is rebuilt from the durable
# files and checked again (it was exit 1 "Input/output error", nothing repaired).
"$DEDISENGINE" format "$T/bdbvol" --size 1MiB -b 512 -i bdb -q || fail "format bdb exited $?"
head -c 1048576 /dev/urandom >"$T/mib"
"$DEDISENGINE" import "$T/bdbvol" "$T/mib" -q || fail "import exited $?"
python3 - "$T/bdbvol/bdb/env.0/index.0.db" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(8209); b = f.read(7); f.seek(8209); f.write(bytes(x ^ 0xff for x in b))
PY
rc=0
# (libdb leaks its handles once it has panicked - its close calls refuse to run: not ours, so
# ASan's leak report is off for this one command)
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 "$DEDISENGINE" fsck "$T/bdbvol" >"$T/o" 2>"$T/e" || rc=$?
[ "$rc" -eq 0 ] || fail "fsck of a damaged bdb page: exit $rc, want 0 (rebuilt): $(head -c 400 "$T/e")"
grep -q "bdbvol: .*; rebuilt from the durable files" "$T/o" ||
	fail "fsck of a damaged bdb page does not say it rebuilt the index: $(cat "$T/o")"
grep -q "checksum error" "$T/e" && grep -q "index.0.db" "$T/e" || fail "the damage is not named: $(cat "$T/e")"
[ "$(wc -l <"$T/e")" -le 3 ] || fail "more than 3 lines on stderr: $(cat "$T/e")"
note "a damaged bdb page: refused by its checksum, $(wc -l <"$T/e") lines, the index rebuilt"

# A durable map chunk damaged on disk (format version 4 keeps a check per 64-LBN chunk). With the
# caches intact, fsck reports it as a problem (exit 1); once they are lost (the state page gone, as
# after a power loss) the volume is not opened from the damaged map - before the checks, recovery
# loaded the altered words and every read of those LBNs returned another block without a word.
"$DEDISENGINE" format "$T/mapvol" --size 1MiB -b 512 -q || fail "format exited $?"
"$DEDISENGINE" import "$T/mapvol" "$T/mib" -q || fail "import exited $?"
"$DEDISENGINE" export "$T/mapvol" "$T/before" -q || fail "export exited $?"
python3 - "$T/mapvol/map" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:  # chunk 1 (LBNs 64-127): the map words start at 4 KiB
    f.seek(4096 + 512 + 8 * 3); b = f.read(2); f.seek(4096 + 512 + 8 * 3); f.write(bytes(x ^ 0x01 for x in b))
PY
rc=0
"$DEDISENGINE" fsck "$T/mapvol" >"$T/o" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "fsck of a damaged map chunk (caches intact): exit $rc, want 1: $(head -c 400 "$T/o")"
grep -q "chunk 1 (LBNs 64-127)" "$T/o" || fail "fsck does not name the damaged chunk: $(cat "$T/o")"
"$DEDISENGINE" export "$T/mapvol" "$T/after" -q || fail "export with the caches intact exited $?"
cmp -s "$T/before" "$T/after" || fail "reads changed although the working map was intact"
rm "$T/mapvol/state"
rc=0
"$DEDISENGINE" fsck "$T/mapvol" >"$T/o" 2>"$T/e" || rc=$?
[ "$rc" -eq 1 ] || fail "fsck of a damaged map chunk (caches lost): exit $rc, want 1: $(head -c 400 "$T/e")"
grep -q "chunk 1 (LBNs 64-127) does not match checkpoint" "$T/e" || fail "the damage is not named: $(cat "$T/e")"
[ "$(wc -l <"$T/e")" -eq 1 ] || fail "want one line on stderr: $(cat "$T/e")"
note "a damaged durable map chunk: reported by fsck, refused once the caches are lost"
