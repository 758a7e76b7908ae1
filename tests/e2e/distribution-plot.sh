#!/bin/bash
# distribution-plot.sh - --output-dir's dist-buckets.csv (distribution.png's data) sets the live
# data against the distribution as scaled to the run, with the write stream and the dataset as
# separate columns: a NURand overwrite run of 4 passes (2 x 64 MiB, personalfiles; a size bound,
# not a time: the same operations on a loaded machine) keeps every
# bucket of live within the run's tolerance of the scaled target, while the write stream does
# not (overwrites pile copies on hot blocks); the dominant contents are said to keep their share.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp /var/tmp
cd "$E2E_TMP"

plot=()
command -v gnuplot >/dev/null 2>&1 && plot=(--plot)

# run NAME ARGS...: the overwrite run into NAME/ (data) with its output dir NAME.out and JSON.
run() {
	local name=$1
	shift
	mkdir -p "$name"
	"$DEDISBENCH" --target "$name" --procs 2 --file-size 64MiB --access nurand --dist personalfiles --seed 16 \
		--output-dir "$name.out" --json "$name.json" "${plot[@]}" "$@" >"$name.summary" 2>"$name.err" ||
		fail "dedisbench ($name) exited $?: $(head -c 600 "$name.err")"
	head -1 "$name.out/dist-buckets.csv" | grep -qx 'copies_low,copies_high,live_share,scaled_share,written_share,dataset_share' ||
		fail "$name: dist-buckets.csv header: $(head -1 "$name.out/dist-buckets.csv")"
}

# worst NAME COL-A COL-B: the largest |A - B| of a bucket, in points (100 x share).
worst() {
	awk -F, -v a="$2" -v b="$3" 'NR > 1 { d = 100 * ($a - $b); if (d < 0) d = -d; if (d > m) m = d } END { printf "%.6f\n", m }' \
		"$1.out/dist-buckets.csv"
}
colsum() {
	awk -F, -v c="$2" 'NR > 1 { s += $c } END { printf "%.6f\n", s }' "$1.out/dist-buckets.csv"
}

# 1. 512 MiB of writes, no populate: the hot blocks are overwritten many times, some never written.
run timed --size 512MiB
tol=$(jget timed.json .content.scaled_target.tolerance_pp)
live=$(worst timed 3 4)
stream=$(worst timed 5 4)
note "timed: live vs scaled target $live pp (tolerance $tol pp), write stream vs scaled target $stream pp"
fcmp "$live" "<=" "$tol" || fail "timed: a live bucket is $live pp from the scaled target, beyond the run's $tol pp"
# the CSV and the JSON tell the same comparison
within "$live" "$(jget timed.json .content.scaled_target.live_max_bucket_diff_pp)" 0.01 ||
	fail "timed: CSV's $live pp vs JSON's $(jq .content.scaled_target.live_max_bucket_diff_pp timed.json)"
jcheck timed.json '.content.scaled_target.live_within_tolerance == true'
# the write stream is its own series (asserted strictly in 3, where the tolerance is small)
fcmp "$stream" ">" "$live" || fail "timed: the write stream ($stream pp) is closer to the target than live ($live pp)"
for c in 4 5 6; do
	within "$(colsum timed $c)" 1 0.001 || fail "timed: column $c sums to $(colsum timed $c), not 1"
done
within "$(colsum timed 3)" 1 0.001 || fail "timed: live column sums to $(colsum timed 3)"
# live blocks: the target's minus those never written
jcheck timed.json '.live.blocks + .content.scaled_target.live_never_written == .content.scaled_target.blocks'

# 2. What scaling did: contents above n/64 copies keep their share, not their copy count. The
#    dataset's heaviest bucket (the 2^17 copies of personalfiles' most copied content) is empty in
#    the scaled target, and the summary's `scaling:` line and the JSON say how many moved.
n=$(jget timed.json .content.scaled_target.blocks)
above=$(jget timed.json .content.scaled_target.dominant_above)
[ "$above" -eq $((n / 64)) ] || fail "dominant above $above copies, expected n/64 = $((n / 64))"
dom=$(jget timed.json .content.scaled_target.dominant_contents)
[ "$dom" -gt 0 ] || fail "no dominant content in a $n-block run of personalfiles"
awk -F, -v above="$above" 'NR > 1 && $1 > above && ($4 > 0 || $3 > 0) { bad = 1 } NR > 1 && $1 > above && $6 > 0 { seen = 1 }
	END { exit !(seen && !bad) }' timed.out/dist-buckets.csv ||
	fail "buckets above $above copies: the dataset should have some, the scaled target and live none: $(cat timed.out/dist-buckets.csv)"
grep -q "^scaling: personalfiles scaled from [0-9]* to $n blocks: $dom dominant contents (over $above copies" timed.summary ||
	fail "the summary does not say what scaling did: $(grep -i scal timed.summary)"
grep -q "^live vs scaled: largest bucket difference .* within the tolerance" timed.summary ||
	fail "the summary has no live vs scaled line: $(cat timed.summary)"
jcheck timed.json "(.content.scaling | test(\"$dom dominant contents\"))"

# 3. Populated first (every target block written before the clock starts): only the copies owed
#    by overwrites remain, and live must be within that much (procs x 64 blocks) of the target.
run populated --size 512MiB --populate content --dist-report populated.live.dist
tol=$(jget populated.json .content.scaled_target.tolerance_pp)
within "$tol" "$(awk -v n="$n" 'BEGIN { print 100 * 2 * 64 / n }')" 0.01 || fail "populated: tolerance $tol pp"
live=$(worst populated 3 4)
stream=$(worst populated 5 4)
note "populated: live vs scaled target $live pp (tolerance $tol pp), write stream vs scaled target $stream pp"
fcmp "$live" "<=" "$tol" || fail "populated: a live bucket is $live pp from the scaled target, beyond $tol pp"
# overwrites pile copies on the hot blocks: the write stream is far from the target, live is not
fcmp "$stream" ">" "$tol" || fail "populated: the write stream is within $tol pp of the target ($stream pp): not the overwrite stream?"

# 4. dedisgen compare: the dataset at its own size against the run's live data says that sizes
#    apart move the dominant contents (and points at the scaled target); the scaled target that
#    --output-dir leaves against the live data is the comparison that holds.
[ -s populated.out/scaled-target.dist ] || fail "no scaled-target.dist in --output-dir"
"$DEDISGEN" compare "$top_srcdir/distributions/personalfiles.dist" populated.live.dist --json >cmp-dataset.json ||
	fail "dedisgen compare (dataset vs live) exited $?"
jcheck cmp-dataset.json '.scale.dominant_contents > 0 and .scale.dominant_above == '"$above"' and (.scale.note | test("scaled-target.dist"))'
"$DEDISGEN" compare populated.out/scaled-target.dist populated.live.dist --json --max-diff "$tol" >cmp-scaled.json ||
	fail "dedisgen compare: live beyond $tol pp of scaled-target.dist: $(jq -c .diff cmp-scaled.json)"
jcheck cmp-scaled.json '.scale == null' "the scaled target and live are the same size: no scale note expected"
"$DEDISGEN" compare "$top_srcdir/distributions/personalfiles.dist" populated.live.dist | grep '^scale: A holds ' >/dev/null ||
	fail "dedisgen compare's text has no scale line"

if ((${#plot[@]})); then
	for r in timed populated; do
		[ "$(head -c 8 "$r.out/distribution.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
			fail "$r: no distribution.png"
	done
fi
exit 0
