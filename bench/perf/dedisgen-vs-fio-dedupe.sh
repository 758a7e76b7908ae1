#!/bin/bash
# dedisgen-vs-fio-dedupe.sh - analysis speed: dedisgen against fio-dedupe (Debian's fio package)
# on one file held in the page cache, same block size and thread count, and the machine's
# SHA-1 hashing limit (openssl speed, per core, times the threads).
#
# Run by hand, not by make check (about a minute):
#   DEDISGEN=/path/to/dedisgen bench/perf/dedisgen-vs-fio-dedupe.sh
# Knobs (environment): DEDISGEN, SIZE_GIB (file size, 2), BS (4096), THREADS (cores),
# REPS (runs per tool, best kept, 3), DIR (where the file goes: /dev/shm, else /var/tmp).
# Targets: dedisgen >= 2x fio-dedupe, and >= 80 % of the SHA-1 limit. Exits 0 whatever the
# figures (SKIP when a tool is missing); prints PASS/BELOW per target.
#
# Fairness: both read the same file from the page cache (it is written, then read once before
# timing; on /dev/shm it is the page cache). fio-dedupe fingerprints each chunk with its own
# hash and keeps its extents in a tree;
# dedisgen computes SHA-1 through OpenSSL and counts in its memory index. MB/s = 1e6 B/s,
# computed from the file size and each run's wall time (best of REPS). The SHA-1 limit is
# `openssl speed -evp sha1 -bytes BS` (one core) times min(THREADS, cores).
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

need_kib=$((SIZE_GIB * 1024 * 1024 + 512 * 1024))
avail_kib=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
if ((avail_kib < 2 * need_kib)); then
	echo "SKIP: ${SIZE_GIB} GiB in page cache needs about $((2 * need_kib / 1048576)) GiB free memory"; exit 0
fi
if [[ -z ${DIR:-} ]]; then
	shm_kib=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
	if ((shm_kib > need_kib)); then DIR=/dev/shm; else DIR=/var/tmp; fi
fi
FILE=$(mktemp "$DIR/dedisgen-perf.XXXXXX")
trap 'rm -f "$FILE" "$FILE.dist"' EXIT

# A dataset with duplicates: 1 MiB random chunks, each written 1 to 3 times (about half the
# blocks redundant), so both tools index a realistic mix rather than all-unique blocks.
echo "# writing a ${SIZE_GIB} GiB file in $DIR ..."
python3 - "$FILE" "$SIZE_GIB" <<'PY'
import os, random, sys
path, gib = sys.argv[1], int(sys.argv[2])
random.seed(1)
left = gib << 30
with open(path, "wb", buffering=0) as f:
    while left > 0:
        chunk = os.urandom(1 << 20)
        for _ in range(random.randint(1, 3)):
            if left <= 0:
                break
            f.write(chunk[:min(len(chunk), left)])
            left -= len(chunk)
PY
cat "$FILE" >/dev/null # page cache (a no-op on /dev/shm)
SIZE=$(stat -c %s "$FILE")

best() { sort -g | tail -1; }
time_run() { # prints MB/s of one run of "$@"
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>&1 || { echo "FAILED: $*" >&2; echo 0; return; }
	t1=$(date +%s.%N)
	awk -v s="$SIZE" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", s / (b - a) / 1e6 }'
}

gen_mbs=$(for _ in $(seq "$REPS"); do time_run "$GEN" -q -b "$BS" -t "$THREADS" -o "$FILE.dist" "$FILE"; done | best)
fio_mbs=$(for _ in $(seq "$REPS"); do time_run "$FIO_DEDUPE" -b "$BS" -t "$THREADS" "$FILE"; done | best)
# openssl speed prints "sha1  <k-bytes/s>" in units of 1000 bytes/s.
sha_kbs=$(openssl speed -evp sha1 -bytes "$BS" -seconds 3 2>/dev/null | awk '$1 == "sha1" {print $2}' | tr -d k)
hash_threads=$((THREADS < CORES ? THREADS : CORES))
limit_mbs=$(awk -v k="$sha_kbs" -v t="$hash_threads" 'BEGIN { printf "%.1f", k * 1000 / 1e6 * t }')
per_core=$(awk -v k="$sha_kbs" 'BEGIN { printf "%.1f", k * 1000 / 1e6 }')

ratio=$(awk -v a="$gen_mbs" -v b="$fio_mbs" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
pct=$(awk -v a="$gen_mbs" -v b="$limit_mbs" 'BEGIN { printf "%.1f", (b > 0 ? 100 * a / b : 0) }')
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v >= t ? "PASS" : "BELOW") }'; }

echo "file:             $FILE ($SIZE bytes, $DIR), block size $BS, threads $THREADS, cores $CORES"
echo "dedisgen:         $gen_mbs MB/s"
echo "fio-dedupe:       $fio_mbs MB/s"
echo "ratio:            ${ratio}x (target >= 2x): $(verdict "$ratio" 2)"
echo "SHA-1 limit:      $limit_mbs MB/s ($per_core MB/s per core x $hash_threads, openssl speed -evp sha1 -bytes $BS)"
echo "share of limit:   $pct % (target >= 80 %): $(verdict "$pct" 80)"
