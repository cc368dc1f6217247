"""The one trace model: a columnar Trace of numpy arrays (time, offset, size, direction, optional response time
and volume), without a Python object per I/O, and the few operations every reader and consumer shares."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ssdlab.errors import UsageError

READ, WRITE, TRIM = 0, 1, 2
OP_NAMES = ("read", "write", "trim")

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
I32 = npt.NDArray[np.int32]


@dataclass(frozen=True, eq=False)
class Trace:
    """One block trace, one row per I/O in time order.

    `time_ns` is each I/O's arrival relative to the first one (0); `origin` says what absolute time that is, in
    the format's own terms (e.g. 'unix 1538352000 s'). `latency_ns` is the trace's own response time (-1 where the
    trace has none; None when it has none at all). `volume` indexes `volumes` (the device, volume or file each
    I/O went to) when the trace names several, else None."""

    path: str
    format: str
    time_ns: I64
    offset: I64  # bytes
    size: I64  # bytes
    op: U8  # READ, WRITE, TRIM
    latency_ns: I64 | None = None
    volume: I32 | None = None
    volumes: tuple[str, ...] = ()
    origin: str = ""
    notes: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.time_ns.shape[0])

    @property
    def duration_ns(self) -> int:
        return int(self.time_ns[-1]) if len(self) else 0

    def counts(self) -> dict[str, tuple[int, int]]:
        """(I/Os, bytes) per direction, every direction listed."""
        n = np.bincount(self.op, minlength=3)
        b = np.bincount(self.op, weights=self.size, minlength=3)
        return {name: (int(n[i]), int(b[i])) for i, name in enumerate(OP_NAMES)}

    @property
    def writes(self) -> bool:
        return bool(np.any(self.op != READ))

    @property
    def has_trims(self) -> bool:
        return bool(np.any(self.op == TRIM))

    @property
    def max_end(self) -> int:
        """The highest byte the trace addresses (offset + size), 0 for an empty trace."""
        return int((self.offset + self.size).max()) if len(self) else 0

    def take(self, keep: npt.NDArray[np.bool_] | I64, note: str = "") -> Trace:
        """The rows `keep` selects (a mask or indices), times made relative to the first kept one again."""
        t = self.time_ns[keep]
        base = int(t[0]) if t.shape[0] else 0
        return dataclasses.replace(
            self, time_ns=t - base, offset=self.offset[keep], size=self.size[keep], op=self.op[keep],
            latency_ns=None if self.latency_ns is None else self.latency_ns[keep],
            volume=None if self.volume is None else self.volume[keep],
            notes=(*self.notes, note) if note else self.notes)

    def volume_counts(self) -> list[tuple[str, int]]:
        """(volume, I/Os) of every volume, most I/Os first ([] when the trace names no volumes)."""
        if self.volume is None or not self.volumes:
            return []
        n = np.bincount(self.volume, minlength=len(self.volumes))
        order = np.argsort(-n, kind="stable")
        return [(self.volumes[i], int(n[i])) for i in order if n[i]]

    def only_volume(self, name: str) -> Trace:
        """The I/Os of one volume (the --volume filter); a name the trace does not hold is one line listing some
        that it does."""
        if self.volume is None or not self.volumes:
            raise UsageError(f"{self.path}: --volume {name}: this {self.format} trace names no volumes")
        try:
            index = self.volumes.index(name)
        except ValueError:
            known = ", ".join(v for v, _ in self.volume_counts()[:8])
            raise UsageError(f"{self.path}: no volume {name!r} in this trace (volumes with the most I/Os: "
                             f"{known})") from None
        out = self.take(self.volume == index, note=f"volume {name} only")
        return dataclasses.replace(out, volume=None, volumes=(name,))


def duration_text(seconds: float) -> str:
    """A trace's duration for people: milliseconds below a second (short traces are common), else h/m/s."""
    if seconds < 1.0:
        return f"{seconds * 1000:.3g} ms"
    from ssdlab.units import format_duration

    return format_duration(seconds)


def make_trace(path: str, fmt: str, time: I64, offset: I64, size: I64, op: U8, *, latency: I64 | None = None,
               volume: I32 | None = None, volumes: tuple[str, ...] = (), origin_value: int = 0, origin_unit: str = "",
               notes: tuple[str, ...] = ()) -> Trace:
    """A Trace from a reader's columns (times in ns, any origin): in time order (a stable sort when the file was
    not), times relative to the first I/O, and the origin recorded."""
    notes_list = list(notes)
    if time.shape[0] > 1 and bool(np.any(time[1:] < time[:-1])):
        order = np.argsort(time, kind="stable")
        time, offset, size, op = time[order], offset[order], size[order], op[order]
        latency = None if latency is None else latency[order]
        volume = None if volume is None else volume[order]
        notes_list.append("the file was not in time order: sorted by arrival time")
    base = int(time[0]) if time.shape[0] else 0
    origin = f"{origin_unit} {origin_value}".strip() if origin_unit else ""
    return Trace(path=path, format=fmt, time_ns=(time - base).astype(np.int64, copy=False),
                 offset=offset.astype(np.int64, copy=False), size=size.astype(np.int64, copy=False),
                 op=op.astype(np.uint8, copy=False), latency_ns=latency, volume=volume, volumes=volumes,
                 origin=origin, notes=tuple(notes_list), meta={"t0_ns": base})
