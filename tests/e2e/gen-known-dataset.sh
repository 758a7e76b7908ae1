#!/bin/bash
# gen-known-dataset.sh - dedisgen on a dataset whose histogram is known by construction (chosen
# block patterns, a hard link, a symlink, a sparse file, an empty file, tails, a large file) at
# two block sizes in one pass: the distribution files' records must be exactly the expected ones;
# a tree of small files gives the same at any thread count; short and unreadable small files.
source "$(dirname "$0")/lib.sh"
mktmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
D=$E2E_TMP/data
mkdir -p "$D/sub"
# pat CHAR BYTES: BYTES copies of CHAR (distinct CHARs make distinct blocks)
pat() { head -c "$2" /dev/zero | tr '\0' "$1"; }
{ pat A 4096; pat A 4096; pat B 4096; } >"$D/f1"   # 4K: A A B      8K: [AA] [B0]
pat A 4096 >"$D/f2"                                # 4K: A          8K: [A0]
ln "$D/f1" "$D/hardlink"                           # same inode: read once
ln -s f1 "$D/symlink"                              # not followed
pat B 100 >"$D/tail"                               # one zero-padded tail block
: >"$D/empty"                                      # no block
truncate -s 16384 "$D/sparse"                      # 4K: 4 zero blocks; 8K: 2
{ pat C 16384; pat D 5000; } >"$D/sub/f3"          # 4K: C C C C D D' ; 8K: [CC] [CC] [DD']
{ pat E 2097152; pat F 100; } >"$D/sub/big"        # >= 1 MiB (the range path): 4K: E x512, F'
mkfifo "$D/fifo"                                   # skipped: no file data

"$DEDISGEN" scan "$D" -b 4096,8192 -o "$E2E_TMP/out.dist" --json "$E2E_TMP/out.json" -q ||
	fail "scan exited $?"
records() { sed '/^\[/,$d' "$1" | grep -v '^#' | tr '\n' ' '; }
section() { sed -n "/^\[$2 /,/^\[/p" "$1" | grep -v '^[#[]' | tr '\n' ' '; }
# 4K: unique B, tail, D, D', F' = 5; A x3 -> "2 1"; zero x4 and C x4 -> "3 2"; E x512 -> "511 1"
got=$(records "$E2E_TMP/out.dist.4096")
[ "$got" = "0 5 2 1 3 2 511 1 " ] || fail "4096 records: got '$got'"
# 8K: unique AA, B0, A0, tail, DD', F' = 6; zero x2 and CC x2 -> "1 2"; EE x256 -> "255 1"
got=$(records "$E2E_TMP/out.dist.8192")
[ "$got" = "0 6 1 2 255 1 " ] || fail "8192 records: got '$got'"

# The stream at 4K, in walk order (by name; the hard link, FIFO and symlink left out):
#   f1: A A B | f2: A | sparse: Z Z Z Z | sub/big: E x512 F' | sub/f3: C C C C D D' | tail: B'
# new runs 1,1,1,1,2,3; dup runs 1,1,3,511,3; nothing sequential (each duplicate's source is its
# content's only first occurrence); copy runs: every non-zero duplicate alone; one zero run of 3.
got=$(section "$E2E_TMP/out.dist.4096" locality)
[ "$got" = "analysed 528 0 duplicates 519 0 new 0 4 4 new 1 2 5 dup 0 2 2 dup 1 2 6 dup 8 1 511 copy 0 516 516 zero 1 1 3 " ] ||
	fail "4096 locality: got '$got'"
