#!/bin/bash
# randwrite-vs-fio.sh - 4 KiB uniform random writes to one 1 GiB file on a real filesystem:
# dedisbench vs fio, IOPS and ratio, (a) psync buffered, (b) libaio O_DIRECT iodepth 32 and
# (c) io_uring O_DIRECT iodepth 32, where dedisbench's own libaio runs alongside too.
#
# Run by hand, not by make check (about four minutes with the defaults):
#   DEDISBENCH=/path/to/dedisbench bench/perf/randwrite-vs-fio.sh
# Knobs (environment): DEDISBENCH, PERF_DIR (a directory on a disk filesystem, not tmpfs;
# default /var/tmp/dedis-perf.PID, removed at the end), DURATION (seconds per run, 6),
# REPS (rounds, 3), PAIRS (which comparisons, default "psync libaio-qd32 io_uring-qd32"). Prints
# every run, then the median IOPS of each tool, the ratios, the target (ours/fio >= 1.0) and
# PASS/BELOW; exits 0 whatever the figures are (SKIP when a tool, or io_uring, is missing).
#
# The same job for both tools: one pre-written 1 GiB file (sequential 1 MiB O_DIRECT writes of
# random bytes, fsynced: every block allocated and written, so neither tool pays for extent
# allocation or unwritten-extent conversion; random rather than zero bytes because a virtual
# disk may keep zero blocks unallocated on the host and then the first random-write runs pay
# for host allocation: measured here, a zero-filled file gave fio 13.5k -> 32.6k IOPS over
# four consecutive libaio runs, a random-filled one a steady ~40-57k), used
# by dedisbench as an existing-file target and by fio as filename=; 4 KiB blocks; uniform random
# offsets with replacement (dedisbench --access uniform; fio norandommap, otherwise fio would
# visit every block once per pass); 1 worker / 1 job; time-bounded (dedisbench --time, fio
# time_based + runtime); no fsync (dedisbench --sync none; fio's default end_fsync=0).
# Before every run: sync, and the file's page cache is dropped (dd oflag=nocache count=0) so
# each run starts from the same state (fio's own invalidate=1 does this too).
# The runs alternate (ours, fio, fio+refill, ours, ...) so drift hits all alike; the median of
# REPS is reported (O_DIRECT on a virtual disk is noisy, +-20 % run to run).
#
# Content: dedisbench always generates fresh, distribution-following content for every write.
# fio by default fills its buffer once with random bytes and only scrambles a few bytes per
# write (scramble_buffers), which costs it almost nothing. So fio runs twice: "static" (its
# default, the flattering baseline) and "refill" (refill_buffers + dedupe_percentage=17, the
# share of redundant blocks D of the default personalfiles distribution), the fair comparison.
# Both ratios are printed; the target applies to both.
set -euo pipefail

DURATION=${DURATION:-6}
REPS=${REPS:-3}
DEDUPE_PCT=${DEDUPE_PCT:-17}
PAIRS=${PAIRS:-psync libaio-qd32 io_uring-qd32}
FILE_MIB=1024

# shellcheck source=bench/perf/lib.sh
. "$(dirname "$0")/lib.sh"
perf_prologue fio

OWN_DIR=0
if [[ -z ${PERF_DIR:-} ]]; then
	PERF_DIR=/var/tmp/dedis-perf.$$
	OWN_DIR=1
fi
mkdir -p "$PERF_DIR"
FILE=$PERF_DIR/dedisbench.0
TMP=$(mktemp -d)
cleanup() {
	rm -rf "$TMP"
	rm -f "$FILE"
	[[ $OWN_DIR -eq 0 ]] || rmdir "$PERF_DIR" 2>/dev/null || true
}
trap cleanup EXIT

fstype=$(df --output=fstype "$PERF_DIR" | tail -n1)
if [[ $fstype == tmpfs || $fstype == ramfs ]]; then
	echo "SKIP: $PERF_DIR is on $fstype; set PERF_DIR to a directory on a disk filesystem"
	exit 0
fi

calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
# median of the arguments
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
verdict() { awk -v v="$1" 'BEGIN { print (v >= 1.0 ? "PASS" : "BELOW") }'; }

settle() {
	sync
	dd of="$FILE" oflag=nocache conv=notrunc,fdatasync count=0 status=none
}

# ours ENGINE_ARGS...: prints IOPS
ours() {
	settle
	"$DB" --target "$FILE" --procs 1 --file-size "${FILE_MIB}MiB" --block-size 4096 \
		--mode write --access uniform --sync none --time "${DURATION}s" --seed 1 \
		--quiet --force --json "$TMP/ours.json" "$@" # --force: fio wrote the file too
	jq -r '.totals.iops' "$TMP/ours.json"
}

