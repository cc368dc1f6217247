"""Live progress: a display redrawn in place on a terminal, plain lines elsewhere. One factory picks.

Each point shows where the run is ([index/expected total]), the wall-clock ETA (expected and, for suites that
may stop early, the worst case; eta.py) and, while it runs, a live line with the last interval's IOPS, MB/s
and mean latency (fio's status output each second; the simulator's counters), how much of the point is done
and the ETA counted down from it.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import time
import unicodedata
from collections.abc import Mapping, Sequence
from typing import IO, Protocol

from ssdlab.results.counts import point_counts
from ssdlab.results.live import LiveSample
from ssdlab.results.model import PointResult, Run, TestPoint
from ssdlab.run import hostload
from ssdlab.run.eta import Eta, left_text, points
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
        return f"{title}: {points(eta.worst_points)}, estimated {eta.duration()}"
    return (f"{title}: about {points(eta.expected_points)}, {eta.duration()} expected; at most "
            f"{points(eta.worst_points)} ({eta.worst_text()})")


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


class TermProgress:
    """On a terminal: the points' lines as they end, and under them a display of two lines, redrawn in place: a
    bar over the expected points with the position and ETA, and the live line.

    Drawn with a few ANSI sequences when it changes (a point starts or ends, a live sample arrives): nothing on it
    moves by itself. rich's live display (a table laid out on every change, and its modules loaded) cost a 7-point
    run ~0.1 CPU-s, half of what it spent beyond bench-fio (benchmarks/peer_overhead.py). Lines are cut to the
    terminal's width (a wrapped line would break the redrawing); NO_COLOR or TERM=dumb: no colours."""

    BAR = 40  # cells of the bar, at most

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.color = "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"
        self._clock = _PointClock()
        self._shown = 0  # lines of the display on the screen (the cursor at the end of its last one)
        self.label, self.completed, self.total, self.position, self.eta, self.line = "", 0, 1, "", "", ""

    def _style(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color and text else text

    def _width(self) -> int:
        """Cells a line may fill: the terminal's columns but one (else $COLUMNS, else 80, as for a terminal that
        gives no size)."""
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (OSError, ValueError, io.UnsupportedOperation):
            columns = 0
        if columns <= 0:
            columns = int(os.environ.get("COLUMNS", "") or 0) if os.environ.get("COLUMNS", "").isdigit() else 0
        return max(20, (columns or 80) - 1)

    def _bar(self, cells: int) -> str:
        done = max(0.0, min(1.0, self.completed / max(1, self.total)))
        full, half = divmod(round(done * cells * 2), 2)
        head = "━" * full + ("╸" if half else "")
        if done >= 1.0:
            return self._style("32", head)
        return self._style("91", head) + self._style("90", "━" * (cells - full - half))

    def _lines(self) -> list[str]:
        """The bar's line (label, bar, position, ETA; the bar narrows to 10 cells before the label is cut) and the
        live line, each within the terminal's width."""
        width = self._width()
        tail = " ".join(t for t in (self.position, self.eta) if t)
        room = width - len(tail) - 2
        bar = max(10, min(self.BAR, room - _cells(self.label)))
        label = _cut(self.label, max(1, room - bar))
        lines = [f"{self._style('1', label)} {self._bar(bar)} {tail}".rstrip()]
        if self.line:
            lines.append(_cut("  " + self.line, width))
        return lines

    def _erase(self) -> str:
        return "\r\x1b[2K" + "\x1b[1A\x1b[2K" * (self._shown - 1) if self._shown else ""

    def _draw(self, above: Sequence[str] = ()) -> None:
        """Lines printed above the display (they stay), then the display redrawn under them."""
        lines = self._lines()
        text = self._erase() + "".join(f"{a}\n" for a in above) + "\n".join(lines)
        self._shown = len(lines)
        self.stream.write(text)
        self.stream.flush()

    def _print(self, *lines: str) -> None:
        if self._shown:
            self._draw(lines)
        else:
            self.stream.write("".join(f"{a}\n" for a in lines))
            self.stream.flush()

    def run_start(self, title: str, eta: Eta) -> None:
        self._print(printable(run_text(title, eta)))
        self.label, self.total = printable(title), max(1, eta.expected_points)
        self.stream.write("\x1b[?25l")  # no cursor blinking over the display (back at run_end, or at exit)
        atexit.register(self._restore)
        self._draw()

    def point_start(self, point: TestPoint, index: int, eta: Eta) -> None:
        self._clock.start(point, eta)
        self.line, self.label, self.completed = "", printable(point.label), index - 1
        self.total = max(index, index - 1 + eta.expected_points)
        self.position, self.eta = position(index, eta), f"ETA {eta.text()}"
        self._draw()

    def live(self, sample: LiveSample) -> None:
        self.line = printable(self._clock.text(sample))
        self._draw()

    def point_end(self, result: PointResult) -> None:
        style = "32" if result.status == "ok" else "33"
        lines = [f"{self._style(style, printable(result.point.label))}: {printable(_summary(result))}"]
        lines += [f"  {self._style('33', 'warning:')} {printable(w)}" for w in result.warnings]
        self.completed += 1
        self._print(*lines)

    def note(self, text: str) -> None:
        self._print(printable(text))

    def run_end(self, run: Run) -> None:
        if self._shown:
            self.line, self.eta = "", ""  # nothing left to wait for
            self._draw()
            self._restore()

    def _restore(self) -> None:
        """The cursor back, under the display (once; a run that ended on an error still gets it at exit)."""
        if self._shown:
            self._shown = 0
            with contextlib.suppress(OSError, ValueError):  # the stream may be gone by then
                self.stream.write("\n\x1b[?25h")
                self.stream.flush()


def _cut(text: str, width: int) -> str:
    """`text` in at most `width` terminal cells (wide characters count two), with '…' where it was cut."""
    if len(text) <= width // 2 or _cells(text) <= width:
        return text
    out, used = [], 0
    for ch in text:
        w = _cells(ch)
        if used + w > width - 1:
            break
        out.append(ch)
        used += w
    return "".join(out) + "…"


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


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
        return TermProgress(stream)
    return PlainProgress(stream)
