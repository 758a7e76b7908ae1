#!/bin/bash
# adversarial-sweep.sh - issue 36's rerunnable adversarial sweep: another user swaps path components
# under running tools, and signals land at random instants; counts by outcome, exit 1 on any BUG.
#
# Usage (as root): bench/perf/adversarial-sweep.sh [--cases N] [--swaps N] [--signals N] [--seed S]
#                  [--build DIR] [--only swap:K|signal:K] [--scratch DIR] [--log FILE] [--verbose]
#
# Path swaps: root runs dedisbench (dir, file and engine: targets, --json / --output-dir),
# dedisgen (-o, --json) and dedisengine import on paths inside a directory owned by `nobody`;
# once the run is demonstrably under way (a file it creates exists, a file it reads is open, or a
# time-series row is written) plus a random delay, `nobody` swaps a path component for a symbolic
# link (or a hard link) into a root-owned victim directory. The run ends by --time, SIGINT or
# SIGTERM. The victim must be byte-identical afterwards (content, mode, owner, mtime, xattrs) with
# nothing created in it.
# Signals: SIGINT / SIGTERM / SIGHUP / SIGKILL at a random instant of dedisbench runs (dir, file,
# a volume it formats or one that exists), dedisengine import / gc / fsck and dedisgen scan -o
# --json. Afterwards: a written JSON parses and its status says what the exit code says; nothing
# is left that the run promised to remove (unless SIGKILL); the run lock is free (a second run is
# accepted); an engine volume passes fsck and holds what was written (a verify run, or an
# export compared block by block with the imported image).
#
# Every case draws its parameters from (--seed, its number) alone: `--only swap:17` reruns one.
# A line per case goes to the log; the summary counts outcomes, "BUG ..." ones apart.
set -uo pipefail

SWAPS=200 SIGNALS=200 SEED=36 BUILD='' ONLY='' SCRATCH_BASE=/var/tmp VERBOSE=0 KEEP_LOG=
usage() { sed -n '4,6p' "$0" | sed 's/^# \{0,1\}//'; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--cases) SWAPS=$2 SIGNALS=$2; shift ;;
	--swaps) SWAPS=$2; shift ;;
	--signals) SIGNALS=$2; shift ;;
	--seed) SEED=$2; shift ;;
	--build) BUILD=$2; shift ;;
	--only) ONLY=$2; shift ;;
	--scratch) SCRATCH_BASE=$2; shift ;;
	--log) KEEP_LOG=$2; shift ;;
	--verbose) VERBOSE=1 ;;
	-h | --help) usage ;;
	*) echo "adversarial-sweep: unknown option $1" >&2; usage ;;
	esac
	shift
done
for n in "$SWAPS" "$SIGNALS" "$SEED"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "adversarial-sweep: '$n' is not a whole number" >&2; exit 2; }
done
HERE=$(cd "$(dirname "$0")" && pwd)
CHECK="python3 $HERE/adversarial-check.py"
: "${BUILD:=${top_builddir:-$(pwd)}}"
BUILD=$(cd "$BUILD" 2>/dev/null && pwd) || { echo "adversarial-sweep: no build directory" >&2; exit 2; }
DB=$BUILD/dedisbench DG=$BUILD/dedisgen DE=$BUILD/dedisengine
for t in "$DB" "$DG" "$DE"; do
	[ -x "$t" ] || { echo "adversarial-sweep: no $t (give --build DIR)" >&2; exit 2; }
done
[ "$(id -u)" -eq 0 ] || { echo "SKIP: adversarial-sweep needs root (a second user swaps paths)"; exit 77; }
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"; }
as_nobody true 2>/dev/null || { echo "SKIP: cannot run commands as nobody (setpriv)"; exit 77; }
if ! command -v jq >/dev/null || ! command -v python3 >/dev/null; then
	echo "SKIP: adversarial-sweep needs jq and python3"
	exit 77
fi

