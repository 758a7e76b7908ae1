# dedisbench-distribution.gp - what a run left on its target (live) against what it should hold
# (the distribution as scaled to the run), block-weighted shares in power-of-two buckets of
# copies (a content stored c times falls in bucket floor(log2 c), weighted by its c blocks), log
# scale; the write stream and the dataset at its own size as separate, thinner series.
# Usage: gnuplot -c dedisbench-distribution.gp DIST-BUCKETS.csv OUT.png [TITLE [CAPTION]]
# DATA: CSV with a header line; columns copies_low, copies_high, live_share, scaled_share,
# written_share, dataset_share (fractions of all blocks, 0 to 1; live_share and written_share
# empty when the run kept no ledger or wrote nothing). CAPTION: what scaling did (may hold newlines).
if (ARGC < 2) { print "usage: gnuplot -c dedisbench-distribution.gp DIST-BUCKETS.csv OUT.png [TITLE [CAPTION]]"; exit status 2 }
set datafile separator ","
set datafile missing ""
set terminal pngcairo size 960,620 noenhanced font ",10"
set output ARG2

# Bars start at the power of ten below the smallest non-zero share of any series.
pos(c) = (valid(c) && column(c) > 0) ? column(c) : 1   # c: a column number
undefine STATS_*
stats ARG1 using (pos(3)) : (pos(4)) skip 1 nooutput
nrec = exists("STATS_records") ? STATS_records : 0
ymin = exists("STATS_min_x") ? (STATS_min_x < STATS_min_y ? STATS_min_x : STATS_min_y) : 1
undefine STATS_*
stats ARG1 using (pos(5)) : (pos(6)) skip 1 nooutput
if (exists("STATS_min_x") && STATS_min_x < ymin) { ymin = STATS_min_x }
if (exists("STATS_min_y") && STATS_min_y < ymin) { ymin = STATS_min_y }
base = 10**floor(log10(ymin * 100) - 0.0001)

# Each bucket [low, high] spans [low, high+1) on a log2 axis: the scaled target on its left half,
# live on its right half, the write stream and the dataset as marks at its middle.
l2(x) = log(x) / log(2)
left(lo, hi) = 2**(l2(lo) + 0.08)
mid(lo, hi) = 2**((l2(lo) + l2(hi + 1)) / 2)
right(lo, hi) = 2**(l2(hi + 1) - 0.08)
pct(c) = (valid(c) && column(c) > 0 ? 100 * column(c) : NaN)   # c: a column number

set title (ARGC >= 3 ? ARG3 : "dedisbench: live data vs the distribution scaled to the run")
set xlabel "copies of a content (power-of-two buckets)"
set ylabel "share of all blocks (%)"
set logscale x 2
set logscale y 10
set format x "%.0f"
set format y "%g"
set yrange [base:100]
set grid ytics
# outside the plot, above it: inside it covered the points (kernel-trees has contents of ~1 M copies,
# at the right end, and the small buckets sit at the top left)
set key above maxcols 2
set style fill solid 0.7 border -1
if (ARGC >= 4 && strlen(ARG4) > 0) {
	set bmargin 8
	set label 2 ARG4 at screen 0.02, 0.075 left font ",9"
}
if (nrec == 0) {
	set label 1 "no data" at graph 0.5, 0.5 center
	unset logscale
	set xrange [0:1]; set yrange [0:1]
	plot NaN notitle
	exit
}
plot ARG1 skip 1 using (mid($1,$2)):(pct(4)):(left($1,$2)):(mid($1,$2)):(base):(pct(4)) \
		with boxxyerror lc rgb "#909090" title "target: the distribution scaled to this run", \
     ARG1 skip 1 using (mid($1,$2)):(pct(3)):(mid($1,$2)):(right($1,$2)):(base):(pct(3)) \
		with boxxyerror lc rgb "#c04020" title "live: what the target holds at the end", \
     ARG1 skip 1 using (mid($1,$2)):(pct(5)) with points pt 2 ps 1.4 lc rgb "#000000" \
		title "write stream: every write of the run, overwrites included", \
     ARG1 skip 1 using (mid($1,$2)):(pct(6)) with points pt 6 ps 1.4 lc rgb "#3070b0" \
		title "dataset at its own size (before scaling)"
