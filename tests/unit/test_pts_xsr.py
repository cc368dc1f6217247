"""PTS XSR without a device: the plan against the spec's access groups, thread count and queue depth, and the
recovery derivation on fixture series."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.test_pts_rounds import ctx, simulate

from ssdlab.errors import UsageError
from ssdlab.results.model import TestPoint
from ssdlab.suites import get_suite
from ssdlab.suites.base import PlanContext
from ssdlab.suites.pts import common, xsr

KiB = 1024


def spec_ctx(**options: Any) -> PlanContext:
    return dataclasses.replace(ctx(**options), runtime_s=None)


def test_plan_is_three_access_groups_from_fob() -> None:
    plan = get_suite("pts-xsr").plan(spec_ctx())
    assert plan[0].id == "xsr-0-purge"
    assert not [p for p in plan if p.phase == "precondition"]  # no WIPC
    groups = [(p.workload.rw, p.workload.bs) for p in plan[1:]]
    assert groups == [("write", 1024 * KiB)] * 480 + [("randwrite", 8 * KiB)] * 360 + [("write", 1024 * KiB)] * 480
    assert {p.workload.runtime_s for p in plan[1:]} == {60.0}  # one-minute samples: 8 h, 6 h, 8 h
    ids = [p.id for p in plan[1:]]
    assert (ids[0], ids[479], ids[480], ids[839], ids[840], ids[-1]) == (
        "xsr-a0001", "xsr-a0480", "xsr-b0001", "xsr-b0360", "xsr-c0001", "xsr-c0480")
    # each access group is one continuous stimulus (fio.series), not one fio run per minute
    assert {p.continuous for p in plan[1:481]} == {"xsr-a"}
    assert {p.continuous for p in plan[481:841]} == {"xsr-b"}


@pytest.mark.parametrize(("tq", "jobs", "depth"), [(None, 1, 32), ("2x16", 2, 16), ("16x2", 16, 2)])
def test_threads_and_depth_are_never_swapped(tq: str | None, jobs: int, depth: int) -> None:
    opts = {"xsr_segments": "2,2,2"} | ({"xsr_tq": tq} if tq else {})
    plan = get_suite("pts-xsr").plan(ctx(**opts))
    assert {(p.workload.numjobs, p.workload.iodepth) for p in plan[1:]} == {(jobs, depth)}


def test_other_segment_lengths_are_an_option() -> None:
    plan = get_suite("pts-xsr").plan(ctx(xsr_segments="360,380,360"))  # DmNosachev's 2.0.2 lengths
    assert [sum(1 for p in plan if p.tags.get("segment") == k) for k in "abc"] == [360, 380, 360]


@pytest.mark.parametrize("text", ["1,2", "1,2,x", "0,1,1", "1,2,3,4"])
def test_bad_segments_are_usage_errors(text: str) -> None:
    with pytest.raises(UsageError, match="--xsr-segments"):
        get_suite("pts-xsr").plan(ctx(xsr_segments=text))


def test_recovery_of_a_penalty_that_fades() -> None:
    # throughput after RND -> SEQ: 200, then climbing to 1000 and staying there
    values: list[float | None] = [200.0, 400.0, 600.0, 800.0, 950.0, 1000.0, 1010.0, 990.0, 1000.0, 1005.0, 995.0,
                                  1000.0]
    r = xsr.recovery(values, sample_s=60.0)
    assert r.settled == pytest.approx((1000 + 1005 + 995 + 1000 + 990) / 5)
    # moving averages of 5: the one starting at sample 3 (600..1010 -> 872) is > 10 % low, at 4 (950) is in,
    # but sample 4 itself (800) is not at the level yet: sample 5 (950) is
    assert r.recovered_at == 5
    assert r.recovery_s == 240.0
    assert r.first_ratio == pytest.approx(200.0 / r.settled)
    assert r.extreme_ratio == pytest.approx(200.0 / r.settled)


def test_recovery_ignores_a_dip_that_comes_back() -> None:
    # in the band early, then a dip below it, then back: recovered only after the dip
    values: list[float | None] = [1000.0] * 5 + [300.0] * 5 + [1000.0] * 10
    r = xsr.recovery(values, sample_s=1.0)
    assert r.recovered_at == 11  # the first window of five that no longer holds a 300 starts at sample 11
    assert r.extreme_ratio == pytest.approx(0.3)


def test_recovery_without_a_penalty_is_zero() -> None:
    r = xsr.recovery([100.0, 101.0, 99.0, 100.0, 100.0, 102.0, 98.0], sample_s=60.0)
    assert (r.recovered_at, r.recovery_s) == (1, 0.0)
    assert r.extreme_ratio == pytest.approx(1.0, rel=0.01)


def test_recovery_needs_values() -> None:
    assert xsr.recovery([None, 5.0], 1.0).settled is None
    assert xsr.recovery([], 1.0).recovered_at is None


@settings(max_examples=200, deadline=None)  # no test depends on host speed
@given(st.lists(st.floats(min_value=1.0, max_value=1e6), min_size=2, max_size=60))
def test_recovery_is_always_within_the_segment(values: list[float]) -> None:
    r = xsr.recovery(list(values), sample_s=2.0)
    assert r.recovered_at is not None
    assert 1 <= r.recovered_at <= len(values)
    assert r.recovery_s == (r.recovered_at - 1) * 2.0
    w = min(xsr.RECOVERY_WINDOW, len(values))
    start = r.recovered_at - 1
    assert r.settled is not None
    for i in range(start, len(values) - w + 1):  # from the recovery on every moving average is in the band
        assert abs(sum(values[i:i + w]) / w - r.settled) <= xsr.RECOVERY_BAND * r.settled * (1 + 1e-9)
    if start < len(values) - 1:  # and the recovered sample itself is at the level (or it is the last one)
        assert abs(values[start] - r.settled) <= xsr.RECOVERY_BAND * r.settled * (1 + 1e-9)


def _tp(p: TestPoint) -> float:
    """IOPS giving a transition penalty: SEQ at 1000 MB/s, RND at 250 MB/s, SEQ after RND climbing back."""
    n = int(p.tags.get("sample", 0))
    if p.tags.get("segment") == "b":
        return 250e6 / (8 * KiB)
    mbps = 1000.0 if p.tags.get("segment") == "a" else min(1000.0, 250.0 + 150.0 * (n - 1))
    return mbps * 1e6 / (1024 * KiB)


def test_conclusion_records_the_recoveries() -> None:
    c = ctx(xsr_segments="6,6,12")
    run = simulate(get_suite("pts-xsr"), c, _tp)
    ev = next(e for e in run.events if e["kind"] == "pts-xsr")
    assert ev["samples"] == {"a": 6, "b": 6, "c": 12}
    bc = ev["recovery"]["B->C"]
    assert bc["first_ratio"] == pytest.approx(0.25)
    # 250, 400, 550, 700, 850, 1000, ...: the window from sample 3 (550..1000 -> 790) is out, from 4 (880) in;
    # sample 4 (700) and 5 (850) are still below the band, sample 6 (1000) is at the level
    assert bc["recovered_at_sample"] == 6
    assert ev["c_vs_a"] == pytest.approx(1.0)
    v = next(e for e in run.events if e["kind"] == "verdict" and e["test"] == "xsr")
    assert v["verdict"] == "complete"
    state = xsr.analyse(common.settings(c), run)
    assert state.finished


def test_samples_without_a_value_keep_their_place_in_time() -> None:
    values: list[float | None] = [None, None, 200.0, 500.0] + [1000.0] * 8
    r = xsr.recovery(values, sample_s=10.0)
    assert r.first_ratio == pytest.approx(0.2)  # the first sample with a value
    # windows of five from sample 3 (200, 500, 1000 x 3 -> 740) and 4 (900): sample 5 is the first at the level
    assert r.recovered_at == 5
    assert r.recovery_s == 40.0
