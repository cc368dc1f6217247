"""DIR/live.jsonl: a run's live history, appended as it goes, for whoever watches it (`ssdlab serve`).

The points log keeps what a point measured once it ends; this file keeps what happens in between: where the run
is (each point as it starts, with its ETA), the engine's live samples (fio's status output every second, the
simulator's counters: IOPS, MB/s, mean and p99/p99.9/p99.99 latency per direction, per device on several
devices), drive temperatures as the health monitor reads them, notes, and how the run ended. One JSON object
per line, appended and flushed (never fsynced: losing the last lines in a crash costs nothing that counts), so
the cost of a record does not depend on how long the run has gone on. docs/results.md describes the records.

`LiveRecorder` is a Progress (run/progress.py) that writes each event and hands it on to the display:
orchestrate.drive wraps the run's progress in one, which is all the run does for it. Writing never fails a run:
the first error stops the recording and says so once.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from ssdlab.results.live import LiveSample
from ssdlab.results.model import PointResult, Run, TestPoint
from ssdlab.run.eta import Eta
from ssdlab.run.progress import Progress, fraction_done

LIVE_FILE = "live.jsonl"
FORMAT = 1  # the records' layout; a reader skips records of a kind it does not know


def _num(v: float) -> float | None:
    """Four significant digits (what a chart shows), so a line stays short; None for a value that is not finite."""
    if not math.isfinite(v):
        return None
    return float(f"{v:.4g}") if v else 0.0


def sample_record(s: LiveSample) -> dict[str, Any]:
    """A sample's figures: per direction [IOPS, MB/s, mean µs, p99 µs, p99.9 µs, p99.99 µs] (the percentiles
    null when the engine gives none)."""
    out: dict[str, Any] = {}
    for name, iops, mbps, lat, pcts in (("r", s.read_iops, s.read_mbps, s.read_lat_us, s.read_pcts_us),
                                        ("w", s.write_iops, s.write_mbps, s.write_lat_us, s.write_pcts_us)):
        if iops <= 0 and mbps <= 0:
            continue
        if not lat and s.mean_lat_us and (s.read_iops <= 0 or s.write_iops <= 0):
            lat = s.mean_lat_us  # an engine that gives one mean for both directions, one of them idle
        p = [_num(x) for x in pcts] if pcts else [None, None, None]
        out[name] = [_num(iops), _num(mbps), _num(lat), *p]
    return out


def eta_record(eta: Eta) -> dict[str, Any]:
    return {"expected_s": round(eta.expected_s, 1), "worst_s": round(eta.worst_s, 1),
            "expected_points": eta.expected_points, "worst_points": eta.worst_points,
            "spread": round(eta.spread, 3), "text": eta.text()}


class LiveRecorder:
    """A Progress that appends every event to DIR/live.jsonl, then passes it to `inner` (the display)."""

    def __init__(self, run_dir: Path, inner: Progress, *, devices: Sequence[tuple[str, str]] = (),
                 engine: str = "", clock: Callable[[], float] = time.time) -> None:
        self.path = run_dir / LIVE_FILE
        self.inner = inner
        self.devices = [f"{host}:{dev}" if host else dev for host, dev in devices]
        self.host_group = any(host for host, _ in devices)  # one fio client: no status output, no live samples
        self.engine = engine
        self.clock = clock
        self._fh: IO[str] | None = None
        self._failed = False
        self._lock = threading.Lock()  # the health monitor writes from its own thread
        self._point: TestPoint | None = None
        self._eta: Eta | None = None
        self._started = 0.0

    # -------------------------------------------------------------- writing

    def _open(self) -> IO[str] | None:
        if self._fh is None and not self._failed:
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
            fh = os.fdopen(fd, "a+", encoding="utf-8")
            if fh.seek(0, os.SEEK_END) > 0:  # a resumed run: a line torn by a crash ends before the next record
                fh.seek(fh.tell() - 1)
                if fh.read(1) != "\n":
                    fh.write("\n")
            self._fh = fh
        return self._fh

    def write(self, kind: str, **fields: Any) -> None:
        """Append one record {"k": kind, "t": Unix time, ...}; the first failure ends the recording."""
        try:
            line = json.dumps({"k": kind, "t": round(self.clock(), 3), **fields}, separators=(",", ":"),
                              allow_nan=False, default=str) + "\n"
        except ValueError:  # a value that is not finite: this record is left out, the next ones are not
            return
        with self._lock:
            try:
                fh = self._open()
                if fh is None:
                    return
                fh.write(line)
                fh.flush()
            except OSError as exc:
                self._failed = True
                self._close()
                with contextlib.suppress(Exception):
                    self.inner.note(f"live record {self.path} stopped: {exc}; the run goes on (`ssdlab serve` shows "
                                    "its points only)")

    def _close(self) -> None:
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None

    # -------------------------------------------------------------- Progress

    def run_start(self, title: str, eta: Eta) -> None:
        self.write("run", v=FORMAT, title=title, eta=eta_record(eta), devices=self.devices, engine=self.engine,
                   host_group=self.host_group, pid=os.getpid())
        self.inner.run_start(title, eta)

    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None:
        self._point, self._eta, self._started = point, eta, time.monotonic()
        w = point.workload
        self.write("point", id=point.id, label=point.label, phase=point.phase, group=point.group,
                   test=point.tags.test, round=point.tags.round, index=index, eta=eta_record(eta),
                   runtime_s=w.runtime_s, ramp_s=w.ramp_s, io_bytes=w.io_bytes)
        self.inner.point_start(point, index, eta)

    def live(self, sample: LiveSample) -> None:
        frac = fraction_done(self._point, sample) if self._point is not None else None
        left = self._eta.after(time.monotonic() - self._started, frac) if self._eta is not None else None
        record: dict[str, Any] = {"e": round(sample.elapsed_s, 2), "a": sample_record(sample)}
        if sample.interval_s > 0:  # the time its rates cover (`e` can count fio's whole elapsed seconds)
            record["dt"] = round(sample.interval_s, 3)
        if frac is not None:
            record["f"] = round(frac, 4)
        if left is not None:
            record["left_s"] = round(left, 1)
        if sample.parts:
            record["d"] = [sample_record(p) if p is not None else None for p in sample.parts]
        self.write("s", **record)
        self.inner.live(sample)

    def point_end(self, result: PointResult) -> None:
        self.write("end", id=result.point.id, status=result.status)
        self.inner.point_end(result)

    def note(self, text: str) -> None:
        self.write("note", text=text)
        self.inner.note(text)

    def run_end(self, run: Run) -> None:
        self.write("done", status=run.status)
        self.close()
        self.inner.run_end(run)

    def close(self) -> None:
        """Close the file (a later event opens it again)."""
        with self._lock:
            self._close()

    # -------------------------------------------------------------- drive health (targets.health.Monitor)

    def health(self, device: str, sample: Mapping[str, Any]) -> None:
        """A drive's temperature sample (and NVMe thermal-management counters), as the health monitor took it."""
        extra = {k: v for k, v in sample.items() if k not in ("time", "elapsed_s", "temperature_c")}
        self.write("health", device=device, temperature_c=sample.get("temperature_c"), **extra)
