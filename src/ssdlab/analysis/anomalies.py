"""Latency outliers: a point whose slowest I/O took far longer than its typical one had a stall.

A drive that pauses (firmware housekeeping, a thermal or power event, an injected fault) leaves one or a
few I/Os that wait for the whole pause while the rest are fast. Averages and even p99 hide it; the maximum
does not. A point is flagged when its slowest I/O took at least STALL_MIN_NS and at least STALL_RATIO times
its median, per direction, from the stored latency distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

from ssdlab.results.model import Measurement

STALL_MIN_NS = 50e6  # 50 ms: no healthy SSD I/O takes this long; a spinning disk's seek is < 20 ms
STALL_RATIO = 100.0


@dataclass(frozen=True)
class Outlier:
    direction: str
    max_ns: float
    median_ns: float

    @property
    def ratio(self) -> float:
        return self.max_ns / self.median_ns if self.median_ns else float("inf")

    def describe(self) -> str:
        return (f"latency outlier: the slowest {self.direction} took {self.max_ns / 1e6:,.1f} ms, "
                f"{self.ratio:,.0f}x the median ({self.median_ns / 1e3:,.1f} µs): the device (or the path "
                "to it) stalled during this point")


def latency_outliers(m: Measurement) -> list[Outlier]:
    """Directions of `m` whose slowest I/O is a stall by the rule above."""
    out = []
    for name, d in m.directions.items():
        lat = d.clat or d.lat
        if lat is None or lat.n <= 0 or lat.max_ns < STALL_MIN_NS:  # (no stall: spare expanding the bins)
            continue
        median = lat.percentile(50)
        if median is None or median <= 0:
            continue
        if lat.max_ns >= STALL_RATIO * median:
            out.append(Outlier(direction=name, max_ns=lat.max_ns, median_ns=median))
    return out


def latency_warnings(m: Measurement) -> list[str]:
    return [o.describe() for o in latency_outliers(m)]
