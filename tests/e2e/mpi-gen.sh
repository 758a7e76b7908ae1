#!/bin/bash
# dedisgen-mpi, 4 ranks on one machine: a shared file read in stripes and per-rank directories
# (%r) each give the file one dedisgen of the same data in rank order writes, byte for byte
# (records, header, compressibility and locality sections), with duplicates crossing ranks; so do
# owners spilling to Berkeley DB; bad input on one rank (an output another rank reads, one device
# read by two ranks through two nodes or as a disk and its partition, included), a read failure on one rank and the SIGTERM
# of an interrupted mpirun end every rank (exit 2 / 1 / 1) with one message and nothing written,
# without hanging.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
MPI_UNTIMED=1 # nothing here is timed: this runs under the sanitizers too
. "$(dirname "$0")/mpi-lib.sh"
DEDISGEN_MPI="$top_builddir/dedisgen-mpi"
[ -x "$DEDISGEN_MPI" ] || skip "dedisgen-mpi is not built (configure found no Open MPI)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
mktmp /var/tmp
D=$E2E_TMP/data
# A hang is a failure, not a stuck CI job: every mpirun is bounded (ASan on shared cores included).
gen_mpi() {
	RC=0
	timeout 300 "${MPIRUN[@]}" "$DEDISGEN_MPI" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	[ "$RC" -ne 124 ] || fail "dedisgen-mpi $* did not end within 300 s (a rank hangs)"
}
gen_mpi_ok() {
	gen_mpi "$@"
	[ "$RC" -eq 0 ] || fail "dedisgen-mpi $* exited $RC: $(head -c 800 "$E2E_TMP/err")"
}
same() { # same A B WHAT: the two distribution files are byte-identical (dedisgen's A without the
	# granularity curve, which dedisgen-mpi does not measure)
	cmp -s <(no_gran <"$1") "$2" || fail "$3: dedisgen-mpi's file differs from dedisgen's: $(diff <(no_gran <"$1") "$2" | head -20)"
}

# The data (fixed seed): blocks drawn from a pool (copies everywhere), unique random blocks,
# half-compressible blocks, zero blocks, and copied runs; a 6 MiB shared file whose second half
# repeats stretches of its first half (so stripes share contents), and four directories whose
# files share contents across directories (d2/copy is d0/a), each with a file above 1 MiB (read
# as ranges) and small ones with tails.
mkdir -p "$D"/d0 "$D"/d1 "$D"/d2 "$D"/d3
python3 - "$D" <<'EOF'
import os, random, sys
d = sys.argv[1]
rnd = random.Random(20261123)
def rbytes(n):
    return bytes(rnd.getrandbits(8) for _ in range(n)) if n < 64 else rnd.randbytes(n)
pool = [rnd.randbytes(4096) for _ in range(200)]
def block():
    r = rnd.random()
    if r < 0.35:
        return pool[rnd.randrange(len(pool))]
    if r < 0.40:
        return bytes(4096)
    if r < 0.70:
        return bytes([rnd.randrange(8)]) * 2048 + rnd.randbytes(2048)
    return rnd.randbytes(4096)
def blocks(n):
    return b"".join(block() for _ in range(n))
first = blocks(800)
second = b"".join(first[a * 4096:(a + rnd.randrange(4, 60)) * 4096] if rnd.random() < 0.5 else blocks(20)
                  for a in (rnd.randrange(790) for _ in range(40)))
with open(os.path.join(d, "shared"), "wb") as f:
    f.write(first + second + rbytes(3000))
for k in range(4):
    with open(os.path.join(d, f"d{k}", "a"), "wb") as f:
        f.write(blocks(rnd.randrange(300, 400)) + rbytes(rnd.randrange(1, 4096)))
    for j in range(rnd.randrange(2, 5)):
        with open(os.path.join(d, f"d{k}", f"s{j}"), "wb") as f:
            f.write(blocks(rnd.randrange(0, 6)) + rbytes(rnd.randrange(0, 4096)))
with open(os.path.join(d, "d0", "a"), "rb") as src, open(os.path.join(d, "d2", "copy"), "wb") as dst:
    dst.write(src.read())
EOF

# 1. One shared file, read in 4 stripes, at two block sizes.
"$DEDISGEN" "$D/shared" -b 4096,16384 -q -o "$E2E_TMP/one.dist" --json "$E2E_TMP/one.json" ||
	fail "dedisgen on the shared file exited $?"
