"""SimExecutor: runs a TestPoint on the simulated drive and returns a fio-shaped Measurement.

The workload fields honoured are those the fio path honours (rw, bs/bssplit, iodepth, numjobs, rwmixread,
runtime_s/io_bytes, ramp_s, offset/size, rate_iops, log_interval_ms, zoned random_distribution and the
blockalign option). Latencies are binned in fio's
1856-bucket scheme so percentiles, steady-state checks and reports work unchanged.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
import zlib
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from ssdlab import __version__
from ssdlab.errors import FioFailedError, TargetError, UsageError
from ssdlab.fio.job import PERCENTILE_LIST, build_job
from ssdlab.fio.logs import HIST_PREFIX
from ssdlab.results import atomic, sparsehist
from ssdlab.results.bins import EMPTY, Bins
from ssdlab.results.live import LiveCallback, LiveSample, SampleCallback
from ssdlab.results.model import (
    DirectionStats,
    LatencyStats,
    Measurement,
    PointResult,
    TestPoint,
    Workload,
    percentile_key,
)
from ssdlab.sim import core
from ssdlab.targets.base import Target
from ssdlab.units import parse_size


class SimDrive(Protocol):
    """What the executor needs of the target it runs on (sim/target.py's SimTarget; the dependency is one-way: the
    target makes the executor and passes itself as this)."""

    spec: str
    values: dict[str, Any]

    def capacity(self) -> int: ...

    def device(self) -> Any: ...

    def geometry(self) -> dict[str, int]: ...

    def begin_session(self, run_dir: Path, replay: Callable[[PointResult], None] | None = None) -> str: ...

    def checkpoint(self, run_dir: Path, *, force: bool = False) -> bool: ...

    def note_point(self, point_id: str) -> None: ...

_RW: dict[str, str] = {  # rw -> kind (random or sequential is Workload.is_random)
    "read": "read", "randread": "read", "write": "write", "randwrite": "write",
    "rw": "mix", "readwrite": "mix", "randrw": "mix", "trim": "trim", "randtrim": "trim",
}
_DIRS = ("read", "write", "trim")
LIVE_EVERY_S = 0.5  # wall seconds between live samples


@dataclass(frozen=True)
class SimWorkload:
    """A Workload translated into the native core's terms (all byte/ns integers)."""

    core: dict[str, Any]
    directions: tuple[str, ...]
    notes: tuple[str, ...]


def parse_bssplit(text: str, writes_only: bool) -> list[tuple[int, int]]:
    """fio bssplit ('4k/50:64k/50', optionally 'reads,writes') -> [(bs, weight)] with weights summing to 10^6."""
    parts = text.split(",")
    chosen = parts[1] if writes_only and len(parts) > 1 and parts[1] else parts[0]
    entries: list[tuple[int, float | None]] = []
    for item in filter(None, chosen.split(":")):
        bs_text, _, pct = item.partition("/")
        try:
            entries.append((parse_size(bs_text), float(pct) if pct else None))
        except ValueError:
            raise UsageError(f"bad bssplit entry {item!r} in {text!r}") from None
    if not entries:
        raise UsageError(f"empty bssplit {text!r}")
    given = sum(p for _, p in entries if p is not None)
    open_n = sum(1 for _, p in entries if p is None)
    rest = max(0.0, 100.0 - given) / open_n if open_n else 0.0
    weights = [(bs, p if p is not None else rest) for bs, p in entries]
    total = sum(w for _, w in weights)
    if total <= 0:
        raise UsageError(f"bssplit {text!r} has no positive weight")
    return [(bs, max(0, round(w / total * 1_000_000))) for bs, w in weights if w > 0]


