#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite: lint, types, unit and integration tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh --dev
# packages the integration tests use (loop devices, mkfs, mount); installed only when missing
if [ "$(id -u)" -eq 0 ] && ! command -v mkfs.ext4 >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq e2fsprogs >/dev/null
fi
# nbdkit serves the fault-injection tests' disks (fio's nbd engine, unix sockets only)
if [ "$(id -u)" -eq 0 ] && ! command -v nbdkit >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nbdkit >/dev/null
fi
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
