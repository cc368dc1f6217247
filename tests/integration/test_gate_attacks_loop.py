"""Attempts to make ssdlab write what the write gate did not clear, on real loop devices: every device (or part of
one) a test does not mean to write is byte-for-byte intact afterwards (sha256 of its backing file before and
after). Needs root, util-linux and fio; every loop device, mount and process made here is removed afterwards.
The file-only cases are in tests/unit/test_gate_attacks.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import LoopFactory, MiB, run_cli
from ssdlab.errors import ExitCode

pytestmark = [pytest.mark.integration, pytest.mark.root]


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
