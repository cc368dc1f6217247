"""ACT report section and console table: verdict, exceedance table per slice (with ACT's avg/max rows),
exceedance over time, the rates achieved against the rates ACT derives, and each stream's lag.

The per-slice numbers come from fio's json+ bins of each stream (exact per slice); the finer time series
comes from the streams' fio histogram logs in the point directories (ssdlab.fio.histlog). `console_lines`
prints act_latency.py's table (analysis/act_latency.py in aerospike/act) for every stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ssdlab.errors import SsdlabError
from ssdlab.fio import histlog
from ssdlab.fio.logs import HIST_PREFIX
from ssdlab.report import charts, sections
from ssdlab.report.sections import Section, Styled
from ssdlab.report.templating import fragment
from ssdlab.results.events import VerdictEvent
from ssdlab.results.model import Run
from ssdlab.results.store import point_dir
from ssdlab.suites.act import (
    CRITERIA,
    JUDGED,
    S_READS,
    S_SERVICE,
    SECTION_LABEL,
    STREAM_LABEL,
    THRESHOLDS_MS,
    StreamSlice,
    level_label,
    section_device,
    slice_streams,
)

MAX_CHART_POINTS = 600
LIMIT_DASHES = ("--", "-.", ":")  # the limit lines of the >= 1, 8 and 64 ms criteria


Slices = list[tuple[int, float, dict[str, StreamSlice]]]


def _levels(run: Run) -> list[tuple[str, list[tuple[int, float, dict[str, StreamSlice]]]]]:
    """[(level label, [(slice no, slice seconds, streams)])] in run order."""
    out: dict[str, Slices] = {}
    for r in run.ok_points():
        if r.point.phase != "measure" or not r.point.streams:
            continue
        out.setdefault(level_label(r.point.tags), []).append(
            (int(r.point.tags.slice or 0), float(r.point.workload.runtime_s or 0), slice_streams(r)))
    return list(out.items())


def _level_event(run: Run, label: str) -> dict[str, object]:
    verdict = next((e for e in reversed(run.events) if isinstance(e, VerdictEvent)), None)
    for lv in verdict.levels if verdict is not None else ():
        if level_label(lv) == label:
            return dict(lv)
    return {}


def _lag_text(run: Run, label: str) -> str:
    """'service threads 0.01 s, large-block reads 0.00 s, ...': each section's worst lag over the level."""
    lags = _level_event(run, label).get("max_lag_s") or {}
    if not isinstance(lags, dict) or not lags:
        return ""
    parts = []
    for section, lag in lags.items():
        base, device = section_device(section)
        name = SECTION_LABEL.get(base, base) + (f" ({device})" if device else "")
        parts.append(f"{name} {float(lag):.2f} s")
    return ", ".join(parts)


@dataclass(frozen=True)
class StreamTable:
    """One stream's exceedance per slice (% of I/Os at or above each threshold, achieved and target rate), then
    the avg and max rows (ACT's) and every I/O of the level in one histogram. A percentage at or above its
    limit is marked: failing in a stream ACT judges, over the reads' limit in one it does not."""

    title: str
    judged: bool  # ACT's limits apply to this stream (reads; commit writes with commit-to-device)
    rows: list[tuple[int, list[Styled], str, str]]  # slice no, % per threshold, achieved /s, target /s
    avg: list[Styled]
    max: list[Styled]
    overall: tuple[list[Styled], str, str] | None


@dataclass(frozen=True)
class LevelView:
    label: str
    lag: str  # each section's worst lag behind ACT's schedule ('' when not recorded)
    tables: list[StreamTable]
    charts: list[str]  # per-slice and per-interval exceedance (SVG from report.charts)


@dataclass(frozen=True)
class ActView:
    """What templates/sections/act.html.j2 shows."""

    verdict: str | None
    thresholds: Sequence[int]  # ms
    limits: dict[int, str]  # threshold (ms) -> ACT's limit (%): the criterion columns
    levels: list[LevelView]


LIMITS = dict(CRITERIA)


def pct_cells(stream: str, ex: dict[int, float]) -> list[Styled]:
    """A row's percentages; one at or above its threshold's limit is marked 'fail' in a stream ACT judges (the
    run fails on the worst slice), 'over' in one it does not, with the reason as tooltip."""
    cells = []
    name = STREAM_LABEL.get(stream, stream)
    for t in THRESHOLDS_MS:
        limit = LIMITS.get(t)
        if limit is None or ex[t] < limit:
            cells.append(Styled(f"{ex[t]:.2f}"))
        elif stream in JUDGED:
            cells.append(Styled(f"{ex[t]:.2f}", "fail", f"{ex[t]:.2f}% of {name} at or above {t} ms: ACT's "
                                f"limit is below {limit:g}%"))
        else:
            cells.append(Styled(f"{ex[t]:.2f}", "over", f"{ex[t]:.2f}% at or above {t} ms, above the {limit:g}% "
                                f"limit of reads; ACT does not judge {name}"))
    return cells