SCR=$(mktemp -d "$SCRATCH_BASE/dedis-adversarial.XXXXXX") || exit 2
SCR=$(realpath "$SCR")
chmod 755 "$SCR"
as_nobody test -x "$SCR" || { echo "SKIP: nobody cannot reach $SCR (give --scratch DIR)"; rm -rf "$SCR"; exit 77; }
export DEDIS_LOCK_DIR=$SCR/locks
mkdir "$DEDIS_LOCK_DIR"
LOG=$SCR/sweep.log
declare -A COUNT=()
BUGS=0 RUN_PID='' TREE=()
finish() {
	local p
	for p in ${TREE[@]+"${TREE[@]}"} $RUN_PID; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$SCR"
}
trap finish EXIT
trap 'exit 130' INT TERM

# --- small tools ---------------------------------------------------------------------------------
now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }
sleep_ms() { sleep "$(printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)))"; }
# A case's own random stream (splitmix64 on RNG; bash's RANDOM, reseeded per case, repeats its low
# bits from one seed to the next). rnd VAR N: VAR = 0..N-1. pick VAR WORD...: one of the words.
rng_seed() { RNG=$(($1 * 1000003 + $2)); }
rnd() {
	local z
	RNG=$((RNG + 0x9E3779B97F4A7C15))
	z=$(((RNG ^ ((RNG >> 30) & 0x3FFFFFFFF)) * 0xBF58476D1CE4E5B9))
	z=$(((z ^ ((z >> 27) & 0x1FFFFFFFFF)) * 0x94D049BB133111EB))
	z=$((z ^ ((z >> 31) & 0x1FFFFFFFF)))
	printf -v "$1" %d $((((z >> 1) & 0x7FFFFFFFFFFFFFFF) % $2))
}
pick() {
	local i_ var_=$1
	shift
	rnd i_ $#
	i_=$((i_ + 1))
	printf -v "$var_" %s "${!i_}"
}
alive() { local st; [ -r "/proc/$1/stat" ] && read -r _ _ st _ <"/proc/$1/stat" 2>/dev/null && [ "$st" != Z ]; }
proc_tree() {
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do proc_tree "$c"; done
}
# has_open PATH: a process of the run has PATH open.
has_open() {
	local p f
	for p in $(proc_tree "$RUN_PID"); do
		for f in /proc/"$p"/fd/*; do [ "$(readlink "$f" 2>/dev/null)" = "$1" ] && return 0; done
	done
	return 1
}
rows_ge() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }
# poll_until SECONDS CMD...: CMD every 5 ms until it holds (0), the run ends (2) or time is up (1).
poll_until() {
	local end=$(($(now_ms) + $1 * 1000))
	shift
	until "$@"; do
		alive "$RUN_PID" || return 2
		[ "$(now_ms)" -lt "$end" ] || return 1
		sleep 0.005
	done
}
# launch CMD...: start the tool under test in the background (RUN_PID), output in $C/out, $C/err.
launch() { "$@" >"$C/out" 2>"$C/err" & RUN_PID=$!; TREE=(); }
# finish_run SECONDS: wait for the run to end (RC); past SECONDS, kill it and set HUNG.
finish_run() {
	local end=$(($(now_ms) + $1 * 1000)) p
	HUNG=0
	while alive "$RUN_PID" && [ "$(now_ms)" -lt "$end" ]; do
		mapfile -t TREE < <(proc_tree "$RUN_PID")
		sleep 0.01
	done
	if alive "$RUN_PID"; then
		HUNG=1
		for p in $(proc_tree "$RUN_PID"); do kill -KILL "$p" 2>/dev/null; done
	fi
	wait "$RUN_PID" 2>/dev/null
	RC=$?
	RUN_PID=
}
# orphans_gone SECONDS: every process the run had (workers included) has ended.
orphans_gone() {
	local end=$(($(now_ms) + $1 * 1000)) p left
	while :; do
		left=0
		for p in ${TREE[@]+"${TREE[@]}"}; do alive "$p" && left=1; done
		[ $left -eq 0 ] && return 0
		[ "$(now_ms)" -lt "$end" ] || break
		sleep 0.01
	done
	for p in ${TREE[@]+"${TREE[@]}"}; do kill -KILL "$p" 2>/dev/null; done
	return 1
}
# first_err FILE: its first line, paths and numbers generalised (so messages count as one class).
first_err() {
	head -n 1 "$1" 2>/dev/null | sed -e "s|$SCR/[^ :,)]*|PATH|g" -e 's/[0-9][0-9]*/N/g' | cut -c 1-110
}
record() { # record PART OUTCOME DETAIL
	local key="$1|$2"
	COUNT[$key]=$((${COUNT[$key]:-0} + 1))
	[[ $2 == BUG* ]] && BUGS=$((BUGS + 1))
	printf '%s %s | %s | %s\n' "$CASE_ID" "$CASE_DESC" "$2" "$3" >>"$LOG"
	if [[ $2 == BUG* ]] || [ "$VERBOSE" -eq 1 ]; then
		printf '%s %s | %s | %s\n' "$CASE_ID" "$CASE_DESC" "$2" "$3"
	fi
}
# crashed STDERR: the run died of SIGABRT, SIGBUS, SIGFPE or SIGSEGV, or a sanitizer reported.
SANITIZER_RE='ERROR: (Address|Leak|Memory|Thread|UndefinedBehavior)Sanitizer|runtime error:'
crashed() {
	case $RC in 134 | 135 | 136 | 139) return 0 ;; esac
	grep -qE "$SANITIZER_RE" "$1" 2>/dev/null
}
# json_vs_rc FILE RC: "" when the JSON (if any) parses and its status says what RC says.
json_vs_rc() {
	local st
	[ -e "$1" ] || return 0
	st=$(jq -er .status "$1" 2>/dev/null) || { echo "BUG json-unparsable"; return; }
	# exit 0: "ok" or "interrupted" (a signal ends a run with 0); any other exit: neither
	case "$2:$st" in
	0:ok | 0:interrupted) ;;
	0:* | *:ok | *:interrupted) echo "BUG json-status-vs-exit (status $st, exit $2)" ;;
	esac
}

