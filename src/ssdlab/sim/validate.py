"""`ssdlab sim validate`'s analytic lines: the model's mechanics against their analytic expectations.

Each line runs a small experiment directly on the native core (no run directory) and compares one figure
with its expectation and tolerance. The whole table takes a few seconds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.sim import core
from ssdlab.sim.lab import execute
from ssdlab.sim.presets import core_params, mean_read_us, mean_time, resolve


@dataclass(frozen=True)
class Line:
    """One validation line: what was measured, what theory expects, and whether it is within tolerance."""

    name: str
    measured: float
    expected: float
    rule: str
    ok: bool
    detail: str = ""


def desnoyers_wa(op_pct: float) -> float:
    """Write amplification of FIFO/LRU cleaning under uniform random writes: α / (α + W0(−α e^−α))."""
    alpha = 1.0 + op_pct / 100.0
    v = 0.5  # valid fraction of the victim: the root v < 1 of v = exp(−α (1 − v))
    for _ in range(100):  # Newton on f(v) = v − exp(−α(1−v))
        e = math.exp(-alpha * (1.0 - v))
        step = (v - e) / (1.0 - alpha * e)
        v -= step
        if abs(step) < 1e-14:
            break
    return 1.0 / (1.0 - v)


class Bench:
    """A simulated drive plus helpers to run closed-loop workloads on it."""

    def __init__(self, preset: str, **overrides: Any) -> None:
        self.values = resolve(preset, {k: str(v) for k, v in overrides.items()})
        self.dev = core().Device(core_params(self.values))
        self.user = int(self.values["capacity"])
        self.iu = int(self.values["iu"])
        self.seed = 1

    def fill(self) -> None:
        """Write the user capacity once sequentially (untimed)."""
        self.dev.fill(0, self.user // self.iu)

    def run(self, *, rmix: int = 0, random: bool = True, bs: int = 4096, qd: int = 32, jobs: int = 1,
            io_bytes: int = 0, runtime_s: float = 0.0, ramp_s: float = 0.0,
            interval_ms: int = 0, offset: int = 0) -> tuple[dict[str, Any], dict[str, float]]:
        """One point; returns (core result, counter deltas + iops/lat/wa summary)."""
        self.seed += 1
        wl = {"rmix": rmix, "random": int(random), "trim": 0, "range_start": offset,
              "range_len": self.user - offset - (bs if offset else 0),
              "align": bs, "iodepth": qd, "numjobs": jobs, "time_based": int(runtime_s > 0),
              "ramp_ns": int(ramp_s * 1e9), "runtime_ns": int(runtime_s * 1e9), "io_bytes": io_bytes,
              "rate_iops": 0, "interval_ns": interval_ms * 1_000_000, "seed": self.seed, "bssplit": [(bs, 1)]}
        result, before, after = execute(self.dev, wl)
        secs = (result["t_end_ns"] - result["t_meas_ns"]) / 1e9
        n = sum(d[0] for d in result["dirs"])
        lat = sum(d[2] for d in result["dirs"])
        host = after["host_write_slots"] - before["host_write_slots"]
        host_bytes = after["host_write_bytes"] - before["host_write_bytes"]
        nand = after["nand_write_slots"] - before["nand_write_slots"]
        summary = {
            "iops": n / secs if secs > 0 else 0.0, "mean_lat_s": lat / n / 1e9 if n else 0.0,
            "wa_gc": nand / host if host else 0.0, "wa_total": nand * self.iu / host_bytes if host_bytes else 0.0,
            "host_bytes": float(host_bytes), "secs": secs,
            "power_w": float(self.values["idle_w"]) + result["energy_j"] / max(1e-9, result["t_end_ns"] / 1e9),
        }
        return result, summary

    def steady_random_write(self, warm: float = 2.0, measure: float = 1.0, bs: int = 4096) -> dict[str, float]:
        """Fill, warm up with `warm` x capacity of random writes, then measure `measure` x capacity."""
        self.fill()
        self.run(io_bytes=int(warm * self.user), bs=bs)
        return self.run(io_bytes=int(measure * self.user), bs=bs)[1]


def _within(measured: float, expected: float, lo: float, hi: float) -> bool:
    return expected * (1 + lo) <= measured <= expected * (1 + hi)


def _rule(lo: float, hi: float) -> str:
    if lo == -hi:
        return f"±{hi * 100:.0f}%"
    return f"{lo * 100:+.0f}%..{hi * 100:+.0f}%"


def check_wa(lines: list[Line], iops: dict[float, float]) -> None:
    """WA under uniform random 4K writes vs Desnoyers' formula, greedy and FIFO, at 7/28/50% OP."""
    for op in (7.0, 28.0, 50.0):
        expected = desnoyers_wa(op)
        s = Bench("tlc-4k", op=op).steady_random_write()
        iops[op] = s["iops"]
        lo, hi = -0.06, 0.01
        lines.append(Line(f"WA greedy, 4K random, OP {op:g}%", s["wa_gc"], expected, f"at or below, {_rule(lo, 0)}",
                          _within(s["wa_gc"], expected, lo, hi), "Desnoyers/Lambert-W"))
        f = Bench("tlc-4k", op=op, gc="fifo").steady_random_write()
        lines.append(Line(f"WA FIFO, 4K random, OP {op:g}%", f["wa_gc"], expected, _rule(-0.05, 0.05),
                          _within(f["wa_gc"], expected, -0.05, 0.05), "Desnoyers/Lambert-W"))


