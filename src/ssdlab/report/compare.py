"""compare.html and compare.csv: several stored runs side by side (`ssdlab compare RUN RUN ... --out DIR`).

One self-contained page like report.html (inline CSS and SVG, no scripts): the runs' facts with what differs
highlighted, notices, the regression gate's verdict, a summary of ratios, then one section per family of
points (PTS IOPS/TP/LAT/WSAT, each characterization view, plain points) with the side-by-side table, ratio
tables and overlay charts drawn with the shared helpers (report.charts, report.sections), and the points present
in only some runs. compare.csv has one row per point, metric and run.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ssdlab import formatting, metrics
from ssdlab.analysis.significance import MIN_SAMPLES
from ssdlab.compare.gate import GateResult
from ssdlab.compare.matching import Cell, Comparison, Curve, PointData, Row, run_facts
from ssdlab.report import charts
from ssdlab.report import health as drive_health
from ssdlab.report.charts import Series
from ssdlab.report.html import SIM_NOTE, Notice, fmt_time, is_sim
from ssdlab.report.sections import Chart, Styled, Table
from ssdlab.report.templating import fragment, page_environment
from ssdlab.results import atomic
from ssdlab.units import format_bs

FAMILY_TITLES = {
    "pts-iops": "SNIA PTS IOPS (window averages)", "pts-tp128": "SNIA PTS Throughput 128 KiB",
    "pts-tp1024": "SNIA PTS Throughput 1024 KiB", "pts-lat": "SNIA PTS Latency", "pts-wsat": "SNIA PTS WSAT",
    "pts-cbw": "SNIA PTS CBW (TC x QD sweep, window averages)",
    "pts-dirth": "SNIA PTS DIRTH (TC x QD sweep, window averages)",
    "pts-captures": "SNIA PTS response-time histogram captures",
    "bs-sweep": "Block-size sweep", "qd-sweep": "IOPS and latency vs outstanding I/O",
    "lat-curve": "Latency vs IOPS", "iorate": "iorate curves", "app": "Application models",
    "stability": "Stability", "matrix": "Test matrix", "points": "Test points",
}
MAX_PERCENTILE_CHARTS = 8  # per family
STYLES = ("-o", "--s", ":^", "-.d", "-v", "--x")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


def _color(i: int) -> str:
    return charts.PALETTE[i % len(charts.PALETTE)]


# ---------------------------------------------------------------- cells


def ratio_cell(metric: str, cell: Cell) -> Styled:
    """×1.23 ±0.02 with a class: better/worse when significant, muted when not, 'cj' when it cannot be judged."""
    if cell.ratio is None:
        return Styled("–", "num")
    info = metrics.get(metric)
    j = cell.judgement
    text = f"×{cell.ratio:.3f}" if abs(cell.ratio - 1) < 0.1 else f"×{cell.ratio:.2f}"
    if j is not None and j.ratio_se is not None:
        text += f" ±{j.ratio_se:.2f}" if j.ratio_se >= 0.005 else " ±<0.01"
    cls = "num"
    if j is None or j.verdict == "cannot judge":
        text += " ?"
        cls += " cj"
    elif j.significant:
        better = (cell.ratio > 1) == info.higher_is_better
        text += " ▲" if better else " ▼"
        cls += " better" if better else " worse"
    else:
        cls += " ns"
    return Styled(text, cls, j.reason if j is not None else "")


def verdict_cell(cell: Cell) -> Styled:
    j = cell.judgement
    if j is None:
        return Styled("–")
    short = {"significant": "significant", "not significant": "not significant", "cannot judge": "cannot judge"}
    return Styled(short[j.verdict], "small", j.reason)


# ---------------------------------------------------------------- view


@dataclass(frozen=True)
class FamilyView:
    """One family's section; the markup fields are made by ssdlab code (escaped tables, matplotlib SVG)."""

    anchor: str
    title: str
    intro: str
    table: Markup
    extra: Markup  # ratio tables, notes
    figures: tuple[Markup, ...] = ()


@dataclass(frozen=True)
class CompareView:
    """Everything compare.html.j2 shows."""

    title: str
    subtitle: str
    labels: list[str]
    facts: list[tuple[str, list[str], bool]]  # (name, values per run, differs)
    notices: list[Notice]
    method: str
    summary: Markup
    gate: GateResult | None
    gate_tables: Markup
    families: list[FamilyView]
    partial: Markup
    toc: list[tuple[str, str]]
    version: str


