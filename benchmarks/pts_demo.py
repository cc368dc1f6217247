"""The README's main job, `ssdlab run pts --target sim:p5430 --runtime 0.5` (what scripts/demo.sh runs), and
`ssdlab report` of its result, timed as users run them.

Targets: the run (report included) within 25 s wall clock and 12 CPU-seconds, the simulator's core at least
half of those CPU-seconds; `ssdlab report DIR` of the full PTS run within 10 s. The two commands alternate,
each run a fresh process in a fresh results directory, timed from outside (wall clock; CPU of the process and
of the chart workers it waits for). The simulator's own CPU time comes from its points' sim.json (cpu_s).
A third command, the same run with --no-report, alternates with them and splits the figure: the run's own
bookkeeping against the simulator, and what rendering the report adds (not a target; for the reader).

    .venv/bin/python benchmarks/pts_demo.py [--rounds 3] [--preset p5430] [--runtime 0.5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from timing import Sample, alternate, load, run, spread, ssdlab

WALL_S, CPU_S, REPORT_S, SIM_SHARE = 25.0, 12.0, 10.0, 0.5


def sim_cpu(run_dir: Path) -> float:
    """CPU seconds the simulator's core spent on the run's points."""
    return sum(float(json.loads(p.read_text(encoding="utf-8")).get("cpu_s") or 0.0)
               for p in run_dir.glob("points/*/sim.json"))


def main() -> int:
    """Alternate the run and the report, print the figures, exit 1 when a target is missed."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--preset", default="p5430")
    ap.add_argument("--runtime", type=float, default=0.5)
    args = ap.parse_args()
    exe = ssdlab()
    with tempfile.TemporaryDirectory(prefix="ssdlab-demo-") as tmp:
        base = Path(tmp)
        dirs: list[Path] = []
        sims: list[float] = []
        bares: list[float] = []

        def demo() -> Sample:
            out = base / f"run-{len(dirs)}"
            s = run([exe, "run", "pts", "--target", f"sim:{args.preset}", "--runtime", str(args.runtime),
                     "--out", out, "-q"])
            dirs.append(out)
            sims.append(sim_cpu(out))
            return s

        def bare() -> Sample:
            out = base / f"bare-{len(bares)}"
            s = run([exe, "run", "pts", "--target", f"sim:{args.preset}", "--runtime", str(args.runtime),
                     "--out", out, "-q", "--no-report"])
            bares.append(sim_cpu(out))
            return s

        def report() -> Sample:
            if not dirs:
                demo()  # a stored run to render (not counted)
                sims.pop()
            return run([exe, "report", dirs[-1]])

        print(f"ssdlab run pts --target sim:{args.preset} --runtime {args.runtime:g}; {load()}")
        samples = alternate({"run (report included)": demo, "report DIR": report, "run --no-report": bare},
                            args.rounds, warm=False)
        print(load())
        points = len(json.loads((dirs[-1] / "run.json").read_text(encoding="utf-8"))["points"])
    runs, reports = samples["run (report included)"], samples["report DIR"]
    shares = [s / r.cpu for s, r in zip(sims[-len(runs):], runs, strict=True)]
    print(f"run ({points} points):  wall {spread([r.wall for r in runs])}; CPU {spread([r.cpu for r in runs])}")
    print(f"  simulator core CPU: {spread(sims[-len(runs):])}; share of the run's CPU "
          f"{spread(shares, unit='', digits=2)}")
    print(f"report DIR:          wall {spread([r.wall for r in reports])}; CPU {spread([r.cpu for r in reports])}")
    nores = samples["run --no-report"]
    print(f"run --no-report:     wall {spread([r.wall for r in nores])}; CPU {spread([r.cpu for r in nores])}; "
          f"simulator share {spread([s / r.cpu for s, r in zip(bares, nores, strict=True)], unit='', digits=2)}")
    added = statistics.median(r.cpu for r in runs) - statistics.median(r.cpu for r in nores)
    print(f"  so rendering the report adds about {added:.1f} CPU-s to the run")
    checks = [("run wall", statistics.median(r.wall for r in runs), WALL_S, "<="),
              ("run CPU", statistics.median(r.cpu for r in runs), CPU_S, "<="),
              ("simulator share", statistics.median(shares), SIM_SHARE, ">="),
              ("report wall", statistics.median(r.wall for r in reports), REPORT_S, "<")]
    ok = True
    for name, value, target, op in checks:
        met = value <= target if op == "<=" else value >= target if op == ">=" else value < target
        ok = ok and met
        print(f"{name}: {value:.2f} ({'meets' if met else 'MISSES'} {op} {target:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
