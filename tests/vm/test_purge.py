"""Purge on a real NVMe stack: a scaled pts-iops purges with the best method the controller reports (format with
user-data erase: QEMU's controller offers no sanitize), and the erase is visible on the device; a controller that
refuses every method stops the run with one line and exit 3 before anything is measured."""

from __future__ import annotations

import re

import machine
import pytest
from vmlab import Lab, Run

MiB = 1024**2
MARKER = b"ssdlab-vm-purge-marker\n"  # written where the run's I/O never goes: only the purge can erase it


def _marker_at_end(lab: Lab, dev: str) -> int:
    """Write the marker over the last MiB of `dev` (O_DIRECT) and return that offset."""
    size = int(lab.tool("blockdev", "--getsize64", dev))
    offset = size - MiB
    script = (f"yes {MARKER.decode().strip()} | head -c {MiB} | "
              f"dd of={dev} bs=1M seek={offset // MiB} count=1 iflag=fullblock oflag=direct status=none")
    res = lab.vm.sh(script, timeout=60)
    assert res.rc == 0, res.describe()
    return offset


def _read(lab: Lab, dev: str, offset: int, length: int) -> bytes:
    res = lab.vm.sh(f"dd if={dev} bs=1M skip={offset // MiB} count={max(1, length // MiB)} iflag=direct "
                    "status=none | od -An -tx1 -v", timeout=60)
    assert res.rc == 0, res.describe()
    return bytes(int(x, 16) for x in res.stdout.split())[:length]


PTS_SCALED = ("--runtime", "0.5", "--pts-block-sizes", "4,64,1024", "--pts-mixes", "0/100,65/35,100/0",
              "--max-rounds", "5", "--active-range", "50", "--yes", "--no-report")


@pytest.fixture(scope="module")
def pts(lab: Lab) -> tuple[Run, int]:
    dev = lab.ns(1)
    offset = _marker_at_end(lab, dev)
    assert _read(lab, dev, offset, len(MARKER)) == MARKER
    run = lab.ssdlab("run", "pts-iops", "--target", dev, *PTS_SCALED, out="pts-iops", timeout=1500)
    return run, offset


def test_the_best_method_the_controller_reports_is_chosen(lab: Lab, pts: tuple[Run, int]) -> None:
    run, _ = pts
    ctrl = lab.json("nvme", "id-ctrl", lab.ctrl_a, "--output-format=json")
    assert ctrl["sanicap"] == 0  # no sanitize of any kind
    assert ctrl["oacs"] & 0x2  # Format NVM supported
    assert ctrl["fna"] & 0x3 == 0  # a format (and its erase) stays within the namespace
    doc = run.run_json()
    purges = [p for p in doc["points"] if p["point"]["phase"] == "purge"]
    assert len(purges) == 1
    assert purges[0]["status"] == "ok"
    assert purges[0]["reason"].startswith(f"purge nvme-format: nvme format {lab.ns(1)} --ses=1 (user data erase)")
    assert doc["points"][0]["point"]["phase"] == "purge"  # before any I/O


def test_the_format_erased_the_namespace(lab: Lab, pts: tuple[Run, int]) -> None:
    run, offset = pts
    assert run.rc in (0, 1), run.res.describe()
    data = _read(lab, lab.ns(1), offset, MiB)  # outside the 50 % active range: only the format touched it
    assert data == bytes(MiB)


def test_exit_code_and_report_as_on_any_device(lab: Lab, pts: tuple[Run, int]) -> None:
    run, _ = pts
    m = re.search(r"verdict: (\S+(?: \S+)*) \(exit code (\d+)\)", run.res.stderr)
    assert m, run.res.describe()
    assert int(m.group(2)) == run.rc
    assert run.out is not None
    page = lab.report(run)
    assert "purge nvme-format" in page
    assert "user data erase" in page
    assert "QEMU NVMe Ctrl" in page


def test_a_controller_that_refuses_every_method_stops_the_run(lab: Lab) -> None:
    dev = lab.ns(1, machine.CTRL_B)  # its backing image is read-only to QEMU: every erase fails on the device
    run = lab.ssdlab("run", "pts-iops", "--target", dev, *PTS_SCALED, out="pts-refused")
    assert run.rc == 3, run.res.describe()
    errors = run.error_lines()
    assert len(errors) == 1, run.res.describe()
    assert "Traceback" not in run.res.stderr
    assert "every method it offers was refused" in errors[0]
    assert "nvme-format:" in errors[0]
    assert "blkdiscard:" in errors[0]
    doc = run.run_json()
    assert doc["status"] == "failed"
    assert not [p for p in doc["points"] if p.get("measurement")]  # nothing measured, no steady state claimed
    assert not [e for e in doc.get("events", []) if e.get("kind") == "pts-steady-state"]
    # the device's own answer: it refuses both by hand too
    ctrl_b = lab.dev(f"ctrl:{machine.CTRL_B.serial}")
    assert lab.vm.run(["nvme", "format", dev, "--ses=1", "--force"], timeout=60).rc != 0
    assert lab.vm.run(["blkdiscard", "-f", dev], timeout=60).rc != 0
    assert lab.json("nvme", "id-ctrl", ctrl_b, "--output-format=json")["sanicap"] == 0
