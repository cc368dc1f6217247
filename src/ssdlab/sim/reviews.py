"""The reviewed drives' published figures as `ssdlab sim validate` uses them (docs/sim.md, Validation).

Every figure a calibrated preset uses is one of:
- a calibration INPUT: a parameter of the preset was set from it or fitted to it, or the model's value for it is the
  ceiling such a parameter sets (a sibling figure of the same drive set it). The row names the parameters and how.
  It is measured and shown (does the fit still hold?), and counts for nothing;
- EVIDENCE: no parameter was derived from it. It is measured the way its review measured it (sim/procedures.py:
  threads x queue depth, footprint, preconditioning, duration, the seed lines; what the review leaves unstated is
  said, with what is used instead), and the preset's verdict and worst ratio are over these rows only;
- not a figure the model can measure (an endurance rating): listed with the reason.

A figure is checked one of four ways: `ratio` (the model's value over the published one within 0.75..1.33),
`below` / `above` (the review states a strict bound: "p99 under 1 ms until QD128"), `atmost` (a bound it may meet:
"none over 4 ms"). A tail figure (a percentile) is measured once per seed (procedures.SEEDS): its median is judged
and its spread shown.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass

from ssdlab.sim.lab import Drive, Point, cov_pct, low_share
from ssdlab.sim.procedures import (
    ACT_S,
    NOT_STATED_S,
    PTS_MIXES,
    PTS_ROUND_S,
    PTS_SIZES,
    SEEDS,
    KiB,
    MiB,
    Procedure,
    Runs,
    Seeds,
    act,
    closed,
    gbps,
    iometer,
    pts_iops,
    pts_latency,
)

RATIO_LO, RATIO_HI = 0.75, 1.33
ROLES = ("evidence", "input", "none")
CHECKS = ("ratio", "below", "above", "atmost")
Measure = Callable[[Runs], float]


@dataclass(frozen=True)
class Figure:
    """A published figure, its role, and how the model measures it."""

    name: str
    value: float
    unit: str
    source: str  # "seed 000 l.47": where the review publishes it
    measure: Measure | None
    role: str  # "evidence" | "input" | "none"
    check: str = "ratio"
    procedure: Procedure | None = None  # evidence: the review's conditions
    params: tuple[str, ...] = ()  # input: the parameters set from it (or whose ceiling it reads)
    fit: str = ""  # input: how they were set
    tail: bool = False  # a percentile: measured once per seed
    note: str = ""


def evidence(name: str, value: float, unit: str, source: str, procedure: Procedure, measure: Measure,
             check: str = "ratio", tail: bool = False) -> Figure:
    return Figure(name, value, unit, source, measure, "evidence", check, procedure, tail=tail)


def given(name: str, value: float, unit: str, source: str, params: tuple[str, ...], fit: str, measure: Measure,
          tail: bool = False) -> Figure:
    return Figure(name, value, unit, source, measure, "input", params=params, fit=fit, tail=tail)


def unmeasured(name: str, unit: str, source: str, note: str) -> Figure:
    return Figure(name, 0.0, unit, source, None, "none", note=note)


@dataclass(frozen=True)
class Row:
    """A figure against the model: the simulator's value (the median over seeds for a tail figure, with the
    spread), the ratio, and the verdict with its reason (evidence only: an input's `ok` is always True)."""

    figure: Figure
    measured: float | None
    ratio: float | None
    ok: bool
    why: str = ""
    spread: tuple[float, float] | None = None

    @property
    def counted(self) -> bool:
        return self.figure.role == "evidence"


def verdict(f: Figure, got: float, ratio: float | None) -> tuple[bool, str]:
    """Whether an evidence row passes its check, and why not."""
    if f.check == "below":
        return got < f.value, f"{got:,.4g} is not below {f.value:,.4g}"
    if f.check == "above":
        return got > f.value, f"{got:,.4g} is not above {f.value:,.4g}"
    if f.check == "atmost":
        return got <= f.value, f"{got:,.4g} is above {f.value:,.4g}"
    if ratio is None:
        return False, "no published value to compare with"
    side = "low" if ratio < 1 else "high"
    return RATIO_LO <= ratio <= RATIO_HI, f"{ratio:.2f}x too {side} ({got:,.4g} vs {f.value:,.4g})"


def judge(f: Figure, seeds: Seeds) -> Row:
    """Measure one figure (once per seed for a tail figure) and, for evidence, check it."""
    if f.role == "none" or f.measure is None:
        return Row(f, None, None, True, f.note)
    spread = None
    if f.tail:
        values = [f.measure(seeds.of(s)) for s in SEEDS]
        got = float(statistics.median(values))
        spread = (min(values), max(values))
    else:
        got = f.measure(seeds.of(1))
    ratio = got / f.value if f.value else None
    if f.role == "input":
        return Row(f, got, ratio, True, "", spread)
    ok, why = verdict(f, got, ratio)
    return Row(f, got, ratio, ok, "" if ok else why, spread)


# ------------------------------------------------------------------ Solidigm D5-P5430 (seed 000)

EZFIO_STABILITY_S = 1200.0
EZFIO_POINT_S = 120.0
VDBENCH_RAMP_S = 3.0
STEADY = "4K random-write steady state: laid out, then 2 capacities of 4K random writes (T1 x Q32)"

EZFIO_STABILITY = Procedure(
    "ezFIO stability", "seed 000 l.42, l.47", "4K random 70/30, T256 x Q1 (ezFIO's stability test), 1-s IOPS log",
    "the whole drive",
    "ezFIO's: 2 passes of 128K sequential writes, then 2 of 4K random writes (T1 x Q256), each over the whole "
    "capacity (l.42: two full-capacity writes)",
    f"{EZFIO_STABILITY_S:g} s, as ezFIO runs it",
    "ezFIO's other tests between its preconditioning and this one are not repeated (they run at the steady state "
    "its random passes reach)")
EZFIO_WRITE = Procedure(
    "ezFIO 4K random write", "seed 000 l.45-46",
    "4K random write, T16 x Q16 (ezFIO's block-size sweep; the review does not say which of ezFIO's 4K write "
    "points its +98 % compares)",
    "the whole drive", "ezFIO's (see its stability test), then the stability test",
    f"{EZFIO_POINT_S:g} s (ezFIO's point tests)",
    "the drive's raw NAND is not published: the presets assume 16 TiB (OP 14.5 % and 37.9 %), not fitted to this")
VDBENCH = Procedure(
    "VDBench", "seed 000 l.60-63", "4K random, T8 x Q32 (Q32T8), iorate=max", "the whole drive (not stated)",
    f"not stated; VDBench ran after ezFIO and PTS: {STEADY}",
    f"not stated: {NOT_STATED_S:g} s after a {VDBENCH_RAMP_S:g}-s ramp",
    "the review switched one drive between power modes; the model's drive in each mode is brought to the same "
    "steady state")
P5430_FIT = ("measured as fitted: at 4K random-write steady state, QD1 8 s after a 2-s pause; T4 x Q64 1 s; "
             "VDBench-style Q32T8 2 s")


def _qd1(runs: Runs, pre: str) -> Point:
    def run(d: Drive) -> Point:
        d.idle(2.0)
        return d.run(rmix=100, qd=1, runtime_s=8.0, ramp_s=0.2)
    return runs.point(pre, "steady", "4K random read T1 x Q1, 8 s", run)


def _t4q64(runs: Runs, pre: str) -> Point:
    return closed(runs, pre, "steady", "4K random read T4 x Q64, 1 s", rmix=100, qd=64, jobs=4)


def _vdbench(runs: Runs, pre: str, rmix: int, power: str = "") -> Point:
    extra = {"power": power} if power else {}
    kind = {100: "read", 0: "write"}.get(rmix, f"{rmix}/{100 - rmix}")
    return closed(runs, pre, "steady", f"VDBench 4K {kind} Q32T8, {NOT_STATED_S:g} s", rmix=rmix, qd=32, jobs=8,
                  runtime_s=NOT_STATED_S, ramp_s=VDBENCH_RAMP_S, overrides=extra)


def _vdbench_fit(runs: Runs, pre: str, rmix: int, power: str = "") -> Point:
    extra = {"power": power} if power else {}
    kind = {100: "read", 0: "write"}.get(rmix, "mix")
    return closed(runs, pre, "steady", f"Q32T8 4K {kind}, 2 s (as fitted)", rmix=rmix, qd=32, jobs=8, runtime_s=2.0,
                  ramp_s=VDBENCH_RAMP_S if power else 1.0, overrides=extra)


def _stability(runs: Runs, pre: str) -> Point:
    return closed(runs, pre, "ezfio", f"ezFIO stability 4K 70/30 T256 x Q1, {EZFIO_STABILITY_S:g} s", rmix=70, qd=1,
                  jobs=256, runtime_s=EZFIO_STABILITY_S, ramp_s=0.0, interval_ms=1000, pause_s=0.0)


def _ezfio_write(runs: Runs, pre: str) -> float:
    _stability(runs, pre)  # ezFIO runs it first
    return closed(runs, pre, "ezfio", f"ezFIO 4K random write T16 x Q16, {EZFIO_POINT_S:g} s", rmix=0, qd=16,
                  jobs=16, runtime_s=EZFIO_POINT_S, ramp_s=0.0, pause_s=0.0).iops


POWER_FIT = ("idle power and per-operation energies fitted to the review's capped IOPS (12.6 µJ per 4K read, 116 µJ "
             "per 4K write)")


def p5430_figures(op: bool) -> list[Figure]:
    """Solidigm D5-P5430 15.36 TB, seed 000 (and its 12.75 TB re-provisioning)."""
    pre = "p5430-op" if op else "p5430"
    src = "seed 000"
    ceiling = ("the controller's read ceiling, set from the review's 4K reads (1.05 M at T4 x Q64, 963 K at Q32T8): "
               + P5430_FIT)
    stability = evidence(f"ezFIO 4K 70/30 steady state, mean{' (12.75 TB)' if op else ''}",
                         395347 if op else 280867, "IOPS", f"{src} l.47", EZFIO_STABILITY,
                         lambda r: _stability(r, pre).iops)
    cov = given(f"ezFIO 4K 70/30 steady state, CoV of 1-s IOPS{' (12.75 TB)' if op else ''}", 1.51 if op else 1.05,
                "%", f"{src} l.47", ("gc_band",), "GC's band of 2 superblocks fitted to the two CoVs (1.05 %, 1.51 %)",
                lambda r: cov_pct(_stability(r, pre).per_second()))
    qd1_fit = ("tR per page type (66-108 µs), firmware-time spread (80 %) and read-retry share fitted to the QD1 "
               "p99 and p99.99: " + P5430_FIT)
    t4q64_fit = ceiling + "; 2 independent read planes fitted to the T4 x Q64 mean, p99 and p99.99"
    if op:
        return [
            stability, cov,
            given("VDBench 4K random read Q32T8, max (OP: unchanged)", 963e3, "IOPS", f"{src} l.61", ("ctrl_kiops",),
                  ceiling, lambda r: _vdbench_fit(r, pre, 100).iops),
            evidence("VDBench 4K random write Q32T8, max (12.75 TB)", 288e3, "IOPS", f"{src} l.62", VDBENCH,
                     lambda r: _vdbench(r, pre, 0).iops),
            evidence("VDBench 4K 70/30 Q32T8, max (12.75 TB)", 395e3, "IOPS", f"{src} l.63", VDBENCH,
                     lambda r: _vdbench(r, pre, 70).iops),
        ]
    return [
        given("4K random read T1 x Q1, p99", 137, "µs", f"{src} l.37", ("tr", "fw_cv", "retry"), qd1_fit,
              lambda r: _qd1(r, pre).pct_us(99, (0,)), tail=True),
        given("4K random read T1 x Q1, p99.99", 178, "µs", f"{src} l.38", ("tr", "fw_cv", "retry"), qd1_fit,
              lambda r: _qd1(r, pre).pct_us(99.99, (0,)), tail=True),
        given("4K random read T4 x Q64, mean", 1.05e6, "IOPS", f"{src} l.39", ("ctrl_kiops", "read_planes"),
              t4q64_fit, lambda r: _t4q64(r, pre).iops),
        given("4K random read T4 x Q64, p99", 533, "µs", f"{src} l.40", ("read_planes", "ctrl_kiops"), t4q64_fit,
              lambda r: _t4q64(r, pre).pct_us(99, (0,)), tail=True),
        given("4K random read T4 x Q64, p99.99", 906, "µs", f"{src} l.40", ("read_planes", "ctrl_kiops"),
              t4q64_fit, lambda r: _t4q64(r, pre).pct_us(99.99, (0,)), tail=True),
        evidence("4K random write steady state, IOPS 12.75 TB / 15.36 TB", 1.98, "x", f"{src} l.46", EZFIO_WRITE,
                 lambda r: _ezfio_write(r, "p5430-op") / _ezfio_write(r, pre)),
        stability, cov,
        given("VDBench 4K random read Q32T8, max", 963e3, "IOPS", f"{src} l.61", ("ctrl_kiops",), ceiling,
              lambda r: _vdbench_fit(r, pre, 100).iops),
        given("VDBench 4K random read Q32T8, 15 W mode", 694e3, "IOPS", f"{src} l.61",
              ("idle_w", "e_read_uj", "e_io_uj"), POWER_FIT, lambda r: _vdbench_fit(r, pre, 100, "15").iops),
        given("VDBench 4K random read Q32T8, 10 W mode", 298e3, "IOPS", f"{src} l.61",
              ("idle_w", "e_read_uj", "e_io_uj"), POWER_FIT, lambda r: _vdbench_fit(r, pre, 100, "10").iops),
        given("VDBench 4K random write Q32T8, max", 146e3, "IOPS", f"{src} l.62", ("tprog",),
              "tPROG 2.3 ms sets the NAND program bandwidth, fitted to this steady-state write figure",
              lambda r: _vdbench_fit(r, pre, 0).iops),
        given("VDBench 4K random write Q32T8, 15 W mode", 77e3, "IOPS", f"{src} l.62",
              ("idle_w", "e_prog_uj", "e_io_uj"), POWER_FIT, lambda r: _vdbench_fit(r, pre, 0, "15").iops),
        given("VDBench 4K random write Q32T8, 10 W mode", 34e3, "IOPS", f"{src} l.62",
              ("idle_w", "e_prog_uj", "e_io_uj"), POWER_FIT, lambda r: _vdbench_fit(r, pre, 0, "10").iops),
        given("VDBench 4K 70/30 Q32T8, max", 285e3, "IOPS", f"{src} l.63", ("resume_us",),
              "the time a suspended program loses when it resumes, fitted to this figure (measured under the "
              "review's conditions, as the evidence rows below)", lambda r: _vdbench(r, pre, 70).iops),
        evidence("VDBench 4K 70/30 Q32T8, 15 W mode", 214e3, "IOPS", f"{src} l.63", VDBENCH,
                 lambda r: _vdbench(r, pre, 70, "15").iops),
        evidence("VDBench 4K 70/30 Q32T8, 10 W mode", 93e3, "IOPS", f"{src} l.63", VDBENCH,
                 lambda r: _vdbench(r, pre, 70, "10").iops),
    ]


# ------------------------------------------------------------------ YMTC PE321 (seed 003)

PE321_QD = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
PE321_WRITE = Procedure(
    "fio 4K random write", "seed 003 l.35, l.41", "4K random write; threads and queue depth not stated: T1 x Q128",
    "the whole drive (not stated)", f"not stated: {STEADY}", f"not stated: {NOT_STATED_S:g} s after a 1-s ramp")
PE321_MIX = Procedure(
    "fio 4K 70/30 queue-depth sweep", "seed 003 l.45-49",
    "4K random 70/30, T1 x Q1, Q2, Q4 .. Q512 (threads not stated: one); percentiles of all I/Os",
    "the whole drive (not stated)", f"not stated: {STEADY}",
    f"not stated: {NOT_STATED_S:g} s a point, QD rising, a 0.5-s pause between points",
    "'relaxed up to QD32' and 'a noticeable rise from QD64' (l.47) are quantified here: p99.99 at QD32 at most 2x "
    "QD1's, at QD64 at least 1.2x QD32's")
ACT = Procedure(
    "Aerospike ACT v6.5 at 300x", "seed 003 l.55-59",
    "900,000 transactions/s at 2:1 read/write (600,000 reads/s of 1.5 KB and ACT's large-block reads and writes of "
    "128 KiB), as one open-loop point: T64 x Q16, each job paced at 1/64 of the rate, Poisson arrivals",
    "the whole drive", f"not stated: {STEADY}",
    f"24 h in the review; {ACT_S:g} s here (cost) on a clock 1,440 times faster, so the drive's state moves as in "
    "24 h; its outliers every ~1,400 s (l.59) are not sampled",
    "ACT's latency includes the wait in its own service-thread queues; the model's is the device's only, "
    "a lower bound of ACT's")


def _sweep(runs: Runs, qd: int) -> Point:
    """The PE321's 70/30 sweep up to `qd` (the points before it run first, in order)."""
    p = None
    for q in PE321_QD:
        p = closed(runs, "pe321", "steady", f"4K 70/30 QD{q}, {NOT_STATED_S:g} s", rmix=70, qd=q,
                   runtime_s=NOT_STATED_S, ramp_s=0.5)
        if q == qd:
            return p
    raise ValueError(f"QD{qd} is not a point of the sweep")


def pe321_figures() -> list[Figure]:
    """YMTC PE321 6.4 TB, seed 003 (fio 3.35)."""
    pre, src = "pe321", "seed 003"
    fit = "measured as fitted: 128K sequential T1 x Q32 on the laid-out drive, 1 s; QD512 0.5 s"

    def pct(qd: int, p: float) -> Measure:
        return lambda r: _sweep(r, qd).pct_us(p)

    return [
        given("128K sequential read", 7.46, "GB/s", f"{src} l.35", ("host_mbps",),
              "the host link's payload rate (7,470 MB/s), set from this figure; " + fit,
              lambda r: gbps(closed(r, pre, "laid", "128K sequential read (fit)", rmix=100, bs=128 * KiB,
                                    random=False))),
        given("128K sequential write", 7.36, "GB/s", f"{src} l.35", ("tprog",),
              "tPROG 1.12 ms per 128 KiB unit: 7.49 GB/s of program bandwidth on 64 dies, set just above this "
              "figure; " + fit,
              lambda r: gbps(closed(r, pre, "laid", "128K sequential write (fit)", rmix=0, bs=128 * KiB,
                                    random=False))),
        given("4K random read QD512", 1.77e6, "IOPS", f"{src} l.39", ("cmd_bytes",),
              "120 link bytes per command: 1.77 M x (4 KiB + 120 B) is the sequential 7.46 GB/s; " + fit,
              lambda r: closed(r, pre, "laid", "4K random read QD512 (fit)", rmix=100, qd=512, runtime_s=0.5).iops),
        evidence("4K random write", 689e3, "IOPS", f"{src} l.41", PE321_WRITE,
                 lambda r: closed(r, pre, "steady", f"4K random write T1 x Q128, {NOT_STATED_S:g} s", rmix=0,
                                  qd=128, runtime_s=NOT_STATED_S, ramp_s=1.0).iops),
        evidence("4K 70/30 at QD512: reads", 747e3, "IOPS", f"{src} l.45", PE321_MIX,
                 lambda r: _sweep(r, 512).dir_iops(0)),
        evidence("4K 70/30 at QD512: writes", 320e3, "IOPS", f"{src} l.45", PE321_MIX,
                 lambda r: _sweep(r, 512).dir_iops(1)),
        evidence("4K 70/30 mean read latency at QD64 (over 200 µs only from QD128)", 200, "µs", f"{src} l.45",
                 PE321_MIX, lambda r: _sweep(r, 64).mean_us(0), check="below"),
        evidence("4K 70/30 mean read latency at QD128", 200, "µs", f"{src} l.45", PE321_MIX,
                 lambda r: _sweep(r, 128).mean_us(0), check="above"),
        evidence("4K 70/30 p99 at QD64 (under 1 ms until QD128)", 1000, "µs", f"{src} l.49", PE321_MIX, pct(64, 99),
                 check="below", tail=True),
        evidence("4K 70/30 p99 at QD128 (over 1 ms from QD128)", 1000, "µs", f"{src} l.49", PE321_MIX,
                 pct(128, 99), check="above", tail=True),
        evidence("4K 70/30 p99 at QD512 (not over 2 ms)", 2000, "µs", f"{src} l.49", PE321_MIX, pct(512, 99),
                 check="atmost", tail=True),
        evidence("4K 70/30 p99.99 at QD512", 2600, "µs", f"{src} l.49", PE321_MIX, pct(512, 99.99), tail=True),
        evidence("4K 70/30 p99.99 QD32 / QD1 (relaxed up to QD32)", 2.0, "x", f"{src} l.47", PE321_MIX,
                 lambda r: _sweep(r, 32).pct_us(99.99) / _sweep(r, 1).pct_us(99.99), check="atmost", tail=True),
        evidence("4K 70/30 p99.99 QD64 / QD32 (rises from QD64)", 1.2, "x", f"{src} l.47", PE321_MIX,
                 lambda r: _sweep(r, 64).pct_us(99.99) / _sweep(r, 32).pct_us(99.99), check="above", tail=True),
        evidence("ACT 300x: reads over 1 ms, average (max 3.58 %)", 3.03, "%", f"{src} l.57", ACT,
                 lambda r: act(r, pre).share_over_us(1000)),
        evidence("ACT 300x: reads over 2 ms", 0.1, "%", f"{src} l.57", ACT, lambda r: act(r, pre).share_over_us(2000)),
        evidence("ACT 300x: reads over 4 ms (none)", 0.0, "%", f"{src} l.57", ACT,
                 lambda r: act(r, pre).share_over_us(4000), check="atmost"),
    ]


# ------------------------------------------------------------------ Solidigm D5-P5316 (seed 001)

P5316 = Procedure(
    "fio on 24 drives at once, per drive", "seed 001 l.21-26",
    "64K random; threads and queue depth not stated: T1 x Q32", "5 % of each drive (l.21: partitioned so)",
    "each drive filled completely by a sequential fill (l.21); then the review's tests in its order "
    "(1M and 64K sequential, 64K random reads, writes, mixes)", f"not stated: {NOT_STATED_S:g} s a point",
    "the figures are the review's aggregate over 24 drives, divided by 24")


def _p5316(runs: Runs, name: str, *, rmix: int, bs: int, random: bool = True, fit: bool = False) -> Point:
    """A P5316 point in the review's order on its 5 % footprint after a full sequential fill (inputs: 1 s)."""
    secs = 1.0 if fit else NOT_STATED_S
    return closed(runs, "p5316", "laid", f"{name}, {secs:g} s on 5 %", rmix=rmix, bs=bs, random=random, span=0.05,
                  runtime_s=secs, ramp_s=0.3 if fit else 1.0)


def p5316_figures() -> list[Figure]:
    """Solidigm D5-P5316 30.72 TB (64K IU), seed 001: 24 drives in one server, per-drive figures."""
    pre, src = "p5316", "seed 001"
    link = "the host link's payload rate (7,400 MB/s), set from the 1M sequential read of 7.3 GB/s per drive"
    prog = ("tPROG 2.9 ms: 2.88 GB/s of program bandwidth on 128 dies, set between the review's 2.34-2.40 GB/s "
            "sequential writes and the 3.6 GB/s rating")
    ctrl = "the controller ceiling (900 K), set from the 4K reads (883 K per drive, 800 K rated)"
    return [
        given("spec: 128K sequential read", 7.0, "GB/s", f"{src} l.12", ("host_mbps",), link + " (the same ceiling)",
              lambda r: gbps(closed(r, pre, "laid", "128K sequential read (fit)", rmix=100, bs=128 * KiB,
                                    random=False))),
        given("spec: 128K sequential write", 3.6, "GB/s", f"{src} l.12", ("tprog",), prog,
              lambda r: gbps(closed(r, pre, "laid", "128K sequential write (fit)", rmix=0, bs=128 * KiB,
                                    random=False))),
        given("spec: 4K random read", 800e3, "IOPS", f"{src} l.12", ("ctrl_kiops",), ctrl,
              lambda r: closed(r, pre, "laid", "4K random read QD256 (fit)", rmix=100, qd=256).iops),
        given("1M sequential read, per drive", 7.3, "GB/s", f"{src} l.22", ("host_mbps",), link,
              lambda r: gbps(_p5316(r, "1M sequential read", rmix=100, bs=MiB, random=False, fit=True))),
        given("1M sequential write, per drive", 2.34, "GB/s", f"{src} l.22", ("tprog",), prog,
              lambda r: gbps(_p5316(r, "1M sequential write", rmix=0, bs=MiB, random=False, fit=True))),
        given("64K sequential read, per drive", 6.62, "GB/s", f"{src} l.23", ("host_mbps",), link + " (its ceiling)",
              lambda r: gbps(_p5316(r, "64K sequential read", rmix=100, bs=64 * KiB, random=False, fit=True))),
        given("64K sequential write, per drive", 2.40, "GB/s", f"{src} l.23", ("tprog",), prog,
              lambda r: gbps(_p5316(r, "64K sequential write", rmix=0, bs=64 * KiB, random=False, fit=True))),
        given("64K random read, per drive", 176.3 / 24, "GB/s", f"{src} l.24", ("host_mbps",), link + " (its ceiling)",
              lambda r: gbps(_p5316(r, "64K random read", rmix=100, bs=64 * KiB, fit=True))),
        evidence("64K random write, per drive", 13.2 / 24, "GB/s", f"{src} l.24", P5316,
                 lambda r: gbps(_p5316(r, "64K random write", rmix=0, bs=64 * KiB))),
        evidence("64K 70/30, per drive", 44 / 24, "GB/s", f"{src} l.25", P5316,
                 lambda r: gbps(_p5316(r, "64K 70/30", rmix=70, bs=64 * KiB))),
        evidence("64K 90/10, per drive", 130.7 / 24, "GB/s", f"{src} l.25", P5316,
                 lambda r: gbps(_p5316(r, "64K 90/10", rmix=90, bs=64 * KiB))),
        given("4K random read, per drive", 21.2e6 / 24, "IOPS", f"{src} l.26", ("ctrl_kiops",), ctrl,
              lambda r: closed(r, pre, "laid", "4K random read QD256, 1 s on 5 %", rmix=100, qd=256, span=0.05).iops),
        unmeasured("4K random write", "IOPS", f"{src} l.26",
                   "not a figure: the reviewers skipped it (the 64K IU makes it a poor fit)"),
    ]


# ------------------------------------------------------------------ Intel DC S3500 (seed 002)

S3500_BASIC = Procedure(
    "Iometer 1.1.0", "seed 002 l.133, l.153-159",
    "1M sequential write; threads and queue depth not stated: T1 x Q32 (SATA NCQ's 32 commands)",
    "the whole drive", "not stated: a new drive (the review's writes are far above the drive's steady-state rating)",
    f"not stated: {NOT_STATED_S:g} s after a 1-s ramp")
S3500_APPS = Procedure(
    "Iometer application profiles", "seed 002 l.171-179",
    "the classic file-server, web-server, database and workstation access specifications (transfer-size mixes "
    "and read shares, 512 B aligned, random); queue depth not stated: T1 x Q32", "the whole drive",
    "not stated: laid out", f"not stated: {NOT_STATED_S:g} s after a 1-s ramp")
S3500_QOS_S = 1000.0
S3500_QOS = Procedure(
    "Intel's consistency rating", "seed 002 l.70",
    "4K random reads, then writes, T1 x Q32, 1-s IOPS intervals (the review quotes the rating without its method: "
    "these conditions are assumed)", "the whole drive", STEADY,
    f"{S3500_QOS_S:g} s each (a 0.1st percentile needs 1,000 intervals)")


def _fit(runs: Runs, name: str, state: str, **kw: object) -> Point:
    return closed(runs, "s3500", state, name + " (fit)", **kw)  # type: ignore[arg-type]


def _unaligned(runs: Runs, qd: int) -> Point:
    """4K random writes on a new drive shifted by 512 B (each straddles two 4 KiB IUs)."""
    return runs.point("s3500", "fob", f"4K random write, 512 B shifted, QD{qd} (fit)",
                      lambda d: d.run(rmix=0, qd=qd, runtime_s=1.0, ramp_s=0.3, offset=512, align=4096))


def _consistency(runs: Runs, rmix: int) -> float:
    p = closed(runs, "s3500", "steady", f"4K random {'read' if rmix else 'write'} T1 x Q32, {S3500_QOS_S:g} s",
               rmix=rmix, qd=32, runtime_s=S3500_QOS_S, ramp_s=2.0, interval_ms=1000)
    return low_share(p.per_second())


def s3500_figures() -> list[Figure]:
    """Intel DC S3500 480 GB (SATA, MLC), seed 002 (Iometer 1.1.0)."""
    src = "seed 002"
    reads = "the controller's read ceiling (93 K), set from the 4K sequential read; measured as fitted (QD32, 1 s)"
    writes = ("the controller's write ceiling (64 K), set from the aligned 4K random write on a new drive; measured "
              "as fitted (QD32, 1 s)")
    return [
        given("4K sequential read", 92.8e3, "IOPS", f"{src} l.155", ("ctrl_kiops",), reads,
              lambda r: _fit(r, "4K sequential read", "laid", rmix=100, random=False).iops),
        given("4K random read", 84.3e3, "IOPS", f"{src} l.155", ("ctrl_kiops",),
              reads + " (the random reads read the same ceiling)",
              lambda r: _fit(r, "4K random read", "laid", rmix=100).iops),
        given("4K sequential write (new drive)", 62.8e3, "IOPS", f"{src} l.157", ("ctrl_w_kiops",),
              writes + " (the sequential writes read the same ceiling)",
              lambda r: _fit(r, "4K sequential write", "fob", rmix=0, random=False).iops),
        given("4K random write, 4K-aligned (new drive)", 63.7e3, "IOPS", f"{src} l.166", ("ctrl_w_kiops",), writes,
              lambda r: _fit(r, "4K random write", "fob", rmix=0).iops),
        given("4K random write, not 4K-aligned (new drive)", 14.7e3, "IOPS", f"{src} l.166", ("slowpath_kiops",),
              "the firmware slow path's ceiling, set from this figure (QD32, 1 s)",
              lambda r: _unaligned(r, 32).iops),
        given("4K random write latency at QD1, unaligned / aligned", 5.9, "x", f"{src} l.164", ("slowpath_us",),
              "the slow path's latency (100 µs), fitted to this ratio (QD1, 1 s)",
              lambda r: _unaligned(r, 1).mean_us(1) / _fit(r, "4K random write QD1", "fob", rmix=0, qd=1).mean_us(1)),
        given("1M sequential read", 546 * MiB / 1e9, "GB/s", f"{src} l.159", ("host_mbps",),
              "the SATA link's payload rate: 546 MiB/s is 572 MB/s, set from this figure (QD32, 1 s)",
              lambda r: gbps(_fit(r, "1M sequential read", "laid", rmix=100, bs=MiB, random=False))),
        evidence("1M sequential write", 410 * MiB / 1e9, "GB/s", f"{src} l.159", S3500_BASIC,
                 lambda r: gbps(closed(r, "s3500", "fob", f"1M sequential write T1 x Q32, {NOT_STATED_S:g} s",
                                       rmix=0, bs=MiB, random=False, runtime_s=NOT_STATED_S, ramp_s=1.0))),
        evidence("Iometer file server", 17.4e3, "IOPS", f"{src} l.173", S3500_APPS,
                 lambda r: iometer(r, "s3500", "file server")),
        evidence("Iometer web server", 25.6e3, "IOPS", f"{src} l.175", S3500_APPS,
                 lambda r: iometer(r, "s3500", "web server")),
        evidence("Iometer database", 23.6e3, "IOPS", f"{src} l.177", S3500_APPS,
                 lambda r: iometer(r, "s3500", "database")),
        evidence("Iometer workstation", 29.4e3, "IOPS", f"{src} l.179", S3500_APPS,
                 lambda r: iometer(r, "s3500", "workstation")),
        evidence("consistency: 0.1st percentile of 1-s read IOPS / mean (at least 90 %)", 0.90, "x", f"{src} l.70",
                 S3500_QOS, lambda r: _consistency(r, 100), check="above"),
        evidence("consistency: 0.1st percentile of 1-s write IOPS / mean (at least 75 %)", 0.75, "x", f"{src} l.70",
                 S3500_QOS, lambda r: _consistency(r, 0), check="above"),
    ]


# ------------------------------------------------------------------ Toshiba CD5 and CM5-R (seed 004)

TOSHIBA_PTS = Procedure(
    "modified SNIA PTS 2.0.1 IOPS test (fio 3.14)", "seed 004 l.52, l.60, l.64-82",
    "random, block size 1024K..4K x read/write 100/0..0/100, T16 x Q8", "the whole drive",
    "secure erase, 128K sequential writes of twice the capacity (l.60); rounds until the 4K 0/100 IOPS of 4 rounds "
    "keep their fitted line within 90-110 % of their mean (25 rounds at most); the table: the mean of those 4 rounds",
    f"1 min a point in the review; {PTS_ROUND_S:g} s here (49 points a round) on a clock 60 times faster, so a "
    "point moves the drive's state as the review's minute did",
    "the review: reads a little below the ratings because the host CPU limited them (l.62, l.83); writes far above "
    "them because the test never reaches saturation (l.83)")
TOSHIBA_LAT = Procedure(
    "modified SNIA PTS latency test", "seed 004 l.54-58, l.85-88",
    "4K random at T4 x Q32 (the review sweeps QD 1-32 x 1-4 threads; this is its largest point)", "the whole drive",
    "secure erase, 128K sequential writes of twice the capacity, then 4K 100/0, 70/30 and 0/100 in one round",
    "5 s warm-up + 30 s a point, as the review; it averages 4 of 25 rounds, here the first round")
TOSHIBA_SEQ = Procedure(
    "vendor rating quoted by the review", "seed 004 l.27",
    "128K sequential read; the rating's conditions are not in the review: T1 x Q32", "the whole drive",
    "laid out", "1 s",
    "the CD5's link (PCIe 3.0 x4, 3,500 MB/s) is set from the CM5-R's rating: no parameter comes from this one")
TOSHIBA_SPEC = Procedure(
    "vendor rating quoted by the review", "seed 004 l.28, l.38",
    "4K random write; the rating's conditions are not in the review: T4 x Q64 (QD256)", "the whole drive",
    f"not stated: {STEADY} (data-centre ratings are steady-state figures)", f"not stated: {NOT_STATED_S:g} s")


def _mix_drop(runs: Runs, preset: str) -> float:
    return pts_latency(runs, preset, 70).iops / pts_latency(runs, preset, 100).iops


def toshiba_figures(model: str) -> list[Figure]:
    """Toshiba CD5 and CM5-R 7.68 TB (TLC, PCIe 3.0 x4), seed 004: the ratings the review quotes, its IOPS tables
    and its latency-vs-IOPS findings."""
    pre, src = model, "seed 004"
    spec = {"cd5": (3140, 1980, 550e3, 50e3, "l.27-28", "< 1"), "cm5-r": (3350, 3040, 770e3, 80e3, "l.37-38", "1")}
    seq_r, seq_w, rr, rw, lines, dwpd = spec[model]
    fit = "measured as fitted: 128K sequential T1 x Q32 laid out, 4K at T4 x Q64 at steady state, 1 s"
    link = "the host link's payload rate (3,500 MB/s), set from this rating: " + fit
    seq_read: Measure = lambda r: gbps(closed(r, pre, "laid", "128K sequential read T1 x Q32, 1 s", rmix=100,  # noqa: E731
                                              bs=128 * KiB, random=False))
    rows = [
        given("spec: 128K sequential read", seq_r / 1000, "GB/s", f"{src} {lines}", ("host_mbps",), link, seq_read)
        if model == "cm5-r" else
        evidence("spec: 128K sequential read", seq_r / 1000, "GB/s", f"{src} {lines}", TOSHIBA_SEQ, seq_read),
        given("spec: 128K sequential write", seq_w / 1000, "GB/s", f"{src} {lines}",
              ("tprog",) if model == "cm5-r" else ("tprog", "dies"),
              ("tPROG 1.38 ms: 3.04 GB/s of program bandwidth on 64 dies, set from this rating" if model == "cm5-r"
               else "5 dies a channel (40): 1.9 GB/s of program bandwidth at the CM5-R's tPROG, set from this "
               "rating") + "; " + fit,
              lambda r: gbps(closed(r, pre, "laid", "128K sequential write (fit)", rmix=0, bs=128 * KiB,
                                    random=False))),
        given("spec: 4K random read", rr, "IOPS", f"{src} {lines}", ("ctrl_kiops",),
              f"the controller ceiling ({rr / 1000 + 10:.0f} K), set from this rating; " + fit,
              lambda r: closed(r, pre, "steady", "4K random read T4 x Q64 (fit)", rmix=100, qd=64, jobs=4).iops),
    ]
    if model == "cm5-r":
        rows.append(evidence("spec: 4K random write", rw, "IOPS", f"{src} {lines}", TOSHIBA_SPEC,
                             lambda r: closed(r, pre, "steady", f"4K random write T4 x Q64, {NOT_STATED_S:g} s",
                                              rmix=0, qd=64, jobs=4, runtime_s=NOT_STATED_S, ramp_s=1.0).iops))
    else:
        rows.append(given("spec: 4K random write", rw, "IOPS", f"{src} {lines}", ("op", "dies"),
                          "OP 5.5 % and 40 dies, set so the steady-state 4K write meets this rating; " + fit,
                          lambda r: closed(r, pre, "steady", "4K random write T4 x Q64 (fit)", rmix=0, qd=64,
                                           jobs=4).iops))
    rows.append(unmeasured(f"spec: endurance {dwpd} DWPD", "DWPD", f"{src} l.29, l.39",
                           "an endurance rating: the model has no wear-out"))
    rows.append(evidence("4K random read T4 x Q32, mean latency (under 200 µs)", 200, "µs", f"{src} l.87",
                         TOSHIBA_LAT, lambda r: pts_latency(r, pre, 100).mean_us(0), check="below"))
    if model == "cd5":
        rows.append(evidence("4K 70/30 over 100/0 IOPS at T4 x Q32, CD5 / CM5-R (sharper drop with 30 % writes)",
                             1.0, "x", f"{src} l.88", TOSHIBA_LAT,
                             lambda r: _mix_drop(r, "cd5") / _mix_drop(r, "cm5-r"), check="below"))
    rows += [evidence(f"PTS IOPS {bs // KiB}K {mix}/{100 - mix}", value, "IOPS", f"{src} l.{line}", TOSHIBA_PTS,
                      _pts_cell(pre, bs, mix))
             for (bs, mix, value, line) in _pts_published(model)]
    return rows


def _pts_cell(preset: str, bs: int, mix: int) -> Measure:
    return lambda r: pts_iops(r, preset).cells[(bs, mix)]


# the review's IOPS tables (seed 004 l.64-82): rows 4K, 8K .. 1024K; columns read/write 0/100, 5/95, 35/65, 50/50,
# 65/35, 95/5, 100/0
PTS_COLUMNS = (0, 5, 35, 50, 65, 95, 100)  # read % of each column
PTS_TABLES: dict[str, tuple[int, dict[int, tuple[int, ...]]]] = {
    "cd5": (66, {4: (205848, 91678, 304683, 241511, 296083, 351779, 497902),
                 8: (187268, 46830, 165521, 120714, 148137, 142568, 298281),
                 16: (96881, 50605, 58502, 49327, 74084, 50672, 102026),
                 32: (50518, 27052, 17982, 28993, 37048, 46975, 26233),
                 64: (22789, 3829, 10886, 17062, 18510, 37492, 22447),
                 128: (8333, 3927, 5418, 8112, 9257, 15766, 21188),
                 1024: (517, 529, 391, 1718, 1155, 1433, 2811)}),
    "cm5-r": (76, {4: (311008, 334946, 545323, 593754, 596171, 708111, 752167),
                   8: (305462, 249361, 323601, 339444, 340872, 388749, 394631),
                   16: (180080, 138188, 168206, 176329, 183779, 199478, 197895),
                   32: (92328, 63423, 85200, 88654, 95513, 100410, 99268),
                   64: (48467, 43752, 45661, 46314, 49002, 50336, 49642),
                   128: (24602, 20221, 22454, 24007, 25303, 25644, 25270),
                   1024: (3090, 2285, 2670, 3129, 3173, 3215, 3227)}),
}


def _pts_published(model: str) -> list[tuple[int, int, float, int]]:
    """(block size, read %, IOPS, seed line) of the review's table, in the test's order."""
    first, table = PTS_TABLES[model]
    line = {kib: first + i for i, kib in enumerate(table)}
    out = []
    for mix in PTS_MIXES:
        for bs in PTS_SIZES:
            kib = bs // KiB
            out.append((bs, mix, float(table[kib][PTS_COLUMNS.index(mix)]), line[kib]))
    return out


TABLES: dict[str, Callable[[], list[Figure]]] = {
    "p5430": lambda: p5430_figures(op=False),
    "p5430-op": lambda: p5430_figures(op=True),
    "pe321": pe321_figures,
    "p5316": p5316_figures,
    "s3500": s3500_figures,
    "cd5": lambda: toshiba_figures("cd5"),
    "cm5-r": lambda: toshiba_figures("cm5-r"),
}


def table(preset: str, seeds: Seeds | None = None) -> list[Row]:
    """Every figure of the preset's drive against the model ([] for the generic presets), in table order."""
    make = TABLES.get(preset)
    if make is None:
        return []
    seeds = seeds or Seeds()
    return [judge(f, seeds) for f in make()]


def counted(rows: list[Row]) -> list[Row]:
    """The evidence rows: the verdict and the worst ratio are theirs."""
    return [r for r in rows if r.counted]


def worst_ratio(rows: list[Row]) -> float | None:
    """The ratio farthest from 1 (as max(r, 1/r)) among the evidence rows that compare ratios."""
    ratios = [r.ratio for r in counted(rows) if r.figure.check == "ratio" and r.ratio]
    return max(ratios, key=lambda r: max(r, 1 / r)) if ratios else None
