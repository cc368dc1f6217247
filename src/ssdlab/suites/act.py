"""Aerospike ACT-style storage certification (`act`) on fio.

ACT's storage model (aerospike/act 6.6, src/storage/act_storage.c): one pool of `service-threads` threads
(5 x the online CPUs by default) shared by all devices issues the small random reads, each thread
synchronous (QD1), on its own fixed schedule of (reads + commits) / threads requests per second, each
request on a device picked at random; with commit-to-device the same threads also write records. Every
device has one large-block read thread and one large-block write thread (128 KiB, O_DSYNC), each on a fixed
schedule. All schedules start with the run and are never reset; when any thread falls more than
max-lag-sec behind, ACT stops (0: never). The rates follow from ACT's derive_configuration (act_config.py).

Here every slice (default 1 h of a 24 h run) is one fio invocation: the service threads are one fio
section of `numjobs = service-threads` psync jobs over all devices (file_service_type=random), each paced
at ACT's integer per-thread rate; the large-block streams are one paced job per device. The executor
reads each job's lag behind its schedule from its histogram log (fio/pacing.py); the lag a slice ends
with is carried into the next slice, so the run keeps one schedule as ACT does. Per slice and stream
ssdlab reports the % of I/Os at or above 1, 2, 4, 8, 16, 32, 64 ms (act_latency.py's columns), then avg
and max rows; the run passes when the worst slice of reads (and, with commit-to-device, of commit writes)
has < 5 % >= 1 ms, < 1 % >= 8 ms and < 0.1 % >= 64 ms.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab.errors import UsageError
from ssdlab.results import hist, store
from ssdlab.results.events import VerdictEvent
from ssdlab.results.model import PointResult, Run, TestPoint, Workload, measurement_from_dict
from ssdlab.results.tags import PointTags
from ssdlab.suites.act_config import (
    MAX_LAG_S,
    READS_PER_DEVICE_1X,
    SERVICE_THREADS_PER_CPU,
    SPLIT_RESOLUTION,
    WRITES_PER_DEVICE_1X,
    ActConfig,
    Derived,
    derive,
    load_rates,
    online_cpus,
    read_config,
    record_sizes,
    round_up,
    settings_from,
)
from ssdlab.suites.base import Outlook, PlanContext, Suite, SuiteOption, register

__all__ = ["ActConfig", "Derived", "derive", "round_up"]

THRESHOLDS_MS = (1, 2, 4, 8, 16, 32, 64)
CRITERIA = ((1, 5.0), (8, 1.0), (64, 0.1))  # reads: % at or above t ms must stay below the limit
PREP_QD = 8  # act_prep writes with 8 threads
MAX_FIO_JOBS = 4096  # fio 3.33 REAL_MAX_JOBS
BSSPLIT_MAX = 64  # fio 3.33 thread_options.h

# fio sections (one per stream; the service pool spans every device, the others run per device)
S_SERVICE = "service"
S_LB_READS = "large-block-reads"
S_LB_WRITES = "large-block-writes"
S_TOMB = "tomb-raider"
# analysis streams (ACT's histogram names): the service section's reads and commit writes, the others
S_READS = "reads"
S_COMMITS = "writes"
JUDGED = (S_READS, S_COMMITS)
STREAM_LABEL = {S_READS: "reads", S_LB_READS: "large-block reads", S_LB_WRITES: "large-block writes",
                S_COMMITS: "writes (commits)", S_TOMB: "tomb-raider reads"}
SECTION_LABEL = {S_SERVICE: "service threads", S_LB_READS: "large-block reads", S_LB_WRITES: "large-block writes"}

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$", re.IGNORECASE)
_LOAD_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*x?\s*$", re.IGNORECASE)
_DEVICE_SUFFIX = re.compile(r"-d\d+$")
CERT_SLICES = 24  # a certificate's run: 24 h in 1 h slices


def parse_duration(text: str | float | int, what: str) -> int:
    """'24h', '90m', '30s', '6' (seconds) -> whole seconds."""
    if isinstance(text, (int, float)):
        seconds = float(text)
    else:
        m = _DURATION_RE.match(text)
        if not m:
            raise UsageError(f"bad --{what} {text!r}: use seconds or a unit, e.g. 24h, 90m, 30s, 6")
        seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}[m.group(2).lower()]
    if not math.isfinite(seconds) or seconds < 1 or seconds != int(seconds) or seconds > 366 * 86400:
        raise UsageError(f"--{what} {text} must be a whole number of seconds, from 1 s to a year")
    return int(seconds)


def parse_load(text: str | float) -> float:
    """'300x' or '300' -> 300.0 (ACT's load multiplier)."""
    m = _LOAD_RE.match(str(text))
    if not m or not 0 < float(m.group(1)) <= 100_000:
        raise UsageError(f"bad --load {text!r}: use a positive multiplier such as 1x, 30x, 300x")
    return float(m.group(1))


def load_label(load: float) -> str:
    """'30x', '1.5x'."""
    return f"{load:g}x"


def level_label(record: Mapping[str, Any]) -> str:
    """A level's label from a slice's tags or a verdict's level record ('30x' when only the load was stored)."""
    return str(record.get("level") or load_label(float(record.get("load", 0.0))))


def section_device(section: str) -> tuple[str, str]:
    """A fio section's stream and device: ('large-block-reads', 'd0') for 'large-block-reads-d0', and
    (section, '') for a section over every device (the service pool)."""
    base = _DEVICE_SUFFIX.sub("", section)
    return base, section[len(base) + 1:]


# ------------------------------------------------------------------ settings and levels


def file_values(options: Mapping[str, Any]) -> dict[str, Any]:
    """Values from the --act-config file: as recorded when the run started, else read now."""
    recorded = options.get("act_config_values")
    if isinstance(recorded, Mapping):
        return dict(recorded)
    path = options.get("act_config")
    return read_config(path) if path else {}


def settings(ctx: PlanContext) -> dict[str, Any]:
    """Every ACT option: the explicit option, else the config file's value (ACT defaults fill the rest)."""
    return settings_from(ctx.options, file_values(ctx.options))


def default_service_threads() -> int:
    """ACT's default: 5 x the CPUs online (cfg_storage.c check_configuration, hardware.c num_cpus)."""
    return SERVICE_THREADS_PER_CPU * online_cpus()


@dataclass(frozen=True)
class Level:
    """One load level: request rates (totals over devices), the key in point ids and tags, and a label."""

    key: float  # the Nx multiplier, or k for k x the configured request rates
    read_reqs_per_s: int
    write_reqs_per_s: int
    label: str
    id_part: str


def _level(read_reqs: int, write_reqs: int, k: float, nx: float | None) -> Level:
    if nx is not None:
        return Level(nx, read_reqs, write_reqs, load_label(nx), f"{nx:g}x".replace(".", "_"))
    return Level(k, read_reqs, write_reqs, f"{read_reqs} reads/s + {write_reqs} writes/s",
                 f"r{read_reqs}-w{write_reqs}")


def levels(ctx: PlanContext) -> list[Level]:
    """The load levels in order: one, or N, 2N, ... (k x the request rates) up to --max-load with --find-max."""
    reads, writes, nx = _first_level(ctx)
    if not ctx.options.get("find_max"):
        return [_level(reads, writes, 1.0, nx)]
    top = parse_load(ctx.options["max_load"]) if ctx.options.get("max_load") else None
    devices = max(1, ctx.devices)
    out = []
    if nx is not None:
        top = top if top is not None else 10 * nx
        if top < nx:
            raise UsageError(f"--max-load {top:g}x is below the first load {nx:g}x")
        for k in range(1, int(top / nx + 1e-9) + 1):
            out.append(_level(*load_rates(nx * k, devices), float(k), nx * k))
    else:  # k x the configured request rates; --max-load is the largest k
        for k in range(1, int((top if top is not None else 10.0) + 1e-9) + 1):
            out.append(_level(reads * k, writes * k, float(k), None))
    if not out:
        raise UsageError("--max-load leaves no load level to run")
    return out


def _first_level(ctx: PlanContext) -> tuple[int, int, float | None]:
    """(read reqs/s, write reqs/s, load N when they are N x ACT's 1x rates, else None) of the first level:
    from --load, or from request rates (the command line's, or the --act-config file's)."""
    s = settings(ctx)
    devices = max(1, ctx.devices)
    cli_rates = any(ctx.options.get(k) is not None for k in ("read_reqs_per_sec", "write_reqs_per_sec"))
    if ctx.options.get("load") is not None and cli_rates:
        raise UsageError("give either --load or --read-reqs-per-sec/--write-reqs-per-sec, not both")
    rates = cli_rates or (ctx.options.get("load") is None
                          and any(k in s for k in ("read_reqs_per_sec", "write_reqs_per_sec")))
    if not rates:
        nx = parse_load(s.get("load") or "1x")
        reads, writes = load_rates(nx, devices)
        return reads, writes, nx
    reads, writes = int(s.get("read_reqs_per_sec") or 0), int(s.get("write_reqs_per_sec") or 0)
    # rates that are exactly N x the 1x rates are that load (same label and point ids as --load Nx)
    exact = reads > 0 and reads * WRITES_PER_DEVICE_1X == writes * READS_PER_DEVICE_1X
    return reads, writes, reads / (READS_PER_DEVICE_1X * devices) if exact else None


def config_for(ctx: PlanContext, level: Level | None = None, s: Mapping[str, Any] | None = None) -> ActConfig:
    """ActConfig of one level (default: the first) from the suite options and the --act-config file."""
    s = settings(ctx) if s is None else s
    lv = level or levels(ctx)[0]

    def num(key: str, default: int) -> int:
        v = s.get(key)
        return default if v is None else int(v)

    return ActConfig(
        read_reqs_per_s=lv.read_reqs_per_s, write_reqs_per_s=lv.write_reqs_per_s, devices=max(1, ctx.devices),
        service_threads=num("service_threads", 0) or default_service_threads(),
        record_bytes=num("record_bytes", 1536), record_bytes_range_max=num("record_bytes_range_max", 0),
        large_block_bytes=num("large_block_kib", 128) * 1024, replication_factor=num("replication_factor", 1),
        update_pct=num("update_pct", 0), defrag_lwm_pct=num("defrag_lwm_pct", 50),
        compress_pct=num("compress_pct", 100), no_defrag_reads=bool(s.get("no_defrag_reads")),
        disable_odsync=bool(s.get("disable_odsync")), commit_to_device=bool(s.get("commit_to_device")),
        tomb_raider=bool(s.get("tomb_raider")), tomb_raider_sleep_us=num("tomb_raider_sleep_usec", 0),
        max_lag_s=num("max_lag", MAX_LAG_S),
    )


# ------------------------------------------------------------------ streams as fio sections


@dataclass(frozen=True)
class StreamPlan:
    """One fio section: the service-thread pool (all devices) or one device's large-block/tomb-raider job."""

    name: str
    rw: str
    sizes: tuple[int, ...]  # I/O sizes, drawn uniformly (ACT's record-size range); one size usually
    jobs: int
    ops_per_s_per_job: float  # 0: not paced (tomb raider)
    read_fraction: float = 1.0  # service threads with commit-to-device: share of reads
    shared: bool = False  # one section over every device

    @property
    def bs(self) -> int:
        return self.sizes[0]

    @property
    def mean_bs(self) -> float:
        return sum(self.sizes) / len(self.sizes)

    @property
    def ops_per_s(self) -> float:
        """The section's whole rate (all its jobs)."""
        return self.ops_per_s_per_job * self.jobs


def stream_plans(cfg: ActConfig, derived: Derived, min_op: int) -> list[StreamPlan]:
    """ACT's threads as fio sections: the shared service-thread pool, then each device's large-block jobs."""
    plans = []
    sizes = tuple(record_sizes(cfg, min_op))
    if derived.service_reqs_per_thread > 0:
        fraction = derived.read_split / SPLIT_RESOLUTION
        rw = "randread" if fraction >= 1.0 else ("randwrite" if fraction <= 0.0 else "randrw")
        plans.append(StreamPlan(S_SERVICE, rw, sizes, derived.service_threads, derived.service_reqs_per_thread,
                                read_fraction=fraction, shared=True))
    lb = (cfg.large_block_bytes,)
    for name, rw, rate in ((S_LB_READS, "randread", derived.large_block_reads_per_s),
                           (S_LB_WRITES, "randwrite", derived.large_block_writes_per_s)):
        if rate > 0:  # one thread per device, at rate / devices (act_storage.c run_large_block_*)
            plans.append(StreamPlan(name, rw, lb, 1, derived.per_device(rate)))
    if cfg.tomb_raider:
        plans.append(StreamPlan(S_TOMB, "read", lb, 1, 0.0))
    return plans


def _bssplit(sizes: Sequence[int]) -> str:
    """Uniform sizes as a fio bssplit; fio's shares are integer percent, so only exact splits are allowed."""
    n = len(sizes)
    if n > BSSPLIT_MAX or 100 % n:
        raise UsageError(f"--record-bytes-range-max gives {n} record sizes; fio can draw them uniformly only "
                         "when their number divides 100 (e.g. 2, 4, 5, 10, 20, 25 or 50 sizes); choose another "
                         "range")
    return ":".join(f"{s}/{100 // n}" for s in sizes)


def _write_buffer_options(cfg: ActConfig) -> dict[str, str]:
    # ACT fills each 512 B interval with (100 - compress-pct)% zeros and refills the buffer for every write;
    # its devices are opened with O_DSYNC unless disable-odsync
    out = {"buffer_compress_percentage": str(100 - cfg.compress_pct), "buffer_compress_chunk": "512",
           "refill_buffers": "1"}
    if not cfg.disable_odsync:
        out["sync"] = "dsync"
    return out


def stream_workload(sp: StreamPlan, cfg: ActConfig, min_op: int, seconds: int, hist_ms: int,
                    keep_engine: bool = False) -> Workload:
    """fio workload of one section: synchronous QD1 jobs (psync) paced on fio's linear schedule.

    `keep_engine` leaves the target's engine alone (fio's null engine: no device, nothing to open).
    """
    options: dict[str, str] = {}
    if not keep_engine:
        options["ioengine"] = "psync"
    rate_iops = None
    rwmix = None
    bssplit = _bssplit(sp.sizes) if len(sp.sizes) > 1 else None
    if sp.name == S_SERVICE:
        options["blockalign"] = str(min_op)
        if bssplit:  # fio would round every size down to a multiple of the smallest (1536 -> 2048 becomes 1536);
            options["bs_unaligned"] = "1"  # the listed sizes are already multiples of the minimum I/O size
        q = sp.ops_per_s_per_job
        if sp.rw == "randread" and bssplit is None:
            rate_iops = int(q)  # ACT's per-thread rate is an integer, as fio's rate_iops
        elif sp.rw == "randrw":  # one schedule per direction in fio: reads and commits at ACT's split
            rwmix = max(1, min(99, round(100 * sp.read_fraction)))
            options["rate"] = (f"{round(q * sp.read_fraction * sp.mean_bs)},"
                               f"{round(q * (1 - sp.read_fraction) * sp.mean_bs)}")
        else:
            options["rate"] = str(round(q * sp.mean_bs))
        if sp.rw != "randread":
            options.update(_write_buffer_options(cfg))
    elif sp.name == S_TOMB:
        if cfg.tomb_raider_sleep_us:
            options["thinktime"] = str(cfg.tomb_raider_sleep_us)  # µs between reads, as ACT's usleep
    else:
        options["blockalign"] = str(sp.bs)
        options["rate"] = str(max(1, round(sp.ops_per_s_per_job * sp.bs)))  # bytes/s: 23.53 ops/s is no integer
        if sp.rw == "randwrite":
            options.update(_write_buffer_options(cfg))
    return Workload(rw=sp.rw, bs=sp.bs, bssplit=bssplit, iodepth=1, numjobs=sp.jobs, rwmixread=rwmix,
                    runtime_s=float(seconds), rate_iops=rate_iops, options=options, hist_log_ms=hist_ms)


def hist_interval_ms(slice_s: int) -> int:
    """Histogram-log interval: 100 ms for short slices, 1 s from 20 s, 10 s from 20 min."""
    if slice_s >= 1200:
        return 10000
    return 1000 if slice_s >= 20 else 100


def point_id(level: Level, slice_no: int) -> str:
    """Point id of one slice of one load level, e.g. 'act-30x-s001' or 'act-r5000-w0-s001'."""
    return f"act-{level.id_part}-s{slice_no:03d}"


def min_op_bytes(ctx: PlanContext) -> int:
    """The smallest direct I/O the devices take (ACT probes 512..4096 B; the logical block size is that)."""
    return max(512, ctx.logical_block_size)


# ------------------------------------------------------------------ analysis of stored slices


def stream_of(section: str, direction: str) -> str:
    """Analysis stream of one direction of one fio section (ACT's histogram names).

    The service pool reads into `reads` and writes into `writes`; runs of earlier ssdlab versions had
    per-device `reads-dN` and `commits-dN` sections."""
    base = section_device(section)[0]
    if base in (S_SERVICE, S_READS):
        return S_READS if direction == "read" else S_COMMITS
    if base == "commits":
        return S_COMMITS
    return base


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

    def exceedance(self, thresholds_ns: Sequence[int] | None = None) -> dict[int, float]:
        """% of I/Os at or above each threshold: ACT's ms thresholds by default (keys in ms), else the
        thresholds given in ns (keys in ns)."""
        if thresholds_ns is not None:
            return hist.exceedance(self.counts, list(thresholds_ns))
        pct = hist.exceedance(self.counts, [t * 1_000_000 for t in THRESHOLDS_MS])
        return {t: pct[t * 1_000_000] for t in THRESHOLDS_MS}


def slice_streams(result: PointResult) -> dict[str, StreamSlice]:
    """Per-stream figures of one slice point (from the per-section results the executor stored)."""
    m = result.measurement
    if m is None:
        return {}
    raw: Mapping[str, Any] = m.extra.streams
    targets: Mapping[str, float] = result.point.tags.target_per_s
    seconds = float(result.point.workload.runtime_s or 0.0)
    merged: dict[str, tuple[int, hist.Counts, float]] = {}
    for section, data in raw.items():
        sm = measurement_from_dict(data)
        for direction, ds in sm.directions.items():
            if direction not in ("read", "write"):
                continue
            stream = stream_of(section, direction)
            counts = hist.counts_from_sparse(ds.clat.bins) if ds.clat and ds.clat.bins else hist.merge()
            ops, acc, mx = merged.get(stream, (0, hist.merge(), 0.0))
            merged[stream] = (ops + ds.total_ios, acc + counts, max(mx, ds.clat.max_ns if ds.clat else 0.0))
    out = {}
    for stream in [*targets, *[s for s in merged if s not in targets]]:
        ops, counts, mx = merged.get(stream, (0, hist.merge(), 0.0))
        out[stream] = StreamSlice(stream, ops, float(targets.get(stream, 0.0)), seconds, counts, mx)
    return out


@dataclass(frozen=True)
class SectionLag:
    """One paced fio section in one slice, against ACT's single schedule for the whole level."""

    section: str
    carried_s: float  # lag the level's schedule carried into this slice
    worst_s: float  # worst lag in this slice (carried + the worst job's lag in the slice; 0 when ahead)
    end_s: float  # lag at the end of the slice (carried into the next; 0 when ahead)
    at_s: float  # when in the slice the worst lag was seen


def _section_ios(data: Mapping[str, Any]) -> int:
    dirs = data.get("directions") or {}
    return sum(int((d or {}).get("total_ios", 0) or 0) for d in dirs.values())


def slice_lags(result: PointResult, carried: Mapping[str, float]) -> list[SectionLag]:
    """Lag of every paced section of one slice, given the lag each section carried in."""
    m = result.measurement
    if m is None:
        return []
    raw: Mapping[str, Any] = m.extra.streams
    pacing: Mapping[str, Mapping[str, float]] = m.extra.pacing
    seconds = float(result.point.workload.runtime_s or 0.0)
    targets: Mapping[str, float] = result.point.tags.target_per_s
    devices = max(1, int(result.point.tags.devices or 1))
    out = []
    for section, data in raw.items():
        base = section_device(section)[0]
        p = pacing.get(section)
        if p is not None:
            rate = float(p.get("ops_per_s_per_job", 0.0)) * float(p.get("jobs", 1.0))
        elif base == S_TOMB:
            continue
        else:  # runs of earlier versions: the stream's target split over the devices
            stream = stream_of(section, "read" if base != S_LB_WRITES and base != "commits" else "write")
            rate = float(targets.get(stream, 0.0)) / (1 if base == S_SERVICE else devices)
        if rate <= 0:
            continue
        end = seconds - _section_ios(data) / rate
        within = float(p["max_lag_s"]) if p is not None and p.get("logs") else end
        before = float(carried.get(section, 0.0))
        # fio starts every slice with one I/O per job at once, so a slice can end a little ahead: ACT's single
        # schedule cannot bank that, so the carried lag never goes below 0
        out.append(SectionLag(section, before, max(0.0, before + max(within, end)), max(0.0, before + end),
                              float(p["at_s"]) if p is not None and p.get("logs") else seconds))
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
    label: str = ""
    worst_commits: dict[int, float] | None = None  # commit writes (commit-to-device), max over slices
    max_lag_s: dict[str, float] = dataclasses.field(default_factory=dict)  # per section, worst over slices

    def rows(self, stream: str) -> tuple[list[float], list[float]]:
        """(avg, max) over slices of % at or above each threshold."""
        per = [s[stream].exceedance() for s in self.slices if stream in s]
        if not per:
            return [0.0] * len(THRESHOLDS_MS), [0.0] * len(THRESHOLDS_MS)
        avg = [sum(p[t] for p in per) / len(per) for t in THRESHOLDS_MS]
        mx = [max(p[t] for p in per) for t in THRESHOLDS_MS]
        return avg, mx


def judge(worst: Mapping[int, float]) -> bool:
    """ACT's criteria on the worst slice: < 5 % >= 1 ms, < 1 % >= 8 ms, < 0.1 % >= 64 ms."""
    return all(worst.get(t, 0.0) < limit for t, limit in CRITERIA)


def max_lag_s(ctx: PlanContext) -> int:
    """ACT's max-lag-sec (default 10 s; 0: never stop because of lag)."""
    value = settings(ctx).get("max_lag")
    return MAX_LAG_S if value is None else int(value)


def lag_message(section: str, lag_s: float, limit: int, where: str, cpu_pct: float) -> str:
    """ACT's two lag failures: service threads ("configure more service-threads": the generator) or the
    large-block threads ("drive(s) can't keep up")."""
    base, device = section_device(section)
    who = SECTION_LABEL.get(base, base) + (f" on {device}" if device else "")
    if base in (S_SERVICE, S_READS, "commits"):
        advice = "ACT can't do the requested load with this many service threads: try more --service-threads"
    else:
        advice = "the drive(s) can't keep up"
    if cpu_pct >= 90.0:
        advice += " (fio's threads were at least 90% busy: the host may be the limit)"
    return f"{who} fell {lag_s:.1f} s behind schedule (max-lag {limit} s) in slice {where}: {advice}"


def evaluate_level(ctx: PlanContext, run: Run, load: float, level: Sequence[TestPoint]) -> LevelResult:
    """Slices of one level found in `run`, ACT's lag rule over the level and its verdict on the worst slice.

    The lag rule is ACT's: one schedule per stream for the whole level, and the run stops as soon as any
    section's lag passes max-lag (0: never). fio starts a new schedule in every slice, so the lag a slice
    ends with is carried into the next one (fio does not make it up; ACT would, by issuing back to back)."""
    slices, lagging, worst_lag = _slices(ctx, run, load, level)
    worst = _worst(slices, S_READS)
    commits = any(S_COMMITS in s for s in slices) or any(S_COMMITS in p.tags.target_per_s
                                                          for p in level)
    worst_commits = _worst(slices, S_COMMITS) if commits else None
    complete = len(slices) == len(level) and not lagging
    passed = complete and judge(worst) and (worst_commits is None or judge(worst_commits))
    label = str(level[0].tags.level or "") if level else ""
    return LevelResult(load=load, slices=slices, complete=complete, lagging=lagging, passed=passed, worst=worst,
                       label=label or load_label(load), worst_commits=worst_commits, max_lag_s=worst_lag)


def _slices(ctx: PlanContext, run: Run, load: float, level: Sequence[TestPoint]
            ) -> tuple[list[dict[str, StreamSlice]], str, dict[str, float]]:
    """The level's finished slices in order, up to the first that broke ACT's lag rule (its message, else
    ''), and each section's worst lag over them."""
    limit = max_lag_s(ctx)
    slices: list[dict[str, StreamSlice]] = []
    lagging = ""
    carried: dict[str, float] = {}
    worst_lag: dict[str, float] = {}
    finished = run.finished_by_id()
    for p in level:
        r = finished.get(p.id)
        if r is None or r.status != "ok":
            continue
        slices.append(slice_streams(r))
        for lag in slice_lags(r, carried):
            carried[lag.section] = lag.end_s
            worst_lag[lag.section] = max(worst_lag.get(lag.section, lag.worst_s), lag.worst_s)
            if not lagging and limit > 0 and lag.worst_s > limit:
                m = r.measurement
                cpu = (m.usr_cpu + m.sys_cpu) if m else 0.0
                where = f"{p.tags.slice} at {p.tags.level or load_label(load)}"
                lagging = lag_message(lag.section, lag.worst_s, limit, where, cpu)
        if lagging:
            break  # ACT stops here: later slices do not exist
    return slices, lagging, worst_lag


def _worst(slices: Sequence[Mapping[str, StreamSlice]], stream: str) -> dict[int, float]:
    worst = {t: 0.0 for t in THRESHOLDS_MS}
    for s in slices:
        if stream in s:
            for t, v in s[stream].exceedance().items():
                worst[t] = max(worst[t], v)
    return worst


def _worst_text(worst: Mapping[int, float]) -> str:
    return ", ".join(f"{worst.get(t, 0.0):.2f}% >= {t} ms" for t, _ in CRITERIA)


def _level_of(ctx: PlanContext, load: float) -> Level:
    """The level of a load: one of the run's levels, else N x ACT's 1x rates."""
    found = next((lv for lv in levels(ctx) if lv.key == load), None)
    return found or _level(*load_rates(load, max(1, ctx.devices)), load, load)


def target_rates(derived: Derived) -> dict[str, float]:
    """The I/Os per second each stream must hold (all devices): ACT's derived rates."""
    targets: dict[str, float] = {}
    if derived.service_reqs_per_thread:
        if derived.read_split:
            targets[S_READS] = derived.service_reads_per_s
        if derived.read_split < SPLIT_RESOLUTION:
            targets[S_COMMITS] = derived.service_commits_per_s
    if derived.large_block_reads_per_s > 0:
        targets[S_LB_READS] = derived.large_block_reads_per_s
    if derived.large_block_writes_per_s > 0:
        targets[S_LB_WRITES] = derived.large_block_writes_per_s
    return targets


# ------------------------------------------------------------------ the suite


class ActSuite(Suite):
    name = "act"
    summary = ("Aerospike ACT-style certification: paced reads + large-block reads/writes, pass/fail per slice "
               "(fio targets only: the simulator has no paced concurrent streams)")
    writes = True
    default_runtime_s = 3600.0
    point_overhead_s = 1.0
    multi_target = True

    def suite_options(self) -> list[SuiteOption]:
        return [
            SuiteOption("act-config", "str", None, "an ACT storage config file (act_storage.conf): its items set "
                        "the options below; options given on the command line win"),
            SuiteOption("load", "str", None, "ACT load multiplier (1x = 2000 reads/s + 1000 writes/s per device; "
                        "default 1x)"),
            SuiteOption("read-reqs-per-sec", "int", None, "ACT read-reqs-per-sec: small reads/s, all devices"),
            SuiteOption("write-reqs-per-sec", "int", None, "ACT write-reqs-per-sec: record writes/s, all devices"),
            SuiteOption("record-bytes", "int", None, "ACT record size in bytes (default 1536)"),
            SuiteOption("record-bytes-range-max", "int", None, "ACT record-bytes-range-max: records uniform up to "
                        "this size (default 0: fixed)"),
            SuiteOption("large-block-kib", "int", None, "ACT large-block-op-kbytes (default 128)"),
            SuiteOption("replication-factor", "int", None, "ACT replication factor (multiplies the write load; "
                        "default 1)"),
            SuiteOption("update-pct", "int", None, "ACT update-pct 0..100: % of writes that also read the record"),
            SuiteOption("defrag-lwm-pct", "int", None, "ACT defrag low-water mark (default 50); write "
                        "amplification 100/(100-lwm)"),
            SuiteOption("compress-pct", "int", None, "ACT compress-pct: random share of written data (default "
                        "100: incompressible)"),
            SuiteOption("no-defrag-reads", "flag", None, "ACT no-defrag-reads: no large-block reads"),
            SuiteOption("commit-to-device", "flag", None, "ACT commit-to-device: the service threads also write "
                        "each record"),
            SuiteOption("disable-odsync", "flag", None, "ACT disable-odsync: writes without O_DSYNC"),
            SuiteOption("tomb-raider", "flag", None, "ACT tomb-raider: one thread per device reads large blocks "
                        "sequentially, without end"),
            SuiteOption("tomb-raider-sleep-usec", "int", None, "ACT tomb-raider-sleep-usec (default 0)"),
            SuiteOption("duration", "str", None, "ACT test duration (default 24h, a certificate's; e.g. 6h, 90m, "
                        "60)"),
            SuiteOption("slice", "str", None, "analysis slice (default 1h); pass/fail is judged on the worst "
                        "slice"),
            SuiteOption("report-interval", "int", None, "ACT report-interval-sec: histogram-log interval in s "
                        "(default: 0.1 s to 10 s by slice length)"),
            SuiteOption("microsecond-histograms", "flag", None, "ACT microsecond-histograms: the slice tables "
                        "show µs thresholds (the verdict stays in ms)"),
            SuiteOption("find-max", "flag", None, "step the load (N, 2N, 3N, ...) until a level fails; report the "
                        "highest passing one"),
            SuiteOption("max-load", "str", None, "--find-max: highest load to try (default 10 x --load)"),
            SuiteOption("service-threads", "int", None, "ACT service-threads: QD1 threads shared by all devices "
                        "(default, as ACT: 5 x the CPUs online)"),
            SuiteOption("max-lag", "int", None, "ACT max-lag-sec: stop when a stream falls this far behind its "
                        "schedule (default 10; 0: never stop)"),
            SuiteOption("skip-prep", "flag", None, "skip the act_prep fills (only for a device already prepared "
                        "by an earlier act run)"),
        ]

    # ---------------------------------------------------------------- checks before anything is created

    def _check(self, ctx: PlanContext) -> None:
        if ctx.traits.simulated:
            raise UsageError("act needs fio's paced concurrent streams, which the simulated SSD does not model: "
                             "use a file or block device target")

    def validate(self, ctx: PlanContext, target: Any) -> None:
        """Refuse what ACT refuses (and what fio cannot do) before a results directory exists.

        It also records, in `ctx.options`, the --act-config file's values and the service-thread count ACT
        would pick on this host, so that the run keeps them when it is resumed (elsewhere or later)."""
        self._check(ctx)
        values = file_values(ctx.options)
        if values.get("file_size_mbytes"):
            raise UsageError("file-size-mbytes makes ACT use buffered I/O (no O_DIRECT); ssdlab refuses it: use a "
                             "file target (file:PATH?size=4GiB), which it drives with direct I/O")
        named = values.get("device_names")
        if named:
            _check_device_names(named, target, str(ctx.options.get("act_config")))
        if ctx.options.get("act_config") and "act_config_values" not in ctx.options:
            ctx.options["act_config_values"] = values
        s = settings(ctx)
        if not s.get("service_threads"):
            ctx.options["service_threads"] = default_service_threads()
        self.plan(ctx)  # every level and slice derives and renders here, so errors surface now

    def times(self, ctx: PlanContext) -> tuple[int, int]:
        """(duration, slice) in seconds; the duration must be a whole number of slices.

        `--runtime` (the time per point in every suite) is ACT's slice, one point each; without --duration
        the run is scaled as a PTS run is: ACT's 24 slices, of that length (--runtime 60: 24 min). As
        act_latency.py does, a slice is rounded up to a whole number of report intervals."""
        s = settings(ctx)
        slice_s = self.runtime_slice(ctx)
        if slice_s is None:
            slice_s = parse_duration(s.get("slice") or "1h", "slice")
        duration = parse_duration(s.get("duration") or (CERT_SLICES * slice_s if ctx.runtime_s is not None
                                                         else "24h"), "duration")
        interval = s.get("report_interval")
        if interval is not None:
            if int(interval) < 1:
                raise UsageError("--report-interval must be at least 1 s (ACT refuses 0)")
            slice_s = round_up(slice_s, int(interval))
        if slice_s > duration:
            slice_s = duration
        if duration % slice_s:
            raise UsageError(f"--duration {duration} s is not a whole number of --slice {slice_s} s slices "
                             "(ACT drops an incomplete final slice; choose a multiple)")
        return duration, slice_s

    @staticmethod
    def runtime_slice(ctx: PlanContext) -> int | None:
        """The slice --runtime sets (None: not given); refused with --slice, unless the two agree."""
        if ctx.runtime_s is None:
            return None
        seconds = max(1, math.ceil(ctx.runtime_s - 1e-9))  # ACT's slices are whole seconds
        given = settings(ctx).get("slice")
        if given and parse_duration(given, "slice") != seconds:
            raise UsageError(f"act: --runtime {ctx.runtime_s:g} and --slice {given} both set the slice length; "
                             "give one (--duration sets the whole run)")
        return seconds

    def prep_points(self, ctx: PlanContext) -> list[TestPoint]:
        """act_prep: zeros over the whole device, then random large blocks over it (two full fills)."""
        if ctx.options.get("skip_prep"):
            return []
        lb = int(settings(ctx).get("large_block_kib") or 128) * 1024
        zero = Workload(rw="write", bs=lb, iodepth=PREP_QD, options={"zero_buffers": "1"})
        salt = Workload(rw="write", bs=lb, iodepth=PREP_QD, options={"refill_buffers": "1"})
        return [
            TestPoint(id="act-prep-zero", label="act_prep: zero fill", workload=zero, phase="precondition",
                      group="prep", tags=PointTags.of(stream_names=["prep"]), streams=(zero,)),
            TestPoint(id="act-prep-salt", label="act_prep: random large blocks", workload=salt,
                      phase="precondition", group="prep", tags=PointTags.of(stream_names=["prep"]), streams=(salt,)),
        ]

    def level_points(self, ctx: PlanContext, level: Level | float) -> list[TestPoint]:
        """The slices of one load level, each one fio run of every stream (the pool on all devices at once)."""
        s = settings(ctx)
        if not isinstance(level, Level):
            level = _level_of(ctx, level)
        cfg = config_for(ctx, level, s)
        derived = derive(cfg)
        duration, slice_s = self.times(ctx)
        min_op = min_op_bytes(ctx)
        plans = stream_plans(cfg, derived, min_op)
        jobs = sum(sp.jobs if sp.shared else sp.jobs * cfg.devices for sp in plans)
        if jobs > MAX_FIO_JOBS:
            raise UsageError(f"{jobs} fio jobs (service threads + large-block threads) exceed fio's limit of "
                             f"{MAX_FIO_JOBS}: lower --service-threads")
        interval = s.get("report_interval")
        hist_ms = int(interval) * 1000 if interval else hist_interval_ms(slice_s)
        keep = ctx.traits.null_engine
        streams = tuple(stream_workload(sp, cfg, min_op, slice_s, hist_ms, keep_engine=keep) for sp in plans)
        first = streams[0]  # the point's own workload: apply_common shifts and bounds it like any point's
        if ctx.footprint is not None or ctx.misalign:  # --footprint/--misalign reach every stream: the span
            # after the shift (ctx.capacity: the footprint, at most what is left past --misalign), never beyond
            streams = tuple(dataclasses.replace(w, size=ctx.capacity, offset=ctx.misalign) for w in streams)
        tags = PointTags.of(
            stream_names=[sp.name for sp in plans], shared_streams=[sp.name for sp in plans if sp.shared],
            load=level.key, level=level.label, slice_s=slice_s, target_per_s=target_rates(derived),
            jobs={sp.name: sp.jobs for sp in plans}, service_threads=cfg.service_threads,
            devices=cfg.devices, min_op=min_op, max_lag_s=cfg.max_lag_s,
        )
        return [TestPoint(id=point_id(level, i + 1), label=f"ACT {level.label} slice {i + 1}", workload=first,
                          group=f"ACT {level.label}", tags=tags.replace(slice=i + 1), streams=streams)
                for i in range(duration // slice_s)]

    def plan(self, ctx: PlanContext) -> list[TestPoint]:
        self._check(ctx)
        points = self.prep_points(ctx)
        for lv in levels(ctx):
            points.extend(self.level_points(ctx, lv))
        return points

    def next_points(self, ctx: PlanContext, run: Run) -> list[TestPoint]:
        self._check(ctx)
        done = run.done_ids()
        remaining = [p for p in self.prep_points(ctx) if p.id not in done]
        for lv in levels(ctx):
            level = self.level_points(ctx, lv)
            todo = [p for p in level if p.id not in done]
            result = evaluate_level(ctx, run, lv.key, level)
            if result.lagging:
                return remaining  # ACT stops as soon as a thread falls more than max-lag behind
            if todo:
                return remaining + todo
            if not result.passed:
                return remaining  # --find-max: the first failing level ends the search
        return remaining

    def outlook(self, ctx: PlanContext, run: Run) -> Outlook:
        """What is left (suites.base.Outlook). A single level: its remaining slices. --find-max: worst case, every
        level up to --max-load; expected, the levels up to the one the last finished level's worst read
        exceedance predicts to fail (taken to grow in proportion to the load), or the worst case before a level
        has finished."""
        rest = self.next_points(ctx, run)
        lvs = levels(ctx)
        if not rest or len(lvs) < 2:
            return Outlook.of(rest)  # one level, or the search ended
        points = [self.level_points(ctx, lv) for lv in lvs]
        done = run.done_ids()
        current = next((i for i, level in enumerate(points) if any(p.id not in done for p in level)), len(lvs))
        if current >= len(lvs) - 1 or rest[-1].id not in {p.id for p in points[current]}:
            return Outlook.of(rest)  # the last level, or the search ended
        later = points[current + 1:]
        worst = rest + [p for level in later for p in level]
        if current == 0:
            return Outlook.of(worst)
        last = evaluate_level(ctx, run, lvs[current - 1].key, points[current - 1])
        ratio = max(last.worst.get(t, 0.0) / limit for t, limit in CRITERIA)
        fails_at = lvs[current - 1].key / ratio if ratio > 0 else float("inf")
        expected = list(rest)
        if lvs[current].key < fails_at:  # the level under way is expected to pass: the search goes on
            for lv, level in zip(lvs[current + 1:], later, strict=True):
                expected += level
                if lv.key >= fails_at:  # the first level expected to fail ends the search
                    break
        return Outlook(worst=Outlook.of(worst).worst, expected=Outlook.of(expected).worst)

    def plan_extra(self, ctx: PlanContext) -> dict[str, Any]:
        cfg = config_for(ctx)
        derived = derive(cfg)
        d = derived.as_dict()
        min_op = min_op_bytes(ctx)
        d["read_bytes"] = record_sizes(cfg, min_op)[0]
        d["min_op_bytes"] = min_op
        d["max_lag_s"] = cfg.max_lag_s
        d["streams"] = [dataclasses.asdict(sp) for sp in stream_plans(cfg, derived, min_op)]
        return {"derived": d}

    def plan_notes(self, ctx: PlanContext) -> list[str]:
        lv = levels(ctx)[0]
        cfg = config_for(ctx, lv)
        d = derive(cfg)
        min_op = min_op_bytes(ctx)
        duration, slice_s = self.times(ctx)
        sizes = record_sizes(cfg, min_op)
        size_text = f"{sizes[0]} B" if len(sizes) == 1 else f"{sizes[0]}..{sizes[-1]} B"
        notes = [
            f"ACT {lv.label} on {cfg.devices} device(s): {d.reads_per_s} reads/s of {size_text}, "
            f"{d.large_block_reads_per_s:.2f} large-block reads/s and {d.large_block_writes_per_s:.2f} "
            f"large-block writes/s of {cfg.large_block_bytes // 1024} KiB (totals; {d.records_per_large_block} "
            "records per large block)",
            f"{cfg.service_threads} service threads (QD1, shared by all devices) at "
            f"{d.service_reqs_per_thread} requests/s each; one large-block read and one write thread per device",
            f"{duration // slice_s} slice(s) of {slice_s} s" + (" (--runtime: the slice)" if ctx.runtime_s is not None
                                                              else "") + "; pass: worst slice < 5% of reads >= 1 ms, "
            "< 1% >= 8 ms, < 0.1% >= 64 ms; " + (f"stops when a stream falls {cfg.max_lag_s} s behind"
                                                  if cfg.max_lag_s else "never stops because of lag (max-lag 0)"),
        ]
        if d.commit_writes_per_s:
            notes.append(f"commit-to-device: {d.commit_writes_per_s} record writes/s by the service threads, "
                         "judged with the same limits as the reads")
        if duration < 24 * 3600:
            notes.append("shorter than ACT's 24 h: the verdict is indicative only, not a certificate")
        return notes

    # ---------------------------------------------------------------- verdict

    def conclude(self, ctx: PlanContext, run: Run) -> Run:
        results = [evaluate_level(ctx, run, lv.key, self.level_points(ctx, lv)) for lv in levels(ctx)]
        ran = [lv for lv in results if lv.slices]
        if not ran:
            return run
        passed = [lv for lv in ran if lv.passed]
        if ctx.options.get("find_max"):
            ok = bool(passed)
            best = max((lv.load for lv in passed), default=0.0)
            best_label = next((lv.label for lv in passed if lv.load == best), "")
            text = (f"ACT find-max: highest passing load {best_label}" if ok
                    else f"ACT find-max: no load passed (first level {ran[0].label})")
            last = ran[-1]
            if last.lagging:
                text += f"; stopped at {last.label}: {last.lagging}"
            elif not last.passed:
                text += f"; {last.label} failed ({_level_text(last)})"
        else:
            lv = ran[0]
            ok = lv.passed
            best = lv.load if ok else 0.0
            text = f"ACT {lv.label}: {'PASS' if ok else 'FAIL'} (worst slice: {_level_text(lv)})"
            if lv.lagging:
                text += f"; {lv.lagging}"
        event = VerdictEvent.of(
            time=store.now_iso(), kind="verdict", suite="act", passed=ok, text=text, highest_passing_load=best,
            levels=[{"load": lv.load, "level": lv.label, "passed": lv.passed, "complete": lv.complete,
                     "lagging": lv.lagging, "worst_reads_pct": lv.worst,
                     "worst_writes_pct": lv.worst_commits, "max_lag_s": lv.max_lag_s} for lv in ran])
        run = run.with_event(event)
        return run if ok else run.with_warning(text)


def _level_text(lv: LevelResult) -> str:
    text = f"reads {_worst_text(lv.worst)}"
    if lv.worst_commits is not None:
        text += f"; writes {_worst_text(lv.worst_commits)}"
    return text


def _check_device_names(named: Sequence[str], target: Any, where: str) -> None:
    """ACT's device-names must be the --target devices (ssdlab takes its devices from --target)."""
    import os

    members = list(getattr(target, "members", None) or [target])
    paths = [str(getattr(t, "path", "") or getattr(t, "spec", "")) for t in members]
    given = sorted(os.path.realpath(n) for n in named)
    have = sorted(os.path.realpath(p) for p in paths if p)
    if given != have:
        hint = " ".join(f"--target {n}" for n in named)
        raise UsageError(f"device-names in {where} ({', '.join(named)}) are not the --target devices "
                         f"({', '.join(paths) or target.name}): ssdlab takes devices from --target; run with {hint}")


register(ActSuite())
