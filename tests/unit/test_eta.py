"""Wall-clock ETAs: the estimator's arithmetic (priors, learning, simulator calibration) and the expected /
worst-case outlook of adaptive suites (PTS rounds and WSAT), checked against what the suites then run."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pts_points import pts_context, pts_result
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.run.eta import SIM_RATE_PRIOR, Estimator, Eta, shape
from ssdlab.sim.bounds import iops_bound
from ssdlab.sim.presets import resolve
from ssdlab.suites import get_suite
from ssdlab.suites.base import Outlook
from ssdlab.suites.pts import common
from ssdlab.suites.pts.tests import IOPS

MiB = 1024**2


def pt(pid: str, phase: str = "measure", **kw: Any) -> TestPoint:
    w: dict[str, Any] = {"rw": "randread", "bs": 4096, "runtime_s": 5.0}
    w.update(kw)
    return TestPoint(id=pid, label=pid, workload=Workload(**w), phase=phase)


def done(p: TestPoint, *, bw: float = 1e9, sim: dict[str, Any] | None = None) -> PointResult:
    d = DirectionStats(iops=bw / p.workload.bs, bw_bytes=bw, io_bytes=1, total_ios=1, runtime_ms=1)
    m = Measurement(engine="sim" if sim else "fio", engine_version="0", directions={"write": d},
                    extra={"sim": sim} if sim else {})
    return PointResult(point=p, status="ok", started="", finished="", measurement=m)


def test_fio_time_based_points_take_their_run_time_plus_the_measured_overhead() -> None:
    est = Estimator({"kind": "file"}, overhead_s=0.5)
    a, b = pt("a"), pt("b", bs=8192, iodepth=4)
    assert est.seconds(a) == 5.5  # the suite's overhead before anything ran
    est.observe(done(a), 5.2)
    est.observe(done(b), 5.4)
    est.observe(done(pt("c", bs=16384)), 5.3)
    assert est.overhead_s == pytest.approx(0.3)  # the median of what points took beyond their run time
    assert est.seconds(pt("d", bs=65536, runtime_s=60.0)) == pytest.approx(60.3)
    assert est.seconds(pt("a-again")) == 5.2  # the same shape ran before: its own time


def test_fio_size_based_points_use_the_measured_bandwidth() -> None:
    est = Estimator({"kind": "block", "capacity_bytes": 64 << 30})
    wipc = pt("wipc", "precondition", rw="write", bs=131072, runtime_s=None, io_bytes=8 << 30)
    assert est.seconds(wipc) == pytest.approx((8 << 30) / 500e6 + 0.5)  # 500 MB/s before any measurement
    est.observe(done(pt("w1", "precondition", rw="write", bs=131072, runtime_s=None, io_bytes=1 << 30),
                     bw=2e9), 1.0)
    assert est.seconds(wipc) == pytest.approx((8 << 30) / 2e9 + 0.5)
    whole = pt("fill", "precondition", rw="write", bs=131072, runtime_s=None)  # no size: the whole device
    assert est.seconds(whole) == pytest.approx((64 << 30) / 2e9 + 0.5)
    assert est.seconds(pt("p", "purge", rw="write")) == 10.0  # a device purge before one ran


def test_the_simulator_is_timed_by_simulated_ios_not_simulated_time() -> None:
    params = resolve("tlc-4k", {})
    est = Estimator({"kind": "sim", "sim": {"params": params}})
    read = pt("r", runtime_s=0.5, iodepth=32, numjobs=4)
    ios = iops_bound(params, read.workload) * 0.5
    assert est.simulated_ios(read) == pytest.approx(ios)
    assert est.seconds(read) == pytest.approx(ios / SIM_RATE_PRIOR + 0.01)
    paced = pt("q", runtime_s=2.0, rate_iops=1000, numjobs=2)
    assert est.simulated_ios(paced) == pytest.approx(2 * 1000 * 2.0)  # rate_iops is per job
    sized = pt("s", rw="write", runtime_s=None, io_bytes=256 * MiB, bs=131072)
    assert est.simulated_ios(sized) == 2048
    # a point that simulated 3 M I/Os at 6 M per second of the core, and took 0.6 s in all
    est.observe(done(pt("x", rw="randwrite"), sim={"simulated_ios": 3e6, "simulated_ios_per_wall_s": 6e6}), 0.6)
    assert est.sim_rate == pytest.approx(6e6)
    assert est.overhead_s == pytest.approx(0.1)
    assert est.seconds(sized) == pytest.approx(2048 / 6e6 + 0.1)


def test_outlook_sums_counts_and_keeps_the_next_point() -> None:
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    a, b = pt("a", runtime_s=1.0), pt("b", runtime_s=2.0)
    eta = est.estimate(Outlook(worst=((a, 1), (b, 10)), expected=((a, 1), (b, 3))))
    assert (eta.worst_s, eta.worst_points, eta.expected_s, eta.expected_points) == (21.0, 11, 7.0, 4)
    assert eta.next_s == 1.0
    assert eta.adaptive
    assert not est.estimate(Outlook.of([a, b])).adaptive


def test_eta_counts_down_within_a_point() -> None:
    eta = Eta(expected_s=100.0, worst_s=100.0, expected_points=10, worst_points=10, next_s=20.0)
    assert eta.after(5.0) == 95.0  # no progress figure: the prediction minus the time spent
    assert eta.after(30.0) == 80.0  # past its prediction: the later points only
    assert eta.after(10.0, 0.25) == pytest.approx(80.0 + 30.0)  # a quarter done in 10 s: 30 s to go


def test_shape_ignores_the_point_id_but_not_the_workload() -> None:
    assert shape(pt("iops-r01-x")) == shape(pt("iops-r02-x"))
    assert shape(pt("a")) != shape(pt("a", bs=8192))
    assert shape(pt("a")) != shape(pt("a", phase="precondition"))


def test_a_point_after_longer_host_idle_is_predicted_longer() -> None:
    """PTS HIR: the same workload after 5 s and after 15 s of idle are two shapes (the idle is part of the time)."""
    est = Estimator({"kind": "file"}, overhead_s=0.0)
    after5 = dataclasses.replace(pt("h5"), idle_before_s=5.0)
    after15 = dataclasses.replace(pt("h15"), idle_before_s=15.0)
    assert shape(after5) != shape(after15)
    est.observe(done(after5), 10.5)
    assert est.seconds(after5) == 10.5
    assert est.seconds(after15) == pytest.approx(20.5)
    eta = est.estimate(Outlook.of([after5, after15]))
    assert eta.expected_s == pytest.approx(31.0)


# ---------------------------------------------------------------- adaptive suites


@pytest.mark.parametrize("settles_at", [5, 9])
def test_pts_outlook_matches_what_runs_and_learns_the_rounds(settles_at: int) -> None:
    """Drive `pts` with synthetic results that settle from round `settles_at` on (steady state 4 rounds later)
    in every test. At every step the outlook's next point is the suite's next point and its worst case counts
    exactly the worst-case remaining points; the expectation starts at 5 rounds per test and, once the first
    test has finished, is exactly what remains."""
    suite, c = get_suite("pts"), pts_context(max_rounds=15, wsat_hours=0.05)  # WSAT: 3 samples at most
    run = Run(schema_version=2, ssdlab_version="t", run_id="t", suite="pts", status="running", created="",
              options={}, target={"kind": "file", "capacity_bytes": c.capacity}, host={})
    iops = IOPS
    steps: list[tuple[int, int, bool]] = []  # (worst, expected, first test finished)
    while True:
        pending = suite.next_points(c, run)
        out = suite.outlook(c, run)
        assert out.next_point == (pending[0] if pending else None)
        worst = sum(n for _, n in out.worst)
        expected = sum(n for _, n in (out.expected or out.worst))
        assert worst == len(pending)
        assert expected <= worst
        steps.append((worst, expected, common.analyse(iops, common.settings(c), run).finished))
        if not pending:
            break
        p = pending[0]
        r = int(p.tags.get("round", 0))
        run = run.with_point(pts_result(p, 10_000.0 if r >= settles_at else 1_000.0 * r + 1))
    total = len(steps) - 1
    # before anything ran: set-up + 5 rounds of each test (IOPS 9 points a round, TP 2, LAT 9 and its two
    # histogram captures), WSAT's 1+3 and its histogram capture
    assert steps[0][1] == (2 + 5 * 9) + 2 * (2 + 5 * 2) + (2 + 5 * 9 + 2) + (1 + 3 + 1)
    learned = next(i for i, (_, _, first_done) in enumerate(steps) if first_done)
    for i in range(learned, len(steps)):
        assert steps[i][1] == total - i, f"step {i}"
