"""compare.html and compare.csv: several stored runs side by side (`ssdlab compare RUN RUN ... --out DIR`).

One self-contained page like report.html (inline CSS and SVG, no scripts): the runs' facts with what differs
highlighted, notices, the regression gate's verdict, a summary of ratios, then one section per family of
points (PTS IOPS/TP/LAT/WSAT, each characterization view, plain points) with the side-by-side table, ratio
tables and overlay charts (report.compare_figures), and the points present in only some runs. compare.csv has one
row per point, metric and run.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from markupsafe import Markup

from ssdlab import formatting, metrics
from ssdlab.analysis.significance import MIN_SAMPLES
from ssdlab.compare.gate import Finding, GateResult
from ssdlab.compare.matching import Comparison, Row, run_facts
from ssdlab.report import charts
from ssdlab.report import health as drive_health
from ssdlab.report.compare_figures import family_figures, metric_title, point_value, ratio_cell
from ssdlab.report.html import SIM_NOTE, Notice, fmt_time, is_sim
from ssdlab.report.sections import Styled, Table
from ssdlab.report.templating import fragment, page_environment
from ssdlab.results import atomic

FAMILY_TITLES = {
    "pts-iops": "SNIA PTS IOPS (window averages)", "pts-tp128": "SNIA PTS Throughput 128 KiB",
    "pts-tp1024": "SNIA PTS Throughput 1024 KiB", "pts-lat": "SNIA PTS Latency", "pts-wsat": "SNIA PTS WSAT",
    "pts-cbw": "SNIA PTS CBW (TC x QD sweep, window averages)",
    "pts-dirth": "SNIA PTS DIRTH (TC x QD sweep, window averages)",
    "pts-captures": "SNIA PTS response-time histogram captures",
    "bs-sweep": "Block-size sweep", "qd-sweep": "IOPS and latency vs outstanding I/O",
    "lat-curve": "Latency vs IOPS", "iorate": "iorate curves", "app": "Application models",
    "stability": "Stability", "matrix": "Test matrix", "points": "Test points",
}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


# ---------------------------------------------------------------- view


@dataclass(frozen=True)
class FamilyView:
    """One family's section; the markup fields are made by ssdlab code (escaped tables, matplotlib SVG)."""

    anchor: str
    title: str
    intro: str
    table: Markup
    extra: Markup  # ratio tables, notes
    figures: tuple[Markup, ...] = ()


@dataclass(frozen=True)
class CompareView:
    """Everything compare.html.j2 shows."""

    title: str
    subtitle: str
    labels: list[str]
    facts: list[tuple[str, list[str], bool]]  # (name, values per run, differs)
    notices: list[Notice]
    method: str
    summary: Markup
    gate: GateResult | None
    gate_tables: Markup
    families: list[FamilyView]
    partial: Markup
    toc: list[tuple[str, str]]
    version: str


def _run_facts(rd: Any) -> dict[str, str]:
    """comparison.run_facts, then the drive's interface, health, write cache and power state and the host-CPU
    limit as the run's own report shows them (report.health)."""
    facts = run_facts(rd)
    for name, value in [*drive_health.target_facts(rd.run), *drive_health.host_facts(rd.run)]:
        facts.setdefault(name, value)
    return facts


def _facts(cmp: Comparison) -> list[tuple[str, list[str], bool]]:
    per = [_run_facts(rd) for rd in cmp.runs]
    names: list[str] = []
    for f in per:
        names.extend(n for n in f if n not in names)
    out = []
    for n in names:
        values = [f.get(n, "–") for f in per]
        if n == "created":
            values = [fmt_time(v) for v in values]
        differs = len(set(values)) > 1 and n not in ("run id", "directory", "created")
        out.append((n, values, differs))
    return out


