"""The PTS block-device path on a loop device: purge by blkdiscard, write cache recorded as unknown."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ssdlab.results.store import load_run
from ssdlab.results.verdict import run_verdicts

pytestmark = [pytest.mark.integration, pytest.mark.root]

CliRunner = Callable[..., Any]  # the `cli` fixture of tests/conftest.py


@pytest.fixture
def loop_dev(tmp_path: Path) -> Iterator[str]:
    """A 32 MiB loop device over a sparse file, detached afterwards."""
    if not shutil.which("losetup"):
        pytest.skip("losetup not installed (apt-get install util-linux)")
    backing = tmp_path / "loop.img"
    with backing.open("wb") as fh:
        fh.truncate(32 * 1024**2)
    res = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True,
                         check=False, timeout=30)
    if res.returncode != 0 or not res.stdout.strip().startswith("/dev/loop"):
        pytest.skip(f"cannot create loop devices here: {res.stderr.strip() or res.stdout.strip()}")
    dev = res.stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True, check=False, timeout=30)


def test_pts_wsat_on_a_loop_device(cli: CliRunner, loop_dev: str, tmp_path: Path) -> None:
    r = cli("run", "pts-wsat", "--target", loop_dev, "--out", str(tmp_path / "run"), "--runtime", "0.3",
            "--wsat-fills", "1", "--tq", "1x8", "--yes", "-q", "--no-report")
    assert r.code == 0, r.err
    run = load_run(tmp_path / "run")
    assert run.status == "complete"
    purge = run.points[0]
    assert purge.point.phase == "purge"
    assert purge.reason.startswith(f"purge blkdiscard: discarded the whole device of {loop_dev}")
    assert "write cache: unknown (requested disabled" in purge.reason
    assert any("not a device" not in w and "NOT SNIA PTS compliant" in w for w in run.warnings)  # 0.3 s points


def test_pts_dirth_on_a_loop_device(cli: CliRunner, loop_dev: str, tmp_path: Path) -> None:
    r = cli("run", "pts-dirth", "--target", loop_dev, "--out", str(tmp_path / "run"), "--runtime", "0.1",
            "--max-rounds", "5", "--di-tc", "2,1", "--di-qd", "1", "--di-pc", "1", "--di-prewrite-minutes", "1",
            "--di-hist-minutes", "2", "--di-hist-prewrite-minutes", "1", "--yes", "-q", "--no-report")
    assert r.code in (0, 1), r.err  # steady state in 5 scaled rounds depends on the host; the verdict decides
    run = load_run(tmp_path / "run")
    assert r.code == run_verdicts(run).exit_code
    assert run.status == "complete"
    assert run.points[0].reason.startswith(f"purge blkdiscard: discarded the whole device of {loop_dev}")
    sweep = [p for p in run.points if p.point.tags.get("stage") == "sweep"]
    assert len(sweep) == 5 * 2
    assert all(p.status == "ok" for p in sweep)
    assert {(p.point.workload.numjobs, p.point.workload.iodepth) for p in sweep} == {(2, 1), (1, 1)}
    captures = [p for p in run.points if p.point.tags.get("stage") == "hist"]
    assert captures
    assert all(p.measurement is not None and p.measurement.directions for p in captures)
    assert any("DIRTH" in w and "is scaled, NOT SNIA PTS compliant" in w for w in run.warnings)
