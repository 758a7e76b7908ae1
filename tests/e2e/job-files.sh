#!/bin/bash
# Job files of several jobs: [global] + three jobs on files, two at once and one after a
# stonewall; each job's JSON entry (name, bytes asked, content verified, order of the groups by the
# recorded times), the summaries, --output-dir per job; a job refused at its start stops the file;
# one-job files keep today's JSON; the refusals before anything runs (file:line, exit 2).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
T=$E2E_TMP
J="$T/all.json"
DIST="$top_srcdir/distributions/archival.dist"
[ -f "$DIST" ] || fail "no $DIST (top_srcdir=$top_srcdir)"
truncate -s 2M "$T/a"
truncate -s 1M "$T/b"

cat >"$T/jobs.ini" <<EOF
; [global] applies to every job; a job's own key wins
[global]
procs = 2
block-size = 4KiB
dist = $DIST
seed = 11
verify = final
keep = yes

[fill-a]
target = $T/a
size = 2MiB

[fill-b]
target = $T/b
size = 1MiB

[check-a]
stonewall
target = $T/a
mode = read
populate = none
size = 2MiB
EOF
expect_ok --config "$T/jobs.ini" --json "$J" --output-dir "$T/res"
jcheck "$J" '.status == "ok" and .job_file != null and (.jobs | length) == 3' "job file JSON" '{status, n: (.jobs | length)}'
jcheck "$J" '[.jobs[] | .name] == ["fill-a", "fill-b", "check-a"] and [.jobs[] | .group] == [1, 1, 2]' \
	"names and groups" '[.jobs[] | {name, group}]'
jcheck "$J" '[.jobs[] | .status] == ["ok", "ok", "ok"]' "every job ok" '[.jobs[] | {name, status, error}]'
# bytes written are what each job asked, on its own target
jcheck "$J" ".jobs[0].writes.bytes == 2097152 and .jobs[0].config.target == \"$T/a\"" "fill-a's writes" '.jobs[0].writes'
jcheck "$J" ".jobs[1].writes.bytes == 1048576 and .jobs[1].config.target == \"$T/b\"" "fill-b's writes" '.jobs[1].writes'
jcheck "$J" '.jobs[2].writes.bytes == 0 and .jobs[2].reads.bytes == 2097152' "check-a's reads" '.jobs[2].totals'
# each target's content checked: the write jobs' final pass against the ledger, check-a's (a run
# of its own reading what fill-a left) against the layout of seed 11
jcheck "$J" '.jobs[0].verify.ok and .jobs[0].verify.final_checks == 512 and .jobs[0].verify.final_mismatches == 0' \
	"fill-a verified" '.jobs[0].verify'
jcheck "$J" '.jobs[1].verify.ok and .jobs[1].verify.final_checks == 256' "fill-b verified" '.jobs[1].verify'
jcheck "$J" '.jobs[2].verify.ok and .jobs[2].verify.final_checks == 512 and .jobs[2].verify.how.layout == 512' \
	"check-a verified fill-a's content by its layout" '.jobs[2].verify'
# the stonewalled job started after both jobs before it had ended (recorded times, not wall time)
jcheck "$J" '.jobs[2].started >= ([.jobs[0].ended, .jobs[1].ended] | max) and
	all(.jobs[]; .ended >= .started)' "check-a started before the jobs of group 1 ended" \
	'[.jobs[] | {name, started, ended}]'
# a summary per job, in the file's order; --output-dir DIR: DIR/NAME per job
[ "$(grep '^== job ' "$T/out" | tr '\n' '|')" = "== job fill-a (group 1 of 2) ==|== job fill-b (group 1 of 2) ==|== job check-a (group 2 of 2) ==|" ] ||
	fail "summaries: $(grep '^== job ' "$T/out")"
[ "$(grep -c '^verify (final): final pass' "$T/out")" -eq 3 ] || fail "not three summaries: $(head -c 600 "$T/out")"
for n in fill-a fill-b check-a; do
	[ -s "$T/res/$n/timeseries.csv" ] || fail "--output-dir: no $T/res/$n/timeseries.csv"
done

