"""The shared latency distribution (report/latency.py): confidence levels from fio's bins with fio's rule, bins
added across directions (never averaged percentiles), CDF/exceedance/histogram arrays, and the chart."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ssdlab.report import latency
from ssdlab.results import hist
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, PointResult, TestPoint, Workload

US = 1000


def counts_at(pairs: dict[int, int]) -> hist.Counts:
    """Counts with `n` samples at each latency (ns)."""
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for value, n in pairs.items():
        c[hist.value_to_idx(value)] += n
    return c


# 100,000 I/Os, cumulative 99,010 / 99,901 / 99,991 / 99,999 / 100,000: each level falls in one decade
DECADES = {10 * US: 99_010, 100 * US: 891, 1000 * US: 90, 10_000 * US: 8, 100_000 * US: 1}


def rep(value_ns: int) -> int:
    return hist.idx_to_value(hist.value_to_idx(value_ns))


def test_levels_follow_fio_rule_and_count_the_tail() -> None:
    d = latency.Distribution("x", counts_at(DECADES))
    levels = {lv.pct: lv for lv in latency.confidence_levels(d)}
    assert levels[99.0].value_ns == rep(10 * US)
    assert levels[99.9].value_ns == rep(100 * US)
    assert levels[99.99].value_ns == rep(1000 * US)
    assert levels[99.999].value_ns == rep(10_000 * US)
    assert [levels[p].beyond for p in (99.0, 99.9, 99.99, 99.999)] == [990, 99, 9, 1]
    assert levels[99.999].resolved  # 100,000 I/Os resolve 5 nines (one I/O beyond)
    assert not levels[99.9999].resolved  # but not 6
    found = hist.percentiles(d.counts, list(latency.LEVELS))
    assert all(lv.value_ns == found[lv.pct] for lv in levels.values())


def test_levels_are_clamped_to_the_recorded_maximum() -> None:
    d = latency.Distribution("x", counts_at({150_000: 10}), max_ns=150_100.0)
    assert hist.percentiles(d.counts, [50])[50] > 150_100  # the bucket's middle lies above the sample
    assert latency.confidence_levels(d, [50])[0].value_ns == 150_100


def _point(read_bins: dict[int, int], write_bins: dict[int, int]) -> PointResult:
    def stats(b: dict[int, int], mean: float) -> DirectionStats:
        c = counts_at(b)
        n = int(c.sum())
        lat = LatencyStats(kind="clat", n=n, min_ns=min(b), max_ns=float(max(b)), mean_ns=mean, stddev_ns=0.0,
                           percentiles_ns={}, bins=tuple(hist.sparse(c)))
        return DirectionStats(iops=n, bw_bytes=0, io_bytes=0, total_ios=n, runtime_ms=1000, clat=lat)

    m = Measurement(engine="fio", engine_version="3.33", directions={"read": stats(read_bins, 50_000.0),
                                                                      "write": stats(write_bins, 20_000.0)})
    return PointResult(point=TestPoint(id="p", label="p", workload=Workload(rw="randrw", bs=4096)), status="ok",
                       started="", finished="", measurement=m)


def test_point_distribution_adds_bins_instead_of_averaging_percentiles() -> None:
    pr = _point({50 * US: 899, 5000 * US: 101}, {20 * US: 9000})
    both = latency.point_distribution(pr)
    reads = latency.point_distribution(pr, "read")
    writes = latency.point_distribution(pr, "write")
    assert both is not None
    assert reads is not None
    assert writes is not None
    assert both.n == 10_000
    assert np.array_equal(both.counts, reads.counts + writes.counts)
    assert both.mean_ns == (50_000.0 * 1000 + 20_000.0 * 9000) / 10_000  # fio's exact means, I/O-weighted
    p99 = {lv.pct: lv.value_ns for lv in latency.confidence_levels(both, [99.0])}[99.0]
    assert p99 == 5000 * US  # 101 slow reads are just over 1 % of all I/Os (the bucket, clamped to the max)
    avg_of_p99 = (latency.confidence_levels(reads, [99.0])[0].value_ns
                  + latency.confidence_levels(writes, [99.0])[0].value_ns) / 2
    assert p99 != avg_of_p99
    assert latency.point_distribution(_point({10: 1}, {10: 1}), "trim") is None


def test_cdf_and_histogram_arrays() -> None:
    d = latency.Distribution("x", counts_at(DECADES))
    uppers, frac = latency.cdf(d)
    assert frac[-1] == 1.0
    assert np.all(np.diff(frac) >= 0)
    assert np.all(np.diff(uppers) > 0)
    edges, pct = latency.binned(d)
    assert len(edges) == len(pct) + 1
    assert abs(pct.sum() - 100.0) < 1e-9
    assert edges[0] <= 10 * US <= edges[1] + 1e6  # starts at the fastest I/O's bin


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.integers(min_value=0, max_value=hist.PLAT_NR - 1), st.integers(min_value=1, max_value=10**6),
                       min_size=1, max_size=40))
def test_levels_match_fio_rule_for_any_histogram(sparse: dict[int, int]) -> None:
    c = np.zeros(hist.PLAT_NR, dtype=np.int64)
    for i, n in sparse.items():
        c[i] = n
    d = latency.Distribution("x", c)
    total = int(c.sum())
    for lv in latency.confidence_levels(d):
        assert lv.value_ns == hist.percentiles(c, [lv.pct])[lv.pct]
        idx = hist.value_to_idx(lv.value_ns)
        # at most (1 - p) of the I/Os lie beyond the level's bucket, and its bucket crosses that share
        assert lv.beyond <= total * (1 - lv.pct / 100) + 1e-9
        assert lv.beyond + int(c[idx]) >= total * (1 - lv.pct / 100) - 1e-9


def test_charts_render_with_levels_and_markers() -> None:
    d = latency.Distribution("MaxIOPS", counts_at(DECADES), mean_ns=11_000.0, max_ns=100_000_000.0)
    small = latency.Distribution("MinIOPS", counts_at({8 * US: 50, 9 * US: 50}))
    svg = latency.distribution_chart([d, small], title="t")
    assert svg.startswith("<svg")
    assert "3 nines" in svg
    assert "5 nines" in svg
    assert "Exceedance" in svg
    conf = latency.confidence_chart([d, small])
    assert "p99.999" in conf
    assert "MaxIOPS" in conf
    header, rows = latency.level_rows([d, small])
    assert header[1] == "I/Os (N)"
    assert rows[0][1] == "100,000"
    assert rows[1][-2].endswith("*")  # 6 nines of 100 I/Os: unresolved, marked


def test_points_html_charts_the_longest_tails_and_tables_every_point() -> None:
    points = [_point({(10 + i) * US: 1000, (100 + 50 * i) * US: 10}, {20 * US: 1000}) for i in range(8)]
    points = [dataclass_replace_label(p, f"point {i}") for i, p in enumerate(points)]
    body = latency.points_html(points, caption="c", limit=3)
    assert body.count("<svg") == 1
    assert "3 of 8 points with the longest 99.99th percentile" in body
    assert all(f"point {i}" in body for i in range(8))  # the table lists every point
    assert latency.points_html([]) == ""


def dataclass_replace_label(pr: PointResult, label: str) -> PointResult:
    import dataclasses

    return dataclasses.replace(pr, point=dataclasses.replace(pr.point, label=label))


def test_distribution_charts_join_the_report_batch_with_their_own_ids() -> None:
    import re

    from ssdlab.report import charts

    d = latency.Distribution("MaxIOPS", counts_at(DECADES), mean_ns=11_000.0, max_ns=100_000_000.0)
    plain = latency.distribution_chart([d], title="t")
    with charts.deferred() as batch:
        parts = [latency.distribution_chart([d], title="t"), latency.distribution_chart([d], title="t")]
    assert all(p.startswith("<!--ssdlab-chart:") for p in parts)
    page = batch.fill("".join(parts))
    ids = re.findall(r'\bid="([^"]+)"', page)
    assert len(ids) == len(set(ids)) > 10
    assert re.sub(r"chart\d+-", "", page) == plain + plain