def parse_zoned(text: str) -> list[list[tuple[float, float]]]:
    """fio `zoned:A/R:A/R...` (optionally `reads,writes[,trims]` after the colon) -> per direction
    [(access %, range %)]; an empty range in the last zone means the rest of the range, as in fio."""
    body = text.strip()[len("zoned:"):]
    parts = body.split(",")
    out: list[list[tuple[float, float]]] = []
    for part in parts:
        zones: list[tuple[float, float]] = []
        items = [i for i in part.split(":") if i.strip()]
        for n, item in enumerate(items):
            acc_text, _, rng_text = item.partition("/")
            try:
                acc = float(acc_text)
                rng = float(rng_text) if rng_text.strip() else (100.0 - sum(r for _, r in zones)
                                                                if n == len(items) - 1 else -1.0)
            except ValueError:
                raise UsageError(f"bad zone {item!r} in random_distribution={text!r}") from None
            if acc < 0 or rng <= 0:
                raise UsageError(f"bad zone {item!r} in random_distribution={text!r}: use ACCESS%/RANGE%")
            zones.append((acc, rng))
        if zones and (sum(a for a, _ in zones) > 100.0 + 1e-9 or sum(r for _, r in zones) > 100.0 + 1e-9):
            raise UsageError(f"random_distribution={text!r}: access and range percentages must add up to at "
                             "most 100")
        out.append(zones)
    if not out or not out[0]:
        raise UsageError(f"random_distribution={text!r} names no zone")
    while len(out) < 3:  # fio: a direction without its own zones uses the previous one's
        out.append(out[-1])
    return out[:3]


def zone_table(zones: list[tuple[float, float]], start: int, length: int, align: int) -> list[tuple[int, int, int]]:
    """(weight out of 10^6, start byte, length bytes) per zone, zones laid out from `start` in order and aligned
    to `align` from it (fio's zoned layout); zones too small for one aligned start are dropped."""
    out = []
    pos = 0.0
    total_acc = sum(a for a, _ in zones) or 1.0
    for acc, rng in zones:
        lo = int(length * pos / 100.0) // align * align
        pos += rng
        hi = length if pos >= 100.0 - 1e-9 else int(length * pos / 100.0) // align * align
        if hi > lo and acc > 0:
            out.append((max(1, round(acc / total_acc * 1_000_000)), start + lo, hi - lo))
    return out


def _job_rate(text: str) -> int:
    """Per-job IOPS from fio's rate_iops ('N' or 'reads,writes[,trims]'): the sum of the directions."""
    try:
        return sum(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"bad rate_iops option {text!r}") from None


def _direction(w: Workload, kind: str) -> tuple[int, tuple[str, ...]]:
    """Percent of reads and the directions a point records."""
    if kind == "read":
        return 100, ("read",)
    if kind in ("write", "trim"):
        return 0, (kind,)
    rmix = 50 if w.rwmixread is None else int(w.rwmixread)
    return rmix, tuple(d for d, on in (("read", rmix > 0), ("write", rmix < 100)) if on)


def _block_sizes(w: Workload, kind: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]] | None]:
    """The block-size table, and the writes' own when a mixed point's bssplit gives `reads,writes`."""
    if not w.bssplit:
        return [(int(w.bs), 1)], None
    table = parse_bssplit(w.bssplit, writes_only=kind == "write")
    parts = w.bssplit.split(",")
    if kind == "mix" and len(parts) > 1 and parts[1].strip():
        return table, parse_bssplit(w.bssplit, writes_only=True)
    return table, None


def _distribution(w: Workload, notes: list[str]) -> list[list[tuple[float, float]]] | None:
    """Zones of a `zoned:` random_distribution; other distributions run as uniform (noted)."""
    dist = (w.random_distribution or "").strip()
    if dist.startswith("zoned:"):
        return parse_zoned(dist)
    if dist and dist not in ("random", "uniform"):
        notes.append(f"random_distribution={dist} is modelled as uniform")
    return None


def _pacing(w: Workload, notes: list[str]) -> tuple[int, bool]:
    """Per-job rate_iops (fio's engine option wins over the Workload field) and whether arrivals are Poisson;
    engine options the model does not honour are noted."""
    rate = int(w.rate_iops or 0)
    if "rate_iops" in w.options:
        rate = _job_rate(str(w.options["rate_iops"]))
    for key in sorted(set(w.options) - {"rate_iops", "rate_process", "blockalign", "ba"}):
        notes.append(f"engine option {key}={w.options[key]} is not modelled")
    return rate, str(w.options.get("rate_process", "linear")) == "poisson"


