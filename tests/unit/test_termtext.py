"""Control characters from stored data never reach the terminal raw: `runs`, `tag`, the end summary, progress."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from conftest import CliRunner
from ssdlab.report import terminal
from ssdlab.results.store import load_run
from ssdlab.termtext import printable
from stored_runs import SCHEMA1

EVIL = "fw\x1b]0;pwned\x07\x1b[2J\u202eevil\rx"


@given(st.text())
def test_printable_leaves_no_control_character(text: str) -> None:
    out = printable(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067"
                   "\u2068\u2069\u200e\u200f\u061c" for c in out)
    kept = printable(text, newlines=True)
    assert kept.count("\n") == text.count("\n")
    if text.isprintable():
        assert out == text


def test_printable_shows_what_was_there() -> None:
    assert printable(EVIL) == "fw\\x1b]0;pwned\\x07\\x1b[2J\\u202eevil\\x0dx"


def test_runs_and_tag_print_tags_escaped(cli: CliRunner, tmp_path: Path) -> None:
    root = tmp_path / "results"
    run = Path(shutil.copytree(SCHEMA1 / "quick-file", root / "quick"))
    res = cli("tag", run, f"label={EVIL}")
    assert res.code == 0, res.err
    assert "\x1b" not in res.out
    assert "\\x1b]0;pwned" in res.out
    res = cli("runs", "--results", root)
    assert res.code == 0, res.err
    assert "\x1b" not in res.out
    assert "\x07" not in res.out
    assert "\u202e" not in res.out
    assert "label=fw\\x1b]0;pwned" in res.out
    res = cli("runs", "--results", root, "--json")
    assert json.loads(res.out)[0]["tags"]["label"] == EVIL  # JSON keeps the value, escaped by JSON itself
    assert "\x1b" not in res.out


def test_the_end_summary_escapes_labels_and_warnings(tmp_path: Path) -> None:
    run = load_run(SCHEMA1 / "quick-file")
    first = run.points[0]
    evil = type(run)(**{**run.__dict__, "suite": f"quick{EVIL}", "warnings": (f"careful {EVIL}",),
                        "points": (type(first)(**{**first.__dict__,
                                                  "point": type(first.point)(**{**first.point.__dict__,
                                                                                "label": f"[red]{EVIL}"})}),
                                   *run.points[1:])})
    buf = io.StringIO()
    terminal.print_results(evil, buf)
    text = buf.getvalue()
    assert "\x1b" not in text
    assert "\\x1b]0;pwned" in text
    assert "[red]" in text  # rich markup in a label is shown, not applied