# theirs FIO_ARGS...: prints IOPS
theirs() {
	settle
	fio --name=randwrite --filename="$FILE" --size="${FILE_MIB}m" --bs=4k --rw=randwrite \
		--norandommap --fallocate=none --numjobs=1 --time_based --runtime="$DURATION" \
		--output-format=json "$@" >"$TMP/fio.json"
	jq -r '.jobs[0].write.iops' "$TMP/fio.json"
}

# pair LABEL "OUR ARGS" "FIO ARGS": runs the rounds and prints the summary
pair() {
	local label=$1 oargs=$2 fargs=$3 o fs fr v
	local -a os=() fss=() frs=()
	echo "== $label"
	echo "   dedisbench $oargs | fio $fargs"
	for ((r = 1; r <= REPS; r++)); do
		# shellcheck disable=SC2086
		v=$(ours $oargs)
		printf '  run %d: dedisbench          %10.0f IOPS\n' "$r" "$v"
		os+=("$v")
		# shellcheck disable=SC2086
		v=$(theirs $fargs)
		printf '  run %d: fio static buffers  %10.0f IOPS\n' "$r" "$v"
		fss+=("$v")
		# shellcheck disable=SC2086
		v=$(theirs $fargs --refill_buffers --dedupe_percentage="$DEDUPE_PCT")
		printf '  run %d: fio refill+dedupe   %10.0f IOPS\n' "$r" "$v"
		frs+=("$v")
	done
	o=$(median "${os[@]}")
	fs=$(median "${fss[@]}")
	fr=$(median "${frs[@]}")
	local rs rr
	rs=$(calc "$o / $fs")
	rr=$(calc "$o / $fr")
	printf '%s dedisbench IOPS:                 %.0f\n' "$label" "$o"
	printf '%s fio IOPS (static buffers):       %.0f\n' "$label" "$fs"
	printf '%s fio IOPS (refill+dedupe %s %%):   %.0f\n' "$label" "$DEDUPE_PCT" "$fr"
	echo "$label ratio dedisbench/fio static:   $rs  target >= 1.0: $(verdict "$rs")"
	echo "$label ratio dedisbench/fio refill:   $rr  target >= 1.0: $(verdict "$rr")"
	echo
}

echo "4 KiB uniform random writes, one ${FILE_MIB} MiB file on $fstype ($PERF_DIR), ${DURATION} s per run, median of $REPS"
echo "dedisbench: $DB ($("$DB" --version 2>/dev/null | head -n1)); $(fio --version); $(nproc) CPUs"
fio --name=prefill --filename="$FILE" --size="${FILE_MIB}m" --bs=1m --rw=write --ioengine=psync \
	--direct=1 --refill_buffers --end_fsync=1 --output-format=terse >/dev/null
echo

wanted() { [[ " $PAIRS " == *" $1 "* ]]; }
if wanted io_uring-qd32 && ! why=$("$DB" --target "$FILE" --procs 1 --file-size "${FILE_MIB}MiB" --size 4KiB \
	--ioengine io_uring --quiet --force 2>&1); then
	echo "SKIP io_uring-qd32: $why"
	PAIRS=${PAIRS/io_uring-qd32/}
fi

wanted psync && pair "psync" "--ioengine sync" "--ioengine=psync"
wanted libaio-qd32 && pair "libaio-qd32" "--ioengine libaio --iodepth 32" "--ioengine=libaio --direct=1 --iodepth=32"

