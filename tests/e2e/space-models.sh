#!/bin/bash
# space-models.sh - what each kind of store should keep (issue 38): from a distribution dedisgen
# measured with [granularity 1], dedisbench's physical lines (<= 80 columns) and JSON give the
# per-block, 128 KiB record and CDC stores' figures, consistent with each other, with the
# distribution and (record dedup) with the target's bytes hashed; --space-model picks the ideal the observed space is judged against; on a btrfs
# loop mount with compress-force=zstd (root) the record model is the default and is set beside
# what compsize reads from btrfs.
source "$(dirname "$0")/lib.sh"
mktmp /var/tmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
command -v python3 >/dev/null 2>&1 || skip "python3 is missing (it writes the data)"
D=$E2E_TMP/data
# 4 MiB: 1 MiB of text twice (whole 128 KiB records copied), 512 KiB of zeros, 1 MiB of other
# text, 512 KiB of seeded random bytes
python3 -c '
import random, sys
random.seed(38)
words = ["".join(random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(random.randint(3, 9))) for _ in range(2000)]
def text(n):
    out = " ".join(random.choice(words) for _ in range(n // 4)).encode()
    return out[:n]
a = text(1 << 20)
sys.stdout.buffer.write(a + a + bytes(1 << 19) + text(1 << 20) + random.randbytes(1 << 19))' >"$D"
"$DEDISGEN" "$D" --compress-sample all -o "$D.dist" -q || fail "dedisgen scan exited $?"
grep -q '^\[granularity 1\]$' "$D.dist" || fail "the distribution has no [granularity 1] section"
dist_zstd3=$(awk '$1 == "piece" && $2 == 131072 { printf "%.6f", $3 / $5 }' "$D.dist")
note "the data's 128 KiB zstd -3 ratio: $dist_zstd3"

# run NAME ARGS...: dedisbench from the distribution onto a fresh directory, JSON in $E2E_TMP/NAME.json
run() {
	local name=$1
	shift
	mkdir "$E2E_TMP/$name"
	expect_ok --target "$E2E_TMP/$name" --procs 2 --file-size 8MiB --seed 5 --json "$E2E_TMP/$name.json" "$@"
}

run plain --dist "$D.dist"
J=$E2E_TMP/plain.json
long=$(awk '/^physical/ && length > 80' "$E2E_TMP/out")
[ -z "$long" ] || fail "physical lines over 80 columns: $long"
grep -q '^physical per block (VDO): .* zstd-1 (.*), .* LZ4 (.*)$' "$E2E_TMP/out" || fail "no per-block line: $(grep ^physical "$E2E_TMP/out")"
grep -q '^physical per record (ZFS): .* zstd-3 (.*), record dedup [0-9.]*:1$' "$E2E_TMP/out" ||
	fail "no per-record line with zstd -3: $(grep ^physical "$E2E_TMP/out")"
jcheck "$J" '.physical.record | .record_bytes == 131072 and .records > .zero_records and .distinct_records > 0
	and .sample_rate == 1 and .dedup_ratio >= 1 and .alloc_per_record > 0 and .alloc_per_record <= 131072
	and .dedup_alloc_bytes > 0 and .alloc_bytes >= .dedup_alloc_bytes and .dedup_raw_bytes == .distinct_records * 131072'
# the zstd -3 ratio is the distribution's own; the sizes are its mean record on the run's records
within "$(jget "$J" .physical.record.zstd3_ratio)" "$dist_zstd3" 0.01 || fail "zstd3_ratio is not the distribution's $dist_zstd3"
jcheck "$J" '.physical.record | (.dedup_alloc_bytes - .distinct_records * .alloc_per_record | fabs) < 1
	and (.alloc_bytes - (.records - .zero_records) * .alloc_per_record | fabs) < 1'
# whole records deduplicate no better than their 4 KiB blocks (the zero block left out of both)
jcheck "$J" '((.physical.logical_bytes / 4096 - .live.zero_blocks) / .physical.distinct_blocks) as $b
	| .physical.record.dedup_ratio <= $b + 1e-9' "record dedup above block dedup" '{physical, zero: .live.zero_blocks}'
# the CDC store: the distribution's [cdc 1] ratio (as dedisgen show reads it) on the run's bytes
dist_cdc=$("$DEDISGEN" show "$D.dist" --json | jq '[.. | objects | select(has("cdc")) | .cdc.dedup_ratio] | first // "none"')
note "the data's CDC dedup ratio: $dist_cdc"
if [ "$dist_cdc" = '"none"' ] || [ "$dist_cdc" = none ]; then
	jcheck "$J" '.physical.cdc.unknown == "no [cdc 1] in the distribution"'
else
	jcheck "$J" ".physical.cdc | .avg_chunk_bytes > 0 and (.dedup_ratio / $dist_cdc - 1 | fabs) < 1e-6 and
		(.dedup_bytes * .dedup_ratio / $(jget "$J" .physical.logical_bytes) - 1 | fabs) < 1e-6 and .lz4_bytes > 0"
	grep -q '^physical per chunk (CDC): .* dedup ([0-9.]*:1), .* LZ4 ([0-9.]*:1)$' "$E2E_TMP/out" ||
		fail "no per-chunk line: $(grep ^physical "$E2E_TMP/out")"
fi
fstype=$(stat -f -c %T "$E2E_TMP")
if [ "$fstype" = btrfs ]; then
	jcheck "$J" '.space.model == "record"'
else
	jcheck "$J" '.space.model == "block" and .space.basis == "dedup+zstd-1"'
fi

# The record dedup against the bytes: a file target's 128 KiB pieces hashed (granjudge.py's
# dedup_fixed[128], whose zero records are one distinct piece): exactly the ledger's figure.
truncate -s 16M "$E2E_TMP/file"
expect_ok --target "$E2E_TMP/file" --procs 2 --file-size 8MiB --seed 5 --dist "$D.dist" --json "$E2E_TMP/file.json"
bytes_dedup=$(python3 -c '
import hashlib, sys
seen, n = set(), 0
with open(sys.argv[1], "rb") as f:
    while (r := f.read(131072)):
        seen.add(hashlib.sha1(r).digest()); n += 1
print(n / len(seen))' "$E2E_TMP/file")
ledger_dedup=$(jq '.physical.record | .records / (.distinct_records + (if .zero_records > 0 then 1 else 0 end))' "$E2E_TMP/file.json")
note "record dedup of the file's bytes $bytes_dedup, of the ledger $ledger_dedup"
within "$ledger_dedup" "$bytes_dedup" 0.001 || fail "the ledger's record dedup $ledger_dedup is not the bytes' $bytes_dedup"

# --space-model with --space-cmd: each kind's expected bytes are that store's physical figure
for m in block record cdc; do
	run "m$m" --dist "$D.dist" --space-cmd "du -sB1 '$E2E_TMP/m$m' | cut -f1" --space-model $m
	J=$E2E_TMP/m$m.json
	jcheck "$J" '.space.source == "command" and .space.observed_bytes > 0'
	case $m in
	block) jcheck "$J" '.space.model == "block" and .space.basis == "dedup+zstd-1" and
		(.space.expected_bytes - .physical.zstd1_bytes | fabs) <= 1' ;;
	record) jcheck "$J" '.space.model == "record" and .space.basis == "record-dedup+zstd-3" and
		.space.expected_bytes == .physical.record.dedup_alloc_bytes and (.space.model_reason | test("--space-model record"))' ;;
	cdc) jcheck "$J" 'if .physical.cdc.unknown then .space.model == "block" and (.space.model_reason | test("cdc"))
		else .space.model == "cdc" and .space.basis == "cdc-dedup+lz4" and .space.expected_bytes == .physical.cdc.lz4_bytes end' ;;
	esac
