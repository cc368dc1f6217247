"""Simulator speed: simulated 4K random-write I/Os per CPU second at steady state, GC active.

The drive (default tlc-4k, 7% OP) is laid out, then written randomly for 2x its capacity so GC runs at its
steady-state write amplification; each timed phase writes --capacity-x capacities more. CPU time is what
counts (target >= 10 M simulated I/Os per CPU second): on a shared host, wall-clock time mostly measures the
other processes. Wall-clock rates are printed too, with the host's load.

The host's speed of the day is printed next to the figure: when a C compiler is found (cc, or $CC), the bare
greedy-GC loop benchmarks/sim_ceiling.c (same geometry, nothing but the FTL) is built into a temporary
directory and its phases alternate with the core's (two capacities of writes each, as the core's by default;
its CPU time measured by itself), so both sides see the same load. The core/bare ratio (of the medians, and the
median of each core phase over the bare phase next to it) moves less with the host's speed than either figure.
That loop has the tlc-4k geometry only, so it is left out for other presets. For a figure no other process can
move, count the core's instructions with callgrind (docs/sim.md).

The same figure is printed for a realistic mixed point: 4K random 70/30 at QD32 on the same drive at steady state,
program/erase suspend on and read retry on (the preset's retry share at wear 0.5: 5.5 times a fresh drive's), every
read with its page-type tR, variation and firmware-time draws; target >= 5 M per CPU second.

    .venv/bin/python benchmarks/sim_speed.py [--preset tlc-4k] [--capacity-x 2] [--repeat 7] [--no-bare]

Exit code 0 when both medians meet their targets, 1 below (the bare loop's figures never change it).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from timing import load, spread

from ssdlab.sim.validate import Bench

TARGET = 10e6
MIXED_TARGET = 5e6
CEILING_C = Path(__file__).with_name("sim_ceiling.c")
_RATE = re.compile(r"in ([0-9.]+) CPU-s = ([0-9.]+) M per CPU second")


class BareLoop:
    """benchmarks/sim_ceiling.c built in a temporary directory and kept running: one timed phase (two
    capacities of 4K random writes, at steady state) per request."""

    def __init__(self, workdir: Path, cc: str) -> None:
        exe = workdir / "sim_ceiling"
        subprocess.run([cc, "-O2", "-o", str(exe), str(CEILING_C)], check=True, capture_output=True)
        self.proc = subprocess.Popen([str(exe), "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._line()  # "ready": laid out and at steady state

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"{CEILING_C.name} stopped (exit {self.proc.wait()})")
        return line

    def phase(self) -> tuple[float, float]:
        """(simulated writes per CPU second, the line it printed)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\n")
        self.proc.stdin.flush()
        line = self._line()
        m = _RATE.search(line)
        if not m:
            raise SystemExit(f"unexpected output from {CEILING_C.name}: {line.strip()}")
        return float(m.group(2)) * 1e6, float(m.group(1))

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def compiler() -> str | None:
    """The C compiler to build the bare loop with ($CC or cc), or None."""
    return shutil.which(os.environ.get("CC", "cc"))


