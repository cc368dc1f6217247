"""fio's stderr as kept by the runner: the text (stderr.txt) and when each line arrived (stderr.times.json).

fio reports data-integrity failures and I/O errors only on stderr, as they happen. The runner reads that
stream line by line and records the seconds since fio started for every line, so a failure can be placed
in time (a mismatch found 3 h into a run is not the same event as one found in the first second).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

STDERR_FILE = "stderr.txt"
TIMES_FILE = "stderr.times.json"


@dataclass(frozen=True)
class Line:
    number: int  # 0-based line number in stderr.txt
    text: str  # without the line break
    seconds: float | None  # seconds after fio started when the line arrived (None: not recorded)


def write_times(point_dir: Path, started: str, seconds: list[float]) -> None:
    """Store the arrival times of stderr's lines (one per line, same order)."""
    from ssdlab.results import atomic

    atomic.write_text(point_dir / TIMES_FILE, json.dumps({"started": started,
                                                          "line_seconds": [round(s, 4) for s in seconds]}))


def read_times(point_dir: Path) -> tuple[str, list[float]]:
    """(wall-clock start of fio as ISO text, seconds per line); ('', []) when none were recorded."""
    try:
        doc = json.loads((point_dir / TIMES_FILE).read_text(encoding="utf-8"))
        return str(doc.get("started", "")), [float(s) for s in doc.get("line_seconds", [])]
    except (OSError, ValueError, TypeError, AttributeError):
        return "", []


def lines(point_dir: Path) -> Iterator[Line]:
    """Every line of the point's stderr.txt with its arrival time (streamed: the file may be large)."""
    _, times = read_times(point_dir)
    path = point_dir / STDERR_FILE
    if not path.exists():
        return
    with path.open(encoding="utf-8", errors="replace") as fh:
        for i, raw in enumerate(fh):
            yield Line(i, raw.rstrip("\n"), times[i] if i < len(times) else None)


def text_lines(text: str, times: list[float] | None = None) -> Iterator[Line]:
    """The same from text in memory (tests, golden files)."""
    for i, raw in enumerate(text.splitlines()):
        yield Line(i, raw, times[i] if times and i < len(times) else None)
