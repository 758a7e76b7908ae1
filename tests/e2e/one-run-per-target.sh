#!/bin/bash
# One run per target (issue 12, finding 2): while a run holds a target - an engine volume, a
# directory, a file - a second dedisbench run on it, by any spelling of its path, exits 2 naming
# the holder's pid and command line, and the dedisengine commands that change a volume (format,
# gc, discard, import, fsck) are refused the same way; the first run ends as if alone (the
# engine still holds exactly what it wrote). The lock goes with the run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
export DEDIS_LOCK_DIR=$E2E_TMP/locks # to see that no lock file outlives its run
mkdir "$DEDIS_LOCK_DIR"
VOL=$E2E_TMP/vol
PIDS=()
on_exit 'for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done'

# start_run NAME ARGS...: a long nominal run in the background; returns once its time series
# has a data row (it holds its target and is writing). Sets RUN_PID.
start_run() {
	local name=$1 i
	shift
	"$DEDISBENCH" "$@" --procs 2 --file-size 8MiB --access uniform --rate 300 --time 60s --quiet \
		--output-dir "$E2E_TMP/$name.out" --json "$E2E_TMP/$name.json" >"$E2E_TMP/$name.stdout" 2>"$E2E_TMP/$name.err" &
	RUN_PID=$!
	PIDS+=("$RUN_PID")
	for ((i = 0; i < 200; i++)); do
		[ "$(wc -l 2>/dev/null <"$E2E_TMP/$name.out/timeseries.csv" || echo 0)" -ge 2 ] && return 0
		kill -0 "$RUN_PID" 2>/dev/null || break
		sleep 0.1
	done
	fail "run $name never got going: $(cat "$E2E_TMP/$name.err")"
}
# stop_run NAME PID: SIGINT, then it must end 0 with status interrupted.
stop_run() {
	local rc=0
	kill -INT "$2"
	wait "$2" || rc=$?
	[ "$rc" -eq 0 ] || fail "run $1 ended with exit $rc: $(cat "$E2E_TMP/$1.err")"
	jcheck "$E2E_TMP/$1.json" '.status == "interrupted"'
}
# busy HOLDER_PID WHAT CMD...: CMD exits 2 with one line naming the holder's pid and command.
busy() {
	local pid=$1 what=$2 rc=0
	shift 2
	"$@" >"$E2E_TMP/busy.out" 2>"$E2E_TMP/busy.err" || rc=$?
	[ "$rc" -eq 2 ] || fail "$what while a run holds the target: exit $rc, want 2: $(cat "$E2E_TMP/busy.err")"
	[ "$(wc -l <"$E2E_TMP/busy.err")" -eq 1 ] || fail "$what: want one line: $(cat "$E2E_TMP/busy.err")"
	grep -q "in use by pid $pid (.*dedisbench .*--target" "$E2E_TMP/busy.err" ||
		fail "$what: the message does not name pid $pid and its command: $(cat "$E2E_TMP/busy.err")"
}

# 1. An engine volume.
start_run A --target "engine:$VOL" --keep
A=$RUN_PID
busy "$A" "a second run" "$DEDISBENCH" --target "engine:$VOL" --procs 2 --file-size 8MiB --size 1MiB --quiet
busy "$A" "a second run by another path" "$DEDISBENCH" --target "engine:$E2E_TMP/./locks/../vol/" --procs 1 \
	--file-size 8MiB --size 1MiB --quiet
for cmd in "gc $VOL" "discard $VOL 0 16" "fsck $VOL" "format $VOL --size 1MiB"; do
	# shellcheck disable=SC2086
	busy "$A" "dedisengine $cmd" "$DEDISENGINE" $cmd
done
head -c 64K /dev/urandom >"$E2E_TMP/img"
busy "$A" "dedisengine import" "$DEDISENGINE" import "$VOL" "$E2E_TMP/img"
"$DEDISENGINE" stat "$VOL" >/dev/null || fail "stat (read-only) must work during a run"
stop_run A "$A"
jcheck "$E2E_TMP/A.json" '.engine.match and .engine.observed.fsck_problems == 0 and .engine.read_mismatches == 0' \
	"the first run must end as if alone"
note "engine volume: second run and gc/discard/fsck/format/import refused while run A held it"

# 2. A directory, and (3) a file, each also by another spelling (a symbolic link to it).
mkdir "$E2E_TMP/d"
ln -s "$E2E_TMP/d" "$E2E_TMP/d-link"
start_run B --target "$E2E_TMP/d"
busy "$RUN_PID" "a second run on the directory" "$DEDISBENCH" --target "$E2E_TMP/d-link" --procs 2 \
	--file-size 8MiB --size 1MiB --quiet
# the same data by its other names: a worker file as a file target, the directory as an engine volume
busy "$RUN_PID" "a run on a worker file of the directory" "$DEDISBENCH" --target "$E2E_TMP/d/dedisbench.0" \
	--procs 1 --size 1MiB --quiet --force
busy "$RUN_PID" "the directory as an engine volume" "$DEDISBENCH" --target "engine:$E2E_TMP/d-link" --procs 1 \
	--file-size 8MiB --size 1MiB --quiet
stop_run B "$RUN_PID"
truncate -s 16M "$E2E_TMP/f"
ln -s "$E2E_TMP/f" "$E2E_TMP/f-link"
start_run C --target "$E2E_TMP/f"
busy "$RUN_PID" "a second run on the file" "$DEDISBENCH" --target "$E2E_TMP/f-link" --procs 2 \
	--file-size 8MiB --size 1MiB --quiet