def _run_facts(rd: Any) -> dict[str, str]:
    """comparison.run_facts, then the drive's interface, health, write cache and power state and the host-CPU
    limit as the run's own report shows them (report.health)."""
    facts = run_facts(rd)
    for name, value in [*drive_health.target_facts(rd.run), *drive_health.host_facts(rd.run)]:
        facts.setdefault(name, value)
    return facts


def _facts(cmp: Comparison) -> list[tuple[str, list[str], bool]]:
    per = [_run_facts(rd) for rd in cmp.runs]
    names: list[str] = []
    for f in per:
        names.extend(n for n in f if n not in names)
    out = []
    for n in names:
        values = [f.get(n, "–") for f in per]
        if n == "created":
            values = [fmt_time(v) for v in values]
        differs = len(set(values)) > 1 and n not in ("run id", "directory", "created")
        out.append((n, values, differs))
    return out


def _notices(cmp: Comparison) -> list[Notice]:
    out: list[Notice] = []
    runs = [rd.run for rd in cmp.runs]
    if any(is_sim(r) for r in runs):
        sims = [rd.label for rd in cmp.runs if is_sim(rd.run)]
        out.append(Notice("sim", "Simulated target" + ("s" if len(sims) > 1 else ""),
                          f"{', '.join(sims)}: {SIM_NOTE} Ratios between simulated runs show the mechanism "
                          "(e.g. more over-provisioning, less write amplification), not a drive's numbers."))
    suites = {r.suite for r in runs}
    if len(suites) > 1:
        out.append(Notice("warn", "Different suites",
                          "The runs come from different suites (" + ", ".join(sorted(suites)) + "): only points "
                          "with the same key are compared; the rest are listed at the end."))
    for rd in cmp.runs:
        if rd.run.status != "complete":
            out.append(Notice("warn", f"{rd.label}: run {rd.run.status}",
                              "Only the points it finished are compared; `ssdlab resume` completes it."))
    partial = cmp.partial_rows()
    if partial:
        out.append(Notice("info", f"{len(partial)} point(s) not measured in every run",
                          "They are listed, with where they are missing, in “Points not in every run”; "
                          "ratios and the gate use the points every run measured."))
    for rd in cmp.runs:
        for n in rd.notes:
            out.append(Notice("info", rd.label, n))
    for rd in cmp.runs:  # issue 15's host-limit flag: such a point measured the host, not the drive
        flagged = [r.point.label for r in rd.run.points
                   if r.measurement is not None and drive_health.host_limited(r.measurement)]
        if flagged:
            out.append(Notice("warn", f"{rd.label}: host CPU limit",
                              f"{len(flagged)} point(s) ran with the submitting CPUs saturated ("
                              + ", ".join(flagged[:5]) + (" …" if len(flagged) > 5 else "")
                              + "): their differences may be the host's, not the drive's."))
    return out


def _method(cmp: Comparison) -> str:
    return (f"Ratio = run ÷ baseline ({cmp.labels[0]}), ± one standard error of the ratio propagated from both "
            f"runs' samples. ▲ better / ▼ worse marks a significant difference: Welch's unequal-variance t-test "
            f"(two-sided, α = {cmp.alpha:g}) on the samples each point carries, and a change of at least "
            f"{cmp.min_effect:.0%} (the minimum effect). Samples: SNIA PTS points use the rounds of the "
            "steady-state measurement window (the five values their window average is made of), WSAT its last "
            "five samples, points logged per interval their per-interval values (the final, partial interval "
            f"left out). A point with fewer than {MIN_SAMPLES} samples a side (a quick run, any percentile or "
            "maximum) has no variation to judge against: “?” = cannot judge, never significant. Hover a ratio for "
            "the test's details. Welch's test suits two drives or firmwares that spread differently and the "
            "few samples a PTS window has; per-interval samples are autocorrelated, which the minimum effect "
            "guards against.")


SUMMARY_METRICS = ("iops", "bw_MBps", "lat_mean_us", "p99_us", "p99_99_us", "read_iops", "write_iops",
                   "read_p99_us", "write_p99_us")
