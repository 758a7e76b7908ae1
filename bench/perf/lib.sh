# lib.sh - what the benchmark scripts share: find dedisbench and the peer tools, or SKIP (exit 0)
# with the reason. Source it; do not run it.
# shellcheck shell=bash

# DEDISBENCH, else ./dedisbench (a build dir), else PATH.
find_dedisbench() {
	if [[ -n ${DEDISBENCH:-} ]]; then
		echo "$DEDISBENCH"
	elif [[ -x ./dedisbench ]]; then
		echo ./dedisbench
	elif command -v dedisbench >/dev/null 2>&1; then
		command -v dedisbench
	else
		return 1
	fi
}

need_jq() {
	command -v jq >/dev/null 2>&1 && return 0
	echo "jq not found: installing it with apt-get" >&2
	local sudo=""
	[[ $(id -u) -eq 0 ]] || sudo="sudo"
	$sudo apt-get install -y jq >/dev/null 2>&1 || return 1
}

# perf_prologue [fio]: sets DB to dedisbench; checks fio (when asked) and jq; SKIP otherwise.
perf_prologue() {
	if ! DB=$(find_dedisbench); then
		echo "SKIP: dedisbench not found (set DEDISBENCH, run from the build dir, or put it in PATH)"
		exit 0
	fi
	if [[ ${1:-} == fio ]] && ! command -v fio >/dev/null 2>&1; then
		echo "SKIP: fio not found (apt-get install fio)"
		exit 0
	fi
	if ! need_jq; then
		echo "SKIP: jq not found and could not be installed"
		exit 0
	fi
}
