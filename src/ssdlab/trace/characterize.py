"""What a storage engineer looks at first in a trace (`ssdlab trace info`): I/O count and duration, read/write
mix by count and bytes, the size histogram, the inter-arrival distribution, the queue depth the trace's own
response times imply (where it has them), sequentiality, footprint and skew. Pure statistics over a Trace:
numpy only, no I/O; `characterize` returns one Characterization whose `as_dict` is the JSON form."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ssdlab.trace.model import OP_NAMES, Trace

SKEW_BLOCK = 4096  # skew and footprint blocks: bytes
SEQ_WINDOW = 8  # "sequential within N streams": an I/O that starts where one of the last N ended
PCTS = (50.0, 90.0, 99.0, 99.9)
I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Direction:
    ios: int
    bytes: int
    share_ios: float  # of all I/Os, 0..1
    share_bytes: float


@dataclass(frozen=True)
class Characterization:
    path: str
    format: str
    ios: int
    duration_s: float
    iops: float  # mean arrival rate over the trace
    mbps: float  # mean bytes per second / 1e6
    directions: dict[str, Direction]
    sizes: list[tuple[int, int]]  # (bytes, I/Os), most common first (at most SIZES_LISTED)
    size_buckets: list[tuple[int, int]]  # (upper bound in bytes, a power of two; I/Os in (bound/2, bound])
    mean_size: float
    interarrival_us: dict[str, float]  # mean, cov, p50, p90, p99, p99.9, max, zero share
    sequential: dict[str, float]  # share of I/Os: previous, same_direction, window
    footprint_bytes: int  # distinct bytes touched
    footprint_read_bytes: int
    footprint_write_bytes: int
    extent_bytes: int  # highest byte addressed
    skew: dict[str, float]  # share of I/Os on the hottest 1 % / 10 % of the touched 4 KiB blocks
    touched_blocks: int
    qd: dict[str, float] | None  # implied by response times: mean, p50, p99, max (time-weighted); None without
    latency_us: dict[str, dict[str, float]] | None  # the trace's own response times per direction
    latency_coverage: float  # share of I/Os that have a response time
    volumes: list[tuple[str, int]]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sizes"] = [list(x) for x in self.sizes]
        out["size_buckets"] = [list(x) for x in self.size_buckets]
        out["volumes"] = [list(x) for x in self.volumes]
        return out


SIZES_LISTED = 16


def characterize(trace: Trace) -> Characterization:
    """The trace's characterization (an empty trace has zeros)."""
    n = len(trace)
    dur = trace.duration_ns / 1e9
    counts = trace.counts()
    total_b = sum(b for _, b in counts.values())
    directions = {name: Direction(c, b, c / n if n else 0.0, b / total_b if total_b else 0.0)
                  for name, (c, b) in counts.items()}
    lat, coverage = _latencies(trace)
    hot, touched = skew(trace)
    return Characterization(
        path=trace.path, format=trace.format, ios=n, duration_s=dur,
        iops=(n - 1) / dur if dur > 0 else 0.0, mbps=total_b / dur / 1e6 if dur > 0 else 0.0,
        directions=directions, sizes=_sizes(trace), size_buckets=_size_buckets(trace),
        mean_size=float(trace.size.mean()) if n else 0.0, interarrival_us=interarrival(trace.time_ns),
        sequential=sequentiality(trace), footprint_bytes=footprint(trace),
        footprint_read_bytes=footprint(trace, trace.op == 0),
        footprint_write_bytes=footprint(trace, trace.op != 0),
        extent_bytes=trace.max_end, skew=hot, touched_blocks=touched,
        qd=implied_qd(trace), latency_us=lat, latency_coverage=coverage,
        volumes=trace.volume_counts()[:20], notes=list(trace.notes))


def _sizes(trace: Trace) -> list[tuple[int, int]]:
    if not len(trace):
        return []
    values, counts = np.unique(trace.size, return_counts=True)
    order = np.argsort(-counts, kind="stable")[:SIZES_LISTED]
    return [(int(values[i]), int(counts[i])) for i in order]


def _size_buckets(trace: Trace) -> list[tuple[int, int]]:
    if not len(trace):
        return []
    exp = np.ceil(np.log2(np.maximum(trace.size, 1))).astype(np.int64)
    values, counts = np.unique(exp, return_counts=True)
    return [(int(1 << int(v)), int(c)) for v, c in zip(values, counts, strict=True)]


def _pcts(values: npt.NDArray[Any], scale: float) -> dict[str, float]:
    if values.size == 0:
        return {}
    q = np.percentile(values, PCTS, method="inverted_cdf")
    out = {f"p{p:g}": float(v) / scale for p, v in zip(PCTS, q, strict=True)}
    out["mean"] = float(values.mean()) / scale
    out["max"] = float(values.max()) / scale
    return out


def interarrival(time_ns: I64) -> dict[str, float]:
    """Gaps between consecutive arrivals in µs: mean, p50/p90/p99/p99.9, max, coefficient of variation (1 for
    Poisson arrivals, above for bursts) and the share of zero gaps (I/Os that arrive together)."""
    if time_ns.shape[0] < 2:
        return {}
    gaps = np.diff(time_ns)
    out = _pcts(gaps, 1000.0)
    mean = float(gaps.mean())
    out["cov"] = float(gaps.std()) / mean if mean > 0 else 0.0
    out["zero_share"] = float(np.count_nonzero(gaps == 0)) / gaps.shape[0]
    return out


