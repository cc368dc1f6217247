"""Wall-clock ETAs: how long the rest of a run takes, as expected and at worst, learned as the run goes.

A suite says what is left as an Outlook (suites/base.py): runs of points in the worst case and as expected
from what the run has shown so far (an adaptive suite stops early: PTS rounds at steady state, WSAT at its
write goal). The Estimator predicts each point's wall-clock seconds on this target:

- a point whose shape (phase and workload) ran before: the time that point took (rounds repeat stimuli);
- on fio targets: the point's run time plus the per-point overhead measured so far (fio start-up, parsing,
  storing; before any, the suite's own figure), or, size-based, its bytes over the bandwidth measured so far;
- on the simulator: the I/Os it will simulate (its rate limit, its size, or the drive's IOPS bound times its
  simulated time) over the simulator's measured speed in simulated I/Os per wall-clock second, plus the
  per-point overhead measured so far. Simulated time itself says nothing about how long a point takes.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab.results.extra import SimCounters
from ssdlab.results.model import PointResult, TestPoint
from ssdlab.suites.base import Outlook, PlanContext, Suite, traits_of
from ssdlab.units import format_duration

SIM_RATE_PRIOR = 4e6  # simulated I/Os per wall-clock second before the first point (benchmarks/sim_speed.py)
SIM_OVERHEAD_PRIOR_S = 0.01  # per simulated point: translation, result shaping, storing
PURGE_PRIOR_S = {"sim": 0.05, "null": 0.05, "file": 1.0, "block": 10.0}  # nvme format / blkdiscard / recreate
BANDWIDTH_PRIOR = {"null": 5e9}  # bytes/s for size-based fio points before one is measured (else 500 MB/s)
RECENT = 20  # overhead samples kept
# An outlook of more runs than this is estimated in full at most every ESTIMATE_EVERY_S; in between, the last full
# estimate less the time and points since (a long adaptive suite's outlook is thousands of runs, and summing them
# at every point cost more than the simulator on `pts --pts-tests all`)
LARGE_OUTLOOK = 256
ESTIMATE_EVERY_S = 1.0


@dataclass(frozen=True)
class Eta:
    """The rest of a run: wall-clock seconds and points, expected and at worst; `next_s` is the next point's."""

    expected_s: float
    worst_s: float
    expected_points: int
    worst_points: int
    next_s: float = 0.0

    @property
    def adaptive(self) -> bool:
        """Whether the expected and the worst case differ (the suite may stop early)."""
        return self.expected_points != self.worst_points or abs(self.worst_s - self.expected_s) > 0.5

    def text(self) -> str:
        """'1m20s' or, when the suite may stop early, '1m20s expected, at most 3174 points in 52m50s'."""
        if not self.adaptive:
            return format_duration(self.expected_s)
        return (f"{format_duration(self.expected_s)} expected, at most {self.worst_points} points in "
                f"{format_duration(self.worst_s)}")

    def after(self, elapsed_s: float, fraction: float | None = None) -> float:
        """Expected seconds left once the next point has run `elapsed_s` (a `fraction` of it done, if known)."""
        rest = max(0.0, self.expected_s - self.next_s)
        if fraction is not None and 0.05 <= fraction < 1.0:
            point_left = elapsed_s * (1.0 - fraction) / fraction
        else:
            point_left = max(0.0, self.next_s - elapsed_s)
        return rest + point_left


def shape(point: TestPoint) -> tuple[Any, ...]:
    """What makes two points take the same time on the same target: phase, workload, streams and the host idle
    before the point (not the id)."""
    known: tuple[Any, ...] | None = point.__dict__.get("_shape")
    if known is None:
        known = _shape(point)
        object.__setattr__(point, "_shape", known)  # a memo of immutable data (suites hand out the same points)
    return known


def _shape(point: TestPoint) -> tuple[Any, ...]:
    w = point.workload
    return (point.phase, w.rw, w.bs, w.bssplit, w.iodepth, w.numjobs, w.rwmixread, w.runtime_s, w.ramp_s,
            w.io_bytes, w.size, w.rate_iops, tuple(sorted((k, str(v)) for k, v in w.options.items())),
            len(point.streams), point.idle_before_s)


def _rate_limit(point: TestPoint) -> float | None:
    """Total IOPS a rate-limited point asks for (fio's rate_iops is per job), None when unlimited."""
    w = point.workload
    per_job: float | None = float(w.rate_iops) if w.rate_iops else None
    if "rate_iops" in w.options:
        try:
            per_job = float(sum(int(v) for v in str(w.options["rate_iops"]).split(",") if v.strip()))
        except ValueError:
            per_job = None
    return per_job * w.numjobs if per_job else None


