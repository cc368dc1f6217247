"""The result model: Run -> PointResult -> Measurement -> DirectionStats -> LatencyStats.

All classes are frozen dataclasses; a run evolves by building a new Run (`with_point`, `with_status`).
`run.json` is the serialised Run. Renderers read only this model, so any stored run can be re-rendered.

Schema history (bump SCHEMA_VERSION on any incompatible change and keep a loader for old versions):
  1  first version (ssdlab 0.1): run, target, host, points with workload, measurement, bins.
     Extended compatibly: point status "invalid" (a finished point that completed too few I/Os, kept with its
     measurement; see verdict.py) and "verdict" run events; runs without them load unchanged.
     Also additive (older readers ignore it, older runs load with the default): Measurement.parts, each
     device's own measurement when a point ran on several devices or hosts at once (the measurement itself
     is their exact aggregate).
     Also compatible (absent in older runs, ignored by older readers): Run.health (drive
     snapshots before/after, temperature samples, write-cache/power-state changes; targets/session.py) and
     Measurement.extra.host_cpu / .host_limit (CPU utilisation and the host-limit flag; hostload.py).
  2  a run directory also holds a points log (points.jsonl, store.py): points finished since run.json was
     written are records there, one per line, until the run folds them in. The run and point shapes are
     unchanged, so a version-1 run.json loads as it is. Additive in version 2: TestPoint.continuous (the
     continuous stimulus a sample belongs to) and TestPoint.idle_before_s (host idle before a point, PTS HIR).

Loading (run_from_dict) gives every open-ended object its type as it was stored: the run's options a RunRequest
(results/request.py; keys a run lacks, e.g. schema 1's on_error, read as their defaults and are not added),
point tags a PointTags (tags.py), events their kind's RunEvent (events.py; the earlier verdict shape and schema
1's steady-state-only PTS runs read as verdicts there), Measurement.extra a MeasurementExtra (extra.py). Each
writes back exactly what it loaded, so run.json's content is unchanged and no schema bump was needed.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from ssdlab.errors import StoredResultsError
from ssdlab.results import shape
from ssdlab.results.events import EVENT_CLASSES, RunEvent, event_from_dict
from ssdlab.results.extra import MeasurementExtra
from ssdlab.results.record import Record, RecordField
from ssdlab.results.request import RunRequest
from ssdlab.results.tags import PointTags

T = TypeVar("T")

SCHEMA_VERSION = 2
READABLE_VERSIONS = (1, 2)  # schema versions run_from_dict loads

RunStatus = Literal["running", "complete", "interrupted", "failed"]
PointStatus = Literal["ok", "failed", "skipped", "invalid"]  # invalid: finished, measured too little (verdict.py)
FINISHED: tuple[PointStatus, ...] = ("ok", "skipped", "invalid")  # never run again (resume, adaptive suites)
PartStatus = Literal["ok", "failed"]
Direction = Literal["read", "write", "trim"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim")

JSONDict = dict[str, Any]


@dataclass(frozen=True)
class LatencyStats:
    """One latency distribution (fio's clat unless `kind` says otherwise), in ns."""

    kind: str  # "clat" | "lat" | "slat"
    n: int
    min_ns: float
    max_ns: float
    mean_ns: float
    stddev_ns: float
    percentiles_ns: Mapping[str, float]  # fio's own reported percentiles, key "99.99"
    bins: tuple[tuple[int, int], ...] = ()  # sparse (bucket index, count); empty without json+

    def percentile(self, p: float) -> float | None:
        """Percentile from bins (fio's rule) when present, else fio's reported value when listed."""
        return self.percentiles([p])[p]

    def percentiles(self, ps: Sequence[float]) -> dict[float, float | None]:
        """Several percentiles at once (the bins are expanded once): the one way to read them from bins.

        A bin's value is its midpoint, which can lie above the largest (or below the smallest) latency that
        fell into it; values are clamped to the observed [min, max], so p99.99 never exceeds the maximum."""
        if self.bins:
            from ssdlab.results import hist

            counts = self.__dict__.get("_counts")  # the bins expanded once per object (a memo, not state)
            if counts is None:
                counts = hist.counts_from_sparse(self.bins)
                counts.flags.writeable = False
                object.__setattr__(self, "_counts", counts)
            # fio ranks against its sample count N (which can exceed the bins' sum by one in status output)
            found = hist.percentiles(counts, ps, total=self.n or None)
            return {p: self.clamp(float(found.get(p, 0))) for p in ps}
        return {p: None if (v := self.percentiles_ns.get(percentile_key(p))) is None else self.clamp(v) for p in ps}

    def clamp(self, value_ns: float) -> float:
        """A percentile read from bins, limited to the observed [min, max] (when they are known)."""
        if self.n > 0 and self.max_ns > 0 and self.max_ns >= self.min_ns:
            return min(max(value_ns, self.min_ns), self.max_ns)
        return value_ns


@dataclass(frozen=True)
class DirectionStats:
    iops: float
    bw_bytes: float  # bytes per second
    io_bytes: int
    total_ios: int
    runtime_ms: int
    clat: LatencyStats | None = None
    lat: LatencyStats | None = None

    @property
    def bw_mbps(self) -> float:
        """Decimal MB/s (10^6 bytes), as storage reviews and CrystalDiskMark report throughput."""
        return self.bw_bytes / 1e6


@dataclass(frozen=True)
class Measurement:
    """What one test point measured; the same shape from every executor (fio or the simulator)."""

    engine: str  # "fio" | "sim"
    engine_version: str
    directions: Mapping[str, DirectionStats]
    usr_cpu: float = 0.0  # percent, mean over jobs (100 = one CPU busy per job)
    sys_cpu: float = 0.0
    jobs: int = 1
    runtime_ms: int = 0
    errors: int = 0
    series: Mapping[str, Sequence[float]] = field(default_factory=dict)  # optional time series
    # what else the point recorded (results/extra.py); given as the record or any mapping
    extra: RecordField[MeasurementExtra] = RecordField(MeasurementExtra)  # noqa: RUF009 (a descriptor: no call per instance)
    # a point on several devices (one host or a host group): each device's own result; the fields above are
    # then their exact aggregate (IOPS and bandwidth summed, latency histogram bins added)
    parts: tuple[PartResult, ...] = ()

    def get(self, direction: str) -> DirectionStats | None:
        return self.directions.get(direction)

    @property
    def total_iops(self) -> float:
        return sum(d.iops for d in self.directions.values())

    @property
    def total_bw_bytes(self) -> float:
        return sum(d.bw_bytes for d in self.directions.values())


@dataclass(frozen=True)
class PartResult:
    """One device's share of a point that ran on several devices at once: its measurement, or why it has none.

    `host` names the device's host as the inventory does ('' for the local host); `device` is the device as
    the user named it (/dev/nvme0n1, a file path, null)."""

    host: str
    device: str
    status: PartStatus = "ok"
    measurement: Measurement | None = None
    reason: str = ""

    @property
    def key(self) -> str:
        """'host:device', or the device alone on the local host: unique within a run."""
        return f"{self.host}:{self.device}" if self.host else self.device


@dataclass(frozen=True)
class Workload:
    """Executor-independent description of the I/O a point issues (fio options are derived from it)."""

    rw: str  # read write randread randwrite rw randrw trim randtrim
    bs: int
    iodepth: int = 1
    numjobs: int = 1
    rwmixread: int | None = None
    runtime_s: float | None = None  # time-based when set
    ramp_s: float = 0.0
    io_bytes: int | None = None  # amount per job when size-based (e.g. preconditioning)
    offset: int = 0
    size: int | None = None  # active range in bytes (None: the whole target)
    bssplit: str | None = None
    rate_iops: int | None = None
    random_distribution: str | None = None
    options: Mapping[str, str] = field(default_factory=dict)  # extra engine options, recorded verbatim
    log_interval_ms: int | None = None  # collect per-interval IOPS/MB/s/latency into Measurement.series
    hist_log_ms: int | None = None  # write fio histogram logs (clat) at this interval into the point dir

    @property
    def writes(self) -> bool:
        if self.rw in ("write", "randwrite", "trim", "randtrim", "trimwrite"):
            return True
        if self.rw in ("rw", "readwrite", "randrw"):
            return self.rwmixread is None or self.rwmixread < 100
        return False

    @property
    def is_random(self) -> bool:
        return self.rw.startswith("rand")

    @property
    def outstanding(self) -> int:
        return self.iodepth * self.numjobs


@dataclass(frozen=True)
class TestPoint:
    """One step of a plan. `id` names its directory under points/."""

    __test__ = False  # not a pytest test class

    id: str
    label: str
    workload: Workload
    phase: str = "measure"  # "measure" | "precondition" | "purge" | ...
    group: str = ""
    tags: PointTags = field(default_factory=PointTags)  # what the suite records about the point (results/tags.py)
    # several concurrent fio job sections (e.g. ACT's paced streams); tags.stream_names names them.
    # When set, `workload` is the first stream (summaries, skip checks) and every stream runs at once.
    streams: tuple[Workload, ...] = ()
    idle_before_s: float = 0.0  # host idle (no I/O) before the point starts, e.g. PTS HIR's wait states
    # a continuous stimulus: consecutive points with the same key and workload (and no idle before all but the
    # first) run as one fio run, each point one sample of it (PTS WSAT, XSR; executor.run_series)
    continuous: str = ""

    def __post_init__(self) -> None:
        tags: object = self.tags
        if type(tags) is not PointTags and not isinstance(tags, PointTags):  # their stored form (a mapping), as a
            # point built by hand may give it (the exact type test first: cheaper than isinstance on a Mapping)
            object.__setattr__(self, "tags", PointTags(tags if isinstance(tags, Mapping) else None))

    @property
    def est_seconds(self) -> float:
        w = self.workload
        if w.runtime_s is not None:
            return w.runtime_s + w.ramp_s + self.idle_before_s
        return self.idle_before_s


@dataclass(frozen=True)
class PointResult:
    point: TestPoint
    status: PointStatus
    started: str
    finished: str
    measurement: Measurement | None = None
    reason: str = ""
    warnings: tuple[str, ...] = ()
    attempt: int = 1


@dataclass(frozen=True)
class Run:
    schema_version: int
    ssdlab_version: str
    run_id: str
    suite: str
    status: RunStatus
    created: str
    options: RunRequest  # what the run was asked to do (results/request.py); run.json's "options"
    target: Mapping[str, Any]
    host: Mapping[str, Any]
    points: tuple[PointResult, ...] = ()
    finished: str = ""
    warnings: tuple[str, ...] = ()
    events: tuple[RunEvent, ...] = ()  # interruptions, resumes, notes, verdicts (results/events.py)
    health: Mapping[str, Any] = field(default_factory=dict)  # drive snapshots, samples, settings (session.py)

    def __post_init__(self) -> None:
        options: object = self.options
        if not isinstance(options, RunRequest):  # its stored form (a mapping), as a run built by hand may give it
            object.__setattr__(self, "options", RunRequest.from_dict(options))  # type: ignore[arg-type]
        if not all(type(e) in EVENT_CLASSES for e in self.events):  # (idem)
            object.__setattr__(self, "events", tuple(event_from_dict(e) for e in self.events))

    def with_point(self, result: PointResult) -> Run:
        """New run with `result` appended (a re-run of an id replaces the unfinished attempt). The lookups of
        finished_by_id() carry over, so adding a point costs the same however many came before."""
        index = self.finished_by_id()
        redo: set[str] = self.__dict__["_redo_ids"]
        pid = result.point.id
        kept = self.points
        if pid in redo:  # an earlier attempt that did not finish (or was skipped) is replaced
            kept = tuple(p for p in self.points if not (p.point.id == pid and p.status != "ok"))
        run = dataclasses.replace(self, points=(*kept, result))
        index = dict(index)
        if result.status in FINISHED:
            index[pid] = result
        else:
            index.pop(pid, None)
        redo = (redo | {pid}) if result.status != "ok" else (redo - {pid})
        object.__setattr__(run, "_finished_index", index)  # memos of immutable data, not state
        object.__setattr__(run, "_redo_ids", redo)
        return run

    def with_status(self, status: RunStatus, finished: str = "") -> Run:
        return dataclasses.replace(self, status=status, finished=finished or self.finished)

    def with_event(self, event: Mapping[str, Any]) -> Run:
        """New run with `event` (a RunEvent, or its stored form) appended."""
        return dataclasses.replace(self, events=(*self.events, event_from_dict(event)))

    def with_warning(self, text: str) -> Run:
        if text in self.warnings:
            return self
        return dataclasses.replace(self, warnings=(*self.warnings, text))

    def ok_points(self) -> list[PointResult]:
        return [p for p in self.points if p.status == "ok"]

    def finished_by_id(self) -> dict[str, PointResult]:
        """Finished (ok, skipped or invalid) results by point id, built once per Run: adaptive suites and reports
        look points up for every stimulus and round, which would otherwise rescan all points each time."""
        index: dict[str, PointResult] | None = self.__dict__.get("_finished_index")
        if index is None:
            index = {}
            for p in self.points:  # in order: a later result of an id stands (as with_point keeps it)
                if p.status in FINISHED:
                    index[p.point.id] = p
                else:
                    index.pop(p.point.id, None)
            object.__setattr__(self, "_finished_index", index)  # memos of immutable data, not state
            object.__setattr__(self, "_redo_ids", {p.point.id for p in self.points if p.status != "ok"})
        return index

    def attempts(self, point_id: str) -> int:
        """How many results the run holds for `point_id` (a failed attempt stays until the point runs again)."""
        if point_id not in self.finished_by_id() and point_id not in self.__dict__["_redo_ids"]:
            return 0  # the common case, without a scan
        return sum(1 for p in self.points if p.point.id == point_id)

    def done_ids(self) -> KeysView[str]:
        """Ids of the finished points, set-like: a view of finished_by_id's index (no copy; the run loop's
        suites test membership after every point)."""
        return self.finished_by_id().keys()

    def result(self, point_id: str) -> PointResult | None:
        for p in self.points:
            if p.point.id == point_id:
                return p
        return None


def engine_text(run: Run) -> str:
    """The engine that ran the points and its version ("fio-3.33", "ssdlab-sim 0.1.0"), as the headers show it."""
    name = str(run.host.get("engine") or "")
    version = str(run.host.get("engine_version") or "")
    if not name:
        for r in run.points:
            if r.measurement is not None:
                name, version = r.measurement.engine, r.measurement.engine_version
                break
    version = version.removeprefix(f"{name}-")
    if name and name in version:  # "ssdlab-sim 0.1.0" already names the engine
        return version
    return f"{name} {version}".strip() or "unknown"


@functools.lru_cache(maxsize=1024)
def percentile_key(p: float) -> str:
    """Canonical key for a percentile: 99.99 -> '99.99', 50 -> '50'."""
    return f"{p:.6f}".rstrip("0").rstrip(".")


# ---------------------------------------------------------------- serialisation

_PLAIN = frozenset({int, float, str, bool, type(None)})
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # dataclass -> its field names, in order


def to_dict(obj: Any) -> Any:
    """Plain JSON-ready structure from model objects (tuples become lists)."""
    kind = type(obj)
    if kind in _PLAIN:  # the common cases first: a point's latency bins are thousands of numbers
        return obj
    if kind is tuple or kind is list:
        return [v if type(v) in _PLAIN else to_dict(v) for v in obj]
    if kind is dict:
        return {str(k): v if type(v) in _PLAIN else to_dict(v) for k, v in obj.items()}
    names = _FIELD_NAMES.get(kind)
    if names is not None:  # a dataclass of the model
        if kind is LatencyStats:  # its bins are hundreds of (index, count) pairs per point
            return {name: _pairs(obj.bins) if name == "bins" else to_dict(getattr(obj, name)) for name in names}
        return {name: to_dict(getattr(obj, name)) for name in names}
    return _other_to_dict(obj, kind)


def _other_to_dict(obj: Any, kind: type) -> Any:
    """to_dict of what is not plain data nor a dataclass met before: the run request, a record (tags, events,
    extra: the stored object), a dataclass met for the first time, any other mapping or sequence."""
    if kind is RunRequest:
        return obj.to_dict()
    if isinstance(obj, Record):
        return {k: v if type(v) in _PLAIN else to_dict(v) for k, v in obj._data.items()}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        _FIELD_NAMES[kind] = tuple(f.name for f in dataclasses.fields(obj))
        return to_dict(obj)
    if isinstance(obj, Mapping):
        return {str(k): to_dict(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_dict(v) for v in obj]
    return obj


def _pairs(items: Sequence[Any]) -> list[Any]:
    """to_dict of a sequence of (int, int) pairs, with less work per pair (anything else: to_dict)."""
    return [[a, b] if type(p) is tuple and len(p) == 2 and type(a := p[0]) is int and type(b := p[1]) is int
            else to_dict(p) for p in items]


def _latency(d: Mapping[str, Any] | None) -> LatencyStats | None:
    if d is None:
        return None
    d = shape.mapping(d, "")
    return LatencyStats(
        kind=d["kind"], n=_int(d, "n"), min_ns=d["min_ns"], max_ns=d["max_ns"], mean_ns=d["mean_ns"],
        stddev_ns=d["stddev_ns"], percentiles_ns=dict(shape.mapping(d.get("percentiles_ns"), "percentiles_ns")),
        bins=_part("bins", _bins, d.get("bins") or []),
    )


def _bins(pairs: Sequence[Any]) -> tuple[tuple[int, int], ...]:
    if not isinstance(pairs, list | tuple):
        raise shape.ShapeError("", "expected a list of [bucket, count] pairs")
    return tuple((int(i), int(c)) for i, c in pairs)


def _int(d: Mapping[str, Any], key: str) -> int:
    """A whole number the document stores under `key` (a number with a fraction is cut, as int() does)."""
    value = d[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise shape.ShapeError(key, f"expected a whole number, found {shape.kind_of(value)}")
    return int(value)


def _direction(d: Mapping[str, Any]) -> DirectionStats:
    d = shape.mapping(d, "")
    return DirectionStats(
        iops=d["iops"], bw_bytes=d["bw_bytes"], io_bytes=_int(d, "io_bytes"), total_ios=_int(d, "total_ios"),
        runtime_ms=_int(d, "runtime_ms"), clat=_part("clat", _latency, d.get("clat")),
        lat=_part("lat", _latency, d.get("lat")),
    )


def measurement_from_dict(d: Mapping[str, Any]) -> Measurement:
    return Measurement(
        engine=d["engine"], engine_version=d["engine_version"],
        directions={k: _part(f"directions.{k}", _direction, v)
                    for k, v in shape.mapping(d["directions"], "directions").items()},
        usr_cpu=d.get("usr_cpu", 0.0), sys_cpu=d.get("sys_cpu", 0.0), jobs=d.get("jobs", 1),
        runtime_ms=d.get("runtime_ms", 0), errors=d.get("errors", 0),
        series={k: list(v) for k, v in shape.mapping(d.get("series"), "series").items()},
        extra=shape.mapping(d.get("extra"), "extra") or None,
        parts=shape.items(d.get("parts"), "parts", part_from_dict),
    )


def part_from_dict(d: Mapping[str, Any]) -> PartResult:
    m = d.get("measurement")
    return PartResult(host=str(d.get("host", "")), device=str(d["device"]), status=d.get("status", "ok"),
                      measurement=measurement_from_dict(m) if m else None, reason=str(d.get("reason", "")))


def workload_from_dict(d: Mapping[str, Any]) -> Workload:
    names = {f.name for f in dataclasses.fields(Workload)}
    kwargs = {k: v for k, v in d.items() if k in names}
    kwargs["options"] = dict(shape.mapping(d.get("options"), "options"))
    return Workload(**kwargs)


def point_from_dict(d: Mapping[str, Any]) -> TestPoint:
    return TestPoint(id=d["id"], label=d["label"],
                     workload=_part("workload", workload_from_dict, shape.mapping(d["workload"], "workload")),
                     phase=d.get("phase", "measure"), group=d.get("group", ""),
                     tags=PointTags(shape.mapping(d.get("tags"), "tags")),
                     streams=shape.items(d.get("streams"), "streams", workload_from_dict),
                     idle_before_s=float(d.get("idle_before_s", 0.0)), continuous=str(d.get("continuous", "")))


def point_result_from_dict(d: Mapping[str, Any]) -> PointResult:
    m = d.get("measurement")
    return PointResult(
        point=_part("point", point_from_dict, shape.mapping(d["point"], "point")), status=d["status"],
        started=d["started"], finished=d["finished"],
        measurement=_part("measurement", measurement_from_dict, shape.mapping(m, "measurement")) if m else None,
        reason=d.get("reason", ""), warnings=shape.items(d.get("warnings"), "warnings", _same),
        attempt=d.get("attempt", 1),
    )


def _same(v: Any) -> Any:
    return v


def _part(field: str, build: Callable[[Any], T], value: Any) -> T:
    """build(value), a failure's field placed under `field` (the loaders' errors name where they are)."""
    try:
        return build(value)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        inner, problem = shape.describe(exc)
        raise shape.ShapeError(f"{field}.{inner}" if inner else field, problem) from exc


def run_from_dict(d: Mapping[str, Any]) -> Run:
    version = d.get("schema_version")
    if type(version) is not int or version not in READABLE_VERSIONS:
        raise StoredResultsError(
            f"results schema {version!r} is not supported by this ssdlab (reads schema "
            f"{', '.join(map(str, READABLE_VERSIONS))}); upgrade ssdlab to read it"
        )
    try:
        return Run(
            schema_version=version, ssdlab_version=d["ssdlab_version"], run_id=d["run_id"], suite=d["suite"],
            status=d["status"], created=d["created"],
            options=_part("options", RunRequest.from_dict, shape.mapping(d.get("options"), "options")),
            target=dict(shape.mapping(d.get("target"), "target")), host=dict(shape.mapping(d.get("host"), "host")),
            points=shape.items(d.get("points"), "points", point_result_from_dict),
            finished=d.get("finished", ""), warnings=shape.items(d.get("warnings"), "warnings", _same),
            events=shape.items(d.get("events"), "events", lambda e: event_from_dict(shape.mapping(e, ""))),
            health=dict(shape.mapping(d.get("health"), "health")),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        field, problem = shape.describe(exc)
        raise shape.ShapeError(field, problem) from exc
