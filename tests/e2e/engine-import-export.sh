#!/bin/bash
# dedisengine import then export of a real file (a tar of /usr/share/doc) is byte-identical, fsck
# accepts the volume, and the engine's dedup figures equal dedisgen's for the same file and block size;
# so does an import from a pipe whose reads end anywhere.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
[ -x "$DEDISGEN" ] || fail "no dedisgen binary at $DEDISGEN"
mktmp

# A deterministic subset of /usr/share/doc: packages in name order, skipping any single one over
# 16 MiB, until about 24 MiB (a tar of 20-60 MiB on a usual system).
[ -d /usr/share/doc ] || skip "no /usr/share/doc"
picked=()
total=0
while IFS= read -r d; do
	sz=$(du -s --apparent-size -B1 "/usr/share/doc/$d" 2>/dev/null | cut -f1) || continue
	[ "$sz" -gt $((16 << 20)) ] && continue
	picked+=("doc/$d")
	total=$((total + sz))
	[ "$total" -ge $((24 << 20)) ] && break
done < <(LC_ALL=C ls /usr/share/doc)
[ "${#picked[@]}" -gt 0 ] || skip "/usr/share/doc is empty"
tar="$E2E_TMP/doc.tar"
tar -cf "$tar" -C /usr/share --ignore-failed-read "${picked[@]}" 2>/dev/null ||
	[ -s "$tar" ] || fail "cannot build the tar of /usr/share/doc"
len=$(stat -c %s "$tar")
[ "$len" -ge $((1 << 20)) ] || skip "/usr/share/doc holds only $len bytes"
note "tar of ${#picked[@]} /usr/share/doc entries: $len bytes"

# One dedisgen scan gives the reference figures at both block sizes.
"$DEDISGEN" scan "$tar" -b 4096,16384 -q -o "$E2E_TMP/doc.dist" --json "$E2E_TMP/gen.json" ||
	fail "dedisgen scan failed"

check_bs() { # BLOCK_SIZE INDEX
	local bs=$1 index=$2 vol="$E2E_TMP/vol$1" out="$E2E_TMP/export$1"
	# The volume is larger than the file (by 1-2 MiB), so the export has a tail to check.
	local size=$(((len + (2 << 20)) / bs * bs))
	"$DEDISENGINE" format "$vol" --size "$size" --block-size "$bs" --index "$index" -q ||
		fail "format --block-size $bs --index $index failed"
	"$DEDISENGINE" import "$vol" "$tar" -q || fail "import at $bs failed"
	"$DEDISENGINE" fsck "$vol" >"$E2E_TMP/fsck.out" 2>&1 || fail "fsck after import at $bs: $(cat "$E2E_TMP/fsck.out")"
	"$DEDISENGINE" export "$vol" "$out" -q || fail "export at $bs failed"
	[ "$(stat -c %s "$out")" -eq "$size" ] || fail "export at $bs is $(stat -c %s "$out") bytes, the volume $size"
	cmp -n "$len" "$tar" "$out" || fail "export at $bs differs from the imported tar"
	cmp -i "$len:0" -n $((size - len)) "$out" /dev/zero ||
		fail "export at $bs: the $((size - len)) bytes past the file are not zeros"

	"$DEDISENGINE" stat "$vol" --json >"$E2E_TMP/stat$bs.json" || fail "stat --json at $bs failed"
	local st="$E2E_TMP/stat$bs.json" g
	g=$(jq -c ".results[] | select(.block_size == $bs)" "$E2E_TMP/gen.json")
	[ -n "$g" ] || fail "dedisgen's JSON has no block size $bs"
	local blocks distinct ratio mapped referenced eratio
	blocks=$(jq -r .blocks <<<"$g")
	distinct=$(jq -r .distinct <<<"$g")
	ratio=$(jq -r .ratio <<<"$g")
	mapped=$(jget "$st" .mapped_blocks)
	referenced=$(jget "$st" .referenced_blocks)
	eratio=$(jget "$st" .dedup_ratio)
	# The zero-padded tail block counts on both sides.
	[ "$mapped" -eq $(((len + bs - 1) / bs)) ] || fail "at $bs the engine maps $mapped blocks for $len bytes"
	[ "$mapped" -eq "$blocks" ] || fail "at $bs the engine maps $mapped blocks, dedisgen counts $blocks"
	[ "$referenced" -eq "$distinct" ] || fail "at $bs the engine holds $referenced distinct blocks, dedisgen counts $distinct"
	jcheck "$st" ".physical_blocks == $distinct and .index_entries == $distinct and .logical_writes == $blocks" \
		"at $bs: physical blocks, index entries and writes agree with dedisgen" \
		'{physical_blocks, index_entries, logical_writes}'
	awk -v a="$eratio" -v b="$ratio" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-9 * b) }' ||
		fail "at $bs the engine's dedup ratio $eratio differs from dedisgen's $ratio"
	note "block size $bs ($index): byte-identical, fsck clean, $mapped blocks / $distinct distinct, ratio $eratio (dedisgen $ratio)"
	rm -f "$out"
}

