"""ACT pass/fail on synthetic histograms at and around each threshold; keep-up checks; the verdict hook."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ssdlab.cli import verdict_exit_code
from ssdlab.errors import UsageError
from ssdlab.fio import hist
from ssdlab.model import (
    DirectionStats,
    LatencyStats,
    Measurement,
    PointResult,
    Run,
    TestPoint,
    point_from_dict,
    to_dict,
)
from ssdlab.suites.act import ActSuite, StreamSlice, evaluate_level, judge
from ssdlab.suites.base import PlanContext

N = 100_000
FAST_NS = 200_000  # 0.2 ms


def counts(slow: dict[int, int]) -> hist.Counts:
    """N samples: `slow` maps latency (ns) -> count, the rest at 0.2 ms."""
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for ns, k in slow.items():
        c[hist.value_to_idx(ns)] += k
    c[hist.value_to_idx(FAST_NS)] += N - sum(slow.values())
    return c


def worst_of(c: hist.Counts) -> dict[int, float]:
    return StreamSlice("reads", N, 2000.0, 50.0, c, 0.0).exceedance()


@pytest.mark.parametrize(("ms", "limit_pct"), [(1, 5.0), (8, 1.0), (64, 0.1)])
def test_threshold_pass_just_below_fail_at_limit(ms: int, limit_pct: float) -> None:
    at_limit = int(N * limit_pct / 100)
    above = int(ms * 1.5 * 1_000_000)  # well inside the >= ms range
    assert judge(worst_of(counts({above: at_limit - 1})))
    assert not judge(worst_of(counts({above: at_limit})))  # "< 5 %": exactly 5 % fails


def test_exceedance_counts_samples_at_or_above_the_threshold_bucket() -> None:
    t = 8_000_000
    lower, upper = hist.idx_bounds(hist.value_to_idx(t))
    assert lower < t < upper  # 8 ms lies inside a fio bucket: that bucket counts as below
    first_above = upper  # lower bound of the next bucket
    ex = worst_of(counts({first_above: 1000, lower: 500}))
    assert ex[8] == pytest.approx(1.0)
    assert ex[4] == pytest.approx(1.5)
    assert ex[16] == 0.0


def test_each_threshold_row_matches_act_columns() -> None:
    ex = worst_of(counts({1_500_000: 1000, 3_000_000: 1000, 70_000_000: 100}))
    assert ex[1] == pytest.approx(2.1)
    assert ex[2] == pytest.approx(1.1)
    assert ex[4] == pytest.approx(0.1)
    assert ex[64] == pytest.approx(0.1)
    assert judge(ex) is False  # 0.1 % >= 64 ms is not < 0.1 %


# ------------------------------------------------------------------ evaluate a run


def _ctx(**opts: Any) -> PlanContext:
    options = {"duration": "4", "slice": "2", "load": "1x", **opts}
    return PlanContext(capacity=64 * 1024**2, options=options)


def _measurement(per_stream: dict[str, tuple[int, hist.Counts]]) -> Measurement:
    streams = {}
    for name, (ops, c) in per_stream.items():
        direction = "write" if name == "large-block-writes" else "read"
        lat = LatencyStats(kind="clat", n=ops, min_ns=0, max_ns=0, mean_ns=0, stddev_ns=0, percentiles_ns={},
                           bins=tuple(hist.sparse(c)))
        ds = DirectionStats(iops=0, bw_bytes=0, io_bytes=0, total_ios=ops, runtime_ms=2000, clat=lat)
        streams[f"{name}-d0"] = to_dict(Measurement(engine="fio", engine_version="3.33", directions={direction: ds}))
    return Measurement(engine="fio", engine_version="3.33", directions={}, extra={"streams": streams})


def _run(points: list[TestPoint], meas: list[Measurement]) -> Run:
    run = Run(schema_version=1, ssdlab_version="t", run_id="r", suite="act", status="running", created="",
              options={}, target={}, host={})
    for p, m in zip(points, meas, strict=False):
        run = run.with_point(PointResult(point=p, status="ok", started="", finished="", measurement=m))
    return run


def _slice(reads_slow: dict[int, int], reads_ops: int = 4000, lb_ops: int = 47) -> Measurement:
    c = counts(reads_slow) * 0
    c[hist.value_to_idx(FAST_NS)] = reads_ops - sum(reads_slow.values())
    for ns, k in reads_slow.items():
        c[hist.value_to_idx(ns)] += k
    lb = np.zeros(hist.PLAT_NR, dtype=np.int64)
    lb[hist.value_to_idx(500_000)] = lb_ops
    return _measurement({"reads": (reads_ops, c), "large-block-reads": (lb_ops, lb),
                         "large-block-writes": (lb_ops, lb)})


def test_worst_slice_decides_and_conclude_records_verdict() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    good = _slice({1_500_000: 100})  # 2.5 %
    bad = _slice({1_500_000: 240})  # 6 %
    result = evaluate_level(ctx, _run(level, [good, good]), 1.0, level)
    assert result.complete
    assert result.passed
    assert not result.lagging
    result = evaluate_level(ctx, _run(level, [good, bad]), 1.0, level)
    assert not result.passed
    assert result.worst[1] == pytest.approx(6.0)
    assert result.rows("reads")[0][0] == pytest.approx(4.25)  # avg row
    run = suite.conclude(ctx, _run(level, [good, bad]))
    assert verdict_exit_code(run) == 1
    assert "FAIL" in run.events[-1]["text"]
    assert verdict_exit_code(suite.conclude(ctx, _run(level, [good, good]))) == 0


def test_lagging_stream_stops_the_run() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    slow = _slice({}, reads_ops=2000)  # 1000/s of 2000/s: 1 s behind in a 2-s slice (limit 0.5 s)
    run = _run(level[:1], [slow])
    assert suite.next_points(ctx, run) == []
    result = evaluate_level(ctx, run, 1.0, level)
    assert "can't keep up" in result.lagging
    assert "reads" in result.lagging
    assert verdict_exit_code(suite.conclude(ctx, run)) == 1


def test_find_max_steps_until_a_level_fails() -> None:
    suite = ActSuite()
    ctx = _ctx(skip_prep=True, find_max=True, max_load="3x")
    l1, l2 = suite.level_points(ctx, 1.0), suite.level_points(ctx, 2.0)
    good = _slice({})
    run = _run(l1, [good, good])
    assert [p.id for p in suite.next_points(ctx, run)] == [p.id for p in l2]
    # 2x keeps up (8000 reads, 94 large blocks in 2 s) but 10 of 8000 reads >= 64 ms (0.125 %) fail it
    scaled = [_slice({}, reads_ops=8000, lb_ops=94), _slice({70_000_000: 10}, reads_ops=8000, lb_ops=94)]
    run = _run([*l1, *l2], [good, good, *scaled])
    result = evaluate_level(ctx, run, 2.0, l2)
    assert result.complete
    assert not result.lagging
    assert not result.passed
    assert suite.next_points(ctx, run) == []
    concluded = suite.conclude(ctx, run)
    assert concluded.events[-1]["highest_passing_load"] == 1.0
    assert "2x failed" in concluded.events[-1]["text"]
    assert verdict_exit_code(concluded) == 0


def test_streams_survive_serialisation_and_sim_is_refused() -> None:
    suite = ActSuite()
    p = suite.level_points(_ctx(), 1.0)[0]
    again = point_from_dict(to_dict(p))
    assert again == p
    assert len(again.streams) == 3
    with pytest.raises(UsageError, match="simulated SSD"):
        suite.plan(PlanContext(capacity=1 << 30, target_kind="sim", options={"duration": "4", "slice": "2"}))


def test_report_section_tables_and_chart(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from ssdlab.report import act as act_report
    from ssdlab.report.sections import sections_for

    suite = ActSuite()
    ctx = _ctx(skip_prep=True)
    level = suite.level_points(ctx, 1.0)
    run = suite.conclude(ctx, _run(level, [_slice({1_500_000: 100}), _slice({1_500_000: 240})]))
    (section,) = act_report.build(run, tmp_path)
    text = section.html
    assert "ACT 1x: FAIL" in text
    for row in ("<th>avg</th><th>4.25</th>", "<th>max</th><th>6.00</th>", "<th>overall</th><th>4.25</th>"):
        assert row in text
    assert "large-block writes" in text
    assert text.count("<svg") == 1  # per-slice chart (no histogram logs in tmp_path for the timeline)
    assert any(s.title == "ACT certification" for s in sections_for(run, tmp_path))
