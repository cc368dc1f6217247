"""JUnit XML (the Ant/Surefire format Jenkins, GitLab and GitHub test reporters read), so CI shows each test
point as a test case: from a comparison with its regression gate (`ssdlab compare --junit FILE`) and from one
run's verdicts (`ssdlab report RUN --junit FILE`). Validated in the tests against the Jenkins xUnit schema.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET  # only writes XML, never parses input

from ssdlab import metrics
from ssdlab.compare.gate import GateResult
from ssdlab.compare.matching import Comparison, Row
from ssdlab.results import atomic
from ssdlab.results.model import Run
from ssdlab.results.naming import run_title


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    failure: str = ""  # message; empty: passed
    detail: str = ""  # failure body (several lines)
    skipped: str = ""  # message; empty: not skipped
    error: str = ""  # message: the test could not be carried out (e.g. a point that failed to run)
    out: str = ""  # system-out
    time_s: float = 0.0


@dataclass(frozen=True)
class Suite:
    name: str
    cases: Sequence[Case]
    properties: Sequence[tuple[str, str]] = field(default_factory=tuple)
    timestamp: str = ""


def _time(v: float) -> str:
    return f"{max(0.0, v):.3f}"


def _case(parent: ET.Element, c: Case) -> None:
    tc = ET.SubElement(parent, "testcase", classname=c.classname, name=c.name, time=_time(c.time_s))
    if c.failure:
        f = ET.SubElement(tc, "failure", message=c.failure, type="regression")
        f.text = c.detail or c.failure
    elif c.error:
        ET.SubElement(tc, "error", message=c.error, type="not-measured").text = c.error
    elif c.skipped:
        ET.SubElement(tc, "skipped", message=c.skipped)
    if c.out:
        ET.SubElement(tc, "system-out").text = c.out


def _suite(root: ET.Element, s: Suite) -> tuple[int, int, float]:
    """One <testsuite>; returns its failures, errors and time."""
    failures = sum(1 for c in s.cases if c.failure)
    errors = sum(1 for c in s.cases if c.error and not c.failure)
    skipped = sum(1 for c in s.cases if c.skipped and not c.failure and not c.error)
    t = sum(c.time_s for c in s.cases)
    el = ET.SubElement(root, "testsuite", name=s.name, tests=str(len(s.cases)), failures=str(failures),
                       errors=str(errors), skipped=str(skipped), time=_time(t), hostname=socket.gethostname())
    if s.timestamp:
        el.set("timestamp", s.timestamp)
    if s.properties:
        props = ET.SubElement(el, "properties")
        for k, v in s.properties:
            ET.SubElement(props, "property", name=k, value=v)
    for c in s.cases:
        _case(el, c)
    return failures, errors, t


def to_xml(name: str, suites: Sequence[Suite]) -> str:
    """<testsuites> with one <testsuite> per suite; counts filled in."""
    root = ET.Element("testsuites", name=name)
    totals = {"tests": 0, "failures": 0, "errors": 0}
    total_time = 0.0
    for s in suites:
        failures, errors, t = _suite(root, s)
        totals["tests"] += len(s.cases)
        totals["failures"] += failures
        totals["errors"] += errors
        total_time += t
    for key, count in totals.items():
        root.set(key, str(count))
    root.set("time", _time(total_time))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write(path: Path, name: str, suites: Sequence[Suite]) -> None:
    atomic.write_text(path, to_xml(name, suites))


# ---------------------------------------------------------------- from a comparison


def _metric_lines(row: Row, i: int) -> list[str]:
    """Each main metric's change against the baseline, with its significance."""
    lines = []
    for m in metrics.MAIN:
        cells = row.cells.get(m)
        ratio = cells[i].ratio if cells else None
        if not cells or ratio is None:
            continue
        j = cells[i].judgement
        lines.append(f"{m}: {ratio - 1:+.1%} ({metrics.get(m).unit}) {j.verdict + ': ' + j.reason if j else ''}")
    return lines


