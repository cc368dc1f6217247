"""Idle between WSAT samples at the device: one fio run per sample (ssdlab before issue 16) against one
continuous fio run cut into samples (fio/series.py, what pts-wsat, HIR and XSR run now).

Both sides run the same sample points (RND 4 KiB writes) through ssdlab's own run loop (orchestrate.drive,
FioExecutor), the only difference being the points' `continuous` key. Every fio run writes an IOPS log with
Unix-epoch timestamps every 10 ms (`write_iops_log`, `log_avg_msec=10`, `log_unix_epoch=1`), so the device's
idle time is read from fio's own records of when I/O happened:
- separate runs: the gap between the last interval of one run and the first of the next (minus one interval);
- one run: the largest step between consecutive log entries minus one interval, and log entries without I/O.
Pairs alternate which side runs first.

    .venv/bin/python benchmarks/wsat_gap.py [--samples 8] [--sample-s 1] [--pairs 2] [--loop]

`--loop` runs on a loop device over a temporary file (needs root; the script creates and removes it), else on
a file under /tmp. Prints every pair, then the median and spread of the idle per sample boundary.
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ssdlab import safety
from ssdlab.cli import Env
from ssdlab.fio.executor import FioExecutor
from ssdlab.results import store
from ssdlab.results.model import Run, TestPoint, Workload
from ssdlab.run import orchestrate
from ssdlab.run.progress import PlainProgress
from ssdlab.run.target import parse_target
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.targets import TargetOptions

LOG_MS = 10


class SamplesSuite(Suite):
    """`count` WSAT-like samples, continuous or one fio run each (not registered: this benchmark only)."""

    writes = True
    summary = "WSAT gap benchmark"

    def __init__(self, count: int, sample_s: float, continuous: bool) -> None:
        self.name = "wsat-gap-" + ("continuous" if continuous else "separate")
        self.count, self.sample_s, self.continuous = count, sample_s, continuous

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        w = Workload(rw="randwrite", bs=4096, iodepth=16, numjobs=1, runtime_s=self.sample_s, size=ctx.capacity,
                     options={"write_iops_log": "gap", "log_avg_msec": str(LOG_MS), "log_unix_epoch": "1"})
        return [TestPoint(id=f"s{n:03d}", label=f"sample {n}", workload=w, continuous="gap" if self.continuous else "")
                for n in range(1, self.count + 1)]


def log_times(point_dir: Path) -> list[tuple[int, float]]:
    """(epoch ms, IOPS) of every entry of the run's IOPS log(s) in a point directory, in time order."""
    rows = []
    for path in sorted(point_dir.glob("gap_iops*.log")):
        for line in path.read_text().splitlines():
            parts = [p.strip() for p in line.split(",")]
            if len(parts) >= 2:
                rows.append((int(parts[0]), float(parts[1])))
    return sorted(rows)


def run(target_spec: str, suite: SamplesSuite, run_dir: Path) -> Run:
    target = parse_target(target_spec, TargetOptions())
    ctx = PlanContext(capacity=target.capacity(), logical_block_size=target.logical_block_size(),
                      target_kind=target.kind)
    grant = safety.authorize(target, safety.decide(suite, ctx, target), destructive=False, yes=True,
                             console=Env(stdout=io.StringIO(), stderr=io.StringIO()))
    executor = FioExecutor(grant)
    store.create_run_dir(run_dir)
    r = orchestrate.new_run(suite, target, executor, {"suite": suite.name}, run_dir)
    r = orchestrate.drive(run_dir, r, suite, ctx, target, executor, PlainProgress(io.StringIO()), grant=grant)
    if r.status != "complete":
        raise SystemExit(f"run did not complete: {r.status}")
    return r


