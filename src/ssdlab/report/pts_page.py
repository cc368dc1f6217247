"""What every SNIA PTS report page shares: the SNIA header block (test, sponsor, dates, device under test,
platform, set-up and test parameters, compliance; the operator's facts come from --pts-header), the
steady-state determination table and measurement-window plot, and the small table/chart/number helpers.
The per-test pages (report/pts.py, pts_hir.py, ...) build on these; their templates share
templates/sections/_pts.html.j2."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ssdlab import formatting
from ssdlab.analysis.steady import Determination
from ssdlab.errors import UsageError
from ssdlab.report import charts
from ssdlab.report.sections import Chart, Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.model import Run
from ssdlab.suites.pts.common import SPEC_VERSION, PtsSettings
from ssdlab.suites.pts.header import Header as UserHeader
from ssdlab.suites.pts.header import parse as parse_header
from ssdlab.targets.purge import write_cache_state
from ssdlab.units import format_bytes

Rows = Sequence[tuple[str, Any]]  # a key/value table (_pts.html.j2 kv)


def table(header: Sequence[Any], rows: Sequence[Sequence[Any]], caption: str = "") -> Table:
    """A table as the PTS pages draw it."""
    return Table(header, rows, caption, "pts")


def chart(svg: str, caption: str = "") -> Chart:
    """A chart as the PTS pages draw it."""
    return Chart(svg, caption, "pts-chart")


# a value as the PTS tables print it (with an optional unit; n/a when there is none)
num = functools.partial(formatting.sig3, none="n/a")


# ------------------------------------------------------------------ header

def purge_line(run: Run, test: str) -> tuple[str, str, str]:
    """(purge method line, write cache state, write cache detail) recorded by the purge point."""
    pr = run.result(f"{test}-0-purge")
    if pr is None or pr.status != "ok":
        return ("not done (the run stopped before the purge)", "unknown", "")
    parts = pr.reason.split("; write cache: ", 1)
    wc_line = "write cache: " + parts[1] if len(parts) == 2 else ""
    state = write_cache_state(wc_line)
    return (parts[0], state, wc_line.removeprefix("write cache: ").removeprefix(state).strip(" ()"))


def _day(iso: str) -> str:
    return iso[:10] if iso else "not finished"


def user_header(run: Run) -> UserHeader | None:
    """The operator's header facts stored with the run (--pts-header), or None."""
    try:
        return parse_header(run.options.suite_options.get("pts_header"))
    except UsageError:
        return None


@dataclass(frozen=True)
class Header:
    """The SNIA report header block (_pts.html.j2 header): the test line, the title facts, four boxes."""

    test_line: str
    title_rows: Rows
    cards: Sequence[tuple[str, Rows]]


def _title_rows(run: Run, rep: dict[str, Any]) -> Rows:
    return [
        ("Test sponsor", rep.get("sponsor", "not given (--pts-header)")),
        ("Auditor", rep.get("auditor", "none")),
        ("Revision", rep.get("revision", "-")),
        ("Test run", rep.get("test_date", f"{_day(run.created)} to {_day(run.finished)}")),
        ("Report date", rep.get("report_date", _day(run.finished or run.created))),
    ]


def _device_rows(run: Run, s: PtsSettings, dev: dict[str, Any]) -> Rows:
    ident = dict(run.target.get("identity") or {})
    return [
        ("Device under test", f"{run.target.get('name')} ({run.target.get('kind')})"),
        ("Manufacturer", dev.get("manufacturer", ident.get("vendor", "unknown"))),
        ("Model", dev.get("model", ident.get("model", "unknown"))),
        ("Serial number", dev.get("serial", ident.get("serial", "unknown"))),
        ("Firmware", dev.get("firmware", ident.get("firmware", "unknown"))),
        ("Capacity", dev.get("capacity", f"{format_bytes(s.capacity)} used of the target ({s.capacity} bytes)")),
        ("NAND type", dev.get("nand_type", "not given")),
        ("Form factor", dev.get("form_factor", "not given")),
        ("Interface", dev.get("interface", ident.get("transport", "not given"))),
    ]


def _platform_rows(run: Run, plat: dict[str, Any]) -> Rows:
    h = run.host
    return [
        ("Test platform", plat.get("reference", f"{h.get('hostname', '?')}")),
        ("Motherboard", plat.get("motherboard", "not given")),
        ("CPU", plat.get("cpu", f"{h.get('cpu_model', '?')} x{h.get('cpu_count', '?')}")),
        ("RAM", plat.get("ram", format_bytes(int(h.get("memory_bytes") or 0)))),
        ("OS", plat.get("os", f"{h.get('os', '?')}, kernel {h.get('kernel', '?')}")),
        ("HBA / driver", " / ".join(x for x in (plat.get("hba"), plat.get("driver")) if x) or "not given"),
        ("Test software", plat.get("software", f"ssdlab {run.ssdlab_version}; {h.get('engine', '?')} "
                                               f"{h.get('engine_version', '')}".strip())),
        ("Report", f"run {run.run_id}, created {run.created}, status {run.status}"),
    ]


def _setup_rows(run: Run, s: PtsSettings, test: str, wipc: str, pc2: str | None) -> Rows:
    purge, wc_state, wc_detail = purge_line(run, test)
    if pc2 is None:
        pc2 = "the test loop itself, round after round until steady state" if test != "wsat" \
            else "none: WSAT starts fresh-out-of-box"
    return [
        ("Data pattern", s.data_pattern + (" (fio random buffers)" if s.data_pattern == "random" else "")),
        ("Active range", f"{s.active_range_pct:g}% = {format_bytes(s.active_range_bytes)} "
                         f"(LBA 0 to {s.active_range_bytes} bytes)"),
        ("Purge", purge),
        ("Write cache", f"{'WCE' if s.write_cache == 'enabled' else 'WCD'} requested; state {wc_state}"
                        + (f" ({wc_detail})" if wc_detail else "")),
        ("PC1: WIPC", wipc),
        ("PC2: WDPC", pc2),
    ]


