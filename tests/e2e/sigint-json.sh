#!/bin/bash
# SIGINT / SIGTERM (and SIGHUP, unless ignored: nohup) during populate, during the run and during
# the final verify: dedisbench stops all workers early, exits 0 (as documented for an
# interrupted run) and still writes a complete, valid JSON with status "interrupted" and what was
# done so far; no file of the run is left
# (target files, an engine volume it formatted, temp files, the run lock). A phase is caught
# without racing it: the test shim stops a worker at its N-th read or write of the target
# (tests/fault/shim.c, DEDIS_FAULT_ACTION=stop), the signal is sent, the worker continued.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
export DEDIS_LOCK_DIR=$E2E_TMP/locks
mkdir "$DEDIS_LOCK_DIR"
BOUND=30
BG_PID=
# A run left behind by a failed check is killed on exit (only while it is still our child).
on_exit '[ -n "$BG_PID" ] && kill -KILL "$BG_PID" 2>/dev/null'

# interrupt SIG: start a 30 s nominal run, wait until its time series has a data row (the run
# is demonstrably under way), send SIG, and check how it ended.
interrupt() {
	local sig=$1 d="$E2E_TMP/$1" pid rc=0 i start end wall
	mkdir -p "$d/t"
	start=$(date +%s.%N)
	"$DEDISBENCH" --target "$d/t" --procs 2 --file-size 4MiB --access uniform -n 200 \
		--time ${BOUND}s --json "$d/r.json" --output-dir "$d/o" --quiet \
		>"$d/out" 2>"$d/err" &
	pid=$!
	BG_PID=$pid
	# Bounded poll (at most 15 s) for the first 1 s sample: header + one data row.
	for ((i = 0; i < 150; i++)); do
		if [ -f "$d/o/timeseries.csv" ] && [ "$(wc -l <"$d/o/timeseries.csv")" -ge 2 ]; then
			break
		fi
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ "$(wc -l <"$d/o/timeseries.csv" 2>/dev/null || echo 0)" -ge 2 ] ||
		fail "$sig: the run never produced a time-series row: $(cat "$d/err")"
	kill -0 "$pid" 2>/dev/null || fail "$sig: dedisbench ended before the signal: $(cat "$d/err")"
	[ ! -e "$d/r.json" ] || fail "$sig: the JSON exists before the run ended"

	kill -"$sig" "$pid"
	# Bounded wait: a run that ignores the signal is killed after 20 s and fails the test.
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		fail "$sig: dedisbench still running 20 s after the signal"
	fi
	wait "$pid" || rc=$?
	BG_PID=
	end=$(date +%s.%N)
	wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')

	[ "$rc" -eq 0 ] || fail "$sig: exit status $rc, want 0; stderr: $(cat "$d/err")"
	[ -s "$d/r.json" ] && jq -e . "$d/r.json" >/dev/null 2>&1 || fail "$sig: the JSON is empty or does not parse: $(head -c 400 "$d/r.json")"
	[ "$(jget "$d/r.json" .status)" = interrupted ] ||
		fail "$sig: status is '$(jget "$d/r.json" .status)', want 'interrupted'"
	local ops secs
	ops=$(jget "$d/r.json" .totals.ops)
	secs=$(jget "$d/r.json" .totals.seconds)
	[ "$ops" -gt 0 ] || fail "$sig: totals.ops is $ops"
	# Complete: the same sections as a finished run.
	for k in .config .totals.latency_us.p99 .writes.ops .rate.achieved .workers[1].ops .written.ratio \
		.access.hottest_10pct_share; do
		jq -e "$k | . != null" "$d/r.json" >/dev/null || fail "$sig: JSON lacks $k"
	done
	jcheck "$d/r.json" '.workers | length == 2' "$sig: want 2 workers in the JSON"
	jcheck "$d/r.json" '.totals.ops == ([.workers[].ops] | add)' "$sig: worker ops do not add up to totals.ops"
	fcmp "$secs" "<" 15 || fail "$sig: totals.seconds $secs: the run did not end early (bound ${BOUND} s)"
	fcmp "$wall" "<" 20 || fail "$sig: took $wall s of wall time (bound ${BOUND} s)"
	# The files it created are removed on the way out, as after a normal end.
	[ -z "$(ls -A "$d/t")" ] || fail "$sig: files left behind: $(ls -A "$d/t")"
	note "$sig after $(jget "$d/r.json" '.totals.seconds | floor') s: $ops ops, exit 0, status interrupted"
}

interrupt INT
interrupt TERM
# SIGHUP (the terminal or ssh session gone) too: it used to kill the run, leaving its files, its
# lock and no JSON.
interrupt HUP
# ... except under nohup (SIGHUP ignored when the run starts): the run goes on to its end.
d=$E2E_TMP/nohup
mkdir -p "$d/t"
(trap '' HUP && exec "$DEDISBENCH" --target "$d/t" --procs 2 --file-size 4MiB -n 200 --time 3s --json "$d/r.json" \
	--output-dir "$d/o" --quiet) >"$d/out" 2>"$d/err" &
