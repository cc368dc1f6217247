#!/usr/bin/env bash
# Set up ssdlab on a fresh Debian/Ubuntu machine: system packages (only those missing), a virtualenv in
# .venv, and ssdlab installed into it (with the dev tools when called with --dev). Idempotent.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { printf 'setup: %s\n' "$*" >&2; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

need=()
command -v fio >/dev/null 2>&1 || need+=(fio)
PY=${PYTHON:-python3}
command -v "$PY" >/dev/null 2>&1 || need+=(python3)
if command -v "$PY" >/dev/null 2>&1; then
    "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
        || { say "ssdlab needs Python >= 3.11 (found $("$PY" --version 2>&1)); set PYTHON=/path/to/python3.11"; exit 2; }
    "$PY" -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
    inc=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
    [ -f "$inc/Python.h" ] || need+=(python3-dev)
fi
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v blkid >/dev/null 2>&1 || need+=(util-linux)
if [ "${#need[@]}" -gt 0 ]; then
    say "installing system packages: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update -qq
    as_root apt-get install -y -qq "${need[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
    say "creating .venv"
    "$PY" -m venv .venv
fi
extra=""
[ "${1:-}" = "--dev" ] && extra="[dev]"
say "installing ssdlab${extra} into .venv"
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e ".${extra}"
say "ready: $(.venv/bin/ssdlab --version), $(fio --version)"
