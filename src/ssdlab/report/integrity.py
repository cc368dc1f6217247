"""Integrity report section: the verdict, what was written (the manifest), every check pass with the bytes it
checked, and every mismatching or unreadable block with its offset, expected and found values and the
moment fio found it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.report import sections
from ssdlab.report.faults import moment
from ssdlab.report.sections import Section, Table
from ssdlab.report.templating import fragment
from ssdlab.results.events import VerdictEvent
from ssdlab.results.model import PointResult, Run
from ssdlab.suites.integrity import check_results, describe, manifest, summary
from ssdlab.units import format_bytes

MAX_ROWS = 500  # mismatch rows in the report; run.json lists up to 1000 per check, stderr.txt all of them
ROLE_LABEL = {"check": "full check", "mixed": "checked while a random workload ran", "reverify": "ssdlab verify"}


def _short(value: str, keep: int = 32) -> str:
    return value if len(value) <= keep else value[:keep] + "…"


def _manifest_rows(m: Mapping[str, Any]) -> list[tuple[str, str]]:
    target = m.get("target") or {}
    ident = target.get("identity") or {}
    who = ", ".join(f"{k} {ident[k]}" for k in ("model", "serial", "firmware", "loop_backing_file", "file")
                    if ident.get(k))
    span_bytes = int(m.get("span_bytes") or 0)
    return [
        ("target", f"{target.get('name', '')} ({target.get('kind', '')})" + (f": {who}" if who else "")),
        ("span", f"{format_bytes(span_bytes)} ({span_bytes:,} bytes) from offset {m.get('span_offset', 0)}"),
        ("block size", f"{format_bytes(int(m.get('block_size') or 0))}: one verify header per block"),
        ("checksum", str(m.get("checksum", ""))),
        ("data seed", str(m.get("seed", ""))),
        ("written", f"{moment(str(m.get('written', '')))} by point {m.get('write_point', '')} "
                    f"(fio {str(m.get('fio_version', '')).removeprefix('fio-')})"),
    ]


@dataclass(frozen=True)
class IntegrityView:
    """What templates/sections/integrity.html.j2 shows."""

    verdict: str | None  # the suite's verdict line (None before it has one)
    manifest: Table | None  # what was written
    checks: Table | None  # every check pass
    bad: Table | None  # mismatching and unreadable blocks


def _checks_table(checks: Sequence[PointResult]) -> Table | None:
    rows = []
    for r in checks:
        s = summary(r)
        rows.append((r.point.id, ROLE_LABEL.get(str(s["role"]), str(s["role"])), moment(r.finished),
                     f"{s['checked_bytes']:,}", f"{s['mismatches']:,}", f"{s['header_mismatches']:,}",
                     f"{s['unreadable']:,}", describe(s)))
    if not rows:
        return None
    return Table(("point", "kind", "finished", "bytes checked", "mismatches", "of which header", "unreadable",
                  "result"), rows)


def _bad_table(checks: Sequence[PointResult]) -> Table | None:
    bad: list[tuple[Any, ...]] = []
    total = 0
    for r in checks:
        s = summary(r)
        total += s["mismatches"] + s["unreadable"]
        for f in s["listed"]:
            what = f"{f.get('kind')} {f.get('check')}"
            bad.append((r.point.id, f.get("offset"), f.get("length"), what, _short(str(f.get("expected", ""))),
                        _short(str(f.get("received", ""))), moment(str(f.get("time") or ""))))
        for e in s["errors"]:
            bad.append((r.point.id, e.get("offset", ""), e.get("length", ""), f"unreadable ({e.get('direction')})",
                        "", str(e.get("error", "")), moment(str(e.get("time") or ""))))
    if not bad:
        return None
    shown = bad[:MAX_ROWS]
    note = (f"first {len(shown)} of {total:,}; every one is in the check point's stderr.txt"
            if len(shown) < total else f"all {total:,}")
    return Table(("point", "offset", "length", "what failed", "expected", "found", "found at"), shown, note)


def build(run: Run, run_dir: Path) -> list[Section]:
    checks = check_results(run)
    m = manifest(run)
    if m is None and not checks:
        return []
    verdicts = [e for e in run.events if isinstance(e, VerdictEvent) and e.suite == "integrity"]
    view = IntegrityView(verdict=str(verdicts[-1].text) if verdicts else None,
                         manifest=Table(("item", "value"), _manifest_rows(m)) if m is not None else None,
                         checks=_checks_table(checks), bad=_bad_table(checks))
    return [Section(title="Data integrity", html=fragment("integrity.html.j2", v=view), anchor="integrity")]


def _applies(run: Run) -> bool:
    return run.suite == "integrity" or any(r.point.tags.integrity for r in run.points)


sections.register(_applies, build)
