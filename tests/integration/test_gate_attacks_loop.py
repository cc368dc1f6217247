"""Attempts to make ssdlab write what the write gate did not clear, on real loop devices: every device (or part of
one) a test does not mean to write is byte-for-byte intact afterwards (sha256 of its backing file before and
after). Needs root, util-linux and fio; every loop device, mount and process made here is removed afterwards.
The file-only cases are in tests/unit/test_gate_attacks.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import CliResult, LoopFactory, MiB, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration, pytest.mark.root]

WRITER = """name = "writer"
runtime_s = 0.5
[[matrix]]
name = "wr"
rw = "randwrite"
bs = "4k"
"""


def writer(tmp_path: Path) -> Path:
    path = tmp_path / "writer.toml"
    path.write_text(WRITER, encoding="utf-8")
    return path


def one_error(res: CliResult, code: ExitCode, *fragments: str) -> str:
    assert res.code == code, res.err
    errors = [ln for ln in res.err_lines if ln.startswith("ssdlab: error:")]
    assert len(errors) == 1, res.err
    for fragment in fragments:
        assert fragment in errors[0], errors[0]
    return errors[0]


# --- --capacity is the span consent names: --footprint/--misalign never push I/O past it --------------------------

def test_act_with_misalign_never_writes_past_capacity(loops: LoopFactory, tmp_path: Path) -> None:
    """ACT's streams used --footprint as their size and --misalign as their offset: on a device tested with
    --capacity they wrote up to --misalign bytes past the span the consent line named."""
    dev = loops.create("act", 64 * MiB)
    tail = dev.digest(32 * MiB)
    out = tmp_path / "out"
    res = run_cli("run", "act", "--target", dev.dev, "--capacity", "32MiB", "--footprint", "100%", "--misalign",
                  "8MiB", "--duration", "2", "--slice", "2", "--service-threads", "2", "--yes", "--out", out,
                  "--quiet", "--no-report")
    assert res.code in (ExitCode.OK, ExitCode.NEGATIVE), res.err
    assert "the first 32 MiB" in res.err  # what the consent line said would be destroyed
    assert dev.digest(32 * MiB) == tail  # nothing past --capacity was written
    jobs = [j.read_text(encoding="utf-8") for j in out.glob("points/act-1x-*/job.fio")]
    assert jobs
    assert all("offset=8388608" in j and "size=25165824" in j for j in jobs)  # 8 MiB shift, 24 MiB left


# --- a partition is part of its disk: what uses the whole disk uses the partition's blocks ------------------------

def test_a_partition_of_a_disk_backing_a_mounted_loop_is_refused(loops: LoopFactory, tmp_path: Path) -> None:
    """A loop device over the whole disk (mounted) does not claim the disk exclusively, and only the partition
    itself was checked: writing the partition overwrote the mounted filesystem's blocks."""
    if not shutil.which("partx"):
        pytest.skip("partx not installed (util-linux)")
    disk = loops.create("parted", 64 * MiB, partition=True)
    part = disk.partitions()[0]
    upper = loops.over(disk)
    loops.mkfs(upper)
    loops.mount(upper)
    before = disk.digest()
    out = tmp_path / "out"
    res = run_cli("run", writer(tmp_path), "--target", part, "--yes", "--destructive", "--out", out, traceback=False)
    one_error(res, ExitCode.UNSAFE, f"refusing to write to {part}: {disk.dev} (the disk {part} is a partition of) "
                                    f"is the backing device of {upper.dev} (mounted on {upper.mountpoint})",
              "no flag overrides this")
    assert not out.exists()
    assert disk.digest() == before
