"""Exact aggregates of several devices: sums, added bins, percentiles of the combined bins, stragglers."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.results import aggregate, hist
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PartResult, percentile_key

PS = (50.0, 90.0, 99.0, 99.9, 99.99)


def _lat(counts: dict[int, int], mean: float = 1000.0, sd: float = 10.0) -> LatencyStats:
    bins = tuple(sorted((i, c) for i, c in counts.items() if c > 0))
    dense = hist.counts_from_sparse(bins)
    n = int(dense.sum())
    return LatencyStats(kind="clat", n=n, min_ns=float(hist.idx_to_value(bins[0][0])),
                        max_ns=float(hist.idx_to_value(bins[-1][0])), mean_ns=mean, stddev_ns=sd,
                        percentiles_ns={percentile_key(p): float(v) for p, v in hist.percentiles(dense, PS).items()},
                        bins=bins)


def _m(iops: float, counts: dict[int, int], mean: float = 1000.0, jobs: int = 1) -> Measurement:
    lat = _lat(counts, mean)
    d = DirectionStats(iops=iops, bw_bytes=iops * 4096, io_bytes=int(iops) * 4096, total_ios=lat.n, runtime_ms=1000,
                       clat=lat)
    return Measurement(engine="fio", engine_version="3.33", directions={"read": d}, jobs=jobs, usr_cpu=10.0,
                       sys_cpu=5.0)


bins_strategy = st.dictionaries(st.integers(0, hist.PLAT_NR - 1), st.integers(1, 10_000), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(1, 1e6), bins_strategy, st.floats(10, 1e6)), min_size=1, max_size=6))
def test_merge_sums_rates_and_adds_bins(parts: list[tuple[float, dict[int, int], float]]) -> None:
    ms = [_m(iops, counts, mean) for iops, counts, mean in parts]
    merged = aggregate.merge(ms)
    d = merged.directions["read"]
    assert math.isclose(d.iops, sum(m.directions["read"].iops for m in ms), rel_tol=1e-12)
    assert d.total_ios == sum(m.directions["read"].total_ios for m in ms)
    combined = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for _, counts, _ in parts:
        for i, c in counts.items():
            combined[i] += c
    assert d.clat is not None
    assert hist.sparse(combined) == list(d.clat.bins)
    want = hist.percentiles(combined, PS)
    assert d.clat.percentiles(PS) == {p: float(want[p]) for p in PS}  # from the combined bins, exactly
    n = sum(m.directions["read"].total_ios for m in ms)
    mean = sum(m.directions["read"].clat.mean_ns * m.directions["read"].total_ios for m in ms  # type: ignore[union-attr]
               ) / n
    assert math.isclose(d.clat.mean_ns, mean, rel_tol=1e-9)


def test_merge_never_averages_percentiles() -> None:
    """Two devices, one fast and one slow: the merged p99 is the slow device's tail, not the mean of p99s."""
    fast = _m(1000, {hist.value_to_idx(100_000): 990, hist.value_to_idx(200_000): 10})
    slow = _m(1000, {hist.value_to_idx(100_000): 900, hist.value_to_idx(5_000_000): 100})
    merged = aggregate.merge([fast, slow]).directions["read"].clat
    assert merged is not None
    p99 = merged.percentile(99.0)
    avg = ((fast.directions["read"].clat.percentile(99.0) or 0)  # type: ignore[union-attr]
           + (slow.directions["read"].clat.percentile(99.0) or 0)) / 2  # type: ignore[union-attr]
    assert p99 == hist.idx_to_value(hist.value_to_idx(5_000_000))
    assert p99 != avg


def test_merge_without_bins_on_every_part_has_no_percentiles() -> None:
    a = _m(1000, {10: 5})
    bare = LatencyStats(kind="clat", n=5, min_ns=1, max_ns=9, mean_ns=5, stddev_ns=1, percentiles_ns={"99": 9.0})
    b = Measurement(engine="fio", engine_version="3.33", directions={"read": DirectionStats(
        iops=5, bw_bytes=5, io_bytes=5, total_ios=5, runtime_ms=1000, clat=bare)})
    merged = aggregate.merge([a, b]).directions["read"].clat
    assert merged is not None
    assert merged.bins == ()
    assert merged.percentiles_ns == {}
    assert merged.percentile(99.0) is None


def test_by_host_merges_each_host_and_lists_failures() -> None:
    parts = (PartResult("a", "/dev/x", measurement=_m(100, {10: 1})),
             PartResult("a", "/dev/y", measurement=_m(50, {20: 1})),
             PartResult("b", "/dev/x", measurement=_m(70, {30: 1})),
             PartResult("b", "/dev/y", status="failed", reason="disconnected"))
    shares = aggregate.by_host(parts)
    assert [s.host for s in shares] == ["a", "b"]
    assert shares[0].measurement is not None
    assert shares[0].measurement.total_iops == 150
    assert shares[1].measurement is not None
    assert shares[1].measurement.total_iops == 70
    assert [p.device for p in shares[1].failed] == ["/dev/y"]
    total = aggregate.merge([s.measurement for s in shares if s.measurement is not None])
    assert total.total_iops == 220


def test_stragglers_are_below_the_median_by_more_than_the_margin() -> None:
    parts = [PartResult("h", f"d{i}", measurement=_m(v, {10: 1})) for i, v in enumerate((100, 98, 95, 89, 60))]
    assert [s.part.device for s in aggregate.stragglers(parts, margin_pct=10.0)] == ["d4"]  # median 95, limit 85.5
    assert [s.part.device for s in aggregate.stragglers(parts, margin_pct=5.0)] == ["d3", "d4"]  # limit 90.25


def test_straggler_margin_boundary() -> None:
    parts = [PartResult("h", f"d{i}", measurement=_m(v, {10: 1})) for i, v in enumerate((100, 100, 100, 90, 89.9))]
    found = aggregate.stragglers(parts, margin_pct=10.0)
    assert [s.part.device for s in found] == ["d4"]  # 90 is exactly 10% below 100: not beyond the margin
    assert math.isclose(found[0].below_pct, 10.1, rel_tol=1e-9)
    assert aggregate.stragglers(parts[:1], 10.0) == []
    failed = [PartResult("h", "x", status="failed"), parts[0]]
    assert aggregate.stragglers(failed, 10.0) == []
