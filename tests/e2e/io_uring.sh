#!/bin/bash
# The io_uring engine on files: a kernel without io_uring or forbidding it (a seccomp filter
# makes io_uring_setup fail) is refused in one line, exit 2, nothing written; --hipri where the
# device cannot poll likewise; then writes, reads, mixed with --verify both, requests to the same
# block kept in order, nominal rate and --sqpoll, with strace showing what the engine did.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

NO_URING="$top_builddir/tests/e2e/no-io-uring"
[ -x "$NO_URING" ] || fail "no helper at $NO_URING (make check builds it)"

# tmpfs may not support O_DIRECT: work under /var/tmp, and skip where O_DIRECT is refused.
mktmp /var/tmp
J="$E2E_TMP/r.json"
T="$E2E_TMP/t"
mkdir "$T"
dd if=/dev/zero of="$T/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
	skip "O_DIRECT is not supported on $(df -P /var/tmp | awk 'NR == 2 { print $6 }')"
rm -f "$T/probe"

P=2
common=(--target "$T" --procs $P --file-size 8MiB --block-size 4096 --quiet)
OPS=$((P * 8 * 1024 * 1024 / 4096))

# refused WHY-PATTERN ARGS...: exit 2, one stderr line matching the pattern, no file created.
refused() {
	local want=$1
	shift
	rm -f "$J"
	RC=0
	"$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	[ "$RC" -eq 2 ] || fail "$* exited $RC, want 2: $(head -c 600 "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "$*: want one stderr line, got: $(cat "$E2E_TMP/err")"
	grep -Eq -- "$want" "$E2E_TMP/err" || fail "$*: stderr does not say /$want/: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$T")" ] || fail "$*: files written by a refused run: $(ls -A "$T")"
	[ ! -e "$J" ] || fail "$*: a refused run wrote --json"
}

# 1. No io_uring in the kernel (ENOSYS) and io_uring forbidden (EPERM: the sysctl or a seccomp
#    policy), the way a kernel without it would answer: refused before anything is written.
RC=0
"$NO_URING" ENOSYS true || RC=$?
[ "$RC" -eq 77 ] && skip "no seccomp here to take io_uring away"
[ "$RC" -eq 0 ] || fail "no-io-uring ENOSYS true exited $RC"
refused '--ioengine io_uring: this kernel has no io_uring.*libaio' \
	"$NO_URING" ENOSYS "$DEDISBENCH" "${common[@]}" -w --ioengine io_uring --iodepth 8 --json "$J"
refused '--ioengine io_uring: .*(not permitted|disabled|limited).*libaio' \
	"$NO_URING" EPERM "$DEDISBENCH" "${common[@]}" -w --ioengine io_uring --iodepth 8 --json "$J"
# The filter takes io_uring only: libaio still runs under it.
"$NO_URING" ENOSYS "$DEDISBENCH" "${common[@]}" -w --ioengine libaio --iodepth 8 --json "$J" \
	>"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "libaio under the io_uring filter failed: $(cat "$E2E_TMP/err")"
jcheck "$J" ".totals.ops == $OPS" "libaio under the filter: want $OPS ops" .totals.ops
rm -f "$J"

# 2. Options that need io_uring, or an O_DIRECT-compatible sync mode.
refused '--sqpoll needs --ioengine io_uring' "$DEDISBENCH" "${common[@]}" --ioengine libaio --sqpoll --json "$J"
refused '--hipri needs --ioengine io_uring' "$DEDISBENCH" "${common[@]}" --hipri --json "$J"
refused 'io_uring works with --sync none or direct' \
	"$DEDISBENCH" "${common[@]}" --ioengine io_uring --sync fsync --json "$J"
refused '--iodepth 8 needs --ioengine libaio or io_uring' "$DEDISBENCH" "${common[@]}" --iodepth 8 --json "$J"

