#!/bin/bash
# gen-db-refusals.sh - a dedisgen run refused for bad input leaves a --db analysis as it was:
# still complete, still continued by -k and merged (exit 2 and one line, nothing destroyed).
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
D=$E2E_TMP
head -c 2M /dev/urandom >"$D/p1"
head -c 1M /dev/urandom >"$D/p2"
: >"$D/empty"
mkfifo "$D/fifo"
"$DEDISGEN" "$D/p1" --db "$D/db" -q -o "$D/before.dist" || fail "first scan exited $?"

# refused WHAT ARGS...: exit 2, one line naming WHAT; then the DB still merges to what it held
refused() {
	local what=$1 rc=0
	shift
	"$DEDISGEN" "$@" -q >/dev/null 2>"$D/err" || rc=$?
	[ "$rc" -eq 2 ] || fail "dedisgen $* exited $rc (want 2): $(cat "$D/err")"
	[ "$(wc -l <"$D/err")" -eq 1 ] || fail "dedisgen $*: not one line: $(cat "$D/err")"
	grep -q -- "$what" "$D/err" || fail "dedisgen $*: '$what' not in: $(cat "$D/err")"
	rc=0
	"$DEDISGEN" merge "$D/db" -q -o "$D/after.dist" 2>"$D/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "after dedisgen $*: merge of the DB exited $rc: $(cat "$D/err")"
	diff <(grep -v '^#' "$D/before.dist" | no_gran) <(grep -v '^#' "$D/after.dist") >&2 ||
		fail "after dedisgen $*: the DB no longer holds the analysis of p1"
}
refused "already holds an analysis" "$D/p1" --db "$D/db" -k
# -k continues one scan, which refuses a PATH inside a directory PATH: so does -k, either way round
mkdir "$D/tree"
head -c 100K /dev/urandom >"$D/tree/t"
# kminus DB-FIRST-PATH K-PATH WHAT: -k of K-PATH onto a DB of DB-FIRST-PATH: exit 2 saying WHAT
kminus() {
	local rc=0
	rm -rf "$D/tdb"
	"$DEDISGEN" "$1" --db "$D/tdb" -q -o "$D/t1.dist" || fail "scan of $1 exited $?"
	"$DEDISGEN" "$2" --db "$D/tdb" -k -q -o /dev/null 2>"$D/err" || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <"$D/err")" -eq 1 ] && grep -q -- "$3" "$D/err" ||
		fail "-k of $2 onto an analysis of $1 exited $rc: $(cat "$D/err")"
	"$DEDISGEN" merge "$D/tdb" -q -o "$D/t2.dist" || fail "after the refused -k of $2: merge exited $?"
	diff <(grep -v '^#' "$D/t1.dist" | no_gran) <(grep -v '^#' "$D/t2.dist") >&2 || fail "the refused -k of $2 changed the DB"
}
kminus "$D/tree" "$D/tree/t" "already holds an analysis of $D/tree, which holds $D/tree/t: -k would count"
kminus "$D/tree/t" "$D/tree" "already holds an analysis of $D/tree/t, which is inside $D/tree: -k would count"
# an output named as the DB's own file would be renamed over the analysis once it is written
refused "output -o $D/db/dedisgen-4096.db is a database file of $D/db" "$D/p2" --db "$D/db" -k -o "$D/db/dedisgen-4096.db"
refused "output --json $D/db/dedisgen-4096.db is a database file of $D/db" "$D/p2" --db "$D/db" \
	--json "$D/db/dedisgen-4096.db" -o /dev/null
refused "output -o $D/db/dedisgen-4096.db is a database file of $D/db" merge "$D/db" -o "$D/db/dedisgen-4096.db"
# -k adds to the analysis already in the DB: a block size (or a DB) without one is refused
refused "no dedisgen analysis at block size 8192" "$D/p2" --db "$D/db" -k -b 4096,8192 -o "$D/kd.dist"
[ -e "$D/db/dedisgen-8192.db" ] && fail "-k with a block size the DB lacks created one"
refused "no dedisgen analysis at block size 4096" "$D/p2" --db "$D/none" -k
[ -e "$D/none" ] && fail "-k onto no DB created $D/none"
# a refused run into a new DB leaves no DB behind
refused "no data" "$D/empty" --db "$D/new"
[ -e "$D/new" ] && fail "a refused run left a new DB: $(ls -A "$D/new")"
refused "no data" "$D/empty" --db "$D/new" -b 4096,8192
[ -e "$D/new" ] && fail "a refused run at two block sizes left a new DB: $(ls -A "$D/new")"
# and -k still continues it
"$DEDISGEN" "$D/p2" --db "$D/db" -k -q -o /dev/null || fail "-k after the refusals exited $?"
note "refused runs leave the DB's analysis complete"
exit 0
