"""Simulator speed: simulated 4K random-write I/Os per wall-clock second at steady state, GC active, one core.

Wall-clock time is what counts; the rate per CPU second is printed too because load from other processes on
a shared machine lowers the wall-clock figure. The drive (default tlc-4k, 7% OP) is laid out, then written
randomly for 2x its capacity so GC runs at its steady-state write amplification; only the measured phase
is timed. Target (issue 4): >= 2.2 million/s.

    .venv/bin/python benchmarks/sim_speed.py [--preset tlc-4k] [--capacity-x 2] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from ssdlab.sim.validate import Bench

TARGET = 2.2e6


def main() -> int:
    """Print the figure (best of --repeat timed phases) and whether it meets the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="tlc-4k")
    ap.add_argument("--capacity-x", type=float, default=2.0, help="measured writes, in user capacities")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    bench = Bench(args.preset)
    bench.fill()
    bench.run(io_bytes=2 * bench.user)  # reach steady state (not timed)
    best = 0.0
    for _ in range(args.repeat):
        before = bench.dev.counters()
        t0, c0 = time.perf_counter(), time.process_time()
        _, s = bench.run(io_bytes=int(args.capacity_x * bench.user))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        after = bench.dev.counters()
        ios = (after["host_write_bytes"] - before["host_write_bytes"]) / 4096
        gc = after["gc_runs"] - before["gc_runs"]
        rate = ios / wall
        best = max(best, rate)
        print(f"{args.preset}: {ios:,.0f} 4K random writes in {wall:.3f} s wall = {rate / 1e6:.2f} M simulated "
              f"I/O/s ({ios / cpu / 1e6:.2f} M per CPU second; WA {s['wa_gc']:.2f}, {gc:,} GC runs, "
              f"simulated {s['iops']:,.0f} IOPS)")
    verdict = "meets" if best >= TARGET else "BELOW"
    print(f"best: {best / 1e6:.2f} million simulated I/Os per wall-clock second ({verdict} the 2.2 M target)")
    return 0 if best >= TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())
