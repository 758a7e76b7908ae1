#!/bin/bash
# gen-one-fs.sh - dedisgen -x (--one-file-system): a file system mounted inside a scanned
# directory is not walked with -x, and is without it; with -x a PATH on that other file system
# may be given beside the directory (its files counted once), without -x it is refused (exit 2).
source "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
mktmp /var/tmp
[ -x "$DEDISGEN" ] || fail "no dedisgen at $DEDISGEN"
T=$E2E_TMP/tree
mkdir -p "$T/m"
pat() { head -c "$2" /dev/zero | tr '\0' "$1"; }
pat A 8192 >"$T/a"                       # the tree's own file system: 2 blocks of A
mount -t tmpfs -o size=1m dedis-e2e "$T/m" 2>/dev/null || skip "cannot mount a tmpfs"
on_exit "umount '$T/m'"
pat B 12288 >"$T/m/b"                    # the mounted one: 3 blocks of B
# blocks SUM: the blocks a scan read, from its JSON
blocks() { jget "$1" '.results[0].blocks'; }

"$DEDISGEN" "$T" -x -q -o "$E2E_TMP/x.dist" --json "$E2E_TMP/x.json" || fail "-x scan exited $?"
[ "$(blocks "$E2E_TMP/x.json")" -eq 2 ] || fail "-x walked into the mounted file system: $(blocks "$E2E_TMP/x.json") blocks, want 2"
"$DEDISGEN" "$T" -q -o "$E2E_TMP/all.dist" --json "$E2E_TMP/all.json" || fail "scan exited $?"
[ "$(blocks "$E2E_TMP/all.json")" -eq 5 ] || fail "without -x the mount was not walked: $(blocks "$E2E_TMP/all.json") blocks, want 5"

# -x TREE TREE/m: the mount's files once, the tree's once (the directory's walk stops at the mount)
"$DEDISGEN" -x "$T" "$T/m" -q -o "$E2E_TMP/both.dist" --json "$E2E_TMP/both.json" ||
	fail "-x with a PATH on the mounted file system exited $?: $(cat "$E2E_TMP/both.json" 2>/dev/null)"
[ "$(blocks "$E2E_TMP/both.json")" -eq 5 ] || fail "-x TREE TREE/m read $(blocks "$E2E_TMP/both.json") blocks, want 5"
grep -v '^# source' "$E2E_TMP/both.dist" | diff - <(grep -v '^# source' "$E2E_TMP/all.dist") >&2 ||
	fail "-x TREE TREE/m differs from one scan of TREE"
# without -x the directory's walk reaches TREE/m: refused, nothing written
rc=0
"$DEDISGEN" "$T" "$T/m" -q -o "$E2E_TMP/no.dist" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "TREE TREE/m without -x exited $rc, want 2"
grep -q "is inside the directory" "$E2E_TMP/err" || fail "the refusal: $(cat "$E2E_TMP/err")"
[ ! -e "$E2E_TMP/no.dist" ] || fail "a refused scan wrote its output"
# -x and a PATH inside the directory on its own file system: still refused
rc=0
mkdir "$T/sub"
pat C 4096 >"$T/sub/c"
"$DEDISGEN" -x "$T" "$T/sub" -q -o "$E2E_TMP/no.dist" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] || fail "-x TREE TREE/sub (one file system) exited $rc, want 2"
# -x and a file bind-mounted over a name in the directory: the walk lists it (-x stops only at
# directories), so given beside the directory it would be read twice (it was): refused
pat D 4096 >"$T/m/d"
touch "$T/bound"
mount --bind "$T/m/d" "$T/bound" || fail "cannot bind-mount a file"
on_exit "umount '$T/bound'"
rc=0
"$DEDISGEN" -x "$T" "$T/bound" -q -o "$E2E_TMP/no.dist" 2>"$E2E_TMP/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "bound is inside the directory" "$E2E_TMP/err" ||
	fail "-x TREE TREE/bound (a bind-mounted file) exited $rc: $(cat "$E2E_TMP/err")"
[ ! -e "$E2E_TMP/no.dist" ] || fail "a refused scan wrote its output"
umount "$T/bound"
note "-x: 2 blocks of the tree, 5 without -x; -x TREE TREE/m: 5, as one scan without -x; a bind-mounted file beside its directory refused"
