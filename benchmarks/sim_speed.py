"""Simulator speed: simulated 4K random-write I/Os per CPU second at steady state, GC active.

The drive (default tlc-4k, 7% OP) is laid out, then written randomly for 2x its capacity so GC runs at its
steady-state write amplification; each timed phase writes --capacity-x capacities more. CPU time is what
counts (target >= 10 M simulated I/Os per CPU second): on a shared host, wall-clock time mostly measures the
other processes. Wall-clock rates are printed too, with the host's load. For a figure no other process can
move, count the core's instructions with callgrind (docs/sim.md).

    .venv/bin/python benchmarks/sim_speed.py [--preset tlc-4k] [--capacity-x 2] [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from timing import load, spread

from ssdlab.sim.validate import Bench

TARGET = 10e6


def main() -> int:
    """Print every timed phase and the median rate per CPU second; exit 1 below the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--preset", default="tlc-4k")
    ap.add_argument("--capacity-x", type=float, default=2.0, help="measured writes per phase, in user capacities")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    bench = Bench(args.preset)
    bench.fill()
    bench.run(io_bytes=2 * bench.user)  # reach steady state (not timed)
    print(load())
    per_cpu, per_wall = [], []
    for _ in range(args.repeat):
        before = bench.dev.counters()
        t0, c0 = time.perf_counter(), time.process_time()
        _, s = bench.run(io_bytes=int(args.capacity_x * bench.user))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = bench.dev.counters()
        ios = (after["host_write_bytes"] - before["host_write_bytes"]) / 4096
        gc = after["gc_runs"] - before["gc_runs"]
        per_cpu.append(ios / cpu)
        per_wall.append(ios / wall)
        print(f"{args.preset}: {ios:,.0f} 4K random writes in {cpu:.3f} CPU-s ({wall:.3f} s wall) = "
              f"{ios / cpu / 1e6:.2f} M simulated I/O per CPU second ({ios / wall / 1e6:.2f} M per wall second; "
              f"WA {s['wa_gc']:.2f}, {gc:,} GC runs, simulated {s['iops']:,.0f} IOPS)")
    print(f"{load()} afterwards")
    med = statistics.median(per_cpu)
    verdict = "meets" if med >= TARGET else "BELOW"
    print(f"simulated I/Os per CPU second: {spread([v / 1e6 for v in per_cpu], unit='M', digits=2)} ({verdict} "
          f"the {TARGET / 1e6:g} M target); per wall second: {spread([v / 1e6 for v in per_wall], unit='M', digits=2)}")
    return 0 if med >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
