#!/bin/bash
# Config files: an original DEDISbench INI drives a run (JSON config reflects it, files kept
# per cleantemp=0), the command line overrides the file, and new-style [dedisbench] keys work.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
J="$E2E_TMP/r.json"
DIST="$top_srcdir/distributions/archival.dist"
[ -f "$DIST" ] || fail "no $DIST (top_srcdir=$top_srcdir)"

# 1. The original DEDISbench keys.
mkdir "$E2E_TMP/a"
cat >"$E2E_TMP/orig.ini" <<EOF
[execution]
distfile=$DIST
access_type=1
nprocs=2
filesize=8
blocksize=4096
sync=0
seed=7

[results]
tempfilespath=$E2E_TMP/a

[structural]
cleantemp=0
EOF
expect_ok --config "$E2E_TMP/orig.ini" --json "$J" --quiet
jcheck "$J" '.config | .procs == 2 and .access == "uniform" and .file_size == 8388608
	and .block_size == 4096 and .sync == "none" and .seed == 7 and .keep == true' \
	"original INI not reflected in config" .config
jcheck "$J" ".config.target == \"$E2E_TMP/a\"" "tempfilespath not used as the target" .config.target
jcheck "$J" ".config.dist_path == \"$DIST\" or .config.dist == \"$DIST\"" "distfile not used" .config
[ "$(jget "$J" .totals.ops)" -eq $((2 * 8 * 1024 * 1024 / 4096)) ] ||
	fail "original INI run: totals.ops $(jget "$J" .totals.ops), want $((2 * 8 * 256))"
for i in 0 1; do
	[ "$(stat -c %s "$E2E_TMP/a/dedisbench.$i" 2>/dev/null || echo 0)" -eq $((8 * 1024 * 1024)) ] ||
		fail "cleantemp=0: dedisbench.$i missing or not 8 MiB"
done
[ "$(ls -A "$E2E_TMP/a" | wc -l)" -eq 2 ] || fail "want exactly 2 files: $(ls -A "$E2E_TMP/a")"

# The same seed from the file gives the same content as the same seed on the command line.
mkdir "$E2E_TMP/c"
expect_ok --target "$E2E_TMP/c" --dist "$DIST" --access uniform --procs 2 --file-size 8 \
	--block-size 4096 --sync none --seed 7 --keep --quiet
for i in 0 1; do
	cmp -s "$E2E_TMP/a/dedisbench.$i" "$E2E_TMP/c/dedisbench.$i" ||
		fail "INI run and the equivalent command line wrote different dedisbench.$i"
