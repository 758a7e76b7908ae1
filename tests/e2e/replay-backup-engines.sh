#!/bin/bash
# replay-backup-engines.sh - replay and --workload backup through every --ioengine (each request
# run to completion, one at a time): libaio and io_uring write the same bytes and report the same
# counts as sync; the engine rules of a run apply (O_DIRECT's --sync, --iodepth, --sqpoll, an
# engine target, a kernel without io_uring: one line, exit 2, nothing written).
source "$(dirname "$0")/lib.sh"
# tmpfs may not support O_DIRECT: work under /var/tmp, and skip where O_DIRECT is refused.
mktmp /var/tmp
dd if=/dev/zero of="$E2E_TMP/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
	skip "O_DIRECT is not supported on $(df -P /var/tmp | awk 'NR == 2 { print $6 }')"
rm -f "$E2E_TMP/probe"
T=$E2E_TMP/t.trace
awk -v n=5000 -v blocks=2000 -v seed=3 -f "$top_srcdir/examples/fiu-synth.awk" >"$T"
writes=$(awk '$6 == "W"' "$T" | wc -l)

engines=(sync libaio)
RC=0
mkdir "$E2E_TMP/probe.d"
"$DEDISBENCH" --target "$E2E_TMP/probe.d" --procs 1 --file-size 4KiB -w --ioengine io_uring --quiet \
	2>"$E2E_TMP/err" || RC=$?
if [ "$RC" -eq 0 ]; then
	engines+=(io_uring)
elif [ "$RC" -eq 2 ]; then
	note "io_uring is not available here, its cases skipped: $(cat "$E2E_TMP/err")"
else
	fail "a one-block io_uring run exited $RC: $(cat "$E2E_TMP/err")"
fi

# What must not differ between engines: the counts, the bytes, the outcome.
replay_facts='[.status, .totals.ops, .totals.bytes, .reads.ops, .reads.bytes, .writes.ops, .writes.bytes,
	.replay.requests_done, .trace.live_blocks, .trace.live_distinct]'
backup_facts='[.status, (.backup.per_generation[] | [.expected_ratio, .shared_with_previous])]'
for e in "${engines[@]}"; do
	mkdir "$E2E_TMP/r-$e" "$E2E_TMP/b-$e"
	expect_ok replay "$T" --target "$E2E_TMP/r-$e" --keep --seed 5 --ioengine "$e" -j "$E2E_TMP/r-$e.json"
	grep -q '^dedisbench replay: .*5000 requests' "$E2E_TMP/out" || fail "$e: no replay summary: $(head -3 "$E2E_TMP/out")"
	jcheck "$E2E_TMP/r-$e.json" ".status == \"ok\" and .totals.ops == 5000 and .writes.ops == $writes and .config.ioengine == \"$e\""
	jget "$E2E_TMP/r-$e.json" "$replay_facts" >"$E2E_TMP/r-$e.facts"
	expect_ok -T "$E2E_TMP/b-$e" --workload backup --procs 2 --generations 3 --file-size 4MiB --seed 4 --keep \
		--ioengine "$e" -q -j "$E2E_TMP/b-$e.json"
	jcheck "$E2E_TMP/b-$e.json" ".status == \"ok\" and (.backup.per_generation | length) == 3 and .config.ioengine == \"$e\""
	jget "$E2E_TMP/b-$e.json" "$backup_facts" >"$E2E_TMP/b-$e.facts"
	# the bytes as dedisbench itself reads them back: every block of seed 4, intact
	expect_ok -T "$E2E_TMP/b-$e" --procs 6 --file-size 4MiB --mode read --populate none --verify final --keep \
		-q -j "$E2E_TMP/v-$e.json"
	jcheck "$E2E_TMP/v-$e.json" '.verify.ok and .verify.checked == 6144 and .verify.found.a_foreign_seed == 4' \
		"$e: the backup's files verify" .verify
	[ "$e" = sync ] && continue
	cmp -s "$E2E_TMP/r-sync/dedisbench.0" "$E2E_TMP/r-$e/dedisbench.0" || fail "$e: the replay wrote other bytes than sync"
	for f in "$E2E_TMP/b-sync"/*; do
		cmp -s "$f" "$E2E_TMP/b-$e/${f##*/}" || fail "$e: backup file ${f##*/} differs from sync's"
	done
	cmp -s "$E2E_TMP/r-sync.facts" "$E2E_TMP/r-$e.facts" ||
		fail "$e: replay counts $(tr -d ' \n' <"$E2E_TMP/r-$e.facts"), sync's $(tr -d ' \n' <"$E2E_TMP/r-sync.facts")"
	cmp -s "$E2E_TMP/b-sync.facts" "$E2E_TMP/b-$e.facts" ||
		fail "$e: backup ratios $(tr -d ' \n' <"$E2E_TMP/b-$e.facts"), sync's $(tr -d ' \n' <"$E2E_TMP/b-sync.facts")"
done
note "replay and backup agree on: ${engines[*]}"

# refused LINE-PATTERN COMMAND...: exit 2, one stderr line matching, nothing written in $E2E_TMP/n.
mkdir "$E2E_TMP/n"
refused() {
	local want=$1
	shift
	RC=0
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	[ "$RC" -eq 2 ] || fail "dedisbench $* exited $RC, want 2: $(head -c 600 "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "dedisbench $*: want one stderr line: $(cat "$E2E_TMP/err")"
	grep -Eq -- "$want" "$E2E_TMP/err" || fail "dedisbench $*: stderr does not say /$want/: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/n")" ] || fail "dedisbench $*: files written: $(ls -A "$E2E_TMP/n")"
}
backup=("$DEDISBENCH" -T "$E2E_TMP/n" --workload backup --procs 1 --generations 2 --file-size 1MiB)
refused 'libaio works with --sync none or direct' "$DEDISBENCH" replay "$T" --target "$E2E_TMP/n" --ioengine libaio --sync fsync
refused 'libaio works with --sync none or direct' "${backup[@]}" --ioengine libaio --sync dsync
refused '--iodepth does not apply to replay' "$DEDISBENCH" replay "$T" --target "$E2E_TMP/n" --ioengine libaio --iodepth 4
refused '--iodepth does not apply to --workload backup' "${backup[@]}" --ioengine libaio --iodepth 4
refused '--sqpoll needs --ioengine io_uring' "$DEDISBENCH" replay "$T" --target "$E2E_TMP/n" --ioengine libaio --sqpoll
refused '--ioengine libaio does not apply to an engine target' "$DEDISBENCH" replay "$T" --target "engine:$E2E_TMP/n/vol" --ioengine libaio
[ -z "$(ls -A "$E2E_TMP/n")" ] || fail "files written: $(ls -A "$E2E_TMP/n")"

# A kernel without io_uring: refused by the engine's check before anything is written.
NO_URING="$top_builddir/tests/e2e/no-io-uring"
RC=0
[ -x "$NO_URING" ] && "$NO_URING" ENOSYS true || RC=$?
if [ "$RC" -eq 0 ]; then
	refused '--ioengine io_uring: this kernel has no io_uring' "$NO_URING" ENOSYS "$DEDISBENCH" replay "$T" \
		--target "$E2E_TMP/n" --ioengine io_uring
	refused '--ioengine io_uring: this kernel has no io_uring' "$NO_URING" ENOSYS "${backup[@]}" \
		--ioengine io_uring
else
	note "no seccomp filter here to take io_uring away: that case skipped"
fi
exit 0
