#!/bin/bash
# gen-show-compare.sh - dedisgen show / compare: rows, histogram and top contents of a known
# file (text and JSON), compare's differences and distances, --max-diff's exit status, --plot.
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
A=$E2E_TMP/a.dist
B=$E2E_TMP/b.dist
# A: 6 unique, 2 contents x2, 1 content x4 (T = 14); B: 10 unique, 2 contents x2 (T = 14)
printf '# block-size: 4096\n# hash: sha1\n# zero-blocks: 4\n0 6\n1 2\n3 1\n' >"$A"
printf '0 10\n1 2\n' >"$B"

"$DEDISGEN" show "$A" >"$E2E_TMP/show.txt" || fail "show exited $?"
grep -q "dedup ratio *1.5556" "$E2E_TMP/show.txt" || fail "show text: $(cat "$E2E_TMP/show.txt")"
"$DEDISGEN" show "$A" --json >"$E2E_TMP/show.json" || fail "show --json exited $?"
J=$E2E_TMP/show.json
jcheck "$J" '.rows.blocks == 14 and .rows.distinct == 9 and .zero_blocks == 4 and .block_size == 4096'
jcheck "$J" '(.rows.U0 - 6/14 | fabs) < 1e-12 and (.rows.U1 - 3/14 | fabs) < 1e-12 and (.rows.D - 5/14 | fabs) < 1e-12'
jcheck "$J" '[.histogram[] | [.copies_min, .copies_max, .contents, .blocks]] == [[1,1,6,6],[2,3,2,4],[4,7,1,4]]'
jcheck "$J" '.top[0] == {"copies": 4, "contents": 1}'

"$DEDISGEN" compare "$A" "$A" --max-diff 0 >/dev/null || fail "a file compared with itself exited $?"
"$DEDISGEN" compare "$A" "$B" --json >"$E2E_TMP/cmp.json" || fail "compare without --max-diff exited $?"
J=$E2E_TMP/cmp.json
jcheck "$J" '(.diff.U0_pp - 400/14 | fabs) < 1e-9 and (.diff.D_pp + 300/14 | fabs) < 1e-9'
jcheck "$J" '(.diff.tv - 4/14 | fabs) < 1e-9 and (.diff.ratio_err + 0.25 | fabs) < 1e-9 and .within'
rc=0; "$DEDISGEN" compare "$A" "$B" --max-diff 28 >"$E2E_TMP/cmp.txt" || rc=$?
[ "$rc" -eq 1 ] || fail "compare beyond --max-diff exited $rc"
grep -q DIFFERENT "$E2E_TMP/cmp.txt" || fail "compare text: $(cat "$E2E_TMP/cmp.txt")"
"$DEDISGEN" compare "$A" "$B" --max-diff 29 >/dev/null || fail "compare within --max-diff exited $?"

# counts past 2^63 (the format takes 64 bits) are JSON numbers of their size, never wrapped negative
printf '# block-size: 4096\n0 1\n9223372036854775807 1\n' >"$E2E_TMP/c63.dist"
printf '# block-size: 4096\n0 18446744073709551615\n' >"$E2E_TMP/n64.dist"
"$DEDISGEN" show "$E2E_TMP/c63.dist" --json >"$E2E_TMP/c63.json" || fail "show of 2^63 copies exited $?"
jcheck "$E2E_TMP/c63.json" '.histogram[1].copies_min > 9.2e18 and .histogram[1].copies_max > 1.8e19 and .histogram[1].blocks > 9.2e18 and .top[0].copies > 9.2e18'
"$DEDISGEN" show "$E2E_TMP/n64.dist" --json >"$E2E_TMP/n64.json" || fail "show of 2^64-1 contents exited $?"
jcheck "$E2E_TMP/n64.json" '.histogram[0].contents > 1.8e19 and .histogram[0].blocks > 1.8e19 and .top[0].contents > 1.8e19'

# a bundled original DEDISbench file loads unchanged
"$DEDISGEN" show "$top_srcdir/distributions/archival.dist" --json >"$E2E_TMP/arch.json" 2>/dev/null ||
	fail "show of a bundled file exited $?"
jcheck "$E2E_TMP/arch.json" '.rows.blocks > 0 and (.histogram | length) > 0'

if command -v gnuplot >/dev/null 2>&1; then
	"$DEDISGEN" show "$A" --plot "$E2E_TMP/h.png" >/dev/null || fail "--plot exited $?"
	[ "$(head -c 4 "$E2E_TMP/h.png" | tail -c 3)" = PNG ] || fail "--plot wrote no PNG"
	ls "$E2E_TMP"/h.png.tmp.* >/dev/null 2>&1 && fail "--plot left a temp file"
else
	note "gnuplot missing: --plot not checked"
fi
# highly compressible blocks at 64 KiB: 200 distinct blocks of 5 digits and zeros compress to a few
# dozen bytes; the after-dedup ratio is in the thousands, never 0:1 (a mean rounded to 0/1024)
mkdir "$E2E_TMP/tiny"
for i in $(seq 200); do
	{ printf '%05d' "$i"; head -c 65531 /dev/zero; } >"$E2E_TMP/tiny/$i"
done
"$DEDISGEN" "$E2E_TMP/tiny" -b 65536 --compress-sample all -o "$E2E_TMP/tiny.dist" --json "$E2E_TMP/tiny.json" -q ||
	fail "scan of tiny exited $?"
jcheck "$E2E_TMP/tiny.json" '.results[0].compressibility | .zstd_ratio > 1000 and .lz4_ratio > 100' \
	"after-dedup ratios of tiny compressed blocks" '.results[0].compressibility | {zstd_ratio, lz4_ratio}'
# an older file whose mean rounded to 0 reads as under 1/2048 of the block, and compare says so
sed -e 's/^\[compressibility 2\]/[compressibility 1]/' -e 's/^cell \([0-9]* [0-9]* [0-9]* [0-9]*\) .*/cell \1 0 4/' \
	"$E2E_TMP/tiny.dist" >"$E2E_TMP/tiny-v1.dist"
"$DEDISGEN" compare "$E2E_TMP/tiny-v1.dist" "$E2E_TMP/tiny.dist" >"$E2E_TMP/tiny.cmp" ||
	fail "compare of a version 1 and a version 2 file exited $?"
grep -q '^zstd -1 ratio .* 4096.000:1 .*:1 *[-+][1-9]' "$E2E_TMP/tiny.cmp" ||
	fail "compare of tiny: $(cat "$E2E_TMP/tiny.cmp")"
rc=0; "$DEDISGEN" compare "$E2E_TMP/tiny-v1.dist" "$E2E_TMP/tiny.dist" --max-ratio-diff 5 >/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "--max-ratio-diff 5 between 4096:1 and ~2700:1 exited $rc"
note "show and compare figures"
exit 0
