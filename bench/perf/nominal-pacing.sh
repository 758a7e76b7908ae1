#!/bin/bash
# nominal-pacing.sh - how well a nominal (open-loop) run keeps its rate: -n RATE for SECONDS on a
# directory target, then the achieved rate, the operations due and not issued (missed), and the
# spread of each full 1 s row of the time series. Moved out of make check: on a busy machine a
# worker that is not scheduled falls behind, whatever the code does (make check asserts the
# counts: issued + missed = due, never ahead of the schedule).
#
# Run by hand, on a quiet machine (SECONDS + a few):
#   DEDISBENCH=/path/to/dedisbench bench/perf/nominal-pacing.sh
# Knobs (environment): DEDISBENCH, DIR (/var/tmp), RATE (500), SECONDS_RUN (10), PROCS (2),
# TOLERANCE_PCT (2 for the whole run, 5x that for one row).
# Prints the figures and PASS/BELOW; exits 0 whatever the figures (SKIP without tools).
set -euo pipefail

DIR=${DIR:-/var/tmp}
RATE=${RATE:-500}
SECONDS_RUN=${SECONDS_RUN:-10}
PROCS=${PROCS:-2}
TOLERANCE_PCT=${TOLERANCE_PCT:-2}

# shellcheck source=bench/perf/lib.sh
. "$(dirname "$0")/lib.sh"
perf_prologue

WORK=$(mktemp -d "$DIR/nominal-pacing.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir "$WORK/t"
"$DB" --target "$WORK/t" --procs "$PROCS" --file-size 4MiB --sync none --quiet -w --access uniform \
	-n "$RATE" --time "${SECONDS_RUN}s" --json "$WORK/r.json" --output-dir "$WORK/o"
achieved=$(jq -r .rate.achieved "$WORK/r.json")
missed=$(jq -r .rate.missed "$WORK/r.json")
verdict=$(awk -v a="$achieved" -v r="$RATE" -v p="$TOLERANCE_PCT" -v m="$missed" \
	'BEGIN { d = a - r; if (d < 0) d = -d; print (d <= r * p / 100 && m == 0) ? "PASS" : "BELOW" }')
echo "nominal $RATE ops/s for $SECONDS_RUN s: achieved $achieved ops/s, $missed missed (target: +-$TOLERANCE_PCT %, 0 missed) $verdict"
# every full 1 s row within 5 x the tolerance of RATE (the last, partial row is not judged)
awk -F, -v r="$RATE" -v p="$((5 * TOLERANCE_PCT))" -v end="$SECONDS_RUN" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; prev = 0; next }
	{ span = $1 - prev; prev = $1 }
	span >= 0.9 && $1 <= end + 0.2 { n = $col["read_ops"] + $col["write_ops"]; rows++
		lo = r * span * (1 - p / 100); hi = r * span * (1 + p / 100)
		if (n < lo || n > hi) { bad++; printf "  row ending %s s: %d ops\n", $1, n } }
	END { printf "time series: %d full rows, %d outside +-%d %% %s\n", rows, bad, p, bad ? "BELOW" : "PASS" }' \
	"$WORK/o/timeseries.csv"
