# mpi-lib.sh - shared by the dedisbench-mpi and dedisgen-mpi end-to-end scripts: skip without Open MPI, run 4 ranks
# on this machine. Source it after lib.sh; do not run it.

# shellcheck shell=bash

DEDISBENCH_MPI="$top_builddir/dedisbench-mpi"
[ -x "$DEDISBENCH_MPI" ] ||
	skip "dedisbench-mpi is not built (configure found no Open MPI: apt-get install libopenmpi-dev openmpi-bin)"
command -v mpirun >/dev/null 2>&1 || skip "no mpirun (apt-get install openmpi-bin)"
# The liveness checks are timed (a heartbeat every 0.1 s, a rank lost after --peer-timeout 0.5 s,
# every rank gone within 2 s of a kill): ranks slowed by ASan on shared cores miss them, so these
# tests run in the normal build (DEDIS_SANITIZED comes from make check's environment). A script
# that times nothing (mpi-gen.sh) sets MPI_UNTIMED=1 before sourcing this and runs there too.
[ "${MPI_UNTIMED:-}" = 1 ] || [ "${DEDIS_SANITIZED:-}" != 1 ] ||
	skip "sanitizer build: the MPI tests time liveness and run in the normal build"
MPIRUN=(mpirun --oversubscribe --allow-run-as-root -n 4)
# Sanitizer builds: Open MPI keeps what MPI_Init allocates until exit, in components it unloads
# at MPI_Finalize (their frames can no longer be named, so no suppression matches them): leak
# checking is off for the ranks; ASan and UBSan still check every access. dedisbench's own tests
# check the code the ranks share for leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# run_mpi ARGS...: 4 ranks of dedisbench-mpi, output in $E2E_TMP/out and .err; sets RC.
run_mpi() {
	RC=0
	"${MPIRUN[@]}" "$DEDISBENCH_MPI" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
}

# mpi_ok ARGS...: run_mpi and fail unless it exits 0.
mpi_ok() {
	run_mpi "$@"
	[ "$RC" -eq 0 ] || fail "dedisbench-mpi $* exited $RC: $(head -c 800 "$E2E_TMP/err")"
}

# distinct DIR: the distinct contents dedisgen finds in DIR (4 KiB blocks).
distinct() {
	"$DEDISGEN" "$1" -b 4096 -q -o "$E2E_TMP/distinct.dist" || fail "dedisgen on $1 exited $?"
	"$DEDISGEN" show "$E2E_TMP/distinct.dist" --json | jq -er .rows.distinct
}
