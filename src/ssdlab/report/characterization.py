"""Report sections of the characterization suites (and user TOML suites): one view per matrix kind.

Views (chosen by the `view` tag the suite put on each point):
  bs-sweep   MB/s, IOPS and latency vs block size, one series per matrix; skipped sizes listed with the reason
  qd-sweep   IOPS and latency vs total outstanding I/O, one series per thread count
  stability  per-second IOPS over time, IOPS histogram, mean/stdev/CoV table, per-second mean and p99 latency
  lat-curve  mean/p99/p99.9/p99.99 vs IOPS per (block size, mix), one series per thread count, p99 limit called out
  iorate     latency vs achieved IOPS of each curve (uncapped max, then % of it)
  app        the application model's fio translation table, then its curve or load sweep
  matrix     a table of every point and IOPS against the first swept axis (user suites)
After the views, the latency distribution of the measured points (report.latency: histogram, CDF, exceedance
with the 3/4/5 nines, confidence-level table).
Long phases (precondition points with per-second series) are drawn GFIO-style: IOPS and MB/s scatter over
time, with the total data written.

`axis_value` and `fmt_axis` are also what `ssdlab plot` uses; metrics come from ssdlab.metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ssdlab import metrics
from ssdlab.formatting import fixed
from ssdlab.report import charts, latency
from ssdlab.report.charts import RefLine, Series
from ssdlab.report.sections import Chart, Section, Table, register
from ssdlab.report.templating import fragment
from ssdlab.results.model import Measurement, PointResult, Run, TestPoint
from ssdlab.units import format_bs, format_bytes, format_duration

FAMILY = "characterization"
DEFAULT_P99_LIMIT_US = 1000.0

# ---------------------------------------------------------------- metrics and axes (axes shared with `ssdlab plot`)

AXES = ("bs", "iodepth", "numjobs", "outstanding", "rwmixread", "rw", "rate", "rate_pct", "target_iops",
        "matrix", "bssplit", "label")


def metric_value(r: PointResult, name: str) -> float | None:
    """One metric of a stored point by name (ssdlab.metrics), as these pages and `ssdlab plot` show it: None when
    the point did not finish ok (or the name is no metric); a rate (IOPS, MB/s) of a direction the point did not
    issue is 0. Latencies in µs (fio clat)."""
    if r.status != "ok" or r.measurement is None or not metrics.is_metric(name):
        return None
    v = metrics.value(name, r)
    return 0.0 if v is None and metrics.get(name).unit in ("IOPS", "MB/s") else v


def axis_value(point: TestPoint, name: str) -> Any:
    """A swept parameter of a point: workload fields, outstanding I/O, rate, or any tag axis."""
    w = point.workload
    tags = point.tags
    if name == "bs":
        return w.bs
    if name in ("iodepth", "numjobs", "rw", "bssplit"):
        return getattr(w, name)
    if name in ("qd", "threads"):
        return w.iodepth if name == "qd" else w.numjobs
    if name == "outstanding":
        return w.outstanding
    if name == "rwmixread":
        return w.rwmixread if w.rwmixread is not None else (0 if w.writes else 100)
    if name == "rate":
        return tags.rate
    if name in ("rate_pct", "target_iops"):
        return 100.0 if name == "rate_pct" and tags.rate == "max" else tags.get(name)
    if name in ("matrix", "group"):
        return tags.matrix or point.group
    if name == "label":
        return point.label
    axes = tags.axes
    if isinstance(axes, dict) and name in axes:
        return axes[name]
    return tags.get(name)


def fmt_axis(name: str, value: Any) -> str:
    """Display text for an axis value (block sizes as 4K, 1M)."""
    if name == "bs" and isinstance(value, int):
        return format_bs(value)
    if isinstance(value, float) and value == int(value):
        return str(int(value))
    return str(value)


# ---------------------------------------------------------------- view models


@dataclass(frozen=True)
class Group:
    """One matrix (or curve) of a view (templates/sections/_characterization.html.j2 group): its heading, charts,
    callouts, every point's numbers and the points that were not measured."""

    heading: str | None
    charts: list[Chart]
    table: Table
    skipped: list[str]
    callouts: list[str] | None = None


