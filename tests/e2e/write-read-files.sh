#!/bin/bash
# Write then read on a directory target: --keep, op counts, JSON fields, --seed
# reproducibility, removal without --keep, --size and --time bounds, --json through a FIFO, each
# worker's rates over its own time. Counts and states, no speed: it passes on a loaded machine.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
P=2
FS=4 # MiB per worker
BS=4096
OPS=$((P * FS * 1024 * 1024 / BS))
J="$E2E_TMP/r.json"
common=(--procs $P --file-size ${FS}MiB --block-size $BS --quiet)

# 1. A write run with --keep leaves dedisbench.0..P-1, each of the file size.
mkdir "$E2E_TMP/a"
expect_ok --target "$E2E_TMP/a" "${common[@]}" -w --keep --seed 11 --json "$J"
for ((i = 0; i < P; i++)); do
	f="$E2E_TMP/a/dedisbench.$i"
	[ -f "$f" ] || fail "write --keep did not leave $f"
	sz=$(stat -c %s "$f")
	[ "$sz" -eq $((FS * 1024 * 1024)) ] || fail "$f is $sz bytes, want $((FS * 1024 * 1024))"
done
[ "$(ls -A "$E2E_TMP/a" | wc -l)" -eq $P ] || fail "unexpected files: $(ls -A "$E2E_TMP/a")"
[ "$(jget "$J" .writes.ops)" -eq $OPS ] || fail "write run: writes.ops $(jget "$J" .writes.ops), want $OPS"
[ "$(jget "$J" .reads.ops)" -eq 0 ] || fail "write run: reads.ops is not 0"
# The files hold data (not holes of zeros).
cmp -s -n $BS "$E2E_TMP/a/dedisbench.0" /dev/zero && fail "dedisbench.0 starts with a zero block"

# JSON fields every consumer relies on.
[ -s "$J" ] || fail "the JSON $J is missing or empty"
for k in .totals.ops .totals.iops .totals.latency_us.p99 .writes.ops .written.U0 .written.U1 \
	.written.D .written.ratio .access.hottest_10pct_share .config.seed; do
	jq -e "$k | numbers" "$J" >/dev/null || fail "JSON field $k missing or not a number"
done
[ "$(jget "$J" .config.seed)" = 11 ] || fail "config.seed is $(jget "$J" .config.seed), want 11"
[ "$(jget "$J" .totals.ops)" -eq $OPS ] || fail "totals.ops $(jget "$J" .totals.ops), want $OPS"
jcheck "$J" '.totals.iops > 0 and .totals.latency_us.p99 > 0' "totals.iops and p99 must be > 0"
jcheck "$J" '(.written.U0 + .written.U1 + .written.D - 1 | fabs) < 1e-6' "U0+U1+D must be 1"
jcheck "$J" '.written.ratio >= 1 and .written.blocks == '$OPS "written.blocks must be $OPS, ratio >= 1"

# 2. A read run over the kept files (no populate): one pass, reads only, exit 0.
expect_ok --target "$E2E_TMP/a" "${common[@]}" -r --populate none --keep --json "$J"
jcheck "$J" ".reads.ops == $OPS and .writes.ops == 0 and .totals.ops == $OPS" \
	"read run: want reads.ops == $OPS, writes.ops == 0" '{reads: .reads.ops, writes: .writes.ops}'
jcheck "$J" '.config.mode == "read" and .config.populate == "none"' "read run: config mode/populate"

# 3. --seed: same seed -> identical files; another seed -> different files.
for d in s1 s2 s3; do mkdir "$E2E_TMP/$d"; done
seedargs=("${common[@]}" -w --access uniform --keep)
expect_ok --target "$E2E_TMP/s1" "${seedargs[@]}" --seed 42
expect_ok --target "$E2E_TMP/s2" "${seedargs[@]}" --seed 42
expect_ok --target "$E2E_TMP/s3" "${seedargs[@]}" --seed 43
for ((i = 0; i < P; i++)); do
	cmp -s "$E2E_TMP/s1/dedisbench.$i" "$E2E_TMP/s2/dedisbench.$i" ||
		fail "same --seed gave different dedisbench.$i"
	cmp -s "$E2E_TMP/s1/dedisbench.$i" "$E2E_TMP/s3/dedisbench.$i" &&
		fail "different --seed gave identical dedisbench.$i"
done
rm -rf "$E2E_TMP/s1" "$E2E_TMP/s2" "$E2E_TMP/s3"

# 4. Without --keep, the files it created are removed.
mkdir "$E2E_TMP/b"
expect_ok --target "$E2E_TMP/b" "${common[@]}" -w --json "$J"
[ "$(jget "$J" .totals.ops)" -eq $OPS ] || fail "no-keep run: wrong op count"
[ -z "$(ls -A "$E2E_TMP/b")" ] || fail "files left without --keep: $(ls -A "$E2E_TMP/b")"

