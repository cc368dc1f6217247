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
import sys
from collections.abc import Callable, Iterator, KeysView, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from ssdlab.errors import StoredResultsError
from ssdlab.results import shape
from ssdlab.results.bins import EMPTY, Bins
from ssdlab.results.events import EVENT_CLASSES, RunEvent, event_from_dict
from ssdlab.results.extra import MeasurementExtra
from ssdlab.results.record import Record, RecordField
from ssdlab.results.request import RunRequest
from ssdlab.results.tags import PointTags

T = TypeVar("T")

SCHEMA_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)  # schema versions run_from_dict loads

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
    bins: Bins = EMPTY  # sparse (bucket index, count) pairs, held compactly (bins.py); empty without json+

    def __post_init__(self) -> None:
        bins: object = self.bins
        if type(bins) is not Bins:  # given as pairs (a tuple or list of them): held compactly
            object.__setattr__(self, "bins", Bins.of(bins))  # type: ignore[arg-type]

    def percentile(self, p: float) -> float | None:
        """Percentile from bins (fio's rule) when present, else fio's reported value when listed."""
        return self.percentiles([p])[p]

    def percentiles(self, ps: Sequence[float]) -> dict[float, float | None]:
        """Several percentiles at once: the one way to read them from bins.

        A bin's value is its midpoint, which can lie above the largest (or below the smallest) latency that
        fell into it; values are clamped to the observed [min, max], so p99.99 never exceeds the maximum."""
        if self.bins:
            from ssdlab.results import sparsehist

            # fio ranks against its sample count N (which can exceed the bins' sum by one in status output)
            found = sparsehist.bins_percentiles(self.bins, ps, total=self.n or None)
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
    # (schema 3: stored in the point's directory and read from there when iterated; StoredParts)
    parts: Sequence[PartResult] = ()

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


PARTS_FILE = "parts.json"  # schema 3: a multi-device point's per-device results, in the point's directory
_PARTS_CACHE_SIZE = 8  # points whose parts stay read (a report walks one point's devices several times)


class StoredParts(Sequence[PartResult]):
    """A point's per-device results kept in its directory (schema 3): what every device is (host, device, status,
    reason: `heads`, small, shared between points with the same devices) stays in memory; the devices'
    measurements are read from `path` when the parts are iterated or indexed, and the last few points' parts
    stay read. So a run's memory does not grow with its devices."""

    __slots__ = ("heads", "path")

    def __init__(self, path: Path | None, heads: tuple[PartResult, ...]) -> None:
        self.path = path  # None: not stored where this run was read from (iterating raises StoredResultsError)
        self.heads = heads

    def load(self) -> tuple[PartResult, ...]:
        """Every device's result, measurement included (read from the point's directory)."""
        if self.path is None:
            raise StoredResultsError("this point's per-device results are not available (no run directory)")
        try:
            st = self.path.stat()
        except OSError as exc:
            raise StoredResultsError(f"cannot read {self.path}: {exc.strerror or exc}") from exc
        return _read_parts(str(self.path), st.st_mtime_ns, st.st_size)

    def __len__(self) -> int:
        return len(self.heads)

    def __bool__(self) -> bool:
        return bool(self.heads)

    @overload
    def __getitem__(self, i: int) -> PartResult: ...

    @overload
    def __getitem__(self, i: slice) -> Sequence[PartResult]: ...

    def __getitem__(self, i: int | slice) -> PartResult | Sequence[PartResult]:
        return self.load()[i]

    def __iter__(self) -> Iterator[PartResult]:
        return iter(self.load())

    def shape_view(self) -> tuple[PartResult, ...]:
        """What shape.check sees of these parts while loading a run: the heads (the file is checked when read)."""
        return self.heads

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StoredParts):
            return self.path == other.path and self.heads == other.heads
        if isinstance(other, tuple):
            return self.load() == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.path, self.heads))

    def __repr__(self) -> str:
        return f"StoredParts({str(self.path)!r}, {len(self.heads)} devices)"


@functools.lru_cache(maxsize=_PARTS_CACHE_SIZE)
def _read_parts(path: str, mtime_ns: int, size: int) -> tuple[PartResult, ...]:
    """The parts file of one point (its modification time and size in the key: a rewritten file is read again),
    checked against the model's shape as run.json is."""
    import json

    try:
        data = json.loads(Path(path).read_bytes())
    except OSError as exc:
        raise StoredResultsError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise shape.malformed(Path(path), "", f"not JSON ({exc})") from exc
    try:
        parts = shape.items(data, "", part_from_dict)
        for i, part in enumerate(parts):
            shape.check(part, f"[{i}]")
    except shape.ShapeError as exc:
        raise shape.malformed(Path(path), exc.field, exc.problem) from exc
    return parts


def part_heads(parts: Sequence[PartResult]) -> tuple[PartResult, ...]:
    """Host, device, status and reason of each device of a point, without reading their measurements (which may
    be absent: heads only)."""
    if isinstance(parts, StoredParts):
        return parts.heads
    return tuple(parts)


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
            return {name: obj.bins.to_json() if name == "bins" else to_dict(getattr(obj, name)) for name in names}
        return {name: to_dict(getattr(obj, name)) for name in names}
    return _other_to_dict(obj, kind)


def _other_to_dict(obj: Any, kind: type) -> Any:
    """to_dict of what is not plain data nor a dataclass met before: the run request, a record (tags, events,
    extra: the stored object), a dataclass met for the first time, any other mapping or sequence."""
    if kind is RunRequest:
        return obj.to_dict()
    if kind is Bins:
        return obj.to_json()
    if kind is StoredParts:  # the run itself: every device's result, as schema 1 and 2 held them inline
        return [to_dict(p) for p in obj]
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


