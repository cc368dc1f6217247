"""Benchmark: `ssdlab hist-log` (the command users run) against fio's tools/hist/fiologparser_hist.py.

Generates the reference input of fio.md §8 with fio (one job section, numjobs=4, io_uring, direct=1,
randrw 70/30, 4 KiB, QD8, write_hist_log at 100 ms; 60 s unless --seconds), then runs both commands on the
same logs, each as a fresh process measured from outside (wall clock, CPU of the process), in alternating
order for --rounds rounds: fiologparser_hist.py in its default (weighted) mode, and
`ssdlab hist-log --mode weighted` (the same semantics). It checks that every output row agrees within one
fio bucket and prints the median and spread of both, their ratio (target >= 100x) and both peak RSS figures.

    python benchmarks/hist_log.py [--seconds 60] [--rounds 3] [--baseline PATH] [--baseline-python PY] [--real]

--real records the input from a loaded block device instead (as fio users record theirs): a loop device over a
file in --workdir (root and losetup needed; detached at the end), a background fio writer on its second half
(128 KiB sequential writes, QD4, psync) for the whole time, and the same job as above with io_uring on its
first half. Real logs differ from generated ones: latencies spread over many more buckets per line.

The baseline needs numpy and pandas; pass --baseline-python for an interpreter that has them. It is
looked for at --baseline, then under /tmp, then in Debian's /usr/share/doc/fio/fiologparser_hist.py.gz.
--scale K also writes each log K times end to end (timestamps shifted) and reports ssdlab's peak RSS on
that K-times longer input, to show that memory does not grow with the length of the log.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import os
import shutil
import signal
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from timing import alternate, check, load, run, spread, ssdlab

from ssdlab.results import hist

DEBIAN_COPY = Path("/usr/share/doc/fio/fiologparser_hist.py.gz")


def kept_logs(workdir: Path, stamp: Path) -> list[Path] | None:
    """The four logs made before for these settings (`stamp` written after them), or None (any others removed)."""
    logs = sorted(workdir.glob("h_clat_hist.*.log"))
    if stamp.exists() and len(logs) == 4:
        return logs
    for old in logs:
        old.unlink()
    return None


def job_text(filename: str, size: str, seconds: int) -> str:
    """fio.md §8's reference job: 4 jobs of io_uring randrw 70/30, 4 KiB, QD8, 100-ms histogram logs."""
    return (f"[h]\nfilename={filename}\nsize={size}\nioengine=io_uring\ndirect=1\nrw=randrw\nrwmixread=70\n"
            f"bs=4k\niodepth=8\nnumjobs=4\nruntime={seconds}\ntime_based=1\nwrite_hist_log=h\nlog_hist_msec=100\n")


def generate(workdir: Path, seconds: int, file_size: str) -> list[Path]:
    """Run fio to produce h_clat_hist.{1..4}.log in workdir (reused when already there for these settings)."""
    stamp = workdir / f"generated-{seconds}s"
    logs = kept_logs(workdir, stamp)
    if logs is not None:
        return logs
    job = workdir / "gen.fio"
    job.write_text(job_text(str(workdir / "data.bin"), file_size, seconds))
    print(f"generating the reference input with fio ({seconds} s, 4 jobs, 100 ms histogram logs) ...", flush=True)
    subprocess.run(["fio", "--output", str(workdir / "fio.out"), str(job)], cwd=workdir, check=True)
    (workdir / "data.bin").unlink(missing_ok=True)
    stamp.write_text("ok\n")
    return sorted(workdir.glob("h_clat_hist.*.log"))


@contextlib.contextmanager
def loop_device(backing: Path, size: int) -> Iterator[str]:
    """A loop device over a `size`-byte file (made if missing), detached afterwards."""
    if not backing.exists() or backing.stat().st_size != size:
        with backing.open("wb") as fh:
            fh.truncate(size)
    dev = subprocess.run(["losetup", "--find", "--show", str(backing)], capture_output=True, text=True,
                         check=True).stdout.strip()
    try:
        yield dev
    finally:
        subprocess.run(["losetup", "-d", dev], capture_output=True, check=False)