check_bs 4096 mem
check_bs 16384 bloom

# The comparison is not vacuous: the tar has duplicate 4 KiB blocks.
jcheck "$E2E_TMP/stat4096.json" '.duplicate_writes > 0 and .dedup_ratio > 1' "the tar dedups at 4 KiB"

# From a pipe, whose reads end anywhere: written in 1000-byte pieces, the same bytes land on the
# same blocks (a short read was taken as the tail and zero-padded, shifting all that followed:
# 1 MiB came in as 275 blocks), and input past the volume's end is exit 1, naming it, with the
# blocks that fitted imported.
pv="$E2E_TMP/pipevol"
head -c $((1 << 20)) "$tar" >"$E2E_TMP/mib"
"$DEDISENGINE" format "$pv" --size 1MiB -q || fail "format of the pipe volume failed"
python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
for i in range(0, len(d), 1000):
    sys.stdout.buffer.write(d[i:i + 1000])
    sys.stdout.buffer.flush()
' "$E2E_TMP/mib" | "$DEDISENGINE" import "$pv" /dev/stdin >"$E2E_TMP/pipe.out" 2>&1 ||
	fail "import from a pipe failed: $(cat "$E2E_TMP/pipe.out")"
grep -q "imported 256 blocks" "$E2E_TMP/pipe.out" || fail "import from a pipe: $(cat "$E2E_TMP/pipe.out"), want 256 blocks"
"$DEDISENGINE" export "$pv" "$E2E_TMP/pipe.exp" -q
cmp "$E2E_TMP/mib" "$E2E_TMP/pipe.exp" || fail "what came in from a pipe in 1000-byte pieces reads back otherwise"
rc=0
{ cat "$E2E_TMP/mib"; head -c 5000 /dev/zero; } | "$DEDISENGINE" import "$pv" /dev/stdin >"$E2E_TMP/o" 2>"$E2E_TMP/e" || rc=$?
[ "$rc" -eq 1 ] && [ "$(wc -l <"$E2E_TMP/e")" -eq 1 ] && grep -q "goes on past the volume's 256 blocks" "$E2E_TMP/e" ||
	fail "a pipe longer than the volume: exit $rc: $(cat "$E2E_TMP/e")"
"$DEDISENGINE" export "$pv" "$E2E_TMP/pipe.exp" -q
cmp "$E2E_TMP/mib" "$E2E_TMP/pipe.exp" || fail "the blocks that fitted from a longer pipe read back otherwise"
note "import from a pipe in 1000-byte pieces: byte-identical; one longer than the volume: $(cat "$E2E_TMP/e")"

# A small import of a large volume exports sparse: 1 MiB of zeros then 2 MiB of data imported
# into an 8 GiB volume come out as an 8 GiB file whose unmapped blocks and zero blocks are holes
# (about 2 MiB allocated, not 8 GiB written), with the same bytes; a pipe gets every byte.
probe="$E2E_TMP/hole-probe"
truncate -s 64M "$probe"
if [ "$(stat -c %b "$probe")" -ne 0 ]; then
	note "SKIP sparse export: $E2E_TMP's filesystem allocates a truncated file (no holes)"
else
	sv="$E2E_TMP/sparsevol" in="$E2E_TMP/sparse.in" out="$E2E_TMP/sparse.out"
	{ head -c $((1 << 20)) /dev/zero; head -c $((2 << 20)) "$tar"; } >"$in"
	"$DEDISENGINE" format "$sv" --size 8GiB -q || fail "format of an 8 GiB volume failed"
	"$DEDISENGINE" import "$sv" "$in" -q || fail "import of 3 MiB into the 8 GiB volume failed"
	"$DEDISENGINE" export "$sv" "$out" -q || fail "export of the 8 GiB volume failed"
	size=$(stat -c %s "$out")
	alloc=$(($(stat -c %b "$out") * $(stat -c %B "$out")))
	[ "$size" -eq $((8 << 30)) ] || fail "the sparse export is $size bytes, the volume 8 GiB"
	# 2 MiB of data, plus a little room for a filesystem's own rounding; the zero MiB is a hole too
	[ "$alloc" -le $(((2 << 20) + (512 << 10))) ] ||
		fail "the export of a 3 MiB import (1 MiB zeros) allocates $alloc bytes: not sparse"
	cmp -n $((3 << 20)) "$in" "$out" || fail "the sparse export differs from what was imported"
	cmp -i $((3 << 20)):0 -n $(((8 << 30) - (3 << 20))) "$out" /dev/zero ||
		fail "the sparse export is not zeros past the import"
	"$DEDISENGINE" export "$pv" /dev/stdout -q | cmp - "$E2E_TMP/mib" ||
		fail "an export into a pipe does not carry every byte"
	note "8 GiB volume holding a 3 MiB import: exported as $size bytes, $alloc allocated; into a pipe: byte-identical"
fi
