"""Experiments on the native core for `ssdlab sim validate`: a preset's drive in a known state, workloads run on
it, and the figures read from the results (IOPS, bandwidth, latency percentiles from the fio-style bins, per-second
series). No run directory: each experiment is a few calls on one Device.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ssdlab.results import hist
from ssdlab.sim import core
from ssdlab.sim.presets import core_params, resolve


@dataclass
class Point:
    """One workload's result: the core's finish() dict and the summary Bench.run derives from it."""

    result: dict[str, Any]
    iops: float
    secs: float
    wa_gc: float
    power_w: float

    def dir_iops(self, d: int) -> float:
        """IOPS of one direction (0 read, 1 write)."""
        return float(self.result["dirs"][d][0]) / self.secs if self.secs > 0 else 0.0

    def bw(self) -> float:
        """Bytes per second, every direction."""
        return sum(float(x[1]) for x in self.result["dirs"]) / self.secs if self.secs > 0 else 0.0

    def counts(self, dirs: Sequence[int] = (0, 1)) -> np.ndarray:
        """The latency bins of these directions, added."""
        out = np.zeros(hist.PLAT_NR, dtype=np.int64)
        for d in dirs:
            out += np.frombuffer(self.result["dirs"][d][6], dtype=np.int64)
        return out

    def pct_us(self, p: float, dirs: Sequence[int] = (0, 1)) -> float:
        """A latency percentile (fio's rule on the bins), µs."""
        c = self.counts(dirs)
        return float(hist.percentiles(c, [p])[p]) / 1000.0 if c.sum() else 0.0

    def mean_us(self, d: int) -> float:
        """Mean latency of one direction, µs."""
        n, _, lat_sum = self.result["dirs"][d][:3]
        return float(lat_sum) / n / 1000.0 if n else 0.0

    def max_us(self, dirs: Sequence[int] = (0, 1)) -> float:
        """The longest latency of these directions, µs."""
        return max(float(self.result["dirs"][d][5]) for d in dirs) / 1000.0

    def share_over_us(self, limit_us: float, dirs: Sequence[int] = (0,)) -> float:
        """Share of I/Os slower than limit_us, % (from the bins: a bin counts when its lower edge is above it)."""
        t = int(limit_us * 1000.0)
        return hist.exceedance(self.counts(dirs), [t])[t]

    def per_second(self) -> list[float]:
        """Per-interval total IOPS (the interval log), the last (partial) interval dropped."""
        rows = self.result["series"]
        dt = self.interval_s
        return [(r[0] + r[1]) / dt for r in rows[:-1]] if dt > 0 else []

    interval_s: float = 0.0


@dataclass
class Drive:
    """One preset's simulated drive (with overrides) and the workloads run on it, in order."""

    preset: str
    overrides: dict[str, str] = field(default_factory=dict)
    seed: int = 1

    def __post_init__(self) -> None:
        self.values = resolve(self.preset, self.overrides)
        self.dev = core().Device(core_params(self.values))
        self.user = int(self.values["capacity"])
        self.iu = int(self.values["iu"])

    def fill(self) -> Drive:
        """Write the user capacity once sequentially (untimed), as a laid-out drive."""
        self.dev.fill(0, self.user // self.iu)
        return self

    def steady(self, bs: int = 4096, times: float = 2.0) -> Drive:
        """Laid out, then `times` capacities of random writes of bs: GC at its steady state."""
        self.fill()
        self.run(rmix=0, bs=bs, qd=32, io_bytes=int(times * self.user))
        return self

    def idle(self, seconds: float) -> None:
        """Host idle time: the NAND work left behind completes, background GC may run."""
        self.dev.idle(int(seconds * 1e9))

    def run(self, *, rmix: int = 100, bs: int = 4096, qd: int = 1, jobs: int = 1, random: bool = True,
            runtime_s: float = 0.0, ramp_s: float = 0.0, io_bytes: int = 0, interval_ms: int = 0,
            span: float = 1.0, offset: int = 0, rate_iops: int = 0, poisson: bool = False,
            bssplit: Sequence[tuple[int, int]] | None = None,
            bssplit_w: Sequence[tuple[int, int]] | None = None, align: int = 0) -> Point:
        """One closed-loop point (time-based with runtime_s, else io_bytes per job or one pass)."""
        self.seed += 1
        length = int(self.user * span) // 4096 * 4096 - offset
        wl: dict[str, Any] = {
            "rmix": rmix, "random": int(random), "trim": 0, "range_start": offset, "range_len": length,
            "align": align or min(bs, 4096) if bssplit else align or bs, "iodepth": qd, "numjobs": jobs,
            "time_based": int(runtime_s > 0), "ramp_ns": int(ramp_s * 1e9), "runtime_ns": int(runtime_s * 1e9),
            "io_bytes": io_bytes, "rate_iops": rate_iops, "poisson": int(poisson),
            "interval_ns": interval_ms * 1_000_000, "seed": self.seed,
            "bssplit": [tuple(x) for x in (bssplit or [(bs, 1)])]}
        if bssplit_w:
            wl["bssplit_w"] = [tuple(x) for x in bssplit_w]
        result, before, after = execute(self.dev, wl)
        secs = (result["t_end_ns"] - result["t_meas_ns"]) / 1e9
        n = sum(d[0] for d in result["dirs"])
        host = after["host_write_slots"] - before["host_write_slots"]
        nand = after["nand_write_slots"] - before["nand_write_slots"]
        power = float(self.values["idle_w"]) + result["energy_j"] / max(1e-9, result["t_end_ns"] / 1e9)
        point = Point(result=result, iops=n / secs if secs > 0 else 0.0, secs=secs,
                      wa_gc=nand / host if host else 0.0, power_w=power)
        point.interval_s = interval_ms / 1000.0
        return point


def execute(dev: Any, wl: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Run one workload on a core Device to its end: (finish() result, counters before, counters after)."""
    before = dev.counters()
    dev.begin(wl)
    while not dev.advance(2**62):
        pass
    result: dict[str, Any] = dev.finish()
    return result, before, dev.counters()


def cov_pct(values: Sequence[float]) -> float:
    """Coefficient of variation (sample standard deviation over the mean), %."""
    return statistics.stdev(values) / statistics.mean(values) * 100.0 if len(values) > 1 else 0.0


def low_share(values: Sequence[float], q: float = 0.1) -> float:
    """The q-th percentile of the values over their mean (Intel's consistency figure: q = 0.1)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, math.ceil(q / 100.0 * len(ordered)) - 1))
    return ordered[k] / statistics.mean(values)


class Lab:
    """Experiments with memoized results: several figures read one experiment."""

    def __init__(self) -> None:
        self._memo: dict[tuple[Any, ...], Any] = {}

    def get(self, key: tuple[Any, ...], make: Callable[[], Any]) -> Any:
        """The experiment `key`, run once."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]
