#!/bin/sh
# stress-vs-nominal.sh TARGET [DIST] - the same workload at peak load, then at half of the peak
# rate (open loop: latency counts from each operation's scheduled time), each with its plots.
set -eu
target=${1:?usage: stress-vs-nominal.sh TARGET [DIST]}
dist=${2:-personalfiles}
common="--target $target --dist $dist --procs 4 --file-size 1GiB --mode mixed --read-pct 70 --access nurand"

dedisbench $common --time 2m --json stress.json --output-dir stress --plot
peak=$(jq '.totals.iops | floor' stress.json 2>/dev/null || echo 2000)
rate=$((peak / 2))
dedisbench $common --time 2m --rate "$rate" --json nominal.json --output-dir nominal --plot
echo "stress: stress/*.png; nominal at $rate ops/s: nominal/*.png"