def _table(stream: str, slices: Sequence[tuple[int, float, dict[str, StreamSlice]]]) -> StreamTable | None:
    rows = []
    per: list[dict[int, float]] = []
    merged: StreamSlice | None = None
    for no, _, streams in slices:
        st = streams.get(stream)
        if st is None:
            continue
        ex = st.exceedance()
        per.append(ex)
        merged = st if merged is None else StreamSlice(
            stream, merged.ops + st.ops, merged.target_per_s, merged.seconds + st.seconds,
            merged.counts + st.counts, max(merged.max_ns, st.max_ns))
        rows.append((no, pct_cells(stream, ex), f"{st.achieved_per_s:.1f}", f"{st.target_per_s:.1f}"))
    if not per:
        return None
    overall = None
    if merged is not None:  # every I/O of the level in one histogram
        overall = (pct_cells(stream, merged.exceedance()), f"{merged.achieved_per_s:.1f}",
                   f"{merged.target_per_s:.1f}")
    return StreamTable(STREAM_LABEL.get(stream, stream), stream in JUDGED, rows,
                       avg=pct_cells(stream, {t: sum(p[t] for p in per) / len(per) for t in THRESHOLDS_MS}),
                       max=pct_cells(stream, {t: max(p[t] for p in per) for t in THRESHOLDS_MS}), overall=overall)


def _slice_chart(label: str, slices: Sequence[tuple[int, float, dict[str, StreamSlice]]]) -> str:
    xs: list[float] = []
    ys: dict[int, list[float | None]] = {t: [] for t, _ in CRITERIA}
    elapsed = 0.0
    for _, seconds, streams in slices:
        elapsed += seconds
        st = streams.get(S_READS)
        if st is None:
            continue
        ex = st.exceedance()
        xs.append(elapsed / 3600.0 if elapsed >= 7200 else elapsed)
        for t in ys:
            ys[t].append(ex[t])
    if not xs:
        return ""
    unit = "h" if elapsed >= 7200 else "s"
    # each threshold's limit line in its series' colour, each in a dash of its own
    colors = [charts.PALETTE[i % len(charts.PALETTE)] for i in range(len(CRITERIA))]
    series = [charts.Series(f"reads >= {t} ms", xs, ys[t], color=c) for (t, _), c in zip(CRITERIA, colors, strict=True)]
    refs = [charts.RefLine(limit, f"limit {limit:g}% (>= {t} ms)", dash, c)
            for (t, limit), c, dash in zip(CRITERIA, colors, LIMIT_DASHES, strict=False)]
    return charts.line_chart(series, title=f"ACT {label}: reads at or above each limit, per slice",
                             xlabel=f"end of slice ({unit})", ylabel="% of reads", ref_lines=refs)


