"""Shape rules of `ssdlab sim validate`, for every preset: what a reviewer sees at a glance (docs/sim.md).

The reviewer's rules (each run on every preset, on its drive laid out and brought to 4K random-write steady state
unless said otherwise):
1. no point with at least 1,000 I/Os (of a direction) has p99.99 = p50: a bandwidth-, link- or controller-bound
   point still has a spread (every point below counts, link-bound sequential reads and QD1 writes included);
2. per-second IOPS vary: their coefficient of variation over 10 one-second intervals is at least COV_FLOOR_PCT at
   the controller's read ceiling, the host link's sequential-read ceiling, steady-state writes and a 70/30 mix;
3. the average power of every point stays within the form factor's envelope (presets.form_factor);
4. under a power cap (the preset's own power modes, else a cap half-way between idle and its uncapped draw) no
   I/O waits more than CAP_WAIT_X times the point's mean latency (a stall of a whole power window is 100x);
5. IOPS vs queue depth (4K random reads, T1, QD 1..256) bends before it saturates: at some depth the IOPS are at
   most CURVE_SHARE of both the QD1 IOPS scaled linearly and the IOPS at QD256;
6. WSAT settles: from a new drive, 4K random writes at T4 x Q32 in rounds of 1/20 of the capacity; within
   WSAT_SETTLE_FILLS fills every later round is within WSAT_BAND of the mean of the last (4th) fill;
7. tail rows report their spread over seeds: the QD1 read p99.99 and the 70/30 QD32 p99.99, one drive per seed
   (procedures.SEEDS); a tail that does not move with the seed is not sampled (zero spread fails).

And the model's own latency checks (kept from before):
- QD1 4K random reads spread as NAND reads do: p99.99 / p50 between 1.5 and 6, p99 / p50 at least 1.3;
- on a 4K 70/30 queue-depth sweep, every percentile rises with the queue depth (one histogram bin of slack);
- in a PTS-LAT-like sequence no read-only point carries a write point's stall (its longest read is within the
  preset's worst GC step);
- a preset that is another one re-provisioned reads as fast as it after the writes of a PTS IOPS round.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ssdlab.sim.lab import Drive, Point, cov_pct
from ssdlab.sim.presets import form_factor, mean_read_us, per_type, resolve
from ssdlab.sim.procedures import SEEDS

KiB = 1024
SWEEP_QD = (1, 2, 4, 8, 16, 32, 64)
# seconds of each sweep point: a p99.99 at QD 1-2 rests on few samples (48 s once fell by chance on p5316), so they
# run long enough for 1.5-15 million I/Os, QD2 half as long as QD1 (about as many I/Os); 4 s above
SWEEP_S = {1: 256.0, 2: 128.0}
SWEEP_PCTS = (50.0, 99.0, 99.9, 99.99)
BIN_SLACK = 1.0 - 1.0 / 64  # one histogram bin
LAT_SEQUENCE = ((100, 8192), (100, 4096), (100, 512), (65, 8192), (65, 4096), (65, 512),
                (0, 8192), (0, 4096), (0, 512))
# presets that are another preset with more over-provisioning (the same NAND and controller)
OP_VARIANTS = {"tlc-4k-28": "tlc-4k", "p5430-op": "p5430"}
OP_READ_SIZES = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024)
OP_ROUND = (*((100, bs) for bs in OP_READ_SIZES), (0, 4096), (0, 512))
OP_READ_FLOOR = 0.95

MIN_IOS = 1000  # rule 1: points with at least this many I/Os of a direction
COV_FLOOR_PCT = 0.1  # rule 2: a tenth of the smallest per-second CoV a seed review publishes (1.05 %, seed 000 l.47)
STEADY_S = 10.0  # rule 2 and 3 points: 10 one-second intervals
# rule 3: the most a form factor allows (presets.ENVELOPES): U.2 (2.5" NVMe) 25 W (seed 004 l.41); SATA 2.5" 7.2 W,
# the S3500's rated input (5 V x 1.44 A or 12 V x 0.6 A, seed 002 l.101)
POWER_MODES = {"p5430": (15.0, 10.0), "p5430-op": (15.0, 10.0)}  # seed 000 l.22-23
CAP_WAIT_X = 10.0  # rule 4
CAP_RAMP_S, CAP_S = 3.0, 5.0
CURVE_QD = (1, 2, 4, 8, 16, 32, 64, 128, 256)  # rule 5
CURVE_SHARE = 0.9
WSAT_ROUNDS_PER_FILL, WSAT_FILLS, WSAT_SETTLE_FILLS, WSAT_BAND = 20, 4, 3, 0.10  # rule 6


@dataclass(frozen=True)
class Shape:
    """One shape check of one preset."""

    preset: str
    name: str
    measured: str
    rule: str
    ok: bool


@dataclass
class Battery:
    """The points a preset's shape checks ran, by name (rule 1 reads them all)."""

    points: dict[str, Point] = field(default_factory=dict)

    def add(self, name: str, p: Point) -> Point:
        self.points[name] = p
        return p


