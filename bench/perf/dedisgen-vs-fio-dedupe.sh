#!/bin/bash
# dedisgen-vs-fio-dedupe.sh - analysis speed: dedisgen against fio-dedupe (Debian's fio package)
# on one file held in the page cache, same block size and thread count, and the machine's
# SHA-1 hashing limit (openssl speed -multi: that many cores hashing together). dedisgen runs as a
# user runs it, compressibility, locality, granularity, alignment and CDC analysis on (the default), and again with all off, to show
# what the analysis costs.
#
# Run by hand, not by make check (about a minute):
#   DEDISGEN=/path/to/dedisgen bench/perf/dedisgen-vs-fio-dedupe.sh
# Knobs (environment): DEDISGEN, DATA (an existing file to scan instead, e.g. the issue's 8 GiB
# tar of /usr in /dev/shm; it is read once and left in place), SIZE_GIB (size of the file written
# when DATA is unset, 2), BS (4096), THREADS (cores), REPS (runs per tool, best kept, 3), DIR (where
# the written file goes: /dev/shm, else /var/tmp).
# Targets: dedisgen (analysis on) >= 2x fio-dedupe, and >= 80 % of the SHA-1 limit. Exits 0
# whatever the figures (SKIP when a tool is missing); prints PASS/BELOW per target. The tools
# run in turns (on, off, fio-dedupe; REPS times) so a busy machine slows them alike.
#
# Fairness: both read the same file from the page cache (it is written, then read once before
# timing; on /dev/shm it is the page cache). fio-dedupe fingerprints each chunk with its own
# hash and keeps its extents in a tree;
# dedisgen computes SHA-1 through OpenSSL and counts in its memory index. MB/s = 1e6 B/s,
# computed from the file size and each run's wall time (best of REPS). The SHA-1 limit is
# `openssl speed -multi N -evp sha1 -bytes BS`, N = min(THREADS, cores).
set -euo pipefail

SIZE_GIB=${SIZE_GIB:-2}
BS=${BS:-4096}
REPS=${REPS:-3}
CORES=$(nproc)
THREADS=${THREADS:-$CORES}

find_dedisgen() {
	if [[ -n ${DEDISGEN:-} ]]; then echo "$DEDISGEN"
	elif [[ -x ./dedisgen ]]; then echo ./dedisgen
	elif command -v dedisgen >/dev/null 2>&1; then command -v dedisgen
	else return 1; fi
}
if ! GEN=$(find_dedisgen); then
	echo "SKIP: dedisgen not found (set DEDISGEN, run from the build dir, or put it in PATH)"; exit 0
fi
FIO_DEDUPE=$(command -v fio-dedupe || true)
[[ -n $FIO_DEDUPE ]] || { echo "SKIP: fio-dedupe not found (apt-get install fio)"; exit 0; }
command -v openssl >/dev/null || { echo "SKIP: openssl not found"; exit 0; }

FILE="" OUTS=""
if [[ -n ${DATA:-} ]]; then
	[[ -f $DATA ]] || { echo "SKIP: DATA=$DATA is not a regular file"; exit 0; }
	FILE=$DATA
	OUTS=$(mktemp -d "${TMPDIR:-/var/tmp}/dedisgen-perf.XXXXXX")
	trap 'rm -rf "$OUTS"' EXIT
	DIR=$(dirname "$DATA")
	cat "$FILE" >/dev/null # page cache
else
	trap 'rm -rf "$FILE" "$OUTS"' EXIT
	# shellcheck source=bench/perf/lib.sh
	. "$(dirname "$0")/lib.sh"
	make_dup_file "$SIZE_GIB" dedisgen-perf
	OUTS=$(mktemp -d "${TMPDIR:-/var/tmp}/dedisgen-perf.XXXXXX")
fi
SIZE=$(stat -c %s "$FILE")

