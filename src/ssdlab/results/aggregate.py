"""Exact aggregates of measurements taken at the same time on several devices or hosts.

A point that ran on several devices stores each device's measurement (Measurement.parts) next to their
aggregate. Everything here is a pure function of stored measurements, used by the executors that build the
aggregate and by the renderers that break it down per host:

- IOPS, bandwidth, bytes and I/O counts are summed;
- latency distributions are merged by adding fio's histogram bins, and percentiles of the merge are computed
  from the added bins with fio's rule; means are weighted by sample counts and standard deviations pooled;
  percentiles are never averaged (without bins on every part, a merge has no percentiles at all);
- a straggler is a device whose result is more than a stated margin below the group's median.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ssdlab.results.bins import EMPTY, Bins
from ssdlab.results.model import DIRECTIONS, DirectionStats, LatencyStats, Measurement, PartResult, percentile_key

DEFAULT_STRAGGLER_MARGIN_PCT = 10.0


def merge_latency(stats: Sequence[LatencyStats | None]) -> LatencyStats | None:
    """One distribution from several: counts added, mean weighted by count, variance pooled, bins added."""
    from ssdlab.results import hist

    parts = [s for s in stats if s is not None and s.n > 0]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    n = sum(s.n for s in parts)
    mean = sum(s.mean_ns * s.n for s in parts) / n
    var = sum(s.n * (s.stddev_ns ** 2 + (s.mean_ns - mean) ** 2) for s in parts) / n
    bins: Bins = EMPTY
    pcts: dict[str, float] = {}
    if all(s.bins for s in parts):
        counts = hist.merge(*(hist.counts_from_sparse(s.bins) for s in parts))
        bins = hist.sparse_bins(counts)
        wanted = sorted({float(k) for s in parts for k in s.percentiles_ns})
        if wanted:
            # fio's rule ranks against the sample count; each part's n may exceed its bins' sum by one
            found = hist.percentiles(counts, wanted, total=min(n, int(counts.sum())))
            pcts = {percentile_key(p): float(v) for p, v in found.items()}
    return LatencyStats(kind=parts[0].kind, n=n, min_ns=min(s.min_ns for s in parts),
                        max_ns=max(s.max_ns for s in parts), mean_ns=mean, stddev_ns=math.sqrt(max(var, 0.0)),
                        percentiles_ns=pcts, bins=bins)


def merge_direction(stats: Sequence[DirectionStats]) -> DirectionStats:
    """One direction over several devices: rates and amounts summed, latencies merged by bins."""
    return DirectionStats(
        iops=sum(d.iops for d in stats), bw_bytes=sum(d.bw_bytes for d in stats),
        io_bytes=sum(d.io_bytes for d in stats), total_ios=sum(d.total_ios for d in stats),
        runtime_ms=max((d.runtime_ms for d in stats), default=0),
        clat=merge_latency([d.clat for d in stats]), lat=merge_latency([d.lat for d in stats]),
    )


def merge(measurements: Sequence[Measurement], parts: tuple[PartResult, ...] = ()) -> Measurement:
    """The exact aggregate of measurements taken at the same time (e.g. one host's devices, or all hosts).

    CPU figures are weighted by each measurement's job count; `parts` is stored with the aggregate."""
    ms = list(measurements)
    if not ms:
        raise ValueError("nothing to merge")
    directions: dict[str, DirectionStats] = {}
    for d in DIRECTIONS:
        found = [m.directions[d] for m in ms if d in m.directions]
        if found:
            directions[d] = merge_direction(found)
    jobs = sum(max(1, m.jobs) for m in ms)
    return Measurement(
        engine=ms[0].engine, engine_version=ms[0].engine_version, directions=directions,
        usr_cpu=sum(m.usr_cpu * max(1, m.jobs) for m in ms) / jobs,
        sys_cpu=sum(m.sys_cpu * max(1, m.jobs) for m in ms) / jobs,
        jobs=jobs, runtime_ms=max(m.runtime_ms for m in ms), errors=sum(m.errors for m in ms), parts=parts,
    )


@dataclass(frozen=True)
class HostShare:
    """One host's part of a group point: the merge of its measured devices, and the devices that failed."""

    host: str
    devices: tuple[PartResult, ...]
    measurement: Measurement | None

    @property
    def failed(self) -> tuple[PartResult, ...]:
        return tuple(p for p in self.devices if p.status != "ok" or p.measurement is None)


def by_host(parts: Sequence[PartResult]) -> list[HostShare]:
    """Parts grouped by host in the order they appear, each host's measured devices merged exactly."""
    order: list[str] = []
    grouped: dict[str, list[PartResult]] = {}
    for p in parts:
        if p.host not in grouped:
            order.append(p.host)
            grouped[p.host] = []
        grouped[p.host].append(p)
    out = []
    for host in order:
        devs = grouped[host]
        measured = [p.measurement for p in devs if p.status == "ok" and p.measurement is not None]
        out.append(HostShare(host=host, devices=tuple(devs), measurement=merge(measured) if measured else None))
    return out


def total_iops(m: Measurement) -> float:
    return m.total_iops


def total_mbps(m: Measurement) -> float:
    return m.total_bw_bytes / 1e6


@dataclass(frozen=True)
class Straggler:
    part: PartResult
    value: float
    median: float

    @property
    def below_pct(self) -> float:
        """How far below the median, in percent of it."""
        return 100.0 * (self.median - self.value) / self.median if self.median else 0.0


def stragglers(parts: Sequence[PartResult], margin_pct: float = DEFAULT_STRAGGLER_MARGIN_PCT,
               metric: Callable[[Measurement], float] = total_iops) -> list[Straggler]:
    """Devices whose metric is more than `margin_pct` percent below the median of the measured devices (a
    group of fewer than two measured devices has none). Every device runs the same workload, so IOPS and
    throughput rank devices alike."""
    measured = [(p, metric(p.measurement)) for p in parts if p.status == "ok" and p.measurement is not None]
    if len(measured) < 2:
        return []
    median = statistics.median(v for _, v in measured)
    limit = median * (1.0 - margin_pct / 100.0)
    return [Straggler(p, v, median) for p, v in measured if v < limit]
