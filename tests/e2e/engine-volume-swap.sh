#!/bin/bash
# An engine run never acts on a directory swapped in under the volume's path (issue 36, item 1):
# root runs on engine:attacker/x/vol, a fresh volume it formats; once its superblock exists, the
# user `nobody`, who owns attacker/, replaces x (then, in another run, vol itself) with a link to a
# victim directory. The run keeps to the volume it formatted, through the directory it holds, and
# removes only that at the end, by time limit or SIGINT: the victim's volume is left whole.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (to run as root while nobody swaps the path)"
command -v setpriv >/dev/null || skip "setpriv is not installed"
asnobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
asnobody true 2>/dev/null || skip "cannot switch to the user nobody"
mktmp
chmod 755 "$E2E_TMP"
cd "$E2E_TMP"
export DEDIS_LOCK_DIR=$E2E_TMP/locks
mkdir locks
# nobody must reach a directory of its own here (not so under a private TMPDIR)
mkdir attacker && chown 65534:65534 attacker
asnobody sh -c "mkdir '$E2E_TMP/attacker/probe' && rmdir '$E2E_TMP/attacker/probe'" 2>/dev/null ||
	skip "nobody cannot work in $E2E_TMP (a private TMPDIR?)"
SB=superblock # the engine's name for a volume's superblock

# A volume of someone else's, with its data, and a file beside it, where the swapped link leads.
mkdir victim && "$DEDISENGINE" format victim/vol --size 1MiB >/dev/null
head -c 256K /dev/urandom >precious.img
"$DEDISENGINE" import victim/vol precious.img >/dev/null
printf 'precious\n' >victim/notes
"$DEDISENGINE" export victim/vol victim.before >/dev/null

# swap_run WHAT STOP SWAP: run on engine:attacker/x/vol in the background; when its superblock
# exists, nobody runs SWAP in attacker/; STOP is "time" (the run ends by its --time) or "int"
# (SIGINT once swapped). Sets RC and fails unless the victim is untouched. Returns 1 when a run
# bounded by its time ended before the swap could be made (a machine too slow to race it).
swap_run() {
	local what=$1 stop=$2 swap=$3 t=3s i pid
	rm -rf attacker && mkdir -p attacker/x && chown -R 65534:65534 attacker
	[ "$stop" = int ] && t=60s
	"$DEDISBENCH" --target engine:attacker/x/vol --procs 1 --file-size 8MiB --access uniform --rate 100 \
		--time "$t" --quiet --json "$what.json" >"$what.out" 2>"$what.err" &
	pid=$!
	for ((i = 0; i < 600; i++)); do
		[ -e "attacker/x/vol/$SB" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	[ -e "attacker/x/vol/$SB" ] || { wait "$pid" || true; fail "$what: the volume was never formatted: $(cat "$what.err")"; }
	if ! kill -0 "$pid" 2>/dev/null; then
		wait "$pid" || true
		return 1
	fi
	(cd attacker && asnobody sh -c "$swap") || fail "$what: nobody could not swap the path"
	[ "$stop" = int ] && kill -INT "$pid"
	RC=0
	wait "$pid" || RC=$?
	[ -f victim/notes ] && "$DEDISENGINE" export victim/vol victim.after >/dev/null 2>&1 && cmp -s victim.before victim.after ||
		fail "$what: the victim's volume was changed or removed (exit $RC): $(ls -R victim | tr '\n' ' ')"
}

# 1. x renamed and replaced by a link to ../victim after the format (the finding): the run keeps
# writing the volume it formatted (now attacker/x.old/vol) and ends ok; that volume is removed.
if swap_run moved-parent time 'mv x x.old && ln -s ../victim x'; then
	[ "$RC" -eq 0 ] || fail "a run whose path was swapped: exit $RC, want 0: $(cat moved-parent.err)"
	jcheck moved-parent.json '.status == "ok" and .engine.match and .writes.ops > 0'
	[ ! -e attacker/x.old/vol ] || fail "the volume the run formatted was left in attacker/x.old: $(ls attacker/x.old/vol)"
else
	note "the 3 s run ended before the swap (a busy machine): only the SIGINT cases below raced it"
fi

# 2. The same, stopped by SIGINT.
swap_run moved-parent-int int 'mv x x.old && ln -s ../victim x'
[ "$RC" -eq 0 ] || fail "SIGINT after the swap: exit $RC, want 0 (interrupted): $(cat moved-parent-int.err)"
jcheck moved-parent-int.json '.status == "interrupted"'
[ ! -e attacker/x.old/vol ] || fail "SIGINT: the volume the run formatted was left in attacker/x.old"

# 3. The volume's own directory renamed and replaced by a link to the victim's volume: its files
# are removed beneath the held directory; the link and the renamed (now empty) directory stay.
swap_run moved-volume int 'mv x/vol x/vol.old && ln -s ../../victim/vol x/vol'
[ "$RC" -eq 0 ] || fail "SIGINT after the volume's swap: exit $RC, want 0: $(cat moved-volume.err)"
[ -L attacker/x/vol ] || fail "the link put in the volume's place was removed"
[ -z "$(ls -A attacker/x/vol.old)" ] || fail "the files of the volume the run formatted stayed: $(ls attacker/x/vol.old)"
"$DEDISENGINE" fsck victim/vol -q || fail "the victim's volume fails fsck"
note "path swapped during a run (time limit, SIGINT, parent or volume): the victim is untouched, the run's own volume removed"
