# dedisgen-compare.gp - two histograms of copies overlaid (dedisgen compare --plot): for each
# power-of-two bucket of copies, the share of all blocks in A (left half) and in B (right half).
# Usage: gnuplot -c dedisgen-compare.gp A.data B.data OUT.png [TITLE-A [TITLE-B [TITLE [CAPTION]]]]
# CAPTION (may hold newlines): under the picture, e.g. what differing sizes do to the buckets.
# DATA: two files in dedisgen-histogram.gp's format: whitespace-separated, '#' comments;
# columns copies_low copies_high share_of_blocks contents (shares 0 to 1).
if (ARGC < 3) { print "usage: gnuplot -c dedisgen-compare.gp A.data B.data OUT.png [TITLE-A [TITLE-B [TITLE]]]"; exit status 2 }
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG3

ymin = 1
nrec = 0
undefine STATS_*
stats ARG1 using ($3 > 0 ? $3 : 1) nooutput
if (exists("STATS_min") && STATS_min < ymin) { ymin = STATS_min }
nrec = nrec + (exists("STATS_records") ? STATS_records : 0)
undefine STATS_*
stats ARG2 using ($3 > 0 ? $3 : 1) nooutput
if (exists("STATS_min") && STATS_min < ymin) { ymin = STATS_min }
nrec = nrec + (exists("STATS_records") ? STATS_records : 0)
base = 10**floor(log10(ymin * 100) - 0.0001)
l2(x) = log(x) / log(2)
left(lo, hi) = 2**(l2(lo) + 0.08)
mid(lo, hi) = 2**((l2(lo) + l2(hi + 1)) / 2)
right(lo, hi) = 2**(l2(hi + 1) - 0.08)
pct(s) = (s > 0 ? 100 * s : NaN)

set title (ARGC >= 6 ? ARG6 : "copies per content")
set logscale x 2
set logscale y 10
set format x "%.0f"
set format y "%g"
set yrange [base:100]
set xlabel "copies of a content (power-of-two buckets)"
set ylabel "share of all blocks (%)"
set grid ytics
set key top right
set style fill solid 0.7 border -1
if (ARGC >= 7 && strlen(ARG7) > 0) {
	set bmargin 8
	set label 2 ARG7 at screen 0.02, 0.075 left font ",9"
}
if (nrec == 0) {
	set label 1 "no data" at graph 0.5, 0.5 center
	unset logscale
	set xrange [0:1]; set yrange [0:1]
	plot NaN notitle
	exit
}
plot ARG1 using (mid($1,$2)):(pct($3)):(left($1,$2)):(mid($1,$2)):(base):(pct($3)) \
		with boxxyerror lc rgb "#3070b0" title (ARGC >= 4 ? ARG4 : ARG1), \
     ARG2 using (mid($1,$2)):(pct($3)):(mid($1,$2)):(right($1,$2)):(base):(pct($3)) \
		with boxxyerror lc rgb "#c04020" title (ARGC >= 5 ? ARG5 : ARG2)
