"""Harness overhead: one null-engine job run by raw fio and through ssdlab, alternating, several pairs.

The job is the one ssdlab generates for the point (build_job), so both sides run the identical job file:
raw fio runs it with `fio --output-format=json JOB`; ssdlab runs it through its full path (orchestrate ->
FioExecutor -> runner with json+ and --status-interval, live progress parsing, run.json after the point).
Pairs alternate which side goes first, so slow drift on a shared host hits both equally.

    .venv/bin/python benchmarks/harness_overhead.py [--pairs 5] [--runtime 5] [--rw randread] [--bs 4k]

Prints every pair and the median IOPS ratio ssdlab/raw. Exit status 0 when the median is >= the target
(default 0.99), 1 otherwise. On a busy shared host the null engine (CPU-bound) swings by tens of percent
from run to run; the second figure, IOPS per CPU-second of fio's own usr+sys time, discounts that noise.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ssdlab import orchestrate, safety, store
from ssdlab.cli import Env
from ssdlab.executor import FioExecutor
from ssdlab.fio.job import build_job
from ssdlab.model import Run, TestPoint, Workload
from ssdlab.progress import PlainProgress
from ssdlab.suites.base import PlanContext, Suite
from ssdlab.targets import NullTarget, TargetOptions, parse_target
from ssdlab.units import parse_size


class OnePointSuite(Suite):
    """A suite of exactly one point (not registered: used only by this benchmark)."""

    name = "harness-overhead"
    summary = "one point, for the harness overhead benchmark"
    writes = False

    def __init__(self, point: TestPoint) -> None:
        self.point = point

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        """The single point."""
        return [self.point]


@dataclass(frozen=True)
class Sample:
    """One run's IOPS and fio's CPU use (usr+sys percent of one CPU per job)."""

    iops: float
    cpu_pct: float

    @property
    def iops_per_cpu(self) -> float:
        """IOPS per fully busy CPU: insensitive to other load on a shared host."""
        return self.iops / (self.cpu_pct / 100.0) if self.cpu_pct > 0 else 0.0


def run_raw(job_text: str, workdir: Path, fio: str) -> Sample:
    """IOPS of the job run directly by fio (plain json output, no status reports)."""
    job_path = workdir / "job.fio"
    job_path.write_text(job_text, encoding="utf-8")
    # a session of its own, as ssdlab's runner gives fio: with the kernel's autogroup scheduling a new
    # session is a new CPU-share group, which on a busy host alone changes the IOPS of a CPU-bound job
    res = subprocess.run([fio, "--output-format=json", str(job_path)], capture_output=True, text=True,
                         cwd=workdir, check=False, timeout=600, start_new_session=True)
    if res.returncode != 0:
        raise SystemExit(f"raw fio failed: {res.stderr.strip()}")
    doc = json.loads(res.stdout[res.stdout.index("{"):])
    jobs = doc["jobs"]
    return Sample(iops=float(sum(j["read"]["iops"] + j["write"]["iops"] for j in jobs)),
                  cpu_pct=sum(float(j["usr_cpu"]) + float(j["sys_cpu"]) for j in jobs) / len(jobs))


def run_ssdlab(suite: OnePointSuite, target: NullTarget, run_dir: Path) -> Sample:
    """IOPS of the same point run through ssdlab's orchestrator and fio executor."""
    ctx = PlanContext(capacity=target.capacity(), logical_block_size=target.logical_block_size(),
                      target_kind=target.kind)
    grant = safety.authorize(target, safety.decide(suite, ctx, target), destructive=False, yes=False, console=Env())
    executor = FioExecutor(grant)
    store.create_run_dir(run_dir)
    run: Run = orchestrate.new_run(suite, target, executor, {"suite": suite.name}, run_dir)
    run = orchestrate.drive(run_dir, run, suite, ctx, target, executor, PlainProgress(io.StringIO()), grant=grant)
    m = run.points[0].measurement
    if run.status != "complete" or m is None:
        raise SystemExit(f"ssdlab run did not complete: {run.status}")
    return Sample(iops=m.total_iops, cpu_pct=m.usr_cpu + m.sys_cpu)


