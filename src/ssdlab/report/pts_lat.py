"""PTS LAT's response-time histogram captures (suites/pts/lathist.py): for each capture, the histogram, CDF and
exceedance with the 3/4/5 nines, the confidence-level table with the I/O count behind each level, and one
confidence-level plot of every capture, all from fio's histogram bins (report.latency)."""

from __future__ import annotations

import html
from typing import Any

from ssdlab.report import latency
from ssdlab.report.pts_page import figure, table
from ssdlab.report.sections import Section
from ssdlab.results.model import Run
from ssdlab.suites.pts import lathist
from ssdlab.suites.pts.common import PtsSettings, mix_label


def capture_section(run: Run, s: PtsSettings) -> tuple[Section | None, dict[str, Any]]:
    """The section (None when the run has no LAT capture yet) and its summary.json entry."""
    res = run.finished_by_id()
    caps = [p for p in lathist.captures(s) if p.id in res]
    if not caps:
        return None, {}
    minutes = lathist.minutes(s)
    length = f"{minutes:g} minutes" if s.runtime_s == 60 else \
        f"{minutes:g} spec minutes = {minutes * s.runtime_s:g} s (scaled: one minute lasts {s.runtime_s:g} s)"
    parts = [f"<p>After the rounds, RND 4 KiB at T1Q1 for {html.escape(length)} per R/W mix"
             + ("" if minutes >= lathist.SPEC_MINUTES and s.runtime_s == 60 else
                "; PTS asks for 20-minute captures, so this run is <strong>scaled, not compliant</strong>")
             + ". Response time is fio's completion latency.</p>"]
    dists = []
    summary: dict[str, Any] = {}
    for p in caps:
        pr = res[p.id]
        read = int(p.tags.read_pct or 0)
        name = f"RND 4 KiB {mix_label(read)}"
        if pr.status != "ok":
            parts.append(f"<h3>{html.escape(name)}</h3><p>{html.escape(pr.status)}: {html.escape(pr.reason)}</p>")
            continue
        all_io = latency.point_distribution(pr, None, name)
        if all_io is None:
            parts.append(f"<h3>{html.escape(name)}</h3><p>No histogram bins (fio ran without json+).</p>")
            continue
        per_dir = latency.direction_distributions(pr, name)
        shown = [all_io, *per_dir] if len(per_dir) > 1 else [all_io]
        parts.append(f"<h3>{html.escape(name)}</h3>")
        parts.append(figure(latency.distribution_chart(shown, title=f"LAT capture {name} T1Q1: response times"),
                            "Response-time histogram, CDF and exceedance (3, 4 and 5 nines marked), from the "
                            "capture's histogram bins"))
        header, rows = latency.level_rows(shown)
        parts.append(table(header, rows, f"{name}: response time at each confidence level (µs)"))
        dists.append(all_io)
        summary[p.id] = {"read_pct": read, "n": all_io.n, "levels_us": latency.levels_us(all_io)}
    if dists:
        parts.append(figure(latency.confidence_chart(dists, title="LAT confidence levels: response time at 3, 4 "
                                                     "and 5 nines"),
                            "Response time within which 99.9 %, 99.99 % and 99.999 % of the I/Os completed (no "
                            "marker: too few I/Os to resolve the level)"))
        parts.append(f"<p class='small'>{html.escape(latency.LEVEL_NOTE)}</p>")
    return Section("PTS Latency: response-time histograms and confidence levels", "".join(parts),
                   anchor="pts-lat-histograms"), summary
