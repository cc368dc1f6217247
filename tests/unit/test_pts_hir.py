"""PTS HIR without a device: the plan against the spec's procedure, the preconditioning's steady-state logic,
and the per-wait-state metrics on fixture data."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from tests.unit.test_pts_rounds import ctx, measurement, new_run, simulate

from ssdlab.errors import UsageError
from ssdlab.results.model import Measurement, PointResult, Run, TestPoint
from ssdlab.suites import get_suite
from ssdlab.suites.base import Outlook, PlanContext
from ssdlab.suites.pts import common, hir

SPEC_WAITS = [5.0, 10.0, 15.0, 25.0, 50.0]


def spec_ctx(**options: Any) -> PlanContext:
    return dataclasses.replace(ctx(**options), runtime_s=None)  # 60 s points: the spec's durations


def test_plan_follows_the_spec_procedure() -> None:
    plan = get_suite("pts-hir").plan(spec_ctx())
    assert plan[0].id == "hir-0-purge"
    assert plan[0].phase == "purge"
    assert not any(p.phase == "precondition" and p.workload.rw == "write" for p in plan)  # no WIPC
    pc = [p for p in plan if p.tags.get("segment") == "pc"]
    assert len(pc) == 30 * 25  # rounds of 30 one-minute samples, up to --max-rounds
    assert {p.workload.runtime_s for p in pc} == {60.0}
    assert pc[29].tags["round"] == 1
    assert pc[30].tags["round"] == 2
    bursts = [p for p in plan if p.tags.get("segment") == "burst"]
    base = [p for p in plan if p.tags.get("segment") == "baseline"]
    assert [w for i, w in enumerate(p.tags["wait_s"] for p in bursts) if i % 360 == 0] == SPEC_WAITS
    assert len(bursts) == len(base) == 5 * 360
    assert {p.workload.runtime_s for p in bursts + base} == {5.0}  # 5-s bursts; baseline 360 x 5 s = 1800 s
    for w in SPEC_WAITS:
        mine = [p for p in bursts if p.tags["wait_s"] == w]
        assert mine[0].idle_before_s == 0  # the first burst follows the previous segment directly
        assert {p.idle_before_s for p in mine[1:]} == {w}  # every burst is followed by its wait ...
        back = [p for p in base if p.tags["wait_s"] == w]
        assert back[0].idle_before_s == w  # ... the last one too, before the return to baseline
        assert {p.idle_before_s for p in back[1:]} == {0.0}  # which is continuous
    ids = [p.id for p in plan]
    assert ids.index("hir-w05-c360") < ids.index("hir-w10-b001")  # each wait state returns to baseline first
    w = bursts[0].workload
    assert (w.rw, w.bs, w.numjobs, w.iodepth) == ("randwrite", 4096, 4, 32)
    # 360 pairs of (5 s burst + wait) per wait state = 13 h, plus five 1800-s returns to baseline
    assert sum(p.idle_before_s + (p.workload.runtime_s or 0) for p in bursts + base) == \
        360 * (10 + 15 + 20 + 30 + 55) + 5 * 1800


def test_threads_and_depth_are_never_swapped() -> None:
    plan = get_suite("pts-hir").plan(spec_ctx(tq="8x2"))
    assert {(p.workload.numjobs, p.workload.iodepth) for p in plan if p.phase != "purge"} == {(8, 2)}


def test_fixed_preconditioning_and_scaled_durations() -> None:
    plan = get_suite("pts-hir").plan(ctx(hir_precondition="fixed", hir_bursts=2, hir_waits="5,50"))
    pc = [p for p in plan if p.tags.get("segment") == "pc"]
    assert len(pc) == 36  # DmNosachev's fixed 36 samples
    bursts = [p for p in plan if p.tags.get("segment") == "burst"]
    # ctx() runs 1-s points: every duration is scaled by 1/60
    assert [p.idle_before_s for p in bursts] == [0.0, pytest.approx(5 / 60), 0.0, pytest.approx(50 / 60)]
    assert [p.workload.runtime_s for p in bursts] == [pytest.approx(5 / 60)] * 4
    assert len(get_suite("pts-hir").plan(ctx(hir_precondition="fixed", hir_pc_samples=4, hir_bursts=1))) == \
        1 + 4 + 5 * 2


@pytest.mark.parametrize("opts", [{"hir_precondition": "sometimes"}, {"hir_waits": "5,x"}, {"hir_waits": "0"},
                                  {"hir_waits": "5,5"}, {"hir_bursts": 0}, {"hir_pc_samples": 0}])
def test_bad_hir_options_are_usage_errors(opts: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="--hir-"):
        get_suite("pts-hir").plan(ctx(**opts))


def _pc_value(p: TestPoint) -> float:
    """Preconditioning falls from FOB to a steady 50k from round 3 on; bursts run 60k, baselines 50k."""
    if p.tags.get("segment") == "pc":
        return 50_000.0 if p.tags["round"] >= 3 else 200_000.0 / p.tags["round"]
    return 60_000.0 if p.tags.get("segment") == "burst" else 50_000.0


def test_steady_preconditioning_stops_at_the_first_steady_round() -> None:
    c = ctx(hir_pc_samples=3, hir_bursts=2)
    run = simulate(get_suite("pts-hir"), c, _pc_value)
    state = hir.analyse(common.settings(c), run)
    # rounds 1, 2 fall; rounds 3..7 are flat: the window 3-7 is the first steady one
    assert len(state.pc) == 7 * 3
    assert state.pc_steady
    assert state.pc_window == [3, 4, 5, 6, 7]
    assert state.pc_rounds[:3] == [200_000.0, 100_000.0, 50_000.0]
    assert state.steady_iops == 50_000.0
    assert state.finished
    ids = [p.point.id for p in run.points]
    assert ids[ids.index("hir-p0021") + 1] == "hir-w05-b001"
    ev = next(e for e in run.events if e["kind"] == "pts-hir")
    assert ev["wait_states"]["50"]["vs_steady"] == pytest.approx(1.2)


def test_unsteady_preconditioning_stops_at_max_rounds_with_a_warning() -> None:
    c = ctx(hir_pc_samples=2, hir_bursts=1, max_rounds=6)
    run = simulate(get_suite("pts-hir"), c, lambda p: 1000.0 * (1 + p.tags.get("sample", 0)))
    state = hir.analyse(common.settings(c), run)
    assert len(state.pc) == 12
    assert state.pc_done
    assert not state.pc_steady
    assert any("HIR: preconditioning did not reach steady state" in w for w in run.warnings)


def _result(p: TestPoint, iops: float, idle: float | None = None) -> PointResult:
    m = measurement(p, iops)
    if idle is not None:
        m = dataclasses.replace(m, extra={"idle_s": idle})
    return PointResult(point=p, status="ok", started="", finished="", measurement=m)


def test_wait_state_metrics_on_fixture_data() -> None:
    c = ctx(hir_precondition="fixed", hir_pc_samples=5, hir_bursts=3, hir_waits="5,50")
    s = common.settings(c)
    run = new_run("pts-hir")
    plan = get_suite("pts-hir").plan(c)
    values = {"hir-w05-b001": 40_000.0, "hir-w05-b002": 44_000.0, "hir-w05-b003": 48_000.0,
              "hir-w50-b001": 40_000.0, "hir-w50-b002": 80_000.0, "hir-w50-b003": 90_000.0}
    for p in plan:
        if p.phase == "purge":
            run = run.with_point(PointResult(point=p, status="ok", started="", finished=""))
        elif p.tags["segment"] == "pc":
            run = run.with_point(_result(p, 40_000.0))
        else:
            idle = None if p.idle_before_s == 0 else p.idle_before_s + 0.01
            run = run.with_point(_result(p, values.get(p.id, 41_000.0), idle))
    state = hir.analyse(s, run)
    assert state.steady_iops == 40_000.0  # fixed mode: the last five preconditioning samples
    w5, w50 = hir.wait_state_summaries(state)
    assert (w5.wait_s, w5.bursts, w5.mean_iops, w5.min_iops, w5.max_iops) == (5.0, 3, 44_000.0, 40_000.0, 48_000.0)
    assert w5.vs_steady == pytest.approx(1.1)
    assert w50.mean_iops == pytest.approx(70_000.0)
    assert w50.vs_steady == pytest.approx(1.75)
    assert w5.idle_s == pytest.approx(5 / 60 + 0.01)  # the bursts that had a wait before them
    assert w50.baseline_iops == 41_000.0
    assert hir.hir_remaining(s, run) == []


def test_a_missing_measurement_is_no_value_not_zero() -> None:
    c = ctx(hir_precondition="fixed", hir_pc_samples=5, hir_bursts=2, hir_waits="5")
    s = common.settings(c)
    plan = get_suite("pts-hir").plan(c)
    run = new_run("pts-hir")
    for p in plan:
        m = None if p.phase == "purge" else Measurement(engine="t", engine_version="0", directions={})
        run = run.with_point(PointResult(point=p, status="ok", started="", finished="", measurement=m))
    (w5,) = hir.wait_state_summaries(hir.analyse(s, run))
    assert w5.mean_iops is None
    assert w5.vs_steady is None


def _scan_remaining(s: common.PtsSettings, run: Run) -> list[TestPoint]:
    """HIR's remaining points by a scan of the whole run (what the followed progress must agree with)."""
    done = run.done_ids()
    if "hir-0-purge" not in done:
        return hir.hir_plan(s)
    h = hir.hir_settings(s)
    pc = []
    while f"hir-p{len(pc) + 1:04d}" in done:
        pc.append(run.finished_by_id()[f"hir-p{len(pc) + 1:04d}"])
    rest = hir.hir_plan(s)[1:]
    pre = hir._preconditioning(s, pc)
    out = [] if pre.done else [p for p in rest if p.tags.get("segment") == "pc"][len(pc):]
    return out + [p for w in h.waits for p in hir.wait_state_points(s, w) if p.id not in done]


