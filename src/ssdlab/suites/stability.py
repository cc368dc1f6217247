"""Stability (ezFIO test 6): 4K random 70/30 at high load for a set time, judged on per-second IOPS.

The statistics are ezFIO's spreadsheet ones: mean, sample standard deviation and coefficient of variation
(stdev / mean) of the per-second total IOPS (the P5430 review reports CoV 1.05 %). Per-second p99 latency
comes from fio's clat histogram logs (one line per second per job: time_ms, ddir, bs, 1856 bucket counts of
that interval); the buckets of all jobs are summed per second and fio's own percentile rule is applied
(ssdlab.fio.hist), never an average of per-job percentiles.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StabilityStats:
    samples: int
    mean: float
    stdev: float
    cov_pct: float
    minimum: float
    maximum: float
    p1: float  # 1st percentile of per-second IOPS (the slow seconds)


def iops_stats(values: Sequence[float]) -> StabilityStats | None:
    """Mean, sample stdev, CoV % (stdev/mean), min, max and 1st percentile of per-second IOPS."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    n = len(xs)
    mean = sum(xs) / n
    var = sum((x - mean) ** 2 for x in xs) / (n - 1) if n > 1 else 0.0
    sd = math.sqrt(var)
    ordered = sorted(xs)
    p1 = ordered[min(n - 1, max(0, math.ceil(0.01 * n) - 1))]
    return StabilityStats(samples=n, mean=mean, stdev=sd, cov_pct=(sd / mean * 100.0) if mean else 0.0,
                          minimum=ordered[0], maximum=ordered[-1], p1=p1)


def total_iops_series(series: Mapping[str, Sequence[float]]) -> list[float]:
    """Per-interval read+write IOPS from a Measurement.series."""
    reads = list(series.get("read_iops", ()))
    writes = list(series.get("write_iops", ()))
    n = max(len(reads), len(writes))
    return [(reads[i] if i < len(reads) else 0.0) + (writes[i] if i < len(writes) else 0.0) for i in range(n)]


def complete_seconds(values: Sequence[float], times: Sequence[float]) -> tuple[list[float], list[float]]:
    """Per-second values without the final interval: fio closes it early at the end of the run, so it covers
    less than a full interval (read_series already drops a tail that only some jobs logged)."""
    n = min(len(values), len(times)) if times else len(values)
    keep = n - 1 if n > 2 else n
    return list(values[:keep]), list(times[:keep]) if times else [float(i + 1) for i in range(keep)]


def per_interval_percentiles(point_dir: Path, files: Sequence[str], interval_ms: int = 1000,
                             percentile: float = 99.0) -> dict[str, list[tuple[float, float]]]:
    """{'read'|'write'|'all': [(time_s, p_us), ...]} from fio clat histogram logs, all jobs summed per interval
    (ssdlab.histlog's streaming parser, fio's percentile rule)."""
    paths = [point_dir / name for name in files if (point_dir / name).is_file()]
    if not paths:
        return {}
    from ssdlab import histlog

    out: dict[str, list[tuple[float, float]]] = {}
    for iv in histlog.iter_intervals(paths, interval_ms, mode="fio", directions=("read", "write", "all"),
                                     log_ms=interval_ms):
        if iv.samples <= 0:
            continue
        value = iv.percentiles([percentile])[percentile]
        out.setdefault(iv.direction, []).append((iv.end_ms / 1000.0, value / 1000.0))
    return out


