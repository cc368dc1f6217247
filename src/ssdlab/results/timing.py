"""What a stored run took, for the results catalog: the next run of the same suite on the same kind of target
starts its ETA from it (run/eta.py, `History`).

Everything comes from the stored run (run.json): its start and end, each point's executor time
(measurement.extra.wall_s) and, on the simulator, the I/Os it simulated and how fast. Timestamps are whole
seconds, so a run's own figures (set-up, bookkeeping) are rounded; the per-point figures are not.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ssdlab.results.model import Measurement, PointResult, Run

SIM_UNIT_BYTES = 8192  # a simulated I/O weighs 1 + its size / this (run/eta.py: the simulator's work units)
CATALOG_FILE = ".ssdlab-catalog.sqlite"  # a results root's catalog (results/catalog.py), named here so a run can
# look for it without loading the catalog
SHARE_KEY = "cpu_share_at_start"  # run.host: the share of a CPU the run expected as it started (run/eta.cpu_share)


def cpu_share(cpus: int, load: float) -> float:
    """The share of a CPU a process can expect with `load` runnable processes (the 1-minute load average) on
    `cpus` CPUs: 1 on an idle host, else cpus / (load + 1), at least 0.05."""
    return max(0.05, min(1.0, max(1, cpus) / (max(0.0, load) + 1.0)))


def _seconds(a: str, b: str) -> float | None:
    try:
        return (datetime.fromisoformat(b) - datetime.fromisoformat(a)).total_seconds()
    except (TypeError, ValueError):
        return None


def run_timing(run: Run) -> dict[str, Any]:
    """{} for a run that did not complete; else its figures (keys absent where nothing was measured):
    `wall_s` (created to finished), `results` (every stored result, steps included), `setup_s` (created to the
    first point's start: settings, layout), `exec_s` (executor time of its points), `bookkeeping_s` (per result:
    the rest of the wall time), `overhead_s` (median per-point executor time beyond the I/O time: fio's
    start-up and parsing, or beyond the simulator's core), `sim_units` and `sim_core_s` (work the simulator
    did and its core's wall time), `bandwidth` (bytes per second of size-based points, by direction),
    `layout_s` and `layout_bytes` (when the run laid its target out), `share` (the CPU share the host left
    it as it started, when recorded); a resumed run gives its points' figures only."""
    if run.status != "complete" or not run.points or not run.finished:
        return {}
    out: dict[str, Any] = {"results": len(run.points)}
    points = _PointTimes.of(run)
    out.update(_run_figures(run, points.exec_s))
    out["exec_s"] = round(points.exec_s, 3)
    if points.overheads:
        out["overhead_s"] = round(statistics.median(points.overheads), 4)
    if points.units > 0 and points.core > 0:
        out["sim_units"], out["sim_core_s"] = round(points.units), round(points.core, 4)
    if points.bandwidth:
        out["bandwidth"] = {k: statistics.median(v) for k, v in points.bandwidth.items()}
    return out


def _run_figures(run: Run, exec_s: float) -> dict[str, Any]:
    """The run's own figures: its share of the CPU, wall time, set-up (layout) and bookkeeping per result."""
    out: dict[str, Any] = {}
    if any(e.get("kind") == "resume" for e in run.events):
        return out  # its span holds the time it stood still, and a later session under another load
    share = run.host.get(SHARE_KEY)
    if isinstance(share, (int, float)) and 0 < share <= 1:
        out["share"] = float(share)  # what the host left this run, as it started
    wall = _seconds(run.created, run.finished)
    setup = _seconds(run.created, run.points[0].started)
    if wall is not None and wall > 0:
        out["wall_s"] = wall
        out["bookkeeping_s"] = round(max(0.0, wall - (setup or 0.0) - exec_s) / len(run.points), 4)
    if setup is not None:
        out["setup_s"] = setup
        capacity = run.target.get("capacity_bytes")
        if isinstance(capacity, int) and capacity > 0 and setup > 0 and any(
                e.get("kind") == "prepare" and "laid out" in str(e.get("text", "")) for e in run.events):
            out["layout_s"], out["layout_bytes"] = setup, capacity
    return out


@dataclass
class _PointTimes:
    """What the points of a run took: executor time, overheads beyond their I/O, the simulator's work."""

    exec_s: float = 0.0
    overheads: list[float] = field(default_factory=list)
    units: float = 0.0
    core: float = 0.0
    bandwidth: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def of(cls, run: Run) -> _PointTimes:
        out = cls()
        for r in run.points:
            m = r.measurement
            wall_s = m.extra.wall_s if m is not None else None
            if m is not None and wall_s is not None:
                out.add(r, m, wall_s)
        return out

    def add(self, r: PointResult, m: Measurement, wall_s: float) -> None:
        w = r.point.workload
        self.exec_s += wall_s
        sim = m.extra.sim
        if sim is not None and sim.simulated_ios and sim.simulated_ios_per_wall_s:
            ios = float(sim.simulated_ios)
            core_s = ios / float(sim.simulated_ios_per_wall_s)
            self.units += ios * (1.0 + max(1, w.bs) / SIM_UNIT_BYTES)
            self.core += core_s
            self.overheads.append(max(0.0, wall_s - core_s))
        elif r.status == "ok" and w.runtime_s is not None and r.point.phase != "ceiling":
            self.overheads.append(max(0.0, wall_s - r.point.est_seconds))
        elif r.status == "ok" and w.runtime_s is None and m.total_bw_bytes > 0 and wall_s > 0:
            moved = sum(d.io_bytes for d in m.directions.values())
            self.bandwidth.setdefault("write" if w.writes else "read", []).append(moved / wall_s)
