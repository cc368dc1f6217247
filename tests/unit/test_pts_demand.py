"""PTS CBW and DIRTH: plan structure against the spec's tables (reference pts.md §2-3), the fio jobs they produce
(thread count = numjobs, queue depth = iodepth, never swapped), option checks, and the MaxIOPS/MidIOPS/MinIOPS
rule on fixture values."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from typing import Any

import pytest
from tests.unit.test_pts_rounds import measurement, new_run

from ssdlab.errors import UsageError
from ssdlab.fio.job import build_job
from ssdlab.results.model import PointResult, Run, TestPoint
from ssdlab.run.eta import shape
from ssdlab.suites.base import PlanContext
from ssdlab.suites.pts import common, demand
from ssdlab.suites.pts.demand import CBW, DIRTH, Selection, SweepValue, select_points

GiB = 1024**3
SPEC_BSSPLIT = "512/4:1k/1:1536/1:2k/1:2560/1:3k/1:3584/1:4k/67:8k/10:16k/7:32k/3:64k/3"
SPEC_ZONES = "zoned:50/5:30/15:20/80"
TQ7 = (32, 16, 8, 6, 4, 2, 1)


def settings(**options: Any) -> common.PtsSettings:
    runtime = options.pop("runtime_s", None)
    ctx = PlanContext(capacity=64 * GiB, logical_block_size=512, target_kind="block", runtime_s=runtime,
                      options=options)
    return common.settings(ctx)


def by_stage(points: list[TestPoint], stage: str) -> list[TestPoint]:
    return [p for p in points if p.tags.get("stage") == stage]


def test_cbw_plan_follows_the_spec_tables() -> None:
    s = settings()
    pts = demand.plan(CBW, s)
    assert pts[0].id == "cbw-0-purge"
    assert pts[0].phase == "purge"
    pc = by_stage(pts, "pc")
    assert len(pc) == 25  # rounds of 30 minutes until steady state, at most 25
    sweep = by_stage(pts, "sweep")
    assert len(sweep) == 25 * 49
    pre = by_stage(pts, "prewrite")
    assert len(pre) == 25
    assert all(p.workload.runtime_s == 5 * 60 for p in pre)
    round1 = [p for p in pts if p.tags.get("round") == 1 and p.tags.get("stage") in ("prewrite", "sweep")]
    assert round1[0].tags["stage"] == "prewrite"  # the pre-write opens every round
    assert [(p.tags["tc"], p.tags["qd"]) for p in round1[1:]] == [(tc, qd) for tc in TQ7 for qd in TQ7]
    for p in sweep:
        w = p.workload
        assert w.rw == "randrw"
        assert w.rwmixread == 40
        assert w.bssplit == SPEC_BSSPLIT
        assert w.random_distribution == SPEC_ZONES
        assert w.runtime_s == 60
        assert w.size == s.active_range_bytes
        assert (w.numjobs, w.iodepth) == (p.tags["tc"], p.tags["qd"])  # TC -> numjobs, QD -> iodepth
        assert w.options["blockalign"] == "4k"
    for p in (*pc, *pre):  # preconditioning and pre-writes: the mix's writes at T32Q32
        w = p.workload
        assert (w.rw, w.numjobs, w.iodepth, w.bssplit, w.random_distribution) == \
            ("randwrite", 32, 32, SPEC_BSSPLIT, SPEC_ZONES)
        assert w.log_interval_ms == 60_000  # one sample per minute
    assert pc[0].workload.runtime_s == 30 * 60
    hist = pts[-6:]
    assert [p.id for p in hist] == ["cbw-h-max-pw", "cbw-h-max", "cbw-h-mid-pw", "cbw-h-mid", "cbw-h-min-pw",
                                    "cbw-h-min"]
    assert [p.workload.runtime_s for p in hist] == [3600, 600] * 3
    assert (hist[-1].workload.numjobs, hist[-1].workload.iodepth) == (1, 1)  # MinIOPS is T1Q1
    assert hist[1].workload.rw == "randrw"
    assert hist[0].workload.rw == "randwrite"
    assert len(pts) == 1 + 25 + 25 * 50 + 6


def test_fio_job_puts_threads_in_numjobs_and_depth_in_iodepth() -> None:
    s = settings()
    p = next(p for p in demand.plan(CBW, s) if p.id == "cbw-r01-t16q02")
    job = build_job(p, {"filename": "/dev/nvme0n1", "ioengine": "libaio", "direct": 1}).render()
    assert re.search(r"^numjobs=16$", job, re.M)
    assert re.search(r"^iodepth=2$", job, re.M)
    assert re.search(rf"^bssplit={re.escape(SPEC_BSSPLIT)}$", job, re.M)
    assert re.search(rf"^random_distribution={SPEC_ZONES}$", job, re.M)
    assert re.search(r"^rwmixread=40$", job, re.M)
    assert re.search(r"^rw=randrw$", job, re.M)
    assert re.search(r"^blockalign=4k$", job, re.M)


def test_six_by_six_sweep_and_fixed_preconditioning() -> None:
    s = settings(di_sweep="6x6", di_pc="10")
    pts = demand.plan(CBW, s)
    assert len(by_stage(pts, "pc")) == 1
    assert by_stage(pts, "pc")[0].workload.runtime_s == 600
    assert {p.tags["tc"] for p in by_stage(pts, "sweep")} == {32, 16, 8, 4, 2, 1}
    assert {p.tags["qd"] for p in by_stage(pts, "sweep")} == {32, 16, 8, 4, 2, 1}
    assert all(p.workload.runtime_s == 600 for p in by_stage(pts, "prewrite"))  # 10 minutes with 6x6


def test_dirth_plan_and_operator_choices() -> None:
    pts = demand.plan(DIRTH, settings())
    sweep = by_stage(pts, "sweep")
    assert len(sweep) == 25 * 49
    w = sweep[0].workload
    assert (w.rw, w.bs, w.rwmixread, w.bssplit, w.random_distribution) == ("randrw", 8192, 65, None, None)
    assert by_stage(pts, "pc")[0].workload.rw == "randwrite"
    other = demand.plan(DIRTH, settings(dirth_bs=4.0, dirth_mix="100/0"))
    w = by_stage(other, "sweep")[0].workload
    assert (w.rw, w.bs, w.rwmixread) == ("randread", 4096, None)
    assert by_stage(other, "pc")[0].workload.rw == "randwrite"  # preconditioning always writes


def test_scaled_minutes_and_reduced_sweep() -> None:
    s = settings(runtime_s=0.5, di_tc="4,1", di_qd="8,2", di_hist_minutes=2.0, di_pc_round_minutes=3.0)
    ds = demand.demand_settings(s)
    assert ds.sweep == "custom"
    assert ds.top == (4, 8)
    assert ds.bottom == (1, 2)
    assert "reduced" in " ".join(ds.scaled_reasons())
    assert "2 spec minutes instead of 10" in " ".join(
        ds.scaled_reasons())
    pts = demand.plan(CBW, s)
    assert by_stage(pts, "pc")[0].workload.runtime_s == pytest.approx(1.5)  # 3 minutes x 0.5 s
    assert by_stage(pts, "pc")[0].workload.log_interval_ms == 500
    assert [(p.tags["tc"], p.tags["qd"]) for p in by_stage(pts, "sweep")[:4]] == [(4, 8), (4, 2), (1, 8), (1, 2)]


@pytest.mark.parametrize(("opts", "match"), [
    ({"di_tc": "0,4"}, "di-tc"), ({"di_qd": "4,4"}, "di-qd"), ({"di_pc": "soon"}, "di-pc"),
    ({"di_sweep": "5x5"}, "di-sweep"), ({"di_ceiling_on": "read"}, "ceiling"), ({"di_hist_minutes": 0.0}, "hist"),
    ({"dirth_mix": "60/30"}, "dirth-mix"), ({"dirth_bs": 0.3}, "dirth-bs"),
])
def test_bad_options_are_one_line_usage_errors(opts: dict[str, Any], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        demand.validate(DIRTH, settings(**opts))


def test_ecw_is_cbw_under_its_pts_e_1_1_name() -> None:
    s = settings(ecw=True)
    assert "ECW" in CBW.display_title(s)
    assert [p.workload for p in demand.plan(CBW, s)] == [p.workload for p in demand.plan(CBW, settings())]


# --------------------------------------------------------------------------- MaxIOPS / MidIOPS / MinIOPS

def sv(tc: int, qd: int, iops: float, art: float, write_art: float | None) -> SweepValue:
    return SweepValue(tc=tc, qd=qd, iops=iops, art_us=art, write_art_us=write_art)


FIXTURE = [
    sv(32, 32, 200_000, 9_000, 6_000),  # most IOPS, over the 5 ms write ceiling
    sv(16, 32, 190_000, 4_800, 5_000),  # exactly at the ceiling: excluded (strict <)
    sv(16, 16, 180_000, 3_000, 4_999.9),  # MaxIOPS
    sv(8, 8, 100_000, 600, 700),
    sv(4, 8, 95_000, 300, 400),  # MidIOPS: (180,000 + 10,000) / 2 exactly
    sv(8, 4, 105_000, 280, 390),
    sv(1, 1, 10_000, 80, 90),  # MinIOPS
]


def test_selection_with_the_write_ceiling() -> None:
    sel = select_points(FIXTURE, "write", 5.0, (1, 1))
    assert sel.points["max"] == (16, 16)
    assert (32, 32) not in sel.kept
    assert (16, 32) not in sel.kept
    # kept IOPS span 10,000 .. 180,000: the middle is 95,000, which T4Q8 has exactly
    assert sel.points["mid"] == (4, 8)
    assert sel.points["min"] == (1, 1)
    assert "write" in sel.rule
    assert "< 5 ms" in sel.rule


def test_selection_ties_prefer_the_lower_load() -> None:
    values = [sv(8, 8, 200, 100, 100), sv(2, 4, 150, 90, 90), sv(4, 4, 150, 90, 90), sv(1, 1, 100, 50, 50)]
    assert select_points(values, "write", 5.0, (1, 1)).points["mid"] == (2, 4)  # TOIO 8 before TOIO 16


def test_selection_on_all_io_and_without_ceiling() -> None:
    assert select_points(FIXTURE, "all", 5.0, (1, 1)).points["max"] == (16, 32)  # ART 4.8 ms passes
    assert select_points(FIXTURE, "none", 5.0, (1, 1)).points["max"] == (32, 32)
    reads_only = [sv(4, 4, 1000, 4000, None), sv(8, 8, 2000, 7000, None), sv(1, 1, 100, 50, None)]
    assert select_points(reads_only, "write", 5.0, (1, 1)).points["max"] == (4, 4)  # judged on all I/Os


def test_selection_when_nothing_meets_the_ceiling() -> None:
    sel = select_points([sv(4, 4, 1000, 9000, 9000), sv(1, 1, 100, 6000, 6000)], "write", 5.0, (1, 1))
    assert sel.points == {"max": None, "mid": None, "min": (1, 1)}
    assert "not defined" in sel.note
    assert [r for r, _, _ in sel.distinct()] == ["min"]


def test_one_capture_per_distinct_point() -> None:
    sel = Selection(points={"max": (4, 4), "mid": (4, 4), "min": (1, 1)}, kept=((4, 4), (1, 1)), rule="r")
    assert sel.distinct() == [("max", (4, 4), ("max", "mid")), ("min", (1, 1), ("min",))]
    assert sel.capture_role("mid") == "max"
    assert sel.capture_role("min") == "min"


def _agree(t: demand.DemandTest, s: common.PtsSettings, run: Run) -> None:
    """The analysis of the followed progress is that of a scan of the run, and the outlook lists what `remaining`
    lists: the same next point and as many points of each shape, in runs rather than a point each."""
    assert demand.analyse(t, s, run) == demand._analyse(t, s, run)
    want = demand.remaining(t, s, run)
    got = demand.outlook(t, s, run, [])
    assert got.next_point == (want[0] if want else None)
    counts: Counter[tuple[object, ...]] = Counter()
    for p, n in got.worst:
        counts[shape(p)] += n
    assert counts == Counter(shape(p) for p in want)
    assert len(got.worst) <= 2 * 5 + 8  # runs of one shape (a round has 5 points here), not a point each


@pytest.mark.parametrize(("t", "options"), [(CBW, {}), (DIRTH, {"di_pc": "2"})])
def test_outlook_and_analysis_follow_the_run_as_a_scan_would(t: demand.DemandTest, options: dict[str, Any]) -> None:
    s = settings(runtime_s=0.5, di_tc="2,1", di_qd="2,1", di_pc_round_minutes=2.0, di_prewrite_minutes=1.0,
                 di_hist_minutes=1.0, di_hist_prewrite_minutes=1.0, max_rounds=8, **options)
    failing, invalid = f"{t.key}-r03-t01q02", f"{t.key}-h-max"

    def result(p: TestPoint, status: str = "ok") -> PointResult:
        slow = 0.6 if p.tags.get("round") in (1, 2) else 1.0  # steady from round 3 on (PC and sweep rounds)
        m = None if p.phase == "purge" else measurement(p, 10_000.0 * slow * p.workload.numjobs)
        return PointResult(point=p, status=status, started="", finished="", measurement=m)

    run = new_run("pts-cbw")
    _agree(t, s, run)
    given_up: set[str] = set()  # as the run loop does under --on-error continue
    steps = failed_at = stopped = 0
    while (pending := [q for q in demand.remaining(t, s, run) if q.id not in given_up]) and steps < 300:
        p = pending[0]
        steps += 1
        if steps % 9 == 0 or p.id.endswith("t01q01"):  # on a branch, a point that measured too little: once its
            branch = run.with_point(result(p, "invalid"))  # round is complete, the test stops there, incomplete
            _agree(t, s, branch)
            stopped += demand.analyse(t, s, branch).invalid != ()
        status = "failed" if p.id == failing and not failed_at else "invalid" if p.id == invalid else "ok"
        if status == "failed":
            given_up.add(p.id)  # a gap the later points run past, until it is tried again
            failed_at = steps
        elif failed_at and steps == failed_at + 3:
            given_up.clear()
        run = run.with_point(result(p, status))
        _agree(t, s, run)
    state = demand.analyse(t, s, run)
    assert state.finished
    assert state.steady
    assert state.selection is not None
    assert demand.remaining(t, s, run) == []
    assert failed_at > 0  # the failed point was given up, run past and tried again
    assert stopped > 0  # some branch ended the test on its invalid point
    assert any(r.point.id == invalid and r.status == "invalid" for r in run.points)
    # a point of a complete round runs again: it fails (the round is no longer complete), then measures too little
    top = next(p for p in demand.plan(t, s) if p.id == f"{t.key}-r04-t02q02")
    for status in ("failed", "invalid"):
        run = run.with_point(result(top, status))
        _agree(t, s, run)
    assert demand.analyse(t, s, run).invalid == (top.id,)
    # a run handed in out of turn (an earlier one, a loaded copy, one with a point replaced in the middle and as
    # many points as the last) is scanned anew
    middle = next(i for i, r in enumerate(run.points) if r.point.id == f"{t.key}-r02-t01q01")
    replaced = dataclasses.replace(run.points[middle], status="invalid", reason="invalid: it completed 3 I/Os")
    for r in (dataclasses.replace(run, points=run.points[:12]), dataclasses.replace(run, points=run.points[:40]),
              dataclasses.replace(run, points=tuple(dataclasses.replace(p) for p in run.points)), run,
              dataclasses.replace(run, points=(*run.points[:middle], replaced, *run.points[middle + 1:]))):
        _agree(t, s, r)
    assert demand.analyse(t, s, r).invalid == (replaced.point.id,)
