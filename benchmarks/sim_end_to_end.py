"""The simulator's speed as users meet it: the core's own rates and the commands that run it, in CPU seconds.

Prints, for this tree (and, with --vs DIR, for another installed tree of ssdlab alternated with it):

- plain and mixed: `benchmarks/sim_speed.py --no-bare` of the tree (simulated 4K random writes at steady state,
  and 4K 70/30 QD32 with suspend and read retry, per CPU second of the core; targets >= 10 M and >= 5 M);
- the end-to-end command: `ssdlab run SUITE --target sim:tlc-4k` of a one-point suite file (600 virtual seconds
  of 4K random writes at QD32 on the laid-out drive), with and without --no-report: simulated I/Os (every I/O of
  the point, from run.json) per CPU second of the whole process (start, plan, run, store, report); target >= 10 M;
- the README's main job, what scripts/demo.sh runs: `ssdlab run pts --target sim:p5430 --runtime 0.5` (report
  included), CPU seconds;
- the whole PTS family: `ssdlab run pts --pts-tests all --target sim:p5430 --runtime 0.5 --no-report`, CPU
  seconds.

Every command is a fresh process in a fresh results directory, its CPU time (user + system, children included)
from the kernel's accounting (os.wait4). Rounds alternate the order of the sides. Wall time is printed for the
reader only: on a shared host it measures the other processes.

    .venv/bin/python benchmarks/sim_end_to_end.py [--rounds 3] [--vs /path/to/other/tree] [--skip pts,demo]

Exit code 0 when this tree meets the rate targets (plain, mixed, end-to-end with and without the report) and,
with --vs, its demo and PTS CPU medians are within --slack (default 10 %) of the other tree's.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from timing import Sample, alternate, check, load, run, spread, user_env

HERE = Path(__file__).resolve().parent.parent
PLAIN_TARGET, MIXED_TARGET, E2E_TARGET = 10e6, 5e6, 10e6
E2E_SUITE = """name = "e2e-4k-randwrite"
summary = "600 virtual seconds of 4K random writes at QD32 (benchmarks/sim_end_to_end.py)"
runtime_s = 600

[[matrix]]
name = "w"
rw = ["randwrite"]
bs = ["4k"]
iodepth = [32]
numjobs = [1]
"""
_MEDIAN = re.compile(r"median ([0-9.]+) M")


def simulated_ios(run_dir: Path) -> int:
    """Every I/O the run's points simulated (ramp included), from run.json."""
    doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return sum(int(((p.get("measurement") or {}).get("extra") or {}).get("sim", {}).get("simulated_ios") or 0)
               for p in doc["points"])


