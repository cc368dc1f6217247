"""The section templates' environment: html.escape's bytes, one line of HTML, every template compiles, and the
cache of compiled templates (used when it can be, skipped when it cannot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ssdlab.report import templating
from ssdlab.report.sections import Styled, Table

SECTIONS = Path(templating.__file__).parent / "templates" / "sections"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Environments made anew, with their compiled templates under tmp_path."""
    monkeypatch.setattr(templating, "_SECTIONS", None)
    monkeypatch.setattr(templating, "_PAGES", None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_values_are_escaped_as_html_escape_escapes_them() -> None:
    assert templating.fragment("pts_message.html.j2", text="it's <b> & \"q\"") == \
        "<p>it&#x27;s &lt;b&gt; &amp; &quot;q&quot;</p>"


def test_a_table_is_one_line_with_styled_cells() -> None:
    t = Table(["a", Styled("b", "num", "why")], [[1, Styled("x'", "worse")]], "cap", "cmp")
    assert templating.fragment("table_wrap.html.j2", table=t) == (
        "<div class='table-wrap'><table class='cmp'><caption>cap</caption><thead><tr><th>a</th>"
        "<th class='num' title='why'>b</th></tr></thead><tbody><tr><td>1</td><td class='worse'>x&#x27;</td></tr>"
        "</tbody></table></div>")


def test_every_section_template_compiles() -> None:
    env = templating.section_environment()
    names = sorted(p.name for p in SECTIONS.glob("*.j2"))
    assert len(names) > 20
    for name in names:
        env.get_template(name)


def test_compiled_templates_are_cached(fresh: Path) -> None:
    templating.fragment("pts_message.html.j2", text="x")
    stored = list(fresh.glob("ssdlab/templates-sections-*/*"))
    assert stored  # compiled once, kept for the next report
    templating._SECTIONS = None
    assert templating.fragment("pts_message.html.j2", text="y") == "<p>y</p>"


def test_a_cache_that_cannot_be_written_is_skipped(fresh: Path) -> None:
    fresh.write_text("not a directory", encoding="utf-8")
    assert templating.fragment("pts_message.html.j2", text="x") == "<p>x</p>"
    assert templating.page_environment().get_template("report.html.j2") is not None
