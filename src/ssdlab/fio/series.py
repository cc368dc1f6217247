"""One fio run cut into samples: a continuous stimulus (PTS WSAT, HIR's preconditioning and returns to
baseline, XSR's access groups) without the idle gap separate fio runs leave between samples.

fio runs the whole series as one time-based job and prints a json+ status document every `period` seconds
(the sample length divided into parts of at most 1 s). Each document holds cumulative counters and latency
bins, so a sample is the difference between the document that closes it and the one that closed the
previous sample: exact I/O counts, bytes and latency histograms of the interval, with the interval's own run
time from fio's job clock. A sample is closed by the first document at or past its nominal end (less half a
period), so samples last the sample length give or take one period's jitter, and never overlap; the final
document closes the last sample. The document that closes a sample is stored with it (status.json), so each
sample is reproducible from fio's own output.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from ssdlab.fio.parse import io_runtime_ms, measurement_from_document
from ssdlab.results import hist
from ssdlab.results.bins import EMPTY, Bins
from ssdlab.results.model import DirectionStats, LatencyStats, Measurement, percentile_key

STATUS_FILE = "status.json"


def status_period(sample_s: float) -> float:
    """The status interval: the sample length in equal parts of at most one second (live progress keeps its
    pace, and a sample boundary is never more than half a second off)."""
    return sample_s / max(1, math.ceil(sample_s - 1e-9))


def _latency_delta(prev: LatencyStats | None, cur: LatencyStats | None) -> LatencyStats | None:
    if cur is None:
        return None
    if prev is None or prev.n == 0:
        return cur
    n = cur.n - prev.n
    if n <= 0:
        return None
    total = cur.mean_ns * cur.n - prev.mean_ns * prev.n
    squares = cur.n * (cur.stddev_ns ** 2 + cur.mean_ns ** 2) - prev.n * (prev.stddev_ns ** 2 + prev.mean_ns ** 2)
    mean = total / n
    std = math.sqrt(max(0.0, squares / n - mean * mean))
    bins: Bins = EMPTY
    pcts: dict[str, float] = {}
    lo, hi = cur.min_ns, cur.max_ns
    if cur.bins and prev.bins:
        counts = hist.counts_from_sparse(cur.bins) - hist.counts_from_sparse(prev.bins)
        counts[counts < 0] = 0
        bins = hist.sparse_bins(counts)
        if bins:
            pcts = {percentile_key(p): float(v) for p, v in
                    hist.percentiles(counts, [float(k) for k in cur.percentiles_ns] or [50.0]).items()}
            # the interval's extremes: the run's own when they moved in it, else its outermost buckets
            lo = cur.min_ns if cur.min_ns < prev.min_ns else float(hist.idx_to_value(bins[0][0]))
            hi = cur.max_ns if cur.max_ns > prev.max_ns else float(hist.idx_to_value(bins[-1][0]))
    return LatencyStats(kind=cur.kind, n=n, min_ns=lo, max_ns=hi, mean_ns=mean, stddev_ns=std, percentiles_ns=pcts,
                        bins=bins)


def interval(prev: Measurement | None, cur: Measurement) -> Measurement:
    """What happened between two cumulative measurements of one fio run (None: from its start)."""
    if prev is None:
        return cur
    runtime_ms = max(1, cur.runtime_ms - prev.runtime_ms)
    directions: dict[str, DirectionStats] = {}
    for name, d in cur.directions.items():
        p = prev.directions.get(name)
        ios = d.total_ios - (p.total_ios if p else 0)
        if ios <= 0:
            continue
        nbytes = d.io_bytes - (p.io_bytes if p else 0)
        dir_ms = max(1, d.runtime_ms - (p.runtime_ms if p else 0))
        directions[name] = DirectionStats(
            iops=ios * 1000.0 / dir_ms, bw_bytes=nbytes * 1000.0 / dir_ms, io_bytes=nbytes, total_ios=ios,
            runtime_ms=dir_ms, clat=_latency_delta(p.clat if p else None, d.clat),
            lat=_latency_delta(p.lat if p else None, d.lat))

    def cpu(a: float, b: float) -> float:  # fio's cumulative CPU percent over the run time
        return max(0.0, (b * cur.runtime_ms - a * prev.runtime_ms) / runtime_ms)

    return dataclasses.replace(cur, directions=directions, runtime_ms=runtime_ms,
                               usr_cpu=cpu(prev.usr_cpu, cur.usr_cpu), sys_cpu=cpu(prev.sys_cpu, cur.sys_cpu),
                               errors=max(0, cur.errors - prev.errors), series={}, extra={})


class SampleCutter:
    """Decides which status documents close samples of `count` samples of `sample_s` seconds each."""

    def __init__(self, sample_s: float, count: int) -> None:
        self.sample_ms = sample_s * 1000.0
        self.slack_ms = status_period(sample_s) * 500.0  # half a status period
        self.count = count
        self.closed = 0  # samples closed so far
        self.previous: Measurement | None = None  # cumulative measurement at the last boundary

    def feed(self, doc: Mapping[str, Any]) -> Measurement | None:
        """The sample a status document closes, or None (too early, or the last sample: the final document
        closes that one, see close)."""
        if self.closed >= self.count - 1 or not doc.get("jobs"):
            return None
        if io_runtime_ms(doc) < (self.closed + 1) * self.sample_ms - self.slack_ms:
            return None
        return self._take(measurement_from_document(doc))

    def close(self, final: Mapping[str, Any]) -> Measurement | None:
        """The last sample, from fio's final document (None when every sample was closed already)."""
        if self.closed >= self.count:
            return None
        cur = measurement_from_document(final)
        if self.previous is not None and not any(
                d.total_ios > (p.total_ios if p else 0)
                for name, d in cur.directions.items() for p in (self.previous.directions.get(name),)):
            return None  # nothing happened after the last boundary
        return self._take(cur)

    def _take(self, cur: Measurement) -> Measurement:
        sample = interval(self.previous, cur)
        self.previous = cur
        self.closed += 1
        return sample