def core_rates(tree: Path, repeat: int) -> tuple[float, float]:
    """(plain, mixed) medians, M simulated I/Os per CPU second, from the tree's own sim_speed.py."""
    py = tree / ".venv" / "bin" / "python"
    out = subprocess.run([str(py), str(tree / "benchmarks" / "sim_speed.py"), "--no-bare", "--repeat", str(repeat)],
                         capture_output=True, text=True, cwd=tree / "benchmarks", env=user_env(), check=False)
    plain = mixed = float("nan")
    for line in out.stdout.splitlines():
        m = _MEDIAN.search(line)
        if m and line.startswith("simulated I/Os per CPU second"):
            plain = float(m.group(1))
        elif m and line.startswith("mixed point"):
            mixed = float(m.group(1))
    if plain != plain or mixed != mixed:
        raise SystemExit(f"{tree}: sim_speed.py printed no medians:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    return plain, mixed


class Tree:
    """One installed tree of ssdlab: its command, and where its runs go."""

    def __init__(self, path: Path, label: str, work: Path) -> None:
        self.path, self.label, self.work = path, label, work / label
        self.exe = path / ".venv" / "bin" / "ssdlab"
        if not self.exe.exists():
            raise SystemExit(f"{self.exe} not found: set up that tree first (bash scripts/setup.sh)")
        self.work.mkdir(parents=True)
        self.n = 0
        self.rates: dict[str, list[float]] = {"e2e": [], "e2e-no-report": []}

    def out(self) -> Path:
        self.n += 1
        return self.work / f"run-{self.n}"

    def e2e(self, suite: Path, report: bool) -> Callable[[], Sample]:
        def go() -> Sample:
            out = self.out()
            argv: list[str | Path] = [self.exe, "run", suite, "--target", "sim:tlc-4k", "--out", out, "-q"]
            s = check(f"{self.label} e2e", run(argv + ([] if report else ["--no-report"])))
            self.rates["e2e" if report else "e2e-no-report"].append(simulated_ios(out) / s.cpu)
            return s
        return go

    def pts(self, tests: str | None, report: bool) -> Callable[[], Sample]:
        def go() -> Sample:
            argv: list[str | Path] = [self.exe, "run", "pts", "--target", "sim:p5430", "--runtime", "0.5",
                                      "--out", self.out(), "-q"]
            if tests:
                argv += ["--pts-tests", tests]
            return run(argv + ([] if report else ["--no-report"]))
        return go


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5, help="phases of sim_speed.py per tree")
    ap.add_argument("--vs", type=Path, help="another tree of ssdlab (with its .venv) to alternate with")
    ap.add_argument("--skip", default="", help="comma-separated: core, e2e, demo, pts")
    ap.add_argument("--slack", type=float, default=0.10, help="demo/PTS CPU may exceed the other tree's by this")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    ok = True
    print(f"{load()}; python {sys.version.split()[0]}")
    with tempfile.TemporaryDirectory(prefix="ssdlab-e2e-") as tmp:
        work = Path(tmp)
        suite = work / "e2e.toml"
        suite.write_text(E2E_SUITE, encoding="utf-8")
        trees = [Tree(HERE, "this", work)] + ([Tree(args.vs.resolve(), "other", work)] if args.vs else [])
        if "core" not in skip:
            for t in trees:
                plain, mixed = core_rates(t.path, args.repeat)
                met = t is not trees[0] or (plain * 1e6 >= PLAIN_TARGET and mixed * 1e6 >= MIXED_TARGET)
                ok = ok and met
                print(f"[{t.label}] core: plain {plain:.2f} M, mixed {mixed:.2f} M simulated I/Os per CPU-s "
                      f"(medians of sim_speed.py --repeat {args.repeat}; targets 10 / 5 M)")
        sides: dict[str, Callable[[], Sample]] = {}
        for t in trees:
            if "e2e" not in skip:
                sides[f"[{t.label}] e2e (report)"] = t.e2e(suite, True)
                sides[f"[{t.label}] e2e --no-report"] = t.e2e(suite, False)
            if "demo" not in skip:
                sides[f"[{t.label}] demo (pts, report)"] = t.pts(None, True)
            if "pts" not in skip:
                sides[f"[{t.label}] pts all --no-report"] = t.pts("all", False)
        samples = alternate(sides, args.rounds, warm=False) if sides else {}
        print(load())
        for name, ss in samples.items():
            print(f"{name}: CPU {spread([s.cpu for s in ss])}; wall {spread([s.wall for s in ss])}")
        for t in trees:
            for key, rates in t.rates.items():
                if not rates:
                    continue
                med = statistics.median(rates)
                met = med >= E2E_TARGET
                if t is trees[0]:
                    ok = ok and met
                print(f"[{t.label}] {key}: {spread([r / 1e6 for r in rates], unit='M', digits=2)} simulated I/Os "
                      f"per CPU-s of the process ({'meets' if met else 'BELOW'} the 10 M target)")
        if len(trees) == 2:
            for what in ("demo (pts, report)", "pts all --no-report"):
                a, b = samples.get(f"[this] {what}"), samples.get(f"[other] {what}")
                if not a or not b:
                    continue
                ma, mb = statistics.median(s.cpu for s in a), statistics.median(s.cpu for s in b)
                met = ma <= mb * (1 + args.slack)
                ok = ok and met
                print(f"{what}: this {ma:.1f} CPU-s vs other {mb:.1f} ({ma / mb:.2f}x; "
                      f"{'within' if met else 'BEYOND'} +{args.slack * 100:.0f} %)")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
