"""`ssdlab plot RUN [RUN...] --x AXIS --y METRIC [--series AXIS] [--where AXIS=V,...] [--out FILE.svg|.png]`: any
metric against any swept parameter (or another metric, e.g. --x iops --y p99_us) of stored runs, one series per
run (and per --series value), drawn with the shared chart helpers.

A line joins points that differ only in the plotted axes: when the points of one series also differ in an axis
that is neither --x nor --series (say iodepth, when plotting IOPS against block size of a sweep over both),
the plot is refused with the axis named, so a line never runs through different workloads. Pick a value with
--where or split it with --series. Against a metric x axis (a latency-vs-IOPS curve) one parameter may vary
along the curve (the queue depth that traces it), but not two.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError

# parameters a line must not silently run across (besides --x and --series)
CHECKED_AXES = ("rw", "bs", "bssplit", "iodepth", "numjobs", "rwmixread", "rate", "target_iops", "matrix", "round",
                "sample")
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
                   help=f"x axis: a parameter ({', '.join(AXES)}, or any swept axis) or a metric")
    p.add_argument("--y", required=True, metavar="METRIC", help=f"y metric: {', '.join(PLOTTED)} "
                                                                "(any pNN_us / read_pNN_us percentile)")
    p.add_argument("--series", metavar="AXIS", help="one line per value of this parameter")
    p.add_argument("--where", action="append", default=[], metavar="AXIS=V[,AXIS=V...]",
                   help="only points with these values, e.g. rw=randread,iodepth=32 (repeatable; all must hold)")
    p.add_argument("--labels", metavar="A,B,...", help="names of the runs in the legend (default: run ids)")
    p.add_argument("--out", type=Path, help="output file, .svg or .png (default RUN/plot-<y>-vs-<x>.svg for one "
                                            "run, ./plot-<y>-vs-<x>.svg for several)")
    p.add_argument("--phase", default="measure", help="points of this phase only (default measure; 'all' for all)")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
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


def _varying(points: Sequence[Any], x: str, series: str | None) -> dict[str, list[str]]:
    """Checked axes (other than x, series and what x determines) with more than one value among the points."""
    from ssdlab.report.characterization import axis_value, fmt_axis

    skip = {x, series or "", *_DERIVED.get(x, set())}
    out = {}
    for axis in CHECKED_AXES:
        if axis in skip:
            continue
        values = {fmt_axis(axis, axis_value(p, axis)) for p in points}
        if len(values) > 1:
            out[axis] = sorted(values, key=_natural)
    return out


def _natural(text: str) -> tuple[int, float, str]:
    try:
        return (0, float(text), text)
    except ValueError:
        return (1, 0.0, text)


def plot_data(runs: Sequence[tuple[Any, str]], x: str, y: str, series: str | None, phase: str = "measure",
              where: Sequence[tuple[str, str]] = ()) -> dict[str, list[tuple[float, float]]]:
    """{series label: [(x, y), ...] sorted by x} from the ok points of stored (run, label) pairs; refuses a
    series whose points differ in an axis that is not plotted."""
    from ssdlab.metrics import is_metric

    if not is_metric(y):
        raise UsageError(f"--y {y!r} is not a metric; use one of iops, bw_MBps, lat_mean_us, p99_us, "
                         "read_p99.9_us, usr_cpu, ... (see `ssdlab plot --help`)")
    lines = _Lines(x, y, series, several=len(runs) > 1)
    for run, label in runs:
        for r in _kept(run, label, phase, where):
            lines.add(r, label)
    if not lines.seen_x:
        raise UsageError(f"no point has a value for --x {x}" + (" after --where" if where else "")
                         + ": use a swept parameter such as bs, iodepth, numjobs, outstanding, rwmixread, rate_pct, "
                           "or a metric")
    if not lines.out:
        raise UsageError(f"no point has {y}" + (" after --where" if where else ""))
    for key, points in lines.members.items():
        _check_one_workload(key, points, x, series)
    return {k: sorted(v) for k, v in lines.out.items()}


def _kept(run: Any, label: str, phase: str, where: Sequence[tuple[str, str]]) -> list[Any]:
    """The ok points of one run in `phase` ('all': every phase) that match every --where."""
    from ssdlab.report.characterization import axis_value

    kept = [r for r in run.points if r.status == "ok" and (phase == "all" or r.point.phase == phase)]
    for axis, value in where:
        if not any(axis_value(r.point, axis) is not None for r in kept):
            raise UsageError(f"--where {axis}={value}: no point of {label} has a value for {axis}")
        kept = [r for r in kept if _matches(r.point, axis, value)]
    return kept


class _Lines:
    """The plotted (x, y) pairs by line, and the points behind each line."""

    def __init__(self, x: str, y: str, series: str | None, *, several: bool) -> None:
        self.x, self.y, self.series, self.several = x, y, series, several
        self.out: dict[str, list[tuple[float, float]]] = {}
        self.members: dict[str, list[Any]] = {}
        self.seen_x = False

    def add(self, r: Any, label: str) -> None:
        """One point: on its line when it has both values."""
        from ssdlab.metrics import is_metric
        from ssdlab.report.characterization import axis_value, fmt_axis, metric_value

        x, series = self.x, self.series
        xv = metric_value(r, x) if is_metric(x) else axis_value(r.point, x)
        if xv is None:
            return
        self.seen_x = True
        try:
            xf = float(xv)
        except (TypeError, ValueError):
            raise UsageError(f"--x {x} has non-numeric values ({xv!r}); use it as --series instead") from None
        yv = metric_value(r, self.y)
        if yv is None:
            return
        name = f"{series}={fmt_axis(series, axis_value(r.point, series))}" if series else \
            ("" if self.several else self.y)
        key = " ".join(p for p in (label if self.several else "", name) if p)
        self.out.setdefault(key, []).append((xf, yv))
        self.members.setdefault(key, []).append(r.point)


def _check_one_workload(key: str, points: Sequence[Any], x: str, series: str | None) -> None:
    """Refuse a line whose points differ in an axis that is neither --x nor --series."""
    from ssdlab.metrics import is_metric

    varying = _varying(points, x, series)
    allowed = 1 if is_metric(x) else 0  # a curve against a metric is traced by one parameter
    if len(varying) > allowed:
        shown = varying
        first = next(iter(shown))
        detail = "; ".join(f"{a} ({', '.join(v[:6])}{' …' if len(v) > 6 else ''})" for a, v in shown.items())
        raise UsageError(f"the points of {key or 'the plot'} differ in {detail}, which "
                         f"{'is' if len(shown) == 1 else 'are'} neither --x nor --series: a line would join "
                         f"different workloads; pick one with --where {first}={shown[first][0]} or split "
                         f"with --series {first}")


def cmd_plot(args: argparse.Namespace, env: Any) -> int:
    """Draw the chart and print the path of the written file."""
    from ssdlab.report import charts
    from ssdlab.results.catalog import resolve
    from ssdlab.results.store import load_run
    from ssdlab.units import format_bs

    dirs = [resolve(r) for r in args.runs]
    runs = [load_run(d) for d in dirs]
    labels = [x.strip() for x in args.labels.split(",")] if args.labels else [r.run_id for r in runs]
    if len(labels) != len(runs):
        raise UsageError(f"--labels gives {len(labels)} name(s) for {len(runs)} runs: give one per run")
    data = plot_data(list(zip(runs, labels, strict=True)), args.x, args.y, args.series, args.phase,
                     parse_where(args.where))
    default_dir = dirs[0] if len(dirs) == 1 else Path()
    out: Path = args.out or (default_dir / f"plot-{args.y}-vs-{args.x}.svg")
    charts.check_figure_path(out, force=args.force)
    series = [charts.Series(charts.plain_label(label), [p[0] for p in pts], [p[1] for p in pts])
              for label, pts in data.items()]
    xs = sorted({p[0] for pts in data.values() for p in pts})
    ticks: dict[str, Any] = {}
    if args.x == "bs" and xs:
        ticks = {"xticks": xs, "xticklabels": [format_bs(int(v)) for v in xs]}
    where = f" ({', '.join(args.where)})" if args.where else ""
    names = " vs ".join(labels) if len(runs) > 1 else runs[0].suite.split("/")[-1]
    kwargs: dict[str, Any] = dict(title=charts.plain_label(f"{names}: {args.y} vs {args.x}{where}"), xlabel=args.x,
                                  ylabel=args.y, logx=args.logx or args.x == "bs", logy=args.logy, **ticks)
    charts.write_figure(charts.line_figure(series, **kwargs), out)
    env.out(str(out))
    return 0
