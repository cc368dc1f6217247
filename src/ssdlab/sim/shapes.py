"""Shape checks of `ssdlab sim validate`, for every preset: does the latency distribution look like a drive's?

- QD1 4K random reads spread as NAND reads do: p99.99 / p50 between 1.5 and 6, p99 / p50 at least 1.3;
- on a 4K 70/30 queue-depth sweep, every percentile rises with the queue depth (one histogram bin of slack:
  fio's bins are 1/64 of a power of two wide);
- in a PTS-LAT-like sequence (rounds of 8K/4K/0.5K at 100/0, 65/35, 0/100, T1Q1, 0.5 s each), no read-only
  point carries a write point's stall: its longest read is within the preset's worst GC step;
- a preset that is another one re-provisioned (more OP, the same NAND) reads as fast as it after the writes of a
  PTS IOPS round: a read-only point depends on OP only through what the drive carries (its data's layout).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.sim.lab import Drive, Point
from ssdlab.sim.presets import per_type
from ssdlab.sim.validate import qd1_read_us

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
# a PTS-IOPS-like round at T4Q32, 0.5 s a point: 100/0 at the sizes compared, then the small random writes that
# end a PTS IOPS round (they leave the most NAND work behind); the reads of the second round are compared
OP_READ_SIZES = (1024 * 1024, 128 * 1024, 64 * 1024, 32 * 1024, 16 * 1024)
OP_ROUND = (*((100, bs) for bs in OP_READ_SIZES), (0, 4096), (0, 512))
OP_READ_FLOOR = 0.95


@dataclass(frozen=True)
class Shape:
    """One shape check of one preset."""

    preset: str
    name: str
    measured: str
    rule: str
    ok: bool


def worst_gc_step_us(v: Mapping[str, Any]) -> float:
    """The longest a GC step holds a die, µs: a read of the slowest page type (with its most read-retry steps) and a
    program of the slowest page type, at the op-time distribution's longest, plus an erase's share; a read that
    finds its die there waits at most that before its own read."""
    stretch = 1.0 + min(0.95, float(v["tvar"]) / 100.0 * math.sqrt(6.0))
    retry_max = max(1, math.floor(2 * float(v["retry_steps"]) - 1 + 0.5))
    erase = float(v["tbers"]) * float(v["pages"]) / max(float(v["block_pages"]), float(v["pages"]))
    return (max(per_type(v, "tr")) * (1 + retry_max) + max(per_type(v, "tprog")) + erase) * stretch


def qd1_shape(preset: str, d: Drive) -> list[Shape]:
    """QD1 4K random reads on the drive at steady state."""
    d.idle(2.0)
    p = d.run(rmix=100, qd=1, runtime_s=8.0, ramp_s=0.2)
    p50, p99, p9999 = (p.pct_us(q, (0,)) for q in (50.0, 99.0, 99.99))
    return [
        Shape(preset, "QD1 4K random read p99.99 / p50", f"{p9999 / p50:.2f} ({p9999:.0f} / {p50:.0f} µs)",
              "1.5 .. 6", 1.5 <= p9999 / p50 <= 6.0),
        Shape(preset, "QD1 4K random read p99 / p50", f"{p99 / p50:.2f} ({p99:.0f} / {p50:.0f} µs)", ">= 1.3",
              p99 / p50 >= 1.3),
    ]


def sweep_shape(preset: str, d: Drive) -> list[Shape]:
    """4K 70/30 at rising queue depth: each percentile (all I/Os) at least the one before, less one bin."""
    points: list[Point] = []
    for qd in SWEEP_QD:
        d.idle(0.5)
        points.append(d.run(rmix=70, qd=qd, runtime_s=SWEEP_S.get(qd, 4.0), ramp_s=0.2))
    out = []
    for q in SWEEP_PCTS:
        values = [p.pct_us(q) for p in points]
        falls = [f"QD{a}->QD{b}" for a, b, x, y in zip(SWEEP_QD, SWEEP_QD[1:], values, values[1:], strict=False)
                 if y < x * BIN_SLACK]
        text = " ".join(f"{x:.0f}" for x in values) + " µs"
        out.append(Shape(preset, f"4K 70/30 p{q:g} rises with QD {SWEEP_QD[0]}..{SWEEP_QD[-1]}",
                         text + (f"; falls at {', '.join(falls)}" if falls else ""), "no fall", not falls))
    return out


def lat_shape(preset: str, d: Drive) -> list[Shape]:
    """PTS-LAT-like rounds after steady state: the longest read of every read-only point vs the worst GC step."""
    bound = worst_gc_step_us(d.values) + 2 * qd1_read_us(d.values, 8192)
    worst = 0.0
    for _ in range(3):
        for rmix, bs in LAT_SEQUENCE:
            p = d.run(rmix=rmix, bs=bs, qd=1, runtime_s=0.5, align=512 if bs < 4096 else 0)
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


def check(preset: str) -> list[Shape]:
    """Every shape check of one preset, one after the other on its drive laid out and brought to 4K random-write
    steady state (each keeps it there); an OP variant is also compared with its base preset."""
    d = Drive(preset).steady()
    out = qd1_shape(preset, d)
    out += sweep_shape(preset, d)
    out += lat_shape(preset, d)
    if preset in OP_VARIANTS:
        out.append(op_shape(preset, Drive(preset), Drive(OP_VARIANTS[preset])))
    return out