@dataclass(frozen=True)
class IorateCurve:
    heading: str
    chart: Chart
    table: Table
    read_share: str | None  # the max run's read share ('' when no max run)


@dataclass(frozen=True)
class StabilityPoint:
    label: str
    problem: str | None  # why there are no statistics
    stats: Table | None = None
    charts: list[Chart] = field(default_factory=list)
    p99: Table | None = None  # per-second p99 (None: no histogram logs)


@dataclass(frozen=True)
class Translation:
    """An application model's published values and their fio translation."""

    tables: list[Table]
    notes: list[str]


@dataclass(frozen=True)
class View:
    """What a characterization view's template shows (the fields it uses)."""

    notes: list[str]
    charts: list[Chart] = field(default_factory=list)
    groups: list[Group] = field(default_factory=list)
    limit: str = ""
    curves: list[IorateCurve] = field(default_factory=list)
    points: list[StabilityPoint] = field(default_factory=list)
    translation: Translation | None = None
    table: Table | None = None


def _section(title: str, template: str, view: View, anchor: str) -> list[Section]:
    return [Section(title, fragment(template, v=view), anchor)]


# ---------------------------------------------------------------- grouping

def _mine(run: Run) -> list[PointResult]:
    return [r for r in run.points if r.point.tags.family == FAMILY]


def _by(results: Iterable[PointResult], key: Callable[[PointResult], Any]) -> dict[Any, list[PointResult]]:
    out: dict[Any, list[PointResult]] = {}
    for r in results:
        out.setdefault(key(r), []).append(r)
    return out


def _matrix(r: PointResult) -> str:
    return str(r.point.tags.matrix or r.point.group)


def _skipped(results: Sequence[PointResult]) -> list[str]:
    return [f"{r.point.label}: {r.status} — {r.reason}" for r in results if r.status != "ok"]


def _status(r: PointResult) -> str:
    return r.status if r.status == "ok" else f"{r.status}: {r.reason}"


def _perf_table(results: Sequence[PointResult], axes: Sequence[str]) -> Table:
    headers = [*axes, "IOPS", "MB/s", "mean µs", "p99 µs", "p99.9 µs", "p99.99 µs", "CPU %", "status"]
    rows = []
    for r in results:
        row: list[Any] = [fmt_axis(a, axis_value(r.point, a)) for a in axes]
        row += [fixed(metric_value(r, "iops"), 0), *(fixed(metric_value(r, m)) for m in (
            "bw_MBps", "lat_mean_us", "p99_us", "p99.9_us", "p99.99_us")), _cpu_text(r), _status(r)]
        rows.append(row)
    return Table(headers, rows)


def _cpu_text(r: PointResult) -> str:
    """fio's CPU %, 'n/a' on the simulator (which uses no host CPU per I/O), as every table says it."""
    simulated = r.measurement is not None and r.measurement.engine == "sim"
    return "n/a" if simulated else fixed(metric_value(r, "cpu"))


def _values(results: Sequence[PointResult], x: str, y: str) -> tuple[list[float], list[float | None]]:
    xs: list[float] = []
    ys: list[float | None] = []
    for r in results:
        if r.status != "ok":
            continue
        xv = metric_value(r, x) if metrics.is_metric(x) else axis_value(r.point, x)
        if xv is None:
            continue
        try:
            xs.append(float(xv))
        except (TypeError, ValueError):
            continue
        ys.append(metric_value(r, y))
    return xs, ys


def _common_notes(results: Sequence[PointResult]) -> list[str]:
    notes = []
    fps = {int(v) for r in results if (v := r.point.tags.footprint_bytes) is not None}
    mis = {int(v) for r in results if (v := r.point.tags.misalign_bytes) is not None}
    if fps:
        notes.append("footprint: I/O limited to the first " + ", ".join(format_bytes(f) for f in sorted(fps))
                     + " of the target")
    if mis:
        notes.append("misaligned: every I/O offset shifted by " + ", ".join(f"{m} B" for m in sorted(mis)))
    return notes