done
# incompressible content: no zstd -3 figure (and why); the record model keeps whole records
run incomp --dist "$D.dist" --compress 1 --space-cmd "du -sB1 '$E2E_TMP/incomp' | cut -f1" --space-model record
jcheck "$E2E_TMP/incomp.json" '.physical.record.zstd3_ratio == null and (.physical.record.zstd3_unknown | test("incompressible"))
	and .space.basis == "record-dedup" and .space.expected_bytes == .physical.record.dedup_raw_bytes'
grep -q '^physical per record (ZFS): zstd-3 unknown (see JSON), record dedup' "$E2E_TMP/out" || fail "no record line without zstd -3"
# a distribution without [granularity 1]: no figure, and the record model falls back to per block
no_gran <"$D.dist" >"$D.nogran.dist"
run nogran --dist "$D.nogran.dist" --space-cmd "du -sB1 '$E2E_TMP/nogran' | cut -f1" --space-model record
jcheck "$E2E_TMP/nogran.json" '.physical.record.zstd3_unknown == "no [granularity 1] in the distribution"
	and .space.model == "block" and (.space.model_reason | test("zstd-3 of records unknown"))'
# a kind dedisbench does not know: bad input, exit 2, nothing written
mkdir "$E2E_TMP/bad"
run_bench --target "$E2E_TMP/bad" --procs 1 --file-size 1MiB --dist "$D.dist" --space-model zfs
[ "$RC" -eq 2 ] || fail "--space-model zfs exited $RC, want 2"
[ -z "$(ls -A "$E2E_TMP/bad")" ] || fail "--space-model zfs wrote into the target"

