# dedisbench-latency.gp - the latency percentile curve of a run, per direction, on a "nines"
# axis (x = -log10(1 - p/100): 0 = p0, 1 = p90, 2 = p99, 3 = p99.9 ...), latency on a log scale.
# Usage: gnuplot -c dedisbench-latency.gp LATENCY-PERCENTILES.csv OUT.png [TITLE]
# DATA: CSV with a header line; columns percentile (0 to 99.9999), read_us, write_us; a direction
# without operations has 0 in its column and is left out.
if (ARGC < 2) { print "usage: gnuplot -c dedisbench-latency.gp LATENCY-PERCENTILES.csv OUT.png [TITLE]"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG2

dirs = ""
do for [d in "read write"] {
	undefine STATS_*
	stats ARG1 using (d eq "read" ? $2 : $3) skip 1 nooutput
	if (exists("STATS_max") && STATS_max > 0) { dirs = dirs . " " . d }
}
colour(d) = (d eq "read" ? 0x3070b0 : 0xc04020)
nines(p) = (p < 100 ? -log10(1 - p / 100.0) : NaN)

set title (ARGC >= 3 ? ARG3 : "dedisbench: latency percentiles")
set xlabel "percentile"
set ylabel "latency (us)"
set xtics ("0" 0, "90" 1, "99" 2, "99.9" 3, "99.99" 4, "99.999" 5, "99.9999" 6, "99.99999" 7)
set xrange [0:*]
set grid
set key top left
if (strlen(dirs) == 0) {
	set label 1 "no operations recorded" at graph 0.5, 0.5 center
	set xrange [0:6]; set yrange [0:1]
	plot NaN notitle
} else {
	set logscale y
	set format y "%g"
	# a flat curve (every percentile the same) still gets a range around it
	undefine STATS_*
	stats ARG1 using ($2 > 0 ? $2 : ($3 > 0 ? $3 : NaN)) skip 1 nooutput
	if (exists("STATS_min") && exists("STATS_max") && STATS_min == STATS_max) { set yrange [STATS_min / 2 : STATS_max * 2] }
	plot for [d in dirs] ARG1 skip 1 using (nines($1)):(column(d eq "read" ? 2 : 3) > 0 ? column(d eq "read" ? 2 : 3) : NaN) \
		with linespoints lw 2 pt 7 ps 0.5 lc rgb colour(d) title d
}