def main() -> int:
    """Print every timed phase and the median rate per CPU second; exit 1 below the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--preset", default="tlc-4k")
    ap.add_argument("--capacity-x", type=float, default=2.0, help="measured writes per phase, in user capacities")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--no-bare", action="store_true", help="do not build and time the bare loop")
    args = ap.parse_args()
    bench = Bench(args.preset)
    bench.fill()
    bench.run(io_bytes=2 * bench.user)  # reach steady state (not timed)
    cc = None if args.no_bare or args.preset != "tlc-4k" else compiler()
    with tempfile.TemporaryDirectory(prefix="ssdlab-ceiling-") as tmp:
        bare = None
        if cc:
            try:
                bare = BareLoop(Path(tmp), cc)
            except (OSError, subprocess.CalledProcessError) as exc:
                print(f"bare loop not timed: building {CEILING_C.name} with {cc} failed ({exc})")
        try:
            print(load())
            per_cpu, per_wall, per_bare = [], [], []
            for k in range(args.repeat):
                # alternate which side goes first, so drift on a shared host hits both alike
                if bare is not None and k % 2 == 1:
                    per_bare.append(bare.phase()[0])
                before = bench.dev.counters()
                t0, c0 = time.perf_counter(), time.process_time()
                _, s = bench.run(io_bytes=int(args.capacity_x * bench.user))
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                after = bench.dev.counters()
                ios = (after["host_write_bytes"] - before["host_write_bytes"]) / 4096
                gc = after["gc_runs"] - before["gc_runs"]
                per_cpu.append(ios / cpu)
                per_wall.append(ios / wall)
                line = (f"{args.preset}: {ios:,.0f} 4K random writes in {cpu:.3f} CPU-s ({wall:.3f} s wall) = "
                        f"{ios / cpu / 1e6:.2f} M simulated I/O per CPU second ({ios / wall / 1e6:.2f} M per wall "
                        f"second; WA {s['wa_gc']:.2f}, {gc:,} GC runs, simulated {s['iops']:,.0f} IOPS)")
                if bare is not None and k % 2 == 0:
                    per_bare.append(bare.phase()[0])
                if bare is not None:
                    line += f"; bare loop {per_bare[-1] / 1e6:.2f} M per CPU second"
                print(line)
        finally:
            if bare is not None:
                bare.close()
    print(f"{load()} afterwards")
    med = statistics.median(per_cpu)
    verdict = "meets" if med >= TARGET else "BELOW"
    print(f"simulated I/Os per CPU second: {spread([v / 1e6 for v in per_cpu], unit='M', digits=2)} ({verdict} "
          f"the {TARGET / 1e6:g} M target); per wall second: {spread([v / 1e6 for v in per_wall], unit='M', digits=2)}")
    if per_bare:
        bmed = statistics.median(per_bare)
        pairs = [c / b for c, b in zip(per_cpu, per_bare, strict=True)]  # each core phase over the bare one next to it
        print(f"bare greedy-GC loop (benchmarks/sim_ceiling.c, alternated): "
              f"{spread([v / 1e6 for v in per_bare], unit='M', digits=2)} per CPU second; "
              f"core/bare {med / bmed:.2f} (medians), {statistics.median(pairs):.2f} (median of adjacent pairs, "
              f"min {min(pairs):.2f}, max {max(pairs):.2f})")
    elif args.preset == "tlc-4k" and not args.no_bare and not cc:
        print("bare loop not timed: no C compiler (cc, or $CC) found")
    mixed = mixed_rates(args.preset, args.capacity_x, args.repeat)
    mmed = statistics.median(mixed)
    rates = spread([v / 1e6 for v in mixed], unit="M", digits=2)
    print(f"mixed point (4K 70/30 QD32, suspend on, read retry on): {rates} simulated I/Os per CPU second"
          f" ({'meets' if mmed >= MIXED_TARGET else 'BELOW'} the "
          f"{MIXED_TARGET / 1e6:g} M target)")
    return 0 if med >= TARGET and mmed >= MIXED_TARGET else 1


def mixed_rates(preset: str, capacity_x: float, repeat: int) -> list[float]:
    """Simulated I/Os per CPU second of 4K random 70/30 at QD32 at steady state, suspend and read retry on."""
    bench = Bench(preset, suspend=1, wear=0.5)
    bench.fill()
    bench.run(io_bytes=2 * bench.user)  # steady state (not timed)
    out = []
    for _ in range(repeat):
        c0 = time.process_time()
        result, s = bench.run(rmix=70, qd=32, io_bytes=int(capacity_x * bench.user))
        cpu = time.process_time() - c0
        ios = sum(d[0] for d in result["dirs"])
        out.append(ios / cpu)
        print(f"{preset} mixed: {ios:,.0f} I/Os (70/30) in {cpu:.3f} CPU-s = {ios / cpu / 1e6:.2f} M per CPU second "
              f"(simulated {s['iops']:,.0f} IOPS, WA {s['wa_gc']:.2f})")
    return out


if __name__ == "__main__":
    raise SystemExit(main())
