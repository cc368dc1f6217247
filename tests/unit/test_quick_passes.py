"""CrystalDiskMark's passes: `quick --passes N` measures each test N times in a row; the grid gives each test's
best pass or the mean of its passes (`--pass-stat`), says which, and the plan (and so the ETA) counts every pass."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from ssdlab.report import cdm
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, TestPoint, Workload
from ssdlab.results.request import RunRequest
from ssdlab.results.store import load_run
from ssdlab.results.tags import PointTags

DATA = Path(__file__).parent.parent / "data" / "runs"


def _pass(pid: str, mbps: float, mean_us: float, n: int, status: str = "ok") -> PointResult:
    point = TestPoint(id=pid, label=pid, workload=Workload(rw="read", bs=1 << 20, iodepth=8),
                      group="SEQ1M Q8T1", tags=PointTags.of(direction="read", access="seq"))
    lat = LatencyStats("clat", n, 1.0, 2.0 * mean_us * 1000, mean_us * 1000, 1.0, {})
    d = DirectionStats(iops=mbps, bw_bytes=mbps * 1e6, io_bytes=n << 20, total_ios=n, runtime_ms=1000, clat=lat)
    m = Measurement(engine="fio", engine_version="fio-3.33", directions={"read": d})
    return PointResult(point, status, "s", "f", m if status == "ok" else None)  # type: ignore[arg-type]


PASSES = [_pass("01-p1", 3000.0, 100.0, 3000), _pass("01-p2", 3300.0, 90.0, 3300), _pass("01-p3", 2700.0, 110.0, 2700)]


def test_the_best_pass_is_the_one_with_the_most_mb_per_second_with_its_own_iops_and_latency() -> None:
    f = cdm.figures(PASSES, "best")
    assert f is not None
    assert (f.mbps, f.iops, f.mean_us, f.anchor, f.passes) == (3300.0, 3300.0, pytest.approx(90.0), "01-p2", 3)


def test_the_mean_averages_mb_per_second_and_iops_and_weighs_latency_by_ios() -> None:
    f = cdm.figures(PASSES, "mean")
    assert f is not None
    assert f.mbps == pytest.approx(3000.0)
    assert f.iops == pytest.approx(3000.0)
    assert f.mean_us == pytest.approx((100 * 3000 + 90 * 3300 + 110 * 2700) / 9000)  # over all their I/Os
    failed = [*PASSES[:2], _pass("01-p3", 0, 0, 0, status="failed")]
    cell = cdm._cell(failed, "mean", 3300.0, 3)
    assert "(2 of 3 passes)" in cell.detail  # a pass that failed is said, not averaged as a zero
    assert cdm.figures([_pass("x", 0, 0, 0, status="failed")], "best") is None


def _run_with(stat: str | None, passes: int) -> Any:
    run = load_run(DATA / "schema2" / "quick-file")
    opts = {"passes": passes} | ({"pass_stat": stat} if stat else {})
    points = []
    for r in run.points:  # each point as `passes` passes, the later ones at a tenth more MB/s each
        for k in range(1, passes + 1):
            m = r.measurement
            assert m is not None
            dirs = {name: dataclasses.replace(d, bw_bytes=d.bw_bytes * (1 + 0.1 * (k - 1)))
                    for name, d in m.directions.items()}
            points.append(dataclasses.replace(r, point=dataclasses.replace(r.point, id=f"{r.point.id}-p{k}"),
                                              measurement=dataclasses.replace(m, directions=dirs)))
    return dataclasses.replace(run, points=tuple(points), options=RunRequest.from_dict(
        {**run.options.to_dict(), "suite_options": {**run.options.suite_options, **opts}}))


def test_the_grid_says_which_and_shows_it() -> None:
    best = str(cdm.grid(_run_with(None, 3)))
    assert "Read MB/s (best of 3)" in best
    assert "its best pass (highest MB/s)" in best
    assert re.findall(r"href='#pt-([^']+)'", best)[0].endswith("-p3")  # the fastest pass, linked
    mean = str(cdm.grid(_run_with("mean", 3)))
    assert "Read MB/s (mean of 3)" in mean
    assert "the mean of its passes" in mean
    one = str(cdm.grid(load_run(DATA / "schema2" / "quick-file")))  # a run of one pass: as before
    assert "best of" not in one
    assert "passes" not in one


def test_passes_are_planned_counted_and_checked(cli: Any) -> None:
    res = cli("plan", "quick", "--target", "null", "--passes", "3", "--runtime", "1")
    assert res.code == 0, res.err
    assert "24 points" in res.out  # 8 tests x 3 passes: the plan and its ETA count every pass
    assert "04-rnd4k-q1t1-read-p3" in res.out
    assert "passes: each test runs 3 times in a row; the report's grid gives its best pass" in res.out
    mean = cli("plan", "quick", "--target", "null", "--passes", "2", "--pass-stat", "mean")
    assert "the mean of its passes" in mean.out
    one = cli("plan", "quick", "--target", "null")
    assert "8 points" in one.out
    assert "01-seq1m-q8t1-read " in one.out  # one pass: the ids of every earlier run
    bad = cli("plan", "quick", "--target", "null", "--passes", "12", traceback=False)
    assert bad.code == 2
    assert "--passes 12: give 1 to 9" in bad.err
    wrong = cli("plan", "quick", "--target", "null", "--pass-stat", "median", traceback=False)
    assert wrong.code == 2