def generate_real(workdir: Path, seconds: int) -> list[Path]:
    """h_clat_hist.{1..4}.log from io_uring on a loop device under a background writer (reused when there)."""
    real = workdir / "real"
    real.mkdir(parents=True, exist_ok=True)
    stamp = real / f"recorded-{seconds}s"
    logs = kept_logs(real, stamp)
    if logs is not None:
        return logs
    size = 2 << 30
    with loop_device(workdir / "loop.img", size) as dev:
        writer = subprocess.Popen(["fio", "--name=bg", f"--filename={dev}", "--rw=write", "--bs=128k", "--iodepth=4",
                                   "--ioengine=psync", f"--offset={size // 2}", f"--size={size // 2}",
                                   "--time_based=1", f"--runtime={seconds + 30}", "--output=/dev/null"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            job = real / "gen.fio"
            job.write_text(job_text(dev, str(size // 2), seconds))
            print(f"recording real logs: io_uring on {dev} under a background writer ({seconds} s) ...", flush=True)
            subprocess.run(["fio", "--output", str(real / "fio.out"), str(job)], cwd=real, check=True)
        finally:  # the writer's whole process group, then the writer itself, waited for before the detach
            with contextlib.suppress(ProcessLookupError):
                os.killpg(writer.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                writer.kill()
            try:
                writer.wait(timeout=60)
            except subprocess.TimeoutExpired:
                print(f"the background writer (pid {writer.pid}) did not stop: stop it before detaching {dev}")
    (workdir / "loop.img").unlink(missing_ok=True)
    stamp.write_text("ok\n")
    return sorted(real.glob("h_clat_hist.*.log"))


def find_baseline(given: str | None, workdir: Path) -> Path | None:
    """The baseline script: --baseline, a copy under /tmp, or Debian's compressed copy (decompressed)."""
    if given:
        path = Path(given)
        if not path.is_file():
            raise SystemExit(f"--baseline {given}: no such file")
        return path
    found = sorted(Path("/tmp").glob("*/fiologparser_hist.py"))  # one level: /tmp is shared with other users
    if found:
        return found[0]
    if DEBIAN_COPY.is_file():
        out = workdir / "fiologparser_hist.py"
        out.write_bytes(gzip.decompress(DEBIAN_COPY.read_bytes()))
        return out
    return None


def python_with_pandas(given: str | None) -> str | None:
    """An interpreter that can import numpy and pandas (the baseline's dependencies)."""
    candidates = [given] if given else [sys.executable, shutil.which("python3") or "", "/usr/bin/python3"]
    for exe in candidates:
        if exe and subprocess.run([exe, "-c", "import numpy, pandas"], capture_output=True).returncode == 0:
            return exe
    return None


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


PERCENTILE_COLUMNS = {4: 50.0, 5: 90.0, 6: 95.0, 7: 99.0}  # column (after end-time, samples) -> percentile


def compare(base: list[list[float]], ours: list[list[float]]) -> tuple[int, list[tuple[int, int, float, float]],
                                                                          float]:
    """(rows compared, the cells outside one bucket as (end-time, column, baseline, ssdlab), worst relative
    difference) over min..max columns."""
    if len(base) != len(ours):
        raise SystemExit(f"row counts differ: baseline {len(base)}, ssdlab {len(ours)}")
    bad: list[tuple[int, int, float, float]] = []
    worst = 0.0
    for b, o in zip(base, ours, strict=True):
        if b[0] != o[0] or b[1] != o[1]:
            raise SystemExit(f"row mismatch at end-time {b[0]}: baseline {b[:2]}, ssdlab {o[:2]}")
        for col, (x, y) in enumerate(zip(b[2:], o[2:], strict=True), start=2):
            worst = max(worst, abs(x - y) / max(abs(x), 1.0))
            if not within_one_bucket(x, y):
                bad.append((int(b[0]), col, x, y))
    return len(base), bad, worst


def ties(logs: list[Path], cells: list[tuple[int, int, float, float]]) -> set[tuple[int, int]]:
    """The differing percentile cells that are ties: the weighted CDF is flat at exactly that percentile
    (zero-weight bins) from one answer's bin to the other's, so every value between them is the percentile
    and which one a tool prints depends on float rounding in the last digit (seen on real logs: 50.00000000000002
    against 50)."""
    import numpy as np

    from ssdlab.fio import histlog

    wanted = {(t, c) for t, c, _, _ in cells if c in PERCENTILE_COLUMNS}
    out: set[tuple[int, int]] = set()
    if not wanted:
        return out
    by_time = {t for t, _ in wanted}
    for iv in histlog.iter_intervals(logs, 100, mode="weighted"):
        if iv.end_ms not in by_time:
            continue
        w = np.asarray(iv.counts, dtype=np.float64)
        values = histlog.baseline_bin_values(iv.coarseness)[0]
        cdf = 100.0 * (w.cumsum() - w / 2.0) / w.sum()
        for t, col, x, y in cells:
            if t != iv.end_ms or (t, col) not in wanted:
                continue
            i, j = sorted(int(np.searchsorted(values, v)) for v in (x, y))
            if j < values.size and np.all(np.abs(cdf[i:j + 1] - PERCENTILE_COLUMNS[col]) < 1e-9):
                out.add((t, col))
    return out


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
    ap.add_argument("--file-size", default="1g", help="fio file size (default 1g)")
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/ssdlab-histlog-bench"))
    ap.add_argument("--baseline", help="path of fiologparser_hist.py")
    ap.add_argument("--baseline-python", help="interpreter with numpy + pandas for the baseline")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of both commands (default 3)")
    ap.add_argument("--scale", type=int, default=0, help="also measure ssdlab on a K-times longer copy")
    ap.add_argument("--real", action="store_true", help="record the input on a loop device under a writer")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    logs = generate_real(args.workdir, args.seconds) if args.real else generate(args.workdir, args.seconds,
                                                                                    args.file_size)
    size_mb = sum(p.stat().st_size for p in logs) / 1e6
    lines = sum(p.read_bytes().count(b"\n") for p in logs)
    print(f"input ({'real: loop device under a writer' if args.real else 'generated'}): {len(logs)} files, "
          f"{lines} lines, {size_mb:.1f} MB")
    ours_argv = [str(ssdlab()), "hist-log", *map(str, logs), "--interval", "0.1", "--mode", "weighted",
                 "--percentiles", "90,95,99"]
    script = find_baseline(args.baseline, args.workdir)
    py = python_with_pandas(args.baseline_python)
    if script is None or py is None:
        print("baseline not run: " + ("fiologparser_hist.py not found (--baseline PATH)" if script is None
                                      else "no interpreter with numpy+pandas (--baseline-python PY)"))
        return 2
    base_argv = [py, str(script), "-i", "100", *map(str, logs)]
    print(f"{load()}; {args.rounds} rounds, order alternating")
    samples = alternate({"ssdlab": lambda: run(ours_argv, stdout=args.workdir / "ssdlab_weighted.csv"),
                         "baseline": lambda: run(base_argv, stdout=args.workdir / "baseline.csv")}, args.rounds)
    print(f"{load()} afterwards")
    ours, base = samples["ssdlab"], samples["baseline"]
    print(f"ssdlab hist-log --mode weighted: wall {spread([t.wall for t in ours])}; CPU "
          f"{spread([t.cpu for t in ours])}; peak RSS {max(t.rss_mb for t in ours):.0f} MB")
    print(f"fiologparser_hist.py (weighted): wall {spread([t.wall for t in base])}; CPU "
          f"{spread([t.cpu for t in base])}; peak RSS {max(t.rss_mb for t in base):.0f} MB")
    rows, cells, worst = compare(read_csv(args.workdir / "baseline.csv", False),
                                 read_csv(args.workdir / "ssdlab_weighted.csv", True))
    tied = ties(logs, cells)
    bad = len({t for t, col, _, _ in cells if (t, col) not in tied})
    print(f"agreement: {rows} rows, {bad} outside one fio bucket, worst relative difference {worst:.2e}"
          + (f"; {len(tied)} percentile cell(s) on a flat stretch of the CDF at exactly that percentile (a tie: "
             "both answers are the percentile), not counted" if tied else ""))
    ratio = statistics.median(t.wall for t in base) / statistics.median(t.wall for t in ours)
    cpu_ratio = statistics.median(t.cpu for t in base) / statistics.median(t.cpu for t in ours)
    verdict = "meets" if ratio >= 100 else "MISSES"
    print(f"speed ratio (medians, baseline / ssdlab): {ratio:.1f}x wall, {cpu_ratio:.1f}x CPU ({verdict} the "
          f"target >= 100x)")
    if args.scale > 1:
        long_logs = scaled_copy(logs, args.workdir, args.scale)
        long_mb = sum(p.stat().st_size for p in long_logs) / 1e6
        long = check("ssdlab hist-log", run([*ours_argv[:2], *map(str, long_logs), *ours_argv[2 + len(logs):]],
                                            stdout=args.workdir / "ssdlab_long.csv"))
        print(f"ssdlab on a {args.scale}x longer input ({long_mb:.0f} MB): {long.wall:.2f} s wall, "
              f"{long.rss_mb:.0f} MB peak RSS")
        for p in long_logs:
            p.unlink()
    return 1 if bad or ratio < 100 else 0


if __name__ == "__main__":
    raise SystemExit(main())
