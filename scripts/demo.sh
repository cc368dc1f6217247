#!/usr/bin/env bash
# Set up (see setup.sh) and run the main job on the built-in default target; the last line is the report path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
exec .venv/bin/ssdlab run pts --target sim:p5430 --runtime 0.5 "$@"