gen_mpi_ok "$D/shared" -b 4096,16384 -q -o "$E2E_TMP/mpi.dist" --json "$E2E_TMP/mpi.json"
for bs in 4096 16384; do
	grep -q '^\[compressibility 2\]' "$E2E_TMP/one.dist.$bs" && grep -q '^\[locality 1\]' "$E2E_TMP/one.dist.$bs" ||
		fail "stripes: dedisgen's own file at $bs has no sections to compare"
	same "$E2E_TMP/one.dist.$bs" "$E2E_TMP/mpi.dist.$bs" "stripes at $bs B"
done
jcheck "$E2E_TMP/mpi.json" '.tool == "dedisgen-mpi" and (.results | length) == 2'
jcheck "$E2E_TMP/mpi.json" '.mpi.ranks == 4 and .mpi.parts == "stripes" and ([.mpi.per_rank[].bytes] | add) == .results[0].bytes
	and ([.mpi.per_rank[].blocks] | add) == .results[0].blocks and ([.mpi.per_rank[].rank] == [0, 1, 2, 3])
	and ([.mpi.per_rank[].first_position] | (. == sort and .[0] == 0))
	and ([range(1; 4) as $k | .mpi.per_rank[$k].first_position == .mpi.per_rank[$k - 1].first_position + .mpi.per_rank[$k - 1].blocks] | all)' \
	"stripes: the rank rows do not add up to the whole (or the positions do not follow each other)"
for f in bytes blocks distinct zero_blocks files; do
	jcheck "$E2E_TMP/mpi.json" "[.results[].$f] == $(jq -c "[.results[].$f]" "$E2E_TMP/one.json")" "stripes: .$f differs"
done
# Duplicates cross the stripes: counted stripe by stripe, the contents would be more.
size=$(stat -c %s "$D/shared")
units=$(((size + 16383) / 16384))
sum=0
for r in 0 1 2 3; do
	lo=$((units * r / 4)) hi=$((units * (r + 1) / 4))
	dd if="$D/shared" of="$E2E_TMP/stripe" bs=16384 skip="$lo" count=$((hi - lo)) status=none
	"$DEDISGEN" "$E2E_TMP/stripe" -q -o "$E2E_TMP/stripe.dist" || fail "dedisgen on stripe $r exited $?"
	sum=$((sum + $("$DEDISGEN" show "$E2E_TMP/stripe.dist" --json | jq -er .rows.distinct)))
done
whole=$(jq -er '.results[0].distinct' "$E2E_TMP/mpi.json")
[ "$sum" -gt $((whole + whole / 10)) ] ||
	fail "stripes share few contents (distinct per stripe summed $sum, whole $whole): the test proves nothing"
note "stripes: 4 ranks = dedisgen byte for byte at 4 and 16 KiB; $whole distinct contents, $sum counted stripe by stripe"

# Stripes of files the reader reads itself (under 1 MiB), and of one with fewer blocks than ranks.
head -c 300000 "$D/shared" >"$D/small"
head -c 9000 "$D/shared" >"$D/tiny"
for f in small tiny; do
	"$DEDISGEN" "$D/$f" -q -o "$E2E_TMP/one-$f.dist" || fail "dedisgen on $f exited $?"
	gen_mpi_ok "$D/$f" -q -o "$E2E_TMP/mpi-$f.dist"
	same "$E2E_TMP/one-$f.dist" "$E2E_TMP/mpi-$f.dist" "stripes of $f"
done
note "stripes of a 300 kB file and of a 3-block one (a rank with nothing to read): the same files"

# 2. Per-rank directories (%r), a denser sampling (positions decide which occurrences are sampled).
"$DEDISGEN" "$D/d0" "$D/d1" "$D/d2" "$D/d3" -q --compress-sample 1/4 -o "$E2E_TMP/one-d.dist" ||
	fail "dedisgen on the directories exited $?"
gen_mpi_ok "$D/d%r" -q --compress-sample 1/4 -o "$E2E_TMP/mpi-d.dist"
same "$E2E_TMP/one-d.dist" "$E2E_TMP/mpi-d.dist" "per-rank directories"
[ "$(grep '^# source:' "$E2E_TMP/mpi-d.dist" | wc -w)" -eq 6 ] || fail "the header does not list the 4 ranks' sources"
note "per-rank directories: 4 ranks = dedisgen of d0 d1 d2 d3, byte for byte (sampling 1/4 included)"
# ... with files hard-linked across the parts: one scan reads each once, where its walk meets it
# first (the lowest rank holding it); a rank counted its links as well (733 blocks as duplicates).
mkdir -p "$D"/l0 "$D"/l1 "$D"/l2 "$D"/l3
cp "$D/d0/a" "$D/l0/f" && cp "$D/d1/a" "$D/l1/g" && cp "$D/d2/a" "$D/l2/h" && cp "$D/d3/s0" "$D/l3/k"
ln "$D/l0/f" "$D/l1/f-link" && ln "$D/l0/f" "$D/l3/f-link" && ln "$D/l2/h" "$D/l3/h-link" && ln "$D/l2/h" "$D/l2/h-same"
"$DEDISGEN" "$D/l0" "$D/l1" "$D/l2" "$D/l3" -q --compress-sample 1/4 -o "$E2E_TMP/one-l.dist" ||
	fail "dedisgen on the linked directories exited $?"
