#!/bin/bash
# gen-mpi-ranks.sh - dedisgen-mpi's rank scaling on one file in the page cache: 1 rank vs 2 (and
# up to RANKS) ranks reading it in stripes, 1 hashing thread per rank, and for reference dedisgen
# (one process) with 1 and 2 threads on the same file; every run's result checked identical.
#
# Run by hand, not by make check (a few minutes at the defaults):
#   DEDISGEN=build/dedisgen bench/perf/gen-mpi-ranks.sh
# Knobs (environment): DEDISGEN (dedisgen-mpi is looked for beside it; dedisbench too, which
# writes the data), FILE_MIB (2048), DIR (/dev/shm: the file stays in memory), DIST (the
# distribution the data follows, personalfiles), RANKS (largest rank count, default: the CPU
# count), REPS (best of, 3). Prints MB/s (1e6 B/s) from each run's JSON (bytes / seconds: the
# scan, and for dedisgen-mpi the exchange and the reduction too) and the wall time of the whole
# command (mpirun's start included), the speedup of N ranks over 1 (target >= 1.6 at 2 ranks on
# 2 cores), and exits 0 whatever the figures are (SKIP when a tool is missing).
set -euo pipefail

FILE_MIB=${FILE_MIB:-2048}
DIR=${DIR:-/dev/shm}
DIST=${DIST:-personalfiles}
REPS=${REPS:-3}

command -v jq >/dev/null 2>&1 || { echo "SKIP: jq not found (apt-get install jq)"; exit 0; }
GEN=${DEDISGEN:-}
[[ -n $GEN ]] || GEN=$( [[ -x ./dedisgen ]] && echo ./dedisgen || command -v dedisgen || true)
[[ -n $GEN && -x $GEN ]] || { echo "SKIP: dedisgen not found (set DEDISGEN or run from the build dir)"; exit 0; }
MPI_GEN=$(dirname "$GEN")/dedisgen-mpi
[[ -x $MPI_GEN ]] || MPI_GEN=$(command -v dedisgen-mpi || true)
[[ -n $MPI_GEN && -x $MPI_GEN ]] || { echo "SKIP: dedisgen-mpi not found (configure --with-mpi)"; exit 0; }
BENCH=$(dirname "$GEN")/dedisbench
[[ -x $BENCH ]] || BENCH=$(command -v dedisbench || true)
[[ -n $BENCH && -x $BENCH ]] || { echo "SKIP: dedisbench (which writes the data) not found"; exit 0; }
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 0; }
RANKS=${RANKS:-$(nproc)}

TMP=$(mktemp -d "$DIR/gen-mpi-ranks.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
now() { date +%s.%N; }

mkdir -p "$TMP/data"
"$BENCH" -T "$TMP/data" -P 1 -w --access seq --file-size "${FILE_MIB}MiB" --dist "$DIST" --seed 1 --keep --quiet \
	>/dev/null
DATA=$TMP/data/dedisbench.0
[[ -f $DATA ]] || { echo "SKIP: dedisbench left no $DATA"; exit 0; }

# run NAME CMD...: runs CMD (which writes $TMP/r.json and $TMP/r.dist); prints "MB/s wall"; the
# distribution must be the first run's.
run() {
	local t0 t1
	t0=$(now)
	"$@" >/dev/null 2>"$TMP/err" || { echo "FAILED: $* ($(head -c 300 "$TMP/err"))" >&2; exit 1; }
	t1=$(now)
	if [[ -f $TMP/ref.dist ]]; then
		cmp -s "$TMP/ref.dist" "$TMP/r.dist" || { echo "DIFFERENT RESULT: $*" >&2; exit 1; }
	else
		cp "$TMP/r.dist" "$TMP/ref.dist"
	fi
	echo "$(jq -r '.results[0].bytes / .results[0].seconds / 1e6' "$TMP/r.json") $(calc "$t1 - $t0")"
}
gen() { run "$GEN" "$DATA" -t "$1" -q -o "$TMP/r.dist" --json "$TMP/r.json"; }
ranks() {
	run mpirun --oversubscribe --allow-run-as-root -n "$1" "$MPI_GEN" "$DATA" -t 1 -q -o "$TMP/r.dist" \
		--json "$TMP/r.json"
}

echo "dedisgen-mpi rank scaling: one ${FILE_MIB} MiB file in $DIR ($DIST), 4 KiB blocks, best of $REPS (MB/s = 1e6 B/s)"
echo "$("$MPI_GEN" --version); $(mpirun --version | head -n1); $(nproc) CPUs"
declare -A best wall
for ((r = 1; r <= REPS; r++)); do
	for t in 1 2; do
		out=$(gen "$t") || exit 1
		read -r m w <<<"$out"
		echo "  run $r: dedisgen -t $t                 $(calc "$m") MB/s (wall ${w} s)"
		best[g$t]=$(max "$m" "${best[g$t]:-0}")
		wall[g$t]=$w
	done
	for ((n = 1; n <= RANKS; n *= 2)); do
		out=$(ranks "$n") || exit 1
		read -r m w <<<"$out"
		echo "  run $r: dedisgen-mpi $n rank(s) x 1 thread $(calc "$m") MB/s (wall ${w} s; slowest scan" \
			"$(jq -r '[.mpi.per_rank[].seconds] | max' "$TMP/r.json" | xargs printf %.3f) s," \
			"exchange $(jq -r '[.mpi.per_rank[].exchange_seconds] | max' "$TMP/r.json" | xargs printf %.3f) s)"
		best[m$n]=$(max "$m" "${best[m$n]:-0}")
	done
done
echo
echo "dedisgen, 1 process: -t 1 $(calc "${best[g1]}") MB/s, -t 2 $(calc "${best[g2]}") MB/s" \
	"(threads speedup $(calc "${best[g2]} / ${best[g1]}"))"
for ((n = 1; n <= RANKS; n *= 2)); do
	echo "dedisgen-mpi $n rank(s): $(calc "${best[m$n]}") MB/s, speedup over 1 rank $(calc "${best[m$n]} / ${best[m1]}")," \
		"vs dedisgen -t 1 $(calc "${best[m$n]} / ${best[g1]}")"
done
exit 0
