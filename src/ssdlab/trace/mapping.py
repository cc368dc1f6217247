"""A trace made ready for a target (pure): what a replay asks (ReplaySpec, stored with the point), the trace it
names read once per process and checked against the hash the plan recorded, and its I/Os placed on the target's
devices (all of the trace on each device, or striped across them) with offsets mapped into each device's span:
refused when they do not fit (the default), wrapped round, or scaled down."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UsageError
from ssdlab.trace.model import OP_NAMES, Trace
from ssdlab.units import format_bytes

I64 = npt.NDArray[np.int64]
MAPS = ("refuse", "wrap", "scale")


@dataclass(frozen=True)
class ReplaySpec:
    """What a replay point asks: the trace (absolute path, format, volume, blktrace event, content hash), the
    timing (speed: 1.0 the trace's own, 2.0 twice as fast, None as fast as possible), the depth (streams of queue
    depth 1: at most this many I/Os in flight), the address mapping, and on
    several devices whether the trace is striped across them (`split`) or each device replays all of it."""

    trace: str
    format: str | None = None
    volume: str | None = None
    event: str = "Q"
    speed: float | None = 1.0
    depth: int = 16
    map: str = "refuse"
    split: bool = False
    stripe: int = 1024 * 1024
    sha256: str = ""
    no_trims: bool = False

    @property
    def timed(self) -> bool:
        return self.speed is not None

    def to_tags(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_tags(cls, tags: Mapping[str, Any]) -> ReplaySpec:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in tags.items() if k in names})

    def mode_text(self) -> str:
        if self.speed is None:
            return f"as fast as possible, up to {self.depth} I/Os in flight"
        timing = "original timing" if self.speed == 1.0 else f"{self.speed:g}x the original rate"
        return f"{timing}, up to {self.depth} I/Os in flight"


def parse_speed(text: str | float | None) -> float | None:
    """--speed: '1' (default, the trace's timing), '2x' / '0.5x' (scaled), 'max' (as fast as possible)."""
    if text is None:
        return 1.0
    value = str(text).strip().lower()
    if value in ("max", "afap", "inf"):
        return None
    try:
        speed = float(value.removesuffix("x"))
    except ValueError:
        raise UsageError(f"--speed {text}: use a factor (1, 2x, 0.5x) or max (as fast as possible)") from None
    if not 0.01 <= speed <= 1000 or abs(speed * 100 - round(speed * 100)) > 1e-6:
        raise UsageError(f"--speed {text}: use a factor from 0.01x to 1000x in steps of 0.01 (fio's "
                         "replay_time_scale is a whole percentage), or max")
    return speed


def file_hash(path: str) -> str:
    """sha256 of the trace's file(s) (blktrace's per-CPU files in order), remembered per file state."""
    from ssdlab.trace.formats import trace_files

    files = trace_files(Path(path))
    return _hash(tuple((str(f), *_state(f)) for f in files))


def _state(f: Path) -> tuple[int, int]:
    st = f.stat()
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=8)
def _hash(files: tuple[tuple[str, int, int], ...]) -> str:
    h = hashlib.sha256()
    for name, _, _ in files:
        with Path(name).open("rb") as fh:
            while chunk := fh.read(1 << 22):
                h.update(chunk)
    return h.hexdigest()


def load_trace(spec: ReplaySpec) -> Trace:
    """The spec's trace (its volume only), read once per process while the file stays as it was; a file whose
    content no longer matches the hash the plan recorded is refused."""
    from ssdlab.trace.formats import trace_files

    files = trace_files(Path(spec.trace))
    key = tuple((str(f), *_state(f)) for f in files)
    trace = _load(key, spec.trace, spec.format, spec.volume, spec.event)
    if spec.sha256 and _hash(key) != spec.sha256:
        raise UsageError(f"trace {spec.trace} changed since the run was planned (its sha256 differs): replay the "
                         "file the run was planned with, or start a new run")
    if spec.no_trims and trace.has_trims:
        trace = trace.take(trace.op != 2, note="trims left out (--no-trims)")
    return trace


@functools.lru_cache(maxsize=2)
def _load(key: tuple[tuple[str, int, int], ...], path: str, fmt: str | None, volume: str | None,
          event: str) -> Trace:
    from ssdlab.trace.formats import load

    return load(path, fmt, volume=volume, event=event)


def check_single_volume(trace: Trace) -> None:
    """A replay needs one address space: a trace of several volumes is refused unless one is picked."""
    vols = trace.volume_counts()
    if len(vols) > 1:
        top = ", ".join(f"{v} ({n} I/Os)" for v, n in vols[:5])
        raise UsageError(f"{trace.path} holds {len(vols)} volumes, each its own address space: replay one with "
                         f"--volume NAME (most I/Os: {top})")


# ---------------------------------------------------------------- placement

@dataclass(frozen=True)
class Placement:
    """One device's share of a replay: the trace's rows it replays (in time order) and their offsets there."""

    rows: I64
    offset: I64

    def counts(self, trace: Trace) -> dict[str, tuple[int, int]]:
        op = trace.op[self.rows]
        size = trace.size[self.rows]
        n = np.bincount(op, minlength=3)
        b = np.bincount(op, weights=size, minlength=3)
        return {name: (int(n[i]), int(b[i])) for i, name in enumerate(OP_NAMES)}


