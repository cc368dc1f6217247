"""The VM tier: ssdlab against a real NVMe stack (QEMU's NVMe controller and AHCI disk, Linux's nvme and ahci
drivers, nvme-cli, smartctl, fio) in one guest booted once per session (tests/vm/machine.py).

It runs only when asked: `bash scripts/test.sh --vm` runs `pytest tests/vm` with SSDLAB_VM=1. The default run never
enters this directory (pyproject's norecursedirs), and without SSDLAB_VM=1 its tests are not collected.

Fixtures:
  vm        (session) the booted Guest: vm.run(argv), vm.sh(script), vm.devices, vm.shared.
  lab       (session) the vmlab.Lab helper: lab.dev(name) names a device under test, lab.ssdlab(...) runs ssdlab in
            the guest with results on the guest's tmpfs copied to the shared directory, lab.report(run) renders a
            stored run on the host.
"""

from __future__ import annotations

import os
import resource
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import machine
from vmlab import GUEST_ENV, GUEST_RUNS, Lab

if os.environ.get("SSDLAB_VM") != "1":
    collect_ignore_glob = ["test_*.py"]


@pytest.fixture(scope="session")
def vm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[machine.Guest]:
    try:
        guest = machine.boot(tmp_path_factory.mktemp("vm"))
    except machine.VMError as exc:
        pytest.exit(f"VM tier: {exc}", returncode=3)

    def stop(signum: int, frame: object) -> None:  # `timeout` sends SIGTERM: the guest goes down with the tests
        guest.kill()
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield guest
    finally:
        signal.signal(signal.SIGTERM, previous)
        guest.close()


@pytest.fixture(scope="session")
def lab(vm: machine.Guest) -> Lab:
    vm.run(["mkdir", "-p", GUEST_RUNS, GUEST_ENV["MPLCONFIGDIR"], GUEST_ENV["XDG_CACHE_HOME"]], timeout=60)
    return Lab(vm)


def pytest_report_header(config: pytest.Config) -> str:
    return "VM tier: one QEMU guest per session (tests/vm/machine.py)"


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """How the guest ran: accelerator, boot time, kernel, and the CPU time of the whole session, QEMU included
    (its processes are waited for by then), which does not depend on what else the machine runs."""
    guest = machine.LAST_BOOT
    if guest is not None:
        own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
        terminalreporter.write_line(f"VM tier: {guest.accel} ({guest.accel_reason}); kernel {guest.kernel}; booted "
                                    f"in {guest.boot_seconds:.0f} s; CPU time of the session {cpu:.0f} s (QEMU "
                                    f"included); console log {guest.log}")
