#!/bin/bash
# A failure during a run stops every worker, reports what completed and exits 1 with a complete
# JSON: a worker killed mid-run, standard output gone or full, and (root) a device failing.
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

# 3. A device that fails under the run: a 64 MiB loop device over a sparse file on an 8 MiB
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
