# dedisengine-stat.gp - a dedisengine volume at a glance: space (logical data mapped, physical
# blocks in use, blocks the LBN map references, index size) and the write-path case mix.
# Usage: gnuplot -c dedisengine-stat.gp STAT.dat OUT.png [TITLE]
# DATA: "KEY VALUE" lines ('#' comments allowed), the numbers of `dedisengine stat --json` under
# the same names. Used: block_size, mapped_blocks, physical_blocks, referenced_blocks,
# index_bytes, unique_writes, duplicate_writes, inplace_rewrites, overwrites, dedup_ratio
# (overwrites are the unique or duplicate writes that landed on an already mapped block);
# other keys are ignored, a missing one counts as 0.
if (ARGC < 2) { print "usage: gnuplot -c dedisengine-stat.gp STAT.dat OUT.png [TITLE]"; exit status 2 }
set terminal pngcairo size 1000,520 noenhanced font ",10"
set output ARG2

keys = "block_size mapped_blocks physical_blocks referenced_blocks index_bytes unique_writes duplicate_writes inplace_rewrites overwrites dedup_ratio"
getv(k) = sprintf('undefine STATS_*; stats ARG1 using (strcol(1) eq "%s" ? column(2) : 0) nooutput; v_%s = exists("STATS_sum") ? STATS_sum : 0', k, k)
do for [k in keys] { eval getv(k) }

# Space in MiB, or GiB past 10 GiB.
bytes_max = v_mapped_blocks * v_block_size
bytes_max = (v_index_bytes > bytes_max ? v_index_bytes : bytes_max)
unit = (bytes_max > 10 * 2**30 ? 2**30 : 2**20)
uname = (unit == 2**30 ? "GiB" : "MiB")
$space << EOD
EOD
set print $space
print sprintf('"mapped" %.6g', v_mapped_blocks * v_block_size / unit)
print sprintf('"physical" %.6g', v_physical_blocks * v_block_size / unit)
print sprintf('"referenced" %.6g', v_referenced_blocks * v_block_size / unit)
print sprintf('"index" %.6g', v_index_bytes / unit)
unset print
$cases << EOD
EOD
set print $cases
print sprintf('"unique" %.0f', v_unique_writes)
print sprintf('"duplicate" %.0f', v_duplicate_writes)
print sprintf('"in-place" %.0f', v_inplace_rewrites)
print sprintf('"overwrites" %.0f', v_overwrites)
unset print

set multiplot layout 1,2 title (ARGC >= 3 ? ARG3 : "dedisengine stat") . sprintf(" (dedup ratio %.3f)", v_dedup_ratio)
set style fill solid 0.7 border -1
set boxwidth 0.6
set grid ytics
set key off
set xrange [-0.6:3.6]
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0

set title "space: logical mapped, physical in use, referenced, index"
set ylabel uname
if (bytes_max == 0 && v_physical_blocks == 0) { set yrange [0:1] }
plot $space using 0:2:xtic(1) with boxes lc rgb "#3070b0", \
     $space using 0:2:(sprintf("%.4g", $2)) with labels offset 0,0.7

set title "write path: logical writes by case"
set ylabel "writes"
set yrange [0:*]
if (v_unique_writes + v_duplicate_writes + v_inplace_rewrites + v_overwrites == 0) { set yrange [0:1] }
plot $cases using 0:2:xtic(1) with boxes lc rgb "#c04020", \
     $cases using 0:2:(sprintf("%.0f", $2)) with labels offset 0,0.7
unset multiplot
