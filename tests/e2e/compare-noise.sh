#!/bin/bash
# compare-noise.sh - dedisbench compare never prints an impossible space figure as a result: a
# phase whose efficiency (ideal bytes / observed bytes) is above 1.05 - the used space grew less
# than an ideal store needs, as when other writers on the file system free space meanwhile - is
# flagged "noise" in the table (saved and efficiency), explained under it, and left out of the
# CSV's saved column (no bar); an engine's efficiency of 1 and a plain file system's below 1 stay
# figures. (issue 39: "6.15:1 saved, efficiency 5.15" for a phase on plain ext4.)
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
mkdir "$E2E_TMP/d"
# two real runs: a directory (its space from statfs) and an engine volume (its own counters)
expect_ok --target "$E2E_TMP/d" --procs 1 --file-size 4MiB --time 1s --seed 1 -q -j "$E2E_TMP/dir.json"
expect_ok --target "engine:$E2E_TMP/vol" --procs 1 --file-size 4MiB --time 1s --seed 1 -q -j "$E2E_TMP/engine.json"
jcheck "$E2E_TMP/dir.json" '.space.source == "statfs" and .space.logical_bytes > 0'
jcheck "$E2E_TMP/engine.json" '.space.efficiency == 1'
# The statfs reading moves with everything else on this file system, so the directory's figures are
# set here: as the issue's ext4 phase (observed = logical / 6.15, so efficiency > 5), and as a plain
# file system keeps its data (observed = ideal / 0.82).
jq '.space.observed_bytes = (.space.logical_bytes / 6.15 | floor) |
    .space.efficiency = (.space.expected_bytes / .space.observed_bytes)' "$E2E_TMP/dir.json" >"$E2E_TMP/noisy.json"
jq '.space.observed_bytes = (.space.expected_bytes / 0.82 | floor) |
    .space.efficiency = (.space.expected_bytes / .space.observed_bytes)' "$E2E_TMP/dir.json" >"$E2E_TMP/plain.json"
eff=$(jget "$E2E_TMP/noisy.json" .space.efficiency)
fcmp "$eff" '>' 1.05 || fail "the noisy input's efficiency is $eff, not above 1.05"

expect_ok compare "$E2E_TMP/noisy.json" "$E2E_TMP/plain.json" "$E2E_TMP/engine.json" --output-dir "$E2E_TMP/cmp"
# one phase (the runs' workload, seq write): its first row names it, the others leave it blank
row() { grep -E "^(seq write)? +$1 +[0-9]" "$E2E_TMP/out"; }
noisy=$(row "$E2E_TMP/d") plain=$(row "$E2E_TMP/d \(#2\)") engine=$(row "engine:$E2E_TMP/vol")
[ -n "$noisy" ] && [ -n "$plain" ] && [ -n "$engine" ] || fail "want a row per input: $(cat "$E2E_TMP/out")"
# columns: ... saved effic. CPU % mem MiB vs first; the noisy row says "noise" in both and no ratio
[[ $noisy =~ \ noise\ +noise\  ]] || fail "the noisy phase's saved and efficiency are not flagged: $noisy"
[[ $noisy =~ [0-9]\.[0-9]{2}:1 ]] && fail "the noisy phase still shows a saved ratio: $noisy"
[[ $plain =~ \ [0-9]+\.[0-9]{2}:1\ +0\.82\  ]] || fail "a plain file system's figures are not shown: $plain"
[[ $engine =~ :1\ +1\.00\  ]] || fail "the engine's efficiency 1 is not shown: $engine"
[[ "$plain $engine" =~ \ noise\  ]] && fail "a possible efficiency was flagged: $plain / $engine"
# the reason, under the table: one line naming the phase, the system and the figure
[ "$(grep -c '^noise: ' "$E2E_TMP/out")" -eq 1 ] || fail "want one noise line: $(cat "$E2E_TMP/out")"
grep -qE "^noise: seq write on $E2E_TMP/d: efficiency $(printf '%.2f' "$eff") \(6\.1[0-9]:1 saved\) .*not a result$" \
	"$E2E_TMP/out" || fail "the noise line does not say what and why: $(grep '^noise' "$E2E_TMP/out")"
# the CSV (the plot's data): the noisy system's saved is 0 (not measured: no bar), the others' kept
awk -F, 'NR == 2 && !($4 == 0 && $7 > 0 && $10 > 0) { exit 1 }' "$E2E_TMP/cmp/compare.csv" ||
	fail "compare.csv: want saved 0 for the noisy system only: $(cat "$E2E_TMP/cmp/compare.csv")"

# --plot: the plots' keys name each system by its input's own name (the file, less ".json"), not
# by its path; gnuplot (a stand-in that records its arguments, then runs the real one) is given them
if command -v gnuplot >/dev/null 2>&1; then
	mkdir "$E2E_TMP/bin"
	printf '#!/bin/bash\nprintf "%%s\\n" "$*" >>"%s"\nexec %q "$@"\n' "$E2E_TMP/gnuplot.args" "$(command -v gnuplot)" \
		>"$E2E_TMP/bin/gnuplot"
	chmod +x "$E2E_TMP/bin/gnuplot"
	PATH=$E2E_TMP/bin:$PATH expect_ok compare "$E2E_TMP/noisy.json" "$E2E_TMP/plain.json" "$E2E_TMP/engine.json" \
		--output-dir "$E2E_TMP/cmp-plot" --plot
	[ "$(grep -c ' noisy|plain|engine$' "$E2E_TMP/gnuplot.args")" -eq 3 ] ||
		fail "compare --plot: the plots were not given the short names: $(cat "$E2E_TMP/gnuplot.args")"
fi
exit 0
