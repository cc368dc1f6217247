"""PTS LAT's response-time histogram captures (suites/pts/lathist.py): for each capture, the histogram, CDF and
exceedance with the 3/4/5 nines, the confidence-level table with the I/O count behind each level, and one
confidence-level plot of every capture, all from fio's histogram bins (report.latency). `capture` and
`length_text` draw WSAT's capture the same way (report/pts_wsat.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.report import latency
from ssdlab.report.pts_page import chart, table
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import PointResult, Run
from ssdlab.suites.pts import lathist
from ssdlab.suites.pts.common import PtsSettings, mix_label


@dataclass(frozen=True)
class Capture:
    """One capture: its name, and why it has no histogram, or its chart and confidence-level table."""

    name: str
    problem: str | None
    chart: Chart | None = None
    levels: Table | None = None


@dataclass(frozen=True)
class CapturesView:
    """What templates/sections/pts_lat_captures.html.j2 shows."""

    length: str  # how long each capture lasted
    scaled: bool  # shorter than PTS asks for
    captures: list[Capture]
    confidence: Chart | None  # every capture's confidence levels
    note: str


def capture(pr: PointResult, name: str, title: str) -> tuple[Capture, latency.Distribution | None]:
    """One capture's chart (titled `title`) and confidence-level table, and the distribution of all its I/Os
    (None, with the reason in the Capture, when it has no histogram)."""
    if pr.status != "ok":
        return Capture(name, f"{pr.status}: {pr.reason}"), None
    all_io = latency.point_distribution(pr, None, name)
    if all_io is None:
        return Capture(name, "No histogram bins (fio ran without json+)."), None
    per_dir = latency.direction_distributions(pr, name)
    shown = [all_io, *per_dir] if len(per_dir) > 1 else [all_io]
    header, rows = latency.level_rows(shown)
    drawn = chart(latency.distribution_chart(shown, title=title),
                  "Response-time histogram, CDF and exceedance (3, 4 and 5 nines marked), from the capture's histogram "
                  "bins")
    return Capture(name, None, drawn, table(header, rows, f"{name}: response time at each confidence level (µs)")), \
        all_io


def length_text(minutes: float, s: PtsSettings) -> str:
    """How long a capture of `minutes` spec minutes lasted ('20 minutes', or scaled: '20 spec minutes = 10 s')."""
    return f"{minutes:g} minutes" if s.runtime_s == 60 else \
        f"{minutes:g} spec minutes = {minutes * s.runtime_s:g} s (scaled: one minute lasts {s.runtime_s:g} s)"


def capture_section(run: Run, s: PtsSettings) -> tuple[Section | None, dict[str, Any]]:
    """The section (None when the run has no LAT capture yet) and its summary.json entry."""
    res = run.finished_by_id()
    caps = [p for p in lathist.captures(s) if p.id in res]
    if not caps:
        return None, {}
    minutes = lathist.minutes(s)
    length = length_text(minutes, s)
    found = []
    dists = []
    summary: dict[str, Any] = {}
    for p in caps:
        read = int(p.tags.read_pct or 0)
        name = f"RND 4 KiB {mix_label(read)}"
        drawn, all_io = capture(res[p.id], name, f"LAT capture {name} T1Q1: response times")
        found.append(drawn)
        if all_io is not None:
            dists.append(all_io)
            summary[p.id] = {"read_pct": read, "n": all_io.n, "levels_us": latency.levels_us(all_io)}
    confidence = chart(latency.confidence_chart(dists, title="LAT confidence levels: response time at 3, 4 and 5 "
                                                "nines"),
                       "Response time within which 99.9 %, 99.99 % and 99.999 % of the I/Os completed (no marker: "
                       "too few I/Os to resolve the level)") if dists else None
    view = CapturesView(length, not (minutes >= lathist.SPEC_MINUTES and s.runtime_s == 60), found, confidence,
                        latency.LEVEL_NOTE)
    return Section("PTS Latency: response-time histograms and confidence levels",
                   fragment("pts_lat_captures.html.j2", v=view), anchor="pts-lat-histograms"), summary