def _extent(w: Workload, capacity: int, sizes: list[tuple[int, int]]) -> tuple[int, int, int]:
    """(start, length, alignment) of the active range: fio's default blockalign is the smallest block size."""
    start = int(w.offset)
    if start >= capacity:
        raise UsageError(f"offset {start} is beyond the simulated drive's capacity {capacity}")
    length = capacity - start if w.size is None else min(int(w.size), capacity - start)
    if max(bs for bs, _ in sizes) > length:
        raise UsageError(f"block size larger than the active range ({length} bytes)")
    align = min(bs for bs, _ in sizes)
    align_text = w.options.get("blockalign", w.options.get("ba"))
    if align_text is not None:
        try:
            align = parse_size(str(align_text).split(",")[0])
        except ValueError:
            raise UsageError(f"bad blockalign option {align_text!r}") from None
        if align < 1 or align > length:
            raise UsageError(f"blockalign {align_text!r} does not fit the active range ({length} bytes)")
    return start, length, align


def translate(point: TestPoint, capacity: int, seed: int) -> SimWorkload:
    """Workload -> core workload dict (UsageError/TargetError for what the model cannot run)."""
    w: Workload = point.workload
    if w.rw not in _RW:
        raise TargetError(f"the simulated drive cannot run rw={w.rw!r} (supported: {', '.join(_RW)})")
    if w.iodepth < 1 or w.numjobs < 1:
        raise UsageError("iodepth and numjobs must be at least 1")
    kind = _RW[w.rw]
    notes: list[str] = []
    rmix, dirs = _direction(w, kind)
    bssplit, bssplit_w = _block_sizes(w, kind)
    zoned = _distribution(w, notes)
    rate, poisson = _pacing(w, notes)
    start, length, align = _extent(w, capacity, bssplit + (bssplit_w or []))
    time_based = w.runtime_s is not None
    core_wl: dict[str, Any] = {
        "rmix": rmix, "random": int(w.is_random), "trim": int(kind == "trim"),
        "range_start": start, "range_len": length, "align": align,
        "iodepth": int(w.iodepth), "numjobs": int(w.numjobs), "time_based": int(time_based),
        "ramp_ns": round(w.ramp_s * 1e9), "runtime_ns": round((w.runtime_s or 0.0) * 1e9),
        "io_bytes": 0 if time_based else int(w.io_bytes if w.io_bytes is not None else length),
        "rate_iops": rate, "poisson": int(poisson),
        "interval_ns": int(w.log_interval_ms or 0) * 1_000_000,
        "hist_ns": int(w.hist_log_ms or 0) * 1_000_000,
        "seed": (zlib.crc32(point.id.encode()) ^ (seed * 0x9E3779B1)) & 0xFFFFFFFFFFFF,
        "bssplit": bssplit,
    }
    if bssplit_w is not None:
        core_wl["bssplit_w"] = bssplit_w
    if zoned is not None and w.is_random:
        core_wl["zones"] = [zone_table(z, start, length, align) for z in zoned]
    return SimWorkload(core=core_wl, directions=dirs, notes=tuple(notes))


def core_bins(hbytes: bytes) -> Bins:
    """The non-empty buckets of one of the core's dense histograms (PLAT_NR int64 counts) as the model's Bins."""
    return Bins.from_bytes(core().sparse_bins(hbytes))


def _latency(kind: str, n: int, lat_sum: float, lat_sq: float, lo: int, hi: int, bins: Bins) -> LatencyStats:
    mean = lat_sum / n
    var = max(0.0, lat_sq / n - mean * mean)
    # bin midpoints clamped to the observed range (as LatencyStats.percentiles reads them)
    pcts = {percentile_key(p): float(min(max(v, lo), hi))
            for p, v in sparsehist.bins_percentiles(bins, list(PERCENTILE_LIST)).items()}
    return LatencyStats(kind=kind, n=n, min_ns=float(lo), max_ns=float(hi), mean_ns=mean,
                        stddev_ns=math.sqrt(var), percentiles_ns=pcts, bins=bins)


