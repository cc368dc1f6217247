"""The run loop with a stand-in executor: saved after every point, interruption and failure handling."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ssdlab.errors import FioFailedError, RunInterrupted, TargetError
from ssdlab.fio import runner
from ssdlab.fio.executor import LiveCallback
from ssdlab.results import store
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, TestPoint, Workload
from ssdlab.results.timing import CATALOG_FILE, SHARE_KEY
from ssdlab.run import orchestrate
from ssdlab.run.progress import QuietProgress
from ssdlab.safety import WriteGrant
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.targets import NullTarget, TargetOptions
from ssdlab.targets.base import Target


class ThreePoints(Suite):
    """Three read points (never registered)."""

    name = "three"
    writes = False

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """p1, p2, p3."""
        return [TestPoint(id=f"p{i}", label=f"P{i}", workload=Workload(rw="read", bs=4096, runtime_s=1))
                for i in (1, 2, 3)]


@dataclass
class FakeExecutor:
    """Returns a fixed measurement; `fail` maps a point id to the exception raised there."""

    run_dir: Path
    fail: dict[str, BaseException] = field(default_factory=dict)
    saved_before: list[int] = field(default_factory=list)
    name: str = "fake"

    def version(self) -> str:
        """A made-up engine version."""
        return "0"

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """Record how many points the stored run held when this point started; raise or measure."""
        self.saved_before.append(len(store.load_run(self.run_dir).points))
        if point.id in self.fail:
            raise self.fail[point.id]
        d = DirectionStats(iops=1000.0, bw_bytes=4096e3, io_bytes=4096 * 1000, total_ios=1000, runtime_ms=1000)
        return Measurement(engine="fake", engine_version="0", directions={"read": d})


class PrepareFails(NullTarget):
    """A null target whose preparation raises `error`."""

    error: BaseException = KeyboardInterrupt()

    def prepare(self, writes: bool) -> list[str]:
        """Raise the configured error."""
        raise self.error


def start(tmp_path: Path, executor_fail: dict[str, BaseException] | None = None,
          target: NullTarget | None = None, executor_type: type[FakeExecutor] = FakeExecutor,
          ) -> tuple[Path, Run, Callable[[], Run], FakeExecutor]:
    """A new run dir + run; returns a callable that drives it."""
    run_dir = store.create_run_dir(tmp_path / "run")
    suite = ThreePoints()
    tgt = target or NullTarget(spec="null", kind="null", options=TargetOptions())
    executor = executor_type(run_dir, dict(executor_fail or {}))
    run = orchestrate.new_run(suite, tgt, executor, {"suite": "three"}, run_dir)
    ctx = PlanContext(capacity=tgt.capacity())

    def go() -> Run:
        return orchestrate.drive(run_dir, run, suite, ctx, tgt, executor, QuietProgress(),
                                 grant=WriteGrant(tgt, writes=False))

    return run_dir, run, go, executor


def stopped(tmp_path: Path, raises: type[BaseException], executor_fail: dict[str, BaseException] | None = None,
            target: NullTarget | None = None, match: str | None = None) -> Run:
    """Drive a new run that must stop with `raises`; return the run as saved in run.json."""
    run_dir, _, go, _ = start(tmp_path, executor_fail, target)
    with pytest.raises(raises, match=match):
        go()
    return store.load_run(run_dir)


def test_every_point_is_stored_before_the_next_starts(tmp_path: Path) -> None:
    run_dir, _, go, executor = start(tmp_path)
    run = go()
    assert run.status == "complete"
    assert executor.saved_before == [0, 1, 2]
    assert store.load_run(run_dir) == run
    assert not (run_dir / store.LOG_FILE).exists()  # folded into run.json at the end
    assert len(json.loads((run_dir / store.RUN_FILE).read_text(encoding="utf-8"))["points"]) == 3
    assert all(p.measurement is not None and "wall_s" in p.measurement.extra for p in run.points)


def test_ctrl_c_keeps_finished_points(tmp_path: Path) -> None:
    saved = stopped(tmp_path, RunInterrupted, {"p3": KeyboardInterrupt()}, match="ssdlab resume")
    assert saved.status == "interrupted"
    assert [p.point.id for p in saved.points] == ["p1", "p2"]
    assert saved.events[-1]["kind"] == "interrupted"


def test_fio_failure_records_the_failed_point(tmp_path: Path) -> None:
    saved = stopped(tmp_path, FioFailedError, {"p2": FioFailedError("fio failed: boom")})
    assert saved.status == "failed"
    assert [(p.point.id, p.status) for p in saved.points] == [("p1", "ok"), ("p2", "failed")]
    assert saved.points[1].reason == "fio failed: boom"


def test_other_errors_also_mark_the_run_failed(tmp_path: Path) -> None:
    saved = stopped(tmp_path, TargetError, {"p2": TargetError("device vanished")})
    assert saved.status == "failed"
    assert [p.point.id for p in saved.points] == ["p1"]
    assert saved.events[-1]["text"] == "device vanished"


def test_ctrl_c_while_preparing_the_target_marks_the_run_interrupted(tmp_path: Path) -> None:
    target = PrepareFails(spec="null", kind="null", options=TargetOptions())
    assert stopped(tmp_path, RunInterrupted, target=target).status == "interrupted"


def test_resume_runs_only_what_is_left(tmp_path: Path) -> None:
    run_dir, _, go, executor = start(tmp_path, {"p2": KeyboardInterrupt()})
    with pytest.raises(RunInterrupted):
        go()
    saved = store.load_run(run_dir)
    executor.fail.clear()
    executor.saved_before.clear()
    target = NullTarget(spec="null", kind="null", options=TargetOptions())
    run = orchestrate.drive(run_dir, saved, ThreePoints(), PlanContext(capacity=target.capacity()), target,
                            executor, QuietProgress(), grant=WriteGrant(target, writes=False))
    assert run.status == "complete"
    assert executor.saved_before == [1, 2]  # p2 and p3 only
    assert [p.point.id for p in run.points] == ["p1", "p2", "p3"]


def test_points_the_target_cannot_do_are_skipped_with_a_reason() -> None:
    point = TestPoint(id="x", label="x", workload=Workload(rw="randread", bs=1000))
    block_like = NullTarget(spec="null", kind="file", options=TargetOptions())
    assert "not a multiple" in orchestrate.skip_reason(point, block_like)
    assert orchestrate.skip_reason(point, NullTarget(spec="null", kind="null", options=TargetOptions())) == ""


@dataclass
class BusyExecutor(FakeExecutor):
    """fio's jobs at `cpu` % usr+sys on every point."""

    cpu: float = 97.0
    name: str = "fio"

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """A fio measurement whose submitting threads were `cpu` % busy."""
        d = DirectionStats(iops=1000.0, bw_bytes=4096e3, io_bytes=4096 * 1000, total_ios=1000, runtime_ms=1000)
        return Measurement(engine="fio", engine_version="3.33", directions={"read": d}, usr_cpu=self.cpu * 0.6,
                           sys_cpu=self.cpu * 0.4)


