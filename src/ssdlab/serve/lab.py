"""What `ssdlab serve` takes from the rest of ssdlab, in one place: the results catalog, stored runs and their
verdicts, the comparison page, PTS steady-state tracking, the count of measured points, the I/O totals and latency
histograms /metrics counts, the live record's file name and the loopback rule.

Every other module of serve/ imports ssdlab through this one (module names elsewhere may move; only this file
follows them). Everything here reads stored results; nothing writes a run.
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ssdlab.errors import ExitCode, SsdlabError, StoredResultsError, UsageError
from ssdlab.fio.client import is_loopback
from ssdlab.results.catalog import Catalog, Entry, catalog_id, find_run_dirs, parse_tag, read_tags, write_tags
from ssdlab.results.model import Measurement, PartResult, PointResult, Run
from ssdlab.results.store import LOG_FILE, RUN_FILE, load_run
from ssdlab.run.liverecord import LIVE_FILE

__all__ = ["LE_NS", "LIVE_FILE", "LOG_FILE", "RUN_FILE", "Catalog", "Entry", "ExitCode", "PointResult", "Run",
           "SsdlabError", "StoredResultsError", "Tally", "Totals", "UsageError", "catalog_id", "compare_html",
           "figures", "find_run_dirs", "is_loopback", "is_measured", "load_run", "parse_tag", "point_row",
           "pts_tracking", "read_tags", "tally", "verdict_of", "write_tags"]


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


def is_measured(pr: PointResult) -> bool:
    """Whether a point is one of the run's measured points, as the console, report and catalog count them."""
    from ssdlab.results.counts import is_measured as counted

    return counted(pr)


SWEPT = ("iodepth", "numjobs", "bs", "rwmixread")  # parameters the finished-points chart may plot points against


def point_row(index: int, pr: PointResult) -> dict[str, Any]:
    """One finished point for the live page: where it belongs, its status, whether it is a measured point, the
    parameters a chart may plot it against (`x`: queue depth, threads, block size, read share; a characterization
    point's swept axes first) and its figures (per device too)."""
    p = pr.point
    m = pr.measurement
    w = p.workload
    x: dict[str, Any] = {"iodepth": w.iodepth, "numjobs": w.numjobs, "bs": w.bs, "rwmixread": w.rwmixread}
    row: dict[str, Any] = {"n": index, "id": p.id, "label": p.label, "phase": p.phase, "group": p.group,
                           "test": p.tags.test, "round": p.tags.round, "status": pr.status,
                           "measured": is_measured(pr), "rw": w.rw, "x": x,
                           "swept": [a for a in p.tags.swept if a in SWEPT],
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
        from ssdlab.suites.base import REGISTRY
        from ssdlab.suites.pts.common import analyse, settings_from_run
        from ssdlab.suites.pts.family import FamilySuite, tests_for

        if not isinstance(REGISTRY.get(run.suite), FamilySuite):  # not a PTS run: no PTS series, none at 0
            return []
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



# ------------------------------------------------------------------ I/O totals and latency histograms (/metrics)

# The latency histogram's bucket bounds (ns, inclusive, as Prometheus' `le`): the last nanosecond of a fio bucket
# at every power of two and half-way between (256 ns ... 12.9 s, two per octave). fio's buckets never straddle
# them (an octave's 64 buckets are 1/64 of it wide from 128 ns on), so each bucket's count is an exact sum of
# fio's bins: a fio bucket [lower, upper) holds latencies up to upper - 1 ns.
LE_NS: tuple[int, ...] = tuple(sorted({edge - 1 for k in range(8, 34) for edge in (1 << k, 3 << (k - 1))}))


@functools.cache
def _le_index() -> Any:
    """For each of fio's buckets, the index of the first LE_NS bound it lies within (len(LE_NS): +Inf)."""
    import numpy as np

    from ssdlab.results import hist

    uppers = np.array([hist.idx_bounds(i)[1] for i in range(hist.PLAT_NR)], dtype=np.int64)
    return np.searchsorted(np.array(LE_NS, dtype=np.int64), uppers - 1, side="left")


@dataclass(frozen=True)
class Tally:
    """One device and direction of a run, over every stored point: I/Os, bytes, and the completion-latency
    histogram (`buckets`: counts per LE_NS bound, not cumulative, then +Inf; `lat_sum_s`: their sum)."""

    ios: int = 0
    io_bytes: int = 0
    buckets: tuple[int, ...] = (0,) * (len(LE_NS) + 1)
    lat_sum_s: float = 0.0

    def plus(self, ios: int, io_bytes: int, buckets: Sequence[int], lat_sum_s: float) -> Tally:
        return Tally(self.ios + ios, self.io_bytes + io_bytes,
                     tuple(a + int(b) for a, b in zip(self.buckets, buckets, strict=True)), self.lat_sum_s + lat_sum_s)


@dataclass(frozen=True)
class Totals:
    """A run's Tally per (device, direction) ('all' for the whole run, each device's key on several devices)
    and the stored points they count (by id, attempt and start: a point run again counts again)."""

    series: Mapping[tuple[str, str], Tally] = field(default_factory=dict)
    counted: frozenset[tuple[str, int, str]] = frozenset()
    ids: frozenset[str] = frozenset()


def _histogram(m: Measurement, direction: str) -> tuple[list[int], float]:
    """A direction's completion latencies per LE_NS bucket (then +Inf) and their sum in seconds."""
    import numpy as np

    from ssdlab.results import hist

    d = m.directions[direction]
    if d.clat is None or not d.clat.bins:
        return [0] * (len(LE_NS) + 1), 0.0
    counts = hist.counts_from_sparse(d.clat.bins)
    per = np.zeros(len(LE_NS) + 1, dtype=np.int64)
    np.add.at(per, _le_index(), counts)  # (integers throughout: the counts stay exact)
    return [int(v) for v in per], d.clat.mean_ns * float(counts.sum()) / 1e9


def _add(series: dict[tuple[str, str], Tally], device: str, m: Measurement) -> None:
    for direction in ("read", "write"):
        d = m.directions.get(direction)
        if d is None or d.total_ios <= 0:
            continue
        buckets, lat_sum = _histogram(m, direction)
        key = (device, direction)
        series[key] = series.get(key, Tally()).plus(d.total_ios, d.io_bytes, buckets, lat_sum)


def tally(run: Run, previous: Totals | None = None) -> Totals:
    """`previous` with the stored points it has not counted yet added: their I/Os, bytes and latency bins, for
    the whole run and (on several devices) per device. Every point with a measurement counts, whatever its
    phase: /metrics counts what the drives did."""
    counted = set(previous.counted) if previous else set()
    series = dict(previous.series) if previous else {}
    ids = set(previous.ids) if previous else set()
    for pr in run.points:
        key = (pr.point.id, pr.attempt, pr.started)
        m = pr.measurement
        if key in counted or m is None:
            continue
        counted.add(key)
        ids.add(pr.point.id)
        _add(series, "all", m)
        parts: Sequence[PartResult] = m.parts
        for part in parts:
            if part.measurement is not None:
                _add(series, part.key, part.measurement)
    return replace(previous or Totals(), series=series, counted=frozenset(counted), ids=frozenset(ids))
