#!/bin/bash
# gen-align-cdc.sh - dedisgen's [alignment 1] and [cdc 1] on files of known layout:
# - shifted: 1 MiB of seeded random bytes, 1000 random bytes, the same 1 MiB again (a copy 1000 bytes
#   past a block boundary): fixed 4 KiB dedup sees nothing (ratio 1), the chunker finds the copy:
#   its shifted duplicates hold at least 7/8 MiB (the chunks cut by the copy's edges are lost), all
#   at shift 1000 (mod 4096), in one run; the CDC dedup is at least 1.8.
# - aligned: 32 random 8 KiB records, then the same records with each pair swapped (r1 r0 r3 r2..):
#   fixed dedup is exactly 2 at 4 and 8 KiB, exactly 1 at 16 KiB and above; every copy sits 2 or 30
#   blocks mod 32 from its source (66 or 62 blocks away), so 100 % of the copied blocks are at an
#   even distance and none at a multiple of 4.
# show and the JSON carry both; --no-alignment and --no-cdc leave them out; --cdc-avg changes the
# chunker; a bad --cdc-avg is refused (exit 2).
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
S=$E2E_TMP/shifted A=$E2E_TMP/aligned
python3 -c '
import random, sys
random.seed(3801)
r = random.randbytes(1 << 20)
sys.stdout.buffer.write(r + random.randbytes(1000) + r)' >"$S"
python3 -c '
import random, sys
random.seed(3802)
recs = [random.randbytes(8192) for _ in range(32)]
swapped = [recs[i ^ 1] for i in range(32)]
sys.stdout.buffer.write(b"".join(recs) + b"".join(swapped))' >"$A"
check() { awk "BEGIN { exit !($1) }" || fail "$2"; }
# field FILE KEY: the KEY line of the file's [cdc 1] section
field() { awk -v k="$2" '/^\[cdc 1\]$/ { c = 1 } c && $1 == k { print $0; exit }' "$1"; }

"$DEDISGEN" "$S" -q -o "$S.dist" --json "$S.json" || fail "scan of $S exited $?"
grep -q '^\[cdc 1\]$' "$S.dist" || fail "$S.dist has no [cdc 1] section"
grep -q '^chunker gear 8192 4096 65536$' "$S.dist" || fail "$S.dist: not the default chunker"
grep -q '^sample 1 4096 ' "$S.dist" || fail "$S.dist: small data is chunked whole (sample 1) against 4 KiB blocks"
read -r _ chunks bytes zc zb zdb <<<"$(field "$S.dist" chunks)"
[ "$bytes" = $((2 * 1048576 + 1000)) ] || fail "$S: the chunks hold $bytes bytes, not the file's"
read -r _ sc sb dc db <<<"$(field "$S.dist" sampled)"
read -r _ ac ab shc shb <<<"$(field "$S.dist" duplicates)"
check "$sb == $bytes" "$S: $sb of $bytes bytes sampled (small data: all)"
check "$shb >= 917504" "$S: shifted duplicates hold $shb bytes, want >= 7/8 MiB"
check "$ab == 0 && $zb == 0" "$S: aligned ($ab) or zero ($zb) chunks where there are none"
check "$sb / $db >= 1.8" "$S: CDC dedup $sb / $db below 1.8"
awk '/^\[cdc 1\]/ { c = 1 } c && $1 == "shift" { n++; if ($2 != 1000) bad = 1 } END { exit !(n == 1 && !bad) }' "$S.dist" ||
	fail "$S: the shifted duplicates are not all at shift 1000"
awk '/^\[cdc 1\]/ { c = 1 } c && $1 == "run" { n += $3 } END { exit !(n == 1) }' "$S.dist" ||
	fail "$S: the shifted copy is not one run"
awk '/^\[/ { exit } $1 > 0 { exit 1 }' "$S.dist" || fail "$S: 4 KiB blocks dedup where nothing is aligned"
awk '/^\[alignment 1\]/ { c = 1 } c && $1 == "record" && $3 != $4 { exit 1 }' "$S.dist" ||
	fail "$S: fixed records dedup where nothing is aligned"
python3 - "$S.json" <<'PY' || fail "$S.json: cdc figures missing or wrong"
import json, sys
c = json.load(open(sys.argv[1]))["results"][0]["cdc"]
assert c["dedup_ratio"] >= 1.8 and c["shifted_share"] >= 0.4 and c["shifts"][0]["shift"] == 1000, c
PY
"$DEDISGEN" show "$S.dist" | grep -q 'largest shifts (bytes mod 4096: chunks / bytes): 1000: ' ||
	fail "show does not name shift 1000"

"$DEDISGEN" "$A" -q -o "$A.dist" --json "$A.json" || fail "scan of $A exited $?"
for want in "record 2 64 32" "record 4 32 32" "record 8 16 16" "record 16 8 8" "record 32 4 4"; do
	grep -q "^$want\$" "$A.dist" || fail "$A.dist: no '$want' line (fixed dedup 2 at 8 KiB, 1 above)"
done
grep -q '^1 64$' "$A.dist" || fail "$A.dist: 4 KiB dedup is not 2 (no '1 64' record)"
python3 - "$A.json" <<'PY' || fail "$A.json: alignment figures wrong"
import json, sys
a = json.load(open(sys.argv[1]))["results"][0]["alignment"]
assert a["records"][0]["ratio"] == 2 and a["records"][1]["ratio"] == 1, a["records"]
assert a["copies_aligned_share"]["2"] == 1 and a["copies_aligned_share"]["4"] == 0, a["copies_aligned_share"]
blocks = a["copy_shift_blocks"]
assert blocks[2] + blocks[30] == 64 and sum(blocks) == 64, blocks
PY
"$DEDISGEN" show "$A.dist" | grep -q 'k=2 100.0 % k=4 0.0 %' || fail "show: copies not at 2 mod 4"

"$DEDISGEN" "$A" -q --no-alignment --no-cdc -o "$A.off.dist" || fail "scan with --no-alignment --no-cdc exited $?"
! grep -q '^\[alignment 1\]\|^\[cdc 1\]' "$A.off.dist" || fail "--no-alignment --no-cdc still wrote the sections"
"$DEDISGEN" "$S" -q --cdc-avg 4KiB -o "$S.4k.dist" || fail "scan with --cdc-avg 4KiB exited $?"
grep -q '^chunker gear 4096 2048 32768$' "$S.4k.dist" || fail "--cdc-avg 4KiB: not the 4 KiB chunker"
rc=0; "$DEDISGEN" "$S" -q --cdc-avg 5000 -o "$S.bad.dist" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" = 2 ] || fail "--cdc-avg 5000 exited $rc, want 2"
grep -q 'power of two' "$E2E_TMP/err" || fail "--cdc-avg 5000: $(cat "$E2E_TMP/err")"
[ ! -e "$S.bad.dist" ] || fail "--cdc-avg 5000 wrote an output"
"$DEDISBENCH" --target null --procs 1 --file-size 4MiB --dist "$S.dist" --seed 1 -q >/dev/null ||
	fail "dedisbench refused a distribution with [alignment 1] and [cdc 1]"
note "alignment and cdc: a copy shifted 1000 bytes found by the chunker only, 8 KiB-aligned copies by 8 KiB records only"
exit 0
