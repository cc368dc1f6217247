"""How the seed reviews measured their figures, repeated on a preset's simulated drive (`ssdlab sim validate`).

A `Procedure` states the conditions of a group of evidence rows as the review gives them (threads x queue depth,
footprint, preconditioning, duration, the seed lines) and what the model does where it differs; the functions below
run them. `Runs` memoizes the experiments of one seed, so the figures one experiment yields (a mean and its
percentiles) share it, and reports each experiment as it starts (progress).

Where a review leaves a condition unstated, the procedure says so and what is used instead: the choice is made from
the review's context, never from the model's result.

Every drive runs on the full-size drive's clock (`time_scale=0`: full_size / capacity, docs/sim.md "Time and
scale"): a second of host writes moves its state as much as a second moves the reviewed drive's, not thousands of
times more. A procedure that runs its points shorter than the review did scales the clock by that too (pace()).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ssdlab.analysis.steady import determine
from ssdlab.sim.lab import Drive, Lab, Point
from ssdlab.sim.presets import resolve, time_scale

KiB, MiB = 1024, 1024 * 1024
SEEDS = (1, 2, 3, 4, 5)  # tail rows are measured once per seed: their median is judged, their spread shown
NOT_STATED_S = 10.0  # the duration of a point whose review gives none
ACT_S = 60.0  # ACT ran 24 h: its device load runs this long here, on a clock as much faster (pace)
ACT_REVIEW_S = 24 * 3600.0


@dataclass(frozen=True)
class Procedure:
    """How a review measured a group of figures: its conditions, stated, and the model's repetition of them."""

    name: str
    seed: str  # the seed review and lines that state the conditions
    shape: str  # workload, threads x queue depth
    footprint: str
    precondition: str
    duration: str
    caveat: str = ""  # the review's own caveat, or what the model cannot repeat

    def lines(self) -> list[str]:
        """The conditions as short labelled lines (the table prints them above the group's rows)."""
        out = [f"{self.name} ({self.seed}): {self.shape}", f"footprint: {self.footprint}",
               f"preconditioning: {self.precondition}", f"duration: {self.duration}"]
        return out + ([f"caveat: {self.caveat}"] if self.caveat else [])


class Runs(Lab):
    """The experiments of one seed (the preset's `seed` parameter and the workloads' draws), memoized, each
    announced through `progress` as it starts; `overrides` apply to every drive (tests perturb a parameter)."""

    def __init__(self, seed: int = 1, progress: Callable[[str], None] | None = None,
                 overrides: dict[str, str] | None = None) -> None:
        super().__init__()
        self.seed = seed
        self.progress = progress
        self.overrides = dict(overrides or {})

    def drive(self, preset: str, state: str, tag: str = "", **overrides: str) -> Drive:
        """The preset's drive in `state` (see PREPARE), one per preset, state, tag and overrides (a tag keeps the
        drives of two tests that start alike apart)."""
        key = ("drive", preset, state, tag, tuple(sorted(overrides.items())))

        def make() -> Drive:
            values = {"time_scale": pace(preset), **self.overrides, **overrides, "seed": str(self.seed)}
            d = Drive(preset, values, seed=1 + 1000 * (self.seed - 1))
            PREPARE[state](d)
            return d

        got: Drive = self.get(key, make)
        return got

    def point(self, preset: str, state: str, name: str, run: Callable[[Drive], Point], **overrides: str) -> Point:
        """Workload `name` run once on the drive in `state` (the points of one drive run in the order asked)."""
        key = ("point", preset, state, name, tuple(sorted(overrides.items())))
        if key not in self._memo and self.progress is not None:
            extra = " ".join(f"{k}={v}" for k, v in sorted(overrides.items()))
            self.progress(f"{preset}: {name}" + (f" ({extra})" if extra else "")
                          + (f", seed {self.seed}" if self.seed != 1 else ""))
        got: Point = self.get(key, lambda: run(self.drive(preset, state, **overrides)))
        return got


class Seeds:
    """One `Runs` per seed, made on first use."""

    def __init__(self, progress: Callable[[str], None] | None = None,
                 overrides: dict[str, str] | None = None) -> None:
        self.progress = progress
        self.overrides = overrides
        self._runs: dict[int, Runs] = {}

    def of(self, seed: int = 1) -> Runs:
        if seed not in self._runs:
            self._runs[seed] = Runs(seed, self.progress, self.overrides)
        return self._runs[seed]