def _measured_in_both(row: Row, i: int) -> bool:
    b, p = row.points[0], row.points[i]
    return b is not None and p is not None and b.status == "ok" and p.status == "ok"


def _comparison_case(cmp: Comparison, gate: GateResult | None, row: Row, i: int) -> Case:
    """One point of run i against the baseline: failed when a gate rule failed on it, skipped when the point is
    not measured in both runs."""
    base = cmp.labels[0]
    classname = f"ssdlab.compare.{row.family}"
    fails = [f for f in gate.failures if f.run == i and f.key == row.key] if gate else []
    held = [f for f in gate.held if f.run == i and f.key == row.key] if gate else []
    out = "\n".join(_metric_lines(row, i) + ["gate (not failing): " + f.text(base) for f in held])
    if fails:
        return Case(classname, row.key, failure="; ".join(f.text(base) for f in fails),
                    detail="\n".join(f.text(base) for f in fails), out=out)
    if not _measured_in_both(row, i):
        where = [cmp.labels[k] for k, q in enumerate(row.points) if q is not None and q.status == "ok"]
        return Case(classname, row.key, skipped="not measured in both runs (measured in: "
                    + (", ".join(where) or "none") + ")", out=out)
    return Case(classname, row.key, out=out)


def comparison_suites(cmp: Comparison, gate: GateResult | None) -> list[Suite]:
    """One suite per compared run (against the baseline), one case per point (_comparison_case)."""
    base = cmp.labels[0]
    out = []
    for i in range(1, len(cmp.runs)):
        rd = cmp.runs[i]
        cases = [_comparison_case(cmp, gate, row, i) for row in cmp.rows]
        props = [("baseline", base), ("baseline_run_id", cmp.runs[0].run.run_id), ("run", rd.label),
                 ("run_id", rd.run.run_id), ("alpha", f"{cmp.alpha:g}"), ("min_effect", f"{cmp.min_effect:g}")]
        if gate is not None:
            props += [("fail_on", " ".join(r.text for r in gate.rules)), ("strict", str(gate.strict).lower())]
        out.append(Suite(f"{rd.label} vs {base}", cases, props, rd.run.created))
    return out


# ---------------------------------------------------------------- from one run


def run_suite(run: Run, label: str = "") -> Suite:
    """One suite for a run: a case per measured point (failed when invalid, an error when it failed to run,
    skipped when skipped), then a case per test verdict (verdict.py: failed when not steady, failed or
    incomplete)."""
    from ssdlab.report.html import seconds_between
    from ssdlab.results.verdict import run_verdicts

    prefix = f"ssdlab.{run.suite.rsplit('/', 1)[-1].removesuffix('.toml')}"
    latest = {r.point.id: r for r in run.points if r.point.phase == "measure"}  # a later attempt replaces
    cases = []
    for r in latest.values():
        t = seconds_between(r.started, r.finished) or 0.0
        cls = f"{prefix}.{r.point.group or 'points'}"
        if r.status == "ok":
            cases.append(Case(cls, r.point.id, out="\n".join(r.warnings), time_s=t))
        elif r.status == "skipped":
            cases.append(Case(cls, r.point.id, skipped=r.reason or "skipped", time_s=t))
        elif r.status == "invalid":
            cases.append(Case(cls, r.point.id, failure=f"invalid: {r.reason or 'measured too little'}", time_s=t))
        else:
            cases.append(Case(cls, r.point.id, error=f"{r.status}: {r.reason or 'no reason recorded'}", time_s=t))
    verdict = run_verdicts(run)
    for tv in verdict.tests:
        cases.append(Case(f"{prefix}.verdict", tv.title, failure=tv.text if tv.negative else "", out=tv.text))
    props = [("run_id", run.run_id), ("suite", run.suite), ("target", str(run.target.get("name", ""))),
             ("verdict", verdict.headline), ("exit_code", str(verdict.exit_code)),
             ("ssdlab", run.ssdlab_version), ("schema_version", str(run.schema_version))]
    return Suite(label or run_title(run.suite, run.target), cases, props, run.created)
