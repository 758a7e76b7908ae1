#!/bin/bash
# replay-pacing.sh - how much of the timer's lateness a paced replay counts as latency: 400
# requests 1 ms apart replayed at --speed 1 (latency from each request's due time) against the
# same requests replayed as fast as possible (latency from issue). Moved out of make check: on a
# busy machine the wake-up is late by the scheduler's delay, whatever the code does.
#
# Run by hand, on a quiet machine (a few seconds):
#   DEDISBENCH=/path/to/dedisbench bench/perf/replay-pacing.sh
# Knobs (environment): DEDISBENCH, DIR (/var/tmp), REQUESTS (400), SLACK_US (25: the bound on
# paced p50 minus unpaced p50; the default 50 us timer slack and a plain sleep once added ~75 us).
# Prints both medians and PASS/BELOW; exits 0 whatever the figures (SKIP without tools).
set -euo pipefail

DIR=${DIR:-/var/tmp}
REQUESTS=${REQUESTS:-400}
SLACK_US=${SLACK_US:-25}

# shellcheck source=bench/perf/lib.sh
. "$(dirname "$0")/lib.sh"
perf_prologue
SYNTH=$(dirname "$0")/../../examples/fiu-synth.awk
[[ -f $SYNTH ]] || { echo "SKIP: no $SYNTH (run from a source tree)"; exit 0; }

WORK=$(mktemp -d "$DIR/replay-pacing.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
awk -v n="$REQUESTS" -v blocks=2000 -v seed=3 -f "$SYNTH" |
	awk '{ $1 = 1000000000 + NR * 1000000; print }' >"$WORK/paced.trace"
mkdir "$WORK/p1" "$WORK/p0"
"$DB" replay "$WORK/paced.trace" --target "$WORK/p1" --speed 1 -q -j "$WORK/p1.json"
"$DB" replay "$WORK/paced.trace" --target "$WORK/p0" -q -j "$WORK/p0.json"
paced=$(jq -r .totals.latency_us.p50 "$WORK/p1.json")
afap=$(jq -r .totals.latency_us.p50 "$WORK/p0.json")
verdict=$(awk -v p="$paced" -v a="$afap" -v s="$SLACK_US" 'BEGIN { print (p <= a + s) ? "PASS" : "BELOW" }')
echo "replay p50 latency: paced $paced us, as fast as possible $afap us (target: paced <= unpaced + $SLACK_US us) $verdict"