def separate_gaps(run_dir: Path, count: int) -> tuple[list[float], int]:
    """Idle (ms) between consecutive runs, and log intervals without I/O inside the runs."""
    logs = [log_times(run_dir / "points" / f"s{n:03d}") for n in range(1, count + 1)]
    gaps = [b[0][0] - LOG_MS - a[-1][0] for a, b in itertools.pairwise(logs) if a and b]
    idle = sum(1 for rows in logs for _, v in rows[:-1] if v <= 0)
    return [float(g) for g in gaps], idle


def continuous_gaps(run_dir: Path, count: int) -> tuple[list[float], list[float], int]:
    """Steps beyond one interval between consecutive entries of the one run (all of them, and those within
    200 ms of a sample boundary: the status documents that closed the samples), and intervals without I/O."""
    rows = log_times(run_dir / "points" / "s001")
    steps = [(b[0], float(b[0] - a[0] - LOG_MS)) for a, b in itertools.pairwise(rows)]
    bounds = []
    for n in range(1, count):
        doc = json.loads((run_dir / "points" / f"s{n:03d}" / "status.json").read_text())
        bounds.append(int(doc["timestamp_ms"]))
    near = [s for t, s in steps if any(abs(t - b) <= 200 for b in bounds)]
    return [s for _, s in steps], near, sum(1 for _, v in rows[:-1] if v <= 0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--sample-s", type=float, default=1.0, help="seconds per sample (default 1)")
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--loop", action="store_true", help="a loop device over a temporary file (root)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ssdlab-wsat-gap-") as tmp:
        base = Path(tmp)
        backing = base / "dut.dat"
        loop = ""
        if args.loop:
            if os.geteuid() != 0:
                print("--loop needs root", file=sys.stderr)
                return 2
            with backing.open("wb") as fh:
                fh.truncate(256 * 1024**2)
            loop = subprocess.run(["losetup", "-f", "--show", str(backing)], capture_output=True, text=True,
                                  check=True).stdout.strip()
            spec = loop
        else:
            spec = f"file:{backing}?size=256MiB"
        try:
            print(f"target {spec}: {args.samples} samples of {args.sample_s:g} s of RND 4 KiB writes QD16, "
                  f"{args.pairs} pairs (order alternates); idle read from fio's {LOG_MS} ms epoch IOPS logs")
            sep_all: list[float] = []
            cont_all: list[float] = []
            near_all: list[float] = []
            for i in range(args.pairs):
                order = (False, True) if i % 2 == 0 else (True, False)
                for continuous in order:
                    d = base / f"{'cont' if continuous else 'sep'}-{i}"
                    run(spec, SamplesSuite(args.samples, args.sample_s, continuous), d)
                    if continuous:
                        steps, near, idle = continuous_gaps(d, args.samples)
                        cont_all += steps
                        near_all += near
                        print(f"pair {i + 1} one run:       largest step beyond {LOG_MS} ms: {max(steps):.0f} ms "
                              f"anywhere, {max(near):.0f} ms at the sample boundaries; intervals without I/O: "
                              f"{idle}; {len(steps) + 1} log entries")
                    else:
                        gaps, idle = separate_gaps(d, args.samples)
                        sep_all += gaps
                        print(f"pair {i + 1} separate runs: idle between samples: median "
                              f"{statistics.median(gaps):.0f} ms, min {min(gaps):.0f}, max {max(gaps):.0f} "
                              f"({len(gaps)} boundaries); intervals without I/O inside runs: {idle}")
        finally:
            if loop:
                subprocess.run(["losetup", "-d", loop], check=False)
    print(f"separate runs: idle per sample boundary median {statistics.median(sep_all):.0f} ms "
          f"(min {min(sep_all):.0f}, max {max(sep_all):.0f})")
    print(f"one run: largest step beyond one {LOG_MS} ms interval {max(cont_all):.0f} ms anywhere "
          f"(median {statistics.median(cont_all):.0f}), {max(near_all):.0f} ms within 200 ms of a sample "
          f"boundary (median {statistics.median(near_all):.0f}): the boundaries add no idle; steps elsewhere are "
          "the host's scheduling of fio, not the samples")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