def worst_gc_step_us(v: Mapping[str, Any]) -> float:
    """The longest a GC step holds a die, µs: a read of the slowest page type (with its most read-retry steps) and a
    program of the slowest page type, at the op-time distribution's longest, plus an erase's share; a read that
    finds its die there waits at most that before its own read."""
    stretch = 1.0 + min(0.95, float(v["tvar"]) / 100.0 * math.sqrt(6.0))
    retry_max = max(1, math.floor(2 * float(v["retry_steps"]) - 1 + 0.5))
    erase = float(v["tbers"]) * float(v["pages"]) / max(float(v["block_pages"]), float(v["pages"]))
    return (max(per_type(v, "tr")) * (1 + retry_max) + max(per_type(v, "tprog")) + erase) * stretch


# ------------------------------------------------------------------ the model's latency checks

def qd1_shape(preset: str, d: Drive, bat: Battery) -> list[Shape]:
    """QD1 4K random reads on the drive at steady state."""
    d.idle(2.0)
    p = bat.add("QD1 4K random read", d.run(rmix=100, qd=1, runtime_s=8.0, ramp_s=0.2))
    p50, p99, p9999 = (p.pct_us(q, (0,)) for q in (50.0, 99.0, 99.99))
    return [
        Shape(preset, "QD1 4K random read p99.99 / p50", f"{p9999 / p50:.2f} ({p9999:.0f} / {p50:.0f} µs)",
              "1.5 .. 6", 1.5 <= p9999 / p50 <= 6.0),
        Shape(preset, "QD1 4K random read p99 / p50", f"{p99 / p50:.2f} ({p99:.0f} / {p50:.0f} µs)", ">= 1.3",
              p99 / p50 >= 1.3),
    ]


def sweep_shape(preset: str, d: Drive, bat: Battery) -> list[Shape]:
    """4K 70/30 at rising queue depth: each percentile (all I/Os) at least the one before, less one bin."""
    points: list[Point] = []
    for qd in SWEEP_QD:
        d.idle(0.5)
        points.append(bat.add(f"4K 70/30 QD{qd}", d.run(rmix=70, qd=qd, runtime_s=SWEEP_S.get(qd, 4.0), ramp_s=0.2)))
    out = []
    for q in SWEEP_PCTS:
        values = [p.pct_us(q) for p in points]
        falls = [f"QD{a}->QD{b}" for a, b, x, y in zip(SWEEP_QD, SWEEP_QD[1:], values, values[1:], strict=False)
                 if y < x * BIN_SLACK]
        text = " ".join(f"{x:.0f}" for x in values) + " µs"
        out.append(Shape(preset, f"4K 70/30 p{q:g} rises with QD {SWEEP_QD[0]}..{SWEEP_QD[-1]}",
                         text + (f"; falls at {', '.join(falls)}" if falls else ""), "no fall", not falls))
    return out


def lat_shape(preset: str, d: Drive, bat: Battery) -> list[Shape]:
    """PTS-LAT-like rounds after steady state: the longest read of every read-only point vs the worst GC step."""
    bound = worst_gc_step_us(d.values) + 2 * mean_read_us(d.values, 8192)
    worst = 0.0
    for k in range(3):
        for rmix, bs in LAT_SEQUENCE:
            p = bat.add(f"PTS-LAT round {k + 1} {bs}B {rmix}/{100 - rmix}",
                        d.run(rmix=rmix, bs=bs, qd=1, runtime_s=0.5, align=512 if bs < 4096 else 0))
            if rmix == 100:
                worst = max(worst, p.max_us((0,)))
    return [Shape(preset, "PTS-LAT rounds: longest read of a read-only point", f"{worst:,.0f} µs",
                  f"<= worst GC step + the read ({bound:,.0f} µs)", worst <= bound)]