TABLE_METRICS = ("iops", "bw_MBps", "lat_mean_us", "p99_us", "p99_99_us")
SHORT = {"iops": "IOPS", "bw_MBps": "MB/s", "lat_mean_us": "mean µs", "p99_us": "p99 µs", "p99_99_us": "p99.99 µs"}


def _title(metric: str) -> str:
    """'read p99 latency (µs)', 'IOPS' (no unit repeated)."""
    info = metrics.get(metric)
    return info.label if info.unit in info.label else f"{info.label} ({info.unit})"


def _ratio_row(cmp: Comparison, m: str) -> list[Any]:
    """One metric's geometric-mean ratio of each run to the baseline, coloured past the minimum effect."""
    row: list[Any] = [_title(m)]
    for i in range(1, len(cmp.runs)):
        g, n = cmp.geomean(m, i)
        cls = "num"
        if g is not None and abs(g - 1) >= cmp.min_effect:
            cls += " better" if (g > 1) == metrics.get(m).higher_is_better else " worse"
        row.append(Styled("–" if g is None else f"×{g:.3f}  ({n} points)", cls))
    return row


def _judged_row(cmp: Comparison, common: Sequence[Row], i: int) -> list[Any]:
    """How run i's per-point differences of the table metrics were judged."""
    counts = {"better": 0, "worse": 0, "ns": 0, "cj": 0}
    for r in common:
        for m in TABLE_METRICS:
            c = r.cells[m][i] if m in r.cells else None
            if c is None or c.ratio is None or c.judgement is None:
                continue
            if c.judgement.verdict == "cannot judge":
                counts["cj"] += 1
            elif c.judgement.significant:
                counts["better" if (c.ratio > 1) == metrics.get(m).higher_is_better else "worse"] += 1
            else:
                counts["ns"] += 1
    return [cmp.runs[i].label, Styled(str(counts["better"]), "num better" if counts["better"] else "num"),
            Styled(str(counts["worse"]), "num worse" if counts["worse"] else "num"), Styled(str(counts["ns"]), "num"),
            Styled(str(counts["cj"]), "num")]


def _summary(cmp: Comparison) -> Markup:
    """Geometric-mean ratios per metric (rows) and run (columns), then how the differences were judged."""
    if len(cmp.runs) < 2:
        return Markup()
    common = cmp.common_rows()
    shown = [m for m in SUMMARY_METRICS if any(m in r.cells for r in common)]
    ratios = Table(["metric", *(f"{label} ÷ {cmp.labels[0]}" for label in cmp.labels[1:])],
                   [_ratio_row(cmp, m) for m in shown], cls="cmp summary")
    judged = Table(["run", "significantly better", "significantly worse", "not significant", "cannot judge"],
                   [_judged_row(cmp, common, i) for i in range(1, len(cmp.runs))], cls="cmp summary")
    return fragment("compare_summary.html.j2", ratios=ratios, judged=judged)


def _family_table(cmp: Comparison, rows: Sequence[Row]) -> Markup:
    """One block per point, one line per run: IOPS, MB/s, mean/p99/p99.99 latency (all directions together),
    each with its ratio to the baseline."""
    header: list[Any] = ["point", "run"]
    for m in TABLE_METRICS:
        header += [Styled(SHORT[m], "num"), Styled("÷ baseline", "num")]
    header.append("samples")
    body = []
    for r in rows:
        for i, label in enumerate(cmp.labels):
            line: list[Any] = [Styled(r.label if i == 0 else "", "pt", r.key), label]
            for m in TABLE_METRICS:
                cells = r.cells.get(m)
                c = cells[i] if cells else None
                v = c.value if c is not None else None
                line.append(Styled(formatting.sig3(v.value if v is not None else None), "num"))
                line.append(Styled("baseline", "num small") if i == 0 and v is not None else
                            (ratio_cell(m, c) if c is not None else Styled("–", "num")))
            p = r.points[i]
            n = len(v.samples) if (c0 := r.cells.get("iops")) and (v := c0[i].value) is not None else 0
            if n and p is not None and p.sample_kind:
                line.append(Styled(f"{n} {p.sample_kind}", "small"))
            else:
                line.append(Styled("single value" if n or (c0 and c0[i].value) else "–", "small"))
            body.append(line)
    return fragment("table_wrap.html.j2", table=Table(header, body, cls="cmp points"))