def place(trace: Trace, spec: ReplaySpec, spans: list[int], align: int, target: str) -> list[Placement]:
    """The trace's I/Os on each device (`spans`: each device's usable bytes), offsets mapped by spec.map and
    aligned to `align` (the logical block size direct I/O needs; 1 for none). Sizes that are not a multiple of
    `align`, an I/O larger than a device's span and, with map 'refuse', an I/O beyond it are one line."""
    if len(trace) and bool(np.any(trace.size % align)):
        bad = int(np.count_nonzero(trace.size % align))
        first = int(trace.size[np.argmax(trace.size % align != 0)])
        raise UsageError(f"{trace.path}: {bad} I/Os have sizes that are not a multiple of {target}'s logical block "
                         f"size ({align} B; the first is {first} B), which direct I/O cannot do: replay on a "
                         "target with smaller blocks, or on the simulator")
    n = len(spans)
    rows = np.arange(len(trace), dtype=np.int64)
    if n > 1 and spec.split:
        stripe = int(spec.stripe)
        dev = (trace.offset // stripe) % n
        local = (trace.offset // (stripe * n)) * stripe + trace.offset % stripe
        return [_mapped(trace, rows[dev == d], local[dev == d], spans[d], spec, align, target, f"device {d}")
                for d in range(n)]
    return [_mapped(trace, rows, trace.offset, span, spec, align, target, "") for span in spans]


def _mapped(trace: Trace, rows: I64, offset: I64, span: int, spec: ReplaySpec, align: int, target: str,
            where: str) -> Placement:
    size = trace.size[rows]
    if size.size and int(size.max()) > span:
        raise UsageError(f"{trace.path}: an I/O of {int(size.max())} B is larger than {target}'s span "
                         f"({span} B)")
    end = offset + size
    top = int(end.max()) if end.size else 0
    if spec.map == "refuse":
        if top > span:
            raise UsageError(
                f"{trace.path}: the trace addresses up to byte {top} ({format_bytes(top)}) but {target}"
                f"{' ' + where if where else ''} offers {span} B ({format_bytes(span)}): pass --map wrap (offsets "
                "modulo the span) or --map scale (offsets scaled into it), or a larger target")
        if offset.size and bool(np.any(offset % align)):
            raise UsageError(f"{trace.path}: {int(np.count_nonzero(offset % align))} I/Os start at offsets that "
                             f"are not a multiple of {target}'s logical block size ({align} B): pass --map wrap or "
                             "--map scale to align them")
        return Placement(rows, offset)
    if spec.map == "wrap":
        mapped = offset % span
    elif spec.map == "scale":
        factor = min(1.0, span / top) if top else 1.0
        mapped = np.floor(offset * factor).astype(np.int64)
    else:
        raise UsageError(f"--map {spec.map}: use one of {', '.join(MAPS)}")
    mapped -= mapped % align
    over = mapped + size > span
    mapped = np.where(over, (span - size) - (span - size) % align, mapped)
    return Placement(rows, mapped.astype(np.int64))


def arrivals(trace: Trace, rows: I64, speed: float | None) -> I64:
    """Arrival times (ns from the start) of `rows` at `speed` (all 0 as fast as possible)."""
    if speed is None:
        return np.zeros(rows.shape[0], dtype=np.int64)
    t = trace.time_ns[rows]
    return t if speed == 1.0 else np.floor(t / speed).astype(np.int64)


def offered_per_interval(trace: Trace, counts: int, speed: float | None, interval_ms: int) -> list[float]:
    """I/Os per second the trace offers in each interval (1-based, as fio's logs end their intervals), times
    `counts` devices replaying it; [] as fast as possible (nothing is offered over time)."""
    if speed is None or not len(trace):
        return []
    t = arrivals(trace, np.arange(len(trace)), speed)
    k = t // (interval_ms * 1_000_000)
    per = np.bincount(k) * counts
    out: list[float] = (per / (interval_ms / 1000.0)).astype(float).tolist()
    return out


def replay_record(spec: ReplaySpec, trace: Trace, expected: list[dict[str, list[int]]],
                  replayed: Mapping[str, tuple[int, int]], replay_s: float) -> dict[str, Any]:
    """What a replay did against what the trace asks: I/Os and bytes per direction expected (summed over the
    devices) and replayed, what is missing, the offered and achieved rates and, timed, the slowdown against the
    trace's own timing (replay duration over the trace's, at the speed asked)."""
    exp = {d: [sum(dev[d][0] for dev in expected), sum(dev[d][1] for dev in expected)] for d in OP_NAMES}
    got = {d: [int(replayed.get(d, (0, 0))[0]), int(replayed.get(d, (0, 0))[1])] for d in OP_NAMES}
    missing = [f"{d}: {got[d][0]} of {exp[d][0]} I/Os, {got[d][1]} of {exp[d][1]} bytes" for d in OP_NAMES
               if got[d] != exp[d]]
    ios = sum(v[0] for v in exp.values())
    done = sum(v[0] for v in got.values())
    trace_s = trace.duration_ns / 1e9
    scaled = trace_s / spec.speed if spec.speed else 0.0
    rec: dict[str, Any] = {
        "mode": "timed" if spec.timed else "max", "speed": spec.speed, "depth": spec.depth, "map": spec.map,
        "devices": len(expected), "split": spec.split, "ios": ios, "expected": exp, "replayed": got,
        "missing": missing, "trace_s": trace_s, "replay_s": replay_s,
        "achieved_iops": done / replay_s if replay_s > 0 else None,
    }
    if spec.timed:
        rec["offered_iops"] = ios / scaled if scaled > 0 else None
        rec["scaled_trace_s"] = scaled
        rec["slowdown"] = replay_s / scaled if scaled > 0 else None
    else:
        rec["speedup"] = trace_s / replay_s if replay_s > 0 and trace_s > 0 else None
    return rec
