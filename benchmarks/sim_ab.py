"""Simulator core A/B: two builds of the native core, the same steady-state 4K random writes, process by process.

Each side is a C source of the core (built here with the interpreter's compiler and flags plus setup.py's, into a
temporary directory) or an extension already built. Every round runs each side in a fresh process of its own (the
order swapped every round, so drift on a shared host hits both alike): it lays out a drive, brings it to steady state
and times --phases phases of one capacity of writes, reporting the median. Two builds timed in one process get
their memory unequally (the first drive's tables tend to get the transparent huge pages, the second's not, and
where each array lands in the caches differs): 15-25 % apart for the same build, here, so each side has its own
process. Prints each side's median rate per CPU second and the median of the per-round ratios B/A. Results of the
two builds should be identical (benchmarks/sim_digest.py); this only times them. To compare the core of another
revision with the working tree:

    git show main:src/ssdlab/sim/_core.c > /tmp/core_main.c
    .venv/bin/python benchmarks/sim_ab.py /tmp/core_main.c src/ssdlab/sim/_core.c [--rounds 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

from timing import load, spread, user_env

from ssdlab.sim.presets import core_params
from ssdlab.sim.validate import Bench

EXTRA_CFLAGS = ["-O2", "-std=c11"]  # setup.py's extra_compile_args, after the interpreter's flags as setuptools does


def build(source: Path, out: Path) -> Path:
    """Compile one core source into an extension at `out`."""
    cc = shlex.split(str(sysconfig.get_config_var("CC") or "cc"))
    flags = shlex.split(str(sysconfig.get_config_var("CFLAGS") or "")) + shlex.split(
        str(sysconfig.get_config_var("CCSHARED") or ""))
    include = sysconfig.get_paths()["include"]
    subprocess.run([*cc, "-shared", *flags, *EXTRA_CFLAGS, f"-I{include}", "-o", str(out), str(source), "-lm"],
                   check=True)
    return out


def load_core(tag: str, path: Path) -> ModuleType:
    """Import an extension build under a name of its own (its init function is PyInit__core either way)."""
    spec = importlib.util.spec_from_file_location(f"{tag}._core", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def phase_rates(ext: Path, preset: str, phases: int) -> float:
    """In this process: the median rate of `phases` timed phases on a drive of this build at steady state."""
    bench = Bench(preset)
    core: Any = load_core("sim_ab_side", ext)
    bench.dev = core.Device(core_params(bench.values))
    bench.fill()
    bench.run(io_bytes=2 * bench.user)  # steady state (not timed)
    rates = []
    for _ in range(phases):
        c0 = time.process_time()
        bench.run(io_bytes=bench.user)
        rates.append(bench.user / 4096 / (time.process_time() - c0))  # Bench.run writes 4 KiB
    return statistics.median(rates)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("a", type=Path, help="side A: a core C source (.c) or a built extension")
    ap.add_argument("b", type=Path, nargs="?", help="side B: the same")
    ap.add_argument("--preset", default="tlc-4k")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--phases", type=int, default=3, help="timed phases per process")
    ap.add_argument("--side", action="store_true", help=argparse.SUPPRESS)  # internal: time one build, print it
    args = ap.parse_args()
    if args.side:
        print(phase_rates(args.a, args.preset, args.phases))
        return 0
    if args.b is None:
        raise SystemExit("give two builds: A and B")
    with tempfile.TemporaryDirectory(prefix="ssdlab-sim-ab-") as tmp:
        exts = [build(p, Path(tmp) / f"{tag}.so") if p.suffix == ".c" else p
                for tag, p in (("a", args.a), ("b", args.b))]
        print(load())
        rates: list[list[float]] = [[], []]
        for k in range(args.rounds):
            for side in (0, 1) if k % 2 == 0 else (1, 0):
                out = subprocess.run([sys.executable, __file__, str(exts[side]), "--side", "--preset", args.preset,
                                      "--phases", str(args.phases)], capture_output=True, text=True, check=True,
                                     env=user_env(), cwd=Path(__file__).parent)
                rates[side].append(float(out.stdout.strip()))
    print(f"{load()} afterwards")
    for side, path in enumerate((args.a, args.b)):
        print(f"{'AB'[side]} {path}: {spread([r / 1e6 for r in rates[side]], unit='M', digits=2)} simulated "
              f"4K random writes per CPU second")
    ratios = [b / a for a, b in zip(rates[0], rates[1], strict=True)]
    print(f"B/A: {spread(ratios, unit='x', digits=3)} per round")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