class Notes(QuietProgress):
    """Keeps the notes and point summaries a run prints."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.ends: list[str] = []

    def note(self, text: str) -> None:
        self.notes.append(text)

    def point_end(self, result: PointResult) -> None:
        from ssdlab.run.progress import _summary

        self.ends.append(_summary(result))


def _busy_run(tmp_path: Path, kind: str, cpu: float) -> tuple[Run, Notes]:
    run_dir = store.create_run_dir(tmp_path / "run")
    target = NullTarget(spec="null", kind=kind, options=TargetOptions())
    executor = BusyExecutor(run_dir, cpu=cpu)
    run = orchestrate.new_run(ThreePoints(), target, executor, {"suite": "three"}, run_dir)
    notes = Notes()
    done = orchestrate.drive(run_dir, run, ThreePoints(), PlanContext(capacity=target.capacity()), target,
                             executor, notes, grant=WriteGrant(target, writes=False))
    return done, notes


def test_the_host_cpu_advice_is_said_once_per_run_and_each_point_is_marked(tmp_path: Path) -> None:
    """Issue 34: a three-line paragraph under every point became one mark per point and the advice once."""
    run, said = _busy_run(tmp_path, "file", 97.0)
    assert [w for r in run.points for w in r.warnings] == []  # no per-point paragraph
    assert all(r.measurement is not None and r.measurement.extra["host_limit"]["saturated"] for r in run.points)
    assert all(end.endswith("[host CPU limit: fio 97 % per job]") for end in said.ends)
    advice = [n for n in said.notes if n.startswith("host CPU limit")]
    assert len(advice) == 1
    assert "To lift it: " in advice[0]


def test_fio_at_a_few_percent_cpu_or_on_null_is_not_flagged(tmp_path: Path) -> None:
    """A loaded host flagged points where fio used 3-8 % CPU; the null engine was flagged and called
    'expected'."""
    for kind, cpu in (("file", 6.0), ("null", 99.0)):
        run, said = _busy_run(tmp_path / kind, kind, cpu)
        assert not any("host CPU" in t or "expected" in t for t in said.notes + said.ends)
        assert not any(r.measurement is not None and r.measurement.extra.get("host_limit") for r in run.points)


def test_measurement_warnings_leave_the_host_flag_out() -> None:
    d = DirectionStats(iops=1.0, bw_bytes=1.0, io_bytes=1, total_ios=1, runtime_ms=1)
    busy = Measurement(engine="fio", engine_version="3.33", directions={"read": d}, usr_cpu=60, sys_cpu=39)
    assert orchestrate.measurement_warnings(busy) == []
    failing = Measurement(engine="fio", engine_version="3.33", directions={"read": d}, errors=2)
    assert orchestrate.measurement_warnings(failing) == ["fio reported errors in 2 job(s)"]


@dataclass
class SwallowingExecutor(FakeExecutor):
    """Simulates a signal whose KeyboardInterrupt was lost in a finalizer: only the stop request remains."""

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """Measure normally, but request a stop during p2."""
        if point.id == "p2":
            runner.request_stop()
        return super().run_point(point, target, point_dir, on_live)


def test_a_lost_keyboard_interrupt_still_stops_the_run_before_the_next_point(tmp_path: Path) -> None:
    run_dir, _, go, _ = start(tmp_path, executor_type=SwallowingExecutor)
    try:
        with pytest.raises(RunInterrupted):
            go()
    finally:
        runner.clear_stop_request()
    saved = store.load_run(run_dir)
    assert saved.status == "interrupted"
    assert [p.point.id for p in saved.points] == ["p1", "p2"]


@dataclass
class StallingExecutor(FakeExecutor):
    """A drive that stalls: p2 completes `ios_by_attempt[k]` I/Os on its k-th run (the last value repeats)."""

    ios_by_attempt: list[int] = field(default_factory=lambda: [0, 40, 1000])
    runtimes: list[float] = field(default_factory=list)

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None) -> Measurement:
        """p1 and p3 measure normally; p2 completes the scripted number of I/Os."""
        if point.id != "p2":
            return super().run_point(point, target, point_dir, on_live)
        assert point.workload.runtime_s is not None
        self.runtimes.append(point.workload.runtime_s)
        ios = self.ios_by_attempt[min(len(self.runtimes), len(self.ios_by_attempt)) - 1]
        dirs = {"read": DirectionStats(iops=ios, bw_bytes=4096.0 * ios, io_bytes=4096 * ios, total_ios=ios,
                                       runtime_ms=1000)} if ios else {}
        return Measurement(engine="fake", engine_version="0", directions=dirs)


def test_a_stalled_point_is_run_again_longer_until_it_is_valid(tmp_path: Path) -> None:
    run_dir, _, go, executor = start(tmp_path, executor_type=StallingExecutor)
    run = go()
    assert isinstance(executor, StallingExecutor)
    assert executor.runtimes == [1.0, 2.0, 8.0]  # nothing: doubled; 40 of the 100 needed: ceil(1.5 x 100 / 40) = 4x
    p2 = run.result("p2")
    assert p2 is not None
    assert p2.status == "ok"
    assert p2.point.workload.runtime_s == 8.0
    assert p2.point.tags["planned_runtime_s"] == 1.0
    assert any("runtime extended from 1 s to 8 s" in w and "no I/O" in w for w in p2.warnings)
    assert store.load_run(run_dir) == run


def test_a_point_that_stays_stalled_is_stored_invalid_never_ok(tmp_path: Path) -> None:
    run_dir, _, go, executor = start(tmp_path, executor_type=StallingExecutor)
    assert isinstance(executor, StallingExecutor)
    executor.ios_by_attempt = [0]
    run = go()
    assert run.status == "complete"
    assert executor.runtimes == [1.0, 2.0, 4.0, 8.0, 16.0]  # doubling up to 16x the planned runtime
    p2 = run.result("p2")
    assert p2 is not None
    assert p2.status == "invalid"
    assert "no I/O" in p2.reason
    assert "up to 16x its planned 1 s" in p2.reason
    assert [p.point.id for p in run.ok_points()] == ["p1", "p3"]
    assert "p2" in run.done_ids()  # finished: a resume does not run it again
    from ssdlab.results.verdict import run_verdicts

    v = run_verdicts(store.load_run(run_dir))
    assert [(t.kind, t.title) for t in v.tests] == [("incomplete", "three")]
    assert v.exit_code == 1


class ThreeSamples(ThreePoints):
    """Three samples of one continuous stimulus (never registered)."""

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """s1, s2, s3, one stimulus."""
        w = Workload(rw="write", bs=4096, runtime_s=1)
        return [TestPoint(id=f"s{i}", label=f"S{i}", workload=w, continuous="s") for i in (1, 2, 3)]


@dataclass
class SeriesExecutor(FakeExecutor):
    """Runs a series sample by sample; the samples named in `fail` end the series with that error."""

    series = True  # (Executor.series: it runs a continuous stimulus as one run)

    def run_series(self, points: list[TestPoint], target: Target, point_dir: Path, on_live: LiveCallback | None,
                   on_sample: Callable[[Measurement], Path | None]) -> None:
        for p in points:
            if on_sample(self.run_point(p, target, point_dir)) is None:
                return


def series_run(tmp_path: Path, on_error: str) -> tuple[Path, Callable[[], Run]]:
    run_dir = store.create_run_dir(tmp_path / "run")
    suite, tgt = ThreeSamples(), NullTarget(spec="null", kind="null", options=TargetOptions())
    executor = SeriesExecutor(run_dir, {"s2": FioFailedError("fio failed: write at offset 4096")})
    run = orchestrate.new_run(suite, tgt, executor, {"suite": "three", "on_error": on_error}, run_dir)

    def go() -> Run:
        return orchestrate.drive(run_dir, run, suite, PlanContext(capacity=tgt.capacity()), tgt, executor,
                                 QuietProgress(), grant=WriteGrant(tgt, writes=True))

    return run_dir, go


def test_a_failed_sample_is_recorded_as_its_own_first_attempt(tmp_path: Path) -> None:
    run_dir, go = series_run(tmp_path, "stop")
    with pytest.raises(FioFailedError):
        go()
    run = store.load_run(run_dir)
    assert [(p.point.id, p.status, p.attempt) for p in run.points] == [("s1", "ok", 1), ("s2", "failed", 1)]


def test_on_error_continue_goes_on_past_a_failed_sample(tmp_path: Path) -> None:
    run_dir, go = series_run(tmp_path, "continue")
    run = go()
    assert run.status == "complete"
    assert [(p.point.id, p.status) for p in run.points] == [("s1", "ok"), ("s2", "failed"), ("s3", "ok")]
    assert [(p.point.id, p.status) for p in store.load_run(run_dir).points] == \
        [("s1", "ok"), ("s2", "failed"), ("s3", "ok")]


def test_a_finished_run_teaches_the_next_run_of_its_suite(tmp_path: Path) -> None:
    """Issue 34: ETAs learn from earlier runs of the same suite and target kind in the catalog."""
    _, _, go, _ = start(tmp_path)
    first = go()
    assert first.host[SHARE_KEY] > 0  # the share of a CPU it expected as it started
    run_dir = store.create_run_dir(tmp_path / "second")
    tgt = NullTarget(spec="null", kind="null", options=TargetOptions())
    second = orchestrate.new_run(ThreePoints(), tgt, FakeExecutor(run_dir), {"suite": "three"}, run_dir)
    loop = orchestrate.RunLoop(run_dir, second, ThreePoints(), PlanContext(capacity=tgt.capacity()), tgt,
                               FakeExecutor(run_dir), QuietProgress(), WriteGrant(tgt, writes=False))
    assert loop.estimator.history.runs == 1
    assert loop.estimator.history.results == 3
    other = tmp_path / "elsewhere"
    other.mkdir()
    lonely = orchestrate.RunLoop(store.create_run_dir(other / "r"), second, ThreePoints(),
                                 PlanContext(capacity=tgt.capacity()), tgt, FakeExecutor(run_dir), QuietProgress(),
                                 WriteGrant(tgt, writes=False))
    assert lonely.estimator.history.runs == 0  # another results root: no catalog, none created by looking
    assert not (other / CATALOG_FILE).exists()


def test_a_run_expects_and_records_the_cpu_share_this_process_got(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 34: the share of a CPU a run starts with is the one its process got so far (the kernel's schedstat,
    injected here): its ETA's priors use it and run.json keeps it, for the next run's history."""
    from ssdlab.run import eta

    stat = tmp_path / "schedstat"
    stat.write_text("250000000 750000000 12\n", encoding="ascii")  # a quarter of a CPU
    monkeypatch.setattr(eta, "SCHEDSTAT", stat)
    run_dir, run, _, executor = start(tmp_path)
    assert run.host[SHARE_KEY] == 0.25
    tgt = NullTarget(spec="null", kind="null", options=TargetOptions())
    loop = orchestrate.RunLoop(run_dir, run, ThreePoints(), PlanContext(capacity=tgt.capacity()), tgt, executor,
                               QuietProgress(), WriteGrant(tgt, writes=False))
    assert loop.estimator.share == 0.25
