#!/bin/bash
# Behaviour lock: fixed-seed runs of the three tools (each target kind, I/O engine, access
# pattern, mode, engine index and compression, backup; dedisgen scan/show/compare; dedisengine's
# reports), timings masked, must match tests/golden/expected byte for byte.
#
# A change of output is either a bug or intended; if intended, rewrite the stored files with
# tests/golden/regen.sh BUILD_DIR and commit them with the change (the diff is the review).
# Each run does a fixed amount of work (one pass over the target, or --size), never --time.
# Cases that need what a machine may lack (io_uring, a loop device: root and losetup) are left
# out there, with a note; the rest still run. GOLDEN_WRITE=DIR writes the masked outputs to DIR
# instead of comparing (regen.sh uses it).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# make check passes BUILD/.. as the source tree: name both without detours, as the masks see them.
top_srcdir=$(cd "$top_srcdir" && pwd) top_builddir=$(cd "$top_builddir" && pwd)
EXPECTED=$top_srcdir/tests/golden/expected
# tmpfs may refuse O_DIRECT (libaio, io_uring): work under /var/tmp.
mktmp /var/tmp
GOT=$E2E_TMP/got
W=$E2E_TMP/w
mkdir "$GOT" "$W"
export DEDIS_LOCK_DIR=$E2E_TMP/locks DEDIS_DISTDIR=$top_srcdir/distributions
mkdir "$DEDIS_LOCK_DIR"
SKIPPED=()

# mask_text: drop what differs between runs of the same work (time, rates, latencies, the host,
# statfs readings, versions) and name the scratch and source paths by placeholders.
mask_text() {
	sed -E \
		-e "s|$W|@W@|g" -e "s|$top_builddir|@BUILD@|g" -e "s|$top_srcdir|@SRC@|g" \
		-e '/^elapsed /d' -e '/^host: /d' \
		-e 's/^( +[a-z0-9]+ +[0-9]+ ops).*IOPS.*$/\1/' \
		-e 's/^(space \(statfs[^)]*\): logical [^,]*,).*$/\1 @STATFS@/' \
		-e 's/(dedis[a-z-]*) [0-9]+\.[0-9]+\.[0-9]+[^ "]*/\1 @VERSION@/g' \
		-e 's/[0-9.]+ (MiB|GiB|KiB)\/s/@RATE@/g' \
		-e 's/^( +[0-9]+ +[0-9.]+) +[0-9.]+( +[0-9.]+ %)/\1 @RATE@\2/' \
		-e 's/index [0-9.]+ B\/distinct/index @MEM@ B\/distinct/' \
		-e 's/ in [0-9.]+ s\b/ in @TIME@ s/g' \
		-e "s|$LOOP_DEV|@LOOP@|g"
}

# mask_json: the same for a JSON document, by key (pretty-printed, key order kept).
mask_json() {
	jq 'walk(if type == "object" and has("version") then .version = "@VERSION@" else . end)
		| del(.. | objects | .index_bytes_per_distinct?)
		| del(.. | objects | .seconds?, .iops?, .mib_per_s?, .latency_us?, .elapsed?, .elapsed_s?,
			.mib_s?, .wall_s?, .cpu_s?, .read_mib_s?, .hash_mib_s?)
		| del(.host?)
		| if .space?.source == "statfs" then del(.space.observed_bytes, .space.efficiency,
			.space.before_bytes, .space.after_bytes, .space.allocated_bytes_before, .space.allocated_bytes_after,
			.space.model_reason)
		  else . end' | mask_text
}

LOOP_DEV=@no-loop@

# case_run NAME TOOL ARGS...: run TOOL, its stdout and stderr masked into NAME.out; a run that
# fails is a failure of the test (its exit status is part of the output only when it is 0).
case_run() {
	local name=$1 rc=0
	shift
	"$@" >"$E2E_TMP/o" 2>"$E2E_TMP/e" || rc=$?
	[ "$rc" -eq 0 ] || fail "case $name: $* exited $rc: $(head -c 600 "$E2E_TMP/e")"
	{ mask_text <"$E2E_TMP/o"; sed 's/^/stderr: /' "$E2E_TMP/e" | mask_text; } >"$GOT/$name.out"
}

# case_json NAME FILE: the masked JSON document FILE as NAME.json.
case_json() {
	mask_json <"$2" >"$GOT/$1.json" || fail "case $1: $2 is not JSON"
}

