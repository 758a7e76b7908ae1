#!/bin/bash
# dedisbench-mpi, 4 ranks x 1 worker on one machine: one global content space (the union of the
# ranks' files follows the distribution within 1 point, duplicates cross ranks), replicas that
# share nothing, totals that are the ranks' sums, a p99 merged from every sample, equal size
# quotas, the rate split, one time series, and bad input on one rank refused everywhere (a ledger
# shared by ranks, a report onto another rank's data included).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mpi-lib.sh"
mktmp /var/tmp
T=$E2E_TMP/t
DISTS="$top_srcdir/distributions"
targets() { rm -rf "$T" && mkdir -p "$T"/c0 "$T"/c1 "$T"/c2 "$T"/c3; }

# 1. Global content space: a sequential fill, 4 x 64 MiB, analysed as one dataset.
targets
mpi_ok -T "$T/c%r" -P 1 -w --access seq --file-size 64MiB --dist personalfiles --seed 21 --keep --quiet \
	--json "$E2E_TMP/fill.json" --output-dir "$E2E_TMP/lat" --latency-log
J=$E2E_TMP/fill.json
"$DEDISGEN" "$T" -b 4096 -q -o "$E2E_TMP/union.dist" || fail "dedisgen on the ranks' files exited $?"
rc=0
"$DEDISGEN" compare "$DISTS/personalfiles.dist" "$E2E_TMP/union.dist" --max-diff 1 --json >"$E2E_TMP/cmp.json" || rc=$?
[ "$rc" -eq 0 ] || fail "global: the union of the ranks' files is more than 1 point off: $(jq -c .diff "$E2E_TMP/cmp.json")"
note "global: union of 4 ranks within $(jget "$E2E_TMP/cmp.json" .diff.max_pp) pp of personalfiles"
union=$(jget "$E2E_TMP/cmp.json" .b.rows.distinct)
sum=0
for k in 0 1 2 3; do sum=$((sum + $(distinct "$T/c$k"))); done
[ "$sum" -gt $((union + union / 50)) ] ||
	fail "global: ranks share no content (distinct per rank summed $sum, union $union): duplicates must cross ranks"
note "global: distinct contents $union in the union, $sum counted rank by rank (duplicates cross ranks)"

jcheck "$J" '.mpi.ranks == 4 and (.mpi.per_rank | length) == 4 and ([.mpi.per_rank[].status] | unique) == ["ok"]'
for f in ops bytes write_ops read_ops; do
	jcheck "$J" "([.mpi.per_rank[].$f] | add) == (if \"$f\" == \"ops\" or \"$f\" == \"bytes\" then .totals.$f elif \"$f\" == \"write_ops\" then .writes.ops else .reads.ops end)" \
		"totals.$f is not the sum of the rank rows" '{totals, per_rank: [.mpi.per_rank[] | {ops, bytes, write_ops}]}'
done
jcheck "$J" '.totals.ops == 65536 and ([.mpi.per_rank[].ops] | unique) == [16384]' "one pass over every rank's target"
jcheck "$J" '(.workers | length) == 4' "the JSON lists every rank's workers"

# The merged p99 is the p99 of every operation of every rank: merge the four latency logs by hand
# (the histogram's bucket holding it is at most 1/64 wide: 1.6 %).
ls "$E2E_TMP"/lat/latency.{0,1,2,3}.csv >/dev/null || fail "a rank's latency log is missing: $(ls "$E2E_TMP/lat")"
exact=$(tail -q -n +2 "$E2E_TMP"/lat/latency.{0,1,2,3}.csv | cut -d, -f4 | sort -n |
	awk '{v[NR] = $1} END {k = int(NR * 0.99); if (k < NR * 0.99) k++; print v[k], NR}')
