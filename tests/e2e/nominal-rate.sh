#!/bin/bash
# Nominal (open-loop) load: -n 500 for 10 s issues the 5000 due (issued + missed), never ahead of
# the schedule; a mixed run with -nr100 -nw50 for 4 s has 400 reads and 200 writes due; what a
# target that fell behind left unissued by the end is counted (issued + missed = due, exactly);
# a stalled target shows up as latency counted from the schedule (operations, not microseconds).
# Counts, not speed: the suite passes on a loaded machine (bench/perf/nominal-pacing.sh: speed).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
J="$E2E_TMP/r.json"
mkdir "$E2E_TMP/t"
common=(--target "$E2E_TMP/t" --procs 2 --file-size 4MiB --block-size 4096 --sync none --quiet)

# 1. 500 ops/s in total for 10 s. What a loaded machine cannot change is asserted (the speed
# figures - the rate achieved, 0 missed, each second's spread - are bench/perf/nominal-pacing.sh's):
# what was due is exactly issued + missed, never more issued than due, and the run waited for its
# schedule rather than bursting.
start=$(date +%s.%N)
expect_ok "${common[@]}" -w --access uniform -n 500 --time 10s --json "$J" --output-dir "$E2E_TMP/o"
end=$(date +%s.%N)
wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')

[ "$(jget "$J" .rate.requested)" = 500 ] || fail "rate.requested is $(jget "$J" .rate.requested), want 500"
ops=$(jget "$J" .totals.ops) missed=$(jget "$J" .rate.missed)
[ $((ops + missed)) = 5000 ] || fail "$ops issued + $missed missed of the 5000 due in 10 s at 500/s"
[ "$ops" -gt 0 ] || fail "a 10 s nominal run issued nothing"
achieved=$(jget "$J" .rate.achieved)
secs=$(jget "$J" .totals.seconds)
jcheck "$J" '(.rate.achieved - .totals.ops / .totals.seconds | fabs) <= 1e-6 * .rate.achieved and .totals.iops == .rate.achieved' \
	"rate.achieved and totals.iops are the ops over the run's seconds" '{rate, totals: {ops: .totals.ops, seconds: .totals.seconds, iops: .totals.iops}}'
# A time-bounded nominal run lasts its scheduled span at least (a slower one, longer)...
fcmp "$secs" ">=" 10 || fail "totals.seconds $secs, want >= 10"
# ...and was paced, not a burst: it took its 10 s of wall time, and by the end of each row of the
# time series it had completed no more than was due by then (500 a second; the 0.5 s is the
# sampler's own lateness on a busy machine - a burst does the 5000 in the first row).
fcmp "$wall" ">=" 9.8 || fail "a 10 s nominal run took only $wall s of wall time"
ts="$E2E_TMP/o/timeseries.csv"
[ -f "$ts" ] || fail "no timeseries.csv in --output-dir"
[ "$(awk 'END { print NR }' "$ts")" -ge 10 ] || fail "timeseries.csv has fewer than 9 rows: $(cat "$ts")"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{ done += $col["read_ops"] + $col["write_ops"]
	  if (done > 500 * ($1 + 0.5) + 2) { print "by " $1 " s: " done " ops done, " 500 * $1 " due"; bad = 1 } }
	END { exit bad }' "$ts" >"$E2E_TMP/pace" || fail "ahead of the schedule: $(cat "$E2E_TMP/pace")"

# 2. Mixed with separate rates: -nr100 -nw50 for 4 s.
expect_ok "${common[@]}" -m --access uniform -nr100 -nw50 --time 4s --json "$J"
r=$(jget "$J" .reads.ops)
w=$(jget "$J" .writes.ops)
m=$(jget "$J" .rate.missed)
[ "$r" -le 400 ] && [ "$w" -le 200 ] && [ "$r" -gt 0 ] && [ "$w" -gt 0 ] ||
	fail "mixed -nr100 -nw50 4 s: $r reads (due 400), $w writes (due 200)"
