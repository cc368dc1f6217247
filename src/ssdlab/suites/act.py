"""Aerospike ACT-style storage certification (`act`) on fio.

ACT's storage model (aerospike/act, act_storage): per device three paced streams run at once, all
O_DIRECT: small random reads of the record size (rounded up to the device's minimum direct I/O size) from
QD1 service threads, 128 KiB random large-block reads (defrag) and 128 KiB random large-block writes
with O_DSYNC (write-buffer flushes + defrag). 1x = 2000 reads/s + 1000 writes/s per device; the large
block rates follow from ACT's derive_configuration (reproduced in `derive`, integer division included).

Each slice (default 1 h of a 24 h run) is one fio invocation with one reporting group per stream and
device, rate-limited, with histogram logs. Per slice and stream ssdlab reports the % of I/Os at or above
1, 2, 4, 8, 16, 32, 64 ms (ACT's act_latency.py columns), then avg and max rows over the slices; the run
passes when the worst slice of reads has < 5 % >= 1 ms, < 1 % >= 8 ms and < 0.1 % >= 64 ms.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab import store
from ssdlab.errors import UsageError
from ssdlab.fio import hist
from ssdlab.model import PointResult, Run, TestPoint, Workload, measurement_from_dict
from ssdlab.suites.base import PlanContext, Suite, SuiteOption, register

READS_PER_DEVICE_1X = 2000
WRITES_PER_DEVICE_1X = 1000
THRESHOLDS_MS = (1, 2, 4, 8, 16, 32, 64)
CRITERIA = ((1, 5.0), (8, 1.0), (64, 0.1))  # reads: % at or above t ms must stay below the limit
PER_THREAD_OPS = 500  # a QD1 service thread is given 2 ms per op, twice the 1 ms criterion
MAX_STREAM_JOBS = 64  # beyond this many service threads, jobs get a queue depth instead (async engine)
PREP_QD = 8  # act_prep writes with 8 threads

S_READS = "reads"
S_LB_READS = "large-block-reads"
S_LB_WRITES = "large-block-writes"
S_COMMITS = "commits"
STREAM_DIRECTION = {S_READS: "read", S_LB_READS: "read", S_LB_WRITES: "write", S_COMMITS: "write"}
STREAM_LABEL = {S_READS: "reads", S_LB_READS: "large-block reads", S_LB_WRITES: "large-block writes",
                S_COMMITS: "commit writes"}

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_LOAD_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x?\s*$", re.IGNORECASE)


def parse_duration(text: str | float | int, what: str) -> int:
    """'24h', '90m', '30s', '6' (seconds) -> whole seconds."""
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        m = _DURATION_RE.match(text)
        if not m:
            raise UsageError(f"bad --{what} {text!r}: use seconds or a unit, e.g. 24h, 90m, 30s, 6")
        seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2).lower()]
    if seconds < 1 or seconds != int(seconds):
        raise UsageError(f"--{what} {text} must be a whole number of seconds, at least 1")
    return int(seconds)


def parse_load(text: str | float) -> float:
    """'300x' or '300' -> 300.0 (ACT's load multiplier)."""
    m = _LOAD_RE.match(str(text))
    if not m or float(m.group(1)) <= 0:
        raise UsageError(f"bad --load {text!r}: use a positive multiplier such as 1x, 30x, 300x")
    return float(m.group(1))


@dataclass(frozen=True)
class ActConfig:
    """ACT's storage options (config-file keys in parentheses are ACT's names)."""

    load: float = 1.0
    devices: int = 1
    record_bytes: int = 1536  # record-bytes
    large_block_bytes: int = 128 * 1024  # large-block-op-kbytes
    replication_factor: int = 1
    update_pct: int = 0
    defrag_lwm_pct: int = 50
    compress_pct: int = 100
    no_defrag_reads: bool = False
    commit_to_device: bool = False

    def validate(self) -> None:
        """ACT's own configuration checks, as usage errors."""
        lb_kib = self.large_block_bytes // 1024
        if self.large_block_bytes % 1024 or lb_kib < 1 or lb_kib > 8192 or lb_kib & (lb_kib - 1):
            raise UsageError(f"--large-block-kib {self.large_block_bytes / 1024:g} must be a power of 2, at most 8192")
        if not 1 <= self.record_bytes <= 8 * 1024 * 1024:
            raise UsageError(f"--record-bytes {self.record_bytes} must be between 1 and 8 MiB")
        if round_up(self.record_bytes, 16) > self.large_block_bytes:
            raise UsageError(f"--record-bytes {self.record_bytes} does not fit in a {lb_kib} KiB large block")
        if not 0 <= self.defrag_lwm_pct < 100:
            raise UsageError(f"--defrag-lwm-pct {self.defrag_lwm_pct} must be 0..99")
        if not 0 <= self.compress_pct <= 100:
            raise UsageError(f"--compress-pct {self.compress_pct} must be 0..100")
        if self.replication_factor < 1:
            raise UsageError(f"--replication-factor {self.replication_factor} must be at least 1")
        if self.update_pct < 0:
            raise UsageError(f"--update-pct {self.update_pct} must not be negative")
        if self.devices < 1:
            raise UsageError("ACT needs at least one device")


def round_up(value: int, unit: int) -> int:
    """`value` rounded up to a multiple of `unit`."""
    return -(-value // unit) * unit


@dataclass(frozen=True)
class Derived:
    """Rates ACT derives from its configuration; totals over all devices (per_device() divides them)."""

    read_reqs_per_s: int  # read-reqs-per-sec (config total)
    write_reqs_per_s: int  # write-reqs-per-sec (config total)
    reads_per_s: int  # internal read rate: client reads + update reads
    internal_writes_per_s: int  # replication x writes
    stored_record_bytes: int
    records_per_large_block: int
    large_block_reads_per_s: float
    large_block_writes_per_s: float
    commit_writes_per_s: int  # commit-to-device: records written one at a time
    devices: int

    def per_device(self, total: float) -> float:
        """ACT splits every rate evenly over the devices."""
        return total / self.devices

    def as_dict(self) -> dict[str, Any]:
        """JSON form: totals plus the per-device share of each stream."""
        d = dataclasses.asdict(self)
        d["per_device"] = {
            "reads_per_s": self.per_device(self.reads_per_s),
            "large_block_reads_per_s": self.per_device(self.large_block_reads_per_s),
            "large_block_writes_per_s": self.per_device(self.large_block_writes_per_s),
            "commit_writes_per_s": self.per_device(self.commit_writes_per_s),
        }
        return d


def derive(cfg: ActConfig) -> Derived:
    """ACT's derive_configuration: internal rates, records per large block (integer division), defrag WA."""
    cfg.validate()
    read_reqs = round(READS_PER_DEVICE_1X * cfg.load * cfg.devices)
    write_reqs = round(WRITES_PER_DEVICE_1X * cfg.load * cfg.devices)
    if read_reqs == 0 and write_reqs == 0:
        raise UsageError("--load is too small: the read and write rates would both be 0")
    internal_read = read_reqs + (write_reqs * cfg.update_pct) // 100
    internal_write = cfg.replication_factor * write_reqs
    stored = round_up(cfg.record_bytes, 16)
    avg_stored = (stored + stored) // 2  # ACT averages the record size range; ssdlab has no range option
    per_block = cfg.large_block_bytes // avg_stored
    original_lb_writes = internal_write / per_block
    amplification = 100.0 / (100 - cfg.defrag_lwm_pct)
    lb_reads = 0.0 if cfg.no_defrag_reads else original_lb_writes * amplification
    if cfg.commit_to_device:
        lb_writes = original_lb_writes * (amplification - 1.0)
        commits = internal_write
    else:
        lb_writes = original_lb_writes * amplification
        commits = 0
    return Derived(read_reqs_per_s=read_reqs, write_reqs_per_s=write_reqs, reads_per_s=internal_read,
                   internal_writes_per_s=internal_write, stored_record_bytes=stored,
                   records_per_large_block=per_block, large_block_reads_per_s=lb_reads,
                   large_block_writes_per_s=lb_writes, commit_writes_per_s=commits, devices=cfg.devices)


def config_from(ctx: PlanContext, load: float | None = None) -> ActConfig:
    """ActConfig from the suite options in `ctx` (load overridden for --find-max steps)."""
    o = ctx.options
    return ActConfig(
        load=load if load is not None else parse_load(o.get("load") or "1x"), devices=max(1, ctx.devices),
        record_bytes=int(o.get("record_bytes") or 1536),
        large_block_bytes=int(o.get("large_block_kib") or 128) * 1024,
        replication_factor=int(o.get("replication_factor") or 1), update_pct=int(o.get("update_pct") or 0),
        defrag_lwm_pct=int(50 if o.get("defrag_lwm_pct") is None else o["defrag_lwm_pct"]),
        compress_pct=int(100 if o.get("compress_pct") is None else o["compress_pct"]),
        no_defrag_reads=bool(o.get("no_defrag_reads")), commit_to_device=bool(o.get("commit_to_device")),
    )


@dataclass(frozen=True)
class StreamPlan:
    """How one stream is issued on one device: fio jobs, queue depth, size and per-job rate."""

    name: str
    rw: str
    bs: int
    ops_per_s: float  # per device
    jobs: int
    iodepth: int = 1

    @property
    def bytes_per_s_per_job(self) -> int:
        """fio `rate` of each job, in bytes/s (rate_iops is an integer and cannot say 23.53/s)."""
        return max(1, round(self.ops_per_s * self.bs / self.jobs))


def read_size(cfg: ActConfig, min_op: int) -> int:
    """Small-read size: the stored record size rounded up to the device's minimum direct I/O size."""
    return round_up(round_up(cfg.record_bytes, 16), max(1, min_op))


def service_jobs(ops_per_s: float, threads: int | None) -> tuple[int, int]:
    """(fio jobs, queue depth per job) so QD1 threads never limit `ops_per_s` (or the user's thread count)."""
    wanted = threads if threads else max(1, math.ceil(ops_per_s / PER_THREAD_OPS))
    if wanted <= MAX_STREAM_JOBS:
        return wanted, 1
    return MAX_STREAM_JOBS, math.ceil(wanted / MAX_STREAM_JOBS)


def stream_plans(cfg: ActConfig, derived: Derived, min_op: int, threads: int | None) -> list[StreamPlan]:
    """The paced streams of one device."""
    plans = []
    bs = read_size(cfg, min_op)
    reads = derived.per_device(derived.reads_per_s)
    if reads > 0:
        jobs, qd = service_jobs(reads, threads)
        plans.append(StreamPlan(S_READS, "randread", bs, reads, jobs, qd))
    lb = cfg.large_block_bytes
    # ACT uses one large-block thread per device; ssdlab adds QD1 threads only when one could not
    # sustain the rate (from ~PER_THREAD_OPS/s, i.e. high loads), so the generator never limits it
    for name, rw, rate in ((S_LB_READS, "randread", derived.large_block_reads_per_s),
                           (S_LB_WRITES, "randwrite", derived.large_block_writes_per_s)):
        if rate > 0:
            per_dev = derived.per_device(rate)
            jobs, qd = service_jobs(per_dev, None)
            plans.append(StreamPlan(name, rw, lb, per_dev, jobs, qd))
    if derived.commit_writes_per_s > 0:
        commits = derived.per_device(derived.commit_writes_per_s)
        jobs, qd = service_jobs(commits, threads)
        plans.append(StreamPlan(S_COMMITS, "randwrite", bs, commits, jobs, qd))
    return plans


def _write_buffer_options(cfg: ActConfig) -> dict[str, str]:
    # ACT fills each 512 B interval with (100 - compress-pct)% zeros and refills the buffer for every write
    return {"buffer_compress_percentage": str(100 - cfg.compress_pct), "buffer_compress_chunk": "512",
            "refill_buffers": "1", "sync": "dsync"}


def stream_workload(sp: StreamPlan, cfg: ActConfig, min_op: int, seconds: int, hist_ms: int,
                    keep_engine: bool = False) -> Workload:
    """fio workload of one stream: synchronous (psync, QD1 per job) unless the job count had to be capped.

    `keep_engine` leaves the target's engine alone (fio's null engine: no device, nothing to open).
    """
    options: dict[str, str] = {"rate": str(sp.bytes_per_s_per_job),
                               "blockalign": str(min_op if sp.bs < cfg.large_block_bytes else sp.bs)}
    if not keep_engine:
        options["ioengine"] = "psync" if sp.iodepth == 1 else "libaio"
    if sp.rw == "randwrite":
        options.update(_write_buffer_options(cfg))
    return Workload(rw=sp.rw, bs=sp.bs, iodepth=sp.iodepth, numjobs=sp.jobs, runtime_s=float(seconds),
                    options=options, hist_log_ms=hist_ms)


def hist_interval_ms(slice_s: int) -> int:
    """Histogram-log interval: 100 ms for short slices, 1 s from 20 s, 10 s from 20 min."""
    if slice_s >= 1200:
        return 10000
    return 1000 if slice_s >= 20 else 100


def load_label(load: float) -> str:
    """'30x', '1.5x'."""
    return f"{load:g}x"


def point_id(load: float, slice_no: int) -> str:
    """Point id of one slice of one load level, e.g. 'act-30x-s001'."""
    return f"act-{load:g}x-s{slice_no:03d}".replace(".", "_")


@dataclass(frozen=True)
class StreamSlice:
    """One stream over one slice, merged over devices and jobs."""

    stream: str
    ops: int
    target_per_s: float  # all devices
    seconds: float
    counts: hist.Counts
    max_ns: float

    @property
    def achieved_per_s(self) -> float:
        """I/Os per second completed over the slice, all devices."""
        return self.ops / self.seconds if self.seconds > 0 else 0.0

    @property
    def lag_s(self) -> float:
        """How far the stream fell behind its fixed schedule by the end of the slice (ACT's lag)."""
        if self.target_per_s <= 0:
            return 0.0
        return max(0.0, (self.target_per_s * self.seconds - self.ops) / self.target_per_s)

    def exceedance(self) -> dict[int, float]:
        """% of I/Os at or above each ACT threshold (ms)."""
        pct = hist.exceedance(self.counts, [t * 1_000_000 for t in THRESHOLDS_MS])
        return {t: pct[t * 1_000_000] for t in THRESHOLDS_MS}


def slice_streams(result: PointResult) -> dict[str, StreamSlice]:
    """Per-stream figures of one slice point (from the per-stream results the executor stored)."""
    m = result.measurement
    if m is None:
        return {}
    raw: Mapping[str, Any] = m.extra.get("streams") or {}
    targets: Mapping[str, float] = result.point.tags.get("target_per_s") or {}
    seconds = float(result.point.workload.runtime_s or 0.0)
    merged: dict[str, tuple[int, hist.Counts, float]] = {}
    for section, data in raw.items():
        stream = re.sub(r"-d\d+$", "", section)
        sm = measurement_from_dict(data)
        ds = sm.get(STREAM_DIRECTION.get(stream, "read"))
        if ds is None:
            continue
        counts = hist.counts_from_sparse(ds.clat.bins) if ds.clat else hist.merge()
        ops, acc, mx = merged.get(stream, (0, hist.merge(), 0.0))
        merged[stream] = (ops + ds.total_ios, acc + counts, max(mx, ds.clat.max_ns if ds.clat else 0.0))
    out = {}
    for stream, target in targets.items():
        ops, counts, mx = merged.get(stream, (0, hist.merge(), 0.0))
        out[stream] = StreamSlice(stream, ops, float(target), seconds, counts, mx)
    return out


@dataclass(frozen=True)
class LevelResult:
    """One load level: its slices, the avg/max exceedance rows per stream, keep-up and verdict."""

    load: float
    slices: list[dict[str, StreamSlice]]
    complete: bool
    lagging: str  # why the run stopped ("" when every stream kept up)
    passed: bool
    worst: dict[int, float]  # reads: max over slices, per threshold

    def rows(self, stream: str) -> tuple[list[float], list[float]]:
        """(avg, max) over slices of % at or above each threshold."""
        per = [s[stream].exceedance() for s in self.slices if stream in s]
        if not per:
            return [0.0] * len(THRESHOLDS_MS), [0.0] * len(THRESHOLDS_MS)
        avg = [sum(p[t] for p in per) / len(per) for t in THRESHOLDS_MS]
        mx = [max(p[t] for p in per) for t in THRESHOLDS_MS]
        return avg, mx


def max_lag_s(ctx: PlanContext, slice_s: int) -> float:
    """ACT's max-lag-sec (default 10 s), capped at a quarter of the slice so short runs can trip it."""
    return min(float(ctx.options.get("max_lag") or 10), slice_s / 4.0)


def judge(worst: Mapping[int, float]) -> bool:
    """ACT's criteria on the worst slice of reads: < 5 % >= 1 ms, < 1 % >= 8 ms, < 0.1 % >= 64 ms."""
    return all(worst.get(t, 0.0) < limit for t, limit in CRITERIA)


class ActSuite(Suite):
    name = "act"
    summary = "Aerospike ACT-style certification: paced reads + large-block reads/writes, pass/fail per slice"
    writes = True
    default_runtime_s = 3600.0
    point_overhead_s = 1.0
    multi_target = True

    def suite_options(self) -> list[SuiteOption]:
        return [
            SuiteOption("load", "str", "1x", "ACT load multiplier (1x = 2000 reads/s + 1000 writes/s per device)"),
            SuiteOption("record-bytes", "int", 1536, "ACT record size in bytes (default 1536)"),
            SuiteOption("large-block-kib", "int", 128, "ACT large-block size in KiB (default 128)"),
            SuiteOption("replication-factor", "int", 1, "ACT replication factor (multiplies the write load)"),
            SuiteOption("update-pct", "int", 0, "ACT update-pct: % of writes that also read the record"),
            SuiteOption("defrag-lwm-pct", "int", 50, "ACT defrag low-water mark; write amplification "
                        "100/(100-lwm)"),
            SuiteOption("compress-pct", "int", 100, "ACT compress-pct: random share of written data (100: "
                        "incompressible)"),
            SuiteOption("no-defrag-reads", "flag", False, "ACT no-defrag-reads: no large-block reads"),
            SuiteOption("commit-to-device", "flag", False, "ACT commit-to-device: records are also written "
                        "one at a time"),
            SuiteOption("duration", "str", "24h", "ACT test duration (24h for a certificate; e.g. 6h, 90m, 60)"),
            SuiteOption("slice", "str", "1h", "analysis slice; pass/fail is judged on the worst slice"),
            SuiteOption("find-max", "flag", False, "step the load (N, 2N, 3N, ...) until a level fails; "
                        "report the highest passing multiplier"),
            SuiteOption("max-load", "str", None, "--find-max: highest load to try (default 10 x --load)"),
            SuiteOption("service-threads", "int", None, "small-read threads per device (default: enough "
                        "QD1 threads that the generator never limits the rate)"),
            SuiteOption("max-lag", "int", 10, "ACT max-lag-sec: stop when a stream falls this far behind"),
            SuiteOption("skip-prep", "flag", False, "skip the act_prep fills (only for a device already "
                        "prepared by an earlier act run)"),
        ]

    # ---------------------------------------------------------------- plan

    def _check(self, ctx: PlanContext) -> None:
        if ctx.target_kind == "sim":
            raise UsageError("act needs fio's paced concurrent streams, which the simulated SSD does not model: "
                             "use a file or block device target")

    def times(self, ctx: PlanContext) -> tuple[int, int]:
        """(duration, slice) in seconds; the duration must be a whole number of slices."""
        duration = parse_duration(ctx.options.get("duration") or "24h", "duration")
        slice_s = parse_duration(ctx.options.get("slice") or "1h", "slice")
        if slice_s > duration:
            slice_s = duration
        if duration % slice_s:
            raise UsageError(f"--duration {duration} s is not a whole number of --slice {slice_s} s slices "
                             "(ACT drops an incomplete final slice; choose a multiple)")
        return duration, slice_s

    def loads(self, ctx: PlanContext) -> list[float]:
        """The load levels in order: one, or N, 2N, ... up to --max-load with --find-max."""
        first = parse_load(ctx.options.get("load") or "1x")
        if not ctx.options.get("find_max"):
            return [first]
        top = parse_load(ctx.options["max_load"]) if ctx.options.get("max_load") else 10 * first
        if top < first:
            raise UsageError(f"--max-load {top:g}x is below --load {first:g}x")
        return [first * k for k in range(1, int(top / first + 1e-9) + 1)]

    def prep_points(self, ctx: PlanContext) -> list[TestPoint]:
        """act_prep: zeros over the whole device, then random large blocks over it (two full fills)."""
        if ctx.options.get("skip_prep"):
            return []
        lb = int(ctx.options.get("large_block_kib") or 128) * 1024
        zero = Workload(rw="write", bs=lb, iodepth=PREP_QD, options={"zero_buffers": "1"})
        salt = Workload(rw="write", bs=lb, iodepth=PREP_QD, options={"refill_buffers": "1"})
        return [
            TestPoint(id="act-prep-zero", label="act_prep: zero fill", workload=zero, phase="precondition",
                      group="prep", tags={"stream_names": ["prep"]}, streams=(zero,)),
            TestPoint(id="act-prep-salt", label="act_prep: random large blocks", workload=salt,
                      phase="precondition", group="prep", tags={"stream_names": ["prep"]}, streams=(salt,)),
        ]

    def level_points(self, ctx: PlanContext, load: float) -> list[TestPoint]:
        """The slices of one load level, each one fio run of every stream on every device."""
        cfg = config_from(ctx, load)
        derived = derive(cfg)
        duration, slice_s = self.times(ctx)
        min_op = max(512, ctx.logical_block_size)
        threads = ctx.options.get("service_threads")
        plans = stream_plans(cfg, derived, min_op, int(threads) if threads else None)
        hist_ms = hist_interval_ms(slice_s)
        keep = ctx.target_kind == "null"
        streams = tuple(stream_workload(sp, cfg, min_op, slice_s, hist_ms, keep_engine=keep) for sp in plans)
        if ctx.footprint is not None or ctx.misalign:  # --footprint/--misalign reach every stream
            streams = tuple(dataclasses.replace(w, size=ctx.footprint, offset=ctx.misalign) for w in streams)
        tags = {
            "stream_names": [sp.name for sp in plans], "load": load, "slice_s": slice_s,
            "target_per_s": {sp.name: sp.ops_per_s * cfg.devices for sp in plans},
            "jobs": {sp.name: sp.jobs for sp in plans}, "iodepth": {sp.name: sp.iodepth for sp in plans},
            "devices": cfg.devices, "min_op": min_op,
        }
        out = []
        for i in range(duration // slice_s):
            out.append(TestPoint(
                id=point_id(load, i + 1), label=f"ACT {load_label(load)} slice {i + 1}",
                workload=streams[0], group=f"ACT {load_label(load)}", tags={**tags, "slice": i + 1},
                streams=streams))
        return out

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        self._check(ctx)
        points = self.prep_points(ctx)
        for load in self.loads(ctx):
            points.extend(self.level_points(ctx, load))
        return points

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        self._check(ctx)
        done = run.done_ids()
        remaining = [p for p in self.prep_points(ctx) if p.id not in done]
        for load in self.loads(ctx):
            level = self.level_points(ctx, load)
            todo = [p for p in level if p.id not in done]
            result = evaluate_level(ctx, run, load, level)
            if result.lagging:
                return remaining  # ACT stops as soon as the drive (or generator) cannot keep up
            if todo:
                return remaining + todo
            if not result.passed:
                return remaining  # --find-max: the first failing level ends the search
        return remaining

    def eta_seconds(self, ctx: PlanContext) -> float:
        points = self.plan(ctx)
        prep_s = 0.0
        if points and points[0].phase == "precondition":
            prep_s = 2 * ctx.capacity / 500e6 * max(1, ctx.devices)  # two fills at ~500 MB/s
        return prep_s + sum(p.est_seconds + self.point_overhead_s for p in points)

    def plan_extra(self, ctx: PlanContext) -> dict[str, Any]:
        cfg = config_from(ctx)
        derived = derive(cfg)
        d = derived.as_dict()
        min_op = max(512, ctx.logical_block_size)
        threads = ctx.options.get("service_threads")
        d["read_bytes"] = read_size(cfg, min_op)
        d["min_op_bytes"] = min_op
        d["streams_per_device"] = [dataclasses.asdict(sp) for sp in
                                   stream_plans(cfg, derived, min_op, int(threads) if threads else None)]
        return {"derived": d}

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        cfg = config_from(ctx)
        d = derive(cfg)
        min_op = max(512, ctx.logical_block_size)
        duration, slice_s = self.times(ctx)
        notes = [
            f"ACT {load_label(cfg.load)} on {cfg.devices} device(s): {d.reads_per_s} reads/s of "
            f"{read_size(cfg, min_op)} B, {d.large_block_reads_per_s:.2f} large-block reads/s and "
            f"{d.large_block_writes_per_s:.2f} large-block writes/s of {cfg.large_block_bytes // 1024} KiB "
            f"(totals; {d.records_per_large_block} records per large block)",
            f"{duration // slice_s} slice(s) of {slice_s} s; pass: worst slice < 5% of reads >= 1 ms, "
            "< 1% >= 8 ms, < 0.1% >= 64 ms",
        ]
        if d.commit_writes_per_s:
            notes.append(f"commit-to-device: {d.commit_writes_per_s} record writes/s (separate fio jobs on "
                         "the same device)")
        if duration < 24 * 3600:
            notes.append("shorter than ACT's 24 h: the verdict is indicative only, not a certificate")
        return notes

    # ---------------------------------------------------------------- verdict

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        levels = [evaluate_level(ctx, run, load, self.level_points(ctx, load)) for load in self.loads(ctx)]
        ran = [lv for lv in levels if lv.slices]
        passed = [lv for lv in ran if lv.complete and lv.passed and not lv.lagging]
        if not ran:
            return run
        find_max = bool(ctx.options.get("find_max"))
        if find_max:
            ok = bool(passed)
            best = max((lv.load for lv in passed), default=0.0)
            text = (f"ACT find-max: highest passing load {load_label(best)}" if ok
                    else f"ACT find-max: no load passed (first level {load_label(ran[0].load)})")
            last = ran[-1]
            if last.lagging:
                text += f"; stopped at {load_label(last.load)}: {last.lagging}"
            elif not last.passed:
                text += f"; {load_label(last.load)} failed ({_worst_text(last.worst)})"
        else:
            lv = ran[0]
            ok = lv.complete and lv.passed and not lv.lagging
            best = lv.load if ok else 0.0
            text = f"ACT {load_label(lv.load)}: {'PASS' if ok else 'FAIL'} (worst slice: {_worst_text(lv.worst)})"
            if lv.lagging:
                text += f"; {lv.lagging}"
        run = run.with_event({"time": store.now_iso(), "kind": "verdict", "suite": "act", "passed": ok, "text": text,
                              "highest_passing_load": best,
                              "levels": [{"load": lv.load, "passed": lv.passed, "complete": lv.complete,
                                          "lagging": lv.lagging, "worst_reads_pct": lv.worst} for lv in ran]})
        return run if ok else run.with_warning(text)


def _worst_text(worst: Mapping[int, float]) -> str:
    return ", ".join(f"{worst.get(t, 0.0):.2f}% >= {t} ms" for t, _ in CRITERIA)


def evaluate_level(ctx: PlanContext, run: Run, load: float, level: Sequence[TestPoint]) -> LevelResult:
    """Slices of one level found in `run`, the keep-up check and ACT's verdict on the worst slice."""
    slices: list[dict[str, StreamSlice]] = []
    lagging = ""
    for p in level:
        r = run.result(p.id)
        if r is None or r.status != "ok":
            continue
        streams = slice_streams(r)
        slices.append(streams)
        if lagging:
            continue
        limit = max_lag_s(ctx, int(p.tags.get("slice_s", 0) or 0))
        for name, st in streams.items():
            if st.lag_s > limit:
                m = r.measurement
                cpu = (m.usr_cpu + m.sys_cpu) if m else 0.0
                who = _who_lags(name, cpu)
                lagging = (f"{who} can't keep up at {load_label(load)}: {STREAM_LABEL.get(name, name)} fell "
                           f"{st.lag_s:.1f} s behind in slice {p.tags.get('slice')} "
                           f"({st.achieved_per_s:.1f}/s of {st.target_per_s:.1f}/s)")
                break
    worst = {t: 0.0 for t in THRESHOLDS_MS}
    for s in slices:
        if S_READS in s:
            for t, v in s[S_READS].exceedance().items():
                worst[t] = max(worst[t], v)
    complete = len(slices) == len(level)
    return LevelResult(load=load, slices=slices, complete=complete, lagging=lagging,
                       passed=complete and not lagging and judge(worst), worst=worst)


def _who_lags(stream: str, cpu_pct: float) -> str:
    """ACT tells a generator failure (service threads) from a device failure; so does ssdlab."""
    if cpu_pct >= 90.0:
        return "the host (fio was CPU-bound), not necessarily the drive,"
    if stream in (S_READS, S_COMMITS):
        return "the drive(s) (service threads at QD1 were sized for the rate)"
    return "the drive(s)"


register(ActSuite())

# the report section lives with the suite family and registers when the suite loads
importlib.import_module("ssdlab.report.act")
