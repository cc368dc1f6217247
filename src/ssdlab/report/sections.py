"""Suite-specific report sections. A report module registers a builder; html.py renders what it returns.

The section modules are listed in html.SECTION_MODULES and loaded before a report is built. They read the
suites' analysis (report -> suites); suites never import renderers.

A builder gets the stored Run and its directory and returns Sections: a title, an anchor and the section's
HTML, rendered by report.templating from a template in templates/sections/ and the builder's view model (its
tables as Table, its charts as Chart, cells as Styled). Builders must read only the run and files in its
directory.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ssdlab.results.model import Run


@dataclass(frozen=True)
class Section:
    title: str
    html: str
    anchor: str = ""


SectionBuilder = Callable[[Run, Path], list[Section]]
_BUILDERS: list[tuple[Callable[[Run], bool], SectionBuilder]] = []


def register(applies: Callable[[Run], bool], builder: SectionBuilder) -> None:
    _BUILDERS.append((applies, builder))


@dataclass(frozen=True)
class Table:
    """A table of a section (templates/sections/_blocks.html.j2): a header row, then rows of cells (any value,
    shown as text; a Styled cell also carries a class and a tooltip)."""

    header: Sequence[Any]
    rows: Sequence[Sequence[Any]]
    caption: str = ""
    cls: str = "data"


@dataclass(frozen=True)
class Chart:
    """A chart of a section: SVG made by report.charts (inserted as it is) and its caption."""

    svg: str
    caption: str = ""
    cls: str = "chart"


@dataclass(frozen=True)
class Styled:
    """A table cell with a CSS class (e.g. a ratio marked better/worse, a fact that differs between runs)."""

    text: str
    cls: str = ""
    title: str = ""  # tooltip: the reason behind the cell


def sections_for(run: Run, run_dir: Path) -> list[Section]:
    out: list[Section] = []
    for applies, builder in _BUILDERS:
        if applies(run):
            out.extend(builder(run, run_dir))
    return out
