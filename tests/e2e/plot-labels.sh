#!/bin/bash
# plot-labels.sh - what the pictures say, read from gnuplot itself (its table of plotted points,
# its settings, its text rendering and its geometry), not from pixels (issue 39):
# - timeseries.png: the last row, when it covers under 0.9 s (what remained as the workers
#   stopped), is not joined to the lines - no fake stall, no spike - but drawn apart, titled partial;
# - compare-latency.png: a log y axis, the systems' short names in the key (no "p99_us", no
#   paths), and the last phase's slanted name inside the picture;
# - distribution.png: the key outside the plot, where it cannot cover the points.
source "$(dirname "$0")/lib.sh"
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is not installed (apt-get install gnuplot-nox)"
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 || skip "this gnuplot has no pngcairo terminal"
mktmp
P=$top_srcdir/plots

# gp SCRIPT ARGS... -- COMMANDS...: run SCRIPT with ARGS as `gnuplot -c` does (`call`), then the
# COMMANDS; everything gnuplot says lands in $E2E_TMP/gp.out. A command TABLE before the call
# makes gnuplot write the points it plots (x, y, i: in range / u: undefined) to $E2E_TMP/table.
gp() {
	local script=$1 a cmds=() pre=()
	shift
	local args=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	for a; do
		if [ "$a" = TABLE ]; then pre+=("set table \"$E2E_TMP/table\""); else cmds+=("$a"); fi
	done
	{
		printf '%s\n' "${pre[@]}"
		printf 'call "%s"' "$P/$script"
		for a in "${args[@]}"; do printf ' "%s"' "$a"; done
		printf '\n'
		printf '%s\n' "${cmds[@]}"
	} >"$E2E_TMP/probe.gp"
	gnuplot "$E2E_TMP/probe.gp" >"$E2E_TMP/gp.out" 2>&1 || fail "$script: gnuplot failed: $(head -5 "$E2E_TMP/gp.out")"
	! grep -i warning "$E2E_TMP/gp.out" || fail "$script warned: $(head -3 "$E2E_TMP/gp.out")"
}
# curve TITLE: the table's points of the curve titled TITLE, "x y type" a line
curve() {
	awk -v t="# Curve title: \"$1\"" '$0 == t { on = 1; next } on && /^# Curve title/ { on = 0 }
		on && /^ *[-0-9]/ { print $1, $2, $3 }' "$E2E_TMP/table"
}

# --- timeseries.png ---
H=time_s,read_ops,read_mib_s,read_lat_mean_us,read_lat_p99_us,write_ops,write_mib_s,write_lat_mean_us,write_lat_p99_us
printf '%s\n' "$H" 1.000,2787,10.882,351.9,4096.0,1215,4.744,405.6,3997.7 2.001,2757,10.765,302.5,2687.0,1245,4.861,378.4,3244.0 \
	3.002,2795,10.907,596.5,11010.0,1209,4.718,626.9,11927.6 3.150,4,0.016,50000.0,87000.0,0,0,0,0 >"$E2E_TMP/ts.csv"
gp dedisbench-timeseries.gp "$E2E_TMP/ts.csv" "$E2E_TMP/ts.png" -- TABLE
for t in read write "read p99" "write p99"; do
	c=$(curve "$t")
	[ "$(grep -c ' i$' <<<"$c")" -eq 3 ] || fail "timeseries: the '$t' line does not hold the 3 whole seconds: $c"
	grep -q '^3\.15 ' <<<"$c" && fail "timeseries: the partial last row is joined to the '$t' line: $c"
done
[ "$(curve "read (last, partial second)" | grep ' i$')" = "3.15 0.016 i" ] ||
	fail "timeseries: the partial second is not drawn apart: $(cat "$E2E_TMP/table")"
[ "$(curve "read p99 (last, partial second)" | grep ' i$')" = "3.15 87000 i" ] ||
	fail "timeseries: the partial second's p99 is not drawn apart: $(cat "$E2E_TMP/table")"
# a last row a whole second long is an ordinary point of the lines, and nothing is titled partial
printf '%s\n' "$H" 1.000,2787,10.882,351.9,4096.0,1215,4.744,405.6,3997.7 2.001,2757,10.765,302.5,2687.0,1245,4.861,378.4,3244.0 \
	2.998,2795,10.907,596.5,11010.0,1209,4.718,626.9,11927.6 >"$E2E_TMP/ts2.csv"
