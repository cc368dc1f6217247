"""What `ssdlab serve` takes from the rest of ssdlab, in one place: the results catalog, stored runs and their
verdicts, the comparison page, PTS steady-state tracking, the live record's file name and the loopback rule.

Every other module of serve/ imports ssdlab through this one (module names elsewhere may move; only this file
follows them). Everything here reads stored results; nothing writes a run.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import ExitCode, SsdlabError, StoredResultsError, UsageError
from ssdlab.fio.client import is_loopback
from ssdlab.results.catalog import Catalog, Entry, catalog_id, find_run_dirs, parse_tag, read_tags, write_tags
from ssdlab.results.model import Measurement, PointResult, Run
from ssdlab.results.store import LOG_FILE, RUN_FILE, load_run
from ssdlab.run.liverecord import LIVE_FILE

__all__ = ["LIVE_FILE", "LOG_FILE", "RUN_FILE", "Catalog", "Entry", "ExitCode", "PointResult", "Run",
           "SsdlabError", "StoredResultsError", "UsageError", "catalog_id", "compare_html", "figures", "find_run_dirs",
           "is_loopback", "load_run", "parse_tag", "point_row", "pts_tracking", "read_tags", "verdict_of", "write_tags"]


def warm() -> None:
    """Import what reading a stored run takes (verdicts, PTS analysis) once, when the server starts: a test that
    starts later does not share its CPU with the imports."""
    import ssdlab.results.hist  # numpy: percentiles of stored points
    import ssdlab.results.verdict
    import ssdlab.suites.pts.common
    import ssdlab.suites.pts.family  # noqa: F401


def verdict_of(run: Run) -> dict[str, Any]:
    """The run's verdict as the report shows it: its kind, exit code and one line per test."""
    from ssdlab.results.verdict import run_verdicts

    v = run_verdicts(run)
    return {"kind": v.kind, "exit_code": v.exit_code, "tests": [t.text for t in v.tests]}


def compare_html(dirs: Sequence[Path]) -> str:
    """`ssdlab compare`'s page of stored runs (the first is the baseline), rendered in memory by its own code."""
    from ssdlab.analysis import significance
    from ssdlab.commands.compare import _labels
    from ssdlab.compare import matching
    from ssdlab.report import compare as report

    runs = [load_run(d) for d in dirs]
    labels = _labels(argparse.Namespace(labels=None), list(dirs), runs)
    data = [matching.run_data(run, label, d) for run, d, label in zip(runs, dirs, labels, strict=True)]
    cmp = matching.compare(data, alpha=significance.ALPHA, min_effect=significance.MIN_EFFECT)
    return report.render_html(cmp, None)


# ------------------------------------------------------------------ points as the live page shows them

def _finite(v: float | None) -> float | None:
    return round(v, 4) if v is not None and math.isfinite(v) else None


_PCTS = (99.0, 99.9, 99.99)


def figures(m: Measurement | None) -> dict[str, Any]:
    """A measurement per direction: [IOPS, MB/s, mean µs, p99 µs, p99.9 µs, p99.99 µs] (the live record's
    layout, liverecord.sample_record), percentiles clamped to the observed range."""
    out: dict[str, Any] = {}
    if m is None:
        return out
    for name, d in m.directions.items():
        if name not in ("read", "write") or d.total_ios <= 0:
            continue
        lat = d.clat
        row: list[float | None] = [_finite(d.iops), _finite(d.bw_bytes / 1e6)]
        if lat is None or lat.n <= 0:
            row += [None] * 4
        else:
            found = lat.percentiles(_PCTS)
            row.append(_finite(lat.mean_ns / 1000))
            row += [_finite(v / 1000) if v is not None else None for v in (found[p] for p in _PCTS)]
        out[name[0]] = row
    return out


def point_row(index: int, pr: PointResult) -> dict[str, Any]:
    """One finished point for the live page: where it belongs, its status and its figures (per device too)."""
    p = pr.point
    m = pr.measurement
    row: dict[str, Any] = {"n": index, "id": p.id, "label": p.label, "phase": p.phase, "group": p.group,
                           "test": p.tags.test, "round": p.tags.round, "status": pr.status,
                           "reason": pr.reason, "finished": pr.finished, "a": figures(m)}
    if m is not None and m.parts:
        row["d"] = {part.key: figures(part.measurement) if part.status == "ok" else None for part in m.parts}
    return row


# ------------------------------------------------------------------ PTS steady-state tracking

@dataclass(frozen=True)
class _Window:
    rounds: list[int]
    average: float
    low: float  # the allowed band: average ± 10 %
    high: float
    fit: list[float]  # the least-squares line at each window round
    steady: bool


def _window(d: Any) -> _Window:
    avg = float(d.average)
    return _Window(rounds=list(d.rounds), average=avg, low=avg * 0.9, high=avg * 1.1,
                   fit=[float(d.slope) * r + float(d.intercept) for r in d.rounds], steady=bool(d.steady))


def pts_tracking(run: Run) -> list[dict[str, Any]]:
    """For each PTS round test of the run: its tracking variables per round, the window the last round closes
    (average, ±10 % band, fit line, steady or not) and, on several devices, each device's values and whether it
    is steady. Empty for other suites, or when the run's PTS settings cannot be read."""
    try:
        from ssdlab.suites.pts.common import analyse, settings_from_run
        from ssdlab.suites.pts.family import tests_for

        s = settings_from_run(run)
        family = tests_for(run)
    except (SsdlabError, ImportError, KeyError, ValueError):
        return []
    out = []
    for ft in family:
        for test in ft.round_tests:
            state = analyse(test, s, run)
            units = {t.name: t.unit for t in test.trackers(s)}
            trackers = []
            for name, values in state.tracking.items():
                d = state.determinations.get(name)
                trackers.append({"name": name, "unit": units.get(name, ""), "values": values,
                                 "window": vars(_window(d)) if d is not None else None})
            devices = {}
            for key, per in state.device_tracking.items():
                dets = state.device_determinations.get(key, {})
                devices[key] = {name: {"values": vals, "steady": dets[name].steady if name in dets else None}
                                for name, vals in per.items()}
            out.append({"test": test.name, "title": test.title, "rounds": state.rounds_done,
                        "finished": state.finished, "steady": state.steady, "window": state.window,
                        "note": state.note, "trackers": trackers, "devices": devices})
    return out

