"""What every SNIA PTS report page shares: the SNIA header block (test, sponsor, dates, device under test,
platform, set-up and test parameters, compliance; the operator's facts come from --pts-header), the
steady-state determination table and measurement-window plot, and the small table/figure/number helpers.
The per-test pages (report/pts.py, pts_hir.py, ...) build on these."""

from __future__ import annotations

import functools
import html
from collections.abc import Sequence
from typing import Any

from ssdlab import formatting
from ssdlab.analysis.steady import Determination
from ssdlab.errors import UsageError
from ssdlab.report import charts, sections
from ssdlab.results.model import Run
from ssdlab.suites.pts.common import SPEC_VERSION, PtsSettings
from ssdlab.suites.pts.header import Header
from ssdlab.suites.pts.header import parse as parse_header
from ssdlab.targets.purge import write_cache_state
from ssdlab.units import format_bytes

esc = html.escape
table = functools.partial(sections.table, cls="pts")
figure = functools.partial(sections.figure, cls="pts-chart")


def kv(rows: Sequence[tuple[str, Any]]) -> str:
    """A two-column key/value table (the header block's form)."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(str(v))}</td></tr>" for k, v in rows)
    return f"<table class='pts-header'><tbody>{body}</tbody></table>"


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


def _card(title: str, rows: Sequence[tuple[str, Any]]) -> str:
    body = "".join(f"<dt>{esc(k)}</dt><dd>{esc(str(v))}</dd>" for k, v in rows)
    return f"<div class='card'><h3>{esc(title)}</h3><dl>{body}</dl></div>"


def _day(iso: str) -> str:
    return iso[:10] if iso else "not finished"


def user_header(run: Run) -> Header | None:
    """The operator's header facts stored with the run (--pts-header), or None."""
    try:
        return parse_header((run.options.get("suite_options") or {}).get("pts_header"))
    except UsageError:
        return None


def header_html(run: Run, s: PtsSettings, title: str, test: str, *, wipc: str, window: str, verdict: str,
                tq: str, pc2: str | None = None, extra: Sequence[tuple[str, Any]] = ()) -> str:
    """The SNIA report header block, as every PTS report page carries it: a title line (test, sponsor,
    auditor, revision, dates), then four boxes: device under test, test platform, set-up parameters and test
    parameters. What the run cannot measure comes from --pts-header; the rest from the run. `pc2` describes
    the workload-dependent preconditioning (default: the round loop); `extra` adds test parameters after
    the thread count and queue depth."""
    ident = dict(run.target.get("identity") or {})
    h = run.host
    user = user_header(run)
    rep = dict(user.report) if user else {}
    dev = dict(user.device) if user else {}
    plat = dict(user.platform) if user else {}
    purge, wc_state, wc_detail = purge_line(run, test)
    reasons = s.scaled_reasons(dict(run.options), dict(run.target))
    compliance = "spec-compliant set-up (as far as ssdlab can tell)" if not reasons else \
        "SCALED, NOT spec-compliant: " + "; ".join(reasons)
    if pc2 is None:
        pc2 = "the test loop itself, round after round until steady state" if test != "wsat" \
            else "none: WSAT starts fresh-out-of-box"
    test_line = f"{SPEC_VERSION}, PTS-{s.spec} ({'Enterprise' if s.spec == 'E' else 'Client'}): {title}"
    title_rows = [
        ("Test sponsor", rep.get("sponsor", "not given (--pts-header)")),
        ("Auditor", rep.get("auditor", "none")),
        ("Revision", rep.get("revision", "-")),
        ("Test run", rep.get("test_date", f"{_day(run.created)} to {_day(run.finished)}")),
        ("Report date", rep.get("report_date", _day(run.finished or run.created))),
    ]
    title_html = (f"<div class='notice'><strong>{esc(test_line)}</strong>"
                  + " · ".join(f"{esc(k)}: {esc(str(v))}" for k, v in title_rows) + "</div>")
    device = [
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
    platform = [
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
    setup = [
        ("Data pattern", s.data_pattern + (" (fio random buffers)" if s.data_pattern == "random" else "")),
        ("Active range", f"{s.active_range_pct:g}% = {format_bytes(s.active_range_bytes)} "
                         f"(LBA 0 to {s.active_range_bytes} bytes)"),
        ("Purge", purge),
        ("Write cache", f"{'WCE' if s.write_cache == 'enabled' else 'WCD'} requested; state {wc_state}"
                        + (f" ({wc_detail})" if wc_detail else "")),
        ("PC1: WIPC", wipc),
        ("PC2: WDPC", pc2),
    ]
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
    boxes = "".join((_card("Device under test", device), _card("Test platform", platform),
                     _card("Set-up parameters", setup), _card("Test parameters", params)))
    return f"<div class='pts-header'>{title_html}<div class='facts'>{boxes}</div></div>"


# ------------------------------------------------------------------ steady state

def determination_table(d: Determination, unit: str) -> str:
    """SS determination table (PTS report format), one tracking variable."""
    rows = [
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
    return kv(rows)


def window_chart(name: str, d: Determination, unit: str) -> str:
    """Measurement-window plot: data, average, 110 %/90 % guides and the best-fit line."""
    xs = [float(r) for r in d.rounds]
    avg = float(d.average)
    return charts.line_chart(
        [charts.Series(name, xs, [float(v) for v in d.values], "-o"),
         charts.Series(f"best fit {d.formula()}", xs, [d.fit(x) for x in xs], "--", color="#000000")],
        ref_lines=[charts.RefLine(avg, "average", "-", "#2ca02c"),
                   charts.RefLine(1.1 * avg, "110% x average", ":", "#888888"),
                   charts.RefLine(0.9 * avg, "90% x average", ":", "#888888")],
        title=f"Steady-state measurement window: {name}", xlabel="Round", ylabel=unit,
        xticks=xs, xticklabels=[str(r) for r in d.rounds])
