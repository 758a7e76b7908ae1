#!/bin/bash
# replay.sh - dedisbench replay TRACE: a trace of 10^5 requests in the FIU IODedup format, written
# by this test, replayed content-faithfully: the file written holds exactly the trace's distinct
# MD5s among its live blocks (dedisgen's count), the engine stores exactly them; the recorded
# timing is kept when asked; a malformed line is bad input (file:line, exit 2, nothing written).
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
[ -x "$DEDISENGINE" ] || fail "no dedisengine at $DEDISENGINE"
T=$E2E_TMP/t.trace
awk -v n=100000 -v blocks=20000 -v seed=3 -f "$top_srcdir/examples/fiu-synth.awk" >"$T"
[ "$(wc -l <"$T")" -eq 100000 ] || fail "the trace generator wrote $(wc -l <"$T") lines"
# What the trace says, computed here independently: distinct MD5s in all, and among the last
# write to each block; the blocks the file spans (the unwritten ones read as zeros).
read -r all_md5 live_blocks live_md5 span zero_live < <(awk '
	{ for (k = 9; k <= NF; k++) { seen[$k] = 1; if ($6 == "W") last[$4 / 8 + k - 9] = $k }
	  e = $4 / 8 + NF - 8; if (e > span) span = e }
	END { for (m in seen) a++
	      for (b in last) { n++; if (!(last[b] in l)) { l[last[b]] = 1; d++ } }
	      print a, n, d, span, ("620f0b67a91f7f74151bc5be745b7110" in l) }' "$T")
note "trace: $all_md5 distinct MD5s; live: $live_blocks blocks, $live_md5 distinct; spans $span blocks"
[ "$live_blocks" -lt "$span" ] || fail "the generated trace writes every block: the hole case is not exercised"

mkdir "$E2E_TMP/d"
J=$E2E_TMP/r.json
expect_ok replay "$T" --target "$E2E_TMP/d" --keep --seed 5 -j "$J"
grep -q '^dedisbench replay: .*100000 requests' "$E2E_TMP/out" || fail "no replay summary: $(head -3 "$E2E_TMP/out")"
jcheck "$J" ".trace.requests == 100000 and .trace.distinct_md5 == $all_md5 and .trace.live_blocks == $live_blocks and .trace.live_distinct == $live_md5"
jcheck "$J" ".totals.ops == 100000 and .writes.ops == $(awk '$6 == "W"' "$T" | wc -l) and .status == \"ok\""
jcheck "$J" '.reads.latency_us.p99 > 0 and .writes.latency_us.p99 > 0'
# the data written, analysed: the trace's live MD5s exactly (the unwritten blocks are zeros, one
# content more unless the zero block's MD5 is live anyway)
"$DEDISGEN" "$E2E_TMP/d/dedisbench.0" -b 4096 --json "$E2E_TMP/g.json" -q -o "$E2E_TMP/g.dist" || fail "dedisgen failed"
want=$((live_md5 + (zero_live ? 0 : 1)))
jcheck "$E2E_TMP/g.json" ".results[0].blocks == $span and .results[0].distinct == $want" \
	"dedisgen: want $span blocks, $want distinct" '.results[0] | {blocks, distinct, zero_blocks}'

# the engine: every live block mapped, each distinct content stored once; the replay checks it
# end to end as a run does (issue 39: it printed no engine line and wrote no "engine" key)
expect_ok replay "$T" --target "engine:$E2E_TMP/vol" --keep --seed 5 -j "$E2E_TMP/e.json"
grep -q "^engine (mem index): expected $live_blocks mapped blocks, $live_md5 distinct .*fsck clean.*: MATCH\$" \
	"$E2E_TMP/out" || fail "no engine MATCH line for the replay: $(grep '^engine' "$E2E_TMP/out")"
jcheck "$E2E_TMP/e.json" ".status == \"ok\" and .engine.match and .engine.expected_known and
	.engine.expected.mapped_blocks == $live_blocks and .engine.expected.distinct_blocks == $live_md5 and
	.engine.observed.mapped_blocks == $live_blocks and .engine.observed.fsck_problems == 0"
# on an lz4 volume the stored bytes are each content's LZ4 size by the packer's rule, exactly
expect_ok replay "$T" --target "engine:$E2E_TMP/vol-lz4,compress=lz4" --seed 5 -q -j "$E2E_TMP/e4.json"
jcheck "$E2E_TMP/e4.json" '.engine.match and .engine.compress == "lz4" and .engine.physical_deviation == 0 and
	.engine.expected.physical_bytes < .engine.expected.distinct_blocks * 4096'
"$DEDISENGINE" stat "$E2E_TMP/vol" --json >"$E2E_TMP/s.json" || fail "dedisengine stat failed"
jcheck "$E2E_TMP/s.json" ".mapped_blocks == $live_blocks and .referenced_blocks == $live_md5" \
	"engine: want $live_blocks mapped, $live_md5 distinct" '{mapped_blocks, referenced_blocks}'

# recorded timing: 50 requests 20 ms apart (0.98 s recorded) at --speed 2 take at least 0.49 s
awk 'NR <= 50 { $1 = 1000000000 + NR * 20000000; print }' "$T" >"$E2E_TMP/slow.trace"
mkdir "$E2E_TMP/s"
expect_ok replay "$E2E_TMP/slow.trace" --target "$E2E_TMP/s" --speed 2 -j "$E2E_TMP/slow.json"
jcheck "$E2E_TMP/slow.json" '.trace.seconds > 0.979 and .trace.seconds < 0.981 and .totals.seconds >= 0.49 and .replay.speed == 2'
# (How much of the timer's lateness in waking counts as latency is a speed figure, measured by
# bench/perf/replay-pacing.sh; here, below, the state that keeps it out: a paced replay sleeps with
# a timer slack of 1 ns, not the default 50 us.)

# SIGINT during a long gap of a paced trace stops the replay at once, "interrupted" (it once slept
# the gap out - 10 minutes - then wrote the next request and said "ok"). The gap is the longest a
# timestamp allows, to 2^64 - 1 ns: its due time once wrapped past the clock to now, and the
# replay finished both requests at once.
awk 'NR == 1 { $5 = 8; $6 = "W"; NF = 9; $9 = "0123456789abcdef0123456789abcdef"; print }
     NR == 2 { $1 = "18446744073709551615"; print }' "$T" >"$E2E_TMP/gap.trace"
first=$(awk 'NR == 1 { print $4 / 8 }' "$E2E_TMP/gap.trace")
mkdir "$E2E_TMP/g"
BG_PID=
on_exit '[ -n "$BG_PID" ] && kill -KILL "$BG_PID" 2>/dev/null'
"$DEDISBENCH" replay "$E2E_TMP/gap.trace" --target "$E2E_TMP/g" --speed 1 -j "$E2E_TMP/gap.json" -q \
	>"$E2E_TMP/gap.out" 2>"$E2E_TMP/gap.err" &
BG_PID=$!
written() { [ "$(dd if="$E2E_TMP/g/dedisbench.0" bs=4096 skip="$first" count=1 2>/dev/null | tr -d '\0' | wc -c)" -gt 0 ]; }
for ((i = 0; i < 150; i++)); do # bounded poll (15 s) for the first request's block
	written && break
	kill -0 "$BG_PID" 2>/dev/null || break
	sleep 0.1
done
written || fail "the paced replay never wrote its first request: $(cat "$E2E_TMP/gap.err")"
# asleep in the gap, on its own timer slack (the default 50 us once added ~75 us to every latency)
slack=$(cat "/proc/$BG_PID/timerslack_ns" 2>/dev/null || echo unreadable)
[ "$slack" = 1 ] || fail "a paced replay sleeps with a timer slack of $slack ns, want 1"
kill -INT "$BG_PID"
for ((i = 0; i < 200; i++)); do # bounded wait: 20 s of a 600 s gap
	kill -0 "$BG_PID" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$BG_PID" 2>/dev/null; then
	kill -KILL "$BG_PID"
	fail "replay still sleeping out a trace gap 20 s after SIGINT"
fi
wait "$BG_PID" || fail "replay interrupted in a gap exited $?: $(cat "$E2E_TMP/gap.err")"
BG_PID=
jcheck "$E2E_TMP/gap.json" '.status == "interrupted" and .replay.requests_done == 1'
jcheck "$E2E_TMP/gap.json" ".trace.seconds > 18446744073 - $(awk 'NR == 1 { print int($1 / 1e9) + 1 }' "$E2E_TMP/gap.trace")"

# bad input: one line naming file and line, exit 2, nothing written
bad() { # bad WHAT-STDERR-SAYS ARGS...
	local want=$1
	shift
	rm -rf "$E2E_TMP/b" "$E2E_TMP/b.json"
	mkdir "$E2E_TMP/b"
	run_bench "$@" --target "$E2E_TMP/b" -j "$E2E_TMP/b.json"
	[ "$RC" -eq 2 ] || fail "dedisbench $* exited $RC, want 2: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "dedisbench $*: stderr is not one line: $(cat "$E2E_TMP/err")"
	grep -qF -- "$want" "$E2E_TMP/err" || fail "dedisbench $*: stderr does not say '$want': $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/b")" ] && [ ! -e "$E2E_TMP/b.json" ] || fail "dedisbench $* wrote something"
}
B=$E2E_TMP/bad.trace
awk 'NR == 5000 { $6 = "X" } { print }' "$T" >"$B"
bad "$B:5000: op 'X' is neither W nor R" replay "$B"
awk 'NR == 77 { $9 = "xyz" } { print }' "$T" >"$B"
bad "$B:77: md5 'xyz' is not 32 hexadecimal digits" replay "$B"
awk 'NR == 3 { $4 = 13 } { print }' "$T" >"$B"
bad "$B:3: lba 13 is not 4 KiB aligned" replay "$B"
awk 'NR == 9 { NF = 7 } { print }' "$T" >"$B"
bad "$B:9: 7 fields" replay "$B"
awk 'NR == 2 { $5 = 16 } { print }' "$T" >"$B"   # 8 KiB with one MD5
grep -q '^[^ ]* [^ ]* [^ ]* [^ ]* 16 [RW] 8 0 [0-9a-f]*$' <(sed -n 2p "$B") || fail "line 2 was not made inconsistent"
bad "$B:2: 1 MD5s for 16 sectors, want 2" replay "$B"
# a request recorded before the one above it: the trace is out of order (it was replayed as if
# due at once)
awk 'NR == 50 { $1 = 5 } { print }' "$T" >"$B"
bad "$B:50: timestamp 5 is before the previous request's ($(awk 'NR == 49 { print $1 }' "$T"), line 49): a trace is in time order" replay "$B"
: >"$B"
bad "no request in the trace" replay "$B"
bad "--dist does not apply to replay" replay "$T" --dist kernels
bad "replay: give the trace first" replay
exit 0
