#!/bin/bash
# Random damage to cleanly closed engine volumes (bench/perf/engine-damage-sweep.sh, small and
# seeded): every page of the working map, the references and the state of a mem volume (each
# must fail its check and be rebuilt), then 40 random cases over every file of mem, lz4 and
# bloom volumes. The data comes back right or a command refuses
# with exit 1 or 2; never wrong data from a trusted cache, never a crash or a sanitizer report.
# The full sweep (1000 cases and every cache page) is the script's default, run by hand.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ -x "$DEDISENGINE" ] || fail "no dedisengine binary at $DEDISENGINE"
command -v openssl >/dev/null || skip "openssl is not installed"
mktmp
# On a memory file system where there is one: a case's commands sync their files.
tmp="$E2E_TMP"
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
sweep() {
	local rc=0
	DEDISENGINE="$DEDISENGINE" TMPDIR="$tmp" bash "$top_srcdir/bench/perf/engine-damage-sweep.sh" "$@" \
		>"$E2E_TMP/out" 2>&1 || rc=$?
	[ "$rc" -eq 0 ] || fail "the damage sweep $* found cases not allowed (exit $rc): $(head -c 2000 "$E2E_TMP/out")"
	total=$(awk '/^  [A-Z-]+ +[0-9]+$/ {n += $2} END {print n}' "$E2E_TMP/out")
	note "$(tr '\n' ' ' <"$E2E_TMP/out" | sed 's/ by file:.*//')"
}
sweep --cases 0 --kinds mem --every-page-of "lbnmap refs state"
[ "$total" -eq 21 ] || fail "every page of lbnmap, refs and state: $total cases, want 21"
grep -Eq '^  REBUILT +21$' "$E2E_TMP/out" || fail "a damaged page of a cache was not rebuilt: $(cat "$E2E_TMP/out")"
sweep --cases 40 --seed 36
[ "$total" -eq 40 ] || fail "the random sweep ran $total cases, want 40"

# No false alarm: opens that only read keep the checks they verified, and a write, a discard or a
# GC after them reseals; no open along the way finds a cache to rebuild, and the data is the last
# written.
v="$E2E_TMP/v"
head -c $((1 << 20)) /dev/urandom >"$E2E_TMP/a"
head -c $((1 << 20)) /dev/urandom >"$E2E_TMP/b"
export DEDIS_LOCK_DIR="$E2E_TMP"
"$DEDISENGINE" format "$v" --size 4MiB -q
for step in "import $v $E2E_TMP/a" "stat $v" "export $v $E2E_TMP/o -q" "import $v $E2E_TMP/b" "stat $v" \
	"discard $v 0 16" "gc $v" "fsck $v" "export $v $E2E_TMP/o -q"; do
	# shellcheck disable=SC2086
	"$DEDISENGINE" $step >/dev/null 2>"$E2E_TMP/e" || fail "$step: $(cat "$E2E_TMP/e")"
	! grep -q "rebuilt" "$E2E_TMP/e" || fail "$step: a cache rebuilt on an undamaged volume: $(cat "$E2E_TMP/e")"
done
cmp -s <(head -c $((16 * 4096)) /dev/zero; tail -c +$((16 * 4096 + 1)) "$E2E_TMP/b") <(head -c $((1 << 20)) "$E2E_TMP/o") ||
	fail "the volume does not read back the last data written"
note "reads, writes, a discard and a GC in turn: no cache rebuilt, data as written"
