"""Shape checks of `ssdlab sim validate`, for every preset: does the latency distribution look like a drive's?

- QD1 4K random reads spread as NAND reads do: p99.99 / p50 between 1.5 and 6, p99 / p50 at least 1.3;
- on a 4K 70/30 queue-depth sweep, every percentile rises with the queue depth (one histogram bin of slack:
  fio's bins are 1/64 of a power of two wide);
- in a PTS-LAT-like sequence (rounds of 8K/4K/0.5K at 100/0, 65/35, 0/100, T1Q1, 0.5 s each), no read-only
  point carries a write point's stall: its longest read is within the preset's worst GC step.
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
SWEEP_PCTS = (50.0, 99.0, 99.9, 99.99)
BIN_SLACK = 1.0 - 1.0 / 64  # one histogram bin
LAT_SEQUENCE = ((100, 8192), (100, 4096), (100, 512), (65, 8192), (65, 4096), (65, 512),
                (0, 8192), (0, 4096), (0, 512))


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
        points.append(d.run(rmix=70, qd=qd, runtime_s=256.0 if qd <= 2 else 4.0, ramp_s=0.2))
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


def check(preset: str) -> list[Shape]:
    """Every shape check of one preset (its drive laid out and brought to 4K random-write steady state)."""
    out = qd1_shape(preset, Drive(preset).steady())
    out += sweep_shape(preset, Drive(preset).steady())
    out += lat_shape(preset, Drive(preset).steady())
    return out