def _notices(cmp: Comparison) -> list[Notice]:
    out: list[Notice] = []
    runs = [rd.run for rd in cmp.runs]
    if any(is_sim(r) for r in runs):
        sims = [rd.label for rd in cmp.runs if is_sim(rd.run)]
        out.append(Notice("sim", "Simulated target" + ("s" if len(sims) > 1 else ""),
                          f"{', '.join(sims)}: {SIM_NOTE} Ratios between simulated runs show the mechanism "
                          "(e.g. more over-provisioning, less write amplification), not a drive's numbers."))
    suites = {r.suite for r in runs}
    if len(suites) > 1:
        out.append(Notice("warn", "Different suites",
                          "The runs come from different suites (" + ", ".join(sorted(suites)) + "): only points "
                          "with the same key are compared; the rest are listed at the end."))
    for rd in cmp.runs:
        if rd.run.status != "complete":
            out.append(Notice("warn", f"{rd.label}: run {rd.run.status}",
                              "Only the points it finished are compared; `ssdlab resume` completes it."))
    partial = cmp.partial_rows()
    if partial:
        out.append(Notice("info", f"{len(partial)} point(s) not measured in every run",
                          "They are listed, with where they are missing, in “Points not in every run”; "
                          "ratios and the gate use the points every run measured."))
    for rd in cmp.runs:
        for n in rd.notes:
            out.append(Notice("info", rd.label, n))
    for rd in cmp.runs:  # issue 15's host-limit flag: such a point measured the host, not the drive
        flagged = [r.point.label for r in rd.run.points
                   if r.measurement is not None and drive_health.host_limited(r.measurement)]
        if flagged:
            out.append(Notice("warn", f"{rd.label}: host CPU limit",
                              f"{len(flagged)} point(s) ran with the submitting CPUs saturated ("
                              + ", ".join(flagged[:5]) + (" …" if len(flagged) > 5 else "")
                              + "): their differences may be the host's, not the drive's."))
    return out


def _method(cmp: Comparison) -> str:
    return (f"Ratio = run ÷ baseline ({cmp.labels[0]}), ± one standard error of the ratio propagated from both "
            f"runs' samples. ▲ better / ▼ worse marks a significant difference: Welch's unequal-variance t-test "
            f"(two-sided, α = {cmp.alpha:g}) on the samples each point carries, and a change of at least "
            f"{cmp.min_effect:.0%} (the minimum effect). Samples: SNIA PTS points use the rounds of the "
            "steady-state measurement window (the five values their window average is made of), WSAT its last "
            "five samples, points logged per interval their per-interval values (the final, partial interval "
            f"left out). A point with fewer than {MIN_SAMPLES} samples a side (a quick run, any percentile or "
            "maximum) has no variation to judge against: “?” = cannot judge, never significant. Hover a ratio for "
            "the test's details. Welch's test suits two drives or firmwares that spread differently and the "
            "few samples a PTS window has; per-interval samples are autocorrelated, which the minimum effect "
            "guards against.")


SUMMARY_METRICS = ("iops", "bw_MBps", "lat_mean_us", "p99_us", "p99_99_us", "read_iops", "write_iops",
                   "read_p99_us", "write_p99_us")
TABLE_METRICS = ("iops", "bw_MBps", "lat_mean_us", "p99_us", "p99_99_us")
SHORT = {"iops": "IOPS", "bw_MBps": "MB/s", "lat_mean_us": "mean µs", "p99_us": "p99 µs", "p99_99_us": "p99.99 µs"}


def _ratio_row(cmp: Comparison, m: str) -> list[Any]:
    """One metric's geometric-mean ratio of each run to the baseline, coloured past the minimum effect."""
    row: list[Any] = [metric_title(m)]
    for i in range(1, len(cmp.runs)):
        g, n = cmp.geomean(m, i)
        cls = "num"
        if g is not None and abs(g - 1) >= cmp.min_effect:
            cls += " better" if (g > 1) == metrics.get(m).higher_is_better else " worse"
        row.append(Styled("–" if g is None else f"×{g:.3f}  ({n} points)", cls))
    return row


def _judged_row(cmp: Comparison, common: Sequence[Row], i: int) -> list[Any]:
    """How run i's per-point differences of the table metrics were judged."""
    counts = {"better": 0, "worse": 0, "ns": 0, "cj": 0}
    for r in common:
        for m in TABLE_METRICS:
            c = r.cells[m][i] if m in r.cells else None
            if c is None or c.ratio is None or c.judgement is None:
                continue
            if c.judgement.verdict == "cannot judge":
                counts["cj"] += 1
            elif c.judgement.significant:
                counts["better" if (c.ratio > 1) == metrics.get(m).higher_is_better else "worse"] += 1
            else:
                counts["ns"] += 1
    return [cmp.runs[i].label, Styled(str(counts["better"]), "num better" if counts["better"] else "num"),
            Styled(str(counts["worse"]), "num worse" if counts["worse"] else "num"), Styled(str(counts["ns"]), "num"),
            Styled(str(counts["cj"]), "num")]


