"""Per-point cost against the leanest peer: the same matrix through ssdlab and through fio-plot's `bench-fio`.

The matrix (issue 27): 4K random read at QD 1, 2, 4, ..., 64, one job, 1-s time-based points, on one existing
256 MiB file, libaio, direct I/O. Both sides are the commands users run, each a fresh process timed from outside
(wall clock; CPU of the process and its children, fio included), in alternating order:

    ssdlab run peer.toml --target file:F --out DIR -q --no-report
    bench-fio -d F -t file -s 256M -o DIR -m randread -b 4k --iodepth 1 2 4 ... 64 --numjobs 1 --runtime 1
              --time-based -e libaio --direct 1 --quiet

bench-fio (PyPI `fio-plot`) is installed into a temporary venv by this script (or taken from --bench-fio PATH);
when it cannot be installed the comparison is skipped with one line. Prints both sides' median and spread, the
median wall and CPU ratios (ssdlab / bench-fio; the goal is at most 1.00) and, from the stored run, where
ssdlab's time per point went (the point's executor time against its 1-s runtime).

    .venv/bin/python benchmarks/peer_overhead.py [--rounds 5] [--bench-fio PATH] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import Sample, alternate, load, run, spread, ssdlab

DEPTHS = (1, 2, 4, 8, 16, 32, 64)
SIZE = 256 << 20
GOAL = 1.00


def suite_text(runtime: float) -> str:
    """The matrix as a user's suite file (docs/suites.md)."""
    depths = ", ".join(map(str, DEPTHS))
    return (f'name = "peer-matrix"\nsummary = "4K random read, QD 1-64, one job (issue 27)"\n'
            f'runtime_s = {runtime:g}\n\n[[matrix]]\nname = "rnd-read"\nrw = "randread"\nbs = "4k"\n'
            f'numjobs = [1]\niodepth = [{depths}]\n')


def make_file(path: Path) -> None:
    """The existing 256 MiB file both sides read (written once, real blocks, flushed)."""
    if path.exists() and path.stat().st_size == SIZE:
        return
    chunk = os.urandom(1 << 20)
    with path.open("wb") as fh:
        for _ in range(SIZE >> 20):
            fh.write(chunk)
        fh.flush()
        os.fsync(fh.fileno())


def install_bench_fio(venv: Path) -> Path | None:
    """bench-fio from PyPI in its own venv; None (and the reason printed) when it cannot be installed."""
    exe = venv / "bin" / "bench-fio"
    if exe.exists():
        return exe
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "fio-plot"], check=True, capture_output=True,
                       timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        err = getattr(exc, "stderr", b"") or b""
        last = err.decode(errors="replace").strip().splitlines()[-1:] if isinstance(err, bytes) else []
        print(f"bench-fio skipped: `pip install fio-plot` failed ({last[0] if last else exc})")
        return None
    return exe if exe.exists() else None


def per_point(run_dir: Path, runtime: float) -> list[float]:
    """Each stored point's executor time (measurement.extra.wall_s) minus its runtime: the point's own overhead."""
    doc = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
    return [float(p["measurement"]["extra"]["wall_s"]) - runtime for p in doc["points"]
            if (p.get("measurement") or {}).get("extra", {}).get("wall_s") is not None]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=1.0, help="seconds per point (default 1)")
    ap.add_argument("--bench-fio", type=Path, help="an installed bench-fio (default: install fio-plot into a venv)")
    ap.add_argument("--workdir", type=Path, help="where the 256 MiB file and the venv live (default: a temp dir)")
    args = ap.parse_args()
    if shutil.which("fio") is None:
        print("fio is not installed (sudo apt-get install fio)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="ssdlab-peer-") as tmp:
        base = Path(tmp)
        work = args.workdir or base
        work.mkdir(parents=True, exist_ok=True)
        bench = args.bench_fio or install_bench_fio(work / "fio-plot-venv")
        if bench is None:
            return 0
        data = work / "peer.dat"
        make_file(data)
        suite = base / "peer.toml"
        suite.write_text(suite_text(args.runtime), encoding="utf-8")
        exe = ssdlab()
        counter = iter(range(10**6))
        overheads: list[float] = []

        def lab() -> Sample:
            out = base / f"lab-{next(counter)}"
            s = run([exe, "run", suite, "--target", f"file:{data}", "--out", out, "-q", "--no-report"])
            if s.code == 0:
                overheads.extend(per_point(out, args.runtime))
                shutil.rmtree(out)
            return s

        def peer() -> Sample:
            out = base / f"peer-{next(counter)}"
            s = run([bench, "-d", data, "-t", "file", "-s", "256M", "-o", out, "-m", "randread", "-b", "4k",
                     "--iodepth", *map(str, DEPTHS), "--numjobs", "1", "--runtime", f"{args.runtime:g}",
                     "--time-based", "-e", "libaio", "--direct", "1", "--quiet"], cwd=base)
            shutil.rmtree(out, ignore_errors=True)
            return s

        print(f"matrix: 4K randread QD {'-'.join(map(str, DEPTHS[::len(DEPTHS) - 1]))} ({len(DEPTHS)} points), "
              f"one job, {args.runtime:g}-s points, 256 MiB file, libaio, direct; {load()}")
        sides = {"ssdlab run --no-report": lab, "bench-fio": peer}
        samples = alternate(sides, args.rounds)
        overheads = overheads[len(DEPTHS):]  # the untimed warm-up run's points left out
        print(load())
        Path(f"/tmp/{data.name}-tmpjobfile.fio").unlink(missing_ok=True)  # where bench-fio writes its job file
    for name, runs in samples.items():
        print(f"{name:<24} wall {spread([s.wall for s in runs])}; CPU {spread([s.cpu for s in runs])}")
    ours, theirs = samples["ssdlab run --no-report"], samples["bench-fio"]
    ratio = statistics.median(s.wall for s in ours) / statistics.median(s.wall for s in theirs)
    cpu = statistics.median(s.cpu for s in ours) / statistics.median(s.cpu for s in theirs)
    pairs = [a.wall / b.wall for a, b in zip(ours, theirs, strict=True)]
    per = (statistics.median(s.wall for s in ours) - statistics.median(s.wall for s in theirs)) / len(DEPTHS)
    print(f"ssdlab's points: executor time minus runtime {spread(overheads)}")
    print(f"wall ratio per round (ssdlab / bench-fio): {spread(pairs, unit='x')}")
    verdict = "meets" if ratio <= GOAL else "MISSES"
    print(f"median wall ratio ssdlab / bench-fio: {ratio:.3f} ({per * 1000:+.0f} ms per point; {verdict} the goal "
          f"<= {GOAL:.2f}); CPU ratio {cpu:.3f}")
    return 0 if ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
