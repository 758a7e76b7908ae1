#!/bin/bash
# suite-compare.sh - dedisbench suite on a plain directory and on the engine: the paper's 14
# phases, the nominal ones at 50 % and 80 % of their peak; dedisbench compare of the two prints
# the side-by-side table from the phases' JSON and renders the plots; bad input exits 2.
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
command -v gnuplot >/dev/null 2>&1 || skip "gnuplot is missing (apt-get install gnuplot-nox)"
phases="seq-fill seq-read uniform-write uniform-read nurand-write nurand-read uniform-write-50 uniform-write-80
uniform-read-50 uniform-read-80 nurand-write-50 nurand-write-80 nurand-read-50 nurand-read-80"
mkdir "$E2E_TMP/d"
for sys in dir engine; do
	target=$E2E_TMP/d
	[ $sys = engine ] && target=engine:$E2E_TMP/vol
	expect_ok suite --target "$target" --procs 2 --file-size 4MiB --time 1s --seed 1 --output-dir "$E2E_TMP/$sys"
	i=0
	for p in $phases; do
		i=$((i + 1))
		J=$(printf '%s/%02d-%s.json' "$E2E_TMP/$sys" $i "$p")
		[ -f "$J" ] || fail "$sys: no $J"
		jcheck "$J" '.status == "ok"'
		# the table shows the phase's own figures
		grep -qE "^$p .* $(printf '%.1f' "$(jget "$J" .totals.iops)") " "$E2E_TMP/out" ||
			fail "$sys: the table has no row '$p' with $(jget "$J" .totals.iops) IOPS: $(grep "^$p " "$E2E_TMP/out")"
		case $p in
		*-50 | *-80)
			peak=$(printf '%s/%02d-%s.json' "$E2E_TMP/$sys" $(( $(echo "$phases" | tr ' \n' '\n\n' | grep -nx "${p%-*}" | cut -d: -f1) )) "${p%-*}")
			share=0.${p##*-}
			want=$(awk -v i="$(jget "$peak" .totals.iops)" -v s="$share" 'BEGIN { printf "%.0f", i * s }')
			jcheck "$J" ".rate.requested == $want" "$sys $p: requested rate is not $share of $peak's IOPS ($want)" .rate
			;;
		*) jcheck "$J" '.rate == null' ;;
		esac
		# each phase on its own empty target: its space is measured (a directory's from statfs, which
		# other writers on this shared file system move either way: no figure asserted)
		jcheck "$J" ".space.logical_bytes > 0 and .space.source == \"$([ $sys = dir ] && echo statfs || echo engine)\""
	done