def _summary(cmp: Comparison) -> Markup:
    """Geometric-mean ratios per metric (rows) and run (columns), then how the differences were judged."""
    if len(cmp.runs) < 2:
        return Markup()
    common = cmp.common_rows()
    shown = [m for m in SUMMARY_METRICS if any(m in r.cells for r in common)]
    ratios = Table(["metric", *(f"{label} ÷ {cmp.labels[0]}" for label in cmp.labels[1:])],
                   [_ratio_row(cmp, m) for m in shown], cls="cmp summary")
    judged = Table(["run", "significantly better", "significantly worse", "not significant", "cannot judge"],
                   [_judged_row(cmp, common, i) for i in range(1, len(cmp.runs))], cls="cmp summary")
    return fragment("compare_summary.html.j2", ratios=ratios, judged=judged)


def _family_table(cmp: Comparison, rows: Sequence[Row]) -> Markup:
    """One block per point, one line per run: IOPS, MB/s, mean/p99/p99.99 latency (all directions together),
    each with its ratio to the baseline."""
    header: list[Any] = ["point", "run"]
    for m in TABLE_METRICS:
        header += [Styled(SHORT[m], "num"), Styled("÷ baseline", "num")]
    header.append("samples")
    body = []
    for r in rows:
        for i, label in enumerate(cmp.labels):
            line: list[Any] = [Styled(r.label if i == 0 else "", "pt", r.key), label]
            for m in TABLE_METRICS:
                cells = r.cells.get(m)
                c = cells[i] if cells else None
                v = c.value if c is not None else None
                line.append(Styled(formatting.sig3(v.value if v is not None else None), "num"))
                line.append(Styled("baseline", "num small") if i == 0 and v is not None else
                            (ratio_cell(m, c) if c is not None else Styled("–", "num")))
            p = r.points[i]
            n = len(v.samples) if (c0 := r.cells.get("iops")) and (v := c0[i].value) is not None else 0
            if n and p is not None and p.sample_kind:
                line.append(Styled(f"{n} {p.sample_kind}", "small"))
            else:
                line.append(Styled("single value" if n or (c0 and c0[i].value) else "–", "small"))
            body.append(line)
    return fragment("table_wrap.html.j2", table=Table(header, body, cls="cmp points sticky1"))


def _partial(cmp: Comparison) -> Markup:
    rows = cmp.partial_rows()
    if not rows:
        return Markup()
    body = []
    for r in rows:
        where = []
        for p in r.points:
            if p is None:
                where.append(Styled("absent", "cj"))
            elif p.status != "ok":
                where.append(Styled(f"{p.status}" + (f": {p.reason}" if p.reason else ""), "worse"))
            else:
                where.append(Styled(f"measured ({formatting.sig3(point_value(p, 'iops'))} IOPS)", "better"))
        body.append([Styled(r.label, "pt", r.key), Styled(r.key, "mono small"), *where])
    return fragment("table_wrap.html.j2", table=Table(["point", "key", *cmp.labels], body, cls="cmp sticky1"))


def _change_cell(f: Finding) -> Styled:
    """A gate finding's change, marked as failing or as past its threshold without failing (not significant)."""
    if f.change is None:
        return Styled("not measured in both", "num fail" if f.failed else "num",
                      "fails the gate (--strict): a point measured in one run only" if f.failed else "")
    where = f"{f.change:+.1%} against the {f.rule.threshold:+.0%} threshold of {f.rule.metric}"
    if f.failed:
        return Styled(f"{f.change:+.1%}", "num worse fail", f"{where}: fails the gate")
    why = f.judgement.verdict if f.judgement is not None else "not judged"
    return Styled(f"{f.change:+.1%}", "num over", f"{where}: past it, but not failing ({why})")


def _gate_tables(gate: GateResult | None) -> Markup:
    """The failures, then the changes past a threshold that did not fail."""
    if gate is None:
        return Markup()
    found = []
    header = ["run", "point", "metric", "threshold", "change", "significance"]
    for failed, title in ((True, "Failures"), (False, "Past a threshold but not failing")):
        rows: list[list[Any]] = []
        for f in gate.findings:
            if f.failed != failed:
                continue
            j = f.judgement
            rows.append([f.run_label, Styled(f.label, "pt", f.key), f.rule.metric,
                         Styled(f"{f.rule.threshold:+.0%}", "num"), _change_cell(f),
                         Styled("–" if j is None else j.verdict, "small", "" if j is None else j.reason)])
        if rows:
            found.append((title, Table(header, rows, cls="cmp")))
    return fragment("compare_gate.html.j2", tables=found)