best() { sort -g | tail -1; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# time_run CMD...: prints "WALL CPU": MB/s of wall time, and MB per CPU-second (user + system of
# the tool and its threads). On a shared machine the wall figure swings with the others' load;
# the CPU figure is the work each tool does per byte, which the load barely moves. The wall time
# is taken in nanoseconds around the run: time(1)'s %e has 10 ms steps, 1.6 % of a 0.6 s scan.
time_run() {
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -o "$OUTS/time" -f '%U %S' "$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; echo "0 0"; return; }
	t1=$(date +%s%N)
	awk -v s="$SIZE" -v ns=$((t1 - t0)) '{ printf "%.1f %.1f\n", s / (ns / 1e9) / 1e6, s / ($1 + $2) / 1e6 }' "$OUTS/time"
}

[[ -x /usr/bin/time ]] || { echo "SKIP: /usr/bin/time not found (apt-get install time)"; exit 0; }
on=() off=() fio=() on_cpu=() off_cpu=() fio_cpu=()
for _ in $(seq "$REPS"); do
	read -r w c < <(time_run "$GEN" -q -b "$BS" -t "$THREADS" -o "$OUTS/on.dist" "$FILE"); on+=("$w"); on_cpu+=("$c")
	read -r w c < <(time_run "$GEN" -q -b "$BS" -t "$THREADS" --compress-sample off --no-locality --no-alignment --no-cdc -o "$OUTS/off.dist" "$FILE")
	off+=("$w"); off_cpu+=("$c")
	read -r w c < <(time_run "$FIO_DEDUPE" -b "$BS" -t "$THREADS" "$FILE"); fio+=("$w"); fio_cpu+=("$c")
done
gen_mbs=$(printf '%s\n' "${on[@]}" | best)
off_mbs=$(printf '%s\n' "${off[@]}" | best)
fio_mbs=$(printf '%s\n' "${fio[@]}" | best)
gen_cpu=$(printf '%s\n' "${on_cpu[@]}" | median)
off_cpu=$(printf '%s\n' "${off_cpu[@]}" | median)
fio_cpu=$(printf '%s\n' "${fio_cpu[@]}" | median)
sample=$(awk '/^\[/ { sec = $1 } sec == "[compressibility" && $1 == "sample" { print $2 " (" $3 " contents measured)" }' "$OUTS/on.dist")
analysed=$(awk '$1 == "analysed" { print $2 " blocks" ($3 ? ", windows of " $3 : ", whole stream") }' "$OUTS/on.dist")
rm -f "$OUTS/off.dist"
# openssl speed prints "sha1  <k-bytes/s>" in units of 1000 bytes/s; with -multi N, of N
# processes hashing together (a turbo clock drops as more cores work: N x one core overstates it).
hash_threads=$((THREADS < CORES ? THREADS : CORES))
sha_kbs=$(openssl speed -multi "$hash_threads" -evp sha1 -bytes "$BS" -seconds 3 2>/dev/null |
	awk '$1 == "sha1" {print $2}' | tr -d k)
limit_mbs=$(awk -v k="$sha_kbs" 'BEGIN { printf "%.1f", k * 1000 / 1e6 }')
per_core=$(awk -v k="$sha_kbs" -v t="$hash_threads" 'BEGIN { printf "%.1f", k * 1000 / 1e6 / t }')

ratio=$(awk -v a="$gen_mbs" -v b="$fio_mbs" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
pct=$(awk -v a="$gen_mbs" -v b="$limit_mbs" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v >= t ? "PASS" : "BELOW") }'; }

echo "file:             $FILE ($SIZE bytes, $DIR), block size $BS, threads $THREADS, cores $CORES"
overhead=$(awk -v a="$gen_mbs" -v b="$off_mbs" 'BEGIN { printf "%.1f", (b > 0 ? 100 * (b - a) / b : 0) }')
cpu_overhead=$(awk -v a="$gen_cpu" -v b="$off_cpu" 'BEGIN { printf "%.1f", (b > 0 ? 100 * (b / a - 1) : 0) }')
cpu_ratio=$(awk -v a="$gen_cpu" -v b="$fio_cpu" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "dedisgen:         $gen_mbs MB/s (analysis on: compress sample $sample; locality $analysed)"
echo "  analysis off:   $off_mbs MB/s (--compress-sample off --no-locality --no-alignment --no-cdc): the analysis costs $overhead % of wall time"
echo "fio-dedupe:       $fio_mbs MB/s"
echo "runs, wall MB/s:  on ${on[*]}; off ${off[*]}; fio-dedupe ${fio[*]}"
echo "per CPU-second:   on $gen_cpu, off $off_cpu, fio-dedupe $fio_cpu MB (medians of ${on_cpu[*]}; ${off_cpu[*]}; ${fio_cpu[*]})"
echo "                  the analysis costs $cpu_overhead % more CPU; dedisgen does ${cpu_ratio}x less CPU work per byte than fio-dedupe"
echo "ratio:            ${ratio}x (target >= 2x): $(verdict "$ratio" 2)"
echo "SHA-1 limit:      $limit_mbs MB/s ($hash_threads cores together, $per_core each: openssl speed -multi $hash_threads -evp sha1 -bytes $BS)"
echo "share of limit:   $pct % (target >= 80 %): $(verdict "$pct" 80)"
