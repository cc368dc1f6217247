"""fio's periodic status output (`--status-interval=N` with json+): documents and per-interval rates.

fio prints one JSON document per status interval and the final one at the end; each holds cumulative counters
(I/Os, bytes and mean completion latency per direction, the job's run time in ms). The difference between
consecutive documents over their run time gives the interval's IOPS, MB/s and mean latency.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ssdlab.results import sparsehist
from ssdlab.results.live import LIVE_PERCENTILES, LiveSample
from ssdlab.results.sparsehist import Sparse


def documents(lines: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(text, parsed) of each JSON document in fio's output; a document ends with a line that is exactly '}'.
    Text between documents (fio's notes) and unparsable documents are skipped."""
    buf: list[str] = []
    for line in lines:
        if not buf and not line.startswith("{"):
            continue  # text between or before documents
        buf.append(line)
        if line.rstrip("\n") == "}":
            text = "".join(buf)
            buf = []
            try:
                doc = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(doc, dict):
                yield text, doc


def stream_documents(fd: int, chunk: int = 1 << 16) -> Iterator[tuple[str, dict[str, Any]]]:
    """documents() of what fio writes to the pipe `fd`, read in chunks as they come (not line by line: a json+
    status document is thousands of lines, and splitting them cost more CPU than the rest of a point's
    bookkeeping). The same documents: one starts at a line that begins with '{' and ends with a line that is
    exactly '}'; text between them is skipped."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    pending = ""
    start: int | None = None  # where the document being read starts in `pending`
    scanned = 0  # how far `pending` was searched for the document's end
    while True:
        data = os.read(fd, chunk)
        pending += decoder.decode(data, final=not data)
        while True:
            if start is None:
                start = 0 if pending.startswith("{") else (pending.find("\n{") + 1 or None)
                if start is None:
                    pending = pending[pending.rfind("\n") + 1:]  # text between documents: only a partial line kept
                    break
                pending, start, scanned = pending[start:], 0, 0
            end = pending.find("\n}\n", max(0, scanned - 2))
            if end < 0 and not data and pending.rstrip("\n").endswith("\n}"):
                end = len(pending.rstrip("\n")) - 2
            if end < 0:
                scanned = len(pending)
                break
            text, pending, start, scanned = pending[:end + 3], pending[end + 3:], None, 0
            if not text.endswith("\n"):
                text += "\n"
            try:
                doc = json.loads(text)
            except json.JSONDecodeError:
                continue
            if isinstance(doc, dict):
                yield text, doc
        if not data:
            return


class StatusRates:
    """Turns a stream of status documents into LiveSamples (None for a document that adds no run time).

    Besides the rates of the whole point, each sample carries the interval's mean latency per direction and
    its p99/p99.9/p99.99 (live.LIVE_PERCENTILES), from the difference of the jobs' cumulative histogram bins
    with fio's percentile rule, and, for a point on several devices (job sections `<...>-d<N>`), one sample
    per device."""

    def __init__(self) -> None:
        self._previous: dict[str, float] = {}
        self._groups: dict[int | None, _Group] = {}

    def feed(self, doc: Mapping[str, Any]) -> LiveSample | None:
        from ssdlab.fio.parse import status_totals

        now = status_totals(doc)
        if now["runtime_s"] <= 0:  # fio older than job_runtime: whole elapsed seconds
            now["runtime_s"] = now["elapsed_s"]
        dt = now["runtime_s"] - self._previous.get("runtime_s", 0.0)
        if dt <= 0:
            return None
        d = {k: now[k] - self._previous.get(k, 0.0) for k in now}
        self._previous = now
        ios = d["read_ios"] + d["write_ios"]
        groups = _groups_of(doc)
        deltas = {key: self._groups.setdefault(key, _Group()).advance(g) for key, g in groups.items()}
        whole = _Delta.total(list(deltas.values()))
        devices = sorted(k for k in deltas if k is not None)
        parts: tuple[LiveSample | None, ...] = ()
        if len(devices) > 1:
            parts = tuple(deltas[i].sample(dt, 0.0, 0.0) if i in deltas else None
                          for i in range(max(devices) + 1))
        return dataclasses.replace(
            whole.sample(dt, max(now["elapsed_s"], now["runtime_s"]), now["read_bytes"] + now["write_bytes"]),
            read_iops=d["read_ios"] / dt, write_iops=d["write_ios"] / dt, read_mbps=d["read_bytes"] / dt / 1e6,
            write_mbps=d["write_bytes"] / dt / 1e6,
            mean_lat_us=(d["lat_sum_ns"] / ios / 1000.0) if ios > 0 else 0.0, parts=parts, interval_s=dt)


_DIRECTIONS = ("read", "write")


@dataclass
class _Cumulative:
    """One direction of a group of jobs in one status document: cumulative I/Os, bytes, completion-latency sum,
    histogram counts and the observed latency range."""

    ios: float = 0.0
    io_bytes: float = 0.0
    lat_sum_ns: float = 0.0
    counts: Sparse | None = None  # bucket counts (sparsehist), None without bins
    lo_ns: float = float("inf")
    hi_ns: float = 0.0


@dataclass
class _Delta:
    """One interval of a group of jobs, per direction."""

    by_dir: dict[str, _Cumulative]

    @staticmethod
    def total(deltas: list[_Delta]) -> _Delta:
        out = {ddir: _Cumulative() for ddir in _DIRECTIONS}
        for delta in deltas:
            for ddir, c in delta.by_dir.items():
                o = out[ddir]
                o.ios += c.ios
                o.io_bytes += c.io_bytes
                o.lat_sum_ns += c.lat_sum_ns
                if c.counts is not None:
                    o.counts = c.counts if o.counts is None else sparsehist.add(o.counts, c.counts)
                o.lo_ns, o.hi_ns = min(o.lo_ns, c.lo_ns), max(o.hi_ns, c.hi_ns)
        return _Delta(out)

    def sample(self, dt: float, elapsed_s: float, bytes_done: float) -> LiveSample:
        r, w = self.by_dir["read"], self.by_dir["write"]
        return LiveSample(
            elapsed_s=elapsed_s, read_iops=r.ios / dt, write_iops=w.ios / dt, read_mbps=r.io_bytes / dt / 1e6,
            write_mbps=w.io_bytes / dt / 1e6,
            mean_lat_us=(r.lat_sum_ns + w.lat_sum_ns) / (r.ios + w.ios) / 1000.0 if r.ios + w.ios > 0 else 0.0,
            bytes_done=bytes_done, read_lat_us=_mean_us(r), write_lat_us=_mean_us(w), read_pcts_us=_pcts_us(r),
            write_pcts_us=_pcts_us(w))


def _mean_us(c: _Cumulative) -> float:
    return c.lat_sum_ns / c.ios / 1000.0 if c.ios > 0 else 0.0


def _pcts_us(c: _Cumulative) -> tuple[float, ...] | None:
    """The interval's percentiles (µs), clamped to the latency range the jobs observed (docs/results.md)."""
    if c.counts is None or c.ios <= 0 or sum(c.counts.values()) <= 0:
        return None
    found = sparsehist.percentiles(c.counts, LIVE_PERCENTILES)
    return tuple(min(max(float(found[p]), c.lo_ns), c.hi_ns) / 1000.0 for p in LIVE_PERCENTILES)


