# dedisgen-histogram.gp - the histogram of copies of a duplicate distribution (log-log,
# power-of-two buckets). Usage: gnuplot -c dedisgen-histogram.gp DATA OUT.png [TITLE]
# DATA columns: copies_low copies_high share_of_blocks contents (written by dedisgen --plot).
if (ARGC < 2) { print "usage: gnuplot -c dedisgen-histogram.gp DATA OUT.png [TITLE]"; exit status 2 }
set terminal pngcairo size 900,560 noenhanced font ",10"
set output ARG2
set title (ARGC >= 3 ? ARG3 : "copies per content")
set logscale xy 2
set format x "2^{%L}"
set format y "%g"
set xlabel "copies of a content (power-of-two buckets)"
set ylabel "share of all blocks"
set grid
set key off
set boxwidth 0.8 relative
set style fill solid 0.6
plot ARG1 using (sqrt($1*($2+1))):3:1:($2+1) with boxxyerror lc rgb "#3070b0" notitle, \
     ARG1 using (sqrt($1*($2+1))):3 with points pt 7 ps 0.6 lc rgb "#103050" notitle