gp dedisbench-timeseries.gp "$E2E_TMP/ts2.csv" "$E2E_TMP/ts2.png" -- TABLE
[ "$(curve read | grep -c ' i$')" -eq 3 ] || fail "timeseries: a whole last second left the line: $(curve read)"
grep -q partial "$E2E_TMP/table" && fail "timeseries: a whole last second was called partial"

# --- compare-latency.png: the suite's 14 phases, p99 from 3 us to 40 ms ---
phases="seq-fill seq-read uniform-write uniform-read nurand-write nurand-read uniform-write-50 uniform-write-80
uniform-read-50 uniform-read-80 nurand-write-50 nurand-write-80 nurand-read-50 nurand-read-80"
{
	echo "phase,/var/tmp/runs/ext4 iops,/var/tmp/runs/ext4 p99_us,/var/tmp/runs/ext4 saved,engine:/var/tmp/vol;index=bdb iops,engine:/var/tmp/vol;index=bdb p99_us,engine:/var/tmp/vol;index=bdb saved"
	i=0
	for p in $phases; do
		i=$((i + 1))
		echo "$p,$((50000 - i * 1000)).0,$((3 + i)).5,1.0,$((20000 - i * 100)).0,$((i * 3000)).0,1.2"
	done
} >"$E2E_TMP/cmp.csv"
gp dedisbench-compare.gp "$E2E_TMP/cmp.csv" "$E2E_TMP/lat.png" 2 latency "ext4|vol" -- 'show logscale' \
	'print sprintf("geometry %g %g %g %g %g %g", GPVAL_TERM_XMIN, GPVAL_TERM_XMAX, GPVAL_X_MIN, GPVAL_X_MAX, GPVAL_TERM_HCHAR / GPVAL_TERM_SCALE, GPVAL_TERM_XSIZE / GPVAL_TERM_SCALE)' \
	'ARG1 = "'"$E2E_TMP/cmp.csv"'"; ARG5 = "ext4|vol"; ARGC = 5' 'set terminal dumb size 220,60' 'set output' 'replot'
grep -q 'logscaling on *y' "$E2E_TMP/gp.out" || fail "compare-latency: the y axis is not logarithmic: $(head -3 "$E2E_TMP/gp.out")"
key=$(grep -E ' ext4 .* vol ' "$E2E_TMP/gp.out") || fail "compare-latency: the key does not name ext4 and vol: $(tail -5 "$E2E_TMP/gp.out")"
grep -qE 'p99_us|/var/tmp' "$E2E_TMP/gp.out" && fail "compare-latency: a raw column name or a path is drawn: $(grep -E 'p99_us|/var/tmp' "$E2E_TMP/gp.out")"
# the last phase's name hangs right of its tick at -30 degrees: it must end inside the picture
last=nurand-read-80
read -r xmin xmax dmin dmax hchar width < <(sed -n 's/^geometry //p' "$E2E_TMP/gp.out")
awk -v a="$xmin" -v b="$xmax" -v lo="$dmin" -v hi="$dmax" -v h="$hchar" -v w="$width" -v n=14 -v len=${#last} 'BEGIN {
	tick = a + (n - 1 - lo) / (hi - lo) * (b - a); end = tick + (len + 1) * h * cos(30 * 3.14159265 / 180)
	printf "# last label: tick at %.0f px, ends at %.0f px of %.0f\n", tick, end, w; exit !(end <= w) }' ||
	fail "compare-latency: the last phase's label is cut off: $(sed -n 's/^geometry //p' "$E2E_TMP/gp.out")"
# without titles (by hand, from the CSV) the columns' headers title the bars, as before
gp dedisbench-compare.gp "$E2E_TMP/cmp.csv" "$E2E_TMP/lat2.png" 2 latency

# --- distribution.png: the key in a margin, not over the plot ---
gp dedisbench-distribution.gp "$top_srcdir/tests/e2e/data/plots/dist-buckets.csv" "$E2E_TMP/d.png" -- 'show key'
grep -qE 'key is ON, position: .*[tblr]margin' "$E2E_TMP/gp.out" ||
	fail "distribution: the key is inside the plot, over the points: $(grep position "$E2E_TMP/gp.out")"
exit 0
