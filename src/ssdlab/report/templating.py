"""The Jinja environments of the reports: one for the page frames, one for the sections inside them.

Pages (templates/*.html.j2: report.html, compare.html) are rendered with Jinja's own escaping. Sections
(templates/sections/*.html.j2) are rendered by `fragment(name, **view)` from small view models: autoescaped
too, but with the bytes of Python's html.escape (&#x27; and &quot;), which the sections have always had, and
written one element a line: a line break and the indentation after it are dropped when a section template
loads, so a section is one line of HTML however its template is laid out (a template therefore never splits a
tag, an expression or a sentence across lines, and writes no string literal inside {{ }}: Jinja would escape it
its own way). Prose that a section always escaped is written inside {% filter text %}...{% endfilter %}. Markup
made by ssdlab code (charts, rendered fragments) is a Markup value and goes in as it is.

Compiled templates are kept in $XDG_CACHE_HOME/ssdlab/ (~/.cache by default; like fio's versions, see
fio/runner.py), so a report does not compile its templates again: about a tenth of a second each time. The
cache's directory name carries a fingerprint of this module and the versions of Jinja and ssdlab, so a change
to how templates compile never meets old compiled code; a cache that cannot be read or written is skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import os
import re
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache
import jinja2.ext
from markupsafe import Markup

from ssdlab.report.sections import Styled


class _Compiled(jinja2.FileSystemBytecodeCache):
    """Compiled templates on disk (jinja2 writes each atomically); any OSError skips the cache."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().load_bytecode(bucket)

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _compiled(kind: str) -> jinja2.BytecodeCache | None:
    """The cache of one environment's compiled templates (None when its directory cannot be made)."""
    from ssdlab import __version__

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ssdlab"
    stamp = hashlib.sha256(Path(__file__).read_bytes() + f"{jinja2.__version__} {__version__}".encode()).hexdigest()
    path = base / f"templates-{kind}-{stamp[:16]}"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return _Compiled(str(path))


_PAGES: jinja2.Environment | None = None
_SECTIONS: jinja2.Environment | None = None
_BREAK = re.compile(r"\n[ \t]*")


def page_environment() -> jinja2.Environment:
    """The environment of the page templates (report.html, compare.html), made once."""
    global _PAGES
    if _PAGES is None:
        _PAGES = jinja2.Environment(
            loader=jinja2.PackageLoader("ssdlab.report", "templates"), bytecode_cache=_compiled("pages"),
            autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        )
    return _PAGES


class _OneLine(jinja2.ext.Extension):
    """Drops every line break of a section template, with the indentation that follows it."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        return _BREAK.sub("", source)


def _escaped(value: Any) -> Markup:
    """Every {{ value }} of a section: markup as it is, anything else as html.escape writes it."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value)))  # noqa: S704 - escaped here


def _text(value: Any) -> Markup:
    """The `text` filter: prose written in a template that the section always escaped (its ' as &#x27;)."""
    return Markup(html.escape(str(value)))  # noqa: S704 - escaped here


def _is_styled(value: Any) -> bool:
    return isinstance(value, Styled)


def section_environment() -> jinja2.Environment:
    """The environment of the section templates, made once."""
    global _SECTIONS
    if _SECTIONS is None:
        env = jinja2.Environment(
            loader=jinja2.PackageLoader("ssdlab.report", "templates/sections"), bytecode_cache=_compiled("sections"),
            autoescape=True, undefined=jinja2.StrictUndefined, finalize=_escaped, extensions=[_OneLine],
        )
        env.tests["styled"] = _is_styled
        env.filters["text"] = _text
        _SECTIONS = env
    return _SECTIONS


def fragment(name: str, **view: Any) -> Markup:
    """A section template rendered with its view: one line of HTML, marked safe to insert into a page."""
    return Markup(section_environment().get_template(name).render(**view))  # noqa: S704 - autoescaped template


def trusted(markup: str) -> Markup:
    """Markup made by ssdlab code (a chart's SVG, a placeholder the chart batch fills) to insert as it is."""
    return Markup(markup)  # noqa: S704 - never called on run data
