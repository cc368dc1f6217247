"""`ssdlab latency DIR [POINT ...] [--direction all|read|write|split] [--out FILE.svg|.png]`: the latency
distribution of any stored point from its fio histogram bins: the confidence-level table on stdout (N, mean,
p50 ... 6 nines, max, µs) and, for the named points, the histogram / CDF / exceedance chart (report.latency).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ssdlab.errors import UsageError


def add_commands(sub: Any) -> dict[str, Any]:
    """Register the `latency` subcommand."""
    p = sub.add_parser("latency", help="latency histogram, CDF, exceedance and confidence levels of any stored "
                                       "point (from fio's histogram bins)")
    p.add_argument("dir", type=Path, help="results directory written by `ssdlab run`")
    p.add_argument("points", nargs="*", metavar="POINT",
                   help="point ids (points/<id>); none: the table of every point, and no chart")
    p.add_argument("--direction", default="all", choices=("all", "read", "write", "split"),
                   help="all I/Os of a point together (bins added; default), one direction, or each direction")
    p.add_argument("--out", type=Path, help="chart file, .svg or .png (default DIR/latency-<first point>.svg)")
    p.add_argument("--force", action="store_true", help="replace --out even if ssdlab did not write it")
    return {"latency": cmd_latency}


def cmd_latency(args: argparse.Namespace, env: Any) -> int:
    """Print the confidence levels; draw the chart of the named points and print its path."""
    from ssdlab.report import charts, latency
    from ssdlab.results.store import load_run

    run = load_run(args.dir)
    dists = _distributions(run, args)
    header, rows = latency.level_rows(dists)
    _print_table(env, ["point", *header[1:]], rows)
    env.out("(µs; fio's percentile rule on the histogram bins; * = too few I/Os to resolve the level)")
    if not args.points:
        return 0
    out: Path = args.out or (args.dir / f"latency-{args.points[0]}.svg")
    replacing = charts.check_figure_path(out, force=args.force)
    if replacing:
        env.err(replacing)
    charts.write_figure(latency.distribution_figure(dists, title=f"{run.run_id}: response times"), out)
    env.out(str(out))
    return 0


def _distributions(run: Any, args: argparse.Namespace) -> list[Any]:
    """The latency distributions of the named points (all ok points when none is named), per --direction."""
    from ssdlab.report import latency

    by_id = {p.point.id: p for p in run.points}
    unknown = [pid for pid in args.points if pid not in by_id]
    if unknown:
        raise UsageError(f"no point {unknown[0]!r} in {args.dir}: the point ids are the names under "
                         f"{args.dir / 'points'}")
    chosen = [by_id[pid] for pid in args.points] if args.points else [p for p in run.points if p.status == "ok"]
    dirs: tuple[str | None, ...] = {"all": (None,), "read": ("read",), "write": ("write",),
                                    "split": ("read", "write")}[args.direction]
    dists = []
    for r in chosen:
        for d in dirs:
            label = r.point.id if d is None else f"{r.point.id} {d}s"
            dist = latency.point_distribution(r, d, label)
            if dist is not None and dist.n > 0:
                dists.append(dist)
    if not dists:
        raise UsageError(f"no latency bins for {', '.join(args.points) or 'any point'} in {args.dir} "
                         f"({args.direction}): the points measured nothing, or fio ran without json+")
    return dists


def _print_table(env: Any, header: list[str], rows: list[list[str]]) -> None:
    """A text table: the first column left-aligned, the others right-aligned."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows, strict=True)]
    for row in (header, *rows):
        env.out("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths,
                                                                                              strict=True))))