def pace(preset: str, model_s: float = 1.0, review_s: float = 1.0) -> str:
    """The time_scale of a preset's drive on the reviewed drive's clock: its full size over the model's capacity,
    and where a point runs model_s seconds for the review's review_s, that much faster (its model_s seconds move the
    state as the review's review_s did); the model's own pace without a full size."""
    values = resolve(preset, {})
    if not int(values["full_size"]):
        return "1"
    full = time_scale(resolve(preset, {"time_scale": "0"}))
    return f"{max(1.0, full * model_s / review_s):.6g}"


# ------------------------------------------------------------------ drive states

def _steady(d: Drive) -> None:
    d.steady()


def _steady64k(d: Drive) -> None:
    d.steady(bs=64 * KiB)


def _ezfio(d: Drive) -> None:
    """ezFIO's preconditioning: two passes of 128K sequential writes, then two of 4K random writes (T1 x Q256),
    each over the whole capacity."""
    for _ in range(2):
        d.run(rmix=0, bs=128 * KiB, qd=256, random=False, io_bytes=d.user)
    for _ in range(2):
        d.run(rmix=0, bs=4 * KiB, qd=256, io_bytes=d.user)


def _wipc(d: Drive) -> None:
    """SNIA PTS's workload-independent preconditioning from a purged drive: 128K sequential writes of twice the
    capacity (T1 x Q32)."""
    d.run(rmix=0, bs=128 * KiB, qd=32, random=False, io_bytes=2 * d.user)


PREPARE: dict[str, Callable[[Drive], Any]] = {
    "fob": lambda d: None,  # a new drive: nothing mapped, every block erased
    "laid": Drive.fill,  # written once sequentially (untimed)
    "steady": _steady,  # laid out, then 2 capacities of 4K random writes (T1 x Q32)
    "steady64k": _steady64k,  # the same with 64K random writes
    "ezfio": _ezfio,
    "wipc": _wipc,
}


# ------------------------------------------------------------------ workloads

def closed(runs: Runs, preset: str, state: str, name: str, *, rmix: int, bs: int = 4096, qd: int = 32,
           jobs: int = 1, random: bool = True, runtime_s: float = 1.0, ramp_s: float = 0.3, interval_ms: int = 0,
           span: float = 1.0, align: int = 0, pause_s: float = 0.5, overrides: dict[str, str] | None = None) -> Point:
    """A closed-loop point after the previous ones of its drive (a pause first: the NAND work they left completes,
    as between two tests)."""
    def run(d: Drive) -> Point:
        if pause_s:
            d.idle(pause_s)
        return d.run(rmix=rmix, bs=bs, qd=qd, jobs=jobs, random=random, runtime_s=runtime_s, ramp_s=ramp_s,
                     interval_ms=interval_ms, span=span, align=align)
    return runs.point(preset, state, name, run, **(overrides or {}))


def gbps(p: Point) -> float:
    return p.bw() / 1e9


# ------------------------------------------------------------------ SNIA PTS as seed 004 modified it

PTS_MIXES = (100, 95, 65, 50, 35, 5, 0)  # read %, the outer loop
PTS_SIZES = (1024 * KiB, 128 * KiB, 64 * KiB, 32 * KiB, 16 * KiB, 8 * KiB, 4 * KiB)  # inner loop (0.5K excluded)
PTS_ROUND_S = 1.0  # seconds of each point of a round
PTS_REVIEW_S = 60.0  # the review's
PTS_MAX_ROUNDS = 25
PTS_WINDOW = 4


@dataclass(frozen=True)
class PtsTable:
    """The IOPS test's result: IOPS per (block size, read %) averaged over the steady-state window."""

    cells: dict[tuple[int, int], float]
    rounds: int  # rounds run
    window: tuple[int, int]  # first and last round of the window
    steady: bool  # the review's criterion held over the window


def review_steady(values: list[float]) -> bool:
    """Seed 004's steady-state criterion over a window: the least-squares line stays within 90 %..110 % of the
    window's mean (its two ends are at most 10 % from the mean, so its excursion is at most 20 % of it)."""
    d = determine(values)
    return d.average > 0 and d.fit_excursion <= Fraction(2, 10) * d.average


