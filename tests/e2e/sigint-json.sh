#!/bin/bash
# SIGINT / SIGTERM mid-run: dedisbench stops all workers early, exits 0 and still writes a
# complete, valid JSON with status "interrupted" and the operations done so far.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
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
	jq -e . "$d/r.json" >/dev/null 2>&1 || fail "$sig: the JSON does not parse: $(head -c 400 "$d/r.json")"
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