def round_reads(d: Drive, rounds: int = 2) -> dict[int, float]:
    """Read IOPS per block size in the last of `rounds` OP_ROUNDs, after a PTS WIPC (2x the capacity of 128K
    sequential writes) on the laid-out drive."""
    d.fill()
    d.run(rmix=0, bs=128 * 1024, qd=32, random=False, io_bytes=2 * d.user)
    out: dict[int, float] = {}
    for _ in range(rounds):
        for rmix, bs in OP_ROUND:
            p = d.run(rmix=rmix, bs=bs, qd=32, jobs=4, runtime_s=0.5, align=512 if bs < 4096 else 0)
            if rmix == 100:
                out[bs] = p.iops
    return out


def op_shape(preset: str, variant: Drive, base: Drive) -> Shape:
    """Reads of an OP variant against its base preset's after a round's writes: variant / base at every size."""
    got, ref = round_reads(variant), round_reads(base)
    ratios = {bs: got[bs] / ref[bs] for bs in OP_READ_SIZES}
    low = min(ratios, key=lambda bs: ratios[bs])
    text = f"{min(ratios.values()):.3f} .. {max(ratios.values()):.3f} (lowest at {low // 1024}K)"
    return Shape(preset, f"16K-1M reads after a PTS IOPS round's writes / {base.preset}'s", text,
                 f">= {OP_READ_FLOOR}", ratios[low] >= OP_READ_FLOOR)


# ------------------------------------------------------------------ the reviewer's rules

def zero_width(preset: str, bat: Battery) -> Shape:
    """Rule 1 over every point the checks ran."""
    flat = []
    checked = 0
    for name, p in bat.points.items():
        for d, label in ((0, "read"), (1, "write")):
            if int(p.result["dirs"][d][0]) < MIN_IOS:
                continue
            checked += 1
            if p.pct_us(99.99, (d,)) <= p.pct_us(50, (d,)):
                flat.append(f"{name} {label}s at {p.pct_us(50, (d,)):,.1f} µs")
    text = f"{len(flat)} of {checked} flat" + (f": {'; '.join(flat[:4])}" if flat else "")
    return Shape(preset, f"no point of >= {MIN_IOS:,} I/Os has p99.99 = p50", text, "none flat", not flat)


STEADY_POINTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("4K random read T4 x Q64", {"rmix": 100, "qd": 64, "jobs": 4}),
    ("128K sequential read T1 x Q32", {"rmix": 100, "bs": 128 * KiB, "qd": 32, "random": False}),
    ("1M sequential read T1 x Q128", {"rmix": 100, "bs": 1024 * KiB, "qd": 128, "random": False}),
    ("4K random write T4 x Q32", {"rmix": 0, "qd": 32, "jobs": 4}),
    ("128K sequential write T1 x Q32", {"rmix": 0, "bs": 128 * KiB, "qd": 32, "random": False}),
    ("4K 70/30 T4 x Q32", {"rmix": 70, "qd": 32, "jobs": 4}),
)
COV_POINTS = ("4K random read T4 x Q64", "128K sequential read T1 x Q32", "4K random write T4 x Q32",
              "4K 70/30 T4 x Q32")


def steady_points(d: Drive, bat: Battery) -> dict[str, Point]:
    """The rule 2 and 3 points, 10 s each with 1-s intervals, one after the other."""
    out = {}
    for name, kw in STEADY_POINTS:
        d.idle(0.5)
        out[name] = bat.add(name, d.run(runtime_s=STEADY_S, ramp_s=0.5, interval_ms=1000, **kw))
    return out


def cov_shape(preset: str, points: Mapping[str, Point]) -> Shape:
    """Rule 2."""
    covs = {name: cov_pct(points[name].per_second()) for name in COV_POINTS}
    low = [name for name, c in covs.items() if c < COV_FLOOR_PCT]
    text = ", ".join(f"{c:.3f}" for c in covs.values()) + " %" + (f"; below: {', '.join(low)}" if low else "")
    return Shape(preset, "per-second IOPS CoV: 4K read, 128K read, 4K write, 70/30", text,
                 f">= {COV_FLOOR_PCT:g} % each", not low)