gen_mpi_ok "$D/l%r" -q --compress-sample 1/4 -o "$E2E_TMP/mpi-l.dist"
same "$E2E_TMP/one-l.dist" "$E2E_TMP/mpi-l.dist" "per-rank directories with files hard-linked across them"
note "files hard-linked across the ranks' directories: read once, by the first rank, as one scan does"

# 3. Owners (and ranks) spill to Berkeley DB: the same file.
gen_mpi_ok "$D/shared" -q -m 64KiB -o "$E2E_TMP/spill.dist" --json "$E2E_TMP/spill.json"
"$DEDISGEN" "$D/shared" -q -o "$E2E_TMP/one-4k.dist" || fail "dedisgen exited $?"
same "$E2E_TMP/one-4k.dist" "$E2E_TMP/spill.dist" "--mem-limit 64KiB"
jcheck "$E2E_TMP/spill.json" '.results[0].spills > 0' "nothing spilled: the test proves nothing"
note "spilling to Berkeley DB at 64 KiB: $(jget "$E2E_TMP/spill.json" .results[0].spills) spills, the same file"

# 4. Bad input on one rank: every rank exits 2, one line, nothing written.
rm -rf "$D/d3.gone" && mv "$D/d3" "$D/d3.gone"
gen_mpi "$D/d%r" -q -o "$E2E_TMP/bad.dist"
mv "$D/d3.gone" "$D/d3"
[ "$RC" -eq 2 ] || fail "a missing PATH on rank 3: exit $RC (want 2): $(head -c 800 "$E2E_TMP/err")"
lines=$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err" || true)
[ "$lines" -eq 1 ] || fail "a missing PATH on rank 3: $lines messages (want 1): $(cat "$E2E_TMP/err")"
grep -q '^dedisgen-mpi: rank 3: .*d3' "$E2E_TMP/err" || fail "the message does not name rank 3 and its PATH: $(cat "$E2E_TMP/err")"
ls "$E2E_TMP"/bad.dist* >/dev/null 2>&1 && fail "bad input on rank 3 left an output: $(ls "$E2E_TMP"/bad.dist*)"
gen_mpi "$D/d0" -q -o "$E2E_TMP/bad.dist"
[ "$RC" -eq 2 ] && grep -q 'rank 1 reads it too' "$E2E_TMP/err" ||
	fail "every rank on the same directory: exit $RC, $(head -c 400 "$E2E_TMP/err") (want 2: counted twice)"
# A rank's PATH inside a directory another rank walks (here through a link): counted twice too.
ln -s "$D/d0" "$D/n0" && ln -s "$D/d0/a" "$D/n1" && ln -s "$D/d2" "$D/n2" && ln -s "$D/d3" "$D/n3"
gen_mpi "$D/n%r" -q -o "$E2E_TMP/bad.dist"
rm "$D"/n[0-3]
[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err")" -eq 1 ] &&
	grep -q "^dedisgen-mpi: rank 1: $D/n1 is inside .*/d0, a directory rank 0 reads" "$E2E_TMP/err" ||
	fail "rank 1's PATH inside rank 0's directory: exit $RC (want 2, one line): $(head -c 800 "$E2E_TMP/err")"
ls "$E2E_TMP"/bad.dist* >/dev/null 2>&1 && fail "PATHs counted twice refused, yet an output: $(ls "$E2E_TMP"/bad.dist*)"
gen_mpi "$D/d%r" --stripe -q -o "$E2E_TMP/bad.dist"
[ "$RC" -eq 2 ] && grep -q -- '--stripe: every rank must be given the same one file' "$E2E_TMP/err" ||
	fail "--stripe with a directory per rank: exit $RC, $(head -c 400 "$E2E_TMP/err") (want 2)"
# Rank 0 writes what another rank reads: refused, as dedisgen refuses an output among its inputs
# (rank 0's own PATHs are not the only inputs).
cp "$D/d1/a" "$E2E_TMP/d1-a.before"
gen_mpi "$D/d%r" -q -o "$D/d1/a"
[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err")" -eq 1 ] &&
	grep -q "^dedisgen-mpi: rank 1: output -o $D/d1/a is also an input" "$E2E_TMP/err" ||
	fail "-o onto rank 1's input: exit $RC (want 2, one line naming rank 1): $(head -c 800 "$E2E_TMP/err")"
