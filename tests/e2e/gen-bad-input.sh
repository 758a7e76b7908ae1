#!/bin/bash
# gen-bad-input.sh - dedisgen refuses bad input before reading anything: one line on stderr
# naming what and why, exit status 2, and no output file (nor temp file) left behind.
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
mkdir "$E2E_TMP/data" "$E2E_TMP/out"
head -c 10000 /dev/urandom >"$E2E_TMP/data/f"
mkfifo "$E2E_TMP/fifo"
printf '0 5\nx y\n' >"$E2E_TMP/bad.dist"

# expect_bad WHAT_IN_MESSAGE ARGS...: exit 2, one stderr line mentioning WHAT, nothing in out/
expect_bad() {
	local what=$1 rc=0
	shift
	timeout 20 "$DEDISGEN" "$@" >"$E2E_TMP/stdout" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "dedisgen $* exited $rc (want 2; 124: it hung): $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] || fail "dedisgen $*: not one line: $(cat "$E2E_TMP/err")"
	grep -q -- "$what" "$E2E_TMP/err" || fail "dedisgen $*: '$what' not in: $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/out")" ] || fail "dedisgen $* left: $(ls -A "$E2E_TMP/out")"
}
O=$E2E_TMP/out/o.dist
# --json - is standard output, which without -o already takes the distribution
expect_bad "--json -: standard output takes the distribution" "$E2E_TMP/data" --json -
expect_bad "nonexistent" "$E2E_TMP/nonexistent" -o "$O"
expect_bad "No such file" "$E2E_TMP/nonexistent" --db "$E2E_TMP/out/db" -o "$O"
expect_bad "not a directory, regular file or block device" "$E2E_TMP/fifo" -o "$O"
expect_bad "power of two" "$E2E_TMP/data" -b 3000 -o "$O"
expect_bad "power of two" "$E2E_TMP/data" -b 256 -o "$O"
expect_bad "power of two" "$E2E_TMP/data" -b 2MiB -o "$O"
expect_bad "not a number" "$E2E_TMP/data" -b 4k,x -o "$O"
expect_bad "given twice" "$E2E_TMP/data" -b 4096,4096 -o "$O"
expect_bad "empty block size" "$E2E_TMP/data" -b 4096, -o "$O"
expect_bad "empty block size" "$E2E_TMP/data" -b ,4096 -o "$O"
expect_bad "0 is out of range (at least 1 MiB)" "$E2E_TMP/data" --db-cache 0 -o "$O"
expect_bad "sha1 or sha256" "$E2E_TMP/data" --hash md5 -o "$O"
expect_bad "auto, pread or mmap" "$E2E_TMP/data" --read-method mmap2 -o "$O"
expect_bad "-o" "$E2E_TMP/data" -o "$E2E_TMP/nodir/o.dist" --json "$E2E_TMP/out/o.json"
expect_bad "--json" "$E2E_TMP/data" -o "$O" --json "$E2E_TMP/nodir/o.json"
expect_bad "unknown option" "$E2E_TMP/data" --frobnicate
# two outputs under one name: said by name (was a bare "File exists")
expect_bad "outputs --json $O and -o $O are the same file" "$E2E_TMP/data" -o "$O" --json "$O"
expect_bad "outputs --json $E2E_TMP/out/./o.4096 and -o $E2E_TMP/out/o.4096 are the same file" \
	"$E2E_TMP/data" -b 4096,8192 -o "$E2E_TMP/out/o" --json "$E2E_TMP/out/./o.4096"
expect_bad "no PATH" -o "$O"
expect_bad "-k" "$E2E_TMP/data" -k -o "$O"
expect_bad "several block sizes" "$E2E_TMP/data" -b 4096,8192
expect_bad "-d expects a block device" -d "$E2E_TMP/data" -o "$O"
expect_bad "bad.dist:2" show "$E2E_TMP/bad.dist"
# show and compare read distribution files, nothing else: a FIFO is not waited on, a device not
# read until memory runs out (under an address-space limit a build without the cap would hit)
expect_bad "$E2E_TMP/fifo: a FIFO, not a regular file" show "$E2E_TMP/fifo"
printf "0 5\n" >"$E2E_TMP/one.dist"
expect_bad "$E2E_TMP/fifo: a FIFO, not a regular file" compare "$E2E_TMP/one.dist" "$E2E_TMP/fifo"
if [ -z "${DEDIS_SANITIZED:-}" ]; then
	(ulimit -v 400000 && expect_bad "/dev/zero: a character device, not a regular file" show /dev/zero)
