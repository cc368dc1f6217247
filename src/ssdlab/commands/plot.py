"""`ssdlab plot DIR --x AXIS --y METRIC [--series AXIS] [--out FILE.svg|.png]`: any metric against any swept
parameter (or another metric, e.g. --x iops --y p99_us) of a stored run, drawn with the shared chart helpers.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError


def add_commands(sub: Any) -> dict[str, Any]:
    """Register the `plot` subcommand."""
    from ssdlab.report.characterization import AXES, METRICS

    p = sub.add_parser("plot", help="chart any metric against any swept parameter of a stored run (SVG/PNG)")
    p.add_argument("dir", type=Path, help="results directory written by `ssdlab run`")
    p.add_argument("--x", required=True, metavar="AXIS",
                   help=f"x axis: a parameter ({', '.join(AXES)}, or any swept axis) or a metric")
    p.add_argument("--y", required=True, metavar="METRIC", help=f"y metric: {', '.join(METRICS)} "
                                                                "(any pNN_us / read_pNN_us percentile)")
    p.add_argument("--series", metavar="AXIS", help="one line per value of this parameter")
    p.add_argument("--out", type=Path, help="output file, .svg or .png (default DIR/plot-<y>-vs-<x>.svg)")
    p.add_argument("--phase", default="measure", help="points of this phase only (default measure; 'all' for all)")
    p.add_argument("--logx", action="store_true", help="logarithmic x axis")
    p.add_argument("--logy", action="store_true", help="logarithmic y axis")
    return {"plot": cmd_plot}


def plot_data(run: Any, x: str, y: str, series: str | None, phase: str = "measure",
              ) -> dict[str, list[tuple[float, float]]]:
    """{series label: [(x, y), ...] sorted by x} from the ok points of a stored run."""
    from ssdlab.report.characterization import axis_value, fmt_axis, is_metric, metric_value

    if not is_metric(y):
        raise UsageError(f"--y {y!r} is not a metric; use one of iops, bw_MBps, lat_mean_us, p99_us, "
                         "read_p99.9_us, usr_cpu, ... (see `ssdlab plot --help`)")
    out: dict[str, list[tuple[float, float]]] = {}
    seen_x = False
    for r in run.points:
        if r.status != "ok" or (phase != "all" and r.point.phase != phase):
            continue
        xv = metric_value(r, x) if is_metric(x) else axis_value(r.point, x)
        if xv is None:
            continue
        seen_x = True
        try:
            xf = float(xv)
        except (TypeError, ValueError):
            raise UsageError(f"--x {x} has non-numeric values ({xv!r}); use it as --series instead") from None
        yv = metric_value(r, y)
        if yv is None:
            continue
        label = fmt_axis(series, axis_value(r.point, series)) if series else y
        out.setdefault(f"{series}={label}" if series else label, []).append((xf, yv))
    if not seen_x:
        raise UsageError(f"no point of {run.run_id} has a value for --x {x}: use a swept parameter such as bs, "
                         "iodepth, numjobs, outstanding, rwmixread, rate_pct, or a metric")
    if not out:
        raise UsageError(f"no point of {run.run_id} has {y}")
    return {k: sorted(v) for k, v in out.items()}


def cmd_plot(args: argparse.Namespace, env: Any) -> int:
    """Draw the chart and print the path of the written file."""
    from ssdlab import atomic
    from ssdlab.report import charts
    from ssdlab.store import load_run
    from ssdlab.units import format_bs

    run = load_run(args.dir)
    data = plot_data(run, args.x, args.y, args.series, args.phase)
    out: Path = args.out or (args.dir / f"plot-{args.y}-vs-{args.x}.svg")
    suffix = out.suffix.lower()
    if suffix not in (".svg", ".png"):
        raise UsageError(f"--out {out}: use a .svg or .png file name")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: directory {out.parent} does not exist")
    series = [charts.Series(label, [p[0] for p in pts], [p[1] for p in pts]) for label, pts in data.items()]
    xs = sorted({p[0] for pts in data.values() for p in pts})
    ticks: dict[str, Any] = {}
    if args.x == "bs" and xs:
        ticks = {"xticks": xs, "xticklabels": [format_bs(int(v)) for v in xs]}
    kwargs: dict[str, Any] = dict(title=f"{run.suite.split('/')[-1]}: {args.y} vs {args.x}", xlabel=args.x,
                                  ylabel=args.y, logx=args.logx or args.x == "bs", logy=args.logy, **ticks)
    fig = charts.line_figure(series, **kwargs)
    if suffix == ".png":
        atomic.write_bytes(out, charts.fig_to_png(fig))
    else:
        atomic.write_text(out, charts.fig_to_svg(fig) + "\n")
    env.out(str(out))
    return 0
