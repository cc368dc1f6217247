"""Live progress: a rich display on a terminal, plain lines elsewhere. One factory picks."""

from __future__ import annotations

import time
from typing import IO, Protocol

from ssdlab.executor import LiveSample
from ssdlab.model import PointResult, Run, TestPoint
from ssdlab.units import format_duration


class Progress(Protocol):
    def run_start(self, title: str, total: int, eta_s: float) -> None: ...
    def point_start(self, point: TestPoint, index: int, total: int, eta_s: float) -> None: ...
    def live(self, sample: LiveSample) -> None: ...
    def point_end(self, result: PointResult) -> None: ...
    def note(self, text: str) -> None: ...
    def run_end(self, run: Run) -> None: ...


def _summary(result: PointResult) -> str:
    m = result.measurement
    if result.status != "ok" or m is None:
        return f"{result.status}: {result.reason}"
    parts = []
    streams = m.extra.get("streams")
    if isinstance(streams, dict) and streams:  # concurrent streams (ACT): one figure each, never summed
        from ssdlab.model import measurement_from_dict

        for section, data in streams.items():
            for name, d in measurement_from_dict(data).directions.items():
                lat = f", {d.clat.mean_ns / 1000:.1f} µs" if d.clat else ""
                parts.append(f"{section} {name} {d.iops:,.1f} IOPS{lat}")
        return "; ".join(parts) or "no I/O"
    for name, d in m.directions.items():
        lat = f", {d.clat.mean_ns / 1000:.1f} µs" if d.clat else ""
        parts.append(f"{name} {d.iops:,.0f} IOPS {d.bw_mbps:,.1f} MB/s{lat}")
    return "; ".join(parts) or "no I/O"


def _live_text(s: LiveSample) -> str:
    iops = s.read_iops + s.write_iops
    mbps = s.read_mbps + s.write_mbps
    return f"{iops:,.0f} IOPS  {mbps:,.1f} MB/s  {s.mean_lat_us:,.1f} µs"


class PlainProgress:
    """Line output for logs and pipes: one line per point start/end, live lines at most every 10 s."""

    def __init__(self, stream: IO[str], live_every_s: float = 10.0) -> None:
        self.stream = stream
        self.live_every_s = live_every_s
        self._last_live = 0.0
        self._current = ""

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def run_start(self, title: str, total: int, eta_s: float) -> None:
        self._say(f"{title}: {total} points, estimated {format_duration(eta_s)}")

    def point_start(self, point: TestPoint, index: int, total: int, eta_s: float) -> None:
        self._current = point.label
        self._last_live = time.monotonic()
        self._say(f"[{index}/{total}] {point.label} (ETA {format_duration(eta_s)})")

    def live(self, sample: LiveSample) -> None:
        now = time.monotonic()
        if now - self._last_live >= self.live_every_s:
            self._last_live = now
            self._say(f"    {self._current}: {sample.elapsed_s:.0f}s  {_live_text(sample)}")

    def point_end(self, result: PointResult) -> None:
        self._say(f"    -> {_summary(result)}")
        for w in result.warnings:
            self._say(f"    warning: {w}")

    def note(self, text: str) -> None:
        self._say(text)

    def run_end(self, run: Run) -> None:
        self._say(f"run {run.status}: {len(run.ok_points())} points measured")


class RichProgress:
    """rich display: overall bar with ETA, current point, live IOPS / MB/s / latency."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console = Console(file=stream)
        self.bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[live]}"),
            console=self.console, transient=False,
        )
        self.task = self.bar.add_task("", total=1, live="")
        self._started = False

    def run_start(self, title: str, total: int, eta_s: float) -> None:
        self.console.print(f"[bold]{title}[/]: {total} points, estimated {format_duration(eta_s)}")
        self.bar.update(self.task, total=total, description=title)
        self.bar.start()
        self._started = True

    def point_start(self, point: TestPoint, index: int, total: int, eta_s: float) -> None:
        self.bar.update(self.task, description=point.label, total=max(total, index), live="")

    def live(self, sample: LiveSample) -> None:
        self.bar.update(self.task, live=_live_text(sample))

    def point_end(self, result: PointResult) -> None:
        style = "green" if result.status == "ok" else "yellow"
        self.bar.console.print(f"[{style}]{result.point.label}[/]: {_summary(result)}")
        for w in result.warnings:
            self.bar.console.print(f"  [yellow]warning:[/] {w}")
        self.bar.advance(self.task)

    def note(self, text: str) -> None:
        self.bar.console.print(text)

    def run_end(self, run: Run) -> None:
        if self._started:
            self.bar.stop()


class QuietProgress:
    def run_start(self, title: str, total: int, eta_s: float) -> None: ...
    def point_start(self, point: TestPoint, index: int, total: int, eta_s: float) -> None: ...
    def live(self, sample: LiveSample) -> None: ...
    def point_end(self, result: PointResult) -> None: ...
    def note(self, text: str) -> None: ...
    def run_end(self, run: Run) -> None: ...


def make_progress(stream: IO[str], quiet: bool = False) -> Progress:
    if quiet:
        return QuietProgress()
    if stream.isatty():
        return RichProgress(stream)
    return PlainProgress(stream)