# Every content measured with --compress-sample all: by copy class 5 once, A (3 copies), C (4),
# E (512); the zero block left out; single-byte patterns all compress below 1/32 of the block.
"$DEDISGEN" scan "$D" -b 4096 --compress-sample all -o "$E2E_TMP/all.dist" -q || fail "--compress-sample all exited $?"
got=$(section "$E2E_TMP/all.dist" compressibility | grep -o 'sample.*measured 9 1')
[ "$got" = "sample 1 8 measured 0 5 measured 1 1 measured 2 1 measured 9 1" ] || fail "measured: got '$got'"
section "$E2E_TMP/all.dist" compressibility | grep -o 'cell [0-9]* [0-9]*' | grep -qv 'cell [0-9]* 0$' &&
	fail "a single-byte pattern compressed to 1/32 of the block or more: $(section "$E2E_TMP/all.dist" compressibility)"
[ "$(section "$E2E_TMP/all.dist" locality)" = "$(section "$E2E_TMP/out.dist.4096" locality)" ] ||
	fail "the locality depends on the compressibility sampling"

bytes=$((12288 + 4096 + 100 + 16384 + 21384 + 2097252))
grep -qx "# bytes: $bytes" "$E2E_TMP/out.dist.4096" || fail "bytes header: $(grep bytes "$E2E_TMP/out.dist.4096")"
grep -qx "# zero-blocks: 4" "$E2E_TMP/out.dist.4096" || fail "zero-blocks 4096"
grep -qx "# zero-blocks: 2" "$E2E_TMP/out.dist.8192" || fail "zero-blocks 8192"
grep -qx "# block-size: 8192" "$E2E_TMP/out.dist.8192" || fail "block-size header"
grep -qx "# hash: sha1" "$E2E_TMP/out.dist.4096" || fail "hash header"
head -1 "$E2E_TMP/out.dist.4096" | grep -q '^# dedisgen ' || fail "version header"
grep -q "^# source: .*/data$" "$E2E_TMP/out.dist.4096" || fail "source header"

J=$E2E_TMP/out.json
jcheck "$J" '.results | length == 2'
# --json - is standard output (with -o FILE taking the distribution): the same document, no file "-"
(cd "$E2E_TMP" && "$DEDISGEN" data -b 4096,8192 -o stdout.dist --json - -q >stdout.json) ||
	fail "--json - failed"
