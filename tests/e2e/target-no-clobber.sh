#!/bin/bash
# Targets never clobber what is not dedisbench's (issue 12, finding 1): inside a target directory
# a symbolic link (dangling or not) is never followed, a hard link or a regular file holding
# someone's data is refused (exit 2, one line, nothing written) unless --force, and a file
# dedisbench wrote earlier is recognised by its blocks (every one a run would write; a run that only
# reads trusts the xattr mark) and reused; another user's file is refused unless --force.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
D=$E2E_TMP/d
mkdir "$D"
VICTIM=$E2E_TMP/victim
printf 'precious data, not a benchmark block\n' >"$VICTIM"
cp "$VICTIM" "$E2E_TMP/victim.orig"
common=(--procs 2 --file-size 1MiB --quiet)

# refused ARGS...: exit 2, exactly one line on stderr, which must match $WANT
refused() {
	run_bench "$@"
	[ "$RC" -eq 2 ] || fail "dedisbench $*: exit $RC, want 2; stderr: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "want one line on stderr: $(cat "$E2E_TMP/err")"
	grep -Eq "$WANT" "$E2E_TMP/err" || fail "stderr does not match '$WANT': $(cat "$E2E_TMP/err")"
}
untouched() {
	cmp -s "$VICTIM" "$E2E_TMP/victim.orig" || fail "$1: the victim file was overwritten"
}

# 1. A symbolic link named like a worker file: refused even with --force; the file it points to
# is untouched, the link stays, and no other worker file was created.
ln -s "$VICTIM" "$D/dedisbench.0"
WANT="dedisbench\.0 is a symbolic link"
refused --target "$D" "${common[@]}"
untouched "symlink"
refused --target "$D" "${common[@]}" --force
untouched "symlink with --force"
[ -L "$D/dedisbench.0" ] || fail "the link was removed or replaced"
[ "$(ls -A "$D")" = dedisbench.0 ] || fail "files were created beside the link: $(ls -A "$D")"
rm "$D/dedisbench.0"

# 2. A dangling link: following it would create the file it names.
ln -s "$E2E_TMP/created-through-link" "$D/dedisbench.1"
WANT="dedisbench\.1 is a symbolic link"
refused --target "$D" "${common[@]}"
[ ! -e "$E2E_TMP/created-through-link" ] || fail "a file was created through a dangling link"
rm "$D/dedisbench.1"

# 3. A hard link to someone's file, and a regular file holding someone's data: refused without
# --force and left as they were.
ln "$VICTIM" "$D/dedisbench.0"
WANT="dedisbench\.0: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$D" "${common[@]}"
untouched "hard link"
rm "$D/dedisbench.0"
head -c 300000 /dev/urandom >"$D/dedisbench.1"
cp "$D/dedisbench.1" "$E2E_TMP/d1.orig"
WANT="dedisbench\.1: it holds data dedisbench did not write"
refused --target "$D" "${common[@]}"
cmp -s "$D/dedisbench.1" "$E2E_TMP/d1.orig" || fail "a refused run changed dedisbench.1"
[ ! -e "$D/dedisbench.0" ] || fail "a refused run created dedisbench.0"
# ...and taken with --force (kept afterwards: this run did not create it)
expect_ok --target "$D" "${common[@]}" --force
cmp -s "$D/dedisbench.1" "$E2E_TMP/d1.orig" && fail "--force did not write dedisbench.1"
[ -f "$D/dedisbench.1" ] || fail "--force removed a file the run did not create"
rm -f "$D"/dedisbench.*

# 4. Files dedisbench wrote are reused without --force: kept ones (marked), and copies that lost
# the mark (cat does not copy xattrs) but whose blocks are dedisbench's, of another block size.
printf '0 1000\n1 100\n' >"$E2E_TMP/anybs.dist" # (the original DEDISbench format: any -b)
expect_ok --target "$D" "${common[@]}" --keep --block-size 8KiB --dist "$E2E_TMP/anybs.dist"
expect_ok --target "$D" "${common[@]}" --keep
for i in 0 1; do
	cat "$D/dedisbench.$i" >"$E2E_TMP/copy" && rm "$D/dedisbench.$i" && mv "$E2E_TMP/copy" "$D/dedisbench.$i"
