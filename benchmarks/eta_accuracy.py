"""How close the run's ETA is to the time the run then takes: on null, file and simulator targets and a group of
two agents, and under a CPU hog (one busy-looping process per CPU while the case runs: a loaded shared host).

Each case is the command a user runs (`ssdlab run SUITE --target ... --no-report -q`, a fresh process, results
in a temporary directory). The run's live record (DIR/live.jsonl, docs/results.md) holds the ETA the console
showed at the start, at every point and with every live sample; from it this prints, per case, the estimated
total duration (time gone + the ETA then) at 0 %, 10 % and 50 % of the run's actual duration (the last ETA
shown by then) against that duration (from the run's start to its end, as the ETA counts it), with the
uncertainty the ETA gave (±) and whether the actual time fell inside it, and the whole command's wall time
(interpreter start to exit) against the first ETA. The goal: within 25 % from 10 % on. Cases on a new file
include laying it out; the simulator cases start from the prior (or, with --history, from the catalog of the
earlier runs of this invocation, as a user's second run would).

The host group is two `ssdlab agent --socket DIR/X.sock` processes on this host (each in its own process
group, stopped by group id at exit) driving a file each, named in an inventory by `socket = ...`.

    .venv/bin/python benchmarks/eta_accuracy.py [--repeats 1] [--only NAME,...] [--keep DIR] [--history]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from timing import check, load, run, ssdlab, stop_agent, wait_for_agents

GOAL = 0.25  # within 25 % of the actual duration from 10 % of the run on


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]  # after `ssdlab run`; {dir} is the scratch directory, {inv} the agents' inventory
    hosts: bool = False
    hog: bool = False  # one busy loop per CPU while it runs


CASES = (
    Case("quick null", ("quick", "--target", "null", "--runtime", "1")),
    Case("quick file", ("quick", "--target", "file:{dir}/q.dat?size=128MiB", "--runtime", "1")),
    Case("sweep-qd file (thinned)", ("sweep-qd", "--target", "file:{dir}/s.dat?size=128MiB", "--runtime", "0.5",
                                     "--axis", "numjobs=1,4", "--axis", "iodepth=1..16")),
    Case("pts-iops file", ("pts-iops", "--target", "file:{dir}/p.dat?size=64MiB", "--runtime", "0.3",
                           "--pts-block-sizes", "4k,64k,1m")),
    Case("quick sim:p5430", ("quick",)),
    Case("pts (main job) sim:p5430", ("pts", "--target", "sim:p5430", "--runtime", "0.5")),
    Case("pts-wsat sim:tlc-4k", ("pts-wsat", "--target", "sim:tlc-4k", "--runtime", "0.5")),
    Case("sweep-bs sim:tlc-4k", ("sweep-bs", "--target", "sim:tlc-4k", "--runtime", "0.5")),
    Case("pts-iops sim:p5430 (CPU hog)", ("pts-iops", "--target", "sim:p5430", "--runtime", "0.5"), hog=True),
    Case("quick new-file (CPU hog)", ("quick", "--target", "file:{dir}/h{n}.dat?size=256MiB", "--runtime", "1"),
         hog=True),
    Case("quick 2 agents", ("quick", "--hosts", "{inv}", "--runtime", "1"), hosts=True),
    Case("sweep-qd 2 agents", ("sweep-qd", "--hosts", "{inv}", "--runtime", "0.5", "--axis", "numjobs=1",
                               "--axis", "iodepth=1..16"), hosts=True),
)


@dataclass(frozen=True)
class Reading:
    """One run's ETAs: the actual duration, and at each mark the estimated total with its ± share."""

    actual_s: float
    marks: tuple[tuple[float, float, float | None], ...]  # (share of the run, estimated total s, spread)
    command_s: float = 0.0  # the whole command's wall time


def read_live(path: Path, at: Sequence[float] = (0.0, 0.1, 0.5)) -> Reading:
    """The ETA shown at each share of the run, from a run's live record (run start to its 'done')."""
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    start = next(r for r in records if r["k"] == "run")
    t0 = start["t"]
    end = next(r["t"] for r in reversed(records) if r["k"] == "done")
    actual = end - t0
    shown: list[tuple[float, float, float | None]] = [(0.0, start["eta"]["expected_s"], start["eta"].get("spread"))]
    spread = start["eta"].get("spread")
    for r in records:
        if r["k"] == "point":
            spread = r["eta"].get("spread")
            shown.append((r["t"] - t0, r["t"] - t0 + r["eta"]["expected_s"], spread))
        elif r["k"] == "s" and r.get("left_s") is not None:
            shown.append((r["t"] - t0, r["t"] - t0 + r["left_s"], spread))
    marks = []
    for share in at:
        last = [m for m in shown if m[0] <= share * actual + 1e-9][-1]
        marks.append((share, last[1], last[2]))
    return Reading(actual, tuple(marks))


