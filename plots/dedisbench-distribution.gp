# dedisbench-distribution.gp - the duplicate distribution a run wrote next to its target:
# block-weighted shares in power-of-two buckets of copies (a content stored c times falls in
# bucket floor(log2 c), weighted by its c blocks), log scale.
# Usage: gnuplot -c dedisbench-distribution.gp DIST-BUCKETS.csv OUT.png [TITLE]
# DATA: CSV with a header line; columns copies_low, copies_high, written_share, target_share
# (shares are fractions of all blocks, 0 to 1).
if (ARGC < 2) { print "usage: gnuplot -c dedisbench-distribution.gp DIST-BUCKETS.csv OUT.png [TITLE]"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG2

# Bars start at the power of ten below the smallest non-zero share.
undefine STATS_*
stats ARG1 using ($3 > 0 ? $3 : 1) : ($4 > 0 ? $4 : 1) skip 1 nooutput
nrec = exists("STATS_records") ? STATS_records : 0
ymin = exists("STATS_min_x") ? (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) : 1
base = 10**floor(log10(ymin * 100) - 0.0001)

# Each bucket [low, high] spans [low, high+1) on a log2 axis: target on its left half,
# written on its right half, with a small gap between buckets.
l2(x) = log(x) / log(2)
left(lo, hi) = 2**(l2(lo) + 0.08)
mid(lo, hi) = 2**((l2(lo) + l2(hi + 1)) / 2)
right(lo, hi) = 2**(l2(hi + 1) - 0.08)
pct(s) = (s > 0 ? 100 * s : NaN)

set title (ARGC >= 3 ? ARG3 : "dedisbench: distribution written vs target")
set xlabel "copies of a content (power-of-two buckets)"
set ylabel "share of all blocks (%)"
set logscale x 2
set logscale y 10
set format x "%.0f"
set format y "%g"
set yrange [base:100]
set grid ytics
set key top right
set style fill solid 0.7 border -1
if (nrec == 0) {
	set label 1 "no data" at graph 0.5, 0.5 center
	unset logscale
	set xrange [0:1]; set yrange [0:1]
	plot NaN notitle
	exit
}
plot ARG1 skip 1 using (mid($1,$2)):(pct($4)):(left($1,$2)):(mid($1,$2)):(base):(pct($4)) \
		with boxxyerror lc rgb "#909090" title "target", \
     ARG1 skip 1 using (mid($1,$2)):(pct($3)):(mid($1,$2)):(right($1,$2)):(base):(pct($3)) \
		with boxxyerror lc rgb "#c04020" title "written"
