# dedisbench-access.gp - accesses per block for the run's access pattern (the shape of
# Figure 5 in the DEDISbench paper): how many blocks received exactly N accesses, log-log.
# Usage: gnuplot -c dedisbench-access.gp ACCESS-FREQUENCY.csv OUT.png [TITLE]
# DATA: CSV with a header line; columns accesses, blocks. The row for 0 accesses (blocks never
# touched) cannot sit on a log axis: its count is printed in the corner instead.
if (ARGC < 2) { print "usage: gnuplot -c dedisbench-access.gp ACCESS-FREQUENCY.csv OUT.png [TITLE]"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG2

undefine STATS_*
stats ARG1 using ($1 == 0 ? $2 : 0) skip 1 nooutput
never = exists("STATS_sum") ? STATS_sum : 0
undefine STATS_*
stats ARG1 using ($1 > 0 ? $2 : 0) skip 1 nooutput
touched = exists("STATS_sum") ? STATS_sum : 0

set title (ARGC >= 3 ? ARG3 : "dedisbench: accesses per block")
set xlabel "accesses to a block"
set ylabel "blocks"
set logscale xy 10
set format x "%g"
set format y "%g"
set grid
set key off
set label 1 sprintf("%.0f blocks accessed, %.0f never", touched, never) at graph 0.98, 0.95 right
if (touched == 0) {
	unset logscale
	set xrange [0:1]; set yrange [0:1]
	plot NaN notitle
} else {
	set xrange [0.7:*]
	set yrange [0.7:*]
	plot ARG1 skip 1 using ($1 > 0 ? $1 : NaN):($2 > 0 ? $2 : NaN) with points pt 7 ps 0.7 lc rgb "#3070b0"
}
