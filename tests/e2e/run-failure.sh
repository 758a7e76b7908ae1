#!/bin/bash
# A failure during a run stops every worker, reports what completed and exits 1 with a complete
# JSON: a worker killed mid-run, standard output gone or full, a target stalled past the time
# limit (the run ends within a second of it anyway), and (root) a device failing.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp

# 1. A worker killed with SIGKILL mid-run.
"$DEDISBENCH" --target null --procs 2 --file-size 16MiB --time 30s --rate 2000 \
	--output-dir "$E2E_TMP/out1" --json "$E2E_TMP/killed.json" >"$E2E_TMP/k.out" 2>"$E2E_TMP/k.err" &
pid=$!
on_exit "kill -9 $pid 2>/dev/null"
for _ in $(seq 1 300); do # the run has started once the time series has a data row
	[ -f "$E2E_TMP/out1/timeseries.csv" ] && [ "$(wc -l <"$E2E_TMP/out1/timeseries.csv")" -ge 2 ] && break
	sleep 0.1
done
[ "$(wc -l <"$E2E_TMP/out1/timeseries.csv")" -ge 2 ] || fail "the run never started"
victim=$(pgrep -P "$pid" | head -1)
[ -n "$victim" ] || fail "no worker process found under $pid"
kill -9 "$victim"
rc=0
wait "$pid" || rc=$?
[ "$rc" -eq 1 ] || fail "a killed worker must end the run with exit 1, got $rc"
grep -q "killed by signal 9" "$E2E_TMP/k.err" || fail "stderr does not say the worker was killed: $(cat "$E2E_TMP/k.err")"
jcheck "$E2E_TMP/killed.json" '.status == "failed"'
jcheck "$E2E_TMP/killed.json" '.error | test("killed by signal 9")'
jcheck "$E2E_TMP/killed.json" '.totals.ops > 0' "what completed is reported"
jcheck "$E2E_TMP/killed.json" '.totals.seconds < 25' "the other worker stopped early"
note "killed worker: exit 1, status failed, $(jget "$E2E_TMP/killed.json" .totals.ops) ops reported"

# 2. Standard output that cannot take the summary: a pipe whose reader has gone (| head, a pager
# quit; here closed before the run starts, SIGPIPE at its default) and a full device. The run
# was killed by SIGPIPE at the summary, leaving its worker files, its run lock and no JSON, and
# into /dev/full it exited 0. Now: one line, exit 1, the target cleaned up, the JSON written.
mkdir "$E2E_TMP/t"
for sink in pipe full; do
	rc=0
	if [ $sink = pipe ]; then
		perl -e 'pipe(R, W) or die; close R; open(STDOUT, ">&W") or die; $SIG{PIPE} = "DEFAULT"; exec @ARGV' \
			"$DEDISBENCH" --target "$E2E_TMP/t" --procs 40 --file-size 256KiB --json "$E2E_TMP/$sink.json" \
			2>"$E2E_TMP/err" || rc=$?
		want="Broken pipe"
	else
		"$DEDISBENCH" --target "$E2E_TMP/t" --procs 40 --file-size 256KiB --json "$E2E_TMP/$sink.json" \
			>/dev/full 2>"$E2E_TMP/err" || rc=$?
		want="No space left on device"
	fi
	[ "$rc" -eq 1 ] || fail "standard output $sink: exit $rc, want 1: $(cat "$E2E_TMP/err")"
	[ "$(cat "$E2E_TMP/err")" = "dedisbench: standard output: $want" ] || fail "standard output $sink: stderr $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/t")" ] || fail "standard output $sink: the run left $(ls -A "$E2E_TMP/t" | head -3)"
	jcheck "$E2E_TMP/$sink.json" '.status == "ok" and .totals.ops == 2560'
	run_bench --target "$E2E_TMP/t" --procs 1 --file-size 256KiB -q # its run lock was released
	[ "$RC" -eq 0 ] || fail "the run after standard output $sink: exit $RC: $(cat "$E2E_TMP/err")"
done