def main(argv: list[str] | None = None) -> int:
    """Run the pairs and print the per-pair and median ratios."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=5.0, help="seconds per run (default 5)")
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--bs", default="4k")
    ap.add_argument("--numjobs", type=int, default=1)
    ap.add_argument("--iodepth", type=int, default=1)
    ap.add_argument("--target-ratio", type=float, default=0.99)
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds of discarded raw fio first (default 2)")
    args = ap.parse_args(argv)

    fio = shutil.which("fio")
    if fio is None:
        print("fio is not installed (sudo apt-get install fio)", file=sys.stderr)
        return 2
    target = parse_target("null", TargetOptions())
    assert isinstance(target, NullTarget)
    point = TestPoint(id="bench-null", label="null engine",
                      workload=Workload(rw=args.rw, bs=parse_size(args.bs), iodepth=args.iodepth,
                                        numjobs=args.numjobs, runtime_s=args.runtime))
    suite = OnePointSuite(point)
    job_text = build_job(point, target.fio_options()).render()
    print(f"job: null engine {args.rw} bs={args.bs} iodepth={args.iodepth} numjobs={args.numjobs}, "
          f"{args.runtime:g} s per run, {args.pairs} pairs (order alternates)")
    print(f"{'pair':>4} {'first':>7} {'raw fio IOPS':>14} {'ssdlab IOPS':>14} {'ratio':>7}   "
          f"{'raw IOPS/CPU':>14} {'ssdlab IOPS/CPU':>15} {'ratio':>7}")
    ratios = []
    cpu_ratios = []
    with tempfile.TemporaryDirectory(prefix="ssdlab-overhead-") as tmp:
        base = Path(tmp)
        if args.warmup > 0:  # first runs pay for cold caches and CPU frequency ramp-up: not counted
            warm = TestPoint(id="warmup", label="warmup", workload=dataclasses.replace(point.workload,
                                                                                     runtime_s=args.warmup))
            (base / "warmup").mkdir()
            run_raw(build_job(warm, target.fio_options()).render(), base / "warmup", fio)
        for i in range(args.pairs):
            raw_dir = base / f"raw-{i}"
            raw_dir.mkdir()
            ssdlab_dir = base / f"ssdlab-{i}"
            if i % 2 == 0:
                raw = run_raw(job_text, raw_dir, fio)
                lab = run_ssdlab(suite, target, ssdlab_dir)
            else:
                lab = run_ssdlab(suite, target, ssdlab_dir)
                raw = run_raw(job_text, raw_dir, fio)
            ratio = lab.iops / raw.iops
            cpu_ratio = lab.iops_per_cpu / raw.iops_per_cpu if raw.iops_per_cpu else 0.0
            ratios.append(ratio)
            cpu_ratios.append(cpu_ratio)
            first = "raw" if i % 2 == 0 else "ssdlab"
            print(f"{i + 1:>4} {first:>7} {raw.iops:>14,.0f} {lab.iops:>14,.0f} {ratio:>7.4f}   "
                  f"{raw.iops_per_cpu:>14,.0f} {lab.iops_per_cpu:>15,.0f} {cpu_ratio:>7.4f}", flush=True)
    median = statistics.median(ratios)
    verdict = "meets" if median >= args.target_ratio else "MISSES"
    print(f"median IOPS ratio ssdlab/raw: {median:.4f} ({verdict} the target >= {args.target_ratio:g}); "
          f"min {min(ratios):.4f}, max {max(ratios):.4f}")
    print(f"median IOPS-per-CPU ratio ssdlab/raw: {statistics.median(cpu_ratios):.4f} "
          "(fio's own usr+sys CPU; discounts other load on a shared host)")
    return 0 if median >= args.target_ratio else 1


if __name__ == "__main__":
    raise SystemExit(main())