# --- shared fixtures -----------------------------------------------------------------------------
# The victim: root's directory, laid out so that every attacker path below resolves into it after
# a swap (x -> ../victim: x/vol, x/d, x/f, x/o; and a world-writable file, the only kind of root's
# files that `nobody` may hard-link under fs.protected_hardlinks).
make_fixtures() {
	local V=$SCR/tmpl/victim
	mkdir -p "$V/d" "$V/o" && chmod -R 755 "$SCR/tmpl"
	head -c 3M /dev/urandom >"$SCR/victim-image"
	"$DE" format "$V/vol" --size 4MiB -q && "$DE" import "$V/vol" "$SCR/victim-image" -q || return 1
	head -c 256K /dev/urandom >"$V/d/dedisbench.0"
	head -c 256K /dev/urandom >"$V/d/dedisbench.1"
	echo 'root notes' >"$V/d/notes.txt"
	head -c 2M /dev/urandom >"$V/f"
	head -c 256K /dev/urandom >"$V/shared" && chmod 666 "$V/shared"
	echo 'secret' >"$V/secret" && chmod 600 "$V/secret"
	echo 'keep' >"$V/o/keep.txt"
	head -c 64K /dev/urandom >"$V/dedisbench.0"
	$CHECK manifest "$V" >"$SCR/victim.manifest" || return 1
	# For the engine's own commands: an image to import (large enough to take a while), and a
	# sparse file dedisgen reads for about a second.
	head -c 96M /dev/urandom >"$SCR/image"
	truncate -s 768M "$SCR/sparse"
}

# victim_check: "" if $C/victim is as made, else what changed (deleted / created / modified).
victim_check() {
	local now
	now=$($CHECK manifest "$C/victim" 2>&1)
	[ "$now" = "$(cat "$SCR/victim.manifest")" ] && return 0
	diff <(cut -d' ' -f1 "$SCR/victim.manifest") <(cut -d' ' -f1 <<<"$now") | awk '
		/^</ { del = del " " $2 } /^>/ { add = add " " $2 }
		END { if (del != "") printf "deleted:%s; ", del; if (add != "") printf "created:%s; ", add }'
	diff <(sort "$SCR/victim.manifest") <(sort <<<"$now") | awk '/^>/ { print $2 }' |
		sort | comm -12 - <(cut -d' ' -f1 "$SCR/victim.manifest" | sort) | tr '\n' ' ' |
		sed 's/^./modified: &/'
}