cmp -s "$D/d1/a" "$E2E_TMP/d1-a.before" || fail "-o onto rank 1's input overwrote it"
gen_mpi "$D/d%r" -q -o "$E2E_TMP/ok.dist" --json "$D/d2/new.json"
[ "$RC" -eq 2 ] && grep -q "^dedisgen-mpi: rank 2: output --json $D/d2/new.json is also an input" "$E2E_TMP/err" ||
	fail "--json inside rank 2's directory: exit $RC (want 2): $(head -c 800 "$E2E_TMP/err")"
ls "$D/d2/new.json" "$E2E_TMP"/ok.dist* >/dev/null 2>&1 && fail "a refused run left an output"
gen_mpi_ok "$D/shared" --stripe -q -o "$E2E_TMP/stripe-opt.dist"
same "$E2E_TMP/one-4k.dist" "$E2E_TMP/stripe-opt.dist" "--stripe on one host"
note "bad input on one rank: exit 2, one line naming it, nothing written; one tree for all ranks refused; --stripe checked"

# A device is known by its number, not by its node: two ranks reading one loop device through
# two nodes of it (mknod, a chroot's /dev), or one its disk and one a partition of it, would
# count its blocks twice (root only: a loop device with an MBR of one partition, at 1 MiB).
PDEV=
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null 2>&1; then
	truncate -s 4M "$E2E_TMP/disk.img"
	python3 - "$E2E_TMP/disk.img" <<'PY' || fail "cannot write the partition table"
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(446)
    f.write(struct.pack("<B3sB3sII", 0, b"\0" * 3, 0x83, b"\0" * 3, 2048, 2048) + b"\0" * 48 + b"\x55\xaa")
PY
	PDEV=$(losetup -r -P -f --show "$E2E_TMP/disk.img" 2>/dev/null) || PDEV=
fi
if [ -n "$PDEV" ]; then
	on_exit "losetup -d '$PDEV'"
	n=$(basename "$PDEV")
	[ -r "/sys/block/$n/${n}p1/dev" ] || partx -a "$PDEV" 2>/dev/null || true
	# shellcheck disable=SC2046 # MAJOR MINOR
	mknod "$E2E_TMP/n1" b $(tr : ' ' <"/sys/block/$n/dev") || fail "mknod of $PDEV failed"
	ln -s "$PDEV" "$E2E_TMP/n0" && ln -s "$D/d2" "$E2E_TMP/n2" && ln -s "$D/d3" "$E2E_TMP/n3"
	gen_mpi "$E2E_TMP/n%r" -q -o "$E2E_TMP/bad.dist"
	[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err")" -eq 1 ] &&
		grep -q "^dedisgen-mpi: $E2E_TMP/n0: rank 1 reads it too" "$E2E_TMP/err" ||
		fail "two nodes of $PDEV on ranks 0 and 1: exit $RC (want 2, one line): $(head -c 800 "$E2E_TMP/err")"
	ls "$E2E_TMP"/bad.dist* >/dev/null 2>&1 && fail "one device counted twice refused, yet an output"
	if [ -r "/sys/block/$n/${n}p1/dev" ]; then
		rm "$E2E_TMP/n1"
		# shellcheck disable=SC2046
		mknod "$E2E_TMP/n1" b $(tr : ' ' <"/sys/block/$n/${n}p1/dev") || fail "mknod of ${n}p1 failed"
		gen_mpi "$E2E_TMP/n%r" -q -o "$E2E_TMP/bad.dist"
		[ "$RC" -eq 2 ] && [ "$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err")" -eq 1 ] &&
			grep -q "^dedisgen-mpi: $E2E_TMP/n0: rank 1 reads a partition of it: its blocks would be counted twice" \
				"$E2E_TMP/err" ||
			fail "$PDEV on rank 0, its partition on rank 1: exit $RC (want 2, one line): $(head -c 800 "$E2E_TMP/err")"
		ls "$E2E_TMP"/bad.dist* >/dev/null 2>&1 && fail "a disk and its partition refused, yet an output"
	fi
	rm "$E2E_TMP"/n[0-3]
	note "one device through two nodes, and a disk beside its partition, on two ranks: refused"
fi

