"""The CrystalDiskMark/KDiskMark-style grid at the top of a report: one row per test of a corner suite (quick:
SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; four-corners; quick-read), its read and its write MB/s side
by side, as every CrystalDiskMark screenshot shows them.

A run has the grid when its measured points are corner points (tagged with a direction and a seq/rnd access, as
suites/quick.py makes them); each cell is the test's last point in that direction, or why it has no value.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from ssdlab import metrics
from ssdlab.report.templating import fragment
from ssdlab.results.model import PointResult, Run

DIRECTIONS = ("read", "write")
MBPS, IOPS, LATENCY = metrics.get("bw_MBps"), metrics.get("iops"), metrics.get("lat_mean_us")


@dataclass(frozen=True)
class Cell:
    """One test and direction: its MB/s (large), IOPS and mean latency (small), the share of the grid's best
    MB/s its bar fills; or, without a value, why (`missing`)."""

    mbps: str = ""
    detail: str = ""
    fill: int = 0  # percent of the cell
    missing: str = ""
    anchor: str = ""  # the point's row in the results table


@dataclass(frozen=True)
class Row:
    test: str  # SEQ1M
    load: str  # Q8T1
    cells: tuple[Cell, ...]  # in DIRECTIONS order, of the directions the run measured


def _corner_points(run: Run) -> dict[tuple[str, str], PointResult]:
    """(test group, direction) -> the last measured point of that corner, in run order of the groups."""
    found: dict[tuple[str, str], PointResult] = {}
    for r in run.points:
        t = r.point.tags
        if r.point.phase == "measure" and t.direction in DIRECTIONS and t.access in ("seq", "rnd"):
            found[(r.point.group, str(t.direction))] = r
    return found


def _cell(r: PointResult | None, best: float) -> Cell:
    if r is None:
        return Cell(missing="not run")
    d = r.measurement.get(str(r.point.tags.direction)) if r.measurement is not None else None
    if r.status != "ok" or d is None:
        return Cell(missing=r.status if r.status != "ok" else "no data", anchor=r.point.id)
    lat = d.clat or d.lat
    mean = LATENCY.text(lat.mean_ns / 1000.0) if lat is not None and lat.n > 0 else ""
    detail = f"{IOPS.text(d.iops)} IOPS" + (f", mean {mean} µs" if mean else "")
    return Cell(MBPS.text(d.bw_mbps), detail, round(100 * d.bw_mbps / best) if best > 0 else 0, anchor=r.point.id)


def grid(run: Run) -> Markup:
    """The grid's HTML ('' when the run has no corner points)."""
    found = _corner_points(run)
    if not found:
        return Markup()
    best = max((m.directions[d].bw_mbps for (_, d), r in found.items() if r.status == "ok"
                and (m := r.measurement) is not None and d in m.directions), default=0.0)
    groups = list(dict.fromkeys(g for g, _ in found))
    directions = [d for d in DIRECTIONS if any(d == k for _, k in found)]  # (quick-read: no write column)
    rows = []
    for g in groups:
        test, _, load = g.partition(" ")
        rows.append(Row(test, load, tuple(_cell(found.get((g, d)), best) for d in directions)))
    return fragment("cdm_grid.html.j2", rows=rows, directions=[d.capitalize() for d in directions])