# new_case PART K DESC: a fresh case directory $C (root's part $R, the attacker's $A, a victim).
new_case() {
	CASE_ID="$1:$2" CASE_DESC=$3
	C=$SCR/case
	rm -rf "$C" && mkdir -p "$C/root" && chmod 755 "$C"
	R=$C/root A=$C/attacker
	cp -a "$SCR/tmpl/victim" "$C/victim"
	mkdir "$A" && chown nobody:nogroup "$A" && as_nobody mkdir "$A/x"
	rm -f "$DEDIS_LOCK_DIR"/*
}

# --- path swaps ----------------------------------------------------------------------------------
# swap_setup KIND: the command (CMD), when the run is under way (EARLY: a condition; RUNNING: one
# a time-series row later) and what `nobody` then does in $A (ATTACK).
swap_setup() {
	local kind=$1 t='' json=$R/r.json out=$R/o
	case $kind in
	eng-*) t=engine:$A/x/vol EARLY=(test -e "$A/x/vol/superblock") ;;
	dir-*) as_nobody mkdir "$A/x/d" && t=$A/x/d EARLY=(test -e "$A/x/d/dedisbench.$WN") ;;
	file-*) truncate -s $((PROCS * 4))M "$A/x/f" && t=$A/x/f EARLY=(has_open "$A/x/f") ;;
	out-*) mkdir "$R/t" && t=$R/t json=$A/x/r.json out=$A/x/o EARLY=(test -e "$A/x/o") ;;
	esac
	local reports=()
	[[ $kind == out-* ]] && reports=(--dist-report "$A/x/dist-report" --access-report "$A/x/access-report"
		--ledger "$A/x/ledger")
	if [ "$kind" = eng-inner ]; then # a volume of nobody's own, files swapped inside it
		mkdir -m 1777 "$C/nlocks"
		DEDIS_LOCK_DIR=$C/nlocks as_nobody "$DE" format "$A/x/vol" --size $((PROCS * 4))MiB -q || return 1
		EARLY=(has_open_prefix "$A/x/vol/data")
	fi
	CMD=("$DB" --target "$t" --procs "$PROCS" --file-size 4MiB --access uniform --rate 400 --mode "$MODE"
		--quiet --json "$json" --output-dir "$out" ${KEEP:+--keep} "${reports[@]}")
	[ "$END" = time ] && CMD+=(--time 2s) || CMD+=(--time 30s)
	RUNNING=(rows_ge "$out/timeseries.csv" 2)
	case $kind in
	gen-parent)
		CMD=("$DG" scan "$SCR/sparse" -o "$A/x/dist.txt" --json "$A/x/g.json" -q) EARLY=(has_open "$SCR/sparse") ;;
	import-parent)
		"$DE" format "$A/x/vol" --size 96MiB -q || return 1
		CMD=("$DE" import "$A/x/vol" "$SCR/image" -q) EARLY=(has_open "$SCR/image") ;;
	esac
	[[ $kind == gen-* || $kind == import-* ]] && RUNNING=("${EARLY[@]}")
	case $kind in
	*-parent) ATTACK='mv x x.old && ln -s ../victim x' ;;
	eng-leaf) ATTACK='mv x/vol x/vol.old && ln -s ../../victim/vol x/vol' ;;
	eng-inner) ATTACK="ln -s ../../../victim/vol/$VF x/vol/.t && mv -T x/vol/.t x/vol/$VF" ;;
	dir-leaf) ATTACK='mv x/d x/d.old && ln -s ../../victim/d x/d' ;;
	dir-wsym) ATTACK="ln -s ../../../victim/d/dedisbench.$WN x/d/.t && mv -T x/d/.t x/d/dedisbench.$WN" ;;
	dir-whard) ATTACK="ln ../victim/shared x/d/.t && mv -T x/d/.t x/d/dedisbench.$WN" ;;
	file-lsym) ATTACK='ln -s ../../victim/f x/.t && mv -T x/.t x/f' ;;
	file-lhard) ATTACK='ln ../victim/shared x/.t && mv -T x/.t x/f' ;;
	out-leaf) ATTACK='mv x/o x/o.old && ln -s ../../victim/o x/o' ;;
	esac
}
has_open_prefix() {
	local p f
	for p in $(proc_tree "$RUN_PID"); do
		for f in /proc/"$p"/fd/*; do [[ $(readlink "$f" 2>/dev/null) == "$1"* ]] && return 0; done
	done
	return 1
}

swap_case() {
	local k=$1 kind when delay sdelay swapped=no cond damage js
	rng_seed "$SEED" $((k * 2))
	pick kind eng-parent eng-parent eng-leaf eng-inner dir-parent dir-leaf dir-wsym dir-whard \
		file-parent file-lsym file-lhard out-parent out-leaf gen-parent import-parent
	pick END time INT TERM
	pick when early running
	pick PROCS 1 2
	pick MODE write mixed
	pick VF journal lbnmap superblock state refs map dirty data.0 index.mem locks
	rnd delay 700 && rnd sdelay 500 && rnd WN "$PROCS" && rnd KEEP 4
	[ "$KEEP" -eq 0 ] && KEEP=1 || KEEP=
	[[ $kind == gen-* || $kind == import-* ]] && [ "$END" = time ] && END=natural
	new_case swap "$k" "$kind end=$END when=$when delay=${delay}ms procs=$PROCS mode=$MODE${KEEP:+ keep}"
	swap_setup "$kind" || { record swap "setup-failed" "$(first_err "$C/err")"; return; }
	launch "${CMD[@]}"
	if [ "$when" = early ]; then cond=("${EARLY[@]}"); else cond=("${RUNNING[@]}"); fi
	if poll_until 20 "${cond[@]}"; then
		sleep_ms "$delay"
		(cd "$A" && as_nobody sh -c "$ATTACK") 2>>"$C/attack.err" && swapped=yes
		if [[ $END == INT || $END == TERM ]] && alive "$RUN_PID"; then
			sleep_ms "$sdelay"
			kill -"$END" "$RUN_PID" 2>/dev/null
		fi
	fi
	finish_run 40
	orphans_gone 10 || HUNG=1
	damage=$(victim_check)
	js=$(json_vs_rc "$R/r.json" "$RC")
	if [ "$HUNG" -eq 1 ]; then
		record swap "BUG hang" "killed after 40 s"
	elif [ -n "$damage" ]; then
		record swap "BUG victim-$(grep -o 'deleted\|created\|modified' <<<"$damage" | sort -u | paste -sd+) [$kind]" \
			"$damage; exit $RC: $(first_err "$C/err") ${js:+($js)}"
	elif crashed "$C/err"; then
		record swap "BUG crash" "exit $RC: $(grep -m1 -E "$SANITIZER_RE" "$C/err" || first_err "$C/err")"
	elif [ -n "$js" ]; then
		record swap "$js" "exit $RC: $(first_err "$C/err")"
	else
		record swap "fine: victim intact, swapped=$swapped, exit $RC" "$(first_err "$C/err")"
	fi
}

# --- signal instants -----------------------------------------------------------------------------
# sig_setup KIND: CMD, the conditions (START: the tool is up; TARGET: its target is in use;
# RUNNING: a time-series row), and how long (ms) after them the instant may fall (SPAN).
sig_setup() {
	local t=
	case $1 in
	bench-dir) mkdir "$R/t" && t=$R/t TARGET=(test -e "$R/t/dedisbench.0") ;;
	bench-file) truncate -s $((PROCS * 4))M "$R/f" && t=$R/f TARGET=(has_open "$R/f") ;;
	bench-vol-new) t=engine:$R/vol TARGET=(test -e "$R/vol/superblock") ;;
	bench-vol-old)
		"$DE" format "$R/vol" --size $((PROCS * 4))MiB -q || return 1
		t=engine:$R/vol TARGET=(has_open_prefix "$R/vol/data") ;;
	eng-format) ;;
	eng-*)
		"$DE" format "$R/vol" --size 96MiB -q || return 1
		[ "$1" = eng-import ] || "$DE" import "$R/vol" "$SCR/image" -q || return 1
		[ "$1" = eng-gc ] && { "$DE" discard "$R/vol" 0 12288 -q || return 1; } ;;
	esac
	START=(alive "$RUN_PID") SPAN=1500
	case $1 in
	bench-*)
		CMD=("$DB" --target "$t" --procs "$PROCS" --file-size 4MiB --access uniform --rate 500 --mode "$MODE"
			--verify "$VERIFY" --time 3s --quiet --json "$R/r.json" --output-dir "$R/o" ${KEEP:+--keep})
		RUNNING=(rows_ge "$R/o/timeseries.csv" 2) ;;
	eng-format) CMD=("$DE" format "$R/vol" --size 4GiB -q) TARGET=(test -e "$R/vol") SPAN=40 ;;
	eng-import) CMD=("$DE" import "$R/vol" "$SCR/image" -q) TARGET=(has_open "$SCR/image") SPAN=500 ;;
	eng-gc) CMD=("$DE" gc "$R/vol" -q) TARGET=(has_open_prefix "$R/vol/") SPAN=150 ;;
	eng-fsck) CMD=("$DE" fsck "$R/vol" -q) TARGET=(has_open_prefix "$R/vol/") SPAN=200 ;;
	gen-scan) CMD=("$DG" scan "$SCR/sparse" -o "$R/dist.txt" --json "$R/g.json" -q) TARGET=(has_open "$SCR/sparse") SPAN=1200 ;;
	esac
	[[ $1 == bench-* ]] || RUNNING=("${TARGET[@]}")
}

# second_bench TARGET: a short write run on the same target is accepted (the lock is free).
second_bench() {
	"$DB" --target "$1" --procs "$PROCS" --file-size 4MiB --size 256KiB --quiet >/dev/null 2>"$C/err2" && return 0
	grep -q 'in use' "$C/err2" && echo "BUG lock-held after $SIG" && return 1
	echo "BUG second-run-refused after $SIG: $(first_err "$C/err2")"
}
# check_volume: the engine volume is consistent and holds only what the run wrote.
check_volume() {
	"$DE" fsck "$R/vol" -q >/dev/null 2>"$C/err2" || { echo "BUG fsck-after-$SIG: $(first_err "$C/err2")"; return; }
	"$DB" --target "engine:$R/vol" --procs "$PROCS" --file-size 4MiB --mode read --populate none \
		--verify final --keep --quiet >/dev/null 2>"$C/err2" ||
		echo "BUG verify-after-$SIG: $(first_err "$C/err2")"
}
# check_format KILLED: a format a signal reached leaves a whole volume or nothing (SIGINT, SIGTERM
# and SIGHUP wait for it to end); one SIGKILL cut short is either recognised by the next format
# and cleared, or a whole volume.
check_format() {
	[ -e "$R/vol" ] || return 0
	"$DE" fsck "$R/vol" -q >/dev/null 2>"$C/err2" && return 0
	[ "$1" -eq 1 ] && "$DE" format "$R/vol" --size 4GiB -q 2>>"$C/err2" && return 0
	echo "BUG half-made volume after $SIG during format: $(first_err "$C/err2")"
}
# check_engine_cmd KIND: after an engine command: fsck, the export block by block, a second run.
check_engine_cmd() {
	local want=() again
	"$DE" fsck "$R/vol" -q >/dev/null 2>"$C/err2" || { echo "BUG fsck-after-$SIG: $(first_err "$C/err2")"; return; }
	case $1 in
	eng-import) want=(--allow-zero) again=("$DE" import "$R/vol" "$SCR/image" -q) ;;
	eng-gc) want=(--zero-below 12288) again=("$DE" gc "$R/vol" -q) ;;
	eng-fsck) again=("$DE" fsck "$R/vol" -q) ;;
	esac
	"$DE" export "$R/vol" "$R/export" -q 2>"$C/err2" || { echo "BUG export-after-$SIG: $(first_err "$C/err2")"; return; }
	$CHECK blocks "$R/export" "$SCR/image" "${want[@]}" >"$C/err2" || { echo "BUG content-after-$SIG: $(cat "$C/err2")"; return; }
	rm -f "$R/export"
	"${again[@]}" >/dev/null 2>"$C/err2" || { echo "BUG second-run-after-$SIG: $(first_err "$C/err2")"; return; }
	if [ "$1" = eng-import ]; then
		"$DE" export "$R/vol" "$R/export" -q && $CHECK blocks "$R/export" "$SCR/image" >"$C/err2" ||
			echo "BUG reimport-content-after-$SIG: $(cat "$C/err2")"
		rm -f "$R/export"
	fi
}

# sig_outcome KIND SENT: the first thing wrong after the run (empty: fine).
sig_outcome() {
	local kind=$1 sent=$2 killed=0 left
	[ "$sent" = yes ] && [ "$SIG" = KILL ] && killed=1
	# dedisengine promises nothing on a signal but for format: ended by it, it is like a SIGKILL.
	[ "$sent" = yes ] && [[ $kind == eng-* ]] && [ "$RC" -eq $((128 + $(kill -l "$SIG"))) ] && killed=1
	[ "$HUNG" -eq 0 ] || { echo "BUG hang (killed after 40 s)"; return; }
	crashed "$C/err" && { echo "BUG crash exit $RC: $(grep -m1 -E "$SANITIZER_RE" "$C/err" || first_err "$C/err")"; return; }
	if [[ $kind == bench-* ]]; then
		[ $killed -eq 1 ] || [ "$RC" -eq 0 ] || { echo "BUG exit $RC after $SIG (sent=$sent): $(first_err "$C/err")"; return; }
		[ $killed -eq 1 ] || [ -e "$R/r.json" ] || { echo "BUG no JSON after $SIG"; return; }
		left=$(json_vs_rc "$R/r.json" "$RC")
		[ $killed -eq 1 ] && [[ $left == *status-vs-exit* ]] && left=
		[ -z "$left" ] || { echo "$left"; return; }
	elif [ "$kind" = gen-scan ]; then
		[ ! -e "$R/g.json" ] || jq -e . "$R/g.json" >/dev/null 2>&1 || { echo "BUG json-unparsable (dedisgen)"; return; }
		if [ $killed -eq 0 ] && [ "$RC" -ne 0 ]; then
			[ ! -e "$R/g.json" ] && [ ! -e "$R/dist.txt" ] || { echo "BUG dedisgen exit $RC wrote its outputs"; return; }
		elif [ $killed -eq 0 ]; then
			[ -s "$R/g.json" ] && [ -s "$R/dist.txt" ] || { echo "BUG dedisgen exit 0 without its outputs"; return; }
		fi
	fi
	if [ $killed -eq 0 ]; then
		left=$(cd "$R" && find . -name '*.tmp*' | head -3 | tr '\n' ' ')
		[ -z "$left" ] || { echo "BUG temp files left after $SIG: $left"; return; }
		[ -z "$(ls -A "$DEDIS_LOCK_DIR")" ] || { echo "BUG lock file left after $SIG"; return; }
		[ "$kind" = bench-dir ] && [ -z "$KEEP" ] && [ -n "$(ls -A "$R/t")" ] &&
			{ echo "BUG files left in the target after $SIG: $(ls -A "$R/t" | head -3 | tr '\n' ' ')"; return; }
		[ "$kind" = bench-vol-new ] && [ -z "$KEEP" ] && [ -e "$R/vol" ] &&
			{ echo "BUG the volume the run formatted was left after $SIG"; return; }
	fi
	case $kind in
	bench-dir) second_bench "$R/t" ;;
	bench-file) second_bench "$R/f" ;;
	bench-vol-*) if [ -e "$R/vol" ]; then check_volume; else second_bench "engine:$R/vol"; fi ;;
	eng-format) check_format "$killed" ;;
	eng-*) check_engine_cmd "$kind" ;;
	esac
}

sig_case() {
	local k=$1 kind when delay sent=no bad cond
	rng_seed "$SEED" $((k * 2 + 1))
	pick kind bench-dir bench-dir bench-file bench-file bench-vol-new bench-vol-new bench-vol-old \
		eng-import eng-gc eng-fsck eng-format eng-format gen-scan
	pick SIG INT TERM HUP KILL
	pick when start target running
	pick PROCS 1 2
	pick MODE write mixed
	# a write run has no reads to check online; final re-reads the target after the run (a phase more)
	if [ "$MODE" = write ]; then pick VERIFY none final; else pick VERIFY none online both; fi
	rnd delay 1000000 && rnd KEEP 4
	[ "$KEEP" -eq 0 ] && KEEP=1 || KEEP=
	[[ $kind == bench-* ]] || [ "$when" != running ] || when=target
	[ "$kind" != eng-format ] || when=target # a format lasts some 50 ms from its directory on
	new_case signal "$k" "$kind sig=$SIG when=$when"
	sig_setup "$kind" || { record signal "setup-failed" "$kind"; return; }
	delay=$((delay % SPAN))
	CASE_DESC+=" delay=${delay}ms"
	[[ $kind == bench-* ]] && CASE_DESC+=" procs=$PROCS mode=$MODE verify=$VERIFY${KEEP:+ keep}"
	launch "${CMD[@]}"
	case $when in start) cond=("${START[@]}") ;; target) cond=("${TARGET[@]}") ;; running) cond=("${RUNNING[@]}") ;; esac
	if poll_until 20 "${cond[@]}"; then
		sleep_ms "$delay"
		alive "$RUN_PID" && kill -"$SIG" "$RUN_PID" 2>/dev/null && sent=yes
	fi
	finish_run 40
	orphans_gone 10 || HUNG=1
	bad=$(sig_outcome "$kind" "$sent")
	if [ -n "$bad" ]; then
		record signal "$(cut -d: -f1 <<<"$bad" | cut -c 1-60) [$kind]" "$bad (exit $RC: $(first_err "$C/err"))"
	else
		[ "$sent" = yes ] && sent="$SIG sent" || sent="ended before the instant"
		record signal "fine: ${kind%%-*}, $sent, exit $RC" "$(first_err "$C/err")"
	fi
}

# --- main ----------------------------------------------------------------------------------------
summary() {
	local key
	echo
	printf '%-8s %6s  %s\n' part cases outcome
	for key in "${!COUNT[@]}"; do printf '%-8s %6d  %s\n' "${key%%|*}" "${COUNT[$key]}" "${key#*|}"; done |
		sort -k1,1 -k2,2nr
	echo "seed $SEED, build $BUILD: $SWAPS_RUN path swaps, $SIGNALS_RUN signal instants, $BUGS BUG case(s)"
	[ "$BUGS" -eq 0 ] || echo "rerun one case: $0 --build $BUILD --seed $SEED --only swap:K (or signal:K) --verbose"
}

make_fixtures || { echo "adversarial-sweep: cannot build the fixtures" >&2; exit 2; }
# bash reports each child a signal ended ("Killed"): that is the point here, so its stderr goes;
# the sweep's own lines go to the saved one.
exec 3>&2 2>/dev/null
SWAPS_RUN=0 SIGNALS_RUN=0 T0=$(now_ms)
if [ -n "$ONLY" ]; then
	VERBOSE=1
	case $ONLY in
	swap:*) swap_case "${ONLY#swap:}"; SWAPS_RUN=1 ;;
	signal:*) sig_case "${ONLY#signal:}"; SIGNALS_RUN=1 ;;
	*) echo "adversarial-sweep: --only swap:K or signal:K" >&3; exit 2 ;;
	esac
else
	for ((k = 0; k < SWAPS; k++)); do
		swap_case "$k"; SWAPS_RUN=$((SWAPS_RUN + 1))
		((SWAPS_RUN % 25 == 0)) && echo "# $SWAPS_RUN path swaps, $BUGS BUG so far, $((($(now_ms) - T0) / 1000)) s" >&3
	done
	for ((k = 0; k < SIGNALS; k++)); do
		sig_case "$k"; SIGNALS_RUN=$((SIGNALS_RUN + 1))
		((SIGNALS_RUN % 25 == 0)) && echo "# $SIGNALS_RUN signal instants, $BUGS BUG so far, $((($(now_ms) - T0) / 1000)) s" >&3
	done
fi
summary
echo "took $((($(now_ms) - T0) / 1000)) s"
[ -z "$KEEP_LOG" ] || cp "$LOG" "$KEEP_LOG"
[ "$BUGS" -eq 0 ]
