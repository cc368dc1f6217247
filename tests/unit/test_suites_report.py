"""Report sections of the characterization suites from synthetic runs: metrics, skipped points, callouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.report.characterization import axis_value, build_sections, metric_value
from ssdlab.results import hist
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, Run
from ssdlab.suites.base import PlanContext
from ssdlab.suites.characterization import builtin_suites


def _lat(values_ns: list[int]) -> LatencyStats:
    counts = hist.merge(*(hist.counts_from_sparse([(hist.value_to_idx(v), 1)]) for v in values_ns))
    return LatencyStats(kind="clat", n=len(values_ns), min_ns=min(values_ns), max_ns=max(values_ns),
                        mean_ns=sum(values_ns) / len(values_ns), stddev_ns=0.0, percentiles_ns={},
                        bins=tuple(hist.sparse(counts)))


def _m(read_iops: float, write_iops: float, read_lat: list[int], write_lat: list[int]) -> Measurement:
    dirs = {}
    if read_iops:
        dirs["read"] = DirectionStats(read_iops, read_iops * 4096, 1, len(read_lat), 1000, clat=_lat(read_lat))
    if write_iops:
        dirs["write"] = DirectionStats(write_iops, write_iops * 4096, 1, len(write_lat), 1000,
                                       clat=_lat(write_lat))
    return Measurement(engine="fio", engine_version="3.33", directions=dirs, usr_cpu=5, sys_cpu=10)


def _run(suite: str, ctx: PlanContext, make: dict[int, PointResult | Measurement]) -> Run:
    s = next(x for x in builtin_suites() if x.name == suite)
    run = Run(schema_version=1, ssdlab_version="t", run_id="r", suite=suite, status="complete", created="",
              options={}, target={}, host={})
    for i, p in enumerate(s.plan(ctx)):
        item = make.get(i)
        if item is None:
            continue
        if isinstance(item, Measurement):
            run = run.with_point(PointResult(point=p, status="ok", started="", finished="", measurement=item))
        else:
            run = run.with_point(PointResult(point=p, status=item.status, started="", finished="",
                                             reason=item.reason))
    return run


def test_metrics_merge_read_and_write_bins() -> None:
    m = _m(300, 100, [100_000] * 3, [900_000])
    run = _run("sweep-bs", PlanContext(capacity=1 << 30), {3: m})
    r = run.points[0]
    assert metric_value(r, "iops") == 400
    assert metric_value(r, "read_iops") == 300
    assert metric_value(r, "bw_MBps") == pytest.approx(400 * 4096 / 1e6)
    assert metric_value(r, "lat_mean_us") == pytest.approx(300.0)
    assert metric_value(r, "p50_us") == pytest.approx(100.0, rel=0.01)
    assert metric_value(r, "p99_us") == pytest.approx(900.0, rel=0.01)  # the write tail, from merged bins
    assert metric_value(r, "read_p99.9_us") == metric_value(r, "read_p99_9_us") == pytest.approx(100.0, rel=0.01)
    assert metric_value(r, "cpu") == 15
    assert metric_value(r, "nonsense") is None
    assert axis_value(r.point, "bs") == 4096
    assert axis_value(r.point, "matrix") == "seq-read"


def test_skipped_block_sizes_are_listed_not_drawn_as_zero(tmp_path: Path) -> None:
    skipped = PointResult(point=None, status="skipped", started="", finished="",  # type: ignore[arg-type]
                          reason="block size 512 B is not a multiple of the target's logical block size 4096 B")
    run = _run("sweep-bs", PlanContext(capacity=1 << 30, options={"matrices": "seq-read"}),
               {0: skipped, 3: _m(1000, 0, [50_000], []), 11: _m(20, 0, [900_000], [])})
    section, dist = build_sections(run, tmp_path)
    assert dist.anchor == "latency-distribution"  # the measured points' latency distribution follows the view
    assert dist.html.count("<svg") == 1
    assert section.title == "Block-size sweep"
    assert "Not measured" in section.html
    assert "logical block size 4096 B" in section.html
    assert section.html.count("<svg") == 3
    assert "<td>512</td><td>–</td>" in section.html  # the table row has no number, not 0


def test_lat_curve_callout(tmp_path: Path) -> None:
    ctx = PlanContext(capacity=1 << 30, options={"axis": ["bs=4k", "rwmixread=100", "numjobs=1",
                                                         "iodepth=1,2,4"], "p99_limit": 500.0})
    run = _run("lat-curve", ctx, {0: _m(1000, 0, [100_000], []), 1: _m(1800, 0, [400_000], []),
                                  2: _m(2000, 0, [2_000_000], [])})
    section, _dist = build_sections(run, tmp_path)
    assert "T1: p99 crosses 500 µs at QD 4 (2,000 IOPS" in section.html
    assert "best IOPS within the limit 1,800" in section.html
    assert section.html.count("<svg") == 4


def test_app_section_shows_the_translation(tmp_path: Path) -> None:
    run = _run("app-sql", PlanContext(capacity=1 << 30, options={"curve": "50"}),
               {0: _m(700, 300, [100_000], [200_000])})
    section, dist = build_sections(run, tmp_path)
    assert "Response time at each confidence level" in dist.html
    assert section.title == "Application model: SQL"
    assert "<td>read</td><td>sum</td><td>82.32</td><td>100</td>" in section.html
    assert "8k/65:64k/35,4k/31:8k/39:64k/30" in section.html
