"""The per-preset part of `ssdlab sim validate`: each calibrated preset's figures (sim/reviews.py: evidence, judged,
and calibration inputs, shown) and every preset's shape rules (sim/shapes.py), as text of at most WIDTH columns or
as JSON-ready dicts."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ssdlab.sim.presets import PRESETS, resolve
from ssdlab.sim.procedures import PTS_MIXES, PTS_SIZES, SEEDS, KiB, Procedure, Seeds
from ssdlab.sim.reviews import Row, counted, table, worst_ratio
from ssdlab.sim.shapes import Shape, check

WIDTH = 110
PTS_CELL = re.compile(r"PTS IOPS (\d+)K (\d+)/(\d+)$")


@dataclass(frozen=True)
class PresetResult:
    """One preset's table rows and shape checks."""

    preset: str
    rows: list[Row]
    shapes: list[Shape]

    @property
    def evidence(self) -> list[Row]:
        return counted(self.rows)

    @property
    def failed_evidence(self) -> int:
        return sum(not r.ok for r in self.evidence)

    @property
    def failed_shapes(self) -> int:
        return sum(not s.ok for s in self.shapes)

    @property
    def failed(self) -> int:
        return self.failed_evidence + self.failed_shapes

    @property
    def worst(self) -> float | None:
        return worst_ratio(self.rows)


def run_preset(preset: str, progress: Callable[[str], None] | None = None, seeds: Seeds | None = None,
               shapes: bool = True) -> PresetResult:
    """Measure every figure and shape check of one preset (`seeds`: experiments shared with other presets)."""
    rows = table(preset, seeds or Seeds(progress))
    return PresetResult(preset, rows, check(preset, progress) if shapes else [])


def num(x: float | None) -> str:
    """A value for the table: grouped thousands from 1,000, three significant digits below."""
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def _wrap(text: str, indent: str) -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_on_hyphens=False) or [indent]


def _row_line(r: Row, preset: str) -> list[str]:
    """`  ok    NAME: review VALUE UNIT, model VALUE (RATIO x)  LINE`, wrapped; then the spread over seeds, an
    input's parameters, a failed bound's reason."""
    f = r.figure
    if f.role == "none":
        return _wrap(f"n/a   {f.name} ({f.source}): {f.note}", "  ")
    mark = ("ok" if r.ok else "FAIL") if r.counted else "fit"
    rule = {"below": "< ", "above": "> ", "atmost": "<= "}.get(f.check, "")
    ratio = f" ({r.ratio:.2f}x)" if r.ratio is not None and f.check == "ratio" else ""
    spread = (f" [{num(r.spread[0])} .. {num(r.spread[1])} over {len(SEEDS)} seeds]"
              if r.spread is not None else "")
    line = f.source.split(" ", 2)[-1] if f.source.startswith("seed ") else f.source
    out = _wrap(f"{mark:<5} {f.name}: review {rule}{num(f.value)} {f.unit}, model {num(r.measured)}{spread}{ratio}"
                f"  {line}", "  ")
    if f.role == "input":
        values = resolve(preset, {})
        params = ", ".join(f"{p}={_param(values[p])}" for p in f.params)
        out += _wrap(f"set from it: {params}: {f.fit}", "        ")
    if r.why and f.check != "ratio":
        out += _wrap(r.why, "        ")
    return out


def _param(v: Any) -> str:
    if isinstance(v, (tuple, list)):
        return "/".join(f"{x:g}" for x in v)
    return f"{v:g}" if isinstance(v, float) else str(v)


def _pts_matrix(rows: list[Row]) -> list[str]:
    """A PTS IOPS table as a matrix of ratios (model / review), '!' marking a cell out of 0.75..1.33."""
    cells: dict[tuple[int, int], Row] = {}
    for row in rows:
        match = PTS_CELL.match(row.figure.name)
        if match:
            cells[(int(match.group(1)) * KiB, int(match.group(2)))] = row
    out = ["        ratio model / review; ! out of 0.75..1.33     read/write"]
    out.append("        " + " " * 6 + "".join(f"{f'{mix}/{100 - mix}':>9}" for mix in PTS_MIXES))
    for bs in PTS_SIZES:
        texts = []
        for mix in PTS_MIXES:
            cell = cells.get((bs, mix))
            texts.append("-" if cell is None or cell.ratio is None
                         else f"{cell.ratio:.2f}" + ("" if cell.ok else "!"))
        out.append(f"        {bs // KiB:>5}K" + "".join(f"{t:>9}" for t in texts))
    return out


