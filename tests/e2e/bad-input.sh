#!/bin/bash
# Bad input: every class (option, value, conflict, config key/file, distribution file, path,
# device, --json dir, no room) exits 2 with one stderr line, creating no file and no --json.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
TGT="$E2E_TMP/target"
JSON="$E2E_TMP/r.json"
mkdir "$TGT"
ncases=0

# bad NAME REGEX ARGS...: dedisbench ARGS must exit 2 with exactly one stderr line matching
# REGEX (grep -E; "" for any), leave $TGT empty and not create $JSON. Common args first, so
# the case's own arguments (e.g. --target) win.
bad() {
	local name=$1 re=$2 rc=0 n
	shift 2
	timeout 20 "$DEDISBENCH" --target "$TGT" --procs 1 --file-size 1MiB --json "$JSON" "$@" \
		>"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "$name: dedisbench $* exited $rc, want 2 (124: it hung); stderr: $(cat "$E2E_TMP/err")"
	n=$(wc -l <"$E2E_TMP/err")
	[ "$n" -eq 1 ] || fail "$name: want exactly 1 stderr line, got $n: $(cat "$E2E_TMP/err")"
	[ -s "$E2E_TMP/err" ] || fail "$name: stderr is empty"
	if [ -n "$re" ]; then
		grep -Eq -- "$re" "$E2E_TMP/err" || fail "$name: stderr does not match /$re/: $(cat "$E2E_TMP/err")"
	fi
	[ -z "$(ls -A "$TGT")" ] || fail "$name: target dir not empty: $(ls -A "$TGT")"
	[ ! -e "$JSON" ] || fail "$name: --json file was created"
	ncases=$((ncases + 1))
}

# Sanity: the same common arguments do work (so each failure below is the case's own fault),
# and leave nothing behind without --keep.
"$DEDISBENCH" --target "$TGT" --procs 1 --file-size 1MiB --quiet >/dev/null 2>&1 ||
	fail "the baseline run failed"
[ -z "$(ls -A "$TGT")" ] || fail "baseline run left files: $(ls -A "$TGT")"

# Options and values
bad "unknown option"    'bogus'        --bogus
bad "unknown short"     ''             -Z
bad "missing value"     'block-size'   --block-size
bad "block not pow2"    'block-size'   --block-size 3000
bad "block too small"   'block-size'   --block-size 256
bad "block too big"     'block-size'   --block-size 2MiB
bad "procs 0"           'procs'        --procs 0
bad "procs not number"  'procs'        --procs two
bad "access foo"        'access'       --access foo
bad "mode foo"          'mode'         --mode foo
bad "time 5x"           'time'         --time 5x
bad "time past the clock" 'time: 18446744073s is longer than 3650 days' --time 18446744073s
bad "file size 0"       'file-size: 0 is out of range \(at least 1 byte\)$' --file-size 0
bad "compress 1.5"      "compress: '1.5' is neither dist nor a whole number" --compress 1.5
bad "hints off engine"  '--hints applies to engine targets' --hints
bad "read-pct, write"   '--read-pct applies to a mixed run \(-m\): a write run does only writes' --read-pct 30
bad "size junk"         'size'         --size 12QB
bad "file-size 0"       'file-size'    --file-size 0
# procs x file-size past a file offset wrapped to a few bytes: exit 1 after the files were made
bad "procs x file-size" 'procs 1024 x --file-size 1152921504606846976 is more than a file can hold' \
	--procs 1024 --file-size 1024PiB --block-size 4096 --size 1MiB
