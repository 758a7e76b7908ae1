#!/bin/bash
# Outputs on a file system that is really full (a small tmpfs, not the fault shim): each tool
# exits 1 with one line naming the output, leaves no temp file and keeps the earlier output
# under the name. Needs root (mount); skipped otherwise.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
mktmp
F=$E2E_TMP/full
mkdir "$F" "$E2E_TMP/orig"
mount -t tmpfs -o size=1M tmpfs "$F" 2>/dev/null || skip "cannot mount a tmpfs"
on_exit 'umount "$F"'

mkdir "$E2E_TMP/data"
for i in 1 2 3; do head -c 100000 /dev/urandom >"$E2E_TMP/data/f$i"; cp "$E2E_TMP/data/f$i" "$E2E_TMP/data/g$i"; done
"$DEDISGEN" "$E2E_TMP/data" -o "$E2E_TMP/d.dist" -q || fail "dedisgen scan failed"
"$DEDISENGINE" format "$E2E_TMP/vol" --size 1MiB -q
"$DEDISENGINE" import "$E2E_TMP/vol" "$E2E_TMP/data/f1" -q
"$DEDISBENCH" --target null --procs 1 --file-size 1MiB -q --json "$E2E_TMP/r.json" || fail "dedisbench run failed"

# fill: takes every page left, then gives back ROOM bytes
fill() {
	rm -f "$F/filler"
	cat /dev/zero >"$F/filler" 2>/dev/null || true
	truncate -s "-$1" "$F/filler"
}
# full_fails LABEL OUTPUT CMD...: exit 1, one line on stderr naming OUTPUT, OUTPUT as it was
# before (saved in orig/ by keep), no temp file beside it
keep() { cp "$1" "$E2E_TMP/orig/$(basename "$1")"; }
full_fails() {
	local label=$1 out=$2 rc=0
	shift 2
	"$@" >/dev/null 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 1 ] || fail "$label on a full file system: exit $rc, want 1; stderr: $(cat "$E2E_TMP/err")"
	[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -qF "$out" "$E2E_TMP/err" ||
		fail "$label: want one line naming $out, got: $(cat "$E2E_TMP/err")"
	cmp -s "$out" "$E2E_TMP/orig/$(basename "$out")" || fail "$label: the earlier $out was replaced"
	[ -z "$(find "$F" -name '*.tmp.*')" ] || fail "$label: temp files left: $(find "$F" -name '*.tmp.*')"
}

# --plot: gnuplot exits 0 when its PNG could not be written (empty, or cut short); the tools
# took that for a picture: exit 0, and the earlier PNG replaced by the stump.
if command -v gnuplot >/dev/null; then
	mkdir "$F/cmp"
	"$DEDISGEN" show "$E2E_TMP/d.dist" --plot "$F/s.png" >/dev/null || fail "show --plot failed"
	"$DEDISGEN" compare "$E2E_TMP/d.dist" "$E2E_TMP/d.dist" --plot "$F/c.png" >/dev/null || fail "compare --plot failed"
	"$DEDISENGINE" stat "$E2E_TMP/vol" --plot "$F/v.png" >/dev/null || fail "stat --plot failed"
	"$DEDISBENCH" compare "$E2E_TMP/r.json" --output-dir "$F/cmp" --plot >/dev/null || fail "dedisbench compare --plot failed"
	for f in "$F/s.png" "$F/c.png" "$F/v.png" "$F/cmp/compare-iops.png"; do keep "$f"; done
	# room for the CSV and a PNG's first pages, not a whole one (each is over 10 KiB)
	for room in 0 8192; do
		fill $room
		full_fails "dedisgen show --plot (room $room)" "$F/s.png" "$DEDISGEN" show "$E2E_TMP/d.dist" --plot "$F/s.png"
		fill $room
		full_fails "dedisgen compare --plot (room $room)" "$F/c.png" \
			"$DEDISGEN" compare "$E2E_TMP/d.dist" "$E2E_TMP/d.dist" --plot "$F/c.png"
		fill $room
		full_fails "dedisengine stat --plot (room $room)" "$F/v.png" "$DEDISENGINE" stat "$E2E_TMP/vol" --plot "$F/v.png"
	done
	fill 8192
	full_fails "dedisbench compare --plot" "$F/cmp/compare-iops.png" \
		"$DEDISBENCH" compare "$E2E_TMP/r.json" --output-dir "$F/cmp" --plot
	rm -f "$F/filler"
fi
# stat --plot with /tmp full (its data file goes there): exit 1, the earlier PNG kept. It wrote
# no data, and gnuplot drew an empty chart over the PNG, exit 0. In a mount namespace whose /tmp
# is a full tmpfs; what lived under the real /tmp is reached through a bind mount.
# (a chroot or a container may give no private mount namespace: unshare fails "cannot change root
# filesystem propagation"; that case is then left out, saying so)
ns_why=
if ! command -v gnuplot >/dev/null; then
	ns_why="gnuplot is missing"
