#!/usr/bin/env bash
# Set up (see setup.sh) and run the whole test suite: lint, types, unit and integration tests.
# `--vm`: the VM tier instead (tests/vm): ssdlab in a QEMU guest against an emulated NVMe controller and SATA disk.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ "${1:-}" = "--vm" ]; then
    shift
    exec bash scripts/test-vm.sh "$@"
fi
bash scripts/setup.sh --dev
# packages the integration tests use, installed (with one apt-get update) only when missing: e2fsprogs for
# mkfs on loop devices; nbdkit serves the fault-injection tests' disks (fio's nbd engine, unix sockets only);
# openssh-server: the agent's socket forwarded through a real sshd (tests/integration/test_agent_ssh.py);
# chromium is the browser Playwright drives in the `ssdlab serve` tests (Playwright's own download is not used)
missing=()
command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
command -v nbdkit >/dev/null 2>&1 || missing+=(nbdkit)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ "$(id -u)" -eq 0 ] && [ "${#missing[@]}" -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