pid=$!
BG_PID=$pid
for ((i = 0; i < 150; i++)); do
	[ -f "$d/o/timeseries.csv" ] && [ "$(wc -l <"$d/o/timeseries.csv")" -ge 2 ] && break
	sleep 0.1
done
kill -HUP "$pid"
rc=0
wait "$pid" || rc=$?
BG_PID=
[ "$rc" -eq 0 ] || fail "HUP under nohup: exit $rc: $(cat "$d/err")"
jcheck "$d/r.json" '.status == "ok" and .totals.seconds >= 2.9' "HUP under nohup: the run must go on" '{status, s: .totals.seconds}'

SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# interrupt_at PHASE SIG OP N FILTER ARGS...: the worker that makes the N-th OP (read, write) on
# FILTER is stopped there; then SIG goes to dedisbench and the worker is continued.
# usr1_pending PID: is SIGUSR1 (10, bit 9 of the masks) pending for the process or its thread?
usr1_pending() {
	local m
	for m in $(awk '/^(SigPnd|ShdPnd):/ { print $2 }' "/proc/$1/status" 2>/dev/null); do
		(((16#$m >> 9) & 1)) && return 0
	done
	return 1
}

interrupt_at() {
	local phase=$1 sig=$2 op=$3 n=$4 filter=$5 d="$E2E_TMP/$1-$2" pid wpid rc=0 i
	shift 5
	local outdir=(--output-dir "$d/o") # replay and backup (JOB_KEYS set) take none
	[ -z "${JOB_KEYS:-}" ] || outdir=()
	mkdir -p "$d"
	: >"$d/shim.log"
	head -c 8 /dev/zero >"$d/shim.state"
	env LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop DEDIS_FAULT_OP="$op" DEDIS_FAULT_NTH="$n" \
		DEDIS_FAULT_PATH="$filter" DEDIS_FAULT_STATE="$d/shim.state" DEDIS_FAULT_LOG="$d/shim.log" \
		"$DEDISBENCH" "$@" --json "$d/r.json" "${outdir[@]}" --quiet >"$d/out" 2>"$d/err" &
	pid=$!
	BG_PID=$pid
	for ((i = 0; i < 300; i++)); do # the shim logs, then stops the worker (at most 30 s)
		[ -s "$d/shim.log" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	[ -s "$d/shim.log" ] || fail "$phase $sig: the worker never reached its $op #$n: $(cat "$d/err")"
	wpid=$(awk '{ print $5 }' "$d/shim.log")
	for ((i = 0; i < 100; i++)); do
		[ "$(awk '{ print $3 }' "/proc/$wpid/stat" 2>/dev/null)" = T ] && break
		sleep 0.1
	done
	[ "$(awk '{ print $3 }' "/proc/$wpid/stat")" = T ] || fail "$phase $sig: worker $wpid is not stopped"
	kill -"$sig" "$pid"
	if [ "$wpid" != "$pid" ]; then
		# The launcher's stop (its shared flag, then SIGUSR1) must reach the stopped worker before
		# it runs on: continued first, a worker can finish its part (a verify of 4 MiB) before the
		# launcher has even handled the signal, and nothing would be left to interrupt.
		for ((i = 0; i < 200; i++)); do
			usr1_pending "$wpid" && break
			sleep 0.1
		done
		usr1_pending "$wpid" || fail "$phase $sig: the launcher never told worker $wpid to stop"
	fi
	kill -CONT "$wpid"
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
		fail "$phase $sig: dedisbench still running 20 s after the signal"
	fi
	wait "$pid" || rc=$?
	BG_PID=
	[ "$rc" -eq 0 ] || fail "$phase $sig: exit status $rc, want 0; stderr: $(cat "$d/err")"
	[ -s "$d/r.json" ] && jq -e . "$d/r.json" >/dev/null 2>&1 || fail "$phase $sig: the JSON is empty or does not parse"
	for k in ${JOB_KEYS:-.config .totals.ops .totals.latency_us.p99 .workers[1].ops .access.blocks}; do
		jq -e "$k | . != null" "$d/r.json" >/dev/null || fail "$phase $sig: JSON lacks $k"
	done
	jcheck "$d/r.json" '.status == "interrupted"' "$phase $sig: want status interrupted"
	[ -z "$(find "$d" -name '*.tmp.*')" ] || fail "$phase $sig: temp files left: $(find "$d" -name '*.tmp.*')"
	[ -z "$(ls -A "$DEDIS_LOCK_DIR")" ] || fail "$phase $sig: the run lock was left: $(ls -A "$DEDIS_LOCK_DIR")"
	R=$d/r.json T=$d/t
}

# During populate (a mixed run fills its files first): nothing ran, nothing is left.
for sig in INT TERM; do
	mkdir -p "$E2E_TMP/populate-$sig/t"
	interrupt_at populate $sig write 3 "$E2E_TMP/populate-$sig/t/" --target "$E2E_TMP/populate-$sig/t" \
		--procs 2 --file-size 8MiB --mode mixed --rate 200 --time ${BOUND}s
	jcheck "$R" '.totals.ops == 0' "populate $sig: no operation of the run may be counted"
	[ ! -e "$(dirname "$R")/o/timeseries.csv" ] || fail "populate $sig: the run had started"
	[ -z "$(ls -A "$T")" ] || fail "populate $sig: files left behind: $(ls -A "$T")"
	note "$sig during populate: exit 0, status interrupted, 0 ops, nothing left"
done
# ... of an engine volume the run formats: the volume goes too.
# (the chunk store's files: the format before it writes the volume's other files, as many times
# as its format version needs)
interrupt_at populate-engine INT write 3 "$E2E_TMP/vol/data." --target "engine:$E2E_TMP/vol" --procs 2 \
	--file-size 8MiB --mode mixed --rate 200 --time ${BOUND}s
[ ! -e "$E2E_TMP/vol" ] || fail "populate-engine INT: the volume the run formatted was left"
note "INT during an engine volume's populate: exit 0, status interrupted, the volume removed"

# While the launcher formats the volume, before any worker exists: the signal waits until the
# target is ready, then stops the run before it starts (it used to be ignored, or to end the
# process without a JSON, depending on how its parent left SIGINT).
interrupt_at format-engine TERM write 1 "$E2E_TMP/fvol/superblock" --target "engine:$E2E_TMP/fvol" --procs 2 \
	--file-size 8MiB --mode mixed --rate 200 --time ${BOUND}s
[ ! -e "$E2E_TMP/fvol" ] || fail "format-engine TERM: the volume the run formatted was left"
jcheck "$R" '.totals.ops == 0' "format-engine TERM: nothing was done" .totals
note "TERM while the engine volume is formatted: exit 0, status interrupted, 0 ops, the volume removed"

# replay and backup prepare their target themselves (no launcher): the same, for each.
awk -v n=2000 -v blocks=2000 -v seed=3 -f "$top_srcdir/examples/fiu-synth.awk" >"$E2E_TMP/t.trace"
JOB_KEYS=".config .totals.ops" interrupt_at format-replay TERM write 1 "$E2E_TMP/rvol/superblock" \
	replay "$E2E_TMP/t.trace" --target "engine:$E2E_TMP/rvol"
[ ! -e "$E2E_TMP/rvol" ] || fail "format-replay TERM: the volume the run formatted was left"
jcheck "$R" '.totals.ops == 0' "format-replay TERM: nothing was done" .totals
JOB_KEYS=".config .backup.per_generation" interrupt_at format-backup INT write 1 "$E2E_TMP/bvol/superblock" \
	--workload backup --generations 3 --file-size 8MiB --target "engine:$E2E_TMP/bvol"
[ ! -e "$E2E_TMP/bvol" ] || fail "format-backup INT: the volume the run formatted was left"
jcheck "$R" '.backup.per_generation == []' "format-backup INT: no generation was written" .backup.per_generation
JOB_KEYS=".config .totals.ops" interrupt_at format-replay-hup HUP write 1 "$E2E_TMP/hvol/superblock" \
	replay "$E2E_TMP/t.trace" --target "engine:$E2E_TMP/hvol"
[ ! -e "$E2E_TMP/hvol" ] || fail "format-replay HUP: the volume the run formatted was left"
note "TERM / INT while replay / backup format their engine volume: exit 0, status interrupted, 0 ops, the volume removed"

# During the final verify (a write run: its only reads are the final pass): every write is
# counted, the verification is incomplete - never "ok".
for sig in INT TERM; do
	mkdir -p "$E2E_TMP/verify-$sig/t"
	interrupt_at verify $sig read 2 "$E2E_TMP/verify-$sig/t/" --target "$E2E_TMP/verify-$sig/t" \
		--procs 2 --file-size 8MiB -w --verify final
	jcheck "$R" '.writes.ops == 4096 and .verify.final_checks < 4096' "verify $sig: all writes, part of the checks" \
		'{w: .writes.ops, v: .verify}'
	jcheck "$R" '.verify.complete == false and .verify.ok == false' "verify $sig: an interrupted verify is not ok"
	[ -z "$(ls -A "$T")" ] || fail "verify $sig: files left behind: $(ls -A "$T")"
	note "$sig during the final verify: exit 0, status interrupted, $(jget "$R" .verify.final_checks) of 4096 blocks checked, not ok"
done
