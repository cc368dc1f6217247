"""The complexity budget (radon's cyclomatic complexity, ranks as `radon cc` gives them: D is 21-30, E 31-40,
F above): no function, method or class ranked E or F, and few ranked D: at most 4 in report/, none in sim/,
at most 6 in the rest of the package. A function over the budget is split into named steps, not waived.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_rank, cc_visit
from radon.visitors import Class, Function

import ssdlab

PACKAGE = Path(ssdlab.__file__).parent
BUDGET_D = {"report": 4, "sim": 0, "rest": 6}


def _blocks(path: Path) -> Iterator[Function | Class]:
    """What `radon cc` ranks in one module: functions, methods and classes (each once)."""
    yield from cc_visit(path.read_text(encoding="utf-8"))


def _area(path: Path) -> str:
    top = path.relative_to(PACKAGE).parts[0]
    return top if top in ("report", "sim") else "rest"


def ranked(area: str) -> dict[str, list[str]]:
    """Rank -> 'module:function (complexity)' of the blocks of `area` ranked D or worse."""
    out: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if _area(path) != area:
            continue
        for b in _blocks(path):
            rank = cc_rank(b.complexity)
            if rank in "DEF":
                out.setdefault(rank, []).append(f"{path.relative_to(PACKAGE)}:{b.name} ({b.complexity})")
    return out


def check(area: str) -> None:
    found = ranked(area)
    worse = found.get("E", []) + found.get("F", [])
    assert not worse, f"{area}: ranked E or F: " + ", ".join(worse)
    d = found.get("D", [])
    assert len(d) <= BUDGET_D[area], f"{area}: {len(d)} ranked D, budget {BUDGET_D[area]}: " + ", ".join(d)


def test_the_package_keeps_its_complexity_budget() -> None:
    check("rest")


def test_report_keeps_its_complexity_budget() -> None:
    check("report")


def test_sim_keeps_its_complexity_budget() -> None:
    check("sim")


def test_the_budget_check_sees_a_complex_function(tmp_path: Path) -> None:
    branches = "\n".join(f"    if x == {i}:\n        return {i}" for i in range(25))
    src = tmp_path / "m.py"
    src.write_text(f"def f(x: int) -> int:\n{branches}\n    return -1\n", encoding="utf-8")
    (block,) = list(_blocks(src))
    assert cc_rank(block.complexity) == "D"
