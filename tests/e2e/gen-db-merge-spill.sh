#!/bin/bash
# gen-db-merge-spill.sh - the Berkeley DB paths give what memory gives: --db (byte-identical
# file), --mem-limit forcing spills, 1 thread or 4 (merged or spilled), -k extending an analysis (sections included: one stream), and
# merge of two halves == whole (records; sections: samples pooled, locality summed per part).
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
W=$E2E_TMP/whole
mkdir -p "$W/h1" "$W/h2"
# Deterministic pseudo-random blocks (AES-CTR keystream); copies made by reusing pieces, so both
# halves share contents and each holds repeats of its own.
stream() { openssl enc -aes-128-ctr -nosalt -K "$1" -iv 0 </dev/zero 2>/dev/null | head -c "$2"; }
stream 01 3000000 >"$E2E_TMP/s1"
stream 02 2000000 >"$E2E_TMP/s2"
head -c 1200000 "$E2E_TMP/s1" >"$W/h1/a"
cat "$E2E_TMP/s1" >"$W/h1/b"
tail -c 409600 "$E2E_TMP/s2" >"$W/h1/c"
cat "$E2E_TMP/s2" "$E2E_TMP/s2" >"$W/h2/d"
head -c 600000 "$E2E_TMP/s1" >"$W/h2/e"
truncate -s 1M "$W/h2/sparse"
for i in 1 2 3 4 5 6 7 8; do head -c $((i * 3001)) "$E2E_TMP/s2" >"$W/h2/small$i"; done
records() { grep -v '^#\s*\(dedisgen\|source\)' "$1"; } # all but the version and source lines
rows() { sed '/^\[/,$d' "$1" | grep -v '^#'; }              # the records alone
section() { sed -n "/^\[$2 /,/^\[/p" "$1" | grep -v '^[#[]'; }
field() { section "$1" "$2" | awk -v k="$3" '$1 == k { print $'"${4:-2}"' }'; }

"$DEDISGEN" "$W" -b 4096,16384 -o "$E2E_TMP/mem.dist" -q || fail "memory scan exited $?"

# --db: byte-identical files (same header: same sources, bytes, zero blocks)
"$DEDISGEN" "$W" -b 4096,16384 --db "$E2E_TMP/db" -o "$E2E_TMP/db.dist" -q || fail "--db scan exited $?"
for bs in 4096 16384; do
	cmp "$E2E_TMP/mem.dist.$bs" "$E2E_TMP/db.dist.$bs" || fail "--db differs from memory at $bs"
done
[ -f "$E2E_TMP/db/dedisgen-4096.db" ] || fail "no DB file in --db DIR"

# --mem-limit small enough to spill many times (temporary DB), same bytes
"$DEDISGEN" "$W" -b 4096,16384 --mem-limit 64KiB -o "$E2E_TMP/spill.dist" --json "$E2E_TMP/spill.json" -q ||
	fail "--mem-limit scan exited $?"
for bs in 4096 16384; do
	cmp "$E2E_TMP/mem.dist.$bs" "$E2E_TMP/spill.dist.$bs" || fail "--mem-limit differs from memory at $bs"
done
jcheck "$E2E_TMP/spill.json" '.results[0].spills >= 2' "--mem-limit 64KiB did not spill"
ls -d /var/tmp/dedisgen-spill.* 2>/dev/null | while read -r d; do
	[ -O "$d" ] && find "$d" -newer "$E2E_TMP/spill.json" | grep -q . && fail "spill dir $d left behind"
done
# threads: each counts into its own indexes, merged at the end (memory) or spilled (--mem-limit):
# 1 thread and 4 give the same bytes, sections included (sampling and locality do not depend on
# which thread hashed what)
"$DEDISGEN" "$W" -b 4096,16384 -t 1 -o "$E2E_TMP/t1.dist" -q || fail "-t 1 exited $?"
"$DEDISGEN" "$W" -b 4096,16384 -t 4 -o "$E2E_TMP/t4.dist" -q || fail "-t 4 exited $?"
"$DEDISGEN" "$W" -b 4096,16384 -t 4 --mem-limit 64KiB -o "$E2E_TMP/t4s.dist" -q || fail "-t 4 --mem-limit exited $?"
for bs in 4096 16384; do
	cmp "$E2E_TMP/mem.dist.$bs" "$E2E_TMP/t1.dist.$bs" || fail "-t 1 differs at $bs"
	cmp "$E2E_TMP/mem.dist.$bs" "$E2E_TMP/t4.dist.$bs" || fail "-t 4 differs at $bs"
	cmp "$E2E_TMP/mem.dist.$bs" "$E2E_TMP/t4s.dist.$bs" || fail "-t 4 --mem-limit differs at $bs"
