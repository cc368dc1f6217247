"""The console end summary of a run (rich; plain text off a TTY): the results table of a short run, then
the verdict panel (one line per test: steady at round N / not steady / incomplete / pass / fail / complete,
with its reason) and the run's warnings."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ssdlab import formatting
from ssdlab.report import health as drive_health
from ssdlab.results.counts import MEASURE, last_results, point_counts
from ssdlab.results.model import Run
from ssdlab.results.naming import run_title
from ssdlab.results.verdict import RunVerdict, run_verdicts
from ssdlab.run import hostload
from ssdlab.targets import link as drive_link
from ssdlab.termtext import printable


def _safe(text: object) -> str:
    """Stored text (labels, names, reasons: possibly from a tag or a device) shown literally: control characters
    escaped (termtext), rich markup escaped."""
    return escape(printable(str(text)))

MAX_ROWS = 40  # more measured points than this (PTS has hundreds): no point table, the report has them all
STYLE = {"steady": "green", "pass": "green", "complete": "green", "not-steady": "red", "fail": "red",
         "incomplete": "yellow"}


def results_table(run: Run, max_rows: int = MAX_ROWS) -> Table:
    """Every measured point with its MB/s, IOPS and latency (the last `max_rows` of a long run)."""
    measured = [r for r in last_results(run) if r.point.phase == MEASURE]
    shown = measured[-max_rows:]
    caption = (f"last {len(shown)} of {len(measured)} points; all are in report.html and `ssdlab export`"
               if len(shown) < len(measured) else None)
    table = Table(title=_safe(run_title(run.suite, run.target)), show_lines=False, caption=caption)
    lnk = drive_health.link_of(run)  # each throughput as a share of the drive's link, when it is known
    columns = ["Point", "MB/s", *([f"% of {lnk['label']}"] if lnk else []), "IOPS", "mean µs", "p99 µs",
               "p99.99 µs", "CPU %"]
    for col in columns:
        table.add_column(col, justify="left" if col == "Point" else "right")
    for r in shown:
        m = r.measurement
        if r.status != "ok" or m is None:
            table.add_row(_safe(r.point.label), r.status, _safe(r.reason[:40]), *[""] * (len(columns) - 3))
            continue
        # the simulator uses no host CPU per I/O: nothing was measured, so no 0 %; ! marks a host-limited point
        flag = " !" if drive_health.host_limited(m) else ""
        cpu = "n/a" if m.engine == "sim" else formatting.grouped(m.usr_cpu + m.sys_cpu) + flag
        for name, d in m.directions.items():
            lat = d.clat
            pcts = lat.percentiles([99, 99.99]) if lat is not None and lat.n > 0 else {}
            p99, p9999 = pcts.get(99), pcts.get(99.99)
            table.add_row(
                _safe(r.point.label + (f" ({name})" if len(m.directions) > 1 else "")),
                formatting.grouped(d.bw_mbps, 1), *([_pct(drive_link.fraction(d.bw_bytes, lnk))] if lnk else []),
                formatting.grouped(d.iops), formatting.grouped(lat.mean_ns / 1000 if lat else None, 1),
                formatting.grouped(p99 / 1000 if p99 is not None else None, 1),
                formatting.grouped(p9999 / 1000 if p9999 is not None else None, 1),
                cpu,
            )
    return table


def suite_lines(run: Run) -> list[str] | None:
    """A suite's own end-of-run table when it has one (ACT: act_latency.py's per-slice tables per stream)."""
    if run.suite == "act":
        from ssdlab.report.act import console_lines

        return console_lines(run)
    return None


def _pct(share: float | None) -> str:
    return formatting.grouped(share * 100 if share is not None else None)


def verdict_table(verdicts: RunVerdict) -> Table:
    """The verdict panel: one row per test, coloured by kind, and the exit code in the title."""
    kind = verdicts.kind
    table = Table(title=f"[bold {STYLE[kind]}]verdict: {verdicts.headline}[/] (exit code {verdicts.exit_code})",
                  show_lines=False, title_justify="left")
    table.add_column("Test")
    table.add_column("Verdict")
    table.add_column("Why", overflow="fold")
    for t in verdicts.tests:
        table.add_row(_safe(t.title), f"[{STYLE[t.kind]}]{_safe(t.label)}[/]", _safe(t.reason))
    return table


def print_results(run: Run, stream: IO[str], verdicts: RunVerdict | None = None) -> None:
    """The end summary: the point table (short runs only), warnings, then the verdict panel last."""
    console = Console(file=stream, width=None if stream.isatty() else 120)
    counts = point_counts(run)
    lines = suite_lines(run)
    if lines:  # the suite's own table instead of the point table (ACT: never sums its concurrent streams)
        for line in lines:
            console.print(printable(line), markup=False, highlight=False, soft_wrap=True)
    elif counts.measured + counts.not_measured <= MAX_ROWS:
        console.print(results_table(run))
        console.print(counts.text())
    else:
        console.print(_safe(run_title(run.suite, run.target)) + f": {counts.text()}; every one is in "
                      "report.html and `ssdlab export`")
    flagged = [r.measurement for r in run.points if r.measurement is not None
               and drive_health.host_limited(r.measurement)]
    if flagged:
        advice = hostload.stored_advice(flagged)
        console.print("[yellow]host CPU limit:[/] " + _safe(hostload.advice_text(len(flagged), counts.measured,
                                                                                 advice)) + " (! in the CPU column)")
    for w in run.warnings:
        console.print(f"[yellow]warning:[/] {_safe(w)}")
    console.print(verdict_table(verdicts or run_verdicts(run)))