def _volume_base(trace: Trace) -> I64:
    """An offset added per volume so that volumes never share addresses (2^50 bytes apart)."""
    if trace.volume is None:
        return np.zeros(len(trace), dtype=np.int64)
    return trace.volume.astype(np.int64) << 50


def sequentiality(trace: Trace) -> dict[str, float]:
    """Share of I/Os that start where an earlier one ended, in the same volume: the previous I/O
    (`previous`), the previous I/O of the same direction (`same_direction`, how fio's sequential I/O follows
    its direction's last), or one of the last SEQ_WINDOW I/Os (`window`: interleaved sequential streams)."""
    n = len(trace)
    if n < 2:
        return {"previous": 0.0, "same_direction": 0.0, "window": 0.0}
    start = trace.offset + _volume_base(trace)
    end = start + trace.size
    prev = np.zeros(n, dtype=bool)
    prev[1:] = start[1:] == end[:-1]
    window = prev.copy()
    for k in range(2, SEQ_WINDOW + 1):
        window[k:] |= start[k:] == end[:-k]
    same = np.zeros(n, dtype=bool)
    for d in range(3):
        idx = np.flatnonzero(trace.op == d)
        if idx.size > 1:
            same[idx[1:]] = start[idx[1:]] == end[idx[:-1]]
    return {"previous": float(prev.mean()), "same_direction": float(same.mean()), "window": float(window.mean())}


def footprint(trace: Trace, select: npt.NDArray[np.bool_] | None = None) -> int:
    """Distinct bytes the (selected) I/Os touch: the union of their [offset, offset + size) ranges."""
    start = trace.offset + _volume_base(trace)
    if select is not None:
        start = start[select]
        size = trace.size[select]
    else:
        size = trace.size
    if start.size == 0:
        return 0
    order = np.argsort(start, kind="stable")
    s = start[order]
    e = s + size[order]
    reach = np.maximum.accumulate(e)  # the furthest byte covered by this range or any before it
    covered_before = np.empty_like(reach)
    covered_before[0] = s[0]
    covered_before[1:] = reach[:-1]
    return int(np.sum(np.maximum(0, e - np.maximum(s, covered_before))))


def block_counts(trace: Trace, block: int = SKEW_BLOCK) -> I64:
    """I/Os per touched block (an I/O counts in the block its first byte is in), in no particular order."""
    if not len(trace):
        return np.zeros(0, dtype=np.int64)
    key = (trace.offset // block) + (_volume_base(trace) // block)
    _, counts = np.unique(key, return_counts=True)
    out: I64 = counts.astype(np.int64)
    return out


def hot_shares(counts: I64) -> dict[str, float]:
    """Share of I/Os on the hottest 1 % and 10 % of the touched blocks (at least one block each)."""
    total = int(counts.sum())
    if total == 0:
        return {"hot1": 0.0, "hot10": 0.0}
    desc = np.sort(counts)[::-1]
    cum = np.cumsum(desc)
    out = {}
    for name, frac in (("hot1", 0.01), ("hot10", 0.10)):
        k = max(1, math.ceil(desc.shape[0] * frac))
        out[name] = float(cum[k - 1]) / total
    return out


def skew(trace: Trace) -> tuple[dict[str, float], int]:
    counts = block_counts(trace)
    return hot_shares(counts), int(counts.shape[0])


def _latencies(trace: Trace) -> tuple[dict[str, dict[str, float]] | None, float]:
    if trace.latency_ns is None or not len(trace):
        return None, 0.0
    have = trace.latency_ns >= 0
    out = {}
    for d, name in enumerate(OP_NAMES):
        sel = have & (trace.op == d)
        if bool(sel.any()):
            out[name] = _pcts(trace.latency_ns[sel], 1000.0)
    return out, float(have.mean())


def implied_qd(trace: Trace) -> dict[str, float] | None:
    """The queue depth the trace's own response times imply: I/Os in flight over time, time-weighted (mean,
    p50, p99, max), from the I/Os that have a response time; None when none has."""
    if trace.latency_ns is None:
        return None
    have = trace.latency_ns >= 0
    if not bool(have.any()):
        return None
    t = trace.time_ns[have]
    done = t + trace.latency_ns[have]
    times = np.concatenate([t, done])
    step = np.concatenate([np.ones(t.shape[0], np.int64), -np.ones(t.shape[0], np.int64)])
    order = np.lexsort((step, times))  # at one instant, completions (-1) before arrivals
    times, step = times[order], step[order]
    depth = np.cumsum(step)
    span = np.diff(times)
    total = float(span.sum())
    if total <= 0:
        return {"mean": 0.0, "p50": 0.0, "p99": 0.0, "max": float(depth.max())}
    level = depth[:-1]
    order = np.argsort(level, kind="stable")
    cum = np.cumsum(span[order]) / total
    def at(q: float) -> float:
        return float(level[order][min(int(np.searchsorted(cum, q)), level.shape[0] - 1)])
    return {"mean": float(np.sum(level * span)) / total, "p50": at(0.5), "p99": at(0.99), "max": float(depth.max())}