# 3. A target that stalls past the time limit: the run ends anyway. The fault shim holds one
# worker inside a write (of a file; of the engine's chunk store, in process) until a release file
# that is never made during the run, far beyond --time 2s: the run ends while the write is still
# held (the stall has no end of its own: that the run ended is the check, the 30 s poll only a
# bound for a build that hangs), the held worker ended, exit 1, the JSON says why and checks
# nothing of the target; an engine volume is then clean, as after a power loss.
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
stall() { # stall NAME TARGET PATH-FILTER NTH ARGS...: run, held at the NTH write under PATH-FILTER
	local name=$1 target=$2 filter=$3 nth=$4 pid held i
	shift 4
	head -c 8 /dev/zero >"$E2E_TMP/$name.state"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=hold \
		DEDIS_FAULT_OP=write DEDIS_FAULT_NTH="$nth" DEDIS_FAULT_PATH="$filter" DEDIS_FAULT_STATE="$E2E_TMP/$name.state" \
		DEDIS_FAULT_RELEASE="$E2E_TMP/$name.go" DEDIS_FAULT_LOG="$E2E_TMP/$name.log" \
		"$DEDISBENCH" --target "$target" --procs 2 --file-size 4MiB -w --access uniform --time 2s -q \
		--json "$E2E_TMP/$name.json" "$@" >"$E2E_TMP/$name.out" 2>"$E2E_TMP/$name.err" &
	pid=$!
	on_exit "touch '$E2E_TMP/$name.go'; kill -9 $pid 2>/dev/null"
	for ((i = 0; i < 300; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$pid" 2>/dev/null && fail "$name: a run held inside a write did not end at its --time 2s: $(cat "$E2E_TMP/$name.log" 2>/dev/null)"
	rc=0
	wait "$pid" || rc=$?
	[ ! -e "$E2E_TMP/$name.go" ] && grep -q " HOLD " "$E2E_TMP/$name.log" ||
		fail "$name: no write was held: $(cat "$E2E_TMP/$name.err")"
	held=$(awk '{ print $5 }' "$E2E_TMP/$name.log")
	! kill -0 "$held" 2>/dev/null || fail "$name: the held worker $held outlived its run"
	[ "$rc" -eq 1 ] || fail "$name: a run ended past its time limit exited $rc, want 1: $(cat "$E2E_TMP/$name.err")"
	# (an engine worker waiting on a lock the held one took is held too: "and 1 more")
	grep -Eq "^dedisbench: worker [01]( \(and 1 more\))? was still inside a call to the target 1 s after the time limit: ended; what the target holds was not checked$" \
		"$E2E_TMP/$name.err" || fail "$name: stderr does not say which worker overran and what was not checked: $(cat "$E2E_TMP/$name.err")"
	jcheck "$E2E_TMP/$name.json" '.status == "failed" and (.error | test("after the time limit: ended; what the target holds was not checked")) and .totals.ops > 0 and .engine == null' \
		"$name: the JSON of a run ended past its time limit" '{status, error, totals: .totals.ops, engine}'
}
mkdir "$E2E_TMP/st"
stall file "$E2E_TMP/st" "$E2E_TMP/st/dedisbench.0" 50 --populate none
[ -z "$(ls -A "$E2E_TMP/st")" ] || fail "file: the stalled run left $(ls -A "$E2E_TMP/st")"
stall engine "engine:$E2E_TMP/vol" "$E2E_TMP/vol/data" 100 --keep
[ -x "$DEDISENGINE" ] || fail "no dedisengine at $DEDISENGINE"
"$DEDISENGINE" fsck "$E2E_TMP/vol" >"$E2E_TMP/fsck.out" 2>&1 ||
	fail "engine: the volume of a worker ended inside a write is not clean: $(cat "$E2E_TMP/fsck.out")"
note "a target stalled past --time 2s: ended, exit 1: $(cat "$E2E_TMP/engine.err")"

# 4. A device that fails under the run: a 64 MiB loop device over a sparse file on an 8 MiB
# tmpfs runs out of space beneath dedisbench (no device-mapper needed).
[ "$(id -u)" -eq 0 ] || skip "device failure case needs root (tmpfs mount, loop device)"
command -v losetup >/dev/null || skip "no losetup"
mkdir "$E2E_TMP/tiny"
mount -t tmpfs -o size=8m tmpfs "$E2E_TMP/tiny" 2>/dev/null || skip "cannot mount a tmpfs"
on_exit "umount $E2E_TMP/tiny"
truncate -s 64M "$E2E_TMP/tiny/backing"
loop=$(losetup -f --show "$E2E_TMP/tiny/backing" 2>/dev/null) || skip "no loop device available"
on_exit "losetup -d $loop"
run_bench --target "$loop" --procs 2 --sync direct --access seq --size 48MiB --force --json "$E2E_TMP/fail.json"
[ "$RC" -eq 1 ] || fail "a device error must end the run with exit 1, got $RC: $(cat "$E2E_TMP/err")"
[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "expected one error line: $(cat "$E2E_TMP/err")"
grep -Eq "worker [01]: write at offset [0-9]+ of $loop: (No space left on device|Input/output error)" "$E2E_TMP/err" ||
	fail "stderr does not say which worker, offset, device and error: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/fail.json" '.status == "failed"'
jcheck "$E2E_TMP/fail.json" '[.workers[] | select(.error)] | length >= 1' "the failing worker carries its error"
jcheck "$E2E_TMP/fail.json" '.totals.ops > 0 and .totals.ops < 12288' "the completed writes are reported, and the run stopped"
note "device failure: exit 1, $(jget "$E2E_TMP/fail.json" .totals.ops) ops reported: $(cat "$E2E_TMP/err")"