# bench NAME ARGS...: a dedisbench run with its summary and --json.
bench() {
	local name=$1
	shift
	case_run "$name" "$DEDISBENCH" --seed 7 --procs 2 --file-size 2MiB --json "$W/$name.json" "$@"
	case_json "$name" "$W/$name.json"
}

# data_sum NAME FILE...: the bytes written (content is a pure function of seed and id) as
# NAME.sha256, so a change of content that every report would miss still shows.
data_sum() {
	local name=$1
	shift
	sha256sum "$@" | mask_text >"$GOT/$name.sha256"
}

# optional NAME WHY: leave case NAME out here, with a note.
optional() {
	SKIPPED+=("$1")
	note "case $1 left out: $2"
}

# --- dedisbench on null: every mode and access pattern, the content options
bench null-write-seq -T null -w
bench null-mixed-uniform -T null -m -a uniform --read-pct 30
bench null-read-nurand -T null -r -a nurand --nurand-a 64
bench null-sampled-scattered -T null -w -a uniform --content sampled --layout scattered --compress 2 -d kernels
bench null-size -T null -w -a nurand --size 3MiB -d archival

# --- a directory: each I/O engine. The first run's files stay for dedisgen; the others work in
# directories of their own (each populates its own), so a case left out changes no other.
mkdir "$W/dir" "$W/dir-mixed" "$W/dir-libaio" "$W/dir-io_uring"
bench dir-sync-write-seq -T "$W/dir" -w --verify final --keep
data_sum dir-sync-write-seq "$W"/dir/dedisbench.*
bench dir-sync-mixed-uniform -T "$W/dir-mixed" -m -a uniform --populate content --verify both --sync fsync
if dd if=/dev/zero of="$W/dir-libaio/probe" bs=4096 count=1 oflag=direct status=none 2>/dev/null; then
	rm -f "$W/dir-libaio/probe"
	bench dir-libaio-read-nurand -T "$W/dir-libaio" -r -a nurand --ioengine libaio --iodepth 4 --verify online
	rc=0
	"$DEDISBENCH" -T "$W/dir-io_uring" --procs 1 --file-size 64KiB --ioengine io_uring --quiet >/dev/null 2>&1 || rc=$?
	if [ "$rc" -eq 0 ]; then
		bench dir-io_uring-mixed-seq -T "$W/dir-io_uring" -m --ioengine io_uring --iodepth 4 --verify both
	else
		optional dir-io_uring-mixed-seq "io_uring is not available (dedisbench exited $rc)"
	fi
else
	optional dir-libaio-read-nurand "O_DIRECT is not supported on /var/tmp"
	optional dir-io_uring-mixed-seq "O_DIRECT is not supported on /var/tmp"
fi

# --- a single existing file, written then read back
truncate -s 4MiB "$W/file"
bench file-write-seq -T "$W/file" -w -d highperf
data_sum file-write-seq "$W/file"
bench file-read-uniform -T "$W/file" -r -a uniform --populate none --verify online -d highperf

# --- engine volumes: each index, both compressions; dedisengine's reports of the volume
engine_case() {
	local name=$1 opts=$2
	shift 2
	bench "$name" -T "engine:$W/$name,$opts" --keep "$@"
	case_run "$name-stat" "$DEDISENGINE" stat "$W/$name"
	case_run "$name-stat-json" "$DEDISENGINE" stat --json "$W/$name"
	case_run "$name-fsck-json" "$DEDISENGINE" fsck --json "$W/$name"
}
engine_case engine-mem-none index=mem,compress=none -w
# One worker where the order of writes across workers would change the counts: which lookups
# the Bloom filter answers, how LZ4 fragments pack.
engine_case engine-bdb-lz4 index=bdb,compress=lz4 -m -a uniform --verify both --procs 1 --file-size 4MiB
engine_case engine-bloom-none index=bloom,compress=none -r -a nurand --verify online --hints --procs 1
engine_case engine-mem-lz4 index=mem,compress=lz4 -w --compress 3 --content sampled --procs 1
bench engine-backup -T "engine:$W/backup" --procs 1 --workload backup --generations 3 --backup-rates 10:5:5 --file-size 1MiB