fi
expect_bad "power of two" "$E2E_TMP/data" --compress-sample 1/3 -o "$O"
expect_bad "not a rate" "$E2E_TMP/data" --compress-sample 0.1 -o "$O"
expect_bad "out of range" compare "$E2E_TMP/bad.dist" "$E2E_TMP/bad.dist" --max-tv 1.5
expect_bad "unknown option" show --no-locality "$E2E_TMP/bad.dist"
# a section from a newer dedis is refused by name, never misread
printf '# dedisgen 9\n0 5\n[locality 2]\nanalysed 5 0\n' >"$E2E_TMP/newer.dist"
expect_bad "newer.dist:3: section 'locality' version 2 is newer than this dedis reads (1)" show "$E2E_TMP/newer.dist"
printf "0 5\n" >"$E2E_TMP/good.dist"
expect_bad "nonexistent" compare "$E2E_TMP/good.dist" "$E2E_TMP/nonexistent"
expect_bad "no dedisgen analysis" merge "$E2E_TMP/data" -o "$O"
# a file under a DB's name that is not one: one line, Berkeley DB's own diagnostics folded into it
# (they were printed by the library: 101 lines for a 13 KB text file)
mkdir "$E2E_TMP/notdb"
for i in $(seq 2000); do echo "$i 1"; done >"$E2E_TMP/notdb/dedisgen-4096.db"
expect_bad "notdb/dedisgen-4096.db: not a Berkeley DB dedisgen analysis" merge "$E2E_TMP/notdb" -o "$O"
expect_bad "notdb/dedisgen-4096.db: not a Berkeley DB dedisgen analysis" "$E2E_TMP/data" --db "$E2E_TMP/notdb" -k -o "$O"
expect_bad "destination\|say where" merge "$E2E_TMP/data"
# an analysis DB from another hash is incompatible (with -k), and nothing is written
"$DEDISGEN" "$E2E_TMP/data" --db "$E2E_TMP/db" -q >/dev/null || fail "DB scan exited $?"
expect_bad "incompatible" "$E2E_TMP/data" --db "$E2E_TMP/db" -k --hash sha256 -o "$O"
# an output that is also an input (the same file, or inside a scanned tree) is never overwritten
cp "$E2E_TMP/data/f" "$E2E_TMP/known"
cp "$E2E_TMP/data/f" "$E2E_TMP/known.4096"
expect_bad "output -o $E2E_TMP/known is also an input" "$E2E_TMP/known" -o "$E2E_TMP/known"
expect_bad "output --json $E2E_TMP/known is also an input" "$E2E_TMP/known" --json "$E2E_TMP/known" -o "$O"
expect_bad "output -o $E2E_TMP/known.4096 is also an input" "$E2E_TMP/known.4096" -b 4096,8192 -o "$E2E_TMP/known"
expect_bad "inside the scanned directory" "$E2E_TMP/data" -o "$E2E_TMP/data/f"
expect_bad "inside the scanned directory" "$E2E_TMP/data" -o "$E2E_TMP/data/new.dist"
if command -v gnuplot >/dev/null; then
	expect_bad "inside the scanned directory" "$E2E_TMP/data" --plot "$E2E_TMP/data/f"
	# show and compare never render over a distribution they read (nor one read through a link)
	cp "$E2E_TMP/good.dist" "$E2E_TMP/keep.dist"
	ln -s keep.dist "$E2E_TMP/link.dist"
	expect_bad "output --plot $E2E_TMP/keep.dist is also an input" show "$E2E_TMP/keep.dist" --plot "$E2E_TMP/keep.dist"
	expect_bad "output --plot $E2E_TMP/keep.dist is also an input" show "$E2E_TMP/link.dist" --plot "$E2E_TMP/keep.dist"
	expect_bad "output --plot $E2E_TMP/keep.dist is also an input" \
		compare "$E2E_TMP/good.dist" "$E2E_TMP/keep.dist" --plot "$E2E_TMP/keep.dist"
	cmp -s "$E2E_TMP/good.dist" "$E2E_TMP/keep.dist" || fail "show/compare --plot replaced a distribution it read"
	# a PNG is renamed into place: a device or FIFO cannot take it, which is bad input said before
	# the scan (it was exit 1 after it), and a FIFO is not opened to find out (that waited for a reader)
	expect_bad "--plot /dev/null: not a regular file" "$E2E_TMP/data" -o "$O" --plot /dev/null
	expect_bad "--plot /dev/null: not a regular file" show "$E2E_TMP/good.dist" --plot /dev/null
	rc=0; timeout 60 "$DEDISGEN" "$E2E_TMP/data" -o "$O" --plot "$E2E_TMP/fifo" 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 2 ] && grep -q "fifo: not a regular file" "$E2E_TMP/err" ||
		fail "--plot FIFO exited $rc (want 2; 124: it waited on the FIFO): $(cat "$E2E_TMP/err")"
	[ -z "$(ls -A "$E2E_TMP/out")" ] || fail "--plot FIFO left: $(ls -A "$E2E_TMP/out")"
	[ -s "$E2E_TMP/stdout" ] && fail "a refused show/compare printed: $(cat "$E2E_TMP/stdout")"
	# a PNG in a directory that does not exist: refused before the report is printed
	expect_bad "--plot $E2E_TMP/nodir/p.png: $E2E_TMP/nodir: No such file" show "$E2E_TMP/good.dist" --plot "$E2E_TMP/nodir/p.png"
	[ -s "$E2E_TMP/stdout" ] && fail "show with a --plot it cannot write printed its report: $(cat "$E2E_TMP/stdout")"
	expect_bad "--plot $E2E_TMP/nodir/p.png: $E2E_TMP/nodir: No such file" \
		compare "$E2E_TMP/good.dist" "$E2E_TMP/good.dist" --plot "$E2E_TMP/nodir/p.png"
	[ -s "$E2E_TMP/stdout" ] && fail "compare with a --plot it cannot write printed: $(cat "$E2E_TMP/stdout")"