bad "rate 1e-11"        '--rate: 1e-11 is too small' --target null --rate 1e-11
bad "json dir/"         "--json $E2E_TMP/newj/ ends in '/'" --json "$E2E_TMP/newj/"
bad "dist-report file/" "ends in '/': a report is written to a file" --dist-report "$E2E_TMP/out/"
bad "... on an engine"  'is more than a file can hold' --target "engine:$E2E_TMP/nv" --procs 1024 --file-size 1024PiB
bad "read-pct 150"      'read-pct'     -m --read-pct 150
bad "sync foo"          'sync'         --sync foo
bad "ioengine foo"      'ioengine'     --ioengine foo
bad "populate foo"      'populate'     --populate foo
bad "rate negative"     'rate'         -n -5
bad "seed junk"         'seed'         --seed 12abc

# Conflicting options
bad "peak and nominal"  ''             -p -n 100
bad "iodepth w/o aio"   'iodepth'      --iodepth 4
bad "-nr w/o -m"        ''             -nr100
bad "-nr w/o -nw"       ''             -m -nr100

# Config files
printf '[execution]\nnprocs=1\nfoo=1\n' >"$E2E_TMP/badkey.ini"
bad "config bad key"    'badkey\.ini.*foo|foo.*badkey\.ini' --config "$E2E_TMP/badkey.ini"
printf '[dedisbench]\nblock-size = 3000\n' >"$E2E_TMP/badval.ini"
bad "config bad value"  'block-size'   --config "$E2E_TMP/badval.ini"
printf '[nosuchsection]\nnprocs=1\n' >"$E2E_TMP/badsect.ini"
bad "config bad section" 'badsect\.ini' --config "$E2E_TMP/badsect.ini"
bad "config missing"    'missing\.ini' --config "$E2E_TMP/missing.ini"

# Distribution files: the message names the file and the offending line.
printf '0 100\n3 ab\n5 2\n' >"$E2E_TMP/letters.dist"
bad "dist letters"      'letters\.dist:2' --dist "$E2E_TMP/letters.dist"
printf '0 100\n5 2\n-1 3\n' >"$E2E_TMP/negative.dist"
bad "dist negative"     'negative\.dist:3' --dist "$E2E_TMP/negative.dist"
# Repeated keys are an error in the dedis format (a file with '#' comments); original
# DEDISbench files without comments add them up (the bundled kernels.dist repeats its table).
printf '# a dedis-format file\n0 100\n2 7\n2 9\n' >"$E2E_TMP/dupkey.dist"
bad "dist duplicate key" 'dupkey\.dist:4' --dist "$E2E_TMP/dupkey.dist"
: >"$E2E_TMP/empty.dist"
bad "dist empty"        'empty\.dist:1' --dist "$E2E_TMP/empty.dist"
printf '# only\n# comments\n' >"$E2E_TMP/comments.dist"
bad "dist all comments" 'comments\.dist:[0-9]' --dist "$E2E_TMP/comments.dist"
printf '0 100\n1 2 3\n' >"$E2E_TMP/threefields.dist"
bad "dist three fields" 'threefields\.dist:2' --dist "$E2E_TMP/threefields.dist"
printf '0 100\n1 99999999999999999999999\n' >"$E2E_TMP/overflow.dist"
bad "dist overflow"     'overflow\.dist:2' --dist "$E2E_TMP/overflow.dist"
bad "dist unknown name" 'nosuchdist'   --dist nosuchdist
bad "dist missing file" 'nope\.dist'   --dist "$E2E_TMP/nope.dist"
# Not a distribution file: refused up front, never read (a FIFO's open once waited for a writer,
# by a bare name it was "no such file"; /dev/zero was read until memory ran out).
mkfifo "$E2E_TMP/fifo.dist"
bad "dist FIFO"         'fifo\.dist: a FIFO, not a regular file$' --dist "$E2E_TMP/fifo.dist"
(cd "$E2E_TMP" && bad "dist FIFO, bare name" '^dedisbench: --dist: fifo\.dist: a FIFO, not a regular file$' --dist fifo.dist)
# capped CMD...: under a 400 MB address-space limit, which the 64 MiB cap keeps to (a build
# without the cap runs out of it instead of eating the machine); not under a sanitizer, whose
# shadow memory does not fit in it.
capped() { if [ -z "${DEDIS_SANITIZED:-}" ]; then (ulimit -v 400000 && "$@"); else "$@"; fi; }
capped bad "dist /dev/zero" '/dev/zero: a character device, not a regular file$' --dist /dev/zero
# A file larger than any distribution (a sparse 4 GiB of zeros, a disk image): read up to the
# cap, its first NUL byte named.
truncate -s 4G "$E2E_TMP/huge.dist"
capped bad "dist 4 GiB of NULs" 'huge\.dist:1: NUL byte at column 1 \(binary file\?\)$' --dist "$E2E_TMP/huge.dist"
head -c $((64 << 20)) /dev/zero | tr '\0' '\n' >"$E2E_TMP/blank.dist"
echo "0 1" >>"$E2E_TMP/blank.dist"
bad "dist over 64 MiB"  'blank\.dist: larger than 64 MiB: not a distribution file' --dist "$E2E_TMP/blank.dist"
rm -f "$E2E_TMP/huge.dist" "$E2E_TMP/blank.dist"

