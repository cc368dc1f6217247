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
# chromium is the browser Playwright drives in the `ssdlab serve` tests (Playwright's own download is not used);
# prometheus (and its promtool) scrapes `ssdlab serve` in tests/integration/test_serve_prometheus.py: the test runs
# its own server on a free loopback port, so the packaged service an install starts is stopped and disabled again
missing=()
command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
command -v nbdkit >/dev/null 2>&1 || missing+=(nbdkit)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
prometheus=0
command -v prometheus >/dev/null 2>&1 || prometheus=1
if [ "$(id -u)" -eq 0 ] && { [ "${#missing[@]}" -gt 0 ] || [ "$prometheus" -eq 1 ]; }; then
    apt-get update -qq
    if [ "${#missing[@]}" -gt 0 ]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    fi
    if [ "$prometheus" -eq 1 ]; then  # (without its recommended node exporter, another service)
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
        if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
            systemctl disable --now prometheus >/dev/null 2>&1 || true
        fi
    fi
fi
.venv/bin/ruff check .
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
