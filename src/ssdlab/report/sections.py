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

from ssdlab.model import Run


@dataclass(frozen=True)
class Section:
    title: str
    html: str
    anchor: str = ""


SectionBuilder = Callable[[Run, Path], list[Section]]
_BUILDERS: list[tuple[Callable[[Run], bool], SectionBuilder]] = []


def register(applies: Callable[[Run], bool], builder: SectionBuilder) -> None:
    _BUILDERS.append((applies, builder))


def table(header: Sequence[Any], rows: Iterable[Sequence[Any]], caption: str = "", *, cls: str = "data") -> str:
    """An escaped HTML table: one header row, then one row per sequence of cells (any value, shown as str)."""
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
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