done
expect_ok --target "$D" "${common[@]}" --keep --json "$E2E_TMP/reuse.json"
jcheck "$E2E_TMP/reuse.json" '.status == "ok" and .writes.ops == 512'
# a file that holds nothing (a hole) has nothing to lose
rm "$D/dedisbench.0" && truncate -s 1M "$D/dedisbench.0"
expect_ok --target "$D" "${common[@]}" --keep
rm -f "$D"/dedisbench.*

# 5. An existing file named as the target: someone's data is refused, a sparse file is taken.
F=$E2E_TMP/image
head -c 2M /dev/urandom >"$F"
cp "$F" "$E2E_TMP/image.orig"
WANT="target $F: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$F" "${common[@]}"
cmp -s "$F" "$E2E_TMP/image.orig" || fail "a refused run changed $F"
expect_ok --target "$F" "${common[@]}" --force
rm "$F" && truncate -s 2M "$F"
expect_ok --target "$F" "${common[@]}"
expect_ok --target "$F" "${common[@]}" # now dedisbench's own

# 6. One dedisbench block is not a claim on what follows it: a worker file's first block in front
# of someone's data is refused, written over a file dedisbench marked (the mark stays with the
# inode), as a target and as a worker file.
expect_ok --target "$D" --procs 1 --file-size 4MiB --keep --quiet
{ head -c 4096 "$D/dedisbench.0"; head -c 8M /dev/urandom; } >"$F"
cp "$F" "$E2E_TMP/f.orig"
WANT="target $F: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$F" --procs 1 --quiet
cmp -s "$F" "$E2E_TMP/f.orig" || fail "a dedisbench block in front of foreign data: the file was overwritten"
cat "$F" >"$D/dedisbench.0" # cat: no mark
WANT="dedisbench\.0: it holds data dedisbench did not write"
refused --target "$D" --procs 1 --file-size 8MiB --quiet
cmp -s "$D/dedisbench.0" "$E2E_TMP/f.orig" || fail "the worker file holding foreign data after one block was overwritten"
# ... nor, in a file without the mark, are 64 MiB of written zeros (what is read whole) in front of
# data off a MiB boundary
rm -f "$D"/dedisbench.* "$F" && { head -c 64M /dev/zero; head -c 6M /dev/zero; head -c 4096 /dev/zero; head -c 800K /dev/urandom; } >"$F"
cp "$F" "$E2E_TMP/f.orig"
WANT="target $F: it holds data dedisbench did not write"
refused --target "$F" --procs 1 --quiet
cmp -s "$F" "$E2E_TMP/f.orig" || fail "data after 70 MiB of written zeros was overwritten"
rm -f "$F" "$E2E_TMP/f.orig"