# From here on the kernel's own io_uring is needed.
RC=0
"$DEDISBENCH" --target "$T" --procs 1 --file-size 4KiB -w --ioengine io_uring --quiet 2>"$E2E_TMP/err" || RC=$?
[ "$RC" -eq 2 ] && skip "io_uring is not available here: $(cat "$E2E_TMP/err")"
[ "$RC" -eq 0 ] || fail "a one-block io_uring run exited $RC: $(cat "$E2E_TMP/err")"

# 3. --hipri: polled completions need a device whose queue polls (queue/io_poll in sysfs).
dev=$(stat -c '%Hd:%Ld' "$T")
poll=0
for q in "/sys/dev/block/$dev/queue/io_poll" "/sys/dev/block/$dev/../queue/io_poll"; do
	[ -r "$q" ] && { poll=$(cat "$q"); break; }
done
if [ "$poll" = 1 ]; then
	expect_ok "${common[@]}" -m --access uniform --ioengine io_uring --iodepth 8 --hipri --verify both --json "$J"
	jcheck "$J" '.config.hipri == true and .verify.ok' "--hipri on a polling device: want a verified run" .verify
	note "the device under $T polls: --hipri ran"
	rm -f "$T"/dedisbench.*
else
	refused "--hipri: $T cannot poll for completions: .*no poll queues.*run without --hipri" \
		"$DEDISBENCH" "${common[@]}" --ioengine io_uring --hipri --json "$J"
fi
if [ -d /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" = tmpfs ]; then
	S=$(mktemp -d /dev/shm/dedis-e2e-uring.XXXXXX)
	on_exit "rm -rf '$S'"
	RC=0
	"$DEDISBENCH" --target "$S" --procs 1 --file-size 1MiB --ioengine io_uring --hipri --quiet \
		>"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	[ "$RC" -eq 2 ] || fail "--hipri on tmpfs exited $RC, want 2"
	grep -q 'not on a block device' "$E2E_TMP/err" || fail "--hipri on tmpfs: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$S")" ] || fail "--hipri on tmpfs wrote $(ls -A "$S")"
fi

# strace (when present) shows what the engine really did.
STRACE=()
if command -v strace >/dev/null 2>&1 && strace -qq -o /dev/null true 2>/dev/null; then
	# -y: descriptors shown with their paths, so a pread/pwrite is known by its file (the run
	# lock's pwrite of "PID\n./dedisbench ..." is not a worker file's)
	STRACE=(env ASAN_OPTIONS=detect_leaks=0 strace -f -y -qq -o "$E2E_TMP/strace"
		-e trace=openat,io_uring_setup,io_uring_register,io_uring_enter,io_submit,pwrite64,pread64)
