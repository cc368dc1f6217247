#!/usr/bin/env bash
# Set up (see setup.sh) and run the main job on the built-in default target; the last line is the report path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/ssdlab run quick --target "file:ssdlab-scratch.dat?size=1GiB" --runtime 5 "$@"
