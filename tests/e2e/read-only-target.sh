#!/bin/bash
# read-only-target.sh - a run that only reads (--mode read --populate none) needs only read
# access: a file without write permission, read by a user who is not its owner, a file of a
# read-only mount, and a directory of worker files there, are read and verified; a run that
# would write them is refused (exit 2).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
chmod 755 "$E2E_TMP"
D=$E2E_TMP/data
mkdir "$D"
chmod 755 "$D"
"$DEDISBENCH" --target "$D" --procs 1 --file-size 4MiB --seed 5 --keep -q || fail "writing the data failed"
F=$D/dedisbench.0
before=$(sha256sum <"$F")
chmod 0444 "$F"
read_args=(--mode read --populate none --procs 1 --file-size 4MiB --seed 5 --verify final)

# read_run WHO JSON [CMD...]: the read run through CMD (a user switch, a mount namespace) must
# exit 0, verify every block and leave the file as it was. TARGET (default $F) is what it reads.
read_run() {
	local who=$1 json=$2 rc=0
	shift 2
	"$@" "$DEDISBENCH" "${read_args[@]}" --target "${TARGET:-$F}" --json "$json" -q 2>"$E2E_TMP/err" || rc=$?
	[ "$rc" -eq 0 ] || fail "$who: the read-only run exited $rc: $(cat "$E2E_TMP/err")"
	jcheck "$json" '.status == "ok" and .verify.ok and .verify.found.valid == 1024' "$who" '.verify'
	[ "$(sha256sum <"$F")" = "$before" ] || fail "$who: the read-only run changed $F"
}

ran=0
if [ "$(id -u)" -ne 0 ]; then
	read_run "mode 0444, own file" "$E2E_TMP/own.json"
	ran=$((ran + 1))
else
	# another user, who may read the file (0444) but not write it nor its directory
	if command -v setpriv >/dev/null && setpriv --reuid=nobody --regid=nogroup --clear-groups "$DEDISBENCH" --version >/dev/null 2>&1; then
		json=$E2E_TMP/nobody/r.json
		mkdir "$E2E_TMP/nobody" && chown nobody "$E2E_TMP/nobody"
		read_run "user nobody, mode 0444" "$json" setpriv --reuid=nobody --regid=nogroup --clear-groups
		TARGET=$D read_run "user nobody, a directory of root's" "$json" setpriv --reuid=nobody --regid=nogroup --clear-groups
		ran=$((ran + 1))
	else
		note "no second user who can run $DEDISBENCH (setpriv, user nobody): that case skipped"
	fi
	# a read-only bind mount, where even root cannot write
	chmod 0644 "$F"
	if unshare -m true 2>/dev/null; then
		ro=(unshare -m --propagation private sh -c
			'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"' "$D")
		read_run "read-only bind mount" "$E2E_TMP/ro.json" "${ro[@]}"
		TARGET=$D read_run "directory on a read-only bind mount" "$E2E_TMP/rodir.json" "${ro[@]}"
		# a write run there is refused before anything is done
		rc=0
		"${ro[@]}" "$DEDISBENCH" --target "$D" --procs 1 --file-size 4MiB -q 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "not writable" "$E2E_TMP/err" || fail "a write run on a read-only mount: exit $rc: $(cat "$E2E_TMP/err")"
		# a read run that needs more than the directory holds: one line, exit 2
		rc=0
		"${ro[@]}" "$DEDISBENCH" "${read_args[@]}" --target "$D" --procs 2 -q 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "dedisbench.1 is missing" "$E2E_TMP/err" ||
			fail "a read run wanting a second worker file on a read-only mount: exit $rc: $(cat "$E2E_TMP/err")"
		ran=$((ran + 1))
	else
		note "no private mount namespace (unshare -m): the read-only mount case skipped"
	fi
	chmod 0444 "$F"
fi
((ran > 0)) || skip "neither a second user who can run dedisbench nor a private mount namespace"

# what would write is still refused: a write run, and a read run that fills the file first
if [ "$(id -u)" -ne 0 ]; then
	for args in "--mode write" "--mode read --populate content"; do
		rc=0
		# shellcheck disable=SC2086 # two or three words
		"$DEDISBENCH" --target "$F" --procs 1 $args -q 2>"$E2E_TMP/err" || rc=$?
		[ "$rc" -eq 2 ] && grep -q "Permission denied" "$E2E_TMP/err" || fail "$args on a 0444 file: exit $rc: $(cat "$E2E_TMP/err")"
	done
fi
note "read-only runs: $ran"