[ $((r + w + m)) = 600 ] || fail "mixed -nr100 -nw50 4 s: $r reads + $w writes + $m missed, want the 600 due"
jcheck "$J" '.config.mode == "mixed"' "mixed run: config.mode"

# 3. The time bound holds when the target falls behind the rate: one worker cannot reach 10
# million ops/s (a write alone takes longer than 0.1 us), and the run still ends at its 1 s -
# what was due and not issued is the shortfall, not more run time (it once ran out the backlog,
# 10 s and more: then nearly nothing is missed). No fsync: one that takes over a second on a busy
# disk is a stalled target, which the launcher ends (run-failure.sh).
expect_ok --target "$E2E_TMP/t" --procs 1 --file-size 4MiB --sync none --quiet -w --access uniform -n 10000000 \
	--time 1s --json "$J"
behind_secs=$(jget "$J" .totals.seconds) behind_ops=$(jget "$J" .totals.ops)
[ "$behind_ops" -lt 10000000 ] || fail "one worker reached $behind_ops ops in 1 s: not behind, test proves nothing"
behind_missed=$(jget "$J" .rate.missed)
[ $((behind_ops + behind_missed)) = 10000000 ] ||
	fail "$behind_ops issued and $behind_missed missed of the 10000000 due in 1 s at 10000000/s"
[ "$behind_missed" -gt "$behind_ops" ] && fcmp "$behind_secs" "<" 10 ||
	fail "-n 10000000 --time 1s: $behind_ops issued, $behind_missed missed in $behind_secs s: it ran out the backlog"

# 3b. Interrupted while behind: what was due by the stop and not issued is counted too (it said
# 0 missed whatever the backlog). Started, seen writing (its time series has a row), then SIGINT.
"$DEDISBENCH" --target "$E2E_TMP/t" --procs 1 --file-size 4MiB --sync none --quiet -w --access uniform \
	-n 10000000 --time 60s --json "$J" --output-dir "$E2E_TMP/o3b" 2>"$E2E_TMP/err3b" &
pid=$!
for ((i = 0; i < 300; i++)); do
	[ "$(wc -l 2>/dev/null <"$E2E_TMP/o3b/timeseries.csv" || echo 0)" -ge 2 ] && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
# A nominal worker sleeps to its schedule on a timer slack of 1 ns: the default 50 us would count
# the timer's lateness in every latency (how much is bench/perf/nominal-pacing.sh's business).
worker=$(pgrep -P "$pid" | head -n 1)
slack=$(cat "/proc/$worker/timerslack_ns" 2>/dev/null || echo unreadable)
[ "$slack" = 1 ] || fail "a nominal worker (pid $worker) runs with a timer slack of $slack ns, want 1"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "an interrupted nominal run exited $rc: $(cat "$E2E_TMP/err3b")"
jcheck "$J" '.status == "interrupted" and .rate.missed > 0' "an interrupted run behind its rate" .rate
int_ops=$(jget "$J" .totals.ops) int_missed=$(jget "$J" .rate.missed) int_secs=$(jget "$J" .totals.seconds)
# issued + missed is what was due by the stop: 10^7 a second up to the worker's stop, which is
# after its last completion (the run's span) - at least that many, whatever the machine's load
# (the stop itself comes later than the last completion by the drain and the scheduler)
[ "$int_missed" -gt "$int_ops" ] || fail "interrupted: $int_ops issued and only $int_missed missed at 10000000/s"
fcmp $((int_ops + int_missed)) ">=" "$(awk -v s="$int_secs" 'BEGIN { printf "%.0f", s * 10000000 * 0.999 }')" ||
	fail "interrupted: $int_ops issued + $int_missed missed in $int_secs s at 10000000/s"