def power_shape(preset: str, points: Mapping[str, Point]) -> Shape:
    """Rule 3."""
    form, limit = form_factor(preset)
    name, p = max(points.items(), key=lambda kv: kv[1].power_w)
    return Shape(preset, f"average power within the {form} envelope", f"at most {p.power_w:.1f} W ({name})",
                 f"<= {limit:g} W, to 0.1 W", round(p.power_w, 1) <= limit)


CAP_POINTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("4K random write T4 x Q32", {"rmix": 0, "qd": 32, "jobs": 4}),
    ("4K random read T4 x Q64", {"rmix": 100, "qd": 64, "jobs": 4}),
    ("4K 70/30 T4 x Q32", {"rmix": 70, "qd": 32, "jobs": 4}),
)


def caps(preset: str, uncapped: Mapping[str, Point], idle_w: float) -> tuple[float, ...]:
    """The preset's power modes, else one cap half-way between idle power and its highest uncapped draw."""
    if preset in POWER_MODES:
        return POWER_MODES[preset]
    top = max(p.power_w for p in uncapped.values())
    return (round(idle_w + (top - idle_w) / 2, 1),)


def wait_ratio(p: Point) -> tuple[float, float]:
    """The longest I/O of a point over its mean latency (reads and writes together), and the mean, µs."""
    n = sum(int(x[0]) for x in p.result["dirs"][:2])
    mean = sum(float(x[2]) for x in p.result["dirs"][:2]) / n / 1000.0 if n else 0.0
    return (p.max_us() / mean if mean else float("inf")), mean


def cap_shape(preset: str, uncapped: Mapping[str, Point], bat: Battery,
              steady: Callable[[dict[str, str]], Drive]) -> Shape:
    """Rule 4: the longest I/O against the mean latency of each point under each cap."""
    idle_w = float(resolve(preset, {})["idle_w"])
    worst = (0.0, "")
    for cap in caps(preset, uncapped, idle_w):
        d = steady({"power": f"{cap:g}"})
        for name, kw in CAP_POINTS:
            d.idle(0.5)
            p = bat.add(f"{name} at {cap:g} W", d.run(runtime_s=CAP_S, ramp_s=CAP_RAMP_S, **kw))
            x, mean = wait_ratio(p)
            if x > worst[0]:
                worst = (x, f"{name} at {cap:g} W: longest {p.max_us():,.0f} µs, mean {mean:,.0f} µs")
    return Shape(preset, "under a power cap the longest I/O / the mean", f"{worst[0]:.1f}x ({worst[1]})",
                 f"<= {CAP_WAIT_X:g}x", worst[0] <= CAP_WAIT_X)


def bends(iops: Mapping[int, float]) -> list[tuple[int, float, float]]:
    """The queue depths (ascending, from 1) where the IOPS are at most CURVE_SHARE of both the QD1 IOPS scaled
    linearly and the IOPS at the deepest queue: (depth, share of linear, share of the top)."""
    depths = sorted(iops)
    one, top = iops[depths[0]] / depths[0], iops[depths[-1]]
    return [(qd, iops[qd] / (qd * one), iops[qd] / top) for qd in depths
            if iops[qd] <= CURVE_SHARE * qd * one and iops[qd] <= CURVE_SHARE * top]


def curve_shape(preset: str, d: Drive, bat: Battery) -> Shape:
    """Rule 5: 4K random reads, T1, QD 1..256, 1 s each."""
    iops = {}
    for qd in CURVE_QD:
        d.idle(0.2)
        iops[qd] = bat.add(f"4K random read QD{qd}", d.run(rmix=100, qd=qd, runtime_s=1.0, ramp_s=0.2)).iops
    bent = bends(iops)
    shown = " ".join(f"{iops[qd] / 1000:,.0f}" for qd in CURVE_QD) + " K IOPS"
    where = f"; bends at QD{bent[0][0]} ({bent[0][1]:.2f} of linear, {bent[0][2]:.2f} of QD256)" if bent else ""
    return Shape(preset, "4K read IOPS vs QD 1..256 bends before it saturates", shown + where,
                 f"<= {CURVE_SHARE:g} of both somewhere", bool(bent))


