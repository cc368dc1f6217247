"""Stability (ezFIO test 6): 4K random 70/30 at high load for a set time, judged on per-second IOPS.

The statistics are ezFIO's spreadsheet ones: mean, sample standard deviation and coefficient of variation
(stdev / mean) of the per-second total IOPS (the P5430 review reports CoV 1.05 %). Per-second p99 latency
comes from fio's clat histogram logs (one line per second per job: time_ms, ddir, bs, 1856 bucket counts of
that interval); the buckets of all jobs are summed per second and fio's own percentile rule is applied
(ssdlab.results.hist), never an average of per-job percentiles.

Limits (optional, `--cov-limit PCT` / `--p99-limit US` or `cov_limit_pct` / `p99_limit_us` in the suite file)
make the run a pass/fail verdict (verdict.py): the CoV of per-second IOPS and the p99 of every I/O of the
measured window (read and write bins added) must not exceed them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.results.events import VerdictEvent
from ssdlab.results.model import Measurement, PointResult


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


def consistency(series: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Intel's consistency figure per direction with I/Os: the 0.1st percentile of the per-second IOPS over their
    mean (the DC S3500's promise: 99.9 % of 1-s samples at >= 90 % of the mean read IOPS, >= 75 % of write)."""
    out: dict[str, float] = {}
    for d in ("read", "write"):
        values, _ = complete_seconds(list(series.get(f"{d}_iops", ())), list(series.get("time_s", ())))
        if not values or not any(values):
            continue
        ordered = sorted(values)
        low = ordered[min(len(ordered) - 1, max(0, math.ceil(0.001 * len(ordered)) - 1))]
        out[d] = low / (sum(values) / len(values))
    return out


def complete_seconds(values: Sequence[float], times: Sequence[float]) -> tuple[list[float], list[float]]:
    """Per-second values without the final interval: fio closes it early at the end of the run, so it covers
    less than a full interval (read_series already drops a tail that only some jobs logged)."""
    n = min(len(values), len(times)) if times else len(values)
    keep = n - 1 if n > 2 else n
    return list(values[:keep]), list(times[:keep]) if times else [float(i + 1) for i in range(keep)]


def per_interval_percentiles(point_dir: Path, files: Sequence[str], interval_ms: int = 1000,
                             percentile: float = 99.0) -> dict[str, list[tuple[float, float]]]:
    """{'read'|'write'|'all': [(time_s, p_us), ...]} from fio clat histogram logs, all jobs summed per interval
    (ssdlab.fio.histlog's streaming parser, fio's percentile rule)."""
    paths = [point_dir / name for name in files if (point_dir / name).is_file()]
    if not paths:
        return {}
    from ssdlab.fio import histlog

    out: dict[str, list[tuple[float, float]]] = {}
    for iv in histlog.iter_intervals(paths, interval_ms, mode="fio", directions=("read", "write", "all"),
                                     log_ms=interval_ms):
        if iv.samples <= 0:
            continue
        value = iv.percentiles([percentile])[percentile]
        out.setdefault(iv.direction, []).append((iv.end_ms / 1000.0, value / 1000.0))
    return out




def window_p99_us(m: Measurement) -> float | None:
    """p99 of every I/O of the measured window (read and write bins added; clamped to the observed max), µs."""
    from ssdlab.results import hist

    lats = [d.clat for d in m.directions.values() if d.clat is not None and d.clat.n > 0 and d.clat.bins]
    if not lats:
        return None
    counts = hist.counts_from_sparse(lats[0].bins)
    for c in lats[1:]:
        counts = counts + hist.counts_from_sparse(c.bins)
    value = float(hist.percentiles(counts, [99.0])[99.0])
    return min(max(value, min(c.min_ns for c in lats)), max(c.max_ns for c in lats)) / 1000.0


def point_verdict(r: PointResult, cov_limit_pct: float | None, p99_limit_us: float | None) -> VerdictEvent:
    """The verdict event of one stability point: pass/fail against the limits that are set (CoV of per-second
    IOPS, p99 of the window), complete when none is, incomplete without per-second samples."""
    from ssdlab.results import verdict

    test, title = r.point.group or "stability", r.point.label
    m = r.measurement
    if r.status != "ok" or m is None:
        return verdict.verdict_event(test, title, "incomplete", f"the point is {r.status}: {r.reason}")
    series = {k: list(v) for k, v in m.series.items()}
    total, _ = complete_seconds(total_iops_series(series), list(series.get("time_s", [])))
    st = iops_stats(total)
    if st is None:
        return verdict.verdict_event(test, title, "incomplete", "no per-second IOPS samples were recorded")
    p99 = window_p99_us(m)
    steady = consistency(series)
    facts = _facts(st, p99, steady, cov_limit_pct, p99_limit_us)
    extra: dict[str, Any] = {"cov_pct": st.cov_pct, "p99_us": p99, **{f"consistency_{d}": v for d, v in steady.items()}}
    if cov_limit_pct is None and p99_limit_us is None:
        return verdict.verdict_event(test, title, "complete", "; ".join(facts) + "; no limit set (--cov-limit, "
                                     "--p99-limit)", **extra)
    failed = []
    if cov_limit_pct is not None and st.cov_pct > cov_limit_pct:
        failed.append("CoV above its limit")
    if p99_limit_us is not None and (p99 is None or p99 > p99_limit_us):
        failed.append("p99 above its limit" if p99 is not None else "no p99 (no latency bins)")
    return verdict.verdict_event(test, title, "fail" if failed else "pass", "; ".join(failed + facts), **extra)


def _facts(st: StabilityStats, p99: float | None, steady: Mapping[str, float], cov_limit_pct: float | None,
           p99_limit_us: float | None) -> list[str]:
    """What a stability verdict states: the CoV, Intel's consistency figure per direction, the window's p99."""
    facts = [f"CoV {st.cov_pct:.2f}% of per-second IOPS over {st.samples} s"
             + (f" (limit {cov_limit_pct:g}%)" if cov_limit_pct is not None else "")]
    if steady:
        facts.append("IOPS consistency (Intel's figure: the 0.1st percentile of 1-s IOPS / their mean): "
                     + ", ".join(f"{d} {v * 100:.1f}%" for d, v in steady.items()))
    if p99 is not None:
        facts.append(f"p99 {p99:,.1f} µs" + (f" (limit {p99_limit_us:g} µs)" if p99_limit_us is not None else ""))
    return facts
