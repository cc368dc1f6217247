"""Wall-clock ETAs: how long the rest of a run takes, as expected (with its uncertainty) and at worst, learned
from what this target shows as the run goes.

A suite says what is left as an Outlook (suites/base.py): runs of points in the worst case and as expected
from what the run has shown so far (an adaptive suite stops early: PTS rounds at steady state, WSAT at its
write goal). The Estimator predicts each point's wall-clock seconds on this target:

- a point whose shape (phase and workload) ran before: the time that point took (rounds repeat stimuli);
- on fio targets: the point's run time plus the per-point overhead measured so far (fio start-up, parsing,
  storing; a host group's first figure comes from its host-ceiling point, before any, the suite's own), or,
  size-based, its bytes over the bandwidth measured so far;
- on the simulator: the work it will simulate over the simulator's measured speed, plus the per-point overhead
  measured so far. The work is the I/Os a point simulates weighted by their size (a 1 MiB I/O costs the core
  about as much as 100 4 KiB ones); the I/Os are the drive's IOPS bound (sim/bounds.py) times the simulated
  time, scaled by the share of that bound this drive reached on points of the same kind (random or sequential,
  reads, writes or a mix, QD1 or deeper). Simulated time itself says nothing about how long a point takes.

Before this run has shown anything, the figures come from earlier complete runs of the same suite on the same
kind of target (`History`, from the results catalog: results/timing.py), else from priors scaled by the share
of a CPU this process can expect on a loaded host (`cpu_share`). Work before the first point counts too: laying
out a new file or a simulated drive (`Estimator.layout_s`), and an adaptive suite that earlier runs showed to
need more points than it expects is expected to need as many again.

Each ETA carries its uncertainty (`Eta.spread`, a share of the expected time): the errors this run's
predictions made on points of a shape not seen before (and on repeated shapes), weighted by what is left of
each kind, plus, for a suite that may stop early, a share for the rounds it may need beyond the expected.
The one bound an ETA gives is its worst case's point count; its worst-case time is an estimate like the others.
"""

from __future__ import annotations

import math
import os
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.results import timing
from ssdlab.results.extra import SimCounters
from ssdlab.results.model import PointResult, Run, TestPoint, Workload
from ssdlab.results.request import RunRequest
from ssdlab.results.timing import SIM_UNIT_BYTES
from ssdlab.suites.base import Goal, Outlook, PlanContext, Suite, traits_of
from ssdlab.units import format_duration

# simulated work units (I/Os weighted by 1 + size / SIM_UNIT_BYTES, results/timing.py) per wall-clock second of
# the simulator's core before the first point (p5430, 512 B to 1 MiB points: 11-19 M)
SIM_UNIT_RATE_PRIOR = 14e6
# share of the IOPS bound a point reaches before one of its kind (sim_kind) ran: sequential transfers reach it,
# random reads about half of it, random writes and mixes a quarter once garbage collection runs (0.1-1.1 measured)
SIM_IOPS_SHARE_PRIOR = 0.35
SIM_IOPS_SHARE_PRIORS = {(False, "r"): 1.0, (False, "w"): 1.0, (False, "m"): 1.0, (True, "r"): 0.55,
                         (True, "w"): 0.3, (True, "m"): 0.25}