def settling(series: list[float], per_fill: int = WSAT_ROUNDS_PER_FILL) -> tuple[float, float]:
    """(the plateau: the mean of the last fill's rounds, the fills written before every later round stays within
    WSAT_BAND of it)."""
    plateau = statistics.fmean(series[-per_fill:])
    outside = [k for k, v in enumerate(series) if abs(v / plateau - 1) > WSAT_BAND]
    return plateau, (outside[-1] + 1 if outside else 0) / per_fill


def wsat_shape(preset: str, bat: Battery) -> Shape:
    """Rule 6: from a new drive, rounds of 1/20 capacity of 4K random writes at T4 x Q32, 4 fills."""
    d = Drive(preset)
    per_job = d.user // WSAT_ROUNDS_PER_FILL // 4 // 4096 * 4096
    series = []
    for k in range(WSAT_ROUNDS_PER_FILL * WSAT_FILLS):
        p = d.run(rmix=0, qd=32, jobs=4, io_bytes=per_job)
        series.append(p.iops)
        if k == WSAT_ROUNDS_PER_FILL * WSAT_FILLS - 1:
            bat.add("WSAT last round", p)
    plateau, settled = settling(series)
    first = statistics.fmean(series[:WSAT_ROUNDS_PER_FILL // 4])
    text = (f"plateau {plateau / 1000:,.0f} K IOPS (FOB {first / 1000:,.0f} K), within ±{WSAT_BAND:.0%} from "
            f"{settled:.2f} fills")
    return Shape(preset, f"WSAT settles within {WSAT_SETTLE_FILLS} fills (4K, T4 x Q32)", text,
                 f"<= {WSAT_SETTLE_FILLS} fills", settled <= WSAT_SETTLE_FILLS)


def seed_shape(preset: str, bat: Battery) -> list[Shape]:
    """Rule 7: the QD1 read p99.99 and the 70/30 QD32 p99.99, one steady-state drive per seed."""
    qd1, mix = [], []
    for s in SEEDS:
        d = Drive(preset, {"seed": str(s)}, seed=1 + 1000 * (s - 1)).steady()
        d.idle(2.0)
        qd1.append(bat.add(f"QD1 4K random read, seed {s}", d.run(rmix=100, qd=1, runtime_s=8.0, ramp_s=0.2))
                   .pct_us(99.99, (0,)))
        d.idle(0.5)
        mix.append(bat.add(f"4K 70/30 QD32, seed {s}", d.run(rmix=70, qd=32, runtime_s=4.0, ramp_s=0.2))
                   .pct_us(99.99))
    return [spread_shape(preset, "QD1 4K read p99.99", qd1), spread_shape(preset, "4K 70/30 QD32 p99.99", mix)]


def spread_shape(preset: str, name: str, values: list[float]) -> Shape:
    """A tail over seeds: min / median / max; the same value for every seed fails."""
    text = f"{min(values):,.0f} / {statistics.median(values):,.0f} / {max(values):,.0f} µs (min / median / max)"
    return Shape(preset, f"{name} over {len(values)} seeds", text, "spread > 0", max(values) > min(values))


def check(preset: str, progress: Callable[[str], None] | None = None) -> list[Shape]:
    """Every shape check and rule of one preset (most on its drive laid out and brought to 4K random-write steady
    state, one after the other; each keeps it there); an OP variant is also compared with its base preset."""
    say = progress or (lambda _: None)
    bat = Battery()
    say(f"{preset}: shape checks (QD1 reads, 70/30 QD sweep, PTS-LAT rounds)")
    d = Drive(preset).steady()
    out = qd1_shape(preset, d, bat)
    out += sweep_shape(preset, d, bat)
    out += lat_shape(preset, d, bat)
    if preset in OP_VARIANTS:
        out.append(op_shape(preset, Drive(preset), Drive(OP_VARIANTS[preset])))
    say(f"{preset}: rules 2-3 (10 s points with 1-s intervals), 4 (power caps), 5 (QD curve)")
    points = steady_points(d, bat)
    out.append(cov_shape(preset, points))
    out.append(power_shape(preset, points))
    out.append(cap_shape(preset, points, bat, lambda o: Drive(preset, o).steady()))
    out.append(curve_shape(preset, d, bat))
    say(f"{preset}: rule 6 (WSAT from a new drive, {WSAT_FILLS} fills), rule 7 ({len(SEEDS)} seeds)")
    out.append(wsat_shape(preset, bat))
    out += seed_shape(preset, bat)
    out.insert(0, zero_width(preset, bat))
    return out