done
# --mem-limit with --db: spills into it
"$DEDISGEN" "$W" -b 4096 --mem-limit 64KiB --db "$E2E_TMP/dbl" -o "$E2E_TMP/dbl.dist" -q || fail "--db --mem-limit exited $?"
cmp "$E2E_TMP/mem.dist.4096" "$E2E_TMP/dbl.dist" || fail "--db --mem-limit differs from memory"

# merge of the halves == the whole (records and counts; the source lines name the halves)
"$DEDISGEN" "$W/h1" -b 4096,16384 --db "$E2E_TMP/d1" -o "$E2E_TMP/half1.dist" -q || fail "half 1 exited $?"
"$DEDISGEN" "$W/h2" -b 4096,16384 --db "$E2E_TMP/d2" -o "$E2E_TMP/half2.dist" -q || fail "half 2 exited $?"
"$DEDISGEN" merge "$E2E_TMP/d1" "$E2E_TMP/d2" -o "$E2E_TMP/merged.dist" --db "$E2E_TMP/dm" \
	--json "$E2E_TMP/merged.json" -q || fail "merge exited $?"
for bs in 4096 16384; do
	diff <(rows "$E2E_TMP/mem.dist.$bs") <(rows "$E2E_TMP/merged.dist.$bs") >&2 ||
		fail "merge of the halves differs from the whole at $bs"
	# locality: each half as measured within it, summed (analysed, duplicates, sequential)
	for k in analysed duplicates; do
		for col in 2 3; do
			[ "$k" = analysed ] && [ "$col" = 3 ] && continue
			a=$(field "$E2E_TMP/half1.dist.$bs" locality $k $col) b=$(field "$E2E_TMP/half2.dist.$bs" locality $k $col)
			m=$(field "$E2E_TMP/merged.dist.$bs" locality $k $col)
			[ -n "$a" ] && [ "$m" = $((a + b)) ] || fail "merged locality $k (column $col) at $bs: $m, halves $a + $b"
		done
	done
	# compressibility: both halves' samples pooled at their rate (1/64: trees of unknown size)
	[ "$(field "$E2E_TMP/merged.dist.$bs" compressibility sample)" = 0.015625 ] || fail "merged sample rate at $bs"
	m=$(field "$E2E_TMP/merged.dist.$bs" compressibility sample 3)
	a=$(field "$E2E_TMP/half1.dist.$bs" compressibility sample 3) b=$(field "$E2E_TMP/half2.dist.$bs" compressibility sample 3)
	[ "$m" -ge "$a" ] && [ "$m" -ge "$b" ] && [ "$m" -le $((a + b)) ] ||
		fail "merged measured contents at $bs: $m, halves $a and $b"
done
grep -q "^# source: .*/h1 .*/h2$" "$E2E_TMP/merged.dist.4096" || fail "merged sources: $(grep source "$E2E_TMP/merged.dist.4096")"
jcheck "$E2E_TMP/merged.json" '.command == "merge" and (.results | length) == 2'
# the merged DB is an analysis too: merging it alone gives the same again (-o only, memory)
"$DEDISGEN" merge "$E2E_TMP/dm" -o "$E2E_TMP/again.dist" -q || fail "merge of the merged DB exited $?"
cmp "$E2E_TMP/merged.dist.4096" "$E2E_TMP/again.dist.4096" || fail "re-merge differs"
# same with a spill during the merge
"$DEDISGEN" merge "$E2E_TMP/d1" "$E2E_TMP/d2" -o "$E2E_TMP/mspill.dist" --mem-limit 64KiB -q || fail "merge --mem-limit exited $?"
cmp "$E2E_TMP/merged.dist.4096" "$E2E_TMP/mspill.dist.4096" || fail "merge --mem-limit differs"