def _param_rows(run: Run, s: PtsSettings, test: str, rep: dict[str, Any], *, window: str, verdict: str, tq: str,
                extra: Rows) -> Rows:
    reasons = s.scaled_reasons(run.options, dict(run.target))
    compliance = "spec-compliant set-up (as far as ssdlab can tell)" if not reasons else \
        "SCALED, NOT spec-compliant: " + "; ".join(reasons)
    notes = [n for n in (rep.get("notes", ""), "SS NOT ACHIEVED" if "SS NOT ACHIEVED" in verdict else "") if n]
    params: list[tuple[str, Any]] = [
        ("Threads x queue depth", tq),
        *extra,
        ("Point duration", f"{s.runtime_s:g} s" + (f" + {s.ramp_s:g} s ramp" if s.ramp_s else "")),
        ("Rounds in the window", window),
        ("Steady state", verdict),
    ]
    if test == "lat":
        params.append(("Response time", "fio completion latency (clat) per I/O"))
    params.append(("Compliance", compliance))
    if notes:
        params.append(("Notes", "; ".join(notes)))
    return params


def header(run: Run, s: PtsSettings, title: str, test: str, *, wipc: str, window: str, verdict: str, tq: str,
           pc2: str | None = None, extra: Rows = ()) -> Header:
    """The SNIA report header block, as every PTS report page carries it: a title line (test, sponsor,
    auditor, revision, dates), then four boxes: device under test, test platform, set-up parameters and test
    parameters. What the run cannot measure comes from --pts-header; the rest from the run. `pc2` describes
    the workload-dependent preconditioning (default: the round loop); `extra` adds test parameters after
    the thread count and queue depth."""
    user = user_header(run)
    rep = dict(user.report) if user else {}
    cards = [("Device under test", _device_rows(run, s, dict(user.device) if user else {})),
             ("Test platform", _platform_rows(run, dict(user.platform) if user else {})),
             ("Set-up parameters", _setup_rows(run, s, test, wipc, pc2)),
             ("Test parameters", _param_rows(run, s, test, rep, window=window, verdict=verdict, tq=tq, extra=extra))]
    test_line = f"{SPEC_VERSION}, PTS-{s.spec} ({'Enterprise' if s.spec == 'E' else 'Client'}): {title}"
    return Header(test_line, _title_rows(run, rep), cards)


def setup_section(title: str, head: Header, anchor: str, extra: Rows | None = None) -> Section:
    """A test's set-up section: the header block (and a key/value table of test-specific facts)."""
    return Section(title, fragment("pts_setup.html.j2", header=head, extra=extra), anchor=anchor)


def message(title: str, text: str, anchor: str = "") -> Section:
    """A section of one paragraph (nothing to report yet, and why)."""
    return Section(title, fragment("pts_message.html.j2", text=text), anchor=anchor)


# ------------------------------------------------------------------ steady state

@dataclass(frozen=True)
class Window:
    """A steady-state measurement window (_pts.html.j2 window): heading, plot, determination table."""

    heading: str
    chart: Chart
    rows: Rows


def window(heading: str, name: str, d: Determination, unit: str, caption: str) -> Window:
    return Window(heading, chart(window_chart(name, d, unit), caption), determination_rows(d, unit))


def determination_rows(d: Determination, unit: str) -> Rows:
    """SS determination table (PTS report format), one tracking variable."""
    return [
        ("Measurement window", f"rounds {d.rounds[0]}-{d.rounds[-1]}"),
        ("Average value", num(float(d.average), unit)),
        ("Allowed maximum data excursion (20% of average)", num(float(d.allowed_range), unit)),
        ("Measured maximum data excursion (max - min)", f"{num(float(d.range), unit)} = {d.range_pct:.2f}%"),
        ("Allowed maximum slope excursion (10% of average)", num(float(d.allowed_excursion), unit)),
        ("Measured maximum slope excursion (|m| x 4)", f"{num(float(d.fit_excursion), unit)} = "
                                                       f"{d.excursion_pct:.2f}%"),
        ("Least-squares linear fit", f"y = {d.formula()}"),
        ("Data excursion criterion (a)", "met" if d.range_ok else "NOT met"),
        ("Slope excursion criterion (b)", "met" if d.excursion_ok else "NOT met"),
    ]


def window_chart(name: str, d: Determination, unit: str) -> str:
    """Measurement-window plot: data, average, 110 %/90 % guides and the best-fit line."""
    xs = [float(r) for r in d.rounds]
    avg = float(d.average)
    return charts.line_chart(
        [charts.Series(name, xs, [float(v) for v in d.values], "-o"),
         charts.Series(f"best fit {d.formula()}", xs, [d.fit(x) for x in xs], "--", color="#000000")],
        ref_lines=[charts.RefLine(avg, "average", "-", "#009E73"),
                   charts.RefLine(1.1 * avg, "110% x average", ":", "#888888"),
                   charts.RefLine(0.9 * avg, "90% x average", ":", "#888888")],
        title=f"Steady-state measurement window: {name}", xlabel="Round", ylabel=unit,
        xticks=xs, xticklabels=[str(r) for r in d.rounds])
