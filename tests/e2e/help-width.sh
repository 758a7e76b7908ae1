#!/bin/bash
# help-width.sh - every tool's --help fits 80 columns and names what the tool can do: dedisgen's
# and dedisengine's subcommands (as their refusals list them), dedisbench's target kinds and
# subcommands (tests/unit/test_options.c checks them against the registries), and what --rate
# accepts, as its validation does.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mktmp
cd "$E2E_TMP"
tools=(dedisbench dedisgen dedisengine)
for t in dedisbench-mpi dedisgen-mpi; do [ -x "$top_builddir/$t" ] && tools+=("$t"); done
for t in "${tools[@]}"; do
	"$top_builddir/$t" --help >"$t.help" || fail "$t --help exited $?"
	[ "$(wc -l <"$t.help")" -gt 10 ] || fail "$t --help is too short: $(cat "$t.help")"
	long=$(awk 'length > 80 { printf "%d: %s\n", length, $0 }' "$t.help")
	[ -z "$long" ] || fail "$t --help has lines over 80 columns:
$long"
done
# dedisengine's commands, from its refusal of none
cmds=$("$DEDISENGINE" 2>&1 | sed -nE 's/.*no command given \((.*)\)$/\1/p' | tr -d ,) || true
[ -n "$cmds" ] || fail "dedisengine without a command does not list the commands"
for c in $cmds; do grep -qE "^  $c " dedisengine.help || fail "dedisengine --help does not list the command $c"; done
for c in scan merge show compare; do
	grep -qE "^(Usage:|      ) dedisgen (\[)?$c" dedisgen.help || fail "dedisgen --help has no usage line for $c"
done
for word in replay suite compare backup; do
	grep -qE "^  $word " dedisbench.help || fail "dedisbench --help does not list $word under Commands"
done
help=$(tr -s ' \n' '  ' <dedisbench.help)
for kind in engine:DIR null DEVICE FILE DIR; do
	[[ $help == *" $kind"* ]] || fail "dedisbench --help does not name the target kind $kind"
done

# --rate: what the help says it takes is what is accepted
[[ $help == *"--rate RATE nominal: RATE ops/s in total, open loop: 0.001 to 1e12, or 0 for peak"* ]] ||
	fail "--rate's help does not say what it accepts: $(grep -A2 -- '--rate' dedisbench.help)"
"$DEDISBENCH" -T null --procs 1 --file-size 64KiB --rate 0 --json r0.json -q || fail "--rate 0 refused"
jcheck r0.json '.config.peak == true' "--rate 0 runs at peak" '.config | {peak, rate}'
"$DEDISBENCH" -T null --procs 1 --file-size 64KiB --rate 1e12 --size 64KiB -q || fail "--rate 1e12 refused"
for bad in 0.0001 2e12 -1; do
	rc=0
	"$DEDISBENCH" -T null --procs 1 --file-size 64KiB --rate "$bad" -q 2>err || rc=$?
	[ "$rc" -eq 2 ] && [ "$(wc -l <err)" -eq 1 ] || fail "--rate $bad: exit $rc: $(cat err)"
done
grep -q "at least 0.001, or 0 for peak" <("$DEDISBENCH" -T null --rate 0.0001 2>&1) ||
	fail "--rate 0.0001 is not refused in the help's words"
note "${#tools[@]} tools' --help within 80 columns; commands, target kinds and --rate's range named"
