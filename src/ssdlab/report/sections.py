"""Suite-specific report sections. A suite module registers a builder; html.py renders what it returns.

A builder gets the stored Run and its directory and returns Sections (already-escaped HTML fragments,
charts embedded as inline SVG/data URIs). Builders must read only the run and files in its directory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


def sections_for(run: Run, run_dir: Path) -> list[Section]:
    out: list[Section] = []
    for applies, builder in _BUILDERS:
        if applies(run):
            out.extend(builder(run, run_dir))
    return out
