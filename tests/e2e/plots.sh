#!/bin/bash
# Plots: every gnuplot script in plots/ renders a non-empty PNG from the fixed data files in
# tests/e2e/data/plots/ (the formats dedisbench, dedisgen and dedisengine write), and also from
# empty data (a run too short for a sample must still give a picture, not an error).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (apt-get install gnuplot-nox)"
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || skip "this gnuplot has no pngcairo terminal"
mktmp

P=$top_srcdir/plots
D=$top_srcdir/tests/e2e/data/plots

# render NAME OUT SCRIPT ARGS... : run gnuplot -c SCRIPT ARGS... (ARGS include OUT, the PNG).
rendered=" "
render() {
	local name=$1 out=$2 script=$3
	shift 3
	rendered+="$script "
	gnuplot -c "$P/$script" "$@" >"$E2E_TMP/$name.log" 2>&1 ||
		fail "$script ($name) failed: $(head -5 "$E2E_TMP/$name.log")"
	[ -s "$out" ] || fail "$script ($name) wrote no PNG at $out"
	[ "$(head -c 8 "$out" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
		fail "$script ($name): $out is not a PNG"
	# gnuplot reports bad data and bad commands as warnings and still writes the picture
	grep -i 'warning' "$E2E_TMP/$name.log" | grep -v 'No valid data points\|no valid points' >&2 &&
		fail "$script ($name) warned: $(head -3 "$E2E_TMP/$name.log")"
	note "$script ($name): $(stat -c %s "$out") bytes"
}

render timeseries "$E2E_TMP/timeseries.png" dedisbench-timeseries.gp "$D/timeseries.csv" "$E2E_TMP/timeseries.png" "a title"
render latency "$E2E_TMP/latency.png" dedisbench-latency.gp "$D/latency-percentiles.csv" "$E2E_TMP/latency.png"
render distribution "$E2E_TMP/distribution.png" dedisbench-distribution.gp "$D/dist-buckets.csv" "$E2E_TMP/distribution.png" \
	"a title" "$(printf 'what scaling did,\non two lines')"
# a run without a ledger: no live column
cut -d, -f1-2,4- "$D/dist-buckets.csv" | sed '1!s/^\([^,]*,[^,]*\),/\1,,/; 1s/.*/copies_low,copies_high,live_share,scaled_share,written_share,dataset_share/' >"$E2E_TMP/db-nolive.csv"
render distribution-no-live "$E2E_TMP/d2.png" dedisbench-distribution.gp "$E2E_TMP/db-nolive.csv" "$E2E_TMP/d2.png"
render access "$E2E_TMP/access.png" dedisbench-access.gp "$D/access-frequency.csv" "$E2E_TMP/access.png"
render engine-stat "$E2E_TMP/engine-stat.png" dedisengine-stat.gp "$D/engine-stat.dat" "$E2E_TMP/engine-stat.png" "vol"
render histogram "$E2E_TMP/histogram.png" dedisgen-histogram.gp "$D/gen-histogram-a.dat" "$E2E_TMP/histogram.png" "personalfiles"
render compare "$E2E_TMP/compare.png" dedisgen-compare.gp "$D/gen-histogram-a.dat" "$D/gen-histogram-b.dat" "$E2E_TMP/compare.png" \
	personalfiles kernels "two datasets"
render compare-caption "$E2E_TMP/compare2.png" dedisgen-compare.gp "$D/gen-histogram-a.dat" "$D/gen-histogram-b.dat" \
	"$E2E_TMP/compare2.png" personalfiles kernels "two datasets" "$(printf 'sizes apart:\nbuckets move')"
# dedisbench compare --plot: three phases, a plain directory against the engine (a label with a ';')
printf '%s\n' 'phase,/mnt/plain iops,/mnt/plain p99_us,/mnt/plain saved,engine:/v;index=bloom iops,engine:/v;index=bloom p99_us,engine:/v;index=bloom saved' \
	'seq-fill,52000.5,31.2,1.0000,15000.0,100.4,1.2000' 'uniform-write,74000.0,26.4,0.0000,13000.0,372.7,1.2100' \
	'uniform-write-50,37000.0,19136.5,1.0100,6500.0,150.0,1.2000' >"$E2E_TMP/compare.csv"
for w in iops latency saved; do
	render "compare-$w" "$E2E_TMP/compare-$w.png" dedisbench-compare.gp "$E2E_TMP/compare.csv" "$E2E_TMP/compare-$w.png" 2 "$w"
done
# ... where no phase measured space (a saved 0 is not measured, drawn as no bar): a chart that
# says so, not gnuplot's failure on a histogram with no bar
awk -F, 'BEGIN { OFS = "," } NR > 1 { $4 = 0; $7 = 0 } { print }' "$E2E_TMP/compare.csv" >"$E2E_TMP/compare0.csv"
render compare-saved-none "$E2E_TMP/compare0.png" dedisbench-compare.gp "$E2E_TMP/compare0.csv" "$E2E_TMP/compare0.png" 2 saved

# Every script in plots/ was exercised above.
for s in "$P"/*.gp; do
	s=$(basename "$s")
	[[ $rendered == *" $s "* ]] || fail "plots/$s has no rendering test in $(basename "$0")"
done

# Empty data: the header only (or nothing) still gives a picture saying so.
head -1 "$D/timeseries.csv" >"$E2E_TMP/ts0.csv"
head -1 "$D/latency-percentiles.csv" >"$E2E_TMP/lat0.csv"
head -1 "$D/dist-buckets.csv" >"$E2E_TMP/db0.csv"
head -1 "$D/access-frequency.csv" >"$E2E_TMP/af0.csv"
: >"$E2E_TMP/empty.dat"
render timeseries-empty "$E2E_TMP/e1.png" dedisbench-timeseries.gp "$E2E_TMP/ts0.csv" "$E2E_TMP/e1.png"
render latency-empty "$E2E_TMP/e2.png" dedisbench-latency.gp "$E2E_TMP/lat0.csv" "$E2E_TMP/e2.png"
render distribution-empty "$E2E_TMP/e3.png" dedisbench-distribution.gp "$E2E_TMP/db0.csv" "$E2E_TMP/e3.png"
render access-empty "$E2E_TMP/e4.png" dedisbench-access.gp "$E2E_TMP/af0.csv" "$E2E_TMP/e4.png"
render histogram-empty "$E2E_TMP/e5.png" dedisgen-histogram.gp "$E2E_TMP/empty.dat" "$E2E_TMP/e5.png"
render compare-empty "$E2E_TMP/e6.png" dedisgen-compare.gp "$E2E_TMP/empty.dat" "$E2E_TMP/empty.dat" "$E2E_TMP/e6.png"

# The time series dedisbench writes now has the host columns, which add a third panel: with no
# row (a run that completes no operation keeps none) and with one row (a run of about a second) every panel
# still draws, without gnuplot's warnings (one sample drawn as a line is nothing, and a range
# of one time value is empty).
hdr='time_s,read_ops,read_mib_s,read_lat_mean_us,read_lat_p99_us,write_ops,write_mib_s,write_lat_mean_us,write_lat_p99_us,host_cpu_busy_pct,host_cpu_iowait_pct,host_mem_used_mib'
printf '%s\n' "$hdr" >"$E2E_TMP/tsh0.csv"
printf '%s\n%s\n' "$hdr" '0.999,0,0.000,0.0,0.0,1000,3.908,8.2,26.9,2.5,0.0,4281.5' >"$E2E_TMP/tsh1.csv"
render timeseries-host-empty "$E2E_TMP/e11.png" dedisbench-timeseries.gp "$E2E_TMP/tsh0.csv" "$E2E_TMP/e11.png" "t"
render timeseries-host-one-row "$E2E_TMP/e12.png" dedisbench-timeseries.gp "$E2E_TMP/tsh1.csv" "$E2E_TMP/e12.png" "t"
grep -q 'linespoints' "$P/dedisbench-timeseries.gp" || fail "dedisbench-timeseries.gp draws a single sample with lines only"

# The same through dedisbench: a run too short for a 1 s sample (2 x 1 MiB: one row, its partial
# interval of a few ms) with --plot exits 0 and leaves all four pictures.
mkdir "$E2E_TMP/short"
"$DEDISBENCH" -q --target "$E2E_TMP/short" --procs 2 --file-size 1MiB --seed 3 --output-dir "$E2E_TMP/short.out" --plot \
	2>"$E2E_TMP/short.err" || fail "a short run with --plot exited $?: $(head -3 "$E2E_TMP/short.err")"
[ "$(awk -F, 'NR > 1 { s += $2 + $6 } END { print s + 0 }' "$E2E_TMP/short.out/timeseries.csv")" = 512 ] ||
	fail "the short run's time series does not count its 512 operations: $(cat "$E2E_TMP/short.out/timeseries.csv")"
for png in timeseries latency distribution access; do
	[ -s "$E2E_TMP/short.out/$png.png" ] || fail "a short run with --plot left no $png.png"
done

# A write-only time series (no read operation at all) leaves the read direction out.
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } { $2 = 0; $3 = 0; $4 = 0; $5 = 0; print }' \
	"$D/timeseries.csv" >"$E2E_TMP/ts-w.csv"
render timeseries-write-only "$E2E_TMP/e7.png" dedisbench-timeseries.gp "$E2E_TMP/ts-w.csv" "$E2E_TMP/e7.png"

# Flat data (target null: every latency under the histogram's first bucket) draws without warnings.
printf 'percentile,read_us,write_us\n0,0,0.1\n50,0,0.1\n99.9999,0,0.1\n' >"$E2E_TMP/lat-flat.csv"
render latency-flat "$E2E_TMP/e8.png" dedisbench-latency.gp "$E2E_TMP/lat-flat.csv" "$E2E_TMP/e8.png"
awk -F, 'BEGIN { OFS = "," } NR == 1 { print; next } { $2 = 0; $3 = 0; $4 = 0; $5 = 0; $9 = 0; print }' \
	"$D/timeseries.csv" >"$E2E_TMP/ts-flat.csv"
render timeseries-flat "$E2E_TMP/e9.png" dedisbench-timeseries.gp "$E2E_TMP/ts-flat.csv" "$E2E_TMP/e9.png"
printf 'block_size 4096\n' >"$E2E_TMP/stat0.dat"
render engine-stat-empty "$E2E_TMP/e10.png" dedisengine-stat.gp "$E2E_TMP/stat0.dat" "$E2E_TMP/e10.png"

# A script without its arguments says how to call it and fails.
if gnuplot -c "$P/dedisbench-latency.gp" >"$E2E_TMP/usage" 2>&1; then
	fail "dedisbench-latency.gp without arguments succeeded"
fi
grep -q usage "$E2E_TMP/usage" || fail "dedisbench-latency.gp without arguments printed no usage"
