"""Runs in progress, as the server follows them: found in the results root, read from their live record
(DIR/live.jsonl, run/liverecord.py) and points log, and handed to every browser that watches.

A run is in progress while its run.json says so and an ssdlab process holds its directory's lock (seen in
/proc/locks without touching the lock). The server reads only what each file gained since the last look (a
line counts once its newline is there), keeps the history in memory (at most MAX_SAMPLES samples: beyond that
every other one is dropped, as the drive-health samples are), and re-reads the stored points only when the
points log or run.json changed. A browser that connects gets the whole history so far, then what is new,
once a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab.results.naming import target_name
from ssdlab.serve import lab

MAX_SAMPLES = 7200  # per run; two hours at one sample a second before the history is thinned
POLL_S = 1.0
SCAN_S = 5.0
QUEUE = 64  # events a browser may fall behind by before it is dropped (it reconnects and starts afresh)
MAX_NOTES = 200
READ_MAX = 8 << 20  # bytes of a live record read at one look
MAX_POINTS = 1000  # the latest points a page gets (table and chart of finished points)
KEEP_S = 600.0  # an ended run nobody watches is forgotten this long after its last record
LOAD_GAP_S = 2.0  # the stored run is re-read at most this often ...
LOAD_SHARE = 0.005  # ... and at most this share of the time (a read that took 0.1 s waits 20 s for the next)
Adds = dict[tuple[str, str], tuple[float, float]]  # (device, direction) -> (I/Os, bytes) a sample adds


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def locked_inodes() -> set[tuple[int, int, int]] | None:
    """(major, minor, inode) of every file with a lock held (/proc/locks); None where it cannot be read."""
    try:
        text = Path("/proc/locks").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    out = set()
    for line in text.splitlines():
        parts = line.split()
        dev = next((p for p in parts if p.count(":") == 2), None)
        if dev is None:
            continue
        major, minor, inode = dev.split(":")
        with contextlib.suppress(ValueError):
            out.add((int(major, 16), int(minor, 16), int(inode)))
    return out


def is_locked(run_dir: Path, held: set[tuple[int, int, int]] | None) -> bool | None:
    """Whether an ssdlab process holds `run_dir` (its .lock file); None when that cannot be told."""
    if held is None:
        return None
    try:
        st = (run_dir / ".lock").stat()
    except OSError:
        return False
    return (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino) in held


@dataclass
class LiveRun:
    """What the server knows of one run with a live record."""

    id: str
    path: Path
    meta: dict[str, Any] = field(default_factory=dict)  # the latest "run" record
    point: dict[str, Any] | None = None  # the point in progress ("point" record)
    samples: list[dict[str, Any]] = field(default_factory=list)  # "s" records (thinned past MAX_SAMPLES)
    ends: list[dict[str, Any]] = field(default_factory=list)  # "end" records: when each point ended
    health: list[dict[str, Any]] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)
    stored: dict[str, Any] = field(default_factory=dict)  # from run.json + points.jsonl: points, PTS, verdict
    status: str = "running"
    active: bool = False  # an ssdlab process drives it now
    offset: int = 0
    rest: bytes = b""
    stored_stamp: tuple[Any, ...] = ()
    last_sample_t: float = 0.0
    next_load: float = 0.0  # monotonic time before which the stored run is not read again
    last_change: float = field(default_factory=time.monotonic)  # when its live record last grew
    totals: lab.Totals = field(default_factory=lab.Totals)  # every stored point's I/Os, bytes, latency bins
    recent: list[tuple[float, Adds]] = field(default_factory=list)  # (its time, what it adds) per recent sample
    last_e: float = 0.0  # the last sample's elapsed time (its point's engine clock)
    exported: dict[tuple[str, str, str], float] = field(default_factory=dict)  # counters as /metrics last said

    # -------------------------------------------------------------- reading

    def read_new(self) -> list[dict[str, Any]]:
        """The complete records the live file gained since the last call (a torn or damaged line is skipped)."""
        try:
            with (self.path / lab.LIVE_FILE).open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read(READ_MAX)  # a long history arrives over a few looks
        except OSError:
            return []
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()
        out = []
        for line in lines:
            with contextlib.suppress(ValueError):
                rec = json.loads(line)
                if isinstance(rec, dict):
                    out.append(rec)
        for rec in out:
            self._take(rec)
        return out

    def read_all(self) -> None:
        """Everything the live file holds so far (read_new takes at most 8 MiB at a time)."""
        while True:
            before = self.offset
            self.read_new()
            if self.offset - before < READ_MAX:
                return

    def _take(self, rec: dict[str, Any]) -> None:
        kind = rec.get("k")
        if kind == "s":
            self._count(rec)
            self.samples.append(rec)
            self.last_sample_t = float(rec.get("t") or 0)
            if len(self.samples) > MAX_SAMPLES:
                del self.samples[1::2]
        elif kind == "point":
            self.point = rec
        elif kind == "end":
            self.ends.append(rec)
        elif kind == "health":
            self.health.append(rec)
            if len(self.health) > MAX_SAMPLES:
                del self.health[1::2]
        elif kind == "note":
            self.notes = [*self.notes[-MAX_NOTES + 1:], rec]
        elif kind == "run":
            self.meta = rec
        elif kind == "done":  # the run ended: how, before its run.json is read again
            self.point = None
            self.status = str(rec.get("status") or self.status)

    def _count(self, rec: dict[str, Any]) -> None:
        """The I/Os and bytes a sample adds (its rates over its interval: fio's status interval, the simulator's
        step), kept until the stored points cover them (in_progress)."""
        try:
            e, t = float(rec.get("e") or 0.0), float(rec.get("t") or 0.0)
        except (TypeError, ValueError):
            return
        dt = e - self.last_e if e >= self.last_e else e  # (a new engine run, the next point, counts from 0)
        if isinstance(rec.get("dt"), (int, float)):  # the time its rates cover, where the record says
            dt = float(rec["dt"])
        self.last_e = e
        if dt <= 0:
            return
        self.recent.append((t, sample_adds(rec, self.meta.get("devices") or [], dt)))
        if len(self.recent) > MAX_SAMPLES:  # a point of hours: its oldest half as one entry
            half = self.recent[:MAX_SAMPLES // 2]
            self.recent[:MAX_SAMPLES // 2] = [(half[-1][0], summed(a for _, a in half))]

    def covered_until(self) -> float:
        """When the last point the stored totals count ended (its live record's "end"), or 0."""
        for end in reversed(self.ends):
            if end.get("id") in self.totals.ids:
                return float(end.get("t") or 0.0)
        return 0.0

    def in_progress(self) -> Adds:
        """I/Os and bytes per (device, direction) of the samples since the last point the stored totals count:
        the point in progress (and a finished one until the stored run is read again)."""
        since = self.covered_until()
        return summed(adds for t, adds in self.recent if t > since)

    def stored_changed(self) -> tuple[Any, ...] | None:
        """The new stamp of run.json and the points log when either changed since they were last read."""
        stamp = (_stamp(self.path / lab.RUN_FILE), _stamp(self.path / lab.LOG_FILE))
        return None if stamp == self.stored_stamp else stamp

    def take_stored(self, stamp: tuple[Any, ...], stored: dict[str, Any], totals: lab.Totals | None = None) -> None:
        self.stored_stamp, self.stored = stamp, stored
        self.status = str(stored.get("status") or self.status)
        self.id = str(stored.get("id") or self.id)
        if totals is not None:
            self.totals = totals
            since = self.covered_until()
            self.recent = [r for r in self.recent if r[0] > since]

    # -------------------------------------------------------------- what browsers get

    def state(self) -> dict[str, Any]:
        """Where the run is: its status, the point in progress and the ETA."""
        return {"id": self.id, "status": self.status, "active": self.active, "point": self.point,
                "title": self.meta.get("title"), "devices": self.meta.get("devices", []),
                "engine": self.meta.get("engine"), "host_group": bool(self.meta.get("host_group")),
                "path": str(self.path)}

    def snapshot(self) -> dict[str, Any]:
        return {"state": self.state(), "samples": self.samples, "ends": self.ends, "health": self.health,
                "notes": self.notes, "stored": self.stored}


def sample_adds(rec: dict[str, Any], devices: list[Any], dt: float) -> Adds:
    """What a live sample's rates add over `dt` seconds: for the whole run ('all') and, on several devices, each
    device (named as the run's "run" record names them)."""
    figures = [("all", rec.get("a"))]
    if len(devices) > 1:
        figures += [(str(devices[i]) if i < len(devices) else f"d{i}", fig) for i, fig in enumerate(rec.get("d") or [])]
    adds: Adds = {}
    for device, fig in figures:
        for key, direction in (("r", "read"), ("w", "write")):
            row = fig.get(key) if isinstance(fig, dict) else None
            if isinstance(row, list) and len(row) >= 2:
                adds[(device, direction)] = (float(row[0] or 0) * dt, float(row[1] or 0) * 1e6 * dt)
    return adds


def summed(entries: Iterable[Adds]) -> Adds:
    out: Adds = {}
    for adds in entries:
        for k, (n, b) in adds.items():
            m = out.get(k, (0.0, 0.0))
            out[k] = (m[0] + n, m[1] + b)
    return out


def read_stored(run_dir: Path, totals: lab.Totals | None = None) -> tuple[dict[str, Any], lab.Totals | None]:
    """What the stored run says (run.json + points log): its points, PTS tracking, health and, once it ended,
    its verdict; and `totals` with the points it did not count yet (lab.tally, for /metrics). Runs in a worker
    thread: a long run's points take a while to load."""
    try:
        run = lab.load_run(run_dir)
    except lab.SsdlabError as exc:
        return {"error": str(exc)}, None
    health = run.health or {}
    return {
        "id": lab.catalog_id(run), "suite": run.suite, "status": run.status, "created": run.created,
        "target": target_name(run.target), "kind": run.target.get("kind"),
        "model": (run.target.get("identity") or {}).get("model"),
        "points": [lab.point_row(i + 1, pr) for i, pr in enumerate(run.points[-MAX_POINTS:],
                                                                     max(0, len(run.points) - MAX_POINTS))],
        "pts": lab.pts_tracking(run),
        "health": {"available": bool(health.get("available")), "reason": health.get("reason") or ""},
        "verdict": lab.verdict_of(run) if run.status != "running" else None,
        "warnings": list(run.warnings)[-20:],
    }, lab.tally(run, totals)


def sse(event: str, data: Any) -> bytes:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'), default=str)}\n\n".encode()


class Watcher:
    """Follows the runs of a results root: finds those in progress, reads what they add, tells subscribers."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.runs: dict[str, LiveRun] = {}
        self.subscribers: dict[str, set[asyncio.Queue[bytes | None]]] = {}
        self._snapshots: dict[str, bytes] = {}  # encoded once per change, whoever connects
        self._last_scan = -SCAN_S
        self.error = ""  # the last error of the loop, shown on /metrics' comments
        self._task: asyncio.Task[None] | None = None

    # -------------------------------------------------------------- finding runs

    def _run_dirs(self) -> Iterator[Path]:
        """Run directories with a live record under the root (as deep as the catalog looks)."""
        return (d for d in lab.find_run_dirs(self.root) if (d / lab.LIVE_FILE).is_file())

    def scan(self) -> list[tuple[Path, bool]]:
        """Run directories with a live record and whether a process drives each now (a worker thread's job)."""
        held = locked_inodes()
        out = []
        for d in self._run_dirs():
            active = is_locked(d, held)
            out.append((d, bool(active) if active is not None else _recent(d / lab.LIVE_FILE)))
        return out

    async def follow(self, run_dir: Path, active: bool | None = None) -> LiveRun:
        """The run at `run_dir`, followed from now on (found running, or a browser asked for it). It is read
        whole before anyone can subscribe to it, so every snapshot holds what was read so far."""
        key = run_key(run_dir)
        run = self.runs.get(key)
        if run is not None:
            return run
        new = LiveRun(run_dir.name, run_dir)
        new.active = active if active is not None else \
            bool(is_locked(run_dir, await asyncio.to_thread(locked_inodes)))
        await asyncio.to_thread(new.read_all)
        await self._load(new)
        run = self.runs.setdefault(key, new)  # another request may have followed it meanwhile
        if run is not new:  # what `new` read beyond it reaches its subscribers at the next tick
            return run
        self._snapshots.pop(key, None)
        return run

    async def _load(self, run: LiveRun) -> bool:
        """Re-read the stored run when it changed, at most once per LOAD_GAP_S and per LOAD_SHARE of the time
        the last read took (a long run's points take longer to load: the server's share of the CPU stays small)."""
        now = time.monotonic()
        if now < run.next_load:
            return False
        stamp = run.stored_changed()
        if stamp is None:
            return False
        stored, totals = await asyncio.to_thread(read_stored, run.path, run.totals)
        run.take_stored(stamp, stored, totals)
        took = time.monotonic() - now
        run.next_load = now + max(LOAD_GAP_S, took / LOAD_SHARE)
        return True

    # -------------------------------------------------------------- the loop

    async def tick(self) -> None:
        """One look at every followed run; new records and changed state go to its subscribers."""
        now = time.monotonic()
        if now - self._last_scan >= SCAN_S:
            self._last_scan = now
            for d, active in await asyncio.to_thread(self.scan):
                run = self.runs.get(run_key(d))
                if run is not None:
                    run.active = active
                elif active:
                    await self.follow(d, active)
        for key, run in list(self.runs.items()):
            if not run.active and not self.subscribers.get(key) and run.status != "running":
                if now - run.last_change > KEEP_S:  # ended a while ago and nobody watches: forget it
                    del self.runs[key]
                    self._snapshots.pop(key, None)
                continue  # finished and nobody watching: nothing can change
            records = run.read_new()
            if records:
                run.last_change = now
                if any(r.get("k") == "done" for r in records):
                    run.next_load = 0.0  # the run ended: its last points and verdict now, not at the next turn
            changed = await self._load(run)
            if records or changed:
                self._snapshots.pop(key, None)
            if records:
                self.publish(key, sse("records", records))
            if changed:
                self.publish(key, sse("stored", run.stored))
            if records or changed:
                self.publish(key, sse("state", run.state()))

    async def run_forever(self) -> None:
        await asyncio.to_thread(lab.warm)
        while True:
            try:
                await self.tick()
            except Exception as exc:  # a bug or a vanished directory must not stop the live pages
                self.error = f"{type(exc).__name__}: {exc}"
            await asyncio.sleep(POLL_S)

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self.run_forever())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        for queues in self.subscribers.values():
            for q in queues:
                with contextlib.suppress(asyncio.QueueFull):
                    q.put_nowait(None)

    # -------------------------------------------------------------- subscribers

    def snapshot_event(self, key: str) -> bytes:
        data = self._snapshots.get(key)
        if data is None:
            data = self._snapshots[key] = sse("snapshot", self.runs[key].snapshot())
        return data

    def subscribe(self, key: str) -> asyncio.Queue[bytes | None]:
        q: asyncio.Queue[bytes | None] = asyncio.Queue(QUEUE)
        q.put_nowait(self.snapshot_event(key))
        self.subscribers.setdefault(key, set()).add(q)
        return q

    def unsubscribe(self, key: str, q: asyncio.Queue[bytes | None]) -> None:
        self.subscribers.get(key, set()).discard(q)

    def publish(self, key: str, data: bytes) -> None:
        """The same bytes to every subscriber; one that fell QUEUE events behind is dropped (it reconnects)."""
        for q in list(self.subscribers.get(key, ())):
            try:
                q.put_nowait(data)
            except asyncio.QueueFull:
                self.subscribers[key].discard(q)
                with contextlib.suppress(asyncio.QueueEmpty):
                    q.get_nowait()
                q.put_nowait(None)

    def in_progress(self) -> list[LiveRun]:
        return [r for r in self.runs.values() if r.active]


def run_key(run_dir: Path) -> str:
    """How the watcher keys a run: its resolved directory."""
    return str(run_dir.resolve())


def _recent(path: Path, within_s: float = 120.0) -> bool:
    st = _stamp(path)
    return st is not None and time.time() - st[0] / 1e9 < within_s
