"""PTS suites without a device: plans, options, and the adaptive round logic driven by synthetic results."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ssdlab.errors import UsageError
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, Run, TestPoint
from ssdlab.suites import get_suite
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.suites.pts import common
from ssdlab.suites.pts import wsat as wsat_mod
from ssdlab.suites.pts.tests import IOPS, LAT

MiB = 1024**2
SMALL = {"pts_block_sizes": "1024,64,4", "pts_mixes": "100/0,65/35,0/100"}


def suite(name: str) -> Suite:
    return get_suite(name)


def ctx(**options: Any) -> PlanContext:
    opts: dict[str, Any] = {o.key: o.default for o in common.pts_options()}
    opts.update(options)
    return PlanContext(capacity=256 * MiB, logical_block_size=512, target_kind="file", runtime_s=1.0, options=opts)


def measurement(point: TestPoint, value: float) -> Measurement:
    """A measurement whose IOPS is `value`, MB/s follows from the block size, latency is 1e6/value µs."""
    w = point.workload
    lat = LatencyStats(kind="clat", n=int(value), min_ns=1.0, max_ns=4e9 / value, mean_ns=1e9 / value,
                       stddev_ns=1.0, percentiles_ns={"99.999": 3e9 / value})
    read_share = 1.0 if w.rw in ("read", "randread") else 0.0 if w.rw in ("write", "randwrite") else \
        (w.rwmixread or 0) / 100
    dirs = {}
    for name, share in (("read", read_share), ("write", 1 - read_share)):
        if share > 0:
            iops = value * share
            dirs[name] = DirectionStats(iops=iops, bw_bytes=iops * w.bs, io_bytes=int(iops * w.bs),
                                        total_ios=int(iops), runtime_ms=1000, clat=lat)
    return Measurement(engine="test", engine_version="0", directions=dirs)


ValueFn = Callable[[TestPoint], float]


def new_run(suite: str, target: dict[str, Any] | None = None) -> Run:
    """A run of `suite` that has not run a point yet."""
    return Run(schema_version=1, ssdlab_version="t", run_id="t", suite=suite, status="running", created="",
               options={}, target=target or {}, host={})


def drive(s: Suite, c: PlanContext, run: Run, result: Callable[[TestPoint], PointResult], limit: int = 5000) -> Run:
    """Drive next_points like the orchestrator does; `result` stands for running the next point."""
    for _ in range(limit):
        pending = s.next_points(c, run)
        if not pending:
            return s.conclude(c, run)
        run = run.with_point(result(pending[0]))
    raise AssertionError("suite did not finish")


def simulate(s: Suite, c: PlanContext, value: ValueFn, limit: int = 5000) -> Run:
    """Drive next_points like the orchestrator does, with synthetic measurements."""
    def result(p: TestPoint) -> PointResult:
        m = None if p.phase == "purge" else measurement(p, value(p))
        return PointResult(point=p, status="ok", started="", finished="", measurement=m,
                           reason="purge punch; write cache: unknown (x)" if m is None else "")

    return drive(s, c, new_run(s.name, {"kind": "file", "capacity_bytes": c.capacity}), result, limit)


def flat(_: TestPoint) -> float:
    return 10_000.0


def rising(p: TestPoint) -> float:
    return 1_000.0 * (1 + int(p.tags.get("round", 0)))


def test_iops_plan_is_the_full_spec_matrix_worst_case() -> None:
    s = suite("pts-iops")
    pts = s.plan(ctx())
    assert len(pts) == 2 + 25 * 56
    assert [p.phase for p in pts[:2]] == ["purge", "precondition"]
    first_round = [p for p in pts if p.tags.get("round") == 1]
    assert [(p.tags["read_pct"], p.tags["bs"]) for p in first_round[:9]] == [
        (100, 1024 * 1024), (100, 128 * 1024), (100, 64 * 1024), (100, 32 * 1024), (100, 16 * 1024),
        (100, 8 * 1024), (100, 4096), (100, 512), (95, 1024 * 1024)]
    notes = "\n".join(s.plan_notes(ctx(tq=None)))
    assert "25 rounds x 56 points" in notes
    c60 = ctx()
    c60 = PlanContext(capacity=c60.capacity, runtime_s=None, options=c60.options)
    assert "25 x 56m00s = 23h20m00s" in "\n".join(s.plan_notes(c60))


def test_wipc_writes_twice_the_active_range_sequentially() -> None:
    w = suite("pts-iops").plan(ctx())[1].workload
    assert (w.rw, w.bs, w.numjobs, w.iodepth) == ("write", 128 * 1024, 1, 128)
    assert w.size == 256 * MiB
    assert w.io_bytes == 2 * 256 * MiB


def test_spec_c_defaults_and_options() -> None:
    s = common.settings(ctx(spec="C"))
    assert (s.active_range_pct, s.threads, s.qd, s.write_cache) == (75.0, 2, 16, "enabled")
    assert s.active_range_bytes == 192 * MiB
    e = common.settings(ctx(tq="8x4", active_range=50))
    assert (e.threads, e.qd, e.active_range_bytes, e.write_cache) == (8, 4, 128 * MiB, "disabled")
    purge = suite("pts-lat").plan(ctx(spec="C"))[0]
    assert purge.tags["write_cache"] == "enabled"
    assert purge.phase == "purge"


@pytest.mark.parametrize("opts", [{"tq": "4y"}, {"tq": "0x32"}, {"max_rounds": 4}, {"active_range": 0},
                                  {"pts_block_sizes": "4,x"}, {"pts_mixes": "65/30"},
                                  {"pts_block_sizes": "512,8"}])
def test_bad_options_are_usage_errors(opts: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        suite("pts-iops").plan(ctx(**opts))


def test_null_target_is_refused() -> None:
    c = PlanContext(capacity=MiB * 64, target_kind="null", options=ctx().options)
    with pytest.raises(UsageError, match="null"):
        suite("pts-iops").plan(c)


def test_lat_runs_t1q1_and_tp_runs_one_sequential_stream() -> None:
    lat = [p for p in suite("pts-lat").plan(ctx()) if p.phase == "measure"]
    assert {(p.workload.numjobs, p.workload.iodepth) for p in lat} == {(1, 1)}
    assert len([p for p in lat if p.tags.get("round") == 1]) == 9
    # after the rounds: 20-minute RND 4 KiB T1Q1 response-time histogram captures, writes then reads
    captures = [p for p in lat if p.tags.get("stage") == "hist"]
    assert [p.id for p in lat[-2:]] == [p.id for p in captures] == ["lat-h-rnd4k-0-100", "lat-h-rnd4k-100-0"]
    assert [(p.workload.rw, p.workload.bs, p.workload.runtime_s) for p in captures] == [
        ("randwrite", 4096, 20.0), ("randread", 4096, 20.0)]  # 20 spec minutes of --runtime 1
    none = [p for p in suite("pts-lat").plan(ctx(lat_hist_mixes="none")) if p.tags.get("stage") == "hist"]
    assert none == []
    tp = suite("pts-tp").plan(ctx())
    assert [p.id for p in tp if p.phase != "measure"] == ["tp128-0-purge", "tp128-0-wipc", "tp1024-0-purge",
                                                          "tp1024-0-wipc"]
    assert tp[1].workload.bs == 128 * 1024
    assert tp[53].workload.bs == 1024 * 1024
    seq = [p for p in tp if p.phase == "measure"]
    assert {(p.workload.rw, p.workload.numjobs, p.workload.iodepth) for p in seq} == {("read", 1, 128),
                                                                                      ("write", 1, 128)}


def test_stops_at_the_first_steady_round() -> None:
    run = simulate(suite("pts-iops"), ctx(**SMALL), flat)
    assert len(run.points) == 2 + 5 * 9
    ev = next(e for e in run.events if e["kind"] == "pts-steady-state")
    assert ev["steady"] is True
    assert ev["window"] == [1, 2, 3, 4, 5]
    assert set(ev["determinations"]) == {"IOPS RND 4 KiB 0/100", "IOPS RND 64 KiB 65/35",
                                         "IOPS RND 1024 KiB 100/0"}
    assert any("NOT SNIA PTS compliant" in w for w in run.warnings)


def test_one_unsteady_tracking_variable_keeps_the_test_running() -> None:
    def value(p: TestPoint) -> float:
        if p.tags.get("key") == "rnd64k-65-35" and p.tags.get("round", 0) <= 4:
            return 1_000.0 * float(p.tags["round"])
        return 10_000.0

    run = simulate(suite("pts-iops"), ctx(**SMALL), value)
    state = common.analyse(IOPS, common.settings(ctx(**SMALL)), run)
    assert state.steady
    assert state.window_end == 9


def test_max_rounds_reached_reports_ss_not_achieved() -> None:
    run = simulate(suite("pts-iops"), ctx(max_rounds=7, **SMALL), rising)
    assert len(run.points) == 2 + 7 * 9
    state = common.analyse(IOPS, common.settings(ctx(max_rounds=7, **SMALL)), run)
    assert state.finished
    assert not state.steady
    assert state.window == [3, 4, 5, 6, 7]
    assert {d.rounds for d in state.determinations.values()} == {(3, 4, 5, 6, 7)}
    assert any("SS NOT ACHIEVED" in w for w in run.warnings)


def test_until_steady_continues_past_max_rounds() -> None:
    def value(p: TestPoint) -> float:
        return rising(p) if p.tags.get("round", 0) <= 8 else 50_000.0

    run = simulate(suite("pts-iops"), ctx(max_rounds=5, until_steady=True, **SMALL), value)
    state = common.analyse(IOPS,
                           common.settings(ctx(max_rounds=5, until_steady=True, **SMALL)), run)
    assert state.steady
    assert state.window_end == 13


def test_a_partly_done_round_resumes_at_its_first_missing_point() -> None:
    s = suite("pts-iops")
    c = ctx(**SMALL)
    full = simulate(s, c, flat)
    keep = [p for p in full.points if not (p.point.tags.get("round") == 3 and p.point.tags["read_pct"] == 65)]
    partial = Run(**{**full.__dict__, "points": tuple(keep), "events": (), "warnings": ()})
    pending = s.next_points(c, partial)
    assert [p.id for p in pending[:3]] == ["iops-r03-rnd1m-65-35", "iops-r03-rnd64k-65-35", "iops-r03-rnd4k-65-35"]
    assert pending[3].id == "iops-r04-rnd1m-100-0"  # then the worst case continues


def test_tp_tracks_both_directions_and_runs_two_tests() -> None:
    run = simulate(suite("pts-tp"), ctx(), flat)
    ids = [p.point.id for p in run.points]
    assert ids.count("tp128-0-purge") == 1
    assert ids.count("tp1024-0-purge") == 1
    assert ids.index("tp1024-0-purge") > ids.index("tp128-r05-seq128k-0-100")
    evs = [e for e in run.events if e["kind"] == "pts-steady-state"]
    assert [e["test"] for e in evs] == ["tp128", "tp1024"]
    assert len(evs[0]["determinations"]) == 2


def test_lat_tracks_art_of_4k_writes() -> None:
    def value(p: TestPoint) -> float:
        return rising(p) if p.tags.get("key") == "rnd4k-0-100" else 10_000.0

    run = simulate(suite("pts-lat"), ctx(max_rounds=6), value)
    state = common.analyse(LAT, common.settings(ctx(max_rounds=6)), run)
    assert not state.steady
    assert state.rounds_done == 6
    d = state.determinations["ART RND 4 KiB 0/100"]
    assert float(d.values[0]) == pytest.approx(1e6 / 3000)  # round 2: mean 1e9/3000 ns = 333.3 µs


def test_wsat_stops_after_four_capacities_written() -> None:
    c = ctx()
    run = simulate(suite("pts-wsat"), c, lambda p: 16_384.0)  # 16384 x 4 KiB = 64 MiB per sample
    samples = [p for p in run.points if p.point.phase == "measure" and p.point.id != wsat_mod.HIST_ID]
    assert len(samples) == 16  # 4 x 256 MiB / 64 MiB
    assert run.points[-1].point.id == wsat_mod.HIST_ID  # then the histogram capture
    state = wsat_mod.analyse(common.settings(c), run)
    assert state.finished
    assert state.written[-1] == 4 * 256 * MiB
    assert run.points[0].point.phase == "purge"
    assert all(p.point.workload.rw == "randwrite" and p.point.workload.bs == 4096 for p in samples)


def test_wsat_time_cap_counts_samples_as_minutes() -> None:
    c = ctx(wsat_hours=0.25)
    run = simulate(suite("pts-wsat"), c, lambda p: 10.0)
    assert len([p for p in run.points if p.point.phase == "measure"]) == 15 + 1  # and the capture
    assert len(suite("pts-wsat").plan(ctx())) == 1 + 24 * 60 + 1
