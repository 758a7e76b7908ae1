#!/bin/bash
# gen-granularity.sh - dedisgen's granularity curve ([granularity 1]) on fixed data: a file of
# repeated text compresses better in larger pieces (zstd -1 and -3 at 128 KiB at least 1.25x their
# 4 KiB ratio, neither falling as the piece grows; measured 1.39x and 1.62x); random bytes stay at 1.0 (within 1 %)
# at every size and codec. show and the JSON carry it, --no-granularity and --compress-sample off
# leave it out, and dedisbench runs from a distribution that has it.
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
T=$E2E_TMP/text R=$E2E_TMP/random
# 4 MiB of text: lines of words from a 2,000-word vocabulary, half of them repeated from a set
# of 3,000 (a larger piece holds more of the repeats); 4 MiB of seeded random bytes
python3 -c '
import random, sys
random.seed(38)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 9))) for _ in range(2000)]
lines = [" ".join(random.choice(words) for _ in range(random.randint(5, 12))) for _ in range(3000)]
out, n = [], 0
while n < 4194304:
    line = random.choice(lines) if random.random() < 0.5 else " ".join(random.choice(words) for _ in range(8))
    out.append(line)
    n += len(line) + 1
sys.stdout.buffer.write("\n".join(out).encode()[:4194304])' >"$T"
python3 -c 'import random, sys; random.seed(38); sys.stdout.buffer.write(random.randbytes(4194304))' >"$R"
for f in "$T" "$R"; do
	"$DEDISGEN" "$f" --compress-sample all -o "$f.dist" --json "$f.json" -q || fail "scan of $f exited $?"
	grep -q '^\[granularity 1\]$' "$f.dist" || fail "$f.dist has no [granularity 1] section"
	[ "$(grep -c '^piece ' "$f.dist")" = 6 ] || fail "$f.dist: not 6 piece lines"
	grep -q '^sample 1 32$' "$f.dist" || fail "$f.dist: 'sample 1 32' expected (every one of 32 windows)"
done
# ratio FILE SIZE COLUMN: BYTES / the column's compressed bytes (4 zstd-1, 5 zstd-3, 6 LZ4)
ratio() { awk -v s="$2" -v c="$3" '$1 == "piece" && $2 == s { printf "%.4f", $3 / $c }' "$1"; }
check() { awk "BEGIN { exit !($1) }" || fail "$2"; }
prev4=0 prev5=0
for size in 4096 8192 16384 32768 65536 131072; do
	for col in 4 5; do
		z=$(ratio "$T.dist" $size $col)
		eval "p=\$prev$col"
		check "$z >= $p" "text: column $col ratio at $size ($z) below the smaller piece's ($p)"
		eval "prev$col=$z"
	done
	for col in 4 5 6; do
		r=$(ratio "$R.dist" $size $col)
		check "$r >= 1 && $r <= 1.01" "random: ratio $r at $size (column $col) is not 1.0 within 1 %"
	done
done
for col in 4 5; do
	small=$(ratio "$T.dist" 4096 $col) large=$(ratio "$T.dist" 131072 $col)
	check "$large >= 1.25 * $small" "text: column $col ratio at 128 KiB ($large) not 1.25x the 4 KiB one ($small)"
done
# show, JSON
"$DEDISGEN" show "$T.dist" | grep -q '^  granularity (128 KiB windows' || fail "show prints no granularity table"
"$DEDISGEN" show "$T.dist" | grep -q '^    128 KiB ' || fail "show's table has no 128 KiB line"
python3 - "$T.json" <<'PY' || fail "the JSON's granularity is not the curve"
import json, sys
g = json.load(open(sys.argv[1]))["results"][0]["granularity"]
assert g["windows"] == 32 and [p["size"] for p in g["pieces"]] == [4096 << k for k in range(6)]
assert g["pieces"][5]["zstd1_ratio"] > g["pieces"][0]["zstd1_ratio"]
PY
# off
"$DEDISGEN" "$T" --no-granularity -o "$E2E_TMP/off.dist" -q || fail "--no-granularity exited $?"
! grep -q '^\[granularity' "$E2E_TMP/off.dist" || fail "--no-granularity still wrote the section"
"$DEDISGEN" "$T" --compress-sample off -o "$E2E_TMP/off2.dist" -q || fail "--compress-sample off exited $?"
! grep -q '^\[granularity' "$E2E_TMP/off2.dist" || fail "--compress-sample off still wrote the section"
# dedisbench reads a distribution with the section (and ignores it for now)
"$DEDISBENCH" --target null --procs 1 --file-size 4MiB --dist "$T.dist" --seed 1 -q >/dev/null ||
	fail "dedisbench refused a distribution with [granularity 1]"
note "granularity curve: text grows with the piece, random stays 1.0; show, JSON, off, dedisbench"
exit 0
