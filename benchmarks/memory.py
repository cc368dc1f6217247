"""Peak memory against the number of points and of devices: does a run (and its report) grow with its size?

Every figure is the peak resident set size of the command users run, a fresh process measured from outside:
its own peak (VmHWM of /proc/PID/status, polled), not its children's. (os.wait4's ru_maxrss, which this script
printed before issue 34, is the largest of the process and the children it waited for: on local fio targets
that is fio, whose one process holds every job's I/O buffers with `thread=1`. The 182 MB of "24 file devices x
sweep-qd" was fio's: 24 devices x 16 jobs x QD 64 x 4 KiB buffers; ssdlab's own peak there is ~42 MB.)

- points: simulator runs of growing length (a suite file of N 4K/64K random read/write points at QD 1-128 on
  the default target, --runtime R), `ssdlab run --no-report` and then `ssdlab report` of the stored run;
- devices: a host group of D null devices on local agents (`ssdlab agent` processes, each on a Unix socket in a
  private directory, DEVICES_PER_HOST null devices each; stopped by their own pid and their fio server's
  process group) running the same P points,
  `ssdlab run --no-report` and `ssdlab report`;
- files: `sweep-qd` (63 points) on F file devices of one host at once (`--target file:...` repeated), its
  points at --runtime; ssdlab's own peak and, beside it, the largest process (fio) of the run;
- with --pts, the PTS family on the simulator (`ssdlab run pts --pts-tests all --runtime R` on the default
  target; a few minutes) against the goals of issue 27: at most 250 MB for the run, 300 MB for its report.

The growth per point and per device-point is a least-squares slope over the sizes measured (the base is what the
smallest run holds). Each size is run --repeats times; the median is printed with its spread (min-max). The host
is shared: RSS does not depend on load, but each simulator run's length (and so the time) does.

    .venv/bin/python benchmarks/memory.py [--points 64,256,1024] [--devices 1,8,32] [--device-points 8]
                                          [--runtime 0.1] [--repeats 1] [--pts] [--pts-runtime 0.5]
                                          [--files 1,8,24]

docs/scale.md's figures: the defaults, then `--points '' --devices 32 --device-points 96` (the same devices,
three times the points), `--points '' --devices 128 --runtime 0.5` (16 agents: 0.1-s points are too short for
them on 2 shared CPUs), then `--points '' --devices '' --pts`.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from timing import check, load, run, ssdlab, stop_agent, wait_for_agents

DEVICES_PER_HOST = 8
RUN_GOAL_MB, REPORT_GOAL_MB = 250.0, 300.0  # the PTS family on the simulator (issue 27)
FILES_GOAL_MB = 160.0  # 24 file devices x sweep-qd on one host (issue 34): ssdlab's own peak, flat in devices
RWS = ("randread", "randwrite")
BSS = ("4k", "64k")
DEPTHS = (1, 2, 4, 8, 16, 32, 64, 128)
PER_MATRIX = len(RWS) * len(BSS) * len(DEPTHS)


def suite_text(points: int, runtime: float) -> str:
    """A suite file of `points` points (whole matrices of PER_MATRIX points each)."""
    blocks = [f'name = "memory-{points}"\nsummary = "memory benchmark: {points} points"\nruntime_s = {runtime:g}\n']
    for i in range(max(1, points // PER_MATRIX)):
        blocks.append(f'[[matrix]]\nname = "m{i:03d}"\nrw = {list(RWS)!r}\nbs = {list(BSS)!r}\n'
                      f"iodepth = {list(DEPTHS)!r}\nnumjobs = [1]\n".replace("'", '"'))
    return "\n".join(blocks)


@contextlib.contextmanager
def agents(count: int, base: Path) -> Iterator[list[Path]]:
    """`count` agents (`ssdlab agent --socket`), their sockets yielded; always stopped: Ctrl-C, then their fio
    servers' process groups (by the pid each agent logs)."""
    started: list[tuple[subprocess.Popen[bytes], Path]] = []
    sockets: list[Path] = []
    try:
        for i in range(count):
            where = base / f"agent-{i}"
            log = base / f"agent-{i}.log"
            with log.open("wb") as fh:
                proc = subprocess.Popen([ssdlab(), "agent", "--socket", where / "agent.sock", "--interval", "2"],
                                        stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
            started.append((proc, log))
            sockets.append(where / "agent.sock")
        wait_for_agents(started)
        yield sockets
    finally:
        for proc, log in started:
            stop_agent(proc, log)


def inventory(sockets: Sequence[Path], devices: int) -> str:
    """Hosts of DEVICES_PER_HOST null devices each (the last one fewer), `devices` in all."""
    lines: list[str] = []
    left = devices
    for i, sock in enumerate(sockets):
        n = min(DEVICES_PER_HOST, left)
        if n <= 0:
            break
        left -= n
        targets = ", ".join(f'"null?size={64 + k}MiB"' for k in range(n))
        lines += ["[[host]]", f'name = "h{i:03d}"', f'socket = "{sock}"', f"targets = [{targets}]", ""]
    return "\n".join(lines)


def measure(argv_run: list[str | Path], out: Path, name: str) -> tuple[float, float, float]:
    """(run MB, report MB, run.json MB) of one stored run (removed afterwards)."""
    shutil.rmtree(out, ignore_errors=True)
    r = check(f"{name}: ssdlab run", run([*argv_run, "--out", out, "-q", "--no-report"], own=True))
    rep = check(f"{name}: ssdlab report", run([ssdlab(), "report", out], own=True))  # DIR/report.html
    size = (out / "run.json").stat().st_size / 1e6
    shutil.rmtree(out, ignore_errors=True)
    return r.own_mb, rep.own_mb, size, r.rss_mb


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs (0 with fewer than two distinct xs)."""
    if len(set(xs)) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def cell(values: Sequence[float]) -> str:
    med = statistics.median(values)
    return f"{med:7.1f} ({min(values):.1f}-{max(values):.1f})" if len(values) > 1 else f"{med:7.1f}"


Row = tuple[float, float, float, float]  # run MB, report MB, run.json MB, largest process of the run (fio) MB


def table(title: str, unit: str, rows: dict[int, list[Row]], per: int) -> None:
    """Print one table and the growth per `unit` (device-points: x times `per` points)."""
    print(f"\n{title}")
    print(f"{unit.split('-')[0] + 's':>10}  {'run MB':>18}  {'report MB':>18}  {'run.json MB':>12}  "
          f"{'largest process MB':>18}")
    for n, samples in rows.items():
        print(f"{n:>10}  {cell([s[0] for s in samples]):>18}  {cell([s[1] for s in samples]):>18}  "
              f"{statistics.median(s[2] for s in samples):>12.2f}  {cell([s[3] for s in samples]):>18}")
    xs = [n * per for n in rows]
    for i, what in ((0, "run"), (1, "report")):
        ys = [statistics.median(s[i] for s in rows[n]) for n in rows]
        print(f"growth per {unit} ({what}): {slope(xs, ys) * 1024:.2f} KB")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--points", default="64,256,1024",
                    help="simulator run lengths (rounded to whole matrices; '' to skip)")
    ap.add_argument("--devices", default="1,8,32", help="host-group sizes in null devices ('' to skip)")
    ap.add_argument("--device-points", type=int, default=PER_MATRIX,
                    help=f"points of each host-group run (whole matrices of {PER_MATRIX})")
    ap.add_argument("--runtime", type=float, default=0.1, help="seconds per point (default 0.1)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--pts", action="store_true", help="also the PTS family on the simulator (minutes)")
    ap.add_argument("--pts-runtime", type=float, default=0.5)
    ap.add_argument("--files", default="", help="file-device counts for sweep-qd on one host, e.g. 1,8,24")
    args = ap.parse_args()
    exe = ssdlab()
    print(f"peak RSS (the command's own process; its largest child beside it where it has one); {load()}")
    with tempfile.TemporaryDirectory(prefix="ssdlab-memory-") as tmp:
        base = Path(tmp)
        sizes = [max(PER_MATRIX, int(x) // PER_MATRIX * PER_MATRIX) for x in args.points.split(",") if x]
        rows: dict[int, list[Row]] = {}
        for _ in range(args.repeats):
            for n in sizes:
                suite = base / f"points-{n}.toml"
                suite.write_text(suite_text(n, args.runtime), encoding="utf-8")
                rows.setdefault(n, []).append(measure([exe, "run", suite], base / f"run-{n}", f"{n} points"))
        if rows:
            table(f"simulator (default target), --runtime {args.runtime:g}: peak RSS against points", "point",
                  rows, 1)
        devices = [int(x) for x in args.devices.split(",") if x]
        if devices:
            suite = base / "devices.toml"
            suite.write_text(suite_text(args.device_points, args.runtime), encoding="utf-8")
            points = max(1, args.device_points // PER_MATRIX) * PER_MATRIX
            hosts = -(-max(devices) // DEVICES_PER_HOST)
            drows: dict[int, list[Row]] = {}
            with agents(hosts, base) as sockets:
                for _ in range(args.repeats):
                    for d in devices:
                        inv = base / f"inv-{d}.toml"
                        inv.write_text(inventory(sockets, d), encoding="utf-8")
                        drows.setdefault(d, []).append(
                            measure([exe, "run", suite, "--hosts", inv], base / f"hosts-{d}", f"{d} devices"))
            table(f"host group of null devices on loopback agents ({DEVICES_PER_HOST} per host), {points} points "
                  f"of {args.runtime:g} s: peak RSS against devices", "device-point", drows, points)
        files = [int(x) for x in args.files.split(",") if x]
        if files:
            frows: dict[int, list[Row]] = {}
            for _ in range(args.repeats):
                for f in files:
                    targets = [a for i in range(f) for a in ("--target", f"file:{base}/f{i}.dat?size=64MiB")]
                    frows.setdefault(f, []).append(measure([exe, "run", "sweep-qd", *targets, "--runtime",
                                                            f"{args.runtime:g}"], base / f"files-{f}", f"{f} files"))
            table(f"sweep-qd (63 points of {args.runtime:g} s) on file devices of one host: peak RSS against devices",
                  "device-point", frows, 63)
            peak = max(statistics.median(s[0] for s in v) for v in frows.values())
            print(f"ssdlab's own peak: {peak:.1f} MB (goal <= {FILES_GOAL_MB:.0f} MB at 24 devices, flat in devices): "
                  f"{'meets' if peak <= FILES_GOAL_MB else 'MISSES'} it")
            if peak > FILES_GOAL_MB:
                return 1
        if args.pts:
            r, rep, size, _ = measure([exe, "run", "pts", "--pts-tests", "all", "--runtime", f"{args.pts_runtime:g}"],
                                   base / "pts", "pts")
            ok = r <= RUN_GOAL_MB and rep <= REPORT_GOAL_MB
            print(f"\npts --pts-tests all --runtime {args.pts_runtime:g} (default target): run {r:.1f} MB "
                  f"(goal <= {RUN_GOAL_MB:.0f}), report {rep:.1f} MB (goal <= {REPORT_GOAL_MB:.0f}), run.json "
                  f"{size:.1f} MB: {'meets' if ok else 'MISSES'} the goals")
            if not ok:
                return 1
    print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
