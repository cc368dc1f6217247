#!/usr/bin/env bash
# Set up (see setup.sh) and run the main job on the built-in default target, the simulated D5-P5430 (sim:p5430);
# then print the QD1 4K random-read response-time distribution of PTS LAT's capture (a chart of it is written next
# to the report). The last line is the report path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
.venv/bin/ssdlab run pts --target sim:p5430 --runtime 0.5 "$@" | tee "$log" || rc=$?
last=$(tail -n 1 "$log")
capture="lat-h-rnd4k-100-0"  # PTS LAT: RND 4 KiB, T1Q1, 100 % reads
if [ -f "$last" ] && [ -d "$(dirname "$last")/points/$capture" ]; then
    echo
    echo "QD1 4K random reads (PTS LAT's response-time capture; the review measured p99 137 us, p99.99 178 us):"
    .venv/bin/ssdlab latency "$(dirname "$last")" "$capture" --direction read
    echo "$last"
fi
exit "$rc"
