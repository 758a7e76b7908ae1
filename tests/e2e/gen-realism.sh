#!/bin/bash
# gen-realism.sh - dedisgen's compressibility and locality sections on real data built here: an
# ext4 image (mkfs.ext4 -d) of two copies of part of /usr/share/doc, one slightly edited, plus free
# (zero) space. With every occurrence measured they must equal, line for line, what our
# independent analyzer (bench/perf/blockstat.py: hashlib + python3-zstandard + python3-lz4) finds;
# sampled, they must stay within stated tolerances of that.
source "$(dirname "$0")/lib.sh"
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
command -v mkfs.ext4 >/dev/null 2>&1 || skip "mkfs.ext4 is missing (apt-get install e2fsprogs)"
PY=/usr/bin/python3
[ -x "$PY" ] && "$PY" -c 'import lz4.frame, lz4.block, zstandard' 2>/dev/null ||
	skip "python3-lz4 / python3-zstandard are missing (apt-get install python3-lz4 python3-zstandard)"
BLOCKSTAT=$top_srcdir/bench/perf/blockstat.py
mktmp /var/tmp

# The data: regular files of /usr/share/doc in name order, up to 6 MiB, twice; in the second copy
# every seventh file gets 8 bytes overwritten (a duplicate run broken by one changed block).
SRC=$E2E_TMP/src
mkdir -p "$SRC/a" "$SRC/b"
(cd /usr/share/doc && find . -type f -size -1024k -printf '%s\t%p\n' | LC_ALL=C sort -t "$(printf '\t')" -k2) |
	awk -F '\t' '{ if (t + $1 > 6 * 1048576) exit; t += $1; print $2 }' >"$E2E_TMP/files"
tar -C /usr/share/doc -cf - -T "$E2E_TMP/files" | tar -C "$SRC/a" -xf - || fail "copying /usr/share/doc"
total=$(du -sb "$SRC/a" | cut -f1)
((total > 1048576)) || skip "/usr/share/doc holds only $total bytes of regular files"
cp -r "$SRC/a/." "$SRC/b/"
"$PY" - "$SRC/b" <<'PY' || fail "editing the second copy"
import os, sys
files = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs)
for n, f in enumerate(files, 1):
    if n % 7 == 0 and os.path.getsize(f) > 200:
        with open(f, "r+b") as h:
            h.seek(100)
            h.write(b"edited!\n")
PY
IMG=$E2E_TMP/img.ext4
mib=$((2 * total / 1048576 * 3 / 2 + 8)) # half again as much free space, and room for metadata
mkfs.ext4 -q -F -b 4096 -d "$SRC" "$IMG" "${mib}M" >/dev/null 2>&1 || skip "mkfs.ext4 -d failed (e2fsprogs < 1.43?)"
note "image: $((2 * total)) bytes of files in ${mib} MiB"

section() { sed -n "/^\[$2 /,/^\[/p" "$1" | grep -v '^[#[]'; }

# 1. Every occurrence measured: exactly blockstat's sections (every cell with its mean sizes,
# every run-length bin), and the same counts.
"$DEDISGEN" "$IMG" --compress-sample all -o "$E2E_TMP/all.dist" --json "$E2E_TMP/all.json" -q || fail "scan exited $?"
"$PY" "$BLOCKSTAT" --sections "$IMG" >"$E2E_TMP/bs.sect" || fail "blockstat.py exited $?"
"$PY" "$BLOCKSTAT" --json-only "$IMG" >"$E2E_TMP/bs.json" || fail "blockstat.py exited $?"
diff <(sed -n '/^\[/,$p' "$E2E_TMP/all.dist" | no_gran | grep -v '^#') "$E2E_TMP/bs.sect" >&2 ||
	fail "dedisgen --compress-sample all and blockstat.py disagree (above: < dedisgen, > blockstat)"
J=$E2E_TMP/all.json B=$E2E_TMP/bs.json
[ "$(jget "$J" '.results[0].blocks')" = "$(jget "$B" '.blocks')" ] || fail "blocks differ"
[ "$(jget "$J" '.results[0].distinct')" = "$(jget "$B" '.distinct')" ] || fail "distinct contents differ"
[ "$(jget "$J" '.results[0].zero_blocks')" = "$(jget "$B" '.zero_blocks')" ] || fail "zero blocks differ"
# the headline figures, as blockcomp.py states them (rounded the same way)
for pair in "runs_ge8_share dup_share_in_runs_ge8" "sequential_share dup_share_sequential_source"; do
	set -- $pair
	a=$(jq -r ".results[0].locality.$1 * 10000 | round / 10000" "$J") b=$(jget "$B" ".$2")
	[ "$(jq -n "$a == $b")" = true ] || fail "$1: dedisgen $a, blockstat $b"
done
a=$(jq -r '.results[0].locality.mean_dup_run * 100 | round / 100' "$J")
[ "$(jq -n "$a == $(jget "$B" .dup_runs_mean)")" = true ] || fail "mean duplicate run: dedisgen $a"
# after-dedup ratios from the cells' mean sizes (1/2^20 of a block) vs the exact sizes: within 0.5 %
for codec in zstd lz4; do
	jq -e --slurpfile b "$B" ".results[0].compressibility.${codec}_ratio / \$b[0].dedis.${codec}_ratio - 1 | fabs < 0.005" \
		"$J" >/dev/null || fail "$codec ratio: $(jq ".results[0].compressibility.${codec}_ratio" "$J") vs exact $(jq ".dedis.${codec}_ratio" "$B")"