# ---------------------------------------------------------------- overlay charts


def _value(p: PointData | None, metric: str) -> float | None:
    if p is None or p.status != "ok":
        return None
    v = p.metrics.get(metric)
    return v.value if v is not None else None


def _axis(p: PointData, name: str) -> Any:
    from ssdlab.report.characterization import axis_value

    return axis_value(p.point, name)


def _lines_by(cmp: Comparison, rows: Sequence[Row], group: Callable[[PointData], Any], x: Callable[[PointData], Any],
              metric: str) -> list[tuple[int, Any, list[tuple[float, float | None]]]]:
    """(run index, group value, [(x, y)...] sorted by x) for every run and group of the rows."""
    out: dict[tuple[int, Any], list[tuple[float, float | None]]] = {}
    for r in rows:
        for i, p in enumerate(r.points):
            if p is None or p.status != "ok":
                continue
            xv = x(p)
            if xv is None:
                continue
            out.setdefault((i, group(p)), []).append((float(xv), _value(p, metric)))
    return [(i, g, sorted(v)) for (i, g), v in sorted(out.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]


def _overlay(cmp: Comparison, rows: Sequence[Row], *, group: Callable[[PointData], Any],
             group_name: Callable[[Any], str], x: Callable[[PointData], Any], metric: str, title: str,
             xlabel: str, logx: bool = False, logy: bool = False, bs_ticks: bool = False,
             caption: str = "") -> Chart | None:
    lines = _lines_by(cmp, rows, group, x, metric)
    if not any(any(y is not None for _, y in pts) for _, _, pts in lines):
        return None
    styles: dict[Any, str] = {}
    series = []
    for i, g, pts in lines:
        style = styles.setdefault(g, STYLES[len(styles) % len(STYLES)])
        name = cmp.labels[i] + (f" {group_name(g)}" if group_name(g) else "")
        series.append(Series(charts.plain_label(name), [a for a, _ in pts], [b for _, b in pts], style=style,
                             color=_color(i)))
    kwargs: dict[str, Any] = {}
    if bs_ticks:
        xs = sorted({a for _, _, pts in lines for a, _ in pts})
        kwargs = {"xticks": xs, "xticklabels": [format_bs(int(v)) for v in xs]}
    svg = charts.line_chart(series, title=title, xlabel=xlabel, ylabel=_title(metric), logx=logx,
                            logy=logy, size=(6.2, 3.4), **kwargs)
    return Chart(svg, caption or "Colour: run; line style: " + (group_name.__doc__ or "series"))


def _bs(p: PointData) -> Any:
    return p.point.workload.bs


def _mix(p: PointData) -> Any:
    return _axis(p, "rwmixread")


def _mix_name(g: Any) -> str:
    """R/W mix (read %)"""
    return f"{g}/{100 - int(g)}" if g is not None else ""


def _ratio_matrix(cmp: Comparison, rows: Sequence[Row], metric: str, i: int) -> Table | None:
    """A PTS 2D table (block size x R/W mix) of run i's ratios to the baseline."""
    cells: dict[tuple[int, int], Cell] = {}
    for r in rows:
        p = next((q for q in r.points if q is not None), None)
        if p is None or metric not in r.cells:
            continue
        cells[(int(p.point.workload.bs), int(_mix(p)))] = r.cells[metric][i]
    if not cells:
        return None
    sizes = sorted({k[0] for k in cells}, reverse=True)
    mixes = sorted({k[1] for k in cells})
    body: list[list[Any]] = [[format_bs(b), *(ratio_cell(metric, cells[(b, m)]) if (b, m) in cells else "–"
                                              for m in mixes)] for b in sizes]
    info = metrics.get(metric)
    return Table(["block size"] + [f"{m}/{100 - m}" for m in mixes], body,
                 f"{cmp.labels[i]} ÷ {cmp.labels[0]}: {info.label}, by block size and R/W mix (read/write %)",
                 cls="cmp ratio2d")


def _curves(cmp: Comparison, family: str) -> list[Chart]:
    """PTS convergence (tracking variable per round) and WSAT curves, one line per run."""
    by_name: dict[str, list[tuple[int, Curve]]] = {}
    for i, rd in enumerate(cmp.runs):
        for c in rd.curves:
            if c.family == family:
                by_name.setdefault(c.name, []).append((i, c))
    figs = []
    for name, items in by_name.items():
        first = items[0][1]
        style = "-" if max(len(c.x) for _, c in items) > 30 else "-o"  # markers unless a long time series
        series = [Series(charts.plain_label(cmp.labels[i]), list(c.x), list(c.y), style=style, color=_color(i))
                  for i, c in items]
        title = f"Convergence: {name} per round" if first.xlabel == "round" else f"WSAT: {name}"
        ticks: dict[str, Any] = {}
        if first.xlabel == "round":
            xs = sorted({x for _, c in items for x in c.x})
            if len(xs) <= 30:
                ticks = {"xticks": xs, "xticklabels": [f"{x:g}" for x in xs]}
        svg = charts.line_chart(series, title=charts.plain_label(title), xlabel=first.xlabel, ylabel=first.ylabel,
                                size=(6.2, 3.4), **ticks)
        cap = ("Tracking variable in every round, one line per run; the steady-state window is the last five "
               "rounds of each") if first.xlabel == "round" else "One line per run"
        figs.append(Chart(svg, cap))
    return figs


def _percentile_rows(cmp: Comparison, family: str, rows: Sequence[Row]) -> tuple[list[Row], str]:
    """The common points with percentiles to draw (a PTS test's tracking points speak for it), and why not all."""
    chosen = [r for r in rows if r.common and any(p is not None and p.percentiles for p in r.points)]
    tracked = {c.name for rd in cmp.runs for c in rd.curves if c.family == family}
    if family in ("pts-iops", "pts-tp128", "pts-tp1024") and tracked:
        picked = [r for r in chosen if r.label in tracked]
        if picked and len(picked) < len(chosen):
            return picked, (f"Latency percentile curves of the {len(picked)} steady-state tracking points; the "
                            "percentiles of every point are in compare.csv.")
    return chosen, ""


def _percentile_figs(cmp: Comparison, family: str, rows: Sequence[Row]) -> tuple[list[Chart], str]:
    chosen, note = _percentile_rows(cmp, family, rows)
    figs: list[Chart] = []
    drawn: set[str] = set()
    for r, d in ((r, d) for r in chosen for d in ("read", "write")):
        lines = [(cmp.labels[i], dict(p.percentiles[d])) for i, p in enumerate(r.points)
                 if p is not None and d in p.percentiles]
        if len(lines) < 2:
            continue
        if len(figs) == MAX_PERCENTILE_CHARTS:
            left = len(chosen) - len(drawn)
            return figs, (f"Latency percentile curves of the first {len(drawn)} of {len(chosen)} common points "
                          f"({left} more not drawn); the percentiles of every point are in compare.csv.")
        svg = charts.percentile_chart(lines, title=charts.plain_label(f"{r.label}: {d} completion latency"),
                                      size=(5.8, 3.2))
        figs.append(Chart(svg, "One line per run (log latency scale)"))
        drawn.add(r.key)
    return figs, note


Figures = tuple[list[Chart | None], list[Table | None]]  # a family's charts and ratio tables


def _pts_iops(cmp: Comparison, common: list[Row]) -> Figures:
    figs = []
    for mix in sorted({int(_mix(p)) for r in common for p in r.points if p is not None}, reverse=True):
        sub = [r for r in common if r.points[0] is not None and int(_mix(r.points[0])) == mix]
        figs.append(_overlay(cmp, sub, group=lambda p: None, group_name=lambda g: "", x=_bs, metric="iops",
                             title=f"IOPS vs block size, R/W {mix}/{100 - mix}", xlabel="block size",
                             logx=True, logy=True, bs_ticks=True, caption="One line per run (window averages)"))
    return figs, [_ratio_matrix(cmp, common, "iops", i) for i in range(1, len(cmp.runs))]


def _pts_lat(cmp: Comparison, common: list[Row]) -> Figures:
    figs = [_overlay(cmp, common, group=_mix, group_name=_mix_name, x=_bs, metric=metric,
                     title=f"{metrics.get(metric).label} vs block size", xlabel="block size", logx=True,
                     bs_ticks=True) for metric in ("lat_mean_us", "p99_999_us", "lat_max_us")]
    return figs, [_ratio_matrix(cmp, common, m, i) for m in ("lat_mean_us", "p99_999_us")
                  for i in range(1, len(cmp.runs))]


def _none(cmp: Comparison, common: list[Row]) -> Figures:
    return [], []


def _bars_only(cmp: Comparison, common: list[Row]) -> Figures:
    return list(_bars(cmp, common)), []


def _demand(cmp: Comparison, common: list[Row]) -> Figures:
    """IOPS vs TOIO per thread count, and the demand intensity curve."""
    return [_overlay(cmp, common, group=lambda p: p.point.workload.numjobs, group_name=_threads,
                     x=lambda p: p.point.workload.outstanding, metric="iops",
                     title="IOPS vs outstanding I/O (TC x QD)", xlabel="outstanding I/O (TOIO)", logx=True),
            _overlay(cmp, common, group=lambda p: p.point.workload.numjobs, group_name=_threads,
                     x=lambda p: _value(p, "iops"), metric="lat_mean_us",
                     title="Demand intensity: mean response time vs IOPS", xlabel="IOPS", logy=True)], []


def _bs_sweep(cmp: Comparison, common: list[Row]) -> Figures:
    figs = []
    for matrix, sub in _by_matrix(common).items():
        w = sub[0].points[0].point.workload if sub[0].points[0] is not None else None
        metric = "iops" if w is not None and w.is_random else "bw_MBps"
        figs.append(_overlay(cmp, sub, group=lambda p: None, group_name=lambda g: "", x=_bs, metric=metric,
                             title=f"{matrix}: {metrics.get(metric).label} vs block size", xlabel="block size",
                             logx=True, logy=metric == "iops", bs_ticks=True, caption="One line per run"))
    return figs, []


def _qd_sweep(cmp: Comparison, common: list[Row]) -> Figures:
    return [_overlay(cmp, sub, group=lambda p: p.point.workload.numjobs, group_name=_threads,
                     x=lambda p: p.point.workload.outstanding, metric=metric,
                     title=f"{matrix}: {_title(metric)} vs outstanding I/O",
                     xlabel="outstanding I/O (threads × QD)", logx=True, logy=logy)
            for matrix, sub in _by_matrix(common).items() for metric, logy in (("iops", False), ("p99_us", True))], []


def _latency_vs_iops(cmp: Comparison, common: list[Row]) -> list[Chart | None]:
    return [_overlay(cmp, common, group=_curve_group, group_name=_str_doc("curve"), x=lambda p: _value(p, "iops"),
                     metric=metric, title=f"{metrics.get(metric).label} vs IOPS", xlabel="IOPS", logy=True)
            for metric in ("lat_mean_us", "p99_us", "p99_99_us")]


_FAMILY_FIGURES: dict[str, Callable[[Comparison, list[Row]], Figures]] = {
    "pts-iops": _pts_iops, "pts-lat": _pts_lat, "pts-cbw": _demand, "pts-dirth": _demand, "bs-sweep": _bs_sweep,
    "qd-sweep": _qd_sweep,
    **dict.fromkeys(("pts-tp128", "pts-tp1024", "points", "matrix", "app", "iorate", "stability", "pts-captures"),
                    _bars_only),
}


def _family_figures(cmp: Comparison, family: str, rows: Sequence[Row]) -> tuple[list[Chart], Markup]:
    """A family's overlay charts (by family, then latency vs IOPS, interval samples, curves and percentiles), and
    its ratio tables and notes."""
    common = [r for r in rows if r.common]
    figs, tables = _FAMILY_FIGURES.get(family, _none)(cmp, common)
    if family in ("lat-curve", "iorate", "app"):
        figs += _latency_vs_iops(cmp, common)
    if family == "stability":
        figs += _interval_overlay(cmp, common)
    figs += _curves(cmp, family)
    pfigs, note = _percentile_figs(cmp, family, common)
    figs += pfigs
    extra = fragment("compare_extra.html.j2", tables=[t for t in tables if t is not None], note=note)
    return [f for f in figs if f is not None], extra


def _str_doc(what: str) -> Callable[[Any], str]:
    def name(g: Any) -> str:
        return "" if g in (None, "") else str(g)

    name.__doc__ = what
    return name


def _threads(g: Any) -> str:
    """thread count"""
    return f"T{g}"


def _by_matrix(rows: Sequence[Row]) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        p = next((q for q in r.points if q is not None), None)
        if p is not None:
            out.setdefault(str(_axis(p, "matrix") or ""), []).append(r)
    return out


def _curve_group(p: PointData) -> Any:
    w = p.point.workload
    if p.point.tags.get("curve"):
        return str(p.point.tags["curve"]).split("|")[0]
    mix = _axis(p, "rwmixread")
    return f"{w.bssplit or format_bs(w.bs)} {mix}% read T{w.numjobs}"


def _bars(cmp: Comparison, rows: Sequence[Row]) -> list[Chart]:
    """Grouped horizontal bars per point (one bar per run) for IOPS and MB/s (CrystalDiskMark-like)."""
    if not rows or len(rows) > 40:
        return []
    labels = [r.label for r in rows]
    figs = []
    for metric in ("bw_MBps", "iops"):
        series = {cmp.labels[i]: [_value(r.points[i], metric) for r in rows] for i in range(len(cmp.runs))}
        if not any(v is not None for vals in series.values() for v in vals):
            continue
        svg = charts.grouped_hbar_chart(labels, series, title=metrics.get(metric).label,
                                        xlabel=metrics.get(metric).unit,
                                        colors=[_color(i) for i in range(len(cmp.runs))], width=6.2)
        figs.append(Chart(svg, "One bar per run"))
    return figs


def _interval_overlay(cmp: Comparison, rows: Sequence[Row]) -> list[Chart]:
    """Per-interval IOPS of each run (the samples the significance test used)."""
    figs = []
    for r in rows[:6]:
        series = []
        for i, p in enumerate(r.points):
            v = p.metrics.get("iops") if p is not None else None
            if v is None or not v.samples:
                continue
            series.append(Series(charts.plain_label(cmp.labels[i]), list(range(1, len(v.samples) + 1)),
                                 list(v.samples), style="-", color=_color(i)))
        if series:
            figs.append(Chart(charts.line_chart(series, title=charts.plain_label(f"{r.label}: IOPS per interval"),
                                                xlabel="interval", ylabel="IOPS", size=(6.2, 3.4)),
                              "The per-interval samples the significance test used"))
    return figs


def _partial(cmp: Comparison) -> Markup:
    rows = cmp.partial_rows()
    if not rows:
        return Markup()
    body = []
    for r in rows:
        where = []
        for p in r.points:
            if p is None:
                where.append(Styled("absent", "cj"))
            elif p.status != "ok":
                where.append(Styled(f"{p.status}" + (f": {p.reason}" if p.reason else ""), "worse"))
            else:
                where.append(Styled(f"measured ({formatting.sig3(_value(p, 'iops'))} IOPS)", "better"))
        body.append([Styled(r.label, "pt", r.key), Styled(r.key, "mono small"), *where])
    return fragment("table_wrap.html.j2", table=Table(["point", "key", *cmp.labels], body, cls="cmp"))


def _gate_tables(gate: GateResult | None) -> Markup:
    """The failures, then the changes past a threshold that did not fail."""
    if gate is None:
        return Markup()
    found = []
    header = ["run", "point", "metric", "threshold", "change", "significance"]
    for failed, title in ((True, "Failures"), (False, "Past a threshold but not failing")):
        rows: list[list[Any]] = []
        for f in gate.findings:
            if f.failed != failed:
                continue
            j = f.judgement
            rows.append([f.run_label, Styled(f.label, "pt", f.key), f.rule.metric, f"{f.rule.threshold:+.0%}",
                         Styled("not measured in both" if f.change is None else f"{f.change:+.1%}",
                                "num worse" if failed else "num"),
                         Styled("–" if j is None else j.verdict, "small", "" if j is None else j.reason)])
        if rows:
            found.append((title, Table(header, rows, cls="cmp")))
    return fragment("compare_gate.html.j2", tables=found)


def build_view(cmp: Comparison, gate: GateResult | None = None) -> CompareView:
    from ssdlab import __version__

    families: list[FamilyView] = []
    order: list[str] = []
    for r in cmp.rows:
        if r.family not in order:
            order.append(r.family)
    for fam in order:
        rows = [r for r in cmp.rows if r.family == fam and r.common]
        if not rows and not any(c.family == fam for rd in cmp.runs for c in rd.curves):
            continue
        figs, extra = _family_figures(cmp, fam, rows)
        families.append(FamilyView(anchor="fam-" + _slug(fam), title=FAMILY_TITLES.get(fam, fam),
                                   intro=f"{len(rows)} point(s) measured in every run.",
                                   table=_family_table(cmp, rows), extra=extra,
                                   figures=tuple(fragment("chart.html.j2", chart=f) for f in figs)))
    toc = [("runs", "Runs"), ("notices", "Notices"), ("summary", "Summary")]
    if gate is not None:
        toc.append(("gate", "Regression gate"))
    toc += [(f.anchor, f.title) for f in families]
    partial = _partial(cmp)
    if partial:
        toc.append(("partial", "Points not in every run"))
    title = "ssdlab compare: " + " vs ".join(cmp.labels)
    return CompareView(
        title=title,
        subtitle=f"{len(cmp.runs)} runs · baseline {cmp.labels[0]} · {len(cmp.common_rows())} common points · "
                 f"{len(cmp.partial_rows())} in some runs only",
        labels=cmp.labels, facts=_facts(cmp), notices=_notices(cmp), method=_method(cmp),
        summary=_summary(cmp), gate=gate, gate_tables=_gate_tables(gate), families=families, partial=partial,
        toc=toc, version=__version__,
    )


def render_html(cmp: Comparison, gate: GateResult | None = None) -> str:
    """compare.html as one string (its charts drawn together, with element ids unique per chart)."""
    with charts.deferred() as batch:
        text = page_environment().get_template("compare.html.j2").render(v=build_view(cmp, gate))
    return batch.fill(text)


# ---------------------------------------------------------------- CSV

CSV_COLUMNS = ["key", "label", "family", "metric", "unit", "run", "run_id", "baseline", "value", "samples",
               "sample_kind", "ratio", "ratio_se", "change_pct", "p_value", "significance", "reason", "status"]


def _csv_row(cmp: Comparison, r: Row, m: str, i: int) -> dict[str, Any]:
    """One point, metric and run."""
    rd = cmp.runs[i]
    p = r.points[i]
    cells = r.cells.get(m)
    c = cells[i] if cells else None
    v = c.value if c is not None else None
    j = c.judgement if c is not None else None
    ratio = c.ratio if c is not None else None
    return {
        "key": r.key, "label": r.label, "family": r.family, "metric": m, "unit": metrics.get(m).unit if m else "",
        "run": rd.label, "run_id": rd.run.run_id, "baseline": cmp.labels[0],
        "value": "" if v is None else f"{v.value:.6g}", "samples": "" if v is None else len(v.samples),
        "sample_kind": p.sample_kind if p is not None else "",
        "ratio": "" if ratio is None else f"{ratio:.6g}",
        "ratio_se": "" if j is None or j.ratio_se is None else f"{j.ratio_se:.4g}",
        "change_pct": "" if ratio is None else f"{(ratio - 1) * 100:.4g}",
        "p_value": "" if j is None or j.p_value is None else f"{j.p_value:.4g}",
        "significance": "" if j is None else j.verdict, "reason": "" if j is None else j.reason,
        "status": "absent" if p is None else p.status,
    }


def csv_rows(cmp: Comparison) -> Iterable[dict[str, Any]]:
    for r in cmp.rows:
        for m in [m for m in metrics.COMPARED if m in r.cells] or [""]:
            for i in range(len(cmp.runs)):
                yield _csv_row(cmp, r, m, i)


def render_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(cmp):
        w.writerow(row)
    return buf.getvalue()


def write(cmp: Comparison, out_dir: Path, gate: GateResult | None = None) -> Path:
    """Write compare.html and compare.csv into out_dir (atomically); returns the HTML path."""
    path = out_dir / "compare.html"
    atomic.write_text(out_dir / "compare.csv", render_csv(cmp))
    atomic.write_text(path, render_html(cmp, gate))
    atomic.make_shareable(path)
    atomic.make_shareable(out_dir / "compare.csv")
    return path
