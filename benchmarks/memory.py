"""Peak memory against the number of points and of devices: does a run (and its report) grow with its size?

Every figure is the peak resident set size of the command users run, a fresh process measured from outside
(os.wait4's ru_maxrss: the process itself; fio runs in children and is not counted):

- points: simulator runs of growing length (a suite file of N 4K/64K random read/write points at QD 1-128 on
  the default target, --runtime R), `ssdlab run --no-report` and then `ssdlab report` of the stored run;
- devices: a host group of D null devices on local agents (`ssdlab agent` processes, each on a Unix socket in a
  private directory, DEVICES_PER_HOST null devices each; stopped by their own pid and their fio server's
  process group) running the same P points,
  `ssdlab run --no-report` and `ssdlab report`;
- with --pts, the PTS family on the simulator (`ssdlab run pts --pts-tests all --runtime R` on the default
  target; a few minutes) against the goals of issue 27: at most 250 MB for the run, 300 MB for its report.

The growth per point and per device-point is a least-squares slope over the sizes measured (the base is what the
smallest run holds). Each size is run --repeats times; the median is printed with its spread (min-max). The host
is shared: RSS does not depend on load, but each simulator run's length (and so the time) does.

    .venv/bin/python benchmarks/memory.py [--points 64,256,1024] [--devices 1,8,32] [--device-points 8]
                                          [--runtime 0.1] [--repeats 1] [--pts] [--pts-runtime 0.5]

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
    r = check(f"{name}: ssdlab run", run([*argv_run, "--out", out, "-q", "--no-report"]))
    rep = check(f"{name}: ssdlab report", run([ssdlab(), "report", out]))  # DIR/report.html
    size = (out / "run.json").stat().st_size / 1e6
    shutil.rmtree(out, ignore_errors=True)
    return r.rss_mb, rep.rss_mb, size


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs (0 with fewer than two distinct xs)."""
    if len(set(xs)) < 2:
        return 0.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)


def cell(values: Sequence[float]) -> str:
    med = statistics.median(values)
    return f"{med:7.1f} ({min(values):.1f}-{max(values):.1f})" if len(values) > 1 else f"{med:7.1f}"


def table(title: str, unit: str, rows: dict[int, list[tuple[float, float, float]]], per: int) -> None:
    """Print one table and the growth per `unit` (device-points: x times `per` points)."""
    print(f"\n{title}")
    print(f"{unit.split('-')[0] + 's':>10}  {'run MB':>18}  {'report MB':>18}  {'run.json MB':>12}")
    for n, samples in rows.items():
        print(f"{n:>10}  {cell([s[0] for s in samples]):>18}  {cell([s[1] for s in samples]):>18}  "
              f"{statistics.median(s[2] for s in samples):>12.2f}")
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
    args = ap.parse_args()
    exe = ssdlab()
    print(f"peak RSS (ru_maxrss of the command; fio children not counted); {load()}")
    with tempfile.TemporaryDirectory(prefix="ssdlab-memory-") as tmp:
        base = Path(tmp)
        sizes = [max(PER_MATRIX, int(x) // PER_MATRIX * PER_MATRIX) for x in args.points.split(",") if x]
        rows: dict[int, list[tuple[float, float, float]]] = {}
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
            drows: dict[int, list[tuple[float, float, float]]] = {}
            with agents(hosts, base) as sockets:
                for _ in range(args.repeats):
                    for d in devices:
                        inv = base / f"inv-{d}.toml"
                        inv.write_text(inventory(sockets, d), encoding="utf-8")
                        drows.setdefault(d, []).append(
                            measure([exe, "run", suite, "--hosts", inv], base / f"hosts-{d}", f"{d} devices"))
            table(f"host group of null devices on loopback agents ({DEVICES_PER_HOST} per host), {points} points "
                  f"of {args.runtime:g} s: peak RSS against devices", "device-point", drows, points)
        if args.pts:
            r, rep, size = measure([exe, "run", "pts", "--pts-tests", "all", "--runtime", f"{args.pts_runtime:g}"],
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
