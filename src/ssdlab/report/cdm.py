"""The CrystalDiskMark/KDiskMark-style grid at the top of a report: one row per test of a corner suite (quick:
SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1; four-corners; quick-read), its read and its write MB/s side
by side, as every CrystalDiskMark screenshot shows them.

A run has the grid when its measured points are corner points (tagged with a direction and a seq/rnd access, as
suites/quick.py makes them); each cell is the test's point in that direction, or why it has no value. A run with
`--passes N` has N points per cell: the cell gives the best pass (the one with the highest MB/s, its IOPS and
latency with it) or, with `--pass-stat mean`, the mean of the passes' MB/s and IOPS and the mean latency of all
their I/Os, as CrystalDiskMark and KDiskMark report a test of several passes; the grid says which, and a cell with
fewer ok passes than the run made says how many it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ssdlab import metrics
from ssdlab.report.templating import fragment
from ssdlab.results.model import DirectionStats, PointResult, Run

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
    anchor: str = ""  # the point's row in the results table (the best pass's, or the first pass's)


@dataclass(frozen=True)
class Row:
    test: str  # SEQ1M
    load: str  # Q8T1
    cells: tuple[Cell, ...]  # in DIRECTIONS order, of the directions the run measured


@dataclass(frozen=True)
class Figures:
    """A cell's figures: one pass's, or the mean of several."""

    mbps: float
    iops: float
    mean_us: float | None
    anchor: str
    passes: int  # the ok passes they come from


def _corner_points(run: Run) -> dict[tuple[str, str], list[PointResult]]:
    """(test group, direction) -> the measured points of that corner (its passes), in run order of the groups."""
    found: dict[tuple[str, str], list[PointResult]] = {}
    for r in run.points:
        t = r.point.tags
        if r.point.phase == "measure" and t.direction in DIRECTIONS and t.access in ("seq", "rnd"):
            found.setdefault((r.point.group, str(t.direction)), []).append(r)
    return found


def _direction(r: PointResult) -> DirectionStats | None:
    return r.measurement.get(str(r.point.tags.direction)) if r.measurement is not None and r.status == "ok" else None


def _mean_us(d: DirectionStats) -> float | None:
    lat = d.clat or d.lat
    return lat.mean_ns / 1000.0 if lat is not None and lat.n > 0 else None


def figures(results: Sequence[PointResult], stat: str) -> Figures | None:
    """A test's figures from its ok passes: the best one (highest MB/s) or their mean (MB/s and IOPS averaged,
    latency over all their I/Os); None when no pass is ok."""
    ok = [(r, d) for r in results if (d := _direction(r)) is not None]
    if not ok:
        return None
    if stat != "mean" or len(ok) == 1:
        r, d = max(ok, key=lambda rd: rd[1].bw_mbps)
        return Figures(d.bw_mbps, d.iops, _mean_us(d), r.point.id, len(ok))
    lats = [(lat.mean_ns, lat.n) for _, d in ok if (lat := d.clat or d.lat) is not None and lat.n > 0]
    ios = sum(n for _, n in lats)
    mean = sum(m * n for m, n in lats) / ios / 1000.0 if ios else None
    return Figures(sum(d.bw_mbps for _, d in ok) / len(ok), sum(d.iops for _, d in ok) / len(ok), mean,
                   ok[0][0].point.id, len(ok))


def _cell(results: Sequence[PointResult], stat: str, best: float, planned: int) -> Cell:
    if not results:
        return Cell(missing="not run")
    f = figures(results, stat)
    if f is None:
        r = results[-1]
        return Cell(missing=r.status if r.status != "ok" else "no data", anchor=r.point.id)
    detail = f"{IOPS.text(f.iops)} IOPS" + (f", mean {LATENCY.text(f.mean_us)} µs" if f.mean_us is not None else "")
    if f.passes < planned:
        detail += f" ({f.passes} of {planned} passes)"
    return Cell(MBPS.text(f.mbps), detail, round(100 * f.mbps / best) if best > 0 else 0, anchor=f.anchor)


def pass_stat(run: Run) -> str:
    """'best' or 'mean': how the run's grid reads a test of several passes (`--pass-stat`; older runs: best)."""
    return "mean" if run.options.suite_options.get("pass_stat") == "mean" else "best"


def grid(run: Run) -> Markup:
    """The grid's HTML ('' when the run has no corner points)."""
    found = _corner_points(run)
    if not found:
        return Markup()
    stat = pass_stat(run)
    planned = max(int(run.options.suite_options.get("passes") or 1), max(len(rs) for rs in found.values()))
    cells = {key: figures(rs, stat) for key, rs in found.items()}
    best = max((f.mbps for f in cells.values() if f is not None), default=0.0)
    groups = list(dict.fromkeys(g for g, _ in found))
    directions = [d for d in DIRECTIONS if any(d == k for _, k in found)]  # (quick-read: no write column)
    rows = []
    for g in groups:
        test, _, load = g.partition(" ")
        rows.append(Row(test, load, tuple(_cell(found.get((g, d), []), stat, best, planned) for d in directions)))
    how = "" if planned == 1 else (f"Each test ran {planned} times in a row; each cell is "
                                   + ("the mean of its passes (MB/s and IOPS averaged, latency over all their I/Os)"
                                      if stat == "mean" else "its best pass (highest MB/s), as CrystalDiskMark "
                                      "reports it")
                                   + " (--pass-stat). ")
    return fragment("cdm_grid.html.j2", rows=rows, directions=[d.capitalize() for d in directions], passes=how,
                    stat=stat if planned > 1 else "", planned=planned)
