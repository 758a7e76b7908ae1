#!/bin/bash
# Crash consistency of dedisengine: a writer killed (SIGKILL) at random instants, at least 20
# times, on every index backend; after each kill the volume reopens, fsck accepts it and every
# block flushed before the kill reads back (old or new, never anything else).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
mktmp

# Reproducible when E2E_SEED is given; the seed is printed either way.
seed=${E2E_SEED:-$$}
RANDOM=$seed
note "seed $seed (E2E_SEED=$seed repeats the kill instants)"

BS=4096
NBLK=2048 # 8 MiB volumes, chunk store of the same size (GC runs by itself when it fills)
HALF=$((NBLK / 2))
T="$E2E_TMP"
# A = P P Q Q (duplicates inside); B = Q N Q (3/4 of the volume): known data overwriting other
# data, new data overwriting, the same data rewritten in place. B's last quarter equals A's, and
# A's last quarter is A's only, so the second half of the volume must read back exactly as A.
head -c $((HALF * BS / 2)) /dev/urandom >"$T/P"
head -c $((HALF * BS / 2)) /dev/urandom >"$T/Q"
cat "$T/P" "$T/P" "$T/Q" "$T/Q" >"$T/A"

# blocklines FILE: the first half of FILE, one line of hex per 4 KiB block, in block order.
blocklines() {
	head -c $((HALF * BS)) "$1" | od -An -v -tx8 -w$BS
}
blocklines "$T/A" >"$T/A.hex"

make_b() { # a fresh B: new data N differs every round
	head -c $((HALF * BS / 2)) /dev/urandom >"$T/N"
	cat "$T/Q" "$T/N" "$T/Q" >"$T/B"
	blocklines "$T/B" >"$T/B.hex"
}

fsck_ok() { # VOL WHEN
	local rc=0
	"$DEDISENGINE" fsck "$1" >"$T/fsck.out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || fail "$2: fsck exited $rc: $(head -c 800 "$T/fsck.out")"
}

# check_export VOL MODE WHEN: MODE "A" = exactly A; "AB" = each block A's or B's (A's beyond).
check_export() {
	"$DEDISENGINE" export "$1" "$T/out" -q || fail "$3: export failed"
	[ "$(stat -c %s "$T/out")" -eq $((NBLK * BS)) ] || fail "$3: export has the wrong size"
	if [ "$2" = A ]; then
		cmp -s "$T/A" "$T/out" || fail "$3: the volume does not read back as A ($(cmp "$T/A" "$T/out" 2>&1))"
		return 0
	fi
	cmp -s -i $((HALF * BS)) "$T/A" "$T/out" ||
		fail "$3: the second half (flushed before the kill, never rewritten with other data) is not A's"
	local res
	res=$(blocklines "$T/out" | awk -v fa="$T/A.hex" -v fb="$T/B.hex" '
		{ getline a <fa; getline b <fb; i = NR - 1
		  if ($0 == a) { na++; next } if ($0 == b) { nb++; next }
		  if (bad++ < 5) printf "block %d is neither the old nor the new content; ", i }
		END { printf "%s|%d|%d", (bad ? bad " bad blocks: " : ""), na, nb; if (NR != '"$HALF"') printf " (read %d blocks)", NR }')
	case $res in
	"|"*" (read"*) fail "$3: $res" ;;
	"|"*) ;;
	*) fail "$3: ${res%%|*}" ;;
	esac
	local counts=${res#|}
	note "$3: ok (first half: ${counts%%|*} blocks A's, ${counts##*|} B's)"
}

