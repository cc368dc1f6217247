"""The simulator's native trace replay: a replay point's I/Os go through the model's core
(`_core.replay`, one call per second of virtual time so the drive's counters can be read between) and come back as
the same Measurement every point has: per-direction latency bins, per-second IOPS, bandwidth and latency
histograms (fio's histogram-log format), plus what only the model knows over time (write amplification, GC), and
the replay's record (trace/mapping.replay_record: expected against replayed I/Os, offered and achieved rates,
slowdown and how late I/Os were issued against the trace's timing).

Timing follows fio's replay (fio/replay.py): `depth` streams of queue depth 1 (I/O i on stream i mod depth),
each I/O issued at its arrival (timed) or at once (as fast as possible) once its stream's previous one is done.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ssdlab.errors import FioFailedError
from ssdlab.fio.logs import HIST_PREFIX
from ssdlab.results import atomic
from ssdlab.results.live import LiveCallback, LiveSample
from ssdlab.results.model import Measurement, PointResult, TestPoint
from ssdlab.results.sparsehist import PLAT_NR
from ssdlab.sim import core
from ssdlab.sim.executor import SimDrive, SimExecutor

if TYPE_CHECKING:
    import numpy as np

    from ssdlab.targets.base import Target
    from ssdlab.trace.mapping import ReplaySpec
    from ssdlab.trace.model import Trace

# numpy is imported inside the functions that replay a trace: a run without replay points (every run the
# simulator's executor starts, see target.executor) never loads it (about 0.1 CPU-s of each command)
STEP_NS = 1_000_000_000  # virtual time between calls into the core (counters read, live progress)
LIVE_EVERY_S = 0.5
_DIRS = ("read", "write", "trim")


class ReplayingExecutor(SimExecutor):
    """The simulator's executor, with trace-replay points run natively (everything else as SimExecutor)."""

    def run_point(self, point: TestPoint, target: Target, point_dir: Path, on_live: LiveCallback | None = None,
                  *, keep_position: bool = False) -> Measurement:
        if not point.tags.replay:
            return super().run_point(point, target, point_dir, on_live, keep_position=keep_position)
        sim = cast(SimDrive, target)
        return run_replay(point, sim, point_dir, on_live, lambda p: self.replay(p, sim))

    def replay(self, result: PointResult, target: SimDrive) -> None:
        if result.point.tags.replay:
            resimulate(result.point, target)
        else:
            super().replay(result, target)


class Arrays:
    """A replay's inputs and outputs for the core: arrival, offset, length, direction; issue and completion."""

    def __init__(self, trace: Trace, spec: ReplaySpec, span: int) -> None:
        import numpy as np

        from ssdlab.fio.replay import streams_of
        from ssdlab.trace.mapping import arrivals, place

        (share,) = place(trace, spec, [span], 1, "the simulated drive")
        rows = share.rows
        self.t = np.ascontiguousarray(arrivals(trace, rows, spec.speed), dtype=np.int64)
        self.off = np.ascontiguousarray(share.offset, dtype=np.int64)
        self.len = np.ascontiguousarray(trace.size[rows], dtype=np.int64)
        self.op = np.ascontiguousarray(trace.op[rows], dtype=np.uint8)
        n = int(rows.shape[0])
        self.issue = np.zeros(n, dtype=np.int64)
        self.done = np.zeros(n, dtype=np.int64)
        self.bucket = np.zeros(n, dtype=np.uint16)  # each I/O's latency bucket (fio's scheme), from the core
        self.streams = streams_of(spec, n)
        self.depth = 1
        self.slots = np.zeros(max(self.depth, 2 * self.streams), dtype=np.int64)
        self.state = np.zeros(12, dtype=np.int64)  # the core's: position, heap, times; min and max per direction
        self.acc = np.zeros(6, dtype=np.float64)  # the core's: latency sum and sum of squares per direction
        self.reads_only = not bool(np.any(self.op != 0))

    def step(self, dev: Any, until: int) -> bool:
        finished: bool = core().replay(dev, self.t, self.off, self.len, self.op, self.issue, self.done, self.bucket,
                                       self.slots, self.state, self.acc, self.streams, self.depth, until,
                                       self.reads_only)
        return finished


def _span(point: TestPoint, target: SimDrive) -> int:
    cap = target.capacity()
    return min(cap, int(point.workload.size)) if point.workload.size else cap