def _latency(d: Mapping[str, Any] | None) -> LatencyStats | None:
    if d is None:
        return None
    d = shape.mapping(d, "")
    return LatencyStats(
        kind=d["kind"], n=_int(d, "n"), min_ns=d["min_ns"], max_ns=d["max_ns"], mean_ns=d["mean_ns"],
        stddev_ns=d["stddev_ns"], percentiles_ns=_interned(shape.mapping(d.get("percentiles_ns"), "percentiles_ns")),
        bins=_part("bins", _bins, d.get("bins") or []),
    )


def _interned(d: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `d` whose keys are the one copy of each text ("99.99" ...): every latency of a run has the same
    dozen keys, which JSON decoding makes anew for each point (~9 MB of a 6,000-point run)."""
    return {sys.intern(k) if type(k) is str else k: v for k, v in d.items()}


def _bins(pairs: Sequence[Any]) -> Bins:
    if not isinstance(pairs, list | tuple):
        raise shape.ShapeError("", "expected a list of [bucket, count] pairs")
    return Bins.of(pairs)


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


def measurement_from_dict(d: Mapping[str, Any], where: Path | tuple[Path, str] | None = None) -> Measurement:
    """A stored measurement; `where` is its point's directory, where schema 3 keeps the per-device results (or
    the run's directory and the point's id)."""
    parts = d.get("parts", ())
    if isinstance(parts, Mapping) and isinstance(where, tuple):
        where = where[0] / "points" / where[1]
    return Measurement(
        engine=d["engine"], engine_version=d["engine_version"],
        directions={k: _part(f"directions.{k}", _direction, v)
                    for k, v in shape.mapping(d["directions"], "directions").items()},
        usr_cpu=d.get("usr_cpu", 0.0), sys_cpu=d.get("sys_cpu", 0.0), jobs=d.get("jobs", 1),
        runtime_ms=d.get("runtime_ms", 0), errors=d.get("errors", 0),
        series={k: list(v) for k, v in shape.mapping(d.get("series"), "series").items()},
        extra=shape.mapping(d.get("extra"), "extra") or None,
        parts=_part("parts", lambda ref: stored_parts(ref, where), parts)
        if isinstance(parts, Mapping) and not isinstance(where, tuple)
        else shape.items(parts, "parts", part_from_dict),
    )


def part_from_dict(d: Mapping[str, Any]) -> PartResult:
    m = d.get("measurement")
    return PartResult(host=str(d.get("host", "")), device=str(d["device"]), status=d.get("status", "ok"),
                      measurement=measurement_from_dict(m) if m else None, reason=str(d.get("reason", "")))


_HEADS: dict[tuple[tuple[str, str, str, str], ...], tuple[PartResult, ...]] = {}  # one object per device list
_HEADS_MAX = 256


def stored_parts(ref: Mapping[str, Any], where: Path | None) -> StoredParts:
    """A schema-3 reference to a point's per-device results: {"file": "parts.json", "devices": [{"host", "device",
    "status", "reason"}, ...]} (status "ok" and an empty reason may be left out). Points with the same devices
    share one tuple of heads, so a run holds its device list once, not once per point."""
    name = str(ref["file"])
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        raise ValueError(f"parts file {name!r} is not a file name in the point's directory")
    key = tuple((str(h.get("host", "")), str(h["device"]), str(h.get("status", "ok")), str(h.get("reason", "")))
                for h in ref["devices"])
    heads = _HEADS.get(key)
    if heads is None:
        if len(_HEADS) >= _HEADS_MAX:
            _HEADS.clear()
        heads = _HEADS[key] = tuple(PartResult(host=h, device=dev, status=st, reason=why)  # type: ignore[arg-type]
                                    for h, dev, st, why in key)
    return StoredParts(where / name if where is not None else None, heads)


def parts_ref(parts: StoredParts) -> dict[str, Any]:
    """The stored form of a StoredParts (stored_parts reads it back)."""
    return {"file": parts.path.name if parts.path is not None else PARTS_FILE,
            "devices": [{"host": h.host, "device": h.device, "status": h.status, **({"reason": h.reason}
                                                                                   if h.reason else {})}
                        for h in parts.heads]}


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


def point_result_from_dict(d: Mapping[str, Any], run_dir: Path | None = None) -> PointResult:
    """A stored point result; `run_dir` is the run's directory (schema 3 keeps per-device results there)."""
    m = d.get("measurement")
    point = _part("point", point_from_dict, shape.mapping(d["point"], "point"))
    # the point's directory, unless its id is not a plain name there (then its parts, if any, cannot be read)
    plain = type(point.id) is str and point.id not in ("", ".", "..") and "/" not in point.id and "\\" not in point.id
    where = (run_dir, point.id) if run_dir is not None and plain else None
    return PointResult(
        point=point, status=d["status"], started=d["started"], finished=d["finished"],
        measurement=_part("measurement", lambda v: measurement_from_dict(v, where), shape.mapping(m, "measurement"))
        if m else None,
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


def run_from_dict(d: Mapping[str, Any], run_dir: Path | None = None) -> Run:
    """The stored run (`d`: run.json's object; its "points" may be any iterable of point objects, read once)."""
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
            points=shape.items(d.get("points"), "points", lambda p: point_result_from_dict(p, run_dir)),
            finished=d.get("finished", ""), warnings=shape.items(d.get("warnings"), "warnings", _same),
            events=shape.items(d.get("events"), "events", lambda e: event_from_dict(shape.mapping(e, ""))),
            health=dict(shape.mapping(d.get("health"), "health")),
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        field, problem = shape.describe(exc)
        raise shape.ShapeError(field, problem) from exc