def check_op_scaling(lines: list[Line], iops: Mapping[float, float]) -> None:
    """Steady-state write IOPS ratio between OP settings vs the inverse analytic WA ratio."""
    for a, b in ((7.0, 28.0), (28.0, 50.0)):
        measured = iops[b] / iops[a]
        expected = desnoyers_wa(a) / desnoyers_wa(b)
        lines.append(Line(f"SS 4K write IOPS ratio OP {b:g}% / {a:g}%", measured, expected, _rule(-0.1, 0.1),
                          _within(measured, expected, -0.1, 0.1), "= WA(a)/WA(b)"))


def check_cliff(lines: list[Line]) -> None:
    """Write cliff: from fresh-out-of-box, GC starts once about one physical capacity has been written, and
    the NAND-bound IOPS then fall by the steady-state write amplification."""
    b = Bench("tlc-4k")
    g = b.dev.geometry()
    raw = g["blocks"] * g["slots_per_block"] * b.iu
    step = int(0.02 * raw) // 4096 * 4096
    written, cliff_at, fob = 0, float("nan"), []
    while written < 2 * raw:
        before = b.dev.counters()
        _, s = b.run(io_bytes=step)
        gc = b.dev.counters()["gc_write_slots"] - before["gc_write_slots"]
        fob.append(s["iops"])
        if gc > 0.05 * step / b.iu:
            cliff_at = written / raw
            break
        written += step
    lines.append(Line("write cliff: GC starts after host writes / raw capacity", cliff_at, 1.0, _rule(-0.1, 0.1),
                      _within(cliff_at, 1.0, -0.1, 0.1), "from FOB, 4K random writes, 2% steps"))
    b.run(io_bytes=3 * b.user)
    ss = b.run(io_bytes=b.user)[1]
    fob_iops = sorted(fob[2:-1])[len(fob[2:-1]) // 2] if len(fob) > 4 else fob[0]  # after the buffer filled
    measured = fob_iops / ss["iops"]
    lines.append(Line("write cliff depth: FOB / steady-state 4K write IOPS", measured, ss["wa_gc"], _rule(-0.15, 0.15),
                      _within(measured, ss["wa_gc"], -0.15, 0.15), "= steady-state WA when NAND-bound"))


def check_iu(lines: list[Line]) -> None:
    """The indirection-unit penalty for 4K random writes: qlc-64k vs qlc-4k."""
    small = Bench("qlc-4k", capacity="1GiB").steady_random_write()
    big = Bench("qlc-64k", capacity="1GiB").steady_random_write()
    measured = small["iops"] / big["iops"]
    expected = 16.0 * big["wa_gc"] / small["wa_gc"]
    lines.append(Line("4K random write IOPS qlc-4k / qlc-64k", measured, expected, _rule(-0.15, 0.15),
                      _within(measured, expected, -0.15, 0.15), "= (64K/4K) x WA_GC ratio (RMW)"))
    lines.append(Line("WA total qlc-64k / WA_GC (4K writes)", big["wa_total"] / big["wa_gc"], 16.0, _rule(-0.02, 0.02),
                      _within(big["wa_total"] / big["wa_gc"], 16.0, -0.02, 0.02), "IU/bs read-modify-write"))


def check_misaligned(lines: list[Line]) -> None:
    """4K random writes shifted by 512 B straddle two 4 KiB IUs: two read-modify-writes per write."""
    b = Bench("tlc-4k", capacity="1GiB")
    b.fill()
    b.run(io_bytes=2 * b.user)
    aligned = b.run(io_bytes=b.user // 2)[1]
    shifted = b.run(io_bytes=b.user // 2, offset=512)[1]
    measured = aligned["iops"] / shifted["iops"]
    v = b.values
    spu = int(v["planes"]) * int(v["page"]) // b.iu
    # two IU programs (x WA) and two tR reads per write, against one IU program (x WA)
    expected = 2.0 * (1.0 + mean_time(v, "tr") * spu / (aligned["wa_gc"] * mean_time(v, "tprog")))
    lines.append(Line("4K random write IOPS, aligned / 512 B-misaligned", measured, expected, _rule(-0.1, 0.1),
                      _within(measured, expected, -0.1, 0.1), "2 IUs + 2 RMW reads per write; >= 2x"))


def check_power(lines: list[Line]) -> None:
    """Steady-state write IOPS under a power cap scale with (cap − idle)."""
    got: dict[float, dict[str, float]] = {}
    for cap in (0.0, 15.0, 10.0):
        # 8 channels and QLC's former 320 µJ per page programmed: uncapped, it draws well above 15 W
        b = Bench("qlc-4k", capacity="1GiB", power=cap, window_s=1, channels=8, e_prog_uj=320)
        b.fill()
        b.run(io_bytes=2 * b.user)
        got[cap] = b.run(runtime_s=4.0, ramp_s=2.0)[1]
    idle = 5.0
    measured = got[15.0]["iops"] / got[10.0]["iops"]
    expected = (15.0 - idle) / (10.0 - idle)
    binds = got[0.0]["iops"] > got[15.0]["iops"] * 1.05
    lines.append(Line("SS 4K write IOPS 15 W / 10 W cap", measured, expected, _rule(-0.1, 0.1),
                      binds and _within(measured, expected, -0.1, 0.1),
                      f"uncapped draw {got[0.0]['power_w']:.1f} W; IOPS ∝ (cap − idle)"))
    measured = got[15.0]["power_w"]
    lines.append(Line("average power at a 15 W cap, W", measured, 15.0, _rule(-0.05, 0.02),
                      _within(measured, 15.0, -0.05, 0.02), "the power governor"))


def check_little(lines: list[Line]) -> None:
    """Little's law: IOPS x mean latency = outstanding I/Os, reads and a 70/30 mix."""
    b = Bench("tlc-4k")
    b.fill()
    for label, rmix, qd, jobs in (("4K randread QD1", 100, 1, 1), ("4K randread QD8", 100, 8, 1),
                                  ("4K randread QD64", 100, 64, 1), ("4K 70/30 QD16 T4", 70, 16, 4)):
        s = b.run(rmix=rmix, qd=qd, jobs=jobs, runtime_s=0.5, ramp_s=0.05)[1]
        n = qd * jobs
        measured = s["iops"] * s["mean_lat_s"]
        lines.append(Line(f"Little's law, {label}: IOPS x latency", measured, float(n), _rule(-0.02, 0.02),
                          _within(measured, n, -0.02, 0.02), "= iodepth x numjobs"))


def check_qd1_latency(lines: list[Line]) -> None:
    """QD1 4K random read latency = firmware + command + tR (with retries) + channel transfer + host transfer."""
    b = Bench("tlc-4k")
    b.fill()
    expected = mean_read_us(b.values) / 1e6
    s = b.run(rmix=100, qd=1, runtime_s=0.5)[1]
    lines.append(Line("QD1 4K read latency, µs", s["mean_lat_s"] * 1e6, expected * 1e6, _rule(-0.01, 0.01),
                      _within(s["mean_lat_s"], expected, -0.01, 0.01), "presets.mean_read_us"))


def check_idle_gc(lines: list[Line]) -> None:
    """Background GC in host idle time: it relocates at its configured rate, and a write burst after a longer
    idle runs faster (PTS HIR's mechanism)."""
    b = Bench("tlc-4k", capacity="1GiB")
    b.steady_random_write()
    rate, delay = float(b.values["idle_gc"]), float(b.values["idle_gc_ms"]) / 1000.0
    burst: dict[float, float] = {}
    moved = 0.0
    for idle_s in (1.0, 4.0):
        b.run(io_bytes=b.user // 2)  # back to steady state
        done = b.dev.idle(int(idle_s * 1e9))
        if idle_s == 4.0:
            moved = done["relocated_slots"] * b.iu / 1e6 / (idle_s - delay)
        burst[idle_s] = b.run(runtime_s=0.3)[1]["iops"]
    lines.append(Line("background GC relocation rate in 4 s of idle, MB/s", moved, rate, _rule(-0.05, 0.05),
                      _within(moved, rate, -0.05, 0.05), "idle_gc, one victim after the other"))
    measured = burst[4.0] / burst[1.0]
    lines.append(Line("4K write burst IOPS after 4 s / after 1 s of idle", measured, 1.0, "> 1",
                      measured > 1.02, "more idle, more free blocks"))


def check_determinism(lines: list[Line]) -> None:
    """Same seed, same drive -> identical results."""
    outs = []
    for _ in range(2):
        b = Bench("tlc-4k", capacity="256MiB")
        b.fill()
        r, _ = b.run(rmix=70, qd=8, runtime_s=0.3)
        outs.append((r["dirs"], b.dev.counters()))
    same = outs[0] == outs[1]
    lines.append(Line("determinism: two runs with one seed are identical", float(same), 1.0, "exact", same))


CHECKS: tuple[Callable[[list[Line]], None], ...] = (check_cliff, check_iu, check_misaligned, check_power, check_little,
                                                   check_qd1_latency, check_idle_gc, check_determinism)


def run_validation() -> list[Line]:
    """Every validation line, in table order."""
    lines: list[Line] = []
    iops: dict[float, float] = {}
    check_wa(lines, iops)
    check_op_scaling(lines, iops)
    for check in CHECKS:
        check(lines)
    return lines


def format_table(lines: list[Line], width: int = 110) -> list[str]:
    """Plain-text table of validation lines, each within `width` columns (a line's note goes below it when it
    does not fit beside it)."""
    out = ["the model's mechanics (analytic lines)",
           f"  {'result':<6} {'check':<58} {'measured':>9} {'expected':>9}  tolerance"]
    for ln in lines:
        text = (f"  {'ok' if ln.ok else 'FAIL':<6} {ln.name:<58} {ln.measured:>9.3f} {ln.expected:>9.3f}  "
                f"{ln.rule}")
        note = f"  ({ln.detail})" if ln.detail else ""
        if len(text + note) <= width:
            out.append(text + note)
        else:
            out += [text, f"{'':9}{note.strip()}"] if note else [text]
    return out