# --- a loop device (root and losetup only)
if [ "$(id -u)" -eq 0 ] && command -v losetup >/dev/null 2>&1 && truncate -s 4MiB "$W/img" &&
	LOOP_DEV=$(losetup -f --show "$W/img" 2>/dev/null); then
	on_exit "losetup -d $LOOP_DEV"
	bench blockdev-libaio-write-seq -T "$LOOP_DEV" -w --ioengine libaio --iodepth 2 --verify final
	data_sum blockdev-libaio-write-seq "$LOOP_DEV"
else
	LOOP_DEV=@no-loop@
	optional blockdev-libaio-write-seq "needs root and a loop device"
fi

# --- dedisgen: scan the written file and directory, show and compare the results (one thread,
# and a fixed read method: auto chooses by timing)
G=("$DEDISGEN" --threads 1)
case_run gen-scan-file "${G[@]}" --read-method mmap "$W/file" -o "$W/file.dist" --json "$W/file.gen.json"
mask_text <"$W/file.dist" >"$GOT/gen-scan-file.dist"
case_json gen-scan-file "$W/file.gen.json"
case_run gen-scan-dir "${G[@]}" --read-method pread "$W/dir" -b 4096,8192 -o "$W/dir.dist" --json "$W/dir.gen.json"
mask_text <"$W/dir.dist.4096" >"$GOT/gen-scan-dir.dist.4096"
mask_text <"$W/dir.dist.8192" >"$GOT/gen-scan-dir.dist.8192"
case_json gen-scan-dir "$W/dir.gen.json"
case_run gen-show "$DEDISGEN" show "$W/file.dist"
case_run gen-show-json "$DEDISGEN" show --json "$W/file.dist"
case_run gen-show-bundled "$DEDISGEN" show --top 5 "$top_srcdir/distributions/kernels.dist"
case_run gen-compare "$DEDISGEN" compare "$W/file.dist" "$top_srcdir/distributions/highperf.dist"
case_run gen-compare-json "$DEDISGEN" compare --json "$W/dir.dist.4096" "$W/file.dist"

# --- dedisengine on its own: format, import the written file, the reports, export
E=$W/vol
case_run engine-format "$DEDISENGINE" format "$E" --size 4MiB --index bdb --compress lz4
case_run engine-import "$DEDISENGINE" import "$E" "$W/file"
case_run engine-stat "$DEDISENGINE" stat "$E"
case_run engine-stat-json "$DEDISENGINE" stat --json "$E"
case_run engine-gc-json "$DEDISENGINE" gc --json "$E"
case_run engine-export "$DEDISENGINE" export "$E" "$W/file.back"
cmp -s "$W/file" "$W/file.back" || fail "dedisengine export differs from the file imported"

if [ -n "${GOLDEN_WRITE:-}" ]; then
	mkdir -p "$GOLDEN_WRITE"
	for f in "$GOLDEN_WRITE"/*; do
		[ -e "$f" ] || continue
		n=$(basename "$f")
		[ -e "$GOT/$n" ] && continue
		# a case left out here keeps its stored output; any other stale file goes
		keep=0
		for s in "${SKIPPED[@]}"; do [[ $n == "$s".* ]] && keep=1; done
		[ "$keep" -eq 1 ] || rm -f "$f"
	done
	cp "$GOT"/* "$GOLDEN_WRITE"/
	note "wrote $(ls "$GOT" | wc -l) files to $GOLDEN_WRITE"
	exit 0
fi

[ -d "$EXPECTED" ] || fail "no stored outputs at $EXPECTED (tests/golden/regen.sh BUILD_DIR)"
bad=0
for f in "$EXPECTED"/*; do
	n=$(basename "$f")
	if [ ! -e "$GOT/$n" ]; then
		left_out=0
		for s in "${SKIPPED[@]}"; do [[ $n == "$s".* ]] && left_out=1; done
		[ "$left_out" -eq 1 ] && continue
		echo "golden: $n is stored but no case produced it" >&2
		bad=1
	elif ! diff -u "$f" "$GOT/$n" >&2; then
		bad=1
	fi
done
for f in "$GOT"/*; do
	[ -e "$EXPECTED/$(basename "$f")" ] || { echo "golden: new output $(basename "$f") has no stored copy" >&2; bad=1; }
done
[ "$bad" -eq 0 ] || fail "outputs differ from tests/golden/expected (diff above); if intended: tests/golden/regen.sh BUILD_DIR"
note "$(ls "$GOT" | wc -l) outputs match tests/golden/expected (${#SKIPPED[@]} cases left out here)"