def _chart(svg: str) -> Chart:
    return Chart(svg)


# ---------------------------------------------------------------- views

def _bs_sweep(results: list[PointResult]) -> list[Section]:
    groups = _by(results, _matrix)
    sizes = sorted({r.point.workload.bs for r in results})
    ticks = [float(s) for s in sizes]
    figs = []
    for metric, ylabel, logy in (("bw_MBps", "MB/s", None), ("iops", "IOPS", True),
                                 ("lat_mean_us", "mean latency (µs)", True)):
        series = []
        for name, rs in groups.items():
            xs, ys = _values(rs, "bs", metric)
            series.append(Series(name, xs, ys))
        figs.append(_chart(charts.line_chart(series, title=f"{ylabel} vs block size", xlabel="block size",
                                             ylabel=ylabel, log2x=True, logy=logy, xticks=ticks,
                                             xfmt=charts.bs_tick)))
    rows = [Group(f"{name}: {rs[0].point.workload.rw} Q{rs[0].point.workload.iodepth}T{rs[0].point.workload.numjobs}",
                  [], _perf_table(rs, ["bs"]), _skipped(rs)) for name, rs in groups.items()]
    return _section("Block-size sweep", "characterization_groups.html.j2",
                    View(_common_notes(results), charts=figs, groups=rows), "bs-sweep")


def _qd_group(name: str, rs: list[PointResult]) -> Group:
    w = rs[0].point.workload
    mix = f" R{w.rwmixread}" if w.rwmixread is not None else ""
    by_t = _by(rs, lambda r: r.point.workload.numjobs)
    figs = []
    for metric, ylabel, logy in (("iops", "IOPS", None), ("lat_mean_us", "mean latency (µs)", True),
                                 ("p99_us", "p99 latency (µs)", True)):
        series = []
        for t, trs in sorted(by_t.items()):
            ordered = sorted(trs, key=lambda r: r.point.workload.outstanding)
            xs, ys = _values(ordered, "outstanding", metric)
            series.append(Series(f"T{t}", xs, ys))
        figs.append(_chart(charts.line_chart(series, title=f"{name}: {ylabel} vs outstanding I/O",
                                             xlabel="outstanding I/O (threads × QD)", ylabel=ylabel, log2x=True,
                                             logy=logy)))
    return Group(f"{name}: {w.rw} {format_bs(w.bs)}{mix}", figs, _perf_table(rs, ["numjobs", "iodepth", "outstanding"]),
                 _skipped(rs))


def _qd_sweep(results: list[PointResult]) -> list[Section]:
    groups = [_qd_group(name, rs) for name, rs in _by(results, _matrix).items()]
    return _section("IOPS and latency vs outstanding I/O", "characterization_groups.html.j2",
                    View(_common_notes(results), groups=groups), "qd-sweep")