# btrfs compress-force=zstd: records by default; compsize's disk usage beside the record figure
[ "$(id -u)" -eq 0 ] || { note "not root: btrfs part skipped"; exit 0; }
for tool in losetup mkfs.btrfs compsize; do
	command -v $tool >/dev/null 2>&1 || { note "$tool is missing: btrfs part skipped"; exit 0; }
done
grep -qw btrfs /proc/filesystems || { note "no btrfs in this kernel: btrfs part skipped"; exit 0; }
truncate -s 1G "$E2E_TMP/img"
mkfs.btrfs -q "$E2E_TMP/img" >/dev/null 2>&1 || fail "mkfs.btrfs failed"
DEV=$(losetup -f --show "$E2E_TMP/img" 2>/dev/null) || { note "no loop device: btrfs part skipped"; exit 0; }
on_exit "losetup -d '$DEV'"
mkdir "$E2E_TMP/mnt"
mount -o compress-force=zstd "$DEV" "$E2E_TMP/mnt" || { note "cannot mount btrfs: btrfs part skipped"; exit 0; }
on_exit "umount '$E2E_TMP/mnt'"
mkdir "$E2E_TMP/mnt/d"
J=$E2E_TMP/btrfs.json
expect_ok --target "$E2E_TMP/mnt/d" --procs 2 --file-size 32MiB --dist "$D.dist" --seed 5 --keep --json "$J"
jcheck "$J" '.space.source == "statfs" and .space.model == "record" and .space.basis == "record-dedup+zstd-3"
	and (.space.model_reason | test("compress-force=zstd"))
	and .space.expected_bytes == .physical.record.dedup_alloc_bytes'
disk=$(compsize -b "$E2E_TMP/mnt/d" | awk '$1 == "TOTAL" { print $3 }')
[ -n "$disk" ] && [ "$disk" -gt 0 ] || fail "compsize printed no disk usage"
alloc=$(jget "$J" .physical.record.alloc_bytes)
note "btrfs compress-force=zstd: compsize disk usage $disk bytes, record model (no dedup: btrfs has none) $alloc bytes"
# Generous: the model takes the dataset's record compression, btrfs compresses the replica's
# records, and the replica's content model is being reworked (issue 38 item 2): within 50 %.
within "$disk" "$alloc" 50 || fail "compsize's $disk bytes are not within 50 % of the record model's $alloc"
exit 0
