#!/bin/bash
# run-afl.sh - the fuzzing long mode (opt-in, not part of make check): builds the harnesses with
# afl-clang-fast (AFL++'s persistent mode) and runs afl-fuzz on each in turn, one at a time, until
# it has done EXECS executions (or MINUTES have passed), then prints executions, speed, corpus,
# crashes and hangs per harness. Exit 1 if any harness crashed or hung.
#
#   tests/fuzz/run-afl.sh [HARNESS[=EXECS]...]   # distfile ini options gen-options engine-cli
#                                                # engine engine-bdb engine-bloom
#
# HARNESS=N gives that harness its own execution target, e.g. engine=9000000 engine-bdb=500000.
# Knobs (environment): EXECS (10000000 per harness), MINUTES (0 = no time bound; otherwise the
# run stops at whichever comes first), OUT (/var/tmp/dedis-afl: queues, crashes, stats),
# BUILD_AFL (build-afl in the source tree), JOBS (make -j, nproc by default), UPDATE_CORPUS=1 (afl-cmin each queue into
# tests/fuzz/corpus/, the corpora make check replays), AFL_ARGS (more afl-fuzz options).
# Needs afl++ (apt-get install afl++). Crashes land in $OUT/HARNESS/default/crashes: replay one
# with the plain build, e.g. build/tests/fuzz/fuzz_ini FILE (DEDIS_FUZZ_INDEX=bdb for engine-bdb).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
EXECS=${EXECS:-10000000}
MINUTES=${MINUTES:-0}
OUT=${OUT:-/var/tmp/dedis-afl}
BUILD_AFL=${BUILD_AFL:-$ROOT/build-afl}
HARNESSES=("$@")
((${#HARNESSES[@]})) || HARNESSES=(distfile ini options gen-options engine-cli engine)

command -v afl-fuzz >/dev/null && command -v afl-clang-fast >/dev/null ||
	{ echo "run-afl.sh: needs AFL++ (apt-get install afl++)" >&2; exit 2; }

# build: the harnesses (AFL's persistent loop) and the tools (for the options dictionaries)
mkdir -p "$BUILD_AFL" "$OUT"
if [ ! -f "$BUILD_AFL/Makefile" ]; then
	[ -x "$ROOT/configure" ] || (cd "$ROOT" && autoreconf -fi >/dev/null)
	(cd "$BUILD_AFL" && CC=afl-clang-fast "$ROOT/configure" -q)
fi
AFL_QUIET=1 make -s -C "$BUILD_AFL" -j"${JOBS:-$(nproc)}" dedisbench dedisgen dedisengine tests/fuzz/fuzz_distfile \
	tests/fuzz/fuzz_ini tests/fuzz/fuzz_options tests/fuzz/fuzz_gen_options tests/fuzz/fuzz_engine_cli \
	tests/fuzz/fuzz_engine >/dev/null

# the command-line dictionaries: every long option, from each tool's option table (--help)
for t in options:dedisbench gen-options:dedisgen engine-cli:dedisengine; do
	{
		cat "$ROOT/tests/fuzz/dict/${t%%:*}.dict"
		"$BUILD_AFL/${t#*:}" --help | grep -oE -- '--[a-z][a-z0-9-]+' | sort -u |
			awk '{ printf "opt%d=\"%s\"\n", NR, $0 }'
	} >"$OUT/${t%%:*}.dict"
done

# spec NAME: binary, corpus, dictionary, timeout (ms) and environment of a harness
spec() {
	ENVS=()
	case $1 in
	distfile) BIN=fuzz_distfile CORPUS=distfile DICT=$ROOT/tests/fuzz/dict/distfile.dict TMO=200 ;;
	ini) BIN=fuzz_ini CORPUS=ini DICT=$ROOT/tests/fuzz/dict/ini.dict TMO=200 ;;
	options) BIN=fuzz_options CORPUS=options DICT=$OUT/options.dict TMO=200 ;;
	gen-options) BIN=fuzz_gen_options CORPUS=gen-options DICT=$OUT/gen-options.dict TMO=200 ;;
	engine-cli) BIN=fuzz_engine_cli CORPUS=engine-cli DICT=$OUT/engine-cli.dict TMO=200 ;;
	engine | engine-mem) BIN=fuzz_engine CORPUS=engine-mem DICT= TMO=2000 ENVS=(DEDIS_FUZZ_INDEX=mem) ;;
	engine-bdb) BIN=fuzz_engine CORPUS=engine-bdb DICT= TMO=5000 ENVS=(DEDIS_FUZZ_INDEX=bdb) ;;
	engine-bloom) BIN=fuzz_engine CORPUS=engine-bloom DICT= TMO=5000 ENVS=(DEDIS_FUZZ_INDEX=bloom) ;;
	*) echo "run-afl.sh: unknown harness '$1' (distfile ini options gen-options engine-cli engine engine-bdb engine-bloom)" >&2; exit 2 ;;
	esac
}

