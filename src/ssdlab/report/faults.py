"""I/O errors and stalls report section, for any run that met them: every failed I/O with its point,
direction, offset and error, and every latency outlier (a point whose slowest I/O took far longer than
its median). Runs on an nbdkit target also list the faults the target was told to inject, so what was
planted and what was found sit side by side. Integrity checks list their unreadable blocks in their own
section; they are not repeated here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.analysis import anomalies
from ssdlab.report import sections
from ssdlab.report.sections import Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import PointResult, Run

MAX_ROWS = 500


def _errors(r: PointResult) -> list[dict[str, Any]]:
    if r.measurement is None or r.point.tags.errors_are_results:
        return []
    return list((r.measurement.extra.get("io_errors") or {}).get("listed") or [])


def _outliers(r: PointResult) -> list[anomalies.Outlier]:
    return anomalies.latency_outliers(r.measurement) if r.measurement is not None else []


def grouped(errors: list[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    """Errors by (direction, offset, length, error), in order of first appearance: a time-based point that
    keeps reading a bad sector fails at the same place again and again."""
    out: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for e in errors:
        out.setdefault((e.get("direction"), e.get("offset"), e.get("length"), e.get("error", "")), []).append(e)
    return out


def moment(iso: str) -> str:
    """'2026-11-23T13:49:50.261+00:00' -> '2026-11-23 13:49:50.261 UTC' (other offsets kept as they are)."""
    if not iso:
        return ""
    text = iso.replace("T", " ", 1)
    return text[:-6] + " UTC" if text.endswith("+00:00") else text


def applies(run: Run) -> bool:
    return bool(run.target.get("faults")) or any(_errors(r) or _outliers(r) for r in run.points)


@dataclass(frozen=True)
class FaultsView:
    """What templates/sections/faults.html.j2 shows."""

    planted: Sequence[str]  # the faults the target was told to inject
    policy: str  # --on-error
    errors: Table | None  # failed I/Os grouped by place
    stalls: Table | None  # latency outliers
    stall_ms: str  # what counts as a stall: at least this slow ...
    stall_ratio: str  # ... and this many times the median


def _error_table(run: Run) -> Table | None:
    rows: list[tuple[Any, ...]] = []
    total = listed = 0
    for r in run.points:
        errs = _errors(r)
        if not errs or r.measurement is None:
            continue
        total += int((r.measurement.extra.get("io_errors") or {}).get("count", len(errs)))
        listed += len(errs)
        for (direction, offset, length, error), group in grouped(errs).items():
            times = [str(e.get("time") or "") for e in group if e.get("time")]
            rows.append((r.point.id, r.status, direction or "-", "-" if offset is None else offset,
                         "-" if length is None else length, error, len(group),
                         moment(times[0]) if times else "", moment(times[-1]) if len(times) > 1 else ""))
    if not rows:
        return None
    caption = (f"{total:,} failed I/Os; the first {listed:,} (those stored in run.json) grouped by place"
               if listed < total else f"{total:,} failed I/Os, grouped by place")
    return Table(("point", "status", "direction", "offset", "length", "error", "times", "first reported",
                  "last reported"), rows[:MAX_ROWS], caption)


def _stall_table(run: Run) -> Table | None:
    stalls = [(r.point.id, o.direction, f"{o.max_ns / 1e6:,.1f}", f"{o.median_ns / 1e3:,.1f}", f"{o.ratio:,.0f}x")
              for r in run.points for o in _outliers(r)]
    if not stalls:
        return None
    return Table(("point", "direction", "slowest I/O ms", "median µs", "ratio"), stalls,
                 f"slowest I/O at least {anomalies.STALL_MIN_NS / 1e6:g} ms and {anomalies.STALL_RATIO:g}x the median")


def build(run: Run, run_dir: Path) -> list[Section]:
    view = FaultsView(planted=list(run.target.get("faults") or []), policy=str(run.options.on_error or "stop"),
                      errors=_error_table(run), stalls=_stall_table(run), stall_ms=f"{anomalies.STALL_MIN_NS / 1e6:g}",
                      stall_ratio=f"{anomalies.STALL_RATIO:g}")
    return [Section(title="I/O errors and stalls", html=fragment("faults.html.j2", v=view), anchor="faults")]


sections.register(applies, build)