done
# the data is what the test meant: duplicates in long copied runs, zero runs, a real mix of sizes
jcheck "$J" '.results[0].locality | .runs_ge8_share > 0.5 and .sequential_share > 0.3 and .window == 0'
jcheck "$J" '.results[0].compressibility | .zstd_ratio > 1.2 and .zstd_eighths.all[7] < 0.9'
grep -q '^zero ' "$E2E_TMP/all.dist" || fail "no zero run in an image with free space"

# 2. The default: a dataset this small (< 2^13 blocks) is measured whole; a shown sample rate.
"$DEDISGEN" "$IMG" -o "$E2E_TMP/auto.dist" -q || fail "default scan exited $?"
grep -qx 'sample 1 [0-9]*' "$E2E_TMP/auto.dist" || fail "auto rate: $(grep '^sample' "$E2E_TMP/auto.dist")"
cmp -s "$E2E_TMP/auto.dist" "$E2E_TMP/all.dist" || fail "auto differs from all on a small image"

# 3. Sampled occurrences: the same locality (it does not depend on sampling); compressibility
# close to the exact figures. The errors of a sample of m contents shrink as 1/sqrt(m), and this
# image is small (a few thousand contents), so the tolerances are stated in m: after-dedup
# ratios within max(5 %, 300 % / sqrt(m)), the zstd size eighths within TV max(0.05, 2.5 / sqrt(m))
# (about 3.5 standard errors); and the estimated distinct contents (Horvitz-Thompson) within 4
# standard deviations of the true count, the variance sum N_k (1 - pi_k) / pi_k over copy classes,
# pi_k = 1 - (1 - p)^(2^k) (an upper bound: a class's contents have at least 2^k copies).
ht_check() { # EXACT SAMPLED P: prints "true estimate sd", fails beyond 4 sd
	awk -v p="$3" 'FNR == 1 { f++ } $1 == "cell" { if (f == 1) n[$2] += $5; else e[$2] += $5 }
		END { for (k in n) { pi = 1 - (1 - p) ^ (2 ^ k); v += n[k] * (1 - pi) / pi; tn += n[k] }
		      for (k in e) te += e[k]
		      sd = sqrt(v); printf "%d %d %.1f\n", tn, te, sd; d = te - tn; if (d < 0) d = -d; exit !(d <= 4 * sd + 1) }' "$1" "$2"
}
for r in 4 16; do
	"$DEDISGEN" "$IMG" --compress-sample "1/$r" -o "$E2E_TMP/s$r.dist" -q || fail "1/$r exited $?"
	p=$(jq -n "1 / $r")
	read -r _ rate m < <(grep '^sample ' "$E2E_TMP/s$r.dist")
	[ "$rate" = "$p" ] || fail "1/$r: sample line 'sample $rate $m'"
	[ "$(section "$E2E_TMP/s$r.dist" locality)" = "$(section "$E2E_TMP/all.dist" locality)" ] ||
		fail "1/$r: the locality changed with the sampling"
	ht=$(ht_check "$E2E_TMP/all.dist" "$E2E_TMP/s$r.dist" "$p") || fail "1/$r: distinct contents (true, estimate, sd): $ht"
	pct=$(awk -v m="$m" 'BEGIN { t = 300 / sqrt(m); print (t > 5 ? t : 5) }')
	tv=$(awk -v m="$m" 'BEGIN { t = 2.5 / sqrt(m); print (t > 0.05 ? t : 0.05) }')
	"$DEDISGEN" compare "$E2E_TMP/all.dist" "$E2E_TMP/s$r.dist" --max-ratio-diff "$pct" --max-tv "$tv" \
		--max-locality-diff 0 >"$E2E_TMP/cmp$r.txt" || fail "1/$r beyond tolerances: $(tail -12 "$E2E_TMP/cmp$r.txt")"
	note "1/$r, $m measured (limits $pct %, TV $tv; distinct true/estimate/sd $ht): $(grep -E '^(zstd -1|LZ4) ratio|^total-variation distance \(zstd' "$E2E_TMP/cmp$r.txt" | tr -s ' ' | tr '\n' ';')"
done
# compare's limits do trip: the sampled histogram is not the exact one
rc=0; "$DEDISGEN" compare "$E2E_TMP/all.dist" "$E2E_TMP/s16.dist" --max-tv 0 >/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "compare --max-tv 0 of different histograms exited $rc"

# 4. show prints the sections and --json carries them
"$DEDISGEN" show "$E2E_TMP/all.dist" >"$E2E_TMP/show.txt" || fail "show exited $?"
grep -q "after dedup: zstd -1 .*LZ4" "$E2E_TMP/show.txt" || fail "show: no after-dedup ratios"
grep -q "in runs >= 8" "$E2E_TMP/show.txt" || fail "show: no locality"
"$DEDISGEN" show --json "$E2E_TMP/all.dist" >"$E2E_TMP/show.json" || fail "show --json exited $?"
jq -e --slurpfile j "$J" '.compressibility == $j[0].results[0].compressibility and .locality == $j[0].results[0].locality' \
	"$E2E_TMP/show.json" >/dev/null || fail "show --json differs from the scan's JSON"
note "$(grep -A1 'after dedup' "$E2E_TMP/show.txt" | head -1 | tr -s ' ')"
exit 0
