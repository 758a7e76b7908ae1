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

# make_dup_file GIB NAME: sets FILE to a new GIB GiB file with duplicates - 1 MiB random chunks,
# each written 1 to 3 times (about half the blocks redundant), so analysers index a realistic mix
# rather than all-unique blocks - in DIR, else /dev/shm when it has room, else /var/tmp (sets DIR
# too), and reads it once into the page cache. SKIP (exit 0) when memory cannot cache it.
make_dup_file() {
	local gib=$1 name=$2 need_kib avail_kib shm_kib
	need_kib=$((gib * 1024 * 1024 + 512 * 1024))
	avail_kib=$(awk '/MemAvailable/ {print $2}' /proc/meminfo)
	if ((avail_kib < 2 * need_kib)); then
		echo "SKIP: ${gib} GiB in page cache needs about $((2 * need_kib / 1048576)) GiB free memory"
		exit 0
	fi
	if [[ -z ${DIR:-} ]]; then
		shm_kib=$(df -k --output=avail /dev/shm 2>/dev/null | tail -1 || echo 0)
		if ((shm_kib > need_kib)); then DIR=/dev/shm; else DIR=/var/tmp; fi
	fi
	FILE=$(mktemp "$DIR/$name.XXXXXX")
	echo "# writing a ${gib} GiB file in $DIR ..."
	python3 - "$FILE" "$gib" <<'PY'
import os, random, sys
path, gib = sys.argv[1], int(sys.argv[2])
random.seed(1)
left = gib << 30
with open(path, "wb", buffering=0) as f:
    while left > 0:
        chunk = os.urandom(1 << 20)
        for _ in range(random.randint(1, 3)):
            if left <= 0:
                break
            f.write(chunk[:min(len(chunk), left)])
            left -= len(chunk)
PY
	cat "$FILE" >/dev/null # page cache (a no-op on /dev/shm)
}
