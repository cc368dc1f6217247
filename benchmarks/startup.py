"""Start-up: `ssdlab --version`, `ssdlab --help` and `ssdlab hist-log` on a small log, as users run them,
against the bare interpreter (`python -c pass`) for reference. Target: each <= 0.25 s wall clock.

    .venv/bin/python benchmarks/startup.py [--rounds 7]

Prints the median and spread of wall-clock and CPU time per command, and the modules each one imports from
numpy/matplotlib/jinja2/rich and the suites (none is needed to print the version or the help).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from timing import alternate, load, run, spread, ssdlab

TARGET_S = 0.25
HEAVY = ("numpy", "matplotlib", "jinja2", "rich", "ssdlab.suites", "ssdlab.report")


def small_log(path: Path) -> Path:
    """A fio histogram log of 20 intervals (1856 buckets each), as write_hist_log writes them."""
    lines = []
    for k in range(20):
        counts = [0] * 1856
        counts[400 + k] = 100
        counts[700] = 3
        lines.append(f"{(k + 1) * 1000}, 0, 4096, " + ", ".join(map(str, counts)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def imported(argv: list[str]) -> list[str]:
    """Heavy top-level packages a command imports (python -X importtime)."""
    res = subprocess.run([sys.executable, "-X", "importtime", "-m", "ssdlab", *argv], capture_output=True,
                         text=True, check=False)
    names = {line.split("|")[-1].strip() for line in res.stderr.splitlines() if "|" in line}
    return sorted({h for h in HEAVY for n in names if n == h or n.startswith(h + ".")})


def main() -> int:
    """Alternate the commands, print the figures, exit 1 when one misses the target."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    exe = ssdlab()
    with tempfile.TemporaryDirectory(prefix="ssdlab-startup-") as tmp:
        log = small_log(Path(tmp) / "h_clat_hist.1.log")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "ssdlab --version": [exe, "--version"],
            "ssdlab --help": [exe, "--help"],
            "ssdlab hist-log (20 intervals)": [exe, "hist-log", log],
        }
        print(load())
        samples = alternate({name: (lambda a=argv: run(a)) for name, argv in commands.items()}, args.rounds)
        print(load())
    worst = 0.0
    for name, runs in samples.items():
        walls = [s.wall for s in runs]
        print(f"{name:<32} wall {spread(walls)}; CPU {spread([s.cpu for s in runs])}")
        if name.startswith("ssdlab"):
            worst = max(worst, statistics.median(walls))
    for argv in (["--version"], ["--help"]):
        print(f"ssdlab {' '.join(argv)} imports: {', '.join(imported(argv)) or 'none of ' + ', '.join(HEAVY)}")
    verdict = "meets" if worst <= TARGET_S else "MISSES"
    print(f"slowest median: {worst:.3f} s ({verdict} the target <= {TARGET_S} s)")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