stat_of() { # stat_of FILE KEY
	awk -F' *: *' -v k="$2" '$1 == k { print $2 }' "$1"
}

failed=0
summary=$OUT/summary.txt
printf '%-13s %12s %9s %9s %8s %8s %6s\n' harness execs seconds execs/s corpus crashes hangs | tee "$summary"
for arg in "${HARNESSES[@]}"; do
	h=${arg%%=*}
	target=$EXECS
	[ "$h" = "$arg" ] || target=${arg#*=}
	[[ $target =~ ^[1-9][0-9]*$ ]] || { echo "run-afl.sh: '$arg': executions must be a positive integer" >&2; exit 2; }
	spec "$h"
	rm -rf "${OUT:?}/$h"
	args=(-i "$ROOT/tests/fuzz/corpus/$CORPUS" -o "$OUT/$h" -t "$TMO" -E "$target")
	[ "$MINUTES" -gt 0 ] && args+=(-V $((MINUTES * 60)))
	[ -n "$DICT" ] && args+=(-x "$DICT")
	# shellcheck disable=SC2086
	env "${ENVS[@]}" AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 \
		AFL_SKIP_CRASHES=1 afl-fuzz "${args[@]}" ${AFL_ARGS:-} -- "$BUILD_AFL/tests/fuzz/$BIN" \
		>"$OUT/$h.log" 2>&1 || { echo "run-afl.sh: afl-fuzz on $h failed: $(tail -5 "$OUT/$h.log")" >&2; exit 1; }
	st=$OUT/$h/default/fuzzer_stats
	execs=$(stat_of "$st" execs_done)
	secs=$(($(stat_of "$st" last_update) - $(stat_of "$st" start_time)))
	crashes=$(stat_of "$st" saved_crashes)
	hangs=$(stat_of "$st" saved_hangs)
	printf '%-13s %12s %9s %9s %8s %8s %6s\n' "$h" "$execs" "$secs" "$(stat_of "$st" execs_per_sec)" \
		"$(stat_of "$st" corpus_count)" "$crashes" "$hangs" | tee -a "$summary"
	[ "$crashes" = 0 ] && [ "$hangs" = 0 ] || failed=1
	if [ "${UPDATE_CORPUS:-0}" = 1 ]; then
		tmp=$OUT/$h.cmin
		rm -rf "$tmp"
		env "${ENVS[@]}" AFL_QUIET=1 afl-cmin -i "$OUT/$h/default/queue" -o "$tmp" -t "$TMO" -- \
			"$BUILD_AFL/tests/fuzz/$BIN" >"$OUT/$h.cmin.log" 2>&1 ||
			{ echo "run-afl.sh: afl-cmin on $h failed: $(tail -3 "$OUT/$h.cmin.log")" >&2; exit 1; }
		rm -rf "$ROOT/tests/fuzz/corpus/$CORPUS"
		mkdir -p "$ROOT/tests/fuzz/corpus/$CORPUS"
		i=0
		for f in "$tmp"/*; do # short, stable names (AFL's are long and carry timings)
			cp "$f" "$ROOT/tests/fuzz/corpus/$CORPUS/$(printf 'min%04d' $i)"
			i=$((i + 1))
		done
		echo "  corpus/$CORPUS: $i inputs after afl-cmin" | tee -a "$summary"
	fi
done
rm -rf /dev/shm/dedis-fuzz-engine.* 2>/dev/null || true # volumes of harness processes AFL killed
exit $failed