stop_run C "$RUN_PID"
# and an engine volume's directory as a directory target
start_run E --target "engine:$VOL" --keep
busy "$RUN_PID" "the engine volume as a directory target" "$DEDISBENCH" --target "$VOL" --procs 1 \
	--file-size 8MiB --size 1MiB --quiet --force
# its chunk store as a file target: refused without --force (its blocks are dedisbench's as
# written, and would pass for ours), held by the volume's lock with it
run_bench --target "$VOL/data.0" --procs 1 --size 1MiB --quiet
[ "$RC" -eq 2 ] && grep -q "is a file of the engine volume" "$E2E_TMP/err" ||
	fail "a file of the engine volume as a target: exit $RC: $(cat "$E2E_TMP/err")"
busy "$RUN_PID" "a file of the engine volume, --force" "$DEDISBENCH" --target "$VOL/data.0" --procs 1 \
	--size 1MiB --quiet --force
stop_run E "$RUN_PID"
# a worker file with another name (a hard link elsewhere): a run on the directory and a run on that
# name meet, whichever comes first (they wrote one inode at once)
mkdir "$E2E_TMP/hd"
expect_ok --target "$E2E_TMP/hd" --procs 2 --file-size 8MiB --size 1MiB --quiet --keep
ln "$E2E_TMP/hd/dedisbench.1" "$E2E_TMP/hard1"
start_run H --target "$E2E_TMP/hd"
busy "$RUN_PID" "a run on a hard link to its worker file" "$DEDISBENCH" --target "$E2E_TMP/hard1" --procs 1 \
	--size 1MiB --quiet
stop_run H "$RUN_PID"
start_run I --target "$E2E_TMP/hard1"
busy "$RUN_PID" "a run on the directory of a file held by its hard link" "$DEDISBENCH" --target "$E2E_TMP/hd" \
	--procs 2 --file-size 8MiB --size 1MiB --quiet
stop_run I "$RUN_PID"

# ...and a hard link made after the run began (issue 36, item 6): the run holds each worker file's
# inode, so a run on the new name is refused, as is one on a copy of a volume made of hard links.
mkdir "$E2E_TMP/d1" "$E2E_TMP/x"
start_run L --target "$E2E_TMP/d1"
ln "$E2E_TMP/d1/dedisbench.0" "$E2E_TMP/x/f"
busy "$RUN_PID" "a run on a hard link made during the run" "$DEDISBENCH" --target "$E2E_TMP/x/f" --procs 1 \
	--size 1MiB --quiet
stop_run L "$RUN_PID"
rm -r "$E2E_TMP/d1" "$E2E_TMP/x"
for how in formatted existing; do # the volume made by the run, then one it found
	start_run "V$how" --target "engine:$E2E_TMP/v1" --keep
	cp -al "$E2E_TMP/v1" "$E2E_TMP/v2"
	busy "$RUN_PID" "a run on a hard-link copy of a volume ($how)" "$DEDISBENCH" --target "engine:$E2E_TMP/v2" \
		--procs 1 --file-size 8MiB --size 1MiB --quiet
	for cmd in gc fsck "discard 0 1"; do # the engine's own commands that change a volume meet the same lock
		read -ra words <<<"$cmd"
		busy "$RUN_PID" "dedisengine $cmd on a hard-link copy of a volume ($how)" "$DEDISENGINE" "${words[0]}" \
			"$E2E_TMP/v2" "${words[@]:1}"
	done
	stop_run "V$how" "$RUN_PID"
	rm -r "$E2E_TMP/v2"
done
rm -r "$E2E_TMP/v1"
note "a hard link to a worker file, and a hard-link copy of a volume, made during a run: refused"

# The run lock never writes through a name planted in the lock directory (issue 36, item 8): a hard
# link there to someone's file is refused (one line naming it, exit 2), and the file is untouched.
truncate -s 16M "$E2E_TMP/pf"
start_run P --target "$E2E_TMP/pf"
mapfile -t lockfiles < <(ls "$DEDIS_LOCK_DIR")
[ "${#lockfiles[@]}" -ge 1 ] || fail "no run lock file while run P held its target"
stop_run P "$RUN_PID"
printf 'precious\n' >"$E2E_TMP/precious"
for l in "${lockfiles[@]}"; do ln "$E2E_TMP/precious" "$DEDIS_LOCK_DIR/$l"; done
run_bench --target "$E2E_TMP/pf" --procs 1 --size 1MiB --quiet
[ "$(cat "$E2E_TMP/precious")" = precious ] || fail "a file hard-linked under the run lock's name was written"
[ "$RC" -eq 2 ] && [ "$(wc -l <"$E2E_TMP/err")" -eq 1 ] && grep -q "is not a lock file (it has other hard links)" "$E2E_TMP/err" ||
	fail "a hard link planted as the run lock: exit $RC: $(cat "$E2E_TMP/err")"
for l in "${lockfiles[@]}"; do rm "$DEDIS_LOCK_DIR/$l"; done
note "a hard link planted under the run lock's name: refused, its file untouched"

# 4. Released with its run: the next one goes ahead, and no lock file is left behind.
expect_ok --target "engine:$VOL" --procs 2 --file-size 8MiB --size 1MiB --quiet --keep
"$DEDISENGINE" gc "$VOL" -q || fail "gc after the runs"
[ -z "$(ls -A "$DEDIS_LOCK_DIR")" ] || fail "lock files left: $(ls -A "$DEDIS_LOCK_DIR")"
note "directory and file targets refused by any path, and by their other names (worker file, engine volume), while held; locks released with their runs"
