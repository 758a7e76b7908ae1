#!/bin/bash
# mpi-ranks.sh - dedisbench-mpi's rank scaling and its cost: the same work as 1 process with N
# workers (dedisbench) and as N ranks of 1 worker (mpirun dedisbench-mpi), and 1, 2, ... N ranks
# each with a fixed share (weak scaling), on the null target (the generator: content, access,
# tallies) or a directory.
#
# Run by hand, not by make check (about a minute at the defaults):
#   DEDISBENCH=build/dedisbench bench/perf/mpi-ranks.sh
# Knobs (environment): DEDISBENCH (dedisbench-mpi is looked for beside it), RANKS (largest
# rank count, default: the CPU count), SIZE_MIB (per worker, 2048), TARGET (null, or a directory:
# the ranks write TARGET/r0, r1, ...), REPS (best of, 2). Prints GB/s (1e9 B/s, totals.bytes /
# totals.seconds of each JSON), the ratio MPI / single process for the same work, and each rank
# count's speedup over 1 rank; exits 0 whatever the figures are (SKIP when a tool is missing).
set -euo pipefail

SIZE_MIB=${SIZE_MIB:-2048}
REPS=${REPS:-2}
TARGET=${TARGET:-null}

# shellcheck source=bench/perf/lib.sh
. "$(dirname "$0")/lib.sh"
perf_prologue
MPI_DB=$(dirname "$DB")/dedisbench-mpi
[[ -x $MPI_DB ]] || MPI_DB=$(command -v dedisbench-mpi || true)
if [[ -z $MPI_DB || ! -x $MPI_DB ]]; then
	echo "SKIP: dedisbench-mpi not found (configure --with-mpi; apt-get install libopenmpi-dev openmpi-bin)"
	exit 0
fi
command -v mpirun >/dev/null 2>&1 || { echo "SKIP: no mpirun (apt-get install openmpi-bin)"; exit 0; }
RANKS=${RANKS:-$(nproc)}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
calc() { awk "BEGIN { printf \"%.3f\", $* }"; }
max() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
gbps() { jq -r '.totals.bytes / .totals.seconds / 1e9' "$1"; }

target_for() { # $1: rank pattern or worker dir
	if [[ $TARGET == null ]]; then echo null; else mkdir -p "$TARGET/$1" && echo "$TARGET/$1"; fi
}

# single N: dedisbench, N workers of SIZE_MIB each
single() {
	local t
	t=$(target_for single)
	"$DB" --target "$t" --procs "$1" --file-size "${SIZE_MIB}MiB" --access seq --seed 1 --quiet --json "$TMP/s.json"
	gbps "$TMP/s.json"
}

# ranks N: N ranks of 1 worker of SIZE_MIB each (one global content space)
ranks() {
	local t=null k
	if [[ $TARGET != null ]]; then
		for ((k = 0; k < $1; k++)); do mkdir -p "$TARGET/r$k"; done
		t="$TARGET/r%r"
	fi
	mpirun --oversubscribe --allow-run-as-root -n "$1" "$MPI_DB" --target "$t" --procs 1 \
		--file-size "${SIZE_MIB}MiB" --access seq --seed 1 --quiet --json "$TMP/m.json" >/dev/null
	gbps "$TMP/m.json"
}

echo "dedisbench-mpi rank scaling: $SIZE_MIB MiB per worker, target $TARGET, best of $REPS (GB/s = 1e9 B/s)"
echo "$("$DB" --version) / $("$MPI_DB" --version); $(mpirun --version | head -n1); $(nproc) CPUs"
declare -A best
for ((r = 1; r <= REPS; r++)); do
	for ((n = 1; n <= RANKS; n *= 2)); do
		g=$(ranks "$n")
		echo "  run $r: $n rank(s) x 1 worker      $(calc "$g") GB/s"
		best[m$n]=$(max "$g" "${best[m$n]:-0}")
		g=$(single "$n")
		echo "  run $r: 1 process x $n worker(s)   $(calc "$g") GB/s"
		best[s$n]=$(max "$g" "${best[s$n]:-0}")
	done
done
echo
for ((n = 1; n <= RANKS; n *= 2)); do
	echo "$n worker(s): mpi $(calc "${best[m$n]}") GB/s, single process $(calc "${best[s$n]}") GB/s," \
		"ratio mpi/single $(calc "${best[m$n]} / ${best[s$n]}"), speedup over 1 rank $(calc "${best[m$n]} / ${best[m1]}")"
done
exit 0
