#!/bin/bash
# space-engine-cmd.sh - observed space from the engine's counters (equal to what dedisengine stat
# reads from the volume) and from --space-cmd (its byte count before and after the run); the
# host's CPU and memory in the JSON and the time series; a --space-cmd that fails is bad input
# (before the run) or a run failure the JSON says (after); a run that writes nothing reports no
# space.
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp

# engine: the counters, exactly
J=$E2E_TMP/eng.json
expect_ok -T "engine:$E2E_TMP/vol" -P 2 -F 16 --seed 3 --keep -j "$J" -o "$E2E_TMP/o"
grep -q '^space (engine, engine volume .*): logical 32.0 MiB, .*: efficiency 1.00$' "$E2E_TMP/out" ||
	fail "no space line for the engine: $(grep -i space "$E2E_TMP/out")"
"$DEDISENGINE" stat "$E2E_TMP/vol" --json >"$E2E_TMP/stat.json" || fail "dedisengine stat failed"
physical=$(jget "$E2E_TMP/stat.json" .physical_bytes)
jcheck "$J" ".space.source == \"engine\" and .space.observed_bytes == $physical and .space.expected_bytes == .engine.expected.physical_bytes"
jcheck "$J" ".space.logical_bytes == $(jget "$E2E_TMP/stat.json" .mapped_blocks) * 4096"
jcheck "$J" '.space.efficiency == 1'
# the host, sampled each second: the JSON summary and three columns of the time series
jcheck "$J" '.host.mem_total_bytes > 0 and .host.mem_used_bytes_max >= .host.mem_used_bytes_start and .host.cpu_busy_pct >= 0 and .host.cpu_busy_pct <= 100'
head -1 "$E2E_TMP/o/timeseries.csv" | grep -q ',host_cpu_busy_pct,host_cpu_iowait_pct,host_mem_used_mib$' ||
	fail "time series header: $(head -1 "$E2E_TMP/o/timeseries.csv")"
grep -q '^host: CPU [0-9.]* % busy' "$E2E_TMP/out" || fail "no host line in the summary"

# --space-cmd: the difference of the command's two readings; here du of the target directory,
# whose files take exactly their preallocated size on this file system
mkdir "$E2E_TMP/d"
before=$(du -sB1 "$E2E_TMP/d" | cut -f1)
J=$E2E_TMP/cmd.json
expect_ok -T "$E2E_TMP/d" -P 2 -F 4 --seed 3 --keep -j "$J" --space-cmd "du -sB1 '$E2E_TMP/d'"
after=$(du -sB1 "$E2E_TMP/d" | cut -f1)
jcheck "$J" ".space.source == \"command\" and .space.before_bytes == $before and .space.after_bytes == $after and .space.observed_bytes == $after - $before"
jcheck "$J" '.space.basis == "dedup" and .space.expected_bytes == .physical.distinct_blocks * 4096'

# a read run that leaves nothing written has no space to judge: no space figures (not efficiency 0)
mkdir "$E2E_TMP/empty"
J=$E2E_TMP/none.json
expect_ok -T "$E2E_TMP/empty" -P 1 -F 1 -r --populate none --time 0.2s -j "$J"
jcheck "$J" '.space == null' "nothing written: no space object"
! grep -q '^space' "$E2E_TMP/out" || fail "nothing written, yet a space line: $(grep '^space' "$E2E_TMP/out")"

# On a tmpfs an engine volume's chunk store is allocated at format (dedisengine's --preallocate
# auto), unless a --space-cmd measures the run: a volume it formats is sparse, so the command
# sees the blocks as they are written (allocated, it would see the whole store at once).
if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
	S=$(mktemp -d /dev/shm/dedis-e2e-space.XXXXXX)
	store_kib() { du -skc "$1"/data.* | tail -1 | cut -f1; } # the chunk store's allocated KiB
	expect_ok -T "engine:$S/pre" -P 1 -F 16 --seed 3 --keep -j "$E2E_TMP/pre.json"
	expect_ok -T "engine:$S/cmd" -P 1 -F 16 --seed 3 --keep -j "$E2E_TMP/scmd.json" --space-cmd "du -sB1 '$S'"
	pre=$(store_kib "$S/pre") cmd=$(store_kib "$S/cmd")
	rm -rf "$S"
	# the store is 17/16 of the 16 MiB volume; the run wrote fewer distinct blocks than that
	[ "$pre" -ge $((17 * 1024)) ] || fail "engine volume on tmpfs: chunk store not preallocated ($pre KiB)"
	[ "$cmd" -lt $((16 * 1024)) ] || fail "engine volume under --space-cmd: chunk store allocated ($cmd KiB), not sparse"
	# what du saw grew with the blocks written: less than the volume plus 2 MiB of metadata (a
	# preallocated store alone is 17 MiB)
	jcheck "$E2E_TMP/scmd.json" '.space.source == "command" and .space.observed_bytes < .space.logical_bytes + 2 * 1048576'
	note "engine volume on tmpfs: chunk store $pre KiB preallocated; $cmd KiB written under --space-cmd"
fi

# bad input: one line, exit 2, nothing written
bad() { # bad WHAT-STDERR-MUST-SAY ARGS...
	local want=$1
	shift
	rm -rf "$E2E_TMP/b"
	mkdir "$E2E_TMP/b"
	run_bench -T "$E2E_TMP/b" -P 1 -F 1 -j "$E2E_TMP/b.json" "$@"
	[ "$RC" -eq 2 ] || fail "dedisbench $* exited $RC, want 2"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "dedisbench $*: stderr is not one line: $(cat "$E2E_TMP/err")"
	grep -q -- "$want" "$E2E_TMP/err" || fail "dedisbench $*: stderr does not say '$want': $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/b")" ] || fail "dedisbench $* wrote $(ls -A "$E2E_TMP/b")"
	[ ! -e "$E2E_TMP/b.json" ] || fail "dedisbench $* wrote its JSON"
}
bad "--space-cmd 'false': exited with status 1" --space-cmd false
bad "printed 'twelve', not a byte count" --space-cmd "echo twelve"
# ... and after the run, a run failure: exit 1, the rest reported, the JSON "failed" with it as
# its error (it said "ok" beside exit status 1). The command reads before, fails after.
mkdir "$E2E_TMP/late"
printf 'if [ -e "%s/late.ran" ]; then exit 3; fi; : >"%s/late.ran"; echo 4096\n' "$E2E_TMP" "$E2E_TMP" >"$E2E_TMP/late.sh"
run_bench -T "$E2E_TMP/late" -P 1 -F 1 -q -j "$E2E_TMP/late.json" --space-cmd "sh $E2E_TMP/late.sh"
[ "$RC" -eq 1 ] || fail "--space-cmd failing after the run: exit $RC, want 1: $(cat "$E2E_TMP/err")"
[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "space after the run: .*exited with status 3" "$E2E_TMP/err" ||
	fail "--space-cmd failing after the run: stderr $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/late.json" '.status == "failed" and (.error | test("space after the run: .*exited with status 3")) and .totals.ops == 256'
run_bench -T null -P 1 -F 1 --space-cmd "echo 1"
[ "$RC" -eq 2 ] && grep -q -- '--space-cmd needs a real target' "$E2E_TMP/err" || fail "--space-cmd on null: $RC $(cat "$E2E_TMP/err")"
exit 0