# per simulated point on an idle host: translation, result shaping, storing, the suite's next outlook (0.0023-0.0033
# in PTS runs on p5430, each run's figure over the CPU share it had)
SIM_OVERHEAD_PRIOR_S = 0.003
PURGE_PRIOR_S = {"sim": 0.05, "null": 0.05, "file": 1.0, "block": 10.0}  # nvme format / blkdiscard / recreate
HOST_GROUP_OVERHEAD_PRIOR_S = 1.6  # per point on a host group (1.6-2.1 s on two loopback agents, eta_accuracy.py)
BANDWIDTH_PRIOR = {"null": 5e9}  # bytes/s for size-based fio points before one is measured (else 500 MB/s)
# bytes per second of laying a target out before the first point: a new file written in 1 MiB blocks and fsynced,
# a simulated drive filled sequentially by its core (p5430: 3 GiB in 4-6 ms)
LAYOUT_PRIOR_BPS = {"sim": 500e9, "file": 400e6}
# per point beyond its executor time (storing, the suite's next outlook): 0.004-0.007 s in PTS runs on the simulator
BOOKKEEPING_PRIOR_S = 0.005
RECENT = 20  # overhead, share and error samples kept
# relative error of a prediction before the run has shown any: a fio point's run time is known, its overhead
# not; the simulator's speed and the drive's IOPS on a workload are both guesses
ERROR_PRIOR = {"fio": 0.25, "sim": 0.6}
REPEAT_ERROR_PRIOR = 0.1  # a shape that ran before
ADAPTIVE_SHARE = 0.2  # a suite that may stop early: it may need this much longer than expected (a round or so)
MIN_ERRORS = 3  # measured errors before they replace the prior
# An outlook of more runs than this is estimated in full at most every ESTIMATE_EVERY_S; in between, the last full
# estimate less the time and points since (a long adaptive suite's outlook is thousands of runs, and summing them
# at every point cost more than the simulator on `pts --pts-tests all`)
LARGE_OUTLOOK = 256
ESTIMATE_EVERY_S = 1.0


@dataclass(frozen=True)
class Eta:
    """The rest of a run: wall-clock seconds and points, expected and at worst; `next_s` is the next point's;
    `spread` the uncertainty of `expected_s` as a share of it (0.4: ±40 %)."""

    expected_s: float
    worst_s: float
    expected_points: int
    worst_points: int
    next_s: float = 0.0
    spread: float = 0.0

    @property
    def adaptive(self) -> bool:
        """Whether the expected and the worst case differ (the suite may stop early)."""
        return self.expected_points != self.worst_points or abs(self.worst_s - self.expected_s) > 0.5

    def plus_minus(self) -> str:
        """'±40 %': the uncertainty, in steps of 5 % (at least 5 %, at most 100 %); '' when nothing is left or
        no uncertainty is known."""
        if self.expected_s <= 0 or self.spread <= 0:
            return ""
        return f"±{min(100, max(5, 5 * round(self.spread * 20)))} %"

    def text(self) -> str:
        """'1m20s ±10 %' or, when the suite may stop early, '1m20s ±30 % expected, at most 3174 points' (the
        worst case's point count: the one bound)."""
        expected = " ".join(t for t in (left_text(self.expected_s, self.expected_points), self.plus_minus()) if t)
        if not self.adaptive:
            return expected
        return f"{expected} expected, at most {points(self.worst_points)}"

    def duration(self) -> str:
        """'1m20s (±10 %)': the expected time with its uncertainty, in a sentence."""
        pm = self.plus_minus()
        return left_text(self.expected_s, self.expected_points) + (f" ({pm})" if pm else "")

    def worst_text(self) -> str:
        """'about 9m30s if all run': the worst case's time, an estimate (not a bound)."""
        return f"about {format_duration(self.worst_s)} if all run"

    def with_setup(self, seconds: float, spread: float) -> Eta:
        """This ETA with work before the next point (laying the target out) of `seconds` ± `spread`."""
        if seconds <= 0:
            return self
        total = self.expected_s + seconds
        share = (self.spread * self.expected_s + spread * seconds) / total if total > 0 else 0.0
        return Eta(expected_s=total, worst_s=self.worst_s + seconds, expected_points=self.expected_points,
                   worst_points=self.worst_points, next_s=self.next_s + seconds, spread=share)

    def after(self, elapsed_s: float, fraction: float | None = None) -> float:
        """Expected seconds left once the next point has run `elapsed_s` (a `fraction` of it done, if known)."""
        rest = max(0.0, self.expected_s - self.next_s)
        if fraction is not None and 0.05 <= fraction < 1.0:
            point_left = elapsed_s * (1.0 - fraction) / fraction
        else:
            point_left = max(0.0, self.next_s - elapsed_s)
        return rest + point_left

    def with_first(self, seconds: float, spread: float) -> Eta:
        """This ETA with one more point before the others (the host-ceiling check) of `seconds` ± `spread`."""
        total = self.expected_s + seconds
        share = (self.spread * self.expected_s + spread * seconds) / total if total > 0 else 0.0
        return Eta(expected_s=total, worst_s=self.worst_s + seconds, expected_points=self.expected_points,
                   worst_points=self.worst_points, next_s=seconds, spread=share)


