"""verdict.py: the verdict of every kind, its exit code, ACT's event shape, invalid points and their extension."""

from __future__ import annotations

from typing import Any

import pytest

from ssdlab.errors import ExitCode
from ssdlab.results import verdict
from ssdlab.results.model import DirectionStats, Measurement, PointResult, Run, RunStatus, TestPoint, Workload


def run_with(events: list[dict[str, Any]], points: list[PointResult] | None = None,
             status: RunStatus = "complete", suite: str = "pts") -> Run:
    return Run(schema_version=1, ssdlab_version="t", run_id="r", suite=suite, status=status, created="",
               options={}, target={}, host={}, points=tuple(points or ()), events=tuple(events))


def measured(ios: int) -> Measurement:
    d = DirectionStats(iops=float(ios), bw_bytes=4096.0 * ios, io_bytes=4096 * ios, total_ios=ios, runtime_ms=1000)
    return Measurement(engine="fake", engine_version="0", directions={"write": d} if ios else {})


def point(pid: str = "p", runtime: float | None = 1.0, qd: int = 32, jobs: int = 4, phase: str = "measure",
          tags: dict[str, Any] | None = None) -> TestPoint:
    return TestPoint(id=pid, label=pid.upper(), phase=phase, tags=tags or {},
                     workload=Workload(rw="randwrite", bs=4096, iodepth=qd, numjobs=jobs, runtime_s=runtime))


@pytest.mark.parametrize(("kind", "code"), [("steady", 0), ("pass", 0), ("complete", 0), ("not-steady", 1),
                                            ("fail", 1), ("incomplete", 1)])
def test_every_kind_maps_to_its_exit_code(kind: verdict.Kind, code: int) -> None:
    run = run_with([verdict.verdict_event("iops", "IOPS", kind, "why", round=6 if kind == "steady" else None)])
    v = verdict.run_verdicts(run)
    assert [t.kind for t in v.tests] == [kind]
    assert v.exit_code == code
    assert v.tests[0].reason == "why"
    assert verdict.EXIT_CODES[kind] == code


def test_steady_names_its_round_and_the_run_takes_the_worst_test() -> None:
    events = [verdict.verdict_event("iops", "IOPS", "steady", "ok", round=6),
              verdict.verdict_event("lat", "Latency", "not-steady", "range 30%"),
              verdict.verdict_event("wsat", "WSAT", "complete", "4x written")]
    v = verdict.run_verdicts(run_with(events))
    assert v.tests[0].label == "steady at round 6"
    assert v.kind == "not-steady"
    assert v.exit_code == ExitCode.NEGATIVE
    assert v.headline == "1 not steady, 1 steady, 1 complete"
    assert verdict.summary_lines(v)[0] == "verdict: 1 not steady, 1 steady, 1 complete (exit code 1)"


def test_the_last_verdict_of_a_test_counts() -> None:
    events = [verdict.verdict_event("act", "ACT", "fail", "first"), verdict.verdict_event("act", "ACT", "pass", "x")]
    assert verdict.run_verdicts(run_with(events, suite="act")).exit_code == 0


@pytest.mark.parametrize(("passed", "kind", "code"), [(True, "pass", 0), (False, "fail", 1)])
def test_acts_event_shape_goes_through_the_same_path(passed: bool, kind: str, code: int) -> None:
    event = {"time": "t", "kind": "verdict", "suite": "act", "passed": passed,
             "text": "ACT 1x: PASS (worst slice: 0.10% >= 1 ms)", "highest_passing_load": 1.0}
    v = verdict.run_verdicts(run_with([event], suite="act"))
    assert [(t.test, t.title, t.kind) for t in v.tests] == [("act", "ACT", kind)]
    assert v.tests[0].reason.startswith("ACT 1x")
    assert v.exit_code == code


def test_a_suite_without_verdicts_is_complete_and_exits_0() -> None:
    ok = PointResult(point=point(), status="ok", started="", finished="", measurement=measured(500))
    v = verdict.run_verdicts(run_with([], [ok], suite="quick"))
    assert [(t.test, t.kind) for t in v.tests] == [("quick", "complete")]
    assert v.exit_code == 0