[ ! -e "$E2E_TMP/-" ] || fail "--json - wrote a file named -"
[ -s "$E2E_TMP/stdout.json" ] || fail "--json - left standard output empty" # (jq -e passes on no input)
# ... also where /dev/stdout is no longer the link it should be (a regular file: any tool that
# renames a temp file over /dev/stdout as root leaves one, and a run of this suite did): in a
# mount namespace of its own, with a /dev of its own (root only)
if [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2>/dev/null; then
	mkdir "$E2E_TMP/realdev"
	(cd "$E2E_TMP" && unshare -m --propagation private sh -ec '
		mount --bind /dev realdev
		mount -t tmpfs tmpfs /dev
		for n in null zero urandom; do : >/dev/$n; mount --bind realdev/$n /dev/$n; done
		echo stale >/dev/stdout
		"$0" data -o broken.dist --json - -q >broken.json
		[ "$(cat /dev/stdout)" = stale ] || echo "/dev/stdout was replaced" >&2' "$DEDISGEN" 2>"$E2E_TMP/err") ||
		fail "--json - with /dev/stdout a regular file: $(cat "$E2E_TMP/err")"
	[ ! -s "$E2E_TMP/err" ] || fail "--json - with /dev/stdout a regular file: $(cat "$E2E_TMP/err")"
	jcheck "$E2E_TMP/broken.json" '.results[0].blocks == 528' "--json - with /dev/stdout a regular file"
	[ -s "$E2E_TMP/broken.json" ] || fail "--json - with /dev/stdout a regular file left standard output empty"
fi
jcheck "$E2E_TMP/stdout.json" '.results | length == 2 and .[0].blocks == 528' "the JSON on standard output"

jcheck "$J" '.results[0] | .block_size == 4096 and .blocks == 528 and .distinct == 9 and .zero_blocks == 4'
jcheck "$J" '.results[1] | .block_size == 8192 and .blocks == 266 and .distinct == 9 and .zero_blocks == 2'
jcheck "$J" ".results[0] | .files == 7 and .errors == 0 and .bytes == $bytes"
jcheck "$J" '.results[0] | (.U0 + .U1 + .D - 1 | fabs) < 1e-12 and .ratio > 1 and .index_bytes_per_distinct > 0'
jcheck "$J" '.results[0] | (.U0 - 5/528 | fabs) < 1e-12 and (.D - (2 + 6 + 511)/528 | fabs) < 1e-12'
jcheck "$J" '.results[0].locality | .analysed == 528 and .duplicates == 519 and .sequential == 0 and .window == 0'
jcheck "$J" '.results[0].locality | (.runs_ge8_share - 511/519 | fabs) < 1e-12 and (.mean_dup_run - 519/5 | fabs) < 1e-9'
# a tree's size is not known up front: auto samples 1/64 of the occurrences; E's 512 are all but
# certain to include one (1 - (63/64)^512 > 0.9997), the zero block is never measured
jcheck "$J" '.results[0].compressibility | .sample_rate == 0.015625 and .measured >= 1 and .measured <= 8'

# One size at a time, one thread or several, sha256: the same records.
"$DEDISGEN" "$D" -b 4096 -t 1 -q >"$E2E_TMP/t1.dist" || fail "single size exited $?"
cmp -s "$E2E_TMP/t1.dist" "$E2E_TMP/out.dist.4096" || fail "-b 4096 alone differs from the two-size pass"
"$DEDISGEN" "$D" -b 4096 -t 3 --hash sha256 -q >"$E2E_TMP/s256.dist" || fail "sha256 exited $?"
[ "$(records "$E2E_TMP/s256.dist")" = "0 5 2 1 3 2 511 1 " ] || fail "sha256 records differ"
grep -qx "# hash: sha256" "$E2E_TMP/s256.dist" || fail "sha256 header"

# --skip-tails: tail, D' and F' are left out.
"$DEDISGEN" "$D" -b 4096 --skip-tails -q >"$E2E_TMP/st.dist" || fail "--skip-tails exited $?"
got=$(records "$E2E_TMP/st.dist")
[ "$got" = "0 2 2 1 3 2 511 1 " ] || fail "--skip-tails records: got '$got'"

# A file given on its own, next to its hard link inside the tree: still once.
"$DEDISGEN" "$D/f1" "$D/hardlink" -q >"$E2E_TMP/one.dist" || fail "two links exited $?"
[ "$(records "$E2E_TMP/one.dist")" = "0 1 1 1 " ] || fail "a file and its hard link counted twice"
# ... and its size once in the automatic sample rate: 5000 blocks are all sampled, and counted
# twice (10000, past 8192) the rate was halved, so the compressibility section differed.
head -c $((5000 * 4096)) /dev/urandom >"$E2E_TMP/r5k"
ln "$E2E_TMP/r5k" "$E2E_TMP/r5k.link"
"$DEDISGEN" "$E2E_TMP/r5k" -q -o "$E2E_TMP/once.dist" || fail "a 5000-block file exited $?"
"$DEDISGEN" "$E2E_TMP/r5k" "$E2E_TMP/r5k" "$E2E_TMP/r5k.link" -q -o "$E2E_TMP/thrice.dist" || fail "a file three times exited $?"
grep -qx "sample 1 5000" "$E2E_TMP/once.dist" || fail "a 5000-block file is not all sampled: $(grep sample "$E2E_TMP/once.dist")"
diff <(grep -v '^# source' "$E2E_TMP/once.dist") <(grep -v '^# source' "$E2E_TMP/thrice.dist") >&2 ||
	fail "a file given three times (once by a hard link) differs from one scan of it"
rm -f "$E2E_TMP/r5k" "$E2E_TMP/r5k.link"
# Data of less than one block at a size is one block there, all sampled (its count, 0, read as
# "size unknown", gave 1/64: no compressibility at 128 KiB for a 65537-byte file).
head -c 65537 /dev/urandom >"$E2E_TMP/small65"
"$DEDISGEN" "$E2E_TMP/small65" -b 65536,131072 -q -o "$E2E_TMP/s65.dist" || fail "a 65537-byte file exited $?"
grep -qx "sample 1 2" "$E2E_TMP/s65.dist.65536" && grep -qx "sample 1 1" "$E2E_TMP/s65.dist.131072" ||
	fail "65537 B at 64 and 128 KiB not all sampled: $(grep -h '^sample' "$E2E_TMP"/s65.dist.*)"

# An unreadable entry is reported and skipped (not as root: root reads everything).
if [ "$(id -u)" -ne 0 ]; then
	chmod 000 "$D/f2"
	"$DEDISGEN" "$D" -q >/dev/null 2>"$E2E_TMP/err" || fail "unreadable entry made the scan fail"
	chmod 644 "$D/f2"
fi
# A file that cannot be opened keeps its place in the stream, whatever its size: a small one's
# positions are given out before a hasher opens it, and a large one (read by the walker) took
# none, so the locality of the files around it depended on its size. Run as nobody where root
# can switch to it (setpriv), else as this user.
U=$E2E_TMP/unreadable
mkdir -p "$U/x" "$U/y"
head -c 40960 /dev/urandom >"$U/x/a" && head -c 40960 /dev/urandom >"$U/x/c"
cp "$U/x/a" "$U/y/a" && cp "$U/x/c" "$U/y/c"
as_other=()
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$E2E_TMP" && chmod -R a+rX "$U"
	# only where nobody can run the binary and read the tree (a checkout in a private home cannot)
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "[ -x '$DEDISGEN' ] && [ -r '$U/x/a' ]" &&
		as_other=(setpriv --reuid=65534 --regid=65534 --clear-groups)
fi
if [ "${#as_other[@]}" -gt 0 ] || [ "$(id -u)" -ne 0 ]; then
	for size in 8192 2000000; do
		head -c "$size" /dev/urandom >"$U/x/b" && chmod 000 "$U/x/b"
		"${as_other[@]}" "$DEDISGEN" "$U" -o - 2>"$E2E_TMP/err" | awk '/^\[/ { s = $1 == "[locality" } s' >"$E2E_TMP/loc.$size" ||
			fail "a scan with an unreadable file failed: $(cat "$E2E_TMP/err")"
		grep -q "x/b" "$E2E_TMP/err" || fail "the unreadable file ($size B) was not reported: $(cat "$E2E_TMP/err")"
		rm -f "$U/x/b"
	done
	grep -q '^copy ' "$E2E_TMP/loc.8192" || fail "no locality section: $(cat "$E2E_TMP/loc.8192")"
	diff "$E2E_TMP/loc.8192" "$E2E_TMP/loc.2000000" >&2 ||
		fail "the locality around an unreadable file depends on its size"
else
	note "root, and nobody cannot run $DEDISGEN: the unreadable-file case was not tried"
fi
# Small files are read by the hashing threads, in batches whose stream positions the walk
# reserves: 1,500 files of 0-20,000 bytes (a third of them copies of others) fill several batches;
# every thread count must give the same bytes, distribution and locality.
S=$E2E_TMP/small
mkdir -p "$S"
python3 - "$S" <<'PY'
import os, random, sys
random.seed(7)
made = []
for i in range(1500):
    if made and random.random() < 0.33:
        data = random.choice(made)
    else:
        data = os.urandom(random.randint(0, 20000))
        made.append(data)
    with open(os.path.join(sys.argv[1], "f%04d" % i), "wb") as f:
        f.write(data)
PY
for t in 1 2 4; do
	"$DEDISGEN" "$S" -b 4096,8192 -t "$t" -o "$E2E_TMP/small$t.dist" -j "$E2E_TMP/small$t.json" -q ||
		fail "small files -t $t exited $?"
done
for t in 2 4; do
	for bs in 4096 8192; do
		cmp -s "$E2E_TMP/small1.dist.$bs" "$E2E_TMP/small$t.dist.$bs" ||
			fail "small files: -t $t differs from -t 1 at $bs: $(diff "$E2E_TMP/small1.dist.$bs" "$E2E_TMP/small$t.dist.$bs" | head -5)"
	done
done
sbytes=$(du -b --apparent-size -s "$S" | cut -f1)
sbytes=$((sbytes - $(stat -c %s "$S")))
jcheck "$E2E_TMP/small4.json" ".results[0] | .files == 1500 and .errors == 0 and .bytes == $sbytes"
# The hashers read batches through io_uring (many files in flight) where the kernel lets them, and
# with plain system calls where it does not (no-io-uring: a seccomp filter failing
# io_uring_setup): the same results either way.
jcheck "$E2E_TMP/small2.json" '.reads.small_file_batches | .io_uring + .syscalls >= 3'
if "$top_builddir/tests/e2e/batch-uring-probe" 2>/dev/null; then
	jcheck "$E2E_TMP/small2.json" '.reads | .small_file_batches.syscalls == 0 and .small_file_fallbacks == 0'
fi
RC=0
"$top_builddir/tests/e2e/no-io-uring" ENOSYS "$DEDISGEN" "$S" -b 4096,8192 -t 2 -o "$E2E_TMP/smallnu.dist" \
	-j "$E2E_TMP/smallnu.json" -q || RC=$?
if [ "$RC" -ne 77 ]; then
	[ "$RC" -eq 0 ] || fail "small files without io_uring exited $RC"
	jcheck "$E2E_TMP/smallnu.json" '.reads | .small_file_batches.io_uring == 0 and .small_file_batches.syscalls >= 3 and .small_file_fallbacks == 0'
	for bs in 4096 8192; do
		cmp -s "$E2E_TMP/small1.dist.$bs" "$E2E_TMP/smallnu.dist.$bs" || fail "small files: without io_uring differs at $bs"
	done
fi

# A file that holds less than its size says (sysfs: 4096, a few bytes of text) is read for what it
# has; the blocks it was given beyond that stay unused.
ON=/sys/devices/system/cpu/online PO=/sys/devices/system/cpu/possible
if [ -r "$ON" ] && [ -r "$PO" ] && [ "$(stat -c %s "$ON")" -gt "$(wc -c <"$ON")" ]; then
	l1=$(wc -c <"$ON") l2=$(wc -c <"$PO")
	"$DEDISGEN" "$ON" "$PO" "$D/f2" -b 512,4096 -j "$E2E_TMP/sys.json" -o "$E2E_TMP/sys.dist" -q || fail "sysfs files exited $?"
	jcheck "$E2E_TMP/sys.json" ".results[0] | .files == 3 and .errors == 0 and .bytes == $((l1 + l2 + 4096))"
	jcheck "$E2E_TMP/sys.json" ".results[0] | .block_size == 512 and .blocks == $(((l1 + 511) / 512 + (l2 + 511) / 512 + 8))"
	jcheck "$E2E_TMP/sys.json" '.results[1] | .block_size == 4096 and .blocks == 3'
fi

# A file whose stat says size 0 but that holds bytes (procfs) is read to its end, like any file.
PV=/proc/version
if [ -r "$PV" ] && [ "$(stat -c %s "$PV")" -eq 0 ]; then
	lv=$(wc -c <"$PV")
	"$DEDISGEN" "$PV" "$D/f2" -b 512 -t 2 -j "$E2E_TMP/proc.json" -o "$E2E_TMP/proc.dist" -q || fail "a procfs file exited $?"
	jcheck "$E2E_TMP/proc.json" ".results[0] | .files == 2 and .errors == 0 and .bytes == $((lv + 4096)) and .blocks == $(((lv + 511) / 512 + 8))"
fi

# An unreadable file is reported, left out and not counted (root reads everything: run as nobody).
# (Where nobody cannot reach the binary - a checkout under a private home - that part is left out.)
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && asnobody "$DEDISGEN" --version >/dev/null 2>&1; then
	U=$(mktemp -d /tmp/dedis-unreadable.XXXXXX)
	on_exit "rm -rf '$U'"
	chmod 755 "$U"
	mkdir -m 777 "$U/out"
	mkdir -m 755 "$U/in"
	pat G 8192 >"$U/in/a"
	pat H 5000 >"$U/in/b"
	pat G 8192 >"$U/in/c"
	chmod 644 "$U/in/a" "$U/in/c"
	chmod 000 "$U/in/b"
	for t in 1 2; do
		asnobody "$DEDISGEN" "$U/in" -t "$t" -b 4096 \
			-o "$U/out/u$t.dist" -j "$U/out/u$t.json" 2>"$E2E_TMP/uerr" || fail "an unreadable file made the scan fail (-t $t)"
		grep -q "$U/in/b: cannot open: Permission denied" "$E2E_TMP/uerr" || fail "no error line for the unreadable file: $(cat "$E2E_TMP/uerr")"
		jcheck "$U/out/u$t.json" '.results[0] | .files == 2 and .errors == 1 and .bytes == 16384 and .blocks == 4 and .distinct == 1'
	done
	[ "$(records "$U/out/u1.dist")" = "3 1 " ] || fail "unreadable file: records '$(records "$U/out/u1.dist")'"
fi
# a sysctl file refuses a 4 MiB read with ENOMEM: read whole all the same, without a warning
SYSCTL=/proc/sys/fs/aio-max-nr
if [ -r "$SYSCTL" ]; then
	"$DEDISGEN" "$SYSCTL" -o /dev/null --json "$E2E_TMP/sysctl.json" 2>"$E2E_TMP/sysctl.err" ||
		fail "dedisgen $SYSCTL exited $?: $(cat "$E2E_TMP/sysctl.err")"
	grep -q "could not be read" "$E2E_TMP/sysctl.err" && fail "$SYSCTL: $(cat "$E2E_TMP/sysctl.err")"
	jcheck "$E2E_TMP/sysctl.json" ".results[0].bytes == $(wc -c <"$SYSCTL") and .results[0].errors == 0" \
		"$SYSCTL not read whole"
fi
# A file that shrinks while it is read: one error for the file (not one per 4 MiB range that
# failed), and bytes are what was counted.
# stopped_at NAME SIZE OP N ARGS...: dedisgen ARGS scanning NAME/f of SIZE random bytes, stopped by
# the test shim at its N-th OP (read, mmap) of the file, before that read or range; sets pid and
# S (the run's files).
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
stopped_at() {
	local name=$1 size=$2 op=$3 n=$4 i
	shift 4
	S=$E2E_TMP/$name
	mkdir "$S"
	head -c "$size" /dev/urandom >"$S/f"
	: >"$S.log"
	head -c 8 /dev/zero >"$S.state"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
		DEDIS_FAULT_OP="$op" DEDIS_FAULT_NTH="$n" DEDIS_FAULT_PATH="$name/f" DEDIS_FAULT_STATE="$S.state" \
		DEDIS_FAULT_LOG="$S.log" "$DEDISGEN" "$S" "$@" --json "$S.json" -o "$S.dist" 2>"$S.err" &
	pid=$!
	wait_stopped "$pid" "$S.log" "dedisgen never stopped at $op #$n of $S/f"
}
shrunk() { # NAME: the run went on, one error for the file, its first 4 MiB counted
	wait "$pid" || fail "$1: a file that shrank made the scan fail (exit $?): $(cat "$S.err")"
	[ "$(grep -c "$1/f: changed while being read (it shrank)" "$S.err")" -eq 1 ] ||
		fail "$1: want one error line for the file that shrank: $(cat "$S.err")"
	jcheck "$S.json" '.results[0] | .files == 1 and .errors == 1 and .blocks == 1024 and .bytes == 4194304'
}
# Read by pread: stopped at its first read (nothing read yet), cut to 5 MiB: its first range
# (4 MiB) is read whole, every later one fails.
stopped_at shrink 40M read 1 -t 2 --read-method pread
truncate -s 5M "$S/f"
kill -CONT "$pid"
shrunk shrink

# Interrupted inside a large file: the walking thread posts the file once and the hashers cut its
# 4 MiB ranges themselves, so once the scan is stopped they must leave the rest of it (a posted
# file may be terabytes). 256 MiB (64 ranges of 32 reads of 128 KiB), stopped at its first read,
# sent SIGINT: "interrupted", exit 1, and no more read than the ranges the 2 hashers had taken
# (at most 8: 256 reads; the whole file would be 2048).
stopped_at interrupted 256M read 1 -t 2 --read-method pread
kill -INT "$pid"
kill -CONT "$pid"
wait "$pid"
rc=$?
[ "$rc" -eq 1 ] && grep -q "scan failed: interrupted" "$S.err" ||
	fail "SIGINT inside a large file: want exit 1, 'interrupted'; got $rc: $(cat "$S.err")"
reads=$(od -An -t u8 -N 8 "$S.state" | tr -d ' ')
((reads >= 1 && reads <= 256)) || fail "SIGINT inside a large file: $reads reads of it after the stop (at most 256)"

# The hashers share a posted file among themselves, whatever the walking thread does meanwhile:
# each range cut wakes another hasher. The walker first reads 2000 empty files itself (0/: the
# hashers, with nothing to do, go to sleep), posts a (256 MiB, sparse: 64 ranges) and is then held
# by the shim in its read of z (empty too) until the test lets it go; by then the 4 hashers must
# have read all of a between them, more than one of them (per-thread bytes read,
# /proc/PID/task/*/io). Waking none, the one hasher the post woke read it alone.
H=$E2E_TMP/held
mkdir -p "$H/0"
(cd "$H/0" && seq -f 'e%04g' 2000 | xargs touch)
truncate -s 256M "$H/a"
: >"$H/z"
head -c 8 /dev/zero >"$H.state"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=hold \
	DEDIS_FAULT_OP=read DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH=held/z DEDIS_FAULT_STATE="$H.state" \
	DEDIS_FAULT_RELEASE="$H.go" DEDIS_FAULT_LOG="$H.log" "$DEDISGEN" "$H" -t 4 --read-method pread \
	--json "$H.json" -o "$H.dist" 2>"$H.err" &
pid=$!
task_reads() { # per thread of $pid: bytes read, one line each
	local t
	for t in /proc/"$pid"/task/*; do awk '$1 == "rchar:" { print $2 }' "$t/io" 2>/dev/null; done
}
for ((i = 0; i < 600; i++)); do
	[ -s "$H.log" ] && (($(task_reads | awk '{ s += $1 } END { print s + 0 }') >= 268435456)) && break
	sleep 0.1
done
readers=$(task_reads | awk '$1 >= 4194304' | wc -l)
touch "$H.go"
wait "$pid" || fail "held walker: dedisgen exited $?: $(cat "$H.err")"
[ -s "$H.log" ] || fail "the shim never held the walker in its read of z"
((readers >= 2)) || fail "while the walker was held, $readers hashing thread(s) read the 256 MiB file (want 2 or more)"
jcheck "$H.json" '.results[0] | .bytes == 268435456 and .files == 2002 and .errors == 0'

# --read-method: the same records whichever way large files are read (ranges of a 40 MiB file with
# a tail, at two block sizes); mmap maps every range, pread none, and auto times both ways on its
# first full ranges in memory (3 each per thread: at least 3 mapped, files just written are in
# memory and ours). A mapping refused (the shim fails the first mmap) is read by pread instead,
# with the same records.
M=$E2E_TMP/methods
mkdir "$M"
head -c $((40 * 1048576 + 5000)) /dev/urandom >"$M/f"
cat "$M/f" "$M/f" >"$M/g" # its first copy's blocks repeat f's (the second starts mid-block)
for how in pread mmap auto; do
	"$DEDISGEN" "$M" -t 2 -b 4096,8192 --read-method $how -o "$M.$how.dist" --json "$M.$how.json" 2>"$M.$how.err" ||
		fail "--read-method $how exited $?: $(cat "$M.$how.err")"
done
for bs in 4096 8192; do
	cmp -s "$M.pread.dist.$bs" "$M.mmap.dist.$bs" || fail "--read-method mmap counted otherwise than pread at $bs"
	cmp -s "$M.pread.dist.$bs" "$M.auto.dist.$bs" || fail "--read-method auto counted otherwise than pread at $bs"
done
# 40 MiB + 5000 B: 11 ranges of 4 MiB; the copy twice over: 21
jcheck "$M.pread.json" '.reads.large_file_ranges == {"mapped": 0, "pread": 32}' "pread mapped a range"
jcheck "$M.mmap.json" '.reads.large_file_ranges == {"mapped": 32, "pread": 0}' "mmap read a range by pread"
jcheck "$M.auto.json" '.reads.large_file_ranges | .pread >= 3 and .mapped >= 3 and .mapped + .pread == 32' \
	"auto: not both ways timed, or not every range read once"
jcheck "$M.mmap.json" '.results[0] | .bytes == 3 * (40 * 1048576 + 5000) and .errors == 0' "mmap: bytes"
: >"$M.log"
head -c 8 /dev/zero >"$M.state"
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_OP=mmap 	DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH=methods/ DEDIS_FAULT_STATE="$M.state" DEDIS_FAULT_LOG="$M.log" 	"$DEDISGEN" "$M" -t 2 -b 4096,8192 --read-method mmap -o "$M.refused.dist" --json "$M.refused.json" 2>"$M.refused.err" ||
	fail "a refused mapping made the scan fail: $(cat "$M.refused.err")"
[ "$(grep -c '^mmap ' "$M.log")" -eq 1 ] || fail "the shim refused no mapping: $(cat "$M.log")"
cmp -s "$M.pread.dist.4096" "$M.refused.dist.4096" || fail "a refused mapping changed the records"
jcheck "$M.refused.json" '.reads.large_file_ranges == {"mapped": 31, "pread": 1} and .results[0].errors == 0' 	"a refused mapping was not read by pread"

# Mapped: the pages it no longer holds raise SIGBUS, caught and told as pread tells it; cut inside
# the last page, there is no fault (the rest of the page reads as zeros), and the file's size after
# the range says it. One hashing thread: the ranges are mapped in order, mapping #N is range #N.
map_stopped() { # NAME SIZE N
	stopped_at "$1" "$2" mmap "$3" -t 1 --read-method mmap
	grep -q "^mmap .*$1/f $((($3 - 1) * 4194304)) " "$S.log" || fail "mapping #$3 was not range #$3: $(cat "$S.log")"
}
map_stopped shrinkmap 40M 1
truncate -s 5M "$S/f"
kill -CONT "$pid"
shrunk shrinkmap
jcheck "$S.json" '.reads.large_file_ranges == {"mapped": 10, "pread": 0}' "shrinkmap: not every range mapped"
map_stopped lastpage $((4194304 + 5000)) 2
truncate -s $((4194304 + 4500)) "$S/f"
kill -CONT "$pid"
shrunk lastpage
# A SIGBUS sent (not raised by a fault) while the guard is in place is not taken for one.
map_stopped sentbus 8M 1
kill -BUS "$pid"
kill -CONT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" -ne 0 ] || fail "a SIGBUS sent to dedisgen was swallowed (exit 0): $(cat "$S.err")"

note "exact distributions at 4 KiB and 8 KiB; small files in batches, any thread count"
exit 0
