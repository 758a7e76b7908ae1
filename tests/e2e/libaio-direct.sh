#!/bin/bash
# O_DIRECT engines on a real filesystem: libaio at iodepth 32 (write and read) reports sync
# "direct" and the right op counts; the sync engine with --sync direct works as well.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# tmpfs may not support O_DIRECT: work under /var/tmp, and skip where O_DIRECT is refused.
mktmp /var/tmp
J="$E2E_TMP/r.json"
mkdir "$E2E_TMP/t"
dd if=/dev/zero of="$E2E_TMP/t/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null ||
	skip "O_DIRECT is not supported on $(df -P /var/tmp | awk 'NR == 2 { print $6 }')"
rm -f "$E2E_TMP/t/probe"

P=2
FS=8
OPS=$((P * FS * 1024 * 1024 / 4096))
common=(--target "$E2E_TMP/t" --procs $P --file-size ${FS}MiB --block-size 4096 --quiet)

# strace (when present) shows what the engines really did: O_DIRECT opens, io_submit calls.
STRACE=()
if command -v strace >/dev/null 2>&1 && strace -qq -o /dev/null true 2>/dev/null; then
	STRACE=(env ASAN_OPTIONS=detect_leaks=0 strace -f -qq -e trace=openat,io_submit,pwrite64,pread64 -o "$E2E_TMP/strace")
fi
traced() { # checks on the strace log of the last run, if any: WANT_AIO (1/0)
	[ ${#STRACE[@]} -gt 0 ] || return 0
	grep -E "dedisbench\.[0-9]+\".*O_DIRECT" "$E2E_TMP/strace" >/dev/null ||
		fail "no O_DIRECT open of the worker files in strace"
	if [ "$1" = 1 ]; then
		grep -q 'io_submit(' "$E2E_TMP/strace" || fail "libaio engine made no io_submit call"
	else
		grep -q 'io_submit(' "$E2E_TMP/strace" && fail "sync engine called io_submit"
		grep -Eq 'p(write|read)64\(' "$E2E_TMP/strace" || fail "sync engine made no pwrite/pread call"
	fi
	rm -f "$E2E_TMP/strace"
}

# 1. libaio, iodepth 32, random writes: libaio implies O_DIRECT.
RC=0
"${STRACE[@]}" "$DEDISBENCH" "${common[@]}" -w --access uniform --ioengine libaio --iodepth 32 \
	--keep --json "$J" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
[ "$RC" -eq 0 ] || fail "libaio write run exited $RC: $(cat "$E2E_TMP/err")"
traced 1
jcheck "$J" '.config | .ioengine == "libaio" and .iodepth == 32 and .sync == "direct"' \
	"libaio run: want ioengine libaio, iodepth 32, sync direct" .config
jcheck "$J" ".writes.ops == $OPS and .totals.ops == $OPS and .status == \"ok\"" \
	"libaio write run: want $OPS writes" '{ops: .totals.ops, status}'
jcheck "$J" '.totals.latency_us.p99 > 0' "libaio write run: no latency recorded"

# 2. libaio reads over the kept files.
"${STRACE[@]}" "$DEDISBENCH" "${common[@]}" -r --populate none --access uniform --ioengine libaio \
	--iodepth 32 --json "$J" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "libaio read run failed: $(cat "$E2E_TMP/err")"
traced 1
jcheck "$J" ".reads.ops == $OPS and .writes.ops == 0 and .config.sync == \"direct\"" \
	"libaio read run: want $OPS reads, sync direct" '{reads: .reads.ops, sync: .config.sync}'
# Start the next case from an empty directory.
rm -f "$E2E_TMP/t"/dedisbench.*

# 3. The sync engine with --sync direct.
"${STRACE[@]}" "$DEDISBENCH" "${common[@]}" -w --access uniform --sync direct --json "$J" \
	>"$E2E_TMP/out" 2>"$E2E_TMP/err" || fail "--sync direct run failed: $(cat "$E2E_TMP/err")"
traced 0
jcheck "$J" ".config.ioengine == \"sync\" and .config.sync == \"direct\" and .totals.ops == $OPS" \
	"sync engine --sync direct: want $OPS ops, sync direct" '{ops: .totals.ops, config: .config}'
[ -z "$(ls -A "$E2E_TMP/t")" ] || fail "files left without --keep: $(ls -A "$E2E_TMP/t")"

# libaio with a buffered durability mode is bad input (it always uses O_DIRECT).
run_bench "${common[@]}" --ioengine libaio --sync fsync
[ "$RC" -eq 2 ] || fail "--ioengine libaio --sync fsync exited $RC, want 2"

note "libaio iodepth 32 and sync+O_DIRECT: $OPS ops each${STRACE:+, O_DIRECT seen in strace}"
