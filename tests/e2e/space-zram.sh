#!/bin/bash
# space-zram.sh - observed space on a zram device: the run's figure is mm_stat's mem_used_total
# (what zram holds in memory) within 5 % of mm_stat read by hand after the run.
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root for a zram device"
[ -w /sys/class/zram-control/hot_add ] || skip "no zram (module not loaded, no /sys/class/zram-control)"
mktmp
N=$(cat /sys/class/zram-control/hot_add 2>/dev/null) || skip "cannot add a zram device"
on_exit "echo $N >/sys/class/zram-control/hot_remove"
echo 128M >"/sys/block/zram$N/disksize" || skip "cannot size /dev/zram$N (zram here refuses a disksize)"
[ -b "/dev/zram$N" ] || skip "/dev/zram$N did not appear"
J=$E2E_TMP/run.json
expect_ok -T "/dev/zram$N" -P 2 -F 32 --compress 4 --seed 7 -j "$J"
read -r orig compr used _ <"/sys/block/zram$N/mm_stat"
grep -q "^space (zram, /dev/zram$N .*): logical 64.0 MiB, .*: efficiency [0-9.]*$" "$E2E_TMP/out" ||
	fail "no space line in the summary: $(grep -i space "$E2E_TMP/out")"
jcheck "$J" '.space.source == "zram" and .space.logical_bytes == 67108864 and .space.before_bytes == 0'
observed=$(jget "$J" .space.observed_bytes)
note "observed $observed bytes; mm_stat by hand: orig $orig compr $compr mem_used_total $used"
within "$observed" "$used" 5 || fail "observed $observed is not within 5 % of mm_stat's mem_used_total $used"
within "$(jget "$J" .space.mm_stat.compr_data_size)" "$compr" 5 || fail "compr_data_size differs from mm_stat"
[ "$orig" -eq 67108864 ] || fail "zram holds $orig bytes of data, the run wrote 64 MiB"
# zram compresses (about 4:1 here) but does not deduplicate: it keeps more than the ideal
fcmp "$used" "<" 33554432 || fail "zram used $used bytes for 64 MiB compressible 4:1"

# backup generations on the reset device: each generation's observed cumulative ratio is the
# logical bytes so far over mm_stat's mem_used_total; after the last, within 5 % of mm_stat by hand
echo 1 >"/sys/block/zram$N/reset" && echo 256M >"/sys/block/zram$N/disksize" || fail "cannot reset /dev/zram$N"
expect_ok -T "/dev/zram$N" --workload backup --procs 2 --generations 3 --file-size 16MiB --seed 7 -j "$J"
read -r orig compr used _ <"/sys/block/zram$N/mm_stat"
observed=$(jget "$J" '.backup.per_generation[2].observed_ratio')
want=$(awk -v u="$used" 'BEGIN { print 3 * 2 * 16 * 1048576 / u }')
note "backup on zram: observed cumulative ratio $observed; by hand $want (mem_used_total $used)"
within "$observed" "$want" 5 || fail "observed ratio $observed is not within 5 % of $want from mm_stat"
# about 2:1 compressible and not deduplicated: zram's ratio stays near 2 while the expected grows
fcmp "$observed" "<" 2.5 && fcmp "$(jget "$J" '.backup.per_generation[2].expected_ratio')" ">" 2.8 ||
	fail "zram should compress about 2:1 and deduplicate nothing"
exit 0