done
rm -rf "$E2E_TMP/a"/* "$E2E_TMP/c"

# 2. The command line wins over the file.
expect_ok --config "$E2E_TMP/orig.ini" --procs 3 --access nurand --seed 9 --json "$J" --quiet
jcheck "$J" '.config | .procs == 3 and .access == "nurand" and .seed == 9 and .file_size == 8388608' \
	"command line did not override the INI" .config
[ "$(ls -A "$E2E_TMP/a" | wc -l)" -eq 3 ] || fail "--procs 3 over nprocs=2: want 3 files, got: $(ls -A "$E2E_TMP/a")"
rm -rf "$E2E_TMP/a"/*

# Other original values: access_type 2 = nurand, 0 = seq; cleantemp=1 removes the files.
sed -e 's/^access_type=1/access_type=2/' -e 's/^cleantemp=0/cleantemp=1/' -e 's/^filesize=8/filesize=1/' \
	"$E2E_TMP/orig.ini" >"$E2E_TMP/orig2.ini"
expect_ok --config "$E2E_TMP/orig2.ini" --json "$J" --quiet
jcheck "$J" '.config | .access == "nurand" and .keep == false and .file_size == 1048576' \
	"access_type=2 / cleantemp=1 / filesize=1 not reflected" .config
[ -z "$(ls -A "$E2E_TMP/a")" ] || fail "cleantemp=1 left files: $(ls -A "$E2E_TMP/a")"
sed -i 's/^access_type=2/access_type=0/' "$E2E_TMP/orig2.ini"
expect_ok --config "$E2E_TMP/orig2.ini" --json "$J" --quiet
jcheck "$J" '.config.access == "seq"' "access_type=0 is not seq" .config.access

# 3. New-style keys: every long option, in a [dedisbench] section, with units. (The distribution
# is in the original DEDISbench format: no block size of its own, so block-size may be any.)
mkdir "$E2E_TMP/n"
printf '0 1000\n1 100\n3 10\n' >"$E2E_TMP/anybs.dist"
cat >"$E2E_TMP/new.ini" <<EOF
# dedisbench configuration
[dedisbench]
target = $E2E_TMP/n
procs = 2
file-size = 2MiB
block-size = 8KiB
access = uniform
dist = $E2E_TMP/anybs.dist
seed = 5
size = 3MiB
keep = true
EOF
expect_ok --config "$E2E_TMP/new.ini" --json "$J" --quiet
jcheck "$J" '.config | .block_size == 8192 and .procs == 2 and .file_size == 2097152 and .seed == 5
	and .keep == true and .access == "uniform" and .dist == "'"$E2E_TMP/anybs.dist"'" and .size == 3145728' \
	"new-style INI not reflected in config" .config
[ "$(jget "$J" .totals.ops)" -eq $((3 * 1024 * 1024 / 8192)) ] ||
	fail "new-style INI: totals.ops $(jget "$J" .totals.ops), want $((3 * 1024 * 1024 / 8192)) (size 3MiB / 8KiB)"
jcheck "$J" ".config.config == \"$E2E_TMP/new.ini\"" "config.config does not name the file" .config.config
[ "$(ls -A "$E2E_TMP/n" | wc -l)" -eq 2 ] || fail "keep = true: want 2 files, got: $(ls -A "$E2E_TMP/n")"
# ...and the command line still wins.
expect_ok --config "$E2E_TMP/new.ini" --block-size 4KiB --json "$J" --quiet
jcheck "$J" '.config.block_size == 4096' "--block-size did not override block-size = 8KiB" .config

# A key set twice in one file (directly, or through its original DEDISbench name) is refused,
# naming the line, rather than the last line silently winning; nothing is written.
mkdir "$E2E_TMP/d"
for pair in "procs = 2|procs = 3" "[execution]
nprocs = 2|[dedisbench]
procs = 3"; do
	printf '[dedisbench]\ntarget = %s\ntime = 1s\n%s\n%s\n' "$E2E_TMP/d" "${pair%%|*}" "${pair#*|}" >"$E2E_TMP/dup.ini"
	rc=0
	"$DEDISBENCH" --config "$E2E_TMP/dup.ini" --quiet 2>"$E2E_TMP/dup.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "a key set twice: exit $rc, want 2: $(cat "$E2E_TMP/dup.err")"
	lines=$(wc -l <"$E2E_TMP/dup.ini")
	grep -q "dup.ini:$lines: '[a-z]*': --procs is set a second time" "$E2E_TMP/dup.err" ||
		fail "a key set twice: not named at line $lines: $(cat "$E2E_TMP/dup.err")"
	[ -z "$(ls -A "$E2E_TMP/d")" ] || fail "a refused config file wrote: $(ls -A "$E2E_TMP/d")"
done
# An original key's bad value says which key it was, as what it was read.
printf '[execution]\nnprocs = many\n' >"$E2E_TMP/badlegacy.ini"
rc=0
"$DEDISBENCH" --config "$E2E_TMP/badlegacy.ini" --target null --quiet 2>"$E2E_TMP/badlegacy.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "badlegacy.ini:2: \[execution\] nprocs, read as --procs: 'many'" "$E2E_TMP/badlegacy.err" ||
	fail "a bad original key: exit $rc: $(cat "$E2E_TMP/badlegacy.err")"
# A section header without its ']' is named at its own line (it was ":1: unknown key 'nprocs'",
# the key under it blamed at the header's line number).
printf '# a job\n[execution\nnprocs = 1\n' >"$E2E_TMP/open.ini"
rc=0
"$DEDISBENCH" --config "$E2E_TMP/open.ini" --target null --quiet 2>"$E2E_TMP/open.err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(cat "$E2E_TMP/open.err")" = "dedisbench: config file $E2E_TMP/open.ini:2: a section header without its ']' (expected [section])" ] ||
	fail "[execution without ']': exit $rc: $(cat "$E2E_TMP/open.err")"

# rate = rRATE is the read rate: read-rate on another line sets it a second time (the last won).
printf '[d]\ntarget = null\nmode = mixed\nrate = r100\nread-rate = 50\nwrite-rate = 10\n' >"$E2E_TMP/rr.ini"
rc=0
"$DEDISBENCH" --config "$E2E_TMP/rr.ini" --quiet 2>"$E2E_TMP/rr.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "rr.ini:5: 'read-rate': --read-rate is set a second time" "$E2E_TMP/rr.err" ||
	fail "rate = r100 and read-rate = 50: exit $rc: $(cat "$E2E_TMP/rr.err")"
# Indented keys are keys (the INI reader took an indented line for the value above continued:
# "procs is set a second time" at the block-size line).
mkdir "$E2E_TMP/ind"
printf '[dedisbench]\n  procs = 2\n  block-size = 8KiB\n\tfile-size = 1MiB\n  target = %s\n  dist = %s\n' "$E2E_TMP/ind" \
	"$E2E_TMP/anybs.dist" >"$E2E_TMP/ind.ini"
expect_ok --config "$E2E_TMP/ind.ini" --json "$J" --quiet
jcheck "$J" '.config.procs == 2 and .config.block_size == 8192 and .config.file_size == 1048576' \
	"indented keys not read as keys" .config
# A line longer than the INI reader takes whole is named as such, at its own line (it was cut,
# its rest "line 3: not an INI line" of a 2-line file).
printf '[d]\nspace-cmd = %0300d\n' 0 >"$E2E_TMP/long.ini"
rc=0
"$DEDISBENCH" --config "$E2E_TMP/long.ini" --target null --quiet 2>"$E2E_TMP/long.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "long.ini:2: the line is longer than 198 characters" "$E2E_TMP/long.err" ||
	fail "a long line: exit $rc: $(cat "$E2E_TMP/long.err")"

# The command line wins over the file for the load too: -p over the file's rate, -n over its peak
# (refused as "exclude each other"); both on the command line is still refused.
printf '[d]\ntarget = null\nfile-size = 1MiB\nrate = 100\n' >"$E2E_TMP/rate.ini"
printf '[d]\ntarget = null\nfile-size = 1MiB\npeak = true\n' >"$E2E_TMP/peak.ini"
expect_ok --config "$E2E_TMP/rate.ini" -p --json "$J" --quiet
jcheck "$J" '.config.peak == true and .rate == null' "-p on the command line over the file's rate = 100" '{config: .config.peak, rate}'
expect_ok --config "$E2E_TMP/peak.ini" -n 2000 --json "$J" --quiet
jcheck "$J" '.rate.requested == 2000' "-n 2000 on the command line over the file's peak" .rate
rc=0
"$DEDISBENCH" --config "$E2E_TMP/rate.ini" -p -n 50 --quiet 2>"$E2E_TMP/pn.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "exclude each other" "$E2E_TMP/pn.err" || fail "-p and -n on one command line: exit $rc"

note "original and new-style INI files drive runs; the command line wins (the load too); indented keys read, long lines named"