def _group(procedure: Procedure | None, rows: list[Row], preset: str) -> list[str]:
    out: list[str] = []
    if procedure is not None:
        for k, text in enumerate(procedure.lines()):
            out += _wrap(text, "    " if k == 0 else "      ")
    pts = [r for r in rows if PTS_CELL.match(r.figure.name)]
    if len(pts) > 7:
        bad = sum(not r.ok for r in pts)
        worst = worst_ratio(pts)
        out.append(f"        {len(pts)} cells, {bad} fail, worst ratio {worst:.2f}" if worst else "")
        out += _pts_matrix(pts)
        rows = [r for r in rows if r not in pts]
    for r in rows:
        out += _row_line(r, preset)
    return out


def format_preset(res: PresetResult) -> list[str]:
    """The preset's evidence (grouped by procedure), its calibration inputs, its unmeasurable figures and its
    shape rules."""
    out = [f"{res.preset}: {PRESETS[res.preset].summary}"]
    if res.rows:
        worst = res.worst
        ev = res.evidence
        out.append(f"  evidence: {len(ev)} rows, {res.failed_evidence} fail, worst ratio "
                   + (f"{worst:.2f}" if worst else "-") + " (model / review)")
        groups: dict[int, tuple[Procedure | None, list[Row]]] = {}
        for r in ev:
            groups.setdefault(id(r.figure.procedure), (r.figure.procedure, []))[1].append(r)
        for procedure, rows in groups.values():
            out += _group(procedure, rows, res.preset)
        inputs = [r for r in res.rows if r.figure.role == "input"]
        if inputs:
            out.append(f"  calibration inputs: {len(inputs)} rows (a parameter was set from each: shown, not counted)")
            for r in inputs:
                out += _row_line(r, res.preset)
        for r in (r for r in res.rows if r.figure.role == "none"):
            out += _row_line(r, res.preset)
    if res.shapes:
        out.append(f"  shape rules: {len(res.shapes)} checks, {res.failed_shapes} fail")
        for s in res.shapes:
            out.append(f"  {'ok' if s.ok else 'FAIL':<5} {s.name}  [{s.rule}]")
            out += _wrap(s.measured, "        ")
    return out


def procedure_json(p: Procedure | None) -> dict[str, str] | None:
    if p is None:
        return None
    return {"name": p.name, "seed": p.seed, "shape": p.shape, "footprint": p.footprint,
            "preconditioning": p.precondition, "duration": p.duration, "caveat": p.caveat}


def as_json(res: PresetResult) -> dict[str, Any]:
    """The preset's results as plain data (`ssdlab sim validate --json`)."""
    values = resolve(res.preset, {})
    return {
        "preset": res.preset, "evidence_rows": len(res.evidence), "evidence_failed": res.failed_evidence,
        "worst_ratio": res.worst, "shapes_failed": res.failed_shapes,
        "figures": [{"name": r.figure.name, "role": r.figure.role, "published": r.figure.value,
                     "unit": r.figure.unit, "source": r.figure.source, "check": r.figure.check,
                     "simulator": r.measured, "ratio": r.ratio, "spread": list(r.spread) if r.spread else None,
                     "ok": r.ok, "why": r.why, "procedure": procedure_json(r.figure.procedure),
                     "params": {p: _param(values[p]) for p in r.figure.params}, "fit": r.figure.fit}
                    for r in res.rows],
        "shapes": [{"name": s.name, "measured": s.measured, "rule": s.rule, "ok": s.ok} for s in res.shapes],
    }


@dataclass(frozen=True)
class Summary:
    """A preset's results as its text, its data and its counts: what a worker process sends back (a Row holds its
    figure's measuring function, which does not pickle)."""

    preset: str
    text: list[str]
    data: dict[str, Any]
    evidence: int
    failed_evidence: int
    worst: float | None
    shapes: int
    failed_shapes: int
    has_rows: bool

    @property
    def failed(self) -> int:
        return self.failed_evidence + self.failed_shapes


def summarize(res: PresetResult) -> Summary:
    return Summary(res.preset, format_preset(res), as_json(res), len(res.evidence), res.failed_evidence, res.worst,
                   len(res.shapes), res.failed_shapes, bool(res.rows))


# presets whose tables read each other's experiments (the P5430's OP ratio, the CD5's drop against the CM5-R's):
# measured one after the other, on one set of experiments
FAMILIES = {"p5430-op": "p5430", "cm5-r": "cd5"}


def families(presets: list[str]) -> list[list[str]]:
    """The presets grouped by family, each group in the order given, groups in the order of their first member."""
    groups: dict[str, list[str]] = {}
    for name in presets:
        groups.setdefault(FAMILIES.get(name, name), []).append(name)
    return list(groups.values())


def run_family(presets: list[str], shapes: bool, progress: Callable[[str], None] | None) -> list[Summary]:
    """Measure presets of one family on one set of experiments."""
    seeds = Seeds(progress)
    return [summarize(run_preset(name, progress, seeds, shapes)) for name in presets]