class _Group:
    """The previous cumulative counters of one group of jobs (a device, or every job of a one-device point)."""

    def __init__(self) -> None:
        self.previous: dict[str, _Cumulative] = {}

    def advance(self, now: dict[str, _Cumulative]) -> _Delta:
        out = {}
        for ddir in _DIRECTIONS:
            c, p = now[ddir], self.previous.get(ddir) or _Cumulative()
            counts = None
            if c.counts is not None:
                counts = sparsehist.subtract(c.counts, p.counts) if p.counts is not None else c.counts
            out[ddir] = _Cumulative(ios=c.ios - p.ios, io_bytes=c.io_bytes - p.io_bytes,
                                    lat_sum_ns=c.lat_sum_ns - p.lat_sum_ns, counts=counts, lo_ns=c.lo_ns,
                                    hi_ns=c.hi_ns)
        self.previous = now
        return _Delta(out)


def _groups_of(doc: Mapping[str, Any]) -> dict[int | None, dict[str, _Cumulative]]:
    """Cumulative counters per device (job sections named `<...>-d<N>`; None: jobs of no device section)."""
    from ssdlab.fio.parse import _jobs, _latency_block, device_index

    out: dict[int | None, dict[str, _Cumulative]] = {}
    for j in _jobs(doc):
        group = out.setdefault(device_index(str(j.get("jobname", ""))), {d: _Cumulative() for d in _DIRECTIONS})
        for ddir in _DIRECTIONS:
            p = j.get(ddir) or {}
            c = group[ddir]
            n = float(p.get("total_ios", 0) or 0)
            c.ios += n
            c.io_bytes += float(p.get("io_bytes", 0) or 0)
            block, scale = _latency_block(p, "clat")
            if not block:
                continue
            c.lat_sum_ns += float(block.get("mean", 0.0)) * scale * float(block.get("N", 0) or 0)
            if int(block.get("N", 0) or 0) > 0:
                c.lo_ns = min(c.lo_ns, float(block.get("min", 0)) * scale)
                c.hi_ns = max(c.hi_ns, float(block.get("max", 0)) * scale)
            bins = block.get("bins")
            if isinstance(bins, Mapping) and bins and scale == 1.0:
                counts = sparsehist.from_bins(bins)
                c.counts = counts if c.counts is None else sparsehist.add(c.counts, counts)
    return out
