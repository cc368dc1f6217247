"""The results table printed in the terminal at the end of a run (rich; plain text off a TTY)."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.table import Table

from ssdlab.model import Run


def _fmt(v: float | None, digits: int = 1) -> str:
    return "" if v is None else f"{v:,.{digits}f}"


MAX_ROWS = 40  # a PTS run has hundreds of points: the terminal shows the last ones, the report has them all


def results_table(run: Run, max_rows: int = MAX_ROWS) -> Table:
    measured = [r for r in run.points if r.point.phase == "measure"]
    shown = measured[-max_rows:]
    caption = (f"last {len(shown)} of {len(measured)} points; all are in report.html and `ssdlab export`"
               if len(shown) < len(measured) else None)
    table = Table(title=f"{run.suite} on {run.target.get('name', '?')}", show_lines=False, caption=caption)
    for col in ("Point", "MB/s", "IOPS", "mean µs", "p99 µs", "p99.99 µs", "CPU %"):
        table.add_column(col, justify="left" if col == "Point" else "right")
    for r in shown:
        m = r.measurement
        if r.status != "ok" or m is None:
            table.add_row(r.point.label, r.status, r.reason[:40], "", "", "", "")
            continue
        for name, d in m.directions.items():
            lat = d.clat
            table.add_row(
                f"{r.point.label}" + (f" ({name})" if len(m.directions) > 1 else ""),
                _fmt(d.bw_mbps), _fmt(d.iops, 0), _fmt(lat.mean_ns / 1000 if lat else None),
                _fmt((lat.percentile(99) or 0) / 1000 if lat else None),
                _fmt((lat.percentile(99.99) or 0) / 1000 if lat else None),
                _fmt(m.usr_cpu + m.sys_cpu, 0),
            )
    return table


def print_results(run: Run, stream: IO[str]) -> None:
    console = Console(file=stream, width=None if stream.isatty() else 120)
    console.print(results_table(run))
    for w in run.warnings:
        console.print(f"[yellow]warning:[/] {w}")