# 4. --size ends a nominal run before its --time: 1024 ops at 2000/s take about 0.51 s of a 20 s
# --time. The run stops there, and its rate is its ops over that span, not over the time it did
# not run (2000/s for 0.5 s of a 3 s --time once read as 341 ops/s achieved): the rate is ops over
# the seconds the run lasted, those seconds are short of the --time, and no faster than the rate.
expect_ok "${common[@]}" -w --access uniform -n 2000 --time 20s --size 4MiB --json "$J" --output-dir "$E2E_TMP/o4"
size_secs=$(jget "$J" .totals.seconds) size_ops=$(jget "$J" .totals.ops) size_rate=$(jget "$J" .rate.achieved)
[ "$size_ops" = 1024 ] || fail "-n 2000 --time 20s --size 4MiB: totals.ops $size_ops, want 1024"
fcmp "$size_secs" "<" 20 || fail "-n 2000 --time 20s --size 4MiB: totals.seconds $size_secs, but --size ended it"
fcmp "$size_rate" "<=" 2010 || fail "-n 2000 --size 4MiB: rate.achieved $size_rate is ahead of the schedule"
jcheck "$J" '(.rate.achieved - .totals.ops / .totals.seconds | fabs) <= 1e-6 * .rate.achieved and .totals.iops == .rate.achieved' \
	"-n 2000 --size 4MiB: the rate is the ops over the run's seconds" '{rate, totals}'
last_row=$(tail -n 1 "$E2E_TMP/o4/timeseries.csv" | cut -d, -f1)
fcmp "$size_secs" "<=" "$(awk -v r="$last_row" 'BEGIN { print r + 0.01 }')" || fail "totals.seconds $size_secs is past the time series' end, $last_row s"

# 5. The time series' rows add up to the run's operations, its last, partial second included:
# 1050 ops at 1000/s end about 0.05 s after the 1 s row, and that row once dropped them (1001 of
# 1050 counted) as "too short to say something".
expect_ok "${common[@]}" -w --access uniform -n 1000 --size 4200KiB --json "$J" --output-dir "$E2E_TMP/o5"
tail_ops=$(jget "$J" .totals.ops)
[ "$tail_ops" = 1050 ] || fail "-n 1000 --size 4200KiB: totals.ops $tail_ops, want 1050"
rows_ops=$(awk -F, 'NR > 1 { s += $2 + $6 } END { print s + 0 }' "$E2E_TMP/o5/timeseries.csv")
[ "$rows_ops" = "$tail_ops" ] ||
	fail "the time series counts $rows_ops of the run's $tail_ops operations: $(cat "$E2E_TMP/o5/timeseries.csv")"
rows_ops=$(awk -F, 'NR > 1 { s += $2 + $6 } END { print s + 0 }' "$E2E_TMP/o4/timeseries.csv")
[ "$rows_ops" = "$size_ops" ] ||
	fail "the time series counts $rows_ops of the run's $size_ops operations: $(cat "$E2E_TMP/o4/timeseries.csv")"

# 6. A stall across the end (the worker stopped at its 1500th write, 1.5 s into a 2 s run at
# 1000/s, and continued once the 2 s are over): the ops due after the stall began and before the
# end were never issued, and have no latency in any figure - they are counted, not hidden in a
# lower rate: 1500 issued + 500 missed = the 2000 due. The worker is continued once the run's
# time series has its 2 s row (the end has passed) and before the launcher ends a worker still in
# a call 1 s after the end (run-failure.sh).
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
head -c 8 /dev/zero >"$E2E_TMP/shim.state"
rm -rf "$E2E_TMP/t6"
mkdir "$E2E_TMP/t6"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
	DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=1500 DEDIS_FAULT_PATH="$E2E_TMP/t6/" DEDIS_FAULT_STATE="$E2E_TMP/shim.state" \
	DEDIS_FAULT_LOG="$E2E_TMP/shim.log" "$DEDISBENCH" --target "$E2E_TMP/t6" --procs 1 --file-size 4MiB --sync none \
	-w --access uniform -n 1000 --time 2s --json "$J" --output-dir "$E2E_TMP/o6" >"$E2E_TMP/out6" 2>&1 &
pid=$!
on_exit "kill -9 $pid 2>/dev/null"
for _ in $(seq 1 300); do
	[ -s "$E2E_TMP/shim.log" ] && break
	sleep 0.1
