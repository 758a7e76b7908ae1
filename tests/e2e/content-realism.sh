#!/bin/bash
# A distribution's [compressibility] and [locality] sections come true on the target: a
# sequential fill, judged by bench/perf/blockstat.py (hashlib + python3-lz4/-zstandard, not our
# C code), compresses block by block as the sections' cells say (after-dedup zstd -1 and LZ4
# within 5 %) and lays its duplicates out in copied runs (sequential-source share within 5
# points, share in runs >= 8 within 10 points); --layout scattered --compress 1 gives neither;
# a later read pass identifies every block (recipes included) without a ledger.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x $PY ] && $PY -c 'import lz4.block, zstandard' 2>/dev/null ||
	skip "python3-lz4 / python3-zstandard are not installed"
STAT="$top_srcdir/bench/perf/blockstat.py"
# dedisgen's distribution of an ext4 image of two Linux 6.1 trees (one edited) and
# /usr/share/doc: distributions/README.md says how it was made.
DIST="$top_srcdir/distributions/kernel-trees.dist"
[ -f "$DIST" ] || fail "no $DIST"
mktmp /var/tmp

# want KEY: what the distribution's sections say (after-dedup ratios from the cells; the
# sequential share and the share in runs >= 8 from the locality histograms).
want() {
	$PY - "$DIST" "$1" <<'EOF'
import sys
cells, dup, seq, dups = [], {}, 0, 0
for line in open(sys.argv[1]):
    f = line.split()
    if f[:1] == ["cell"]:
        cells.append([int(x) for x in f[1:]])
    elif f[:1] == ["duplicates"]:
        dups, seq = int(f[1]), int(f[2])
    elif f[:1] == ["dup"]:
        dup[int(f[1])] = int(f[3])
n = sum(c[3] for c in cells)
print({"zstd": n * 1024 / sum(c[3] * c[4] for c in cells), "lz4": n * 1024 / sum(c[3] * c[5] for c in cells),
       "seq": seq / dups, "ge8": sum(v for k, v in dup.items() if k >= 3) / dups}[sys.argv[2]])
EOF
}

# fill NAME ARGS...: one worker writes 64 MiB sequentially into $E2E_TMP/NAME; its blockstat JSON.
fill() {
	local name=$1
	shift
	mkdir "$E2E_TMP/$name"
	expect_ok --dist "$DIST" --target "$E2E_TMP/$name" --procs 1 --file-size 64MiB --access seq --seed 3 \
		--keep --quiet --json "$E2E_TMP/$name.json" "$@"
	$PY "$STAT" --json-only "$E2E_TMP/$name/dedisbench.0" >"$E2E_TMP/$name.stat"
}

fill real
got() { jget "$E2E_TMP/$1.stat" ".$2"; }
for k in zstd lz4; do
	key=${k/zstd/zstd1}_ratio_after_dedup
	w=$(want $k) g=$(got real "$key")
	note "after dedup $k: distribution $w, written $g"
	within "$g" "$w" 5 || fail "after-dedup $k ratio $g, the distribution says $w (±5 %)"
done
for k in seq ge8; do
	key=$([ $k = seq ] && echo dup_share_sequential_source || echo dup_share_in_runs_ge8)
	tol=$([ $k = seq ] && echo 0.05 || echo 0.10)
	w=$(want $k) g=$(got real "$key")
	note "$key: distribution $w, written $g"
	awk -v a="$w" -v b="$g" -v t="$tol" 'BEGIN { exit !(a - b <= t && b - a <= t) }' ||
		fail "$key $g, the distribution says $w (±$tol)"
done
[ "$(jget "$E2E_TMP/real.json" .content.layout)" = runs ] || fail "the summary does not say copied runs"
[ "$(jget "$E2E_TMP/real.json" .content.compress)" = dist ] || fail "the summary does not say compress dist"

# The same duplicates with neither: no sequential sources to speak of, nothing to compress.
fill plain --layout scattered --compress 1
g=$(got plain dup_share_sequential_source)
awk -v g="$g" 'BEGIN { exit !(g < 0.05) }' || fail "--layout scattered: sequential-source share $g"
g=$(got plain zstd1_ratio_after_dedup)
awk -v g="$g" 'BEGIN { exit !(g < 1.05) }' || fail "--compress 1: zstd -1 still compresses $g:1"
[ "$(got plain dedup_ratio)" = "$(got real dedup_ratio)" ] || fail "the layouts hold different contents"

# A read pass without the ledger recognises every block it finds from its bytes, recipes and all.
expect_ok --dist "$DIST" --target "$E2E_TMP/real" --procs 1 --mode read --populate none --verify final --seed 3 --file-size 64MiB \
	--size 4KiB --quiet --json "$E2E_TMP/verify.json"
valid=$(jget "$E2E_TMP/verify.json" .verify.found.valid) zero=$(jget "$E2E_TMP/verify.json" .verify.found.zero)
note "read pass without a ledger: $valid valid blocks, $zero zero blocks"
[ $((valid + zero)) = 16384 ] || fail "the read pass recognised $valid + $zero of 16384 blocks"
[ "$valid" -gt 8000 ] || fail "the read pass recognised only $valid written blocks"