# one scan walks its PATHs sorted by name, whatever their order (so -k equals it when the parts
# come in that order, as h1 then h2 below): sections included
"$DEDISGEN" "$W/h2" "$W/h1" -b 4096 -o "$E2E_TMP/h21.dist" -q || fail "scan of h2 h1 exited $?"
"$DEDISGEN" "$W/h1" "$W/h2" -b 4096 -o "$E2E_TMP/h12.dist" -q || fail "scan of h1 h2 exited $?"
diff <(records "$E2E_TMP/h12.dist") <(records "$E2E_TMP/h21.dist") >&2 || fail "the order of the PATHs changed the result"
# -k extends an analysis with more paths: half 1 then -k half 2 == whole
"$DEDISGEN" "$W/h1" -b 4096 --db "$E2E_TMP/dk" -q >/dev/null || fail "-k base exited $?"
"$DEDISGEN" "$W/h2" -b 4096 --db "$E2E_TMP/dk" -k -o "$E2E_TMP/k.dist" --json "$E2E_TMP/k.json" >"$E2E_TMP/k.out" ||
	fail "-k exited $?"
# its figures: the analysis holds both halves' bytes, this run read h2's (the summary once said
# "<both halves> in <h2's time>", and a rate from the JSON's bytes / seconds counted h1 too)
sz() { find "$@" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }'; }
jcheck "$E2E_TMP/k.json" ".results[0].bytes == $(sz "$W/h1" "$W/h2") and .results[0].bytes_read == $(sz "$W/h2")" \
	"-k: bytes $(sz "$W/h1" "$W/h2") in the analysis, $(sz "$W/h2") read" '.results[0] | {bytes, bytes_read}'
grep -q '^block size 4096: .* read (.* in the analysis) in ' "$E2E_TMP/k.out" ||
	fail "-k: the summary does not tell what this run read from what the analysis holds: $(cat "$E2E_TMP/k.out")"
# the stream goes on where h1 ended: records, samples and locality all as in one pass
diff <(records "$E2E_TMP/mem.dist.4096" | no_gran) <(records "$E2E_TMP/k.dist") >&2 || fail "-k h1 + h2 differs from the whole"
grep -q '^\[locality 1\]' "$E2E_TMP/k.dist" && grep -q '^\[compressibility 2\]' "$E2E_TMP/k.dist" ||
	fail "-k lost a section"
# an analysis without a section leaves it out of what is added to it (with a warning)
"$DEDISGEN" "$W/h1" -b 4096 --db "$E2E_TMP/dn" --no-locality --compress-sample off -q >/dev/null || fail "no-sections base exited $?"
"$DEDISGEN" "$W/h2" -b 4096 --db "$E2E_TMP/dn" -k -o "$E2E_TMP/kn.dist" 2>"$E2E_TMP/err" >/dev/null || fail "-k onto no sections exited $?"
grep -q '^\[' "$E2E_TMP/kn.dist" && fail "-k onto an analysis without sections wrote one: $(grep '^\[' "$E2E_TMP/kn.dist")"
grep -q "holds no compressibility samples" "$E2E_TMP/err" && grep -q "holds no locality" "$E2E_TMP/err" ||
	fail "no warning: $(cat "$E2E_TMP/err")"
