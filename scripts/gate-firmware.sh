#!/usr/bin/env bash
# Gate a candidate (a new firmware, drive or setting) on a baseline run, e.g. as a CI step:
#   scripts/gate-firmware.sh BASELINE_RUN CANDIDATE_RUN OUT_DIR [more `ssdlab compare` options]
# Runs are directories or catalog ids. Fails the candidate when IOPS drop by 5 % or more, or mean latency rises
# by 10 % or more, at any common point, significantly (add --strict to fail on any such change).
# Writes OUT_DIR/compare.html, compare.csv and junit.xml (for the CI's test report).
# Exit status: 0 accepted, 1 rejected (a regression), anything else: could not compare (bad input, unreadable run).
set -u
if [ $# -lt 3 ]; then
    echo "usage: $0 BASELINE_RUN CANDIDATE_RUN OUT_DIR [ssdlab compare options...]" >&2
    exit 2
fi
base=$1 candidate=$2 out=$3
shift 3
ssdlab compare "$base" "$candidate" --labels baseline,candidate --out "$out" --junit "$out/junit.xml" \
    --fail-on iops:-5% --fail-on lat_mean_us:+10% "$@"
status=$?
case $status in
    0) echo "gate: candidate accepted ($out/compare.html)" ;;
    1) echo "gate: candidate REJECTED: a significant regression ($out/compare.html)" ;;
    *) echo "gate: could not compare (exit $status)" ;;
esac
exit $status