# One volume per backend; calibrate how long an uninterrupted B import takes on each, so the
# kill instants spread over the whole import (and a little beyond it).
declare -A span
for ix in mem bdb bloom; do
	v="$T/vol-$ix"
	"$DEDISENGINE" format "$v" --size $((NBLK * BS)) --index "$ix" -q || fail "format --index $ix failed"
	"$DEDISENGINE" import "$v" "$T/A" -q || fail "$ix: import of A failed"
	make_b
	t0=$EPOCHREALTIME
	"$DEDISENGINE" import "$v" "$T/B" -q || fail "$ix: import of B failed"
	t1=$EPOCHREALTIME
	span[$ix]=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d", (b - a) * 1300 + 5 }') # ms
	fsck_ok "$v" "$ix: after a complete import of B"
	# Uninterrupted: blocks below 3072 are exactly B's.
	"$DEDISENGINE" export "$v" "$T/out" -q || fail "$ix: export failed"
	cmp -s -n $((NBLK * BS * 3 / 4)) "$T/B" "$T/out" || fail "$ix: a complete import of B does not read back"
	cmp -s -i $((NBLK * BS * 3 / 4)) "$T/A" "$T/out" || fail "$ix: blocks past B are not A's"
	note "$ix: an uninterrupted import of B takes about $((span[$ix] * 10 / 13)) ms"
done

# The kill rounds.
KILLS=21
gcs=0
for ((r = 0; r < KILLS; r++)); do
	ix=$(echo mem bdb bloom | cut -d' ' -f$((r % 3 + 1)))
	v="$T/vol-$ix"
	"$DEDISENGINE" import "$v" "$T/A" -q || fail "round $r ($ix): import of A failed"
	check_export "$v" A "round $r ($ix): after importing A"
	make_b
	delay=$((RANDOM % span[$ix]))
	commit=()
	[ $((RANDOM % 2)) -eq 1 ] && [ "$ix" != mem ] && commit=(--commit-every $((RANDOM % 200 + 1)))
	"$DEDISENGINE" import "$v" "$T/B" -q "${commit[@]}" 2>"$T/imp.err" &
	pid=$!
	sleep "$(printf '0.%03d' "$delay")" # the random crash instant (not synchronisation)
	kill -9 "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" 2>/dev/null || rc=$?
	[ "$rc" -eq 137 ] || [ "$rc" -eq 0 ] || fail "round $r ($ix): the import exited $rc: $(cat "$T/imp.err")"
	late=""
	[ "$rc" -eq 0 ] && late=", after it finished"
	what="round $r ($ix, killed at ${delay} ms${commit[*]:+, ${commit[*]}}$late)"
	fsck_ok "$v" "$what"
	check_export "$v" AB "$what"
	g=$("$DEDISENGINE" stat "$v" --json | jq -r .gc_reclaimed) || fail "$what: stat failed"
	[ "$g" -gt 0 ] && gcs=$((gcs + 1))
done
[ "$gcs" -gt 0 ] || fail "no round ran a GC pass: the rounds did not fill the chunk store"