elif ! command -v unshare >/dev/null; then
	ns_why="unshare is missing"
elif ! unshare -m --propagation private true 2>/dev/null; then
	ns_why="no private mount namespace here (unshare -m --propagation private failed: a chroot?)"
fi
[ -z "$ns_why" ] || note "stat --plot with /tmp full: not tried: $ns_why"
if [ -z "$ns_why" ]; then
	V=$(mktemp -d /var/tmp/dedis-e2e-outputs-full-fs.XXXXXX)
	on_exit "rmdir '$V/oldtmp' '$V' 2>/dev/null"
	mkdir "$V/oldtmp"
	via() { case $1 in /tmp/*) printf '%s\n' "$V/oldtmp/${1#/tmp/}" ;; *) printf '%s\n' "$1" ;; esac; }
	rc=0
	unshare -m --propagation private sh -c 'mount --rbind /tmp "$1" && mount -t tmpfs -o size=4k tmpfs /tmp &&
		{ cat /dev/zero >/tmp/filler 2>/dev/null || :; } && DEDIS_PLOTS_DIR=$2 "$3" stat "$4" --plot "$5" >/dev/null' \
		sh "$V/oldtmp" "$(via "$top_srcdir/plots")" "$(via "$DEDISENGINE")" "$(via "$E2E_TMP/vol")" "$(via "$F/v.png")" \
		2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "^dedisengine: --plot: writing the data to /tmp/.*: No space left on device" "$E2E_TMP/err" ||
		fail "stat --plot with /tmp full: exit $rc, want 1 and one line: $(cat "$E2E_TMP/err")"
	cmp -s "$F/v.png" "$E2E_TMP/orig/v.png" || fail "stat --plot with /tmp full replaced the earlier PNG"
fi

# dedisbench's reports: the line names the report (it said "cannot write a report"), and the JSON,
# written elsewhere, says the run failed with that error (it said "ok" beside exit status 1)
mkdir "$E2E_TMP/t"
for rep in --dist-report --access-report; do
	out=$F/report${rep#--}
	rm -rf "$F/filler" "$E2E_TMP/t/"*
	"$DEDISBENCH" --target "$E2E_TMP/t" --procs 1 --file-size 1MiB -q "$rep" "$out" || fail "$rep failed"
	keep "$out"
	rm -rf "$E2E_TMP/t/"*
	fill 0
	full_fails "dedisbench $rep" "$out" "$DEDISBENCH" --target "$E2E_TMP/t" --procs 1 --file-size 1MiB -q "$rep" "$out" \
		--json "$E2E_TMP/r.json"
	grep -q -- "cannot write $rep $out: No space left on device" "$E2E_TMP/err" || fail "$rep: stderr $(cat "$E2E_TMP/err")"
	jcheck "$E2E_TMP/r.json" ".status == \"failed\" and .error == \"cannot write $rep $out: No space left on device\" and .totals.ops == 256"
	[ -z "$(ls -A "$E2E_TMP/t")" ] || fail "$rep: the run left $(ls -A "$E2E_TMP/t")"
done
rm -f "$F/filler"

# The run lock's directory full: refused in one line, and no empty lock file left behind (it
# stayed, for every target a run was refused on).
fill 0
mkdir -p "$E2E_TMP/t"
rm -rf "$E2E_TMP/t/"*
rc=0
DEDIS_LOCK_DIR=$F "$DEDISBENCH" --target "$E2E_TMP/t" --procs 1 --file-size 1MiB -q 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -ne 0 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "cannot write the run lock $F/dedis-.*: No space left on device" "$E2E_TMP/err" ||
	fail "run lock on a full file system: exit $rc: $(cat "$E2E_TMP/err")"
rc=0
DEDIS_LOCK_DIR=$F "$DEDISENGINE" fsck "$E2E_TMP/vol" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -ne 0 ] && grep -q "cannot write the run lock" "$E2E_TMP/err" || fail "dedisengine fsck, lock on a full file system: exit $rc: $(cat "$E2E_TMP/err")"
[ -z "$(find "$F" -name 'dedis-*.lock')" ] || fail "run locks left on the full file system: $(find "$F" -name 'dedis-*.lock')"
[ -z "$(ls -A "$E2E_TMP/t")" ] || fail "the refused run wrote into its target"
rm -f "$F/filler"

# A latency log that does not fit: named (it said "latency log of T/dedisbench.0", the target's
# file, as if that had failed), and the JSON says so.
fill 32768
rm -rf "$E2E_TMP/t/"*
rc=0
"$DEDISBENCH" --target "$E2E_TMP/t" --procs 1 --file-size 16MiB -q --output-dir "$F/od" --latency-log \
	--json "$E2E_TMP/lat.json" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "^dedisbench: worker 0: cannot write its latency log $F/od/latency.0.csv: No space left on device$" "$E2E_TMP/err" ||
	fail "a latency log that does not fit: exit $rc: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/lat.json" ".status == \"failed\" and (.error | contains(\"latency.0.csv\"))"
rm -rf "$F/filler" "$F/od"

# A time series that does not fit: named first, and the JSON says the run failed with it (its
# rows' write errors went unchecked: the CSV was left empty, and only the plot data written after
# the run was said to have failed).
fill 0
rc=0
"$DEDISBENCH" --target null --procs 1 --file-size 1MiB --time 1500ms --rate 100 -q --output-dir "$F/ts" \
	--json "$E2E_TMP/ts.json" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && [ "$(head -1 "$E2E_TMP/err")" = "dedisbench: cannot write the time series $F/ts/timeseries.csv: No space left on device" ] ||
	fail "a time series that does not fit: exit $rc: $(cat "$E2E_TMP/err")"
jcheck "$E2E_TMP/ts.json" ".status == \"failed\" and (.error | contains(\"timeseries.csv\")) and .totals.ops > 0"
rm -rf "$F/filler" "$F/ts"

# A new --ledger that does not fit: refused before the run (its room is taken at creation). It
# was created sparse and mapped: the workers' first writes to it died of SIGBUS mid-run ("worker
# killed by signal 7"), the ledger left behind.
fill 8192
rm -rf "$E2E_TMP/t/"*
rc=0
"$DEDISBENCH" --target "$E2E_TMP/t" --procs 2 --file-size 64MiB -q --ledger "$F/ledger" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] && [ "$(cat "$E2E_TMP/err")" = "dedisbench: --ledger $F/ledger: No space left on device" ] ||
	fail "a --ledger that does not fit: exit $rc, want 2 and one line: $(cat "$E2E_TMP/err")"
[ -z "$(find "$F" -name 'ledger*')" ] || fail "a --ledger that does not fit was left: $(find "$F" -name 'ledger*')"
[ -z "$(ls -A "$E2E_TMP/t")" ] || fail "a --ledger that does not fit: the run wrote its target"
rm -f "$F/filler"

# dedisgen --db on a file system that fills up: one line naming the DB file (it said "Berkeley
# DB sync: No space left on device"), and the DB file the run created is gone - it was left
# without its metadata record, and every later scan refused it ("not a dedisgen analysis").
mkdir "$E2E_TMP/big"
for i in 1 2 3 4 5 6 7 8; do head -c 16M /dev/urandom >"$E2E_TMP/big/f$i"; done # a DB of 2.8 MiB
"$DEDISGEN" "$E2E_TMP/big" --db "$E2E_TMP/bigdb" -o /dev/null -q || fail "dedisgen --db failed"
fill 262144
rc=0
"$DEDISGEN" "$E2E_TMP/big" --db "$F/db" -o "$E2E_TMP/x.dist" -q 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] || fail "dedisgen --db on a full file system: exit $rc, want 1: $(cat "$E2E_TMP/err")"
[ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -qF "$F/db/dedisgen-4096.db: Berkeley DB" "$E2E_TMP/err" ||
	fail "dedisgen --db on a full file system: want one line naming the DB file, got: $(cat "$E2E_TMP/err")"
[ ! -e "$F/db" ] || fail "dedisgen --db on a full file system left $(ls -A "$F/db")"
[ ! -e "$E2E_TMP/x.dist" ] && [ -z "$(find "$E2E_TMP" -maxdepth 1 -name 'x.dist.tmp.*')" ] ||
	fail "dedisgen --db on a full file system left its output"
rm -f "$F/filler"
"$DEDISGEN" "$E2E_TMP/data" --db "$F/db" -o /dev/null -q || fail "the next dedisgen --db $F/db failed"
rm -rf "$F/db"
# ... and merge's spill directory (--mem-limit, TMPDIR full): named, removed, exit 1 - also when
# the spill fails while the inputs are read (a small cache: it said exit 2, bad input)
for cache in 64MiB 1MiB; do
	fill 65536
	rc=0
	TMPDIR=$F "$DEDISGEN" merge "$E2E_TMP/bigdb" --mem-limit 64KiB --db-cache $cache -o "$E2E_TMP/x.dist" -q \
		2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 1 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "$F/dedisgen-spill\..*/dedisgen-4096.db: Berkeley DB" "$E2E_TMP/err" ||
		fail "merge spilling to a full TMPDIR (cache $cache): exit $rc, want 1 and one line naming the spill DB: $(cat "$E2E_TMP/err")"
	[ -z "$(find "$F" -name 'dedisgen-spill*')" ] || fail "merge (cache $cache) left its spill directory"
done
rm -f "$F/filler"
exit 0
