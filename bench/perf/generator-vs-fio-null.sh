#!/bin/bash
# generator-vs-fio-null.sh - content + access generation speed: dedisbench --target null (1 and 2
# workers) against fio --ioengine=null with refill_buffers and dedupe_percentage, 4 KiB blocks.
#
# Run by hand, not by make check (about a minute):
#   DEDISBENCH=/path/to/dedisbench bench/perf/generator-vs-fio-null.sh
# Knobs (environment): DEDISBENCH, SIZE_GIB (total data per run, 16), REPS (runs per tool, best
# kept, 2), DEDUPE_PCT (17). Prints our figure, fio's, the ratio, the target and PASS/BELOW;
# exits 0 whatever the figures are (SKIP when a tool is missing).
#
# Fairness: dedisbench draws a fresh content id from the distribution for every write and fills
# the block from it (lib/content). fio's default is one buffer filled once (plus cheap
# scrambling), so fio runs with refill_buffers (new random bytes for every write) and
# dedupe_percentage = the share of redundant blocks (row D) of the default distribution,
# personalfiles: D = sum(blocks*dups)/sum(blocks*(dups+1)) = 17.21 %, hence 17.
# Same block size, same total bytes, sequential, 1 job (and 2 jobs for the 2-worker line).
# GB/s here is 1e9 bytes/s, from each tool's own bytes and seconds (dedisbench: totals.bytes /
# totals.seconds of --json; fio: write.io_bytes / write.runtime of --output-format=json).
set -euo pipefail

SIZE_GIB=${SIZE_GIB:-16}
REPS=${REPS:-2}
DEDUPE_PCT=${DEDUPE_PCT:-17}
BS=4096
TARGET_GBPS=4.0

# shellcheck source=bench/perf/lib.sh
. "$(dirname "$0")/lib.sh"
perf_prologue fio

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v >= t ? "PASS" : "BELOW") }'; }

# dedisbench, $1 workers sharing SIZE_GIB: prints "GB/s wall_seconds".
ours() {
	local procs=$1 per=$((SIZE_GIB * 1024 / $1)) j="$TMP/ours.json" t0 t1
	t0=$(date +%s.%N)
	"$DB" --target null --procs "$procs" --file-size "${per}MiB" --block-size $BS --seed 1 \
		--quiet --json "$j"
	t1=$(date +%s.%N)
	jq -r --arg w "$(calc "$t1 - $t0")" '"\(.totals.bytes / .totals.seconds / 1e9) \($w)"' "$j"
}

# fio null engine, $1 jobs sharing SIZE_GIB: prints "GB/s".
theirs() {
	local jobs=$1 per=$((SIZE_GIB * 1024 / $1))
	fio --name=gen --ioengine=null --rw=write --bs=$BS --size="${per}m" --numjobs="$jobs" \
		--group_reporting --refill_buffers --dedupe_percentage="$DEDUPE_PCT" \
		--output-format=json >"$TMP/fio.json"
	jq -r '.jobs[0].write | "\(.io_bytes / (.runtime / 1000) / 1e9)"' "$TMP/fio.json"
}

echo "generator speed, 4 KiB blocks, ${SIZE_GIB} GiB per run, best of $REPS (GB/s = 1e9 B/s)"
echo "dedisbench: $DB ($("$DB" --version 2>/dev/null | head -n1)); $(fio --version); $(nproc) CPUs"
echo "fio options: --ioengine=null --rw=write --refill_buffers --dedupe_percentage=$DEDUPE_PCT"

o1=0 o2=0 f1=0 f2=0 w1=0 w2=0
for ((r = 1; r <= REPS; r++)); do
	read -r g w < <(ours 1)
	echo "  run $r: dedisbench 1 worker   $(calc "$g") GB/s (wall ${w} s)"
	[[ $(max "$g" "$o1") == "$g" ]] && { o1=$g; w1=$w; }
	g=$(theirs 1)
	echo "  run $r: fio 1 job             $(calc "$g") GB/s"
	f1=$(max "$g" "$f1")
	read -r g w < <(ours 2)
	echo "  run $r: dedisbench 2 workers  $(calc "$g") GB/s (wall ${w} s)"
	[[ $(max "$g" "$o2") == "$g" ]] && { o2=$g; w2=$w; }
	g=$(theirs 2)
	echo "  run $r: fio 2 jobs            $(calc "$g") GB/s"
	f2=$(max "$g" "$f2")
done

ncores=$(nproc)
cores2=$((ncores < 2 ? ncores : 2))
r1=$(calc "$o1 / $f1")
r2=$(calc "$o2 / $f2")
pc2=$(calc "$o2 / $cores2")
echo
echo "dedisbench 1 worker:          $(calc "$o1") GB/s  (per core $(calc "$o1") GB/s; wall of that run ${w1} s for $(calc "$SIZE_GIB * 1.073741824") GB)"
echo "fio null 1 job:               $(calc "$f1") GB/s"
echo "ratio dedisbench/fio 1 job:   $r1"
echo "dedisbench 2 workers:         $(calc "$o2") GB/s  (per core $pc2 GB/s over $cores2 cores; wall ${w2} s)"
echo "fio null 2 jobs:              $(calc "$f2") GB/s"
echo "ratio dedisbench/fio 2 jobs:  $r2"
echo "target: generator >= $TARGET_GBPS GB/s per core: 1 worker $(verdict "$o1" $TARGET_GBPS), 2 workers $(verdict "$pc2" $TARGET_GBPS)"
echo "target: ratio vs fio >= 1.0: 1 job $(verdict "$r1" 1.0), 2 jobs $(verdict "$r2" 1.0)"
exit 0