fi
traced() { # the engine's system calls in the last run, if traced: SQPOLL (1/0)
	[ ${#STRACE[@]} -gt 0 ] || return 0
	local s="$E2E_TMP/strace"
	grep -E "dedisbench\.[0-9]+\".*O_DIRECT" "$s" >/dev/null || fail "no O_DIRECT open of the worker files"
	[ "$(grep -c 'io_uring_setup(' "$s")" -ge $P ] || fail "fewer than $P rings set up: $(grep io_uring_setup "$s")"
	grep -q 'IORING_REGISTER_FILES' "$s" || fail "the worker file was not registered"
	grep -q 'IORING_REGISTER_BUFFERS' "$s" || fail "the buffers were not registered"
	grep -Eq 'io_submit\(|p(write|read)64\([0-9]+<[^>]*/dedisbench\.[0-9]+>' "$s" &&
		fail "io_uring run used io_submit or pwrite/pread on a worker file: $(grep -E 'io_submit\(|p(write|read)64\(' "$s" | head -3)"
	if [ "$1" = 1 ]; then
		grep -q 'IORING_SETUP_SQPOLL' "$s" || fail "--sqpoll: no ring with IORING_SETUP_SQPOLL"
	else
		grep -q 'io_uring_enter(' "$s" || fail "no io_uring_enter call"
	fi
	rm -f "$s"
}

# 4. Random writes at iodepth 32: io_uring implies O_DIRECT.
"${STRACE[@]}" "$DEDISBENCH" "${common[@]}" -w --access uniform --ioengine io_uring --iodepth 32 --keep \
	--json "$J" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "io_uring write run failed: $(cat "$E2E_TMP/err")"
traced 0
jcheck "$J" '.config | .ioengine == "io_uring" and .iodepth == 32 and .sync == "direct" and .sqpoll == false' \
	"io_uring run: want ioengine io_uring, iodepth 32, sync direct" .config
jcheck "$J" ".writes.ops == $OPS and .totals.ops == $OPS and .status == \"ok\" and .totals.latency_us.p99 > 0" \
	"io_uring write run: want $OPS writes" '{ops: .totals.ops, status}'

# 5. Reads over the kept files.
expect_ok "${common[@]}" -r --populate none --access uniform --ioengine io_uring --iodepth 32 --json "$J"
jcheck "$J" ".reads.ops == $OPS and .writes.ops == 0" "io_uring read run: want $OPS reads" '{r: .reads.ops}'
rm -f "$T"/dedisbench.*

# 6. Reads (after populate) and mixed, every read and every block verified.
for mode in read mixed; do
	expect_ok "${common[@]}" --mode $mode --access uniform --ioengine io_uring --iodepth 32 --verify both --json "$J"
	jcheck "$J" ".verify.ok and .verify.read_checks > $((OPS / 4)) and .verify.final_checks == $OPS" \
		"$mode run, --verify both: want reads checked and all $OPS blocks verified" .verify
done
[ -z "$(ls -A "$T")" ] || fail "files left without --keep: $(ls -A "$T")"

# 7. 16 blocks per worker at iodepth 32: nearly every request meets one in flight on its block.
#    io_uring may start them out of order; the engine keeps them in order, or reads would find
#    the data before a write queued ahead of them (measured: ~600 mismatches per run without).
for a in uniform nurand; do
	expect_ok --target "$T" --procs $P --file-size 64KiB --size 64MiB -m --access $a --ioengine io_uring \
		--iodepth 32 --verify both --quiet --json "$J"
	jcheck "$J" '.verify.ok and .verify.read_checks > 4000 and .verify.final_checks == 32' \
		"same-block requests at iodepth 32 ($a): want every read verified" .verify
done

# 8. Nominal rate: 1000 ops/s for 4 s, paced by waits with a timeout on the ring: the 4000 due are
# issued or counted missed, none ahead of the schedule (counts: a loaded machine falls behind).
expect_ok "${common[@]}" -m --access uniform --ioengine io_uring --iodepth 16 -n 1000 --time 4s --verify online \
	--json "$J"
ops=$(jget "$J" .totals.ops) missed=$(jget "$J" .rate.missed)
[ "$ops" -gt 0 ] && [ $((ops + missed)) = 4000 ] || fail "io_uring -n 1000 for 4 s: $ops issued + $missed missed, want the 4000 due"
jcheck "$J" '.verify.ok and .verify.read_checks > 0' "nominal io_uring run: reads verified" .verify

# 9. --sqpoll: a kernel thread submits; the same run verifies.
"${STRACE[@]}" "$DEDISBENCH" "${common[@]}" -m --access uniform --ioengine io_uring --iodepth 32 --sqpoll \
	--verify both --json "$J" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "--sqpoll run failed: $(cat "$E2E_TMP/err")"
traced 1
jcheck "$J" ".config.sqpoll == true and .verify.ok and .verify.final_checks == $OPS" "--sqpoll run" .verify

note "io_uring: refusals (ENOSYS, EPERM, options), writes/reads/mixed/verify, same-block order, nominal, sqpoll${STRACE:+ (strace-checked)}"
