"""Trace import and replay speed, three figures:

1. load rate: I/Os per CPU second (and per wall second) reading a trace of --ios I/Os in each format (generated
   here: random 4K-64K I/Os, 70 % reads; blkparse and blktrace with a completion per I/O), through
   ssdlab.trace.formats.load, formats alternating; target: a million-line trace in about a second.
2. the simulator's replay rate: simulated I/Os per CPU second replaying --ios 4K random I/Os (70/30) as fast as
   possible at depth 32 on tlc-4k at steady state (laid out, then written randomly for twice its capacity): the
   core's replay loop alone, the replay with its statistics and result (a synthetic point's figure counts its
   core loop and result: benchmarks/sim_speed.py; target >= 5 M per CPU second), and the whole point through the
   executor (its files, sim.json and the histogram log, too).
3. the fio replay's overhead: `ssdlab run replay --trace T --target null --speed max --depth 1` against fio
   itself replaying the same trace converted to an iolog (`ssdlab trace convert`) with the same engine and
   options, each a fresh process, alternating (benchmarks/timing.py): wall-clock and CPU medians and the ratio.

    .venv/bin/python benchmarks/trace.py [--ios 1000000] [--repeat 5] [--fio-ios 200000]

CPU time is the figure (the host is shared); wall-clock figures are printed with the host's load. Exit 1 when a
target is missed (load rate of a million lines above 2 s of CPU, simulator below 5 M per CPU second).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import struct
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import alternate, load, run, spread, ssdlab

SIM_TARGET = 5e6
LOAD_BUDGET_S = 2.0  # CPU seconds for a million-line trace ("about a second", with a shared host's margin)


def columns(n: int, seed: int = 1) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {"t_us": np.cumsum(rng.integers(1, 200, n)), "op": (rng.random(n) >= 0.7).astype(np.int64),
            "size": rng.choice([4096, 8192, 16384, 65536], n), "off": rng.integers(0, 1 << 26, n) * 4096,
            "lat_us": rng.integers(20, 2000, n)}


def write_formats(where: Path, n: int) -> dict[str, Path]:
    """The same I/Os in every format."""
    c = columns(n)
    t, op, size, off, lat = c["t_us"], c["op"], c["size"], c["off"], c["lat_us"]
    files: dict[str, Path] = {}

    def text(name: str, rows: list[str]) -> None:
        files[name] = where / name
        files[name].write_text("\n".join(rows) + "\n")

    rw = np.where(op == 0, "Read", "Write")
    text("msr.csv", [f"{128166372000000000 + 10 * a},hm,1,{b},{o},{s},{10 * la}"
                     for a, b, o, s, la in zip(t.tolist(), rw.tolist(), off.tolist(), size.tolist(), lat.tolist(),
                                               strict=True)])
    text("alibaba.csv", [f"7,{'R' if b == 0 else 'W'},{o},{s},{1577836800000000 + a}"
                         for a, b, o, s in zip(t.tolist(), op.tolist(), off.tolist(), size.tolist(), strict=True)])
    text("tencent.csv", [f"{1538352000 + a // 1000000},{o // 512},{s // 512},{b},1063"
                         for a, b, o, s in zip(t.tolist(), op.tolist(), off.tolist(), size.tolist(), strict=True)])
    text("iolog3.log", ["fio version 3 iolog", "0 /dev/x add"] + [
        f"{a} /dev/x {'read' if b == 0 else 'write'} {o} {s}"
        for a, b, o, s in zip(t.tolist(), op.tolist(), off.tolist(), size.tolist(), strict=True)])
    rows = []
    for i, (a, b, o, s, la) in enumerate(zip(t.tolist(), op.tolist(), off.tolist(), size.tolist(), lat.tolist(),
                                             strict=True)):
        d = "R" if b == 0 else "W"
        rows.append(f"  8,16   1 {2 * i + 1:8d} {a / 1e6:14.9f}  1234  Q   {d} {o // 512} + {s // 512} [fio]")
        rows.append(f"  8,16   0 {2 * i + 2:8d} {(a + la) / 1e6:14.9f}     0  C   {d} {o // 512} + {s // 512} [0]")
    text("blkparse.txt", rows)
    files["sample.blktrace.0"] = where / "sample.blktrace.0"
    with files["sample.blktrace.0"].open("wb") as fh:
        for a, b, o, s, la in zip(t.tolist(), op.tolist(), off.tolist(), size.tolist(), lat.tolist(), strict=True):
            d = 1 << 1 if b else 1 << 0
            dev = (8 << 20) | 16
            fh.write(struct.pack("<IIQQIIIIIHH", 0x65617407, 0, a * 1000, o // 512, s, 1 | ((1 << 4 | d) << 16),
                                 1, dev, 0, 0, 0))
            fh.write(struct.pack("<IIQQIIIIIHH", 0x65617407, 0, (a + la) * 1000, o // 512, s,
                                 8 | ((1 << 7 | d) << 16), 0, dev, 0, 0, 0))
    return files


def load_rates(files: dict[str, Path], n: int, repeat: int) -> bool:
    from ssdlab.trace.formats import load as load_trace

    cpu: dict[str, list[float]] = {k: [] for k in files}
    wall: dict[str, list[float]] = {k: [] for k in files}
    names = list(files)
    for r in range(repeat):
        for name in names[r % len(names):] + names[:r % len(names)]:  # alternate the order
            c0, w0 = time.process_time(), time.perf_counter()
            tr = load_trace(files[name])
            cpu[name].append(time.process_time() - c0)
            wall[name].append(time.perf_counter() - w0)
            assert len(tr) == n, (name, len(tr))
    ok = True
    for name in names:
        med = statistics.median(cpu[name])
        lines = n * (2 if name == "blkparse.txt" else 1)
        budget = LOAD_BUDGET_S * lines / 1e6
        ok &= med <= budget
        print(f"load {name:<18} {n:,} I/Os ({files[name].stat().st_size / 1e6:.0f} MB): CPU {spread(cpu[name])}, "
              f"wall {spread(wall[name])} = {n / med / 1e6:.2f} M I/Os per CPU second, "
              f"{n / statistics.median(wall[name]) / 1e6:.2f} M per wall second"
              + ("" if med <= budget else f"  ABOVE the {budget:g} s budget"))
    return ok


def sim_rate(n: int, repeat: int, where: Path) -> bool:
    """The simulator's replay of n 4K random I/Os (70/30, as fast as possible, depth 32) at steady state: the
    core's loop alone, the replay with its statistics and result (what a synthetic point's figure counts:
    benchmarks/sim_speed.py), and the whole point through the executor (its files included)."""
    from ssdlab.results.model import TestPoint, Workload
    from ssdlab.results.tags import PointTags
    from ssdlab.run.target import parse_target
    from ssdlab.sim import replay as sim_replay
    from ssdlab.sim.target import SimTarget
    from ssdlab.trace.formats import load as load_trace
    from ssdlab.trace.mapping import ReplaySpec

    rng = np.random.default_rng(3)
    target = parse_target("sim:tlc-4k")
    assert isinstance(target, SimTarget)
    user = target.capacity()
    trace_path = where / "sim.csv"
    ops = np.where(rng.random(n) < 0.7, "R", "W")
    offs = rng.integers(0, user // 4096, n) * 4096
    trace_path.write_text("".join(f"1,{o},{a},4096,{1577836800000000 + i}\n"
                                  for i, (o, a) in enumerate(zip(ops.tolist(), offs.tolist(), strict=True))))
    trace = load_trace(trace_path)
    spec = ReplaySpec(trace=str(trace_path), speed=None, depth=32)
    point = TestPoint(id="replay", label="r", workload=Workload(rw="randrw", bs=4096, log_interval_ms=1000),
                      tags=PointTags.of(replay=spec.to_tags()))
    run_dir = where / "run"
    target.prepare(True)
    warm = TestPoint(id="warm", label="w", workload=Workload(rw="randwrite", bs=4096, iodepth=32,
                                                             io_bytes=2 * user))
    ex = sim_replay.ReplayingExecutor()
    ex.run_point(warm, target, run_dir / "points" / "warm")  # steady state: GC at work (not timed)
    ex.run_point(point, target, run_dir / "points" / "first")  # the session's first point saves a checkpoint
    dev = target.device()
    rates: dict[str, list[float]] = {"core": [], "replay": [], "point": [], "synthetic": []}
    from ssdlab.sim.validate import Bench

    bench = Bench("tlc-4k")  # a synthetic point of the same shape, alternated: the host's speed of the moment
    bench.fill()
    bench.run(io_bytes=2 * bench.user)

    def synthetic() -> None:
        c0 = time.process_time()
        result, _ = bench.run(rmix=70, qd=32, io_bytes=n * 4096)
        rates["synthetic"].append(sum(d[0] for d in result["dirs"]) / (time.process_time() - c0))

    def core_only() -> None:
        arrays = sim_replay.Arrays(trace, spec, user)
        c0 = time.process_time()
        while not arrays.step(dev, np.iinfo(np.int64).max):
            pass
        rates["core"].append(n / (time.process_time() - c0))

    def replay(r: int) -> None:
        pdir = run_dir / "points" / f"stats{r}"
        pdir.mkdir(parents=True)
        c0 = time.process_time()
        arrays = sim_replay.Arrays(trace, spec, user)
        before = dev.counters()
        rows = sim_replay._drive(dev, arrays, None)
        sim_replay._measurement(point, target, spec, trace, arrays, (before, dev.counters(), rows), pdir, {})
        rates["replay"].append(n / (time.process_time() - c0))

    def whole(r: int) -> None:
        c0 = time.process_time()
        m = ex.run_point(point, target, run_dir / "points" / f"replay{r}")
        rates["point"].append(n / (time.process_time() - c0))
        print(f"sim replay {n:,} I/Os (4K 70/30, depth 32, tlc-4k steady state, WA {m.extra.sim['wa_total']:.2f}, "
              f"{m.extra.sim['gc_runs']:,} GC runs): core {rates['core'][-1] / 1e6:.2f}, replay "
              f"{rates['replay'][-1] / 1e6:.2f}, whole point {rates['point'][-1] / 1e6:.2f} M per CPU second")

    for r in range(repeat):  # the order alternates, so drift on a shared host hits each alike
        steps = [core_only, lambda k=r: replay(k), lambda k=r: whole(k), synthetic]
        for step in steps[r % 4:] + steps[:r % 4]:
            step()
    med = {k: statistics.median(v) for k, v in rates.items()}
    ratio = [a / b for a, b in zip(rates["replay"], rates["synthetic"], strict=True)]
    print(f"simulator replay, simulated I/Os per CPU second: core {spread([v / 1e6 for v in rates['core']], 'M', 2)}"
          f"; replay with its statistics {spread([v / 1e6 for v in rates['replay']], 'M', 2)} "
          f"({'meets' if med['replay'] >= SIM_TARGET else 'BELOW'} the {SIM_TARGET / 1e6:g} M target, as a synthetic "
          f"point's figure counts); whole point with its files {spread([v / 1e6 for v in rates['point']], 'M', 2)}")
    print(f"the same host's synthetic point (4K 70/30 QD32, alternated): "
          f"{spread([v / 1e6 for v in rates['synthetic']], 'M', 2)}; replay/synthetic {spread(ratio, '', 2)}")
    return med["replay"] >= SIM_TARGET


def fio_overhead(n: int, repeat: int, where: Path) -> None:
    rng = np.random.default_rng(4)
    trace = where / "fio.csv"
    ops = np.where(rng.random(n) < 0.7, "R", "W")
    offs = rng.integers(0, (1 << 30) // 4096, n) * 4096
    trace.write_text("".join(f"1,{o},{a},4096,{1577836800000000 + i}\n"
                             for i, (o, a) in enumerate(zip(ops.tolist(), offs.tolist(), strict=True))))
    exe = ssdlab()
    iolog = where / "fio.iolog"
    run([exe, "trace", "convert", trace, "--out", iolog, "--force"])
    fio = shutil.which("fio") or "fio"
    job = where / "plain.fio"
    job.write_text(f"[r]\nioengine=null\nsize={1 << 30}\nrw=randrw\nbs=4096\niodepth=1\nthread=1\n"
                   f"read_iolog={iolog}\nreplay_no_stall=1\n")
    k = [0]

    def ours() -> object:
        k[0] += 1
        return run([exe, "run", "replay", "--trace", trace, "--target", "null", "--speed", "max", "--depth", "1",
                    "--out", where / f"o{k[0]}", "--no-report", "-q"])

    sides = {"ssdlab run replay": ours, "fio --read_iolog": lambda: run([fio, "--output-format=json+", job])}
    got = alternate(sides, repeat)  # type: ignore[arg-type]
    a, b = got["ssdlab run replay"], got["fio --read_iolog"]
    for name, s in got.items():
        print(f"{name:<20} {n:,} I/Os: wall {spread([x.wall for x in s])}, CPU {spread([x.cpu for x in s])}")
    wa, wb = statistics.median(x.wall for x in a), statistics.median(x.wall for x in b)
    ca, cb = statistics.median(x.cpu for x in a), statistics.median(x.cpu for x in b)
    print(f"fio replay overhead: ssdlab {wa / wb:.2f}x fio's wall clock (+{wa - wb:.2f} s), {ca / cb:.2f}x its CPU "
          f"(+{ca - cb:.2f} s) for {n:,} I/Os (start-up, reading the trace, writing the iolog and fio's logs, "
          "parsing fio's output)")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--ios", type=int, default=1_000_000, help="I/Os per trace (load rate, simulator)")
    ap.add_argument("--fio-ios", type=int, default=200_000, help="I/Os of the fio replay comparison")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--skip", default="", help="comma-separated: load,sim,fio")
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    ok = True
    print(load())
    with tempfile.TemporaryDirectory(prefix="ssdlab-trace-bench-") as tmp:
        where = Path(tmp)
        if "load" not in skip:
            ok &= load_rates(write_formats(where, args.ios), args.ios, args.repeat)
        if "sim" not in skip:
            ok &= sim_rate(args.ios, args.repeat, where)
        if "fio" not in skip:
            fio_overhead(args.fio_ios, args.repeat, where)
    print(f"{load()} afterwards")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