def _expand(outlook: Outlook) -> list[tuple[object, ...]]:
    return [hir._shape_key(p) for p, n in outlook.worst for _ in range(n)]


def test_outlook_and_remaining_follow_the_run_as_a_scan_would() -> None:
    c = ctx(hir_pc_samples=3, hir_bursts=4, hir_waits="5,50")
    s = common.settings(c)
    suite = get_suite("pts-hir")
    run = new_run("pts-hir")
    step = 0

    def agree(r: Run) -> None:
        want = _scan_remaining(s, r)
        assert hir.hir_remaining(s, r) == want
        got = hir.hir_outlook(s, r, [])
        assert got.next_point == (want[0] if want else None)
        assert sum(n for _, n in got.worst) == len(want)
        assert _expand(got) == [hir._shape_key(p) for p in want]
        assert len(got.worst) <= 12  # runs of one shape, not a point each

    agree(run)
    given_up: set[str] = set()  # as the run loop does under --on-error continue
    while (pending := [q for q in suite.next_points(c, run) if q.id not in given_up]) and step < 200:
        p = pending[0]
        step += 1
        status = {"hir-w05-b002": "failed", "hir-w05-b003": "invalid"}.get(p.id, "ok")
        if status == "failed":
            given_up.add(p.id)  # a gap the later points run past
        m = None if p.phase == "purge" else measurement(p, _pc_value(p))
        run = run.with_point(PointResult(point=p, status=status, started="", finished="", measurement=m))
        agree(run)
    assert [p.id for p in hir.hir_remaining(s, run)] == ["hir-w05-b002"]
    # a run handed in out of turn (an earlier one, a loaded copy) is scanned anew
    agree(dataclasses.replace(run, points=run.points[:40]))
    agree(dataclasses.replace(run, points=tuple(dataclasses.replace(p) for p in run.points)))
    agree(run)
    # the same length, first and last point, but one in the middle replaced: scanned anew too
    middle = len(run.points) // 2
    swapped = dataclasses.replace(run.points[middle], status="invalid")
    agree(dataclasses.replace(run, points=(*run.points[:middle], swapped, *run.points[middle + 1:])))
    agree(run)
    # the failed burst runs again and finishes: nothing left
    redo = next(p for p in hir.hir_plan(s) if p.id == "hir-w05-b002")
    run = run.with_point(PointResult(point=redo, status="ok", started="", finished="",
                                     measurement=measurement(redo, 60_000.0)))
    agree(run)
    assert hir.hir_remaining(s, run) == []
