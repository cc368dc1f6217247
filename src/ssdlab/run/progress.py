"""Live progress: a rich display on a terminal, plain lines elsewhere. One factory picks.

Each point shows where the run is ([index/expected total]), the wall-clock ETA (expected and, for suites that
may stop early, the worst case; eta.py) and, while it runs, a live line with the last interval's IOPS, MB/s
and mean latency (fio's status output each second; the simulator's counters), how much of the point is done
and the ETA counted down from it.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import IO, Protocol

from ssdlab.results.counts import point_counts
from ssdlab.results.live import LiveSample
from ssdlab.results.model import PointResult, Run, TestPoint
from ssdlab.run import hostload
from ssdlab.run.eta import Eta, left_text
from ssdlab.termtext import printable


class Progress(Protocol):
    def run_start(self, title: str, eta: Eta) -> None: ...
    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None: ...
    def live(self, sample: LiveSample) -> None: ...
    def point_end(self, result: PointResult) -> None: ...
    def note(self, text: str) -> None: ...
    def run_end(self, run: Run) -> None: ...


def _summary(result: PointResult) -> str:
    m = result.measurement
    if result.status != "ok" or m is None:
        return f"{result.status}: {result.reason}"
    parts = []
    streams = m.extra.streams
    if isinstance(streams, Mapping) and streams:  # concurrent streams (ACT): one figure each, never summed
        from ssdlab.results.model import measurement_from_dict

        for section, data in streams.items():
            for name, d in measurement_from_dict(data).directions.items():
                lat = f", {d.clat.mean_ns / 1000:.1f} µs" if d.clat else ""
                parts.append(f"{section} {name} {d.iops:,.1f} IOPS{lat}")
        return "; ".join(parts) or "no I/O"
    for name, d in m.directions.items():
        lat = f", {d.clat.mean_ns / 1000:.1f} µs" if d.clat else ""
        parts.append(f"{name} {d.iops:,.0f} IOPS {d.bw_mbps:,.1f} MB/s{lat}")
    flag = f" [host CPU limit: fio {m.usr_cpu + m.sys_cpu:.0f} % per job]" if hostload.saturated(m) else ""
    return ("; ".join(parts) or "no I/O") + flag


def run_text(title: str, eta: Eta) -> str:
    """'pts on sim:tlc-4k: about 450 points, 40s (±30 %) expected; at most 3174 points (about 9m30s if all run)'
    (the first line: the one bound is the worst case's point count)."""
    if not eta.adaptive:
        return f"{title}: {eta.worst_points} points, estimated {eta.duration()}"
    return (f"{title}: about {eta.expected_points} points, {eta.duration()} expected; at most {eta.worst_points} "
            f"points ({eta.worst_text()})")


def position(index: int, eta: Eta) -> str:
    """'3/8', or '12/~450' when the suite may stop earlier or later than its worst case."""
    total = index - 1 + eta.expected_points
    return f"{index}/{'~' if eta.adaptive else ''}{total}"


def run_end_text(run: Run) -> str:
    """'run complete: 8 measured points; 1 step (purge)' (the last progress line; results/counts.py: the count
    every page shows)."""
    return f"run {run.status}: {point_counts(run).text()}"


def fraction_done(point: TestPoint, sample: LiveSample) -> float | None:
    """How much of a point is done: its time for a time-based point, its bytes for a size-based one."""
    w = point.workload
    if w.runtime_s is not None and w.runtime_s + w.ramp_s > 0:
        return min(1.0, sample.elapsed_s / (w.runtime_s + w.ramp_s))
    if w.io_bytes:
        return min(1.0, sample.bytes_done / (w.io_bytes * max(1, w.numjobs)))
    return None


def live_text(sample: LiveSample, fraction: float | None = None, eta_s: float | None = None) -> str:
    """'42% 2,000 IOPS  8.2 MB/s  75.5 µs  ETA 3m10s': the last interval's rates, how far the point is, the ETA."""
    done = f"{fraction * 100:3.0f}%  " if fraction is not None else f"{sample.elapsed_s:.0f}s  "
    text = f"{done}{sample.iops:,.0f} IOPS  {sample.mbps:,.1f} MB/s  {sample.mean_lat_us:,.1f} µs"
    return text + (f"  ETA {left_text(eta_s, 1)}" if eta_s is not None else "")


class _PointClock:
    """The point in progress: its start time and the ETA at its start, for live lines."""

    def __init__(self) -> None:
        self.point: TestPoint | None = None
        self.eta: Eta | None = None
        self.started = 0.0

    def start(self, point: TestPoint, eta: Eta) -> None:
        self.point, self.eta, self.started = point, eta, time.monotonic()

    def text(self, sample: LiveSample) -> str:
        frac = fraction_done(self.point, sample) if self.point is not None else None
        left = self.eta.after(time.monotonic() - self.started, frac) if self.eta is not None else None
        return live_text(sample, frac, left)


class PlainProgress:
    """Line output for logs and pipes: one line per point start/end, live lines at most every 10 s."""

    def __init__(self, stream: IO[str], live_every_s: float = 10.0) -> None:
        self.stream = stream
        self.live_every_s = live_every_s
        self._last_live = 0.0
        self._clock = _PointClock()

    def _say(self, text: str) -> None:
        self.stream.write(printable(text) + "\n")
        self.stream.flush()

    def run_start(self, title: str, eta: Eta) -> None:
        self._say(run_text(title, eta))

    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None:
        self._clock.start(point, eta)
        self._last_live = time.monotonic()
        self._say(f"[{position(index, eta)}] {point.label} (ETA {eta.text()})")

    def live(self, sample: LiveSample) -> None:
        now = time.monotonic()
        if now - self._last_live >= self.live_every_s:
            self._last_live = now
            label = self._clock.point.label if self._clock.point is not None else ""
            self._say(f"    {label}: {self._clock.text(sample)}")

    def point_end(self, result: PointResult) -> None:
        self._say(f"    -> {_summary(result)}")
        for w in result.warnings:
            self._say(f"    warning: {w}")

    def note(self, text: str) -> None:
        self._say(text)

    def run_end(self, run: Run) -> None:
        self._say(run_end_text(run))


class RichProgress:
    """rich display: a bar over the expected points with the position and ETA, and under it the live line."""

    def __init__(self, stream: IO[str]) -> None:
        from rich.console import Console, RenderableType
        from rich.progress import BarColumn, Progress, TextColumn
        from rich.text import Text

        class _Display(Progress):
            line = ""

            def get_renderables(self) -> Iterable[RenderableType]:
                yield self.make_tasks_table(self.tasks)
                if self.line:
                    yield Text("  " + self.line, no_wrap=True, overflow="ellipsis")

        self.console = Console(file=stream, highlight=False)
        self.bar = _Display(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[position]}"),
            TextColumn("{task.fields[eta]}"), console=self.console, transient=False,
        )
        self.task = self.bar.add_task("", total=1, eta="", position="")
        self._clock = _PointClock()
        self._started = False

    def run_start(self, title: str, eta: Eta) -> None:
        self.console.print(printable(run_text(title, eta)), markup=False)
        self.bar.update(self.task, total=max(1, eta.expected_points), description=_escape(title))
        self.bar.start()
        self._started = True

    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None:
        self._clock.start(point, eta)
        self.bar.line = ""
        self.bar.update(self.task, description=_escape(point.label), completed=index - 1,
                        total=max(index, index - 1 + eta.expected_points), position=position(index, eta),
                        eta=f"ETA {eta.text()}")

    def live(self, sample: LiveSample) -> None:
        self.bar.line = printable(self._clock.text(sample))
        self.bar.refresh()

    def point_end(self, result: PointResult) -> None:
        style = "green" if result.status == "ok" else "yellow"
        self.bar.console.print(f"[{style}]{_escape(result.point.label)}[/]: {_escape(_summary(result))}")
        for w in result.warnings:
            self.bar.console.print(f"  [yellow]warning:[/] {_escape(w)}")
        self.bar.advance(self.task)

    def note(self, text: str) -> None:
        self.bar.console.print(printable(text), markup=False)

    def run_end(self, run: Run) -> None:
        if self._started:
            self.bar.line = ""
            self.bar.stop()


def _escape(text: str) -> str:
    """Text shown literally by rich (a label may hold '[...]' or, from a tag or a device, control characters)."""
    from rich.markup import escape

    return escape(printable(text))


class QuietProgress:
    def run_start(self, title: str, eta: Eta) -> None: ...
    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None: ...
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