def left_text(seconds: float, points: int) -> str:
    """A duration left: never '0s' while points remain ('<1s')."""
    if points > 0 and seconds < 1.0:
        return "<1s"
    return format_duration(seconds)


def cpu_share(cpus: int | None = None, load: float | None = None, runnable: float | None = None, *,
              schedstat: Path | None = None) -> float:
    """The share of a CPU this process can expect: first what it got so far (`observed_share`: its time on a CPU
    over that and its time waiting for one, /proc/self/schedstat, or the file given), the most direct measure:
    a command's start-up is CPU-bound, so it met the host's contention (a CPU hog, other jobs) as the run will.
    Without it (or when `cpus`, `load` or `runnable` are given): the host's CPUs over the tasks running or waiting
    for one at this moment (`runnable`, this process included; /proc/stat's procs_running), else over the
    1-minute load average plus this process (results/timing.cpu_share). Those are guesses from other tasks: the
    load average lags a minute behind and counts tasks waiting for I/O, which take no CPU (a host where other
    jobs' fio waited on disks showed 26 with 3 tasks runnable, and one where a CPU hog had just started showed 8.6
    with 12), and a moment's count of runnable tasks missed how much of a CPU a run under a hog got (its ETA
    at the start was 67 % short)."""
    if cpus is None and load is None and runnable is None:
        got = observed_share(schedstat or SCHEDSTAT)
        if got is not None:
            return got
    n = cpus if cpus is not None else (os.cpu_count() or 1)
    running = runnable if runnable is not None else (_runnable_now() if load is None else None)
    if running is not None and running > 0:
        return max(0.05, min(1.0, n / max(n, running)))
    if load is None:
        try:
            load = os.getloadavg()[0]
        except OSError:
            return 1.0
    return timing.cpu_share(n, load)


SCHEDSTAT = Path("/proc/thread-self/schedstat")  # this thread's: ns on a CPU, ns waiting in a run queue, slices
MIN_OBSERVED_NS = 50_000_000  # what the share is measured over at least (on a CPU and waiting for one)


def observed_share(stat: Path = SCHEDSTAT) -> float | None:
    """The share of a CPU this thread got while it wanted one: its time on a CPU over that plus its time runnable
    but waiting (the kernel's schedstat; sleeping on I/O, a child or a timer is not counted). None when the kernel
    does not say, or before 0.05 s of either (at least 0.05)."""
    try:
        fields = stat.read_text(encoding="ascii").split()
        ran, waited = int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None
    if ran <= 0 or ran + waited < MIN_OBSERVED_NS:
        return None
    return max(0.05, min(1.0, ran / (ran + waited)))


_RUNNABLE: list[int] = []  # procs_running as this process found it since it started (module import, each ETA)


def _runnable_now() -> float | None:
    """The median of the runnable counts this process read so far, this one included: one reading is a moment,
    a few over the command's start-up say more."""
    now = procs_running()
    if now is not None:
        _RUNNABLE.append(now)
    return statistics.median(_RUNNABLE) if _RUNNABLE else None