done
[ -s "$E2E_TMP/shim.log" ] || fail "the worker never reached its 1500th write: $(cat "$E2E_TMP/out6")"
for _ in $(seq 1 600); do # the time series' row at 2 s is written once the end has passed
	awk -F, 'NR > 1 && $1 >= 2 { found = 1 } END { exit !found }' "$E2E_TMP/o6/timeseries.csv" 2>/dev/null && break
	sleep 0.02
done
kill -CONT "$(awk '{ print $5 }' "$E2E_TMP/shim.log")"
wait "$pid" || fail "the stalled run exited $?: $(cat "$E2E_TMP/out6")"
stall_ops=$(jget "$J" .totals.ops) stall_missed=$(jget "$J" .rate.missed)
[ "$stall_ops" = 1500 ] && [ "$stall_missed" = 500 ] ||
	fail "a stall from the 1500th of 2000 due operations to past the end: $stall_ops issued, $stall_missed missed (want 1500 + 500)"
grep -q "^rate: 500 operations due before the end were never issued" "$E2E_TMP/out6" ||
	fail "the summary must say what was never issued: $(cat "$E2E_TMP/out6")"

# 7. A stalled target shows up as latency, counted from each operation's scheduled time, not its
# issue: the worker stopped at its 500th write (due at 0.5 s of a 3 s run at 1000/s) and
# continued once the time series has its 2 s row - then every operation due from 0.5 s to 1.5 s
# was issued after 2 s, and each of those 1000 has a latency of at least 0.5 s (from its issue,
# only the stalled write would). A count, and a lower bound a loaded machine only raises.
head -c 8 /dev/zero >"$E2E_TMP/shim7.state"
rm -rf "$E2E_TMP/t7"
mkdir "$E2E_TMP/t7"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
	DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=500 DEDIS_FAULT_PATH="$E2E_TMP/t7/" DEDIS_FAULT_STATE="$E2E_TMP/shim7.state" \
	DEDIS_FAULT_LOG="$E2E_TMP/shim7.log" "$DEDISBENCH" --target "$E2E_TMP/t7" --procs 1 --file-size 4MiB --sync none \
	-w --access uniform -n 1000 --time 3s --json "$J" --output-dir "$E2E_TMP/o7" --latency-log >"$E2E_TMP/out7" 2>&1 &
pid=$!
on_exit "kill -9 $pid 2>/dev/null"
for _ in $(seq 1 300); do
	[ -s "$E2E_TMP/shim7.log" ] && break
	sleep 0.1
done
wait_stopped "$(awk '{ print $5 }' "$E2E_TMP/shim7.log")" "$E2E_TMP/shim7.log" \
	"the worker never stopped at its 500th write: $(cat "$E2E_TMP/out7")"
for _ in $(seq 1 600); do # the time series' 2 s row: 1.5 s of stall at least
	awk -F, 'NR > 1 && $1 >= 2 { found = 1 } END { exit !found }' "$E2E_TMP/o7/timeseries.csv" 2>/dev/null && break
	sleep 0.02
done
kill -CONT "$(awk '{ print $5 }' "$E2E_TMP/shim7.log")"
wait "$pid" || fail "the stalled run exited $?: $(cat "$E2E_TMP/out7")"
slow=$(awk -F, 'NR > 1 && $4 >= 500000000 { n++ } END { print n + 0 }' "$E2E_TMP/o7/latency.0.csv")
[ "$slow" -ge 1000 ] || fail "a 1.5 s stall left $slow operations with 0.5 s of latency, want >= 1000 (latency from the schedule)"
jcheck "$J" '.totals.latency_us.max >= 1500000' "the stalled write's latency is the stall" .totals.latency_us
note "a stall from 0.5 s to past 2 s: $slow operations with 0.5 s of latency or more"

note "a stall across the end: $stall_ops issued, $stall_missed missed; behind the rate: $behind_ops issued, $behind_missed missed"
note "500 ops/s requested, $achieved achieved ($ops ops in $secs s); mixed: $r reads, $w writes"
