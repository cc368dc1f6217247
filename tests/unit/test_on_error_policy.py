"""--on-error stop|continue in the run loop (a stand-in executor), the failed point's kept measurement, the
exit code, and the latency-outlier rule."""

from __future__ import annotations

import argparse
import io
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ssdlab.analysis import anomalies
from ssdlab.cli import Env, _finish
from ssdlab.errors import ExitCode, FioFailedError
from ssdlab.fio.executor import LiveCallback
from ssdlab.results import hist, store
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, Run, TestPoint, Workload
from ssdlab.run import orchestrate
from ssdlab.run.progress import QuietProgress
from ssdlab.safety import WriteGrant
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.targets import NullTarget, TargetOptions
from ssdlab.targets.base import Target


class FourPoints(Suite):
    name = "four"
    writes = False

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        return [TestPoint(id=f"p{i}", label=f"P{i}", workload=Workload(rw="read", bs=4096, runtime_s=1))
                for i in (1, 2, 3, 4)]


def _measurement(iops: float = 1000.0) -> Measurement:
    # enough I/Os for a valid point (verdict.min_ios): a stand-in for a real measurement
    d = DirectionStats(iops=iops, bw_bytes=iops * 4096, io_bytes=4096 * 1000, total_ios=1000, runtime_ms=1000)
    return Measurement(engine="fake", engine_version="0", directions={"read": d})


@dataclass
class FailingExecutor:
    """Fails the points in `fail` with an fio error that carries a partial measurement; records the options
    each point ran with."""

    fail: set[str]
    name: str = "fake"
    options: dict[str, dict[str, str]] = field(default_factory=dict)

    def version(self) -> str:
        return "0"

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        self.options[point.id] = dict(point.workload.options)
        if point.id in self.fail:
            raise FioFailedError(f"fio failed: 1 I/O error, the first: read at offset 4096 in {point.id}",
                                 partial=_measurement(12.0))
        return _measurement()


@dataclass
class ClosingTarget(NullTarget):
    closed: int = 0

    def close(self) -> None:
        self.closed += 1


def _drive(tmp_path: Path, policy: str | None, fail: set[str],
           target: ClosingTarget | None = None) -> tuple[Path, FailingExecutor, ClosingTarget]:
    run_dir = store.create_run_dir(tmp_path / "run")
    target = target or ClosingTarget(spec="null", kind="null", options=TargetOptions())
    executor = FailingExecutor(fail)
    options = {"suite": "four"} | ({"on_error": policy} if policy else {})
    run = orchestrate.new_run(FourPoints(), target, executor, options, run_dir)
    orchestrate.drive(run_dir, run, FourPoints(), PlanContext(capacity=target.capacity()), target, executor,
                      QuietProgress(), grant=WriteGrant(target, writes=False))
    return run_dir, executor, target


def test_stop_is_the_default_and_keeps_what_the_failed_point_finished(tmp_path: Path) -> None:
    with pytest.raises(FioFailedError, match="offset 4096 in p2"):
        _drive(tmp_path, None, {"p2"})
    saved = store.load_run(tmp_path / "run")
    assert saved.status == "failed"
    assert [(p.point.id, p.status) for p in saved.points] == [("p1", "ok"), ("p2", "failed")]
    partial = saved.points[1].measurement
    assert partial is not None
    assert partial.directions["read"].iops == 12.0  # nothing finished is lost


def test_continue_records_every_failed_point_and_goes_on(tmp_path: Path) -> None:
    run_dir, executor, target = _drive(tmp_path, "continue", {"p2", "p3"})
    saved = store.load_run(run_dir)
    assert saved.status == "complete"
    assert [(p.point.id, p.status) for p in saved.points] == [
        ("p1", "ok"), ("p2", "failed"), ("p3", "failed"), ("p4", "ok")]
    assert list(executor.options) == ["p1", "p2", "p3", "p4"]  # each ran once: failed ones are not retried
    assert all(p.measurement is not None for p in saved.points)
    assert any("went on" in w for w in saved.warnings)
    assert target.closed == 1


