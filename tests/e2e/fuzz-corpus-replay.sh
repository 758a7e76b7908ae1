#!/bin/bash
# The fuzz harnesses (tests/fuzz/) replay their committed corpora: every input still ends in a
# clean result - no crash, no hang, no broken property (a harness aborts on any). Built as
# plain programs, so AFL++ is not needed here; tests/fuzz/run-afl.sh is the long mode.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
mktmp
F=$top_builddir/tests/fuzz
C=$top_srcdir/tests/fuzz/corpus
replay() { # replay HARNESS CORPUS [ENV=VALUE...]
	local h=$1 c=$2 out
	shift 2
	[ -x "$F/fuzz_$h" ] || fail "no harness $F/fuzz_$h (make check builds it)"
	[ -n "$(ls -A "$C/$c")" ] || fail "corpus $C/$c is empty"
	out=$(env TMPDIR="$E2E_TMP" "$@" "$F/fuzz_$h" "$C/$c" 2>&1) || fail "fuzz_$h on corpus/$c: $out"
	note "$(printf '%s\n' "$out" | grep 'inputs replayed' | sed "s|.*/||")"
}
replay distfile distfile
replay ini ini
replay options options
replay gen_options gen-options
replay engine_cli engine-cli
replay engine engine-mem DEDIS_FUZZ_INDEX=mem
# Damage to the durable map found by the long run, which recovery used to load as it read (other
# blocks returned silently): with the map's chunk checks none of these may even be counted.
replay engine engine-mem-strict DEDIS_FUZZ_INDEX=mem DEDIS_FUZZ_STRICT=1
# A damaged bdb page fails its checksum and libdb panics its environment; from then on its close
# calls refuse to run and leave its handles allocated (about 120 KB of Berkeley DB's own, until the
# process exits). Under ASan that is a leak report, not a defect of ours: leak detection is off
# for these two.
nolsan="ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
replay engine engine-bdb DEDIS_FUZZ_INDEX=bdb "$nolsan"
replay engine engine-bloom DEDIS_FUZZ_INDEX=bloom "$nolsan"