def procs_running(stat: Path = Path("/proc/stat")) -> int | None:
    """Tasks running or runnable right now (this one included), None when /proc cannot say."""
    try:
        for line in stat.read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class History:
    """What earlier complete runs of the same suite on the same kind of target took (results/timing.py, from
    the catalog): the median of each figure over them, None where none measured it. The CPU-bound figures are
    as on an idle host (each run's own divided by the CPU share it expected as it started; the Estimator
    applies today's)."""

    runs: int = 0
    results: float | None = None  # results a run stored (steps included)
    sim_rate: float | None = None  # simulated work units per second of the simulator's core, idle host
    overhead_s: float | None = None  # per point beyond its I/O (or simulated) time, bookkeeping included, idle
    layout_bps: float | None = None  # bytes per second of laying the target out
    bandwidth: Mapping[str, float] = field(default_factory=dict)  # size-based points, bytes/s by direction

    @staticmethod
    def of(timings: Sequence[Mapping[str, Any]]) -> History:
        """From the catalog's timing records of earlier runs (catalog.history)."""
        def med(values: list[float]) -> float | None:
            return statistics.median(values) if values else None

        def num(t: Mapping[str, Any], key: str) -> float | None:
            v = t.get(key)
            return float(v) if isinstance(v, (int, float)) and v >= 0 else None

        def share(t: Mapping[str, Any]) -> float:
            return min(1.0, max(0.05, num(t, "share") or 1.0))

        results = [v for t in timings if (v := num(t, "results"))]
        rates = [u / c / share(t) for t in timings if (u := num(t, "sim_units")) and (c := num(t, "sim_core_s"))]
        overheads = [(o + (num(t, "bookkeeping_s") or 0.0)) * share(t) for t in timings
                     if (o := num(t, "overhead_s")) is not None]
        layouts = [b / s for t in timings if (b := num(t, "layout_bytes")) and (s := num(t, "layout_s"))]
        bandwidth: dict[str, float] = {}
        for direction in ("read", "write"):
            seen = [float(v) for t in timings if isinstance(t.get("bandwidth"), Mapping)
                    and isinstance(v := t["bandwidth"].get(direction), (int, float)) and v > 0]
            if seen:
                bandwidth[direction] = statistics.median(seen)
        return History(runs=len(timings), results=med(results), sim_rate=med(rates), overhead_s=med(overheads),
                       layout_bps=med(layouts), bandwidth=bandwidth)


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


def sim_kind(w: Workload) -> tuple[bool, str, bool]:
    """The kind of a simulated workload whose share of the IOPS bound points of it share: random or not,
    reads / writes / a mix, queue depth 1 or deeper."""
    reads = w.rw in ("read", "randread") or (w.rw in ("rw", "readwrite", "randrw") and w.rwmixread != 0)
    direction = "w" if not reads else "r" if not w.writes else "m"
    return (w.is_random, direction, w.outstanding <= 1)


def _median(values: Sequence[float], prior: float) -> float:
    return statistics.median(values) if values else prior


