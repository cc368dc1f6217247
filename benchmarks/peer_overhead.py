"""Per-point cost against the leanest peer: the same matrix through ssdlab and through fio-plot's `bench-fio`.

The matrix (issue 27): 4K random read at QD 1, 2, 4, ..., 64, one job, 1-s time-based points, on one existing
256 MiB file, libaio, direct I/O. Both sides are the commands users run, as they run them: in a terminal (a
pseudo-terminal here, so progress lines and bars are drawn), each a fresh process timed from outside (wall clock;
CPU of the process and its children, fio included), in alternating order:

    ssdlab run peer.toml --target file:F --out DIR --no-report
    bench-fio -d F -t file -s 256M -o DIR -m randread -b 4k --iodepth 1 2 4 ... 64 --numjobs 1 --runtime 1
              --time-based -e libaio --direct 1

Until issue 34 this script ran `ssdlab run ... -q` (no progress, no end-of-run table, no rich) and `bench-fio
--quiet`, with output to /dev/null, on a loaded host: quiet flags users do not pass, and a load under which the
harnesses' CPU-bound start-up and per-point work stretch alike while fio's fixed run time does not. It reported
0.997; users timing the plain commands on a quiet host saw 1.05-1.09.

A second set of rounds (--breakdown, on by default) runs both sides with `fio` on PATH a small wrapper that logs
each fio run's wall and CPU time: a side's own overhead is then its wall time beyond fio's runs and its CPU time
beyond fio's, figures that do not depend on how fast fio itself ran (the wrapper's own start-up is in both
sides alike).

bench-fio (PyPI `fio-plot`) is installed into a temporary venv by this script (or taken from --bench-fio PATH);
when it cannot be installed the comparison is skipped with one line. Prints both sides' median and spread, the
median wall and CPU ratios (ssdlab / bench-fio; the goal is at most 1.00), each side's own overhead (wall and
CPU beyond fio's runs) and the ratio of their own CPU (the goal: at most 1.00 too; a loaded host stretches
wall-clock figures, this one much less) and, from the stored run, where ssdlab's time per point went (the
point's executor time against its 1-s runtime). Wall-clock figures need a quiet host: the load is printed with them.

    .venv/bin/python benchmarks/peer_overhead.py [--rounds 5] [--bench-fio PATH] [--workdir DIR] [--no-breakdown]
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
from collections.abc import Callable
from pathlib import Path

from timing import Sample, alternate, load, run, spread, ssdlab, user_env

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


WRAPPER = """#!/usr/bin/python3 -S
import os, sys, time
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(REAL, [REAL, *sys.argv[1:]])
_, status, ru = os.wait4(pid, 0)
if "--version" not in sys.argv:
    with open(LOG, "a") as fh:
        fh.write(f"{time.monotonic() - t0:.4f} {ru.ru_utime + ru.ru_stime:.4f}\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def fio_wrapper(bindir: Path, log: Path) -> dict[str, str]:
    """A `fio` in `bindir` that runs the real one and appends its wall and CPU seconds to `log`; the environment
    that puts it first on PATH."""
    real = shutil.which("fio") or "fio"
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "fio"
    exe.write_text(WRAPPER.replace("REAL", repr(real)).replace("LOG", repr(str(log))), encoding="utf-8")
    exe.chmod(0o755)
    return {**user_env(), "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}


def fio_totals(log: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of the fio runs logged since the log was last emptied (then emptied)."""
    rows = [line.split() for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    log.write_text("", encoding="utf-8")
    return sum(float(r[0]) for r in rows), sum(float(r[1]) for r in rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--runtime", type=float, default=1.0, help="seconds per point (default 1)")
    ap.add_argument("--bench-fio", type=Path, help="an installed bench-fio (default: install fio-plot into a venv)")
    ap.add_argument("--workdir", type=Path, help="where the 256 MiB file and the venv live (default: a temp dir)")
    ap.add_argument("--no-breakdown", action="store_true", help="skip the rounds with fio's runs timed apart")
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
        fio_log = base / "fio-runs.log"
        wrapped_env = fio_wrapper(base / "wrapped-bin", fio_log)
        own: dict[str, list[tuple[float, float]]] = {}  # side -> (wall, CPU) beyond its fio runs, per run
        fio_runs: dict[str, list[tuple[float, float]]] = {}  # side -> (wall, CPU) of its fio runs, per run

        def lab(env: dict[str, str] | None = None) -> Sample:
            out = base / f"lab-{next(counter)}"
            s = run([exe, "run", suite, "--target", f"file:{data}", "--out", out, "--no-report"], tty=True, env=env)
            if s.code == 0:
                overheads.extend(per_point(out, args.runtime))
                shutil.rmtree(out)
            return s

        def peer(env: dict[str, str] | None = None) -> Sample:
            out = base / f"peer-{next(counter)}"
            s = run([bench, "-d", data, "-t", "file", "-s", "256M", "-o", out, "-m", "randread", "-b", "4k",
                     "--iodepth", *map(str, DEPTHS), "--numjobs", "1", "--runtime", f"{args.runtime:g}",
                     "--time-based", "-e", "libaio", "--direct", "1"], cwd=base, tty=True, env=env)
            shutil.rmtree(out, ignore_errors=True)
            return s

        def wrapped(side: str, fn: Callable[[dict[str, str] | None], Sample]) -> Callable[[], Sample]:
            def call() -> Sample:
                fio_totals(fio_log)
                s = fn(wrapped_env)
                wall, cpu = fio_totals(fio_log)
                own.setdefault(side, []).append((s.wall - wall, s.cpu - cpu))
                fio_runs.setdefault(side, []).append((wall, cpu))
                return s
            return call

        print(f"matrix: 4K randread QD {'-'.join(map(str, DEPTHS[::len(DEPTHS) - 1]))} ({len(DEPTHS)} points), "
              f"one job, {args.runtime:g}-s points, 256 MiB file, libaio, direct; both on a terminal; {load()}")
        sides = {"ssdlab run --no-report": lambda: lab(), "bench-fio": lambda: peer()}
        samples = alternate(sides, args.rounds)
        overheads = overheads[len(DEPTHS):]  # the untimed warm-up run's points left out
        print(load())
        if not args.no_breakdown:
            alternate({"ssdlab": wrapped("ssdlab", lab), "bench-fio": wrapped("bench-fio", peer)}, args.rounds)
            print(load())
        Path(f"/tmp/{data.name}-tmpjobfile.fio").unlink(missing_ok=True)  # where bench-fio writes its job file
    for name, runs in samples.items():
        print(f"{name:<24} wall {spread([s.wall for s in runs])}; CPU {spread([s.cpu for s in runs])}")
    for name, pairs_ in own.items():
        timed = pairs_[1:]  # the untimed warm-up run left out
        print(f"{name:<24} beyond its fio runs: wall {spread([w for w, _ in timed])}; "
              f"CPU {spread([c for _, c in timed])}")
        fio = fio_runs[name][1:]
        print(f"{'':<24} its fio runs:         wall {spread([w for w, _ in fio])}; CPU {spread([c for _, c in fio])}")
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
    if "ssdlab" not in own or "bench-fio" not in own:
        return 0 if ratio <= GOAL else 1
    # what each harness itself costs, fio's runs taken out: the figure a loaded host does not move much
    mine, peers = (statistics.median(c for _, c in own[n][1:]) for n in ("ssdlab", "bench-fio"))
    own_ratio = mine / peers
    print(f"median own CPU ratio ssdlab / bench-fio (beyond their fio runs): {own_ratio:.3f} ({mine:.3f} s vs "
          f"{peers:.3f} s; {'meets' if own_ratio <= GOAL else 'MISSES'} the goal <= {GOAL:.2f})")
    return 0 if ratio <= GOAL and own_ratio <= GOAL else 1


if __name__ == "__main__":
    raise SystemExit(main())