# 7. An existing file is used at its own size: one too small for a block per worker is refused
# (not grown to the default 1 GiB a worker), and --file-size extends it on request.
truncate -s 5000 "$F"
WANT="target $F \(5000 bytes\) holds less than one 4096-byte block per worker \(2\); give --file-size to extend it"
refused --target "$F" --procs 2 --quiet
[ "$(stat -c %s "$F")" -eq 5000 ] || fail "a refused run resized $F to $(stat -c %s "$F") bytes"
expect_ok --target "$F" --procs 2 --file-size 1MiB --quiet
[ "$(stat -c %s "$F")" -eq 2097152 ] || fail "--file-size 1MiB x 2: $F is $(stat -c %s "$F") bytes"
rm -f "$F"
# 8. A run that only reads, with --force, on someone's file (or worker file) reads it and leaves it
# as it was: unmarked, so a later writing run still refuses it without --force. It was marked, and
# the later run, taking it for dedisbench's, overwrote the data 5 MiB in.
{ head -c 5M /dev/zero; printf 'IMPORTANT USER DATA'; head -c 3M /dev/zero; } >"$F"
cp "$F" "$E2E_TMP/f.orig"
WANT="target $F: it holds data dedisbench did not write; refusing to use it without --force"
refused --target "$F" --procs 1 --mode read --populate none --size 4KiB --quiet
expect_ok --target "$F" --procs 1 --mode read --populate none --size 4KiB --quiet --force
WANT="target $F: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$F" --procs 1 --file-size 8MiB --quiet
cmp -s "$F" "$E2E_TMP/f.orig" || fail "someone's file was changed after a read run with --force"
rm -f "$D"/dedisbench.* && cp "$F" "$D/dedisbench.0"
expect_ok --target "$D" --procs 1 --file-size 8MiB --mode read --populate none --size 4KiB --quiet --force --keep
WANT="dedisbench\.0: it holds data dedisbench did not write"
refused --target "$D" --procs 1 --file-size 8MiB --quiet
cmp -s "$D/dedisbench.0" "$E2E_TMP/f.orig" || fail "a foreign worker file was changed after a read run with --force"
rm -f "$F" "$D"/dedisbench.* "$E2E_TMP/f.orig"
# 9. Every block a writing run would write is looked at (issue 36, item 9), not a sample: foreign data
# after 64 MiB + 64 KiB of written zeros, and a kept (marked) worker file rewritten in place by cp
# (the mark stays with the inode, and vouches for nothing), keep their data.
{ head -c 64M /dev/zero; head -c 64K /dev/zero; head -c 960K /dev/urandom; } >"$F"
cp "$F" "$E2E_TMP/f.orig"
WANT="target $F: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$F" --procs 1 --quiet
cmp -s "$F" "$E2E_TMP/f.orig" || fail "foreign data after 64 MiB + 64 KiB of zeros was overwritten"
rm -f "$F" "$E2E_TMP/f.orig"
expect_ok --target "$D" --procs 1 --file-size 8MiB --keep --quiet
{ head -c 1M "$D/dedisbench.0"; head -c 64K /dev/zero; head -c 960K /dev/urandom; head -c 6M /dev/zero; } >"$E2E_TMP/src"
cp "$E2E_TMP/src" "$D/dedisbench.0"
WANT="dedisbench\.0: it holds data dedisbench did not write; refusing to overwrite it without --force"
refused --target "$D" --procs 1 --file-size 8MiB --quiet
cmp -s "$D/dedisbench.0" "$E2E_TMP/src" || fail "a marked worker file rewritten by cp was overwritten"
# ...but a run that only reads takes a file carrying the mark as it is: a corrupted block in a
# kept file is what its verification finds (exit 1), not a refusal
rm -f "$D"/dedisbench.* "$E2E_TMP/src"
expect_ok --target "$D" --procs 1 --file-size 4MiB --seed 7 --keep --quiet
head -c 4096 /dev/urandom | dd of="$D/dedisbench.0" bs=4096 seek=2 conv=notrunc status=none
run_bench --target "$D" --procs 1 --file-size 4MiB --mode read --populate none --verify final --seed 7 --quiet
[ "$RC" -eq 1 ] && grep -q "1 mismatched block" "$E2E_TMP/err" ||
	fail "a read-only verify of a marked file with a corrupted block: exit $RC, want 1: $(cat "$E2E_TMP/err")"
rm -f "$D"/dedisbench.*

# 10. Another user's file in a shared (mode 1777) directory is not taken over without --force, even
# empty (issue 36, item 10): it would be left behind holding the run's data, owned by them.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	chmod 711 "$E2E_TMP"
	S=$E2E_TMP/shared
	mkdir -m 1777 "$S"
	setpriv --reuid=nobody --regid=nogroup --clear-groups touch "$S/dedisbench.0"
	WANT="dedisbench\.0 belongs to another user \(uid $(id -u nobody)\); refusing to write it without --force"
	refused --target "$S" --procs 1 --file-size 1MiB --quiet
	[ ! -s "$S/dedisbench.0" ] || fail "another user's empty file was written"
	expect_ok --target "$S" --procs 1 --file-size 1MiB --quiet --force
	rm -rf "$S"
else
	note "skipped: another user's file (needs root, setpriv and the user nobody)"
fi
note "links never followed, foreign data refused (exit 2, untouched) unless --force, own files reused; a read run leaves another's file unmarked"