diff <(rows "$E2E_TMP/mem.dist.4096") <(rows "$E2E_TMP/kn.dist") >&2 || fail "-k onto no sections: records differ"
# ... but never the same path twice, nor another hash
rc=0; "$DEDISGEN" "$W/h2" -b 4096 --db "$E2E_TMP/dk" -k -q >/dev/null 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "-k with an already analysed path exited $rc"
grep -q "twice" "$E2E_TMP/err" || fail "no reason given: $(cat "$E2E_TMP/err")"
rc=0; "$DEDISGEN" "$W/h2" -b 4096 --hash sha256 --db "$E2E_TMP/dk" -k -q >/dev/null 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "-k with another hash exited $rc"
grep -q "incompatible" "$E2E_TMP/err" || fail "no reason given: $(cat "$E2E_TMP/err")"
# merge refuses an output that is one of its inputs, and inputs of other block sizes
rc=0; "$DEDISGEN" merge "$E2E_TMP/d1" "$E2E_TMP/dk" -o "$E2E_TMP/x.dist" -q 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "merge of analyses with different block sizes exited $rc"
rc=0; "$DEDISGEN" merge "$E2E_TMP/d1" --db "$E2E_TMP/d1" -q 2>/dev/null || rc=$?
[ "$rc" -eq 2 ] || fail "merge into one of its inputs exited $rc"
# merge stopped by SIGINT, SIGTERM or SIGHUP (here while it maps its second input, held there by
# the test shim): exit 1, "interrupted", and nothing left - no output or its temp file, no spill
# directory under TMPDIR, no --db it created. It had no handler: killed, it left OUT.tmp.PID, the
# JSON's temp file and the spill DB behind.
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
mkdir "$E2E_TMP/sig" "$E2E_TMP/sigtmp"
for sig in INT TERM HUP; do
	head -c 8 /dev/zero >"$E2E_TMP/sig.state"
	: >"$E2E_TMP/sig.log"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
		DEDIS_FAULT_OP=mmap DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH="$E2E_TMP/d2/" DEDIS_FAULT_STATE="$E2E_TMP/sig.state" \
		DEDIS_FAULT_LOG="$E2E_TMP/sig.log" TMPDIR="$E2E_TMP/sigtmp" "$DEDISGEN" merge "$E2E_TMP/d1" "$E2E_TMP/d2" \
		-o "$E2E_TMP/sig/m.dist" --json "$E2E_TMP/sig/m.json" --mem-limit 64KiB -q 2>"$E2E_TMP/err" &
	pid=$!
	wait_stopped "$pid" "$E2E_TMP/sig.log" "merge never stopped at its second input"
	kill "-$sig" "$pid"
	kill -CONT "$pid"
	rc=0
	wait "$pid" || rc=$?
	[ "$rc" -eq 1 ] && grep -q "merge: interrupted; nothing written" "$E2E_TMP/err" ||
		fail "merge sent SIG$sig: want exit 1, 'interrupted'; got $rc: $(cat "$E2E_TMP/err")"
	[ -z "$(find "$E2E_TMP/sig" "$E2E_TMP/sigtmp" -mindepth 1)" ] ||
		fail "merge sent SIG$sig left: $(find "$E2E_TMP/sig" "$E2E_TMP/sigtmp" -mindepth 1)"
done

# A -k scan that fails once it has spilled into the DB (the last file unreadable, --strict) leaves
# the earlier analysis marked interrupted: it must say so, not "nothing written".
"$DEDISGEN" "$W/h1" -b 4096 --db "$E2E_TMP/dfail" -q -o /dev/null || fail "-k base exited $?"
head -c 8 /dev/zero >"$E2E_TMP/sig.state"
rc=0
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_OP=read \
	DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH="$W/h2/sparse" DEDIS_FAULT_STATE="$E2E_TMP/sig.state" \
	DEDIS_FAULT_LOG="$E2E_TMP/sig.log" "$DEDISGEN" "$W/h2" -b 4096 --db "$E2E_TMP/dfail" -k --mem-limit 64KiB \
	-t 1 --strict -o "$E2E_TMP/sig/f.dist" -q 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "; no output written; --db $E2E_TMP/dfail now holds an interrupted analysis" "$E2E_TMP/err" ||
	fail "a failed -k scan after a spill: exit $rc, want 1 and what the DB holds now: $(cat "$E2E_TMP/err")"
rc=0
"$DEDISGEN" merge "$E2E_TMP/dfail" -o /dev/null -q 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "interrupted" "$E2E_TMP/err" || fail "merge of the DB a failed -k left: exit $rc: $(cat "$E2E_TMP/err")"

# The distribution to standard output whose reader has gone (| head, a pager quit: here closed
# before the scan, SIGPIPE at its default): exit 1 and one line, and the DB the scan filled is
# kept whole - merge and -k take it. Killed by SIGPIPE before the DB was marked complete, the
# scan's analysis was lost ("interrupted; its counts are partial").
rc=0
perl -e 'pipe(R, W) or die; close R; open(STDOUT, ">&W") or die; $SIG{PIPE} = "DEFAULT"; exec @ARGV' \
	"$DEDISGEN" "$W/h1" -b 4096 --db "$E2E_TMP/dpipe" -q 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 1 ] && [ "$(cat "$E2E_TMP/err")" = "dedisgen: writing the distribution: Broken pipe" ] ||
	fail "scan into a closed pipe: exit $rc, want 1 and one line: $(cat "$E2E_TMP/err")"
"$DEDISGEN" merge "$E2E_TMP/dpipe" -o "$E2E_TMP/dpipe.dist" -q 2>"$E2E_TMP/err" ||
	fail "the DB of a scan whose standard output was closed: $(cat "$E2E_TMP/err")"
diff <(records "$E2E_TMP/half1.dist.4096" | no_gran) <(records "$E2E_TMP/dpipe.dist") >&2 ||
	fail "the DB of a scan whose standard output was closed holds another analysis"

note "bdb == memory, spill == memory, merge(halves) == whole, -k, merge interrupted, stdout closed"
exit 0