done
[ -z "$(ls -A "$E2E_TMP/d")" ] || fail "the suite left files in the target: $(ls "$E2E_TMP/d")"
# the engine dedups: every phase's efficiency is 1 (its counters are the ideal)
for J in "$E2E_TMP"/engine/*.json; do jcheck "$J" '.space.efficiency == 1'; done

expect_ok compare "$E2E_TMP/dir" "$E2E_TMP/engine" --output-dir "$E2E_TMP/cmp" --plot
for p in $phases; do
	grep -qE "^$p +$E2E_TMP/d " "$E2E_TMP/out" || fail "compare: no '$p' row for the directory"
done
[ "$(grep -c " engine:$E2E_TMP/vol " "$E2E_TMP/out")" -eq 14 ] || fail "compare: want 14 engine rows: $(cat "$E2E_TMP/out")"
[ "$(wc -l <"$E2E_TMP/cmp/compare.csv")" -eq 15 ] || fail "compare.csv: want a header and 14 rows"
head -1 "$E2E_TMP/cmp/compare.csv" | grep -q "^phase,$E2E_TMP/d iops,$E2E_TMP/d p99_us,$E2E_TMP/d saved,engine:" ||
	fail "compare.csv header: $(head -1 "$E2E_TMP/cmp/compare.csv")"
for w in iops latency saved; do
	[ "$(head -c 4 "$E2E_TMP/cmp/compare-$w.png" | od -An -c | tr -d ' ')" = "211PNG" ] || fail "compare-$w.png is not a PNG"
done

# the engine's saved column is a ratio (N.NN:1); one target given twice is told apart (#2) in the
# table and the CSV; a nominal run is not matched with the peak run of the same workload
grep -qE " engine:$E2E_TMP/vol .* [0-9]+\.[0-9]{2}:1 " "$E2E_TMP/out" || fail "compare: no N.NN:1 saved figure: $(head -3 "$E2E_TMP/out")"
P=$(printf '%s/%02d-%s.json' "$E2E_TMP/dir" 3 uniform-write) N=$(printf '%s/%02d-%s.json' "$E2E_TMP/dir" 7 uniform-write-50)
expect_ok compare "$P" "$P" "$N" --output-dir "$E2E_TMP/cmp2"
head -1 "$E2E_TMP/cmp2/compare.csv" | grep -qF "$E2E_TMP/d (#2) iops" || fail "compare of one target twice: $(head -1 "$E2E_TMP/cmp2/compare.csv")"
grep -qE "^uniform write @[0-9]+/s +$E2E_TMP/d \(#3\) " "$E2E_TMP/out" || fail "compare: the nominal run was not its own row: $(cat "$E2E_TMP/out")"
[ "$(wc -l <"$E2E_TMP/cmp2/compare.csv")" -eq 3 ] || fail "compare.csv: want a header, the peak row and the nominal row"

# SIGINT stops a suite as it stops a run: exit 0, saying where it stopped, the phases before it kept
"$DEDISBENCH" suite --target "$E2E_TMP/d" --procs 1 --file-size 1MiB --time 2s --seed 1 -q \
	--output-dir "$E2E_TMP/int" >"$E2E_TMP/int.out" 2>"$E2E_TMP/int.err" &
pid=$!
for ((i = 0; i < 200; i++)); do
	[ -s "$E2E_TMP/int/01-seq-fill/timeseries.csv" ] && break
	sleep 0.1
done
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 0 ] || fail "a suite stopped by SIGINT exited $rc, want 0: $(cat "$E2E_TMP/int.err")"
grep -q "interrupted before phase 02-seq-read" "$E2E_TMP/int.err" || fail "no word of where it stopped: $(cat "$E2E_TMP/int.err")"
[ -s "$E2E_TMP/int/01-seq-fill.json" ] || fail "the interrupted suite lost phase 01's results"

# bad input: one line, exit 2
bad() { # WHAT-STDERR-SAYS ARGS...
	local want=$1
	shift
	run_bench "$@"
	[ "$RC" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -qF -- "$want" "$E2E_TMP/err" ||
		fail "dedisbench $*: exit $RC, stderr: $(cat "$E2E_TMP/err")"
}
bad "give --output-dir DIR" suite --target "$E2E_TMP/d"
bad "--mode does not apply to suite" suite --target "$E2E_TMP/d" --mode read --output-dir "$E2E_TMP/x"
bad "holds an earlier suite's results" suite --target "$E2E_TMP/d" --output-dir "$E2E_TMP/dir"
# a target no phase could use is refused before anything is made (not phase 01's failure, exit 1)
bad "suite: target $E2E_TMP/none/x: No such file or directory" suite --target "$E2E_TMP/none/x" --output-dir "$E2E_TMP/s2"
[ ! -e "$E2E_TMP/s2" ] || fail "a refused suite created its --output-dir"
expect_ok --target "engine:$E2E_TMP/kv" --procs 1 --file-size 1MiB --quiet --keep
bad "is inside the engine volume" suite --target "engine:$E2E_TMP/kv" --output-dir "$E2E_TMP/kv/x"
[ ! -e "$E2E_TMP/kv/x" ] || fail "a refused suite created its --output-dir inside the engine volume"
bad "compare: $E2E_TMP/none: No such file" compare "$E2E_TMP/none"
echo '{"tool": "fio"}' >"$E2E_TMP/fio.json"
bad "not a dedisbench --json result" compare "$E2E_TMP/fio.json"
bad "give the results" compare --plot
# an --output-dir that is a file: refused before anything runs (the suite ran, then exit 1)
printf 'keep\n' >"$E2E_TMP/afile"
bad "suite: --output-dir $E2E_TMP/afile exists and is not a directory" suite --target "$E2E_TMP/d" --procs 1 \
	--file-size 1MiB --time 1s --output-dir "$E2E_TMP/afile"
bad "compare: --output-dir $E2E_TMP/afile exists and is not a directory" compare "$E2E_TMP/dir/01-seq-fill.json" \
	--output-dir "$E2E_TMP/afile"
[ "$(cat "$E2E_TMP/afile")" = keep ] || fail "a refused --output-dir file was changed"
exit 0