n=${exact#* }
exact=${exact% *}
[ "$n" -eq 65536 ] || fail "the latency logs hold $n samples, the run made 65536 operations"
p99=$(jget "$J" .totals.latency_us.p99)
awk -v j="$p99" -v e="$exact" 'BEGIN { j *= 1000; exit !(j >= e - 0.5 && j <= e * (1 + 1 / 64) + 1) }' ||
	fail "merged p99 $p99 us, the p99 of all 65536 samples is $exact ns"
note "merged p99 $p99 us = p99 of the 65536 samples merged by hand ($exact ns)"

# 2. Replicas: each rank its own contents, nothing shared between ranks.
targets
mpi_ok -T "$T/c%r" -P 1 -w --access seq --file-size 32MiB --dist personalfiles --seed 21 --keep --quiet \
	--rank-content replica --json "$E2E_TMP/replica.json"
sum=0
for k in 0 1 2 3; do
	d=$(distinct "$T/c$k")
	sum=$((sum + d))
	"$DEDISGEN" compare "$DISTS/personalfiles.dist" "$E2E_TMP/distinct.dist" --max-diff 2 >/dev/null ||
		fail "replica: rank $k's own files are more than 2 points off personalfiles"
done
union=$(distinct "$T")
[ "$union" -eq "$sum" ] || fail "replica: the ranks share contents (union $union distinct, ranks summed $sum)"
jcheck "$E2E_TMP/replica.json" '.mpi.rank_content == "replica"'
note "replica: each rank within 2 pp on its own, $union distinct contents, none shared"

# 3. A size bound is the whole run's, in equal quotas; a rate is the whole run's.
targets
mpi_ok -T "$T/c%r" -P 1 -w --file-size 8MiB --size 10MiB --json "$E2E_TMP/size.json"
jcheck "$E2E_TMP/size.json" '.totals.ops == 2560 and ([.mpi.per_rank[].ops] | unique) == [640]' "equal quotas of --size"
# The summary names the whole run's target, the pattern every rank was given (rank 0's own path
# once named it alone), the hosts, and each rank's own target (issue 39)
host=$(jget "$E2E_TMP/size.json" '.mpi.per_rank[0].host')
grep -q "^dedisbench: peak write, seq, .* on $T/c%r (" "$E2E_TMP/out" ||
	fail "the header does not name the target pattern: $(head -1 "$E2E_TMP/out")"
grep -qx "ranks: 4 on 1 host ($host), 4 workers in all; targets $T/c%r" "$E2E_TMP/out" ||
	fail "no ranks line naming the hosts and the pattern: $(grep '^ranks' "$E2E_TMP/out")"
for k in 0 1 2 3; do
	grep -qE "^  rank $k +$host .* on $T/c$k\$" "$E2E_TMP/out" || fail "rank $k's row does not name its target: $(grep "rank $k " "$E2E_TMP/out")"
done
jcheck "$E2E_TMP/size.json" ".config.target == \"$T/c%r\" and .mpi.target_pattern == \"$T/c%r\" and .mpi.hosts == [\"$host\"] and
	[.mpi.per_rank[].target] == [\"$T/c0\", \"$T/c1\", \"$T/c2\", \"$T/c3\"]"
targets
mpi_ok -T "$T/c%r" -P 1 -w --file-size 8MiB --time 3s --rate 400 --quiet --json "$E2E_TMP/rate.json" \
	--output-dir "$E2E_TMP/series"
ops=$(jget "$E2E_TMP/rate.json" .totals.ops) missed=$(jget "$E2E_TMP/rate.json" .rate.missed)
[ $((ops + missed)) = 1200 ] || fail "--rate 400 for 3 s over 4 ranks: $ops issued + $missed missed, want the 1200 due"
# each rank a quarter of the rate: never ahead of its 300 (a loaded machine may leave it behind)
jcheck "$E2E_TMP/rate.json" '[.mpi.per_rank[].ops] | all(. > 0 and . <= 300)' "each rank takes a quarter of the rate"
# one time series of the whole run at rank 0: its rows add up to every rank's operations (the
# last row takes what the ranks' final results add to their last snapshots)
rows=$(awk -F, 'NR > 1 {s += $2 + $6} END {print s + 0}' "$E2E_TMP/series/timeseries.csv")
[ "$rows" = "$ops" ] ||
	fail "the time series counts $rows of the run's $ops operations: $(cat "$E2E_TMP/series/timeseries.csv")"
# (each whole second counting that second's operations, every rank's cut at the tick, 400 +- 3 %
# at a steady 400/s, is a figure of a machine that keeps up: bench/perf/nominal-pacing.sh MPI=1)
note "rate 400 x 3 s over 4 ranks: $ops ops, $missed missed, the time series counts $rows"

# 4. Bad input: said once, by the rank that found it, exit 2, nothing written on any rank.
targets
rmdir "$T/c2"
run_mpi -T "$T/c%r" -P 1 -w --file-size 8MiB --quiet
[ "$RC" -eq 2 ] || fail "a target missing on rank 2: exit $RC, want 2"
[ "$(grep -c '^dedisbench-mpi:' "$E2E_TMP/err")" -eq 1 ] || fail "want one line: $(cat "$E2E_TMP/err")"
grep -q "^dedisbench-mpi: rank 2: .*$T/c2" "$E2E_TMP/err" || fail "the line must name rank 2 and its target: $(cat "$E2E_TMP/err")"
[ -z "$(find "$T" -type f)" ] || fail "bad input on rank 2, yet the other ranks wrote: $(find "$T" -type f)"
# One --ledger for every rank (no %r): each rank would take the others' entries for its own.
targets
run_mpi -T "$T/c%r" -P 1 -w --file-size 8MiB --quiet --seed 3 --ledger "$E2E_TMP/ledger"
[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisbench-mpi:' "$E2E_TMP/err")" -eq 1 ] &&
	grep -q -- "^dedisbench-mpi: --ledger $E2E_TMP/ledger: rank 1 keeps its ledger there too" "$E2E_TMP/err" ||
	fail "one --ledger for 4 ranks: exit $RC (want 2, one line): $(cat "$E2E_TMP/err")"
[ ! -e "$E2E_TMP/ledger" ] && [ -z "$(find "$T" -type f)" ] || fail "a shared --ledger refused, yet written: $(ls "$E2E_TMP")"
# ... the same file under two spellings (an MPMD job, each rank its own arguments) too
targets
RC=0
(cd "$E2E_TMP" && mpirun --oversubscribe --allow-run-as-root \
	-n 1 "$DEDISBENCH_MPI" -T "$T/c0" -P 1 -w --file-size 8MiB --quiet --seed 3 --ledger ledger : \
	-n 1 "$DEDISBENCH_MPI" -T "$T/c1" -P 1 -w --file-size 8MiB --quiet --seed 3 --ledger ./ledger) \
	>"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
[ "$RC" -eq 2 ] && grep -q -- "^dedisbench-mpi: --ledger ledger: rank 1 keeps its ledger there too" "$E2E_TMP/err" ||
	fail "--ledger ledger and ./ledger on two ranks: exit $RC (want 2): $(cat "$E2E_TMP/err")"
[ ! -e "$E2E_TMP/ledger" ] && [ -z "$(find "$T" -type f)" ] || fail "a shared --ledger refused, yet written: $(ls "$E2E_TMP")"
# A ledger refused on rank 2 only: the ledgers and output directories the others made go again.
echo "not a ledger" >"$E2E_TMP/ledger.2"
run_mpi -T "$T/c%r" -P 1 -w --file-size 8MiB --quiet --ledger "$E2E_TMP/ledger.%r" --output-dir "$E2E_TMP/od%r" --latency-log
[ "$RC" -eq 2 ] && grep -q "^dedisbench-mpi: rank 2: --ledger $E2E_TMP/ledger.2 exists" "$E2E_TMP/err" ||
	fail "rank 2's --ledger not a ledger: exit $RC (want 2): $(cat "$E2E_TMP/err")"
[ "$(cd "$E2E_TMP" && echo ledger.* od*)" = "ledger.2 od*" ] && [ -z "$(find "$T" -type f)" ] ||
	fail "bad input on rank 2, yet the other ranks left their ledgers or output directories: $(ls "$E2E_TMP")"
# Rank 0's report where another rank's worker file is: it would replace that rank's data.
run_mpi -T "$T/c%r" -P 1 -w --file-size 8MiB --quiet --json "$T/c1/dedisbench.0"
[ "$RC" -eq 2 ] && grep -q "^dedisbench-mpi: rank 1: --json $T/c1/dedisbench.0 is a worker file" "$E2E_TMP/err" &&
	[ -z "$(find "$T" -type f)" ] || fail "--json onto rank 1's worker file: exit $RC (want 2): $(cat "$E2E_TMP/err")"
run_mpi -T "$T/c%q" -P 1 -w --quiet
[ "$RC" -eq 2 ] && grep -q "'%q' is not a substitution" "$E2E_TMP/err" || fail "%q: exit $RC: $(cat "$E2E_TMP/err")"
run_mpi -T "$T/c%r" --rank-content nope --quiet
[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisbench-mpi:' "$E2E_TMP/err")" -eq 1 ] || fail "a bad value: exit $RC: $(cat "$E2E_TMP/err")"
run_mpi -T null --peer-timeout 10ms --quiet
[ "$RC" -eq 2 ] && grep -q "^dedisbench-mpi: --peer-timeout" "$E2E_TMP/err" || fail "--peer-timeout 10ms: exit $RC: $(cat "$E2E_TMP/err")"
run_bench --target null --rank-content replica
[ "$RC" -eq 2 ] && grep -q "applies to dedisbench-mpi" "$E2E_TMP/err" || fail "dedisbench took --rank-content: $RC"
note "bad input: one line naming the rank, exit 2, nothing written"