class Estimator:
    """Predicts the wall-clock seconds of points on one target (its run.json `target` record) and learns
    from every finished point (`observe`)."""

    def __init__(self, target: Mapping[str, Any], overhead_s: float = 0.5) -> None:
        self.kind = str(target.get("kind") or "file")
        self.engine = "sim" if traits_of(self.kind).simulated else "fio"
        self.params: Mapping[str, Any] = dict((target.get("sim") or {}).get("params") or {})
        self.capacity = int(target.get("capacity_bytes") or 0)
        self.default_overhead_s = overhead_s
        self._last: dict[tuple[Any, ...], float] = {}
        self._overheads: list[float] = []
        self._bandwidth: dict[str, float] = {}
        self._sim_ios = 0.0
        self._sim_core_s = 0.0
        # predicted seconds by point shape, until the next observe() (a prediction is a function of the point's
        # shape and of what was observed)
        self._seconds: dict[tuple[Any, ...], float] = {}
        self._ios: dict[tuple[Any, ...], float] = {}  # simulated_ios by shape (a function of the shape alone)
        self._overhead: float | None = None  # overhead_s, until the next observe()
        self._observed = 0  # points observed
        self._full: tuple[float, Eta, int] | None = None  # (when, the last full estimate of a large outlook, observed)

    # ------------------------------------------------------------------ learning

    def observe(self, result: PointResult, wall_s: float) -> None:
        """Learn from a finished point that took `wall_s` seconds, bookkeeping included."""
        p = result.point
        self._observed += 1
        self._seconds.clear()
        self._overhead = None
        self._last[shape(p)] = wall_s
        m = result.measurement
        if result.status != "ok" or m is None or p.phase == "purge":
            return
        if self.engine == "sim":
            sim = m.extra.sim or SimCounters()
            ios, rate = float(sim.simulated_ios or 0), float(sim.simulated_ios_per_wall_s or 0)
            if ios > 0 and rate > 0:
                self._sim_ios += ios
                self._sim_core_s += ios / rate
                self._recent(wall_s - ios / rate)
            return
        if p.workload.runtime_s is not None:
            self._recent(wall_s - p.est_seconds)
        elif m.total_bw_bytes > 0:
            self._bandwidth["write" if p.workload.writes else "read"] = m.total_bw_bytes

    def _recent(self, overhead_s: float) -> None:
        self._overheads = [*self._overheads[-(RECENT - 1):], max(0.0, overhead_s)]

    @property
    def overhead_s(self) -> float:
        """Per-point overhead: the median measured so far, else the prior."""
        if self._overhead is None:
            self._overhead = statistics.median(self._overheads) if self._overheads else \
                SIM_OVERHEAD_PRIOR_S if self.engine == "sim" else self.default_overhead_s
        return self._overhead

    @property
    def sim_rate(self) -> float:
        """Simulated I/Os per wall-clock second of the simulator's core, measured so far (else the prior)."""
        return self._sim_ios / self._sim_core_s if self._sim_core_s > 0 else SIM_RATE_PRIOR

    # ------------------------------------------------------------------ predicting

    def seconds(self, point: TestPoint) -> float:
        """Predicted wall-clock seconds of one point."""
        known = self._last.get(shape(point))
        if known is not None:
            return known
        if point.phase == "purge":
            return PURGE_PRIOR_S.get(self.kind, 1.0)
        if self.engine == "sim":
            return self.simulated_ios(point) / self.sim_rate + self.overhead_s
        w = point.workload
        if w.runtime_s is not None:
            return point.est_seconds + self.overhead_s
        return self._bytes(point) / self._bandwidth.get("write" if w.writes else "read",
                                                        BANDWIDTH_PRIOR.get(self.kind, 500e6)) + self.overhead_s

    def _bytes(self, point: TestPoint) -> float:
        w = point.workload
        return float(w.io_bytes or w.size or self.capacity) * w.numjobs

    def simulated_ios(self, point: TestPoint) -> float:
        """I/Os the simulator runs for a point (ramp included): at most its IOPS bound over its simulated time."""
        key = shape(point)
        known = self._ios.get(key)
        if known is None:
            known = self._ios[key] = self._simulated_ios(point)
        return known

    def _simulated_ios(self, point: TestPoint) -> float:
        w = point.workload
        if w.runtime_s is None:
            return self._bytes(point) / max(1, w.bs)
        from ssdlab.sim.bounds import iops_bound

        iops = iops_bound(self.params, w)
        limit = _rate_limit(point)
        return (min(iops, limit) if limit else iops) * (w.runtime_s + w.ramp_s)

    def estimate(self, outlook: Outlook) -> Eta:
        """The ETA of an outlook (each point shape is predicted once); a large one in full at most every
        ESTIMATE_EVERY_S, else the last full estimate less the wall time and the points since."""
        if len(outlook.worst) <= LARGE_OUTLOOK:
            return self._estimate(outlook)
        now = time.monotonic()
        if self._full is not None and now - self._full[0] < ESTIMATE_EVERY_S:
            at, eta, observed = self._full
            gone_s, done = now - at, self._observed - observed
            return Eta(expected_s=max(0.0, eta.expected_s - gone_s), worst_s=max(0.0, eta.worst_s - gone_s),
                       expected_points=max(1, eta.expected_points - done), worst_points=max(1, eta.worst_points - done),
                       next_s=eta.next_s)
        eta = self._estimate(outlook)
        self._full = (now, eta, self._observed)
        return eta

    def _estimate(self, outlook: Outlook) -> Eta:
        cache = self._seconds

        def total(runs: Sequence[tuple[TestPoint, int]]) -> tuple[float, int]:
            secs, n = 0.0, 0
            for p, count in runs:
                key = p.__dict__.get("_shape") or shape(p)  # (shape's memo, looked up without a call)
                if key not in cache:
                    cache[key] = self.seconds(p)
                secs += count * cache[key]
                n += count
            return secs, n

        worst_s, worst_n = total(outlook.worst)
        expected_s, expected_n = total(outlook.expected if outlook.expected is not None else outlook.worst)
        nxt = outlook.next_point
        return Eta(expected_s=expected_s, worst_s=worst_s, expected_points=expected_n, worst_points=worst_n,
                   next_s=cache.get(shape(nxt), 0.0) if nxt is not None else 0.0)


def plan_seconds(suite: Suite, ctx: PlanContext) -> float:
    """Worst-case wall-clock seconds of a suite's whole plan on the planned target (`ssdlab plan`, pre-flight)."""
    target = {"kind": ctx.target_kind, "capacity_bytes": ctx.capacity, **ctx.target}
    estimator = Estimator(target, suite.point_overhead_s)
    return suite.eta_seconds(ctx, lambda outlook: estimator.estimate(outlook).worst_s)
