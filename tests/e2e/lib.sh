# Shared helpers for the end-to-end scripts: locate dedisbench, a per-script temp dir
# removed on exit, fail/skip, and jq-based JSON readers. Source it; do not run it.

# shellcheck shell=bash

# A suite started with SIGHUP ignored (nohup, some CI runners) passes that on to every tool, which
# rightly keeps it ignored: the scripts that send SIGHUP would test nothing and wait for a stop
# that never comes. Such a script runs itself again with SIGHUP at its default (bash cannot
# reset a signal ignored at its start: `trap - HUP` does nothing then).
if [ -z "${DEDIS_E2E_HUP_DEFAULT:-}" ] && awk '$1 == "SigIgn:" && $2 ~ /[13579bdfBDF]$/ {hup = 1} END {exit !hup}' /proc/$$/status; then
	export DEDIS_E2E_HUP_DEFAULT=1
	exec env --default-signal=HUP bash "${BASH_SOURCE[1]:-$0}" "$@"
fi

E2E_NAME=$(basename "${BASH_SOURCE[1]:-$0}" .sh)
E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# make check exports top_builddir/top_srcdir; run by hand, fall back to the source tree.
: "${top_srcdir:=$(cd "$E2E_DIR/../.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
DEDISBENCH="$top_builddir/dedisbench"
DEDISGEN="$top_builddir/dedisgen"
DEDISENGINE="$top_builddir/dedisengine"

fail() {
	echo "FAIL ($E2E_NAME): $*" >&2
	exit 1
}

skip() {
	echo "SKIP ($E2E_NAME): $*" >&2
	exit 77
}

note() {
	echo "# $*"
}

# no_gran: a distribution on stdin without its [granularity 1], [alignment 1] and [cdc 1]
# sections (the last ones), as a merge, -k or dedisgen-mpi writes it: they keep none of them
# (dedis-dist(5)).
no_gran() {
	sed '/^\[\(granularity\|alignment\|cdc\) /,$d'
}

[ -x "$DEDISBENCH" ] || fail "no dedisbench binary at $DEDISBENCH (set top_builddir)"
command -v jq >/dev/null 2>&1 || skip "jq is not installed (apt-get install jq)"

# Cleanup hooks run, last registered first, from one EXIT trap that also removes the temp dir.
E2E_CLEANUP=()
on_exit() {
	E2E_CLEANUP+=("$1")
}
e2e_exit() {
	local rc=$? i
	for ((i = ${#E2E_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${E2E_CLEANUP[i]}" || true
	done
	[ -n "${E2E_TMP:-}" ] && rm -rf "$E2E_TMP"
	exit "$rc"
}
trap e2e_exit EXIT
trap 'exit 130' INT TERM

# mktmp [BASE]: a fresh temp dir unique to this script and process (set in E2E_TMP).
# BASE defaults to $TMPDIR or /tmp; pass /var/tmp to get a real (non-tmpfs) filesystem.
mktmp() {
	E2E_TMP=$(mktemp -d "${1:-${TMPDIR:-/tmp}}/dedis-e2e-$E2E_NAME.XXXXXX") ||
		fail "cannot create a temp dir"
}

# wait_stopped PID LOG WHAT: wait (up to 30 s) until the fault shim (DEDIS_FAULT_ACTION=stop) has
# logged to LOG and stopped process PID; fail saying WHAT never happened otherwise.
wait_stopped() {
	local i
	for ((i = 0; i < 300; i++)); do
		[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = T ] && [ -s "$2" ] && return 0
		sleep 0.1
	done
	fail "$3"
}

# jget FILE FILTER: print one value (raw) of a JSON file; fails if missing or null. An empty file
# fails too: jq -e reads no value there and exits 0, so every check on it would pass.
jget() {
	local v
	[ -s "$1" ] || fail "JSON $1 is missing or empty (wanted $2)"
	v=$(jq -er "$2" "$1") || fail "JSON $1: $2 is missing or null"
	printf '%s\n' "$v"
}

# jcheck FILE EXPR [MSG]: assert a jq boolean expression holds on a JSON file (not an empty one).
jcheck() {
	[ -s "$1" ] || fail "${3:-JSON $1: expected $2}; but $1 is missing or empty"
	jq -e "$2" "$1" >/dev/null || fail "${3:-JSON $1: expected $2}; got: $(jq -c "${4:-.}" "$1" 2>&1 | head -c 600)"
}

# fcmp A OP B: floating-point comparison via awk (OP one of < <= > >= ==).
fcmp() {
	awk -v a="$1" -v b="$3" -v op="$2" 'BEGIN {
		if (op == "<") r = a < b; else if (op == ">") r = a > b
		else if (op == "<=") r = a <= b; else if (op == ">=") r = a >= b
		else if (op == "==") r = a == b; else r = 0
		exit !r }'
}

# within VALUE TARGET PCT: |VALUE - TARGET| <= PCT % of TARGET.
within() {
	awk -v v="$1" -v t="$2" -v p="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= t * p / 100) }'
}

# run_bench ARGS...: run dedisbench with output captured in $E2E_TMP/out and .err; sets RC.
run_bench() {
	RC=0
	"$DEDISBENCH" "$@" >"$E2E_TMP/out" 2>"$E2E_TMP/err" || RC=$?
}

# expect_ok ARGS...: run and fail unless it exits 0.
expect_ok() {
	run_bench "$@"
	[ "$RC" -eq 0 ] || fail "dedisbench $* exited $RC: $(head -c 600 "$E2E_TMP/err")"
}

# comp FUNC WORDS...: complete the last of WORDS with the real bash completion function FUNC;
# the candidates, space-separated and padded with a space each side, in $got.
comp() {
	local f=$1
	shift
	COMP_WORDS=("$@")
	COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
	COMP_LINE="$*" COMP_POINT=${#COMP_LINE}
	COMPREPLY=()
	"$f" || fail "$f returned $? completing '$*'"
	got=" ${COMPREPLY[*]} "
}