def _timeline_chart(run: Run, run_dir: Path, label: str) -> str:
    """% of reads >= 1 ms per histogram-log interval over the whole level (slices laid end to end)."""
    xs: list[float] = []
    ys: list[float | None] = []
    offset = 0.0
    for r in run.ok_points():
        if r.point.phase != "measure" or level_label(r.point.tags) != label:
            continue
        pdir = point_dir(run_dir, r.point.id)
        # the service pool's log (reads and commit writes: reads are picked below); earlier runs: reads-dN
        files = sorted(pdir.glob(f"{HIST_PREFIX}_{S_SERVICE}_clat_hist.*log")) or sorted(
            pdir.glob(f"{HIST_PREFIX}_{S_READS}-d*_clat_hist.*log"))
        step = int(r.point.workload.hist_log_ms or 0)
        if not files or not step:
            offset += float(r.point.workload.runtime_s or 0)
            continue
        try:
            rows = histlog.interval_exceedance(files, step, [1_000_000], direction="read", log_ms=step)
        except SsdlabError:
            rows = []
        for end_ms, _, ex in rows:
            xs.append(offset + end_ms / 1000.0)
            ys.append(ex[1_000_000])
        offset += float(r.point.workload.runtime_s or 0)
    if len(xs) < 2:
        return ""
    if len(xs) > MAX_CHART_POINTS:  # thin evenly; the per-slice table keeps the exact figures
        keep = max(1, len(xs) // MAX_CHART_POINTS)
        xs, ys = xs[::keep], ys[::keep]
    hours = offset >= 7200
    x = [v / 3600.0 for v in xs] if hours else xs
    return charts.line_chart([charts.Series("reads >= 1 ms", x, ys, style="-")],
                             title=f"ACT {label}: reads >= 1 ms per histogram-log interval",
                             xlabel="time (h)" if hours else "time (s)", ylabel="% of reads",
                             ref_lines=[charts.RefLine(LIMITS[1], f"limit {LIMITS[1]:g}% (>= 1 ms)", LIMIT_DASHES[0],
                                                       charts.PALETTE[0])])


def _level(run: Run, run_dir: Path, label: str, slices: Slices) -> LevelView:
    names: list[str] = []
    for _, _, streams in slices:
        names.extend(n for n in streams if n not in names)
    tables = [t for t in (_table(name, slices) for name in names) if t is not None]
    charts = [c for c in (_slice_chart(label, slices), _timeline_chart(run, run_dir, label)) if c]
    return LevelView(label, _lag_text(run, label), tables, charts)


def build(run: Run, run_dir: Path) -> list[Section]:
    """The ACT section of report.html."""
    verdict = next((e for e in reversed(run.events) if isinstance(e, VerdictEvent)), None)
    view = ActView(verdict=str(verdict.text) if verdict else None, thresholds=THRESHOLDS_MS,
                   limits={t: f"{limit:g}" for t, limit in CRITERIA},
                   levels=[_level(run, run_dir, label, slices) for label, slices in _levels(run)])
    return [Section(title="ACT certification", html=fragment("act.html.j2", v=view), anchor="act")]


sections.register(lambda run: run.suite == "act", build)


# ------------------------------------------------------------------ console: act_latency.py's table

GAP = "  "


def _scale(run: Run) -> tuple[str, int]:
    """(act_latency's unit label, ns per unit): ms, or µs with ACT's microsecond-histograms."""
    opts = run.options.suite_options
    from_file = opts.get("act_config_values") or {}
    if opts.get("microsecond_histograms") or from_file.get("microsecond_histograms"):
        return " %>(us)", 1_000
    return " %>(ms)", 1_000_000


def latency_table(name: str, rows: Sequence[tuple[str, Sequence[float], float]], unit_label: str) -> list[str]:
    """One histogram's table as act_latency.py prints it with -x: name, unit, thresholds 2^i, one line per
    slice (% at or above each threshold, then ops/s), a rule, then the avg and max lines."""
    labels = "".join(f"{2 ** i:>7}" for i in range(len(THRESHOLDS_MS))) + "       rate"
    rule = " ------" * len(THRESHOLDS_MS) + " ----------"
    width = len(labels)
    out = [" " * 5 + GAP + " " + name.ljust(width - 1), " " * 5 + GAP + unit_label.ljust(width),
           "slice" + GAP + labels, "-----" + GAP + rule]
    for tag, pcts, rate in rows:
        out.append(f"{tag:>5}" + GAP + "".join(f"{v:7.2f}" for v in pcts) + f"{rate:11.1f}")
    if rows:
        n = len(rows)
        avg = [sum(r[1][i] for r in rows) / n for i in range(len(THRESHOLDS_MS))]
        mx = [max(r[1][i] for r in rows) for i in range(len(THRESHOLDS_MS))]
        out.append("-----" + GAP + rule)
        out.append("  avg" + GAP + "".join(f"{v:7.2f}" for v in avg) + f"{sum(r[2] for r in rows) / n:11.1f}")
        out.append("  max" + GAP + "".join(f"{v:7.2f}" for v in mx) + f"{max(r[2] for r in rows):11.1f}")
    return out


def console_lines(run: Run) -> list[str]:
    """ACT's per-slice tables for every stream of every level (act_latency.py's format), and each stream's
    worst lag; small reads, large-block reads and writes are separate tables, never added together."""
    unit_label, unit_ns = _scale(run)
    thresholds = [(2 ** i) * unit_ns for i in range(len(THRESHOLDS_MS))]
    lines: list[str] = []
    for label, slices in _levels(run):
        lines.append(f"ACT {label}: % of I/Os at or above each threshold per slice, and ops/s "
                     "(act_latency.py's table)")
        names: list[str] = []
        for _, _, streams in slices:
            names.extend(n for n in streams if n not in names)
        for name in names:
            rows = []
            for no, _, streams in slices:
                st = streams.get(name)
                if st is not None:
                    ex = st.exceedance(thresholds)
                    rows.append((str(no), [ex[t] for t in thresholds], st.achieved_per_s))
            lines.append("")
            lines.extend(latency_table(name, rows, unit_label))
        lag = _lag_text(run, label)
        if lag:
            lines.append("")
            lines.append(f"worst lag behind schedule: {lag}")
        lines.append("")
    return lines
