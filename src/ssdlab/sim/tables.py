"""The per-preset part of `ssdlab sim validate`: each calibrated preset's table of published figures (sim/reviews.py)
and every preset's shape checks (sim/shapes.py), as text or JSON-ready dicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ssdlab.sim.lab import Lab
from ssdlab.sim.reviews import Row, table, worst_ratio
from ssdlab.sim.shapes import Shape, check


@dataclass(frozen=True)
class PresetResult:
    """One preset's table rows and shape checks."""

    preset: str
    rows: list[Row]
    shapes: list[Shape]

    @property
    def failed(self) -> int:
        return sum(not r.ok for r in self.rows) + sum(not s.ok for s in self.shapes)

    @property
    def worst(self) -> float | None:
        return worst_ratio(self.rows)


def run_preset(preset: str) -> PresetResult:
    """Measure every figure and shape check of one preset."""
    return PresetResult(preset, table(preset, Lab()), check(preset))


def _num(x: float | None) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def format_preset(res: PresetResult) -> list[str]:
    """The preset's table (figure, published, simulator, ratio, result) and its shape checks."""
    out = []
    if res.rows:
        worst = res.worst
        out.append(f"{res.preset}: published figures ({res.rows[0].figure.source.split(' l.')[0]}), worst ratio "
                   + (f"{worst:.2f}" if worst else "-"))
        out.append(f"  {'figure':<76} {'published':>10} {'simulator':>10} {'ratio':>6}  result")
        for r in res.rows:
            f = r.figure
            verdict = {"info": "shown", "none": "n/a"}.get(f.check, "ok" if r.ok else "FAIL")
            rule = {"below": " (below)", "above": " (above)"}.get(f.check, "")
            ratio = f"{r.ratio:.2f}" if r.ratio is not None else "-"
            line = (f"  {f.name[:76]:<76} {_num(f.value) if f.check != 'none' else '-':>10} {_num(r.measured):>10} "
                    f"{ratio:>6}  {verdict}{rule} {f.unit}, {f.source}")
            out.append(line + (f": {r.why}" if r.why else ""))
    out.append(f"{res.preset}: shape checks")
    for s in res.shapes:
        out.append(f"  {s.name:<58} {s.measured:<64} {s.rule:<28} {'ok' if s.ok else 'FAIL'}")
    return out


def as_json(res: PresetResult) -> dict[str, Any]:
    """The preset's results as plain data (`ssdlab sim validate --json`)."""
    return {
        "preset": res.preset, "worst_ratio": res.worst,
        "figures": [{"name": r.figure.name, "published": r.figure.value, "unit": r.figure.unit,
                     "source": r.figure.source, "check": r.figure.check, "simulator": r.measured, "ratio": r.ratio,
                     "ok": r.ok, "why": r.why} for r in res.rows],
        "shapes": [{"name": s.name, "measured": s.measured, "rule": s.rule, "ok": s.ok} for s in res.shapes],
    }