# 5. --size stops at exactly size/bs operations (fewer than one pass, and more).
expect_ok --target "$E2E_TMP/b" "${common[@]}" -w --access uniform --size 3MiB --json "$J"
[ "$(jget "$J" .totals.ops)" -eq $((3 * 1024 * 1024 / BS)) ] ||
	fail "--size 3MiB: totals.ops $(jget "$J" .totals.ops), want $((3 * 1024 * 1024 / BS))"
jcheck "$J" ".totals.bytes == $((3 * 1024 * 1024))" "--size 3MiB: totals.bytes"
expect_ok --target "$E2E_TMP/b" "${common[@]}" -w --size 20MiB --json "$J"
[ "$(jget "$J" .totals.ops)" -eq $((20 * 1024 * 1024 / BS)) ] ||
	fail "--size 20MiB: totals.ops $(jget "$J" .totals.ops), want $((20 * 1024 * 1024 / BS))"

# 6. -t 2s: a time bound of 2 s ends the run (the size bound is far away): it lasted its 2 s at
# least and stopped short of the size (how soon after the 2 s a run ends whatever the target
# does: run-failure.sh's stalled target).
expect_ok --target "$E2E_TMP/b" "${common[@]}" -w --access uniform -t 2s --size 1TiB --json "$J"
secs=$(jget "$J" .totals.seconds)
fcmp "$secs" ">=" 2.0 || fail "-t 2s: totals.seconds = $secs, want >= 2"
jcheck "$J" ".totals.ops > 0 and .totals.bytes < 1099511627776 and .status == \"ok\"" "-t 2s: ended by the time, not the size" .totals
[ -z "$(ls -A "$E2E_TMP/b")" ] || fail "files left without --keep: $(ls -A "$E2E_TMP/b")"

note "write/read on files: $OPS ops per pass, -t 2s run took $secs s"

# --json to an existing non-regular file (a FIFO here; /dev/null in real life) writes through
# it: a temp-file-and-rename would replace the node with a regular file.
mkfifo "$E2E_TMP/fifo"
cat "$E2E_TMP/fifo" >"$E2E_TMP/fifo.out" &
reader=$!
expect_ok --target null --procs 1 --file-size 1MiB --quiet --json "$E2E_TMP/fifo"
wait "$reader"
[ -p "$E2E_TMP/fifo" ] || fail "--json replaced the FIFO with a regular file"
[ -s "$E2E_TMP/fifo.out" ] && jq -e '.totals.ops == 256' "$E2E_TMP/fifo.out" >/dev/null || fail "the JSON written through the FIFO is wrong"
note "--json through a FIFO: node kept, document complete"

# Each worker's IOPS over its own time, its first issue to its last completion: worker 1 held by
# the fault shim at its first write until worker 0 has finished and exited; worker 0's row had
# the run's whole span (the held time included) and understated its rate by that much.
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
mkdir "$E2E_TMP/pw"
head -c 8 /dev/zero >"$E2E_TMP/pw.state"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=hold \
	DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH=pw/dedisbench.1 DEDIS_FAULT_STATE="$E2E_TMP/pw.state" \
	DEDIS_FAULT_RELEASE="$E2E_TMP/pw.go" DEDIS_FAULT_LOG="$E2E_TMP/pw.log" \
	"$DEDISBENCH" --target "$E2E_TMP/pw" --procs 2 --file-size 4MiB -q --json "$E2E_TMP/pw.json" 2>"$E2E_TMP/pw.err" &
pid=$!
on_exit "touch '$E2E_TMP/pw.go'; kill -9 $pid 2>/dev/null"
for _ in $(seq 1 300); do # held, and worker 0 gone: one child left
	[ -s "$E2E_TMP/pw.log" ] && [ "$(pgrep -P "$pid" | wc -l)" -eq 1 ] && break
	sleep 0.1
done
[ -s "$E2E_TMP/pw.log" ] && [ "$(pgrep -P "$pid" | wc -l)" -eq 1 ] || fail "worker 1 never held alone: $(cat "$E2E_TMP/pw.err")"
touch "$E2E_TMP/pw.go"
wait "$pid" || fail "the held run exited $?: $(cat "$E2E_TMP/pw.err")"
# Worker 0 had ended before worker 1 was released, worker 1 ended after it: worker 0's own time is
# short of the run's span by at least that (whatever the machine's load), worker 1's within it.
jcheck "$E2E_TMP/pw.json" '.workers[0].seconds < .totals.seconds and .workers[1].seconds <= .totals.seconds' \
	"worker 0's own time is the time it ran, worker 1's the held span" '{totals: .totals.seconds, workers: [.workers[] | {seconds, ops, iops}]}'
jcheck "$E2E_TMP/pw.json" '[.workers[] | (.iops - .ops / .seconds | fabs) < 1e-6 * .iops] | all' "each worker's IOPS over its own time"
note "worker 0 ran $(jget "$E2E_TMP/pw.json" .workers[0].seconds) s of the run's $(jget "$E2E_TMP/pw.json" .totals.seconds) s"