# A job refused when it starts (its distribution is not there) ends the file after its group:
# the job after the stonewall is not run, the exit status is the refusal's.
cat >"$T/stop.ini" <<EOF
[global]
size = 64KiB
[bad]
target = $T/b
dist = $T/no-such.dist
[good]
target = null
[later]
stonewall
target = null
EOF
run_bench --config "$T/stop.ini" --json "$T/stop.json" --quiet
[ "$RC" -eq 2 ] || fail "a refused job: exit $RC, want 2"
grep -q "^dedisbench: job bad: .*no-such.dist" "$T/err" || fail "the refusal does not name the job: $(cat "$T/err")"
jcheck "$T/stop.json" '.status == "failed" and [.jobs[] | .status] == ["refused", "ok", "not run"]' \
	"a refused job's file" '[.jobs[] | {name, status}]'
jcheck "$T/stop.json" '.jobs[0].error | test("no-such.dist")' "the refused job's error" '.jobs[0]'

# One job (with or without [global]) writes today's JSON, no jobs array.
printf '[global]\nsize = 64KiB\n[only]\ntarget = null\n' >"$T/one.ini"
expect_ok --config "$T/one.ini" --json "$T/one.json" --quiet
jcheck "$T/one.json" 'has("jobs") | not' "a one-job file wrote a jobs array"
jcheck "$T/one.json" '.totals.bytes == 65536 and .config.target == "null"' "the one job's JSON" .totals

# Refusals: one line naming file and line, exit 2, nothing run or written.
refuse() { # TEXT EXPECTED-MESSAGE
	printf "$1" >"$T/bad.ini"
	run_bench --config "$T/bad.ini" --json "$T/bad.json"
	[ "$RC" -eq 2 ] || fail "'$1': exit $RC, want 2"
	[ "$(wc -l <"$T/err")" -eq 1 ] || fail "'$1': not one line: $(cat "$T/err")"
	grep -qF "$2" "$T/err" || fail "'$1': said $(cat "$T/err"), want $2"
	[ ! -e "$T/bad.json" ] || fail "'$1': a JSON was written"
	[ ! -s "$T/out" ] || fail "'$1': something ran: $(head -c 300 "$T/out")"
}
mkdir "$T/fresh"
refuse "[global]\ntarget = $T/fresh\n[a]\n[b]\nstonewall\nbogus = 1\n" "config file $T/bad.ini:6: unknown key 'bogus' in [b]"
refuse "[a]\ntarget = null\n[b]\ntarget = null\n[a]\ntarget = null\n" "bad.ini:5: a second job named 'a' (the first is at line 1)"
refuse "[a]\ntarget = $T/fresh\n[b]\nprocs = 2\n" "bad.ini:3: job 'b' has no target"
refuse "[a]\ntarget = $T/fresh\n[b]\ntarget = $T/fresh/\n" "bad.ini:3: job 'b' would run beside job 'a' (line 1) on the same target"
[ -z "$(ls -A "$T/fresh")" ] || fail "a refused job file wrote into its target: $(ls "$T/fresh")"

# dedisbench suite runs one job (each of its phases would run them all)
run_bench suite --config "$T/jobs.ini" --output-dir "$T/suite"
[ "$RC" -eq 2 ] || fail "suite with a job file of several jobs: exit $RC, want 2"
grep -q "^dedisbench: config file $T/jobs.ini: 3 jobs: dedisbench suite runs one" "$T/err" ||
	fail "suite's refusal: $(head -c 400 "$T/err")"
[ ! -e "$T/suite" ] || fail "a refused suite made its --output-dir"

# dedisbench-mpi runs one job: a job file of several is refused, in its own words (where it is
# built and mpirun is found).
# Sanitizer builds: Open MPI keeps MPI_Init's allocations to exit (a leak report turns exit 2 into
# 1), so leak checking is off for the ranks, as tests/e2e/mpi-lib.sh has it.
if [ -x "$top_builddir/dedisbench-mpi" ] && command -v mpirun >/dev/null 2>&1; then
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	RC=0
	mpirun --oversubscribe --allow-run-as-root -n 2 "$top_builddir/dedisbench-mpi" --config "$T/jobs.ini" \
		>"$T/out" 2>"$T/err" || RC=$?
	[ "$RC" -eq 2 ] || fail "dedisbench-mpi on a job file of several jobs: exit $RC, want 2: $(head -c 400 "$T/err")"
	grep -q "^dedisbench-mpi: config file $T/jobs.ini: 3 jobs: dedisbench-mpi runs one" "$T/err" ||
		fail "dedisbench-mpi's refusal: $(head -c 400 "$T/err")"
else
	note "no dedisbench-mpi or mpirun: its refusal of a job file of several jobs is not checked"
fi
