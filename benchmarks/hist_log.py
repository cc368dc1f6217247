"""Benchmark: ssdlab's histogram-log analysis against fio's tools/hist/fiologparser_hist.py.

Generates the reference input of fio.md §8 with fio (one job section, numjobs=4, io_uring, direct=1,
randrw 70/30, 4 KiB, QD8, write_hist_log at 100 ms; 60 s unless --seconds), runs the baseline script in its
default (weighted) mode and ssdlab in the same semantics (`--mode weighted`), checks that every output
row agrees within one fio bucket, and prints the wall-time ratio and both peak RSS figures.

    python benchmarks/hist_log.py [--seconds 60] [--baseline PATH] [--baseline-python PY] [--scale K]

The baseline needs numpy and pandas; pass --baseline-python for an interpreter that has them. It is
looked for at --baseline, then under /tmp, then in Debian's /usr/share/doc/fio/fiologparser_hist.py.gz.
--scale K also writes each log K times end to end (timestamps shifted) and reports ssdlab's peak RSS on
that K-times longer input, to show that memory does not grow with the length of the log.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from ssdlab.fio import hist

DEBIAN_COPY = Path("/usr/share/doc/fio/fiologparser_hist.py.gz")


def generate(workdir: Path, seconds: int, file_size: str) -> list[Path]:
    """Run fio to produce h_clat_hist.{1..4}.log in workdir (reused when already there for these settings)."""
    stamp = workdir / f"generated-{seconds}s"
    logs = sorted(workdir.glob("h_clat_hist.*.log"))
    if stamp.exists() and len(logs) == 4:
        return logs
    for old in logs:
        old.unlink()
    job = workdir / "gen.fio"
    job.write_text(
        "[h]\n"
        f"filename={workdir / 'data.bin'}\nsize={file_size}\nioengine=io_uring\ndirect=1\nrw=randrw\n"
        f"rwmixread=70\nbs=4k\niodepth=8\nnumjobs=4\nruntime={seconds}\ntime_based=1\n"
        "write_hist_log=h\nlog_hist_msec=100\n"
    )
    print(f"generating the reference input with fio ({seconds} s, 4 jobs, 100 ms histogram logs) ...", flush=True)
    subprocess.run(["fio", "--output", str(workdir / "fio.out"), str(job)], cwd=workdir, check=True)
    (workdir / "data.bin").unlink(missing_ok=True)
    stamp.write_text("ok\n")
    return sorted(workdir.glob("h_clat_hist.*.log"))


def find_baseline(given: str | None, workdir: Path) -> Path | None:
    """The baseline script: --baseline, a copy under /tmp, or Debian's compressed copy (decompressed)."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise SystemExit(f"--baseline {given}: no such file")
        return path
    found = sorted(Path("/tmp").glob("**/fiologparser_hist.py"))
    if found:
        return found[0]
    if DEBIAN_COPY.is_file():
        out = workdir / "fiologparser_hist.py"
        out.write_bytes(gzip.decompress(DEBIAN_COPY.read_bytes()))
        return out
    return None


def python_with_pandas(given: str | None) -> str | None:
    """An interpreter that can import numpy and pandas (the baseline's dependencies)."""
    candidates = [given] if given else [sys.executable, shutil.which("python3") or ""]
    for exe in candidates:
        if exe and subprocess.run([exe, "-c", "import numpy, pandas"], capture_output=True).returncode == 0:
            return exe
    return None


@dataclass(frozen=True)
class Timing:
    wall: float  # seconds
    cpu: float  # user + system seconds
    rss_mb: float  # peak resident set size


def timed(argv: list[str], out_path: Path, repeat: int = 1) -> Timing:
    """Run argv (stdout to out_path) `repeat` times; the best wall time, its CPU time, the peak RSS.

    The best of several runs filters out other load on a shared machine; each figure is of that process
    alone (os.wait4), not of this script.
    """
    best: Timing | None = None
    for _ in range(repeat):
        with out_path.open("w") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
            raise SystemExit(f"{argv[0]} failed ({proc.returncode}): {err.strip().splitlines()[-1:]}")
        t = Timing(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0)
        if best is None or t.wall < best.wall:
            best = Timing(t.wall, t.cpu, max(t.rss_mb, best.rss_mb if best else 0.0))
    assert best is not None
    return best


def read_csv(path: Path, drop_dir: bool) -> list[list[float]]:
    rows = []
    for line in path.read_text().splitlines()[1:]:
        cells = [c.strip() for c in line.split(",")]
        if drop_dir:
            del cells[1]
        rows.append([float(c) for c in cells])
    return rows


def within_one_bucket(a: float, b: float) -> bool:
    """|a - b| no more than the width of the fio bucket holding the larger value."""
    v = max(a, b)
    lo, hi = hist.idx_bounds(hist.value_to_idx(int(v)))
    return abs(a - b) <= (hi - lo)