# A killed dedisbench (the whole process group, workers included) leaves a volume fsck accepts
# and a later run can use.
BKILLS=3
vb="$T/vol-bench"
for ((r = 0; r < BKILLS; r++)); do
	ix=$(echo mem bdb bloom | cut -d' ' -f$((r % 3 + 1)))
	setsid "$DEDISBENCH" --target "engine:$vb-$ix,index=$ix" --procs 2 --file-size 8MiB --access uniform \
		--dist kernels --time 30s --sync fsync --seed $((seed + r)) -q >"$T/b.out" 2>"$T/b.err" &
	pid=$!
	on_exit "kill -9 -- -$pid 2>/dev/null"
	for _ in $(seq 1 200); do # bounded poll: the volume exists once format has finished
		[ -f "$vb-$ix/superblock" ] && break
		kill -0 "$pid" 2>/dev/null || fail "dedisbench ended early: $(cat "$T/b.err")"
		sleep 0.05
	done
	[ -f "$vb-$ix/superblock" ] || fail "dedisbench never formatted $vb-$ix"
	for _ in $(seq 1 400); do # bounded poll: the workers are writing (bdb's set-up can be slow)
		w=$("$DEDISENGINE" stat "$vb-$ix" --json 2>/dev/null | jq -r '.logical_writes // 0') || w=0
		[ "${w:-0}" -gt 0 ] && break
		kill -0 "$pid" 2>/dev/null || fail "dedisbench ended early: $(cat "$T/b.err")"
		sleep 0.05
	done
	[ "${w:-0}" -gt 0 ] || fail "dedisbench ($ix) wrote nothing in 20 s"
	delay=$((RANDOM % 900))
	sleep "$(printf '0.%03d' "$delay")" # the random crash instant
	kill -9 -- "-$pid" 2>/dev/null || fail "dedisbench ($ix) ended before the kill: $(cat "$T/b.err")"
	wait "$pid" 2>/dev/null || true
	for _ in $(seq 1 100); do # bounded poll: every worker of the group is gone
		pgrep -g "$pid" >/dev/null 2>&1 || break
		sleep 0.05
	done
	! pgrep -g "$pid" >/dev/null 2>&1 || fail "dedisbench's workers outlived SIGKILL"
	what="dedisbench on $ix killed at ${delay} ms"
	fsck_ok "$vb-$ix" "$what"
	"$DEDISENGINE" stat "$vb-$ix" --json >"$T/st.json" || fail "$what: stat failed"
	jcheck "$T/st.json" '.logical_writes > 0' "$what: nothing was written before the kill"
	# The volume is usable again: a full run on it matches and reads back.
	run_bench --target "engine:$vb-$ix" --procs 2 --file-size 8MiB --access uniform --dist kernels -m \
		--size 8MiB --seed $((seed + r)) --json "$T/after.json" -q
	[ "$RC" -eq 0 ] || fail "$what: a run on the recovered volume exited $RC: $(head -c 600 "$T/err")"
	jcheck "$T/after.json" '.engine.match == true and .engine.read_mismatches == 0' \
		"$what: the run on the recovered volume does not match" .engine
	fsck_ok "$vb-$ix" "$what, then a complete run"
	note "$what: fsck clean, $(jget "$T/st.json" .logical_writes) writes had landed; the next run matches"
done
note "$((KILLS + BKILLS)) kills, $gcs rounds with GC, all consistent"

# A format interrupted (SIGINT, SIGTERM, SIGHUP) - held by the test shim at the superblock, the
# last file it writes - finishes first: the volume is whole. Killed midway, it left data files and
# no superblock, which the next format refused ("not empty") until removed by hand.
SHIM=$top_builddir/tests/fault/dedis-fault.so
[ -f "$SHIM" ] || fail "no shim at $SHIM (make check builds it)"
for sig in INT TERM HUP; do
	fv=$T/format-$sig
	head -c 8 /dev/zero >"$T/fmt.state"
	: >"$T/fmt.log"
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" LD_PRELOAD="$SHIM" DEDIS_FAULT_ACTION=stop \
		DEDIS_FAULT_OP=write DEDIS_FAULT_NTH=1 DEDIS_FAULT_PATH="$fv/superblock" DEDIS_FAULT_STATE="$T/fmt.state" \
		DEDIS_FAULT_LOG="$T/fmt.log" "$DEDISENGINE" format "$fv" --size 8MiB -q 2>"$T/fmt.err" &
	pid=$!
	wait_stopped "$pid" "$T/fmt.log" "format never stopped at its superblock"
	kill "-$sig" "$pid"
	kill -CONT "$pid"
	wait "$pid" || true
	"$DEDISENGINE" fsck "$fv" >"$T/fsck" 2>&1 || fail "format interrupted by SIG$sig left no whole volume: $(cat "$T/fsck")"
	[ -z "$(find "$fv" -name '*.tmp*')" ] || fail "format interrupted by SIG$sig left $(find "$fv" -name '*.tmp*')"
done
note "format interrupted by INT, TERM, HUP: a whole volume each time"
