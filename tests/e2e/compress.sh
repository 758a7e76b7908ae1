#!/bin/bash
# --compress R: files written with R = 2 and 4 compress R:1 (within 10 %) under zstd -1 and
# gzip -1; R = 1 stays incompressible; the summary says R is a stream's ratio where blocks are
# too small to reach it alone; R outside 1..20 is refused.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v zstd >/dev/null 2>&1 || skip "zstd is not installed (apt-get install zstd)"
command -v gzip >/dev/null 2>&1 || skip "gzip is not installed (apt-get install gzip)"

mktmp

# write R DIR [ARGS...]: a 2-worker sequential fill of 16 MiB per worker, kept.
write() {
	local r=$1 dir=$2
	shift 2
	mkdir "$dir"
	expect_ok --target "$dir" --procs 2 --file-size 16MiB --compress "$r" --keep --seed 1 --quiet "$@"
}

# ratio TOOL FILE: uncompressed / compressed size with `TOOL -1 -c`.
ratio() {
	local c
	c=$("$1" -1 -c "$2" | wc -c)
	awk -v s="$(stat -c %s "$2")" -v c="$c" 'BEGIN { printf "%.3f\n", s / c }'
}

for r in 2 4; do
	write $r "$E2E_TMP/r$r"
	for f in "$E2E_TMP/r$r"/dedisbench.*; do
		for tool in zstd gzip; do
			q=$(ratio $tool "$f")
			note "R=$r $tool -1 $(basename "$f"): $q"
			within "$q" $r 10 || fail "R=$r: $tool -1 compresses $(basename "$f") $q:1, want $r ±10 %"
		done
	done
done

# R = 1 with the default distribution: gzip's 32 KiB window sees almost no duplicate block,
# zstd's 512 KiB one sees about 3 % of them (personalfiles' duplicates, not the content), so
# the content itself is checked on an all-unique distribution.
write 1 "$E2E_TMP/r1"
for f in "$E2E_TMP/r1"/dedisbench.*; do
	q=$(ratio gzip "$f")
	note "R=1 gzip -1 $(basename "$f"): $q"
	fcmp "$q" "<=" 1.02 || fail "R=1: gzip -1 compresses $(basename "$f") $q:1, want <= 1.02"
	q=$(ratio zstd "$f")
	note "R=1 zstd -1 $(basename "$f"): $q (in-window duplicates included)"
	fcmp "$q" "<=" 1.05 || fail "R=1: zstd -1 compresses $(basename "$f") $q:1, want <= 1.05"
done
printf '0 1000\n' >"$E2E_TMP/unique.dist"
write 1 "$E2E_TMP/u1" --dist "$E2E_TMP/unique.dist"
for f in "$E2E_TMP/u1"/dedisbench.*; do
	for tool in zstd gzip; do
		q=$(ratio $tool "$f")
		note "R=1 unique $tool -1 $(basename "$f"): $q"
		fcmp "$q" "<=" 1.02 ||
			fail "R=1 (all unique): $tool -1 compresses $(basename "$f") $q:1, want <= 1.02"
	done
done

# The summary says what R is: a stream's ratio, which a 512 B block compressed alone falls short
# of past R = 2 (its frame), and the physical line says what such blocks reach; from 4 KiB, R.
mkdir "$E2E_TMP/small" "$E2E_TMP/large"
# (a distribution in the original DEDISbench format: no block size of its own, so any -b)
printf '0 1000\n1 100\n' >"$E2E_TMP/anybs.dist"
expect_ok --target "$E2E_TMP/small" --procs 1 --file-size 1MiB --block-size 512 --dist "$E2E_TMP/anybs.dist" --compress 8 --seed 1
grep -q '^content: .*compressible 8:1 in a stream (a block this small compressed alone reaches less' "$E2E_TMP/out" ||
	fail "512 B, R=8: the content line does not say R is a stream's ratio: $(grep '^content' "$E2E_TMP/out")"
expect_ok --target "$E2E_TMP/large" --procs 1 --file-size 1MiB --compress 8 --seed 1
grep -q '^content: .*compressible 8:1$' "$E2E_TMP/out" ||
	fail "4 KiB, R=8: the content line: $(grep '^content' "$E2E_TMP/out")"

# Out of range: refused with status 2, nothing written.
for r in 0 21; do
	mkdir "$E2E_TMP/bad$r"
	run_bench --target "$E2E_TMP/bad$r" --procs 2 --file-size 1MiB --compress $r --quiet
	[ "$RC" -eq 2 ] || fail "--compress $r exited $RC, want 2"
	[ -z "$(ls -A "$E2E_TMP/bad$r")" ] || fail "--compress $r wrote into the target"
done