def compare(base: list[list[float]], ours: list[list[float]]) -> tuple[int, int, float]:
    """(rows compared, rows outside one bucket, worst relative difference) over min..max columns."""
    if len(base) != len(ours):
        raise SystemExit(f"row counts differ: baseline {len(base)}, ssdlab {len(ours)}")
    bad = 0
    worst = 0.0
    for b, o in zip(base, ours, strict=True):
        if b[0] != o[0] or b[1] != o[1]:
            raise SystemExit(f"row mismatch at end-time {b[0]}: baseline {b[:2]}, ssdlab {o[:2]}")
        ok = True
        for x, y in zip(b[2:], o[2:], strict=True):
            worst = max(worst, abs(x - y) / max(abs(x), 1.0))
            ok = ok and within_one_bucket(x, y)
        bad += 0 if ok else 1
    return len(base), bad, worst


def scaled_copy(logs: list[Path], workdir: Path, k: int) -> list[Path]:
    """Each log written k times end to end with shifted timestamps (a k-times longer run)."""
    out = []
    for path in logs:
        lines = path.read_text().splitlines()
        span = max(int(ln.split(",", 1)[0]) for ln in lines) + 100
        target = workdir / f"long_{path.name}"
        with target.open("w") as fh:
            for rep in range(k):
                for ln in lines:
                    t, rest = ln.split(",", 1)
                    fh.write(f"{int(t) + rep * span},{rest}\n")
        out.append(target)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=60, help="fio runtime for the input (default 60, as fio.md §8)")
    ap.add_argument("--file-size", default="4g", help="fio file size (default 4g)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ssdlab-histlog-bench"))
    ap.add_argument("--baseline", help="path of fiologparser_hist.py")
    ap.add_argument("--baseline-python", help="interpreter with numpy + pandas for the baseline")
    ap.add_argument("--scale", type=int, default=0, help="also measure ssdlab on a K-times longer copy")
    ap.add_argument("--repeat", type=int, default=3, help="runs of ssdlab per mode; the best counts (default 3)")
    ap.add_argument("--no-baseline", action="store_true", help="skip the (slow) baseline script")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    logs = generate(args.workdir, args.seconds, args.file_size)
    size_mb = sum(p.stat().st_size for p in logs) / 1e6
    lines = sum(p.read_bytes().count(b"\n") for p in logs)
    print(f"input: {len(logs)} files, {lines} lines, {size_mb:.1f} MB")
    ours_argv = [sys.executable, "-m", "ssdlab.commands.histlog", *map(str, logs), "--interval", "0.1",
                 "--mode", "weighted", "--percentiles", "90,95,99"]
    ours = timed(ours_argv, args.workdir / "ssdlab_weighted.csv", repeat=args.repeat)
    print(f"ssdlab hist-log --mode weighted: {ours.wall:.2f} s wall (best of {args.repeat}), {ours.cpu:.2f} s CPU, "
          f"{ours.rss_mb:.0f} MB peak RSS")
    fio_mode = timed([*ours_argv[:-4], "--mode", "fio", "--percentiles", "50,90,95,99"],
                     args.workdir / "ssdlab_fio.csv", repeat=args.repeat)
    print(f"ssdlab hist-log --mode fio:      {fio_mode.wall:.2f} s wall (best of {args.repeat}), "
          f"{fio_mode.cpu:.2f} s CPU, {fio_mode.rss_mb:.0f} MB peak RSS")
    if args.scale > 1:
        long_logs = scaled_copy(logs, args.workdir, args.scale)
        long_mb = sum(p.stat().st_size for p in long_logs) / 1e6
        long = timed([*ours_argv[:3], *map(str, long_logs), *ours_argv[3 + len(logs):]],
                     args.workdir / "ssdlab_long.csv")
        print(f"ssdlab on a {args.scale}x longer input ({long_mb:.0f} MB): {long.wall:.2f} s wall, "
              f"{long.rss_mb:.0f} MB peak RSS")
        for p in long_logs:
            p.unlink()
    if args.no_baseline:
        return 0
    script = find_baseline(args.baseline, args.workdir)
    py = python_with_pandas(args.baseline_python)
    if script is None or py is None:
        print("baseline not run: " + ("fiologparser_hist.py not found (--baseline PATH)" if script is None
                                      else "no interpreter with numpy+pandas (--baseline-python PY)"))
        return 0
    base = timed([py, str(script), "-i", "100", *map(str, logs)], args.workdir / "baseline.csv")
    print(f"fiologparser_hist.py (weighted): {base.wall:.2f} s wall, {base.cpu:.2f} s CPU, "
          f"{base.rss_mb:.0f} MB peak RSS")
    rows, bad, worst = compare(read_csv(args.workdir / "baseline.csv", False),
                               read_csv(args.workdir / "ssdlab_weighted.csv", True))
    print(f"agreement: {rows} rows, {bad} outside one fio bucket, worst relative difference {worst:.2e}")
    print(f"speed ratio (baseline / ssdlab, weighted mode): {base.wall / ours.wall:.1f}x wall, "
          f"{base.cpu / ours.cpu:.1f}x CPU (target >= 70x); memory {base.rss_mb:.0f} MB -> {ours.rss_mb:.0f} MB")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
