"""PTS HIR (and XSR) end to end, scaled: on the simulator, where the mechanism must show, and on a small
file with real fio, where the jobs must pass the write gate and the host idle must be measured."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ssdlab.store import load_run

pytestmark = pytest.mark.integration

CliRunner = Callable[..., Any]  # the `cli` fixture of tests/conftest.py


def test_hir_on_the_simulator_recovers_more_after_longer_waits(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "hir"
    # 2-s points scale every duration by 1/30: bursts of 1/6 s, waits of 1/6 ... 5/3 s
    r = cli("run", "pts-hir", "--target", "sim:tlc-4k?capacity=256MiB", "--runtime", "2", "--hir-bursts", "3",
            "--hir-precondition", "fixed", "--hir-pc-samples", "6", "--out", str(out), "-q")
    assert r.code == 0, r.err
    run = load_run(out)
    ev = next(e for e in run.events if e.get("kind") == "pts-hir")
    ratios = [ev["wait_states"][w]["vs_steady"] for w in ("5", "10", "15", "25", "50")]
    # background GC in the idle time: bursts run above the steady-state level, more so after longer waits
    assert ratios[0] > 1.02
    assert all(b >= 0.99 * a for a, b in itertools.pairwise(ratios)), ratios  # a superblock's grain
    assert ratios[-1] > ratios[0] + 0.03, ratios
    burst = run.result("hir-w50-b002")
    assert burst is not None
    assert burst.measurement is not None
    idle = burst.measurement.extra["sim"]["idle"]
    assert idle["victims"] > 0
    assert idle["free_after"] > idle["free_before"]
    html = (out / "report.html").read_text()
    for title in ("PTS HIR: set-up", "PTS HIR: preconditioning", "HIR: IOPS vs time, all wait states",
                  "HIR: IOPS vs wait state", "Mean burst IOPS"):
        assert title in html, title
    assert "SCALED, NOT spec-compliant" in html
    summary = json.loads((out / "pts" / "summary.json").read_text())["tests"]["hir"]
    assert [w["wait_s"] for w in summary["wait_states"]] == [5, 10, 15, 25, 50]
    assert (out / "pts" / "hir.csv").read_text().count("\n") == 1 + 5 * (3 + 3)


def test_hir_on_a_file_measures_the_idle(cli: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "hir"
    r = cli("run", "pts-hir", "--target", f"file:{tmp_path / 'dut.dat'}?size=16MiB", "--runtime", "1.2",
            "--tq", "2x4", "--hir-bursts", "2", "--hir-waits", "5,25", "--hir-precondition", "fixed",
            "--hir-pc-samples", "2", "--out", str(out), "-q", "--no-report")
    assert r.code == 0, r.err
    run = load_run(out)
    assert [p.point.id for p in run.points] == [
        "hir-0-purge", "hir-p0001", "hir-p0002", "hir-w05-b001", "hir-w05-b002", "hir-w05-c001", "hir-w05-c002",
        "hir-w25-b001", "hir-w25-b002", "hir-w25-c001", "hir-w25-c002"]
    waited = [p for p in run.points if p.point.idle_before_s > 0]
    assert [p.point.id for p in waited] == ["hir-w05-b002", "hir-w05-c001", "hir-w25-b002", "hir-w25-c001"]
    for p in waited:  # measured between the two fio runs' I/O (fio's own clocks), not assumed
        assert p.measurement is not None
        assert p.measurement.extra["idle_s"] is not None
        assert p.measurement.extra["idle_s"] > 0
    job = (out / "points" / "hir-w25-b002" / "job.fio").read_text()
    assert re.search(r"^rw=randwrite$", job, re.M)
    assert re.search(r"^numjobs=2$", job, re.M)
    assert re.search(r"^iodepth=4$", job, re.M)
    assert re.search(r"^runtime=100ms$", job, re.M)  # 5 s x 1.2/60