def build_measurement(result: dict[str, Any], sw: SimWorkload, numjobs: int, extra: dict[str, Any]) -> Measurement:
    """Measurement (fio's shape) from the core's finish() result."""
    runtime_ns = max(1, int(result["t_end_ns"]) - int(result["t_meas_ns"]))
    secs = runtime_ns / 1e9
    directions: dict[str, DirectionStats] = {}
    for name, (n, nbytes, lat_sum, lat_sq, lo, hi, hbytes) in zip(_DIRS, result["dirs"], strict=True):
        if n <= 0:
            continue
        clat = _latency("clat", int(n), lat_sum, lat_sq, lo, hi, core_bins(hbytes))
        # like fio's json+ lat_ns: summary statistics only (submission latency is zero in the model)
        lat = dataclasses.replace(clat, kind="lat", percentiles_ns={}, bins=EMPTY)
        directions[name] = DirectionStats(iops=n / secs, bw_bytes=nbytes / secs, io_bytes=int(nbytes),
                                          total_ios=int(n), runtime_ms=round(runtime_ns / 1e6),
                                          clat=clat, lat=lat)
    series: dict[str, list[float]] = {}
    interval_ns = int(sw.core["interval_ns"])
    rows = result["series"]
    if interval_ns and rows:
        whole = int(runtime_ns // interval_ns) if sw.core["time_based"] else len(rows)
        rows = rows[: max(1, min(len(rows), whole))]
        dt = interval_ns / 1e9
        series["time_s"] = [(k + 1) * dt for k in range(len(rows))]
        for i, name in enumerate(_DIRS):
            if name not in sw.directions:
                continue
            series[f"{name}_iops"] = [r[i] / dt for r in rows]
            series[f"{name}_bw_MBps"] = [r[3 + i] / dt / 1e6 for r in rows]
            series[f"{name}_lat_mean_us"] = [(r[6 + i] / r[i] / 1000.0) if r[i] else 0.0 for r in rows]
    return Measurement(engine="sim", engine_version=engine_version(), directions=directions, jobs=numjobs,
                       runtime_ms=round(runtime_ns / 1e6), series=series, extra=extra)


def engine_version() -> str:
    """Version string recorded as the engine version."""
    return f"ssdlab-sim {__version__}"


HL_RING = 64  # intervals the core's histogram-log ring holds (see _core.c)


def run_core(dev: Any, sw: SimWorkload, on_live: LiveCallback | None = None) -> dict[str, Any]:
    """Drive the native core through one point, reporting live rates every LIVE_EVERY_S wall seconds.

    With a histogram-log interval the result also holds `hist_rows`: [(interval, dir, counts bytes)].
    """
    c = sw.core
    dev.begin(c)
    step = max(10_000_000, (int(c["ramp_ns"]) + int(c["runtime_ns"])) // 40) if c["time_based"] else 100_000_000
    hist_ns = int(c["hist_ns"])
    if hist_ns:
        step = max(1, min(step, hist_ns * HL_RING // 2))
    rows: list[tuple[int, int, bytes]] = []
    until = 0
    last_wall = time.monotonic()
    last = dev.progress()
    while True:
        until += step
        finished = dev.advance(until)
        if hist_ns:
            rows += dev.hist_drain(max(0, (until - int(c["ramp_ns"])) // hist_ns))
        if finished:
            break
        if on_live is not None and time.monotonic() - last_wall >= LIVE_EVERY_S:
            now = dev.progress()
            dt = (now[0] - last[0]) / 1e9
            if dt > 0:
                ios = (now[1] - last[1]) + (now[2] - last[2])
                on_live(LiveSample(elapsed_s=now[0] / 1e9, read_iops=(now[1] - last[1]) / dt,
                                   write_iops=(now[2] - last[2]) / dt, read_mbps=(now[3] - last[3]) / dt / 1e6,
                                   write_mbps=(now[4] - last[4]) / dt / 1e6,
                                   mean_lat_us=(now[5] - last[5]) / ios / 1000.0 if ios else 0.0,
                                   bytes_done=now[3] + now[4]))
            last, last_wall = now, time.monotonic()
    result: dict[str, Any] = dev.finish()
    if hist_ns:
        span = int(result["t_end_ns"]) - int(result["t_meas_ns"])
        rows += dev.hist_drain(-(-span // hist_ns))
        result["hist_rows"] = rows
    return result


def write_hist_log(point_dir: Path, sw: SimWorkload, rows: list[tuple[int, int, bytes]], interval_ms: int) -> list[str]:
    """fio-format clat histogram log (`time_ms, ddir, bs, c0..c1855`, per-interval deltas); returns file names."""
    wanted = {_DIRS.index(d) for d in sw.directions}
    bs = int(sw.core["bssplit"][0][0]) if len(sw.core["bssplit"]) == 1 else 0
    lines = []
    for k, ddir, counts in rows:
        if ddir not in wanted:
            continue
        values = array("q")
        values.frombytes(counts)
        lines.append(f"{(k + 1) * interval_ms}, {ddir}, {bs}, " + ", ".join(map(str, values)))
    name = f"{HIST_PREFIX}_clat_hist.1.log"
    atomic.write_text(point_dir / name, "\n".join(lines) + ("\n" if lines else ""), durable=False)
    return [name]


def counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Counters accumulated during one point, with write amplification derived from them."""
    d: dict[str, Any] = {k: int(after[k]) - int(before[k]) for k in core().COUNTERS}
    host_slots = d["host_write_slots"]
    d["wa_gc"] = d["nand_write_slots"] / host_slots if host_slots else None
    return d


class SimExecutor:
    """Executor for `sim:` targets (same protocol as FioExecutor)."""

    name = "sim"
    series = True  # samples of a continuous stimulus run back to back (run_series)

    def version(self) -> str:
        """Engine version recorded in run.json."""
        return engine_version()

    def run_series(self, points: Sequence[TestPoint], target: Target, point_dir: Path,
                   on_live: LiveCallback | None, on_sample: SampleCallback) -> None:
        """Samples of one continuous stimulus, back to back (the model has no gap between points anyway);
        sequential writers go on from where the previous sample left them, as in one fio run."""
        here: Path | None = point_dir
        for i, point in enumerate(points):
            if here is None:
                return
            here = on_sample(self.run_point(point, target, here, on_live, keep_position=i > 0))

    def run_point(self, point: TestPoint, target: Target, point_dir: Path,
                  on_live: LiveCallback | None = None, *, keep_position: bool = False) -> Measurement:
        """Run one point on the model; write sim.json and cmd.txt; persist the drive state."""
        drive = cast(SimDrive, target)  # only a SimTarget makes a SimExecutor (SimTarget.executor)
        if point.streams:
            raise TargetError(f"point {point.id} runs {len(point.streams)} concurrent streams; the simulated "
                              "drive runs one workload per point: use a file or block device target")
        run_dir = point_dir.parent.parent
        point_dir.mkdir(parents=True, exist_ok=True)
        note = drive.begin_session(run_dir, replay=lambda p: self.replay(p, drive))
        drive.checkpoint(run_dir)  # the state up to the previous point, when one is due
        sw, dev, idle = _begin(point, drive, keep_position)
        before = dev.counters()
        wall0, cpu0 = time.perf_counter(), time.thread_time()
        try:
            result = run_core(dev, sw, on_live)
        except (RuntimeError, ValueError) as exc:  # the model could not run the point: fail it like fio would
            raise FioFailedError(f"the simulated drive failed on point {point.id}: {exc}") from exc
        wall, cpu = time.perf_counter() - wall0, time.thread_time() - cpu0
        after = dev.counters()
        delta = counter_delta(before, after)
        runtime_s = max(1e-9, (int(result["t_end_ns"]) - int(result["t_meas_ns"])) / 1e9)
        total_s = max(1e-9, int(result["t_end_ns"]) / 1e9)
        iu = int(drive.values["iu"])
        host_bytes = delta["host_write_bytes"]
        delta["wa_total"] = (delta["nand_write_slots"] * iu / host_bytes) if host_bytes else None
        energy = float(result["energy_j"])
        avg_power = float(drive.values["idle_w"]) + energy / total_s
        progress = dev.progress()  # every I/O of the point, ramp included
        all_ios = int(progress[1]) + int(progress[2])
        summary = {"wa_total": delta["wa_total"], "wa_gc": delta["wa_gc"], "avg_power_w": round(avg_power, 3),
                   "gc_runs": delta["gc_runs"], "rmw_reads": delta["rmw_reads"],
                   "simulated_ios": all_ios, "simulated_ios_per_wall_s": round(all_ios / wall) if wall > 0 else None}
        if note:
            summary["state"] = note
        if sw.notes:
            summary["notes"] = list(sw.notes)
        if keep_position:
            summary["keep_position"] = True  # replayed alike on resume
        if idle is not None:
            summary["idle"] = idle  # background GC during the host idle before the point
        extra: dict[str, Any] = {"sim": summary}
        if point.idle_before_s:
            extra["idle_s"] = point.idle_before_s  # virtual time: exactly as asked
        if point.workload.hist_log_ms:
            extra["hist_logs"] = write_hist_log(point_dir, sw, result.get("hist_rows", []),
                                                int(point.workload.hist_log_ms))
            extra["hist_log_ms"] = int(point.workload.hist_log_ms)
        m = build_measurement(result, sw, int(point.workload.numjobs), extra)
        doc = {
            "model": "ssdlab simulated SSD", "note": "results come from a model, not a real drive",
            "engine_version": engine_version(), "target": drive.spec, "params": drive.values,
            "geometry": drive.geometry(), "workload": sw.core | {"bssplit": [list(x) for x in sw.core["bssplit"]]},
            "point": {"id": point.id, "label": point.label, "phase": point.phase},
            "virtual_time_s": {"ramp": int(result["t_meas_ns"]) / 1e9, "measured": runtime_s, "total": total_s},
            "counters": delta, "counters_lifetime": after, "energy_j": energy, "avg_power_w": avg_power,
            "wall_s": round(wall, 4), "cpu_s": round(cpu, 4), "notes": list(sw.notes) + ([note] if note else []),
        }
        # not flushed to disk one by one: the model is deterministic, so both can be made again from run.json
        atomic.write_text(point_dir / "sim.json", json_lines(doc), durable=False)
        atomic.write_text(point_dir / "cmd.txt", command_text(point, drive.spec, drive.capacity()), durable=False)
        drive.note_point(point.id)
        return m

    def replay(self, result: PointResult, drive: SimDrive) -> None:
        """Simulate a finished point again for its effect on the drive only (restoring a resumed run's drive
        state): the host idle before it, and a continuous sample's sequential position, as it first ran."""
        sim = result.measurement.extra.get("sim", {}) if result.measurement is not None else {}
        sw, dev, _ = _begin(result.point, drive, isinstance(sim, dict) and bool(sim.get("keep_position")))
        run_core(dev, sw)


def _begin(point: TestPoint, drive: SimDrive, keep_position: bool) -> tuple[SimWorkload, Any, Any]:
    """A point's workload for the model and the drive to run it on, after the host idle before the point
    (what background GC did in it, None without idle): the same steps for a point and for its replay on
    resume, which restores the drive exactly only if it takes them alike."""
    sw = translate(point, drive.capacity(), int(drive.values["seed"]))
    if keep_position:
        sw.core["keep_pos"] = 1  # a continuous sample: sequential writers go on where the last one left them
    dev = drive.device()
    idle = dev.idle(round(point.idle_before_s * 1e9)) if point.idle_before_s > 0 else None
    return sw, dev, idle


def json_lines(doc: dict[str, Any]) -> str:
    """JSON with one top-level key per line, each value in one line: json's C encoder writes it (an indented
    document goes through its Python encoder, which cost more than the point on PTS's small points)."""
    enc = json.JSONEncoder(default=float, check_circular=False)  # (doc is a tree: no reference cycle to look for)
    return "{\n" + ",\n".join(f" {json.dumps(k)}: {enc.encode(v)}" for k, v in doc.items()) + "\n}\n"


def command_text(point: TestPoint, spec: str, capacity: int) -> str:
    """cmd.txt for a simulated point: what ran, and the equivalent fio job for a real drive."""
    job = build_job(point, {"filename": "/dev/DEVICE", "ioengine": "libaio", "direct": 1, "size": capacity})
    return (f"# simulated by ssdlab's SSD model (no fio process ran): target {spec}\n"
            "# the equivalent fio job for a real drive: save the lines below as job.fio, replace /dev/DEVICE,\n"
            "# and run `fio job.fio --output-format=json+`\n" + job.render())
