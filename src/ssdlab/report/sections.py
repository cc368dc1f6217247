"""Suite-specific report sections. A report module registers a builder; html.py renders what it returns.

The section modules are listed in html.SECTION_MODULES and loaded before a report is built. They read the
suites' analysis (report -> suites); suites never import renderers.

A builder gets the stored Run and its directory and returns Sections (already-escaped HTML fragments,
charts embedded as inline SVG/data URIs). Builders must read only the run and files in its directory.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Sequence
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


def _cell(c: Any, tag: str = "td") -> str:
    if isinstance(c, Styled):
        attrs = (f" class='{html.escape(c.cls)}'" if c.cls else "") + \
            (f" title='{html.escape(c.title)}'" if c.title else "")
        return f"<{tag}{attrs}>{html.escape(c.text)}</{tag}>"
    return f"<{tag}>{html.escape(str(c))}</{tag}>"


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]], caption: str = "", *, cls: str = "data") -> str:
    """An escaped HTML table: one header row, then one row per sequence of cells (any value, shown as str;
    a Styled cell also carries a class and a tooltip)."""
    head = "".join(_cell(h, "th") for h in header)
    body = "".join("<tr>" + "".join(_cell(c) for c in r) + "</tr>" for r in rows)
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return f"<table class='{cls}'>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def figure(svg: str, caption: str = "", *, cls: str = "chart") -> str:
    """A chart (inline SVG made by report.charts) with its escaped caption."""
    cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return f"<figure class='{cls}'>{svg}{cap}</figure>"


def sections_for(run: Run, run_dir: Path) -> list[Section]:
    out: list[Section] = []
    for applies, builder in _BUILDERS:
        if applies(run):
            out.extend(builder(run, run_dir))
    return out