@contextlib.contextmanager
def agents(scratch: Path) -> Iterator[Path]:
    """Two agents on Unix sockets in `scratch`, a file target each; yields the inventory's path."""
    exe = ssdlab()
    socks = scratch / "sockets"
    socks.mkdir(mode=0o700)
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    hosts = []
    try:
        for name in ("a", "b"):
            work = scratch / f"agent-{name}"
            work.mkdir(mode=0o700)  # an agent's --dir is private to its user
            sock = socks / f"{name}.sock"
            log = scratch / f"agent-{name}.log"
            with log.open("wb") as fh:
                started.append((subprocess.Popen([str(exe), "agent", "--socket", str(sock), "--dir", str(work)],
                                                 stdout=fh, stderr=subprocess.STDOUT, start_new_session=True), log))
            hosts.append(f'[[host]]\nname = "{name}"\nsocket = "{sock}"\n'
                         f'targets = ["file:{work}/t.dat?size=64MiB"]\n')
        wait_for_agents(started)
        time.sleep(3)  # their first device report
        inv = scratch / "lab.toml"
        inv.write_text("\n".join(hosts), encoding="utf-8")
        yield inv
    finally:
        for proc, log in started:
            stop_agent(proc, log)


@contextlib.contextmanager
def cpu_hog(on: bool) -> Iterator[None]:
    """One busy-looping process per CPU while the block runs (nothing when not `on`)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(os.cpu_count() or 1)] \
        if on else []
    try:
        if hogs:
            time.sleep(2)  # the load average starts to show it, as on a host that was already busy
        yield
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def run_case(case: Case, scratch: Path, inv: Path | None, n: int, history: bool = False) -> Reading:
    root = scratch / ("runs" if history else f"runs-{n}")
    out = root / f"run-{case.name.split()[0]}-{n}-{abs(hash(case.name)) % 10000}"
    out.parent.mkdir(exist_ok=True)
    args = [a.format(dir=scratch, inv=inv or "", n=n) for a in case.args]
    with cpu_hog(case.hog):
        sample = run([ssdlab(), "run", *args, "--out", out, "--no-report", "-q", "--yes"], cwd=scratch)
    if sample.code not in (0, 1):  # 1: a negative verdict (a PTS test not steady) is still a finished run
        check(case.name, sample)
    reading = read_live(out / "live.jsonl")
    return Reading(reading.actual_s, reading.marks, sample.wall)


def pct(estimate: float, actual: float) -> str:
    return f"{100 * (estimate / actual - 1):+.0f} %"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=1, help="runs of each case (figures: the median)")
    ap.add_argument("--only", help="comma list of case names (their first words) to run")
    ap.add_argument("--keep", type=Path, help="keep the runs in this directory")
    ap.add_argument("--history", action="store_true",
                    help="runs share one results root, so repeats learn from the earlier ones (the catalog)")
    args = ap.parse_args(argv)
    only = {x.strip() for x in args.only.split(",")} if args.only else None
    cases = [c for c in CASES if only is None or c.name in only or c.name.split()[0] in only]
    print(f"ETA accuracy, {load()}")
    print(f"{'case':<31} {'actual':>8}  {'at 0 %':>18}  {'at 10 %':>18}  {'at 50 %':>18}  within ±  "
          "command (vs first ETA)")
    worst_late = 0.0
    with contextlib.ExitStack() as stack:
        scratch = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="eta-")))
        scratch.mkdir(parents=True, exist_ok=True)
        inv = stack.enter_context(agents(scratch)) if any(c.hosts for c in cases) else None
        for case in cases:
            readings = [run_case(case, scratch, inv, i, args.history) for i in range(args.repeats)]
            # with --history each repeat learns from the ones before it: one row each, not their median
            groups = [(f"{case.name} #{i + 1}", [r]) for i, r in enumerate(readings)] if args.history else \
                [(case.name, readings)]
            for name, group in groups:
                worst_late = max(worst_late, print_row(name, group))
    print(f"worst error from 10 % on: {100 * worst_late:.0f} % (goal: within {100 * GOAL:.0f} %)")
    return 0 if worst_late <= GOAL else 1


def print_row(name: str, readings: Sequence[Reading]) -> float:
    """One case's row (medians over its readings); returns its worst error from 10 % of the run on."""
    actual = statistics.median(r.actual_s for r in readings)
    cells, inside = [], []
    worst = 0.0
    for k in range(3):
        est = statistics.median(r.marks[k][1] for r in readings)
        spreads = [r.marks[k][2] for r in readings if r.marks[k][2] is not None]
        sp = statistics.median(spreads) if spreads else None
        cells.append(f"{est:6.1f} s {pct(est, actual):>6}" + (f" ±{100 * sp:3.0f}" if sp is not None else "     "))
        inside.append("yes" if sp is not None and abs(est / actual - 1) <= max(sp, 0.05) else "no")
        if k:
            worst = max(worst, abs(est / actual - 1))
    command = statistics.median(r.command_s for r in readings)
    first = statistics.median(r.marks[0][1] for r in readings)
    print(f"{name:<31} {actual:6.1f} s  " + "  ".join(cells) + "  " + "/".join(inside)
          + f"  {command:6.1f} s ({pct(first, command)})")
    return worst


if __name__ == "__main__":
    sys.exit(main())
