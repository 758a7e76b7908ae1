# dedisbench-compare.gp - dedisbench compare --plot: per phase, one bar per system (the first the
# baseline): IOPS, p99 latency (log axis), or space saved (logical / observed bytes).
# Usage: gnuplot -c dedisbench-compare.gp COMPARE.csv OUT.png N iops|latency|saved [TITLES]
# DATA: CSV with a header line; column 1 the phase, then per system i (0..N-1) columns 2+3i IOPS,
# 3+3i p99 latency (us), 4+3i saved (0: not measured), headed by the system's name.
# TITLES: the systems' names in the key, '|'-separated (dedisbench compare gives the inputs' own
# names); without it, the columns' headers.
if (ARGC < 4) { print "usage: gnuplot -c dedisbench-compare.gp COMPARE.csv OUT.png N iops|latency|saved [TITLES]"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 1000,600 noenhanced font ",10"
set output ARG2
n = int(ARG3)
k = (ARG4 eq "iops" ? 0 : (ARG4 eq "latency" ? 1 : 2))
titles = (ARGC >= 5 ? ARG5 : "")
# the i-th '|'-separated name of s (0-based)
sep(s) = strstrt(s, "|")
nth(s, i) = (i == 0 ? (sep(s) ? s[1:sep(s) - 1] : s) : (sep(s) ? nth(s[sep(s) + 1:], i - 1) : ""))
set title (k == 0 ? "throughput per phase" : (k == 1 ? "p99 latency per phase" : "space saved per phase"))
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics rotate by -30 nomirror
set ylabel (k == 0 ? "IOPS" : (k == 1 ? "p99 latency (us, log scale)" : "logical / observed bytes"))
set yrange [0:*]
set grid ytics
set key below  # not over the bars: at top right it covered the tallest
set key autotitle columnheader  # the header line is never a phase, whatever titles the bars
# The phases' names hang right of their ticks: the right margin takes the last one's width
# (cos 30 of its characters), or its end was cut off.
stats ARG1 using (last_len = strlen(strcol(1)), 0) nooutput
set rmargin (last_len * 0.87 + 2 > 3 ? int(last_len * 0.87 + 2) : 3)
# Which systems have any figure (> 0) in the chart's column, and the range of those figures: a
# system with none still gets its (empty) place, at the axis' foot - gnuplot refuses a
# histogram column without a valid point.
array has[n]
lo = 1e300; hi = 0
do for [i = 0:n - 1] {
	# (a figure of 0 counts as 1e300 for the least and 0 for the most: no NaN, which gnuplot warns of)
	stats ARG1 using (column(2 + 3 * i + k) > 0 ? column(2 + 3 * i + k) : 1e300) nooutput
	lo = (STATS_min < lo ? STATS_min : lo)
	stats ARG1 using (column(2 + 3 * i + k) > 0 ? column(2 + 3 * i + k) : 0) nooutput
	has[i + 1] = (STATS_max > 0)
	hi = (STATS_max > hi ? STATS_max : hi)
}
measured = (hi > 0)
# p99 spans microseconds (peak) to tens of milliseconds (a paced phase falling behind): on a
# linear axis the peak phases' bars read as zero. The axis runs over whole decades around them.
foot = 0
if (k == 1 && measured) {
	set logscale y
	foot = 10 ** floor(log10(lo))
	set yrange [foot : 10 ** ceil(log10(hi) + (hi == 10 ** floor(log10(hi)) ? 1 : 0))]
}
# saved 0: not measured (the phase read, or its target reports no space): no bar, not a 0:1 one;
# where no phase of any system was measured, a chart that says so (gnuplot has no bar to draw)
bar_height(c, i) = (k == 0 ? column(c) : (column(c) > 0 ? column(c) : (has[i + 1] ? NaN : foot)))
if (k == 2 && !measured) {
	set yrange [0:1]
	set label 1 "space was not measured in any phase" at graph 0.5, 0.5 center
}
plot for [i = 0:n - 1] ARG1 using (bar_height(2 + 3 * i + k, i)):xtic(1) \
	title (titles ne "" ? nth(titles, i) : columnheader(2 + 3 * i + k))
