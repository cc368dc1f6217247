"""`ssdlab plot RUN [RUN...] --x AXIS --y METRIC [--series AXIS] [--where AXIS=V,...] [--out FILE.svg|.png]`: any
metric against any swept parameter (or another metric, e.g. --x iops --y p99_us, or a category such as label, rw
or matrix) of stored runs, one series per run (and per --series value), drawn with the shared chart helpers.

A line joins only points that differ in the plotted axes. When the points also differ in a parameter that is
neither --x nor --series (say rw, when plotting IOPS against the queue depth of a sweep over three mixes), the
lines are split by it as well, and a note names every such axis (the parameters that merely follow from the
split ones, like rwmixread from rw, are named but not split again). A matrix (a point group's name) splits lines
only where two of its points would otherwise meet at one x value: `quick`'s RND4K Q1T1 and RND4K Q32T1 are one
line against iodepth. Against a metric x axis (a latency-vs-IOPS curve) the parameter with the most values traces
the curve. A categorical x axis (label, rw, matrix, or any axis with text values) is drawn as groups of bars,
split only where two points of one series share a category. Several runs overlay: one series per run.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError

# parameters a line must not silently run across (besides --x and --series)
CHECKED_AXES = ("rw", "bs", "bssplit", "iodepth", "numjobs", "rwmixread", "rate", "target_iops", "matrix", "round",
                "sample")
# names of point groups rather than parameters: they split lines only where two of their points meet at one x
_GROUP_NAMES = ("matrix",)
# axes drawn as categories (besides any axis whose values are not numbers)
CATEGORICAL = ("label", "rw", "matrix", "group", "bssplit")
# axes drawn on a base-2 log axis: they double from point to point (1, 2, 4 ... 256 queued I/Os; 4K ... 1M)
LOG2 = ("bs", "iodepth", "numjobs", "outstanding", "qd", "threads", "toio")
# the names of parameters on an axis (a metric's name comes from the registry: metrics.Metric.title)
TITLES = {"bs": "block size", "iodepth": "queue depth (iodepth)", "numjobs": "threads (numjobs)",
          "outstanding": "outstanding I/O (threads × queue depth)", "rwmixread": "reads (% of I/Os, rwmixread)",
          "rate": "rate", "rate_pct": "rate (% of the maximum)", "target_iops": "target IOPS", "qd": "queue depth",
          "threads": "threads", "toio": "total outstanding I/O (TOIO)", "round": "round", "sample": "sample",
          "rw": "read/write pattern (rw)", "label": "point", "matrix": "matrix", "group": "group",
          "bssplit": "block-size mix (bssplit)"}
# axes that move with the x axis by construction (outstanding = iodepth x numjobs, ...)
_DERIVED = {"outstanding": {"iodepth", "numjobs"}, "rate_pct": {"rate", "target_iops"},
            "rate": {"rate_pct", "target_iops"}, "target_iops": {"rate", "rate_pct"}, "qd": {"iodepth"},
            "threads": {"numjobs"}}


def add_commands(sub: Any) -> dict[str, Any]:
    """Register the `plot` subcommand."""
    from ssdlab.metrics import PLOTTED
    from ssdlab.report.characterization import AXES

    p = sub.add_parser("plot", help="chart any metric against any swept parameter of stored runs (SVG/PNG)")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="run directories (or catalog ids); several runs: one series per run")
    p.add_argument("--x", required=True, metavar="AXIS",
                   help=f"x axis: a parameter ({', '.join(AXES)}, or any swept axis; label, rw and matrix are drawn "
                        "as categories) or a metric")
    p.add_argument("--y", required=True, metavar="METRIC", help=f"y metric: {', '.join(PLOTTED)} "
                                                                "(any pNN_us / read_pNN_us percentile)")
    p.add_argument("--series", metavar="AXIS", help="one line per value of this parameter (parameters that vary "
                                                    "but are not plotted split the lines too, with a note)")
    p.add_argument("--where", action="append", default=[], metavar="AXIS=V[,AXIS=V...]",
                   help="only points with these values, e.g. rw=randread,iodepth=32 (repeatable; all must hold)")
    p.add_argument("--labels", metavar="A,B,...", help="names of the runs in the legend (default: run ids)")
    p.add_argument("--out", type=Path, help="output file, .svg or .png (default RUN/plot-<y>-vs-<x>.svg for one "
                                            "run, ./plot-<y>-vs-<x>.svg for several)")
    p.add_argument("--phase", default="measure", help="points of this phase only (default measure; 'all' for all)")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis (queue depths, threads, outstanding I/O "
                                                      "and block sizes are on a base-2 log axis anyway)")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    p.add_argument("--force", action="store_true", help="replace --out even if ssdlab did not write it")
    return {"plot": cmd_plot}


def parse_where(texts: Sequence[str]) -> list[tuple[str, str]]:
    """--where values as (axis, value) pairs."""
    out = []
    for text in texts:
        for part in text.split(","):
            axis, sep, value = part.partition("=")
            if not sep or not axis.strip() or not value.strip():
                raise UsageError(f"--where {text!r}: use AXIS=VALUE[,AXIS=VALUE...], e.g. rw=randread,iodepth=32")
            out.append((axis.strip(), value.strip()))
    return out


def _matches(point: Any, axis: str, text: str) -> bool:
    from ssdlab.report.characterization import axis_value, fmt_axis
    from ssdlab.units import parse_size

    v = axis_value(point, axis)
    if v is None:
        return False
    if axis == "bs" and isinstance(v, int):
        try:
            return parse_size(text) == v
        except (ValueError, UsageError):
            return False
    if str(v) == text or fmt_axis(axis, v) == text:
        return True
    try:
        return float(text) == float(v)
    except (TypeError, ValueError):
        return False


@dataclass(frozen=True)
class _Entry:
    """One plotted point: its run's label, the stored test point, its x value (a number, or a category's text)
    and its y value."""

    run: str
    point: Any
    x: float | str
    y: float


@dataclass(frozen=True)
class PlotData:
    """What `plot` draws: its series by name, with (x, y) pairs sorted by x; for a categorical x axis the
    categories in order (x is then the category's index); and the axes the series were split by unasked."""

    lines: dict[str, list[tuple[float, float]]]
    categories: list[str] | None
    split: list[str]  # parameters that vary besides --x and --series: one series per value
    follow: list[str]  # parameters that vary too, but follow from the split ones and x (named, not split)
    traced: str | None  # against a metric x: the parameter that traces each curve

    def note(self) -> str | None:
        """One line naming the axes the user did not plot, or None when there are none."""
        parts = []
        if self.split:
            parts.append(f"the points also differ in {', '.join(self.split)}: one "
                         f"{'bar' if self.categories is not None else 'line'} per "
                         f"{'value' if len(self.split) == 1 else 'combination'}")
        if self.follow:
            parts.append(f"{', '.join(self.follow)} {'follows' if len(self.follow) == 1 else 'follow'} from "
                         + ("them and --x" if self.split else "--x"))
        if self.traced:
            parts.append(f"{self.traced} traces each curve")
        if self.split and len(self.lines) > 12:
            parts.append(f"{len(self.lines)} series: fewer with --where {self.split[-1]}=VALUE")
        return "; ".join(parts) or None


def plot_data(runs: Sequence[tuple[Any, str]], x: str, y: str, series: str | None, phase: str = "measure",
              where: Sequence[tuple[str, str]] = ()) -> PlotData:
    """The series of (x, y) pairs from the ok points of stored (run, label) pairs: one per run (when several),
    per --series value, and per value of any other parameter the points differ in (see the module docstring)."""
    from ssdlab.metrics import is_metric

    if not is_metric(y):
        raise UsageError(f"--y {y!r} is not a metric; use one of iops, bw_MBps, lat_mean_us, p99_us, "
                         "read_p99.9_us, usr_cpu, ... (see `ssdlab plot --help`)")
    entries, seen_x = _entries(runs, x, y, phase, where)
    if not seen_x:
        raise UsageError(f"no point has a value for --x {x}" + (" after --where" if where else "")
                         + ": use a swept parameter such as bs, iodepth, numjobs, outstanding, rwmixread, rate_pct, "
                           "a category (label, rw, matrix) or a metric")
    if not entries:
        raise UsageError(f"no point has {y}" + (" after --where" if where else ""))
    categorical = x in CATEGORICAL or any(isinstance(e.x, str) for e in entries)
    if categorical:
        entries = [_Entry(e.run, e.point, _category(x, e.x), e.y) for e in entries]
    split, follow, traced = _choose_split(entries, x, series, categorical=categorical, metric_x=is_metric(x))
    several = len(runs) > 1
    lines: dict[str, list[tuple[Any, float]]] = {}
    for e in entries:
        lines.setdefault(_name(e, series, split, several) or y, []).append((e.x, e.y))
    if not categorical:
        return PlotData({k: sorted(v) for k, v in lines.items()}, None, split, follow, traced)
    categories = list(dict.fromkeys(str(e.x) for e in entries))
    index = {c: float(i) for i, c in enumerate(categories)}
    return PlotData({k: [(index[str(c)], v) for c, v in pts] for k, pts in lines.items()}, categories, split,
                    follow, None)


def _category(x: str, value: float | str) -> str:
    from ssdlab.report.characterization import fmt_axis

    return fmt_axis(x, int(value) if x == "bs" and isinstance(value, float) else value)


def _entries(runs: Sequence[tuple[Any, str]], x: str, y: str, phase: str,
             where: Sequence[tuple[str, str]]) -> tuple[list[_Entry], bool]:
    """Every kept point with both an x and a y value, and whether any point had an x value at all."""
    from ssdlab.metrics import is_metric
    from ssdlab.report.characterization import axis_value, metric_value

    out: list[_Entry] = []
    seen_x = False
    for run, label in runs:
        for r in _kept(run, label, phase, where):
            xv = metric_value(r, x) if is_metric(x) else axis_value(r.point, x)
            if xv is None:
                continue
            seen_x = True
            yv = metric_value(r, y)
            if yv is None:
                continue
            try:
                xf: float | str = float(xv)
            except (TypeError, ValueError):
                xf = str(xv)
            out.append(_Entry(label, r.point, xf, yv))
    return out, seen_x


def _kept(run: Any, label: str, phase: str, where: Sequence[tuple[str, str]]) -> list[Any]:
    """The ok points of one run in `phase` ('all': every phase) that match every --where."""
    from ssdlab.report.characterization import axis_value

    kept = [r for r in run.points if r.status == "ok" and (phase == "all" or r.point.phase == phase)]
    for axis, value in where:
        if not any(axis_value(r.point, axis) is not None for r in kept):
            raise UsageError(f"--where {axis}={value}: no point of {label} has a value for {axis}")
        kept = [r for r in kept if _matches(r.point, axis, value)]
    return kept


def _text(e: _Entry, axis: str) -> str:
    from ssdlab.report.characterization import axis_value, fmt_axis

    return fmt_axis(axis, axis_value(e.point, axis))


def _name(e: _Entry, series: str | None, split: Sequence[str], several: bool) -> str:
    """The series an entry belongs to: its run (when several), its --series value, its split values."""
    parts = [e.run] if several else []
    parts += [f"{a}={_text(e, a)}" for a in ([series] if series else []) + list(split)]
    return " ".join(parts)


def _choose_split(entries: Sequence[_Entry], x: str, series: str | None, *, categorical: bool,
                  metric_x: bool) -> tuple[list[str], list[str], str | None]:
    """(axes to split the series by, varying axes that follow from them, the axis tracing a metric curve).

    A line must not join different workloads: against a numeric x every varying parameter splits, except one
    that the axes already split by determine (its value is then fixed on each line anyway), and a group name
    only where two of its points meet at one x. Against categories only what puts two points of one series in
    one category splits.
    """
    skip = {x, series or "", *_DERIVED.get(x, set())}
    count = {a: len({_text(e, a) for e in entries}) for a in CHECKED_AXES if a not in skip}
    varying = sorted((a for a, n in count.items() if n > 1), key=lambda a: -count[a])  # most values first
    params = [a for a in varying if a not in _GROUP_NAMES]
    traced = None
    if metric_x and params and not categorical:
        traced = params.pop(0)  # the curve is traced by the parameter with the most values
    split: list[str] = []
    for axis in ([] if categorical else params):
        if not _determined(entries, series, split, axis):
            split.append(axis)
    names = [a for a in varying if a in _GROUP_NAMES]
    for axis in (params + names if categorical else names):
        if _collide(entries, series, split) and not _determined(entries, series, split, axis):
            split.append(axis)
    follow = [a for a in varying if a not in split and a != traced]
    return split, follow, traced


def _key(e: _Entry, series: str | None, axes: Sequence[str]) -> tuple[str, ...]:
    return (e.run, _text(e, series) if series else "", *(_text(e, a) for a in axes))


def _determined(entries: Sequence[_Entry], series: str | None, axes: Sequence[str], axis: str) -> bool:
    """Whether `axis` has one value for each combination of run, --series value and `axes`."""
    return _unique(entries, lambda e: _key(e, series, axes), lambda e: _text(e, axis))


def _collide(entries: Sequence[_Entry], series: str | None, axes: Sequence[str]) -> bool:
    """Whether two different points would share one x value on one series split by `axes`."""
    return not _unique(entries, lambda e: (*_key(e, series, axes), str(e.x)), lambda e: e.point.id)


def _unique(entries: Sequence[_Entry], key: Callable[[_Entry], tuple[str, ...]],
            value: Callable[[_Entry], str]) -> bool:
    seen: dict[tuple[str, ...], str] = {}
    return all(seen.setdefault(key(e), value(e)) == value(e) for e in entries)


def cmd_plot(args: argparse.Namespace, env: Any) -> int:
    """Draw the chart, say which axes split it unasked, and print the path of the written file."""
    from ssdlab.report import charts
    from ssdlab.results.catalog import resolve
    from ssdlab.results.store import load_run

    dirs = [resolve(r) for r in args.runs]
    runs = [load_run(d) for d in dirs]
    labels = [x.strip() for x in args.labels.split(",")] if args.labels else [r.run_id for r in runs]
    if len(labels) != len(runs):
        raise UsageError(f"--labels gives {len(labels)} name(s) for {len(runs)} runs: give one per run")
    data = plot_data(list(zip(runs, labels, strict=True)), args.x, args.y, args.series, args.phase,
                     parse_where(args.where))
    default_dir = dirs[0] if len(dirs) == 1 else Path()
    out: Path = args.out or (default_dir / f"plot-{args.y}-vs-{args.x}.svg")
    replacing = charts.check_figure_path(out, force=args.force)
    if replacing:
        env.err(replacing)
    where = f" ({', '.join(args.where)})" if args.where else ""
    names = " vs ".join(labels) if len(runs) > 1 else runs[0].suite.split("/")[-1]
    title = f"{names}: {axis_title(args.y)} vs {axis_title(args.x)}{where}"
    note = data.note()
    if note:
        env.err(f"note: {note}")
        title += "\n" + textwrap.fill(note, 110)
    charts.write_figure(_figure(data, args, charts.plain_label(title)), out)
    env.out(str(out))
    return 0


def axis_title(name: str) -> str:
    """An axis's title: a metric's label and unit from the registry ('p99 latency (µs)'), a parameter's name
    ('queue depth (iodepth)'), else the name itself."""
    from ssdlab.metrics import get, is_metric

    return get(name).title if is_metric(name) else TITLES.get(name, name)


def _figure(data: PlotData, args: argparse.Namespace, title: str) -> Any:
    from ssdlab.report import charts

    xlabel, ylabel = charts.plain_label(axis_title(args.x)), charts.plain_label(axis_title(args.y))
    if data.categories is not None:
        bars = {charts.plain_label(name): _by_category(pts, len(data.categories)) for name, pts in data.lines.items()}
        return charts.category_figure(data.categories, bars, title=title, xlabel=xlabel, ylabel=ylabel,
                                      logy=args.logy)
    series = [charts.Series(charts.plain_label(label), [p[0] for p in pts], [p[1] for p in pts])
              for label, pts in data.lines.items()]
    xs = sorted({p[0] for pts in data.lines.values() for p in pts})
    log2 = args.x in LOG2 and bool(xs) and xs[0] > 0  # (a doubling parameter: QD 1, 2, 4 ... evenly spaced)
    fig = charts.line_figure(series, title=title, xlabel=xlabel, ylabel=ylabel, logx=args.logx and not log2,
                             logy=args.logy, legend=False, log2x=log2,
                             xticks=xs if log2 and len(xs) <= charts.MAX_LOG2_TICKS else None,
                             xfmt=charts.bs_tick if args.x == "bs" else None)
    charts.side_legend(fig.axes[0], len(series))
    return fig


def _by_category(points: Sequence[tuple[float, float]], n: int) -> list[float | None]:
    """A series' values in category order (None where it has no point); the first of two at one category."""
    values: list[float | None] = [None] * n
    for x, y in points:
        if values[int(x)] is None:
            values[int(x)] = y
    return values
