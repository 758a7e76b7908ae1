#!/bin/bash
# The build's archiver is quiet: the AR and ARFLAGS that the generated Makefile uses for
# lib/libdedis.a and friends build an archive here without a word on stderr (automake's default
# ARFLAGS 'cru' makes binutils' ar warn "'u' modifier ignored since 'D' is the default").
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mk=$top_builddir/Makefile
[ -f "$mk" ] || skip "no generated Makefile in $top_builddir"
ar_cmd=$(sed -n 's/^AR = //p' "$mk")
ar_flags=$(sed -n 's/^ARFLAGS = //p' "$mk")
[ -n "$ar_cmd" ] || fail "no AR in $mk"
[ "$ar_flags" = cr ] || fail "ARFLAGS in $mk is '$ar_flags', not 'cr' (Makefile.am sets it)"
objs=("$top_builddir"/lib/*.o)
obj=${objs[0]}
[ -f "$obj" ] || skip "no object file of lib/ in $top_builddir (build first)"
mktmp
# shellcheck disable=SC2086 # AR may carry words (e.g. "ar --plugin ...")
$ar_cmd $ar_flags "$E2E_TMP/t.a" "$obj" 2>"$E2E_TMP/ar.err" || fail "$ar_cmd $ar_flags failed: $(cat "$E2E_TMP/ar.err")"
[ ! -s "$E2E_TMP/ar.err" ] || fail "$ar_cmd $ar_flags is not quiet: $(head -3 "$E2E_TMP/ar.err")"
$ar_cmd t "$E2E_TMP/t.a" | grep -qxF "$(basename "$obj")" || fail "the archive does not hold $(basename "$obj")"
note "$ar_cmd $ar_flags: quiet"
