"""The metric registry: every name the comparison, the gate, JUnit, export, `ssdlab plot`, the characterization and
the SNIA PTS pages use resolves to one metric with its label, unit and direction, and reads the value those
consumers report from a stored point."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ssdlab import formatting, metrics
from ssdlab.compare import matching
from ssdlab.report import export
from ssdlab.report.characterization import metric_value as page_value
from ssdlab.results import hist
from ssdlab.results.aggregate import merge_latency
from ssdlab.results.model import (
    DirectionStats,
    LatencyStats,
    Measurement,
    PointResult,
    PointStatus,
    TestPoint,
    Workload,
)
from ssdlab.results.store import load_run
from ssdlab.suites.pts.common import metric_value as pts_value
from stored_runs import fixture_dirs


def _lat(values_ns: list[int]) -> LatencyStats:
    counts = hist.merge(*(hist.counts_from_sparse([(hist.value_to_idx(v), 1)]) for v in values_ns))
    return LatencyStats(kind="clat", n=len(values_ns), min_ns=min(values_ns), max_ns=max(values_ns),
                        mean_ns=sum(values_ns) / len(values_ns), stddev_ns=0.0, percentiles_ns={},
                        bins=tuple(hist.sparse(counts)))


def _point(dirs: dict[str, DirectionStats], status: PointStatus = "ok") -> PointResult:
    m = Measurement(engine="fio", engine_version="3.33", directions=dirs, usr_cpu=5.0, sys_cpu=10.0)
    return PointResult(point=TestPoint(id="p", label="p", workload=Workload(rw="randrw", bs=4096)), status=status,
                       started="", finished="", measurement=m)


READ = DirectionStats(300.0, 300.0 * 4096, 1, 3, 1000, clat=_lat([100_000, 100_000, 110_000]))
WRITE = DirectionStats(100.0, 100.0 * 4096, 1, 1, 1000, clat=_lat([900_000]))


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(("name", "canonical", "label", "unit", "higher"), [
    ("iops", "iops", "IOPS", "IOPS", True),
    ("read_bw_MBps", "read_bw_MBps", "read MB/s", "MB/s", True),
    ("write_lat_mean_us", "write_lat_mean_us", "write mean latency", "µs", False),
    ("p99.9_us", "p99_9_us", "p99.9 latency", "µs", False),
    ("read_p99.99_us", "read_p99_99_us", "read p99.99 latency", "µs", False),
    ("p99_999_us", "p99_999_us", "p99.999 latency", "µs", False),
    ("p95_us", "p95_us", "p95 latency", "µs", False),
    ("lat_max_us", "lat_max_us", "max latency", "µs", False),
    ("cpu", "cpu", "fio CPU", "%", False),
    ("mbps", "bw_MBps", "MB/s", "MB/s", True),
    ("art", "art", "ART", "µs", False),
    ("mrt", "mrt", "MRT", "µs", False),
    ("nines", "nines", "5 nines (99.999 %)", "µs", False),
])
def test_every_name_resolves(name: str, canonical: str, label: str, unit: str, higher: bool) -> None:
    m = metrics.get(name)
    assert (m.name, m.label, m.unit, m.higher_is_better) == (canonical, label, unit, higher)


def test_unknown_names_are_refused() -> None:
    for name in ("speed", "p99", "read_iops_us", "trim_iops", "pxx_us"):
        assert not metrics.is_metric(name)
        with pytest.raises(KeyError):
            metrics.get(name)


def test_compared_metrics_in_column_order() -> None:
    """What `ssdlab compare` judges (and its CSV lists in this order): the totals, then reads, then writes."""
    per = ["iops", "bw_MBps", "lat_mean_us", "p50_us", "p99_us", "p99_9_us", "p99_99_us", "p99_999_us", "lat_max_us"]
    assert tuple(f"{prefix}{n}" for prefix in ("", "read_", "write_") for n in per) == metrics.COMPARED
    assert set(metrics.MAIN) <= set(metrics.COMPARED)
    assert all(metrics.is_metric(n) for n in (*metrics.PLOTTED, *metrics.PTS))


def test_gate_names_are_the_compared_metrics() -> None:
    assert matching.metric_name("write_p99.99_us") == "write_p99_99_us"
    with pytest.raises(KeyError):
        matching.metric_name("cpu")  # a metric, but not one compare judges


# ---------------------------------------------------------------- values


def test_totals_add_directions_and_merge_bins() -> None:
    r = _point({"read": READ, "write": WRITE})
    merged = merge_latency([READ.clat, WRITE.clat])
    assert merged is not None
    assert metrics.value("iops", r) == 400.0
    assert metrics.value("bw_MBps", r) == 400.0 * 4096 / 1e6
    assert metrics.value("lat_mean_us", r) == merged.mean_ns / 1000.0
    assert metrics.value("p99_us", r) == merged.percentile(99.0) / 1000.0  # type: ignore[operator]
    assert metrics.value("lat_max_us", r) == 900.0
    assert metrics.value("read_iops", r) == 300.0
    assert metrics.value("write_p99.9_us", r) == metrics.value("write_p99_9_us", r)
    assert metrics.value("cpu", r) == 15.0


def test_snia_response_times_are_over_every_io() -> None:
    r = _point({"read": READ, "write": WRITE})
    assert metrics.value("art", r) == pytest.approx((100 + 100 + 110 + 900) / 4)
    assert metrics.value("mrt", r) == 900.0
    assert metrics.value("nines", r) == pytest.approx(900.0, rel=0.008)  # the slowest I/O's bucket
    assert metrics.value("art", r) == pytest.approx(metrics.value("lat_mean_us", r))


def test_what_was_not_measured_is_none() -> None:
    write_only = _point({"write": WRITE})
    assert metrics.value("read_iops", write_only) is None
    assert metrics.value("read_p99_us", write_only) is None
    assert metrics.value("iops", _point({})) is None
    assert metrics.value("iops", _point({"read": READ}, status="failed")) is None
    assert metrics.value("iops", None) is None
    assert metrics.values(metrics.COMPARED, _point({})) == {}


def test_pages_show_unissued_directions_as_zero_rates() -> None:
    """The characterization tables and `ssdlab plot` show a direction a point did not issue as 0 IOPS."""
    write_only = _point({"write": WRITE})
    assert page_value(write_only, "read_iops") == 0.0
    assert page_value(write_only, "read_p99_us") is None
    assert page_value(write_only, "nonsense") is None
    assert page_value(_point({"read": READ}, status="skipped"), "iops") is None


def test_pts_reads_positive_values_only() -> None:
    assert pts_value("iops", _point({"read": READ})) == 300.0
    assert pts_value("mbps", _point({"read": READ})) == metrics.value("bw_MBps", _point({"read": READ}))
    assert pts_value("art", _point({})) is None


# ---------------------------------------------------------------- the stored fixture runs


def _measured(path: Path) -> list[PointResult]:
    return [r for r in load_run(path).points if r.status == "ok" and r.measurement is not None]


@pytest.mark.parametrize("path", fixture_dirs(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_consumers_agree_on_the_fixture_runs(path: Path) -> None:
    """Compare, export, the PTS suites and the pages read the same numbers from the same stored points."""
    rows = {row["point"]: row for row in export.rows(load_run(path))}
    for r in _measured(path):
        found = matching.point_metrics(r)
        assert found == metrics.values(metrics.COMPARED, r)
        for d in ("read", "write"):
            for base in export.DIRECTION_METRICS:
                v = found.get(f"{d}_{base}")
                assert rows[r.point.id].get(f"{d}_{base}") == (None if v is None else round(v, 3))
        for name in metrics.PTS:
            v = metrics.value(name, r)
            assert pts_value(name, r) == (v if v is not None and v > 0 and math.isfinite(v) else None)
        for name in metrics.PLOTTED:
            v = metrics.value(name, r)
            assert page_value(r, name) == (0.0 if v is None and metrics.get(name).unit in ("IOPS", "MB/s") else v)
        if r.measurement is not None and r.measurement.directions.keys() <= {"read", "write"} and "iops" in found:
            assert metrics.value("mrt", r) == found.get("lat_max_us")
            assert metrics.value("art", r) == pytest.approx(found.get("lat_mean_us"), rel=1e-12)


@pytest.mark.parametrize(("name", "value", "text"), [
    ("iops", 1234.5, "1,234"), ("read_bw_MBps", 1234.56, "1,234.6"), ("p99_us", 12.345, "12.3"),
    ("lat_mean_us", 0.5, "0.50"), ("art", 1234.0, "1,234"), ("cpu", 12.6, "13"), ("iops", None, ""),
])
def test_each_metric_has_its_table_text(name: str, value: float | None, text: str) -> None:
    assert metrics.get(name).text(value) == text
    if value is not None and metrics.get(name).unit == "µs":
        assert metrics.get(name).text(value) == formatting.latency_us(value)
