#!/bin/bash
# content-granularity.sh - a distribution's [granularity 1] and [cdc 1] come true on the target: a
# replica of a tar-like dataset (text files with their own words, random files, zeros, aligned
# copies, copies behind a 512-byte header), judged by python3-zstandard and borg's chunker (not our
# C code), grows from 4 KiB to 128 KiB pieces as the data does under zstd -3 and -1 (within 8 %),
# while its 4 KiB ratio stays the model's (within 3 % of a replica without the section, which grows
# far less); borg's content-defined chunks dedup it as the data (within 5 %; without [cdc 1] it
# dedups less); a read pass without a ledger recognises every block, shifted copies included.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x $PY ] && $PY -c 'import zstandard' 2>/dev/null || skip "python3-zstandard is not installed"
command -v borg >/dev/null || skip "borg (borgbackup) is not installed"
mktmp /var/tmp
DATA=$E2E_TMP/data

# 24 MiB laid out as a file system lays files: 4 KiB-aligned files of 16 KiB to 512 KiB, each
# text (lines of the file's own 300 words out of 6,000), random bytes, zeros, a copy of an earlier
# file, or one behind a 512-byte header (as a tar holds it: shifted, unseen by 4 KiB dedup).
# Seeded: the same bytes every run.
$PY - >"$DATA" <<'EOF'
import random, sys
random.seed(1938)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(2, 10))) for _ in range(6000)]
size, out, files = 24 << 20, bytearray(), []
while len(out) < size:
    n = random.randint(4, 128) * 4096
    kind = random.random()
    if kind < 0.1 and files:
        body = random.choice(files)
    elif kind < 0.2 and files:
        body = random.randbytes(512) + random.choice(files)
        body += bytes(-len(body) % 4096)
    elif kind < 0.32:
        body = random.randbytes(n)
    elif kind < 0.37:
        body = bytes(n)
    else:
        mine = random.sample(words, 300)
        text = "\n".join(" ".join(random.choice(mine) for _ in range(random.randint(4, 14))) for _ in range(n // 40))
        body = text.encode()[:n].ljust(n, b"\n")
        files.append(body)
    out += body
sys.stdout.buffer.write(bytes(out[:size]))
EOF
[ -s "$DATA" ] || fail "the dataset was not written"

# growth FILE: zstd -3 and -1 ratios of 128 KiB records over those of 4 KiB blocks, non-zero
# pieces each compressed alone (as dedis-dist(5) and granjudge define them)
growth() {
	$PY - "$1" <<'EOF'
import sys, zstandard
data = open(sys.argv[1], "rb").read()
def ratio(piece, level):
    c = zstandard.ZstdCompressor(level=level)
    raw = out = 0
    for off in range(0, len(data), piece):
        p = data[off:off + piece]
        if p.count(0) == len(p):
            continue
        raw += len(p)
        out += min(len(c.compress(p)), len(p))
    return raw / out
r = {lv: (ratio(4096, lv), ratio(131072, lv)) for lv in (3, 1)}
print("%.4f %.4f %.4f %.4f" % (r[3][1] / r[3][0], r[1][1] / r[1][0], r[3][0], r[1][0]))
EOF
}

"$DEDISGEN" "$DATA" --compress-sample all -q -o "$E2E_TMP/data.dist" || fail "dedisgen on the dataset exited $?"
grep -q '^\[granularity 1\]' "$E2E_TMP/data.dist" || fail "dedisgen wrote no [granularity 1] section"
sed '/^\[granularity 1\]/,$d' "$E2E_TMP/data.dist" >"$E2E_TMP/flat.dist"
grep -q '^\[cdc 1\]' "$E2E_TMP/data.dist" || fail "dedisgen wrote no [cdc 1] section"

# replica DIST NAME: a sequential fill of a file the dataset's size
replica() {
	truncate -s $((24 << 20)) "$E2E_TMP/$2"
	expect_ok --dist "$1" --target "$E2E_TMP/$2" --procs 1 --access seq --seed 5 --quiet --json "$E2E_TMP/$2.json"
}
replica "$E2E_TMP/data.dist" rep
replica "$E2E_TMP/flat.dist" flat

read -r d3 d1 d4 _ < <(growth "$DATA")
read -r r3 r1 r4 _ < <(growth "$E2E_TMP/rep")
read -r f3 f1 f4 _ < <(growth "$E2E_TMP/flat")
note "zstd -3 growth 4 -> 128 KiB: data $d3, replica $r3, without the section $f3; zstd -1: $d1, $r1, $f1"
note "zstd -3 at 4 KiB: data $d4, replica $r4, without the section $f4"
for pair in "zstd -3:$r3:$d3" "zstd -1:$r1:$d1"; do
	IFS=: read -r codec rep data <<<"$pair"
	rel=$(awk -v a="$rep" -v b="$data" 'BEGIN { x = a / b - 1; print x < 0 ? -x : x }')
	fcmp "$rel" "<=" 0.08 || fail "$codec growth from 4 to 128 KiB: replica $rep, data $data (more than 8 % apart)"
done
fcmp "$f3" "<" "$(awk -v d="$d3" 'BEGIN { print 1 + (d - 1) / 2 }')" ||
	fail "without [granularity 1] the replica grows $f3 under zstd -3, data $d3: the test cannot tell the model works"
rel=$(awk -v a="$r4" -v b="$f4" 'BEGIN { x = a / b - 1; print x < 0 ? -x : x }')
fcmp "$rel" "<=" 0.03 || fail "the vocabulary moved the 4 KiB zstd -3 ratio: $r4 against $f4 without it"

# borg's chunker (buzhash, 8 KiB average, as shared/tools/granjudge.py runs it): the replica's CDC
# dedup within 5 % of the data's; the replica without [cdc 1] (no shifted copies) dedups less
cdc() {
	local repo=$E2E_TMP/borg.$2
	export BORG_BASE_DIR=$E2E_TMP/borgbase BORG_UNKNOWN_UNENCRYPTED_REPO_ACCESS_IS_OK=yes
	borg init -e none "$repo" >/dev/null 2>&1 || fail "borg init $repo failed"
	borg create --chunker-params buzhash,12,16,13,4095 --compression none "$repo::a" "$1" >/dev/null 2>&1 ||
		fail "borg create of $1 failed"
	borg info --json "$repo::a" | jq -r --argjson s "$(stat -c %s "$1")" '$s / .archives[0].stats.deduplicated_size'
}
sed '/^\[cdc 1\]/,/^\[/{/^\[cdc 1\]/d;/^\[/!d}' "$E2E_TMP/data.dist" >"$E2E_TMP/nocdc.dist"
replica "$E2E_TMP/nocdc.dist" nocdc
cd_data=$(cdc "$DATA" data) cd_rep=$(cdc "$E2E_TMP/rep" rep) cd_no=$(cdc "$E2E_TMP/nocdc" nocdc)
note "borg CDC dedup: data $cd_data, replica $cd_rep, without [cdc 1] $cd_no"
rel=$(awk -v a="$cd_rep" -v b="$cd_data" 'BEGIN { x = a / b - 1; print x < 0 ? -x : x }')
fcmp "$rel" "<=" 0.05 || fail "borg CDC dedup: replica $cd_rep, data $cd_data (more than 5 % apart)"
fcmp "$cd_no" "<" "$cd_rep" || fail "without [cdc 1] the replica dedups $cd_no under CDC, with it $cd_rep"
jcheck "$E2E_TMP/rep.json" '.content.shifted_copies.blocks > 0' "the run's JSON counts its shifted copies"

# the run says what it fitted
jcheck "$E2E_TMP/rep.json" '.content.vocabulary.share_of_128 > 0' "the run's JSON names the fitted share"
jcheck "$E2E_TMP/flat.json" '.content.vocabulary == null' "without [granularity 1] no vocabulary is fitted"

# A read pass without the ledger recognises every block it finds, vocabulary recipes included.
expect_ok --dist "$E2E_TMP/data.dist" --target "$E2E_TMP/rep" --procs 1 --mode read --populate none --verify final \
	--seed 5 --size 4KiB --quiet --json "$E2E_TMP/verify.json"
valid=$(jget "$E2E_TMP/verify.json" .verify.found.valid) zero=$(jget "$E2E_TMP/verify.json" .verify.found.zero)
note "read pass without a ledger: $valid valid blocks, $zero zero blocks"
[ $((valid + zero)) = 6144 ] || fail "the read pass recognised $valid + $zero of 6144 blocks"
exit 0
