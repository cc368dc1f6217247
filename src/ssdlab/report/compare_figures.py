"""The charts and ratio tables of each family of compared points in compare.html: overlays of every run (by
block size, outstanding I/O, IOPS; PTS convergence and WSAT curves; per-interval samples; latency percentiles),
grouped bars, and PTS block size x R/W mix tables of each run's ratios to the baseline, with the ratio cells'
marks (better, worse, not significant, cannot judge).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from markupsafe import Markup

from ssdlab import metrics
from ssdlab.compare.matching import Cell, Comparison, Curve, PointData, Row
from ssdlab.report import charts
from ssdlab.report.charts import Series
from ssdlab.report.sections import Chart, Styled, Table
from ssdlab.report.templating import fragment
from ssdlab.units import format_bs

MAX_PERCENTILE_CHARTS = 8  # per family
STYLES = ("-o", "--s", ":^", "-.d", "-v", "--x")


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


def metric_title(metric: str) -> str:
    """'read p99 latency (µs)', 'IOPS' (no unit repeated)."""
    info = metrics.get(metric)
    return info.label if info.unit in info.label else f"{info.label} ({info.unit})"


# ---------------------------------------------------------------- overlay charts


def point_value(p: PointData | None, metric: str) -> float | None:
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
            out.setdefault((i, group(p)), []).append((float(xv), point_value(p, metric)))
    return [(i, g, sorted(v)) for (i, g), v in sorted(out.items(), key=lambda kv: (kv[0][0], str(kv[0][1])))]


def _overlay(cmp: Comparison, rows: Sequence[Row], *, group: Callable[[PointData], Any],
             group_name: Callable[[Any], str], x: Callable[[PointData], Any], metric: str, title: str,
             xlabel: str, logx: bool = False, logy: bool | None = None, bs_ticks: bool = False,
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
        kwargs = {"xticks": xs, "xfmt": charts.bs_tick}
    svg = charts.line_chart(series, title=title, xlabel=xlabel, ylabel=metric_title(metric), log2x=logx,
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
                     x=lambda p: point_value(p, "iops"), metric="lat_mean_us",
                     title="Demand intensity: mean response time vs IOPS", xlabel="IOPS", logy=True)], []


def _bs_sweep(cmp: Comparison, common: list[Row]) -> Figures:
    figs = []
    for matrix, sub in _by_matrix(common).items():
        w = sub[0].points[0].point.workload if sub[0].points[0] is not None else None
        metric = "iops" if w is not None and w.is_random else "bw_MBps"
        figs.append(_overlay(cmp, sub, group=lambda p: None, group_name=lambda g: "", x=_bs, metric=metric,
                             title=f"{matrix}: {metrics.get(metric).label} vs block size", xlabel="block size",
                             logx=True, logy=True if metric == "iops" else None, bs_ticks=True,
                             caption="One line per run"))
    return figs, []


def _qd_sweep(cmp: Comparison, common: list[Row]) -> Figures:
    return [_overlay(cmp, sub, group=lambda p: p.point.workload.numjobs, group_name=_threads,
                     x=lambda p: p.point.workload.outstanding, metric=metric,
                     title=f"{matrix}: {metric_title(metric)} vs outstanding I/O",
                     xlabel="outstanding I/O (threads × QD)", logx=True, logy=logy)
            for matrix, sub in _by_matrix(common).items() for metric, logy in (("iops", None), ("p99_us", True))], []


def _latency_vs_iops(cmp: Comparison, common: list[Row]) -> list[Chart | None]:
    return [_overlay(cmp, common, group=_curve_group, group_name=_str_doc("curve"), x=lambda p: point_value(p, "iops"),
                     metric=metric, title=f"{metrics.get(metric).label} vs IOPS", xlabel="IOPS", logy=True)
            for metric in ("lat_mean_us", "p99_us", "p99_99_us")]


_FAMILY_FIGURES: dict[str, Callable[[Comparison, list[Row]], Figures]] = {
    "pts-iops": _pts_iops, "pts-lat": _pts_lat, "pts-cbw": _demand, "pts-dirth": _demand, "bs-sweep": _bs_sweep,
    "qd-sweep": _qd_sweep,
    **dict.fromkeys(("pts-tp128", "pts-tp1024", "points", "matrix", "app", "iorate", "stability", "pts-captures"),
                    _bars_only),
}


def family_figures(cmp: Comparison, family: str, rows: Sequence[Row]) -> tuple[list[Chart], Markup]:
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
    if p.point.tags.curve:
        return str(p.point.tags.curve).split("|")[0]
    mix = _axis(p, "rwmixread")
    return f"{w.bssplit or format_bs(w.bs)} {mix}% read T{w.numjobs}"


def _bars(cmp: Comparison, rows: Sequence[Row]) -> list[Chart]:
    """Grouped horizontal bars per point (one bar per run) for IOPS and MB/s (CrystalDiskMark-like)."""
    if not rows or len(rows) > 40:
        return []
    labels = [r.label for r in rows]
    figs = []
    for metric in ("bw_MBps", "iops"):
        series = {cmp.labels[i]: [point_value(r.points[i], metric) for r in rows] for i in range(len(cmp.runs))}
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