# Paths and devices
bad "target missing"    'nonexistent'  --target "$E2E_TMP/nonexistent/dir"
bad "target chardev"    '/dev/null'    --target /dev/null
touch "$E2E_TMP/plainfile"
bad "json dir missing"  'json'         --json "$E2E_TMP/nodir/r.json"
bad "json dir is file"  'json'         --json "$E2E_TMP/plainfile/r.json"
rm -f "$E2E_TMP/plainfile"
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$E2E_TMP/ro"
	chmod 555 "$E2E_TMP/ro"
	bad "json dir unwritable" 'json'   --json "$E2E_TMP/ro/r.json"
	rmdir "$E2E_TMP/ro"
fi

# A target without room: a 1 MiB tmpfs asked for 2 x 4 MiB (root only).
if [ "$(id -u)" -eq 0 ] && mkdir "$E2E_TMP/small" &&
	mount -t tmpfs -o size=1m dedis-e2e "$E2E_TMP/small" 2>/dev/null; then
	on_exit "umount '$E2E_TMP/small'"
	rc=0
	"$DEDISBENCH" --target "$E2E_TMP/small" --procs 2 --file-size 4MiB --json "$JSON" \
		>/dev/null 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "no room: exited $rc, want 2: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "no room: want 1 stderr line: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/small")" ] || fail "no room: files created: $(ls -A "$E2E_TMP/small")"
	[ ! -e "$JSON" ] || fail "no room: --json file was created"
	ncases=$((ncases + 1))
else
	note "no-room case skipped (needs root to mount a tmpfs)"
fi

note "$ncases bad-input cases exit 2 cleanly"

# The machine running out is not bad input: memory or descriptors exhausted exit 1 (a run's
# failure), with one line saying so, and still nothing written.
runs_out() { # NAME REGEX LIMIT ARGS...: under `ulimit LIMIT`, exit 1 and one line matching REGEX
	local name=$1 re=$2 limit=$3 rc=0
	shift 3
	(ulimit $limit && exec "$DEDISBENCH" --target "$TGT" --procs 1 --file-size 1MiB --json "$JSON" "$@") \
		>"$E2E_TMP/out" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "$name: exited $rc, want 1: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -Eq -- "$re" "$E2E_TMP/err" ||
		fail "$name: stderr does not say /$re/ in one line: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$TGT")" ] && [ ! -e "$JSON" ] || fail "$name: something was written"
}
runs_out "descriptors" 'Too many open files$' "-n 5"
if [ -z "${DEDIS_SANITIZED:-}" ]; then
	truncate -s 100M "$E2E_TMP/zeros.dist"
	runs_out "memory" 'zeros\.dist: out of memory$' "-v 40000" --dist "$E2E_TMP/zeros.dist"
fi
note "memory or descriptors running out: exit 1, not the bad input's 2"
