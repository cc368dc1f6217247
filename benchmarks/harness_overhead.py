"""Harness overhead: one 5-s null-engine point as users run it, `ssdlab run SUITE.toml --target null`, against
fio running the very job file ssdlab wrote for it (`fio --output-format=json+ job.fio`), alternating.

Both sides are fresh processes timed from outside (wall clock; CPU of the process and its children), so
ssdlab's figure holds its whole cost: start-up, planning, fio's start, status parsing, storing the point.
Target: ssdlab's median wall time within 0.3 s of fio's. The report (--no-report) is left out: it is a
separate step, timed by benchmarks/pts_demo.py; --with-report times the default command too.

    .venv/bin/python benchmarks/harness_overhead.py [--rounds 5] [--runtime 5] [--rw randread] [--bs 4k]

Prints both sides' median and spread, the median wall-time difference and the median IOPS ratio.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from timing import Sample, alternate, load, run, spread, ssdlab

TARGET_S = 0.3


def suite_file(path: Path, rw: str, bs: str, runtime: float) -> Path:
    """A user suite of exactly one point (docs/suites.md)."""
    path.write_text(f'name = "overhead-point"\nsummary = "one point for the harness overhead benchmark"\n'
                    f"runtime_s = {runtime}\n\n[[matrix]]\nname = \"point\"\nrw = \"{rw}\"\nbs = \"{bs}\"\n"
                    "iodepth = 1\nnumjobs = 1\n", encoding="utf-8")
    return path


def lab_iops(run_dir: Path) -> float:
    from ssdlab.results.store import load_run

    m = load_run(run_dir).points[-1].measurement
    assert m is not None
    return m.total_iops


def fio_iops(out: Path) -> float:
    text = out.read_text(encoding="utf-8")
    doc = json.loads(text[text.index("{"):])
    return float(sum(j["read"]["iops"] + j["write"]["iops"] for j in doc["jobs"]))


def main() -> int:
    """Alternate the two commands, print the figures, exit 1 when the overhead misses the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=5.0, help="seconds per point (default 5)")
    ap.add_argument("--rw", default="randread")
    ap.add_argument("--bs", default="4k")
    ap.add_argument("--with-report", action="store_true", help="also time the default command (renders the report)")
    args = ap.parse_args()
    fio = shutil.which("fio")
    if fio is None:
        print("fio is not installed (sudo apt-get install fio)", file=sys.stderr)
        return 2
    exe = ssdlab()
    with tempfile.TemporaryDirectory(prefix="ssdlab-overhead-") as tmp:
        base = Path(tmp)
        suite = suite_file(base / "point.toml", args.rw, args.bs, args.runtime)
        counter = iter(range(10**6))
        iops: dict[str, list[float]] = {"ssdlab": [], "fio": []}

        def lab(report: bool = False) -> Sample:
            out = base / f"run-{next(counter)}"
            s = run([exe, "run", suite, "--target", "null", "--runtime", str(args.runtime), "--out", out, "-q",
                     *([] if report else ["--no-report"])])
            if not report:
                iops["ssdlab"].append(lab_iops(out))
            return s

        lab()  # the job file ssdlab writes for the point (and a warm-up of both sides' files and caches)
        job = next((base / "run-0" / "points").iterdir()) / "job.fio"
        shutil.copy(job, base / "job.fio")
        iops["ssdlab"].clear()

        def raw() -> Sample:
            out = base / f"fio-{next(counter)}.json"
            s = run([fio, "--output-format=json+", base / "job.fio"], stdout=out, cwd=base)
            iops["fio"].append(fio_iops(out))
            return s

        sides = {"ssdlab run (--no-report)": lab, "fio job.fio": raw}
        if args.with_report:
            sides["ssdlab run (with report)"] = lambda: lab(report=True)
        print(f"job: null engine {args.rw} bs={args.bs} QD1 T1, {args.runtime:g} s per point; {load()}")
        samples = alternate(sides, args.rounds)
        print(load())
    for name, runs in samples.items():
        print(f"{name:<26} wall {spread([s.wall for s in runs])}; CPU {spread([s.cpu for s in runs])}")
    lab_runs, fio_runs = samples["ssdlab run (--no-report)"], samples["fio job.fio"]
    diffs = [a.wall - b.wall for a, b in zip(lab_runs, fio_runs, strict=True)]
    ratio = statistics.median(iops["ssdlab"]) / statistics.median(iops["fio"])
    worst = statistics.median(diffs)
    verdict = "meets" if worst <= TARGET_S else "MISSES"
    print(f"ssdlab - fio wall time per pair: {spread(diffs)} ({verdict} the target <= {TARGET_S} s)")
    print(f"median IOPS ratio ssdlab/fio: {ratio:.4f} (the same job; a CPU-bound null engine swings on a busy host)")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