def test_continue_asks_fio_to_go_on_past_errors_and_print_each(tmp_path: Path) -> None:
    _, executor, _ = _drive(tmp_path, "continue", set())
    assert executor.options["p1"]["continue_on_error"] == "all"
    assert executor.options["p1"]["error_dump"] == "1"
    _, stop_executor, _ = _drive(tmp_path / "stop", "stop", set())
    assert "continue_on_error" not in stop_executor.options["p1"]


def test_a_point_s_own_error_options_win() -> None:
    point = TestPoint(id="x", label="x",
                      workload=Workload(rw="read", bs=4096, options={"continue_on_error": "verify"}))
    assert orchestrate.apply_error_policy(point, "continue").workload.options["continue_on_error"] == "verify"
    assert orchestrate.apply_error_policy(point, "stop") is point


def test_the_target_is_closed_when_the_run_stops(tmp_path: Path) -> None:
    target = ClosingTarget(spec="null", kind="null", options=TargetOptions())
    with pytest.raises(FioFailedError):
        _drive(tmp_path, "stop", {"p1"}, target)
    assert target.closed == 1  # e.g. an nbdkit server does not outlive a failed run


def test_failed_points_make_a_completed_run_exit_6(tmp_path: Path) -> None:
    run_dir, _, _ = _drive(tmp_path, "continue", {"p3"})
    args = argparse.Namespace(quiet=True, no_report=True)
    err = io.StringIO()
    code = _finish(store.load_run(run_dir), run_dir, args, Env(stdout=io.StringIO(), stderr=err))
    assert code == ExitCode.FIO_FAILED
    assert "1 point(s) failed: p3" in err.getvalue()


def test_a_clean_run_still_exits_0(tmp_path: Path) -> None:
    run_dir, _, _ = _drive(tmp_path, "continue", set())
    args = argparse.Namespace(quiet=True, no_report=True)
    assert _finish(store.load_run(run_dir), run_dir, args, Env(stdout=io.StringIO(), stderr=io.StringIO())) == 0


def test_on_error_policy_reads_the_run_options() -> None:
    run = Run(schema_version=1, ssdlab_version="0", run_id="r", suite="s", status="running", created="",
              options={"on_error": "continue"}, target={}, host={})
    assert orchestrate.on_error_policy(run) == "continue"
    assert orchestrate.on_error_policy(Run(**{**run.__dict__, "options": {}})) == "stop"


# ---------------------------------------------------------------- latency outliers

def _latency(values_ns: list[float]) -> LatencyStats:
    counts: dict[int, int] = {}
    for v in values_ns:
        idx = hist.value_to_idx(int(v))
        counts[idx] = counts.get(idx, 0) + 1
    bins = tuple(sorted(counts.items()))
    return LatencyStats(kind="clat", n=len(values_ns), min_ns=min(values_ns), max_ns=max(values_ns),
                        mean_ns=sum(values_ns) / len(values_ns), stddev_ns=0.0, percentiles_ns={}, bins=bins)


def _with_clat(lat: LatencyStats) -> Measurement:
    d = DirectionStats(iops=1.0, bw_bytes=1.0, io_bytes=1, total_ios=lat.n, runtime_ms=1, clat=lat)
    return Measurement(engine="fio", engine_version="3.33", directions={"read": d})


def test_one_stalled_io_among_fast_ones_is_an_outlier() -> None:
    m = _with_clat(_latency([50_000.0] * 999 + [300e6]))
    (o,) = anomalies.latency_outliers(m)
    assert o.direction == "read"
    assert o.max_ns == 300e6
    assert 5000 < o.ratio < 7000
    assert "300.0 ms" in o.describe()
    assert any("latency outlier" in w for w in orchestrate.measurement_warnings(m))


def test_uniformly_slow_or_short_tails_are_not_outliers() -> None:
    assert anomalies.latency_outliers(_with_clat(_latency([60e6] * 100))) == []  # slow, but all alike
    assert anomalies.latency_outliers(_with_clat(_latency([50_000.0] * 99 + [10e6]))) == []  # 10 ms: below 50 ms