def pts_iops(runs: Runs, preset: str) -> PtsTable:
    """Seed 004's IOPS test: purge, 2x capacity of 128K sequential writes, then rounds of every (read %, block
    size) at T16 x Q8 until the 4K 0/100 IOPS of the last 4 rounds meet the review's criterion (25 rounds at most);
    the table is the mean over those 4 rounds."""
    def make() -> PtsTable:
        d = runs.drive(preset, "wipc", tag="pts-iops", time_scale=pace(preset, PTS_ROUND_S, PTS_REVIEW_S))
        series: list[dict[tuple[int, int], float]] = []
        for r in range(1, PTS_MAX_ROUNDS + 1):
            if runs.progress is not None:
                runs.progress(f"{preset}: PTS IOPS round {r} (49 points of {PTS_ROUND_S:g} s at T16 x Q8)")
            series.append({(bs, mix): d.run(rmix=mix, bs=bs, qd=8, jobs=16, runtime_s=PTS_ROUND_S).iops
                           for mix in PTS_MIXES for bs in PTS_SIZES})
            tracked = [s[(4 * KiB, 0)] for s in series[-PTS_WINDOW:]]
            if len(series) >= PTS_WINDOW and review_steady(tracked):
                break
        last = series[-PTS_WINDOW:]
        cells = {k: statistics.fmean(s[k] for s in last) for k in series[0]}
        tracked = [s[(4 * KiB, 0)] for s in last]
        return PtsTable(cells, len(series), (len(series) - PTS_WINDOW + 1, len(series)), review_steady(tracked))

    got: PtsTable = runs.get(("pts-iops", preset), make)
    return got


def pts_latency(runs: Runs, preset: str, rmix: int) -> Point:
    """Seed 004's latency test at T4 x Q32, 4K: purge, 2x capacity of 128K sequential writes, then a round of
    4K at 100/0, 70/30 and 0/100 (5 s warm-up + 30 s each); the point of `rmix` of the round."""
    def make() -> dict[int, Point]:
        d = runs.drive(preset, "wipc", tag="pts-lat")
        out = {}
        for mix in (100, 70, 0):
            if runs.progress is not None:
                runs.progress(f"{preset}: PTS latency 4K {mix}/{100 - mix} at T4 x Q32 (5 + 30 s)")
            out[mix] = d.run(rmix=mix, bs=4 * KiB, qd=32, jobs=4, runtime_s=30.0, ramp_s=5.0)
        return out

    got: dict[int, Point] = runs.get(("pts-lat", preset), make)
    return got[rmix]


# ------------------------------------------------------------------ Aerospike ACT (seed 003)

def act(runs: Runs, preset: str) -> Point:
    """ACT 300x on one device, as one open-loop point on the drive at 4K random-write steady state: 600,000 reads/s
    of 1536 B and 7,059 large-block reads and writes/s of 128 KiB (ACT's derived rates at its default defrag),
    Poisson arrivals, 512 B aligned, for ACT_S seconds."""
    small, large = 600_000, 7_059
    reads = small + large
    total = reads + large

    def run(d: Drive) -> Point:
        jobs = 64  # 64 paced jobs of 16 slots each (the rate is per job, as in fio)
        return d.run(rmix=round(100 * reads / total), qd=16, jobs=jobs, runtime_s=ACT_S, ramp_s=1.0,
                     rate_iops=total // jobs, poisson=True, bssplit=[(1536, small), (128 * KiB, large)],
                     bssplit_w=[(128 * KiB, 1)], align=512)
    return runs.point(preset, "steady", f"ACT 300x ({ACT_S:g} s)", run, time_scale=pace(preset, ACT_S, ACT_REVIEW_S))


# ------------------------------------------------------------------ Iometer (seed 002)

IOMETER: dict[str, tuple[int, list[tuple[int, int]]]] = {  # read %, transfer sizes (% of I/Os): the classic specs
    "file server": (80, [(512, 10), (1024, 5), (2048, 5), (4096, 60), (8192, 2), (16384, 4), (32768, 4),
                         (65536, 10)]),
    "web server": (100, [(512, 22), (1024, 15), (2048, 8), (4096, 23), (8192, 15), (16384, 2), (32768, 6),
                         (65536, 7), (131072, 1), (524288, 1)]),
    "database": (67, [(8192, 100)]),
    "workstation": (80, [(8192, 100)]),  # 80 % random in the spec: run fully random here
}


def iometer(runs: Runs, preset: str, spec: str) -> float:
    """An Iometer access specification at T1 x Q32, random, 512 B aligned, on the laid-out drive."""
    rmix, sizes = IOMETER[spec]
    return runs.point(preset, "laid", f"Iometer {spec} (T1 x Q32, {NOT_STATED_S:g} s)",
                      lambda d: d.run(rmix=rmix, qd=32, runtime_s=NOT_STATED_S, ramp_s=1.0, bssplit=sizes,
                                      align=512)).iops