fi
# ... nor a database the scan writes (--db, or --mem-limit's spill directory under TMPDIR)
expect_bad "--db $E2E_TMP/data/db is inside the scanned directory" "$E2E_TMP/data" --db "$E2E_TMP/data/db" -o "$O"
mkdir "$E2E_TMP/data/tmp"
TMPDIR="$E2E_TMP/data/tmp" expect_bad "spill directory (TMPDIR) $E2E_TMP/data/tmp is inside the scanned directory" \
	"$E2E_TMP/data" --mem-limit 1MiB -o "$O"
rmdir "$E2E_TMP/data/tmp"
cmp -s "$E2E_TMP/known" "$E2E_TMP/data/f" && cmp -s "$E2E_TMP/known.4096" "$E2E_TMP/data/f" ||
	fail "an input was overwritten"
[ "$(ls -A "$E2E_TMP/data")" = f ] || fail "a refused run left files in the scanned tree: $(ls -A "$E2E_TMP/data")"
# overlapping PATHs would count files twice; so would a DB merged with itself
expect_bad "inside the directory" "$E2E_TMP/data" "$E2E_TMP/data/f" -o "$O"
expect_bad "repeats the directory" "$E2E_TMP/data" "$E2E_TMP/data/" -o "$O"
expect_bad "given twice" merge "$E2E_TMP/db" "$E2E_TMP/db" -o "$O"
# -o - is standard output (as no -o): one distribution there, no file named "-"; two sizes cannot
(cd "$E2E_TMP/out" && "$DEDISGEN" "$E2E_TMP/data" -o - -q >"$E2E_TMP/stdout.dist") || fail "-o - exited $?"
grep -q "^# block-size: 4096" "$E2E_TMP/stdout.dist" || fail "-o -: no distribution on standard output"
[ -z "$(ls -A "$E2E_TMP/out")" ] || fail "-o - wrote a file: $(ls -A "$E2E_TMP/out")"
expect_bad "-o -: standard output takes one distribution" "$E2E_TMP/data" -b 4096,8192 -o -
# an empty dataset: nothing to analyse
mkdir "$E2E_TMP/emptydir"
expect_bad "no data" "$E2E_TMP/emptydir" -o "$O"
note "bad input refused with exit 2, nothing written"

# Descriptors running out is the machine's failure, not bad input: the walk could not open the
# directory (it was skipped as unreadable, then "no data: nothing to analyse", exit 2) - exit 1
rc=0
(ulimit -n 5 && exec "$DEDISGEN" "$E2E_TMP/data" -o "$O") >"$E2E_TMP/stdout" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "Too many open files; nothing written$" "$E2E_TMP/err" ||
	fail "dedisgen out of descriptors: exit $rc (want 1): $(cat "$E2E_TMP/err")"
[ -z "$(ls -A "$E2E_TMP/out")" ] || fail "dedisgen out of descriptors left: $(ls -A "$E2E_TMP/out")"
note "out of descriptors: exit 1, nothing written"
exit 0