def _p99_table(p99: dict[str, list[tuple[float, float]]]) -> Table:
    rows = []
    for d in ("read", "write", "all"):
        vals = [v for _, v in p99.get(d, [])]
        if vals:
            rows.append([d, len(vals), fixed(sorted(vals)[len(vals) // 2]), fixed(max(vals))])
    return Table(["direction", "seconds", "median of per-second p99 µs", "worst second p99 µs"], rows)


def _stability_point(r: PointResult, run_dir: Path) -> StabilityPoint:
    from ssdlab.suites import stability

    m = r.measurement
    if m is None or r.status != "ok":
        return StabilityPoint(r.point.label, f"{r.status}: {r.reason}")
    series = {k: list(v) for k, v in m.series.items()}
    total, t = stability.complete_seconds(stability.total_iops_series(series), list(series.get("time_s", [])))
    st = stability.iops_stats(total)
    if st is None:
        return StabilityPoint(r.point.label, "no per-second samples were recorded (fio logs missing)")
    stats = Table(["seconds", "mean IOPS", "stdev", "CoV %", "min", "1st pct", "max"],
                  [[st.samples, fixed(st.mean, 0), fixed(st.stdev, 0), f"{st.cov_pct:.2f}", fixed(st.minimum, 0),
                    fixed(st.p1, 0), fixed(st.maximum, 0)]])
    figs = [_chart(charts.line_chart([Series("IOPS (read+write)", t, total, style="-")], title="IOPS per second",
                                     xlabel="time (s)", ylabel="IOPS", ref_lines=[RefLine(st.mean,
                                                                                          f"mean {st.mean:,.0f}")])),
            _chart(charts.histogram_chart(total, bins=min(40, max(5, st.samples // 3)),
                                          title="Distribution of per-second IOPS", xlabel="IOPS", ylabel="seconds"))]
    lat_series = [Series(f"{d} mean", list(series["time_s"]), list(series[f"{d}_lat_mean_us"]), style="-")
                  for d in ("read", "write") if f"{d}_lat_mean_us" in series]
    files = list(m.extra.hist_logs)
    p99 = stability.per_interval_percentiles(run_dir / "points" / r.point.id, files,
                                             int(m.extra.hist_log_ms or 1000)) if files else {}
    lat_series += [Series(f"{d} p99", [a for a, _ in p99[d]], [b for _, b in p99[d]], style="-")
                   for d in ("read", "write") if d in p99]
    if lat_series:
        figs.append(_chart(charts.line_chart(lat_series, title="Latency per second (mean and p99)",
                                             xlabel="time (s)", ylabel="µs", logy=True)))
    return StabilityPoint(r.point.label, None, stats, figs, _p99_table(p99) if p99 else None)


def _stability(results: list[PointResult], run_dir: Path) -> list[Section]:
    return _section("Stability: per-second IOPS, CoV and p99", "characterization_stability.html.j2",
                    View(_common_notes(results), points=[_stability_point(r, run_dir) for r in results]), "stability")


def _limit(results: Sequence[PointResult]) -> float:
    for r in results:
        v = r.point.tags.p99_limit_us
        if v is not None:
            return float(v)
    return DEFAULT_P99_LIMIT_US


def _callout(t: int, ordered: Sequence[PointResult], xs: list[float], ys: list[float | None], limit: float) -> str:
    """Where one thread count's p99 crosses the limit (or that it never does)."""
    from ssdlab.suites.curves import p99_crossing

    pts = [(x, y if y is not None else 0.0, {"qd": r.point.workload.iodepth}) for x, y, r in zip(xs, ys, ordered,
                                                                                                 strict=True)]
    i = p99_crossing(pts, limit)
    if i is None:
        best = max(xs) if xs else 0.0
        return (f"T{t}: p99 stays under {limit:g} µs up to QD {ordered[-1].point.workload.iodepth if ordered else '-'} "
                f"({best:,.0f} IOPS)")
    ok = [x for x, (_, y, _) in zip(xs, pts, strict=True) if y <= limit]
    return (f"T{t}: p99 crosses {limit:g} µs at QD {pts[i][2]['qd']} ({pts[i][0]:,.0f} IOPS, p99 {pts[i][1]:,.0f} µs); "
            f"best IOPS within the limit {max(ok) if ok else 0:,.0f}")


def _curve_group(size: str, mix: Any, rw: str, rs: list[PointResult], limit: float) -> Group:
    by_t = _by(rs, lambda r: r.point.workload.numjobs)
    callouts = []
    figs = []
    for metric, label in (("lat_mean_us", "mean"), ("p99_us", "p99"), ("p99.9_us", "p99.9"), ("p99.99_us", "p99.99")):
        series = []
        for t, trs in sorted(by_t.items()):
            ordered = sorted((r for r in trs if r.status == "ok"), key=lambda r: r.point.workload.iodepth)
            xs = [metric_value(r, "iops") or 0.0 for r in ordered]
            ys = [metric_value(r, metric) for r in ordered]
            series.append(Series(f"T{t}", xs, ys))
            if metric == "p99_us":
                callouts.append(_callout(t, ordered, xs, ys, limit))
        refs = [RefLine(limit, f"limit {limit:g} µs")] if metric == "p99_us" else []
        figs.append(_chart(charts.line_chart(series, title=f"{size} {mix}% read: {label} latency vs IOPS",
                                             xlabel="IOPS", ylabel=f"{label} latency (µs)", logy=True,
                                             ref_lines=refs, size=(6.0, 3.2))))
    return Group(f"{size} {rw}, {mix}% read", figs, _perf_table(rs, ["numjobs", "iodepth"]), _skipped(rs), callouts)


def _lat_curve(results: list[PointResult]) -> list[Section]:
    limit = _limit(results)
    key = lambda r: (r.point.workload.bssplit or format_bs(r.point.workload.bs),  # noqa: E731
                     axis_value(r.point, "rwmixread"), r.point.workload.rw)
    groups = [_curve_group(size, mix, rw, rs, limit) for (size, mix, rw), rs in _by(results, key).items()]
    return _section("Latency vs IOPS", "characterization_lat_curve.html.j2",
                    View(_common_notes(results), groups=groups, limit=f"{limit:g}"), "lat-curve")


def _curve_key(r: PointResult) -> str:
    return str(r.point.tags.curve or _matrix(r))


def _read_fraction(tags: Any) -> float:
    return 1.0 if tags.read_fraction is None else float(tags.read_fraction)


def _iorate_row(r: PointResult) -> list[Any]:
    t = r.point.tags
    achieved = metric_value(r, "iops")
    target = t.target_iops
    return [t.rate if t.rate is not None else "-", fixed(float(target), 0) if target else "uncapped",
            fixed(achieved, 0),
            f"{achieved / float(target) * 100:.0f}%" if achieved is not None and target else "–",
            fixed(metric_value(r, "read_iops"), 0), fixed(metric_value(r, "write_iops"), 0),
            *(fixed(metric_value(r, m)) for m in ("lat_mean_us", "p99_us", "p99.9_us")), _status(r)]


def _iorate_curve(curve: str, rs: list[PointResult]) -> IorateCurve:
    name = curve.split("|")[0]
    w = rs[0].point.workload
    curve_pts = [r for r in rs if r.status == "ok" and r.point.tags.rate != "max"]
    curve_pts.sort(key=lambda r: float(r.point.tags.target_iops or 0))
    maxes = [r for r in rs if r.status == "ok" and r.point.tags.rate == "max"]
    xs = [metric_value(r, "iops") or 0.0 for r in curve_pts]
    series = [Series(label, xs, [metric_value(r, metric) for r in curve_pts])
              for metric, label in (("lat_mean_us", "mean"), ("p99_us", "p99"), ("p99.9_us", "p99.9"))]
    series += [Series("uncapped max (mean)", [metric_value(r, "iops") or 0.0], [metric_value(r, "lat_mean_us")],
                      style="s", color="#000000") for r in maxes]
    chart = _chart(charts.line_chart(series, title=f"{name}: latency vs achieved IOPS", xlabel="IOPS",
                                     ylabel="latency (µs)", logy=True))
    table = Table(["rate", "target IOPS", "achieved IOPS", "of target", "read IOPS", "write IOPS", "mean µs", "p99 µs",
                   "p99.9 µs", "status"], [_iorate_row(r) for r in rs])
    share = None
    if maxes and curve_pts:
        share = f"{float(_read_fraction(curve_pts[0].point.tags)) * 100:.1f}"
    return IorateCurve(f"{name}: {w.rw} {w.bssplit or format_bs(w.bs)} Q{w.iodepth}T{w.numjobs}", chart, table, share)


def _iorate_curves(results: list[PointResult]) -> list[IorateCurve]:
    return [_iorate_curve(curve, rs) for curve, rs in _by(results, _curve_key).items()]


def _iorate(results: list[PointResult]) -> list[Section]:
    return _section("iorate curves: latency vs achieved IOPS", "characterization_iorate.html.j2",
                    View(_common_notes(results), curves=_iorate_curves(results)), "iorate")


def translation(record: dict[str, Any]) -> Translation:
    """An application model's published values and their fio translation."""
    pub = record.get("published", {})
    tables = [Table(["published", "value"], [
        ["model", record.get("model", "")], ["source", record.get("source", "")],
        ["read %", pub.get("read_pct")], ["random %", pub.get("random_pct")],
        ["dedupratio", pub.get("dedupratio")], ["compratio", pub.get("compratio")]])]
    rows = []
    for d, info in record.get("directions", {}).items():
        published = info.get("published", {})
        fio = info.get("fio", {})
        for size in sorted(set(published) | set(fio), key=lambda s: _bs_sort(s)):
            rows.append([d, size, published.get(size, "–"), fio.get(size, "–")])
        rows.append([d, "sum", info.get("listed_sum"), sum(fio.values())])
    tables.append(Table(["direction", "block size", "published % of I/Os", "fio bssplit %"], rows))
    tables.append(Table(["fio option", "value"], [[k, v] for k, v in record.get("fio", {}).items()]))
    return Translation(tables, list(record.get("notes", [])))


def _bs_sort(text: str) -> int:
    from ssdlab.units import parse_size

    try:
        return parse_size(text)
    except Exception:
        return 0


def _app_sweep(name: str, rs: list[PointResult]) -> Group:
    ordered = sorted(rs, key=lambda r: r.point.workload.outstanding)
    figs = []
    for metric, ylabel, logy in (("iops", "IOPS", None), ("lat_mean_us", "mean latency (µs)", True)):
        xs, ys = _values(ordered, "outstanding", metric)
        figs.append(_chart(charts.line_chart([Series(name, xs, ys)], title=f"{ylabel} vs outstanding I/O",
                                             xlabel="outstanding I/O", ylabel=ylabel, log2x=True, logy=logy)))
    return Group(None, figs, _perf_table(ordered, ["numjobs", "iodepth"]), _skipped(ordered))


def _app(results: list[PointResult]) -> list[Section]:
    record = next((r.point.tags.translation for r in results if r.point.tags.translation), None)
    curve = [r for r in results if r.point.tags.rate is not None]
    sweep = [r for r in results if r.point.tags.rate is None]
    view = View(_common_notes(results), translation=translation(record) if isinstance(record, dict) else None,
                curves=_iorate_curves(curve) if curve else [],
                groups=[_app_sweep(name, rs) for name, rs in _by(sweep, _matrix).items()])
    title = f"Application model: {record.get('model')}" if isinstance(record, dict) else "Application model"
    return _section(title, "characterization_app.html.j2", view, "app")


def _matrix_chart(name: str, rs: list[PointResult], swept: list[str]) -> Chart | None:
    numeric = [a for a in swept if a in ("bs", "iodepth", "numjobs", "rwmixread")]
    if numeric:
        x = numeric[0]
        rest = [a for a in swept if a != x]
        groups = _by(rs, lambda r, rest=rest: " ".join(  # type: ignore[misc]
            f"{a}={fmt_axis(a, axis_value(r.point, a))}" for a in rest))
        series = []
        for label, grs in groups.items():
            ordered = sorted(grs, key=lambda r: float(axis_value(r.point, x) or 0))
            xs, ys = _values(ordered, x, "iops")
            series.append(Series(label or name, xs, ys))
        return _chart(charts.line_chart(series, title=f"{name}: IOPS vs {x}", xlabel=x, ylabel="IOPS",
                                        log2x=x in ("bs", "iodepth", "numjobs"),
                                        xfmt=charts.bs_tick if x == "bs" else None))
    ok = [r for r in rs if r.status == "ok"]
    if not ok:
        return None
    cats = [" ".join(fmt_axis(a, axis_value(r.point, a)) for a in swept) or r.point.label for r in ok]
    return _chart(charts.bar_chart(cats, {"IOPS": [metric_value(r, "iops") for r in ok]}, title=f"{name}: IOPS",
                                   ylabel="IOPS"))


def _generic(results: list[PointResult]) -> list[Section]:
    groups = []
    for name, rs in _by(results, _matrix).items():
        swept = list(rs[0].point.tags.swept)
        chart = _matrix_chart(name, rs, swept)
        groups.append(Group(name, [chart] if chart is not None else [], _perf_table(rs, swept or ["label"]),
                            _skipped(rs)))
    return _section("Test matrix", "characterization_groups.html.j2", View(_common_notes(results), groups=groups),
                    "matrix")


def _long_phase(r: PointResult, m: Measurement) -> tuple[list[Any], list[Chart]]:
    from ssdlab.suites import stability

    s = {k: list(v) for k, v in m.series.items()}
    t = s.get("time_s", [])
    iops = [a + b for a, b in zip(s.get("read_iops", [0.0] * len(t)), s.get("write_iops", [0.0] * len(t)),
                                  strict=False)]
    bw = [a + b for a, b in zip(s.get("read_bw_MBps", [0.0] * len(t)), s.get("write_bw_MBps", [0.0] * len(t)),
                                strict=False)]
    iops, t_iops = stability.complete_seconds(iops, t)  # fio's final interval is cut short
    bw, t_bw = stability.complete_seconds(bw, t)
    written = sum(d.io_bytes for n, d in m.directions.items() if n == "write")
    dur = t[-1] if t else (r.point.workload.runtime_s or m.runtime_ms / 1000.0 / max(1, m.jobs))
    row = [r.point.label, "ok", format_duration(dur), format_bytes(written),
           fixed(sum(iops) / len(iops), 0) if iops else "–", fixed(sum(bw) / len(bw)) if bw else "–"]
    if not t:
        return row, []
    return row, [
        _chart(charts.line_chart([Series("IOPS", t_iops, iops, style=".")],
                                 title=f"{r.point.group}: IOPS per second (total written {format_bytes(written)})",
                                 xlabel="time (s)", ylabel="IOPS")),
        _chart(charts.line_chart([Series("MB/s", t_bw, bw, style=".", color="#D55E00")],
                                 title=f"{r.point.group}: bandwidth per second", xlabel="time (s)", ylabel="MB/s"))]


def _long_phases(results: list[PointResult]) -> list[Section]:
    rows = []
    figs = []
    for r in results:
        if r.measurement is None or r.status != "ok":
            rows.append([r.point.label, r.status, "–", "–", "–", "–"])
            continue
        row, found = _long_phase(r, r.measurement)
        rows.append(row)
        figs += found
    summary = Table(["phase", "status", "duration", "data written", "mean IOPS", "mean MB/s"], rows)
    return _section("Long phases (GFIO-style per-second view)", "characterization_long_phases.html.j2",
                    View([], charts=figs, table=summary), "long-phases")


def _applies(run: Run) -> bool:
    return any(r.point.tags.family == FAMILY for r in run.points)


def build_sections(run: Run, run_dir: Path) -> list[Section]:
    """Sections for every view present in the run, in the order the views first appear."""
    mine = _mine(run)
    out: list[Section] = []
    phases = [r for r in mine if r.point.tags.view == "long-phase"]
    if phases:
        out.extend(_long_phases(phases))
    views = _by([r for r in mine if r.point.tags.view != "long-phase"],
                lambda r: str(r.point.tags.view or "matrix"))
    for view, rs in views.items():
        if view == "bs-sweep":
            out.extend(_bs_sweep(rs))
        elif view == "qd-sweep":
            out.extend(_qd_sweep(rs))
        elif view == "stability":
            out.extend(_stability(rs, run_dir))
        elif view == "lat-curve":
            out.extend(_lat_curve(rs))
        elif view == "iorate":
            out.extend(_iorate(rs))
        elif view == "app":
            out.extend(_app(rs))
        else:
            out.extend(_generic(rs))
    dist = latency.points_html([r for r in mine if r.point.phase == "measure"],
                               caption="Latency distribution of the measured points")
    if dist:
        out.append(Section("Latency distribution: histogram, CDF, exceedance and confidence levels", dist,
                           "latency-distribution"))
    return out


register(_applies, build_sections)