def _spec_trace(point: TestPoint) -> tuple[ReplaySpec, Trace]:
    from ssdlab.fio.replay import replay_spec
    from ssdlab.trace.mapping import load_trace

    spec = replay_spec(point)
    assert spec is not None
    return spec, load_trace(spec)


def resimulate(point: TestPoint, target: SimDrive) -> None:
    """Run a finished replay again for its effect on the drive only (restoring a resumed run's drive state)."""
    import numpy as np

    spec, trace = _spec_trace(point)
    arrays = Arrays(trace, spec, _span(point, target))
    dev = target.device()
    while not arrays.step(dev, np.iinfo(np.int64).max):
        pass


def run_replay(point: TestPoint, target: SimDrive, point_dir: Path, on_live: LiveCallback | None,
               session: Any) -> Measurement:
    """Replay `point`'s trace on the simulated drive; writes sim.json, cmd.txt and the histogram log."""
    from ssdlab.sim.executor import json_lines

    run_dir = point_dir.parent.parent
    point_dir.mkdir(parents=True, exist_ok=True)
    note = target.begin_session(run_dir, replay=session)
    target.checkpoint(run_dir)
    spec, trace = _spec_trace(point)
    arrays = Arrays(trace, spec, _span(point, target))
    dev = target.device()
    before = dev.counters()
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    try:
        intervals = _drive(dev, arrays, on_live)
    except (RuntimeError, ValueError) as exc:
        raise FioFailedError(f"the simulated drive failed on point {point.id}: {exc}") from exc
    wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
    after = dev.counters()
    more: dict[str, Any] = {"simulated_ios": len(arrays.t),
                            "simulated_ios_per_wall_s": round(len(arrays.t) / wall) if wall > 0 else None}
    if note:
        more["state"] = note
    m, doc = _measurement(point, target, spec, trace, arrays, (before, after, intervals), point_dir, more)
    doc.update({"wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "notes": [note] if note else []})
    atomic.write_text(point_dir / "sim.json", json_lines(doc), durable=False)
    atomic.write_text(point_dir / "cmd.txt", _command(point, target), durable=False)
    target.note_point(point.id)
    return m


def _drive(dev: Any, arrays: Arrays, on_live: LiveCallback | None) -> list[dict[str, int]]:
    """Every I/O through the core, a second of virtual time per call; the drive's counters after each second."""
    from ssdlab.results.live import LiveSample

    rows: list[dict[str, int]] = []
    until = 0
    last_wall = time.monotonic()
    while True:
        until += STEP_NS
        finished = arrays.step(dev, until)
        c = dev.counters()
        rows.append({k: int(c[k]) for k in ("host_write_slots", "nand_write_slots", "gc_runs", "erases")})
        if finished:
            return rows
        if on_live is not None and time.monotonic() - last_wall >= LIVE_EVERY_S:
            _live(on_live, arrays, until, LiveSample)
            last_wall = time.monotonic()


def _live(on_live: LiveCallback, arrays: Arrays, until: int, sample: type[LiveSample]) -> None:
    """The last second's rates from the I/Os it completed."""
    import numpy as np

    sel = (arrays.done > until - STEP_NS) & (arrays.done <= until) & (arrays.issue > 0)
    per = np.bincount(arrays.op[sel], minlength=3)
    b = np.bincount(arrays.op[sel], weights=arrays.len[sel], minlength=3)
    lat = (arrays.done[sel] - arrays.issue[sel])
    on_live(sample(elapsed_s=until / 1e9, read_iops=float(per[0]), write_iops=float(per[1] + per[2]),
                   read_mbps=float(b[0]) / 1e6, write_mbps=float(b[1] + b[2]) / 1e6,
                   mean_lat_us=float(lat.mean()) / 1000 if lat.size else 0.0,
                   bytes_done=float(arrays.len[arrays.done <= until].sum())))


class Stats:
    """What every figure of a replay is counted from, worked out once over the arrays: each I/O's latency, its
    latency bucket (fio's scheme), the second it completed in, its direction."""

    def __init__(self, arrays: Arrays) -> None:
        import numpy as np

        self.arrays = arrays
        self.lat = arrays.done - arrays.issue
        self.bucket = arrays.bucket.astype(np.int64)
        self.second = arrays.done // STEP_NS
        self.op = arrays.op.astype(np.int64)
        self.k_max = max(1, int(self.second.max()) + 1) if self.lat.size else 1

    def directions(self) -> list[tuple[int, int, float, float, int, int, bytes]]:
        """The core's per-direction tuple (n, bytes, sum, sum of squares, min, max, histogram bytes)."""
        import numpy as np

        a, op = self.arrays, self.op
        n = np.bincount(op, minlength=3)
        nbytes = np.bincount(op, weights=a.len, minlength=3)
        counts = np.bincount(op * PLAT_NR + self.bucket, minlength=3 * PLAT_NR).reshape(3, PLAT_NR)
        out = []
        for d in range(3):
            if not n[d]:
                out.append((0, 0, 0.0, 0.0, 0, 0, bytes(8 * PLAT_NR)))
                continue
            out.append((int(n[d]), int(nbytes[d]), float(a.acc[d]), float(a.acc[3 + d]), int(a.state[6 + d]),
                        int(a.state[9 + d]), counts[d].astype(np.int64).tobytes()))
        return out

    def interval_rows(self, k_max: int) -> list[tuple[float, ...]]:
        """Per second (by completion): I/Os, bytes and latency sums per direction (the core's interval rows)."""
        import numpy as np

        key = self.second * 3 + self.op
        size = k_max * 3
        cols = [np.bincount(key, weights=w, minlength=size)[:size].reshape(k_max, 3)
                for w in (None, self.arrays.len.astype(np.float64), self.lat.astype(np.float64))]
        mat = np.concatenate(cols, axis=1).astype(np.float64)
        rows: list[tuple[float, ...]] = [tuple(r) for r in mat.tolist()]
        return rows

    def hist_rows(self) -> list[tuple[int, int, np.ndarray]]:
        """(second, direction, 1856 bucket counts) of every second and direction with I/O."""
        import numpy as np

        key = (self.second * 3 + self.op) * PLAT_NR + self.bucket
        if self.k_max * 3 * PLAT_NR <= HIST_DENSE_MAX:  # counted in one pass
            dense = np.bincount(key, minlength=self.k_max * 3 * PLAT_NR).reshape(-1, PLAT_NR)
            return [(r // 3, r % 3, dense[r]) for r in np.flatnonzero(dense.any(axis=1)).tolist()]
        uniq, counts = np.unique(key, return_counts=True)  # a long replay: only the buckets that hold I/O
        row = uniq // PLAT_NR
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        ends = np.r_[starts[1:], row.shape[0]]
        out = []
        for lo, hi in zip(starts.tolist(), ends.tolist(), strict=True):
            dense_row = np.zeros(PLAT_NR, dtype=np.int64)
            dense_row[uniq[lo:hi] % PLAT_NR] = counts[lo:hi]
            out.append((int(row[lo]) // 3, int(row[lo]) % 3, dense_row))
        return out


HIST_DENSE_MAX = 8_000_000  # buckets counted at once for the histogram log (64 MB of counts)


def _hist_log(point_dir: Path, stats: Stats) -> list[str]:
    """fio's clat histogram log (`time_ms, ddir, bs, c0..c1855`, one row per second and direction with I/O) of the
    replay: the per-second percentiles `ssdlab latency` and the report read."""
    lines = [f"{(k + 1) * 1000}, {d}, 0, " + ", ".join(map(str, counts.tolist()))
             for k, d, counts in stats.hist_rows()]
    name = f"{HIST_PREFIX}_clat_hist.1.log"
    atomic.write_text(point_dir / name, "\n".join(lines) + ("\n" if lines else ""), durable=False)
    return [name]


def _measurement(point: TestPoint, target: SimDrive, spec: ReplaySpec, trace: Trace, arrays: Arrays,
                 counters: tuple[dict[str, Any], dict[str, Any], list[dict[str, int]]], point_dir: Path,
                 more: dict[str, Any]) -> tuple[Measurement, dict[str, Any]]:
    """The replay's Measurement (the executor's shape, plus the replay record and the model's series) and
    sim.json's document."""
    import numpy as np

    from ssdlab.sim.executor import SimWorkload, build_measurement, counter_delta, engine_version
    from ssdlab.trace.mapping import offered_per_interval, replay_record

    before, after, intervals = counters
    n = len(arrays.t)
    end = int(arrays.done.max()) if n else 0
    k_max = max(1, -(-end // STEP_NS))
    stats = Stats(arrays)
    result = {"t_meas_ns": 0, "t_end_ns": max(1, end), "dirs": stats.directions(),
              "series": stats.interval_rows(k_max)}
    present = tuple(d for i, d in enumerate(_DIRS) if np.any(arrays.op == i))
    sw = SimWorkload(core={"interval_ns": STEP_NS, "time_based": 0}, directions=present, notes=())
    delta = counter_delta(before, after)
    iu = int(target.values["iu"])
    host_bytes = delta["host_write_bytes"]
    delta["wa_total"] = (delta["nand_write_slots"] * iu / host_bytes) if host_bytes else None
    total_s = max(1e-9, end / 1e9)
    energy = float(after["energy_j"]) - float(before["energy_j"])
    summary = {"wa_total": delta["wa_total"], "wa_gc": delta["wa_gc"],
               "avg_power_w": round(float(target.values["idle_w"]) + energy / total_s, 3),
               "gc_runs": delta["gc_runs"], "rmw_reads": delta["rmw_reads"], **more}
    extra: dict[str, Any] = {"sim": summary, "hist_logs": _hist_log(point_dir, stats), "hist_log_ms": 1000}
    m = build_measurement(result, sw, 1, extra)
    lag = arrays.issue - arrays.t
    replayed = {d: (s.total_ios, s.io_bytes) for d, s in m.directions.items()}
    per_n = np.bincount(arrays.op, minlength=3)
    per_b = np.bincount(arrays.op, weights=arrays.len, minlength=3)
    counts = {d: [int(per_n[i]), int(per_b[i])] for i, d in enumerate(_DIRS)}
    rec = replay_record(spec, trace, [counts], replayed, end / 1e9)
    rec["streams"] = arrays.streams
    if spec.timed and n:
        q = np.percentile(lag, [50, 99], method="inverted_cdf")
        rec["lag_us"] = {"p50": float(q[0]) / 1000, "p99": float(q[1]) / 1000, "max": float(lag.max()) / 1000,
                         "late_share": float(np.mean(lag > 0))}
    series = dict(m.series)
    steps = series.get("time_s", [])
    if steps:
        series.update(_model_series(before, intervals, len(steps)))
        offered = offered_per_interval(trace, 1, spec.speed, 1000)
        if offered:
            series["offered_iops"] = [offered[i] if i < len(offered) else 0.0 for i in range(len(steps))]
    import dataclasses

    m = dataclasses.replace(m, series=series, extra=m.extra.replace(replay=rec))
    doc = {"model": "ssdlab simulated SSD", "note": "results come from a model, not a real drive",
           "engine_version": engine_version(), "target": target.spec, "params": target.values,
           "geometry": target.geometry(), "replay": rec,
           "point": {"id": point.id, "label": point.label, "phase": point.phase},
           "virtual_time_s": {"measured": end / 1e9}, "counters": delta, "counters_lifetime": after}
    return m, doc


def _model_series(before: dict[str, Any], intervals: list[dict[str, int]], steps: int) -> dict[str, list[float]]:
    """Write amplification (NAND over host writes) and GC runs in each second, from the drive's lifetime counters
    read after each second (work is counted when its I/O is issued: the model books NAND work then)."""
    cum = [{k: int(before[k]) for k in ("host_write_slots", "nand_write_slots", "gc_runs")}, *intervals]
    wa: list[float] = []
    gc: list[float] = []
    for i in range(steps):
        a = cum[min(i, len(cum) - 1)]
        b = cum[min(i + 1, len(cum) - 1)]
        host = b["host_write_slots"] - a["host_write_slots"]
        wa.append((b["nand_write_slots"] - a["nand_write_slots"]) / host if host else 0.0)
        gc.append(float(b["gc_runs"] - a["gc_runs"]))
    return {"wa": wa, "gc_runs": gc}


def _command(point: TestPoint, target: SimDrive) -> str:
    spec = point.tags.replay or {}
    return (f"# simulated by ssdlab's SSD model (no fio process ran): target {target.spec}\n"
            f"# trace replay: {spec.get('trace')} ({'as fast as possible' if spec.get('speed') is None else 'timed'}"
            f", depth {spec.get('depth')}, map {spec.get('map')})\n"
            f"# the same replay on a real drive: ssdlab run replay --trace {spec.get('trace')} --target /dev/DEVICE\n")