# 5. A read error on rank 2's part with --strict: every rank exits 1, one line, nothing written.
SHIM=$top_builddir/tests/fault/dedis-fault.so
if [ "${DEDIS_SANITIZED:-}" != 1 ] && [ -f "$SHIM" ]; then
	head -c 8 /dev/zero >"$E2E_TMP/fault.state"
	: >"$E2E_TMP/fault.log"
	RC=0
	timeout 300 "${MPIRUN[@]}" -x LD_PRELOAD="$SHIM" -x DEDIS_FAULT_OP=read -x DEDIS_FAULT_NTH=1 \
		-x DEDIS_FAULT_PATH="$D/d2/" -x DEDIS_FAULT_STATE="$E2E_TMP/fault.state" -x DEDIS_FAULT_LOG="$E2E_TMP/fault.log" \
		"$DEDISGEN_MPI" "$D/d%r" -q --strict -o "$E2E_TMP/io.dist" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
	[ "$RC" -ne 124 ] || fail "a read error on rank 2: dedisgen-mpi did not end within 300 s (a rank hangs)"
	[ -s "$E2E_TMP/fault.log" ] || fail "the shim injected nothing (log empty)"
	[ "$RC" -eq 1 ] || fail "a read error on rank 2: exit $RC (want 1): $(head -c 800 "$E2E_TMP/err")"
	lines=$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err" || true)
	[ "$lines" -eq 1 ] && grep -q '^dedisgen-mpi: rank 2: scan failed: .*Input/output error' "$E2E_TMP/err" ||
		fail "a read error on rank 2: want one line naming rank 2 and the error, got: $(cat "$E2E_TMP/err")"
	ls "$E2E_TMP"/io.dist* >/dev/null 2>&1 && fail "a failed run left an output: $(ls "$E2E_TMP"/io.dist*)"
	note "a read error on rank 2 (--strict): every rank exits 1, one line, nothing written"

	# 6. The SIGTERM mpirun sends every rank when it is interrupted (Ctrl-C), or a SIGHUP (the
	#    terminal gone), while rank 2 scans (held in its first read by the shim until every rank
	#    has the signal): every rank ends, exit 1, one line, nothing written.
	for sig in TERM HUP; do
		head -c 8 /dev/zero >"$E2E_TMP/fault.state"
		: >"$E2E_TMP/fault.log"
		"${MPIRUN[@]}" -x LD_PRELOAD="$SHIM" -x DEDIS_FAULT_OP=read -x DEDIS_FAULT_NTH=1 -x DEDIS_FAULT_ACTION=stop \
			-x DEDIS_FAULT_PATH="$D/d2/" -x DEDIS_FAULT_STATE="$E2E_TMP/fault.state" -x DEDIS_FAULT_LOG="$E2E_TMP/fault.log" \
			"$DEDISGEN_MPI" "$D/d%r" -q -o "$E2E_TMP/int.dist" >"$E2E_TMP/out" 2>"$E2E_TMP/err" &
		job=$!
		on_exit "kill -9 $job 2>/dev/null"
		for _ in $(seq 1 600); do [ -s "$E2E_TMP/fault.log" ] && break; sleep 0.1; done
		[ -s "$E2E_TMP/fault.log" ] || fail "rank 2 never reached its first read: $(cat "$E2E_TMP/err")"
		held=$(awk '{print $NF}' "$E2E_TMP/fault.log")
		ranks=$(pgrep -P "$job" -x dedisgen-mpi || true)
		[ "$(echo "$ranks" | wc -w)" -eq 4 ] || fail "expected 4 ranks under mpirun, found: $ranks"
		# shellcheck disable=SC2086
		kill -$sig $ranks
		kill -CONT "$held"
		RC=0
		timeout 120 tail --pid="$job" -f /dev/null || fail "the ranks did not end within 120 s of SIG$sig (a rank hangs)"
		wait "$job" || RC=$?
		[ "$RC" -eq 1 ] || fail "SIG$sig to every rank: exit $RC (want 1): $(head -c 800 "$E2E_TMP/err")"
		lines=$(grep -c '^dedisgen-mpi:' "$E2E_TMP/err" || true)
		[ "$lines" -eq 1 ] && grep -q '^dedisgen-mpi: .*scan failed: interrupted; nothing written' "$E2E_TMP/err" ||
			fail "SIG$sig to every rank: want one 'interrupted' line, got: $(cat "$E2E_TMP/err")"
		ls "$E2E_TMP"/int.dist* >/dev/null 2>&1 && fail "an interrupted run left an output: $(ls "$E2E_TMP"/int.dist*)"
		note "SIG$sig to every rank during the scan: exit 1, $(grep '^dedisgen-mpi:' "$E2E_TMP/err")"
	done
else
	note "the read-error and Ctrl-C cases need the fault shim, which the sanitizer build does not preload"
fi