class Estimator:
    """Predicts the wall-clock seconds of points on one target (its run.json `target` record) and learns
    from every finished point (`observe`)."""

    def __init__(self, target: Mapping[str, Any], overhead_s: float = 0.5, *, history: History | None = None,
                 share: float = 1.0) -> None:
        """`history`: what earlier runs of the suite on this kind of target took; `share`: the share of a CPU
        this process expects (cpu_share()), which slows the simulator's CPU-bound priors (not what this run or
        earlier ones measured, nor a fio point's overhead: fio's start-up and teardown wait more than compute,
        and the suite's figure already holds a loaded host's)."""
        self.history = history or History()
        self.share = max(0.05, min(1.0, share))
        self.kind = str(target.get("kind") or "file")
        self.engine = "sim" if traits_of(self.kind).simulated else "fio"
        self.params: Mapping[str, Any] = dict((target.get("sim") or {}).get("params") or {})
        self.capacity = int(target.get("capacity_bytes") or 0)
        # a host group's points go through fio's client and the agents (connection, job transfer, results back)
        self.default_overhead_s = max(overhead_s, HOST_GROUP_OVERHEAD_PRIOR_S) if target.get("hosts") else overhead_s
        self._last: dict[tuple[Any, ...], float] = {}
        self._overheads: list[float] = []  # the per-point overheads measured, the first point's aside
        self._first_overhead: float | None = None  # the first point's (one-time start-up costs: alone, until others)
        self._bandwidth: dict[str, float] = {}
        self._moved: dict[tuple[Any, ...], float] = {}  # bytes a point of this shape moved
        self._sim_work: dict[tuple[bool, str, bool] | None, list[float]] = {}  # [units, core s], by kind and all
        self._shares: dict[tuple[bool, str, bool], list[float]] = {}  # simulated IOPS / bound, by sim_kind
        self._share_ratios: list[float] = []  # those shares over their kinds' priors
        self._errors: list[float] = []  # |actual / predicted - 1| of points of a shape not seen before
        self._repeat_errors: list[float] = []  # the same for shapes seen before
        # predicted seconds by point shape, until the next observe() (a prediction is a function of the point's
        # shape and of what was observed)
        self._seconds: dict[tuple[Any, ...], float] = {}
        self._bounds: dict[tuple[Any, ...], float] = {}  # simulated I/Os at the IOPS bound, by shape
        self._overhead: float | None = None  # overhead_s, until the next observe()
        self._observed = 0  # points observed
        self._earlier: set[tuple[Any, ...]] = set()  # shapes known only from a resumed run's earlier session
        self._full: tuple[float, Eta, int] | None = None  # (when, the last full estimate of a large outlook, observed)

    # ------------------------------------------------------------------ learning

    def observe(self, result: PointResult, wall_s: float, *, earlier: bool = False) -> None:
        """Learn from a finished point that took `wall_s` seconds, bookkeeping included. `earlier`: a point of
        the run's earlier session (resume): its time is a first guess for its shape, under that session's load,
        so shapes known only from it keep the error of shapes not seen, and it teaches no error."""
        p = result.point
        key = shape(p)
        if earlier:
            self._earlier.add(key)
        else:
            self._earlier.discard(key)
        seen = key in self._last
        predicted = self.seconds(p)
        self._observed += 1
        self._seconds.clear()
        self._overhead = None
        self._last[key] = wall_s
        m = result.measurement
        if result.status != "ok" or m is None or p.phase == "purge":
            return
        moved = sum(d.io_bytes for d in m.directions.values())
        if moved > 0:
            self._moved[key] = float(moved)
        if predicted > 0 and wall_s > 0 and not earlier:
            errors = self._repeat_errors if seen else self._errors
            errors[:] = [*errors[-(RECENT - 1):], abs(wall_s / predicted - 1.0)]
        if self.engine == "sim":
            self._observe_sim(p, m.extra.sim or SimCounters(), wall_s)
            return
        if p.workload.runtime_s is not None:
            self._recent(wall_s - p.est_seconds)
        elif m.total_bw_bytes > 0:
            self._bandwidth["write" if p.workload.writes else "read"] = m.total_bw_bytes

    def _observe_sim(self, p: TestPoint, sim: SimCounters, wall_s: float) -> None:
        ios, rate = float(sim.simulated_ios or 0), float(sim.simulated_ios_per_wall_s or 0)
        if ios <= 0 or rate <= 0:
            return
        core_s = ios / rate
        w = p.workload
        for key in (sim_kind(w), None):
            work = self._sim_work.setdefault(key, [0.0, 0.0])
            work[0] += ios * self._unit_weight(w)
            work[1] += core_s
        self._recent(wall_s - core_s)
        if w.runtime_s is not None and _rate_limit(p) is None:  # what the drive reached on its own
            bound = self._bound_ios(p)
            if bound > 0:
                share = ios / bound
                kind = sim_kind(w)
                shares = self._shares.setdefault(kind, [])
                shares[:] = [*shares[-(RECENT - 1):], share]
                ratio = share / SIM_IOPS_SHARE_PRIORS.get(kind[:2], SIM_IOPS_SHARE_PRIOR)
                self._share_ratios = [*self._share_ratios[-(RECENT - 1):], ratio]

    def _recent(self, overhead_s: float) -> None:
        if self._first_overhead is None:  # the run's first point: fio's (or the simulator's) start-up costs
            self._first_overhead = max(0.0, overhead_s)
            return
        self._overheads = [*self._overheads[-(RECENT - 1):], max(0.0, overhead_s)]

    def observe_first(self, result: PointResult, wall_s: float) -> None:
        """Learn the per-point overhead from a point outside the suite's plan (the host-ceiling check)."""
        if result.status == "ok" and result.point.workload.runtime_s is not None and self.engine == "fio":
            self._observed += 1
            self._seconds.clear()
            self._overhead = None
            self._recent(wall_s - result.point.est_seconds)

    @property
    def overhead_s(self) -> float:
        """Per-point overhead: the median measured so far (the first point's only until another one ran: it carries
        one-time start-up costs), else the prior."""
        if self._overhead is None:
            samples = self._overheads or ([self._first_overhead] if self._first_overhead is not None else [])
            prior = self.history.overhead_s / self.share if self.history.overhead_s is not None else \
                SIM_OVERHEAD_PRIOR_S / self.share if self.engine == "sim" else self.default_overhead_s
            self._overhead = statistics.median(samples) if samples else prior
        return self._overhead

    def sim_rate(self, w: Workload | None = None) -> float:
        """Simulated work units per wall-clock second of the simulator's core, measured so far on workloads of
        the kind of `w` (sim_kind), else on any, else the prior."""
        for key in ((sim_kind(w), None) if w is not None else (None,)):
            work = self._sim_work.get(key)
            if work is not None and work[1] > 0:
                return work[0] / work[1]
        return (self.history.sim_rate or SIM_UNIT_RATE_PRIOR) * self.share

    def error(self, seen: bool) -> float:
        """The relative error of a prediction for a shape seen before (or not), as measured so far."""
        if seen:
            return _median(self._repeat_errors, REPEAT_ERROR_PRIOR) if len(self._repeat_errors) >= MIN_ERRORS \
                else REPEAT_ERROR_PRIOR
        if len(self._errors) >= MIN_ERRORS:
            return _median(self._errors, ERROR_PRIOR[self.engine])
        return ERROR_PRIOR[self.engine]

    # ------------------------------------------------------------------ predicting

    def seconds(self, point: TestPoint) -> float:
        """Predicted wall-clock seconds of one point."""
        known = self._last.get(shape(point))
        if known is not None:
            return known
        if point.phase == "purge":  # the simulator's is CPU work, like its points
            return PURGE_PRIOR_S.get(self.kind, 1.0) / (self.share if self.engine == "sim" else 1.0)
        if self.engine == "sim":
            w = point.workload
            return self.simulated_ios(point) * self._unit_weight(w) / self.sim_rate(w) + self.overhead_s
        w = point.workload
        if w.runtime_s is not None:
            return point.est_seconds + self.overhead_s
        direction = "write" if w.writes else "read"
        bandwidth = self._bandwidth.get(direction) or self.history.bandwidth.get(direction) or \
            BANDWIDTH_PRIOR.get(self.kind, 500e6)
        return self._bytes(point) / bandwidth + self.overhead_s

    def layout_s(self, nbytes: float) -> float:
        """Seconds to lay out `nbytes` of the target before the first point (a new file, a simulated drive)."""
        if nbytes <= 0:
            return 0.0
        rate = self.history.layout_bps or LAYOUT_PRIOR_BPS.get(self.engine if self.engine == "sim" else self.kind,
                                                               LAYOUT_PRIOR_BPS["file"]) * self.share
        return nbytes / rate

    def replay_s(self, results: Sequence[PointResult]) -> float:
        """Seconds to simulate `results` again (a resumed simulated drive replays the points after its last
        checkpoint before the next point: sim/target.py)."""
        total = 0.0
        for r in results:
            sim = r.measurement.extra.sim if r.measurement is not None else None
            if r.status == "ok" and sim is not None and sim.simulated_ios:
                w = r.point.workload
                total += float(sim.simulated_ios) * self._unit_weight(w) / self.sim_rate(w)
        return total

    def _bytes(self, point: TestPoint) -> float:
        w = point.workload
        return float(w.io_bytes or w.size or self.capacity) * w.numjobs

    @staticmethod
    def _unit_weight(w: Workload) -> float:
        return 1.0 + max(1, w.bs) / SIM_UNIT_BYTES

    def iops_share(self, w: Workload) -> float:
        """The share of its IOPS bound a simulated workload is expected to reach: as points of its kind did."""
        kind = sim_kind(w)
        shares = self._shares.get(kind)
        if shares:
            return _median(shares, SIM_IOPS_SHARE_PRIOR)
        # a kind not seen yet: its prior, scaled as the kinds seen so far turned out against theirs
        return min(1.5, SIM_IOPS_SHARE_PRIORS.get(kind[:2], SIM_IOPS_SHARE_PRIOR) * _median(self._share_ratios, 1.0))

    def simulated_ios(self, point: TestPoint) -> float:
        """I/Os the simulator runs for a point (ramp included): its bytes over its block size when size-based,
        else the share of its IOPS bound this drive reaches (or its rate limit) times its simulated time."""
        w = point.workload
        if w.runtime_s is None:
            return self._bytes(point) / max(1, w.bs)
        expected = self._bound_ios(point) * self.iops_share(w)
        limit = _rate_limit(point)
        return min(expected, limit * (w.runtime_s + w.ramp_s)) if limit else expected

    def _bound_ios(self, point: TestPoint) -> float:
        """I/Os at the drive's IOPS bound over a time-based point's simulated time (a function of its shape)."""
        key = shape(point)
        known = self._bounds.get(key)
        if known is None:
            from ssdlab.sim.bounds import iops_bound

            w = point.workload
            known = self._bounds[key] = iops_bound(self.params, w) * ((w.runtime_s or 0.0) + w.ramp_s)
        return known

    def _goal_runs(self, goals: Sequence[Goal]) -> list[tuple[TestPoint, int]]:
        """The points each goal is expected to take: its bytes over what one of its points moves on this target
        (as one of its shape did, or, on the simulator, as predicted), at most its limit."""
        runs = []
        for g in goals:
            moved = self._moved.get(shape(g.point))
            if moved is None and self.engine == "sim" and g.point.workload.runtime_s is not None:
                moved = self.simulated_ios(g.point) * g.point.workload.bs
            count = g.at_most if not moved else min(g.at_most, max(1, math.ceil(g.bytes / moved)))
            runs.append((g.point, count))
        return runs

    def estimate(self, outlook: Outlook, done: int = 0) -> Eta:
        """The ETA of an outlook (each point shape is predicted once), `done` results into the run; a large one in
        full at most every ESTIMATE_EVERY_S, else the last full estimate less the wall time and the points since
        (never less than the per-point overhead of each point left)."""
        if len(outlook.worst) <= LARGE_OUTLOOK:
            return self._estimate(outlook, done)
        now = time.monotonic()
        if self._full is not None and now - self._full[0] < ESTIMATE_EVERY_S:
            at, eta, observed = self._full
            gone_s, ran = now - at, self._observed - observed
            expected_n, worst_n = max(1, eta.expected_points - ran), max(1, eta.worst_points - ran)
            floor = self.overhead_s
            return Eta(expected_s=max(expected_n * floor, eta.expected_s - gone_s),
                       worst_s=max(worst_n * floor, eta.worst_s - gone_s), expected_points=expected_n,
                       worst_points=worst_n, next_s=eta.next_s, spread=eta.spread)
        eta = self._estimate(outlook, done)
        self._full = (now, eta, self._observed)
        return eta

    def _more_points(self, done: int, expected_n: int, worst_n: int) -> int:
        """Points beyond an adaptive suite's expected ones that earlier runs of it needed (their median result
        count), at most up to its worst case."""
        if self.history.results is None:
            return 0
        return max(0, min(worst_n - expected_n, round(self.history.results) - done - expected_n))

    def _estimate(self, outlook: Outlook, done: int = 0) -> Eta:
        cache, last, earlier = self._seconds, self._last, self._earlier
        unseen_error, seen_error = self.error(False), self.error(True)

        def total(runs: Sequence[tuple[TestPoint, int]]) -> tuple[float, int, float]:
            secs, n, off = 0.0, 0, 0.0
            for p, count in runs:
                key = p.__dict__.get("_shape") or shape(p)  # (shape's memo, looked up without a call)
                if key not in cache:
                    cache[key] = self.seconds(p)
                s = count * cache[key]
                secs += s
                n += count
                off += s * (seen_error if key in last and key not in earlier else unseen_error)
            return secs, n, off

        worst_s, worst_n, worst_off = total(outlook.worst)
        if outlook.expected is None:
            expected_s, expected_n, off = worst_s, worst_n, worst_off
        else:
            expected_s, expected_n, off = total((*outlook.expected, *self._goal_runs(outlook.goals)))
            more = self._more_points(done, expected_n, worst_n)
            if more and worst_n > expected_n:  # as earlier runs went: at the worst case's mean time per point
                per = max(0.0, worst_s - expected_s) / (worst_n - expected_n)
                expected_s, expected_n = expected_s + more * per, expected_n + more
                off += more * per * unseen_error  # it may run longer than expected: a round or so more
            off += min(worst_s - expected_s, ADAPTIVE_SHARE * expected_s)
        nxt = outlook.next_point
        return Eta(expected_s=expected_s, worst_s=worst_s, expected_points=expected_n, worst_points=worst_n,
                   next_s=cache.get(shape(nxt), 0.0) if nxt is not None else 0.0,
                   spread=off / expected_s if expected_s > 0 else 0.0)


