# dedisgen-histogram.gp - the histogram of copies of a duplicate distribution: the share of all
# blocks held by contents stored c times, c in power-of-two buckets, log-log.
# Usage: gnuplot -c dedisgen-histogram.gp DATA OUT.png [TITLE]
# DATA: whitespace-separated, '#' comments; columns copies_low copies_high share_of_blocks
# contents (written by dedisgen --plot; shares are fractions of all blocks, 0 to 1).
if (ARGC < 2) { print "usage: gnuplot -c dedisgen-histogram.gp DATA OUT.png [TITLE]"; exit status 2 }
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG2

undefine STATS_*
stats ARG1 using ($3 > 0 ? $3 : 1) nooutput
nrec = exists("STATS_records") ? STATS_records : 0
ymin = exists("STATS_min") ? STATS_min : 1
base = 10**floor(log10(ymin * 100) - 0.0001)
l2(x) = log(x) / log(2)
left(lo, hi) = 2**(l2(lo) + 0.06)
right(lo, hi) = 2**(l2(hi + 1) - 0.06)
mid(lo, hi) = 2**((l2(lo) + l2(hi + 1)) / 2)
pct(s) = (s > 0 ? 100 * s : NaN)

set title (ARGC >= 3 ? ARG3 : "copies per content")
set logscale x 2
set logscale y 10
set format x "%.0f"
set format y "%g"
set yrange [base:100]
set xlabel "copies of a content (power-of-two buckets)"
set ylabel "share of all blocks (%)"
set grid ytics
set key off
set style fill solid 0.7 border -1
if (nrec == 0) {
	set label 1 "no data" at graph 0.5, 0.5 center
	unset logscale
	set xrange [0:1]; set yrange [0:1]
	plot NaN notitle
	exit
}
plot ARG1 using (mid($1,$2)):(pct($3)):(left($1,$2)):(right($1,$2)):(base):(pct($3)) \
	with boxxyerror lc rgb "#3070b0" notitle
