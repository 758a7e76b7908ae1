# dedisbench-compare.gp - dedisbench compare --plot: per phase, one bar per system (the first the
# baseline): IOPS, p99 latency, or space saved (logical / observed bytes).
# Usage: gnuplot -c dedisbench-compare.gp COMPARE.csv OUT.png N iops|latency|saved
# DATA: CSV with a header line; column 1 the phase, then per system i (0..N-1) columns 2+3i IOPS,
# 3+3i p99 latency (us), 4+3i saved (0: not measured), headed by the system's name.
if (ARGC < 4) { print "usage: gnuplot -c dedisbench-compare.gp COMPARE.csv OUT.png N iops|latency|saved"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 1000,600 noenhanced font ",10"
set output ARG2
n = int(ARG3)
k = (ARG4 eq "iops" ? 0 : (ARG4 eq "latency" ? 1 : 2))
set title (k == 0 ? "throughput per phase" : (k == 1 ? "p99 latency per phase" : "space saved per phase"))
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set ylabel (k == 0 ? "IOPS" : (k == 1 ? "p99 latency (us)" : "logical / observed bytes"))
set yrange [0:*]
set grid ytics
set key below  # not over the bars: at top right it covered the tallest
# saved 0: not measured (the phase read, or its target reports no space): no bar, not a 0:1 one;
# where no phase of any system was measured, a chart that says so (gnuplot has no bar to draw)
measured = 1
if (k == 2) {
	measured = 0
	do for [i = 0:n - 1] {
		stats ARG1 using (column(4 + 3 * i)) nooutput
		if (STATS_max > 0) { measured = 1 }
	}
}
bar_height(c) = (k == 2 && measured && column(c) == 0) ? NaN : column(c)
if (!measured) {
	set yrange [0:1]
	set label 1 "space was not measured in any phase" at graph 0.5, 0.5 center
}
plot for [i = 0:n - 1] ARG1 using (bar_height(2 + 3 * i + k)):xtic(1) title columnheader(2 + 3 * i + k)