def layout_bytes(target: Mapping[str, Any], file_layout: str, resumed: bool = False) -> float:
    """Bytes laid out before the first point: a new (or short) file in full (`file_layout`: what the target says
    its preparation writes), a fresh simulated drive that is laid out (its `layout` parameter) in full."""
    capacity = float(target.get("capacity_bytes") or 0)
    if file_layout:
        return capacity
    params = (target.get("sim") or {}).get("params") or {}
    simulated = traits_of(str(target.get("kind") or "")).simulated
    return capacity if simulated and not resumed and str(params.get("layout", "0")) not in ("0", "") else 0.0


def empty_run(suite: Suite, target: Mapping[str, Any]) -> Run:
    """A run with nothing done yet, for the outlook of a whole plan."""
    return Run(schema_version=0, ssdlab_version="", run_id="", suite=suite.name, status="running", created="",
               options=RunRequest(suite=suite.name), target=dict(target), host={})


def plan_eta(suite: Suite, ctx: PlanContext, *, history: History | None = None, file_layout: str = "",
             share: float | None = None) -> Eta:
    """The ETA of a suite's whole plan on the planned target (`ssdlab plan`, pre-flight): expected and worst,
    the target's layout included (`file_layout`: what its preparation writes, Target.layout_writes)."""
    target = {"kind": ctx.target_kind, "capacity_bytes": ctx.capacity, **ctx.target}
    estimator = Estimator(target, suite.point_overhead_s, history=history,
                          share=cpu_share() if share is None else share)
    eta = estimator.estimate(suite.outlook(ctx, empty_run(suite, target)))
    return eta.with_setup(estimator.layout_s(layout_bytes(target, file_layout)), estimator.error(False))


_runnable_now()  # the first reading, as the command starts


def points(n: int) -> str:
    """'1 point', '12 points'."""
    return f"{n} point{'' if n == 1 else 's'}"