# io_uring: four runs a round, alternating: dedisbench io_uring, dedisbench libaio, fio io_uring
# with static buffers, fio io_uring with refill+dedupe. fio gets the same ring features as
# dedisbench (registered file and buffers), so the comparison is engine against engine. The
# target: dedisbench io_uring >= fio io_uring (both fio figures) and >= dedisbench libaio.
uring() {
	local fargs="--ioengine=io_uring --direct=1 --iodepth=32 --fixedbufs --registerfiles"
	local r v o l fs fr
	local -a os=() ls=() fss=() frs=()
	echo "== io_uring-qd32"
	echo "   dedisbench --ioengine io_uring --iodepth 32 | dedisbench --ioengine libaio --iodepth 32 | fio $fargs"
	for ((r = 1; r <= REPS; r++)); do
		v=$(ours --ioengine io_uring --iodepth 32)
		printf '  run %d: dedisbench io_uring %10.0f IOPS\n' "$r" "$v"
		os+=("$v")
		v=$(ours --ioengine libaio --iodepth 32)
		printf '  run %d: dedisbench libaio   %10.0f IOPS\n' "$r" "$v"
		ls+=("$v")
		# shellcheck disable=SC2086
		v=$(theirs $fargs)
		printf '  run %d: fio static buffers  %10.0f IOPS\n' "$r" "$v"
		fss+=("$v")
		# shellcheck disable=SC2086
		v=$(theirs $fargs --refill_buffers --dedupe_percentage="$DEDUPE_PCT")
		printf '  run %d: fio refill+dedupe   %10.0f IOPS\n' "$r" "$v"
		frs+=("$v")
	done
	o=$(median "${os[@]}")
	l=$(median "${ls[@]}")
	fs=$(median "${fss[@]}")
	fr=$(median "${frs[@]}")
	local rs rr rl
	rs=$(calc "$o / $fs")
	rr=$(calc "$o / $fr")
	rl=$(calc "$o / $l")
	printf 'io_uring-qd32 dedisbench io_uring IOPS:        %.0f\n' "$o"
	printf 'io_uring-qd32 dedisbench libaio IOPS:          %.0f\n' "$l"
	printf 'io_uring-qd32 fio IOPS (static buffers):       %.0f\n' "$fs"
	printf 'io_uring-qd32 fio IOPS (refill+dedupe %s %%):   %.0f\n' "$DEDUPE_PCT" "$fr"
	echo "io_uring-qd32 ratio dedisbench/fio static:     $rs  target >= 1.0: $(verdict "$rs")"
	echo "io_uring-qd32 ratio dedisbench/fio refill:     $rr  target >= 1.0: $(verdict "$rr")"
	echo "io_uring-qd32 ratio io_uring/libaio (ours):    $rl  target >= 1.0: $(verdict "$rl")"
	echo
}
wanted io_uring-qd32 && uring

# The software path alone: the same jobs on memory (a tmpfs file; for O_DIRECT a loop device
# over it, root only), a fixed count of 4 KiB random writes, the two tools alternating; the
# figure is the median wall time of each, so a virtual disk's writeback noise is out of it.
SW_OPS_MIB=${SW_OPS_MIB:-2048}
SW_FILE=/dev/shm/dedis-perf-sw.$$
head -c 1G /dev/zero >"$SW_FILE"
trap 'rm -f "$SW_FILE"; cleanup' EXIT
wall() { # wall seconds of a command
	local s e
	s=$(date +%s.%N)
	"$@" >/dev/null 2>&1
	e=$(date +%s.%N)
	calc "$e - $s"
}
sw_pair() { # LABEL TARGET "OUR ARGS" "FIO ARGS"
	local label=$1 target=$2 ours=$3 fios=$4 r a b as=() bs=()
	for r in 1 2 3 4 5; do
		# shellcheck disable=SC2086
		a=$(wall "$DB" --target "$target" --procs 1 --access uniform --size "${SW_OPS_MIB}MiB" --quiet --force $ours)
		# shellcheck disable=SC2086
		b=$(wall fio --name=sw --filename="$target" --size=1G --rw=randwrite --bs=4k --norandommap \
			--randrepeat=0 --io_size="${SW_OPS_MIB}m" --output=/dev/null $fios)
		as+=("$a")
		bs+=("$b")
	done
	a=$(median "${as[@]}")
	b=$(median "${bs[@]}")
	local ratio
	ratio=$(calc "$b / $a")
	printf '%s (memory) dedisbench %.3f s, fio %.3f s for %s MiB: IOPS ratio %s  target >= 1.0: %s\n' \
		"$label" "$a" "$b" "$SW_OPS_MIB" "$ratio" "$(verdict "$ratio")"
}
wanted psync && sw_pair "psync" "$SW_FILE" "--ioengine sync" "--ioengine=psync"
if [ "$(id -u)" -eq 0 ] && loop=$(losetup -f --show "$SW_FILE" 2>/dev/null); then
	wanted libaio-qd32 &&
		sw_pair "libaio-qd32" "$loop" "--ioengine libaio --iodepth 32" "--ioengine=libaio --direct=1 --iodepth=32"
	wanted io_uring-qd32 && sw_pair "io_uring-qd32" "$loop" "--ioengine io_uring --iodepth 32" \
		"--ioengine=io_uring --direct=1 --iodepth=32 --fixedbufs --registerfiles"
	losetup -d "$loop"
fi
exit 0