def test_an_invalid_point_makes_its_test_incomplete() -> None:
    bad = PointResult(point=point("iops-r01-x", tags={"test": "iops"}), status="invalid", started="", finished="",
                      measurement=measured(10), reason="invalid: it completed 10 I/Os")
    events = [verdict.verdict_event("iops", "IOPS", "steady", "ok", round=5),
              verdict.verdict_event("lat", "Latency", "steady", "ok", round=5)]
    v = verdict.run_verdicts(run_with(events, [bad]))
    assert [(t.test, t.kind) for t in v.tests] == [("iops", "incomplete"), ("lat", "steady")]
    assert "10 I/Os" in v.tests[0].reason
    assert v.invalid_points == (bad,)
    assert v.exit_code == 1
    quick = verdict.run_verdicts(run_with([], [bad], suite="quick"))  # no test verdicts: the run's own entry
    assert [t.kind for t in quick.tests] == ["incomplete"]


@pytest.mark.parametrize("status", ["interrupted", "failed", "running"])
def test_a_run_that_did_not_finish_is_incomplete(status: RunStatus) -> None:
    v = verdict.run_verdicts(run_with([{"kind": status, "text": "boom", "points_done": 3}], status=status))
    assert v.kind == "incomplete"
    assert v.exit_code == 1
    assert "0 measured points" in v.tests[-1].reason  # the count every page shows (results/counts.py)


def test_unknown_kinds_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown verdict kind"):
        verdict.verdict_event("t", "T", "great", "")  # type: ignore[arg-type]


# ------------------------------------------------------------------ point validity

def test_a_point_that_completed_nothing_is_invalid() -> None:
    assert "no I/O" in verdict.point_problem(point(), measured(0))
    assert "no I/O" in verdict.point_problem(point(), None)
    assert "no I/O" in verdict.point_problem(point(phase="precondition", runtime=None), measured(0))
    assert verdict.point_problem(point(phase="purge"), None) == ""  # a purge is not I/O


def test_a_valid_point_needs_two_queues_and_a_p99_that_rests_on_one_io() -> None:
    deep = point(qd=32, jobs=4)  # 128 outstanding -> 256
    assert verdict.min_ios(deep) == 256
    assert "two full queues of 128" in verdict.point_problem(deep, measured(255))
    assert verdict.point_problem(deep, measured(256)) == ""
    shallow = point(qd=1, jobs=1)
    assert verdict.min_ios(shallow) == verdict.MIN_IOS == 100
    assert "p99" in verdict.point_problem(shallow, measured(99))
    assert verdict.point_problem(shallow, measured(100)) == ""
    # not judged on a window: preconditioning, size-based points, multi-stream points only need some I/O
    assert verdict.min_ios(point(phase="precondition")) == 1
    assert verdict.min_ios(point(runtime=None)) == 1
    assert verdict.point_problem(point(runtime=None), measured(1)) == ""


def test_extension_aims_past_the_need_and_stops_at_the_bound() -> None:
    p = point(qd=1, jobs=1, runtime=0.5)
    assert verdict.extended_runtime(p, measured(0), 0.5) == 1.0  # nothing to scale from: double
    assert verdict.extended_runtime(p, measured(50), 0.5) == 1.5  # 1.5 x 100 / 50 = 3 times longer
    assert verdict.extended_runtime(p, measured(1), 0.5) == 0.5 * verdict.MAX_EXTENSION  # capped
    at_cap = point(qd=1, jobs=1, runtime=0.5 * verdict.MAX_EXTENSION)
    assert verdict.extended_runtime(at_cap, measured(1), 0.5) is None
    assert verdict.extended_runtime(point(runtime=None), measured(0), 0.0) is None  # size-based


def test_points_that_failed_in_a_run_that_went_on_exit_6_unless_a_test_is_negative() -> None:
    broken = PointResult(point=point("p2"), status="failed", started="", finished="", reason="fio failed: EIO")
    ok = PointResult(point=point("p1"), status="ok", started="", finished="", measurement=measured(500))
    v = verdict.run_verdicts(run_with([], [ok, broken], suite="quick"))  # --on-error continue finished the run
    assert [(t.kind, t.failed) for t in v.tests] == [("incomplete", True)]
    assert "1 point(s) failed" in v.tests[0].reason
    assert v.exit_code == ExitCode.FIO_FAILED
    worse = run_with([verdict.verdict_event("act", "ACT", "fail", "slow reads")], [ok, broken], suite="act")
    assert verdict.run_verdicts(worse).exit_code == ExitCode.NEGATIVE  # the failed verdict is what counts
