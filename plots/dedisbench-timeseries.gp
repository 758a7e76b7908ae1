# dedisbench-timeseries.gp - throughput (MiB/s) and p99 latency over time, per direction, from the
# 1 s time series dedisbench writes to --output-dir (timeseries.csv).
# Usage: gnuplot -c dedisbench-timeseries.gp TIMESERIES.csv OUT.png [TITLE]
# DATA: CSV with a header line; columns time_s, read_ops, read_mib_s, read_lat_mean_us,
# read_lat_p99_us, write_ops, write_mib_s, write_lat_mean_us, write_lat_p99_us, and (from
# dedisbench 0.2 on) host_cpu_busy_pct, host_cpu_iowait_pct, host_mem_used_mib: a third panel
# then shows the host's CPU and memory. A direction without any operation in the whole run is
# left out; a second without operations in a direction has no latency point.
if (ARGC < 2) { print "usage: gnuplot -c dedisbench-timeseries.gp TIMESERIES.csv OUT.png [TITLE]"; exit status 2 }
set datafile separator ","
set terminal pngcairo size 1000,700 noenhanced font ",10"
set output ARG2

# Which directions carry operations (the ops columns: 2 read, 6 write).
dirs = ""
do for [d in "read write"] {
	undefine STATS_*
	stats ARG1 using (d eq "read" ? $2 : $6) skip 1 nooutput
	if (exists("STATS_max") && STATS_max > 0) { dirs = dirs . " " . d }
}
col(d, k) = (d eq "read" ? k : k + 4)      # k: the read column; write's is 4 further

# How many seconds were sampled: none in a run under 0.1 s that completed no operation (an
# empty last, partial interval that short is dropped), one in a run of up to about a second.
# One sample drawn "with lines" is no line at all, so it gets a point, and an x axis from the
# run's start, 0, to its time (a range of one value is empty: gnuplot would warn and widen it
# around the point).
undefine STATS_*
stats ARG1 using 1 skip 1 nooutput
rows = exists("STATS_records") ? STATS_records : 0
wl = (rows == 1 ? "linespoints pt 7 ps 1" : "lines")
xr = (rows == 1 ? "[0:*]" : "[*:*]")
colour(d) = (d eq "read" ? 0x3070b0 : 0xc04020)
# Rows come a second apart; the last covers only what remained of the run when it ended (a few
# operations as the workers stop, once drawn as a final throughput drop that read as a stall and
# a p99 spike): when it covers under 0.9 s it is drawn apart, an open point not joined to the
# line, titled as partial. (A run of one row, all of it partial, keeps its one point.)
partial_t = NaN
if (rows >= 2) {
	stats ARG1 using ($0 == rows - 2 ? $1 : NaN) skip 1 nooutput
	before_last = STATS_max
	stats ARG1 using ($0 == rows - 1 ? $1 : NaN) skip 1 nooutput
	if (STATS_max - before_last < 0.9) { partial_t = STATS_max }
}
whole(v) = ($1 == partial_t ? NaN : v)
part(v) = ($1 == partial_t ? v : NaN)
# the partial points' curves are always there (gnuplot has no empty iteration), titled only when
# they hold the point
partial_title(name) = (partial_t == partial_t ? name." (last, partial second)" : "")

# The host columns, when the header names them (older time series have none).
host = strstrt(system(sprintf("head -1 '%s'", ARG1)), "host_cpu_busy_pct") > 0
set multiplot layout (host ? 3 : 2),1 title (ARGC >= 3 ? ARG3 : "dedisbench: throughput and p99 latency, per second")
set grid
set key below  # not over the last, partial point at the right edge
set xlabel "time (s)"
set lmargin 12
if (strlen(dirs) == 0) {
	set label 1 "no operations recorded" at graph 0.5, 0.5 center
	set xrange [0:1]; set yrange [0:1]
	set ylabel "MiB/s"
	plot NaN notitle
	set ylabel "p99 latency (us)"
	plot NaN notitle
} else {
	set xrange @xr
	set ylabel "throughput (MiB/s)"
	set yrange [0:*]
	plot for [d in dirs] ARG1 skip 1 using 1:(whole(column(col(d, 3)))) with @wl lw 2 lc rgb colour(d) title d, \
	     for [d in dirs] ARG1 skip 1 using 1:(part(column(col(d, 3)))) with points pt 6 ps 1.5 lc rgb colour(d) \
		title partial_title(d)
	set ylabel "p99 latency (us)"
	set yrange [*:*]
	set logscale y
	set format y "%g"
	# a flat p99 line (or a single sample) still gets a range around it
	lo = 1e300; hi = 0
	do for [d in dirs] {
		undefine STATS_*
		stats ARG1 using (column(col(d, 2)) > 0 && column(col(d, 5)) > 0 ? column(col(d, 5)) : NaN) skip 1 nooutput
		if (exists("STATS_min")) { lo = (STATS_min < lo ? STATS_min : lo); hi = (STATS_max > hi ? STATS_max : hi) }
	}
	# a flat line gets at least a decade around it, so the log axis has a labelled tic
	dec(x) = 10 ** floor(log10(x))
	if (hi == 0) { set yrange [0.1:10] } else { if (lo == hi) { \
		set yrange [(lo / 2 < dec(lo) ? lo / 2 : dec(lo)) : (hi * 2 > 10 * dec(hi) ? hi * 2 : 10 * dec(hi))] } }
	p99(d) = (column(col(d, 2)) > 0 && column(col(d, 5)) > 0 ? column(col(d, 5)) : NaN)
	plot for [d in dirs] ARG1 skip 1 using 1:(whole(p99(d))) with linespoints lw 2 pt 7 ps 0.5 lc rgb colour(d) \
		title d." p99", \
	     for [d in dirs] ARG1 skip 1 using 1:(part(p99(d))) with points pt 6 ps 1.5 lc rgb colour(d) \
		title partial_title(d." p99")
}
if (host) {
	unset logscale y
	set yrange [0:100]
	set ylabel "host CPU (%)"
	set y2label "host memory used (MiB)"
	set y2tics
	set y2range [0:*]
	set ytics nomirror
	set key inside bottom right
	if (rows == 0) {
		# nothing sampled: an empty panel that says so (a plot of no points is an error)
		set label 1 "no samples: the run was shorter than 0.1 s and did nothing" at graph 0.5, 0.5 center
		set xrange [0:1]
		set y2range [0:1]
		plot NaN notitle
	} else {
		unset label 1
		set xrange @xr
		plot ARG1 skip 1 using 1:10 with @wl lw 2 lc rgb 0x208020 title "CPU busy", \
		     ARG1 skip 1 using 1:11 with @wl lw 1 lc rgb 0xa0a020 title "CPU iowait", \
		     ARG1 skip 1 using 1:12 axes x1y2 with @wl lw 2 lc rgb 0x804080 title "memory used"
	}
}
unset multiplot
