"""Pieces shared by the SNIA PTS 2.0 suites: options, purge and WIPC points, the round structure, and the
analysis of stored rounds (steady state per tracking variable, window averages) that next_points, conclude
and the report all use. Pure: everything here reads a PlanContext and a stored Run, never a device.

Point ids: <test>-0-purge, <test>-0-wipc, <test>-r<NN>-<stimulus key> (rounds from 1), wsat-s<NNNN>.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from ssdlab import metrics
from ssdlab.analysis import steady
from ssdlab.analysis.steady import Determination
from ssdlab.errors import UsageError
from ssdlab.results.events import SteadyStateEvent, VerdictEvent
from ssdlab.results.model import PointResult, Run, TestPoint, Workload
from ssdlab.results.request import RunRequest
from ssdlab.results.tags import PointTags
from ssdlab.suites.base import PlanContext, SuiteOption, common_limits, traits_of
from ssdlab.units import format_bs, format_bytes, format_duration

KiB = 1024
SPEC_VERSION = "SNIA SSS PTS 2.0.2"
SPEC_RUNTIME_S = 60.0  # every PTS test point runs 1 minute
WIPC_BS = 128 * KiB
WIPC_FACTOR = 2  # WIPC writes 2x the active range


def _memo_hash(obj: Any) -> int:
    """The hash a frozen dataclass would compute (of its fields' values, in order), computed once per object:
    settings and tests key the caches that plans, analyses and ETAs look up after every point."""
    known: int | None = obj.__dict__.get("_hash")
    if known is None:
        known = hash(tuple(getattr(obj, f.name) for f in dataclasses.fields(obj)))
        object.__setattr__(obj, "_hash", known)  # a memo of immutable data, not state
    return known


def _without_hash(obj: Any) -> dict[str, Any]:
    """The pickled state of an object with a _memo_hash (string hashes differ from process to process)."""
    return {k: v for k, v in obj.__dict__.items() if k != "_hash"}


@dataclass(frozen=True)
class SpecDefaults:
    active_range_pct: float
    write_cache: str  # "disabled" (WCD) | "enabled" (WCE)
    threads: int
    qd: int


SPECS = {
    "E": SpecDefaults(active_range_pct=100.0, write_cache="disabled", threads=4, qd=32),
    "C": SpecDefaults(active_range_pct=75.0, write_cache="enabled", threads=2, qd=16),
}

# data pattern -> extra engine options (fio fills buffers with random data by default)
DATA_PATTERNS: dict[str, dict[str, str]] = {
    "random": {},
    "random-refill": {"refill_buffers": "1"},
    "zeros": {"zero_buffers": "1"},
}


def pts_options() -> list[SuiteOption]:
    """The options every PTS suite accepts (values land in ctx.options); each test adds its own (family.py)."""
    return [
        SuiteOption("spec", "str", "E", "PTS variant: E (enterprise: AR 100%%, write cache off, T4Q32) or "
                    "C (client: AR 75%%, write cache on, T2Q16)", choices=("E", "C")),
        SuiteOption("tq", "str", None, "threads x queue depth per thread, e.g. 4x32 (default from --spec)"),
        SuiteOption("max-rounds", "int", 25, "rounds before a test stops without steady state (spec: 25)"),
        SuiteOption("active-range", "float", None, "active range in percent of the capacity (default from --spec)"),
        SuiteOption("until-steady", "flag", False, "keep running rounds past --max-rounds until steady state"),
        SuiteOption("purge", "str", None, "purge method (e.g. nvme-format, nvme-sanitize, blkdiscard, punch, "
                    "recreate); default: the best the target offers"),
        SuiteOption("data-pattern", "str", "random", "data written: random (spec), random-refill, zeros",
                    choices=tuple(DATA_PATTERNS)),
        SuiteOption("pts-header", "toml", None, "TOML file with the report header's test sponsor, auditor, "
                    "revision, dates, device and platform details (docs/pts.md); stored with the run"),
    ]


@dataclass(frozen=True)
class PtsSettings:
    """The parsed options of one PTS run, everything the report header lists."""

    spec: str
    threads: int
    qd: int
    active_range_pct: float
    active_range_bytes: int
    write_cache: str
    max_rounds: int
    until_steady: bool
    purge: str  # "" = best available, chosen by the target at run time
    data_pattern: str
    runtime_s: float
    ramp_s: float
    capacity: int
    logical_block_size: int
    target_kind: str
    block_sizes: tuple[int, ...] | None = None  # pts-iops matrix override
    mixes: tuple[int, ...] | None = None  # read percentages
    wsat_fills: float = 4.0
    wsat_hours: float = 24.0
    options: tuple[tuple[str, Any], ...] = ()  # every suite option as given (tests parse their own from it)

    def __hash__(self) -> int:
        return _memo_hash(self)

    def __getstate__(self) -> dict[str, Any]:
        return _without_hash(self)

    def option(self, key: str, default: Any = None) -> Any:
        """A suite option by key (e.g. 'hir_waits'); `default` when absent or None."""
        for k, v in self.options:
            if k == key:
                return default if v is None else v
        return default

    @property
    def toio(self) -> int:
        return self.threads * self.qd

    @property
    def tq(self) -> str:
        return f"T{self.threads}Q{self.qd}"

    def pattern_options(self) -> dict[str, str]:
        return dict(DATA_PATTERNS[self.data_pattern])

    def scaled_reasons(self, run_options: RunRequest | None = None,
                       target: dict[str, Any] | None = None) -> list[str]:
        """Why this run is not spec-compliant (empty: compliant as far as ssdlab can tell)."""
        out = []
        if self.runtime_s < SPEC_RUNTIME_S:
            out.append(f"test points run {self.runtime_s:g} s instead of 60 s")
        if traits_of(self.target_kind).not_device:
            out.append(traits_of(self.target_kind).not_device)
        t = target or {}
        device = t.get("device_bytes")
        o = run_options or RunRequest()
        if o.capacity and (device is None or int(o.capacity) < int(device)):
            out.append(f"--capacity limits the test to {format_bytes(int(o.capacity))} of the target")
        if o.footprint:
            out.append(f"--footprint {o.footprint} limits the test to part of the target")
        if self.data_pattern != "random":
            out.append(f"data pattern {self.data_pattern} (the spec requires random data)")
        if self.block_sizes is not None or self.mixes is not None:
            out.append("the IOPS block-size x mix matrix was reduced (--pts-block-sizes / --pts-mixes)")
        lat_minutes = float(self.option("lat_hist_minutes", 20.0))
        if lat_minutes < 20.0:
            out.append(f"LAT histogram captures last {lat_minutes:g} spec minutes instead of 20 (--lat-hist-minutes)")
        wsat_minutes = float(self.option("wsat_hist_minutes", 20.0))
        if wsat_minutes < 20.0:
            out.append(f"the WSAT histogram capture lasts {wsat_minutes:g} spec minutes instead of 20 "
                       "(--wsat-hist-minutes)")
        return out


def _parse_tq(text: str) -> tuple[int, int]:
    parts = text.lower().replace("t", "").replace("q", "x").split("x")
    parts = [p for p in parts if p]
    try:
        threads, qd = (int(p) for p in parts)
    except ValueError:
        raise UsageError(f"--tq {text!r}: use THREADSxDEPTH, e.g. 4x32") from None
    if not (1 <= threads <= 256 and 1 <= qd <= 4096):
        raise UsageError(f"--tq {text!r} is out of range (threads 1-256, depth 1-4096)")
    return threads, qd


def _parse_list(text: str, what: str, conv: Callable[[str], int], example: str) -> tuple[int, ...]:
    parsed = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            parsed.append(conv(part))
        except (ValueError, UsageError):
            raise UsageError(f"--{what} {text!r}: {part!r} is not {example}") from None
    values = tuple(parsed)
    if not values or len(set(values)) != len(values):
        raise UsageError(f"--{what} {text!r}: give distinct values")
    return values


def _kib(text: str) -> int:
    """A block size in KiB (0.5, 4, 1024) or with its unit (512, 4k, 1m: fio's notation)."""
    if text[-1:].isalpha():
        from ssdlab.units import parse_size

        return parse_size(text)
    v = float(text)
    b = round(v * KiB)
    if b <= 0 or b != v * KiB:
        raise ValueError(text)
    return b


def parse_mix(text: str) -> int:
    """A read/write mix ('65/35' or '65') as its read percentage; ValueError when it is not one."""
    r, _, w = text.partition("/")
    read = int(r)
    if not 0 <= read <= 100 or (w and int(w) != 100 - read):
        raise ValueError(text)
    return read


def settings(ctx: PlanContext) -> PtsSettings:
    """Validated settings from the context; bad values raise UsageError (one line)."""
    o = ctx.options
    spec = str(o.get("spec") or "E").upper()
    if spec not in SPECS:
        raise UsageError(f"--spec {spec!r}: use E or C")
    d = SPECS[spec]
    threads, qd = _parse_tq(str(o["tq"])) if o.get("tq") else (d.threads, d.qd)
    ar = float(o["active_range"]) if o.get("active_range") is not None else d.active_range_pct
    if not 0 < ar <= 100:
        raise UsageError(f"--active-range {ar:g} must be in (0, 100] percent")
    max_rounds = int(o.get("max_rounds") or 25)
    if max_rounds < steady.WINDOW:
        raise UsageError(f"--max-rounds {max_rounds} must be at least {steady.WINDOW} (the measurement window)")
    if ctx.traits.null_engine:
        raise UsageError("PTS suites need a target that stores data (a device, a file or a simulated SSD), "
                         "not the null engine")
    ar_bytes = _active_range_bytes(ctx, ar)
    pattern, bss, mixes = _stimulus_options(o)
    fills, hours = _wsat_limits(o)
    return PtsSettings(
        spec=spec, threads=threads, qd=qd, active_range_pct=ar, active_range_bytes=ar_bytes,
        write_cache=d.write_cache, max_rounds=max_rounds, until_steady=bool(o.get("until_steady")),
        purge=str(o.get("purge") or ""), data_pattern=pattern,
        runtime_s=ctx.runtime_s if ctx.runtime_s is not None else SPEC_RUNTIME_S, ramp_s=ctx.ramp_s or 0.0,
        capacity=ctx.capacity, logical_block_size=ctx.logical_block_size, target_kind=ctx.target_kind,
        block_sizes=bss, mixes=mixes, wsat_fills=fills, wsat_hours=hours,
        options=tuple(sorted((str(k), _frozen(v)) for k, v in o.items())),
    )


def _active_range_bytes(ctx: PlanContext, ar: float) -> int:
    """The active range in bytes: `ar` percent of the capacity, aligned to 1 MiB (to 4 KiB or the logical
    block size below 4 MiB)."""
    ar_bytes = int(ctx.capacity * ar / 100)
    align = 1024 * KiB if ar_bytes >= 4 * 1024 * KiB else max(4096, ctx.logical_block_size)
    ar_bytes -= ar_bytes % align
    if ar_bytes <= 0:
        raise UsageError(f"active range {ar:g}% of {format_bytes(ctx.capacity)} is empty")
    return ar_bytes


def _stimulus_options(o: Mapping[str, Any]) -> tuple[str, tuple[int, ...] | None, tuple[int, ...] | None]:
    """--pts-header checked; the data pattern, and the block sizes and read mixes that replace the spec's."""
    from ssdlab.suites.pts import header  # validates --pts-header

    header.parse(o.get("pts_header"))
    pattern = str(o.get("data_pattern") or "random")
    if pattern not in DATA_PATTERNS:
        raise UsageError(f"--data-pattern {pattern!r}: use one of {', '.join(DATA_PATTERNS)}")
    bss = mixes = None
    if o.get("pts_block_sizes"):
        bss = _parse_list(str(o["pts_block_sizes"]), "pts-block-sizes", _kib,
                          "a block size in KiB (e.g. 1024,64,4,0.5) or with its unit (4k)")
    if o.get("pts_mixes"):
        mixes = _parse_list(str(o["pts_mixes"]), "pts-mixes", parse_mix, "a read/write mix (e.g. 100/0,65/35)")
    return pattern, bss, mixes


def _wsat_limits(o: Mapping[str, Any]) -> tuple[float, float]:
    """WSAT's stop rule: drive fills and hours."""
    fills = float(o.get("wsat_fills") or 4.0)
    hours = float(o.get("wsat_hours") or 24.0)
    if not (0 < fills < math.inf and 0 < hours < math.inf):
        raise UsageError(f"--wsat-fills {fills:g} and --wsat-hours {hours:g} must be positive and finite")
    return fills, hours


def _frozen(value: Any) -> Any:
    """A hashable copy of an option value (repeatable options are lists, a 'toml' option is a table)."""
    if isinstance(value, dict):
        return tuple(sorted((str(k), _frozen(v)) for k, v in value.items()))
    return tuple(_frozen(v) for v in value) if isinstance(value, list) else value


# ------------------------------------------------------------------ stimuli, tests, points

def mix_label(read_pct: int) -> str:
    """R/W mix as the spec writes it: '65/35'."""
    return f"{read_pct}/{100 - read_pct}"


def bs_label(bs: int) -> str:
    """Block size in KiB as the spec writes it: '0.5 KiB', '4 KiB', '1024 KiB'."""
    kib = bs / KiB
    return f"{kib:g} KiB"


@dataclass(frozen=True)
class Stimulus:
    """One test point of a round."""

    key: str
    access: str  # "RND" | "SEQ"
    bs: int
    read_pct: int

    @property
    def label(self) -> str:
        return f"{self.access} {bs_label(self.bs)} {mix_label(self.read_pct)}"

    def rw(self) -> str:
        prefix = "rand" if self.access == "RND" else ""
        if self.read_pct == 100:
            return prefix + "read"
        if self.read_pct == 0:
            return prefix + "write"
        return "randrw" if self.access == "RND" else "rw"


@functools.lru_cache(maxsize=1024)
def stimulus(access: str, bs: int, read_pct: int) -> Stimulus:
    """A stimulus with its stable key ('rnd4k-65-35', 'seq128k-100-0', 'rnd512-0-100'); built once per
    arguments (stimuli are immutable; the matrices are asked for after every point)."""
    return Stimulus(key=f"{access.lower()}{format_bs(bs).lower()}-{read_pct}-{100 - read_pct}", access=access,
                    bs=bs, read_pct=read_pct)


@dataclass(frozen=True)
class Tracker:
    """A steady-state tracking variable: a metric of one stimulus, one value per round."""

    name: str
    key: str  # stimulus key
    metric: str  # a metric name (ssdlab.metrics)
    unit: str


@dataclass(frozen=True)
class RoundTest:
    """One PTS test run as purge -> WIPC -> rounds until steady state (IOPS, TP 128K/1024K, LAT)."""

    name: str  # point id prefix: iops, tp128, tp1024, lat
    title: str
    stimuli: Callable[[PtsSettings], list[Stimulus]]
    trackers: Callable[[PtsSettings], list[Tracker]]
    metric: str  # the metric tabulated per stimulus
    wipc_bs: int = WIPC_BS
    fixed_tq: tuple[int, int] | None = None  # LAT: T1Q1
    seq_single_stream: bool = True  # SEQ stimuli run as one stream at iodepth = TOIO
    # points run once the rounds have ended (steady or not; not after an invalid point): LAT's histogram captures
    captures: Callable[[PtsSettings], list[TestPoint]] | None = None

    def __hash__(self) -> int:
        return _memo_hash(self)

    def __getstate__(self) -> dict[str, Any]:
        return _without_hash(self)

    def tq(self, s: PtsSettings) -> tuple[int, int]:
        return self.fixed_tq or (s.threads, s.qd)


def purge_point(test: str, s: PtsSettings) -> TestPoint:
    """The purge step (not I/O: the target does it); records the method and the write-cache request."""
    return TestPoint(
        id=f"{test}-0-purge", label=f"{test.upper()} purge ({s.purge or 'best available'})",
        workload=Workload(rw="write", bs=max(4096, s.logical_block_size)), phase="purge", group=test,
        tags=PointTags.of(test=test, method=s.purge, write_cache=s.write_cache),
    )


def wipc_point(test: str, s: PtsSettings, bs: int = WIPC_BS) -> TestPoint:
    """Workload-independent preconditioning: 2x the active range of SEQ writes, one sequential stream
    at the run's total outstanding I/O (T x Q)."""
    return TestPoint(
        id=f"{test}-0-wipc", label=f"{test.upper()} WIPC: SEQ {bs_label(bs)} W, 2x active range",
        workload=Workload(rw="write", bs=bs, iodepth=s.toio, numjobs=1, io_bytes=WIPC_FACTOR * s.active_range_bytes,
                          size=s.active_range_bytes, options=s.pattern_options()),
        phase="precondition", group=test,
        tags=PointTags.of(test=test, amount_bytes=WIPC_FACTOR * s.active_range_bytes, bs=bs),
    )


def round_point(test: RoundTest, s: PtsSettings, r: int, st: Stimulus) -> TestPoint:
    """The point of stimulus `st` in round `r`."""
    return TestPoint(
        id=f"{test.name}-r{r:02d}-{st.key}", label=f"{test.title} R{r} {st.label}",
        workload=_round_workload(test, s, st), phase="measure", group=test.name,
        tags=PointTags.of(test=test.name, round=r, key=st.key, access=st.access, bs=st.bs, read_pct=st.read_pct),
    )


@functools.lru_cache(maxsize=1024)
def _round_workload(test: RoundTest, s: PtsSettings, st: Stimulus) -> Workload:
    """The workload of stimulus `st`, the same in every round (one object: what is worked out from a workload,
    such as its fio options, is worked out once)."""
    threads, qd = test.tq(s)
    if st.access == "SEQ" and test.seq_single_stream:
        threads, qd = 1, threads * qd
    return Workload(rw=st.rw(), bs=st.bs, iodepth=qd, numjobs=threads,
                    rwmixread=st.read_pct if st.rw() in ("randrw", "rw") else None,
                    runtime_s=s.runtime_s, ramp_s=s.ramp_s, size=s.active_range_bytes, options=s.pattern_options())


@functools.lru_cache(maxsize=4096)
def _round_points(test: RoundTest, s: PtsSettings, r: int) -> tuple[TestPoint, ...]:
    """Round r's points, built once per (test, settings, round): next_points, analyse and the ETA ask for
    the same rounds after every point, and points are immutable."""
    return tuple(round_point(test, s, r, st) for st in test.stimuli(s))


def round_points(test: RoundTest, s: PtsSettings, r: int) -> list[TestPoint]:
    return list(_round_points(test, s, r))


def setup_points(test: RoundTest, s: PtsSettings) -> list[TestPoint]:
    return list(_setup_points(test, s))


@functools.lru_cache(maxsize=256)
def _setup_points(test: RoundTest, s: PtsSettings) -> tuple[TestPoint, ...]:
    """The purge and WIPC points of a test, built once per (test, settings), as _round_points."""
    return (purge_point(test.name, s), wipc_point(test.name, s, test.wipc_bs))


def plan_round_test(test: RoundTest, s: PtsSettings) -> list[TestPoint]:
    """Worst case: purge, WIPC, max-rounds full rounds and the captures after them."""
    pts = setup_points(test, s)
    for r in range(1, s.max_rounds + 1):
        pts.extend(round_points(test, s, r))
    return pts + capture_points(test, s)


def capture_points(test: RoundTest, s: PtsSettings) -> list[TestPoint]:
    return list(_capture_points(test, s)) if test.captures is not None else []


@functools.lru_cache(maxsize=256)
def _capture_points(test: RoundTest, s: PtsSettings) -> tuple[TestPoint, ...]:
    """The points run after a test's rounds, built once per (test, settings), as _round_points."""
    assert test.captures is not None
    return tuple(test.captures(s))


# ------------------------------------------------------------------ metrics

def _response_time(name: str, pr: PointResult) -> float | None:
    m = pr.measurement
    return metrics.get(name).read(metrics.Reading(m)) if m is not None else None


def art_us(pr: PointResult) -> float | None:
    """Average response time (fio completion latency) over all I/Os of the point, µs (ssdlab.metrics: art)."""
    return _response_time("art", pr)


def mrt_us(pr: PointResult) -> float | None:
    """Maximum response time over all I/Os of the point, µs (ssdlab.metrics: mrt)."""
    return _response_time("mrt", pr)


def nines_us(pr: PointResult) -> float | None:
    """The 99.999th percentile of the response time over all I/Os, µs (ssdlab.metrics: nines)."""
    return _response_time("nines", pr)


def metric_value(metric: str, pr: PointResult | None) -> float | None:
    """A metric of a stored point (ssdlab.metrics: iops, mbps, art, mrt, nines); None when the point is missing,
    skipped or measured nothing (no positive, finite value)."""
    v = metrics.value(metric, pr)
    return v if v is not None and v > 0 and math.isfinite(v) else None


# ------------------------------------------------------------------ analysis of stored rounds

@dataclass(frozen=True)
class TestState:
    """What the stored points say about one round test."""

    test: RoundTest
    setup_done: bool
    rounds_done: int  # complete rounds, 1..n
    tracking: dict[str, list[float | None]]  # tracker name -> value per complete round
    finished: bool
    steady: bool
    window_end: int | None  # round x of the window x-4..x (None: no window yet)
    determinations: dict[str, Determination] = field(default_factory=dict)
    note: str = ""
    invalid: tuple[str, ...] = ()  # ids of invalid points: the test stopped there, incomplete (never steady)
    # several devices at once (one host or a host group): rounds run in lockstep on all of them, and steady
    # state is judged per device: device key -> tracker name -> value per round / determination of the window
    device_tracking: dict[str, dict[str, list[float | None]]] = field(default_factory=dict)
    device_determinations: dict[str, dict[str, Determination]] = field(default_factory=dict)

    @property
    def window(self) -> list[int]:
        if self.window_end is None:
            return []
        return list(range(self.window_end - steady.WINDOW + 1, self.window_end + 1))




def window_steady(values: Sequence[float | None], x: int) -> Determination | None:
    """Determination of rounds x-4 ... x (values holds rounds 1..n); None when a round lacks a value."""
    window = tuple(values[x - steady.WINDOW:x])
    if any(v is None for v in window):
        return None
    return determine_window(window, x)


@functools.lru_cache(maxsize=65536)
def determine_window(window: tuple[float, ...], x: int) -> Determination:
    """steady.determine (exact rational arithmetic, about a millisecond) once per window: analyse() goes over
    every round of a test each time a point finishes."""
    return steady.determine(list(window), list(range(x - steady.WINDOW + 1, x + 1)))


def device_results(pr: PointResult | None) -> dict[str, PointResult]:
    """A multi-device point's devices as point results of their own (key 'host:device'; failed ones left out)."""
    if pr is None or pr.measurement is None:
        return {}
    return {p.key: dataclasses.replace(pr, measurement=p.measurement) for p in pr.measurement.parts
            if p.status == "ok" and p.measurement is not None}


def _active_devices(device_tracking: dict[str, dict[str, list[float | None]]]) -> list[str]:
    """Devices with a value of every tracker in the last round (a device that left the run is not judged)."""
    return [k for k, per in device_tracking.items() if per and all(v and v[-1] is not None for v in per.values())]


def _device_windows(device_tracking: dict[str, dict[str, list[float | None]]], r: int
                    ) -> dict[str, dict[str, Determination | None]]:
    return {k: {name: window_steady(vals, r) for name, vals in device_tracking[k].items()}
            for k in _active_devices(device_tracking)}


def invalid_note(pr: PointResult) -> str:
    """The note of a test that an invalid point ended (verdict.py: it measured too little)."""
    return f"incomplete: {pr.point.label} is invalid ({pr.reason.removeprefix('invalid: ')})"


# analyse() of each (test, settings): the ids whose results it read, those results, the ids of the round after
# the last complete one (None when the state does not depend on it), and the state
_ANALYSED: dict[tuple[RoundTest, PtsSettings], tuple[tuple[str, ...], tuple[PointResult | None, ...],
                                                     tuple[str, ...] | None, TestState]] = {}
_ANALYSED_MAX = 64


def analyse(test: RoundTest, s: PtsSettings, run: Run) -> TestState:
    """Complete rounds, tracking values, and the steady-state decision after each complete round.

    On several devices at once the rounds run in lockstep and the decision is per device: a round ends the
    test when every device still in the run is steady in the window ending there (the aggregate's own
    determination is kept for the report).

    The state is a function of the finished results at the test's set-up points and complete rounds, and,
    while the test goes on, of the round after them being incomplete (all the analysis reads): while those
    are the same, the last state is returned again (the run loop asks after every point)."""
    res = run.finished_by_id()
    key = (test, s)
    memo = _ANALYSED.get(key)
    if memo is not None and tuple(map(res.get, memo[0])) == memo[1] and \
            (memo[2] is None or not all(map(res.__contains__, memo[2]))):
        return memo[3]
    state = _analyse(test, s, res)
    rounds = range(1, state.rounds_done + 1)
    ids = tuple(p.id for p in _setup_points(test, s)) + tuple(
        p.id for r in rounds for p in _round_points(test, s, r)) + tuple(
        f"{test.name}-r{r:02d}-{t.key}" for r in rounds for t in test.trackers(s))  # (among them, normally)
    after = None if state.finished else tuple(p.id for p in _round_points(test, s, state.rounds_done + 1))
    if len(_ANALYSED) >= _ANALYSED_MAX:
        _ANALYSED.clear()
    _ANALYSED[key] = (ids, tuple(map(res.get, ids)), after, state)
    return state


def _analyse(test: RoundTest, s: PtsSettings, res: dict[str, PointResult]) -> TestState:
    """analyse() from the run's finished results by id (Run.finished_by_id): round after complete round until
    one decides the test (steady, or the last round), or the stored results end."""
    setup = setup_points(test, s)
    bad_setup = tuple(p.id for p in setup if p.id in res and res[p.id].status == "invalid")
    if bad_setup:
        note = f"incomplete: {res[bad_setup[0]].point.label} is invalid ({res[bad_setup[0]].reason})"
        return TestState(test, True, 0, {t.name: [] for t in test.trackers(s)}, True, False, None, {}, note,
                         bad_setup)
    setup_done = all(p.id in res for p in setup)
    rounds = _Rounds(test, test.trackers(s))
    while setup_done and all(p.id in res for p in _round_points(test, s, rounds.r + 1)):
        rounds.add(res)
        decided = _decided(test, s, res, rounds)
        if decided is not None:
            return decided
    r = rounds.r
    window_end = r if r >= steady.WINDOW else None
    dets, dev_dets = rounds.windows() if window_end is not None else ({}, {})
    note = "not finished: the run stopped before the test did" if setup_done or r else "not started"
    return rounds.state(False, False, window_end, dets, dev_dets, note, setup_done=setup_done)


def _decided(test: RoundTest, s: PtsSettings, res: Mapping[str, PointResult], rounds: _Rounds) -> TestState | None:
    """The test's state when its last complete round decides it: a point of it invalid (incomplete), steady
    state in the window ending there, or the last round (--max-rounds); None: it goes on."""
    r = rounds.r
    invalid = tuple(p.id for p in _round_points(test, s, r) if res[p.id].status == "invalid")
    if invalid:  # a round with a point that measured too little cannot be judged: the test ends incomplete
        return TestState(test, True, r, rounds.tracking, True, False, r if r >= steady.WINDOW else None, {},
                         invalid_note(res[invalid[0]]), invalid)
    if r < steady.WINDOW:
        return None
    dets, dev_dets = rounds.windows()
    ok = rounds.steady(dets, dev_dets)
    if not ok and (r < s.max_rounds or s.until_steady):
        return None
    note = f"steady state reached at round {r}" if ok else \
        f"SS NOT ACHIEVED within {r} rounds: rounds {r - 4}-{r} reported as the window"
    if ok and rounds.devices:
        note += f" on every device ({len(dev_dets)})"
    return rounds.state(True, ok, r, dets, dev_dets, note)


Windows = dict[str, Determination | None]  # tracker name -> determination of the window (None: a value missing)


class _Rounds:
    """A round test's tracker values, complete round after complete round: the aggregate's and, on several
    devices at once, each device's (a device without a result in a round, e.g. one that left, has None)."""

    def __init__(self, test: RoundTest, trackers: Sequence[Tracker]) -> None:
        self.test, self.trackers = test, trackers
        self.tracking: dict[str, list[float | None]] = {t.name: [] for t in trackers}
        self.devices: dict[str, dict[str, list[float | None]]] = {}
        self.r = 0

    def add(self, res: Mapping[str, PointResult]) -> None:
        """Take the next round's values."""
        self.r += 1
        r = self.r
        for t in self.trackers:
            pr = res.get(f"{self.test.name}-r{r:02d}-{t.key}")
            self.tracking[t.name].append(metric_value(t.metric, pr))
            for key, dpr in device_results(pr).items():
                per = self.devices.setdefault(key, {tr.name: [None] * (r - 1) for tr in self.trackers})
                per[t.name].append(metric_value(t.metric, dpr))
        for per in self.devices.values():  # a device without a result this round (it left the run)
            for vals in per.values():
                vals.extend([None] * (r - len(vals)))

    def windows(self) -> tuple[Windows, dict[str, Windows]]:
        """The determinations of the window ending at the last round: the aggregate's and each active device's."""
        return ({name: window_steady(vals, self.r) for name, vals in self.tracking.items()},
                _device_windows(self.devices, self.r))

    def steady(self, dets: Windows, dev_dets: dict[str, Windows]) -> bool:
        """Steady in that window: every tracker (on several devices: every device still in the run)."""
        if self.devices:
            return bool(dev_dets) and all(d is not None and d.steady for per in dev_dets.values()
                                          for d in per.values())
        return all(d is not None and d.steady for d in dets.values())

    def state(self, finished: bool, ok: bool, window_end: int | None, dets: Windows,
              dev_dets: dict[str, Windows], note: str, *, setup_done: bool = True) -> TestState:
        """The test's state after these rounds, with the window's determinations found."""
        return TestState(self.test, setup_done, self.r, self.tracking, finished, ok, window_end, _found(dets), note,
                         device_tracking=self.devices,
                         device_determinations={k: _found(per) for k, per in dev_dets.items()})


def _found(dets: Windows) -> dict[str, Determination]:
    return {k: d for k, d in dets.items() if d is not None}


def remaining_round_test(test: RoundTest, s: PtsSettings, run: Run) -> list[TestPoint]:
    """Points still to run for one test: the unfinished round first, then the worst case after it."""
    done = run.done_ids()
    setup = [p for p in setup_points(test, s) if p.id not in done]
    if setup:
        return setup + [p for r in range(1, s.max_rounds + 1) for p in round_points(test, s, r)] + \
            capture_points(test, s)
    state = analyse(test, s, run)
    if state.finished:
        return [] if state.invalid else [p for p in capture_points(test, s) if p.id not in done]
    r = state.rounds_done + 1
    out = [p for p in round_points(test, s, r) if p.id not in done]
    for later in range(r + 1, s.max_rounds + 1):
        out.extend(round_points(test, s, later))
    return out + capture_points(test, s)


def round_test_outlook(test: RoundTest, s: PtsSettings, run: Run, expect_rounds: int
                       ) -> tuple[list[tuple[TestPoint, int]], list[tuple[TestPoint, int]], TestState | None]:
    """What one test has left, as (worst, expected) runs of points (see suites.base.Outlook), and its analysed state
    (None before its set-up is done). Expected: the test stops at round `expect_rounds`, or at the next round
    when it has run that many without steady state (any round from the fifth on may be the steady one)."""
    done = run.done_ids()
    setup = [(p, 1) for p in setup_points(test, s) if p.id not in done]

    def cap(rounds: int) -> int:  # --until-steady runs past max-rounds
        return rounds if s.until_steady else min(rounds, s.max_rounds)

    if setup:
        first = _round_points(test, s, 1)
        caps = [(p, 1) for p in capture_points(test, s)]
        return (setup + [(p, s.max_rounds) for p in first] + caps,
                setup + [(p, cap(expect_rounds)) for p in first] + caps, None)
    state = analyse(test, s, run)
    if state.finished:  # the captures run after the rounds (none after an invalid point)
        left = [] if state.invalid else [(p, 1) for p in capture_points(test, s) if p.id not in done]
        return left, list(left), state
    caps = [(p, 1) for p in capture_points(test, s)]
    r = state.rounds_done + 1
    current = [(p, 1) for p in _round_points(test, s, r) if p.id not in done]
    later_worst = max(0, s.max_rounds - r)
    if too_noisy(state.tracking):  # rounds this far apart rarely settle: expect the test to run to its maximum
        expect_rounds = max(expect_rounds, s.max_rounds)
    later_expected = max(0, cap(max(expect_rounds, r)) - r)
    after = _round_points(test, s, r + 1)
    return (current + ([(p, later_worst) for p in after] if later_worst else []) + caps,
            current + ([(p, later_expected) for p in after] if later_expected else []) + caps, state)


def too_noisy(tracking: Mapping[str, Sequence[float | None]]) -> bool:
    """Whether a test's rounds so far scatter beyond what a steady window allows: a tracking variable whose
    last rounds (up to steady.WINDOW) turn back on themselves by more than half the range criterion (up by
    more than 10 % of their average, then down by as much, or the other way). Such a test (a noisy target: a
    file on a busy host) is expected to run to its maximum rounds; a trend, however steep or sharply it levels
    off (a drive leaving FOB), never turns back and is not noise."""
    half = float(steady.RANGE_LIMIT) / 2
    for values in tracking.values():
        last = [v for v in values[-steady.WINDOW:] if v is not None]
        if len(last) < 3 or sum(last) <= 0:
            continue
        big = half * sum(last) / len(last)
        steps = [b - a for a, b in itertools.pairwise(last)]
        if any(abs(a) > big and abs(b) > big and (a > 0) != (b > 0) for a, b in itertools.pairwise(steps)):
            return True
    return False


def expected_rounds(finished: Sequence[int]) -> int:
    """Rounds a PTS test is expected to need: the median of the tests this run has finished, or, before any,
    the first possible measurement window (steady.WINDOW rounds)."""
    if not finished:
        return steady.WINDOW
    ordered = sorted(finished)
    return max(steady.WINDOW, ordered[len(ordered) // 2])


def window_average(test: RoundTest, state: TestState, run: Run, key: str, metric: str) -> float | None:
    """Average of a stimulus's metric over the window rounds (None if any window round lacks it)."""
    if not state.window:
        return None
    res = run.finished_by_id()
    vals = [metric_value(metric, res.get(f"{test.name}-r{r:02d}-{key}")) for r in state.window]
    known = [v for v in vals if v is not None]
    return sum(known) / len(known) if known and len(known) == len(vals) else None


def per_round(test: RoundTest, run: Run, key: str, metric: str, rounds: int) -> list[float | None]:
    """A stimulus's metric in rounds 1..rounds."""
    res = run.finished_by_id()
    return [metric_value(metric, res.get(f"{test.name}-r{r:02d}-{key}")) for r in range(1, rounds + 1)]


# ------------------------------------------------------------------ one round test in a suite

def round_conclude(t: RoundTest, s: PtsSettings, run: Run) -> Run:
    """Record the steady-state determination of one round test; warn when it did not reach steady state."""
    state = analyse(t, s, run)
    event = SteadyStateEvent.of(
        kind="pts-steady-state", test=t.name, steady=state.steady, window=state.window, note=state.note,
        determinations={k: det_record(d) for k, d in state.determinations.items()},
    )
    if state.device_determinations:  # per device: the test was judged on each of them
        event = event.replace(devices={dev: {k: det_record(d) for k, d in per.items()}
                                       for dev, per in state.device_determinations.items()})
    run = run.with_event(event)
    run = run.with_event(test_verdict_event(t, state))
    if state.finished and not state.steady and not state.invalid:
        run = run.with_warning(f"{t.title}: SS NOT ACHIEVED after {state.rounds_done} rounds; rounds "
                               f"{state.window[0]}-{state.window[-1]} are reported as the window")
    return run


def round_notes(t: RoundTest, s: PtsSettings) -> list[str]:
    """The plan lines of one round test: worst case, stop rule, purge and WIPC."""
    n = len(t.stimuli(s))
    per_round = n * (s.runtime_s + s.ramp_s)
    return [f"{t.title}: worst case {s.max_rounds} rounds x {n} points = {s.max_rounds * n} points, "
            f"{s.max_rounds} x {format_duration(per_round)} = {format_duration(s.max_rounds * per_round)} of I/O "
            "(the device's time, not the run's: the estimate above is), "
            f"stopping at the first round where steady state holds (from round {steady.WINDOW})"
            + ("; continues past the maximum until steady (--until-steady)" if s.until_steady else ""),
            f"  plus purge ({s.purge or 'best available method'}, write cache {s.write_cache}) and "
            f"WIPC: SEQ {bs_label(t.wipc_bs)} writes of {format_bytes(2 * s.active_range_bytes)} "
            f"(2x active range; at 1 GB/s that takes {format_duration(2 * s.active_range_bytes / 1e9)})"] + \
        ([f"  then {len(caps)} response-time histogram capture(s): " + ", ".join(p.label for p in caps)]
         if (caps := capture_points(t, s)) else [])


def test_verdict_event(test: RoundTest, state: TestState) -> VerdictEvent:
    """The verdict event of one round test (verdict.py): steady at round N, not steady, or incomplete."""
    from ssdlab.results import verdict

    if state.steady and state.window:
        return verdict.verdict_event(test.name, test.title, "steady", f"rounds {state.window[0]}-"
                                     f"{state.window[-1]} meet the range and slope criteria for "
                                     f"{len(state.determinations)} tracking variable(s)", round=state.window_end)
    if state.finished and not state.invalid and state.window:
        failing = [f"{name}: range {d.range_pct:.1f}% (max 20%), slope excursion {d.excursion_pct:.1f}% (max 10%)"
                   for name, d in state.determinations.items() if not d.steady]
        return verdict.verdict_event(test.name, test.title, "not-steady",
                                     f"SS NOT ACHIEVED in {state.rounds_done} rounds; window rounds "
                                     f"{state.window[0]}-{state.window[-1]}" + ("; " + "; ".join(failing)
                                                                                  if failing else ""))
    return verdict.verdict_event(test.name, test.title, "incomplete", state.note.removeprefix("incomplete: "))


def det_record(d: Determination) -> dict[str, Any]:
    """A determination as the pts-steady-state event stores it."""
    return {"steady": d.steady, "range_pct": round(d.range_pct, 3), "excursion_pct": round(d.excursion_pct, 3),
            "fit": d.formula()}


def common_notes(s: PtsSettings) -> list[str]:
    """Set-up lines shared by all PTS plans."""
    notes = [f"{SPEC_VERSION} PTS-{s.spec}: active range {s.active_range_pct:g}% "
             f"({format_bytes(s.active_range_bytes)}), {s.tq} (TOIO {s.toio}), data {s.data_pattern}"]
    reasons = s.scaled_reasons()
    if reasons:
        notes.append("SCALED RUN, not spec-compliant: " + "; ".join(reasons))
    return notes


def scaled_warning(run: Run, s: PtsSettings) -> Run:
    """Add the plain 'not spec-compliant' warning to a scaled run."""
    reasons = s.scaled_reasons(run.options, dict(run.target))
    if reasons:
        run = run.with_warning("scaled run, NOT SNIA PTS compliant: " + "; ".join(reasons))
    return run


def settings_from_run(run: Run) -> PtsSettings:
    """Settings of a stored run (the report re-derives them from run.json, as resume does)."""
    o = run.options
    t = run.target
    lbs = int(t.get("logical_block_size") or 512)
    # the active capacity as the run and its resume computed it (run/setup.plan_context: --footprint, --misalign)
    capacity, _, _ = common_limits(int(t.get("capacity_bytes") or 0), lbs, o.footprint, o.misalign)
    ctx = PlanContext(capacity=capacity, logical_block_size=lbs, target_kind=str(t.get("kind") or "file"),
                      runtime_s=o.runtime_s, ramp_s=o.ramp_s, options=dict(o.suite_options))
    return settings(ctx)


# ------------------------------------------------------------------ a run's progress, followed as it grows
#
# The run loop asks a test for its outlook after every one of a run's thousands of points; scanning the run each
# time makes a test quadratic. A test that keeps what it learned from a run follows it as it grows instead: a run
# handed in after the last one is the last one with points appended (Run.with_point), and only those are read;
# anything else (another run, a point replaced anywhere) starts over from its first point. Telling the two apart
# compares the runs' point tuples, the same objects when points were appended: pointers compared in C, some
# microseconds for thousands of points. What a test keeps is a memo of a scan of the run, not state.

class Followed(Protocol):
    """What a test keeps of a run it follows: at least the run's points as last seen."""

    points: tuple[PointResult, ...]


_K = TypeVar("_K")
_P = TypeVar("_P", bound=Followed)


class RunFollower(Generic[_K, _P]):
    """A test's memo of the runs it follows, one per key (its settings), a few at once (a run has one)."""

    def __init__(self, fresh: Callable[[_K], _P], feed: Callable[[_K, _P, Sequence[PointResult]], None],
                 limit: int = 16) -> None:
        self._fresh = fresh  # what the test keeps of an empty run
        self._feed = feed  # takes in points appended to the run
        self._limit = limit
        self._memo: dict[_K, _P] = {}

    def follow(self, key: _K, run: Run) -> _P:
        """What the test keeps of `run`, brought up to date."""
        points = run.points
        kept = self._memo.get(key)
        seen = len(kept.points) if kept is not None else 0
        if kept is None or len(points) < seen or points[:seen] != kept.points:
            if kept is None and len(self._memo) >= self._limit:
                self._memo.clear()
            kept = self._memo[key] = self._fresh(key)
            seen = 0
        if len(points) > seen:
            self._feed(key, kept, points[seen:])
            kept.points = points
        return kept
