"""Trace replay report section: what the trace asked and what the replay did (I/Os and bytes per direction,
expected against replayed), the offered and achieved rates, how much slower than the trace's own timing it ran
(or how much faster, as fast as possible), per-direction latency percentiles from the bins, and over the replay:
per-second IOPS offered and achieved, per-second latency percentiles (fio's rule on the histogram logs) and, on
the simulator, write amplification and GC per second."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import SsdlabError
from ssdlab.fio import histlog
from ssdlab.report import charts, sections
from ssdlab.report.sections import Chart, Section, Styled, Table
from ssdlab.report.templating import fragment
from ssdlab.results.events import VerdictEvent
from ssdlab.results.model import PointResult, Run
from ssdlab.results.store import point_dir
from ssdlab.trace.model import duration_text
from ssdlab.units import format_bytes

PCTS = (50.0, 90.0, 99.0, 99.9, 99.99)
CHART_PCTS = (50.0, 99.0, 99.9)
MAX_CHART_POINTS = 2000


@dataclass(frozen=True)
class ReplayView:
    """What templates/sections/replay.html.j2 shows."""

    verdict: str | None
    about: Sequence[tuple[str, str]]
    counts: Table
    latency: Table | None
    charts: Sequence[Chart]
    notes: Sequence[str]


def _replay_point(run: Run) -> PointResult | None:
    return next((r for r in run.points if r.point.tags.replay and r.measurement is not None), None)


def _rate(v: Any) -> str:
    return "-" if v is None else f"{float(v):,.1f} IOPS"


def _about(r: PointResult, rec: Mapping[str, Any]) -> list[tuple[str, str]]:
    spec = r.point.tags.replay or {}
    trace = r.point.tags.trace or {}
    timed = rec.get("mode") == "timed"
    speed = rec.get("speed")
    mode = (("original timing" if speed == 1.0 else f"{speed:g}x the trace's rate") if timed
            else "as fast as possible")
    rows = [("trace", f"{spec.get('trace')} ({trace.get('format', '?')}, {int(trace.get('ios', 0)):,} I/Os over "
                      f"{duration_text(float(trace.get('duration_s', 0.0)))})"),
            ("replay", f"{mode}, up to {rec.get('depth')} I/Os in flight ({rec.get('streams')} streams of queue "
                       f"depth 1); offsets: {rec.get('map')}"),
            ("devices", f"{rec.get('devices')}: " + ("the trace striped across them" if rec.get("split")
                                                      else "each replays the whole trace"))]
    if spec.get("volume"):
        rows.append(("volume", str(spec["volume"])))
    rows.append(("duration", f"replay {duration_text(float(rec.get('replay_s') or 0.0))}"
                 + (f" against the trace's {duration_text(float(rec.get('scaled_trace_s') or 0.0))}"
                    if timed else f"; the trace spans {duration_text(float(rec.get('trace_s') or 0.0))}")))
    if timed:
        rows.append(("rate", f"offered {_rate(rec.get('offered_iops'))}, achieved {_rate(rec.get('achieved_iops'))}"))
        slow = rec.get("slowdown")
        rows.append(("slowdown", "-" if slow is None else f"{slow:.3f}x the trace's own timing"
                     + (" (kept up)" if slow < 1.02 else " (fell behind: the target did not keep up)")))
    else:
        up = rec.get("speedup")
        rows.append(("rate", f"achieved {_rate(rec.get('achieved_iops'))}"
                     + ("" if up is None else f", {up:,.1f}x faster than the trace's own timing")))
    lag = rec.get("lag_us")
    if lag:
        rows.append(("issue lag", f"p50 {lag['p50']:,.1f} µs, p99 {lag['p99']:,.1f} µs, max {lag['max']:,.1f} µs "
                                  f"after the trace's time; {lag['late_share'] * 100:.1f} % of I/Os late"))
    return rows


def _counts(rec: Mapping[str, Any]) -> Table:
    rows = []
    exp, got = rec.get("expected") or {}, rec.get("replayed") or {}
    for d in ("read", "write", "trim"):
        e, g = exp.get(d, [0, 0]), got.get(d, [0, 0])
        if not e[0] and not g[0]:
            continue
        same = list(e) == list(g)
        mark = Styled("equal" if same else "DIFFERENT", "better" if same else "worse")
        rows.append((d, f"{e[0]:,}", f"{g[0]:,}", f"{e[1]:,} ({format_bytes(e[1])})", f"{g[1]:,}", mark))
    return Table(("direction", "trace I/Os", "replayed I/Os", "trace bytes", "replayed bytes", ""), rows,
                 caption="Every I/O of the trace, per direction (summed over the devices)")


def _latency(r: PointResult) -> Table | None:
    m = r.measurement
    assert m is not None
    rows = []
    for d, s in m.directions.items():
        if s.clat is None or not s.clat.n:
            continue
        ps = s.clat.percentiles(PCTS)
        rows.append((d, f"{s.total_ios:,}", f"{s.clat.mean_ns / 1000:,.1f}",
                     *(f"{(ps[p] or 0) / 1000:,.1f}" for p in PCTS), f"{s.clat.max_ns / 1000:,.1f}"))
    if not rows:
        return None
    return Table(("direction", "I/Os", "mean µs", *(f"p{p:g} µs" for p in PCTS), "max µs"), rows,
                 caption="Completion latency from fio's histogram bins (the simulator's alike)")


def _rate_chart(m: Any) -> Chart | None:
    t = list(m.series.get("time_s") or [])
    if len(t) < 2:
        return None
    achieved = [sum(float(m.series.get(f"{d}_iops", [0.0] * len(t))[i] or 0.0) for d in ("read", "write", "trim"))
                for i in range(len(t))]
    lines = [charts.Series("achieved", t, achieved, style="-")]
    if m.series.get("offered_iops"):
        lines.insert(0, charts.Series("offered (the trace)", t, list(m.series["offered_iops"]), style="--"))
    svg = charts.line_chart(lines, title="IOPS per second: offered by the trace, achieved by the target",
                            xlabel="time (s)", ylabel="IOPS")
    return Chart(svg)


def _latency_chart(r: PointResult, run_dir: Path) -> Chart | None:
    m = r.measurement
    assert m is not None
    files = [point_dir(run_dir, r.point.id) / f for f in m.extra.hist_logs]
    files = [f for f in files if f.is_file()]
    step = int(m.extra.hist_log_ms or 0)
    if not files or not step:
        return None
    xs: list[float] = []
    ys: dict[float, list[float | None]] = {p: [] for p in CHART_PCTS}
    try:
        for iv in histlog.iter_intervals(files, step, log_ms=step):
            ps = iv.percentiles(CHART_PCTS)
            xs.append(iv.end_ms / 1000.0)
            for p in CHART_PCTS:
                ys[p].append(ps[p] / 1000.0)
    except SsdlabError:
        return None
    if len(xs) < 2:
        return None
    keep = max(1, len(xs) // MAX_CHART_POINTS)
    lines = [charts.Series(f"p{p:g}", xs[::keep], ys[p][::keep], style="-") for p in CHART_PCTS]
    return Chart(charts.line_chart(lines, title="Completion latency per second (fio's rule on the histogram logs)",
                                   xlabel="time (s)", ylabel="µs", logy=None))


def _model_charts(m: Any) -> list[Chart]:
    t = list(m.series.get("time_s") or [])
    if len(t) < 2 or "wa" not in m.series:
        return []
    wa = charts.line_chart([charts.Series("write amplification", t, list(m.series["wa"]), style="-")],
                           title="Simulated drive: write amplification per second (NAND over host writes)",
                           xlabel="time (s)", ylabel="WA")
    gc = charts.line_chart([charts.Series("GC runs", t, list(m.series["gc_runs"]), style="-")],
                           title="Simulated drive: garbage-collection runs per second", xlabel="time (s)",
                           ylabel="runs")
    return [Chart(wa), Chart(gc)]


def build(run: Run, run_dir: Path) -> list[Section]:
    r = _replay_point(run)
    if r is None or r.measurement is None:
        return []
    m = r.measurement
    rec = m.extra.replay or {}
    verdicts = [e for e in run.events if isinstance(e, VerdictEvent) and e.test == "replay"]
    found = [c for c in (_rate_chart(m), _latency_chart(r, run_dir), *_model_charts(m)) if c is not None]
    view = ReplayView(verdict=str(verdicts[-1].text) if verdicts else None, about=_about(r, rec),
                      counts=_counts(rec), latency=_latency(r), charts=found,
                      notes=list((r.point.tags.trace or {}).get("notes") or []))
    return [Section(title="Trace replay", html=fragment("replay.html.j2", v=view), anchor="replay")]


def _applies(run: Run) -> bool:
    return any(r.point.tags.replay for r in run.points)


sections.register(_applies, build)