def build_view(cmp: Comparison, gate: GateResult | None = None) -> CompareView:
    from ssdlab import __version__

    families: list[FamilyView] = []
    order: list[str] = []
    for r in cmp.rows:
        if r.family not in order:
            order.append(r.family)
    for fam in order:
        rows = [r for r in cmp.rows if r.family == fam and r.common]
        if not rows and not any(c.family == fam for rd in cmp.runs for c in rd.curves):
            continue
        figs, extra = family_figures(cmp, fam, rows)
        families.append(FamilyView(anchor="fam-" + _slug(fam), title=FAMILY_TITLES.get(fam, fam),
                                   intro=f"{len(rows)} point(s) measured in every run.",
                                   table=_family_table(cmp, rows), extra=extra,
                                   figures=tuple(fragment("chart.html.j2", chart=f) for f in figs)))
    toc = [("runs", "Runs"), ("notices", "Notices"), ("summary", "Summary")]
    if gate is not None:
        toc.append(("gate", "Regression gate"))
    toc += [(f.anchor, f.title) for f in families]
    partial = _partial(cmp)
    if partial:
        toc.append(("partial", "Points not in every run"))
    title = "ssdlab compare: " + " vs ".join(cmp.labels)
    return CompareView(
        title=title,
        subtitle=f"{len(cmp.runs)} runs · baseline {cmp.labels[0]} · {len(cmp.common_rows())} common points · "
                 f"{len(cmp.partial_rows())} in some runs only",
        labels=cmp.labels, facts=_facts(cmp), notices=_notices(cmp), method=_method(cmp),
        summary=_summary(cmp), gate=gate, gate_tables=_gate_tables(gate), families=families, partial=partial,
        toc=toc, version=__version__,
    )


def render_html(cmp: Comparison, gate: GateResult | None = None) -> str:
    """compare.html as one string (its charts drawn together, with element ids unique per chart)."""
    with charts.deferred() as batch:
        text = page_environment().get_template("compare.html.j2").render(v=build_view(cmp, gate))
    return batch.fill(text)


# ---------------------------------------------------------------- CSV

CSV_COLUMNS = ["key", "label", "family", "metric", "unit", "run", "run_id", "baseline", "value", "samples",
               "sample_kind", "ratio", "ratio_se", "change_pct", "p_value", "significance", "reason", "status"]


def _csv_row(cmp: Comparison, r: Row, m: str, i: int) -> dict[str, Any]:
    """One point, metric and run."""
    rd = cmp.runs[i]
    p = r.points[i]
    cells = r.cells.get(m)
    c = cells[i] if cells else None
    v = c.value if c is not None else None
    j = c.judgement if c is not None else None
    ratio = c.ratio if c is not None else None
    return {
        "key": r.key, "label": r.label, "family": r.family, "metric": m, "unit": metrics.get(m).unit if m else "",
        "run": rd.label, "run_id": rd.run.run_id, "baseline": cmp.labels[0],
        "value": "" if v is None else f"{v.value:.6g}", "samples": "" if v is None else len(v.samples),
        "sample_kind": p.sample_kind if p is not None else "",
        "ratio": "" if ratio is None else f"{ratio:.6g}",
        "ratio_se": "" if j is None or j.ratio_se is None else f"{j.ratio_se:.4g}",
        "change_pct": "" if ratio is None else f"{(ratio - 1) * 100:.4g}",
        "p_value": "" if j is None or j.p_value is None else f"{j.p_value:.4g}",
        "significance": "" if j is None else j.verdict, "reason": "" if j is None else j.reason,
        "status": "absent" if p is None else p.status,
    }


def csv_rows(cmp: Comparison) -> Iterable[dict[str, Any]]:
    for r in cmp.rows:
        for m in [m for m in metrics.COMPARED if m in r.cells] or [""]:
            for i in range(len(cmp.runs)):
                yield _csv_row(cmp, r, m, i)


def render_csv(cmp: Comparison) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(cmp):
        w.writerow(row)
    return buf.getvalue()


def write(cmp: Comparison, out_dir: Path, gate: GateResult | None = None) -> Path:
    """Write compare.html and compare.csv into out_dir (atomically); returns the HTML path."""
    path = out_dir / "compare.html"
    atomic.write_text(out_dir / "compare.csv", render_csv(cmp))
    atomic.write_text(path, render_html(cmp, gate))
    atomic.make_shareable(path)
    atomic.make_shareable(out_dir / "compare.csv")
    return path
