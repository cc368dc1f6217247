"""The per-point bookkeeping of `ssdlab run` (everything but the simulator's core and the report): the README's
main job without its report, `ssdlab run pts --target sim:p5430 --runtime 0.5 -q --no-report`, its CPU
seconds minus those of the simulator's core (the points' sim.json cpu_s). Interpreter start and imports count.

Target (issue 12): at most 2 CPU-seconds, so that the whole job (report included) fits 12 CPU-seconds with the
simulator's core at least half of them. With `--against SRC` (another checkout's `src` directory, its
simulator core built or copied in) the same command runs alternately from there (PYTHONPATH), and the
stored results of the two sides' last runs are compared: the same files with the same content, timestamps,
durations and the simulator's checkpoint (saved on a wall-clock schedule) aside.

    .venv/bin/python benchmarks/run_bookkeeping.py [--rounds 3] [--against /tmp/main/src]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from timing import Sample, alternate, load, run, spread, ssdlab, user_env

TARGET_S = 2.0
VOLATILE = {"started", "finished", "created", "wall_s", "cpu_s", "simulated_ios_per_wall_s", "time", "run_id"}


def sim_cpu(run_dir: Path) -> float:
    """CPU seconds the simulator's core spent on the run's points."""
    return sum(float(json.loads(p.read_text(encoding="utf-8")).get("cpu_s") or 0.0)
               for p in run_dir.glob("points/*/sim.json"))


def _plain(value: Any, run_dir: Path) -> Any:
    """A stored JSON value with what differs from run to run blanked (key order kept)."""
    if isinstance(value, dict):
        return [(k, "-" if k in VOLATILE else _plain(v, run_dir)) for k, v in value.items()]
    if isinstance(value, list):
        return [_plain(v, run_dir) for v in value]
    return value.replace(str(run_dir), "RUN") if isinstance(value, str) else value


def differences(a: Path, b: Path) -> list[str]:
    """Files of two run directories that differ (beyond timestamps, durations and the drive checkpoint)."""
    names = {p.relative_to(a) for p in a.rglob("*") if p.is_file()} | \
        {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    out = []
    for rel in sorted(names):
        if rel.name.startswith(("sim-state", ".lock")):
            continue
        x, y = a / rel, b / rel
        if not (x.exists() and y.exists()):
            out.append(f"{rel}: only in one run")
        elif rel.suffix == ".json":
            if _plain(json.loads(x.read_bytes()), a) != _plain(json.loads(y.read_bytes()), b):
                out.append(f"{rel}: content differs")
        elif x.read_bytes().replace(bytes(a), b"RUN") != y.read_bytes().replace(bytes(b), b"RUN"):
            out.append(f"{rel}: bytes differ")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--preset", default="p5430")
    ap.add_argument("--runtime", type=float, default=0.5)
    ap.add_argument("--against", type=Path, help="another checkout's src directory, run alternately")
    args = ap.parse_args()
    exe = ssdlab()
    sides = {"this": None} | ({"against": args.against.resolve()} if args.against else {})
    with tempfile.TemporaryDirectory(prefix="ssdlab-bookkeeping-") as tmp:
        last: dict[str, Path] = {}
        sims: dict[str, list[float]] = {name: [] for name in sides}

        def side(name: str, src: Path | None) -> Sample:
            out = Path(tmp) / f"run-{sum(len(v) for v in sims.values())}"
            env = user_env() | ({"PYTHONPATH": str(src)} if src is not None else {})
            s = run([exe, "run", "pts", "--target", f"sim:{args.preset}", "--runtime", str(args.runtime),
                     "--out", out, "-q", "--no-report"], env=env)
            last[name] = out
            sims[name].append(sim_cpu(out))
            return s

        print(f"ssdlab run pts --target sim:{args.preset} --runtime {args.runtime:g} -q --no-report; {load()}")
        samples = alternate({name: (lambda n=name, s=src: side(n, s)) for name, src in sides.items()},  # type: ignore[misc]
                            args.rounds)
        print(load())
        ok = True
        for name, runs in samples.items():
            sim = sims[name][-len(runs):]
            kept = [r.cpu - s for r, s in zip(runs, sim, strict=True)]
            print(f"{name}: CPU {spread([r.cpu for r in runs])}; simulator core {spread(sim)}")
            print(f"  bookkeeping {spread(kept)}")
            if name == "this":
                met = statistics.median(kept) <= TARGET_S
                ok = ok and met
                print(f"  bookkeeping {statistics.median(kept):.2f} CPU-s ({'meets' if met else 'MISSES'} <= "
                      f"{TARGET_S:g})")
        if args.against:
            diff = differences(last["this"], last["against"])
            print(f"stored results: {'the same' if not diff else f'{len(diff)} file(s) differ'}")
            for line in diff[:10]:
                print(f"  {line}")
            ok = ok and not diff
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
